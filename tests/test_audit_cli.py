"""``dpref audit`` (list, run, report, planted bugs, usage errors), ``quick_audits`` for ``dpref check``, and the
records and curves of ``empirical_dp.report``."""

import dataclasses
import inspect
import json
import math

import numpy as np
import pytest
from scipy.stats import norm

from dpref import audit as audit_cli
from dpref import cli
from empirical_dp import planted, registry
from empirical_dp.audit import audit
from empirical_dp.registry import SCENARIOS
from empirical_dp.report import gdp_roc, result_record, results_frame, roc_arrays, roc_curve, write_audit_report
from empirical_dp.scenarios import gaussian_scenario


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _check_audits():
    """``dpref check``'s audit part as the command line calls it (its optional parameters, when it has them:
    the table width and progress)."""
    parameters = inspect.signature(cli._check_audits).parameters
    options = {k: v for k, v in {"width": None, "progress": False}.items() if k in parameters}
    return cli._check_audits("table", None, "dpref check", **options)


def _has_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_list_names_every_scenario_and_planted_bug(capsys):
    code, out, _ = run(capsys, "audit", "list", "--format", "json")
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)}
    assert set(rows) == set(SCENARIOS) | set(planted.PLANTED)
    assert rows["gaussian"]["kind"] == "scenario"
    assert rows["gaussian"]["claimed_epsilon"] == pytest.approx(1.0, rel=1e-9)
    assert rows["gaussian"]["tight_epsilon"] == pytest.approx(1.0, rel=1e-9)
    assert rows["gaussian"]["claim_type"] == "gdp"
    assert rows["gaussian"]["claimed_mu"] == SCENARIOS["gaussian"].claimed_mu
    assert rows["poisson_gaussian"]["claim_type"] == "epsilon_delta" and rows["poisson_gaussian"]["claimed_mu"] is None
    for name in planted.PLANTED:
        assert rows[name]["kind"] == "planted bug"
    assert rows["noise_halved"]["claim_type"] == "epsilon_delta"
    code, out, _ = run(capsys, "audit", "list")
    assert code == 0 and "noise_halved" in out and "description" in out


def test_run_gaussian_json_fields_match_a_direct_audit(capsys):
    code, out, _ = run(capsys, "audit", "run", "gaussian", "--trials", "100000", "--format", "json")
    assert code == 0
    record = json.loads(out)
    direct = audit(SCENARIOS["gaussian"], 100000, seed=0)
    assert record["scenario"] == "gaussian" and record["kind"] == "scenario"
    assert record["trials"] == 100000 == record["select_trials"] + record["count_trials"]
    assert record["epsilon_lb"] == direct.epsilon_lb
    assert record["gdp_mu_lb"] == direct.gdp_mu_lb
    assert record["gdp_epsilon_lb"] == direct.gdp_epsilon_lb
    assert record["oracle_epsilon_lb"] == direct.oracle_epsilon_lb
    assert record["oracle_note"] == "best threshold searched on the counted data (not a bound, optimistic)"
    assert record["threshold_strategy"] == "bonferroni_grid"  # the default
    assert record["known_law_oracle_epsilon_lb"] == direct.known_law_oracle_epsilon_lb is not None
    assert record["epsilon_lb_minus_known_law_oracle"] == direct.epsilon_lb - direct.known_law_oracle_epsilon_lb
    assert record["claimed_epsilon"] == SCENARIOS["gaussian"].claimed_epsilon
    assert record["tight_epsilon"] == SCENARIOS["gaussian"].tight_epsilon
    assert record["tightness"] == pytest.approx(record["epsilon_lb"] / record["tight_epsilon"], rel=1e-15)
    assert record["verdict"] == "consistent" and record["expected"] == "consistent"
    assert record["missed"] is False and record["verdict_text"] == "consistent"
    assert (record["fp"], record["negatives"], record["fn"], record["positives"]) == (
        direct.counts.fp, direct.counts.negatives, direct.counts.fn, direct.counts.positives)
    assert record["seed"] == 0 and record["confidence"] == 0.95
    # (d) the claim, the deciding bound and its false-alarm probability
    assert record["claim_type"] == "gdp" and record["claimed_mu"] == SCENARIOS["gaussian"].claimed_mu
    assert record["verdict_bounds"] == "clopper_pearson_epsilon,gdp_mu"
    assert record["decided_by"] == direct.decided_by and record["margin"] == direct.margin
    assert record["false_alarm_probability"] == direct.false_alarm_probability == pytest.approx(0.025)


