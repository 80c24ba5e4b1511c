"""zo_o2nc §2 (uniform smoothing), Lemma 2.2, Lemmas A.1–A.2; dpzero Lemma C.2: uniform-ball smoothing in closed form.

The smoothing of h: R^d → R with radius δ (zo_o2nc §2, uniform smoothing) is

    ĥ_δ(x) = E_{v ~ U(unit ball)} h(x + δ v).

DPZero (Lemma C.2) smooths with v ~ Unif(√d B^d) and scale λ: that is ``smoothing_radius = λ√d`` here.

Every fact below is exact. They all come from the law of one coordinate v_1 of v ~ U(unit ball in R^d):
v_1² ~ Beta(1/2, (d+1)/2), with density p_d(t) = c'_d (1−t²)^{(d−1)/2} on [−1, 1], where
c'_d = Γ(d/2+1)/(√π Γ((d+1)/2)). A ridge function h(x) = L·φ(<a,x> − c) (‖a‖ = 1) only sees
<a, v>, which has the law of v_1, so its smoothing is a one-dimensional integral against p_d. For φ
piecewise linear that integral is a finite sum of regularized incomplete beta functions.

Arithmetic. Every function computes in float64 (scipy) or in mpmath (at the caller's working
precision, with guard bits, rounded once at the end). ``arithmetic=None`` picks mpmath when any real
input is an mpmath number or an object array, float64 otherwise; ``"float64"``/``"mpmath"`` force it.
Functions of the dimension alone default to float64. The gamma-function constants (κ_d, c'_d, E|v_1|)
and the ball characteristic function are computed in mpmath (30 digits) and rounded, also on the
float64 path: scipy's gamma ratios lose up to 1e−9 relative accuracy at d = 10^6, and scipy's hyp0f1
returns nan for d ≳ 300.

Accuracy of the incomplete beta function: each probability is evaluated as I_x(a, b) or as its
complement I_{1−x}(b, a), whichever has the argument below the mean (a+1)/(a+b+2), with 1 − t² formed
as (1−t)(1+t), so that tails of size 1e−300 are correct to relative precision.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from scipy import special

from .precision import is_mp
from .validation import check_array, check_int, check_real

__all__ = [
    "RIDGE_PROFILES",
    "smoothness_constant",
    "gamma_ratio",
    "ball_coordinate_square_law",
    "sphere_coordinate_square_law",
    "ball_marginal_cdf",
    "ball_marginal_pdf",
    "sphere_marginal_cdf",
    "ball_radius_cdf",
    "ball_characteristic",
    "symmetric_difference_fraction",
    "smoothed_abs_at_zero",
    "ridge_profile",
    "ridge_profile_slope",
    "smoothed_ridge_slope",
    "smoothed_ridge_value",
]

#: The 1-Lipschitz piecewise-linear ridge profiles φ: "abs" |r|, "capped" min(|r|, τ), "wshape" ||r| − τ|.
RIDGE_PROFILES = ("abs", "capped", "wshape")

_ARITHMETICS = ("float64", "mpmath")
_GUARD_BITS = 24  # extra bits inside mpmath computations; the result is rounded once at the end
_CONSTANT_DPS = 30  # digits behind the float64 gamma constants and ball characteristic (then rounded)


# ---------------------------------------------------------------------------------------------------
# Arithmetic dispatch and input handling


def _holds_mp(value) -> bool:
    if isinstance(value, (list, tuple)):
        return np.asarray(value).dtype == object
    return is_mp(value)


def _use_mp(arithmetic, *values) -> bool:
    if arithmetic is None:
        return any(_holds_mp(v) for v in values)
    if arithmetic not in _ARITHMETICS:
        raise ValueError(f"arithmetic must be one of {_ARITHMETICS} or None, got {arithmetic!r}")
    return arithmetic == "mpmath"


def _guarded(fn):
    """Evaluate ``fn()`` in mpmath with guard bits and round the result once to the working precision."""
    prec = mpmath.mp.prec
    with mpmath.workprec(prec + _GUARD_BITS):
        value = fn()
    if isinstance(value, np.ndarray):
        return np.array([+v for v in value.flat], dtype=object).reshape(value.shape)
    return +value


def _check_points(name: str, value, use_mp: bool):
    """A real scalar or array argument, finite, in the requested arithmetic.

    Returns (values, scalar): float64 ndarray or object ndarray of mpf; ``scalar`` says whether the
    caller passed a scalar (the result is then returned as a scalar too).
    """
    if isinstance(value, (list, tuple)):
        value = np.asarray(value)  # a list of mpf becomes an object array, never a silent float64 one
    if isinstance(value, np.ndarray):
        arr = check_array(name, value)
        scalar = False
    else:
        arr = np.asarray(check_real(name, value), dtype=object if isinstance(value, mpmath.mpf) else np.float64)
        scalar = True
    if use_mp:
        out = np.empty(arr.shape, dtype=object)
        for idx in np.ndindex(arr.shape):
            out[idx] = mpmath.mpf(arr[idx])
        return out, scalar
    if arr.dtype == object:
        arr = np.array([float(v) for v in arr.flat], dtype=np.float64).reshape(arr.shape)
    return arr, scalar


def _check_scalar(name: str, value, use_mp: bool, **rules):
    value = check_real(name, value, **rules)
    return mpmath.mpf(value) if use_mp else float(value)


def _finish(values: np.ndarray, scalar: bool, use_mp: bool):
    """Shape the result like the input: a scalar (float or mpf) for scalar input, else an array."""
    if scalar:
        return values[()] if use_mp else float(values[()])
    return values


def _map_mp(fn, arr: np.ndarray) -> np.ndarray:
    out = np.empty(arr.shape, dtype=object)
    for idx in np.ndindex(arr.shape):
        out[idx] = fn(arr[idx])
    return out


# ---------------------------------------------------------------------------------------------------
# Gamma-function constants (Lemma 2.2(iii), Lemma A.2, §1.5)


def _gamma_ratio_mp(n: int):
    """Γ(n/2+1)/Γ((n+1)/2) in mpmath; the quotient of two gammas has no cancellation."""
    half_n = mpmath.mpf(n) / 2
    return mpmath.gamma(half_n + 1) / mpmath.gamma(half_n + mpmath.mpf(1) / 2)


def _constant(fn_mp, use_mp: bool):
    """A gamma-function constant: mpmath at working precision, or rounded from 30 digits for float64."""
    if use_mp:
        return _guarded(fn_mp)
    with mpmath.workdps(_CONSTANT_DPS):
        return float(fn_mp())


def gamma_ratio(n: int, *, arithmetic: str = "float64"):
    """Γ(n/2 + 1) / Γ((n−1)/2 + 1), the quantity bounded in zo_o2nc Lemma A.2.

    Lemma A.2 states ≤ √(2n); the sharper ≤ √(πn)/2 also holds (equality at n = 1) and is what gives
    exactly √d in Lemma A.1 (erratum zo_o2nc.E6).

    Args:
        n: integer ≥ 1 (n = d in the lemma).
        arithmetic: "float64" (default) or "mpmath".
    """
    n = check_int("n", n, minimum=1)
    use_mp = _use_mp(arithmetic)
    return _constant(lambda: _gamma_ratio_mp(n), use_mp)


def smoothness_constant(d: int, *, arithmetic: str = "float64"):
    """κ_d = 2Γ(d/2+1)/(√π Γ((d+1)/2)): the tight smoothness constant of uniform-ball smoothing.

    zo_o2nc Lemma 2.2(iii) (sharp form, §4): if h is L-Lipschitz then ĥ_δ is (κ_d L/δ)-smooth, and
    h(x) = L|<a, x>| attains it at <a, x> = 0. κ_d ≤ √d with equality only at d = 1, and
    κ_d/√(2d/π) = 1 + 1/(4d) + O(1/d²). κ_d = 2c'_d, twice the peak of the density of v_1.

    Args:
        d: dimension ≥ 1 (any size; computed via gamma functions in mpmath, no overflow).
        arithmetic: "float64" (default) or "mpmath".
    """
    d = check_int("d", d, minimum=1)
    use_mp = _use_mp(arithmetic)
    return _constant(lambda: 2 * _gamma_ratio_mp(d) / mpmath.sqrt(mpmath.pi), use_mp)


def _density_constant(d: int, use_mp: bool):
    """c'_d = Γ(d/2+1)/(√π Γ((d+1)/2)), the normalising constant of p_d (zo_o2nc §2, uniform smoothing)."""
    return _constant(lambda: _gamma_ratio_mp(d) / mpmath.sqrt(mpmath.pi), use_mp)


