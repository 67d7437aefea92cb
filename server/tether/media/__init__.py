"""Images and PDFs made fit for a model API (size limits, page ranges, text fallbacks).

Pure functions over bytes, below tools and providers: the Read tool shrinks what it sends,
providers without document support turn a PDF into its text.
"""
