"""dpref empirical_dp: privacy audits (DESIGN.md, empirical_dp/).

Neighbouring-dataset distinguishing attacks with rigorous epsilon lower bounds, compared with what
the accountant claims. Built so far:

- ``bounds``: Clopper–Pearson (ε, δ) lower bounds from one threshold test, the Gaussian-DP μ lower
  bound and its ε(δ), and the ceiling table (the largest ε any attack can certify with N trials).

Scenarios, attacks, threshold selection on a disjoint split, one-run auditing, sharded execution
(process pool, Dask), planted bugs, reports and the ``dpref audit`` command are the rest of the
audit work (issue 4) and do not exist yet.
"""
