"""bgm21 §5.2 Algorithm 2: Proximally Guided Private Stochastic Mirror Descent (Theorem 16), with a strongly convex
subproblem solver ``asc_dp_gd`` standing in for A_SC.

Bassily, Guzmán, Menart, *Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex
Settings* (NeurIPS 2021). Written to be read beside Algorithm 2 (paper line numbers in brackets):

    [1]  p̄ = max{p, 1 + 1/log d}; choose w_1 ∈ W (data-independent)
    [2]  for r = 1..R:
    [3]      extract a batch S_r of n/R records from S \\ ∪_{l<r} S_l
    [4]      w_{r+1} = A_SC on S_r for  min_{w∈W} F_r(w) = F_D(w) + (β/2)‖w − w_r‖²_p̄            (eq. (6))
    [5]  output w̄^R uniform over (w_r)_{r∈[R]} = w_1..w_R

SCOPE: EUCLIDEAN ONLY (p = 2). The general ℓ_p mirror map (p̄ < 2, Bregman projections) did not fit; this module
covers the ℓ_2 setting, where p̄ = 2, κ = 1, κ̃ = 1, β = 2ρ and each F_r is (β − ρ) = ρ strongly convex (Proposition
13 with ν = 1). W must be a ``reference.geometry.LpBall`` with p = 2; other balls are refused.

Readings of the printed text:

* Line 3 prints "S \\ ∪_{l<r} S_r" (a typo for S_l): R disjoint batches of m = ⌊n/R⌋ records (or ``batch_size``), cut
  left to right from ONE public permutation (``reference.batching``); single pass, never reused.
* Line 5: the candidates are w_1..w_R — w_1 is data-independent and w_{R+1} (computed from the last batch) is never
  output; it is returned as ``final_iterate`` for diagnostics only. The index is drawn from the public stream.
* A_SC (Theorem 29; its Appendix C.3 is missing) is "rebuilt": the shipped solver ``asc_dp_gd`` is noisy projected
  (sub)gradient descent on the empirical proximal subproblem h(w) = (1/m) Σ_{z∈S_r} f(w, z) + (β/2)‖w − center‖²_2:

      g_t = (1/m) Σ_{z∈S_r} ∇f(w_t, z) + β(w_t − center) + N_t,   N_t ~ N(0, σ² I_d)
      w_{t+1} = Π_W(w_t − η_t g_t)

  with two step rules:
  - ``"decreasing"`` (default; nonsmooth f allowed): η_t = 2/(μ(t+1)), output the weighted average
    Σ_{t=1}^T t·w_t / Σ t of the points where the gradients were taken (Lacoste-Julien, Schmidt, Bach 2012). With
    σ = 0 and ‖g_t‖_2 ≤ G: h(w̄) − min_W h ≤ 2G²/(μ(T+1)).
  - ``"constant"`` (f must be L1-smooth; ``smoothness`` = L1): η = 1/L_h, L_h = L1 + β, output the last iterate.
    With σ = 0 and h twice differentiable the map w ↦ Π_W(w − η∇h(w)) is a contraction with factor q = 1 − μ/L_h
    (the eigenvalues of I − η∇²h lie in [0, 1 − μ/L_h]; Π_W is non-expansive), so
    ‖w_T − w*‖_2 ≤ q^T ‖w_1 − w*‖_2 — the LINEAR RATE the tests check on quadratics.
  μ is the strong-convexity modulus the caller vouches for (in Algorithm 2: μ = β − ρ).
* Privacy of the solver (rebuilt, zero-concentrated DP): the regulariser is data-independent, so one record changes
  the noisy mean gradient by at most Δ = 2L0/m in ℓ2 (L0: an ℓ2 bound on every per-record (sub)gradient; the
  gradient callable is trusted to satisfy it). Each step is (Δ²/2σ²)-zCDP, T adaptive steps compose to
  ρ_z = TΔ²/(2σ²). The calibrated σ = (2L0/m)·√(T/(2ρ_z)) with ρ_z = (√(log(1/δ) + ε) − √log(1/δ))² makes
  ρ_z + 2√(ρ_z log(1/δ)) = ε exactly (Bun–Steinke 2016, Prop. 1.3). Algorithm 2 is then (ε, δ)-DP by parallel
  composition: a record lies in one batch, and later rounds see it only through their centre w_r (post-processing).
  A record whose gradient is not finite contributes zero (counted in the NOT PRIVATE debug trace).
* The noise std is an INPUT (``noise_std``): None means the calibrated σ above; 0 is the non-private limit.

Randomness schedule. ``seed`` is PUBLIC; ``noise_seed`` is SECRET (fresh operating-system entropy when None;
``reference.secrets``). Keys:

* ("bgm21", "prox_psmd", "order"), public: one ``permutation(n)``.
* ("bgm21", "prox_psmd", "output"), public: one ``integers(R)`` (line 5; index 0 ↔ w_1).
* ("bgm21", "prox_psmd", "noise", r, t), secret: one ``standard_normal(d)`` for N_t of solver step t (1-based) of round
  r (1-based), drawn also when σ = 0. A standalone ``asc_dp_gd`` uses ("bgm21", "asc_dp_gd", "noise", t).

What a run returns: output, iterates and the public traces are covered by the accounting (they post-process the
noisy gradients). The NOT PRIVATE debug traces (noise-free mean gradients, the noises) must never be published.
Every Algorithm 2 run reports the fraction of the data it uses (``records_used / records_available``).

Arithmetic: float64; mpmath inputs are refused.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import mpmath
import numpy as np

from ..batching import DisjointBatcher, public_order
from ..geometry import LpBall
from ..precision import working_precision
from ..rng import SEED_BOUND, Streams
from ..secrets import secret_seed
from ..validation import check_int, check_real
from ._records import float64_records as _data
from ._records import float64_vector as _float_vector
from .bgm21_sfw import RecursiveGradientEstimator

__all__ = [
    "KEY",
    "CALIBRATION_DPS",
    "STEP_RULES",
    "MAX_STEPS",
    "zcdp_budget",
    "calibrated_noise_std",
    "ASCConfig",
    "ASCTrace",
    "ASCDebugTrace",
    "ASCResult",
    "asc_dp_gd",
    "ProxConfig",
    "ProxPublicTrace",
    "ProxResult",
    "prox_guided_psmd",
]

KEY = "bgm21"
STEP_RULES = ("decreasing", "constant")
#: Cap on solver steps per call (T·m gradient evaluations each).
MAX_STEPS = 10**6
#: Digits of the noise calibration (the precision policy: accounting in mpmath, rounded towards privacy).
CALIBRATION_DPS = 40


def _float(name: str, value, **rules) -> float:
    value = check_real(name, value, **rules)
    if not isinstance(value, float):
        raise TypeError(f"{name} must be a float64 number (this module computes in float64), "
                        f"got {type(value).__name__}")
    return value


def _delta(value) -> float:
    delta = _float("delta", value)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    return delta


def _ball(ball) -> LpBall:
    if not isinstance(ball, LpBall):
        raise TypeError(f"W must be a reference.geometry.LpBall, got {type(ball).__name__}")
    if ball.p != 2.0:
        raise ValueError(f"this module implements the Euclidean case only (p = 2), got an ℓ_{ball.p} ball")
    return ball


def _point_in(ball: LpBall, name: str, value) -> np.ndarray:
    w = _float_vector(name, value, ball.d)
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} must be finite")
    if not ball.contains(w, tol=1e-12 * (ball.radius + float(np.max(np.abs(ball.center))))):
        raise ValueError(f"{name} must lie in W (the ℓ_2 ball)")
    return w


# ---------------------------------------------------------------------------------------------------
# Calibration of the solver's noise (Theorem 16's settings: reference.algorithms.bgm21_theory)


def zcdp_budget(epsilon, delta) -> float:
    """ρ_z = (√(log(1/δ) + ε) − √log(1/δ))²: the largest ρ with ρ + 2√(ρ log(1/δ)) ≤ ε (equality). ε = inf → inf.

    Computed at ``CALIBRATION_DPS`` digits and rounded DOWN to float64, so a σ built from it is never too small."""
    epsilon = _float("epsilon", epsilon, positive=True, allow_inf=True)
    delta = _delta(delta)
    if math.isinf(epsilon):
        return math.inf
    with working_precision(CALIBRATION_DPS):
        return _round(_rho_mp(epsilon, delta), down=True)


def calibrated_noise_std(*, lipschitz, batch_size, n_steps, epsilon, delta) -> float:
    """σ = (2L0/m)·√(T/(2ρ_z)): T Gaussian steps of ℓ2-sensitivity 2L0/m, together ρ_z-zCDP ⇒ (ε, δ)-DP (rebuilt).

    Computed at ``CALIBRATION_DPS`` digits from the exact ρ_z and rounded UP to float64."""
    L0 = _float("lipschitz", lipschitz, positive=True)
    m = check_int("batch_size", batch_size, minimum=1)
    T = check_int("n_steps", n_steps, minimum=1, maximum=MAX_STEPS)
    epsilon = _float("epsilon", epsilon, positive=True, allow_inf=True)
    if math.isinf(epsilon):
        return 0.0
    delta = _delta(delta)
    with working_precision(CALIBRATION_DPS):
        return _round((2 * mpmath.mpf(L0) / m) * mpmath.sqrt(T / (2 * _rho_mp(epsilon, delta))), down=False)


def _rho_mp(epsilon: float, delta: float):
    """ρ_z at the working precision: (√(L+ε) − √L)² = ε²/(√(L+ε) + √L)² with L = log(1/δ), without cancellation."""
    L = mpmath.log(1 / mpmath.mpf(delta))
    return (mpmath.mpf(epsilon) / (mpmath.sqrt(L + epsilon) + mpmath.sqrt(L))) ** 2


def _round(value, *, down: bool) -> float:
    """The float64 next to the mpf ``value`` in the stated direction (float() rounds to nearest)."""
    out = float(value)
    if down and out > value:
        out = math.nextafter(out, 0.0)
    elif not down and out < value:
        out = math.nextafter(out, math.inf)
    return out


# ---------------------------------------------------------------------------------------------------
# The strongly convex solver


@dataclasses.dataclass(frozen=True)
class ASCConfig:
    """Hyper-parameters of ``asc_dp_gd``. Every field is public.

    epsilon (> 0 or inf), delta ∈ (0, 1): the target of the calibrated noise. lipschitz: L0, an ℓ2 bound on every
    per-record (sub)gradient of f. n_steps: T (None: T = m, the batch size). noise_std: σ ≥ 0 (None: calibrated,
    ``calibrated_noise_std``; 0: no noise). step: "decreasing" (η_t = 2/(μ(t+1)), weighted average) or "constant"
    (η = 1/(smoothness + β), last iterate; needs ``smoothness`` = L1 of f).
    """

    epsilon: float
    delta: float
    lipschitz: float
    n_steps: int | None = None
    noise_std: float | None = None
    step: str = "decreasing"
    smoothness: float | None = None

    def __post_init__(self):
        checked = dict(
            epsilon=_float("epsilon", self.epsilon, positive=True, allow_inf=True),
            delta=_delta(self.delta),
            lipschitz=_float("lipschitz", self.lipschitz, positive=True),
            n_steps=(None if self.n_steps is None
                     else check_int("n_steps", self.n_steps, minimum=1, maximum=MAX_STEPS)),
            noise_std=None if self.noise_std is None else _float("noise_std", self.noise_std, nonnegative=True),
            smoothness=None if self.smoothness is None else _float("smoothness", self.smoothness, nonnegative=True),
        )
        if not isinstance(self.step, str) or self.step not in STEP_RULES:
            raise ValueError(f"step must be one of {STEP_RULES}, got {self.step!r}")
        if self.step == "constant" and checked["smoothness"] is None:
            raise ValueError('step="constant" needs smoothness (L1 of f): η = 1/(L1 + β)')
        for name, value in checked.items():
            object.__setattr__(self, name, value)


@dataclasses.dataclass(frozen=True)
class ASCTrace:
    """Public per-call trace of ``asc_dp_gd``: batch_size m, n_steps T, step_sizes η_t (T,), noise_std σ,
    step_sensitivity Δ = 2L0/m (ℓ2, of each noisy mean gradient, per step), rho_zcdp = TΔ²/(2σ²) (inf if σ = 0),
    epsilon_at_delta = ρ + 2√(ρ log(1/δ)) (Bun–Steinke), beta, mu, center (the public/post-processed centre)."""

    batch_size: int
    n_steps: int
    step_sizes: np.ndarray
    noise_std: float
    step_sensitivity: float
    rho_zcdp: float
    epsilon_at_delta: float
    beta: float
    mu: float
    center: np.ndarray


@dataclasses.dataclass(frozen=True)
class ASCDebugTrace:
    """NOT PRIVATE — never publish. mean_gradients: the noise-free (1/m)Σ∇f(w_t, z) (T, d); noises: N_t (T, d);
    nonfinite_counts: per step, records whose gradient was not finite; evaluations: gradient calls of this call."""

    mean_gradients: np.ndarray
    noises: np.ndarray
    nonfinite_counts: np.ndarray
    evaluations: int


@dataclasses.dataclass(frozen=True)
class ASCResult:
    """output: the solver's answer (weighted average or last iterate by ``step``). iterates: w_1..w_{T+1} ((T+1, d),
    w_1 = center). trace: ``ASCTrace``. debug: ``ASCDebugTrace`` (NOT PRIVATE). rate: the contraction factor q of the
    constant-step rule (None for "decreasing")."""

    output: np.ndarray
    iterates: np.ndarray
    trace: ASCTrace
    debug: ASCDebugTrace
    rate: float | None
    secret_seed_source: str = ""
    guarantee_condition: str = ""


def _solve(estimator: RecursiveGradientEstimator, batch: np.ndarray, ball: LpBall, center: np.ndarray, beta: float,
           mu: float, config: ASCConfig, rng_for: Callable[[int], np.random.Generator]) -> ASCResult:
    m = int(batch.shape[0])
    T = m if config.n_steps is None else config.n_steps
    if config.noise_std is None:
        sigma = calibrated_noise_std(lipschitz=config.lipschitz, batch_size=m, n_steps=T, epsilon=config.epsilon,
                                     delta=config.delta)
    else:
        sigma = config.noise_std
    sens = 2.0 * config.lipschitz / m
    rho = math.inf if sigma == 0.0 else T * sens**2 / (2.0 * sigma**2)
    eps_at = math.inf if math.isinf(rho) else rho + 2.0 * math.sqrt(rho * math.log(1.0 / config.delta))
    rate = None
    if config.step == "constant":
        L_h = config.smoothness + beta
        eta_const = 1.0 / L_h
        rate = 1.0 - mu / L_h
    d = ball.d
    evaluations0 = estimator.evaluations
    w = center.copy()
    iterates, etas, grads, noises, bad = [w.copy()], [], [], [], []
    num, den = np.zeros(d), 0.0
    for t in range(1, T + 1):
        G = estimator.start(w, batch)  # (1/m) Σ ∇f(w_t, z), non-finite records contribute zero
        bad.append(estimator.nonfinite_counts[-1])
        N = sigma * rng_for(t).standard_normal(d)
        g = G + beta * (w - center) + N
        eta = 2.0 / (mu * (t + 1)) if config.step == "decreasing" else eta_const
        num += t * w
        den += t
        w = ball.project(w - eta * g)
        if not np.all(np.isfinite(w)):
            raise ValueError(f"the solver iterate is not finite at step {t} (float64 overflow)")
        iterates.append(w.copy()); etas.append(eta); grads.append(G); noises.append(N)
    output = num / den if config.step == "decreasing" else w.copy()
    output = ball.project(output)  # an average of points of W lies in W; this only removes rounding
    trace = ASCTrace(batch_size=m, n_steps=T, step_sizes=np.array(etas), noise_std=sigma, step_sensitivity=sens,
                     rho_zcdp=rho, epsilon_at_delta=eps_at, beta=beta, mu=mu, center=center.copy())
    debug = ASCDebugTrace(mean_gradients=np.array(grads).reshape(T, d), noises=np.array(noises).reshape(T, d),
                          nonfinite_counts=np.array(bad, dtype=np.int64),
                          evaluations=estimator.evaluations - evaluations0)
    return ASCResult(output=output, iterates=np.array(iterates), trace=trace, debug=debug, rate=rate)


def _beta_mu(beta, mu) -> tuple[float, float]:
    beta = _float("beta", beta, nonnegative=True)
    mu = _float("mu", mu, positive=True)
    return beta, mu


def asc_dp_gd(gradient: Callable, data, ball: LpBall, config: ASCConfig, *, center, beta, mu,
              noise_seed=None) -> ASCResult:
    """The strongly convex subproblem solver (rebuilt stand-in for A_SC, Theorem 29): noisy projected gradient
    descent on h(w) = (1/m) Σ_{z∈data} f(w, z) + (β/2)‖w − center‖²_2 over W (module doc), using every row of
    ``data`` at every step (full-batch; a call is (ε, δ)-DP w.r.t. ``data`` for the calibrated σ).

    gradient: ∇f(w, z) -> (d,), ‖·‖_2 ≤ ``config.lipschitz`` (trusted). data: (m, k) float64 rows. ball: W, an ℓ_2
    ``LpBall``. center: the proximal centre (in W; also w_1). beta: β ≥ 0. mu: μ > 0, a strong-convexity modulus of h
    the caller vouches for (drives the step sizes). noise_seed: SECRET seed (None: fresh entropy); noise key
    ("bgm21", "asc_dp_gd", "noise", t).
    """
    if not callable(gradient):
        raise TypeError(f"gradient must be callable as gradient(w, z), got {type(gradient).__name__}")
    ball = _ball(ball)
    if not isinstance(config, ASCConfig):
        raise TypeError(f"config must be an ASCConfig, got {type(config).__name__}")
    data = _data(data)
    center = _point_in(ball, "center", center)
    beta, mu = _beta_mu(beta, mu)
    secret = secret_seed(noise_seed, name="noise_seed")
    streams = secret.streams()
    estimator = RecursiveGradientEstimator(gradient, data, ball.d)
    batch = np.arange(data.shape[0], dtype=np.int64)
    res = _solve(estimator, batch, ball, center, beta, mu, config,
                 lambda t: streams.generator(KEY, "asc_dp_gd", "noise", t))
    return dataclasses.replace(res, secret_seed_source=secret.source, guarantee_condition=secret.guarantee_condition)


# ---------------------------------------------------------------------------------------------------
# Algorithm 2


@dataclasses.dataclass(frozen=True)
class ProxConfig:
    """Hyper-parameters of Algorithm 2 (p = 2). Every field is public.

    n_rounds: R. weak_convexity: ρ (f(·, z) ρ-weakly convex in ℓ2). beta: β (None: 2ρ, Theorem 16 at p = 2; must
    exceed ρ so that F_r is (β − ρ)-strongly convex, Proposition 13). batch_size: m (None: ⌊n/R⌋, line 3).
    solver: the ``ASCConfig`` of every round (its ε, δ are the whole run's, by parallel composition).
    """

    n_rounds: int
    weak_convexity: float
    solver: ASCConfig
    beta: float | None = None
    batch_size: int | None = None

    def __post_init__(self):
        n_rounds = check_int("n_rounds", self.n_rounds, minimum=1, maximum=MAX_STEPS)
        rho = _float("weak_convexity", self.weak_convexity, nonnegative=True)
        beta = 2.0 * rho if self.beta is None else _float("beta", self.beta, positive=True)
        if not beta > rho:
            raise ValueError(f"beta = {beta} must exceed the weak-convexity constant rho = {rho} (Proposition 13: "
                             "F_r is (beta - rho)-strongly convex); with rho = 0 pass beta > 0")
        if not isinstance(self.solver, ASCConfig):
            raise TypeError(f"solver must be an ASCConfig, got {type(self.solver).__name__}")
        batch = None if self.batch_size is None else check_int("batch_size", self.batch_size, minimum=1)
        for name, value in dict(n_rounds=n_rounds, weak_convexity=rho, beta=beta, batch_size=batch).items():
            object.__setattr__(self, name, value)

    @property
    def mu(self) -> float:
        """μ = β − ρ, the strong-convexity modulus of every F_r (Proposition 13 with ν = 1)."""
        return self.beta - self.weak_convexity


@dataclasses.dataclass(frozen=True)
class ProxPublicTrace:
    """What Algorithm 2 releases: batch_indices (R read-only index arrays, from the public order), solver_traces
    (one ``ASCTrace`` per round, each with its noise std and per-step sensitivity), records_used /
    records_available = data_fraction, output_index (public; 0 ↔ w_1)."""

    batch_indices: tuple
    solver_traces: tuple
    records_used: int
    records_available: int
    output_index: int

    @property
    def data_fraction(self) -> float:
        return self.records_used / self.records_available


@dataclasses.dataclass(frozen=True)
class ProxResult:
    """output: w̄^R (line 5). iterates: w_1..w_R ((R, d), the candidates). final_iterate: w_{R+1} (never a
    candidate). solver_iterates: per round, the solver's iterate path. trace: ``ProxPublicTrace``. debug: per round
    ``ASCDebugTrace`` (NOT PRIVATE). noise_scales: "calibrated" or "input"."""

    output: np.ndarray
    iterates: np.ndarray
    final_iterate: np.ndarray
    solver_iterates: tuple
    trace: ProxPublicTrace
    debug: tuple
    config: ProxConfig
    seed: int
    secret_seed_source: str
    guarantee_condition: str
    noise_scales: str

    @property
    def data_fraction(self) -> float:
        return self.trace.data_fraction


def _prepare_prox(gradient, data, ball, config, seed, noise_seed, w_init) -> tuple:
    """Algorithm 2's checks and preparation, shared with the fast twin: (ball, data, seed, secret, n, R, m, w_1,
    batcher) — lines 1 and 3's batch size, refused before any record is read."""
    if not callable(gradient):
        raise TypeError(f"gradient must be callable as gradient(w, z), got {type(gradient).__name__}")
    ball = _ball(ball)
    if not isinstance(config, ProxConfig):
        raise TypeError(f"config must be a ProxConfig, got {type(config).__name__}")
    data = _data(data)
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    secret = secret_seed(noise_seed, public_seeds=(seed,), name="noise_seed")
    n, R = data.shape[0], config.n_rounds
    m = n // R if config.batch_size is None else config.batch_size
    if m < 1 or R * m > n:  # refused before any record is read: single pass, never wraps around
        raise ValueError(f"R = {R} rounds of m = {m} records need {R * max(m, 1)} records but data has n = {n}: "
                         "Algorithm 2 makes a single pass over disjoint batches")
    w = np.array(ball.center) if w_init is None else _point_in(ball, "w_init", w_init)
    batcher = DisjointBatcher(n, public_order(seed, n, key=(KEY, "prox_psmd", "order")))
    return ball, data, seed, secret, n, R, m, w, batcher


