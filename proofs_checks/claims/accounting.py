"""Claims about privacy accounting: dpzero Lemma 2.2, §5 and App. B.2 (the RDP accountant of the experiments and
the exact Gaussian-DP calibration), zo_o2nc §2 and Theorem 4.3 (Gaussian RDP, tree RDP, RDP → DP and zCDP → DP conversions).

Every check calls only the subject's accounting protocols (``proofs_checks.protocols``: the five that the
library adapters provide, plus ``epsilon_from_zcdp``, ``rdp_tree_aggregation``, ``rdp_tree_exact``), so the
claims run on ``reference``, ``fast`` and the adapters (``--subject dp_accounting.rdp`` …) alike. Ground
truth comes from closed forms evaluated independently in mpmath: the exact Gaussian-DP profile
(``reference.accounting.gaussian``, Balle–Wang 2018 / Dong–Roth–Su 2022), the exact hockey-stick divergence of
one Poisson-subsampled Gaussian step (written out here), mpmath quadrature of the defining integrals.

Tolerances: identities that float64 evaluates with a handful of roundings are held to 1e-12 relative;
values compared with an mpmath ground truth to 1e-10 relative (what a float64 implementation that works in
log space reaches; ``reference.fast`` measures ~1e-13); privacy inequalities (ε ≥ the exact ε, ε(z) ≤ target)
are strict, with no slack beyond 1e-9 relative on a δ recomputed from a float ε. Libraries with a stated
error (PRV's eps_error 0.01, a PLD grid) are compared only where their error does not matter: the
monotonicity grids move ε by far more than 0.01, the calibration looseness allowance is Opacus's 0.01.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from scipy import special

from reference.accounting import gaussian as exact_gaussian
from reference.accounting.rdp import rdp_poisson_gaussian_quadrature
from reference.fast import rdp as fast_rdp
from reference.mechanisms import participation_count
from reference.precision import working_precision

from ..claim import Claim, Mutant
from ..subjects import reference_subject
from ._common import deterministic, mutant

#: dp_accounting's (and our) default RDP orders, as the floats dp_accounting builds.
DEFAULT_ORDERS = np.array([1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024],
                          dtype=np.float64)

#: digits of the mpmath ground truths computed in the checks
TRUTH_DPS = 30

#: float64 identities (a product or sum of a few rounded terms): relative tolerance
IDENTITY_RTOL = 1e-12
#: agreement with an mpmath ground truth
EXACT_RTOL = 1e-10
#: relative slack on a δ recomputed from a float64 ε (ε carries ~1e-16 relative; dδ/dε·ε/δ ≲ 1e5 on the grids)
PRIVACY_SLACK = 1e-9
#: Opacus's epsilon_tolerance: a calibration leaving more than this much ε unused is needlessly loose
LOOSENESS = 0.01


# --- small helpers ------------------------------------------------------------------------------------------


def _array(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).reshape(-1)


def _entrywise_relative(got, want) -> float:
    """max_i |got_i − want_i| / |want_i| (inf on shape mismatch or non-finite output)."""
    got, want = _array(got), _array(want)
    if got.shape != want.shape or not np.all(np.isfinite(got)):
        return math.inf
    scale = np.abs(want)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(scale > 0, np.abs(got - want) / scale, np.abs(got - want))
    return float(np.max(rel)) if rel.size else 0.0


def _exact_delta(epsilon, mu):
    """Ground truth: the exact μ-GDP profile δ_μ(ε) (Balle–Wang Thm 8) in mpmath (reference.accounting.gaussian)."""
    with working_precision(TRUTH_DPS):
        return exact_gaussian.gaussian_delta(mpmath.mpf(float(epsilon)), mpmath.mpf(float(mu)))


def _exact_epsilon(delta, mu):
    with working_precision(TRUTH_DPS):
        return float(exact_gaussian.gaussian_epsilon(mpmath.mpf(float(delta)), mpmath.mpf(float(mu))))


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


def _reference():
    return reference_subject()


# ---------------------------------------------------------------------------------------------------------
# 1. dpzero §5, App. B.2: RDP composes additively


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
        one = _array(subject.rdp_poisson_gaussian(orders, q, z, 1))
        for steps in (2, 7, 1000):
            got = subject.rdp_poisson_gaussian(orders, q, z, steps)
            note(_entrywise_relative(got, steps * one), f"rdp(T={steps}) vs T*rdp(1), q={q}, z={z}")
        for t1, t2 in ((3, 4), (400, 600)):
            split = _array(subject.rdp_poisson_gaussian(orders, q, z, t1)) + _array(
                subject.rdp_poisson_gaussian(orders, q, z, t2))
            note(_entrywise_relative(subject.rdp_poisson_gaussian(orders, q, z, t1 + t2), split),
                 f"rdp(T={t1}+{t2}) vs rdp({t1}) + rdp({t2}), q={q}, z={z}")
    # heterogeneous: Gaussians with different noise compose to the Gaussian with 1/z² = Σ T_i/z_i²
    for (z1, t1), (z2, t2) in (((0.8, 3), (2.5, 10)), ((5.0, 1000), (1.2, 1))):
        composed = _array(subject.rdp_poisson_gaussian(orders, 1.0, z1, t1)) + _array(
            subject.rdp_poisson_gaussian(orders, 1.0, z2, t2))
        z_eff = 1.0 / math.sqrt(t1 / z1**2 + t2 / z2**2)
        note(_entrywise_relative(composed, subject.rdp_poisson_gaussian(orders, 1.0, z_eff, 1)),
             f"Gaussians z={z1} x{t1} and z={z2} x{t2} vs one Gaussian z={z_eff:.6g}")
    return deterministic(worst <= IDENTITY_RTOL, statistic=worst, bound=IDENTITY_RTOL,
                         detail=f"largest relative deviation from additivity at: {where} (orders {orders.tolist()})")


def _steps_ignored(original):
    def rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps):
        return original(orders, sampling_probability, noise_multiplier, 1)

    return rdp_poisson_gaussian


def _steps_minus_one(original):
    def rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps):
        return original(orders, sampling_probability, noise_multiplier, max(int(steps) - 1, 0))

    return rdp_poisson_gaussian


# ---------------------------------------------------------------------------------------------------------
# 2. dpzero §5, App. B.2: ε is monotone in z, q, steps and δ


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


def _steps_wrap(original):
    """A step counter that wraps at 1000 (e.g. counted per epoch and reset)."""

    def epsilon_poisson_gaussian(sampling_probability, noise_multiplier, steps, delta):
        return original(sampling_probability, noise_multiplier, int(steps) % 1000, delta)

    return epsilon_poisson_gaussian


def _noise_inverted(original):
    def epsilon_poisson_gaussian(sampling_probability, noise_multiplier, steps, delta):
        return original(sampling_probability, 1.0 / noise_multiplier, steps, delta)

    return epsilon_poisson_gaussian


def _delta_as_confidence(original):
    def epsilon_poisson_gaussian(sampling_probability, noise_multiplier, steps, delta):
        return original(sampling_probability, noise_multiplier, steps, 1.0 - delta)

    return epsilon_poisson_gaussian


# ---------------------------------------------------------------------------------------------------------
# 3. zo_o2nc §2: an RDP-derived ε is never below the exact ε


#: compositions of T Gaussian steps are kept to mu = sqrt(T)/z <= 20 (exact eps below ~400 at delta >= 1e-15)
MAX_MU = 20.0


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
        ratio = float(_exact_delta(max(eps, 0.0), mu) / mpmath.mpf(delta)) if np.isfinite(eps) else math.inf
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
        exact = f"; exact GDP eps = {_exact_epsilon(delta, mu):.6g}"
    else:
        exact = f"; exact eps (remove direction) = {_hockey_stick_epsilon(delta, *sampled):.6g}"
    return deterministic(
        worst <= 1 + PRIVACY_SLACK, statistic=worst, bound=1 + PRIVACY_SLACK,
        detail=(f"max delta_exact(eps_subject)/delta (> 1 means eps below the exact eps); worst at {label}: "
                f"eps_subject = {eps:.6g}{exact}"),
    )


def _check_never_below(subject, ctx):
    return _never_below(subject.epsilon_poisson_gaussian, ctx, subsampled=True)


def _check_conversion_never_below(subject, ctx):
    def epsilon_of(q, z, steps, delta):
        curve = subject.rdp_poisson_gaussian(DEFAULT_ORDERS, q, z, steps)
        return subject.epsilon_from_rdp(DEFAULT_ORDERS, curve, delta)

    return _never_below(epsilon_of, ctx, subsampled=False)


def _noise_as_variance(original):
    """The noise multiplier read as a variance: z² where z is meant (erratum dpzero.E1's confusion)."""

    def epsilon_poisson_gaussian(sampling_probability, noise_multiplier, steps, delta):
        return original(sampling_probability, noise_multiplier**2, steps, delta)

    return epsilon_poisson_gaussian


def _log10_conversion(original):
    """The conversion with log10 δ where ln δ is meant: equivalent to passing δ^(1/ln 10)."""

    def epsilon_from_rdp(orders, rdp, delta):
        return original(orders, rdp, delta ** (1.0 / math.log(10.0)))

    return epsilon_from_rdp


def _rdp_halved(original):
    def rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps):
        return np.asarray(original(orders, sampling_probability, noise_multiplier, steps), dtype=np.float64) / 2

    return rdp_poisson_gaussian


