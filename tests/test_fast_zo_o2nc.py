"""Tests for reference/fast/zo_o2nc.py, the vectorized float64 twin of reference/algorithms/zo_o2nc.py.

zo_o2nc Alg 3 + projected OSD + Alg 4 (Theorem 4.9) and + Alg 6 (App. E).

- draw-for-draw agreement with the float64 reference on every switch (Alg 4 / Alg 6, d = 1 and 3, ρ-calibrated,
  given σ, Theorem 4.9's / App. E's settings, no noise, enforce_lipschitz with a violated L, record_path on and
  off, T = 1, K = 1): the fast backend performs the reference's operations in the reference's order, so with the
  objectives of reference.objectives (bitwise equal in both calling conventions) every array, the ledger and the
  diagnostics are BITWISE equal (the rounding bound of the module docstring is 0 here);
- a loss written for one point and one row (raising, returning a Python float, or lying about stacked inputs)
  runs one point at a time and still equals the reference; non-finite loss values are replaced and counted as the
  reference does;
- replicates: replicate r of a batched run is the reference's single run with seed[r] and the r-th secret seed
  (distinct seeds, a shared public seed, 128-bit seeds, small blocks);
- refusals identical to the reference's, word for word;
- hypothesis over small random configurations.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.algorithms import zo_o2nc as ref
from reference.algorithms.zo_o2nc_theory import naive_settings, thm49_settings
from reference.fast import zo_o2nc as fast
from reference.objectives import RidgeSum
from reference.precision import to_mp
from reference.secrets import SecretSeed, replicate_seeds

SECRET = 2**70 + 12345  # the explicit secret seed of draw-for-draw comparisons (never a public seed here)
ARRAYS = ("output", "epoch_averages", "final_iterate", "releases", "segment_points", "query_points", "iterates",
          "steps")
DIAGNOSTICS = ("noiseless_sums", "noise", "nonfinite_counts", "lipschitz_exceedances", "loss_evaluations")


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


def both(name, loss, data, x1, **kwargs):
    return getattr(fast, name)(loss, data, x1, **kwargs), getattr(ref, name)(loss, data, x1, **kwargs)


VR = dict(T=4, K=3, B1=4, B2=2, smoothing_radius=0.1, step_size=0.01)
NAIVE = dict(T=4, K=3, batch_size=3, smoothing_radius=0.1, step_size=0.01)


# --- draw for draw, every switch ------------------------------------------------------------------------------

CASES = [
    ("zo_o2nc", 3, "wshape", dict(VR, rho=1.0, lipschitz=1.3, dp_delta=1e-5, noise_seed=SECRET)),
    ("zo_o2nc", 1, "abs", dict(VR, rho=0.5, lipschitz=1.3, dp_delta=1e-5, noise_seed=SECRET, count_rule="paper_2lnT")),
    ("zo_o2nc", 3, "capped", dict(VR, noise_std=0.7, lipschitz=0.6, dp_delta=1e-5, noise_seed=SECRET,
                                  enforce_lipschitz=True)),
    ("zo_o2nc", 3, "abs", dict(VR, noise="none")),
    ("zo_o2nc", 1, "wshape", dict(VR, noise="none", lipschitz=1.3, noise_seed=SECRET, step_bound=0.2,
                                  step_size=0.3)),
    ("zo_o2nc", 3, "wshape", dict(VR, T=1, K=2, rho=1.0, lipschitz=1.3, dp_delta=1e-5, noise_seed=SECRET)),
    ("zo_o2nc", 3, "wshape", dict(VR, K=1, rho=1.0, lipschitz=1.3, dp_delta=1e-5, noise_seed=SECRET,
                                  record_path=False)),
    ("zo_o2nc_naive", 3, "wshape", dict(NAIVE, rho=1.0, lipschitz=1.3, dp_delta=1e-5, noise_seed=SECRET)),
    ("zo_o2nc_naive", 1, "abs", dict(NAIVE, rho=1.0, lipschitz=1.3, dp_delta=1e-5, noise_seed=SECRET,
                                     sigma_rule="paper")),
    ("zo_o2nc_naive", 3, "capped", dict(NAIVE, noise_std=0.7, lipschitz=0.5, dp_delta=1e-5, noise_seed=SECRET,
                                        enforce_lipschitz=True)),
    ("zo_o2nc_naive", 3, "abs", dict(NAIVE, noise="none", record_path=False)),
]


@pytest.mark.parametrize("name, d, profile, kwargs", CASES, ids=[f"{c[0]}-d{c[1]}-{c[2]}-{i}" for i, c in
                                                                  enumerate(CASES)])
def test_draw_for_draw(name, d, profile, kwargs):
    kwargs = dict(dict(record_path=True), **kwargs)
    objective = ridge(d, 60, profile)
    got, want = both(name, objective.loss, objective.data, x_start(d), seed=7, **kwargs)
    assert_same(got, want)
    if kwargs.get("enforce_lipschitz"):
        assert want.diagnostics.lipschitz_exceedances.sum() > 0  # the clip was exercised


@pytest.mark.parametrize("name, rule", [("zo_o2nc", thm49_settings), ("zo_o2nc_naive", naive_settings)])
@pytest.mark.parametrize("private", [True, False])
def test_theory_settings(name, rule, private):
    objective = ridge(1, 40, "wshape", lipschitz=1.0)
    extra = dict(dp_delta=1e-5, noise_seed=SECRET) if private else dict(noise="none")
    chosen = rule(40, 1, 1.0, 0.5, 1.0 if private else None, 1.0)
    got, want = both(name, objective.loss, objective.data, np.array([0.2]), settings=chosen, seed=3,
                     record_path=True, **extra)
    assert_same(got, want)


def test_o2nc_nonprivate():
    objective = ridge(3, 30, "capped")
    kwargs = dict(T=5, K=3, smoothing_radius=0.2, step_size=0.05, seed=11, record_path=True)
    assert_same(fast.o2nc_nonprivate(objective.loss, objective.data, x_start(3), **kwargs),
                ref.o2nc_nonprivate(objective.loss, objective.data, x_start(3), **kwargs))


def test_mpmath_inputs_run_in_float64():
    """An mpmath x1 (and data) is rounded to float64: the float64 reference's run, labelled float64."""
    objective = ridge(3, 60, "wshape")
    x1 = x_start(3)
    kwargs = dict(VR, rho=1.0, lipschitz=1.3, dp_delta=1e-5, noise_seed=SECRET, seed=5, record_path=True)
    got = fast.zo_o2nc(objective.loss, to_mp(objective.data), to_mp(x1), **kwargs)
    want = ref.zo_o2nc(objective.loss, objective.data, x1, **kwargs)
    assert got.ledger.settings.arithmetic == "float64" and got.releases.dtype == np.float64
    assert_same(got, want)


