"""Tests for reference/fast/dpzero.py, the vectorized float64 twin of reference/algorithms/dpzero.py.

dpzero §2: Alg 1 (DPGD-0th), Alg 2 (DPZero), §2.1 DP-GD, §2.4 MeZO.

- the generators and directions are bitwise those of reference.rng.Streams / direction_for_step;
- draw-for-draw agreement with the reference on every variant (direction law, clip target, batching with
  each accountant, no noise; d = 1; trajectories and traces): output index, ledger and diagnostics
  identical, arrays within 1e-12 relative (bitwise equal in practice: same draws, same summation order);
- replicates: replicate r of a batched run is the single run with seed[r] and the r-th secret seed, in any
  block size, 128-bit public seeds included; the calling convention of loss/gradient/trace;
- the secret seed: fresh entropy by default, refused when it equals any public seed of the call, recorded
  (source, condition) but never shown;
- non-finite per-record values replaced exactly as the reference does;
- bad inputs raise the reference's errors, word for word; seed sequences are validated;
- hypothesis over small random configurations.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.algorithms import dpzero as ref
from reference.fast import dpzero as fast
from reference.objectives import EffectiveRankQuadratic, RidgeSum
from reference.precision import to_mp
from reference.rng import Streams
from reference.secrets import SecretSeed, replicate_seeds, secret_seed

EPS, DELTA = 3.0, 1e-5
ARRAY_FIELDS = ("output", "final_iterate", "trajectory", "trace", "releases")
#: The explicit secret seed of draw-for-draw comparisons (never one of the public seeds used here).
SECRET = 2**70 + 99


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ref.ReproductionModeWarning)  # the reproduction mode is tested on purpose
        warnings.filterwarnings("ignore", message="the optimal order")
        yield


def squared_norm(x):
    x = np.asarray(x, dtype=np.float64)
    return np.sum(x * x, axis=-1)


def problem(kind, d, n, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "quadratic":
        objective = EffectiveRankQuadratic(d, n, "sqrt", rng)
    else:
        objective = RidgeSum.random(d, n, rng, lipschitz=1.4, profile="wshape", tau=0.5)
    return objective, rng.normal(size=d)


def kwargs_for(algorithm, *, batching="full", batch_size=None, accountant=None, private=True, direction="sphere",
               clip_target="normalized", steps=6, noise_seed=SECRET, clip=0.9, perturbation=0.05):
    kwargs = dict(steps=steps, step_size=0.08, clip_threshold=clip, batching=batching, batch_size=batch_size,
                  record_trajectory=True, trace=squared_norm)
    if algorithm != "dpgd":
        kwargs.update(perturbation=perturbation, direction=direction)
    if algorithm == "dpzero":
        kwargs["clip_target"] = clip_target
    if algorithm != "mezo":
        kwargs["noise_seed"] = noise_seed
        if private:
            kwargs.update(epsilon=EPS, delta=DELTA, accountant=accountant)
        else:
            kwargs["noise"] = "none"
    return kwargs


def run(module, algorithm, objective, x0, seed, **kwargs):
    fn = objective.gradient if algorithm == "dpgd" else objective.loss
    return getattr(module, algorithm)(fn, objective.data, x0, seed=seed, **kwargs)


def assert_same_run(want, got, rtol=1e-12):
    assert isinstance(got.output_index, int) and got.output_index == want.output_index
    assert got.ledger == want.ledger and type(got.ledger) is type(want.ledger)
    assert got.diagnostics == want.diagnostics and type(got.diagnostics) is type(want.diagnostics)
    for name in ARRAY_FIELDS:
        a, b = getattr(want, name), getattr(got, name)
        if a is None:
            assert b is None, name
            continue
        assert b.shape == a.shape and b.dtype == np.float64, name
        scale = max(1.0, float(np.max(np.abs(a))))
        np.testing.assert_allclose(b, a, rtol=0, atol=rtol * scale, err_msg=name)


# ---------------------------------------------------------------------------------------------------
# Generators and directions: bitwise


@pytest.mark.parametrize("seed", [0, 1, 7, 2**32 - 1, 2**32, 2**40 + 3, 2**63 + 11, 2**64 - 1])
def test_generators_are_the_streams(seed):
    factory = fast._generator_factory([seed, seed], ("dpzero", "noise"))
    want = Streams(seed).generator("dpzero", "noise").standard_normal(20)
    assert np.array_equal(factory(0).standard_normal(20), want)
    steps = [0, 1, 5, 2**31, 2**32 - 1]
    factory = fast._generator_factory([seed] * len(steps), ("dpzero", "direction"), steps)
    for k, t in enumerate(steps):
        assert np.array_equal(factory(k).random(5), Streams(seed).generator("dpzero", "direction", t).random(5))


def test_generators_fall_back_to_streams_beyond_64_bits():
    seed = 2**70 + 5
    factory = fast._generator_factory([seed], ("dpzero", "output"))
    assert factory(0).integers(10**9) == Streams(seed).generator("dpzero", "output").integers(10**9)
    factory = fast._generator_factory([3], ("dpzero", "direction"), [2**33])
    assert factory(0).random() == Streams(3).generator("dpzero", "direction", 2**33).random()


@pytest.mark.parametrize("direction", ["sphere", "gaussian"])
@pytest.mark.parametrize("d", [1, 2, 7, 130, 1000])
def test_directions_are_bitwise_direction_for_step(direction, d):
    seeds, steps = [4, 4, 9, 2**45], [0, 3, 3, 17]
    got = fast._directions(seeds, np.array(steps), d, direction)
    for k in range(len(seeds)):
        assert np.array_equal(got[k], ref.direction_for_step(seeds[k], steps[k], d, direction))


def test_reexports_are_the_reference_objects():
    for name in ("DPResult", "Ledger", "NonPrivateDiagnostics", "PrivacyPlan", "privacy_plan", "direction_for_step",
                 "ACCOUNTANTS", "ReproductionModeWarning", "steps_per_epoch"):
        assert getattr(fast, name) is getattr(ref, name)


# ---------------------------------------------------------------------------------------------------
# Draw for draw, every variant

PRIVATE = [("full", None, "lemma22"), ("full", None, "gdp_exact"), ("poisson", 4, "rdp_opacus"),
           ("shuffle", 3, "gdp_participation"), ("shuffle", 4, "poisson_rdp_for_shuffling")]
NOISELESS = [("full", None), ("poisson", 3), ("shuffle", 4)]


def _variants():
    out = []
    for batching, batch, accountant in PRIVATE:
        for direction in ("sphere", "gaussian"):
            for clip_target in ("normalized", "raw_difference"):
                out.append(("dpzero", dict(batching=batching, batch_size=batch, accountant=accountant,
                                           direction=direction, clip_target=clip_target, noise_seed=99)))
            out.append(("dpgd_zeroth_order", dict(batching=batching, batch_size=batch, accountant=accountant,
                                                  direction=direction, noise_seed=99)))
        out.append(("dpgd", dict(batching=batching, batch_size=batch, accountant=accountant)))
    for batching, batch in NOISELESS:
        for direction in ("sphere", "gaussian"):
            out.append(("dpzero", dict(batching=batching, batch_size=batch, private=False, direction=direction,
                                       clip_target="raw_difference")))
            out.append(("dpgd_zeroth_order", dict(batching=batching, batch_size=batch, private=False,
                                                  direction=direction)))
            out.append(("mezo", dict(batching=batching, batch_size=batch, private=False, direction=direction)))
        out.append(("dpgd", dict(batching=batching, batch_size=batch, private=False)))
    return out


@pytest.mark.parametrize("algorithm, options", _variants(),
                         ids=[f"{a}-" + "-".join(str(v) for v in o.values()) for a, o in _variants()])
def test_agrees_with_reference_draw_for_draw(algorithm, options):
    objective, x0 = problem("quadratic" if algorithm == "dpgd" else "ridge", 4, 10, seed=len(str(options)))
    kwargs = kwargs_for(algorithm, **options)
    if options.get("clip_target") == "raw_difference":
        kwargs["clip_threshold"] = 2 * kwargs["perturbation"] * 0.9
    assert_same_run(run(ref, algorithm, objective, x0, 5, **kwargs), run(fast, algorithm, objective, x0, 5, **kwargs))


@pytest.mark.parametrize("algorithm", ["dpzero", "dpgd_zeroth_order", "dpgd", "mezo"])
@pytest.mark.parametrize("batching, batch_size", [("full", None), ("poisson", 2), ("shuffle", 3)])
def test_one_dimension_is_bitwise(algorithm, batching, batch_size):
    """d = 1: the loss has no reduction, so both calling conventions give the same bits."""
    objective, x0 = problem("quadratic", 1, 7, seed=3)
    accountant = {"full": "lemma22", "poisson": "rdp_opacus", "shuffle": "gdp_participation"}[batching]
    kwargs = kwargs_for(algorithm, batching=batching, batch_size=batch_size, accountant=accountant, noise_seed=1,
                        private=algorithm != "mezo")
    want, got = run(ref, algorithm, objective, x0, 2, **kwargs), run(fast, algorithm, objective, x0, 2, **kwargs)
    assert got.output_index == want.output_index and got.ledger == want.ledger
    assert got.diagnostics == want.diagnostics
    for name in ARRAY_FIELDS:
        assert np.array_equal(getattr(got, name), getattr(want, name)), name


def test_rdp_accountant():
    """The 'rdp' calibration costs seconds: the reference memoises the plan, which both backends share."""
    objective, x0 = problem("quadratic", 3, 9, seed=1)
    for algorithm in ("dpzero", "dpgd_zeroth_order", "dpgd"):
        kwargs = kwargs_for(algorithm, batching="poisson", batch_size=3, accountant="rdp", noise_seed=4)
        want = run(ref, algorithm, objective, x0, 8, **kwargs)
        assert_same_run(want, run(fast, algorithm, objective, x0, 8, **kwargs))


def test_without_trajectory_or_trace_and_mpmath_inputs():
    objective, x0 = problem("ridge", 3, 8, seed=2)
    kwargs = kwargs_for("dpzero", batching="shuffle", batch_size=3, accountant="gdp_participation")
    kwargs.update(record_trajectory=False, trace=None)
    want = run(ref, "dpzero", objective, x0, 1, **kwargs)
    got = run(fast, "dpzero", objective, to_mp(x0), 1, **kwargs)  # mpmath x0 is rounded to float64: exact here
    assert got.trajectory is None and got.trace is None
    assert_same_run(want, got)


def test_inputs_not_mutated_and_iterates_fresh():
    objective, x0 = problem("quadratic", 3, 6, seed=4)
    data = np.array(objective.data)
    x0_copy, data_copy = x0.copy(), data.copy()
    result = fast.dpzero(objective.loss, data, x0, **kwargs_for("dpzero", noise_seed=3), seed=1)
    assert np.array_equal(x0, x0_copy) and np.array_equal(data, data_copy)
    result.output[:] = 0.0  # the output is a copy, not a view of the trajectory
    assert not np.all(result.trajectory[result.output_index] == 0.0)


# ---------------------------------------------------------------------------------------------------
# Replicates


@pytest.mark.parametrize("algorithm", ["dpzero", "dpgd_zeroth_order", "dpgd", "mezo"])
@pytest.mark.parametrize("batching, batch_size, accountant", [("full", None, "lemma22"), ("poisson", 3, "rdp_opacus"),
                                                               ("shuffle", 2, "gdp_participation")])
@pytest.mark.parametrize("block_bytes", [None, 1])
def test_replicate_r_is_the_single_run(algorithm, batching, batch_size, accountant, block_bytes, monkeypatch):
    if block_bytes is not None:
        monkeypatch.setattr(fast, "_BLOCK_BYTES", block_bytes)  # one replicate per block
    objective, x0 = problem("quadratic", 2, 7, seed=5)
    private = algorithm != "mezo"
    seeds = np.array([3, 3, 11, 2**40])
    noise = np.array([5, 6, 8, 2**63 + 1], dtype=np.uint64)
    root = secret_seed(12345)  # spawned into one secret seed per replicate
    layouts = [(seeds, None, None)]
    if private:
        layouts += [(seeds, noise, [int(v) for v in noise]), (17, noise, [int(v) for v in noise]),
                    (seeds, root, list(root.spawn(len(seeds)))), ([2**100, 2**127 + 5], [7, 9], [7, 9])]
    for seed, noise_seed, secrets in layouts:
        if private and noise_seed is None:
            continue  # fresh secret entropy: tested on its own below
        kwargs = kwargs_for(algorithm, batching=batching, batch_size=batch_size, accountant=accountant, private=private,
                            noise_seed=noise_seed, steps=5)
        if not private:
            kwargs.pop("noise_seed", None)
        batched = run(fast, algorithm, objective, x0, seed, **kwargs)
        replicates = len(secrets) if secrets is not None else len(seed)
        assert batched.output.shape == (replicates, 2) and batched.output_index.shape == (replicates,)
        assert batched.trajectory.shape == (replicates, 6, 2) and batched.trace.shape == (replicates, 6)
        vector = algorithm in ("dpgd_zeroth_order", "dpgd")
        assert batched.releases.shape == ((replicates, 5, 2) if vector else (replicates, 5))
        diagnostics = batched.diagnostics
        assert isinstance(diagnostics, fast.ReplicatedDiagnostics) and diagnostics.replicates == replicates
        assert diagnostics.clip_counts.shape == (replicates, 5) and diagnostics.batch_sizes.dtype == np.int64
        assert diagnostics.nonfinite_counts.shape == (replicates, 5)
        assert isinstance(batched.ledger.seed, tuple) and len(batched.ledger.seed) == replicates
        for r in range(replicates):
            public = int(seed[r]) if np.ndim(seed) else seed
            single = dict(kwargs, noise_seed=secrets[r]) if private else kwargs
            want = run(ref, algorithm, objective, x0, public, **single)
            one = fast.select_replicate(batched, r)
            if noise_seed is root:  # the condition of the seed they were spawned from, not of the spawned one
                assert one.ledger.guarantee_condition == root.guarantee_condition
                one = dataclasses.replace(one, ledger=dataclasses.replace(
                    one.ledger, guarantee_condition=want.ledger.guarantee_condition))
            assert_same_run(want, one)
            expected = want.ledger if noise_seed is not root else dataclasses.replace(
                want.ledger, guarantee_condition=root.guarantee_condition)
            assert batched.ledger.replicate(r) == expected
            assert diagnostics.replicate(r) == want.diagnostics
            assert diagnostics.clip_fraction[r] == pytest.approx(want.diagnostics.clip_fraction, rel=1e-15)


def test_calling_convention():
    """loss: (2, 1, d) vs rows (m, p) -> (2, m) single; (2, R, 1, d) vs (n, p) or (R, m, p) -> (2, R, m)."""
    objective, x0 = problem("quadratic", 3, 8, seed=6)
    calls = []

    def loss(points, rows):
        calls.append((points.shape, rows.shape, rows.flags.writeable))
        return objective.loss(points, rows)

    def trace(x):
        calls.append(("trace", np.shape(x)))
        return squared_norm(x)

    common = dict(steps=2, step_size=0.1, perturbation=0.1, clip_threshold=1.0, noise="none", trace=trace)
    fast.dpzero(loss, objective.data, x0, seed=1, **common)
    assert calls == [("trace", (3,)), ((2, 1, 3), (8, 3), False), ("trace", (3,)),
                     ((2, 1, 3), (8, 3), False), ("trace", (3,))]
    calls.clear()
    fast.dpzero(loss, objective.data, x0, seed=np.array([1, 2]), batching="shuffle", batch_size=4, **common)
    assert calls[:2] == [("trace", (2, 3)), ((2, 2, 1, 3), (2, 4, 3), False)]
    calls.clear()
    fast.dpzero(loss, objective.data, x0, seed=np.array([1, 2]), **common)
    assert calls[1] == ((2, 2, 1, 3), (8, 3), False)

    def gradient(points, rows):
        calls.append((points.shape, rows.shape))
        return objective.gradient(points, rows)

    calls.clear()
    fast.dpgd(gradient, objective.data, x0, steps=1, step_size=0.1, clip_threshold=1.0, noise="none", seed=1)
    fast.dpgd(gradient, objective.data, x0, steps=1, step_size=0.1, clip_threshold=1.0, noise="none", seed=[1, 2, 3])
    assert calls == [((1, 3), (8, 3)), ((3, 1, 3), (8, 3))]


def test_replicated_ledger_and_select_replicate():
    objective, x0 = problem("ridge", 2, 6, seed=7)
    result = fast.mezo(objective.loss, objective.data, x0, steps=4, step_size=0.1, perturbation=0.1,
                       clip_threshold=0.5, seed=[0, 1], batching="poisson", batch_size=2)
    ledger, diagnostics = result.ledger, result.diagnostics
    assert isinstance(ledger, fast.ReplicatedLedger) and ledger.replicates == 2
    assert ledger.seed == (0, 1) and ledger.epsilon_spent is None and ledger.secret_seed_source is None
    assert np.array_equal(diagnostics.loss_evaluations, 2 * diagnostics.batch_sizes.sum(axis=1))
    assert ledger == ledger and ledger != fast.select_replicate(result, 0).ledger
    assert diagnostics == diagnostics and diagnostics != fast.select_replicate(result, 0).diagnostics
    with pytest.raises(ValueError, match="r must be <= 1"):
        ledger.replicate(2)
    with pytest.raises(ValueError, match="r must be <= 1"):
        diagnostics.replicate(2)
    single = fast.mezo(objective.loss, objective.data, x0, steps=4, step_size=0.1, perturbation=0.1,
                       clip_threshold=0.5, seed=0, batching="poisson", batch_size=2)
    with pytest.raises(TypeError, match="replicated run"):
        fast.select_replicate(single, 0)


# ---------------------------------------------------------------------------------------------------
# Validation: the reference's errors, word for word


def _error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type and message are compared
        return type(exc), str(exc)
    return None


def _bad_loss(points, rows):
    values = np.asarray(squared_norm(points) + rows[..., 0])
    return np.where(rows[..., 0] > 1.5, np.nan, values) if values.ndim else (np.nan if rows[0] > 1.5 else values)


#: x_0 of the problem the error and non-finite tests run on (problem("quadratic", 2, 5, seed=8)).
X0_BAD = problem("quadratic", 2, 5, seed=8)[1]


def _inf_loss(points, rows):
    """+inf for the marked rows on one side of x_0 (first coordinate above x_0's), 0 on the other: at step 0,
    f(x_0 + λu) − f(x_0 − λu) = ±inf (the sign of u's first coordinate); finite elsewhere."""
    values = np.asarray(squared_norm(points) + rows[..., 0])
    odd = np.where(np.asarray(points)[..., 0] > X0_BAD[0], np.inf, 0.0)
    return np.where(rows[..., 0] > 1.5, odd, values)[()]


def _bounded_loss(points, rows):
    """Finite for every input, even infinite points: the iterates can overflow before the loss does."""
    return np.tanh(np.sum(points, axis=-1) + 0.0 * rows[..., 0])


BAD_INPUTS = [
    dict(data=np.ones(5)), dict(data=np.ones((0, 2))), dict(x0=np.ones((2, 2))), dict(x0=np.ones(0)),
    dict(x0=np.array([1.0, np.nan])), dict(steps=0), dict(steps=2.5), dict(step_size=-1.0), dict(step_size=np.inf),
    dict(perturbation=0.0), dict(clip_threshold=np.inf), dict(clip_threshold=np.nan), dict(seed=-1),
    dict(seed=1.5), dict(seed=True), dict(seed=np.array(3)), dict(noise_seed=-2), dict(batching="bogus"),
    dict(batching="full", batch_size=3), dict(batching="poisson"), dict(batching="shuffle", batch_size=99),
    dict(accountant="rdp"), dict(direction="ball"), dict(clip_target="both"), dict(noise="laplace"),
    dict(noise="none"), dict(epsilon=None), dict(delta=2.0), dict(epsilon=-1.0), dict(loss=3),
    dict(trace=lambda x: math.nan),
    dict(loss=_bounded_loss, step_size=1e308, steps=8), dict(noise_seed=1), dict(noise_seed=np.int64(1)),
    dict(noise_seed=SecretSeed(1, "user")), dict(noise_seed=2.0), dict(noise_seed=2**128), dict(seed=2**128),
    dict(loss=_inf_loss, clip_threshold=np.inf, noise="none", epsilon=None, delta=None),
]


@pytest.mark.parametrize("bad", BAD_INPUTS, ids=[",".join(f"{k}" for k in b) for b in BAD_INPUTS])
def test_errors_match_the_reference(bad):
    objective, x0 = problem("quadratic", 2, 5, seed=8)
    data = np.array(objective.data)
    data[3, 0] = 2.0  # _inf_loss: non-finite at sample 3
    kwargs = dict(loss=objective.loss, data=data, x0=x0, steps=3, step_size=0.1, perturbation=0.1, clip_threshold=1.0,
                  epsilon=EPS, delta=DELTA, seed=1)
    kwargs.update(bad)
    args = [kwargs.pop(k) for k in ("loss", "data", "x0")]
    with np.errstate(all="ignore"):
        want = _error(lambda: ref.dpzero(*args, **kwargs))
        got = _error(lambda: fast.dpzero(*args, **kwargs))
    assert want is not None, "the reference accepted it: not a bad input"
    assert got == want


def test_overflowing_loss_values_are_replaced_identically():
    """α = 1e200: the iterates reach ~1e200, where the quadratic loss overflows to inf (inf − inf = NaN): those
    records are replaced (NaN -> 0), the iterates stay finite, and both backends agree bit for bit."""
    objective, x0 = problem("quadratic", 2, 5, seed=8)
    kwargs = dict(steps=4, step_size=1e200, perturbation=0.1, clip_threshold=1.0, epsilon=EPS, delta=DELTA, seed=1,
                  noise_seed=SECRET, record_trajectory=True)
    with np.errstate(over="ignore"):  # the quadratic objective itself overflows
        want = ref.dpzero(objective.loss, objective.data, x0, **kwargs)
        got = fast.dpzero(objective.loss, objective.data, x0, **kwargs)
    assert sum(want.diagnostics.nonfinite_counts) > 0 and np.all(np.isfinite(want.trajectory))
    assert_same_run(want, got, rtol=0)


def test_dpgd_errors_match_the_reference():
    objective, x0 = problem("quadratic", 2, 5, seed=9)

    data = np.array(objective.data)
    cases = [(3, dict()), (objective.gradient, dict(noise="none", accountant="lemma22")),
             (objective.gradient, dict(noise_seed=4))]
    for gradient, extra in cases:
        kwargs = dict(steps=3, step_size=0.1, clip_threshold=1.0, seed=4)
        if extra.get("noise") != "none":
            kwargs.update(epsilon=EPS, delta=DELTA)
        kwargs.update(extra)
        want = _error(lambda: ref.dpgd(gradient, data, x0, **kwargs))
        got = _error(lambda: fast.dpgd(gradient, data, x0, **kwargs))
        assert want is not None and got == want


@pytest.mark.parametrize("seed, noise_seed, error, match", [
    (np.array([[1, 2]]), None, ValueError, "seed must be an integer or a 1-D array"),
    (np.array([], dtype=int), None, ValueError, "seed must hold at least one seed"),
    (np.array([1.0, 2.0]), None, TypeError, "seed must be an integer or a 1-D array of integers.*float64"),
    (np.array([True, False]), None, TypeError, "seed must .*bool"),
    ([3, -1], None, ValueError, "seed must be >= 0, got -1"),
    ([1, 2**128], None, ValueError, "seed must be < 2\\*\\*128"),
    (np.array([1, "2"], dtype=object), None, TypeError, "seed must be an integer or a 1-D array of integers.*str"),
    ([1, "2"], None, TypeError, "seed must be an integer or a 1-D array of integers.*U"),
    (np.array([1, 2]), 2, ValueError, "noise_seed must differ from every public seed"),
    (np.array([1, 2]), np.array([1, 2, 3]), ValueError, "noise_seed must have the length of seed"),
    (np.array([1, 2]), [5, 2], ValueError, r"noise_seed\[1\] must differ from every public seed"),
    (np.array([1, 2]), [5, 5], ValueError, "noise_seed must hold distinct secret seeds"),
    (4, [1, -3], ValueError, r"noise_seed\[1\] must lie in \[0, 2\*\*128\)"),
    (4, [4, 5], ValueError, r"noise_seed\[0\] must differ from every public seed"),
    (4, np.array([[5, 6]]), ValueError, "noise_seed must be a 1-D sequence"),
    (4, [], ValueError, "noise_seed must hold at least one secret seed"),
])
def test_seed_arrays_are_validated(seed, noise_seed, error, match):
    objective, x0 = problem("quadratic", 2, 5)
    with pytest.raises(error, match=match):
        fast.dpzero(objective.loss, objective.data, x0, steps=2, step_size=0.1, perturbation=0.1, clip_threshold=1.0,
                    epsilon=EPS, delta=DELTA, seed=seed, noise_seed=noise_seed)


def test_batched_loss_and_trace_errors_name_the_replicate():
    objective, x0 = problem("quadratic", 2, 5, seed=8)
    data = np.array(objective.data)
    data[3, 0] = 2.0
    common = dict(steps=2, step_size=0.1, perturbation=0.1, clip_threshold=1.0, noise="none")
    with pytest.raises(ValueError, match=r"loss gave an infinite finite difference at sample i=3 \(0-based\), "
                                         r"replicate 0: clip_threshold is infinite"):
        fast.dpzero(_inf_loss, data, x0, seed=[1, 2], **{**common, "clip_threshold": np.inf})
    with pytest.raises(ValueError, match=r"trace must return shape \(2,\)"):
        fast.dpzero(objective.loss, data, x0, seed=[1, 2], trace=lambda x: 1.0, **common)
    with pytest.raises(ValueError, match=r"trace returned a non-finite value \(inf\) at replicate 1"):
        fast.dpzero(objective.loss, data, x0, seed=[1, 2], trace=lambda x: np.array([0.0, np.inf]), **common)
    with pytest.raises(ValueError, match=r"loss must return shape \(2, 5\)"):
        fast.dpzero(lambda p, z: np.zeros(3), data, x0, seed=1, **common)


# ---------------------------------------------------------------------------------------------------
# Hypothesis: small random configurations


@settings(max_examples=25, deadline=None)
@given(
    algorithm=st.sampled_from(["dpzero", "dpgd_zeroth_order", "dpgd", "mezo"]),
    kind=st.sampled_from(["quadratic", "ridge"]),
    d=st.integers(1, 4), n=st.integers(1, 6), steps=st.integers(1, 5),
    batching=st.sampled_from(["full", "poisson", "shuffle"]), batch_fraction=st.floats(0.0, 1.0),
    direction=st.sampled_from(["sphere", "gaussian"]), clip_target=st.sampled_from(["normalized", "raw_difference"]),
    private=st.booleans(), clip=st.sampled_from([0.05, 0.7, 50.0]), seed=st.integers(0, 2**40),
    replicates=st.integers(0, 3),
)
def test_random_configurations(algorithm, kind, d, n, steps, batching, batch_fraction, direction, clip_target, private,
                               clip, seed, replicates):
    if algorithm == "dpgd":
        kind = "quadratic"  # a smooth loss: the reference calls gradient(x, row) one sample at a time
    objective, x0 = problem(kind, d, n, seed=seed % 1000)
    batch_size = None if batching == "full" else 1 + int(batch_fraction * (n - 1))
    accountant = {"full": "gdp_exact", "poisson": "rdp_opacus", "shuffle": "gdp_participation"}[batching]
    private = private and algorithm != "mezo"
    secret = seed + 2**41  # the public seeds below are < 2**41: never equal
    kwargs = kwargs_for(algorithm, batching=batching, batch_size=batch_size, accountant=accountant, private=private,
                        direction=direction, clip_target=clip_target, steps=steps, clip=clip, noise_seed=secret)
    if algorithm == "mezo":
        kwargs.pop("noise_seed", None)
    want = run(ref, algorithm, objective, x0, seed, **kwargs)
    assert_same_run(want, run(fast, algorithm, objective, x0, seed, **kwargs), rtol=1e-11)
    if replicates:
        seeds = [seed] + [seed + k for k in range(1, replicates)]
        batched_kwargs = dict(kwargs, noise_seed=np.array(seeds) + 2**41) if algorithm != "mezo" else kwargs
        batched = run(fast, algorithm, objective, x0, np.array(seeds), **batched_kwargs)
        assert_same_run(want, fast.select_replicate(batched, 0), rtol=1e-11)


def test_explicit_sampling_probability_agrees_draw_for_draw_with_replicates():
    from reference.algorithms import dpzero as reference_dpzero
    from reference.fast import dpzero as fast_dpzero
    from reference.objectives import EffectiveRankQuadratic
    from reference.rng import Streams as _Streams

    objective = EffectiveRankQuadratic(3, 15, "sqrt", _Streams(5).generator("tests", "fast", "q"))
    common = dict(steps=5, step_size=0.05, perturbation=1e-3, clip_threshold=1.0, epsilon=2.0, delta=1e-5,
                  batching="poisson", batch_size=4, accountant="rdp_opacus", sampling_probability=0.4)
    seeds, secrets = np.array([11, 12, 13]), [101, 102, 103]
    batched = fast_dpzero.dpzero(objective, objective.data, np.zeros(3), seed=seeds, noise_seed=secrets, **common)
    for r, seed in enumerate(seeds):
        single = reference_dpzero.dpzero(objective, objective.data, np.zeros(3), seed=int(seed), noise_seed=secrets[r],
                                         **common)
        assert np.array_equal(batched.releases[r], single.releases)
        assert list(batched.diagnostics.batch_sizes[r]) == list(single.diagnostics.batch_sizes)
    assert batched.ledger.plan.relation == "replace_one"  # rdp_opacus keeps the experiments' (heuristic) label


# ---------------------------------------------------------------------------------------------------
# The secret seed (docs/design.md, randomness contract)


def _private(module, seed, **overrides):
    objective, x0 = problem("quadratic", 3, 6, seed=11)
    kwargs = dict(steps=4, step_size=0.1, perturbation=0.1, clip_threshold=0.8, epsilon=EPS, delta=DELTA,
                  record_trajectory=True)
    kwargs.update(overrides)
    return module.dpzero(objective.loss, objective.data, x0, seed=seed, **kwargs)


def test_default_secret_is_fresh_entropy_single_and_replicated():
    a, b = _private(fast, 5), _private(fast, 5)
    assert np.all(a.releases != b.releases) and a.output_index == b.output_index
    for run_ in (a, b):  # the same public directions
        steps = np.diff(run_.trajectory, axis=0)
        for t in range(4):
            assert np.allclose(steps[t], -0.1 * run_.releases[t] * ref.direction_for_step(5, t, 3), rtol=1e-12, atol=0)
    assert a.ledger == b.ledger and a.ledger.secret_seed_source == "os_entropy"
    batched = _private(fast, [5, 5, 5])  # one public seed three times: three independent secret seeds
    assert len({tuple(row) for row in batched.releases}) == 3
    assert len(set(batched.output_index.tolist())) == 1 and batched.output_index[0] == a.output_index
    assert batched.ledger.secret_seed_source == "os_entropy" and batched.ledger.seed == (5, 5, 5)
    again = _private(fast, [5, 5, 5])
    assert np.all(again.releases != batched.releases)
    shared = _private(fast, 5, noise_seed=None)
    assert shared.ledger == a.ledger


@pytest.mark.parametrize("seed, noise_seed", [
    (5, 5), (5, SecretSeed(5, "user")), ([3, 5], 5), ([3, 5], [7, 3]), (5, [7, 5]), ([3, 5], SecretSeed(3, "user")),
    (replicate_seeds(9, 2), replicate_seeds(9, 2)[1]), (replicate_seeds(9, 2), [1, replicate_seeds(9, 2)[0]]),
])
def test_secret_equal_to_any_public_seed_is_refused(seed, noise_seed):
    with pytest.raises(ValueError, match="noise_seed.* must differ from every public seed"):
        _private(fast, seed, noise_seed=noise_seed)


def test_user_secrets_are_recorded_not_shown():
    secret = 98765432123456789012345
    single = _private(fast, 5, noise_seed=secret)
    assert single.ledger == _private(ref, 5, noise_seed=secret).ledger
    assert single.ledger.secret_seed_source == "user" and "stays secret" in single.ledger.guarantee_condition
    batched = _private(fast, replicate_seeds(5, 3), noise_seed=secret)  # spawned into three
    assert batched.ledger.secret_seed_source == "user"
    assert batched.ledger.guarantee_condition == SecretSeed(secret, "user").guarantee_condition
    mixed = _private(fast, [1, 2], noise_seed=[SecretSeed(2**100, "os_entropy"), 7])
    assert mixed.ledger.secret_seed_source == "user"  # the guarantee rests on a user seed for one replicate
    assert "stays secret" in mixed.ledger.guarantee_condition and "operating-system" in mixed.ledger.guarantee_condition
    for result in (single, batched, mixed):
        for text in (repr(result), repr(result.ledger), repr(result.diagnostics), repr(fast.select_replicate(
                result, 0) if result is not single else result)):
            assert str(secret) not in text and str(2**100) not in text


def test_spawned_replicates_are_the_reference_runs_of_the_spawned_seeds():
    public = replicate_seeds(21, 3)  # 128-bit public seeds
    assert max(public) > 2**64
    root = secret_seed(2**100 + 17, public_seeds=public)
    batched = _private(fast, list(public), noise_seed=root)
    for r, secret in enumerate(root.spawn(3)):
        want = _private(ref, public[r], noise_seed=secret)
        assert_same_run(want, fast.select_replicate(batched, r))
    object_seeds = np.array(public, dtype=object)
    assert np.array_equal(_private(fast, object_seeds, noise_seed=root).releases, batched.releases)


# ---------------------------------------------------------------------------------------------------
# Non-finite per-record values: the reference's replacement, bit for bit


@pytest.mark.parametrize("algorithm", ["dpzero", "dpgd_zeroth_order", "mezo"])
@pytest.mark.parametrize("loss", [_bad_loss, _inf_loss], ids=["nan", "inf"])
@pytest.mark.parametrize("batching, batch_size, accountant", [("full", None, "lemma22"), ("poisson", 3, "rdp_opacus"),
                                                               ("shuffle", 2, "gdp_participation")])
def test_nonfinite_records_are_replaced_as_the_reference_does(algorithm, loss, batching, batch_size, accountant):
    objective, x0 = problem("quadratic", 2, 5, seed=8)
    data = np.array(objective.data)
    data[3, 0] = 2.0  # sample 3 is non-finite
    private = algorithm != "mezo"
    kwargs = kwargs_for(algorithm, batching=batching, batch_size=batch_size, accountant=accountant, private=private,
                        steps=5, clip=0.7)
    if algorithm == "mezo":
        kwargs["clip_threshold"] = 0.7  # a finite C: ±inf -> ±C
    want = getattr(ref, algorithm)(loss, data, x0, seed=4, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = getattr(fast, algorithm)(loss, data, x0, seed=4, **kwargs)
    for name in ARRAY_FIELDS:
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert got.ledger == want.ledger and got.diagnostics == want.diagnostics
    if batching == "full":  # (the other batchings need not sample record 3 when it is non-finite)
        assert sum(got.diagnostics.nonfinite_counts) > 0
    seeds = [4, 6]
    batched_kwargs = dict(kwargs, noise_seed=[SECRET, SECRET + 1]) if private else kwargs
    batched = getattr(fast, algorithm)(loss, data, x0, seed=seeds, **batched_kwargs)
    assert_same_run(want, fast.select_replicate(batched, 0))


def test_nonfinite_gradients_are_replaced_as_the_reference_does():
    objective, x0 = problem("quadratic", 2, 5, seed=9)

    def bad_gradient(points, rows):
        g = np.asarray(objective.gradient(points, rows))
        return np.where((rows[..., :1] > 1.5) & (np.arange(2) == 1), np.inf, g)

    data = np.array(objective.data)
    data[2, 0] = 2.0
    for extra in (dict(), dict(batching="shuffle", batch_size=2, accountant="gdp_participation"),
                  dict(batching="poisson", batch_size=2, accountant="rdp_opacus")):
        kwargs = dict(steps=3, step_size=0.1, clip_threshold=1.0, epsilon=EPS, delta=DELTA, seed=4, noise_seed=SECRET,
                      record_trajectory=True, **extra)
        want = ref.dpgd(bad_gradient, data, x0, **kwargs)
        got = fast.dpgd(bad_gradient, data, x0, **kwargs)
        assert_same_run(want, got, rtol=0)
        assert want.diagnostics.nonfinite_counts == got.diagnostics.nonfinite_counts
    assert sum(want.diagnostics.nonfinite_counts) + sum(ref.dpgd(bad_gradient, data, x0, **{
        **kwargs, "batching": "full", "batch_size": None, "accountant": None}).diagnostics.nonfinite_counts) > 0