def test_run_table_labels_the_oracle(capsys):
    code, out, _ = run(capsys, "audit", "run", "gaussian", "--trials", "20000")
    assert code == 0
    for label in ("claim", "mu-GDP, mu = 0.268051", "epsilon_lb", "gdp_mu_lb", "gdp_epsilon_lb", "claimed_epsilon",
                  "claimed_mu", "tight_epsilon", "verdict", "decided_by", "false-alarm probability 0.025",
                  "[verdict bound]", "tightness", "known_law_oracle", "epsilon_lb - oracle",
                  "best threshold searched on the counted data (not a bound, optimistic)"):
        assert label in out


def test_sharded_run_equals_serial(capsys):
    code, out, _ = run(capsys, "audit", "run", "gaussian", "--trials", "20000", "--shards", "3", "--format", "json",
                       "--no-progress")
    assert code == 0
    record = json.loads(out)
    direct = audit(SCENARIOS["gaussian"], 20000, seed=0, shards=3)
    assert record["shards"] == 3
    assert record["epsilon_lb"] == direct.epsilon_lb and record["gdp_mu_lb"] == direct.gdp_mu_lb


def test_report_writes_tables_manifest_and_plots(capsys, tmp_path):
    code, out, _ = run(capsys, "audit", "run", "gaussian", "--trials", "100000", "--report", str(tmp_path),
                       "--format", "json")
    assert code == 0
    record = json.loads(out)
    rows = json.loads((tmp_path / "audits.json").read_text())
    assert len(rows) == 1 and rows[0]["epsilon_lb"] == record["epsilon_lb"]
    for key in ("claim_type", "claimed_mu", "decided_by", "margin", "false_alarm_probability", "verdict_bounds"):
        assert rows[0][key] == record[key], key
    assert rows[0]["kind"] == "scenario" and rows[0]["missed"] is False
    assert "gaussian" in (tmp_path / "audits.md").read_text()
    assert (tmp_path / "audits.csv").read_text().startswith("scenario,")
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["name"] == "gaussian" and "versions" in manifest
    if _has_matplotlib():
        assert set(manifest["plots"]) == {"roc_gaussian.png", "epsilon_vs_trials_gaussian.png"}
        for name in manifest["plots"]:
            assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert manifest["plots"] == []


def test_planted_bug_exits_zero_with_expected_violation(capsys):
    code, out, _ = run(capsys, "audit", "run", "noise_halved")
    assert code == 0
    assert "violation (expected: planted bug)" in out
    # an (ε, δ) claim: Clopper–Pearson decides, the GDP bound is printed as reported only
    assert "(epsilon, delta) = (1, 1e-05)" in out
    assert "decided_by           clopper_pearson_epsilon: epsilon_lb" in out and "false-alarm probability 0.05" in out
    assert "[reported only: not a bound against an (epsilon, delta) claim]" in out


