"""The editor face: Cadenza's agent sessions behind an LSP-framed JSON-RPC server (pygls).

The only package of the server (with ``cadenza.client``) that imports pygls and lsprotocol.
"""
