"""nsnc_improved Algorithm 2 (O2NC with clipped online gradient descent): the deterministic invariants that hold
for ANY oracle outputs, and the Section 5 remark that the output lies in 𝔹(x0, D·T).

Algorithm 2 as the paper writes it (T = K·M steps, Δ_1 = 0, s_t ~ U[0, 1]):

    x_t = x_{t−1} + Δ_t,   z_t = x_{t−1} + s_t·Δ_t,   g̃_t = O(z_t),   Δ_{t+1} = clip_D(Δ_t − η·g̃_t),
    x̄_k = (1/M) Σ_{t in block k} z_t,   output x̄_{k*}, k* ~ U{1..K},

with clip_D(v) = min(1, D/‖v‖)·v and the learner NOT restarted between blocks. Whatever the oracle returns, hence:
‖Δ_t‖ ≤ D; ‖x_t − x_{t−1}‖ ≤ D; ‖z_t − z_{t−1}‖ ≤ 2D (also across blocks: what the increment sensitivities of
Lemma 3.3 rest on); ‖z_j − z_i‖ ≤ (j − i + s_j − s_i)·D for i < j; every z of block k lies within M·D of x̄_k (the
Goldstein radius argument of Proposition 2.6, with M·D ≤ α); ‖output − x0‖ ≤ D·T (Section 5, the domain of
Proposition 5.1).

The check runs the subject's ``nsnc_improved`` with ``record_path=True`` and reads z_t, x_t, Δ_t, s_t, g̃_t, the
block averages, the output and its index: on a private single-pass run on capped ridges, a private multi-pass run,
and on adversarial oracles — the first-order oracle with Σ = 1 and B1 = 1 releases exactly the "gradient" it is
given at z_t + y_t, so a gradient function that returns the rows of the data (entries 0, ±1e12, ±1e150, alternating
in sign) or that always points back to x0 with size 1e12 makes the subject's Algorithm 2 run on arbitrary oracle
outputs (non-private runs). It also drives the building blocks the reference subject runs,
``reference.o2nc.o2nc`` with ``reference.o2nc.ClippedOGD``, with adversarial oracle callables (a part that does not
depend on the subject).

Tolerances are float64 rounding only: a point x + sΔ or x + Δ is one rounded operation per coordinate, so a point
recomputed by the check differs from the subject's by at most a few units in the last place of the largest |x| or
|Δ| (γ_{4(T+1)}·scale per coordinate, whichever order of sums a backend uses); one clip adds γ_{2d+8}·D.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from proofs_checks.authoring import Claim, deterministic, rebind, rounding_gamma
from reference.o2nc import ClippedOGD, o2nc
from reference.objectives import RidgeSum
from reference.rng import Streams, sample_sphere

from ._variants import LinearGradient, LinearLoss, RidgeLoss, path, records_needed, sample_rows, variant

FIELDS = ("releases", "query_points", "iterates", "steps", "segment_points", "block_averages", "output",
          "final_iterate")


def _clip(v, radius):
    """The check's own clip_D(v) = v·min(1, D/‖v‖) on rows of v (..., d); norms of huge rows taken after scaling."""
    peak = np.max(np.abs(v), axis=-1, keepdims=True)
    safe = np.where(peak > 0, peak, 1.0)
    length = np.linalg.norm(v / safe, axis=-1, keepdims=True) * safe
    return np.where(length > radius, v * (radius / np.where(length > 0, length, 1.0)), v)


def _norms(v):
    peak = np.max(np.abs(v), axis=-1)
    safe = np.where(peak > 0, peak, 1.0)
    return np.linalg.norm(v / safe[..., None], axis=-1) * safe


class OutwardGradient:
    """A "gradient" of size ``size`` that always points back to x0: −g̃ points away from x0, so the learner's step
    saturates at ‖Δ‖ = D in the outward direction and the iterates run away from x0 as fast as Algorithm 2 allows."""

    def __init__(self, x0, size: float):
        self.x0, self.size = np.asarray(x0, dtype=np.float64), float(size)

    def __call__(self, x, z):
        offset = np.asarray(x, dtype=np.float64) - self.x0
        length = np.linalg.norm(offset, axis=-1, keepdims=True)
        unit = np.where(length > 0, offset / np.where(length > 0, length, 1.0), 0.0)
        if unit.ndim == 1 and not np.any(unit):
            unit = np.eye(unit.shape[0])[0]
        return (-self.size * unit) + np.zeros(np.broadcast_shapes(np.shape(x), np.shape(z)[:-1] + (unit.shape[-1],)))


