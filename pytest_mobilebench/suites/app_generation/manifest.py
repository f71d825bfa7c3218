"""Typed records of the app-generation suite: the per-app manifest and one candidate's prediction.

One YAML file per app under ``cases/app_generation/`` (MobileForge, seed 002 section 3.3: screenshots, a
page-relationship description and navigation test specifications)::

    suite: app_generation
    app: tabs_demo                      # instance id; predictions name it in ``instance_id``
    title: Tabs demo                    # optional
    screens:                            # screen id -> where it lives
      home:    {route: /, screenshot: screens/home.png, tab_root: true}
      filters: {route: /search, overlay: true}          # an overlay shares its parent's route
    relationships:
      tabs: [home, search, profile]     # bottom-tab order
      parent_child:
        - {parent: profile, child: settings, trigger: "tapping the Settings row"}
    nav_tests:
      - id: tab-search
        category: tab_navigation        # page_existence | tab_navigation | parent_child
        source: home                    # screen id; its route is opened directly (state isolation)
        action:                         # strategy hints, tried in order until one finds an element
          - {role: link, name: Search}
          - {text: Search}
          - {selector: "nav a[href='/search']"}
          - {tab_index: 1}
        target: search
        overlay: false                  # true: pass = same route and a new top layer (dialog, sheet) the tap shows

``page_existence`` specs have no action (``action: []``); their ``source`` defaults to the target.
Routes are concrete URL paths starting with ``/`` (no ``:param`` segments: the driver must be able to open
them). Screenshot paths are relative to the YAML file and must exist when given.

A prediction (one JSON line of the predictions file; a ``Prediction``'s ``fields`` here) carries
``instance_id``, ``model_name_or_path``, ``project_path`` (a directory, ``.zip`` or ``.tar.gz``; relative
paths are resolved against the predictions file's folder), the run record ``input_tokens``, ``output_tokens``,
``llm_calls``, ``llm_seconds`` and optionally ``prebuilt_dist`` (a built static bundle to navigate instead of
building the project).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, final

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from pytest_mobilebench.records import ManifestError

__all__ = [
    "ActionHint",
    "AppManifest",
    "AppPrediction",
    "NavCategory",
    "NavSpec",
    "ParentChild",
    "Relationships",
    "Screen",
    "manifest_errors",
    "parse_manifest",
    "parse_prediction",
]

_ROUTE_RE: Final = re.compile(r"^/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$")


@enum.unique
class NavCategory(str, enum.Enum):
    """Navigation spec categories (MobileForge, seed 002 section 3.3)."""

    PAGE_EXISTENCE = "page_existence"
    TAB_NAVIGATION = "tab_navigation"
    PARENT_CHILD = "parent_child"

    @property
    def interactive(self) -> bool:
        """True for the categories the C1-C4 failure taxonomy covers (seed 002 section 7)."""
        return self is not NavCategory.PAGE_EXISTENCE


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@final
class Screen(_Model):
    """One screen of the reference app.

    Attributes:
        route: the URL path where the screen lives, e.g. ``/search``.
        screenshot: reference screenshot, relative to the manifest (resolved to absolute on load).
        tab_root: the screen is the root of a bottom tab.
        overlay: the screen is drawn over another screen at the same route (sheet, dialog, menu).
        text: phrases the screen shows (``["Filter options"]``); an overlay spec targeting it also passes when one
            of them, not visible before the tap, is visible after it (case and spacing ignored), tied to the tap
            as a new layer must be (:mod:`.tapcheck`).
    """

    route: str
    screenshot: str | None = None
    tab_root: bool = False
    overlay: bool = False
    text: list[str] = Field(default_factory=list)

    @field_validator("route")
    @classmethod
    def _route_is_path(cls, value: str) -> str:
        if not _ROUTE_RE.match(value):
            raise ValueError(f"route {value!r} must be a URL path starting with '/'")
        if any(seg.startswith(":") or seg == "*" for seg in value.split("/")):
            raise ValueError(f"route {value!r} must be concrete (no ':param' or '*' segments)")
        return value


@final
class ParentChild(_Model):
    """A parent-child statement: "Screen <child> is a sub-page of <parent>, opened by <trigger>"."""

    parent: str
    child: str
    trigger: str = ""


@final
class Relationships(_Model):
    """Page-relationship description: tab order and parent-child statements."""

    tabs: list[str] = Field(default_factory=list)
    parent_child: list[ParentChild] = Field(default_factory=list)


@final
class ActionHint(_Model):
    """One locator strategy for the spec's action; exactly one of the strategies is set.

    Attributes:
        role, name: ARIA role and accessible name (Playwright ``get_by_role(role, name=name)``).
        text: visible text (exact match first, then substring).
        selector: a CSS selector.
        tab_index: 0-based position in the tab bar (see :mod:`.navigation` for how the bar is found).
    """

    role: str | None = None
    name: str | None = None
    text: str | None = None
    selector: str | None = None
    tab_index: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_strategy(self) -> ActionHint:
        chosen = [k for k in ("role", "text", "selector", "tab_index") if getattr(self, k) is not None]
        if len(chosen) != 1:
            raise ValueError(f"a hint sets exactly one of role/text/selector/tab_index, got {chosen or 'none'}")
        if self.name is not None and self.role is None:
            raise ValueError("'name' goes with 'role'")
        return self

    @property
    def strategy(self) -> str:
        """``"role"``, ``"text"``, ``"selector"`` or ``"tab_index"``."""
        for key in ("role", "text", "selector", "tab_index"):
            if getattr(self, key) is not None:
                return key
        raise AssertionError("validated hint without a strategy")


@final
class NavSpec(_Model):
    """One navigation test specification (seed 002 section 3.3).

    Attributes:
        id: unique within the app.
        category: :class:`NavCategory`.
        source: screen id whose route is opened directly; defaults to ``target`` for page existence.
        action: hints tried in order; empty only for ``page_existence``.
        target: expected screen id.
        overlay: the target is an overlay on the same route (pass = a new top layer its tap shows).
    """

    id: str = Field(min_length=1)
    category: NavCategory
    source: str | None = None
    action: list[ActionHint] = Field(default_factory=list)
    target: str
    overlay: bool = False

    @model_validator(mode="after")
    def _shape(self) -> NavSpec:
        if self.category is NavCategory.PAGE_EXISTENCE:
            if self.action:
                raise ValueError("page_existence specs take no action")
        elif not self.action:
            raise ValueError(f"{self.category.value} specs need at least one action hint")
        elif self.source is None:
            raise ValueError(f"{self.category.value} specs need a source screen")
        return self

    @property
    def source_screen(self) -> str:
        """The screen opened first (``target`` for page-existence specs without a source)."""
        return self.source if self.source is not None else self.target


@final
class AppManifest(_Model):
    """One app of the app-generation suite; see the module docstring for the YAML shape."""

    suite: str
    app: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    title: str = ""
    screens: dict[str, Screen] = Field(min_length=1)
    relationships: Relationships = Field(default_factory=Relationships)
    nav_tests: list[NavSpec] = Field(min_length=1)

    @field_validator("suite")
    @classmethod
    def _suite_name(cls, value: str) -> str:
        if value != "app_generation":
            raise ValueError(f"expected 'app_generation', got {value!r}")
        return value

    @model_validator(mode="after")
    def _references(self) -> AppManifest:
        known = set(self.screens)
        for i, tab in enumerate(self.relationships.tabs):
            if tab not in known:
                raise ValueError(f"relationships.tabs[{i}]: unknown screen {tab!r}")
        for i, pc in enumerate(self.relationships.parent_child):
            for role, sid in (("parent", pc.parent), ("child", pc.child)):
                if sid not in known:
                    raise ValueError(f"relationships.parent_child[{i}].{role}: unknown screen {sid!r}")
        seen: set[str] = set()
        for i, spec in enumerate(self.nav_tests):
            if spec.id in seen:
                raise ValueError(f"nav_tests[{i}].id: duplicate spec id {spec.id!r}")
            seen.add(spec.id)
            refs: list[tuple[str, str | None]] = [("source", spec.source), ("target", spec.target)]
            for role, ref in refs:
                if ref is not None and ref not in known:
                    raise ValueError(f"nav_tests[{i}].{role}: unknown screen {ref!r} in spec {spec.id!r}")
        return self

    def route_of(self, screen_id: str) -> str:
        """The route of a screen id (KeyError when unknown; ids are validated on load)."""
        return self.screens[screen_id].route

    @property
    def expected_routes(self) -> list[str]:
        """Distinct routes of all screens, in manifest order (for route coverage)."""
        return list(dict.fromkeys(s.route for s in self.screens.values()))


@final
class AppPrediction(_Model):
    """One candidate for one app, as given in the predictions file.

    Attributes:
        project_path / prebuilt_dist: absolute after :func:`parse_prediction` (resolved against
            the predictions file's folder when relative).
        input_tokens, output_tokens, llm_calls: counts, ``>= 0``.
        llm_seconds: wall-clock LLM time in seconds, ``>= 0``.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    instance_id: str
    model_name_or_path: str
    project_path: str | None = None
    prebuilt_dist: str | None = None
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    llm_calls: int = Field(default=0, ge=0)
    llm_seconds: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _has_project(self) -> AppPrediction:
        if self.project_path is None and self.prebuilt_dist is None:
            raise ValueError("needs 'project_path' (or at least 'prebuilt_dist')")
        return self


def _line_of(path: Path, loc: Sequence[str | int]) -> int | None:
    """1-based line of the YAML node at ``loc`` (pydantic error location) in ``path``, best effort."""
    try:
        node: Any = yaml.compose(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    line = node.start_mark.line + 1 if node is not None else None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = next((v for k, v in node.value if getattr(k, "value", None) == str(key)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            nxt = node.value[key]
        else:
            nxt = None
        if nxt is None:
            break
        node = nxt
        line = node.start_mark.line + 1
    return line


def manifest_errors(path: Path, document: Any, exc: ValidationError) -> list[ManifestError]:
    """Turn a pydantic ``ValidationError`` into one :class:`ManifestError` per problem (file, line, app, field)."""
    app = document.get("app") if isinstance(document, Mapping) else None
    out: list[ManifestError] = []
    for err in exc.errors():
        loc = [p for p in err["loc"] if isinstance(p, (str, int))]
        field = ".".join(str(p) for p in loc) or None
        out.append(
            ManifestError(
                path,
                err["msg"],
                line=_line_of(path, loc),
                instance_id=app if isinstance(app, str) else None,
                field=field,
            )
        )
    return out


def parse_manifest(path: Path, document: Mapping[str, Any]) -> AppManifest:
    """Validate one app manifest and resolve screenshot paths against the YAML's folder.

    Args:
        path: the YAML file (for messages and relative screenshot paths).
        document: its parsed content.

    Returns:
        The :class:`AppManifest` with absolute ``screenshot`` paths.

    Raises:
        ManifestError: the first problem (file, line, app, field); :func:`manifest_errors` lists them all.
    """
    try:
        manifest = AppManifest.model_validate(document)
    except ValidationError as exc:
        raise manifest_errors(path, document, exc)[0] from exc
    screens: dict[str, Screen] = {}
    for sid, screen in manifest.screens.items():
        if screen.screenshot is not None:
            shot = (path.parent / screen.screenshot).resolve()
            if not shot.is_file():
                raise ManifestError(
                    path,
                    f"screenshot {screen.screenshot!r} not found (looked at {shot})",
                    line=_line_of(path, ["screens", sid, "screenshot"]),
                    instance_id=manifest.app,
                    field=f"screens.{sid}.screenshot",
                )
            screen = screen.model_copy(update={"screenshot": str(shot)})
        screens[sid] = screen
    return manifest.model_copy(update={"screens": screens})


def parse_prediction(prediction: Mapping[str, Any], base_dir: str | Path | None = None) -> AppPrediction:
    """Validate one prediction's fields (:attr:`Prediction.fields <pytest_mobilebench.predictions.Prediction>`)
    and make its paths absolute.

    Relative ``project_path`` / ``prebuilt_dist`` are resolved against ``base_dir`` (the predictions file's
    folder, :attr:`Prediction.source_dir`), else against the current directory.

    Raises:
        ValueError: a missing or mistyped field, with the instance id and the field in the message.
    """
    try:
        pred = AppPrediction.model_validate(dict(prediction))
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "prediction"
        raise ValueError(f"prediction {prediction.get('instance_id')!r}: field {field!r}: {first['msg']}") from exc
    base = Path(base_dir or ".")
    updates: dict[str, str] = {}
    for key in ("project_path", "prebuilt_dist"):
        value = getattr(pred, key)
        if value is not None:
            updates[key] = str((base / value).resolve()) if not Path(value).is_absolute() else value
    return pred.model_copy(update=updates)