def _mean_abs_coordinate(d: int, use_mp: bool):
    """E|v_1| = Γ(d/2+1)/(√π Γ((d+3)/2)) = 2c'_d/(d+1) for v ~ U(unit ball in R^d)."""
    return _constant(lambda: 2 * _gamma_ratio_mp(d) / (mpmath.sqrt(mpmath.pi) * (d + 1)), use_mp)


# ---------------------------------------------------------------------------------------------------
# Laws of one coordinate (§1.5)


def ball_coordinate_square_law(d: int):
    """The law of v_1² for v ~ U(unit ball in R^d): scipy.stats.beta(1/2, (d+1)/2), frozen (§1.5)."""
    from scipy import stats  # here, not at the top: scipy.stats costs ~0.4 s of start-up to every command

    d = check_int("d", d, minimum=1)
    return stats.beta(0.5, (d + 1) / 2)


def sphere_coordinate_square_law(d: int):
    """The law of u_1² for u ~ U(unit sphere in R^d): scipy.stats.beta(1/2, (d−1)/2), frozen (§1.5).

    d = 1 is refused: the sphere is {−1, +1}, so u_1² ≡ 1 is a point mass, not a beta law.
    """
    d = check_int("d", d, minimum=1)
    if d == 1:
        raise ValueError("d must be >= 2 for the sphere coordinate law: for d = 1, u_1² ≡ 1 (a point mass)")
    from scipy import stats

    return stats.beta(0.5, (d - 1) / 2)


