"""Monte Carlo helpers shared by the nsnc_improved claims (private to the folder).

* :func:`replicate_estimates` — N replicates of a subject's estimate, one call per replicate as the protocols say,
  or one call for a chunk of replicates when the subject takes leading replicate axes and agrees with its own single
  calls (the vectorised ``fast`` twins): the same samples, a fraction of the time, every number from the subject.
* :func:`mean_part` — Hotelling's T² of E[estimate] = target, relative MDE against ‖target‖ (a deterministic
  failure on NaN or inf, so that no statistic ever compares a NaN).
* :func:`statistical_erratum` — the verdict of a Monte Carlo erratum claim: the printed statement is rejected by
  tests at half the claim's level, and the corrected statement is not rejected by tests at the other half.

Hotelling's test is a CLT test; it is used here on averages of bounded terms (gradients of L-Lipschitz losses, or
two-point terms of norm ≤ d‖c‖) with N ≥ 600 replicates, where the standardised projections have small skewness
and the normal tail at the critical value is accurate to a small factor (the argument of the zo_o2nc estimator
claims; ``dpref claims run --soak`` measures the false-alarm rate).
"""

from __future__ import annotations

import numpy as np

from proofs_checks.authoring import (
    ERRATUM,
    FAIL,
    PASS,
    Evidence,
    decide,
    deterministic,
    hotelling_mean_test,
    nonfinite_violation,
)

__all__ = ["replicate_estimates", "mean_part", "statistical_erratum"]

#: Largest perturbation array (in float64 entries) handed to a subject in one vectorised call.
CHUNK_ENTRIES = 2_000_000
#: How many replicates of a vectorised call are compared with single calls before it is trusted.
CHECKED_REPLICATES = 2
#: Relative agreement required between a vectorised call and the subject's single calls (rounding of a mean).
AGREEMENT = 1e-12
#: Relative size (to the largest |entry|) below which a sample standard deviation is float64 rounding of a constant.
DEGENERATE_ROUNDING = 1e-12


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


def mean_part(samples, target, ctx, detail: str) -> Evidence:
    """Hotelling's T² of E[samples] = target at ``ctx.level``; relative MDE against ‖target‖.

    Directions in which the samples do not vary at all (a constant estimate, or estimates confined to a subspace,
    which a correct estimator of these problems never produces) carry no sampling error: there the mean must equal
    the target up to rounding (``DEGENERATE_ROUNDING``), a deterministic check, and Hotelling's test runs in the
    remaining directions.
    """
    failed = nonfinite_violation(detail, samples)
    if failed:
        return failed
    samples = np.asarray(samples, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    size = float(np.linalg.norm(target))
    mean = np.mean(samples, axis=0)
    shift = float(np.linalg.norm(mean - target))
    text = f"{detail}: ‖target‖ = {size:.4g}, ‖mean − target‖ = {shift:.3g}"
    values, vectors = np.linalg.eigh(np.atleast_2d(np.cov(samples, rowvar=False)))
    scale = max(1.0, float(np.max(np.abs(samples))), size)
    flat = values <= (DEGENERATE_ROUNDING * scale) ** 2
    if np.any(flat):
        off = float(np.max(np.abs(vectors[:, flat].T @ (mean - target))))
        if not off <= DEGENERATE_ROUNDING * scale * samples.shape[1]:
            return deterministic(False, statistic=off, bound=0.0,
                                 detail=f"{text}; the estimates do not vary along {int(np.sum(flat))} direction(s), "
                                        f"where their mean misses the target by {off:.3g}")
        if np.all(flat):
            return deterministic(True, statistic=off, bound=0.0, detail=f"{text}; constant estimates equal to the target")
        basis = vectors[:, ~flat]
        return decide(hotelling_mean_test(samples @ basis, target @ basis, ctx.level), ctx, scale=size,
                      detail=f"{text} (Hotelling in the {basis.shape[1]} directions in which the estimates vary)")
    return decide(hotelling_mean_test(samples, target, ctx.level), ctx, scale=size, detail=text)


def statistical_erratum(printed_fails: bool, corrected: Evidence, *, statistic=None, bound=None,
                        detail: str = "") -> Evidence:
    """``erratum-confirmed`` iff the printed statement was rejected (``printed_fails``: decided by tests at half the
    claim's level, so a false confirmation has probability ≤ level/2) and the corrected part holds (``pass`` of an
    evidence decided at the other half, ``ctx.split(2)``); otherwise ``fail``.

    The evidence keeps the corrected part's p-value on the claim's scale (twice its own, Bonferroni over the two
    halves) and its power (MDE, relative MDE): that is the part a correct subject can fail by chance, and what a near
    miss must move. A ``fail`` carries no p-value, so that no multiple-testing correction turns it into a pass.
    """
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
