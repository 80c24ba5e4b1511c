"""zo_o2nc Definition 2.1 (Goldstein δ-subdifferential and ‖∇h(x)‖_δ), as the project measures it: the minimum-norm
point of the convex hull of finitely many gradients (``min_norm_point``) with its certified interval.

Ground truth is computed here, independently of the subject:

* ridges h(y) = L·φ(<a, y> − c), ‖a‖ = 1 (and their smoothings): every gradient is L·a·slope, so the hull of sampled
  gradients is the segment L·a·[min slope, max slope] and its minimum norm is L·dist(0, [min, max]) — closed form;
  the exact ‖∇h(x)‖_δ over the whole open ball comes from ``reference.stationarity.exact_goldstein_ridge``, and no
  finite sample of the ball can go below it (the hull of a subset of ∂_δh(x) is a subset);
* sums of two or three |.| ridges in d = 2 (the gradients take at most 2^J values): the minimum norm of the hull of
  the distinct sampled gradients by brute force over every face of at most d + 1 of them (the minimiser is the
  affine minimiser of the face that carries it, with positive weights);
* constructed hulls whose minimum norm ν is known by construction: a face whose relative interior holds p* (‖p*‖ = ν)
  and other points g with <g, p*> > ‖p*‖², so that p* is the nearest point (Wolfe's optimality condition); plus
  degenerate cases (one row, duplicates, collinear rows, d = 1 with both signs, zero rows, rows of size 1e±150).

Tolerances: float64 rounding. A min-norm point of k rows in R^d carries an error of a few γ_{k+d}·max_i ‖g_i‖
(Higham §3.1); the constructed rows are rounded once (u·max‖g‖), ν with them; the subject's interval must contain
the true value up to ROUNDING·max_i ‖g_i‖ with ROUNDING = 64·γ_{k+d+4}, and be no wider than its requested tolerance
(1e−12) plus the same allowance when the problem is well conditioned (ν = 0 or ν ≥ 1e−4·max‖g‖).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from proofs_checks.authoring import Claim, deterministic, on_output, rebind, rounding_gamma, substitute
from reference.objectives import RidgeSum
from reference.rng import sample_ball, sample_sphere
from reference.smoothing import smoothed_ridge_slope
from reference.stationarity import exact_goldstein_ridge

PROFILES = ("abs", "capped", "wshape")
TAU = 0.7


def _allowance(rows) -> float:
    rows = np.asarray(rows, dtype=np.float64)
    k, d = rows.shape
    return 64 * rounding_gamma(k + d + 4) * float(np.max(np.linalg.norm(rows, axis=1)))


def _interval_problems(label, result, rows, truth, *, require_tight):
    """What is wrong with the subject's MinNormPoint for ``rows`` whose hull has minimum norm ``truth``."""
    rows = np.asarray(rows, dtype=np.float64)
    k, d = rows.shape
    slack = _allowance(rows)
    try:
        point = np.asarray(result.point, dtype=np.float64)
        weights = np.asarray(result.weights, dtype=np.float64)
        norm, lower, upper = float(result.norm), float(result.lower), float(result.upper)
    except (AttributeError, TypeError, ValueError) as exc:
        return [f"{label}: the result is not a MinNormPoint ({exc})"]
    values = np.concatenate([point.reshape(-1), weights.reshape(-1), [norm, lower, upper]])
    if not np.all(np.isfinite(values)):
        return [f"{label}: a non-finite value in the result"]
    problems = []
    if point.shape != (d,) or weights.shape != (k,):
        return [f"{label}: point of shape {point.shape} / weights of shape {weights.shape}, expected ({d},) / ({k},)"]
    if np.any(weights < 0) or abs(float(np.sum(weights)) - 1.0) > rounding_gamma(k + 2):
        problems.append(f"{label}: the weights are not a probability vector (min {weights.min()!r}, sum "
                        f"{weights.sum()!r})")
    if np.linalg.norm(point - weights @ rows) > slack:
        problems.append(f"{label}: the point is not Σ_i λ_i g_i (off by {np.linalg.norm(point - weights @ rows)!r})")
    if abs(np.linalg.norm(point) - norm) > slack:
        problems.append(f"{label}: norm {norm!r} ≠ ‖point‖ = {np.linalg.norm(point)!r}")
    if not (lower <= truth + slack and truth - slack <= upper and lower <= norm + slack and norm <= upper + slack):
        problems.append(f"{label}: the interval [{lower!r}, {upper!r}] (norm {norm!r}) misses the minimum norm "
                        f"{truth!r} of the hull")
    largest = float(np.max(np.linalg.norm(rows, axis=1)))
    if require_tight and not upper - lower <= 1e-12 * largest + 2 * slack:
        problems.append(f"{label}: the interval [{lower!r}, {upper!r}] is wider than the requested tolerance")
    return problems


