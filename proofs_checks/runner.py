"""Running claims on subjects: one result row per (claim, subject), Holm correction across a run.

A check that raises is reported with the verdict ``error`` and its message, never swallowed. Checks
that report a p-value are decided by it after Holm's step-down correction across every statistical
result of the run, so the run as a whole keeps its family-wise false-alarm rate at the declared level.
``soak`` reruns with fresh seeds (replicates 1..N) and reports the measured false-alarm rate of each
claim with a Clopper–Pearson upper bound.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence

import pandas as pd
from tqdm.auto import tqdm

from .claim import BUDGETS, ERROR, FAIL, PASS, Budget, CheckContext, Claim, Evidence
from .stats import claim_seed, clopper_pearson, holm_adjust
from .subjects import Subject

__all__ = ["RESULT_COLUMNS", "run_claim", "run_claims", "soak"]

RESULT_COLUMNS = [
    "id",
    "paper",
    "kind",
    "subject",
    "verdict",
    "statistic",
    "bound",
    "p_value",
    "p_adjusted",
    "seed",
    "seconds",
    "power",
    "detail",
]


def _as_budget(budget: Budget | str) -> Budget:
    if isinstance(budget, Budget):
        return budget
    if budget not in BUDGETS:
        raise ValueError(f"budget must be one of {sorted(BUDGETS)}, got {budget!r}")
    return BUDGETS[budget]


def _float_or_none(value):
    return None if value is None else float(value)


def run_claim(claim: Claim, subject: Subject, budget: Budget | str = "quick", replicate: int = 0) -> dict:
    """Run one claim on one subject and return its result row (no multiple-testing correction)."""
    budget = _as_budget(budget)
    seed = claim_seed(claim.id, replicate)
    ctx = CheckContext(budget=budget, seed=seed, level=claim.level)
    start = time.perf_counter()
    try:
        evidence = claim.check(subject, ctx)
        if not isinstance(evidence, Evidence):
            raise TypeError(f"check of {claim.id} returned {type(evidence).__name__}, not Evidence")
    except Exception as exc:  # reported, not swallowed: the row carries the message
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        evidence = Evidence(
            verdict=ERROR,
            detail=f"{type(exc).__name__}: {exc} (at {tb.filename.rsplit('/', 1)[-1]}:{tb.lineno})",
        )
    seconds = time.perf_counter() - start
    return {
        "id": claim.id,
        "paper": claim.paper,
        "kind": claim.kind,
        "subject": subject.name,
        "verdict": evidence.verdict,
        "statistic": _float_or_none(evidence.statistic),
        "bound": _float_or_none(evidence.bound),
        "p_value": _float_or_none(evidence.p_value),
        "p_adjusted": _float_or_none(evidence.p_value),
        "seed": seed,
        "seconds": round(seconds, 4),
        "power": evidence.power,
        "detail": evidence.detail,
        "_level": claim.level,
    }


def _apply_holm(rows: list[dict]) -> None:
    decided = [r for r in rows if r["p_value"] is not None and r["verdict"] in (PASS, FAIL)]
    adjusted = holm_adjust(r["p_value"] for r in decided)
    for row, p_adj in zip(decided, adjusted):
        row["p_adjusted"] = float(p_adj)
        row["verdict"] = FAIL if p_adj < row["_level"] else PASS


def _pairs(claims: Sequence[Claim], subjects: Sequence[Subject]):
    return [(c, s) for c in claims for s in subjects if c.applies_to(s)]


def run_claims(
    claims: Sequence[Claim],
    subjects: Sequence[Subject],
    budget: Budget | str = "quick",
    *,
    replicate: int = 0,
    progress: bool = True,
) -> pd.DataFrame:
    """Run every applicable (claim, subject) pair; Holm-correct the statistical verdicts of the run."""
    pairs = _pairs(claims, subjects)
    rows = []
    for claim, subject in tqdm(pairs, desc="claims", unit="check", disable=not progress, leave=False):
        rows.append(run_claim(claim, subject, budget, replicate))
    _apply_holm(rows)
    frame = pd.DataFrame(rows, columns=RESULT_COLUMNS + ["_level"])
    return frame.drop(columns="_level")


def soak(
    claims: Sequence[Claim],
    subjects: Sequence[Subject],
    budget: Budget | str = "quick",
    *,
    runs: int,
    progress: bool = True,
) -> pd.DataFrame:
    """Rerun each applicable pair ``runs`` times with fresh seeds; report per-claim false alarms.

    A false alarm is any verdict other than pass/erratum-confirmed on the correct subject. The rate
    is raw (per claim, no Holm), the strictest reading; ``rate_upper`` is its one-sided 95%
    Clopper–Pearson bound.
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    pairs = _pairs(claims, subjects)
    records = []
    bar = tqdm(total=len(pairs) * runs, desc="soak", unit="check", disable=not progress, leave=False)
    for claim, subject in pairs:
        alarms, errors = 0, 0
        for replicate in range(1, runs + 1):
            row = run_claim(claim, subject, budget, replicate)
            if row["p_value"] is not None and row["verdict"] in (PASS, FAIL):
                row["verdict"] = FAIL if row["p_value"] < claim.level else PASS
            alarms += row["verdict"] == FAIL
            errors += row["verdict"] == ERROR
            bar.update()
        upper = clopper_pearson(alarms + errors, runs, 0.10)[1]
        records.append(
            {
                "id": claim.id,
                "subject": subject.name,
                "runs": runs,
                "false_alarms": alarms,
                "errors": errors,
                "rate": (alarms + errors) / runs,
                "rate_upper": upper,
                "level": claim.level,
            }
        )
    bar.close()
    return pd.DataFrame.from_records(records)
