"""Nothing a sandboxed command writes makes the host run code by itself (issue: no door).

Each attack plants a payload that would touch a canary file outside the workspace when the
host runs it: through the hooks folder a repository names, an ``fsmonitor`` in a new nested
repository, an included config file, a diff or filter driver's script, or a file direnv,
an editor or VS Code runs when the folder opens. The judge is the host itself: ``git
status``, ``git diff``, ``git add -A`` and ``git commit`` run in the workspace (and in the
nested folder the attack aims at) must leave the canary alone. Every attack is also run
once without the sandbox, where it must work: an attack that cannot fire proves nothing.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tether.sandbox import BwrapSandbox
from tether.settings.model import SandboxSettings

from .conftest import SECRET, MakeHarness, needs_bwrap, text_of

pytestmark = needs_bwrap

PAYLOAD = "printf '#!/bin/sh\\ntouch {canary}\\nexit 0\\n'"
"""A shell snippet printing a script that touches the canary (``{canary}`` filled in)."""
GIT_ID = ["-c", "user.name=Host", "-c", "user.email=host@example.com"]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True)


def config(ws: Path, key: str, value: str) -> None:
    git(ws, "config", key, value)


def write(path: Path, text: str, *, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


Setup = Callable[[Path, Path], None]
"""(workspace, home): the user's state before the agent runs."""


def nothing(_ws: Path, _home: Path) -> None:
    pass


@dataclass(frozen=True)
class Attack:
    id: str
    command: str
    setup: Setup = nothing
    where: tuple[str, ...] = (".",)
    """Folders (under the workspace) where the host runs git."""
    door: str | None = None
    """For attacks not judged by git: the file whose content must not be the payload."""
    extra: tuple[str, ...] = field(default=())
    """More git commands the host runs there (``rebase --continue``)."""


def husky(ws: Path, _home: Path) -> None:
    config(ws, "core.hooksPath", ".husky/_")


def husky_installed(ws: Path, home: Path) -> None:
    husky(ws, home)
    write(
        ws / ".husky" / "_" / "pre-commit",
        '#!/bin/sh\n. "$(dirname "$0")/../pre-commit"\n',
        mode=0o755,
    )
    write(ws / ".husky" / "pre-commit", "#!/bin/sh\nexit 0\n", mode=0o755)


def githooks(ws: Path, _home: Path) -> None:
    config(ws, "core.hooksPath", ".githooks")


def githooks_linked(ws: Path, _home: Path) -> None:
    config(ws, "core.hooksPath", ".githooks")
    write(ws / "hooks-real" / "pre-commit", "#!/bin/sh\nexit 0\n", mode=0o755)
    (ws / ".githooks").symlink_to("hooks-real", target_is_directory=True)


def nested_hooks(ws: Path, _home: Path) -> None:
    config(ws, "core.hooksPath", "tools/hooks")


def global_hooks(_ws: Path, home: Path) -> None:
    with (home / ".gitconfig").open("a") as f:
        f.write("[core]\n\thooksPath = .hooks\n")


def include(ws: Path, _home: Path) -> None:
    config(ws, "include.path", "../shared.gitconfig")


def include_existing(ws: Path, _home: Path) -> None:
    write(ws / "team.gitconfig", "[user]\n\tname = Team\n")
    config(ws, "include.path", "../team.gitconfig")


def include_if(ws: Path, _home: Path) -> None:
    config(ws, "includeIf.gitdir:**.path", "../conf/extra.gitconfig")


def include_global(ws: Path, home: Path) -> None:
    with (home / ".gitconfig").open("a") as f:
        f.write(f'[includeIf "gitdir:{ws}/"]\n\tpath = {ws}/.gitconfig-local\n')


def include_nested(ws: Path, _home: Path) -> None:
    write(ws / "team.gitconfig", "[include]\n\tpath = more.gitconfig\n")
    config(ws, "include.path", "../team.gitconfig")


def textconv(ws: Path, _home: Path) -> None:
    write(ws / "tools" / "pdf2txt.sh", '#!/bin/sh\ncat "$1"\n', mode=0o755)
    config(ws, "diff.pdf.textconv", "tools/pdf2txt.sh")
    write(ws / ".gitattributes", "*.pdf diff=pdf\n*.dat filter=clean\n")
    write(ws / "doc.pdf", "one\n")
    git(ws, "add", "-A")
    git(ws, *GIT_ID, "commit", "-qm", "pdf")


def textconv_missing(ws: Path, home: Path) -> None:
    textconv(ws, home)
    config(ws, "diff.pdf.textconv", "./scripts/conv.sh")


def clean_filter(ws: Path, _home: Path) -> None:
    write(ws / "filters" / "clean.sh", "#!/bin/sh\ncat\n", mode=0o755)
    config(ws, "filter.clean.clean", "filters/clean.sh")
    write(ws / ".gitattributes", "*.dat filter=clean\n")


def merge_driver(ws: Path, _home: Path) -> None:
    config(ws, "diff.bin.command", "./bin/differ")
    write(ws / ".gitattributes", "*.bin diff=bin\n")
    write(ws / "x.bin", "a\n")
    git(ws, "add", "-A")
    git(ws, *GIT_ID, "commit", "-qm", "bin")


def fsmonitor_script(ws: Path, _home: Path) -> None:
    write(ws / "scripts" / "fsmonitor.sh", "#!/bin/sh\nexit 0\n", mode=0o755)
    config(ws, "core.fsmonitor", "./scripts/fsmonitor.sh")


def envrc_dotenv(ws: Path, _home: Path) -> None:
    write(ws / ".envrc", "dotenv\nsource_env scripts/env.sh\n")


def hidden_repo(ws: Path, _home: Path) -> None:
    """A repository the walk does not enter (a dependency installed from git)."""
    dep = ws / "node_modules" / "dep"
    dep.mkdir(parents=True)
    git(dep, "init", "-q")
    (dep / "index.js").write_text("module.exports = 1\n")


def linked_worktree(ws: Path, _home: Path) -> None:
    config(ws, "core.hooksPath", ".githooks")
    git(ws, "worktree", "add", "-q", "wt")


def pre_commit_framework(ws: Path, _home: Path) -> None:
    """What the pre-commit framework installs, reduced: its hook runs the entries the
    work tree's ``.pre-commit-config.yaml`` lists."""
    write(ws / ".pre-commit-config.yaml", "entry: true\n")
    hook = "#!/bin/sh\n# installed by pre-commit\nsh -c \"$(sed -n 's/^entry: //p' .pre-commit-config.yaml)\"\n"
    write(ws / ".git" / "hooks" / "pre-commit", hook, mode=0o755)


def pre_commit_local(ws: Path, home: Path) -> None:
    """A local hook of the pre-commit framework running a script of the project."""
    pre_commit_framework(ws, home)
    write(
        ws / ".pre-commit-config.yaml",
        "repos:\n- repo: local\n  hooks:\n  - id: lint\n"
        "    entry: scripts/lint.sh\n    language: script\n",
    )
    write(ws / "scripts" / "lint.sh", "#!/bin/sh\nexit 0\n", mode=0o755)


