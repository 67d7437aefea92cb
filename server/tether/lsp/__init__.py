"""The LSP front door: ``tether serve`` (pygls), to the contract in docs/protocol.md."""
