"""Reports: pandas DataFrames rendered to the terminal, Markdown, CSV and JSON, plus a manifest.

A report directory holds ``results.{csv,json,md}`` and ``manifest.json`` with everything needed to
rerun: command line, budget, seeds (in the rows), package versions and the time.

Shared by every layer that writes reports (``empirical_dp.report``, ``proofs_checks``, the ``dpref`` command
line), so it lives here, at the bottom: ``reference`` imports nothing of ours.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import platform
import sys
from importlib import metadata
from pathlib import Path

import pandas as pd

__all__ = ["FORMATS", "render", "to_records", "versions", "write_report"]

FORMATS = ("table", "markdown", "csv", "json")


def _json_safe(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def to_records(frame: pd.DataFrame) -> list[dict]:
    records = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    return [{k: _json_safe(v) for k, v in rec.items()} for rec in records]


def render(frame: pd.DataFrame, fmt: str, *, columns: list[str] | None = None) -> str:
    """Render ``frame`` as ``table`` (terminal), ``markdown``, ``csv`` or ``json`` (list of records)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    if fmt == "json":
        return json.dumps(to_records(frame), indent=2, default=str)
    if fmt == "csv":
        return frame.to_csv(index=False)
    shown = frame[columns] if columns else frame
    if fmt == "markdown":
        return shown.to_markdown(index=False, floatfmt=".4g")
    with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200,
                           "display.max_colwidth", 60):
        return shown.to_string(index=False, float_format=lambda v: f"{v:.4g}")


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for package in ("dpref", "numpy", "scipy", "mpmath", "statsmodels", "pandas", "hypothesis"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = "not installed"
    return out


def write_report(frame: pd.DataFrame, directory: str | Path, *, manifest: dict, name: str = "results") -> Path:
    """Write ``{name}.csv/.json/.md`` and ``manifest.json`` into ``directory`` (created if needed)."""
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    (path / f"{name}.csv").write_text(render(frame, "csv"))
    (path / f"{name}.json").write_text(render(frame, "json"))
    (path / f"{name}.md").write_text(render(frame, "markdown") + "\n")
    full_manifest = {
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": versions(),
        **manifest,
    }
    (path / "manifest.json").write_text(json.dumps(full_manifest, indent=2, default=str))
    return path
