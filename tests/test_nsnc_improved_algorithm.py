"""Unit tests of reference/algorithms/nsnc_improved.py (Algorithms 2–5 of nsnc_improved): the period position, the
single-pass data schedule, the public directions, the oracles' refusals, the argument checks, the mpmath path and
reproducibility; and the claims' one-bug variants (proofs_checks/claims/nsnc_improved/_variants.py), which must
reproduce the reference bit for bit when no bug is switched on.
"""

import mpmath
import numpy as np
import pytest

from proofs_checks.claims.nsnc_improved._variants import (
    LinearGradient,
    LinearLoss,
    RidgeGradient,
    RidgeLoss,
    records_needed,
    variant_nsnc_improved,
)
from reference.algorithms.nsnc_improved import (
    ORACLES,
    MultiPassOracle,
    SinglePassOracle,
    nsnc_improved,
    period_position,
    single_pass_schedule,
    step_directions,
)
from reference.o2nc import ClippedOGD, o2nc
from reference.objectives import RidgeSum
from reference.rng import Streams

D3 = 3
X0 = np.array([0.2, -0.1, 0.3])


def _population(seed=0, count=20):
    return RidgeSum.random(D3, count, np.random.default_rng(seed), profile="capped", tau=0.5, offset_scale=0.3)


def _objective(oracle):
    if oracle in ("first_order", "multi_pass_first_order"):
        return RidgeGradient(D3, 1.0, "capped", 0.5)
    return RidgeLoss(D3, 1.0, "capped", 0.5)


def _run(oracle="single_pass", *, K=2, M=3, tree_size=2, B1=2, B2=1, m=2, n=None, x0=X0, **changes):
    """A small run of ``oracle`` on capped ridges; keyword ``changes`` override the defaults."""
    multi = oracle.startswith("multi")
    if n is None:
        n = 3 if multi else records_needed(K * M, tree_size, B1, B2)
    data = _population().data[np.arange(n) % 20]
    keywords = dict(oracle=oracle, blocks=K, block_length=M, tree_size=tree_size, smoothing_radius=0.4,
                    step_bound=0.05, step_size=0.2, directions=m, seed=11, noise="none")
    if not multi:
        keywords.update(B1=B1, B2=B2)
    keywords.update(changes)
    return nsnc_improved(_objective(oracle), data, x0, **keywords)


# --- period_position -----------------------------------------------------------------------------------------------

def test_period_position():
    assert [period_position(t, 4) for t in range(1, 10)] == [1, 2, 3, 4, 1, 2, 3, 4, 1]
    assert [period_position(t, 1) for t in range(1, 5)] == [1, 1, 1, 1]
    assert [period_position(t, 3) for t in (3, 4, 6, 7)] == [3, 1, 3, 1]  # t mod Σ = 0 is the last leaf, not 0


@pytest.mark.parametrize("t, tree_size, name", [(0, 4, "t"), (1, 0, "tree_size"), (1.5, 4, "t")])
def test_period_position_refuses(t, tree_size, name):
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        period_position(t, tree_size)


# --- the single-pass schedule ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("T, tree_size, B1, B2", [(6, 2, 3, 2), (5, 3, 2, 1), (7, 1, 2, 5), (1, 4, 3, 1), (9, 4, 1, 3)])
def test_single_pass_schedule_blocks(T, tree_size, B1, B2):
    needed = records_needed(T, tree_size, B1, B2)
    schedule = single_pass_schedule(needed + 2, T, tree_size, B1, B2)
    assert schedule.records_used == needed
    blocks = [schedule.block(t) for t in range(1, T + 1)]
    assert blocks[0].start == 0 and blocks[-1].stop == needed  # contiguous from the first record to U(T)
    for t, block in enumerate(blocks, start=1):
        size = B1 if (t - 1) % tree_size == 0 else B2
        assert block.stop - block.start == size == schedule.batch_size(t)
        if t > 1:
            assert block.start == blocks[t - 2].stop  # disjoint and increasing
    with pytest.raises(ValueError, match="t"):
        schedule.block(T + 1)


def test_single_pass_schedule_refusal_names_the_count():
    with pytest.raises(ValueError, match=r"U\(T\) = 15 records, but the data has 14: provide 15 records"):
        single_pass_schedule(14, 6, 2, 3, 2)
    assert single_pass_schedule(15, 6, 2, 3, 2).records_used == 15


