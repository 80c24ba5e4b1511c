"""bgm21 §4.1 Algorithm 1 (A_polySFW) and §4.2 Algorithm 6 (A_nSFW): private stochastic Frank–Wolfe with a recursive
(variance-reduced) gradient estimator, over one pass of the data.

Bassily, Guzmán, Menart, *Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex
Settings* (NeurIPS 2021). Written to be read beside Algorithm 1 (paper line numbers in brackets):

    [1]  w_0^0 ∈ W, chosen independently of the data (default: vertex 0)
    [2]  for r = 0..R−1:
    [3]      s_r = 2D(L0 + L1D)·2^r·√log(1/δ)/(bε)                       (Laplace scale of round r)
    [4]      B_r^0 ← the next b records
    [5]      ∇_r^0 = (1/b) Σ_{z∈B_r^0} ∇f(w_r^0, z)
    [6]      v_r^0 = argmin_{v∈V} ⟨v, ∇_r^0⟩ + u_r^0(v),  u_r^0(v) ~ iid Lap(s_r)
    [7]      w_r^1 = (1 − η_{r,0}) w_r^0 + η_{r,0} v_r^0
    [8]      for t = 1..2^r − 1:
    [9]          B_r^t ← the next m_t = ⌈b/(t+1)⌉ records
    [10]         Δ_r^t = (1/m_t) Σ_{z∈B_r^t} (∇f(w_r^t, z) − ∇f(w_r^{t−1}, z))
    [11]         ∇_r^t = (1 − η_{r,t})(∇_r^{t−1} + Δ_r^t) + η_{r,t} (1/m_t) Σ_{z∈B_r^t} ∇f(w_r^t, z)
    [12]         v_r^t = argmin_{v∈V} ⟨v, ∇_r^t⟩ + u_r^t(v),  fresh u_r^t(v) ~ iid Lap(s_r)
    [13]         w_r^{t+1} = (1 − η_{r,t}) w_r^t + η_{r,t} v_r^t
    [14]     w_{r+1}^0 = w_r^{2^r}
    [15] output ŵ uniform over (w_r^t : r < R, t < 2^r)

Algorithm 6 (``noisy_sfw``) is stated in the paper only in words (§4.2; its listing, Appendix B.2, is missing): the
same skeleton with Gaussian noise on the three estimator terms and an exact linear minimization over W (no Laplace
noise; W an ℓ_p ball, 1 < p ≤ 2):

    ∇̃_r^0 = (1/b) Σ ∇f(w_r^0, z) + N_r^0,
    Δ̃_r^t = (1/m_t) Σ (∇f(w_r^t, z) − ∇f(w_r^{t−1}, z)) + N̂_r^t,
    ∇̃_r^t = (1 − η_{r,t})(∇̃_r^{t−1} + Δ̃_r^t) + η_{r,t}((1/m_t) Σ ∇f(w_r^t, z) + N_r^t),
    w_r^{t+1} = (1 − η_{r,t}) w_r^t + η_{r,t} argmin_{v∈W} ⟨v, ∇̃_r^t⟩,

N_r^t ~ N(0, σ_{r,t}² I_d), N̂_r^t ~ N(0, σ̂_{r,t}² I_d), with the printed (§4.2) σ_{r,t} = 4L0(t+1)d^{1/p−1/2}√log(1/δ)/(bε)
and σ̂_{r,t} = 4L1Dη_{r,t}(t+1)d^{1/p−1/2}√log(1/δ)/(bε).

Readings of the printed text (each a named option where the printed version is a meaningful variant):

* Listing of Algorithm 1: lines 9–14 are printed out of order, with v_r^t and w_r^{t+1} on one line; the order above
  is the only one in which every quantity is defined when it is used.
* Batches "of b/(t+1) samples without replacement from S" (lines 4, 9): one pass over disjoint batches (§4 opening
  paragraph: "our algorithms make a single pass"), cut from ONE public permutation (``reference.batching``); sizes
  m_t = ⌈b/(t+1)⌉, the estimator divides by the real batch size m_t (unbiased), not by b/(t+1). Since
  1/m_t ≤ (t+1)/b the printed noise scales stay valid for these sizes (``rounding="floor"`` exists for the schedule
  functions only; it can give empty batches and is refused there).
* η_{r,0} = 1 (Theorems 7–11 take η_{r,t} = 1/√(t+1)): every round jumps to a (noisy) vertex after its first step.
* Algorithm 6's σ̂ (rebuilt: the erratum of the printed formula). The sensitivity of Δ_r^t is governed by
  ‖w_r^t − w_r^{t−1}‖ = η_{r,t−1}‖v − w‖ ≤ η_{r,t−1}D, the step that moved w_r^{t−1} to w_r^t, while the printed σ̂
  uses η_{r,t} — too small by √((t+1)/t) (√2 at t = 1). ``sigma_hat_eta="prev"`` (default, corrected) uses
  η_{r,t−1}; ``"printed"`` reproduces the paper.
* The noise scales are INPUTS: ``lap_scales`` (Alg 1) and ``noise_factor`` (Alg 6) default to the paper's printed
  formulas (``printed_lap_scale``, ``printed_noise_factor``). The privacy ledger is another module's job; each run
  puts the per-step sensitivity bounds of the rebuilt privacy proofs (Appendix B.1/B.2 are missing) in its public
  trace, so a ledger can account them:

  - Alg 1 (rebuilt): a record of B_r^t changes ∇_r^t by at most G_t in the dual norm, with G_0 = 2L0/b and
    G_t = (2/m_t)[(1 − η_{r,t})η_{r,t−1}L1D + η_{r,t}L0]; it changes ∇_r^{t′}, t′ > t, by Π_{k=t+1}^{t′}(1 − η_{r,k})·G_t
    ≤ G_t and touches nothing outside round r. The centred score sensitivity of the report-noisy-min step is
    ½·D·G_t (``reference.selection``: ε_t = 2Δ_c/s_r), and a record of B_r^t enters the 2^r − t argmins t..2^r − 1.
  - Alg 6 (rebuilt): a record of B_r^t enters only step (r, t): at t = 0 one Gaussian release of ℓ2-sensitivity
    2L0d^{1/p−1/2}/b; at t ≥ 1 two on the same batch, the fresh-gradient term (2L0d^{1/p−1/2}/m_t) and the difference
    term (2L1Dη_{r,t−1}d^{1/p−1/2}/m_t), composing to μ_t = ‖(Δ_i/σ_i)_i‖_2 (Gaussian DP); everything else is
    post-processing. (‖g‖_2 ≤ d^{1/p−1/2}‖g‖_q for p ≤ 2 turns dual-norm bounds into ℓ2 ones.)

  These bounds assume what the theorems assume: ‖∇f(w, z)‖_* ≤ L0 and ‖∇f(w, z) − ∇f(w′, z)‖_* ≤ L1‖w − w′‖ for every
  record; the gradient callable is trusted to satisfy them. A record whose gradient is not finite contributes zero
  (counted in the NOT PRIVATE debug trace), so no single record decides between an output and an error.
* Every run reports the fraction of the data it uses (``records_used / records_available``): with the theorems'
  hyperparameters it is often small (Theorems 8/11 at practical n use a few per cent).

Randomness schedule (docs/design.md, randomness contract). ``seed`` is PUBLIC; ``noise_seed`` is SECRET (fresh
operating-system entropy when None; ``reference.secrets``). Keys, with ALG = "poly_sfw" or "noisy_sfw":

* ("bgm21", ALG, "order"), public seed: one ``permutation(n)`` (``reference.batching.public_order``).
* ("bgm21", ALG, "output"), public seed: one ``integers(2^R − 1)``, the output index of line 15 (data-independent).
* ("bgm21", "poly_sfw", "noise", r, t), secret seed: one ``laplace(0, s_r, J)`` call (``laplace_noisy_argmin``);
  not drawn when s_r = 0 (the non-private limit: exact argmin, lowest index on ties).
* ("bgm21", "noisy_sfw", "noise", r, t), secret seed: ``standard_normal(d)`` for N_r^t, then, at t ≥ 1,
  ``standard_normal(d)`` for N̂_r^t (scaled by σ and σ̂; drawn also when they are 0).

What a run returns: the output, the iterates and the ``PublicTrace`` are what the privacy accounting covers (with
their post-processing). The ``NonPrivateDebugTrace`` (the estimates computed on the private data, the Gaussian
noises, non-finite counts) is NOT PRIVATE: never publish it.

Arithmetic: float64 (``reference.geometry``); mpmath inputs are refused.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
from scipy import optimize

from ..batching import DisjointBatcher, public_order
from ..geometry import LpBall, Polytope
from ..rng import SEED_BOUND, Streams
from ..secrets import secret_seed
from ..selection import laplace_noisy_argmin
from ..validation import check_int, check_real
from ._records import float64_records as _data
from ._records import float64_vector as _float_vector

__all__ = [
    "KEY",
    "SIGMA_HAT_ETAS",
    "ROUNDINGS",
    "MAX_ROUNDS",
    "inverse_sqrt_step",
    "sfw_batch_sizes",
    "sfw_data_budget",
    "printed_lap_scale",
    "printed_noise_factor",
    "RecursiveGradientEstimator",
    "PolySFWConfig",
    "NoisySFWConfig",
    "PublicTrace",
    "NonPrivateDebugTrace",
    "SFWResult",
    "poly_sfw",
    "noisy_sfw",
]

KEY = "bgm21"
#: Which step size σ̂_{r,t} of Algorithm 6 uses: η_{r,t−1} (corrected, default) or η_{r,t} (printed).
SIGMA_HAT_ETAS = ("prev", "printed")
#: Batch-size rounding of m_t = b/(t+1): "ceil" (used by the runs) or "floor".
ROUNDINGS = ("ceil", "floor")
#: A run has 2^R − 1 steps; R is capped so that a schedule stays enumerable.
MAX_ROUNDS = 24


# ---------------------------------------------------------------------------------------------------
# Input helpers


def _float(name: str, value, **rules) -> float:
    return float(check_real(name, value, **rules))


def _delta(value) -> float:
    delta = _float("delta", value)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1) (the noise scales use log(1/delta)), got {delta}")
    return delta


def _check_choice(name: str, value, choices: tuple) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def inverse_sqrt_step(r: int, t: int) -> float:
    """η_{r,t} = 1/√(t+1), the step size of Theorems 7, 8, 10, 11 (η_{r,0} = 1)."""
    return 1.0 / math.sqrt(t + 1)


def _step(eta: Callable, r: int, t: int) -> float:
    value = eta(r, t)
    value = _float(f"eta({r}, {t})", value)
    if not 0.0 < value <= 1.0:
        raise ValueError(f"eta({r}, {t}) must lie in (0, 1] (a Frank–Wolfe step keeps w in W), got {value}")
    return value


def _check_eta(eta) -> Callable:
    if eta is None:
        return inverse_sqrt_step
    if not callable(eta):
        raise TypeError(f"eta must be callable as eta(r, t) -> float in (0, 1], got {type(eta).__name__}")
    return eta


# ---------------------------------------------------------------------------------------------------
# Batch schedule (Algorithm 1 lines 4 and 9; the same for Algorithm 6)


def sfw_batch_sizes(b, n_rounds, rounding: str = "ceil") -> list[list[int]]:
    """The batch sizes of Algorithms 1 and 6: round r reads [b, m_1, …, m_{2^r−1}], m_t = ⌈b/(t+1)⌉ (lines 4, 9).

    b: the base batch size (≥ 1). n_rounds: R (1 ≤ R ≤ ``MAX_ROUNDS``); R needs 2^{R−1} ≤ b so that the smallest
    batch b/2^{R−1} is at least one record. rounding: "ceil" (the sizes every run uses) or "floor" (the printed b/(t+1)
    rounded down; refused if it empties a batch).
    """
    b = check_int("b", b, minimum=1)
    n_rounds = check_int("n_rounds", n_rounds, minimum=1, maximum=MAX_ROUNDS)
    rounding = _check_choice("rounding", rounding, ROUNDINGS)
    if 2 ** (n_rounds - 1) > b:
        raise ValueError(f"n_rounds = {n_rounds} needs 2**(n_rounds - 1) = {2 ** (n_rounds - 1)} <= b = {b}: the last "
                         "round's batches b/(t+1) would hold less than one record")
    rounds = []
    for r in range(n_rounds):
        sizes = []
        for t in range(2**r):
            m = -(-b // (t + 1)) if rounding == "ceil" else b // (t + 1)
            sizes.append(m)
        rounds.append(sizes)
    return rounds


def sfw_data_budget(b, n_rounds, rounding: str = "ceil") -> int:
    """Σ_r Σ_t m_t: the number of records one run of Algorithm 1 or 6 reads (each exactly once)."""
    return sum(sum(sizes) for sizes in sfw_batch_sizes(b, n_rounds, rounding))


# ---------------------------------------------------------------------------------------------------
# Printed noise scales


def printed_lap_scale(r, *, diameter, lipschitz, smoothness, b, epsilon, delta, constant=2.0) -> float:
    """"printed" s_r = constant·D(L0 + L1D)·2^r·√log(1/δ)/(bε), Algorithm 1 line 3 (constant = 2 in the paper).

    ε = inf gives 0 (the non-private limit).
    """
    r = check_int("r", r, minimum=0)
    D = _float("diameter", diameter, positive=True)
    L0 = _float("lipschitz", lipschitz, nonnegative=True)
    L1 = _float("smoothness", smoothness, nonnegative=True)
    b = check_int("b", b, minimum=1)
    epsilon = _float("epsilon", epsilon, positive=True, allow_inf=True)
    delta = _delta(delta)
    constant = _float("constant", constant, positive=True)
    if math.isinf(epsilon):
        return 0.0
    scale = constant * D * (L0 + L1 * D) * 2.0**r * math.sqrt(math.log(1.0 / delta)) / (b * epsilon)
    if not math.isfinite(scale):
        raise ValueError("the printed Laplace scale overflows float64")
    return scale


def printed_noise_factor(*, d, p, b, epsilon, delta) -> float:
    """"printed" common factor c = 4·d^{1/p−1/2}·√log(1/δ)/(bε) of Algorithm 6's noise (§4.2):

    σ_{r,t} = c·L0·(t+1) and σ̂_{r,t} = c·L1·D·η̂·(t+1), η̂ = η_{r,t−1} (corrected) or η_{r,t} (printed).
    ε = inf gives 0 (the non-private limit).
    """
    d = check_int("d", d, minimum=1)
    p = _float("p", p)
    if not 1.0 < p <= 2.0:
        raise ValueError(f"p must lie in (1, 2] (Algorithm 6 covers ℓ_p, 1 < p <= 2), got {p}")
    b = check_int("b", b, minimum=1)
    epsilon = _float("epsilon", epsilon, positive=True, allow_inf=True)
    delta = _delta(delta)
    if math.isinf(epsilon):
        return 0.0
    return 4.0 * float(d) ** (1.0 / p - 0.5) * math.sqrt(math.log(1.0 / delta)) / (b * epsilon)


# ---------------------------------------------------------------------------------------------------
# The recursive estimator (Algorithm 1 lines 5, 10, 11; Algorithm 6's noisy version)


class RecursiveGradientEstimator:
    """The SPIDER/STORM-like recursive gradient estimator of Algorithm 1 (lines 5, 10, 11) and Algorithm 6.

    gradient: ∇f(w, z), called as ``gradient(w, z)`` (w (d,), z one data row) -> (d,). data: (n, p) float64 rows.
    d: the dimension of w.

    ``start(w, batch, noise=None)``:  ∇^0 = (1/|B|) Σ_{z∈B} ∇f(w, z) (+ noise)                       (line 5)
    ``update(w, w_prev, batch, eta, difference_noise=None, gradient_noise=None)``:
        Δ^t = (1/|B|) Σ_{z∈B} (∇f(w, z) − ∇f(w_prev, z)) (+ difference_noise)                      (line 10)
        ∇^t = (1 − η)(∇^{t−1} + Δ^t) + η·((1/|B|) Σ_{z∈B} ∇f(w, z) (+ gradient_noise))              (line 11)
    Noise vectors are drawn by the caller (the algorithms' randomness schedule); the estimator itself is
    deterministic. Each record is read at ``w`` and ``w_prev`` — the same record at both points.

    ``value``, ``last_difference``, ``last_fresh`` hold the latest ∇, Δ and fresh mean (NOT PRIVATE: computed on
    the data). ``nonfinite_counts`` counts per call the records whose gradient was not finite (they contribute
    zero; a non-finite gradient at ``w_prev`` zeroes that record's difference only). ``evaluations`` counts calls.
    """

    def __init__(self, gradient: Callable, data, d):
        if not callable(gradient):
            raise TypeError(f"gradient must be callable as gradient(w, z), got {type(gradient).__name__}")
        self.gradient = gradient
        self.data = _data(data)
        self.d = check_int("d", d, minimum=1)
        self.value: np.ndarray | None = None
        self.last_difference: np.ndarray | None = None
        self.last_fresh: np.ndarray | None = None
        self.nonfinite_counts: list[int] = []
        self.evaluations = 0

    def _batch(self, batch) -> np.ndarray:
        idx = np.asarray(batch)
        if idx.ndim != 1 or idx.shape[0] < 1 or idx.dtype.kind not in "iu":
            raise ValueError("batch must be a non-empty 1-D array of record indices")
        if idx.min() < 0 or idx.max() >= self.data.shape[0]:
            raise ValueError(f"batch indices must lie in [0, {self.data.shape[0]})")
        return idx

    def _noise(self, name: str, noise) -> np.ndarray:
        return np.zeros(self.d) if noise is None else _float_vector(name, noise, self.d)

    def _record_gradient(self, w: np.ndarray, i: int) -> np.ndarray | None:
        g = np.asarray(self.gradient(w.copy(), self.data[i]), dtype=np.float64)
        self.evaluations += 1
        if g.shape != (self.d,):
            raise ValueError(f"gradient(w, z) must return shape ({self.d},), got {g.shape}")
        return g if np.all(np.isfinite(g)) else None

    def start(self, w, batch, noise=None) -> np.ndarray:
        """∇^0 = mean of ∇f(w, z) over the batch, plus ``noise`` (Algorithm 1 line 5; Algorithm 6's N_r^0)."""
        w = _float_vector("w", w, self.d)
        idx = self._batch(batch)
        noise = self._noise("noise", noise)
        total, bad = np.zeros(self.d), 0
        for i in idx:  # one record at a time, as the sum is written
            g = self._record_gradient(w, int(i))
            if g is None:
                bad += 1
                continue
            total += g
        fresh = total / idx.shape[0]
        self.nonfinite_counts.append(bad)
        self.last_difference, self.last_fresh = None, fresh
        self.value = fresh + noise
        return self.value.copy()

    def update(self, w, w_prev, batch, eta, difference_noise=None, gradient_noise=None) -> np.ndarray:
        """∇^t = (1 − η)(∇^{t−1} + Δ^t) + η·fresh^t (Algorithm 1 lines 10–11; Algorithm 6's Δ̃, ∇̃ with the noises)."""
        if self.value is None:
            raise RuntimeError("update() before start(): the recursion needs ∇^0 (Algorithm 1 line 5)")
        w = _float_vector("w", w, self.d)
        w_prev = _float_vector("w_prev", w_prev, self.d)
        idx = self._batch(batch)
        eta = _float("eta", eta)
        if not 0.0 < eta <= 1.0:
            raise ValueError(f"eta must lie in (0, 1], got {eta}")
        difference_noise = self._noise("difference_noise", difference_noise)
        gradient_noise = self._noise("gradient_noise", gradient_noise)
        diff_total, fresh_total, bad = np.zeros(self.d), np.zeros(self.d), 0
        for i in idx:
            g_now = self._record_gradient(w, int(i))
            g_prev = self._record_gradient(w_prev, int(i))
            if g_now is None:
                bad += 1
                continue
            fresh_total += g_now
            if g_prev is None:
                bad += 1
                continue
            diff_total += g_now - g_prev
        m = idx.shape[0]
        difference = diff_total / m + difference_noise  # line 10: Δ^t (Algorithm 6: Δ̃^t)
        fresh = fresh_total / m
        self.nonfinite_counts.append(bad)
        self.last_difference, self.last_fresh = difference, fresh
        self.value = (1.0 - eta) * (self.value + difference) + eta * (fresh + gradient_noise)  # line 11
        return self.value.copy()


# ---------------------------------------------------------------------------------------------------
# Configs and results


@dataclasses.dataclass(frozen=True)
class PolySFWConfig:
    """Hyper-parameters of one run of Algorithm 1 (A_polySFW). Every field is public.

    n_rounds: R. batch_size: b. epsilon: ε (> 0, or inf: the non-private limit s_r = 0), delta: δ ∈ (0, 1).
    lipschitz: L0, smoothness: L1 (w.r.t. the polyhedral norm ℓ_{norm_p}; dual norm bounds ‖∇f‖_* ≤ L0).
    diameter: D, the ‖·‖_{norm_p}-diameter of W (None: the polytope's own; a smaller value is refused since every
    sensitivity bound scales with it). norm_p: the setting norm (1: the ℓ_1 setting of §4.1).
    lap_scales: s_0..s_{R−1} (each ≥ 0; 0 means an exact argmin), or None for the printed s_r (line 3) with
    ``lap_scale_const`` (2 in the paper).
    """

    n_rounds: int
    batch_size: int
    epsilon: float
    delta: float
    lipschitz: float
    smoothness: float
    diameter: float | None = None
    norm_p: float = 1.0
    lap_scales: tuple | None = None
    lap_scale_const: float = 2.0

    def __post_init__(self):
        checked = dict(
            n_rounds=check_int("n_rounds", self.n_rounds, minimum=1, maximum=MAX_ROUNDS),
            batch_size=check_int("batch_size", self.batch_size, minimum=1),
            epsilon=_float("epsilon", self.epsilon, positive=True, allow_inf=True),
            delta=_delta(self.delta),
            lipschitz=_float("lipschitz", self.lipschitz, positive=True),
            smoothness=_float("smoothness", self.smoothness, nonnegative=True),
            diameter=None if self.diameter is None else _float("diameter", self.diameter, positive=True),
            norm_p=_float("norm_p", self.norm_p, allow_inf=True),
            lap_scale_const=_float("lap_scale_const", self.lap_scale_const, positive=True),
        )
        if not checked["norm_p"] >= 1.0:
            raise ValueError(f"norm_p must be >= 1, got {checked['norm_p']}")
        if self.lap_scales is not None:
            scales = tuple(_float(f"lap_scales[{r}]", s, nonnegative=True) for r, s in enumerate(self.lap_scales))
            if len(scales) != checked["n_rounds"]:
                raise ValueError(f"lap_scales must hold one scale per round (R = {checked['n_rounds']}), "
                                 f"got {len(scales)}")
            checked["lap_scales"] = scales
        sfw_batch_sizes(checked["batch_size"], checked["n_rounds"])  # 2^{R−1} <= b
        for name, value in checked.items():
            object.__setattr__(self, name, value)


@dataclasses.dataclass(frozen=True)
class NoisySFWConfig:
    """Hyper-parameters of one run of Algorithm 6 (A_nSFW). Every field is public.

    n_rounds: R. batch_size: b. epsilon: ε (> 0 or inf), delta: δ ∈ (0, 1). lipschitz: L0, smoothness: L1 (w.r.t.
    ℓ_p). diameter: D, the ℓ_p-diameter of W (None: the ball's 2λ; a smaller value is refused).
    noise_factor: c ≥ 0 with σ_{r,t} = c·L0·(t+1), σ̂_{r,t} = c·L1·D·η̂·(t+1) (None: the printed
    c = 4d^{1/p−1/2}√log(1/δ)/(bε), ``printed_noise_factor``; 0: no noise).
    sigma_hat_eta: "prev" (η̂ = η_{r,t−1}, corrected, default) or "printed" (η̂ = η_{r,t}, the paper's formula).
    """

    n_rounds: int
    batch_size: int
    epsilon: float
    delta: float
    lipschitz: float
    smoothness: float
    diameter: float | None = None
    noise_factor: float | None = None
    sigma_hat_eta: str = "prev"

    def __post_init__(self):
        checked = dict(
            n_rounds=check_int("n_rounds", self.n_rounds, minimum=1, maximum=MAX_ROUNDS),
            batch_size=check_int("batch_size", self.batch_size, minimum=1),
            epsilon=_float("epsilon", self.epsilon, positive=True, allow_inf=True),
            delta=_delta(self.delta),
            lipschitz=_float("lipschitz", self.lipschitz, positive=True),
            smoothness=_float("smoothness", self.smoothness, nonnegative=True),
            diameter=None if self.diameter is None else _float("diameter", self.diameter, positive=True),
            noise_factor=None if self.noise_factor is None else _float("noise_factor", self.noise_factor,
                                                                       nonnegative=True),
            sigma_hat_eta=_check_choice("sigma_hat_eta", self.sigma_hat_eta, SIGMA_HAT_ETAS),
        )
        sfw_batch_sizes(checked["batch_size"], checked["n_rounds"])
        for name, value in checked.items():
            object.__setattr__(self, name, value)


@dataclasses.dataclass(frozen=True)
class PublicTrace:
    """What a run releases, step by step over all (r, t), r < R, t < 2^r (2^R − 1 steps, in run order).

    rounds, steps: r and t. batch_sizes: m_t (b at t = 0). batch_indices: the records each step read (from the
    public order). step_sizes: η_{r,t}. selected: the vertex index v_r^t (Algorithm 1; −1 in Algorithm 6, whose LMO
    is exact). lap_scales: s_r per step (Algorithm 1; 0 in Algorithm 6). noisy_estimates: ∇̃_r^t (Algorithm 6: a
    post-processing of the Gaussian releases; empty (0, d) in Algorithm 1, whose ∇_r^t is never released).

    Sensitivity bounds for a ledger (rebuilt, module doc), per step, for a record of that step's batch:
    estimator_sensitivity: G_t (dual norm, Algorithm 1). score_sensitivity: ½·D·G_t, the centred score sensitivity
    of the argmin (Algorithm 1). affected_steps: how many noisy argmins that record enters (2^r − t; Algorithm 6: 1).
    sigma, sigma_hat: the Gaussian stds of N_r^t and N̂_r^t (Algorithm 6; σ̂ = 0 at t = 0).
    gradient_sensitivity, difference_sensitivity: ℓ2-sensitivities of the two Gaussian releases (Algorithm 6).
    mu: the Gaussian-DP μ_t = ‖(Δ_i/σ_i)_i‖_2 of that record's releases (inf if a σ is 0 with a positive Δ).
    Unused fields are zeros.

    records_used / records_available = data_fraction: the fraction of the data the run read (always reported).
    output_index: the uniform index of line 15 (public stream).
    """

    rounds: np.ndarray
    steps: np.ndarray
    batch_sizes: np.ndarray
    batch_indices: tuple
    step_sizes: np.ndarray
    selected: np.ndarray
    lap_scales: np.ndarray
    noisy_estimates: np.ndarray
    estimator_sensitivity: np.ndarray
    score_sensitivity: np.ndarray
    affected_steps: np.ndarray
    sigma: np.ndarray
    sigma_hat: np.ndarray
    gradient_sensitivity: np.ndarray
    difference_sensitivity: np.ndarray
    mu: np.ndarray
    records_used: int
    records_available: int
    output_index: int

    @property
    def data_fraction(self) -> float:
        return self.records_used / self.records_available


@dataclasses.dataclass(frozen=True)
class NonPrivateDebugTrace:
    """NOT PRIVATE. Computed on the private data or from the secret seed and NOT covered by the privacy accounting:
    never publish any of it.

    estimates: per step, (steps, d) — Algorithm 1: the estimator ∇_r^t (noise-free; never released); Algorithm 6:
    the fresh batch mean (1/m_t) Σ_{z∈B_r^t} ∇f(w_r^t, z).
    gradient_noise, difference_noise: N_r^t and N̂_r^t (Algorithm 6; zeros in Algorithm 1). nonfinite_counts: per
    step, records whose gradient was not finite. evaluations: gradient calls.
    """

    estimates: np.ndarray
    gradient_noise: np.ndarray
    difference_noise: np.ndarray
    nonfinite_counts: np.ndarray
    evaluations: int


@dataclasses.dataclass(frozen=True)
class SFWResult:
    """Output of ``poly_sfw`` / ``noisy_sfw``.

    output: ŵ (line 15). iterates: w_r^t for all r < R, t < 2^r, in run order, (2^R − 1, d) — the candidates of
    line 15. final_iterate: w_{R−1}^{2^{R−1}}, computed but never a candidate. trace: ``PublicTrace``.
    debug: ``NonPrivateDebugTrace`` (NOT PRIVATE). config. seed: the public seed. secret_seed_source,
    guarantee_condition: ``reference.secrets``. noise_scales: "printed" when the noise scales came from the paper's
    printed formulas (``printed_lap_scale``, ``printed_noise_factor``), "input" when the config supplied them.
    """

    output: np.ndarray
    iterates: np.ndarray
    final_iterate: np.ndarray
    trace: PublicTrace
    debug: NonPrivateDebugTrace
    config: object
    seed: int
    secret_seed_source: str
    guarantee_condition: str
    noise_scales: str

    @property
    def data_fraction(self) -> float:
        return self.trace.data_fraction


# ---------------------------------------------------------------------------------------------------
# Shared skeleton helpers


def _in_polytope(polytope: Polytope, w: np.ndarray) -> bool:
    """Whether w ∈ Conv(V): feasibility of λ ≥ 0, Σλ = 1, Vᵀλ = w (``scipy.optimize.linprog``, HiGHS), with a
    relative tolerance of 1e-9 on the residual."""
    V = polytope.vertices
    A_eq = np.vstack([V.T, np.ones((1, polytope.J))])
    b_eq = np.concatenate([w, [1.0]])
    res = optimize.linprog(np.zeros(polytope.J), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if res.status != 0:
        return False
    scale = 1.0 + float(np.max(np.abs(V))) + float(np.max(np.abs(w)))
    return float(np.max(np.abs(A_eq @ res.x - b_eq))) <= 1e-9 * scale


def _setup(gradient, data, seed, noise_seed, config, algorithm: str):
    data = _data(data)
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    secret = secret_seed(noise_seed, public_seeds=(seed,), name="noise_seed")
    if not callable(gradient):
        raise TypeError(f"gradient must be callable as gradient(w, z), got {type(gradient).__name__}")
    n = data.shape[0]
    schedule = sfw_batch_sizes(config.batch_size, config.n_rounds)
    budget = sum(sum(s) for s in schedule)
    if budget > n:  # refused before any record is read: the run is single-pass, never wraps around
        raise ValueError(f"the schedule (b = {config.batch_size}, R = {config.n_rounds}) reads {budget} records but "
                         f"data has n = {n}: Algorithm 1/6 makes a single pass and never reuses a record")
    batcher = DisjointBatcher(n, public_order(seed, n, key=(KEY, algorithm, "order")))
    return data, seed, secret, schedule, batcher


def _output_index(seed: int, algorithm: str, count: int) -> int:
    return int(Streams(seed).generator(KEY, algorithm, "output").integers(count))


def _finite_point(name: str, w: np.ndarray, r: int, t: int) -> np.ndarray:
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} is not finite at (r, t) = ({r}, {t}) (float64 overflow)")
    return w


@dataclasses.dataclass(frozen=True)
class _RunSetup:
    """Everything a run of Algorithm 1 or 6 fixes before its first step (arguments checked, the public schedule and
    order, the secret seed, the start point and the noise scales); shared with the fast twin, which must refuse and
    prepare exactly as the reference does."""

    eta: Callable
    d: int
    data: np.ndarray
    seed: int
    secret: object
    schedule: list
    batcher: DisjointBatcher
    diameter: float
    w: np.ndarray
    lipschitz: float
    smoothness: float
    scales: list | None = None  # Algorithm 1: s_r per round
    noise_factor: float | None = None  # Algorithm 6: c
    noise_scales: str = "printed"


def _prepare_poly_sfw(gradient, data, polytope, config, seed, noise_seed, w_init, eta, *, diameter=None) -> _RunSetup:
    """Algorithm 1's checks and preparation (line 1, line 3's s_r). ``diameter(polytope, p)``: how to compute the
    polytope's ℓ_p-diameter (default ``Polytope.diameter``; the fast twin passes a faster one with the same value)."""
    if not isinstance(polytope, Polytope):
        raise TypeError(f"polytope must be a reference.geometry.Polytope (W = Conv(V)), got {type(polytope).__name__}")
    if not isinstance(config, PolySFWConfig):
        raise TypeError(f"config must be a PolySFWConfig, got {type(config).__name__}")
    eta = _check_eta(eta)
    d = polytope.d
    data, seed, secret, schedule, batcher = _setup(gradient, data, seed, noise_seed, config, "poly_sfw")
    true_diameter = polytope.diameter(config.norm_p) if diameter is None else diameter(polytope, config.norm_p)
    D = true_diameter if config.diameter is None else config.diameter
    if D < true_diameter * (1.0 - 1e-12):
        raise ValueError(f"diameter D = {D} is smaller than the polytope's ℓ_{config.norm_p}-diameter {true_diameter}: "
                         "the sensitivity bounds and s_r would be too small")
    if D == 0.0:
        raise ValueError("the polytope has one point (diameter 0): there is nothing to optimize")
    if w_init is None:
        w = np.array(polytope.vertices[0])
    else:
        w = _float_vector("w_init", w_init, d)
        if not _in_polytope(polytope, w):
            raise ValueError("w_init must lie in W = Conv(V) (Algorithm 1 line 1)")
    L0, L1, b = config.lipschitz, config.smoothness, config.batch_size
    if config.lap_scales is None:
        scales = [printed_lap_scale(r, diameter=D, lipschitz=L0, smoothness=L1, b=b, epsilon=config.epsilon,
                                    delta=config.delta, constant=config.lap_scale_const)
                  for r in range(config.n_rounds)]
        noise_scales = "printed"
    else:
        scales = list(config.lap_scales)
        noise_scales = "input"
    return _RunSetup(eta, d, data, seed, secret, schedule, batcher, D, w, L0, L1, scales=scales,
                     noise_scales=noise_scales)


def _prepare_noisy_sfw(gradient, data, ball, config, seed, noise_seed, w_init, eta) -> _RunSetup:
    """Algorithm 6's checks and preparation (the start point; the noise factor c of σ and σ̂)."""
    if not isinstance(ball, LpBall):
        raise TypeError(f"ball must be a reference.geometry.LpBall, got {type(ball).__name__}")
    if not 1.0 < ball.p <= 2.0:
        raise ValueError(f"Algorithm 6 covers ℓ_p balls with 1 < p <= 2, got p = {ball.p}")
    if not isinstance(config, NoisySFWConfig):
        raise TypeError(f"config must be a NoisySFWConfig, got {type(config).__name__}")
    eta = _check_eta(eta)
    d, p = ball.d, ball.p
    data, seed, secret, schedule, batcher = _setup(gradient, data, seed, noise_seed, config, "noisy_sfw")
    true_diameter = ball.diameter()
    D = true_diameter if config.diameter is None else config.diameter
    if D < true_diameter * (1.0 - 1e-12):
        raise ValueError(f"diameter D = {D} is smaller than the ball's ℓ_{p}-diameter {true_diameter}: the "
                         "sensitivity bounds and σ̂ would be too small")
    if w_init is None:
        w = np.array(ball.center)
    else:
        w = _float_vector("w_init", w_init, d)
        if not ball.contains(w, tol=1e-12 * (ball.radius + float(np.max(np.abs(ball.center))))):
            raise ValueError("w_init must lie in W (the ℓ_p ball)")
    if config.noise_factor is None:
        c = printed_noise_factor(d=d, p=p, b=config.batch_size, epsilon=config.epsilon, delta=config.delta)
        noise_scales = "printed"
    else:
        c = config.noise_factor
        noise_scales = "input"
    return _RunSetup(eta, d, data, seed, secret, schedule, batcher, D, w, config.lipschitz, config.smoothness,
                     noise_factor=c, noise_scales=noise_scales)


# ---------------------------------------------------------------------------------------------------
# Algorithm 1


def poly_sfw(gradient: Callable, data, polytope: Polytope, config: PolySFWConfig, *, seed, noise_seed=None,
             w_init=None, eta=None) -> SFWResult:
    """bgm21 Algorithm 1 (A_polySFW, §4.1): private polyhedral stochastic Frank–Wolfe; one whole run.

    Args:
        gradient: ∇f(w, z), ``gradient(w, z)`` (w (d,), z a data row) -> (d,).
        data: the n records, (n, p) float64, read once in the public order.
        polytope: W = Conv(V), a ``reference.geometry.Polytope`` with J vertices V.
        config: ``PolySFWConfig``.
        seed: PUBLIC seed (record order, output index). noise_seed: SECRET seed (the Laplace noise; None: fresh
            operating-system entropy; equal to ``seed`` is refused).
        w_init: w_0^0 ∈ W, data-independent (line 1; default: vertex 0). Checked to lie in Conv(V).
        eta: η(r, t) ∈ (0, 1] (default 1/√(t+1), Theorems 7–8).

    Line by line: module doc. Line 3's s_r is ``config.lap_scales[r]`` or the printed formula; lines 6 and 12 use
    ``laplace_noisy_argmin`` on the scores ⟨V_j, ∇_r^t⟩ with the secret stream ("bgm21", "poly_sfw", "noise", r, t),
    or the exact argmin (``Polytope.lmo``) when s_r = 0.
    """
    run = _prepare_poly_sfw(gradient, data, polytope, config, seed, noise_seed, w_init, eta)
    eta, d, data, seed, secret = run.eta, run.d, run.data, run.seed, run.secret
    schedule, batcher, D, w, L0, L1 = run.schedule, run.batcher, run.diameter, run.w, run.lipschitz, run.smoothness
    scales, noise_scales = run.scales, run.noise_scales
    estimator = RecursiveGradientEstimator(gradient, data, d)
    noise_streams = secret.streams()
    V = polytope.vertices

    def select(G: np.ndarray, s: float, r: int, t: int) -> int:
        if s == 0.0:  # the non-private limit: the exact argmin, lowest index on ties
            return polytope.lmo(G)[1]
        scores = np.array([float(np.dot(V[j], G)) for j in range(polytope.J)])  # ⟨v, ∇_r^t⟩ for v ∈ V
        return laplace_noisy_argmin(scores, s, noise_streams.generator(KEY, "poly_sfw", "noise", r, t))

    iterates, rounds, steps, sizes, indices, etas, chosen, lap, G_sens, score_sens, affected, estimates = (
        [], [], [], [], [], [], [], [], [], [], [], [])
    eta_prev = None
    for r in range(config.n_rounds):  # line 2
        s_r = scales[r]  # line 3
        iterates.append(w.copy())  # w_r^0
        B = batcher.take(schedule[r][0])  # line 4
        G = estimator.start(w, B)  # line 5: ∇_r^0
        j = select(G, s_r, r, 0)  # line 6
        eta_t = _step(eta, r, 0)
        w_prev, w = w, _finite_point("w", (1.0 - eta_t) * w + eta_t * V[j], r, 0)  # line 7
        sens = 2.0 * L0 / B.shape[0]  # G_0 (rebuilt)
        rounds.append(r); steps.append(0); sizes.append(B.shape[0]); indices.append(B); etas.append(eta_t)
        chosen.append(j); lap.append(s_r); G_sens.append(sens); score_sens.append(0.5 * D * sens)
        affected.append(2**r); estimates.append(G)
        eta_prev = eta_t
        for t in range(1, 2**r):  # line 8
            iterates.append(w.copy())  # w_r^t
            B = batcher.take(schedule[r][t])  # line 9
            eta_t = _step(eta, r, t)
            G = estimator.update(w, w_prev, B, eta_t)  # lines 10–11
            j = select(G, s_r, r, t)  # line 12, fresh noise
            w_prev, w = w, _finite_point("w", (1.0 - eta_t) * w + eta_t * V[j], r, t)  # line 13
            m = B.shape[0]
            sens = (2.0 / m) * ((1.0 - eta_t) * eta_prev * L1 * D + eta_t * L0)  # G_t (rebuilt)
            rounds.append(r); steps.append(t); sizes.append(m); indices.append(B); etas.append(eta_t)
            chosen.append(j); lap.append(s_r); G_sens.append(sens); score_sens.append(0.5 * D * sens)
            affected.append(2**r - t); estimates.append(G)
            eta_prev = eta_t
        # line 14: w_{r+1}^0 = w_r^{2^r} = w
    count = len(iterates)
    tau = _output_index(seed, "poly_sfw", count)  # line 15
    zeros = np.zeros(count)
    trace = PublicTrace(
        rounds=np.array(rounds, dtype=np.int64), steps=np.array(steps, dtype=np.int64),
        batch_sizes=np.array(sizes, dtype=np.int64), batch_indices=tuple(indices),
        step_sizes=np.array(etas), selected=np.array(chosen, dtype=np.int64), lap_scales=np.array(lap),
        noisy_estimates=np.zeros((0, d)), estimator_sensitivity=np.array(G_sens),
        score_sensitivity=np.array(score_sens), affected_steps=np.array(affected, dtype=np.int64),
        sigma=zeros.copy(), sigma_hat=zeros.copy(), gradient_sensitivity=zeros.copy(),
        difference_sensitivity=zeros.copy(), mu=zeros.copy(),
        records_used=batcher.used, records_available=batcher.n, output_index=tau,
    )
    debug = NonPrivateDebugTrace(
        estimates=np.array(estimates).reshape(count, d), gradient_noise=np.zeros((count, d)),
        difference_noise=np.zeros((count, d)), nonfinite_counts=np.array(estimator.nonfinite_counts, dtype=np.int64),
        evaluations=estimator.evaluations,
    )
    iterates = np.array(iterates).reshape(count, d)
    return SFWResult(output=iterates[tau].copy(), iterates=iterates, final_iterate=w.copy(), trace=trace, debug=debug,
                     config=config, seed=seed, secret_seed_source=secret.source,
                     guarantee_condition=secret.guarantee_condition, noise_scales=noise_scales)


# ---------------------------------------------------------------------------------------------------
# Algorithm 6


def _mu(pairs) -> float:
    total = 0.0
    for sensitivity, sigma in pairs:
        if sensitivity == 0.0:
            continue
        if sigma == 0.0:
            return math.inf
        total += (sensitivity / sigma) ** 2
    return math.sqrt(total)


def noisy_sfw(gradient: Callable, data, ball: LpBall, config: NoisySFWConfig, *, seed, noise_seed=None,
              w_init=None, eta=None) -> SFWResult:
    """bgm21 Algorithm 6 (A_nSFW, §4.2; rebuilt from the text of §4.2, its listing in Appendix B.2 is missing).

    Args:
        gradient: ∇f(w, z), ``gradient(w, z)`` -> (d,). data: (n, p) float64, read once in the public order.
        ball: W, a ``reference.geometry.LpBall`` with 1 < p ≤ 2 (the ℓ_p setting of Theorems 10–11).
        config: ``NoisySFWConfig`` (noise factor, σ̂ variant).
        seed: PUBLIC seed. noise_seed: SECRET seed (the Gaussian noise; None: fresh operating-system entropy).
        w_init: w_0^0 ∈ W, data-independent (default: the ball's centre). eta: η(r, t) ∈ (0, 1] (default 1/√(t+1)).

    Steps 5, 10, 11 of Algorithm 1 become (§4.2): ∇̃_r^0 = mean ∇f(w_r^0, ·) + N_r^0; Δ̃_r^t = mean difference + N̂_r^t;
    ∇̃_r^t = (1 − η_{r,t})(∇̃_r^{t−1} + Δ̃_r^t) + η_{r,t}(mean ∇f(w_r^t, ·) + N_r^t); the LMO is exact
    (``LpBall.lmo``). σ_{r,t} = c·L0·(t+1), σ̂_{r,t} = c·L1·D·η̂·(t+1), η̂ = η_{r,t−1} ("prev", corrected) or η_{r,t}
    ("printed"); c = ``config.noise_factor`` or the printed factor.
    """
    run = _prepare_noisy_sfw(gradient, data, ball, config, seed, noise_seed, w_init, eta)
    eta, d, data, seed, secret = run.eta, run.d, run.data, run.seed, run.secret
    schedule, batcher, D, w, L0, L1 = run.schedule, run.batcher, run.diameter, run.w, run.lipschitz, run.smoothness
    c, noise_scales = run.noise_factor, run.noise_scales
    p = ball.p
    dim_factor = float(d) ** (1.0 / p - 0.5)  # ‖g‖_2 ≤ d^{1/p−1/2}‖g‖_q
    estimator = RecursiveGradientEstimator(gradient, data, d)
    noise_streams = secret.streams()

    iterates, rounds, steps, sizes, indices, etas, noisy, sig, sig_hat, g_sens, d_sens, mus = (
        [], [], [], [], [], [], [], [], [], [], [], [])
    estimates, g_noise, d_noise = [], [], []
    for r in range(config.n_rounds):
        iterates.append(w.copy())  # w_r^0
        B = batcher.take(schedule[r][0])
        rng = noise_streams.generator(KEY, "noisy_sfw", "noise", r, 0)
        sigma = c * L0  # σ_{r,0} (t + 1 = 1)
        N = sigma * rng.standard_normal(d)
        G = estimator.start(w, B, noise=N)  # ∇̃_r^0
        eta_t = _step(eta, r, 0)
        w_prev, w = w, _finite_point("w", (1.0 - eta_t) * w + eta_t * ball.lmo(G), r, 0)
        sens = 2.0 * L0 * dim_factor / B.shape[0]
        rounds.append(r); steps.append(0); sizes.append(B.shape[0]); indices.append(B); etas.append(eta_t)
        noisy.append(G); sig.append(sigma); sig_hat.append(0.0); g_sens.append(sens); d_sens.append(0.0)
        mus.append(_mu([(sens, sigma)])); estimates.append(estimator.last_fresh); g_noise.append(N)
        d_noise.append(np.zeros(d))
        eta_prev = eta_t
        for t in range(1, 2**r):
            iterates.append(w.copy())  # w_r^t
            B = batcher.take(schedule[r][t])
            m = B.shape[0]
            eta_t = _step(eta, r, t)
            eta_hat = eta_prev if config.sigma_hat_eta == "prev" else eta_t  # the erratum of the printed σ̂
            sigma = c * L0 * (t + 1)  # σ_{r,t}
            sigma_hat = c * L1 * D * eta_hat * (t + 1)  # σ̂_{r,t}
            rng = noise_streams.generator(KEY, "noisy_sfw", "noise", r, t)
            N = sigma * rng.standard_normal(d)
            N_hat = sigma_hat * rng.standard_normal(d)
            G = estimator.update(w, w_prev, B, eta_t, difference_noise=N_hat, gradient_noise=N)  # Δ̃, ∇̃
            w_prev, w = w, _finite_point("w", (1.0 - eta_t) * w + eta_t * ball.lmo(G), r, t)
            sens = 2.0 * L0 * dim_factor / m  # fresh-gradient term
            dsens = 2.0 * L1 * D * eta_prev * dim_factor / m  # difference term, ‖w_r^t − w_r^{t−1}‖_p ≤ η_{r,t−1}D
            rounds.append(r); steps.append(t); sizes.append(m); indices.append(B); etas.append(eta_t)
            noisy.append(G); sig.append(sigma); sig_hat.append(sigma_hat); g_sens.append(sens); d_sens.append(dsens)
            mus.append(_mu([(sens, sigma), (dsens, sigma_hat)]))
            estimates.append(estimator.last_fresh); g_noise.append(N); d_noise.append(N_hat)
            eta_prev = eta_t
    count = len(iterates)
    tau = _output_index(seed, "noisy_sfw", count)
    zeros = np.zeros(count)
    trace = PublicTrace(
        rounds=np.array(rounds, dtype=np.int64), steps=np.array(steps, dtype=np.int64),
        batch_sizes=np.array(sizes, dtype=np.int64), batch_indices=tuple(indices), step_sizes=np.array(etas),
        selected=np.full(count, -1, dtype=np.int64), lap_scales=zeros.copy(),
        noisy_estimates=np.array(noisy).reshape(count, d), estimator_sensitivity=zeros.copy(),
        score_sensitivity=zeros.copy(), affected_steps=np.ones(count, dtype=np.int64), sigma=np.array(sig),
        sigma_hat=np.array(sig_hat), gradient_sensitivity=np.array(g_sens), difference_sensitivity=np.array(d_sens),
        mu=np.array(mus), records_used=batcher.used, records_available=batcher.n, output_index=tau,
    )
    debug = NonPrivateDebugTrace(
        estimates=np.array(estimates).reshape(count, d), gradient_noise=np.array(g_noise).reshape(count, d),
        difference_noise=np.array(d_noise).reshape(count, d),
        nonfinite_counts=np.array(estimator.nonfinite_counts, dtype=np.int64), evaluations=estimator.evaluations,
    )
    iterates = np.array(iterates).reshape(count, d)
    return SFWResult(output=iterates[tau].copy(), iterates=iterates, final_iterate=w.copy(), trace=trace, debug=debug,
                     config=config, seed=seed, secret_seed_source=secret.source,
                     guarantee_condition=secret.guarantee_condition, noise_scales=noise_scales)
