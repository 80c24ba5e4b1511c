"""Tests for reference/fast/nsnc_improved.py, the vectorized float64 twin of reference/algorithms/nsnc_improved.py.

nsnc_improved Algorithm 2 (O2NC with clipped OGD) with the oracles of Algorithms 3 (single pass, and its CRN
variant), 4 (multi pass, and its first-order variant) and 5 (first order):

- draw-for-draw agreement with the float64 reference for every oracle kind and switch (given σ, no noise,
  clip_hardening, enforce_lipschitz with a violated L, restart_blocks, Σ = 1, K = 1, M = 1, d = 1 and 3, a pair of
  direction counts, record_path on and off): the fast backend performs the reference's operations in the
  reference's order, so with the objectives of reference.objectives (bitwise equal in both calling conventions)
  every array, the ledger and the diagnostics are BITWISE equal;
- an objective written for one point and one row (raising, returning a Python float or a list, or lying about
  stacked inputs) runs one point at a time and still equals the reference; non-finite loss values are replaced
  and counted as the reference does; refusals of infinite differences and non-finite gradients are the
  reference's;
- replicates: replicate r of a batched run is the reference's single run with seed[r] and the r-th secret seed
  (distinct seeds, a shared public seed, 128-bit seeds, small blocks);
- refusals identical to the reference's, word for word (both call ``prepare_run``);
- hypothesis over small random configurations.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.algorithms import nsnc_improved as ref
from reference.fast import nsnc_improved as fast
from reference.objectives import RidgeSum
from reference.precision import norm, to_mp
from reference.secrets import SecretSeed, replicate_seeds

SECRET = 2**70 + 12345  # the explicit secret seed of draw-for-draw comparisons (never a public seed here)
ARRAYS = ("output", "block_averages", "final_iterate", "releases", "segment_points", "query_points", "iterates",
          "steps")
DIAGNOSTICS = ("noiseless_sums", "noise", "nonfinite_counts", "clipped_counts", "evaluations")


def ridge(d, n, profile="wshape", seed=0, lipschitz=1.3):
    return RidgeSum.random(d, n, np.random.default_rng(seed), lipschitz=lipschitz, profile=profile, tau=0.4,
                           offset_scale=0.5)


def x_start(d, seed=1):
    return np.random.default_rng(seed).normal(0.0, 0.3, d)


def assert_same(got, want, *, arithmetic_differs=False):
    """Bitwise equality of two single runs (NaN nowhere: every field is finite)."""
    for name in ARRAYS:
        a, b = getattr(got, name), getattr(want, name)
        if b is None:
            assert a is None, name
            continue
        assert np.shape(a) == np.shape(b) and np.array_equal(np.asarray(a, dtype=np.float64),
                                                             np.asarray(b, dtype=np.float64)), name
    assert got.output_index == want.output_index and isinstance(got.output_index, int)
    for name in DIAGNOSTICS:
        a, b = getattr(got.diagnostics, name), getattr(want.diagnostics, name)
        assert np.shape(a) == np.shape(b) and np.array_equal(np.asarray(a, dtype=np.float64),
                                                             np.asarray(b, dtype=np.float64)), name
    if arithmetic_differs:
        assert got.ledger.settings == dataclasses.replace(want.ledger.settings, arithmetic="float64")
        assert dataclasses.replace(got.ledger, settings=want.ledger.settings) == want.ledger
    else:
        assert got.ledger == want.ledger


def objective_for(oracle, problem):
    return problem.gradient if oracle in ref.FIRST_ORDER_ORACLES else problem.loss


def both(objective, data, x0, **kwargs):
    return fast.nsnc_improved(objective, data, x0, **kwargs), ref.nsnc_improved(objective, data, x0, **kwargs)


BASE = dict(blocks=3, block_length=4, tree_size=3, smoothing_radius=0.1, step_bound=0.02, step_size=0.5,
            directions=2, B1=4, B2=2)
PRIVATE_SINGLE = dict(noise_std=0.7, lipschitz=1.3, dp_delta=1e-5, noise_seed=SECRET)
PRIVATE_MULTI = dict(noise_std=(0.5, 0.9), lipschitz=1.3, dp_delta=1e-5, noise_seed=SECRET)
HARDENED = dict(noise_std=0.7, lipschitz=0.05, dp_delta=1e-5, noise_seed=SECRET, clip_hardening=True)


# --- draw for draw, every oracle and switch --------------------------------------------------------------------

def _cases():
    cases = []
    for oracle in ref.SINGLE_PASS_ORACLES:
        cases += [
            (oracle, 3, "wshape", dict(PRIVATE_SINGLE)),
            (oracle, 1, "abs", dict(noise="none")),
            (oracle, 3, "capped", dict(HARDENED)),
            (oracle, 3, "wshape", dict(noise="none", lipschitz=0.05, gamma=1e-3, clip_hardening=True,
                                       directions=(3, 2))),
            (oracle, 3, "wshape", dict(PRIVATE_SINGLE, lipschitz=0.3, enforce_lipschitz=True)),
            (oracle, 3, "abs", dict(PRIVATE_SINGLE, restart_blocks=True, record_path=False)),
            (oracle, 1, "wshape", dict(PRIVATE_SINGLE, tree_size=1, blocks=2, block_length=1)),
            (oracle, 3, "capped", dict(PRIVATE_SINGLE, blocks=1, tree_size=5, block_length=6)),
        ]
    for oracle in ref.MULTI_PASS_ORACLES:
        cases += [
            (oracle, 3, "wshape", dict(PRIVATE_MULTI)),
            (oracle, 1, "abs", dict(noise="none")),
            (oracle, 3, "capped", dict(PRIVATE_MULTI, lipschitz=0.3, enforce_lipschitz=True)),
            (oracle, 3, "wshape", dict(noise="none", directions=3, restart_blocks=True, record_path=False)),
            (oracle, 1, "wshape", dict(PRIVATE_MULTI, tree_size=1, blocks=2, block_length=1)),
        ]
    return cases


CASES = _cases()


@pytest.mark.parametrize("oracle, d, profile, kwargs", CASES,
                         ids=[f"{c[0]}-d{c[1]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_draw_for_draw(oracle, d, profile, kwargs):
    kwargs = dict(BASE, **dict(dict(record_path=True), **kwargs))
    problem = ridge(d, 80, profile)
    data = problem.data if oracle in ref.SINGLE_PASS_ORACLES else problem.data[:7]
    got, want = both(objective_for(oracle, problem), data, x_start(d), oracle=oracle, seed=7, **kwargs)
    assert_same(got, want)
    if kwargs.get("clip_hardening") or (kwargs.get("enforce_lipschitz") and oracle in ref.FIRST_ORDER_ORACLES):
        assert want.diagnostics.clipped_counts.sum() > 0  # the clip was exercised


@pytest.mark.parametrize("d", [8, 17])
@pytest.mark.parametrize("oracle", ref.ORACLES)
def test_draw_for_draw_larger_dimensions(oracle, d):
    """d beyond NumPy's unrolled summation blocks: the norms and sums along the last axis stay the reference's."""
    problem = ridge(d, 80, "wshape")
    single = oracle in ref.SINGLE_PASS_ORACLES
    kwargs = dict(BASE, oracle=oracle, seed=3, record_path=True, directions=3,
                  **(HARDENED if single else PRIVATE_MULTI))
    got, want = both(objective_for(oracle, problem), problem.data if single else problem.data[:9], x_start(d),
                     **kwargs)
    assert_same(got, want)


def test_mpmath_inputs_run_in_float64():
    """An mpmath x0 (and data) is rounded to float64: the float64 reference's run, labelled float64."""
    problem = ridge(3, 80, "wshape")
    x0 = x_start(3)
    kwargs = dict(BASE, oracle="single_pass", seed=5, record_path=True, **HARDENED)
    got = fast.nsnc_improved(problem.loss, to_mp(problem.data), to_mp(x0), **kwargs)
    want = ref.nsnc_improved(problem.loss, problem.data, x0, **kwargs)
    assert got.ledger.settings.arithmetic == "float64" and got.releases.dtype == np.float64
    assert_same(got, want)


