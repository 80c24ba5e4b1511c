"""Test problems, run settings and exact tree counts shared by the spider_sosp claims (private to the folder).

* The cosine families of ``reference.objectives_sosp`` with the settings the claims run them at.
* :func:`settings`: the hyper-parameters of Algorithm 2 for a test problem (``spider_sosp_theory.spider_settings``
  with the σ of ``spider_sosp_privacy.spider_sosp_sigma``): the CONFIGURATION handed to the subject, not the thing
  under test.
* :func:`run` and :func:`path`: one run of the subject's Algorithm 2 with fresh public and secret seeds, and its
  iterates x_0..x_t.
* :func:`exact_node_counts` (brute force over every pair of leaves) and :func:`node_count_formula` (closed form):
  the number of released node sums one record changes, computed here from the definition of the tree.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from reference.algorithms.spider_sosp_privacy import spider_sosp_sigma
from reference.algorithms.spider_sosp_theory import spider_settings
from reference.objectives_sosp import CosineFamily

__all__ = [
    "COS2",
    "COS3",
    "COS6",
    "X6",
    "settings",
    "seeds",
    "run",
    "path",
    "popcount",
    "exact_node_counts",
    "node_count_formula",
    "exact_batch",
    "exact_o1_batch",
    "FIXTURES",
    "lemma310_parameters",
    "leaf_sensitivity",
    "tree_levels",
]

#: The cosine problem of the saddle-escape study: saddle at 0, minima at (π, 0).
COS2 = CosineFamily([1.0, 1.0], [1.0, -1.0], 0.5)
#: Three unequal coordinates (the oracle claims).
COS3 = CosineFamily([1.0, 0.7, 1.3], [1.0, -1.0, 1.0], 0.5)
#: Six coordinates (the accuracy claim: more coordinates, smaller relative spread of ‖error‖²) and its start.
COS6 = CosineFamily([1.0, 0.8, 0.6, 1.0, 0.7, 0.9], [1.0, -1.0, 1.0, -1.0, -1.0, 1.0], 0.7)
X6 = np.array([0.4, -1.1, 0.9, 2.0, -0.3, 1.5])


def settings(family, x0, n, epsilon, *, delta=1e-5, steps=None, tree_scope="global", adjacency="replace_one",
             mode="unit"):
    """(SpiderSettings, σ) of Algorithm 2 for ``family`` started at ``x0`` with n records and target (ε, δ); σ = 0 for
    ε = inf. ρ is the family's (any ρ > 0 when its Hessian is constant)."""
    loss_gap = family.loss_gap(x0)
    sigma = 0.0
    if not math.isinf(epsilon):
        sigma = float(spider_sosp_sigma("gdp_exact", lipschitz=family.lipschitz, smoothness=family.smoothness,
                                        loss_gap=loss_gap, d=family.d, n=n, epsilon=epsilon, delta=delta, steps=steps,
                                        adjacency=adjacency, tree_scope=tree_scope))
    rho = family.hessian_lipschitz or 1.0
    s = spider_settings(n, family.d, family.lipschitz, family.smoothness, rho, loss_gap, epsilon, delta, mode=mode,
                        noise_std=None if math.isinf(epsilon) else sigma, steps=steps, adjacency=adjacency,
                        tree_scope=tree_scope)
    return s, sigma


def seeds(gen) -> dict:
    """A public seed and a secret seed (above 2^62, never equal to the public one) for one run."""
    return {"seed": int(gen.integers(2**62)), "noise_seed": int(gen.integers(2**62)) + 2**62}


def run(subject, family, data, x0, config, gen, gradient=None):
    """One run of the subject's Algorithm 2 on ``data`` with fresh seeds from ``gen``."""
    return subject.stochastic_spider(family.gradient if gradient is None else gradient, data, np.asarray(x0, float),
                                     config, **seeds(gen))


def path(result) -> np.ndarray:
    """x_0..x_t of a run, (t + 1, d)."""
    return np.vstack([np.asarray(result.initial_point, dtype=np.float64)[None, :],
                      np.asarray(result.iterates, dtype=np.float64).reshape(-1, len(result.initial_point))])


def popcount(k: int) -> int:
    return bin(int(k)).count("1")


# --- the tree: released nodes N_b = (b − lowbit(b), b], b = 1..Σ (a node is released when it completes) -----------

def exact_node_counts(max_sigma: int) -> tuple[np.ndarray, np.ndarray]:
    """(global, segment): for every Σ ≤ max_sigma (index Σ; entry 0 unused) the largest number of released node sums
    one record changes, by brute force over every pair of leaves.

    Leaf p lies in node N_b iff b − lowbit(b) < p ≤ b. A record read at leaf p shifts the increments by +δ at p
    and, with one tree for the run, by −δ at a later restart leaf q: the nodes containing exactly one of p, q change
    (a node holding both sees +δ − δ = 0), |chain(p)| + |chain(q)| − 2|chain(p) ∩ chain(q)| of them; with no restart
    (and with a tree per segment) |chain(p)|. Adding the leaf Σ adds the node N_Σ, so the Gram matrix
    G[p, q] = |chain(p) ∩ chain(q)| of the first Σ leaves is updated by one block of ones per Σ."""
    gram = np.zeros((max_sigma + 1, max_sigma + 1), dtype=np.int32)
    size = np.zeros(max_sigma + 1, dtype=np.int32)
    global_counts = np.zeros(max_sigma + 1, dtype=np.int64)
    segment_counts = np.zeros(max_sigma + 1, dtype=np.int64)
    for sigma in range(1, max_sigma + 1):
        low = sigma - (sigma & -sigma) + 1
        gram[low:sigma + 1, low:sigma + 1] += 1
        size[low:sigma + 1] += 1
        chain = size[1:sigma + 1]
        changed = chain[:, None] + chain[None, :] - 2 * gram[1:sigma + 1, 1:sigma + 1]
        segment_counts[sigma] = int(chain.max())
        global_counts[sigma] = max(int(chain.max()), int(changed.max()))
    return global_counts, segment_counts


