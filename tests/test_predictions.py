"""Predictions files: formats, pseudo-predictions, and every bad input with its message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import PyRepo, manifest_for

from pytest_mobilebench.predictions import Prediction, PredictionKind, PredictionsError, load_predictions


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_jsonl_list_and_dict_forms_load_the_same(tmp_path: Path) -> None:
    rows = [
        {"instance_id": "a__b-1", "model_name_or_path": "m", "model_patch": "diff"},
        {"instance_id": "a__b-2", "model_name_or_path": "m", "model_patch": None},
    ]
    jsonl = write(tmp_path, "p.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n\n")
    as_list = write(tmp_path, "p.json", json.dumps(rows))
    as_dict = write(
        tmp_path,
        "d.json",
        json.dumps({r["instance_id"]: {k: v for k, v in r.items() if k != "instance_id"} for r in rows}),
    )
    for spec in (jsonl, as_list, as_dict):
        preds = load_predictions([spec])
        assert preds.models == ["m"]
        assert preds.instance_ids == {"a__b-1", "a__b-2"}
        one = preds.get("a__b-1", "m")
        assert one is not None and one.kind is PredictionKind.FILE and one.model_patch == "diff"
        assert one.fields == {"instance_id": "a__b-1", "model_name_or_path": "m", "model_patch": "diff"}
        assert one.source_dir == str(tmp_path.resolve())
        assert preds.get("a__b-2", "m").model_patch is None
        assert preds.get("a__b-3", "m") is None


def test_pseudo_predictions() -> None:
    gold = load_predictions(["gold"])
    assert gold.pseudo is PredictionKind.GOLD and gold.models == ["gold"]
    assert gold.get("x__y-1", "gold") == Prediction("x__y-1", "gold", PredictionKind.GOLD)
    assert gold.get("x__y-1", "gold").model_patch is None  # the suite knows the fix; no text stands for it
    empty = load_predictions(["empty"]).get("x__y-1", "empty")
    assert empty.kind is PredictionKind.EMPTY and empty.model_patch == "" and not empty.is_live()


@pytest.mark.parametrize("patch", ["<gold>", "<live>", "gold", "live"])
def test_a_file_cannot_buy_the_gold_fix_or_the_live_mode(tmp_path: Path, patch: str) -> None:
    """Whatever a file entry's text says (the old harness markers included, under the model name 'gold'), it
    is a candidate's FILE prediction whose patch is that text: never the gold kind, never live."""
    entry = {"instance_id": "a__b-1", "model_name_or_path": "gold", "model_patch": patch, "kind": "gold"}
    pred = load_predictions([write(tmp_path, "p.jsonl", json.dumps(entry) + "\n")]).get("a__b-1", "gold")
    assert pred is not None and pred.kind is PredictionKind.FILE and not pred.is_live()
    assert pred.model_patch == patch and pred.fields["kind"] == "gold"  # a field, not the kind


def test_a_prediction_is_read_only_and_crosses_processes_as_builtins(tmp_path: Path) -> None:
    entry = {"instance_id": "a__b-1", "model_name_or_path": "m", "model_patch": "diff", "ranked_files": ["a.kt"]}
    pred = Prediction.from_entry(entry, tmp_path)
    entry["ranked_files"].append("b.kt")  # the caller's dict is not the prediction's
    assert pred.fields["ranked_files"] == ["a.kt"]
    with pytest.raises(TypeError):
        pred.fields["model_patch"] = "other"  # type: ignore[index]
    with pytest.raises(AttributeError):
        pred.kind = PredictionKind.GOLD  # type: ignore[misc]
    plain = pred.to_builtins()
    assert json.loads(json.dumps(plain)) == plain and plain["kind"] == "file"
    assert Prediction.from_builtins(plain) == pred
    assert pred.key_material() == {"kind": "file", "fields": entry | {"ranked_files": ["a.kt"]}}  # no source_dir
    with pytest.raises(ValueError):
        Prediction.from_builtins({**plain, "kind": "<gold>"})
    with pytest.raises(TypeError, match="must be a PredictionKind"):
        Prediction("a__b-1", "gold", "gold")  # type: ignore[arg-type]