def _central_and_tail(s, a, use_mp: bool):
    """(I_{s²}(1/2, a), I_{1−s²}(a, 1/2)) = (P(|w| ≤ s), P(|w| > s)) for 0 ≤ s, w² ~ Beta(1/2, a).

    Both are returned to full relative accuracy: the one whose argument lies above the beta mean is
    obtained as 1 minus the other, which is then ≥ about 1/2 and suffers no cancellation.
    ``s`` is a float64 array (vectorized) or a single mpf; s ≥ 1 gives (1, 0).
    """
    if use_mp:
        if s >= 1:
            return mpmath.mpf(1), mpmath.mpf(0)
        half = mpmath.mpf(1) / 2
        x = s * s
        one_minus_x = (1 - s) * (1 + s)
        if x <= (half + 1) / (half + a + 2):
            central = mpmath.betainc(half, a, 0, x, regularized=True)
            return central, 1 - central
        tail = mpmath.betainc(a, half, 0, one_minus_x, regularized=True)
        return 1 - tail, tail
    s = np.minimum(np.asarray(s, dtype=np.float64), 1.0)
    # boost's ibeta switches to the complement internally, so both calls are accurate as they stand
    central = special.betainc(0.5, a, s * s)
    tail = special.betainc(a, 0.5, (1.0 - s) * (1.0 + s))
    return central, tail


def _coordinate_cdf(t, d: int, a_of_d, arithmetic, name_t: str):
    use_mp = _use_mp(arithmetic, t)
    points, scalar = _check_points(name_t, t, use_mp)
    if use_mp:

        def one(ti):
            def compute():
                a = a_of_d(mpmath.mpf(d))
                _, tail = _central_and_tail(abs(ti), a, True)
                # P(w ≤ t) = P(|w| > |t|)/2 for t < 0, and 1 − P(|w| > t)/2 for t ≥ 0
                return tail / 2 if ti < 0 else 1 - tail / 2

            return _guarded(compute)

        return _finish(_map_mp(one, points), scalar, True)
    _, tail = _central_and_tail(np.abs(points), a_of_d(float(d)), False)
    values = np.where(points < 0, tail / 2, 1.0 - tail / 2)
    return _finish(values, scalar, False)


def ball_marginal_cdf(t, d: int, *, arithmetic=None):
    """P(v_1 ≤ t) for v ~ U(unit ball in R^d) (zo_o2nc §2, uniform smoothing).

    = 1/2 + sign(t)/2 · I_{min(1, t²)}(1/2, (d+1)/2); 0 for t ≤ −1 and 1 for t ≥ 1.

    Args:
        t: real scalar or array (float64 or mpmath).
        d: dimension ≥ 1.
        arithmetic: None (follow the input), "float64" or "mpmath".
    """
    d = check_int("d", d, minimum=1)
    return _coordinate_cdf(t, d, lambda dd: (dd + 1) / 2, arithmetic, "t")


