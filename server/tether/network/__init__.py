"""The sandbox's way out: a filtering proxy the daemon runs for each sandboxed command
(``proxy.py``), deciding by host and port (``hosts.py``)."""