class _LiveSuite:
    """A suite stub for the live seam: ``live_model`` reads its option ``dest``, or says it has no live mode."""

    def __init__(self, name: str, dest: str | None) -> None:
        self.name, self.dest = name, dest

    def live_model(self, options):
        if self.dest is None:
            return None
        if not options.get(self.dest):
            raise ValueError(f"live mode needs --{self.dest}")
        return options[self.dest]


def test_live_takes_its_model_from_the_live_suites() -> None:
    suites = [_LiveSuite("chat", "chat_model"), _LiveSuite("patches", None), _LiveSuite("other", "other_model")]
    live = load_predictions(["live"], suites=suites, options={"chat_model": "gpt-x"})
    assert live.pseudo is PredictionKind.LIVE and live.models == ["gpt-x"] and live.instance_ids == set()
    got = live.get("t-1", "gpt-x", "chat")
    assert got == Prediction("t-1", "gpt-x", PredictionKind.LIVE) and got.is_live() and got.model_patch is None
    with pytest.raises(PredictionsError, match=r"suite 'patches' has no live mode .*--predictions=PATH"):
        live.get("p-1", "gpt-x", "patches")
    with pytest.raises(PredictionsError, match=r"suite 'other': live mode needs --other_model"):
        live.get("o-1", "gpt-x", "other")


def test_live_that_no_suite_can_run_names_what_is_missing() -> None:
    suites = [_LiveSuite("chat", "chat_model"), _LiveSuite("patches", None), _LiveSuite("diffs", None)]
    with pytest.raises(PredictionsError) as info:
        load_predictions(["live"], suites=suites, options={})
    assert str(info.value) == (
        "live: no suite can produce candidates from a model endpoint: suite 'chat': live mode "
        "needs --chat_model; no live mode: diffs, patches"
    )


def test_live_suites_naming_different_models_are_refused() -> None:
    suites = [_LiveSuite("a", "a_model"), _LiveSuite("b", "b_model")]
    with pytest.raises(PredictionsError, match=r"different models \(a: 'm1', b: 'm2'\)"):
        load_predictions(["live"], suites=suites, options={"a_model": "m1", "b_model": "m2"})
    assert load_predictions(["live"], suites=suites, options={"a_model": "m", "b_model": "m"}).models == ["m"]


def test_misspelt_pseudo_names_are_suggested(tmp_path: Path) -> None:
    with pytest.raises(
        PredictionsError,
        match=r"liv: no such predictions file \(did you mean 'live'\?\); "
        r"--predictions takes 'gold', 'empty', 'live' or a PATH",
    ):
        load_predictions(["liv"], base_dir=tmp_path)


def test_line_that_is_not_json_names_file_and_line(tmp_path: Path) -> None:
    spec = write(tmp_path, "p.jsonl", '{"instance_id": "a__b-1", "model_name_or_path": "m"}\n{not json\n')
    with pytest.raises(PredictionsError, match=r"p\.jsonl:2: line is not valid JSON"):
        load_predictions([spec])


