"""bgm21 Theorems 5, 6, 8, 11 and 16: the rates the theorems print and the trends the settings give them —
closed forms of the subject's settings and rate functions, so every check is deterministic.

The rates are O(·) bounds; ``rate_theorem8/11/16`` are the printed expressions with every hidden constant 1. Each
rate claim (i) compares the subject's rate with the printed expression evaluated independently in mpmath on random
arguments, and (ii) checks its trend: the log-log slope of the subject's rate between two sample sizes n1 < n2 (or two
ε) equals the exact mean of the printed expression's log-derivative over [ln n1, ln n2] — in closed form where the
rate is one product of powers and logarithms, by numerical quadrature of the derivative (mpmath) where it is a sum
of two terms. No tolerance is tuned to what passed: both checks are exact up to float64 rounding.

* ``THEOREM8_RATE``: D(L0 + L1D)·ln^{2/3}J·ln^{2/3}n·ln^{1/6}(1/δ)/(nε)^{1/3}: slope −1/3 in ε exactly, and
  −1/3 + (2/3)/ln n in n (−0.285 at n = 1e6: the ln^{2/3} n factor slows the n^{−1/3} decay).
* ``THEOREM11_RATE``: D(L0 + L1D)κ^{2/3}(ln^{2/3}n/n^{1/3} + d^{1/5}κ̃^{1/5}ln^{1/5}(1/δ)ln^{4/5}n/(nε)^{2/5}): the
  slope in n moves from −2/5 (+ (4/5)/ln n) where the private term dominates to −1/3 (+ (2/3)/ln n) where the
  statistical term does; at p = 2 (κ = κ̃ = 1) the slope in d is 1/5 times the private term's share.
* ``THEOREM16_RATE``: ϑ of eq. (7) and Theorem 16's R. ϑ has no logarithm of n: its slope in n is exactly −1/4 where
  L0^{3/4}(κD)^{1/4}/(nρ)^{1/4} dominates and −1/3 where the private term does; R's slope in n is 1/2 or 2/3 in the
  same two regimes (the branch min{·} picks is the dominant term: (private/statistical term of ϑ)² equals
  √(nDρ/(κL0)) / ((κ̃κ²)^{−1/3}(D(nε)²ρ/(L0 d ln(1/δ)))^{1/3}) identically).
* ``THEOREM5_RATE``: with Theorem 5's β, α and the rebuilt Phased-SGD step, the excess bound that the smoothing
  (Lemma 3) and the Phased-SGD analysis of [FKT20] give, evaluated with the subject's phase sizes, steps and noise
  scales, lies within [1, 273]·L0R_xD(√(d ln(1/δ))/(nε) + 1/√n) on a grid spanning both regimes (the constants
  derived in ``_phased_sgd_bound``).
* ``THEOREM6_LOG_J``: Theorem 6's β makes Lemma 3's smoothing error 2L0²/β equal twice the rate's first term,
  2L0R_xD·ln^{1/4}(1/δ)·√(ln J·ln n)/√(nε); the settings depend on J only through ln J (β ∝ (ln J)^{−1/2} exactly:
  the smoothing term grows like √ln J) and not on d at all (the √(ln d)/√n term of the rate is generalization).

Remark 17 and the base of R's logarithm (bgm21.E5) are claimed elsewhere in this folder; this module does not test
them.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath

from proofs_checks.authoring import Claim, deterministic, on_output, substitute

#: Relative accuracy of a float64 closed form of a few dozen correctly rounded operations (pow, log, sqrt, ·, /):
#: each contributes at most one unit in the last place (2^−53 ≈ 1.1e-16); 1e-12 is far above their sum.
RELATIVE = 1e-12
#: mpmath precision of the ground truth (decimal digits): its own error is negligible against RELATIVE.
DIGITS = 40


def _slope_tolerance(ratio: float) -> float:
    """The error of a secant slope ln(r2/r1)/ln(ratio) when r1, r2 each carry a relative error RELATIVE."""
    return 2.5 * RELATIVE / math.log(ratio)


def _secant(f, a, b) -> float:
    """ln(f(b)/f(a))/ln(b/a): the log-log slope of the subject's values between two arguments."""
    return math.log(f(b) / f(a)) / math.log(b / a)


def _mean_log_derivative(derivative, a, b) -> float:
    """(1/ln(b/a))·∫_{ln a}^{ln b} s(e^x) dx: the exact secant of a function with log-derivative s."""
    with mpmath.workdps(DIGITS):
        lo, hi = mpmath.log(a), mpmath.log(b)
        return float(mpmath.quad(lambda x: derivative(mpmath.exp(x)), [lo, hi]) / (hi - lo))


def _log_uniform(gen, lo, hi) -> float:
    return float(10 ** gen.uniform(math.log10(lo), math.log10(hi)))


def _agreement(label, got, want, where, problems):
    got = float(got)
    if not (math.isfinite(got) and abs(got - float(want)) <= RELATIVE * abs(float(want))):
        problems.append(f"{label} at {where}: subject {got!r}, printed expression {float(want)!r}")


# --- the printed expressions, in mpmath (the ground truth) ------------------------------------------------------

