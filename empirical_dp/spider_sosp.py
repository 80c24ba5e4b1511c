"""Audit scenarios for spider_sosp run through the algorithm itself: Liu–Talwar private SpiderBoost (Algorithm 2 with
the oracles of Algorithm 3 and one global tree, Algorithm 1), its released gradient sequence on a worst-case
neighbouring pair against the plan's exact Gaussian-DP claim; and the planted bug of Theorem 3.11's printed σ
(docs/audits.md, "spider_sosp: the whole run on the worst pair of leaves").

Sources:
- Liu, Talwar, "Adaptive Batch Size for Privately Finding Second-Order Stationary Points" (arXiv 2024): Algorithm 2
  (drift_0 = κ; an O1 restart whenever drift_t = Σ‖g̃_i‖ since the last restart reaches κ; otherwise
  ∇_t = ∇_{t−1} + O2(x_t, x_{t−1}) on b_t fresh records; g̃_t = ∇_t + TREE(t + 1) (+ g_t at a perturbation step)),
  Algorithm 3 (O1 and O2 on disjoint batches of unused records, one pass), Lemma 3.7 (O1 sensitivity 2G/b under
  replace-one, erratum spider_sosp.E1), Theorem 3.11 (σ = α/√d, "(ε, δ)-DP" — not private, spider_sosp.E3).
- ``reference.algorithms.spider_sosp_privacy``: the exact worst-case count of released tree nodes holding exactly one
  of the two leaves a record changes (+δ at its own leaf, −δ at the next O1 restart leaf, spider_sosp.E5), and the
  plan's μ = sbar·√count/σ.
- Dong, Roth, Su 2022 (JRSS-B) Thm 2.7, Cor. 2.13: N(m, Σ) against N(m′, Σ) is exactly μ-GDP with
  μ² = (m′ − m)ᵀ Σ⁻¹ (m′ − m).
- Tsirelson–Ibragimov–Sudakov (Gaussian concentration): an L-Lipschitz function f of a standard Gaussian vector has
  P(f ≥ E f + r) ≤ exp(−r²/(2L²)) and P(f ≤ E f − r) ≤ exp(−r²/(2L²)) — the bound on the schedule leaving the design.
- Nasr et al. 2021 (S&P) §4: the worst-case pair of a gradient audit is one canary with an extremal contribution.

Threat model. Replace-one neighbours (the plan's relation). Everything is public except each trial's secret seed
(tree noise and saddle perturbations): the hyper-parameters, σ and the plan, both datasets and the public seed, hence
the public permutation in which the records are read. One public seed serves all trials (the plan's guarantee is a
worst case over the data given the public order). The output audited is ``PublicTrace.released`` (T, d), the g̃
sequence the plan covers (kinds, batch sizes, perturbation steps and iterates are functions of it and of public
inputs: ``reference.algorithms.spider_sosp.replay_schedule``), flattened step by step.

The pair (``spider_audit_setup``). The loss is linear, f(x; z) = ⟨z, x⟩ (``LinearGradient``: ∇f(x; z) = z for every
x), G-Lipschitz for ‖z‖ ≤ G and M-smooth for every M > 0 (its Hessian is 0) — Assumption 3.1's sensitivity
constants, which are all the privacy proof uses (B, the loss gap, only sets hyper-parameters). So O2 differences are
exactly 0 and every ∇_t is the O1 mean of its segment: a constant of the data. The records are:
* the canary, the FIRST record of the public order (read by the O1 query of step 0, tree leaf 1): z = −G·e_2 on D,
  +G·e_2 on D′, so ∇_0 moves by exactly 2G/b = sbar, the plan's a-priori leaf sensitivity (the settings keep κ ≥
  G + α√d/ε + α²/G, which makes O1 the larger sensitivity: sbar = c_adj·max(G/b, 1/coef_bt) = 2G/b; the builder
  checks sbar = 2G/b in the plan's mpmath);
* every other record z = ‖w‖·e_1, the same in D and D′: it makes ‖∇_t‖ ≈ ‖w‖ at every step, so the drift grows
  by ≈ ‖w‖ per step, almost without noise, and ‖w‖ places the first restart where the worst case needs it.
The plan's exact count is max_{p<q} c(p, q), attained at (p, q) = ``spider_sosp_worst_case_leaves``(T, "global"),
with p = 1 (the canary's leaf) and a restart leaf q: the canary's shift +2G/b·e_2 holds on ∇_0..∇_{q−2} and ends at
the O1 restart of step q − 1 (leaf q), whose fresh batch holds no canary. For T = Σ = 16 that is (1, 9): 7 nodes,
against 5 for a record with no restart after it and the a-priori k_adj·L = 10.

Why the restart is at leaf q (the schedule). The first restart is the first step t ≥ 1 with Σ_{i<t}‖g̃_i‖ ≥ κ — a
function of the releases (public, so the attacker sees it; the likelihood-ratio score below reads it off the
output). ‖w‖ is chosen (``_record_norm``) so that κ falls between the drift after q − 2 steps and after q − 1
steps with equal margins in noise units: with s = ‖∇_0‖, E drift_{q−2} ≤ U = Σ_{t<q−2}√(s² + σ²d·pop(t + 1)) (Jensen;
pop(t) = popcount(t) = the nodes in TREE(t)) and E drift_{q−1} ≥ (q − 1)s. drift_k is Lip_k = Σ_{t≤k}√pop(t) Lipschitz
in the secret normals (times σ), so by Gaussian concentration the first restart is at step q − 1 except with
probability ≤ exp(−(κ − U)²/(2σ²Lip²_{q−2})) + exp(−((q − 1)s − κ)²/(2σ²Lip²_{q−1})). A perturbation (line 9: ‖g̃_{t−1}‖
≤ threshold) would add secret noise: bounded the same way with the 1-Lipschitz ‖m_{t−1} + TREE(t)‖ (σ√pop(t)); and the
run must not run out of records: by Lemma 3.9's count (#O1 ≤ 1 + S/κ, b_t ≤ coef_bt·‖g̃_{t−1}‖ + 1) it uses at most
b(1 + S/κ) + coef_bt·S + T − 1 records, S = Σ_{t≤T−2}‖g̃_t‖, again a Lipschitz function. ``failure_log10`` is the
log10 of the sum of these bounds: −34 for ``spider-sosp-run`` (margins of 12.6 noise units), −17 for the
planted bug. Off that event the releases are exactly the designed
path's law below; the sampler nevertheless follows the algorithm's own schedule on every draw (restarts, perturbations
and records used, vectorised), so it IS the algorithm's law whatever happens, and it refuses a draw on which the run
would run out of records (never, at these n).

The law and the exact μ. On the designed path the T releases are m_k + N: m_k the path of noiseless estimates
(∇_t = ∇_0 of dataset k for t < q − 1, the restart batch's mean afterwards: the float64 sums of Algorithm 3's O1
loop, ``segment_means`` and ``restart_mean``), N the global tree noise, (TREE(1..T)) = R ξ, ξ = σz, z ~ N(0, I_{T×d})
(the secret generator ("spider_sosp", "noise") draws ``standard_normal(d)`` per step: ``standard_normal((T, d))``).
Σ = σ²(R Rᵀ ⊗ I_d); Δ = m_1 − m_0 = (2G/b)e_2 on steps 0..q − 2 and 0 after, and R⁻¹ maps that prefix indicator to
the node indicator with +1 for nodes holding leaf 1 and −1 for nodes holding leaf q (0 for both), so
μ² = ΔᵀΣ⁻¹Δ = (2G/b)²·c(1, q)/σ² = (sbar·√count/σ)² — the plan's μ. With the schedule a function of the released
prefix, the density of a release y under dataset k is φ_Σ(y − m_k(τ(y))) (τ(y) the first restart read off y, the same
rule for D and D′), so the exact log-likelihood ratio is Δ_τᵀΣ⁻¹(y − (m_0(τ) + m_1(τ))/2) with τ = τ(y), linear in y for
each τ (``log_likelihood_ratio``; at a perturbation step it ignores the extra noise — a valid, slightly weaker score).
The builder checks the construction on the algorithm: one private run of ``stochastic_spider`` per dataset with a known
secret seed has noiseless estimates (``NonPrivateDebugTrace.estimates``) equal to the computed means and releases equal
to ``simulated_releases`` of that seed's normals (1e-12); tests/test_audit_spider_sosp.py repeats it for more seeds,
including the twin of the planted bug, whose larger noise moves its restarts and fires perturbations.

Claims. ``spider-sosp-run``: the plan (``spider_sosp_plan``, rule "gdp_exact") states μ-GDP at μ = sbar√count/σ =
μ*(ε, δ) (adaptive Gaussian composition of the node releases); the scenario claims it, and the pair's true μ equals
it (to the rounding of σ, and up to total variation 10^failure_log10). ``spider-sosp-printed-noise``: σ = α/√d
(Theorem 3.11 as printed, ``rule="thm3.11"``), which claims "(ε, δ)-DP" — an (ε, δ) claim, which only the
Clopper–Pearson bound may refute; the twin runs the exact calibration against the same (ε, δ) claim.

Randomness. ``sample(rng, trials, which)`` draws ``standard_normal((trials, T, d))`` (each trial's tree normals, in
the reference's order), then, at each step t at which some trials perturb (none at the built-ins' settings, except in
the twin), ``standard_normal((k_t, d))`` for those k_t trials' perturbations (the reference draws each from the key
("spider_sosp", "perturbation", t): the same law).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import mpmath
import numpy as np

from reference.algorithms.spider_sosp import KEY, SpiderConfig, public_permutation, stochastic_spider
from reference.algorithms.spider_sosp_privacy import (
    spider_sosp_changed_node_count,
    spider_sosp_node_counts,
    spider_sosp_parameters,
    spider_sosp_plan,
    spider_sosp_worst_case_leaves,
)
from reference.algorithms.spider_sosp_theory import SpiderSettings, spider_settings
from reference.fast.conversions import gaussian_epsilon
from reference.fast.mechanisms import tree_prefix_noise
from reference.precision import norm
from reference.rng import Streams
from reference.validation import check_int, check_probability, check_real

from .scenarios import Scenario, tree_release_matrix

__all__ = [
    "LinearGradient",
    "SpiderAuditSetup",
    "spider_audit_setup",
    "secret_normals",
    "simulated_releases",
    "reference_releases",
    "first_restart_steps",
    "spider_scenario",
    "spider_sosp_run_scenario",
    "printed_noise_scenario",
    "RUN_SETTINGS",
    "PRINTED_NOISE_SETTINGS",
    "SPIDER_SOSP_BUILTINS",
]

#: The secret seed of the one private reference run per dataset a setup makes to check the law.
LEDGER_NOISE_SEED = 2**64 + 20241007
#: Working precision (decimal digits) of the privacy plan (σ calibration, μ).
PLAN_DPS = 30
#: Absolute tolerance of the build-time check reference releases = simulated releases.
_RELEASE_TOLERANCE = 1e-12
#: A setup whose designed path fails with probability above this is not claimed to attain its path's μ (``mu`` None).
DETERMINISTIC_PATH = 1e-9


class LinearGradient:
    """∇f(x; z) = z, the gradient of the linear loss f(x; z) = ⟨z, x⟩: constant in x, G-Lipschitz for ‖z‖ ≤ G, M-smooth
    for every M. A class (not a closure) so that a setup pickles."""

    def __call__(self, point, row):
        return np.asarray(row, dtype=np.float64)


def _popcounts(steps: int) -> np.ndarray:
    """pop(t) = popcount(t), t = 1..T: the nodes of TREE(t) (the row sums of ``tree_release_matrix``)."""
    return np.array([bin(t).count("1") for t in range(1, steps + 1)], dtype=np.float64)


def _float_up(value) -> float:
    """The float nearest above an mpf (σ rounded up: the run is never less noisy than the plan)."""
    out = float(value)
    if mpmath.mpf(out) < value:
        out = math.nextafter(out, math.inf)
    return out


def _o1_mean(rows: np.ndarray) -> np.ndarray:
    """(1/b)·Σ rows in the order and arithmetic of ``GradientOracles.o1`` with ``LinearGradient`` (float64 loop)."""
    total = np.zeros(rows.shape[1])
    for row in rows:
        total = total + row.astype(np.float64)
    return total / rows.shape[0]


@dataclasses.dataclass(frozen=True)
class SpiderAuditSetup:
    """Everything a spider_sosp audit fixes before any trial (module docstring).

    inputs: the keyword arguments of ``spider_audit_setup``; settings: the ``SpiderSettings`` (α, κ, b, γ, …);
    config: the ``SpiderConfig`` every run uses (σ included); plan: the ``SpiderPrivacyPlan`` for these settings and
    rule; noise_std: σ as the run adds it (the plan's, rounded up); leaves: (p, q) = the worst-case pair of leaves
    (p = 1, q the restart leaf); node_count: c(1, q) = the plan's exact count; datasets: (D, D′), (n, d);
    canary_index: the canary's row (the first record of the public order); record_norm: ‖w‖ of every other record;
    segment_means: (2, d), ∇_0 on D and D′; restart_mean: (d,), the O1 mean of an all-w batch (every later ∇);
    weights: (T, T, d), Σ⁻¹Δ_τ for a first restart at step τ = 1..T (τ = T: none within the run); offsets: (T,),
    Σ⁻¹Δ_τ · (m_0(τ) + m_1(τ))/2; path_mus: (T,), √(Δ_τᵀΣ⁻¹Δ_τ); mu: the pair's μ on the designed path (τ = q − 1),
    or None when the path is not nearly certain (failure_log10 > log10 ``DETERMINISTIC_PATH``); failure_log10: {bound:
    log10 of its probability bound} for "early", "late", "perturbation", "data" and "total" (module docstring).
    """

    inputs: dict
    settings: SpiderSettings
    config: SpiderConfig
    plan: object
    noise_std: float
    leaves: tuple
    node_count: int
    datasets: tuple
    canary_index: int
    record_norm: float
    segment_means: np.ndarray
    restart_mean: np.ndarray
    weights: np.ndarray
    offsets: np.ndarray
    path_mus: np.ndarray
    mu: float | None
    failure_log10: dict

    @property
    def steps(self) -> int:
        """T = Σ (one global tree of T leaves; the run's horizon)."""
        return int(self.config.steps)

    @property
    def d(self) -> int:
        return int(self.config.d)

    @property
    def columns(self) -> int:
        """T·d: the length of one flattened run."""
        return self.steps * self.d

    @property
    def restart_step(self) -> int:
        """q − 1: the 0-based step of the designed first restart."""
        return self.leaves[1] - 1

    @property
    def public_seed(self) -> int:
        return int(self.inputs["public_seed"])

    @property
    def n(self) -> int:
        return int(self.datasets[0].shape[0])

    def path_means(self, which, tau=None) -> np.ndarray:
        """m_which(τ), (T, d): ∇_t of dataset ``which`` when the first restart is at step τ (default: the design)."""
        tau = self.restart_step if tau is None else tau
        out = np.tile(self.restart_mean, (self.steps, 1))
        out[:tau] = self.segment_means[which]
        return out


def _record_norm(*, batch, lipschitz, sigma, d, kappa, restart, pops) -> float:
    """‖w‖ ≤ G placing κ between E drift_{q−2} and E drift_{q−1} with equal margins in noise units (module doc)."""
    lip = np.cumsum(np.sqrt(pops))
    a = lipschitz / batch

    def margins(w):
        s = math.hypot((batch - 1) * w / batch, a)
        upper = sum(math.sqrt(s * s + sigma**2 * d * pops[t]) for t in range(restart - 1))
        return (kappa - upper) / lip[restart - 2], (restart * s - kappa) / lip[restart - 1]

    lo, hi = 0.0, float(lipschitz)
    if margins(hi)[1] < margins(hi)[0]:
        raise ValueError(f"kappa = {kappa:g} is too large for records of norm <= G = {lipschitz:g} to restart at step "
                         f"{restart}: lower loss_gap")
    for _ in range(200):
        mid = (lo + hi) / 2
        early, late = margins(mid)
        if late < early:
            lo = mid
        else:
            hi = mid
    return hi


def _log10_tail(margin, lipschitz) -> float:
    """log10 exp(−margin²/(2·lipschitz²)) (0 when the margin is not positive: no bound)."""
    if margin <= 0:
        return 0.0
    return -(margin**2) / (2 * lipschitz**2) / math.log(10)


def _failure_bounds(*, config, settings, sigma, n, restart, s0, s1, pops) -> dict:
    """log10 of the bounds of the module docstring: early/late first restart, a perturbation, running out of records."""
    T, d, kappa = config.steps, config.d, config.kappa
    lip = np.cumsum(np.sqrt(pops))
    norms = np.array([s0 if t < restart else s1 for t in range(T)])
    upper = np.sqrt(norms**2 + sigma**2 * d * pops)  # E‖m_t + TREE(t + 1)‖ ≤ √(‖m_t‖² + σ²d·pop(t + 1))
    out = {
        "early": _log10_tail(kappa - float(np.sum(upper[:restart - 1])), sigma * lip[restart - 2]),
        "late": _log10_tail(restart * s0 - kappa, sigma * lip[restart - 1]),
    }
    perturbation = [_log10_tail(norms[t - 1] - config.threshold, sigma * math.sqrt(pops[t - 1]))
                    for t in range(1, T)] if config.perturb else [-math.inf]
    out["perturbation"] = _log10_sum(perturbation)
    coefficient = settings.batch_coefficient
    most = (n - config.batch_size - T + 1) / (config.batch_size / kappa + coefficient)  # S ≤ most: no halt
    out["data"] = _log10_tail(most - float(np.sum(upper[:T - 1])), sigma * lip[T - 2])
    out["total"] = _log10_sum(list(out.values()))
    return out


def _log10_sum(values) -> float:
    values = [v for v in values if v != -math.inf]
    if not values:
        return -math.inf
    top = max(values)
    return top + math.log10(sum(10 ** (v - top) for v in values))


def spider_audit_setup(*, steps=16, d=2, epsilon=3.0, delta=1e-5, n=200_000, c_alpha=0.2, loss_gap=1.728,
                       lipschitz=1.0, smoothness=1.0, hessian_lipschitz=1.0, rule="gdp_exact", record_norm=None,
                       public_seed=0) -> SpiderAuditSetup:
    """The fixed part of a spider_sosp audit (module docstring).

    steps: T = Σ (the run's horizon and the global tree's leaves); d ≥ 2 (the canary moves along e_2, the other records
    along e_1); epsilon, delta: the plan's target (ε, δ); n: records; c_alpha: α's constant (spider_sosp.E29), which
    sets b; loss_gap: B, which sets κ = max(α√d/ε, (BGM)^{1/3}); lipschitz G, smoothness M, hessian_lipschitz ρ:
    Assumption 3.1's constants; rule: the plan's σ rule ("gdp_exact", or a printed rule such as "thm3.11");
    record_norm: ‖w‖ (default: the balanced choice); public_seed: the run's public seed (the record order).

    Unit-mode settings (``spider_settings``), global tree, replace-one, default flags. Makes one private reference run
    per dataset: raises ValueError when its noiseless estimates differ from the computed means or its releases from
    ``simulated_releases`` of its secret normals, or when a nearly certain designed path is not followed.
    """
    T = check_int("steps", steps, minimum=3)
    d = check_int("d", d, minimum=2)
    epsilon = float(check_real("epsilon", epsilon, positive=True))
    delta = float(check_probability("delta", delta))
    n = check_int("n", n, minimum=T)
    public_seed = check_int("public_seed", public_seed, minimum=0)
    G = float(check_real("lipschitz", lipschitz, positive=True))
    inputs = dict(steps=T, d=d, epsilon=epsilon, delta=delta, n=n, c_alpha=c_alpha, loss_gap=loss_gap, lipschitz=G,
                  smoothness=smoothness, hessian_lipschitz=hessian_lipschitz, rule=rule, record_norm=record_norm,
                  public_seed=public_seed)
    p, q = spider_sosp_worst_case_leaves(T, "global")
    if p != 1 or q is None or q < 3:
        raise ValueError(f"the worst pair of leaves of a global tree of {T} leaves is {(p, q)}: the audit needs a "
                         "restart leaf q >= 3 (steps >= 5 or steps = 3)")
    restart = q - 1
    problem = dict(lipschitz=G, smoothness=smoothness, loss_gap=loss_gap, d=d, n=n, epsilon=epsilon, steps=T,
                   c_alpha=c_alpha)
    with mpmath.workdps(PLAN_DPS):
        plan = spider_sosp_plan(**problem, delta=delta, rule=rule, allow_nonprivate=rule == "thm3.11")
        params = spider_sosp_parameters(**problem)
        sigma = _float_up(plan.noise_std)
        o1_sets_sbar = bool(mpmath.almosteq(plan.sbar, 2 * mpmath.mpf(G) / params["b"], 1e-25))
    settings = spider_settings(n, d, G, smoothness, hessian_lipschitz, loss_gap, epsilon, delta, c_alpha=c_alpha,
                               noise_std=sigma, steps=T)
    config = settings.config()
    b = config.batch_size
    if b != params["b"]:
        raise ValueError(f"the run's O1 batch {b} differs from the plan's {params['b']} (float vs mpmath alpha)")
    if b < 2:
        raise ValueError("the O1 batch must hold the canary and at least one other record (b >= 2)")
    count = spider_sosp_node_counts(T, "global")
    if spider_sosp_changed_node_count(p, q, T) != count or plan.node_count != count:
        raise ValueError("the worst-case leaves do not attain the plan's node count")
    pops = _popcounts(T)
    if record_norm is None:
        record_norm = _record_norm(batch=b, lipschitz=G, sigma=sigma, d=d, kappa=config.kappa, restart=restart,
                                   pops=pops)
    record_norm = float(check_real("record_norm", record_norm, positive=True))
    if record_norm > G:
        raise ValueError(f"record_norm must be <= G = {G:g} (Assumption 3.1), got {record_norm:g}")

    order = public_permutation(public_seed, n)
    canary = int(order[0])
    base = np.zeros((n, d))
    base[:, 0] = record_norm
    datasets = []
    for sign in (-1.0, 1.0):  # D: −G e_2, D′: +G e_2
        data = base.copy()
        data[canary] = 0.0
        data[canary, 1] = sign * G
        data.setflags(write=False)
        datasets.append(data)
    segment_means = np.stack([_o1_mean(data[order[:b]]) for data in datasets])
    restart_mean = _o1_mean(datasets[0][order[b:2 * b]])  # an all-w batch (any later O1 batch is one)
    s0, s1 = float(norm(segment_means[0])), float(norm(restart_mean))
    failure = _failure_bounds(config=config, settings=settings, sigma=sigma, n=n, restart=restart, s0=s0, s1=s1,
                              pops=pops)

    # the exact law for every first restart τ = 1..T (τ = T: none within the run)
    release = tree_release_matrix(T)
    inverse = np.linalg.inv(release @ release.T)
    weights, offsets, mus = np.zeros((T, T, d)), np.zeros(T), np.zeros(T)
    for tau in range(1, T + 1):
        means = [np.tile(restart_mean, (T, 1)) for _ in (0, 1)]
        for k in (0, 1):
            means[k][:tau] = segment_means[k]
        shift = means[1] - means[0]
        weights[tau - 1] = inverse @ shift / sigma**2
        offsets[tau - 1] = float(np.sum(weights[tau - 1] * (means[0] + means[1]) / 2))
        mus[tau - 1] = math.sqrt(float(np.sum(shift * weights[tau - 1])))
    shift_norm = float(norm(segment_means[1] - segment_means[0]))
    if not math.isclose(mus[restart - 1], shift_norm * math.sqrt(count) / sigma, rel_tol=1e-9):
        raise ValueError("the pair's mu differs from shift * sqrt(node count) / sigma")
    deterministic = failure["total"] <= math.log10(DETERMINISTIC_PATH)
    if rule == "gdp_exact" and deterministic and not (o1_sets_sbar and math.isclose(
            mus[restart - 1], float(plan.mu), rel_tol=1e-9)):
        raise ValueError("the pair does not attain the plan's mu: O1 must set sbar (kappa >= G + alpha*sqrt(d)/eps)")
    for array in (segment_means, restart_mean, weights, offsets, mus):
        array.setflags(write=False)
    setup = SpiderAuditSetup(
        inputs=inputs, settings=settings, config=config, plan=plan, noise_std=sigma, leaves=(p, q), node_count=count,
        datasets=tuple(datasets), canary_index=canary, record_norm=record_norm, segment_means=segment_means,
        restart_mean=restart_mean, weights=weights, offsets=offsets, path_mus=mus,
        mu=float(mus[restart - 1]) if deterministic else None, failure_log10=failure,
    )
    _check_against_reference(setup, deterministic)
    return setup


def _check_against_reference(setup: SpiderAuditSetup, deterministic: bool) -> None:
    noise_seed = LEDGER_NOISE_SEED if LEDGER_NOISE_SEED != setup.public_seed else LEDGER_NOISE_SEED + 1
    tree, perturbation = secret_normals(noise_seed, setup.steps, setup.d)
    for which, data in enumerate(setup.datasets):
        run = stochastic_spider(LinearGradient(), data, np.zeros(setup.d), setup.config, seed=setup.public_seed,
                                noise_seed=noise_seed)
        trace = run.trace
        if trace.steps != setup.steps or trace.halt_reason != "horizon":
            raise ValueError(f"the reference run stopped after {trace.steps} steps ({trace.halt_reason})")
        restarts = [t for t, kind in enumerate(trace.kinds) if kind == "O1" and t > 0]
        tau = restarts[0] if restarts else setup.steps
        if not np.array_equal(run.debug.estimates, setup.path_means(which, tau)):
            raise ValueError("the reference run's noiseless estimates differ from the O1 means of its segments: the "
                             "release means are not the constants the law assumes")
        if deterministic and (tau != setup.restart_step or trace.perturbation_steps):
            raise ValueError(f"the reference run restarted at step {tau} (perturbations at {trace.perturbation_steps}),"
                             f" not on the designed path (restart at step {setup.restart_step}, no perturbation)")
        simulated = simulated_releases(setup, which, tree[None], perturbation[None])[0]
        if not np.allclose(trace.released, simulated, rtol=0, atol=_RELEASE_TOLERANCE):
            raise ValueError("the reference run's releases differ from the simulated releases of its secret normals")


def secret_normals(noise_seed, steps, d) -> tuple[np.ndarray, np.ndarray]:
    """The standard normals a reference run with secret seed ``noise_seed`` consumes: the tree's (T, d) (key
    ("spider_sosp", "noise"), one ``standard_normal(d)`` per step) and the perturbations' (T, d) (row t: key
    ("spider_sosp", "perturbation", t), used only if step t perturbs)."""
    streams = Streams(check_int("noise_seed", noise_seed, minimum=0))
    tree = streams.generator(KEY, "noise").standard_normal((steps, d))
    perturbation = np.stack([streams.generator(KEY, "perturbation", t).standard_normal(d) for t in range(steps)])
    return tree, perturbation


def _batch_sizes(config: SpiderConfig, previous_norms: np.ndarray) -> np.ndarray:
    """b_t = max(⌈v√d/(αε)⌉, ⌈κv/α²⌉, 1) in float64 (the reference's exact ceilings may be one smaller)."""
    first = np.ceil(previous_norms * math.sqrt(config.d) / (config.alpha * config.epsilon))
    second = np.ceil(config.kappa * previous_norms / config.alpha**2)
    return np.maximum(np.maximum(first, second), 1.0)


def simulated_releases(setup: SpiderAuditSetup, which, tree_normals, perturbation_normals=None) -> np.ndarray:
    """The releases of ``trials`` runs of Algorithm 2 on D (which = 0) or D′ (1) from their secret normals, without
    running the oracles: the algorithm's own schedule (O1 restart when drift ≥ κ, perturbation when frozen ≤ 0 and
    ‖g̃_{t−1}‖ ≤ threshold, records used), vectorised over trials, with ∇_t = ∇_0 of ``which`` before the first restart
    and the restart mean after it (module docstring).

    tree_normals: (trials, T, d), each trial's tree normals in the reference's order. perturbation_normals: (trials,
    T, d) (row t used if step t perturbs: ``secret_normals``), a ``numpy.random.Generator`` (draws
    ``standard_normal((k_t, d))`` at each step t where k_t trials perturb), or None (then a perturbation raises).
    Raises ValueError when a run would run out of records (halting before T). Returns (trials, T, d).
    """
    which = check_int("which", which, minimum=0, maximum=1)
    z = np.asarray(tree_normals, dtype=np.float64)
    T, d, config = setup.steps, setup.d, setup.config
    if z.ndim != 3 or z.shape[1:] != (T, d):
        raise ValueError(f"tree_normals must have shape (trials, {T}, {d}), got {z.shape}")
    trials = z.shape[0]
    if isinstance(perturbation_normals, np.ndarray) and perturbation_normals.shape != z.shape:
        raise ValueError(f"perturbation_normals must have shape {z.shape}, got {perturbation_normals.shape}")
    out = np.empty((trials, T, d))
    if trials == 0:
        return out
    noise = tree_prefix_noise(setup.noise_std * z)  # TREE(t + 1) at step t: one global tree, leaf t + 1
    drift = np.full(trials, config.kappa)  # line 2: drift_0 = κ
    restarted = np.zeros(trials, dtype=bool)
    frozen_previous = np.ones(trials, dtype=np.int64)  # frozen_{−1} = 1
    previous_norm = np.zeros(trials)
    used = np.zeros(trials)
    scale = config.perturbation_scale / math.sqrt(d)
    for t in range(T):
        o1 = drift >= config.kappa
        need = np.full(trials, float(config.batch_size)) if t == 0 else np.where(
            o1, float(config.batch_size), _batch_sizes(config, previous_norm))
        used = used + need
        if np.any(used + 1 > setup.n):  # one record of slack for the float ceilings
            raise ValueError(f"a simulated run needs more than the n = {setup.n} records at step {t}: it would halt")
        if t > 0:
            restarted |= o1
        drift = np.where(o1, 0.0, drift)
        mean = np.where(restarted[:, None], setup.restart_mean, setup.segment_means[which])
        frozen = frozen_previous - 1
        released = mean + noise[:, t]
        if t > 0 and config.perturb:
            perturb = (frozen_previous <= 0) & (previous_norm <= config.threshold)
            if np.any(perturb):
                frozen = np.where(perturb, config.freeze_steps, frozen)
                if config.reset_drift_on_perturb:
                    drift = np.where(perturb, 0.0, drift)
                rows = np.flatnonzero(perturb)
                if isinstance(perturbation_normals, np.random.Generator):
                    g = perturbation_normals.standard_normal((rows.size, d))
                elif perturbation_normals is None:
                    raise ValueError(f"step {t} perturbs in {rows.size} trial(s): perturbation_normals are needed")
                else:
                    g = np.asarray(perturbation_normals, dtype=np.float64)[rows, t]
                released[rows] = released[rows] + g * scale
        norms = norm(released, axis=1)
        drift = drift + norms
        out[:, t] = released
        frozen_previous, previous_norm = frozen, norms
    return out


def reference_releases(setup: SpiderAuditSetup, which, noise_seeds) -> np.ndarray:
    """``PublicTrace.released`` of one private run of ``reference.algorithms.spider_sosp.stochastic_spider`` per secret
    seed (the plain-loop reference, for the tests), shape (len(noise_seeds), T, d)."""
    which = check_int("which", which, minimum=0, maximum=1)
    out = []
    for seed in noise_seeds:
        run = stochastic_spider(LinearGradient(), setup.datasets[which], np.zeros(setup.d), setup.config,
                                seed=setup.public_seed, noise_seed=int(seed))
        out.append(np.array(run.trace.released, dtype=np.float64))
    return np.array(out)


def first_restart_steps(setup: SpiderAuditSetup, releases) -> np.ndarray:
    """τ, the step of the first O1 restart after step 0, read off released sequences (trials, T, d): the first t ≥ 1
    with Σ_{i<t}‖g̃_i‖ ≥ κ (drift is not reset at perturbations), T when there is none within the run."""
    x = np.asarray(releases, dtype=np.float64)
    T = setup.steps
    if x.ndim != 3 or x.shape[1:] != (T, setup.d):
        raise ValueError(f"releases must have shape (trials, {T}, {setup.d}), got {x.shape}")
    if x.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    drift = np.cumsum(norm(x, axis=-1), axis=-1)[:, :T - 1]  # drift_t = drift[:, t − 1], t = 1..T − 1
    crossed = drift >= setup.config.kappa
    return np.where(np.any(crossed, axis=1), np.argmax(crossed, axis=1) + 1, T)


# ---------------------------------------------------------------------------------------------------
# Scenarios


def _check_outputs(outputs, columns: int) -> np.ndarray:
    outputs = np.asarray(outputs, dtype=np.float64)
    if outputs.ndim != 2 or outputs.shape[1] != columns:
        raise ValueError(f"outputs must have shape (trials, {columns}), got {outputs.shape}")
    return outputs


def _check_sample_args(rng, trials, which) -> tuple[int, int]:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return check_int("trials", trials, minimum=0), check_int("which", which, minimum=0, maximum=1)


def _describe(setup: SpiderAuditSetup, bug: str | None) -> str:
    plan, config = setup.plan, setup.config
    p, q = setup.leaves
    mu = "pair μ=n/a" if setup.mu is None else f"pair μ={setup.mu:.6g}"
    if bug is None:
        ledger = f"plan {plan.rule}, μ={float(plan.mu):.6g}"
    else:
        ledger = f"[{bug}]"
    return (f"spider_sosp Alg 2+3, T=Σ={setup.steps} (global tree), d={setup.d}, n={setup.n}, b={config.batch_size}, "
            f"κ={config.kappa:.6g}, canary in leaf {p} (step 0's O1 batch), restart at leaf {q} ({setup.node_count} "
            f"nodes), σ={setup.noise_std:.6g}, {mu}; {ledger}")


def spider_scenario(setup: SpiderAuditSetup, *, name, claimed_epsilon=None, bug=None) -> Scenario:
    """The ``Scenario`` of a setup: outputs (trials, T·d) = the flattened ``PublicTrace.released`` on D or D′
    (``simulated_releases``). Claim: μ-GDP at the plan's μ (a private rule), or (ε, δ) at ``claimed_epsilon``
    (given: a printed rule's claim). True μ = ``setup.mu`` (None if the designed path is not nearly certain), tight ε
    = ε_μ(δ); the score is the exact log-likelihood ratio given the first restart read off the output."""
    T, d, columns = setup.steps, setup.d, setup.columns
    delta = float(setup.inputs["delta"])
    weights = setup.weights.reshape(T, columns)

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        z = rng.standard_normal((trials, T, d))
        return simulated_releases(setup, which, z, rng).reshape(trials, columns)

    def log_likelihood_ratio(outputs):
        x = _check_outputs(outputs, columns)
        tau = first_restart_steps(setup, x.reshape(-1, T, d))
        score = np.empty(x.shape[0])
        for value in np.unique(tau):
            rows = tau == value
            score[rows] = x[rows] @ weights[value - 1] - setup.offsets[value - 1]
        return score

    if claimed_epsilon is None:
        if not setup.plan.private:
            raise ValueError("the plan is not private: state its (epsilon, delta) claim with claimed_epsilon")
        claim = dict(claimed_mu=float(setup.plan.mu))
    else:
        claim = dict(claimed_epsilon=float(check_real("claimed_epsilon", claimed_epsilon, positive=True)))
    tight = None if setup.mu is None else gaussian_epsilon(delta, setup.mu)
    return Scenario(name=name, description=_describe(setup, bug), sample=sample, **claim, delta=delta,
                    tight_epsilon=tight, mu=setup.mu, log_likelihood_ratio=log_likelihood_ratio)


#: ``spider-sosp-run``: T = Σ = 16 (worst pair (1, 9), 7 nodes; 5 without the restart, a-priori 2·5 = 10), d = 2,
#: n = 200 000, ε = 3 at δ = 1e-5 (μ* = 0.7191: at 10⁵ trials the GDP bound's loss of ≈ 0.02 in μ keeps its ε_lb
#: above 0.9 of the exact ε, as for nsnc_improved-single-pass), B = 1.728 (κ = (BGM)^{1/3} = 1.2 ≥ G + α√d/ε: O1 sets
#: sbar), c_α = 0.2 (α = 0.00958, b = 10 939, σ = 6.7e-4; ‖w‖ = 0.1606: the drift margins are 12.6 noise units, the
#: designed path fails with probability ≤ 1e-34). Each reference run reads ≈ 51 000 records (~0.4 s).
RUN_SETTINGS = dict(steps=16, d=2, epsilon=3.0, delta=1e-5, n=200_000, c_alpha=0.2, loss_gap=1.728, rule="gdp_exact",
                    public_seed=0)
#: ``spider-sosp-printed-noise`` and its twin: T = Σ = 3 (worst pair (1, 3), 3 nodes), d = 16, n = 20 000, target
#: (ε, δ) = (1, 1e-5), c_α = 1 (the paper's α = 0.133, b = 87), B = 1.728 (κ = 1.2). σ = α/√d = 0.0334 by Theorem 3.11:
#: the pair's μ is 1.194 (exact ε 5.38 at δ) against the claim ε = 1. d = 16 concentrates the release norms, so the
#: drift places the restart at leaf 3 even with this σ (‖w‖ = 0.9054; the path fails with probability ≤ 2e-17);
#: the twin's exact σ = 0.1918 is 5.7 times larger, and its restarts and perturbations vary from run to run (the
#: sampler follows them).
PRINTED_NOISE_SETTINGS = dict(steps=3, d=16, epsilon=1.0, delta=1e-5, n=20_000, c_alpha=1.0, loss_gap=1.728,
                              public_seed=0)


def spider_sosp_run_scenario(**kwargs) -> Scenario:
    """``spider-sosp-run``: the whole run's T = 16 releases of Algorithm 2 (global tree) on the worst pair of leaves
    (1, 9), claimed μ-GDP at the plan's μ = μ*(3, 1e-5) = 0.71912, which the pair attains. Keyword arguments override
    ``RUN_SETTINGS``."""
    options = {**RUN_SETTINGS, **kwargs}
    name = options.pop("name", "spider-sosp-run")
    setup = spider_audit_setup(**options)
    if setup.plan.rule != "gdp_exact" or setup.mu is None:
        raise ValueError("spider-sosp-run needs the gdp_exact plan and a nearly certain designed path")
    return spider_scenario(setup, name=name)


def printed_noise_scenario(*, buggy=True, **kwargs) -> Scenario:
    """Planted bug ``spider-sosp-printed-noise``: Theorem 3.11's printed σ = α/√d (spider_sosp.E3), which claims
    (ε, δ)-DP for the target (ε, δ); the run and pair of ``spider_audit_setup`` at ``PRINTED_NOISE_SETTINGS``. Only the
    Clopper–Pearson bound may refute an (ε, δ) claim. ``buggy=False``: the twin, the exact calibration ("gdp_exact")
    against the same (ε, δ) claim. Keyword arguments override the settings."""
    options = {**PRINTED_NOISE_SETTINGS, **kwargs}
    setup = spider_audit_setup(**options, rule="thm3.11")
    claimed = float(setup.plan.target_epsilon)
    if not buggy:  # the same pair (the bug's record norm), the exact calibration
        twin = spider_audit_setup(**{**options, "record_norm": setup.record_norm}, rule="gdp_exact")
        return spider_scenario(twin, name="spider-sosp-printed-noise-twin", claimed_epsilon=claimed)
    if setup.plan.private:
        raise ValueError("the printed rule is private at these settings: nothing to plant")
    return spider_scenario(setup, name="spider-sosp-printed-noise", claimed_epsilon=claimed,
                           bug=f"planted: σ=α/√d (Theorem 3.11 as printed), claimed (ε, δ)=({claimed:g}, "
                               f"{setup.inputs['delta']:g})")


#: Built-in name → factory (``registry.SCENARIOS`` builds each on first use).
SPIDER_SOSP_BUILTINS: dict[str, Callable[[], Scenario]] = {
    "spider-sosp-run": spider_sosp_run_scenario,
}
