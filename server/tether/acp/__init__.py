"""The Agent Client Protocol front door (``tether acp``): Zed, JetBrains, Emacs, CodeCompanion."""
