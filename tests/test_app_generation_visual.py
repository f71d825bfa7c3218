"""Visual-fidelity axis (MobileForge section 4.3): anchor-reference list-wise judging, Borda, rubric, judges.

All images are drawn here with Pillow: a reference "screen" (header, cards, text bars, tab bar), a near
copy (one card shifted by 3 px, header a shade lighter) and a different screen (dark, other layout).
The chat judge is exercised against a stub OpenAI-compatible server started on 127.0.0.1 in the test.
"""

from __future__ import annotations

import http.server
import json
import random
import shutil
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from pytest_mobilebench.suites.app_generation.capture import capture_screens
from pytest_mobilebench.suites.app_generation.judges import (
    ChatJudge,
    Judge,
    JudgeConfigError,
    JudgeResponseError,
    JudgeTransportError,
    PerceptualJudge,
    PointwiseRubric,
    RubricScore,
    parse_ranking,
)
from pytest_mobilebench.suites.app_generation.ranking import (
    ANCHOR,
    JudgeAttempt,
    JudgeOutcome,
    acceptance_rate,
    anchor_pass_rate,
    borda_over_screens,
    judge_screen,
)

W, H = 375, 812


def _screen(path: Path, *, header=(37, 99, 235), card_dx: int = 0) -> Path:
    img = Image.new("RGB", (W, H), (249, 250, 251))
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, W, 88], fill=header)
    d.rectangle([16, 40, 180, 60], fill=(255, 255, 255))
    for i, top in enumerate((112, 272, 432)):
        dx = card_dx if i == 1 else 0
        d.rounded_rectangle(
            [16 + dx, top, W - 16 + dx, top + 140], radius=12, fill=(255, 255, 255), outline=(229, 231, 235)
        )
        d.rectangle([32 + dx, top + 20, 220 + dx, top + 36], fill=(17, 24, 39))
        d.rectangle([32 + dx, top + 52, 300 + dx, top + 62], fill=(107, 114, 128))
        d.ellipse([W - 80 + dx, top + 20, W - 36 + dx, top + 64], fill=(244, 63, 94))
    d.rectangle([0, H - 64, W, H], fill=(255, 255, 255))
    for x in (40, 165, 290):
        d.ellipse([x, H - 52, x + 40, H - 12], fill=(156, 163, 175))
    img.save(path)
    return path


def _different(path: Path) -> Path:
    img = Image.new("RGB", (W, H), (17, 17, 17))
    d = ImageDraw.Draw(img)
    for i in range(0, W, 25):
        d.rectangle([i, 0, i + 10, H], fill=(250, 204, 21))
    d.ellipse([60, 250, 320, 510], fill=(34, 197, 94))
    d.rectangle([0, 600, W, 700], fill=(168, 85, 247))
    img.save(path)
    return path


@pytest.fixture
def images(tmp_path: Path) -> dict[str, Path]:
    return {
        "reference": _screen(tmp_path / "reference.png"),
        "near": _screen(tmp_path / "near.png", header=(45, 106, 240), card_dx=3),
        "far": _different(tmp_path / "far.png"),
    }


# ---------------------------------------------------------------------------------------------------------
# Scripted judges (they recognise the anchor because it is the reference file itself)
# ---------------------------------------------------------------------------------------------------------


class ScriptedJudge:
    """Puts the anchor at ``anchor_positions[call]`` (clamped), the other candidates in the order given."""

    def __init__(self, anchor_positions: Sequence[int]) -> None:
        self.anchor_positions = list(anchor_positions)
        self.calls: list[list[Path]] = []

    def rank(self, reference: Path, candidates: Sequence[Path]) -> list[int]:
        self.calls.append(list(candidates))
        position = self.anchor_positions[min(len(self.calls) - 1, len(self.anchor_positions) - 1)]
        anchor = next(i for i, c in enumerate(candidates) if c == reference)
        others = sorted((i for i in range(len(candidates)) if i != anchor), key=lambda i: candidates[i].name)
        others.insert(min(position, len(others)), anchor)
        return others


