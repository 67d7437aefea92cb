"""What chose the model and its URL: the command line, a settings file or a variable. The
message for a server that cannot be reached names that origin (``cli/render.explain``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.errors import ConfigError
from tether.providers.choice import choose_model
from tether.settings.load import OVERRIDES, load_settings, origin_of


def test_a_url_in_the_model_spec_is_chosen_by_what_named_the_model() -> None:
    choice = choose_model("openai:qwen@http://127.0.0.1:9/v1", "model in /u/settings.json", env={})
    assert choice.endpoint == "http://127.0.0.1:9/v1"
    assert choice.chosen_by == choice.endpoint_chosen_by == "model in /u/settings.json"


def test_a_spec_without_a_url_takes_openai_base_url() -> None:
    env = {"OPENAI_BASE_URL": "http://10.0.0.2:8000/v1", "ANTHROPIC_BASE_URL": "http://x"}
    choice = choose_model("openai:llama3", "--model", env=env)
    assert (choice.endpoint, choice.endpoint_chosen_by) == (
        "http://10.0.0.2:8000/v1",
        "OPENAI_BASE_URL",
    )


def test_anthropic_urls() -> None:
    own = choose_model("sonnet", "--model", env={"ANTHROPIC_API_KEY": "k"})
    assert (own.endpoint, own.endpoint_chosen_by) == ("https://api.anthropic.com", None)
    moved = choose_model(None, None, env={"ANTHROPIC_BASE_URL": "http://proxy:4000"})
    assert (moved.endpoint, moved.endpoint_chosen_by) == ("http://proxy:4000", "ANTHROPIC_BASE_URL")
    assert moved.chosen_by == "the default (ANTHROPIC_BASE_URL is set)"
    named = choose_model(None, None, env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_MODEL": "opus"})
    assert named.chosen_by == "ANTHROPIC_MODEL" and named.spec.model.startswith("claude-opus")


def test_scripted_models_have_no_url(tmp_path: Path) -> None:
    choice = choose_model("scripted:s.json", "--model", cwd=tmp_path, env={})
    assert choice.endpoint is None and choice.spec.path == tmp_path / "s.json"


def test_no_model_is_the_same_error_as_before() -> None:
    with pytest.raises(ConfigError, match="No model is configured"):
        choose_model(None, None, env={})


def test_settings_remember_which_file_set_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    user = tmp_path / "config" / "tether" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"model": "openai:a@http://u/v1", "maxBudgetUsd": 1}))
    root = tmp_path / "ws"
    (root / ".tether").mkdir(parents=True)
    project = root / ".tether" / "settings.json"
    project.write_text(json.dumps({"model": "openai:b@http://p/v1"}))

    trusted = load_settings(root, trusted=True)
    assert origin_of(trusted, "model") == f"model in {project}"
    assert origin_of(trusted, "maxBudgetUsd") == f"maxBudgetUsd in {user}"
    assert origin_of(trusted, "hooks") is None
    # An untrusted project's endpoint is withheld: the user's file is what is in force.
    untrusted = load_settings(root, trusted=False)
    assert untrusted.settings.model == "openai:a@http://u/v1"
    assert origin_of(untrusted, "model") == f"model in {user}"
    overridden = load_settings(root, {"model": "sonnet"}, trusted=True)
    assert origin_of(overridden, "model") == f"model in {OVERRIDES}"


async def test_print_mode_knows_what_chose_the_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session print mode opens carries the URL and its origin to the error message."""
    from tether.cli.driver import OpenRequest
    from tether.cli.inprocess import InProcessDriver

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("TETHER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://not-this-one")
    user = tmp_path / "config" / "tether" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"model": "openai:qwen@http://127.0.0.1:9/v1"}))
    root = tmp_path / "ws"
    root.mkdir()
    for model, origin in ((None, f"model in {user}"), ("openai:m@http://h:1/v1", "--model")):
        driver = InProcessDriver()
        facts = await driver.open(OpenRequest(cwd=root, model=model))
        await driver.close()
        assert facts.endpoint_origin == origin
        assert facts.endpoint == ("http://h:1/v1" if model else "http://127.0.0.1:9/v1")


@pytest.mark.parametrize(
    ("spec", "env", "where"),
    [
        ("openai:qwen@localhost:11434/v1", {}, "in openai:qwen@…"),
        ("openai:qwen@127.0.0.1:8080", {}, "in openai:qwen@…"),
        ("openai:qwen@ftp://host/v1", {}, "in openai:qwen@…"),
        ("openai:qwen", {"OPENAI_BASE_URL": "localhost:1234/v1"}, "in OPENAI_BASE_URL"),
    ],
)
def test_a_base_url_without_a_scheme_is_refused_naming_the_fix(
    spec: str, env: dict[str, str], where: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        choose_model(spec, "--model", env=env)
    assert f"({where}) is not an http:// or https:// URL" in str(refused.value)
    assert "http://localhost:11434/v1" in str(refused.value)
