"""``--predictions=live`` for app generation: a scripted model drives the built-in agent in a sandbox of the pinned
scaffold (Docker, no network); the project it leaves is taken through the channel, written as the run's prediction,
built in a fresh sandbox and navigated in Chromium.

One run, three apps (copies of ``cases/app_generation/tabs_demo.yaml`` under other ids, one script each): an agent
that writes the good fixture app with heredocs passes every navigation spec; one that leaves the starter project
untouched gets what that project gets as a file; one that tries the network, writes outside the project, rewrites the
build configuration and prints a fake verdict gets nothing from it. The run's predictions.jsonl re-grades to the
same verdicts. The pure parts (prompt, options) run without Docker.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from live_scripts import by_instance  # noqa: F401 (fixture)
from scripted_openai import bash, submit

from pytest_mobilebench.agents.prompt import PromptError, load_template
from pytest_mobilebench.suites.app_generation import live
from pytest_mobilebench.suites.app_generation import navigation as nav
from pytest_mobilebench.suites.app_generation.manifest import parse_manifest
from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]
CASE = ROOT / "cases" / "app_generation" / "tabs_demo.yaml"
APP = ROOT / "fixtures" / "apps" / "tabs_demo"
GOOD, UNTOUCHED, CHEAT = "alpha_app", "bravo_app", "charlie_app"


def _manifest() -> object:
    return parse_manifest(CASE, yaml.safe_load(CASE.read_text(encoding="utf-8")))


def test_the_prompt_carries_the_spec_and_a_template_with_an_unknown_field_is_refused(tmp_path: Path) -> None:
    prompt = load_template(None, default=live.DEFAULT_PROMPT, fields=live.FIELDS).render(
        live.prompt_fields(_manifest(), "/testbed", {"react": "19.3.1"})
    )
    for needle in (
        "`tabs_demo`",
        "- settings: `/profile/settings`",
        "home, search, profile",
        "settings is a sub-page of profile (tapping the Settings row)",
        "react 19.3.1",
        "/testbed",
    ):
        assert needle in prompt.task, needle
    assert "no network" in prompt.system and "exists-home" not in prompt.task  # the specs are the grader's
    bad = tmp_path / "bad.md"
    bad.write_text("Fix $problem_statement in $workdir\n", encoding="utf-8")
    with pytest.raises(PromptError, match="problem_statement"):
        live.live_model(
            {"mb_agent_base_url": "http://127.0.0.1:9/v1", "mb_agent_model": "m", "mb_agent_prompt": str(bad)}
        )


def test_live_model_needs_the_endpoint_and_refuses_a_user_program() -> None:
    assert live.live_model({"mb_agent_base_url": "http://127.0.0.1:9/v1", "mb_agent_model": "m"}) == "m"
    with pytest.raises(ValueError, match="mb-agent"):
        live.live_model({})
    with pytest.raises(ValueError, match="--mb-agent-command"):
        live.live_model(
            {"mb_agent_command": "python3 agent.py", "mb_agent_base_url": "http://x/v1", "mb_agent_model": "m"}
        )


def _heredocs(root: Path) -> str:
    """One command writing every file of ``root/src`` with quoted heredocs."""
    parts = []
    for path in sorted((root / "src").rglob("*")):
        if path.is_file():
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            assert "MB_EOF" not in text
            parts.append(
                f"mkdir -p $(dirname {rel}) && cat > {rel} <<'MB_EOF'\n"
                f"{text}{'' if text.endswith(chr(10)) else chr(10)}MB_EOF"
            )
    return "\n".join(parts)


def _cases(folder: Path) -> Path:
    """Three copies of the tabs_demo manifest under other app ids (screenshots made absolute)."""
    folder.mkdir()
    doc = yaml.safe_load(CASE.read_text(encoding="utf-8"))
    for screen in doc["screens"].values():
        if screen.get("screenshot"):
            screen["screenshot"] = str((CASE.parent / screen["screenshot"]).resolve())
    for app in (GOOD, UNTOUCHED, CHEAT):
        (folder / f"{app}.yaml").write_text(yaml.safe_dump({**doc, "app": app}), encoding="utf-8")
    return folder


def _run(pytester: pytest.Pytester, cases: Path, run_id: str, predictions: str, *args: str) -> tuple[dict, Path]:
    reports = pytester.path / "reports"
    result = pytester.runpytest(
        str(cases),
        f"--predictions={predictions}",
        "--mb-runtime=docker",
        f"--mb-run-id={run_id}",
        f"--mb-reports-dir={reports}",
        f"--mb-summary={reports / run_id / 'summary.json'}",
        "-p",
        "no:cacheprovider",
        *args,
    )
    assert (reports / run_id / "summary.json").is_file(), result.stdout.str()[-3000:]
    return json.loads((reports / run_id / "summary.json").read_text()), reports / run_id


@pytest.mark.docker
@pytest.mark.chromium
@pytest.mark.e2e
@pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)")
@pytest.mark.skipif(not Path(nav.CHROMIUM_PATH).exists(), reason=f"{nav.CHROMIUM_PATH} is absent")
def test_the_agent_builds_the_app_the_untouched_scaffold_fails_cheats_change_nothing_and_the_run_regrades(
    pytester: pytest.Pytester, by_instance, tmp_path: Path
) -> None:
    sentinel = tmp_path / "outside.txt"
    by_instance.scripts[GOOD] = [
        bash("ls && cat package.json | head -5"),
        bash(_heredocs(APP)),
        bash("node_modules/.bin/tsc --noEmit -p tsconfig.json && echo TSC-OK"),
        submit("built it"),
    ]
    by_instance.scripts[UNTOUCHED] = [bash("ls"), submit("all done")]
    by_instance.scripts[CHEAT] = [
        bash(
            "curl -sS -m 5 http://1.1.1.1/; node -e \"require('net').connect(80,'203.0.113.9')"
            ".on('error',e=>console.log('NET',e.code)).on('connect',()=>console.log('CONNECTED'))\""
        ),
        bash(
            f"echo pwned > {sentinel}; echo pwned > /tmp/evil.txt; mkdir -p ../escape && echo x > ../escape/f; "
            "echo 'export default {}' > vite.config.ts; echo '// replaced' > node_modules/.bin/tsc; "
            'echo \'NavPassRate 11/11\'; echo \'{"reason": "ok", "passed": true}\' > app_generation.json'
        ),
        submit("NavPassRate 11/11: every spec passes"),
    ]
    cases = _cases(pytester.path / "cases")
    url = by_instance.url
    summary, run = _run(
        pytester,
        cases,
        "live-app",
        "live",
        f"--mb-agent-base-url={url}",
        "--mb-agent-model=scripted",
        "--mb-agent-retries=3",
        "-n",
        "2",
    )
    entries = summary["instances"]
    good, untouched, cheat = entries[GOOD], entries[UNTOUCHED], entries[CHEAT]
    assert good["reason"] == "ok" and good["nav_passed"] == good["nav_total"] == 11, good
    assert good["agent_end"] == "submitted" and good["agent_calls"] == 4 and good["agent_tokens_in"] > 0
    assert good["build_mode"] == "container" and good["llm_calls"] == 4  # the agent's usage is the efficiency record
    # an agent starts from the starter src/: left as it is, it builds and every spec fails (counted, never 0/0)
    assert (untouched["reason"], untouched["build_ok"], untouched["nav_passed"]) == ("nav_failed", True, 0), untouched
    assert (cheat["reason"], cheat["build_ok"], cheat["nav_passed"]) == ("nav_failed", True, 0), cheat
    assert not sentinel.exists()
    lines = [json.loads(x) for x in (run / "scripted" / CHEAT / "trajectory.jsonl").read_text().splitlines()]
    outputs = [x for x in lines if x.get("role") == "tool" and "command" in x]
    assert "CONNECTED" not in outputs[0]["output"] and outputs[0]["exit_code"] is not None
    assert "Permission denied" in outputs[1]["output"]  # node_modules is root's
    taken = sorted(
        p.relative_to(run / "scripted" / CHEAT / "project").as_posix()
        for p in (run / "scripted" / CHEAT / "project").rglob("*")
        if p.is_file()
    )
    # only the build inputs are taken: no config, no planted verdict
    assert taken == ["index.html", "src/App.tsx", "src/index.css", "src/main.tsx"]
    table = summary["suite_tables"]["app_generation"]["agent"]
    assert table["items"] == 3 and table["ends"] == {"submitted": 3}
    rows = {r["instance_id"]: r for r in map(json.loads, (run / "predictions.jsonl").read_text().splitlines())}
    assert sorted(rows) == sorted([GOOD, UNTOUCHED, CHEAT]) and rows[GOOD]["project_path"] == f"scripted/{GOOD}/project"
    page = (run / "index.html").read_text()
    assert "Agent transcripts" in page and page.count('class="transcript"') == 3

    regraded, _ = _run(pytester, cases, "regrade-app", str(run / "predictions.jsonl"))
    assert {i: (e["reason"], e.get("nav_passed")) for i, e in regraded["instances"].items()} == {
        i: (e["reason"], e.get("nav_passed")) for i, e in entries.items()
    }

    # the untouched agent's verdict is the starter project's, given as a file
    from pytest_mobilebench.suites.app_generation.live import starter_files

    for name, data in starter_files().items():
        (tmp_path / "starter" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "starter" / name).write_bytes(data)
    given = tmp_path / "starter.jsonl"
    given.write_text(
        json.dumps(
            {"instance_id": UNTOUCHED, "model_name_or_path": "starter", "project_path": str(tmp_path / "starter")}
        )
    )
    plain, _ = _run(pytester, cases, "starter-app", str(given), "-k", UNTOUCHED)
    assert (plain["instances"][UNTOUCHED]["reason"], plain["instances"][UNTOUCHED]["nav_passed"]) == (
        untouched["reason"],
        untouched["nav_passed"],
    )


@pytest.mark.docker
@pytest.mark.chromium
@pytest.mark.e2e
@pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)")
@pytest.mark.skipif(not Path(nav.CHROMIUM_PATH).exists(), reason=f"{nav.CHROMIUM_PATH} is absent")
def test_a_looping_agent_ends_at_the_step_limit_counted_and_a_failing_endpoint_is_infrastructure(
    pytester: pytest.Pytester, by_instance
) -> None:
    by_instance.scripts[GOOD] = [bash("ls")]
    by_instance.failures[GOOD] = 1000  # every request answered 500
    by_instance.scripts[UNTOUCHED] = [bash("ls src 2>&1; echo again")]
    by_instance.loop.add(UNTOUCHED)
    cases = _cases(pytester.path / "cases")
    summary, run = _run(
        pytester,
        cases,
        "live-limits",
        "live",
        f"--mb-agent-base-url={by_instance.url}",
        "--mb-agent-model=scripted",
        "--mb-agent-retries=1",
        "--mb-agent-max-steps=3",
        "-k",
        f"{GOOD} or {UNTOUCHED}",
    )
    looped = summary["instances"][UNTOUCHED]
    assert (looped["reason"], looped["agent_end"], looped["agent_steps"]) == ("nav_failed", "agent_step_limit", 3)
    failing = summary["instances"][GOOD]
    assert failing["reason"] == "infra_error" and failing["infra_kind"].startswith("agent_"), failing
    rows = [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]
    assert [r["instance_id"] for r in rows] == [UNTOUCHED]  # nothing is written for an infrastructure failure
