"""bgm21 §2, Lemma 1 (advanced composition [DRV10, DR14]) against the exact optimal composition of pure-DP steps.

Lemma 1 with δ = 0: k adaptive ε0-DP steps are (ε′, δ′)-DP with ε′ = ε0√(2k log(1/δ′)) + kε0(e^{ε0} − 1). The exact
smallest δ at level ε′ over every k-fold adaptive composition of ε0-DP mechanisms is that of k-fold randomized
response (Kairouz, Oh, Viswanath 2015, Thm 3.3),

    δ_exact(ε′) = (1 + e^{ε0})^{−k} Σ_i C(k, i) [e^{ε0(k−i)} − e^{ε′} e^{ε0 i}]_+ ,

so Lemma 1 holds at (ε0, k, δ′) iff δ_exact(ε′) ≤ δ′ for the subject's ε′. The check evaluates δ_exact with
``reference.algorithms.bgm21_accounting.kov_exact_delta`` at 40 digits (a log-space sum of the terms near the
peak; tested there against the corner formula of KOV's theorem by direct summation) on the grid ε0 ∈ {1e-3, 1e-2,
0.1, 0.3, 1}, k ∈ {1, 10, 100, 1000, 10⁴}, δ′ ∈ {1e-2, 1e-5, 1e-9}, and also requires the subject's total δ to be
kδ + δ′ = δ′. Tolerance: none beyond the 40-digit evaluation (δ_exact(ε′) ≤ δ′ is tested as computed).

The quick budget runs the 25 points with δ′ = 1e-9, the full budget all 75. Lemma 1 is loose everywhere on the grid
(the largest δ_exact(ε′)/δ′ is about 5e-3, at ε0 = 0.01, k = 1000, δ′ = 1e-2), so the check rejects only errors that
cost more than that slack: a missing kε0(e^{ε0} − 1) term (fails from ε0 = 0.1, k = 1000 on) or √(k log(1/δ′))
without the 2 (fails at ε0 ≤ 0.01, δ′ ≤ 1e-5: δ_exact(ε′)/δ′ up to 68); a 5 % smaller ε′ still holds.
"""

from __future__ import annotations

import itertools

import mpmath

from proofs_checks.authoring import Claim, deterministic, on_output

from reference.algorithms.bgm21_accounting import kov_exact_delta

DPS = 40
EPS0 = (1e-3, 1e-2, 0.1, 0.3, 1.0)
STEPS = (1, 10, 100, 1000, 10_000)
DELTA_PRIME = (1e-2, 1e-5, 1e-9)
GRID = tuple(itertools.product(EPS0, STEPS, DELTA_PRIME))
#: The quick budget: δ′ = 1e-9, where Lemma 1 is least loose relative to δ′ for small ε0 (25 of the 75 points).
QUICK_GRID = tuple(point for point in GRID if point[2] == 1e-9)


def _check_lemma1(subject, ctx):
    grid = ctx.budget.pick(quick=QUICK_GRID, full=GRID)
    worst_ratio, worst_at, problems = 0.0, None, []
    with mpmath.workdps(DPS):
        for eps0, k, delta_prime in grid:
            eps_total, delta_total = subject.advanced_composition(eps0, k, delta_prime)
            eps_total, delta_total = mpmath.mpf(eps_total), mpmath.mpf(delta_total)
            if not (mpmath.isfinite(eps_total) and eps_total > 0):
                problems.append(f"(ε0, k, δ′) = ({eps0}, {k}, {delta_prime}): ε′ = {eps_total}")
                continue
            if abs(delta_total - delta_prime) > 1e-15 * delta_prime:
                problems.append(f"(ε0, k, δ′) = ({eps0}, {k}, {delta_prime}): total δ {float(delta_total)!r}, not δ′")
                continue
            exact = kov_exact_delta(mpmath.mpf(eps0), k, eps_total)
            ratio = float(exact / delta_prime)
            if ratio > worst_ratio:
                worst_ratio, worst_at = ratio, (eps0, k, delta_prime, float(eps_total))
            if exact > delta_prime:
                problems.append(f"(ε0, k, δ′) = ({eps0}, {k}, {delta_prime}): ε′ = {float(eps_total):.6g} but the "
                                f"exact δ(ε′) = {float(exact):.4g} > δ′")
    if problems:
        return deterministic(False, statistic=worst_ratio, bound=1.0,
                             detail=f"{len(problems)} of {len(grid)} grid points fail: " + "; ".join(problems[:4]))
    return deterministic(True, statistic=worst_ratio, bound=1.0,
                         detail=f"{len(grid)} grid points: the exact KOV δ(ε′) ≤ δ′ everywhere; the largest "
                                f"δ_exact(ε′)/δ′ = {worst_ratio:.4g} at (ε0, k, δ′, ε′) = {worst_at}")


def _without_second_term(result, call):
    eps_total, delta_total = result
    k, eps0 = call.k, mpmath.mpf(call.eps)
    return eps_total - k * eps0 * mpmath.expm1(eps0), delta_total


def _without_the_two(result, call):
    eps0, k = mpmath.mpf(call.eps), call.k
    log_inv = mpmath.log(1 / mpmath.mpf(call.delta_prime))
    return eps0 * mpmath.sqrt(k * log_inv) + k * eps0 * mpmath.expm1(eps0), result[1]


LEMMA1 = Claim(
    id="bgm21.lemma1.advanced_composition",
    paper="bgm21",
    location="§2, Lemma 1 (advanced composition, DRV10 Thm III.3 / Dwork–Roth Thm 3.20)",
    statement=(
        "k adaptive ε0-DP steps are (ε′, δ′)-DP with ε′ = ε0√(2k log(1/δ′)) + kε0(e^{ε0} − 1): the exact optimal "
        "composition (Kairouz–Oh–Viswanath 2015, Thm 3.3) gives δ_exact(ε′) ≤ δ′ for ε0 from 1e-3 to 1, k from 1 "
        "to 1e4 and δ′ ∈ {1e-2, 1e-5, 1e-9}."
    ),
    kind="privacy",
    requires=("advanced_composition",),
    check=_check_lemma1,
    mutants=(
        on_output("no_second_term", "ε′ without the kε0(e^{ε0} − 1) term", "advanced_composition",
                  _without_second_term),
        on_output("sqrt_without_two", "ε0√(k log(1/δ′)) instead of ε0√(2k log(1/δ′))", "advanced_composition",
                  _without_the_two),
    ),
)
