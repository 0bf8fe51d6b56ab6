"""Language servers Cadenza starts itself (headless, ACP, editors that offer none), over LSP."""