def _adversarial_rows(d: int, count: int, gen) -> np.ndarray:
    """Oracle outputs for the first-order oracle with B1 = 1: 0, ±1e12·u and ±1e150·u (unit u), alternating in sign,
    and moderate random vectors."""
    rows = sample_sphere(gen, count, d)
    scales = np.array([0.0, 1e12, 1e150, 1.0, 1e12, 1e-300])[np.arange(count) % 6]
    rows = rows * scales[:, None]
    rows[1::2] *= -1.0
    return rows


def _specs(ctx):
    """The subject's runs: (label, objective, data, x0, keywords), K·M steps each."""
    gen = ctx.generator("alg2", "runs")
    K = ctx.budget.pick(quick=4, full=12)
    specs = []
    # (a) private single pass on capped ridges; periods (Σ = 3) that straddle the blocks (M = 5)
    d, M, S, B1, B2 = 3, 5, 3, 3, 1
    population = RidgeSum.random(d, 40, gen, profile="capped", tau=0.5, offset_scale=0.5)
    data = sample_rows(population.data, records_needed(K * M, S, B1, B2), gen)
    specs.append(("single pass, capped ridges, private (σ = 0.3)", RidgeLoss(d, 1.0, "capped", 0.5), data,
                  np.array([0.7, -0.4, 0.2]),
                  dict(oracle="single_pass", blocks=K, block_length=M, tree_size=S, B1=B1, B2=B2, smoothing_radius=0.4,
                       step_bound=0.05, step_size=0.1, directions=2, noise_std=0.3, lipschitz=1.0, dp_delta=1e-6,
                       noise_seed=int(gen.integers(2**62)) + 2**62)))
    # (b) private multi pass on linear losses, Σ = 2, M = 3
    data = 0.5 * sample_sphere(gen, 3, d)
    specs.append(("multi pass, linear losses, private (σ1 = 0.4, σ2 = 0.2)", LinearLoss(d), data,
                  np.array([-1.0, 2.0, 0.5]),
                  dict(oracle="multi_pass", blocks=K, block_length=3, tree_size=2, smoothing_radius=0.3,
                       step_bound=0.02, step_size=0.5, directions=1, noise_std=(0.4, 0.2), lipschitz=0.5,
                       dp_delta=1e-6, noise_seed=int(gen.integers(2**62)) + 2**62)))
    # (c), (d) adversarial oracle outputs: Algorithm 5 with Σ = 1, B1 = 1 releases the given vectors exactly
    for d, M, scale_x in ((3, 4, 1.0), (2, 6, 1e6)):
        data = _adversarial_rows(d, K * M, gen)
        specs.append((f"adversarial oracle outputs 0, ±1e12, ±1e150 (d = {d}, |x0| ~ {scale_x:g})", LinearGradient(d),
                      data, scale_x * np.array([4.0, -3.0, 1.0])[:d],
                      dict(oracle="first_order", blocks=K, block_length=M, tree_size=1, B1=1, B2=1,
                           smoothing_radius=0.1, step_bound=0.01, step_size=1.0, directions=1, noise="none")))
    # (e) an adversary that always pushes the iterates away from x0 (‖g̃‖ = 1e12)
    x0 = np.array([0.5, 0.25, -1.0])
    specs.append(("adversarial oracle pushing away from x0 (‖g̃‖ = 1e12)", OutwardGradient(x0, 1e12),
                  np.zeros((K * 5, 3)), x0,
                  dict(oracle="first_order", blocks=K, block_length=5, tree_size=1, B1=1, B2=1, smoothing_radius=1e-3,
                       step_bound=0.03, step_size=1e-3, directions=1, noise="none")))
    return specs


