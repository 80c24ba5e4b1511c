"""Our own accountant as claim subjects: the accounting protocols for ``reference`` and ``fast``.

The library adapters (``dp_accounting``, ``opacus``, ...) turn other people's accountants into the
float-valued protocols of :mod:`proofs_checks.protocols`; this module does the same for ours, so that
the accounting claims run on the reference, the fast path and the libraries alike.

* :func:`reference_implementations` — ``reference.accounting`` in mpmath at
  ``reference.accounting.rdp.ACCOUNTING_DPS`` (40 digits, the precision of the CLI and the high-level
  helpers), each result rounded to float64. Noise (a calibrated noise multiplier, the papers' σ rules) is
  rounded *up* to the next float, so the float returned is never less private than the mpmath value. The
  per-step RDP curve of the Poisson-subsampled Gaussian is memoised by (orders, q, z): mpmath needs
  ~1–2 s for the 156 default orders, and the claims evaluate the same curve for many step counts and δ.
  The cache is keyed by the exact float inputs, so a cached curve is the value that would be recomputed.
* :func:`fast_implementations` — the float64 twins in ``reference/fast/rdp.py`` and
  ``reference/fast/conversions.py``; calibration is ``reference.accounting.calibration.calibrate`` (generic
  bracketing and bisection) driven by the float64 ε. Protocols without a twin (the papers' closed-form σ
  rules, ``rdp_tree_exact``) are not listed here; ``fast_subject`` borrows the reference's.

Protocols provided (see :mod:`proofs_checks.protocols` for their semantics): ``rdp_poisson_gaussian``,
``epsilon_from_rdp``, ``epsilon_poisson_gaussian`` (``DEFAULT_ORDERS`` + BBGHS conversion),
``gaussian_delta``, ``noise_multiplier_poisson_gaussian``, ``epsilon_from_zcdp``, ``rdp_tree_aggregation``,
``rdp_tree_exact``, ``dpzero_lemma22_sigma``, ``zo_o2nc_cor44_sigma``, ``spider_sosp_sigma``, ``spider_sosp_mu``;
and for nsnc_improved, ``nsnc_tree_sigma_as_printed`` (Proposition 2.5's σ, rounded up) and the theory's settings
``nsnc_single_pass_settings``, ``nsnc_multi_pass_settings``, ``nsnc_min_records_single_pass``,
``nsnc_min_records_multi_pass`` (``reference.algorithms.nsnc_improved_theory``; no fast twin).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable

import mpmath
import numpy as np

from reference.accounting import calibration, conversions, gaussian, rdp
from reference.algorithms import (
    dpzero_privacy,
    nsnc_improved_privacy,
    nsnc_improved_theory,
    spider_sosp_privacy,
    zo_o2nc_privacy,
)
from reference.fast import conversions as fast_conversions
from reference.fast import rdp as fast_rdp
from reference.precision import working_precision
from reference.validation import check_int

__all__ = ["reference_implementations", "fast_implementations", "PRECISION"]

#: Decimal digits of the reference implementations (reference.accounting's default).
PRECISION = rdp.ACCOUNTING_DPS


def _orders_key(orders) -> tuple[float, ...]:
    return tuple(float(a) for a in np.asarray(orders, dtype=object).reshape(-1))


def _round_up(value) -> float:
    """The smallest float64 ≥ value (mpf)."""
    out = float(value)
    if mpmath.mpf(out) < value:
        out = float(np.nextafter(out, math.inf))
    return out


# ---------------------------------------------------------------------------------------------------
# Reference (mpmath, rounded to float64)


@functools.lru_cache(maxsize=512)
def _reference_curve(orders: tuple[float, ...], q: float, z: float) -> tuple:
    """Per-step RDP (remove direction) at each order as mpf, mpmath at PRECISION digits (memoised)."""
    with working_precision(PRECISION):
        return tuple(rdp.rdp_poisson_gaussian(mpmath.mpf(a), mpmath.mpf(q), mpmath.mpf(z), "remove") for a in orders)


@functools.lru_cache(maxsize=512)
def _reference_curve_mp(q: float, z: float) -> tuple:
    """Per-step RDP on DEFAULT_ORDERS as mpf (for the end-to-end ε, kept in mpmath; memoised)."""
    with working_precision(PRECISION):
        return tuple(rdp.rdp_poisson_gaussian(a, mpmath.mpf(q), mpmath.mpf(z), "remove") for a in rdp.DEFAULT_ORDERS)


def _reference_rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps):
    q, z = float(sampling_probability), float(noise_multiplier)
    steps = check_int("steps", steps, minimum=0)
    curve = _reference_curve(_orders_key(orders), q, z)
    with working_precision(PRECISION):
        return np.array([float(steps * r) for r in curve], dtype=np.float64)


def _reference_epsilon_from_rdp(orders, rdp, delta):
    with working_precision(PRECISION):
        orders_mp = [mpmath.mpf(float(a)) for a in orders]
        values = [mpmath.mpf(float(r)) for r in rdp]
        epsilon, _ = conversions.epsilon_from_rdp(orders_mp, values, mpmath.mpf(float(delta)), method="bbghs")
        return float(epsilon)


def _reference_epsilon_poisson_gaussian(sampling_probability, noise_multiplier, steps, delta):
    q, z = float(sampling_probability), float(noise_multiplier)
    steps = check_int("steps", steps, minimum=0)
    with working_precision(PRECISION):
        per_step = _reference_curve_mp(q, z)
        total = [steps * r for r in per_step]
        epsilon, _ = conversions.epsilon_from_rdp(rdp.DEFAULT_ORDERS, total, mpmath.mpf(float(delta)), method="bbghs")
        return float(epsilon)


def _reference_gaussian_delta(epsilon, mu):
    with working_precision(PRECISION):
        return float(gaussian.gaussian_delta(mpmath.mpf(float(epsilon)), mpmath.mpf(float(mu))))


def _reference_noise_multiplier(target_epsilon, delta, sampling_probability, steps):
    with working_precision(PRECISION):
        z = calibration.calibrate_gaussian_noise(
            mpmath.mpf(float(target_epsilon)), mpmath.mpf(float(delta)), steps=int(steps),
            sampling_probability=float(sampling_probability), accountant="rdp",
        )
        return _round_up(z)


def _reference_epsilon_from_zcdp(rho, delta):
    with working_precision(PRECISION):
        return float(conversions.epsilon_from_zcdp(mpmath.mpf(float(rho)), mpmath.mpf(float(delta))))


def _reference_rdp_tree_aggregation(orders, noise_multiplier, steps, restarts=1):
    with working_precision(PRECISION):
        return np.array([float(rdp.rdp_tree_aggregation(mpmath.mpf(float(a)), mpmath.mpf(float(noise_multiplier)),
                                                         steps, restarts)) for a in orders], dtype=np.float64)


def _reference_rdp_tree_exact(orders, sensitivities, noise_stds):
    s = np.asarray(sensitivities, dtype=np.float64)
    stds = np.asarray(noise_stds, dtype=np.float64)
    alphas = [mpmath.mpf(a) for a in _orders_key(orders)]
    if not alphas or not all(a > 1 for a in alphas):
        raise ValueError(f"orders must be a non-empty sequence of reals > 1, got {list(_orders_key(orders))}")
    with working_precision(PRECISION):
        # the curve is linear in α: evaluate the max once (at α = 2) and scale, as rdp_tree_exact computes α/2 · max
        per_alpha = rdp.rdp_tree_exact(2, s, stds) / 2
        return np.array([float(a * per_alpha) for a in alphas], dtype=np.float64)


def _reference_dpzero_lemma22_sigma(sensitivity, steps, epsilon, delta):
    with working_precision(PRECISION), warnings.catch_warnings():
        # the protocol is the formula as printed; the reference warns beyond ε = 80 (erratum E5), which the
        # claims evaluate on purpose
        warnings.simplefilter("ignore", UserWarning)
        return _round_up(dpzero_privacy.dpzero_lemma22_sigma(float(sensitivity), int(steps), float(epsilon), float(delta)))


def _reference_zo_o2nc_cor44_sigma(d, lipschitz, T, B1, B2, rho, count_rule="exact"):
    with working_precision(PRECISION):
        return _round_up(zo_o2nc_privacy.zo_o2nc_cor44_sigma(int(d), float(lipschitz), int(T), int(B1), int(B2),
                                                             float(rho), count_rule=count_rule))


def _reference_spider_sosp_sigma(rule, *, lipschitz, smoothness, loss_gap, d, n, epsilon, delta, steps=None,
                                 adjacency="replace_one", tree_scope="global"):
    with working_precision(PRECISION):
        return _round_up(spider_sosp_privacy.spider_sosp_sigma(
            rule, lipschitz=lipschitz, smoothness=smoothness, loss_gap=loss_gap, d=d, n=n, epsilon=epsilon,
            delta=delta, steps=steps, adjacency=adjacency, tree_scope=tree_scope, allow_nonprivate=True,
        ))


def _reference_spider_sosp_mu(sigma, *, lipschitz, smoothness, loss_gap, d, n, epsilon, steps=None,
                              adjacency="replace_one", tree_scope="global"):
    with working_precision(PRECISION):
        return float(spider_sosp_privacy.spider_sosp_mu(
            mpmath.mpf(float(sigma)), lipschitz=lipschitz, smoothness=smoothness, loss_gap=loss_gap, d=d, n=n,
            epsilon=epsilon, steps=steps, adjacency=adjacency, tree_scope=tree_scope,
        ))


def _reference_nsnc_tree_sigma_as_printed(sensitivity, tree_size, epsilon, delta):
    with working_precision(PRECISION):
        return _round_up(nsnc_improved_privacy.nsnc_tree_sigma_as_printed(float(sensitivity), int(tree_size),
                                                                          float(epsilon), float(delta)))


def _nsnc_theory(name):
    """``reference.algorithms.nsnc_improved_theory.<name>`` as it is: its hyper-parameters and bounds are floats and
    ints, its plans are computed with at least 128 bits, and the searches of ``min_records_*`` calibrate σ dozens of
    times, which PRECISION digits would make several times slower."""
    function = getattr(nsnc_improved_theory, name)

    @functools.wraps(function)  # keeps the signature (mutants bind arguments by name)
    def call(*args, **kwargs):
        return function(*args, **kwargs)

    return call


# What each protocol wrapper runs, for the generated paper maps (proofs_checks.catalogue).
_REFERENCE_CODE = {
    "rdp_poisson_gaussian": "reference.accounting.rdp.rdp_poisson_gaussian",
    "epsilon_from_rdp": "reference.accounting.conversions.epsilon_from_rdp",
    "epsilon_poisson_gaussian": "reference.accounting.rdp.rdp_poisson_gaussian + conversions.epsilon_from_rdp",
    "gaussian_delta": "reference.accounting.gaussian.gaussian_delta",
    "noise_multiplier_poisson_gaussian": "reference.accounting.calibration.calibrate_gaussian_noise",
    "epsilon_from_zcdp": "reference.accounting.conversions.epsilon_from_zcdp",
    "rdp_tree_aggregation": "reference.accounting.rdp.rdp_tree_aggregation",
    "rdp_tree_exact": "reference.accounting.rdp.rdp_tree_exact",
    "dpzero_lemma22_sigma": "reference.algorithms.dpzero_privacy.dpzero_lemma22_sigma",
    "zo_o2nc_cor44_sigma": "reference.algorithms.zo_o2nc_privacy.zo_o2nc_cor44_sigma",
    "spider_sosp_sigma": "reference.algorithms.spider_sosp_privacy.spider_sosp_sigma",
    "spider_sosp_mu": "reference.algorithms.spider_sosp_privacy.spider_sosp_mu",
    "nsnc_tree_sigma_as_printed": "reference.algorithms.nsnc_improved_privacy.nsnc_tree_sigma_as_printed",
    "nsnc_single_pass_settings": "reference.algorithms.nsnc_improved_theory.single_pass_settings",
    "nsnc_multi_pass_settings": "reference.algorithms.nsnc_improved_theory.multi_pass_settings",
    "nsnc_min_records_single_pass": "reference.algorithms.nsnc_improved_theory.min_records_single_pass",
    "nsnc_min_records_multi_pass": "reference.algorithms.nsnc_improved_theory.min_records_multi_pass",
}


def reference_implementations() -> dict[str, Callable]:
    """The accounting protocols computed by ``reference.accounting`` (mpmath, PRECISION digits) as floats."""
    implementations = {
        "rdp_poisson_gaussian": _reference_rdp_poisson_gaussian,
        "epsilon_from_rdp": _reference_epsilon_from_rdp,
        "epsilon_poisson_gaussian": _reference_epsilon_poisson_gaussian,
        "gaussian_delta": _reference_gaussian_delta,
        "noise_multiplier_poisson_gaussian": _reference_noise_multiplier,
        "epsilon_from_zcdp": _reference_epsilon_from_zcdp,
        "rdp_tree_aggregation": _reference_rdp_tree_aggregation,
        "rdp_tree_exact": _reference_rdp_tree_exact,
        "dpzero_lemma22_sigma": _reference_dpzero_lemma22_sigma,
        "zo_o2nc_cor44_sigma": _reference_zo_o2nc_cor44_sigma,
        "spider_sosp_sigma": _reference_spider_sosp_sigma,
        "spider_sosp_mu": _reference_spider_sosp_mu,
        "nsnc_tree_sigma_as_printed": _reference_nsnc_tree_sigma_as_printed,
        "nsnc_single_pass_settings": _nsnc_theory("single_pass_settings"),
        "nsnc_multi_pass_settings": _nsnc_theory("multi_pass_settings"),
        "nsnc_min_records_single_pass": _nsnc_theory("min_records_single_pass"),
        "nsnc_min_records_multi_pass": _nsnc_theory("min_records_multi_pass"),
    }
    for name, function in implementations.items():
        function.__dpref_code__ = _REFERENCE_CODE[name]
    return implementations


# ---------------------------------------------------------------------------------------------------
# Fast (float64)


def _fast_rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps):
    return fast_rdp.rdp_poisson_gaussian(np.asarray(orders, dtype=np.float64), float(sampling_probability),
                                         float(noise_multiplier), int(steps))


def _fast_epsilon_from_rdp(orders, rdp, delta):
    return float(fast_conversions.epsilon_from_rdp(np.asarray(orders, dtype=np.float64),
                                                   np.asarray(rdp, dtype=np.float64), float(delta))[0])


def _fast_epsilon_poisson_gaussian(sampling_probability, noise_multiplier, steps, delta):
    curve = fast_rdp.rdp_poisson_gaussian(fast_rdp.DEFAULT_ORDERS, float(sampling_probability), float(noise_multiplier),
                                          int(steps))
    return float(fast_conversions.epsilon_from_rdp(fast_rdp.DEFAULT_ORDERS, curve, float(delta))[0])


def _fast_gaussian_delta(epsilon, mu):
    return float(fast_conversions.gaussian_delta(float(epsilon), float(mu)))


def _fast_noise_multiplier(target_epsilon, delta, sampling_probability, steps):
    q, steps, delta = float(sampling_probability), int(steps), float(delta)

    def epsilon_of_noise(z):  # evaluated at float(z): the float returned below is the one certified here
        return _fast_epsilon_poisson_gaussian(q, float(z), steps, delta)

    with warnings.catch_warnings():
        # trial points far from the answer put the optimum on the edge of the order grid; calibrate re-emits
        # the warnings of the returned point only
        warnings.simplefilter("ignore")
        z = calibration.calibrate(epsilon_of_noise, float(target_epsilon), rel_tol=1e-12)
    return float(z)


def _fast_epsilon_from_zcdp(rho, delta):
    return float(fast_conversions.epsilon_from_zcdp(float(rho), float(delta)))


def _fast_rdp_tree_aggregation(orders, noise_multiplier, steps, restarts=1):
    return fast_rdp.rdp_tree_aggregation(np.asarray(orders, dtype=np.float64), float(noise_multiplier), int(steps),
                                         int(restarts))


def fast_implementations() -> dict[str, Callable]:
    """The accounting protocols computed by ``reference/fast`` (float64). Closed-form σ rules and
    ``rdp_tree_exact`` have no twin and are borrowed from the reference by ``fast_subject``."""
    return {
        "rdp_poisson_gaussian": _fast_rdp_poisson_gaussian,
        "epsilon_from_rdp": _fast_epsilon_from_rdp,
        "epsilon_poisson_gaussian": _fast_epsilon_poisson_gaussian,
        "gaussian_delta": _fast_gaussian_delta,
        "noise_multiplier_poisson_gaussian": _fast_noise_multiplier,
        "epsilon_from_zcdp": _fast_epsilon_from_zcdp,
        "rdp_tree_aggregation": _fast_rdp_tree_aggregation,
    }
