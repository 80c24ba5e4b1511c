"""Claim modules, one per area; each exposes ``CLAIMS`` (see ``proofs_checks.registry``)."""
