"""Backend claims: a subject agrees with the mpmath reference draw for draw (docs/design.md, Precision).

The subject (``fast``, or a user's implementation) runs in float64 on the same directions, data and
noise draws as the reference, which runs in mpmath at 40 digits on the exact same inputs. The
difference is therefore the subject's own rounding error, and it is compared with a forward error
bound in the standard model of floating-point arithmetic (Higham, *Accuracy and Stability of
Numerical Algorithms*, ch. 3): every operation errs by at most u = 2⁻⁵³ relatively, a sum of n terms
by γ_n = nu/(1 − nu) times the sum of their magnitudes, and a point rounded by ρ moves an
L-Lipschitz loss by at most Lρ. The bounds are first order in u and doubled for the second-order
terms; a float32 implementation (u = 2⁻²⁴) or any algebraic slip exceeds them by orders of magnitude.

These claims do not apply to the reference itself (it is the oracle). The fast samplers and
closed forms are the reference's own functions (``Subject.borrowed``), so for them the claims guard
external implementations; the fast estimators, clipping and tree are real twins.
"""

from __future__ import annotations

import math

import numpy as np

from reference.objectives import RidgeSum
from reference.precision import to_mp, working_precision

from ..claim import Claim
from ..subjects import reference_subject
from ._common import combine, deterministic, mutant

UNIT_ROUNDOFF = 2.0**-53
SAFETY = 2.0  # covers the second-order terms dropped by the first-order analysis
DPS = 40


def gamma(n: int) -> float:
    return n * UNIT_ROUNDOFF / (1.0 - n * UNIT_ROUNDOFF)


def _mp_to_float(array) -> np.ndarray:
    return np.array([float(v) for v in np.asarray(array, dtype=object).reshape(-1)]).reshape(np.shape(array))


def _agreement(label, got, exact, bound) -> object:
    got = np.asarray(got, dtype=np.float64)
    exact = np.asarray(exact, dtype=np.float64)
    if got.shape != exact.shape:
        return deterministic(False, detail=f"{label}: shape {got.shape} != reference {exact.shape}")
    if not np.all(np.isfinite(got)):
        return deterministic(False, detail=f"{label}: non-finite output")
    error = float(np.max(np.abs(got - exact))) if got.size else 0.0
    return deterministic(error <= bound, statistic=error, bound=bound,
                         detail=f"{label}: max |subject - mpmath reference| vs float64 error bound")


# --- zeroth-order estimators on a ridge loss ------------------------------------------------------------


def _problem(ctx, key, d, n, profile):
    rng = ctx.generator("problem", key)
    objective = RidgeSum.random(d, n, rng, lipschitz=1.7, profile=profile, tau=0.8, offset_scale=1.5)
    x = rng.normal(0.0, 1.0, d)
    return objective, x


def _fd_error_bound(objective, point_norm, offset, perturbation, fd_magnitude, d):
    """|fl(fd) − fd| for fd = (f(x + h u) − f(x − h u)) / (2h) on a ridge loss L·φ(<a, p> − c)."""
    lipschitz = objective.lipschitz
    evaluation = lipschitz * gamma(d + 4) * (point_norm + abs(offset))  # <a,p>, − c, φ, × L
    point_rounding = lipschitz * gamma(2) * point_norm  # p = x ± h u rounded
    return (2 * evaluation + 2 * point_rounding) / (2 * perturbation) + gamma(3) * fd_magnitude


def _two_point_bound(objective, x, batch, directions, h, scale):
    b, m, d = directions.shape
    total, magnitudes = 0.0, 0.0
    for i in range(b):
        for j in range(m):
            u = directions[i, j]
            fd = (objective.loss(x + h * u, batch[i]) - objective.loss(x - h * u, batch[i])) / (2 * h)
            u_norm = float(np.linalg.norm(u))
            point_norm = float(np.linalg.norm(x)) + h * u_norm
            err = _fd_error_bound(objective, point_norm, batch[i, -1], h, abs(fd), d)
            total += scale * u_norm * (err + gamma(2) * abs(fd))
            magnitudes += scale * abs(fd) * float(np.max(np.abs(u)))
    return SAFETY * (total + gamma(b * m + 1) * magnitudes) / (b * m)


LAWS = (("unit_sphere", 1.0), ("scaled_sphere", None), ("gaussian", None))


def _directions(ctx, law, key, shape, d):
    rng = ctx.generator("directions", key)
    if law == "unit_sphere":
        return reference_subject().sample_sphere(rng, shape, d)
    if law == "scaled_sphere":
        return reference_subject().sample_sphere(rng, shape, d, math.sqrt(d))
    return reference_subject().sample_gaussian(rng, shape, d)


