"""Calibration: the noise multiplier for a target (ε, δ), by bracketing and bisection that never overshoots.

Generic calibration (``calibrate``): the privacy loss ε(z) of a mechanism is non-increasing in its
noise multiplier z = σ/Δ. We bracket the target by doubling/halving from z = 1 and then bisect in
mpmath. The answer is the *upper* end z_hi of the final bracket, at which ε(z_hi) ≤ target has been
evaluated, so the returned noise never overshoots the budget. A function that is seen to increase
along the way, a target that no z in the allowed range reaches, or a search that does not finish
raises ``AccountingError`` rather than returning an uncertified number.

``calibrate_gaussian_noise`` applies it to T-fold compositions of the Gaussian mechanism, plain or
Poisson-subsampled, with the RDP accountant (BBGHS conversion), or, for q = 1, with the exact
Gaussian-DP profile (Balle–Wang 2018; Dong–Roth–Su 2022): z = √T / μ*(ε, δ).

Scalars are mpmath numbers computed at the caller's working precision
(``reference.precision.working_precision``); the functions take no precision argument. The float64 twin
(``reference.fast``) only supplies a starting point for the search.

The papers' closed-form noise formulas live beside their papers, in ``reference/algorithms/<paper>_privacy.py``:
dpzero Lemma 2.2 (erratum dpzero.E5) and the Opacus replica of its experiments, zo_o2nc Cor 4.4,
nsnc_improved Prop 2.5, spider_sosp's four σ rules, bgm21's Gaussian calibration (docs/accounting.md).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable

import mpmath
import numpy as np

from ..validation import check_int, check_probability, check_real
from .accountant import RdpAccountant
from .errors import AccountingError
from .events import GaussianEvent, NeighbouringRelation, PoissonSampledEvent, as_relation, check_relation
from .gaussian import composed_gaussian_mu, gaussian_delta, gaussian_mu
from .rdp import DEFAULT_ORDERS

__all__ = ["calibrate", "calibrate_gaussian_noise"]


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
