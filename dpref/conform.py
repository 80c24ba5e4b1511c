"""``dpref conform accountants``: our accountant beside the installed libraries (docs/accounting.md, Conformance).

    dpref conform accountants [--format table|markdown|csv|json] [--report DIR [--overwrite]] [--libraries NAME ...]
                              [--grid default|small] [--workers N] [--wide] [--quiet | -q]

One row per grid point (z, q, T, δ): our mpmath and float64 RDP ε, our certified PLD interval [``dpref.pld lower``,
``dpref.pld upper``] (it contains the exact ε), the exact ε where q = 1, each library's ε, relative difference, status
and position against our interval (``<library> vs pld``: inside, above or below; prv_accountant's ``eps_lower`` and
estimate too), the RDP-curve agreement with dp_accounting, and the ``unsafe`` / ``loose`` flags with a verdict and an
explanation naming the bound that decided it (``proofs_checks.adapters.conformance``): below our lower bound is an
unsafe underestimate, above our upper bound (PLD/PRV/GDP) merely loose. Libraries that are not installed are
reported, not fatal.

Output. The table (``reference.reporting.render``) fits 120 columns: z, q, T, δ, our mpmath RDP ε, our PLD interval,
the exact ε, and the libraries flagged unsafe or loose; --wide adds our float64 path, every library's ε, relative
difference and position against our interval, and the RDP-curve agreement, in full. Markdown holds the wide columns,
then the flagged points with their explanation. csv and json carry every column. The summary on stderr counts, per
library value, the points inside, above and below our interval and lists every point below it. A missing value — the
exact ε where q < 1, a library that is not installed, not run at that point (the slow libraries run on a sub-grid) or
failed — is ``n/a`` in tables, ``null`` in JSON and empty in CSV; numeric columns hold numbers only (JSON numbers; an infinite ε that a library returns is
"inf", ``reference.reporting``'s spelling, as JSON has no number for it), and the text column ``<library> status`` says
which: ``ok``, ``not installed``, ``not run`` or ``failed`` (the reason is in ``notes``). A summary goes to stderr.

Progress: a bar over the (z, q) groups on stderr (``reference.progress.progress_bar``; whole lines every 10 s when
stderr is not a terminal); --quiet (-q; --no-progress is the former name) hides it.

Refusals are one line on stderr naming the option, exit status 2, checked before anything is computed:
--workers that is not a whole number, below 1 or above the CPUs available to this process (each worker is a process);
--grid or --format not among the choices; a --libraries name that is no library or adapter; --overwrite without
--report; an unknown option; and a --report directory that cannot be used (``reference.reporting.prepare_output_dir``: a path under a regular file, an
unwritable directory, or a non-empty one without --overwrite).

Exit codes: 0 the table was produced (flags on other libraries are findings, reported in the table); 1 our own
accountant is inconsistent — our RDP ε below the exact ε at some q = 1 point or below our certified PLD lower bound,
the exact ε outside our PLD interval, or our RDP curve differing from
dp_accounting's ``RdpAccountant`` by more than 1e-6 relative at an integer order, where both are exact sums;
2 bad usage.
"""

from __future__ import annotations

import argparse
import os
import sys

import pandas as pd

from dpref.parsing import OneLineParser, integer, one_line_errors
from proofs_checks.adapters import LIBRARIES, adapter_names
from proofs_checks.adapters.conformance import DEFAULT_GRID, RDP_REL_TOL, SMALL_GRID, conform_accountants
from proofs_checks.subjects import SubjectError
from reference.reporting import FORMATS, TABLE_WIDTH, prepare_output_dir, render, write_report

__all__ = ["register", "run", "COLUMNS", "wide_columns", "max_workers"]

GRIDS = {"default": DEFAULT_GRID, "small": SMALL_GRID}

#: Short headers of the grid columns in tables.
RENAME = {"noise_multiplier": "z", "sampling_probability": "q", "steps": "T", "delta": "δ"}

#: Columns of the terminal table (fits 120 columns); csv and json carry every column.
COLUMNS = ["z", "q", "T", "δ", "ours_mpmath", "pld lower", "pld upper", "exact", "unsafe", "loose"]
#: Shorter headers of our interval in the compact table (so that the flags keep some room in 120 columns).
COMPACT_RENAME = {"dpref.pld lower": "pld lower", "dpref.pld upper": "pld upper"}


#: Points listed per library in the stderr summary when its value falls on the wrong side of our interval.
SHOWN = 5


def _values(frame: pd.DataFrame) -> list[str]:
    """The library values placed against our interval: each library, and prv_accountant's eps_lower and estimate."""
    names = []
    for lib in adapter_names():
        if lib in frame.columns:
            names.append(lib)
            if lib == "prv_accountant":
                names.extend(c for c in ("prv_accountant.lower", "prv_accountant.estimate") if c in frame.columns)
    return names


