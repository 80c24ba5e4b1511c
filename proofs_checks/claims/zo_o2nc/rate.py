"""zo_o2nc Theorem 4.9: the rate of Algorithm 3 + projected OSD + Algorithm 4 with the theorem's settings, and the
choice of T that the rate needs (erratum zo_o2nc.E5).

What can be shown at CPU scale, and what cannot. Theorem 4.9 bounds E‖∇F(w̄)‖_{2δ} (zo_o2nc.E7) by
((F*+Lδ)dL²/(δM))^{1/3} + ((F*+Lδ)d^{3/2}L/(ρδM))^{1/2} up to constants and logarithms. The explicit bound the proof
gives (``reference.algorithms.zo_o2nc_theory.thm49_bound``) exceeds L — vacuous — below M ≈ 10⁶ even at d = 2,
and a run of the reference costs about 1 ms per round (M/2 rounds), so the bound itself cannot be compared with
a run here. ``THEOREM_RATE`` shows the effect the theorem predicts instead: on a fixed nonsmooth problem (d = 1,
a population of |.| ridges, x_1 away from the minimisers, δ = 0.1, ρ = 1, Theorem 4.9's settings with T = max(T1,
T2)), the quantity the proof bounds, P(M) = (1/K)Σ_k ‖(1/T)Σ_t ∇F̂_δ(w_t^k)‖ (≥ E_{k*}‖∇F(w̄^{k*})‖_{2δ} since every
w_t^k lies within δ of w̄^k), decreases in M at least as fast as M^{−1/4}: a one-sided paired t-test over R
replicates of the fitted log–log slope, H0: slope ≥ −1/4, at level ``DEMONSTRATION_LEVEL`` (the effect is in the
alternative, so a pass demonstrates it; the evidence carries no p-value for the runner's Holm correction). The
measured slope, ≈ −0.45, is steeper than the theorem's −1/3 because at these M the initial-gap term
(F* + 2Lδ)/(δK) of the bound — travelling to the minimisers — dominates the proxy. It also checks P(M) ≤ the
explicit bound (vacuous here, said in the evidence).

``T_RULE`` (erratum zo_o2nc.E5) is a computation: with T = max(T1, T2) the explicit bound stays within a constant
(with logarithms) of the claimed rate for every ρ, while with the printed T = min(T1, T2) it does not.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

from proofs_checks.authoring import FAIL, PASS, POWER, Claim, Evidence, erratum_evidence, on_output, rebind, substitute
from reference.algorithms.zo_o2nc_theory import thm49_bound, thm49_settings
from reference.objectives import RidgeSum

from ._runs import RidgeLoss, path, sample_rows

#: The probability that a subject whose proxy does not decrease like M^{−1/4} passes.
DEMONSTRATION_LEVEL = 1e-3
#: The slope the demonstration shows: P(M) decreases at least like M^{−SLOPE}.
SLOPE = 0.25
RATE = {"d": 1, "delta": 0.1, "rho": 1.0, "lipschitz": 1.0, "x1": 0.6, "dp_delta": 1e-5}
QUICK = {"sizes": (200, 1600), "replicates": 4}
FULL = {"sizes": (200, 1600, 12800), "replicates": 6}


def _problem(ctx):
    gen = ctx.generator("thm4_9", "problem")
    d = RATE["d"]
    population = RidgeSum.random(d, 50, gen, lipschitz=RATE["lipschitz"], profile="abs", offset_scale=0.3)
    x1 = np.full(d, RATE["x1"] / math.sqrt(d))
    return population, x1, float(population.empirical_loss(x1))


def _proxy(subject, ctx, population, x1, gap, M, replicate):
    """P(M) of one run with Theorem 4.9's settings, and the settings."""
    c = RATE
    s = thm49_settings(M, c["d"], c["lipschitz"], c["delta"], c["rho"], gap)
    gen = ctx.generator("thm4_9", "run", M, replicate)
    data = sample_rows(population.data, M, gen)
    result = subject.zo_o2nc(RidgeLoss(c["d"], c["lipschitz"], "abs"), data, x1, T=s.T, K=s.K, B1=s.B1, B2=s.B2,
                             smoothing_radius=c["delta"], step_bound=float(s.step_bound), step_size=float(s.step_size),
                             rho=c["rho"], lipschitz=c["lipschitz"], dp_delta=c["dp_delta"],
                             noise_seed=int(gen.integers(2**62)) + 2**62, seed=int(gen.integers(2**62)),
                             record_path=True)
    a = path(result, s.K, s.T, c["d"], fields=("query_points",))
    if not isinstance(a, dict):
        return a, s
    w = a["query_points"].reshape(-1, c["d"])
    gradients = np.mean(population.smoothed_gradient(w[:, None, :], population.data[None], c["delta"]), axis=1)
    per_epoch = np.linalg.norm(gradients.reshape(s.K, s.T, c["d"]).mean(axis=1), axis=1)
    return float(np.mean(per_epoch)), s


