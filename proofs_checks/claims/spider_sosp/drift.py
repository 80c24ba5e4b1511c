"""spider_sosp Algorithm 2 (the drift rule, lines 4 and 15), Lemma 3.8 (the adaptive batch rule) and what Lemmas 3.6-3.8
rest on: between two O1 queries the releases add up to less than κ, every O2 batch is at least coef_bt·‖g̃_{t−1}‖, so
the chain's variance proxy stays below V̄ = G²/b + κ/coef_bt and every O2 step's per-record sensitivity ‖g̃_{t−1}‖/b_t
below 1/coef_bt (the a-priori bound the tree noise is calibrated to); and erratum spider_sosp.E13 (line 10 also resets
the drift at a perturbation step, which breaks exactly this).

Everything here is exact (integer batch sizes, inequalities between float64 sums of a few hundred norms), checked on
every step of whole runs of the subject's ``stochastic_spider`` on the cosine and quadratic families, with its
configuration from ``reference.algorithms.spider_sosp_theory.spider_settings``:

* line 4: step 0 is an O1 query (drift_0 = κ), and step t is an O1 query iff drift_t ≥ κ, drift_t = Σ‖g̃_i‖ over the
  steps since the last O1 query (recomputed here from the released g̃);
* the drift bound: at every O2 step, Σ_{i=τ}^{t−1} ‖g̃_i‖ < κ, τ the last O1 step;
* Lemma 3.8 (index t − 1, spider_sosp.E2): b_t = max(⌈‖g̃_{t−1}‖√d/(αε)⌉, ⌈κ‖g̃_{t−1}‖/α²⌉, 1), so
  b_t ≥ coef_bt‖g̃_{t−1}‖ with coef_bt = max(√d/(αε), κ/α²), and O1 batches are b;
* Lemma 3.6 made explicit: V_t = G²/b + Σ_{O2 steps i of the segment} ‖g̃_{i−1}‖²/b_i ≤ G²/b + κ/coef_bt = V̄;
* the data: disjoint batches of the announced sizes, Σ b = records used ≤ n.

Tolerances: drift is a float64 sum of at most a few hundred norms, so the test "drift_t ≥ κ" is skipped where
|drift_t − κ| ≤ 1e-12 κ (a rounding tie between two summation orders; never met in these runs), and a batch size is
accepted when it is the exact ceiling at ‖g̃_{t−1}‖(1 ± 4u) (the norm's rounding).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from proofs_checks.authoring import Claim, deterministic, erratum_evidence, rebind, substitute

from ._problems import COS2, COS3, exact_batch, exact_o1_batch, run, settings

#: Relative rounding allowance of a sum of a few hundred float64 norms (module docstring).
SUM_ROUNDING = 1e-12
NORM_ROUNDING = 4 * 2.0**-53

#: (family, records, ε, tree scope, σ multiplier): private runs with one tree and a tree per segment, a small ε, and
#: σ = 0 on three coordinates.
RUNS = (
    (COS2, 3000, 4.0, "global", 1.0),
    (COS2, 3000, 1.0, "segment", 1.0),
    (COS3, 4000, 4.0, "global", 0.0),
    (COS2, 3000, 4.0, "segment", 1.0),
)


def _norms(released) -> list[float]:
    return [math.sqrt(math.fsum(float(v) ** 2 for v in row)) for row in np.asarray(released, dtype=np.float64)]


def _segments(trace, norms, kappa):
    """For each step: (Σ‖g̃_i‖ since the last O1 step, before t; the drift since the last reset of the trace's kind)."""
    chain = []
    total = 0.0
    for t, kind in enumerate(trace.kinds):
        if kind == "O1":
            total = 0.0
        chain.append(total)
        total += norms[t]
    return chain


def _run_problems(result, s, family, n, *, reset_drift=False) -> list[str]:
    """Every violation of the module's rules in one run (empty when it follows them)."""
    trace, config = result.trace, result.config
    kinds, sizes = list(trace.kinds), [int(v) for v in np.asarray(trace.batch_sizes)]
    norms = _norms(trace.released)
    steps = len(kinds)
    kappa, alpha, eps, d = s.kappa, s.alpha, s.epsilon, s.d
    coefficient = s.batch_coefficient
    vbar = family.lipschitz**2 / s.batch_size + kappa / coefficient
    problems = []
    if steps < 2:
        return [f"the run took {steps} steps"]
    if kinds[0] != "O1":
        problems.append("step 0 is not an O1 query")
    chain = _segments(trace, norms, kappa)
    drift, variance, perturbations = kappa, 0.0, set(trace.perturbation_steps)
    for t in range(steps):
        if abs(drift - kappa) > SUM_ROUNDING * kappa and (kinds[t] == "O1") != (drift >= kappa):
            problems.append(f"t = {t}: {kinds[t]} with drift {drift:.17g} and κ = {kappa:.17g}")
        if kinds[t] == "O1":
            variance = family.lipschitz**2 / s.batch_size
            if sizes[t] != s.batch_size:
                problems.append(f"t = {t}: O1 batch {sizes[t]} != b = {s.batch_size}")
            drift = 0.0
        else:
            v = norms[t - 1]
            allowed = {exact_batch(v * (1 + e), alpha, eps, d, kappa) for e in (-NORM_ROUNDING, 0.0, NORM_ROUNDING)}
            if sizes[t] not in allowed:
                problems.append(f"t = {t}: O2 batch {sizes[t]}, Lemma 3.8 with ‖g̃_(t−1)‖ = {v:.17g} gives "
                                f"{sorted(allowed)}")
            if not chain[t] < kappa * (1 + SUM_ROUNDING):
                problems.append(f"t = {t}: O2 step after Σ‖g̃‖ = {chain[t]:.6g} >= κ = {kappa:.6g} since the last O1 "
                                "query")
            variance += v * v / sizes[t]
            if not variance <= vbar * (1 + SUM_ROUNDING):
                problems.append(f"t = {t}: V_t = {variance:.6g} > V̄ = G²/b + κ/coef_bt = {vbar:.6g}")
            if not v / sizes[t] <= (1 + NORM_ROUNDING) / coefficient:
                problems.append(f"t = {t}: per-record sensitivity ‖g̃_(t−1)‖/b_t = {v / sizes[t]:.6g} > 1/coef_bt")
        if reset_drift and t in perturbations:
            drift = 0.0
        drift += norms[t]
    used = np.concatenate([np.asarray(i) for i in trace.batch_indices]) if trace.batch_indices else np.array([])
    if [len(i) for i in trace.batch_indices] != sizes or len(np.unique(used)) != len(used) \
            or int(trace.records_used) != sum(sizes) or sum(sizes) > n:
        problems.append("the batches are not disjoint batches of the announced sizes within the n records")
    if config.kappa != s.kappa or config.batch_size != s.batch_size:
        problems.append("the run's config is not the one it was given")
    return problems


def _runs(subject, ctx, label, count, *, reset_drift=False, configurations=RUNS):
    """[(problems, run label, result)] over ``count`` runs of each configuration."""
    gen = ctx.generator("runs", label)
    out = []
    for family, n, eps, scope, noise in configurations:
        x0 = np.zeros(family.d)
        s, sigma = settings(family, x0, n, eps, tree_scope=scope)
        config = dataclasses.replace(s.config(reset_drift_on_perturb=reset_drift), noise_std=noise * sigma)
        for _ in range(count):
            result = run(subject, family, family.sample(gen, n), x0, config, gen)
            out.append((_run_problems(result, s, family, n, reset_drift=reset_drift),
                        f"d = {family.d}, n = {n}, ε = {eps}, {scope} tree, σ = {noise * sigma:.3g}", result))
    return out


def _check_drift(subject, ctx):
    runs = _runs(subject, ctx, "drift", ctx.budget.pick(quick=1, full=10))
    steps = sum(len(r.trace.kinds) for _, _, r in runs)
    for problems, label, _ in runs:
        if problems:
            return deterministic(False, detail=f"{label}: " + "; ".join(problems[:4]), counterexample=problems[:10])
    return deterministic(True, statistic=steps, detail=f"{len(runs)} runs, {steps} steps: O1 exactly when the drift "
                                                       "reaches κ, Σ‖g̃‖ < κ between O1 queries, b_t = Lemma 3.8's "
                                                       "ceiling at ‖g̃_(t−1)‖ (>= coef_bt‖g̃_(t−1)‖), V_t <= V̄")


def _kappa_privacy_term(config):
    """κ = α√d/ε, the privacy term of Lemma 3.10's max alone."""
    return dataclasses.replace(config, kappa=config.alpha * math.sqrt(config.d) / config.epsilon)


DRIFT_BOUND = Claim(
    id="spider_sosp.alg2.drift_bound",
    paper="spider_sosp",
    location="Algorithm 2, lines 4-7 and 15 (drift); Lemma 3.8 (b_t, with ‖g̃_(t−1)‖: spider_sosp.E2); Lemmas 3.6 "
             "and 3.9",
    statement=(
        "In every run of Algorithm 2 (drift not reset at perturbations): step 0 and exactly the steps with drift_t >= "
        "κ are O1 queries; between two O1 queries the releases add up to Σ‖g̃_i‖ < κ; every O2 batch is b_t = "
        "max(⌈‖g̃_(t−1)‖√d/(αε)⌉, ⌈κ‖g̃_(t−1)‖/α²⌉, 1) >= coef_bt‖g̃_(t−1)‖, so the per-record sensitivity "
        "‖g̃_(t−1)‖/b_t is at most 1/coef_bt and V_t = G²/b + Σ_segment ‖g̃_(i−1)‖²/b_i <= G²/b + κ/coef_bt; batches "
        "are disjoint and of the announced sizes."
    ),
    kind="deterministic",
    requires=("stochastic_spider",),
    check=_check_drift,
    mutants=(
        rebind("drift_reset_at_perturbation", "the run also resets the drift at perturbation steps (line 10 read "
               "literally, spider_sosp.E13)", "stochastic_spider",
               config=lambda c: dataclasses.replace(c, reset_drift_on_perturb=True)),
        rebind("kappa_privacy_term_only", "κ = α√d/ε, the first term of Lemma 3.10's max alone (drift threshold and "
               "b_t)", "stochastic_spider", config=_kappa_privacy_term),
    ),
)


# --- erratum spider_sosp.E13: line 10's drift reset breaks the drift bound ---------------------------------------

#: The private runs with one tree and σ = 0 on three coordinates: perturbations are frequent (unit mode, Γ = 2-3).
RESET_RUNS = (RUNS[0], RUNS[2])

def _check_reset(subject, ctx):
    count = ctx.budget.pick(quick=1, full=5)
    literal = _runs(subject, ctx, "reset", count, reset_drift=True, configurations=RESET_RUNS)
    corrected = _runs(subject, ctx, "no_reset", count, configurations=RESET_RUNS)
    broken = [(label, problems) for problems, label, _ in literal
              if any("since the last O1" in p or "V_t" in p for p in problems)]
    other = [(label, p) for problems, label, _ in literal for p in problems
             if not ("since the last O1" in p or "V_t" in p)]
    wrong = [(label, problems) for problems, label, _ in corrected if problems]
    worst = 0.0
    for _, _, result in literal:
        norms = _norms(result.trace.released)
        chain = _segments(result.trace, norms, result.config.kappa)
        worst = max([worst] + [chain[t] / result.config.kappa for t, k in enumerate(result.trace.kinds) if k == "O2"])
    return erratum_evidence(
        printed_fails=bool(broken) and not other,
        corrected_holds=not wrong,
        statistic=worst, bound=1.0,
        detail=(f"line 10 read literally (drift reset at perturbations): {len(broken)} of {len(literal)} runs have an "
                f"O2 step after Σ‖g̃‖ >= κ since the last O1 query (largest Σ/κ = {worst:.4g}), so V_t > V̄ and Lemma "
                f"3.8's accuracy does not follow"
                + (f"; other violations: {other[:3]}" if other else "")
                + (f"; without the reset: {wrong[0][0]}: {wrong[0][1][:3]}" if wrong else
                   f"; without the reset: all {len(corrected)} runs keep Σ‖g̃‖ < κ and V_t <= V̄")))


DRIFT_RESET = Claim(
    id="spider_sosp.alg2.drift_reset_at_perturbation",
    paper="spider_sosp",
    location="Algorithm 2, line 10 (drift_t = 0 at a perturbation step); Lemma 3.6 (τ_t, the last drift reset, "
             "treated as an O1 query) and Lemma 3.8; spider_sosp.E13",
    statement=(
        "Printed: line 10 sets drift_t = 0 at a perturbation step, and Lemma 3.6 bounds the chain's error from the "
        "last step whose drift was set to 0 as if an O1 query had been made there. False: no O1 query is made, the "
        "SPIDER chain continues, and its releases since the last O1 query add up past κ (observed up to several κ), "
        "so V_t exceeds G²/b + κ/coef_bt and Lemma 3.8's accuracy does not follow. Corrected: reset the drift at O1 "
        "queries only (τ_t = the last O1 step); then Σ‖g̃‖ < κ between O1 queries and V_t <= V̄ in every run."
    ),
    kind="deterministic",
    requires=("stochastic_spider",),
    check=_check_reset,
    mutants=(
        rebind("reset_flag_ignored", "the run ignores reset_drift_on_perturb (never resets at perturbations)",
               "stochastic_spider", config=lambda c: dataclasses.replace(c, reset_drift_on_perturb=False)),
        rebind("kappa_privacy_term_only", "κ = α√d/ε, the first term of Lemma 3.10's max alone", "stochastic_spider",
               config=_kappa_privacy_term),
    ),
    erratum=True,
)


# --- Lemma 3.8: the batch sizes b and b_t as functions, exact ceilings --------------------------------------------

#: (v, α, ε, d, κ) on exact boundaries of the float inputs: κv/α² = 3 exactly; v√d/(αε) = 3 exactly; ⌈√2⌉ = 2; and
#: κ·v with v = float(0.1) (just above 1/10) and κ = 10: the exact product exceeds 1, the float product rounds to 1.
BOUNDARY = ((0.75, 0.5, math.inf, 4, 1.0), (0.75, 0.5, 1.0, 4, 0.1), (1.0, 1.0, 1.0, 2, 1e-9),
            (0.1, 1.0, math.inf, 3, 10.0), (0.0, 0.3, 2.0, 5, 1.0), (1e-300, 1.0, 1.0, 1, 1.0))
#: Privacy fixture 1 (G, M, ρ, B, d, n, ε) = (1, 1, 1, 1, 10, 1e6, 1): b = 1788, b_t(0) = 1, b_t(1e-4) = 1,
#: b_t(0.01) = 17, b_t(0.5) = 830 (with Lemma 3.10's α and κ).
FIXTURE = {"b": 1788, "bt": {0.0: 1, 1e-4: 1, 0.01: 17, 0.5: 830}}


def _alpha_fixture():
    d, n, eps = 10, 10**6, 1.0
    return 2 * math.sqrt(math.sqrt(d) / (n * eps)) + 2 / n ** (1 / 3) + math.sqrt(1 / n)


def _check_batch_sizes(subject, ctx):
    problems = []
    for v, alpha, eps, d, kappa in BOUNDARY:
        got, want = subject.adaptive_batch_size(v, alpha, eps, d, kappa), exact_batch(v, alpha, eps, d, kappa)
        if got != want:
            problems.append(f"b_t({v!r}, α={alpha!r}, ε={eps!r}, d={d}, κ={kappa!r}) = {got!r}, exact {want}")
    gen = ctx.generator("batch_sizes")
    for _ in range(ctx.budget.pick(quick=400, full=4000)):
        alpha, eps = float(gen.uniform(0.01, 2.0)), float(gen.choice([gen.uniform(0.05, 20.0), math.inf]))
        d, kappa = int(gen.integers(1, 200)), float(gen.uniform(0.01, 20.0))
        lo, hi = sorted(float(v) for v in gen.uniform(0.0, 10.0, 2))
        a, c = subject.adaptive_batch_size(lo, alpha, eps, d, kappa), subject.adaptive_batch_size(hi, alpha, eps, d,
                                                                                                   kappa)
        if not (isinstance(a, (int, np.integer)) and a == exact_batch(lo, alpha, eps, d, kappa) and a <= c):
            problems.append(f"b_t({lo!r}, α={alpha!r}, ε={eps!r}, d={d}, κ={kappa!r}) = {a!r}, exact "
                            f"{exact_batch(lo, alpha, eps, d, kappa)} (and b_t({hi!r}) = {c!r})")
        G = float(gen.uniform(0.1, 5.0))
        b = subject.o1_batch_size(G, d, eps, alpha)
        if b != exact_o1_batch(G, d, eps, alpha):
            problems.append(f"b(G={G!r}, d={d}, ε={eps!r}, α={alpha!r}) = {b!r}, exact "
                            f"{exact_o1_batch(G, d, eps, alpha)}")
        if len(problems) > 5:
            break
    alpha = _alpha_fixture()
    kappa = max(alpha * math.sqrt(10) / 1.0, 1.0)
    if subject.o1_batch_size(1.0, 10, 1.0, alpha) != FIXTURE["b"]:
        problems.append(f"fixture 1: b = {subject.o1_batch_size(1.0, 10, 1.0, alpha)}, expected 1788")
    for v, want in FIXTURE["bt"].items():
        if subject.adaptive_batch_size(v, alpha, 1.0, 10, kappa) != want:
            problems.append(f"fixture 1: b_t({v}) = {subject.adaptive_batch_size(v, alpha, 1.0, 10, kappa)}, "
                            f"expected {want}")
    return deterministic(not problems, statistic=len(problems), bound=0,
                         detail="; ".join(problems[:4]) if problems else
                         "b_t and b are the exact ceilings of Lemma 3.8's formulas for the float inputs (boundary "
                         "cases included), b_t >= 1 and non-decreasing in ‖g̃_(t−1)‖; fixture 1: b = 1788, "
                         "b_t(0.01) = 17, b_t(0.5) = 830")


def _float_ceilings(call):
    v, alpha, eps, d, kappa = (call.previous_release_norm, call.alpha, call.epsilon, call.d, call.kappa)
    privacy = 0 if math.isinf(eps) else math.ceil(v * math.sqrt(d) / (alpha * eps))
    return max(privacy, math.ceil(kappa * v / alpha**2), 1)


BATCH_SIZES = Claim(
    id="spider_sosp.lemma3_8.batch_sizes",
    paper="spider_sosp",
    location="Lemma 3.8 (b and b_t); Theorem 3.11 (b printed as G(√d/(εα) + 1/α²): spider_sosp.E9); spider_sosp.E2",
    statement=(
        "b = ⌈G√d/(εα) + G²/α²⌉ and b_t = max(⌈v√d/(αε)⌉, ⌈κv/α²⌉, 1) with v = ‖g̃_(t−1)‖, exactly for the float "
        "inputs (so b_t >= coef_bt·v always holds), b_t >= 1 and non-decreasing in v; ε = inf drops the privacy "
        "terms. Fixture (G, M, B, d, n, ε) = (1, 1, 1, 10, 1e6, 1): b = 1788, b_t(0.01) = 17, b_t(0.5) = 830."
    ),
    kind="deterministic",
    requires=("adaptive_batch_size", "o1_batch_size"),
    check=_check_batch_sizes,
    mutants=(
        substitute("float_ceilings", "b_t from math.ceil of the float expressions (off by one where rounding lands "
                   "on an integer)", "adaptive_batch_size", _float_ceilings),
        substitute("no_floor_of_one", "b_t without the 1 in the max (an empty batch after a zero release)",
                   "adaptive_batch_size", lambda call: max(0, call.original() if call.previous_release_norm else 0)),
        substitute("theorem_3_11_b", "b = ⌈G(√d/(εα) + 1/α²)⌉ as Theorem 3.11 prints it", "o1_batch_size",
                   lambda call: math.ceil(call.lipschitz * ((0 if math.isinf(call.epsilon) else
                                                             math.sqrt(call.d) / (call.epsilon * call.alpha))
                                                            + 1 / call.alpha**2))),
    ),
)