def test_large_steps_and_projection_shrink():
    """Steps far outside the ball (η g̃ ~ 1e5 D): clipped OGD row by row exactly as project_ball."""
    problem = ridge(3, 80, "abs", lipschitz=1e3)
    got, want = both(problem.loss, problem.data, x_start(3), oracle="single_pass", seed=2, record_path=True,
                     **dict(BASE, step_size=50.0, noise_std=1e4, lipschitz=1e3, dp_delta=1e-5, noise_seed=SECRET))
    assert_same(got, want)
    assert all(norm(step) <= got.ledger.settings.step_bound for step in got.steps.reshape(-1, 3))  # project_ball's


# --- the objective's calling convention --------------------------------------------------------------------------

RIDGE3 = ridge(3, 80, "wshape")


def scalar_float(x, z):
    return float(RIDGE3.loss(np.asarray(x), np.asarray(z)))


def one_point_only(x, z):
    if np.ndim(x) != 1 or np.ndim(z) != 1:
        raise TypeError("one point and one row")
    return RIDGE3.loss(x, z)


def lying(x, z):
    """Broadcasts without error but ignores the data when given stacked points: the probe must catch it."""
    if np.ndim(x) > 1:
        return np.sum(np.asarray(x) ** 2, axis=-1)
    return RIDGE3.loss(x, z)