def code_workspace(ws: Path, _home: Path) -> None:
    write(ws / "proj.code-workspace", '{"folders": [{"path": "."}]}\n')


def direnv_dotenv(_ws: Path, home: Path) -> None:
    write(home / ".config" / "direnv" / "direnv.toml", "[global]\nload_dotenv = true\n")


def deep_repo(ws: Path, _home: Path) -> None:
    """A nested repository deeper than the walk looks (so it is not mounted read-only)."""
    deep = ws / "a" / "b" / "c" / "d" / "e" / "f" / "g" / "lib"
    deep.mkdir(parents=True)
    git(deep, "init", "-q")


def vscode_task(ws: Path, _home: Path) -> None:
    write(
        ws / ".vscode" / "tasks.json",
        '{\n  // runs on open\n  "version": "2.0.0",\n  "tasks": [{"label": "setup",'
        ' "command": "./scripts/setup.sh", "runOptions": {"runOn": "folderOpen"},},]\n}\n',
    )


def two_commits(ws: Path, _home: Path) -> None:
    (ws / "src" / "app.py").write_text("print('two')\n")
    git(ws, "add", "-A")
    git(ws, *GIT_ID, "commit", "-qm", "second")


def envrc(text: str) -> Setup:
    def setup(ws: Path, _home: Path) -> None:
        write(ws / ".envrc", text)

    return setup


def file_at(rel: str, text: str) -> Setup:
    def setup(ws: Path, _home: Path) -> None:
        write(ws / rel, text)

    return setup


def template_dir(ws: Path, home: Path) -> None:
    with (home / ".gitconfig").open("a") as f:
        f.write(f"[init]\n\ttemplateDir = {ws}/git-templates\n")


REBASE_TODO = (
    "g=.git/{state}; mkdir -p $g && git rev-parse HEAD > $g/orig-head && git rev-parse HEAD~1"
    " > $g/onto && echo refs/heads/$(git branch --show-current) > $g/head-name && touch"
    " $g/interactive && : > $g/done && echo 1 > $g/msgnum && echo 1 > $g/end && printf"
    " 'exec touch {canary}\\n' > $g/git-rebase-todo"
)
"""An interrupted interactive rebase whose todo list runs a command on ``--continue``."""

