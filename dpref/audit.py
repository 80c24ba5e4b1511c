"""``dpref audit``: empirical privacy audits from the command line (docs/audits.md).

    dpref audit list [--format table|json] [--wide]
    dpref audit run NAME [--trials N] [--seed S] [--executor serial|local|dask://HOST:PORT] [--shards K]
                         [--workers W] [--confidence C] [--threshold-strategy bonferroni_grid|split]
                         [--report DIR [--overwrite]] [--format table|json] [--wide] [--quiet | -q]

NAME is a built-in scenario (``empirical_dp.registry.SCENARIOS``), a planted bug (``empirical_dp.planted.PLANTED``)
or ``module:attr`` / ``path/file.py:attr`` naming a ``Scenario`` (``reference.loading``; the current directory is
searched). ``run`` draws N outputs per dataset (default: 100 000, or the
planted bug's budget), chooses the thresholds on a disjoint select split (default strategy "bonferroni_grid") and
prints the claim ((ε, δ) or μ-GDP), the certified ε_lb (Clopper–Pearson), the GDP μ_lb and its ε (each marked as
a verdict bound or as reported only: the GDP bound is not valid against an (ε, δ) claim), the claimed and tight ε,
the verdict, the bound that decided it ("decided_by": "clopper_pearson_epsilon" or "gdp_mu") with its margin over
the claim and its false-alarm probability (1 − its confidence after the Bonferroni split), and the tightness
ε_lb / tight ε; for a scenario whose law is known (μ-GDP, likelihood-ratio attack) the known-law oracle ε_lb
(what one threshold chosen from the true law certifies on the same counted data) and ε_lb minus it; and the
search-based oracle ε_lb ("best threshold searched on the counted data (not a bound, optimistic)"). With
--shards > 1 or an executor other than serial the counted shards run through
``empirical_dp.executors.audit_sharded`` (--workers: the local pool's size, default all cores). A planted bug
that comes out "consistent" is reported as MISSED ("planted bug not caught at this budget"; json: "missed": true),
never as a plain "consistent".

Integer options (--trials, --seed, --shards, --workers) also take a whole number written like 1e6 or 1_000_000.

Output. Tables fit ``reference.reporting.TABLE_WIDTH`` = 120 columns: ``list`` shortens its descriptions (ending
them in "…"), ``run`` wraps a long field onto indented continuation lines; --wide prints every field in full on
one line. A missing value is ``reference.reporting.MISSING`` ("n/a") in tables and null in JSON. JSON numbers are
JSON numbers (numpy scalars converted; the infinities, which JSON lacks, are the strings "inf" and "-inf"; never
NaN); an audit holds no high-precision (mpmath) value, so there is no decimal-string field. ``list`` reads the
static ``empirical_dp.catalogue`` (no scenario is built, no SciPy imported: it answers at once); ``run`` builds
the scenario and reports its computed values.

Progress. ``run`` shows a bar over the 2 × N outputs drawn, serial or sharded, on every executor; ``quick_audits``
one over the audits. On a terminal it is redrawn in place; when stderr is piped or redirected it is written as whole
lines, at most one every 10 s (``reference.progress.progress_bar``). --quiet (-q; the old --no-progress) hides it.
Progress goes to stderr only, so ``--format json`` output stays clean.

Exit codes: 0 consistent, or a violation of a planted bug (printed "violation (expected: planted bug)"), or a
planted bug missed at the chosen budget (printed as missed: a lack of power, not a finding about a mechanism);
1 a violation of a scenario that is not a planted bug; 2 bad usage. Every refusal is one line on stderr,
``dpref: error: <reason>``, naming the option or NAME, printed before anything is computed (no traceback, no
progress): an option that is not an integer or not one of its choices, an unknown option; --trials < 2, --seed <
0, --shards < 1 or more than the counted trials, --workers < 1 or without --executor local, --confidence outside
(0.5, 1), an --executor that is none of serial, local or dask://HOST:PORT, a planted bug on --executor local
(its scenario holds closures a process pool cannot send); a NAME that cannot be loaded (unknown name, missing
file, the user's module raising on import, not a ``Scenario``) or whose scenario raises when it draws or scores a
first output (``_preflight``; also any later exception of a user's scenario); an unreachable Dask scheduler
(``executors.DASK_CONNECT_TIMEOUT``); a budget whose estimated memory exceeds ``memory_limit()`` (``check_memory``);
a --report directory that cannot be used.

Start-up: this module imports the audit library (SciPy, statsmodels, the scenario modules) only when an audit runs.

``quick_audits()`` runs every shipped scenario at a quick budget and every planted bug at its budget for
``dpref check``; each record names the claim, the deciding bound, its margin and false-alarm probability, and
flags a missed planted bug ("missed", with the note "planted bug not caught at this budget").
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import re
import sys
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor

import pandas as pd

from empirical_dp.catalogue import CATALOGUE
from dpref.parsing import OneLineParser, integer, one_line_errors
from reference.progress import progress_bar
from reference.reporting import MISSING, TABLE_WIDTH, prepare_output_dir, render

__all__ = ["register", "run", "quick_audits", "QUICK_TRIALS", "QUICK_TRIALS_BY_SCENARIO", "QUICK_CONFIDENCE",
           "DEFAULT_TRIALS", "ORACLE_LABEL", "KNOWN_LAW_LABEL", "MISSED_NOTE", "verdict_text", "outcome_fields"]

#: Trials per dataset for a shipped scenario in ``quick_audits`` (planted bugs run at their own budgets,
#: ``empirical_dp.planted.PLANTED``, sized for a bound valid for their claim at ``QUICK_CONFIDENCE``).
QUICK_TRIALS = 200_000
#: Smaller quick budgets for scenarios that run a whole algorithm per trial (T = 100 DPZero steps each).
QUICK_TRIALS_BY_SCENARIO = {"dpzero-full-run": 2_000, "dpzero-full-run-poisson": 1_000, "dpzero-published": 100,
                            "zo_o2nc-published": 50, "nsnc_improved-published": 50,
                            "nsnc_improved-published-theory-m": 50,
                            # draws the canary slot's m = 400 fresh public directions per trial (~2 s per 10⁵ outputs)
                            "nsnc_improved-high-probability": 50_000,
                            # follows Algorithm 2's schedule step by step over T = 16 releases (~1.4 s per 10⁵ outputs)
                            "spider-sosp-run": 100_000,
                            # a whole default spider_sosp run (n = 10⁴, ~135 steps) written out per trial (~70 ms)
                            "spider_sosp-published": 50,
                            # a whole default bgm21 run (n = 2048, 7 steps) written out per trial (~30 ms)
                            "bgm21_nsfw-published": 50, "bgm21_polysfw-published": 50,
                            # one Opacus run trains 256 trials (~27 000 trials/s on one core)
                            "opacus-dpsgd": 1_024, "opacus-dpsgd-final-model": 1_024,
                            # one torch DPZero run per trial (T = 10, ~3.3 ms)
                            "dpzero-torch-full-run": 200, "dpzero-torch-final-model": 200,
                            "dpzero_torch-published": 50}
#: Joint confidence of every quick audit's verdict: a correct (even exactly tight) mechanism is reported as a
#: violation with probability at most 1e-6, the level of the claims; the planted bugs' budgets are sized so that
#: they are still caught at this confidence.
QUICK_CONFIDENCE = 1 - 1e-6
#: Trials per dataset of ``audit run`` on a scenario when --trials is not given.
DEFAULT_TRIALS = 100_000
#: Smaller defaults for scenarios whose trial is a whole run written out as files (milliseconds each).
DEFAULT_TRIALS_BY_SCENARIO = {"dpzero-published": 1_000, "zo_o2nc-published": 300, "nsnc_improved-published": 300,
                              "nsnc_improved-published-theory-m": 300, "spider_sosp-published": 300,
                              "bgm21_nsfw-published": 300, "bgm21_polysfw-published": 300}
#: How the oracle value is labelled everywhere: it is chosen on the counted data, so it certifies nothing.
ORACLE_LABEL = "best threshold searched on the counted data (not a bound, optimistic)"
#: How the known-law oracle is labelled: the ε_lb one threshold fixed from the true law would certify on the same data.
KNOWN_LAW_LABEL = "one threshold chosen from the true law, counted on the same data (yardstick, not the verdict)"
EXPECTED_PLANTED = "violation (expected: planted bug)"
#: What a planted bug that comes out "consistent" is reported as (never a plain "consistent").
MISSED_NOTE = "planted bug not caught at this budget"
MISSED_PLANTED = f"consistent -- MISSED: {MISSED_NOTE} (expected: violation)"
#: Labels of the bounds in the table.
BOUND_LABELS = {"clopper_pearson_epsilon": "epsilon_lb", "gdp_mu": "mu_lb"}


def _planted() -> dict:
    from empirical_dp import planted as planted_module  # imported when an audit runs, not for `audit list`

    return getattr(planted_module, "PLANTED", {})


def _scenarios() -> dict:
    from empirical_dp.registry import SCENARIOS  # read at call time: tests may patch the registry

    return SCENARIOS


# ---------------------------------------------------------------------------------------------------
# Parsing: one-line refusals


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``audit`` command (sub-commands ``list`` and ``run``) to an argparse sub-parser set."""
    audit = subparsers.add_parser("audit", help="empirical privacy audits (epsilon lower bounds)",
                                  description=__doc__.split("\n\n")[0])
    one_line_errors(audit)  # `dpref audit` without a sub-command, or an unknown one: one line too
    commands = audit.add_subparsers(dest="audit_command", required=True, metavar="{list,run}",
                                    parser_class=OneLineParser)
    listing = commands.add_parser("list", help="shipped scenarios and planted bugs")
    listing.add_argument("--format", default="table", choices=("table", "json"))
    listing.add_argument("--wide", action="store_true", help=f"show every column in full (default: fit "
                                                              f"{TABLE_WIDTH} columns)")
    run_parser = commands.add_parser("run", help="audit a scenario, a planted bug, module:attr or file.py:attr")
    run_parser.add_argument("name", metavar="NAME", help="scenario, planted bug, module:attr or path/file.py:attr")
    run_parser.add_argument("--trials", type=integer, default=None, metavar="N",
                            help=f"outputs per dataset, >= 2 (default {DEFAULT_TRIALS}; dpzero-published "
                                 f"{DEFAULT_TRIALS_BY_SCENARIO['dpzero-published']}; planted bugs: their budget)")
    run_parser.add_argument("--seed", type=integer, default=0, metavar="S", help="audit seed, >= 0 (default 0)")
    run_parser.add_argument("--executor", default="serial", metavar="EXECUTOR",
                            help="serial | local | dask://HOST:PORT")
    run_parser.add_argument("--shards", type=integer, default=1, metavar="K", help="counted shards, >= 1")
    run_parser.add_argument("--workers", type=integer, default=None, metavar="W",
                            help="processes of --executor local, >= 1 (default: all cores)")
    run_parser.add_argument("--confidence", type=float, default=0.95, metavar="C", help="in (0.5, 1)")
    run_parser.add_argument("--threshold-strategy", default="bonferroni_grid", choices=("split", "bonferroni_grid"),
                            help="a Bonferroni grid of select-split thresholds (default) or one select-split threshold")
    run_parser.add_argument("--report", default=None, metavar="DIR", help="write md/json/csv, manifest and plots")
    run_parser.add_argument("--overwrite", action="store_true", help="allow --report into a non-empty directory")
    run_parser.add_argument("--format", default="table", choices=("table", "json"))
    run_parser.add_argument("--wide", action="store_true", help=f"print long fields on one line (default: wrap "
                                                                 f"them at {TABLE_WIDTH} columns)")
    run_parser.add_argument("--quiet", "-q", action="store_true",
                            help="no progress bar (it goes to stderr; piped, it prints a line every 10 s)")
    run_parser.add_argument("--no-progress", dest="quiet", action="store_true", help=argparse.SUPPRESS)  # old name
    return audit


