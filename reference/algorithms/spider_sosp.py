"""spider_sosp Algorithms 2 and 3 (Liu, Talwar, "Adaptive Batch Size for Privately Finding Second-Order Stationary
Points", arXiv 2024): private Stochastic SpiderBoost with adaptive O2 batches, tree-aggregated noise and saddle
perturbations; and the perturbed inexact gradient descent of Lemma 3.3.

Written to be read beside the pseudocode. ``stochastic_spider`` runs Algorithm 2 (paper line numbers in brackets):

    [2]  drift_0 = κ, frozen_{−1} = 1, t = 0;  order = a public random permutation of the n records
    [3]  while t < T:
             kind, need = (O1, b) if drift_t ≥ κ else (O2, b_t),  b_t = adaptive_batch_size(‖g̃_{t−1}‖, α, ε, d, κ)
             halt if fewer than `need` unused records remain
    [4–5]    if drift_t ≥ κ:  ∇_t = O1(x_t);  drift_t = 0
    [6–7]    else:            ∇_t = ∇_{t−1} + O2(x_t, x_{t−1})
    [5, 7]   frozen_t = frozen_{t−1} − 1
    [9]      if frozen_{t−1} ≤ 0 and ‖g̃_{t−1}‖ ≤ threshold:
    [10]         frozen_t = Γ   (and drift_t = 0 only with reset_drift_on_perturb)
    [11]         g̃_t = ∇_t + TREE(leaf_t) + g_t,  g_t ~ N(0, ζ²/d I_d)
    [13]     else: g̃_t = ∇_t + TREE(leaf_t)
    [15]     x_{t+1} = x_t − η g̃_t (η = 1/M);  drift_{t+1} = drift_t + ‖g̃_t‖₂;  t = t + 1
    [17] return {x_1, …, x_t}

with the oracles of Algorithm 3 (``GradientOracles``): O1(x) = (1/b) Σ_{z∈S} ∇f(x; z) and O2(x, x') = (1/b_t)
Σ_{z∈S} (∇f(x; z) − ∇f(x'; z)), S a batch of UNUSED records — the same record z at both points of O2, every record
read at most once (one pass, disjoint batches). Every branch reads only public inputs and released values g̃.

Readings of the printed algorithm, where arXiv v1 is wrong or silent (the literal reading is a flag where it is a
meaningful variant):

* b_t (Lemma 3.8) is printed with ‖g̃_t‖, which is not known when b_t is chosen; the O2 query of step t moves by
  ‖x_t − x_{t−1}‖ = ‖g̃_{t−1}‖/M, so b_t uses ‖g̃_{t−1}‖. Batch sizes are the exact ceilings of the formulas
  (rational arithmetic on the float64 inputs), so b_t ≥ coef_bt·‖g̃_{t−1}‖ and the sensitivity bounds never fail by
  rounding. b follows Lemma 3.8 (Theorem 3.11's G(√d/(εα) + 1/α²) is dimensionally inconsistent).
* Halting (line 3): "while t < T and #unused > b" does not ensure enough records for an O2 batch with b_t > b. The
  run computes the size the next step needs and halts when fewer unused records remain (a public test).
* Line 9 reads g̃_{t−1}, undefined at t = 0; frozen_{−1} = 1 makes the test false there, so it is evaluated frozen
  first. The perturbation is added at x_t, one step after the small release.
* Line 10 also resets drift at a perturbation step without an O1 query, but the proof of Lemma 3.6 treats the last
  drift reset as an O1 query: with the reset the SPIDER chain can run past κ and Lemma 3.8's accuracy no longer
  follows. ``reset_drift_on_perturb`` (literal: True; default False). ``perturb=False`` disables the whole
  line 9 branch (the no-perturbation ablation).
* drift (line 15) is the un-squared Σ‖g̃_i‖ (gradient units, no η), as Lemmas 3.8 and 3.9 use it.
* TREE(t) (Algorithm 1) is defined for t ∈ [Σ], Algorithm 2 starts at t = 0. ``tree_scope="global"`` (the literal
  reading): one tree for the run, step t uses leaf t + 1 — a record then changes its own leaf and the next restart
  leaf (spider_sosp.E5). ``"segment"``: a fresh tree at every O1 step τ, step t uses leaf t − τ + 1 (one leaf per
  record). Algorithm 1 as printed draws scalar node noise and its NODE loop cannot reach t = Σ; the tree here is
  the shared ``reference.mechanisms.TreeMechanism`` (Fenwick nodes, N(0, σ² I_d) per node, TREE(t) ~
  N(0, popcount(t)σ² I_d)), with Σ = T leaves.
* "Draw a batch among unused functions" (Algorithm 3) has no rule; it must not depend on the data. The run draws one
  permutation from the PUBLIC seed and consumes it in consecutive slices (records are i.i.d., so any data-independent
  order is the same algorithm; no amplification by sampling is claimed).
* T is never given a number (Proposition 3.4: Õ(BM/γ²)); ``steps=None`` takes T = n (each step reads ≥ 1 record).
* Output: the set {x_1, …, x_t} (x_0 excluded) with no private selection; Theorem 3.11's utility claim is that
  some iterate is an SOSP. Lemma 3.3, on which that claim rests, is false for bounded adversarial errors (the tests
  run the counterexample with ``perturbed_inexact_descent``): treat the SOSP guarantee of v1 as unproven. Privacy does
  not depend on it.
* Neighbours (``adjacency``): the paper's sensitivities G/b and M‖Δx‖/b_t hold for zero-out neighbours; replacing one
  record doubles them (spider_sosp.E1). The relation only decides σ (``spider_sosp_privacy``); the config records it.

Randomness schedule (docs/design.md, randomness contract). ``seed`` is PUBLIC; ``noise_seed`` is SECRET (fresh
operating-system entropy when None; ``reference.secrets``). Keys under the paper key "spider_sosp":

* ("spider_sosp", "permutation"), public seed: one call ``rng.permutation(n)``, the order in which records are read.
* ("spider_sosp", "noise"), secret seed: the tree's generator; every step draws ``standard_normal(d)`` once (the
  node noise ξ of ``TreeMechanism``, also when σ = 0).
* ("spider_sosp", "perturbation", t), secret seed: one call ``standard_normal(d)`` at each perturbation step t,
  scaled by ζ/√d (``saddle_perturbation``). The perturbation is not what makes the run private (it is independent of
  the data, so the accounting treats it as post-processing and would not change if it were public); it is secret
  because the escape argument needs a perturbation that nothing choosing the gradient errors can anticipate — an
  adversary who knows it in advance can choose data (or bounded errors) that cancel it, which is exactly how the
  counterexample to Lemma 3.3 works.

What a run returns (``SpiderResult``): the iterates x_1..x_t and the ``PublicTrace`` (the released g̃_t, step kinds,
batch sizes, drift values, tree leaves, perturbation steps, the public record order and the records used) are what
the privacy accounting covers, with their post-processing. ``NonPrivateDebugTrace`` (the noiseless estimates ∇_t,
the tree noise, the perturbations, replacement counts) is computed on the private data or from the secret seed and
is NOT PRIVATE: never publish it.

Arithmetic: float64 (no finite differences here; ``reference.stationarity`` measures float64 iterates). mpmath
inputs are refused with a TypeError.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from ..mechanisms import TreeMechanism
from ..precision import norm
from ..rng import SEED_BOUND, Streams
from ..secrets import secret_seed
from ..validation import check_array, check_int, check_real

__all__ = [
    "KEY",
    "ADJACENCIES",
    "TREE_SCOPES",
    "STEP_KINDS",
    "o1_batch_size",
    "adaptive_batch_size",
    "saddle_perturbation",
    "public_permutation",
    "GradientOracles",
    "SpiderConfig",
    "PublicTrace",
    "NonPrivateDebugTrace",
    "SpiderResult",
    "ReplayedSchedule",
    "stochastic_spider",
    "replay_schedule",
    "EscapePath",
    "perturbed_inexact_descent",
]

KEY = "spider_sosp"
#: Neighbouring relations σ may be calibrated for (spider_sosp.E1): replace one record, or zero one out.
ADJACENCIES = ("replace_one", "zero_out")
#: One tree for the run ("global", the literal reading) or a fresh tree per O1 segment (spider_sosp.E5).
TREE_SCOPES = ("global", "segment")
STEP_KINDS = ("O1", "O2")


# ---------------------------------------------------------------------------------------------------
# Input helpers


def _float_vector(name: str, value, length: int | None = None) -> np.ndarray:
    """A finite float64 vector (mpmath refused: this module computes in float64)."""
    arr = check_array(name, value, ndim=1)
    if arr.dtype == object:
        raise TypeError(f"{name} must be float64 (this module computes in float64); convert mpmath values with "
                        "reference.precision.to_float")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have shape ({length},), got {arr.shape}")
    return np.array(arr, dtype=np.float64)


def _float(name: str, value, **rules) -> float:
    return float(check_real(name, value, **rules))


def _check_bool(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def _check_choice(name: str, value, choices: tuple) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def _check_generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


# ---------------------------------------------------------------------------------------------------
# Batch sizes (Lemma 3.8), exact ceilings


def _ceil_sqrt(q: Fraction) -> int:
    """⌈√q⌉ for a rational q ≥ 0, exactly: the smallest integer m with m² ≥ q, i.e. with m² ≥ ⌈q⌉."""
    c = math.ceil(q)
    return 0 if c <= 0 else math.isqrt(c - 1) + 1


def _ceil_sum_sqrt(r: Fraction, q: Fraction) -> int:
    """⌈r + √q⌉ for rationals r, q ≥ 0, exactly: the smallest integer k with k ≥ r and (k − r)² ≥ q."""
    k = math.ceil(r) + _ceil_sqrt(q) - 1  # ⌈r⌉ + ⌈√q⌉ − 2 < r + √q ≤ ⌈r⌉ + ⌈√q⌉: the answer is k or k + 1
    return k if (k >= r and (k - r) ** 2 >= q) else k + 1


def o1_batch_size(lipschitz, d, epsilon, alpha) -> int:
    """b = ⌈G√d/(εα) + G²/α²⌉, the O1 batch of spider_sosp Lemma 3.8 (Algorithm 2 line 5).

    lipschitz: G > 0. d: dimension ≥ 1. epsilon: ε > 0, or inf for the non-private limit (the privacy term
    G√d/(εα) vanishes). alpha: α > 0.

    The ceiling is exact for the float64 inputs (rational arithmetic), so b ≥ G√d/(εα) + G²/α² always holds.
    Theorem 3.11 prints b = G(√d/(εα) + 1/α²), which is dimensionally inconsistent; Lemma 3.8's form is used.
    """
    G = Fraction(_float("lipschitz", lipschitz, positive=True))
    d = check_int("d", d, minimum=1)
    epsilon = _float("epsilon", epsilon, positive=True, allow_inf=True)
    alpha = Fraction(_float("alpha", alpha, positive=True))
    privacy_term_squared = Fraction(0) if math.isinf(epsilon) else G * G * d / (Fraction(epsilon) * alpha) ** 2
    return _ceil_sum_sqrt(G * G / (alpha * alpha), privacy_term_squared)


def adaptive_batch_size(previous_release_norm, alpha, epsilon, d, kappa) -> int:
    """b_t = max(⌈‖g̃_{t−1}‖√d/(αε)⌉, ⌈κ‖g̃_{t−1}‖/α²⌉, 1), the O2 batch of spider_sosp Lemma 3.8.

    previous_release_norm: ‖g̃_{t−1}‖ ≥ 0, the norm of the previous RELEASE (public). Lemma 3.8 prints ‖g̃_t‖, which is
    not known when b_t is chosen; the O2 query of step t moves by ‖x_t − x_{t−1}‖ = ‖g̃_{t−1}‖/M, and its sensitivity
    M‖x_t − x_{t−1}‖/b_t is what the rule controls. alpha: α > 0. epsilon: ε > 0 or inf (the first term vanishes).
    d: dimension ≥ 1. kappa: κ > 0 (the first term never binds when κ ≥ α√d/ε, as Lemma 3.10's κ is; it is kept for
    a user-chosen κ).

    Exact ceilings of the float64 inputs, so b_t ≥ max(√d/(αε), κ/α²)·‖g̃_{t−1}‖ = coef_bt·‖g̃_{t−1}‖ always.
    """
    v = Fraction(_float("previous_release_norm", previous_release_norm, nonnegative=True))
    alpha = Fraction(_float("alpha", alpha, positive=True))
    epsilon = _float("epsilon", epsilon, positive=True, allow_inf=True)
    d = check_int("d", d, minimum=1)
    kappa = Fraction(_float("kappa", kappa, positive=True))
    privacy_term = 0 if math.isinf(epsilon) else _ceil_sqrt(v * v * d / (alpha * Fraction(epsilon)) ** 2)
    return max(privacy_term, math.ceil(kappa * v / (alpha * alpha)), 1)


def saddle_perturbation(rng, d, perturbation_scale) -> np.ndarray:
    """g_t ~ N(0, (ζ²/d) I_d), the saddle perturbation of spider_sosp Algorithm 2 line 11 (E‖g_t‖² = ζ²).

    rng: a ``numpy.random.Generator`` (a SECRET stream in ``stochastic_spider``). d: dimension ≥ 1.
    perturbation_scale: ζ ≥ 0 (Proposition 3.4: ζ = γ/√log(d/ι)). Draw schedule: one ``standard_normal(d)`` call,
    scaled by ζ/√d (also when ζ = 0).
    """
    rng = _check_generator(rng)
    d = check_int("d", d, minimum=1)
    zeta = _float("perturbation_scale", perturbation_scale, nonnegative=True)
    return rng.standard_normal(d) * (zeta / math.sqrt(d))


def public_permutation(seed, n) -> np.ndarray:
    """The order in which a run reads its n records: ``Streams(seed).generator("spider_sosp", "permutation")``'s
    ``permutation(n)`` under the PUBLIC seed — data-independent, so it may be published."""
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    n = check_int("n", n, minimum=0)
    return Streams(seed).generator(KEY, "permutation").permutation(n)


# ---------------------------------------------------------------------------------------------------
# Algorithm 3: the gradient oracles


def _clip(vector: np.ndarray, radius: float) -> tuple[np.ndarray, bool]:
    """min(1, radius/‖v‖)·v and whether it was clipped."""
    length = norm(vector)
    if length <= radius:
        return vector, False
    return vector * (radius / length), True


class GradientOracles:
    """spider_sosp Algorithm 3: the gradient oracles O1 and O2, over ONE pass of the data in a public order.

    gradient: the per-record gradient ∇f(x; z), called as ``gradient(x, z)`` with x (d,) and z (p,), returning (d,)
        (e.g. ``CosineFamily(...).gradient``).
    data: the records, an (n, p) finite float64 array.
    order: a permutation of 0..n−1 (``public_permutation``). "Draw a batch among unused functions" takes the next
        slice of it: batches are disjoint, no record is read twice, and a draw larger than what is left is refused.
    d: dimension of x. lipschitz, smoothness: G and M, needed only with ``enforce_constants``.
    enforce_constants: clip every O1 record gradient to norm G and every O2 record difference to M‖x − x'‖ (no-ops
        for a family that satisfies Assumption 3.1; they make the sensitivities of Lemma 3.7 hold for any gradient).

    Paper lines (Algorithm 3):
        O1(x_t):          S ← b unused records;   return (1/b)   Σ_{z∈S} ∇f(x_t; z)
        O2(x_t, x_{t−1}): S ← b_t unused records; return (1/b_t) Σ_{z∈S} (∇f(x_t; z) − ∇f(x_{t−1}; z))
    A record whose gradient has a non-finite entry contributes 0 (O1), and a record whose gradient is non-finite at
    either point contributes a zero difference (O2) — replaced, not refused, so that no single record decides between
    an output and an error (docs/design.md); 0 stays within the sensitivity bounds. Counted per call in
    ``nonfinite_counts`` (NOT PRIVATE, like ``clipped_counts``).

    ``batches`` holds the record indices of every call (public: they follow from the public order and the public
    batch sizes); ``records_used`` = Σ batch sizes; ``evaluations`` counts gradient calls (b per O1, 2b_t per O2).
    """

    def __init__(self, gradient: Callable, data, order, *, d, lipschitz=None, smoothness=None,
                 enforce_constants=False):
        if not callable(gradient):
            raise TypeError(f"gradient must be callable as gradient(x, z), got {type(gradient).__name__}")
        data = check_array("data", data, ndim=2)
        if data.dtype == object:
            raise TypeError("data must be float64 (this module computes in float64)")
        self.gradient = gradient
        self.data = np.array(data, dtype=np.float64)
        self.data.flags.writeable = False
        n = self.data.shape[0]
        order = np.asarray(order)
        if order.shape != (n,) or order.dtype.kind not in "iu" or not np.array_equal(np.sort(order), np.arange(n)):
            raise ValueError(f"order must be a permutation of 0..n-1 (n = {n}): each record is read at most once")
        self.order = order.astype(np.int64)
        self.order.flags.writeable = False
        self.d = check_int("d", d, minimum=1)
        self.enforce_constants = _check_bool("enforce_constants", enforce_constants)
        self.lipschitz = None if lipschitz is None else _float("lipschitz", lipschitz, positive=True)
        self.smoothness = None if smoothness is None else _float("smoothness", smoothness, positive=True)
        if self.enforce_constants and (self.lipschitz is None or self.smoothness is None):
            raise ValueError("enforce_constants=True needs lipschitz (G) and smoothness (M): the clip radii")
        self._next = 0
        self.batches: list[np.ndarray] = []
        self.nonfinite_counts: list[int] = []
        self.clipped_counts: list[int] = []
        self.evaluations = 0

    @property
    def n(self) -> int:
        return self.data.shape[0]

    @property
    def remaining(self) -> int:
        """The number of unused records."""
        return self.n - self._next

    @property
    def records_used(self) -> int:
        return self._next

    def _draw(self, batch_size) -> np.ndarray:
        """The next ``batch_size`` unused records' indices (Algorithm 3 line 3)."""
        batch_size = check_int("batch_size", batch_size, minimum=1)
        if batch_size > self.remaining:
            raise ValueError(f"batch_size = {batch_size} exceeds the {self.remaining} unused records: Algorithm 3 "
                             "draws among unused records only (one pass, no record reused)")
        indices = self.order[self._next:self._next + batch_size]
        self._next += batch_size
        self.batches.append(indices)
        return indices

    def _point(self, name, x) -> np.ndarray:
        return _float_vector(name, x, self.d)

    def _record_gradient(self, x, z, where) -> np.ndarray | None:
        """∇f(x; z) as float64 (d,), or None when an entry is not finite."""
        g = np.asarray(self.gradient(x, z))
        self.evaluations += 1
        if g.shape != (self.d,):
            raise ValueError(f"gradient must return shape ({self.d},), got {g.shape} at {where}")
        if g.dtype.kind not in "fiu":
            raise TypeError(f"gradient must return real float64 values, got dtype {g.dtype} at {where}")
        g = g.astype(np.float64)
        return g if bool(np.all(np.isfinite(g))) else None

    def o1(self, x, batch_size) -> np.ndarray:
        """O1(x_t) = (1/b) Σ_{z∈S} ∇f(x_t; z) over the next b unused records."""
        x = self._point("x", x)
        indices = self._draw(batch_size)
        total, nonfinite, clipped = np.zeros(self.d), 0, 0
        for i in indices:  # the paper's Σ_{z∈S}, one record at a time
            g = self._record_gradient(x, self.data[i], f"record {i}")
            if g is None:
                g, nonfinite = np.zeros(self.d), nonfinite + 1
            elif self.enforce_constants:
                g, was_clipped = _clip(g, self.lipschitz)
                clipped += int(was_clipped)
            total = total + g
        self.nonfinite_counts.append(nonfinite)
        self.clipped_counts.append(clipped)
        return total / len(indices)

    def o2(self, x, x_previous, batch_size, *, clip_radius=None) -> np.ndarray:
        """O2(x_t, x_{t−1}) = (1/b_t) Σ_{z∈S} (∇f(x_t; z) − ∇f(x_{t−1}; z)), the SAME record z at both points.

        clip_radius (with ``enforce_constants``): the radius each difference is clipped to; default M‖x_t − x_{t−1}‖.
        The run passes ‖g̃_{t−1}‖, the quantity b_t is sized for: the same in exact arithmetic (η = 1/M), while the
        rounded iterates can make M‖x_t − x_{t−1}‖ exceed it by a few ulps."""
        x = self._point("x", x)
        x_previous = self._point("x_previous", x_previous)
        indices = self._draw(batch_size)
        if clip_radius is not None:
            clip_radius = _float("clip_radius", clip_radius, nonnegative=True)
        radius = (None if not self.enforce_constants else
                  self.smoothness * norm(x - x_previous) if clip_radius is None else clip_radius)
        total, nonfinite, clipped = np.zeros(self.d), 0, 0
        for i in indices:
            z = self.data[i]
            current = self._record_gradient(x, z, f"record {i}")
            previous = self._record_gradient(x_previous, z, f"record {i}")
            if current is None or previous is None:
                difference, nonfinite = np.zeros(self.d), nonfinite + 1
            else:
                difference = current - previous
                if radius is not None:
                    difference, was_clipped = _clip(difference, radius)
                    clipped += int(was_clipped)
            total = total + difference
        self.nonfinite_counts.append(nonfinite)
        self.clipped_counts.append(clipped)
        return total / len(indices)


