"""dpref empirical_dp: privacy audits (docs/audits.md).

Neighbouring-dataset distinguishing attacks with rigorous epsilon lower bounds, compared with what
the accountant claims. Built so far:

- ``bounds``: Clopper–Pearson (ε, δ) lower bounds from one threshold test, the Gaussian-DP μ lower
  bound and its ε(δ), and the ceiling table (the largest ε any attack can certify with N trials).
- ``one_run``: one-run auditing (Steinke–Nasr–Jagielski 2023) p-value and ε lower bound.
- ``scenarios``: a mechanism on a neighbouring pair with its claim — an (ε, δ) or a μ-GDP guarantee
  (``Claim``) — kept apart from its true law (tight ε, true μ: yardsticks only) (Gaussian,
  Poisson-subsampled Gaussian with an exact tight ε, tree aggregation, one zeroth-order release).
- ``attacks``: likelihood-ratio, projection and logistic-regression scores.
- ``audit``: threshold chosen on a split disjoint from the counted one (or a Bonferroni grid of
  thresholds fixed on the select split), mergeable shard counts, ROC data, and ``audit()`` returning
  ε_lb, the GDP bound, the claim, the verdict decided only by bounds valid for the claim (``decided_by``,
  its margin and false-alarm probability), tight ε and tightness.
- ``executors``: shards run serially, on a local process pool or on a Dask cluster, with identical
  merged counts.
- ``dpzero_scenarios``: DPZero itself audited — one step, the whole run with a sign-flipping canary
  (full batch and Poisson).
- ``published``: everything a DPZero run publishes, audited as one output.
- ``zo_o2nc``: zo_o2nc Algorithms 3 + 4 audited — one epoch's tree-correlated releases and the whole run, a
  leaf-1 canary against the exact ρ of the ledger as a μ-GDP claim — and two planted bugs (noise for half the
  sensitivity, nodes re-noised per release).
- ``zo_o2nc_published``: everything a default ``dpref run zo_o2nc`` publishes, audited as one output, and two
  planted leaks (noise seeded next to the public seed, training diagnostics published).
- ``registry``: the built-in scenarios by name (``SCENARIOS``), above the scenario modules it registers.
- ``catalogue``: what ``dpref audit list`` shows (claim, tight ε, description of every built-in and planted
  bug) as static data, so listing builds nothing; a test checks it against the built scenarios.
- ``planted``: the planted bugs (noise halved, sensitivity C/n, Poisson-accounted shuffling, DPZero
  noise from the direction seed — one step and the whole run) and their correct twins.
- ``report``: Markdown/JSON/CSV reports and the ROC and ε-against-trials plots.

The ``dpref audit list|run`` command fronts them (``dpref/audit.py``); ``dpref check`` runs the quick
audits. ``one_run_fdp`` refines one-run auditing with f-DP (Gaussian-DP).
"""
