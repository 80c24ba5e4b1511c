"""bgm21 Theorems 8, 11 and 16: the settings the theorems prescribe — the round count R of Theorems 8 and 11, whose
logarithm must be base 2 (bgm21.E5), and Remark 17's two special cases of Theorem 16's accuracy (7).

Ground truth is computed here in mpmath (50 digits) from the printed formulas; the subject's ``theorem8_params``,
``theorem11_params`` and ``rate_theorem16`` are compared with it at hand-picked points.

* Theorem 8's proof balances D(L0 + L1D)/2^{R/2} against the privacy term, which needs 2^{R/2} = (nε/(ln²J ln²n
  √ln(1/δ)))^{1/3}; R = (2/3)·log(·) gives that only with log = log₂. Theorem 11 likewise needs 2^{R/2} = (·)^{2/5}
  from R = (4/5)·log(·). Every other logarithm of the theorems is natural.
* Rounding (the theorems state real numbers): R_int = max(1, ⌊R⌋), b = ⌊n/ln²n⌋, and the run reads Σ_r Σ_t ⌈b/(t+1)⌉
  records.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath

from proofs_checks.authoring import Claim, deterministic, on_output, substitute

#: Relative agreement of a float64 result with the 50-digit value: the subject's formula is a few dozen float64
#: operations (logs, powers, products), each within a few units of 2^-53 of its inputs; 1e-12 leaves a wide margin.
RELATIVE = 1e-12

#: (n, ε, δ, J) for Theorem 8; the last point is degenerate (R < 2, R_int from the rounding rule).
THEOREM8_POINTS = ((10_000_000, 1.0, 1e-6, 10), (5_000_000, 2.0, 1e-5, 6), (200_000_000, 0.5, 1e-8, 100),
                   (2_000, 1.0, 1e-5, 4))
#: (n, d, p, ε, δ) for Theorem 11; the last point has R < 1 (raised to 1).
THEOREM11_POINTS = ((100_000_000, 10, 1.5, 1.0, 1e-6), (10_000_000, 100, 2.0, 1.0, 1e-6),
                    (50_000_000, 1000, 1.1, 2.0, 1e-6), (3_000, 5, 1.5, 1.0, 1e-5))


def _mp(x):
    return mpmath.mpf(x)


def _budget(b: int, R: int) -> int:
    return sum(b + sum(-(-b // (t + 1)) for t in range(1, 2**r)) for r in range(R))


def _compare(label, params, R_exact, b_exact, inner, power) -> list[str]:
    """Problems of one setting: R real and rounded, b real and rounded, 2^{R/2} = inner^power, the data budget."""
    problems = []
    R_real = float(params.n_rounds_real)
    if not abs(R_real - float(R_exact)) <= RELATIVE * abs(float(R_exact)):
        problems.append(f"{label}: R = {R_real!r}, the log2 formula gives {mpmath.nstr(R_exact, 17)}")
    if not mpmath.almosteq(mpmath.power(2, _mp(R_real) / 2), mpmath.power(inner, power), rel_eps=RELATIVE * 10):
        problems.append(f"{label}: 2^(R/2) = {float(mpmath.power(2, _mp(R_real) / 2)):.6g} != (·)^{power} = "
                        f"{float(mpmath.power(inner, power)):.6g} (the balance the proof needs)")
    R_int = max(1, int(mpmath.floor(R_exact)))
    b_int = int(mpmath.floor(b_exact))
    if int(params.n_rounds) != R_int or int(params.b) != b_int:
        problems.append(f"{label}: (R_int, b) = ({params.n_rounds}, {params.b}), expected ({R_int}, {b_int})")
    if not abs(float(params.b_real) - float(b_exact)) <= RELATIVE * float(b_exact):
        problems.append(f"{label}: b_real = {params.b_real!r}, expected {mpmath.nstr(b_exact, 17)}")
    if int(params.records_used) != _budget(b_int, R_int):
        problems.append(f"{label}: records_used {params.records_used} != Σ⌈b/(t+1)⌉ = {_budget(b_int, R_int)}")
    return problems


def _check_round_count(subject, ctx):
    problems = []
    with mpmath.workdps(50):
        for n, eps, delta, J in THEOREM8_POINTS:
            ln_n = mpmath.log(n)
            inner = n * _mp(eps) / (mpmath.log(J) ** 2 * ln_n**2 * mpmath.sqrt(mpmath.log(1 / _mp(delta))))
            R = _mp(2) / 3 * mpmath.log(inner, 2)
            params = subject.theorem8_params(n, eps, delta, J)
            problems += _compare(f"Theorem 8 at (n, ε, δ, J) = ({n}, {eps}, {delta}, {J})", params, R, n / ln_n**2,
                                 inner, _mp(1) / 3)
        for n, d, p, eps, delta in THEOREM11_POINTS:
            ln_n, ln_d = mpmath.log(n), mpmath.log(d)
            kappa = min(1 / (_mp(p) - 1), 2 * ln_d)
            kappa_t = 1 + (ln_d if p < 2 else 0)
            inner = n * _mp(eps) / (mpmath.sqrt(d * kappa_t * mpmath.log(1 / _mp(delta))) * kappa ** (_mp(5) / 3)
                                    * ln_n**2)
            R = _mp(4) / 5 * mpmath.log(inner, 2)
            params = subject.theorem11_params(n, d, p, eps, delta)
            problems += _compare(f"Theorem 11 at (n, d, p, ε, δ) = ({n}, {d}, {p}, {eps}, {delta})", params, R,
                                 n / ln_n**2, inner, _mp(2) / 5)
    return deterministic(not problems, statistic=len(problems), bound=0,
                         detail="; ".join(problems[:3]) if problems else
                         f"{len(THEOREM8_POINTS)} Theorem 8 and {len(THEOREM11_POINTS)} Theorem 11 settings: R = "
                         "(2/3)log2(·) and (4/5)log2(·) to 1e-12, 2^(R/2) = (·)^(1/3) and (·)^(2/5), "
                         "R_int = max(1, ⌊R⌋), b = ⌊n/ln²n⌋, budget Σ⌈b/(t+1)⌉")


def _natural_log(params, call):
    R = params.n_rounds_real * math.log(2.0)  # (2/3)·ln(·) = (2/3)·log2(·)·ln 2
    return dataclasses.replace(params, n_rounds_real=R, n_rounds=max(1, math.floor(R)))


def _ceil_rounds(params, call):
    return dataclasses.replace(params, n_rounds=max(1, math.ceil(params.n_rounds_real)))


ROUND_COUNT = Claim(
    id="bgm21.thm8_11.round_count",
    paper="bgm21",
    location="Theorems 8 and 11 (R); bgm21.E5",
    statement="R = (2/3)·log₂(nε/(ln²J ln²n √ln(1/δ))) in Theorem 8 and R = (4/5)·log₂(nε/(√(dκ̃ln(1/δ))κ^{5/3}ln²n)) "
              "in Theorem 11 — base 2, so that 2^{R/2} = (·)^{1/3} and (·)^{2/5} as the proofs need — rounded to "
              "max(1, ⌊R⌋), with b = ⌊n/ln²n⌋ and the run reading Σ_r Σ_t ⌈b/(t+1)⌉ records.",
    kind="deterministic",
    requires=("theorem8_params", "theorem11_params"),
    check=_check_round_count,
    mutants=(
        on_output("natural_log_thm8", "Theorem 8's R with the natural logarithm", "theorem8_params", _natural_log),
        on_output("natural_log_thm11", "Theorem 11's R with the natural logarithm", "theorem11_params", _natural_log),
        on_output("rounds_up", "R rounded up, ⌈R⌉ (a schedule the proof does not cover)", "theorem8_params",
                  _ceil_rounds),
    ),
)


# --- Remark 17: eq. (7) at p = 1 and p = 2 ------------------------------------------------------------------------

#: (n, d, ρ, L0, D, ε, δ): 2ρD·κ below and above 1 (both branches of max{1, 2ρDκ}).
REMARK17_POINTS = ((10_000, 50, 0.2, 1.0, 1.0, 1.0, 1e-6), (1_000_000, 1000, 2.0, 0.5, 3.0, 0.5, 1e-8),
                   (500, 8, 0.05, 2.0, 0.5, 2.0, 1e-5))


def _remark17(n, d, rho, L0, D, eps, delta, p):
    """Remark 17's printed special case (constant 1), in mpmath."""
    n, d, rho, L0, D, eps, delta = (_mp(v) for v in (n, d, rho, L0, D, eps, delta))
    ln_d = mpmath.log(d) if p == 1 else _mp(1)
    privacy = (d * mpmath.log(1 / delta) / ((n * eps) ** 2 * rho)) ** (_mp(1) / 6)
    front = max(_mp(1), 2 * rho * D * ln_d) / mpmath.sqrt(rho)
    first = L0 ** (_mp(3) / 4) * (D * ln_d) ** (_mp(1) / 4) / (n * rho) ** (_mp(1) / 4)
    second = (mpmath.sqrt(ln_d) if p == 1 else 1) * (L0**2 * D) ** (_mp(1) / 3) * privacy
    return front * (first + second)


