"""dpzero §2 (Algorithms 1 and 2, DP-GD), §4 (Theorems 2 and 3: the privacy part, the one-step
inequalities (15) and (22), bound (7), the clipping-probability bound of App. E) and §5 (privacy
plans): claims about the algorithms as a subject runs them.

Every check calls the subject's ``dpzero`` / ``dpgd_zeroth_order`` / ``dpgd`` / ``privacy_plan`` /
``direction_for_step``; ground truth is computed here independently (Lemma 2.2's σ in mpmath, F and
∇F from ``reference.objectives`` / ``reference.objectives_dpzero``, full-batch zeroth-order GD by hand,
the dpzero.E13 "noise from the direction stream" prediction from ``reference.rng``). Problems are small
enough for the reference, which loops in Python; the subject is always called with integer seeds, one
run per call.

Mutants that break the inside of Algorithm 1 or 2 (its noise stream, its σ, the update's sign, the
direction's radius) cannot be made by wrapping a subject's function, so they are re-implementations
of the full-batch algorithm from reference pieces with exactly one bug (``_alg2_with_bug``,
``_alg1_with_bug``; without a bug they reproduce the reference bitwise). Mutants of the inputs (C) or
the output (τ, the Poisson normaliser) call the subject's function (``rebind``, ``on_output``).

Statistics. Exact statements (sensitivities, reductions) are deterministic with float64-rounding
tolerances stated where used. The noise law is a KS test, a χ² variance test and three exact
conditional-normal independence tests. The one-step inequalities and the utility bound are one-sided
Student-t tests of H0: E[X] ≤ RHS (reject when the lower confidence bound exceeds the RHS); their
samples are right-skewed (a χ² noise term), which makes the t statistic left-skewed, so this
direction of the test is conservative (simulated for the one-step configurations at N = 50 runs:
P(T > 3) = 4e-4 and 5e-5 for Alg 1 and Alg 2 at the boundary, against the nominal 2e-3; larger N
only brings T closer to Student t).
Clipping frequencies are tested with Azuma–Hoeffding on the per-step fractions (events of one step
share u_t, so a binomial count would not be valid).
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
from scipy import special
from scipy import stats as sps

from proofs_checks.authoring import (
    POWER,
    Claim,
    TestResult,
    combine,
    decide,
    deterministic,
    ks_test,
    on_output,
    rebind,
    substitute,
)
from reference.algorithms.dpzero import DPResult, Ledger, NonPrivateDiagnostics
from reference.algorithms.dpzero import privacy_plan as _reference_plan
from reference.algorithms.dpzero_theory import (
    clip_failure_bound,
    theorem3_bound,
    theorem3_bound_terms,
    theorem3_settings,
)
from reference.estimators import per_sample_finite_differences
from reference.mechanisms import clip_vector, clipped_mean
from reference.objectives import EffectiveRankQuadratic, Linear
from reference.objectives_dpzero import PseudoHuber, SubspaceLogistic
from reference.rng import Streams, sample_gaussian, sample_sphere
from reference.secrets import secret_seed

#: Relative tolerance of exact identities between two float64 runs (or a run and a hand computation)
#: of a few steps on O(1) data: each step's rounding is ~1e-15 relative; 1e-9 leaves a wide margin.
RUN_ROUNDING = 1e-9
#: The replaced record's loss slope: |a_j| = K·|<u, v>| >= C, so it is clipped to ±C in every step.
ADVERSARIAL_SCALE = 1e6


def _seeds(gen, count: int) -> list[int]:
    return [int(s) for s in gen.integers(0, 2**62, size=count)]


def _lemma22_sigma(clip, n, steps, epsilon, delta):
    """σ = 4C√(2T log(e + ε/δ))/(nε) (dpzero Alg 1/2 line 5, Lemma 2.2 with Δ = 2C/n), in mpmath."""
    c, e, dl = mpmath.mpf(clip), mpmath.mpf(epsilon), mpmath.mpf(delta)
    return 4 * c * mpmath.sqrt(2 * steps * mpmath.log(mpmath.e + e / dl)) / (n * e)


def _relative_gap(value, target) -> float:
    return float(abs(mpmath.mpf(value) - mpmath.mpf(target)) / abs(mpmath.mpf(target)))


def _update_residual(result, seed, step_size, direction_for_step, direction="sphere") -> float:
    """max_t ‖x_{t+1} − (x_t − α ŝ_t u_t)‖ / (‖x_t‖ + α|ŝ_t|‖u_t‖), u_t = direction_for_step(seed, t):
    the run used the public directions (Alg 2 line 7, the seed trick)."""
    x = np.asarray(result.trajectory, dtype=np.float64)
    s = np.asarray(result.releases, dtype=np.float64)
    worst = 0.0
    for t in range(len(s)):
        u = np.asarray(direction_for_step(seed, t, x.shape[1], direction), dtype=np.float64)
        step = step_size * s[t] * u
        scale = float(np.linalg.norm(x[t]) + np.linalg.norm(step)) or 1.0
        worst = max(worst, float(np.linalg.norm(x[t + 1] - (x[t] - step))) / scale)
    return worst


def _t_test_upper(samples, threshold: float, level: float, unit: str) -> TestResult:
    """One-sided Student t test of H0: E[X] <= threshold; statistic = sample mean; MDE from Student t."""
    x = np.asarray(samples, dtype=np.float64)
    n = x.size
    sd = float(np.std(x, ddof=1))
    mean = float(np.mean(x))
    if sd == 0.0:  # constant samples: the mean is E[X]
        p_value = 0.0 if mean > threshold else 1.0
    else:
        p_value = float(sps.t.sf((mean - threshold) / (sd / math.sqrt(n)), n - 1))
    mde = (sps.t.ppf(1 - level, n - 1) + sps.t.ppf(POWER, n - 1)) * sd / math.sqrt(n)
    return TestResult(statistic=mean, p_value=p_value, mde=float(mde), mde_unit=unit)


# --- Algorithms 1 and 2 with one bug: the mutants of their inside -----------------------------------------------

def _alg2_with_bug(bug: str):
    """A ``substitute`` implementation: full-batch Algorithm 2 with ``bug`` (other batchings: the original).

    bugs: "noise_from_direction" (dpzero.E13: z_t is the next normal of the direction generator of step t),
    "half_noise" (noise σ/2, the plan still says σ), "half_sensitivity" (plan with Δ = C/n and σ/2),
    "ascent" (x_{t+1} = x_t + α ŝ_t u_t), "vector_noise" (the DPGD-0th view of DPZero: g_i = a_i u_t
    clipped at C√d has sensitivity 2C√d/n, so its noise is N(0, dσ² I_d), added along all axes),
    "radius_d" (directions of norm d instead of √d, dpzero.E17), "raw_unscaled" (raw_difference mode
    releases f+ − f− scale, without the 1/(2λ)).
    """

    def dpzero(call):
        if call.batching != "full":
            return call.original()
        return _run_alg2(call.loss, call.data, call.x0, call.steps, call.step_size, call.perturbation,
                         call.clip_threshold, call.epsilon, call.delta, call.seed, call.noise_seed, call.direction,
                         call.clip_target, call.accountant, call.noise, call.record_trajectory, call.trace, bug)

    return dpzero


def _plan_with_bug(clip, n, steps, epsilon, delta, accountant, bug):
    plan = _reference_plan(clip_threshold=clip, n=n, steps=steps, epsilon=epsilon, delta=delta, accountant=accountant)
    if bug == "half_sensitivity":
        plan = dataclasses.replace(plan, sensitivity=plan.sensitivity / 2, noise_std=plan.noise_std / 2)
    return plan


def _direction(seed, t, d, direction):
    """The generator of step t and u_t drawn from it exactly as ``direction_for_step`` does."""
    rng = Streams(seed).generator("dpzero", "direction", t)
    if direction == "gaussian":
        return rng, sample_gaussian(rng, (), d)
    return rng, sample_sphere(rng, (), d, radius=math.sqrt(d))


def _secret_streams(seed, noise_seed, private):
    """The streams of the secret keys as the reference builds them: the secret seed's (``reference.secrets``:
    fresh entropy for None, refused when equal to the public seed), or the public seed's for a run without
    noise and without a noise_seed. Returns (streams, SecretSeed or None)."""
    if noise_seed is None and not private:
        return Streams(seed), None
    secret = secret_seed(noise_seed, public_seeds=(seed,), name="noise_seed")
    return secret.streams(), secret


def _finish(algorithm, seed, steps, iterates, releases, clip_counts, n, plan, trace_values, record, direction,
            clip_target, loss_evaluations, secret):
    tau = int(Streams(seed).generator("dpzero", "output").integers(steps))
    private = plan is not None
    ledger = Ledger(algorithm, steps, plan, direction, clip_target, "full", seed,
                    secret.source if private else None, secret.guarantee_condition if private else None)
    diagnostics = NonPrivateDiagnostics(tuple(clip_counts), (n,) * steps, loss_evaluations, 0, (0,) * steps)
    return DPResult(output=iterates[tau].copy(), output_index=tau, final_iterate=iterates[-1].copy(),
                    trajectory=np.array(iterates) if record else None,
                    trace=None if trace_values is None else np.array(trace_values),
                    releases=np.array(releases), ledger=ledger, diagnostics=diagnostics)


def _run_alg2(loss, data, x0, steps, step_size, perturbation, clip, epsilon, delta, seed, noise_seed, direction,
              clip_target, accountant, noise, record, trace, bug):
    data = np.asarray(data, dtype=np.float64)
    x = np.array(x0, dtype=np.float64)
    n, d, lam, alpha = data.shape[0], x.shape[0], float(perturbation), float(step_size)
    private = noise == "gaussian"
    plan = _plan_with_bug(clip, n, steps, epsilon, delta, accountant, bug) if private else None
    sigma = 0.0 if plan is None else float(plan.noise_std) * (0.5 if bug == "half_noise" else 1.0)
    streams, secret = _secret_streams(seed, noise_seed, private)
    noise_rng = streams.generator("dpzero", "noise")
    iterates, releases, clip_counts = [x], [], []
    trace_values = None if trace is None else [float(trace(x))]
    for t in range(steps):
        direction_rng, u = _direction(seed, t, d, direction)
        if bug == "radius_d":
            u = u * math.sqrt(d)
        a = per_sample_finite_differences(loss, x, data, u, lam)
        if clip_target == "raw_difference":
            a = np.array([2 * lam * a_i for a_i in a])
        clip_counts.append(sum(1 for a_i in a if abs(a_i) > clip))
        m = clipped_mean(a, clip)
        step_noise = None
        if not private:
            s_hat = m
        elif bug == "noise_from_direction":
            s_hat = m + sigma * direction_rng.standard_normal()
        elif bug == "vector_noise":
            s_hat = m
            step_noise = sigma * math.sqrt(d) * noise_rng.standard_normal(d)
        else:
            s_hat = m + sigma * noise_rng.standard_normal()
        if clip_target == "raw_difference" and bug != "raw_unscaled":
            s_hat = s_hat / (2 * lam)
        releases.append(s_hat)
        update = alpha * s_hat * u if step_noise is None else alpha * (s_hat * u + step_noise)
        x = x + update if bug == "ascent" else x - update
        iterates.append(x)
        if trace is not None:
            trace_values.append(float(trace(x)))
    return _finish("dpzero" if private else "mezo", seed, steps, iterates, releases, clip_counts, n, plan,
                   trace_values, record, direction, clip_target, 2 * n * steps, secret)


def _alg1_with_bug(bug: str):
    """A ``substitute`` implementation: full-batch Algorithm 1 (DPGD-0th) with ``bug``: "ascent" or "sum_noise"
    (noise calibrated to the clipped SUM, sensitivity 2C, added to the mean: σ·n). Other batchings: the original."""

    def dpgd_zeroth_order(call):
        if call.batching != "full":
            return call.original()
        return _run_alg1(call, bug)

    return dpgd_zeroth_order


def _run_alg1(call, bug):
    data_ = np.asarray(call.data, dtype=np.float64)
    x = np.array(call.x0, dtype=np.float64)
    n, d, lam, alpha = data_.shape[0], x.shape[0], float(call.perturbation), float(call.step_size)
    steps, seed, clip_threshold, trace = call.steps, call.seed, call.clip_threshold, call.trace
    private = call.noise == "gaussian"
    plan = _reference_plan(clip_threshold=clip_threshold, n=n, steps=steps, epsilon=call.epsilon, delta=call.delta,
                           accountant=call.accountant) if private else None
    sigma = 0.0 if plan is None else float(plan.noise_std) * (n if bug == "sum_noise" else 1)
    streams, secret = _secret_streams(seed, call.noise_seed, private)
    noise_rng = streams.generator("dpzero", "noise")
    iterates, releases, clip_counts = [x], [], []
    trace_values = None if trace is None else [float(trace(x))]
    for t in range(steps):
        _, u = _direction(seed, t, d, call.direction)
        a = per_sample_finite_differences(call.loss, x, data_, u, lam)
        g = np.array([a_i * u for a_i in a])
        clip_counts.append(sum(1 for g_i in g if np.any(clip_vector(g_i, clip_threshold) != g_i)))
        g_bar = clipped_mean(g, clip_threshold)
        released = g_bar + sigma * noise_rng.standard_normal(d) if private else g_bar
        releases.append(released)
        x = x + alpha * released if bug == "ascent" else x - alpha * released
        iterates.append(x)
        if trace is not None:
            trace_values.append(float(trace(x)))
    return _finish("dpgd_zeroth_order", seed, steps, iterates, releases, clip_counts, n, plan, trace_values,
                   call.record_trajectory, call.direction, "normalized", 2 * n * steps, secret)


# --- Theorem 3 (privacy), Theorem 1, App. E: the transcript's sensitivity is 2C/n ----------------------------------

def _linear_loss(x, z):
    """f(x; ξ) = <ξ, x> (reference.objectives.Linear without its per-call validation), broadcasting."""
    return np.sum(np.asarray(x, dtype=np.float64) * np.asarray(z, dtype=np.float64), axis=-1)


def _neighbours(gen, n, d):
    """S and its replace-one neighbour S' for a linear loss f(x; ξ) = <ξ, x>: a_i = <u, ξ_i> for every
    x, so both runs see the same a_i except the last record's, +K<u, v> on S and −K<u, v> on S'
    (clipped to ±C with opposite signs: the tight case of Δ = 2C/n)."""
    rows = gen.uniform(-1.0, 1.0, size=(n, d))
    v = np.zeros(d)
    v[0] = 1.0
    neighbour = rows.copy()
    rows[-1] = ADVERSARIAL_SCALE * v
    neighbour[-1] = -ADVERSARIAL_SCALE * v
    return rows, neighbour


def _plan_part(plan, clip, n, steps, epsilon, delta, label):
    """The plan's Δ and σ against 2C/n and Lemma 2.2 (computed here), relation replace-one."""
    sigma = _lemma22_sigma(clip, n, steps, epsilon, delta)
    gaps = (_relative_gap(plan.sensitivity, 2 * mpmath.mpf(clip) / n), _relative_gap(plan.noise_std, sigma))
    ok = max(gaps) <= 1e-12 and plan.relation == "replace_one"  # 1e-12: float64 rounding of Δ and σ
    return deterministic(ok, statistic=max(gaps), bound=1e-12,
                         detail=f"{label}: Δ = {plan.sensitivity!r} vs 2C/n, σ = {plan.noise_std!r} vs "
                                f"4C√(2T log(e+ε/δ))/(nε) = {mpmath.nstr(sigma, 12)}, relation {plan.relation!r}")