def sphere_marginal_cdf(t, d: int, *, arithmetic=None):
    """P(u_1 ≤ t) for u ~ U(unit sphere in R^d), d ≥ 2: 1/2 + sign(t)/2 · I_{min(1,t²)}(1/2, (d−1)/2)."""
    d = check_int("d", d, minimum=1)
    if d == 1:
        raise ValueError("d must be >= 2 for the sphere marginal: for d = 1, u_1 = ±1 (a discrete law)")
    return _coordinate_cdf(t, d, lambda dd: (dd - 1) / 2, arithmetic, "t")


def ball_marginal_pdf(t, d: int, *, arithmetic=None):
    """p_d(t) = c'_d (1 − t²)^{(d−1)/2} on [−1, 1] (0 outside), the density of v_1 (zo_o2nc §2, uniform smoothing).

    c'_d = Γ(d/2+1)/(√π Γ((d+1)/2)). For d = 1 this is 1/2 on the closed interval [−1, 1].
    """
    d = check_int("d", d, minimum=1)
    use_mp = _use_mp(arithmetic, t)
    points, scalar = _check_points("t", t, use_mp)
    if use_mp:

        def one(ti):
            def compute():
                if abs(ti) > 1:
                    return mpmath.mpf(0)
                return _density_constant(d, True) * ((1 - ti) * (1 + ti)) ** (mpmath.mpf(d - 1) / 2)

            return _guarded(compute)

        return _finish(_map_mp(one, points), scalar, True)
    inside = np.abs(points) <= 1.0
    base = np.where(inside, (1.0 - points) * (1.0 + points), 0.0)
    values = np.where(inside, _density_constant(d, False) * base ** ((d - 1) / 2), 0.0)
    return _finish(values, scalar, False)


def ball_radius_cdf(r, d: int, *, arithmetic=None):
    """P(‖v‖ ≤ r) = r^d on [0, 1] (0 below, 1 above) for v ~ U(unit ball in R^d)."""
    d = check_int("d", d, minimum=1)
    use_mp = _use_mp(arithmetic, r)
    points, scalar = _check_points("r", r, use_mp)
    if use_mp:

        def one(ri):
            if ri <= 0:
                return mpmath.mpf(0)
            return mpmath.mpf(1) if ri >= 1 else ri**d

        return _finish(_map_mp(one, points), scalar, True)
    clipped = np.clip(points, 0.0, 1.0)
    return _finish(clipped**d, scalar, False)


def _ball_characteristic_mp(t, d: int):
    """Γ(ν+1)(2/|t|)^ν J_ν(|t|), ν = d/2, in mpmath at the working precision (no guard/rounding here)."""
    if t == 0:
        return mpmath.mpf(1)
    nu = mpmath.mpf(d) / 2
    at = abs(t)
    try:
        bessel = mpmath.besselj(nu, at)
    except mpmath.libmp.NoConvergence:
        raise ArithmeticError(
            f"ball_characteristic: mpmath's Bessel series did not converge at t={mpmath.nstr(t, 8)}, d={d}"
        ) from None
    return mpmath.gamma(nu + 1) * (2 / at) ** nu * bessel


def _ball_characteristic_float(t: float, d: int) -> float:
    """float64 value: 0.0 when the bound |ψ| ≤ Γ(ν+1)(2/|t|)^ν is below float64's range, else mpmath rounded."""
    nu = d / 2
    if t != 0 and special.gammaln(nu + 1) + nu * math.log(2 / abs(t)) < -800.0:  # e^-800 < 5e-324
        return 0.0
    with mpmath.workdps(_CONSTANT_DPS):
        return float(_ball_characteristic_mp(mpmath.mpf(t), d))


def ball_characteristic(t, d: int, *, arithmetic=None):
    """E[cos(t v_1)] for v ~ U(unit ball in R^d) = Γ(d/2+1)(2/t)^{d/2} J_{d/2}(t) (1 at t = 0).

    dpzero Lemma C.2 (φ(t) there): for f(x) = cos(<b, x>) the smoothed gradient is
    −sin(<b, x>)·φ(λ√d‖b‖)·b. Even in t; equal to 0F1(; d/2+1; −t²/4).

    Both arithmetics use mpmath's besselj (float64: at 30 digits, then rounded); scipy's hyp0f1
    returns nan once d/2 + 1 exceeds ~150. float64 returns 0.0 where |value| ≤ Γ(ν+1)(2/|t|)^ν
    underflows.

    Raises:
        ArithmeticError: mpmath's Bessel series did not converge (only for huge t and d together,
            e.g. t = 1e5 with d = 1e4, and only when the value is not already known to underflow).
    """
    d = check_int("d", d, minimum=1)
    use_mp = _use_mp(arithmetic, t)
    points, scalar = _check_points("t", t, use_mp)
    if use_mp:
        values = _map_mp(lambda ti: _guarded(lambda: _ball_characteristic_mp(ti, d)), points)
        return _finish(values, scalar, True)
    values = np.empty(points.shape, dtype=np.float64)
    for idx in np.ndindex(points.shape):
        values[idx] = _ball_characteristic_float(float(points[idx]), d)
    return _finish(values, scalar, False)


