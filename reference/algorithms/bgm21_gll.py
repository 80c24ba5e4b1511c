"""bgm21 §3 (Theorems 5 and 6): private generalized linear losses by Moreau smoothing — Phased-SGD in ℓ_2 and noisy
Frank–Wolfe (Algorithm 5) in ℓ_1, both driven by Algorithm 3's gradient oracle 𝒪_{β,α,R}.

Bassily, Guzmán, Menart — *Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex
Settings* (NeurIPS 2021). §3 smooths each GLL f(w, (x, y)) = ℓ^{(y)}(⟨x, w⟩) (Definition 2) by the Moreau envelope of
the scalar ℓ^{(y)} (Lemma 3) and computes ∇f_β to accuracy α with a bisection (Lemma 4, Algorithm 3 =
``reference.gll.moreau_glm_gradient``). The paper's appendices A.2 (Phased-SGD details) and A.3 (Algorithm 5) are not
part of the paper text; both algorithms below are **rebuilt** from §3's description and the cited sources
(Feldman–Koren–Talwar 2020 [FKT20] Phased-SGD; Talwar–Thakurta–Zhang 2015 [TTZ15] noisy Frank–Wolfe).

``phased_sgd`` (Theorem 5; rebuilt from [FKT20]), read beside the pseudocode (line numbers in brackets):

    [1]  k = ⌊log₂ n⌋; π = a PUBLIC random order of the n records; w_0 = the public start
    [2]  for i = 1..k:
    [3]      n_i = ⌊n/2^i⌋, η_i = η/4^i; B_i = the next n_i records of π (disjoint, single pass)
    [4]      u = w_{i−1}; for each record z of B_i in order: u = Π_W(u − η_i 𝒪_{β,α,R}(u, z)); sum the u's
    [5]      w̄_i = average of the n_i post-step iterates
    [6]      w_i = w̄_i + N(0, σ_i² I_d),  σ_i = 2Δ_i√ln(1/δ)/ε with Δ_i = 2η_i L  (= 4Lη_i√ln(1/δ)/ε)
    [7]  return w_k (not projected unless ``project_output``; the paper's GLLs are defined on R^d)

  σ_i is the paper's Gaussian rule (``bgm21_gaussian_sigma``) applied to the ℓ_2-sensitivity of w̄_i: for convex
  β_s-smooth losses and η_i ≤ 2/β_s the projected step is non-expansive, so one differing record moves w̄_i by at most
  2η_i(L0R + (n_i − 1)α) (a differing record contributes ≤ 2η_iL0R; every later oracle call may be off by α on each
  dataset). The run checks that this bound is ≤ 2η_iL and that η_1 ≤ 2/β_s (β_s = βR²), and refuses to run otherwise.
  Each record lies in one phase only, so the run is as private as one phase (parallel composition).

``theorem5_params``: β = √n·L0/(R·D) (``beta_variant="corrected"``; Theorem 5 prints √n·L0/R, the same when D = 1 and
dimensionally consistent only then), α = L0R/(n ln n), L = 2L0R (Lemma 3's Lipschitz constant), β_s = βR², and the
[FKT20] step η = (D/L)·min{4/√n, ε/√(d ln(1/δ))} (rebuilt: Theorem 5 gives no step size).

``noisy_frank_wolfe`` (Algorithm 5 of Theorem 6; rebuilt from [TTZ15]):

    [1]  θ_1 = a public point of W = Conv(V) (default V_0)
    [2]  for t = 1..T−1:
    [3]      g_t = (1/n) Σ_i 𝒪_{β,α,R}(θ_t, z_i)           (full batch: every record, every step)
    [4]      j_t = argmin_j ⟨V_j, g_t⟩ + u_{t,j},  u_{t,j} ~ iid Lap(λ)   (report-noisy-min)
    [5]      θ_{t+1} = (1 − μ_t)θ_t + μ_t V_{j_t},  μ_t = 2/(t + 2)
    [6]  return θ_T

  Privacy: per step the scores ⟨V_j, g_t⟩ have centred ℓ_∞ sensitivity Δ_c = L0R·diam_1(V)/n (a record moves g_t by
  ≤ 2L0R/n in ℓ_∞, ‖𝒪‖_∞ ≤ L0‖x‖_∞), so step t is (2Δ_c/λ)-DP (``report_noisy_min_epsilon``) and the T − 1 steps
  compose by ``certify_pure`` (the best of basic, advanced = Lemma 1, and zCDP composition) at the target δ.

``theorem6_params``: β = L0√(nε)/(R·D·ln^{1/4}(1/δ)·√(ln J·ln n)) (Theorem 6), α = L0R/(n ln n) (Theorem 6 prints
1/(n ln n), without the L0R of Theorem 5: ``alpha_variant="printed"``), and, rebuilt from [TTZ15]: curvature
Γ = βR²D², L_∞ = L0R, T = max(2, ⌈(Γnε/(L_∞‖C‖_1))^{2/3}⌉) with ‖C‖_1 = max_{v∈V} ‖v‖_1. The Laplace scale:

* ``noise="certified"`` (default): λ = 2Δ_c/ε_step with Δ_c = L_∞D/n and ε_step = ``calibrate_pure_steps(T−1, ε, δ)``:
  the run is (ε, δ)-DP by the composition above.
* ``noise="ttz15"``: [TTZ15]'s printed λ_TTZ = L_∞‖C‖_1√(8T ln(1/δ))/(nε). Under replace-one neighbours and the
  (necessary) factor 2 of report-noisy-min it certifies only about 2ε for T ≥ 100; kept for faithfulness, labelled.
  The two scales differ by the factor λ_TTZ/λ = ‖C‖_1·√(8T ln(1/δ))·ε_step / (2Dε).

Randomness (docs: randomness contract). ``seed`` is PUBLIC; ``noise_seed`` is SECRET (``reference.secrets``; None:
fresh operating-system entropy; equal to ``seed``: refused). Keys under "bgm21":

* ("bgm21", "phased_sgd", "order"), public: one ``permutation(n)`` (``reference.batching.public_order``).
* ("bgm21", "phased_sgd", "noise", i), secret: one ``standard_normal(d)`` at phase i (drawn also when σ_i = 0).
* ("bgm21", "noisy_fw", "noise", t), secret: one ``laplace(0, λ, J)`` at step t (``laplace_noisy_argmin``); with
  λ = 0 (the non-private limit) nothing is drawn and the exact LMO (lowest index on ties) is used.

What a run returns: the output, a public trace (the released phase outputs w_i / selected vertices j_t with their
iterates, batch sizes and record indices from the public order, the fraction of the data used and the noise parameters
of every release — what the privacy accounting covers, with its post-processing) and a ``NonPrivate…DebugTrace``
(noiseless averages, gradients, noise draws: computed on the private data or from the secret seed — NOT PRIVATE,
never publish it).

Arithmetic: float64 (mpmath privacy scalars are converted to float64 after computing them). ε = ∞ is accepted and means
no noise (σ_i = 0, λ = 0): a deterministic, non-private run.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..accounting.composition import calibrate_pure_steps, certify_equal_steps
from ..batching import DisjointBatcher, public_order
from ..geometry import LpBall, Polytope
from ..gll import GLL, bisection_steps, moreau_glm_gradient
from ..rng import SEED_BOUND
from ..secrets import secret_seed
from ..selection import laplace_noisy_argmin, report_noisy_min_epsilon
from ..validation import check_array, check_int, check_probability, check_real
from .bgm21_privacy import bgm21_gaussian_sigma

__all__ = [
    "KEY",
    "BETA_VARIANTS",
    "ALPHA_VARIANTS",
    "NOISE_VARIANTS",
    "Theorem5Params",
    "theorem5_params",
    "phase_schedule",
    "PhasedSGDConfig",
    "PhasedSGDPublicTrace",
    "PhasedSGDDebugTrace",
    "PhasedSGDResult",
    "phased_sgd",
    "Theorem6Params",
    "theorem6_params",
    "NoisyFWConfig",
    "NoisyFWPublicTrace",
    "NoisyFWDebugTrace",
    "NoisyFWResult",
    "noisy_frank_wolfe",
]

KEY = "bgm21"
#: β of Theorem 5: √n·L0/(R·D) ("corrected") or √n·L0/R as printed.
BETA_VARIANTS = ("corrected", "printed")
#: α of Theorem 6: L0R/(n ln n) ("corrected", as in Theorem 5) or 1/(n ln n) as printed.
ALPHA_VARIANTS = ("corrected", "printed")
#: Laplace scale of Algorithm 5: certified calibration, or [TTZ15]'s printed scale.
NOISE_VARIANTS = ("certified", "ttz15")
#: Label of a user-supplied Laplace scale in ``NoisyFWConfig``.
NOISE_LABELS = (*NOISE_VARIANTS, "custom")

#: Relative slack for float64 comparisons of the rebuilt step condition and sensitivity bound.
_REL_SLACK = 1e-12


# ---------------------------------------------------------------------------------------------------
# Input helpers


def _float(name: str, value, **rules) -> float:
    return float(check_real(name, value, **rules))


def _choice(name: str, value, choices: tuple) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def _check_bool(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def _float_matrix(name: str, value) -> np.ndarray:
    arr = check_array(name, value, ndim=2)
    if arr.dtype == object:
        raise TypeError(f"{name} must be float64 (this module computes in float64)")
    arr = np.array(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers")
    return arr


def _float_vector(name: str, value, length: int) -> np.ndarray:
    arr = check_array(name, value, ndim=1)
    if arr.dtype == object:
        raise TypeError(f"{name} must be float64 (this module computes in float64)")
    arr = np.array(arr, dtype=np.float64)
    if arr.shape != (length,):
        raise ValueError(f"{name} must have shape ({length},), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers")
    return arr


def _check_data(X, y, feature_bound: float, dual_p: float, setting: str) -> tuple[np.ndarray, np.ndarray]:
    """X (n, d) finite with ‖x_i‖_{dual_p} ≤ R (Definition 2's bound, refused rather than clipped), y (n,) finite."""
    X = _float_matrix("X", X)
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"X must hold at least n = 2 records, got n = {n}")
    y = _float_vector("y", y, n)
    norms = np.linalg.norm(X, ord=dual_p, axis=1)
    if np.any(norms > feature_bound * (1.0 + _REL_SLACK)):
        raise ValueError(f"every record must satisfy ‖x_i‖ ≤ feature_bound = {feature_bound} in the dual norm of the "
                         f"{setting} setting (Definition 2's R); some record exceeds it")
    return X, y


