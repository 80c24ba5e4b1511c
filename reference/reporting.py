"""Reports: pandas DataFrames rendered to the terminal, Markdown, CSV and JSON, plus a manifest.

A report directory holds ``results.{csv,json,md}`` (or another name: ``audits``, ``soak``, ``conformance``) and
``manifest.json`` with everything needed to rerun.

Output directories are checked before any computation: ``prepare_output_dir(path, overwrite=..., option=...)``
creates the directory (parents too), refuses a non-empty one unless ``overwrite`` (the ``--overwrite`` flag),
and probes that it is writable by creating and deleting a temporary file. It raises ``ValueError`` with one line
naming the option, the path and the reason, which the command line prints as ``dpref: error: ...`` (exit 2).
Call it at the start of a command, before computing, with the same path later given to ``write_report``.

Manifest schema, version ``MANIFEST_SCHEMA_VERSION`` = 1 (``manifest.json``, a JSON object):

* ``schema_version``: 1 (an integer; raised when a field changes meaning or is removed).
* ``created``: UTC time, ISO 8601.
* ``platform``: ``python`` (version), ``implementation``, ``os``, ``os_release``, ``machine``.
* ``versions``: python, platform and the installed versions of dpref, numpy, scipy, mpmath, statsmodels,
  pandas, hypothesis ("not installed" when absent).
* ``files``: the files written in the directory by this command.
* ``seeds`` (when the rows carry a ``seed`` column): ``column`` and the ``distinct`` seeds used (one per row
  in that column).
* then the command's own fields; every command gives ``command`` (its command line) and most a ``budget``.

JSON (``to_records``, ``render(..., "json")``, the ``.json`` files): numbers are JSON numbers (numpy and
mpmath scalars converted), missing values (None, NaN, NaT) are ``null``, and the infinities, which JSON has no
number for, are the strings ``"inf"`` and ``"-inf"``. No report column holds a high-precision value (the mpmath
results are converted to float before they reach a frame), so there are no decimal-string fields; an mpmath or
Decimal value that does reach ``to_records`` is written as a float.

Shared by every layer that writes reports (``empirical_dp.report``, ``proofs_checks``, the ``dpref`` command
line), so it lives here, at the bottom: ``reference`` imports nothing of ours.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import math
import numbers
import os
import platform
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import pandas as pd

__all__ = ["FORMATS", "MANIFEST_SCHEMA_VERSION", "MISSING", "TABLE_WIDTH", "platform_info", "prepare_output_dir", "render", "to_records",
           "versions", "write_report"]

FORMATS = ("table", "markdown", "csv", "json")

#: Version of the ``manifest.json`` schema described in the module docstring.
MANIFEST_SCHEMA_VERSION = 1


def prepare_output_dir(path: str | os.PathLike, *, overwrite: bool = False, option: str = "--report") -> Path:
    """Create the output directory ``path`` (parents too) and check, before any computation, that it can be written.

    Refuses, with a one-line ``ValueError`` naming ``option`` and the path: a path that exists and is not a
    directory, one that cannot be created (under a regular file, no permission), a non-empty directory unless
    ``overwrite`` (the existing files would be overwritten and the manifest would describe another command), and
    a directory in which a temporary file cannot be created and deleted. Returns the directory as a ``Path``.
    """
    directory = Path(path)
    where = f"{option} {str(path)!r}"
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"{where}: exists and is not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        if isinstance(exc, (FileExistsError, NotADirectoryError)):
            reason = "a part of the path is a file, not a directory"
        raise ValueError(f"{where}: cannot create the directory: {reason}") from None
    if not directory.is_dir():
        raise ValueError(f"{where}: cannot create the directory: a part of the path is a file, not a directory")
    try:
        non_empty = any(directory.iterdir())
    except OSError as exc:
        raise ValueError(f"{where}: cannot list the directory: {exc.strerror or type(exc).__name__}") from None
    if non_empty and not overwrite:
        raise ValueError(f"{where}: the directory is not empty (its files would be overwritten); "
                         "choose an empty or new directory, or pass --overwrite")
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".dpref-write-probe-"):
            pass
    except OSError as exc:
        raise ValueError(f"{where}: the directory is not writable: {exc.strerror or type(exc).__name__}") from None
    return directory


def _json_safe(value):
    """A value json.dumps writes as JSON: numbers as numbers, missing as None, ±inf as "inf"/"-inf"."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict)):  # numpy scalars
        try:
            value = value.item()
        except (TypeError, ValueError):
            pass
    if isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, (numbers.Real, decimal.Decimal)) or type(value).__name__ == "mpf":
        value = float(value)  # Decimal, Fraction, mpmath mpf
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return value


def to_records(frame: pd.DataFrame) -> list[dict]:
    """The rows of ``frame`` as JSON-ready dicts (see the module docstring: numbers, null, "inf")."""
    records = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    return [{k: _json_safe(v) for k, v in rec.items()} for rec in records]


#: How a missing value (None, NaN) is written in tables and Markdown; JSON writes ``null``, CSV an empty field.
MISSING = "n/a"

