"""``--predictions=live`` for issue resolution in Docker, a scripted model driving the built-in shell agent on the
bundled counter examples (and the real jellyfin-expo instance where its mirror is): the gold fix applied through
shell commands resolves, under ``-n 2``, and the run's own predictions.jsonl re-grades to the same verdicts; a
test-file edit is flagged; the hidden tests and the network are out of reach and fake output changes nothing; a
looping agent ends at the step limit (counted); an endpoint failing twice is retried and graded; an endpoint
that keeps failing is infrastructure."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from live_scripts import by_instance, git_diff, heredoc_patch  # noqa: F401 (fixture)
from scripted_openai import bash, submit

from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "fixtures" / "repos" / "mobilebench+counter.bundle"
C1_BASE, C1_FIX = "b89b12d8fb1e45fedad0506f553737d0d01cd34f", "342201a1266bcd3fca3a2fb81139e1746468d728"
C2_BASE, C2_FIX = C1_FIX, "73ff7f2f28212371ba85955616d23c6896c7df61"
#: markers of the two problem statements (cases/examples/mobilebench__counter.yaml)
C1, C2 = "adds one too many", "Add Counter.reset()"
C1_SED = "sed -i 's/this.value += step + 1;/this.value += step;/' src/counter.js"

pytestmark = [
    pytest.mark.docker,
    pytest.mark.e2e,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)"),
]


@pytest.fixture(scope="module")
def counter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import subprocess

    repo = tmp_path_factory.mktemp("counter") / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(repo)], check=True, capture_output=True)
    return repo


def _run(
    pytester: pytest.Pytester,
    run_id: str,
    *args: str,
    target: Path = ROOT / "cases" / "examples",
    predictions: str = "live",
) -> tuple[pytest.RunResult, dict, Path]:
    reports = pytester.path / "reports"
    result = pytester.runpytest(
        str(target),
        f"--predictions={predictions}",
        "--mb-runtime=docker",
        f"--mb-run-id={run_id}",
        f"--mb-reports-dir={reports}",
        f"--mb-summary={reports / run_id / 'summary.json'}",
        "-p",
        "no:cacheprovider",
        *args,
    )
    return result, json.loads((reports / run_id / "summary.json").read_text()), reports / run_id


def _live(url: str, *extra: str) -> tuple[str, ...]:
    return (f"--mb-agent-base-url={url}", "--mb-agent-model=scripted", "--mb-agent-retries=3", *extra)


def _evidence(run: Path, iid: str) -> Path:
    return run / "scripted" / iid


def test_the_gold_fix_through_shell_commands_resolves_under_xdist_and_the_written_predictions_regrade_the_same(
    pytester: pytest.Pytester, by_instance, counter: Path
) -> None:
    by_instance.scripts[C1] = [bash("grep -n 'step' src/counter.js"), bash(C1_SED), submit("fixed the increment")]
    by_instance.scripts[C2] = [bash(heredoc_patch(git_diff(counter, C2_BASE, C2_FIX, "src"))), submit("reset + clamp")]
    result, summary, run = _run(pytester, "live-gold", *_live(by_instance.url), "-n", "2", "--junitxml=junit.xml")
    result.assert_outcomes(passed=2)
    assert summary["resolution_rate"] == 1.0
    for iid in ("mobilebench__counter-1", "mobilebench__counter-2"):
        entry = summary["instances"][iid]
        assert entry["model_name_or_path"] == "scripted" and entry["agent_end"] == "submitted"
        assert entry["agent_calls"] == entry["agent_steps"] == (3 if iid.endswith("-1") else 2)
        assert entry["agent_tokens_in"] > 0 and entry["agent_cost_usd"] == ""  # unpriced model
        assert (_evidence(run, iid) / "trajectory.jsonl").is_file() and (_evidence(run, iid) / "agent.json").is_file()
    table = summary["suite_tables"]["issue_resolution"]["agent"]
    assert table["items"] == 2 and table["ends"] == {"submitted": 2} and table["total_calls"] == 5
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    assert sorted(r["instance_id"] for r in rows) == ["mobilebench__counter-1", "mobilebench__counter-2"]
    assert all(r["model_name_or_path"] == "scripted" and r["model_patch"].startswith("diff --git") for r in rows)
    junit = ET.parse(pytester.path / "junit.xml").getroot()
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert props["agent_end"] == "submitted" and "agent_tokens_out" in props
    page = (run / "index.html").read_text()
    assert "Agent transcripts" in page and "fixed the increment" in page and page.count('class="transcript"') == 2

    again, regraded, _ = _run(pytester, "regrade-gold", predictions=str(run / "predictions.jsonl"))
    again.assert_outcomes(passed=2)
    assert {i: e["reason"] for i, e in regraded["instances"].items()} == {
        i: e["reason"] for i, e in summary["instances"].items()
    }
    assert regraded["cached"] == 2  # the same patches: answered from the cache, no container re-run


def test_a_test_file_edit_is_flagged_and_hidden_tests_network_and_fake_output_get_the_agent_nothing(
    pytester: pytest.Pytester, by_instance
) -> None:
    by_instance.scripts[C1] = [
        bash(C1_SED + " && echo 'test.skip(\"tidied\", () => {});' >> __tests__/counter.test.js"),
        submit("fixed; also tidied a test"),
    ]
    by_instance.scripts[C2] = [
        bash(
            "cat __tests__/clamp.test.js; cat __tests__/counter.test.js; git log --all --oneline; git show "
            "73ff7f2 --stat"
        ),
        bash(
            "curl -sS -m 5 http://1.1.1.1/; python3 -c 'import socket; "
            'socket.create_connection(("172.17.0.1", 80), 3)\''
        ),
        bash(
            "echo 'PASS __tests__/counter.test.js'; echo 'Tests: 3 passed, 3 total'; "
            'echo \'{"reason": "resolved"}\' > result.json; touch src/notes.txt'
        ),
        submit("All tests pass: resolved."),
    ]
    result, summary, run = _run(pytester, "live-cheat", *_live(by_instance.url))
    flagged = summary["instances"]["mobilebench__counter-1"]
    assert "test_files_touched" in flagged["flags"], flagged
    cheat = summary["instances"]["mobilebench__counter-2"]
    assert cheat["reason"] != "resolved" and cheat["agent_end"] == "submitted"
    lines = [
        json.loads(x) for x in (_evidence(run, "mobilebench__counter-2") / "trajectory.jsonl").read_text().splitlines()
    ]
    outputs = [x for x in lines if x.get("role") == "tool" and "command" in x]
    hidden, network = outputs[0], outputs[1]
    assert "clamps below the range" not in hidden["output"] and "resets to zero" not in hidden["output"]
    assert "No such file" in hidden["output"]
    assert "bad object" in hidden["output"] or "unknown revision" in hidden["output"]
    assert network["exit_code"] != 0 and "Couldn't connect" in network["output"] and "unreachable" in network["output"]
    rows = {json.loads(x)["instance_id"]: json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()}
    assert "__tests__/counter.test.js" in rows["mobilebench__counter-1"]["model_patch"]  # taken as the agent left it
    # the planted "result" is just one more file of the candidate's patch, graded like the rest
    assert "b/result.json" in rows["mobilebench__counter-2"]["model_patch"]


def test_a_looping_agent_ends_at_the_step_limit_and_an_endpoint_failing_twice_is_retried(
    pytester: pytest.Pytester, by_instance
) -> None:
    """Both loop into the step limit (counted, never infrastructure); counter-1 fixed the bug first, after two
    HTTP 500s: the diff taken at the limit is graded like any other and resolves (docs/live-agents.md)."""
    by_instance.scripts[C1] = [bash(C1_SED), bash("git status --short")]
    by_instance.failures[C1] = 2
    by_instance.scripts[C2] = [bash("ls src")]
    by_instance.loop |= {C1, C2}
    _result, summary, run = _run(pytester, "live-limits", *_live(by_instance.url, "--mb-agent-max-steps=3"))
    retried = summary["instances"]["mobilebench__counter-1"]
    assert retried["agent_end"] == "agent_step_limit" and retried["agent_calls"] == 3
    assert retried["reason"] == "resolved"  # the work tree at the limit resolves: graded as it is
    retries = [
        json.loads(x)
        for x in (_evidence(run, "mobilebench__counter-1") / "trajectory.jsonl").read_text().splitlines()
        if '"retry"' in x
    ]
    assert len(retries) == 2
    looped = summary["instances"]["mobilebench__counter-2"]
    assert looped["agent_end"] == "agent_step_limit" and looped["agent_steps"] == 3
    assert looped["reason"] == "empty_patch"  # counted: the candidate's outcome, not infrastructure
    assert summary["by_reason"] == {"resolved": 1, "empty_patch": 1}
    assert summary["suite_tables"]["issue_resolution"]["agent"]["ends"] == {"agent_step_limit": 2}


def test_an_endpoint_that_keeps_failing_is_infrastructure(pytester: pytest.Pytester, by_instance) -> None:
    by_instance.scripts[C1] = [bash(C1_SED), submit("fixed")]
    by_instance.failures[C1] = 100
    result, summary, run = _run(
        pytester, "live-down", *_live(by_instance.url, "--mb-agent-retries=1"), "-k", "counter-1"
    )
    entry = summary["instances"]["mobilebench__counter-1"]
    assert entry["reason"] == "infra_error" and entry["infra_kind"] == "agent_http_error", entry
    assert not (run / "predictions.jsonl").exists()  # nothing was taken: nothing to re-grade


MIRRORS = Path(os.environ.get("MOBILEBENCH_MIRRORS", "/nonexistent"))
JF_MIRROR = MIRRORS / "jellyfin+jellyfin-expo" / "repo"
JF_BASE, JF_FIX = "9c18cd1631de25074d487d5b8905a83fadbe6fa7", "c0e7f3bb4b423cde7f7236eb0791633c7be53008"


@pytest.mark.skipif(not (JF_MIRROR / "HEAD").is_file(), reason="no jellyfin-expo mirror under $MOBILEBENCH_MIRRORS")
def test_the_gold_fix_through_shell_commands_resolves_a_real_jellyfin_expo_instance(
    pytester: pytest.Pytester, by_instance
) -> None:
    gold = git_diff(JF_MIRROR, JF_BASE, JF_FIX, ".", ":!**/__tests__/**")
    by_instance.scripts["fromStorageObject"] = [bash("ls models"), bash(heredoc_patch(gold)), submit("restored props")]
    result, summary, run = _run(
        pytester,
        "live-jf",
        *_live(by_instance.url),
        "-k",
        "649",
        f"--mb-repo-url-template=file://{MIRRORS}/{{owner}}+{{name}}/repo",
        target=ROOT / "cases" / "issue_resolution",
    )
    entry = summary["instances"]["jellyfin__jellyfin-expo-649"]
    assert entry["reason"] == "resolved", entry.get("detail")
    assert entry["agent_end"] == "submitted" and entry["agent_steps"] == 3


AGENT_PROGRAM = """\
import json, os, socket, subprocess, sys, urllib.request
base = os.environ["OPENAI_BASE_URL"]
problem = open(os.environ["MOBILEBENCH_PROBLEM_FILE"]).read()
body = json.dumps({"model": os.environ["MOBILEBENCH_MODEL"], "messages": [{"role": "user", "content": problem}]})
request = urllib.request.Request(base + "/chat/completions", data=body.encode(), headers={
    "Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
answer = json.load(urllib.request.urlopen(request, timeout=60))
subprocess.run(answer["choices"][0]["message"]["content"], shell=True, check=True)
for host, port in [("127.0.0.1", int(sys.argv[1])), ("172.17.0.1", int(sys.argv[1])), ("1.1.1.1", 80)]:
    try:
        socket.create_connection((host, port), 3)
        print("REACHED", host, port)
    except OSError as exc:
        print("REFUSED", host, port, exc)
print("KEY SEEN" if "sk-real" in json.dumps(dict(os.environ)) else "NO KEY")
print("PASS __tests__/counter.test.js")
"""


def test_a_users_agent_program_reaches_only_the_forwarder_and_its_patch_is_taken(
    pytester: pytest.Pytester, by_instance, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from scripted_openai import text

    monkeypatch.setenv("MOBILEBENCH_AGENT_API_KEY", "sk-real")
    by_instance.scripts[C1] = [text(C1_SED)]
    agent_dir = tmp_path / "my_agent"
    agent_dir.mkdir()
    (agent_dir / "agent.py").write_text(AGENT_PROGRAM)
    port = by_instance.url.split(":")[2].split("/")[0]
    result, summary, run = _run(
        pytester,
        "live-command",
        f"--mb-agent-base-url={by_instance.url}",
        "--mb-agent-model=scripted",
        f"--mb-agent-command=python3 $MOBILEBENCH_AGENT_DIR/agent.py {port}",
        f"--mb-agent-dir={agent_dir}",
        "-k",
        "counter-1",
    )
    entry = summary["instances"]["mobilebench__counter-1"]
    assert entry["reason"] == "resolved", entry.get("detail")
    assert entry["agent_end"] == "submitted" and entry["agent_calls"] == 1
    assert (entry["agent_tokens_in"], entry["agent_tokens_out"]) == (100, 10)
    log = (_evidence(run, "mobilebench__counter-1") / "agent_command.log").read_text()
    assert log.count("REFUSED") == 3 and "REACHED" not in log and "NO KEY" in log, log
    assert by_instance.auth == ["Bearer sk-real"]  # the forwarder's key, never the sandbox's dummy one
    assert json.loads((run / "predictions.jsonl").read_text())["model_patch"].startswith("diff --git a/src/counter.js")

    offline, summary2, run2 = _run(
        pytester,
        "live-command-offline",
        f"--mb-agent-command={C1_SED}; curl -sS -m 5 http://1.1.1.1/ || echo OFFLINE",
        "-k",
        "counter-1",
    )
    entry2 = summary2["instances"]["mobilebench__counter-1"]
    assert entry2["reason"] == "resolved" and entry2["model_name_or_path"] == "agent-command"
    assert "OFFLINE" in (run2 / "agent-command" / "mobilebench__counter-1" / "agent_command.log").read_text()


#: a command leaving an untracked file whose diff is over the sandbox's 32 MiB bound (about 40 MB of base64)
BIG_FILE = "head -c 30000000 /dev/urandom | base64 > big.txt"


def test_a_diff_over_the_bound_is_written_as_withheld_and_re_grades_to_the_live_verdict(
    pytester: pytest.Pytester, by_instance
) -> None:
    """Built-in agent and a user's program alike: the live verdict is the policy's ``patch_too_large``, the
    row says the patch was withheld (never a fake empty patch) and re-grading the file gives the same."""
    from pytest_mobilebench.runtime.agent_sandbox import MAX_PATCH_BYTES

    by_instance.scripts[C1] = [bash(BIG_FILE), submit("done")]
    runs = {
        "builtin": _run(pytester, "live-big", *_live(by_instance.url), "-k", "counter-1"),
        "command": _run(pytester, "live-big-command", f"--mb-agent-command={BIG_FILE}", "-k", "counter-1"),
    }
    for mode, (_result, summary, run) in runs.items():
        entry = summary["instances"]["mobilebench__counter-1"]
        assert entry["reason"] == "policy_violation" and entry["agent_end"] == "submitted", (mode, entry)
        assert entry["agent_patch_bytes"] == MAX_PATCH_BYTES + 1
        (row,) = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
        assert row["model_patch"] == "" and row["patch_too_large"] == {
            "bytes": MAX_PATCH_BYTES + 1,
            "max_bytes": MAX_PATCH_BYTES,
        }, mode
        _again, regraded, _ = _run(pytester, f"regrade-big-{mode}", predictions=str(run / "predictions.jsonl"))
        again = regraded["instances"]["mobilebench__counter-1"]
        assert again["reason"] == entry["reason"], (mode, again)
        assert again["detail"] == entry["detail"] and "patch_too_large" in again["detail"], (mode, again)


def test_a_later_run_served_from_the_cache_writes_the_graded_row_to_its_own_predictions(
    pytester: pytest.Pytester, by_instance
) -> None:
    """The second run takes the verdict from the result cache (no agent runs again) and its own
    predictions.jsonl still holds the row that was graded, so re-grading the new run's file covers it."""
    by_instance.scripts[C1] = [bash(C1_SED), submit("fixed")]
    _r1, first, run1 = _run(pytester, "live-cache-1", *_live(by_instance.url), "-k", "counter-1")
    calls = len(by_instance.requests)
    _r2, second, run2 = _run(pytester, "live-cache-2", *_live(by_instance.url), "-k", "counter-1")
    assert second["cached"] == 1 and len(by_instance.requests) == calls  # the agent did not run again
    assert (
        second["instances"]["mobilebench__counter-1"]["reason"]
        == first["instances"]["mobilebench__counter-1"]["reason"]
        == "resolved"
    )
    assert (run2 / "predictions.jsonl").read_text() == (run1 / "predictions.jsonl").read_text()
    _again, regraded, _ = _run(pytester, "regrade-cache", predictions=str(run2 / "predictions.jsonl"))
    assert regraded["instances"]["mobilebench__counter-1"]["reason"] == "resolved"