def _check_loss(loss) -> GLL:
    if not isinstance(loss, GLL):
        raise TypeError(f"loss must be a reference.gll.GLL, got {type(loss).__name__}")
    if not loss.convex:
        raise ValueError(f"loss {loss!r} is not convex; Theorems 5 and 6 (and Algorithm 3) need a convex ℓ")
    return loss


def _check_delta(delta) -> float:
    return float(check_probability("delta", delta))


def _common_theory_inputs(n, d, L0, R_x, D, eps, delta, *, allow_inf_eps: bool):
    return (
        check_int("n", n, minimum=2),
        check_int("d", d, minimum=1),
        _float("L0", L0, positive=True),
        _float("R_x", R_x, positive=True),
        _float("D", D, positive=True),
        _float("eps", eps, positive=True, allow_inf=allow_inf_eps),
        _check_delta(delta),
    )


# ---------------------------------------------------------------------------------------------------
# Theorem 5: Phased-SGD with Algorithm 3's oracle (ℓ_2 GLLs)


def phase_schedule(n: int) -> list[int]:
    """n_i = ⌊n/2^i⌋ for i = 1..k, k = ⌊log₂ n⌋ (rebuilt from [FKT20], which takes n a power of 2). Σ n_i ≤ n − 1."""
    n = check_int("n", n, minimum=2)
    k = n.bit_length() - 1  # ⌊log₂ n⌋, exact for integers
    return [n >> i for i in range(1, k + 1)]