def test_large_adversarial_values_and_projection_shrink():
    """Steps far outside the ball (η g̃ ~ 1e6 D): projected OSD row by row exactly as project_ball."""
    objective = ridge(3, 60, "abs", lipschitz=1e3)
    got, want = both("zo_o2nc", objective.loss, objective.data, x_start(3), seed=2, record_path=True,
                     **dict(VR, step_size=50.0, noise_std=1e4, lipschitz=1e3, dp_delta=1e-5, noise_seed=SECRET))
    assert_same(got, want)
    assert np.all(np.linalg.norm(got.steps, axis=-1) <= got.ledger.settings.step_bound)


# --- the loss calling convention ------------------------------------------------------------------------------

RIDGE3 = ridge(3, 60, "wshape")


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


class Counting:
    def __init__(self):
        self.calls = []

    def __call__(self, x, z):
        self.calls.append(np.shape(x))
        return RIDGE3.loss(x, z)


@pytest.mark.parametrize("loss", [scalar_float, one_point_only, lying], ids=["float", "one_point", "lying"])
@pytest.mark.parametrize("name", ["zo_o2nc", "zo_o2nc_naive"])
def test_scalar_losses_fall_back(loss, name):
    kwargs = dict(VR if name == "zo_o2nc" else NAIVE, rho=1.0, lipschitz=1.3, dp_delta=1e-5, noise_seed=SECRET,
                  seed=4, record_path=True)
    got, want = both(name, loss, RIDGE3.data, x_start(3), **kwargs)
    assert_same(got, want)