# ---------------------------------------------------------------------------------------------------------
# 4. the exact Gaussian privacy profile


def _profile_grid(ctx):
    eps_values = ctx.budget.pick(quick=(0.0, 0.01, 1.0, 30.0), full=(0.0, 1e-3, 0.01, 0.1, 0.5, 1.0, 3.0, 5.0,
                                                                           10.0, 20.0, 30.0, 50.0))
    mu_values = ctx.budget.pick(quick=(1e-3, 0.1, 1.0, 4.0, 30.0), full=(1e-3, 0.01, 0.05, 0.1, 0.3, 1.0, 2.0, 4.0,
                                                                          10.0, 30.0))
    return [(e, m) for e in eps_values for m in mu_values]


#: the profile grids keep δ ≥ this (a float64 subject cannot return smaller values to full precision)
SMALLEST_DELTA = 1e-300


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


def _profile_exp_minus_eps(original):
    """Φ(−ε/μ + μ/2) − e^{−ε} Φ(−ε/μ − μ/2): the sign of the exponent lost (log space, no cancellation)."""

    def gaussian_delta(epsilon, mu):
        a, b = -epsilon / mu + mu / 2, -epsilon / mu - mu / 2
        first, second = special.log_ndtr(a), -epsilon + special.log_ndtr(b)
        return float(np.exp(first) * -np.expm1(second - first))

    return gaussian_delta


