"""Append-only JSONL transcripts: one file per session, records chained by parentUuid."""