# ---------------------------------------------------------------------------------------------------
# What a run uses and returns


@dataclasses.dataclass(frozen=True)
class SpiderConfig:
    """The hyper-parameters of one run of spider_sosp Algorithm 2. Every field is public.

    ``reference.algorithms.spider_sosp_theory.spider_settings(...).config()`` builds one from the paper's formulas.

    d: the dimension of x. smoothness: M (step size η = 1/M, line 15). alpha: α, epsilon: ε — the b_t rule (ε = inf:
    its privacy term vanishes). kappa: κ, the drift threshold of line 4. batch_size: b, the O1 batch.
    threshold: the line 9 threshold γ·log³(BMd/(ρω)) (γ in unit mode). freeze_steps: Γ (line 10).
    perturbation_scale: ζ, g_t ~ N(0, ζ²/d I_d) (line 11). noise_std: σ of every tree node (an INPUT: calibrated by
    ``reference.algorithms.spider_sosp_privacy.spider_sosp_sigma`` for the same adjacency and tree_scope; 0 is the
    non-private limit). steps: T (None: n, the number of records).
    adjacency: "replace_one" or "zero_out", the relation σ was calibrated for (recorded; it does not change the run).
    tree_scope: "global" or "segment"; reset_drift_on_perturb; perturb: module doc.
    lipschitz: G, needed only with enforce_constants (``GradientOracles``).
    """

    d: int
    smoothness: float
    alpha: float
    epsilon: float
    kappa: float
    batch_size: int
    threshold: float
    freeze_steps: int
    perturbation_scale: float
    noise_std: float
    steps: int | None = None
    adjacency: str = "replace_one"
    tree_scope: str = "global"
    reset_drift_on_perturb: bool = False
    perturb: bool = True
    lipschitz: float | None = None
    enforce_constants: bool = False

    def __post_init__(self):
        checked = dict(
            d=check_int("d", self.d, minimum=1),
            smoothness=_float("smoothness", self.smoothness, positive=True),
            alpha=_float("alpha", self.alpha, positive=True),
            epsilon=_float("epsilon", self.epsilon, positive=True, allow_inf=True),
            kappa=_float("kappa", self.kappa, positive=True),
            batch_size=check_int("batch_size", self.batch_size, minimum=1),
            threshold=_float("threshold", self.threshold, nonnegative=True),
            freeze_steps=check_int("freeze_steps", self.freeze_steps, minimum=0),
            perturbation_scale=_float("perturbation_scale", self.perturbation_scale, nonnegative=True),
            noise_std=_float("noise_std", self.noise_std, nonnegative=True),
            steps=None if self.steps is None else check_int("steps", self.steps, minimum=1),
            adjacency=_check_choice("adjacency", self.adjacency, ADJACENCIES),
            tree_scope=_check_choice("tree_scope", self.tree_scope, TREE_SCOPES),
            reset_drift_on_perturb=_check_bool("reset_drift_on_perturb", self.reset_drift_on_perturb),
            perturb=_check_bool("perturb", self.perturb),
            lipschitz=None if self.lipschitz is None else _float("lipschitz", self.lipschitz, positive=True),
            enforce_constants=_check_bool("enforce_constants", self.enforce_constants),
        )
        if checked["enforce_constants"] and checked["lipschitz"] is None:
            raise ValueError("enforce_constants=True needs lipschitz (G, the clip radius of O1 records)")
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def step_size(self) -> float:
        """η = 1/M (spider_sosp §3.1)."""
        return 1.0 / self.smoothness


