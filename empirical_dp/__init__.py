"""dpref empirical_dp: privacy audits (DESIGN.md, empirical_dp/).

Neighbouring-dataset distinguishing attacks with rigorous epsilon lower bounds, compared with what
the accountant claims. Built so far:

- ``bounds``: Clopper–Pearson (ε, δ) lower bounds from one threshold test, the Gaussian-DP μ lower
  bound and its ε(δ), and the ceiling table (the largest ε any attack can certify with N trials).
- ``one_run``: one-run auditing (Steinke–Nasr–Jagielski 2023) p-value and ε lower bound.
- ``scenarios``: a mechanism on a neighbouring pair with its claimed and tight ε (Gaussian,
  Poisson-subsampled Gaussian with an exact tight ε).
- ``attacks``: likelihood-ratio, projection and logistic-regression scores.
- ``audit``: threshold chosen on a split disjoint from the counted one, mergeable shard counts, and
  ``audit()`` returning ε_lb, the GDP bound, claimed and tight ε, the verdict and tightness.

Still to come (issue 4): the process-pool and Dask executors, planted bugs, the f-DP refinement of
one-run auditing, more scenarios (tree prefix sums, zeroth-order estimator), reports and plots, and
the ``dpref audit`` command.
"""
