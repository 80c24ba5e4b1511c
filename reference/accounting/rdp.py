"""zo_o2nc §2 and Theorem 4.3, Mironov 2017, Mironov–Talwar–Zhang 2019, Wang–Balle–Kasiviswanathan 2019:
Rényi-DP curves of the basic mechanisms, exact, in mpmath.

Rényi divergence of order α > 1: D_α(P‖Q) = (1/(α−1)) log ∫ P^α Q^{1−α}. A mechanism is (α, r)-RDP if
D_α ≤ r for every pair of neighbouring datasets (both orders of the pair). Every function returns the
RDP value r(α) as an ``mpmath.mpf`` computed at the caller's working precision (set it with
``reference.precision.working_precision``; the functions take no precision argument). Internally they
add guard digits where a formula cancels, so the returned value is accurate to about the working
precision; where that cannot be promised they raise ``AccountingError`` (never a silently wrong
number). ``+inf`` is never returned by the functions of this module: every mechanism here is RDP at
every finite order.

Contents (mechanism — formula — source):

- ``rdp_gaussian``: α/(2z²), z = σ/Δ (Mironov 2017 Prop 7; zo_o2nc §2).
- ``rdp_laplace``: (1/(α−1)) log[α/(2α−1) e^{(α−1)/λ} + (α−1)/(2α−1) e^{−α/λ}], λ = b/Δ₁ (Mironov 2017 Prop 6).
- ``rdp_zcdp``: ρα (Bun–Steinke 2016). ``rdp_exponential_mechanism``: min(αε²/8, ε) (Cesar–Rogers 2021).
- Poisson-subsampled Gaussian, μ0 = N(0, σ²), μ1 = N(1, σ²), μ = (1−q)μ0 + qμ1 (sensitivity 1, σ = z):
  "remove" D_α(μ‖μ0) = log A_α/(α−1) with A_α = E_{μ0}[(μ/μ0)^α] (Mironov–Talwar–Zhang 2019, arXiv
  1908.10530, §3.3; dp_accounting's value): integer α by the exact binomial sum
  (``log_a_poisson_gaussian_integer``), fractional α by MTZ's two-sided erfc series with a proven
  truncation bound (``log_a_poisson_gaussian_fractional``); "add" D_α(μ0‖μ) by quadrature;
  ``rdp_poisson_gaussian_quadrature`` is the quadrature oracle for both directions.
- ``rdp_sampled_without_replacement_gaussian``: Wang–Balle–Kasiviswanathan 2019 (arXiv 1808.00087),
  Theorem 9 with the Gaussian-specific Theorem 27 terms, CGF interpolation (their Corollary 10) for
  fractional α.
- ``rdp_tree_aggregation``: restarts · α (⌊log2 n⌋+1)/(2z²) (zo_o2nc Thm 4.3 corrected, §5 item 3, zo_o2nc.E3);
  ``rdp_tree_exact``: α/2 · max_q s_q² Σ_{b ≤ n, q ∈ N_b} 1/σ_b² (zo_o2nc Theorem 4.3 via Lemma C.1, exact version).
- ``rdp_of_event``: dispatch over ``events`` with composition (RDP adds up over composed mechanisms).

``ACCOUNTING_DPS`` is the working precision used by the CLI and high-level helpers; ``DEFAULT_ORDERS``
is dp_accounting's default order grid.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import mpmath

from ..mechanisms import participation_chain
from ..precision import log_add, log_erfc, logsumexp
from ..validation import check_array, check_int, check_real
from .errors import AccountingError
from .events import (
    ComposedEvent,
    EpsilonDeltaEvent,
    ExponentialMechanismEvent,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    TreeAggregationEvent,
    ZCDPEvent,
    as_relation,
    check_relation,
)

__all__ = [
    "ACCOUNTING_DPS",
    "DEFAULT_ORDERS",
    "POISSON_DIRECTIONS",
    "MAX_TAIL_TERMS",
    "WBK_IMPROVED_MAX_ORDER",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_zcdp",
    "rdp_exponential_mechanism",
    "log_a_poisson_gaussian_integer",
    "log_a_poisson_gaussian_fractional",
    "rdp_poisson_gaussian",
    "rdp_poisson_gaussian_quadrature",
    "rdp_sampled_without_replacement_gaussian",
    "rdp_tree_aggregation",
    "rdp_tree_exact",
    "rdp_of_event",
]

#: Decimal digits used by the CLI and the high-level helpers (the functions here use the caller's precision).
ACCOUNTING_DPS = 40


def _default_orders() -> tuple:
    # dp_accounting's DEFAULT_RDP_ORDERS: 1.1, 1.2, …, 10.9, then 11..63, then 128, 256, 512, 1024.
    # The decimal strings are rounded to 256 bits (77 digits), so they are exact at any working
    # precision up to 77 digits (1.1 is not a binary fraction; a float would carry a 1e-17 error).
    with mpmath.workprec(256):
        decimals = [f"{10 + x}e-1" for x in range(1, 100)]  # "11e-1" = 1.1, …, "109e-1" = 10.9
        return tuple(mpmath.mpf(s) for s in decimals) + tuple(
            mpmath.mpf(k) for k in [*range(11, 64), 128, 256, 512, 1024]
        )


#: dp_accounting's default orders: [1 + x/10 for x in 1..99] + [11..63] + [128, 256, 512, 1024] (156 orders).
DEFAULT_ORDERS: tuple = _default_orders()

#: Directions of the Poisson-subsampled Gaussian (see ``rdp_poisson_gaussian``).
POISSON_DIRECTIONS = ("remove", "add", "max")

#: Term budget of the accelerated tail of the fractional-order series (``log_a_poisson_gaussian_fractional``).
#: Each term buys log10(3 + √8) ≈ 0.77 digits, so 2000 terms cover 1500 digits.
MAX_TAIL_TERMS = 2000

#: Sampling without replacement: the Theorem 27 (Pearson–Vajda) terms are used up to this order, as in
#: dp_accounting (they cost O(α²) high-precision operations); above it Theorem 9 alone (still a valid bound).
WBK_IMPROVED_MAX_ORDER = 256


# ---------------------------------------------------------------------------------------------------
# Input checks (ValueError / TypeError naming the parameter)


def _order(order, name: str = "order"):
    """A Rényi order α > 1 (finite) as mpf."""
    value = mpmath.mpf(check_real(name, order))
    if not value > 1:
        raise ValueError(f"{name} must be > 1 (Rényi orders α ≤ 1 are not used for RDP), got {value}")
    return value


def _positive(name: str, value):
    return mpmath.mpf(check_real(name, value, positive=True))


def _nonnegative(name: str, value):
    return mpmath.mpf(check_real(name, value, nonnegative=True))


def _closed_probability(name: str, value):
    return mpmath.mpf(check_real(name, value, nonnegative=True, upper=1))


def _is_integer(alpha) -> bool:
    return alpha == mpmath.floor(alpha)


def _orders(orders) -> list:
    if isinstance(orders, (str, bytes)) or not isinstance(orders, Iterable):
        raise TypeError(f"orders must be a sequence of real numbers > 1, got {type(orders).__name__}")
    orders = list(orders)
    if not orders:
        raise ValueError("orders must contain at least one order")
    return [_order(a, f"orders[{i}]") for i, a in enumerate(orders)]


def _with_guard(guard_digits: int):
    """Context adding ``guard_digits`` to the caller's working precision."""
    return mpmath.workdps(mpmath.mp.dps + int(guard_digits))