def _mp_kappa(p, d, c_log):
    p, d = mpmath.mpf(p), mpmath.mpf(d)
    log_term = c_log * mpmath.log(d)
    return log_term if p == 1 else min(1 / (p - 1), log_term)


def _mp_kappa_tilde(p, d):
    return 1 + (mpmath.log(d) if p < 2 else 0)


def _mp_rate8(n, eps, delta, J, D, L0, L1):
    n, eps, delta, J, D, L0, L1 = map(mpmath.mpf, (n, eps, delta, J, D, L0, L1))
    return (D * (L0 + L1 * D) * mpmath.log(J) ** (mpmath.mpf(2) / 3) * mpmath.log(n) ** (mpmath.mpf(2) / 3)
            * mpmath.log(1 / delta) ** (mpmath.mpf(1) / 6) / (n * eps) ** (mpmath.mpf(1) / 3))


def _mp_rate11_terms(n, d, p, eps, delta, D, L0, L1):
    """The statistical and private terms of Theorem 11's rate (constant 1), each with the common factor."""
    n, eps, delta, D, L0, L1 = map(mpmath.mpf, (n, eps, delta, D, L0, L1))
    k, kt = _mp_kappa(p, d, 2), _mp_kappa_tilde(p, d)
    common = D * (L0 + L1 * D) * k ** (mpmath.mpf(2) / 3)
    statistical = common * mpmath.log(n) ** (mpmath.mpf(2) / 3) / n ** (mpmath.mpf(1) / 3)
    private = common * ((d * kt * mpmath.log(1 / delta)) ** (mpmath.mpf(1) / 5) * mpmath.log(n) ** (mpmath.mpf(4) / 5)
                        / (n * eps) ** (mpmath.mpf(2) / 5))
    return statistical, private


def _mp_rate16_terms(n, d, p, rho, L0, D, eps, delta):
    """The two terms of eq. (7) (constant 1), each with the factor max{1, 2ρDκ}/√ρ."""
    n, rho, L0, D, eps, delta = map(mpmath.mpf, (n, rho, L0, D, eps, delta))
    k, kt = _mp_kappa(p, d, 1), _mp_kappa_tilde(p, d)
    front = max(1, 2 * rho * D * k) / mpmath.sqrt(rho)
    statistical = front * L0 ** (mpmath.mpf(3) / 4) * (k * D) ** (mpmath.mpf(1) / 4) / (n * rho) ** (mpmath.mpf(1) / 4)
    private = front * ((kt * k**2) ** (mpmath.mpf(1) / 6) * (L0**2 * D) ** (mpmath.mpf(1) / 3)
                       * (d * mpmath.log(1 / delta) / ((n * eps) ** 2 * rho)) ** (mpmath.mpf(1) / 6))
    return statistical, private


def _mp_rounds16(n, d, p, rho, L0, D, eps, delta):
    """Theorem 16's two candidates for R: √(nDρ/(κL0)) and (κ̃κ²)^{−1/3}(D(nε)²ρ/(L0 d ln(1/δ)))^{1/3}."""
    n, rho, L0, D, eps, delta = map(mpmath.mpf, (n, rho, L0, D, eps, delta))
    k, kt = _mp_kappa(p, d, 1), _mp_kappa_tilde(p, d)
    first = mpmath.sqrt(n * D * rho / (k * L0))
    second = (kt * k**2) ** (-mpmath.mpf(1) / 3) * (D * (n * eps) ** 2 * rho / (L0 * d * mpmath.log(1 / delta))) ** (
        mpmath.mpf(1) / 3)
    return first, second


# --- Theorem 8 ------------------------------------------------------------------------------------------------

def _check_rate8(subject, ctx):
    problems, gen = [], ctx.generator("arguments")
    with mpmath.workdps(DIGITS):
        for _ in range(ctx.budget.pick(quick=60, full=1500)):
            args = (int(_log_uniform(gen, 10, 1e15)), _log_uniform(gen, 1e-3, 1e2), _log_uniform(gen, 1e-12, 0.5),
                    int(_log_uniform(gen, 2, 1e9)), _log_uniform(gen, 1e-2, 1e2), _log_uniform(gen, 1e-2, 1e2),
                    _log_uniform(gen, 1e-2, 1e2))
            _agreement("rate_theorem8", subject.rate_theorem8(*args), _mp_rate8(*args), args, problems)
            if problems:
                break  # one counterexample decides
    # slopes: in n, −1/3 + (2/3)·ln(ln n2/ln n1)/ln(n2/n1) (the exact secant of ln^{2/3} n / n^{1/3}); in ε, −1/3
    slopes = []
    for n1, n2 in ((10**3, 10**4), (10**6, 10**7), (10**9, 10**10), (10**14, 10**15)):
        got = _secant(lambda n: subject.rate_theorem8(n, 1.0, 1e-6, 100, 1.0, 1.0, 1.0), n1, n2)
        want = -1 / 3 + (2 / 3) * math.log(math.log(n2) / math.log(n1)) / math.log(n2 / n1)
        slopes.append((n1, got, want))
        if not abs(got - want) <= _slope_tolerance(n2 / n1):
            problems.append(f"slope in n over [{n1:.0e}, {n2:.0e}]: {got!r}, printed {want!r}")
    eps_slope = _secant(lambda e: subject.rate_theorem8(10**6, e, 1e-6, 100, 1.0, 1.0, 1.0), 0.1, 10.0)
    if not abs(eps_slope + 1 / 3) <= _slope_tolerance(100.0):
        problems.append(f"slope in ε over [0.1, 10]: {eps_slope!r}, printed −1/3")
    # the J dependence ln^{2/3} J: secant 2/3 against ln J
    j_slope = math.log(subject.rate_theorem8(10**6, 1.0, 1e-6, 10**6, 1.0, 1.0, 1.0)
                       / subject.rate_theorem8(10**6, 1.0, 1e-6, 10, 1.0, 1.0, 1.0)) / math.log(6.0)
    if not abs(j_slope - 2 / 3) <= _slope_tolerance(6.0):
        problems.append(f"slope in ln J over J ∈ [10, 1e6]: {j_slope!r}, printed 2/3")
    if problems:
        return deterministic(False, detail="; ".join(problems[:3]), counterexample=problems[:10])
    return deterministic(True, statistic=slopes[1][1], bound=slopes[1][2],
                         detail="rate_theorem8 equals the printed expression (mpmath) on random (n, ε, δ, J, D, "
                                "L0, L1); log-log slope in n " + ", ".join(f"{got:.4f} over [{n1:.0e}, 10·{n1:.0e}]"
                                                                  for n1, got, _ in slopes)
                                + f" (exact −1/3 + (2/3)·Δln ln n/Δln n); in ε {eps_slope:.6f} (−1/3); "
                                  f"in ln J {j_slope:.6f} (2/3)")


