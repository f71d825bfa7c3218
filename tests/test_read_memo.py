"""The read memo of a Docker workspace and the split of a multi-folder listing (pure; issue 23, item 3)."""

from __future__ import annotations

from pytest_mobilebench.runtime.channel import (
    MAX_FILES,
    Rejected,
    find_group,
    nested,
    pruned_between,
    shares_find,
    split_listing,
)
from pytest_mobilebench.runtime.read_memo import ReadMemo
from pytest_mobilebench.suites.issue_resolution import base_memo


def test_nothing_is_kept_unless_quiet_and_everything_goes_on_a_touch() -> None:
    memo = ReadMemo()
    memo.keep_listing(0, "/t", ["a"], [])
    assert memo.listing("/t") is None  # never looked at the processes: not kept
    memo.mark_quiet(0)
    memo.keep_listing(0, "/t", ["a"], [Rejected("x", "why")])
    memo.keep_content(0, "/t/a", b"1", [])
    assert memo.listing("/t") == (["a"], [Rejected("x", "why")]) and memo.content("/t/a") == (b"1", [])
    memo.touch()
    assert not memo.quiet and memo.listing("/t") is None and memo.content("/t/a") is None
    memo.keep_content(0, "/t/a", b"old", [])  # taken before the touch: never kept after it
    memo.mark_quiet(memo.gen)
    assert memo.content("/t/a") is None


def test_forget_files_drops_what_the_harness_deleted_and_nothing_else() -> None:
    memo = ReadMemo()
    memo.mark_quiet(0)
    memo.keep_listing(0, "/t", ["a", "r/x", "b"], [])
    memo.keep_listing(0, "/var/tmp/res/out", ["j.json"], [])
    for path in ("/t/a", "/t/b"):
        memo.keep_content(0, path, b"-", [])
    memo.forget_files(["/t/a"], ["/var/tmp/res"])
    assert memo.listing("/t") == (["r/x", "b"], []) and memo.listing("/var/tmp/res/out") is None
    assert memo.content("/t/a") is None and memo.content("/t/b") == (b"-", []) and memo.quiet


def test_split_listing_checks_every_name_per_folder() -> None:
    out = b"/t/a\0/n/jest/package.json\0/etc/passwd\0/t/../etc/shadow\0\0/n/jest-config/p.json\0"
    split = split_listing(out, ["/t", "/n/jest", "/n/jest-config"])
    assert split["/t"][0] == ["a"] and split["/n/jest"] == (["package.json"], [])
    assert split["/n/jest-config"] == (["p.json"], [])
    assert {r.name for r in split["/t"][1]} == {"/etc/passwd", "/t/../etc/shadow"}
    many = b"".join(f"/t/{i}\0".encode() for i in range(MAX_FILES + 5))
    names, rejected = split_listing(many, ["/t"])["/t"]
    assert len(names) == MAX_FILES and len(rejected) == 1 and "more than" in rejected[0].why
    assert nested("/t", "/t/x") and nested("/t/x", "/t") and not nested("/n/jest", "/n/jest-config")


def test_base_memo_keeps_per_image_and_only_for_a_key() -> None:
    reads: list[str] = []

    def read() -> dict[str, bytes]:
        reads.append("r")
        return {"package.json": b"{}"}

    key = "sha256:" + "ab" * 32
    first = base_memo.config(key, "fw-unit", read)
    first["package.json"] = b"changed by a caller"
    assert base_memo.config(key, "fw-unit", read) == {"package.json": b"{}"} and reads == ["r"]
    assert base_memo.config(None, "fw-unit", read) and reads == ["r", "r"]  # no key: read, never kept
    assert base_memo.config("sha256:" + "cd" * 32, "fw-unit", read) and len(reads) == 3  # another image
    asked: list[list[str]] = []

    def compute(names: list[str]) -> tuple[list[str], list[str]]:
        asked.append(names)
        return [n for n in names if n.endswith(".log")], [n for n in names if n.endswith(".js")]

    assert base_memo.status(key, ["a.js", "b.log"], compute) == (["b.log"], ["a.js"])
    assert base_memo.status(key, ["c.js", "a.js", "b.log"], compute) == (["b.log"], ["a.js", "c.js"])
    assert asked == [["a.js", "b.log"], ["c.js"]]
    assert base_memo.status(None, [], compute) == ([], []) and len(asked) == 2


def test_one_find_lists_folders_a_pruned_folder_keeps_apart() -> None:
    nm = "/t/node_modules/jest"
    assert pruned_between("/t", nm) and pruned_between("/t", "/t/.git/x") and not pruned_between("/t", "/t/src/a")
    assert shares_find("/t", nm) and shares_find(nm, "/t") and shares_find("/t", "/u")
    assert not shares_find("/t", "/t/src") and not shares_find("/t", "/t")
    assert find_group(["/t", "/t/__tests__"], [nm, "/t/node_modules/jest-config", "/t/src"]) == [
        "/t",
        nm,
        "/t/node_modules/jest-config",
    ]
    assert find_group(["/t/__tests__", "/t"]) == ["/t/__tests__"]  # the first folder is always taken
    out = b"/t/package.json\0/t/node_modules/jest/package.json\0/t/node_modules/jest/x/../../../etc\0"
    split = split_listing(out, ["/t", nm])
    assert split["/t"] == (["package.json"], [])  # each name in the deepest folder holding it
    assert split[nm][0] == ["package.json"] and [r.name for r in split[nm][1]] == [
        "/t/node_modules/jest/x/../../../etc"
    ]


def test_a_folder_under_a_kept_listing_is_answered_from_it_unless_pruned_or_cut_short() -> None:
    memo = ReadMemo()
    memo.mark_quiet(0)
    bad = Rejected("/t/__tests__/x/../../y", "'..'")
    memo.keep_listing(
        0,
        "/t",
        ["package.json", "__tests__/a.test.js", "__tests__/d/b.test.js", "src/a.js"],
        [bad, Rejected("/t/z/../q", "'..'")],
    )
    assert memo.listing("/t/__tests__") == (["a.test.js", "d/b.test.js"], [bad])
    assert memo.listing("/t/none") == ([], [])  # an empty folder or none: the kept listing shows nothing there
    assert memo.listing("/t/node_modules/jest") is None and memo.listing("/u") is None  # pruned, or not under it
    memo.keep_listing(0, "/big", [f"f{i}" for i in range(MAX_FILES)], [])
    assert memo.listing("/big/sub") is None  # the listing stopped at MAX_FILES: nothing derived
    memo.touch()
    assert memo.listing("/t/__tests__") is None


def test_expected_folders_go_to_one_find_of_the_same_moment_only() -> None:
    memo = ReadMemo()
    memo.mark_quiet(0)
    memo.expect(["/t/node_modules/jest", "/t/src"])
    memo.keep_listing(0, "/t", ["src/a.js"], [])
    assert memo.expected() == ["/t/node_modules/jest"]  # /t/src is answered by /t's listing already
    assert memo.expected() == []  # handed over once
    memo.expect(["/t/node_modules/jest"])
    memo.touch()
    assert memo.expected() == []  # another moment: forgotten