@dataclasses.dataclass(frozen=True)
class PhasedSGDConfig:
    """Hyper-parameters of one Phased-SGD run (every field public). ``theorem5_params(...).config()`` builds one.

    beta_smooth: β, the Moreau smoothing parameter (f_β is βR²-smooth). alpha: α, the oracle accuracy.
    feature_bound: R, the bound ‖x‖_2 ≤ R of Definition 2. lipschitz: L, the constant in σ_i = 4Lη_i√ln(1/δ)/ε
    (Theorem 5: L = 2L0R). step_size: η (phase i uses η/4^i). epsilon, delta: the target (ε = inf: no noise).
    project_output: project the final noisy output onto W (post-processing; off as in [FKT20]).
    """

    beta_smooth: float
    alpha: float
    feature_bound: float
    lipschitz: float
    step_size: float
    epsilon: float
    delta: float
    project_output: bool = False

    def __post_init__(self):
        checked = dict(
            beta_smooth=_float("beta_smooth", self.beta_smooth, positive=True),
            alpha=_float("alpha", self.alpha, positive=True),
            feature_bound=_float("feature_bound", self.feature_bound, positive=True),
            lipschitz=_float("lipschitz", self.lipschitz, positive=True),
            step_size=_float("step_size", self.step_size, positive=True),
            epsilon=_float("epsilon", self.epsilon, positive=True, allow_inf=True),
            delta=_check_delta(self.delta),
            project_output=_check_bool("project_output", self.project_output),
        )
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def smoothness(self) -> float:
        """β_s = βR², the smoothness of f_β w.r.t. ℓ_2 (Lemma 3, tight form)."""
        return self.beta_smooth * self.feature_bound**2

    def phase_step_size(self, i: int) -> float:
        """η_i = η/4^i."""
        return self.step_size / 4.0**i

    def phase_sigma(self, i: int) -> float:
        """σ_i = bgm21_gaussian_sigma(2η_iL, ε, δ) = 4Lη_i√ln(1/δ)/ε; 0 when ε = inf."""
        if math.isinf(self.epsilon):
            return 0.0
        return float(bgm21_gaussian_sigma(2.0 * self.lipschitz * self.phase_step_size(i), self.epsilon, self.delta))


