"""Tests for reference/estimators.py and reference/fast/estimators.py.

zo_o2nc Alg 1 (GRAD), Alg 2 (DIFF), Alg 6, Lemma 2.2(iv), Lemmas 3.1/3.2 (sensitivity);
dpzero eq. (2) and the Alg 1/2 finite differences.

- exact algebraic identities (linear and quadratic losses, antithetic one-point = two-point, DPZero's
  shared-direction form, DIFF(x, x) = 0), in float64 and at high mpmath precision;
- fast == reference draw for draw (float64 rtol 1e-12; mpmath reference at dps 40 vs fast rtol 1e-10);
- inputs never mutated; leading replicate axes in the fast backend;
- replace-one sensitivity bounds 2dL/b (GRAD) and 2dL‖x−y‖/(bδ) (DIFF) by hypothesis, and their
  tight cases u_ij ≡ e, f = ±L<e,x>;
- bad inputs raise errors naming the parameter.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import estimators as ref
from reference.fast import estimators as fast
from reference.precision import dot, is_mp, to_mp, working_precision
from reference.rng import Streams, sample_gaussian, sample_sphere

BACKENDS = [pytest.param(ref, id="reference"), pytest.param(fast, id="fast")]
ESTIMATOR_NAMES = ["two_point_estimate", "one_point_estimate", "diff_estimate"]


# ---------------------------------------------------------------------------------------------------
# Tiny losses: numpy broadcasting for float64 (single point or stacked points), precision.dot for mpmath


def linear_loss(x, z):
    """f(x; z) = <z, x> (p = d)."""
    if is_mp(x) or is_mp(z):
        return dot(z, x)
    return np.sum(z * x, axis=-1)


def ridge_abs_loss(x, z):
    """f(x; z) = |<a, x> − c| with z = (a, c) (p = d + 1); 1-Lipschitz when ‖a‖ = 1."""
    if is_mp(x) or is_mp(z):
        return abs(dot(z[:-1], x) - z[-1])
    return np.abs(np.sum(z[..., :-1] * x, axis=-1) - z[..., -1])


def quadratic_loss(x, z):
    """f(x; z) = ½‖x − z‖² (p = d)."""
    if is_mp(x) or is_mp(z):
        return mpmath.fsum((a - b) ** 2 for a, b in zip(x, z, strict=True)) / 2
    return 0.5 * np.sum((x - z) ** 2, axis=-1)


def lipschitz_ridge_family(L):
    """f(x; z) = L·s·φ_k(<a, x> − c), z = (a, c, k, s), ‖a‖ = 1, φ_k 1-Lipschitz: abs, id, clip, sin.

    Different rows select different functions, so neighbouring batches can swap in any member.
    """

    def loss(x, z):
        a, c, kind, sign = z[..., :-3], z[..., -3], z[..., -2], z[..., -1]
        r = np.sum(a * x, axis=-1) - c
        phi = np.where(kind == 0, np.abs(r), np.where(kind == 1, r, np.where(kind == 2, np.clip(r, -1, 1), np.sin(r))))
        return L * sign * phi

    return loss


def signed_linear_family(L, e):
    """f(x; z) = z_0·L·<e, x> with z_0 = ±1: the tight case of Lemmas 3.1/3.2."""

    def loss(x, z):
        return z[..., 0] * L * np.sum(e * x, axis=-1)

    return loss


# ---------------------------------------------------------------------------------------------------
# Helpers


def problem(seed, d, b, m, p=None):
    """x, y, batch and unit-sphere directions (float64 and mpmath copies of the same draws)."""
    streams = Streams(seed)
    data = streams.generator("test", "data")
    x = data.standard_normal(d)
    y = x + 0.5 * data.standard_normal(d)
    a = data.standard_normal((b, d))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    ridge_batch = np.concatenate([a, data.standard_normal((b, 1))], axis=1)
    plain_batch = data.standard_normal((b, d if p is None else p))
    directions = sample_sphere(streams.generator("test", "directions"), (b, m), d)
    return x, y, ridge_batch, plain_batch, directions


def mp_directions(seed, b, m, d):
    return sample_sphere(Streams(seed).generator("test", "directions"), (b, m), d, arithmetic="mpmath")


def max_rel_diff(actual, expected) -> float:
    """max |actual − expected| / max |expected| (relative to the largest entry, robust near zeros)."""
    actual = np.asarray([float(v) for v in np.ravel(actual)])
    expected = np.asarray([float(v) for v in np.ravel(expected)])
    return float(np.max(np.abs(actual - expected)) / max(np.max(np.abs(expected)), 1e-300))


def mp_max_rel_diff(actual, expected):
    diff = max(abs(mpmath.mpf(a) - mpmath.mpf(e)) for a, e in zip(np.ravel(actual), np.ravel(expected), strict=True))
    return diff / max(abs(mpmath.mpf(e)) for e in np.ravel(expected))


def call(module, name, loss, x, y, batch, directions, h, **kwargs):
    fn = getattr(module, name)
    if name == "diff_estimate":
        return fn(loss, x, y, batch, directions, h)
    return fn(loss, x, batch, directions, h, **kwargs)


# ---------------------------------------------------------------------------------------------------
# direction_scale


def test_direction_scale_values():
    assert ref.direction_scale("unit_sphere", 7) == 7
    assert ref.direction_scale("scaled_sphere", 7) == 1
    assert ref.direction_scale("gaussian", 7) == 1
    assert fast.direction_scale is ref.direction_scale


def test_direction_scale_makes_second_moment_identity():
    # E[c·u u^T] = I: exact for the spheres (‖u‖ fixed, so trace(c·uu^T) = c‖u‖² = d for every draw)
    d = 6
    gen = Streams(3).generator("test", "scale")
    for law, radius in (("unit_sphere", 1.0), ("scaled_sphere", np.sqrt(d))):
        u = sample_sphere(gen, (50,), d, radius=radius)
        traces = ref.direction_scale(law, d) * np.sum(u * u, axis=1)
        np.testing.assert_allclose(traces, d, rtol=1e-13)


def test_direction_scale_rejects_unknown_law_and_bad_d():
    with pytest.raises(ValueError, match="direction_law"):
        ref.direction_scale("sphere", 3)
    with pytest.raises(ValueError, match="d must be >= 1"):
        ref.direction_scale("unit_sphere", 0)
    with pytest.raises(TypeError, match="d must be an integer"):
        ref.direction_scale("unit_sphere", 2.0)


# ---------------------------------------------------------------------------------------------------
# Exact algebraic identities


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("h", [1e-3, 1.0, 100.0])
def test_quadratic_finite_difference_is_directional_derivative(backend, h):
    # dpzero T7: for f = ½‖x − z‖², (f(x+hu) − f(x−hu))/(2h) = <x − z, u> for every h
    x, _, _, batch, directions = problem(1, d=5, b=4, m=1)
    for i in range(4):
        u = directions[i, 0]
        got = backend.finite_difference(quadratic_loss, x, batch[i], u, h)
        assert got == pytest.approx(float(np.dot(x - batch[i], u)), rel=1e-9, abs=1e-12)
    a = backend.per_sample_finite_differences(quadratic_loss, x, batch, directions[0, 0], h)
    np.testing.assert_allclose(a, (x - batch) @ directions[0, 0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("h", ["1e-6", "1e-3", "1", "100"])
def test_quadratic_finite_difference_exact_in_mpmath(h):
    with working_precision(50):
        x, _, _, batch, _ = problem(2, d=4, b=2, m=1)
        u = mp_directions(2, 2, 1, 4)[0, 0]
        got = ref.finite_difference(quadratic_loss, to_mp(x), batch[0], u, mpmath.mpf(h))
        assert isinstance(got, mpmath.mpf)
        expected = dot(to_mp(x) - to_mp(batch[0]), u)  # difference taken in mpmath, not float64
        assert abs(got - expected) <= mpmath.mpf("1e-40") * abs(expected)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("law", ["unit_sphere", "scaled_sphere", "gaussian"])
def test_two_point_linear_loss_equals_scaled_directional_average(backend, law):
    # f = <z, x>: fd_ij = <z_i, u_ij> exactly, so the estimate is c·mean_ij (<z_i, u_ij>) u_ij
    d, b, m = 5, 3, 4
    x, _, _, batch, _ = problem(4, d, b, m)
    gen = Streams(4).generator("test", "law", law)
    if law == "gaussian":
        directions = sample_gaussian(gen, (b, m), d)
    else:
        directions = sample_sphere(gen, (b, m), d, radius=1.0 if law == "unit_sphere" else np.sqrt(d))
    c = d if law == "unit_sphere" else 1
    inner = np.einsum("bp,bmp->bm", batch, directions)
    expected = c * np.einsum("bm,bmd->d", inner, directions) / (b * m)
    got = backend.two_point_estimate(linear_loss, x, batch, directions, 0.1, direction_law=law)
    assert max_rel_diff(got, expected) <= 1e-12


def test_two_point_linear_loss_exact_in_mpmath():
    d, b, m = 4, 2, 3
    with working_precision(50):
        x, _, _, batch, _ = problem(5, d, b, m)
        directions = mp_directions(5, b, m, d)
        got = ref.two_point_estimate(linear_loss, to_mp(x), batch, directions, mpmath.mpf("1e-3"))
        assert got.dtype == object and all(isinstance(v, mpmath.mpf) for v in got)
        batch_mp = to_mp(batch)
        expected = [
            d * mpmath.fsum(dot(batch_mp[i], directions[i, j]) * directions[i, j, k] for i in range(b) for j in range(m))
            / (b * m)
            for k in range(d)
        ]
        assert mp_max_rel_diff(got, expected) <= mpmath.mpf("1e-40")


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_point_and_diff_linear_loss_closed_forms(backend):
    # f = <z, x>: one-point = d·mean((<z,x>/δ + <z,u>) u); DIFF = (d/δ)·mean(<z, x−y> u)
    d, b, m, delta = 4, 3, 5, 0.25
    x, y, _, batch, directions = problem(6, d, b, m)
    inner = np.einsum("bp,bmp->bm", batch, directions)
    at_x = batch @ x
    expected_one = d * np.einsum("bm,bmd->d", at_x[:, None] / delta + inner, directions) / (b * m)
    got_one = backend.one_point_estimate(linear_loss, x, batch, directions, delta)
    assert max_rel_diff(got_one, expected_one) <= 1e-12
    expected_diff = (d / delta) * np.einsum("b,bmd->d", batch @ (x - y), directions) / (b * m)
    got_diff = backend.diff_estimate(linear_loss, x, y, batch, directions, delta)
    assert max_rel_diff(got_diff, expected_diff) <= 1e-12


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_with_m_equal_d_is_printed_formula(backend):
    # zo_o2nc Alg 1 line 2: (1/(2δb)) Σ_{i,j} (f(x+δu_ij) − f(x−δu_ij)) u_ij when m = d
    d, b, delta = 4, 3, 0.2
    x, _, batch, _, directions = problem(7, d, b, m=d)
    terms = [
        (ridge_abs_loss(x + delta * directions[i, j], batch[i]) - ridge_abs_loss(x - delta * directions[i, j], batch[i]))
        * directions[i, j]
        for i in range(b)
        for j in range(d)
    ]
    expected = np.sum(terms, axis=0) / (2 * delta * b)
    got = backend.two_point_estimate(ridge_abs_loss, x, batch, directions, delta)
    assert max_rel_diff(got, expected) <= 1e-12


@pytest.mark.parametrize("backend", BACKENDS)
def test_antithetic_one_point_equals_two_point(backend):
    # (d/δ)[f(x+δu)u + f(x−δu)(−u)]/2 = (d/(2δ))(f(x+δu) − f(x−δu))u: Lemma 2.2(iv)'s two forms
    d, b, m, delta = 5, 3, 4, 0.3
    x, _, batch, _, directions = problem(8, d, b, m)
    antithetic = np.concatenate([directions, -directions], axis=1)
    one = backend.one_point_estimate(ridge_abs_loss, x, batch, antithetic, delta)
    two = backend.two_point_estimate(ridge_abs_loss, x, batch, directions, delta)
    assert max_rel_diff(one, two) <= 1e-12


@pytest.mark.parametrize("backend", BACKENDS)
def test_dpzero_shared_direction_is_mean_of_per_sample_scalars(backend):
    # dpzero Alg 1 (no clipping): (1/n) Σ_i a_i u with u ~ Unif(√d S^{d−1}), c = 1
    d, b, lam = 6, 5, 1e-2
    x, _, batch, _, _ = problem(9, d, b, 1)
    u = sample_sphere(Streams(9).generator("test", "dpzero"), (), d, radius=np.sqrt(d))
    a = backend.per_sample_finite_differences(ridge_abs_loss, x, batch, u, lam)
    assert a.shape == (b,)
    shared = np.broadcast_to(u, (b, 1, d))
    got = backend.two_point_estimate(ridge_abs_loss, x, batch, shared, lam, direction_law="scaled_sphere")
    assert max_rel_diff(got, np.mean(a) * u) <= 1e-12
    for i in range(b):
        assert a[i] == pytest.approx(backend.finite_difference(ridge_abs_loss, x, batch[i], u, lam), rel=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_diff_at_equal_points_is_exactly_zero(backend):
    x, _, batch, _, directions = problem(10, 4, 3, 2)
    got = backend.diff_estimate(ridge_abs_loss, x, x.copy(), batch, directions, 0.1)
    assert np.all(got == 0)


# ---------------------------------------------------------------------------------------------------
# Fast == reference, draw for draw


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
@pytest.mark.parametrize("loss", [ridge_abs_loss, quadratic_loss], ids=["ridge_abs", "quadratic"])
def test_fast_matches_reference_float64(name, loss):
    d, b, m = 6, 4, 5
    x, y, ridge_batch, plain_batch, directions = problem(11, d, b, m)
    batch = ridge_batch if loss is ridge_abs_loss else plain_batch
    r = call(ref, name, loss, x, y, batch, directions, 0.05)
    f = call(fast, name, loss, x, y, batch, directions, 0.05)
    assert r.dtype == np.float64 and f.dtype == np.float64 and r.shape == f.shape == (d,)
    assert max_rel_diff(f, r) <= 1e-12


@pytest.mark.parametrize("law", ["scaled_sphere", "gaussian"])
def test_fast_matches_reference_other_laws(law):
    d, b, m = 5, 3, 2
    x, _, batch, _, directions = problem(12, d, b, m)
    r = ref.two_point_estimate(ridge_abs_loss, x, batch, directions, 0.1, direction_law=law)
    f = fast.two_point_estimate(ridge_abs_loss, x, batch, directions, 0.1, direction_law=law)
    assert max_rel_diff(f, r) <= 1e-12


def test_fast_matches_reference_finite_differences():
    d, b = 5, 4
    x, _, batch, _, directions = problem(13, d, b, 1)
    u = directions[0, 0]
    np.testing.assert_allclose(
        fast.per_sample_finite_differences(ridge_abs_loss, x, batch, u, 0.01),
        ref.per_sample_finite_differences(ridge_abs_loss, x, batch, u, 0.01),
        rtol=1e-12,
        atol=1e-13,
    )
    f = fast.finite_difference(ridge_abs_loss, x, batch[1], u, 0.01)
    assert isinstance(f, float)
    assert f == pytest.approx(ref.finite_difference(ridge_abs_loss, x, batch[1], u, 0.01), rel=1e-12, abs=1e-13)


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
@pytest.mark.parametrize("loss", [ridge_abs_loss, quadratic_loss], ids=["ridge_abs", "quadratic"])
def test_mpmath_reference_matches_fast(name, loss):
    # Same Streams key: mpmath directions are the float64 draws normalised in mpmath.
    d, b, m = 4, 3, 3
    x, y, ridge_batch, plain_batch, directions = problem(14, d, b, m)
    batch = ridge_batch if loss is ridge_abs_loss else plain_batch
    with working_precision(40):
        u_mp = mp_directions(14, b, m, d)
        r = call(ref, name, loss, to_mp(x), to_mp(y), batch, u_mp, 0.05)
    assert r.dtype == object and all(isinstance(v, mpmath.mpf) for v in r)
    f = call(fast, name, loss, x, y, batch, directions, 0.05)
    assert max_rel_diff(f, r) <= 1e-10


def test_mpmath_reference_per_sample_matches_fast():
    d, b = 4, 3
    x, _, batch, _, _ = problem(15, d, b, 1)
    with working_precision(40):
        u_mp = mp_directions(15, 1, 1, d)[0, 0]
        r = ref.per_sample_finite_differences(ridge_abs_loss, to_mp(x), batch, u_mp, 0.05)
    assert r.dtype == object
    u = sample_sphere(Streams(15).generator("test", "directions"), (1, 1), d)[0, 0]
    f = fast.per_sample_finite_differences(ridge_abs_loss, x, batch, u, 0.05)
    assert max_rel_diff(f, r) <= 1e-10


def test_reference_keeps_float64_arithmetic():
    x, y, batch, _, directions = problem(16, 3, 2, 2)
    for name in ESTIMATOR_NAMES:
        out = call(ref, name, ridge_abs_loss, x, y, batch, directions, 0.1)
        assert out.dtype == np.float64
    assert isinstance(ref.finite_difference(ridge_abs_loss, x, batch[0], directions[0, 0], 0.1), float)


# ---------------------------------------------------------------------------------------------------
# Out-of-place evaluation; replicate axes


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_inputs_are_not_mutated_even_by_a_mutating_loss(backend, name):
    x, y, batch, _, directions = problem(17, 4, 3, 2)
    originals = [v.copy() for v in (x, y, batch, directions)]
    seen = []

    def vandal(point, z):
        value = ridge_abs_loss(point, z)
        seen.append(np.shares_memory(point, x) or np.shares_memory(point, y))
        point[...] = np.nan  # the point must be a fresh array, so this harms nothing
        return value

    call(backend, name, vandal, x, y, batch, directions, 0.1)
    assert seen and not any(seen)
    for before, after in zip(originals, (x, y, batch, directions), strict=True):
        np.testing.assert_array_equal(before, after)


@pytest.mark.parametrize("backend", BACKENDS)
def test_data_reach_the_loss_read_only(backend):
    x, _, batch, _, directions = problem(18, 3, 2, 2)

    def writes_data(point, z):
        z[..., 0] = 0.0
        return ridge_abs_loss(point, z)

    with pytest.raises(ValueError, match="read-only"):
        backend.two_point_estimate(writes_data, x, batch, directions, 0.1)


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_fast_leading_replicate_axes(name):
    d, b, m = 4, 3, 2
    x, y, batch, _, _ = problem(19, d, b, m)
    directions = sample_sphere(Streams(19).generator("test", "replicates"), (2, 3, b, m), d)
    out = call(fast, name, ridge_abs_loss, x, y, batch, directions, 0.1)
    assert out.shape == (2, 3, d)
    for r1 in range(2):
        for r2 in range(3):
            single = call(fast, name, ridge_abs_loss, x, y, batch, directions[r1, r2], 0.1)
            assert max_rel_diff(out[r1, r2], single) <= 1e-13
            reference = call(ref, name, ridge_abs_loss, x, y, batch, directions[r1, r2], 0.1)
            assert max_rel_diff(out[r1, r2], reference) <= 1e-12


def test_fast_replicate_axes_for_finite_differences():
    d, b = 4, 3
    x, _, batch, _, _ = problem(20, d, b, 1)
    u = sample_sphere(Streams(20).generator("test", "replicates"), (5,), d)
    per_sample = fast.per_sample_finite_differences(ridge_abs_loss, x, batch, u, 0.1)
    assert per_sample.shape == (5, b)
    single = fast.finite_difference(ridge_abs_loss, x, batch[2], u, 0.1)
    assert single.shape == (5,)
    for r in range(5):
        expected = ref.per_sample_finite_differences(ridge_abs_loss, x, batch, u[r], 0.1)
        np.testing.assert_allclose(per_sample[r], expected, rtol=1e-12, atol=1e-13)
        assert single[r] == pytest.approx(expected[2], rel=1e-12, abs=1e-13)


# ---------------------------------------------------------------------------------------------------
# Sensitivity (zo_o2nc Lemma 3.1, Lemma 3.2, App. E), replace-one with shared directions


@st.composite
def neighbouring_problems(draw):
    d = draw(st.integers(1, 6))
    b = draw(st.integers(1, 4))
    m = draw(st.integers(1, 4))
    L = draw(st.floats(0.1, 10.0))
    delta = draw(st.floats(0.05, 2.0))
    seed = draw(st.integers(0, 2**32 - 1))
    kinds = draw(st.lists(st.integers(0, 3), min_size=b + 1, max_size=b + 1))
    signs = draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=b + 1, max_size=b + 1))
    layout = draw(st.sampled_from(["random", "all_equal", "basis"]))
    k = draw(st.integers(0, b - 1))
    gen = np.random.default_rng(seed)
    a = gen.standard_normal((b + 1, d))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    c = gen.uniform(-1, 1, b + 1)
    rows = np.column_stack([a, c, kinds, signs])
    batch = rows[:b]
    neighbour = batch.copy()
    neighbour[k] = rows[b]  # replace one record
    x = gen.uniform(-1, 1, d) / np.sqrt(d)
    step = gen.uniform(-1, 1, d)
    if np.linalg.norm(step) < 0.1:
        step[0] = 1.0
    y = x + step
    if layout == "random":
        directions = sample_sphere(gen, (b, m), d)
    elif layout == "all_equal":  # degenerate but allowed: every u_ij = e
        directions = np.broadcast_to(sample_sphere(gen, (), d), (b, m, d)).copy()
    else:
        directions = np.zeros((b, m, d))
        directions[..., gen.integers(d)] = 1.0
    return dict(d=d, b=b, L=L, delta=delta, x=x, y=y, batch=batch, neighbour=neighbour, directions=directions)


@settings(max_examples=60, deadline=None)
@given(neighbouring_problems())
def test_grad_sensitivity_at_most_2dL_over_b(case):
    loss = lipschitz_ridge_family(case["L"])
    bound = 2 * case["d"] * case["L"] / case["b"]
    for backend in (ref, fast):
        g = backend.two_point_estimate(loss, case["x"], case["batch"], case["directions"], case["delta"])
        g2 = backend.two_point_estimate(loss, case["x"], case["neighbour"], case["directions"], case["delta"])
        assert np.linalg.norm(g - g2) <= bound * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(neighbouring_problems())
def test_diff_sensitivity_at_most_2dL_dist_over_b_delta(case):
    loss = lipschitz_ridge_family(case["L"])
    dist = np.linalg.norm(case["x"] - case["y"])
    bound = 2 * case["d"] * case["L"] * dist / (case["b"] * case["delta"])
    for backend in (ref, fast):
        args = (case["x"], case["y"])
        g = backend.diff_estimate(loss, *args, case["batch"], case["directions"], case["delta"])
        g2 = backend.diff_estimate(loss, *args, case["neighbour"], case["directions"], case["delta"])
        assert np.linalg.norm(g - g2) <= bound * (1 + 1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("basis", [True, False], ids=["basis_e", "random_e"])
def test_grad_sensitivity_tight_case(backend, basis):
    # u_ij ≡ e, f(x; z) = L<e, x>, f(x; z') = −L<e, x>: ‖Δ‖ = 2dL/b exactly (zo_o2nc Lemma 3.1)
    d, b, m, L, delta = 5, 4, 3, 2.5, 0.1
    gen = Streams(21).generator("test", "tight")
    e = np.eye(d)[2] if basis else sample_sphere(gen, (), d)
    loss = signed_linear_family(L, e)
    batch = np.ones((b, 1))
    neighbour = batch.copy()
    neighbour[1] = -1.0
    directions = np.broadcast_to(e, (b, m, d))
    x = gen.standard_normal(d)
    g = backend.two_point_estimate(loss, x, batch, directions, delta)
    g2 = backend.two_point_estimate(loss, x, neighbour, directions, delta)
    assert np.linalg.norm(g - g2) == pytest.approx(2 * d * L / b, rel=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_diff_sensitivity_tight_case(backend):
    # u_ij ≡ e, x − y ∥ e, f = ±L<e, ·>: ‖Δ‖ = 2dL‖x−y‖/(bδ) exactly (zo_o2nc Lemma 3.2)
    d, b, m, L, delta = 4, 3, 2, 1.5, 0.2
    gen = Streams(22).generator("test", "tight")
    e = sample_sphere(gen, (), d)
    loss = signed_linear_family(L, e)
    batch = np.ones((b, 1))
    neighbour = batch.copy()
    neighbour[0] = -1.0
    directions = np.broadcast_to(e, (b, m, d))
    x = gen.standard_normal(d)
    y = x - 0.7 * e
    g = backend.diff_estimate(loss, x, y, batch, directions, delta)
    g2 = backend.diff_estimate(loss, x, y, neighbour, directions, delta)
    bound = 2 * d * L * np.linalg.norm(x - y) / (b * delta)
    assert np.linalg.norm(g - g2) == pytest.approx(bound, rel=1e-12)


# ---------------------------------------------------------------------------------------------------
# Bad inputs raise and name the parameter


def _valid():
    x, y, batch, _, directions = problem(23, 3, 2, 2)
    return x, y, batch, directions


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_bad_inputs_name_the_parameter(backend, name):
    x, y, batch, directions = _valid()
    radius_name = "perturbation" if name == "two_point_estimate" else "smoothing_radius"
    bad_x = x.copy()
    bad_x[1] = np.nan
    cases = [
        (dict(x=bad_x), ValueError, "x must contain only finite values"),
        (dict(x=np.zeros(0), y=np.zeros(0), directions=np.zeros((2, 2, 0))), ValueError, "x must have at least one"),
        (dict(x=np.zeros((3, 1))), ValueError, "x must have 1 dimension"),
        (dict(h=np.inf), ValueError, f"{radius_name} must be a finite real number"),
        (dict(h=-0.1), ValueError, f"{radius_name} must be > 0"),
        (dict(h=0.0), ValueError, f"{radius_name} must be > 0"),
        (dict(h=np.nan), ValueError, radius_name),
        (dict(h="0.1"), TypeError, radius_name),
        (dict(directions=np.ones((2, 2, 4))), ValueError, "directions must have shape"),
        (dict(directions=np.ones((3, 2, 3))), ValueError, "directions must have shape"),
        (dict(directions=np.ones((2, 0, 3))), ValueError, "directions must have at least one"),
        (dict(directions=np.full((2, 2, 3), np.inf)), ValueError, "directions must contain only finite"),
        (dict(batch=np.ones(4)), ValueError, "batch must have 2 dimension"),
        (dict(batch=np.ones((0, 4))), ValueError, "batch must have at least one row"),
        (dict(batch=np.full((2, 4), np.nan)), ValueError, "batch must contain only finite"),
        (dict(loss="not a function"), TypeError, "loss must be callable"),
    ]
    if name == "diff_estimate":
        cases.append((dict(y=np.ones(4)), ValueError, "y must have shape"))
        cases.append((dict(y=np.array([0.0, np.inf, 0.0])), ValueError, "y must contain only finite"))
    for override, error, message in cases:
        args = dict(loss=ridge_abs_loss, x=x, y=y, batch=batch, directions=directions, h=0.1)
        args.update(override)
        with pytest.raises(error, match=message):
            call(backend, name, args["loss"], args["x"], args["y"], args["batch"], args["directions"], args["h"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_direction_law_is_named(backend):
    x, _, batch, directions = _valid()
    with pytest.raises(ValueError, match="direction_law"):
        backend.two_point_estimate(ridge_abs_loss, x, batch, directions, 0.1, direction_law="sphere")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_loss_names_sample_and_direction(backend, name, bad):
    x, y, batch, directions = _valid()
    marked = batch.copy()
    marked[1, -1] = 99.0  # the loss misbehaves on sample i = 1 only

    def fragile(point, z):
        value = ridge_abs_loss(point, z)
        return np.where(z[..., -1] == 99.0, bad, value)

    with pytest.raises(ValueError, match=r"non-finite value .* sample i=1, direction j=0"):
        call(backend, name, fragile, x, y, marked, directions, 0.1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_non_finite_loss_in_finite_differences(backend):
    x, _, batch, directions = _valid()
    marked = batch.copy()
    marked[1, -1] = 99.0

    def fragile(point, z):
        return np.where(z[..., -1] == 99.0, np.nan, ridge_abs_loss(point, z))

    with pytest.raises(ValueError, match=r"non-finite value .* sample i=1"):
        backend.per_sample_finite_differences(fragile, x, marked, directions[0, 0], 0.1)
    with pytest.raises(ValueError, match="non-finite value"):
        backend.finite_difference(fragile, x, marked[1], directions[0, 0], 0.1)
    with pytest.raises(ValueError, match="direction must have shape|direction must have 1 dimension"):
        backend.finite_difference(ridge_abs_loss, x, batch[0], np.ones(5), 0.1)
    with pytest.raises(ValueError, match="z must have 1 dimension"):
        backend.finite_difference(ridge_abs_loss, x, batch, directions[0, 0], 0.1)
    with pytest.raises(ValueError, match="perturbation must be > 0"):
        backend.per_sample_finite_differences(ridge_abs_loss, x, batch, directions[0, 0], -1.0)


def test_reference_refuses_non_scalar_loss():
    x, _, batch, directions = _valid()
    with pytest.raises(ValueError, match="loss must return a scalar"):
        ref.two_point_estimate(lambda p, z: np.array([1.0, 2.0]), x, batch, directions, 0.1)
    with pytest.raises(TypeError, match="loss must return a real number"):
        ref.two_point_estimate(lambda p, z: "1.0", x, batch, directions, 0.1)


def test_fast_refuses_wrong_loss_shape():
    x, _, batch, directions = _valid()
    with pytest.raises(ValueError, match="loss must return shape"):
        fast.two_point_estimate(lambda p, z: np.sum(ridge_abs_loss(p, z)), x, batch, directions, 0.1)
