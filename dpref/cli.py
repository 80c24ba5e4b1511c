"""The ``dpref`` command line (docs/index.md lists the guides).

    dpref claims list   [--paper P] [--kind K] [--id ID] [--subject S] [--format F]
    dpref claims run    [--paper P] [--kind K] [--id ID] [--subject S ...] [--budget quick|full]
                        [--soak N [--level L]] [--workers N] [--format F] [--report DIR [--overwrite]] [--quiet]
    dpref check         quick claims on reference and fast, and quick audits; exit 1 on any violation
                        [--workers N] [--format F] [--report DIR [--overwrite]] [--quiet]
    dpref account epsilon|delta|sigma ...   privacy accounting (see dpref/account.py)
    dpref conform accountants ...     our accountant beside dp_accounting, Opacus, prv_accountant, autodp
    dpref audit list|run ...          empirical privacy audits (see dpref/audit.py)
    dpref run ALGORITHM ...           run an algorithm on a built-in problem; what it publishes out (reference/runner.py)
    dpref cite [--paper KEY] [--format bibtex|text]   how to cite dpref or a paper (dpref/cite.py)

Exit codes: 0 all verdicts pass/erratum-confirmed/borrowed (for --soak: every claim calibrated), 1 a claim
failed or errored (for --soak: a run errored or a false-alarm rate is significantly above the level), 2 bad usage.

Bad usage prints one line, ``dpref: error: <reason>``, on stderr. A --report directory is created and checked
before anything is computed (``reference.reporting.prepare_output_dir``): a path under a regular file, an unwritable
directory or a non-empty one (without --overwrite) is bad usage.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import warnings
from collections.abc import Sequence

import pandas as pd

from dpref import account, audit, cite, conform
from dpref import run as run_command
from dpref.parsing import integer
from proofs_checks.claim import BORROWED, BUDGETS, HOLDS, KINDS, PAPERS, PASS
from proofs_checks.claims_index import listing_records, load_index
from proofs_checks.registry import load_claims, nearest_ids, select
from reference.reporting import FORMATS, TABLE_WIDTH, prepare_output_dir, render, to_records, write_report
from proofs_checks.protocols import SubjectError


# The runner and the subjects import SciPy, statsmodels and the whole reference: imported when a command needs
# them, so that `dpref claims list`, `audit list` and `--help` answer fast. Module-level names, so tests can
# replace them.
def run_claims(*args, **kwargs):
    from proofs_checks.runner import run_claims as run

    return run(*args, **kwargs)


def soak(*args, **kwargs):
    from proofs_checks.runner import soak as run

    return run(*args, **kwargs)


def resolve_subject(spec):
    from proofs_checks.subjects import resolve_subject as resolve

    return resolve(spec)

OVERWRITE_HELP = "with --report: write into a non-empty directory, overwriting its files (refused otherwise)"

RUN_COLUMNS = ["id", "subject", "verdict", "why"]
#: With --wide: the numbers behind each verdict as well.
RUN_COLUMNS_WIDE = ["id", "subject", "verdict", "statistic", "bound", "p_adjusted", "relative_mde", "seconds", "why"]
WIDE_HELP = "show tables in full (default: cut to 120 columns)"
QUIET_HELP = "no progress bar (it goes to stderr; piped, it prints a line every 10 s)"

# An option value such as "-1e-5" looks like an option to argparse (its negative-number rule knows only
# plain decimals), which then reports "expected one argument"; ``_join_negative_values`` passes it on as a value.
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)


def _join_negative_values(argv: list[str]) -> list[str]:
    """``--delta -1e-5`` → ``--delta=-1e-5``, so that argparse hands the value to the option's own check."""
    out: list[str] = []
    for token in argv:
        previous = out[-1] if out else ""
        if (_NEGATIVE_NUMBER.match(token) and previous.startswith("--") and "=" not in previous
                and previous != "--"):
            out[-1] = f"{previous}={token}"
        else:
            out.append(token)
    return out


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings reach the user as ``dpref: warning: <message>`` on one line, without source paths."""
    text = " ".join(str(message).split())
    print(f"dpref: warning: {text}", file=file if file is not None else sys.stderr)


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wide", action="store_true", help=WIDE_HELP)
    parser.add_argument("--quiet", "-q", action="store_true", help=QUIET_HELP)
    parser.add_argument("--no-progress", dest="quiet", action="store_true", help=argparse.SUPPRESS)


def _add_selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--paper", action="append", default=[], choices=PAPERS, help="paper key (repeatable)")
    parser.add_argument("--kind", action="append", default=[], choices=KINDS, help="claim kind (repeatable)")
    parser.add_argument("--id", action="append", default=[], dest="ids", help="claim id or id prefix (repeatable)")
    parser.add_argument("--format", default="table", choices=FORMATS)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dpref")
    except PackageNotFoundError:  # run from a checkout without installing
        return "unknown (not installed)"


def _describe(parser: argparse.ArgumentParser) -> None:
    """Give every sub-command its one-line help as its ``--help`` description (argparse leaves it empty)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                sub = action.choices[choice.dest]
                if not sub.description:
                    sub.description = choice.help
                _describe(sub)


