"""dpzero Table 1 and Remarks 3.6, 4.1, 4.2 (Figure 1(c)), on the subspace logistic problem (P2):
under Assumption 3.5 with an effective rank r = O(1), DPZero's error does not grow with the dimension d,
while DPGD-0th's does.

Problem: (P2) ``SubspaceLogistic`` (reference.objectives_dpzero), f(x; (c, b)) = log(1 + exp(−b<Uc, x>)),
k = 3, L = 1, ℓ = 1/4, r = Tr(H)/‖H‖₂ <= k for every d. The same rows (c_i, b_i) are used at every d and U
spans the first k axes. By the rotation invariance of u_t ~ Unif(√d S^{d−1}) every orthonormal U gives the
same law of U^T u_t, so nothing is lost; with common seeds the runs at different d then share the first k
coordinates of their direction draws and all of their noise, which pairs the replicates.

Why DPZero should be flat: F depends on x only through y = U^T x, and DPZero moves y by
−α(m_t + z_t)·w_t with w_t = U^T u_t. At fixed (α, T, C, σ) the whole run therefore depends on d only
through the law of w_t, whose second moment E[w w^T] = I_k is d-free; its fourth moment carries the factor
κ(d) = d/(d+2) of Lemma C.1(iv), E[(u^T a)² u^T H u] = κ(d)(2a^T H a + ‖a‖² Tr H), the only d-dependent
coefficient of the exact one-step expectation. Tolerance: between d₁ < d₂ the log-log slope of the mean
error must lie within ±s(d₁, d₂), s = log(κ(d₂)/κ(d₁)) / log(d₂/d₁), the slope that a quantity
proportional to κ(d) would have: s = 0.157 for d ∈ {3, 64} (quick), 0.087 for {3, 1024} (full). DPGD-0th
with Remark 3.4's clip C = Ld adds N(0, σ²I_d) with σ ∝ C ∝ d, so its error grows until the bounded metric
(‖∇F‖ <= L = 1) saturates.

Hyperparameters: α and T of Theorem 3 (``theorem3_settings``; they do not depend on d), held fixed for
every d; λ = Theorem 3's λ_max at each d. n = 12, ε = 80, δ = 1e-5 (Lemma 2.2 is verified for
ε <= 80, dpzero.E5): n·ε ≈ 1000 is about the smallest at which DPGD-0th is below saturation at d = k, so that its
growth can show, and a run costs ∝ n·T with T ∝ n·ε, hence the small n (the reference loops over samples).
DPZero's clip threshold is C = L = 1 (E[a_i²] = ‖∇f_i‖² <= L² by Lemma C.1(ii), so C = L clips only the
tail, ~1% of the samples), not Theorem 3's 4L̃ ≈ 16.4: that C makes σ 16 times larger and the iterates
noise-saturated — measured at these settings (R = 200): E_τ‖∇F‖² ≈ 0.057 at d = 3 and at d = 64, above
‖∇F(x₀)‖² = 0.038, while a DPZero whose σ grows like √d gives 0.067 and 0.077, a slope of 0.05 < s: with
that C no check on E_τ‖∇F‖² could tell the two apart. With C = 1: 0.0107 and 0.0109.

Metric per run: E_τ‖∇F(x_τ)‖² = (1/T) Σ_{t<T} ‖∇F(x_t)‖² (τ ~ Unif{0..T−1}), from ``trace``. R replicate
runs per d share their seeds across d (paired design). Quick: d ∈ {3, 64}, R = 16 (DPZero) and 16
(DPGD-0th); full: d ∈ {3, 16, 64, 256, 1024}, R = 200 and 100.

Criterion:
  (a) DPZero, equivalence (TOST, intersection–union over the d > d_min of the grid): for each d the slope
      between d_min and d is shown to lie inside (−s, s) by two one-sided paired t-tests, of
      E[ρ₊M(d_min) − M(d)] > 0 and E[M(d) − ρ₋M(d_min)] > 0 with ρ± = (d/d_min)^{±s}, each at level
      ``EQUIVALENCE_LEVEL`` = 1e-3. A DPZero whose slope lies outside [−s, s] passes with probability
      <= 1e-3; the evidence states the slope, its standard error and the minimal detectable slope.
      This part demonstrates flatness (a failure to reject would not), so it is decided here and carries
      no p-value for the runner's Holm correction; the evidence also reports its false-alarm probability
      at the observed slope and standard error (noncentral t; 2e-23 at the quick budget).
  (b) DPGD-0th (same α, T; C = Ld): a one-sided paired t-test of H0: E[M(d_max)] >= 3·E[M(d_min)],
      at the claim's level 1e-6 through the runner's Holm correction; the evidence states
      the growth factor and the smallest factor the test detects with power 0.9. This part falsifies
      (growth is rejected only when shown to fall short): DPGD-0th's runs at d_max are noise-saturated and
      spread widely, so demonstrating a factor >= 3 would need ~100 replicates. At the quick budget it has
      power only against a low-spread shortfall such as no growth at all (the σ/d mutant: p < 1e-7 on 12
      of 12 seeds); the full budget detects factors <= 1.5. Observed factors: 3.6–6.2 (quick, 12 seeds),
      4.25 (full).
The t-tests rely on the CLT for per-run metrics in [0, 1] (finite-sample bounds for that range are far too
wide at these R).

Mutants: DPZero with σ calibrated to the update vector (σ·√d), DPZero with the clip threshold of
Algorithm 1 (C·d), DPGD-0th with σ/d. Not mutants, and why:
  * DPZero adding d-dimensional noise z ∈ R^d (std σ per coordinate) instead of z·u_t: it has the same
    second moment, E[(z u)(z u)^T] = σ²I_d = E[z z^T], so it adds the same σ²Tr(H) to every one-step
    expectation and no utility metric can see it (a privacy audit is the place for it).
  * DPZero with unit-norm directions (dpzero.E17): a d-fold slowdown whose slope is capped by
    log(‖∇F(x₀)‖²/M(d_min))/log(d_max/d_min); on some (P2) draws it is below s (soak: 1 pass in 8).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import optimize
from scipy import stats as sps
from scipy.special import expit

from proofs_checks.authoring import FAIL, PASS, POWER, Claim, Evidence, substitute
from reference.algorithms.dpzero_theory import theorem3_settings
from reference.objectives_dpzero import SubspaceLogistic

#: Subspace dimension k of (P2); r <= k.
SUBSPACE = 3
SAMPLES = 12
EPSILON = 80.0
DELTA = 1e-5
LIPSCHITZ = 1.0  # L of (P2)
SMOOTHNESS = 0.25  # ℓ of (P2)
#: DPZero's clip threshold C = L (see the module docstring for why not Theorem 3's 4L̃).
DPZERO_CLIP = LIPSCHITZ
#: Level of the equivalence test (a): the probability that a DPZero whose slope lies outside ±s passes.
EQUIVALENCE_LEVEL = 1e-3
#: DPGD-0th's error at the largest d is at least this multiple of its error at the smallest d.
GROWTH_FACTOR = 3.0

QUICK = {"dims": (3, 64), "dpzero_runs": 16, "dpgd_runs": 16}
FULL = {"dims": (3, 16, 64, 256, 1024), "dpzero_runs": 200, "dpgd_runs": 100}


def kappa(d: int) -> float:
    """κ(d) = d/(d+2): the factor of E[(u^T a)² u^T H u] in Lemma C.1(iv), u ~ Unif(√d S^{d−1})."""
    return d / (d + 2.0)


def slope_tolerance(d_min: int, d: int) -> float:
    """s(d₁, d₂) = log(κ(d₂)/κ(d₁)) / log(d₂/d₁): the log-log slope of a quantity proportional to κ(d)."""
    return math.log(kappa(d) / kappa(d_min)) / math.log(d / d_min)


# --- the problem ---------------------------------------------------------------------------------------


class _LogisticLoss:
    """f(x; (c, b)) = log(1 + exp(−b<c, U^T x>)) for stacked points (..., d) and rows (..., k+1) that
    broadcast: the per-sample loss of ``SubspaceLogistic`` without its per-call validation (the reference
    calls the loss 2n times per step)."""

    def __init__(self, basis: np.ndarray):
        self.basis = basis
        self.k = basis.shape[1]

    def __call__(self, x, z):
        margin = np.sum(z[..., : self.k] * (np.asarray(x) @ self.basis), axis=-1)
        return np.logaddexp(0.0, -z[..., self.k] * margin)


class _SquaredGradientNorm:
    """‖∇F(x)‖² for x of shape (d,) (a float) or (R, d) (shape (R,)): ∇F = U·((1/n) Σ_i w_i c_i) with
    w_i = −b_i σ(−b_i m_i), m_i = <c_i, U^T x> (``SubspaceLogistic.empirical_gradient``, stacked)."""

    def __init__(self, objective: SubspaceLogistic):
        self.basis = objective.basis
        self.coefficients = objective.coefficients
        self.labels = objective.labels

    def __call__(self, x):
        margins = (np.asarray(x) @ self.basis) @ self.coefficients.T
        weights = -self.labels * expit(-self.labels * margins)
        gradient = (weights @ self.coefficients / self.labels.size) @ self.basis.T
        return np.sum(gradient * gradient, axis=-1)


def _rows(ctx):
    """The rows (c_i, b_i), i = 1..n, of a (P2) instance (features uniform in the unit k-ball, 10% flips)."""
    base = SubspaceLogistic(SUBSPACE, SAMPLES, SUBSPACE, ctx.generator("dpzero_rate", "data"))
    return base.coefficients.copy(), base.labels.copy(), base.effective_rank


def _instance(d: int, coefficients, labels) -> SubspaceLogistic:
    """(P2) in R^d with U = the first k axes and the given rows."""
    return SubspaceLogistic.from_parts(np.eye(d)[:, :SUBSPACE], coefficients, labels)


def _metrics(algorithm, objective, seeds, noise_seeds, **kwargs) -> np.ndarray:
    """E_τ‖∇F(x_τ)‖² of each replicate run, shape (R,).

    A subject that batches replicates (seed/noise_seed arrays, the fast backend) is called once;
    one that refuses arrays (the reference) is called once per replicate.
    """
    loss, trace = _LogisticLoss(objective.basis), _SquaredGradientNorm(objective)
    x0 = np.zeros(objective.d)
    steps = kwargs["steps"]
    try:
        result = algorithm(loss, objective.data, x0, seed=seeds, noise_seed=noise_seeds, trace=trace, **kwargs)
    except (TypeError, ValueError):
        traces = np.array([np.asarray(algorithm(loss, objective.data, x0, seed=int(s), noise_seed=int(z),
                                                trace=trace, **kwargs).trace, dtype=np.float64)
                           for s, z in zip(seeds, noise_seeds)])
    else:
        traces = np.asarray(result.trace, dtype=np.float64)
    if traces.shape != (len(seeds), steps + 1):
        raise ValueError(f"trace of the runs has shape {traces.shape}, expected ({len(seeds)}, {steps + 1})")
    return traces[:, :steps].mean(axis=1)


# --- statistics ----------------------------------------------------------------------------------------


def _one_sided_p(samples: np.ndarray, alternative: str) -> float:
    """Paired one-sample t-test of E[X] = 0 against ``alternative`` ("greater" or "less")."""
    x = np.asarray(samples, dtype=np.float64)
    if np.ptp(x) == 0.0:  # no spread: the sign of the constant decides
        side = x[0] > 0 if alternative == "greater" else x[0] < 0
        return 0.0 if side else 1.0
    return float(sps.ttest_1samp(x, 0.0, alternative=alternative).pvalue)


def _slope(low: np.ndarray, high: np.ndarray, d_low: int, d_high: int) -> tuple[float, float]:
    """log-log slope of the means between d_low and d_high and its delta-method (paired) standard error."""
    m_low, m_high = float(np.mean(low)), float(np.mean(high))
    spread = math.log(d_high / d_low)
    relative = high / m_high - low / m_low
    se = float(np.std(relative, ddof=1)) / math.sqrt(low.size) / spread
    return math.log(m_high / m_low) / spread, se


def equivalence_test(low: np.ndarray, high: np.ndarray, d_low: int, d_high: int, level: float) -> dict:
    """TOST of |slope(d_low, d_high)| < s(d_low, d_high) on paired per-run metrics, at ``level``.

    Returns slope, se, tolerance s, the TOST p-value max(p₊, p₋) and the slope detectable with power 0.9
    (s − (t_{1−level} − z_{0.9})·se: a slope beyond it fails the test with probability >= 0.9)."""
    s = slope_tolerance(d_low, d_high)
    rho = (d_high / d_low) ** s
    p_upper = _one_sided_p(rho * low - high, "greater")  # rejects slope >= s
    p_lower = _one_sided_p(high - low / rho, "greater")  # rejects slope <= −s
    slope, se = _slope(low, high, d_low, d_high)
    critical = float(sps.t.ppf(1.0 - level, low.size - 1))
    return {"d": d_high, "slope": slope, "se": se, "tolerance": s, "p": max(p_upper, p_lower),
            "detectable": s - (critical - float(sps.norm.ppf(POWER))) * se,
            "false_alarm": float(sps.nct.cdf(critical, low.size - 1, (s - abs(slope)) / se)) if se > 0 else 0.0}


def growth_test(low: np.ndarray, high: np.ndarray, factor: float, level: float) -> dict:
    """One-sided paired t-test of H0: E[high] >= factor·E[low]; the smallest detectable factor (power 0.9)."""
    paired = high - factor * low
    m_low = float(np.mean(low))
    critical = float(sps.t.ppf(1.0 - level, low.size - 1))
    se = float(np.std(paired, ddof=1)) / math.sqrt(low.size)
    return {"ratio": float(np.mean(high)) / m_low, "p": _one_sided_p(paired, "less"),
            "detectable": factor - (critical + float(sps.norm.ppf(POWER))) * se / m_low}


# --- Table 1; Remarks 3.6, 4.1; Figure 1(c): DPZero's error does not grow with d, DPGD-0th's does ------------

def _check_dimension_independence(subject, ctx):
    budget = ctx.budget.pick(quick=QUICK, full=FULL)
    dims = budget["dims"]
    d_min, d_max = dims[0], dims[-1]
    coefficients, labels, rank = _rows(ctx)
    theory = theorem3_settings(SAMPLES, d_min, rank, EPSILON, DELTA, LIPSCHITZ, SMOOTHNESS)
    steps, step_size = theory.steps, float(theory.step_size)
    private = {"epsilon": EPSILON, "delta": DELTA, "steps": steps, "step_size": step_size}

    def perturbation(d):
        return float(theorem3_settings(SAMPLES, d, rank, EPSILON, DELTA, LIPSCHITZ, SMOOTHNESS).perturbation_max)

    def seeds(label, count):
        gen = ctx.generator("dpzero_rate", "seeds", label)
        return gen.integers(0, 2**62, size=count), gen.integers(0, 2**62, size=count)

    # (a) DPZero, C = L
    public, secret = seeds("dpzero", budget["dpzero_runs"])
    zero = {d: _metrics(subject.dpzero, _instance(d, coefficients, labels), public, secret,
                        perturbation=perturbation(d), clip_threshold=DPZERO_CLIP, **private) for d in dims}
    tests = [equivalence_test(zero[d_min], zero[d], d_min, d, EQUIVALENCE_LEVEL) for d in dims[1:]]
    worst = max(tests, key=lambda t: t["p"])
    end = tests[-1]
    setting = (f"(P2) k={SUBSPACE}, r={rank:.3f}, n={SAMPLES}, eps={EPSILON:g}, delta={DELTA:g}, Theorem-3 "
               f"alpha={step_size:.4f}, T={steps} at d={d_min}")
    part_a = (f"(a) DPZero (C={DPZERO_CLIP:g}, R={budget['dpzero_runs']}): mean E_tau|grad F|^2 "
              + ", ".join(f"{np.mean(zero[d]):.4g} (d={d})" for d in dims)
              + "; slope d={}..{}: {:.4f} ± {:.4f} (s = {:.4f}); TOST p = {:.2g} (level {:g}; worst at d={})".format(
                  d_min, d_max, end["slope"], end["se"], end["tolerance"], worst["p"], EQUIVALENCE_LEVEL, worst["d"]))
    power_a = (f"(a) a slope beyond ±{end['detectable']:.3f} fails with power {POWER} and one beyond "
               f"±{end['tolerance']:.4f} passes with probability <= {EQUIVALENCE_LEVEL:g}")
    if worst["p"] >= EQUIVALENCE_LEVEL:
        return Evidence(FAIL, statistic=worst["slope"], bound=worst["tolerance"], p_value=None,
                        detail=f"{setting}. {part_a}: flatness not shown", power=power_a)

    # (b) DPGD-0th, C = Ld (Remark 3.4: no clipping)
    public, secret = seeds("dpgd_zeroth_order", budget["dpgd_runs"])
    grow = {d: _metrics(subject.dpgd_zeroth_order, _instance(d, coefficients, labels), public, secret,
                        perturbation=perturbation(d), clip_threshold=LIPSCHITZ * d, **private) for d in (d_min, d_max)}
    growth = growth_test(grow[d_min], grow[d_max], GROWTH_FACTOR, ctx.level)
    power_a += f"; false alarm at the observed slope and se {max(t['false_alarm'] for t in tests):.1e}"
    part_b = (f"(b) DPGD-0th (C=Ld, R={budget['dpgd_runs']}): mean {np.mean(grow[d_min]):.4g} (d={d_min}), "
              f"{np.mean(grow[d_max]):.4g} (d={d_max}), factor {growth['ratio']:.2f}; H0: factor >= {GROWTH_FACTOR:g}, "
              f"one-sided p = {growth['p']:.2g}")
    if growth["detectable"] > 0:
        power_b = f"(b) detects a growth factor <= {growth['detectable']:.2f} with power {POWER} at level {ctx.level:g}"
    else:  # the spread of DPGD-0th's saturated runs at d_max: only a low-spread shortfall (no growth) is seen
        power_b = (f"(b) at this R no growth factor >= 0 is detected with power {POWER} at level {ctx.level:g} "
                   f"under the observed spread; a shortfall with a smaller spread (no growth at all) is")
    return Evidence(FAIL if growth["p"] < ctx.level else PASS, statistic=growth["ratio"], bound=GROWTH_FACTOR,
                    p_value=growth["p"], detail=f"{setting}. {part_a}. {part_b}", power=f"{power_a}; {power_b}")


def _lemma22_epsilon_for_factor(epsilon: float, delta: float, factor: float) -> float:
    """ε' with σ(ε') = factor·σ(ε) for Lemma 2.2's σ ∝ √log(e + ε/δ)/ε (everything else fixed)."""
    def log_sigma(log_eps):
        eps = math.exp(log_eps)
        return 0.5 * math.log(math.log(math.e + eps / delta)) - log_eps

    target = log_sigma(math.log(epsilon)) + math.log(factor)
    return math.exp(optimize.brentq(lambda v: log_sigma(v) - target, math.log(epsilon) - 60, math.log(epsilon) + 60,
                                    xtol=1e-14))