def node_count_formula(sigma: int, tree_scope: str) -> int:
    """The closed form of :func:`exact_node_counts`, K = ⌊log2 Σ⌋: K + 1 per segment; with one tree,
    max(K + 1, 2K − 1, K + 2 + ⌊log2(Σ − 2^K)⌋ when Σ ≠ 2^K) (Σ = 1: 1).

    Why (the brute force confirms it for every Σ ≤ 1024): with x = p − 1 < y = q − 1 and D the highest bit where they
    differ, the blocks above D are shared and cancel, p's block at D is released, q's is not, and below D the released
    blocks of p (bits 0 of x) and of q (bits 0 of y whose block ends by Σ) are all distinct: c = 1 + #{h < D: x_h = 0}
    + #{h < D: y_h = 0, block ends ≤ Σ}, largest at p = 1 with q = 2^{K−1} + 1 (D = K − 1) or q = 2^K + 1 (D = K)."""
    top = sigma.bit_length() - 1
    if tree_scope == "segment" or sigma == 1:
        return top + 1
    best = max(top + 1, 2 * top - 1)
    if sigma != 2**top:
        best = max(best, top + 2 + (sigma - 2**top).bit_length() - 1)
    return best


# --- Lemma 3.8's batch sizes, exactly (rationals) ----------------------------------------------------------------

def _ceil_sqrt(q: Fraction) -> int:
    """⌈√q⌉ for a rational q ≥ 0: the smallest integer m with m² ≥ q."""
    m = math.isqrt(max(0, math.floor(q)))
    while m * m < q:
        m += 1
    while m > 0 and (m - 1) ** 2 >= q:
        m -= 1
    return m


def exact_batch(v, alpha, epsilon, d, kappa) -> int:
    """b_t = max(⌈v√d/(αε)⌉, ⌈κv/α²⌉, 1) for the float inputs, exactly (ε = inf drops the first term)."""
    v, alpha, kappa = Fraction(float(v)), Fraction(float(alpha)), Fraction(float(kappa))
    privacy = 0 if math.isinf(epsilon) else _ceil_sqrt(v * v * d / (alpha * Fraction(float(epsilon))) ** 2)
    return max(privacy, math.ceil(kappa * v / (alpha * alpha)), 1)


def exact_o1_batch(lipschitz, d, epsilon, alpha) -> int:
    """b = ⌈G√d/(εα) + G²/α²⌉ for the float inputs, exactly: the smallest integer k with k ≥ r and (k − r)² ≥ q,
    r = G²/α², q = G²d/(εα)² (ε = inf: q = 0)."""
    G, alpha = Fraction(float(lipschitz)), Fraction(float(alpha))
    r = G * G / (alpha * alpha)
    q = Fraction(0) if math.isinf(epsilon) else G * G * d / (Fraction(float(epsilon)) * alpha) ** 2
    k = math.ceil(r) + max(0, _ceil_sqrt(q) - 1)
    while k > math.ceil(r) and (k - 1 - r) ** 2 >= q:
        k -= 1
    while not (k >= r and (k - r) ** 2 >= q):
        k += 1
    return k


# --- the privacy fixtures and their a-priori leaf sensitivity --------------------------------------------------

#: (G, M, B, d, n, ε, δ) of the three fixtures (ρ does not enter the noise).
FIXTURES = {
    1: {"lipschitz": 1.0, "smoothness": 1.0, "loss_gap": 1.0, "d": 10, "n": 10**6, "epsilon": 1.0, "delta": 1e-6},
    2: {"lipschitz": 1.0, "smoothness": 1.0, "loss_gap": 1.0, "d": 100, "n": 10**5, "epsilon": 0.1, "delta": 1e-6},
    3: {"lipschitz": 1.0, "smoothness": 1.0, "loss_gap": 1.0, "d": 2, "n": 10**5, "epsilon": 4.0, "delta": 1e-5},
}


def lemma310_parameters(lipschitz, smoothness, loss_gap, d, n, epsilon, **_):
    """(α, κ, b, coef_bt) of Lemma 3.10 / Lemma 3.8 in float64, from the printed formulas (c_α = 1)."""
    G, M, B = lipschitz, smoothness, loss_gap
    alpha = (((B * G * M) ** (1 / 3) + math.sqrt(B * M)) * math.sqrt(math.sqrt(d) / (n * epsilon))
             + ((B * M) ** (2 / 9) * G ** (5 / 9) + (B * M) ** (4 / 9) * G ** (1 / 9)) / n ** (1 / 3)
             + math.sqrt(M * B / n))
    kappa = max(alpha * math.sqrt(d) / epsilon, (B * G * M) ** (1 / 3))
    b = exact_o1_batch(G, d, epsilon, alpha)
    coefficient = max(math.sqrt(d) / (alpha * epsilon), kappa / alpha**2)
    return alpha, kappa, b, coefficient


def leaf_sensitivity(params, adjacency) -> float:
    """sbar = c_adj·max(G/b, 1/coef_bt): the a-priori bound on one leaf's change (c_adj = 2 replace-one, 1 zero-out;
    Lemma 3.7 with spider_sosp.E1)."""
    _, _, b, coefficient = lemma310_parameters(**params)
    return (2.0 if adjacency == "replace_one" else 1.0) * max(params["lipschitz"] / b, 1.0 / coefficient)


def tree_levels(steps: int) -> int:
    """L = ⌈log2 T⌉ + 1."""
    return (steps - 1).bit_length() + 1
