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
