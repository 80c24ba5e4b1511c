"""zo_o2nc Algorithms 1 and 2 (GRAD, DIFF) and Lemma 2.2(iv), backend claims: the subject's zeroth-order estimators
agree with the mpmath reference draw for draw (docs/design.md, Precision).

The subject (``fast``, or a user's implementation) runs in float64 on the same directions, data and
noise draws as the reference, which runs in mpmath at 40 digits on the exact same inputs. The
difference is therefore the subject's own rounding error, and it is compared with a forward error
bound in the standard model of floating-point arithmetic (Higham, *Accuracy and Stability of
Numerical Algorithms*, ch. 3): every operation errs by at most u = 2⁻⁵³ relatively, a sum of n terms
by γ_n = nu/(1 − nu) times the sum of their magnitudes, and a point rounded by ρ moves an
L-Lipschitz loss by at most Lρ. The bounds are first order in u and doubled for the second-order
terms; a float32 implementation (u = 2⁻²⁴) or any algebraic slip exceeds them by orders of magnitude.

These claims do not apply to the reference itself (it is the oracle); the fast estimators are real twins.
"""

from __future__ import annotations

import math

import numpy as np

from proofs_checks.authoring import (
    Claim,
    agreement,
    combine,
    mp_to_float,
    on_output,
    rebind,
    reference_subject,
    rounding_gamma,
    substitute,
)
from reference.objectives import RidgeSum
from reference.precision import to_mp, working_precision


SAFETY = 2.0  # covers the second-order terms dropped by the first-order analysis
DPS = 40


# --- the estimators' inputs (a random ridge loss) and their float64 error bounds ---------------------------

def _problem(ctx, key, d, n, profile):
    rng = ctx.generator("problem", key)
    objective = RidgeSum.random(d, n, rng, lipschitz=1.7, profile=profile, tau=0.8, offset_scale=1.5)
    x = rng.normal(0.0, 1.0, d)
    return objective, x


def _fd_error_bound(objective, point_norm, offset, perturbation, fd_magnitude, d):
    """|fl(fd) − fd| for fd = (f(x + h u) − f(x − h u)) / (2h) on a ridge loss L·φ(<a, p> − c)."""
    lipschitz = objective.lipschitz
    evaluation = lipschitz * rounding_gamma(d + 4) * (point_norm + abs(offset))  # <a,p>, − c, φ, × L
    point_rounding = lipschitz * rounding_gamma(2) * point_norm  # p = x ± h u rounded
    return (2 * evaluation + 2 * point_rounding) / (2 * perturbation) + rounding_gamma(3) * fd_magnitude


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
            total += scale * u_norm * (err + rounding_gamma(2) * abs(fd))
            magnitudes += scale * abs(fd) * float(np.max(np.abs(u)))
    return SAFETY * (total + rounding_gamma(b * m + 1) * magnitudes) / (b * m)


LAWS = (("unit_sphere", 1.0), ("scaled_sphere", None), ("gaussian", None))


def _directions(ctx, law, key, shape, d):
    rng = ctx.generator("directions", key)
    if law == "unit_sphere":
        return reference_subject().sample_sphere(rng, shape, d)
    if law == "scaled_sphere":
        return reference_subject().sample_sphere(rng, shape, d, math.sqrt(d))
    return reference_subject().sample_gaussian(rng, shape, d)


def _in_float32(result, call):
    """A backend that accumulates in float32: the output carries float32 rounding."""
    return np.asarray(result, dtype=np.float32).astype(np.float64)


# --- zo_o2nc Algorithm 1 (GRAD), Algorithm 6; dpzero eq. (2): the two-point estimator ---------------------------

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
                    exact = mp_to_float(ref.two_point_estimate(objective, to_mp(x), batch, to_mp(directions), h, direction_law=law))
                scale = float(ref.direction_scale(law, d))
                bound = _two_point_bound(objective, x, batch, directions, h, scale)
                parts.append(agreement(f"two_point d={d} b={b} m={m} {law} {profile} h={h}", got, exact, bound))
    return combine(parts, ctx)


