"""Calibration (issue 3, item 4): noise for a target (ε, δ), and the papers' closed-form noise formulas.

Generic calibration (``calibrate``): the privacy loss ε(z) of a mechanism is non-increasing in its
noise multiplier z = σ/Δ. We bracket the target by doubling/halving from z = 1 and then bisect in
mpmath. The answer is the *upper* end z_hi of the final bracket, at which ε(z_hi) ≤ target has been
evaluated, so the returned noise never overshoots the budget. A function that is seen to increase
along the way, a target that no z in the allowed range reaches, or a search that does not finish
raises ``AccountingError`` rather than returning an uncertified number.

``calibrate_gaussian_noise`` applies it to T-fold compositions of the Gaussian mechanism, plain or
Poisson-subsampled, with the RDP accountant (BBGHS conversion), or, for q = 1, with the exact
Gaussian-DP profile (Balle–Wang 2018; Dong–Roth–Su 2022): z = √T / μ*(ε, δ).

The papers' noise formulas, one named function each (paper, line and spec section in each docstring):

* dpzero (dpzero.md §2.6, §5.1–§5.3, erratum dpzero.E5): Lemma 2.2 σ, Algorithm 1/2 σ, the exact-GDP
  alternative, the Opacus 1.4 ``get_noise_multiplier`` bisection used by the experiments, and the
  first ε at which Lemma 2.2 stops being private.
* zo_o2nc (zo_o2nc.md §2.1, §5, errata zo_o2nc.E3, zo_o2nc.E11): Corollary 4.4 σ (paper 2 ln T count or the exact
  ⌊log2 T⌋ + 1 count), the RDP → DP conversion ρ²/2 + ρ√(2 ln 1/δ), its inverse, and the printed
  2ρ√ln(1/δ) with its validity condition.
* nsnc_improved (nsnc_improved.md §5.1–§5.4, erratum nsnc_improved.E3): Proposition 2.5 tree σ, the exact GDP μ of
  the tree, and the exact-GDP calibration.
* spider_sosp (spider_sosp.md §2.4, §5 items 1–8, §7 spider_sosp.E1/spider_sosp.E3/spider_sosp.E5): the hyper-parameters that fix the
  sensitivity, the four printed σ rules and the exact-GDP rule, and the GDP μ of any σ.
* bgm21 (bgm21.md §5.1–§5.5): the Gaussian calibration σ = 2Δ√ln(1/δ)/ε and the largest ε at which
  the analytic Gaussian certifies it.

Scalars are mpmath numbers computed at the caller's working precision
(``reference.precision.working_precision``); the functions take no precision argument. The only
float64 path is the optional ``arithmetic="float64"`` of the Opacus replica, which runs on
``reference.fast``.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Sequence

import mpmath
import numpy as np

from ..validation import check_int, check_probability, check_real
from .accountant import RdpAccountant
from .errors import AccountingError
from .events import GaussianEvent, NeighbouringRelation, PoissonSampledEvent, as_relation, check_relation
from .gaussian import composed_gaussian_mu, gaussian_delta, gaussian_mu
from .rdp import DEFAULT_ORDERS

__all__ = [
    "calibrate",
    "calibrate_gaussian_noise",
    "OPACUS_ORDERS",
    "OPACUS_MAX_SIGMA",
    "dpzero_lemma22_sigma",
    "dpzero_sigma",
    "dpzero_gdp_exact_sigma",
    "dpzero_lemma22_failure_epsilon",
    "dpzero_opacus_epsilon",
    "dpzero_opacus_noise_multiplier",
    "zo_o2nc_cor44_sigma",
    "zo_o2nc_cor44_sigma_as_printed",
    "zo_o2nc_rdp_to_dp",
    "zo_o2nc_dp_to_rho",
    "zo_o2nc_paper_dp_epsilon",
    "nsnc_tree_sigma",
    "nsnc_tree_sigma_as_printed",
    "nsnc_tree_mu",
    "nsnc_tree_gdp_sigma",
    "spider_sosp_parameters",
    "spider_sosp_sigma",
    "spider_sosp_mu",
    "SPIDER_SOSP_RULES",
    "bgm21_gaussian_sigma",
    "bgm21_gaussian_certified_epsilon",
]

#: Opacus 1.4 ``RDPAccountant.DEFAULT_ALPHAS``: [1 + x/10 for x in 1..99] + [12..63] (no 11, nothing
#: above 63; anchors.md §2). Kept as the Python floats Opacus uses, so the replica sees the same orders.
OPACUS_ORDERS: tuple[float, ...] = tuple(1 + x / 10.0 for x in range(1, 100)) + tuple(float(a) for a in range(12, 64))

#: Opacus 1.4 ``accountants.utils.MAX_SIGMA``: the doubling loop gives up beyond it.
OPACUS_MAX_SIGMA = 1e6

#: Accepted values of ``rule`` in ``spider_sosp_sigma``.
SPIDER_SOSP_RULES = ("gdp_exact", "thm2.2", "lemma3.7", "lemma3.8", "thm3.11")


# ---------------------------------------------------------------------------------------------------
# Input helpers (private)


def _mp_positive(name, value):
    return mpmath.mpf(check_real(name, value, positive=True))


def _mp_delta(name, value):
    return mpmath.mpf(check_probability(name, value))


# ---------------------------------------------------------------------------------------------------
# Generic calibration


def _rounding_slack(raw, value):
    """How far apart two evaluations of a monotone function may be from rounding alone.

    mpmath results carry the working precision (a few hundred ulps of slack); float64 results come
    from log-space formulas that are good to ~1e-13 relative, so they get 1e-12.
    """
    if isinstance(raw, mpmath.mpf):
        rel = mpmath.mpf(2) ** (8 - mpmath.mp.prec)
    else:
        rel = mpmath.mpf("1e-12")
    return rel * max(abs(value), 1) if mpmath.isfinite(value) else mpmath.mpf(0)


def _evaluate(epsilon_of_noise, z):
    """ε(z) as an mpf, with the warnings it raised kept for later (only the final z's are re-emitted)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raw = epsilon_of_noise(z)
    if isinstance(raw, bool) or not isinstance(raw, (numbers.Real, mpmath.mpf)):
        raise TypeError(f"epsilon_of_noise must return a real number, got {type(raw).__name__} {raw!r}")
    value = mpmath.mpf(raw)
    if mpmath.isnan(value):
        raise AccountingError(f"epsilon_of_noise returned nan at noise multiplier z = {mpmath.nstr(z, 17)}")
    if value < 0:
        raise AccountingError(
            f"epsilon_of_noise returned a negative epsilon {mpmath.nstr(value, 17)} at z = {mpmath.nstr(z, 17)}"
        )
    return value, _rounding_slack(raw, value), list(caught)


def calibrate(
    epsilon_of_noise: Callable,
    target_epsilon,
    *,
    lower=None,
    upper=None,
    rel_tol=1e-10,
    max_iterations: int = 400,
    start=None,
    initial_step=2,
):
    """The smallest noise multiplier (to ``rel_tol``) whose ε does not exceed ``target_epsilon``.

    epsilon_of_noise: z ↦ ε(z), non-increasing in z (called with ``mpmath.mpf`` arguments; a float64
        function can convert with ``float(z)``). It may return +inf (not private at that z).
    target_epsilon: the budget ε > 0.
    lower, upper: the allowed range of z (default 2^-64 and 2^64).
    rel_tol: bisection stops when (z_hi − z_lo) ≤ rel_tol · z_hi.
    max_iterations: cap on the number of ε evaluations (bracketing plus bisection).
    start, initial_step: where the bracket search starts (default 1, clipped to the range) and its
        first step factor (default 2: doubling/halving). A step that does not bracket the target
        grows (1 + 16(step − 1), at most 2), so a good ``start`` with a small step needs only a few
        evaluations and a poor one still falls back to doubling.

    Returns z_hi, the upper end of the final bracket [z_lo, z_hi]: ε(z_lo) > target ≥ ε(z_hi), and
    ε(z_hi) was evaluated, so the result never overshoots. Warnings raised while evaluating ε(z_hi)
    (e.g. ``OrderGridWarning``) are re-emitted; those of other trial points are not.

    Raises ``AccountingError`` when the target is not bracketed inside [lower, upper] (unreachable
    even at ``upper``, or already met at ``lower``), when ε is seen to increase in z beyond rounding,
    when ε is nan or negative, or after ``max_iterations`` evaluations.
    """
    if not callable(epsilon_of_noise):
        raise TypeError(f"epsilon_of_noise must be callable, got {type(epsilon_of_noise).__name__}")
    target = _mp_positive("target_epsilon", target_epsilon)
    lo_bound = mpmath.mpf(2) ** -64 if lower is None else _mp_positive("lower", lower)
    hi_bound = mpmath.mpf(2) ** 64 if upper is None else _mp_positive("upper", upper)
    if not lo_bound < hi_bound:
        raise ValueError(f"lower must be < upper, got lower={lo_bound}, upper={hi_bound}")
    tol = mpmath.mpf(check_real("rel_tol", rel_tol, positive=True, upper=0.5))
    max_iterations = check_int("max_iterations", max_iterations, minimum=2)
    step = mpmath.mpf(check_real("initial_step", initial_step, positive=True, upper=2))
    if not step > 1:
        raise ValueError(f"initial_step must be > 1, got {step}")
    z = mpmath.mpf(1) if start is None else _mp_positive("start", start)
    z = min(max(z, lo_bound), hi_bound)

    evaluations = 0

    def evaluate(at):
        nonlocal evaluations
        if evaluations >= max_iterations:
            raise AccountingError(
                f"calibration did not converge within max_iterations={max_iterations} evaluations "
                f"(bracket [{mpmath.nstr(lo, 17)}, {mpmath.nstr(hi, 17)}])"
            )
        evaluations += 1
        return _evaluate(epsilon_of_noise, at)

    def grow(s):
        return min(1 + 16 * (s - 1), mpmath.mpf(2))

    lo = hi = None
    value, slack, caught = evaluate(z)
    if value <= target:
        # z meets the budget: walk down until it does not.
        hi, e_hi, slack_hi, caught_hi = z, value, slack, caught
        while True:
            if hi == lo_bound:
                raise AccountingError(
                    f"no bracket: epsilon = {mpmath.nstr(e_hi, 15)} <= target {mpmath.nstr(target, 15)} already at the "
                    f"smallest allowed noise multiplier lower = {mpmath.nstr(lo_bound, 15)}"
                )
            z = max(hi / step, lo_bound)
            value, slack, caught = evaluate(z)
            if value < e_hi - max(slack, slack_hi):
                raise AccountingError(
                    f"epsilon_of_noise is not non-increasing: epsilon({mpmath.nstr(z, 17)}) = {mpmath.nstr(value, 17)} < "
                    f"epsilon({mpmath.nstr(hi, 17)}) = {mpmath.nstr(e_hi, 17)}"
                )
            if value > target:
                lo, e_lo, slack_lo = z, value, slack
                break
            hi, e_hi, slack_hi, caught_hi = z, value, slack, caught
            step = grow(step)
    else:
        # z is too small: walk up until the budget is met.
        lo, e_lo, slack_lo = z, value, slack
        while True:
            if lo == hi_bound:
                raise AccountingError(
                    f"target epsilon {mpmath.nstr(target, 15)} is unreachable: epsilon = {mpmath.nstr(e_lo, 15)} even at "
                    f"the largest allowed noise multiplier upper = {mpmath.nstr(hi_bound, 15)}"
                )
            z = min(lo * step, hi_bound)
            value, slack, caught = evaluate(z)
            if value > e_lo + max(slack, slack_lo):
                raise AccountingError(
                    f"epsilon_of_noise is not non-increasing: epsilon({mpmath.nstr(z, 17)}) = {mpmath.nstr(value, 17)} > "
                    f"epsilon({mpmath.nstr(lo, 17)}) = {mpmath.nstr(e_lo, 17)}"
                )
            if value <= target:
                hi, e_hi, slack_hi, caught_hi = z, value, slack, caught
                break
            lo, e_lo, slack_lo = z, value, slack
            step = grow(step)

    # Bisection on [lo, hi] with ε(lo) > target >= ε(hi).
    while hi - lo > tol * hi:
        mid = (lo + hi) / 2
        if mid == lo or mid == hi:  # the working precision cannot split the bracket further
            break
        value, slack, caught = evaluate(mid)
        if value > e_lo + max(slack, slack_lo) or value < e_hi - max(slack, slack_hi):
            raise AccountingError(
                f"epsilon_of_noise is not non-increasing: epsilon({mpmath.nstr(mid, 17)}) = {mpmath.nstr(value, 17)} "
                f"lies outside [epsilon(hi), epsilon(lo)] = [{mpmath.nstr(e_hi, 17)}, {mpmath.nstr(e_lo, 17)}]"
            )
        if value <= target:
            hi, e_hi, slack_hi, caught_hi = mid, value, slack, caught
        else:
            lo, e_lo, slack_lo = mid, value, slack
    for w in caught_hi:
        warnings.warn(w.message, w.category, stacklevel=2)
    return hi


def _float64_start(target, delta, steps, q, orders):
    """A starting point for the mpmath search from the float64 twin (``reference.fast``), or None.

    Only a speed-up: the mpmath calibration still brackets and verifies everything itself, so a poor
    or missing start costs evaluations, never correctness.
    """
    try:
        from ..fast import conversions as fast_conversions
        from ..fast import rdp as fast_rdp
    except ImportError:  # pragma: no cover - the fast backend is part of the package
        return None
    alphas = np.array([float(a) for a in orders])

    def epsilon_float(z):
        z = float(z)
        rdp = fast_rdp.rdp_gaussian(alphas, z) if q == 1 else fast_rdp.rdp_poisson_gaussian(alphas, float(q), z)
        return fast_conversions.epsilon_from_rdp(alphas, steps * np.asarray(rdp, dtype=float), float(delta))[0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return calibrate(epsilon_float, float(target), rel_tol=1e-12)
        except (ArithmeticError, ValueError):  # AccountingError is an ArithmeticError
            return None


def calibrate_gaussian_noise(
    target_epsilon,
    delta,
    *,
    steps=1,
    sampling_probability=1,
    relation=NeighbouringRelation.ADD_OR_REMOVE_ONE,
    accountant="rdp",
    orders=DEFAULT_ORDERS,
    float64_start=True,
):
    """Noise multiplier z = σ/Δ for ``steps`` compositions of the (Poisson-subsampled) Gaussian mechanism.

    target_epsilon, delta: the budget (ε, δ), ε > 0, δ ∈ (0, 1).
    steps: T ≥ 1 compositions. sampling_probability: q ∈ (0, 1]; q < 1 is Poisson subsampling.
    relation: the neighbouring relation (``NeighbouringRelation`` or its value string); Poisson
        subsampling is refused under replace-one by the event checks.
    accountant:
      * "rdp": RDP of the composition (``RdpAccountant``: α/(2z²) per step, or the
        Mironov–Talwar–Zhang subsampled RDP) over ``orders``, converted with the BBGHS conversion
        (Balle et al. 2020 Thm 21), calibrated by ``calibrate`` in mpmath (never overshoots). With
        ``float64_start`` the search starts from the float64 twin's answer with a 1e-9 step, which
        saves most of the (slow) mpmath evaluations; the result is bracketed and verified in mpmath
        either way.
      * "gdp_exact" (q = 1 only): T Gaussian mechanisms compose exactly to μ = √T/z GDP, so
        z = √T/μ*(ε, δ) with μ* = ``gaussian_mu`` (δ(ε; μ*) ≤ δ). The rounding of √T/μ* is checked:
        z is nudged up until ``gaussian_delta(ε, √T/z) ≤ δ`` holds as computed.
    orders: RDP orders α > 1 (accountant "rdp" only).

    Returns an ``mpmath.mpf``.
    """
    target = _mp_positive("target_epsilon", target_epsilon)
    delta = _mp_delta("delta", delta)
    steps = check_int("steps", steps, minimum=1)
    q = check_probability("sampling_probability", sampling_probability, open_right=False)
    relation = as_relation(relation)
    if accountant == "gdp_exact":
        if q != 1:
            raise ValueError(
                f"accountant='gdp_exact' is exact only for sampling_probability = 1 (full batch), got {q}; use 'rdp'"
            )
        mu = gaussian_mu(target, delta)
        z = mpmath.sqrt(steps) / mu
        nudge = 1 + mpmath.mpf(2) ** (16 - mpmath.mp.prec)
        for _ in range(64):
            if gaussian_delta(target, composed_gaussian_mu([z], [steps])) <= delta:
                return z
            z = z * nudge
        raise AccountingError(f"could not certify gaussian_delta <= delta at z = {z} (rounding did not settle)")
    if accountant != "rdp":
        raise ValueError(f"accountant must be 'rdp' or 'gdp_exact', got {accountant!r}")

    def event_for(z):
        return GaussianEvent(z) if q == 1 else PoissonSampledEvent(q, GaussianEvent(z))

    check_relation(event_for(mpmath.mpf(1)), relation)  # refuse an invalid event/relation before searching

    def epsilon_of_noise(z):
        ledger = RdpAccountant(relation=relation, orders=orders)
        ledger.compose(event_for(z), steps)
        return ledger.get_epsilon(delta)

    start = _float64_start(target, delta, steps, q, orders) if float64_start else None
    if start is None:
        return calibrate(epsilon_of_noise, target)
    return calibrate(epsilon_of_noise, target, start=start, initial_step=1 + mpmath.mpf("1e-9"))


# ---------------------------------------------------------------------------------------------------
# Helper: the first ε at which a calibrated μ(ε) stops certifying (ε, δ)


def _first_failing_epsilon(mu_of_epsilon, delta, *, smallest, largest, per_decade=40, rel_tol=1e-9):
    """Smallest ε on a log grid [smallest, largest] with gaussian_delta(ε, μ(ε)) > δ, refined by bisection.

    The grid has ``per_decade`` points per decade; the bisection keeps the last certified point as
    the lower end, so the returned value is an ε that certifies, within rel_tol of the first failure.
    """
    count = int(math.ceil(per_decade * math.log10(largest / smallest)))
    ratio = (mpmath.mpf(largest) / smallest) ** (mpmath.mpf(1) / count)
    previous = None
    for j in range(count + 1):
        eps = mpmath.mpf(smallest) * ratio**j
        if gaussian_delta(eps, mu_of_epsilon(eps)) > delta:
            if previous is None:
                raise AccountingError(f"the calibration already fails at the smallest scanned epsilon {smallest}")
            lo, hi = previous, eps
            while hi - lo > rel_tol * hi:
                mid = (lo + hi) / 2
                if gaussian_delta(mid, mu_of_epsilon(mid)) > delta:
                    hi = mid
                else:
                    lo = mid
            return lo
        previous = eps
    raise AccountingError(f"no failure found for epsilon up to {largest}: the calibration certifies the whole scanned range")


# ---------------------------------------------------------------------------------------------------
# dpzero (dpzero.md §2.6, §5.1–§5.3, §7 dpzero.E5)


def _log_e_plus(epsilon, delta):
    """Lg = log(e + ε/δ), the logarithm in every DPZero calibration (dpzero.md §2.6)."""
    return mpmath.log(mpmath.e + epsilon / delta)


def dpzero_lemma22_sigma(sensitivity, steps, epsilon, delta, *, strict=False):
    """dpzero Lemma 2.2 (Kairouz–Oh–Viswanath): σ = 2Δ√(2T log(e + ε/δ))/ε (dpzero.md §4, §5.1).

    sensitivity: Δ, the ℓ2-sensitivity of each answer. steps: T adaptive compositions.
    epsilon, delta: the target (ε, δ). The result is a standard deviation (erratum dpzero.E1: the paper
    writes "variance").

    Erratum dpzero.E5: the lemma is stated "for any ε > 0" but is false for large ε (exact GDP: first
    failure at ε ≈ 169 for δ = 1e-5, see ``dpzero_lemma22_failure_epsilon``); it was verified for
    ε ≤ 80. Beyond 80 this warns, or raises ValueError with ``strict=True``.
    """
    delta_s = _mp_positive("sensitivity", sensitivity)
    steps = check_int("steps", steps, minimum=1)
    eps = _mp_positive("epsilon", epsilon)
    delta = _mp_delta("delta", delta)
    if eps > 80:
        message = (
            f"dpzero Lemma 2.2 is not verified for epsilon > 80 (erratum dpzero.E5: it is not private for large epsilon, "
            f"see dpzero_lemma22_failure_epsilon(delta)); got epsilon = {mpmath.nstr(eps, 15)}"
        )
        if strict:
            raise ValueError(message)
        warnings.warn(message, UserWarning, stacklevel=2)
    return 2 * delta_s * mpmath.sqrt(2 * steps * _log_e_plus(eps, delta)) / eps


def dpzero_sigma(clip_threshold, n, steps, epsilon, delta, *, strict=False):
    """dpzero Algorithms 1 and 2, line 5: σ = 4C√(2T log(e + ε/δ))/(nε) (dpzero.md §2.1, §2.2, §5.1).

    clip_threshold: C. n: dataset size (full batch). The clipped mean has replace-one sensitivity
    Δ = 2C/n, so this is ``dpzero_lemma22_sigma(2C/n, T, ε, δ)``. Reference (§5.1): C = 1,
    n = 1000, T = 448, ε = 2, δ = 1e-5 gives σ = 0.2091569102.
    """
    clip = _mp_positive("clip_threshold", clip_threshold)
    n = check_int("n", n, minimum=1)
    return dpzero_lemma22_sigma(2 * clip / n, steps, epsilon, delta, strict=strict)


def dpzero_gdp_exact_sigma(sensitivity, steps, epsilon, delta):
    """dpzero.md §5.2 (not the paper's method): the tight full-batch σ = √T·Δ/μ*(ε, δ).

    T adaptive Gaussian mechanisms with sensitivity Δ and noise σ are exactly μ-GDP with
    μ = √T·Δ/σ; μ* = ``gaussian_mu(ε, δ)`` (δ(ε; μ*) ≤ δ). Reference (§4): at ε = 2, δ = 1e-5 this
    noise is 2.48× smaller than Lemma 2.2's (μ 0.5016 vs 0.2024).
    """
    delta_s = _mp_positive("sensitivity", sensitivity)
    steps = check_int("steps", steps, minimum=1)
    eps = _mp_positive("epsilon", epsilon)
    delta = _mp_delta("delta", delta)
    return mpmath.sqrt(steps) * delta_s / gaussian_mu(eps, delta)


def dpzero_lemma22_failure_epsilon(delta):
    """The first ε at which Lemma 2.2's σ is no longer (ε, δ)-DP (dpzero.md §4 Lemma 2.2, erratum dpzero.E5).

    Lemma 2.2's σ gives the composition μ = ε/(2√(2 log(e + ε/δ))), independent of T and Δ; it is
    private iff δ_GDP(ε; μ) ≤ δ. Scans ε ∈ [0.01, 10^4] (40 points per decade) and bisects the
    first failure; returns the largest certified ε found below it. Spec values: ≈ 83 (δ = 0.5),
    91 (0.1), 130 (1e-3), 169 (1e-5), 189 (1e-6), 267 (1e-10).
    """
    delta = _mp_delta("delta", delta)
    return _first_failing_epsilon(
        lambda eps: eps / (2 * mpmath.sqrt(2 * _log_e_plus(eps, delta))), delta, smallest=0.01, largest=1e4
    )


def _check_orders(orders):
    if isinstance(orders, (str, bytes)) or not isinstance(orders, Sequence) or len(orders) == 0:
        raise TypeError("orders must be a non-empty sequence of real numbers > 1")
    return [check_real(f"orders[{i}]", a) for i, a in enumerate(orders)]


def dpzero_opacus_epsilon(noise_multiplier, sampling_probability, steps, delta, *, orders=OPACUS_ORDERS, arithmetic="float64"):
    """ε that Opacus 1.4's ``RDPAccountant`` reports for T Poisson-subsampled Gaussian steps (dpzero.md §5.3).

    RDP per order: the remove-direction Mironov–Talwar–Zhang RDP (α/(2z²) for q = 1), times T;
    conversion: BBGHS (Balle et al. 2020 Thm 21), minimised over ``orders`` (default Opacus's
    DEFAULT_ALPHAS). arithmetic "float64" uses ``reference.fast`` and returns a float; "mpmath"
    uses ``reference.accounting`` at the working precision and returns an mpf.
    """
    z = check_real("noise_multiplier", noise_multiplier, positive=True)
    q = check_probability("sampling_probability", sampling_probability, open_right=False)
    steps = check_int("steps", steps, minimum=1)
    delta = check_probability("delta", delta)
    orders = _check_orders(orders)
    if arithmetic == "float64":
        from ..fast import conversions as fast_conversions
        from ..fast import rdp as fast_rdp

        alphas = np.array([float(a) for a in orders])
        if q == 1:
            per_step = fast_rdp.rdp_gaussian(alphas, float(z))
        else:
            per_step = fast_rdp.rdp_poisson_gaussian(alphas, float(q), float(z))
        eps, _ = fast_conversions.epsilon_from_rdp(alphas, np.asarray(per_step) * steps, float(delta))
        return float(eps)
    if arithmetic == "mpmath":
        from . import conversions, rdp

        alphas = [mpmath.mpf(a) for a in orders]
        z = mpmath.mpf(z)
        if q == 1:
            per_step = [rdp.rdp_gaussian(a, z) for a in alphas]
        else:
            per_step = [rdp.rdp_poisson_gaussian(a, mpmath.mpf(q), z, direction="remove") for a in alphas]
        eps, _ = conversions.epsilon_from_rdp(alphas, [steps * r for r in per_step], mpmath.mpf(delta), method="bbghs")
        return eps
    raise ValueError(f"arithmetic must be 'float64' or 'mpmath', got {arithmetic!r}")


def dpzero_opacus_noise_multiplier(
    target_epsilon,
    delta,
    sampling_probability,
    steps,
    *,
    orders=OPACUS_ORDERS,
    epsilon_tolerance=0.01,
    arithmetic="float64",
):
    """Replica of Opacus 1.4 ``accountants.utils.get_noise_multiplier`` (accountant "rdp"), dpzero.md §5.3.

    The DPZero experiments call it with sample_rate q = B/n = 64/(512·#classes), steps T = 10 000,
    δ = 1e-5 ([code] roberta/src/trainer.py). The bisection, step by step as in Opacus (and
    dpzero.md Appendix Z):

        eps_high = inf; sigma_low, sigma_high = 0, 10
        while eps_high > target: sigma_high *= 2; eps_high = eps(sigma_high)   # first try: 20
            (give up beyond MAX_SIGMA = 1e6)
        while target - eps_high > tolerance:
            sigma = (sigma_low + sigma_high)/2; eps = eps(sigma)
            if eps < target: sigma_high, eps_high = sigma, eps
            else: sigma_low = sigma
        return sigma_high

    so the returned z achieves ε ∈ (target − tolerance, target]. eps(·) is
    ``dpzero_opacus_epsilon`` (our float64 or mpmath RDP). Reference (§5.3): SST-2, q = 0.0625,
    ε = 2 gives z = 13.515625 (achieved 1.9922). Every trial σ is a dyadic rational, exact in both
    arithmetics.
    """
    target = check_real("target_epsilon", target_epsilon, positive=True)
    tolerance = check_real("epsilon_tolerance", epsilon_tolerance, positive=True)
    check_probability("sampling_probability", sampling_probability, open_right=False)
    check_int("steps", steps, minimum=1)
    check_probability("delta", delta)
    if arithmetic not in ("float64", "mpmath"):
        raise ValueError(f"arithmetic must be 'float64' or 'mpmath', got {arithmetic!r}")
    number = float if arithmetic == "float64" else mpmath.mpf
    target = number(target)

    def eps_at(sigma):
        return dpzero_opacus_epsilon(sigma, sampling_probability, steps, delta, orders=orders, arithmetic=arithmetic)

    eps_high = number("inf")
    sigma_low, sigma_high = number(0), number(10)
    while eps_high > target:
        sigma_high = 2 * sigma_high
        eps_high = eps_at(sigma_high)
        if sigma_high > OPACUS_MAX_SIGMA:
            raise AccountingError(
                f"the privacy budget is too low (Opacus MAX_SIGMA = {OPACUS_MAX_SIGMA:g} reached): target epsilon {target}"
            )
    while target - eps_high > tolerance:
        sigma = (sigma_low + sigma_high) / 2
        eps = eps_at(sigma)
        if eps < target:
            sigma_high, eps_high = sigma, eps
        else:
            sigma_low = sigma
    return sigma_high


# ---------------------------------------------------------------------------------------------------
# zo_o2nc (zo_o2nc.md §2.1, §5, §7 zo_o2nc.E3, zo_o2nc.E11)


def zo_o2nc_cor44_sigma(d, lipschitz, T, B1, B2, rho, count_rule="exact"):
    """zo_o2nc Corollary 4.4: tree noise σ for Alg 3 + Alg 4 to be (α, αρ²/2)-RDP (zo_o2nc.md §2.1, §5).

    d: dimension. lipschitz: L (f(·, z) L-Lipschitz for every z). T: rounds per epoch (tree leaves).
    B1: GRAD batch size (t = 1). B2: DIFF batch size (t ≥ 2). rho: ρ (the target (α, αρ²/2)-RDP,
    i.e. ρ²/2-zCDP). With D = δ/T the leaf sensitivities are s_1 = 2dL/B1 and s_t = 4dL/(B2·T).

    count_rule:
      * "paper_2lnT" (as printed): σ = √(2 ln T)·s_2/ρ = 4√(2 ln T)·dL/(B2·T·ρ). Requires T ≥ 2
        (σ = 0 at T = 1). Not private for T ∈ {2, 4} when s_1 = s_2 (erratum zo_o2nc.E3).
      * "exact" (default, always private): σ² = max_q s_q²·c_q/ρ², with the exact participation
        counts c_1 = ⌊log2 T⌋ + 1 and max_{q≥2} c_q = ⌊log2 T⌋ (zo_o2nc.md §5 item 3), so
        σ² = max(s_1²(⌊log2 T⌋ + 1), s_2²⌊log2 T⌋)/ρ².
    Both rules require the corollary's hypothesis B1 ≥ T·B2/2 (it makes s_1 ≤ s_2).
    Golden values (§2.1, M = 1e5, d = 10, L = 1, δ = 0.1, ρ = 1, F* = 1, B1 = T + 1, B2 = 1):
    paper rule, T = 536: σ = 0.264565; T = 938: σ = 0.157768.
    """
    d = check_int("d", d, minimum=1)
    lipschitz = _mp_positive("lipschitz", lipschitz)
    T = check_int("T", T, minimum=1)
    B1 = check_int("B1", B1, minimum=1)
    B2 = check_int("B2", B2, minimum=1)
    rho = _mp_positive("rho", rho)
    if 2 * B1 < T * B2:
        raise ValueError(f"B1 must be >= T*B2/2 (Corollary 4.4's hypothesis), got B1={B1}, T={T}, B2={B2}")
    s_first = 2 * d * lipschitz / B1
    s_later = 4 * d * lipschitz / (B2 * T)
    if count_rule == "paper_2lnT":
        if T < 2:
            raise ValueError("T must be >= 2 under count_rule='paper_2lnT' (2 ln T = 0 at T = 1 gives sigma = 0)")
        return mpmath.sqrt(2 * mpmath.log(T)) * s_later / rho
    if count_rule == "exact":
        depth = T.bit_length()  # ⌊log2 T⌋ + 1 = c_1, the count of leaf 1
        worst = s_first**2 * depth
        if T >= 2:
            worst = max(worst, s_later**2 * (depth - 1))
        return mpmath.sqrt(worst) / rho
    raise ValueError(f"count_rule must be 'exact' or 'paper_2lnT', got {count_rule!r}")


def zo_o2nc_cor44_sigma_as_printed(d, lipschitz, T, B1, B2, rho):
    """zo_o2nc Corollary 4.4 as printed: σ = 4√(2 ln T)·dL/(B2·T·ρ) (``count_rule="paper_2lnT"``, erratum zo_o2nc.E3)."""
    return zo_o2nc_cor44_sigma(d, lipschitz, T, B1, B2, rho, count_rule="paper_2lnT")


def zo_o2nc_rdp_to_dp(rho, delta):
    """zo_o2nc.md §5 item 6: (α, αρ²/2)-RDP for all α ⇒ (ε, δ)-DP with ε = ρ²/2 + ρ√(2 ln(1/δ)).

    Mironov 2017 Prop. 3 minimised over α: the optimum is α* = 1 + √(2 ln(1/δ))/ρ.
    """
    rho = _mp_positive("rho", rho)
    delta = _mp_delta("delta", delta)
    return rho**2 / 2 + rho * mpmath.sqrt(2 * mpmath.log(1 / delta))


def zo_o2nc_dp_to_rho(epsilon, delta):
    """Inverse of ``zo_o2nc_rdp_to_dp`` (zo_o2nc.md §5 item 6): ρ = −√(2ℓ) + √(2ℓ + 2ε), ℓ = ln(1/δ).

    Written as 2ε/(√(2ℓ) + √(2ℓ + 2ε)) to avoid cancellation when ε ≪ ℓ.
    """
    eps = _mp_positive("epsilon", epsilon)
    delta = _mp_delta("delta", delta)
    two_ell = 2 * mpmath.log(1 / delta)
    return 2 * eps / (mpmath.sqrt(two_ell) + mpmath.sqrt(two_ell + 2 * eps))


def zo_o2nc_paper_dp_epsilon(rho, delta, *, condition="paper"):
    """The paper's simplified conversion: (2ρ√ln(1/δ), δ)-DP (zo_o2nc.md §5 item 6, erratum zo_o2nc.E11).

    It is an upper bound on the exact ε = ρ²/2 + ρ√(2 ln(1/δ)) only when ρ is small enough:
      * condition="paper": the (sign-restored) printed condition δ ≤ exp(−ρ²), i.e. ρ ≤ √ln(1/δ);
      * condition="exact": the sharp condition ρ ≤ 2(2 − √2)√ln(1/δ) (≈ 1.17√ln(1/δ)).
    Outside the chosen condition this raises ValueError instead of returning an ε that is too small.
    """
    rho = _mp_positive("rho", rho)
    delta = _mp_delta("delta", delta)
    ell = mpmath.log(1 / delta)
    if condition == "paper":
        if not delta <= mpmath.exp(-(rho**2)):
            raise ValueError(
                f"delta must be <= exp(-rho^2) = {mpmath.nstr(mpmath.exp(-(rho**2)), 6)} for the paper's 2*rho*sqrt(ln(1/delta)) "
                f"(erratum zo_o2nc.E11), got delta={mpmath.nstr(delta, 6)}, rho={mpmath.nstr(rho, 6)}"
            )
    elif condition == "exact":
        if not rho <= 2 * (2 - mpmath.sqrt(2)) * mpmath.sqrt(ell):
            raise ValueError(
                f"rho must be <= 2(2 - sqrt 2) sqrt(ln(1/delta)) = {mpmath.nstr(2 * (2 - mpmath.sqrt(2)) * mpmath.sqrt(ell), 6)} "
                f"for 2*rho*sqrt(ln(1/delta)) to bound the exact epsilon, got rho={mpmath.nstr(rho, 6)}"
            )
    else:
        raise ValueError(f"condition must be 'paper' or 'exact', got {condition!r}")
    return 2 * rho * mpmath.sqrt(ell)


# ---------------------------------------------------------------------------------------------------
# nsnc_improved (nsnc_improved.md §5.1–§5.4, §8 nsnc_improved.E3)


def nsnc_tree_sigma(sensitivity, tree_size, epsilon, delta):
    """nsnc_improved Proposition 2.5, corrected: σ = 4s√(log(max(Σ, 2))·log(1/δ))/ε (nsnc_improved.md §5.1, nsnc_improved.E3).

    sensitivity: s, the sensitivity of each tree increment (for every auxiliary input). tree_size:
    Σ, the number of leaves of one tree (period length). The printed σ = 4s√(log Σ·log(1/δ))/ε is 0
    at Σ = 1 (``nsnc_tree_sigma_as_printed`` refuses it); log(max(Σ, 2)) is the spec's repair. The
    result is (ε, δ)-DP: exactly, it gives μ = s√bitlen(Σ)/σ and δ_GDP(ε; μ) ≤ 1.5e-3·δ/2 on the
    spec's grid (§5.2).
    """
    s = _mp_positive("sensitivity", sensitivity)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    eps = _mp_positive("epsilon", epsilon)
    delta = _mp_delta("delta", delta)
    return 4 * s * mpmath.sqrt(mpmath.log(max(tree_size, 2)) * mpmath.log(1 / delta)) / eps


def nsnc_tree_sigma_as_printed(sensitivity, tree_size, epsilon, delta):
    """nsnc_improved Proposition 2.5 as printed: σ = 4s√(log Σ·log(1/δ))/ε; refuses Σ = 1 (σ = 0, nsnc_improved.E3)."""
    tree_size = check_int("tree_size", tree_size, minimum=1)
    if tree_size == 1:
        raise ValueError("tree_size must be >= 2 for the printed Proposition 2.5 (log 1 = 0 gives sigma = 0, erratum nsnc_improved.E3)")
    return nsnc_tree_sigma(sensitivity, tree_size, epsilon, delta)


def nsnc_tree_mu(sensitivity, tree_size, sigma):
    """Exact GDP of one tree (nsnc_improved.md §5.2): μ = s·√bitlen(Σ)/σ.

    A record lives in one leaf; the leaf lies in at most bitlen(Σ) = ⌊log2 Σ⌋ + 1 released nodes,
    each a Gaussian mechanism with sensitivity ≤ s and noise σ (adaptive GDP composition is tight).
    """
    s = _mp_positive("sensitivity", sensitivity)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    sigma = _mp_positive("sigma", sigma)
    return s * mpmath.sqrt(tree_size.bit_length()) / sigma


def nsnc_tree_gdp_sigma(sensitivity, tree_size, epsilon, delta):
    """Exact-GDP tree calibration (nsnc_improved.md §2.7.5 step 8, accountant "gdp"): σ = s√bitlen(Σ)/μ*(ε, δ)."""
    s = _mp_positive("sensitivity", sensitivity)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    eps = _mp_positive("epsilon", epsilon)
    delta = _mp_delta("delta", delta)
    return s * mpmath.sqrt(tree_size.bit_length()) / gaussian_mu(eps, delta)


# ---------------------------------------------------------------------------------------------------
# spider_sosp (spider_sosp.md §2.4, §5, §7 spider_sosp.E1, spider_sosp.E3, spider_sosp.E5)


def spider_sosp_parameters(*, lipschitz, smoothness, loss_gap, d, n, epsilon, steps=None, adjacency="replace_one", c_alpha=1):
    """The hyper-parameters of Liu–Talwar Algorithm 2 that fix its sensitivity (spider_sosp.md §2.4, §5 item 1).

    lipschitz: G. smoothness: M. loss_gap: B (initial loss gap, not a batch size). d: dimension.
    n: samples. epsilon: ε. steps: horizon T = Σ (default n, R-28). adjacency: "replace_one"
    (c_adj = 2, default, spider_sosp.E1) or "zero_out" (c_adj = 1, the paper's constants). c_alpha: spider_sosp.E29.

    Returns a dict of mpf/int values:
      alpha   = c_α[((BGM)^{1/3} + √(BM))(√d/(nε))^{1/2} + (B^{2/9}M^{2/9}G^{5/9} + B^{4/9}M^{4/9}G^{1/9})/n^{1/3} + √(MB/n)]
      kappa   = max(α√d/ε, (BGM)^{1/3});   b = ⌈G√d/(εα) + G²/α²⌉ (Lemma 3.8, R-09)
      coef_bt = max(√d/(αε), κ/α²);   L = ⌈log2 T⌉ + 1 (levels of the padded tree, R-06)
      sbar    = c_adj·max(G/b, 1/coef_bt)  (a-priori leaf sensitivity, R-04)
    """
    G = _mp_positive("lipschitz", lipschitz)
    M = _mp_positive("smoothness", smoothness)
    B = _mp_positive("loss_gap", loss_gap)
    d = check_int("d", d, minimum=1)
    n = check_int("n", n, minimum=1)
    eps = _mp_positive("epsilon", epsilon)
    T = n if steps is None else check_int("steps", steps, minimum=1)
    c_alpha = _mp_positive("c_alpha", c_alpha)
    c_adj = _adjacency_factor(adjacency)
    third, ninth = mpmath.mpf(1) / 3, mpmath.mpf(1) / 9
    alpha = c_alpha * (
        ((B * G * M) ** third + mpmath.sqrt(B * M)) * mpmath.sqrt(mpmath.sqrt(d) / (n * eps))
        + ((B * M) ** (2 * ninth) * G ** (5 * ninth) + (B * M) ** (4 * ninth) * G**ninth) / mpmath.mpf(n) ** third
        + mpmath.sqrt(M * B / n)
    )
    kappa = max(alpha * mpmath.sqrt(d) / eps, (B * G * M) ** third)
    b = int(mpmath.ceil(G * mpmath.sqrt(d) / (eps * alpha) + G**2 / alpha**2))
    coef_bt = max(mpmath.sqrt(d) / (alpha * eps), kappa / alpha**2)
    levels = (T - 1).bit_length() + 1  # ⌈log2 T⌉ + 1, exact in integers
    sbar = c_adj * max(G / b, 1 / coef_bt)
    return {"alpha": alpha, "kappa": kappa, "b": b, "coef_bt": coef_bt, "L": levels, "T": T, "sbar": sbar, "c_adj": c_adj}


def _adjacency_factor(adjacency):
    if adjacency == "replace_one":
        return 2
    if adjacency == "zero_out":
        return 1
    raise ValueError(f"adjacency must be 'replace_one' or 'zero_out', got {adjacency!r}")


def _tree_scope_factor(tree_scope):
    if tree_scope == "global":
        return 2  # a record changes its own leaf and the next O1 restart leaf (spider_sosp.E5)
    if tree_scope == "segment":
        return 1
    raise ValueError(f"tree_scope must be 'global' or 'segment', got {tree_scope!r}")


def spider_sosp_sigma(
    rule,
    *,
    lipschitz,
    smoothness,
    loss_gap,
    d,
    n,
    epsilon,
    delta,
    steps=None,
    adjacency="replace_one",
    tree_scope="global",
    c_alpha=1,
    allow_nonprivate=False,
):
    """Tree noise σ of Liu–Talwar Algorithm 2 by one of the paper's rules (spider_sosp.md §5 items 6–7, §7 spider_sosp.E3).

    rule:
      * "gdp_exact" (default in the spec, always private): σ = Δ_tree/μ*(ε, δ), Δ_tree = sbar·√(k_adj·L).
      * "thm2.2": Theorem 2.2, σ = 4·sbar·√(ln Σ · ln(1/δ))/ε with Σ = T (sufficient on the spec's grid).
      * "lemma3.7": Lemma 3.7, σ = (G/b + max‖g̃‖/b_t)·ln(1/δ)/ε with the paper's a-priori bounds
        G/b ≤ εα/√d and ‖g̃‖/b_t ≤ εα/√d; identical to "lemma3.8".
      * "lemma3.8": Lemma 3.8, σ = 2 ln(1/δ)·α/√d. Not private under replace-one in the
        privacy-dominated regime (fixture (1,1,1,1,100,1e5,0.1,1e-6): δ(ε) = 1.66e-4 > 1e-6).
      * "thm3.11": Theorem 3.11, σ = α/√d, no ε or δ at all: **not private**; refused unless
        ``allow_nonprivate=True``.
    The problem constants and ``adjacency`` are those of ``spider_sosp_parameters``; tree_scope is
    "global" (one tree, k_adj = 2, spider_sosp.E5) or "segment" (a fresh tree per O1 segment, k_adj = 1). Use
    ``spider_sosp_mu`` to see the true GDP μ of the σ returned.
    """
    if rule not in SPIDER_SOSP_RULES:
        raise ValueError(f"rule must be one of {', '.join(SPIDER_SOSP_RULES)}, got {rule!r}")
    delta = _mp_delta("delta", delta)
    params = spider_sosp_parameters(
        lipschitz=lipschitz, smoothness=smoothness, loss_gap=loss_gap, d=d, n=n, epsilon=epsilon, steps=steps,
        adjacency=adjacency, c_alpha=c_alpha,
    )
    k_adj = _tree_scope_factor(tree_scope)
    eps = mpmath.mpf(check_real("epsilon", epsilon))
    alpha, root_d = params["alpha"], mpmath.sqrt(d)
    ln_inv_delta = mpmath.log(1 / delta)
    if rule == "gdp_exact":
        return params["sbar"] * mpmath.sqrt(k_adj * params["L"]) / gaussian_mu(eps, delta)
    if rule == "thm2.2":
        if params["T"] < 2:
            raise ValueError("Theorem 2.2's sigma needs a tree of length >= 2 (ln 1 = 0)")
        return 4 * params["sbar"] * mpmath.sqrt(mpmath.log(params["T"]) * ln_inv_delta) / eps
    if rule == "lemma3.7":
        paper_sensitivity = eps * alpha / root_d + eps * alpha / root_d
        return paper_sensitivity * ln_inv_delta / eps
    if rule == "lemma3.8":
        return 2 * ln_inv_delta * alpha / root_d
    # rule == "thm3.11"
    if not allow_nonprivate:
        raise ValueError(
            "rule 'thm3.11' (sigma = alpha/sqrt(d)) is not private (spider_sosp.md §5 item 7); "
            "pass allow_nonprivate=True to compute it anyway"
        )
    return alpha / root_d


def spider_sosp_mu(
    sigma, *, lipschitz, smoothness, loss_gap, d, n, epsilon, steps=None, adjacency="replace_one", tree_scope="global", c_alpha=1
):
    """True GDP μ of Algorithm 2 with tree noise σ (spider_sosp.md §5 items 3–4): μ = sbar·√(k_adj·L)/σ.

    The released stream is a post-processing of Gaussian node releases; one record moves k_adj
    leaves (2 with one global tree, 1 with a tree per segment), each in L nodes. The run is
    (ε, gaussian_delta(ε, μ))-DP for every ε.
    """
    sigma = _mp_positive("sigma", sigma)
    params = spider_sosp_parameters(
        lipschitz=lipschitz, smoothness=smoothness, loss_gap=loss_gap, d=d, n=n, epsilon=epsilon, steps=steps,
        adjacency=adjacency, c_alpha=c_alpha,
    )
    return params["sbar"] * mpmath.sqrt(_tree_scope_factor(tree_scope) * params["L"]) / sigma


# ---------------------------------------------------------------------------------------------------
# bgm21 (bgm21.md §5.1, §5.3, §5.5)


def bgm21_gaussian_sigma(sensitivity, epsilon, delta):
    """bgm21's Gaussian-mechanism calibration σ = 2Δ√ln(1/δ)/ε (bgm21.md §5.1; Phased-SGD §5.3, Alg 6 §5.5).

    One release gives μ = Δ/σ = ε/(2√ln(1/δ)); the analytic Gaussian (Balle–Wang) certifies
    (ε, δ) only up to ``bgm21_gaussian_certified_epsilon(δ)`` (≈ 36.1 at δ = 1e-5).
    """
    delta_s = _mp_positive("sensitivity", sensitivity)
    eps = _mp_positive("epsilon", epsilon)
    delta = _mp_delta("delta", delta)
    return 2 * delta_s * mpmath.sqrt(mpmath.log(1 / delta)) / eps


def bgm21_gaussian_certified_epsilon(delta, releases=1):
    """Largest ε (first failure, scanned then bisected) at which ``releases`` bgm21-calibrated Gaussian
    releases of the same record are (ε, δ)-DP by the analytic Gaussian (bgm21.md §5.3, §5.5).

    Each release has μ_i = ε/(2√ln(1/δ)), so k releases compose to μ = √k·ε/(2√ln(1/δ)).
    Spec values: k = 1 (Phased-SGD, Alg 6 at t = 0): 11.9 (δ = 0.1), 18.4 (1e-2), 24.5 (1e-3),
    36.1 (1e-5), 53.0 (1e-8). k = 2 (Alg 6, t ≥ 1, σ̂ with η_{r,t−1}): 5.13, 6.25, 6.98, 7.97, 8.95,
    9.8 (δ = 1e-12).
    """
    delta = _mp_delta("delta", delta)
    releases = check_int("releases", releases, minimum=1)
    scale = mpmath.sqrt(releases) / (2 * mpmath.sqrt(mpmath.log(1 / delta)))
    return _first_failing_epsilon(lambda eps: scale * eps, delta, smallest=0.01, largest=1e4)
