"""Wire-level types shared by every front door (shapes from PROTOCOL.md, camelCase on the wire)."""
