"""dpzero Lemma 2.2, Algorithms 1 and 2 line 5, and §5 with App. B.2: how the runs of DPZero are private.

Zhang, Li, Thekumparampil, Oh, He — *DPZero: Private Fine-Tuning of Language Models without
Backpropagation* (ICML 2024). The algorithms are in ``reference.algorithms.dpzero``; this module holds
their noise formulas and the privacy plan that picks one for a run.

Noise formulas (mpmath scalars at the caller's working precision, ``reference.precision.working_precision``):

* ``dpzero_lemma22_sigma``: Lemma 2.2 (Kairouz–Oh–Viswanath), σ = 2Δ√(2T log(e + ε/δ))/ε. It is false for
  large ε (erratum dpzero.E5): it warns beyond ε = 80, and ``dpzero_lemma22_failure_epsilon`` finds the first
  ε at which it stops being private.
* ``dpzero_sigma``: Algorithms 1 and 2, line 5, σ = 4C√(2T log(e + ε/δ))/(nε), a standard deviation
  (erratum dpzero.E1: the paper writes "variance").
* ``dpzero_gdp_exact_sigma``: the exact Gaussian-DP calibration of the same composition (not the paper's).
* ``dpzero_opacus_epsilon``, ``dpzero_opacus_noise_multiplier``: a replica of the Opacus 1.4 RDP accountant and
  of its ``get_noise_multiplier`` bisection, which the experiments call (§5, App. B.2). Their default
  ``arithmetic="float64"`` runs on ``reference.fast``.

The privacy plan (``privacy_plan`` returns a ``PrivacyPlan``): the neighbouring relation, the sensitivity of
the released per-step quantity, the noise standard deviation σ and the ε the accountant certifies, for each
batching:

=============  =========================  ==================================================================
batching       accountant                 noise, guarantee
=============  =========================  ==================================================================
``full``       ``lemma22`` (paper)        σ = 2Δ√(2T log(e+ε/δ))/ε, Δ = 2C/n (Lemma 2.2), replace-one
``full``       ``gdp_exact``              σ = √T·Δ/μ*(ε, δ), exact Gaussian-DP, replace-one
``full``       ``drv_advanced``           σ = Δ√(2 log(1.25/δ₀))/ε₀ per step, δ₀ = δ/(T+1), ε₀ the largest
                                          with DRV advanced composition ≤ ε (the authors' older toy
                                          script; a cross-check), replace-one, needs ε₀ < 1
``poisson``    ``rdp``                    σ = z·C/B, z from the Poisson-subsampled RDP accountant,
                                          fixed normaliser B and rate q = B/n; zero-out neighbours
                                          (n public, see below)
``poisson``    ``rdp_opacus``             σ = 2z·C/B, z from the Opacus-1.4 replica (the experiments,
                                          [code]); zero-out guarantee at 2z, labelled "heuristic" for
                                          replace-one (dpzero.E7)
``shuffle``    ``gdp_participation``      σ = √K·Δ/μ*(ε, δ), Δ = 2C/B, K = participations per record
                                          (⌈T/⌊n/B⌋⌉): no amplification claimed, proven, replace-one
``shuffle``    ``poisson_rdp_for_         the public code's mismatch (dpzero.E7): Poisson RDP accounting of
               shuffling``                shuffled batches; reproduction only, warns, "heuristic"
=============  =========================  ==================================================================

Mini-batches need an explicit accountant: replacing n by B in the paper's σ is not the code's guarantee
(dpzero.E21).

Poisson batching and the neighbouring relation. Each record is in the batch independently with probability q
and the clipped sum is divided by the fixed normaliser B. Two ways to fix q:

* ``sampling_probability=q`` given: q is a public constant of the mechanism, whatever the dataset's size, so a
  neighbour that adds or removes a record is sampled at the same rate: the guarantee is for ADD/REMOVE
  neighbours (relation "add_remove"), Δ = C/B.
* ``sampling_probability=None`` (default): q = B/n with n = len(data). Then n is a public constant too: a
  neighbour that drops a record would be sampled at B/(n−1) and is NOT covered (one record's removal can then
  move the clipped mean by more than C/B). The guarantee is for dp_accounting's ZERO_OUT relation: one record
  replaced by a null record whose clipped difference is 0 (e.g. a constant loss), n unchanged — under the
  fixed normaliser B such a record contributes exactly what an absent one would.

Either way the Poisson-subsampled Gaussian RDP (valid for add/remove and zero-out) applies with Δ = C/B.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from collections.abc import Sequence

import mpmath
import numpy as np

from ..accounting.accountant import RdpAccountant
from ..accounting.calibration import calibrate_gaussian_noise
from ..accounting.composition import advanced_composition
from ..accounting.errors import AccountingError
from ..accounting.events import GaussianEvent, NeighbouringRelation, PoissonSampledEvent
from ..accounting.gaussian import composed_gaussian_mu, gaussian_epsilon, gaussian_mu
from ..validation import check_int, check_probability, check_real
from ._privacy_common import first_failing_epsilon, mp_delta, mp_positive

__all__ = [
    "OPACUS_ORDERS",
    "OPACUS_MAX_SIGMA",
    "BATCHINGS",
    "ACCOUNTANTS",
    "LEMMA22_VERIFIED_EPSILON",
    "LEMMA22_OUTSIDE_NOTE",
    "dpzero_lemma22_sigma",
    "dpzero_sigma",
    "dpzero_gdp_exact_sigma",
    "dpzero_lemma22_failure_epsilon",
    "dpzero_opacus_epsilon",
    "dpzero_opacus_noise_multiplier",
    "ReproductionModeWarning",
    "PrivacyPlan",
    "privacy_plan",
    "steps_per_epoch",
]

#: Opacus 1.4 ``RDPAccountant.DEFAULT_ALPHAS``: [1 + x/10 for x in 1..99] + [12..63] (no 11, nothing
#: above 63). Kept as the Python floats Opacus uses, so the replica sees the same orders.
OPACUS_ORDERS: tuple[float, ...] = tuple(1 + x / 10.0 for x in range(1, 100)) + tuple(float(a) for a in range(12, 64))

#: Opacus 1.4 ``accountants.utils.MAX_SIGMA``: the doubling loop gives up beyond it.
OPACUS_MAX_SIGMA = 1e6

BATCHINGS = ("full", "poisson", "shuffle")
#: The accountants allowed for each batching; the first is the default.
ACCOUNTANTS = {
    "full": ("lemma22", "gdp_exact", "drv_advanced"),
    "poisson": ("rdp", "rdp_opacus"),
    "shuffle": ("gdp_participation", "poisson_rdp_for_shuffling"),
}

#: Lemma 2.2 was verified for ε ≤ 80 only (erratum dpzero.E5); beyond, privacy_plan warns and reports the exact ε.
LEMMA22_VERIFIED_EPSILON = 80
#: The note of a Lemma 2.2 plan whose exact Gaussian-DP ε exceeds the target (ε beyond 80, erratum dpzero.E5).
LEMMA22_OUTSIDE_NOTE = "Lemma 2.2 outside its verified range (E5): exact Gaussian-DP ε reported"


class ReproductionModeWarning(UserWarning):
    """A mode that reproduces the public code's accounting, which is not a proven guarantee."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class PrivacyPlan:
    """How a run is private (dpzero Lemma 2.2, Theorems 1–3; the experiments' accounting, §5 and App. B.2).

    accountant, batching: as passed. relation: the neighbouring relation the guarantee is stated for —
    "replace_one", "add_remove" (Poisson with a given rate q) or "zero_out" (Poisson with q = B/n: one
    record replaced by a null record, n public; module doc). sensitivity: Δ, the ℓ2-sensitivity of the
    clipped average (the released quantity before noise) under that relation, on the scale at which
    clipping happens.
    noise_std: σ, the standard deviation of the Gaussian noise added to it (rounded UP to float64).
    noise_multiplier: σ/Δ. epsilon, delta: the target. epsilon_claimed: the ε the plan states for ``steps``
    steps — what the accountant certifies (≤ epsilon), never less than epsilon_tight when that is known: a
    Lemma 2.2 plan beyond its verified range (ε > 80, erratum dpzero.E5) can have an exact ε above the target,
    and then reports the exact one. epsilon_tight: the exact ε at δ when the run is an exact Gaussian-DP
    composition (full batch; shuffling with the participation count), else None. mu_gdp: its μ.
    guarantee: "proven" or "heuristic" (reproduction of the public code). note: why, in words.
    Fields are keyword-only.
    """

    accountant: str
    batching: str
    relation: str
    steps: int
    sensitivity: float
    noise_std: float
    noise_multiplier: float
    epsilon: float
    delta: float
    epsilon_claimed: float
    epsilon_tight: float | None
    mu_gdp: float | None
    guarantee: str
    note: str


