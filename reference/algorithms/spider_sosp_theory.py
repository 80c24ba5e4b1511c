"""spider_sosp Lemmas 3.3, 3.8, 3.9, 3.10, Proposition 3.4 and Theorem 3.11: the hyper-parameters the theory
prescribes for Algorithm 2, made concrete.

Liu, Talwar — *Adaptive Batch Size for Privately Finding Second-Order Stationary Points* (arXiv 2024). The paper
states most parameters up to Õ(·) and never gives γ (the accuracy of the released gradients) a number; here every
hidden constant is named, with two modes for the polylogarithmic factors.

Problem constants (Assumption 3.1): G = ``lipschitz``, M = ``smoothness``, ρ = ``hessian_lipschitz``,
B = ``loss_gap`` (the initial gap F(x_0) − inf F, not a batch size); n records, dimension d, target (ε, δ).

* α (Lemma 3.10, Theorem 3.11; c_α = ``c_alpha``, default 1, spider_sosp.E29):
      α = c_α [((BGM)^{1/3} + √(BM))(√d/(nε))^{1/2} + (B^{2/9}M^{2/9}G^{5/9} + B^{4/9}M^{4/9}G^{1/9})/n^{1/3} + √(MB/n)]
* κ = max(α√d/ε, (BGM)^{1/3}) (Lemma 3.10).
* b = ⌈G√d/(εα) + G²/α²⌉ (Lemma 3.8; ``spider_sosp.o1_batch_size``), b_t = ``spider_sosp.adaptive_batch_size``
  and coef_bt = max(√d/(αε), κ/α²), so that b_t ≥ coef_bt·‖g̃_{t−1}‖.
* T = n by default (Proposition 3.4's T = Õ(BM/γ²) is never made concrete; each step reads ≥ 1 record, so the run
  is data-limited); the tree has Σ = T leaves and L = ⌈log2 T⌉ + 1 levels.
* V̄ = G²/b + κ/coef_bt: with the drift rule and no drift reset at perturbations, the SPIDER estimate of every step
  has E‖∇_t − ∇F(x_t)‖² ≤ G²/b + Σ_{O2 steps i of the segment} ‖g̃_{i−1}‖²/b_i ≤ G²/b + Σ ‖g̃_{i−1}‖/coef_bt ≤ V̄,
  because the segment's Σ ‖g̃_{i−1}‖ is its drift, < κ (Lemma 3.6 made explicit).
* γ, by ``mode``:
    - "theory": γ_hp = √(8 V̄ ln(4T/ι)) + σ√L (√d + √(2 ln(2T/ι))): the SPIDER chain's error by Pinelis' inequality for
      martingales with bounded increments, and the tree noise by Gaussian norm concentration, each with a union bound
      over T steps — so every step has ‖∇_t + TREE − ∇F(x_t)‖ ≤ γ_hp with probability ≥ 1 − ι (Lemma 3.8 made
      explicit). Vacuous at laptop scale (γ_hp usually exceeds G for n ≤ 10⁶): for bound checks.
    - "unit": every polylog factor set to 1 and γ = γ_rms = √(σ² d ⌈L/2⌉ + V̄), the root-mean-square error (a tree
      prefix has popcount(t) ≈ L/2 nodes on average). For experiments.
* threshold (Algorithm 2 line 9), Γ (lines 9–10, Lemma 3.3), ζ (line 11, Proposition 3.4):
    - "theory": threshold = γ ln³(BMd/(ρι)), Γ = ⌈M ln(dMB/(ργι))/√(ργ)⌉, ζ = γ/√ln(d/ι);
    - "unit": threshold = γ, Γ = ⌈M/√(ργ)⌉, ζ = γ.
  Every logarithm of the theory mode is clamped at ≥ 1 (its arguments carry units; Lemma 3.3's logs are read as
  plain numbers).
* The non-private limit ε = inf: σ = 0 (the default noise_std), the √d/(nε) term of α and the √d/(εα) terms of b
  and b_t vanish, κ = (BGM)^{1/3}, b = ⌈G²/α²⌉.

σ (``noise_std``) is an INPUT: the calibration lives in ``reference.algorithms.spider_sosp_privacy``
(``spider_sosp_sigma``), which computes α, κ, b and coef_bt in mpmath (``spider_sosp_parameters``); this module
computes the same quantities in float64 (tests compare the two).

Everything here is float64: these are optimisation hyper-parameters, not privacy scalars.
"""

