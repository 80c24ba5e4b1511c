"""bgm21 — Bassily, Guzmán, Menart, *Differentially Private Stochastic Optimization: New Results in Convex and
Non-Convex Settings* (NeurIPS 2021): one entry point per algorithm and theorem of the paper, re-exported from the
modules that implement them (this module defines nothing of its own).

The paper's appendices (the listings of Algorithms 3, 5 and 6, the solver of Theorem 29 and every proof) are not part
of its text; the pieces built from the main text and the cited papers are marked "rebuilt" in their docstrings
(bgm21.E1).

§2, Lemma 1 (advanced composition) and the accounting of the single-pass algorithms (``bgm21_accounting``):

* ``advanced_composition`` — Lemma 1 as printed; ``certify_pure`` — the smallest certified ε of k pure steps over
  basic, Lemma 1, zero-concentrated (Bun–Steinke 2016) and exact (Kairouz–Oh–Viswanath 2015) composition;
  ``calibrate_pure_steps`` — the largest per-step ε they allow; ``Bgm21Ledger`` — per-batch composition (parallel over
  disjoint batches, adaptive within a batch).
* ``ledger_of(result)`` / ``privacy_report(result, ε, δ)`` (``bgm21_ledgers``) — the ledger of one run of any
  algorithm below, built from its public trace only, and its certified ε with the route that decided.
* ``bgm21_gaussian_sigma`` (``bgm21_privacy``) — the Gaussian calibration σ = 2Δ√ln(1/δ)/ε of Phased-SGD and
  Algorithm 6, and ``bgm21_gaussian_certified_epsilon``, the largest ε at which it is private (Balle–Wang 2018).

§3, generalized linear losses (Definition 2; ``reference.gll`` and ``bgm21_gll``):

* Algorithm 3 — ``moreau_glm_gradient``: the oracle 𝒪_{β,α,R} of Lemma 4 (bisection on the scalar prox; rebuilt).
* Theorem 5 — ``phased_sgd`` with ``theorem5_params``: Phased-SGD of Feldman–Koren–Talwar 2020 on the smoothed GLL
  (rebuilt; β corrected by default, bgm21.E2).
* Theorem 6 — Algorithm 5, ``noisy_frank_wolfe`` with ``theorem6_params``: noisy Frank–Wolfe of Talwar–Thakurta–Zhang
  2015 (rebuilt; α corrected, bgm21.E3; Laplace scale certified by default, bgm21.E28).

§4, smooth nonconvex losses, stochastic Frank–Wolfe (``bgm21_sfw`` and ``bgm21_theory``):

* Algorithm 1 (A_polySFW; Theorems 7 and 8) — ``poly_sfw`` with ``theorem8_params`` (R in base 2, bgm21.E5; one pass
  over disjoint batches, bgm21.E7; centred score sensitivity, bgm21.E9; η_{r,0} = 1, bgm21.E22).
* Algorithm 6 (A_nSFW; Theorems 10 and 11) — ``noisy_sfw`` with ``theorem11_params`` (rebuilt from §4.2's text;
  σ̂ with η_{r,t−1} by default, bgm21.E10).
* ``RecursiveGradientEstimator`` — lines 5, 10 and 11 of Algorithm 1 (Lemmas 9 and 12 bound its error).

§5, weakly convex losses (``bgm21_prox`` and ``bgm21_theory``):

* Algorithm 2 (Theorem 16) — ``prox_guided_psmd`` with ``theorem16_params`` (β = 2ρ/ν_eff by default, bgm21.E13;
  output uniform over w_1..w_R, bgm21.E18), at p = 2, with ``asc_dp_gd`` standing in for A_SC (Theorem 29; rebuilt:
  noisy projected gradient descent under zero-concentrated DP).
* ``kappa``, ``kappa_tilde``, ``p_bar``, ``nu_eff`` — the ℓ_p constants of Theorems 11 and 16; ``rate_theorem8``,
  ``rate_theorem11``, ``rate_theorem16`` — the theorems' bounds with every hidden constant 1.

The synthetic problems with exact population quantities and the accuracy measure of each theorem (excess population
risk, Frank–Wolfe gap, proximal near-stationarity) are in ``reference.objectives_bgm21``; whole runs with what they
publish, in ``reference.runner_bgm21`` (``dpref run bgm21``).
"""

from __future__ import annotations

from ..gll import moreau_glm_gradient
from .bgm21_accounting import Bgm21Ledger, advanced_composition, calibrate_pure_steps, certify_pure
from .bgm21_gll import noisy_frank_wolfe, phased_sgd, theorem5_params, theorem6_params
from .bgm21_ledgers import ledger_of, privacy_report
from .bgm21_privacy import bgm21_gaussian_certified_epsilon, bgm21_gaussian_sigma
from .bgm21_prox import asc_dp_gd, prox_guided_psmd
from .bgm21_sfw import RecursiveGradientEstimator, noisy_sfw, poly_sfw
from .bgm21_theory import (kappa, kappa_tilde, nu_eff, p_bar, rate_theorem8, rate_theorem11, rate_theorem16,
                           theorem8_params, theorem11_params, theorem16_params)

__all__ = [
    # Lemma 1 and the accounting
    "advanced_composition",
    "certify_pure",
    "calibrate_pure_steps",
    "Bgm21Ledger",
    "ledger_of",
    "privacy_report",
    "bgm21_gaussian_sigma",
    "bgm21_gaussian_certified_epsilon",
    # §3: Algorithm 3, Theorem 5 (Phased-SGD), Theorem 6 (Algorithm 5)
    "moreau_glm_gradient",
    "phased_sgd",
    "theorem5_params",
    "noisy_frank_wolfe",
    "theorem6_params",
    # §4: Algorithms 1 and 6
    "poly_sfw",
    "theorem8_params",
    "noisy_sfw",
    "theorem11_params",
    "RecursiveGradientEstimator",
    # §5: Algorithm 2
    "prox_guided_psmd",
    "asc_dp_gd",
    "theorem16_params",
    "kappa",
    "kappa_tilde",
    "p_bar",
    "nu_eff",
    "rate_theorem8",
    "rate_theorem11",
    "rate_theorem16",
]

#: The paper's algorithms -> their entry point in this module.
ALGORITHMS = {
    "Algorithm 1": "poly_sfw",
    "Algorithm 2": "prox_guided_psmd",
    "Algorithm 3": "moreau_glm_gradient",
    "Algorithm 5": "noisy_frank_wolfe",
    "Algorithm 6": "noisy_sfw",
    "Phased-SGD (Theorem 5)": "phased_sgd",
}
#: The paper's theorems -> the function that computes their settings or bound.
THEOREMS = {
    "Theorem 5": "theorem5_params",
    "Theorem 6": "theorem6_params",
    "Theorem 7": "privacy_report",
    "Theorem 8": "theorem8_params",
    "Theorem 10": "privacy_report",
    "Theorem 11": "theorem11_params",
    "Theorem 16": "theorem16_params",
}
__all__ += ["ALGORITHMS", "THEOREMS"]
