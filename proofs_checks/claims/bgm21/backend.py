"""bgm21 §4.1 Algorithm 1 (A_polySFW) and §4.2 Algorithm 6 (A_nSFW, rebuilt; bgm21.E1): backend claim — a
subject's whole run agrees with the reference draw for draw, and every step is the step recomputed from the subject's
own released state (docs/design.md, Precision and Randomness contract).

For each configuration (Algorithm 1 on a random polytope with Laplace noise and, at the full budget, on an ℓ1 ball and
in the non-private limit s_r = 0; Algorithm 6 on an ℓ1.5 ball with σ̂ from η_{r,t−1} and, at the full budget, on an
ℓ2 ball with the printed σ̂) the subject and the reference run on the same public seed and explicit secret seed with
the loss f(w, z) = ½‖w − z‖² (∇f = w − z), and:

* exact: the public trace's discrete fields (r, t, the batch sizes m_t, the batch indices — the public order
  ("bgm21", ALG, "order") read in consecutive slices —, the selected vertices of Algorithm 1, the affected-step
  counts, records used and available, the output index of line 15) equal the reference's; the output is the
  iterate at the output index; w_0^0 is the data-independent start;
* the public trace's formula values (η_{r,t}, s_r, σ_{r,t}, σ̂_{r,t}, the sensitivities, μ) equal the reference's
  within SAFETY·2γ_10 relatively (each is a product/quotient of at most 10 float64 operations);
* every step (r, t) is recomputed in float64 from the subject's OWN state: its w_r^t and w_r^{t−1}, its previous
  estimate (Algorithm 1: ∇_r^{t−1} of the debug trace; Algorithm 6: the released ∇̃_r^{t−1}), the batch it reports, and
  the secret draws of the key ("bgm21", ALG, "noise", r, t) — Algorithm 1: one laplace(0, s_r, J); Algorithm 6:
  standard_normal(d) for N_r^t then, at t ≥ 1, for N̂_r^t. Compared: Algorithm 6's noises, fresh mean and released
  ∇̃_r^t, Algorithm 1's ∇_r^t; Algorithm 1's vertex must be the argmin of ⟨V_j, ∇_r^t⟩ + u_j on the subject's own ∇_r^t
  (a different vertex is accepted only if its noisy score is within the score bound of the minimum); and
  w_r^{t+1} = (1 − η)w_r^t + η·v from the subject's w_r^t and its vertex (Algorithm 1) or the LMO of its own ∇̃_r^t
  (Algorithm 6). This local check needs no propagation through the run (the argmin and the LMO are discontinuous in
  the estimate): a float64 implementation is exactly one whose every step is the step from its own previous values up
  to its own rounding;
* a NaN or inf anywhere, a missing field, a wrong shape, or a refusal of a run the reference completes fails.

The bound (Higham's standard model, u = 2⁻⁵³, γ_n = nu/(1 − nu), first order), per coordinate, one-sided for one
float64 evaluation; the subject and this module each evaluate, so they differ by at most twice it, and SAFETY = 2
covers the dropped second-order terms (bitwise agreement passes with ratio 0). With A = (1/m)Σ|∇f(w, z_i)| and
A′ = (1/m)Σ(|∇f(w, z_i)| + |∇f(w_prev, z_i)|) over the batch:

  fresh mean (1/m)Σ(w − z_i), any order:       γ_(m+2) A
  difference mean (1/m)Σ(∇f(w, z_i) − ∇f(w_prev, z_i)):   γ_(m+3) A′
  Gaussian noise σ·z:                           u|N|
  start ∇^0 = fresh + N:                        e_fresh + e_N + u(|fresh| + |N|)
  update (1 − η)(∇ + Δ + N̂) + η(fresh + N):     (1 − η)(e_Δ + e_N̂) + η(e_fresh + e_N)
                                                + γ_8((1 − η)(|∇| + |Δ| + |N̂|) + η(|fresh| + |N|))
  scores ⟨V_j, ∇⟩ (+ u_j):                      γ_(d+1) Σ_k |V_jk ∇_k| + u|u_j|
  ℓ_p LMO (1 < p ≤ 2, q = p/(p − 1)):           (q + 2)γ_(d+6) |v_i − c_i| + u|v_i|
  iterate (1 − η)w + ηv:                        γ_3((1 − η)|w| + η|v|) + η e_v

Mutants (each a realistic backend bug in an otherwise reference loop): every batch read one record further along
the public order than the batch it reports (both algorithms); the difference term of line 10 taken against
w_r^{t−2} (an off-by-one in the kept previous iterate); a stale Laplace draw (step (r, t) re-using the key of
(r, t − 1)) in Algorithm 1 and a stale Gaussian draw in Algorithm 6; and the near miss: Algorithm 1's iterates or
Algorithm 6's released ∇̃ kept in float32 (a relative error of 2⁻²⁴, against a bound of a few 2⁻⁵³).
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
from reference.algorithms.bgm21_sfw import KEY, NoisySFWConfig, PolySFWConfig, RecursiveGradientEstimator
from reference.batching import public_order
from reference.geometry import LpBall, Polytope
from reference.secrets import secret_seed
from reference.selection import laplace_noisy_argmin

SAFETY = 2.0
U = UNIT_ROUNDOFF


def quadratic_gradient(w, z):
    """∇f(w, z) = w − z for f(w, z) = ½‖w − z‖²: one rounding per coordinate; broadcasts over a batch of rows."""
    return w - z


# ---------------------------------------------------------------------------------------------------
# Configurations


@dataclasses.dataclass(frozen=True)
class Case:
    """One run: the algorithm, its feasible set (built from the claim's generator), n, d and the config fields."""

    name: str
    algorithm: str  # "poly_sfw" or "noisy_sfw"
    geometry: str  # "polytope", "l1", or an ℓ_p exponent as text
    d: int
    n: int
    fields: dict

    def build(self, rng):
        if self.algorithm == "poly_sfw":
            if self.geometry == "polytope":
                feasible = Polytope(rng.standard_normal((3 * self.d, self.d)))
            else:
                feasible = Polytope(LpBall(1.0, 1.0, np.zeros(self.d)).vertices())
            base = dict(delta=1e-5, lipschitz=2.0, smoothness=1.0, epsilon=1.0)
            config = PolySFWConfig(**{**base, **self.fields})
        else:
            feasible = LpBall(float(self.geometry), 1.0, np.full(self.d, 0.1))
            base = dict(delta=1e-5, lipschitz=2.0, smoothness=1.0, epsilon=2.0)
            config = NoisySFWConfig(**{**base, **self.fields})
        data = 0.5 * rng.standard_normal((self.n, self.d))
        return feasible, config, data


QUICK = (
    Case("Algorithm 1, random polytope J=12 d=4, Laplace s_r = 0.3", "poly_sfw", "polytope", 4, 120,
         dict(n_rounds=4, batch_size=12, lap_scales=(0.3,) * 4)),
    Case("Algorithm 6, l1.5 ball d=4, sigma-hat from eta_(r,t-1)", "noisy_sfw", "1.5", 4, 120,
         dict(n_rounds=4, batch_size=12, noise_factor=0.05)),
)
FULL = QUICK + (
    Case("Algorithm 1, l1 ball d=6, printed s_r", "poly_sfw", "l1", 6, 400,
         dict(n_rounds=5, batch_size=16, epsilon=50.0)),
    Case("Algorithm 1, random polytope J=15 d=5, non-private limit s_r = 0", "poly_sfw", "polytope", 5, 300,
         dict(n_rounds=5, batch_size=16, lap_scales=(0.0,) * 5)),  # ε = inf would put an inf in the result's config
    Case("Algorithm 6, l2 ball d=5, printed sigma-hat", "noisy_sfw", "2", 5, 400,
         dict(n_rounds=5, batch_size=16, noise_factor=0.1, sigma_hat_eta="printed")),
)


def _seeds(ctx, case):
    rng = ctx.generator("run", case.name)
    return int(rng.integers(2**62)), int(rng.integers(2**62)) + 2**62, rng


def _run(module, case, feasible, config, data, seed, noise_seed):
    function = getattr(module, case.algorithm)
    return function(quadratic_gradient, data.copy(), feasible, config, seed=seed, noise_seed=noise_seed)


# ---------------------------------------------------------------------------------------------------
# Comparison


def _array(value, shape):
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return a if a.shape == shape and np.all(np.isfinite(a)) else None


EXACT_FIELDS = ("rounds", "steps", "batch_sizes", "selected", "affected_steps", "records_used", "records_available",
                "output_index")
FORMULA_FIELDS = ("step_sizes", "lap_scales", "sigma", "sigma_hat", "estimator_sensitivity", "score_sensitivity",
                  "gradient_sensitivity", "difference_sensitivity", "mu")


def _exact_parts(label, got, want):
    trace, ref = got.trace, want.trace
    try:
        for name in EXACT_FIELDS:
            a, b = np.asarray(getattr(trace, name)), np.asarray(getattr(ref, name))
            if a.shape != b.shape or not np.array_equal(a, b):
                return f"trace.{name} is not the reference's"
        if len(trace.batch_indices) != len(ref.batch_indices) or not all(
                np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(trace.batch_indices, ref.batch_indices)):
            return "the batch indices are not the reference's (the public order read in consecutive slices)"
        for name in FORMULA_FIELDS:
            a = _array(getattr(trace, name), np.shape(getattr(ref, name)))
            b = np.asarray(getattr(ref, name), dtype=np.float64)
            if a is None:
                return f"trace.{name} is missing, has the wrong shape or non-finite values"
            if not np.all(np.abs(a - b) <= SAFETY * 2 * rounding_gamma(10) * np.abs(b)):
                return f"trace.{name} differs from the reference's beyond 2γ_10 relative"
    except (TypeError, ValueError, AttributeError) as exc:
        return f"the trace cannot be compared with the reference's: {exc}"
    return None


def _mean_bounds(w, w_prev, rows):
    """(fresh mean, difference mean, e_fresh, e_diff) per coordinate for ∇f = w − z (module doc)."""
    m = rows.shape[0]
    now = w - rows
    fresh = now.sum(axis=0) / m
    a = np.abs(now).sum(axis=0) / m
    if w_prev is None:
        return fresh, None, rounding_gamma(m + 2) * a, None
    prev = w_prev - rows
    diff = (now - prev).sum(axis=0) / m
    a2 = a + np.abs(prev).sum(axis=0) / m
    return fresh, diff, rounding_gamma(m + 2) * a, rounding_gamma(m + 3) * a2


def _lmo_error(ball, v):
    q = ball.q
    return (q + 2) * rounding_gamma(ball.d + 6) * np.abs(v - ball.center) + U * np.abs(v)


def _compare(case, feasible, config, data, seed, noise_seed, got, want):
    label = case.name
    problem = _exact_parts(label, got, want)
    if problem is not None:
        return deterministic(False, detail=f"{label}: {problem}")
    count, d = want.iterates.shape
    poly = case.algorithm == "poly_sfw"
    arrays = {}
    fields = [("", "iterates", (count, d)), ("", "output", (d,)), ("", "final_iterate", (d,)),
              ("debug", "estimates", (count, d))]
    if not poly:
        fields += [("trace", "noisy_estimates", (count, d)), ("debug", "gradient_noise", (count, d)),
                   ("debug", "difference_noise", (count, d))]
    for owner, name, shape in fields:
        value = getattr(got if not owner else getattr(got, owner), name, None)
        arrays[name] = _array(value, shape)
        if arrays[name] is None:
            return deterministic(False, detail=f"{label}: {owner + '.' if owner else ''}{name} is missing, has the "
                                               f"wrong shape (want {shape}) or non-finite values")
    iterates = arrays["iterates"]
    start = feasible.vertices[0] if poly else feasible.center
    if not np.array_equal(iterates[0], start):
        return deterministic(False, detail=f"{label}: w_0^0 is not the data-independent start")
    if not np.array_equal(arrays["output"], iterates[int(want.trace.output_index)]):
        return deterministic(False, detail=f"{label}: the output is not the iterate at the output index (line 15)")

    trace = want.trace  # its discrete fields equal the subject's (checked above)
    streams = secret_seed(noise_seed, public_seeds=(seed,)).streams()
    path = np.vstack([iterates, arrays["final_iterate"][None, :]])
    worst = WorstGap()
    for k in range(count):
        r, t = int(trace.rounds[k]), int(trace.steps[k])
        where = f"{label}, step (r, t) = ({r}, {t})"
        eta = float(trace.step_sizes[k])
        rows = data[np.asarray(trace.batch_indices[k])]
        w, w_prev = path[k], (path[k - 1] if t >= 1 else None)
        fresh, diff, e_fresh, e_diff = _mean_bounds(w, w_prev, rows)
        rng = streams.generator(KEY, case.algorithm, "noise", r, t)
        if poly:
            N = N_hat = np.zeros(d)
            e_N = e_Nh = 0.0
            previous = arrays["estimates"][k - 1] if t >= 1 else None
        else:
            N = float(trace.sigma[k]) * rng.standard_normal(d)
            N_hat = float(trace.sigma_hat[k]) * rng.standard_normal(d) if t >= 1 else np.zeros(d)
            e_N, e_Nh = U * np.abs(N), U * np.abs(N_hat)
            worst.see(np.abs(arrays["gradient_noise"][k] - N), SAFETY * 2 * e_N, f"N_r^t at {where}")
            worst.see(np.abs(arrays["difference_noise"][k] - N_hat), SAFETY * 2 * e_Nh, f"N̂_r^t at {where}")
            worst.see(np.abs(arrays["estimates"][k] - fresh), SAFETY * 2 * e_fresh, f"fresh mean at {where}")
            previous = arrays["noisy_estimates"][k - 1] if t >= 1 else None
        if t == 0:
            estimate = fresh + N
            e_est = e_fresh + e_N + U * (np.abs(fresh) + np.abs(N))
        else:
            estimate = (1.0 - eta) * (previous + diff + N_hat) + eta * (fresh + N)
            e_est = ((1.0 - eta) * (e_diff + e_Nh) + eta * (e_fresh + e_N)
                     + rounding_gamma(8) * ((1.0 - eta) * (np.abs(previous) + np.abs(diff) + np.abs(N_hat))
                                            + eta * (np.abs(fresh) + np.abs(N))))
        released = arrays["estimates"][k] if poly else arrays["noisy_estimates"][k]
        worst.see(np.abs(released - estimate), SAFETY * 2 * e_est, f"estimate ∇_r^t at {where}")
        if poly:
            V = feasible.vertices
            scores = np.array([float(np.dot(V[j], released)) for j in range(V.shape[0])])
            s = float(trace.lap_scales[k])
            noise = rng.laplace(0.0, s, V.shape[0]) if s > 0 else np.zeros(V.shape[0])
            noisy = scores + noise
            e_score = rounding_gamma(d + 1) * (np.abs(V) @ np.abs(released)) + U * np.abs(noise)
            j = int(np.asarray(got.trace.selected)[k])
            best = int(np.argmin(noisy))
            if j != best:
                gap = noisy[j] - noisy[best]
                worst.see(gap, SAFETY * 2 * (e_score[j] + e_score[best]), f"vertex v_r^t at {where} (chose {j}, "
                                                                            f"the argmin is {best})")
            v, e_v = V[j], 0.0
        else:
            v = feasible.lmo(released)
            e_v = _lmo_error(feasible, v)
        w_next = (1.0 - eta) * w + eta * v
        e_w = rounding_gamma(3) * ((1.0 - eta) * np.abs(w) + eta * np.abs(v)) + eta * e_v
        worst.see(np.abs(path[k + 1] - w_next), SAFETY * 2 * e_w, f"iterate w_r^(t+1) at {where}")
    return deterministic(worst.ratio <= 1.0, statistic=worst.ratio, bound=1.0,
                         detail=f"{label}: {count} steps, discrete trace exact; "
                                + ("every step bitwise the recomputed one" if worst.ratio == 0 else
                                   f"worst gap / float64 bound {worst.ratio:.3g} at {worst.detail}"))


def _check(subject, ctx):
    ref = reference_subject()
    parts = []
    for case in ctx.budget.pick(quick=QUICK, full=FULL):
        seed, noise_seed, rng = _seeds(ctx, case)
        feasible, config, data = case.build(rng)
        want = _run(ref, case, feasible, config, data, seed, noise_seed)
        try:
            got = _run(subject, case, feasible, config, data, seed, noise_seed)
        except Exception as exc:  # noqa: BLE001 — a refusal of a run the reference completes is a failure
            parts.append(deterministic(False, detail=f"{case.name}: the subject raised {type(exc).__name__}: {exc} "
                                                     "on a run the reference completes"))
            break
        parts.append(_compare(case, feasible, config, data, seed, noise_seed, got, want))
        if parts[-1].verdict == FAIL:
            break
    return combine(parts, ctx)


# ---------------------------------------------------------------------------------------------------
# Mutants: the reference's run with one bug in its dynamics (the public trace's formulas kept)


def _mutated_dynamics(algorithm: str, bug: str):
    """The protocol's run with one bug: "lagged_difference" (line 10's Δ_r^t against w_r^{t−2} for t ≥ 2) or
    "stale_noise" (step (r, t ≥ 1) draws from the key of (r, t − 1)). The original run supplies the public schedule
    (batches, step sizes, scales); the iterates, choices, estimates and noises are recomputed with the bug."""

    def implementation(call):
        result = call.original()
        trace = result.trace
        data = np.asarray(call.data, dtype=np.float64)
        feasible = call.polytope if algorithm == "poly_sfw" else call.ball
        d = result.iterates.shape[1]
        streams = secret_seed(call.noise_seed, public_seeds=(call.seed,)).streams()
        estimator = RecursiveGradientEstimator(call.gradient, data, d)
        count = result.iterates.shape[0]
        iterates, estimates, noisy_all = np.empty((count, d)), np.empty((count, d)), np.empty((count, d))
        g_noise, d_noise, chosen = np.zeros((count, d)), np.zeros((count, d)), np.full(count, -1, dtype=np.int64)
        w = np.array(result.iterates[0])
        round_path = []
        for k in range(count):
            r, t = int(trace.rounds[k]), int(trace.steps[k])
            if t == 0:
                round_path = []
            round_path.append(w.copy())
            iterates[k] = w
            B, eta = np.asarray(trace.batch_indices[k]), float(trace.step_sizes[k])
            key_t = t - 1 if (bug == "stale_noise" and t >= 1) else t
            rng = streams.generator(KEY, algorithm, "noise", r, key_t)
            back = 3 if (bug == "lagged_difference" and t >= 2) else 2
            w_prev = round_path[-back] if t >= 1 else None
            if algorithm == "poly_sfw":
                G = estimator.start(w, B) if t == 0 else estimator.update(w, w_prev, B, eta)
                s = float(trace.lap_scales[k])
                if s == 0.0:
                    j = feasible.lmo(G)[1]
                else:
                    V = feasible.vertices
                    j = laplace_noisy_argmin(np.array([float(np.dot(V[i], G)) for i in range(V.shape[0])]), s, rng)
                v = feasible.vertices[j]
                chosen[k], estimates[k] = j, G
            else:
                N = float(trace.sigma[k]) * rng.standard_normal(d)
                if t == 0:
                    G = estimator.start(w, B, noise=N)
                else:
                    N_hat = float(trace.sigma_hat[k]) * rng.standard_normal(d)
                    G = estimator.update(w, w_prev, B, eta, difference_noise=N_hat, gradient_noise=N)
                    d_noise[k] = N_hat
                v = feasible.lmo(G)
                noisy_all[k], estimates[k], g_noise[k] = G, estimator.last_fresh, N
            w = (1.0 - eta) * w + eta * v
        new_trace = dataclasses.replace(trace, selected=chosen) if algorithm == "poly_sfw" else \
            dataclasses.replace(trace, noisy_estimates=noisy_all)
        debug = dataclasses.replace(result.debug, estimates=estimates, gradient_noise=g_noise,
                                    difference_noise=d_noise)
        return dataclasses.replace(result, output=iterates[trace.output_index].copy(), iterates=iterates,
                                   final_iterate=w, trace=new_trace, debug=debug)

    return implementation


def _shifted_batches(algorithm):
    """Rebind ``data`` so that the record at order position k is read as the one at position k + 1: the batches
    report their indices but read the records one place further along the public order."""

    def implementation(call):
        data = np.asarray(call.data, dtype=np.float64)
        order = public_order(call.seed, data.shape[0], key=(KEY, algorithm, "order"))
        shifted = np.empty_like(data)
        shifted[order] = data[np.roll(order, -1)]
        return call.original(data=shifted)

    return implementation


def _float32_iterates(result, call):
    """A backend that keeps Algorithm 1's iterates (and so the output) in float32."""
    iterates = np.asarray(result.iterates, dtype=np.float32).astype(np.float64)
    return dataclasses.replace(result, iterates=iterates, output=iterates[result.trace.output_index].copy())


def _float32_releases(result, call):
    """A backend that keeps Algorithm 6's released ∇̃_r^t in float32."""
    released = np.asarray(result.trace.noisy_estimates, dtype=np.float32).astype(np.float64)
    return dataclasses.replace(result, trace=dataclasses.replace(result.trace, noisy_estimates=released))


SFW_RUN = Claim(
    id="bgm21.backend.sfw_run",
    paper="bgm21",
    location="§4.1 Algorithm 1; §4.2 Algorithm 6 (rebuilt, bgm21.E1); randomness contract",
    statement=(
        "On the same public and secret seeds the subject's runs of Algorithm 1 (A_polySFW) and Algorithm 6 (A_nSFW) "
        "have the reference's public trace exactly (rounds, steps, batch sizes, batch indices, selected vertices, "
        "records used, output index) and its formula values within 2γ_10, and every step — the recursive estimate "
        "of lines 5, 10, 11 with Algorithm 6's Gaussian noises, the noisy vertex of lines 6 and 12 (Laplace "
        "report-noisy-min) or the LMO, and w_r^(t+1) — equal to the step recomputed in float64 from its own previous "
        "state and the secret draws, within the float64 one-step bound."
    ),
    kind="backend",
    requires=("poly_sfw", "noisy_sfw"),
    check=_check,
    mutants=(
        substitute("shifted_batch_poly", "Algorithm 1's batches read the records one place further along the public "
                                         "order than the indices they report", "poly_sfw",
                   _shifted_batches("poly_sfw")),
        substitute("shifted_batch_noisy", "Algorithm 6's batches read the records one place further along the "
                                          "public order than the indices they report", "noisy_sfw",
                   _shifted_batches("noisy_sfw")),
        substitute("lagged_difference", "line 10's difference taken against w_r^(t-2) instead of w_r^(t-1) (the "
                                        "kept previous iterate off by one)", "poly_sfw",
                   _mutated_dynamics("poly_sfw", "lagged_difference")),
        substitute("lagged_difference_noisy", "Algorithm 6's difference term taken against w_r^(t-2)", "noisy_sfw",
                   _mutated_dynamics("noisy_sfw", "lagged_difference")),
        substitute("stale_laplace", "step (r, t) of Algorithm 1 re-uses the Laplace draw of (r, t - 1)", "poly_sfw",
                   _mutated_dynamics("poly_sfw", "stale_noise")),
        substitute("stale_gaussian", "step (r, t) of Algorithm 6 re-uses the Gaussian draws of (r, t - 1)",
                   "noisy_sfw", _mutated_dynamics("noisy_sfw", "stale_noise")),
        on_output("float32_iterates", "Algorithm 1's iterates kept in float32 (the near miss)", "poly_sfw",
                  _float32_iterates),
        on_output("float32_releases", "Algorithm 6's released estimates kept in float32 (the near miss)",
                  "noisy_sfw", _float32_releases),
    ),
)