def gradient_list(x, z):
    return [float(v) for v in RIDGE3.gradient(np.asarray(x), np.asarray(z))]


def gradient_one_point_only(x, z):
    if np.ndim(x) != 1 or np.ndim(z) != 1:
        raise TypeError("one point and one row")
    return RIDGE3.gradient(x, z)


def gradient_lying(x, z):
    if np.ndim(x) > 1:
        return np.zeros(np.shape(x))
    return RIDGE3.gradient(x, z)


@pytest.mark.parametrize("objective", [scalar_float, one_point_only, lying], ids=["float", "one_point", "lying"])
@pytest.mark.parametrize("oracle", ["single_pass", "single_pass_crn", "multi_pass"])
def test_scalar_losses_fall_back(objective, oracle):
    single = oracle in ref.SINGLE_PASS_ORACLES
    kwargs = dict(BASE, oracle=oracle, seed=4, record_path=True, **(PRIVATE_SINGLE if single else PRIVATE_MULTI))
    got, want = both(objective, RIDGE3.data if single else RIDGE3.data[:6], x_start(3), **kwargs)
    assert_same(got, want)


@pytest.mark.parametrize("objective", [gradient_list, gradient_one_point_only, gradient_lying],
                         ids=["list", "one_point", "lying"])
@pytest.mark.parametrize("oracle", ref.FIRST_ORDER_ORACLES)
def test_scalar_gradients_fall_back(objective, oracle):
    single = oracle in ref.SINGLE_PASS_ORACLES
    kwargs = dict(BASE, oracle=oracle, seed=4, record_path=True, **(PRIVATE_SINGLE if single else PRIVATE_MULTI))
    got, want = both(objective, RIDGE3.data if single else RIDGE3.data[:6], x_start(3), **kwargs)
    assert_same(got, want)


class Counting:
    def __init__(self, function):
        self.function, self.calls = function, []

    def __call__(self, x, z):
        self.calls.append(np.shape(x))
        return self.function(x, z)


@pytest.mark.parametrize("oracle, first, later", [
    ("single_pass", (2, 4, 2, 3), (4, 2, 2, 3)),
    ("single_pass_crn", (2, 4, 2, 3), (4, 2, 2, 3)),
    ("first_order", (1, 4, 1, 3), (2, 2, 2, 3)),
    ("multi_pass", (2, 6, 2, 3), (4, 6, 2, 3)),
    ("multi_pass_first_order", (1, 6, 2, 3), (2, 6, 2, 3)),
])
def test_vectorized_call_once_per_step(oracle, first, later):
    counting = Counting(objective_for(oracle, RIDGE3))
    single = oracle in ref.SINGLE_PASS_ORACLES
    data = RIDGE3.data if single else RIDGE3.data[:6]
    kwargs = dict(BASE, oracle=oracle, seed=4, noise="none")
    result = fast.nsnc_improved(counting, data, x_start(3), **kwargs)
    stacked = [s for s in counting.calls if len(s) > 1]
    assert len(stacked) == BASE["blocks"] * BASE["block_length"]  # one vectorized call per step
    assert stacked[0] == first and stacked[1] == later  # (S, b, m, d)
    assert len(counting.calls) - len(stacked) == 2  # the probe's two scalar calls
    want = ref.nsnc_improved(objective_for(oracle, RIDGE3), data, x_start(3), **kwargs)
    assert result.diagnostics.evaluations == want.diagnostics.evaluations


