"""Adapter for ``autodp`` (yuxiangw/autodp): ``NoisySGD_Mechanism`` as a subject.

``autodp.mechanism_zoo.NoisySGD_Mechanism(prob=q, sigma=z, niter=steps)`` — Poisson sampling
(``AmplificationBySampling(PoissonSampling=True)`` with the improved bound) of the exact Gaussian
mechanism, composed by RDP:

* ``rdp_poisson_gaussian`` is the mechanism's ``RenyiDP(alpha)``. At integer orders it is the exact
  binomial value; at a fractional order autodp returns a bound from the neighbouring integer orders
  (so it is above the exact fractional-order RDP).
* ``epsilon_poisson_gaussian`` is ``get_approxDP(delta)``: the BBGHS conversion minimised over a
  *continuous* order (``scipy.optimize.minimize_scalar``), so it can be below an RDP accountant that
  uses a grid of orders, legitimately.
* ``gaussian_delta`` is ``autodp.dp_bank.get_logdelta_ana_gaussian(1/μ, ε)`` exponentiated (Balle–Wang).
* ``noise_multiplier_poisson_gaussian`` is ``autodp.calibrator_zoo.eps_delta_calibrator``: it minimises
  |ε(z) − target| over z ∈ :data:`CALIBRATION_BOUNDS` and accepts |ε − target| < 1e-3, so it may
  overshoot the target by up to 1e-3.

autodp has no function taking a list of (order, RDP) pairs, so ``epsilon_from_rdp`` is not provided.
"""

from __future__ import annotations

import math

import numpy as np

from ..protocols import Subject
from . import require

__all__ = ["subjects", "CALIBRATION_BOUNDS"]

#: Search interval of noise multipliers given to autodp's calibrator.
CALIBRATION_BOUNDS = (0.05, 100.0)


def subjects() -> dict[str, Subject]:
    """``{"autodp": ...}``; :class:`AdapterUnavailable` if autodp is missing."""
    mechanism_zoo = require("autodp.mechanism_zoo", "autodp")
    dp_bank = require("autodp.dp_bank", "autodp")
    calibrator_zoo = require("autodp.calibrator_zoo", "autodp")

    def mechanism(sampling_probability, noise_multiplier, steps):
        return mechanism_zoo.NoisySGD_Mechanism(
            prob=float(sampling_probability), sigma=float(noise_multiplier), niter=int(steps)
        )

    def rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps):
        mech = mechanism(sampling_probability, noise_multiplier, steps)
        return np.array([float(mech.RenyiDP(float(a))) for a in orders], dtype=float)

    def epsilon_poisson_gaussian(sampling_probability, noise_multiplier, steps, delta):
        return float(mechanism(sampling_probability, noise_multiplier, steps).get_approxDP(float(delta)))

    def gaussian_delta(epsilon, mu):
        return math.exp(float(dp_bank.get_logdelta_ana_gaussian(1.0 / float(mu), float(epsilon))))

    def noise_multiplier_poisson_gaussian(target_epsilon, delta, sampling_probability, steps):
        calibrator = calibrator_zoo.eps_delta_calibrator()
        calibrated = calibrator(
            lambda z: mechanism(sampling_probability, z, steps),
            float(target_epsilon),
            float(delta),
            list(CALIBRATION_BOUNDS),
        )
        return float(calibrated.params["sigma"])

    return {
        "autodp": Subject(
            "autodp",
            rdp_poisson_gaussian=rdp_poisson_gaussian,
            epsilon_poisson_gaussian=epsilon_poisson_gaussian,
            gaussian_delta=gaussian_delta,
            noise_multiplier_poisson_gaussian=noise_multiplier_poisson_gaussian,
        )
    }