# ---------------------------------------------------------------------------------------------------
# Targets


#: Fields of ``audit list --format json`` (one record per scenario and planted bug).
LIST_COLUMNS = ["name", "kind", "claim_type", "claimed_epsilon", "claimed_mu", "tight_epsilon", "description"]
#: Table headers of ``audit list`` (short, so that the names and some description fit 120 columns) → JSON field.
LIST_TABLE = {"name": "name", "kind": "kind", "claim": "claim_type", "eps": "claimed_epsilon", "mu": "claimed_mu",
              "tight_eps": "tight_epsilon", "description": "description"}


def _list_records() -> list[dict]:
    """One record per built-in scenario and planted bug, from the static ``empirical_dp.catalogue`` (no scenario
    is built; ``tests/test_audit_listing.py`` checks it against the built scenarios)."""
    return [entry._asdict() for entry in CATALOGUE]


def _list(args) -> int:
    frame = pd.DataFrame(_list_records(), columns=LIST_COLUMNS)
    if args.format == "json":
        print(render(frame, "json"))
        return 0
    table = frame[list(LIST_TABLE.values())].set_axis(list(LIST_TABLE), axis=1)
    print(render(table, "table", width=None if args.wide else TABLE_WIDTH))
    return 0


def _resolve(name: str):
    """("scenario" | "planted" | "external", Scenario) for NAME; ValueError naming NAME otherwise."""
    from empirical_dp import executors

    scenarios = _scenarios()
    if name in scenarios:
        return "scenario", scenarios[name]
    if name in _planted():
        return "planted", _planted()[name][0]()
    if ":" in name:
        try:
            return "external", executors.resolve_scenario(name)
        except (ValueError, TypeError) as exc:  # LoadError (missing file, import error, no attribute) or not a Scenario
            raise ValueError(f"NAME {name!r} does not name a Scenario: {exc}") from None
    raise ValueError(f"NAME must be a scenario ({', '.join(scenarios)}), a planted bug ({', '.join(_planted())}), "
                     f"'module:attr' or 'path/file.py:attr', got {name!r}")