from __future__ import annotations

import dataclasses
import math

from ..validation import check_int, check_probability, check_real
from .spider_sosp import ADJACENCIES, TREE_SCOPES, SpiderConfig, adaptive_batch_size, o1_batch_size

__all__ = [
    "MODES",
    "SpiderSettings",
    "alpha_rule",
    "kappa_rule",
    "batch_coefficient",
    "tree_levels",
    "variance_bound",
    "gamma_hp",
    "gamma_rms",
    "threshold_rule",
    "freeze_rule",
    "perturbation_scale_rule",
    "sample_requirement",
    "escape_decrease",
    "spider_settings",
    "o1_batch_size",
    "adaptive_batch_size",
]

#: "theory" (explicit high-probability constants, logs clamped at 1) or "unit" (polylogs set to 1, γ = γ_rms).
MODES = ("theory", "unit")


def _positive(name, value) -> float:
    return float(check_real(name, value, positive=True))


def _epsilon(value) -> float:
    return float(check_real("epsilon", value, positive=True, allow_inf=True))


def _mode(mode) -> str:
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return mode


def _log(value: float) -> float:
    """ln(value) clamped at ≥ 1: the theory mode's polylog factors have dimensionful arguments (read as numbers)."""
    return max(1.0, math.log(value))


def alpha_rule(*, lipschitz, smoothness, loss_gap, d, n, epsilon, c_alpha=1.0) -> float:
    """α of spider_sosp Lemma 3.10 / Theorem 3.11, times c_α (spider_sosp.E29):

        c_α [((BGM)^{1/3} + √(BM))(√d/(nε))^{1/2} + (B^{2/9}M^{2/9}G^{5/9} + B^{4/9}M^{4/9}G^{1/9})/n^{1/3} + √(MB/n)]

    ε = inf drops the first (privacy) term.
    """
    G, M, B = _positive("lipschitz", lipschitz), _positive("smoothness", smoothness), _positive("loss_gap", loss_gap)
    d = check_int("d", d, minimum=1)
    n = check_int("n", n, minimum=1)
    epsilon = _epsilon(epsilon)
    c_alpha = _positive("c_alpha", c_alpha)
    privacy = 0.0 if math.isinf(epsilon) else ((B * G * M) ** (1 / 3) + math.sqrt(B * M)) * math.sqrt(
        math.sqrt(d) / (n * epsilon))
    statistical = ((B * M) ** (2 / 9) * G ** (5 / 9) + (B * M) ** (4 / 9) * G ** (1 / 9)) / n ** (1 / 3)
    return c_alpha * (privacy + statistical + math.sqrt(M * B / n))


def kappa_rule(alpha, *, lipschitz, smoothness, loss_gap, d, epsilon) -> float:
    """κ = max(α√d/ε, (BGM)^{1/3}) (spider_sosp Lemma 3.10); (BGM)^{1/3} when ε = inf."""
    alpha = _positive("alpha", alpha)
    G, M, B = _positive("lipschitz", lipschitz), _positive("smoothness", smoothness), _positive("loss_gap", loss_gap)
    d = check_int("d", d, minimum=1)
    epsilon = _epsilon(epsilon)
    privacy = 0.0 if math.isinf(epsilon) else alpha * math.sqrt(d) / epsilon
    return max(privacy, (B * G * M) ** (1 / 3))


def batch_coefficient(alpha, *, kappa, d, epsilon) -> float:
    """coef_bt = max(√d/(αε), κ/α²): b_t ≥ coef_bt·‖g̃_{t−1}‖ for every O2 batch (spider_sosp Lemma 3.8), so an O2
    step's per-record sensitivity M‖x_t − x_{t−1}‖/b_t = ‖g̃_{t−1}‖/b_t is at most 1/coef_bt. κ/α² when ε = inf."""
    alpha = _positive("alpha", alpha)
    kappa = _positive("kappa", kappa)
    d = check_int("d", d, minimum=1)
    epsilon = _epsilon(epsilon)
    privacy = 0.0 if math.isinf(epsilon) else math.sqrt(d) / (alpha * epsilon)
    return max(privacy, kappa / alpha**2)


def tree_levels(steps) -> int:
    """L = ⌈log2 T⌉ + 1, the levels of the tree over T leaves (padded to a power of 2; T = 1 gives L = 1)."""
    steps = check_int("steps", steps, minimum=1)
    return (steps - 1).bit_length() + 1  # ⌈log2 T⌉ + 1 in integers


