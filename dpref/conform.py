"""``dpref conform accountants``: our accountant beside the installed libraries (docs/accounting.md, Conformance).

    dpref conform accountants [--format table|markdown|csv|json] [--report DIR [--overwrite]] [--libraries NAME ...]
                              [--grid default|small] [--workers N] [--no-progress]

Prints one row per grid point (z, q, T, δ): our mpmath and float64 RDP ε, the exact ε where q = 1, each library's ε
and relative difference, the RDP-curve agreement with dp_accounting, and the ``unsafe`` / ``loose`` flags with a
verdict and explanation (``proofs_checks.adapters.conformance``). Libraries that are not installed are reported, not
fatal. The --report directory is created and checked before computing (``reference.reporting.prepare_output_dir``):
a path under a regular file, an unwritable directory or a non-empty one without --overwrite is bad usage.

Exit codes: 0 the table was produced (flags on other libraries are findings, reported in the table); 1 our own
accountant is inconsistent — our RDP ε below the exact ε at some q = 1 point, or our RDP curve differing from
dp_accounting's ``RdpAccountant`` by more than 1e-6 relative at an integer order, where both are exact sums;
2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

import pandas as pd

from proofs_checks.adapters import LIBRARIES, adapter_names
from proofs_checks.adapters.conformance import DEFAULT_GRID, RDP_REL_TOL, SMALL_GRID, conform_accountants
from proofs_checks.subjects import SubjectError
from reference.reporting import FORMATS, prepare_output_dir, render, to_records, write_report

__all__ = ["register", "run"]

GRIDS = {"default": DEFAULT_GRID, "small": SMALL_GRID}

#: Columns shown by the terminal and Markdown renderings (csv/json carry every column).
SHOWN = ["noise_multiplier", "sampling_probability", "steps", "delta", "ours_mpmath", "ours_float64", "exact"]


def register(subparsers) -> argparse.ArgumentParser:
    """Add ``conform accountants`` to the ``dpref`` sub-command parsers."""
    conform = subparsers.add_parser("conform", help="compare our accountant with other libraries")
    commands = conform.add_subparsers(dest="conform_command", required=True)
    accountants = commands.add_parser(
        "accountants",
        help="our RDP accountant vs dp_accounting, Opacus, prv_accountant and autodp, side by side",
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
        help=f"libraries or adapters to compare (default all): {', '.join(dict.fromkeys(LIBRARIES + adapter_names()))}",
    )
    accountants.add_argument("--grid", default="default", choices=sorted(GRIDS), help="grid of (z, q, T, δ)")
    accountants.add_argument(
        "--workers", type=int, default=None, metavar="N", help="processes to use (default: min(2, CPU count))"
    )
    accountants.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return accountants


def _display(frame: pd.DataFrame) -> pd.DataFrame:
    """Rounded, readable columns for the terminal and Markdown: ε to 6 digits, relative differences to 2."""
    libraries = [c for c in frame.columns if c in adapter_names()]
    extra = [c for c in ("rdp_rel_max",) if c in frame.columns]
    shown = frame[SHOWN + [c for lib in libraries for c in (lib, f"{lib} rel")] + extra + ["verdict"]].copy()

    def eps(v):
        if isinstance(v, str):
            return v
        return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.6g}"

    def rel(v):
        return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:+.1e}"

    for column in shown.columns:
        if column.endswith(" rel") or column in ("rdp_rel_max",):
            shown[column] = shown[column].map(rel)
        elif column in ("ours_mpmath", "ours_float64", "exact") or column in libraries:
            shown[column] = shown[column].map(eps)
    shown = shown.rename(columns={"noise_multiplier": "z", "sampling_probability": "q", "steps": "T", "delta": "δ"})
    return shown


def _summary(frame: pd.DataFrame) -> list[str]:
    lines = [f"dpref: {len(frame)} grid points ({frame.attrs.get('slow_points', '?')} for the PLD/PRV libraries)"]
    for name, reason in frame.attrs.get("unavailable", {}).items():
        lines.append(f"  {name}: not installed: {reason}")
    for name in adapter_names():
        column = f"{name} rel"
        if column in frame and frame[column].notna().any():
            worst = frame[column].abs().max()
            lines.append(f"  {name}: max |relative difference| from ours {worst:.2e}")
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


def _command_line(args) -> str:
    parts = ["dpref conform accountants", f"--grid {args.grid}", f"--format {args.format}"]
    if args.libraries:
        parts.append("--libraries " + " ".join(args.libraries))
    if args.report:
        parts.append(f"--report {args.report}")
        if getattr(args, "overwrite", False):
            parts.append("--overwrite")
    return " ".join(parts)


def run(args) -> int:
    """Run ``dpref conform accountants`` with parsed ``args``; returns the exit code."""
    try:
        if args.workers is not None and args.workers < 1:
            raise SubjectError("--workers must be >= 1")
        if args.report:
            prepare_output_dir(args.report, overwrite=getattr(args, "overwrite", False), option="--report")
        frame = conform_accountants(
            GRIDS[args.grid], libraries=args.libraries, progress=not args.no_progress, workers=args.workers
        )
    except (SubjectError, ValueError) as exc:
        print(f"dpref: error: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(to_records(frame), indent=2, default=str))
    elif args.format == "csv":
        print(render(frame, "csv"), end="")
    else:
        shown = _display(frame)
        if args.format == "markdown":  # keep our number formatting (tabulate would re-parse the strings)
            print(shown.to_markdown(index=False, disable_numparse=True))
        else:
            with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 250):
                print(shown.to_string(index=False))
        if args.format == "markdown":
            print()
            for _, row in frame[frame["verdict"] != "ok"].iterrows():
                print(
                    f"- z={row['noise_multiplier']:g}, q={row['sampling_probability']:g}, T={row['steps']}, "
                    f"δ={row['delta']:g}: **{row['verdict']}** — {row['explanation']}"
                )
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
    ours_unsafe = frame["unsafe"].str.split(", ").map(lambda names: "ours" in names).any()
    integer_orders = frame["rdp_rel_max_int"] if "rdp_rel_max_int" in frame else pd.Series(dtype=float)
    disagree = bool((integer_orders.dropna() > RDP_REL_TOL).any())
    if ours_unsafe or disagree:
        print("dpref: our accountant is inconsistent (see 'ours' in unsafe / rdp_rel_max_int)", file=sys.stderr)
        return 1
    return 0