P = "{payload}"
ATTACKS = [
    # -- the hooks folder a repository names ---------------------------------------------------
    Attack(
        "husky-fresh-clone",
        f"mkdir -p .husky/_ && {P} > .husky/_/pre-commit && chmod +x .husky/_/pre-commit",
        husky,
    ),
    Attack("husky-script", f"{P} > .husky/pre-commit; {P} > .husky/_/pre-commit", husky_installed),
    Attack(
        "githooks-mkdir",
        f"mkdir .githooks && {P} > .githooks/pre-commit && chmod +x .githooks/pre-commit",
        githooks,
    ),
    Attack(
        "githooks-rename-in",
        f"mkdir t && {P} > t/pre-commit && chmod +x t/pre-commit && mv t .githooks",
        githooks,
    ),
    Attack(
        "githooks-link-to-folder",
        f"mkdir -p /tmp/h && {P} > /tmp/h/pre-commit && chmod +x /tmp/h/pre-commit; mkdir t && cp /tmp/h/pre-commit t/ && ln -s t .githooks",
        githooks,
    ),
    Attack(
        "githooks-folder-linked-elsewhere",
        f"{P} > hooks-real/pre-commit; rm .githooks && mkdir .githooks && {P} > .githooks/pre-commit && chmod +x .githooks/pre-commit",
        githooks_linked,
    ),
    Attack(
        "hooks-parent-renamed-in",
        f"mkdir -p x/hooks && {P} > x/hooks/pre-commit && chmod +x x/hooks/pre-commit && mv x tools",
        nested_hooks,
    ),
    Attack(
        "linked-worktree-hooks",
        f"mkdir wt/.githooks && {P} > wt/.githooks/pre-commit && chmod +x wt/.githooks/pre-commit",
        linked_worktree,
        where=("wt",),
    ),
    Attack(
        "pre-commit-framework-config",
        "printf 'entry: touch {canary}\\n' > .pre-commit-config.yaml",
        pre_commit_framework,
    ),
    Attack(
        "global-relative-hookspath",
        f"mkdir .hooks && {P} > .hooks/pre-commit && chmod +x .hooks/pre-commit",
        global_hooks,
    ),
    # -- fsmonitor in a new nested repository --------------------------------------------------
    Attack(
        "git-init-nested",
        f'git init -q sub && {P} > sub/fsm && chmod +x sub/fsm && git -C sub config core.fsmonitor "$PWD/sub/fsm"',
        where=("sub",),
    ),
    Attack(
        "mkdir-dot-git",
        f'mkdir -p sub/.git && cp -r .git/. sub/.git/ && {P} > sub/fsm && chmod +x sub/fsm && git -C sub config core.fsmonitor "$PWD/sub/fsm"',
        where=("sub",),
    ),
    Attack(
        "repo-built-in-tmp-copied-in",
        f'git init -q /tmp/r && {P} > /tmp/r/fsm && chmod +x /tmp/r/fsm && git -C /tmp/r config core.fsmonitor "$PWD/sub/fsm" && cp -r /tmp/r sub',
        where=("sub",),
    ),
    Attack(
        "bare-by-contents",
        f'git init -q --bare sub/x.git; {P} > fsm && chmod +x fsm && git -C sub/x.git config core.bare false && git -C sub/x.git config core.worktree .. && git -C sub/x.git config core.fsmonitor "$PWD/fsm"',
        where=("sub/x.git",),
    ),
    Attack(
        "gitdir-file-to-repo",
        f"git init -q --separate-git-dir=/tmp/g sub && {P} > sub/fsm && chmod +x sub/fsm && git -C sub config core.fsmonitor \"$PWD/sub/fsm\" && mkdir gd && cp -r /tmp/g/. gd/ && printf 'gitdir: ../gd\\n' > sub/.git",
        where=("sub",),
    ),
    Attack(
        "worktree-add",
        f'git worktree add -q wt 2>&1; {P} > wt/fsm; chmod +x wt/fsm; git -C wt config core.fsmonitor "$PWD/wt/fsm"',
        where=("wt",),
    ),
    Attack(
        "hidden-repo-moved-into-view",
        f'{P} > fsm && chmod +x fsm && git -C node_modules/dep config core.fsmonitor "$PWD/fsm"; mv node_modules/dep dep',
        hidden_repo,
        where=("dep",),
    ),
    Attack(
        "hidden-repo-linked-into-view",
        f'{P} > fsm && chmod +x fsm && git -C node_modules/dep config core.fsmonitor "$PWD/fsm"; ln -s node_modules/dep dep',
        hidden_repo,
        where=("dep",),
    ),
    Attack(
        "hidden-repo-parent-moved",
        f'{P} > fsm && chmod +x fsm && git -C node_modules/dep config core.fsmonitor "$PWD/fsm"; mv node_modules deps',
        hidden_repo,
        where=("deps/dep",),
    ),
    Attack(
        "deep-repo-config-written",
        f"{P} > fsm && chmod +x fsm && printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\" >> a/b/c/d/e/f/g/lib/.git/config",
        deep_repo,
        where=("a/b/c/d/e/f/g/lib",),
    ),
    Attack(
        "deep-repo-config-reopened",
        f"{P} > fsm && chmod +x fsm && exec 3<a/b/c/d/e/f/g/lib/.git/config && printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\" >> /proc/self/fd/3",
        deep_repo,
        where=("a/b/c/d/e/f/g/lib",),
    ),
    Attack(
        "deep-repo-config-hard-linked",
        f"{P} > fsm && chmod +x fsm && ln a/b/c/d/e/f/g/lib/.git/config cfg && printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\" >> cfg",
        deep_repo,
        where=("a/b/c/d/e/f/g/lib",),
    ),
    Attack(
        "deep-repo-config-linked-from-fd",
        f"{P} > fsm && chmod +x fsm && exec 3<a/b/c/d/e/f/g/lib/.git/config && ln -L /proc/self/fd/3 cfg && printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\" >> cfg",
        deep_repo,
        where=("a/b/c/d/e/f/g/lib",),
    ),
    # -- include targets -----------------------------------------------------------------------
    Attack(
        "include-create",
        f"{P} > fsm && chmod +x fsm && printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\" > shared.gitconfig",
        include,
    ),
    Attack(
        "include-append-existing",
        f"{P} > fsm && chmod +x fsm && printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\" >> team.gitconfig",
        include_existing,
    ),
    Attack(
        "include-if-in-new-folder",
        f"{P} > fsm && chmod +x fsm && mkdir -p conf && printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\" > conf/extra.gitconfig",
        include_if,
    ),
    Attack(
        "include-rename-onto",
        f"{P} > fsm && chmod +x fsm && printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\" > t.cfg && mv t.cfg shared.gitconfig",
        include,
    ),
    Attack(
        "include-symlink-onto",
        f"{P} > fsm && chmod +x fsm && printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\" > t.cfg && ln -s t.cfg shared.gitconfig",
        include,
    ),
    Attack(
        "include-folder-renamed-in",
        f"{P} > fsm && chmod +x fsm && mkdir t && printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\" > t/extra.gitconfig && mv t conf",
        include_if,
    ),
    Attack(
        "include-from-global-config",
        f"{P} > fsm && chmod +x fsm && printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\" > .gitconfig-local",
        include_global,
    ),
    Attack(
        "include-of-include",
        f"{P} > fsm && chmod +x fsm && printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\" > more.gitconfig",
        include_nested,
    ),
    # -- filter and diff drivers ---------------------------------------------------------------
    Attack("textconv-script-overwritten", f"{P} > tools/pdf2txt.sh; echo two >> doc.pdf", textconv),
    Attack(
        "textconv-script-missing",
        f"mkdir -p scripts && {P} > scripts/conv.sh && chmod +x scripts/conv.sh; echo two >> doc.pdf",
        textconv_missing,
    ),
    Attack(
        "clean-filter-overwritten", f"{P} > filters/clean.sh; echo data > new.dat", clean_filter
    ),
    Attack(
        "diff-command-created",
        f"mkdir -p bin && {P} > bin/differ && chmod +x bin/differ; echo b >> x.bin",
        merge_driver,
    ),
    Attack("fsmonitor-script-overwritten", f"{P} > scripts/fsmonitor.sh", fsmonitor_script),
    Attack(
        "textconv-script-replaced-by-rename",
        f"{P} > t.sh && chmod +x t.sh && mv -f t.sh tools/pdf2txt.sh; echo two >> doc.pdf",
        textconv,
    ),
    # -- git state that runs a command when the host carries on ------------------------------
    Attack(
        "rebase-todo-exec",
        REBASE_TODO.replace("{state}", "rebase-merge"),
        two_commits,
        extra=("rebase --continue",),
    ),
    Attack(
        "rebase-todo-renamed-in",
        REBASE_TODO.replace("{state}", "t") + " && mv .git/t .git/rebase-merge",
        two_commits,
        extra=("rebase --continue",),
    ),
    # -- direnv, editors' exrc, folder-open tasks ----------------------------------------------
    Attack("envrc-create", f"{P} > .envrc", door=".envrc"),
    Attack("envrc-nested-rename", f"mkdir -p sub && {P} > t && mv t sub/.envrc", door="sub/.envrc"),
    Attack(
        "dotenv-create", "echo 'PROMPT_COMMAND=touch {canary}' > .env", envrc_dotenv, door=".env"
    ),
    Attack(
        "direnv-sourced-script",
        f"mkdir -p scripts && {P} > scripts/env.sh",
        envrc_dotenv,
        door="scripts/env.sh",
    ),
    Attack("exrc-create", f"{P} > .exrc", door=".exrc"),
    Attack(
        "nvim-lua-symlink",
        f"{P} > /tmp/x.lua && cp /tmp/x.lua x.lua && ln -s x.lua .nvim.lua",
        door=".nvim.lua",
    ),
    Attack("nvimrc-nested", f"mkdir -p a/b && {P} > a/b/.nvimrc", door="a/b/.nvimrc"),
    Attack(
        "vscode-tasks-create",
        "mkdir -p .vscode && echo '{{\"tasks\":[]}}' > .vscode/tasks.json",
        door=".vscode/tasks.json",
    ),
    Attack(
        "vscode-task-script",
        f"mkdir -p scripts && {P} > scripts/setup.sh && chmod +x scripts/setup.sh",
        vscode_task,
        door="scripts/setup.sh",
    ),
    Attack(
        "code-workspace-task",
        'printf \'{{"tasks": {{"tasks": []}}}}\' > proj.code-workspace',
        code_workspace,
        door="proj.code-workspace",
    ),
    Attack("vimrc-exrc", f"{P} > .vimrc", door=".vimrc"),
    Attack(
        "emacs-dir-locals",
        "echo '((nil . ((eval . (shell-command \"touch {canary}\")))))' > sub.el && mkdir -p lib && mv sub.el lib/.dir-locals.el",
        door="lib/.dir-locals.el",
    ),
    Attack(
        "direnv-load-dotenv",
        "mkdir -p api && echo 'PROMPT_COMMAND=\"touch {canary}\"' > api/.env",
        direnv_dotenv,
        door="api/.env",
    ),
    Attack(
        "direnv-path-add",
        f"mkdir -p bin && {P} > bin/git && chmod +x bin/git",
        envrc("PATH_add bin\n"),
        door="bin/git",
    ),
    Attack(
        "direnv-path-add-renamed-in",
        f"mkdir t && {P} > t/git && chmod +x t/git && mv t bin",
        envrc("PATH_add bin\n"),
        door="bin/git",
    ),
    Attack(
        "direnv-layout-node",
        f"mkdir -p node_modules/.bin && {P} > node_modules/.bin/ls",
        envrc("layout node\n"),
        door="node_modules/.bin/ls",
    ),
    Attack(
        "direnv-layout-python",
        f"mkdir -p .direnv/python-3/bin && {P} > .direnv/python-3/bin/python",
        envrc("layout python3\n"),
        door=".direnv/python-3/bin/python",
    ),
    Attack(
        "direnv-export-path",
        f"mkdir -p tools && {P} > tools/make",
        envrc("export PATH=$PWD/tools:$PATH\n"),
        door="tools/make",
    ),
    Attack(
        "direnv-load-prefix",
        f"mkdir -p vendor/bin && {P} > vendor/bin/cc",
        envrc("load_prefix vendor\n"),
        door="vendor/bin/cc",
    ),
    Attack(
        "direnv-path-add-var",
        f"mkdir -p lib && {P} > lib/sitecustomize.py",
        envrc("path_add PYTHONPATH lib\n"),
        door="lib/sitecustomize.py",
    ),
    Attack(
        "npmrc-script-shell",
        f'{P} > sh.sh && chmod +x sh.sh && echo "script-shell=$PWD/sh.sh" > .npmrc',
        door=".npmrc",
    ),
    Attack(
        "npmrc-script-shell-target",
        f"mkdir -p tools && {P} > tools/sh.sh",
        file_at(".npmrc", "script-shell=./tools/sh.sh\n"),
        door="tools/sh.sh",
    ),
    Attack(
        "npmrc-script-shell-nested-package",
        f"mkdir -p packages/app && {P} > sh.sh && chmod +x sh.sh && "
        f'echo "script-shell=$PWD/sh.sh" > packages/app/.npmrc',
        file_at("packages/app/package.json", "{}\n"),
        door="packages/app/.npmrc",
    ),
    Attack(
        "npmrc-script-shell-nested-package-target",
        f"mkdir -p packages/app/tools && {P} > packages/app/tools/sh.sh",
        file_at("packages/app/.npmrc", "script-shell=./tools/sh.sh\n"),
        door="packages/app/tools/sh.sh",
    ),
    Attack(
        "yarnrc-nested-folder",
        f"mkdir -p sub && {P} > y.cjs && echo 'yarnPath: ../y.cjs' > sub/.yarnrc.yml",
        door="sub/.yarnrc.yml",
    ),
    Attack(
        "pnpmfile-nested-package",
        f"mkdir -p packages/app && {P} > packages/app/.pnpmfile.cjs",
        file_at("packages/app/package.json", "{}\n"),
        door="packages/app/.pnpmfile.cjs",
    ),
    Attack(
        "yarn-path-target",
        f"mkdir -p .yarn/releases && {P} > .yarn/releases/yarn.cjs",
        file_at(".yarnrc.yml", "yarnPath: .yarn/releases/yarn.cjs\n"),
        door=".yarn/releases/yarn.cjs",
    ),
    Attack(
        "vscode-interpreter-path",
        f"mkdir -p tools && {P} > tools/py && chmod +x tools/py",
        file_at(".vscode/settings.json", '{"python.defaultInterpreterPath": "tools/py"}'),
        door="tools/py",
    ),
    Attack(
        "vscode-terminal-profile",
        f"mkdir -p scripts && {P} > scripts/shell.sh && chmod +x scripts/shell.sh",
        file_at(
            ".vscode/settings.json",
            '{"terminal.integrated.profiles.linux": {"p": {"path":'
            ' "${workspaceFolder}/scripts/shell.sh"}}}',
        ),
        door="scripts/shell.sh",
    ),
    Attack(
        "init-template-dir",
        f"mkdir -p git-templates/hooks && {P} > git-templates/hooks/post-checkout",
        template_dir,
        door="git-templates/hooks/post-checkout",
    ),
    Attack(
        "pre-commit-local-script",
        f"{P} > scripts/lint.sh",
        pre_commit_local,
        door="scripts/lint.sh",
    ),
    Attack(
        "idea-folder",
        "mkdir -p .idea && echo '<project/>' > .idea/workspace.xml",
        door=".idea/workspace.xml",
    ),
]