def poisoned(bad_rows, value):
    def loss(x, z):
        out = np.asarray(RIDGE3.loss(x, z), dtype=np.float64)
        mask = np.isin(np.asarray(z)[..., -1], RIDGE3.data[bad_rows, -1])
        out = np.where(mask, value, out)
        return out if out.ndim else float(out)

    return loss


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("oracle", ["single_pass", "single_pass_crn", "multi_pass"])
def test_nonfinite_records_replaced_as_reference(value, oracle):
    single = oracle in ref.SINGLE_PASS_ORACLES
    loss = poisoned([0, 5, 13] if single else [1, 4], value)
    kwargs = dict(BASE, oracle=oracle, seed=4, record_path=True, **(PRIVATE_SINGLE if single else PRIVATE_MULTI))
    got, want = both(loss, RIDGE3.data if single else RIDGE3.data[:6], x_start(3), **kwargs)
    assert want.diagnostics.nonfinite_counts.sum() > 0
    assert_same(got, want)


def test_infinite_difference_without_lipschitz_refused_alike():
    x0 = x_start(3)

    def loss(x, z):  # +inf on one side of x0: f(z + αy) − f(z − αy) is ±inf, and nothing bounds it
        out = np.where(np.asarray(x)[..., 0] > x0[0], np.inf, RIDGE3.loss(x, z))
        return out if out.ndim else float(out)

    for objective in (loss, lambda x, z: loss(np.asarray(x), np.asarray(z)) if np.ndim(x) == 1 else 1 / 0):
        kwargs = dict(BASE, oracle="single_pass", noise="none", seed=4)
        with pytest.raises(ValueError) as want:
            ref.nsnc_improved(objective, RIDGE3.data, x0, **kwargs)
        with pytest.raises(ValueError) as got:
            fast.nsnc_improved(objective, RIDGE3.data, x0, **kwargs)
        assert str(got.value) == str(want.value) and "lipschitz" in str(got.value)
    # with a Lipschitz bound the same loss runs, ±inf replaced by ±2Lα, as in the reference
    got_run, want_run = both(loss, RIDGE3.data, x0, record_path=True, **dict(kwargs, lipschitz=1.3))
    assert want_run.diagnostics.nonfinite_counts.sum() > 0
    assert_same(got_run, want_run)


@pytest.mark.parametrize("oracle", ref.FIRST_ORDER_ORACLES)
def test_nonfinite_gradient_replaced_alike(oracle):
    """A record whose gradient is not finite does not stop the run (design: no record decides between an output and
    an error): both backends replace it by 0 and count it, and still agree bit for bit."""
    def gradient(x, z):
        out = np.array(RIDGE3.gradient(x, z), dtype=np.float64)
        mask = np.isin(np.asarray(z)[..., -1], RIDGE3.data[[2, 5], -1])
        return np.where(mask[..., None], np.nan, out)

    kwargs = dict(BASE, oracle=oracle, noise="none", seed=4, record_path=True)
    data = RIDGE3.data if oracle in ref.SINGLE_PASS_ORACLES else RIDGE3.data[:6]
    want = ref.nsnc_improved(gradient, data, x_start(3), **kwargs)
    got = fast.nsnc_improved(gradient, data, x_start(3), **kwargs)
    assert want.diagnostics.nonfinite_counts.sum() > 0
    np.testing.assert_array_equal(got.diagnostics.nonfinite_counts, want.diagnostics.nonfinite_counts)
    np.testing.assert_array_equal(got.releases, want.releases)
    assert np.all(np.isfinite(want.releases))


# --- replicates ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("oracle", ref.ORACLES)
def test_replicates_are_single_runs(oracle):
    single = oracle in ref.SINGLE_PASS_ORACLES
    kwargs = dict(BASE, oracle=oracle, record_path=True, **(HARDENED if single else PRIVATE_MULTI))
    kwargs.pop("noise_seed")
    data = RIDGE3.data if single else RIDGE3.data[:6]
    objective = objective_for(oracle, RIDGE3)
    seeds = [5, 9, 5, 2**100 + 3]  # a repeated public seed and a 128-bit one
    secrets = [SECRET + 1, SECRET + 2, SECRET + 3, SECRET + 4]
    batched = fast.nsnc_improved(objective, data, x_start(3), seed=seeds, noise_seed=secrets, **kwargs)
    assert batched.releases.shape == (4, 3, 4, 3) and batched.output_index.shape == (4,)
    assert batched.ledger.seed == tuple(seeds) and batched.diagnostics.evaluations.shape == (4,)
    for r in range(4):
        want = ref.nsnc_improved(objective, data, x_start(3), seed=seeds[r], noise_seed=secrets[r], **kwargs)
        assert_same(fast.select_replicate(batched, r), want)