def test_perceptual_judge_ranks_anchor_then_near_copy_then_different(images: dict[str, Path]) -> None:
    judge = PerceptualJudge()
    assert isinstance(judge, Judge)
    ref = images["reference"]
    assert judge.rank(ref, [images["far"], images["near"], ref]) == [2, 1, 0]
    assert judge.rank(ref, [images["near"], ref, images["far"]]) == [1, 0, 2]
    d_near = judge.distances(ref, images["near"])
    d_far = judge.distances(ref, images["far"])
    assert all(type(v) is float for v in d_near.values())
    assert judge.distances(ref, ref) == {"phash": 0.0, "dhash": 0.0, "hash": 0.0, "pixel": 0.0, "color": 0.0}
    assert d_near["hash"] < d_far["hash"] and d_near["pixel"] < d_far["pixel"]
    assert d_far["hash"] > 0.3  # unrelated images differ in about half the bits


def test_perceptual_rubric(images: dict[str, Path]) -> None:
    judge = PerceptualJudge()
    same = judge.score(images["reference"], images["reference"])
    assert same.scores == {"layout": 5, "style": 5, "content": 5, "consistency": None}
    assert same.overall == 5.0
    near = judge.score(images["reference"], images["near"])
    far = judge.score(images["reference"], images["far"])
    assert near.scores["consistency"] is None and far.scores["consistency"] is None
    assert near.overall > far.overall
    assert far.scores["layout"] <= 2 and far.scores["style"] <= 2
    assert near.scores["layout"] >= 4


def test_judge_screen_accepts_perceptual_ranking(images: dict[str, Path]) -> None:
    outcome = judge_screen(
        images["reference"],
        {"m-near": images["near"], "m-far": images["far"]},
        PerceptualJudge(),
        rng=random.Random(7),
        screen_id="home",
    )
    assert outcome.accepted
    assert outcome.ranking == ("m-near", "m-far")
    assert len(outcome.attempts) == 1
    attempt = outcome.attempts[0]
    assert sorted(attempt.order) == sorted([ANCHOR, "m-near", "m-far"])
    assert attempt.ranking == (ANCHOR, "m-near", "m-far") and attempt.anchor_first and attempt.error is None
    assert outcome.models == ("m-far", "m-near") and outcome.screen_id == "home"


def test_anchor_second_is_re_asked_then_accepted(images: dict[str, Path]) -> None:
    judge = ScriptedJudge([1, 0])
    outcome = judge_screen(images["reference"], {"a": images["near"], "b": images["far"]}, judge, rng=random.Random(1))
    assert len(judge.calls) == 2
    assert [a.anchor_first for a in outcome.attempts] == [False, True]
    assert outcome.attempts[0].ranking[1] == ANCHOR
    # others are ordered by file name: far.png (b) before near.png (a)
    assert outcome.accepted and outcome.ranking == ("b", "a")
    # every call sees the anchor (the reference file) among the candidates
    assert all(images["reference"] in call for call in judge.calls)


def test_judge_that_never_places_anchor_first_is_discarded(images: dict[str, Path]) -> None:
    judge = ScriptedJudge([2])
    outcome = judge_screen(
        images["reference"], {"a": images["near"], "b": images["far"]}, judge, rng=random.Random(1), max_attempts=3
    )
    assert len(judge.calls) == 3
    assert not outcome.accepted and outcome.ranking is None
    assert [a.anchor_first for a in outcome.attempts] == [False, False, False]
    assert all(a.ranking is not None and a.ranking[-1] == ANCHOR for a in outcome.attempts)
    assert borda_over_screens([outcome]) == {}
    assert anchor_pass_rate([outcome]) == 0.0