def test_duplicate_prediction_names_both_places(tmp_path: Path) -> None:
    line = '{"instance_id": "a__b-1", "model_name_or_path": "m", "model_patch": ""}\n'
    spec = write(tmp_path, "p.jsonl", line + line)
    with pytest.raises(
        PredictionsError,
        match=r"p\.jsonl:2: duplicate prediction for instance 'a__b-1' by model 'm' \(first at .*p\.jsonl:1\)",
    ):
        load_predictions([spec])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('["a"]', "must be a JSON object"),
        ('{"model_name_or_path": "m"}', "missing or non-string 'instance_id'"),
        ('{"instance_id": "a__b-1"}', "instance 'a__b-1': missing or non-string 'model_name_or_path'"),
        (
            '{"instance_id": "a__b-1", "model_name_or_path": "m", "model_patch": 3}',
            "'model_patch' must be a string or null",
        ),
        # a typo of the patch field is not an extra field: the candidate would be graded as an empty patch
        (
            '{"instance_id": "a__b-1", "model_name_or_path": "m", "model_pach": "diff"}',
            "instance 'a__b-1': field 'model_pach' is not read (did you mean 'model_patch'?)",
        ),
        (
            '{"instance_id": "a__b-1", "model_name_or_path": "m", "project_pth": "app"}',
            "instance 'a__b-1': field 'project_pth' is not read (did you mean 'project_path'?)",
        ),
        # a file may not speak for the harness: its own keys (a folder to resolve paths against, ...)
        (
            '{"instance_id": "a__b-1", "model_name_or_path": "m", "_predictions_dir": "/"}',
            "instance 'a__b-1': field '_predictions_dir'",
        ),
        # a withheld patch (a live diff over the sandbox's bound): the field's shape, and no text beside it
        (
            '{"instance_id": "a__b-1", "model_name_or_path": "m", "patch_too_large": true}',
            "instance 'a__b-1': field 'patch_too_large' must be",
        ),
        (
            '{"instance_id": "a__b-1", "model_name_or_path": "m", "patch_too_large": {"bytes": 5, "max_bytes": 9}}',
            "instance 'a__b-1': field 'patch_too_large' must be",
        ),
        (
            (
                '{"instance_id": "a__b-1", "model_name_or_path": "m", "model_patch": "diff", '
                '"patch_too_large": {"bytes": 10, "max_bytes": 9}}'
            ),
            "instance 'a__b-1': field 'patch_too_large': a withheld",
        ),
    ],
)
def test_malformed_entries(tmp_path: Path, line: str, message: str) -> None:
    spec = write(tmp_path, "p.jsonl", '{"instance_id": "a__b-0", "model_name_or_path": "m"}\n' + line + "\n")
    with pytest.raises(PredictionsError, match=rf"p\.jsonl:2: .*{message[:20]}"):
        load_predictions([spec])


def test_a_withheld_patch_is_a_typed_value_of_the_row(tmp_path: Path) -> None:
    """``patch_too_large`` reads as :attr:`Prediction.withheld` (no sentinel text), across processes too; a row
    without it has none."""
    from pytest_mobilebench.predictions import OversizedPatch

    spec = write(
        tmp_path,
        "p.jsonl",
        '{"instance_id": "a__b-1", "model_name_or_path": "m", "model_patch": "", '
        '"patch_too_large": {"bytes": 10, "max_bytes": 9}}\n{"instance_id": "a__b-2", "model_name_or_path": "m", '
        '"model_patch": ""}\n',
    )
    preds = load_predictions([spec])
    one = preds.get("a__b-1", "m")
    assert one.withheld == OversizedPatch(10, 9) and one.model_patch == ""
    assert Prediction.from_builtins(one.to_builtins()).withheld == OversizedPatch(10, 9)
    assert preds.get("a__b-2", "m").withheld is None
    assert Prediction("a__b-1", "gold", PredictionKind.GOLD, {"patch_too_large": "x"}).withheld is None  # FILE only


def test_extra_fields_that_resemble_no_field_are_kept(tmp_path: Path) -> None:
    spec = write(
        tmp_path,
        "p.jsonl",
        '{"instance_id": "a__b-1", "model_name_or_path": "m", "model_patch": "", '
        '"model_patches": ["x"], "full_output": "..."}\n',
    )
    prediction = load_predictions([spec]).get("a__b-1", "m")
    assert prediction.get("model_patches") == ["x"] and prediction.get("full_output") == "..."


