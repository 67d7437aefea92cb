"""What ``initialize`` says about the model: the model a session will use, as a spec an
editor can show (``claude-sonnet-4-6``), not a placeholder."""

from __future__ import annotations

from pathlib import Path

from tether.lsp.features import startup_facts


def test_a_key_alone_reports_the_default_model_by_name(tmp_path: Path) -> None:
    facts = startup_facts(tmp_path, {}, {"ANTHROPIC_API_KEY": "sk"})
    assert (facts["model"], facts["modelSource"]) == (
        "anthropic:claude-sonnet-4-6",
        "ANTHROPIC_API_KEY",
    )


def test_anthropic_model_and_its_aliases_are_followed(tmp_path: Path) -> None:
    env = {"ANTHROPIC_AUTH_TOKEN": "t", "ANTHROPIC_MODEL": "opus"}
    assert startup_facts(tmp_path, {}, env)["model"] == "anthropic:claude-opus-5-5"
    env = {**env, "ANTHROPIC_DEFAULT_OPUS_MODEL": "claude-opus-4-1"}
    assert startup_facts(tmp_path, {}, env)["model"] == "anthropic:claude-opus-4-1"


def test_a_configured_model_is_reported_as_configured(tmp_path: Path) -> None:
    facts = startup_facts(
        tmp_path, {"model": "openai:qwen@http://h/v1"}, {"ANTHROPIC_API_KEY": "k"}
    )
    assert (facts["model"], facts["modelSource"]) == (
        "openai:qwen@http://h/v1",
        "initializationOptions",
    )
    assert startup_facts(tmp_path, {}, {})["model"] is None