@dataclasses.dataclass(frozen=True)
class Theorem5Params:
    """Theorem 5's hyper-parameters (β, α as in the theorem; L, β_s, η rebuilt — see the module docstring)."""

    n: int
    d: int
    L0: float
    R_x: float
    D: float
    eps: float
    delta: float
    beta_variant: str
    beta_smooth: float
    alpha: float
    lipschitz: float
    smoothness: float
    step_size: float
    step_condition_holds: bool  # η_1 = η/4 ≤ 2/β_s, needed by the sensitivity bound that calibrates σ
    phase_sizes: tuple
    phase_step_sizes: tuple
    phase_sigmas: tuple
    bisection_steps: int

    def config(self, *, project_output: bool = False) -> PhasedSGDConfig:
        return PhasedSGDConfig(beta_smooth=self.beta_smooth, alpha=self.alpha, feature_bound=self.R_x,
                               lipschitz=self.lipschitz, step_size=self.step_size, epsilon=self.eps,
                               delta=self.delta, project_output=project_output)


def theorem5_params(n, d, L0, R_x, D, eps, delta, beta_variant: str = "corrected") -> Theorem5Params:
    """bgm21 Theorem 5's choices for Phased-SGD with 𝒪_{β,α,R} on an L0-Lipschitz, R_x-bounded ℓ_2 GLL, W of
    ℓ_2-diameter D.

    β = √n·L0/(R_x·D) ("corrected", default) or √n·L0/R_x ("printed"); α = L0R_x/(n ln n); L = 2L0R_x;
    β_s = βR_x²; η = (D/L)·min{4/√n, ε/√(d ln(1/δ))} (rebuilt from [FKT20]). ``eps`` may be inf (no noise: the
    4/√n branch). With the corrected β, η = 2/β_s exactly on the 4/√n branch.
    """
    n, d, L0, R_x, D, eps, delta = _common_theory_inputs(n, d, L0, R_x, D, eps, delta, allow_inf_eps=True)
    beta_variant = _choice("beta_variant", beta_variant, BETA_VARIANTS)
    sqrt_n = math.sqrt(n)
    beta = sqrt_n * L0 / (R_x * D) if beta_variant == "corrected" else sqrt_n * L0 / R_x
    alpha = L0 * R_x / (n * math.log(n))
    lipschitz = 2.0 * L0 * R_x
    smoothness = beta * R_x**2
    privacy_branch = math.inf if math.isinf(eps) else eps / math.sqrt(d * math.log(1.0 / delta))
    step = (D / lipschitz) * min(4.0 / sqrt_n, privacy_branch)
    params = dict(n=n, d=d, L0=L0, R_x=R_x, D=D, eps=eps, delta=delta, beta_variant=beta_variant, beta_smooth=beta,
                  alpha=alpha, lipschitz=lipschitz, smoothness=smoothness, step_size=step,
                  step_condition_holds=step / 4.0 <= (2.0 / smoothness) * (1.0 + _REL_SLACK))
    cfg = PhasedSGDConfig(beta_smooth=beta, alpha=alpha, feature_bound=R_x, lipschitz=lipschitz, step_size=step,
                          epsilon=eps, delta=delta)
    sizes = phase_schedule(n)
    return Theorem5Params(
        **params,
        phase_sizes=tuple(sizes),
        phase_step_sizes=tuple(cfg.phase_step_size(i) for i in range(1, len(sizes) + 1)),
        phase_sigmas=tuple(cfg.phase_sigma(i) for i in range(1, len(sizes) + 1)),
        bisection_steps=bisection_steps(L0, R_x, alpha),
    )


@dataclasses.dataclass(frozen=True)
class PhasedSGDPublicTrace:
    """What a Phased-SGD run releases, per phase i = 1..k (covered by the accounting, with its post-processing).

    phase_outputs: the noisy w_i, (k, d). phase_sizes: n_i. phase_step_sizes: η_i. batch_indices: the records of phase
    i (from the public order). noise_stds: σ_i. sensitivities: 2η_iL, the ℓ_2-sensitivity σ_i is calibrated to.
    sensitivity_bounds: 2η_i(L0R + (n_i − 1)α), the rebuilt bound (≤ sensitivities, checked). noise_multipliers:
    μ_i = sensitivities/σ_i (inf when σ_i = 0). records_used: Σ n_i; records_available: n; fraction_used:
    records_used/n; passes: 1 (single pass: no record is read twice). bisection_steps: K per oracle call.
    oracle_calls: Σ n_i.
    """

    phase_outputs: np.ndarray
    phase_sizes: tuple
    phase_step_sizes: tuple
    batch_indices: tuple
    noise_stds: tuple
    sensitivities: tuple
    sensitivity_bounds: tuple
    noise_multipliers: tuple
    records_used: int
    records_available: int
    fraction_used: float
    passes: int
    bisection_steps: int
    oracle_calls: int


