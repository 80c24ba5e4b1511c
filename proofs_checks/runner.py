"""Running claims on subjects: one result row per (claim, subject), Holm correction across a run.

A check that raises is reported with the verdict ``error`` and its message, never swallowed. Checks
that report a p-value are decided by it after Holm's step-down correction across every statistical
result of the run, so the run as a whole keeps its family-wise false-alarm rate at the declared level.

Three rules make a verdict honest (docs/writing-claims.md):

* a NaN or inf returned by the subject fails the claim (``proofs_checks/nonfinite.py``), unless the claim
  provokes it on purpose (``Claim.nonfinite_ok``);
* a pass that ran only borrowed reference code (every protocol the claim calls is in ``subject.borrowed``)
  is reported as ``borrowed``;
* a pass whose measured relative MDE exceeds the claim's promise (``Claim.mde_target``) is an ``error``:
  the check could not see what it promises to see.

``run_claims(..., workers=N)`` spreads the checks over N processes. Every check's seed comes from its claim id,
so the rows are the same as a serial run's, in the same order; Holm's correction is applied to the whole run
after the last check. Only registered claims on named subjects (``reference``, ``fast``, library adapters) can
be sent to a worker, which rebuilds them by name; any other selection runs serially.

``soak`` reruns the statistical claims with fresh seeds (replicates 1..N), at the claims' level or any
other, and reports each claim's false-alarm rate with its Clopper–Pearson interval and a one-sided
uniformity test of its p-values; the p-values of all runs are pooled into one more uniformity test.
"""

from __future__ import annotations

import functools
import multiprocessing
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

import pandas as pd
from scipy import stats as sps

from reference.progress import progress_bar

from .claim import BORROWED, BUDGETS, ERRATUM, ERROR, FAIL, HOLDS, PASS, Budget, CheckContext, Claim, Evidence
from .nonfinite import guarded
from .stats import claim_seed, clopper_pearson, holm_adjust
from .subjects import Subject, resolve_subject

__all__ = ["RESULT_COLUMNS", "SOAK_COLUMNS", "explain", "run_claim", "run_claims", "soak", "uniformity_p_value"]

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
    "mde",
    "relative_mde",
    "mde_target",
    "power",
    "level",
    "why",
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


def _runs_borrowed_code(claim: Claim, subject) -> bool:
    borrowed = set(getattr(subject, "borrowed", ()))
    return bool(borrowed) and set(claim.requires) <= borrowed


def _honest(claim: Claim, subject, evidence: Evidence, nonfinite: str | None, budget: Budget) -> Evidence:
    """The three rules of the module docstring, applied to a check's evidence."""
    if nonfinite is not None:
        # p_value dropped: Holm must not turn this failure back into a pass
        return replace(evidence, verdict=FAIL, p_value=None, detail=f"{nonfinite}; the check said: {evidence.verdict}: "
                                                                     f"{evidence.detail}")
    if evidence.verdict not in (PASS, ERRATUM):
        return evidence
    target = None if claim.mde_target is None else claim.mde_target.at(budget)
    if target is not None and evidence.p_value is not None:
        measured = evidence.relative_mde
        if measured is None or not measured <= target:
            shown = "none reported" if measured is None else f"{measured:.3g}"
            return replace(evidence, verdict=ERROR, p_value=None,
                           detail=f"underpowered: relative MDE {shown} > the {target:g} the claim promises at budget "
                                  f"{budget.name}; {evidence.detail}")
    if evidence.verdict == PASS and _runs_borrowed_code(claim, subject):
        return replace(evidence, verdict=BORROWED,
                       detail=f"ran only reference code borrowed by {subject.name} ({', '.join(claim.requires)}); "
                              + evidence.detail)
    return evidence


