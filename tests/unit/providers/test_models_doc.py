"""docs/models.md's "Choosing a model" says only what holds: every spec it shows parses to
what it says, and every setting it names exists in the client that reads it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tether.providers.registry import parse_model_spec

REPO = Path(__file__).resolve().parents[3]
DOC = (REPO / "docs" / "models.md").read_text(encoding="utf-8")
SECTION = DOC.split("## Choosing a model", 1)[1].split("\n## ", 1)[0]


def test_every_local_server_spec_is_an_openai_compatible_url_ending_in_v1() -> None:
    specs = re.findall(r"`(openai:[^`]+@http[^`]+)`", SECTION)
    assert len(specs) >= 4, specs
    for spec in specs:
        parsed = parse_model_spec(spec.replace("<", "").replace(">", ""), env={})
        assert parsed.provider == "openai" and parsed.base_url is not None
        assert parsed.base_url.endswith("/v1"), spec


def test_every_ollama_spec_is_ollamas_native_api_at_its_root() -> None:
    specs = re.findall(r"`(ollama:[^`]+)`", SECTION)
    assert len(specs) >= 3, specs
    for spec in specs:
        written = spec.replace("<url>", "http://gpu-box:11434")
        parsed = parse_model_spec(written.replace("<", "").replace(">", ""), env={})
        assert parsed.provider == "ollama" and parsed.base_url is not None, spec
        assert parsed.base_url.startswith("http") and not parsed.base_url.endswith("/v1")


def test_the_aliases_and_ids_it_names_are_anthropic() -> None:
    for spec in ("sonnet", "opus", "haiku", "claude-sonnet-4-6"):
        assert f"`{spec}`" in SECTION
        assert parse_model_spec(spec, env={}).provider == "anthropic"


def test_each_front_door_setting_exists() -> None:
    package = json.loads((REPO / "clients" / "vscode" / "package.json").read_text())
    settings = package["contributes"]["configuration"]["properties"]
    assert "the `tether.model` setting" in SECTION and "tether.model" in settings
    assert "`tether.env`" in SECTION and "tether.env" in settings
    config = (REPO / "clients" / "neovim" / "lua" / "tether" / "config.lua").read_text()
    assert 'setup({ model = "SPEC" })' in SECTION and "---@field model? string" in config
    assert "cmd_env = {" in SECTION and "---@field cmd_env?" in config
    from tether.cli.main import build_parser

    assert '"args": ["acp", "--model", "SPEC"]' in SECTION
    build_parser().parse_args(["acp", "--model", "openai:m@http://h/v1"])
