"""spider_sosp Theorem 2.2, Lemmas 3.7, 3.8 and Theorem 3.11: the tree noise of Liu–Talwar Algorithm 2.

Liu, Talwar — *Adaptive Batch Size for Privately Finding Second-Order Stationary Points* (arXiv 2024).
The paper prints four rules for the tree noise σ that disagree, the last with no ε or δ at all (erratum
spider_sosp.E3); its sensitivities are for zero-out neighbours (replace-one doubles them, erratum
spider_sosp.E1); and with one tree across O1 restarts a record changes two leaves (erratum spider_sosp.E5).

* ``spider_sosp_parameters``: the hyper-parameters (α of Lemma 3.10, b, b_t, tree levels) that fix the
  a-priori leaf sensitivity.
* ``spider_sosp_sigma``: σ by each printed rule (``SPIDER_SOSP_RULES``) or by the exact Gaussian-DP
  calibration ("gdp_exact", always private).
* ``spider_sosp_mu``: the true Gaussian-DP μ of a run with any σ, so the privacy of each printed rule can
  be reported.

Scalars are mpmath numbers computed at the caller's working precision
(``reference.precision.working_precision``).
"""

from __future__ import annotations

import mpmath

from ..accounting.gaussian import gaussian_mu
from ..validation import check_int, check_real
from ._privacy_common import mp_delta, mp_positive

__all__ = ["spider_sosp_parameters", "spider_sosp_sigma", "spider_sosp_mu", "SPIDER_SOSP_RULES"]

#: Accepted values of ``rule`` in ``spider_sosp_sigma``.
SPIDER_SOSP_RULES = ("gdp_exact", "thm2.2", "lemma3.7", "lemma3.8", "thm3.11")


def spider_sosp_parameters(*, lipschitz, smoothness, loss_gap, d, n, epsilon, steps=None, adjacency="replace_one", c_alpha=1):
    """The hyper-parameters of Liu–Talwar Algorithm 2 that fix its sensitivity (Lemmas 3.8, 3.10).

    lipschitz: G. smoothness: M. loss_gap: B (initial loss gap, not a batch size). d: dimension.
    n: samples. epsilon: ε. steps: horizon T = Σ (default n). adjacency: "replace_one"
    (c_adj = 2, default, spider_sosp.E1) or "zero_out" (c_adj = 1, the paper's constants). c_alpha: the constant of
    α's O(·) (erratum spider_sosp.E29).

    Returns a dict of mpf/int values:
      alpha   = c_α[((BGM)^{1/3} + √(BM))(√d/(nε))^{1/2} + (B^{2/9}M^{2/9}G^{5/9} + B^{4/9}M^{4/9}G^{1/9})/n^{1/3} + √(MB/n)]
      kappa   = max(α√d/ε, (BGM)^{1/3});   b = ⌈G√d/(εα) + G²/α²⌉ (Lemma 3.8)
      coef_bt = max(√d/(αε), κ/α²);   L = ⌈log2 T⌉ + 1 (levels of the padded tree)
      sbar    = c_adj·max(G/b, 1/coef_bt)  (a-priori leaf sensitivity)
    """
    G = mp_positive("lipschitz", lipschitz)
    M = mp_positive("smoothness", smoothness)
    B = mp_positive("loss_gap", loss_gap)
    d = check_int("d", d, minimum=1)
    n = check_int("n", n, minimum=1)
    eps = mp_positive("epsilon", epsilon)
    T = n if steps is None else check_int("steps", steps, minimum=1)
    c_alpha = mp_positive("c_alpha", c_alpha)
    c_adj = _adjacency_factor(adjacency)
    third, ninth = mpmath.mpf(1) / 3, mpmath.mpf(1) / 9
    alpha = c_alpha * (
        ((B * G * M) ** third + mpmath.sqrt(B * M)) * mpmath.sqrt(mpmath.sqrt(d) / (n * eps))
        + ((B * M) ** (2 * ninth) * G ** (5 * ninth) + (B * M) ** (4 * ninth) * G**ninth) / mpmath.mpf(n) ** third
        + mpmath.sqrt(M * B / n)
    )
    kappa = max(alpha * mpmath.sqrt(d) / eps, (B * G * M) ** third)
    b = int(mpmath.ceil(G * mpmath.sqrt(d) / (eps * alpha) + G**2 / alpha**2))
    coef_bt = max(mpmath.sqrt(d) / (alpha * eps), kappa / alpha**2)
    levels = (T - 1).bit_length() + 1  # ⌈log2 T⌉ + 1, exact in integers
    sbar = c_adj * max(G / b, 1 / coef_bt)
    return {"alpha": alpha, "kappa": kappa, "b": b, "coef_bt": coef_bt, "L": levels, "T": T, "sbar": sbar, "c_adj": c_adj}


def _adjacency_factor(adjacency):
    if adjacency == "replace_one":
        return 2
    if adjacency == "zero_out":
        return 1
    raise ValueError(f"adjacency must be 'replace_one' or 'zero_out', got {adjacency!r}")


def _tree_scope_factor(tree_scope):
    if tree_scope == "global":
        return 2  # a record changes its own leaf and the next O1 restart leaf (spider_sosp.E5)
    if tree_scope == "segment":
        return 1
    raise ValueError(f"tree_scope must be 'global' or 'segment', got {tree_scope!r}")