def test_shared_public_seed_fresh_secrets_and_blocks(monkeypatch):
    kwargs = dict(BASE, oracle="single_pass_crn", record_path=True, noise_std=0.7, lipschitz=1.3, dp_delta=1e-5)
    root = SecretSeed(SECRET, "user")
    batched = fast.nsnc_improved(RIDGE3.loss, RIDGE3.data, x_start(3), seed=6, noise_seed=root.spawn(3), **kwargs)
    monkeypatch.setattr(fast, "_BLOCK_BYTES", 1)  # one replicate per block: same draws, same arithmetic
    blocked = fast.nsnc_improved(RIDGE3.loss, RIDGE3.data, x_start(3), seed=6, noise_seed=root.spawn(3), **kwargs)
    for r, secret in enumerate(root.spawn(3)):
        want = ref.nsnc_improved(RIDGE3.loss, RIDGE3.data, x_start(3), seed=6, noise_seed=secret, **kwargs)
        assert_same(fast.select_replicate(batched, r), want)
        assert_same(fast.select_replicate(blocked, r), want)
    assert len(set(batched.output_index.tolist())) == 1  # public draws shared
    assert not np.array_equal(batched.releases[0], batched.releases[1])  # noise fresh
    assert batched.ledger.secret_seed_source == "user"


def test_replicate_seeds_without_noise():
    seeds = replicate_seeds(3, 3)
    kwargs = dict(BASE, oracle="multi_pass_first_order", noise="none")
    batched = fast.nsnc_improved(RIDGE3.gradient, RIDGE3.data[:5], x_start(3), seed=list(seeds), **kwargs)
    assert batched.ledger.secret_seed_source is None and batched.ledger.algorithm == "o2nc_clipped_ogd"
    for r in range(3):
        want = ref.nsnc_improved(RIDGE3.gradient, RIDGE3.data[:5], x_start(3), seed=seeds[r], **kwargs)
        assert_same(fast.select_replicate(batched, r), want)


def test_replicate_seed_rules():
    kwargs = dict(BASE, **dict(PRIVATE_SINGLE, noise_seed=None))
    kwargs.pop("noise_seed")
    with pytest.raises(ValueError, match="noise_seed"):
        fast.nsnc_improved(RIDGE3.loss, RIDGE3.data, x_start(3), seed=[1, 2], noise_seed=[2, 3], **kwargs)
    with pytest.raises(ValueError, match="distinct"):
        fast.nsnc_improved(RIDGE3.loss, RIDGE3.data, x_start(3), seed=[1, 2], noise_seed=[SECRET, SECRET], **kwargs)
    with pytest.raises(ValueError, match="length"):
        fast.nsnc_improved(RIDGE3.loss, RIDGE3.data, x_start(3), seed=[1, 2], noise_seed=[SECRET], **kwargs)
    single = fast.nsnc_improved(RIDGE3.loss, RIDGE3.data, x_start(3), seed=1, noise_seed=SECRET, **kwargs)
    with pytest.raises(TypeError, match="replicated"):
        fast.select_replicate(single, 0)


# --- refusals: the reference's, word for word -------------------------------------------------------------------