def prox_guided_psmd(gradient: Callable, data, ball: LpBall, config: ProxConfig, *, seed, noise_seed=None,
                     w_init=None) -> ProxResult:
    """bgm21 Algorithm 2 (§5.2, Theorem 16) at p = 2, with ``asc_dp_gd`` as A_SC (rebuilt).

    gradient: ∇f(w, z) -> (d,) (ℓ2 norm ≤ ``config.solver.lipschitz``, trusted). data: (n, k) float64, read once in
    the public order. ball: W, an ℓ_2 ``LpBall``. seed: PUBLIC (order, output index). noise_seed: SECRET (None: fresh
    entropy; equal to ``seed`` refused). w_init: w_1 ∈ W, data-independent (default: the ball's centre).

    Round r: B_r = the next m records (line 3); w_{r+1} = asc_dp_gd on B_r centred at w_r with β, μ = β − ρ (line 4).
    Output: w_τ, τ uniform on {1..R} from the public stream (line 5).
    """
    ball, data, seed, secret, n, R, m, w, batcher = _prepare_prox(gradient, data, ball, config, seed, noise_seed,
                                                                  w_init)
    estimator = RecursiveGradientEstimator(gradient, data, ball.d)
    streams = secret.streams()
    iterates, batches, traces, debugs, paths = [], [], [], [], []
    for r in range(1, R + 1):  # line 2
        iterates.append(w.copy())  # w_r
        B = batcher.take(m)  # line 3
        res = _solve(estimator, B, ball, w, config.beta, config.mu, config.solver,
                     lambda t, r=r: streams.generator(KEY, "prox_psmd", "noise", r, t))  # line 4
        w = res.output  # w_{r+1}
        batches.append(B); traces.append(res.trace); debugs.append(res.debug); paths.append(res.iterates)
    tau = int(Streams(seed).generator(KEY, "prox_psmd", "output").integers(R))  # line 5
    iterates = np.array(iterates).reshape(R, ball.d)
    trace = ProxPublicTrace(batch_indices=tuple(batches), solver_traces=tuple(traces), records_used=batcher.used,
                            records_available=n, output_index=tau)
    return ProxResult(output=iterates[tau].copy(), iterates=iterates, final_iterate=w.copy(),
                      solver_iterates=tuple(paths), trace=trace, debug=tuple(debugs), config=config, seed=seed,
                      secret_seed_source=secret.source, guarantee_condition=secret.guarantee_condition,
                      noise_scales="calibrated" if config.solver.noise_std is None else "input")
