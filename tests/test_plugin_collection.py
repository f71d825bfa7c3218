"""Collection: one item per instance, stable node ids, -k / -m selection, xdist groups, bad manifests."""

from __future__ import annotations

import textwrap

import pytest

MANIFEST_A = """\
suite: issue_resolution
repo: thunderbird/thunderbird-android
framework: android
test_command: "true"
instances:
  - instance_id: thunderbird__thunderbird-android-101
    base_commit: d2598ca137d178ef8038a32ae9292095341bd73b
    patch: ""
    test_patch: ""
    difficulty: easy
    category: bug_fix
  - instance_id: thunderbird__thunderbird-android-102
    base_commit: d2598ca137d178ef8038a32ae9292095341bd73b
    patch: ""
    test_patch: ""
    difficulty: hard
    category: new_feature
"""

MANIFEST_B = """\
suite: issue_resolution
repo: zulip/zulip-flutter
framework: flutter
instances:
  - instance_id: zulip__zulip-flutter-7
    base_commit: 6831947c360ccf0279443ac0cf679fedba53cce9
    fix_commit: 6831947c360ccf0279443ac0cf679fedba53cce9
    time_label: "<15m"
"""


@pytest.fixture
def cases(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", **{"cases/thunderbird__thunderbird-android": MANIFEST_A})
    pytester.makefile(".yaml", **{"cases/zulip__zulip-flutter": MANIFEST_B})
    pytester.makefile(".yaml", **{"cases/not_a_manifest": "name: some other yaml\nvalue: 3\n"})
    return pytester


def _ids(result: pytest.RunResult) -> list[str]:
    return [line.strip() for line in result.outlines if "::" in line and not line.startswith(" ")]


def test_one_item_per_instance_with_manifest_node_ids(cases: pytest.Pytester) -> None:
    result = cases.runpytest("cases", "--collect-only", "-q", "-p", "no:cacheprovider")
    assert _ids(result) == [
        "cases/thunderbird__thunderbird-android.yaml::thunderbird__thunderbird-android-101",
        "cases/thunderbird__thunderbird-android.yaml::thunderbird__thunderbird-android-102",
        "cases/zulip__zulip-flutter.yaml::zulip__zulip-flutter-7",
    ]


def test_k_selects_by_repository_and_by_full_instance_id(cases: pytest.Pytester) -> None:
    result = cases.runpytest("cases", "--collect-only", "-q", "-k", "thunderbird")
    assert len(_ids(result)) == 2
    result = cases.runpytest("cases", "--collect-only", "-q", "-k", "zulip__zulip-flutter-7")
    assert _ids(result) == ["cases/zulip__zulip-flutter.yaml::zulip__zulip-flutter-7"]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("android and easy", ["thunderbird__thunderbird-android-101"]),
        ("android and not easy", ["thunderbird__thunderbird-android-102"]),
        ("flutter and easy", ["zulip__zulip-flutter-7"]),  # time_label <15m -> easy
        ("new_feature", ["thunderbird__thunderbird-android-102"]),
        (
            "issue_resolution",
            ["thunderbird__thunderbird-android-101", "thunderbird__thunderbird-android-102", "zulip__zulip-flutter-7"],
        ),
    ],
)
def test_markers_select_by_framework_difficulty_category(
    cases: pytest.Pytester, expr: str, expected: list[str]
) -> None:
    result = cases.runpytest("cases", "--collect-only", "-q", "-m", expr, "--strict-markers")
    assert [i.split("::")[1] for i in _ids(result)] == expected


def test_every_item_has_an_xdist_group_per_repository(cases: pytest.Pytester) -> None:
    cases.makeconftest(
        textwrap.dedent(
            """
            def pytest_collection_finish(session):
                for item in session.items:
                    mark = item.get_closest_marker("xdist_group")
                    print("GROUP", item.name, mark.kwargs["name"])
            """
        )
    )
    result = cases.runpytest("cases", "--collect-only", "-q", "-s")
    groups = sorted(line for line in result.outlines if line.startswith("GROUP"))
    assert groups == [
        "GROUP thunderbird__thunderbird-android-101 thunderbird__thunderbird-android",
        "GROUP thunderbird__thunderbird-android-102 thunderbird__thunderbird-android",
        "GROUP zulip__zulip-flutter-7 zulip__zulip-flutter",
    ]


def test_without_predictions_selected_items_are_a_usage_error(cases: pytest.Pytester) -> None:
    result = cases.runpytest("cases")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # a CI job never passes having evaluated nothing
    result.stderr.fnmatch_lines(["*no --predictions was given*", "*--predictions=gold*"])


@pytest.mark.e2e
def test_without_predictions_under_xdist_the_controller_prints_the_usage_text(cases: pytest.Pytester) -> None:
    """Workers collect under ``-n``: the controller stops the run with the same text, printed plainly."""
    result = cases.runpytest_subprocess("cases", "-n", "2", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["ERROR: *no --predictions was given*", "*--predictions=gold*", "*--predictions=PATH*"])


def test_one_model_per_item_suffix_when_several_models(cases: pytest.Pytester) -> None:
    cases.makefile(
        ".jsonl",
        preds='{"instance_id": "zulip__zulip-flutter-7", "model_name_or_path": "m1", "model_patch": ""}\n'
        '{"instance_id": "zulip__zulip-flutter-7", "model_name_or_path": "m2", "model_patch": ""}\n',
    )
    result = cases.runpytest("cases/zulip__zulip-flutter.yaml", "--collect-only", "-q", "--predictions=preds.jsonl")
    assert _ids(result) == [
        "cases/zulip__zulip-flutter.yaml::zulip__zulip-flutter-7[m1]",
        "cases/zulip__zulip-flutter.yaml::zulip__zulip-flutter-7[m2]",
    ]


def test_dataset_release_in_swe_bench_row_form(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".jsonl",
        release=(
            '{"instance_id": "acme__app-1", "repo": "acme/app", "base_commit": "abcdef1", "patch": "", '
            '"test_patch": "", "FAIL_TO_PASS": "[\\"a#b\\"]", "PASS_TO_PASS": "[]", "version": "1.0", '
            '"environment_setup_commit": "abcdef1"}\n'
        ),
    )
    result = pytester.runpytest("--dataset=release.jsonl", "--dataset-framework=android", "--collect-only", "-q")
    assert _ids(result) == ["release.jsonl::acme__app-1"]


def test_collection_is_deterministic(cases: pytest.Pytester) -> None:
    first = _ids(cases.runpytest("cases", "--collect-only", "-q", "-p", "no:randomly"))
    second = _ids(cases.runpytest("cases", "--collect-only", "-q", "-p", "no:randomly"))
    assert first == second and len(first) == 3


def test_dataset_replaces_ini_testpaths(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.mkdir("tests")
    pytester.makepyfile(**{"tests/test_other": "def test_x():\n    pass\n"})
    pytester.makefile(
        ".jsonl",
        release='{"instance_id": "acme__app-1", "repo": "acme/app", "base_commit": "abcdef1", "patch": "", '
        '"test_patch": ""}\n',
    )
    result = pytester.runpytest("--dataset=release.jsonl", "--dataset-framework=android", "--collect-only", "-q")
    assert _ids(result) == ["release.jsonl::acme__app-1"]