@dataclasses.dataclass(frozen=True)
class PublicTrace:
    """What a run releases, step by step (t = 0..steps−1); covered by the privacy accounting with its post-processing.

    released: g̃_t, (steps, d). kinds: "O1" or "O2" per step. batch_sizes: b or b_t per step. drift: drift_t when
    line 4 tests it (before an O1 reset). leaves: the tree leaf whose TREE value step t adds. perturbation_steps: the t
    at which line 11 added g_t. batch_indices: the records each step read (from the public order). records_used:
    Σ batch sizes (≤ records_available = n). halt_reason: "horizon" (t reached T) or "data" (the next step needed
    next_batch_size records and fewer were left); next_batch_size is None at the horizon.
    """

    released: np.ndarray
    kinds: tuple
    batch_sizes: np.ndarray
    drift: np.ndarray
    leaves: np.ndarray
    perturbation_steps: tuple
    batch_indices: tuple
    records_used: int
    records_available: int
    halt_reason: str
    next_batch_size: int | None

    @property
    def steps(self) -> int:
        return len(self.kinds)


@dataclasses.dataclass(frozen=True)
class NonPrivateDebugTrace:
    """NOT PRIVATE. Computed on the private data or from the secret seed and NOT covered by the privacy accounting:
    never publish any of it.

    estimates: the noiseless SPIDER estimates ∇_t, (steps, d). tree_noise: TREE(leaf_t), (steps, d).
    perturbations: g_t at the perturbation steps, zero rows elsewhere, (steps, d). nonfinite_counts, clipped_counts:
    per step, records whose gradient was replaced or clipped (``GradientOracles``). evaluations: gradient calls.
    """

    estimates: np.ndarray
    tree_noise: np.ndarray
    perturbations: np.ndarray
    nonfinite_counts: np.ndarray
    clipped_counts: np.ndarray
    evaluations: int


