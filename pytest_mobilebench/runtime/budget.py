"""``--mb-image-budget 50G``: keep this harness's images on a daemon under a byte budget, evicting LRU.

Bytes charged (:func:`charged_bytes`): an image's own bytes are its ``Size`` minus the ``Size`` of the
longest *proper prefix* of its layer chain (``RootFS.Layers``) held by another image on the daemon; the
charge of the harness is the sum over images carrying ``mobilebench.level``. With the base -> env ->
(deps) -> instance tree present this is exactly the bytes of the layers only harness images hold; when a
parent is gone, its layers are charged to each child (an upper bound: eviction then frees more, never
less, than needed).

Eviction (:func:`plan_evictions`, pure): only harness images; never one a container (running or not)
uses, one named in ``protect`` (the chain this process is about to start), one touched less than
``grace_s`` ago (another worker may be between building and starting it), nor one whose layer chain
another present image extends (removing it frees nothing); least recently used first, where use is
recorded per daemon in ``<cache>/image-use/<host key>.json`` (an image never recorded counts from its
creation time). ``--mb-cache-level`` still decides what is removed at the end of the run; the budget
only evicts earlier.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from filelock import FileLock

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import InfraKind

__all__ = [
    "ImageBudget",
    "ImageInfo",
    "budget_option",
    "charged_bytes",
    "parse_size",
    "plan_evictions",
    "remove_superseded",
]

_UNITS: Final[dict[str, int]] = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """``"50G"`` -> 53687091200 (binary units K, M, G, T, optional ``B``/``iB``; decimals allowed).

    Raises:
        ValueError: not ``<number>[K|M|G|T][i][B]``, or not positive.
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"--mb-image-budget: {text!r} is not a positive size like 50G, 800M or 1.5T")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def budget_option(text: str) -> str:
    """argparse ``type`` of ``--mb-image-budget``: the text unchanged when :func:`parse_size` accepts it.

    Raises:
        argparse.ArgumentTypeError: with :func:`parse_size`' message.
    """
    import argparse

    try:
        parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


@dataclasses.dataclass(frozen=True)
class ImageInfo:
    """One image on a daemon, as the budget sees it.

    Attributes:
        image_id: ``sha256:...``.
        layers: ``RootFS.Layers`` (diff ids, base first).
        size: ``Size`` in bytes (all layers).
        harness: carries ``mobilebench.level`` (only those are charged and evicted).
        last_used: epoch seconds of the last recorded use (creation time if never recorded).
        in_use: a container of the daemon was created from it.
    """

    image_id: str
    layers: tuple[str, ...]
    size: int
    harness: bool
    last_used: float
    in_use: bool = False


def _own_bytes(images: Sequence[ImageInfo]) -> dict[str, int]:
    sizes = {img.layers: img.size for img in images}
    own: dict[str, int] = {}
    for img in images:
        prefix = next((img.layers[:n] for n in range(len(img.layers) - 1, 0, -1) if img.layers[:n] in sizes), ())
        own[img.image_id] = max(0, img.size - sizes.get(prefix, 0))
    return own


def charged_bytes(images: Sequence[ImageInfo]) -> int:
    """Bytes held by the harness images among ``images`` (see the module docstring); identical layer
    chains (one image under two ids) are charged once."""
    own = _own_bytes(images)
    seen: set[tuple[str, ...]] = set()
    total = 0
    for img in images:
        if img.harness and img.layers not in seen:
            seen.add(img.layers)
            total += own[img.image_id]
    return total


def plan_evictions(
    images: Sequence[ImageInfo], budget: int, *, protect: Iterable[str] = (), now: float, grace_s: float
) -> list[str]:
    """Image ids to remove, in order, so that :func:`charged_bytes` falls to ``budget`` or below.

    Stops early (returns what helps) when nothing more may be evicted; the caller then stays over budget.
    """
    protected = set(protect)
    present = list(images)
    plan: list[str] = []
    while charged_bytes(present) > budget:
        chains = [img.layers for img in present]
        candidates = [
            img
            for img in present
            if img.harness
            and not img.in_use
            and img.image_id not in protected
            and now - img.last_used >= grace_s
            and not any(len(c) > len(img.layers) and c[: len(img.layers)] == img.layers for c in chains)
        ]
        if not candidates:
            break
        victim = min(candidates, key=lambda img: (img.last_used, img.image_id))
        plan.append(victim.image_id)
        present = [img for img in present if img.image_id != victim.image_id]
    return plan


