"""Tests of proofs_checks.adapters.conformance and ``dpref conform accountants`` (anchors.md (b) item 5).

The flag logic is tested with stand-in subjects whose ε is a known multiple of the truth (so it runs without any
library); the real libraries are compared on a small grid, and our RDP curve is checked against dp_accounting's
``RdpAccountant`` order by order (issue 3: "agrees ... to 1e-6 relative on the shared orders").
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from proofs_checks.adapters import conformance
from proofs_checks.adapters.conformance import (
    DEFAULT_GRID,
    RDP_REL_TOL,
    Grid,
    GridPoint,
    conform_accountants,
    rdp_agreement,
)
from cli_refusals import run_cli
from proofs_checks.subjects import Subject

pytest.importorskip("reference.accounting.rdp", reason="reference.accounting.rdp not written yet")
pytest.importorskip("reference.fast.rdp", reason="reference.fast.rdp not written yet")

TINY = Grid(noise_multipliers=(2.0,), sampling_probabilities=(0.01, 1.0), steps=(10,), deltas=(1e-5,))


def _exact(z, steps, delta):
    from reference.accounting import gaussian
    from reference.precision import working_precision

    with working_precision(40):
        return float(gaussian.gaussian_epsilon(delta, gaussian.composed_gaussian_mu([z], [steps])))


def _fake(monkeypatch, factors: dict[str, float], unavailable: dict[str, str] | None = None):
    """Stand-in adapters: library ε = factor × our mpmath RDP ε (q < 1) or × the exact ε (q = 1)."""

    def ours(q, z, steps, delta):  # our mpmath RDP ε, from the (cached) curve conformance itself uses
        return conformance.ours_epsilon(conformance._our_curve(z, q), steps, delta)[0]

    def make(factor, base):
        def epsilon_poisson_gaussian(q, z, steps, delta):
            truth = _exact(z, steps, delta) if q == 1 and base == "exact" else ours(q, z, steps, delta)
            return factor * truth

        return epsilon_poisson_gaussian

    subjects = {
        name: Subject(name, epsilon_poisson_gaussian=make(factor, "exact" if factor < 1 else "ours"))
        for name, factor in factors.items()
    }
    monkeypatch.setattr(conformance, "adapter_subjects", lambda libraries=None: (subjects, dict(unavailable or {})))


def test_default_grid_covers_the_required_values_and_trims_the_slow_libraries():
    points = DEFAULT_GRID.points()
    assert {p.sampling_probability for p in points} == {0.001, 0.01, 0.0625, 0.25, 1.0}
    assert {p.noise_multiplier for p in points} == {0.6, 1.0, 2.0, 5.0, 13.5}
    assert {p.steps for p in points} == {1, 100, 1000, 10000}
    assert {p.delta for p in points} == {1e-5, 1e-6}
    assert len(points) == 200
    slow = DEFAULT_GRID.slow_points()
    assert slow < set(points)
    assert GridPoint(1.0, 0.01, 10000, 1e-5) in slow  # the DP-SGD benchmark point
    assert any(p.sampling_probability == 1.0 for p in slow)


def test_grid_rejects_bad_values():
    with pytest.raises(ValueError, match="sampling_probabilities"):
        Grid((1.0,), (0.0,), (1,), (1e-5,))
    with pytest.raises(ValueError, match="deltas"):
        Grid((1.0,), (0.5,), (1,), (1.0,))
    with pytest.raises(ValueError, match="steps"):
        Grid((1.0,), (0.5,), (0,), (1e-5,))


def test_frame_columns_and_our_values(monkeypatch):
    _fake(monkeypatch, {"dp_accounting.rdp": 1.0})
    frame = conform_accountants(TINY, progress=False, workers=1)
    for column in ("noise_multiplier", "sampling_probability", "steps", "delta", "ours_mpmath", "ours_float64",
                   "exact", "dp_accounting.rdp", "dp_accounting.rdp rel", "unsafe", "loose", "verdict",
                   "explanation", "notes"):
        assert column in frame.columns
    assert len(frame) == 2
    full = frame[frame["sampling_probability"] == 1.0].iloc[0]
    sub = frame[frame["sampling_probability"] == 0.01].iloc[0]
    assert full["exact"] == pytest.approx(_exact(2.0, 10, 1e-5), rel=1e-12)
    assert full["ours_mpmath"] >= full["exact"]  # RDP is an upper bound on the exact ε
    assert math.isnan(sub["exact"])
    assert sub["ours_mpmath"] < full["ours_mpmath"]  # subsampling amplifies privacy
    assert (frame["float64_rel"].abs() <= 1e-9).all()
    assert (frame["verdict"] == "ok").all() and (frame["unsafe"] == "").all() and (frame["loose"] == "").all()


def test_flags_unsafe_below_exact_and_loose_above_ours(monkeypatch):
    _fake(monkeypatch, {"opacus.rdp": 0.9, "dp_accounting.pld": 1.5, "dp_accounting.rdp": 1.0 + 1e-3})
    frame = conform_accountants(TINY, progress=False, workers=1)
    full = frame[frame["sampling_probability"] == 1.0].iloc[0]
    sub = frame[frame["sampling_probability"] == 0.01].iloc[0]
    assert "opacus.rdp" in full["unsafe"] and full["verdict"].startswith("unsafe")
    assert "below the exact ε" in full["explanation"]
    assert "opacus.rdp" in sub["unsafe"]  # 0.9 × ours, below our RDP ε on shared orders
    for row in (full, sub):
        assert "dp_accounting.pld" in row["loose"] and "dp_accounting.rdp" in row["loose"]
        assert row["dp_accounting.pld rel"] == pytest.approx(0.5, rel=1e-9)


def test_missing_library_appears_as_not_installed(monkeypatch):
    _fake(monkeypatch, {"dp_accounting.rdp": 1.0}, unavailable={"autodp": "autodp not installed (test)"})
    frame = conform_accountants(TINY, progress=False, workers=1)
    # numeric columns hold numbers only: NaN (null in JSON); the status column says why, the reason is in notes
    assert frame["autodp"].isna().all() and pd.api.types.is_float_dtype(frame["autodp"])
    assert frame["autodp rel"].isna().all()
    assert (frame["autodp status"] == "not installed").all()
    assert (frame["dp_accounting.rdp status"] == "ok").all()
    assert frame["notes"].str.contains("autodp: not installed: autodp not installed (test)", regex=False).all()
    assert frame.attrs["unavailable"] == {"autodp": "autodp not installed (test)"}


def test_library_errors_become_notes(monkeypatch):
    def broken(q, z, steps, delta):
        raise RuntimeError("Discrete mean differs from continuous mean significantly.")

    subjects = {"opacus.prv": Subject("opacus.prv", epsilon_poisson_gaussian=broken)}
    monkeypatch.setattr(conformance, "adapter_subjects", lambda libraries=None: (subjects, {}))
    frame = conform_accountants(TINY, progress=False, workers=1)
    assert frame["opacus.prv"].isna().all()
    assert (frame["opacus.prv status"] == "failed").all()
    assert frame["notes"].str.contains("opacus.prv: RuntimeError: Discrete mean").all()


# --- real libraries -------------------------------------------------------------------------------------------


def test_real_libraries_on_a_small_grid():
    pytest.importorskip("dp_accounting")
    frame = conform_accountants(TINY, progress=False, workers=1)
    assert len(frame) == 2
    full = frame[frame["sampling_probability"] == 1.0].iloc[0]
    # At q = 1 the RDP accountants compute the same Gaussian RDP on the same orders: identical ε.
    assert full["dp_accounting.rdp rel"] == pytest.approx(0, abs=RDP_REL_TOL)
    assert "dp_accounting.rdp" not in full["unsafe"]
    if isinstance(full.get("opacus.gdp"), float) and math.isfinite(full["opacus.gdp"]):
        assert full["opacus.gdp"] > full["exact"]  # CLT μ overstates at q = 1
    # every library value is placed against our certified interval, which holds the exact ε at q = 1
    assert (frame["dpref.pld status"] == "ok").all()
    assert full["dpref.pld lower"] <= full["exact"] <= full["dpref.pld upper"]
    for column in [c for c in frame.columns if c.endswith(" vs pld") and c != "ours vs pld"]:
        value = frame[column.removesuffix(" vs pld")]
        assert set(frame[column]) <= set(conformance.PLD_POSITIONS), column
        assert ((frame[column] == "n/a") == value.isna()).all(), column
    # RDP is an upper bound: ours and dp_accounting's RDP never fall below our lower bound
    assert (frame["ours vs pld"] != "below").all() and (frame["dp_accounting.rdp vs pld"] != "below").all()
    json.dumps(frame.to_dict(orient="records"), default=str)


def test_rdp_agrees_with_dp_accounting_on_integer_orders_and_bounds_it_on_fractional_ones():
    pytest.importorskip("dp_accounting")
    frame = rdp_agreement(TINY, libraries=("dp_accounting.rdp",), workers=1)  # TINY's curves are cached
    assert len(frame) == 2 and (frame["status"] == "ok").all()
    assert (frame["rdp_rel_max_int"] <= RDP_REL_TOL).all()
    assert (frame["rdp_dropped"] == 0).all()
    full = frame[frame["sampling_probability"] == 1.0].iloc[0]
    assert full["rdp_rel_max"] <= 1e-12  # α/(2z²) at every order
    # At fractional orders dp_accounting adds |C(α, i)| (an upper bound); ours is the exact value, never above it.
    sub = TINY.points()[0]
    curve = conformance._our_curve(sub.noise_multiplier, sub.sampling_probability)
    dpa = conformance.adapter_subjects(["dp_accounting.rdp"])[0]["dp_accounting.rdp"]
    theirs = dpa.rdp_poisson_gaussian(curve.orders_float, sub.sampling_probability, sub.noise_multiplier, 1)
    ours = [float(r) for r in curve.rdp_mp]
    assert all(t >= o * (1 - RDP_REL_TOL) for o, t in zip(ours, theirs, strict=True))


def test_dpref_conform_accountants_cli(monkeypatch, capsys, tmp_path):
    import argparse

    from dpref import conform

    _fake(monkeypatch, {"dp_accounting.rdp": 1.0})
    monkeypatch.setitem(conform.GRIDS, "small", TINY)
    parser = argparse.ArgumentParser(prog="dpref")
    conform.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["conform", "accountants", "--grid", "small", "--format", "json", "--no-progress",
                              "--workers", "1", "--report", str(tmp_path)])
    assert conform.run(args) == 0
    out = capsys.readouterr()
    records = json.loads(out.out)
    assert len(records) == 2 and {"ours_mpmath", "dp_accounting.rdp", "verdict"} <= set(records[0])
    assert "grid points" in out.err
    # the stand-in RDP equals ours, an upper bound: never below the interval, and the summary counts it
    assert any(line.startswith("  dp_accounting.rdp vs dpref.pld:") and line.endswith(", 0 below")
               for line in out.err.splitlines())
    assert "ours (RDP) vs dpref.pld:" in out.err and "dpref.pld (our certified interval)" in out.err
    assert (tmp_path / "conformance.json").exists() and (tmp_path / "manifest.json").exists()
    for fmt in ("table", "markdown", "csv"):
        args = parser.parse_args(["conform", "accountants", "--grid", "small", "--format", fmt, "--no-progress",
                                  "--workers", "1"])
        assert conform.run(args) == 0
        # the terminal table is the compact one (fits 120 columns); markdown and csv show every library
        assert ("ours_mpmath" if fmt == "table" else "dp_accounting.rdp") in capsys.readouterr().out


def test_frame_is_a_dataframe_with_attrs(monkeypatch):
    _fake(monkeypatch, {})
    frame = conform_accountants(TINY, progress=False, workers=1)
    assert isinstance(frame, pd.DataFrame)
    assert frame.attrs["points"] == 2 and "dp_accounting" in frame.attrs["versions"]


# --- the command line: JSON types, tables, progress, one-line refusals ------------------------------------------


@pytest.fixture
def fake_cli(monkeypatch):
    """``dpref conform accountants --grid small`` on TINY with a stand-in dp_accounting and autodp not installed."""
    from dpref import conform

    _fake(monkeypatch, {"dp_accounting.rdp": 1.0}, unavailable={"autodp": "autodp not installed (test)"})
    monkeypatch.setitem(conform.GRIDS, "small", TINY)
    return ["conform", "accountants", "--grid", "small", "--workers", "1"]


def test_cli_json_numbers_are_numbers_and_missing_is_null(capsys, fake_cli):
    code, out, err = run_cli(capsys, *fake_cli + ["--format", "json", "-q"])
    assert code == 0, err
    records = json.loads(out)
    assert len(records) == 2
    for record in records:
        for key in ("noise_multiplier", "sampling_probability", "delta", "ours_mpmath", "ours_float64", "float64_rel",
                    "dp_accounting.rdp", "dp_accounting.rdp rel", "seconds"):
            assert type(record[key]) is float, (key, record[key])
        assert type(record["steps"]) is int
        assert record["autodp"] is None and record["autodp rel"] is None  # not installed: null, never a string
        assert record["autodp status"] == "not installed" and record["dp_accounting.rdp status"] == "ok"
        assert "autodp: not installed" in record["notes"]
        assert isinstance(record["verdict"], str)
        # no numeric column carries text anywhere
        for key, value in record.items():
            if isinstance(value, str):
                assert (key in ("unsafe", "loose", "verdict", "explanation", "notes") or key.endswith(" status")
                        or key.endswith(" vs pld")), key
        for key in ("dpref.pld lower", "dpref.pld upper", "dpref.pld width", "dp_accounting.rdp beyond pld"):
            assert type(record[key]) is float, (key, record[key])
        assert record["dpref.pld status"] == "ok" and record["autodp vs pld"] == "n/a"
    by_q = {r["sampling_probability"]: r for r in records}
    assert by_q[0.01]["exact"] is None and type(by_q[1.0]["exact"]) is float


def test_cli_table_fits_120_columns_and_wide_shows_every_library(capsys, fake_cli):
    code, out, err = run_cli(capsys, *fake_cli + ["-q"])
    assert code == 0, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 120
    assert lines[0].split()[:4] == ["z", "q", "T", "δ"] and "n/a" in out  # the exact ε at q < 1
    code, out, err = run_cli(capsys, *fake_cli + ["-q", "--wide"])
    assert code == 0, err
    header = out.splitlines()[0]
    assert "dp_accounting.rdp rel" in header and "autodp rel" in header
    assert "not installed" not in out and "n/a" in out  # a library that is not installed: n/a, said on stderr
    assert any("autodp: not installed" in line for line in err)
    code, out, err = run_cli(capsys, *fake_cli + ["-q", "--format", "markdown"])
    assert code == 0 and out.startswith("|") and "dp_accounting.rdp rel" in out and "n/a" in out


def test_cli_progress_bar_and_quiet(capsys, fake_cli):
    code, _, err = run_cli(capsys, *fake_cli)
    assert code == 0
    assert any(line.startswith("conform accountants:") for line in err)  # the bar, as whole lines (not a terminal)
    for quiet in ("--quiet", "-q", "--no-progress"):
        code, _, err = run_cli(capsys, *fake_cli + [quiet])
        assert code == 0
        assert not any(line.startswith("conform accountants:") for line in err), quiet
        assert any("grid points" in line for line in err)  # the summary stays


def _file_under_a_file(tmp_path):
    (tmp_path / "afile").write_text("x")
    return str(tmp_path / "afile" / "sub")


def _non_empty(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.txt").write_text("x")
    return str(tmp_path / "full")


CONFORM_HOSTILE = [
    (["--workers", "0"], "--workers", "[1,"),
    (["--workers", "-1"], "--workers", "[1,"),
    (["--workers", "abc"], "--workers", "whole number"),
    (["--workers", "2.5"], "--workers", "whole number"),
    (["--workers", "1e9"], "--workers", "CPUs"),
    (["--grid", "nosuch"], "--grid", "invalid choice"),
    (["--format", "xml"], "--format", "invalid choice"),
    (["--libraries", "nosuch"], "--libraries", "nosuch"),
    (["--libraries", "opacus", "nosuch"], "--libraries", "nosuch"),
    (["--libraries"], "--libraries", "expected at least one"),
    (["--report", _file_under_a_file], "--report", "afile"),
    (["--report", _non_empty], "--report", "--overwrite"),
    (["--overwrite"], "--overwrite", "--report"),
    (["--foo"], "--foo", "unrecognized"),
]


@pytest.mark.parametrize("extra, option, fragment", CONFORM_HOSTILE,
                         ids=[f"{i}:{' '.join(str(x) for x in h[0])[:30]}" for i, h in enumerate(CONFORM_HOSTILE)])
def test_cli_hostile_input_is_one_line_naming_the_option(capsys, tmp_path, monkeypatch, extra, option, fragment):
    def never(*args, **kwargs):
        raise AssertionError("computed despite bad usage")

    monkeypatch.setattr("dpref.conform.conform_accountants", never)
    extra = [x(tmp_path) if callable(x) else x for x in extra]
    code, out, lines = run_cli(capsys, "conform", "accountants", "--grid", "small", "-q", *extra)
    assert code == 2, lines
    assert len(lines) == 1 and lines[0].startswith("dpref"), lines
    assert option in lines[0] and fragment in lines[0], lines[0]
    assert out == ""


@pytest.mark.parametrize("argv, fragment", [(["conform"], "required"), (["conform", "nosuch"], "invalid choice")])
def test_cli_conform_without_a_sub_command_is_one_line(capsys, argv, fragment):
    code, _, lines = run_cli(capsys, *argv)
    assert code == 2 and len(lines) == 1 and lines[0].startswith("dpref conform") and fragment in lines[0]


def test_workers_are_never_more_than_the_groups(monkeypatch):
    seen = {}

    class Pool:
        def __init__(self, max_workers):
            seen["max_workers"] = max_workers
            raise RuntimeError("stop")

    import concurrent.futures

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Pool)
    with pytest.raises(RuntimeError, match="stop"):
        conformance._map_groups(lambda x: x, [(1,), (2,)], 64, False, "test")
    assert seen["max_workers"] == 2


# --- our certified PLD interval and the inside / above / below verdicts -----------------------------------------

POINT = GridPoint(1.0, 0.01, 100, 1e-5)
FULL = GridPoint(1.0, 1.0, 100, 1e-5)


def _row(lower=1.0, upper=1.001, ours=1.2, exact=math.nan):
    return {"ours_mpmath": ours, "exact": exact, "dpref.pld lower": lower, "dpref.pld upper": upper,
            "dpref.pld width": (upper - lower) / upper}


def test_pld_position_and_distance():
    position, beyond = conformance.pld_position, conformance.beyond_interval
    assert position(1.0005, 1.0, 1.001) == "inside" and beyond(1.0005, 1.0, 1.001) == 0.0
    assert position(1.0, 1.0, 1.001) == "inside" and position(1.001, 1.0, 1.001) == "inside"  # closed interval
    assert position(0.99, 1.0, 1.001) == "below" and beyond(0.99, 1.0, 1.001) == pytest.approx(-0.01)
    assert position(1.1011, 1.0, 1.001) == "above" and beyond(1.1011, 1.0, 1.001) == pytest.approx(0.1)
    assert position(math.inf, 1.0, 1.001) == "above" and beyond(math.inf, 1.0, 1.001) == math.inf
    assert position(math.inf, 1.0, math.inf) == "inside"  # no finite upper bound: +inf is consistent
    assert position(5.0, 1.0, math.inf) == "inside"
    for missing in ((math.nan, 1.0, 1.001), (1.0, math.nan, math.nan)):
        assert position(*missing) == "n/a" and math.isnan(beyond(*missing))


def test_value_below_our_lower_bound_is_unsafe_and_says_which_bound():
    unsafe, loose, verdict, text = conformance._judge(POINT, _row(), {"dp_accounting.pld": 0.999}, {})
    assert unsafe == ["dp_accounting.pld"] and loose == [] and verdict == "unsafe: dp_accounting.pld"
    assert "below our certified lower bound 1 (dpref.pld lower)" in text and "more privacy" in text
    assert "decided by dpref.pld lower" in text and "Truth: ε ∈ [1, 1.001]" in text


def test_value_above_our_upper_bound_is_loose_by_a_relative_amount():
    unsafe, loose, verdict, text = conformance._judge(POINT, _row(), {"prv_accountant": 1.1011}, {})
    assert unsafe == [] and loose == ["prv_accountant"] and verdict == "loose: prv_accountant"
    assert "above our certified upper bound 1.001 (dpref.pld upper) by 0.1 relative" in text


def test_value_inside_is_consistent_and_infinite_is_loose_and_nan_is_ignored():
    unsafe, loose, verdict, text = conformance._judge(POINT, _row(), {"opacus.prv": 1.0004}, {})
    assert (unsafe, loose, verdict) == ([], [], "ok") and "Inside our interval: opacus.prv." in text
    unsafe, loose, verdict, text = conformance._judge(POINT, _row(), {"opacus.prv": math.inf}, {})
    assert loose == ["opacus.prv"] and "inf" in text and unsafe == []
    unsafe, loose, verdict, _ = conformance._judge(POINT, _row(), {"opacus.prv": math.nan}, {})
    assert (unsafe, loose, verdict) == ([], [], "ok")


def test_rdp_accountant_must_be_above_our_lower_bound():
    # an RDP ε below our certified lower bound is an underestimate whatever its orders
    unsafe, _, _, text = conformance._judge(POINT, _row(), {"dp_accounting.rdp": 0.9}, {})
    assert unsafe == ["dp_accounting.rdp"] and "decided by dpref.pld lower" in text
    # above our upper bound is what RDP does (judged loose only against our RDP ε, here equal)
    unsafe, loose, verdict, _ = conformance._judge(POINT, _row(ours=1.2), {"dp_accounting.rdp": 1.2}, {})
    assert (unsafe, loose, verdict) == ([], [], "ok")


def test_our_rdp_below_our_pld_lower_bound_or_exact_outside_is_ours_unsafe():
    unsafe, _, _, text = conformance._judge(POINT, _row(ours=0.98), {}, {})
    assert unsafe == ["ours"] and "one of our accountants is wrong" in text
    unsafe, _, _, text = conformance._judge(FULL, _row(exact=1.01), {}, {})
    assert unsafe == ["dpref.pld"] and "outside our certified interval" in text


def test_prv_bracket_placed_estimate_not_flagged():
    extras = {"prv_accountant.lower": 1.002, "prv_accountant.estimate": 0.995}
    unsafe, loose, verdict, text = conformance._judge(POINT, _row(), {"prv_accountant": 1.0005}, extras)
    assert (unsafe, loose, verdict) == ([], [], "ok")
    assert "eps_lower = 1.002 is above our certified upper bound" in text and "invalid lower bound" in text
    assert "estimate 0.995 is below our certified lower bound 1" in text and "within its stated eps_error" in text


def test_missing_interval_falls_back_to_prv_lower_bound():
    row = _row(lower=math.nan, upper=math.nan)
    unsafe, _, _, text = conformance._judge(POINT, row, {"opacus.prv": 0.9}, {"prv_accountant.lower": 0.95})
    assert unsafe == ["opacus.prv"] and "our interval is missing" in text


def test_interval_columns_on_the_tiny_grid(monkeypatch):
    _fake(monkeypatch, {"dp_accounting.pld": 1.5}, unavailable={"opacus.prv": "opacus not installed (test)"})
    frame = conform_accountants(TINY, progress=False, workers=1)
    assert (frame["dpref.pld status"] == "ok").all()
    assert (frame["dpref.pld lower"] <= frame["dpref.pld upper"]).all()
    assert (frame["dpref.pld width"] <= conformance.PLD_TOLERANCE).all()
    full = frame[frame["sampling_probability"] == 1.0].iloc[0]
    assert full["dpref.pld lower"] <= full["exact"] <= full["dpref.pld upper"]  # the exact ε inside the interval
    assert (frame["ours vs pld"] != "below").all()  # RDP is an upper bound
    assert (frame["dp_accounting.pld vs pld"] == "above").all()  # 1.5 × RDP ≥ 1.5 × the truth
    assert "dp_accounting.pld" in frame["loose"].iloc[0] and "dpref.pld upper" in frame["explanation"].iloc[0]
    assert (frame["opacus.prv vs pld"] == "n/a").all() and frame["opacus.prv beyond pld"].isna().all()


def test_interval_failure_is_reported_not_fatal(monkeypatch):
    def refuse(z, q, steps, deltas, rdp_epsilon, found):
        raise ValueError("grid too large (test)")

    _fake(monkeypatch, {"dp_accounting.pld": 1.0})
    monkeypatch.setattr(conformance, "_our_pld_intervals", refuse)
    frame = conform_accountants(TINY, progress=False, workers=1)
    assert (frame["dpref.pld status"] == "failed").all() and frame["dpref.pld lower"].isna().all()
    assert frame["notes"].str.contains("dpref.pld: ValueError: grid too large (test)", regex=False).all()
    assert (frame["dp_accounting.pld vs pld"] == "n/a").all()


def test_interval_found_before_a_timeout_is_kept(monkeypatch):
    def slow(z, q, steps, deltas, rdp_epsilon, found):
        found[deltas[0]] = (0.5, 0.6, 1e-4)  # a valid (if wide) interval, then the time runs out
        raise conformance._Timeout("timed out after 1 s")

    _fake(monkeypatch, {})
    monkeypatch.setattr(conformance, "_our_pld_intervals", slow)
    frame = conform_accountants(TINY, progress=False, workers=1)
    assert (frame["dpref.pld status"] == "ok").all() and (frame["dpref.pld lower"] == 0.5).all()
    assert frame["dpref.pld width"].tolist() == pytest.approx([0.1 / 0.6] * 2)
    assert frame["notes"].str.contains("dpref.pld: refinement stopped early (_Timeout", regex=False).all()


def test_one_composition_serves_every_delta():
    """The shared-composition refinement gives the interval pld.epsilon_interval gives, δ by δ."""
    from reference.accounting import pld

    deltas = [1e-5, 1e-6]
    found = conformance._our_pld_intervals(2.0, 0.01, 10, deltas, 0.5, {})
    pair = pld.poisson_gaussian_pld(conformance.pld_starting_width(0.5), noise_multiplier=2.0,
                                    sampling_probability=0.01).compose(10)
    for delta in deltas:
        lower, upper, h = pld.epsilon_interval(pair, delta, tolerance=conformance.PLD_TOLERANCE,
                                               max_refinements=conformance.PLD_MAX_REFINEMENTS)
        assert found[delta] == (lower, upper, h)


def test_compact_table_fits_120_columns_with_long_flags():
    from dpref import conform

    row = {"noise_multiplier": 0.6, "sampling_probability": 0.001, "steps": 10000, "delta": 1e-5,
           "ours_mpmath": 2.545344, "dpref.pld lower": 1.424748, "dpref.pld upper": 1.425266, "exact": math.nan,
           "unsafe": "opacus.gdp, opacus.rdp", "loose": "dp_accounting.rdp, autodp, dp_accounting.pld, opacus.prv",
           "verdict": "unsafe: opacus.gdp", "explanation": "x"}
    out = conform._table(pd.DataFrame([row, row]), "table", wide=False)
    assert max(len(line) for line in out.splitlines()) <= 120
    assert "pld lower" in out.splitlines()[0] and "1.425" in out