THEOREM8_RATE = Claim(
    id="bgm21.thm8.gap_rate",
    paper="bgm21",
    location="Theorem 8",
    statement=(
        "Theorem 8's bound on E Gap(ŵ) of Algorithm 1 is D(L0 + L1D)·ln^{2/3}J·ln^{2/3}n·ln^{1/6}(1/δ)/(nε)^{1/3} "
        "(constant 1): its log-log slope is −1/3 in ε and −1/3 + (2/3)/ln n in n (the n^{−1/3} rate up to the "
        "ln^{2/3} n factor), and it grows like ln^{2/3} J in the number of vertices."
    ),
    kind="rate",
    requires=("rate_theorem8",),
    check=_check_rate8,
    mutants=(
        on_output("n_exponent_quarter", "the rate decays like n^{−1/4} instead of n^{−1/3}", "rate_theorem8",
                  lambda r, call: r * call.n ** (1 / 3) / call.n ** (1 / 4)),
        on_output("log_n_dropped", "the ln^{2/3} n factor dropped", "rate_theorem8",
                  lambda r, call: r / math.log(call.n) ** (2 / 3)),
        on_output("log_j_linear", "ln J in place of ln^{2/3} J", "rate_theorem8",
                  lambda r, call: r * math.log(call.J) ** (1 / 3)),
    ),
)


# --- Theorem 11 -----------------------------------------------------------------------------------------------

def _rate11_derivative(d, p, eps, delta, wrt):
    """The log-derivative of Theorem 11's printed rate in n (wrt="n") or in ε (wrt="eps"), as a function of that
    argument (mpmath): the share-weighted mean of the two terms' log-derivatives."""
    def s(x):
        n, e = (x, eps) if wrt == "n" else (10**6, x)
        statistical, private = _mp_rate11_terms(n, d, p, e, delta, 1, 1, 1)
        share = private / (statistical + private)
        if wrt == "n":
            ln_n = mpmath.log(n)
            return (1 - share) * (-mpmath.mpf(1) / 3 + (mpmath.mpf(2) / 3) / ln_n) + share * (
                -mpmath.mpf(2) / 5 + (mpmath.mpf(4) / 5) / ln_n)
        return share * (-mpmath.mpf(2) / 5)
    return s


#: (d, p, ε, δ, [n1, n2]): the private term dominates (slope near −2/5), the statistical one (near −1/3), mixed.
RATE11_REGIMES = (
    ("private", 10**4, 1.5, 0.1, 1e-8, (10**3, 10**4)),
    ("statistical", 2, 2.0, 1e4, 1e-2, (10**14, 10**15)),
    ("mixed", 10, 2.0, 1.0, 1e-6, (10**12, 10**13)),
)


