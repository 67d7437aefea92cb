"""The gate: a seccomp user-notification supervisor that keeps sandboxed commands from
bringing control-plane paths into existence (``main.py`` starts it, ``bpf.py`` is the filter,
``serve.py`` answers, ``policy.py`` decides). Standard library only: it runs inside the
sandbox as ``python -I -S``, imported as the top-level package ``gate``.

Why this mechanism (each point checked on Linux 6.18 with bubblewrap 0.8):

- A mount protects only what exists. Whatever bubblewrap mounts on a missing name, it first
  creates on the host (an empty file or directory in the user's tree, for as long as the
  mount point is needed) — the stand-ins this replaces, which showed up in editors, in
  ``git status`` and in the agent's own commits.
- Landlock grants rights per directory hierarchy; it cannot say "create anything here
  except ``.git`` and ``.vscode``", nor follow a name through a rename.
- Undoing what a command created after it ends leaves a window, and the host's own tools
  (an editor's git extension) run in it.
- A seccomp filter sees registers, not the path behind a pointer; with user notification a
  supervisor reads the path, but if it then let the call go on the kernel would read the
  path again (a second thread can swap it in between: ``tests/security/test_gate.py``
  wins that race in seconds without the gate). So the gate performs every creating call
  itself on the directory it resolved and decided on, and only those calls leave the
  kernel: reads and writes of existing files cost nothing.

Its cost (``bench/sandbox.py``): a Python interpreter per command, started ahead with the
prepared sandbox, and a round trip to the supervisor per directory entry created.
"""