def _check_two_point(subject, ctx):
    ref = reference_subject()
    parts = []
    configs = ctx.budget.pick(quick=[(4, 3, 5)], full=[(4, 3, 5), (8, 6, 12), (2, 9, 3)])
    for d, b, m in configs:
        for law, _ in LAWS:
            for profile, h in (("abs", 0.1), ("wshape", 1e-3)):
                objective, x = _problem(ctx, f"{law}{profile}{d}", d, b, profile)
                batch = objective.data
                directions = _directions(ctx, law, f"{law}{profile}{d}", (b, m), d)
                got = subject.two_point_estimate(objective, x, batch, directions, h, direction_law=law)
                with working_precision(DPS):
                    exact = _mp_to_float(ref.two_point_estimate(objective, to_mp(x), batch, to_mp(directions), h, direction_law=law))
                scale = float(ref.direction_scale(law, d))
                bound = _two_point_bound(objective, x, batch, directions, h, scale)
                parts.append(_agreement(f"two_point d={d} b={b} m={m} {law} {profile} h={h}", got, exact, bound))
    return combine(parts, ctx)


def _check_one_point(subject, ctx):
    ref = reference_subject()
    parts = []
    d, b, m = 4, 3, 5
    for h in (0.5, 1e-3):
        objective, x = _problem(ctx, f"one{h}", d, b, "capped")
        batch = objective.data
        directions = _directions(ctx, "unit_sphere", f"one{h}", (b, m), d)
        got = subject.one_point_estimate(objective, x, batch, directions, h)
        with working_precision(DPS):
            exact = _mp_to_float(ref.one_point_estimate(objective, to_mp(x), batch, to_mp(directions), h))
        total = 0.0
        for i in range(b):
            for j in range(m):
                value = abs(objective.loss(x + h * directions[i, j], batch[i]))
                point_norm = float(np.linalg.norm(x)) + h
                err = objective.lipschitz * (gamma(d + 4) * (point_norm + abs(batch[i, -1])) + gamma(2) * point_norm)
                total += d / h * (err + gamma(3) * value)
        bound = SAFETY * total * (1 + gamma(b * m + 1)) / (b * m)
        parts.append(_agreement(f"one_point h={h}", got, exact, bound))
    return combine(parts, ctx)


def _check_diff(subject, ctx):
    ref = reference_subject()
    parts = []
    d, b, m = 4, 3, 5
    for h in (0.2, 1e-3):
        objective, x = _problem(ctx, f"diff{h}", d, b, "abs")
        y = x + ctx.generator("diff_y", str(h)).normal(0.0, 0.05, d)
        batch = objective.data
        directions = _directions(ctx, "unit_sphere", f"diff{h}", (b, m), d)
        got = subject.diff_estimate(objective, x, y, batch, directions, h)
        with working_precision(DPS):
            exact = _mp_to_float(ref.diff_estimate(objective, to_mp(x), to_mp(y), batch, to_mp(directions), h))
        total = 0.0
        for i in range(b):
            for j in range(m):
                u = directions[i, j]
                difference = abs(objective.loss(x + h * u, batch[i]) - objective.loss(y + h * u, batch[i]))
                point_norm = max(np.linalg.norm(x), np.linalg.norm(y)) + h
                err = objective.lipschitz * (gamma(d + 4) * (point_norm + abs(batch[i, -1])) + gamma(2) * point_norm)
                total += d / h * (2 * err + gamma(3) * difference)
        bound = SAFETY * total * (1 + gamma(b * m + 1)) / (b * m)
        parts.append(_agreement(f"diff h={h}", got, exact, bound))
    return combine(parts, ctx)


def _check_finite_differences(subject, ctx):
    ref = reference_subject()
    parts = []
    d, b = 6, 8
    for law in ("scaled_sphere", "gaussian"):
        for h in (1e-2, 1e-4):
            objective, x = _problem(ctx, f"fd{law}{h}", d, b, "wshape")
            direction = _directions(ctx, law, f"fd{law}{h}", (), d)
            got = subject.per_sample_finite_differences(objective, x, objective.data, direction, h)
            with working_precision(DPS):
                exact = _mp_to_float(ref.per_sample_finite_differences(objective, to_mp(x), objective.data, to_mp(direction), h))
            point_norm = float(np.linalg.norm(x)) + h * float(np.linalg.norm(direction))
            bound = SAFETY * max(
                _fd_error_bound(objective, point_norm, c, h, abs(fd), d) for c, fd in zip(objective.data[:, -1], exact)
            )
            parts.append(_agreement(f"per-sample fd {law} h={h}", got, exact, bound))
    return combine(parts, ctx)


# --- mechanisms -------------------------------------------------------------------------------------------


