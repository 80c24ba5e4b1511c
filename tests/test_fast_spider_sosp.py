"""Tests for reference/fast/spider_sosp.py, the batched float64 twin of reference/algorithms/spider_sosp.py (Liu–Talwar
Algorithms 2 and 3), and for the sosp_level / is_sosp twins of reference/fast/stationarity.py (Definition 1.2).

- draw-for-draw agreement with the reference on both loss families (cosine, quadratic), both tree scopes, with and
  without perturbation, reset_drift_on_perturb both ways, ε = inf, enforce_constants, runs that halt on data, at the
  horizon and before their first step. Tolerance: none. The twin performs the reference's float64 operations in the
  reference's order (sums left to right from 0, the same norm, the same updates), so the iterates and every other
  array are BITWISE equal, and the public trace (kinds, batch sizes, drift, leaves, perturbation steps, batches, halt)
  is identical. A rounding band such as 1e-12·steps could not be justified anyway: the branches of Algorithm 2 are
  discontinuous in the release and the iteration amplifies a difference by up to 1 + |λ_min|/M per step near the
  saddle (the module doc of the twin);
- gradients that are not a known family: broadcasting, one record at a time, lying about batches, non-finite values,
  a LossFamily subclass (its own ``gradients``) — all equal the reference;
- GradientOracles (Algorithm 3), call by call against the reference's: outputs bitwise (NaN as NaN, signs of zeros
  too) and every counter (remaining, records_used, batches, nonfinite_counts, clipped_counts, evaluations) on both
  loss families, enforce_constants both ways, clip_radius given and not (0 included), random call sequences
  (hypothesis), non-finite gradients, batches exhausting the data, gradients that fail (the state after the refusal
  too), hostile constructor and call arguments; and the fast subject counts the class as its own;
- the streaming tree noise against ``reference.mechanisms.TreeMechanism`` with restarts;
- batch sizes: exact equality with the reference's rational ceilings (hypothesis, integer boundaries, extremes);
- sosp_level / is_sosp: bitwise agreement on random symmetric matrices, one point and many;
- hostile inputs: the reference's error types (and words) for the run, the batch sizes and the SOSP measures.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from reference import stationarity as ref_stationarity
from reference.algorithms import spider_sosp as ref
from reference.algorithms import spider_sosp_theory as th
from reference.algorithms.spider_sosp_privacy import spider_sosp_sigma
from reference.fast import spider_sosp as fast
from reference.fast import stationarity as fast_stationarity
from reference.mechanisms import TreeMechanism
from reference.objectives_sosp import CosineFamily, QuadraticFamily
from reference.rng import Streams
from reference.secrets import SecretSeed

SECRET = 2**70 + 4321  # the explicit secret seed of draw-for-draw comparisons (never a public seed here)
COS2 = CosineFamily([1.0, 1.0], [1.0, -1.0], 0.5)
COS3 = CosineFamily([1.0, 0.5, 2.0], [1.0, -1.0, -1.0], 0.3)
COS_DET = CosineFamily([1.0, 1.0], [1.0, -1.0], 0.0)
QUAD = QuadraticFamily(np.array([[1.0, 0.3], [0.3, 0.25]]), 0.5, 10.0)

TRACE_FIELDS = ("kinds", "perturbation_steps", "records_used", "records_available", "halt_reason", "next_batch_size")
TRACE_ARRAYS = ("released", "batch_sizes", "drift", "leaves")
DEBUG_ARRAYS = ("estimates", "tree_noise", "perturbations", "nonfinite_counts", "clipped_counts")


def settings_for(family, n, epsilon, *, x0, tree_scope="global", steps=None):
    B = family.loss_gap(x0)
    sigma = None
    if not math.isinf(epsilon):
        sigma = float(spider_sosp_sigma("gdp_exact", lipschitz=family.lipschitz, smoothness=family.smoothness,
                                        loss_gap=B, d=family.d, n=n, epsilon=epsilon, delta=1e-5, steps=steps,
                                        tree_scope=tree_scope))
    rho = family.hessian_lipschitz or 1.0  # the quadratic's Hessian is constant: every ρ > 0 is valid
    return th.spider_settings(n, family.d, family.lipschitz, family.smoothness, rho, B, epsilon, 1e-5,
                              noise_std=sigma, steps=steps, tree_scope=tree_scope)


def both(gradient, data, x0, config, *, seed=3, noise_seed=SECRET):
    got = fast.stochastic_spider(gradient, data, x0, config, seed=seed, noise_seed=noise_seed)
    want = ref.stochastic_spider(gradient, data, x0, config, seed=seed, noise_seed=noise_seed)
    return got, want


def assert_same(got, want):
    """The public trace identical, and every array bitwise equal (tolerance 0: module doc)."""
    for name in TRACE_FIELDS:
        assert getattr(got.trace, name) == getattr(want.trace, name), name
    for name in TRACE_ARRAYS:
        a, b = getattr(got.trace, name), getattr(want.trace, name)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), name
    assert len(got.trace.batch_indices) == len(want.trace.batch_indices)
    assert all(np.array_equal(a, b) for a, b in zip(got.trace.batch_indices, want.trace.batch_indices))
    assert got.iterates.shape == want.iterates.shape and np.array_equal(got.iterates, want.iterates)
    # the signs of zeros too: x_{t+1} = x_t − ηg̃_t reproduces the reference's operations exactly
    assert np.array_equal(np.signbit(got.iterates), np.signbit(want.iterates))
    for name in DEBUG_ARRAYS:
        a, b = getattr(got.debug, name), getattr(want.debug, name)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), name
    assert got.debug.evaluations == want.debug.evaluations
    assert np.array_equal(got.initial_point, want.initial_point) and got.config == want.config
    assert (got.seed, got.secret_seed_source, got.guarantee_condition) == (
        want.seed, want.secret_seed_source, want.guarantee_condition)


# --- draw for draw ----------------------------------------------------------------------------------------------

def _case(family, n, epsilon, *, x0=None, tree_scope="global", steps=None, data_seed=1, **flags):
    return dict(family=family, n=n, epsilon=epsilon, x0=x0, tree_scope=tree_scope, steps=steps, data_seed=data_seed,
                flags=flags)


CASES = {
    "cos-global": _case(COS2, 3000, 4.0),
    "cos-segment": _case(COS2, 3000, 4.0, tree_scope="segment"),
    "cos-no-perturb": _case(COS2, 3000, 4.0, perturb=False),
    "cos-segment-no-perturb": _case(COS2, 3000, 4.0, tree_scope="segment", perturb=False),
    "cos-reset-drift": _case(COS2, 3000, 4.0, reset_drift_on_perturb=True),
    "cos-segment-reset-drift": _case(COS2, 3000, 4.0, tree_scope="segment", reset_drift_on_perturb=True),
    "cos-nonprivate": _case(COS2, 3000, math.inf),
    "cos3-eps1": _case(COS3, 4000, 1.0, x0=np.array([0.1, -0.2, 0.05])),
    "cos3-segment-enforce": _case(COS3, 4000, 1.0, tree_scope="segment", enforce_constants=True),
    "cos-det": _case(COS_DET, 1500, math.inf),
    "cos-horizon": _case(COS2, 2000, 4.0, steps=25),
    "cos-one-step": _case(COS2, 1000, 4.0, steps=1),
    "quad-global": _case(QUAD, 3000, 4.0, x0=np.array([0.3, -2.0])),
    "quad-segment": _case(QUAD, 3000, 4.0, x0=np.array([0.3, -2.0]), tree_scope="segment"),
    "quad-no-perturb-reset": _case(QUAD, 3000, 4.0, x0=np.array([0.3, -2.0]), perturb=False,
                                   reset_drift_on_perturb=True),
    "quad-reset-drift-enforce": _case(QUAD, 3000, 4.0, x0=np.array([0.3, -2.0]), tree_scope="segment",
                                      reset_drift_on_perturb=True, enforce_constants=True),
    "quad-nonprivate": _case(QUAD, 2000, math.inf, x0=np.array([1.0, 1.0])),
}


def run_case(case, *, gradient=None, data=None, seed=3):
    family = case["family"]
    x0 = np.zeros(family.d) if case["x0"] is None else case["x0"]
    s = settings_for(family, case["n"], case["epsilon"], x0=x0, tree_scope=case["tree_scope"], steps=case["steps"])
    if data is None:
        data = family.sample(np.random.default_rng(case["data_seed"]), case["n"])
    config = s.config(**case["flags"])
    return both(family.gradient if gradient is None else gradient, data, x0, config, seed=seed)


@pytest.mark.parametrize("name", sorted(CASES))
def test_draw_for_draw(name):
    case = CASES[name]
    got, want = run_case(case)
    assert_same(got, want)
    tr = want.trace
    assert tr.steps >= 1
    flags = case["flags"]
    if flags.get("perturb", True) and tr.steps > 25:
        assert tr.perturbation_steps  # the line 9 branch was exercised
    if not flags.get("perturb", True):
        assert tr.perturbation_steps == ()
    if case["tree_scope"] == "segment" and tr.steps > 25:
        assert tr.kinds.count("O1") >= 2 and sorted(set(tr.leaves))[0] == 1  # the tree restarted
    # the public trace is what the reference's auditor recomputes from the release alone
    replay = ref.replay_schedule(got.trace.released, got.config, case["n"])
    assert replay.kinds == got.trace.kinds and np.array_equal(replay.batch_sizes, got.trace.batch_sizes)
    assert replay.perturbation_steps == got.trace.perturbation_steps


def test_draw_for_draw_halts_on_data():
    got, want = run_case(_case(COS2, 2000, 4.0))
    assert_same(got, want)
    tr = got.trace
    assert tr.halt_reason == "data" and 0 <= tr.records_available - tr.records_used < tr.next_batch_size
    assert tr.kinds.count("O2") > 0 and len(set(tr.batch_sizes.tolist())) > 2  # adaptive b_t really varied


def test_draw_for_draw_before_the_first_step():
    s = settings_for(COS2, 5000, 4.0, x0=np.zeros(2))
    data = COS2.sample(np.random.default_rng(0), s.batch_size - 1)
    got, want = both(COS2.gradient, data, np.zeros(2), s.config())
    assert_same(got, want)
    assert got.iterates.shape == (0, 2) and got.trace.halt_reason == "data" and got.debug.evaluations == 0


def test_draw_for_draw_dimension_one_zero_release():
    family = CosineFamily([1.0], [1.0], 0.0)  # exact critical point: every release is 0, every b_t is 1
    got, want = run_case(_case(family, 500, math.inf, perturb=False))
    assert_same(got, want)
    assert np.all(got.trace.batch_sizes[1:] == 1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_draw_for_draw_other_seeds_and_secret_seed_object(seed):
    case = _case(COS3, 3000, 2.0, tree_scope="segment" if seed % 2 else "global")
    family = case["family"]
    s = settings_for(family, 3000, 2.0, x0=np.zeros(3), tree_scope=case["tree_scope"])
    data = family.sample(np.random.default_rng(10 + seed), 3000)
    secret = SecretSeed(2**100 + seed, "user")
    got, want = both(family.gradient, data, np.zeros(3), s.config(), seed=seed, noise_seed=secret)
    assert_same(got, want)


def test_fresh_entropy_runs_differ_like_the_reference():
    s = settings_for(COS2, 1000, 4.0, x0=np.zeros(2))
    data = COS2.sample(np.random.default_rng(0), 1000)
    a = fast.stochastic_spider(COS2.gradient, data, np.zeros(2), s.config(), seed=1)
    b = fast.stochastic_spider(COS2.gradient, data, np.zeros(2), s.config(), seed=1)
    assert a.secret_seed_source == "os_entropy" and not np.array_equal(a.trace.released[0], b.trace.released[0])
    assert np.array_equal(a.trace.batch_indices[0], b.trace.batch_indices[0])  # the public order is shared


# --- gradients other than the known families ---------------------------------------------------------------------

def _cos2_broadcasting(x, z):
    return -COS2.c * COS2.s * np.sin(x - z)  # works for z of shape (p,) and (m, p)


def _cos2_one_record(x, z):
    z = np.asarray(z)
    if z.ndim != 1:
        raise ValueError("one record at a time")
    return COS2.gradient(x, z)


def _cos2_lying(x, z):
    z = np.asarray(z)
    if z.ndim == 2:  # claims a batch, but only the first row is right (the probe also reads the last one)
        return np.tile(COS2.gradient(x, z[0]), (z.shape[0], 1))
    return COS2.gradient(x, z)


def _cos2_listed(x, z):
    return [float(v) for v in COS2.gradient(x, z)]  # a Python list, one record only


class _Shifted(CosineFamily):
    """A LossFamily the twin does not know: its own formula, evaluated through the base class's ``gradients``."""

    def _gradient(self, x, z):
        return -self.c * self.s * np.sin(x - z) + 0.01 * np.cos(z)


