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
    pytester.makefile(".yaml", broken="suite: issue_resolution\nrepo: acme/app\ninstances:\n  - instance_id: [unclosed\n")
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
    result.stdout.fnmatch_lines(["*b.yaml:5: instance 'acme__app-1': duplicate instance_id, first defined at a.yaml:5*"])


def test_unknown_key_is_reported_as_likely_typo(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".yaml",
        app="suite: issue_resolution\nrepo: acme/app\nframework: android\ninstances:\n" + GOOD + "    FAIL_TO_PAS: [x]\n",
    )
    result = _run(pytester, "-rf")
    result.stdout.fnmatch_lines(["*app.yaml:9: instance 'acme__app-1': field 'FAIL_TO_PAS': Extra inputs are not permitted*"])
