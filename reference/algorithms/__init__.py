"""Algorithms of the five papers, one module per paper key (DESIGN.md, reference/algorithms/).

- ``dpzero``: DPZero (Alg 2), DPGD-0th (Alg 1), first-order DP-GD and MeZO (Zhang et al. 2024),
  with the variants of dpzero.md §2.5 and their privacy plans.
- ``dpzero_theory``: the theorem-prescribed hyperparameters and bounds (Theorems 1–3, Cor F.2–F.4).
"""
