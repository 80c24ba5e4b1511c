"""Command-line conventions: --version, a description for every sub-command, empty selections explained with the
nearest ids, and a string where a list of ids is expected refused."""

from __future__ import annotations

import argparse

import pytest

from dpref import cli
from proofs_checks.registry import load_claims, nearest_ids, select


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("dpref ")


def _subparsers(parser, path=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield path + (name,), sub
                yield from _subparsers(sub, path + (name,))


def test_every_sub_command_has_a_description():
    missing = [" ".join(path) for path, sub in _subparsers(cli.build_parser()) if not sub.description]
    assert not missing, missing


@pytest.mark.parametrize("command", ["list", "run"])
def test_an_empty_selection_names_the_nearest_ids(capsys, command):
    code = cli.main(["claims", command, "--id", "zo_o2nc.lemma3", "--no-progress"] if command == "run"
                    else ["claims", command, "--id", "zo_o2nc.lemma3"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--id 'zo_o2nc.lemma3' matches no claim id or id prefix (nearest: " in err and "zo_o2nc.lemma3_1" in err


def test_nothing_near_says_so(capsys):
    assert cli.main(["claims", "list", "--id", "qqqqqq"]) == 2
    assert "--id 'qqqqqq' matches no claim id or id prefix" in capsys.readouterr().err


def test_select_refuses_a_bare_string():
    claims = load_claims()
    with pytest.raises(TypeError, match=r"ids must be a list of strings, got the string 'zo_o2nc'; write \['zo_o2nc'\]"):
        select(claims, ids="zo_o2nc")
    assert select(claims, ids=["zo_o2nc.lemma3_1"])
    assert "zo_o2nc.lemma3_1" in nearest_ids(claims, "zo_o2nc.lemma3")


# ---- readable output: 120 columns, --wide, one spelling of missing values, verdicts in words, warnings, progress

import io
import json
import warnings

import numpy as np
import pandas as pd

from proofs_checks.runner import explain
from reference import progress
from reference.reporting import MISSING, TABLE_WIDTH, render


def _width(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_claims_list_fits_120_columns_and_wide_shows_all(capsys):
    assert cli.main(["claims", "list"]) == 0
    narrow = capsys.readouterr().out
    assert _width(narrow) <= TABLE_WIDTH
    assert cli.main(["claims", "list", "--wide"]) == 0
    wide = capsys.readouterr().out
    assert _width(wide) > TABLE_WIDTH and "…" not in wide
    assert len(narrow.splitlines()) == len(wide.splitlines()) == len(load_claims()) + 1


def test_render_spells_missing_values_once():
    frame = pd.DataFrame({"a": [1.0, np.nan, None], "b": ["x", None, "y"], "c": [None, 2, 3]})
    for fmt in ("table", "markdown"):
        text = render(frame, fmt)
        assert "NaN" not in text and "None" not in text and text.count(MISSING) == 4, text
    assert json.loads(render(frame, "json"))[1] == {"a": None, "b": None, "c": 2.0}


def test_render_cuts_the_widest_column_first():
    frame = pd.DataFrame({"id": ["short"], "text": ["w" * 300]})
    lines = render(frame, "table").splitlines()
    assert _width("\n".join(lines)) == TABLE_WIDTH and lines[1].endswith("…") and lines[1].startswith("short")
    assert render(frame, "table", width=None).splitlines()[1].endswith("w" * 300)


def _row(**changes):
    row = {"verdict": "pass", "p_value": None, "p_adjusted": None, "statistic": None, "bound": None,
           "relative_mde": None, "level": 0.05, "detail": "first clause; second"}
    row.update(changes)
    return row


@pytest.mark.parametrize("row, words", [
    (_row(statistic=1e-15, bound=1e-12), "within bound (1e-15 vs 1e-12)"),
    (_row(p_value=0.5, p_adjusted=0.9, relative_mde=0.05), "no deviation (Holm p 0.9 >= 0.05; MDE 0.05)"),
    (_row(verdict="fail", p_value=1e-9, p_adjusted=1e-8), "deviation (Holm p 1e-08 < 0.05)"),
    (_row(verdict="fail"), "failed: first clause"),
    (_row(verdict="error", detail="underpowered: relative MDE 0.5; x"), "error: underpowered: relative MDE 0.5"),
    (_row(verdict="erratum-confirmed", statistic=2.0, bound=1.0), "printed statement fails (2 vs printed 1)"),
    (_row(verdict="borrowed", statistic=0.0, bound=1.0), "borrowed code; within bound (0 vs 1)"),
    (_row(), "exact check held: first clause"),
])
def test_every_verdict_is_explained_in_words(row, words):
    assert explain(row) == words


def test_run_table_explains_each_verdict(capsys):
    assert cli.main(["claims", "run", "--id", "zo_o2nc.lemma3_1", "--subject", "fast", "-q"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["id", "subject", "verdict", "why"] and _width(out) <= TABLE_WIDTH
    assert out.count("no deviation (Holm p") == 2 and "within bound" in out


def test_warnings_are_one_clean_line(capsys):
    def parse(argv):  # stand-in command that warns
        warnings.warn("order grid edge reached", UserWarning, stacklevel=1)
        return 0

    original = cli._dispatch
    cli._dispatch = lambda parser, args, command: parse(args)
    try:
        assert cli.main(["claims", "list"]) == 0
    finally:
        cli._dispatch = original
    err = capsys.readouterr().err
    assert err == "dpref: warning: order grid edge reached\n"


def test_negative_scientific_values_become_option_values():
    assert cli._join_negative_values(["--delta", "-1e-5", "--steps", "3"]) == ["--delta=-1e-5", "--steps", "3"]
    assert cli._join_negative_values(["--delta", "-inf"]) == ["--delta=-inf"]
    assert cli._join_negative_values(["-q", "-1"]) == ["-q", "-1"]  # only after a long option
    assert cli._join_negative_values(["--delta", "-x"]) == ["--delta", "-x"]


def test_progress_is_periodic_lines_when_piped(monkeypatch):
    monkeypatch.setattr(progress, "PIPED_INTERVAL", 0.0)
    stream = io.StringIO()  # not a terminal
    bar = progress.progress_bar(3, "claims", "check", stream=stream)
    for _ in range(3):
        bar.update()
    bar.close()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue() and len(lines) >= 2
    assert lines[0].startswith("claims:") and "3/3" in lines[-1]
    silent = io.StringIO()
    bar = progress.progress_bar(3, "claims", "check", enabled=False, stream=silent)
    bar.update()
    bar.close()
    assert silent.getvalue() == ""
