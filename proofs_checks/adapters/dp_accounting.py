"""Adapter for Google's ``dp_accounting``: its RDP and PLD accountants as subjects.

* ``dp_accounting.rdp`` — ``dp_accounting.rdp.RdpAccountant`` composing
  ``PoissonSampledDpEvent(q, GaussianDpEvent(z))`` ``steps`` times under ``ADD_OR_REMOVE_ONE``; its
  default orders are ours (1.1..10.9, 11..63, 128..1024). ``epsilon_from_rdp`` is
  ``dp_accounting.rdp.compute_epsilon`` (BBGHS conversion plus the KL/TV bound; orders ≤ 1.01 ignored;
  a negative RDP gives ε = 0 with only a logged warning, §1 "Precision approach"). A fractional order
  whose series does not converge within 1000 terms gets RDP = inf (the order is dropped).
  Calibration is ``dp_accounting.calibrate_dp_mechanism`` (bracket and bisect).
* ``dp_accounting.pld`` — ``dp_accounting.pld.PLDAccountant`` (pessimistic estimate, connect-the-dots,
  ``value_discretization_interval`` 1e-4): an upper bound on ε with no stated error. ``gaussian_delta``
  is the exact profile of ``pld.privacy_loss_mechanism.GaussianPrivacyLoss`` with σ = 1/μ.
"""

from __future__ import annotations

import numpy as np

from ..protocols import Subject
from . import require

__all__ = ["subjects", "PLD_DISCRETIZATION", "rdp_orders"]

#: The PLD accountant's default ``value_discretization_interval`` (used as is).
PLD_DISCRETIZATION = 1e-4


def _library():
    return require("dp_accounting", "dp_accounting")


def _event(dpa, sampling_probability, noise_multiplier, steps):
    sampled = dpa.PoissonSampledDpEvent(float(sampling_probability), dpa.GaussianDpEvent(float(noise_multiplier)))
    return dpa.SelfComposedDpEvent(sampled, int(steps))


def rdp_orders() -> np.ndarray:
    """dp_accounting's default RDP orders (the same list as ours)."""
    _library()
    from dp_accounting.rdp import rdp_privacy_accountant

    return np.asarray(rdp_privacy_accountant.DEFAULT_RDP_ORDERS, dtype=float)


def subjects() -> dict[str, Subject]:
    """``{"dp_accounting.rdp": ..., "dp_accounting.pld": ...}``; :class:`AdapterUnavailable` if not installed."""
    dpa = _library()
    rdp_module = require("dp_accounting.rdp", "dp_accounting")
    pld_module = require("dp_accounting.pld", "dp_accounting")
    from dp_accounting.pld import privacy_loss_mechanism

    relation = dpa.NeighboringRelation.ADD_OR_REMOVE_ONE

    def rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps):
        accountant = rdp_module.RdpAccountant(orders=[float(a) for a in orders], neighboring_relation=relation)
        accountant.compose(_event(dpa, sampling_probability, noise_multiplier, steps))
        return np.asarray(accountant.rdp, dtype=float)

    def epsilon_from_rdp(orders, rdp, delta):
        epsilon, _order = rdp_module.compute_epsilon([float(a) for a in orders], [float(r) for r in rdp], float(delta))
        return float(epsilon)

    def rdp_epsilon(sampling_probability, noise_multiplier, steps, delta):
        accountant = rdp_module.RdpAccountant(neighboring_relation=relation)
        accountant.compose(_event(dpa, sampling_probability, noise_multiplier, steps))
        return float(accountant.get_epsilon(float(delta)))

    def pld_epsilon(sampling_probability, noise_multiplier, steps, delta):
        accountant = pld_module.PLDAccountant(relation, value_discretization_interval=PLD_DISCRETIZATION)
        accountant.compose(_event(dpa, sampling_probability, noise_multiplier, steps))
        return float(accountant.get_epsilon(float(delta)))

    def calibrated(make_accountant):
        def noise_multiplier_poisson_gaussian(target_epsilon, delta, sampling_probability, steps):
            return float(
                dpa.calibrate_dp_mechanism(
                    make_accountant,
                    lambda z: _event(dpa, sampling_probability, z, steps),
                    float(target_epsilon),
                    float(delta),
                )
            )

        return noise_multiplier_poisson_gaussian

    def gaussian_delta(epsilon, mu):
        # μ-GDP is the Gaussian mechanism with sensitivity 1 and standard deviation 1/μ.
        loss = privacy_loss_mechanism.GaussianPrivacyLoss(standard_deviation=1.0 / float(mu), sensitivity=1.0)
        return float(loss.get_delta_for_epsilon(float(epsilon)))

    def fresh_rdp():
        return rdp_module.RdpAccountant(neighboring_relation=relation)

    def fresh_pld():
        return pld_module.PLDAccountant(relation, value_discretization_interval=PLD_DISCRETIZATION)

    return {
        "dp_accounting.rdp": Subject(
            "dp_accounting.rdp",
            rdp_poisson_gaussian=rdp_poisson_gaussian,
            epsilon_from_rdp=epsilon_from_rdp,
            epsilon_poisson_gaussian=rdp_epsilon,
            noise_multiplier_poisson_gaussian=calibrated(fresh_rdp),
        ),
        "dp_accounting.pld": Subject(
            "dp_accounting.pld",
            epsilon_poisson_gaussian=pld_epsilon,
            gaussian_delta=gaussian_delta,
            noise_multiplier_poisson_gaussian=calibrated(fresh_pld),
        ),
    }