DIFF = "diff --git a/x.js b/x.js\n--- a/x.js\n+++ b/x.js\n@@ -1 +1 @@\n-a\n+b\n"
PLAIN_DIFF = "--- x.js\n+++ x.js\n@@ -1 +1 @@\n-a\n+b\n"


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"patch": DIFF}, "patch"),  # SWE-bench's own gold field name
        ({"diff": DIFF}, "diff"),
        ({"prediction": "anything"}, "prediction"),  # a known alias counts whatever it holds
        ({"model_output": DIFF}, "model_output"),
        ({"model_patch": "", "patch": DIFF}, "patch"),  # an empty model_patch beside it is no answer either
        ({"model_patch": None, "completion": PLAIN_DIFF}, "completion"),  # a diff under any other key
        ({"generated": {"nested": 1}, "answer": DIFF}, "answer"),
    ],
)
def test_a_patch_under_another_field_is_refused_not_graded_empty(tmp_path: Path, extra: dict, field: str) -> None:
    """Issue 33: a file written with ``patch`` instead of ``model_patch`` scored 0 % silently (every entry
    ``empty_patch``); now the first such line is a usage error naming file, line, instance and field."""
    entry = {"instance_id": "a__b-1", "model_name_or_path": "m", **extra}
    spec = write(
        tmp_path,
        "p.jsonl",
        '{"instance_id": "a__b-0", "model_name_or_path": "m", "model_patch": "x"}\n' + json.dumps(entry) + "\n",
    )
    with pytest.raises(PredictionsError) as raised:
        load_predictions([spec])
    message = str(raised.value)
    assert message.startswith(f"{spec}:2: instance 'a__b-1': field {field!r} holds the candidate's patch")
    assert "rename it to 'model_patch'" in message and f"--mb-patch-field={field}" in message


@pytest.mark.parametrize(
    "extra",
    [
        {"model_patch": DIFF, "patch": "old"},  # a real model_patch wins: the other field is only kept
        {"model_patch": "", "full_output": "no diff here"},  # an empty answer with text that is no diff
        {"project_path": "app", "model_output": DIFF},  # another suite's candidate (app generation)
        {"trajectory": [], "prediction": "x"},  # the planner's
        {"model_patch": "", "patch_too_large": {"bytes": 10, "max_bytes": 9}, "diff": ""},  # withheld
        {"note": "--- not a diff"},
    ],
)
def test_entries_with_their_patch_where_it_belongs_are_read(tmp_path: Path, extra: dict) -> None:
    entry = {"instance_id": "a__b-1", "model_name_or_path": "m", **extra}
    preds = load_predictions([write(tmp_path, "p.jsonl", json.dumps(entry) + "\n")])
    assert preds.get("a__b-1", "m").fields == entry