def _check_rate11(subject, ctx):
    problems, gen = [], ctx.generator("arguments")
    with mpmath.workdps(DIGITS):
        for _ in range(ctx.budget.pick(quick=60, full=1500)):
            n, d = int(_log_uniform(gen, 10, 1e15)), int(_log_uniform(gen, 2, 1e6))
            p = float(gen.choice([gen.uniform(1.001, 2.0), 2.0]))
            rest = (_log_uniform(gen, 1e-3, 1e2), _log_uniform(gen, 1e-12, 0.5), _log_uniform(gen, 1e-2, 1e2),
                    _log_uniform(gen, 1e-2, 1e2), _log_uniform(gen, 1e-2, 1e2))
            args = (n, d, p, *rest)
            _agreement("rate_theorem11", subject.rate_theorem11(*args), sum(_mp_rate11_terms(*args)), args, problems)
            if problems:
                break  # one counterexample decides
    if problems:
        return deterministic(False, detail=problems[0], counterexample=problems)
    trends = []
    for name, d, p, eps, delta, (n1, n2) in RATE11_REGIMES:
        got = _secant(lambda n: subject.rate_theorem11(n, d, p, eps, delta, 1.0, 1.0, 1.0), n1, n2)
        want = _mean_log_derivative(_rate11_derivative(d, p, eps, delta, "n"), n1, n2)
        trends.append((name, got))
        if not abs(got - want) <= _slope_tolerance(n2 / n1):
            problems.append(f"slope in n ({name}: d = {d}, p = {p}, ε = {eps}) over [{n1:.0e}, {n2:.0e}]: {got!r}, "
                            f"printed {want!r}")
    eps_got = _secant(lambda e: subject.rate_theorem11(10**6, 10, 2.0, e, 1e-6, 1.0, 1.0, 1.0), 0.1, 10.0)
    eps_want = _mean_log_derivative(_rate11_derivative(10, 2.0, None, 1e-6, "eps"), 0.1, 10.0)
    if not abs(eps_got - eps_want) <= _slope_tolerance(100.0):
        problems.append(f"slope in ε over [0.1, 10] at n = 1e6, d = 10, p = 2: {eps_got!r}, printed {eps_want!r}")
    # at p = 2 (κ = κ̃ = 1) d enters only through d^{1/5} in the private term: compare with the exact secant
    with mpmath.workdps(DIGITS):
        exact = [sum(_mp_rate11_terms(10**4, d, 2.0, 0.1, 1e-6, 1, 1, 1)) for d in (10, 10**4)]
        d_want = float(mpmath.log(exact[1] / exact[0]) / mpmath.log(1000))
    d_got = _secant(lambda d: subject.rate_theorem11(10**4, int(d), 2.0, 0.1, 1e-6, 1.0, 1.0, 1.0), 10, 10**4)
    if not (abs(d_got - d_want) <= _slope_tolerance(1000.0) and d_got <= 1 / 5):
        problems.append(f"slope in d at p = 2 over [10, 1e4]: {d_got!r}, printed {d_want!r} (at most 1/5)")
    if problems:
        return deterministic(False, detail="; ".join(problems[:3]), counterexample=problems[:10])
    return deterministic(True, statistic=trends[0][1], bound=-0.4,
                         detail="rate_theorem11 equals the printed expression (mpmath) on random arguments; log-log "
                                "slope in n (exact mean of the printed log-derivative): "
                                + ", ".join(f"{name} {got:.4f}" for name, got in trends)
                                + f" (−2/5 + (4/5)/ln n where the private term dominates, −1/3 + (2/3)/ln n where the "
                                  f"statistical one does); in ε at n = 1e6, d = 10: {eps_got:.4f}; in d at p = 2, "
                                  f"n = 1e4, ε = 0.1: {d_got:.4f} (≤ 1/5)")


def _rate11_private_exponent_third(call):
    """Theorem 11's rate with the private term decaying like n^{−1/3} (the statistical exponent)."""
    n, d, p, eps, delta, D, L0, L1 = (call.n, call.d, call.p, call.eps, call.delta, call.D, call.L0, call.L1)
    k = min(1 / (p - 1), 2 * math.log(d))
    kt = 1 + (math.log(d) if p < 2 else 0.0)
    ln_n = math.log(n)
    return D * (L0 + L1 * D) * k ** (2 / 3) * (ln_n ** (2 / 3) / n ** (1 / 3) + (d * kt * math.log(1 / delta)) ** (
        1 / 5) * ln_n ** (4 / 5) / (n ** (1 / 3) * eps ** (2 / 5)))


THEOREM11_RATE = Claim(
    id="bgm21.thm11.gap_rate",
    paper="bgm21",
    location="Theorem 11",
    statement=(
        "Theorem 11's bound on E Gap(ŵ) of Algorithm 6 is D(L0 + L1D)κ^{2/3}(ln^{2/3}n/n^{1/3} + "
        "d^{1/5}κ̃^{1/5}ln^{1/5}(1/δ)ln^{4/5}n/(n^{2/5}ε^{2/5})) with κ = min{1/(p−1), 2 ln d} (constant 1): its "
        "log-log slope in n moves from −2/5 + (4/5)/ln n where the private term dominates to −1/3 + (2/3)/ln n where "
        "the statistical term does; in ε it is −2/5 times the private term's share, and at p = 2 the rate grows at "
        "most like d^{1/5}."
    ),
    kind="rate",
    requires=("rate_theorem11",),
    check=_check_rate11,
    mutants=(
        substitute("private_exponent_third", "the private term decays like n^{−1/3} instead of n^{−2/5}",
                   "rate_theorem11", _rate11_private_exponent_third),
        on_output("kappa_dropped", "the factor κ^{2/3} dropped", "rate_theorem11",
                  lambda r, call: r / min(1 / (call.p - 1), 2 * math.log(call.d)) ** (2 / 3)),
    ),
)


# --- Theorem 16 -----------------------------------------------------------------------------------------------

