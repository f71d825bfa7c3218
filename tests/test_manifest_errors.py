"""Bad manifests: each broken instance errors alone, with file, line, instance and field named."""

from __future__ import annotations

import json

import pytest

GOOD = """\
  - instance_id: acme__app-1
    base_commit: abcdef1
    patch: ""
    test_patch: ""
"""


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makefile(".jsonl", preds='{"instance_id": "acme__app-1", "model_name_or_path": "m", "model_patch": ""}\n')
    return pytester.runpytest("--predictions=preds.jsonl", "-p", "no:cacheprovider", *args)


def test_yaml_syntax_error_names_file_and_line(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".yaml", broken="suite: issue_resolution\nrepo: acme/app\ninstances:\n  - instance_id: [unclosed\n"
    )
    pytester.makefile(".yaml", good=f"suite: issue_resolution\nrepo: acme/app\nframework: android\ninstances:\n{GOOD}")
    result = _run(pytester)
    result.assert_outcomes(failed=2)  # the broken file, and the good instance's empty patch (unresolved)
    result.stdout.fnmatch_lines(["*invalid benchmark instance: *broken.yaml:4: YAML syntax error*"])
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    assert summary["instances"]["acme__app-1"]["reason"] == "empty_patch"
    assert summary["manifest_errors"] and "broken.yaml:4" in summary["manifest_errors"][0]


def test_missing_base_commit_names_instance_and_field(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".yaml",
        app=(
            "suite: issue_resolution\nrepo: acme/app\nframework: android\ninstances:\n"
            f"{GOOD}"
            "  - instance_id: acme__app-2\n    patch: ''\n    test_patch: ''\n"
        ),
    )
    result = _run(pytester, "-rf")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*app.yaml:9: instance 'acme__app-2': field 'base_commit': Field required*"])


def test_same_instance_id_in_two_files(pytester: pytest.Pytester) -> None:
    head = "suite: issue_resolution\nrepo: acme/app\nframework: android\ninstances:\n"
    pytester.makefile(".yaml", a=head + GOOD, b=head + GOOD)
    result = _run(pytester, "-rf")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["*b.yaml:5: instance 'acme__app-1': duplicate instance_id, first defined at a.yaml:5*"]
    )


def test_unknown_key_is_reported_as_likely_typo(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".yaml",
        app="suite: issue_resolution\nrepo: acme/app\nframework: android\ninstances:\n"
        + GOOD
        + "    FAIL_TO_PAS: [x]\n",
    )
    result = _run(pytester, "-rf")
    result.stdout.fnmatch_lines(
        ["*app.yaml:9: instance 'acme__app-1': field 'FAIL_TO_PAS': Extra inputs are not permitted*"]
    )


TWO = """\
  - instance_id: acme__app-1
    base_commit: abcdef1
    patch: ""
    test_patch: ""
  - instance_id: acme__app-2
    patch: ""
    test_patch: ""
    FAIL_TO_PAS: [x]
"""


def test_a_top_level_typo_is_one_error_and_every_instance_keeps_its_id(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app="suite: issue_resolution\nrepo: acme/app\nframwork: android\ninstances:\n" + TWO)
    result = _run(pytester, "-rf")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    # each instance is listed by its own id, with the typo as its reason (not one 'entry-1' for the file)
    result.stdout.fnmatch_lines(
        [
            "*app.yaml:3: instance 'acme__app-1': unknown top-level key 'framwork' (did you mean 'framework'?)",
        ]
    )
    assert "app.yaml::acme__app-1" in out and "app.yaml::acme__app-2" in out and "entry-1" not in out
    # the missing 'framework' is the typo's consequence, not a second error; the entry's own errors all follow
    assert "'framework': Field required" not in out
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    (second,) = [e for e in summary["manifest_errors"] if "acme__app-2" in e]
    assert "did you mean 'framework'" in second and "base_commit" in second and "FAIL_TO_PAS" in second
    assert "did you mean 'FAIL_TO_PASS'" in second
    assert summary["invalid_instances"] == 2


def test_every_top_level_typo_is_named(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".yaml", app="suite: issue_resolution\nrepo: acme/app\nframwork: android\nenvirnment: {}\ninstances:\n" + GOOD
    )
    result = _run(pytester, "-rf")
    result.stdout.fnmatch_lines(
        [
            "*instance 'acme__app-1': unknown top-level keys 'envirnment' (did you mean 'environment'?), "
            "'framwork' (did you mean 'framework'?)*"
        ]
    )


def test_a_planner_manifest_typo_names_each_task(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", tasks="suite: planner\ndomian: clock\ntasks:\n  - id: clock-001\n  - id: clock-002\n")
    result = pytester.runpytest("--predictions=empty", "-p", "no:cacheprovider", "-rf")
    out = result.stdout.str()
    assert "tasks.yaml::clock-001" in out and "tasks.yaml::clock-002" in out
    result.stdout.fnmatch_lines(["*instance 'clock-001': unknown top-level key 'domian' (did you mean 'domain'?)*"])
