"""Honest verdicts (proofs_checks/runner.py): NaN fails, borrowed code is labelled, promised power is enforced,
and the soak measures calibration at any level."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpref import cli
from proofs_checks.authoring import MdeTarget, decide, combine, sometimes_nan
from proofs_checks.claim import BORROWED, BUDGETS, ERROR, FAIL, PASS, CheckContext, Claim, Evidence, Mutant
from proofs_checks.registry import load_claims
from proofs_checks.runner import run_claim, run_claims, soak, uniformity_p_value
from proofs_checks.stats import TestResult
from proofs_checks.subjects import Subject, fast_subject, reference_subject

_NOOP = Mutant("noop", "does nothing", lambda s: s)
CLAIMS = {c.id: c for c in load_claims()}


def _claim(**kw):
    base = dict(id="zo_o2nc.test.x", paper="zo_o2nc", location="-", statement="-", kind="monte_carlo",
                requires=("sample_sphere",), check=lambda s, c: Evidence(PASS), mutants=(_NOOP,))
    base.update(kw)
    return Claim(**base)


# --- non-finite outputs fail ------------------------------------------------------------------------------

def _nan_in_dimension(original):
    """A two-point estimator that is right except that its last coordinate is NaN."""
    def two_point_estimate(*args, **kwargs):
        g = np.array(original(*args, **kwargs), dtype=np.float64)
        g[..., -1] = np.nan
        return g
    return two_point_estimate


@pytest.mark.parametrize("claim_id", sorted(i for i, c in CLAIMS.items()
                                            if c.requires == ("two_point_estimate",) and c.kind != "backend"))
def test_a_nan_dimension_fails_every_two_point_claim(claim_id):
    subject = reference_subject()
    bad = subject.replace(label="nan_dim", two_point_estimate=_nan_in_dimension(subject.two_point_estimate))
    row = run_claim(CLAIMS[claim_id], bad, "quick")
    assert row["verdict"] == FAIL, row["detail"]
    assert "two_point_estimate (call" in row["detail"] and "non-finite" in row["detail"]


def test_always_nan_fails_the_sensitivity_claim_and_holm_cannot_rescue_it():
    claim = CLAIMS["zo_o2nc.lemma3_1.sensitivity"]
    subject = reference_subject()
    bad = subject.replace(label="all_nan", two_point_estimate=lambda *a, **k: np.full(np.shape(a[1]), np.nan))
    frame = run_claims([claim], [bad], progress=False)
    assert frame.loc[0, "verdict"] == FAIL and frame.loc[0, "p_value"] is None


def test_nonfinite_ok_protocols_are_not_watched():
    def check(subject, ctx):
        subject.sample_sphere(ctx.generator("x"), (2,), 3)
        return Evidence(PASS)
    nan_sampler = reference_subject().replace(label="nan", sample_sphere=lambda *a, **k: np.full((2, 3), np.nan))
    assert run_claim(_claim(check=check), nan_sampler)["verdict"] == FAIL
    assert run_claim(_claim(check=check, nonfinite_ok=("sample_sphere",)), nan_sampler)["verdict"] == PASS
    with pytest.raises(ValueError, match="nonfinite_ok names protocols the claim does not require"):
        _claim(nonfinite_ok=("sample_ball",))


def test_an_exception_after_a_nan_is_a_failure_not_an_error():
    def check(subject, ctx):
        value = subject.sample_sphere(ctx.generator("x"), (2,), 3)
        raise ValueError(f"cannot handle {value[0, 0]}")
    nan_sampler = reference_subject().replace(label="nan", sample_sphere=lambda *a, **k: np.full((2, 3), np.nan))
    row = run_claim(_claim(check=check), nan_sampler)
    assert row["verdict"] == FAIL and "non-finite" in row["detail"] and "ValueError" in row["detail"]


def test_sometimes_nan_mutant():
    subject = sometimes_nan("sample_sphere", every=2).apply(reference_subject())
    rng = np.random.default_rng(0)
    first, second = subject.sample_sphere(rng, (3,), 2), subject.sample_sphere(rng, (3,), 2)
    assert np.all(np.isfinite(first)) and np.isnan(second[0, 0]) and np.all(np.isfinite(second.reshape(-1)[1:]))
    with pytest.raises(ValueError, match="every must be an integer >= 1"):
        sometimes_nan("sample_sphere", every=0)


# --- borrowed code is labelled -----------------------------------------------------------------------------

def test_fast_running_only_borrowed_reference_code_is_labelled():
    claim = CLAIMS["zo_o2nc.sec1_5.sphere_norm"]
    fast = fast_subject()
    assert "sample_sphere" in fast.borrowed
    row = run_claim(claim, fast)
    assert row["verdict"] == BORROWED and "borrowed" in row["detail"]
    assert run_claim(claim, reference_subject())["verdict"] == PASS


def test_a_mutant_of_a_borrowed_protocol_is_no_longer_borrowed():
    fast = fast_subject()
    mutated = fast.replace(label="m", sample_sphere=fast.sample_sphere)
    assert "sample_sphere" not in mutated.borrowed


def test_the_summary_counts_own_passes_separately(capsys):
    assert cli.main(["claims", "run", "--id", "zo_o2nc.sec1_5.sphere_norm", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "1 pass (0 of them on a subject's own code" in err and "1 borrowed" in err


# --- promised power --------------------------------------------------------------------------------------

def _statistical(relative):
    def check(subject, ctx):
        test = TestResult(statistic=0.0, p_value=0.5, mde=relative, mde_unit="x")
        return decide(test, ctx, scale=1.0)
    return check


def test_underpowered_pass_is_an_error():
    claim = _claim(check=_statistical(0.5), mde_target=MdeTarget(quick=0.35, full=0.1))
    row = run_claim(claim, reference_subject(), "quick")
    assert row["verdict"] == ERROR and "underpowered: relative MDE 0.5 > the 0.35" in row["detail"]
    ok = _claim(check=_statistical(0.2), mde_target=MdeTarget(quick=0.35, full=0.1))
    row = run_claim(ok, reference_subject(), "quick")
    assert row["verdict"] == PASS and row["relative_mde"] == 0.2 and row["mde_target"] == 0.35
    assert run_claim(ok, reference_subject(), "full")["verdict"] == ERROR


def test_a_promise_without_a_measured_relative_mde_is_an_error():
    def check(subject, ctx):
        return decide(TestResult(0.0, 0.5, 0.1, "x"), ctx)  # no scale given
    row = run_claim(_claim(check=check, mde_target=MdeTarget(quick=0.35, full=0.1)), reference_subject())
    assert row["verdict"] == ERROR and "none reported" in row["detail"]


def test_mde_target_validation():
    with pytest.raises(ValueError, match="must be a finite number > 0"):
        MdeTarget(quick=0.0, full=0.1)
    with pytest.raises(ValueError, match="must not promise less than quick"):
        MdeTarget(quick=0.1, full=0.2)
    with pytest.raises(ValueError, match="must be an MdeTarget"):
        _claim(mde_target={"quick": 0.3, "full": 0.1})


def test_decide_and_combine_carry_the_relative_mde():
    ctx = CheckContext(budget=BUDGETS["quick"], seed=1)
    a = decide(TestResult(0.0, 0.5, 0.02, "x"), ctx, scale=0.1)
    b = decide(TestResult(0.0, 0.4, 0.01, "x"), ctx, scale=0.1)
    assert a.relative_mde == pytest.approx(0.2) and "0.2 of the checked quantity" in a.power
    both = combine([a, b], ctx)
    assert both.relative_mde == pytest.approx(0.2) and both.mde == pytest.approx(0.02)
    assert combine([a, decide(TestResult(0.0, 0.4, 0.01, "x"), ctx)], ctx).relative_mde is None
    with pytest.raises(ValueError, match="scale must be a finite number > 0"):
        decide(TestResult(0.0, 0.5, 0.02, "x"), ctx, scale=0.0)


def test_claims_list_shows_the_promised_power(capsys):
    assert cli.main(["claims", "list", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert all("mde_target" in r and "power_note" in r for r in rows)


# --- calibration (soak) ----------------------------------------------------------------------------------

def _p_value_claim(p_of_seed):
    def check(subject, ctx):
        p = p_of_seed(ctx.seed)
        return Evidence(FAIL if p < ctx.level else PASS, p_value=p)
    return _claim(check=check)


def test_soak_measures_the_false_alarm_rate_at_any_level():
    uniform = _p_value_claim(lambda seed: np.random.default_rng(seed).random())
    frame = soak([uniform], [reference_subject()], runs=200, level=0.05, progress=False)
    row = frame.iloc[0]
    assert row["statistical"] and row["runs"] == 200 and row["level"] == 0.05
    assert row["rate_lower"] <= 0.05 <= row["rate_upper"] and row["calibrated"]
    assert row["uniformity_p"] > 1e-3 and frame.attrs["pooled_p_values"] == 200


def test_soak_flags_a_miscalibrated_claim_and_runs_deterministic_claims_once():
    too_small = _p_value_claim(lambda seed: 0.2 * np.random.default_rng(seed).random())  # P(p < 0.05) = 0.25
    deterministic = _claim(id="zo_o2nc.test.det", check=lambda s, c: Evidence(PASS))
    frame = soak([too_small, deterministic], [reference_subject()], runs=100, level=0.05, progress=False)
    bad, det = frame.iloc[0], frame.iloc[1]
    assert not bad["calibrated"] and bad["rate_lower"] > 0.05 and bad["uniformity_p"] < 1e-6
    assert not det["statistical"] and det["runs"] == 1 and det["calibrated"]


def test_uniformity_is_one_sided():
    assert uniformity_p_value(np.linspace(0.5, 1.0, 100)) > 0.5  # conservative p-values are allowed
    assert uniformity_p_value(np.linspace(0.0, 0.5, 100)) < 1e-6
    assert uniformity_p_value([0.3]) is None


@pytest.mark.parametrize("argv, message", [
    (["claims", "run", "--level", "0.05"], "--level applies to --soak runs only"),
    (["claims", "run", "--soak", "2", "--level", "1.5"], "--level must lie in (0, 1)"),
])
def test_soak_usage_errors(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_soak_exit_status(capsys):
    code = cli.main(["claims", "run", "--id", "zo_o2nc.sec1_5.sphere_second_moment", "--subject", "fast", "--soak", "3",
                     "--level", "0.05", "--format", "json", "--no-progress"])
    out, err = capsys.readouterr()
    rows = json.loads(out)
    assert rows[0]["runs"] == 3 and "pooled uniformity test of 3 p-values" in err
    assert code == (0 if rows[0]["calibrated"] else 1)