def run_claim(claim: Claim, subject: Subject, budget: Budget | str = "quick", replicate: int = 0, *,
              level: float | None = None) -> dict:
    """Run one claim on one subject and return its result row (no multiple-testing correction).

    ``level`` overrides the claim's false-alarm level (``soak --level``).
    """
    budget = _as_budget(budget)
    level = claim.level if level is None else level
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    seed = claim_seed(claim.id, replicate)
    ctx = CheckContext(budget=budget, seed=seed, level=level)
    watched, watch = guarded(subject, claim.nonfinite_ok)
    start = time.perf_counter()
    try:
        evidence = claim.check(watched, ctx)
        if not isinstance(evidence, Evidence):
            raise TypeError(f"check of {claim.id} returned {type(evidence).__name__}, not Evidence")
        evidence = _honest(claim, subject, evidence, watch.first, budget)
    except Exception as exc:  # reported, not swallowed: the row carries the message
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        evidence = Evidence(
            verdict=FAIL if watch.first else ERROR,
            detail=(f"{watch.first}; then " if watch.first else "")
            + f"{type(exc).__name__}: {exc} (at {tb.filename.rsplit('/', 1)[-1]}:{tb.lineno})",
        )
    seconds = time.perf_counter() - start
    row = {
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
        "mde": _float_or_none(evidence.mde),
        "relative_mde": _float_or_none(evidence.relative_mde),
        "mde_target": None if claim.mde_target is None else claim.mde_target.at(budget),
        "power": evidence.power,
        "level": level,
        "why": None,  # explain(), below; run_claims explains again after Holm's correction
        "detail": evidence.detail,
        "_level": level,
        "_borrowed": _runs_borrowed_code(claim, subject),
    }
    row["why"] = explain(row)
    return row


def _apply_holm(rows: list[dict]) -> None:
    decided = [r for r in rows if r["p_value"] is not None and r["verdict"] in (PASS, FAIL, BORROWED)]
    adjusted = holm_adjust(r["p_value"] for r in decided)
    for row, p_adj in zip(decided, adjusted):
        row["p_adjusted"] = float(p_adj)
        if p_adj < row["_level"]:
            row["verdict"] = FAIL
        elif row["verdict"] == FAIL:  # failed on its raw p-value only
            row["verdict"] = BORROWED if row.get("_borrowed") else PASS


def _first_clause(detail: str) -> str:
    return detail.split("; ")[0] if detail else ""


def explain(row: dict) -> str:
    """The verdict of a result row in a few words: the test or bound that decided it, with its numbers
    (kept short: it is the last column of the run table; ``detail`` has the full account)."""
    verdict, p_adjusted = row["verdict"], row["p_adjusted"]
    statistic, bound, relative_mde = row["statistic"], row["bound"], row["relative_mde"]
    if verdict == ERROR:
        return "error: " + _first_clause(row["detail"])
    if verdict == ERRATUM:
        numbers = f" ({statistic:.3g} vs printed {bound:.3g})" if statistic is not None and bound is not None else ""
        return "printed statement fails" + numbers
    prefix = "borrowed code; " if verdict == BORROWED else ""
    if row["p_value"] is not None and p_adjusted is not None:
        mde = "" if relative_mde is None else f"; MDE {relative_mde:.2g}"
        if verdict == FAIL:
            return f"deviation (Holm p {p_adjusted:.2g} < {row['level']:g}{mde})"
        return prefix + f"no deviation (Holm p {p_adjusted:.2g} >= {row['level']:g}{mde})"
    if verdict == FAIL:
        return "failed: " + _first_clause(row["detail"])
    if statistic is not None and bound is not None:
        return prefix + f"within bound ({statistic:.3g} vs {bound:.3g})"
    return prefix + "exact check held: " + _first_clause(row["detail"])


def _check_claims(claims) -> list[Claim]:
    if isinstance(claims, (str, Claim)) or not isinstance(claims, Sequence):
        raise TypeError("claims must be a sequence of Claim objects, e.g. "
                        "proofs_checks.registry.select(load_claims(), ids=[...]); got " + type(claims).__name__)
    for i, claim in enumerate(claims):
        if not isinstance(claim, Claim):
            raise TypeError(f"claims[{i}] must be a Claim, got {type(claim).__name__} {claim!r:.60}")
    return list(claims)


