"""The gate: a seccomp user-notification supervisor that keeps sandboxed commands from
bringing control-plane paths into existence (see ``main.py``). Standard library only: it
runs inside the sandbox as ``python -I -S``, imported as the top-level package ``gate``."""