def _profile_complement_cdf(original):
    """The printed formula with Φ(−x) formed as 1 − Φ(x) in float64 (``1 - norm.cdf``): every δ below ~1e-16 is
    lost to cancellation (0 or a rounding residue)."""

    def gaussian_delta(epsilon, mu):
        upper, lower = epsilon / mu - mu / 2, epsilon / mu + mu / 2
        return float((1.0 - special.ndtr(upper)) - np.exp(epsilon) * (1.0 - special.ndtr(lower)))

    return gaussian_delta


# ---------------------------------------------------------------------------------------------------------
# 5. fractional orders agree with quadrature of the defining integral


def _check_fractional_quadrature(subject, ctx):
    orders = np.array(ctx.budget.pick(quick=(1.1, 2.5, 4.3, 10.9), full=(1.1, 1.5, 2.5, 3.7, 4.3, 6.6, 8.8, 10.9, 20.5)))
    pairs = ctx.budget.pick(quick=[(0.01, 1.0), (0.3, 2.0)],
                            full=[(0.01, 1.0), (0.3, 2.0), (1e-3, 5.0), (0.1, 0.7), (0.6, 3.0), (0.0625, 13.5)])
    worst, where = 0.0, ""
    for q, z in pairs:
        got = _array(subject.rdp_poisson_gaussian(orders, q, z, 1))
        with working_precision(20):
            truth = [rdp_poisson_gaussian_quadrature(mpmath.mpf(float(a)), mpmath.mpf(q), mpmath.mpf(z), "remove")
                     for a in orders]
        for a, g, t in zip(orders, got, truth):
            err = float(abs(mpmath.mpf(float(g)) - t) / t) if np.isfinite(g) else math.inf
            if not err <= worst:
                worst, where = err, f"alpha={a}, q={q}, z={z}: subject {g!r}, quadrature {mpmath.nstr(t, 15)}"
    return deterministic(worst <= EXACT_RTOL, statistic=worst, bound=EXACT_RTOL,
                         detail=f"max relative error against mpmath quadrature (remove direction); worst at {where}")


def _nearest_integer_order(original):
    def rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps):
        rounded = np.maximum(2.0, np.round(np.asarray(orders, dtype=np.float64)))
        return original(rounded, sampling_probability, noise_multiplier, steps)

    return rdp_poisson_gaussian