def test_shuffles_differ_between_attempts_and_are_seeded(images: dict[str, Path]) -> None:
    cands = {f"m{i}": images["near"] for i in range(5)}
    one = judge_screen(images["reference"], cands, ScriptedJudge([5]), rng=random.Random(42), max_attempts=3)
    two = judge_screen(images["reference"], cands, ScriptedJudge([5]), rng=random.Random(42), max_attempts=3)
    assert [a.order for a in one.attempts] == [a.order for a in two.attempts]
    assert len({a.order for a in one.attempts}) > 1


class _Unreadable:
    def __init__(self) -> None:
        self.calls = 0

    def rank(self, reference: Path, candidates: Sequence[Path]) -> list[int]:
        self.calls += 1
        if self.calls == 1:
            raise JudgeResponseError("no ranking in answer")
        if self.calls == 2:
            return [0, 0, 1]
        return [candidates.index(reference)] + [i for i in range(len(candidates)) if candidates[i] != reference]


def test_unreadable_answers_and_bad_permutations_count_as_failed_attempts(images: dict[str, Path]) -> None:
    judge = _Unreadable()
    outcome = judge_screen(images["reference"], {"a": images["near"], "b": images["far"]}, judge, rng=random.Random(3))
    assert [a.error is not None for a in outcome.attempts] == [True, True, False]
    assert outcome.attempts[0].error == "no ranking in answer"
    assert "not a permutation" in outcome.attempts[1].error
    assert outcome.accepted
    # 1 passing call out of 3
    assert anchor_pass_rate([outcome]) == pytest.approx(1 / 3)


def test_judge_screen_argument_errors(images: dict[str, Path], tmp_path: Path) -> None:
    rng = random.Random(0)
    with pytest.raises(ValueError, match="no candidate"):
        judge_screen(images["reference"], {}, PerceptualJudge(), rng=rng)
    with pytest.raises(ValueError, match="may not be named"):
        judge_screen(images["reference"], {ANCHOR: images["near"]}, PerceptualJudge(), rng=rng)
    with pytest.raises(ValueError, match="max_attempts"):
        judge_screen(images["reference"], {"a": images["near"]}, PerceptualJudge(), rng=rng, max_attempts=0)
    with pytest.raises(FileNotFoundError, match="model 'a'"):
        judge_screen(images["reference"], {"a": tmp_path / "none.png"}, PerceptualJudge(), rng=rng)


def _outcome(ranking: tuple[str, ...] | None, calls: Sequence[bool]) -> JudgeOutcome:
    models = tuple(sorted(ranking or ("A", "B", "C")))
    attempts = tuple(
        JudgeAttempt(order=(ANCHOR, *models), ranking=((ANCHOR, *models) if ok else (*models, ANCHOR)), anchor_first=ok)
        for ok in calls
    )
    return JudgeOutcome(None, models, attempts, ranking is not None, ranking)


def test_borda_and_rates_over_screens() -> None:
    outcomes = [
        _outcome(("A", "B", "C"), [True]),  # A 2, B 1, C 0
        _outcome(("B", "A", "C"), [False, True]),  # B 2, A 1, C 0
        _outcome(None, [False, False, False]),  # discarded: contributes nothing
    ]
    # each model could earn 2 per accepted ranking -> /4: A 3/4, B 3/4, C 0
    assert borda_over_screens(outcomes) == {"A": 0.75, "B": 0.75, "C": 0.0}
    # calls: 1 pass of 1, 1 of 2, 0 of 3 -> 2/6
    assert anchor_pass_rate(outcomes) == pytest.approx(2 / 6)
    assert acceptance_rate(outcomes) == pytest.approx(2 / 3)
    # the to_dict form (after JSON / xdist) gives the same figures
    as_json = [json.loads(json.dumps(o.to_dict())) for o in outcomes]
    assert JudgeOutcome.from_dict(as_json[1]) == outcomes[1]
    assert borda_over_screens(as_json) == {"A": 0.75, "B": 0.75, "C": 0.0}
    assert anchor_pass_rate(as_json) == pytest.approx(2 / 6)
    assert anchor_pass_rate([]) == 0.0 and acceptance_rate([]) == 0.0


