"""Live device repair without Docker: the prompt template's fields, the sandbox's spec, the options checked once."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mobilebench.agents.prompt import PromptError, load_template
from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.suites.device_repair import SUITE
from pytest_mobilebench.suites.device_repair.live import (
    DEVICE_PROMPT,
    live_model,
    sandbox_spec,
    template,
)

ROOT = Path(__file__).resolve().parents[1]
CALC = ROOT / "cases" / "device_repair" / "mobilebench__calc.yaml"
OPTIONS = {"mb_agent_base_url": "http://127.0.0.1:9/v1", "mb_agent_model": "m"}


def _record():
    (loaded,) = SUITE.load(CALC, read_yaml(CALC))
    return loaded.record


def test_the_default_template_names_the_issue_the_target_method_and_the_layout() -> None:
    record = _record()
    prompt = template({}).render(
        {
            "problem_statement": record.issue,
            "repo": record.repo,
            "base_commit": record.base_commit,
            "framework": record.platform,
            "workdir": "/testbed",
            "target": record.target,
            "layout": "test roots: src/test/\nsrc/main/java/com/example/calc/Calculator.java",
        }
    )
    assert record.issue.strip() in prompt.task and record.target in prompt.task
    assert "Calculator.java" in prompt.task and "no device (no adb)" in prompt.system


def test_device_fields_are_the_device_templates_only(tmp_path: Path) -> None:
    own = tmp_path / "own.md"
    own.write_text("Fix $target in $repo.\n$layout\n", encoding="utf-8")
    assert template({"mb_agent_prompt": str(own)}).path == own
    with pytest.raises(PromptError, match="unknown field '\\$target'"):
        load_template(own)  # the issue-resolution fields: no target there
    own.write_text("Fix $hidden_tests.\n", encoding="utf-8")
    with pytest.raises(PromptError, match=f"{own}:1: unknown field '\\$hidden_tests'"):
        template({"mb_agent_prompt": str(own)})
    assert template({}).path == DEVICE_PROMPT


def test_a_jvm_record_gets_the_base_image_a_gradle_record_its_own_instance_image() -> None:
    record = _record()
    spec = sandbox_spec(record, {}, "r")
    assert spec.environment["framework"] == "android" and spec.environment["install"] == "true"
    assert spec.environment["recipe"].startswith("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}")
    assert spec.base_commit == record.base_commit and spec.repo_url.endswith("mobilebench+calc.bundle")
    gradle = record.model_copy(update={"plan": record.plan.model_copy(update={"kind": "gradle"})})
    assert "recipe" not in sandbox_spec(gradle, {}, "r").environment


def test_live_model_checks_the_options_once() -> None:
    assert live_model(OPTIONS) == "m" and SUITE.live_model(OPTIONS) == "m"
    with pytest.raises(ValueError, match="--mb-agent-model"):
        live_model({"mb_agent_base_url": "http://127.0.0.1:9/v1"})
    with pytest.raises(ValueError, match="--mb-agent-command"):
        live_model({**OPTIONS, "mb_agent_command": "my-agent"})