def _check_remark17(subject, ctx):
    problems, lines = [], []
    with mpmath.workdps(50):
        for point in REMARK17_POINTS:
            n, d = point[0], point[1]
            for p in (1.0, 2.0):
                got = _mp(float(subject.rate_theorem16(n, d, p, *point[2:])))
                printed = _remark17(*point, p)
                if p == 2.0:
                    ok = mpmath.almosteq(got, printed, rel_eps=RELATIVE)
                    lines.append(f"p = 2, d = {d}: ratio {float(got / printed):.15g}")
                else:
                    # κ̃κ² = (1 + ln d)ln²d at p = 1 against the Remark's ln³d: the second term is larger by
                    # ((1 + ln d)/ln d)^{1/6} ∈ (1, 2^{1/6}] — the "stated constant"
                    top = ((1 + mpmath.log(d)) / mpmath.log(d)) ** (_mp(1) / 6)
                    ratio = got / printed
                    ok = 1 - RELATIVE <= ratio <= top * (1 + RELATIVE) and ratio > 1 + RELATIVE
                    lines.append(f"p = 1, d = {d}: ratio {float(ratio):.6g} in (1, {float(top):.6g}]")
                if not ok:
                    problems.append(lines[-1])
    return deterministic(not problems, statistic=len(problems), bound=0,
                         detail=("violations: " + "; ".join(problems)) if problems else "; ".join(lines))