def test_planted_bug_json_names_the_deciding_bound(capsys):
    """(d) ``dpref audit run`` json: the deciding bound and its false-alarm probability."""
    code, out, _ = run(capsys, "audit", "run", "noise_halved", "--format", "json")
    assert code == 0
    record = json.loads(out)
    assert record["trials"] == planted.PLANTED["noise_halved"][2]
    assert record["verdict"] == "violation" and record["missed"] is False and record["note"] == ""
    assert record["claim_type"] == "epsilon_delta" and record["claimed_mu"] is None
    assert record["verdict_bounds"] == "clopper_pearson_epsilon" == record["decided_by"]
    assert record["margin"] == pytest.approx(record["epsilon_lb"] - 1.0, abs=1e-15) and record["margin"] > 0
    assert record["false_alarm_probability"] == pytest.approx(0.05)


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_missed_planted_bug_is_reported_as_missed(capsys, fmt):
    """(c) a planted bug not caught (2 000 trials) is reported as missed, never as a plain "consistent"."""
    code, out, _ = run(capsys, "audit", "run", "noise_halved", "--trials", "2000", "--format", fmt)
    assert code == 0  # a lack of power, not a finding about a mechanism
    if fmt == "json":
        record = json.loads(out)
        assert record["verdict"] == "consistent" and record["expected"] == "violation"
        assert record["missed"] is True and record["note"] == "planted bug not caught at this budget"
        assert "MISSED" in record["verdict_text"] and record["verdict_text"] != "consistent"
        assert record["decided_by"] == "clopper_pearson_epsilon" and record["margin"] <= 0
    else:
        verdict_line = next(line for line in out.splitlines() if line.startswith("verdict "))
        assert verdict_line.split(None, 1)[1] != "consistent"
        assert "MISSED: planted bug not caught at this budget" in verdict_line
        assert "missed               planted bug not caught at this budget (2,000 trials per dataset)" in out


def test_too_small_gdp_claim_is_named_in_the_output(capsys, monkeypatch):
    """(b) a μ-GDP claim below the mechanism's μ: the GDP bound refutes it and the output says so."""
    mu = SCENARIOS["gaussian"].mu
    monkeypatch.setitem(SCENARIOS, "gdp_underclaimed", gaussian_scenario(1.0, 1.0 / mu, 1, 1e-5, claimed_mu=mu / 2,
                                                                         name="gdp_underclaimed"))
    code, out, _ = run(capsys, "audit", "run", "gdp_underclaimed", "--trials", "20000", "--format", "json")
    assert code == 1
    record = json.loads(out)
    assert record["verdict"] == "violation" and record["claim_type"] == "gdp" and record["claimed_mu"] == mu / 2
    assert record["decided_by"] == "gdp_mu" and record["margin"] == pytest.approx(record["gdp_mu_lb"] - mu / 2)
    assert record["margin"] > 0 and record["false_alarm_probability"] == pytest.approx(0.025)
    code, out, _ = run(capsys, "audit", "run", "gdp_underclaimed", "--trials", "20000")
    assert code == 1
    assert "decided_by           gdp_mu: mu_lb" in out and "> claimed mu 0.134026" in out


def test_epsilon_delta_claim_output_never_decides_by_gdp(capsys, monkeypatch):
    """(a) through the command line: GDP ε above the (ε, δ) claim, Clopper–Pearson below: consistent, CP decides."""
    mu_star = SCENARIOS["gaussian"].mu
    monkeypatch.setitem(SCENARIOS, "eps_claim", gaussian_scenario(2 * mu_star, 1.0, 1, 1e-5, claimed_epsilon=1.0,
                                                                  name="eps_claim"))
    code, out, _ = run(capsys, "audit", "run", "eps_claim", "--trials", "5000", "--format", "json")
    assert code == 0
    record = json.loads(out)
    assert record["gdp_epsilon_lb"] > 1.0 >= record["epsilon_lb"]
    assert record["verdict"] == "consistent" and record["decided_by"] == "clopper_pearson_epsilon"
    assert record["verdict_bounds"] == "clopper_pearson_epsilon"
    assert record["false_alarm_probability"] == pytest.approx(0.05)


def test_violation_of_an_ordinary_scenario_exits_one(capsys, monkeypatch):
    # the Gaussian mechanism with μ = 1 claimed at ε = 0.1: its tight ε(1e-5) is ≈ 4.4
    monkeypatch.setitem(SCENARIOS, "underclaimed", gaussian_scenario(1.0, 1.0, 1, 1e-5, claimed_epsilon=0.1,
                                                                     name="underclaimed"))
    code, out, _ = run(capsys, "audit", "run", "underclaimed", "--trials", "20000", "--format", "json")
    assert code == 1
    assert json.loads(out)["verdict"] == "violation"


