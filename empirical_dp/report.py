"""Audit reports: records, tables and plots of ``AuditResult``s (docs/audits.md, Plots).

Sources:
- Dong, Roth, Su 2022 (JRSS-B) Def. 2.6 / Thm 2.7: the Gaussian mechanism with μ = Δ/σ has the trade-off curve
  FNR = Φ(Φ⁻¹(1 − FPR) − μ), i.e. the best attack's ROC is TPR = Φ(Φ⁻¹(FPR) + μ); an attack's empirical ROC lies on
  or below it (up to sampling noise).
- ``empirical_dp.bounds.ceiling_table``: the largest ε any threshold attack can certify with N counted trials per
  dataset (perfect separation), the ceiling of the ε_lb-against-trials plot.

A report directory holds ``audits.{md,json,csv}`` and ``manifest.json`` (``reference.reporting.write_report``) and,
when matplotlib is importable, ``roc_<scenario>.png`` (for results carrying an ROC or a known μ) and
``epsilon_vs_trials_<scenario>.png`` (for scenarios audited at two or more trial counts). Plots use the Agg backend
and are written to files only.

The ROC plot draws the attack's empirical ROC, ``roc_curve(result)``: the (FPR, TPR) points of ``result.roc`` —
each what one threshold's error counts give, so serial and sharded audits on every executor have it — sorted by
FPR, with the end points (0, 0) and (1, 1) of the thresholds +∞ and −∞, joined by straight lines (a test that
randomises between two thresholds attains every point between them). Beside it: the tight Gaussian-DP curve when
μ is known and the diagonal (random guessing). ``roc_figure`` builds the figure, ``plot_roc`` writes it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from reference.reporting import write_report
from reference.validation import check_int, check_real

from .audit import AuditResult
from .bounds import ceiling_table

__all__ = [
    "result_record",
    "results_frame",
    "roc_arrays",
    "roc_curve",
    "gdp_roc",
    "epsilon_by_trials",
    "roc_figure",
    "plot_roc",
    "plot_epsilon_vs_trials",
    "write_audit_report",
    "matplotlib_available",
]

#: Columns of ``results_frame`` in order (``result_record`` keys).
COLUMNS = [
    "scenario", "trials", "select_trials", "count_trials", "seed", "shards", "confidence", "bound_confidence",
    "delta", "claim_type", "claimed_epsilon", "claimed_mu", "epsilon_lb", "gdp_mu_lb", "gdp_epsilon_lb",
    "tight_epsilon", "verdict", "verdict_bounds", "decided_by", "margin", "false_alarm_probability", "tightness",
    "gdp_tightness", "known_law_oracle_epsilon_lb", "epsilon_lb_minus_known_law_oracle", "known_law_oracle_threshold",
    "oracle_epsilon_lb", "threshold_strategy", "grid_size", "threshold", "fp", "negatives", "fn", "positives",
    "gdp_threshold", "gdp_fp", "gdp_negatives", "gdp_fn", "gdp_positives",
]


def _check_result(result) -> AuditResult:
    if not isinstance(result, AuditResult):
        raise TypeError(f"result must be an AuditResult, got {type(result).__name__}")
    return result


def _json_number(value):
    """float → float, or "inf"/"-inf" (JSON has no infinities); NaN never occurs in an AuditResult."""
    if value is None:
        return None
    value = float(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def result_record(result) -> dict:
    """One JSON-safe dict per audit: the claim (claim_type "epsilon_delta" or "gdp", claimed ε, claimed μ), the
    bounds (ε_lb, GDP μ_lb and ε_lb), the verdict, the bounds valid against the claim ("verdict_bounds", comma
    separated), the one that decided ("decided_by"), its margin over its claim and its false-alarm probability
    (1 − its confidence after the Bonferroni split), the tight ε and tightness (yardsticks),
    the known-law oracle ε_lb and ε_lb minus it, the search-based oracle value (best threshold searched on the
    counted data: not a bound, optimistic), the threshold and the counts behind each bound, trials, seed and
    confidence. Infinite values are the strings "inf"/"-inf"; unknown values are None."""
    result = _check_result(result)
    counts, gdp_counts = result.counts, result.gdp_counts
    known = getattr(result, "known_law_oracle_epsilon_lb", None)
    return {
        "scenario": result.scenario,
        "trials": int(result.trials),
        "select_trials": int(result.select_trials),
        "count_trials": int(result.count_trials),
        "seed": int(result.seed),
        "shards": int(result.shards),
        "confidence": float(result.confidence),
        "bound_confidence": float(result.bound_confidence),
        "delta": float(result.delta),
        "claim_type": result.claim_type,
        "claimed_epsilon": _json_number(result.claimed_epsilon),
        "claimed_mu": _json_number(result.claimed_mu),
        "epsilon_lb": _json_number(result.epsilon_lb),
        "gdp_mu_lb": _json_number(result.gdp_mu_lb),
        "gdp_epsilon_lb": _json_number(result.gdp_epsilon_lb),
        "tight_epsilon": _json_number(result.tight_epsilon),
        "verdict": result.verdict,
        "verdict_bounds": ",".join(result.verdict_bounds),
        "decided_by": result.decided_by,
        "margin": _json_number(result.margin),
        "false_alarm_probability": float(result.false_alarm_probability),
        "tightness": _json_number(result.tightness),
        "gdp_tightness": _json_number(result.gdp_tightness),
        # ε_lb of one threshold fixed from the true law, counted on the same data (None when the law is unknown)
        "known_law_oracle_epsilon_lb": _json_number(known),
        "epsilon_lb_minus_known_law_oracle": None if known is None else _json_number(result.epsilon_lb - known),
        "known_law_oracle_threshold": _json_number(getattr(result, "known_law_oracle_threshold", None)),
        # best threshold searched on the counted data: not a bound, optimistic
        "oracle_epsilon_lb": _json_number(result.oracle_epsilon_lb),
        # added to AuditResult by the threshold-strategy option; absent in older results
        "threshold_strategy": getattr(result, "threshold_strategy", None),
        "grid_size": getattr(result, "grid_size", None),
        "threshold": _json_number(result.threshold),
        "fp": int(counts.fp), "negatives": int(counts.negatives),
        "fn": int(counts.fn), "positives": int(counts.positives),
        "gdp_threshold": _json_number(result.gdp_threshold),
        "gdp_fp": int(gdp_counts.fp), "gdp_negatives": int(gdp_counts.negatives),
        "gdp_fn": int(gdp_counts.fn), "gdp_positives": int(gdp_counts.positives),
    }


def results_frame(results: Iterable) -> pd.DataFrame:
    """``result_record`` of each result as one row (columns ``COLUMNS``)."""
    if isinstance(results, AuditResult):
        raise TypeError("results must be an iterable of AuditResult, got a single AuditResult")
    records = [result_record(r) for r in results]
    return pd.DataFrame(records, columns=COLUMNS)


# ---------------------------------------------------------------------------------------------------
# Curves


def roc_arrays(result) -> tuple[np.ndarray, np.ndarray] | None:
    """(FPR, TPR) of the attack from ``result.roc`` (an (fpr, tpr) pair or an object with ``fpr``/``tpr``), or
    None when the result carries no ROC."""
    roc = getattr(_check_result(result), "roc", None)
    if roc is None:
        return None
    if hasattr(roc, "fpr") and hasattr(roc, "tpr"):
        fpr, tpr = roc.fpr, roc.tpr
    else:
        fpr, tpr = roc
    fpr, tpr = np.asarray(fpr, dtype=np.float64), np.asarray(tpr, dtype=np.float64)
    if fpr.shape != tpr.shape or fpr.ndim != 1:
        raise ValueError(f"result.roc must hold two 1-d arrays of one length, got shapes {fpr.shape}, {tpr.shape}")
    return fpr, tpr


def roc_curve(result) -> tuple[np.ndarray, np.ndarray] | None:
    """The attack's empirical ROC as the ROC plot draws it: the points of ``roc_arrays(result)`` sorted by FPR
    (ties by TPR), between the end points (0, 0) and (1, 1) (thresholds +∞ and −∞); None when the result carries
    no ROC. Descriptive, not a bound."""
    arrays = roc_arrays(result)
    if arrays is None:
        return None
    fpr, tpr = arrays
    order = np.lexsort((tpr, fpr))
    return np.concatenate([[0.0], fpr[order], [1.0]]), np.concatenate([[0.0], tpr[order], [1.0]])


def gdp_roc(false_positive_rate, mu) -> np.ndarray:
    """The ROC of the most powerful test against μ-GDP (Dong–Roth–Su Def. 2.6): TPR = Φ(Φ⁻¹(FPR) + μ).

    false_positive_rate: FPR in [0, 1] (array); mu: μ ≥ 0."""
    mu = check_real("mu", mu, nonnegative=True)
    fpr = np.asarray(false_positive_rate, dtype=np.float64)
    if not np.all((fpr >= 0) & (fpr <= 1)):
        raise ValueError("false_positive_rate must lie in [0, 1]")
    return norm.cdf(norm.ppf(fpr) + mu)


def epsilon_by_trials(run: Callable[[int], AuditResult], trial_counts: Sequence[int]) -> list[AuditResult]:
    """``run(n)`` for each n in ``trial_counts`` (e.g. ``lambda n: audit(scenario, n, seed=0)``): the series of
    ``plot_epsilon_vs_trials``."""
    if not callable(run):
        raise TypeError(f"run must be callable, got {type(run).__name__}")
    counts = [check_int(f"trial_counts[{i}]", n, minimum=2) for i, n in enumerate(trial_counts)]
    return [_check_result(run(n)) for n in counts]


# ---------------------------------------------------------------------------------------------------
# Plots


def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only; never a window
    import matplotlib.pyplot as plt

    return plt


#: Label of the empirical ROC line (``roc_figure``).
EMPIRICAL_ROC_LABEL = "attack, empirical (counted split; not a bound)"
#: At most this many points are marked on the empirical ROC (beyond, the line alone).
MAX_MARKED_POINTS = 300


def roc_figure(result, *, mu=None):
    """The ROC figure of ``result``: two panels, linear and log–log axes (the tails decide ε), each with the attack's
    empirical ROC (``roc_curve``, label ``EMPIRICAL_ROC_LABEL``) when the result carries one, the tight Gaussian-DP
    curve TPR = Φ(Φ⁻¹(FPR) + μ) when ``mu`` is given, and the diagonal. Returns the matplotlib figure (close it)."""
    result = _check_result(result)
    curve = roc_curve(result)
    if curve is None and mu is None:
        raise ValueError("nothing to plot: result has no roc and mu is None")
    plt = _pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(10, 4.5))
    grid = np.concatenate([np.geomspace(1e-7, 1e-2, 200), np.linspace(1e-2, 1, 200)])
    for ax, log in zip(axes, (False, True)):
        if mu is not None:
            ax.plot(grid, gdp_roc(grid, mu), color="black", lw=1.5, label=f"tight Gaussian DP, μ = {mu:.4g}")
        if curve is not None:
            fpr, tpr = curve
            marker = "." if fpr.size <= MAX_MARKED_POINTS else None
            ax.plot(fpr, tpr, color="tab:blue", lw=1.2, marker=marker, markersize=3,
                    label=f"{EMPIRICAL_ROC_LABEL}: {fpr.size - 2} thresholds")  # without the end points
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls=":", label="random guess")
        ax.set_xlabel("false positive rate (say D' on D)")
        ax.set_ylabel("true positive rate (say D' on D')")
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlim(max(1e-7, 0.5 / max(result.count_trials, 1)), 1)
            ax.set_ylim(1e-3, 1.02)
            ax.set_title("log–log (tails)")
        else:
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1.02)
            ax.set_title(f"{result.scenario}: ROC, {result.trials:,} trials per dataset")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    return figure


def plot_roc(result, path, *, mu=None) -> Path:
    """Write ``roc_figure(result, mu=mu)`` as a PNG to ``path``: the attack's empirical ROC (when the result carries
    one: serial and sharded audits on every executor do) against the tight Gaussian-DP curve (when ``mu`` is
    given), on linear and on log–log axes."""
    figure = roc_figure(result, mu=mu)
    path = Path(path)
    try:
        figure.savefig(path, dpi=110)
    finally:
        _pyplot().close(figure)
    return path


def plot_epsilon_vs_trials(results: Sequence, path, *, points: int = 60) -> Path:
    """ε_lb and the GDP ε_lb (labelled as reported only against an (ε, δ) claim) against the counted trials per
    dataset (log axis), with the ceiling curve (largest ε_lb any threshold attack can certify at that count,
    ``bounds.ceiling_table``) and the claimed and tight ε.
    results: audits of ONE scenario at two or more trial counts. Writes a PNG to ``path``."""
    results = sorted((_check_result(r) for r in results), key=lambda r: r.count_trials)
    if len(results) < 2:
        raise ValueError(f"results must hold at least 2 audits, got {len(results)}")
    if len({r.scenario for r in results}) != 1:
        raise ValueError("results must all audit the same scenario")
    first, last = results[0], results[-1]
    counts = np.array([r.count_trials for r in results])
    grid = np.unique(np.geomspace(max(1, counts[0] / 30), counts[-1] * 3, points).astype(np.int64))
    ceiling = ceiling_table(grid.tolist(), first.delta, first.bound_confidence)
    plt = _pyplot()
    figure, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(ceiling["trials_per_side"], ceiling["epsilon_ceiling"], color="grey", ls="--",
            label="ceiling (perfect separation)")
    ax.plot(counts, [r.epsilon_lb for r in results], "o-", color="tab:blue", label="ε_lb (Clopper–Pearson)")
    if first.delta > 0:
        gdp_label = ("GDP ε_lb" if last.claim_type == "gdp"
                     else "GDP ε (not a bound against the (ε, δ) claim; reported only)")
        ax.plot(counts, [r.gdp_epsilon_lb for r in results], "s-", color="tab:green", label=gdp_label)
    ax.plot(counts, [r.oracle_epsilon_lb for r in results], "x:", color="tab:red", alpha=0.6,
            label="best threshold searched on counted data (not a bound)")
    known = [r.known_law_oracle_epsilon_lb for r in results]
    if all(v is not None for v in known):
        ax.plot(counts, known, "d--", color="tab:purple", alpha=0.8, label="known-law oracle threshold")
    claimed = last.claimed_epsilon
    same = last.tight_epsilon is not None and last.tight_epsilon == claimed
    if math.isfinite(claimed):
        ax.axhline(claimed, color="black", lw=1.2,
                   label=f"claimed ε = {'tight ε = ' if same else ''}{claimed:.4g}")
    if last.tight_epsilon is not None and not same:
        ax.axhline(last.tight_epsilon, color="tab:purple", lw=1, ls="-.", label=f"tight ε = {last.tight_epsilon:.4g}")
    # log ε axis: the ceiling grows like log N and sits far above the bounds, which live near the claim
    values = [v for v in [claimed, last.tight_epsilon] + [r.epsilon_lb for r in results]
              + [r.gdp_epsilon_lb for r in results] if v is not None and math.isfinite(v) and v > 0]
    ax.set_yscale("log")
    ax.set_ylim(min(values + [1.0]) / 3, 1.5 * max(values + [float(ceiling["epsilon_ceiling"].max())]))
    ax.set_xscale("log")
    ax.set_xlabel("counted trials per dataset")
    ax.set_ylabel("ε")
    ax.set_title(f"{first.scenario}: ε lower bounds, δ = {first.delta:g}, confidence {first.confidence:g}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "scenario"


def write_audit_report(results, directory, *, manifest: dict, mu: dict | None = None, series: dict | None = None,
                       name: str = "audits", annotations: dict | None = None) -> Path:
    """Write ``{name}.md/.json/.csv`` and ``manifest.json`` for ``results`` into ``directory`` and, when matplotlib
    is importable, the plots: ``roc_<scenario>.png`` for each result with an ROC or a known μ, and
    ``epsilon_vs_trials_<scenario>.png`` for each scenario with audits at two or more trial counts (taken from
    ``results`` and ``series``).

    mu: scenario name → μ (draws the tight GDP curve on the ROC plot); series: scenario name → list of extra
    ``AuditResult``s at other trial counts (plot only, not in the tables); annotations: scenario name → dict of
    extra columns for that scenario's rows (e.g. the command line's kind, expected, missed, note), appended after
    ``COLUMNS``. Returns the directory; the PNG names written are listed in ``manifest.json`` under "plots".
    """
    results = [_check_result(r) for r in results]
    if not results:
        raise ValueError("results must not be empty")
    if not isinstance(manifest, dict):
        raise TypeError(f"manifest must be a dict, got {type(manifest).__name__}")
    mu = dict(mu or {})
    series = {k: list(v) for k, v in (series or {}).items()}
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    plots = []
    if matplotlib_available():
        for result in results:
            scenario_mu = mu.get(result.scenario)
            if roc_arrays(result) is not None or scenario_mu is not None:
                plots.append(plot_roc(result, path / f"roc_{_slug(result.scenario)}.png", mu=scenario_mu).name)
        by_scenario: dict[str, list[AuditResult]] = {}
        for result in results + [r for extra in series.values() for r in extra]:
            by_scenario.setdefault(result.scenario, []).append(result)
        for scenario, group in by_scenario.items():
            if len({r.count_trials for r in group}) >= 2:
                unique = list({r.count_trials: r for r in group}.values())
                plots.append(plot_epsilon_vs_trials(unique, path / f"epsilon_vs_trials_{_slug(scenario)}.png").name)
    frame = results_frame(results)
    for scenario_name, extra in (annotations or {}).items():
        rows = frame["scenario"] == scenario_name
        for column, value in dict(extra).items():
            if column not in frame:
                frame[column] = None
            frame[column] = frame[column].astype(object)
            frame.loc[rows, column] = value
    write_report(frame, path, manifest={**manifest, "plots": plots}, name=name)
    if plots:  # link the plots from the Markdown table
        with open(path / f"{name}.md", "a") as handle:
            handle.write("\n" + "\n".join(f"![{p}]({p})" for p in plots) + "\n")
    return path
