"""The PLD-interval claims (proofs_checks/claims/foundations/pld.py) against malformed subjects, and the reference's
protocol functions (``reference.accounting.pld.pld_epsilon_interval`` / ``pld_delta_interval``) against its pairs. That every claim holds on the reference and rejects its
mutants is tests/test_claims.py's job."""

import math

import pytest

from proofs_checks.claim import FAIL, PASS
from proofs_checks.claims.foundations import pld as claims
from proofs_checks.protocols import Subject
from proofs_checks.runner import run_claim
from reference.accounting import events as ev
from reference.accounting import pld

GOOD_DELTA = pld.pld_delta_interval


def _subject(epsilon_interval, delta_interval=GOOD_DELTA):
    return Subject("hostile", pld_epsilon_interval=epsilon_interval, pld_delta_interval=delta_interval)


@pytest.mark.parametrize("answer", [
    (math.nan, 1.0), (0.0, math.nan), (math.inf, math.inf), (-1.0, 100.0), (2.0, 1.0), (0.0, 1.0, 2.0), "ab", None,
], ids=["nan_lower", "nan_upper", "infinite_lower", "negative_lower", "reversed", "three_values", "string", "none"])
def test_a_malformed_epsilon_interval_fails(answer):
    row = run_claim(claims.PLD_GAUSSIAN_CONTAINS_EXACT, _subject(lambda event, delta: answer), "quick")
    assert row["verdict"] == FAIL, row["detail"]


@pytest.mark.parametrize("answer", [(0.0, 1.5), (-0.1, 0.5), (0.5, 0.25)], ids=["above_one", "negative", "reversed"])
def test_a_malformed_delta_interval_fails(answer):
    subject = _subject(pld.pld_epsilon_interval, lambda event, epsilon: answer)
    row = run_claim(claims.PLD_ONE_STEP_CONTAINS_EXACT, subject, "quick")
    assert row["verdict"] == FAIL, row["detail"]


def test_an_infinite_epsilon_upper_is_valid():
    """ε_upper = +∞ is allowed by the protocol (valid, uninformative): it must not fail the claim on its own."""
    def epsilon_interval(event, delta):
        return pld.pld_epsilon_interval(event, delta)[0], math.inf

    row = run_claim(claims.PLD_GAUSSIAN_CONTAINS_EXACT, _subject(epsilon_interval), "quick")
    assert row["verdict"] == PASS, row["detail"]


@pytest.mark.parametrize("event", [
    ev.PoissonSampledEvent(0.1, ev.GaussianEvent(1.0)),
    ev.SelfComposedEvent(ev.GaussianEvent(2.0), 100),
    ev.SampledWithoutReplacementEvent(1000, 100, ev.GaussianEvent(1.0)),
    ev.LaplaceEvent(1.0),
], ids=["poisson", "gaussian_x100", "without_replacement", "laplace"])
def test_the_reference_adapters_are_pld_itself(event):
    pair = pld.pld_from_event(event)
    for delta in (1e-5, 1e-2):
        assert pld.pld_epsilon_interval(event, delta) == pair.epsilon_interval(delta)
    for epsilon in (0.0, 0.5):
        assert pld.pld_delta_interval(event, epsilon) == pair.delta_interval(epsilon)


@pytest.mark.parametrize("call, parameter", [
    (lambda: pld.pld_epsilon_interval(ev.GaussianEvent(1.0), 0.0), "delta"),
    (lambda: pld.pld_epsilon_interval(ev.GaussianEvent(1.0), math.nan), "delta"),
    (lambda: pld.pld_epsilon_interval(ev.GaussianEvent(1.0), 1.0), "delta"),
    (lambda: pld.pld_delta_interval(ev.GaussianEvent(1.0), -1.0), "epsilon"),
    (lambda: pld.pld_delta_interval(ev.GaussianEvent(1.0), math.inf), "epsilon"),
])
def test_the_reference_adapters_refuse_bad_values(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()