REFUSALS = [
    ("data too small", dict(data=RIDGE3.data[:10], noise="none")),
    ("no B1", dict(B1=None, noise="none")),
    ("bad oracle", dict(oracle="two_pass", noise="none")),
    ("bad noise", dict(noise="laplace")),
    ("bad sensitivity mode", dict(noise="none", sensitivity_mode="best_case")),
    ("no dp_delta", dict(noise_std=0.7, lipschitz=1.3)),
    ("no lipschitz", dict(noise_std=0.7, dp_delta=1e-5)),
    ("dp_delta without noise", dict(noise="none", dp_delta=1e-5)),
    ("clip_hardening without L", dict(noise="none", clip_hardening=True)),
    ("clip_hardening without gamma", dict(noise="none", clip_hardening=True, lipschitz=1.0)),
    ("epsilon and noise_std", dict(noise_std=0.7, epsilon=1.0, lipschitz=1.3, dp_delta=1e-5)),
    ("neither epsilon nor noise_std", dict(lipschitz=1.3, dp_delta=1e-5)),
    ("noise_std without noise", dict(noise="none", noise_std=0.7)),
    ("multi-pass noise_std not a pair", dict(oracle="multi_pass", noise_std=0.7, lipschitz=1.3, dp_delta=1e-5)),
    ("multi-pass clip_hardening", dict(oracle="multi_pass", noise_std=(0.5, 0.7), lipschitz=1.3, dp_delta=1e-5,
                                       clip_hardening=True)),
    ("multi-pass direction pair", dict(oracle="multi_pass", noise_std=(0.5, 0.7), lipschitz=1.3, dp_delta=1e-5,
                                       directions=(2, 3))),
    ("multi-pass direction pair without noise", dict(oracle="multi_pass", noise="none", directions=(2, 3))),
    ("multi-pass clip_hardening without noise", dict(oracle="multi_pass", noise="none", lipschitz=1.3, gamma=1e-3,
                                                     clip_hardening=True)),
    ("directions triple", dict(noise="none", directions=(1, 2, 3))),
    ("zero directions", dict(noise="none", directions=0)),
    ("objective not callable", dict(objective="f", noise="none")),
    ("enforce without L", dict(noise="none", enforce_lipschitz=True)),
    ("secret equals public", dict(noise_std=0.7, lipschitz=1.0, dp_delta=1e-5, noise_seed=4)),
    ("non-finite x0", dict(noise="none", x0=np.array([np.nan, 0.0, 0.0]))),
    ("empty x0", dict(noise="none", x0=np.zeros(0))),
    ("bad data", dict(noise="none", data=np.ones(5))),
    ("bad seed", dict(noise="none", seed=-1)),
    ("zero step size", dict(noise="none", step_size=0.0)),
    ("zero tree size", dict(noise="none", tree_size=0)),
    ("gamma above one", dict(noise="none", gamma=2.0)),
    ("loss of wrong type", dict(noise="none", objective=lambda x, z: "high")),
    ("loss returning arrays", dict(noise="none", objective=lambda x, z: np.ones(2))),
    ("gradient of wrong shape", dict(oracle="first_order", noise="none", objective=lambda x, z: np.ones(2))),
]


@pytest.mark.parametrize("case, overrides", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals_identical(case, overrides):
    kwargs = dict(BASE, objective=RIDGE3.loss, data=RIDGE3.data, x0=x_start(3), seed=4)
    kwargs.update(overrides)
    objective, data, x0 = kwargs.pop("objective"), kwargs.pop("data"), kwargs.pop("x0")
    with pytest.raises(Exception) as want:
        ref.nsnc_improved(objective, data, x0, **kwargs)
    with pytest.raises(Exception) as got:
        fast.nsnc_improved(objective, data, x0, **kwargs)
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


# --- the noise and public draws ---------------------------------------------------------------------------------

def _noise_draws(T):
    from reference.rng import Streams

    rng = Streams(SECRET).generator("nsnc_improved", "noise")
    return np.array([rng.standard_normal(3) for _ in range(T)])


def test_single_pass_noise_is_the_tree_of_the_secret_stream():
    """TREE(τ) = Σ_{NODE(τ)} σ z_b with z from ONE run-long secret stream, the tree reset at every period."""
    from reference.mechanisms import tree_node

    kwargs = dict(BASE, tree_size=5, oracle="single_pass", seed=4, **PRIVATE_SINGLE)
    result = fast.nsnc_improved(RIDGE3.loss, RIDGE3.data, x_start(3), **kwargs)
    T = BASE["blocks"] * BASE["block_length"]
    xi = 0.7 * _noise_draws(T)
    noise = result.diagnostics.noise.reshape(T, 3)
    for t in range(1, T + 1):
        tau = (t - 1) % 5 + 1
        want = sum((xi[t - tau + b - 1] for _, b in tree_node(tau)), np.zeros(3))
        assert np.array_equal(noise[t - 1], want)
    assert np.array_equal(result.releases, result.diagnostics.noiseless_sums + result.diagnostics.noise)


def test_multi_pass_noise_and_released_recursion():
    """χ_t = σ1 z_t at a reset, σ2 z_t otherwise; g_t = g̃_(t−1) + increment builds on the RELEASED vector."""
    kwargs = dict(BASE, oracle="multi_pass", seed=4, **PRIVATE_MULTI)
    result = fast.nsnc_improved(RIDGE3.loss, RIDGE3.data[:6], x_start(3), **kwargs)
    T = BASE["blocks"] * BASE["block_length"]
    z = _noise_draws(T)
    noise = result.diagnostics.noise.reshape(T, 3)
    for t in range(1, T + 1):
        sigma = 0.5 if (t - 1) % BASE["tree_size"] == 0 else 0.9
        assert np.array_equal(noise[t - 1], sigma * z[t - 1])
    assert np.array_equal(result.releases, result.diagnostics.noiseless_sums + result.diagnostics.noise)


# --- hypothesis: small random configurations ----------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(st.sampled_from(ref.ORACLES), st.integers(1, 3), st.integers(1, 3), st.integers(1, 4), st.integers(1, 4),
       st.integers(1, 3), st.integers(1, 2), st.integers(1, 3), st.sampled_from(["abs", "capped", "wshape"]),
       st.sampled_from(["none", "enforce", "restart"]), st.floats(1e-3, 1.0), st.integers(0, 2**40))
