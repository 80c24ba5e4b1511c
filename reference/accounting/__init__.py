"""Privacy accounting, exact and readable: events, Rényi-DP curves, conversions, calibration.

Everything privacy-deciding is computed in mpmath at the caller's working precision (set it with
``reference.precision.working_precision``; ``rdp.ACCOUNTING_DPS`` = 40 is what the CLI and the high-level
helpers use), in log space, and fails loudly (``errors.AccountingError``) instead of returning a wrong
number. ``reference.fast.rdp`` and ``reference.fast.conversions`` are the float64 twins.

Modules:

- ``errors``: ``AccountingError`` (numerical failure: non-convergence, negative RDP from rounding, δ below
  the working precision), ``OrderGridWarning`` (optimal order on the edge of the grid), ``PrecisionWarning``.
- ``events``: mechanism descriptions (Gaussian, Laplace, Poisson-sampled, sampled without replacement, tree
  aggregation, zCDP, (ε, δ) and exponential-mechanism black boxes, self- and heterogeneous composition) and
  the neighbouring relations (replace-one, add/remove, zero-out), with ``check_relation`` refusing invalid
  combinations as dp_accounting does.
- ``rdp``: RDP of the Gaussian (α/(2z²)), Laplace (Mironov 2017 Prop 6), zCDP, exponential mechanism,
  Poisson-subsampled Gaussian (Mironov–Talwar–Zhang 2019: exact integer sum; fractional two-sided series
  with a proven truncation bound; add/remove directions; quadrature oracle), sampling without replacement
  (Wang–Balle–Kasiviswanathan 2019), tree aggregation (zo_o2nc Thm 4.3 corrected, and the exact per-record
  sum); ``rdp_of_event`` for composed events; ``DEFAULT_ORDERS``.
- ``accountant``: ``RdpAccountant``, a dp_accounting-like ledger (compose events, read ε or δ).
- ``conversions``: RDP → (ε, δ) (Mironov 2017 Prop 3; Balle et al. 2020 / Canonne–Kamath–Steinke with the
  TV bound), zCDP → (ε, δ).
- ``gaussian``: the exact analytic Gaussian privacy profile (Balle–Wang 2018) and Gaussian-DP μ ↔ (ε, δ).
- ``composition``: basic and advanced composition of (ε, δ) guarantees, pure DP → zCDP.
- ``calibration``: noise for a target (ε, δ) by bracketing and bisection that never overshoots. The papers'
  closed-form noise formulas are in ``reference/algorithms/<paper>_privacy.py``.
- ``pld``: privacy loss distributions composed by FFT with a connect-the-dots (dominating) upper side and a
  merged-bin (dominated) lower side, every rounding bounded: an interval [lower, upper] that contains the exact
  ε(δ) or δ(ε) of the composition (Gaussian, tree, Laplace, Poisson-subsampled Gaussian both directions, replace-one
  mixture, sampling without replacement). ``pld_exact``: the mpmath reference — exact one-step profiles, two steps
  by quadrature and a proven bracket for a few composed steps.

The submodules are imported on demand (``from reference.accounting import rdp``); nothing heavy is
re-exported here.
"""

__all__: list[str] = []
