"""dpref proofs_checks: the papers' lemmas and theorems as executable claims (docs/writing-claims.md).

- ``authoring``: the public claim-writing API (model, evidence, statistical tests, mutant helpers).
- ``claim``: Claim, Mutant, Evidence, budgets and contexts.
- ``papers``: the paper registry with errata and citations; ``folders``: the claim folders (one per paper,
  plus ``foundations``) and the protocols they declare.
- ``protocols`` and ``subjects``: what a claim may call, and the implementations it runs against
  (``reference``, ``fast``, or ``module:attr``).
- ``stats``: the tests behind Monte Carlo claims (statsmodels/scipy), with their power.
- ``registry``, ``runner``, ``catalogue``: discovery and selection, execution with Holm correction and
  soak runs, and the generated docs/claims.md and docs/errata.md.
- ``claims/<folder>/``: the claims, every module-level ``Claim`` of a public module registered.
"""
