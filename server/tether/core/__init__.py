"""The bottom layer: message, content-block and hook types that providers, tools, the
transcript and the engine all share. Nothing here imports another part of Tether except
``tether.protocol`` (wire value types) and ``tether.errors``."""