@pytest.mark.parametrize("gradient", [_cos2_broadcasting, _cos2_one_record, _cos2_lying, _cos2_listed],
                         ids=["broadcasting", "one-record", "lying", "list"])
def test_other_gradient_callables(gradient):
    got, want = run_case(CASES["cos-segment"], gradient=gradient)
    assert_same(got, want)


def test_loss_family_subclass_uses_its_own_gradients():
    family = _Shifted([1.0, 1.0], [1.0, -1.0], 0.5)
    data = family.sample(np.random.default_rng(2), 2000)
    s = settings_for(family, 2000, 4.0, x0=np.zeros(2))
    got, want = both(family.gradient, data, np.zeros(2), s.config())
    assert_same(got, want)


def test_batched_modes_are_chosen_as_documented():
    from reference.fast.spider_sosp import _RecordGradients

    rows = COS2.sample(np.random.default_rng(0), 9)
    rows.flags.writeable = False
    x = np.array([0.3, -0.1])
    for gradient, mode in [(COS2.gradient, "batched"), (_cos2_broadcasting, "batched"),
                           (_cos2_one_record, "scalar"), (_cos2_lying, "scalar")]:
        evaluate = _RecordGradients(gradient, 2)
        values = evaluate([x, -x], rows, np.arange(9))
        assert evaluate.mode == mode
        want = [np.array([COS2.gradient(p, z) for z in rows]) for p in (x, -x)]
        assert all(np.array_equal(a, b) for a, b in zip(values, want))


def test_nonfinite_record_gradients_are_replaced_like_the_reference():
    def gradient(x, z):
        return np.full(2, np.nan) if z[0] > 1.0 else COS2.gradient(x, z)

    def batched(x, z):
        g = _cos2_broadcasting(x, z)
        if np.ndim(z) == 2:
            g[z[:, 0] > 1.0] = np.inf
        elif z[0] > 1.0:
            g[:] = np.inf
        return g

    for grad in (gradient, batched):
        got, want = run_case(CASES["cos-global"], gradient=grad)
        assert_same(got, want)
        assert want.debug.nonfinite_counts.sum() > 0


