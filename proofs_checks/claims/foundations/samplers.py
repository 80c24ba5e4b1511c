"""Claims about the direction samplers: zo_o2nc §2 (sphere and ball laws), dpzero eq. (2) / Lemma C.1
(the √d-sphere and Gaussian directions).

Laws are tested by Kolmogorov–Smirnov against the exact Beta / uniform CDFs; second moments by
Hotelling's T² on the distinct entries of u uᵀ (one diagonal entry is dropped on the sphere, where
the trace is constant and the covariance would be singular).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

from proofs_checks.authoring import Claim, combine, decide, deterministic, hotelling_mean_test, ks_test, on_output, rebind, substitute

DIMENSIONS = (3, 7)


def _n(ctx):
    return ctx.budget.pick(quick=20_000, full=200_000)


def _second_moment_part(u, expected_scale, ctx, label, drop_last_diagonal):
    """Hotelling's T² on the distinct entries of u uᵀ against expected_scale · I."""
    d = u.shape[-1]
    rows, cols = np.triu_indices(d)
    keep = np.ones(rows.size, dtype=bool)
    if drop_last_diagonal:
        keep &= ~((rows == d - 1) & (cols == d - 1))
    rows, cols = rows[keep], cols[keep]
    target = np.where(rows == cols, expected_scale, 0.0)
    test = hotelling_mean_test(u[:, rows] * u[:, cols], target, ctx.level)
    return decide(test, ctx, detail=f"{label}: E[u u^T] = {expected_scale:g} I")


def _reprojected(distort):
    """``on_output`` transform: distort the sphere draws, then project back to the sphere of the call's radius."""

    def transform(u, call):
        w = distort(np.asarray(u, dtype=np.float64))
        return call.radius * w / np.linalg.norm(w, axis=-1, keepdims=True)

    return transform


def _first_axis_stretched(u):
    w = u.copy()
    w[..., 0] *= 1.5
    return w


ANISOTROPIC = on_output("anisotropic", "first axis stretched by 1.5 before projecting to the sphere",
                        "sample_sphere", _reprojected(_first_axis_stretched))
RADIUS_IGNORED = rebind("radius_ignored", "always samples the unit sphere (E[u u^T] = I/d)", "sample_sphere", radius=1.0)
ON_THE_SPHERE = on_output("on_the_sphere", "returns points on the boundary sphere", "sample_ball",
                          lambda v, call: call.radius * v / np.linalg.norm(v, axis=-1, keepdims=True))


# --- zo_o2nc §2: ‖u‖ = radius exactly -------------------------------------------------------------------------

def _check_sphere_norm(subject, ctx):
    worst = 0.0
    for d in (1, 2, 5, 50):
        for radius in (1.0, math.sqrt(d), 0.3):
            u = np.asarray(subject.sample_sphere(ctx.generator("sphere_norm", d), (200,), d, radius), dtype=np.float64)
            if u.shape != (200, d):
                return deterministic(False, detail=f"shape {u.shape} != (200, {d})")
            worst = max(worst, float(np.max(np.abs(np.linalg.norm(u, axis=1) / radius - 1.0))))
    return deterministic(worst <= 1e-12, statistic=worst, bound=1e-12,
                         detail="max relative deviation of ||u|| from the radius, d in {1,2,5,50}")


SPHERE_NORM = Claim(
    id="zo_o2nc.sec1_5.sphere_norm",
    paper="zo_o2nc",
    location="§2 (u uniform on the unit sphere, used by Lemma 2.2(iv) and Algorithm 1); dpzero eq. (2) "
             "(sphere of radius √d, dpzero.E17)",
    statement="Directions sampled on the sphere of radius r have norm exactly r (relative error <= 1e-12).",
    kind="deterministic",
    requires=("sample_sphere",),
    check=_check_sphere_norm,
    mutants=(
        substitute("unnormalised", "Gaussian vectors returned without normalisation", "sample_sphere",
                   lambda call: call.radius * call.rng.standard_normal((*call.shape, call.d))),
        RADIUS_IGNORED,
    ),
)


