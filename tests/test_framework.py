"""The claims framework itself: claim validation, subjects, Holm, soak, statistics helpers."""

import math

import numpy as np
import pytest

from proofs_checks.claim import FAIL, PASS, Claim, Evidence, Mutant
from proofs_checks.runner import run_claims, soak
from proofs_checks.stats import (
    bounded_mean_upper_test,
    claim_seed,
    clopper_pearson,
    empirical_bernstein_radius,
    holm_adjust,
    hotelling_mde,
    hotelling_mean_test,
)
from proofs_checks.subjects import Subject, SubjectError, reference_subject, resolve_subject

_NOOP = Mutant("noop", "does nothing", lambda s: s)


def _claim(**kw):
    base = dict(id="zo_o2nc.test.x", paper="zo_o2nc", location="-", statement="-", kind="deterministic",
                requires=("sample_sphere",), check=lambda s, c: Evidence(PASS), mutants=(_NOOP,))
    base.update(kw)
    return Claim(**base)


def test_claim_without_mutant_is_refused():
    with pytest.raises(ValueError, match="no mutant"):
        _claim(mutants=())


@pytest.mark.parametrize("field, value, message", [
    ("id", "Bad Id", "claim id"), ("paper", "nope", "paper"), ("kind", "vibes", "kind"),
    ("id", "dpzero.x.y", "must start with its paper key"), ("level", 0.0, "level"), ("requires", (), "requires"),
])
def test_claim_fields_validated(field, value, message):
    with pytest.raises(ValueError, match=message):
        _claim(**{field: value})


def test_seeds_are_derived_from_the_id():
    assert claim_seed("a.b.c") == claim_seed("a.b.c")
    assert claim_seed("a.b.c") != claim_seed("a.b.d")
    assert claim_seed("a.b.c", 1) != claim_seed("a.b.c", 0)


def test_errors_are_reported_not_raised():
    def boom(subject, ctx):
        raise RuntimeError("kaput")
    frame = run_claims([_claim(check=boom)], [reference_subject()], progress=False)
    assert frame.loc[0, "verdict"] == "error" and "kaput" in frame.loc[0, "detail"]


def test_holm_across_a_run_decides_verdicts():
    # Two claims with raw p = 0.6e-6: each alone fails at level 1e-6; Holm makes both 1.2e-6 → pass.
    check = lambda s, c: Evidence(FAIL, p_value=0.6e-6)
    claims = [_claim(id="zo_o2nc.test.a", check=check), _claim(id="zo_o2nc.test.b", check=check)]
    frame = run_claims(claims, [reference_subject()], progress=False)
    assert list(frame["verdict"]) == [PASS, PASS]
    np.testing.assert_allclose(frame["p_adjusted"], [1.2e-6, 1.2e-6])
    frame = run_claims(claims[:1], [reference_subject()], progress=False)
    assert frame.loc[0, "verdict"] == FAIL


def test_soak_counts_false_alarms():
    flaky = lambda s, c: Evidence(FAIL if c.seed % 2 else PASS, p_value=None)
    frame = soak([_claim(check=flaky)], [reference_subject()], runs=20, progress=False)
    row = frame.iloc[0]
    assert row["runs"] == 20 and 0 < row["false_alarms"] < 20
    assert row["rate_upper"] >= row["rate"]


def test_subject_protocol_names_checked():
    with pytest.raises(SubjectError, match="unknown protocol"):
        Subject("x", not_a_protocol=lambda: 0)
    with pytest.raises(SubjectError, match="does not provide"):
        Subject("x", sample_sphere=lambda *a: 0).replace(sample_ball=lambda *a: 0)


@pytest.mark.parametrize("spec, message", [
    ("nonsense", "module:attr"), ("no_such_module_xyz:f", "cannot import"), ("math:nothing", "no attribute"),
    ("math:pi", "not a Subject"), ("math:sqrt", "protocol"), ("missing.py:f", "no such file"),
])
def test_bad_subject_specs(spec, message):
    with pytest.raises(SubjectError, match=message):
        resolve_subject(spec)


def test_hotelling_power_is_what_it_says():
    # Simulate a shift of exactly the quoted MDE (level 1e-2 to keep it cheap): rejection rate ≈ 0.9.
    n, p, level = 200, 3, 1e-2
    mde = hotelling_mde(n, p, level)
    rng = np.random.default_rng(claim_seed("tests.hotelling_power"))
    shift = np.array([mde, 0.0, 0.0])
    rejections = sum(hotelling_mean_test(rng.standard_normal((n, p)) + shift, np.zeros(p), level).p_value < level
                     for _ in range(400))
    lo, hi = clopper_pearson(rejections, 400, 1e-4)
    assert lo <= 0.9 <= hi


def test_empirical_bernstein_covers_and_rejects():
    rng = np.random.default_rng(claim_seed("tests.eb"))
    x = rng.random(5000)  # mean 1/2, range 1
    assert bounded_mean_upper_test(x, 0.5, 1.0, 1e-6).p_value > 1e-6
    assert bounded_mean_upper_test(x, 0.4, 1.0, 1e-6).p_value < 1e-6
    r = empirical_bernstein_radius(x, 1.0, 1e-6)
    assert 0 < r < 0.1 and math.isfinite(r)


def test_holm_matches_definition():
    p = [0.01, 0.04, 0.03]
    np.testing.assert_allclose(holm_adjust(p), [0.03, 0.06, 0.06])
    assert holm_adjust([]).size == 0
