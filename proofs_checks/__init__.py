"""dpref proofs_checks: the papers' lemmas and theorems as executable claims (docs/writing-claims.md).

- ``claim``: Claim, Mutant, Evidence, budgets and contexts.
- ``protocols`` and ``subjects``: what a claim may call, and the implementations it runs against
  (``reference``, ``fast``, or ``module:attr``).
- ``stats``: the tests behind Monte Carlo claims (statsmodels/scipy), with their power.
- ``registry``, ``runner``, ``report``, ``catalogue``: selection, execution with Holm correction and
  soak runs, rendering, and the generated docs/claims.md.
- ``claims/``: one module per area, each exposing ``CLAIMS``.
"""