@pytest.mark.parametrize("name, args", [("n_records", (0, 6, 2, 3, 2)), ("T", (20, 0, 2, 3, 2)),
                                        ("tree_size", (20, 6, 0, 3, 2)), ("B1", (20, 6, 2, 0, 2)),
                                        ("B2", (20, 6, 2, 3, 0))])
def test_single_pass_schedule_refuses_bad_arguments(name, args):
    with pytest.raises(ValueError, match=name):
        single_pass_schedule(*args)


def test_run_refuses_too_few_records_naming_the_count():
    with pytest.raises(ValueError, match=r"U\(T\) = 9 records, but the data has 8"):
        _run(K=2, M=3, tree_size=2, B1=2, B2=1, n=8)


# --- directions ------------------------------------------------------------------------------------------------------

SHAPES = {  # oracle -> (reset shape, increment shape) for b = 3 records, m = 4
    "single_pass": ((3, 4, 5), (3, 2, 4, 5)),
    "single_pass_crn": ((3, 4, 5), (3, 4, 5)),
    "first_order": ((3, 1, 5), (3, 2, 4, 5)),
    "multi_pass": ((3, 4, 5), (3, 2, 4, 5)),
    "multi_pass_first_order": ((3, 4, 5), (3, 2, 4, 5)),
}


@pytest.mark.parametrize("oracle", ORACLES)
def test_step_directions_shapes_laws_and_determinism(oracle):
    alpha = 0.3
    for reset, shape in zip((True, False), SHAPES[oracle]):
        y = step_directions(7, 5, oracle, 3, 4, 5, alpha, reset=reset)
        assert y.shape == shape
        assert np.array_equal(y, step_directions(7, 5, oracle, 3, 4, 5, alpha, reset=reset))  # bit for bit
        assert not np.array_equal(y, step_directions(7, 6, oracle, 3, 4, 5, alpha, reset=reset))  # keyed by t
        assert not np.array_equal(y, step_directions(8, 5, oracle, 3, 4, 5, alpha, reset=reset))  # and by the seed
        lengths = np.linalg.norm(y, axis=-1)
        if oracle in ("first_order", "multi_pass_first_order"):
            assert np.all(lengths <= alpha) and np.max(lengths) < alpha  # the ball of radius α
        else:
            assert np.allclose(lengths, 1.0, atol=1e-12)  # the unit sphere
        mp = step_directions(7, 5, oracle, 3, 4, 5, alpha, reset=reset, arithmetic="mpmath")
        assert mp.dtype == object and isinstance(mp.flat[0], mpmath.mpf)
        assert np.allclose(np.array(mp, dtype=np.float64), y, rtol=1e-15, atol=0)


