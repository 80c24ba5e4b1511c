"""dpzero §2 clipping and sensitivity; zo_o2nc Alg 5, Theorem 4.3 tree aggregation.

Clipping (dpzero, "Notation" of §2):

* ``clip_scalar``: clip_C(a) = max(−C, min(C, a)), the scalar clip DPZero applies to each finite
  difference.
* ``clip_vector``: clip_C(v) = v·min(1, C/‖v‖) with clip_C(0) = 0.
* ``clipped_mean``: Σ_i clip_C(a_i) / n, or / (expected batch size) under Poisson sampling.
* ``clipped_mean_sensitivity``: its ℓ2-sensitivity, 2C/n under REPLACE-ONE (dpzero App. E, tight:
  one item moves from +Ce to −Ce), C/n under add/remove with a fixed normaliser.

The Gaussian mechanism (zo_o2nc §2, dpzero Lemma 2.2 before calibration): value + σ·N(0, I).

Tree aggregation (zo_o2nc Alg 5, Remark 4.2, Theorem 4.3, App. C), 1-based time t:

* NODE(t) is the dyadic decomposition of [1, t] taken from the top of the tree down; equivalently the
  Fenwick form {(b − lowbit(b) + 1, b) : b ∈ R(t)} with R(t) = t, t − lowbit(t), … > 0, so
  |NODE(t)| = popcount(t).
* Each right endpoint b belongs to exactly one node N_b = [b − lowbit(b) + 1, b], so the tree draws
  exactly one fresh Gaussian ξ_b ~ N(0, σ_b² I_d) per time step and TREE(t) = Σ_{(·,b)∈NODE(t)} ξ_b.
* Data block q influences the nodes N_b with q ∈ N_b, b ≤ n: the Fenwick update chain q, q + lowbit(q),
  … ≤ n (App. C's OUT(q)). Its longest length is ⌊log2 n⌋ + 1, reached only at q = 1 (erratum zo_o2nc.E3: the
  paper's "⌈log2 n⌉ + 1 ≤ 2 ln n" is false for small n).

Every function keeps the arithmetic of its input: float64 in, float64 out; mpmath (object arrays of
``mpmath.mpf``) in, mpmath out, at the caller's working precision. Random draws are always float64
``rng.standard_normal`` calls (turned into mpmath exactly when the value is mpmath), so the reference
and the fast backend consume identical draws.
"""

from __future__ import annotations

import numbers

import mpmath
import numpy as np

from .precision import clip_norm, is_mp, to_mp
from .validation import check_array, check_int, check_real

__all__ = [
    "clip_scalar",
    "clip_vector",
    "clipped_mean",
    "clipped_mean_sensitivity",
    "gaussian_mechanism",
    "tree_node",
    "lowbit",
    "fenwick_chain",
    "tree_node_fenwick",
    "participation_chain",
    "participation_count",
    "max_participation_count",
    "tree_noise_covariance",
    "tree_aggregate",
    "TreeMechanism",
    "NEIGHBOUR_RELATIONS",
]

#: Neighbouring relations understood by ``clipped_mean_sensitivity``.
NEIGHBOUR_RELATIONS = ("replace_one", "add_remove")


# ---------------------------------------------------------------------------------------------------
# Input helpers (private)


def _real_array(name: str, value, *, ndim: int | tuple[int, ...] | None) -> np.ndarray:
    """A finite real array of the given dimension(s) (None: any); object arrays become ``mpf`` arrays."""
    if isinstance(value, np.ndarray) and value.dtype.kind not in "fiuO":
        # complex would lose its imaginary part and bool is almost surely a mistake
        raise TypeError(f"{name} must be an array of real numbers, got dtype {value.dtype}")
    if isinstance(value, np.ndarray) and value.dtype == object:
        for entry in value.flat:
            if isinstance(entry, bool) or not isinstance(entry, (numbers.Real, mpmath.mpf)):
                raise TypeError(
                    f"{name} entries must be real numbers or mpmath.mpf, got {type(entry).__name__}"
                )
    arr = check_array(name, value)
    allowed = (ndim,) if isinstance(ndim, int) else ndim
    if allowed is not None and arr.ndim not in allowed:
        want = " or ".join(str(k) for k in allowed)
        raise ValueError(f"{name} must have {want} dimension(s), got shape {arr.shape}")
    return to_mp(arr) if arr.dtype == object else arr


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _check_noise_stds(noise_stds) -> np.ndarray:
    """σ_1..σ_T: a non-empty 1-D array of finite, non-negative stds."""
    stds = _real_array("noise_stds", noise_stds, ndim=1)
    if stds.shape[0] == 0:
        raise ValueError("noise_stds must have at least one entry (one σ_t per round t)")
    if any(not s >= 0 for s in stds):
        raise ValueError("noise_stds must be >= 0 entrywise")
    return stds