def _check_tree_aggregate(subject, ctx):
    ref = reference_subject()
    parts = []
    for n, d in ((1, 1), (13, 3), (64, 2)):
        rng = ctx.generator("tree", n, d)
        leaves = rng.normal(0.0, 3.0, (n, d))
        noise = rng.normal(0.0, 1.0, (n, d)) * rng.uniform(0.5, 2.0, (n, 1))
        got = subject.tree_aggregate(leaves, noise)
        with working_precision(DPS):
            exact = _mp_to_float(ref.tree_aggregate(to_mp(leaves), to_mp(noise)))
        magnitude = np.cumsum(np.abs(leaves), axis=0) + np.cumsum(np.abs(noise), axis=0)
        bound = SAFETY * gamma(2 * n) * float(np.max(magnitude))
        parts.append(_agreement(f"tree n={n} d={d}", got, exact, bound))
    return combine(parts, ctx)


def _check_clipped_mean(subject, ctx):
    ref = reference_subject()
    parts = []
    rng = ctx.generator("clip")
    for shape, clip_threshold in (((20,), 1.0), ((20, 5), 2.0), ((7, 3), 1e3)):
        values = rng.normal(0.0, 2.0, shape) * rng.choice([1e-3, 1.0, 10.0], size=shape)
        got = subject.clipped_mean(values, clip_threshold)
        with working_precision(DPS):
            exact = _mp_to_float(ref.clipped_mean(to_mp(values), clip_threshold))
        n = shape[0]
        d = shape[1] if len(shape) > 1 else 1
        bound = SAFETY * (gamma(d + 4) + gamma(n + 1)) * clip_threshold
        parts.append(_agreement(f"clipped_mean shape={shape} C={clip_threshold}", got, exact, bound))
    return combine(parts, ctx)


def _check_gaussian_mechanism(subject, ctx):
    ref = reference_subject()
    parts = []
    for shape in ((), (4,), (2, 3)):
        value = ctx.generator("value", len(shape)).normal(0.0, 5.0, shape) if shape else 1.25
        got = subject.gaussian_mechanism(value, 0.7, ctx.generator("noise", len(shape)))
        expected = ref.gaussian_mechanism(value, 0.7, ctx.generator("noise", len(shape)))
        bound = SAFETY * gamma(2) * float(np.max(np.abs(np.asarray(expected)) + np.abs(np.asarray(value)) + 1.0))
        parts.append(_agreement(f"gaussian shape={shape}", got, expected, bound))
    return combine(parts, ctx)


def _check_samplers(subject, ctx):
    ref = reference_subject()
    parts = []
    for d in (1, 3, 10):
        for name, kwargs in (("sample_sphere", {"radius": 2.0}), ("sample_ball", {"radius": 0.5}), ("sample_gaussian", {})):
            got = getattr(subject, name)(ctx.generator(name, d), (50,), d, **kwargs)
            want = getattr(ref, name)(ctx.generator(name, d), (50,), d, **kwargs)
            scale = kwargs.get("radius", float(np.max(np.abs(want))))
            parts.append(_agreement(f"{name} d={d}", got, want, SAFETY * gamma(d + 4) * scale))
    return combine(parts, ctx)


# --- mutants: plausible backend bugs ---------------------------------------------------------------------


def _float32_result(original):
    """A backend that accumulates in float32: the output carries float32 rounding."""

    def float32(*args, **kwargs):
        return np.asarray(original(*args, **kwargs), dtype=np.float32).astype(np.float64)

    return float32


def _law_ignored(original):
    def two_point_estimate(loss, x, batch, directions, perturbation, direction_law="unit_sphere"):
        return original(loss, x, batch, directions, perturbation)  # always scales by d

    return two_point_estimate


def _uncoupled_diff(original):
    """DIFF whose y-evaluation uses the next direction: the coupling of Alg 2 broken."""

    def diff_estimate(loss, x, y, batch, directions, smoothing_radius):
        directions = np.asarray(directions, dtype=np.float64)
        b, m, d = directions.shape
        total = np.zeros(d)
        for i in range(b):
            for j in range(m):
                u, v = directions[i, j], directions[i, (j + 1) % m]
                difference = loss(x + smoothing_radius * u, batch[i]) - loss(y + smoothing_radius * v, batch[i])
                total += d / smoothing_radius * difference * u
        return total / (b * m)

    return diff_estimate


def _fd_halved(original):
    def per_sample_finite_differences(loss, x, batch, direction, perturbation):
        return np.asarray(original(loss, x, batch, direction, perturbation)) * 0.5

    return per_sample_finite_differences


def _tree_last_leaf_dropped(original):
    def tree_aggregate(leaf_values, node_noise):
        out = np.array(original(leaf_values, node_noise), dtype=np.float64)
        out[..., -1, :] -= np.asarray(leaf_values, dtype=np.float64)[..., -1, :]
        return out

    return tree_aggregate