def test_the_patch_field_option_maps_an_alias_explicitly(tmp_path: Path) -> None:
    """``--mb-patch-field=patch`` reads ``patch`` as the candidate's patch; ``=model_patch`` says an empty
    ``model_patch`` is meant although another field holds a diff; both fields non-empty is refused."""
    rows = [
        {"instance_id": "a__b-1", "model_name_or_path": "m", "patch": DIFF},
        {"instance_id": "a__b-2", "model_name_or_path": "m"},
    ]
    spec = write(tmp_path, "p.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    preds = load_predictions([spec], patch_field="patch")
    one = preds.get("a__b-1", "m")
    assert one.model_patch == DIFF and "patch" not in one.fields and one.fields["patch_field"] == "patch"
    assert preds.get("a__b-2", "m").model_patch is None
    kept = write(
        tmp_path,
        "k.jsonl",
        json.dumps({"instance_id": "a__b-1", "model_name_or_path": "m", "model_patch": "", "full_output": DIFF}) + "\n",
    )
    assert load_predictions([kept], patch_field="model_patch").get("a__b-1", "m").model_patch == ""
    both = write(tmp_path, "b.jsonl", json.dumps({**rows[0], "model_patch": DIFF}) + "\n")
    with pytest.raises(PredictionsError, match=r"b\.jsonl:1: instance 'a__b-1': --mb-patch-field=patch but"):
        load_predictions([both], patch_field="patch")


@pytest.mark.parametrize("shape", ["jsonl", "list", "dict"])
def test_a_byte_order_mark_is_read(tmp_path: Path, shape: str) -> None:
    """Issue 33: a predictions file saved with a UTF-8 BOM (Windows editors) was refused."""
    row = {"instance_id": "a__b-1", "model_name_or_path": "m", "model_patch": DIFF}
    text = {
        "jsonl": json.dumps(row) + "\n",
        "list": json.dumps([row]),
        "dict": json.dumps({"a__b-1": {k: v for k, v in row.items() if k != "instance_id"}}),
    }[shape]
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert load_predictions([str(path)]).get("a__b-1", "m").model_patch == DIFF


def test_a_patch_under_an_alias_is_a_usage_error_of_the_run(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    pytester.makefile(
        ".jsonl", preds=json.dumps({"instance_id": "acme__app-1", "model_name_or_path": "m", "patch": DIFF})
    )
    result = pytester.runpytest("--predictions=preds.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--predictions: *preds.jsonl:1: instance 'acme__app-1': field 'patch' holds*"])


def test_pseudo_mixed_with_files_is_refused(tmp_path: Path) -> None:
    spec = write(tmp_path, "p.jsonl", '{"instance_id": "a__b-1", "model_name_or_path": "m"}\n')
    with pytest.raises(PredictionsError, match="cannot be combined"):
        load_predictions(["gold", spec])


MANIFEST = """\
suite: issue_resolution
repo: acme/app
framework: android
test_command: "true"
instances:
  - instance_id: acme__app-1
    base_commit: abcdef1
    patch: ""
    test_patch: ""
  - instance_id: acme__app-2
    base_commit: abcdef1
    patch: ""
    test_patch: ""
"""


def test_bad_predictions_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    pytester.makefile(".jsonl", preds="{oops\n")
    result = pytester.runpytest("--predictions=preds.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--predictions: *preds.jsonl:1: line is not valid JSON*"])