def _check_rate(subject, ctx):
    population, x1, gap = _problem(ctx)
    budget = ctx.budget.pick(quick=QUICK, full=FULL)
    sizes, R = budget["sizes"], budget["replicates"]
    proxies = np.empty((R, len(sizes)))
    bounds = []
    for j, M in enumerate(sizes):
        for r in range(R):
            value, settings = _proxy(subject, ctx, population, x1, gap, M, r)
            if not isinstance(value, float):
                return value
            proxies[r, j] = value
        bounds.append((M, settings.T, settings.K, float(thm49_bound(settings))))
    if not np.all(np.isfinite(proxies)) or np.any(proxies <= 0):
        return Evidence(FAIL, detail=f"a proxy is not a finite positive number: {proxies.tolist()}")
    logs = np.log(np.asarray(sizes, dtype=np.float64))
    centred = logs - logs.mean()
    slopes = np.log(proxies) @ centred / (centred @ centred)  # one fitted slope per replicate
    excess = slopes + SLOPE  # < 0 under the claimed effect
    se = float(np.std(excess, ddof=1)) / math.sqrt(R)
    critical = float(sps.t.ppf(1 - DEMONSTRATION_LEVEL, R - 1))
    mean = float(np.mean(excess))
    p = float(sps.t.cdf(mean / se, R - 1)) if se > 0 else float(mean >= 0)
    shown = p < DEMONSTRATION_LEVEL
    detectable = SLOPE + (critical + float(sps.norm.ppf(POWER))) * se  # slopes steeper than −detectable: power 0.9
    above = [(M, T, K, b) for (M, T, K, b), j in zip(bounds, range(len(sizes))) if np.any(proxies[:, j] > b)]
    if above:
        return Evidence(FAIL, detail=f"the proxy exceeds Theorem 4.9's explicit bound at (M, T, K, bound) = {above}")
    detail = (f"d={RATE['d']}, δ={RATE['delta']}, ρ={RATE['rho']}, |.| ridges, x_1 = {RATE['x1']}, F* = {gap:.4g}, "
              f"Theorem 4.9's settings (T = max(T1, T2)): mean proxy P(M) = "
              + ", ".join(f"{np.mean(proxies[:, j]):.4g} (M={M}, T={T}, K={K})"
                          for j, (M, T, K, _) in enumerate(bounds))
              + f" over R={R} replicates; fitted log–log slope {np.mean(slopes):.4f} ± {se:.4f} (theorem: ≤ −1/3 "
                f"asymptotically); slope < −{SLOPE} shown at p = {p:.2g} (level {DEMONSTRATION_LEVEL:g}); the explicit "
                f"bound ({', '.join(f'{b:.3g}' for *_, b in bounds)}) is vacuous at these M (> L = 1)")
    return Evidence(PASS if shown else FAIL, statistic=float(np.mean(slopes)), bound=-SLOPE, p_value=None,
                    detail=detail + ("" if shown else ": decrease not shown"),
                    power=(f"a slope steeper than −{detectable:.3f} is shown with power {POWER}, a slope of −{SLOPE} "
                           f"or flatter with probability ≤ {DEMONSTRATION_LEVEL:g}"),
                    mde=detectable - SLOPE, relative_mde=(detectable - SLOPE) / SLOPE)


def _shrinking_radius(call):
    """The learner's radius δ/T·(2/T)^{0.4} instead of δ/T: the distance one epoch travels shrinks like T^{−0.4}."""
    T = int(call.T)
    bound = (float(call.smoothing_radius) / T if call.step_bound is None else float(call.step_bound))
    return call.original(step_bound=bound * (2.0 / T) ** 0.4)