def _theta(n, d, p, rho, L0, D, eps, delta, kappa_tilde_at_2=False, drop_max=False):
    k = math.log(d) if p == 1.0 else min(1.0 / (p - 1.0), math.log(d))
    kt = 1.0 + (math.log(d) if (p < 2.0 or kappa_tilde_at_2) else 0.0)
    front = (2 * rho * D * k if drop_max else max(1.0, 2 * rho * D * k)) / math.sqrt(rho)
    privacy = (d * math.log(1 / delta) / ((n * eps) ** 2 * rho)) ** (1 / 6)
    return front * (L0**0.75 * (k * D) ** 0.25 / (n * rho) ** 0.25
                    + (kt * k**2) ** (1 / 6) * (L0**2 * D) ** (1 / 3) * privacy)


REMARK17 = Claim(
    id="bgm21.remark17.special_cases",
    paper="bgm21",
    location="Remark 17; Theorem 16, eq. (7)",
    statement="Eq. (7) at p = 2 (κ = κ̃ = 1) is exactly Remark 17's second case; at p = 1 (κ = ln d, κ̃ = 1 + ln d) "
              "it is Remark 17's first case up to the factor ((1 + ln d)/ln d)^{1/6} ≤ 2^{1/6} on the privacy term.",
    kind="deterministic",
    requires=("rate_theorem16",),
    check=_check_remark17,
    mutants=(
        substitute("kappa_tilde_at_p2", "κ̃ = 1 + ln d also at p = 2 (the indicator read as 1(p ≤ 2))",
                   "rate_theorem16", lambda c: _theta(c.n, c.d, c.p, c.rho_wc, c.L0, c.D, c.eps, c.delta,
                                                      kappa_tilde_at_2=True)),
        substitute("max_dropped", "max{1, 2ρDκ} replaced by 2ρDκ", "rate_theorem16",
                   lambda c: _theta(c.n, c.d, c.p, c.rho_wc, c.L0, c.D, c.eps, c.delta, drop_max=True)),
    ),
)
