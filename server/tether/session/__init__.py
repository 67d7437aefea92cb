"""The session core: one conversation and the operations every front door offers on it."""