def _problems(label, a, K, M, d, D, eta, x0):
    """The violated invariants of Algorithm 2 on one run, and the worst ratios."""
    T = K * M
    z, g, s = a["query_points"].reshape(T, d), a["releases"].reshape(T, d), a["segment_points"].reshape(T)
    steps = a["steps"].reshape(T, d)
    iterates = a["iterates"]
    x = np.concatenate([iterates[0, :1], iterates[:, 1:].reshape(T, d)])  # x_0..x_T
    scale = max(float(np.max(np.abs(x))), float(np.max(np.abs(x0))), D)
    slack = rounding_gamma(4 * (T + 1)) * scale
    norm_slack = math.sqrt(d) * slack
    clip_slack = 16 * rounding_gamma(2 * d + 8) * D
    problems, worst = [], {"step": 0.0, "move": 0.0, "spread": 0.0, "output": 0.0}

    def fail(text):
        problems.append(f"{label}: {text}")

    if np.any(x[0] != x0):
        fail("x_0 is not the x0 the run was given")
    if K > 1 and np.any(np.abs(iterates[1:, 0] - iterates[:-1, M]) > slack):
        fail("a block does not start where the previous one ended (x carried over)")
    if np.any(steps[0] != 0.0):
        fail("Δ_1 ≠ 0")
    expected = _clip(steps[:-1] - eta * g[:-1], D)
    error = _norms(steps[1:] - expected) if T > 1 else np.zeros(0)
    if np.any(error > clip_slack):
        t = int(np.argmax(error)) + 1
        restart = " (a block boundary: the learner was restarted)" if t % M == 0 and not np.any(steps[t]) else ""
        fail(f"Δ_{t + 1} ≠ clip_D(Δ_{t} − η g̃_{t}) (off by {np.max(error):.3g}){restart}")
    lengths = _norms(steps)
    worst["step"] = float(np.max(lengths)) / D
    if np.any(lengths > D * (1 + rounding_gamma(d + 2))):
        fail(f"‖Δ_t‖ = {np.max(lengths)!r} > D = {D!r}")
    if np.any(np.abs(x[1:] - x[:-1] - steps) > slack):
        fail("x_t ≠ x_(t−1) + Δ_t")
    if np.any((s < 0) | (s > 1)):
        fail("a segment draw s_t lies outside [0, 1]")
    if np.any(np.abs(z - (x[:-1] + s[:, None] * steps)) > 2 * slack):
        fail(f"z_t ≠ x_(t−1) + s_t·Δ_t (off by {np.max(np.abs(z - (x[:-1] + s[:, None] * steps))):.3g})")
    moves = _norms(z[1:] - z[:-1])
    worst["move"] = float(np.max(moves, initial=0.0)) / (2 * D)
    if np.any(moves > 2 * D + norm_slack):
        fail(f"‖z_t − z_(t−1)‖ = {np.max(moves)!r} > 2D = {2 * D!r}")
    for i in range(T - 1):  # ‖z_j − z_i‖ ≤ (j − i + s_j − s_i)·D, i < j
        gaps = _norms(z[i + 1:] - z[i])
        allowed = (np.arange(1, T - i) + s[i + 1:] - s[i]) * D
        if np.any(gaps > allowed + norm_slack):
            fail(f"‖z_j − z_{i + 1}‖ exceeds (j − i + s_j − s_i)·D")
            break
    averages = a["block_averages"]
    if np.any(np.abs(averages - z.reshape(K, M, d).mean(axis=1)) > 2 * slack):
        fail("x̄_k ≠ (1/M) Σ_(t in block k) z_t")
    spread = _norms(z.reshape(K, M, d) - averages[:, None, :])
    worst["spread"] = float(np.max(spread)) / (M * D)
    if np.any(spread > M * D + norm_slack):
        fail(f"‖z_t − x̄_k‖ = {np.max(spread)!r} > M·D = {M * D!r}")
    index = a["output_index"]
    if not (isinstance(index, (int, np.integer)) and 0 <= index < K) or np.any(a["output"] != averages[int(index)]):
        fail("the output is not the block average x̄_(k*) its output_index names")
    distance = float(_norms(a["output"] - x0))
    worst["output"] = distance / (D * T)
    if distance > D * T + norm_slack:
        fail(f"‖output − x0‖ = {distance!r} > D·T = {D * T!r} (Section 5)")
    if np.any(np.abs(a["final_iterate"] - x[-1]) > slack):
        fail("final_iterate ≠ x_T")
    return problems, worst


def _subject_runs(subject, ctx):
    out = []
    for label, objective, data, x0, kw in _specs(ctx):
        seed = int(ctx.generator("alg2", "seed", label).integers(2**62))
        result = subject.nsnc_improved(objective, data, x0, seed=seed, record_path=True, **kw)
        K, M, d = kw["blocks"], kw["block_length"], x0.shape[0]
        arrays = path(result, K, M, d, fields=FIELDS)
        if not isinstance(arrays, dict):
            return dataclasses.replace(arrays, detail=f"{label}: {arrays.detail}")
        arrays["output_index"] = result.output_index
        out.append((label, arrays, K, M, d, kw["step_bound"], kw["step_size"], x0))
    return out