def _check_subjects(subjects) -> list[Subject]:
    """Subjects, or their names / objects as ``resolve_subject`` takes them ("reference", "fast", "mod:attr", …)."""
    if isinstance(subjects, (str, Subject)) or not isinstance(subjects, Sequence):
        raise TypeError("subjects must be a sequence of subjects or subject names, e.g. ['reference', 'fast']; got "
                        + type(subjects).__name__)
    return [s if isinstance(s, Subject) else resolve_subject(s) for s in subjects]


def _pairs(claims: Sequence[Claim], subjects: Sequence[Subject]):
    claims, subjects = _check_claims(claims), _check_subjects(subjects)
    return [(c, s) for c in claims for s in subjects if c.applies_to(s)]


@functools.lru_cache(maxsize=1)
def _registered_claims() -> dict:
    from .registry import load_claims  # here: the registry imports every claim module

    return {claim.id: claim for claim in load_claims()}


@functools.lru_cache(maxsize=None)
def _named_subject(name: str) -> Subject:
    return resolve_subject(name)


def _run_named(claim_id: str, subject_name: str, budget: Budget, replicate: int) -> dict:
    """A worker's job: the registered claim ``claim_id`` on the subject named ``subject_name``."""
    return run_claim(_registered_claims()[claim_id], _named_subject(subject_name), budget, replicate)


def _sendable(pairs) -> bool:
    """Whether every pair can be rebuilt by name in a worker: a registered claim and a subject that
    ``resolve_subject`` rebuilds from its name (not a mutant, not an object given in code)."""
    registered = _registered_claims()
    for claim, subject in pairs:
        if registered.get(claim.id) is not claim:
            return False
        try:
            if type(_named_subject(subject.name)) is not type(subject) or \
                    _named_subject(subject.name).protocols != subject.protocols:
                return False
        except Exception:  # not a name resolve_subject knows
            return False
    return True


def _check_workers(workers) -> int:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    return workers


def _pool(workers: int) -> ProcessPoolExecutor:
    methods = multiprocessing.get_all_start_methods()
    # fork: a worker starts with the claim modules already imported (seconds saved per worker)
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    return ProcessPoolExecutor(max_workers=workers, mp_context=context)


def run_claims(
    claims: Sequence[Claim],
    subjects: Sequence[Subject],
    budget: Budget | str = "quick",
    *,
    replicate: int = 0,
    progress: bool = True,
    workers: int = 1,
) -> pd.DataFrame:
    """Run every applicable (claim, subject) pair; Holm-correct the statistical verdicts of the run.

    claims: a sequence of ``Claim``; subjects: ``Subject`` objects or names (``resolve_subject``); budget:
    ``"quick"``, ``"full"`` or a ``Budget``; progress: a progress bar on stderr (``reference.progress``);
    workers: processes to spread the checks over (module doc; the rows do not depend on it).
    """
    budget = _as_budget(budget)
    workers = _check_workers(workers)
    pairs = _pairs(claims, subjects)
    rows = []
    bar = progress_bar(len(pairs), "claims", "check", enabled=progress)
    try:
        if workers > 1 and len(pairs) > 1 and _sendable(pairs):
            with _pool(min(workers, len(pairs))) as pool:
                futures = [pool.submit(_run_named, claim.id, subject.name, budget, replicate)
                           for claim, subject in pairs]
                for future in futures:  # in submission order: the rows keep the serial order
                    rows.append(future.result())
                    bar.update()
        else:
            for claim, subject in pairs:
                rows.append(run_claim(claim, subject, budget, replicate))
                bar.update()
    finally:
        bar.close()
    _apply_holm(rows)
    for row in rows:
        row["why"] = explain(row)
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)


