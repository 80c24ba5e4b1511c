"""spider_sosp §2.1 (Algorithm 1, Theorem 2.2) and §3.1 (Lemmas 3.7, 3.8, Theorem 3.11): the tree noise of
Liu–Talwar Algorithm 2, its exact Gaussian-DP accounting and its calibration.

Liu, Talwar — *Adaptive Batch Size for Privately Finding Second-Order Stationary Points* (arXiv 2024).
The paper prints four rules for the tree noise σ that disagree, the last with no ε or δ at all (erratum
spider_sosp.E3); its sensitivities are for zero-out neighbours (replace-one doubles them, erratum
spider_sosp.E1); and with one tree across O1 restarts a record changes two leaves (erratum spider_sosp.E5).

The released stream g̃_t = Σ_{j≤t} m_j + TREE(leaf), with leaf increments m_t = ∇_t − ∇_{t−1} (∇ restarts at
O1 steps), is an invertible post-processing of the Gaussian node releases Σ_{j∈N} m_j + ξ_N of the nodes
N_b = (b − lowbit(b), b], b = 1..Σ (``reference.mechanisms``: a node is released when it completes, so a
tree of Σ used leaves releases exactly these Σ nodes). A record read at leaf p shifts ∇ by one vector
δ (‖δ‖ ≤ sbar) from p until the next restart leaf q: the increments change by +δ at p and by −δ at q
(one tree for the run, ``tree_scope="global"``), or at p only (a fresh tree per O1 segment, "segment").
A node containing both p and q does not change. So one record moves exactly
c(p, q) = #{released nodes containing exactly one of p, q} node sums by ‖δ‖ each, and the run is μ-GDP with

    μ = sbar·√(max_{p,q} c(p, q))/σ

(adaptive composition of Gaussian releases: Smith–Thakurta 2022, Denisov–McMahan–Rush–Smith–Thakurta 2022;
the schedule of restarts is adaptive, so every pair 1 ≤ p < q ≤ Σ, and q = none, can occur). Exact
worst-case counts (proof in ``spider_sosp_node_counts``), with K = ⌊log2 Σ⌋:

    segment: K + 1;
    global:  max(K + 1, 2K − 1, K + 2 + ⌊log2(Σ − 2^K)⌋ when Σ ≠ 2^K)   (Σ = 1: 1),

against the a-priori bound k_adj·L = k_adj·(⌈log2 Σ⌉ + 1) (k_adj = 2 global, 1 segment), which ignores both the
cancellation of shared ancestors and the incomplete nodes of a non-power-of-2 tree. "Exact" is for one bound sbar
on every leaf; the worst pairs read the record at leaf 1, which is always an O1 step (bound c_adj·G/b ≤ sbar).

* ``spider_sosp_parameters``: the hyper-parameters (α of Lemma 3.10, b, b_t, tree levels) that fix the
  a-priori leaf sensitivity sbar.
* ``spider_sosp_changed_node_count``, ``spider_sosp_node_counts`` (exact, O(log Σ)),
  ``spider_sosp_node_counts_bruteforce`` (exhaustive over pairs, for tests), ``spider_sosp_worst_case_leaves``
  (a pair attaining the count), ``spider_sosp_node_count_upper_bound`` (k_adj·L).
* ``spider_sosp_exact_mu``: the exact μ of a tree with noise σ; ``spider_sosp_mu``: the upper bound
  sbar·√(k_adj·L)/σ from the problem constants (what the paper's analysis certifies).
* ``spider_sosp_sigma``: σ by the exact Gaussian-DP calibration ("gdp_exact"), by the same calibration on the
  upper bound ("upper_bound"), or by each printed rule (``PRINTED_RULES``; ``RULE_LABELS``).
* ``SpiderPrivacyPlan`` / ``spider_sosp_plan`` / ``spider_sosp_privacy_report``: what a run's ledger records —
  μ, exact ε at δ, δ at the target ε, and whether the σ used is private.

Scalars are mpmath numbers computed at the caller's working precision
(``reference.precision.working_precision``).
"""

from __future__ import annotations

import dataclasses
import functools

import mpmath

from ..accounting.errors import AccountingError
from ..accounting.gaussian import gaussian_delta, gaussian_epsilon, gaussian_mu
from ..mechanisms import participation_chain
from ..validation import check_int, check_real
from ._privacy_common import mp_delta, mp_positive

