"""Context engineering: project instructions and memory, attachments, token accounting and
the compaction ladder."""