#: Default width of a terminal table; ``width=None`` (the command line's ``--wide``) shows every cell in full.
TABLE_WIDTH = 120

_ELLIPSIS = "…"
_MIN_CUT = 24  # a shortened column keeps at least this many characters


def _cell(value) -> str:
    """A table cell: floats to 4 significant digits, missing values as ``MISSING``, lists joined by commas."""
    if isinstance(value, (list, tuple)):
        return ", ".join(_cell(v) for v in value)
    value = _json_safe(value)
    if value is None:
        return MISSING
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _fit(cells: pd.DataFrame, width: int | None) -> pd.DataFrame:
    """Shorten the widest columns (ending their cells in "…") until a row fits ``width`` characters.

    Column widths are max(header, cells); two spaces separate columns. A column is never cut below its header
    or ``_MIN_CUT`` characters, so a very narrow ``width`` may still be exceeded (the table is then as narrow as it gets).
    """
    if width is None:
        return cells
    widths = {c: max([len(str(c))] + [len(v) for v in cells[c]]) for c in cells.columns}
    floor = {c: min(widths[c], max(len(str(c)), _MIN_CUT)) for c in cells.columns}

    def total():
        return sum(widths.values()) + 2 * (len(widths) - 1)

    while total() > width:
        cuttable = [c for c in widths if widths[c] > floor[c]]
        if not cuttable:
            break
        widest = max(cuttable, key=lambda c: widths[c])
        widths[widest] = max(floor[widest], widths[widest] - (total() - width))
    return cells.apply(lambda column: column.map(
        lambda v: v if len(v) <= widths[column.name] else v[: widths[column.name] - 1] + _ELLIPSIS))


def render(frame: pd.DataFrame, fmt: str, *, columns: list[str] | None = None, width: int | None = TABLE_WIDTH) -> str:
    """Render ``frame`` as ``table`` (terminal), ``markdown``, ``csv`` or ``json`` (list of records).

    table and markdown show ``columns`` (default all) with missing values as ``MISSING``; a table is cut to
    ``width`` characters by shortening its widest text columns (``width=None``: in full). csv and json hold
    every column (json: see the module docstring).
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    if fmt == "json":
        return json.dumps(to_records(frame), indent=2, default=str)
    if fmt == "csv":
        return frame.to_csv(index=False)
    shown = frame[columns] if columns else frame
    cells = shown.astype(object).apply(lambda column: column.map(_cell)) if len(shown) else shown.astype(str)
    if fmt == "markdown":
        return cells.to_markdown(index=False)
    cells = _fit(cells, width)
    numeric = {c for c in shown.columns if pd.api.types.is_numeric_dtype(shown[c].dtype)}
    widths = {c: max([len(str(c))] + [len(v) for v in cells[c]]) for c in cells.columns}

    def line(values):  # numbers right-aligned, text left-aligned
        return "  ".join(v.rjust(widths[c]) if c in numeric else v.ljust(widths[c])
                         for c, v in zip(cells.columns, values)).rstrip()

    return "\n".join([line([str(c) for c in cells.columns])] + [line(row) for row in cells.itertuples(index=False)])


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for package in ("dpref", "numpy", "scipy", "mpmath", "statsmodels", "pandas", "hypothesis"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = "not installed"
    return out


def platform_info() -> dict[str, str]:
    """The manifest's ``platform``: Python version and implementation, operating system, release, machine."""
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "os": platform.system(), "os_release": platform.release(), "machine": platform.machine()}


def _seeds(frame: pd.DataFrame) -> dict | None:
    if "seed" not in frame.columns:
        return None
    distinct = sorted({_json_safe(v) for v in frame["seed"].dropna()}, key=str)
    return {"column": "seed", "distinct": distinct}


def write_report(frame: pd.DataFrame, directory: str | Path, *, manifest: dict, name: str = "results") -> Path:
    """Write ``{name}.csv/.json/.md`` and ``manifest.json`` into ``directory`` (created if needed).

    Check the directory first, before computing, with ``prepare_output_dir``. When ``manifest.json`` already
    holds the same ``command`` (one command writing two reports, as ``dpref check`` does), its ``files`` are kept.
    """
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    written = [f"{name}.csv", f"{name}.json", f"{name}.md"]
    (path / written[0]).write_text(render(frame, "csv"))
    (path / written[1]).write_text(render(frame, "json"))
    (path / written[2]).write_text(render(frame, "markdown") + "\n")
    files = set(written) | {"manifest.json"}
    try:
        previous = json.loads((path / "manifest.json").read_text())
        if isinstance(previous, dict) and "command" in manifest and previous.get("command") == manifest["command"]:
            files |= set(previous.get("files", []))
    except (OSError, ValueError):
        pass
    full_manifest = {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "platform": platform_info(),
        "versions": versions(),
        "files": sorted(files),
    }
    seeds = _seeds(frame)
    if seeds is not None:
        full_manifest["seeds"] = seeds
    full_manifest.update(manifest)
    (path / "manifest.json").write_text(json.dumps(full_manifest, indent=2, default=str))
    return path