def symmetric_difference_fraction(distance, smoothing_radius, d: int, *, arithmetic=None):
    """vol(B(x,δ) Δ B(y,δ)) / vol(δB) for ‖x − y‖ = D (zo_o2nc Lemma A.1, exact form).

    = 2 P(|v_1| ≤ D/(2δ)) = 2 I_{min(1, D²/(4δ²))}(1/2, (d+1)/2); equals 2 once D ≥ 2δ (disjoint balls).
    The lemma's bound ≤ √d·D/δ holds; the sharp bound is κ_d·D/δ (concavity in D).

    Args:
        distance: D = ‖x − y‖ ≥ 0.
        smoothing_radius: δ > 0 in zo_o2nc.
        d: dimension ≥ 1.
    """
    d = check_int("d", d, minimum=1)
    use_mp = _use_mp(arithmetic, distance, smoothing_radius)
    distance = _check_scalar("distance", distance, use_mp, nonnegative=True)
    delta = _check_scalar("smoothing_radius", smoothing_radius, use_mp, positive=True)
    if use_mp:

        def compute():
            central, _ = _central_and_tail(distance / (2 * delta), mpmath.mpf(d + 1) / 2, True)
            return 2 * central

        return _guarded(compute)
    central, _ = _central_and_tail(np.asarray(distance / (2 * delta)), (d + 1) / 2, False)
    return float(2 * central)


def smoothed_abs_at_zero(lipschitz, smoothing_radius, d: int, *, arithmetic=None):
    """ĥ_δ(0) for h(x) = L|x_1|: L δ E|v_1| = L δ Γ(d/2+1)/(√π Γ((d+3)/2)) (zo_o2nc Lemma 2.2(ii)).

    This is the largest gap |ĥ_δ − h| for that h, and it is ≤ Lδ as the lemma says.

    Args:
        lipschitz: L ≥ 0.
        smoothing_radius: δ > 0.
        d: dimension ≥ 1.
    """
    d = check_int("d", d, minimum=1)
    use_mp = _use_mp(arithmetic, lipschitz, smoothing_radius)
    lipschitz = _check_scalar("lipschitz", lipschitz, use_mp, nonnegative=True)
    delta = _check_scalar("smoothing_radius", smoothing_radius, use_mp, positive=True)
    if use_mp:
        return _guarded(lambda: lipschitz * delta * _mean_abs_coordinate(d, True))
    return lipschitz * delta * _mean_abs_coordinate(d, False)


# ---------------------------------------------------------------------------------------------------
# Ridge profiles and their smoothing (§1.5, "Ridge functions")


def _check_profile(profile, tau, use_mp: bool):
    if profile not in RIDGE_PROFILES:
        raise ValueError(f"profile must be one of {RIDGE_PROFILES}, got {profile!r}")
    return _check_scalar("tau", tau, use_mp, positive=True)


def _kink_expansion(profile: str, tau):
    """φ(r) = Σ_j w_j |r − b_j| + φ_0: the weights w_j, kinks b_j and constant φ_0 of the profile.

    abs:    |r|
    capped: −½|r + τ| + |r| − ½|r − τ| + τ           = min(|r|, τ)
    wshape: |r + τ| − |r| + |r − τ| − τ               = ||r| − τ|
    Differentiating term by term gives φ'(r) = Σ_j w_j sign(r − b_j), and with sign(0) = 0 the value at
    a kink is the midpoint of the one-sided slopes, an element of the Clarke subdifferential.
    """
    if profile == "abs":
        return ((1, 0 * tau),), 0 * tau
    if profile == "capped":
        return ((-0.5, -tau), (1, 0 * tau), (-0.5, tau)), tau
    return ((1, -tau), (-1, 0 * tau), (1, tau)), -tau


