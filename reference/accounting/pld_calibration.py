"""Noise calibration against a certified PLD interval: the smallest noise multiplier found whose certified ε_upper is
at most the target (the PLD accountant of Koskela, Jälkö & Honkela 2020, with the certified interval of
``reference.accounting.pld``).

The exact ε(δ) of a noise-added mechanism is nonincreasing in the noise multiplier z (more noise is a post-processing
of less: add independent noise of variance z'² − z²), but the computed ε_upper(z) is only an upper bound whose grid
and rounding change with z, so it need not be monotone numerically. The search therefore treats
"ε_upper(z) ≤ target" as a predicate that is *assumed* monotone for the bracketing and bisection, and the answer is
verified anyway: the returned z is always a point at which ε_upper(z) ≤ target was computed, so the calibration never
overshoots whatever the predicate does between the evaluated points.

Search: from ``start``, double z until the predicate holds or halve it until it fails (bracket), then bisect in
log z until hi/lo − 1 ≤ ``rtol``. If at the lower end of the final bracket the certified ε_lower already exceeds the
target, every z ≤ lo is certified too little noise (exact ε is monotone), so the exact calibrated z lies in
(lo, hi]: ``optimal_at_least`` reports lo.
"""

from __future__ import annotations

import dataclasses
import math

from ..validation import check_real
from .errors import AccountingError

__all__ = ["PldCalibration", "calibrate_pld_noise"]


@dataclasses.dataclass(frozen=True)
class PldCalibration:
    """The calibrated noise multiplier and the certified interval achieved there.

    ``epsilon_upper`` ≤ target was verified at ``noise_multiplier``; ``optimal_at_least`` is a z below which the
    target is certainly missed (ε_lower > target there), or None when that could not be certified;
    ``evaluations`` counts interval computations."""

    noise_multiplier: float
    epsilon_lower: float
    epsilon_upper: float
    grid_width: float
    optimal_at_least: float | None
    evaluations: int


def calibrate_pld_noise(interval_at, target_epsilon, *, minimum, maximum, start=1.0, rtol=1e-3,
                        max_evaluations=64) -> PldCalibration:
    """Smallest z in [minimum, maximum] found with certified ε_upper(z) ≤ target_epsilon (module docstring).

    interval_at(z) -> (ε_lower, ε_upper, h): the certified interval at noise multiplier z (ε_upper may be +inf).
    Raises AccountingError when even ``maximum`` misses the target, when ``minimum`` already meets it (no bracket:
    the search range is too narrow), or after ``max_evaluations`` interval computations.
    """
    if not callable(interval_at):
        raise TypeError(f"interval_at must be callable, got {type(interval_at).__name__}")
    target = check_real("target_epsilon", target_epsilon, positive=True)
    minimum = check_real("minimum", minimum, positive=True)
    maximum = check_real("maximum", maximum, positive=True)
    if not minimum < maximum:
        raise ValueError(f"minimum must be < maximum, got {minimum} and {maximum}")
    start = check_real("start", start, positive=True)
    if not minimum <= start <= maximum:
        raise ValueError(f"start must lie in [minimum, maximum] = [{minimum}, {maximum}], got {start}")
    rtol = check_real("rtol", rtol, positive=True, upper=1.0)
    if isinstance(max_evaluations, bool) or not isinstance(max_evaluations, int) or max_evaluations < 2:
        raise ValueError(f"max_evaluations must be a whole number >= 2, got {max_evaluations!r}")
    target, minimum, maximum, start = float(target), float(minimum), float(maximum), float(start)

    seen = {}

    def evaluate(z):
        if z not in seen:
            if len(seen) >= max_evaluations:
                raise AccountingError(f"calibration did not converge within {max_evaluations} interval evaluations")
            lo, up, h = interval_at(z)
            seen[z] = (float(lo), float(up), float(h))
        return seen[z]

    def enough(z):  # certified: ε_upper(z) ≤ target
        return evaluate(z)[1] <= target

    # Bracket: lo fails, hi holds.
    if enough(start):
        hi = start
        while True:
            if hi == minimum:
                raise AccountingError(
                    f"no bracket: epsilon_upper <= target {target:.15g} already at the smallest noise multiplier "
                    f"{minimum:.15g} the PLD accepts for this mechanism"
                )
            lo = max(hi / 2, minimum)
            if not enough(lo):
                break
            hi = lo
    else:
        lo = start
        while True:
            if lo == maximum:
                up = evaluate(maximum)[1]
                raise AccountingError(
                    f"target epsilon {target:.15g} is unreachable: epsilon_upper = {up:.15g} even at the largest "
                    f"noise multiplier {maximum:.15g} the PLD accepts for this mechanism"
                )
            hi = min(lo * 2, maximum)
            if enough(hi):
                break
            lo = hi

    # Bisection in log z on the (assumed monotone) predicate; hi stays a verified point.
    while hi / lo - 1 > rtol:
        mid = math.sqrt(lo * hi)
        if not lo < mid < hi:  # float64 resolution reached
            break
        if enough(mid):
            hi = mid
        else:
            lo = mid

    eps_lo, eps_up, h = evaluate(hi)
    if not eps_up <= target:  # cannot happen: hi is only ever set to a point where the predicate held
        raise AccountingError(f"calibrated noise multiplier {hi} gives epsilon_upper {eps_up} > target {target}")
    return PldCalibration(
        noise_multiplier=hi,
        epsilon_lower=eps_lo,
        epsilon_upper=eps_up,
        grid_width=h,
        optimal_at_least=lo if evaluate(lo)[0] > target else None,
        evaluations=len(seen),
    )