def test_vectorized_call_once_per_round():
    counting = Counting()
    kwargs = dict(VR, rho=1.0, lipschitz=1.3, dp_delta=1e-5, noise_seed=SECRET, seed=4)
    result = fast.zo_o2nc(counting, RIDGE3.data, x_start(3), **kwargs)
    stacked = [s for s in counting.calls if len(s) > 1]
    assert len(stacked) == VR["T"] * VR["K"]  # one vectorized call per round
    assert stacked[0] == (2, VR["B1"], 3, 3) and stacked[1] == (2, VR["B2"], 3, 3)  # (2, b, m, d)
    assert len(counting.calls) - len(stacked) == 2  # the probe's two scalar calls
    assert result.diagnostics.loss_evaluations == ref.zo_o2nc(RIDGE3.loss, RIDGE3.data, x_start(3),
                                                              **kwargs).diagnostics.loss_evaluations


def poisoned(bad_rows, value):
    def loss(x, z):
        out = np.asarray(RIDGE3.loss(x, z), dtype=np.float64)
        mask = np.isin(np.asarray(z)[..., -1], RIDGE3.data[bad_rows, -1])
        out = np.where(mask, value, out)
        return out if out.ndim else float(out)

    return loss


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("name", ["zo_o2nc", "zo_o2nc_naive"])
def test_nonfinite_records_replaced_as_reference(value, name):
    loss = poisoned([0, 5, 13], value)
    kwargs = dict(VR if name == "zo_o2nc" else NAIVE, rho=1.0, lipschitz=1.3, dp_delta=1e-5, noise_seed=SECRET,
                  seed=4, record_path=True)
    got, want = both(name, loss, RIDGE3.data, x_start(3), **kwargs)
    assert want.diagnostics.nonfinite_counts.sum() > 0
    assert_same(got, want)


def test_infinite_difference_without_lipschitz_refused_alike():
    x1 = x_start(3)

    def loss(x, z):  # +inf on one side of x1: f(w + δu) − f(w − δu) is ±inf, and nothing bounds it
        out = np.where(np.asarray(x)[..., 0] > x1[0], np.inf, RIDGE3.loss(x, z))
        return out if out.ndim else float(out)

    kwargs = dict(VR, noise="none", seed=4)
    with pytest.raises(ValueError) as want:
        ref.zo_o2nc(loss, RIDGE3.data, x1, **kwargs)
    with pytest.raises(ValueError) as got:
        fast.zo_o2nc(loss, RIDGE3.data, x1, **kwargs)
    assert str(got.value) == str(want.value) and "lipschitz" in str(got.value)
    # with a Lipschitz bound the same loss runs, ±inf replaced by ±2Lδ, as in the reference
    kwargs.update(lipschitz=1.3)
    got_run, want_run = both("zo_o2nc", loss, RIDGE3.data, x1, record_path=True, **kwargs)
    assert want_run.diagnostics.nonfinite_counts.sum() > 0
    assert_same(got_run, want_run)


# --- replicates ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["zo_o2nc", "zo_o2nc_naive"])
def test_replicates_are_single_runs(name):
    kwargs = dict(VR if name == "zo_o2nc" else NAIVE, rho=1.0, lipschitz=1.3, dp_delta=1e-5, record_path=True)
    seeds = [5, 9, 5, 2**100 + 3]  # a repeated public seed and a 128-bit one
    secrets = [SECRET + 1, SECRET + 2, SECRET + 3, SECRET + 4]
    batched = getattr(fast, name)(RIDGE3.loss, RIDGE3.data, x_start(3), seed=seeds, noise_seed=secrets, **kwargs)
    assert batched.releases.shape == (4, 3, 4, 3) and batched.output_index.shape == (4,)
    assert batched.ledger.seed == tuple(seeds)
    for r in range(4):
        want = getattr(ref, name)(RIDGE3.loss, RIDGE3.data, x_start(3), seed=seeds[r], noise_seed=secrets[r],
                                  **kwargs)
        assert_same(fast.select_replicate(batched, r), want)