def test_enforce_constants_clips_like_the_reference():
    # a gradient that breaks Assumption 3.1 (5 times too steep): both clips are exercised
    def steep(x, z):
        return 5.0 * _cos2_broadcasting(x, z)

    got, want = run_case(_case(COS2, 3000, 4.0, enforce_constants=True), gradient=steep)
    assert_same(got, want)
    assert want.debug.clipped_counts.sum() > 0


def test_probe_calls_are_not_counted_and_o2_reads_each_record_at_both_points():
    calls = []

    def recording(x, z):
        calls.append(np.ndim(z))
        return _cos2_broadcasting(x, z)

    got, want = run_case(CASES["cos-global"], gradient=recording)
    assert_same(got, want)
    assert got.debug.evaluations == sum(b if k == "O1" else 2 * b
                                        for k, b in zip(got.trace.kinds, got.trace.batch_sizes))


# --- the streaming tree -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("sigma", [0.0, 0.7])
def test_tree_noise_matches_the_tree_mechanism_with_restarts(sigma):
    from reference.fast.spider_sosp import _TreeNoise

    d, steps = 3, 300
    restarts = {0, 5, 6, 70, 71, 200}  # step indices that start a new tree (crossing the read-ahead chunks)
    want_tree = TreeMechanism(d, np.full(steps, sigma), Streams(9).generator("spider_sosp", "noise"))
    got_tree = _TreeNoise(d, sigma, Streams(9).generator("spider_sosp", "noise"))
    start = 0
    for t in range(steps):
        if t in restarts:
            start = t
        leaf = t - start + 1
        a, b = got_tree(t, leaf), want_tree(leaf)
        assert np.array_equal(a, b) and np.array_equal(np.signbit(a), np.signbit(b))


# --- batch sizes ------------------------------------------------------------------------------------------------

positive = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)
extreme = st.floats(min_value=5e-324, max_value=1e300, allow_nan=False, allow_infinity=False)
epsilons = st.one_of(positive, st.just(math.inf))


@settings(max_examples=400, deadline=None)
@given(v=st.one_of(st.just(0.0), positive, extreme), alpha=st.one_of(positive, extreme), eps=epsilons,
       d=st.integers(1, 10**6), kappa=st.one_of(positive, extreme))
def test_adaptive_batch_size_equals_the_reference(v, alpha, eps, d, kappa):
    want = ref.adaptive_batch_size(v, alpha, eps, d, kappa)
    got = fast.adaptive_batch_size(v, alpha, eps, d, kappa)
    assert type(got) is int and got == want


@settings(max_examples=400, deadline=None)
@given(G=st.one_of(positive, extreme), d=st.integers(1, 10**6), eps=epsilons, alpha=st.one_of(positive, extreme))
def test_o1_batch_size_equals_the_reference(G, d, eps, alpha):
    assume(G / alpha < 1e100)  # b = ⌈G²/α² + …⌉ must stay a reasonable integer for the rational reference
    want = ref.o1_batch_size(G, d, eps, alpha)
    got = fast.o1_batch_size(G, d, eps, alpha)
    assert type(got) is int and got == want


@settings(max_examples=300, deadline=None)
@given(k=st.integers(1, 10**6), alpha=st.sampled_from([0.5, 0.25, 0.125, 1.0, 2.0, 0.1, 0.3]),
       kappa=st.sampled_from([1.0, 0.5, 4.0, 3.0, 0.7]), eps=st.sampled_from([1.0, 2.0, 0.5, 4.0, 0.3, math.inf]),
       d=st.sampled_from([1, 4, 16, 2, 3, 9]), nudge=st.sampled_from([-1, 0, 1]))
def test_batch_sizes_on_and_next_to_integer_boundaries(k, alpha, kappa, eps, d, nudge):
    # v chosen so that κv/α² or v√d/(αε) is (within one ulp of) the integer k: the float bracket must step aside
    for v in (k * alpha * alpha / kappa, (k * alpha * eps / math.sqrt(d)) if not math.isinf(eps) else 1.0):
        v = float(np.nextafter(v, math.inf if nudge > 0 else 0.0)) if nudge else v
        assert fast.adaptive_batch_size(v, alpha, eps, d, kappa) == ref.adaptive_batch_size(v, alpha, eps, d, kappa)
    G = math.sqrt(k) * alpha
    for value in (G, float(np.nextafter(G, math.inf)), float(np.nextafter(G, 0.0))):
        assert fast.o1_batch_size(value, d, eps, alpha) == ref.o1_batch_size(value, d, eps, alpha)


def test_batch_sizes_on_printed_boundaries():
    assert fast.adaptive_batch_size(0.75, 0.5, math.inf, 4, 1.0) == 3  # κv/α² = 3 exactly
    assert fast.adaptive_batch_size(0.75, 0.5, 1.0, 4, 0.1) == 3  # v√d/(αε) = 3 exactly
    assert fast.adaptive_batch_size(1.0, 1.0, 1.0, 2, 1e-9) == 2
    assert fast.o1_batch_size(1.0, 4, 4.0, 0.5) == 5  # 1 + 4 exactly
    # the rational check the float path must reproduce: the smallest k with k ≥ G²/α² and (k − G²/α²)² ≥ G²d/(εα)²
    G, alpha, eps, d = 0.3, 0.07, 1.7, 13
    r, q = Fraction(G) ** 2 / Fraction(alpha) ** 2, Fraction(G) ** 2 * d / (Fraction(eps) * Fraction(alpha)) ** 2
    k = fast.o1_batch_size(G, d, eps, alpha)
    assert k >= r and (k - r) ** 2 >= q and not (k - 1 >= r and (k - 1 - r) ** 2 >= q)


BATCH_HOSTILE = [
    ("adaptive_batch_size", (-1e-3, 1.0, 1.0, 2, 1.0)), ("adaptive_batch_size", (np.nan, 1.0, 1.0, 2, 1.0)),
    ("adaptive_batch_size", (np.inf, 1.0, 1.0, 2, 1.0)), ("adaptive_batch_size", (1.0, 0.0, 1.0, 2, 1.0)),
    ("adaptive_batch_size", (1.0, 1.0, 0.0, 2, 1.0)), ("adaptive_batch_size", (1.0, 1.0, 1.0, 0, 1.0)),
    ("adaptive_batch_size", (1.0, 1.0, 1.0, 2.0, 1.0)), ("adaptive_batch_size", (1.0, 1.0, 1.0, 2, -1.0)),
    ("adaptive_batch_size", ("1", 1.0, 1.0, 2, 1.0)), ("adaptive_batch_size", (1.0, 1.0, -math.inf, 2, 1.0)),
    ("adaptive_batch_size", (1.0, 1.0, 1.0, True, 1.0)), ("adaptive_batch_size", (None, 1.0, 1.0, 2, 1.0)),
    ("o1_batch_size", (0.0, 2, 1.0, 1.0)), ("o1_batch_size", (1.0, 2, 1.0, np.nan)),
    ("o1_batch_size", (1.0, -2, 1.0, 1.0)), ("o1_batch_size", (1.0, 2, -np.inf, 1.0)),
    ("o1_batch_size", (math.inf, 2, 1.0, 1.0)), ("o1_batch_size", (1.0, 2.5, 1.0, 1.0)),
    ("o1_batch_size", ([1.0], 2, 1.0, 1.0)),
]