@dataclasses.dataclass(frozen=True)
class PhasedSGDDebugTrace:
    """NOT PRIVATE: computed on the private data or from the secret seed; never publish.

    phase_averages: the noiseless w̄_i, (k, d). noises: the Gaussian draws σ_i·ξ_i, (k, d). last_iterates: u after the
    last step of each phase, (k, d).
    """

    phase_averages: np.ndarray
    noises: np.ndarray
    last_iterates: np.ndarray


@dataclasses.dataclass(frozen=True)
class PhasedSGDResult:
    """Output of ``phased_sgd``: output w_k (projected only with ``project_output``), initial_point w_0, trace
    (public), debug (NOT PRIVATE), config, seed (public), secret_seed_source, guarantee_condition."""

    output: np.ndarray
    initial_point: np.ndarray
    trace: PhasedSGDPublicTrace
    debug: PhasedSGDDebugTrace
    config: PhasedSGDConfig
    seed: int
    secret_seed_source: str
    guarantee_condition: str


def _check_ball(W, d: int):
    if W is None:
        return None
    if not isinstance(W, LpBall):
        raise TypeError(f"W must be a reference.geometry.LpBall with p = 2 or None (W = R^d), got {type(W).__name__}")
    if W.p != 2.0:
        raise ValueError(f"W must be an ℓ_2 ball for Phased-SGD (Theorem 5 is the ℓ_2 setting), got p = {W.p}")
    if W.d != d:
        raise ValueError(f"W has dimension {W.d} but the records have d = {d}")
    return W


def phased_sgd(X, y, loss: GLL, W, w0, config: PhasedSGDConfig, *, seed, noise_seed=None) -> PhasedSGDResult:
    """bgm21 Theorem 5: Phased-SGD [FKT20] on the smoothed GLL with Algorithm 3's oracle (rebuilt; module docstring).

    Args:
        X: the features, (n, d) float64 with ‖x_i‖_2 ≤ config.feature_bound (refused otherwise). y: labels (n,).
        loss: the convex GLL family ℓ^{(y)} (``reference.gll``); L0 = loss.lipschitz.
        W: an ℓ_2 ``LpBall`` (projection Π_W), or None for W = R^d (the Remark after Theorem 5).
        w0: the public start w_0, (d,). config: ``PhasedSGDConfig`` (``theorem5_params(...).config()``).
        seed: the PUBLIC seed (record order). noise_seed: the SECRET seed (None: fresh entropy).

    Lines (module docstring): [1] k, π; [3] n_i, η_i, B_i; [4] projected SGD steps with 𝒪_{β,α,R};
    [5] w̄_i; [6] w_i = w̄_i + N(0, σ_i²I); [7] return w_k.
    """
    if not isinstance(config, PhasedSGDConfig):
        raise TypeError(f"config must be a PhasedSGDConfig, got {type(config).__name__}")
    loss = _check_loss(loss)
    X, y = _check_data(X, y, config.feature_bound, 2.0, "ℓ_2")
    n, d = X.shape
    W = _check_ball(W, d)
    w0 = _float_vector("w0", w0, d)
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    secret = secret_seed(noise_seed, public_seeds=(seed,), name="noise_seed")
    L0, R = loss.lipschitz, config.feature_bound

    if config.step_size / 4.0 > (2.0 / config.smoothness) * (1.0 + _REL_SLACK):
        raise ValueError(f"step_size/4 = {config.step_size / 4.0} exceeds 2/(beta_smooth·feature_bound²) = "
                         f"{2.0 / config.smoothness}: the phase steps must be non-expansive for the sensitivity "
                         "bound that calibrates σ_i (Theorem 5's printed β with D > 4 does this; use the corrected β)")
    sizes = phase_schedule(n)  # [1]
    worst_drift = L0 * R + (sizes[0] - 1) * config.alpha
    if worst_drift > config.lipschitz * (1.0 + _REL_SLACK):
        raise ValueError(f"L0·R + (n_1 − 1)·alpha = {worst_drift} exceeds lipschitz = {config.lipschitz}: σ_i "
                         "calibrated to 2η_i·lipschitz would not cover the sensitivity 2η_i(L0R + (n_i − 1)α); "
                         "lower alpha or raise lipschitz")

    batcher = DisjointBatcher(n, public_order(seed, n, key=(KEY, "phased_sgd", "order")))  # [1]
    streams = secret.streams()
    K = bisection_steps(L0, R, config.alpha)

    def oracle(u, i):  # 𝒪_{β,α,R}(u, z_i) (Algorithm 3, reference.gll)
        return moreau_glm_gradient(u, X[i:i + 1], y[i:i + 1], loss, config.beta_smooth, config.alpha, R)[0]

    w = w0.copy()
    outputs, averages, noises, lasts, batches = [], [], [], [], []
    step_sizes, sigmas, sens, bounds, mults = [], [], [], [], []
    for i, n_i in enumerate(sizes, start=1):  # [2]
        eta_i = config.phase_step_size(i)  # [3]
        batch = batcher.take(n_i)
        u = w.copy()
        total = np.zeros(d)
        for idx in batch:  # [4]
            u = u - eta_i * oracle(u, int(idx))
            if W is not None:
                u = W.project(u)
            total = total + u
        w_bar = total / n_i  # [5]
        sigma_i = config.phase_sigma(i)  # [6]
        noise = sigma_i * streams.generator(KEY, "phased_sgd", "noise", i).standard_normal(d)
        w = w_bar + noise
        if not np.all(np.isfinite(w)):
            raise ValueError(f"phase {i} produced a non-finite output (float64 overflow)")
        sensitivity = 2.0 * eta_i * config.lipschitz
        outputs.append(w), averages.append(w_bar), noises.append(noise), lasts.append(u), batches.append(batch)
        step_sizes.append(eta_i), sigmas.append(sigma_i), sens.append(sensitivity)
        bounds.append(2.0 * eta_i * (L0 * R + (n_i - 1) * config.alpha))
        mults.append(math.inf if sigma_i == 0.0 else sensitivity / sigma_i)
    output = W.project(w) if (config.project_output and W is not None) else w  # [7]

    used = batcher.used
    trace = PhasedSGDPublicTrace(
        phase_outputs=np.array(outputs), phase_sizes=tuple(sizes), phase_step_sizes=tuple(step_sizes),
        batch_indices=tuple(batches), noise_stds=tuple(sigmas), sensitivities=tuple(sens),
        sensitivity_bounds=tuple(bounds), noise_multipliers=tuple(mults), records_used=used, records_available=n,
        fraction_used=used / n, passes=1, bisection_steps=K, oracle_calls=used,
    )
    debug = PhasedSGDDebugTrace(phase_averages=np.array(averages), noises=np.array(noises),
                                last_iterates=np.array(lasts))
    return PhasedSGDResult(output=output, initial_point=w0, trace=trace, debug=debug, config=config, seed=seed,
                           secret_seed_source=secret.source, guarantee_condition=secret.guarantee_condition)


