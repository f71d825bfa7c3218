"""``--mb-repo-url-template`` is checked at start-up: a template :func:`repo_url` cannot expand (a stray brace,
an unknown field) is a usage error naming the option, never a ``harness_error`` of every instance (it was:
``infra_error: harness error: ValueError: Single '}' encountered in format string`` per instance)."""

from __future__ import annotations

import argparse

import pytest

from pytest_mobilebench.runtime.provider import url_template_option
from pytest_mobilebench.runtime.repos import repo_url


@pytest.mark.parametrize(
    "bad", ["file:///m/{owner}+{name}/repo}", "file:///m/{owner", "https://h/{org}/{name}", "x/{0}"]
)
def test_a_template_that_cannot_expand_is_refused_naming_the_option(bad: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="--mb-repo-url-template"):
        url_template_option(bad)


@pytest.mark.parametrize("good", ["https://github.com/{owner}/{name}", "file:///m/{owner}+{name}/repo", "{repo}.git",
                                  "file:///m/{{literal}}/{name}"])  # fmt: skip
def test_a_template_that_expands_is_kept_as_written(good: str) -> None:
    assert url_template_option(good) == good
    assert repo_url(good, "o/n")


@pytest.mark.e2e
def test_the_plugin_refuses_it_before_any_instance_runs(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--mb-repo-url-template=file:///m/{owner}}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--mb-repo-url-template*not a URL template*"])
