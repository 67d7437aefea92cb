"""Model providers behind one interface: anthropic, openai (compatible), scripted."""