def variance_bound(*, lipschitz, batch_size, kappa, coefficient) -> float:
    """V̄ = G²/b + κ/coef_bt, the a.s. bound on the conditional variance of every SPIDER estimate of Algorithm 2 when
    drift is not reset at perturbations (module doc; spider_sosp Lemma 3.6)."""
    G = _positive("lipschitz", lipschitz)
    b = check_int("batch_size", batch_size, minimum=1)
    return G**2 / b + _positive("kappa", kappa) / _positive("coefficient", coefficient)


def gamma_hp(*, variance_bound, noise_std, d, levels, steps, iota) -> float:
    """γ_hp = √(8 V̄ ln(4T/ι)) + σ√L (√d + √(2 ln(2T/ι))), logs clamped at ≥ 1 (theory mode; module doc)."""
    V = float(check_real("variance_bound", variance_bound, nonnegative=True))
    sigma = float(check_real("noise_std", noise_std, nonnegative=True))
    d = check_int("d", d, minimum=1)
    L = check_int("levels", levels, minimum=1)
    T = check_int("steps", steps, minimum=1)
    iota = float(check_probability("iota", iota))
    return math.sqrt(8 * V * _log(4 * T / iota)) + sigma * math.sqrt(L) * (
        math.sqrt(d) + math.sqrt(2 * _log(2 * T / iota)))