def test_module_attr_name(capsys):
    code, out, _ = run(capsys, "audit", "run", "empirical_dp.registry:SCENARIOS", "--trials", "1000")
    assert code == 2  # a dict, not a Scenario
    code, out, _ = run(capsys, "audit", "run", "tests.test_audit_cli:EXTERNAL", "--trials", "20000",
                       "--format", "json")
    assert code == 0 and json.loads(out)["kind"] == "external"


EXTERNAL = gaussian_scenario(1.0, 4.0, 2, 1e-5, name="external_gaussian")


def test_bonferroni_grid_strategy(capsys):
    code, out, _ = run(capsys, "audit", "run", "gaussian", "--trials", "50000", "--threshold-strategy",
                       "bonferroni_grid", "--format", "json")
    assert code == 0
    record = json.loads(out)
    direct = audit(SCENARIOS["gaussian"], 50000, seed=0, threshold_strategy="bonferroni_grid")
    assert record["threshold_strategy"] == "bonferroni_grid" and record["grid_size"] == direct.grid_size
    assert record["epsilon_lb"] == direct.epsilon_lb


@pytest.mark.parametrize("strategy", ["split", "bonferroni_grid"])
def test_sharded_run_with_each_strategy_equals_the_direct_audit(capsys, strategy):
    code, out, _ = run(capsys, "audit", "run", "gaussian", "--trials", "20000", "--shards", "2",
                       "--threshold-strategy", strategy, "--format", "json", "--no-progress")
    assert code == 0
    record = json.loads(out)
    direct = audit(SCENARIOS["gaussian"], 20000, seed=0, shards=2, threshold_strategy=strategy)
    assert record["threshold_strategy"] == strategy
    assert record["epsilon_lb"] == direct.epsilon_lb and record["grid_size"] == direct.grid_size
    assert record["known_law_oracle_epsilon_lb"] == direct.known_law_oracle_epsilon_lb


def test_unknown_threshold_strategy_is_a_usage_error_naming_the_option(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["audit", "run", "gaussian", "--trials", "1000", "--threshold-strategy", "best"])
    assert exit_info.value.code == 2
    assert "--threshold-strategy" in capsys.readouterr().err


@pytest.mark.parametrize("argv, parameter", [
    (("no_such_scenario",), "NAME"),
    (("no_such_module_xyz:thing",), "NAME"),
    (("gaussian", "--trials", "1"), "--trials"),
    (("gaussian", "--shards", "0"), "--shards"),
    (("gaussian", "--confidence", "0.3"), "--confidence"),
    (("gaussian", "--trials", "1000", "--executor", "ftp://x"), "executor"),
])
def test_bad_usage_exits_two_naming_the_parameter(capsys, argv, parameter):
    code, out, err = run(capsys, "audit", "run", *argv)
    assert code == 2 and out == ""
    assert parameter in err


def test_quick_audits_all_ok():
    records = audit_cli.quick_audits()
    assert {r["name"] for r in records} == set(SCENARIOS) | set(planted.PLANTED)
    for r in records:
        assert set(r) == set(audit_cli.QUICK_COLUMNS)
        expected = "violation" if r["name"] in planted.PLANTED else "consistent"
        assert r["expected"] == expected
        assert r["ok"] is True, r
        assert r["missed"] is False and r["note"] == ""
        if r["name"] in planted.PLANTED:
            assert r["trials"] == planted.PLANTED[r["name"]][2]  # the budget sized for the claim's bound
            assert r["margin"] > 0
            if r["claim_type"] == "epsilon_delta":
                assert r["decided_by"] == "clopper_pearson_epsilon"
        else:
            assert r["trials"] <= audit_cli.QUICK_TRIALS and r["margin"] <= 0
        assert r["false_alarm"] == pytest.approx(1e-6 if r["claim_type"] == "epsilon_delta" else 5e-7)