def test_shared_public_seed_fresh_secrets_and_blocks(monkeypatch):
    kwargs = dict(VR, rho=1.0, lipschitz=1.3, dp_delta=1e-5, record_path=True)
    root = SecretSeed(SECRET, "user")
    batched = fast.zo_o2nc(RIDGE3.loss, RIDGE3.data, x_start(3), seed=6, noise_seed=root.spawn(3), **kwargs)
    monkeypatch.setattr(fast, "_BLOCK_BYTES", 1)  # one replicate per block: same draws, same arithmetic
    blocked = fast.zo_o2nc(RIDGE3.loss, RIDGE3.data, x_start(3), seed=6, noise_seed=root.spawn(3), **kwargs)
    for r, secret in enumerate(root.spawn(3)):
        want = ref.zo_o2nc(RIDGE3.loss, RIDGE3.data, x_start(3), seed=6, noise_seed=secret, **kwargs)
        assert_same(fast.select_replicate(batched, r), want)
        assert_same(fast.select_replicate(blocked, r), want)
    assert len(set(batched.output_index.tolist())) == 1  # public draws shared
    assert not np.array_equal(batched.releases[0], batched.releases[1])  # noise fresh


def test_replicate_seeds_without_noise():
    seeds = replicate_seeds(3, 3)
    kwargs = dict(NAIVE, noise="none")
    batched = fast.zo_o2nc_naive(RIDGE3.loss, RIDGE3.data, x_start(3), seed=list(seeds), **kwargs)
    assert batched.ledger.secret_seed_source is None
    for r in range(3):
        want = ref.zo_o2nc_naive(RIDGE3.loss, RIDGE3.data, x_start(3), seed=seeds[r], **kwargs)
        assert_same(fast.select_replicate(batched, r), want)


def test_replicate_seed_rules():
    kwargs = dict(VR, rho=1.0, lipschitz=1.3, dp_delta=1e-5)
    with pytest.raises(ValueError, match="noise_seed"):
        fast.zo_o2nc(RIDGE3.loss, RIDGE3.data, x_start(3), seed=[1, 2], noise_seed=[2, 3], **kwargs)  # a public one
    with pytest.raises(ValueError, match="distinct"):
        fast.zo_o2nc(RIDGE3.loss, RIDGE3.data, x_start(3), seed=[1, 2], noise_seed=[SECRET, SECRET], **kwargs)
    with pytest.raises(ValueError, match="length"):
        fast.zo_o2nc(RIDGE3.loss, RIDGE3.data, x_start(3), seed=[1, 2], noise_seed=[SECRET], **kwargs)
    with pytest.raises(TypeError, match="select_replicate|replicated"):
        fast.select_replicate(fast.zo_o2nc(RIDGE3.loss, RIDGE3.data, x_start(3), seed=1, noise_seed=SECRET, **kwargs),
                              0)


# --- refusals: the reference's, word for word -------------------------------------------------------------------

def _not_callable():
    return "not a loss"


REFUSALS = [
    ("data too small", "zo_o2nc", dict(VR, data=RIDGE3.data[:10], noise="none")),
    ("naive data too small", "zo_o2nc_naive", dict(NAIVE, data=RIDGE3.data[:10], noise="none")),
    ("no dp_delta", "zo_o2nc", dict(VR, rho=1.0, lipschitz=1.3)),
    ("no lipschitz", "zo_o2nc", dict(VR, rho=1.0, dp_delta=1e-5)),
    ("rho and noise_std", "zo_o2nc", dict(VR, rho=1.0, noise_std=1.0, lipschitz=1.0, dp_delta=1e-5)),
    ("bad noise", "zo_o2nc", dict(VR, noise="laplace")),
    ("bad count rule", "zo_o2nc", dict(VR, noise="none", count_rule="guess")),
    ("bad sigma rule", "zo_o2nc_naive", dict(NAIVE, noise="none", sigma_rule="guess")),
    ("settings and explicit", "zo_o2nc", dict(settings=thm49_settings(40, 3, 1.0, 0.5, 1.0, 1.0), T=3,
                                              dp_delta=1e-5)),
    ("settings of the other kind", "zo_o2nc_naive", dict(settings=thm49_settings(40, 3, 1.0, 0.5, 1.0, 1.0),
                                                         dp_delta=1e-5)),
    ("loss not callable", "zo_o2nc", dict(VR, loss="f", noise="none")),
    ("enforce without L", "zo_o2nc", dict(VR, noise="none", enforce_lipschitz=True)),
    ("secret equals public", "zo_o2nc", dict(VR, rho=1.0, lipschitz=1.0, dp_delta=1e-5, noise_seed=4)),
    ("non-finite x1", "zo_o2nc", dict(VR, noise="none", x1=np.array([np.nan, 0.0, 0.0]))),
    ("empty x1", "zo_o2nc_naive", dict(NAIVE, noise="none", x1=np.zeros(0))),
    ("bad data", "zo_o2nc", dict(VR, noise="none", data=np.ones(5))),
    ("bad seed", "zo_o2nc", dict(VR, noise="none", seed=-1)),
    ("zero step size", "zo_o2nc", dict(VR, noise="none", step_size=0.0)),
    ("bad B1", "zo_o2nc", dict(VR, noise="none", B1=0)),
    ("missing T", "zo_o2nc_naive", dict(NAIVE, noise="none", T=None)),
    ("loss of wrong type", "zo_o2nc", dict(VR, noise="none", loss=lambda x, z: "high")),
    ("loss returning arrays", "zo_o2nc", dict(VR, noise="none", loss=lambda x, z: np.ones(2))),
]