def wide_columns(frame: pd.DataFrame) -> list[str]:
    """Columns of --wide tables and Markdown: the grid, ours (RDP and the PLD interval), each library's ε, relative
    difference and position against our interval, the flags."""
    pld = [c for c in ("dpref.pld lower", "dpref.pld upper") if c in frame.columns]
    values = [(v, f"{v} rel" if f"{v} rel" in frame.columns else None, f"{v} vs pld") for v in _values(frame)]
    extra = [c for c in ("rdp_rel_max",) if c in frame.columns]
    return (["z", "q", "T", "δ", "ours_mpmath", "ours_float64", "float64_rel", "exact"] + pld
            + [c for triple in values for c in triple if c is not None and c in frame.columns]
            + extra + ["unsafe", "loose"])


def max_workers() -> int:
    """The CPUs this process may use (its affinity mask where the platform has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def register(subparsers) -> argparse.ArgumentParser:
    """Add ``conform accountants`` to the ``dpref`` sub-command parsers."""
    conform = subparsers.add_parser("conform", help="compare our accountant with other libraries")
    one_line_errors(conform)
    commands = conform.add_subparsers(dest="conform_command", required=True, metavar="{accountants}",
                                      parser_class=OneLineParser)
    accountants = commands.add_parser(
        "accountants",
        help="our RDP accountant and certified PLD interval vs dp_accounting, Opacus, prv_accountant and autodp",
        description=__doc__.split("\n\n")[0],
    )
    accountants.add_argument("--format", default="table", choices=FORMATS)
    accountants.add_argument("--report", default=None, metavar="DIR", help="write csv/json/markdown + manifest")
    accountants.add_argument("--overwrite", action="store_true",
                             help="with --report: write into a non-empty directory, overwriting its files")
    accountants.add_argument(
        "--libraries",
        nargs="+",
        default=None,
        metavar="NAME",
        help=f"libraries or adapters to compare (default all): {', '.join(_known_libraries())}",
    )
    accountants.add_argument("--grid", default="default", choices=sorted(GRIDS), help="grid of (z, q, T, δ)")
    accountants.add_argument(
        "--workers", type=integer, default=None, metavar="N",
        help="processes to use, 1 to the CPU count (default: min(2, CPU count))",
    )
    accountants.add_argument("--wide", action="store_true",
                             help=f"show every library's columns, in full (default: fit {TABLE_WIDTH} columns)")
    accountants.add_argument("--quiet", "-q", action="store_true",
                             help="no progress bar (it goes to stderr; piped, it prints a line every 10 s)")
    accountants.add_argument("--no-progress", dest="quiet", action="store_true", help=argparse.SUPPRESS)  # old name
    return accountants


def _known_libraries() -> list[str]:
    return list(dict.fromkeys(LIBRARIES + adapter_names()))


def _check(args) -> None:
    """Refuse bad options before anything is computed or created (ValueError, one line naming the option)."""
    if args.workers is not None:
        cpus = max_workers()
        if isinstance(args.workers, bool) or not isinstance(args.workers, int) or not 1 <= args.workers <= cpus:
            raise ValueError(f"--workers must be a whole number in [1, {cpus}] (the CPUs available to this process; "
                             f"each worker is a process), got {args.workers}")
    if args.grid not in GRIDS:
        raise ValueError(f"--grid must be one of {', '.join(sorted(GRIDS))}, got {args.grid!r}")
    if args.format not in FORMATS:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)}, got {args.format!r}")
    unknown = [name for name in args.libraries or () if name not in _known_libraries()]
    if unknown:
        raise ValueError(f"--libraries: unknown library or adapter {', '.join(map(repr, unknown))}; "
                         f"known: {', '.join(_known_libraries())}")
    if args.overwrite and not args.report:
        raise ValueError("--overwrite applies only with --report DIR")


def _table(frame: pd.DataFrame, fmt: str, wide: bool) -> str:
    """The terminal table (compact, or every column with --wide) or Markdown (the wide columns + flagged points)."""
    shown = frame.rename(columns=RENAME)
    if fmt == "markdown":
        lines = [render(shown, "markdown", columns=wide_columns(shown)), ""]
        for _, row in frame[frame["verdict"] != "ok"].iterrows():
            lines.append(
                f"- z={row['noise_multiplier']:g}, q={row['sampling_probability']:g}, T={row['steps']}, "
                f"δ={row['delta']:g}: **{row['verdict']}** — {row['explanation']}"
            )
        return "\n".join(lines).rstrip("\n")
    if wide:
        return render(shown, "table", columns=wide_columns(shown), width=None)
    return render(shown.rename(columns=COMPACT_RENAME), "table", columns=COLUMNS, width=TABLE_WIDTH)


def _summary(frame: pd.DataFrame) -> list[str]:
    lines = [f"dpref: {len(frame)} grid points ({frame.attrs.get('slow_points', '?')} for the PLD/PRV libraries)"]
    for name, reason in frame.attrs.get("unavailable", {}).items():
        lines.append(f"  {name}: not installed: {reason}")
    for name in adapter_names():
        column = f"{name} rel"
        if column in frame and frame[column].notna().any():
            worst = frame[column].abs().max()
            lines.append(f"  {name}: max |relative difference| from ours {worst:.2e}")
        status = f"{name} status"
        if status in frame:
            failed = int((frame[status] == "failed").sum())
            if failed:
                lines.append(f"  {name}: failed at {failed} points (see notes)")
    if "dpref.pld status" in frame:
        ok = frame["dpref.pld status"] == "ok"
        widest = frame.loc[ok, "dpref.pld width"].max() if ok.any() else float("nan")
        lines.append(f"  dpref.pld (our certified interval): computed at {int(ok.sum())} of {len(frame)} points, "
                     f"relative width at most {widest:.2e}")
        if "ours vs pld" in frame:
            lines.append("  ours (RDP) vs dpref.pld: " + _positions(frame["ours vs pld"]))
        for value in _values(frame):
            column = f"{value} vs pld"
            if column not in frame or not (frame[column] != "n/a").any():
                continue
            if value == "prv_accountant.estimate":
                lines.append(f"  {value} vs dpref.pld: {_positions(frame[column])} (an estimate, not a bound)")
                continue
            lines.append(f"  {value} vs dpref.pld: {_positions(frame[column])}")
            # a lower bound is wrong above our upper bound; a guarantee is unsafe below our lower bound
            wrong, text, bound = (("above", "ABOVE our upper bound (invalid lower bound)", "dpref.pld upper")
                                  if value == "prv_accountant.lower" else
                                  ("below", "BELOW our lower bound (unsafe underestimate)", "dpref.pld lower"))
            flagged = frame[frame[column] == wrong]
            for _, row in flagged.head(SHOWN).iterrows():
                lines.append(
                    f"    {text}: z={row['noise_multiplier']:g}, q={row['sampling_probability']:g}, "
                    f"T={row['steps']}, δ={row['delta']:g}: {value} = {row[value]:.6g} vs {row[bound]:.6g} "
                    f"({row[f'{value} beyond pld']:+.2e} relative)"
                )
            if len(flagged) > SHOWN:
                lines.append(f"    ... and {len(flagged) - SHOWN} more (the '{column}' column)")
    if "rdp_rel_max" in frame and frame["rdp_rel_max"].notna().any():
        lines.append(
            "  RDP curve vs dp_accounting RdpAccountant: max relative difference "
            f"{frame['rdp_rel_max'].max():.2e} (integer orders {frame['rdp_rel_max_int'].max():.2e})"
        )
    spent = frame.attrs.get("seconds", {})
    if spent:
        lines.append("  seconds (summed over workers): " + ", ".join(f"{k} {v:.1f}" for k, v in spent.items()))
    for flag in ("unsafe", "loose"):
        flagged = frame[frame[flag] != ""]
        if len(flagged):
            names = sorted({n for cell in flagged[flag] for n in cell.split(", ")})
            lines.append(f"  {flag}: {len(flagged)} points ({', '.join(names)})")
    return lines


def _positions(column: pd.Series) -> str:
    counts = column.value_counts()
    return ", ".join(f"{counts.get(k, 0)} {k}" for k in ("inside", "above", "below")) + (
        f" ({counts.get('n/a', 0)} n/a)" if counts.get("n/a", 0) else "")


def _command_line(args) -> str:
    parts = ["dpref conform accountants", f"--grid {args.grid}", f"--format {args.format}"]
    if args.libraries:
        parts.append("--libraries " + " ".join(args.libraries))
    if args.workers is not None:
        parts.append(f"--workers {args.workers}")
    if args.report:
        parts.append(f"--report {args.report}")
        if getattr(args, "overwrite", False):
            parts.append("--overwrite")
    return " ".join(parts)


def run(args) -> int:
    """Run ``dpref conform accountants`` with parsed ``args``; returns the exit code."""
    try:
        _check(args)
        if args.report:
            prepare_output_dir(args.report, overwrite=getattr(args, "overwrite", False), option="--report")
        frame = conform_accountants(
            GRIDS[args.grid], libraries=args.libraries, progress=not getattr(args, "quiet", False), workers=args.workers
        )
    except (SubjectError, ValueError) as exc:
        print(f"dpref: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    if args.format in ("json", "csv"):
        print(render(frame, args.format), end="" if args.format == "csv" else "\n")
    else:
        print(_table(frame, args.format, getattr(args, "wide", False)))
    if args.report:
        write_report(
            frame,
            args.report,
            manifest={
                "command": _command_line(args),
                "grid": args.grid,
                "libraries": frame.attrs.get("versions", {}),
                "unavailable": frame.attrs.get("unavailable", {}),
            },
            name="conformance",
        )
    # The summary goes to stderr so that --format json/csv output stays machine-readable.
    for line in _summary(frame):
        print(line, file=sys.stderr)
    ours_unsafe = frame["unsafe"].str.split(", ").map(lambda names: "ours" in names or "dpref.pld" in names).any()
    integer_orders = frame["rdp_rel_max_int"] if "rdp_rel_max_int" in frame else pd.Series(dtype=float)
    disagree = bool((integer_orders.dropna() > RDP_REL_TOL).any())
    if ours_unsafe or disagree:
        print("dpref: our accountant is inconsistent (see 'ours' / 'dpref.pld' in unsafe, rdp_rel_max_int)",
              file=sys.stderr)
        return 1
    return 0