def _integer_interpolation(original):
    """(α−1)·RDP interpolated linearly between ⌊α⌋ and ⌈α⌉ (a valid upper bound by convexity, not the value)."""

    def rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps):
        alphas = np.asarray(orders, dtype=np.float64)
        low, high = np.floor(alphas), np.floor(alphas) + 1
        cgf_high = (high - 1) * _array(original(high, sampling_probability, noise_multiplier, steps))
        has_low = low >= 2
        cgf_low = np.zeros_like(alphas)
        if np.any(has_low):
            cgf_low[has_low] = (low[has_low] - 1) * _array(
                original(low[has_low], sampling_probability, noise_multiplier, steps))
        t = alphas - low
        out = ((1 - t) * cgf_low + t * cgf_high) / (alphas - 1)
        exact = alphas == low
        if np.any(exact):
            out[exact] = _array(original(alphas[exact], sampling_probability, noise_multiplier, steps))
        return out

    return rdp_poisson_gaussian


# ---------------------------------------------------------------------------------------------------------
# 6. backend: the float64 path agrees with the mpmath reference


def _backend_rdp_grid(ctx):
    orders = ctx.budget.pick(quick=(1.1, 1.5, 2.0, 2.5, 3.3, 5.0, 7.7, 10.9, 11.0, 20.0, 63.0, 128.0, 1024.0),
                             full=tuple(DEFAULT_ORDERS))
    pairs = ctx.budget.pick(
        quick=[(1e-4, 100.0), (0.01, 1.0), (0.3, 0.3), (0.99, 3.0), (1.0, 0.5)],
        full=[(q, z) for q in (1e-4, 1e-3, 0.01, 0.1, 0.3, 0.6, 0.99, 1.0) for z in (0.3, 0.5, 1.0, 3.0, 10.0, 100.0)],
    )
    return np.array(orders), pairs


def _check_backend_rdp(subject, ctx):
    orders, pairs = _backend_rdp_grid(ctx)
    ref = _reference()
    worst, where = 0.0, ""
    for q, z in pairs:
        got = subject.rdp_poisson_gaussian(orders, q, z, 1)
        want = ref.rdp_poisson_gaussian(orders, q, z, 1)
        err = _entrywise_relative(got, want)
        if not err <= worst:
            got_a, want_a = _array(got), _array(want)
            i = int(np.argmax(np.abs(got_a - want_a) / np.abs(want_a))) if got_a.shape == want_a.shape else 0
            worst, where = err, f"q={q}, z={z}, alpha={orders[i]}: subject {got_a[i]!r}, reference {want_a[i]!r}"
    return deterministic(worst <= EXACT_RTOL, statistic=worst, bound=EXACT_RTOL,
                         detail=f"max relative difference from the mpmath reference over {len(pairs)} (q, z) x "
                                f"{len(orders)} orders; worst at {where}")


def _backend_curves(ctx):
    """RDP curves on DEFAULT_ORDERS to convert: Gaussian compositions (closed form) and subsampled ones (reference)."""
    curves = [(f"Gaussian z={z}, T={t}", t * DEFAULT_ORDERS / (2 * z * z)) for z, t in ((1.0, 1), (5.0, 100), (0.5, 3), (30.0, 1))]
    subsampled = ctx.budget.pick(quick=[(0.01, 1.0, 1000)], full=[(0.01, 1.0, 1000), (0.2, 2.5, 50), (1e-3, 5.0, 10)])
    for q, z, t in subsampled:
        # only input data for the conversion (both sides convert the same floats): the float64 curve will do
        curves.append((f"q={q}, z={z}, T={t}", fast_rdp.rdp_poisson_gaussian(DEFAULT_ORDERS, q, z, t)))
    return curves


def _check_backend_conversion(subject, ctx):
    ref = _reference()
    deltas = ctx.budget.pick(quick=(1e-12, 1e-5, 1e-2), full=(1e-15, 1e-12, 1e-8, 1e-5, 1e-3, 1e-2, 0.3))
    worst, where = 0.0, ""
    for label, curve in _backend_curves(ctx):
        for delta in deltas:
            got = float(subject.epsilon_from_rdp(DEFAULT_ORDERS, curve, delta))
            want = float(ref.epsilon_from_rdp(DEFAULT_ORDERS, curve, delta))
            err = abs(got - want) / max(want, 1.0) if np.isfinite(got) else math.inf
            if not err <= worst:
                worst, where = err, f"{label}, delta={delta:g}: subject {got!r}, reference {want!r}"
    return deterministic(worst <= EXACT_RTOL, statistic=worst, bound=EXACT_RTOL,
                         detail=f"max |eps_subject - eps_reference|/max(eps_reference, 1) on DEFAULT_ORDERS; worst at {where}")


