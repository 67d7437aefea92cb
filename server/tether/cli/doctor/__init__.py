"""``tether doctor``: what works here and what does not, each with its cause and its fix.

One module per area (``sandbox``, ``model``, ``daemon``, ``workspace``, ``clients``), each
returning typed ``Finding``s from the probes the rest of Tether uses (bubblewrap's
``probe``, the model resolution, the daemon's paths); ``report`` renders them once, as text
or JSON. The exit code is 1 when something a user needs is broken (a ``fail``).
"""