# --- zo_o2nc §2: E[u uᵀ] = I/d on the unit sphere --------------------------------------------------------------

def _check_sphere_second_moment(subject, ctx):
    parts, sub = [], ctx.split(len(DIMENSIONS))
    for d in DIMENSIONS:
        u = np.asarray(subject.sample_sphere(ctx.generator("sphere_moment", d), (_n(ctx),), d), dtype=np.float64)
        parts.append(_second_moment_part(u, 1.0 / d, sub, f"unit sphere d={d}", drop_last_diagonal=True))
    return combine(parts, ctx)


SPHERE_SECOND_MOMENT = Claim(
    id="zo_o2nc.sec1_5.sphere_second_moment",
    paper="zo_o2nc",
    location="§2 (u uniform on the unit sphere: E[uuᵀ] = I/d); used in Lemma 2.2(iv) and Lemma 3.1",
    statement="For u uniform on the unit sphere of R^d, E[u u^T] = I/d.",
    kind="monte_carlo",
    requires=("sample_sphere",),
    check=_check_sphere_second_moment,
    mutants=(ANISOTROPIC,),
)


# --- zo_o2nc §2: u_1² ~ Beta(1/2, (d−1)/2) ---------------------------------------------------------------------

def _check_sphere_marginal(subject, ctx):
    parts, sub = [], ctx.split(len(DIMENSIONS))
    for d in DIMENSIONS:
        u = np.asarray(subject.sample_sphere(ctx.generator("sphere_marginal", d), (_n(ctx),), d), dtype=np.float64)
        law = sps.beta(0.5, (d - 1) / 2.0)
        parts.append(decide(ks_test(u[:, 0] ** 2, law.cdf, sub.level), sub, detail=f"u_1^2 ~ Beta(1/2, {(d - 1) / 2:g}), d={d}"))
    return combine(parts, ctx)


SPHERE_MARGINAL = Claim(
    id="zo_o2nc.sec1_5.sphere_marginal",
    paper="zo_o2nc",
    location="§2 (u uniform on the unit sphere: law of one coordinate)",
    statement="For u uniform on the unit sphere of R^d, u_1^2 ~ Beta(1/2, (d-1)/2).",
    kind="monte_carlo",
    requires=("sample_sphere",),
    check=_check_sphere_marginal,
    mutants=(
        # the normalised uniform cube: pushes mass towards the diagonals (a classic sampler bug)
        on_output("cube_normalised", "directions concentrated towards the diagonals (normalised-cube bug)",
                  "sample_sphere", _reprojected(lambda u: np.sign(u) * np.abs(u) ** 0.25)),
        ANISOTROPIC,
    ),
)


# --- zo_o2nc §2: ball radius ‖v‖^d ~ U[0,1] ----------------------------------------------------------------------

def _check_ball_radius(subject, ctx):
    parts, sub = [], ctx.split(len(DIMENSIONS))
    for d in DIMENSIONS:
        radius = 2.5
        v = np.asarray(subject.sample_ball(ctx.generator("ball_radius", d), (_n(ctx),), d, radius), dtype=np.float64)
        scaled = (np.linalg.norm(v, axis=1) / radius) ** d
        parts.append(decide(ks_test(scaled, sps.uniform.cdf, sub.level), sub, detail=f"(||v||/r)^d ~ U[0,1], d={d}"))
    return combine(parts, ctx)


def _uniform_radius(v, call):
    lengths = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / lengths * (call.radius * call.rng.random(lengths.shape))  # radius ~ U[0, r]: the wrong law


BALL_RADIUS = Claim(
    id="zo_o2nc.sec1_5.ball_radius",
    paper="zo_o2nc",
    location="§2 (v uniform in the unit ball: the smoothing law of Lemma 2.2)",
    statement="For v uniform in the ball of radius r in R^d, (||v||/r)^d ~ U[0, 1].",
    kind="monte_carlo",
    requires=("sample_ball",),
    check=_check_ball_radius,
    mutants=(
        on_output("uniform_radius", "radius drawn uniformly on [0, r] instead of r U^(1/d)", "sample_ball", _uniform_radius),
        ON_THE_SPHERE,
    ),
)