# ---------------------------------------------------------------------------------------------------
# Noise formulas: Lemma 2.2, Algorithms 1 and 2 line 5, exact Gaussian-DP (dpzero.E1, dpzero.E5)


def _log_e_plus(epsilon, delta):
    """Lg = log(e + ε/δ), the logarithm in every DPZero calibration (dpzero Lemma 2.2)."""
    return mpmath.log(mpmath.e + epsilon / delta)


def dpzero_lemma22_sigma(sensitivity, steps, epsilon, delta, *, strict=False):
    """dpzero Lemma 2.2 (Kairouz–Oh–Viswanath): σ = 2Δ√(2T log(e + ε/δ))/ε.

    sensitivity: Δ, the ℓ2-sensitivity of each answer. steps: T adaptive compositions.
    epsilon, delta: the target (ε, δ). The result is a standard deviation (erratum dpzero.E1: the paper
    writes "variance").

    Erratum dpzero.E5: the lemma is stated "for any ε > 0" but is false for large ε (exact GDP: first
    failure at ε ≈ 169 for δ = 1e-5, see ``dpzero_lemma22_failure_epsilon``); it was verified for
    ε ≤ 80. Beyond 80 this warns, or raises ValueError with ``strict=True``.
    """
    delta_s = mp_positive("sensitivity", sensitivity)
    steps = check_int("steps", steps, minimum=1)
    eps = mp_positive("epsilon", epsilon)
    delta = mp_delta("delta", delta)
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
    """dpzero Algorithms 1 and 2, line 5: σ = 4C√(2T log(e + ε/δ))/(nε) (erratum dpzero.E1).

    clip_threshold: C. n: dataset size (full batch). The clipped mean has replace-one sensitivity
    Δ = 2C/n, so this is ``dpzero_lemma22_sigma(2C/n, T, ε, δ)``. Reference value: C = 1,
    n = 1000, T = 448, ε = 2, δ = 1e-5 gives σ = 0.2091569102.
    """
    clip = mp_positive("clip_threshold", clip_threshold)
    n = check_int("n", n, minimum=1)
    return dpzero_lemma22_sigma(2 * clip / n, steps, epsilon, delta, strict=strict)