def _preflight(name: str, scenario) -> None:
    """Draw and score one output on D and one on D′ of a user's scenario, so that one that raises (or returns
    something that is not (1, k) outputs, or no finite score) is refused in one line naming NAME before the audit
    starts (and before any progress is shown)."""
    import numpy as np
    from reference.loading import one_line

    try:
        if scenario.log_likelihood_ratio is None:
            raise ValueError("the scenario has no log_likelihood_ratio (the default attack)")
        for which in (0, 1):
            outputs = np.asarray(scenario.sample(np.random.default_rng(0), 1, which), dtype=np.float64)
            if outputs.ndim != 2 or outputs.shape[0] != 1:
                raise ValueError(f"sample(rng, 1, {which}) must return (1, k) outputs, got shape {outputs.shape}")
            scores = np.asarray(scenario.log_likelihood_ratio(outputs), dtype=np.float64)
            if scores.shape != (1,) or not np.all(np.isfinite(scores)):
                raise ValueError(f"log_likelihood_ratio must map (1, k) outputs to one finite score, got {scores!r}")
    except Exception as exc:  # the user's code: any exception, said in one line
        raise ValueError(f"NAME {name!r}: the scenario fails on a first output: {one_line(exc)}") from None


# ---------------------------------------------------------------------------------------------------
# Memory guard: refuse a budget that cannot fit before drawing anything (no MemoryError traceback).