def test_quick_audits_flag_a_missed_planted_bug(capsys, monkeypatch):
    """(c) in ``dpref check``: a planted bug at a budget too small to catch it is "missed" and fails the check."""
    factory, attack, _ = planted.PLANTED["noise_halved"]
    monkeypatch.setattr(planted, "PLANTED", {"noise_halved": (factory, attack, 2000)})
    monkeypatch.setattr(registry, "SCENARIOS", {})
    records = audit_cli.quick_audits()
    progress = capsys.readouterr().err  # a bar over the audits, as whole lines (stderr is not a terminal here)
    assert "quick audits" in progress and "1/1" in progress and "\r" not in progress
    assert len(records) == 1
    r = records[0]
    assert (r["verdict"], r["expected"], r["missed"], r["ok"]) == ("consistent", "violation", True, False)
    assert r["note"] == "planted bug not caught at this budget" and r["decided_by"] == "clopper_pearson_epsilon"
    assert _check_audits() == 1
    out, err = capsys.readouterr()
    assert "planted bug not caught at this budget" in out
    assert "audit noise_halved (planted): verdict consistent, expected violation" in err


def test_check_audits_fails_on_a_record_not_ok(capsys, monkeypatch):
    bad = {c: None for c in audit_cli.QUICK_COLUMNS}
    bad.update(name="gaussian", kind="scenario", verdict="violation", expected="consistent", ok=False)
    monkeypatch.setattr(audit_cli, "quick_audits", lambda *args, **kwargs: [bad])
    assert _check_audits() == 1
    _, err = capsys.readouterr()
    assert "audit gaussian (scenario): verdict violation, expected consistent" in err


# ---------------------------------------------------------------------------------------------------
# empirical_dp.report


def test_result_record_is_json_safe_and_infinities_are_strings():
    result = audit(SCENARIOS["gaussian"], 2000, seed=1)
    record = result_record(result)
    json.dumps(record, allow_nan=False)
    pure = dataclasses.replace(result, claimed_epsilon=math.inf)
    assert result_record(pure)["claimed_epsilon"] == "inf"
    frame = results_frame([result, result])
    assert len(frame) == 2 and list(frame["epsilon_lb"]) == [result.epsilon_lb] * 2
    with pytest.raises(TypeError, match="result"):
        result_record({"epsilon_lb": 1})


def test_gdp_roc_closed_form():
    fpr = np.array([0.0, 1e-6, 0.01, 0.3, 0.5, 1.0])
    np.testing.assert_allclose(gdp_roc(fpr, 0.0), fpr, rtol=1e-12, atol=0)
    # Dong–Roth–Su Def. 2.6: TPR = 1 − G_μ(FPR) = 1 − Φ(Φ⁻¹(1 − FPR) − μ)
    np.testing.assert_allclose(gdp_roc(fpr[1:-1], 0.7), 1 - norm.cdf(norm.ppf(1 - fpr[1:-1]) - 0.7), rtol=1e-9)
    assert gdp_roc(0.5, 0.7) == pytest.approx(norm.cdf(0.7), rel=1e-15)
    with pytest.raises(ValueError, match="mu"):
        gdp_roc(fpr, -1.0)
    with pytest.raises(ValueError, match="false_positive_rate"):
        gdp_roc([1.5], 1.0)


def test_roc_plot_when_the_result_carries_an_roc(tmp_path):
    pytest.importorskip("matplotlib")
    result = audit(SCENARIOS["gaussian"], 20000, seed=2)
    if roc_arrays(result) is None:
        if "roc" not in {f.name for f in dataclasses.fields(result)}:
            pytest.skip("AuditResult has no roc field")
        pytest.skip("audit returned no ROC")
    fpr, tpr = roc_arrays(result)
    assert fpr.shape == tpr.shape and np.all((fpr >= 0) & (fpr <= 1)) and np.all((tpr >= 0) & (tpr <= 1))
    path = write_audit_report([result], tmp_path, manifest={"command": "test"})
    assert (path / "roc_gaussian.png").exists()