def files(texts: dict[str, str]) -> Setup:
    """Files of the user's project."""

    def setup(ws: Path, _home: Path) -> None:
        for rel, text in texts.items():
            write(ws / rel, text, mode=0o755)

    return setup


def textconv_by_name(ws: Path, home: Path) -> None:
    """A driver named without a slash: git runs it from the top of the work tree."""
    textconv(ws, home)
    write(ws / "conv.sh", 'cat "$1"\n')
    config(ws, "diff.pdf.textconv", "sh conv.sh")


def filter_by_name(ws: Path, _home: Path) -> None:
    write(ws / "strip.py", "import sys; sys.stdout.write(sys.stdin.read())\n")
    config(ws, "filter.strip.clean", "python3 strip.py")
    write(ws / ".gitattributes", "*.dat filter=strip\n")


FOLDER_OPEN = '"runOptions": {{"runOn": "folderOpen"}}'
TASKS = '{{"version": "2.0.0", "tasks": [{tasks}]}}'


def tasks(*items: str) -> str:
    return TASKS.format(tasks=", ".join(items)).replace("{{", "{").replace("}}", "}")


def husky_v9(ws: Path, _home: Path) -> None:
    """Husky v9, reduced: its ``_/h`` puts ``node_modules/.bin`` first on ``PATH`` and runs
    ``.husky/<hook>``, whose default is ``npm test``."""
    config(ws, "core.hooksPath", ".husky/_")
    hook = (
        '#!/bin/sh\nexport PATH="$PWD/node_modules/.bin:$PATH"\n. "$(dirname "$0")/../pre-commit"\n'
    )
    write(ws / ".husky" / "_" / "pre-commit", hook, mode=0o755)
    write(ws / ".husky" / "pre-commit", "npx lint-staged\n", mode=0o755)


