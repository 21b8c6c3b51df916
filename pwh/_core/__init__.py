"""The reference dispatcher: what the RFC specifies, and nothing that judges it.

Canonical form and identities, the contracts and schemas, the registry and profile, the boundary
scanner, the provider runners, the journals and the dispatcher itself. This layer imports no
other part of pwh (tests/test_architecture.py holds it so).
"""
