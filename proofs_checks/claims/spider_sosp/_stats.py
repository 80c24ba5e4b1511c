"""Statistical helpers shared by the spider_sosp claims (private to the folder).

* :func:`mean_part`, :func:`statistical_erratum` — ``proofs_checks.authoring``'s, shared with the other folders.
* :func:`zero_mean_part` — the one-sample t-test of E[w] = 0 for a scalar statistic w, relative MDE against ``scale``.
"""

from __future__ import annotations

import numpy as np

from proofs_checks.authoring import (  # noqa: F401 - mean_part, statistical_erratum re-exported for this folder
    DEGENERATE_ROUNDING,
    Evidence,
    decide,
    deterministic,
    hotelling_mean_test,
    mean_part,
    nonfinite_violation,
    statistical_erratum,
)

__all__ = ["mean_part", "zero_mean_part", "statistical_erratum"]


def zero_mean_part(w, scale: float, ctx, detail: str) -> Evidence:
    """The one-sample t-test of E[w] = 0 at ``ctx.level`` (Hotelling with p = 1); relative MDE = MDE/scale."""
    w = np.asarray(w, dtype=np.float64).reshape(-1)
    failed = nonfinite_violation(detail, w)
    if failed:
        return failed
    if float(np.std(w)) <= DEGENERATE_ROUNDING * max(1.0, float(np.max(np.abs(w)))):
        off = abs(float(np.mean(w)))
        return deterministic(off <= DEGENERATE_ROUNDING * max(1.0, scale), statistic=off, bound=0.0,
                             detail=f"{detail}: the statistic is constant ({np.mean(w):.6g}); its mean must be 0")
    return decide(hotelling_mean_test(w[:, None], np.zeros(1), ctx.level), ctx, scale=scale,
                  detail=f"{detail}: mean {np.mean(w):.4g} ± {np.std(w, ddof=1) / np.sqrt(w.size):.2g} (s.e.) over "
                         f"{w.size} samples, scale {scale:.4g}")