def _sensitivity_part(diffs, bound, every_step: bool, label):
    """max_t diff_t/Δ <= 1 (+ rounding) and attained (at every step when ``every_step``)."""
    ratios = np.asarray(diffs, dtype=np.float64) / bound
    worst, tight = float(np.max(ratios)), float(np.min(ratios) if every_step else np.max(ratios))
    ok = worst <= 1 + RUN_ROUNDING and tight >= 1 - RUN_ROUNDING
    return deterministic(ok, statistic=worst, bound=1.0,
                         detail=f"{label}: max |release(S) − release(S')|/Δ = {worst:.15g}, "
                                f"{'min over steps' if every_step else 'attained'} {tight:.15g} "
                                f"(tolerance {RUN_ROUNDING:g}: float64 rounding)")


def _check_transcript_sensitivity(subject, ctx):
    clip, eps, delta, steps, alpha, lam, n = 1.0, 2.0, 1e-5, 8, 1e-3, 1.0, 4
    gen = ctx.generator("transcript_sensitivity")
    parts = []
    for d in (1, 3):
        loss = Linear(np.eye(d)).loss
        rows, neighbour = _neighbours(gen, n, d)
        seed, noise_seed = _seeds(gen, 2)
        x0 = gen.uniform(-0.5, 0.5, size=d)
        common = dict(steps=steps, step_size=alpha, clip_threshold=clip, epsilon=eps, delta=delta, seed=seed,
                      noise_seed=noise_seed, record_trajectory=True)
        # Algorithm 2: scalar releases, directions from the public seed in both runs
        a, b = (subject.dpzero(loss, data, x0, perturbation=lam, **common) for data in (rows, neighbour))
        parts.append(_sensitivity_part(np.abs(np.asarray(a.releases) - np.asarray(b.releases)), 2 * clip / n,
                                       d == 1, f"dpzero d={d}"))
        parts.append(_plan_part(a.ledger.plan, clip, n, steps, eps, delta, f"dpzero d={d} ledger plan"))
        residual = max(_update_residual(r, seed, alpha, subject.direction_for_step) for r in (a, b))
        parts.append(deterministic(residual <= RUN_ROUNDING, statistic=residual, bound=RUN_ROUNDING,
                                   detail=f"dpzero d={d}: both runs step along u_t = direction_for_step(seed, t) "
                                          f"(max relative residual {residual:.3g}): directions are data-independent"))
        # Algorithm 1 and DP-GD: vector releases, ℓ2 distance
        a, b = (subject.dpgd_zeroth_order(loss, data, x0, perturbation=lam, **common) for data in (rows, neighbour))
        diffs = np.linalg.norm(np.asarray(a.releases) - np.asarray(b.releases), axis=1)
        parts.append(_sensitivity_part(diffs, 2 * clip / n, d == 1, f"dpgd_zeroth_order d={d}"))
        parts.append(_plan_part(a.ledger.plan, clip, n, steps, eps, delta, f"dpgd_zeroth_order d={d} ledger plan"))
        gradient = Linear(np.eye(d)).gradient
        a, b = (subject.dpgd(gradient, data, x0, **common) for data in (rows, neighbour))
        diffs = np.linalg.norm(np.asarray(a.releases) - np.asarray(b.releases), axis=1)
        parts.append(_sensitivity_part(diffs, 2 * clip / n, True, f"dpgd d={d}"))
        parts.append(_plan_part(a.ledger.plan, clip, n, steps, eps, delta, f"dpgd d={d} ledger plan"))
    plan = subject.privacy_plan(clip_threshold=clip, n=n, steps=steps, epsilon=eps, delta=delta)
    parts.append(_plan_part(plan, clip, n, steps, eps, delta, "privacy_plan (full batch, lemma22)"))
    parts.append(_check_poisson_sensitivity(subject, ctx, clip, eps, delta))
    return combine(parts, ctx)