def _check_backend_profile(subject, ctx):
    ref = _reference()
    eps_values = ctx.budget.pick(quick=(0.0, 1e-3, 1.0, 5.0, 50.0), full=(0.0, 1e-3, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0))
    mu_values = ctx.budget.pick(quick=(1e-3, 0.1, 1.0, 3.0, 30.0), full=(1e-3, 0.01, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0))
    worst, where, checked = 0.0, "", 0
    for eps in eps_values:
        for mu in mu_values:
            if _exact_delta(eps, mu) < SMALLEST_DELTA:
                continue
            got = float(subject.gaussian_delta(eps, mu))
            want = float(ref.gaussian_delta(eps, mu))
            err = abs(got - want) / want if np.isfinite(got) else math.inf
            checked += 1
            if not err <= worst:
                worst, where = err, f"eps={eps}, mu={mu}: subject {got!r}, reference {want!r}"
    return deterministic(worst <= EXACT_RTOL, statistic=worst, bound=EXACT_RTOL,
                         detail=f"max relative difference over {checked} (eps, mu) with delta >= 1e-300; worst at {where}")


def _float32_result(original):
    def float32(*args, **kwargs):
        value = original(*args, **kwargs)
        if np.ndim(value):
            return np.asarray(value, dtype=np.float32).astype(np.float64)
        return float(np.float32(value))

    return float32


def _linear_space_sum(original):
    """Integer orders by Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2z²)} summed in float64 (not in log space): the
    exponentials overflow to inf for large α/z², and log A ≈ 0 loses its digits for small q."""

    def rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps):
        alphas = np.asarray(orders, dtype=np.float64)
        out = _array(original(alphas, sampling_probability, noise_multiplier, steps))
        q, z = float(sampling_probability), float(noise_multiplier)
        for i, alpha in enumerate(alphas):
            if alpha == np.floor(alpha) and q < 1:
                k = np.arange(int(alpha) + 1, dtype=np.float64)
                with np.errstate(over="ignore", invalid="ignore"):
                    terms = special.comb(alpha, k) * (1 - q) ** (alpha - k) * q**k * np.exp((k * k - k) / (2 * z * z))
                    out[i] = steps * np.log(np.sum(terms)) / (alpha - 1)
        return out

    return rdp_poisson_gaussian


def _mironov_conversion(original):
    """Mironov 2017 Prop 3, r + log(1/δ)/(α − 1), where the improved conversion is meant."""

    def epsilon_from_rdp(orders, rdp, delta):
        orders, rdp = np.asarray(orders, dtype=np.float64), np.asarray(rdp, dtype=np.float64)
        return float(max(0.0, np.min(rdp - math.log(delta) / (orders - 1))))

    return epsilon_from_rdp


# ---------------------------------------------------------------------------------------------------------
# 7. dpzero §5, App. B.2: calibration never overshoots the target


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
            if _exact_delta(target, math.sqrt(steps) / z) > mpmath.mpf(delta):
                exact_failures.append(label)
    if exact_failures:
        return deterministic(False, detail=f"not (target, delta)-DP by the exact Gaussian profile at: {exact_failures}")
    if worst_over > 0:
        return deterministic(False, statistic=worst_over, bound=0.0,
                             detail=f"eps(z) exceeds the target (relative excess) at {where_over}")
    return deterministic(worst_slack <= LOOSENESS, statistic=worst_slack, bound=LOOSENESS,
                         detail=f"eps(z) <= target everywhere; largest unused budget target - eps(z) at {where_slack}")


def _lower_end_apply(subject):
    """Bisection on the subject's own ε that returns the lower end of the final bracket (ε(lo) > target)."""
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


def _steps_off_by_one(original):
    def noise_multiplier_poisson_gaussian(target_epsilon, delta, sampling_probability, steps):
        return original(target_epsilon, delta, sampling_probability, max(int(steps) - 1, 1))

    return noise_multiplier_poisson_gaussian


# ---------------------------------------------------------------------------------------------------------
# 8. zo_o2nc Thm 4.3 (corrected): the tree's RDP