def _clip_mean_by_clipped_count(original):
    def clipped_mean(values, clip_threshold, normalizer=None):
        n = np.shape(values)[0]
        return np.asarray(original(values, clip_threshold, normalizer)) * n / max(n - 1, 1)

    return clipped_mean


def _noise_double_draw(original):
    def gaussian_mechanism(value, noise_std, rng):
        rng.standard_normal()  # an extra draw shifts the schedule
        return original(value, noise_std, rng)

    return gaussian_mechanism


def _sphere_rows_reversed(original):
    def sample_sphere(rng, shape, d, radius=1.0, **kwargs):
        return np.asarray(original(rng, shape, d, radius, **kwargs))[::-1]

    return sample_sphere


def _backend_claim(id_, paper, location, statement, requires, check, mutants):
    return Claim(id=id_, paper=paper, location=location, statement=statement, kind="backend",
                 requires=requires, check=check, mutants=mutants, applies_to_reference=False)


CLAIMS = [
    _backend_claim(
        "zo_o2nc.backend.two_point_estimate", "zo_o2nc", "Algorithm 1 (GRAD), Algorithm 6; dpzero eq. (2)",
        "On the same directions and data, the subject's two-point estimator (unit sphere, sqrt(d) sphere, "
        "Gaussian directions) equals the mpmath reference within the float64 forward error bound.",
        ("two_point_estimate",), _check_two_point,
        (mutant("float32", "accumulates in float32", "two_point_estimate", _float32_result),
         mutant("law_ignored", "direction_law ignored: always scaled by d", "two_point_estimate", _law_ignored)),
    ),
    _backend_claim(
        "zo_o2nc.backend.one_point_estimate", "zo_o2nc", "Lemma 2.2(iv)",
        "The subject's one-point estimator equals the mpmath reference within the float64 error bound.",
        ("one_point_estimate",), _check_one_point,
        (mutant("float32", "accumulates in float32", "one_point_estimate", _float32_result),),
    ),
    _backend_claim(
        "zo_o2nc.backend.diff_estimate", "zo_o2nc", "Algorithm 2 (DIFF)",
        "The subject's gradient-difference estimator equals the mpmath reference within the float64 error bound.",
        ("diff_estimate",), _check_diff,
        (mutant("uncoupled", "y is evaluated along a different direction than x (coupling broken)",
                "diff_estimate", _uncoupled_diff),
         mutant("float32", "accumulates in float32", "diff_estimate", _float32_result)),
    ),
    _backend_claim(
        "dpzero.backend.finite_differences", "dpzero", "Algorithm 2 line 4 (a_i)",
        "The subject's per-sample finite differences equal the mpmath reference within the float64 error bound.",
        ("per_sample_finite_differences",), _check_finite_differences,
        (mutant("halved", "divides by 4 lambda instead of 2 lambda", "per_sample_finite_differences", _fd_halved),
         mutant("float32", "accumulates in float32", "per_sample_finite_differences", _float32_result)),
    ),
    _backend_claim(
        "zo_o2nc.backend.tree_aggregate", "zo_o2nc", "Algorithm 5, Theorem 4.3",
        "The subject's tree aggregation equals the mpmath reference within gamma_{2n} times the prefix magnitudes.",
        ("tree_aggregate",), _check_tree_aggregate,
        (mutant("last_leaf_dropped", "the newest leaf is missing from the last prefix", "tree_aggregate", _tree_last_leaf_dropped),
         mutant("float32", "accumulates in float32", "tree_aggregate", _float32_result)),
    ),
    _backend_claim(
        "dpzero.backend.clipped_mean", "dpzero", "§2.1 (clip_C), Algorithm 1 line 5, Algorithm 2",
        "The subject's clipped mean equals the mpmath reference within the float64 error bound.",
        ("clipped_mean",), _check_clipped_mean,
        (mutant("divides_by_n_minus_1", "normalises by n - 1", "clipped_mean", _clip_mean_by_clipped_count),),
    ),
    _backend_claim(
        "dpzero.backend.gaussian_mechanism", "dpzero", "Algorithm 2 line 6 (z_t)",
        "From the same generator state the subject's Gaussian mechanism returns the reference's output "
        "(same single standard-normal draw).",
        ("gaussian_mechanism",), _check_gaussian_mechanism,
        (mutant("extra_draw", "draws one extra normal first (schedule mismatch)", "gaussian_mechanism", _noise_double_draw),),
    ),
    _backend_claim(
        "zo_o2nc.backend.samplers", "zo_o2nc", "§2 (uniform sphere and ball); dpzero eq. (2)",
        "From the same generator state the subject's samplers return the reference's directions "
        "(same draw schedule), within float64 normalisation rounding.",
        ("sample_sphere", "sample_ball", "sample_gaussian"), _check_samplers,
        (mutant("rows_reversed", "consumes the draws in another order", "sample_sphere", _sphere_rows_reversed),),
    ),
]