def _check_poisson_sensitivity(subject, ctx, clip, eps, delta):
    """Poisson batching with the fixed normaliser B has sensitivity C/B under the relation the plan states.

    * q = B/n (``sampling_probability=None``): n is public, ZERO-OUT neighbours — record j is −K on S and the
      null record 0 on S' (same n, same uniforms, same batches).
    * q given (``sampling_probability=q``): ADD/REMOVE neighbours — S' = S without its last record j. Same noise
      seed: S's sampling uniforms are random(n), S''s the first n − 1 of them (random(n − 1) from the same
      documented stream), so the other records' memberships coincide exactly.

    The released query is the normalised clipped sum, run here with noise="none" (so the release IS the
    query; the noise would cancel anyway). d = 1, so u_t = ±1 (up to rounding) and a_i = <u_t, ξ_i>: the other
    records are ξ = +K (all clipped to the same ±C). Batch sizes are checked against the documented schedule
    (random(n) < q on key ('dpzero', 'sampling')). With the fixed normaliser the difference is |clip(a_j)|/B =
    C/B whenever j is sampled; dividing by the realised |B_t| instead gives up to C.
    """
    n, batch = 6, 3
    rows = np.full((n, 1), ADVERSARIAL_SCALE)
    rows[-1] = -ADVERSARIAL_SCALE
    null_neighbour = rows.copy()
    null_neighbour[-1] = 0.0  # the null record: zero loss difference
    loss = Linear(np.eye(1)).loss
    gen = ctx.generator("poisson_sensitivity")
    runs = ctx.budget.pick(quick=40, full=400)
    parts = []
    for relation, rate, neighbour in (("zero_out", None, null_neighbour), ("add_remove", 0.5, rows[:-1])):
        q = batch / n if rate is None else rate
        diffs = []
        for seed, noise_seed in zip(_seeds(gen, runs), _seeds(gen, runs)):
            uniforms = Streams(noise_seed).generator("dpzero", "sampling").random(n)
            common = dict(steps=1, step_size=1e-3, perturbation=1.0, clip_threshold=clip, seed=seed,
                          noise_seed=noise_seed, batching="poisson", batch_size=batch, noise="none")
            if rate is not None:
                common["sampling_probability"] = rate
            a = subject.dpzero(loss, rows, np.zeros(1), **common)
            b = subject.dpzero(loss, neighbour, np.zeros(1), **common)
            expected = (int(np.sum(uniforms < q)), int(np.sum(uniforms[:len(neighbour)] < q)))
            sizes = (a.diagnostics.batch_sizes[0], b.diagnostics.batch_sizes[0])
            if sizes != expected:
                return deterministic(False, detail=f"Poisson batch sizes {sizes[0]}, {sizes[1]} differ from the "
                                                   "documented sampling schedule (random(n) < q on key "
                                                   f"('dpzero','sampling')): {expected}")
            diffs.append(abs(float(a.releases[0]) - float(b.releases[0])))
        part = _sensitivity_part(diffs, clip / batch, False,
                                 f"dpzero Poisson ({relation}, q={q:g}, fixed normaliser B={batch}, n={n}, {runs} runs)")
        if part.verdict != "pass" or ctx.budget.name != "full":
            parts.append(part)
            continue
        # the Poisson plan (RDP calibration) costs seconds on the reference: full budget only
        plan = subject.privacy_plan(clip_threshold=clip, n=n, steps=1, epsilon=eps, delta=delta, batching="poisson",
                                    batch_size=batch, sampling_probability=rate)
        gap = _relative_gap(plan.sensitivity, mpmath.mpf(clip) / batch)
        parts.append(deterministic(gap <= 1e-12 and plan.relation == relation, statistic=gap, bound=1e-12,
                                   detail=part.detail + f"; plan Δ = {plan.sensitivity!r} vs C/B, relation "
                                                        f"{plan.relation!r}"))
    return combine(parts, ctx)


