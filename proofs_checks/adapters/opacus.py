"""Adapter for Opacus's accountants: RDP, PRV and GDP as subjects.

Each subject drives the public accountant the way a training loop does — ``step(noise_multiplier=z,
sample_rate=q)`` once per step, then ``get_epsilon(delta)`` — and calibrates with
``opacus.accountants.utils.get_noise_multiplier(..., accountant=..., epsilon_tolerance=0.01)``.

* ``opacus.rdp`` — ``RDPAccountant`` on its ``DEFAULT_ALPHAS`` (1.1..10.9, 12..63: no order 11 and
  none ≥ 64, so it is looser than dp_accounting when the optimum order is large). ``rdp_poisson_gaussian``
  and ``epsilon_from_rdp`` are ``opacus.accountants.analysis.rdp.compute_rdp`` and ``get_privacy_spent``
  (BBGHS conversion, not clamped at 0; warns when the optimum is at the edge of the orders).
* ``opacus.prv`` — ``PRVAccountant`` (Gopi et al.): returns ``eps_upper`` with ``eps_error = 0.01``
  and ``delta_error = delta/1000``; the truth lies within about ``2 * eps_error`` below it.
* ``opacus.gdp`` — ``GaussianAccountant`` with Poisson sampling: μ = q √(T (e^{1/z²} − 1)) (a CLT
  approximation, Opacus warns it "can underestimate"), ε by ``brentq`` on [0, 500]. ``gaussian_delta`` is
  ``opacus.accountants.analysis.gdp.delta_eps_mu``.
"""

from __future__ import annotations

import numpy as np

from ..protocols import Subject
from . import require

__all__ = ["subjects", "PRV_EPS_ERROR", "rdp_orders"]

#: Opacus's default ``eps_error`` of ``PRVAccountant.get_epsilon`` (used as is).
PRV_EPS_ERROR = 0.01


def _accountants():
    return require("opacus.accountants", "opacus")


def rdp_orders() -> np.ndarray:
    """Opacus's ``RDPAccountant.DEFAULT_ALPHAS``."""
    return np.asarray(_accountants().RDPAccountant.DEFAULT_ALPHAS, dtype=float)


def _epsilon_by_steps(accountant_class, sampling_probability, noise_multiplier, steps, delta):
    accountant = accountant_class()
    for _ in range(int(steps)):
        accountant.step(noise_multiplier=float(noise_multiplier), sample_rate=float(sampling_probability))
    return float(accountant.get_epsilon(delta=float(delta)))


def subjects() -> dict[str, Subject]:
    """``{"opacus.rdp", "opacus.prv", "opacus.gdp"}``; :class:`AdapterUnavailable` if Opacus is missing."""
    accountants = _accountants()
    rdp_analysis = require("opacus.accountants.analysis.rdp", "opacus")
    gdp_analysis = require("opacus.accountants.analysis.gdp", "opacus")
    utils = require("opacus.accountants.utils", "opacus")

    def epsilon_of(accountant_class):
        def epsilon_poisson_gaussian(sampling_probability, noise_multiplier, steps, delta):
            return _epsilon_by_steps(accountant_class, sampling_probability, noise_multiplier, steps, delta)

        return epsilon_poisson_gaussian

    def calibration(mechanism):
        def noise_multiplier_poisson_gaussian(target_epsilon, delta, sampling_probability, steps):
            return float(
                utils.get_noise_multiplier(
                    target_epsilon=float(target_epsilon),
                    target_delta=float(delta),
                    sample_rate=float(sampling_probability),
                    steps=int(steps),
                    accountant=mechanism,
                )
            )

        return noise_multiplier_poisson_gaussian

    def rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps):
        rdp = rdp_analysis.compute_rdp(
            q=float(sampling_probability),
            noise_multiplier=float(noise_multiplier),
            steps=int(steps),
            orders=[float(a) for a in orders],
        )
        return np.asarray(rdp, dtype=float)

    def epsilon_from_rdp(orders, rdp, delta):
        epsilon, _order = rdp_analysis.get_privacy_spent(
            orders=[float(a) for a in orders], rdp=[float(r) for r in rdp], delta=float(delta)
        )
        return float(epsilon)

    def gaussian_delta(epsilon, mu):
        return float(gdp_analysis.delta_eps_mu(eps=float(epsilon), mu=float(mu)))

    return {
        "opacus.rdp": Subject(
            "opacus.rdp",
            rdp_poisson_gaussian=rdp_poisson_gaussian,
            epsilon_from_rdp=epsilon_from_rdp,
            epsilon_poisson_gaussian=epsilon_of(accountants.RDPAccountant),
            noise_multiplier_poisson_gaussian=calibration("rdp"),
        ),
        "opacus.prv": Subject(
            "opacus.prv",
            epsilon_poisson_gaussian=epsilon_of(accountants.PRVAccountant),
            noise_multiplier_poisson_gaussian=calibration("prv"),
        ),
        "opacus.gdp": Subject(
            "opacus.gdp",
            epsilon_poisson_gaussian=epsilon_of(accountants.GaussianAccountant),
            gaussian_delta=gaussian_delta,
            noise_multiplier_poisson_gaussian=calibration("gdp"),
        ),
    }