# --- ridges: the min-norm point of sampled gradients, against closed forms and the exact ‖∇h(x)‖_δ -----------------

def _phi_slope(r, profile, tau=TAU):
    """φ'(r) off the kinks (the check's own; the sample points avoid the kinks with probability 1)."""
    sign = np.sign(r)
    if profile == "abs":
        return sign
    if profile == "capped":
        return np.where(np.abs(r) < tau, sign, 0.0)
    return np.where(np.abs(r) > tau, sign, -sign)


def _ball_points(gen, x, a, radius, count):
    """Points of the open ball B(x, radius): a grid of residual offsets t·radius along a (t up to ±(1 − 1e−9), so
    the samples reach the ends of the residual interval) with random orthogonal parts, plus uniform points."""
    d = x.shape[0]
    t = np.linspace(-(1 - 1e-9), 1 - 1e-9, count)
    other = sample_ball(gen, count, d) if d > 1 else np.zeros((count, 1))
    other -= np.outer(other @ a, a)
    other *= (0.5 * np.sqrt(1 - t**2))[:, None]
    return np.vstack([x + radius * (t[:, None] * a + other), x + sample_ball(gen, count, d, 0.999 * radius)])


def _ridge_problems(subject, ctx):
    gen = ctx.generator("def2_1", "ridges")
    problems, checked = [], 0
    lipschitz = 1.5
    for d in (1, 3):
        for profile in PROFILES:
            for radius in (0.1, 1.0):
                for multiple in (0.0, 0.37, 0.99, 1.01, 1.63, 2.4, -0.5, -1.3):
                    for smoothing in (None, 0.6 * radius):
                        a = sample_sphere(gen, (), d)
                        x = gen.standard_normal(d)
                        residual = multiple * radius + (0.11 * radius if profile != "abs" else 0.0)
                        c = float(a @ x) - residual
                        points = _ball_points(gen, x, a, radius, ctx.budget.pick(quick=25, full=101))
                        r = points @ a - c
                        if smoothing is None:
                            slopes = _phi_slope(r, profile)
                        else:
                            slopes = np.asarray(smoothed_ridge_slope(r, smoothing, d, profile, TAU), dtype=np.float64)
                        rows = lipschitz * slopes[:, None] * a[None, :]
                        lo, hi = float(np.min(slopes)), float(np.max(slopes))
                        hull = lipschitz * (0.0 if lo <= 0.0 <= hi else min(abs(lo), abs(hi)))
                        result = subject.min_norm_point(rows)
                        label = (f"{profile} ridge, d={d}, δ={radius}, r={residual:.3g}"
                                 + ("" if smoothing is None else f", smoothed at {smoothing:g}"))
                        found = _interval_problems(label, result, rows, hull, require_tight=True)
                        exact = exact_goldstein_ridge(residual, radius, profile=profile, tau=TAU, lipschitz=lipschitz,
                                                      smoothing_radius=smoothing, d=None if smoothing is None else d)
                        if not found and not float(result.upper) >= exact - _allowance(rows):
                            found.append(f"{label}: upper end {float(result.upper)!r} below the exact "
                                         f"‖∇h(x)‖_δ = {exact!r} (Definition 2.1: a sample cannot do better)")
                        problems += found
                        checked += 1
    return problems, checked


def _brute_force_min_norm(rows) -> float:
    """min ‖Σ λ_i g_i‖ over the simplex for a handful of rows: the smallest norm among the affine minimisers of the
    faces of at most d + 1 rows whose weights are all ≥ 0 (the optimum is one of them)."""
    rows = np.unique(np.asarray(rows, dtype=np.float64), axis=0)
    k, d = rows.shape
    best = math.inf
    for size in range(1, min(k, d + 1) + 1):
        for face in itertools.combinations(range(k), size):
            face_rows = rows[list(face)]
            if size == 1:
                weights = np.ones(1)
            else:
                differences = (face_rows[1:] - face_rows[0]).T
                beta = np.linalg.lstsq(differences, -face_rows[0], rcond=None)[0]
                weights = np.concatenate([[1 - beta.sum()], beta])
            if np.all(weights >= -1e-12):
                best = min(best, float(np.linalg.norm(np.clip(weights, 0, None) @ face_rows)))
    return best


