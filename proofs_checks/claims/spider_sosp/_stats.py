"""Statistical helpers shared by the spider_sosp claims (private to the folder).

* :func:`mean_part` — Hotelling's T² of E[samples] = target, relative MDE against ‖target‖, with NaN/inf a
  deterministic failure and directions in which the samples do not vary at all (a constant estimate) checked exactly.
* :func:`zero_mean_part` — the one-sample t-test of E[w] = 0 for a scalar statistic w, relative MDE against ``scale``.
* :func:`statistical_erratum` — the verdict of a Monte Carlo erratum claim: the printed statement rejected, and the
  corrected statement, decided by a test at the other half of the level, not rejected.
"""

from __future__ import annotations

import numpy as np

from proofs_checks.authoring import ERRATUM, FAIL, PASS, Evidence, decide, deterministic, hotelling_mean_test, \
    nonfinite_violation

__all__ = ["mean_part", "zero_mean_part", "statistical_erratum"]

#: Relative size (to the largest |entry|) below which a sample standard deviation is float64 rounding of a constant.
DEGENERATE_ROUNDING = 1e-12


def mean_part(samples, target, ctx, detail: str, scale: float | None = None) -> Evidence:
    """Hotelling's T² of E[samples] = target at ``ctx.level``; relative MDE against ‖target‖ (or ``scale``).

    Directions in which the samples do not vary (which a correct estimator of these problems never produces) carry no
    sampling error: there the mean must equal the target up to rounding, a deterministic check, and Hotelling's test
    runs in the remaining directions."""
    failed = nonfinite_violation(detail, samples)
    if failed:
        return failed
    samples = np.asarray(samples, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64).reshape(-1)
    size = float(np.linalg.norm(target)) if scale is None else float(scale)
    mean = samples.mean(axis=0)
    text = f"{detail}: ‖mean − exact‖ = {np.linalg.norm(mean - target):.3g}, ‖exact‖ = {size:.4g}"
    values, vectors = np.linalg.eigh(np.atleast_2d(np.cov(samples, rowvar=False)))
    magnitude = max(1.0, float(np.max(np.abs(samples))), size)
    flat = values <= (DEGENERATE_ROUNDING * magnitude) ** 2
    if np.any(flat):
        off = float(np.max(np.abs(vectors[:, flat].T @ (mean - target))))
        if not off <= DEGENERATE_ROUNDING * magnitude * samples.shape[1]:
            return deterministic(False, statistic=off, bound=0.0,
                                 detail=f"{text}; the samples do not vary along {int(np.sum(flat))} direction(s), "
                                        f"where their mean misses the exact value by {off:.3g}")
        if np.all(flat):
            return deterministic(True, statistic=off, bound=0.0, detail=f"{text}; constant samples equal to the exact "
                                                                         "value")
        basis = vectors[:, ~flat]
        return decide(hotelling_mean_test(samples @ basis, target @ basis, ctx.level), ctx, scale=size,
                      detail=f"{text} (Hotelling in the {basis.shape[1]} directions in which the samples vary)")
    return decide(hotelling_mean_test(samples, target, ctx.level), ctx, scale=size, detail=text)


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


def statistical_erratum(printed_fails: bool, corrected: Evidence, *, statistic=None, bound=None,
                        detail: str = "") -> Evidence:
    """``erratum-confirmed`` iff the printed statement was rejected (``printed_fails``: decided by tests at half the
    claim's level, or exactly) and the corrected part holds (``pass`` of an evidence decided at the other half,
    ``ctx.split(2)``); otherwise ``fail``. The evidence keeps the corrected part's p-value on the claim's scale (twice
    its own, Bonferroni over the two halves) and its power; a ``fail`` carries no p-value, so that no multiple-testing
    correction turns it into a pass."""
    corrected_holds = corrected.verdict == PASS
    why = []
    if not printed_fails:
        why.append("the printed statement was not rejected")
    if not corrected_holds:
        why.append("the corrected statement does not hold")
    text = f"{detail}; corrected: {corrected.detail}" + (" — " + "; ".join(why) if why else "")
    statistic = None if statistic is None else float(statistic)
    bound = None if bound is None else float(bound)
    if not (printed_fails and corrected_holds):
        return Evidence(verdict=FAIL, statistic=statistic, bound=bound, detail=text, power=corrected.power,
                        mde=corrected.mde, relative_mde=corrected.relative_mde)
    p_value = None if corrected.p_value is None else min(1.0, 2.0 * corrected.p_value)
    return Evidence(verdict=ERRATUM, statistic=statistic, bound=bound, p_value=p_value, detail=text,
                    power=corrected.power, mde=corrected.mde, relative_mde=corrected.relative_mde)