class ImageBudget:
    """Enforces a byte budget for the harness's images on one daemon.

    Args:
        client: the daemon's client.
        budget: bytes (:func:`parse_size`).
        usage_file: JSON ``{image id: last use, epoch s}`` shared by this machine's workers (file-locked).
        label: the label every harness image carries (``mobilebench.level``).
        grace_s: images touched more recently are never evicted (default 30 s).
        progress: receives one line per evicted image.
    """

    def __init__(
        self,
        client: Any,
        budget: int,
        *,
        usage_file: Path,
        label: str,
        grace_s: float = 30.0,
        progress: Any = None,
    ) -> None:
        self.client = client
        self.budget = budget
        self.usage_file = usage_file
        self.label = label
        self.grace_s = grace_s
        self.progress = progress or (lambda _line: None)
        self.evicted: list[str] = []

    def touch(self, image_id: str) -> None:
        """Record a use of ``image_id`` now."""
        self.usage_file.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.usage_file) + ".lock"):
            usage = self._usage()
            usage[image_id] = time.time()
            self.usage_file.write_text(json.dumps(usage, sort_keys=True), encoding="utf-8")

    def enforce(self, protect: Iterable[str] = ()) -> list[str]:
        """Evict LRU harness images until the charge is within the budget; return the removed ids.

        An image that turns out to be in use (HTTP 409 from the daemon) or already gone is skipped.
        """
        import docker.errors

        images = self.inventory()
        removed: list[str] = []
        for image_id in plan_evictions(images, self.budget, protect=protect, now=time.time(), grace_s=self.grace_s):
            try:
                self.client.api.remove_image(image_id, force=False, noprune=False)
            except docker.errors.NotFound:
                continue
            except docker.errors.APIError as exc:
                if exc.status_code == 409:
                    continue
                raise
            removed.append(image_id)
            self.progress(f"image budget {self.budget} B: evicted {image_id[:19]}")
        self.evicted += removed
        return removed

    def inventory(self) -> list[ImageInfo]:
        """Every image of the daemon with its layers, size, harness flag, last use and use by containers."""
        usage = self._usage()
        in_use = {str(c.get("ImageID")) for c in self.client.api.containers(all=True)}
        infos: list[ImageInfo] = []
        for entry in self.client.api.images():
            with contextlib.suppress(Exception):  # removed concurrently: not there any more
                detail = self.client.api.inspect_image(entry["Id"])
                labels: Mapping[str, str] = (detail.get("Config") or {}).get("Labels") or {}
                infos.append(
                    ImageInfo(
                        image_id=str(entry["Id"]),
                        layers=tuple((detail.get("RootFS") or {}).get("Layers") or ()),
                        size=int(detail.get("Size") or 0),
                        harness=self.label in labels,
                        last_used=float(usage.get(str(entry["Id"]), entry.get("Created") or 0)),
                        in_use=str(entry["Id"]) in in_use,
                    )
                )
        return infos

    def explain(self, error: InfraError) -> InfraError:
        """A disk-full build error restated with the budget and the charge (other errors unchanged)."""
        if error.kind != "disk_full":
            return error
        charge = charged_bytes(self.inventory())
        return InfraError(
            InfraKind.DISK_FULL,
            f"{error.message} [--mb-image-budget {self.budget} B on {self.client.api.base_url}: harness images "
            f"hold {charge} B; lower the budget or free the disk]",
            log=error.log,
        )

    def _usage(self) -> dict[str, float]:
        try:
            data = json.loads(self.usage_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


def kept_images(client: Any, run_id: str | None = None) -> tuple[int, int]:
    """``(count, bytes)`` of the harness's images on ``client``'s daemon (those labelled ``mobilebench.level``,
    what the budget counts; with ``run_id``, only those that run built: ``mobilebench.run_id=<run_id>``); layers
    shared between images count once per image, as ``docker images`` shows them."""
    from pytest_mobilebench.runtime.images import LABEL_LEVEL, LABEL_RUN

    labels = [LABEL_LEVEL] if run_id is None else [LABEL_LEVEL, f"{LABEL_RUN}={run_id}"]
    entries = {e["Id"]: int(e.get("Size") or 0) for e in client.api.images(filters={"label": labels})}
    return len(entries), sum(entries.values())


def kept_note(count: int, size: int, own: int, cache_level: str | None, run_id: str) -> str:
    """What stays on the daemon(s) after a run, and the command that removes only this run's images.

    Args:
        count, size: harness images kept (every run's) and their bytes as ``docker images`` sums them.
        own: how many of them this run built (labelled ``mobilebench.run_id=<run_id>``; images it reused from
            earlier runs carry theirs, so a shared daemon's other runs and users keep their images).
        cache_level: ``--mb-cache-level`` (None: the default ``env``).
        run_id: this run's id (shell-quoted in the command).
    """
    import shlex

    from pytest_mobilebench.runtime.images import LABEL_LEVEL, LABEL_RUN

    remove = (
        f"docker image rm $(docker images -q --filter label={LABEL_LEVEL} "
        f"--filter {shlex.quote(f'label={LABEL_RUN}={run_id}')})"
    )
    return (
        f"docker: {count} harness images kept on the daemon ({size / 1e9:.2f} GB as `docker images` sums them, a "
        f"shared layer in each; --mb-cache-level={cache_level or 'env'}), {own} of them built by this run; a later "
        f"run reuses them; remove this run's with {remove} (or run with --mb-cache-level=none)"
    )


def remove_superseded(
    client: Any, spare: Callable[[str], bool] | None = None, *, min_age_s: float = 900.0
) -> list[str]:
    """Remove the daemon's dangling mobilebench images (any level, any run): a harness image whose tag a
    later build moved to a new image. No run can reach one again (runs address images by tag), so keeping
    it only costs disk. Images a container still uses, ``spare`` keeps (a lease), or younger than
    ``min_age_s`` seconds (a step of a build going on elsewhere is untagged until the build ends) stay.

    Returns:
        The removed image ids.
    """
    import docker.errors

    from pytest_mobilebench.runtime.images import LABEL_LEVEL

    removed: list[str] = []
    for image in client.api.images(filters={"dangling": True, "label": LABEL_LEVEL}):
        image_id = str(image["Id"])
        if (spare is not None and spare(image_id)) or time.time() - float(image.get("Created") or 0) < min_age_s:
            continue
        try:
            client.api.remove_image(image_id, force=False, noprune=False)
        except docker.errors.NotFound:
            continue
        except docker.errors.APIError as exc:
            if exc.status_code == 409:  # used by a container, or the parent of a kept image
                continue
            raise
        removed.append(image_id)
    return removed