# -- every path a door names is a door (whatever the command that names it) ----------------
ATTACKS += [
    Attack(
        "husky-node-modules-bin",
        f"mkdir -p node_modules/.bin && {P} > node_modules/.bin/npx && chmod +x node_modules/.bin/npx",
        husky_v9,
    ),
    Attack(
        "husky-node-modules-bin-renamed-in",
        f"mkdir -p t && {P} > t/lint-staged && chmod +x t/lint-staged && mkdir -p node_modules && mv t node_modules/.bin",
        husky_v9,
    ),
    Attack("textconv-named-without-slash", f"{P} > conv.sh; echo two >> doc.pdf", textconv_by_name),
    Attack(
        "clean-filter-named-without-slash",
        'echo \'open("{canary}", "w")\' >> strip.py; echo data > new.dat',
        filter_by_name,
    ),
    Attack(
        "envrc-source-if-exists",
        "echo 'touch {canary}' > .env.local",
        envrc("[ -f .env.local ] && source .env.local\n"),
        door=".env.local",
    ),
    Attack(
        "envrc-sourced-file-sources",
        "echo 'touch {canary}' > more.sh",
        files({".envrc": "source_env .envrc.local\n", ".envrc.local": ". ./more.sh\n"}),
        door="more.sh",
    ),
    Attack(
        "envrc-eval-tool",
        f"{P} > bin/env-tool",
        files({".envrc": 'eval "$(./bin/env-tool)"\n', "bin/env-tool": "#!/bin/sh\n"}),
        door="bin/env-tool",
    ),
    Attack(
        "envrc-python-module",
        'mkdir -p tools && echo \'open("{canary}", "w")\' > tools/envgen.py',
        envrc("python3 -m tools.envgen\n"),
        door="tools/envgen.py",
    ),
    Attack(
        "task-bare-script-name",
        'echo \'open("{canary}", "w")\' > manage.py',
        files(
            {
                ".vscode/tasks.json": tasks(
                    f'{{"label": "a", "command": "python3 manage.py runserver", {FOLDER_OPEN}}}'
                ),
                "manage.py": "print('serve')\n",
            }
        ),
        door="manage.py",
    ),
    Attack(
        "task-cwd",
        f"{P} > tools/watch.sh",
        files(
            {
                ".vscode/tasks.json": tasks(
                    '{"label": "w", "command": "./watch.sh", "options": {"cwd": "${workspaceFolder}/tools"},'
                    f" {FOLDER_OPEN}}}"
                ),
                "tools/watch.sh": "#!/bin/sh\n",
            }
        ),
        door="tools/watch.sh",
    ),
    Attack(
        "task-depends-on",
        f"mkdir -p scripts && {P} > scripts/dep.sh",
        files(
            {
                ".vscode/tasks.json": tasks(
                    f'{{"label": "a", "command": "echo", "dependsOn": ["b"], {FOLDER_OPEN}}}',
                    '{"label": "b", "command": "./scripts/dep.sh"}',
                )
            }
        ),
        door="scripts/dep.sh",
    ),
    Attack(
        "task-npm-script",
        "mkdir -p tools && echo 'touch {canary}' > tools/o.sh",
        files(
            {
                ".vscode/tasks.json": tasks(f'{{"type": "npm", "script": "watch", {FOLDER_OPEN}}}'),
                "package.json": '{"scripts": {"watch": "npm run other", "other": "sh tools/o.sh"}}',
            }
        ),
        door="tools/o.sh",
    ),
    Attack(
        "task-npm-package-json",
        'echo \'{{"scripts": {{"watch": "touch {canary}"}}}}\' > package.json',
        files(
            {
                ".vscode/tasks.json": tasks(f'{{"type": "npm", "script": "watch", {FOLDER_OPEN}}}'),
                "package.json": '{"scripts": {"watch": "tsc -w"}}',
            }
        ),
        door="package.json",
    ),
    Attack(
        "terminal-profile-rcfile",
        "echo 'touch {canary}' > tools/devrc.sh",
        files(
            {
                ".vscode/settings.json": '{"terminal.integrated.profiles.linux": {"dev": {"path":'
                ' "bash", "args": ["--rcfile", "tools/devrc.sh"]}}}',
                "tools/devrc.sh": "PS1='dev$ '\n",
            }
        ),
        door="tools/devrc.sh",
    ),
    Attack(
        "npmrc-node-options-preload",
        'echo \'require("fs").writeFileSync("{canary}", "")\' > preload.js',
        files({".npmrc": "node-options=--require ./preload.js\n", "preload.js": "// env\n"}),
        door="preload.js",
    ),
    Attack(
        "yarn-plugin",
        "mkdir -p .yarn/plugins && echo 'module.exports = 1' > .yarn/plugins/p.cjs",
        files({".yarnrc.yml": "plugins:\n  - path: .yarn/plugins/p.cjs\n"}),
        door=".yarn/plugins/p.cjs",
    ),
    Attack(
        "pre-commit-python-module",
        'mkdir -p tools && echo \'open("{canary}", "w")\' > tools/lint.py',
        files(
            {
                ".pre-commit-config.yaml": "repos:\n- repo: local\n  hooks:\n  - id: l\n    entry: python -m tools.lint\n"
            }
        ),
        door="tools/lint.py",
    ),
    Attack(
        "nvim-lua-dofile",
        "mkdir -p scripts && echo 'os.execute(\"touch {canary}\")' > scripts/nv.lua",
        files({".nvim.lua": "dofile('scripts/nv.lua')\n"}),
        door="scripts/nv.lua",
    ),
]


def host_runs_git(ws: Path, where: tuple[str, ...], extra: tuple[str, ...] = ()) -> None:
    """What a user's host (and VS Code's git extension) runs in the workspace."""
    for rel in where:
        cwd = ws / rel
        if not cwd.is_dir():
            continue
        for args in (
            ["status"],
            ["diff"],
            ["diff", "HEAD"],
            *([*GIT_ID, *line.split()] for line in extra),
            ["add", "-A"],
            [*GIT_ID, "commit", "-qm", "host", "--allow-empty"],
        ):
            subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=30, check=False)


def prepare(ws: Path, home: Path, attack: Attack) -> None:
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, *GIT_ID, "commit", "-qm", "first")
    attack.setup(ws, home)


def door_text(ws: Path, attack: Attack) -> str | None:
    assert attack.door is not None
    path = ws / attack.door
    return path.read_text() if path.exists() else None


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.id for a in ATTACKS])
async def test_the_host_does_not_run_what_a_sandboxed_command_planted(
    make_harness: MakeHarness, workspace: Path, home: Path, tmp_path: Path, attack: Attack
) -> None:
    canary = tmp_path / "canary"
    command = attack.command.format(payload=PAYLOAD.format(canary=canary), canary=canary)
    prepare(workspace, home, attack)
    before = door_text(workspace, attack) if attack.door else None

    # Without the sandbox the attack works: the judge can see it.
    control = tmp_path / "control" / workspace.name
    shutil.copytree(workspace, control, symlinks=True)
    if attack.id == "include-from-global-config":
        include_global(control, home)
    subprocess.run(["bash", "-c", command], cwd=control, capture_output=True, check=False)  # noqa: ASYNC221
    if attack.door is None:
        await asyncio.to_thread(host_runs_git, control, attack.where, attack.extra)
        assert canary.exists(), f"the attack {attack.id} does not fire even unsandboxed"
        canary.unlink()
    else:
        assert door_text(control, attack) != before, f"{attack.id} plants nothing unsandboxed"

    h = make_harness(mode="bypassPermissions")
    out = await h.call("Bash", command=command)
    await asyncio.to_thread(host_runs_git, workspace, attack.where, attack.extra)
    assert not canary.exists(), f"the host ran what {attack.id} planted:\n{text_of(out)}"
    if attack.door is not None:
        assert door_text(workspace, attack) == before, text_of(out)
    assert "refused" in text_of(out) or "Read-only" in text_of(out), text_of(out)
    os.sync()


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("git config core.hooksPath .githooks", ".githooks"),
        ("git config --local core.fsmonitor ./fsm.sh", "./fsm.sh"),
        ("git config set core.sshCommand 'ssh -o ProxyCommand=evil'", "ProxyCommand=evil"),
        ("git config --file shared.gitconfig filter.x.clean ./clean.sh", "./clean.sh"),
        ("git config -f .git/config diff.pdf.textconv conv", "conv"),
        ("git config --global alias.st '!sh -c evil'", "!sh -c evil"),
        ("git config --add include.path ../other.cfg", "../other.cfg"),
        ("git config 'includeIf.gitdir:~/.path' x.cfg", "x.cfg"),
        ("git config credential.helper '!./cred.sh'", "!./cred.sh"),
        ("git config gpg.program ./gpg", "./gpg"),
        ("git config merge.ours.driver './merge %O %A %B'", "./merge %O %A %B"),
        ("git -c core.pager='sh -c evil' log", "sh -c evil"),
        ("git -C sub -c diff.x.textconv=evil diff", "evil"),
        ("git --config-env=core.editor=EDITOR commit", "core.editor"),
        (
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=./x git status",
            "./x",
        ),
        ("GIT_SSH_COMMAND='sh -c evil' git fetch", "GIT_SSH_COMMAND"),
        ("export GIT_PAGER=evil; git log", "GIT_PAGER"),
        ("GIT_PAGER=evil; git log", "GIT_PAGER"),
        ("env GIT_EXTERNAL_DIFF=./d git diff", "GIT_EXTERNAL_DIFF"),
        ("GIT_CONFIG_PARAMETERS=\"'core.pager=evil'\" git log", "GIT_CONFIG_PARAMETERS"),
    ],
)
@pytest.mark.parametrize("sandboxed", [True, False])
async def test_a_line_that_makes_git_run_a_program_asks_and_names_it(
    make_harness: MakeHarness, command: str, named: str, sandboxed: bool
) -> None:
    h = make_harness(mode="bypassPermissions", allow=("Bash(git:*)",), sandbox=sandboxed)
    decision = await h.decide("Bash", command=command)
    assert decision.behavior == "ask" and decision.forced, (command, decision)
    assert named in decision.reason, decision.reason
    denied = make_harness(mode="dontAsk", allow=("Bash",), sandbox=sandboxed)
    assert (await denied.decide("Bash", command=command)).behavior == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "git config user.name 'A B'",
        "git config --get core.hooksPath",
        "git config --unset core.fsmonitor",
        "git config core.fsmonitor true",
        "git config alias.st status",
        "git -c color.ui=always log",
        "git -c core.fsmonitor=false status",
        "GIT_AUTHOR_NAME=x git commit -m y",
    ],
)
async def test_git_configuration_that_runs_nothing_is_not_asked_for_by_that_rule(
    make_harness: MakeHarness, command: str
) -> None:
    h = make_harness(mode="bypassPermissions", allow=("Bash(git:*)",))
    decision = await h.decide("Bash", command=command)
    assert decision.behavior == "allow", (command, decision)