def _in_arithmetic_of(reference_is_mp: bool, scalar):
    """A scalar parameter converted to the arithmetic of the data it acts on."""
    return mpmath.mpf(scalar) if reference_is_mp else float(scalar)


def _zeros(d: int, mp: bool) -> np.ndarray:
    if mp:
        out = np.empty(d, dtype=object)
        out.fill(mpmath.mpf(0))
        return out
    return np.zeros(d)


# ---------------------------------------------------------------------------------------------------
# Clipping (dpzero §2)


def clip_scalar(value, clip_threshold):
    """clip_C(a) = max(−C, min(C, a)) (dpzero §2, scalar case).

    value: a, a real scalar (float or ``mpmath.mpf``) or a 1-D array (float64 or mpmath), clipped
    elementwise.
    clip_threshold: C > 0; ``inf`` is allowed and makes the clip a no-op.

    Returns the same kind of object as ``value`` (mpmath stays mpmath).
    """
    clip_threshold = check_real("clip_threshold", clip_threshold, positive=True, allow_inf=True)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]  # a 0-d array is a scalar
    if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        a = check_real("value", value)
        bound = _in_arithmetic_of(is_mp(a), clip_threshold)
        return max(-bound, min(bound, a))
    values = _real_array("value", value, ndim=1)
    mp = values.dtype == object
    bound = _in_arithmetic_of(mp, clip_threshold)
    out = np.empty(values.shape, dtype=values.dtype)
    for i, a in enumerate(values):
        out[i] = max(-bound, min(bound, a))
    return out


def clip_vector(vector, clip_threshold):
    """clip_C(v) = v·min(1, C/‖v‖), with clip_C(0) = 0 (dpzero §2.1 leaves it undefined: dpzero.E20).

    vector: v, a 1-D float64 or mpmath vector with at least one entry.
    clip_threshold: C > 0; ``inf`` makes the clip a no-op.

    Evaluated by ``precision.clip_norm``, which scales float64 vectors by max|v| so that ‖v‖² cannot
    overflow (entries ≳ 1e154 would otherwise clip to 0) or underflow (≲ 1e-154 would skip a clip).
    """
    clip_threshold = check_real("clip_threshold", clip_threshold, positive=True, allow_inf=True)
    v = _real_array("vector", vector, ndim=1)
    if v.shape[0] == 0:
        raise ValueError("vector must have at least one entry")
    if v.dtype == object:
        return clip_norm(v, mpmath.mpf(clip_threshold))
    return clip_norm(v, float(clip_threshold))


def clipped_mean(values, clip_threshold, normalizer=None):
    """Σ_{i=1}^{n} clip_C(values_i) / (normalizer or n) (dpzero Alg 1 line 5 and Alg 2 line 5).

    values: shape (n,) — n scalars, each clipped with ``clip_scalar`` (DPZero's finite differences);
        or shape (n, d) — n vectors (rows), each clipped with ``clip_vector`` (DP-GD gradients).
        float64 or mpmath.
    clip_threshold: C > 0 (``inf`` = no clipping).
    normalizer: None for the mean over the n given items (fixed-size batches, REPLACE-ONE);
        a fixed public value > 0 — the expected batch size — under Poisson sampling, where the
        realised n is random and may be 0 (``values`` of length 0 is allowed only then).

    Returns a scalar for shape (n,), a (d,) vector for shape (n, d), in the arithmetic of ``values``.
    """
    clip_threshold = check_real("clip_threshold", clip_threshold, positive=True, allow_inf=True)
    items = _real_array("values", values, ndim=(1, 2))
    if normalizer is not None:
        normalizer = check_real("normalizer", normalizer, positive=True)
    n = items.shape[0]
    if n == 0 and normalizer is None:
        raise ValueError("values must contain at least one item when normalizer is None (mean of nothing)")
    if items.ndim == 2 and items.shape[1] == 0:
        raise ValueError(f"values must have at least one column, got shape {items.shape}")
    mp = items.dtype == object
    total = _zeros(items.shape[1], mp) if items.ndim == 2 else _in_arithmetic_of(mp, 0)
    for i in range(n):  # the paper's Σ_i, one item at a time
        if items.ndim == 1:
            total = total + clip_scalar(items[i], clip_threshold)
        else:
            total = total + clip_vector(items[i], clip_threshold)
    denominator = n if normalizer is None else _in_arithmetic_of(mp, normalizer)
    return total / denominator


