"""The ``tether`` command: serve, run, demo, sessions."""