def _raised(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 — the type and words are compared
        return type(exc), str(exc)
    return None


@pytest.mark.parametrize("name, args", BATCH_HOSTILE)
def test_batch_sizes_refuse_like_the_reference(name, args):
    want = _raised(getattr(ref, name), *args)
    assert want is not None
    assert _raised(getattr(fast, name), *args) == want


def test_batch_sizes_accept_mpmath_and_numpy_scalars_like_the_reference():
    args = (mpmath.mpf("0.3"), np.float32(0.2), mpmath.mpf(2), np.int64(5), 1.5)
    assert fast.adaptive_batch_size(*args) == ref.adaptive_batch_size(*args)
    args = (mpmath.mpf("1.3"), np.int32(7), np.float64(3.0), mpmath.mpf("0.05"))
    assert fast.o1_batch_size(*args) == ref.o1_batch_size(*args)


# --- hostile run inputs -----------------------------------------------------------------------------------------

def _config(**changes):
    base = dict(d=2, smoothness=1.0, alpha=0.1, epsilon=1.0, kappa=1.0, batch_size=10, threshold=0.1,
                freeze_steps=3, perturbation_scale=0.1, noise_std=0.05)
    base.update(changes)
    return ref.SpiderConfig(**base)


def _bad_dtype(x, z):
    return np.array(["a", "b"])


def _raises_on_second_record(x, z):
    if z[0] > 0:
        raise RuntimeError("a gradient that fails on some record")
    return COS2.gradient(x, z)


RUN_HOSTILE = {
    "nan-data": dict(data=np.full((50, 2), np.nan)),
    "1d-data": dict(data=np.zeros(50)),
    "empty-data": dict(data=np.zeros((0, 2))),
    "mpmath-data": dict(data=np.array([[mpmath.mpf(0)] * 2] * 50, dtype=object)),
    "string-data": dict(data="data"),
    "x0-shape": dict(x0=np.zeros(3)),
    "x0-nan": dict(x0=[np.nan, 0.0]),
    "x0-mpmath": dict(x0=np.array([mpmath.mpf(0), mpmath.mpf(0)], dtype=object)),
    "config": dict(config="config"),
    "gradient-none": dict(gradient=None),
    "gradient-shape": dict(gradient=lambda x, z: np.zeros(3)),
    "gradient-dtype": dict(gradient=_bad_dtype),
    "gradient-bool": dict(gradient=lambda x, z: np.array([True, False])),
    "gradient-complex": dict(gradient=lambda x, z: np.array([1j, 0.0])),
    "gradient-raises": dict(gradient=_raises_on_second_record),
    "family-dimension": dict(gradient=COS3.gradient),
    "seed-negative": dict(seed=-1),
    "seed-float": dict(seed=1.0),
    "seed-large": dict(seed=2**128),
    "noise-seed-string": dict(noise_seed="secret"),
    "noise-seed-equal": dict(seed=5, noise_seed=5),
    "noise-seed-bool": dict(noise_seed=True),
}


@pytest.mark.parametrize("name", sorted(RUN_HOSTILE))
def test_hostile_run_inputs_raise_like_the_reference(name):
    args = dict(gradient=COS2.gradient, data=COS2.sample(np.random.default_rng(0), 50), x0=np.zeros(2),
                config=_config(), seed=0, noise_seed=1)
    args.update(RUN_HOSTILE[name])

    def call(module):
        a = dict(args)
        return _raised(module.stochastic_spider, a.pop("gradient"), a.pop("data"), a.pop("x0"), a.pop("config"), **a)

    want = call(ref)
    assert want is not None, "the reference accepted a hostile input"
    assert call(fast) == want


def test_divergence_is_refused_like_the_reference():
    def huge(x, z):
        return np.full(2, 1e300)

    config = _config(smoothness=1e-10, noise_std=0.0)  # η = 1e10: the first iterate overflows
    data = COS2.sample(np.random.default_rng(0), 50)
    with np.errstate(over="ignore"):
        want = _raised(ref.stochastic_spider, huge, data, np.zeros(2), config, seed=0, noise_seed=1)
        got = _raised(fast.stochastic_spider, huge, data, np.zeros(2), config, seed=0, noise_seed=1)
    assert want is not None and want[0] is ValueError and "diverged" in want[1]
    assert got == want


# --- Algorithm 3: GradientOracles ------------------------------------------------------------------------------
#
# The twin's oracles against the reference's, call by call: every output bitwise (NaN compared as NaN, the signs of
# zeros too), every refusal with the same type and words, and after every call (returned or refused) the same state:
# remaining, records_used, batches, nonfinite_counts, clipped_counts, evaluations.

STEEP_COS2 = lambda x, z: 5.0 * _cos2_broadcasting(x, z)  # noqa: E731 — breaks Assumption 3.1: every clip is exercised


def _oracle_pair(gradient, data, order=None, **kwargs):
    order = np.arange(np.shape(data)[0]) if order is None else order
    return (fast.GradientOracles(gradient, data, order, **kwargs),
            ref.GradientOracles(gradient, data, order, **kwargs))


def _same_value(a, b) -> bool:
    """Bitwise equality of two float64 outputs: values (NaN as NaN) and the signs of every non-NaN entry."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return False
    if a.dtype != np.float64 or b.dtype != np.float64 or a.shape != b.shape:
        return False
    nan = np.isnan(a)
    return bool(np.array_equal(a, b, equal_nan=True) and np.array_equal(nan, np.isnan(b))
                and np.array_equal(np.signbit(a[~nan]), np.signbit(b[~nan])))


def _assert_same_state(got, want):
    assert (got.n, got.remaining, got.records_used, got.evaluations) == (
        want.n, want.remaining, want.records_used, want.evaluations)
    assert (got.d, got.enforce_constants, got.lipschitz, got.smoothness) == (
        want.d, want.enforce_constants, want.lipschitz, want.smoothness)
    assert got.nonfinite_counts == want.nonfinite_counts and got.clipped_counts == want.clipped_counts
    assert all(type(c) is int for c in got.nonfinite_counts + got.clipped_counts)
    assert len(got.batches) == len(want.batches)
    for a, b in zip(got.batches, want.batches):
        assert a.dtype == b.dtype == np.int64 and np.array_equal(a, b) and not a.flags.writeable
    assert got.data.dtype == np.float64 and np.array_equal(got.data, want.data) and not got.data.flags.writeable
    assert got.order.dtype == np.int64 and np.array_equal(got.order, want.order) and not got.order.flags.writeable


def _call_both(got, want, method, *args, **kwargs):
    """The same call on both oracles: equal outputs or equal refusals, then equal states. Returns the output (None on
    a refusal)."""
    outcome = []
    for oracles in (got, want):
        try:
            outcome.append(("value", getattr(oracles, method)(*args, **kwargs)))
        except Exception as exc:  # noqa: BLE001 — the type and words are compared
            outcome.append(("raised", (type(exc), str(exc))))
    (kind_a, a), (kind_b, b) = outcome
    assert kind_a == kind_b, (method, outcome)
    if kind_a == "value":
        assert _same_value(a, b), (method, a, b)
    else:
        assert a == b, (method, a, b)
    _assert_same_state(got, want)
    return a if kind_a == "value" else None


ORACLE_FAMILIES = {"cos2": (COS2, 3.0), "cos3": (COS3, 3.0), "quad": (QUAD, 25.0)}  # family, coordinate range of x


def _constants(family, enforce, shrink=1.0):
    """Constructor keywords; ``shrink`` < 1 makes the clip radii smaller than the family's constants (clips happen)."""
    if not enforce:
        return dict(d=family.d, enforce_constants=False)
    return dict(d=family.d, lipschitz=family.lipschitz * shrink, smoothness=family.smoothness * shrink,
                enforce_constants=True)


@pytest.mark.parametrize("clip_radius", [None, 0.05], ids=["default-radius", "clip-radius"])
@pytest.mark.parametrize("enforce", [False, True], ids=["plain", "enforce"])
@pytest.mark.parametrize("shrink", [1.0, 0.3], ids=["family-constants", "small-constants"])
@pytest.mark.parametrize("name", sorted(ORACLE_FAMILIES))
def test_oracles_bitwise_on_the_families_until_the_data_run_out(name, shrink, enforce, clip_radius):
    family, span = ORACLE_FAMILIES[name]
    n = 120
    records = family.sample(np.random.default_rng(7), n)
    order = np.random.default_rng(8).permutation(n)
    got, want = _oracle_pair(family.gradient, records, order, **_constants(family, enforce, shrink))
    rng = np.random.default_rng(9)
    x = rng.uniform(-span, span, family.d)
    clipped = 0
    for size in (16, 1, 9, 30, 2, 25, 7):  # O1, then O2 steps, then O1 again, as a run alternates
        if size in (16, 25):
            _call_both(got, want, "o1", x, size)
        else:
            y, x = x, x + rng.normal(0.0, 0.3 * span / 3, family.d)
            _call_both(got, want, "o2", x, y, size, clip_radius=clip_radius)
            _call_both(got, want, "o2", y, y, 1, clip_radius=clip_radius)  # x = x_{t−1}: radius M·0 = 0
        clipped = sum(want.clipped_counts)
    if enforce and (shrink < 1.0 or clip_radius is not None):
        assert clipped > 0  # the clips were exercised, not only the pass-through
    # the data run out: a draw larger than what is left is refused and reads nothing; exactly the rest is accepted
    left = want.remaining
    assert 1 < left < 60
    _call_both(got, want, "o1", x, left + 1)
    _call_both(got, want, "o2", x, -x, left + 1, clip_radius=clip_radius)
    assert want.remaining == got.remaining == left
    _call_both(got, want, "o2", x, -x, left, clip_radius=clip_radius)
    assert got.remaining == 0 and got.records_used == n
    _call_both(got, want, "o1", x, 1)  # nothing left: refused
    _call_both(got, want, "o2", x, -x, 1)


@settings(max_examples=120, deadline=None)
@given(name=st.sampled_from(sorted(ORACLE_FAMILIES)), enforce=st.booleans(), shrink=st.sampled_from([1.0, 0.5, 0.1]),
       seed=st.integers(0, 2**32 - 1), data=st.data())
def test_oracles_bitwise_on_random_call_sequences(name, enforce, shrink, seed, data):
    family, span = ORACLE_FAMILIES[name]
    n = data.draw(st.integers(1, 150), label="n")
    rng = np.random.default_rng(seed)
    records = family.sample(rng, n)
    got, want = _oracle_pair(family.gradient, records, rng.permutation(n), **_constants(family, enforce, shrink))
    coordinate = st.floats(-span, span, allow_nan=False, allow_infinity=False)
    point = st.lists(coordinate, min_size=family.d, max_size=family.d).map(np.array)
    for _ in range(data.draw(st.integers(1, 10), label="calls")):
        size = data.draw(st.integers(1, 60), label="batch_size")
        x = data.draw(point, label="x")
        if data.draw(st.booleans(), label="o1"):
            _call_both(got, want, "o1", x, size)
        else:
            y = data.draw(st.one_of(point, st.just(x)), label="x_previous")
            radius = data.draw(st.one_of(st.none(), st.just(0.0), st.floats(0.0, 2 * family.lipschitz)), label="r")
            _call_both(got, want, "o2", x, y, size, clip_radius=radius)


def test_o2_clip_at_the_top_eigenvector_of_the_quadratic():
    # ∇f(x; z) − ∇f(y; z) = A(x − y) with x − y along A's top eigenvector: ‖difference‖ = M‖x − y‖ exactly, so the
    # default radius is met to the last ulp, and the rounding decides record by record whether a clip happens
    vector = np.linalg.eigh(QUAD.A)[1][:, -1]
    records = QUAD.sample(np.random.default_rng(3), 400)
    got, want = _oracle_pair(QUAD.gradient, records, **_constants(QUAD, True))
    for k, scale in enumerate([1.0, 0.37, 3.1, 1e-8, 12.5]):
        y = np.array([0.3, -1.1]) * (k + 1)
        _call_both(got, want, "o2", y + scale * vector, y, 40)
    _call_both(got, want, "o1", np.array([30.0, -20.0]), 100)  # outside the ball ‖x‖ ≤ R: G clips the records
    assert want.clipped_counts[-1] > 0


def test_oracles_clip_to_zero_radius_keeps_the_signs_of_zeros():
    records = COS2.sample(np.random.default_rng(4), 60)
    got, want = _oracle_pair(STEEP_COS2, records, **_constants(COS2, True))
    x, y = np.array([0.4, -0.3]), np.array([-0.2, 0.5])
    out = _call_both(got, want, "o2", x, y, 20, clip_radius=0.0)  # every difference becomes ±0
    assert np.all(out == 0.0) and want.clipped_counts == [20]
    _call_both(got, want, "o2", x, y, 20, clip_radius=mpmath.mpf("0.25"))  # an mpmath radius is taken as a float
    _call_both(got, want, "o1", x, 20)  # 5 G: every record clipped to G
    assert want.clipped_counts[-1] == 20


def _nonfinite_scalar(x, z):
    """NaN for records with z_0 > 1 at every point; +inf in one coordinate at points with x_0 > 1 for records with
    z_1 < 0 (so an O2 pair can be non-finite at one point only)."""
    g = COS2.gradient(x, z)
    if z[0] > 1.0:
        return np.full(2, np.nan)
    if x[0] > 1.0 and z[1] < 0.0:
        g[1] = np.inf
    return g


def _nonfinite_batched(x, z):
    if np.ndim(z) == 1:
        return _nonfinite_scalar(x, z)
    g = _cos2_broadcasting(x, z)
    g[z[:, 0] > 1.0] = np.nan
    if x[0] > 1.0:
        g[z[:, 1] < 0.0, 1] = np.inf
    return g


@pytest.mark.parametrize("enforce", [False, True], ids=["plain", "enforce"])
@pytest.mark.parametrize("gradient", [_nonfinite_scalar, _nonfinite_batched], ids=["one-record", "batched"])
def test_oracles_replace_nonfinite_record_gradients_like_the_reference(gradient, enforce):
    records = 3.0 * COS2.sample(np.random.default_rng(5), 400)  # z_0 > 1 for about a quarter of the records
    got, want = _oracle_pair(gradient, records, np.random.default_rng(6).permutation(400),
                             **_constants(COS2, enforce, 0.5))
    high, low = np.array([1.5, 0.2]), np.array([0.3, -0.4])
    _call_both(got, want, "o1", high, 60)  # NaN and inf records
    _call_both(got, want, "o1", low, 60)  # NaN records only
    _call_both(got, want, "o2", high, low, 60)  # inf at x_t only
    _call_both(got, want, "o2", low, high, 60, clip_radius=0.1)  # inf at x_{t−1} only
    _call_both(got, want, "o2", low, low, 60)
    assert min(want.nonfinite_counts) > 0 and want.nonfinite_counts[0] > want.nonfinite_counts[1]
    assert want.evaluations == 2 * 60 + 3 * 2 * 60


def test_oracles_whose_every_record_is_nonfinite_return_zero():
    records = COS2.sample(np.random.default_rng(5), 10)
    got, want = _oracle_pair(lambda x, z: np.full(2, -np.inf), records, d=2)
    out = _call_both(got, want, "o1", np.zeros(2), 5)
    assert np.array_equal(out, np.zeros(2)) and not np.signbit(out).any()
    _call_both(got, want, "o2", np.zeros(2), np.ones(2), 5)


@pytest.mark.parametrize("gradient", [_cos2_broadcasting, _cos2_one_record, _cos2_lying, _cos2_listed, STEEP_COS2],
                         ids=["broadcasting", "one-record", "lying", "list", "steep"])
def test_oracles_with_other_gradient_callables(gradient):
    records = COS2.sample(np.random.default_rng(2), 200)
    for enforce in (False, True):
        got, want = _oracle_pair(gradient, records, **_constants(COS2, enforce))
        x, y = np.array([0.7, -1.2]), np.array([0.1, 0.4])
        _call_both(got, want, "o1", x, 50)
        _call_both(got, want, "o2", x, y, 50)
        _call_both(got, want, "o2", y, x, 1)
        _call_both(got, want, "o1", y, 99)


def test_oracles_of_a_loss_family_subclass():
    family = _Shifted([1.0, 1.0], [1.0, -1.0], 0.5)
    records = family.sample(np.random.default_rng(2), 100)
    got, want = _oracle_pair(family.gradient, records, **_constants(family, True, 0.5))
    _call_both(got, want, "o1", np.array([0.2, 0.9]), 40)
    _call_both(got, want, "o2", np.array([0.2, 0.9]), np.array([-1.0, 0.0]), 40)
    assert got._gradients.mode == "batched" and got._gradients.batched == family.gradients


def test_oracles_count_the_reference_calls_and_not_the_probe():
    calls = []

    def recording(x, z):
        calls.append(np.ndim(z))
        return _cos2_broadcasting(x, z)

    records = COS2.sample(np.random.default_rng(1), 50)
    got = fast.GradientOracles(recording, records, np.arange(50), d=2)
    got.o1(np.zeros(2), 10)
    got.o2(np.zeros(2), np.ones(2), 15)
    assert got.evaluations == 10 + 2 * 15
    assert got._gradients.mode == "batched" and calls.count(2) == 3  # one batched call per point


def test_oracles_copy_their_inputs_and_return_fresh_arrays():
    records = COS2.sample(np.random.default_rng(1), 30)
    order = np.arange(30)[::-1].copy()
    got, want = _oracle_pair(COS2.gradient, records, order, d=2)
    records[:] = 0.0  # the caller's arrays change after construction: neither object sees it
    order[:] = 0
    a = _call_both(got, want, "o1", np.array([0.5, 0.5]), 10)
    a[:] = 99.0  # the caller's output array is its own
    _call_both(got, want, "o1", np.array([0.5, 0.5]), 10)
    assert np.array_equal(got.batches[0], np.arange(29, 19, -1))


# -- refusals ---------------------------------------------------------------------------------------------------

def _raises_on_positive_first_coordinate(x, z):
    if z[0] > 0:
        raise RuntimeError("a gradient that fails on some record")
    return COS2.gradient(x, z)


def _raises_at_the_previous_point(x, z):
    if x[0] < 0 and z[0] > 0.5:
        raise RuntimeError("fails at x_{t-1}")
    return _cos2_broadcasting(x, z)


def _wrong_shape_on_some_records(x, z):
    """(3,) for a record with z_1 > 0.8, and (m, 3) for a batch holding one (the batched call falls back)."""
    z = np.asarray(z)
    g = _cos2_broadcasting(x, z)
    if np.any(z[..., 1] > 0.8):
        return np.concatenate([g, g[..., :1]], axis=-1)
    return g


def _complex_on_some_records(x, z):
    """complex values for a record with z_0 < −0.9, and for a batch holding one (the batched call falls back)."""
    g = _cos2_broadcasting(x, z)
    return g.astype(complex) if np.any(np.asarray(z)[..., 0] < -0.9) else g


@pytest.mark.parametrize("gradient", [_raises_on_positive_first_coordinate, _raises_at_the_previous_point,
                                      _wrong_shape_on_some_records, _complex_on_some_records, _bad_dtype,
                                      lambda x, z: np.array([True, False]), COS3.gradient],
                         ids=["raises", "raises-at-previous", "shape", "complex", "strings", "bool", "dimension"])
def test_oracles_refuse_gradients_like_the_reference(gradient):
    # the refusal's type and words, and the state after it: the batch was drawn, and evaluations counts the calls the
    # reference's loop had made (each returned call, including one whose value is then refused)
    records = COS2.sample(np.random.default_rng(11), 300)
    for first in ("o1", "o2"):
        got, want = _oracle_pair(gradient, records, d=2)
        x, y = np.array([0.3, 0.2]), np.array([-0.5, 0.1])
        refused = 0
        for _ in range(6):
            if first == "o1":
                refused += _call_both(got, want, "o1", x, 20) is None
            else:
                refused += _call_both(got, want, "o2", x, y, 20) is None
            refused += _call_both(got, want, "o2", x, y, 7) is None
        assert refused > 0
        assert got.records_used == 6 * 27  # refused calls used their records too, as in the reference


def test_o2_with_an_overflowing_step_reproduces_the_reference():
    # enforce_constants without clip_radius and x − x' overflowing: the radius M‖x − x'‖ is NaN. The reference then
    # "clips" every finite difference to NaN, and a zero difference raises ZeroDivisionError (NaN/0.0 in Python
    # floats) — reproduced, state included
    def gradient(x, z):
        if z[0] < -4:
            return np.full(2, np.nan)  # a non-finite record: replaced by 0, never "clipped"
        return np.full(2, z[0]) if z[0] > 0 else 1e-300 * x  # records with z_0 > 0: the same value at every point

    records = np.array([[-1.0, 0.0], [np.nextafter(0.0, -1.0), 1.0], [-5.0, 0.5], [-2.0, 0.5], [3.0, 0.0],
                        [-1.0, 2.0]])
    x, y = np.array([1e308, 0.0]), np.array([-1e308, 0.0])
    with np.errstate(over="ignore", invalid="ignore"):
        got, want = _oracle_pair(gradient, records, d=2, lipschitz=1.0, smoothness=1.0, enforce_constants=True)
        out = _call_both(got, want, "o2", x, y, 4)  # no zero difference: NaN, every finite record counted as clipped
        assert np.isnan(out).all() and want.clipped_counts == [3] and want.nonfinite_counts == [1]
        assert _call_both(got, want, "o2", x, y, 2) is None  # the batch's first record has a zero difference
        assert want.evaluations == 4 * 2 + 2 * 1
        got, want = _oracle_pair(gradient, records, d=2, lipschitz=1.0, smoothness=1.0, enforce_constants=True)
        _call_both(got, want, "o2", x, y, 3, clip_radius=1.0)  # a given radius is finite: ordinary clips


CTOR_HOSTILE = {
    "gradient-none": dict(gradient=None),
    "gradient-string": dict(gradient="gradient"),
    "data-1d": dict(data=np.zeros(5)),
    "data-3d": dict(data=np.zeros((5, 2, 1))),
    "data-nan": dict(data=np.full((5, 2), np.nan)),
    "data-inf": dict(data=np.array([[0.0, np.inf]] * 5)),
    "data-mpmath": dict(data=np.array([[mpmath.mpf(0)] * 2] * 5, dtype=object)),
    "data-mpmath-list": dict(data=[[mpmath.mpf(0)] * 2] * 5),
    "data-string": dict(data="data"),
    "data-none": dict(data=None),
    "order-short": dict(order=np.arange(4)),
    "order-long": dict(order=np.arange(6)),
    "order-2d": dict(order=np.arange(5).reshape(5, 1)),
    "order-float": dict(order=np.arange(5.0)),
    "order-bool": dict(order=np.ones(5, dtype=bool)),
    "order-object": dict(order=np.arange(5).astype(object)),
    "order-strings": dict(order=["0", "1", "2", "3", "4"]),
    "order-duplicate": dict(order=[0, 0, 1, 2, 3]),
    "order-negative": dict(order=[-1, 0, 1, 2, 3]),
    "order-out-of-range": dict(order=[1, 2, 3, 4, 5]),
    "order-huge": dict(order=np.array([0, 1, 2, 3, 2**63 + 4], dtype=np.uint64)),
    "order-none": dict(order=None),
    "d-zero": dict(d=0),
    "d-float": dict(d=2.0),
    "d-bool": dict(d=True),
    "d-string": dict(d="2"),
    "enforce-int": dict(enforce_constants=1),
    "enforce-string": dict(enforce_constants="yes"),
    "enforce-none": dict(enforce_constants=None),
    "lipschitz-negative": dict(lipschitz=-1.0),
    "lipschitz-nan": dict(lipschitz=np.nan),
    "lipschitz-inf": dict(lipschitz=np.inf),
    "lipschitz-string": dict(lipschitz="1"),
    "smoothness-zero": dict(smoothness=0.0),
    "smoothness-list": dict(smoothness=[1.0]),
    "enforce-without-lipschitz": dict(enforce_constants=True, smoothness=1.0),
    "enforce-without-smoothness": dict(enforce_constants=True, lipschitz=1.0),
    "enforce-without-either": dict(enforce_constants=True),
}


@pytest.mark.parametrize("name", sorted(CTOR_HOSTILE))
def test_oracles_constructor_refuses_like_the_reference(name):
    args = dict(gradient=COS2.gradient, data=COS2.sample(np.random.default_rng(0), 5), order=np.arange(5), d=2)
    args.update(CTOR_HOSTILE[name])

    def build(module):
        a = dict(args)
        return _raised(module.GradientOracles, a.pop("gradient"), a.pop("data"), a.pop("order"), **a)

    want = build(ref)
    assert want is not None, "the reference accepted a hostile input"
    assert build(fast) == want


@pytest.mark.parametrize("order", [np.arange(5, dtype=np.uint8)[::-1], [4, 3, 2, 1, 0], np.array([2, 0, 1, 4, 3],
                                                                                              dtype=np.int32)],
                         ids=["uint8", "list", "int32"])
def test_oracles_accept_integer_orders_like_the_reference(order):
    records = COS2.sample(np.random.default_rng(0), 5)
    got, want = _oracle_pair(COS2.gradient, records, order, d=np.int64(2), lipschitz=mpmath.mpf(2),
                             smoothness=np.float32(1.5), enforce_constants=np.bool_(True))
    _assert_same_state(got, want)
    _call_both(got, want, "o1", [0.1, 0.2], np.int64(3))
    _call_both(got, want, "o2", (0.1, 0.2), np.array([1, 2]), 2)


def test_oracles_over_no_records_refuse_every_draw():
    got, want = _oracle_pair(COS2.gradient, np.zeros((0, 2)), np.arange(0), d=2)
    assert got.remaining == 0
    _call_both(got, want, "o1", np.zeros(2), 1)
    _call_both(got, want, "o2", np.zeros(2), np.zeros(2), 1)
    assert _raised(fast.GradientOracles, COS2.gradient, np.zeros((0, 2)), [], d=2) == _raised(
        ref.GradientOracles, COS2.gradient, np.zeros((0, 2)), [], d=2)  # [] is a float array: not an order


CALL_HOSTILE = {
    "x-shape": ("o1", (np.zeros(3), 2), {}),
    "x-2d": ("o1", (np.zeros((1, 2)), 2), {}),
    "x-scalar": ("o1", (0.0, 2), {}),
    "x-nan": ("o1", ([np.nan, 0.0], 2), {}),
    "x-inf": ("o2", ([np.inf, 0.0], [0.0, 0.0], 2), {}),
    "x-mpmath": ("o1", (np.array([mpmath.mpf(0)] * 2, dtype=object), 2), {}),
    "x-mpmath-list": ("o1", ([mpmath.mpf(0), mpmath.mpf(1)], 2), {}),
    "x-string": ("o1", ("x", 2), {}),
    "x-none": ("o2", (None, [0.0, 0.0], 2), {}),
    "x-previous-shape": ("o2", ([0.0, 0.0], [0.0], 2), {}),
    "x-previous-nan": ("o2", ([0.0, 0.0], [0.0, np.nan], 2), {}),
    "x-previous-mpmath": ("o2", ([0.0, 0.0], np.array([mpmath.mpf(0)] * 2, dtype=object), 2), {}),
    "batch-zero": ("o1", ([0.0, 0.0], 0), {}),
    "batch-negative": ("o2", ([0.0, 0.0], [1.0, 0.0], -1), {}),
    "batch-float": ("o1", ([0.0, 0.0], 2.0), {}),
    "batch-fraction": ("o1", ([0.0, 0.0], 1.5), {}),
    "batch-bool": ("o1", ([0.0, 0.0], True), {}),
    "batch-string": ("o2", ([0.0, 0.0], [1.0, 0.0], "2"), {}),
    "batch-none": ("o1", ([0.0, 0.0], None), {}),
    "batch-huge": ("o1", ([0.0, 0.0], 10**30), {}),
    "batch-too-large": ("o2", ([0.0, 0.0], [1.0, 0.0], 51), {}),
    # a bad radius is checked after the draw, as in the reference: the records are used all the same
    "radius-negative": ("o2", ([0.0, 0.0], [1.0, 0.0], 2), dict(clip_radius=-1.0)),
    "radius-nan": ("o2", ([0.0, 0.0], [1.0, 0.0], 2), dict(clip_radius=np.nan)),
    "radius-inf": ("o2", ([0.0, 0.0], [1.0, 0.0], 2), dict(clip_radius=np.inf)),
    "radius-string": ("o2", ([0.0, 0.0], [1.0, 0.0], 2), dict(clip_radius="1")),
    "radius-list": ("o2", ([0.0, 0.0], [1.0, 0.0], 2), dict(clip_radius=[1.0])),
    "radius-complex": ("o2", ([0.0, 0.0], [1.0, 0.0], 2), dict(clip_radius=1j)),
    "o2-positional-radius": ("o2", ([0.0, 0.0], [1.0, 0.0], 2, 1.0), {}),
    "o1-radius": ("o1", ([0.0, 0.0], 2), dict(clip_radius=1.0)),
}


@pytest.mark.parametrize("enforce", [False, True], ids=["plain", "enforce"])
@pytest.mark.parametrize("name", sorted(CALL_HOSTILE))
def test_oracle_calls_refuse_like_the_reference(name, enforce):
    method, args, kwargs = CALL_HOSTILE[name]
    records = COS2.sample(np.random.default_rng(0), 60)
    got, want = _oracle_pair(COS2.gradient, records, **_constants(COS2, enforce))
    _call_both(got, want, "o1", [0.1, 0.2], 10)  # the batched mode is chosen: a refusal must not disturb it
    assert _call_both(got, want, method, *args, **kwargs) is None
    _call_both(got, want, "o2", [0.3, 0.2], [0.1, 0.2], 3)  # the objects still agree after the refusal


def test_the_fast_subject_runs_its_own_oracles():
    from proofs_checks.subjects import fast_subject

    subject = fast_subject()
    assert "GradientOracles" not in subject.borrowed
    assert subject.GradientOracles is fast.GradientOracles
    assert fast.GradientOracles.__module__ == "reference.fast.spider_sosp"


# --- sosp_level / is_sosp ---------------------------------------------------------------------------------------

def _symmetric(a):
    return (a + a.T) / 2


matrices = st.integers(1, 6).flatmap(lambda d: st.tuples(
    hnp.arrays(np.float64, (d,), elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)),
    hnp.arrays(np.float64, (d, d), elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)),
))