def _noise_factor(factor_of_d):
    """``substitute`` implementation: the algorithm run with its Lemma-2.2 noise σ multiplied by factor_of_d(d)
    (through ε)."""
    def run(call):
        eps = _lemma22_epsilon_for_factor(call.epsilon, call.delta, factor_of_d(np.shape(call.x0)[-1]))
        with warnings.catch_warnings():  # ε' > 80 for the DPGD-0th mutant (dpzero.E5): a mutant may be unprivate
            warnings.simplefilter("ignore")
            return call.original(epsilon=eps)
    return run


DIMENSION_INDEPENDENCE = Claim(
    id="dpzero.table1.dimension_independence",
    paper="dpzero",
    location="Table 1; Remarks 3.6, 4.1; Figure 1(c)",
    statement=(
        "Under Assumption 3.5 with r = O(1) (here (P2), r <= 3), DPZero's error E_tau|grad F(x_tau)|^2 at "
        "fixed (alpha, T, C) does not grow with d: its log-log slope lies within ±s(d1, d2) = "
        "log(kappa(d2)/kappa(d1))/log(d2/d1), kappa(d) = d/(d+2) (Lemma C.1(iv)), shown by an equivalence "
        "test at level 1e-3; DPGD-0th with the same alpha, T and C = Ld grows by a factor >= 3 from the "
        "smallest to the largest d."
    ),
    kind="rate",
    requires=("dpzero", "dpgd_zeroth_order"),
    check=_check_dimension_independence,
    mutants=(
        substitute("dpzero_vector_sensitivity",
                   "DPZero calibrating sigma to the sensitivity of the update vector s_t*u_t (2C*sqrt(d)/n, "
                   "|u_t| = sqrt(d)) instead of the scalar s_t (2C/n): sigma grows like sqrt(d)",
                   "dpzero", _noise_factor(math.sqrt)),
        substitute("dpzero_clip_times_d",
                   "DPZero with its clip threshold multiplied by d (Remark 3.4's C = Ld, which belongs to the "
                   "vectors g_i = a_i*u_t of Algorithm 1, used for the scalar of Algorithm 2): sigma grows like d",
                   "dpzero", lambda call: call.original(clip_threshold=call.clip_threshold * np.shape(call.x0)[-1])),
        substitute("dpgd0_noise_without_d",
                   "DPGD-0th whose noise sigma is divided by d (calibrated to 2L/n, not to 2Ld/n of its clip "
                   "C = Ld): its growth with d disappears",
                   "dpgd_zeroth_order", _noise_factor(lambda d: 1.0 / d)),
    ),
)
