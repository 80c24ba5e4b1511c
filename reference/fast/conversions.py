"""float64 twins of reference.accounting.conversions and reference.accounting.gaussian.

Same names, arguments and semantics as the mpmath reference — the same conversions (Mironov 2017 Prop 3; Balle et al.
2020 Thm 21 = CKS 2020 Prop 12 with dp_accounting's TV bound), the same clamping rules, the same errors and
OrderGridWarning — vectorized over the order grid with NumPy/SciPy. Agreement with the reference to 1e-10 relative is
a claim (tests/test_accounting_*.py); where float64 cannot reach it is documented per function.

float64 limits that raise AccountingError here (the reference has none of them):
- a δ result below the smallest normal double (≈ 2.2e-308) — it would come back as a subnormal with few digits or
  as 0, i.e. an unsafe understatement of δ; use the mpmath reference.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import optimize, special

from reference.accounting.errors import AccountingError, OrderGridWarning
from reference.validation import check_int, check_probability, check_real

__all__ = [
    "CONVERSION_METHODS",
    "epsilon_from_rdp",
    "delta_from_rdp",
    "epsilon_from_zcdp",
    "delta_from_zcdp",
    "epsilon_from_zcdp_simple",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_mu",
    "composed_gaussian_mu",
]

CONVERSION_METHODS = ("bbghs", "mironov")

#: log of the smallest normal float64: a δ below e^this cannot be returned with full relative precision.
_LOG_TINY = math.log(np.finfo(np.float64).tiny)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_SQRT_HALF_PI = math.sqrt(math.pi / 2)


# ---------------------------------------------------------------------------------------------------
# Checks (same rules and messages as the reference)


def _check_method(method) -> str:
    if method not in CONVERSION_METHODS:
        raise ValueError(f"method must be one of {CONVERSION_METHODS}, got {method!r}")
    return method


def _check_curve(orders, rdp) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(orders, (str, bytes)) or isinstance(rdp, (str, bytes)):
        raise TypeError("orders and rdp must be sequences of real numbers")
    try:
        orders = np.asarray(orders, dtype=np.float64)  # object arrays of mpf convert through __float__
        rdp = np.asarray(rdp, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"orders and rdp must be sequences of real numbers ({exc})") from None
    if orders.ndim != 1 or rdp.ndim != 1:
        raise ValueError(f"orders and rdp must be 1-D sequences, got shapes {orders.shape} and {rdp.shape}")
    if orders.size == 0:
        raise ValueError("orders must contain at least one order")
    if orders.shape != rdp.shape:
        raise ValueError(f"orders and rdp must have the same length, got {orders.size} and {rdp.size}")
    bad = np.flatnonzero(~np.isfinite(orders) | ~(orders > 1))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"orders[{i}] must be a finite real > 1, got {orders[i]}")
    bad = np.flatnonzero(np.isnan(rdp))
    if bad.size:
        raise ValueError(f"rdp[{int(bad[0])}] must be a real number, got nan")
    bad = np.flatnonzero(rdp < 0)
    if bad.size:
        i = int(bad[0])
        raise AccountingError(
            f"rdp[{i}] = {rdp[i]} at order {orders[i]} is negative; Rényi divergences are >= 0, so the RDP curve was "
            "computed wrongly (rounding or a non-converged series) and no (ε,δ) can be derived from it"
        )
    return orders, rdp


def _warn_if_on_grid_edge(best_order: float, orders: np.ndarray, what: str) -> None:
    if best_order == orders.min() or best_order == orders.max():
        where = "smallest" if best_order == orders.min() else "largest"
        warnings.warn(
            f"the optimal order for {what} is the {where} order of the grid (α = {best_order:.10g}); "
            "the bound is valid but a wider order grid may give a smaller value",
            OrderGridWarning,
            stacklevel=3,
        )


def _check_log_delta_float(log_delta: float) -> None:
    if log_delta < _LOG_TINY:
        raise AccountingError(
            f"delta = exp({log_delta:.6g}) is below the smallest normal float64 (exp({_LOG_TINY:.6g})) and cannot be "
            "returned to full precision; use the mpmath reference (reference.accounting)"
        )


# ---------------------------------------------------------------------------------------------------
# RDP → (ε, δ)


def epsilon_from_rdp(orders, rdp, delta, method: str = "bbghs"):
    """float64 twin of reference.accounting.conversions.epsilon_from_rdp; returns (float ε, float α* or None)."""
    _check_method(method)
    orders, rdp = _check_curve(orders, rdp)
    delta = check_probability("delta", delta)
    log_delta = math.log(delta)
    finite = np.isfinite(rdp)
    with np.errstate(invalid="ignore", over="ignore"):
        if method == "mironov":
            eps = rdp - log_delta / (orders - 1)
        else:
            eps = rdp + np.log1p(-1 / orders) - (log_delta + np.log(orders)) / (orders - 1)
            eps = np.where(delta * delta >= -np.expm1(-rdp), 0.0, eps)  # TV bound
    eps = np.where(finite, eps, np.inf)
    if not finite.any():
        return math.inf, None
    best = int(np.argmin(eps))  # first minimiser on ties, as the reference
    best_epsilon, best_order = float(eps[best]), float(orders[best])
    if best_epsilon <= 0:
        return 0.0, best_order
    _warn_if_on_grid_edge(best_order, orders, "epsilon")
    return best_epsilon, best_order


def delta_from_rdp(orders, rdp, epsilon, method: str = "bbghs"):
    """float64 twin of reference.accounting.conversions.delta_from_rdp; returns (float δ, float α* or None)."""
    _check_method(method)
    orders, rdp = _check_curve(orders, rdp)
    epsilon = check_real("epsilon", epsilon, nonnegative=True)
    finite = np.isfinite(rdp)
    if not finite.any():
        return 1.0, None
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if method == "mironov":
            log_delta = (orders - 1) * (rdp - epsilon)
        else:
            log_delta = (orders - 1) * (rdp - epsilon + np.log1p(-1 / orders)) - np.log(orders)
            tv = 0.5 * np.log(-np.expm1(-rdp))  # −inf at r = 0
            log_delta = np.minimum(log_delta, tv)
    log_delta = np.where(finite, log_delta, np.inf)
    best = int(np.argmin(log_delta))
    best_log_delta, best_order = float(log_delta[best]), float(orders[best])
    if best_log_delta >= 0:
        return 1.0, best_order
    if best_log_delta == -math.inf:
        return 0.0, best_order
    _check_log_delta_float(best_log_delta)
    _warn_if_on_grid_edge(best_order, orders, "delta")
    return math.exp(best_log_delta), best_order


# ---------------------------------------------------------------------------------------------------
# Root finding: galloping brackets and brentq in log x


def _root_in_log(fn_of_log, log_lo, log_hi) -> float:
    """Root (in s = log x) of an increasing fn with fn(log_lo) < 0 ≤ fn(log_hi), by brentq to full float64 precision."""
    if fn_of_log(log_hi) == 0:
        return log_hi
    try:
        return optimize.brentq(fn_of_log, log_lo, log_hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    except RuntimeError as exc:  # brentq's non-convergence: report it as the numerical failure it is
        raise AccountingError(f"float64 root finding did not converge ({exc}); use the mpmath reference") from None


def _log_one_minus_inverse(t: float) -> float:
    """log(t/(1+t)) = −log1p(1/t), accurate for every t > 0."""
    return -math.log1p(1 / t)


def _entropy_terms(t: float, log_t: float) -> float:
    """t log t − (1+t) log(1+t) as a sum of two negative terms (see conversions._zcdp_log_delta_at)."""
    if t <= 1:
        return t * log_t - (1 + t) * math.log1p(t)
    return -log_t - (1 + t) * math.log1p(1 / t)


def _bracket_log(is_high, start_log: float = 0.0) -> tuple[float, float]:
    """(s_lo, s_hi) in log space with is_high(e^{s_lo}) False and is_high(e^{s_hi}) True, galloping from e^start."""
    step = math.log(2.0)
    if is_high(math.exp(start_log)):
        s_hi = start_log
        while True:
            s_lo = s_hi - step
            if s_lo < -745 or not is_high(math.exp(s_lo)):
                return s_lo, s_hi
            s_hi, step = s_lo, 2 * step
    s_lo = start_log
    while True:
        s_hi = s_lo + step
        if s_hi > 709 or is_high(math.exp(s_hi)):
            return s_lo, s_hi
        s_lo, step = s_hi, 2 * step


# ---------------------------------------------------------------------------------------------------
# zCDP → (ε, δ)


def epsilon_from_zcdp(rho, delta):
    """float64 twin of conversions.epsilon_from_zcdp: root of g(t) = ρt² + log1p(t) − log(1/δ) by brentq, t = α − 1.

    Relative agreement with the reference degrades only where ε is a small difference of large terms (ε ≪ ρ, i.e.
    δ close to the TV threshold), where the absolute error stays ~1e-16 times the terms.
    """
    rho = check_real("rho", rho, nonnegative=True)
    delta = check_probability("delta", delta)
    log_inv_delta = -math.log(delta)
    if rho == 0 or delta * delta >= -math.expm1(-rho):
        return 0.0
    log_l = math.log(log_inv_delta)
    # the reference's bracket, in log t: [log min(L/2, √(L/(2ρ))), log min(√(L/ρ), e^L − 1)], the upper end clipped
    # to the float range (any t gives a valid bound; the clip only matters for ρ ≲ 1e-300).
    log_lo = min(log_l - math.log(2), 0.5 * (log_l - math.log(2) - math.log(rho)))
    log_hi = min(0.5 * (log_l - math.log(rho)), log_inv_delta + math.log(-math.expm1(-log_inv_delta)), 300.0)

    def g_of_log_t(log_t):
        t = math.exp(log_t)
        return rho * t * t + math.log1p(t) - log_inv_delta

    if g_of_log_t(log_lo) >= 0:
        t = math.exp(log_lo)
    elif g_of_log_t(log_hi) < 0:
        t = math.exp(log_hi)
    else:
        t = math.exp(_root_in_log(g_of_log_t, log_lo, log_hi))
    epsilon = rho * (1 + t) + _log_one_minus_inverse(t) + (log_inv_delta - math.log1p(t)) / t
    return max(0.0, epsilon)


def delta_from_zcdp(rho, epsilon):
    """float64 twin of conversions.delta_from_zcdp: root of h(t) = (2t + 1)ρ − ε + log(t/(1+t)) by brentq in log t."""
    rho = check_real("rho", rho, nonnegative=True)
    epsilon = check_real("epsilon", epsilon, nonnegative=True)
    if rho == 0:
        return 0.0

    def h_of_log_t(log_t):
        t = math.exp(log_t)
        return (2 * t + 1) * rho - epsilon + _log_one_minus_inverse(t)

    # The bracket of the reference, clipped to the float range of t; any t gives a valid bound, so a root outside
    # the range is replaced by the nearest representable t.
    log_lo = max(-700.0, min(0.0, epsilon - 3 * rho - 1))
    log_hi = min(700.0, math.log(max(1.0, (epsilon + 1) / (2 * rho))))
    if h_of_log_t(log_lo) >= 0:
        log_t = log_lo
    elif h_of_log_t(log_hi) < 0:
        log_t = log_hi
    else:
        log_t = _root_in_log(h_of_log_t, log_lo, log_hi)
    t = math.exp(log_t)
    log_delta = t * (rho * (1 + t) - epsilon) + _entropy_terms(t, log_t)
    log_delta = min(log_delta, 0.5 * math.log(-math.expm1(-rho)))
    if log_delta >= 0:
        return 1.0
    _check_log_delta_float(log_delta)
    return math.exp(log_delta)


def epsilon_from_zcdp_simple(rho, delta):
    """float64 twin of conversions.epsilon_from_zcdp_simple: ρ + 2√(ρ log(1/δ)) (Bun–Steinke 2016 Prop 1.3)."""
    rho = check_real("rho", rho, nonnegative=True)
    delta = check_probability("delta", delta)
    return rho + 2 * math.sqrt(rho * -math.log(delta))


# ---------------------------------------------------------------------------------------------------
# Exact Gaussian profile


def _mills(x: float) -> float:
    """Mills ratio R(x) = Φ(−x)/φ(x) = √(π/2)·erfcx(x/√2), finite for every x > −37 without under/overflow."""
    return _SQRT_HALF_PI * special.erfcx(x / math.sqrt(2))


def _mills_difference(x1: float, x2: float, mu: float) -> float:
    """R(x1) − R(x2) for 0 < x1 < x2 = x1 + μ without cancellation where it matters (μ is passed separately because
    x2 − x1 loses μ to rounding when μ ≪ x1).

    For x1 ≥ 50 the asymptotic series R(x) = Σ_k (−1)^k (2k−1)!! x^{−2k−1} (Abramowitz–Stegun 26.2.12; 9 terms leave a
    relative error < 1e-19 there) is differenced term by term, each term as x1^{−n}(1 − (x1/x2)^n) with
    (x1/x2)^n = exp(n·log1p(−μ/x2)), so nothing cancels even when μ ≪ x1. Below 50 the two erfcx values are subtracted
    directly (relative error ~1e-16·max(1, x1)/μ).
    """
    if x1 < 50:
        return _mills(x1) - _mills(x2)
    shrink = math.log1p(-mu / x2)  # log(x1/x2)
    total, coefficient = 0.0, 1.0
    for k in range(9):
        n = 2 * k + 1
        total += coefficient * x1 ** (-n) * -math.expm1(n * shrink)
        coefficient *= -(2 * k + 1)
    return total


def _log_gaussian_delta(epsilon: float, mu: float) -> float:
    """log δ_μ(ε) in float64, without forming δ (so it works for δ far below the float range).

    With x1 = ε/μ − μ/2 = −a and x2 = ε/μ + μ/2 = −b, φ(b) = e^{−ε} φ(a) gives the exact identity
        δ = Φ(a) − e^ε Φ(b) = φ(a) (R(x1) − R(x2)),   R = Mills ratio,
    which we use for x1 > 0 (the tail, where the two Φ terms cancel): log δ = −x1²/2 − log√(2π) + log(R(x1) − R(x2)).
    The remaining relative error is ~1e-16·max(x1, 1)/μ (R(x1) − R(x2) ≈ μ|R'(x1)|). This beats the log_ndtr
    subtraction log Φ(a) + log1mexp(ε + log Φ(b) − log Φ(a)), whose error is ~1e-16·x1³/μ.
    For x1 ≤ 0 (a ≥ 0 > b): δ = [Φ(a) − Φ(b)] − expm1(ε) Φ(b) with Φ(a) − Φ(b) = (erf(a/√2) + erf(−b/√2))/2 (no
    cancellation: a ≥ 0 ≥ b) and the correction (e^ε − 1)Φ(b) formed as expm1(ε)Φ(b) for ε ≤ 1 and as
    φ(x1)R(x2) − Φ(b) above (e^ε alone would overflow while Φ(b) underflows).
    """
    x1 = epsilon / mu - mu / 2
    x2 = epsilon / mu + mu / 2
    if x1 > 0:
        difference = _mills_difference(x1, x2, mu)
        if not difference > 0:  # lost to rounding: only when x1 < 50 and μ ≲ 1e-16·x1
            raise AccountingError(
                f"gaussian_delta(epsilon={epsilon}, mu={mu}) cancels completely in float64; use the mpmath reference"
            )
        return -x1 * x1 / 2 - _LOG_SQRT_2PI + math.log(difference)
    a, b = -x1, -x2
    mass_between = (special.erf(a / math.sqrt(2)) + special.erf(-b / math.sqrt(2))) / 2
    if epsilon == 0:
        return math.log(mass_between)
    if epsilon <= 1:
        correction = math.expm1(epsilon) * special.ndtr(b)  # (e^ε − 1)Φ(b), accurate for small ε
    else:
        # e^ε Φ(b) = φ(x1) R(x2) (as above) has no overflow for any ε; subtracting Φ(b) ≤ e^{−ε}·that is harmless.
        correction = math.exp(-x1 * x1 / 2 - _LOG_SQRT_2PI) * _mills(x2) - special.ndtr(b)
    value = mass_between - correction
    if not value > 0:
        raise AccountingError(
            f"gaussian_delta(epsilon={epsilon}, mu={mu}) cancels completely in float64; use the mpmath reference"
        )
    return math.log(value)


def gaussian_delta(epsilon, mu):
    """float64 twin of reference.accounting.gaussian.gaussian_delta (Balle–Wang 2018 Thm 8 / μ-GDP profile).

    Raises AccountingError when δ is below the smallest normal double (the reference returns it exactly).
    """
    epsilon = check_real("epsilon", epsilon, nonnegative=True)
    mu = check_real("mu", mu, nonnegative=True)
    if mu == 0:
        return 0.0
    log_delta = _log_gaussian_delta(epsilon, mu)
    _check_log_delta_float(log_delta)
    return min(1.0, math.exp(log_delta))


def gaussian_epsilon(delta, mu):
    """float64 twin of gaussian.gaussian_epsilon: brentq on log δ_μ(ε) = log δ in log ε, then stepped up ulp by ulp
    until δ_μ(ε) ≤ δ holds as evaluated (never understates ε against its own evaluation)."""
    delta = check_probability("delta", delta)
    mu = check_real("mu", mu, nonnegative=True)
    if mu == 0:
        return 0.0
    log_delta = math.log(delta)

    def excess(eps):  # > 0: ε too small
        return _log_gaussian_delta(eps, mu) - log_delta

    if excess(0.0) <= 0:
        return 0.0
    s_lo, s_hi = _bracket_log(lambda eps: excess(eps) <= 0)
    if s_lo < -745:
        return math.exp(s_hi)  # ε* below the float range: the upper end is valid
    epsilon = math.exp(_root_in_log(lambda s: -excess(math.exp(s)), s_lo, s_hi))
    while excess(epsilon) > 0:
        epsilon = float(np.nextafter(epsilon, math.inf))
    return epsilon


def gaussian_mu(epsilon, delta):
    """float64 twin of gaussian.gaussian_mu: brentq on log δ_μ(ε) = log δ in log μ, then stepped down ulp by ulp until
    δ_μ(ε) ≤ δ holds as evaluated (never overshoots against its own evaluation)."""
    epsilon = check_real("epsilon", epsilon, nonnegative=True)
    delta = check_probability("delta", delta)
    log_delta = math.log(delta)

    def excess(mu):  # > 0: μ too large
        return _log_gaussian_delta(epsilon, mu) - log_delta

    s_lo, s_hi = _bracket_log(lambda mu: excess(mu) > 0)
    if s_lo < -745 or s_hi > 709:
        raise AccountingError(f"gaussian_mu(epsilon={epsilon}, delta={delta}) is outside the float64 range")
    mu = math.exp(_root_in_log(lambda s: excess(math.exp(s)), s_lo, s_hi))
    while excess(mu) > 0:
        mu = float(np.nextafter(mu, 0.0))
    return mu


def composed_gaussian_mu(noise_multipliers, counts=None):
    """float64 twin of gaussian.composed_gaussian_mu: √(Σ count_i / z_i²)."""
    if isinstance(noise_multipliers, (str, bytes)):
        raise TypeError("noise_multipliers must be a sequence of reals")
    noise_multipliers = list(noise_multipliers)
    if len(noise_multipliers) == 0:
        raise ValueError("noise_multipliers must contain at least one noise multiplier")
    counts = [1] * len(noise_multipliers) if counts is None else list(counts)
    if len(counts) != len(noise_multipliers):
        raise ValueError(
            f"counts must have one entry per noise multiplier, got {len(counts)} and {len(noise_multipliers)}"
        )
    z = [check_real(f"noise_multipliers[{i}]", v, positive=True) for i, v in enumerate(noise_multipliers)]
    k = [check_int(f"counts[{i}]", c, minimum=0) for i, c in enumerate(counts)]
    # √(Σ k_i/z_i²) = ‖(√k_i / z_i)_i‖; math.hypot scales, so neither the squares nor 1/z² overflow on their own.
    mu = math.hypot(*(math.sqrt(count) / zi for count, zi in zip(k, z)))
    if math.isinf(mu):
        raise AccountingError("composed_gaussian_mu overflows float64 (noise multipliers near 1e-308); use the reference")
    return mu