__all__ = [
    "SPIDER_SOSP_RULES",
    "PRINTED_RULES",
    "RULE_LABELS",
    "TREE_SCOPES",
    "ADJACENCIES",
    "COUNT_RULES",
    "BRUTE_FORCE_MAX_SIGMA",
    "spider_sosp_parameters",
    "spider_sosp_changed_node_count",
    "spider_sosp_node_counts",
    "spider_sosp_node_counts_bruteforce",
    "spider_sosp_worst_case_leaves",
    "spider_sosp_node_count_upper_bound",
    "spider_sosp_exact_mu",
    "spider_sosp_sigma",
    "spider_sosp_mu",
    "SpiderPrivacyPlan",
    "spider_sosp_plan",
    "spider_sosp_privacy_report",
]

#: The paper's printed σ rules (erratum spider_sosp.E3).
PRINTED_RULES = ("thm2.2", "lemma3.7", "lemma3.8", "thm3.11")
#: Accepted values of ``rule`` in ``spider_sosp_sigma``: our two calibrations, then the printed rules.
SPIDER_SOSP_RULES = ("gdp_exact", "upper_bound") + PRINTED_RULES
#: What each rule is, for ledgers and reports.
RULE_LABELS = {
    "gdp_exact": "exact Gaussian-DP calibration, exact node count (dpref; private)",
    "upper_bound": "exact Gaussian-DP calibration on the upper bound sbar*sqrt(k_adj*L) (dpref; private, conservative)",
    "thm2.2": "Theorem 2.2 as printed: 4*sbar*sqrt(ln(Sigma)*ln(1/delta))/eps",
    "lemma3.7": "Lemma 3.7 as printed, with the paper's a-priori sensitivity bound (= Lemma 3.8's rule)",
    "lemma3.8": "Lemma 3.8 as printed: 2*ln(1/delta)*alpha/sqrt(d)",
    "thm3.11": "Theorem 3.11 as printed: alpha/sqrt(d), no eps or delta (not private)",
}
#: One tree for the whole run (the paper's literal TREE(t)), or a fresh tree per O1 segment (erratum spider_sosp.E5).
TREE_SCOPES = ("global", "segment")
#: Neighbouring relations (erratum spider_sosp.E1): replace one record (default), or zero it out (the paper's constants).
ADJACENCIES = ("replace_one", "zero_out")
#: Node counts of a plan: the exact worst case, or the a-priori bound k_adj·L.
COUNT_RULES = ("exact", "upper_bound")
#: The brute-force count visits every pair of leaves (Σ² set operations): refused above this Σ.
BRUTE_FORCE_MAX_SIGMA = 1024


def _check_choice(name, value, choices, context=""):
    # isinstance first: an array or a list must not reach `in` (ambiguous or elementwise comparison)
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}{context}, got {value!r}")
    return value