SOAK_COLUMNS = ["id", "subject", "statistical", "runs", "level", "false_alarms", "errors", "rate", "rate_lower",
                "rate_upper", "uniformity_p", "calibrated"]

#: Confidence of the interval on each claim's false-alarm rate (two-sided Clopper–Pearson).
SOAK_CONFIDENCE = 0.95


def uniformity_p_value(p_values) -> float | None:
    """One-sided Kolmogorov–Smirnov test that the p-values are not stochastically smaller than U(0, 1).

    A calibrated test has P(p ≤ t) ≤ t for every t; conservative and discrete tests give larger p-values, which
    is allowed, so the alternative is the one that matters: an empirical CDF above the uniform one somewhere
    (scipy's ``alternative="greater"``). None for fewer than two p-values.
    """
    values = [float(p) for p in p_values if p is not None]
    if len(values) < 2:
        return None
    return float(sps.kstest(values, "uniform", alternative="greater").pvalue)


def soak(
    claims: Sequence[Claim],
    subjects: Sequence[Subject],
    budget: Budget | str = "quick",
    *,
    runs: int,
    level: float | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Rerun each applicable pair ``runs`` times with fresh seeds (replicates 1..runs) and measure calibration.

    Each run is decided on its own raw p-value at ``level`` (default: the claim's level; no Holm), the strictest
    reading. A false alarm is a ``fail`` on a correct subject, an error is an ``error``; ``rate`` counts both,
    with its two-sided 95 % Clopper–Pearson interval [``rate_lower``, ``rate_upper``]. ``uniformity_p`` tests the
    claim's p-values against U(0, 1) (one-sided: too many small p-values). ``calibrated`` is False when a run
    errored or the interval lies above the level. A claim whose first run reports no p-value is deterministic:
    it is run once and reported with ``statistical`` False. ``frame.attrs["pooled_uniformity_p"]`` is the same
    uniformity test over the p-values of every run of every claim (``attrs["p_values"]``).
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    if level is not None and not (isinstance(level, (int, float)) and 0.0 < level < 1.0):
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    pairs = _pairs(claims, subjects)
    records, pooled = [], []
    bar = progress_bar(len(pairs) * runs, "soak", "check", enabled=progress)
    for claim, subject in pairs:
        decide_at = claim.level if level is None else level
        alarms, errors, p_values, done = 0, 0, [], 0
        for replicate in range(1, runs + 1):
            row = run_claim(claim, subject, budget, replicate, level=decide_at)
            done += 1
            bar.update()
            if row["p_value"] is not None and row["verdict"] in (PASS, FAIL, BORROWED):
                row["verdict"] = FAIL if row["p_value"] < decide_at else PASS
            alarms += row["verdict"] == FAIL
            errors += row["verdict"] == ERROR
            if row["p_value"] is not None:
                p_values.append(row["p_value"])
            elif replicate == 1 and row["verdict"] in HOLDS:
                bar.update(runs - 1)  # deterministic: reruns would repeat the same computation
                break
        lower, upper = clopper_pearson(alarms + errors, done, 1.0 - SOAK_CONFIDENCE)
        pooled.extend(p_values)
        records.append(
            {
                "id": claim.id,
                "subject": subject.name,
                "statistical": bool(p_values),
                "runs": done,
                "level": decide_at,
                "false_alarms": alarms,
                "errors": errors,
                "rate": (alarms + errors) / done,
                "rate_lower": lower,
                "rate_upper": upper,
                "uniformity_p": uniformity_p_value(p_values),
                "calibrated": errors == 0 and lower <= decide_at,
            }
        )
    bar.close()
    frame = pd.DataFrame.from_records(records, columns=SOAK_COLUMNS)
    frame.attrs["pooled_uniformity_p"] = uniformity_p_value(pooled)
    frame.attrs["pooled_p_values"] = len(pooled)
    frame.attrs["p_values"] = pooled
    return frame
