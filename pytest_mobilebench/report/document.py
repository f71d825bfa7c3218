"""The HTML shell every page of the reports shares: one self-contained document with the pages' inline CSS and a
Content-Security-Policy that allows no script. Below the run page and the runs list, which both wrap their
markup in it."""

from __future__ import annotations

import html

__all__ = ["render_document"]

#: no script, no remote resource: styles inline, images as data URIs
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
table.headline th{background:#f4f4f4}.badge{background:#e3ecff;border-radius:3px;padding:0 4px;font-size:12px}
table.instances tr.pass td:nth-child(3){color:#176d22}table.instances tr.fail td:nth-child(3){color:#a4161a}
table.instances tr.infra td:nth-child(3){color:#8a5a00}
.figures{display:flex;flex-wrap:wrap;gap:1em}figure.plot{margin:0;border:1px solid #ddd;padding:.5em}
figure.plot svg{max-width:100%;height:auto}figcaption{font-weight:600}.note{font-size:12px;color:#555;max-width:40em}
.detail{font-size:12px;max-width:40em;word-break:break-word}.error{color:#a4161a}
ul.ids{margin:0;padding-left:1.2em;font-size:12px;word-break:break-word}li.more{list-style:none;color:#555}
.finding{color:#a4161a}table.audit td{max-width:28em}table.audit tr.fail td:first-child{border-left:3px solid #a4161a}
tr:target{outline:2px solid #3a6ff7}
details.transcript{margin:.3em 0}
details.transcript pre{white-space:pre-wrap;font-size:12px;max-height:24em;overflow:auto}
"""


def render_document(title: str, body: str) -> str:
    """A self-contained HTML document: ``body`` (trusted markup, already escaped) under ``title`` (text),
    with the page's inline CSS and a Content-Security-Policy that allows no script."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        f"<title>{html.escape(title, quote=True)}</title><style>{_STYLE}</style></head><body>{body}</body></html>\n"
    )