def _check_flag(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")
    return value


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
    _check_choice("adjacency", adjacency, ADJACENCIES, " (add/remove shifts every later batch: not supported)")
    return 2 if adjacency == "replace_one" else 1


def _tree_scope_factor(tree_scope):
    _check_choice("tree_scope", tree_scope, TREE_SCOPES)
    # global: a record changes its own leaf and the next O1 restart leaf (spider_sosp.E5)
    return 2 if tree_scope == "global" else 1


# ---------------------------------------------------------------------------------------------------
# Node counts (Algorithm 1's tree, completed nodes only)


def spider_sosp_changed_node_count(leaf, restart_leaf, Sigma):
    """c(p, q): the released nodes of a tree of Σ used leaves that contain exactly one of the leaves p and q.

    leaf: p ∈ [1, Σ], the leaf of the step that reads the record (+δ). restart_leaf: q ∈ (p, Σ], the leaf of the
    next O1 restart (−δ), or None when no restart follows (one tree per segment: always None). Sigma: Σ ≥ 1.
    Released nodes are those that complete, N_b with b ≤ Σ (``reference.mechanisms.participation_chain``); a node
    holding both leaves sees +δ − δ = 0.
    """
    Sigma = check_int("Sigma", Sigma, minimum=1)
    leaf = check_int("leaf", leaf, minimum=1, maximum=Sigma)
    changed = set(participation_chain(leaf, Sigma))
    if restart_leaf is not None:
        if leaf == Sigma:
            raise ValueError(f"restart_leaf must be None when leaf = Sigma = {Sigma} (a restart comes after the leaf)")
        restart_leaf = check_int("restart_leaf", restart_leaf, minimum=leaf + 1, maximum=Sigma)
        changed ^= set(participation_chain(restart_leaf, Sigma))
    return len(changed)


def _worst_case_candidates(Sigma, tree_scope):
    """Leaf pairs among which the worst case lies (proof in ``spider_sosp_node_counts``)."""
    if tree_scope == "segment":
        return [(1, None)]
    top = Sigma.bit_length() - 1  # K = ⌊log2 Σ⌋
    candidates = [(1, None)]
    if top >= 1:
        candidates.append((1, 2 ** (top - 1) + 1))  # highest differing bit D = K − 1: 2K − 1 nodes
    if Sigma > 2**top:
        candidates.append((1, 2**top + 1))  # D = K: K + 2 + ⌊log2(Σ − 2^K)⌋ nodes
    return candidates


def _check_tree(Sigma, tree_scope):
    return check_int("Sigma", Sigma, minimum=1), _check_choice("tree_scope", tree_scope, TREE_SCOPES)


def spider_sosp_worst_case_leaves(Sigma, tree_scope):
    """A pair (p, q) attaining ``spider_sosp_node_counts`` (q None: no restart after p; always None per segment)."""
    Sigma, tree_scope = _check_tree(Sigma, tree_scope)
    candidates = _worst_case_candidates(Sigma, tree_scope)
    counts = [spider_sosp_changed_node_count(p, q, Sigma) for p, q in candidates]
    return candidates[counts.index(max(counts))]


def spider_sosp_node_counts(Sigma, tree_scope):
    """The exact worst-case number of node sums one record changes: max_{p, q} c(p, q), in O(log Σ).

    Sigma: Σ ≥ 1, the leaves of a tree (global: the horizon T; segment: the longest segment, ≤ T). A run that
    halts earlier completes fewer nodes, and c(p, q) only grows with Σ, so Σ = T is the worst case.
    tree_scope: "global" (max over 1 ≤ p < q ≤ Σ and q = none) or "segment" (one changed leaf).

    Proof. Write x = p − 1 < y = q − 1 in binary and K = ⌊log2 Σ⌋. At each level h the leaf p lies in one dyadic
    block; it is a released node iff bit h of x is 0 (the block's right end b then has lowbit(b) = 2^h) and its
    right end (x | (2^h − 1)) + 1 ≤ Σ. Let D be the highest bit where x and y differ (D ≤ K since y < Σ ≤ 2^{K+1}).
    Above D the blocks of p and q coincide and cancel; at D, x's bit is 0 (its block ends ≤ y < Σ: released) and
    y's is 1 (not a node); below D, all of p's blocks with a 0 bit are released (they end before q). Hence
    c = 1 + #{h < D: x_h = 0} + #{h < D: y_h = 0, y|(2^h − 1) < Σ} ≤ 2D + 1.
    * D ≤ K − 1: c ≤ 2K − 1, attained by (1, 2^{K−1} + 1) (q's blocks end ≤ 2^{K−1} + 2^{K−2} ≤ Σ).
    * D = K (needs Σ > 2^K): x < 2^K, so p's part is ≤ K + 1 (x = 0); y = 2^K + r, and q's part counts the levels
      h with r_h = 0 and r|(2^h − 1) < Σ − 2^K: the participation count of leaf r + 1 in a tree of Σ − 2^K leaves,
      at most ⌊log2(Σ − 2^K)⌋ + 1, at r = 0 (``reference.mechanisms.max_participation_count``). Total
      K + 2 + ⌊log2(Σ − 2^K)⌋, attained by (1, 2^K + 1).
    * no restart (and every segment-scoped record): one leaf's chain, ≤ K + 1, attained at p = 1.
    So the maximum is attained at one of the candidate pairs, which this function evaluates with the shared chains.
    """
    Sigma, tree_scope = _check_tree(Sigma, tree_scope)
    return max(spider_sosp_changed_node_count(p, q, Sigma) for p, q in _worst_case_candidates(Sigma, tree_scope))


def spider_sosp_node_counts_bruteforce(Sigma, tree_scope):
    """``spider_sosp_node_counts`` from the definition: every leaf p and every restart leaf q ∈ (p, Σ] ∪ {none}.

    O(Σ² log Σ); Sigma ≤ ``BRUTE_FORCE_MAX_SIGMA``. The reference the closed form is tested against.
    """
    Sigma, tree_scope = _check_tree(Sigma, tree_scope)
    if Sigma > BRUTE_FORCE_MAX_SIGMA:
        raise ValueError(f"Sigma must be <= {BRUTE_FORCE_MAX_SIGMA} for the brute force (it visits all Sigma^2 "
                         f"leaf pairs), got {Sigma}; use spider_sosp_node_counts")
    chains = [frozenset(participation_chain(q, Sigma)) for q in range(1, Sigma + 1)]
    best = max(len(chain) for chain in chains)  # no restart after the record's leaf
    if tree_scope == "global":
        for i, chain in enumerate(chains):
            for other in chains[i + 1:]:
                best = max(best, len(chain ^ other))
    return best


def spider_sosp_node_count_upper_bound(Sigma, tree_scope):
    """The a-priori count k_adj·L = k_adj·(⌈log2 Σ⌉ + 1) (k_adj = 2 global, 1 segment)."""
    Sigma, tree_scope = _check_tree(Sigma, tree_scope)
    return _tree_scope_factor(tree_scope) * ((Sigma - 1).bit_length() + 1)


def _node_count(Sigma, tree_scope, count_rule):
    _check_choice("count_rule", count_rule, COUNT_RULES)
    if count_rule == "exact":
        return spider_sosp_node_counts(Sigma, tree_scope)
    return spider_sosp_node_count_upper_bound(Sigma, tree_scope)


def _mu(sbar, count, sigma):
    """sbar·√count/σ; the one expression both calibration and accounting evaluate, so their roundings agree."""
    return sbar * mpmath.sqrt(count) / sigma


def spider_sosp_exact_mu(noise_std, *, sbar, Sigma, tree_scope):
    """The exact Gaussian-DP μ = sbar·√(``spider_sosp_node_counts``(Σ, scope))/σ of Algorithm 2's tree releases.

    noise_std: σ > 0 of every node. sbar: the per-leaf sensitivity bound (> 0; ``spider_sosp_parameters``'s
    "sbar"). Sigma: Σ, the tree's leaves. tree_scope: "global" or "segment". Exact for the worst case over adaptive
    restart schedules in which any leaf may carry a shift of norm sbar. Returns an mpf.
    """
    sigma = mp_positive("noise_std", noise_std)
    sbar = mp_positive("sbar", sbar)
    return _mu(sbar, spider_sosp_node_counts(Sigma, tree_scope), sigma)


# ---------------------------------------------------------------------------------------------------
# σ rules


def _calibrated_noise_std(sbar, count, epsilon, delta):
    """σ = sbar·√count/μ*(ε, δ), widened by a few ulps if rounding left δ(ε; sbar√count/σ) above δ."""
    sigma = _mu(sbar, count, gaussian_mu(epsilon, delta))
    widen = 1 + mpmath.mpf(2) ** (8 - mpmath.mp.prec)
    for _ in range(16):
        if gaussian_delta(epsilon, _mu(sbar, count, sigma)) <= delta:
            return sigma
        sigma *= widen
    raise AccountingError(f"could not certify the calibrated sigma at epsilon={epsilon}, delta={delta}")


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
    """Tree noise σ of Liu–Talwar Algorithm 2 by one of ``SPIDER_SOSP_RULES`` (labels: ``RULE_LABELS``).

    rule:
      * "gdp_exact" (dpref's default, private): σ = sbar·√c/μ*(ε, δ) with the exact worst-case node count
        c = ``spider_sosp_node_counts``(T, tree_scope), so ``spider_sosp_exact_mu`` of σ is μ*(ε, δ).
      * "upper_bound" (private, conservative): the same calibration with the a-priori count k_adj·L, so
        ``spider_sosp_mu`` of σ is μ*(ε, δ).
      * "thm2.2": Theorem 2.2, σ = 4·sbar·√(ln Σ · ln(1/δ))/ε with Σ = T (sufficient on the grid of
        tests/test_accounting_calibration.py).
      * "lemma3.7": Lemma 3.7, σ = (G/b + max‖g̃‖/b_t)·ln(1/δ)/ε with the paper's a-priori bounds
        G/b ≤ εα/√d and ‖g̃‖/b_t ≤ εα/√d; identical to "lemma3.8".
      * "lemma3.8": Lemma 3.8, σ = 2 ln(1/δ)·α/√d. Not certified under replace-one in the
        privacy-dominated regime (fixture (1,1,1,1,100,1e5,0.1,1e-6): the upper bound gives δ(ε) = 1.66e-4 > 1e-6).
      * "thm3.11": Theorem 3.11, σ = α/√d, no ε or δ at all: **not private**; refused unless
        ``allow_nonprivate=True``.
    The problem constants and ``adjacency`` are those of ``spider_sosp_parameters``; tree_scope is "global" (one
    tree, spider_sosp.E5) or "segment" (a fresh tree per O1 segment); delta: δ ∈ (0, 1). Returns an mpf.
    """
    _check_choice("rule", rule, SPIDER_SOSP_RULES)
    _check_flag("allow_nonprivate", allow_nonprivate)
    delta = mp_delta("delta", delta)
    params = spider_sosp_parameters(
        lipschitz=lipschitz, smoothness=smoothness, loss_gap=loss_gap, d=d, n=n, epsilon=epsilon, steps=steps,
        adjacency=adjacency, c_alpha=c_alpha,
    )
    _check_choice("tree_scope", tree_scope, TREE_SCOPES)
    if rule == "thm3.11" and not allow_nonprivate:
        raise ValueError(
            "rule 'thm3.11' (sigma = alpha/sqrt(d)) is not private (spider_sosp Theorem 3.11, erratum "
            "spider_sosp.E3); pass allow_nonprivate=True to compute it anyway"
        )
    eps = mpmath.mpf(check_real("epsilon", epsilon))
    alpha, root_d = params["alpha"], mpmath.sqrt(d)
    ln_inv_delta = mpmath.log(1 / delta)
    if rule in ("gdp_exact", "upper_bound"):
        count = _node_count(params["T"], tree_scope, "exact" if rule == "gdp_exact" else "upper_bound")
        return _calibrated_noise_std(params["sbar"], count, eps, delta)
    if rule == "thm2.2":
        if params["T"] < 2:
            raise ValueError("rule 'thm2.2' needs steps (the tree length) >= 2: ln 1 = 0 gives sigma = 0")
        return 4 * params["sbar"] * mpmath.sqrt(mpmath.log(params["T"]) * ln_inv_delta) / eps
    if rule == "lemma3.7":
        paper_sensitivity = eps * alpha / root_d + eps * alpha / root_d
        return paper_sensitivity * ln_inv_delta / eps
    if rule == "lemma3.8":
        return 2 * ln_inv_delta * alpha / root_d
    return alpha / root_d  # "thm3.11", allowed explicitly


def spider_sosp_mu(
    sigma, *, lipschitz, smoothness, loss_gap, d, n, epsilon, steps=None, adjacency="replace_one", tree_scope="global", c_alpha=1
):
    """An upper bound μ = sbar·√(k_adj·L)/σ on the Gaussian-DP μ of Algorithm 2 with tree noise σ (Theorem 2.2,
    Lemma 3.7; errata spider_sosp.E1, spider_sosp.E5).

    The released stream is a post-processing of Gaussian node releases; one record moves k_adj
    leaves (2 with one global tree, 1 with a tree per segment), each in at most L nodes (the a-priori level
    count), and the bound ignores cancellation between the ancestors two changed leaves share. The run is
    (ε, gaussian_delta(ε, μ))-DP for every ε; the exact μ is ``spider_sosp_exact_mu``.
    """
    sigma = mp_positive("sigma", sigma)
    params = spider_sosp_parameters(
        lipschitz=lipschitz, smoothness=smoothness, loss_gap=loss_gap, d=d, n=n, epsilon=epsilon, steps=steps,
        adjacency=adjacency, c_alpha=c_alpha,
    )
    return _mu(params["sbar"], spider_sosp_node_count_upper_bound(params["T"], tree_scope), sigma)


# ---------------------------------------------------------------------------------------------------
# The privacy plan of a run


@dataclasses.dataclass(frozen=True)
class SpiderPrivacyPlan:
    """How a run of Liu–Talwar Algorithm 2 is private . Every field is public.

    adjacency: "replace_one" or "zero_out". tree_scope: "global" or "segment". Sigma: Σ, the tree's leaves (T).
    sbar: the per-leaf sensitivity bound. node_count: the node sums one record changes, by count_rule ("exact":
    ``spider_sosp_node_counts``; "upper_bound": k_adj·L). noise_std: σ of every node. mu: sbar·√node_count/σ.
    epsilon: the smallest ε with gaussian_delta(ε, μ) ≤ dp_delta (rounded up). dp_delta: δ. target_epsilon: the ε
    asked for. delta_at_target: gaussian_delta(target_epsilon, μ). rule: the σ rule ("given" for a σ passed in).
    guarantee: "gaussian-dp". private: delta_at_target ≤ dp_delta. note: remarks. Scalars are mpf.
    """

    adjacency: str
    tree_scope: str
    Sigma: int
    sbar: mpmath.mpf
    node_count: int
    count_rule: str
    noise_std: mpmath.mpf
    mu: mpmath.mpf
    epsilon: mpmath.mpf
    dp_delta: mpmath.mpf
    target_epsilon: mpmath.mpf
    delta_at_target: mpmath.mpf
    rule: str
    guarantee: str
    private: bool
    note: str

    def summary(self) -> str:
        """One line for a ledger."""
        verdict = "private" if self.private else "NOT private at the target"
        return (f"spider_sosp Algorithm 2 ({self.rule}): ({mpmath.nstr(self.epsilon, 6)}, "
                f"{mpmath.nstr(self.dp_delta, 3)})-DP, mu={mpmath.nstr(self.mu, 8)} ({self.guarantee}), "
                f"delta({mpmath.nstr(self.target_epsilon, 6)})={mpmath.nstr(self.delta_at_target, 6)} [{verdict}], "
                f"sigma={mpmath.nstr(self.noise_std, 8)}, sbar={mpmath.nstr(self.sbar, 8)}, "
                f"{self.node_count} nodes per record ({self.count_rule}), Sigma={self.Sigma}, {self.tree_scope} tree, "
                f"{self.adjacency}")


@functools.lru_cache(maxsize=256)
def _plan(G, M, B, d, n, eps, delta, steps, adjacency, tree_scope, c_alpha, rule, sigma, count_rule, prec):
    # prec is part of the key only: the caller's precision is already set when this runs
    params = spider_sosp_parameters(lipschitz=G, smoothness=M, loss_gap=B, d=d, n=n, epsilon=eps, steps=steps,
                                    adjacency=adjacency, c_alpha=c_alpha)
    Sigma, sbar = params["T"], params["sbar"]
    if sigma is None:
        sigma = spider_sosp_sigma(rule, lipschitz=G, smoothness=M, loss_gap=B, d=d, n=n, epsilon=eps, delta=delta,
                                  steps=steps, adjacency=adjacency, tree_scope=tree_scope, c_alpha=c_alpha,
                                  allow_nonprivate=True)  # thm3.11 was refused (or allowed) by spider_sosp_plan
    count = _node_count(Sigma, tree_scope, count_rule)
    mu = _mu(sbar, count, sigma)
    delta_at_target = gaussian_delta(eps, mu)
    private = bool(delta_at_target <= delta)
    notes = [RULE_LABELS.get(rule, "sigma given by the caller")]
    if count_rule == "exact":
        notes.append(f"exact node count {count} (upper bound k_adj*L = "
                     f"{spider_sosp_node_count_upper_bound(Sigma, tree_scope)}); a node holding both changed leaves "
                     "cancels, incomplete nodes are never released")
    else:
        notes.append(f"a-priori node count k_adj*L = {count} (conservative)")
    if tree_scope == "global":
        notes.append("one tree for the run: a record changes its leaf and the next O1 restart leaf (spider_sosp.E5)")
    if adjacency == "zero_out":
        notes.append("zero-out neighbours: the paper's sensitivities; replace-one doubles them (spider_sosp.E1)")
    if not private:
        notes.append(f"delta(target epsilon) = {mpmath.nstr(delta_at_target, 8)} > dp_delta: the target is not met")
    return SpiderPrivacyPlan(
        adjacency=adjacency, tree_scope=tree_scope, Sigma=Sigma, sbar=sbar, node_count=count, count_rule=count_rule,
        noise_std=sigma, mu=mu, epsilon=gaussian_epsilon(delta, mu), dp_delta=delta, target_epsilon=eps,
        delta_at_target=delta_at_target, rule=rule, guarantee="gaussian-dp", private=private, note="; ".join(notes),
    )


def spider_sosp_plan(*, lipschitz, smoothness, loss_gap, d, n, epsilon, delta, steps=None, adjacency="replace_one",
                     tree_scope="global", c_alpha=1, rule=None, noise_std=None, count_rule="exact",
                     allow_nonprivate=False) -> SpiderPrivacyPlan:
    """The ``SpiderPrivacyPlan`` of a run of Algorithm 2 with target (ε, δ) .

    Problem constants, steps, adjacency, tree_scope and c_alpha: as in ``spider_sosp_sigma``. epsilon: the target ε;
    delta: the target δ (the plan's dp_delta). σ comes from ``rule`` (one of ``SPIDER_SOSP_RULES``; default
    "gdp_exact") or is given as ``noise_std`` (> 0; then rule must be None and the plan's rule is "given"), never
    both. count_rule: "exact" (default) or "upper_bound", the node count the plan's μ uses. "thm3.11" is refused
    unless allow_nonprivate=True (its plan then reports private=False). Memoised per working precision.
    """
    _check_flag("allow_nonprivate", allow_nonprivate)
    _check_choice("count_rule", count_rule, COUNT_RULES)
    if noise_std is not None:
        if rule is not None:
            raise ValueError(f"give either rule or noise_std, not both (got rule={rule!r} and noise_std={noise_std!r})")
        sigma, rule = mp_positive("noise_std", noise_std), "given"
    else:
        rule = "gdp_exact" if rule is None else _check_choice("rule", rule, SPIDER_SOSP_RULES)
        sigma = None
        if rule == "thm3.11" and not allow_nonprivate:
            raise ValueError(
                "rule 'thm3.11' (sigma = alpha/sqrt(d)) is not private (spider_sosp Theorem 3.11, erratum "
                "spider_sosp.E3); pass allow_nonprivate=True to compute its plan anyway"
            )
    # validate and convert once, at the caller's precision, so the memo key is the exact values used
    G, M, B = mp_positive("lipschitz", lipschitz), mp_positive("smoothness", smoothness), mp_positive("loss_gap", loss_gap)
    d = check_int("d", d, minimum=1)
    n = check_int("n", n, minimum=1)
    eps = mp_positive("epsilon", epsilon)
    delta = mp_delta("delta", delta)
    steps = None if steps is None else check_int("steps", steps, minimum=1)
    _check_choice("adjacency", adjacency, ADJACENCIES)
    _check_choice("tree_scope", tree_scope, TREE_SCOPES)
    c_alpha = mp_positive("c_alpha", c_alpha)
    return _plan(G, M, B, d, n, eps, delta, steps, adjacency, tree_scope, c_alpha, rule, sigma, count_rule,
                 mpmath.mp.prec)


def spider_sosp_privacy_report(plan):
    """The report of a plan: μ, ρ_z = μ²/2 (zCDP), δ(ε) at the target ε, ε(δ), and the verdict.

    Returns a dict: mu, rho_z, target_epsilon, delta_at_target_epsilon, dp_delta, epsilon_at_dp_delta, private,
    noise_std, node_count, count_rule, rule, rule_label (mpf scalars).
    """
    if not isinstance(plan, SpiderPrivacyPlan):
        raise TypeError(f"plan must be a SpiderPrivacyPlan, got {type(plan).__name__}")
    return {
        "mu": plan.mu,
        "rho_z": plan.mu**2 / 2,
        "target_epsilon": plan.target_epsilon,
        "delta_at_target_epsilon": plan.delta_at_target,
        "dp_delta": plan.dp_delta,
        "epsilon_at_dp_delta": plan.epsilon,
        "private": plan.private,
        "noise_std": plan.noise_std,
        "node_count": plan.node_count,
        "count_rule": plan.count_rule,
        "rule": plan.rule,
        "rule_label": RULE_LABELS.get(plan.rule, "sigma given by the caller"),
    }
