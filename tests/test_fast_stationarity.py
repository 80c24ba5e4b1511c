"""The fast minimum-norm point (non-negative least squares) against the reference's Wolfe algorithm, and the
closed-form subjects (mpmath path for ``reference``, float64 path for ``fast``)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from proofs_checks.subjects import fast_subject, reference_subject
from reference import smoothing
from reference import stationarity as ref
from reference.fast import stationarity as fast

finite_rows = hnp.arrays(
    np.float64,
    st.tuples(st.integers(1, 12), st.integers(1, 5)),
    elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=200, deadline=None)
@given(finite_rows)
def test_intervals_overlap_and_weights_are_convex(rows):
    want, got = ref.min_norm_point(rows), fast.min_norm_point(rows)
    assert got.lower <= want.upper and want.lower <= got.upper  # both contain the exact minimum norm
    assert np.all(got.weights >= 0) and math.isclose(float(got.weights.sum()), 1.0, rel_tol=1e-12)
    assert got.lower <= got.norm <= got.upper


def test_solves_known_hulls():
    square = np.array([[1.0, 1.0], [1.0, -1.0], [3.0, 1.0], [3.0, -1.0]])
    result = fast.min_norm_point(square)
    assert result.lower <= 1.0 <= result.upper and result.converged and result.gap < 1e-13
    origin_inside = np.array([[-1.0, -2.0], [2.0, 4.0], [0.5, 1.0]])
    assert fast.min_norm_point(origin_inside).lower == 0.0
    zeros = fast.min_norm_point(np.zeros((3, 4)))
    assert zeros.norm == 0.0 and zeros.upper == 0.0


def test_iteration_cap_returns_a_vertex_with_a_valid_interval():
    rows = np.random.default_rng(0).standard_normal((40, 6)) + 0.2
    capped, exact = fast.min_norm_point(rows, max_iterations=1), ref.min_norm_point(rows)
    assert not capped.converged and np.count_nonzero(capped.weights) == 1
    assert capped.lower <= exact.upper and exact.lower <= capped.upper


@pytest.mark.parametrize("bad, match", [
    (np.zeros((0, 3)), "shape"),
    (np.array([[np.nan, 1.0]]), "gradients"),
    (np.array([1.0, 2.0]), "gradients"),
])
def test_refuses_what_the_reference_refuses(bad, match):
    for module in (ref, fast):
        with pytest.raises((ValueError, TypeError), match=match):
            module.min_norm_point(bad)
    with pytest.raises(ValueError, match="tolerance"):
        fast.min_norm_point(np.ones((2, 2)), tolerance=0.0)


def test_closed_form_subjects_run_their_own_arithmetic():
    r, radius, d = 0.31, 0.5, 7
    with mpmath.workdps(40):
        exact = float(smoothing.smoothed_ridge_slope(mpmath.mpf(r), mpmath.mpf(radius), d, arithmetic="mpmath"))
    assert reference_subject().smoothed_ridge_slope(r, radius, d) == exact
    assert fast_subject().smoothed_ridge_slope(r, radius, d) == float(
        smoothing.smoothed_ridge_slope(r, radius, d, arithmetic="float64"))
    assert "smoothed_ridge_slope" not in fast_subject().borrowed
    assert "min_norm_point" not in fast_subject().borrowed
