"""bgm21 §2 (normed spaces, the Frank–Wolfe gap eq. (1)), §4.1 (W = Conv(V), the ℓ_1 ball) and §4.2 (ℓ_p balls): the
geometry every Frank–Wolfe method of the paper runs on.

* ``bgm21.sec2.lmo_closed_forms``: the closed-form linear minimization oracles of the subject's ``LpBall`` (p = 1,
  1.5, 2) and ``Polytope`` return a point of W whose score ⟨v, g⟩ is the minimum over W: against Hölder's equality
  min_{‖v−c‖_p≤λ}⟨v, g⟩ = ⟨c, g⟩ − λ‖g‖_q, against ``scipy.optimize.linprog`` (HiGHS; the ℓ_1 ball as a linear
  program in split variables, the polytope over simplex weights) and ``scipy.optimize.minimize`` (SLSQP, 1 < p).
* ``bgm21.sec2.fw_gap``: Gap(w) = max_{v∈W}⟨g, w − v⟩ ≥ 0 for w ∈ W and equals ⟨g, w⟩ − (the minimum computed here);
  it is 0 at the minimiser of a convex quadratic F(w) = ½(w − a)ᵀA(w − a) with a inside W (∇F(a) = 0), and at the
  constrained minimiser P_W(a) of ½‖w − a‖² with a outside the ℓ_2 ball or the box (closed-form projections).
* ``bgm21.sec2.projection_nearest_point``: ``LpBall.project`` (p = 1, 1.5, 2, ∞) returns a point of W satisfying the
  variational inequality ⟨w − P, z − P⟩ ≤ 0 for all z ∈ W — checked exactly through Hölder, max_{z∈W}⟨w − P, z⟩ =
  ⟨w − P, c⟩ + λ‖w − P‖_q — and no farther from w than SciPy's SLSQP solution of the same problem.

Tolerances: a few hundred float64 roundings of the magnitudes involved (the ℓ_1.5 oracle and projection are root finds
to 4·eps relative); SciPy's solvers are trusted to 1e-7 relative (HiGHS and SLSQP stopping rules at 1e-12 on the
objective), used only as an upper reference for the subject's optimum.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from proofs_checks.authoring import Claim, deterministic, mutant, on_output
from reference.geometry import LpBall, Polytope

from ._gll_truth import UNIT

ROUNDINGS = 512
SCIPY_RELATIVE = 1e-7
PS = (1.0, 1.5, 2.0)


def _q(p):
    return math.inf if p == 1.0 else (1.0 if math.isinf(p) else p / (p - 1.0))


def _norm(x, p):
    return float(np.max(np.abs(x))) if math.isinf(p) else float(np.sum(np.abs(x) ** p) ** (1.0 / p))


def _ball_minimum(c, lam, g, p):
    """min_{‖v−c‖_p≤λ}⟨v, g⟩ = ⟨c, g⟩ − λ‖g‖_q (Hölder's equality)."""
    return float(c @ g) - lam * _norm(g, _q(p))


def _scipy_ball_minimum(c, lam, g, p):
    d = len(c)
    if p == 1.0:  # v = c + s − t, s, t ≥ 0, Σ(s + t) ≤ λ
        res = optimize.linprog(np.concatenate([g, -g]), A_ub=np.ones((1, 2 * d)), b_ub=[lam],
                               bounds=[(0, None)] * (2 * d), method="highs")
        return float(c @ g) + float(res.fun)
    cons = {"type": "ineq", "fun": lambda v: lam**p - np.sum(np.abs(v - c) ** p)}
    start = c - 0.5 * lam * g / _norm(g, p)
    res = optimize.minimize(lambda v: float(v @ g), start, jac=lambda v: g, constraints=[cons], method="SLSQP",
                            options={"ftol": 1e-14, "maxiter": 500})
    v = res.x
    excess = _norm(v - c, p) / lam
    if excess > 1.0:  # pull a slightly infeasible SLSQP point back into the ball: an upper bound of the minimum
        v = c + (v - c) / excess
    return float(v @ g)


def _sets(gen, d):
    c = gen.normal(size=d)
    lam = float(10.0 ** gen.uniform(-1, 1))
    return c, lam


def _check_lmo(subject, ctx):
    count = ctx.budget.pick(quick=15, full=150)
    gen = ctx.generator("lmo")
    worst = 0.0
    for k in range(count):
        d = int(gen.integers(2, 7))
        g = gen.normal(size=d) * float(10.0 ** gen.uniform(-2, 2))
        for p in PS:
            c, lam = _sets(gen, d)
            v = np.asarray(subject.LpBall(p, lam, c).lmo(g), dtype=np.float64)
            scale = ROUNDINGS * UNIT * (d + 2) * float(np.abs(g) @ (np.abs(c) + lam))
            exact = _ball_minimum(c, lam, g, p)
            if not _norm(v - c, p) <= lam * (1 + ROUNDINGS * UNIT * d):
                return deterministic(False, statistic=_norm(v - c, p), bound=lam, detail=(
                    f"ℓ_{p:g} ball (d = {d}): lmo(g) is outside the ball"))
            got = float(v @ g)
            reference = _scipy_ball_minimum(c, lam, g, p)
            if not (got <= exact + scale and got <= reference + SCIPY_RELATIVE * abs(reference) + scale):
                return deterministic(False, statistic=got, bound=exact, detail=(
                    f"ℓ_{p:g} ball (d = {d}, λ = {lam:.4g}): ⟨lmo(g), g⟩ = {got!r}, but the minimum over the ball is "
                    f"{exact!r} (Hölder), {reference!r} (SciPy)"))
            worst = max(worst, (got - exact) / max(scale, 1e-300))
        J = int(gen.integers(2, 9))
        V = gen.normal(size=(J, d))
        v, j = subject.Polytope(V).lmo(g)
        v = np.asarray(v, dtype=np.float64)
        res = optimize.linprog(V @ g, A_eq=np.ones((1, J)), b_eq=[1.0], bounds=[(0, None)] * J, method="highs")
        scale = ROUNDINGS * UNIT * (d + 2) * float(np.max(np.abs(V) @ np.abs(g)))
        if not (0 <= int(j) < J and np.array_equal(v, V[int(j)])):
            return deterministic(False, detail=f"polytope (J = {J}): lmo returned index {j} and a point that is not "
                                               "that vertex")
        if not float(v @ g) <= float(res.fun) + SCIPY_RELATIVE * abs(float(res.fun)) + scale:
            return deterministic(False, statistic=float(v @ g), bound=float(res.fun), detail=(
                f"polytope (J = {J}, d = {d}): ⟨lmo(g), g⟩ = {float(v @ g)!r} > linprog's minimum {float(res.fun)!r}"))
    return deterministic(True, statistic=worst, bound=1.0, detail=(
        f"{count} gradients × (ℓ_1, ℓ_1.5, ℓ_2 balls and a random polytope): every oracle point in W and optimal; "
        f"largest excess over Hölder's minimum {worst:.3g} of the rounding slack"))


def _ball_mutant(name, description, lmo=None, project=None):
    """The subject's LpBall with ``lmo(ball, g)`` and/or ``project(ball, w)`` replaced."""

    def transform(original):
        class Mutated(original):
            def lmo(self, g):
                return super().lmo(g) if lmo is None else lmo(self, np.asarray(g, dtype=np.float64),
                                                              lambda h: original.lmo(self, h))

            def project(self, w):
                return super().project(w) if project is None else project(self, np.asarray(w, dtype=np.float64),
                                                                          lambda x: original.project(self, x))

        Mutated.__name__ = original.__name__
        return Mutated

    return mutant(name, description, "LpBall", transform)


def _l1_smallest(ball, g, right):
    if ball.p != 1.0:
        return right(g)
    i = int(np.argmin(np.abs(g)))
    v = np.array(ball.center)
    v[i] -= ball.radius * np.sign(g[i])
    return v


def _wrong_exponent(ball, g, right):
    if ball.p in (1.0, 2.0) or math.isinf(ball.p):
        return right(g)
    a = np.abs(g) / np.max(np.abs(g))
    ratio = a / _norm(a, ball.p)
    return np.array(ball.center) - ball.radius * np.sign(g) * ratio ** (ball.p - 1.0)


def _polytope_argmax(original):
    class Mutated(original):
        def lmo(self, g):
            vertex, index = original.lmo(self, -np.asarray(g, dtype=np.float64))
            return vertex, index

    Mutated.__name__ = original.__name__
    return Mutated


LMO_CLOSED_FORMS = Claim(
    id="bgm21.sec2.lmo_closed_forms",
    paper="bgm21",
    location="§2 (normed spaces, dual norms); §4.1 (W = Conv(V), the ℓ_1 ball); §4.2 (ℓ_p balls, 1 < p ≤ 2)",
    statement=(
        "The linear minimization oracles over ℓ_p balls (p = 1, 1.5, 2) and vertex polytopes return a point of W "
        "attaining min_{v∈W}⟨v, g⟩ (= ⟨c, g⟩ − λ‖g‖_q for a ball), as linprog and SLSQP confirm."
    ),
    kind="deterministic",
    requires=("LpBall", "Polytope"),
    check=_check_lmo,
    mutants=(
        _ball_mutant("l1_smallest_coordinate", "the ℓ_1 oracle moves along the coordinate of smallest |g_i|",
                     lmo=_l1_smallest),
        _ball_mutant("maximiser", "the ball oracle returns the maximiser of ⟨v, g⟩", lmo=lambda b, g, right: right(-g)),
        _ball_mutant("exponent_p_minus_one", "the ℓ_p oracle uses |g|^{p−1} instead of |g|^{q−1}", lmo=_wrong_exponent),
        mutant("polytope_argmax", "the polytope oracle picks the vertex of largest score", "Polytope",
               _polytope_argmax),
    ),
)


# --- the Frank–Wolfe gap ----------------------------------------------------------------------------------------------

def _check_fw_gap(subject, ctx):
    # the feasible sets are the reference's (test problems here): fw_gap is the subject
    count = ctx.budget.pick(quick=30, full=300)
    gen = ctx.generator("fw_gap")
    checked = 0
    for k in range(count):
        d = int(gen.integers(2, 7))
        g = gen.normal(size=d) * float(10.0 ** gen.uniform(-2, 2))
        c, lam = _sets(gen, d)
        p = PS[k % 3]
        ball = LpBall(p, lam, c)
        direction = gen.normal(size=d)
        w = c + lam * gen.uniform(0, 1) * direction / _norm(direction, p)  # a point of W
        minimum = _ball_minimum(c, lam, g, p)
        J = int(gen.integers(2, 8))
        V = gen.normal(size=(J, d))
        weights = gen.dirichlet(np.ones(J))
        cases = [(f"ℓ_{p:g} ball", ball, w, minimum), ("polytope", Polytope(V), weights @ V, float(np.min(V @ g)))]
        for label, W, point, low in cases:
            gap = float(subject.fw_gap(g, point, W))
            expected = float(g @ point) - low
            tol = ROUNDINGS * UNIT * (d + 2) * float(np.abs(g) @ (np.abs(point) + np.abs(c) + lam + 1.0)) * (
                1.0 if label != "polytope" else float(np.max(np.abs(V))) + 1.0)
            if not (gap >= 0.0 and abs(gap - expected) <= tol):
                return deterministic(False, statistic=gap, bound=expected, detail=(
                    f"{label} (d = {d}): Gap(w) = {gap!r}, but max_v⟨g, w − v⟩ = {expected!r} for w ∈ W"))
            checked += 1
        # zero at minimisers: ∇F(a) = 0 for a ∈ W; the projection of an outside a for F = ½‖w − a‖² (ℓ_2 ball, box)
        A = gen.normal(size=(d, d))
        A = A @ A.T + np.eye(d)
        gap = float(subject.fw_gap(A @ (w - w), w, ball))
        if gap != 0.0:
            return deterministic(False, statistic=gap, bound=0.0, detail=f"Gap at the interior minimiser = {gap!r}")
        a = c + 3.0 * lam * direction / np.linalg.norm(direction)
        for label, W, proj in (("ℓ_2 ball", LpBall(2, lam, c), c + lam * (a - c) / np.linalg.norm(a - c)),
                               ("box", LpBall(math.inf, lam, c), np.clip(a, c - lam, c + lam))):
            grad = proj - a
            gap = float(subject.fw_gap(grad, proj, W))
            tol = ROUNDINGS * UNIT * (d + 2) * float(np.abs(grad) @ (np.abs(proj) + np.abs(c) + lam))
            if not 0.0 <= gap <= tol:
                return deterministic(False, statistic=gap, bound=tol, detail=(
                    f"{label} (d = {d}): Gap at the constrained minimiser P_W(a) of ½‖w − a‖² is {gap!r}, not 0"))
    return deterministic(True, detail=(f"{checked} points of ℓ_p balls and polytopes: Gap ≥ 0 and = max_v⟨g, w − v⟩; "
                                       f"0 at {count} interior minimisers and {2 * count} constrained minimisers"))


FW_GAP = Claim(
    id="bgm21.sec2.fw_gap",
    paper="bgm21",
    location="§2, eq. (1) (the Frank–Wolfe gap)",
    statement=(
        "Gap(w) = max_{v∈W}⟨∇F(w), w − v⟩ is ≥ 0 on W, equals ⟨g, w⟩ − min_W⟨g, ·⟩, and is 0 at the minimisers of a "
        "convex function over W (interior, and on the boundary)."
    ),
    kind="deterministic",
    requires=("fw_gap",),
    check=_check_fw_gap,
    mutants=(
        on_output("gap_halved", "the gap divided by 2", "fw_gap", lambda gap, call: 0.5 * gap),
        on_output("offset", "the gap plus 1e-6", "fw_gap", lambda gap, call: gap + 1e-6),
        on_output("absolute_score", "Gap = |⟨g, w − lmo(g)⟩| computed with the maximiser", "fw_gap",
                  lambda gap, call: abs(call.original(gradient=-np.asarray(call.gradient, dtype=np.float64)))),
    ),
)


# --- projections: the nearest point ----------------------------------------------------------------------------------

def _scipy_projection_distance(w, c, lam, p):
    d = len(w)
    if p == 1.0:  # x = c + s − t, s, t ≥ 0, Σ(s + t) ≤ λ
        fun = lambda z: float(np.sum((c + z[:d] - z[d:] - w) ** 2))  # noqa: E731
        cons = {"type": "ineq", "fun": lambda z: lam - np.sum(z)}
        res = optimize.minimize(fun, np.zeros(2 * d), constraints=[cons], bounds=[(0, None)] * (2 * d),
                                method="SLSQP", options={"ftol": 1e-15, "maxiter": 1000})
        x = c + res.x[:d] - res.x[d:]
    elif math.isinf(p):
        return float(np.linalg.norm(np.clip(w, c - lam, c + lam) - w))
    else:
        cons = {"type": "ineq", "fun": lambda x: lam**p - np.sum(np.abs(x - c) ** p)}
        res = optimize.minimize(lambda x: float(np.sum((x - w) ** 2)), c, constraints=[cons], method="SLSQP",
                                options={"ftol": 1e-15, "maxiter": 1000})
        x = res.x
    excess = _norm(x - c, p) / lam
    if excess > 1.0:
        x = c + (x - c) / excess
    return float(np.linalg.norm(x - w))


def _check_projection(subject, ctx):
    count = ctx.budget.pick(quick=12, full=120)
    gen = ctx.generator("projection")
    worst = 0.0
    for k in range(count):
        d = int(gen.integers(2, 7))
        for p in (1.0, 1.5, 2.0, math.inf):
            c, lam = _sets(gen, d)
            w = c + gen.normal(size=d) * lam * float(gen.choice([0.2, 1.0, 3.0]))
            P = np.asarray(subject.LpBall(p, lam, c).project(w), dtype=np.float64)
            label = f"ℓ_{p:g} ball (d = {d}, λ = {lam:.4g})"
            if not _norm(P - c, p) <= lam * (1 + ROUNDINGS * UNIT * d):
                return deterministic(False, statistic=_norm(P - c, p), bound=lam, detail=f"{label}: P(w) ∉ W")
            r = w - P
            lhs = float(r @ c) + lam * _norm(r, _q(p))  # max_{z∈W}⟨w − P, z⟩
            rhs = float(r @ P)
            tol = ROUNDINGS * UNIT * (d + 2) * float(np.abs(r) @ (np.abs(P) + np.abs(c) + lam + np.abs(w)))
            if not lhs <= rhs + tol:
                return deterministic(False, statistic=lhs - rhs, bound=tol, detail=(
                    f"{label}: max_z⟨w − P, z − P⟩ = {lhs - rhs!r} > 0: P(w) is not the nearest point of W"))
            dist, ref = float(np.linalg.norm(r)), _scipy_projection_distance(w, c, lam, p)
            if not dist <= ref * (1 + SCIPY_RELATIVE) + tol:
                return deterministic(False, statistic=dist, bound=ref, detail=(
                    f"{label}: ‖P(w) − w‖ = {dist!r} exceeds SciPy's {ref!r}"))
            worst = max(worst, (lhs - rhs) / max(tol, 1e-300))
    return deterministic(True, statistic=worst, bound=1.0, detail=(
        f"{count} points × (ℓ_1, ℓ_1.5, ℓ_2, ℓ_∞ balls): every projection in W, variational inequality within "
        f"{worst:.3g} of its rounding slack, never farther than SciPy's SLSQP point"))


def _radial(ball, w, right):
    y = w - ball.center
    norm = _norm(y, ball.p)
    return w if norm <= ball.radius else ball.center + y * (ball.radius / norm)


PROJECTION_NEAREST_POINT = Claim(
    id="bgm21.sec2.projection_nearest_point",
    paper="bgm21",
    location="§2 (ℓ_p balls); the projections of Phased-SGD (Theorem 5) and of Algorithm 2's subproblems",
    statement=(
        "The Euclidean projection onto an ℓ_p ball (p = 1, 1.5, 2, ∞) returns the nearest point of the ball: it lies "
        "in W and satisfies ⟨w − P(w), z − P(w)⟩ ≤ 0 for every z ∈ W."
    ),
    kind="deterministic",
    requires=("LpBall",),
    check=_check_projection,
    mutants=(
        _ball_mutant("radial_scaling", "every ℓ_p projection by radial scaling (nearest only for p = 2)",
                     project=_radial),
        _ball_mutant("coordinate_clip", "the projection clips each coordinate to [c_i − λ, c_i + λ]",
                     project=lambda b, w, right: np.clip(w, b.center - b.radius, b.center + b.radius)),
        _ball_mutant("shrunk", "the projection lands at 0.99 of the way from c", project=lambda b, w, right:
                     b.center + 0.99 * (right(w) - b.center)),
    ),
)
