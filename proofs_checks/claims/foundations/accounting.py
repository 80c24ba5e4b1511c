"""Privacy accounting: dpzero Lemma 2.2, §5 and App. B.2 (the RDP accountant of the experiments, its calibration),
zo_o2nc §2 and §4.2 (Gaussian RDP, composition, RDP → DP and zCDP → DP conversions, the exact Gaussian profile).

Every check calls only the subject's accounting protocols (``proofs_checks.protocols``), so the claims run on
``reference``, ``fast`` and the library adapters (``--subject dp_accounting.rdp`` …) alike. Ground truth comes
from closed forms evaluated independently in mpmath: the exact Gaussian-DP profile (``reference.accounting.gaussian``,
Balle–Wang 2018 / Dong–Roth–Su 2022), the exact hockey-stick divergence of one Poisson-subsampled Gaussian step
(written out here), mpmath quadrature of the defining integrals.

Tolerances: identities that float64 evaluates with a handful of roundings are held to 1e-12 relative; values
compared with an mpmath ground truth to 1e-10 relative (what a float64 implementation that works in log space
reaches; ``reference.fast`` measures ~1e-13); privacy inequalities (ε ≥ the exact ε, ε(z) ≤ target) are strict,
with no slack beyond 1e-9 relative on a δ recomputed from a float ε. Libraries with a stated error (PRV's
eps_error 0.01, a PLD grid) are compared only where their error does not matter: the monotonicity grids move ε
by far more than 0.01, the calibration looseness allowance is Opacus's 0.01.

The two broken Gaussian profiles ``PROFILE_SIGN_LOST`` and ``PROFILE_COMPLEMENT_CDF`` are public: the backend
and erratum claims reuse them.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from scipy import special

from proofs_checks.authoring import Claim, Mutant, deterministic, on_output, rebind, substitute
from reference.accounting.rdp import rdp_poisson_gaussian_quadrature
from reference.precision import working_precision

from ._accounting_helpers import (
    DEFAULT_ORDERS,
    EXACT_RTOL,
    IDENTITY_RTOL,
    PRIVACY_SLACK,
    SMALLEST_DELTA,
    TRUTH_DPS,
    array,
    entrywise_relative,
    exact_delta,
    exact_epsilon,
)

#: Opacus's epsilon_tolerance: a calibration leaving more than this much ε unused is needlessly loose
LOOSENESS = 0.01


def _log10_for_ln(delta):
    """δ^(1/ln 10): passing it where δ is meant turns every ln δ into log10 δ."""
    return delta ** (1.0 / math.log(10.0))


# --- dpzero §5, App. B.2: RDP composes additively ------------------------------------------------------------

def _check_composition(subject, ctx):
    orders = np.array(ctx.budget.pick(quick=(1.5, 2.0, 3.7, 8.0, 16.0, 63.0),
                                      full=(1.1, 1.5, 2.0, 3.7, 8.0, 10.9, 16.0, 32.0, 63.0, 128.0, 1024.0)))
    pairs = ctx.budget.pick(quick=[(0.01, 1.0), (0.2, 2.5), (1.0, 0.8)],
                            full=[(0.01, 1.0), (0.2, 2.5), (1.0, 0.8), (1e-3, 5.0), (0.5, 0.6), (0.0625, 13.5)])
    worst, where = 0.0, "nothing checked"

    def note(err, label):
        nonlocal worst, where
        if not err <= worst:  # also catches nan
            worst, where = err, label

    for q, z in pairs:
        one = array(subject.rdp_poisson_gaussian(orders, q, z, 1))
        for steps in (2, 7, 1000):
            got = subject.rdp_poisson_gaussian(orders, q, z, steps)
            note(entrywise_relative(got, steps * one), f"rdp(T={steps}) vs T*rdp(1), q={q}, z={z}")
        for t1, t2 in ((3, 4), (400, 600)):
            split = array(subject.rdp_poisson_gaussian(orders, q, z, t1)) + array(
                subject.rdp_poisson_gaussian(orders, q, z, t2))
            note(entrywise_relative(subject.rdp_poisson_gaussian(orders, q, z, t1 + t2), split),
                 f"rdp(T={t1}+{t2}) vs rdp({t1}) + rdp({t2}), q={q}, z={z}")
    # heterogeneous: Gaussians with different noise compose to the Gaussian with 1/z² = Σ T_i/z_i²
    for (z1, t1), (z2, t2) in (((0.8, 3), (2.5, 10)), ((5.0, 1000), (1.2, 1))):
        composed = array(subject.rdp_poisson_gaussian(orders, 1.0, z1, t1)) + array(
            subject.rdp_poisson_gaussian(orders, 1.0, z2, t2))
        z_eff = 1.0 / math.sqrt(t1 / z1**2 + t2 / z2**2)
        note(entrywise_relative(composed, subject.rdp_poisson_gaussian(orders, 1.0, z_eff, 1)),
             f"Gaussians z={z1} x{t1} and z={z2} x{t2} vs one Gaussian z={z_eff:.6g}")
    return deterministic(worst <= IDENTITY_RTOL, statistic=worst, bound=IDENTITY_RTOL,
                         detail=f"largest relative deviation from additivity at: {where} (orders {orders.tolist()})")


COMPOSITION_ADDITIVITY = Claim(
    id="dpzero.sec5_3.composition_additivity",
    paper="dpzero",
    location="§5 and App. B.2 (RDP accountant of the experiments: RDP(α) = T log(A_α)/(α − 1)); Mironov 2017 "
             "Prop. 1; zo_o2nc §4.2 (RDP composition)",
    statement=(
        "RDP composes additively: for the Poisson-subsampled Gaussian rdp(T) = T rdp(1) and rdp(T1 + T2) = "
        "rdp(T1) + rdp(T2) at every order, and Gaussians with noise multipliers z_i run T_i times compose to "
        "the Gaussian with 1/z^2 = sum T_i/z_i^2; relative 1e-12 (float64 rounding of a product or sum)."
    ),
    kind="deterministic",
    requires=("rdp_poisson_gaussian",),
    check=_check_composition,
    mutants=(
        rebind("steps_ignored", "returns the RDP of one step whatever the step count", "rdp_poisson_gaussian",
               steps=1),
        rebind("steps_minus_one", "composes T - 1 steps (off by one)", "rdp_poisson_gaussian",
               steps=lambda steps: max(int(steps) - 1, 0)),
    ),
)


# --- dpzero §5, App. B.2: ε is monotone in z, q, steps and δ ---------------------------------------------------

def _monotonicity_sweeps(ctx):
    """(label, parameter name, values, argument tuples (q, z, T, δ), +1 increasing / −1 decreasing)."""
    base_q, base_z, base_t, base_delta = 0.05, 1.0, 200, 1e-5
    z_values = (0.7, 1.0, 1.4, 2.0, 4.0)
    sweeps = [("z at q=1, T=100", "z", z_values, [(1.0, z, 100, base_delta) for z in z_values], -1)]
    q_values = ctx.budget.pick(quick=(0.02, 0.05, 1.0), full=(0.001, 0.01, 0.02, 0.05, 0.2, 0.5, 1.0))
    sweeps.append((f"q at z={base_z}, T={base_t}", "q", q_values,
                   [(q, base_z, base_t, base_delta) for q in q_values], +1))
    step_values = ctx.budget.pick(quick=(1, 10, 100, 500, 1500, 5000), full=(1, 10, 100, 500, 1500, 5000, 20000))
    sweeps.append((f"steps at q={base_q}, z={base_z}", "T", step_values,
                   [(base_q, base_z, t, base_delta) for t in step_values], +1))
    delta_values = (1e-10, 1e-7, 1e-5, 1e-3, 1e-1)
    sweeps.append((f"delta at q={base_q}, z={base_z}, T={base_t}", "delta", delta_values,
                   [(base_q, base_z, base_t, d) for d in delta_values], -1))
    if ctx.budget.name == "full":
        z_sub = (0.7, 1.0, 1.4, 2.0)
        sweeps.append((f"z at q={base_q}, T={base_t}", "z", z_sub, [(base_q, z, base_t, base_delta) for z in z_sub], -1))
    return sweeps


def _check_monotonicity(subject, ctx):
    smallest, where, failure = math.inf, "", None
    for label, name, values, arguments, direction in _monotonicity_sweeps(ctx):
        eps = [float(subject.epsilon_poisson_gaussian(*args)) for args in arguments]
        if not all(np.isfinite(e) and e > 0 for e in eps):
            failure = failure or f"{label}: epsilon not finite and > 0 on the grid: {eps}"
            continue
        for (v0, e0), (v1, e1) in zip(zip(values, eps), zip(values[1:], eps[1:])):
            step = direction * (e1 - e0) / e0  # relative change in the claimed direction
            if step < smallest:
                smallest, where = step, f"{label}: {name} {v0} -> {v1} gives eps {e0:.6g} -> {e1:.6g}"
    if failure:
        return deterministic(False, detail=failure)
    return deterministic(smallest > 0, statistic=smallest, bound=0.0,
                         detail=f"smallest relative change of eps in the claimed direction (must be > 0) at: {where}")


MONOTONICITY = Claim(
    id="dpzero.sec5_3.monotonicity",
    paper="dpzero",
    location="§5 and App. B.2 (RDP accountant and its conversion to (ε, δ)); Opacus get_noise_multiplier's "
             "bisection relies on it",
    statement=(
        "The accountant's epsilon for T Poisson-subsampled Gaussian steps is strictly decreasing in the noise "
        "multiplier z, strictly increasing in the sampling probability q and in T, and strictly decreasing in "
        "delta, on grids where epsilon > 0 (z in 0.7..4, q in 0.02..1, T in 1..5000, delta in 1e-10..0.1; full: "
        "q from 1e-3, T to 20000, a z sweep at q = 0.05; every grid step moves epsilon by 18% or more, far beyond "
        "a library's stated error)."
    ),
    kind="deterministic",
    requires=("epsilon_poisson_gaussian",),
    check=_check_monotonicity,
    mutants=(
        rebind("steps_wrap", "the step counter wraps at 1000 (counted per epoch and reset)",
               "epsilon_poisson_gaussian", steps=lambda steps: int(steps) % 1000),
        rebind("noise_inverted", "uses 1/z where z is meant (noise multiplier confused with mu = 1/z)",
               "epsilon_poisson_gaussian", noise_multiplier=lambda z: 1.0 / z),
        rebind("delta_as_confidence", "reads delta as the confidence 1 - delta",
               "epsilon_poisson_gaussian", delta=lambda delta: 1.0 - delta),
    ),
)


# --- zo_o2nc §2, §4.2: an RDP-derived ε is never below the exact ε --------------------------------------------

#: compositions of T Gaussian steps are kept to mu = sqrt(T)/z <= 20 (exact eps below ~400 at delta >= 1e-15)
MAX_MU = 20.0


def _hockey_stick_remove(epsilon, q, z):
    """Exact δ(ε) of ONE Poisson-subsampled Gaussian step, remove direction (a lower bound on the mechanism's δ
    under add/remove): δ = ∫ (μ − e^ε μ0)_+ with μ0 = N(0, z²), μ = (1−q)μ0 + q N(1, z²).

    The privacy loss log(1 − q + q e^{(2x−1)/(2z²)}) increases in x, so the region is x > x_ε with
    x_ε = z² log((e^ε − 1 + q)/q) + 1/2, and δ = (1−q)Φ̄(x_ε/z) + qΦ̄((x_ε−1)/z) − e^ε Φ̄(x_ε/z). Evaluated at
    60 digits (the difference cancels about log10(1/δ) of them; the grids keep δ ≥ 1e-12).
    """
    with mpmath.workdps(60):
        eps, q, z = mpmath.mpf(float(epsilon)), mpmath.mpf(float(q)), mpmath.mpf(float(z))
        x = z**2 * mpmath.log((mpmath.exp(eps) - 1 + q) / q) + mpmath.mpf(1) / 2
        tail = lambda m: mpmath.ncdf(-(x - m) / z)  # noqa: E731
        return (1 - q) * tail(0) + q * tail(1) - mpmath.exp(eps) * tail(0)


def _hockey_stick_epsilon(delta, q, z) -> float:
    """The ε at which ``_hockey_stick_remove`` equals δ (it decreases in ε), by bisection; for reports only."""
    lo, hi = 0.0, 1.0
    while _hockey_stick_remove(hi, q, z) > delta:
        lo, hi = hi, 2 * hi
    if _hockey_stick_remove(0.0, q, z) <= delta:
        return 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _hockey_stick_remove(mid, q, z) > delta else (lo, mid)
    return hi


def _gaussian_grid(ctx):
    """(z, T, δ) for T Gaussian steps (q = 1)."""
    pairs = ctx.budget.pick(
        quick=[(0.7, 1), (0.7, 10), (2.0, 10), (2.0, 1000), (10.0, 1), (10.0, 1000)],
        full=[(z, t) for z in (0.5, 0.7, 1.0, 2.0, 5.0, 10.0, 20.0) for t in (1, 3, 10, 100, 1000, 10000)
              if math.sqrt(t) / z <= MAX_MU],
    )
    deltas = ctx.budget.pick(quick=(1e-10, 1e-5, 1e-2), full=(1e-15, 1e-12, 1e-10, 1e-8, 1e-5, 1e-3, 1e-2, 0.2))
    return [(z, t, d) for z, t in pairs for d in deltas]


def _subsampled_grid(ctx):
    """(q, z, δ) for ONE Poisson-subsampled step, where the exact remove-direction profile is known."""
    pairs = ctx.budget.pick(quick=[(0.1, 1.0)], full=[(0.1, 1.0), (0.01, 0.5), (0.5, 2.0), (0.25, 0.8)])
    deltas = ctx.budget.pick(quick=(1e-5, 1e-3), full=(1e-8, 1e-5, 1e-3))
    return [(q, z, d) for q, z in pairs for d in deltas]


def _never_below(epsilon_of, ctx, *, subsampled):
    """max over the grids of δ_exact(ε_subject)/δ; ≤ 1 iff ε_subject ≥ ε_exact (δ_exact is decreasing in ε)."""
    worst, where = 0.0, ""
    for z, steps, delta in _gaussian_grid(ctx):
        eps = float(epsilon_of(1.0, z, steps, delta))
        mu = math.sqrt(steps) / z
        ratio = float(exact_delta(max(eps, 0.0), mu) / mpmath.mpf(delta)) if np.isfinite(eps) else math.inf
        if not ratio <= worst:
            worst, where = ratio, (eps, f"q=1, z={z}, T={steps}, delta={delta:g} (mu={mu:.6g})", delta, mu, None)
    if subsampled:
        for q, z, delta in _subsampled_grid(ctx):
            eps = float(epsilon_of(q, z, 1, delta))
            ratio = float(_hockey_stick_remove(max(eps, 0.0), q, z) / mpmath.mpf(delta)) if np.isfinite(eps) else math.inf
            if not ratio <= worst:
                worst, where = ratio, (eps, f"one step, q={q}, z={z}, delta={delta:g}", delta, None, (q, z))
    eps, label, delta, mu, sampled = where
    if mu is not None:
        exact = f"; exact GDP eps = {exact_epsilon(delta, mu):.6g}"
    else:
        exact = f"; exact eps (remove direction) = {_hockey_stick_epsilon(delta, *sampled):.6g}"
    return deterministic(
        worst <= 1 + PRIVACY_SLACK, statistic=worst, bound=1 + PRIVACY_SLACK,
        detail=(f"max delta_exact(eps_subject)/delta (> 1 means eps below the exact eps); worst at {label}: "
                f"eps_subject = {eps:.6g}{exact}"),
    )


def _check_never_below(subject, ctx):
    return _never_below(subject.epsilon_poisson_gaussian, ctx, subsampled=True)


RDP_NEVER_BELOW_EXACT = Claim(
    id="zo_o2nc.sec5.rdp_never_below_exact",
    paper="zo_o2nc",
    location="§2 and §4.2 (RDP of Gaussian mechanisms, composition, RDP to (ε, δ)-DP); dpzero Lemma 2.2",
    statement=(
        "The accountant's epsilon is never below the exact epsilon: for T Gaussian steps (q = 1) with noise "
        "multiplier z (mu = sqrt(T)/z <= 20, delta in [1e-10, 1e-2]; full: [1e-15, 0.2]), "
        "delta_exact(eps_subject; mu) <= delta (the exact GDP profile of the "
        "composition; equivalently eps_subject >= eps_exact and the RDP-derived delta >= the exact delta), and "
        "for one Poisson-subsampled step, delta <= the exact remove-direction hockey-stick divergence at "
        "eps_subject. Strict, up to 1e-9 relative float rounding of delta."
    ),
    kind="privacy",
    requires=("epsilon_poisson_gaussian",),
    check=_check_never_below,
    mutants=(
        # erratum dpzero.E1's confusion
        rebind("noise_as_variance", "the noise multiplier is read as a variance (z^2 for z)",
               "epsilon_poisson_gaussian", noise_multiplier=lambda z: z**2),
    ),
)


# --- zo_o2nc §2: RDP → (ε, δ) conversion of the subject's curve is never below the exact ε ---------------------

def _check_conversion_never_below(subject, ctx):
    def epsilon_of(q, z, steps, delta):
        curve = subject.rdp_poisson_gaussian(DEFAULT_ORDERS, q, z, steps)
        return subject.epsilon_from_rdp(DEFAULT_ORDERS, curve, delta)

    return _never_below(epsilon_of, ctx, subsampled=False)


RDP_CONVERSION_NEVER_BELOW_EXACT = Claim(
    id="zo_o2nc.sec5.rdp_conversion_never_below_exact",
    paper="zo_o2nc",
    location="§2 (RDP to (ε, δ)-DP conversion, zo_o2nc.E11); dp_accounting test_delta_bounds_gaussian",
    statement=(
        "Converting the subject's RDP curve of T Gaussian steps (q = 1, mu = sqrt(T)/z <= 20) on dp_accounting's "
        "default orders with the subject's epsilon_from_rdp never gives an epsilon below the exact GDP epsilon: "
        "delta_exact(eps) <= delta up to 1e-9 relative."
    ),
    kind="privacy",
    requires=("rdp_poisson_gaussian", "epsilon_from_rdp"),
    check=_check_conversion_never_below,
    mutants=(
        rebind("log10_delta", "log10(delta) where ln(delta) is meant", "epsilon_from_rdp", delta=_log10_for_ln),
        on_output("rdp_halved", "the RDP curve is half the true one (a lost factor 2)", "rdp_poisson_gaussian",
                  lambda rdp, call: np.asarray(rdp, dtype=np.float64) / 2),
    ),
)


# --- zo_o2nc §2, dpzero Lemma 2.2: the exact Gaussian privacy profile ------------------------------------------

def _gaussian_delta_by_quadrature(epsilon, mu):
    """δ_μ(ε) by mpmath quadrature of the privacy-loss integral, independently of any closed form:

        δ = ∫ (φ(x − μ) − e^ε φ(x))_+ dx = ∫_{x*}^∞ φ(x − μ)(1 − e^{ε + μ²/2 − μx}) dx,   x* = ε/μ + μ/2,

    and with x = x* + y, a = ε/μ − μ/2 (so x* − μ = a): δ = φ(a) ∫_0^∞ e^{−ay − y²/2} (−expm1(−μy)) dy, a positive
    integrand without cancellation. Returns (δ, relative error estimate) as mpf at TRUTH_DPS digits.
    """
    with working_precision(TRUTH_DPS):
        eps, mu = mpmath.mpf(float(epsilon)), mpmath.mpf(float(mu))
        a = eps / mu - mu / 2
        # breakpoints: the integrand's scale is 1/a for a > 0 (exponential decay), a bump at y = −a otherwise
        scales = [mpmath.mpf(1) / max(a, 1), 1 / mu] + ([-a] if a < 0 else [])
        points = sorted({mpmath.mpf(0)} | {c * s for s in scales for c in (0.1, 1, 3, 10, 30)}
                        | ({max(mpmath.mpf(0), -a + c) for c in (-10, -3, 3, 10)} if a < 0 else set()))
        log_peak = (a * a / 2) if a < 0 else 0  # max of −ay − y²/2 over y ≥ 0

        def integrand(y):
            return mpmath.exp(-a * y - y * y / 2 - log_peak) * -mpmath.expm1(-mu * y)

        value, error = mpmath.quad(integrand, points + [mpmath.inf], error=True)
        log_front = -a * a / 2 - mpmath.log(mpmath.sqrt(2 * mpmath.pi)) + log_peak
        return mpmath.exp(log_front) * value, error / value


def _profile_grid(ctx):
    eps_values = ctx.budget.pick(quick=(0.0, 0.01, 1.0, 30.0), full=(0.0, 1e-3, 0.01, 0.1, 0.5, 1.0, 3.0, 5.0,
                                                                           10.0, 20.0, 30.0, 50.0))
    mu_values = ctx.budget.pick(quick=(1e-3, 0.1, 1.0, 4.0, 30.0), full=(1e-3, 0.01, 0.05, 0.1, 0.3, 1.0, 2.0, 4.0,
                                                                          10.0, 30.0))
    return [(e, m) for e in eps_values for m in mu_values]


def _check_profile_exact(subject, ctx):
    worst, where, checked, smallest = 0.0, "", 0, 1.0
    for eps, mu in _profile_grid(ctx):
        truth, quad_error = _gaussian_delta_by_quadrature(eps, mu)
        if truth < SMALLEST_DELTA:
            continue
        if quad_error > 1e-15:
            return deterministic(False, detail=f"quadrature did not converge at eps={eps}, mu={mu} (est. {quad_error})")
        got = float(subject.gaussian_delta(eps, mu))
        err = float(abs(mpmath.mpf(got) - truth) / truth) if np.isfinite(got) else math.inf
        checked += 1
        smallest = min(smallest, float(truth))
        if not err <= worst:
            worst, where = err, f"eps={eps}, mu={mu}: subject {got!r}, quadrature {mpmath.nstr(truth, 15)}"
    return deterministic(worst <= EXACT_RTOL, statistic=worst, bound=EXACT_RTOL,
                         detail=f"max relative error over {checked} (eps, mu) with delta in [{smallest:.3g}, 1); worst at {where}")


def _profile_sign_lost(call):
    """Φ(−ε/μ + μ/2) − e^{−ε} Φ(−ε/μ − μ/2), in log space (so no cancellation hides the bug)."""
    epsilon, mu = call.epsilon, call.mu
    a, b = -epsilon / mu + mu / 2, -epsilon / mu - mu / 2
    first, second = special.log_ndtr(a), -epsilon + special.log_ndtr(b)
    return float(np.exp(first) * -np.expm1(second - first))


def _profile_complement_cdf(call):
    """The printed formula with Φ(−x) formed as 1 − Φ(x) (``1 - norm.cdf``): every δ below ~1e-16 is lost to
    cancellation (0 or a rounding residue)."""
    epsilon, mu = call.epsilon, call.mu
    upper, lower = epsilon / mu - mu / 2, epsilon / mu + mu / 2
    return float((1.0 - special.ndtr(upper)) - np.exp(epsilon) * (1.0 - special.ndtr(lower)))


PROFILE_SIGN_LOST = substitute("exp_minus_eps", "e^-eps instead of e^eps in front of the second Phi",
                               "gaussian_delta", _profile_sign_lost)
PROFILE_COMPLEMENT_CDF = substitute("complement_cdf", "Phi(-x) formed as 1 - Phi(x) in float64 (small delta lost "
                                    "to cancellation)", "gaussian_delta", _profile_complement_cdf)

GAUSSIAN_PROFILE_EXACT = Claim(
    id="zo_o2nc.sec5.gaussian_profile_exact",
    paper="zo_o2nc",
    location="§2 (Gaussian mechanism); dpzero Lemma 2.2 (checked against the exact profile); Balle-Wang 2018 "
             "Thm 8",
    statement=(
        "gaussian_delta(eps, mu) equals the exact profile Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), "
        "computed independently by mpmath quadrature of the privacy-loss integral, to 1e-10 relative for eps in "
        "[0, 50], mu in [1e-3, 30] wherever delta >= 1e-300 (tiny delta included: no cancellation allowed)."
    ),
    kind="deterministic",
    requires=("gaussian_delta",),
    check=_check_profile_exact,
    mutants=(PROFILE_SIGN_LOST, PROFILE_COMPLEMENT_CDF),
)


# --- dpzero §5, App. B.2: RDP at fractional orders agrees with quadrature of the defining integral -------------

def _check_fractional_quadrature(subject, ctx):
    orders = np.array(ctx.budget.pick(quick=(1.1, 2.5, 4.3, 10.9), full=(1.1, 1.5, 2.5, 3.7, 4.3, 6.6, 8.8, 10.9, 20.5)))
    pairs = ctx.budget.pick(quick=[(0.01, 1.0), (0.3, 2.0)],
                            full=[(0.01, 1.0), (0.3, 2.0), (1e-3, 5.0), (0.1, 0.7), (0.6, 3.0), (0.0625, 13.5)])
    worst, where = 0.0, ""
    for q, z in pairs:
        got = array(subject.rdp_poisson_gaussian(orders, q, z, 1))
        with working_precision(20):
            truth = [rdp_poisson_gaussian_quadrature(mpmath.mpf(float(a)), mpmath.mpf(q), mpmath.mpf(z), "remove")
                     for a in orders]
        for a, g, t in zip(orders, got, truth):
            err = float(abs(mpmath.mpf(float(g)) - t) / t) if np.isfinite(g) else math.inf
            if not err <= worst:
                worst, where = err, f"alpha={a}, q={q}, z={z}: subject {g!r}, quadrature {mpmath.nstr(t, 15)}"
    return deterministic(worst <= EXACT_RTOL, statistic=worst, bound=EXACT_RTOL,
                         detail=f"max relative error against mpmath quadrature (remove direction); worst at {where}")


def _integer_interpolation(call):
    """(α−1)·RDP interpolated linearly between ⌊α⌋ and ⌈α⌉ (a valid upper bound by convexity, not the value)."""
    alphas = np.asarray(call.orders, dtype=np.float64)
    low, high = np.floor(alphas), np.floor(alphas) + 1
    cgf_high = (high - 1) * array(call.original(orders=high))
    has_low = low >= 2
    cgf_low = np.zeros_like(alphas)
    if np.any(has_low):
        cgf_low[has_low] = (low[has_low] - 1) * array(call.original(orders=low[has_low]))
    t = alphas - low
    out = ((1 - t) * cgf_low + t * cgf_high) / (alphas - 1)
    exact = alphas == low
    if np.any(exact):
        out[exact] = array(call.original(orders=alphas[exact]))
    return out


FRACTIONAL_ORDERS_QUADRATURE = Claim(
    id="dpzero.sec5_3.fractional_orders_quadrature",
    paper="dpzero",
    location="§5 and App. B.2 (RDP accountant at fractional α); Mironov-Talwar-Zhang 2019 §3.3",
    statement=(
        "At fractional orders the Poisson-subsampled Gaussian RDP (remove direction) equals log E_mu0[(mu/mu0)^alpha]"
        "/(alpha - 1) computed by mpmath quadrature of the defining integral, to 1e-10 relative, for alpha in "
        "1.1..10.9 and q in 0.01..0.3 (full: 1e-3..0.6), z in 1..2 (full: 0.7..13.5). A float64 implementation "
        "working in log space reaches ~1e-13 here; 1e-10 also holds a library to its own series truncation."
    ),
    kind="deterministic",
    requires=("rdp_poisson_gaussian",),
    check=_check_fractional_quadrature,
    mutants=(
        rebind("nearest_integer_order", "evaluates the nearest integer order (>= 2) instead", "rdp_poisson_gaussian",
               orders=lambda orders: np.maximum(2.0, np.round(np.asarray(orders, dtype=np.float64)))),
        substitute("integer_interpolation", "interpolates (alpha - 1) RDP linearly between the neighbouring integer "
                   "orders (a valid upper bound, not the value)", "rdp_poisson_gaussian", _integer_interpolation),
    ),
)


# --- dpzero §5, App. B.2: the calibrated noise multiplier never overshoots the target ---------------------------

def _calibration_grid(ctx):
    quick = [(2.0, 1e-5, 1.0, 100), (0.5, 1e-6, 1.0, 10), (8.0, 1e-3, 1.0, 1000)]
    full = quick + [(2.0, 1e-5, 0.0625, 1000), (1.0, 1e-5, 0.01, 500)]
    return ctx.budget.pick(quick=quick, full=full)


def _check_calibration(subject, ctx):
    worst_over, worst_slack, where_over, where_slack = -math.inf, -math.inf, "", ""
    exact_failures = []
    for target, delta, q, steps in _calibration_grid(ctx):
        z = float(subject.noise_multiplier_poisson_gaussian(target, delta, q, steps))
        if not (np.isfinite(z) and z > 0):
            return deterministic(False, detail=f"noise multiplier {z!r} for target {target}, delta {delta}, q {q}, T {steps}")
        eps = float(subject.epsilon_poisson_gaussian(q, z, steps, delta))
        label = f"target {target}, delta {delta:g}, q {q}, T {steps}: z = {z!r}, eps(z) = {eps!r}"
        over = (eps - target) / target
        if not over <= worst_over:
            worst_over, where_over = over, label
        slack = target - eps
        if not slack <= worst_slack:
            worst_slack, where_slack = slack, label
        if q == 1.0:  # ground truth: the exact GDP profile of T Gaussians with noise multiplier z
            if exact_delta(target, math.sqrt(steps) / z) > mpmath.mpf(delta):
                exact_failures.append(label)
    if exact_failures:
        return deterministic(False, detail=f"not (target, delta)-DP by the exact Gaussian profile at: {exact_failures}")
    if worst_over > 0:
        return deterministic(False, statistic=worst_over, bound=0.0,
                             detail=f"eps(z) exceeds the target (relative excess) at {where_over}")
    return deterministic(worst_slack <= LOOSENESS, statistic=worst_slack, bound=LOOSENESS,
                         detail=f"eps(z) <= target everywhere; largest unused budget target - eps(z) at {where_slack}")


def _lower_end_apply(subject):
    """Bisection on the subject's own ε that returns the lower end of the final bracket (ε(lo) > target).

    A whole new calibration built on the subject's ``epsilon_poisson_gaussian`` (not a change to the original's
    call), hence a :class:`Mutant` with its own ``apply``."""
    epsilon_of = subject.epsilon_poisson_gaussian

    def noise_multiplier_poisson_gaussian(target_epsilon, delta, sampling_probability, steps):
        def eps(z):
            return float(epsilon_of(sampling_probability, z, steps, delta))

        lo, hi = 0.5, 1.0
        while eps(lo) <= target_epsilon:
            lo, hi = lo / 2, lo
        while eps(hi) > target_epsilon:
            lo, hi = hi, 2 * hi
        while hi / lo - 1 > 1e-4:
            mid = (lo + hi) / 2
            if eps(mid) > target_epsilon:
                lo = mid
            else:
                hi = mid
        return lo

    return subject.replace(label="lower_end", noise_multiplier_poisson_gaussian=noise_multiplier_poisson_gaussian)


CALIBRATION_NEVER_OVERSHOOTS = Claim(
    id="dpzero.sec5_3.calibration_never_overshoots",
    paper="dpzero",
    location="§5 and App. B.2 (noise multiplier calibration: Opacus get_noise_multiplier, achieved ε in "
             "(target − 0.01, target])",
    statement=(
        "The calibrated noise multiplier z = noise_multiplier(target, delta, q, T) is private and not needlessly "
        "loose: the subject's own eps(z) <= target (strictly, no slack), for q = 1 also by the exact Gaussian "
        "profile (delta_exact(target; sqrt(T)/z) <= delta), and eps(z) >= target - 0.01 (Opacus's tolerance)."
    ),
    kind="privacy",
    requires=("noise_multiplier_poisson_gaussian", "epsilon_poisson_gaussian"),
    check=_check_calibration,
    mutants=(
        Mutant(name="lower_end", description="bisection on the subject's eps that returns the lower end of the final "
               "bracket (eps(z) > target)", apply=_lower_end_apply),
        rebind("steps_off_by_one", "calibrates for T - 1 steps", "noise_multiplier_poisson_gaussian",
               steps=lambda steps: max(int(steps) - 1, 1)),
    ),
)


# --- zo_o2nc §2 (zo_o2nc.E11), Theorem 4.3: zCDP → (ε, δ) -------------------------------------------------------

def _check_zcdp(subject, ctx):
    rhos = ctx.budget.pick(quick=(1e-4, 0.125, 2.0), full=(1e-4, 1e-3, 0.01, 0.125, 0.5, 2.0, 10.0))
    deltas = ctx.budget.pick(quick=(1e-12, 1e-6, 1e-2), full=(1e-15, 1e-12, 1e-6, 1e-3, 1e-2, 0.1))
    worst_upper, worst_lower, where_upper, where_lower = -math.inf, 0.0, "", ""
    for rho in rhos:
        for delta in deltas:
            eps = float(subject.epsilon_from_zcdp(rho, delta))
            simple = rho + 2 * math.sqrt(rho * math.log(1 / delta))  # Bun–Steinke 2016 Prop 1.3
            upper = (eps - simple) / simple if np.isfinite(eps) else math.inf
            if not upper <= worst_upper:
                worst_upper, where_upper = upper, f"rho={rho}, delta={delta:g}: eps {eps!r}, rho + 2 sqrt(rho ln 1/delta) = {simple!r}"
            mu = math.sqrt(2 * rho)  # the Gaussian with ρ = μ²/2 is exactly ρ-zCDP
            ratio = float(exact_delta(max(eps, 0.0), mu) / mpmath.mpf(delta)) if np.isfinite(eps) else math.inf
            if not ratio <= worst_lower:
                worst_lower, where_lower = ratio, f"rho={rho}, delta={delta:g}: eps {eps!r}, exact GDP eps {exact_epsilon(delta, mu):.10g}"
    if worst_upper > IDENTITY_RTOL:
        return deterministic(False, statistic=worst_upper, bound=IDENTITY_RTOL,
                             detail=f"above the Bun-Steinke bound (relative excess) at {where_upper}")
    return deterministic(worst_lower <= 1 + PRIVACY_SLACK, statistic=worst_lower, bound=1 + PRIVACY_SLACK,
                         detail=f"<= rho + 2 sqrt(rho ln 1/delta) everywhere (closest at {where_upper}); max "
                                f"delta_exact(eps)/delta for the Gaussian with rho = mu^2/2 at {where_lower}")


ZCDP_CONVERSION = Claim(
    id="zo_o2nc.sec5.zcdp_conversion",
    paper="zo_o2nc",
    location="§2 and Theorem 4.3 ((α, αρ²/2)-RDP, i.e. ρ²/2-zCDP; Canonne-Kamath-Steinke 2020 conversion as "
             "an extension)",
    statement=(
        "The optimal zCDP conversion epsilon_from_zcdp(rho, delta) is at most Bun-Steinke's rho + 2 sqrt(rho "
        "ln(1/delta)) (relative 1e-12) and at least the exact epsilon of the Gaussian mechanism with rho = mu^2/2 "
        "(which is exactly rho-zCDP): delta_exact(eps; mu) <= delta up to 1e-9 relative."
    ),
    kind="deterministic",
    requires=("epsilon_from_zcdp",),
    check=_check_zcdp,
    mutants=(
        # ρ read as zo_o2nc's RDP parameter ((α, αρ²/2)-RDP)
        rebind("rho_squared", "converts rho^2/2 (zo_o2nc's (alpha, alpha rho^2/2) parameter) instead of rho",
               "epsilon_from_zcdp", rho=lambda rho: rho * rho / 2),
        rebind("log10_delta", "log10(delta) where ln(delta) is meant", "epsilon_from_zcdp", delta=_log10_for_ln),
    ),
)
