"""pytest-html columns and extras; registered by the plugin only when pytest-html is active."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, final

import pytest

__all__ = ["HtmlHooks"]

_COLUMNS = (("Verdict", "reason"), ("F2P", "f2p"), ("N2P", "n2p"), ("P2P", "p2p"), ("NavPassRate", "nav_pass_rate"))


def _cell(result: dict[str, Any], key: str) -> str:
    props = result.get("properties", {})
    if key == "reason":
        return str(result.get("reason", ""))
    if key in ("f2p", "n2p", "p2p"):
        if f"{key}_total" in props:
            return f"{props.get(f'{key}_passed', 0)}/{props[f'{key}_total']}"
        return str(props.get(key, ""))
    value = props.get(key, "")
    return f"{value:.3f}" if isinstance(value, float) else str(value)


@final
class HtmlHooks:
    """Adds the verdict and transition counts as columns, and evidence images as extras."""

    @pytest.hookimpl
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        for title, _ in _COLUMNS:
            cells.insert(2, f"<th>{html.escape(title)}</th>")

    @pytest.hookimpl
    def pytest_html_results_table_row(self, report: Any, cells: list[str]) -> None:
        result = getattr(report, "mobilebench_result", None) or {}
        for _, key in _COLUMNS:
            cells.insert(2, f"<td>{html.escape(_cell(result, key))}</td>")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        result = getattr(report, "mobilebench_result", None)
        if call.when == "call" and result:
            import pytest_html

            extras = list(getattr(report, "extras", []))
            if result.get("evidence_dir"):
                extras.append(pytest_html.extras.url(Path(result["evidence_dir"]).as_uri(), name="evidence"))
            for image in result.get("images", [])[:12]:
                path = Path(image)
                if path.is_file():
                    extras.append(pytest_html.extras.png(str(path), name=path.stem))
            report.extras = extras
        return report