def _sign_mp(value):
    return mpmath.mpf(mpmath.sign(value))


def ridge_profile(r, profile: str = "abs", tau=1.0, *, arithmetic=None):
    """φ(r) for the ridge profiles: "abs" |r|, "capped" min(|r|, τ), "wshape" ||r| − τ| (our ridge test functions S1/S2 for zo_o2nc).

    Args:
        r: real scalar or array (float64 or mpmath), r = <a, x> − c.
        profile: one of RIDGE_PROFILES.
        tau: τ > 0, the cap or well position (ignored by "abs" but still validated).
    """
    use_mp = _use_mp(arithmetic, r, tau)
    tau = _check_profile(profile, tau, use_mp)
    points, scalar = _check_points("r", r, use_mp)
    if use_mp:
        if profile == "abs":
            values = _map_mp(abs, points)
        elif profile == "capped":
            values = _map_mp(lambda v: min(abs(v), tau), points)
        else:
            values = _map_mp(lambda v: abs(abs(v) - tau), points)
        return _finish(values, scalar, True)
    if profile == "abs":
        values = np.abs(points)
    elif profile == "capped":
        values = np.minimum(np.abs(points), tau)
    else:
        values = np.abs(np.abs(points) - tau)
    return _finish(values, scalar, False)


def ridge_profile_slope(r, profile: str = "abs", tau=1.0, *, arithmetic=None):
    """φ'(r) (a.e. derivative); at a kink, the midpoint of the one-sided slopes (a Clarke subgradient).

    Values lie in {0, ±1/2, ±1} and are exact in both arithmetics.
    """
    use_mp = _use_mp(arithmetic, r, tau)
    tau = _check_profile(profile, tau, use_mp)
    points, scalar = _check_points("r", r, use_mp)
    kinks, _ = _kink_expansion(profile, tau)
    if use_mp:
        values = _map_mp(lambda v: mpmath.fsum(w * _sign_mp(v - b) for w, b in kinks), points)
        return _finish(values, scalar, True)
    values = sum(w * np.sign(points - b) for w, b in kinks)
    return _finish(np.asarray(values, dtype=np.float64), scalar, False)


def _expected_sign(offset, radius, d, use_mp: bool):
    """E[sign(m + ρ v_1)] = sign(m)·I_{min(1, m²/ρ²)}(1/2, (d+1)/2) for m = ``offset``, ρ = ``radius``."""
    if use_mp:
        central, _ = _central_and_tail(abs(offset) / radius, mpmath.mpf(d + 1) / 2, True)
        return _sign_mp(offset) * central
    central, _ = _central_and_tail(np.abs(offset) / radius, (d + 1) / 2, False)
    return np.sign(offset) * central


def _expected_abs(offset, radius, d, mean_abs, use_mp: bool):
    """E|m + ρ v_1| = |m|·I_{s²}(1/2,(d+1)/2) + ρ·E|v_1|·(1 − s²)^{(d+1)/2}, s = min(1, |m|/ρ).

    From E|s + v| = s·E sign(s + v) + E[v sign(s + v)] and the partial first moment
    ∫_{−1}^{u} t p_d(t) dt = −c'_d (1 − u²)^{(d+1)/2}/(d+1); both terms are ≥ 0 (no cancellation).
    """
    if use_mp:
        s = abs(offset) / radius
        if s >= 1:
            return abs(offset)
        central, _ = _central_and_tail(s, mpmath.mpf(d + 1) / 2, True)
        return abs(offset) * central + radius * mean_abs * ((1 - s) * (1 + s)) ** (mpmath.mpf(d + 1) / 2)
    s = np.minimum(np.abs(offset) / radius, 1.0)
    central, _ = _central_and_tail(s, (d + 1) / 2, False)
    return np.abs(offset) * central + radius * mean_abs * ((1.0 - s) * (1.0 + s)) ** ((d + 1) / 2)


def _smoothed_slope_kernel(r, radius, d: int, profile: str, tau, use_mp: bool):
    """Σ_j w_j E[sign(r − b_j + ρ v_1)]; r and ρ float64 arrays (broadcast) or single mpf values."""
    kinks, _ = _kink_expansion(profile, tau)
    if use_mp:
        return _guarded(lambda: mpmath.fsum(w * _expected_sign(r - b, radius, d, True) for w, b in kinks))
    return sum(w * _expected_sign(r - b, radius, d, False) for w, b in kinks)


