"""Tests for reference.mechanisms and reference.fast.mechanisms.

zo_o2nc §8 tests 3–9 (NODE, Fenwick form, prefix identity, participation counts, tree covariance,
TREE state) and dpzero §1.2 (clipping, replace-one sensitivity 2C/n attained by +Ce → −Ce), plus
backend agreement (fast vs reference, same draws) and input validation.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from reference import mechanisms as ref
from reference.fast import mechanisms as fast
from reference.precision import norm, to_mp, working_precision

BACKENDS = [pytest.param(ref, id="reference"), pytest.param(fast, id="fast")]
HYP = settings(max_examples=150, deadline=None)


def popcount(t: int) -> int:
    return bin(t).count("1")


def floor_log2(n: int) -> int:
    return n.bit_length() - 1


def exact_norm(v: np.ndarray):
    """‖v‖ of a float64 vector, computed in mpmath at 50 digits (no over/underflow, no rounding)."""
    with working_precision(50):
        return norm(to_mp(np.asarray(v, dtype=np.float64)))


# ---------------------------------------------------------------------------------------------------
# NODE and Fenwick facts (zo_o2nc §1.7, Alg 5, Remark 4.2; §8 tests 3–5)


def test_node_literal_values():
    assert ref.tree_node(7) == [(1, 4), (5, 6), (7, 7)]
    assert ref.tree_node(8) == [(1, 8)]
    assert ref.tree_node(13) == [(1, 8), (9, 12), (13, 13)]
    assert ref.tree_node(1) == [(1, 1)]
    assert ref.tree_node(2) == [(1, 2)]
    assert ref.tree_node(3) == [(1, 2), (3, 3)]


def test_lowbit_and_chains_literal_values():
    assert [ref.lowbit(t) for t in (1, 2, 3, 4, 6, 12, 96)] == [1, 2, 1, 4, 2, 4, 32]
    assert ref.fenwick_chain(13) == [13, 12, 8]
    assert ref.fenwick_chain(16) == [16]
    assert ref.participation_chain(3, 16) == [3, 4, 8, 16]
    assert ref.participation_chain(1, 10) == [1, 2, 4, 8]
    assert ref.participation_chain(5, 5) == [5]
    assert ref.participation_count(1, 1) == 1
    assert fast.tree_node is ref.tree_node and fast.participation_chain is ref.participation_chain


def test_node_structure_and_fenwick_form_up_to_2048():
    for t in range(1, 2049):
        nodes = ref.tree_node(t)
        assert nodes == ref.tree_node_fenwick(t), t
        assert [b for _, b in nodes] == sorted(ref.fenwick_chain(t)), t
        assert len(nodes) == popcount(t), t
        # disjoint dyadic intervals covering [1, t], in increasing order
        assert nodes[0][0] == 1 and nodes[-1][1] == t, t
        for (_, b), (a_next, _) in zip(nodes, nodes[1:]):
            assert a_next == b + 1, t
        for a, b in nodes:
            length = b - a + 1
            assert length & (length - 1) == 0 and (a - 1) % length == 0, (t, a, b)
        # Remark 4.2: |NODE(t)| ≤ ⌈log2 t⌉ ≤ 2 ln t holds for t ≥ 2 and fails at t = 1 (erratum E4)
        if t >= 2:
            assert len(nodes) <= math.ceil(math.log2(t)) <= 2 * math.log(t), t
    assert len(ref.tree_node(1)) == 1 > 2 * math.log(1)


def test_participation_chain_is_the_set_of_nodes_containing_q():
    for n in range(1, 65):
        for q in range(1, n + 1):
            containing = [b for b in range(1, n + 1) if b - (b & -b) + 1 <= q <= b]
            assert ref.participation_chain(q, n) == containing, (q, n)


def test_max_participation_count_is_floor_log2_plus_one_only_at_q1():
    for n in range(1, 1025):
        counts = [ref.participation_count(q, n) for q in range(1, n + 1)]
        top = max(counts)
        assert top == floor_log2(n) + 1, n
        assert [q for q, c in enumerate(counts, start=1) if c == top] == [1], n
        if n >= 2:
            assert max(counts[1:]) == floor_log2(n), n
    for n in (1, 2, 3, 7, 8, 100, 1024):
        assert ref.max_participation_count(n) == floor_log2(n) + 1


# ---------------------------------------------------------------------------------------------------
# Tree covariance (zo_o2nc §1.7, Cor. 4.5; §8 test 8)


def _fenwick_matrix(n: int) -> np.ndarray:
    """R[t−1, b−1] = 1[(·, b) ∈ NODE(t)], built from the literal NODE loop."""
    matrix = np.zeros((n, n))
    for t in range(1, n + 1):
        for _, b in ref.tree_node(t):
            matrix[t - 1, b - 1] = 1.0
    return matrix


def test_tree_noise_covariance_equals_r_diag_r_transpose():
    rng = np.random.default_rng(3)
    stds = rng.uniform(0.1, 2.0, size=40)
    matrix = _fenwick_matrix(40)
    exact = matrix @ np.diag(stds**2) @ matrix.T
    for t in range(1, 41):
        for t_other in range(1, 41):
            got = ref.tree_noise_covariance(t, t_other, stds)
            assert isinstance(got, float)
            assert got == pytest.approx(exact[t - 1, t_other - 1], rel=1e-13, abs=0)
    constant = np.full(64, 1.3)
    for t in range(1, 65):  # Cor. 4.5 exact: E‖TREE(t)‖²/d = popcount(t)·σ²
        assert ref.tree_noise_covariance(t, t, constant) == pytest.approx(popcount(t) * 1.3**2, rel=1e-14)
    with working_precision(50):
        got = ref.tree_noise_covariance(13, 15, to_mp(np.array([0.5] * 16)))
        assert isinstance(got, mpmath.mpf) and got == mpmath.mpf("0.5")  # R(13) ∩ R(15) = {8, 12}


def test_tree_covariance_monte_carlo():
    # zo_o2nc §8 test 8: T = 16, d = 3, σ = 1.3, N = 2e4 epochs; every entry within 5·SE.
    horizon, d, sigma, epochs = 16, 3, 1.3, 20_000
    rng = np.random.default_rng(20240616)
    xi = sigma * rng.standard_normal((epochs, horizon, d))
    tree = fast.tree_prefix_noise(xi)  # (N, T, d)
    stds = np.full(horizon, sigma)
    var = np.array([ref.tree_noise_covariance(t, t, stds) for t in range(1, horizon + 1)])
    for t in range(1, horizon + 1):
        for t_other in range(t, horizon + 1):
            c = ref.tree_noise_covariance(t, t_other, stds)
            v1, v2 = var[t - 1], var[t_other - 1]
            prod = tree[:, t - 1, :, None] * tree[:, t_other - 1, None, :]  # (N, d, d)
            mean = prod.mean(axis=0)
            for j in range(d):
                for k in range(d):
                    expected = c if j == k else 0.0
                    se = math.sqrt((v1 * v2 + expected**2) / epochs)
                    assert abs(mean[j, k] - expected) < 5 * se, (t, t_other, j, k)
    squared_norms = (tree**2).sum(axis=-1).mean(axis=0)
    for t in range(1, horizon + 1):
        expected = popcount(t) * d * sigma**2
        se = math.sqrt(2 * d * (popcount(t) * sigma**2) ** 2 / epochs)
        assert abs(squared_norms[t - 1] - expected) < 5 * se, t


# ---------------------------------------------------------------------------------------------------
# Tree aggregation: prefix identity (zo_o2nc Thm 4.3 proof; §8 test 6)


def test_prefix_identity_float64():
    rng = np.random.default_rng(11)
    for n, d in ((1, 1), (7, 2), (64, 3), (1024, 2)):
        leaves = rng.standard_normal((n, d))
        released = ref.tree_aggregate(leaves, np.zeros((n, d)))
        assert released.dtype == np.float64 and released.shape == (n, d)
        np.testing.assert_allclose(released, np.cumsum(leaves, axis=0), rtol=0, atol=1e-10)
        # integer-valued leaves: every partial sum is exact, so the identity is exact
        integers = rng.integers(-1000, 1000, size=(n, d)).astype(np.float64)
        np.testing.assert_array_equal(ref.tree_aggregate(integers, np.zeros((n, d))), np.cumsum(integers, axis=0))
        np.testing.assert_array_equal(fast.tree_aggregate(integers, np.zeros((n, d))), np.cumsum(integers, axis=0))


def test_prefix_identity_mpmath():
    rng = np.random.default_rng(12)
    n, d = 40, 2
    with working_precision(50):
        leaves = to_mp(rng.standard_normal((n, d))) / 3  # thirds: not representable, so rounding matters
        released = ref.tree_aggregate(leaves, to_mp(np.zeros((n, d))))
        assert released.dtype == object and isinstance(released[0, 0], mpmath.mpf)
        for t in range(1, n + 1):
            for j in range(d):
                prefix = mpmath.fsum(leaves[i, j] for i in range(t))
                assert abs(released[t - 1, j] - prefix) < mpmath.mpf("1e-45")


def test_tree_aggregate_with_noise_is_prefix_plus_tree():
    rng = np.random.default_rng(13)
    n, d = 37, 3
    stds = rng.uniform(0.5, 1.5, size=n)
    leaves = rng.standard_normal((n, d))
    mech = ref.TreeMechanism(d, stds, np.random.default_rng(99))
    tree = np.array([mech(t) for t in range(1, n + 1)])
    released = ref.tree_aggregate(leaves, mech.node_noise)
    np.testing.assert_allclose(released, np.cumsum(leaves, axis=0) + tree, rtol=1e-12, atol=1e-12)
    # and P = R·N: the literal release equals prefix sums plus R ξ with R from NODE
    np.testing.assert_allclose(released, np.cumsum(leaves, axis=0) + _fenwick_matrix(n) @ mech.node_noise, atol=1e-12)


# ---------------------------------------------------------------------------------------------------
# TreeMechanism (Alg 5; §8 test 9) and the draw schedule


def test_numpy_fact_sequential_rows_equal_one_matrix_draw():
    # The draw schedule of TreeMechanism relies on this NumPy fact; it holds for PCG64 standard_normal.
    for d in (1, 3, 8):
        a = np.random.default_rng(5)
        rows = np.array([a.standard_normal(d) for _ in range(50)])
        matrix = np.random.default_rng(5).standard_normal((50, d))
        np.testing.assert_array_equal(rows, matrix)


def test_tree_mechanism_draws_equal_tree_noise_all():
    horizon, d = 23, 4
    stds = np.linspace(0.0, 2.0, horizon)  # σ_1 = 0: still draws
    mech = ref.TreeMechanism(d, stds, np.random.default_rng(7))
    outputs = np.array([mech(t) for t in range(1, horizon + 1)])
    xi = fast.tree_noise_all(stds, d, np.random.default_rng(7))
    assert xi.shape == (horizon, d)
    np.testing.assert_array_equal(mech.node_noise, xi)
    np.testing.assert_array_equal(outputs, fast.tree_prefix_noise(xi))  # same order of additions
    np.testing.assert_array_equal(xi[0], np.zeros(d))


def test_tree_mechanism_order_errors_and_reset():
    rng = np.random.default_rng(8)
    mech = ref.TreeMechanism(2, [1.0] * 6, rng)
    with pytest.raises(ValueError, match=r"t must be 1 \(new epoch\) or 1 .*got t=2"):
        mech(2)
    assert mech.node_noise.shape == (0, 2)
    mech(1)
    mech(2)
    for bad in (2, 4, 6):
        with pytest.raises(ValueError, match=rf"t must be 1 \(new epoch\) or 3 .*got t={bad}"):
            mech(bad)
    with pytest.raises(ValueError, match="t must be <= 6"):
        mech(7)
    with pytest.raises(ValueError, match="t must be >= 1"):
        mech(0)
    with pytest.raises(TypeError, match="t must be an integer"):
        mech(3.0)
    # a refused call draws nothing: the next valid call continues the stream
    twin = np.random.default_rng(8)
    expected = twin.standard_normal((3, 2))
    mech(3)
    np.testing.assert_array_equal(mech.node_noise, expected)
    # t = 1 starts a new epoch: stored noise is forgotten, the stream continues
    out = mech(1)
    np.testing.assert_array_equal(mech.node_noise, twin.standard_normal((1, 2)))
    np.testing.assert_array_equal(out, mech.node_noise[0])
    mech.reset()
    assert mech.node_noise.shape == (0, 2)
    with pytest.raises(ValueError, match="got t=2"):
        mech(2)


def test_tree_mechanism_new_epoch_noise_is_uncorrelated():
    # §8 test 9: epochs draw fresh noise; TREE(4) of consecutive epochs has |corr| < 5·SE.
    horizon, epochs = 4, 2000
    mech = ref.TreeMechanism(1, [1.0] * horizon, np.random.default_rng(9))
    last = []
    for _ in range(epochs):
        for t in range(1, horizon + 1):
            out = mech(t)
        last.append(out[0])
    last = np.array(last)
    corr = np.corrcoef(last[0::2], last[1::2])[0, 1]
    assert abs(corr) < 5 / math.sqrt(epochs // 2)


def test_tree_mechanism_mpmath():
    with working_precision(50):
        stds = to_mp(np.array([1.0, 0.5, 2.0, 0.25])) / 3
        mech = ref.TreeMechanism(2, stds, np.random.default_rng(10))
        outs = [mech(t) for t in range(1, 5)]
        z = np.random.default_rng(10).standard_normal((4, 2))
        for t, out in enumerate(outs, start=1):
            assert out.dtype == object and isinstance(out[0], mpmath.mpf)
            for j in range(2):
                exact = mpmath.fsum(stds[b - 1] * mpmath.mpf(z[b - 1, j]) for _, b in ref.tree_node(t))
                assert abs(out[j] - exact) < mpmath.mpf("1e-45")
        assert mech.node_noise.dtype == object and mech.node_noise.shape == (4, 2)


# ---------------------------------------------------------------------------------------------------
# Gaussian mechanism: one draw of the value's shape


@pytest.mark.parametrize("mod", BACKENDS)
def test_gaussian_mechanism_draw_schedule(mod):
    value = np.arange(6.0).reshape(2, 3)
    out = mod.gaussian_mechanism(value, 0.7, np.random.default_rng(4))
    np.testing.assert_array_equal(out, value + 0.7 * np.random.default_rng(4).standard_normal((2, 3)))
    scalar = mod.gaussian_mechanism(2.5, 0.7, np.random.default_rng(4))
    assert isinstance(scalar, float) and scalar == 2.5 + 0.7 * np.random.default_rng(4).standard_normal()
    # σ = 0: no noise, but exactly one draw is consumed
    rng, twin = np.random.default_rng(5), np.random.default_rng(5)
    np.testing.assert_array_equal(mod.gaussian_mechanism(value, 0.0, rng), value)
    twin.standard_normal((2, 3))
    assert rng.standard_normal() == twin.standard_normal()


def test_gaussian_mechanism_mpmath():
    with working_precision(50):
        value = mpmath.mpf(1) / 3
        sigma = mpmath.mpf(2) / 7
        out = ref.gaussian_mechanism(value, sigma, np.random.default_rng(6))
        z = np.random.default_rng(6).standard_normal()
        assert isinstance(out, mpmath.mpf) and abs(out - (value + sigma * mpmath.mpf(z))) < mpmath.mpf("1e-48")
        vec = to_mp(np.array([1.0, 2.0])) / 3
        out = ref.gaussian_mechanism(vec, 0.5, np.random.default_rng(6))
        z = np.random.default_rng(6).standard_normal(2)
        assert out.dtype == object
        for j in range(2):
            assert abs(out[j] - (vec[j] + mpmath.mpf(z[j]) / 2)) < mpmath.mpf("1e-48")


# ---------------------------------------------------------------------------------------------------
# Fast vs reference on random inputs (rtol 1e-12)


def _random_scale(rng) -> float:
    return float(10.0 ** rng.uniform(-3, 3))


def test_fast_matches_reference_clipping():
    rng = np.random.default_rng(21)
    for _ in range(60):
        n, d = int(rng.integers(1, 12)), int(rng.integers(1, 6))
        scale, clip = _random_scale(rng), _random_scale(rng)
        scalars = scale * rng.standard_normal(n)
        vectors = scale * rng.standard_normal((n, d))
        if rng.random() < 0.2:
            vectors[0] = 0.0
        np.testing.assert_array_equal(fast.clip_scalar(scalars, clip), ref.clip_scalar(scalars, clip))
        batch = fast.clip_vector(vectors, clip)
        for i in range(n):
            np.testing.assert_allclose(batch[i], ref.clip_vector(vectors[i], clip), rtol=1e-12, atol=0)
        for normalizer in (None, n + 0.5):
            a = fast.clipped_mean(scalars, clip, normalizer)
            b = ref.clipped_mean(scalars, clip, normalizer)
            assert isinstance(a, float) and isinstance(b, float)
            assert a == pytest.approx(b, rel=1e-12, abs=1e-12 * clip)
            np.testing.assert_allclose(
                fast.clipped_mean(vectors, clip, normalizer),
                ref.clipped_mean(vectors, clip, normalizer),
                rtol=1e-12,
                atol=1e-12 * clip,
            )
    # leading batch axes in the fast backend
    cube = rng.standard_normal((3, 4, 5))
    clipped = fast.clip_vector(cube, 1.5)
    for idx in np.ndindex(3, 4):
        np.testing.assert_allclose(clipped[idx], ref.clip_vector(cube[idx], 1.5), rtol=1e-12)
    np.testing.assert_array_equal(fast.clip_scalar(cube, 0.5), np.clip(cube, -0.5, 0.5))


def test_fast_matches_reference_tree_aggregate():
    rng = np.random.default_rng(22)
    for n, d in ((1, 1), (5, 2), (33, 3), (128, 2)):
        leaves = rng.standard_normal((n, d))
        noise = rng.uniform(0.1, 3.0, size=(n, 1)) * rng.standard_normal((n, d))
        np.testing.assert_allclose(
            fast.tree_aggregate(leaves, noise), ref.tree_aggregate(leaves, noise), rtol=1e-12, atol=1e-12
        )
    # replicate axes: (4, n, d) noise against shared (n, d) leaves, and (2, 4, n, d) against (4, n, d)
    n, d = 19, 2
    leaves = rng.standard_normal((n, d))
    noise = rng.standard_normal((4, n, d))
    batched = fast.tree_aggregate(leaves, noise)
    assert batched.shape == (4, n, d)
    for r in range(4):
        np.testing.assert_allclose(batched[r], ref.tree_aggregate(leaves, noise[r]), rtol=1e-12, atol=1e-12)
    both = fast.tree_aggregate(rng.standard_normal((2, 4, n, d)), noise)
    assert both.shape == (2, 4, n, d)
    np.testing.assert_allclose(fast.tree_prefix_noise(noise), fast.tree_aggregate(np.zeros((n, d)), noise))
    np.testing.assert_allclose(fast.tree_prefix_noise(noise[0]), _fenwick_matrix(n) @ noise[0], atol=1e-12)


# ---------------------------------------------------------------------------------------------------
# Clipping properties (dpzero §1.2)

finite_entries = st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False)
thresholds = st.floats(min_value=1e-6, max_value=1e6)


def test_clip_zero_is_zero():
    for mod in (ref, fast):
        np.testing.assert_array_equal(mod.clip_vector(np.zeros(4), 1.0), np.zeros(4))
        assert mod.clip_scalar(0.0, 1.0) == 0.0
    with working_precision(50):
        out = ref.clip_vector(to_mp(np.zeros(3)), mpmath.mpf(1) / 3)
        assert out.dtype == object and all(x == 0 for x in out)
    assert ref.clip_scalar(5.0, np.inf) == 5.0 and fast.clip_scalar(-5.0, np.inf) == -5.0
    np.testing.assert_array_equal(ref.clip_vector(np.array([1e300, -1e300]), np.inf), [1e300, -1e300])


@HYP
@given(vector=arrays(np.float64, st.integers(1, 10), elements=finite_entries), clip=thresholds)
def test_clip_vector_norm_bound_and_idempotence(vector, clip):
    for mod in (ref, fast):
        out = mod.clip_vector(vector, clip)
        assert out.shape == vector.shape and out.dtype == np.float64
        assert exact_norm(out) <= clip * (1 + 1e-15)
        again = mod.clip_vector(out, clip)
        assert exact_norm(again - out) <= 1e-14 * clip
        # direction kept: out is a non-negative multiple of the input
        assert np.all(np.sign(out) * np.sign(vector) >= 0)


@HYP
@given(vector=arrays(np.float64, st.integers(1, 10), elements=finite_entries), factor=st.floats(1 + 1e-9, 1e3))
def test_clip_vector_identity_inside(vector, factor):
    length = exact_norm(vector)
    clip = float(length * factor)
    assume(0 < clip < 1e308)
    for mod in (ref, fast):
        np.testing.assert_array_equal(mod.clip_vector(vector, clip), vector)


@HYP
@given(vector=arrays(np.float64, st.integers(1, 10), elements=finite_entries), clip=thresholds)
def test_clip_vector_equals_formula_in_mpmath(vector, clip):
    # v·min(1, C/‖v‖) evaluated at 50 digits, rounded: the float64 result is within a few ulps of it
    with working_precision(50):
        v = to_mp(vector)
        length = norm(v)
        factor = 1 if length == 0 else min(mpmath.mpf(1), mpmath.mpf(clip) / length)
        expected = np.array([float(x * factor) for x in v])
        mp_out = ref.clip_vector(v, clip)
        assert all(abs(a - x * factor) <= mpmath.mpf("1e-45") * (1 + abs(x * factor)) for a, x in zip(mp_out, v))
    out = ref.clip_vector(vector, clip)
    assert exact_norm(out - expected) <= 1e-14 * min(clip, float(length))


@HYP
@given(values=arrays(np.float64, st.integers(1, 10), elements=finite_entries), clip=thresholds)
def test_clip_scalar_properties(values, clip):
    for mod in (ref, fast):
        out = mod.clip_scalar(values, clip)
        assert np.all(np.abs(out) <= clip)
        inside = np.abs(values) <= clip
        np.testing.assert_array_equal(out[inside], values[inside])
        np.testing.assert_array_equal(out[~inside], np.sign(values[~inside]) * clip)
        np.testing.assert_array_equal(mod.clip_scalar(out, clip), out)
        assert mod.clip_scalar(float(values[0]), clip) == out[0]


def test_clip_scalar_mpmath():
    with working_precision(50):
        third = mpmath.mpf(1) / 3
        assert ref.clip_scalar(third, 0.25) == mpmath.mpf(0.25)
        assert ref.clip_scalar(-third, 1.0) == -third
        out = ref.clip_scalar(np.array([third, -7 * third], dtype=object), 1.0)
        assert out.dtype == object and out[0] == third and out[1] == -1


# ---------------------------------------------------------------------------------------------------
# Clipped-mean sensitivity (dpzero §1.2: 2C/n under replace-one, tight)


def test_clipped_mean_sensitivity_values():
    assert ref.clipped_mean_sensitivity(1.5, 3) == 1.0
    assert ref.clipped_mean_sensitivity(1.5, 3, relation="add_remove") == 0.5
    assert fast.clipped_mean_sensitivity is ref.clipped_mean_sensitivity
    with working_precision(50):
        got = ref.clipped_mean_sensitivity(mpmath.mpf(1) / 3, 7)
        assert isinstance(got, mpmath.mpf) and got == 2 * (mpmath.mpf(1) / 3) / 7


@st.composite
def replace_one_pairs(draw):
    n = draw(st.integers(1, 20))
    shape = (n,) if draw(st.booleans()) else (n, draw(st.integers(1, 5)))
    entries = st.floats(-1e6, 1e6)
    values = draw(arrays(np.float64, shape, elements=entries))
    neighbour = values.copy()
    index = draw(st.integers(0, n - 1))
    neighbour[index] = draw(arrays(np.float64, shape[1:], elements=entries))
    return values, neighbour


@HYP
@given(pair=replace_one_pairs(), clip=st.floats(1e-3, 1e3))
def test_clipped_mean_replace_one_sensitivity_bound(pair, clip):
    values, neighbour = pair
    n = values.shape[0]
    bound = ref.clipped_mean_sensitivity(clip, n)
    assert bound == 2 * clip / n
    for mod in (ref, fast):
        diff = np.atleast_1d(mod.clipped_mean(values, clip) - mod.clipped_mean(neighbour, clip))
        assert exact_norm(diff) <= bound * (1 + 1e-12)


@HYP
@given(pair=replace_one_pairs(), clip=st.floats(1e-3, 1e3), extra=st.floats(1.0, 10.0))
def test_clipped_mean_add_remove_bound_with_fixed_normalizer(pair, clip, extra):
    values, _ = pair
    normalizer = values.shape[0] * extra  # fixed, data-independent divisor
    bound = ref.clipped_mean_sensitivity(clip, 1, relation="add_remove") / normalizer
    removed = values[1:]
    for mod in (ref, fast):
        diff = np.atleast_1d(
            mod.clipped_mean(values, clip, normalizer) - mod.clipped_mean(removed, clip, normalizer)
        )
        assert exact_norm(diff) <= bound * (1 + 1e-12)


@pytest.mark.parametrize("mod", BACKENDS)
def test_clipped_mean_sensitivity_attained(mod):
    rng = np.random.default_rng(31)
    for n, d, clip in ((1, 1, 1.0), (5, 3, 0.3), (17, 4, 250.0)):
        values = rng.standard_normal((n, d)) * 10
        e = np.zeros(d)
        e[d - 1] = 1.0
        plus, minus = values.copy(), values.copy()
        plus[0], minus[0] = clip * e, -clip * e
        diff = mod.clipped_mean(plus, clip) - mod.clipped_mean(minus, clip)
        assert float(np.linalg.norm(diff)) == pytest.approx(ref.clipped_mean_sensitivity(clip, n), rel=1e-12)
        scal_plus, scal_minus = values[:, 0].copy(), values[:, 0].copy()
        scal_plus[0], scal_minus[0] = 5 * clip, -5 * clip  # clipped to ±C
        diff = mod.clipped_mean(scal_plus, clip) - mod.clipped_mean(scal_minus, clip)
        assert abs(diff) == pytest.approx(2 * clip / n, rel=1e-12)


@pytest.mark.parametrize("mod", BACKENDS)
def test_clipped_mean_poisson_normalizer_and_empty_batch(mod):
    assert mod.clipped_mean(np.array([3.0, -0.5]), 1.0, normalizer=4) == pytest.approx(0.125)
    assert mod.clipped_mean(np.array([]), 1.0, normalizer=4) == 0.0
    np.testing.assert_array_equal(mod.clipped_mean(np.zeros((0, 3)), 1.0, normalizer=2.5), np.zeros(3))
    np.testing.assert_allclose(mod.clipped_mean(np.array([[3.0, 4.0], [0.0, 0.0]]), 1.0), [0.3, 0.4])


def test_clipped_mean_mpmath():
    with working_precision(50):
        values = to_mp(np.array([[3.0, 4.0], [0.1, 0.2]])) / 7
        out = ref.clipped_mean(values, mpmath.mpf(1) / 2)
        assert out.dtype == object
        expected = [(mpmath.mpf(3) / 10 + mpmath.mpf("0.1") / 7) / 2, (mpmath.mpf(4) / 10 + mpmath.mpf("0.2") / 7) / 2]
        # 0.1 and 0.2 enter as float64 values; compare within float64 input rounding
        assert all(abs(a - b) < 1e-17 for a, b in zip(out, expected))
        scal = ref.clipped_mean(to_mp(np.array([2.0, -0.25])), 1.0)
        assert isinstance(scal, mpmath.mpf) and scal == mpmath.mpf("0.375")


# ---------------------------------------------------------------------------------------------------
# Input validation: errors name the parameter

rng0 = np.random.default_rng(0)
COMMON_BAD = [
    (lambda m: m.clip_scalar(float("nan"), 1.0), ValueError, "value must be a finite"),
    (lambda m: m.clip_scalar(1.0, -1.0), ValueError, "clip_threshold must be > 0"),
    (lambda m: m.clip_scalar(1.0, 0.0), ValueError, "clip_threshold must be > 0"),
    (lambda m: m.clip_scalar(1.0, float("nan")), ValueError, "clip_threshold must be a finite"),
    (lambda m: m.clip_scalar("a", 1.0), TypeError, "value must be a real number"),
    (lambda m: m.clip_scalar(np.array([1.0, np.inf]), 1.0), ValueError, "value must contain only finite"),
    (lambda m: m.clip_vector(np.array([1.0, np.nan]), 1.0), ValueError, "vector must contain only finite"),
    (lambda m: m.clip_vector(np.ones(3), "1"), TypeError, "clip_threshold must be a real number"),
    (lambda m: m.clip_vector(np.array([]), 1.0), ValueError, "vector must have at least one entry"),
    (lambda m: m.clip_vector(np.array([1 + 1j]), 1.0), TypeError, "vector must be an array of real"),
    (lambda m: m.clip_vector(np.array([True]), 1.0), TypeError, "vector must be an array of real"),
    (lambda m: m.clip_vector(["x", "y"], 1.0), TypeError, "vector must be an array of real"),
    (lambda m: m.clipped_mean(np.ones((2, 2, 2)), 1.0), ValueError, "values must have 1 or 2 dimension"),
    (lambda m: m.clipped_mean(np.ones(3), 1.0, normalizer=0), ValueError, "normalizer must be > 0"),
    (lambda m: m.clipped_mean(np.ones(3), 1.0, normalizer=np.inf), ValueError, "normalizer must be a finite"),
    (lambda m: m.clipped_mean(np.array([]), 1.0), ValueError, "values must contain at least one item"),
    (lambda m: m.clipped_mean(np.array([1.0, np.nan]), 1.0), ValueError, "values must contain only finite"),
    (lambda m: m.clipped_mean(np.ones(2), -2.0), ValueError, "clip_threshold must be > 0"),
    (lambda m: m.clipped_mean_sensitivity(1.0, 0), ValueError, "n must be >= 1"),
    (lambda m: m.clipped_mean_sensitivity(1.0, 2.0), TypeError, "n must be an integer"),
    (lambda m: m.clipped_mean_sensitivity(np.inf, 3), ValueError, "clip_threshold must be a finite"),
    (lambda m: m.clipped_mean_sensitivity(1.0, 3, "add-remove"), ValueError, "relation must be one of"),
    (lambda m: m.clipped_mean_sensitivity(1.0, 3, None), ValueError, "relation must be one of"),
    (lambda m: m.gaussian_mechanism(1.0, -1.0, rng0), ValueError, "noise_std must be >= 0"),
    (lambda m: m.gaussian_mechanism(1.0, np.inf, rng0), ValueError, "noise_std must be a finite"),
    (lambda m: m.gaussian_mechanism(1.0, 1.0, None), TypeError, "rng must be a numpy.random.Generator"),
    (lambda m: m.gaussian_mechanism(1.0, 1.0, np.random.RandomState(0)), TypeError, "rng must be"),
    (lambda m: m.gaussian_mechanism(float("nan"), 1.0, rng0), ValueError, "value must be a finite"),
    (lambda m: m.gaussian_mechanism(np.array([1.0, np.inf]), 1.0, rng0), ValueError, "value must contain only"),
    (lambda m: m.tree_node(0), ValueError, "t must be >= 1"),
    (lambda m: m.tree_node(1.0), TypeError, "t must be an integer"),
    (lambda m: m.tree_node(True), TypeError, "t must be an integer"),
    (lambda m: m.lowbit(-1), ValueError, "t must be >= 1"),
    (lambda m: m.fenwick_chain(0), ValueError, "t must be >= 1"),
    (lambda m: m.tree_node_fenwick("3"), TypeError, "t must be an integer"),
    (lambda m: m.participation_chain(0, 4), ValueError, "q must be >= 1"),
    (lambda m: m.participation_chain(5, 4), ValueError, "q must be <= 4"),
    (lambda m: m.participation_count(1, 0), ValueError, "n must be >= 1"),
    (lambda m: m.max_participation_count(0), ValueError, "n must be >= 1"),
    (lambda m: m.tree_noise_covariance(0, 1, [1.0]), ValueError, "t must be >= 1"),
    (lambda m: m.tree_noise_covariance(1, 3, [1.0, 1.0]), ValueError, "t_other must be <= 2"),
    (lambda m: m.tree_noise_covariance(1, 1, [-1.0]), ValueError, "noise_stds must be >= 0"),
    (lambda m: m.tree_noise_covariance(1, 1, []), ValueError, "noise_stds must have at least one"),
    (lambda m: m.tree_noise_covariance(1, 1, [np.nan]), ValueError, "noise_stds must contain only finite"),
    (lambda m: m.tree_aggregate(np.ones((3, 2)), np.ones((3, 3))), ValueError, "node_noise must"),
    (lambda m: m.tree_aggregate(np.ones((3, 2)), np.full((3, 2), np.inf)), ValueError, "node_noise must contain"),
    (lambda m: m.tree_aggregate(np.ones(3), np.ones(3)), ValueError, "leaf_values must have"),
    (lambda m: m.tree_aggregate(np.full((3, 2), np.nan), np.ones((3, 2))), ValueError, "leaf_values must contain"),
    (lambda m: m.TreeMechanism(0, [1.0], rng0), ValueError, "d must be >= 1"),
    (lambda m: m.TreeMechanism(2, [1.0, -1.0], rng0), ValueError, "noise_stds must be >= 0"),
    (lambda m: m.TreeMechanism(2, [1.0], "rng"), TypeError, "rng must be a numpy.random.Generator"),
    (lambda m: m.TreeMechanism(2.0, [1.0], rng0), TypeError, "d must be an integer"),
]


@pytest.mark.parametrize("mod", BACKENDS)
@pytest.mark.parametrize(("call", "error", "message"), COMMON_BAD)
def test_bad_inputs_name_the_parameter(mod, call, error, message):
    with pytest.raises(error, match=message):
        call(mod)


REFERENCE_ONLY_BAD = [  # the reference is 1-D where the fast backend batches
    (lambda: ref.clip_scalar(np.ones((2, 2)), 1.0), ValueError, "value must have 1 dimension"),
    (lambda: ref.clip_vector(np.ones((2, 2)), 1.0), ValueError, "vector must have 1 dimension"),
    (lambda: ref.clip_vector(np.array([1.0, "x"], dtype=object), 1.0), TypeError, "vector entries must be"),
    (lambda: ref.tree_aggregate(np.ones((2, 3, 2)), np.ones((2, 3, 2))), ValueError, "leaf_values must have 2"),
]

FAST_ONLY_BAD = [
    (lambda: fast.tree_aggregate(np.ones((2, 3, 2)), np.ones((3, 3, 2))), ValueError, "node_noise leading axes"),
    (lambda: fast.tree_noise_all([1.0, 2.0], 0, rng0), ValueError, "d must be >= 1"),
    (lambda: fast.tree_noise_all([1.0, -2.0], 2, rng0), ValueError, "noise_stds must be >= 0"),
    (lambda: fast.tree_noise_all([1.0], 2, 0), TypeError, "rng must be"),
    (lambda: fast.tree_prefix_noise(np.ones(3)), ValueError, "node_noise must have shape"),
    (lambda: fast.clip_vector(1.0, 1.0), ValueError, "vector must have at least 1 dimension"),
]


@pytest.mark.parametrize(("call", "error", "message"), REFERENCE_ONLY_BAD + FAST_ONLY_BAD)
def test_bad_inputs_backend_specific(call, error, message):
    with pytest.raises(error, match=message):
        call()