def _tree_sizes(ctx):
    small = ctx.budget.pick(quick=range(1, 40), full=range(1, 300))
    around_powers = {p + k for p in (2**j for j in range(5, 13)) for k in (-1, 0, 1)}
    big = ctx.budget.pick(quick=(63, 64, 65, 127, 128, 129, 1000), full=sorted(around_powers | {1000, 3000}))
    return sorted(set(small) | set(big))


def _max_count(n: int) -> int:
    """max_q c_q(n) from reference.mechanisms.participation_count (verified by zo_o2nc.thm4_3.participation_count)."""
    return max(participation_count(q, n) for q in range(1, n + 1))


def _check_tree_rdp(subject, ctx):
    orders = np.array([1.5, 2.0, 7.25, 64.0])
    worst, where = 0.0, ""

    def note(err, label):
        nonlocal worst, where
        if not err <= worst:
            worst, where = err, label

    sizes = _tree_sizes(ctx)
    exact_sizes = [n for n in sizes if n <= ctx.budget.pick(quick=130, full=1100)]
    counts = {n: _max_count(n) for n in exact_sizes}
    for n in sizes:
        count = n.bit_length()  # ⌊log2 n⌋ + 1; equals the max participation count (checked below where computed)
        if n in counts and counts[n] != count:
            return deterministic(False, detail=f"ground truth inconsistent: max count {counts[n]} at n={n}")
        for z in (0.5, 2.0):
            for restarts in (1, 3):
                want = restarts * orders * count / (2 * z * z)
                note(_entrywise_relative(subject.rdp_tree_aggregation(orders, z, n, restarts), want),
                     f"rdp_tree_aggregation n={n}, z={z}, restarts={restarts}")
    rng = ctx.generator("tree_exact")
    for n in exact_sizes:
        # constant sensitivity and noise: the counting formula α s² c_max / (2σ²), and the same as rdp_tree_aggregation
        s, sigma = 0.7, 1.9
        want = orders * s * s * counts[n] / (2 * sigma * sigma)
        note(_entrywise_relative(subject.rdp_tree_exact(orders, np.full(n, s), np.full(n, sigma)), want),
             f"rdp_tree_exact constant n={n}")
        note(_entrywise_relative(subject.rdp_tree_exact(orders, np.ones(n), np.full(n, 2.0)),
                                 subject.rdp_tree_aggregation(orders, 2.0, n, 1)),
             f"rdp_tree_exact(s=1, sigma=z) vs rdp_tree_aggregation(z) n={n}")
    for n in ctx.budget.pick(quick=(1, 2, 5, 13, 64), full=(1, 2, 5, 13, 64, 100, 257)):
        sens = rng.uniform(0.1, 2.0, n)
        stds = rng.uniform(0.5, 3.0, n)
        worst_q = 0.0
        for q in range(1, n + 1):
            chain, b = [], q
            while b <= n:  # the nodes N_b = [b − lowbit(b) + 1, b] that contain q
                chain.append(b)
                b += b & -b
            worst_q = max(worst_q, sens[q - 1] ** 2 * math.fsum(1.0 / stds[b - 1] ** 2 for b in chain))
        note(_entrywise_relative(subject.rdp_tree_exact(orders, sens, stds), orders / 2 * worst_q),
             f"rdp_tree_exact heterogeneous n={n}")
    return deterministic(worst <= IDENTITY_RTOL, statistic=worst, bound=IDENTITY_RTOL,
                         detail=f"max relative deviation from the counting formulas; worst at {where}")


def _paper_count(original):
    def rdp_tree_aggregation(orders, noise_multiplier, steps, restarts=1):
        steps = int(steps)
        floor_count, paper = steps.bit_length(), (steps - 1).bit_length() + 1  # ⌊log2 n⌋+1 and ⌈log2 n⌉+1
        return _array(original(orders, noise_multiplier, steps, restarts)) * paper / floor_count

    return rdp_tree_aggregation


def _max_over_restarts(original):
    def rdp_tree_aggregation(orders, noise_multiplier, steps, restarts=1):
        return original(orders, noise_multiplier, steps, 1)

    return rdp_tree_aggregation