def _smoothed_value_kernel(r, radius, d: int, profile: str, tau, use_mp: bool):
    """Σ_j w_j E|r − b_j + ρ v_1| + φ_0; r and ρ float64 arrays (broadcast) or single mpf values."""
    kinks, constant = _kink_expansion(profile, tau)
    if use_mp:

        def compute():
            mean_abs = _mean_abs_coordinate(d, True)
            terms = [w * _expected_abs(r - b, radius, d, mean_abs, True) for w, b in kinks]
            return mpmath.fsum(terms + [constant])

        return _guarded(compute)
    mean_abs = _mean_abs_coordinate(d, False)
    return sum(w * _expected_abs(r - b, radius, d, mean_abs, False) for w, b in kinks) + constant


def smoothed_ridge_slope(r, smoothing_radius, d: int, profile: str = "abs", tau=1.0, *, arithmetic=None):
    """E[φ'(r + δ v_1)], v ~ U(unit ball in R^d): the exact smoothed ridge slope (zo_o2nc §2, uniform smoothing).

    For h(x) = L·φ(<a, x> − c) with ‖a‖ = 1, ∇ĥ_δ(x) = L·a·smoothed_ridge_slope(<a, x> − c, δ, d).
    Computed as Σ_j w_j sign(r − b_j) I_{min(1,(r−b_j)²/δ²)}(1/2, (d+1)/2) from the kink expansion of φ
    (φ' is piecewise constant, so this is the sum of slope × probability of each piece).
    For "abs": sign(r)·I_{min(1, r²/δ²)}(1/2, (d+1)/2).

    Args:
        r: real scalar or array, r = <a, x> − c.
        smoothing_radius: δ > 0 in zo_o2nc (λ√d in dpzero).
        d: dimension ≥ 1.
        profile: one of RIDGE_PROFILES; tau: τ > 0.
        arithmetic: None (follow the inputs), "float64" or "mpmath".
    """
    d = check_int("d", d, minimum=1)
    use_mp = _use_mp(arithmetic, r, smoothing_radius, tau)
    tau = _check_profile(profile, tau, use_mp)
    delta = _check_scalar("smoothing_radius", smoothing_radius, use_mp, positive=True)
    points, scalar = _check_points("r", r, use_mp)
    if use_mp:
        values = _map_mp(lambda v: _smoothed_slope_kernel(v, delta, d, profile, tau, True), points)
        return _finish(values, scalar, True)
    values = _smoothed_slope_kernel(points, delta, d, profile, tau, False)
    return _finish(np.asarray(values, dtype=np.float64), scalar, False)


def smoothed_ridge_value(r, smoothing_radius, d: int, profile: str = "abs", tau=1.0, *, arithmetic=None):
    """E[φ(r + δ v_1)], v ~ U(unit ball in R^d): the exact smoothed ridge profile (zo_o2nc §2, uniform smoothing).

    For h(x) = L·φ(<a, x> − c) with ‖a‖ = 1, ĥ_δ(x) = L·smoothed_ridge_value(<a, x> − c, δ, d).
    Uses φ(r) = Σ_j w_j |r − b_j| + φ_0 and E|m + δv_1| = |m| I_{s²}(1/2,(d+1)/2) + δ E|v_1| (1−s²)^{(d+1)/2}
    with s = min(1, |m|/δ), which comes from the partial first moment ∫ t p_d(t) dt = −c'_d(1−t²)^{(d+1)/2}/(d+1).
    At r = 0 with profile "abs" this is δ·E|v_1| = smoothed_abs_at_zero(1, δ, d).

    Args: as smoothed_ridge_slope.
    """
    d = check_int("d", d, minimum=1)
    use_mp = _use_mp(arithmetic, r, smoothing_radius, tau)
    tau = _check_profile(profile, tau, use_mp)
    delta = _check_scalar("smoothing_radius", smoothing_radius, use_mp, positive=True)
    points, scalar = _check_points("r", r, use_mp)
    if use_mp:
        values = _map_mp(lambda v: _smoothed_value_kernel(v, delta, d, profile, tau, True), points)
        return _finish(values, scalar, True)
    values = _smoothed_value_kernel(points, delta, d, profile, tau, False)
    return _finish(np.asarray(values, dtype=np.float64), scalar, False)