def gamma_rms(*, variance_bound, noise_std, d, levels) -> float:
    """γ_rms = √(σ² d ⌈L/2⌉ + V̄) (unit mode; module doc)."""
    V = float(check_real("variance_bound", variance_bound, nonnegative=True))
    sigma = float(check_real("noise_std", noise_std, nonnegative=True))
    d = check_int("d", d, minimum=1)
    L = check_int("levels", levels, minimum=1)
    return math.sqrt(sigma**2 * d * -(-L // 2) + V)


def _problem(d, smoothness, hessian_lipschitz, loss_gap, iota):
    return (check_int("d", d, minimum=1), _positive("smoothness", smoothness),
            _positive("hessian_lipschitz", hessian_lipschitz), _positive("loss_gap", loss_gap),
            float(check_probability("iota", iota)))


def threshold_rule(gamma, *, mode, d, smoothness, hessian_lipschitz, loss_gap, iota) -> float:
    """The line 9 threshold of spider_sosp Algorithm 2: γ ln³(BMd/(ρι)) (theory; also Lemma 3.3's α), γ (unit)."""
    gamma = _positive("gamma", gamma)
    d, M, rho, B, iota = _problem(d, smoothness, hessian_lipschitz, loss_gap, iota)
    if _mode(mode) == "unit":
        return gamma
    return gamma * _log(B * M * d / (rho * iota)) ** 3


def freeze_rule(gamma, *, mode, d, smoothness, hessian_lipschitz, loss_gap, iota) -> int:
    """Γ of spider_sosp Lemma 3.3 (Algorithm 2 line 10): ⌈M ln(dMB/(ργι))/√(ργ)⌉ (theory), ⌈M/√(ργ)⌉ (unit)."""
    gamma = _positive("gamma", gamma)
    d, M, rho, B, iota = _problem(d, smoothness, hessian_lipschitz, loss_gap, iota)
    factor = 1.0 if _mode(mode) == "unit" else _log(d * M * B / (rho * gamma * iota))
    return math.ceil(M * factor / math.sqrt(rho * gamma))


def perturbation_scale_rule(gamma, *, mode, d, iota) -> float:
    """ζ of spider_sosp Proposition 3.4 (Algorithm 2 line 11, g_t ~ N(0, ζ²/d I_d)): γ/√ln(d/ι) (theory), γ (unit)."""
    gamma = _positive("gamma", gamma)
    d = check_int("d", d, minimum=1)
    iota = float(check_probability("iota", iota))
    if _mode(mode) == "unit":
        return gamma
    return gamma / math.sqrt(_log(d / iota))


def escape_decrease(gamma, *, d, smoothness, hessian_lipschitz, loss_gap, iota) -> float:
    """γ^{3/2}/(√ρ ln³(dMB/(ργι))), the decrease Lemma 3.3 promises over Γ steps (its Ω(·) with constant 1; log
    clamped at ≥ 1)."""
    gamma = _positive("gamma", gamma)
    d, M, rho, B, iota = _problem(d, smoothness, hessian_lipschitz, loss_gap, iota)
    return gamma**1.5 / (math.sqrt(rho) * _log(d * M * B / (rho * gamma * iota)) ** 3)


def sample_requirement(gamma, *, batch_size, loss_gap, smoothness, kappa, d, epsilon) -> float:
    """req(γ) = bBM/(κγ) + BM(√d/(γ²ε) + κ/γ³ + 1/γ²), spider_sosp Lemma 3.9's record count without its polylogs
    (the √d/(γ²ε) term vanishes for ε = inf).

    Lemma 3.10 picks α so that req(α) ≲ n. Exactly, with c_α ≥ 1 and the prescribed κ and b,
    req(α) ≤ 5n + BM/(κα): b ≤ G√d/(εα) + G²/α² + 1 splits bBM/(κα) into BMG√d/(εα²κ) + BMG²/(κα³) + BM/(κα), and
    each of the five terms other than BM/(κα) is ≤ n by one term of α: α² ≥ ((BGM)^{2/3} + BM)√d/(nε) bounds
    BM√d/(α²ε) and (with κ ≥ (BGM)^{1/3}) BMG√d/(εα²κ); α³ ≥ B^{4/3}M^{4/3}G^{1/3}/n bounds BMκ/α³ when
    κ = (BGM)^{1/3} (when κ = α√d/ε it equals BM√d/(α²ε)); α³ ≥ (BM)^{2/3}G^{5/3}/n bounds BMG²/(κα³); α² ≥ MB/n
    bounds BM/α².
    """
    gamma = _positive("gamma", gamma)
    b = check_int("batch_size", batch_size, minimum=1)
    B, M = _positive("loss_gap", loss_gap), _positive("smoothness", smoothness)
    kappa = _positive("kappa", kappa)
    d = check_int("d", d, minimum=1)
    epsilon = _epsilon(epsilon)
    privacy = 0.0 if math.isinf(epsilon) else math.sqrt(d) / (gamma**2 * epsilon)
    return b * B * M / (kappa * gamma) + B * M * (privacy + kappa / gamma**3 + 1 / gamma**2)


@dataclasses.dataclass(frozen=True)
class SpiderSettings:
    """The settings of a run of spider_sosp Algorithm 2 (module doc). Every field is public.

    Inputs: n, d, lipschitz (G), smoothness (M), hessian_lipschitz (ρ), loss_gap (B), epsilon, delta, mode, iota (ι,
    the failure probability of the theory mode), c_alpha, noise_std (σ, the input calibrated elsewhere), adjacency and
    tree_scope (what σ was calibrated for). Derived: alpha (α), kappa (κ), batch_size (b), batch_coefficient
    (coef_bt), steps (T), tree_levels (L), variance_bound (V̄), gamma (γ_hp or γ_rms), threshold, freeze_steps (Γ),
    perturbation_scale (ζ), sample_requirement (req(α) of Lemma 3.9, ≤ 5n + BM/(κα)), step_size (η = 1/M).
    ``config()`` gives the ``SpiderConfig`` that runs them.
    """

    n: int
    d: int
    lipschitz: float
    smoothness: float
    hessian_lipschitz: float
    loss_gap: float
    epsilon: float
    delta: float
    mode: str
    iota: float
    c_alpha: float
    noise_std: float
    adjacency: str
    tree_scope: str
    alpha: float
    kappa: float
    batch_size: int
    batch_coefficient: float
    steps: int
    tree_levels: int
    variance_bound: float
    gamma: float
    threshold: float
    freeze_steps: int
    perturbation_scale: float
    sample_requirement: float
    step_size: float

    def config(self, *, reset_drift_on_perturb=False, perturb=True, enforce_constants=False) -> SpiderConfig:
        """The ``SpiderConfig`` of these settings, with the flags of ``spider_sosp.SpiderConfig``."""
        return SpiderConfig(
            d=self.d, smoothness=self.smoothness, alpha=self.alpha, epsilon=self.epsilon, kappa=self.kappa,
            batch_size=self.batch_size, threshold=self.threshold, freeze_steps=self.freeze_steps,
            perturbation_scale=self.perturbation_scale, noise_std=self.noise_std, steps=self.steps,
            adjacency=self.adjacency, tree_scope=self.tree_scope, reset_drift_on_perturb=reset_drift_on_perturb,
            perturb=perturb, lipschitz=self.lipschitz, enforce_constants=enforce_constants,
        )


def spider_settings(n, d, lipschitz, smoothness, hessian_lipschitz, loss_gap, epsilon, delta, *, mode="unit",
                    iota=0.01, c_alpha=1.0, noise_std=None, steps=None, adjacency="replace_one",
                    tree_scope="global") -> SpiderSettings:
    """The hyper-parameters of spider_sosp Algorithm 2 for a problem and a privacy target (module doc).

    n: records ≥ 1. d: dimension ≥ 1. lipschitz G, smoothness M, hessian_lipschitz ρ, loss_gap B: > 0, finite.
    epsilon: ε > 0, or inf (the non-private limit). delta: δ ∈ (0, 1) (recorded: it enters only σ).
    mode: "unit" (default) or "theory". iota: ι ∈ (0, 1) (theory mode only). c_alpha: c_α > 0.
    noise_std: σ ≥ 0 of the tree nodes — required when ε is finite (calibrate it with
    ``spider_sosp_privacy.spider_sosp_sigma`` for the same adjacency and tree_scope); None means 0 when ε = inf.
    steps: T (default n). adjacency: "replace_one" or "zero_out". tree_scope: "global" or "segment".
    """
    n = check_int("n", n, minimum=1)
    d = check_int("d", d, minimum=1)
    G, M = _positive("lipschitz", lipschitz), _positive("smoothness", smoothness)
    rho, B = _positive("hessian_lipschitz", hessian_lipschitz), _positive("loss_gap", loss_gap)
    epsilon = _epsilon(epsilon)
    delta = float(check_probability("delta", delta))
    mode = _mode(mode)
    iota = float(check_probability("iota", iota))
    c_alpha = _positive("c_alpha", c_alpha)
    if noise_std is None:
        if not math.isinf(epsilon):
            raise ValueError("noise_std is required when epsilon is finite: calibrate it with "
                             "reference.algorithms.spider_sosp_privacy.spider_sosp_sigma (None means 0 only for "
                             "the non-private limit epsilon = inf)")
        noise_std = 0.0
    sigma = float(check_real("noise_std", noise_std, nonnegative=True))
    T = n if steps is None else check_int("steps", steps, minimum=1)
    if not isinstance(adjacency, str) or adjacency not in ADJACENCIES:
        raise ValueError(f"adjacency must be one of {ADJACENCIES}, got {adjacency!r}")
    if not isinstance(tree_scope, str) or tree_scope not in TREE_SCOPES:
        raise ValueError(f"tree_scope must be one of {TREE_SCOPES}, got {tree_scope!r}")

    problem = dict(lipschitz=G, smoothness=M, loss_gap=B, d=d, epsilon=epsilon)
    alpha = alpha_rule(n=n, c_alpha=c_alpha, **problem)
    kappa = kappa_rule(alpha, **problem)
    b = o1_batch_size(G, d, epsilon, alpha)
    coefficient = batch_coefficient(alpha, kappa=kappa, d=d, epsilon=epsilon)
    levels = tree_levels(T)
    V = variance_bound(lipschitz=G, batch_size=b, kappa=kappa, coefficient=coefficient)
    if mode == "theory":
        gamma = gamma_hp(variance_bound=V, noise_std=sigma, d=d, levels=levels, steps=T, iota=iota)
    else:
        gamma = gamma_rms(variance_bound=V, noise_std=sigma, d=d, levels=levels)
    shape = dict(mode=mode, d=d, smoothness=M, hessian_lipschitz=rho, loss_gap=B, iota=iota)
    return SpiderSettings(
        n=n, d=d, lipschitz=G, smoothness=M, hessian_lipschitz=rho, loss_gap=B, epsilon=epsilon, delta=delta,
        mode=mode, iota=iota, c_alpha=c_alpha, noise_std=sigma, adjacency=adjacency, tree_scope=tree_scope,
        alpha=alpha, kappa=kappa, batch_size=b, batch_coefficient=coefficient, steps=T, tree_levels=levels,
        variance_bound=V, gamma=gamma, threshold=threshold_rule(gamma, **shape),
        freeze_steps=freeze_rule(gamma, **shape),
        perturbation_scale=perturbation_scale_rule(gamma, mode=mode, d=d, iota=iota),
        sample_requirement=sample_requirement(alpha, batch_size=b, loss_gap=B, smoothness=M, kappa=kappa, d=d,
                                              epsilon=epsilon),
        step_size=1.0 / M,
    )
