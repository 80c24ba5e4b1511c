"""Algorithms of the five papers and their privacy: per paper key, the algorithms and their noise formulas.

- ``dpzero``: DPZero (Alg 2), DPGD-0th (Alg 1), first-order DP-GD and MeZO (Zhang et al. 2024) and their
  variants (Gaussian directions, raw-difference clipping, Poisson and shuffled batches).
- ``dpzero_privacy``: dpzero's noise formulas (Lemma 2.2, Algorithms 1/2 line 5, the Opacus replica of the
  experiments) and the privacy plan of every run (accountant per batching).
- ``dpzero_theory``: the theorem-prescribed hyperparameters and bounds (Theorems 1–3, Cor F.2–F.4).
- ``zo_o2nc_privacy``: zo_o2nc Cor 4.4 tree noise and the RDP → (ε, δ)-DP conversion of §2.
- ``nsnc_improved_privacy``: nsnc_improved Prop 2.5 tree noise, corrected, and its exact Gaussian-DP μ.
- ``spider_sosp_privacy``: spider_sosp's σ rules (Thm 2.2, Lemmas 3.7, 3.8, Thm 3.11) and the true μ of each.
- ``bgm21_privacy``: bgm21's Gaussian calibration σ = 2Δ√ln(1/δ)/ε and where it stops being private.
- ``_privacy_common``: input helpers and the first-failing-ε scan shared by the privacy modules.
"""