THEOREM_RATE = Claim(
    id="zo_o2nc.thm4_9.rate",
    paper="zo_o2nc",
    location="Theorem 4.9 (rate); Corollary 4.7 and Lemma 4.6 (the proxy bounded); zo_o2nc.E7",
    statement=(
        "With Theorem 4.9's settings (ρ = 1, T = max(T1, T2)), the quantity the proof bounds, "
        "P(M) = (1/K)Σ_k ‖(1/T)Σ_t ∇F̂_δ(w_t^k)‖ ≥ E‖∇F(w̄)‖_{2δ}, decreases in the number of records M: on a "
        "d = 1 problem of |.| ridges, from M = 200 to 1600 (quick) or 12800 (full), its fitted log–log slope is "
        "below −1/4, shown at level 1e-3 (the theorem's rate is M^{−1/3} up to the privacy term)."
    ),
    kind="rate",
    requires=("zo_o2nc",),
    check=_check_rate,
    mutants=(
        rebind("frozen_learner", "OSD step size 1e-6 times the one it was given: the iterates do not move", "zo_o2nc",
               step_size=lambda eta: None if eta is None else 1e-6 * eta),
        substitute("radius_over_T_squared", "the learner's radius δ/T² instead of δ/T", "zo_o2nc",
                   lambda call: call.original(step_bound=(float(call.smoothing_radius) / int(call.T)
                                                          if call.step_bound is None else float(call.step_bound))
                                              / int(call.T))),
        # near miss: one epoch travels T^{−0.4} less; the measured slope is about −0.15 (quick and full), just short
        # of the −1/4 the claim shows
        substitute("radius_shrinking_with_T", "the learner's radius δ/T·(2/T)^0.4 instead of δ/T", "zo_o2nc",
                   _shrinking_radius),
    ),
    power_note=(
        "A demonstration, at level 1e-3 and without a p-value for the runner: it shows that the proxy the proof "
        "bounds decreases at least like M^{-1/4} on one small nonsmooth problem (d = 1, M ≤ 12800), which at these M "
        "is driven by the initial-gap term (F* + 2Lδ)/(δK) of the bound. It does not test the constants of "
        "Theorem 4.9 (its explicit bound is vacuous below M ≈ 10^6), the dimension dependence, or the privacy term "
        "(ρ = 1 at d = 1 makes it small). The relative MDE is the detectable excess slope over 1/4."
    ),
)


# --- zo_o2nc.E5: T = min{T1, T2} (printed) does not give the claimed rate; T = max{T1, T2} does ---------------------

#: The parameter family: M, d, L, δ, F* fixed, ρ spread over 24 orders of magnitude (T2/T1 from 1e−6 to 1e6).
FAMILY = {"M": 10**15, "lipschitz": 1.0, "delta": 0.1, "gap": 1.0}
FAMILY_RHOS = tuple(10.0**k for k in range(-12, 13, 2))


def _bound_at(subject, M, d, L, delta, gap, rho, rule):
    """Theorem 4.9's explicit bound at T chosen by ``rule``, with the subject's Corollary 4.4 σ (as printed), and the
    rate R = (a b²)^{1/3} + (a c)^{1/2}, a = (F*+Lδ)/(δM), b = L√d, c = L d^{3/2}/ρ."""
    scale = L * delta * M / (gap + L * delta)
    t1 = (math.sqrt(d) * scale) ** (2 / 3)
    t2 = math.sqrt(d**1.5 * scale / rho)
    T = max(2, math.floor(max(t1, t2) if rule == "max" else min(t1, t2)))
    K = M // (2 * T)
    sigma = float(subject.zo_o2nc_cor44_sigma(d, L, T, T + 1, 1, rho, count_rule="paper_2lnT"))
    V = 16 * d * L**2 / (T + 1) + 64 * d * L**2 / T  # Lemma 4.8 with B1 = T + 1, B2 = 1
    N = 2 * math.log(T) * d * sigma**2  # Corollary 4.5
    G = math.sqrt(3 * V + 3 * L**2 + 3 * N)
    bound = (gap + 2 * L * delta) / (delta * K) + G / math.sqrt(T) + 2 * (math.sqrt(V) + math.sqrt(N))
    a = (gap + L * delta) / (delta * M)
    rate = (a * d * L**2) ** (1 / 3) + math.sqrt(a * L * d**1.5 / rho)
    return bound, rate, T, t1, t2


