"""Backend claims for dpzero §5 and App. B.2 (the RDP accountant of the experiments) and Lemma 2.2 (the exact
Gaussian profile): the subject's float64 accounting agrees with the mpmath reference.

These compare a subject with ``reference_subject()``, so they do not apply to the reference itself.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from proofs_checks.authoring import Claim, deterministic, on_output, reference_subject, substitute
from proofs_checks.claims.foundations.accounting import PROFILE_COMPLEMENT_CDF
from reference.fast import rdp as fast_rdp

from ._accounting_helpers import DEFAULT_ORDERS, EXACT_RTOL, SMALLEST_DELTA, array, entrywise_relative, exact_delta


def _float32(value, call):
    """``on_output`` transform: the result rounded to float32."""
    if np.ndim(value):
        return np.asarray(value, dtype=np.float32).astype(np.float64)
    return float(np.float32(value))


# --- dpzero §5, App. B.2: the subject's RDP of the Poisson-subsampled Gaussian ----------------------------------

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
    ref = reference_subject()
    worst, where = 0.0, ""
    for q, z in pairs:
        got = subject.rdp_poisson_gaussian(orders, q, z, 1)
        want = ref.rdp_poisson_gaussian(orders, q, z, 1)
        err = entrywise_relative(got, want)
        if not err <= worst:
            got_a, want_a = array(got), array(want)
            i = int(np.argmax(np.abs(got_a - want_a) / np.abs(want_a))) if got_a.shape == want_a.shape else 0
            worst, where = err, f"q={q}, z={z}, alpha={orders[i]}: subject {got_a[i]!r}, reference {want_a[i]!r}"
    return deterministic(worst <= EXACT_RTOL, statistic=worst, bound=EXACT_RTOL,
                         detail=f"max relative difference from the mpmath reference over {len(pairs)} (q, z) x "
                                f"{len(orders)} orders; worst at {where}")


def _linear_space_sum(call):
    """Integer orders by Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2z²)} summed in float64 (not in log space): the
    exponentials overflow to inf for large α/z², and log A ≈ 0 loses its digits for small q."""
    alphas = np.asarray(call.orders, dtype=np.float64)
    out = array(call.original(orders=alphas))
    q, z = float(call.sampling_probability), float(call.noise_multiplier)
    for i, alpha in enumerate(alphas):
        if alpha == np.floor(alpha) and q < 1:
            k = np.arange(int(alpha) + 1, dtype=np.float64)
            with np.errstate(over="ignore", invalid="ignore"):
                terms = special.comb(alpha, k) * (1 - q) ** (alpha - k) * q**k * np.exp((k * k - k) / (2 * z * z))
                out[i] = call.steps * np.log(np.sum(terms)) / (alpha - 1)
    return out


RDP_POISSON_GAUSSIAN = Claim(
    id="dpzero.backend.rdp_poisson_gaussian",
    paper="dpzero",
    location="§5 and App. B.2 (the RDP accountant of the experiments)",
    statement="The subject's Poisson-subsampled Gaussian RDP equals the mpmath reference (40 digits) to 1e-10 relative "
              "at every order, for q in [1e-4, 1] and z in [0.3, 100] (quick: 5 (q, z) x 13 orders 1.1..1024; full: "
              "48 x dp_accounting's 156 default orders).",
    kind="backend",
    requires=("rdp_poisson_gaussian",),
    check=_check_backend_rdp,
    mutants=(
        on_output("float32", "result rounded to float32", "rdp_poisson_gaussian", _float32),
        substitute("linear_space_sum", "integer orders summed as A_alpha in float64, not in log space (overflow, "
                   "lost digits)", "rdp_poisson_gaussian", _linear_space_sum),
    ),
    applies_to_reference=False,
)


# --- dpzero §5, App. B.2: the subject's RDP → (ε, δ) conversion (Balle et al. 2020 Thm 21) ---------------------

def _backend_curves(ctx):
    """RDP curves on DEFAULT_ORDERS to convert: Gaussian compositions (closed form) and subsampled ones (reference)."""
    curves = [(f"Gaussian z={z}, T={t}", t * DEFAULT_ORDERS / (2 * z * z)) for z, t in ((1.0, 1), (5.0, 100), (0.5, 3), (30.0, 1))]
    subsampled = ctx.budget.pick(quick=[(0.01, 1.0, 1000)], full=[(0.01, 1.0, 1000), (0.2, 2.5, 50), (1e-3, 5.0, 10)])
    for q, z, t in subsampled:
        # only input data for the conversion (both sides convert the same floats): the float64 curve will do
        curves.append((f"q={q}, z={z}, T={t}", fast_rdp.rdp_poisson_gaussian(DEFAULT_ORDERS, q, z, t)))
    return curves


def _check_backend_conversion(subject, ctx):
    ref = reference_subject()
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


def _mironov_conversion(call):
    """Mironov 2017 Prop 3, r + log(1/δ)/(α − 1), where the improved conversion is meant."""
    orders, rdp, delta = list(call.arguments.values())[:3]  # by position: implementations name the curve rdp or rdp_values
    orders, rdp = np.asarray(orders, dtype=np.float64), np.asarray(rdp, dtype=np.float64)
    return float(max(0.0, np.min(rdp - math.log(delta) / (orders - 1))))


EPSILON_FROM_RDP = Claim(
    id="dpzero.backend.epsilon_from_rdp",
    paper="dpzero",
    location="§5 and App. B.2 (RDP to (ε, δ) conversion; Balle et al. 2020 Thm 21)",
    statement="The subject's RDP -> epsilon conversion on dp_accounting's default orders equals the mpmath reference "
              "conversion of the same curve within 1e-10 max(eps, 1) for delta in [1e-12, 1e-2] (full: [1e-15, 0.3]).",
    kind="backend",
    requires=("epsilon_from_rdp",),
    check=_check_backend_conversion,
    mutants=(
        on_output("float32", "result rounded to float32", "epsilon_from_rdp", _float32),
        substitute("mironov", "Mironov's r + log(1/delta)/(alpha - 1) instead of the improved conversion",
                   "epsilon_from_rdp", _mironov_conversion),
    ),
    applies_to_reference=False,
)


# --- dpzero Lemma 2.2: the subject's exact Gaussian profile ----------------------------------------------------

def _check_backend_profile(subject, ctx):
    ref = reference_subject()
    eps_values = ctx.budget.pick(quick=(0.0, 1e-3, 1.0, 5.0, 50.0), full=(0.0, 1e-3, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0))
    mu_values = ctx.budget.pick(quick=(1e-3, 0.1, 1.0, 3.0, 30.0), full=(1e-3, 0.01, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0))
    worst, where, checked = 0.0, "", 0
    for eps in eps_values:
        for mu in mu_values:
            if exact_delta(eps, mu) < SMALLEST_DELTA:
                continue
            got = float(subject.gaussian_delta(eps, mu))
            want = float(ref.gaussian_delta(eps, mu))
            err = abs(got - want) / want if np.isfinite(got) else math.inf
            checked += 1
            if not err <= worst:
                worst, where = err, f"eps={eps}, mu={mu}: subject {got!r}, reference {want!r}"
    return deterministic(worst <= EXACT_RTOL, statistic=worst, bound=EXACT_RTOL,
                         detail=f"max relative difference over {checked} (eps, mu) with delta >= 1e-300; worst at {where}")


GAUSSIAN_DELTA = Claim(
    id="dpzero.backend.gaussian_delta",
    paper="dpzero",
    location="Lemma 2.2 (checked against exact Gaussian-DP calibration)",
    statement="The subject's exact Gaussian profile equals the mpmath reference to 1e-10 relative for eps in [0, 50], "
              "mu in [1e-3, 30], wherever delta >= 1e-300.",
    kind="backend",
    requires=("gaussian_delta",),
    check=_check_backend_profile,
    mutants=(
        on_output("float32", "result rounded to float32", "gaussian_delta", _float32),
        PROFILE_COMPLEMENT_CDF,
    ),
    applies_to_reference=False,
)