def clipped_mean_sensitivity(clip_threshold, n, relation="replace_one"):
    """ℓ2-sensitivity Δ of ``clipped_mean`` (dpzero App. E; zo_o2nc §2: neighbours differ in one data point).

    clip_threshold: C > 0, finite (an unclipped mean has unbounded sensitivity).
    n: the divisor of the mean — the dataset/batch size for REPLACE-ONE, the fixed ``normalizer``
        for add/remove.
    relation:
      * ``"replace_one"`` (the papers' relation: fixed n, one record substituted): Δ = 2C/n, tight
        (one item moves from +Ce to −Ce).
      * ``"add_remove"``: Δ = C/n. Valid ONLY when the sum is divided by a fixed, data-independent
        normaliser n (``clipped_mean(..., normalizer=n)``, e.g. Poisson sampling with expected
        batch size n); dividing by the realised count changes both numerator and denominator and
        this bound does not hold.

    Returns C's arithmetic (mpmath for an ``mpf`` C, else float).
    """
    clip_threshold = check_real("clip_threshold", clip_threshold, positive=True)
    n = check_int("n", n, minimum=1)
    if not isinstance(relation, str) or relation not in NEIGHBOUR_RELATIONS:
        raise ValueError(f"relation must be one of {NEIGHBOUR_RELATIONS}, got {relation!r}")
    factor = 2 if relation == "replace_one" else 1
    return factor * clip_threshold / n


# ---------------------------------------------------------------------------------------------------
# Gaussian mechanism (zo_o2nc §2; dpzero Alg 1 line 5, Alg 2 line 6)


def gaussian_mechanism(value, noise_std, rng):
    """value + σ·N(0, I) (zo_o2nc §2; the noisy release in DPZero Alg 1/Alg 2).

    value: the query answer q(Z): a real scalar or an array of any shape, float64 or mpmath.
    noise_std: σ ≥ 0, finite. σ = 0 returns ``value`` unchanged but STILL DRAWS, so that a run with
        the noise switched off consumes the same random numbers as the private run.
    rng: a ``numpy.random.Generator``.

    Draw schedule: exactly one call — ``rng.standard_normal()`` for a scalar value,
    ``rng.standard_normal(np.shape(value))`` for an array. An mpmath value gets the float64 draw
    converted exactly and the sum formed in mpmath.
    """
    noise_std = check_real("noise_std", noise_std, nonnegative=True)
    _check_rng(rng)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]  # a 0-d array is a scalar
    if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        q = check_real("value", value)
        z = rng.standard_normal()
        if is_mp(q):
            return q + mpmath.mpf(noise_std) * mpmath.mpf(z)
        return q + float(noise_std) * z
    values = _real_array("value", value, ndim=None)
    z = rng.standard_normal(values.shape)
    if values.dtype == object:
        return values + to_mp(z) * mpmath.mpf(noise_std)
    return values + float(noise_std) * z


# ---------------------------------------------------------------------------------------------------
# Tree: NODE, Fenwick chains, participation (zo_o2nc Alg 5, §1.7, Remark 4.2, App. C)


def tree_node(t):
    """NODE(t) of zo_o2nc Alg 5, by the literal loop (largest node ≤ t in each layer, top down).

    t: 1-based time step, t ≥ 1. Returns the nodes (a, b) (leftmost leaf a, rightmost leaf b) in the
    order the loop produces them, i.e. increasing a. NODE(7) = [(1,4), (5,6), (7,7)].
    """
    t = check_int("t", t, minimum=1)
    top = t.bit_length() - 1  # ⌊log2 t⌋
    k, nodes = 0, []
    for i in range(top + 1):  # "for i = 0, 1, …, ⌊log2 t⌋ while k < t"
        if not k < t:
            break
        k_next = k + 2 ** (top - i)
        if k_next <= t:
            nodes.append((k + 1, k_next))
            k = k_next
    return nodes