@settings(max_examples=300, deadline=None)
@given(pair=matrices, rho=st.floats(1e-3, 1e3), alpha=st.floats(0.0, 1e4), scale=st.sampled_from([1.0, 1e-6, 1e6]))
def test_sosp_twins_agree_on_random_symmetric_matrices(pair, rho, alpha, scale):
    g, a = pair
    g, h = g * scale, _symmetric(a) * scale
    want = ref_stationarity.sosp_level(g, h, rho)
    got = fast_stationarity.sosp_level(g, h, rho)
    assert type(got) is float and got == want  # same operations: bitwise
    assert fast_stationarity.is_sosp(g, h, rho, alpha) is ref_stationarity.is_sosp(g, h, rho, alpha)
    # at α = α*: the reference's decision, whatever it is (curvature²/ρ ≤ α* does not always give curvature² ≤ ρα*
    # in float64; the twin reproduces the reference, it does not correct it)
    assert fast_stationarity.is_sosp(g, h, rho, want) is ref_stationarity.is_sosp(g, h, rho, want)


@pytest.mark.parametrize("d", [1, 2, 5, 9])
def test_sosp_twins_over_many_points(d):
    rng = np.random.default_rng(d)
    g = rng.standard_normal((4, 7, d)) * rng.choice([1e-3, 1.0, 1e-300, 1e300], size=(4, 7, 1))
    a = rng.standard_normal((4, 7, d, d))
    h = (a + np.swapaxes(a, -1, -2)) / 2
    levels = fast_stationarity.sosp_level(g, h, 0.8)
    decisions = fast_stationarity.is_sosp(g, h, 0.8, 1.5)
    assert levels.shape == decisions.shape == (4, 7) and decisions.dtype == bool
    for i in np.ndindex(4, 7):
        assert levels[i] == ref_stationarity.sosp_level(g[i], h[i], 0.8)
        assert decisions[i] == ref_stationarity.is_sosp(g[i], h[i], 0.8, 1.5)


