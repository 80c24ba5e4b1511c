"""Precision helpers (reference/precision.py) against mpmath at higher precision."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import precision as P

finite = st.floats(-700, 700, allow_nan=False)


@given(finite, finite)
@settings(max_examples=100, deadline=None)
def test_log_add_matches_direct_sum(a, b):
    with P.working_precision(60):
        got = P.log_add(a, b)
        want = mpmath.log(mpmath.exp(a) + mpmath.exp(b))
        assert abs(got - want) <= mpmath.mpf(10) ** -50 * max(1, abs(want))


@given(finite, st.floats(0, 50))
@settings(max_examples=100, deadline=None)
def test_log_sub_inverts_log_add(b, gap):
    with P.working_precision(60):
        a = P.log_add(b, b - gap)  # log(e^b + e^{b-gap}), rounded at 60 digits
        # the subtraction amplifies a's rounding error by e^gap: that is the conditioning, not a bug
        tolerance = mpmath.mpf(10) ** -57 * mpmath.exp(gap) * max(1, abs(b))
        assert abs(P.log_sub(a, b) - (b - gap)) <= tolerance


def test_log_sub_refuses_negative_results():
    with pytest.raises(ValueError, match="a >= b"):
        P.log_sub(0.0, 1.0)
    assert P.log_sub(1.0, 1.0) == -mpmath.inf


@pytest.mark.parametrize("x", [-1e-30, -1e-5, -0.5, -math.log(2), -2.0, -800.0])
def test_log1mexp(x):
    with P.working_precision(200):  # the naive oracle loses ~30 digits at x = -1e-30; 200 leaves plenty
        want = mpmath.log(1 - mpmath.exp(mpmath.mpf(x)))
    with P.working_precision(80):
        assert abs(P.log1mexp(x) - want) <= mpmath.mpf(10) ** -75 * max(1, abs(want))
    with pytest.raises(ValueError, match="x <= 0"):
        P.log1mexp(0.1)


def test_log_erfc_far_tail_is_finite():
    with P.working_precision(30):
        assert abs(P.log_erfc(30) - mpmath.log(mpmath.erfc(30))) < mpmath.mpf(10) ** -25
        assert mpmath.isfinite(P.log_erfc(1e5))


def test_logsumexp():
    with P.working_precision(40):
        vals = [-1000, -1001, -999.5]
        want = mpmath.log(mpmath.fsum(mpmath.exp(v) for v in vals))
        assert abs(P.logsumexp(vals) - want) < mpmath.mpf(10) ** -35
    assert P.logsumexp([]) == -mpmath.inf


def test_vector_helpers_keep_arithmetic():
    v = np.array([3.0, 4.0])
    assert P.norm(v) == 5.0 and isinstance(P.dot(v, v), float)
    vm = P.to_mp(v)
    assert isinstance(P.norm(vm), mpmath.mpf) and P.norm(vm) == 5
    assert isinstance(P.dot(vm, v), mpmath.mpf)
    clipped = P.clip_norm(vm, 1)
    assert abs(P.norm(clipped) - 1) < mpmath.mpf(10) ** -14
    np.testing.assert_array_equal(P.clip_norm(np.zeros(3), 1.0), np.zeros(3))
    np.testing.assert_allclose(P.to_float(P.to_mp(np.array([0.1, -2.5]))), [0.1, -2.5], rtol=0)


def test_to_float_refuses_overflow():
    with pytest.raises(OverflowError):
        P.to_float(mpmath.mpf("1e400"))


def test_working_precision_validates_and_restores():
    before = mpmath.mp.dps
    with P.working_precision(70):
        assert mpmath.mp.dps == 70
    assert mpmath.mp.dps == before
    with pytest.raises(ValueError, match="dps"):
        with P.working_precision(5):
            pass
