"""zo_o2nc Corollary 4.4 (with Theorem 4.3 and Lemma C.1), executed on whole runs: the privacy a run of Algorithm 3
+ Algorithm 4 states in its ledger is never more than the released tree prefix sums give, computed independently.

What the check computes by itself, from the paper alone:

* The leaf sensitivities (replace-one, shared directions, zo_o2nc.E15): s_1 = 2dL/B1 for the GRAD leaf (Lemma 3.1)
  and s_t = 2dL·‖w_t − w_{t−1}‖/(B2δ) ≤ 2dL·2D/(B2δ) for the DIFF leaves (Lemma 3.2, Remark 4.1), D the step bound
  the run was given (δ/T by default).
* The exact privacy of one epoch's release. The T released vectors of an epoch are x = P m + R ξ per coordinate:
  P the prefix-sum matrix (lower-triangular ones), m the leaf contributions, R_{t,b} = 1[b ∈ R(t)] with R(t) the
  right endpoints of NODE(t) (Alg 5), ξ_b ~ N(0, σ_b²). Changing the record of leaf q moves the mean by (P e_q)⊗v,
  ‖v‖ ≤ s_q, so the release is a Gaussian mechanism with Mahalanobis sensitivity
  μ_q² = s_q²·(P e_q)ᵀ(R Σ Rᵀ)⁻¹(P e_q), Σ = diag(σ_b²): (α, αμ²/2)-RDP with μ² = max_q μ_q² (the adaptive
  composition of Theorem 4.3 / Lemma C.1 has the same value), and its exact (ε, δ) curve is μ-GDP's (Balle &
  Wang 2018), δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2). Epochs read disjoint records (parallel composition).

The check then requires, for runs calibrated to a target ρ (count_rule "exact", the default) and runs with σ
given, at T ∈ {2, 4} with s_1 = s_2 (the erratum's boundary, zo_o2nc.E3), Theorem 4.9's B1 = T + 1, B1 < T·B2/2
and a step bound below δ/T:

(A) μ ≤ ρ_target (the calibrated σ reaches the target), the ledger's ρ_exact ≥ μ, its claimed ε ≥ the exact
    ε_GDP(μ, δ); and ``zo_o2nc_tree_rho_squared`` (exact rule) equals max_q μ_q² for random sensitivities and
    non-constant σ_b (n ≤ 33);
(B) the noise the run adds is the ledger's σ: with a zero loss the releases are pure tree noise and must equal
    Σ_{b ∈ R(t)} σ·z_b with z_b the ``standard_normal(d)`` draws of the declared noise key ("zo_o2nc", "noise")
    under the noise seed the check passes;
(C) on worst-case neighbouring data sets (f = L<e, x> replaced by −L<e, x>, the same public and noise seeds) the
    first release that differs moves by at most the leaf sensitivity the ledger uses; at d = 1 the GRAD leaf
    attains it (every direction is ±e).

Tolerances: float64 rounding only. The linear algebra involves integer matrices of size T ≤ 8 and σ², relative
error ≲ 1e−14; the ledger's values are rounded up; PRIVACY_SLACK = 1e−9 relative leaves five orders of room.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
from scipy import optimize, stats

from proofs_checks.authoring import Claim, deterministic, rebind, rounding_gamma, substitute
from reference.accounting.conversions import epsilon_from_zcdp
from reference.objectives import RidgeSum
from reference.rng import Streams

from ._runs import LinearLoss, RidgeLoss, path, sample_rows

#: Relative slack on privacy inequalities between float64 values (rounding only).
PRIVACY_SLACK = 1e-9
DP_DELTA = 1e-5

#: (label, d, L, T, B1, B2, δ, D as a multiple of δ/T, ρ target or None, σ given or None)
CONFIGS = (
    ("T=2, B1 = T·B2/2 (s_1 = s_2)", 2, 1.0, 2, 1, 1, 0.5, 1.0, 1.0, None),
    ("T=4, B1 = T·B2/2 (s_1 = s_2)", 3, 2.0, 4, 2, 1, 0.3, 1.0, 0.5, None),
    ("T=8, B1 = T + 1, B2 = 1 (Theorem 4.9)", 2, 1.0, 8, 9, 1, 0.2, 1.0, 2.0, None),
    ("T=6, B1 = 3 < T·B2/2 = 6 (s_1 > s_2)", 2, 1.0, 6, 3, 2, 0.4, 1.0, 1.0, None),
    ("T=5, D = δ/(2T)", 3, 1.5, 5, 4, 1, 0.5, 0.5, 1.0, None),
    ("T=7, σ given", 2, 1.0, 7, 4, 1, 0.3, 1.0, None, 0.8),
)


# --- the check's own exact accounting ---------------------------------------------------------------------------

def _fenwick(t: int) -> list[int]:
    """R(t): the right endpoints of NODE(t), t, t − lowbit(t), … > 0 (Alg 5; |NODE(t)| = popcount(t))."""
    chain = []
    while t > 0:
        chain.append(t)
        t -= t & -t
    return chain


def _mahalanobis(sensitivities, stds) -> np.ndarray:
    """μ_q² = s_q²·(P e_q)ᵀ(R Σ Rᵀ)⁻¹(P e_q) for q = 1..n: the release x = P m + R ξ of one epoch."""
    n = len(stds)
    prefix = np.tril(np.ones((n, n)))
    tree = np.zeros((n, n))
    for t in range(1, n + 1):
        tree[t - 1, [b - 1 for b in _fenwick(t)]] = 1.0
    covariance = tree @ np.diag(np.asarray(stds, dtype=np.float64) ** 2) @ tree.T
    solved = np.linalg.solve(covariance, prefix)
    return np.asarray(sensitivities, dtype=np.float64) ** 2 * np.einsum("iq,iq->q", prefix, solved)


def _gdp_epsilon(mu: float, delta: float) -> float:
    """The exact ε at δ of a Gaussian mechanism with Mahalanobis sensitivity μ (μ-GDP, Balle & Wang 2018 Thm 8)."""
    def excess(eps):
        return (stats.norm.cdf(-eps / mu + mu / 2)
                - math.exp(eps + stats.norm.logcdf(-eps / mu - mu / 2)) - delta)
    if excess(0.0) <= 0:
        return 0.0
    high = 1.0
    while excess(high) > 0:
        high *= 2
    return optimize.brentq(excess, 0.0, high, xtol=1e-14, rtol=1e-13)


def _leaf_sensitivities(d, L, T, B1, B2, delta, D):
    """Lemma 3.1 / 3.2 with ‖w_t − w_{t−1}‖ ≤ 2D: s_1 = 2dL/B1, s_t = 2dL·2D/(B2δ)."""
    return np.array([2 * d * L / B1] + [2 * d * L * 2 * D / (B2 * delta)] * (T - 1))


# --- (A), (B): the ledger against the exact privacy of the release, and the noise actually added ---------------------

def _config_run(subject, ctx, config, zero_loss):
    label, d, L, T, B1, B2, delta, factor, rho, sigma = config
    gen = ctx.generator("cor4_4", label, "zero" if zero_loss else "ridges")
    K = 2
    M = K * (B1 + B2 * (T - 1))
    if zero_loss:
        loss, data = LinearLoss(), np.zeros((M, d))
    else:
        population = RidgeSum.random(d, 20, gen, lipschitz=L, profile="capped", tau=0.5, offset_scale=0.5)
        loss, data = RidgeLoss(d, L, "capped", 0.5), sample_rows(population.data, M, gen)
    noise_seed = int(gen.integers(2**62)) + 2**62
    result = subject.zo_o2nc(loss, data, np.full(d, 0.1), T=T, K=K, B1=B1, B2=B2, smoothing_radius=delta,
                             step_bound=factor * delta / T, step_size=0.05, rho=rho, noise_std=sigma, lipschitz=L,
                             dp_delta=DP_DELTA, noise_seed=noise_seed, seed=int(gen.integers(2**62)))
    return result, noise_seed, K


def _ledger_problems(config, result):
    label, d, L, T, B1, B2, delta, factor, rho, _ = config
    plan = result.ledger.plan
    if plan is None:
        return [f"{label}: the private run has no privacy plan"], {}
    sigma = float(plan.noise_std)
    if float(result.ledger.settings.noise_std) != sigma:
        return [f"{label}: the ledger's settings and plan disagree on σ"], {}
    s = _leaf_sensitivities(d, L, T, B1, B2, delta, factor * delta / T)
    mu = math.sqrt(float(np.max(_mahalanobis(s, np.full(T, sigma)))))
    exact_eps = _gdp_epsilon(mu, DP_DELTA)
    claimed = float(result.ledger.epsilon_spent)
    problems = []
    if rho is not None and not mu <= rho * (1 + PRIVACY_SLACK):
        problems.append(f"{label}: the σ calibrated for ρ = {rho} gives μ = {mu:.6g} (exact tree accounting)")
    if not float(plan.rho_exact) >= mu * (1 - PRIVACY_SLACK):
        problems.append(f"{label}: the ledger's ρ = {float(plan.rho_exact):.6g} < μ = {mu:.6g}")
    if not claimed >= exact_eps * (1 - PRIVACY_SLACK):
        problems.append(f"{label}: claimed ε = {claimed:.6g} < exact ε = {exact_eps:.6g} (δ = {DP_DELTA:g})")
    return problems, {"mu": mu, "rho": rho, "claimed": claimed, "exact": exact_eps,
                      "ratio": claimed / exact_eps if exact_eps > 0 else math.inf}


def _noise_problems(config, result, noise_seed, K):
    """(B): with f ≡ 0 the releases are TREE(t) = Σ_{b ∈ R(t)} σ z_b, z_b the declared draws."""
    label, d, *_ = config
    T = config[3]
    arrays = path(result, K, T, d, fields=("releases",))
    if not isinstance(arrays, dict):
        return [f"{label}: {arrays.detail}"]
    if result.ledger.plan is None:
        return [f"{label}: the private run has no privacy plan"]
    sigma = float(result.ledger.plan.noise_std)
    gen = Streams(noise_seed).generator("zo_o2nc", "noise")
    for k in range(K):
        nodes = [sigma * gen.standard_normal(d) for _ in range(T)]
        for t in range(1, T + 1):
            chain = _fenwick(t)
            expected = np.sum([nodes[b - 1] for b in chain], axis=0)
            size = np.sum([np.abs(nodes[b - 1]) for b in chain], axis=0)
            if np.any(np.abs(arrays["releases"][k, t - 1] - expected) > rounding_gamma(len(chain) + 2) * size):
                return [f"{label}: with f ≡ 0 the release of (k={k + 1}, t={t}) is not Σ_(b∈R(t)) σ z_b for the "
                        f"ledger's σ = {sigma!r} and the declared noise draws"]
    return []


def _rho_function_problems(subject, ctx):
    """``zo_o2nc_tree_rho_squared`` (exact rule) against the linear algebra, random s_q and non-constant σ_b."""
    gen = ctx.generator("cor4_4", "tree_rho")
    problems, count = [], 0
    for n in list(range(1, 18)) + [31, 32, 33]:
        for _ in range(ctx.budget.pick(quick=1, full=5)):
            s = gen.uniform(0.0, 2.0, n)
            stds = gen.uniform(0.3, 3.0, n)
            exact = float(np.max(_mahalanobis(s, stds)))
            got = float(subject.zo_o2nc_tree_rho_squared(s, stds, rule="exact"))
            count += 1
            if not abs(got - exact) <= PRIVACY_SLACK * exact:
                problems.append(f"zo_o2nc_tree_rho_squared = {got!r} ≠ max_q s_q²(Pe_q)ᵀ(RΣRᵀ)⁻¹(Pe_q) = {exact!r} "
                                f"at n = {n}")
    return problems, count


# --- (C): the realised sensitivity on worst-case neighbouring data sets -----------------------------------------------

#: (label, d, L, T, B1, B2, δ, ρ, records to negate (0-based indices: block 1 of epoch 1, a DIFF block, epoch 2))
PAIRS = (
    ("d = 1, T = 4, B1 = 2", 1, 1.0, 4, 2, 1, 0.4, 1.0, (0, 3, 6)),
    ("d = 3, T = 5, B1 = 3, B2 = 2", 3, 2.0, 5, 3, 2, 0.5, 1.0, (1, 6, 14)),
)


def _pair_problems(subject, ctx):
    problems, ratios = [], []
    for label, d, L, T, B1, B2, delta, rho, flips in PAIRS:
        gen = ctx.generator("cor4_4", "pair", label)
        K = 2
        e = np.eye(d)[d - 1]
        data = np.tile(L * e, (K * (B1 + B2 * (T - 1)), 1))
        common = dict(T=T, K=K, B1=B1, B2=B2, smoothing_radius=delta, step_size=0.05, rho=rho, lipschitz=L,
                      dp_delta=DP_DELTA, noise_seed=int(gen.integers(2**62)) + 2**62, seed=int(gen.integers(2**62)))
        base = subject.zo_o2nc(LinearLoss(), data, np.full(d, 0.1), **common)
        plan = base.ledger.plan
        declared = (float(plan.sensitivities[0]), float(plan.sensitivities[1]))
        own = _leaf_sensitivities(d, L, T, B1, B2, delta, delta / T)
        released = np.asarray(base.releases, dtype=np.float64)
        for j in flips:
            neighbour = data.copy()
            neighbour[j] = -neighbour[j]
            other = np.asarray(subject.zo_o2nc(LinearLoss(), neighbour, np.full(d, 0.1), **common).releases,
                               dtype=np.float64)
            moved = np.linalg.norm(released - other, axis=2)
            changed = np.argwhere(~(moved == 0.0))  # NaN counts as changed
            if changed.size == 0:
                problems.append(f"{label}: negating record {j} changed no release")
                continue
            k, t = (int(v) for v in changed[0])
            leaf = 0 if t == 0 else 1
            ratio = float(moved[k, t]) / declared[leaf]
            ratios.append((label, j, k + 1, t + 1, ratio, float(moved[k, t]) / own[t]))
            if not ratio <= 1 + PRIVACY_SLACK:
                problems.append(f"{label}: negating record {j} moves release (k={k + 1}, t={t + 1}) by "
                                f"{moved[k, t]!r} > the ledger's leaf sensitivity {declared[leaf]!r}")
            if not declared[leaf] >= own[t] * (1 - PRIVACY_SLACK):
                problems.append(f"{label}: the ledger's leaf sensitivity {declared[leaf]!r} < Lemma 3.1/3.2's "
                                f"{own[t]!r} at t = {t + 1}")
    return problems, ratios


def _check_privacy(subject, ctx):
    problems, rows = [], []
    for config in CONFIGS:
        result, _, _ = _config_run(subject, ctx, config, zero_loss=False)
        found, row = _ledger_problems(config, result)
        problems += found
        if row:
            rows.append((config[0], row))
        zero, noise_seed, K = _config_run(subject, ctx, config, zero_loss=True)
        problems += _noise_problems(config, zero, noise_seed, K)
    rho_problems, count = _rho_function_problems(subject, ctx)
    problems += rho_problems
    pair_problems, ratios = _pair_problems(subject, ctx)
    problems += pair_problems
    tight = max((r[4] for r in ratios if r[3] == 1 and r[0].startswith("d = 1")), default=math.nan)
    worst = max((r["mu"] / r["rho"] for _, r in rows if r["rho"]), default=math.nan)
    return deterministic(
        not problems, statistic=worst, bound=1.0, counterexample=problems[:3] or None,
        detail=("(A) exact μ/ρ_target per run: " + ", ".join(
            f"{label}: μ = {r['mu']:.5g}" + (f" (ρ = {r['rho']:g})" if r["rho"] else "")
            + f", claimed ε/exact ε = {r['ratio']:.4f}" for label, r in rows)
            + f"; zo_o2nc_tree_rho_squared vs linear algebra on {count} cases; (B) the noise of {len(CONFIGS)} "
              f"zero-loss runs regenerated from the declared key; (C) realised/declared leaf sensitivity on "
              f"worst-case pairs: max {max((r[4] for r in ratios), default=math.nan):.6g} (GRAD leaf at d = 1: "
              f"{tight:.15g})"
            + (f"; violations: {'; '.join(problems[:3])}" if problems else "")))


# --- mutants ---------------------------------------------------------------------------------------------------------

def _plan_with_half_s1(call):
    """σ calibrated, and the ledger written, with s_1 = dL/B1 (the replace-one factor 2 of Lemma 3.1 forgotten)."""
    d, L, T, B1 = len(call.x1), float(call.lipschitz), int(call.T), int(call.B1)
    B2 = 1 if call.B2 is None else int(call.B2)
    delta = float(call.smoothing_radius)
    D = delta / T if call.step_bound is None else float(call.step_bound)
    s1, s2 = d * L / B1, 2 * d * L * 2 * D / (B2 * delta)
    depth = T.bit_length()
    unit = max(s1**2 * depth, s2**2 * (depth - 1) if T >= 2 else 0.0)  # ρ² at σ = 1, exact counts
    if call.rho is not None:
        sigma = math.sqrt(unit) / float(call.rho)
        result = call.original(rho=None, noise_std=sigma)
    else:
        sigma = float(call.noise_std)
        result = call.original()
    rho = math.sqrt(unit) / sigma
    eps = float(epsilon_from_zcdp(mpmath.mpf(rho) ** 2 / 2, call.dp_delta))
    plan = dataclasses.replace(result.ledger.plan, sensitivities=(s1, s2), rho_target=call.rho, rho_exact=rho,
                               epsilon_tight=eps, epsilon_claimed=eps)
    return dataclasses.replace(result, ledger=dataclasses.replace(result.ledger, plan=plan))


def _noise_smaller(call):
    """The run adds 0.95σ while its ledger states σ."""
    honest = call.original()
    quieter = call.original(rho=None, noise_std=0.95 * float(honest.ledger.plan.noise_std))
    return dataclasses.replace(quieter, ledger=honest.ledger)


def _one_node_per_leaf(call):
    s = np.asarray(call.sensitivities, dtype=np.float64)
    stds = np.asarray(call.noise_stds, dtype=np.float64)
    return float(np.max(s * s / (stds * stds)))


ORACLE_PRIVACY_EXACT = Claim(
    id="zo_o2nc.cor4_4.oracle_privacy_exact",
    paper="zo_o2nc",
    location="Corollary 4.4; Theorem 4.3; Lemma C.1; Lemmas 3.1, 3.2 (sensitivities); zo_o2nc.E3, zo_o2nc.E15",
    statement=(
        "A run of Algorithm 3 + Algorithm 4 releases, per epoch, the tree prefix sums of leaves with replace-one "
        "sensitivities s_1 = 2dL/B1 and s_t = 2dL·2D/(B2δ): a Gaussian mechanism with Mahalanobis sensitivity "
        "μ = max_q s_q·√((Pe_q)ᵀ(RΣRᵀ)⁻¹(Pe_q)). The ε its ledger claims is never below the exact ε_GDP(μ, δ), its ρ "
        "never below μ, and σ calibrated to ρ gives μ ≤ ρ (including T ∈ {2, 4} with s_1 = s_2, where the printed "
        "2 ln T count does not, zo_o2nc.E3); the noise it adds is the ledger's σ on the declared noise draws; and on "
        "worst-case neighbours (f = ±L<e, x>, shared directions) no release moves by more than the ledger's leaf "
        "sensitivity, which the GRAD leaf attains at d = 1."
    ),
    kind="privacy",
    requires=("zo_o2nc", "zo_o2nc_tree_rho_squared"),
    check=_check_privacy,
    mutants=(
        substitute("plan_s1_dL_over_B1", "σ and the ledger computed with s_1 = dL/B1 (Lemma 3.1's replace-one factor 2 "
                   "forgotten)", "zo_o2nc", _plan_with_half_s1),
        rebind("paper_count_rule", "σ from Corollary 4.4's printed 2 ln T count (count_rule='paper_2lnT')", "zo_o2nc",
               count_rule="paper_2lnT"),
        substitute("noise_smaller_than_stated", "the run adds 0.95σ while its ledger states σ", "zo_o2nc",
                   _noise_smaller),
        substitute("tree_rho_one_node", "zo_o2nc_tree_rho_squared counts one node per leaf (no composition over the "
                   "nodes a record enters)", "zo_o2nc_tree_rho_squared", _one_node_per_leaf),
        substitute("differences_doubled", "every finite difference twice too large (1/δ instead of 1/(2δ) in GRAD, "
                   "2d/δ in DIFF): the realised sensitivity doubles while the ledger's does not", "zo_o2nc",
                   lambda call: call.original(loss=_doubled(call.loss))),
    ),
)


def _doubled(loss):
    def doubled(x, z):
        return 2.0 * loss(x, z)
    return doubled