def _realised_normaliser(result, call):
    """Poisson batching normalised by the realised |B_t| instead of the fixed B (noise-free runs only)."""
    if call.batching != "poisson" or call.noise != "none":
        return result
    sizes = np.asarray(result.diagnostics.batch_sizes, dtype=np.float64)
    releases = np.where(sizes > 0, np.asarray(result.releases) * call.batch_size / np.maximum(sizes, 1), 0.0)
    return dataclasses.replace(result, releases=releases)


TRANSCRIPT_SENSITIVITY = Claim(
    id="dpzero.alg2.transcript_sensitivity",
    paper="dpzero",
    location="Theorem 3 (privacy), Theorem 1, Lemma 2.2, §2.1 (DP-GD); dpzero.E21 (mini-batches)",
    statement="With the same public seed and secret noise seed, runs on replace-one neighbours S, S' use "
              "identical directions and releases that differ by at most Δ = 2C/n per step (scalar ŝ_t for "
              "Alg 2, ℓ2 for Alg 1 and DP-GD), attained when one record's clipped value moves from +C to −C; "
              "the plan's Δ is 2C/n and its σ is Lemma 2.2's 4C√(2T log(e+ε/δ))/(nε). Poisson batching with "
              "the fixed normaliser B has sensitivity C/B, attained: under zero-out neighbours (a record "
              "replaced by a null record, n public) when q = B/n, under add/remove when q is given.",
    kind="privacy",
    requires=("dpzero", "dpgd_zeroth_order", "dpgd", "privacy_plan", "direction_for_step"),
    check=_check_transcript_sensitivity,
    mutants=(
        rebind("clips_at_2C", "DPZero clips the finite differences at 2C (sensitivity 4C/n)", "dpzero",
               clip_threshold=lambda c: 2 * c),
        substitute("add_remove_plan_for_replace_one", "DPZero's plan uses Δ = C/n (σ halved) under replace-one",
                   "dpzero", _alg2_with_bug("half_sensitivity")),
        on_output("poisson_realised_normaliser", "Poisson batches normalised by the realised |B_t| instead of B",
                  "dpzero", _realised_normaliser),
    ),
)


# --- Algorithm 2 line 6, erratum dpzero.E13: the noise is N(0, σ²), independent of the public streams -------------

def _normal_test(z: float, n: int, level: float, unit: str) -> TestResult:
    """Two-sided test of a statistic that is exactly N(0, 1) under H0; MDE as a correlation over n pairs."""
    p_value = float(2 * sps.norm.sf(abs(z)))
    mde = (sps.norm.isf(level / 2) + sps.norm.ppf(POWER)) / math.sqrt(n)
    return TestResult(statistic=float(z), p_value=p_value, mde=float(mde), mde_unit=unit)


def _independence(noise, other, level, label):
    """Σ r_t w_t / √(Σ w_t²) ~ N(0, 1) exactly when r_t are i.i.d. N(0, 1) independent of w."""
    z = float(np.dot(noise, other) / math.sqrt(float(np.dot(other, other))))
    return _normal_test(z, noise.size, level, f"|correlation| of the noise with {label}")