@pytest.mark.parametrize("case, name, overrides", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals_identical(case, name, overrides):
    kwargs = dict(loss=RIDGE3.loss, data=RIDGE3.data, x1=x_start(3), seed=4)
    kwargs.update(overrides)
    loss, data, x1 = kwargs.pop("loss"), kwargs.pop("data"), kwargs.pop("x1")
    with pytest.raises(Exception) as want:
        getattr(ref, name)(loss, data, x1, **kwargs)
    with pytest.raises(Exception) as got:
        getattr(fast, name)(loss, data, x1, **kwargs)
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


# --- the noise and public draws ---------------------------------------------------------------------------------

def test_noise_is_the_tree_of_the_secret_stream():
    """TREE(t) = Σ_{NODE(t)} σ z_b with z from ONE run-long secret stream, restarted every epoch."""
    from reference.mechanisms import tree_node
    from reference.rng import Streams

    result = fast.zo_o2nc(RIDGE3.loss, RIDGE3.data, x_start(3), seed=4, noise_std=0.5, lipschitz=1.3,
                          dp_delta=1e-5, noise_seed=SECRET, **VR)
    rng = Streams(SECRET).generator("zo_o2nc", "noise")
    z = np.array([rng.standard_normal(3) for _ in range(VR["K"] * VR["T"])]).reshape(VR["K"], VR["T"], 3)
    for k in range(VR["K"]):
        for t in range(1, VR["T"] + 1):
            want = sum((0.5 * z[k, b - 1] for _, b in tree_node(t)), np.zeros(3))
            assert np.array_equal(result.diagnostics.noise[k, t - 1], want)
    assert np.array_equal(result.releases, result.diagnostics.noiseless_sums + result.diagnostics.noise)


# --- hypothesis: small random configurations ----------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["zo_o2nc", "zo_o2nc_naive"]), st.integers(1, 3), st.integers(1, 4), st.integers(1, 3),
       st.integers(1, 3), st.integers(1, 2), st.sampled_from(["abs", "capped", "wshape"]),
       st.sampled_from(["rho", "none", "enforce"]), st.floats(1e-3, 1.0), st.integers(0, 2**40))
def test_hypothesis_draw_for_draw(name, d, T, K, b1, b2, profile, mode, step_size, seed):
    blocks = dict(B1=b1, B2=b2) if name == "zo_o2nc" else dict(batch_size=b1)
    n = K * (b1 + b2 * (T - 1)) if name == "zo_o2nc" else K * T * b1
    objective = ridge(d, n, profile, seed=seed % 97)
    kwargs = dict(T=T, K=K, smoothing_radius=0.2, step_size=step_size, seed=seed, record_path=True, **blocks)
    if mode == "rho":
        kwargs.update(rho=1.0, lipschitz=1.3, dp_delta=1e-5, noise_seed=SECRET)
    elif mode == "enforce":
        kwargs.update(noise_std=0.3, lipschitz=0.4, dp_delta=1e-5, noise_seed=SECRET, enforce_lipschitz=True)
    else:
        kwargs.update(noise="none")
    got, want = both(name, objective.loss, objective.data, x_start(d, seed % 13), **kwargs)
    assert_same(got, want)