#: (regime, d, p, ρ, L0, D, ε, δ, [n1, n2]) for ϑ's and R's slopes in n.
RATE16_REGIMES = (
    ("statistical", 2, 2.0, 1.0, 1.0, 1.0, 1e3, 1e-2, (10**12, 10**14)),
    ("private", 10**4, 1.0, 1.0, 1.0, 1.0, 0.1, 1e-8, (10**2, 10**4)),
    ("mixed", 100, 1.5, 0.5, 2.0, 1.0, 1.0, 1e-6, (10**5, 10**7)),
)


def _rate16_derivative(d, p, rho, L0, D, eps, delta):
    def s(n):
        statistical, private = _mp_rate16_terms(n, d, p, rho, L0, D, eps, delta)
        share = private / (statistical + private)
        return (1 - share) * (-mpmath.mpf(1) / 4) + share * (-mpmath.mpf(1) / 3)
    return s


def _check_rate16(subject, ctx):
    problems, gen = [], ctx.generator("arguments")
    with mpmath.workdps(DIGITS):
        for _ in range(ctx.budget.pick(quick=60, full=1500)):
            n, d = int(_log_uniform(gen, 2, 1e15)), int(_log_uniform(gen, 2, 1e6))
            p = float(gen.choice([1.0, gen.uniform(1.0, 2.0), 2.0]))
            rho, L0, D = (_log_uniform(gen, 1e-2, 1e2) for _ in range(3))
            eps, delta = _log_uniform(gen, 1e-3, 1e2), _log_uniform(gen, 1e-12, 0.5)
            args = (n, d, p, rho, L0, D, eps, delta)
            _agreement("rate_theorem16", subject.rate_theorem16(*args), sum(_mp_rate16_terms(*args)), args, problems)
            params = subject.theorem16_params(*args)
            _agreement("theorem16_params.n_rounds_real", params.n_rounds_real, min(_mp_rounds16(*args)), args,
                       problems)
            if problems:
                break  # one counterexample decides
    if problems:
        return deterministic(False, detail=problems[0], counterexample=problems)
    trends = []
    for name, d, p, rho, L0, D, eps, delta, (n1, n2) in RATE16_REGIMES:
        args = (d, p, rho, L0, D, eps, delta)
        got = _secant(lambda n: subject.rate_theorem16(n, *args), n1, n2)
        want = _mean_log_derivative(_rate16_derivative(*args), n1, n2)
        rounds = _secant(lambda n: subject.theorem16_params(n, *args).n_rounds_real, n1, n2)
        with mpmath.workdps(DIGITS):
            branches = [_mp_rounds16(n, *args) for n in (n1, n2)]
            terms = [_mp_rate16_terms(n, *args) for n in (n1, n2)]
            rounds_want = float(mpmath.log(min(branches[1]) / min(branches[0])) / mpmath.log(mpmath.mpf(n2) / n1))
            # the branch R takes is the dominant term of ϑ: (private/statistical)² = first/second, identically
            for (first, second), (statistical, private) in zip(branches, terms):
                identity = (private / statistical) ** 2 / (first / second)
                if not abs(identity - 1) <= mpmath.mpf(10) ** (-DIGITS + 5):
                    problems.append(f"({name}) the regime identity fails: {float(identity)!r}")
        trends.append((name, got, rounds))
        if not abs(got - want) <= _slope_tolerance(n2 / n1):
            problems.append(f"ϑ slope in n ({name}) over [{n1:.0e}, {n2:.0e}]: {got!r}, printed {want!r}")
        if not abs(rounds - rounds_want) <= _slope_tolerance(n2 / n1):
            problems.append(f"R slope in n ({name}) over [{n1:.0e}, {n2:.0e}]: {rounds!r}, printed {rounds_want!r}")
    if problems:
        return deterministic(False, detail="; ".join(problems[:3]), counterexample=problems[:10])
    return deterministic(True, statistic=trends[0][1], bound=-0.25,
                         detail="rate_theorem16 and theorem16_params' real R equal eq. (7) and Theorem 16's R (mpmath) "
                                "on random arguments; log-log slopes in n (ϑ, R): "
                                + ", ".join(f"{name} ({got:.4f}, {rounds:.4f})" for name, got, rounds in trends)
                                + " (−1/4 and 1/2 where the statistical term dominates, −1/3 and 2/3 where the private "
                                  "one does)")


def _rate16_statistical_third(call):
    """eq. (7) with the statistical term decaying like (nρ)^{−1/3}."""
    k = math.log(call.d) if call.p == 1.0 else min(1 / (call.p - 1), math.log(call.d))
    kt = 1 + (math.log(call.d) if call.p < 2 else 0.0)
    rho, L0, D, n = call.rho_wc, call.L0, call.D, call.n
    return (max(1.0, 2 * rho * D * k) / math.sqrt(rho)) * (
        L0 ** 0.75 * (k * D) ** 0.25 / (n * rho) ** (1 / 3)
        + (kt * k**2) ** (1 / 6) * (L0**2 * D) ** (1 / 3)
        * (call.d * math.log(1 / call.delta) / ((n * call.eps) ** 2 * rho)) ** (1 / 6))


def _rounds_second_branch_half(params, call):
    """R's private branch with exponent 1/2 (as the statistical one) instead of 1/3."""
    k, kt = params.kappa, params.kappa_tilde
    second = (kt * k**2) ** (-1 / 3) * (call.D * (call.n * call.eps) ** 2 * call.rho_wc
                                        / (call.L0 * call.d * math.log(1 / call.delta))) ** (1 / 2)
    first = math.sqrt(call.n * call.D * call.rho_wc / (k * call.L0))
    return dataclasses.replace(params, n_rounds_real=min(first, second))


