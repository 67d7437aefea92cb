"""The scripted editor: an LSP client that drives the daemon over stdio the way VS Code or
Neovim would (buffers, versioned edits, permission dialogs). It fakes the far side of the
LSP front door, so it lives beside it; ``tether.testing`` holds the fakes of the services
below (model APIs, the web)."""
