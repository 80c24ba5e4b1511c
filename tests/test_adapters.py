"""Tests of proofs_checks.adapters: other libraries' accountants as subjects (anchors.md §1–§4).

Values are checked against closed forms computed here independently: full-batch RDP T·α/(2z²), the Gaussian privacy
profile Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle–Wang 2018 Thm 8), and the BBGHS conversion. Unavailability is
simulated by making the library's import fail.
"""

from __future__ import annotations

import importlib
import logging
import math
import warnings

import numpy as np
import pytest
from scipy.stats import norm

from proofs_checks.adapters import AdapterUnavailable, adapter_names, adapter_subjects, resolve
from proofs_checks.protocols import PROTOCOLS
from proofs_checks.subjects import Subject, SubjectError

ACCOUNTING_PROTOCOLS = (
    "rdp_poisson_gaussian",
    "epsilon_from_rdp",
    "epsilon_poisson_gaussian",
    "gaussian_delta",
    "noise_multiplier_poisson_gaussian",
)

ORDERS = [1.5, 2.0, 3.0, 8.0, 32.0, 64.0]


@pytest.fixture(autouse=True)
def _quiet():
    logging.getLogger("absl").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _subject_or_skip(name: str) -> Subject:
    try:
        return resolve(name)
    except SubjectError as exc:
        pytest.skip(str(exc))


def _gaussian_delta(epsilon, mu):
    return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)


def _bbghs_epsilon(orders, rdp, delta):
    orders, rdp = np.asarray(orders, float), np.asarray(rdp, float)
    eps = rdp + np.log1p(-1 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1)
    return float(eps.min())


# --- protocols and names -----------------------------------------------------------------------------------


def test_accounting_protocols_are_registered():
    for name in ACCOUNTING_PROTOCOLS:
        assert name in PROTOCOLS
        signature, semantics = PROTOCOLS[name]
        assert signature.startswith(name + "(") and semantics


def test_adapter_names_are_the_seven_subjects():
    assert set(adapter_names()) == {
        "dp_accounting.rdp", "dp_accounting.pld", "opacus.rdp", "opacus.prv", "opacus.gdp", "prv_accountant", "autodp",
    }


def test_adapter_subjects_partition_names_into_available_and_unavailable():
    subjects, unavailable = adapter_subjects()
    assert set(subjects) | set(unavailable) == set(adapter_names())
    assert not set(subjects) & set(unavailable)
    for name, subject in subjects.items():
        assert isinstance(subject, Subject) and subject.name == name
        assert set(subject.protocols) <= set(ACCOUNTING_PROTOCOLS)
        assert "epsilon_poisson_gaussian" in subject.protocols
    for reason in unavailable.values():
        assert "not installed" in reason


def test_adapter_subjects_selects_by_library_or_subject_name():
    subjects, unavailable = adapter_subjects(["opacus.gdp", "autodp"])
    assert set(subjects) | set(unavailable) == {"opacus.gdp", "autodp"}
    with pytest.raises(SubjectError, match="unknown library or adapter 'nope'"):
        adapter_subjects(["nope"])


def test_resolve_unknown_adapter_names_the_known_ones():
    with pytest.raises(SubjectError, match="unknown adapter subject 'opacus.zcdp'.*opacus.prv"):
        resolve("opacus.zcdp")


# --- unavailability ------------------------------------------------------------------------------------------


@pytest.fixture
def missing(monkeypatch):
    """Make every import of the given top-level package fail, as if it were not installed."""

    real_import = importlib.import_module

    def make_missing(package: str):
        def fake_import(name, package_=None):
            if name == package or name.startswith(package + "."):
                raise ModuleNotFoundError(f"No module named '{package}'")
            return real_import(name, package_) if package_ else real_import(name)

        monkeypatch.setattr(importlib, "import_module", fake_import)

    return make_missing


@pytest.mark.parametrize(
    "library, names",
    [
        ("dp_accounting", ("dp_accounting.rdp", "dp_accounting.pld")),
        ("opacus", ("opacus.rdp", "opacus.prv", "opacus.gdp")),
        ("prv_accountant", ("prv_accountant",)),
        ("autodp", ("autodp",)),
    ],
)
def test_missing_library_is_reported_not_crashed_on(missing, library, names):
    missing(library)
    module = importlib.import_module(f"proofs_checks.adapters.{library}")
    with pytest.raises(AdapterUnavailable, match=f"{library} not installed.*ModuleNotFoundError") as info:
        module.subjects()
    assert library in info.value.reason
    subjects, unavailable = adapter_subjects()
    assert set(names) <= set(unavailable) and not set(names) & set(subjects)
    assert all(library in unavailable[n] for n in names)
    with pytest.raises(SubjectError, match=f"adapter '{names[0]}' is unavailable: {library} not installed"):
        resolve(names[0])