# ---------------------------------------------------------------------------------------------------
# Closed forms


def rdp_gaussian(order, noise_multiplier):
    """RDP of the Gaussian mechanism: D_α(N(Δ, σ²) ‖ N(0, σ²)) = α/(2z²) with z = σ/Δ.

    Mironov 2017 Prop 7; zo_o2nc §2 (σ = s/ρ gives (α, αρ²/2)-RDP, i.e. D_α = α s²/(2σ²)).
    order: α > 1. noise_multiplier: z = σ/Δ > 0 (Δ: ℓ2 sensitivity under the accountant's relation).
    """
    alpha = _order(order)
    z = _positive("noise_multiplier", noise_multiplier)
    return alpha / (2 * z**2)


def rdp_laplace(order, noise_multiplier):
    """RDP of the Laplace mechanism, Mironov 2017 Proposition 6 (tight):

        D_α = (1/(α−1)) log[ α/(2α−1) · e^{(α−1)/λ} + (α−1)/(2α−1) · e^{−α/λ} ],   α > 1,

    with λ = b/Δ₁ (``noise_multiplier``: Laplace scale over ℓ1 sensitivity), i.e. ε = 1/λ is the pure-DP
    level that D_α approaches as α → ∞. For small ε the bracket is 1 + O(ε²) (D_α ≈ αε²/2), so the
    logarithm cancels about 2·log10(1/ε) + log10(1/(α−1)) digits; they are added as guard digits.
    """
    alpha = _order(order)
    lam = _positive("noise_multiplier", noise_multiplier)
    lost = 2 * max(0, mpmath.log10(lam)) + max(0, -mpmath.log10(alpha - 1))
    with _with_guard(10 + int(mpmath.ceil(lost))):
        eps = 1 / lam
        log_bracket = log_add(
            mpmath.log(alpha / (2 * alpha - 1)) + (alpha - 1) * eps,
            mpmath.log((alpha - 1) / (2 * alpha - 1)) - alpha * eps,
        )
        value = log_bracket / (alpha - 1)
    if value < 0:
        raise AccountingError(f"rdp_laplace: negative Rényi divergence {value} from rounding (order={alpha}, λ={lam})")
    return +value


def rdp_zcdp(order, rho):
    """RDP of a ρ-zCDP mechanism: ρα at every order α > 1 (Bun–Steinke 2016, Def. 1.1). rho: ρ ≥ 0."""
    alpha = _order(order)
    rho = _nonnegative("rho", rho)
    return rho * alpha


def rdp_exponential_mechanism(order, epsilon):
    """RDP of an ε-DP exponential mechanism / report-noisy-max: min(α ε²/8, ε).

    An ε-DP selection whose privacy loss has range ε is ε²/8-zCDP (Cesar–Rogers 2021, §3: bounded range),
    i.e. D_α ≤ αε²/8; an ε-DP mechanism also has D_α ≤ D_∞ ≤ ε. epsilon: ε ≥ 0.
    """
    alpha = _order(order)
    eps = _nonnegative("epsilon", epsilon)
    return min(alpha * eps**2 / 8, eps)


# ---------------------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian: integer orders


def _log_expm1(x):
    """log(e^x − 1) for x > 0, without overflow for large x."""
    if x > 1:
        return x + mpmath.log1p(-mpmath.exp(-x))
    return mpmath.log(mpmath.expm1(x))


def log_a_poisson_gaussian_integer(order, q, z):
    """log A_α for integer α ≥ 2: the exact binomial sum of Mironov–Talwar–Zhang 2019 (§3.3, eq. for integer α).

    A_α = E_{x∼μ0}[((1−q) + q e^{(2x−1)/(2σ²)})^α] = Σ_{k=0}^{α} C(α,k) (1−q)^{α−k} q^k e^{(k²−k)/(2σ²)},
    σ = z, μ0 = N(0, σ²), using E_{μ0}[e^{k(2x−1)/(2σ²)}] = e^{(k²−k)/(2σ²)}.

    Because Σ_k C(α,k)(1−q)^{α−k}q^k = 1, subtracting it term by term gives a sum of non-negative terms,

        A_α − 1 = Σ_{k=2}^{α} C(α,k) (1−q)^{α−k} q^k (e^{(k²−k)/(2σ²)} − 1),

    (k = 0, 1 contribute 0), which is summed in log space (exact integer binomials, log expm1) and turned
    into log A_α = log(1 + e^{log(A_α−1)}). No cancellation: log A_α keeps full relative accuracy even
    when it is 1e-20 (tiny q, large z), where forming A_α ≈ 1 first would lose every digit.

    order: integer α ≥ 2 (an integer-valued float/mpf is accepted). q: sampling probability in [0, 1].
    z: noise multiplier σ/Δ > 0. Returns mpf.
    """
    alpha = _order(order)
    if not _is_integer(alpha):
        raise ValueError(f"order must be an integer >= 2 for the binomial sum, got {alpha}")
    alpha = int(alpha)
    q = _closed_probability("q", q)
    sigma = _positive("z", z)
    if q == 0:
        return mpmath.mpf(0)
    if q == 1:
        return mpmath.mpf(alpha * (alpha - 1)) / (2 * sigma**2)
    with _with_guard(5 + len(str(alpha))):
        log_q, log_1mq = mpmath.log(q), mpmath.log1p(-q)
        two_sigma2 = 2 * sigma**2
        log_terms = [
            mpmath.log(math.comb(alpha, k)) + (alpha - k) * log_1mq + k * log_q + _log_expm1((k * k - k) / two_sigma2)
            for k in range(2, alpha + 1)
        ]
        log_a = log_add(0, logsumexp(log_terms))
    return +log_a


