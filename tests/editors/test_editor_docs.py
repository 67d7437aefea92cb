"""The configuration snippets of docs/editors.md parse, and start the daemon the way the
daemon is started. (The Neovim one also runs: test_neovim_plain.py.)"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "editors.md"
FENCE = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def blocks(section: str, language: str) -> list[str]:
    """The fenced blocks of ``language`` in the ``## section`` of the docs."""
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert found is not None, f"docs/editors.md has no '## {section}' section"
    out = [body for lang, body in FENCE.findall(found.group(1)) if lang == language]
    assert out, f"'## {section}' has no {language} block"
    return out


def read_sexps(source: str) -> int:
    """Read Emacs Lisp far enough to know it is well formed: balanced parentheses and
    brackets outside strings, comments and character literals. Returns the top-level forms."""
    depth, forms, i = 0, 0, 0
    closers = {")": "(", "]": "["}
    stack: list[str] = []
    while i < len(source):
        c = source[i]
        if c == ";":
            i = source.find("\n", i)
            i = len(source) if i < 0 else i
            continue
        if c == '"':
            i += 1
            while i < len(source) and source[i] != '"':
                i += 2 if source[i] == "\\" else 1
            assert i < len(source), "unterminated string"
        elif c == "?":
            i += 2 if source[i + 1] != "\\" else 3
            continue
        elif c in "([":
            stack.append(c)
            depth += 1
        elif c in ")]":
            assert stack and stack.pop() == closers[c], f"unbalanced {c!r} at offset {i}"
            depth -= 1
            if depth == 0:
                forms += 1
        i += 1
    assert not stack, f"{len(stack)} unclosed parentheses"
    return forms


def test_helix() -> None:
    languages, config = (tomllib.loads(b) for b in blocks("Helix", "toml"))
    server = languages["language-server"]["tether"]
    assert server["command"] == "tether" and server["args"] == ["serve"]
    assert server["config"]["permissionMode"] in ("acceptEdits", "bypassPermissions")
    (language,) = languages["language"]
    assert "tether" in language["language-servers"]
    assert config["editor"]["lsp"]["display-progress-messages"] is True


def test_emacs() -> None:
    eglot, lsp_mode, agent_shell = blocks("Emacs", "elisp")
    assert read_sexps(eglot) == 4 and '("tether" "serve")' in eglot
    assert "eglot-confirm-server-initiated-edits nil" in eglot
    assert read_sexps(lsp_mode) == 1 and '\'("tether" "serve")' in lsp_mode
    assert ":add-on? t" in lsp_mode
    assert read_sexps(agent_shell) == 1
    assert '(acp-make-client :command "tether"' in agent_shell
    assert ':command-params \'("acp")' in agent_shell
    assert "(add-to-list 'agent-shell-agent-configs (tether-agent-shell-config))" in agent_shell


def test_jetbrains() -> None:
    (config,) = (json.loads(b) for b in blocks("JetBrains IDEs (Agent Client Protocol)", "json"))
    (name,) = config["agent_servers"]
    tether = config["agent_servers"][name]
    assert set(tether) == {"command", "args", "env"}  # the fields JetBrains documents
    assert tether["command"].endswith("/tether") and tether["args"] == ["acp"]


def test_the_elisp_reader_refuses_broken_forms() -> None:
    with pytest.raises(AssertionError):
        read_sexps('(setq a "b"')
    with pytest.raises(AssertionError):
        read_sexps("(a [b)]")
    assert read_sexps('(a ?\\( "x)" ; )\n (b))') == 1


def test_kate() -> None:
    (settings,) = (json.loads(b) for b in blocks("Kate", "json"))
    assert settings["servers"]["tether"]["command"] == ["tether", "serve"]


def test_sublime() -> None:
    settings, palette = (json.loads(b) for b in blocks("Sublime Text (LSP package)", "json"))
    assert settings["clients"]["tether"]["command"] == ["tether", "serve"]
    commands = {entry["args"]["command_name"] for entry in palette}
    assert commands == {"tether.cancel", "tether.undoLastTurn", "tether.newSession"}
    assert {entry["args"]["session_name"] for entry in palette} == {"tether"}


def test_zed() -> None:
    agent, languages = (json.loads(b) for b in blocks("Zed", "json"))
    assert agent["agent_servers"]["Tether"]["command"] == "tether"
    assert agent["agent_servers"]["Tether"]["args"] == ["acp"]
    assert "tether" in languages["languages"]["Python"]["language_servers"]


def test_every_command_the_docs_name_exists() -> None:
    from tether.lsp.commands import COMMANDS

    text = DOCS.read_text(encoding="utf-8")
    named = set(re.findall(r"`(tether\.[A-Za-z]+)`", text))
    assert named <= set(COMMANDS), named - set(COMMANDS)
    assert set(COMMANDS) <= named