def test_sosp_twins_at_the_cosine_saddle():
    # ∇F(0) = 0 and λ_min = −φ max c: α* = (φ max c)²/ρ exactly as the reference computes it
    g, h = COS2.population_gradient(np.zeros(2)), COS2.population_hessian(np.zeros(2))
    rho = COS2.hessian_lipschitz
    assert fast_stationarity.sosp_level(g, h, rho) == ref_stationarity.sosp_level(g, h, rho) > 0
    minimum = COS2.population_minimizer()
    assert fast_stationarity.sosp_level(COS2.population_gradient(minimum), COS2.population_hessian(minimum),
                                        rho) == ref_stationarity.sosp_level(
        COS2.population_gradient(minimum), COS2.population_hessian(minimum), rho)


SOSP_HOSTILE = {
    "nan-gradient": (np.array([np.nan, 0.0]), np.eye(2), 1.0, 1.0),
    "inf-hessian": (np.zeros(2), np.array([[np.inf, 0.0], [0.0, 1.0]]), 1.0, 1.0),
    "scalar-gradient": (1.0, np.eye(1), 1.0, 1.0),
    "empty-gradient": (np.zeros(0), np.zeros((0, 0)), 1.0, 1.0),
    "hessian-shape": (np.zeros(2), np.eye(3), 1.0, 1.0),
    "hessian-vector": (np.zeros(2), np.zeros(2), 1.0, 1.0),
    "asymmetric": (np.zeros(2), np.array([[1.0, 0.5], [0.0, 1.0]]), 1.0, 1.0),
    "rho-zero": (np.zeros(2), np.eye(2), 0.0, 1.0),
    "rho-inf": (np.zeros(2), np.eye(2), math.inf, 1.0),
    "rho-mpmath": (np.zeros(2), np.eye(2), mpmath.mpf(1), 1.0),
    "rho-string": (np.zeros(2), np.eye(2), "1", 1.0),
    "mpmath-gradient": (np.array([mpmath.mpf(0)] * 2, dtype=object), np.eye(2), 1.0, 1.0),
    "mpmath-nan-gradient": (np.array([mpmath.nan, mpmath.mpf(0)], dtype=object), np.eye(2), 1.0, 1.0),
    "string-hessian": (np.zeros(2), "eye", 1.0, 1.0),
    "alpha-negative": (np.zeros(2), np.eye(2), 1.0, -1.0),
    "alpha-nan": (np.zeros(2), np.eye(2), 1.0, np.nan),
    "alpha-mpmath": (np.zeros(2), np.eye(2), 1.0, mpmath.mpf(1)),
}


