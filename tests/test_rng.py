"""Randomness contract and samplers (reference/rng.py)."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.precision import working_precision
from reference.rng import Streams, encode_key, sample_ball, sample_gaussian, sample_sphere

key_parts = st.one_of(st.integers(min_value=0, max_value=2**40), st.text(max_size=8))


def test_same_key_same_stream_regardless_of_call_order():
    a = Streams(11)
    first = a.generator("dpzero", "direction", 3).standard_normal(4)
    a.generator("dpzero", "noise", 3).standard_normal(100)  # unrelated draws in between
    again = Streams(11).generator("dpzero", "direction", 3).standard_normal(4)
    np.testing.assert_array_equal(first, again)


def test_keys_are_platform_stable():
    # SHA-256 based: the encoding of a string never depends on Python's salted hash().
    digest = __import__("hashlib").sha256(b"a").digest()
    lo, hi = int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:8], "little")
    assert encode_key(("a", 1)) == (1, lo, hi, 0, 1)


def _decode_key(words):
    """Inverse of encode_key (strings decode to their 64-bit digest prefix): proves the encoding prefix-free."""
    parts, i = [], 0
    while i < len(words):
        tag = words[i]
        if tag == 0:
            parts.append(("int", words[i + 1]))
            i += 2
        elif tag == 1:
            parts.append(("str", words[i + 1] | words[i + 2] << 32))
            i += 3
        elif tag == 2:
            k = words[i + 1]
            parts.append(("int", sum(w << (32 * j) for j, w in enumerate(words[i + 2:i + 2 + k]))))
            i += 2 + k
        else:
            raise AssertionError(f"unknown tag {tag}")
    return parts


wide_key_parts = st.one_of(st.integers(min_value=0, max_value=2**200), st.text(max_size=6))


@given(st.lists(wide_key_parts, min_size=1, max_size=5))
@settings(max_examples=300, deadline=None)
def test_key_encoding_is_injective(key):
    # Every word is a uint32 (NumPy never splits it), and the words decode back to the key.
    words = encode_key(tuple(key))
    assert all(0 <= w < 2**32 for w in words)
    expected = [("int", p) if isinstance(p, int) else
                ("str", int.from_bytes(__import__("hashlib").sha256(p.encode()).digest()[:8], "little")) for p in key]
    assert _decode_key(words) == expected


def test_former_collisions_are_gone():
    # Without length prefixes (2^32,) and (0, 1) both became the words [0, 0, 1]; seeds >= 2^128 spilled into keys.
    s = Streams(1)
    assert s.generator(2**32).random() != s.generator(0, 1).random()
    assert encode_key((2**32,)) != encode_key((0, 1))
    with pytest.raises(ValueError, match="seed"):
        Streams(2**128)
    Streams(2**128 - 1).generator("k").random()


@given(st.integers(0, 2**128 - 1), st.integers(0, 2**128 - 1), st.lists(wide_key_parts, min_size=1, max_size=3),
       st.lists(wide_key_parts, min_size=1, max_size=3))
@settings(max_examples=100, deadline=None)
def test_distinct_seed_key_pairs_give_distinct_streams(seed_a, seed_b, key_a, key_b):
    x = Streams(seed_a).generator(*key_a).integers(0, 2**63, size=4)
    y = Streams(seed_b).generator(*key_b).integers(0, 2**63, size=4)
    same = seed_a == seed_b and encode_key(tuple(key_a)) == encode_key(tuple(key_b))
    assert same == bool(np.array_equal(x, y))


@given(st.lists(key_parts, min_size=1, max_size=4), st.lists(key_parts, min_size=1, max_size=4))
@settings(max_examples=50, deadline=None)
def test_distinct_keys_give_distinct_streams(k1, k2):
    s = Streams(5)
    x = s.generator(*k1).integers(0, 2**63, size=4)
    y = s.generator(*k2).integers(0, 2**63, size=4)
    assert (tuple(k1) == tuple(k2)) == bool(np.array_equal(x, y))


def test_type_tag_separates_int_and_str_keys():
    s = Streams(0)
    assert s.generator(1).random() != s.generator("1").random()


def test_child_scope_equals_full_key():
    s = Streams(9)
    np.testing.assert_array_equal(
        s.child("dpzero").generator("noise", 2).random(3), s.generator("dpzero", "noise", 2).random(3)
    )


@pytest.mark.parametrize("bad", [-1, 1.5, "7", True])
def test_bad_seed_named(bad):
    with pytest.raises((TypeError, ValueError), match="seed"):
        Streams(bad)


@pytest.mark.parametrize("bad", [(-1,), (1.0,), (None,), (True,), ()])
def test_bad_key_rejected(bad):
    with pytest.raises((TypeError, ValueError), match="key"):
        Streams(0).generator(*bad)


@given(st.integers(1, 40), st.floats(1e-3, 1e3), st.integers(0, 2**32))
@settings(max_examples=40, deadline=None)
def test_sphere_and_ball_geometry(d, radius, seed):
    rng = Streams(seed).generator("g")
    u = sample_sphere(rng, (5,), d, radius)
    assert u.shape == (5, d)
    np.testing.assert_allclose(np.linalg.norm(u, axis=1), radius, rtol=1e-13)
    v = sample_ball(Streams(seed).generator("b"), (5,), d, radius)
    assert np.all(np.linalg.norm(v, axis=1) <= radius * (1 + 1e-13))


def test_mpmath_samples_come_from_the_same_draws():
    with working_precision(40):
        for sampler, kwargs in ((sample_sphere, {"radius": 2.0}), (sample_ball, {"radius": 0.5}), (sample_gaussian, {})):
            f = sampler(Streams(3).generator("k"), (4,), 6, **kwargs)
            m = sampler(Streams(3).generator("k"), (4,), 6, arithmetic="mpmath", **kwargs)
            assert m.dtype == object and isinstance(m[0, 0], mpmath.mpf)
            np.testing.assert_allclose(np.array(m, dtype=float), f, rtol=1e-14)
        # the mpmath sphere point has norm = radius to working precision, far below float64 rounding
        m = sample_sphere(Streams(3).generator("k"), (1,), 6, 2.0, arithmetic="mpmath")[0]
        assert abs(mpmath.sqrt(mpmath.fsum(x * x for x in m)) - 2) < mpmath.mpf(10) ** -35


def test_draw_schedule_documented():
    rng = Streams(1).generator("s")
    g = Streams(1).generator("s").standard_normal((3, 4))
    u = sample_sphere(rng, (3,), 4)
    np.testing.assert_allclose(u, g / np.linalg.norm(g, axis=1, keepdims=True), rtol=1e-15)
    # ball: the radii come after the Gaussian block
    ref = Streams(1).generator("s")
    g = ref.standard_normal((3, 4))
    radii = ref.random(3) ** (1 / 4)
    v = sample_ball(Streams(1).generator("s"), (3,), 4)
    np.testing.assert_allclose(v, g / np.linalg.norm(g, axis=1, keepdims=True) * radii[:, None], rtol=1e-14)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: sample_sphere(np.random.default_rng(0), (2,), 0), "d"),
        (lambda: sample_sphere(np.random.default_rng(0), (2,), 3, radius=-1.0), "radius"),
        (lambda: sample_sphere(np.random.default_rng(0), (2,), 3, radius=math.nan), "radius"),
        (lambda: sample_ball(np.random.default_rng(0), (2,), 3, radius=math.inf), "radius"),
        (lambda: sample_gaussian(np.random.default_rng(0), (-2,), 3), "shape"),
        (lambda: sample_sphere(np.random.default_rng(0), (2,), 3, arithmetic="float32"), "arithmetic"),
        (lambda: sample_sphere(np.random.RandomState(0), (2,), 3), "rng"),
    ],
)
def test_bad_sampler_inputs_named(call, name):
    with pytest.raises((TypeError, ValueError), match=name):
        call()