def test_step_directions_are_the_run_s_directions():
    """A run's first reset uses step_directions(seed, 1, ...): recompute g_1 from them."""
    result = _run(K=1, M=1, tree_size=1, B1=2, m=3)
    data = _population().data[:2]
    y = step_directions(11, 1, "single_pass", 2, 3, D3, 0.4, reset=True)
    loss = _objective("single_pass")
    total = np.zeros(D3)
    for i in range(2):
        estimate = np.zeros(D3)
        for j in range(3):
            estimate = estimate + (D3 * (loss(X0 + 0.4 * y[i, j], data[i]) - loss(X0 - 0.4 * y[i, j], data[i]))
                                   / 0.8) * y[i, j]
        total = total + estimate / 3
    assert np.allclose(result.diagnostics.noiseless_sums[0, 0], total / 2, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("name, changes", [("oracle", {"oracle": "bogus"}), ("batch", {"batch": 0}),
                                           ("directions", {"directions": 0}), ("d", {"d": 0}),
                                           ("seed", {"seed": -1}), ("t", {"t": 0})])
def test_step_directions_refuses(name, changes):
    arguments = dict(seed=1, t=1, oracle="single_pass", batch=2, directions=3, d=4, smoothing_radius=0.5)
    arguments.update(changes)
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        step_directions(**arguments, reset=True)


def test_step_directions_first_order_needs_a_radius():
    with pytest.raises((ValueError, TypeError), match="smoothing_radius"):
        step_directions(1, 1, "first_order", 2, 3, 4, 0.0, reset=True)


# --- the oracles' refusals -------------------------------------------------------------------------------------------

def _single_pass_oracle(step_bound=0.05):
    schedule = single_pass_schedule(10, 4, 2, 2, 1)
    return SinglePassOracle(_objective("single_pass"), _population().data[:10], schedule, oracle="single_pass", d=D3,
                            block_length=2, smoothing_radius=0.4, step_bound=step_bound, directions=(2, 2),
                            noise_std=0.0, seed=3, noise_rng=np.random.default_rng(0))


def _multi_pass_oracle(step_bound=0.05):
    return MultiPassOracle(_objective("multi_pass"), _population().data[:3], oracle="multi_pass", d=D3, tree_size=2,
                           block_length=2, steps=4, smoothing_radius=0.4, step_bound=step_bound, directions=(2, 2),
                           noise_stds=(0.0, 0.0), seed=3, noise_rng=np.random.default_rng(0))


@pytest.mark.parametrize("make", [_single_pass_oracle, _multi_pass_oracle])
def test_queries_out_of_order_are_refused(make):
    oracle = make()
    with pytest.raises(ValueError, match="in order: expected step 1, got step 2"):
        oracle.query(1, 2, X0)
    oracle = make()
    oracle.query(1, 1, X0)
    with pytest.raises(ValueError, match="in order: expected step 2, got step 1"):
        oracle.query(1, 1, X0)  # a repeated step would read its records again
    oracle.query(1, 2, X0)
    with pytest.raises(ValueError, match="expected step 3, got step 4"):
        oracle.query(2, 2, X0)  # a skipped step


@pytest.mark.parametrize("make", [_single_pass_oracle, _multi_pass_oracle])
def test_a_step_longer_than_2d_is_refused(make):
    oracle = make(step_bound=0.05)
    oracle.query(1, 1, X0)
    with pytest.raises(ValueError, match="2D"):
        oracle.query(1, 2, X0 + np.array([0.11, 0.0, 0.0]))
    oracle = make(step_bound=0.05)
    oracle.query(1, 1, X0)
    oracle.query(1, 2, X0 + np.array([0.0999999, 0.0, 0.0]))  # within 2D: accepted


def test_an_exhausted_oracle_refuses():
    oracle = _single_pass_oracle()
    for k, j in ((1, 1), (1, 2), (2, 1), (2, 2)):
        oracle.query(k, j, X0)
    with pytest.raises(ValueError, match="exhausted"):
        oracle.query(3, 1, X0)


# --- argument checks of a run ----------------------------------------------------------------------------------------

def _call(**changes):
    """A valid single-pass call (enough records for every size below) with some arguments replaced."""
    arguments = dict(objective=_objective("single_pass"), data=_population().data[np.arange(40) % 20], x0=X0,
                     oracle="single_pass", blocks=2, block_length=3, tree_size=2, smoothing_radius=0.4,
                     step_bound=0.05, step_size=0.2, directions=2, B1=2, B2=1, seed=1, noise="none")
    arguments.update(changes)
    return nsnc_improved(**arguments)


BAD_ARGUMENTS = [
    ("oracle", {"oracle": "sgd"}),
    ("noise", {"noise": "laplace"}),
    ("sensitivity_mode", {"sensitivity_mode": "optimistic"}),
    ("blocks", {"blocks": 0}),
    ("block_length", {"block_length": 0}),
    ("tree_size", {"tree_size": 0}),
    ("smoothing_radius", {"smoothing_radius": -0.1}),
    ("step_bound", {"step_bound": 0.0}),
    ("step_size", {"step_size": float("nan")}),
    ("directions", {"directions": 0}),
    ("directions", {"directions": (1, 2, 3)}),
    ("B1", {"B1": None}),
    ("B2", {"B2": 0}),
    ("seed", {"seed": -3}),
    ("noise_std", {"noise_std": 0.5}),  # noise="none" with a σ
    ("dp_delta", {"dp_delta": 1e-6}),  # noise="none" with a δ
    ("lipschitz", {"noise": "gaussian", "noise_std": 0.5, "dp_delta": 1e-6}),  # a private run needs L
    ("epsilon", {"noise": "gaussian", "lipschitz": 1.0, "dp_delta": 1e-6}),  # neither σ nor ε
    ("lipschitz", {"enforce_lipschitz": True}),
    ("lipschitz", {"clip_hardening": True}),
    ("gamma", {"gamma": 1.5}),
    ("x0", {"x0": np.zeros((2, 2))}),
    ("data", {"data": np.zeros(5)}),
]


@pytest.mark.parametrize("name, changes", BAD_ARGUMENTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(BAD_ARGUMENTS)])
def test_bad_arguments_are_refused_naming_the_parameter(name, changes):
    _call()  # the valid call runs
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        _call(**changes)


