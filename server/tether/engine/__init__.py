"""The agent engine: one QueryEngine per conversation, a turn loop with typed transitions."""