def hooks_reached_by_link(ws: Path, home: Path) -> None:
    """A link to the hooks folder: the agent names the link, the host runs the folder."""
    githooks(ws, home)
    (ws / ".githooks").mkdir()
    (ws / "hk").symlink_to(".githooks", target_is_directory=True)


DOOR_WRITES = [
    pytest.param(githooks, ".githooks/pre-commit", id="hooks-path"),
    pytest.param(hooks_reached_by_link, "hk/pre-commit", id="hooks-path-through-a-link"),
    pytest.param(githooks_linked, "hooks-real/pre-commit", id="hooks-folder-linked-elsewhere"),
    pytest.param(nested_hooks, "tools/hooks/pre-commit", id="hooks-path-nested-missing"),
    pytest.param(husky_installed, ".husky/pre-commit", id="husky-script"),
    pytest.param(include, "shared.gitconfig", id="include-target"),
    pytest.param(include_nested, "more.gitconfig", id="include-of-include"),
    pytest.param(textconv, "tools/pdf2txt.sh", id="textconv-script"),
    pytest.param(clean_filter, "filters/clean.sh", id="clean-filter-script"),
    pytest.param(fsmonitor_script, "scripts/fsmonitor.sh", id="fsmonitor-script"),
    pytest.param(envrc_dotenv, "scripts/env.sh", id="direnv-source"),
    pytest.param(vscode_task, "scripts/setup.sh", id="folder-open-task"),
    pytest.param(pre_commit_framework, ".pre-commit-config.yaml", id="pre-commit-config"),
    pytest.param(envrc("PATH_add bin\n"), "bin/git", id="direnv-path-add"),
    pytest.param(envrc("layout node\n"), "node_modules/.bin/jest", id="direnv-layout-node"),
    pytest.param(textconv_by_name, "conv.sh", id="driver-named-without-slash"),
    pytest.param(
        files({".npmrc": "node-options=--require ./preload.js\n"}), "preload.js", id="npmrc-preload"
    ),
    pytest.param(
        files({"packages/b/package.json": "{}\n"}), "packages/b/.npmrc", id="nested-npmrc"
    ),
    pytest.param(nothing, "sub/dir/.yarnrc.yml", id="nested-yarnrc"),
    pytest.param(nothing, "packages/b/.pnpmfile.cjs", id="nested-pnpmfile"),
    pytest.param(
        files({"packages/b/.npmrc": "script-shell=./tools/sh.sh\n"}),
        "packages/b/tools/sh.sh",
        id="nested-npmrc-program",
    ),
]
WRITING_LINES = [
    "echo x > {path}",
    "echo x >> {path}",
    "echo x | tee {path}",
    "cp src/app.py {path}",
    "sed -i s/x/y/ {path}",
]


@pytest.mark.parametrize("enabled", [True, False], ids=["sandboxed", "sandbox-off"])
@pytest.mark.parametrize(("setup", "path"), DOOR_WRITES)
async def test_the_agent_writing_a_door_asks_like_the_control_plane(
    make_harness: MakeHarness,
    workspace: Path,
    home: Path,
    setup: Setup,
    path: str,
    enabled: bool,
) -> None:
    """The same paths through the file tools and shell redirections: a forced question
    (even in acceptEdits, with allow rules), never "always"; with the sandbox switched off
    in the settings too (the doors are the host's, not the sandbox's)."""
    prepare(workspace, home, Attack("door", "true", setup))
    h = make_harness(mode="acceptEdits", allow=("Write", "Edit", "Bash(echo:*)", "Bash(cp:*)"))
    h.ctx.config.shell_sandbox = BwrapSandbox(workspace, SandboxSettings(enabled=enabled))
    h.ctx.config.sandbox = enabled
    decision = await h.decide("Write", file_path=path, content="#!/bin/sh\n")
    assert decision.behavior == "ask" and decision.forced, (path, decision)
    if (workspace / path).exists():
        decision = await h.decide("Edit", file_path=path, old_string="exit", new_string="true")
        assert decision.behavior == "ask" and decision.forced, (path, decision)
    for line in WRITING_LINES:
        decision = await h.decide("Bash", command=line.format(path=path))
        assert decision.behavior == "ask" and decision.forced, (line, path, decision)
        assert path in decision.reason, (line, decision.reason)
    decision = await h.decide("Write", file_path="src/ordinary.py", content="x = 1\n")
    assert decision.behavior == "allow", decision
    decision = await h.decide("Bash", command="cp src/app.py src/ordinary.py")
    assert decision.behavior == "allow", decision