def lowbit(t):
    """lowbit(t) = t & −t, the largest power of 2 dividing t, t ≥ 1."""
    t = check_int("t", t, minimum=1)
    return t & -t


def fenwick_chain(t):
    """R(t) = t, t − lowbit(t), … > 0: the right endpoints of NODE(t), decreasing (zo_o2nc Alg 5)."""
    t = check_int("t", t, minimum=1)
    chain = []
    while t > 0:
        chain.append(t)
        t -= t & -t
    return chain


def tree_node_fenwick(t):
    """NODE(t) in Fenwick form [(b − lowbit(b) + 1, b) for b ∈ R(t)], ordered like ``tree_node``.

    zo_o2nc Alg 5 (equivalence verified in tests for t ≤ 2048).
    """
    return sorted((b - lowbit(b) + 1, b) for b in fenwick_chain(t))


def participation_chain(q, n):
    """Right endpoints b ≤ n of the nodes N_b that contain leaf q: q, q + lowbit(q), … ≤ n.

    zo_o2nc App. C: these are the mechanisms in OUT(q), the node releases whose distribution
    depends on data block q (the Fenwick update chain). q: leaf, 1 ≤ q ≤ n; n: number of leaves.
    """
    n = check_int("n", n, minimum=1)
    q = check_int("q", q, minimum=1, maximum=n)
    chain = []
    b = q
    while b <= n:
        chain.append(b)
        b += b & -b
    return chain


def participation_count(q, n):
    """c_q(n) = |OUT(q)|, the number of tree nodes (with b ≤ n) that contain leaf q (zo_o2nc App. C)."""
    return len(participation_chain(q, n))


def max_participation_count(n):
    """max_{q ∈ [n]} c_q(n), computed from the definition by scanning every leaf q.

    Closed form (erratum zo_o2nc.E3): ⌊log2 n⌋ + 1, attained only at q = 1 (whose chain is
    1, 2, 4, …, 2^⌊log2 n⌋); every q ≥ 2 has c_q(n) ≤ ⌊log2 n⌋.
    """
    n = check_int("n", n, minimum=1)
    return max(participation_count(q, n) for q in range(1, n + 1))


def tree_noise_covariance(t, t_other, noise_stds):
    """The scalar c with Cov(TREE(t), TREE(t')) = c·I_d: Σ_{b ∈ R(t) ∩ R(t')} σ_b² (zo_o2nc Alg 5, Cor 4.5).

    t, t_other: 1-based times t, t' in [1, T]. noise_stds: σ_1..σ_T (noise_stds[b−1] = σ_b), float64
    or mpmath. With t = t' this is E‖TREE(t)‖²/d (= popcount(t)·σ² for constant σ, Cor. 4.5 exact).
    """
    stds = _check_noise_stds(noise_stds)
    horizon = stds.shape[0]
    t = check_int("t", t, minimum=1, maximum=horizon)
    t_other = check_int("t_other", t_other, minimum=1, maximum=horizon)
    shared = set(fenwick_chain(t_other))
    mp = stds.dtype == object
    total = _in_arithmetic_of(mp, 0)
    for b in fenwick_chain(t):
        if b in shared:  # ξ_b appears in both sums; distinct ξ's are independent
            sigma_b = stds[b - 1] if mp else float(stds[b - 1])
            total = total + sigma_b**2
    return total


# ---------------------------------------------------------------------------------------------------
# Tree aggregation (zo_o2nc Theorem 4.3 and its proof) and the streaming TREE (Alg 5)