# ---------------------------------------------------------------------------------------------------
# Progress, output width, JSON


def test_serial_run_shows_progress_as_whole_lines_on_a_pipe(capsys):
    """A serial audit (one shard) shows a bar over the 2 × trials outputs; stderr is not a terminal under capsys, so
    the bar is written as whole lines (no carriage returns), and it never reaches stdout."""
    code, out, err = run(capsys, "audit", "run", "gaussian", "--trials", "20000", "--format", "json")
    assert code == 0 and json.loads(out)["trials"] == 20000
    assert "audit gaussian" in err and "40000/40000" in err and "\r" not in err
    assert all(line.startswith("audit gaussian") for line in err.splitlines())


@pytest.mark.parametrize("flag", ["--quiet", "--no-progress"])
def test_quiet_hides_the_progress(capsys, flag):
    code, out, err = run(capsys, "audit", "run", "gaussian", "--trials", "20000", "--shards", "2", flag)
    assert code == 0 and err == "" and "verdict" in out


def test_sharded_run_shows_progress_over_all_trials(capsys):
    code, _, err = run(capsys, "audit", "run", "gaussian", "--trials", "20000", "--shards", "4", "--format", "json")
    assert code == 0 and "audit gaussian" in err and "40000/40000" in err


def test_audit_progress_does_not_change_the_result(capsys):
    quiet = audit(SCENARIOS["gaussian"], 3000, seed=4, shards=2)
    shown = audit(SCENARIOS["gaussian"], 3000, seed=4, shards=2, progress=True)
    assert shown == quiet
    np.testing.assert_array_equal(shown.roc[0], quiet.roc[0])
    assert "6000/6000" in capsys.readouterr().err


def test_run_table_fits_120_columns_and_wide_keeps_one_line_per_field(capsys):
    # a planted bug: its GDP line ("reported only ...") and decided_by line are longer than 120 characters
    code, out, _ = run(capsys, "audit", "run", "noise_halved", "--trials", "2000", "--quiet")
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 120
    assert "[reported only: not a bound against an (epsilon, delta) claim]" in out  # wrapped between parts, whole
    assert "false-alarm probability 0.05" in out
    code, wide, _ = run(capsys, "audit", "run", "noise_halved", "--trials", "2000", "--quiet", "--wide")
    assert code == 0 and max(len(line) for line in wide.splitlines()) > 120
    assert not any(line.startswith(" ") for line in wide.splitlines())  # one line per field
    assert any(line.startswith(" ") for line in out.splitlines())  # continuation lines
    def text(table):  # the same text, only wrapped differently (the timing aside)
        return " ".join(table.split()).split(" seconds ")[0]

    assert text(wide) == text(out)


def test_missing_values_are_n_a_in_the_table_and_null_in_json(capsys):
    from reference.reporting import MISSING

    code, out, _ = run(capsys, "audit", "run", "noise_halved", "--trials", "2000", "--quiet")
    assert code == 0
    assert f"claimed_mu           {MISSING}" in out and f"known_law_oracle     {MISSING}" in out
    code, out, _ = run(capsys, "audit", "run", "noise_halved", "--trials", "2000", "--quiet", "--format", "json")
    record = json.loads(out)
    assert record["claimed_mu"] is None and record["known_law_oracle_epsilon_lb"] is None


def _strict_json(text):
    def refuse(name):
        raise AssertionError(f"JSON holds {name}, which is not JSON")
    return json.loads(text, parse_constant=refuse)


