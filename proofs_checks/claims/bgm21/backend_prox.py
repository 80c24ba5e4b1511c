"""bgm21 §5.2 Algorithm 2 (Proximally Guided Private Stochastic Mirror Descent, Theorem 16, p = 2) and its strongly
convex solver (rebuilt stand-in for Theorem 29's A_SC; bgm21.E1): backend claim — a subject's run agrees with the
reference draw for draw, and every solver step is the step recomputed from the subject's own returned state
(docs/design.md, Precision and Randomness contract).

For each configuration (quick: Algorithm 2 with the decreasing step rule, calibrated noise and a given w_1, and a
standalone solver call with the constant step rule, input noise and an active projection; full, in addition:
Algorithm 2 with the constant rule near the non-private limit (σ = 10⁻⁹) on a small ball, Algorithm 2 with the defaults
m = ⌊n/R⌋, T = m, and a standalone solver with the decreasing rule and calibrated noise) the subject and the
reference run on the same public seed and explicit secret seed with f(w, z) = ½‖w − z‖² (∇f = w − z), and:

* exact: the batch indices (the public order ("bgm21", "prox_psmd", "order") read in consecutive slices of m), m and
  T of every round, records used and available, the output index of line 5 and the oracle-call count; the output is
  w_τ; w_1 is the data-independent start; every round's reported centre is the subject's w_r and its solver path
  starts there;
* the formula values of every round's trace (η_t, σ, Δ = 2L0/m, ρ_z, ε at δ, β, μ) equal the reference's within
  SAFETY·2γ_10 relatively (at most 10 float64 operations each; σ comes from the same exact calibration);
* every solver step t of round r is recomputed in float64 from the subject's OWN state — its w_t, its centre, the
  rows of the batch it reports, its η_t and σ, and the secret draw z_t = standard_normal(d) of the key ("bgm21",
  "prox_psmd", "noise", r, t) (standalone: ("bgm21", "asc_dp_gd", "noise", t)) — and compared: the NOT PRIVATE mean
  gradient G_t and noise N_t = σ z_t of its debug trace, and w_{t+1} = Π_W(w_t − η_t(G_t + β(w_t − centre) + N_t));
  the round's output w_{r+1} is recomputed from the subject's path (Π_W of Σ t·w_t / Σ t, or of w_{T+1});
* a NaN or inf anywhere, a missing field, a wrong shape, or a refusal of a run the reference completes fails.

The bound (Higham's standard model, u = 2⁻⁵³, γ_n = nu/(1 − nu), first order), per coordinate, one-sided for one
float64 evaluation from the same inputs; the subject and this module each evaluate, so they differ by at most twice
it, and SAFETY = 2 covers the dropped second-order terms (bitwise agreement passes with ratio 0). With A = (1/m)Σ|w −
z_i| over the batch:

  mean gradient G = (1/m)Σ(w − z_i), any order:   e_G = γ_(m+2) A
  noise N = σ z:                                  e_N = u|N|
  g = G + β(w − c) + N:                           e_g = e_G + e_N + γ_4(|G| + β|w − c| + |N|)
  v = w − η g (η the subject's, an input):        e_v = η e_g + γ_2(|w| + η|g|)
  w_{t+1} = Π_W(v), ℓ_2 ball (c, λ):              ‖e_v‖_2 + γ_(d+10)|v − c| + u|w_{t+1}|
      (Π_W is 1-Lipschitz in ℓ_2, so an error e_v moves the exact projection by at most ‖e_v‖_2 in every
      coordinate; computing c + (v − c)·λ/‖v − c‖_2 with the scaled norm of reference.geometry takes at most d + 10
      roundings relative to |v − c|, and the branch "inside, returned as is" differs from the projection by less
      than that when the computed norm is on the wrong side of λ)
  weighted average a = Σ_{t≤T} t·w_t / Σ t:       γ_(T+2) Σ t|w_t| / Σ t (Σ t an integer below 2^53, exact)
  round output Π_W(a):                            as w_{t+1}, with ‖e_a‖_2

Mutants (each a realistic backend bug in an otherwise reference loop): every batch read one record further along
the public order than the batch it reports; step t re-using the Gaussian draw of step t − 1 (a stale generator);
the weighted average taken over the points after each step (w_2..w_{T+1}) instead of the points where the gradients
were taken; the regulariser centred at w_1 in every round while the trace reports w_r; step t taken with η_{t+1}
while the trace reports η_t; the standalone solver drawing its noise from Algorithm 2's key of round 1; and the near
miss: the solver's steps w_2..w_{T+1} stored in float32 (a relative error up to 2⁻²⁴, against a bound of a few
hundred 2⁻⁵³).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from proofs_checks.authoring import (
    FAIL,
    UNIT_ROUNDOFF,
    Claim,
    WorstGap,
    combine,
    deterministic,
    on_output,
    reference_subject,
    rounding_gamma,
    substitute,
)
from reference.algorithms.bgm21_prox import KEY, ASCConfig, ProxConfig
from reference.batching import public_order
from reference.geometry import LpBall
from reference.secrets import secret_seed

SAFETY = 2.0
U = UNIT_ROUNDOFF


def quadratic_gradient(w, z):
    """∇f(w, z) = w − z for f(w, z) = ½‖w − z‖²: one rounding per coordinate; broadcasts over a batch of rows."""
    return w - z


# ---------------------------------------------------------------------------------------------------
# Configurations


@dataclasses.dataclass(frozen=True)
class Case:
    """One run: "prox" (Algorithm 2) or "asc" (a standalone solver call); the ball (radius, centre value), n, d, the
    solver's fields, Algorithm 2's fields (or the solver call's β, μ) and whether w_1 / the centre is given."""

    name: str
    protocol: str
    d: int
    n: int
    radius: float
    data_shift: float
    solver: dict
    fields: dict
    start_given: bool

    def build(self, rng):
        ball = LpBall(2.0, self.radius, np.full(self.d, 0.1))
        data = self.data_shift + 0.5 * rng.standard_normal((self.n, self.d))
        solver = ASCConfig(**{**dict(epsilon=2.0, delta=1e-5, lipschitz=2.0), **self.solver})
        start = None
        if self.start_given:
            direction = rng.standard_normal(self.d)
            start = ball.center + 0.5 * self.radius * direction / np.linalg.norm(direction)
        config = ProxConfig(solver=solver, **self.fields) if self.protocol == "prox" else solver
        return ball, config, data, start


QUICK = (
    Case("Algorithm 2, decreasing step, calibrated noise, w_1 given (R = 3, m = 40, T = 15)", "prox", 4, 120, 1.0,
         0.0, dict(n_steps=15), dict(n_rounds=3, weak_convexity=0.5), True),
    Case("solver alone, constant step, input noise, projection active (m = 30, T = 12)", "asc", 4, 30, 0.3, 1.5,
         dict(n_steps=12, noise_std=0.05, step="constant", smoothness=1.0), dict(beta=0.8, mu=0.6), True),
)
FULL = QUICK + (
    # σ = 0 itself reports ρ_z = inf, which the runner's guard against non-finite results would (rightly) flag
    Case("Algorithm 2, constant step, sigma = 1e-9, projection active (R = 4, m = 25, T = 20)", "prox", 5, 110, 0.4,
         1.0, dict(n_steps=20, noise_std=1e-9, step="constant", smoothness=1.0),
         dict(n_rounds=4, weak_convexity=0.25, batch_size=25), False),
    Case("Algorithm 2, defaults m = n/R and T = m, calibrated noise (R = 2, m = 60)", "prox", 3, 121, 1.0, 0.0,
         dict(), dict(n_rounds=2, weak_convexity=1.0, beta=3.0), False),
    Case("solver alone, decreasing step, calibrated noise (m = 50, T = 50)", "asc", 6, 50, 1.0, 0.0, dict(),
         dict(beta=1.0, mu=1.0), False),
)


def _seeds(ctx, case):
    rng = ctx.generator("run", case.name)
    return int(rng.integers(2**62)), int(rng.integers(2**62)) + 2**62, rng


def _run(module, case, ball, config, data, start, seed, noise_seed):
    if case.protocol == "prox":
        return module.prox_guided_psmd(quadratic_gradient, data.copy(), ball, config, seed=seed,
                                       noise_seed=noise_seed, w_init=start)
    center = ball.center.copy() if start is None else start
    return module.asc_dp_gd(quadratic_gradient, data.copy(), ball, config, center=center, noise_seed=noise_seed,
                            **case.fields)


# ---------------------------------------------------------------------------------------------------
# Comparison


class _Mismatch(Exception):
    """A field of the subject's result that is missing, malformed, non-finite or not the reference's."""


def _array(value, shape, name):
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise _Mismatch(f"{name} is not an array of numbers") from None
    if a.shape != shape:
        raise _Mismatch(f"{name} has shape {a.shape}, want {shape}")
    if not np.all(np.isfinite(a)):
        raise _Mismatch(f"{name} has non-finite values")
    return a


def _field(obj, name, where):
    try:
        return getattr(obj, name)
    except AttributeError:
        raise _Mismatch(f"{where}.{name} is missing") from None


EXACT_SOLVER_FIELDS = ("batch_size", "n_steps")
FORMULA_SOLVER_FIELDS = ("noise_std", "step_sensitivity", "rho_zcdp", "epsilon_at_delta", "beta", "mu")


def _formula(got, want, name):
    """A formula value within SAFETY·2γ_10 relatively of the reference's (inf only where the reference has inf)."""
    a = np.asarray(got, dtype=np.float64)
    b = np.asarray(want, dtype=np.float64)
    if a.shape != b.shape:
        raise _Mismatch(f"{name} has shape {a.shape}, want {b.shape}")
    infinite = np.isinf(b)
    if not np.array_equal(np.isinf(a) & (a > 0), infinite & (b > 0)) or np.any(np.isnan(a)) or \
            np.any(np.isinf(a) & ~infinite):
        raise _Mismatch(f"{name} is not finite where the reference's is (or the reverse)")
    fin = ~infinite
    if not np.all(np.abs(a[fin] - b[fin]) <= SAFETY * 2 * rounding_gamma(10) * np.abs(b[fin])):
        raise _Mismatch(f"{name} differs from the reference's beyond 2γ_10 relative")


def _projection_error(ball, v, e_v, out):
    """The one-sided bound of Π_W(v) computed from v known to within e_v (module doc)."""
    return float(np.linalg.norm(e_v)) + rounding_gamma(ball.d + 10) * np.abs(v - ball.center) + U * np.abs(out)


def _check_solver(worst, label, ball, rows, got_trace, want_trace, got_debug, want_debug, path, next_point, step,
                  rng_for):
    """The per-step recomputation of one solver call (module doc); ``next_point``: the subject's returned output of
    the call (w_{r+1} of Algorithm 2, or the standalone call's output)."""
    for name in EXACT_SOLVER_FIELDS:
        if _field(got_trace, name, "trace") != _field(want_trace, name, "reference trace"):
            raise _Mismatch(f"{label}: trace.{name} is not the reference's")
    T, m, d = int(want_trace.n_steps), int(want_trace.batch_size), ball.d
    _formula(_field(got_trace, "step_sizes", "trace"), want_trace.step_sizes, f"{label}: step_sizes")
    for name in FORMULA_SOLVER_FIELDS:
        _formula(_field(got_trace, name, "trace"), getattr(want_trace, name), f"{label}: trace.{name}")
    if _field(got_debug, "evaluations", "debug") != want_debug.evaluations:
        raise _Mismatch(f"{label}: debug.evaluations is not the reference's count of oracle calls")
    center = _array(_field(got_trace, "center", "trace"), (d,), f"{label}: trace.center")
    path = _array(path, (T + 1, d), f"{label}: the solver path")
    if not np.array_equal(path[0], center):
        raise _Mismatch(f"{label}: the solver path does not start at the reported centre")
    grads = _array(_field(got_debug, "mean_gradients", "debug"), (T, d), f"{label}: debug.mean_gradients")
    noises = _array(_field(got_debug, "noises", "debug"), (T, d), f"{label}: debug.noises")
    etas = np.asarray(got_trace.step_sizes, dtype=np.float64)
    sigma, beta = float(got_trace.noise_std), float(got_trace.beta)
    for k in range(T):
        t = k + 1
        where = f"{label}, step t = {t}"
        w = path[k]
        now = w - rows
        G = now.sum(axis=0) / m
        e_G = rounding_gamma(m + 2) * np.abs(now).sum(axis=0) / m
        N = sigma * rng_for(t).standard_normal(d)
        e_N = U * np.abs(N)
        worst.see(np.abs(grads[k] - G), SAFETY * 2 * e_G, f"mean gradient G_t at {where}")
        worst.see(np.abs(noises[k] - N), SAFETY * 2 * e_N, f"noise N_t at {where}")
        g = G + beta * (w - center) + N
        e_g = e_G + e_N + rounding_gamma(4) * (np.abs(G) + beta * np.abs(w - center) + np.abs(N))
        eta = float(etas[k])
        v = w - eta * g
        e_v = eta * e_g + rounding_gamma(2) * (np.abs(w) + eta * np.abs(g))
        w_next = ball.project(v)
        worst.see(np.abs(path[k + 1] - w_next), SAFETY * 2 * _projection_error(ball, v, e_v, w_next),
                  f"iterate w_(t+1) at {where}")
    if step == "decreasing":
        weights = np.arange(1, T + 1, dtype=np.float64)[:, None]
        den = T * (T + 1) / 2
        average = (weights * path[:T]).sum(axis=0) / den
        e_average = rounding_gamma(T + 2) * (weights * np.abs(path[:T])).sum(axis=0) / den
    else:
        average, e_average = path[T], np.zeros(d)
    output = ball.project(average)
    worst.see(np.abs(next_point - output), SAFETY * 2 * _projection_error(ball, average, e_average, output),
              f"the solver's output ({label})")


def _compare(case, ball, config, data, start, seed, noise_seed, got, want):
    label = case.name
    d = ball.d
    worst = WorstGap()
    streams = secret_seed(noise_seed, public_seeds=(seed,) if case.protocol == "prox" else ()).streams()
    try:
        if case.protocol == "asc":
            path = _field(got, "iterates", "result")
            output = _array(_field(got, "output", "result"), (d,), "output")
            _check_solver(worst, "the call", ball, data, _field(got, "trace", "result"), want.trace,
                          _field(got, "debug", "result"), want.debug, path, output, config.step,
                          lambda t: streams.generator(KEY, "asc_dp_gd", "noise", t))
        else:
            R = config.n_rounds
            trace = _field(got, "trace", "result")
            for name in ("records_used", "records_available", "output_index"):
                if _field(trace, name, "trace") != getattr(want.trace, name):
                    raise _Mismatch(f"trace.{name} is not the reference's")
            batches = _field(trace, "batch_indices", "trace")
            if len(batches) != R or not all(np.array_equal(np.asarray(a), np.asarray(b))
                                            for a, b in zip(batches, want.trace.batch_indices)):
                raise _Mismatch("the batch indices are not the reference's (the public order read in consecutive "
                                "slices)")
            iterates = _array(_field(got, "iterates", "result"), (R, d), "iterates")
            final = _array(_field(got, "final_iterate", "result"), (d,), "final_iterate")
            output = _array(_field(got, "output", "result"), (d,), "output")
            w1 = ball.center if start is None else start
            if not np.array_equal(iterates[0], w1):
                raise _Mismatch("w_1 is not the data-independent start")
            if not np.array_equal(output, iterates[int(want.trace.output_index)]):
                raise _Mismatch("the output is not w_τ at the output index (line 5)")
            solver_traces, debugs = _field(trace, "solver_traces", "trace"), _field(got, "debug", "result")
            paths = _field(got, "solver_iterates", "result")
            if not (len(solver_traces) == len(debugs) == len(paths) == R):
                raise _Mismatch("the per-round traces, debug traces and solver paths are not R each")
            next_points = np.vstack([iterates[1:], final[None, :]])
            for r in range(1, R + 1):
                center = np.asarray(_field(solver_traces[r - 1], "center", "trace"), dtype=np.float64)
                if center.shape != (d,) or not np.array_equal(center, iterates[r - 1]):
                    raise _Mismatch(f"round {r}: the reported centre is not w_r")
                rows = data[np.asarray(want.trace.batch_indices[r - 1])]
                _check_solver(worst, f"round {r}", ball, rows, solver_traces[r - 1],
                              want.trace.solver_traces[r - 1], debugs[r - 1], want.debug[r - 1], paths[r - 1],
                              next_points[r - 1], config.solver.step,
                              lambda t, r=r: streams.generator(KEY, "prox_psmd", "noise", r, t))
    except _Mismatch as exc:
        return deterministic(False, detail=f"{label}: {exc}")
    except (TypeError, ValueError, AttributeError, IndexError) as exc:
        return deterministic(False, detail=f"{label}: the result cannot be compared with the reference's: {exc}")
    return deterministic(worst.ratio <= 1.0, statistic=worst.ratio, bound=1.0,
                         detail=f"{label}: discrete trace exact; "
                                + ("every step bitwise the recomputed one" if worst.ratio == 0 else
                                   f"worst gap / float64 bound {worst.ratio:.3g} at {worst.detail}"))


def _check(subject, ctx):
    ref = reference_subject()
    parts = []
    for case in ctx.budget.pick(quick=QUICK, full=FULL):
        seed, noise_seed, rng = _seeds(ctx, case)
        ball, config, data, start = case.build(rng)
        want = _run(ref, case, ball, config, data, start, seed, noise_seed)
        try:
            got = _run(subject, case, ball, config, data, start, seed, noise_seed)
        except Exception as exc:  # noqa: BLE001 — a refusal of a run the reference completes is a failure
            parts.append(deterministic(False, detail=f"{case.name}: the subject raised {type(exc).__name__}: {exc} "
                                                     "on a run the reference completes"))
            break
        parts.append(_compare(case, ball, config, data, start, seed, noise_seed, got, want))
        if parts[-1].verdict == FAIL:
            break
    return combine(parts, ctx)


# ---------------------------------------------------------------------------------------------------
# Mutants: the reference's run with one bug in its solver loop (the public trace's formulas kept)


def _buggy_solve(gradient, rows, ball, start, center, trace, step, bug, rng_for):
    """One solver call re-run with ``bug`` on the schedule of ``trace`` (η_t, σ, β, T): returns the output, the path
    w_1..w_{T+1}, the mean gradients and the noises."""
    T, d = int(trace.n_steps), ball.d
    etas, sigma, beta = np.asarray(trace.step_sizes), float(trace.noise_std), float(trace.beta)
    w = np.array(start, dtype=np.float64)
    path, grads, noises = [w.copy()], np.empty((T, d)), np.empty((T, d))
    num, den = np.zeros(d), 0.0
    for t in range(1, T + 1):
        G = np.array([gradient(w, z) for z in rows]).sum(axis=0) / rows.shape[0]
        N = sigma * rng_for(t - 1 if (bug == "stale_noise" and t >= 2) else t).standard_normal(d)
        g = G + beta * (w - center) + N
        eta = float(etas[t] if (bug == "eta_ahead" and t < T) else etas[t - 1])
        w_next = ball.project(w - eta * g)
        num += t * (w_next if bug == "average_after_step" else w)
        den += t
        w = w_next
        path.append(w.copy()); grads[t - 1] = G; noises[t - 1] = N
    output = ball.project(num / den if step == "decreasing" else w)
    return output, np.array(path), grads, noises


def _mutated_prox(bug: str):
    """Algorithm 2's run with one solver bug ("stale_noise", "average_after_step", "eta_ahead", "fixed_center"); the
    original run supplies the public schedule (batches, m, T, η_t, σ, β)."""

    def implementation(call):
        result = call.original()
        trace, ball = result.trace, call.ball
        data = np.asarray(call.data, dtype=np.float64)
        streams = secret_seed(call.noise_seed, public_seeds=(call.seed,)).streams()
        R = len(trace.solver_traces)
        w, first = np.array(result.iterates[0]), np.array(result.iterates[0])
        iterates, paths, traces, debugs = np.empty((R, ball.d)), [], [], []
        for r in range(1, R + 1):
            iterates[r - 1] = w
            solver_trace = trace.solver_traces[r - 1]
            center = first if bug == "fixed_center" else w
            out, path, grads, noises = _buggy_solve(
                call.gradient, data[np.asarray(trace.batch_indices[r - 1])], ball, w, center, solver_trace,
                call.config.solver.step, bug, lambda t, r=r: streams.generator(KEY, "prox_psmd", "noise", r, t))
            traces.append(dataclasses.replace(solver_trace, center=w.copy()))
            debugs.append(dataclasses.replace(result.debug[r - 1], mean_gradients=grads, noises=noises))
            paths.append(path)
            w = out
        return dataclasses.replace(result, output=iterates[trace.output_index].copy(), iterates=iterates,
                                   final_iterate=w, solver_iterates=tuple(paths),
                                   trace=dataclasses.replace(trace, solver_traces=tuple(traces)), debug=tuple(debugs))

    return implementation


def _asc_with_prox_key(call):
    """A standalone solver call that draws its noise from Algorithm 2's key of round 1 instead of its own."""
    result = call.original()
    streams = secret_seed(call.noise_seed).streams()
    out, path, grads, noises = _buggy_solve(
        call.gradient, np.asarray(call.data, dtype=np.float64), call.ball, result.iterates[0], result.trace.center,
        result.trace, call.config.step, "", lambda t: streams.generator(KEY, "prox_psmd", "noise", 1, t))
    return dataclasses.replace(result, output=out, iterates=path,
                               debug=dataclasses.replace(result.debug, mean_gradients=grads, noises=noises))


def _shifted_batches(call):
    """Rebind ``data`` so that the record at order position k is read as the one at position k + 1: the batches
    report their indices but read the records one place further along the public order."""
    data = np.asarray(call.data, dtype=np.float64)
    order = public_order(call.seed, data.shape[0], key=(KEY, "prox_psmd", "order"))
    shifted = np.empty_like(data)
    shifted[order] = data[np.roll(order, -1)]
    return call.original(data=shifted)


def _float32_paths(result, call):
    """A backend that stores the solver's steps w_2..w_(T+1) of every round in float32 (the start w_1, the centre,
    kept as given)."""
    paths = []
    for path in result.solver_iterates:
        rounded = np.array(path, dtype=np.float64)
        rounded[1:] = rounded[1:].astype(np.float32)
        paths.append(rounded)
    return dataclasses.replace(result, solver_iterates=tuple(paths))


PROX_RUN = Claim(
    id="bgm21.backend.prox_run",
    paper="bgm21",
    location="§5.2 Algorithm 2 (p = 2), Theorem 16; the strongly convex solver (rebuilt, bgm21.E1); randomness "
             "contract",
    statement=(
        "On the same public and secret seeds the subject's runs of Algorithm 2 (proximally guided private stochastic "
        "mirror descent at p = 2) and of its strongly convex solver have the reference's batches, batch sizes, "
        "step counts, records used, output index and oracle-call counts exactly, its step sizes, noise scales and "
        "privacy parameters within 2γ_10, and every solver step — the mean gradient, the Gaussian noise of the "
        "step's secret key and the projected step w_(t+1) = Π_W(w_t − η_t(G_t + β(w_t − w_r) + N_t)) — and every "
        "round's output equal to the ones recomputed in float64 from its own returned state, within the float64 "
        "one-step bound."
    ),
    kind="backend",
    requires=("prox_guided_psmd", "asc_dp_gd"),
    check=_check,
    mutants=(
        substitute("shifted_batch", "the batches read the records one place further along the public order than "
                                    "the indices they report", "prox_guided_psmd", _shifted_batches),
        substitute("stale_noise", "solver step t re-uses the Gaussian draw of step t - 1", "prox_guided_psmd",
                   _mutated_prox("stale_noise")),
        substitute("average_after_step", "the weighted average taken over w_2..w_(T+1) (the points after each step) "
                                         "instead of the points where the gradients were taken", "prox_guided_psmd",
                   _mutated_prox("average_after_step")),
        substitute("fixed_center", "the proximal term centred at w_1 in every round while the trace reports w_r",
                   "prox_guided_psmd", _mutated_prox("fixed_center")),
        substitute("eta_ahead", "solver step t taken with eta_(t+1) while the trace reports eta_t",
                   "prox_guided_psmd", _mutated_prox("eta_ahead")),
        substitute("asc_noise_key", "the standalone solver draws its noise from Algorithm 2's key of round 1",
                   "asc_dp_gd", _asc_with_prox_key),
        on_output("float32_paths", "the solver's steps stored in float32 (the near miss)", "prox_guided_psmd",
                  _float32_paths),
    ),
)