#: Share of the physical memory (``os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES')``) an audit may plan
#: to allocate. Half leaves room for the interpreter, NumPy temporaries the estimate does not see and other
#: processes; the estimate itself is rough (below), so this is a guard against hopeless budgets, not a tuning knob.
MEMORY_FRACTION = 0.5
#: The limit when the physical memory cannot be read (no ``sysconf``, e.g. on Windows): 8 GiB.
FALLBACK_MEMORY_LIMIT = 8 * 2**30
#: float64 copies of every per-dataset score an audit holds at its peak: the shards' scores, their pooled
#: concatenation, and the sorted / concatenated candidates of the oracle search and the ROC.
SCORE_COPIES = 4
#: float64 copies of one shard's outputs (trials × k) alive while a shard is drawn: the outputs and one temporary.
OUTPUT_COPIES = 2


def memory_limit() -> int:
    """Bytes an audit may plan to allocate: ``MEMORY_FRACTION`` of the physical memory (or the fallback)."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return FALLBACK_MEMORY_LIMIT
    return int(MEMORY_FRACTION * physical) if physical > 0 else FALLBACK_MEMORY_LIMIT


def _output_width(scenario) -> int:
    """k, the width of one output (one trial drawn on D); 1 if the scenario cannot say."""
    import numpy as np

    try:
        return max(1, int(np.shape(scenario.sample(np.random.default_rng(0), 1, 0))[-1]))
    except Exception:  # a user scenario that fails here fails with its own message in the audit
        return 1


def _split_fraction(strategy: str) -> float:
    from empirical_dp.audit import GRID_THRESHOLD_FRACTION, SPLIT_THRESHOLD_FRACTION

    return GRID_THRESHOLD_FRACTION if strategy == "bonferroni_grid" else SPLIT_THRESHOLD_FRACTION


def estimate_audit_bytes(trials: int, shards: int, strategy: str, width: int) -> tuple[int, int]:
    """(bytes for the scores, bytes for the largest shard's outputs) of an audit with these parameters: scores are
    kept for all 2 × trials draws (``SCORE_COPIES`` float64 copies); outputs only for one shard (or the select
    split) at a time, per dataset (``OUTPUT_COPIES`` copies of trials × ``width`` float64)."""
    from empirical_dp.audit import split_sizes

    select, sizes = split_sizes(trials, _split_fraction(strategy), shards)
    largest = max([select, *sizes])
    return 8 * SCORE_COPIES * 2 * trials, 8 * OUTPUT_COPIES * largest * width


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1024 or unit == "PB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} PB"  # pragma: no cover


def check_memory(trials: int, shards: int, strategy: str, scenario) -> None:
    """ValueError (one line naming the size and --trials / --shards) when the audit would not fit in
    ``memory_limit()``."""
    limit = memory_limit()
    scores, outputs = estimate_audit_bytes(trials, shards, strategy, 1)
    if scores + outputs <= limit:  # cheap test first, then with the real output width
        scores, outputs = estimate_audit_bytes(trials, shards, strategy, _output_width(scenario))
    if scores + outputs <= limit:
        return
    advice = "lower --trials" if scores > limit / 2 else "lower --trials or raise --shards (smaller shards)"
    raise ValueError(f"--trials {trials:,} with --shards {shards} would need about {_size(scores + outputs)} of "
                     f"memory, more than the limit {_size(limit)} ({MEMORY_FRACTION:g} of physical memory): {advice}")


# ---------------------------------------------------------------------------------------------------
# Options checked before anything is built or drawn


def _check_options(args) -> None:
    """ValueError, one line naming the option, for every option value that cannot run (module docstring)."""
    from empirical_dp.audit import split_sizes
    from empirical_dp.executors import check_executor

    if args.trials is not None and args.trials < 2:
        raise ValueError(f"--trials must be >= 2, got {args.trials}")
    if args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    if args.shards < 1:
        raise ValueError(f"--shards must be >= 1, got {args.shards}")
    if not 0.5 < args.confidence < 1:  # NaN fails too
        raise ValueError(f"--confidence must lie in (0.5, 1), got {args.confidence}")
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    if args.workers is not None and args.executor != "local":
        raise ValueError(f"--workers applies only to --executor local, got --executor {args.executor}")
    try:
        check_executor(args.executor)
    except ValueError:
        raise ValueError(f"--executor must be serial, local or dask://HOST:PORT (port 1-65535), "
                         f"got {args.executor!r}") from None
    if args.trials is not None:
        count = args.trials - split_sizes(args.trials, _split_fraction(args.threshold_strategy))[0]
        if args.shards > count:
            raise ValueError(f"--shards must be <= the counted trials per dataset ({count:,} of --trials "
                             f"{args.trials:,}), got {args.shards}")


def _runner(kind: str, name: str, scenario, *, seed, executor, shards, confidence, progress,
            strategy="bonferroni_grid", workers=None):
    """trials → AuditResult for the chosen target, executor and threshold strategy."""
    from empirical_dp import audit as audit_module
    from empirical_dp import executors

    sharded = shards > 1 or executor != "serial"
    attack = _planted()[name][1](scenario) if kind == "planted" else None
    if not sharded:  # the scenario built once (a planted bug's factory may train a feature: not twice)
        return lambda n: audit_module.audit(scenario, n, seed=seed, attack=attack, confidence=confidence,
                                            threshold_strategy=strategy, progress=progress)
    spec = name if kind in ("scenario", "external") else scenario  # names travel to workers, objects may not
    return lambda n: executors.audit_sharded(spec, n, seed=seed, shards=shards, executor=executor, workers=workers,
                                             attack=attack, confidence=confidence, progress=progress,
                                             threshold_strategy=strategy)


def verdict_text(kind: str, verdict: str) -> str:
    """The verdict as printed: "violation (expected: planted bug)", the MISSED line for a planted bug that came
    out "consistent", else the verdict itself."""
    if kind == "planted":
        return EXPECTED_PLANTED if verdict == "violation" else MISSED_PLANTED
    return verdict


def outcome_fields(kind: str, verdict: str) -> dict:
    """``expected`` ("violation" for a planted bug, else "consistent"), ``missed`` (a planted bug reported
    "consistent"), ``ok`` (verdict == expected) and ``note`` (``MISSED_NOTE`` when missed, else "")."""
    expected = "violation" if kind == "planted" else "consistent"
    missed = kind == "planted" and verdict != "violation"
    return {"expected": expected, "missed": missed, "ok": verdict == expected, "note": MISSED_NOTE if missed else ""}


# ---------------------------------------------------------------------------------------------------
# Output


def _decision_text(record: dict) -> str:
    """e.g. "gdp_mu: mu_lb 0.52 > claimed mu 0.268 (margin +0.252); false-alarm probability 0.025"."""
    bound = record["decided_by"]
    if bound == "gdp_mu":
        value, claimed, unit = record["gdp_mu_lb"], record["claimed_mu"], "mu"
    else:
        value, claimed, unit = record["epsilon_lb"], record["claimed_epsilon"], "epsilon"
    relation = ">" if record["verdict"] == "violation" else "<="
    margin = record["margin"]
    margin_text = margin if isinstance(margin, str) else f"{margin:+.6g}"
    return (f"{bound}: {BOUND_LABELS.get(bound, bound)} {_fmt(value)} {relation} claimed {unit} {_fmt(claimed)} "
            f"(margin {margin_text}); false-alarm probability {_fmt(record['false_alarm_probability'])}")


def _bound_role(record: dict, bound: str) -> str:
    if bound in record["verdict_bounds"].split(","):
        return "[verdict bound]"
    return "[reported only: not a bound against an (epsilon, delta) claim]"


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _claim_text(record: dict) -> str:
    if record["claim_type"] == "gdp":
        return (f"mu-GDP, mu = {_fmt(record['claimed_mu'])} (implies epsilon {_fmt(record['claimed_epsilon'])} at "
                f"delta {_fmt(record['delta'])})")
    return f"(epsilon, delta) = ({_fmt(record['claimed_epsilon'])}, {_fmt(record['delta'])})"


_PIECES = re.compile(r"(  +|(?<=;) )")  # where a long value may be wrapped: between its parts, after a ";"


def _wrap(key: str, value: str, key_width: int, width: int | None) -> list[str]:
    """``key  value`` as one line, or, when longer than ``width``, as several: the value broken between its parts
    (two spaces apart, or after "; "), then at spaces, continuation lines indented under the value."""
    first = f"{key:<{key_width}}  "
    if width is None or len(first) + len(value) <= width:
        return [first + value]
    room = max(24, width - len(first))
    parts = _PIECES.split(value)
    lines, line = [], parts[0]
    for separator, text in zip(parts[1::2], parts[2::2]):
        if len(line) + len(separator) + len(text) <= room:
            line += separator + text
        else:
            lines.append(line)
            line = text
    lines.append(line)
    wrapped = [piece for line in lines
               for piece in (textwrap.wrap(line, room, break_long_words=False, break_on_hyphens=False) or [""])]
    return [first + wrapped[0]] + [" " * len(first) + piece for piece in wrapped[1:]]


def _table(record: dict, width: int | None = TABLE_WIDTH) -> str:
    lines = [
        ("scenario", f"{record['scenario']} ({record['kind']})"),
        ("claim", _claim_text(record)),
        ("trials", f"{record['trials']:,} per dataset (select {record['select_trials']:,}, count "
                   f"{record['count_trials']:,}, {record['shards']} shard(s)), seed {record['seed']}"),
        ("confidence", f"{_fmt(record['confidence'])} (each bound at {_fmt(record['bound_confidence'])}), "
                       f"delta {_fmt(record['delta'])}"),
        ("strategy", f"{record['threshold_strategy']} (thresholds counted for epsilon_lb: {record['grid_size']})"),
        ("epsilon_lb", f"{_fmt(record['epsilon_lb'])}  Clopper-Pearson; threshold {_fmt(record['threshold'])}: "
                       f"FP {record['fp']}/{record['negatives']}, FN {record['fn']}/{record['positives']}  "
                       f"{_bound_role(record, 'clopper_pearson_epsilon')}"),
        ("gdp_mu_lb", f"{_fmt(record['gdp_mu_lb'])}  threshold {_fmt(record['gdp_threshold'])}: "
                      f"FP {record['gdp_fp']}/{record['gdp_negatives']}, "
                      f"FN {record['gdp_fn']}/{record['gdp_positives']}  {_bound_role(record, 'gdp_mu')}"),
        ("gdp_epsilon_lb", f"{_fmt(record['gdp_epsilon_lb'])}  (the epsilon of mu_lb at delta)"),
        ("claimed_epsilon", _fmt(record["claimed_epsilon"])),
        ("claimed_mu", _fmt(record["claimed_mu"])),
        ("tight_epsilon", f"{_fmt(record['tight_epsilon'])}  (true law: a yardstick, not the verdict)"),
        ("verdict", record["verdict_text"]),
        ("decided_by", _decision_text(record)),
    ]
    if record.get("missed"):
        lines.append(("missed", f"{MISSED_NOTE} ({record['trials']:,} trials per dataset)"))
    lines += [
        ("tightness", f"{_fmt(record['tightness'])}  (epsilon_lb / tight; GDP: {_fmt(record['gdp_tightness'])})"),
        ("known_law_oracle", f"{_fmt(record['known_law_oracle_epsilon_lb'])}  {KNOWN_LAW_LABEL}"),
        ("epsilon_lb - oracle", f"{_fmt(record['epsilon_lb_minus_known_law_oracle'])}  (epsilon_lb minus known-law oracle)"),
        ("oracle_epsilon_lb", f"{_fmt(record['oracle_epsilon_lb'])}  {ORACLE_LABEL}"),
        ("seconds", f"{record['seconds']:.3g}"),
    ]
    if record.get("report"):
        lines.append(("report", record["report"]))
    key_width = max(len(k) for k, _ in lines)
    return "\n".join(line for key, value in lines for line in _wrap(key, value, key_width, width))


def _json_value(value):
    """A value for ``json.dumps``: numpy scalars as Python numbers, NaN as null, ±inf as "inf"/"-inf" (JSON has
    neither), containers converted item by item."""
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if value is None or isinstance(value, (bool, str)):
        return value
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    return str(value)


def _series_counts(trials: int) -> list[int]:
    """Smaller trial counts for the ε-against-trials plot of a report: trials/100 and trials/10 (≥ 100)."""
    return sorted({n for n in (trials // 100, trials // 10) if 100 <= n < trials})


def _run_audit(args) -> int:
    from reference.loading import one_line

    _check_options(args)
    if args.executor == "local" and args.name in _planted() and args.name not in _scenarios():
        raise ValueError(f"--executor local cannot run the planted bug {args.name!r}: its scenario holds closures "
                         "that a process pool cannot send; use --executor serial (any --shards) or dask://HOST:PORT")
    kind, scenario = _resolve(args.name)
    if kind == "external":
        _preflight(args.name, scenario)
    trials = args.trials
    if trials is None:
        trials = _planted()[args.name][2] if kind == "planted" else DEFAULT_TRIALS_BY_SCENARIO.get(args.name,
                                                                                                DEFAULT_TRIALS)
        _check_options(argparse.Namespace(**{**vars(args), "trials": trials}))  # --shards against the default
    check_memory(trials, args.shards, args.threshold_strategy, scenario)
    if args.report:  # probed before any computation: a bad location must not cost the result
        prepare_output_dir(args.report, overwrite=args.overwrite, option="--report")
    progress = not args.quiet
    run = _runner(kind, args.name, scenario, seed=args.seed, executor=args.executor, shards=args.shards,
                  confidence=args.confidence, progress=progress, strategy=args.threshold_strategy,
                  workers=args.workers)
    try:
        start = time.perf_counter()
        result = run(trials)
        seconds = time.perf_counter() - start
        series = None
        if args.report:
            serial = _runner(kind, args.name, scenario, seed=args.seed, executor="serial", shards=1,
                             confidence=args.confidence, progress=progress, strategy=args.threshold_strategy)
            from empirical_dp.report import epsilon_by_trials

            series = epsilon_by_trials(serial, _series_counts(trials))
    except Exception as exc:
        if kind != "external":
            raise
        raise ValueError(f"NAME {args.name!r}: the scenario failed during the audit: {one_line(exc)}") from None
    return _finish(args, kind, scenario, result, seconds, series)


def _finish(args, kind, scenario, result, seconds, series) -> int:
    from empirical_dp.report import result_record, write_audit_report

    record = {"kind": kind, **result_record(result), "seconds": seconds}
    record["verdict_text"] = verdict_text(kind, result.verdict)
    record["oracle_note"] = ORACLE_LABEL
    record["known_law_oracle_note"] = KNOWN_LAW_LABEL
    outcome = outcome_fields(kind, result.verdict)
    record.update(expected=outcome["expected"], missed=outcome["missed"], note=outcome["note"])
    if args.report:
        command = "dpref audit run " + " ".join(sys.argv[3:]) if sys.argv[1:2] == ["audit"] else "dpref audit run"
        write_audit_report([result], args.report, mu={result.scenario: scenario.mu} if scenario.mu else None,
                           series={result.scenario: series},
                           manifest={"command": command, "name": args.name, "kind": kind, "executor": args.executor,
                                     "series_trials": [r.trials for r in series]},
                           annotations={result.scenario: {"kind": kind, "verdict_text": record["verdict_text"],
                                                          "expected": record["expected"],
                                                          "missed": record["missed"], "note": record["note"]}})
        record["report"] = str(args.report)
    if args.format == "json":
        print(json.dumps(_json_value(record), indent=2, allow_nan=False))
    else:
        print(_table(record, None if args.wide else TABLE_WIDTH))
    return 1 if result.verdict == "violation" and kind != "planted" else 0


# ---------------------------------------------------------------------------------------------------
# Quick audits for `dpref check`


def _quick_audit(name: str, kind: str, trials: int, seed: int) -> dict:
    """One record of ``quick_audits``: the scenario or planted bug ``name`` at ``trials`` trials."""
    from empirical_dp import audit as audit_module
    from empirical_dp import planted as planted_module

    start = time.perf_counter()
    if kind == "scenario":
        result = audit_module.audit(_scenarios()[name], trials, seed=seed, confidence=QUICK_CONFIDENCE)
    else:
        result = planted_module.audit_planted(name, seed, trials, confidence=QUICK_CONFIDENCE)
    return {
        "name": name, "kind": kind, "claim_type": result.claim_type, "trials": result.trials,
        "claimed_epsilon": result.claimed_epsilon, "claimed_mu": result.claimed_mu,
        "tight_epsilon": result.tight_epsilon, "epsilon_lb": result.epsilon_lb, "gdp_mu_lb": result.gdp_mu_lb,
        "gdp_epsilon_lb": result.gdp_epsilon_lb, "verdict": result.verdict, "decided_by": result.decided_by,
        "margin": result.margin, "false_alarm": result.false_alarm_probability,
        **outcome_fields(kind, result.verdict), "seconds": time.perf_counter() - start,
    }


def quick_audits(seed: int = 0, *, progress: bool = True, workers: int = 1) -> list[dict]:
    """Every shipped scenario at ``QUICK_TRIALS`` trials (``QUICK_TRIALS_BY_SCENARIO`` for whole-run scenarios) and
    every planted bug at its budget (``empirical_dp.planted.PLANTED``) — those whose optional packages are installed
    (``empirical_dp.registry.missing_packages``) — at ``QUICK_CONFIDENCE``: one
    record each (``QUICK_COLUMNS``) with name, kind, claim (``claim_type``, claimed ε and μ), trials, the bounds,
    verdict, the deciding bound (``decided_by``), its ``margin`` over the claim and its ``false_alarm``
    probability, ``expected`` ("consistent" for scenarios, "violation" for planted bugs), ``missed`` (a planted
    bug reported "consistent"), ``ok`` (verdict == expected), ``note`` ("planted bug not caught at this budget"
    when missed) and seconds.

    progress: a bar over the audits on stderr, naming the one running (``dpref check`` shows it; pass False to
    hide it). workers: processes to spread the audits over (forked, so they see the registries as they are;
    each audit's randomness comes from ``seed`` and its name, so the records do not depend on it)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    targets = [(name, "scenario", QUICK_TRIALS_BY_SCENARIO.get(name, QUICK_TRIALS)) for name in list(_scenarios())]
    targets += [(name, "planted", budget) for name, (_, _, budget) in _planted().items()]
    from empirical_dp.registry import missing_packages  # a target needing an extra that is not installed: left out
    targets = [target for target in targets if not missing_packages(target[0])]
    records = []
    with progress_bar(len(targets), "quick audits", "audit", enabled=progress) as bar:
        if workers > 1 and len(targets) > 1 and "fork" in multiprocessing.get_all_start_methods():
            context = multiprocessing.get_context("fork")  # the workers inherit patched registries
            with ProcessPoolExecutor(max_workers=min(workers, len(targets)), mp_context=context) as pool:
                futures = [pool.submit(_quick_audit, name, kind, trials, seed) for name, kind, trials in targets]
                for (name, _, _), future in zip(targets, futures):
                    bar.set_postfix_str(name)
                    records.append(future.result())
                    bar.update()
        else:
            for name, kind, trials in targets:
                bar.set_postfix_str(name)
                records.append(_quick_audit(name, kind, trials, seed))
                bar.update()
    return records


QUICK_COLUMNS = ["name", "kind", "claim_type", "trials", "claimed_epsilon", "claimed_mu", "tight_epsilon",
                 "epsilon_lb", "gdp_mu_lb", "gdp_epsilon_lb", "verdict", "decided_by", "margin", "false_alarm",
                 "expected", "missed", "ok", "note", "seconds"]


def quick_audits_frame(records: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(records, columns=QUICK_COLUMNS)


def run(args) -> int:
    """Run ``dpref audit list|run`` from parsed arguments; returns the exit code (0, 1 or 2)."""
    try:
        if args.audit_command == "list":
            return _list(args)
        if args.audit_command == "run":
            return _run_audit(args)
        raise ValueError(f"unknown audit command {args.audit_command!r}")
    except (ValueError, TypeError) as exc:
        print(f"dpref: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