THEOREM16_RATE = Claim(
    id="bgm21.thm16.vartheta_rate",
    paper="bgm21",
    location="Theorem 16, eq. (7) and R",
    statement=(
        "Theorem 16's ϑ (eq. (7), constant 1) is (max{1, 2ρDκ}/√ρ)(L0^{3/4}(κD)^{1/4}/(nρ)^{1/4} + "
        "(κ̃κ²)^{1/6}(L0²D)^{1/3}(d ln(1/δ)/((nε)²ρ))^{1/6}) with κ = min{1/(p−1), ln d}, and R = min{√(nDρ/(κL0)), "
        "(κ̃κ²)^{−1/3}(D(nε)²ρ/(L0 d ln(1/δ)))^{1/3}}: ϑ falls like n^{−1/4} where the statistical term dominates and "
        "like n^{−1/3} where the private one does, R grows like n^{1/2} and n^{2/3} in the same two regimes, and "
        "the branch of the min is always the dominant term ((private/statistical)² = first/second branch)."
    ),
    kind="rate",
    requires=("rate_theorem16", "theorem16_params"),
    check=_check_rate16,
    mutants=(
        substitute("statistical_exponent_third", "ϑ's statistical term decays like (nρ)^{−1/3} instead of ^{−1/4}",
                   "rate_theorem16", _rate16_statistical_third),
        on_output("front_factor_dropped", "ϑ without the factor max{1, 2ρDκ}/√ρ", "rate_theorem16",
                  lambda r, call: r * math.sqrt(call.rho_wc) / max(
                      1.0, 2 * call.rho_wc * call.D * (math.log(call.d) if call.p == 1.0
                                                       else min(1 / (call.p - 1), math.log(call.d))))),
        on_output("rounds_private_exponent_half", "R's private branch with exponent 1/2 instead of 1/3",
                  "theorem16_params", _rounds_second_branch_half),
    ),
)


# --- Theorem 5 ------------------------------------------------------------------------------------------------

#: The band [LOWER, UPPER] of _phased_sgd_bound / (L0R_xD(√(d ln(1/δ))/(nε) + 1/√n)), derived in its docstring.
THEOREM5_LOWER, THEOREM5_UPPER = 1.0, 273.0


def _phased_sgd_bound(params) -> float:
    """The excess-risk bound of Phased-SGD with Algorithm 3's oracle, evaluated with Theorem 5's settings.

    F(w_k) − F(w*) ≤ 2·(2L0²/β)   [Lemma 3's |f − f_β| ≤ 2L0²/β, at w_k and at w*]
                    + k·αD          [the oracle's bias α (Lemma 4) costs at most αD per phase]
                    + D²/(2η_1n_1) + Σ_i η_iL²/2 + Σ_{i≥2} σ_{i−1}²d/(2η_in_i) + Lσ_k√d
    (the phase analysis of [FKT20]: phase i's SGD from the noisy w_{i−1} with E‖w_{i−1} − w̄_{i−1}‖² = σ²_{i−1}d, and
    the last phase's noise through the L-Lipschitz f_β). With η = (D/L)m, m = min{4/√n, ε/√(d ln(1/δ))},
    L = 2L0R_x, η_i = η/4^i, n_i = ⌊n/2^i⌋ ≥ n/2^{i+1}, σ_i = 4Lη_i√ln(1/δ)/ε, a = 1/√n, b = √(d ln(1/δ))/(nε):
      D²/(2η_1n_1) ≤ 8D²/(ηn) ≤ 4L0R_xD·a + 16L0R_xD·b and ≥ 4D²/(ηn) ≥ 2L0R_xD·max(a, 4b) ≥ L0R_xD(a + b);
      Σ η_iL²/2 ≤ ηL²/6 ≤ (4/3)L0R_xD·a;  Σ_{i≥2} σ²_{i−1}d/(2η_in_i) ≤ 128L²ηd ln(1/δ)/(nε²) ≤ 256L0R_xD·b;
      Lσ_k√d ≤ 16LD/n² ≤ 32L0R_xD·a;  4L0²/β = 4L0R_xD·a;  kαD ≤ L0R_xD/(n ln 2) ≤ 1.45L0R_xD·a.
    So the bound lies in [1, 43·a-coefficient ∨ 272·b-coefficient] ⊂ [1, 273]·L0R_xD(a + b).
    """
    L, D, d = params.lipschitz, params.D, params.d
    sizes, steps, sigmas = params.phase_sizes, params.phase_step_sizes, params.phase_sigmas
    smoothing = 2 * 2 * params.L0**2 / params.beta_smooth
    bias = len(sizes) * params.alpha * D
    optimisation = D**2 / (2 * steps[0] * sizes[0]) + sum(eta * L**2 / 2 for eta in steps)
    noise = sum(sigmas[i - 1] ** 2 * d / (2 * steps[i] * sizes[i]) for i in range(1, len(sizes)))
    return smoothing + bias + optimisation + noise + L * sigmas[-1] * math.sqrt(d)