def test_missing_empty_and_unknown_predictions_in_summary(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    pytester.makefile(
        ".jsonl",
        preds='{"instance_id": "acme__app-1", "model_name_or_path": "m", "model_patch": null}\n'
        '{"instance_id": "acme__app-99", "model_name_or_path": "m", "model_patch": "x"}\n',
    )
    result = pytester.runpytest("--predictions=preds.jsonl", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*predictions matching no selected instance: acme__app-99*"])
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    assert summary["total"] == 2 and summary["resolved"] == 0 and summary["resolution_rate"] == 0.0
    assert summary["by_reason"] == {"empty_patch": 1, "missing_prediction": 1}
    assert summary["instances"]["acme__app-1"]["reason"] == "empty_patch"
    assert summary["instances"]["acme__app-2"]["reason"] == "missing_prediction"
    assert summary["unmatched_predictions"] == ["acme__app-99"]


@pytest.mark.e2e
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_prediction_for_a_deselected_instance_is_not_unmatched(pytester: pytest.Pytester, workers: list[str]) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    pytester.makefile(
        ".jsonl",
        preds='{"instance_id": "acme__app-1", "model_name_or_path": "m", "model_patch": null}\n'
        '{"instance_id": "acme__app-2", "model_name_or_path": "m", "model_patch": null}\n'
        '{"instance_id": "acme__app-99", "model_name_or_path": "m", "model_patch": "x"}\n',
    )
    result = pytester.runpytest_subprocess(
        "--predictions=preds.jsonl", "-p", "no:cacheprovider", "-k", "app-1", *workers
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["predictions matching no selected instance: acme__app-99 (did you mean*"])
    assert "acme__app-2" not in result.stdout.str()  # -k deselected it: no typo to report
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    assert summary["unmatched_predictions"] == ["acme__app-99"] and summary["deselected_predictions"] == 1


def test_dict_key_that_disagrees_with_instance_id(tmp_path: Path) -> None:
    spec = write(tmp_path, "d.json", json.dumps({"a__b-1": {"instance_id": "a__b-2", "model_name_or_path": "m"}}))
    with pytest.raises(PredictionsError, match=r"key 'a__b-1': the entry's instance_id 'a__b-2' differs from its key"):
        load_predictions([spec])


def test_cached_missing_prediction_stays_with_its_model(pytester: pytest.Pytester) -> None:
    """Two models both lacking acme__app-2: each keeps its own missing_prediction, run after run."""
    pytester.makefile(".yaml", app=MANIFEST)
    pytester.makefile(
        ".jsonl",
        preds='{"instance_id": "acme__app-1", "model_name_or_path": "m1", "model_patch": ""}\n'
        '{"instance_id": "acme__app-1", "model_name_or_path": "m2", "model_patch": ""}\n',
    )
    for _ in range(2):
        result = pytester.runpytest("--predictions=preds.jsonl", "-p", "no:cacheprovider")
        result.assert_outcomes(failed=4)
        summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
        assert sorted(summary["instances"]) == [
            "acme__app-1@m1",
            "acme__app-1@m2",
            "acme__app-2@m1",
            "acme__app-2@m2",
        ]
        assert summary["instances"]["acme__app-2@m2"]["reason"] == "missing_prediction"
        assert summary["by_model"]["m1"]["total"] == 2 and summary["by_model"]["m2"]["total"] == 2


def test_collect_only_leaves_the_last_summary_alone(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    pytester.runpytest("--predictions=empty", "--mb-run-id=first", "-p", "no:cacheprovider")
    before = (pytester.path / "reports" / "latest" / "summary.json").read_text()
    result = pytester.runpytest("--predictions=empty", "--collect-only", "-q", "-p", "no:cacheprovider")
    assert result.ret == 0
    assert (pytester.path / "reports" / "latest" / "summary.json").read_text() == before
    assert (pytester.path / "reports" / "latest" / "results.jsonl").is_file()


def test_patch_escaping_the_repository_is_refused_before_anything_runs(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    evil = "--- a/../outside/x.txt\n+++ b/../outside/x.txt\n@@ -1 +1 @@\n-a\n+b\n"
    pytester.makefile(
        ".jsonl",
        preds=json.dumps({"instance_id": "acme__app-1", "model_name_or_path": "m", "model_patch": evil}) + "\n",
    )
    result = pytester.runpytest("--predictions=preds.jsonl", "-k", "acme__app-1", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    entry = summary["instances"]["acme__app-1"]
    assert entry["reason"] == "patch_apply_failed"
    assert "escapes the repository" in entry["detail"] and "model_patch of acme__app-1" in entry["detail"]


def test_old_marker_text_from_a_file_is_graded_as_the_candidates_patch(
    pytester: pytest.Pytester, pyrepo: PyRepo, tmp_path: Path, mb_cache: Path
) -> None:
    """End to end (local runtime, a real repository): a file entry by 'gold' whose patch reads ``<gold>`` and one
    whose patch reads ``<live>`` are not diffs, so they fail to apply; the reference fix is never substituted
    (the evidence holds the entry's own text) and no endpoint is asked."""
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest_for(pyrepo)})
    rows = [
        {"instance_id": "acme__calc-1", "model_name_or_path": "gold", "model_patch": "<gold>"},
        {"instance_id": "acme__calc-1", "model_name_or_path": "m", "model_patch": "<live>"},
    ]
    pytester.makefile(".jsonl", preds="".join(json.dumps(r) + "\n" for r in rows))
    result = pytester.runpytest(
        "cases", "--predictions=preds.jsonl", "--mb-runtime=local", "--mb-trust-candidates", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=2)
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    for key, text in (("acme__calc-1@gold", "<gold>"), ("acme__calc-1@m", "<live>")):
        inst = summary["instances"][key]
        assert inst["reason"] == "patch_apply_failed" and "model_patch of acme__calc-1" in inst["detail"], inst
        assert (Path(inst["evidence_dir"]) / "model_patch.diff").read_text() == text
    assert summary["resolved"] == 0
