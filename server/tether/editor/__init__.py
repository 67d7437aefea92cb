"""The Editor port: how the engine reads documents, applies edits and asks the user."""
