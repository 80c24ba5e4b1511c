"""dpref reference: the readable, high-precision oracle for private optimization.

Building blocks, one concept per module (docs/design.md):

- ``rng``: the randomness contract (``Streams``) and direction samplers.
- ``secrets``: secret seeds — fresh entropy by default, never equal to a public seed, never printed.
- ``precision``: mpmath working precision, log-space helpers, float64/mpmath conversions.
- ``validation``: input checks that name the parameter and the rule.
- ``mechanisms``: clipping, the Gaussian mechanism, tree (binary/Fenwick) aggregation.
- ``smoothing``: uniform-ball smoothing facts and closed forms.
- ``objectives``: test problems with exact (smoothed) gradients.
- ``estimators``: zeroth-order gradient estimators.
- ``accounting/``: events and relations, RDP curves, conversions, the exact Gaussian profile,
  composition and calibration (see docs/accounting.md).
- ``algorithms/``: the papers' algorithms (one module per paper) with their privacy plans.
- ``runner``: runs an algorithm on a built-in problem and writes what a run publishes (the private output and
  diagnostics on held-out data only).
- ``fast``: the vectorized float64 backend with the same signatures.
- ``reporting``: tables rendered to the terminal, Markdown, CSV and JSON, and report directories with a
  manifest (shared by ``empirical_dp``, ``proofs_checks`` and the command line).

Nothing here imports ``proofs_checks``, ``empirical_dp`` or ``dpref`` (tests/test_layers.py).
"""

__version__ = "0.1.0"