def _decoupled_max(original):
    """α/2 · max_q s_q² · max_q Σ_{b ∋ q} 1/σ_b²: the two maxima taken separately (a loose bound, not the value)."""

    def rdp_tree_exact(orders, sensitivities, noise_stds):
        s = np.asarray(sensitivities, dtype=np.float64)
        n = s.size
        unit = _array(original(orders, np.ones(n), noise_stds))
        return unit * float(np.max(s * s))

    return rdp_tree_exact


# ---------------------------------------------------------------------------------------------------------
# zo_o2nc §2 (zo_o2nc.E11): zCDP → (ε, δ)


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
            ratio = float(_exact_delta(max(eps, 0.0), mu) / mpmath.mpf(delta)) if np.isfinite(eps) else math.inf
            if not ratio <= worst_lower:
                worst_lower, where_lower = ratio, f"rho={rho}, delta={delta:g}: eps {eps!r}, exact GDP eps {_exact_epsilon(delta, mu):.10g}"
    if worst_upper > IDENTITY_RTOL:
        return deterministic(False, statistic=worst_upper, bound=IDENTITY_RTOL,
                             detail=f"above the Bun-Steinke bound (relative excess) at {where_upper}")
    return deterministic(worst_lower <= 1 + PRIVACY_SLACK, statistic=worst_lower, bound=1 + PRIVACY_SLACK,
                         detail=f"<= rho + 2 sqrt(rho ln 1/delta) everywhere (closest at {where_upper}); max "
                                f"delta_exact(eps)/delta for the Gaussian with rho = mu^2/2 at {where_lower}")


def _rho_as_zo_o2nc_rho(original):
    """ρ read as zo_o2nc's RDP parameter ((α, αρ²/2)-RDP): converts ρ²/2-zCDP instead of ρ-zCDP."""

    def epsilon_from_zcdp(rho, delta):
        return original(rho * rho / 2, delta)

    return epsilon_from_zcdp


def _zcdp_log10(original):
    def epsilon_from_zcdp(rho, delta):
        return original(rho, delta ** (1.0 / math.log(10.0)))

    return epsilon_from_zcdp


# ---------------------------------------------------------------------------------------------------------


def _backend_claim(id_, location, statement, requires, check, mutants):
    return Claim(id=id_, paper="dpzero", location=location, statement=statement, kind="backend", requires=requires,
                 check=check, mutants=mutants, applies_to_reference=False)


