"""bgm21 §4.1–§4.2 audited through the algorithms: Laplace report-noisy-min over the vertices of a polytope (one step,
and a whole run of Algorithm 1 A_polySFW), the Gaussian releases of Algorithm 6 A_nSFW, and the planted bug of the
printed σ̂_{r,t} (bgm21.E10) (docs/audits.md, "bgm21").

Sources:
- Bassily, Guzmán, Menart, "Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex
  Settings" (NeurIPS 2021): Algorithm 1 (lines 3, 6, 12: Laplace report-noisy-min with scale s_r over the vertices V),
  §4.2 (Algorithm 6: Gaussian noise N_r^t, N̂_r^t on the fresh-gradient and the gradient-difference terms of the
  recursive estimator, σ_{r,t} = c·L0·(t + 1), σ̂_{r,t} = c·L1·D·η_{r,t}·(t + 1) as printed,
  c = 4d^{1/p−1/2}√log(1/δ)/(bε)),
  Theorem 10 (Algorithm 6 is (ε, δ)-DP). The privacy proofs (Appendices B.1, B.2) are missing from the paper; the
  per-step sensitivities audited here are the rebuilt ones ``reference.algorithms.bgm21_sfw`` puts in its public trace
  (bgm21.E1).
- ``reference.selection``: report-noisy-min with iid Lap(s) noise is (2Δ_c/s)-DP for centred ℓ∞ score sensitivity Δ_c,
  and ``noisy_argmin_probabilities`` gives its exact selection law (numerical integration).
- ``reference.algorithms.bgm21_accounting``: ``certify_pure`` (basic, Lemma 1, zCDP and the exact
  Kairouz–Oh–Viswanath 2015 composition of pure steps; the smallest certified ε at δ) and ``Bgm21Ledger``.
- Dong, Roth, Su 2022 (JRSS-B) Thm 2.7 and Cor. 3.3: Gaussian releases with ℓ2 shifts Δ_i and noise σ_i compose to
  exactly √(Σ(Δ_i/σ_i)²)-GDP; N(m, v) against N(m′, v) is |m′ − m|/√v-GDP. Balle, Wang 2018 Thm 8 (the same profile).

Threat model. Replace-one neighbours. Everything is public except each trial's secret seed (the Laplace or Gaussian
noise): the hyper-parameters, both datasets, the public seed and hence the public order in which the records are read
(one public seed for all trials: the guarantees are worst cases over the data given the order). The attacker sees
what a run publishes — the selected vertex indices of Algorithm 1 (``PublicTrace.selected``; the iterates and the
output are functions of them and of public inputs), the noisy estimates ∇̃_r^t of Algorithm 6
(``PublicTrace.noisy_estimates``; iterates and output are post-processing) — never the NOT PRIVATE debug trace, and
never the two Gaussian terms of ∇̃_r^t separately (the run does not publish them).

The scenarios (each against its exact claim):
1. ``bgm21-report-noisy-min``: one step ``laplace_noisy_argmin`` over the J = 8 vertices e_1..e_J of the probability
   simplex. Gradients ∇ = 0 on D and ∇′ = 2Δ_c·e_1 on D′: scores ⟨e_j, ∇⟩ all equal on D, the first vertex's raised
   by 2Δ_c on D′, whose centred ℓ∞ distance is Δ_c (``centred_score_sensitivity``). With equal base scores and many
   rivals, the log-ratio of the first vertex's selection probabilities nearly reaches the bound 2Δ_c/s (0.9993 of it
   at J = 8; 0.65 for two candidates). Claim: pure ε = 2Δ_c/s (``report_noisy_min_epsilon``), δ = 0. Exact ε: the
   largest |log P_D(j)/P_D′(j)| of the exact laws.
2. ``bgm21-poly-sfw-round``: a whole run of Algorithm 1 (``poly_sfw``) with R = 2 rounds (three report-noisy-min
   steps (0, 0), (1, 0), (1, 1)) over the simplex, printed Laplace scales, the linear loss f(w; z) = ⟨z, w⟩
   (∇f(w; z) = z, L0 = ‖z‖_∞ ≤ 1, L1 = 0). The differing record is the first record of round 1's first batch B_1^0:
   z = L0·u on D and −L0·u on D′, u = (1, −1, …, −1), the other b − 1 records of B_1^0 are −L0·u/(b − 1) (so
   ∇_1^0 = 0 on D: equal scores), every other record is 0. ∇_1^0 moves by exactly G_0 = 2L0/b in ℓ∞ with centred
   score change ½·D·G_0 (D = 2, the simplex's ℓ1 diameter): the trace's worst case. Being read only at step (1, 0),
   the record moves ∇_1^1 by (1 − η_{1,1})·G_0 through the recursion, while the ledger charges each of the 2^r − t = 2
   steps it enters the full ε_0 = 2·(½·D·G_0)/s_1. With a linear loss the estimates do not depend on the iterates,
   so the three selections are independent given the data and the exact law is a product of exact selection laws.
   Claim: (ε, δ) with ε = ``certify_pure``([ε_0, ε_0], δ), δ the run's δ. Exact ε at δ: the hockey-stick profile of the
   two product laws (J² outcomes of round 1; round 0 has the same law under D and D′).
3. ``bgm21-noisy-sfw-round``: a whole run of Algorithm 6 (``noisy_sfw``, default ``sigma_hat_eta="prev"``) with R = 2
   (steps (0, 0), (1, 0), (1, 1)) on the ℓ2 ball of radius λ in d = 1 (D = 2λ), w_0^0 = +λ, the loss with gradient
   ∇f(w; (a, s)) = a + s·w (record rows (a, s); L0 = L1·λ, L1-smooth). Every record is (0, L1) except the differing
   one, the first record of B_1^1, which is (0, −L1) on D′. The path is then w_0^1 = −λ, w_1^1 = +λ (each LMO step
   follows the sign of a batch mean ±L0, 1/c noise units σ_{r,0} = c·L0 away from 0), so at step (1, 1) the record
   moves the fresh-gradient term by 2L0/m and the difference term by 2L1·D/m (m = b/2 = the batch): both sensitivities
   of the trace attained, in the same direction. The published ∇̃_1^1 = (1 − η)(∇̃_1^0 + Δ̃) + η(fresh + N) carries them
   as ONE Gaussian, shift (1 − η)·2L1D/m + η·2L0/m over √((1 − η)²σ̂² + η²σ²): by Cauchy–Schwarz at most the composed
   μ of the two releases, and at L1·D = 2L0 (the largest ratio at which both sensitivities are attainable together)
   the largest any record can reach. Claim: μ-GDP at the trace's μ of that step (the composition of the two Gaussian
   releases), which is what ``Bgm21Ledger`` certifies. True μ (yardstick): the published Gaussian's, 0.9956 of the
   claim.
4. PLANTED ``bgm21-noisy-sfw-printed-sigma-hat``: the same run and pair with the printed σ̂ (``sigma_hat_eta=
   "printed"``, bgm21.E10: η_{1,1} instead of η_{1,0}, σ̂ too small by √2 at t = 1), audited against the (ε, δ) =
   (5, 0.1) Theorem 10 claims for it. The pair's published μ is 2.599 (exact ε 5.91 at δ = 0.1; exact δ at ε = 5 is
   1.72·δ). The twin (``sigma_hat_eta="prev"``, the same pair and claim): published μ 2.320, exact ε 4.88 ≤ 5 (the
   corrected calibration certifies (ε, 0.1) up to ε = 5.13 for a record of step t ≥ 1: ``bgm21_privacy``). An (ε, δ)
   claim: only the Clopper–Pearson bound may decide.

Randomness. ``sample(rng, trials, which)``: scenario 1 draws ``laplace(0, s, (trials, J))``; scenario 2 draws
``laplace(0, s_r, (trials, J))`` for the steps (0, 0), (1, 0), (1, 1) in that order (each row is what the reference's
``laplace(0, s_r, J)`` on the key ("bgm21", "poly_sfw", "noise", r, t) draws); scenarios 3–4 draw
``standard_normal((trials, 4))``: N_0^0, N_1^0, N_1^1, N̂_1^1 (the reference draws N then N̂ on the key
("bgm21", "noisy_sfw", "noise", r, t)). Each setup makes one private reference run per dataset with a known secret
seed and checks that the algorithm's releases equal the simulation of that seed's draws (tests/test_audit_bgm21.py
repeats it for more seeds).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from reference.accounting.gaussian import gaussian_delta as mp_gaussian_delta
from reference.accounting.gaussian import gaussian_epsilon as mp_gaussian_epsilon
from reference.algorithms.bgm21_accounting import Bgm21Ledger, certify_pure
from reference.algorithms.bgm21_sfw import (
    KEY,
    NoisySFWConfig,
    PolySFWConfig,
    inverse_sqrt_step,
    noisy_sfw,
    poly_sfw,
    sfw_data_budget,
)
from reference.batching import public_order
from reference.fast.conversions import gaussian_epsilon
from reference.geometry import LpBall, Polytope
from reference.rng import Streams
from reference.selection import (
    centred_score_sensitivity,
    noisy_argmin_probabilities,
    report_noisy_min_epsilon,
)
from reference.validation import check_int, check_probability, check_real

from .attacks import likelihood_ratio_score
from .scenarios import Scenario

__all__ = [
    "LinearGradient",
    "AffineGradient",
    "simplex",
    "discrete_privacy_delta",
    "discrete_tight_epsilon",
    "report_noisy_min_scenario",
    "PolySfwAuditSetup",
    "poly_sfw_audit_setup",
    "poly_sfw_secret_laplace",
    "poly_sfw_simulated_selections",
    "poly_sfw_round_scenario",
    "NoisySfwAuditSetup",
    "noisy_sfw_audit_setup",
    "noisy_sfw_secret_normals",
    "noisy_sfw_simulated_releases",
    "noisy_sfw_scenario",
    "noisy_sfw_round_scenario",
    "printed_sigma_hat_scenario",
    "exact_printed_sigma_hat_epsilon",
    "ledger_mu",
    "REPORT_NOISY_MIN_SETTINGS",
    "POLY_SFW_SETTINGS",
    "NOISY_SFW_SETTINGS",
    "PRINTED_SIGMA_HAT_SETTINGS",
    "QUICK_TRIALS",
    "FULL_TRIALS",
    "PRINTED_SIGMA_HAT_BUDGET",
    "BGM21_BUILTINS",
    "BGM21_PLANTED",
    "BGM21_TWINS",
]

#: The secret seed of the one private reference run per dataset a setup makes to check the law.
LEDGER_NOISE_SEED = 2**64 + 20211206
#: Absolute tolerance of the build-time check reference releases = simulated releases (float64 rounding of a few
#: operations on numbers of order 1).
_RELEASE_TOLERANCE = 1e-12
#: A designed path whose failure probability is above this is not claimed to attain its μ (``mu`` None).
DETERMINISTIC_PATH = 1e-9
#: Trials per dataset of a quick audit (``dpref check``'s default ``QUICK_TRIALS``) and of the docs' full audits.
QUICK_TRIALS = 200_000
FULL_TRIALS = 2_000_000
#: Trials per dataset of the planted bug and its twin: the Clopper–Pearson ε_lb at the quick audits' confidence
#: 1 − 1e-6 (each grid threshold at 1 − 1e-6/16), from the rounded expected counts of the best threshold of the pair's
#: published Gaussian (μ = 2.599, δ = 0.1), is 5.16 at 2·10⁵ trials per dataset, 5.39 at 5·10⁵, 5.52 at 10⁶ (at 0.95:
#: 5.59, 5.70, 5.76), against the claim 5.
PRINTED_SIGMA_HAT_BUDGET = 1_000_000


class LinearGradient:
    """∇f(w; z) = z, the gradient of the linear loss f(w; z) = ⟨z, w⟩: constant in w (L1 = 0), ‖∇f‖_∞ = ‖z‖_∞. A class
    (not a closure) so that a setup pickles."""

    def __call__(self, w, z):
        return np.asarray(z, dtype=np.float64)


class AffineGradient:
    """∇f(w; (a, s)) = a + s·w in d = 1: the loss f(w; (a, s)) = a·w + s·w²/2, |∇f| ≤ |a| + |s|·λ on [−λ, λ] and
    |s|-smooth."""

    def __call__(self, w, z):
        return np.array([z[0] + z[1] * w[0]], dtype=np.float64)


def simplex(vertices) -> Polytope:
    """The probability simplex Conv(e_1, …, e_J) ⊂ R^J (ℓ1 diameter 2): ⟨e_j, ∇⟩ = ∇_j."""
    J = check_int("vertices", vertices, minimum=2)
    return Polytope(np.eye(J))


def _check_sample_args(rng, trials, which) -> tuple[int, int]:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return check_int("trials", trials, minimum=0), check_int("which", which, minimum=0, maximum=1)


def _check_outputs(outputs, columns: int) -> np.ndarray:
    outputs = np.asarray(outputs, dtype=np.float64)
    if outputs.ndim != 2 or outputs.shape[1] != columns:
        raise ValueError(f"outputs must have shape (trials, {columns}), got {outputs.shape}")
    return outputs


def _check_law(name: str, law) -> np.ndarray:
    p = np.asarray(law, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"{name} must be a non-empty 1-D array of probabilities")
    return p


# ---------------------------------------------------------------------------------------------------
# Exact privacy of a pair of discrete laws


def discrete_privacy_delta(epsilon, law_d, law_d_prime) -> float:
    """δ(ε) = max(Σ_x (P′(x) − e^ε P(x))_+, Σ_x (P(x) − e^ε P′(x))_+): the smallest δ at which the pair of discrete
    laws (P on D, P′ on D′) is (ε, δ)-indistinguishable (the hockey-stick divergence, both directions)."""
    epsilon = check_real("epsilon", epsilon, nonnegative=True)
    p, q = _check_law("law_d", law_d), _check_law("law_d_prime", law_d_prime)
    if p.shape != q.shape:
        raise ValueError(f"law_d and law_d_prime must have the same shape, got {p.shape} and {q.shape}")
    scale = math.exp(epsilon)
    return float(max(np.sum(np.maximum(q - scale * p, 0.0)), np.sum(np.maximum(p - scale * q, 0.0)), 0.0))


def discrete_tight_epsilon(law_d, law_d_prime, delta) -> float:
    """The smallest ε with ``discrete_privacy_delta(ε) ≤ δ``: at δ = 0 the largest |log P(x)/P′(x)| (inf if one law
    puts mass where the other has none); otherwise the root of the non-increasing δ(ε) by ``brentq``."""
    p, q = _check_law("law_d", law_d), _check_law("law_d_prime", law_d_prime)
    delta = check_probability("delta", delta, open_left=False)
    if delta == 0:
        support = (p > 0) | (q > 0)
        if np.any(support & ((p == 0) | (q == 0))):
            return math.inf
        return float(np.max(np.abs(np.log(p[support]) - np.log(q[support]))))
    if discrete_privacy_delta(0.0, p, q) <= delta:
        return 0.0
    hi = 1.0
    while discrete_privacy_delta(hi, p, q) > delta:
        hi *= 2
        if hi > 1e4:
            return math.inf
    return float(brentq(lambda e: discrete_privacy_delta(e, p, q) - delta, 0.0, hi, xtol=1e-13, rtol=1e-13))


# ---------------------------------------------------------------------------------------------------
# 1. One report-noisy-min step (Algorithm 1, line 6)

#: ``bgm21-report-noisy-min``: J = 8 simplex vertices, claimed ε = 2 (Δ_c = 1, s = 1).
REPORT_NOISY_MIN_SETTINGS = dict(vertices=8, epsilon=2.0, scale=1.0)


def report_noisy_min_scenario(*, vertices=8, epsilon=2.0, scale=1.0, name="bgm21-report-noisy-min") -> Scenario:
    """One ``laplace_noisy_argmin`` step over the simplex's J vertices on the worst pair of score vectors (module
    docstring, scenario 1). vertices: J ≥ 2; epsilon: the claimed 2Δ_c/s, which fixes Δ_c = εs/2; scale: s.

    Outputs (trials, 1): the selected vertex index. Claim: pure ε = ``report_noisy_min_epsilon``(Δ_c, s) (δ = 0),
    Δ_c = ``centred_score_sensitivity`` of the two score vectors. Tight ε: the largest |log-ratio| of the exact
    selection laws (``noisy_argmin_probabilities``); the score is the exact log-likelihood ratio of the index.
    """
    polytope = simplex(vertices)
    epsilon = float(check_real("epsilon", epsilon, positive=True))
    scale = float(check_real("scale", scale, positive=True))
    J = polytope.J
    gradients = (np.zeros(J), np.zeros(J))
    gradients[1][0] = epsilon * scale  # 2Δ_c on the first vertex: Δ_c = εs/2
    scores = np.array([[float(np.dot(polytope.vertices[j], g)) for j in range(J)] for g in gradients])
    sensitivity = centred_score_sensitivity(scores[0], scores[1])
    claimed = report_noisy_min_epsilon(sensitivity, scale)
    laws = np.stack([noisy_argmin_probabilities(scores[k], scale) for k in (0, 1)])
    log_ratio = np.log(laws[1]) - np.log(laws[0])
    tight = discrete_tight_epsilon(laws[0], laws[1], 0.0)

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        noisy = scores[which] + rng.laplace(0.0, scale, (trials, J))
        return np.argmin(noisy, axis=1).astype(np.float64)[:, None]

    def log_likelihood_ratio(outputs):
        x = _check_outputs(outputs, 1)[:, 0]
        index = x.astype(np.int64)
        if np.any(index != x) or np.any(index < 0) or np.any(index >= J):
            raise ValueError(f"outputs must be vertex indices in [0, {J})")
        return log_ratio[index]

    return Scenario(
        name=name,
        description=(f"bgm21 Alg 1 line 6, one Laplace report-noisy-min step over the {J} vertices of the simplex, "
                     f"s={scale:g}, scores equal vs first raised by 2Δ_c, Δ_c={sensitivity:g}; claimed 2Δ_c/s"),
        sample=sample, claimed_epsilon=claimed, delta=0.0, tight_epsilon=tight,
        log_likelihood_ratio=log_likelihood_ratio,
    )


# ---------------------------------------------------------------------------------------------------
# 2. A run of Algorithm 1 (A_polySFW), the differing record in round 1's first batch

#: ``bgm21-poly-sfw-round``: R = 2 (steps (0, 0), (1, 0), (1, 1)), b = 16 (n = 40), J = 8, L0 = 1, L1 = 0, (ε, δ) =
#: (4, 1e-5): printed s_1 = 2D(L0 + L1·D)·2·√log(1/δ)/(bε) = 0.4241, ε_0 = ε/(2√log(1/δ)) = 0.589 per step.
POLY_SFW_SETTINGS = dict(vertices=8, batch_size=16, epsilon=4.0, delta=1e-5, lipschitz=1.0, public_seed=0)


@dataclasses.dataclass(frozen=True)
class PolySfwAuditSetup:
    """Everything a ``poly_sfw`` audit fixes before any trial (module docstring, scenario 2).

    inputs: the keyword arguments of ``poly_sfw_audit_setup``; polytope, config: the run's; datasets: (D, D′), (n, J);
    differing_index: the differing record's row (the first record of B_1^0 in the public order); estimates: (2, 3, J),
    ∇_r^t of each dataset at the three steps (the same on every path: linear loss); scores: (2, 3, J), ⟨V_j, ∇_r^t⟩;
    scales: (3,), s_r of each step; laws: (2, 3, J), the exact selection law of each step; score_sensitivity: the
    trace's ½·D·G_0 of step (1, 0); affected_steps: the steps a record of B_1^0 enters (2); step_epsilon: ε_0 =
    2·score_sensitivity/s_1; certificate: ``certify_pure``([ε_0]·affected_steps, δ).
    """

    inputs: dict
    polytope: Polytope
    config: PolySFWConfig
    datasets: tuple
    differing_index: int
    estimates: np.ndarray
    scores: np.ndarray
    scales: np.ndarray
    laws: np.ndarray
    score_sensitivity: float
    affected_steps: int
    step_epsilon: float
    certificate: object

    @property
    def public_seed(self) -> int:
        return int(self.inputs["public_seed"])

    @property
    def delta(self) -> float:
        return float(self.config.delta)

    @property
    def claimed_epsilon(self) -> float:
        return float(self.certificate.epsilon)

    def round_laws(self) -> np.ndarray:
        """(2, J²): the law of (v_1^0, v_1^1) on D and D′ (product of the two steps' laws), index j0·J + j1."""
        return np.stack([np.outer(self.laws[k, 1], self.laws[k, 2]).ravel() for k in (0, 1)])

    @property
    def tight_epsilon(self) -> float:
        """The exact ε at δ of the published selections (round 0 has the same law on D and D′)."""
        laws = self.round_laws()
        return discrete_tight_epsilon(laws[0], laws[1], self.delta)


def _sequential_mean(rows: np.ndarray) -> np.ndarray:
    """(1/m)·Σ rows in the order and arithmetic of ``RecursiveGradientEstimator.start`` (one record at a time)."""
    total = np.zeros(rows.shape[1])
    for row in rows:
        total += np.asarray(row, dtype=np.float64)
    return total / rows.shape[0]


def poly_sfw_audit_setup(*, vertices=8, batch_size=16, epsilon=4.0, delta=1e-5, lipschitz=1.0,
                         public_seed=0) -> PolySfwAuditSetup:
    """The fixed part of the ``poly_sfw`` audit (module docstring, scenario 2): R = 2, the simplex of ``vertices``
    vertices, b = ``batch_size`` (≥ 2), the run's (ε, δ) (printed Laplace scales), L0 = ``lipschitz``, L1 = 0, the
    public seed. Makes one private reference run per dataset: raises ValueError when its estimates differ from the
    computed ones or its selections from the simulation of its secret Laplace draws."""
    polytope = simplex(vertices)
    b = check_int("batch_size", batch_size, minimum=2)
    L0 = float(check_real("lipschitz", lipschitz, positive=True))
    public_seed = check_int("public_seed", public_seed, minimum=0)
    config = PolySFWConfig(n_rounds=2, batch_size=b, epsilon=epsilon, delta=delta, lipschitz=L0, smoothness=0.0)
    inputs = dict(vertices=polytope.J, batch_size=b, epsilon=float(epsilon), delta=float(delta), lipschitz=L0,
                  public_seed=public_seed)
    J = polytope.J
    n = sfw_data_budget(b, 2)
    order = public_order(public_seed, n, key=(KEY, "poly_sfw", "order"))
    round1_first = order[b:2 * b]  # B_1^0: round 0 reads order[:b]
    differing = int(round1_first[0])
    u = -np.ones(J)
    u[0] = 1.0
    datasets = []
    for sign in (1.0, -1.0):  # D: +L0·u, D′: −L0·u
        data = np.zeros((n, J))
        data[round1_first[1:]] = -L0 * u / (b - 1)
        data[differing] = sign * L0 * u
        data.setflags(write=False)
        datasets.append(data)
    eta = inverse_sqrt_step(1, 1)
    m = -(-b // 2)
    estimates = np.zeros((2, 3, J))
    for k, data in enumerate(datasets):
        estimates[k, 0] = _sequential_mean(data[order[:b]])
        estimates[k, 1] = _sequential_mean(data[round1_first])
        # line 11 with a linear loss: Δ = 0 exactly, fresh = the mean of B_1^1
        difference = np.zeros(J)
        estimates[k, 2] = (1.0 - eta) * (estimates[k, 1] + difference) + eta * _sequential_mean(
            data[order[2 * b:2 * b + m]])
    scores = np.array([[[float(np.dot(polytope.vertices[j], estimates[k, s])) for j in range(J)] for s in range(3)]
                       for k in (0, 1)])
    runs = [poly_sfw(LinearGradient(), data, polytope, config, seed=public_seed, noise_seed=_ledger_seed(public_seed))
            for data in datasets]
    trace = runs[0].trace
    scales = np.array(trace.lap_scales, dtype=np.float64)
    laws = np.array([[noisy_argmin_probabilities(scores[k, s], scales[s]) for s in range(3)] for k in (0, 1)])
    step = 1  # (r, t) = (1, 0)
    score_sensitivity = float(trace.score_sensitivity[step])
    affected = int(trace.affected_steps[step])
    step_epsilon = report_noisy_min_epsilon(score_sensitivity, scales[step])
    certificate = certify_pure([step_epsilon] * affected, delta)
    for array in (estimates, scores, scales, laws):
        array.setflags(write=False)
    setup = PolySfwAuditSetup(inputs=inputs, polytope=polytope, config=config, datasets=tuple(datasets),
                              differing_index=differing, estimates=estimates, scores=scores, scales=scales, laws=laws,
                              score_sensitivity=score_sensitivity, affected_steps=affected, step_epsilon=step_epsilon,
                              certificate=certificate)
    _check_poly_sfw_against_reference(setup, runs)
    return setup


def _ledger_seed(public_seed: int) -> int:
    return LEDGER_NOISE_SEED if LEDGER_NOISE_SEED != public_seed else LEDGER_NOISE_SEED + 1


def _check_poly_sfw_against_reference(setup: PolySfwAuditSetup, runs) -> None:
    noise = poly_sfw_secret_laplace(_ledger_seed(setup.public_seed), setup)
    for which, run in enumerate(runs):
        if not np.array_equal(run.debug.estimates, setup.estimates[which]):
            raise ValueError("the reference run's estimates differ from the computed ones: the scores the law assumes "
                             "are not the algorithm's")
        if run.trace.steps.tolist() != [0, 0, 1] or run.trace.rounds.tolist() != [0, 1, 1]:
            raise ValueError("the run does not consist of the steps (0, 0), (1, 0), (1, 1)")
        simulated = poly_sfw_simulated_selections(setup, which, noise[None])[0]
        if not np.array_equal(run.trace.selected, simulated):
            raise ValueError("the reference run's selections differ from the simulation of its secret Laplace draws")


def poly_sfw_secret_laplace(noise_seed, setup: PolySfwAuditSetup) -> np.ndarray:
    """(3, J): the Laplace draws a reference run with secret seed ``noise_seed`` adds at steps (0, 0), (1, 0), (1, 1)
    (key ("bgm21", "poly_sfw", "noise", r, t), one ``laplace(0, s_r, J)`` each)."""
    streams = Streams(check_int("noise_seed", noise_seed, minimum=0))
    J = setup.polytope.J
    return np.stack([streams.generator(KEY, "poly_sfw", "noise", r, t).laplace(0.0, setup.scales[i], J)
                     for i, (r, t) in enumerate(((0, 0), (1, 0), (1, 1)))])


def poly_sfw_simulated_selections(setup: PolySfwAuditSetup, which, laplace_noise) -> np.ndarray:
    """The selected vertex indices (trials, 3) of runs on D (which = 0) or D′ (1) given their Laplace draws (trials,
    3, J): argmin_j (score_j + u_j) per step, lowest index on ties (the scores do not depend on the path)."""
    which = check_int("which", which, minimum=0, maximum=1)
    u = np.asarray(laplace_noise, dtype=np.float64)
    J = setup.polytope.J
    if u.ndim != 3 or u.shape[1:] != (3, J):
        raise ValueError(f"laplace_noise must have shape (trials, 3, {J}), got {u.shape}")
    return np.argmin(setup.scores[which][None] + u, axis=2)


def poly_sfw_round_scenario(*, name="bgm21-poly-sfw-round", **kwargs) -> Scenario:
    """``bgm21-poly-sfw-round`` (module docstring, scenario 2): outputs (trials, 3), the run's selected vertex indices;
    claim (ε, δ) = (``certify_pure`` of the record's two steps, the run's δ); tight ε: the exact ε at δ of the pair;
    the score is the exact log-likelihood ratio of the selections. Keyword arguments override ``POLY_SFW_SETTINGS``."""
    setup = poly_sfw_audit_setup(**{**POLY_SFW_SETTINGS, **kwargs})
    J = setup.polytope.J
    log_ratio = np.log(setup.laws[1]) - np.log(setup.laws[0])  # (3, J); row 0 is 0: round 0 has one law

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        noise = np.stack([rng.laplace(0.0, setup.scales[s], (trials, J)) for s in range(3)], axis=1)
        return poly_sfw_simulated_selections(setup, which, noise).astype(np.float64)

    def log_likelihood_ratio(outputs):
        x = _check_outputs(outputs, 3)
        index = x.astype(np.int64)
        if np.any(index != x) or np.any(index < 0) or np.any(index >= J):
            raise ValueError(f"outputs must be vertex indices in [0, {J})")
        return log_ratio[0, index[:, 0]] + log_ratio[1, index[:, 1]] + log_ratio[2, index[:, 2]]

    config = setup.config
    description = (f"bgm21 Alg 1, R=2 (3 report-noisy-min steps), simplex J={J}, b={config.batch_size}, "
                   f"n={setup.datasets[0].shape[0]}, linear loss L0={config.lipschitz:g}, printed s_1="
                   f"{setup.scales[1]:.6g}, canary first in B_1^0 (2 steps of ε_0={setup.step_epsilon:.6g}); "
                   f"claimed by certify_pure ({setup.certificate.route}) at δ={setup.delta:g}")
    return Scenario(name=name, description=description, sample=sample, claimed_epsilon=setup.claimed_epsilon,
                    delta=setup.delta, tight_epsilon=setup.tight_epsilon, log_likelihood_ratio=log_likelihood_ratio)


# ---------------------------------------------------------------------------------------------------
# 3–4. A run of Algorithm 6 (A_nSFW), the differing record in B_1^1

#: ``bgm21-noisy-sfw-round``: R = 2, b = 64 (m = 32 at step (1, 1), n = 160), d = 1, λ = 1/2 (D = 1), L0 = 1,
#: L1 = 2 (L1·D = 2L0), (ε, δ) = (3, 1e-5): c = 4√log(1/δ)/(bε) = 0.0707, the claimed μ = √2·ε/(2√log(1/δ)) = 0.6251
#: (claimed ε 2.56 at δ), the path's margins 1/c = 14.1 noise units (failure probability ≤ 1e-44).
NOISY_SFW_SETTINGS = dict(batch_size=64, epsilon=3.0, delta=1e-5, radius=0.5, smoothness=2.0, public_seed=0)
#: ``bgm21-noisy-sfw-printed-sigma-hat`` and its twin: the same run at (ε, δ) = (5, 0.1) (1/c = 52.7).
PRINTED_SIGMA_HAT_SETTINGS = dict(batch_size=64, epsilon=5.0, delta=0.1, radius=0.5, smoothness=2.0, public_seed=0)


@dataclasses.dataclass(frozen=True)
class NoisySfwAuditSetup:
    """Everything a ``noisy_sfw`` audit fixes before any trial (module docstring, scenarios 3–4).

    inputs: the keyword arguments of ``noisy_sfw_audit_setup``; ball, config: the run's; datasets: (D, D′), (n, 2)
    rows (a, s); differing_index: the differing record's row (the first record of B_1^1); batches: the rows of B_0^0,
    B_1^0, B_1^1 (public order); w_init: w_0^0; eta: η_{1,1}; sigma0: σ_{r,0}; sigma, sigma_hat: σ_{1,1}, σ̂_{1,1} (the
    trace's); gradient_sensitivity, difference_sensitivity, claimed_mu: the trace's ℓ2 sensitivities and μ of step
    (1, 1); designed_path: (w_1^0, w_1^1) = (−λ, +λ); mu: the published Gaussian's μ on the designed path, or None
    when the path is not nearly certain; failure_probability: the bound on leaving it.
    """

    inputs: dict
    ball: LpBall
    config: NoisySFWConfig
    datasets: tuple
    differing_index: int
    batches: tuple
    w_init: float
    eta: float
    sigma0: float
    sigma: float
    sigma_hat: float
    gradient_sensitivity: float
    difference_sensitivity: float
    claimed_mu: float
    designed_path: tuple
    mu: float | None
    failure_probability: float

    @property
    def public_seed(self) -> int:
        return int(self.inputs["public_seed"])

    @property
    def radius(self) -> float:
        return float(self.ball.radius)

    @property
    def delta(self) -> float:
        return float(self.config.delta)

    @property
    def noise_std(self) -> float:
        """√((1 − η)²σ̂² + η²σ²): the std of the noise of the published ∇̃_1^1."""
        return math.hypot((1.0 - self.eta) * self.sigma_hat, self.eta * self.sigma)

    def mean_gradient(self, which, batch, w) -> np.ndarray:
        """(1/m)·Σ_{z∈batch} ∇f(w; z) at points w (k,), in the estimator's arithmetic (one record at a time), evaluated
        once per distinct point (the iterates take at most three values)."""
        rows = self.datasets[which][self.batches[batch]]

        def at(point):
            total = 0.0
            for a, s in rows:
                total = total + (a + s * point)
            return total / rows.shape[0]

        return _per_distinct(at, np.asarray(w, dtype=np.float64))

    def mean_difference(self, which, w, w_prev) -> np.ndarray:
        """(1/m)·Σ_{z∈B_1^1} (∇f(w; z) − ∇f(w_prev; z)) in the estimator's arithmetic, once per distinct pair."""
        rows = self.datasets[which][self.batches[2]]

        def at(pair):
            total = 0.0
            for a, s in rows:
                total = total + ((a + s * pair[0]) - (a + s * pair[1]))
            return total / rows.shape[0]

        w, w_prev = np.broadcast_arrays(np.asarray(w, dtype=np.float64), np.asarray(w_prev, dtype=np.float64))
        return _per_distinct(at, np.stack([w, w_prev], axis=-1), pairs=True)

    def release_mean(self, which, previous_release, w_prev, w) -> np.ndarray:
        """E[∇̃_1^1 | past] on dataset ``which``: (1 − η)(∇̃_1^0 + Δ) + η·fresh, given ∇̃_1^0 and the public iterates
        w_1^0, w_1^1."""
        difference = self.mean_difference(which, w, w_prev)
        fresh = self.mean_gradient(which, 2, w)
        return (1.0 - self.eta) * (previous_release + difference) + self.eta * fresh


def _per_distinct(function, points: np.ndarray, *, pairs=False) -> np.ndarray:
    """``function`` evaluated once per distinct point and broadcast back: points (k,) of scalars, or (k, 2) of pairs
    with ``pairs``; returns (k,)."""
    if not pairs:
        values, inverse = np.unique(points.reshape(-1), return_inverse=True)
        results = np.array([function(float(value)) for value in values], dtype=np.float64)
        return results[inverse].reshape(points.shape)
    first, first_code = np.unique(points[..., 0].reshape(-1), return_inverse=True)
    second, second_code = np.unique(points[..., 1].reshape(-1), return_inverse=True)
    codes, inverse = np.unique(first_code * second.size + second_code, return_inverse=True)
    results = np.array([function((float(first[c // second.size]), float(second[c % second.size]))) for c in codes],
                       dtype=np.float64)
    return results[inverse].reshape(points.shape[:-1])


def _lmo(ball_radius: float, g: np.ndarray) -> np.ndarray:
    """The ℓ2 ball's LMO in d = 1 (centre 0): −λ·sign(g), 0 (the centre) at g = 0."""
    return -ball_radius * np.sign(g)


def noisy_sfw_audit_setup(*, sigma_hat_eta="prev", batch_size=64, epsilon=3.0, delta=1e-5, radius=0.5,
                          smoothness=2.0, public_seed=0) -> NoisySfwAuditSetup:
    """The fixed part of a ``noisy_sfw`` audit (module docstring, scenario 3): R = 2, the ℓ2 ball of ``radius`` λ in
    d = 1 with w_0^0 = +λ, b = ``batch_size`` (even, ≥ 4), the run's (ε, δ) (printed noise factor), L1 =
    ``smoothness``, L0 = L1·λ (so L1·D = 2L0), ``sigma_hat_eta``. Makes one private reference run per dataset: raises
    ValueError when its releases differ from the simulation of its secret normals or its trace's σ, σ̂ and
    sensitivities from the closed forms."""
    b = check_int("batch_size", batch_size, minimum=4)
    if b % 2:
        raise ValueError(f"batch_size must be even (the step-(1, 1) batch b/2 then has (t + 1)/b = 1/m), got {b}")
    radius = float(check_real("radius", radius, positive=True))
    L1 = float(check_real("smoothness", smoothness, positive=True))
    L0 = L1 * radius
    public_seed = check_int("public_seed", public_seed, minimum=0)
    ball = LpBall(2.0, radius, np.zeros(1))
    config = NoisySFWConfig(n_rounds=2, batch_size=b, epsilon=epsilon, delta=delta, lipschitz=L0, smoothness=L1,
                            sigma_hat_eta=sigma_hat_eta)
    inputs = dict(sigma_hat_eta=sigma_hat_eta, batch_size=b, epsilon=float(epsilon), delta=float(delta), radius=radius,
                  smoothness=L1, public_seed=public_seed)
    n = sfw_data_budget(b, 2)
    order = public_order(public_seed, n, key=(KEY, "noisy_sfw", "order"))
    m = b // 2
    batches = (order[:b].copy(), order[b:2 * b].copy(), order[2 * b:2 * b + m].copy())
    differing = int(batches[2][0])
    datasets = []
    for sign in (1.0, -1.0):
        data = np.zeros((n, 2))
        data[:, 1] = L1
        data[differing, 1] = sign * L1
        data.setflags(write=False)
        datasets.append(data)
    for array in batches:
        array.setflags(write=False)
    noise_seed = _ledger_seed(public_seed)
    runs = [noisy_sfw(AffineGradient(), data, ball, config, seed=public_seed, noise_seed=noise_seed,
                      w_init=np.array([radius])) for data in datasets]
    trace = runs[0].trace
    eta = inverse_sqrt_step(1, 1)
    D = 2 * radius
    sigma0, sigma, sigma_hat = float(trace.sigma[1]), float(trace.sigma[2]), float(trace.sigma_hat[2])
    factor = 4.0 * math.sqrt(math.log(1.0 / delta)) / (b * epsilon)  # printed c, d = 1, p = 2
    eta_hat = 1.0 if sigma_hat_eta == "prev" else eta
    if not (math.isclose(sigma0, factor * L0, rel_tol=1e-12) and math.isclose(sigma, 2 * factor * L0, rel_tol=1e-12)
            and math.isclose(sigma_hat, 2 * factor * L1 * D * eta_hat, rel_tol=1e-12)):
        raise ValueError("the trace's noise scales differ from the printed σ_{r,t}, σ̂_{r,t}")
    gradient_sensitivity = float(trace.gradient_sensitivity[2])
    difference_sensitivity = float(trace.difference_sensitivity[2])
    if not (math.isclose(gradient_sensitivity, 2 * L0 / m, rel_tol=1e-12)
            and math.isclose(difference_sensitivity, 2 * L1 * D / m, rel_tol=1e-12)):
        raise ValueError("the trace's step-(1, 1) sensitivities differ from 2L0/m and 2L1·D·η_{1,0}/m")
    claimed_mu = float(trace.mu[2])
    # the designed path: v_0^0 = −λ (the mean gradient at +λ is L0 > 0), v_1^0 = +λ (at −λ it is −L0)
    failure = float(norm.sf(float(abs(_mean_at(datasets[0], batches[0], radius))) / sigma0)
                    + norm.sf(float(abs(_mean_at(datasets[0], batches[1], -radius))) / sigma0))
    setup = NoisySfwAuditSetup(
        inputs=inputs, ball=ball, config=config, datasets=tuple(datasets), differing_index=differing, batches=batches,
        w_init=radius, eta=eta, sigma0=sigma0, sigma=sigma, sigma_hat=sigma_hat,
        gradient_sensitivity=gradient_sensitivity, difference_sensitivity=difference_sensitivity,
        claimed_mu=claimed_mu, designed_path=(-radius, radius), mu=None, failure_probability=failure,
    )
    shift = setup.release_mean(1, 0.0, -radius, radius) - setup.release_mean(0, 0.0, -radius, radius)
    mu = float(abs(shift)) / setup.noise_std if failure <= DETERMINISTIC_PATH else None
    setup = dataclasses.replace(setup, mu=mu)
    _check_noisy_sfw_against_reference(setup, runs, noise_seed)
    return setup


def _mean_at(data, batch, w) -> float:
    total = 0.0
    for a, s in data[batch]:
        total = total + (a + s * w)
    return total / len(batch)


def _check_noisy_sfw_against_reference(setup: NoisySfwAuditSetup, runs, noise_seed) -> None:
    normals = noisy_sfw_secret_normals(noise_seed)
    for which, run in enumerate(runs):
        if run.trace.steps.tolist() != [0, 0, 1] or run.trace.rounds.tolist() != [0, 1, 1]:
            raise ValueError("the run does not consist of the steps (0, 0), (1, 0), (1, 1)")
        simulated = noisy_sfw_simulated_releases(setup, which, normals[None])[0]
        if not np.allclose(run.trace.noisy_estimates[:, 0], simulated, rtol=0, atol=_RELEASE_TOLERANCE):
            raise ValueError("the reference run's releases differ from the simulation of its secret normals")
        iterates = _iterates(setup, simulated[None])[0]
        if not np.array_equal(run.iterates[:, 0], iterates):
            raise ValueError("the reference run's iterates differ from the LMO steps of the simulated releases")


def noisy_sfw_secret_normals(noise_seed) -> np.ndarray:
    """(4,): the standard normals a reference run (d = 1, R = 2) with secret seed ``noise_seed`` draws: N_0^0, N_1^0,
    N_1^1, N̂_1^1 (key ("bgm21", "noisy_sfw", "noise", r, t): ``standard_normal(1)``, then at t ≥ 1 another)."""
    streams = Streams(check_int("noise_seed", noise_seed, minimum=0))
    first = streams.generator(KEY, "noisy_sfw", "noise", 0, 0).standard_normal(1)
    second = streams.generator(KEY, "noisy_sfw", "noise", 1, 0).standard_normal(1)
    third = streams.generator(KEY, "noisy_sfw", "noise", 1, 1)
    n11 = third.standard_normal(1)
    n_hat = third.standard_normal(1)
    return np.concatenate([first, second, n11, n_hat])


def _iterates(setup: NoisySfwAuditSetup, releases: np.ndarray) -> np.ndarray:
    """(trials, 3): w_0^0, w_1^0 = w_0^1, w_1^1 read off the releases (η_{r,0} = 1: each round jumps to its vertex)."""
    w00 = np.full(releases.shape[0], setup.w_init)
    w10 = _lmo(setup.radius, releases[:, 0])
    w11 = _lmo(setup.radius, releases[:, 1])
    return np.stack([w00, w10, w11], axis=1)


def noisy_sfw_simulated_releases(setup: NoisySfwAuditSetup, which, normals) -> np.ndarray:
    """The published ∇̃ (trials, 3) at steps (0, 0), (1, 0), (1, 1) of runs on D (which = 0) or D′ (1) given their
    standard normals (trials, 4) = (N_0^0, N_1^0, N_1^1, N̂_1^1), in the estimator's arithmetic (lines 5, 10, 11 with
    the noises) and the ball's LMO."""
    which = check_int("which", which, minimum=0, maximum=1)
    z = np.asarray(normals, dtype=np.float64)
    if z.ndim != 2 or z.shape[1] != 4:
        raise ValueError(f"normals must have shape (trials, 4), got {z.shape}")
    trials = z.shape[0]
    out = np.empty((trials, 3))
    w00 = np.full(trials, setup.w_init)
    out[:, 0] = setup.mean_gradient(which, 0, w00) + setup.sigma0 * z[:, 0]
    w10 = _lmo(setup.radius, out[:, 0])
    out[:, 1] = setup.mean_gradient(which, 1, w10) + setup.sigma0 * z[:, 1]
    w11 = _lmo(setup.radius, out[:, 1])
    difference = setup.mean_difference(which, w11, w10) + setup.sigma_hat * z[:, 3]
    fresh = setup.mean_gradient(which, 2, w11)
    out[:, 2] = (1.0 - setup.eta) * (out[:, 1] + difference) + setup.eta * (fresh + setup.sigma * z[:, 2])
    return out


def noisy_sfw_scenario(setup: NoisySfwAuditSetup, *, name, claimed_epsilon=None, bug=None) -> Scenario:
    """The ``Scenario`` of a setup: outputs (trials, 3) = ``PublicTrace.noisy_estimates`` of the run (d = 1). Claim:
    μ-GDP at the trace's μ of step (1, 1) (the composed μ of the two Gaussian releases that read the record), or (ε, δ)
    at ``claimed_epsilon``. True μ: ``setup.mu``; the score is the exact log-likelihood ratio of ∇̃_1^1 given the
    earlier releases and the iterates read off them (the earlier releases have the same law on D and D′)."""

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        return noisy_sfw_simulated_releases(setup, which, rng.standard_normal((trials, 4)))

    def log_likelihood_ratio(outputs):
        x = _check_outputs(outputs, 3)
        w = _iterates(setup, x)
        means = [setup.release_mean(k, x[:, 1], w[:, 1], w[:, 2]) for k in (0, 1)]
        variance = setup.noise_std**2
        return ((x[:, 2] - means[0]) ** 2 - (x[:, 2] - means[1]) ** 2) / (2 * variance)

    if claimed_epsilon is None:
        claim = dict(claimed_mu=setup.claimed_mu)
    else:
        claim = dict(claimed_epsilon=float(check_real("claimed_epsilon", claimed_epsilon, positive=True)))
    tight = None if setup.mu is None else gaussian_epsilon(setup.delta, setup.mu)
    config = setup.config
    pair_mu = "pair μ=n/a" if setup.mu is None else f"published μ={setup.mu:.6g}"
    ledger = f"trace μ={setup.claimed_mu:.6g}" if bug is None else f"[{bug}]"
    description = (f"bgm21 Alg 6, R=2, d=1 ℓ2 ball λ={setup.radius:g}, b={config.batch_size}, n="
                   f"{setup.datasets[0].shape[0]}, L0={config.lipschitz:g}, L1={config.smoothness:g}, σ̂ "
                   f"η={config.sigma_hat_eta}, canary first in B_1^1 (σ={setup.sigma:.6g}, σ̂={setup.sigma_hat:.6g}), "
                   f"{pair_mu}; {ledger}")
    return Scenario(name=name, description=description, sample=sample, **claim, delta=setup.delta,
                    tight_epsilon=tight, mu=setup.mu, log_likelihood_ratio=log_likelihood_ratio)


def noisy_sfw_round_scenario(*, name="bgm21-noisy-sfw-round", **kwargs) -> Scenario:
    """``bgm21-noisy-sfw-round`` (module docstring, scenario 3): Algorithm 6 with the corrected σ̂ (default), claimed
    μ-GDP at the trace's μ of the record's step. Keyword arguments override ``NOISY_SFW_SETTINGS``."""
    setup = noisy_sfw_audit_setup(**{**NOISY_SFW_SETTINGS, **kwargs})
    if setup.config.sigma_hat_eta != "prev" or setup.mu is None:
        raise ValueError("bgm21-noisy-sfw-round needs sigma_hat_eta='prev' and a nearly certain designed path")
    return noisy_sfw_scenario(setup, name=name)


def printed_sigma_hat_scenario(*, buggy=True, **kwargs) -> Scenario:
    """Planted bug ``bgm21-noisy-sfw-printed-sigma-hat`` (module docstring, scenario 4; bgm21.E10): Algorithm 6 with
    the printed σ̂ (η_{r,t}), against the (ε, δ) = (5, 0.1) that Theorem 10 claims; only the Clopper–Pearson bound may
    refute it. ``buggy=False``: the twin, the corrected σ̂ (η_{r,t−1}) on the same pair against the same claim.
    Keyword arguments override ``PRINTED_SIGMA_HAT_SETTINGS``."""
    options = {**PRINTED_SIGMA_HAT_SETTINGS, **kwargs}
    setup = noisy_sfw_audit_setup(**options, sigma_hat_eta="printed" if buggy else "prev")
    claimed = float(setup.config.epsilon)
    if not buggy:
        return noisy_sfw_scenario(setup, name="bgm21-noisy-sfw-printed-sigma-hat-twin", claimed_epsilon=claimed)
    return noisy_sfw_scenario(setup, name="bgm21-noisy-sfw-printed-sigma-hat", claimed_epsilon=claimed,
                              bug=f"planted: σ̂ with η_(r,t) (§4.2 as printed, bgm21.E10), claimed (ε, δ)=({claimed:g}, "
                                  f"{setup.delta:g})")


def exact_printed_sigma_hat_epsilon(setup: NoisySfwAuditSetup):
    """(exact ε of the published Gaussian at the claim's δ, exact δ at the claim's ε) in mpmath
    (``reference.accounting.gaussian``), for the docs."""
    return mp_gaussian_epsilon(setup.delta, setup.mu), mp_gaussian_delta(setup.config.epsilon, setup.mu)


def ledger_mu(setup: NoisySfwAuditSetup):
    """μ that ``Bgm21Ledger`` certifies for a record of B_1^1: its two Gaussian releases, composed (mpmath)."""
    ledger = Bgm21Ledger()
    ledger.record_gaussian(setup.gradient_sensitivity, setup.sigma, ["B_1^1"], "fresh gradient (1, 1)")
    ledger.record_gaussian(setup.difference_sensitivity, setup.sigma_hat, ["B_1^1"], "difference (1, 1)")
    return ledger.certified(setup.config.epsilon, setup.delta).per_batch["B_1^1"].gaussian_mu


#: Built-in name → factory (``registry.SCENARIOS`` builds each on first use).
BGM21_BUILTINS: dict[str, Callable[[], Scenario]] = {
    "bgm21-report-noisy-min": report_noisy_min_scenario,
    "bgm21-poly-sfw-round": poly_sfw_round_scenario,
    "bgm21-noisy-sfw-round": noisy_sfw_round_scenario,
}
#: Planted bug name → (scenario factory, attack factory, trial budget per dataset), the layout of
#: ``empirical_dp.planted.PLANTED``; and the twin, the layout of ``planted.TWINS``.
BGM21_PLANTED: dict[str, tuple] = {
    "bgm21-noisy-sfw-printed-sigma-hat": (printed_sigma_hat_scenario, likelihood_ratio_score, PRINTED_SIGMA_HAT_BUDGET),
}
BGM21_TWINS: dict[str, tuple] = {
    "bgm21-noisy-sfw-printed-sigma-hat": (lambda: printed_sigma_hat_scenario(buggy=False), likelihood_ratio_score,
                                          PRINTED_SIGMA_HAT_BUDGET),
}