def _rate_constant(T: int) -> float:
    """C(T) with bound ≤ C(T)·R whenever T = ⌊max(T1, T2)⌋ ≥ 2, K = ⌊M/(2T)⌋ ≥ 1 and σ is Corollary 4.4's.

    With T_r = max(T1, T2): ⌊T_r⌋ ≥ T_r/2, K ≥ M/(4T), aT1 = b/√T1 = (ab²)^{1/3}, aT2 = c/T2 = (ac)^{1/2}. Then the
    gap term ≤ 2(F*+Lδ)/(δK) ≤ 8aT ≤ 8R; V ≤ 80b²/T so 2√V ≤ 2√160 (ab²)^{1/3}; √N = 8 ln T·c/T ≤ 16 ln T (ac)^{1/2}
    (σ = 4√(2 ln T)dL/(Tρ)), so 2√N ≤ 32 ln T·R; G/√T ≤ √3(√V + L/√T + √N/√2) ≤ √3(√160 + √2)(ab²)^{1/3}
    + 8√6 ln T (ac)^{1/2}. In all: C(T) = 8 + 2√160 + √3·√160 + √6 + (32 + 8√6) ln T.
    """
    return 8 + 2 * math.sqrt(160) + math.sqrt(3) * math.sqrt(160) + math.sqrt(6) + (32 + 8 * math.sqrt(6)) * math.log(T)


def _check_t_rule(subject, ctx):
    M, L, delta, gap = FAMILY["M"], FAMILY["lipschitz"], FAMILY["delta"], FAMILY["gap"]
    worst_max, worst_min, where = 0.0, 0.0, ""
    for d in (1, 10):
        for rho in FAMILY_RHOS:
            bound, rate, T, t1, t2 = _bound_at(subject, M, d, L, delta, gap, rho, "max")
            worst_max = max(worst_max, bound / (_rate_constant(T) * rate))
            bound, rate, T, t1, t2 = _bound_at(subject, M, d, L, delta, gap, rho, "paper_min")
            ratio = bound / (_rate_constant(T) * rate)
            if ratio > worst_min:
                worst_min, where = ratio, f"d={d}, ρ={rho:g} (T2/T1 = {t2 / t1:.3g})"
    # printed: at the extremes of the family the bound exceeds C(T)·R by a factor ≥ 10 (it grows like T2/T1 or
    # √(T1/T2): unbounded); corrected: within C(T)·R everywhere
    return erratum_evidence(
        printed_fails=worst_min > 10.0, corrected_holds=worst_max <= 1.0 + 1e-9, statistic=worst_min, bound=1.0,
        detail=(f"Theorem 4.9's explicit bound / (C(T)·rate), C(T) = 57.7 + 51.6 ln T, over d ∈ {{1, 10}}, ρ from "
                f"1e-12 to 1e12 (M = 1e15, δ = 0.1, F* = 1): printed T = min(T1, T2): up to {worst_min:.4g} (at {where}); "
                f"T = max(T1, T2): at most {worst_max:.4g}"))


T_RULE = Claim(
    id="zo_o2nc.thm4_9.t_rule",
    paper="zo_o2nc",
    location="Theorem 4.9 (choice of T); Appendix E; zo_o2nc.E5",
    statement=(
        "Printed: T = min{T1, T2}, T1 = (√d·LδM/(F*+Lδ))^{2/3}, T2 = (d^{3/2}LδM/((F*+Lδ)ρ))^{1/2}, gives "
        "E‖∇F(w̄)‖_{2δ} ≲ ((F*+Lδ)dL²/(δM))^{1/3} + ((F*+Lδ)d^{3/2}L/(ρδM))^{1/2}. False: the theorem's explicit bound "
        "(gap, regret, variance and tree-noise terms, σ from Corollary 4.4) then exceeds the rate by a factor that "
        "grows like T2/T1 (or √(T1/T2)) — more than 10× the constant C(T) = 57.7 + 51.6 ln T at the ends of the "
        "family. Corrected: with T = max{T1, T2} the bound is at most C(T) times the rate for every ρ."
    ),
    kind="deterministic",
    requires=("zo_o2nc_cor44_sigma",),
    check=_check_t_rule,
    mutants=(
        on_output("sigma_without_1_over_T", "Corollary 4.4's σ without its factor 1/T", "zo_o2nc_cor44_sigma",
                  lambda sigma, call: float(sigma) * int(call.T)),
        on_output("sigma_over_rho_squared", "σ ∝ 1/ρ² instead of 1/ρ", "zo_o2nc_cor44_sigma",
                  lambda sigma, call: float(sigma) / float(call.rho)),
    ),
    erratum=True,
)
