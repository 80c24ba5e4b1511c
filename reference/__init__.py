"""dpref reference: the readable, high-precision oracle for private optimization.

Building blocks, one concept per module (DESIGN.md, reference/):

- ``rng``: the randomness contract (``Streams``) and direction samplers.
- ``precision``: mpmath working precision, log-space helpers, float64/mpmath conversions.
- ``validation``: input checks that name the parameter and the rule.
- ``mechanisms``: clipping, the Gaussian mechanism, tree (binary/Fenwick) aggregation.
- ``smoothing``: uniform-ball smoothing facts and closed forms.
- ``objectives``: test problems with exact (smoothed) gradients.
- ``estimators``: zeroth-order gradient estimators.
- ``accounting/``: events and relations, RDP curves, conversions, the exact Gaussian profile,
  composition and calibration (see docs/accounting.md).
- ``fast``: the vectorized float64 backend with the same signatures.

Nothing here imports ``proofs_checks`` or ``empirical_dp``.
"""

__version__ = "0.1.0"