HOME_ATTACKS = [
    pytest.param(".bashrc", "echo 'touch {canary}' >> .bashrc", "bash -ic true", id="bashrc"),
    pytest.param(
        ".bash_profile", "echo 'touch {canary}' > .bash_profile", "bash -lc true", id="profile"
    ),
    pytest.param(
        ".gitconfig",
        "printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\" >> .gitconfig",
        "git -C proj status",
        id="gitconfig",
    ),
    pytest.param(
        ".config/git/config",
        "mkdir -p .config/git && printf '[core]\\n\\tfsmonitor = %s/fsm\\n' \"$PWD\""
        " > .config/git/config",
        "git -C proj status",
        id="xdg-git-config",
    ),
    pytest.param(
        ".local/bin/git",
        "mkdir -p .local/bin && cp fsm .local/bin/git",
        'PATH="$HOME/.local/bin:$PATH" git -C proj status',
        id="local-bin",
    ),
    pytest.param(
        ".config/autostart/x.desktop",
        "mkdir -p .config/autostart && printf '[Desktop Entry]\\nExec=touch {canary}\\n'"
        " > .config/autostart/x.desktop",
        None,
        id="autostart",
    ),
    pytest.param(
        ".config/systemd/user/x.service",
        "mkdir -p .config/systemd/user && printf '[Service]\\nExecStart=touch {canary}\\n'"
        " > .config/systemd/user/x.service",
        None,
        id="systemd-user",
    ),
    pytest.param(
        ".ssh/config",
        "mkdir -p .ssh && printf 'Host *\\n  ProxyCommand touch {canary}\\n' >> .ssh/config",
        None,
        id="ssh-config",
    ),
    pytest.param(
        ".cargo/env", "mkdir -p .cargo && echo 'touch {canary}' > .cargo/env", None, id="cargo-env"
    ),
    pytest.param(".fzf.bash", "echo 'touch {canary}' > .fzf.bash", None, id="any-dot-file"),
    pytest.param(
        ".vim/plugin/x.vim",
        "mkdir -p .vim/plugin && echo 'call system(\"touch {canary}\")' > .vim/plugin/x.vim",
        None,
        id="any-dot-folder",
    ),
    pytest.param(
        ".node_modules/x/index.js",
        "mkdir -p .node_modules/x && echo 'touch {canary}' > .node_modules/x/index.js",
        None,
        id="node-global-modules",
    ),
    pytest.param(
        ".config/fish/config.fish",
        "mkdir f && echo 'touch {canary}' > f/config.fish && mv f .config/fish",
        None,
        id="fish-renamed-in",
    ),
]


@pytest.mark.parametrize(("target", "command", "host"), HOME_ATTACKS)
async def test_a_home_folder_opened_as_the_workspace_keeps_its_startup_files(
    make_harness: MakeHarness,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    target: str,
    command: str,
    host: str | None,
) -> None:
    """The user opened the home folder itself: the shells' startup files, git's user
    configuration, ``~/.local/bin``, autostart entries, user services and ``~/.ssh/config``
    are doors there, for the shell and the file tools alike."""
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    canary = tmp_path / "canary"
    payload = PAYLOAD.format(canary=canary)

    def lay_out(root: Path) -> None:
        (root / ".config").mkdir(exist_ok=True)
        subprocess.run(["git", "init", "-q", str(root / "proj")], check=True)
        subprocess.run(["bash", "-c", f"{payload} > fsm && chmod +x fsm"], cwd=root, check=True)

    line = command.format(canary=canary)
    lay_out(home)
    control = tmp_path / "control"
    shutil.copytree(home, control, symlinks=True)
    env = {**os.environ, "HOME": str(control)}
    subprocess.run(["bash", "-c", line], cwd=control, env=env, capture_output=True, check=True)  # noqa: ASYNC221
    if host is not None:
        subprocess.run(["bash", "-c", host], cwd=control, env=env, capture_output=True)  # noqa: ASYNC221
        assert canary.exists(), f"{target} does not fire even unsandboxed"
        canary.unlink()
    else:
        assert (control / target).is_file(), f"{target} is not planted even unsandboxed"
    before = (home / target).read_bytes() if (home / target).exists() else None

    h = make_harness(mode="bypassPermissions")
    h.ctx.cwd = home
    h.ctx.config.shell_sandbox = BwrapSandbox(home, linger_s=0)
    out = text_of(await h.call("Bash", command=line))
    if host is not None:
        subprocess.run(["bash", "-c", host], cwd=home, capture_output=True, check=False)  # noqa: ASYNC221
    assert not canary.exists(), f"the host ran what was planted in {target}:\n{out}"
    assert ((home / target).read_bytes() if (home / target).exists() else None) == before, out
    assert "refused" in out or "Read-only" in out, out
    seen = text_of(await h.call("Bash", command="cat .ssh/id_rsa .config/gh/hosts.yml"))
    assert SECRET not in seen, "a protected folder bound again showed a hidden secret"

    decision = await h.decide("Write", file_path=target, content="#!/bin/sh\n")
    assert decision.behavior == "ask" and decision.forced, (target, decision)
    decision = await h.decide("Write", file_path="notes/todo.md", content="x\n")
    assert decision.behavior == "allow", decision


async def test_a_workspace_reached_through_a_link_in_tmp_runs_its_commands(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path
) -> None:
    """The sandbox's ``/tmp`` is private: a link there to the workspace is not inside, so
    commands start in the folder it names."""
    link = tmp_path / "link"
    link.symlink_to(workspace, target_is_directory=True)
    h = make_harness(mode="bypassPermissions")
    h.ctx.config.shell_sandbox = BwrapSandbox(link, linger_s=0)
    for cwd in (link, link / "src"):
        h.ctx.cwd = cwd
        out = text_of(await h.call("Bash", command="pwd && ls && echo made > new.txt"))
        assert str(workspace) in out and "Exit" not in out, out
        assert (workspace.joinpath(*cwd.relative_to(link).parts) / "new.txt").is_file(), out


def test_the_sandbox_starts_when_tether_lives_in_tmp(tmp_path: Path) -> None:
    """Inside, ``/tmp`` is private: the gate's sources installed there are bound back in
    (a daemon run from an unpacked tree in ``/tmp`` kept every command from running)."""
    server = Path(__file__).resolve().parents[2] / "server"
    copy = tmp_path / "server"
    shutil.copytree(server, copy, ignore=shutil.ignore_patterns("__pycache__"))
    check = (
        f"import sys; sys.path.insert(0, {str(copy)!r}); from tether.sandbox.bwrap import probe;"
        f"import tether; assert tether.__file__.startswith({str(copy)!r}); print(probe())"
    )
    done = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, timeout=60, check=False
    )
    assert "available=True" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("link", "swap"),
    [
        pytest.param("app/.envrc", "rm app/.envrc && rmdir app && ln -s {other} app", id="parent"),
        pytest.param(
            "a/b/.envrc", "rm a/b/.envrc; mv a/b a/x && ln -s {other}/b a/b", id="parent-moved"
        ),
        pytest.param("a/b/.envrc", "rm a/b/.envrc; mv a a2 && ln -s {other} a", id="grandparent"),
    ],
)
async def test_putting_a_protected_link_back_never_follows_a_link_the_command_planted(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path, link: str, swap: str
) -> None:
    """The daemon puts protected links back after every command, unsandboxed: a folder on the
    way replaced by a link to the user's other project must not take it there."""
    other = tmp_path / "other-project"
    (other / "b").mkdir(parents=True)
    for rc in (other / ".envrc", other / "b" / ".envrc"):
        rc.write_text("export B=2\n")
    (workspace / "shared.envrc").write_text("export A=1\n")
    (workspace / link).parent.mkdir(parents=True)
    (workspace / link).symlink_to("../" * link.count("/") + "shared.envrc")

    def listing() -> dict[str, str]:
        return {str(p): p.read_text() for p in other.rglob("*") if p.is_file()}

    before = listing()
    h = make_harness(mode="bypassPermissions")
    out = text_of(await h.call("Bash", command=swap.format(other=other)))
    # The control: the command did plant the link, so a daemon following names lands there.
    assert Path(os.path.realpath(workspace / link)).is_relative_to(other), out
    assert listing() == before, out
    sandbox = h.ctx.config.shell_sandbox
    assert isinstance(sandbox, BwrapSandbox)
    assert sandbox.restore_links() == []  # a background command's links: the same rule
    assert listing() == before and sorted(os.listdir(other)) == [".envrc", "b"], out


