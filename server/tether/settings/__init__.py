"""Settings: one typed, fully defaulted tree merged from user, project, local and CLI."""
