"""spider_sosp Algorithm 2 (with the oracles of Algorithm 3): backend claim — a subject's whole run agrees with the
reference draw for draw (docs/design.md, Precision and Randomness contract).

For each configuration (``CosineFamily`` and ``QuadraticFamily`` of ``reference.objectives_sosp``; one tree for the
run and a tree per segment; perturbations on and off; ``reset_drift_on_perturb``; ``enforce_constants`` with G and M
small enough that the clips of O1 and O2 are active; a run that halts on data and runs that stop at the horizon; σ
given explicitly) the subject's ``stochastic_spider`` and the reference's run on the same public seed and the same
explicit secret seed (``noise_seed``), and:

* exact (draws and discrete facts): the subject's public trace — kinds, batch sizes, tree leaves, perturbation steps,
  the batch indices (the public permutation ("spider_sosp", "permutation") read in consecutive slices), records used
  and available, the halt reason and the next batch size — equals the reference's, and equals the schedule the
  reference's ``replay_schedule`` recomputes from the SUBJECT's own releases (the decisions are functions of the
  release); x_0 is returned as given, and the debug trace's perturbation rows are exactly 0 off the perturbation
  steps;
* every step t against the step recomputed in float64 from the subject's OWN previous values — its x_t, x_(t−1),
  ∇_(t−1) (debug trace) and ‖g̃_(t−1)‖ (the O2 clip radius) —, with the reference's ``GradientOracles`` on the same
  batch: ∇*_t = O1(x_t) or ∇_(t−1) + O2(x_t, x_(t−1)); TREE*(leaf_t) = Σ_(b ∈ NODE(leaf)) σ·z_(s_b) from the secret
  key ("spider_sosp", "noise") (z_s the s-th standard_normal(d) draw, s_b the step that drew node b of the step's
  tree); g*_t from ("spider_sosp", "perturbation", t) (``saddle_perturbation``); g̃*_t = ∇*_t + TREE* (+ g*_t); and
  x*_(t+1) = x_t − η g̃_t from the subject's x_t and g̃_t. The subject's ∇_t, tree noise, perturbation, release
  g̃_t and x_(t+1) are each compared with these within the bound below, and its drift (the value line 4 tests) with
  the replay's Σ‖g̃‖ of its own releases. This local check needs no propagation through the run (near the saddle
  the iteration amplifies a difference by up to 1 + |λ_min|/M per step, and every branch is discontinuous in the
  release): a float64 implementation of the algorithm is exactly one whose every step is the step from its own
  previous values up to its own rounding;
* a NaN or inf anywhere in the subject's result, a missing field, a wrong shape, or a refusal of a run the reference
  completes is a failure.

The bound (Higham's standard model, u = 2⁻⁵³, γ_n = nu/(1 − nu), first order). Both the subject and this module
evaluate each quantity in float64, each within a one-sided bound e of the exact value, so the two differ by at most
2e; SAFETY = 2 multiplies the total for the dropped second-order terms. Bitwise agreement passes with ratio 0. In
Euclidean norms, e_i per record i of the batch (one-sided):

  record gradient, cosine f = Σ_j c_j s_j cos(x_j − z_j): |Δ∂_j| ≤ c_j u|x_j − z_j| + γ_4|∂_j|  (the difference, sin
            faithful to 2u, the product); quadratic ∇f = Ax − z: |Δ∂_j| ≤ γ_(d+1)(Σ_k |A_jk x_k| + |z_j|)
  O2 term v_i = ∇f(x_t; z_i) − ∇f(x_(t−1); z_i): e(x_t) + e(x_(t−1)) + u‖v_i‖
  enforce_constants' clip to r (G at O1, ‖g̃_(t−1)‖ at O2; 1-Lipschitz in the vector and in r): + |Δr| +
            γ_(d+4)(r + ‖v_i‖) with |Δr| ≤ γ_(d+2) r (the radius recomputed as a norm at O2, 0 at O1)
  mean of the b terms w_i in any order: ‖Δ‖ ≤ (2Σ_i e_i + 2γ_(b+1) Σ_i ‖w_i‖)/b = E_b
  ∇_t: O1: E_b;  O2 (∇_(t−1) + mean): E_b + 2u‖∇*_t‖
  TREE(leaf), a sum of n = |NODE(leaf)| products σ·z: 2γ_(n+1) Σ_b ‖σ z_(s_b)‖
  perturbation z·(ζ/√d) in any association: 2γ_3 ‖g*_t‖
  release, two or three additions: E_∇ + E_TREE + E_g + 2γ_2 (‖∇*_t‖ + ‖TREE*‖ + ‖g*_t‖)
  x_(t+1) = x_t − η g̃_t (η = 1/M, or g̃/M): per coordinate 2(γ_2 |η g̃_t,j| + u|x*_(t+1),j|)
  drift (Σ of the k norms since the last reset, κ at t = 0): 2γ_(d+k+2) · drift  (the terms are ≥ 0)

Mutants (each a realistic backend bug in an otherwise reference loop): the perturbation drawn from the PUBLIC seed;
the tree noise re-drawn per step (every node of NODE(leaf) a fresh draw, nothing shared between steps); every batch
read one record further along the public order than the batch it reports; b_t from ‖g̃_(t−2)‖ (the norm of the wrong
step); the drift accumulating ‖g̃‖² instead of ‖g̃‖; and the releases kept in float32 (the near miss: a relative
error of 2⁻²⁴, against a bound of a few 2⁻⁵³).
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
    same_value,
    substitute,
)
from reference.algorithms.spider_sosp import (
    KEY,
    GradientOracles,
    NonPrivateDebugTrace,
    PublicTrace,
    SpiderConfig,
    SpiderResult,
    adaptive_batch_size,
    public_permutation,
    replay_schedule,
    saddle_perturbation,
)
from reference.mechanisms import TreeMechanism, tree_node
from reference.objectives_sosp import CosineFamily, QuadraticFamily
from reference.precision import norm
from reference.rng import Streams
from reference.secrets import secret_seed

SAFETY = 2.0
U = UNIT_ROUNDOFF


# ---------------------------------------------------------------------------------------------------
# Configurations


COS2 = CosineFamily([1.0, 1.0], [1.0, -1.0], 0.5)
COS3 = CosineFamily([1.0, 0.7, 1.3], [1.0, -1.0, 1.0], 0.5)
QUAD3 = QuadraticFamily(np.array([[1.5, 0.3, 0.0], [0.3, 1.0, -0.2], [0.0, -0.2, 0.6]]), 0.8, 4.0)


@dataclasses.dataclass(frozen=True)
class Case:
    """One run: a family, n records, the start and the SpiderConfig fields that vary (the rest below)."""

    name: str
    family: object
    n: int
    x0: tuple
    fields: dict

    def config(self) -> SpiderConfig:
        base = dict(d=self.family.d, smoothness=self.family.smoothness, alpha=0.3, epsilon=4.0, kappa=1.0,
                    batch_size=12, threshold=0.6, freeze_steps=2, perturbation_scale=0.3, noise_std=0.05)
        return SpiderConfig(**{**base, **self.fields})


QUICK = (
    Case("cosine d=2, one tree, perturbations, horizon", COS2, 220, (0.05, -0.02), dict(steps=24)),
    Case("quadratic d=3, tree per segment, reset_drift_on_perturb, enforce_constants (clips active), halts on data",
         QUAD3, 70, (0.4, -0.3, 0.2),
         dict(tree_scope="segment", reset_drift_on_perturb=True, enforce_constants=True, lipschitz=1.0,
              smoothness=1.2, kappa=0.8, batch_size=6)),
    Case("cosine d=3, tree per segment, no perturbation, enforce_constants (clips active), horizon", COS3, 200,
         (0.3, 0.1, -0.2),
         dict(tree_scope="segment", perturb=False, enforce_constants=True, lipschitz=0.6, smoothness=0.9,
              steps=20, noise_std=0.1)),
)
FULL = QUICK + (
    Case("cosine d=3, one tree, reset_drift_on_perturb, ε = 1, halts on data", COS3, 700, (0.01, 0.0, -0.01),
         dict(epsilon=1.0, reset_drift_on_perturb=True, kappa=1.5, batch_size=20, threshold=1.0)),
    Case("quadratic d=3, one tree, enforce_constants, horizon", QUAD3, 600, (1.0, -1.0, 0.5),
         dict(enforce_constants=True, lipschitz=1.5, steps=60, noise_std=0.2, freeze_steps=4)),
    Case("cosine d=2, tree per segment, perturbations, halts on data", COS2, 500, (0.0, 0.0),
         dict(tree_scope="segment", batch_size=25, kappa=2.0, threshold=1.0, freeze_steps=1)),
)


def _seeds(ctx, case):
    rng = ctx.generator("run", case.name)
    return int(rng.integers(2**62)), int(rng.integers(2**62)) + 2**62, rng


# ---------------------------------------------------------------------------------------------------
# The float64 bounds (module doc)


def _gradient_error(family, x, z, g) -> np.ndarray:
    """One-sided per-coordinate bound of one float64 evaluation of ∇f(x; z) = g."""
    if isinstance(family, CosineFamily):
        return family.c * U * np.abs(x - z) + rounding_gamma(4) * np.abs(g)
    d = family.d
    return rounding_gamma(d + 1) * (np.abs(family.A) @ np.abs(x) + np.abs(z))


def _estimate_bound(family, config, kind, x, x_previous, rows, radius):
    """(‖Δ mean‖ bound E_b, the recomputed mean's terms) for one step's batch (module doc)."""
    d = config.d
    errors, norms = [], []
    for z in rows:
        g = family.gradient(x, z)
        e = float(np.linalg.norm(_gradient_error(family, x, z, g)))
        if kind == "O2":
            g_prev = family.gradient(x_previous, z)
            g = g - g_prev
            e += float(np.linalg.norm(_gradient_error(family, x_previous, z, g_prev))) + U * norm(g)
        if config.enforce_constants:
            length = norm(g)
            d_radius = 0.0 if kind == "O1" else rounding_gamma(d + 2) * radius
            e += d_radius + rounding_gamma(d + 4) * (radius + length)
            if length > radius:
                g = g * (radius / length)
        errors.append(e)
        norms.append(norm(g))
    b = len(rows)
    return (2 * sum(errors) + 2 * rounding_gamma(b + 1) * sum(norms)) / b


def _noise_rows(config, noise_seed, seed, steps):
    """ξ_s = σ z_s, s = 0..steps−1: the tree's draws from the secret key ("spider_sosp", "noise")."""
    rng = secret_seed(noise_seed, public_seeds=(seed,)).streams().generator(KEY, "noise")
    return np.array([config.noise_std * rng.standard_normal(config.d) for _ in range(steps)]).reshape(steps, config.d)


def _tree(xi, t, leaf):
    """(TREE(leaf) of step t, Σ‖ξ_b‖, |NODE(leaf)|): the tree of step t started at step t − leaf + 1."""
    first = t - leaf + 1
    total, size, nodes = np.zeros(xi.shape[1]), 0.0, tree_node(leaf)
    for _, b in nodes:
        total = total + xi[first + b - 1]
        size += norm(xi[first + b - 1])
    return total, size, len(nodes)


# ---------------------------------------------------------------------------------------------------
# Comparison


def _array(value, shape):
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return a if a.shape == shape and np.all(np.isfinite(a)) else None


TRACE_FIELDS = ("kinds", "batch_sizes", "leaves", "perturbation_steps", "records_used", "records_available",
                "halt_reason", "next_batch_size")


def _compare(case, config, data, x0, seed, noise_seed, got, want):
    label = case.name
    trace, ref = got.trace, want.trace
    steps, d = len(ref.kinds), config.d
    try:
        for name in TRACE_FIELDS:
            if not same_value(getattr(trace, name), getattr(ref, name)):
                return deterministic(False, detail=f"{label}: trace.{name} {getattr(trace, name)!r} != reference "
                                                   f"{getattr(ref, name)!r}")
        if len(trace.batch_indices) != steps or not all(np.array_equal(np.asarray(a), np.asarray(b))
                                                        for a, b in zip(trace.batch_indices, ref.batch_indices)):
            return deterministic(False, detail=f"{label}: the batch indices are not the reference's (the public "
                                               "order ('spider_sosp', 'permutation') read in consecutive slices)")
    except (TypeError, ValueError) as exc:
        return deterministic(False, detail=f"{label}: the trace cannot be compared with the reference's: {exc}")
    arrays = {}
    for owner, name in (("", "iterates"), ("trace", "released"), ("trace", "drift"), ("debug", "estimates"),
                        ("debug", "tree_noise"), ("debug", "perturbations"), ("", "initial_point")):
        value = getattr(got if not owner else getattr(got, owner), name, None)
        shape = (d,) if name == "initial_point" else (steps,) if name == "drift" else (steps, d)
        arrays[name] = _array(value, shape)
        if arrays[name] is None:
            return deterministic(False, detail=f"{label}: {owner + '.' if owner else ''}{name} is missing, has the "
                                               f"wrong shape (want {shape}) or non-finite values")
    if not np.array_equal(arrays["initial_point"], x0):
        return deterministic(False, detail=f"{label}: initial_point is not the x_0 given")
    released, iterates = arrays["released"], arrays["iterates"]
    try:
        replay = replay_schedule(released, config, data.shape[0])
    except ValueError as exc:
        return deterministic(False, detail=f"{label}: the subject's release is not one a run with this config "
                                           f"produces: {exc}")
    for name in ("kinds", "batch_sizes", "leaves", "perturbation_steps", "records_used", "halt_reason",
                 "next_batch_size"):
        if not same_value(getattr(replay, name), getattr(trace, name)):
            return deterministic(False, detail=f"{label}: {name} recomputed from the subject's own releases "
                                               f"({getattr(replay, name)!r}) != its trace's ({getattr(trace, name)!r})")
    perturbed = set(int(t) for t in trace.perturbation_steps)
    off = [t for t in range(steps) if t not in perturbed]
    if np.any(arrays["perturbations"][off]):
        return deterministic(False, detail=f"{label}: a nonzero perturbation off the perturbation steps")

    worst = WorstGap()
    family, eta = case.family, config.step_size
    xi = _noise_rows(config, noise_seed, seed, steps)
    oracles = GradientOracles(family.gradient, data, public_permutation(seed, data.shape[0]), d=d,
                              lipschitz=config.lipschitz, smoothness=config.smoothness,
                              enforce_constants=config.enforce_constants)
    path = np.vstack([x0[None, :], iterates])
    count, drift_terms = 0, 0  # drift_0 = κ: no norm in it
    for t in range(steps):
        where = f"{label}, step t = {t} ({trace.kinds[t]})"
        x, kind, b = path[t], ref.kinds[t], int(ref.batch_sizes[t])
        rows = data[np.asarray(ref.batch_indices[t])]
        # the drift line 4 tests, against Σ‖g̃‖ of the subject's own releases (the replay)
        worst.see(abs(arrays["drift"][t] - replay.drift[t]),
                  SAFETY * 2 * rounding_gamma(d + drift_terms + 2) * abs(replay.drift[t]), f"drift at {where}")
        reset = kind == "O1" or (t in perturbed and config.reset_drift_on_perturb)
        drift_terms = 1 if reset else drift_terms + 1  # the norms in drift_(t+1), since the last reset
        if kind == "O1":
            estimate = oracles.o1(x, b)
            radius = config.lipschitz
            e_est = _estimate_bound(family, config, kind, x, None, rows, radius)
        else:
            radius = norm(released[t - 1])
            estimate = arrays["estimates"][t - 1] + oracles.o2(x, path[t - 1], b, clip_radius=radius)
            e_est = (_estimate_bound(family, config, kind, x, path[t - 1], rows, radius)
                     + 2 * U * norm(estimate))
        worst.see(norm(arrays["estimates"][t] - estimate), SAFETY * e_est, f"estimate ∇_t at {where}")
        noise, size, nodes = _tree(xi, t, int(ref.leaves[t]))
        e_noise = 2 * rounding_gamma(nodes + 1) * size
        worst.see(norm(arrays["tree_noise"][t] - noise), SAFETY * e_noise, f"tree noise TREE(leaf) at {where}")
        exact = estimate + noise
        e_release = e_est + e_noise + 2 * rounding_gamma(2) * (norm(estimate) + norm(noise))
        if t in perturbed:
            g = saddle_perturbation(secret_seed(noise_seed, public_seeds=(seed,)).streams().generator(
                KEY, "perturbation", t), d, config.perturbation_scale)
            e_g = 2 * rounding_gamma(3) * norm(g)
            worst.see(norm(arrays["perturbations"][t] - g), SAFETY * e_g, f"perturbation g_t at {where}")
            exact = exact + g
            e_release += e_g + 2 * rounding_gamma(2) * norm(g)
        worst.see(norm(released[t] - exact), SAFETY * e_release, f"release g̃_t at {where}")
        x_next = x - eta * released[t]
        bound = SAFETY * 2 * (rounding_gamma(2) * np.abs(eta * released[t]) + U * np.abs(x_next))
        gap = np.abs(iterates[t] - x_next)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(gap == 0, 0.0, gap / bound)
        worst.see(float(np.max(ratio)), 1.0, f"iterate x_(t+1) at {where}")
        count += 1
    return deterministic(worst.ratio <= 1.0, statistic=worst.ratio, bound=1.0,
                         detail=f"{label}: {count} steps, trace exact (halt: {ref.halt_reason}); "
                                + ("every step bitwise the recomputed one" if worst.ratio == 0 else
                                   f"worst gap / float64 bound {worst.ratio:.3g} at {worst.detail}"))


def _check(subject, ctx):
    ref = reference_subject()
    parts = []
    for case in ctx.budget.pick(quick=QUICK, full=FULL):
        seed, noise_seed, rng = _seeds(ctx, case)
        config = case.config()
        data = case.family.sample(rng, case.n)
        x0 = np.array(case.x0, dtype=np.float64)
        want = ref.stochastic_spider(case.family.gradient, data, x0, config, seed=seed, noise_seed=noise_seed)
        try:
            got = subject.stochastic_spider(case.family.gradient, data, x0.copy(), config, seed=seed,
                                            noise_seed=noise_seed)
        except Exception as exc:  # noqa: BLE001 — a refusal of a run the reference completes is a failure
            parts.append(deterministic(False, detail=f"{case.name}: the subject raised {type(exc).__name__}: {exc} "
                                                     "on a run the reference completes"))
            break
        parts.append(_compare(case, config, data, x0, seed, noise_seed, got, want))
        if parts[-1].verdict == FAIL:
            break
    return combine(parts, ctx)


# ---------------------------------------------------------------------------------------------------
# Mutants: the reference's loop of Algorithm 2 with one bug


class _RedrawnTree:
    """TREE(leaf) with every node of NODE(leaf) drawn afresh at each step: no node shared between steps."""

    def __init__(self, d, sigma, rng):
        self.d, self.sigma, self.rng = d, sigma, rng

    def __call__(self, leaf):
        total = np.zeros(self.d)
        for _ in tree_node(leaf):
            total = total + self.sigma * self.rng.standard_normal(self.d)
        return total


def _mutated_run(bug: str):
    """Algorithm 2 as ``reference.algorithms.spider_sosp.stochastic_spider`` writes it, with one bug:

    * "public_perturbation": g_t drawn from the PUBLIC seed's ("spider_sosp", "perturbation", t);
    * "redrawn_tree": TREE(leaf) re-drawn at every step (``_RedrawnTree``);
    * "shifted_batch": each batch reads the records one place further along the public order than the indices it
      reports (an off-by-one in the slice);
    * "stale_norm": b_t from ‖g̃_(t−2)‖ instead of ‖g̃_(t−1)‖;
    * "squared_drift": drift_(t+1) = drift_t + ‖g̃_t‖².
    """

    def implementation(call):
        gradient, config, seed = call.gradient, call.config, call.seed
        data = np.asarray(call.data, dtype=np.float64)
        x0 = np.asarray(call.x0, dtype=np.float64)
        secret = secret_seed(call.noise_seed, public_seeds=(seed,))
        n, d = data.shape[0], config.d
        horizon = n if config.steps is None else config.steps
        order = public_permutation(seed, n)
        if bug == "shifted_batch":
            shifted = np.empty_like(data)
            shifted[order] = data[np.roll(order, -1)]  # the record at order[k] is read as order[k + 1]'s
            data = shifted
        oracles = GradientOracles(gradient, data, order, d=d, lipschitz=config.lipschitz,
                                  smoothness=config.smoothness, enforce_constants=config.enforce_constants)
        streams = secret.streams()
        if bug == "redrawn_tree":
            tree = _RedrawnTree(d, config.noise_std, streams.generator(KEY, "noise"))
        else:
            tree = TreeMechanism(d, np.full(min(horizon, n), config.noise_std), streams.generator(KEY, "noise"))
        iterates, released_all, kinds, sizes, drifts, leaves, perturbation_steps = [], [], [], [], [], [], []
        estimates, noises, perturbations = [], [], []
        x, x_previous, drift, frozen_previous = x0.copy(), None, config.kappa, 1
        released_previous, older_norm, nabla, segment_start = None, None, None, 0
        halt_reason, next_batch_size, t = "horizon", None, 0
        while t < horizon:
            if drift >= config.kappa:
                kind, need = "O1", config.batch_size
            else:
                kind = "O2"
                size_norm = older_norm if bug == "stale_norm" and older_norm is not None else norm(released_previous)
                need = adaptive_batch_size(size_norm, config.alpha, config.epsilon, d, config.kappa)
            if oracles.remaining < need:
                halt_reason, next_batch_size = "data", need
                break
            drifts.append(drift)
            if kind == "O1":
                nabla, drift, segment_start = oracles.o1(x, need), 0.0, t
            else:
                nabla = nabla + oracles.o2(x, x_previous, need, clip_radius=norm(released_previous))
            frozen = frozen_previous - 1
            leaf = t + 1 if config.tree_scope == "global" else t - segment_start + 1
            noise = tree(leaf)
            g = np.zeros(d)
            if config.perturb and frozen_previous <= 0 and norm(released_previous) <= config.threshold:
                frozen = config.freeze_steps
                if config.reset_drift_on_perturb:
                    drift = 0.0
                source = Streams(seed) if bug == "public_perturbation" else streams
                g = saddle_perturbation(source.generator(KEY, "perturbation", t), d, config.perturbation_scale)
                released = nabla + noise + g
                perturbation_steps.append(t)
            else:
                released = nabla + noise
            x_next = x - config.step_size * released
            drift = drift + (norm(released) ** 2 if bug == "squared_drift" else norm(released))
            iterates.append(x_next)
            released_all.append(released)
            kinds.append(kind)
            sizes.append(need)
            leaves.append(leaf)
            estimates.append(nabla)
            noises.append(noise)
            perturbations.append(g)
            older_norm = None if released_previous is None else norm(released_previous)
            x_previous, x = x, x_next
            frozen_previous, released_previous = frozen, released
            t += 1

        def stack(rows):
            return np.array(rows, dtype=np.float64).reshape(len(rows), d)

        trace = PublicTrace(released=stack(released_all), kinds=tuple(kinds), batch_sizes=np.array(sizes, np.int64),
                            drift=np.array(drifts, dtype=np.float64), leaves=np.array(leaves, dtype=np.int64),
                            perturbation_steps=tuple(perturbation_steps), batch_indices=tuple(oracles.batches),
                            records_used=oracles.records_used, records_available=n, halt_reason=halt_reason,
                            next_batch_size=next_batch_size)
        debug = NonPrivateDebugTrace(estimates=stack(estimates), tree_noise=stack(noises),
                                     perturbations=stack(perturbations),
                                     nonfinite_counts=np.array(oracles.nonfinite_counts, dtype=np.int64),
                                     clipped_counts=np.array(oracles.clipped_counts, dtype=np.int64),
                                     evaluations=oracles.evaluations)
        return SpiderResult(iterates=stack(iterates), initial_point=x0, trace=trace, debug=debug, config=config,
                            seed=seed, secret_seed_source=secret.source, guarantee_condition=secret.guarantee_condition)

    return implementation


def _releases_in_float32(result, call):
    """A backend that keeps the released g̃_t in float32."""
    released = np.asarray(result.trace.released, dtype=np.float32).astype(np.float64)
    return dataclasses.replace(result, trace=dataclasses.replace(result.trace, released=released))


def _substitute(bug, description):
    return substitute(bug, description, "stochastic_spider", _mutated_run(bug))


RUN = Claim(
    id="spider_sosp.backend.run",
    paper="spider_sosp",
    location="Algorithms 2 and 3 (with Algorithm 1's tree); randomness contract",
    statement=(
        "On the same public and secret seeds the subject's whole run of Liu–Talwar Algorithm 2 has the reference's "
        "public trace exactly (kinds, batch sizes, leaves, perturbation steps, batch indices, records used, halt), "
        "which is also the schedule replayed from its own releases, and every step — ∇_t, TREE(leaf), the "
        "perturbation, g̃_t, x_(t+1), the drift — equal to the step recomputed in float64 from its own previous "
        "values (with the reference's oracles and the secret draws) within the float64 one-step bound."
    ),
    kind="backend",
    requires=("stochastic_spider",),
    check=_check,
    mutants=(
        _substitute("public_perturbation", "the saddle perturbation drawn from the public seed's stream"),
        _substitute("redrawn_tree", "the tree noise re-drawn at every step: no node shared between steps"),
        _substitute("shifted_batch", "each batch reads the records one place further along the public order than "
                                     "the indices it reports"),
        _substitute("stale_norm", "b_t sized from ‖g̃_(t−2)‖, the release norm of the wrong step"),
        _substitute("squared_drift", "the drift accumulating ‖g̃_t‖² instead of ‖g̃_t‖"),
        on_output("float32", "the released g̃_t kept in float32", "stochastic_spider", _releases_in_float32),
    ),
)