TWO_POINT_ESTIMATE = Claim(
    id="zo_o2nc.backend.two_point_estimate",
    paper="zo_o2nc",
    location="Algorithm 1 (GRAD), Algorithm 6; dpzero eq. (2)",
    statement="On the same directions and data, the subject's two-point estimator (unit sphere, sqrt(d) sphere, "
              "Gaussian directions) equals the mpmath reference within the float64 forward error bound.",
    kind="backend",
    requires=("two_point_estimate",),
    check=_check_two_point,
    mutants=(
        on_output("float32", "accumulates in float32", "two_point_estimate", _in_float32),
        rebind("law_ignored", "direction_law ignored: always scaled by d", "two_point_estimate", direction_law="unit_sphere"),
    ),
    applies_to_reference=False,
)


# --- zo_o2nc Lemma 2.2(iv): the one-point estimator -------------------------------------------------------------

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
            exact = mp_to_float(ref.one_point_estimate(objective, to_mp(x), batch, to_mp(directions), h))
        total = 0.0
        for i in range(b):
            for j in range(m):
                value = abs(objective.loss(x + h * directions[i, j], batch[i]))
                point_norm = float(np.linalg.norm(x)) + h
                err = objective.lipschitz * (rounding_gamma(d + 4) * (point_norm + abs(batch[i, -1])) + rounding_gamma(2) * point_norm)
                total += d / h * (err + rounding_gamma(3) * value)
        bound = SAFETY * total * (1 + rounding_gamma(b * m + 1)) / (b * m)
        parts.append(agreement(f"one_point h={h}", got, exact, bound))
    return combine(parts, ctx)


ONE_POINT_ESTIMATE = Claim(
    id="zo_o2nc.backend.one_point_estimate",
    paper="zo_o2nc",
    location="Lemma 2.2(iv)",
    statement="The subject's one-point estimator equals the mpmath reference within the float64 error bound.",
    kind="backend",
    requires=("one_point_estimate",),
    check=_check_one_point,
    mutants=(on_output("float32", "accumulates in float32", "one_point_estimate", _in_float32),),
    applies_to_reference=False,
)


# --- zo_o2nc Algorithm 2 (DIFF): the gradient-difference estimator ----------------------------------------------

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
            exact = mp_to_float(ref.diff_estimate(objective, to_mp(x), to_mp(y), batch, to_mp(directions), h))
        total = 0.0
        for i in range(b):
            for j in range(m):
                u = directions[i, j]
                difference = abs(objective.loss(x + h * u, batch[i]) - objective.loss(y + h * u, batch[i]))
                point_norm = max(np.linalg.norm(x), np.linalg.norm(y)) + h
                err = objective.lipschitz * (rounding_gamma(d + 4) * (point_norm + abs(batch[i, -1])) + rounding_gamma(2) * point_norm)
                total += d / h * (2 * err + rounding_gamma(3) * difference)
        bound = SAFETY * total * (1 + rounding_gamma(b * m + 1)) / (b * m)
        parts.append(agreement(f"diff h={h}", got, exact, bound))
    return combine(parts, ctx)


def _uncoupled_diff(call):
    """DIFF whose y-evaluation uses the next direction: the coupling of Algorithm 2 broken."""
    directions = np.asarray(call.directions, dtype=np.float64)
    b, m, d = directions.shape
    total = np.zeros(d)
    for i in range(b):
        for j in range(m):
            u, v = directions[i, j], directions[i, (j + 1) % m]
            difference = (call.loss(call.x + call.smoothing_radius * u, call.batch[i])
                          - call.loss(call.y + call.smoothing_radius * v, call.batch[i]))
            total += d / call.smoothing_radius * difference * u
    return total / (b * m)


DIFF_ESTIMATE = Claim(
    id="zo_o2nc.backend.diff_estimate",
    paper="zo_o2nc",
    location="Algorithm 2 (DIFF)",
    statement="The subject's gradient-difference estimator equals the mpmath reference within the float64 error bound.",
    kind="backend",
    requires=("diff_estimate",),
    check=_check_diff,
    mutants=(
        substitute("uncoupled", "y is evaluated along a different direction than x (coupling broken)", "diff_estimate",
                   _uncoupled_diff),
        on_output("float32", "accumulates in float32", "diff_estimate", _in_float32),
    ),
    applies_to_reference=False,
)