def _check_noise_law(subject, ctx):
    clip, eps, delta, lam, d = 1.0, 2.0, 1e-5, 1.0, 3
    steps = ctx.budget.pick(quick=1200, full=20000)
    gen = ctx.generator("noise_law")
    rows = gen.uniform(-1.0, 1.0, size=(3, d))  # |<u, ξ>| up to 3 > C: some a_i are clipped
    loss = _linear_loss
    seed, noise_a, noise_b = _seeds(gen, 3)
    common = dict(steps=steps, step_size=1e-6, perturbation=lam, clip_threshold=clip, epsilon=eps, delta=delta,
                  seed=seed)
    run_a = subject.dpzero(loss, rows, np.zeros(d), noise_seed=noise_a, **common)
    run_b = subject.dpzero(loss, rows, np.zeros(d), noise_seed=noise_b, **common)
    sigma = float(_lemma22_sigma(clip, rows.shape[0], steps, eps, delta))
    plan_gap = _relative_gap(run_a.ledger.plan.noise_std, sigma)
    if plan_gap > 1e-12:
        return deterministic(False, statistic=plan_gap, bound=1e-12,
                             detail=f"plan σ = {run_a.ledger.plan.noise_std!r} is not Lemma 2.2's {sigma!r}")
    # m_t = (1/n) Σ clip_C(<u_t, ξ_i>) from the public direction: a linear loss has a_i = <u_t, ξ_i> at
    # every x (the subject's central differences differ by ~1e-15, negligible against σ)
    first, e13 = np.empty(steps), np.empty(steps)
    m = np.empty(steps)
    for t in range(steps):
        u = np.asarray(subject.direction_for_step(seed, t, d), dtype=np.float64)
        m[t] = np.mean(np.clip(rows @ u, -clip, clip))
        first[t] = u[0]
        direction_rng, _ = _direction(seed, t, d, "sphere")
        e13[t] = direction_rng.standard_normal()  # what the public code's z_t would be (dpzero.E13)
    noise_a = (np.asarray(run_a.releases, dtype=np.float64) - m) / sigma
    noise_b = (np.asarray(run_b.releases, dtype=np.float64) - m) / sigma
    sub = ctx.split(5)
    chi2 = float(np.sum(noise_a**2))
    p_var = float(min(1.0, 2 * min(sps.chi2.cdf(chi2, steps), sps.chi2.sf(chi2, steps))))
    z_crit = sps.norm.isf(sub.level / 2) + sps.norm.ppf(POWER)
    var_test = TestResult(statistic=chi2 / steps, p_value=p_var, mde=float(z_crit * math.sqrt(2 / steps)),
                          mde_unit="|sample variance / σ² − 1|")
    parts = [
        decide(ks_test(noise_a, sps.norm.cdf, sub.level), sub,
               detail=f"(ŝ_t − m_t)/σ over T={steps} steps vs N(0, 1) (KS), σ = {sigma:.6g} (Lemma 2.2)"),
        decide(var_test, sub, bound=1.0, detail=f"Σ((ŝ_t − m_t)/σ)² ~ χ²_T: variance ratio {chi2 / steps:.4f}"),
        decide(_independence(noise_a, first, sub.level, "u_t[0]"), sub,
               detail="noise vs the public u_t[0]: Σ z_t u_t0/√Σu_t0² ~ N(0,1)"),
        decide(_independence(noise_a, e13, sub.level, "the direction stream's next normal"), sub,
               detail="noise vs the next normal of the direction generator of step t (dpzero.E13 coupling)"),
        decide(_independence(noise_a, noise_b, sub.level, "the noise under another noise_seed"), sub,
               detail="noise under two noise seeds, same public seed (the noise is not a function of the "
                      "public seed)"),
    ]
    return combine(parts, ctx)


NOISE_LAW = Claim(
    id="dpzero.alg2.noise_law",
    paper="dpzero",
    location="Algorithm 2 line 6; dpzero.E13 (the public code's noise)",
    statement="The released ŝ_t − m_t are i.i.d. N(0, σ²) with Lemma 2.2's σ, independent of the public "
              "directions and of the direction stream (erratum dpzero.E13: the public code drew z_t from the "
              "direction seed), and change with the secret noise seed.",
    kind="monte_carlo",
    requires=("dpzero", "direction_for_step"),
    check=_check_noise_law,
    mutants=(
        substitute("noise_from_direction_stream", "z_t drawn right after u_t from the direction generator "
                   "(dpzero.E13)", "dpzero", _alg2_with_bug("noise_from_direction")),
        substitute("half_noise", "noise σ/2 while the plan states σ", "dpzero", _alg2_with_bug("half_noise")),
    ),
)


# --- Algorithms 1 and 2, §5, App. B.2, dpzero.E18: reductions (ZO-GD, seeds, output rule, raw_difference) ----------

def _zo_gd(objective, x0, steps, step_size, lam, seed, direction_for_step, direction="sphere"):
    """Full-batch zeroth-order GD by hand: x − α((F(x+λu) − F(x−λu))/(2λ))u with F = empirical_loss."""
    x = np.array(x0, dtype=np.float64)
    path = [x]
    for t in range(steps):
        u = np.asarray(direction_for_step(seed, t, x.shape[0], direction), dtype=np.float64)
        fd = (objective.empirical_loss(x + lam * u) - objective.empirical_loss(x - lam * u)) / (2 * lam)
        x = x - step_size * fd * u
        path.append(x)
    return np.array(path)