@pytest.mark.parametrize("name", sorted(SOSP_HOSTILE))
def test_sosp_twins_refuse_like_the_reference(name):
    g, h, rho, alpha = SOSP_HOSTILE[name]
    if not name.startswith("alpha"):
        want = _raised(ref_stationarity.sosp_level, g, h, rho)
        got = _raised(fast_stationarity.sosp_level, g, h, rho)
        assert want is not None and got is not None and got[0] is want[0]
        assert got[1].split(",")[0].split(" (")[0] == want[1].split(",")[0].split(" (")[0]  # same parameter and rule
    want = _raised(ref_stationarity.is_sosp, g, h, rho, alpha)
    got = _raised(fast_stationarity.is_sosp, g, h, rho, alpha)
    assert want is not None and got is not None and got[0] is want[0]


def test_sosp_twins_refuse_an_asymmetric_point_of_a_batch():
    h = np.stack([np.eye(2), np.array([[1.0, 0.5], [0.0, 1.0]])])
    with pytest.raises(ValueError, match=r"symmetric.*point \(1,\)"):
        fast_stationarity.sosp_level(np.zeros((2, 2)), h, 1.0)
    with pytest.raises(ValueError, match="hessian must have shape"):
        fast_stationarity.sosp_level(np.zeros((2, 2)), np.eye(2), 1.0)
