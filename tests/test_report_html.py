"""pytest-html extras: only real PNG files of a failed item are inlined, a bounded number of them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_mobilebench.report.html import (
    MAX_IMAGE_BYTES,
    MAX_IMAGES,
    failure_images,
    figures_text,
)
from pytest_mobilebench.suites.base import Column

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


def _nav(tmp_path: Path) -> Path:
    nav = tmp_path / "ev" / "nav"
    nav.mkdir(parents=True)
    return nav


def test_before_then_after_of_each_failed_spec(tmp_path: Path) -> None:
    nav = _nav(tmp_path)
    for name in ("b.after.png", "a.after.png", "a.before.png", "a.json"):
        (nav / name).write_bytes(PNG)
    shown = failure_images({"passed": False, "evidence_dir": str(tmp_path / "ev")})
    assert [p.name for p in shown] == ["a.before.png", "a.after.png", "b.after.png"]
    assert failure_images({"passed": True, "evidence_dir": str(tmp_path / "ev")}) == []


def test_non_png_links_and_huge_files_are_not_inlined(tmp_path: Path) -> None:
    nav = _nav(tmp_path)
    (nav / "html.after.png").write_text("<script>alert(1)</script>")
    (nav / "big.after.png").write_bytes(PNG + b"\0" * MAX_IMAGE_BYTES)
    secret = tmp_path / "secret.png"
    secret.write_bytes(PNG)
    os.symlink(secret, nav / "link.after.png")
    (nav / "ok.after.png").write_bytes(PNG)
    shown = failure_images({"passed": False, "evidence_dir": str(tmp_path / "ev"), "images": [str(secret) + ".none"]})
    assert [p.name for p in shown] == ["ok.after.png"]


def test_at_most_max_images(tmp_path: Path) -> None:
    nav = _nav(tmp_path)
    for i in range(MAX_IMAGES + 3):
        (nav / f"s{i:02d}.after.png").write_bytes(PNG)
    assert len(failure_images({"passed": False, "evidence_dir": str(tmp_path / "ev")})) == MAX_IMAGES


def test_figures_text_uses_the_suites_columns() -> None:
    result = {"properties": {"f2p_passed": 1, "f2p_total": 2, "nav_pass_rate": 0.8181818}}
    columns = (Column("F2P", "f2p"), Column("NavPassRate", "nav_pass_rate"), Column("P2P", "p2p"))
    assert figures_text(result, columns) == "F2P 1/2 | NavPassRate 0.818"


def test_a_blank_screenshot_is_named_blank_not_shown_as_a_broken_thumbnail(tmp_path: Path) -> None:
    image_mod = pytest.importorskip("PIL.Image")
    from pytest_mobilebench.report.html import image_label

    image_mod.new("RGB", (20, 40), (250, 250, 250)).save(tmp_path / "a.after.png")
    drawn = image_mod.new("RGB", (20, 40), (250, 250, 250))
    drawn.putpixel((3, 3), (10, 20, 30))
    drawn.save(tmp_path / "b.after.png")
    (tmp_path / "c.after.png").write_bytes(PNG)  # not decodable: the plain name
    assert image_label(tmp_path / "a.after.png") == "a.after.png (blank: the page rendered one colour)"
    assert image_label(tmp_path / "b.after.png") == "b.after.png"
    assert image_label(tmp_path / "c.after.png") == "c.after.png"


def test_a_tall_page_is_shown_by_its_top_not_its_empty_middle(tmp_path: Path) -> None:
    """pytest-html's thumbnail crops an image's middle: a full-page shot of a tall page is inlined as its top."""
    Image = pytest.importorskip("PIL.Image")
    from pytest_mobilebench.report.html import TALL_RATIO, top_of_page

    tall = Image.new("RGB", (100, 1000), "white")
    tall.paste((200, 0, 0), (0, 0, 100, 40))  # the header: the only content, at the top
    tall_path, short_path = tmp_path / "tall.png", tmp_path / "short.png"
    tall.save(tall_path)
    Image.new("RGB", (100, 120), "white").save(short_path)
    top = top_of_page(tall_path)
    assert top is not None and top.startswith(b"\x89PNG")
    import io

    with Image.open(io.BytesIO(top)) as shown:
        assert shown.size == (100, int(100 * TALL_RATIO))
        assert shown.getpixel((50, 10)) == (200, 0, 0)
    assert top_of_page(short_path) is None
    assert top_of_page(tmp_path / "missing.png") is None