# ---------------------------------------------------------------------------------------------------
# Theorem 6: noisy Frank–Wolfe (Algorithm 5) with Algorithm 3's oracle (ℓ_1 GLLs)


def _mp_float(value) -> float:
    return float(value)


@dataclasses.dataclass(frozen=True)
class NoisyFWConfig:
    """Hyper-parameters of one Algorithm 5 run (every field public). ``theorem6_params(...).config()`` builds one.

    beta_smooth: β. alpha: α. feature_bound: R, the bound ‖x‖_∞ ≤ R (ℓ_1 setting). steps: T (T − 1 noisy steps).
    lap_scale: λ of the report-noisy-min (0: exact LMO, non-private). delta: the δ at which the trace certifies ε.
    noise: label of λ's origin, "certified", "ttz15" or "custom" (recorded, does not change the run).
    """

    beta_smooth: float
    alpha: float
    feature_bound: float
    steps: int
    lap_scale: float
    delta: float
    noise: str = "custom"

    def __post_init__(self):
        checked = dict(
            beta_smooth=_float("beta_smooth", self.beta_smooth, positive=True),
            alpha=_float("alpha", self.alpha, positive=True),
            feature_bound=_float("feature_bound", self.feature_bound, positive=True),
            steps=check_int("steps", self.steps, minimum=2),
            lap_scale=_float("lap_scale", self.lap_scale, nonnegative=True),
            delta=_check_delta(self.delta),
            noise=_choice("noise", self.noise, NOISE_LABELS),
        )
        for name, value in checked.items():
            object.__setattr__(self, name, value)


@dataclasses.dataclass(frozen=True)
class Theorem6Params:
    """Theorem 6's hyper-parameters (β, α from the theorem; T and the Laplace scales rebuilt from [TTZ15]).

    lap_scale: the scale chosen by ``noise``. lap_scale_certified, lap_scale_ttz15: both scales.
    score_sensitivity: Δ_c = L_∞D/n. epsilon_step_certified: calibrate_pure_steps(T − 1, ε, δ).
    scale_ratio: lap_scale_ttz15/lap_scale_certified = C1·√(8T ln(1/δ))·ε_step/(2Dε).
    certified_epsilon: certify_pure([2Δ_c/lap_scale]*(T − 1), δ) (``certify_equal_steps``) for the chosen scale.
    """

    n: int
    d: int
    J: int
    L0: float
    R_x: float
    D: float
    C1: float
    eps: float
    delta: float
    noise: str
    alpha_variant: str
    beta_smooth: float
    alpha: float
    curvature: float
    l_inf: float
    steps: int
    score_sensitivity: float
    epsilon_step_certified: float
    lap_scale_certified: float
    lap_scale_ttz15: float
    lap_scale: float
    scale_ratio: float
    certified_epsilon: float

    def config(self) -> NoisyFWConfig:
        return NoisyFWConfig(beta_smooth=self.beta_smooth, alpha=self.alpha, feature_bound=self.R_x,
                             steps=self.steps, lap_scale=self.lap_scale, delta=self.delta, noise=self.noise)