def _theorem5_rate(params) -> float:
    return params.L0 * params.R_x * params.D * (
        math.sqrt(params.d * math.log(1 / params.delta)) / (params.n * params.eps) + 1 / math.sqrt(params.n))


def _check_theorem5(subject, ctx):
    gen, ratios, problems = ctx.generator("problems"), [], []
    for _ in range(ctx.budget.pick(quick=60, full=600)):
        n, d = int(_log_uniform(gen, 4, 1e12)), int(_log_uniform(gen, 1, 1e6))
        L0, R_x, D = (_log_uniform(gen, 1e-2, 1e2) for _ in range(3))
        eps, delta = _log_uniform(gen, 1e-2, 1e1), _log_uniform(gen, 1e-10, 1e-2)
        params = subject.theorem5_params(n, d, L0, R_x, D, eps, delta)
        ratio = _phased_sgd_bound(params) / _theorem5_rate(params)
        ratios.append(ratio)
        if not THEOREM5_LOWER * (1 - RELATIVE) <= ratio <= THEOREM5_UPPER * (1 + RELATIVE):
            problems.append(f"(n, d, L0, R_x, D, ε, δ) = ({n}, {d}, {L0:.3g}, {R_x:.3g}, {D:.3g}, {eps:.3g}, "
                            f"{delta:.3g}): bound/rate = {ratio:.4g}")
    # the two regimes: the 1/√n term (n = 1e12, d = 1, ε = 10) and the private term (n = 1e4, d = 1e6, ε = 0.01)
    regimes = {}
    for name, (n1, n2, d, eps) in {"statistical": (10**10, 10**12, 1, 10.0),
                                   "private": (10**3, 10**5, 10**6, 0.01)}.items():
        values = [_phased_sgd_bound(subject.theorem5_params(n, d, 1.0, 1.0, 1.0, eps, 1e-6)) for n in (n1, n2)]
        regimes[name] = math.log(values[1] / values[0]) / math.log(n2 / n1)
    if problems:
        return deterministic(False, statistic=max(ratios), bound=THEOREM5_UPPER, detail="; ".join(problems[:3]),
                             counterexample=problems[:10])
    return deterministic(True, statistic=max(ratios), bound=THEOREM5_UPPER,
                         detail=f"bound/(L0R_xD(√(d ln(1/δ))/(nε) + 1/√n)) ∈ [{min(ratios):.3f}, {max(ratios):.3f}] "
                                f"⊂ [{THEOREM5_LOWER:g}, {THEOREM5_UPPER:g}] over random (n ∈ [4, 1e12], d ∈ [1, 1e6], "
                                f"ε, δ, L0, R_x, D); log-log slope of the bound in n: {regimes['statistical']:.4f} "
                                f"(1/√n regime) and {regimes['private']:.4f} (private regime, rate slope −1)")


THEOREM5_RATE = Claim(
    id="bgm21.thm5.excess_rate",
    paper="bgm21",
    location="Theorem 5 (with Lemmas 3 and 4 and the Phased-SGD analysis of FKT20, rebuilt: bgm21.E1)",
    statement=(
        "With Theorem 5's β = √n·L0/(R_xD) (bgm21.E2), α = L0R_x/(n ln n) and the Phased-SGD step η = "
        "(D/L)min{4/√n, ε/√(d ln(1/δ))}, the excess-risk bound that Lemma 3's smoothing error, the oracle's bias "
        "and the phase analysis of Phased-SGD give is within a constant factor ([1, 273]) of "
        "L0R_xD(√(d ln(1/δ))/(nε) + 1/√n) for every n, d, ε, δ, L0, R_x, D: it falls like 1/√n where that term "
        "dominates and like 1/n in the private regime."
    ),
    kind="rate",
    requires=("theorem5_params",),
    check=_check_theorem5,
    mutants=(
        on_output("step_without_privacy_branch", "the step η = 4D/(L√n), without the ε/√(d ln(1/δ)) branch",
                  "theorem5_params", lambda p, call: _with_step(p, (p.D / p.lipschitz) * 4 / math.sqrt(p.n))),
        on_output("step_without_dimension", "η = (D/L)min{4/√n, ε} (the √(d ln(1/δ)) of the private branch dropped)",
                  "theorem5_params", lambda p, call: _with_step(p, (p.D / p.lipschitz) * min(4 / math.sqrt(p.n),
                                                                                             p.eps))),
        on_output("step_over_n", "η = (D/L)min{4/n, ε/√(d ln(1/δ))} (a 1/n step)", "theorem5_params",
                  lambda p, call: _with_step(p, (p.D / p.lipschitz) * min(4 / p.n, p.eps / math.sqrt(
                      p.d * math.log(1 / p.delta))))),
    ),
)


def _with_step(params, step):
    """Theorem 5's settings with another base step η (phase steps η/4^i and noise scales σ_i recomputed)."""
    k = len(params.phase_sizes)
    steps = tuple(step / 4.0**i for i in range(1, k + 1))
    sigmas = tuple(4 * params.lipschitz * eta * math.sqrt(math.log(1 / params.delta)) / params.eps for eta in steps)
    return dataclasses.replace(params, step_size=step, phase_step_sizes=steps, phase_sigmas=sigmas)


