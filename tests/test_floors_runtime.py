"""The runtime's own floors (issue 32, item 2): no circle among the modules of ``runtime/``, and the Docker provider
read bottom up (the daemon's words, then the container's exec, hosts and dependency layer, then the workspace, then
the sandbox builders, the provider on top). What a builder needs of the provider is passed in as an argument (a
protocol it declares), never imported back up. Imports are read from the source
(:func:`pytest_mobilebench.cache.imports_of`: imports inside functions and ``TYPE_CHECKING`` blocks count, so a
circle hidden in a function is still one); the modules below the provider are also imported for real, in a fresh
interpreter, and must not load it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Set

import pytest

from pytest_mobilebench.cache import PACKAGE_DIR, imports_of

RUNTIME = "pytest_mobilebench.runtime"

#: the Docker provider, bottom up; a module imports only modules of its own floor or below (others of runtime/ are
#: the ground under all of these)
DOCKER_FLOORS: tuple[tuple[str, ...], ...] = (
    ("daemon",),
    ("container_exec", "hosts", "deplayer"),
    ("docker_workspace",),
    ("agent_sandbox", "docker_sandbox", "sandbox"),
    ("docker",),
)
#: the one module of runtime/ that may name the provider: the registry's entry makes it
PROVIDER_READERS: frozenset[str] = frozenset({"provider"})


def runtime_graph() -> dict[str, set[str]]:
    """``{runtime module's short name: the runtime modules it imports anywhere}`` (short names: ``"docker"``)."""
    paths = {p.stem: p for p in (PACKAGE_DIR / "runtime").glob("*.py") if p.stem != "__init__"}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        seen = set()
        for imported in imports_of(path, f"{RUNTIME}.{name}"):
            short = imported.removeprefix(RUNTIME + ".")
            short = short if short in paths else short.rpartition(".")[0]  # ``from runtime.x import NAME``
            if short in paths and short != name:
                seen.add(short)
        graph[name] = seen
    return graph


def circles(graph: Mapping[str, Set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def upward(graph: Mapping[str, Set[str]]) -> dict[str, list[str]]:
    """``{module: the modules of a higher Docker floor it imports}`` for the modules of :data:`DOCKER_FLOORS`."""
    floor = {name: level for level, names in enumerate(DOCKER_FLOORS) for name in names}
    offences = {
        name: sorted(other for other in graph.get(name, ()) if floor.get(other, -1) > level)
        for name, level in floor.items()
    }
    return {name: names for name, names in offences.items() if names}


def test_the_runtime_has_no_circle() -> None:
    graph = runtime_graph()
    assert {"docker", "daemon", "agent_sandbox", "docker_sandbox"} <= graph.keys()
    assert circles(graph) == []


def test_the_docker_provider_reads_as_floors() -> None:
    graph = runtime_graph()
    assert {name for names in DOCKER_FLOORS for name in names} <= graph.keys()
    assert upward(graph) == {}
    assert sorted(name for name, names in graph.items() if "docker" in names) == sorted(PROVIDER_READERS)


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"daemon": {"docker"}, "docker": {"daemon"}}, [["daemon", "docker"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"docker": {"daemon", "agent_sandbox"}, "agent_sandbox": {"daemon"}, "daemon": set()}, []),
    ],
)
def test_the_circle_check_sees_a_circle(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert circles(graph) == expected


def test_the_floor_check_sees_an_import_back_up() -> None:
    """The shapes this file exists to keep out: the daemon making the runtime, a builder naming the provider."""
    assert upward({"daemon": {"docker"}, "agent_sandbox": {"docker", "daemon"}}) == {
        "daemon": ["docker"],
        "agent_sandbox": ["docker"],
    }
    assert upward({"docker": {"agent_sandbox", "docker_sandbox", "daemon"}}) == {}


LOADED = """
import importlib, json, sys
for name in ("daemon", "container_exec", "hosts", "deplayer", "docker_workspace", "agent_sandbox", "docker_sandbox"):
    importlib.import_module("pytest_mobilebench.runtime." + name)
print(json.dumps(sorted(m for m in sys.modules if m.startswith("pytest_mobilebench"))))
"""


def test_the_floors_below_the_provider_do_not_load_it() -> None:
    out = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True, check=True, timeout=120)
    loaded = json.loads(out.stdout)
    assert "pytest_mobilebench.runtime.docker_sandbox" in loaded
    assert "pytest_mobilebench.runtime.docker" not in loaded