def _empty_selection(args) -> str:
    """Why a selection is empty, with the nearest ids for each --id that matches nothing."""
    claims = load_claims()
    parts = []
    for wanted in args.ids:
        if not select(claims, ids=[wanted]):
            near = nearest_ids(claims, wanted)
            parts.append(f"--id {wanted!r} matches no claim id or id prefix"
                         + (f" (nearest: {', '.join(near)})" if near else ""))
    return "; ".join(parts) or "no claim matches the selection (--paper/--kind/--id)"


WORKERS_HELP = "processes to run the checks in; the results do not depend on it"
#: ``dpref check`` uses the cores available up to this many (its time limit is stated for 2 cores).
MAX_DEFAULT_WORKERS = 2
#: Above this, --workers is refused (each worker holds the claim modules in memory).
MAX_WORKERS = 64


def default_workers() -> int:
    """The cores this process may run on (``os.sched_getaffinity``), at most ``MAX_DEFAULT_WORKERS``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_DEFAULT_WORKERS, cores))


def _check_workers_option(value) -> None:
    if value is not None and not 1 <= value <= MAX_WORKERS:
        raise ValueError(f"--workers must lie in [1, {MAX_WORKERS}], got {value}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dpref", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"dpref {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)

    claims = commands.add_parser("claims", help="list or run executable claims")
    claim_commands = claims.add_subparsers(dest="claims_command", required=True)
    list_parser = claim_commands.add_parser("list", help="list claims")
    _add_selection(list_parser)
    list_parser.add_argument("--subject", default=None, help="only claims that apply to this subject")
    list_parser.add_argument("--wide", action="store_true", help=WIDE_HELP)

    run_parser = claim_commands.add_parser("run", help="run claims on subjects")
    _add_selection(run_parser)
    run_parser.add_argument(
        "--subject",
        action="append",
        default=[],
        help="reference, fast or module:attr (repeatable; default: reference and fast)",
    )
    run_parser.add_argument("--budget", default="quick", choices=sorted(BUDGETS))
    run_parser.add_argument("--soak", type=int, default=0, metavar="N",
                            help="calibration: rerun the statistical claims N times with fresh seeds")
    run_parser.add_argument("--level", type=float, default=None, metavar="L",
                            help="with --soak: decide every run at this false-alarm level (default: each claim's)")
    run_parser.add_argument("--report", default=None, metavar="DIR", help="write csv/json/markdown + manifest")
    run_parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    run_parser.add_argument("--workers", type=integer, default=1, metavar="N", help=WORKERS_HELP + " (default 1)")
    _add_output_options(run_parser)

    account.register(commands)
    conform.register(commands)
    audit.register(commands)
    run_command.register(commands)
    cite.register(commands)

    check = commands.add_parser("check", help="quick claims and quick audits; exit 1 on any violation")
    check.add_argument("--format", default="table", choices=FORMATS)
    check.add_argument("--report", default=None, metavar="DIR", help="write csv/json/markdown + manifest")
    check.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    check.add_argument("--workers", type=integer, default=None, metavar="N",
                       help=WORKERS_HELP + f" (default: the cores available, at most {MAX_DEFAULT_WORKERS})")
    _add_output_options(check)
    _describe(parser)
    return parser


def _listed(args) -> list[dict]:
    """The listing records of the selected claims: from the generated index when it is fresh and no --subject is
    given (no claim module is imported), else from the registry. Refuses an empty selection like ``select``."""
    records = None if args.subject else load_index()
    if records is None:
        claims = select(load_claims(), papers=args.paper, kinds=args.kind, ids=args.ids)
        if args.subject:
            subject = resolve_subject(args.subject)
            claims = [c for c in claims if c.applies_to(subject)]
        records = listing_records(claims)
    else:
        records = [r for r in records
                   if (not args.paper or r["paper"] in args.paper) and (not args.kind or r["kind"] in args.kind)
                   and (not args.ids or any(r["id"] == i or r["id"].startswith(i + ".") for i in args.ids))]
    if not records:
        raise ValueError(_empty_selection(args))
    return records


def _claims_list(args) -> int:
    records = _listed(args)
    if args.format == "json":
        print(json.dumps(records, indent=2, ensure_ascii=False))
        return 0
    frame = pd.DataFrame(records, columns=["id", "paper", "location", "kind", "erratum", "statement", "requires", "mutants"])
    frame["mutants"] = frame["mutants"].map(lambda ms: ", ".join(m["name"] for m in ms))
    frame["requires"] = frame["requires"].map(", ".join)
    print(render(frame, args.format, columns=["id", "kind", "location", "mutants"], width=_width(args)))
    return 0


def _width(args) -> int | None:
    return None if getattr(args, "wide", False) else TABLE_WIDTH


def _soak(claims, subjects, budget, fmt, report, progress, runs, level, command, width) -> int:
    frame = soak(claims, subjects, budget, runs=runs, level=level, progress=progress)
    print(render(frame, fmt, width=width))
    if report:
        write_report(frame, report, manifest={"command": command, "budget": budget, "soak": runs, "level": level,
                                              "pooled_uniformity_p": frame.attrs["pooled_uniformity_p"]}, name="soak")
    statistical = frame[frame["statistical"]]
    bad = frame[~frame["calibrated"]]
    pooled = frame.attrs["pooled_uniformity_p"]
    print(f"dpref: soak of {len(statistical)} statistical claim checks x {runs} runs "
          f"({len(frame) - len(statistical)} deterministic, run once); {len(bad)} not calibrated; pooled uniformity "
          f"test of {frame.attrs['pooled_p_values']} p-values: p = " + ("n/a" if pooled is None else f"{pooled:.3g}"),
          file=sys.stderr)
    for _, row in bad.iterrows():
        print(f"  not calibrated: {row['id']} on {row['subject']}: {row['false_alarms']} false alarms and "
              f"{row['errors']} errors in {row['runs']} runs at level {row['level']:g} (95 % interval "
              f"[{row['rate_lower']:.3g}, {row['rate_upper']:.3g}])", file=sys.stderr)
    return 1 if len(bad) else 0


def _summary(frame) -> str:
    """Verdict counts, with the passes on fast (and other non-reference subjects) that ran their own code."""
    counts = frame["verdict"].value_counts().to_dict()
    parts = []
    for verdict, count in counts.items():
        text = f"{count} {verdict}"
        if verdict == PASS:
            own = int(((frame["verdict"] == PASS) & (frame["subject"] != "reference")).sum())
            text += f" ({own} of them on a subject's own code, not the reference)"
        if verdict == BORROWED:
            text += " (a subject ran only reference code it borrows: not counted as its pass)"
        parts.append(text)
    return ", ".join(parts)


def _run(claims, subjects, budget, fmt, report, progress, soak_runs=0, command="", level=None,
         width: int | None = TABLE_WIDTH, workers: int = 1) -> int:
    if not claims:
        print("no claims selected (or none applies to the chosen subjects)", file=sys.stderr)
        return 2
    if soak_runs:
        return _soak(claims, subjects, budget, fmt, report, progress, soak_runs, level, command, width)
    frame = run_claims(claims, subjects, budget, progress=progress, workers=workers)
    if fmt == "json":
        keep = ["id", "subject", "verdict", "statistic", "bound", "p_value", "p_adjusted", "level", "seed", "seconds",
                "mde", "relative_mde", "mde_target", "power", "why", "detail"]
        print(json.dumps(to_records(frame[keep]), indent=2))
    else:
        print(render(frame, fmt, columns=RUN_COLUMNS if width is not None else RUN_COLUMNS_WIDE, width=width))
    if report:
        write_report(frame, report, manifest={"command": command, "budget": budget})
    bad = frame[~frame["verdict"].isin(HOLDS)]
    # The summary goes to stderr so that --format json/csv output stays machine-readable.
    print(f"dpref: {len(frame)} checks, {_summary(frame)}", file=sys.stderr)
    for _, row in bad.iterrows():
        print(f"  {row['verdict']}: {row['id']} on {row['subject']}: {row['detail']}", file=sys.stderr)
    return 1 if len(bad) else 0


def _check_audits(fmt, report, command, width, progress, workers=1) -> int:
    """``dpref check``'s audit part: every shipped scenario must come out "consistent" and every planted bug
    "violation" (``audit.quick_audits``); exit 1 otherwise. The table goes to stdout for table/markdown and to
    stderr for json/csv, which keeps the claims output machine-readable."""
    frame = audit.quick_audits_frame(audit.quick_audits(progress=progress, workers=workers))
    out = sys.stdout if fmt in ("table", "markdown") else sys.stderr
    print(render(frame, "markdown" if fmt == "markdown" else "table", width=width), file=out)
    if report:
        write_report(frame, report, manifest={"command": command, "budget": "quick"}, name="audits")
    bad = frame[~frame["ok"]]
    print(f"dpref: {len(frame)} audits, {len(frame) - len(bad)} as expected", file=sys.stderr)
    for _, row in bad.iterrows():
        print(f"  audit {row['name']} ({row['kind']}): verdict {row['verdict']}, expected {row['expected']}",
              file=sys.stderr)
    return 1 if len(bad) else 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # `dpref claims list | head`: the reader left; say nothing more (Python docs' recipe)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(_join_negative_values(argv))
    command = "dpref " + " ".join(argv)
    # Libraries that log (dp_accounting through absl) get the same one-line form; set before they configure
    # the root logger themselves, which then is a no-op.
    logging.basicConfig(format="dpref: warning: %(name)s: %(message)s", level=logging.WARNING)
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        return _dispatch(parser, args, command)


def _dispatch(parser: argparse.ArgumentParser, args, command: str) -> int:
    try:
        if args.command == "claims" and args.claims_command == "list":
            return _claims_list(args)
        if args.command == "claims" and args.claims_command == "run":
            _check_workers_option(args.workers)
            if args.soak < 0:
                parser.error("--soak must be >= 0")
            if args.level is not None and not args.soak:
                parser.error("--level applies to --soak runs only")
            if args.level is not None and not 0.0 < args.level < 1.0:
                parser.error(f"--level must lie in (0, 1), got {args.level}")
            if args.report:
                prepare_output_dir(args.report, overwrite=args.overwrite, option="--report")
            subjects = [resolve_subject(s) for s in (args.subject or ["reference", "fast"])]
            claims = select(load_claims(), papers=args.paper, kinds=args.kind, ids=args.ids)
            if not claims:
                raise ValueError(_empty_selection(args))
            return _run(claims, subjects, args.budget, args.format, args.report, not args.quiet, args.soak, command,
                        args.level, _width(args), args.workers)
        if args.command == "account":
            return account.run(args)
        if args.command == "conform":
            return conform.run(args)
        if args.command == "audit":
            return audit.run(args)
        if args.command == "cite":
            return cite.run(args)
        if args.command == "run":
            return run_command.run(args, command)
        if args.command == "check":
            _check_workers_option(args.workers)
            if args.report:
                prepare_output_dir(args.report, overwrite=args.overwrite, option="--report")
            subjects = [resolve_subject("reference"), resolve_subject("fast")]
            workers = default_workers() if args.workers is None else args.workers
            code = _run(load_claims(), subjects, "quick", args.format, args.report, not args.quiet, 0, command,
                        width=_width(args), workers=workers)
            return max(code, _check_audits(args.format, args.report, command, _width(args), not args.quiet, workers))
    except (SubjectError, ValueError) as exc:
        print(f"dpref: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise  # handled by main
    except OSError as exc:  # e.g. a report directory that became unwritable after the check at the start
        print(f"dpref: error: {exc}", file=sys.stderr)
        return 2
    parser.error("unknown command")
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