# ---------------------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian: fractional orders (MTZ series with a proven truncation bound)


def _cvz_weights(n: int):
    """Weights w_k (k < n) and d = T_n(3) of the Cohen–Rodriguez Villegas–Zagier acceleration (Exp. Math. 2000).

    For an alternating series S = Σ_{k≥0} (−1)^k a_k whose magnitudes are moments a_k = ∫_0^1 x^k dν(x) of a
    positive measure ν, S = ∫ dν/(1+x). Take P(x) = T_n(1 − 2x) (Chebyshev, |P| ≤ 1 on [0, 1]) and
    d = P(−1) = T_n(3). Q(x) = (d − P(x))/(1 + x) is a polynomial Σ_{k<n} Q_k x^k, so

        S = (1/d) Σ_k Q_k a_k + (1/d) ∫ P(x)/(1+x) dν,   |second term| ≤ S/d ≤ a_0/d,

    because S ≤ ∫dν = a_0. The returned w_k = Q_k/d (|w_k| ≤ 1, alternating in sign) give S ≈ Σ w_k a_k with
    error ≤ a_0/d and d ≥ (3+√8)^n/2. Coefficients are exact integers:
    P(x) = Σ_k p_k x^k, p_k = (−1)^k n (n+k−1)! 4^k / ((n−k)! (2k)!).
    """
    p = []
    for k in range(n + 1):
        num = n * math.factorial(n + k - 1) * 4**k
        den = math.factorial(n - k) * math.factorial(2 * k)
        assert num % den == 0  # Chebyshev coefficients are integers
        p.append((-1) ** k * (num // den))
    d = sum(abs(c) for c in p)  # P(−1) = Σ |p_k| = T_n(3)
    q_coeffs = [d - p[0]]
    for k in range(1, n):
        q_coeffs.append(-p[k] - q_coeffs[-1])
    assert q_coeffs[-1] == -p[n]  # (1 + x) Q(x) = d − P(x) exactly
    d_mp = mpmath.mpf(d)
    return [mpmath.mpf(c) / d_mp for c in q_coeffs], d_mp


def _mtz_fractional_series(alpha, q, sigma, digits: int):
    """Sum the MTZ two-sided series at the current precision; see ``log_a_poisson_gaussian_fractional``.

    Returns (log A, bound on |log A − returned value| from truncation). ``digits`` is the caller's precision,
    which sets the target relative accuracy 10^{-digits} of log A.
    """
    log_q, log_1mq = mpmath.log(q), mpmath.log1p(-q)
    two_sigma2 = 2 * sigma**2
    sqrt2_sigma = mpmath.sqrt(2) * sigma
    log_half = -mpmath.log(2)
    z0 = sigma**2 * (log_1mq - log_q) + mpmath.mpf(1) / 2  # where q μ1 = (1−q) μ0

    def log_terms(i: int, log_abs_binom):
        """log|T0_i|, log|T1_i| (MTZ §3.3) for the index i with log|C(α, i)| given."""
        j = alpha - i
        log_t0 = (
            log_abs_binom + i * log_q + j * log_1mq + (i * i - i) / two_sigma2
            + log_half + log_erfc((i - z0) / sqrt2_sigma)
        )
        log_t1 = (
            log_abs_binom + j * log_q + i * log_1mq + (j * j - j) / two_sigma2
            + log_half + log_erfc((z0 - j) / sqrt2_sigma)
        )
        return log_t0, log_t1

    first_tail = int(mpmath.floor(alpha)) + 1  # i0: C(α, i) alternates in sign from here on
    log_abs_binom = mpmath.mpf(0)  # log|C(α, 0)|
    head = []
    for i in range(first_tail):
        log_t0, log_t1 = log_terms(i, log_abs_binom)
        head += [mpmath.exp(log_t0), mpmath.exp(log_t1)]
        log_abs_binom += mpmath.log(abs(alpha - i)) - mpmath.log(i + 1)  # C(α,i+1) = C(α,i)(α−i)/(i+1)
    head_sum = mpmath.fsum(head)

    if _is_integer(alpha):  # C(α, i) = 0 for i > α: the series is finite (it is the integer binomial sum)
        log_a = mpmath.log(head_sum)
        return log_a, mpmath.mpf(0)

    tail = []  # a_k = |T0_{i0+k}| + |T1_{i0+k}|, computed lazily

    def extend_tail(n: int):
        nonlocal log_abs_binom
        while len(tail) < n:
            i = first_tail + len(tail)
            log_t0, log_t1 = log_terms(i, log_abs_binom)
            tail.append(mpmath.exp(log_t0) + mpmath.exp(log_t1))
            log_abs_binom += mpmath.log(abs(alpha - i)) - mpmath.log(i + 1)

    target = mpmath.mpf(10) ** (-digits)
    digits_per_term = mpmath.log10(3 + mpmath.sqrt(8))
    extend_tail(1)
    # first guess of n from a_0/T_n(3) ≤ (target/2)·A·log A with A ≈ head + a_0/2 (refined below if short)
    a_guess = head_sum + tail[0] / 2
    log_a_guess = mpmath.log(a_guess) if a_guess > 1 else alpha * (alpha - 1) / 2 * q**2 * mpmath.expm1(1 / sigma**2)
    if tail[0] > 0:
        n = int(mpmath.ceil(mpmath.log10(4 * tail[0] / (target * a_guess * log_a_guess)) / digits_per_term)) + 1
    else:
        n = 4
    n = min(max(n, 4), MAX_TAIL_TERMS)
    while True:
        extend_tail(n)
        weights, d = _cvz_weights(n)
        tail_sum = mpmath.fsum(w * a for w, a in zip(weights, tail))
        bound = tail[0] / d  # |S − S_n| ≤ a_0 / T_n(3)
        a_n = head_sum + tail_sum
        a_low = a_n - bound
        log_a = mpmath.log(a_n)
        if a_low > 1:
            log_low = mpmath.log(a_low)
            # log(a_n) − log(a_low) = log1p(bound/a_low) ≤ bound/a_low, and log(a_n + bound) − log(a_n) is smaller
            log_bound = bound / a_low
            if log_bound <= target * log_low:
                return log_a, log_bound
            acceptable = log_bound <= mpmath.mpf(10) ** (10 - digits) * log_low
            estimate = log_low
        else:
            acceptable = False
            estimate = max(log_a, mpmath.mpf(10) ** (5 - mpmath.mp.dps))
        if n >= MAX_TAIL_TERMS:
            if acceptable:
                return log_a, log_bound  # the promised relative 10^{-(dps−10)}, not the full 10^{-dps}
            raise AccountingError(
                f"fractional-order series did not reach its truncation bound within {MAX_TAIL_TERMS} accelerated "
                f"terms (order={mpmath.nstr(alpha, 12)}, q={mpmath.nstr(q, 12)}, z={mpmath.nstr(sigma, 12)}): "
                f"log A is not resolved to relative 1e-{digits - 10}"
            )
        # terms needed for a_0/T_n(3) ≤ (target/2)·A·log A, from the current estimate of log A
        need = mpmath.log10(2 * tail[0] / (target * a_n * estimate)) / digits_per_term + 2
        n = min(MAX_TAIL_TERMS, max(n + 8, int(mpmath.ceil(need))))


def log_a_poisson_gaussian_fractional(order, q, z):
    """log A_α for real α > 1 by the two-sided series of Mironov–Talwar–Zhang 2019 (arXiv 1908.10530, §3.3),
    with a proven truncation bound. Returns ``(log_a, tail_bound)``: mpf values such that the truncation error
    |log A_α − log_a| ≤ tail_bound ≤ 10^{-dps}·log A_α (at worst 10^{-(dps−10)}·log A_α when the term budget
    ``MAX_TAIL_TERMS`` runs out; beyond that ``AccountingError``); guard digits keep the rounding error below
    10^{-dps}·log A_α as well.

    Setting (σ = z, sensitivity 1): μ0 = N(0, σ²), μ1 = N(1, σ²), R(x) = μ1/μ0 = e^{(2x−1)/(2σ²)}, and
    A_α = E_{μ0}[(1 − q + qR)^α]. At z0 = σ² log(1/q − 1) + 1/2 the two summands are equal (qR = 1−q).
    For x < z0 expand in r = qR/(1−q) ∈ (0, 1], for x > z0 in s = (1−q)/(qR) ∈ (0, 1] (binomial series):

        A_α = Σ_{i≥0} (T0_i + T1_i),
        T0_i = C(α,i) (1−q)^{α−i} q^i e^{(i²−i)/(2σ²)} · ½ erfc((i − z0)/(√2 σ))
             = C(α,i) (1−q)^α ∫_{x<z0} μ0 r^i,
        T1_i = C(α,i) q^{α−i} (1−q)^i e^{((α−i)²−(α−i))/(2σ²)} · ½ erfc((z0 − (α−i))/(√2 σ))
             = C(α,i) q^α ∫_{x>z0} μ0 R^α s^i,

    each term computed in log space. (Summing and integrating may be swapped: Σ_i |C(α,i)| ∫ μ0 r^i < ∞ since
    |C(α,i)| ~ i^{−α−1} and ∫_{x<z0} μ0 r^i ~ μ0(z0) σ²/i.)

    Truncation bound (derivation). With i0 = ⌊α⌋ + 1, C(α, i) > 0 for i < i0 (the head, all terms positive),
    and for i ≥ i0, C(α,i) = (−1)^{i−i0} |C(α,i)| with |C(α,i)| = (|sin πα|/π) Γ(i−α)/Γ(i+1)
    = (|sin πα|/(π Γ(α+1))) ∫_0^1 t^{i−α−1}(1−t)^α dt — a moment sequence in k = i − i0 of a positive measure
    on [0, 1]. The integrals ∫_{x<z0} μ0 r^i and ∫_{x>z0} μ0 R^α s^i are moment sequences too (r, s ∈ [0, 1]),
    and products and sums of moment sequences are moment sequences. So the tail is an alternating series
    Σ_k (−1)^k a_k with a_k = |T0_{i0+k}| + |T1_{i0+k}| = ∫_0^1 x^k dν for a positive measure ν. Two
    consequences: (i) a_k is decreasing, so |tail − partial sum| ≤ next term (Leibniz) — this justifies
    dp_accounting's stopping rule, but the terms decay only like k^{−α−2} (they do NOT decay geometrically:
    the ratio of consecutive terms tends to 1 because ∫ μ0 r^i concentrates at x = z0 where r = 1), so plain
    summation to 1e-30 would need ~10^{30/(α+2)} terms; (ii) the Cohen–Rodriguez Villegas–Zagier
    acceleration (``_cvz_weights``) has the proven error ≤ a_0/T_n(3) ≤ 2a_0/(3+√8)^n using n terms. The tail
    sum S satisfies a_0/2 ≤ S ≤ a_0 (1/(1+x) ∈ [1/2, 1]), so a_0 ≤ 2A_α. With A_n = head + S_n and
    b = a_0/T_n(3), A_α ∈ [A_n − b, A_n + b] and the returned bound is b/(A_n − b) ≥ log A_n − log(A_n − b).
    n is increased until it is below 10^{-dps}·log A_α: about (dps + log10(a_0/(A_α log A_α)))/0.77 terms,
    ~40 at dps 30.

    Precision: A_α = 1 + (log A_α) with log A_α possibly tiny (q → 0, z large), so the head (≈ 1) cancels
    about −log10(log A_α) digits; the sum is evaluated with that many guard digits (estimated from the leading
    term C(α,2) q² (e^{1/σ²} − 1) and checked afterwards).

    At integer α the tail vanishes (C(α, i) = 0 for i > α) and the series is the integer binomial sum.
    order: α > 1. q: sampling probability in (0, 1). z: noise multiplier > 0.
    Raises AccountingError if log A_α ≤ 0 after rounding or the bound is not met within ``MAX_TAIL_TERMS``.
    """
    alpha = _order(order)
    q = _closed_probability("q", q)
    if not 0 < q < 1:
        raise ValueError(f"q must lie in (0, 1) for the two-sided series (q = 0, 1 have closed forms), got {q}")
    sigma = _positive("z", z)
    digits = mpmath.mp.dps
    with mpmath.workdps(digits + 10):
        estimate = alpha * (alpha - 1) / 2 * q**2 * mpmath.expm1(1 / sigma**2)
        lost = int(mpmath.ceil(max(0, -mpmath.log10(min(estimate, 1)))))
    guard = 12 + lost
    for _ in range(4):
        with mpmath.workdps(digits + guard):
            log_a, bound = _mtz_fractional_series(alpha, q, sigma, digits)
            if not log_a > 0:
                raise AccountingError(
                    f"log A = {mpmath.nstr(log_a, 5)} <= 0 at order={alpha}, q={q}, z={sigma}: A_α > 1 for 0 < q < 1 "
                    "(strict Jensen), so the series lost all digits to rounding"
                )
            lost_now = max(0, -mpmath.log10(log_a))
        if lost_now + 8 <= guard:
            return +log_a, +bound
        guard = int(mpmath.ceil(lost_now)) + 14
    raise AccountingError(f"could not choose guard digits for log A (order={alpha}, q={q}, z={sigma})")


def rdp_poisson_gaussian(order, q, z, direction="remove"):
    """RDP of the Poisson-subsampled Gaussian mechanism (sampling probability q, noise multiplier z = σ/Δ).

    With μ0 = N(0, σ²), μ1 = N(1, σ²) (Δ = 1 after scaling), μ = (1−q)μ0 + qμ1 (the record is in the batch
    with probability q):

    - "remove": D_α(μ ‖ μ0) = log A_α/(α − 1), A_α = E_{μ0}[(μ/μ0)^α] (Mironov–Talwar–Zhang 2019 §3.3). This is
      what dp_accounting, Opacus and TF-Privacy report. Integer α: ``log_a_poisson_gaussian_integer``;
      fractional α: ``log_a_poisson_gaussian_fractional`` (truncation bound proven there).
    - "add": D_α(μ0 ‖ μ) = (1/(α−1)) log E_{μ0}[(μ0/μ)^{α−1}], computed by quadrature
      (``rdp_poisson_gaussian_quadrature``; no finite closed form is known even at integer α, because the
      exponent 1 − α is negative and the binomial expansion of (1 − q + qR)^{1−α} does not terminate).
    - "max": the larger of the two — what the add/remove relation needs by definition. MTZ 2019 (§3) prove
      A_α ≥ B_α = E_μ[(μ0/μ)^α], i.e. "remove" ≥ "add", which is why the accountants use "remove"; the tests
      check this numerically.

    q = 0 gives 0 and q = 1 gives α/(2z²) in every direction (the Gaussian is symmetric).
    order: α > 1. q ∈ [0, 1]. z > 0.
    """
    alpha = _order(order)
    q = _closed_probability("q", q)
    sigma = _positive("z", z)
    if direction not in POISSON_DIRECTIONS:
        raise ValueError(f"direction must be one of {POISSON_DIRECTIONS}, got {direction!r}")
    if q == 0:
        return mpmath.mpf(0)
    if q == 1:
        return alpha / (2 * sigma**2)
    if direction == "add":
        return rdp_poisson_gaussian_quadrature(alpha, q, sigma, direction="add")
    if direction == "max":
        return max(rdp_poisson_gaussian(alpha, q, sigma, "remove"), rdp_poisson_gaussian(alpha, q, sigma, "add"))
    if _is_integer(alpha):
        log_a = log_a_poisson_gaussian_integer(alpha, q, sigma)
    else:
        log_a, _ = log_a_poisson_gaussian_fractional(alpha, q, sigma)
    return log_a / (alpha - 1)


def _quadrature_points(alpha, q, sigma, direction):
    """Breakpoints for ``mpmath.quad``: a grid of spacing ≤ 8σ covering every bump of the integrand ± 12σ.

    The integrand μ0(x)·h(x) has its mass near x ≈ 0…2 (the μ0 bulk where u = q(R−1) is small) and, for the
    remove direction, at x* = α·p(x*) ∈ (0, α) with p = qR/(1 − q + qR) (the tilted Gaussian μ0 R^α peaks at α);
    for the add direction at x* = (1−α)·p(x*) ∈ (1 − α, 0). Beyond ±12σ of these the Gaussian factor is < e^{−72}
    of its peak; the two infinite end intervals are still integrated.
    """
    low = mpmath.mpf(0) if direction == "remove" else 1 - alpha
    high = alpha if direction == "remove" else mpmath.mpf(2)
    low, high = min(low, mpmath.mpf(0)) - 12 * sigma, max(high, mpmath.mpf(2)) + 12 * sigma
    count = int(min(400, mpmath.ceil((high - low) / (8 * sigma))))
    step = (high - low) / count
    return [-mpmath.inf] + [low + k * step for k in range(count + 1)] + [mpmath.inf]


def rdp_poisson_gaussian_quadrature(order, q, z, direction="remove"):
    """The quadrature oracle for the Poisson-subsampled Gaussian: the defining integrals by ``mpmath.quad``.

    remove: D_α(μ‖μ0) = (1/(α−1)) log E_{μ0}[(1+u)^α],      add: D_α(μ0‖μ) = (1/(α−1)) log E_{μ0}[(1+u)^{1−α}],

    u(x) = q(R(x) − 1) = q·expm1((2x−1)/(2σ²)), μ0 = N(0, σ²) (E_{μ0}[u] = 0). With β = α (remove) or 1 − α (add),
    what is integrated is E_{μ0}[(1+u)^β] − 1 = ∫ μ0(x) [(1+u)^β − 1 − βu] dx: the subtracted βu integrates to 0,
    and the bracket is ≥ 0 for β ≥ 1 or β ≤ 0 (Bernoulli's inequality), so the integral has no cancellation and
    log E = log1p(integral) keeps its relative accuracy when it is tiny. The bracket itself cancels near u = 0
    and the integral is ~q²/z² while |βu| ~ q/z, so log10(z/q) + log10(1/|β−1|) + 15 guard digits are used.
    The range is split on a grid (``_quadrature_points``) so every tanh-sinh panel sees a smooth piece no wider
    than 8σ (one bump of width σ at most); quad's error estimate must be below 10^{-(dps−3)} relative, else
    ``AccountingError``.

    direction: "remove", "add" or "max". order: α > 1. q ∈ [0, 1] (q = 1 is integrated too: a check of the
    closed form α/(2z²)). z > 0. This is an oracle for tests and for the "add" direction, not a fast path.
    """
    alpha = _order(order)
    q = _closed_probability("q", q)
    sigma = _positive("z", z)
    if direction not in POISSON_DIRECTIONS:
        raise ValueError(f"direction must be one of {POISSON_DIRECTIONS}, got {direction!r}")
    if direction == "max":
        return max(
            rdp_poisson_gaussian_quadrature(alpha, q, sigma, "remove"),
            rdp_poisson_gaussian_quadrature(alpha, q, sigma, "add"),
        )
    if q == 0:
        return mpmath.mpf(0)
    digits = mpmath.mp.dps
    beta = alpha if direction == "remove" else 1 - alpha
    lost = max(0, mpmath.log10(sigma)) + max(0, -mpmath.log10(q)) + max(0, -mpmath.log10(abs(beta - 1)))
    with _with_guard(15 + int(mpmath.ceil(lost))):
        two_sigma2 = 2 * sigma**2
        log_normaliser = -mpmath.log(sigma * mpmath.sqrt(2 * mpmath.pi))

        log_q, log_1mq = mpmath.log(q), (mpmath.log1p(-q) if q < 1 else -mpmath.inf)

        def log_integrand(x):
            log_ratio = (2 * x - 1) / two_sigma2  # log R(x)
            u = q * mpmath.expm1(log_ratio)
            # log(1 + u) = log(1 − q + qR): log1p near u = 0, the log-sum form where u → −1 (R → 0, q ≈ 1)
            log1p_u = mpmath.log1p(u) if u > -0.5 else log_add(log_1mq, log_q + log_ratio)
            bracket = mpmath.expm1(beta * log1p_u) - beta * u
            if not bracket > 0:  # 0 at u = 0; tiny negative values there are rounding
                return -mpmath.inf
            return log_normaliser - x * x / two_sigma2 + mpmath.log(bracket)

        # mpmath.quad stops on an *absolute* error estimate, so the integrand is scaled to peak ≈ 1 (its values
        # range from ~q² to e^{α²/(2z²)}); the scale is the largest value on the breakpoint grid.
        points = _quadrature_points(alpha, q, sigma, direction)
        log_scale = max(log_integrand(x) for x in points[1:-1])
        value, error = mpmath.quad(lambda x: mpmath.exp(log_integrand(x) - log_scale), points, error=True)
        value, error = value * mpmath.exp(log_scale), error * mpmath.exp(log_scale)
        if not value > 0:
            raise AccountingError(f"quadrature gave E[(1+u)^β] − 1 = {value} <= 0 (order={alpha}, q={q}, z={sigma})")
        log_moment = mpmath.log1p(value)
        if error / (1 + value) > mpmath.mpf(10) ** (3 - digits) * log_moment:
            raise AccountingError(
                f"quadrature did not converge: error estimate {mpmath.nstr(error, 3)} for integral "
                f"{mpmath.nstr(value, 10)} (order={alpha}, q={q}, z={sigma}, direction={direction})"
            )
        result = log_moment / (alpha - 1)
    return +result


# ---------------------------------------------------------------------------------------------------
# Sampling without replacement (Wang–Balle–Kasiviswanathan 2019)


def _pearson_vajda_moment_gaussian(ell: int, sigma):
    """E_{μ0}[(μ1/μ0 − 1)^ℓ] for even ℓ ≥ 2: the ℓ-th forward difference Σ_i C(ℓ,i)(−1)^{ℓ−i} e^{i(i−1)/(2σ²)}.

    (WBK 2019's Pearson–Vajda pseudo-divergence of the Gaussian pair; e^{i(i−1)/(2σ²)} = E_{μ0}[R^i].) The
    alternating sum cancels; the guard digits are log10(Σ|terms|) − log10(lower bound), with the lower bounds
    (E[(R−1)²])^{ℓ/2} (Lyapunov) and E[R^ℓ](1 − E[R^{ℓ−1}]/E[R^ℓ])^ℓ (Jensen under the R^ℓ-tilted measure,
    x ↦ (1−x)^ℓ being convex).
    """
    two_sigma2 = 2 * sigma**2
    with _with_guard(10):
        log_abs_sum = logsumexp(mpmath.log(math.comb(ell, i)) + i * (i - 1) / two_sigma2 for i in range(ell + 1))
        lyapunov = (ell // 2) * mpmath.log(mpmath.expm1(2 / two_sigma2))
        shrink = -mpmath.exp(-(ell - 1) / sigma**2)  # −E[R^{ℓ−1}]/E[R^ℓ]
        jensen = ell * (ell - 1) / two_sigma2 + ell * mpmath.log1p(shrink)
        lower = max(lyapunov, jensen)
        guard = int(mpmath.ceil((log_abs_sum - lower) / mpmath.log(10))) + 15
    with _with_guard(guard):
        value = mpmath.fsum(
            (-1) ** (ell - i) * math.comb(ell, i) * mpmath.exp(i * (i - 1) / two_sigma2) for i in range(ell + 1)
        )
    if not value > 0:
        raise AccountingError(f"Pearson–Vajda moment of order {ell} came out {value} <= 0 (z={sigma})")
    return +value


def _wor_log_cgf_integer(alpha: int, gamma, sigma, moments: dict):
    """WBK Theorem 9 (+ Theorem 27 terms) for the Gaussian at integer α ≥ 2: log of

        1 + γ² C(α,2) min{4(e^{ε(2)} − 1), 2e^{ε(2)}}
          + Σ_{j=3}^{α} γ^j C(α,j) min{2e^{(j−1)ε(j)}, 4√(B(2⌊j/2⌋) B(2⌈j/2⌉))},

    ε(j) = j/(2σ²) the Gaussian's RDP (ε(∞) = ∞ makes Theorem 9's min{2, (e^{ε(∞)}−1)^j} equal 2), B(ℓ) the
    Pearson–Vajda moments (``_pearson_vajda_moment_gaussian``, Theorem 27; used for α ≤ WBK_IMPROVED_MAX_ORDER).
    The result is the CGF bound (α − 1)·ε'(α). ``moments`` caches B(ℓ) across orders of one call.
    """
    eps = lambda j: mpmath.mpf(j) / (2 * sigma**2)  # noqa: E731 — the base mechanism's RDP curve
    log_gamma = mpmath.log(gamma)
    improved = alpha <= WBK_IMPROVED_MAX_ORDER
    log_terms = [
        2 * log_gamma
        + mpmath.log(math.comb(alpha, 2))
        + min(mpmath.log(4) + _log_expm1(eps(2)), mpmath.log(2) + eps(2))
    ]
    for j in range(3, alpha + 1):
        log_moment = mpmath.log(2) + (j - 1) * eps(j)
        if improved:
            lo, hi = 2 * (j // 2), 2 * ((j + 1) // 2)
            for ell in (lo, hi):
                if ell not in moments:
                    moments[ell] = _pearson_vajda_moment_gaussian(ell, sigma)
            log_moment = min(log_moment, mpmath.log(4) + (mpmath.log(moments[lo]) + mpmath.log(moments[hi])) / 2)
        log_terms.append(j * log_gamma + mpmath.log(math.comb(alpha, j)) + log_moment)
    return log_add(0, logsumexp(log_terms))


def _rdp_wor(alpha, gamma, sigma, moments: dict):
    base = alpha / (2 * sigma**2)
    if gamma == 0:
        return mpmath.mpf(0)
    if gamma == 1:
        return base
    with _with_guard(10):
        if _is_integer(alpha):
            bound = _wor_log_cgf_integer(int(alpha), gamma, sigma, moments) / (alpha - 1)
        else:
            # the CGF (α−1)ε'(α) is convex in α (WBK Cor. 10): interpolate between ⌊α⌋ and ⌈α⌉, with CGF(1) = 0
            floor_alpha = int(mpmath.floor(alpha))
            t = alpha - floor_alpha
            cgf_floor = mpmath.mpf(0) if floor_alpha == 1 else _wor_log_cgf_integer(floor_alpha, gamma, sigma, moments)
            cgf_ceil = _wor_log_cgf_integer(floor_alpha + 1, gamma, sigma, moments)
            bound = ((1 - t) * cgf_floor + t * cgf_ceil) / (alpha - 1)
        value = min(base, bound)
    return +value


def rdp_sampled_without_replacement_gaussian(order, source_size, sample_size, z):
    """RDP bound for the Gaussian mechanism on a uniformly random subset of size m from n records, REPLACE-ONE.

    Wang–Balle–Kasiviswanathan 2019 ("Subsampled Rényi DP and analytical moments accountant", AISTATS;
    arXiv 1808.00087), γ = m/n, base mechanism ε(α) = α/(2z²) with z relative to the replace-one sensitivity:

    - integer α ≥ 2: Theorem 9 with the Gaussian-specific Theorem 27 terms (``_wor_log_cgf_integer``), as
      dp_accounting's ``_compute_rdp_sample_wor_gaussian`` (which also uses Theorem 27 only up to α = 256);
    - fractional α: linear interpolation of the CGF (α−1)ε'(α) between ⌊α⌋ and ⌈α⌉ (WBK Corollary 10;
      CGF(1) = 0), which is an upper bound because the CGF is convex;
    - and min with the base mechanism's α/(2z²): subsampling cannot hurt, by joint quasi-convexity of the
      Rényi divergence over the coupled subsets (van Erven–Harremoës 2014, Thm 13). γ = 1 gives α/(2z²),
      γ = 0 gives 0.

    order: α > 1. source_size: n ≥ 1. sample_size: m with 0 ≤ m ≤ n. z: noise multiplier > 0. This is an upper
    bound (not exact) — WBK's bound is tight only to leading order in γ.
    """
    alpha = _order(order)
    n = check_int("source_size", source_size, minimum=1)
    m = check_int("sample_size", sample_size, minimum=0, maximum=n)
    sigma = _positive("z", z)
    return _rdp_wor(alpha, mpmath.mpf(m) / n, sigma, {})


# ---------------------------------------------------------------------------------------------------
# Tree aggregation (zo_o2nc Theorem 4.3 corrected, §5 item 3)


def rdp_tree_aggregation(order, z, steps, restarts=1):
    """RDP of tree aggregation with Gaussian node noise: restarts · α (⌊log2 steps⌋ + 1)/(2z²).

    zo_o2nc Thm 4.3 corrected (§5 item 3, erratum zo_o2nc.E3): a record in leaf q of an n-leaf tree (n = ``steps``)
    affects the nodes N_b, b ≤ n, on its Fenwick update chain q, q + lowbit(q), …; there are at most
    ⌊log2 n⌋ + 1 of them (attained at q = 1), each a Gaussian mechanism with RDP α/(2z²). By Lemma C.1 the
    per-record RDP adds over those nodes; with ``restarts`` trees (epochs), the record is in one leaf of each
    tree and the RDP adds over trees (TF-Privacy's ``compute_rdp_tree_restart``). ⌊log2 n⌋ + 1 = ⌈log2(n+1)⌉
    is dp_accounting's depth. z = σ/Δ per node (Δ: replace-one or zero-out sensitivity of one leaf).
    order: α > 1. z > 0. steps: n ≥ 1. restarts ≥ 1.
    """
    alpha = _order(order)
    sigma = _positive("z", z)
    steps = check_int("steps", steps, minimum=1)
    restarts = check_int("restarts", restarts, minimum=1)
    count = steps.bit_length()  # ⌊log2 n⌋ + 1
    return restarts * count * alpha / (2 * sigma**2)


def _vector(name: str, value, *, positive: bool):
    arr = check_array(name, value, ndim=1)
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must not be empty")
    entries = [mpmath.mpf(check_real(f"{name}[{i}]", v, positive=positive, nonnegative=not positive))
               for i, v in enumerate(arr)]
    return entries


def rdp_tree_exact(order, sensitivities, noise_stds):
    """Exact per-record RDP of the (adaptive) tree mechanism with per-step sensitivities and node noises:

        α/2 · max_q s_q² Σ_{b ≤ n : q ∈ N_b} 1/σ_b²,   N_b = [b − lowbit(b) + 1, b],

    zo_o2nc Thm 4.3, exact version ( via Lemma C.1: a record in block q changes M^(q) by at most s_q,
    and only the node releases b in OUT(q), the Fenwick update chain of q, depend on it; each is a Gaussian
    mechanism with RDP α s_q²/(2σ_b²)). Tight for non-adaptive Gaussian releases (zo_o2nc Thm 4.3, "Exact version").

    sensitivities: s_1..s_n ≥ 0 (s_q: sensitivity of block q's contribution M^(q)); noise_stds: σ_1..σ_n > 0
    (σ_b: std of node b's noise ξ_b). Same length n ≥ 1, float64 or mpmath entries. order: α > 1.
    """
    alpha = _order(order)
    s = _vector("sensitivities", sensitivities, positive=False)
    stds = _vector("noise_stds", noise_stds, positive=True)
    if len(s) != len(stds):
        raise ValueError(f"sensitivities and noise_stds must have the same length, got {len(s)} and {len(stds)}")
    n = len(s)
    worst = mpmath.mpf(0)
    for q in range(1, n + 1):
        inverse_variances = mpmath.fsum(1 / stds[b - 1] ** 2 for b in participation_chain(q, n))
        worst = max(worst, s[q - 1] ** 2 * inverse_variances)
    return alpha / 2 * worst


# ---------------------------------------------------------------------------------------------------
# Events


def _gaussian_inverse_square(event):
    """Σ count/z² if ``event`` is a Gaussian mechanism or a composition of Gaussians on the same data, else None.

    k Gaussian queries with noise multipliers z_i are one Gaussian query with z = (Σ z_i^{-2})^{-1/2}
    (dp_accounting ``_effective_gaussian_noise_multiplier``; Mironov–Talwar–Zhang §3): the sampled
    events below accept these.
    """
    if isinstance(event, GaussianEvent):
        return 1 / mpmath.mpf(event.noise_multiplier) ** 2
    if isinstance(event, SelfComposedEvent):
        inner = _gaussian_inverse_square(event.event)
        return None if inner is None else event.count * inner
    if isinstance(event, ComposedEvent):
        parts = [_gaussian_inverse_square(e) for e in event.events]
        return None if any(p is None for p in parts) else mpmath.fsum(parts)
    return None


def _sampled_noise(event, kind: str):
    inverse_square = _gaussian_inverse_square(event.event)
    if inverse_square is None:
        raise ValueError(
            f"the RDP accountant supports {kind} only of a GaussianEvent (or a composition of GaussianEvents on the "
            f"same batch), got {type(event.event).__name__}"
        )
    return inverse_square


def _rdp_of_event(event, orders: list, relation) -> list:
    if isinstance(event, GaussianEvent):
        return [rdp_gaussian(a, event.noise_multiplier) for a in orders]
    if isinstance(event, LaplaceEvent):
        return [rdp_laplace(a, event.noise_multiplier) for a in orders]
    if isinstance(event, ZCDPEvent):
        return [rdp_zcdp(a, event.rho) for a in orders]
    if isinstance(event, ExponentialMechanismEvent):
        return [rdp_exponential_mechanism(a, event.epsilon) for a in orders]
    if isinstance(event, PoissonSampledEvent):
        inverse_square = _sampled_noise(event, "Poisson sampling")
        q = event.sampling_probability
        if q == 0 or inverse_square == 0:
            return [mpmath.mpf(0) for _ in orders]
        z = 1 / mpmath.sqrt(inverse_square)
        # add/remove (and zero-out) need max(remove, add); MTZ 2019 prove remove ≥ add, so "remove" is that max
        return [rdp_poisson_gaussian(a, q, z, "remove") for a in orders]
    if isinstance(event, SampledWithoutReplacementEvent):
        inverse_square = _sampled_noise(event, "sampling without replacement")
        if event.sample_size == 0 or inverse_square == 0:
            return [mpmath.mpf(0) for _ in orders]
        z = 1 / mpmath.sqrt(inverse_square)
        gamma = mpmath.mpf(event.sample_size) / event.source_size
        moments: dict = {}  # Pearson–Vajda moments shared by all orders
        return [_rdp_wor(a, gamma, z, moments) for a in orders]
    if isinstance(event, TreeAggregationEvent):
        return [rdp_tree_aggregation(a, event.noise_multiplier, event.steps, event.restarts) for a in orders]
    if isinstance(event, SelfComposedEvent):
        if event.count == 0:
            return [mpmath.mpf(0) for _ in orders]
        return [event.count * r for r in _rdp_of_event(event.event, orders, relation)]
    if isinstance(event, ComposedEvent):
        total = [mpmath.mpf(0) for _ in orders]
        for part in event.events:
            total = [t + r for t, r in zip(total, _rdp_of_event(part, orders, relation))]
        return total
    if isinstance(event, EpsilonDeltaEvent):
        raise ValueError(
            "the RDP accountant cannot compose an EpsilonDeltaEvent: an (ε, δ) guarantee has no Rényi-DP curve; "
            "compose (ε, δ) black boxes with reference.accounting.composition (basic or advanced composition)"
        )
    raise ValueError(f"the RDP accountant does not support {type(event).__name__}")


def rdp_of_event(event, orders, relation) -> list:
    """RDP curve of ``event`` at ``orders`` under ``relation``: a list of mpf, one per order.

    The event is first checked against the relation (``events.check_relation``, ValueError when invalid).
    Composition adds RDP order by order (Mironov 2017 Prop 1; adaptive composition), self-composition
    multiplies by the count. Poisson-sampled and without-replacement events must wrap Gaussian mechanisms
    (compositions of Gaussians on the same batch count as one Gaussian with z = (Σ z_i^{-2})^{-1/2});
    Poisson sampling is accounted in the "remove" direction, which dominates (MTZ 2019; see
    ``rdp_poisson_gaussian``). ``EpsilonDeltaEvent`` is refused (ValueError). Computed at the caller's
    working precision.
    """
    relation = as_relation(relation)
    check_relation(event, relation)
    orders = _orders(orders)
    return _rdp_of_event(event, orders, relation)