def test_single_model_has_anchor_check_but_no_borda(images: dict[str, Path]) -> None:
    outcome = judge_screen(images["reference"], {"solo": images["near"]}, PerceptualJudge(), rng=random.Random(0))
    assert outcome.accepted and outcome.ranking == ("solo",)
    assert anchor_pass_rate([outcome]) == 1.0
    assert borda_over_screens([outcome]) == {}


# ---------------------------------------------------------------------------------------------------------
# Parsing judge answers
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"ranking": [2, 1, 3]}', [1, 0, 2]),
        ('Sure.\n```json\n{"Ranking": ["Candidate 3", "Candidate 1", "Candidate 2"]}\n```', [2, 0, 1]),
        ("Candidate 3 has 2 cards.\nFinal ranking: 2 > 3 > 1", [1, 2, 0]),
        ("[3, 2, 1]", [2, 1, 0]),
        ('{"reason": "x", "ranking": [1, 2, 3], "confidence": 0.9}', [0, 1, 2]),
    ],
)
def test_parse_ranking(text: str, expected: list[int]) -> None:
    assert parse_ranking(text, 3) == expected


@pytest.mark.parametrize("text", ['{"ranking": [1, 1, 2]}', '{"ranking": [1, 2]}', "I cannot decide.", "0 1 2"])
def test_parse_ranking_rejects(text: str) -> None:
    with pytest.raises(JudgeResponseError, match="cannot read a ranking"):
        parse_ranking(text, 3)


def test_rubric_parse_and_weights() -> None:
    rubric = PointwiseRubric()
    for word in ("layout", "style", "content", "consistency", "JSON"):
        assert word in rubric.prompt()
    # 0.30*4 + 0.25*3 + 0.25*5 + 0.20*2 = 3.6
    assert rubric.parse('{"Layout": 4, "style": "3", "content": 5, "consistency": 2}').overall == pytest.approx(3.6)
    lines = rubric.parse("Layout: 4/5\nStyle - 3\nContent: 5\nConsistency: 2 (tab bar differs)")
    assert lines.scores == {"layout": 4, "style": 3, "content": 5, "consistency": 2}
    with pytest.raises(JudgeResponseError, match="'content'"):
        rubric.parse('{"layout": 4, "style": 3, "content": 7, "consistency": 2}')
    with pytest.raises(JudgeResponseError, match="'consistency' missing"):
        rubric.parse("Layout: 4\nStyle: 3\nContent: 5")
    # perceptual-style partial score: weights renormalised over the three assessed dimensions
    partial = RubricScore.of({"layout": 5, "style": 1, "content": 1, "consistency": None})
    assert partial.overall == pytest.approx((0.30 * 5 + 0.25 + 0.25) / 0.80)
    with pytest.raises(ValueError, match="'layout'"):
        RubricScore.of({"layout": 0, "style": 1, "content": 1, "consistency": 1})


# ---------------------------------------------------------------------------------------------------------
# ChatJudge against a stub chat-completions server
# ---------------------------------------------------------------------------------------------------------


class _StubState:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.status = 200


def _stub_answer(body: dict[str, Any], call: int) -> str:
    """Canned judge: call 1 ranks the anchor LAST (with prose); later calls rank it first (fenced JSON).

    It finds the anchor by comparing data URLs: the candidate equal to the reference image.
    """
    parts = body["messages"][-1]["content"]
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    if len(urls) == 2 and "consistency" in parts[0]["text"]:
        return "Layout: 4\nStyle: 3\nContent: 5\nConsistency: 2"
    reference, candidates = urls[0], urls[1:]
    anchor = next(i for i, u in enumerate(candidates, start=1) if u == reference)
    others = [i for i in range(1, len(candidates) + 1) if i != anchor]
    if call == 1:
        return "The reference itself is not an independent candidate, so it goes last.\n" + json.dumps(
            {"ranking": others + [anchor]}
        )
    return "```json\n" + json.dumps({"ranking": [f"Candidate {anchor}"] + [f"Candidate {i}" for i in others]}) + "\n```"