def theorem6_params(n, d, J, L0, R_x, D, C1, eps, delta, noise: str = "certified",
                    alpha_variant: str = "corrected") -> Theorem6Params:
    """bgm21 Theorem 6's choices for Algorithm 5 on an L0-Lipschitz, R_x-bounded ℓ_1 GLL, W = Conv(V), |V| = J,
    ℓ_1-diameter ≤ D, C1 = max_{v∈V} ‖v‖_1.

    β = L0√(nε)/(R_x·D·ln^{1/4}(1/δ)·√(ln J·ln n)); α = L0R_x/(n ln n) ("corrected") or 1/(n ln n) ("printed");
    rebuilt from [TTZ15]: Γ = βR_x²D², L_∞ = L0R_x, T = max(2, ⌈(Γnε/(L_∞C1))^{2/3}⌉); Laplace scale
    λ = 2Δ_c/calibrate_pure_steps(T − 1, ε, δ) with Δ_c = L_∞D/n ("certified") or
    λ_TTZ = L_∞C1√(8T ln(1/δ))/(nε) ("ttz15", which certifies only ≈ 2ε).
    """
    n, d, L0, R_x, D, eps, delta = _common_theory_inputs(n, d, L0, R_x, D, eps, delta, allow_inf_eps=False)
    J = check_int("J", J, minimum=2)
    C1 = _float("C1", C1, positive=True)
    noise = _choice("noise", noise, NOISE_VARIANTS)
    alpha_variant = _choice("alpha_variant", alpha_variant, ALPHA_VARIANTS)
    log_inv_delta = math.log(1.0 / delta)
    beta = L0 * math.sqrt(n * eps) / (R_x * D * log_inv_delta**0.25 * math.sqrt(math.log(J) * math.log(n)))
    alpha = L0 * R_x / (n * math.log(n)) if alpha_variant == "corrected" else 1.0 / (n * math.log(n))
    curvature = beta * R_x**2 * D**2
    l_inf = L0 * R_x
    T = max(2, math.ceil((curvature * n * eps / (l_inf * C1)) ** (2.0 / 3.0)))
    sensitivity = l_inf * D / n
    eps_step = _mp_float(calibrate_pure_steps(T - 1, eps, delta))
    lap_certified = 2.0 * sensitivity / eps_step
    lap_ttz = l_inf * C1 * math.sqrt(8.0 * T * log_inv_delta) / (n * eps)
    lap = lap_certified if noise == "certified" else lap_ttz
    certified = _mp_float(certify_equal_steps(report_noisy_min_epsilon(sensitivity, lap), T - 1, delta))
    return Theorem6Params(
        n=n, d=d, J=J, L0=L0, R_x=R_x, D=D, C1=C1, eps=eps, delta=delta, noise=noise, alpha_variant=alpha_variant,
        beta_smooth=beta, alpha=alpha, curvature=curvature, l_inf=l_inf, steps=T, score_sensitivity=sensitivity,
        epsilon_step_certified=eps_step, lap_scale_certified=lap_certified, lap_scale_ttz15=lap_ttz, lap_scale=lap,
        scale_ratio=lap_ttz / lap_certified, certified_epsilon=certified,
    )


@dataclasses.dataclass(frozen=True)
class NoisyFWPublicTrace:
    """What an Algorithm 5 run releases (covered by the accounting, with its post-processing).

    selected: j_t for t = 1..T−1. iterates: θ_1..θ_T, (T, d) (post-processing of the selections). lap_scale: λ; noise:
    its label. score_sensitivity: Δ_c = L0R·diam_1(V)/n. epsilon_per_step: 2Δ_c/λ (inf when λ = 0).
    certified_epsilon: certify_pure over the T − 1 steps at ``delta`` (inf when λ = 0). records_used_per_step: n
    (full batch); passes: T − 1; fraction_used: 1.0 (every record, in every step). bisection_steps: K.
    oracle_calls: n(T − 1).
    """

    selected: tuple
    iterates: np.ndarray
    lap_scale: float
    noise: str
    score_sensitivity: float
    epsilon_per_step: float
    certified_epsilon: float
    delta: float
    records_used_per_step: int
    records_available: int
    passes: int
    fraction_used: float
    bisection_steps: int
    oracle_calls: int