def test_multi_pass_refusals():
    with pytest.raises(ValueError, match="noise_std"):
        _run("multi_pass", noise="gaussian", noise_std=0.3, lipschitz=1.0, dp_delta=1e-6)  # needs (σ1, σ2)
    with pytest.raises(ValueError, match="directions"):
        _run("multi_pass", m=(1, 2), noise="gaussian", noise_std=(0.3, 0.3), lipschitz=1.0, dp_delta=1e-6)
    with pytest.raises(ValueError, match="clip_hardening"):
        _run("multi_pass", noise="gaussian", noise_std=(0.3, 0.3), lipschitz=1.0, dp_delta=1e-6, gamma=1e-3,
             clip_hardening=True)


def test_a_secret_seed_equal_to_the_public_seed_is_refused():
    with pytest.raises(ValueError, match="noise_seed"):
        _run(noise="gaussian", noise_std=0.3, lipschitz=1.0, dp_delta=1e-6, noise_seed=11)


def test_an_objective_that_is_not_callable_is_refused():
    with pytest.raises(TypeError, match="loss must be callable"):
        nsnc_improved(3.0, _population().data[:9], X0, oracle="single_pass", blocks=2, block_length=3, tree_size=2,
                      smoothing_radius=0.4, step_bound=0.05, step_size=0.2, directions=2, B1=2, B2=1, seed=1,
                      noise="none")


# --- runs: reproducibility, the mpmath path, bookkeeping ---------------------------------------------------------

RESULT_FIELDS = ("output", "block_averages", "final_iterate", "releases", "segment_points", "query_points",
                 "iterates", "steps")


@pytest.mark.parametrize("oracle", ORACLES)
def test_noise_free_runs_are_reproducible_bit_for_bit(oracle):
    a, b = _run(oracle, record_path=True), _run(oracle, record_path=True)
    for field in RESULT_FIELDS:
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert a.output_index == b.output_index
    assert np.array_equal(a.diagnostics.noiseless_sums, b.diagnostics.noiseless_sums)
    assert a.ledger == b.ledger and a.ledger.plan is None and a.ledger.algorithm == "o2nc_clipped_ogd"
    assert np.all(a.diagnostics.noise == 0.0) and np.array_equal(a.releases, a.diagnostics.noiseless_sums)
    other = _run(oracle, seed=12, record_path=True)
    assert not np.array_equal(a.releases, other.releases)


def test_private_runs_with_the_same_seeds_agree_and_add_the_reported_noise():
    keywords = dict(noise="gaussian", noise_std=0.3, lipschitz=1.0, dp_delta=1e-6, noise_seed=2**100 + 5)
    a, b = _run(**keywords), _run(**keywords)
    assert np.array_equal(a.releases, b.releases)
    assert np.allclose(a.releases, a.diagnostics.noiseless_sums + a.diagnostics.noise, rtol=0, atol=1e-15)
    c = _run(**dict(keywords, noise_seed=2**100 + 6))
    assert not np.array_equal(a.releases, c.releases)