CLAIMS = [
    Claim(
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
            mutant("steps_ignored", "returns the RDP of one step whatever the step count", "rdp_poisson_gaussian",
                   _steps_ignored),
            mutant("steps_minus_one", "composes T - 1 steps (off by one)", "rdp_poisson_gaussian", _steps_minus_one),
        ),
    ),
    Claim(
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
            mutant("steps_wrap", "the step counter wraps at 1000 (counted per epoch and reset)",
                   "epsilon_poisson_gaussian", _steps_wrap),
            mutant("noise_inverted", "uses 1/z where z is meant (noise multiplier confused with mu = 1/z)",
                   "epsilon_poisson_gaussian", _noise_inverted),
            mutant("delta_as_confidence", "reads delta as the confidence 1 - delta",
                   "epsilon_poisson_gaussian", _delta_as_confidence),
        ),
    ),
    Claim(
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
            mutant("noise_as_variance", "the noise multiplier is read as a variance (z^2 for z)",
                   "epsilon_poisson_gaussian", _noise_as_variance),
        ),
    ),
    Claim(
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
            mutant("log10_delta", "log10(delta) where ln(delta) is meant", "epsilon_from_rdp", _log10_conversion),
            mutant("rdp_halved", "the RDP curve is half the true one (a lost factor 2)", "rdp_poisson_gaussian",
                   _rdp_halved),
        ),
    ),
    Claim(
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
        mutants=(
            mutant("exp_minus_eps", "e^-eps instead of e^eps in front of the second Phi", "gaussian_delta",
                   _profile_exp_minus_eps),
            mutant("complement_cdf", "Phi(-x) formed as 1 - Phi(x) in float64 (small delta lost to cancellation)",
                   "gaussian_delta", _profile_complement_cdf),
        ),
    ),
    Claim(
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
            mutant("nearest_integer_order", "evaluates the nearest integer order (>= 2) instead",
                   "rdp_poisson_gaussian", _nearest_integer_order),
            mutant("integer_interpolation", "interpolates (alpha - 1) RDP linearly between the neighbouring integer "
                   "orders (a valid upper bound, not the value)", "rdp_poisson_gaussian", _integer_interpolation),
        ),
    ),
    _backend_claim(
        "dpzero.backend.rdp_poisson_gaussian", "§5 and App. B.2 (the RDP accountant of the experiments)",
        "The subject's Poisson-subsampled Gaussian RDP equals the mpmath reference (40 digits) to 1e-10 relative at "
        "every order, for q in [1e-4, 1] and z in [0.3, 100] (quick: 5 (q, z) x 13 orders 1.1..1024; full: 48 x "
        "dp_accounting's 156 default orders).",
        ("rdp_poisson_gaussian",), _check_backend_rdp,
        (mutant("float32", "result rounded to float32", "rdp_poisson_gaussian", _float32_result),
         mutant("linear_space_sum", "integer orders summed as A_alpha in float64, not in log space (overflow, lost "
                "digits)", "rdp_poisson_gaussian", _linear_space_sum)),
    ),
    _backend_claim(
        "dpzero.backend.epsilon_from_rdp", "§5 and App. B.2 (RDP to (ε, δ) conversion; Balle et al. 2020 Thm 21)",
        "The subject's RDP -> epsilon conversion on dp_accounting's default orders equals the mpmath reference "
        "conversion of the same curve within 1e-10 max(eps, 1) for delta in [1e-12, 1e-2] (full: [1e-15, 0.3]).",
        ("epsilon_from_rdp",), _check_backend_conversion,
        (mutant("float32", "result rounded to float32", "epsilon_from_rdp", _float32_result),
         mutant("mironov", "Mironov's r + log(1/delta)/(alpha - 1) instead of the improved conversion",
                "epsilon_from_rdp", _mironov_conversion)),
    ),
    _backend_claim(
        "dpzero.backend.gaussian_delta", "Lemma 2.2 (checked against exact Gaussian-DP calibration)",
        "The subject's exact Gaussian profile equals the mpmath reference to 1e-10 relative for eps in [0, 50], "
        "mu in [1e-3, 30], wherever delta >= 1e-300.",
        ("gaussian_delta",), _check_backend_profile,
        (mutant("float32", "result rounded to float32", "gaussian_delta", _float32_result),
         mutant("complement_cdf", "Phi(-x) formed as 1 - Phi(x) in float64 (small delta lost to cancellation)",
                "gaussian_delta", _profile_complement_cdf)),
    ),
    Claim(
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
            Mutant("lower_end", "bisection on the subject's eps that returns the lower end of the final bracket "
                   "(eps(z) > target)", _lower_end_apply),
            mutant("steps_off_by_one", "calibrates for T - 1 steps", "noise_multiplier_poisson_gaussian",
                   _steps_off_by_one),
        ),
    ),
    Claim(
        id="zo_o2nc.thm4_3.tree_rdp",
        paper="zo_o2nc",
        location="Theorem 4.3 (corrected, zo_o2nc.E3); TF-Privacy compute_rdp_tree_restart",
        statement=(
            "Tree aggregation over n leaves with node noise multiplier z, restarted R times, has RDP R alpha "
            "(floor(log2 n) + 1)/(2 z^2) (the max participation count, summed over restarts), and the exact per-leaf "
            "RDP alpha/2 max_q s_q^2 sum_{b <= n, q in N_b} 1/sigma_b^2 equals it for constant s, sigma and the "
            "brute-force sum for heterogeneous s_q, sigma_b; relative 1e-12."
        ),
        kind="deterministic",
        requires=("rdp_tree_aggregation", "rdp_tree_exact"),
        check=_check_tree_rdp,
        mutants=(
            mutant("paper_count", "counts ceil(log2 n) + 1 nodes per leaf (the paper's |OUT(q)|)",
                   "rdp_tree_aggregation", _paper_count),
            mutant("max_over_restarts", "takes the max over restarted trees instead of the sum",
                   "rdp_tree_aggregation", _max_over_restarts),
            mutant("decoupled_max", "max_q s_q^2 times max_q sum 1/sigma_b^2 (maxima taken separately)",
                   "rdp_tree_exact", _decoupled_max),
        ),
    ),
    Claim(
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
            mutant("rho_squared", "converts rho^2/2 (zo_o2nc's (alpha, alpha rho^2/2) parameter) instead of rho",
                   "epsilon_from_zcdp", _rho_as_zo_o2nc_rho),
            mutant("log10_delta", "log10(delta) where ln(delta) is meant", "epsilon_from_zcdp", _zcdp_log10),
        ),
    ),
]