def test_run_json_numbers_are_json_numbers(capsys):
    code, out, _ = run(capsys, "audit", "run", "gaussian", "--trials", "20000", "--quiet", "--format", "json")
    assert code == 0
    record = _strict_json(out)  # no NaN / Infinity tokens
    numeric = ("trials", "seed", "confidence", "delta", "claimed_epsilon", "claimed_mu", "epsilon_lb", "gdp_mu_lb",
               "gdp_epsilon_lb", "tight_epsilon", "margin", "false_alarm_probability", "tightness",
               "known_law_oracle_epsilon_lb", "oracle_epsilon_lb", "threshold", "fp", "fn", "seconds")
    for key in numeric:
        assert isinstance(record[key], (int, float)) and not isinstance(record[key], bool), key
    assert isinstance(record["fp"], int) and isinstance(record["trials"], int)
    assert not any(key.endswith("_decimal") for key in record)  # no high-precision value in an audit


def test_json_value_converts_numpy_scalars_nan_and_infinities():
    value = audit_cli._json_value({"a": np.float64(0.5), "b": np.int64(3), "c": float("nan"), "d": math.inf,
                                   "e": [np.float32(-math.inf), None, True], "f": np.bool_(False)})
    assert value == {"a": 0.5, "b": 3, "c": None, "d": "inf", "e": ["-inf", None, True], "f": False}
    assert type(value["b"]) is int and type(value["f"]) is bool
    json.dumps(value, allow_nan=False)


# ---------------------------------------------------------------------------------------------------
# The empirical ROC in the plot, for every executor


def _roc_lines(monkeypatch):
    """Record the lines of every ROC figure a report draws: {label: (x, y)} per figure."""
    from empirical_dp import report

    drawn = []
    original = report.roc_figure

    def spy(result, *, mu=None):
        figure = original(result, mu=mu)
        drawn.append([{line.get_label(): (np.asarray(line.get_xdata()), np.asarray(line.get_ydata()))
                       for line in ax.get_lines()} for ax in figure.axes])
        return figure

    monkeypatch.setattr(report, "roc_figure", spy)
    return drawn


@pytest.mark.parametrize("extra", [(), ("--shards", "3"), ("--executor", "local", "--shards", "2", "--workers", "2")])
def test_report_roc_plot_draws_the_empirical_curve_on_every_executor(capsys, tmp_path, monkeypatch, extra):
    pytest.importorskip("matplotlib")
    from empirical_dp.report import EMPIRICAL_ROC_LABEL

    drawn = _roc_lines(monkeypatch)
    code, out, _ = run(capsys, "audit", "run", "tree", "--trials", "20000", "--report", str(tmp_path), "--quiet",
                       "--format", "json", *extra)
    assert code == 0 and (tmp_path / "roc_tree.png").exists()
    assert len(drawn) == 1
    want = audit(SCENARIOS["tree"], 20000, seed=0, shards=json.loads(out)["shards"])
    for panel in drawn[0]:  # linear and log–log
        empirical = [label for label in panel if label.startswith(EMPIRICAL_ROC_LABEL)]
        assert len(empirical) == 1, list(panel)
        assert any(label.startswith("tight Gaussian DP") for label in panel)
        fpr, tpr = panel[empirical[0]]
        # the points the counts give: the same as the serial audit's, sorted, between (0, 0) and (1, 1)
        want_fpr, want_tpr = roc_curve(want)
        np.testing.assert_array_equal(fpr, want_fpr)
        np.testing.assert_array_equal(tpr, want_tpr)
        assert fpr.size > 100 and (fpr[0], tpr[0], fpr[-1], tpr[-1]) == (0, 0, 1, 1)
        assert np.all(np.diff(fpr) >= 0)


def test_roc_curve_sorts_the_points_and_adds_the_end_points():
    result = audit(SCENARIOS["gaussian"], 2000, seed=3)
    fpr, tpr = roc_arrays(result)
    curve_fpr, curve_tpr = roc_curve(result)
    assert curve_fpr.size == fpr.size + 2 and (curve_fpr[0], curve_tpr[0], curve_fpr[-1], curve_tpr[-1]) == (0, 0, 1, 1)
    assert np.all(np.diff(curve_fpr) >= 0)
    assert sorted(zip(fpr, tpr)) == list(zip(curve_fpr[1:-1], curve_tpr[1:-1]))
    assert roc_curve(dataclasses.replace(result, roc=None)) is None
