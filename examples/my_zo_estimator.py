"""A user's own zeroth-order gradient estimator, checked with dpref's claims.

Run the claims that apply to it (those that need only ``two_point_estimate``):

    dpref claims list --subject examples/my_zo_estimator.py:two_point_estimate
    dpref claims run  --subject examples/my_zo_estimator.py:two_point_estimate

and see a plausible bug caught:

    dpref claims run  --subject examples/my_zo_estimator.py:buggy_two_point_estimate

The protocol (proofs_checks/protocols.py): ``two_point_estimate(loss, x, batch, directions,
perturbation, direction_law="unit_sphere")`` returns
(1/b) Σ_i (1/m) Σ_j c · (f(x + h u_ij; z_i) − f(x − h u_ij; z_i)) / (2h) · u_ij with c = d for
unit-sphere directions and c = 1 for √d-sphere or Gaussian ones. ``loss`` broadcasts over stacked
points (..., d) and data rows (..., p).
"""

import numpy as np


def two_point_estimate(loss, x, batch, directions, perturbation, direction_law="unit_sphere"):
    x = np.asarray(x, dtype=np.float64)
    directions = np.asarray(directions, dtype=np.float64)
    b, m, d = directions.shape
    scale = d if direction_law == "unit_sphere" else 1.0
    rows = np.asarray(batch, dtype=np.float64)[:, None, :]
    plus = loss(x + perturbation * directions, rows)
    minus = loss(x - perturbation * directions, rows)
    weights = scale * (plus - minus) / (2.0 * perturbation)
    return np.einsum("bm,bmd->d", weights, directions) / (b * m)


def buggy_two_point_estimate(loss, x, batch, directions, perturbation, direction_law="unit_sphere"):
    """The same estimator with a classic slip: the central difference divided by h, not 2h."""
    return 2.0 * two_point_estimate(loss, x, batch, directions, perturbation, direction_law)


# Named unlike the protocol, so it says which protocol it implements.
buggy_two_point_estimate.__dpref_protocol__ = "two_point_estimate"