@pytest.fixture
def stub_server() -> Iterator[tuple[str, _StubState]]:
    state = _StubState()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            length = int(self.headers["Content-Length"])
            body = json.loads(self.rfile.read(length))
            state.requests.append(body)
            state.headers.append(dict(self.headers))
            state.paths.append(self.path)
            if state.status != 200:
                self.send_response(state.status)
                self.end_headers()
                self.wfile.write(b"overloaded")
                return
            calls = sum(1 for r in state.requests if len(r["messages"][-1]["content"]) > 5)
            answer = _stub_answer(body, calls)
            payload = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": answer}}]})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(payload.encode())

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    finally:
        server.shutdown()
        server.server_close()


def test_chat_judge_anchor_protocol_against_stub(images: dict[str, Path], stub_server: tuple[str, _StubState]) -> None:
    base_url, state = stub_server
    judge = ChatJudge(base_url, "judge-vlm", api_key="sk-test")
    outcome = judge_screen(
        images["reference"], {"m1": images["near"], "m2": images["far"]}, judge, rng=random.Random(5), screen_id="s1"
    )
    # first answer put the anchor last -> re-asked; the second (fenced JSON, "Candidate k" labels) passes
    assert [a.anchor_first for a in outcome.attempts] == [False, True]
    assert outcome.attempts[0].ranking[-1] == ANCHOR
    assert outcome.accepted
    assert set(outcome.ranking) == {"m1", "m2"}
    assert state.paths == ["/v1/chat/completions", "/v1/chat/completions"]
    request = state.requests[0]
    assert request["model"] == "judge-vlm" and request["temperature"] == 0.0
    assert state.headers[0]["Authorization"] == "Bearer sk-test"
    images_sent = [p for p in request["messages"][-1]["content"] if p["type"] == "image_url"]
    assert len(images_sent) == 4  # reference + anchor + 2 models
    assert all(p["image_url"]["url"].startswith("data:image/png;base64,") for p in images_sent)
    assert anchor_pass_rate([outcome]) == 0.5


def test_chat_judge_pointwise_against_stub(images: dict[str, Path], stub_server: tuple[str, _StubState]) -> None:
    base_url, state = stub_server
    judge = ChatJudge(base_url + "/chat/completions", "judge-vlm")
    score = judge.score(images["reference"], images["near"])
    assert score.scores == {"layout": 4, "style": 3, "content": 5, "consistency": 2}
    assert score.overall == pytest.approx(3.6)
    assert "Authorization" not in state.headers[0]
    assert state.paths == ["/v1/chat/completions"]


def test_chat_judge_transport_errors(images: dict[str, Path], stub_server: tuple[str, _StubState]) -> None:
    base_url, state = stub_server
    state.status = 503
    with pytest.raises(JudgeTransportError, match="HTTP 503: overloaded"):
        ChatJudge(base_url, "m").rank(images["reference"], [images["near"]])
    # a transport error is infrastructure: judge_screen lets it through instead of counting an attempt
    with pytest.raises(JudgeTransportError):
        judge_screen(images["reference"], {"a": images["near"]}, ChatJudge(base_url, "m"), rng=random.Random(0))
    with pytest.raises(JudgeTransportError):
        ChatJudge("http://127.0.0.1:9/v1", "m", timeout=2).rank(images["reference"], [images["near"]])