def dpzero_gdp_exact_sigma(sensitivity, steps, epsilon, delta):
    """Exact Gaussian-DP (not the paper's method): the tight full-batch σ = √T·Δ/μ*(ε, δ).

    T adaptive Gaussian mechanisms with sensitivity Δ and noise σ are exactly μ-GDP with
    μ = √T·Δ/σ; μ* = ``gaussian_mu(ε, δ)`` (δ(ε; μ*) ≤ δ). Reference value: at ε = 2, δ = 1e-5 this
    noise is 2.48× smaller than Lemma 2.2's (μ 0.5016 vs 0.2024).
    """
    delta_s = mp_positive("sensitivity", sensitivity)
    steps = check_int("steps", steps, minimum=1)
    eps = mp_positive("epsilon", epsilon)
    delta = mp_delta("delta", delta)
    return mpmath.sqrt(steps) * delta_s / gaussian_mu(eps, delta)


def dpzero_lemma22_failure_epsilon(delta):
    """The first ε at which Lemma 2.2's σ is no longer (ε, δ)-DP (dpzero Lemma 2.2, erratum dpzero.E5).

    Lemma 2.2's σ gives the composition μ = ε/(2√(2 log(e + ε/δ))), independent of T and Δ; it is
    private iff δ_GDP(ε; μ) ≤ δ. Scans ε ∈ [0.01, 10^4] (40 points per decade) and bisects the
    first failure; returns the largest certified ε found below it. Reference values: ≈ 83 (δ = 0.5),
    91 (0.1), 130 (1e-3), 169 (1e-5), 189 (1e-6), 267 (1e-10).
    """
    delta = mp_delta("delta", delta)
    return first_failing_epsilon(
        lambda eps: eps / (2 * mpmath.sqrt(2 * _log_e_plus(eps, delta))), delta, smallest=0.01, largest=1e4
    )


