"""Monte Carlo helpers shared by the nsnc_improved claims (private to the folder).

* :func:`replicate_estimates` — N replicates of a subject's estimate, one call per replicate as the protocols say,
  or one call for a chunk of replicates when the subject takes leading replicate axes and agrees with its own single
  calls (the vectorised ``fast`` twins): the same samples, a fraction of the time, every number from the subject.
* :func:`mean_part`, :func:`statistical_erratum` — ``proofs_checks.authoring``'s (Hotelling's T² of a Monte Carlo
  mean; a Monte Carlo erratum's verdict), re-exported.

Hotelling's test is a CLT test; it is used here on averages of bounded terms (gradients of L-Lipschitz losses, or
two-point terms of norm ≤ d‖c‖) with N ≥ 600 replicates, where the standardised projections have small skewness
and the normal tail at the critical value is accurate to a small factor (the argument of the zo_o2nc estimator
claims; ``dpref claims run --soak`` measures the false-alarm rate).
"""

from __future__ import annotations

import numpy as np

from proofs_checks.authoring import (  # noqa: F401 - re-exported for this folder's claims
    mean_part,
    statistical_erratum,
)

__all__ = ["replicate_estimates", "mean_part", "statistical_erratum"]

#: Largest perturbation array (in float64 entries) handed to a subject in one vectorised call.
CHUNK_ENTRIES = 2_000_000
#: How many replicates of a vectorised call are compared with single calls before it is trusted.
CHECKED_REPLICATES = 2
#: Relative agreement required between a vectorised call and the subject's single calls (rounding of a mean).
AGREEMENT = 1e-12


def replicate_estimates(estimate, perturbations) -> np.ndarray:
    """(N, d) float64 array of ``estimate(perturbations[k])`` for the N replicates of ``perturbations`` (N, b, m, d).

    A subject whose estimator also accepts leading replicate axes is called once per chunk of replicates, but only if
    that call returns shape (C, d) and its first rows equal (to ``AGREEMENT`` relative) the subject's own single calls
    on those replicates; otherwise, or if the call raises, every replicate is a single call.
    """
    perturbations = np.asarray(perturbations)
    n, d = perturbations.shape[0], perturbations.shape[-1]
    single = [np.asarray(estimate(perturbations[k]), dtype=np.float64) for k in range(min(CHECKED_REPLICATES, n))]
    chunk = max(1, CHUNK_ENTRIES // max(1, int(np.prod(perturbations.shape[1:]))))
    blocks = []
    try:
        for start in range(0, n, chunk):
            block = np.asarray(estimate(perturbations[start:start + chunk]), dtype=np.float64)
            if block.shape != (min(chunk, n - start), d):
                blocks = None
                break
            if start == 0:
                first = np.array(single)
                scale = 1.0 + float(np.max(np.abs(first)))
                if not np.all(np.abs(block[: len(single)] - first) <= AGREEMENT * scale):
                    blocks = None
                    break
            blocks.append(block)
    except Exception:  # the subject takes one replicate at a time, as the protocol says
        blocks = None
    if blocks is not None:
        return np.concatenate(blocks)
    rest = [np.asarray(estimate(perturbations[k]), dtype=np.float64) for k in range(len(single), n)]
    return np.array(single + rest).reshape(n, -1)

