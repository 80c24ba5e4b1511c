"""bgm21 §5 (weakly convex losses): Corollary 25 and Proposition 13 (the regularised loss is strongly convex),
Lemma 14 (the proximal-type point is nearly stationary) with Algorithm 2's solver as the prox, and Theorem 16's β
(bgm21.E13).

Ground truth is computed here: second differences and convexity inequalities in mpmath (40 digits), the exact prox
by projected gradient descent to a contraction error below 1e-30, closed-form ℓ_p geometry. The extremal functions
are quadratics f(w) = −(ρ/2)⟨s, w⟩²/‖s‖_q² with s = (1, −1, 1, −1, …): since (sᵀu)² ≤ ‖s‖_q²‖u‖_p² (Hölder), f is
exactly ρ-weakly convex w.r.t. ‖·‖_p in the sense of (2) (for a quadratic with Hessian −H, the defect in (2) is
½λ(1 − λ)uᵀHu), and the bound is attained along u = s. At x − c = (1, …, 1) the Hessian of ½‖· − c‖²_r (1 < r ≤ 2)
is (r − 1)d^{2/r − 1}·I plus a multiple of 11ᵀ, and Σ s_i = 0 (d even) removes the latter, so
sᵀ∇²s/‖s‖_p² = (r − 1)d^{2/r − 2/p} = (r − 1)d^{−2(1/p − 1/r)}: exactly ν_eff (with r = p̄). So h = f + (β/2)‖· − c‖²_r
has curvature (ν_eff·β − ρ)‖s‖_p² along s there: the modulus of Proposition 13 is attained, and h is not convex
when ν_eff·β < ρ.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np

from proofs_checks.authoring import Claim, deterministic, erratum_evidence, on_output, rebind
from reference.algorithms.bgm21_prox import ASCConfig
from reference.geometry import LpBall

from ._sfw_problems import CURVATURE, lp_norm, make_pool

#: Digits of the mpmath evaluations (second differences at step τ = 1e-6 lose about 12 digits to cancellation).
DIGITS = 40
#: Step of the second differences; their O(τ²) bias is below 1e-10 relative for the problems here.
TAU = mpmath.mpf("1e-6")


def _alternating(d: int) -> list:
    return [1 if i % 2 == 0 else -1 for i in range(d)]


def _mp_norm(x, r) -> mpmath.mpf:
    r = mpmath.mpf(r)
    return mpmath.fsum(abs(v) ** r for v in x) ** (1 / r)


def _quadratic(d: int, p: float, rho):
    """f(w) = −(ρ/2)⟨s, w⟩²/‖s‖_q² (ρ-weakly convex w.r.t. ‖·‖_p, tight along s)."""
    s = _alternating(d)
    q = mpmath.mpf(p) / (mpmath.mpf(p) - 1) if p != 1 else None
    sq = (_mp_norm(s, q) if q is not None else mpmath.mpf(1)) ** 2
    return lambda w: -mpmath.mpf(rho) / 2 * mpmath.fsum(a * b for a, b in zip(s, w)) ** 2 / sq


def _regularised(f, beta, r, center):
    return lambda w: f(w) + mpmath.mpf(beta) / 2 * _mp_norm([a - b for a, b in zip(w, center)], r) ** 2


def _curvature(h, x, u, p) -> mpmath.mpf:
    """[h(x + τu) + h(x − τu) − 2h(x)]/(τ²‖u‖_p²): the modulus of h along u at x (second order)."""
    plus = [a + TAU * b for a, b in zip(x, u)]
    minus = [a - TAU * b for a, b in zip(x, u)]
    return (h(plus) + h(minus) - 2 * h(x)) / (TAU**2 * _mp_norm(u, p) ** 2)


# --- Corollary 25 and Proposition 13 --------------------------------------------------------------------------------

#: (p, d) with p ≥ 1 + 1/ln d, so p̄ = p and Proposition 13's ν for ½‖·‖²_p w.r.t. ‖·‖_p is p − 1.
PROP13_SETTINGS = ((2.0, 4), (1.5, 8), (1.25, 64))
POOL_WC = {d: make_pool(d=d, K=8, seed=2021_1300 + d) for _, d in PROP13_SETTINGS}


def _check_prop13(subject, ctx):
    gen = ctx.generator("prop13")
    problems, lines = [], []
    trials = ctx.budget.pick(quick=40, full=400)
    with mpmath.workdps(DIGITS):
        for p, d in PROP13_SETTINGS:
            nu = float(subject.nu_eff(p, d))
            q = p / (p - 1)
            pool = POOL_WC[d]
            rho = CURVATURE * max(lp_norm(x, q) for x in pool.X) ** 2  # Corollary 25: L1-smooth ⇒ L1-weakly convex
            beta = 2 * rho / (p - 1)
            mu = nu * beta - rho
            # Corollary 25 on every record of the sigmoid GLL: inequality (2) with ρ = L1
            worst25 = -math.inf
            for _ in range(trials):
                w, v = gen.uniform(-1, 1, d), gen.uniform(-1, 1, d)
                lam = float(gen.uniform())
                mid = lam * w + (1 - lam) * v
                excess = (pool.losses(mid) - lam * pool.losses(w) - (1 - lam) * pool.losses(v)
                          - rho * lam * (1 - lam) / 2 * lp_norm(w - v, p) ** 2)
                worst25 = max(worst25, float(np.max(excess)))
            if worst25 > 1e-13:  # float64: a few O(1) terms
                problems.append(f"p = {p}: the sigmoid GLL violates (2) with ρ = L1 by {worst25:.3g}")
            # Proposition 13 on random pairs for h = F + (β/2)‖· − c‖²_p and h = quadratic + (β/2)‖· − c‖²_p
            center = [mpmath.mpf(float(v)) for v in gen.uniform(-0.3, 0.3, d)]
            gll = lambda w: mpmath.fsum(1 - mpmath.tanh(y * mpmath.fsum(mpmath.mpf(float(a)) * b for a, b in zip(x, w)))
                                        for x, y in zip(pool.X, pool.y)) / pool.K
            worst13 = -mpmath.inf
            for f in (gll, _quadratic(d, p, rho)):
                h = _regularised(f, beta, p, center)
                for _ in range(max(4, trials // 8)):
                    w = [mpmath.mpf(float(v)) for v in gen.uniform(-1, 1, d)]
                    v = [mpmath.mpf(float(u)) for u in gen.uniform(-1, 1, d)]
                    lam = mpmath.mpf(float(gen.uniform()))
                    mid = [lam * a + (1 - lam) * b for a, b in zip(w, v)]
                    dist = _mp_norm([a - b for a, b in zip(w, v)], p) ** 2
                    gap = h(mid) - lam * h(w) - (1 - lam) * h(v) + mpmath.mpf(mu) / 2 * lam * (1 - lam) * dist
                    worst13 = max(worst13, gap / dist)
            # the modulus is attained: along s at c + (1, …, 1) the quadratic's h has curvature νβ − ρ with ν = p − 1
            h = _regularised(_quadratic(d, p, rho), beta, p, center)
            x = [c + 1 for c in center]
            measured = _curvature(h, x, _alternating(d), p)
            if worst13 > mpmath.mpf(10) ** (-25):
                problems.append(f"p = {p}, d = {d}: h is not (ν_eff β − ρ)-strongly convex with ν_eff = {nu:.6g} "
                                f"(defect {float(worst13):.3g})")
            if abs(measured - mu) > 1e-8 * beta:
                problems.append(f"p = {p}, d = {d}: the modulus along the extremal direction is "
                                f"{float(measured):.10g}, Proposition 13 with the subject's ν_eff gives {mu:.10g} "
                                f"(ν = p − 1 = {p - 1})")
            lines.append(f"p = {p}, d = {d}: ν_eff = {nu:.6g}, μ = {mu:.6g}, extremal modulus {float(measured):.10g}")
        # equality at p = 2: for f = −(ρ/2)‖w‖² the inequality of Proposition 13 is an identity
        d, rho, beta = 4, mpmath.mpf(1), mpmath.mpf(3)
        nu = mpmath.mpf(float(subject.nu_eff(2.0, d)))
        f = lambda w: -rho / 2 * mpmath.fsum(a * a for a in w)
        center = [mpmath.mpf("0.1")] * d
        h = _regularised(f, beta, 2, center)
        worst_eq = mpmath.mpf(0)
        for _ in range(8):
            w = [mpmath.mpf(float(v)) for v in gen.uniform(-1, 1, d)]
            v = [mpmath.mpf(float(u)) for u in gen.uniform(-1, 1, d)]
            lam = mpmath.mpf(float(gen.uniform()))
            mid = [lam * a + (1 - lam) * b for a, b in zip(w, v)]
            dist = _mp_norm([a - b for a, b in zip(w, v)], 2) ** 2
            worst_eq = max(worst_eq, abs(h(mid) - lam * h(w) - (1 - lam) * h(v) + (nu * beta - rho) / 2 * lam
                                         * (1 - lam) * dist) / dist)
        if worst_eq > 1e-15:  # ν from float64: relative error ≤ 1e-16
            problems.append(f"p = 2: equality fails by {float(worst_eq):.3g}")
    return deterministic(not problems, statistic=len(problems), bound=0,
                         detail="; ".join(problems[:3]) if problems else
                         "; ".join(lines) + f"; equality at p = 2 to {float(worst_eq):.2g}; Corollary 25 held on "
                                            f"{trials} random triples per setting")


PROP13 = Claim(
    id="bgm21.prop13.regularised_strong_convexity",
    paper="bgm21",
    location="Proposition 13; Corollary 25 (Appendix C.1, missing); §5 eq. (2)",
    statement="An L1-smooth f is L1-weakly convex (Corollary 25; checked on the sigmoid GLL f = 1 − tanh(y⟨x, w⟩)), "
              "and for ρ-weakly convex f and νβ ≥ ρ, w ↦ f(w) + (β/2)‖w − u‖²_p is (νβ − ρ)-strongly convex w.r.t. "
              "‖·‖_p with ν = p − 1 (p̄ = p), the modulus attained, and with equality in the defining inequality at p = 2.",
    kind="deterministic",
    requires=("nu_eff",),
    check=_check_prop13,
    mutants=(
        on_output("nu_is_p", "ν = p (the exponent, not p − 1)", "nu_eff", lambda nu, call: nu + 1.0),
        on_output("nu_10pc_large", "ν 10 % too large", "nu_eff", lambda nu, call: 1.1 * nu),
        on_output("nu_10pc_small", "ν 10 % too small (a valid but loose modulus: the extremal shows the true one)",
                  "nu_eff", lambda nu, call: 0.9 * nu),
    ),
)


# --- Lemma 14 with Algorithm 2's solver as the prox ------------------------------------------------------------------

POOL14 = make_pool(d=3, K=10, seed=2021_1400, scale=1.5)


def _exact_prox(w, beta, rho, radius):
    """prox_F^β(w) on the ℓ_2 ball of the given radius: projected gradient with step 1/(ρ + β), a contraction with
    factor 1 − (β − ρ)/(ρ + β) (F is ρ-smooth, the subproblem (β − ρ)-strongly convex); 400 steps."""
    step = 1.0 / (rho + beta)
    v = np.array(w, dtype=np.float64)
    for _ in range(400):
        v = v - step * (POOL14.population_gradient(v) + beta * (v - w))
        norm = float(np.linalg.norm(v))
        if norm > radius:
            v *= radius / norm
    return v


def _check_lemma14(subject, ctx):
    gen = ctx.generator("lemma14")
    radius, D = 1.0, 2.0
    L0 = max(lp_norm(x, 2) for x in POOL14.X)
    rho = CURVATURE * L0**2
    beta = 2 * rho
    T = 90
    q = 1 - (beta - rho) / (rho + beta)
    ratios, problems = [], []
    points = [gen.normal(size=3) for _ in range(ctx.budget.pick(quick=6, full=30))]
    for k, w in enumerate(points):
        w = w / np.linalg.norm(w) * (radius if k % 2 == 0 else float(gen.uniform(0, radius)))
        prox = _exact_prox(w, beta, rho, radius)
        grad = POOL14.population_gradient(prox)
        gap = float(grad @ prox) + radius * float(np.linalg.norm(grad))  # max_{‖v‖≤1} ⟨∇F, prox − v⟩
        bound = beta * D * float(np.linalg.norm(w - prox))
        if gap > bound * (1 + 1e-9) + 1e-12:
            problems.append(f"point {k}: Gap(prox) = {gap:.6g} > βD‖w − prox‖ = {bound:.6g}")
        ratios.append(gap / bound if bound > 0 else 0.0)
        config = ASCConfig(epsilon=1.0, delta=1e-5, lipschitz=L0, n_steps=T, noise_std=0.0, step="constant",
                           smoothness=rho)
        res = subject.asc_dp_gd(POOL14.gradient, POOL14.rows, LpBall(2.0, radius, np.zeros(3)), config, center=w,
                                beta=beta, mu=beta - rho, noise_seed=1000 + k)
        error = float(np.linalg.norm(np.asarray(res.output) - prox))
        allowed = q**T * D + 1e-12  # linear rate of the noise-free constant-step solver, plus rounding
        if not error <= allowed:
            problems.append(f"point {k}: the solver's output is {error:.3g} from prox_F^β(w) (allowed {allowed:.3g})")
    return deterministic(not problems, statistic=max(ratios), bound=1.0,
                         detail="; ".join(problems[:3]) if problems else
                         f"{len(points)} points: Gap_F(prox) / (βD‖w − prox‖) at most {max(ratios):.4g}; the "
                         f"noise-free solver (T = {T}) returns prox_F^β(w) within its linear-rate bound")


LEMMA14 = Claim(
    id="bgm21.lemma14.prox_near_stationarity",
    paper="bgm21",
    location="Lemma 14; Algorithm 2, line 4 (the subproblem (6)), p = 2",
    statement="For the smooth, ρ-weakly convex population loss F of the sigmoid GLL on the ℓ_2 ball (D = 2) and "
              "β = 2ρ, ŵ = prox_F^β(w) satisfies Gap_F(ŵ) ≤ βD‖w − ŵ‖; Algorithm 2's solver without noise returns "
              "ŵ for the subproblem centred at w.",
    kind="deterministic",
    requires=("asc_dp_gd",),
    check=_check_lemma14,
    # σ = 0 (the prox itself) makes the solver's reported zCDP parameter ρ_z = ∞, as it should; the check tests the
    # output's finiteness itself
    nonfinite_ok=("asc_dp_gd",),
    mutants=(
        rebind("beta_halved", "the subproblem solved with β/2", "asc_dp_gd", beta=lambda b: b / 2),
        rebind("center_ignored", "the subproblem centred at 0 in place of w_r", "asc_dp_gd",
               center=lambda c: np.zeros_like(np.asarray(c, dtype=np.float64))),
    ),
)


# --- bgm21.E13: Theorem 16's β ------------------------------------------------------------------------------------

BETA_DIMENSIONS = (10, 100, 1_000, 10_000, 100_000, 1_000_000)


def _check_beta_erratum(subject, ctx):
    rho, n, L0, D, eps, delta = 1.0, 10_000, 1.0, 1.0, 1.0, 1e-6
    lines, printed_fails, corrected_holds = [], True, True
    with mpmath.workdps(DIGITS):
        products = []
        for d in BETA_DIMENSIONS:
            ln_d = mpmath.log(d)
            pb = 1 + 1 / ln_d
            nu = (pb - 1) * mpmath.power(d, -2 * (1 - 1 / pb))
            products.append(float(2 * ln_d * nu))
            printed = subject.theorem16_params(n, d, 1.0, rho, L0, D, eps, delta, beta_variant="printed")
            corrected = subject.theorem16_params(n, d, 1.0, rho, L0, D, eps, delta, beta_variant="corrected")
            if not mpmath.almosteq(mpmath.mpf(float(printed.nu_eff)), nu, rel_eps=1e-12):
                corrected_holds = False
                lines.append(f"d = {d}: ν_eff = {printed.nu_eff}, expected {mpmath.nstr(nu, 15)}")
            printed_fails &= float(printed.mu) < 0 and not printed.strongly_convex
            corrected_holds &= math.isclose(float(corrected.mu), rho, rel_tol=1e-12) and bool(corrected.strongly_convex)
        lines.append("p = 1: 2κν_eff = " + ", ".join(f"{v:.3f}" for v in products) + f" at d = {BETA_DIMENSIONS}")
        printed_fails &= all(v < 1 for v in products)
        # the counterexample at p = 1, d = 10: f = −(ρ/2)⟨s, w⟩², ρ-weakly convex w.r.t. ℓ_1 (|s_i| = 1)
        d = 10
        printed = subject.theorem16_params(n, d, 1.0, rho, L0, D, eps, delta, beta_variant="printed")
        corrected = subject.theorem16_params(n, d, 1.0, rho, L0, D, eps, delta, beta_variant="corrected")
        f = _quadratic(d, 1.0, rho)
        center = [mpmath.mpf(0)] * d
        x = [mpmath.mpf(1)] * d
        s = _alternating(d)
        bent = _curvature(_regularised(f, printed.beta, printed.p_bar, center), x, s, 1)
        straight = _curvature(_regularised(f, corrected.beta, corrected.p_bar, center), x, s, 1)
        printed_fails &= bent < 0
        corrected_holds &= abs(straight - rho) <= 1e-8
        lines.append(f"d = 10: along s = (1, −1, …) at w − u = (1, …, 1), f + (β/2)‖· − u‖²_p̄ has curvature "
                     f"{float(bent):.6g}·‖s‖_1² with the printed β = {printed.beta:.6g} (not convex) and "
                     f"{float(straight):.6g}·‖s‖_1² with the corrected β = {corrected.beta:.6g}")
        # the corrected β: strongly convex with modulus ≥ ρ at random points and directions (ν_eff a lower bound)
        gen = ctx.generator("beta-erratum")
        h = _regularised(f, corrected.beta, corrected.p_bar, center)
        worst = mpmath.inf
        for _ in range(ctx.budget.pick(quick=20, full=200)):
            point = [mpmath.mpf(float(v)) for v in gen.uniform(-1, 1, d)]
            u = [mpmath.mpf(float(v)) for v in gen.normal(size=d)]
            worst = min(worst, _curvature(h, point, u, 1))
        corrected_holds &= worst >= rho * (1 - 1e-6)
        lines.append(f"corrected β: smallest curvature over random points and directions {float(worst):.6g} "
                     f"≥ ρ = {rho}")
        # where p ≥ 1 + 1/ln d the two β agree
        same = subject.theorem16_params(n, 10, 1.5, rho, L0, D, eps, delta, beta_variant="printed")
        corrected_holds &= math.isclose(float(same.beta_printed), float(same.beta_corrected), rel_tol=1e-12)
    return erratum_evidence(printed_fails, corrected_holds, statistic=max(products), bound=1.0, detail="; ".join(lines))


def _no_dimension_factor(params, call):
    nu = params.p_bar - 1.0
    beta_corrected = 2 * params.rho_wc / nu
    beta = beta_corrected if params.beta_variant == "corrected" else params.beta_printed
    mu = nu * beta - params.rho_wc
    return dataclasses.replace(params, nu_eff=nu, beta_corrected=beta_corrected, beta=beta, mu=mu,
                               strongly_convex=mu > 0)


BETA_ERRATUM = Claim(
    id="bgm21.thm16.regularised_strong_convexity",
    paper="bgm21",
    location="Theorem 16 (β = 2ρκ); Algorithm 2, line 4; Proposition 13; bgm21.E13",
    statement="With the regulariser in ‖·‖_p̄ and weak convexity in ‖·‖_p, the subproblems of Algorithm 2 are strongly "
              "convex when ν_eff·β > ρ, ν_eff = (p̄ − 1)d^{−2(1/p − 1/p̄)}; the printed β = 2ρκ violates it for p near "
              "1 (2κν_eff ≈ 0.31–0.50 at p = 1, d = 10 … 10⁶, and f = −(ρ/2)⟨s, w⟩² makes the subproblem non-convex), "
              "while β = 2ρ/ν_eff gives modulus ρ and equals 2ρκ when p ≥ 1 + 1/ln d.",
    kind="deterministic",
    requires=("theorem16_params",),
    check=_check_beta_erratum,
    mutants=(
        rebind("printed_is_corrected", "the printed variant silently returns the corrected β", "theorem16_params",
               beta_variant="corrected"),
        on_output("nu_without_dimension_factor", "ν_eff = p̄ − 1 (the modulus w.r.t. ‖·‖_p̄, not ‖·‖_p)",
                  "theorem16_params", _no_dimension_factor),
    ),
    erratum=True,
)