# --- zo_o2nc §2: v_1² ~ Beta(1/2, (d+1)/2) in the ball -------------------------------------------------------------

def _check_ball_marginal(subject, ctx):
    parts, sub = [], ctx.split(len(DIMENSIONS))
    for d in DIMENSIONS:
        v = np.asarray(subject.sample_ball(ctx.generator("ball_marginal", d), (_n(ctx),), d), dtype=np.float64)
        law = sps.beta(0.5, (d + 1) / 2.0)
        parts.append(decide(ks_test(v[:, 0] ** 2, law.cdf, sub.level), sub, detail=f"v_1^2 ~ Beta(1/2, {(d + 1) / 2:g}), d={d}"))
    return combine(parts, ctx)


BALL_MARGINAL = Claim(
    id="zo_o2nc.sec1_5.ball_marginal",
    paper="zo_o2nc",
    location="§2 (v uniform in the unit ball: law of one coordinate)",
    statement="For v uniform in the unit ball of R^d, v_1^2 ~ Beta(1/2, (d+1)/2).",
    kind="monte_carlo",
    requires=("sample_ball",),
    check=_check_ball_marginal,
    mutants=(ON_THE_SPHERE,),
)


# --- dpzero Lemma C.1 (i),(iii): u ~ Unif(√d S^{d−1}) has E[u uᵀ] = I and E[(uᵀa) u] = a ----------------------------

def _check_scaled_sphere_moments(subject, ctx):
    parts, sub = [], ctx.split(2 * len(DIMENSIONS))
    for d in DIMENSIONS:
        u = np.asarray(subject.sample_sphere(ctx.generator("scaled_sphere", d), (_n(ctx),), d, math.sqrt(d)), dtype=np.float64)
        parts.append(_second_moment_part(u, 1.0, sub, f"sqrt(d) sphere d={d}", drop_last_diagonal=True))
        a = np.linspace(1.0, -0.5, d)
        projected = (u @ a)[:, None] * u
        parts.append(decide(hotelling_mean_test(projected, a, sub.level), sub, detail=f"E[(u^T a) u] = a, d={d}"))
    return combine(parts, ctx)


SCALED_SPHERE_MOMENTS = Claim(
    id="dpzero.lemma_c1.scaled_sphere_moments",
    paper="dpzero",
    location="Eq. (2), Lemma C.1 (i) and (iii); dpzero.E17 (directions of norm √d)",
    statement="For u uniform on the sphere of radius sqrt(d): E[u u^T] = I_d and E[(u^T a) u] = a.",
    kind="monte_carlo",
    requires=("sample_sphere",),
    check=_check_scaled_sphere_moments,
    mutants=(RADIUS_IGNORED, ANISOTROPIC),
)


# --- dpzero App. B.2: Gaussian directions have E[u uᵀ] = I -----------------------------------------------------------

def _check_gaussian_moments(subject, ctx):
    parts, sub = [], ctx.split(len(DIMENSIONS))
    for d in DIMENSIONS:
        u = np.asarray(subject.sample_gaussian(ctx.generator("gaussian", d), (_n(ctx),), d), dtype=np.float64)
        parts.append(_second_moment_part(u, 1.0, sub, f"gaussian d={d}", drop_last_diagonal=False))
    return combine(parts, ctx)


GAUSSIAN_MOMENTS = Claim(
    id="dpzero.sec2_4.gaussian_moments",
    paper="dpzero",
    location="§5 and App. B.2 (experiments: u ~ N(0, I_d), following MeZO); dpzero.E7",
    statement="Gaussian directions satisfy E[u u^T] = I_d.",
    kind="monte_carlo",
    requires=("sample_gaussian",),
    check=_check_gaussian_moments,
    mutants=(on_output("too_narrow", "standard deviation 0.9 instead of 1", "sample_gaussian",
                       lambda u, call: 0.9 * np.asarray(u, dtype=np.float64)),),
)
