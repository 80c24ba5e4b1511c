"""Adapter for Microsoft's ``prv_accountant``: the PRV accountant of Gopi et al. 2021.

``prv_accountant.PRVAccountant`` over ``PoissonSubsampledGaussianMechanism(q, z)`` (``GaussianMechanism(z)``
when q = 1, whose PRV is written for that case) with ``eps_error = 0.01`` and ``delta_error = delta/1000``
(Opacus's choices), ``max_self_compositions = steps``. ``compute_epsilon`` returns
``(eps_lower, eps_estimate, eps_upper)``; the protocol value is ``eps_upper`` (the guarantee), and
:func:`epsilon_bounds` gives all three. The subsampled-Gaussian PRV is the remove direction only
(it dominates the add direction for this mechanism).

``rdp_poisson_gaussian`` is the PRV objects' public ``rdp(alpha)`` (a TF-Privacy port) times ``steps``;
``noise_multiplier_poisson_gaussian`` is ``prv_accountant.dpsgd.find_noise_multiplier`` (it guarantees
``eps_upper < target + eps_error``, so it may exceed the target by up to ``eps_error``).
"""

from __future__ import annotations

import numpy as np

from ..protocols import Subject
from . import require

__all__ = ["subjects", "epsilon_bounds", "EPS_ERROR", "DELTA_ERROR_FRACTION"]

#: ``eps_error`` passed to ``PRVAccountant`` (Opacus's default; prv_accountant's DPSGDAccountant uses 0.1).
EPS_ERROR = 0.01
#: ``delta_error = DELTA_ERROR_FRACTION * delta`` (the value the library's docstring recommends).
DELTA_ERROR_FRACTION = 1e-3


def _library():
    return require("prv_accountant", "prv_accountant")


def _prv(library, sampling_probability, noise_multiplier):
    if float(sampling_probability) == 1.0:
        return library.GaussianMechanism(noise_multiplier=float(noise_multiplier))
    return library.PoissonSubsampledGaussianMechanism(
        sampling_probability=float(sampling_probability), noise_multiplier=float(noise_multiplier)
    )


def epsilon_bounds(sampling_probability, noise_multiplier, steps, delta) -> tuple[float, float, float]:
    """``(eps_lower, eps_estimate, eps_upper)`` from ``PRVAccountant.compute_epsilon``."""
    library = _library()
    accountant = library.PRVAccountant(
        prvs=_prv(library, sampling_probability, noise_multiplier),
        max_self_compositions=int(steps),
        eps_error=EPS_ERROR,
        delta_error=DELTA_ERROR_FRACTION * float(delta),
    )
    lower, estimate, upper = accountant.compute_epsilon(delta=float(delta), num_self_compositions=int(steps))
    return float(lower), float(estimate), float(upper)


def subjects() -> dict[str, Subject]:
    """``{"prv_accountant": ...}``; :class:`AdapterUnavailable` if the library is missing."""
    library = _library()
    dpsgd = require("prv_accountant.dpsgd", "prv_accountant")

    def epsilon_poisson_gaussian(sampling_probability, noise_multiplier, steps, delta):
        return epsilon_bounds(sampling_probability, noise_multiplier, steps, delta)[2]

    def rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps):
        prv = _prv(library, sampling_probability, noise_multiplier)
        return np.array([int(steps) * float(prv.rdp(float(a))) for a in orders], dtype=float)

    def noise_multiplier_poisson_gaussian(target_epsilon, delta, sampling_probability, steps):
        return float(
            dpsgd.find_noise_multiplier(
                sampling_probability=float(sampling_probability),
                num_steps=int(steps),
                target_epsilon=float(target_epsilon),
                target_delta=float(delta),
                eps_error=EPS_ERROR,
            )
        )

    return {
        "prv_accountant": Subject(
            "prv_accountant",
            epsilon_poisson_gaussian=epsilon_poisson_gaussian,
            rdp_poisson_gaussian=rdp_poisson_gaussian,
            noise_multiplier_poisson_gaussian=noise_multiplier_poisson_gaussian,
        )
    }