def _check_orders(orders):
    if isinstance(orders, (str, bytes)) or not isinstance(orders, Sequence) or len(orders) == 0:
        raise TypeError("orders must be a non-empty sequence of real numbers > 1")
    return [check_real(f"orders[{i}]", a) for i, a in enumerate(orders)]


def dpzero_opacus_epsilon(noise_multiplier, sampling_probability, steps, delta, *, orders=OPACUS_ORDERS, arithmetic="float64"):
    """ε that Opacus 1.4's ``RDPAccountant`` reports for T Poisson-subsampled Gaussian steps (dpzero §5, App. B.2).

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
        from ..accounting import conversions, rdp

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
    """Replica of Opacus 1.4 ``accountants.utils.get_noise_multiplier`` (accountant "rdp"), dpzero §5, App. B.2.

    The DPZero experiments call it with sample_rate q = B/n = 64/(512·#classes), steps T = 10 000,
    δ = 1e-5 ([code] roberta/src/trainer.py). The bisection, step by step as in Opacus:

        eps_high = inf; sigma_low, sigma_high = 0, 10
        while eps_high > target: sigma_high *= 2; eps_high = eps(sigma_high)   # first try: 20
            (give up beyond MAX_SIGMA = 1e6)
        while target - eps_high > tolerance:
            sigma = (sigma_low + sigma_high)/2; eps = eps(sigma)
            if eps < target: sigma_high, eps_high = sigma, eps
            else: sigma_low = sigma
        return sigma_high

    so the returned z achieves ε ∈ (target − tolerance, target]. eps(·) is
    ``dpzero_opacus_epsilon`` (our float64 or mpmath RDP). Reference value: SST-2, q = 0.0625,
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
# Privacy plan (dpzero Lemma 2.2, Theorems 1–3; the experiments, §5 and App. B.2)


def _round_up_to_float(value) -> float:
    """float(value), moved up by one ulp if rounding went down: σ, Δ and ε are never understated."""
    out = float(value)
    if mpmath.mpf(out) < value:
        out = math.nextafter(out, math.inf)
    return out


def steps_per_epoch(n: int, batch_size: int) -> int:
    """⌊n/B⌋: shuffled batching drops the incomplete last batch of each epoch (documented choice)."""
    return n // batch_size


def privacy_plan(*, clip_threshold, n, steps, epsilon, delta, batching="full", batch_size=None, accountant=None,
                 sampling_probability=None):
    """The noise σ and the guarantee for one run (the table in the module doc).

    clip_threshold: C > 0, finite (C' for ``clip_target="raw_difference"``: the plan is on the scale at
    which clipping happens). n: dataset size. steps: T, the integer number of steps actually run. epsilon, delta: the target (ε > 0, δ ∈ (0, 1)). batching: "full", "poisson" or
    "shuffle". batch_size: B (expected batch size qn for Poisson; fixed size for shuffling); None for
    full batch. accountant: one of ``ACCOUNTANTS[batching]`` (default: the first). sampling_probability: q
    for Poisson batching, a public constant (add/remove guarantee); None means q = B/n (zero-out guarantee,
    n public; module doc). Must be None for the other batchings.

    The plan is a pure function of its arguments and the mpmath working precision, so it is memoised
    (the Poisson RDP calibration takes seconds in mpmath and audits call the algorithm repeatedly).
    """
    clip = check_real("clip_threshold", clip_threshold, positive=True)
    n = check_int("n", n, minimum=1)
    steps = check_int("steps", steps, minimum=1)
    eps = check_real("epsilon", epsilon, positive=True)
    delta = check_probability("delta", delta)
    batching, batch_size, accountant = _check_batching(batching, batch_size, accountant, n)
    sampling_probability = _check_sampling_probability(batching, sampling_probability)
    if accountant == "lemma22" and eps > LEMMA22_VERIFIED_EPSILON:
        warnings.warn(
            f"dpzero Lemma 2.2 is not verified for epsilon > {LEMMA22_VERIFIED_EPSILON:g} (erratum E5: it is not "
            f"private for large epsilon); got epsilon = {eps}. The plan states the exact Gaussian-DP epsilon of its "
            "sigma when that is larger. Use accountant='gdp_exact'.",
            UserWarning,
            stacklevel=2,
        )
    if accountant == "poisson_rdp_for_shuffling":
        warnings.warn(
            "batching='shuffle' with accountant='poisson_rdp_for_shuffling' reproduces the public DPZero code (E7): "
            "shuffled fixed-size batches accounted as Poisson sampling. This is NOT a proven guarantee.",
            ReproductionModeWarning,
            stacklevel=2,
        )
    return _privacy_plan(float(clip), n, steps, float(eps), float(delta), batching, batch_size, accountant,
                         sampling_probability, mpmath.mp.prec)


@functools.lru_cache(maxsize=256)
def _privacy_plan(clip, n, steps, eps, delta, batching, batch_size, accountant, sampling_probability, precision):
    with mpmath.workprec(precision):
        return _compute_plan(clip, n, steps, eps, delta, batching, batch_size, accountant, sampling_probability)


def _compute_plan(clip, n, steps, eps, delta, batching, batch_size, accountant, sampling_probability):
    eps_mp, delta_mp, clip_mp = mpmath.mpf(eps), mpmath.mpf(delta), mpmath.mpf(clip)

    if batching == "full":
        sensitivity = 2 * clip_mp / n  # replace-one, dpzero §1.2
        if accountant == "lemma22":
            with warnings.catch_warnings():  # the dpzero.E5 warning is issued by privacy_plan on every call
                warnings.simplefilter("ignore", UserWarning)
                sigma = dpzero_lemma22_sigma(sensitivity, steps, eps_mp, delta_mp)
            claimed, guarantee, note = eps_mp, "proven", "Lemma 2.2 (valid for epsilon <= 80, erratum E5)"
            return _gdp_plan(accountant, batching, "replace_one", steps, sensitivity, sigma, steps, eps, delta,
                             claimed, guarantee, note, exceeded_note=LEMMA22_OUTSIDE_NOTE)
        if accountant == "drv_advanced":
            sigma, claimed = _drv_advanced_sigma(sensitivity, steps, eps_mp, delta_mp)
            guarantee = "proven"
            note = ("classic Gaussian mechanism per step at (eps0, delta/(T+1)), eps0 < 1, and DRV advanced "
                    "composition (Dwork, Rothblum, Vadhan 2010; a cross-check of the Lemma 2.2 plan, not the paper's accountant)")
        else:
            sigma = calibrate_gaussian_noise(eps_mp, delta_mp, steps=steps, accountant="gdp_exact") * sensitivity
            claimed, guarantee, note = None, "proven", "exact Gaussian-DP composition (Dong, Roth, Su 2022, Cor. 3.3; docs/accounting.md)"
        return _gdp_plan(accountant, batching, "replace_one", steps, sensitivity, sigma, steps, eps, delta,
                         claimed, guarantee, note)

    q = mpmath.mpf(batch_size) / n if sampling_probability is None else mpmath.mpf(sampling_probability)
    if batching == "poisson":
        # q fixed by the caller: add/remove; q = B/n: zero-out with n public (module doc)
        if sampling_probability is None:
            relation, relation_name = NeighbouringRelation.ZERO_OUT, "zero_out"
        else:
            relation, relation_name = NeighbouringRelation.ADD_OR_REMOVE_ONE, "add_remove"
        if accountant == "rdp":
            sensitivity = clip_mp / batch_size  # fixed normaliser B (module doc)
            z = calibrate_gaussian_noise(eps_mp, delta_mp, steps=steps, sampling_probability=q,
                                         relation=relation, accountant="rdp")
            ledger = RdpAccountant(relation=relation)
            ledger.compose(PoissonSampledEvent(q, GaussianEvent(z)), steps)
            return PrivacyPlan(accountant=accountant, batching=batching, relation=relation_name, steps=steps,
                               sensitivity=_round_up_to_float(sensitivity),
                               noise_std=_round_up_to_float(z * sensitivity),
                               noise_multiplier=_round_up_to_float(z), epsilon=eps, delta=delta,
                               epsilon_claimed=_round_up_to_float(ledger.get_epsilon(delta_mp)),
                               epsilon_tight=None, mu_gdp=None, guarantee="proven",
                               note="Poisson-subsampled Gaussian RDP (Mironov-Talwar-Zhang), BBGHS conversion")
        return _opacus_replica_plan(accountant, batching, steps, clip_mp, batch_size, q, eps, delta,
                                    "the experiments' accounting ([code], E7): Opacus RDP (add/remove) with the "
                                    "sensitivity doubled to stand for replace-one; proven for "
                                    f"{relation_name.replace('_', '-')} only")
    # shuffle
    per_epoch = steps_per_epoch(n, batch_size)
    sensitivity = 2 * clip_mp / batch_size  # replace-one: the record keeps its position, hence its batch
    if accountant == "gdp_participation":
        participations = -(-steps // per_epoch)
        sigma = calibrate_gaussian_noise(eps_mp, delta_mp, steps=participations, accountant="gdp_exact") * sensitivity
        return _gdp_plan(accountant, batching, "replace_one", steps, sensitivity, sigma, participations, eps, delta,
                         None, "proven",
                         f"each record is in at most {participations} of the {steps} batches (one per epoch of "
                         f"{per_epoch} steps); exact Gaussian-DP over those, no amplification claimed")
    return _opacus_replica_plan(accountant, batching, steps, clip_mp, batch_size, q, eps, delta,
                                "reproduction mode: Poisson RDP accounting applied to shuffled batches (E7)")


def _opacus_replica_plan(accountant, batching, steps, clip, batch_size, q, eps, delta, note):
    """The experiments' heuristic plan (E7): z from the Opacus-1.4 replica at rate q, σ = 2z·C/B, Δ = 2C/B."""
    z = dpzero_opacus_noise_multiplier(eps, delta, float(q), steps)
    return PrivacyPlan(accountant=accountant, batching=batching, relation="replace_one", steps=steps,
                       sensitivity=_round_up_to_float(2 * clip / batch_size),
                       noise_std=_round_up_to_float(2 * mpmath.mpf(z) * clip / batch_size),
                       noise_multiplier=float(z), epsilon=eps, delta=delta,
                       epsilon_claimed=_round_up_to_float(dpzero_opacus_epsilon(z, float(q), steps, delta)),
                       epsilon_tight=None, mu_gdp=None, guarantee="heuristic", note=note)


def _drv_advanced_sigma(sensitivity, steps, eps, delta):
    """The authors' older toy script (a cross-check, not the paper's accounting): per-step classic Gaussian mechanism
    σ₀ = Δ√(2 log(1.25/δ₀))/ε₀ (Dwork–Roth Thm A.1, valid for ε₀ < 1) with δ₀ = δ/(T+1), composed by DRV
    advanced composition (``composition.advanced_composition`` with slack δ₀: total δ = Tδ₀ + δ₀ = δ).
    ε₀ is the largest value whose composed ε' ≤ ε, found by bisection on the increasing map ε₀ ↦ ε' (the
    toy script bisected to 1e-4; here to working precision, keeping the side that certifies).
    Returns (σ, ε' certified)."""
    delta0 = delta / (steps + 1)

    def composed(eps0):
        return advanced_composition(eps0, delta0, steps, delta0)[0]

    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    if composed(hi) <= eps:
        raise ValueError(
            "accountant='drv_advanced' needs a per-step eps0 < 1 (the classic Gaussian mechanism's range), "
            f"but eps0 = 1 already composes to {mpmath.nstr(composed(hi), 6)} <= epsilon = {mpmath.nstr(eps, 6)}: "
            "use 'gdp_exact'"
        )
    for _ in range(mpmath.mp.prec + 8):  # composed(lo) <= eps < composed(hi) throughout
        mid = (lo + hi) / 2
        if composed(mid) <= eps:
            lo = mid
        else:
            hi = mid
    if lo == 0:
        raise ValueError("accountant='drv_advanced' found no positive per-step eps0 for this (epsilon, delta, steps)")
    return sensitivity * mpmath.sqrt(2 * mpmath.log(mpmath.mpf("1.25") / delta0)) / lo, composed(lo)


def _gdp_plan(accountant, batching, relation, steps, sensitivity, sigma, compositions, eps, delta, claimed,
              guarantee, note, exceeded_note=None):
    """A plan whose release is an exact Gaussian-DP composition: its exact ε (``epsilon_tight``) is known, so the
    stated ε is never below it (a certified ε under the exact one would overstate the guarantee)."""
    sigma_f = _round_up_to_float(sigma)
    mu = composed_gaussian_mu([mpmath.mpf(sigma_f) / sensitivity], [compositions])
    tight = gaussian_epsilon(mpmath.mpf(delta), mu)
    if claimed is None:
        claimed = tight
    elif tight > claimed:
        claimed = tight
        note = exceeded_note or f"{note}; the certified epsilon is below the exact one: exact Gaussian-DP ε reported"
    return PrivacyPlan(accountant=accountant, batching=batching, relation=relation, steps=steps,
                       sensitivity=_round_up_to_float(sensitivity), noise_std=sigma_f,
                       noise_multiplier=_round_up_to_float(mpmath.mpf(sigma_f) / sensitivity), epsilon=eps,
                       delta=delta, epsilon_claimed=_round_up_to_float(claimed),
                       epsilon_tight=_round_up_to_float(tight), mu_gdp=_round_up_to_float(mu), guarantee=guarantee,
                       note=note)


def _check_batch_size(batching, batch_size, n):
    """batching in BATCHINGS; batch_size None for full batch, an integer B in [1, n] otherwise."""
    if batching not in BATCHINGS:
        raise ValueError(f"batching must be one of {BATCHINGS}, got {batching!r}")
    if batching == "full":
        if batch_size is not None:
            raise ValueError(f"batch_size must be None for batching='full' (every step uses all n = {n} samples)")
        return None
    if batch_size is None:
        raise ValueError(f"batching={batching!r} needs batch_size (B), an integer in [1, n]")
    return check_int("batch_size", batch_size, minimum=1, maximum=n)


def _check_sampling_probability(batching, sampling_probability):
    """None, or q ∈ (0, 1] for Poisson batching only (a float, so that plans are memoised by value)."""
    if sampling_probability is None:
        return None
    if batching != "poisson":
        raise ValueError(f"sampling_probability must be None for batching={batching!r} (it is Poisson's rate q)")
    return float(check_probability("sampling_probability", sampling_probability, open_right=False))


def _check_batching(batching, batch_size, accountant, n):
    batch_size = _check_batch_size(batching, batch_size, n)
    allowed = ACCOUNTANTS[batching]
    if accountant is None:
        accountant = allowed[0]
    if accountant not in allowed:
        raise ValueError(
            f"accountant must be one of {allowed} for batching={batching!r}, got {accountant!r} "
            "(each batching has its own accountant; dpzero.E21)"
        )
    return batching, batch_size, accountant
