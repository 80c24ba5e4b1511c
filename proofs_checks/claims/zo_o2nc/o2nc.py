"""zo_o2nc Algorithm 3 (O2NC) with projected OSD: Remark 4.1 (how far the iterates move), the pathwise regret of
the learner (Algorithm 3 line 3, used in the proof of Lemma 4.6 through E Reg_T ≤ D√(Σ_t E‖v_t‖²)), and the
identity at the heart of Lemma 4.6, F(x_{t+1}) − F(x_t) = E_s <∇F(x_t + sΔ_t), Δ_t>.

Every check runs the subject's ``zo_o2nc`` (Algorithm 3 + OSD + Algorithm 4) with ``record_path=True`` and reads
the path it returns: the query points w_t^k, the iterates x_t^k, the steps Δ_t^k, the segment draws s_t^k, the
released g̃_t^k and the epoch averages w̄^k. Test losses are ridge populations (``reference.objectives.RidgeSum``
rows) and adversarial linear losses whose values reach 1e150 (non-private runs: no Lipschitz constant is claimed
for them). The mutants are one-bug variants of the algorithm (``_runs.variant_zo_o2nc``: the reference's building
blocks with one line wrong) and broken projections.

Tolerances are float64 rounding only, stated where they are defined: a point w = x + sΔ or x + Δ is one rounded
operation per coordinate, so a recomputed point differs from the subject's by at most a few units in the last
place of max(|x|, |Δ|); sums of T terms carry γ_T (``rounding_gamma``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from proofs_checks.authoring import (
    Claim,
    MdeTarget,
    decide,
    deterministic,
    hotelling_mean_test,
    mutant,
    on_output,
    rounding_gamma,
    substitute,
)
from reference.objectives import RidgeSum
from reference.rng import sample_sphere

from ._runs import LinearLoss, RidgeLoss, path, sample_rows, variant


#: The power the Lemma 4.6 identity check promises (relative MDE per budget).
FTC_TARGET = MdeTarget(quick=0.35, full=0.10)

#: Near misses that only the full budget sees reliably (tests/test_claims.py runs them at full).
FULL_BUDGET_MUTANTS: tuple[str, ...] = ()


def _point_slack(T: int, scale: float) -> float:
    """Absolute per-coordinate rounding allowance for a recomputed point: γ_{4(T+1)}·scale, scale = the largest
    |x| or |Δ| entry of the run (a point is a sum of at most T + 1 rounded terms, whichever order a backend uses)."""
    return rounding_gamma(4 * (T + 1)) * scale


# --- the runs (shared by Remark 4.1 and the regret check) ---------------------------------------------------------

def _alternating_rows(d: int, count: int, scale: float, gen) -> np.ndarray:
    """Linear losses ±scale·u_i with unit u_i and alternating signs: g̃ with huge entries that flip from round to
    round (the adversarial stress of Remark 4.1)."""
    rows = sample_sphere(gen, count, d) * scale
    rows[1::2] *= -1.0
    return rows


def _movement_specs(ctx):
    """The runs of Remark 4.1 and of the regret check: (label, loss, data, x1, keywords)."""
    gen = ctx.generator("o2nc", "runs")
    K = ctx.budget.pick(quick=4, full=16)
    specs = []
    # (a) private run on capped ridges: noisy g̃, steps both on and inside the boundary of the ball
    d, T, B1, B2, delta = 3, 8, 5, 1, 0.4
    population = RidgeSum.random(d, 40, gen, profile="capped", tau=0.5, offset_scale=0.5)
    data = sample_rows(population.data, K * (B1 + B2 * (T - 1)), gen)
    specs.append(("capped ridges, private (σ = 0.5)", RidgeLoss(d, 1.0, "capped", 0.5), data,
                  np.array([0.7, -0.4, 0.2]),
                  dict(T=T, K=K, B1=B1, B2=B2, smoothing_radius=delta, step_size=0.02, noise="gaussian",
                       noise_std=0.5, lipschitz=1.0, dp_delta=1e-6, noise_seed=int(gen.integers(2**62)) + 2**62)))
    # (b), (c) adversarial linear losses with entries 1e12 and 1e150, alternating in sign (non-private)
    for d, T, scale, step in ((3, 8, 1e12, 1.0), (2, 4, 1e150, 1e-3)):
        data = _alternating_rows(d, K * T, scale, gen)
        specs.append((f"adversarial linear losses of size {scale:g}, alternating", LinearLoss(), data,
                      np.array([4.0, -3.0, 1.0])[:d],
                      dict(T=T, K=K, B1=1, B2=1, smoothing_radius=0.1, step_size=step, noise="none")))
    # (d) tiny step size: the learner rarely reaches the boundary; (e) a step bound below δ/T; d = 1
    population = RidgeSum.random(1, 20, gen, profile="abs", offset_scale=1.0)
    for label, T, step, bound in (("tiny step size, d = 1", 16, 1e-4, None),
                                  ("step bound 0.3 δ/T, d = 1", 5, 0.5, 0.3 * 0.2 / 5)):
        data = sample_rows(population.data, K * (2 + T - 1), gen)
        specs.append((label, RidgeLoss(1, 1.0, "abs"), data, np.array([2.5]),
                      dict(T=T, K=K, B1=2, B2=1, smoothing_radius=0.2, step_size=step, step_bound=bound, noise="none")))
    return specs


def _runs(subject, ctx):
    """[(label, arrays, T, K, d, D, η)] for the runs of ``_movement_specs``, or a deterministic failure."""
    out = []
    for label, loss, data, x1, kw in _movement_specs(ctx):
        result = subject.zo_o2nc(loss, data, x1, seed=int(ctx.generator("o2nc", "seed", label).integers(2**62)),
                                 record_path=True, **kw)
        T, K, d = kw["T"], kw["K"], x1.shape[0]
        arrays = path(result, K, T, d)
        if not isinstance(arrays, dict):
            return dataclasses.replace(arrays, detail=f"{label}: {arrays.detail}")
        arrays["output"] = np.asarray(result.output, dtype=np.float64)
        arrays["final_iterate"] = np.asarray(result.final_iterate, dtype=np.float64)
        arrays["output_index"] = result.output_index
        D = kw.get("step_bound") or kw["smoothing_radius"] / T
        out.append((label, arrays, T, K, d, D, kw["step_size"]))
    return out


# --- Remark 4.1: ‖w_{t+1} − w_t‖ ≤ 2D, ‖w_t − w̄^k‖ ≤ TD, w_t ∈ [x_t, x_{t+1}], Δ_1^k = 0, x_1^{k+1} = x_{T+1}^k ----

def _movement_problems(label, a, T, K, d, D):
    """The violated statements of Remark 4.1 (and of Alg 3's bookkeeping) on one run, and the worst ratios."""
    x, w, steps, s, averages = a["iterates"], a["query_points"], a["steps"], a["segment_points"], a["epoch_averages"]
    scale = max(float(np.max(np.abs(x))), D)
    slack = _point_slack(T, scale)
    norm_slack = math.sqrt(d) * slack
    problems, worst = [], {"step": 0.0, "pair": 0.0, "spread": 0.0}

    def fail(text):
        problems.append(f"{label}: {text}")

    if np.any(steps[:, 0] != 0.0):
        fail(f"Δ_1^k ≠ 0 in epoch {int(np.argmax(np.any(steps[:, 0] != 0.0, axis=1))) + 1} (the learner is restarted "
             "at Δ_1 = 0, Alg 3 lines 3 and 8)")
    lengths = np.linalg.norm(steps, axis=2)
    worst["step"] = float(np.max(lengths)) / D
    if np.any(lengths > D * (1 + rounding_gamma(d + 2))):
        fail(f"‖Δ_t^k‖ = {np.max(lengths)!r} > D = {D!r}")
    if np.any(np.abs(x[:, 1:] - x[:, :-1] - steps) > slack):
        fail("x_{t+1}^k ≠ x_t^k + Δ_t^k (Alg 3 line 4)")
    if K > 1 and np.any(np.abs(x[1:, 0] - x[:-1, T]) > slack):
        fail("x_1^{k+1} ≠ x_{T+1}^k (Alg 3 line 8)")
    if np.any(np.abs(a["final_iterate"] - x[-1, T]) > slack):
        fail("final_iterate ≠ x_{T+1}^K")
    if np.any((s < 0) | (s > 1)):
        fail("a segment draw s_t^k lies outside [0, 1]")
    on_segment = x[:, :-1] + s[..., None] * (x[:, 1:] - x[:, :-1])
    if np.any(np.abs(w - on_segment) > 2 * slack):
        fail(f"w_t^k ≠ x_t^k + s_t^k (x_{{t+1}}^k − x_t^k): off by {np.max(np.abs(w - on_segment))!r} (Alg 3 line 4: "
             "w_t^k lies on the segment [x_t^k, x_{t+1}^k])")
    # ‖w_{t'} − w_t‖ ≤ (t' − t + s_{t'} − s_t) D for t < t' (Remark 4.1, sharp form); t' = t + 1 gives ≤ 2D
    for t in range(T - 1):
        for later in range(t + 1, T):
            gap = np.linalg.norm(w[:, later] - w[:, t], axis=1)
            allowed = (later - t + s[:, later] - s[:, t]) * D
            if later == t + 1:
                worst["pair"] = max(worst["pair"], float(np.max(gap)) / (2 * D))
                if np.any(gap > 2 * D + norm_slack):
                    fail(f"‖w_(t+1) − w_t‖ = {np.max(gap)!r} > 2D = {2 * D!r} at t = {t + 1}")
            if np.any(gap > allowed + norm_slack):
                fail(f"‖w_{later + 1} − w_{t + 1}‖ exceeds (t' − t + s_t' − s_t)·D")
                break
    mean_w = np.mean(w, axis=1)
    if np.any(np.abs(averages - mean_w) > 2 * slack):
        fail("w̄^k ≠ (1/T) Σ_t w_t^k (Alg 3 line 7)")
    spread = np.linalg.norm(w - averages[:, None, :], axis=2)
    worst["spread"] = float(np.max(spread)) / (T * D)
    if np.any(spread > T * D + norm_slack):
        fail(f"‖w_t^k − w̄^k‖ = {np.max(spread)!r} > TD = {T * D!r}")
    index = a["output_index"]
    if not (isinstance(index, (int, np.integer)) and 0 <= index < K) or np.any(a["output"] != averages[int(index)]):
        fail("the output is not the epoch average w̄^{k*} its output_index names (Alg 3 line 9)")
    return problems, worst


def _check_movement(subject, ctx):
    runs = _runs(subject, ctx)
    if not isinstance(runs, list):
        return runs
    problems, worst, labels = [], {"step": 0.0, "pair": 0.0, "spread": 0.0}, []
    for label, arrays, T, K, d, D, _ in runs:
        found, ratios = _movement_problems(label, arrays, T, K, d, D)
        problems += found
        worst = {key: max(worst[key], ratios[key]) for key in worst}
        labels.append(label)
    return deterministic(
        not problems, statistic=worst["pair"], bound=1.0, counterexample=problems[:3] or None,
        detail=(f"{len(runs)} runs ({'; '.join(labels)}): max ‖w_(t+1) − w_t‖/(2D) = {worst['pair']:.6g}, "
                f"max ‖w_t − w̄^k‖/(TD) = {worst['spread']:.6g}, max ‖Δ_t‖/D = {worst['step']:.15g}"
                + (f"; violations: {'; '.join(problems[:3])}" if problems else "")))


def _nan_in_run(every: int = 3):
    """A mutant whose every ``every``-th run returns NaN in the first query point and release (correct otherwise)."""
    def transform(original):
        calls = [0]

        def mutated(*args, **kwargs):
            calls[0] += 1
            result = original(*args, **kwargs)
            if calls[0] % every:
                return result
            points = None if result.query_points is None else np.array(result.query_points, dtype=np.float64)
            if points is not None:
                points.reshape(-1)[0] = np.nan
            releases = np.array(result.releases, dtype=np.float64)
            releases.reshape(-1)[0] = np.nan
            return dataclasses.replace(result, query_points=points, releases=releases)

        return mutated

    return mutant("sometimes_nan", f"correct, except that every {every}th run returns NaN in its first query point "
                  "and release", "zo_o2nc", transform)


ITERATE_MOVEMENT = Claim(
    id="zo_o2nc.remark4_1.iterate_movement",
    paper="zo_o2nc",
    location="Remark 4.1; Algorithm 3 (lines 3, 4, 7, 8, 9)",
    statement=(
        "In every run of Algorithm 3 with projected OSD on {‖Δ‖ ≤ D}: Δ_1^k = 0, ‖Δ_t^k‖ ≤ D, x_{t+1} = x_t + Δ_t, "
        "x_1^{k+1} = x_{T+1}^k, w_t = x_t + s_t(x_{t+1} − x_t) with s_t ∈ [0, 1] (w_t on the segment), hence "
        "‖w_{t'} − w_t‖ ≤ (t' − t + s_{t'} − s_t)D ≤ 2D for t' = t + 1, w̄^k = (1/T)Σ_t w_t^k and ‖w_t − w̄^k‖ ≤ TD; "
        "the output is w̄^{k*}. Checked on private ridge runs and on adversarial linear losses of size 1e12 and "
        "1e150 with alternating signs, to float64 rounding."
    ),
    kind="deterministic",
    requires=("zo_o2nc",),
    check=_check_movement,
    mutants=(
        variant("step_bound_5pct"),
        variant("w_after_step"),
        variant("no_restart"),
        _nan_in_run(),
    ),
)


# --- projected OSD: the recursion and its pathwise regret bound --------------------------------------------------

def _project(v, radius):
    """The check's own Π_D(v) = v·min(1, D/‖v‖), rows of v (..., d); norms of huge rows are taken after scaling."""
    peak = np.max(np.abs(v), axis=-1, keepdims=True)
    safe = np.where(peak > 0, peak, 1.0)
    length = np.linalg.norm(v / safe, axis=-1, keepdims=True) * safe
    return np.where(length > radius, v * (radius / np.where(length > 0, length, 1.0)), v)


def _regret_problems(label, a, T, K, d, D, eta):
    steps, g = a["steps"], a["releases"]
    problems, worst = [], 0.0
    slack = 16 * rounding_gamma(2 * d + 8) * D  # one projection: γ for Δ − ηg, the norm and the rescaling
    for k in range(K):
        if np.any(steps[k, 0] != 0.0):
            problems.append(f"{label}: epoch {k + 1} starts at Δ_1 ≠ 0")
        expected = _project(steps[k, :-1] - eta * g[k, :-1], D)
        error = np.linalg.norm(steps[k, 1:] - expected, axis=1) if T > 1 else np.zeros(0)
        if np.any(error > slack):
            t = int(np.argmax(error)) + 1
            problems.append(f"{label}: epoch {k + 1}, Δ_{t + 1} ≠ Π_D(Δ_{t} − η g̃_{t}) (off by {np.max(error)!r})")
        # max over ‖u‖ ≤ D of Σ_t <g̃_t, Δ_t − u> = Σ_t <g̃_t, Δ_t> + D‖Σ_t g̃_t‖ (u = −D Σ g̃/‖Σ g̃‖)
        peak = max(float(np.max(np.abs(g[k]))), 1e-300)
        scaled = g[k] / peak  # the regret and its bound, divided by peak (no overflow at 1e150)
        regret = float(np.sum(scaled * steps[k])) + D * float(np.linalg.norm(np.sum(scaled, axis=0)))
        squares = float(np.sum(scaled * scaled))
        bound = D * D / (2 * eta * peak) + eta * peak / 2 * squares
        # rounding: the sums (γ over T·d terms) and the recursion's per-step error ε = slack, which adds at most
        # T(4Dε + ε²)/(2η) to the pathwise bound (the standard proof with a perturbed projection)
        allowance = rounding_gamma(4 * T * d + 8) * (2 * D * math.sqrt(squares) * T + bound) \
            + T * (4 * D * slack + slack * slack) / (2 * eta * peak)
        worst = max(worst, regret / bound)
        if not regret <= bound + allowance:
            problems.append(f"{label}: epoch {k + 1}, max_u Reg_T(u) = {regret * peak!r} > D²/(2η) + (η/2)Σ‖g̃‖² = "
                            f"{bound * peak!r}")
    return problems, worst


def _projection_problems(subject, ctx):
    """Π_D on random and adversarial vectors: finite, ‖Π(v)‖ ≤ D, Π(v) = v inside the ball, v·D/‖v‖ outside,
    idempotent."""
    gen = ctx.generator("o2nc", "projection")
    problems, count = [], 0
    for d in (1, 2, 5):
        for radius in (1e-8, 0.3, 1e5):
            for scale in (1e-300, 1e-8, 1.0, 1e8, 1e300):
                for _ in range(ctx.budget.pick(quick=2, full=10)):
                    v = gen.standard_normal(d) * scale
                    if gen.random() < 0.2:
                        v[0] = 0.0
                    for vector in (v, 0.5 * radius * v / max(np.linalg.norm(v / scale) * scale, 1e-300)):
                        count += 1
                        out = np.asarray(subject.project_ball(vector.copy(), radius), dtype=np.float64)
                        if out.shape != (d,) or not np.all(np.isfinite(out)):
                            problems.append(f"project_ball returned {out!r} for |v| ~ {scale:g}, D = {radius:g}")
                            continue
                        peak = float(np.max(np.abs(vector)))
                        length = float(np.linalg.norm(vector / peak) * peak) if peak > 0 else 0.0
                        out_peak = float(np.max(np.abs(out)))
                        out_length = float(np.linalg.norm(out / out_peak) * out_peak) if out_peak > 0 else 0.0
                        tolerance = rounding_gamma(d + 3) + (d + 4) * 2.0**-50
                        if out_length > radius * (1 + rounding_gamma(d + 2)):
                            problems.append(f"‖Π_D(v)‖ = {out_length!r} > D = {radius!r}")
                        expected = vector if length <= radius else vector * (radius / length)
                        if np.any(np.abs(out - expected) > tolerance * max(min(length, radius), 1e-300)):
                            problems.append(f"Π_D(v) ≠ v·min(1, D/‖v‖) for |v| = {length:.3g}, D = {radius:g} (d={d})")
                        again = np.asarray(subject.project_ball(out.copy(), radius), dtype=np.float64)
                        if not np.all(np.abs(again - out) <= tolerance * max(out_length, 1e-300)):
                            problems.append(f"Π_D is not idempotent at |v| = {length:.3g}, D = {radius:g}")
    return problems, count


def _check_regret(subject, ctx):
    problems, count = _projection_problems(subject, ctx)
    runs = _runs(subject, ctx)
    if not isinstance(runs, list):
        return runs
    worst = 0.0
    for label, arrays, T, K, d, D, eta in runs:
        found, ratio = _regret_problems(label, arrays, T, K, d, D, eta)
        problems += found
        worst = max(worst, ratio)
    return deterministic(
        not problems, statistic=worst, bound=1.0, counterexample=problems[:3] or None,
        detail=(f"project_ball on {count} random/adversarial vectors (|v| from 1e-300 to 1e300); OSD recursion "
                f"Δ_1 = 0, Δ_(t+1) = Π_D(Δ_t − η g̃_t) and max_(‖u‖≤D) Reg_T(u) ≤ D²/(2η) + (η/2)Σ_t‖g̃_t‖² on "
                f"{len(runs)} runs (largest regret/bound {worst:.4g})"
                + (f"; violations: {'; '.join(problems[:3])}" if problems else "")))


def _box_projection(call):
    """Each coordinate clipped to [−D, D] (a box, not the ball: ‖Π(v)‖ up to √d·D)."""
    return np.clip(np.asarray(call.v, dtype=np.float64), -call.radius, call.radius)


OSD_REGRET = Claim(
    id="zo_o2nc.lemma4_6.osd_regret",
    paper="zo_o2nc",
    location="Algorithm 3, line 3 (projected OSD); proof of Lemma 4.6 (E Reg_T(u) ≤ D·√(Σ_t E‖v_t‖²)); zo_o2nc.E10",
    statement=(
        "Π_D(v) = v·min(1, D/‖v‖) has norm ≤ D and is idempotent, also for |v| from 1e-300 to 1e300. The learner "
        "of every run starts each epoch at Δ_1 = 0 and moves by Δ_(t+1) = Π_D(Δ_t − η g̃_t) on the RELEASED g̃_t, "
        "so pathwise, for every ‖u‖ ≤ D, Reg_T(u) = Σ_t <g̃_t, Δ_t − u> ≤ D²/(2η) + (η/2)Σ_t ‖g̃_t‖² (which is "
        "D·√(Σ_t ‖g̃_t‖²) at the tuned η), on private ridge runs and adversarial losses of size 1e12 and 1e150."
    ),
    kind="deterministic",
    requires=("project_ball", "zo_o2nc"),
    check=_check_regret,
    mutants=(
        substitute("box_projection", "each coordinate clipped to [−D, D] instead of the Euclidean projection",
                   "project_ball", _box_projection),
        on_output("one_ulp_outside", "the projection lands 1e-9 (relative) outside the ball", "project_ball",
                  lambda out, call: np.asarray(out, dtype=np.float64) * (1 + 1e-9)),
        variant("osd_sees_noiseless"),
        variant("no_restart"),
        variant("step_bound_5pct"),
    ),
)


# --- Lemma 4.6: F(x_{t+1}) − F(x_t) = E_s <∇F(x_t + sΔ_t), Δ_t> --------------------------------------------------

#: The test function Φ (any C¹ function works for the identity): a sum of J smoothed |.| ridges with kinks through
#: the region the iterates visit, smoothed at the radius of one step, so that ∇Φ changes by O(L) along a step.
FTC_RIDGES = 6


def _ftc_problem(ctx):
    gen = ctx.generator("ftc", "problem")
    d, T, delta = 2, 2, 0.2
    D = delta / T
    population = RidgeSum.random(d, 60, gen, profile="abs", offset_scale=0.05)  # the loss: minimisers near 0
    phi = RidgeSum(sample_sphere(gen, FTC_RIDGES, d), gen.uniform(-0.15, 0.15, FTC_RIDGES), profile="abs")
    return d, T, delta, D, population, phi


def _check_ftc(subject, ctx):
    d, T, delta, D, population, phi = _ftc_problem(ctx)
    K = ctx.budget.pick(quick=2000, full=15000)
    gen = ctx.generator("ftc", "data")
    data = sample_rows(population.data, K * (1 + (T - 1)), gen)
    result = subject.zo_o2nc(RidgeLoss(d, 1.0, "abs"), data, np.array([0.3, -0.2]), T=T, K=K, B1=1, B2=1,
                             smoothing_radius=delta, step_size=D, noise="none",
                             seed=int(gen.integers(2**62)), record_path=True)
    a = path(result, K, T, d, fields=("query_points", "iterates", "steps"))
    if not isinstance(a, dict):
        return a
    x, w, steps = a["iterates"].reshape(-1, T + 1, d), a["query_points"], a["steps"]
    start, end = x[:, :-1].reshape(-1, d), x[:, 1:].reshape(-1, d)
    radius = D  # Φ's smoothing radius: one step
    increment = (_phi_values(phi, end, radius) - _phi_values(phi, start, radius))
    slope = np.sum(_phi_gradients(phi, w.reshape(-1, d), radius) * steps.reshape(-1, d), axis=1)
    moving = np.linalg.norm(steps.reshape(-1, d), axis=1) > 0
    samples = (slope - increment)[moving]
    scale = float(np.mean(np.abs(increment[moving])))
    test = hotelling_mean_test(samples[:, None], np.zeros(1), ctx.level)
    return decide(test, ctx, bound=0.0, scale=scale,
                  detail=(f"{samples.size} steps of {K} epochs (d={d}, T={T}, δ={delta}, D=δ/T, |Δ|/D mean "
                          f"{np.mean(np.linalg.norm(steps.reshape(-1, d), axis=1)) / D:.3f}); Φ = sum of {FTC_RIDGES} "
                          f"|.| ridges smoothed at radius D: mean of <∇Φ(w_t), Δ_t> − (Φ(x_(t+1)) − Φ(x_t)) = "
                          f"{np.mean(samples):.3g} (mean |Φ(x_(t+1)) − Φ(x_t)| = {scale:.4g})"))


def _phi_values(phi, points, radius):
    return np.sum(phi.smoothed_loss(points[:, None, :], phi.data[None, :, :], radius), axis=1)


def _phi_gradients(phi, points, radius):
    return np.sum(phi.smoothed_gradient(points[:, None, :], phi.data[None, :, :], radius), axis=1)


FTC_IDENTITY = Claim(
    id="zo_o2nc.lemma4_6.ftc_identity",
    paper="zo_o2nc",
    location="Lemma 4.6 (proof: F(x_{t+1}) − F(x_t) = E_s <∇F(x_t + sΔ_t), Δ_t>); Algorithm 3, line 4",
    statement=(
        "For the query points w_t = x_t + s_tΔ_t of Algorithm 3 (s_t ~ U[0, 1] independent of the past) and any C¹ "
        "function Φ, E[<∇Φ(w_t), Δ_t> | past] = Φ(x_{t+1}) − Φ(x_t) (fundamental theorem of calculus); checked on "
        "the subject's path with Φ a sum of smoothed |.| ridges (closed form, smoothing radius D = one step), the "
        "differences <∇Φ(w_t), Δ_t> − (Φ(x_{t+1}) − Φ(x_t)) being martingale differences of mean 0."
    ),
    kind="monte_carlo",
    requires=("zo_o2nc",),
    check=_check_ftc,
    mutants=(
        variant("w_after_step"),
        variant("segment_short"),
    ),
    mde_target=FTC_TARGET,
)