# --- Theorem 6 ------------------------------------------------------------------------------------------------

def _mp_theorem6_first_term(n, J, L0, R_x, D, eps, delta):
    n, J, L0, R_x, D, eps, delta = map(mpmath.mpf, (n, J, L0, R_x, D, eps, delta))
    return L0 * R_x * D * mpmath.log(1 / delta) ** (mpmath.mpf(1) / 4) * mpmath.sqrt(mpmath.log(J) * mpmath.log(n)) / (
        mpmath.sqrt(n * eps))


def _check_theorem6(subject, ctx):
    gen, problems = ctx.generator("problems"), []
    with mpmath.workdps(DIGITS):
        # n ≤ 3000 keeps T (∝ n) and the exact composition certificate of theorem6_params cheap
        for _ in range(ctx.budget.pick(quick=25, full=250)):
            n, J = int(_log_uniform(gen, 10, 3e3)), int(_log_uniform(gen, 2, 1e9))
            L0, R_x, D = (_log_uniform(gen, 1e-2, 1e2) for _ in range(3))
            eps, delta = _log_uniform(gen, 1e-2, 1e1), _log_uniform(gen, 1e-10, 1e-2)
            params = subject.theorem6_params(n, 10, J, L0, R_x, D, D / 2, eps, delta)
            smoothing = 2 * L0**2 / params.beta_smooth
            _agreement("2L0²/β", smoothing, 2 * _mp_theorem6_first_term(n, J, L0, R_x, D, eps, delta),
                       (n, J, L0, R_x, D, eps, delta), problems)
            if problems:
                break  # one counterexample decides
    # J only through ln J: β ∝ (ln J)^{−1/2}, so the smoothing term's slope against ln J is exactly 1/2
    Js = (2, 16, 10**3, 10**6, 2**62)
    betas = [subject.theorem6_params(10**3, 10, J, 1.0, 1.0, 2.0, 1.0, 1.0, 1e-6).beta_smooth for J in Js]
    slopes = [math.log(betas[i] / betas[i + 1]) / math.log(math.log(Js[i + 1]) / math.log(Js[i]))
              for i in range(len(Js) - 1)]
    for (J1, J2), slope in zip(zip(Js, Js[1:]), slopes):
        if not abs(slope - 0.5) <= _slope_tolerance(math.log(J2) / math.log(J1)):
            problems.append(f"slope of 2L0²/β against ln J over J ∈ [{J1}, {J2}]: {slope!r}, printed 1/2")
    # and not through d (the √(ln d)/√n term of the rate is the generalization gap, not a setting)
    base = subject.theorem6_params(10**3, 2, 100, 1.0, 1.0, 2.0, 1.0, 1.0, 1e-6)
    for d in (10, 10**4, 10**7):
        other = subject.theorem6_params(10**3, d, 100, 1.0, 1.0, 2.0, 1.0, 1.0, 1e-6)
        if (other.beta_smooth, other.steps, other.lap_scale) != (base.beta_smooth, base.steps, base.lap_scale):
            problems.append(f"d = {d} changes (β, T, λ) from {(base.beta_smooth, base.steps, base.lap_scale)} to "
                            f"{(other.beta_smooth, other.steps, other.lap_scale)}")
    if problems:
        return deterministic(False, detail="; ".join(problems[:3]), counterexample=problems[:10])
    return deterministic(True, statistic=slopes[0], bound=0.5,
                         detail="Lemma 3's smoothing error 2L0²/β at Theorem 6's β equals 2L0R_xD·ln^{1/4}(1/δ)"
                                "√(ln J ln n)/√(nε) (mpmath) on random problems; its slope against ln J: "
                                + ", ".join(f"{s:.12f}" for s in slopes)
                                + " (exactly 1/2); (β, T, λ) do not depend on d")


THEOREM6_LOG_J = Claim(
    id="bgm21.thm6.log_j_dependence",
    paper="bgm21",
    location="Theorem 6 (with Lemma 3)",
    statement=(
        "At Theorem 6's β = L0√(nε)/(R_xD ln^{1/4}(1/δ)√(ln J ln n)), Lemma 3's smoothing error 2L0²/β is "
        "2L0R_xD·ln^{1/4}(1/δ)√(ln J ln n)/√(nε), twice the first term of the rate: the number J of vertices enters "
        "the settings only through ln J, and the bound only through √ln J; the settings (β, T, λ) do not depend on d."
    ),
    kind="rate",
    requires=("theorem6_params",),
    check=_check_theorem6,
    mutants=(
        on_output("beta_log_j_linear", "β with ln J in place of √ln J", "theorem6_params",
                  lambda p, call: dataclasses.replace(p, beta_smooth=p.beta_smooth / math.sqrt(math.log(call.J)))),
        on_output("beta_log_n_dropped", "β without the √ln n", "theorem6_params",
                  lambda p, call: dataclasses.replace(p, beta_smooth=p.beta_smooth * math.sqrt(math.log(call.n)))),
        on_output("steps_grow_with_d", "T scaled by ⌈log10 d⌉ (a d-dependent iteration count)", "theorem6_params",
                  lambda p, call: dataclasses.replace(p, steps=p.steps * max(1, math.ceil(math.log10(call.d))))),
    ),
)