# --- values --------------------------------------------------------------------------------------------------

RDP_SUBJECTS = ("dp_accounting.rdp", "opacus.rdp", "prv_accountant", "autodp")
EPSILON_SUBJECTS = ("dp_accounting.rdp", "dp_accounting.pld", "opacus.rdp", "opacus.prv", "opacus.gdp",
                    "prv_accountant", "autodp")
DELTA_SUBJECTS = ("dp_accounting.pld", "opacus.gdp", "autodp")


@pytest.mark.parametrize("name", RDP_SUBJECTS)
def test_full_batch_rdp_is_the_gaussian_closed_form(name):
    subject = _subject_or_skip(name)
    steps, z = 100, 2.0
    rdp = subject.rdp_poisson_gaussian(ORDERS, 1.0, z, steps)
    assert rdp.shape == (len(ORDERS),)
    np.testing.assert_allclose(rdp, steps * np.array(ORDERS) / (2 * z * z), rtol=1e-12)


@pytest.mark.parametrize("name", RDP_SUBJECTS)
def test_subsampled_rdp_is_finite_positive_below_full_batch_and_linear_in_steps(name):
    subject = _subject_or_skip(name)
    one = subject.rdp_poisson_gaussian(ORDERS, 0.01, 1.0, 1)
    many = subject.rdp_poisson_gaussian(ORDERS, 0.01, 1.0, 1000)
    assert np.all(np.isfinite(one)) and np.all(one > 0)
    assert np.all(one < np.array(ORDERS) / 2)  # subsampling amplifies: below α/(2z²)
    np.testing.assert_allclose(many, 1000 * one, rtol=1e-12)


@pytest.mark.parametrize("name", ("dp_accounting.rdp", "opacus.rdp"))
def test_epsilon_from_rdp_is_the_bbghs_conversion(name):
    subject = _subject_or_skip(name)
    orders = [2.0, 4.0, 8.0, 16.0, 32.0]
    rdp = [100 * a / 2 / 9.0 for a in orders]  # 100 Gaussian steps, z = 3
    expected = _bbghs_epsilon(orders, rdp, 1e-5)
    assert subject.epsilon_from_rdp(orders, rdp, 1e-5) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("name", EPSILON_SUBJECTS)
@pytest.mark.parametrize("q, z, steps", [(0.01, 1.0, 100), (1.0, 5.0, 10)])
def test_end_to_end_epsilon_is_a_finite_positive_float(name, q, z, steps):
    subject = _subject_or_skip(name)
    epsilon = subject.epsilon_poisson_gaussian(q, z, steps, 1e-5)
    assert isinstance(epsilon, float) and math.isfinite(epsilon) and epsilon > 0


@pytest.mark.parametrize("name", EPSILON_SUBJECTS)
def test_full_batch_epsilon_is_not_far_from_the_exact_gaussian_epsilon(name):
    # 10 steps at z = 5 are exactly √10/5-GDP; ε* from the closed form by bisection here.
    subject = _subject_or_skip(name)
    mu = math.sqrt(10) / 5
    lo, hi = 0.0, 50.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _gaussian_delta(mid, mu) > 1e-5 else (lo, mid)
    epsilon = subject.epsilon_poisson_gaussian(1.0, 5.0, 10, 1e-5)
    if name == "opacus.gdp":  # CLT μ = √(T(e^{1/z²} − 1)) > √T/z: an overstatement at q = 1
        assert epsilon > hi
    else:  # every other accountant gives a valid upper bound, within a factor 1.5 here
        assert hi * (1 - 1e-9) <= epsilon <= 1.5 * hi


@pytest.mark.parametrize("name", DELTA_SUBJECTS)
@pytest.mark.parametrize("epsilon, mu", [(0.5, 0.5), (1.0, 2.0), (3.0, 1.0)])
def test_gaussian_delta_is_the_balle_wang_profile(name, epsilon, mu):
    subject = _subject_or_skip(name)
    assert subject.gaussian_delta(epsilon, mu) == pytest.approx(_gaussian_delta(epsilon, mu), rel=1e-9)


@pytest.mark.parametrize("name", ("dp_accounting.rdp", "opacus.rdp", "opacus.gdp"))
def test_calibration_returns_a_noise_multiplier_meeting_the_target(name):
    subject = _subject_or_skip(name)
    z = subject.noise_multiplier_poisson_gaussian(2.0, 1e-5, 0.01, 100)
    assert isinstance(z, float) and z > 0
    achieved = subject.epsilon_poisson_gaussian(0.01, z, 100, 1e-5)
    assert achieved <= 2.0 * (1 + 1e-6)
    assert achieved >= 2.0 - 0.05  # not wildly over-noised (Opacus's tolerance is 0.01 in ε)
