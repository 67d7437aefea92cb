"""Fetching web pages for WebFetch: URL rules, redirects, caps, HTML to Markdown, a cache.

Runs in the daemon's own process with httpx, not in the shell sandbox: WebFetch is governed
by its own per-domain permission, not by the sandbox's network policy.
"""