def _max_relative(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def _check_reductions(subject, ctx):
    gen = ctx.generator("reductions")
    parts = []
    steps, alpha, lam = 6, 0.1, 1e-2

    def close(value, label, tol=RUN_ROUNDING):
        parts.append(deterministic(value <= tol, statistic=value, bound=tol, detail=f"{label}: {value:.3g}"))

    # (a) noise off, C = ∞: DPZero = full-batch ZO-GD, d ∈ {1, 4}, both direction laws
    for d, direction in ((1, "sphere"), (4, "sphere"), (4, "gaussian")):
        objective = PseudoHuber(d, 5, "harmonic", 0.5, gen)
        x0, seed = gen.standard_normal(d), _seeds(gen, 1)[0]
        run = subject.dpzero(objective.loss, objective.data, x0, steps=steps, step_size=alpha, perturbation=lam,
                             clip_threshold=math.inf, seed=seed, noise="none", direction=direction,
                             record_trajectory=True)
        by_hand = _zo_gd(objective, x0, steps, alpha, lam, seed, subject.direction_for_step, direction)
        close(_max_relative(run.trajectory, by_hand),
              f"dpzero noise='none', C=inf, d={d}, {direction}: trajectory vs x − α((F(x+λu)−F(x−λu))/(2λ))u")
        if d > 1 and direction == "sphere":  # (b) DPGD-0th noiseless = DPZero noiseless (same directions)
            other = subject.dpgd_zeroth_order(objective.loss, objective.data, x0, steps=steps, step_size=alpha,
                                              perturbation=lam, clip_threshold=math.inf, seed=seed, noise="none",
                                              record_trajectory=True)
            close(_max_relative(other.trajectory, run.trajectory), "dpgd_zeroth_order vs dpzero, noise off, C=inf")

    # (c) same seeds -> bitwise identical; (d) another noise_seed changes every release, not the directions
    d = 3
    objective = PseudoHuber(d, 4, "identity", 0.5, gen)
    x0 = gen.standard_normal(d)
    seed, noise_a, noise_b = _seeds(gen, 3)
    common = dict(steps=steps, step_size=alpha, perturbation=lam, clip_threshold=2.0, epsilon=4.0, delta=1e-5,
                  seed=seed, record_trajectory=True)
    first = subject.dpzero(objective.loss, objective.data, x0, noise_seed=noise_a, **common)
    again = subject.dpzero(objective.loss, objective.data, x0, noise_seed=noise_a, **common)
    other = subject.dpzero(objective.loss, objective.data, x0, noise_seed=noise_b, **common)
    same = all(np.array_equal(np.asarray(getattr(first, f)), np.asarray(getattr(again, f)))
               for f in ("releases", "trajectory", "output", "final_iterate"))
    same = same and first.output_index == again.output_index
    parts.append(deterministic(same, detail="same seed and noise_seed: releases, trajectory, τ, output bitwise equal"))
    differs = bool(np.all(np.asarray(first.releases) != np.asarray(other.releases)))
    parts.append(deterministic(differs, detail="another noise_seed changes the release of every step"))
    residual = max(_update_residual(r, seed, alpha, subject.direction_for_step) for r in (first, other))
    close(residual, "both noise seeds step along u_t = direction_for_step(seed, t) (max relative residual)")
    twice = all(np.array_equal(subject.direction_for_step(seed, t, d), subject.direction_for_step(seed, t, d))
                for t in range(steps))
    parts.append(deterministic(twice, detail="direction_for_step(seed, t) is bitwise identical on every call"))

    # (e) output rule: τ ∈ {0..T−1} and output = x_τ, never x_T (Alg 2 line 6)
    bad = []
    for s in _seeds(gen, 30):
        run = subject.dpzero(objective.loss, objective.data, x0, steps=3, step_size=alpha, perturbation=lam,
                             clip_threshold=math.inf, seed=s, noise="none", record_trajectory=True)
        tau = int(run.output_index)
        path = np.asarray(run.trajectory)
        if not (0 <= tau <= 2 and np.array_equal(run.output, path[tau]) and np.array_equal(run.final_iterate, path[3])):
            bad.append((s, tau))
    parts.append(deterministic(not bad, counterexample=bad[:3] or None,
                               detail=f"τ ∈ {{0, 1, 2}} and output = trajectory[τ], final = trajectory[T] over 30 "
                                      f"seeds with T = 3 ({len(bad)} violations)"))

    # (f) raw_difference with C' = normalized with C = C'/(2λ) (dpzero.E18), noise off and on
    raw_clip = 2 * lam * 0.8  # |f+ − f−| ≈ 2λ|<u, ∇f>| reaches 2λ√d·L: part of the samples are clipped
    for noise in ("none", "gaussian"):
        private = dict(epsilon=4.0, delta=1e-5) if noise == "gaussian" else {}
        kw = dict(steps=steps, step_size=alpha, perturbation=lam, seed=seed, noise_seed=noise_a, noise=noise,
                  record_trajectory=True, **private)
        raw = subject.dpzero(objective.loss, objective.data, x0, clip_threshold=raw_clip, clip_target="raw_difference",
                             **kw)
        normalized = subject.dpzero(objective.loss, objective.data, x0, clip_threshold=raw_clip / (2 * lam), **kw)
        close(_max_relative(raw.releases, normalized.releases),
              f"raw_difference C'={raw_clip:g} vs normalized C'/(2λ), noise={noise!r}: releases")
        clipped = sum(raw.diagnostics.clip_counts)
        parts.append(deterministic(clipped > 0 and raw.diagnostics.clip_counts == normalized.diagnostics.clip_counts,
                                   statistic=clipped,
                                   detail=f"noise={noise!r}: the same samples are clipped in both modes ({clipped})"))
        if noise == "gaussian":
            gap = _relative_gap(raw.ledger.plan.noise_std / (2 * lam), normalized.ledger.plan.noise_std)
            close(gap, "plan σ(C')/(2λ) vs σ(C'/(2λ))", tol=1e-12)
    return combine(parts, ctx)


REDUCTIONS = Claim(
    id="dpzero.alg2.reductions",
    paper="dpzero",
    location="Algorithm 1, Algorithm 2, §5 (seed trick, output rule), App. B.2; dpzero.E18",
    statement="With noise off and C = ∞, DPZero is full-batch ZO-GD x − α((F(x+λu) − F(x−λu))/(2λ))u "
              "(also d = 1, Gaussian directions) and DPGD-0th takes the same steps; equal seeds give bitwise "
              "equal runs; another noise seed changes every release but not the directions; the output is "
              "x_τ with τ ∈ {0..T−1}; clip_target='raw_difference' with C' equals 'normalized' with "
              "C = C'/(2λ), the noise scaled by the same 1/(2λ).",
    kind="deterministic",
    requires=("dpzero", "dpgd_zeroth_order", "direction_for_step"),
    check=_check_reductions,
    mutants=(
        on_output("returns_last_iterate", "outputs x_T with τ = T", "dpzero",
                  lambda result, call: dataclasses.replace(result, output_index=call.steps,
                                                           output=np.asarray(result.final_iterate).copy())),
        substitute("raw_difference_unscaled", "raw_difference mode forgets the 1/(2λ)", "dpzero",
                   _alg2_with_bug("raw_unscaled")),
    ),
)


# --- Theorem 2 eq. (15), Theorem 3 eq. (22) with P(Q) = 1 (App. D, E): one-step descent ----------------------------

#: (name, d, ‖∇F(x_0)‖, σ): A probes the first-order term (d = 1: u = ±1, so <u, ∇F>² = ‖∇F‖² exactly
#: and σ is small); B probes the noise term (d = 10, x_0 near the minimiser, σ dominates).
ONE_STEP_CONFIGS = (("A", 1, 1.0, 0.2), ("B", 10, 0.1, 2.0))


def _one_step_problem(gen, d, gradient_norm, n=8):
    """F(x) = (1/2n) Σ ‖x − x_i‖² (A = I: H = A, ℓ = 1, r = d), x_i = c + 0.1·N(0, I); x_0 = x̄ + g with
    ‖g‖ = gradient_norm, so ∇F(x_0) = g. Per-sample gradients x_0 − x_i are known at x_0."""
    centre = gen.standard_normal(d)
    data = centre + 0.1 * gen.standard_normal((n, d))
    objective = EffectiveRankQuadratic.from_data(data, "identity")
    g = gen.standard_normal(d)
    x0 = data.mean(axis=0) + gradient_norm * g / np.linalg.norm(g)
    return objective, x0


def _epsilon_for(sigma, clip, n, delta):
    """ε with 4C√(2 log(e + ε/δ))/(nε) = σ (one step), by fixed-point iteration (the map is a contraction)."""
    eps = 1.0
    for _ in range(200):
        eps = 4 * clip * math.sqrt(2 * math.log(math.e + eps / delta)) / (n * sigma)
    return eps


def _check_one_step(algorithm: str):
    """(15) for Alg 1 or (22) with P(Q) = 1 for Alg 2, at a fixed x_0, one step per run:

        E F(x_1) <= F(x_0) − (α/2)(1 − 2(r+2)ℓα)‖∇F(x_0)‖² + ℓ²αλ²d²(d + 2rℓα)/8 + ℓα²rσ²/2.

    The quadratic is not Lipschitz (dpzero.E10), but the Taylor step is exact with H = A and the proof needs no
    L once no sample is clipped: C is set from the per-sample gradients at x_0 (|a_i| <= ‖x_0 − x_i‖√d
    for a quadratic, ‖g_i‖ <= ‖x_0 − x_i‖d for Alg 1) and clip_counts == 0 is checked.
    """

    def check(subject, ctx):
        gen = ctx.generator("one_step", algorithm)
        runs = ctx.budget.pick(quick=200, full=5000)
        sub = ctx.split(len(ONE_STEP_CONFIGS))
        parts = []
        for name, d, gradient_norm, sigma_target in ONE_STEP_CONFIGS:
            objective, x0 = _one_step_problem(gen, d, gradient_norm)
            n, ell, r, lam, delta = objective.n, 1.0, float(d), 1e-4, 0.5
            alpha = 1 / (4 * ell * (r + 2))  # the theorems' step size
            reach = float(np.max(np.linalg.norm(x0 - objective.data, axis=1)))
            clip = 1.25 * reach * (math.sqrt(d) if algorithm == "dpzero" else d)
            eps = _epsilon_for(sigma_target, clip, n, delta)
            sigma = float(_lemma22_sigma(clip, n, 1, eps, delta))
            grad = objective.empirical_gradient(x0)
            f0 = objective.empirical_loss(x0)
            rhs = (f0 - alpha / 2 * (1 - 2 * (r + 2) * ell * alpha) * float(grad @ grad)
                   + ell**2 * alpha * lam**2 * d**2 * (d + 2 * r * ell * alpha) / 8 + ell * alpha**2 * r * sigma**2 / 2)
            run = getattr(subject, algorithm)
            values, clipped = [], 0
            for seed, noise_seed in zip(_seeds(gen, runs), _seeds(gen, runs)):
                result = run(objective.loss, objective.data, x0, steps=1, step_size=alpha, perturbation=lam,
                             clip_threshold=clip, epsilon=eps, delta=delta, seed=seed, noise_seed=noise_seed)
                clipped += sum(result.diagnostics.clip_counts)
                values.append(objective.empirical_loss(np.asarray(result.final_iterate, dtype=np.float64)))
            if clipped:
                return deterministic(False, statistic=clipped, detail=f"config {name}: {clipped} samples clipped "
                                     f"although C = {clip:.4g} bounds every |a_i| at x_0 (no-clip precondition)")
            test = _t_test_upper(values, rhs, sub.level, "excess of E F(x_1) over the RHS")
            parts.append(decide(test, sub, bound=rhs,
                                detail=f"config {name}: d={d}, n={n}, ‖∇F(x_0)‖={gradient_norm}, "
                                       f"α=1/(4(r+2))={alpha:.4g}, "
                                       f"σ={sigma:.4g} (ε={eps:.4g}, δ={delta}), C={clip:.4g}, {runs} runs: "
                                       f"mean F(x_1) − RHS = {np.mean(values) - rhs:.3g} "
                                       f"(RHS − F(x_0) = {rhs - f0:.3g})"))
        return combine(parts, ctx)

    return check


ONE_STEP_DESCENT = Claim(
    id="dpzero.thm2.one_step_descent",
    paper="dpzero",
    location="Theorem 2, eq. (15) (App. D)",
    statement="For Alg 1 at a fixed x with no clipping, E F(x_{t+1}) <= F(x_t) − (α/2)(1 − 2(r+2)ℓα)‖∇F‖² "
              "+ ℓ²αλ²d²(d + 2rℓα)/8 + ℓα²rσ²/2 (checked on a quadratic, H = A = I, r = d, ℓ = 1).",
    kind="monte_carlo",
    requires=("dpgd_zeroth_order",),
    check=_check_one_step("dpgd_zeroth_order"),
    mutants=(
        substitute("ascent", "x_{t+1} = x_t + α(ḡ_t + z_t)", "dpgd_zeroth_order", _alg1_with_bug("ascent")),
        substitute("sum_calibrated_noise", "noise for the clipped sum (σ·n) added to the mean",
                   "dpgd_zeroth_order", _alg1_with_bug("sum_noise")),
    ),
)


ALG2_ASCENT = substitute("ascent", "x_{t+1} = x_t + α ŝ_t u_t", "dpzero", _alg2_with_bug("ascent"))

ONE_STEP_DESCENT_NO_CLIP = Claim(
    id="dpzero.thm3.one_step_descent_no_clip",
    paper="dpzero",
    location="Theorem 3, eq. (22) with P(Q) = 1 (App. E), Remark 4.2",
    statement="For Alg 2 at a fixed x with no clipping (P(Q) = 1), E F(x_{t+1}) <= F(x_t) − (α/2)(1 − "
              "2(r+2)ℓα)‖∇F‖² + ℓ²α(d + 2ℓαr)λ²d²/8 + ℓα²rσ²/2: the scalar noise along u_t costs "
              "E‖z_t u_t‖²_H = σ² Tr H.",
    kind="monte_carlo",
    requires=("dpzero",),
    check=_check_one_step("dpzero"),
    mutants=(
        ALG2_ASCENT,
        substitute("vector_noise", "noise N(0, dσ²I_d) along all axes (DPGD-0th's view: clipping a_i u at C√d)",
                   "dpzero", _alg2_with_bug("vector_noise")),
    ),
)


# --- Theorem 3, eq. (7) and the display after (22) (App. E), dpzero.E6, dpzero.E15: the utility bound -------------

def _separable_logistic(d, n, gen):
    """Problem (P2) (reference.objectives_dpzero.SubspaceLogistic) with k = 1, unit features and no label noise: every f(x; ξ_i) = log(1 + exp(−<w, x>))
    along one unit direction w; L = 1, ℓ = 1/4, H = ww^T/4, r = 1, F^* = 0 (an infimum), and
    sup ‖∇F‖² = L² = 1 in the direction −w: a wrong algorithm can reach the trivial bound."""
    return SubspaceLogistic(d, n, 1, gen, features="sphere", label_flip=0.0)


def _logistic_loss(objective):
    """f(x; (c, b)) = log(1 + exp(−b<c, U^T x>)) without the objective's per-call validation (the
    reference loops over samples in Python; this is the same function, ~5x cheaper), broadcasting."""
    basis, k = objective.basis, objective.k

    def loss(x, z):
        z = np.asarray(z, dtype=np.float64)
        margins = np.sum(z[..., :k] * (np.asarray(x, dtype=np.float64) @ basis), axis=-1)
        return np.logaddexp(0.0, -z[..., k] * margins)

    return loss


def _gradient_norm_squared(objective):
    """‖∇F(x)‖² for stacked points x (..., d): U^T x once, ∇F = U·(1/n) Σ w_i c_i with ‖U·‖ = ‖·‖."""
    basis, coefficients, labels = objective.basis, objective.coefficients, objective.labels

    def trace(x):
        margins = (np.asarray(x, dtype=np.float64) @ basis) @ coefficients.T
        weights = -labels * special.expit(-labels * margins)
        small = weights @ coefficients / objective.n
        return np.sum(small**2, axis=-1)

    return trace


#: quick: a short horizon T with the proof's display (the terms of (7) before T is substituted), which
#: holds for any T; full: the theorem's T_int with min(RHS(7), L²) (dpzero.E15: n·ε ≳ 2×10⁴).
UTILITY_QUICK = dict(n=40, d=10, epsilon=80.0, delta=0.1, steps=60, runs=20)
UTILITY_FULL = dict(n=200, d=10, epsilon=75.0, delta=1e-5, steps=None, runs=20)


def _check_utility_bound(subject, ctx):
    setup = ctx.budget.pick(quick=UTILITY_QUICK, full=UTILITY_FULL)
    gen = ctx.generator("utility_bound")
    objective = _separable_logistic(setup["d"], setup["n"], gen)
    x0 = np.zeros(objective.d)
    gap = objective.empirical_loss(x0)  # F^* = 0 <= F(x*) for any x*: F(x_0) bounds the gap (log 2)
    settings = theorem3_settings(objective.n, objective.d, 1.0, setup["epsilon"], setup["delta"],
                                 objective.lipschitz, objective.smoothness)
    steps = setup["steps"] or settings.steps
    lam = float(settings.perturbation_max)
    terms = theorem3_bound_terms(settings, gap, steps=steps, perturbation=lam)
    if setup["steps"] is None:  # T_int vs T_formula: the larger of (7) and the display at T_int (rounding)
        bound = min(max(float(theorem3_bound(settings, gap)), float(terms["total"])), objective.lipschitz**2)
        which = f"min(RHS(7), L²) at T_int = {steps}"
    else:
        bound = float(terms["total"])
        which = f"the proof's display at T = {steps} (T_formula = {float(settings.steps_formula):.1f})"
    trace, loss = _gradient_norm_squared(objective), _logistic_loss(objective)
    averages, clipped = [], 0
    for seed, noise_seed in zip(_seeds(gen, setup["runs"]), _seeds(gen, setup["runs"])):
        result = subject.dpzero(loss, objective.data, x0, steps=steps, step_size=float(settings.step_size),
                                perturbation=lam, clip_threshold=float(settings.clip_threshold),
                                epsilon=setup["epsilon"], delta=setup["delta"], seed=seed, noise_seed=noise_seed,
                                trace=trace)
        values = np.asarray(result.trace, dtype=np.float64)
        averages.append(float(np.mean(values[:steps])))  # E_τ‖∇F(x_τ)‖² exactly, τ ~ U{0..T−1} (§2.7)
        clipped += sum(result.diagnostics.clip_counts)
    test = _t_test_upper(averages, bound, ctx.level, "excess of E_τ‖∇F(x_τ)‖² over the bound")
    return decide(test, ctx, bound=bound,
                  detail=f"SubspaceLogistic k=1 (r=1), n={objective.n}, d={objective.d}, ε={setup['epsilon']}, "
                         f"δ={setup['delta']}, Theorem 3's α={float(settings.step_size):.4g}, "
                         f"C={float(settings.clip_threshold):.4g}, "
                         f"λ={lam:.3g}; {setup['runs']} runs: mean E_τ‖∇F‖² = {np.mean(averages):.4g} vs {which} = "
                         f"{bound:.4g}; {clipped} clipping events")


UTILITY_BOUND = Claim(
    id="dpzero.thm3.utility_bound",
    paper="dpzero",
    location="Theorem 3, eq. (7) and the display after (22) (App. E); dpzero.E6, dpzero.E15",
    statement="With Theorem 3's α, C, λ and σ on an Assumption-3.5 problem (P2, subspace logistic), E_τ‖∇F(x_τ)‖² is at "
              "most the proof's bound 4·gap/(αT) + 2ℓαrσ² + ℓ²d³λ² + 4L²d·nT·2√(2π)e^{−C₀²/8L²} (quick: a "
              "short horizon T) and at most min(RHS(7), L²) at the theorem's T (full budget).",
    kind="monte_carlo",
    requires=("dpzero",),
    check=_check_utility_bound,
    mutants=(ALG2_ASCENT,),
)


# --- Text after Algorithm 2, App. E (Lemma C.1(ii)): the clipping probability ---------------------------------------

CLIP_BOUND_TARGET = 0.1  # 2√(2π)exp(−C₀²/(8L²)) = 0.1: the test can see a violation at this level


def _check_clipping_probability(subject, ctx):
    d, n, smoothing, lam = 100, 10, 0.5, 1e-3
    steps = ctx.budget.pick(quick=150, full=2000)
    gen = ctx.generator("clipping_probability")
    objective = PseudoHuber(d, n, "identity", smoothing, gen)  # L = 1, ℓ = 1/s
    lipschitz, ell = objective.lipschitz, objective.smoothness
    c0 = lipschitz * math.sqrt(8 * math.log(2 * math.sqrt(2 * math.pi) / CLIP_BOUND_TARGET))
    clip = c0 + ell * lam * d / 2  # the smallest threshold the bound allows: C >= C₀ + ℓλd/2
    bound = float(clip_failure_bound(c0, lipschitz))
    x0 = -5.0 * np.ones(d)  # far from the data: ‖∇f(x; ξ_i)‖ ≈ L, the bound's worst case
    seed, noise_seed = _seeds(gen, 2)
    result = subject.dpzero(objective.loss, objective.data, x0, steps=steps, step_size=0.01, perturbation=lam,
                            clip_threshold=clip, epsilon=2.0, delta=1e-5, seed=seed, noise_seed=noise_seed)
    fractions = np.asarray(result.diagnostics.clip_counts, dtype=np.float64) / n
    mean = float(np.mean(fractions))
    # Azuma–Hoeffding: E[fraction_t | past] <= bound and fraction_t ∈ [0, 1]
    p_value = 1.0 if mean <= bound else math.exp(-2 * steps * (mean - bound) ** 2)
    test = TestResult(statistic=mean, p_value=p_value, mde=math.sqrt(math.log(1 / ctx.level) / (2 * steps)),
                      mde_unit="excess of the per-(t,i) clipping frequency over the bound")
    return decide(test, ctx, bound=bound,
                  detail=f"PseudoHuber identity, d={d}, n={n}, s={smoothing} (ℓ={ell:g}, L=1), λ={lam:g}, "
                         f"C₀={c0:.4f}, C = C₀ + ℓλd/2 = {clip:.4f}, T={steps}: clipping frequency {mean:.4g} "
                         f"({int(np.sum(result.diagnostics.clip_counts))} of {steps * n}) vs 2√(2π)exp(−C₀²/8L²) = "
                         f"{bound:.4g}")


CLIPPING_PROBABILITY = Claim(
    id="dpzero.thm3.clipping_probability",
    paper="dpzero",
    location="Text after Algorithm 2, App. E (Lemma C.1(ii))",
    statement="With C >= C₀ + ℓλd/2 and L-Lipschitz samples, each (t, i) is clipped with probability at "
              "most 2√(2π)exp(−C₀²/(8L²)), whatever x_t is.",
    kind="monte_carlo",
    requires=("dpzero",),
    check=_check_clipping_probability,
    mutants=(substitute("direction_radius_d", "directions of norm d instead of √d (dpzero.E17)", "dpzero",
                        _alg2_with_bug("radius_d")),),
)
