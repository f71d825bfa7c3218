"""Issue 30, item 3: documented install overrides (``install_env``, ``registry_replacements``) from a manifest's
``environment`` and from ``mine --environment FILE``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pydantic
import pytest

from pytest_mobilebench.__main__ import main
from pytest_mobilebench.frameworks import infer_recipe
from pytest_mobilebench.runtime.environment import Environment, effective_install
from pytest_mobilebench.suites.issue_resolution.manifest import load_manifest
from pytest_mobilebench.manifest.yamlfile import read_yaml

BUNDLE = Path(__file__).resolve().parent.parent / "fixtures" / "repos" / "mobilebench+counter.bundle"
TARBALL = "https://archives.example.test/widget-1.0.0.tgz"


def test_the_overrides_precede_the_inferred_install_and_change_the_files_it_reads(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "packages" / "ui").mkdir(parents=True)
    (repo / "node_modules" / "x").mkdir(parents=True)
    for rel in ("package.json", "packages/ui/package.json", "node_modules/x/package.json"):
        (repo / rel).write_text(json.dumps({"name": "x", "dependencies": {"widget": TARBALL}}))
    (repo / "yarn.lock").write_text(f'widget@{TARBALL}:\n  resolved "{TARBALL}"\n')
    env = {"install_env": {"TOOL_SKIP_DOWNLOAD": "1 2"}, "registry_replacements": {TARBALL: "1.0.0"}}
    plain = infer_recipe(repo, "react-native", {})
    recipe = infer_recipe(repo, "react-native", env)
    assert recipe.install_command.endswith(plain.install_command) and recipe.install_command != plain.install_command
    prefix = recipe.install_command[: -len(plain.install_command)]
    done = subprocess.run(
        ["bash", "-c", prefix + 'echo "[$TOOL_SKIP_DOWNLOAD]"'], cwd=repo, capture_output=True, text=True, check=True
    )
    assert "[1 2]" in done.stdout and "changed ./package.json" in done.stdout
    assert json.loads((repo / "packages/ui/package.json").read_text())["dependencies"] == {"widget": "1.0.0"}
    assert TARBALL not in (repo / "yarn.lock").read_text()
    assert TARBALL in (repo / "node_modules/x/package.json").read_text()  # installed packages are left alone
    # a given install command gets them too; without overrides nothing changes
    assert effective_install(Environment(install_env={"A": "b"}), "make deps") == "export A=b; make deps"
    assert effective_install(Environment(), "npm ci") == "npm ci"


@pytest.mark.parametrize(("field", "value", "says"), [("install_env", {"1X": "a"}, "not an environment variable name"),
                                                      ("registry_replacements", {"": "a"}, "an empty text"),
                                                      ("install_env", ["A=1"], "dictionary")])  # fmt: skip
def test_bad_overrides_are_refused_naming_the_field(field: str, value: object, says: str) -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        Environment.from_mapping({field: value})
    assert field in str(info.value) and says in str(info.value)


def test_mine_environment_file_sets_the_fields_on_every_candidate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env_file = tmp_path / "env.yaml"
    env_file.write_text("install_env:\n  TOOL_SKIP_DOWNLOAD: '1'\nregistry_replacements:\n  a-url: '1.0.0'\n")
    out = tmp_path / "out"
    assert main(["mine", str(BUNDLE), "--out", str(out), "--no-validate", "--environment", str(env_file)]) == 0
    loaded = load_manifest(read_yaml(out / "candidates" / "mobilebench__counter.yaml"))
    assert len(loaded) == 2
    for row in loaded:
        env = row.record.environment
        assert env.install_env == {"TOOL_SKIP_DOWNLOAD": "1"} and env.registry_replacements == {"a-url": "1.0.0"}
        assert env.node  # the inferred fields stay
    bad = tmp_path / "bad.yaml"
    bad.write_text("install_envv: {}\n")
    assert main(["mine", str(BUNDLE), "--out", str(out), "--no-validate", "--environment", str(bad)]) == 2
    assert f"{bad}: environment.install_envv" in capsys.readouterr().err