def spider_sosp_sigma(
    rule,
    *,
    lipschitz,
    smoothness,
    loss_gap,
    d,
    n,
    epsilon,
    delta,
    steps=None,
    adjacency="replace_one",
    tree_scope="global",
    c_alpha=1,
    allow_nonprivate=False,
):
    """Tree noise σ of Liu–Talwar Algorithm 2 by one of the paper's rules (erratum spider_sosp.E3).

    rule:
      * "gdp_exact" (our default, always private): σ = Δ_tree/μ*(ε, δ), Δ_tree = sbar·√(k_adj·L), calibrated to
        the upper bound ``spider_sosp_mu`` (exact in the Gaussian-DP profile, conservative in the sensitivity).
      * "thm2.2": Theorem 2.2, σ = 4·sbar·√(ln Σ · ln(1/δ))/ε with Σ = T (sufficient on the grid of tests/test_accounting_calibration.py).
      * "lemma3.7": Lemma 3.7, σ = (G/b + max‖g̃‖/b_t)·ln(1/δ)/ε with the paper's a-priori bounds
        G/b ≤ εα/√d and ‖g̃‖/b_t ≤ εα/√d; identical to "lemma3.8".
      * "lemma3.8": Lemma 3.8, σ = 2 ln(1/δ)·α/√d. Not certified under replace-one in the
        privacy-dominated regime (fixture (1,1,1,1,100,1e5,0.1,1e-6): the upper bound gives δ(ε) = 1.66e-4 > 1e-6).
      * "thm3.11": Theorem 3.11, σ = α/√d, no ε or δ at all: **not private**; refused unless
        ``allow_nonprivate=True``.
    The problem constants and ``adjacency`` are those of ``spider_sosp_parameters``; tree_scope is
    "global" (one tree, k_adj = 2, spider_sosp.E5) or "segment" (a fresh tree per O1 segment, k_adj = 1). Use
    ``spider_sosp_mu`` to see the upper bound on the GDP μ of the σ returned.
    """
    if rule not in SPIDER_SOSP_RULES:
        raise ValueError(f"rule must be one of {', '.join(SPIDER_SOSP_RULES)}, got {rule!r}")
    delta = mp_delta("delta", delta)
    params = spider_sosp_parameters(
        lipschitz=lipschitz, smoothness=smoothness, loss_gap=loss_gap, d=d, n=n, epsilon=epsilon, steps=steps,
        adjacency=adjacency, c_alpha=c_alpha,
    )
    k_adj = _tree_scope_factor(tree_scope)
    eps = mpmath.mpf(check_real("epsilon", epsilon))
    alpha, root_d = params["alpha"], mpmath.sqrt(d)
    ln_inv_delta = mpmath.log(1 / delta)
    if rule == "gdp_exact":
        return params["sbar"] * mpmath.sqrt(k_adj * params["L"]) / gaussian_mu(eps, delta)
    if rule == "thm2.2":
        if params["T"] < 2:
            raise ValueError("Theorem 2.2's sigma needs a tree of length >= 2 (ln 1 = 0)")
        return 4 * params["sbar"] * mpmath.sqrt(mpmath.log(params["T"]) * ln_inv_delta) / eps
    if rule == "lemma3.7":
        paper_sensitivity = eps * alpha / root_d + eps * alpha / root_d
        return paper_sensitivity * ln_inv_delta / eps
    if rule == "lemma3.8":
        return 2 * ln_inv_delta * alpha / root_d
    # rule == "thm3.11"
    if not allow_nonprivate:
        raise ValueError(
            "rule 'thm3.11' (sigma = alpha/sqrt(d)) is not private (spider_sosp Theorem 3.11, erratum "
            "spider_sosp.E3); pass allow_nonprivate=True to compute it anyway"
        )
    return alpha / root_d


def spider_sosp_mu(
    sigma, *, lipschitz, smoothness, loss_gap, d, n, epsilon, steps=None, adjacency="replace_one", tree_scope="global", c_alpha=1
):
    """An upper bound μ = sbar·√(k_adj·L)/σ on the Gaussian-DP μ of Algorithm 2 with tree noise σ (Theorem 2.2,
    Lemma 3.7; errata spider_sosp.E1, spider_sosp.E5).

    The released stream is a post-processing of Gaussian node releases; one record moves k_adj
    leaves (2 with one global tree, 1 with a tree per segment), each in at most L nodes (the a-priori level
    count; the exact participation count can be smaller), and the bound ignores cancellation between the
    ancestors two changed leaves share. The run is (ε, gaussian_delta(ε, μ))-DP for every ε; the exact μ
    can be smaller.
    """
    sigma = mp_positive("sigma", sigma)
    params = spider_sosp_parameters(
        lipschitz=lipschitz, smoothness=smoothness, loss_gap=loss_gap, d=d, n=n, epsilon=epsilon, steps=steps,
        adjacency=adjacency, c_alpha=c_alpha,
    )
    return params["sbar"] * mpmath.sqrt(_tree_scope_factor(tree_scope) * params["L"]) / sigma