def _driver_runs(ctx):
    """``reference.o2nc.o2nc`` with ``ClippedOGD`` (not restarted) and adversarial oracle callables: the building
    blocks of the reference subject, on outputs no loss needs to produce."""
    gen = ctx.generator("alg2", "driver")
    out = []
    d, K, M, D, eta = 3, ctx.budget.pick(quick=3, full=8), 6, 0.02, 0.7
    x0 = np.array([1.0, -2.0, 3.0])
    table = _adversarial_rows(d, K * M, gen)
    oracles = {
        "the table of 0, ±1e12, ±1e150": lambda k, j, z: table[(k - 1) * M + j - 1],
        "±1e300 by the sign of the first coordinate": lambda k, j, z: np.sign(z[0] - x0[0] + 1e-300) * 1e300
        * np.array([1.0, -1.0, 0.5]),
        "always 0": lambda k, j, z: np.zeros(d),
    }
    for label, oracle in oracles.items():
        trajectory = o2nc(oracle, ClippedOGD(d, D, eta), x0, M, K, rng_public=Streams(int(gen.integers(2**62))),
                          record_path=True)
        arrays = {"releases": np.asarray(trajectory.oracle_outputs, dtype=np.float64),
                  "query_points": trajectory.query_points, "iterates": trajectory.iterates,
                  "steps": trajectory.steps, "segment_points": trajectory.segment_points,
                  "block_averages": trajectory.epoch_averages, "output": trajectory.output,
                  "final_iterate": trajectory.final_point, "output_index": trajectory.output_index}
        out.append((f"reference driver, oracle {label}", arrays, K, M, d, D, eta, x0))
    return out


def _check_invariants(subject, ctx):
    runs = _subject_runs(subject, ctx)
    if not isinstance(runs, list):
        return runs
    runs += _driver_runs(ctx)
    problems, worst = [], {"step": 0.0, "move": 0.0, "spread": 0.0, "output": 0.0}
    for label, arrays, K, M, d, D, eta, x0 in runs:
        found, ratios = _problems(label, arrays, K, M, d, D, eta, x0)
        problems += found
        worst = {key: max(worst[key], ratios[key]) for key in worst}
    return deterministic(
        not problems, statistic=worst["move"], bound=1.0, counterexample=problems[:3] or None,
        detail=(f"{len(runs)} runs ({len(runs) - 3} of the subject, 3 of the reference driver): "
                f"max ‖Δ_t‖/D = {worst['step']:.15g}, max ‖z_t − z_(t−1)‖/(2D) = {worst['move']:.6g}, "
                f"max ‖z_t − x̄_k‖/(M·D) = {worst['spread']:.6g}, max ‖output − x0‖/(D·T) = {worst['output']:.6g}"
                + (f"; violations: {'; '.join(problems[:3])}" if problems else "")))


INVARIANTS = Claim(
    id="nsnc_improved.alg2.invariants",
    paper="nsnc_improved",
    location="Algorithm 2; proof of Proposition 2.6 (block points within M·D of x̄_k); Section 5 (output in "
             "𝔹(x0, D·T)); Lemma 3.3 (‖z_t − z_(t−1)‖ ≤ 2D)",
    statement=(
        "For any oracle outputs, Algorithm 2 keeps Δ_1 = 0 and Δ_(t+1) = clip_D(Δ_t − η g̃_t) over all T = K·M steps "
        "(the learner is not restarted between blocks), so ‖Δ_t‖ ≤ D, x_t = x_(t−1) + Δ_t, z_t = x_(t−1) + s_tΔ_t with "
        "s_t ∈ [0, 1], ‖z_t − z_(t−1)‖ ≤ 2D (across blocks too), ‖z_j − z_i‖ ≤ (j − i + s_j − s_i)D, x̄_k is the mean "
        "of block k's M query points and every one of them lies within M·D of it, and the output x̄_(k*) lies in "
        "𝔹(x0, D·T); exact to float64 rounding, on private runs and on adversarial oracle outputs (0, ±1e12, "
        "±1e150, a push away from x0)."
    ),
    kind="deterministic",
    requires=("nsnc_improved",),
    check=_check_invariants,
    mutants=(
        rebind("restarted_learner", "the learner restarted at Δ = 0 at every block (restart_blocks=True, not the "
               "paper's Algorithm 2)", "nsnc_improved", restart_blocks=True),
        variant("unclipped_learner"),
        variant("clip_radius_5pct"),
        variant("z_after_step"),
    ),
)