@dataclasses.dataclass(frozen=True)
class SpiderResult:
    """Output of ``stochastic_spider``.

    iterates: x_1..x_t, (steps, d) (Algorithm 2 line 17; x_0 excluded, no private selection). initial_point: x_0
    (public input). trace: ``PublicTrace``. debug: ``NonPrivateDebugTrace`` (NOT PRIVATE). config: ``SpiderConfig``.
    seed: the public seed. secret_seed_source, guarantee_condition: ``reference.secrets``.
    """

    iterates: np.ndarray
    initial_point: np.ndarray
    trace: PublicTrace
    debug: NonPrivateDebugTrace
    config: SpiderConfig
    seed: int
    secret_seed_source: str
    guarantee_condition: str


# ---------------------------------------------------------------------------------------------------
# Algorithm 2


def stochastic_spider(gradient: Callable, data, x0, config: SpiderConfig, *, seed, noise_seed=None) -> SpiderResult:
    """spider_sosp Algorithm 2 ("Stochastic Spider") with the oracles of Algorithm 3: one whole run.

    Args:
        gradient: ∇f(x; z), called as ``gradient(x, z)`` (x (d,), z (p,)) -> (d,); e.g. a family's ``gradient``.
        data: the n records, an (n, p) finite float64 array, read once in the public order.
        x0: x_0, the public start, (d,) float64.
        config: ``SpiderConfig`` (hyper-parameters, σ and the flags).
        seed: the PUBLIC seed (the record order). noise_seed: the SECRET seed (tree noise and perturbations; None:
            fresh operating-system entropy; an int equal to ``seed`` is refused).

    Line by line (the module doc has the whole pseudocode and the readings of the printed text):
        line 2:      drift_0 = κ, frozen_{−1} = 1, t = 0
        line 3:      while t < T, and while the unused records cover the step's batch (checked before reading any)
        lines 4–5:   drift_t ≥ κ: ∇_t = O1(x_t), drift_t = 0, a new segment (and a fresh tree with tree_scope="segment")
        lines 6–7:   else ∇_t = ∇_{t−1} + O2(x_t, x_{t−1}) with b_t from ‖g̃_{t−1}‖
        lines 5, 7:  frozen_t = frozen_{t−1} − 1
        lines 9–11:  frozen_{t−1} ≤ 0 and ‖g̃_{t−1}‖ ≤ threshold: frozen_t = Γ, g̃_t = ∇_t + TREE + g_t
        line 13:     else g̃_t = ∇_t + TREE
        line 15:     x_{t+1} = x_t − η g̃_t, drift_{t+1} = drift_t + ‖g̃_t‖
        line 17:     return x_1..x_t

    A run that diverges (a non-finite release or iterate, possible only by float64 overflow) raises ValueError; the
    test reads public values only.
    """
    data = check_array("data", data, ndim=2)
    if data.dtype == object:
        raise TypeError("data must be float64 (this module computes in float64)")
    if data.shape[0] < 1:
        raise ValueError("data must have at least one row (n >= 1)")
    if not isinstance(config, SpiderConfig):
        raise TypeError(f"config must be a SpiderConfig, got {type(config).__name__}")
    x0 = _float_vector("x0", x0, config.d)
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    secret = secret_seed(noise_seed, public_seeds=(seed,), name="noise_seed")
    n, d = data.shape[0], config.d
    horizon = n if config.steps is None else config.steps  # T
    eta = config.step_size

    oracles = GradientOracles(gradient, data, public_permutation(seed, n), d=d, lipschitz=config.lipschitz,
                              smoothness=config.smoothness, enforce_constants=config.enforce_constants)
    secret_streams = secret.streams()
    # Σ = T leaves; a run takes at most n steps (each reads ≥ 1 record), so no leaf beyond min(T, n) is ever reached
    tree = TreeMechanism(d, np.full(min(horizon, n), config.noise_std), secret_streams.generator(KEY, "noise"))

    iterates, released_all, kinds, sizes, drifts, leaves, perturbation_steps = [], [], [], [], [], [], []
    estimates, noises, perturbations = [], [], []

    x, x_previous = x0.copy(), None
    drift = config.kappa  # line 2: drift_0 = κ, so step 0 is an O1 query
    frozen_previous = 1  # line 2: frozen_{−1} = 1, so line 9 is false at t = 0 and g̃_{−1} is never read
    released_previous = None
    nabla = None
    segment_start = 0
    halt_reason, next_batch_size = "horizon", None
    t = 0
    while t < horizon:  # line 3
        if drift >= config.kappa:  # line 4
            kind, need = "O1", config.batch_size
        else:
            kind = "O2"
            need = adaptive_batch_size(norm(released_previous), config.alpha, config.epsilon, d, config.kappa)
        if oracles.remaining < need:  # line 3's data test, for the batch this step needs
            halt_reason, next_batch_size = "data", need
            break
        drifts.append(drift)
        if kind == "O1":  # line 5
            nabla = oracles.o1(x, need)
            drift = 0.0
            segment_start = t
        else:  # line 7
            nabla = nabla + oracles.o2(x, x_previous, need, clip_radius=norm(released_previous))
        frozen = frozen_previous - 1  # lines 5 and 7
        leaf = t + 1 if config.tree_scope == "global" else t - segment_start + 1
        noise = tree(leaf)  # TREE(leaf); leaf 1 starts a fresh tree (each O1 step with tree_scope="segment")
        g = np.zeros(d)
        if config.perturb and frozen_previous <= 0 and norm(released_previous) <= config.threshold:  # line 9
            frozen = config.freeze_steps  # line 10
            if config.reset_drift_on_perturb:
                drift = 0.0
            g = saddle_perturbation(secret_streams.generator(KEY, "perturbation", t), d, config.perturbation_scale)
            released = nabla + noise + g  # line 11
            perturbation_steps.append(t)
        else:
            released = nabla + noise  # line 13
        x_next = x - eta * released  # line 15
        if not (np.all(np.isfinite(released)) and np.all(np.isfinite(x_next))):
            raise ValueError(f"the run diverged at step t = {t}: the release or the iterate is not finite "
                             "(float64 overflow); lower the step or the noise")
        drift = drift + norm(released)  # line 15: drift_{t+1} = drift_t + ‖g̃_t‖₂

        iterates.append(x_next)
        released_all.append(released)
        kinds.append(kind)
        sizes.append(need)
        leaves.append(leaf)
        estimates.append(nabla)
        noises.append(noise)
        perturbations.append(g)

        x_previous, x = x, x_next
        frozen_previous, released_previous = frozen, released
        t += 1

    def stack(rows):
        return np.array(rows, dtype=np.float64).reshape(len(rows), d)

    trace = PublicTrace(
        released=stack(released_all), kinds=tuple(kinds), batch_sizes=np.array(sizes, dtype=np.int64),
        drift=np.array(drifts, dtype=np.float64), leaves=np.array(leaves, dtype=np.int64),
        perturbation_steps=tuple(perturbation_steps), batch_indices=tuple(oracles.batches),
        records_used=oracles.records_used, records_available=n, halt_reason=halt_reason,
        next_batch_size=next_batch_size,
    )
    debug = NonPrivateDebugTrace(
        estimates=stack(estimates), tree_noise=stack(noises), perturbations=stack(perturbations),
        nonfinite_counts=np.array(oracles.nonfinite_counts, dtype=np.int64),
        clipped_counts=np.array(oracles.clipped_counts, dtype=np.int64), evaluations=oracles.evaluations,
    )
    return SpiderResult(iterates=stack(iterates), initial_point=x0, trace=trace, debug=debug, config=config,
                        seed=seed, secret_seed_source=secret.source, guarantee_condition=secret.guarantee_condition)


