"""The warm daemon: one Tether process per user, on a Unix socket only that user can use,
serving the same JSON-RPC contract as ``tether serve`` to every client at once (editors
through ``tether serve --connect``, the terminal through ``tether run``/``attach``).

Clients import only ``tether.daemon.client`` and ``tether.daemon.paths`` (the standard
library): a call from the terminal pays Python's start-up, not Tether's.
"""
