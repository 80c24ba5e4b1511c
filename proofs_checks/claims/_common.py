"""Small helpers shared by the claim modules: turning tests into evidence, combining sub-checks,
and building mutants by wrapping one protocol of a subject."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..claim import ERRATUM, FAIL, PASS, CheckContext, Evidence, Mutant
from ..stats import TestResult

__all__ = ["decide", "combine", "deterministic", "wrap", "mutant", "erratum_evidence"]


def decide(test: TestResult, ctx: CheckContext, *, bound: float | None = None, detail: str = "") -> Evidence:
    """Evidence from one statistical test at the claim's level (the runner re-decides after Holm)."""
    return Evidence(
        verdict=FAIL if test.p_value < ctx.level else PASS,
        statistic=test.statistic,
        bound=bound,
        p_value=test.p_value,
        detail=detail,
        power=test.power_text(ctx.level),
    )


def deterministic(ok: bool, *, statistic=None, bound=None, detail: str = "", counterexample=None) -> Evidence:
    """Evidence of an exact (non-statistical) check."""
    return Evidence(
        verdict=PASS if ok else FAIL,
        statistic=None if statistic is None else float(statistic),
        bound=None if bound is None else float(bound),
        detail=detail,
        counterexample=counterexample,
    )


def combine(parts: Sequence[Evidence], ctx: CheckContext) -> Evidence:
    """One verdict from several sub-checks of a claim.

    A deterministic failure decides at once. Statistical parts are Bonferroni-combined: the claim's
    p-value is min(1, k · min p_i), so the claim keeps its level whatever k is. Build the parts with
    ``ctx.split(k)`` so that the power they quote is the power at their level, ctx.level / k.
    """
    if not parts:
        raise ValueError("combine needs at least one part")
    for part in parts:
        if part.verdict == FAIL and part.p_value is None:
            return part
    stats_parts = [p for p in parts if p.p_value is not None]
    if not stats_parts:
        worst = max(parts, key=lambda p: -np.inf if p.statistic is None or p.bound in (None, 0) else p.statistic / p.bound)
        return Evidence(PASS, worst.statistic, worst.bound, None, "; ".join(p.detail for p in parts if p.detail))
    k = len(stats_parts)
    worst = min(stats_parts, key=lambda p: p.p_value)
    p_value = min(1.0, k * worst.p_value)
    return Evidence(
        verdict=FAIL if p_value < ctx.level else PASS,
        statistic=worst.statistic,
        bound=worst.bound,
        p_value=p_value,
        detail=f"{k} sub-tests, Bonferroni; smallest p at: {worst.detail}",
        power=worst.power,
    )


def erratum_evidence(printed_fails: bool, corrected_holds: bool, *, statistic=None, bound=None, detail: str = "") -> Evidence:
    """``erratum-confirmed`` iff the printed statement fails and the corrected one holds."""
    verdict = ERRATUM if (printed_fails and corrected_holds) else FAIL
    why = []
    if not printed_fails:
        why.append("the printed statement did not fail")
    if not corrected_holds:
        why.append("the corrected statement does not hold")
    return Evidence(
        verdict=verdict,
        statistic=None if statistic is None else float(statistic),
        bound=None if bound is None else float(bound),
        detail=detail + (" — " + "; ".join(why) if why else ""),
    )


def wrap(protocol: str, transform: Callable[[Callable], Callable], label: str):
    """A mutant ``apply``: replace ``protocol`` by ``transform(original)``."""

    def apply(subject):
        return subject.replace(label=label, **{protocol: transform(getattr(subject, protocol))})

    return apply


def mutant(name: str, description: str, protocol: str, transform: Callable[[Callable], Callable]) -> Mutant:
    """Shorthand for a mutant that breaks one protocol."""
    return Mutant(name=name, description=description, apply=wrap(protocol, transform, name))