def _sum_problems(subject, ctx):
    gen = ctx.generator("def2_1", "sums")
    problems, checked = [], 0
    for _ in range(ctx.budget.pick(quick=12, full=60)):
        ridges = int(gen.integers(2, 4))
        objective = RidgeSum(sample_sphere(gen, ridges, 2), gen.uniform(-0.3, 0.3, ridges), lipschitz=1.0,
                             profile="abs")
        x, radius = gen.uniform(-0.3, 0.3, 2), float(gen.choice([0.05, 0.2, 0.6]))
        points = x + sample_ball(gen, 40, 2, 0.999 * radius)
        rows = np.sum(objective.gradient(points[:, None, :], objective.data[None, :, :]), axis=1)
        truth = _brute_force_min_norm(rows)
        problems += _interval_problems(f"sum of {ridges} |.| ridges, δ={radius}", subject.min_norm_point(rows), rows,
                                       truth, require_tight=True)
        checked += 1
    return problems, checked


def _check_goldstein(subject, ctx):
    problems, ridges = _ridge_problems(subject, ctx)
    more, sums = _sum_problems(subject, ctx)
    problems += more
    return deterministic(not problems, counterexample=problems[:3] or None,
                         detail=(f"min_norm_point on gradients sampled in B(x, δ): {ridges} single ridges (|.|, "
                                 f"capped, W; plain and smoothed; d ∈ {{1, 3}}) against the closed-form hull value and the "
                                 f"exact ‖∇h(x)‖_δ; {sums} sums of |.| ridges in d = 2 against a brute-force minimum"
                                 + (f"; violations: {'; '.join(problems[:3])}" if problems else "")))


def _best_vertex(call):
    """The shortest row, with the interval collapsed on its norm (no hull at all)."""
    from reference.stationarity import MinNormPoint

    rows = np.asarray(call.gradients, dtype=np.float64)
    index = int(np.argmin(np.linalg.norm(rows, axis=1)))
    weights = np.zeros(rows.shape[0])
    weights[index] = 1.0
    norm = float(np.linalg.norm(rows[index]))
    return MinNormPoint(rows[index].copy(), norm, weights, norm, norm, 0, True)


GOLDSTEIN_RIDGE = Claim(
    id="zo_o2nc.def2_1.goldstein_ridge",
    paper="zo_o2nc",
    location="Definition 2.1 (Goldstein δ-subdifferential, ‖∇h(x)‖_δ); Corollary 2.3; zo_o2nc.E13",
    statement=(
        "The minimum-norm point of the convex hull of gradients sampled in the open ball B(x, δ) — the finite form of "
        "Definition 2.1 (Clarke gradients for nonsmooth h) — is found with a certified interval containing its exact "
        "value (ridges L·φ(<a, x> − c) with φ = |.|, capped, W-shape, plain and smoothed: L·dist(0, [min, max slope]); "
        "sums of |.| ridges: brute force), whose upper end is never below the exact ‖∇h(x)‖_δ of the whole ball."
    ),
    kind="deterministic",
    requires=("min_norm_point",),
    check=_check_goldstein,
    mutants=(
        substitute("best_vertex", "the shortest gradient instead of the nearest point of the hull", "min_norm_point",
                   _best_vertex),
        rebind("one_iteration", "Wolfe's algorithm stopped after one major cycle", "min_norm_point", max_iterations=1),
    ),
)


# --- the certificate on constructed hulls of known minimum norm ----------------------------------------------------

def _constructed(gen, d, k_face, k_other, nu):
    """Rows whose hull has minimum norm ν exactly: a face with p* (‖p*‖ = ν) in its relative interior and points on
    the far side of the hyperplane <g, p*> = ‖p*‖² (the origin in the face's relative interior when ν = 0)."""
    direction = sample_sphere(gen, (), d)
    p = nu * direction
    basis = np.linalg.svd(np.eye(d) - np.outer(direction, direction))[0][:, : d - 1]
    k_face = min(k_face, d)
    offsets = (gen.standard_normal((k_face, d - 1)) @ basis.T) if d > 1 else np.zeros((k_face, 1))
    weights = gen.uniform(0.2, 1.0, k_face)
    weights /= weights.sum()
    offsets -= weights @ offsets  # Σ λ_j v_j = 0: p* = Σ λ_j (p* + v_j)
    face = p + offsets
    lift = gen.uniform(0.1, 2.0, k_other)[:, None] * direction
    sideways = (gen.standard_normal((k_other, d - 1)) @ basis.T) if d > 1 else np.zeros((k_other, 1))
    rows = np.vstack([face, p + lift + sideways])
    return rows[gen.permutation(rows.shape[0])]


