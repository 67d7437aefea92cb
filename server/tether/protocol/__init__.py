"""Wire-level types shared by every front door (docs/protocol.md; camelCase on the wire)."""