def test_mpmath_path_runs_and_agrees_with_float64():
    x0 = np.array([mpmath.mpf(v) for v in X0], dtype=object)
    for oracle in ("single_pass", "first_order", "multi_pass"):
        exact = _run(oracle, K=1, M=3, x0=x0, record_path=True)
        assert exact.output.dtype == object and isinstance(exact.output[0], mpmath.mpf)
        assert isinstance(exact.releases.flat[0], mpmath.mpf)
        approx = _run(oracle, K=1, M=3, record_path=True)
        assert np.allclose(np.array(exact.releases, dtype=np.float64), approx.releases, rtol=1e-9, atol=1e-12)
        assert np.allclose(np.array(exact.output, dtype=np.float64), approx.output, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("oracle, per_reset, per_increment", [
    ("single_pass", lambda B1, B2, m, n: 2 * m * B1, lambda B1, B2, m, n: 4 * m * B2),
    ("single_pass_crn", lambda B1, B2, m, n: 2 * m * B1, lambda B1, B2, m, n: 4 * m * B2),
    ("first_order", lambda B1, B2, m, n: B1, lambda B1, B2, m, n: 2 * m * B2),
    ("multi_pass", lambda B1, B2, m, n: 2 * m * n, lambda B1, B2, m, n: 4 * m * n),
    ("multi_pass_first_order", lambda B1, B2, m, n: m * n, lambda B1, B2, m, n: 2 * m * n),
])
def test_evaluation_counts(oracle, per_reset, per_increment):
    K, M, tree_size, B1, B2, m, n = 2, 3, 2, 3, 2, 2, 3
    result = _run(oracle, K=K, M=M, tree_size=tree_size, B1=B1, B2=B2, m=m)
    resets = -(-K * M // tree_size)
    assert result.diagnostics.evaluations == (resets * per_reset(B1, B2, m, n)
                                              + (K * M - resets) * per_increment(B1, B2, m, n))


def test_the_learner_is_not_restarted_between_blocks_unless_asked():
    a = _run(K=3, M=2, record_path=True)
    b = _run(K=3, M=2, record_path=True, restart_blocks=True)
    assert np.any(a.steps[1:, 0] != 0.0)  # Δ carried into the next block
    assert np.all(b.steps[:, 0] == 0.0)  # restarted at Δ = 0
    assert a.ledger.settings.restart_blocks is False and b.ledger.settings.restart_blocks is True


def test_the_reference_driver_keeps_the_invariants_on_adversarial_oracles():
    """reference.o2nc.o2nc with ClippedOGD (not restarted): ‖Δ‖ ≤ D and ‖z_t − z_(t−1)‖ ≤ 2D on oracle outputs of
    size 0, 1e12 and 1e150 alternating in sign."""
    d, K, M, D = 3, 3, 4, 0.02
    table = np.array([[0.0, 0.0, 0.0], [1e12, -1e12, 0.0], [-1e150, 0.0, 1e150], [1.0, 2.0, 3.0]])
    trajectory = o2nc(lambda k, j, z: table[((k - 1) * M + j) % 4], ClippedOGD(d, D, 0.5), np.ones(d), M, K,
                      rng_public=Streams(5), record_path=True)
    steps = trajectory.steps.reshape(-1, d)
    assert np.all(np.linalg.norm(steps, axis=1) <= D * (1 + 1e-15))
    z = trajectory.query_points.reshape(-1, d)
    assert np.all(np.linalg.norm(np.diff(z, axis=0), axis=1) <= 2 * D * (1 + 1e-12))
    assert np.any(trajectory.steps[1:, 0] != 0.0)


# --- the claims' one-bug variants reproduce the reference without a bug -------------------------------------------

@pytest.mark.parametrize("oracle", ORACLES)
@pytest.mark.parametrize("private", [False, True])
def test_variant_without_a_bug_is_the_reference(oracle, private):
    keywords = dict(record_path=True)
    if private:
        multi = oracle.startswith("multi")
        keywords.update(noise="gaussian", noise_std=(0.3, 0.2) if multi else 0.3, lipschitz=1.0, dp_delta=1e-6,
                        noise_seed=2**90 + 1)
    a = _run(oracle, K=3, M=4, tree_size=3, **keywords)
    multi = oracle.startswith("multi")
    n = 3 if multi else records_needed(12, 3, 2, 1)
    data = _population().data[np.arange(n) % 20]
    arguments = dict(oracle=oracle, blocks=3, block_length=4, tree_size=3, smoothing_radius=0.4, step_bound=0.05,
                     step_size=0.2, directions=2, seed=11, noise="none")
    if not multi:
        arguments.update(B1=2, B2=1)
    arguments.update(keywords)
    b = variant_nsnc_improved(_objective(oracle), data, X0, **arguments)
    for field in RESULT_FIELDS:
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert a.output_index == b.output_index
    assert np.array_equal(a.diagnostics.noiseless_sums, b.diagnostics.noiseless_sums)
    assert np.array_equal(a.diagnostics.noise, b.diagnostics.noise)


def test_claim_losses_broadcast_like_single_calls():
    gen = np.random.default_rng(3)
    rows = _population().data[:4]
    points = gen.standard_normal((5, 4, D3))
    for objective in (RidgeLoss(D3, 1.0, "capped", 0.5), RidgeGradient(D3, 1.0, "capped", 0.5), LinearLoss(D3),
                      LinearGradient(D3)):
        stacked = np.asarray(objective(points, rows[None]))
        single = np.array([[np.asarray(objective(points[i, j], rows[j])) for j in range(4)] for i in range(5)])
        assert np.allclose(stacked, single, rtol=1e-15, atol=1e-15)
