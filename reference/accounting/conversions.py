"""RDP and zCDP → (ε, δ)-DP conversions, from the loosest to the tightest.

Implements, in mpmath at the caller's working precision and in log space:

- Mironov 2017 ("Rényi Differential Privacy", CSF 2017), Proposition 3: an (α, r)-RDP mechanism is
  (r + log(1/δ)/(α − 1), δ)-DP for every δ ∈ (0, 1).
- Balle, Barthe, Gaboardi, Hsu, Sato 2020 ("Hypothesis testing interpretations and Rényi DP", AISTATS 2020),
  Theorem 21 ≡ Canonne, Kamath, Steinke 2020 ("The Discrete Gaussian for DP", arXiv 2004.00010 v4), Proposition 12:
  (α, r)-RDP ⇒ (ε, δ)-DP with δ = exp((α − 1)(r − ε)) · (1 − 1/α)^α / (α − 1), i.e.
  ε = r + log((α − 1)/α) − (log δ + log α)/(α − 1). Called "bbghs" here, as in autodp.
- The total-variation (KL) bound that dp_accounting (``rdp_privacy_accountant.compute_epsilon`` /
  ``compute_delta``) adds to the "bbghs" route: D_α is non-decreasing in α, so KL = D_1 ≤ r, and the
  Bretagnolle–Huber inequality gives TV ≤ √(1 − e^{−KL}) ≤ √(1 − e^{−r}). Because δ(ε) ≤ δ(0) = TV for ε ≥ 0,
  the mechanism is (ε, √(1 − e^{−r}))-DP for every ε ≥ 0.
- zCDP (Bun–Steinke 2016): ρ-zCDP means (α, ρα)-RDP for every α > 1, so the best BBGHS conversion is a
  one-dimensional minimisation over α, solved here exactly (CKS 2020, ``cdp_eps``/``cdp_delta``), plus Bun–Steinke's
  simple conversion ρ + 2√(ρ log(1/δ)) for comparison.

Fail-loud rules: negative RDP raises ``AccountingError`` (it can only come from a numerical bug
upstream: divergences are ≥ 0); RDP = +inf at an order is a legitimate value ("not RDP at this order") and that
order is skipped; an optimum at the smallest or largest order of the grid emits ``OrderGridWarning``; a δ whose
logarithm the working precision cannot carry to 1e-12 absolute raises ``AccountingError``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import mpmath

from reference.accounting.errors import AccountingError, OrderGridWarning
from reference.validation import check_probability, check_real

__all__ = [
    "CONVERSION_METHODS",
    "LOG_DELTA_RESOLUTION",
    "epsilon_from_rdp",
    "delta_from_rdp",
    "epsilon_from_zcdp",
    "delta_from_zcdp",
    "epsilon_from_zcdp_simple",
]

#: "bbghs": Balle et al. 2020 Thm 21 / CKS 2020 Prop 12 together with dp_accounting's TV bound.
#: "mironov": Mironov 2017 Prop 3 alone, exactly as printed.
CONVERSION_METHODS = ("bbghs", "mironov")

#: The conversions see δ only through log δ. At working precision log δ is carried with absolute error about
#: |log δ|·2^{-prec}, which is the relative error of δ itself; we refuse δ when that exceeds this bound
#: (100× below the 1e-10 agreement the project claims). At 40 digits this only bites for δ < exp(−1e28).
LOG_DELTA_RESOLUTION = mpmath.mpf("1e-12")


# ---------------------------------------------------------------------------------------------------
# Input checks shared by the conversions


def _check_method(method) -> str:
    if method not in CONVERSION_METHODS:
        raise ValueError(f"method must be one of {CONVERSION_METHODS}, got {method!r}")
    return method


def _as_list(name: str, values) -> list:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of real numbers, got {type(values).__name__}")
    return list(values)


def _check_curve(orders, rdp) -> tuple[list, list]:
    """Orders α > 1 (finite) and RDP values r ≥ 0 (+inf allowed), as two equally long lists of mpf."""
    orders, rdp = _as_list("orders", orders), _as_list("rdp", rdp)
    if len(orders) == 0:
        raise ValueError("orders must contain at least one order")
    if len(orders) != len(rdp):
        raise ValueError(f"orders and rdp must have the same length, got {len(orders)} and {len(rdp)}")
    checked_orders, checked_rdp = [], []
    for i, (order, value) in enumerate(zip(orders, rdp)):
        order = mpmath.mpf(check_real(f"orders[{i}]", order))
        if not order > 1:
            raise ValueError(f"orders[{i}] must be > 1 (Rényi orders α ≤ 1 give no (ε,δ) bound), got {order}")
        value = mpmath.mpf(check_real(f"rdp[{i}]", value, allow_inf=True))
        if value < 0:
            # A Rényi divergence is >= 0; a negative value is a numerical failure upstream, never a free ε = 0.
            raise AccountingError(
                f"rdp[{i}] = {value} at order {order} is negative; Rényi divergences are >= 0, so the RDP curve was "
                "computed wrongly (rounding or a non-converged series) and no (ε,δ) can be derived from it"
            )
        checked_orders.append(order)
        checked_rdp.append(value)
    return checked_orders, checked_rdp


def _check_log_delta_resolvable(name: str, log_delta) -> None:
    """Raise AccountingError if log δ is too large in magnitude for the working precision (see LOG_DELTA_RESOLUTION)."""
    if mpmath.isinf(log_delta):
        return
    if abs(log_delta) * mpmath.eps > LOG_DELTA_RESOLUTION:
        raise AccountingError(
            f"{name} = exp({mpmath.nstr(log_delta, 8)}) is below what {mpmath.mp.dps}-digit working precision can "
            f"represent here: log {name} carries an absolute error of about {mpmath.nstr(abs(log_delta) * mpmath.eps, 3)}"
            f" (> {LOG_DELTA_RESOLUTION}), i.e. {name} itself would be wrong by that relative amount; raise the "
            "precision with reference.precision.working_precision"
        )


def _warn_if_on_grid_edge(best_order, orders, what: str) -> None:
    """OrderGridWarning when the optimal order is the smallest or largest order supplied."""
    if best_order == min(orders) or best_order == max(orders):
        where = "smallest" if best_order == min(orders) else "largest"
        warnings.warn(
            f"the optimal order for {what} is the {where} order of the grid (α = {mpmath.nstr(best_order, 10)}); "
            "the bound is valid but a wider order grid may give a smaller value",
            OrderGridWarning,
            stacklevel=3,
        )


def _tv_bound_log_delta(rdp_value):
    """log √(1 − e^{−r}): Bretagnolle–Huber on KL ≤ r (dp_accounting compute_delta); −inf when r = 0."""
    if rdp_value == 0:
        return -mpmath.inf
    return mpmath.log(-mpmath.expm1(-rdp_value)) / 2


# ---------------------------------------------------------------------------------------------------
# RDP → (ε, δ)


def _epsilon_at_order(order, rdp_value, log_delta, method):
    """ε(α) of one conversion at one order (may be negative for "bbghs"; see epsilon_from_rdp)."""
    if method == "mironov":
        # Mironov 2017 Prop 3: ε = r + log(1/δ)/(α − 1).
        return rdp_value - log_delta / (order - 1)
    # Balle et al. 2020 Thm 21 / CKS Prop 12: ε = r + log((α−1)/α) − (log δ + log α)/(α − 1).
    return rdp_value + mpmath.log((order - 1) / order) - (log_delta + mpmath.log(order)) / (order - 1)


def epsilon_from_rdp(orders, rdp, delta, method: str = "bbghs"):
    """Smallest ε over the grid such that an RDP curve gives (ε, δ)-DP; returns ``(epsilon, best_order)``.

    ``orders``: Rényi orders α_i > 1; ``rdp``: the RDP values r_i = D_{α_i} bound (r ≥ 0,
    +inf allowed and skipped: the mechanism is not RDP at that order); ``delta``: δ ∈ (0, 1).

    method="mironov": ε_i = r_i + log(1/δ)/(α_i − 1) (Mironov 2017 Prop 3), nothing else.

    method="bbghs" (default; what dp_accounting and Opacus use):
        ε_i = r_i + log((α_i − 1)/α_i) − (log δ + log α_i)/(α_i − 1)   (Balle et al. 2020 Thm 21 = CKS 2020 Prop 12),
        and ε_i = 0 whenever δ ≥ √(1 − e^{−r_i}) (the TV/KL bound of dp_accounting's ``compute_epsilon``: KL ≤ r_i and
        Bretagnolle–Huber give TV ≤ √(1 − e^{−r_i}), and TV ≤ δ is (0, δ)-DP). Unlike dp_accounting we keep orders
        α ≤ 1.01: in mpmath the formula is exact there.

    Clamping at 0: the BBGHS formula can be negative (small r, large δ). Its proof (δ = E_P[(1 − e^{ε−Z})_+] ≤
    K·e^{(α−1)(r−ε)}) holds for every real ε, and (ε, δ)-DP with ε < 0 implies (0, δ)-DP, so max(0, ε) is a valid
    guarantee; that is the only place where 0 is returned besides the TV route. Negative RDP is never clamped: it
    raises AccountingError.

    Returns (ε, α*) as mpf; α* is the order that attains the minimum (first one on ties). If every r_i is +inf
    no order gives a finite bound and ``(mpf('+inf'), None)`` is returned — the only infinite result.

    Warns OrderGridWarning when ε > 0 and α* is the smallest or largest order (a wider grid may do better).
    Raises ValueError for bad input (δ ∉ (0, 1), α ≤ 1, mismatched lengths, unknown method), AccountingError for
    negative RDP or for δ beyond the working precision (LOG_DELTA_RESOLUTION).
    """
    _check_method(method)
    orders, rdp = _check_curve(orders, rdp)
    delta = mpmath.mpf(check_probability("delta", delta))
    log_delta = mpmath.log(delta)
    _check_log_delta_resolvable("delta", log_delta)

    best_epsilon, best_order = mpmath.inf, None
    for order, rdp_value in zip(orders, rdp):
        if mpmath.isinf(rdp_value):
            continue  # not RDP at this order: this order says nothing
        if method == "bbghs" and delta * delta >= -mpmath.expm1(-rdp_value):
            epsilon = mpmath.mpf(0)  # TV ≤ √(1 − e^{−r}) ≤ δ
        else:
            epsilon = _epsilon_at_order(order, rdp_value, log_delta, method)
        if epsilon < best_epsilon:
            best_epsilon, best_order = epsilon, order
    if best_order is None:
        return mpmath.inf, None
    if best_epsilon <= 0:
        return mpmath.mpf(0), best_order  # (ε ≤ 0, δ)-DP ⇒ (0, δ)-DP; nothing to gain from other orders
    _warn_if_on_grid_edge(best_order, orders, "epsilon")
    return best_epsilon, best_order


def _log_delta_at_order(order, rdp_value, epsilon, method):
    """log δ(α) of one conversion at one order (may be > 0, i.e. a vacuous δ > 1)."""
    if method == "mironov":
        # Mironov 2017 Prop 3 solved for δ: log δ = (α − 1)(r − ε).
        return (order - 1) * (rdp_value - epsilon)
    # CKS Prop 12: δ = exp((α−1)(r−ε)) (1 − 1/α)^α / (α − 1), written in logs as
    # (α−1)(r − ε + log(1 − 1/α)) − log α (the same expression dp_accounting's compute_delta uses).
    return (order - 1) * (rdp_value - epsilon + mpmath.log((order - 1) / order)) - mpmath.log(order)


def delta_from_rdp(orders, rdp, epsilon, method: str = "bbghs"):
    """Smallest δ over the grid such that an RDP curve gives (ε, δ)-DP; returns ``(delta, best_order)``.

    ``epsilon``: ε ≥ 0. Same ``orders``/``rdp`` rules as ``epsilon_from_rdp``.

    method="mironov": δ_i = exp((α_i − 1)(r_i − ε)) (Mironov 2017 Prop 3 solved for δ).
    method="bbghs": δ_i = min( exp((α_i−1)(r_i−ε)) (1 − 1/α_i)^{α_i}/(α_i − 1)  [Balle et al. 2020 Thm 21 = CKS Prop 12],
                               √(1 − e^{−r_i})  [TV bound via Bretagnolle–Huber on KL ≤ r_i, as dp_accounting's
                                                  ``compute_delta`` takes it] ).
    δ = min_i δ_i, capped at 1 (every mechanism is (ε, 1)-DP; a value ≥ 1 means the curve certifies nothing at this ε).
    If every r_i is +inf, returns ``(mpf(1), None)``. With r_i = 0 and "bbghs", δ = 0 exactly (identical outputs).

    Warns OrderGridWarning when 0 < δ < 1 and the optimal order is the smallest or largest of the grid.
    Raises AccountingError for negative RDP, and when the resulting δ is so small that log δ cannot be carried at the
    working precision (see LOG_DELTA_RESOLUTION) — then δ is not known to even one digit.
    """
    _check_method(method)
    orders, rdp = _check_curve(orders, rdp)
    epsilon = mpmath.mpf(check_real("epsilon", epsilon, nonnegative=True))

    best_log_delta, best_order = mpmath.inf, None
    for order, rdp_value in zip(orders, rdp):
        if mpmath.isinf(rdp_value):
            continue
        log_delta = _log_delta_at_order(order, rdp_value, epsilon, method)
        if method == "bbghs":
            log_delta = min(log_delta, _tv_bound_log_delta(rdp_value))
        if best_order is None or log_delta < best_log_delta:
            best_log_delta, best_order = log_delta, order
    if best_order is None or best_log_delta >= 0:
        return mpmath.mpf(1), best_order
    _check_log_delta_resolvable("delta", best_log_delta)
    delta = mpmath.exp(best_log_delta)
    if delta > 0:
        _warn_if_on_grid_edge(best_order, orders, "delta")
    return delta, best_order


# ---------------------------------------------------------------------------------------------------
# zCDP → (ε, δ), optimally over α


def bracket_geometric(is_high, start):
    """(lo, hi) with is_high(lo) False and is_high(hi) True for a monotone predicate on (0, ∞), found by galloping from
    ``start`` with squaring factors (2, 4, 16, 256, …), so a root 10^{±k} away costs O(log k) evaluations."""
    factor = mpmath.mpf(2)
    if is_high(start):
        hi = start
        while True:
            lo = hi / factor
            if not is_high(lo):
                return lo, hi
            hi, factor = lo, factor * factor
    lo = start
    while True:
        hi = lo * factor
        if is_high(hi):
            return lo, hi
        lo, factor = hi, factor * factor


def bisect_geometric(is_high, lo, hi):
    """Shrink a bracket (is_high(lo) False, is_high(hi) True; 0 < lo < hi) until hi/lo − 1 ≤ 4·2^{−prec}.

    Bisects at the geometric mean, i.e. in log x, so a bracket spanning many decades costs
    log2(log(hi/lo)/2^{−prec}) steps. Returns the final (lo, hi); the caller picks the conservative end.
    """
    tolerance = 4 * mpmath.eps
    for _ in range(mpmath.mp.prec + 64 + int(mpmath.log(1 + abs(mpmath.log(hi / lo)), 2))):
        if hi - lo <= tolerance * lo:
            return lo, hi
        mid = mpmath.sqrt(lo * hi)
        if is_high(mid):
            hi = mid
        else:
            lo = mid
    if hi - lo <= tolerance * lo:
        return lo, hi
    raise AccountingError("bisection did not reach working precision")  # unreachable for a valid bracket


def _zcdp_epsilon_at(rho, log_inv_delta, t):
    """BBGHS ε at α = 1 + t for the RDP curve r(α) = ρα: ρ(1 + t) + log(t/(1+t)) + (log(1/δ) − log(1 + t))/t."""
    # log(t/(1+t)) = −log1p(1/t): no cancellation for large t (log t − log1p t would lose log10(t) digits)
    return rho * (1 + t) - mpmath.log1p(1 / t) + (log_inv_delta - mpmath.log1p(t)) / t


def epsilon_from_zcdp(rho, delta):
    """Optimal RDP-route ε for a ρ-zCDP mechanism at δ (Canonne–Kamath–Steinke 2020 Prop 12 minimised over α > 1).

    ρ-zCDP (Bun–Steinke 2016 Def 1.1) is (α, ρα)-RDP for every α > 1, so
        ε(δ) = inf_{α>1} f(α),  f(α) = ρα + log(1 − 1/α) − (log δ + log α)/(α − 1).
    Write L = log(1/δ) > 0. Then f'(α) = ρ + (log α − L)/(α − 1)² = g(α)/(α − 1)² with
        g(α) = ρ(α − 1)² + log α − L.
    Proof of a unique minimiser: g'(α) = 2ρ(α − 1) + 1/α > 0, so g is strictly increasing on (1, ∞), from g(1⁺) = −L < 0
    to +∞ (ρ > 0). Hence f' < 0 left of the unique root α* of g and f' > 0 right of it: f is strictly decreasing then
    strictly increasing (quasi-convex), and α* is its only minimiser. g(α) ≥ 0 at α = 1 + √(L/ρ) and at α = 1/δ, so
    α* ∈ (1, 1 + min(√(L/ρ), e^L − 1)]; and g ≤ 0 at t = α − 1 = min(L/2, √(L/(2ρ))) (there ρt² ≤ L/2 and
    log(1 + t) ≤ t ≤ L/2). We bisect in t = α − 1 (so that α near 1 keeps full precision), geometrically.
    Any α gives a valid bound, so the value f(α) at the bisected α is a guarantee, equal to the infimum to working
    precision (f'(α*) = 0, the error is second order).

    Also uses the TV bound (ρ-zCDP ⇒ KL ≤ ρ ⇒ TV ≤ √(1 − e^{−ρ})): ε = 0 when δ ≥ √(1 − e^{−ρ}); a negative f is
    clamped at 0 (see epsilon_from_rdp). ρ = 0 gives 0. ``rho``: ρ ≥ 0; ``delta``: δ ∈ (0, 1). Returns mpf.
    """
    rho = mpmath.mpf(check_real("rho", rho, nonnegative=True))
    delta = mpmath.mpf(check_probability("delta", delta))
    log_inv_delta = -mpmath.log(delta)
    _check_log_delta_resolvable("delta", -log_inv_delta)
    if rho == 0 or delta * delta >= -mpmath.expm1(-rho):
        return mpmath.mpf(0)

    def g(t):  # g(1 + t), increasing in t
        return rho * t * t + mpmath.log1p(t) - log_inv_delta

    lower = min(log_inv_delta / 2, mpmath.sqrt(log_inv_delta / (2 * rho)))
    upper = min(mpmath.sqrt(log_inv_delta / rho), mpmath.expm1(log_inv_delta))
    if g(lower) >= 0:  # g(lower) ≤ 0 by the bound above; = 0 means lower is the root
        t_star = lower
    else:
        _, t_star = bisect_geometric(lambda t: g(t) >= 0, lower, upper)
    return max(mpmath.mpf(0), _zcdp_epsilon_at(rho, log_inv_delta, t_star))


def _zcdp_log_delta_at(rho, epsilon, t):
    """log of the CKS δ at α = 1 + t for r(α) = ρα: t(ρ(1+t) − ε) + t log t − (1 + t) log(1 + t)."""
    # t log t − (1+t) log(1+t) is a sum of two negative terms for t ≤ 1; for t > 1 it equals −log t − (1+t) log1p(1/t),
    # again two negative terms (the first form would cancel ~log10(t) digits there).
    if t <= 1:
        entropy_terms = t * mpmath.log(t) - (1 + t) * mpmath.log1p(t)
    else:
        entropy_terms = -mpmath.log(t) - (1 + t) * mpmath.log1p(1 / t)
    return t * (rho * (1 + t) - epsilon) + entropy_terms


def delta_from_zcdp(rho, epsilon):
    """Optimal RDP-route δ for a ρ-zCDP mechanism at ε (CKS 2020 ``cdp_delta``).

    log δ(α) = (α − 1)(ρα − ε) + (α − 1) log(α − 1) − α log α  (CKS Prop 12 with r = ρα), whose derivative is
        h(α) = (2α − 1)ρ − ε + log(1 − 1/α)
    and h'(α) = 2ρ + 1/(α(α − 1)) > 0: log δ is strictly convex in α, h runs from −∞ (α → 1⁺) to +∞,
    so the unique root of h is the minimiser. In t = α − 1 the root lies in [min(1, e^{ε−3ρ−1}), max(1, (ε+1)/(2ρ))]
    (for t ≤ 1, h ≤ 3ρ − ε + log t; for t ≥ 1, h ≥ (2t+1)ρ − ε − log 2), where we bisect geometrically.
    δ = min(that, √(1 − e^{−ρ}) [TV bound], 1). ``rho`` ≥ 0, ``epsilon`` ≥ 0. Returns mpf; raises AccountingError when
    δ is below what the working precision can carry (LOG_DELTA_RESOLUTION).
    """
    rho = mpmath.mpf(check_real("rho", rho, nonnegative=True))
    epsilon = mpmath.mpf(check_real("epsilon", epsilon, nonnegative=True))
    if rho == 0:
        return mpmath.mpf(0)

    def h(t):  # h(1 + t), increasing in t
        return (2 * t + 1) * rho - epsilon - mpmath.log1p(1 / t)

    lower = min(mpmath.mpf(1), mpmath.exp(epsilon - 3 * rho - 1))
    upper = max(mpmath.mpf(1), (epsilon + 1) / (2 * rho))
    _, t_star = bisect_geometric(lambda t: h(t) >= 0, lower, upper)
    log_delta = min(_zcdp_log_delta_at(rho, epsilon, t_star), _tv_bound_log_delta(rho))
    if log_delta >= 0:
        return mpmath.mpf(1)
    _check_log_delta_resolvable("delta", log_delta)
    return mpmath.exp(log_delta)


def epsilon_from_zcdp_simple(rho, delta):
    """Bun–Steinke 2016 Prop 1.3: ρ-zCDP ⇒ (ρ + 2√(ρ log(1/δ)), δ)-DP. The classical, looser conversion.

    Kept for comparison with ``epsilon_from_zcdp`` (which is never larger) and because ``composition.certify_pure`` uses it.
    ``rho`` ≥ 0, ``delta`` ∈ (0, 1). Returns mpf.
    """
    rho = mpmath.mpf(check_real("rho", rho, nonnegative=True))
    delta = mpmath.mpf(check_probability("delta", delta))
    log_inv_delta = -mpmath.log(delta)
    _check_log_delta_resolvable("delta", -log_inv_delta)
    return rho + 2 * mpmath.sqrt(rho * log_inv_delta)