def _certificate_cases(ctx):
    gen = ctx.generator("def2_1", "certificate")
    cases = []
    for _ in range(ctx.budget.pick(quick=4, full=25)):
        for d in (2, 3, 7):
            for nu in (0.0, 1e-4, 0.3, 5.0):
                rows = _constructed(gen, d, int(gen.integers(1, d + 1)), int(gen.integers(1, 12)), nu)
                scale = float(gen.choice([1.0, 1e-150, 1e150]))
                cases.append((f"constructed, d={d}, ν={nu:g}, scale {scale:g}", rows * scale, nu * scale, True))
    cases += [
        ("one row", np.array([[3.0, -4.0]]), 5.0, True),
        ("duplicated rows", np.array([[1.0, 2.0]] * 4 + [[2.0, 1.0]] * 3), math.sqrt(4.5), True),
        ("collinear rows, origin outside", np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]), math.sqrt(2.0), True),
        ("collinear rows, origin inside", np.array([[-1.0, -2.0], [2.0, 4.0], [0.5, 1.0]]), 0.0, True),
        ("d = 1, both signs", np.array([[-2.0], [0.5], [3.0]]), 0.0, True),
        ("d = 1, one sign", np.array([[2.0], [0.5], [3.0]]), 0.5, True),
        ("zero rows", np.zeros((3, 4)), 0.0, True),
        ("a zero row among others", np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [-4.0, 1.0, 0.0]]), 0.0, True),
        ("square corners", np.array([[1.0, 1.0], [1.0, -1.0], [3.0, 1.0], [3.0, -1.0]]), 1.0, True),
    ]
    return cases


def _check_certificate(subject, ctx):
    problems, count = [], 0
    for label, rows, truth, tight in _certificate_cases(ctx):
        result = subject.min_norm_point(rows)
        problems += _interval_problems(label, result, rows, truth, require_tight=tight)
        count += 1
    return deterministic(not problems, counterexample=problems[:3] or None,
                         detail=(f"{count} hulls of known minimum norm (constructed faces in d ∈ {{2, 3, 7}} with "
                                 f"ν ∈ {{0, 1e-4, 0.3, 5}}, scaled by 1 and 1e±150; one row, duplicates, collinear "
                                 f"rows, d = 1, zero rows): weights in the simplex, point = Σλ_i g_i, norm = ‖point‖, "
                                 f"lower ≤ ν ≤ upper, width ≤ tolerance + rounding"
                                 + (f"; violations: {'; '.join(problems[:3])}" if problems else "")))


def _lower_raised(result, call):
    """The certificate's lower end raised to the norm of the returned point (the rounding allowance dropped and the
    duality bound ignored): too high whenever the point is not exactly optimal."""
    return dataclasses.replace(result, lower=float(result.norm) * (1 + 1e-6) + 1e-300)


MIN_NORM_CERTIFICATE = Claim(
    id="zo_o2nc.def2_1.min_norm_certificate",
    paper="zo_o2nc",
    location="Definition 2.1 (the minimum-norm element of a convex hull of gradients); proofs of Lemma 4.6, "
             "Corollary 4.7 (‖∇F(w̄)‖_δ ≤ ‖(1/T)Σ_t ∇F(w_t)‖)",
    statement=(
        "For any finite set of rows, min_norm_point returns weights in the simplex, the point Σ_i λ_i g_i with its "
        "norm, and an interval [lower, upper] containing the minimum norm of the hull, no wider than the requested "
        "tolerance plus float64 rounding when the problem is well conditioned; checked on hulls of known minimum "
        "norm (constructed optimal faces, degenerate and 1e±150-scaled cases)."
    ),
    kind="deterministic",
    requires=("min_norm_point",),
    check=_check_certificate,
    mutants=(
        substitute("best_vertex", "the shortest row instead of the nearest point of the hull", "min_norm_point",
                   _best_vertex),
        on_output("lower_raised", "the certificate's lower end raised to the returned norm (+1e-6 relative)",
                  "min_norm_point", _lower_raised),
        on_output("weights_unnormalised", "weights that sum to 2", "min_norm_point",
                  lambda result, call: dataclasses.replace(result, weights=2 * np.asarray(result.weights))),
        rebind("one_iteration", "Wolfe's algorithm stopped after one major cycle", "min_norm_point", max_iterations=1),
    ),
)