@dataclasses.dataclass(frozen=True)
class NoisyFWDebugTrace:
    """NOT PRIVATE: gradients g_t (T − 1, d) and scores ⟨V_j, g_t⟩ (T − 1, J), computed on the private data."""

    gradients: np.ndarray
    scores: np.ndarray


@dataclasses.dataclass(frozen=True)
class NoisyFWResult:
    """Output of ``noisy_frank_wolfe``: output θ_T, trace (public), debug (NOT PRIVATE), config,
    secret_seed_source, guarantee_condition."""

    output: np.ndarray
    trace: NoisyFWPublicTrace
    debug: NoisyFWDebugTrace
    config: NoisyFWConfig
    secret_seed_source: str
    guarantee_condition: str


def noisy_frank_wolfe(X, y, loss: GLL, polytope: Polytope, config: NoisyFWConfig, *, theta1=None,
                      noise_seed=None, public_seeds=()) -> NoisyFWResult:
    """bgm21 Theorem 6: Algorithm 5, noisy Frank–Wolfe [TTZ15] with Algorithm 3's oracle (rebuilt; module docstring).

    Args:
        X: features (n, d) float64 with ‖x_i‖_∞ ≤ config.feature_bound (refused otherwise). y: labels (n,).
        loss: the convex GLL family. polytope: W = Conv(V) (``reference.geometry.Polytope``).
        config: ``NoisyFWConfig`` (``theorem6_params(...).config()``).
        theta1: the public start θ_1 ∈ W (default V_0; a point outside W is the caller's responsibility).
        noise_seed: the SECRET seed of the Laplace noise (None: fresh entropy). public_seeds: public seeds of the
            surrounding experiment, refused as noise seeds. The algorithm has no public randomness of its own.

    Lines (module docstring): [1] θ_1; [2] t = 1..T−1; [3] full-batch g_t; [4] report-noisy-min j_t;
    [5] θ_{t+1} = (1 − μ_t)θ_t + μ_tV_{j_t}; [6] return θ_T.
    """
    if not isinstance(config, NoisyFWConfig):
        raise TypeError(f"config must be a NoisyFWConfig, got {type(config).__name__}")
    if not isinstance(polytope, Polytope):
        raise TypeError(f"polytope must be a reference.geometry.Polytope, got {type(polytope).__name__}")
    loss = _check_loss(loss)
    X, y = _check_data(X, y, config.feature_bound, math.inf, "ℓ_1")
    n, d = X.shape
    if polytope.d != d:
        raise ValueError(f"the polytope has dimension {polytope.d} but the records have d = {d}")
    V = polytope.vertices
    theta = V[0].copy() if theta1 is None else _float_vector("theta1", theta1, d)  # [1]
    secret = secret_seed(noise_seed, public_seeds=public_seeds, name="noise_seed")
    streams = secret.streams()
    L0, R = loss.lipschitz, config.feature_bound
    K = bisection_steps(L0, R, config.alpha)

    iterates, selected, gradients, scores_all = [theta.copy()], [], [], []
    for t in range(1, config.steps):  # [2]
        g = moreau_glm_gradient(theta, X, y, loss, config.beta_smooth, config.alpha, R).mean(axis=0)  # [3]
        scores = np.array([float(np.dot(V[j], g)) for j in range(polytope.J)])
        if config.lap_scale > 0.0:  # [4]
            j = laplace_noisy_argmin(scores, config.lap_scale, streams.generator(KEY, "noisy_fw", "noise", t))
        else:
            j = int(np.argmin(scores))  # exact LMO, lowest index on ties (the non-private limit)
        mu = 2.0 / (t + 2.0)  # [5]
        theta = (1.0 - mu) * theta + mu * V[j]
        iterates.append(theta.copy()), selected.append(j), gradients.append(g), scores_all.append(scores)

    sensitivity = L0 * R * polytope.diameter(1) / n
    if config.lap_scale > 0.0:
        eps_step = report_noisy_min_epsilon(sensitivity, config.lap_scale)
        certified = _mp_float(certify_equal_steps(eps_step, config.steps - 1, config.delta))
    else:
        eps_step = certified = math.inf
    trace = NoisyFWPublicTrace(
        selected=tuple(selected), iterates=np.array(iterates), lap_scale=config.lap_scale, noise=config.noise,
        score_sensitivity=sensitivity, epsilon_per_step=eps_step, certified_epsilon=certified, delta=config.delta,
        records_used_per_step=n, records_available=n, passes=config.steps - 1, fraction_used=1.0,
        bisection_steps=K, oracle_calls=n * (config.steps - 1),
    )
    debug = NoisyFWDebugTrace(gradients=np.array(gradients).reshape(-1, d),
                              scores=np.array(scores_all).reshape(-1, polytope.J))
    return NoisyFWResult(output=theta, trace=trace, debug=debug, config=config, secret_seed_source=secret.source,
                         guarantee_condition=secret.guarantee_condition)