def test_hypothesis_draw_for_draw(oracle, d, K, M, tree_size, b1, b2, m, profile, mode, step_size, seed):
    single = oracle in ref.SINGLE_PASS_ORACLES
    T = K * M
    resets = -(-T // tree_size)
    n = resets * b1 + (T - resets) * b2 if single else b1 + b2
    problem = ridge(d, n, profile, seed=seed % 97)
    kwargs = dict(oracle=oracle, blocks=K, block_length=M, tree_size=tree_size, smoothing_radius=0.2,
                  step_bound=0.05, step_size=step_size, directions=m, seed=seed, record_path=True, noise="none")
    if single:
        kwargs.update(B1=b1, B2=b2)
    if mode == "enforce":
        kwargs.update(lipschitz=0.4, enforce_lipschitz=True)
    elif mode == "restart":
        kwargs.update(restart_blocks=True)
    got, want = both(objective_for(oracle, problem), problem.data, x_start(d, seed % 13), **kwargs)
    assert_same(got, want)


# --- the high-probability guarantee draws its directions under the secret seed ------------------------------------

def _high_probability_kwargs():
    # m = 400 directions per reset record: Lemma 3.3's bound (2L + 2r)/B1 is below the worst case 2Ld/B1
    return dict(oracle="single_pass", blocks=2, block_length=2, tree_size=2, smoothing_radius=0.5, step_bound=0.02,
                step_size=0.01, directions=(400, 1), B1=1, B2=4, noise_std=3.0, lipschitz=1.0, dp_delta=1e-5)


def test_high_probability_runs_draw_directions_from_the_secret_seed():
    secret = 2**100 + 12345
    kwargs = dict(_high_probability_kwargs(), seed=4, noise_seed=secret, record_path=True)
    want = ref.nsnc_improved(RIDGE3.loss, RIDGE3.data, x_start(3), **kwargs)
    assert want.ledger.plan.guarantee == "high-probability" and want.ledger.settings.direction_seed == "secret"
    got = fast.nsnc_improved(RIDGE3.loss, RIDGE3.data, x_start(3), **kwargs)
    np.testing.assert_array_equal(got.releases, want.releases)
    # the same run with the directions of the public seed would differ: the secret seed drew them
    public = ref.nsnc_improved(RIDGE3.loss, RIDGE3.data, x_start(3), **dict(kwargs, sensitivity_mode="worst_case"))
    assert public.ledger.settings.direction_seed == "public"
    assert not np.array_equal(public.diagnostics.noiseless_sums, want.diagnostics.noiseless_sums)
    replicated = fast.nsnc_improved(RIDGE3.loss, RIDGE3.data, x_start(3),
                                    **dict(kwargs, noise_seed=[secret, secret + 1]))
    np.testing.assert_array_equal(fast.select_replicate(replicated, 0).releases, want.releases)
    other = ref.nsnc_improved(RIDGE3.loss, RIDGE3.data, x_start(3), **dict(kwargs, noise_seed=secret + 1))
    np.testing.assert_array_equal(fast.select_replicate(replicated, 1).releases, other.releases)