@dataclasses.dataclass(frozen=True)
class ReplayedSchedule:
    """Every decision of a run recomputed from public values only (``replay_schedule``); fields as in
    ``PublicTrace``."""

    kinds: tuple
    batch_sizes: np.ndarray
    drift: np.ndarray
    leaves: np.ndarray
    perturbation_steps: tuple
    records_used: int
    halt_reason: str
    next_batch_size: int | None


def replay_schedule(released, config: SpiderConfig, n_records) -> ReplayedSchedule:
    """Recompute the control flow of a run of Algorithm 2 from its public release alone.

    released: g̃_0..g̃_{t−1} of the run, (t, d). config: its ``SpiderConfig``. n_records: n.

    Every branch of Algorithm 2 — O1 or O2 (line 4, from drift = Σ‖g̃‖), the batch sizes (b, and b_t from ‖g̃_{t−1}‖),
    the perturbation test (line 9, from frozen and ‖g̃_{t−1}‖), the tree leaves and the halting rule — is a function
    of public inputs and of the released values, so it is post-processing of the release. This function computes it
    without the data and without the secret seed; a run's ``PublicTrace`` must agree with it. Raises ValueError when
    the release cannot come from a run with this config and n (the run would have continued, or halted earlier).
    """
    if not isinstance(config, SpiderConfig):
        raise TypeError(f"config must be a SpiderConfig, got {type(config).__name__}")
    released = check_array("released", released, ndim=2)
    if released.dtype == object or released.shape[1] != config.d:
        raise ValueError(f"released must be a float64 array of shape (t, {config.d}), got {released.shape}")
    n = check_int("n_records", n_records, minimum=1)
    horizon = n if config.steps is None else config.steps
    kinds, sizes, drifts, leaves, perturbation_steps = [], [], [], [], []
    drift, frozen_previous, used, segment_start = config.kappa, 1, 0, 0
    for t in range(released.shape[0] + 1):
        if t == horizon:
            halt_reason, next_batch_size = "horizon", None
            break
        previous_norm = None if t == 0 else norm(released[t - 1])
        if drift >= config.kappa:
            kind, need = "O1", config.batch_size
        else:
            kind, need = "O2", adaptive_batch_size(previous_norm, config.alpha, config.epsilon, config.d, config.kappa)
        if n - used < need:
            halt_reason, next_batch_size = "data", need
            break
        if t == released.shape[0]:
            raise ValueError(f"released has {t} steps, but a run with this config and n = {n} would take another "
                             f"({kind} with batch {need})")
        drifts.append(drift)
        if kind == "O1":
            drift, segment_start = 0.0, t
        used += need
        frozen = frozen_previous - 1
        if config.perturb and frozen_previous <= 0 and previous_norm <= config.threshold:
            frozen = config.freeze_steps
            if config.reset_drift_on_perturb:
                drift = 0.0
            perturbation_steps.append(t)
        drift = drift + norm(released[t])
        kinds.append(kind)
        sizes.append(need)
        leaves.append(t + 1 if config.tree_scope == "global" else t - segment_start + 1)
        frozen_previous = frozen
    if len(kinds) != released.shape[0]:
        raise ValueError(f"released has {released.shape[0]} steps, but a run with this config and n = {n} halts after "
                         f"{len(kinds)} ({halt_reason})")
    return ReplayedSchedule(kinds=tuple(kinds), batch_sizes=np.array(sizes, dtype=np.int64),
                            drift=np.array(drifts, dtype=np.float64), leaves=np.array(leaves, dtype=np.int64),
                            perturbation_steps=tuple(perturbation_steps), records_used=used,
                            halt_reason=halt_reason, next_batch_size=next_batch_size)