def test_chat_judge_configuration() -> None:
    env = {
        "MOBILEBENCH_JUDGE_BASE_URL": "http://env.invalid/v1",
        "MOBILEBENCH_JUDGE_MODEL": "env-model",
        "MOBILEBENCH_JUDGE_API_KEY": "k",
    }
    judge = ChatJudge.from_options({}, env=env)
    assert (judge.url, judge.model, judge.api_key) == ("http://env.invalid/v1/chat/completions", "env-model", "k")
    opts = {"mb_judge_base_url": "http://opt.invalid/", "mb_judge_model": "opt-model"}
    judge = ChatJudge.from_options(opts, env=env)
    assert (judge.url, judge.model, judge.api_key) == ("http://opt.invalid/chat/completions", "opt-model", "k")
    with pytest.raises(JudgeConfigError, match="MOBILEBENCH_JUDGE_BASE_URL"):
        ChatJudge.from_options({}, env={})
    with pytest.raises(JudgeConfigError, match="MOBILEBENCH_JUDGE_MODEL"):
        ChatJudge.from_options({}, env={"MOBILEBENCH_JUDGE_BASE_URL": "http://x.invalid"})


# ---------------------------------------------------------------------------------------------------------
# capture_screens
# ---------------------------------------------------------------------------------------------------------


class _FakePage:
    def __init__(self, log: list[str], fail_goto: bool = False, fail_shot: bool = False) -> None:
        self.log, self.fail_goto, self.fail_shot = log, fail_goto, fail_shot

    def set_viewport_size(self, size: dict[str, int]) -> None:
        self.log.append(f"viewport {size['width']}x{size['height']}")

    def goto(self, url: str, **_: Any) -> None:
        self.log.append(f"goto {url}")
        if self.fail_goto:
            raise TimeoutError("Timeout 15000ms exceeded.\nCall log: ...")

    def screenshot(self, path: str, full_page: bool) -> None:
        if self.fail_shot:
            raise RuntimeError("Target crashed")
        Image.new("RGB", (W, H), (255, 255, 255)).save(path)
        self.log.append(f"shot {Path(path).name} full={full_page}")

    def close(self) -> None:
        self.log.append("close")


def test_capture_screens_with_fake_pages(tmp_path: Path) -> None:
    log: list[str] = []
    pages = iter([_FakePage(log), _FakePage(log, fail_goto=True), _FakePage(log, fail_shot=True)])
    settled: list[Any] = []
    errors: dict[str, str] = {}
    shots = capture_screens(
        lambda: next(pages),
        "http://app.local:8000/",
        {"home": "/", "tab/search": "#/search", "boom": "/boom"},
        tmp_path / "shots",
        settle=settled.append,
        errors=errors,
    )
    assert shots == {"home": tmp_path / "shots" / "home.png", "tab/search": tmp_path / "shots" / "tab_search.png"}
    assert errors == {"tab/search": "navigation: Timeout 15000ms exceeded.", "boom": "screenshot: Target crashed"}
    assert log[:4] == ["viewport 375x812", "goto http://app.local:8000/", "shot home.png full=False", "close"]
    assert "goto http://app.local:8000/#/search" in log
    assert log.count("close") == 3 and len(settled) == 3


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.mark.chromium
def test_capture_screens_in_chromium(tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        "<html><body style='margin:0;background:#2563eb'><h1 style='color:white'>Home</h1></body></html>"
    )
    (site / "about.html").write_text("<html><body style='margin:0;background:#f43f5e'><h1>About</h1></body></html>")
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(site), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    args = [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=args)
            try:
                shots = capture_screens(
                    browser.new_page, base, {"home": "/index.html", "about": "/about.html"}, tmp_path / "out"
                )
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
    assert set(shots) == {"home", "about"}
    with Image.open(shots["home"]) as home, Image.open(shots["about"]) as about:
        assert home.size == (375, 812) and about.size == (375, 812)
        assert home.convert("RGB").getpixel((370, 800)) == (37, 99, 235)
        assert about.convert("RGB").getpixel((370, 800)) == (244, 63, 94)
