"""Algorithms of the five papers and their privacy: per paper key, the algorithms and their noise formulas.

- ``dpzero``: DPZero (Alg 2), DPGD-0th (Alg 1), first-order DP-GD and MeZO (Zhang et al. 2024) and their
  variants (Gaussian directions, raw-difference clipping, Poisson and shuffled batches).
- ``dpzero_privacy``: dpzero's noise formulas (Lemma 2.2, Algorithms 1/2 line 5, the Opacus replica of the
  experiments) and the privacy plan of every run (accountant per batching).
- ``dpzero_theory``: the theorem-prescribed hyperparameters and bounds (Theorems 1–3, Cor F.2–F.4).
- ``zo_o2nc``: zo_o2nc Algorithms 3, 4 and 6 (O2NC with the private variance-reduced and naive oracles).
- ``zo_o2nc_privacy``: zo_o2nc Cor 4.4 tree noise, the exact tree accounting of a run and the RDP → (ε, δ)-DP
  conversion of §2. ``zo_o2nc_theory``: the settings of Theorem 4.9 and App. E.
- ``nsnc_improved``: nsnc_improved Algorithm 2 with the single-pass (Algorithms 3, 5) and multi-pass (Algorithm 4)
  oracles.
- ``nsnc_improved_privacy``: nsnc_improved Prop 2.5 tree noise, the sensitivity table of Lemmas 3.3/C.1 (worst
  case and high probability), the exact Gaussian-DP of single- and multi-pass runs, calibrations and plans.
  ``nsnc_improved_theory``: the settings of Theorems 3.1, 4.1 and C.4, printed and corrected, and their bounds.
- ``_records``: per-record helpers of the zeroth-order oracles (loss values, finiteness, zero vectors).
- ``spider_sosp_privacy``: spider_sosp's σ rules (Thm 2.2, Lemmas 3.7, 3.8, Thm 3.11) and the true μ of each.
- ``bgm21_privacy``: bgm21's Gaussian calibration σ = 2Δ√ln(1/δ)/ε and where it stops being private.
- ``_privacy_common``: input helpers and the first-failing-ε scan shared by the privacy modules.
"""