def tree_aggregate(leaf_values, node_noise):
    """The tree release x_t = Σ_{(a,b)∈NODE(t)} (Σ_{i=a}^{b} m_i + ξ_b), t = 1..n (zo_o2nc Thm 4.3).

    Computed literally as in the proof of Theorem 4.3: first every node release
    R_(a,b) = Σ_{i=a}^{b} m_i + ξ_b for the n nodes N_b = (b − lowbit(b) + 1, b), then each prefix
    as the sum of the node releases of NODE(t). Because Σ_{(a,b)∈NODE(t)} Σ_{i=a}^{b} = Σ_{i=1}^{t},
    row t−1 equals Σ_{i≤t} m_i + TREE(t).

    leaf_values: m, shape (n, d); row i−1 is m_i (Thm 4.3's M^(i) output, Alg 4's g increments).
    node_noise: ξ, shape (n, d); row b−1 is ξ_b, already scaled by σ_b.
    Either may be mpmath; the result is mpmath if either is (float64 converts exactly).
    Returns the released prefix sums, shape (n, d).
    """
    m = _real_array("leaf_values", leaf_values, ndim=2)
    xi = _real_array("node_noise", node_noise, ndim=2)
    if xi.shape != m.shape:
        raise ValueError(f"node_noise must have the shape of leaf_values {m.shape}, got {xi.shape}")
    n, d = m.shape
    if n == 0 or d == 0:
        raise ValueError(f"leaf_values must have at least one row and one column, got shape {m.shape}")
    mp = m.dtype == object or xi.dtype == object
    if mp:
        m, xi = to_mp(m), to_mp(xi)
    node_release = {}
    for b in range(1, n + 1):
        a = b - lowbit(b) + 1
        total = _zeros(d, mp)
        for i in range(a, b + 1):
            total = total + m[i - 1]
        node_release[(a, b)] = total + xi[b - 1]
    released = np.empty((n, d), dtype=object if mp else np.float64)
    for t in range(1, n + 1):
        total = _zeros(d, mp)
        for node in tree_node(t):
            total = total + node_release[node]
        released[t - 1] = total
    return released


class TreeMechanism:
    """Streaming TREE(t) of zo_o2nc Alg 5 (one epoch at a time; Alg 4 calls it once per round).

    d: dimension of the noise vectors.
    noise_stds: σ_1..σ_T (noise_stds[t−1] = σ_t), finite and ≥ 0; float64 or mpmath.
    rng: a ``numpy.random.Generator``, the private-noise stream.

    ``mech(t)`` must be called with t = 1, 2, …, T in order; t = 1 starts a new epoch (Alg 5 line 1:
    NOISE = {}). Any other order raises ``ValueError``.

    Draw schedule: call t draws ``rng.standard_normal(d)`` once and stores ξ_t = σ_t·z_t (Alg 5 line
    2), also when σ_t = 0. T successive calls therefore consume the generator exactly like one
    ``rng.standard_normal((T, d))`` call scaled row-wise (this is what ``fast.tree_noise_all``
    draws). With mpmath ``noise_stds`` the float64 z_t is converted exactly and scaled in mpmath.

    ``node_noise`` holds the ξ drawn so far in the current epoch, shape (t, d).
    """

    def __init__(self, d, noise_stds, rng):
        self.d = check_int("d", d, minimum=1)
        self.noise_stds = _check_noise_stds(noise_stds)
        self.horizon = self.noise_stds.shape[0]  # T
        self.rng = _check_rng(rng)
        self._mp = self.noise_stds.dtype == object
        self._noise: list[np.ndarray] = []
        self.last_t = 0  # 0: no call yet in this epoch

    def reset(self) -> None:
        """Forget the stored noise (what a call with t = 1 does first)."""
        self._noise = []
        self.last_t = 0

    @property
    def node_noise(self) -> np.ndarray:
        """ξ_1..ξ_t of the current epoch as a (t, d) array (a copy)."""
        if not self._noise:
            return np.empty((0, self.d), dtype=object if self._mp else np.float64)
        return np.array(self._noise, dtype=object if self._mp else np.float64).reshape(-1, self.d)

    def __call__(self, t) -> np.ndarray:
        """TREE(t) = Σ_{(·,b)∈NODE(t)} ξ_b, drawing ξ_t first (Alg 5 lines 1–3)."""
        t = check_int("t", t, minimum=1, maximum=self.horizon)
        if t == 1:
            self.reset()  # Alg 5 line 1: a new epoch
        elif t != self.last_t + 1:
            raise ValueError(
                f"t must be 1 (new epoch) or {self.last_t + 1} (the next round), got t={t}"
            )
        z = self.rng.standard_normal(self.d)
        sigma = self.noise_stds[t - 1]
        xi = to_mp(z) * sigma if self._mp else float(sigma) * z
        self._noise.append(xi)
        self.last_t = t
        total = _zeros(self.d, self._mp)
        for _, b in tree_node(t):
            total = total + self._noise[b - 1]
        return total