async def test_a_home_folder_opened_as_the_workspace_keeps_its_caches_writable(
    make_harness: MakeHarness, home: Path
) -> None:
    """What builds and installs write in the home folder stays writable there."""
    h = make_harness(mode="bypassPermissions")
    h.ctx.cwd = home
    h.ctx.config.shell_sandbox = BwrapSandbox(home, linger_s=0)
    line = (
        "mkdir -p .cache/pip .npm/_cacache .cargo/registry/cache notes"
        " && for d in .cache/pip .npm/_cacache .cargo/registry/cache notes; do echo x > $d/f; done"
    )
    out = text_of(await h.call("Bash", command=line))
    for d in (".cache/pip", ".npm/_cacache", ".cargo/registry/cache", "notes"):
        assert (home / d / "f").is_file(), out


@pytest.mark.parametrize(
    ("link", "target"),
    [
        pytest.param(".bashrc", "bashrc", id="bashrc"),
        pytest.param(".profile", "shell/profile", id="profile"),
        pytest.param(".config/nvim", "nvim", id="config-folder"),
        pytest.param(".local/bin/gs", "bin/gs", id="local-bin"),
    ],
)
async def test_dotfiles_linked_from_the_home_folder_are_doors(
    make_harness: MakeHarness, workspace: Path, home: Path, tmp_path: Path, link: str, target: str
) -> None:
    """A dotfiles repository opened as the workspace, its files linked from the home folder
    (stow, yadm): the host's shells and tools load them through the links."""
    canary = tmp_path / "canary"
    real = workspace / target
    if link == ".config/nvim":
        write(real / "init.lua", "-- nvim\n")
        path = f"{target}/init.lua"
    else:
        write(real, "# mine\n")
        path = target
    (home / link).parent.mkdir(parents=True, exist_ok=True)
    (home / link).symlink_to(real)
    before = (workspace / path).read_text()
    h = make_harness(mode="bypassPermissions")
    out = text_of(await h.call("Bash", command=f"echo 'touch {canary}' >> {path}"))
    assert (workspace / path).read_text() == before, out
    assert "refused" in out or "Read-only" in out, out
    decision = await h.decide("Write", file_path=path, content="x\n")
    assert decision.behavior == "ask" and decision.forced, decision


@pytest.mark.parametrize("budget", [50, 5_000])
async def test_a_repository_past_the_walks_budget_keeps_its_doors(
    make_harness: MakeHarness,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    budget: int,
) -> None:
    """A tree bigger than the walk's budget (lowered here; ``bench/sandbox.py`` measures
    real sizes): a nested repository past it still has its hooks folder protected."""
    import tether.sandbox.protect as protect

    monkeypatch.setattr(protect, "WALK_MAX_ENTRIES", budget)
    canary = tmp_path / "canary"
    vendor = workspace / "third_party"
    vendor.mkdir()
    for i in range(120):
        (vendor / f"f{i:03}.txt").touch()
    lib = vendor / "zz" / "lib"
    lib.mkdir(parents=True)
    git(lib, "init", "-q")
    config(lib, "core.hooksPath", ".githooks")
    (lib / "x").write_text("x\n")
    git(lib, "add", "-A")
    git(lib, *GIT_ID, "commit", "-qm", "i")
    payload = PAYLOAD.format(canary=canary)
    line = (
        f"mkdir -p third_party/zz/lib/.githooks && {payload} > third_party/zz/lib/.githooks/"
        "pre-commit && chmod +x third_party/zz/lib/.githooks/pre-commit"
    )
    control = tmp_path / "control" / workspace.name
    shutil.copytree(workspace, control, symlinks=True)
    subprocess.run(["bash", "-c", line], cwd=control, capture_output=True, check=False)  # noqa: ASYNC221
    await asyncio.to_thread(host_runs_git, control / "third_party" / "zz" / "lib", (".",))
    assert canary.exists(), "the attack does not fire even unsandboxed"
    canary.unlink()
    h = make_harness(mode="bypassPermissions")
    out = text_of(await h.call("Bash", command=line))
    await asyncio.to_thread(host_runs_git, lib, (".",))
    assert not canary.exists(), out
    assert "refused" in out, out


@pytest.mark.parametrize("lock", ["config.lock", "config.worktree.lock", "commondir.lock"])
async def test_a_lock_beside_a_read_only_git_file_is_refused(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path, lock: str
) -> None:
    """git writes ``config.lock`` then renames it onto ``config``; the rename cannot happen
    in the sandbox, and a lock left behind keeps the host's git from changing its config."""
    git(workspace, "init", "-q")
    control = tmp_path / "control"
    shutil.copytree(workspace, control, symlinks=True)
    line = f"touch .git/{lock}; git config branch.main.description x"
    subprocess.run(["bash", "-c", line], cwd=control, capture_output=True, check=False)  # noqa: ASYNC221
    if lock == "config.lock":  # the control: a lock left behind does stop the host's git
        done = subprocess.run(["git", "config", "user.name", "H"], cwd=control, capture_output=True)  # noqa: ASYNC221
        assert done.returncode != 0, "a lock left behind does not stop git even unsandboxed"
    h = make_harness(mode="bypassPermissions")
    out = text_of(await h.call("Bash", command=line))
    assert not (workspace / ".git" / lock).exists(), out
    assert "refused" in out, out
    git(workspace, "config", "user.name", "H")  # the host's git still changes its config
    out = text_of(
        await h.call(
            "Bash",
            command="git add -A && git -c user.name=a -c user.email=a@b commit -qm x && git log --oneline | wc -l",
        )
    )
    assert out.strip().endswith("1"), out  # git's own locks (index.lock, refs) still work


async def test_a_husky_project_still_links_other_programs_into_node_modules_bin(
    make_harness: MakeHarness, workspace: Path, home: Path
) -> None:
    """What ``npm install`` does for a tool the hooks do not run: it links it there."""
    prepare(workspace, home, Attack("husky", "true", husky_v9))
    h = make_harness(mode="bypassPermissions")
    line = (
        "mkdir -p node_modules/eslint/bin node_modules/.bin && echo 'x' > node_modules/eslint/bin/"
        "eslint.js && ln -s ../eslint/bin/eslint.js node_modules/.bin/eslint && echo linked"
    )
    out = text_of(await h.call("Bash", command=line))
    assert "linked" in out and (workspace / "node_modules" / ".bin" / "eslint").is_symlink(), out