# ---------------------------------------------------------------------------------------------------
# Lemma 3.3: perturbed inexact gradient descent


@dataclasses.dataclass(frozen=True)
class EscapePath:
    """A run of ``perturbed_inexact_descent``.

    iterates: x_0..x_Γ, (Γ + 1, d). estimates: ∇_0..∇_{Γ−1}, (Γ, d). errors: ∇_t − ∇F(x_t), (Γ, d) — row 0 is
    ζ_1 + ζ_2, row t ≥ 1 is the oracle's e_t. perturbation: ζ_2. largest_error: max(‖ζ_1‖, max_{t≥1} ‖e_t‖) (≤ γ).
    """

    iterates: np.ndarray
    estimates: np.ndarray
    errors: np.ndarray
    perturbation: np.ndarray
    largest_error: float


def perturbed_inexact_descent(population_gradient: Callable, x0, *, smoothness, gamma, steps, perturbation_scale,
                              initial_error, error_oracle: Callable, rng) -> EscapePath:
    """The perturbed inexact gradient descent of spider_sosp Lemma 3.3 ("essentially from Wang et al. 2019a").

    From a saddle x_0 (‖∇F(x_0)‖ ≤ α, λ_min(∇²F(x_0)) ≤ −√(ρα), α = γ·log³(dBM/(ρι))):

        ∇_0 = ∇F(x_0) + ζ_1 + ζ_2,   ‖ζ_1‖ ≤ γ,   ζ_2 ~ N(0, ζ²/d I_d)   (Lemma 3.3: ζ = γ/√log(d/ι))
        for t = 0..Γ−1:  x_{t+1} = x_t − ∇_t/M;   ∇_{t+1} = ∇F(x_{t+1}) + e_{t+1},   ‖e_{t+1}‖ ≤ γ

    Lemma 3.3 claims F(x_Γ) − F(x_0) ≤ −Ω(γ^{3/2}/(√ρ log³(dMB/(ργι)))) with probability ≥ 1 − ι for
    Γ = M log(dMB/(ργι))/√(ργ). As stated — for ANY errors with ‖e_t‖ ≤ γ — it is false: the perturbation ζ_2 is
    smaller than the errors allowed, and an oracle that knows the iterates can undo it (the tests run such an
    oracle). It holds in experiments with random, zero-mean errors. This procedure exists for those tests.

    Args:
        population_gradient: x ↦ ∇F(x), (d,) -> (d,).
        x0: x_0, (d,) float64. smoothness: M > 0 (step 1/M). gamma: γ > 0, the error bound.
        steps: Γ ≥ 0. perturbation_scale: ζ ≥ 0.
        initial_error: ζ_1, (d,) with ‖ζ_1‖ ≤ γ.
        error_oracle: (t, x_t, ∇F(x_t)) ↦ e_t for t = 1..Γ−1, a (d,) vector with ‖e_t‖ ≤ γ — random or adversarial.
            A vector that breaks the bound is refused (ValueError): the lemma's hypothesis is checked, not assumed.
        rng: the generator of ζ_2 (one ``saddle_perturbation`` draw, before any step).
    """
    if not callable(population_gradient):
        raise TypeError(f"population_gradient must be callable, got {type(population_gradient).__name__}")
    if not callable(error_oracle):
        raise TypeError(f"error_oracle must be callable as error_oracle(t, x, gradient), got "
                        f"{type(error_oracle).__name__}")
    x = _float_vector("x0", x0)
    d = x.shape[0]
    if d < 1:
        raise ValueError("x0 must have at least one coordinate (d >= 1)")
    M = _float("smoothness", smoothness, positive=True)
    gamma = _float("gamma", gamma, positive=True)
    steps = check_int("steps", steps, minimum=0)
    zeta_1 = _float_vector("initial_error", initial_error, d)
    if norm(zeta_1) > gamma:
        raise ValueError(f"initial_error must have norm <= gamma = {gamma} (Lemma 3.3: ||zeta_1|| <= gamma), "
                         f"got {norm(zeta_1)}")
    zeta_2 = saddle_perturbation(rng, d, perturbation_scale)

    def grad(point, what):
        return _float_vector(what, population_gradient(point), d)

    iterates, estimates, errors = [x], [], []
    largest = norm(zeta_1)
    error = zeta_1 + zeta_2
    estimate = grad(x, "population_gradient(x_0)") + error
    for t in range(steps):
        estimates.append(estimate)
        errors.append(error)
        x = x - estimate / M
        iterates.append(x)
        if t + 1 < steps:  # ∇_{t+1} = ∇F(x_{t+1}) + e_{t+1}; ∇_Γ is never used
            gradient_value = grad(x, f"population_gradient(x_{t + 1})")
            error = _float_vector(f"error_oracle(t={t + 1})", error_oracle(t + 1, x.copy(), gradient_value.copy()), d)
            size = norm(error)
            if size > gamma:
                raise ValueError(f"error_oracle returned ||e_{t + 1}|| = {size} > gamma = {gamma}: Lemma 3.3 assumes "
                                 "||nabla_t - grad F(x_t)|| <= gamma")
            largest = max(largest, size)
            estimate = gradient_value + error
    return EscapePath(iterates=np.array(iterates), estimates=np.array(estimates).reshape(steps, d),
                      errors=np.array(errors).reshape(steps, d), perturbation=zeta_2, largest_error=float(largest))
