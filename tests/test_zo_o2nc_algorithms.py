"""Unit and property tests of reference/o2nc.py (zo_o2nc Alg 3 and projected OSD) and
reference/algorithms/zo_o2nc.py (Alg 4, Alg 6, the single-pass partition and the whole runs): projection and the
pathwise OSD regret bound, the O2NC invariants under adversarial oracles (Remark 4.1, Lemma 4.6), the partition,
the oracle algebra (g is the noiseless GRAD + Σ DIFF, g̃ − g = TREE(t)), the coupled-neighbour sensitivity
(Lemmas 3.1/3.2, zo_o2nc.E15) with and without enforce_lipschitz, the randomness contract (public/secret seeds),
non-finite records, mpmath vs float64, and input validation."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.algorithms.zo_o2nc import (
    NaiveOracle,
    VarianceReducedOracle,
    alg4_partition,
    alg6_partition,
    directions_for_round,
    o2nc_nonprivate,
    single_pass_partition,
    zo_o2nc,
    zo_o2nc_naive,
)
from reference.algorithms.zo_o2nc_privacy import zo_o2nc_leaf_sensitivities
from reference.estimators import diff_estimate, two_point_estimate
from reference.mechanisms import tree_node
from reference.o2nc import ProjectedOSD, linear_regret, o2nc, osd_regret_bound, project_ball
from reference.objectives import Linear, RidgeSum
from reference.precision import to_mp, working_precision
from reference.rng import Streams

D3 = 3
RIDGE = RidgeSum.random(D3, 200, np.random.default_rng(11), profile="capped", tau=1.0, offset_scale=2.0)
X1 = np.array([4.0, -3.0, 1.0])
SECRET = 0x5EC7E7_0000_1234_5678_9ABC_DEF0  # a user secret, distinct from every public seed used here


def _run(**overrides):
    kwargs = dict(T=6, K=3, B1=7, B2=1, smoothing_radius=0.1, step_size=2e-3, rho=1.0, lipschitz=1.0,
                  dp_delta=1e-5, seed=5, noise_seed=SECRET)
    kwargs.update(overrides)
    return zo_o2nc(RIDGE.loss, RIDGE.data, X1, **kwargs)


# --- projection and projected OSD (zo_o2nc Alg 3 line 3) --------------------------------------------------------

finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=1, max_size=6), st.floats(min_value=1e-6, max_value=1e3))
def test_projection_bounded_idempotent_identity_inside(values, radius):
    v = np.array(values)
    out = project_ball(v, radius)
    assert np.linalg.norm(out) <= radius * (1 + 1e-12)
    assert np.array_equal(project_ball(out, radius), out)  # idempotent
    if np.linalg.norm(v) <= radius:
        assert np.array_equal(out, v)  # identity inside the ball
    else:
        assert np.allclose(out / radius, v / np.linalg.norm(v), rtol=1e-12, atol=1e-15)  # same direction


def test_projection_extreme_and_mpmath():
    huge = np.array([1e300, -1e300, 1e300])
    out = project_ball(huge, 1e-4)
    assert np.all(np.isfinite(out)) and np.linalg.norm(out) <= 1e-4
    tiny = np.array([1e-300, 0.0])
    assert np.array_equal(project_ball(tiny, 1.0), tiny)
    with working_precision(40):
        v = to_mp(np.array([3.0, 4.0]))
        out = project_ball(v, mpmath.mpf(1))
        assert all(isinstance(x, mpmath.mpf) for x in out)
        assert mpmath.sqrt(out[0] ** 2 + out[1] ** 2) <= 1
        assert abs(out[0] - mpmath.mpf("0.6")) < mpmath.mpf(10) ** -35


@pytest.mark.parametrize("bad, error, name", [
    (dict(radius=0.0), ValueError, "radius"), (dict(radius=math.inf), ValueError, "radius"),
    (dict(v=np.array([np.nan, 1.0])), ValueError, "v"), (dict(v=np.zeros(0)), ValueError, "v"),
])
def test_projection_validation(bad, error, name):
    kwargs = dict(v=np.ones(2), radius=1.0)
    kwargs.update(bad)
    with pytest.raises(error, match=name):
        project_ball(**kwargs)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 12), st.floats(1e-4, 10.0), st.floats(1e-6, 10.0), st.data())
def test_osd_pathwise_regret_bound(d, T, radius, eta, data):
    losses = np.array(data.draw(st.lists(st.lists(finite, min_size=d, max_size=d), min_size=T, max_size=T)))
    learner = ProjectedOSD(d, radius, eta)
    plays = []
    for v in losses:
        plays.append(learner.propose())
        learner.update(v)
    plays = np.array(plays)
    assert np.array_equal(plays[0], np.zeros(d))  # Δ_1 = 0
    assert all(np.linalg.norm(p) <= radius * (1 + 1e-12) for p in plays)
    total = losses.sum(axis=0)
    worst = -radius * total / np.linalg.norm(total) if np.linalg.norm(total) > 0 else np.zeros(d)  # argmax_u Reg(u)
    bound = osd_regret_bound(radius, eta, losses)
    for u in (worst, np.zeros(d), project_ball(np.ones(d), radius)):
        assert linear_regret(losses, plays, u) <= bound * (1 + 1e-9) + 1e-9


def test_osd_reset_and_validation():
    learner = ProjectedOSD(2, 1.0, 0.5)
    learner.update(np.array([1.0, 0.0]))
    assert np.array_equal(learner.propose(), np.array([-0.5, 0.0])) and learner.rounds == 1
    learner.reset()
    assert np.array_equal(learner.propose(), np.zeros(2)) and learner.rounds == 0
    with pytest.raises(ValueError, match="g"):
        learner.update(np.ones(3))
    with pytest.raises(ValueError, match="step_size"):
        ProjectedOSD(2, 1.0, 0.0)
    with pytest.raises(ValueError, match="arithmetic"):
        ProjectedOSD(2, 1.0, 1.0, arithmetic="float32")


# --- O2NC invariants under adversarial oracles (zo_o2nc Alg 3, Remark 4.1, Lemma 4.6) ----------------------------


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 6), st.integers(1, 3), st.floats(1e-3, 1.0), st.floats(1e-3, 1e3),
       st.sampled_from(["draw", "zeros", "ones", "alternate"]), st.data())
def test_o2nc_invariants_adversarial(d, T, K, radius, eta, segments, data):
    answers = data.draw(st.lists(st.lists(finite, min_size=d, max_size=d), min_size=K * T, max_size=K * T))
    calls = []

    def oracle(k, t, w):  # adversarial: any finite vector, incl. 1e12 entries
        calls.append((k, t))
        return np.array(answers[len(calls) - 1])

    s = {"draw": None, "zeros": np.zeros((K, T)), "ones": np.ones((K, T)),
         "alternate": np.tile(np.arange(T) % 2, (K, 1)).astype(float)}[segments]
    x1 = np.array(data.draw(st.lists(st.floats(-10, 10), min_size=d, max_size=d)))
    path = o2nc(oracle, ProjectedOSD(d, radius, eta), x1, T, K, rng_public=Streams(9).child("test"),
                segment_points=s, record_path=True)
    assert calls == [(k, t) for k in range(1, K + 1) for t in range(1, T + 1)]
    tol = 1e-12 * (1 + np.abs(path.iterates).max())
    assert np.array_equal(path.iterates[0, 0], x1)
    for k in range(K):
        assert np.array_equal(path.steps[k, 0], np.zeros(d))  # Δ_1^k = 0 (restart)
        assert np.all(np.linalg.norm(path.steps[k], axis=1) <= radius * (1 + 1e-12))
        w, x = path.query_points[k], path.iterates[k]
        assert np.all(np.linalg.norm(np.diff(w, axis=0), axis=1) <= 2 * radius + tol)  # ‖w_{t+1} − w_t‖ ≤ 2D
        assert np.all(np.linalg.norm(w - path.epoch_averages[k], axis=1) <= T * radius + tol)  # ≤ TD
        s_k = path.segment_points[k]
        # w_t = x_t + s_t Δ_t with x_t BEFORE the update: w_t lies on the segment [x_t, x_{t+1}]
        assert np.allclose(w, x[:-1] + s_k[:, None] * (x[1:] - x[:-1]), rtol=0, atol=tol)
        assert np.all((s_k >= 0) & (s_k <= 1))
        if k + 1 < K:
            assert np.array_equal(path.iterates[k + 1, 0], x[-1])  # x_1^{k+1} = x_{T+1}^k
    assert np.array_equal(path.final_point, path.iterates[-1, -1])
    assert np.array_equal(path.output, path.epoch_averages[path.output_index])
    assert np.array_equal(path.oracle_outputs.reshape(K * T, d), np.array(answers))


def test_o2nc_public_draws_and_generator_form():
    """s_t^k = Streams(...).generator("segment", k).random(T); k* − 1 = generator("output").integers(K); a
    Generator gives the same calls in order."""
    T, K, d = 4, 3, 2
    zero = lambda k, t, w: np.zeros(d)  # noqa: E731
    scoped = Streams(21).child("zo_o2nc")
    path = o2nc(zero, ProjectedOSD(d, 1.0, 1.0), np.zeros(d), T, K, rng_public=scoped)
    for k in range(1, K + 1):
        assert np.array_equal(path.segment_points[k - 1], Streams(21).generator("zo_o2nc", "segment", k).random(T))
    assert path.output_index == int(Streams(21).generator("zo_o2nc", "output").integers(K))
    gen = np.random.default_rng(4)
    path2 = o2nc(zero, ProjectedOSD(d, 1.0, 1.0), np.zeros(d), T, K, rng_public=gen)
    ref = np.random.default_rng(4)
    expected = np.array([ref.random(T) for _ in range(K)])
    assert np.array_equal(path2.segment_points, expected) and path2.output_index == int(ref.integers(K))


def test_o2nc_validation():
    zero = lambda k, t, w: np.zeros(2)  # noqa: E731
    with pytest.raises(TypeError, match="rng_public"):
        o2nc(zero, ProjectedOSD(2, 1.0, 1.0), np.zeros(2), 2, 1, rng_public=3)
    with pytest.raises(ValueError, match="segment_points"):
        o2nc(zero, ProjectedOSD(2, 1.0, 1.0), np.zeros(2), 2, 1, rng_public=Streams(1), segment_points=[[0.5, 1.5]])
    with pytest.raises(ValueError, match="oracle answer"):
        o2nc(lambda k, t, w: np.array([np.inf, 0.0]), ProjectedOSD(2, 1.0, 1.0), np.zeros(2), 2, 1,
             rng_public=Streams(1))
    with pytest.raises(TypeError, match="learner"):
        o2nc(zero, object(), np.zeros(2), 2, 1, rng_public=Streams(1))
    with pytest.raises(ValueError, match="T"):
        o2nc(zero, ProjectedOSD(2, 1.0, 1.0), np.zeros(2), 0, 1, rng_public=Streams(1))


# --- the single-pass partition (Alg 4 / Alg 6 "Init") -------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 9), st.integers(1, 5), st.integers(1, 6), st.integers(1, 3), st.integers(0, 7))
def test_alg4_partition_single_pass(T, K, B1, B2, spare):
    needed = K * (B1 + B2 * (T - 1))
    part = alg4_partition(needed + spare, T, K, B1, B2)
    assert part.records_used == needed
    seen = np.concatenate([part.block(k, t) for k in range(1, K + 1) for t in range(1, T + 1)])
    assert np.array_equal(seen, np.arange(needed))  # every used index exactly once, in index order
    for k in range(1, K + 1):
        assert len(part.block(k, 1)) == B1 and all(len(part.block(k, t)) == B2 for t in range(2, T + 1))
    if needed > 1:
        with pytest.raises(ValueError, match=rf"{needed} records are needed"):
            alg4_partition(needed - 1, T, K, B1, B2)


def test_partition_refusals_name_the_count():
    with pytest.raises(ValueError, match=r"K·\(B1 \+ B2\(T − 1\)\) = 40 records.*40 records are needed"):
        alg4_partition(39, 10, 2, 11, 1)
    with pytest.raises(ValueError, match=r"K·T·B = 60 records.*60 records are needed"):
        alg6_partition(59, 10, 3, 2)
    with pytest.raises(ValueError, match="12 records are needed"):
        single_pass_partition(11, 2, (3, 3))
    part = single_pass_partition(20, 2, (3, 2))
    with pytest.raises(ValueError, match="k must be <= 2"):
        part.block(3, 1)
    with pytest.raises(ValueError, match="block_sizes"):
        single_pass_partition(20, 2, (3, 0))
    block = part.block(2, 2)
    assert np.array_equal(block, [8, 9]) and not block.flags.writeable


def test_run_refuses_too_few_records_naming_the_count():
    with pytest.raises(ValueError, match=r"M = 200 records.*K·\(B1 \+ B2\(T − 1\)\) = 220.*220 records are needed"):
        _run(T=10, K=11, B1=11)
    with pytest.raises(ValueError, match="K·T·B = 300 records, each once: 300 records are needed"):
        zo_o2nc_naive(RIDGE.loss, RIDGE.data, X1, T=10, K=10, batch_size=3, smoothing_radius=0.1, step_size=1e-3,
                      rho=1.0, lipschitz=1.0, dp_delta=1e-5, seed=1)


def _oracle(kind="vr", sigma=0.0, T=4, K=2, **kw):
    part = alg4_partition(RIDGE.n, T, K, 5, 2) if kind == "vr" else alg6_partition(RIDGE.n, T, K, 3)
    common = dict(d=D3, smoothing_radius=0.1, lipschitz=1.0, seed=7, noise_rng=np.random.default_rng(0))
    common.update(kw)
    if kind == "vr":
        return VarianceReducedOracle(RIDGE.loss, RIDGE.data, part, step_bound=0.1 / T, noise_stds=np.full(T, sigma),
                                     **common)
    return NaiveOracle(RIDGE.loss, RIDGE.data, part, noise_std=sigma, **common)


def test_oracle_refuses_reuse_skips_and_long_steps():
    oracle = _oracle()
    oracle.query(1, 1, X1)
    with pytest.raises(ValueError, match=r"expected \(k, t\) = \(1, 2\), got \(1, 1\)"):
        oracle.query(1, 1, X1)  # the same block again
    with pytest.raises(ValueError, match=r"expected \(k, t\) = \(1, 2\), got \(1, 3\)"):
        oracle.query(1, 3, X1)
    with pytest.raises(ValueError, match="2D"):
        oracle.query(1, 2, X1 + 1.0)  # ‖w_2 − w_1‖ > 2D: the DIFF sensitivity would not hold
    naive = _oracle("naive", T=2, K=1)
    naive.query(1, 1, X1)
    naive.query(1, 2, X1)
    with pytest.raises(ValueError, match="expected"):
        naive.query(1, 1, X1)  # the single pass is complete: nothing is read twice


# --- oracle algebra (Alg 4): g = GRAD + Σ DIFF, noiseless; g̃ − g = TREE(t) --------------------------------------


def test_grad_and_diff_match_the_estimators_bitwise():
    oracle = _oracle()
    w1, w2 = X1, X1 + np.array([0.01, -0.02, 0.005])
    out1 = oracle.query(1, 1, w1)
    batch1 = RIDGE.data[oracle.partition.block(1, 1)]
    u1 = directions_for_round(7, 1, 1, 5, D3)
    assert u1.shape == (5, D3, D3)
    assert np.array_equal(out1, two_point_estimate(RIDGE.loss, w1, batch1, u1, 0.1))  # σ = 0: g̃ = GRAD
    out2 = oracle.query(1, 2, w2)
    batch2 = RIDGE.data[oracle.partition.block(1, 2)]
    u2 = directions_for_round(7, 1, 2, 2, D3)
    assert np.array_equal(out2, out1 + diff_estimate(RIDGE.loss, w2, w1, batch2, u2, 0.1))
    naive = _oracle("naive")
    w = X1 + 0.3
    u = directions_for_round(7, 1, 1, 3, D3, 1)
    assert u.shape == (3, 1, D3)
    assert np.array_equal(naive.query(1, 1, w),
                          two_point_estimate(RIDGE.loss, w, RIDGE.data[naive.partition.block(1, 1)], u, 0.1))


def test_noiseless_sum_is_grad_plus_diffs_and_releases_are_sum_plus_tree():
    """zo_o2nc Alg 4: g_t = GRAD(w_1) + Σ_{i=2}^t DIFF(w_i, w_{i−1}) is never noised; g̃_t = g_t + TREE(t), with
    TREE rebuilt here from the secret seed's stream ("zo_o2nc", "noise") and Alg 5's NODE sets."""
    T, K, seed = 6, 3, 5
    r = _run(T=T, K=K, seed=seed, record_path=True)
    sigma = r.ledger.settings.noise_std
    g, noise = r.diagnostics.noiseless_sums, r.diagnostics.noise
    z = Streams(SECRET).generator("zo_o2nc", "noise").standard_normal((K * T, D3))
    for k in range(1, K + 1):
        part = r.ledger.settings
        w = r.query_points[k - 1]
        xi = sigma * z[(k - 1) * T: k * T]
        expected = None
        for t in range(1, T + 1):
            block = alg4_partition(RIDGE.n, T, K, part.block_sizes[0], part.block_sizes[1]).block(k, t)
            u = directions_for_round(seed, k, t, len(block), D3)
            if t == 1:
                expected = two_point_estimate(RIDGE.loss, w[0], RIDGE.data[block], u, 0.1)
            else:
                expected = expected + diff_estimate(RIDGE.loss, w[t - 1], w[t - 2], RIDGE.data[block], u, 0.1)
            assert np.array_equal(g[k - 1, t - 1], expected)  # the noiseless running sum, exactly
            tree = np.zeros(D3)
            for _, b in tree_node(t):
                tree = tree + xi[b - 1]
            assert np.array_equal(noise[k - 1, t - 1], tree)  # TREE(t), reset each epoch
    assert np.array_equal(r.releases, g + noise)
    assert np.allclose(r.releases - g, noise, rtol=0, atol=1e-12)


def test_sigma_zero_twin_shares_public_draws():
    private = _run(record_path=True)
    twin = _run(rho=None, lipschitz=None, dp_delta=None, noise_seed=None, noise="none", record_path=True)
    assert np.array_equal(private.segment_points, twin.segment_points)
    assert private.output_index == twin.output_index
    assert np.array_equal(twin.diagnostics.noise, np.zeros_like(twin.diagnostics.noise))
    assert np.array_equal(twin.releases, twin.diagnostics.noiseless_sums)
    # first round: same point, same directions, same records -> same noiseless GRAD
    assert np.array_equal(private.diagnostics.noiseless_sums[0, 0], twin.diagnostics.noiseless_sums[0, 0])
    assert twin.ledger.plan is None and twin.ledger.algorithm == "o2nc_variance_reduced"


# --- coupled-neighbour sensitivity (Lemmas 3.1/3.2 with shared directions, zo_o2nc.E15) ---------------------------


def _unit_rows(n, d, seed):
    a = np.random.default_rng(seed).standard_normal((n, d))
    return a / np.linalg.norm(a, axis=1, keepdims=True)


@pytest.mark.parametrize("block", [1, 2, 3, 5])
@pytest.mark.parametrize("scale, enforce, within", [(1.0, False, True), (1000.0, True, True), (1000.0, False, False)])
def test_neighbour_release_difference_within_leaf_sensitivity(block, scale, enforce, within):
    """Replace the first record of block t by its negation (f = ±L<a, x>, the worst case): with σ = 0 and the same
    public seed, the releases agree before round t and differ at round t by at most s_t — also for a mis-specified
    f (scale·L-Lipschitz) once enforce_lipschitz clips the differences; without it the bound fails."""
    d, T, K, B1, B2, delta = 2, 6, 1, 4, 1, 0.1
    rows = _unit_rows(20, d, 3)
    loss = lambda x, z: scale * float(np.dot(z, x))  # noqa: E731
    part = alg4_partition(20, T, K, B1, B2)
    q = int(part.block(1, block)[0])
    neighbour = rows.copy()
    neighbour[q] = -rows[q]
    kwargs = dict(T=T, K=K, B1=B1, B2=B2, smoothing_radius=delta, step_size=0.05, lipschitz=1.0, seed=13,
                  noise="none", enforce_lipschitz=enforce)
    a = zo_o2nc(loss, rows, np.array([0.3, -0.2]), **kwargs)
    b = zo_o2nc(loss, neighbour, np.array([0.3, -0.2]), **kwargs)
    assert np.array_equal(a.releases[0, : block - 1], b.releases[0, : block - 1])
    s = zo_o2nc_leaf_sensitivities(d, 1.0, T, B1, B2, delta, delta / T)[block - 1]
    gap = np.linalg.norm(a.releases[0, block - 1] - b.releases[0, block - 1])
    assert (gap <= float(s) * (1 + 1e-12)) == within
    if enforce:
        assert a.diagnostics.lipschitz_exceedances.sum() > 0  # clipped, and counted (non-private)


# --- randomness contract -------------------------------------------------------------------------------------------


def test_same_seeds_reproduce_and_default_secret_differs():
    a, b = _run(), _run()
    assert np.array_equal(a.releases, b.releases) and np.array_equal(a.output, b.output)
    c, e = _run(noise_seed=None), _run(noise_seed=None)
    assert not np.array_equal(c.releases, e.releases)  # fresh secret entropy each time
    assert np.array_equal(c.segment_points, e.segment_points)  # public draws shared
    assert c.ledger.secret_seed_source == "os_entropy" and a.ledger.secret_seed_source == "user"
    assert str(SECRET) not in repr(a.ledger) and hex(SECRET)[2:] not in repr(a.ledger)


def test_secret_seed_equal_to_public_seed_refused():
    with pytest.raises(ValueError, match="noise_seed must differ"):
        _run(seed=77, noise_seed=77)


def test_naive_run_noise_schedule_and_plan():
    kwargs = dict(T=5, K=4, batch_size=2, smoothing_radius=0.1, step_size=1e-3, rho=2.0, lipschitz=1.0,
                  dp_delta=1e-6, seed=8, noise_seed=SECRET)
    r = zo_o2nc_naive(RIDGE.loss, RIDGE.data, X1, **kwargs)
    sigma = r.ledger.settings.noise_std
    assert sigma == 2 * D3 * 1.0 / (2 * 2.0)  # σ = 2dL/(Bρ), zo_o2nc.E8
    z = Streams(SECRET).generator("zo_o2nc", "noise").standard_normal((20, D3))
    assert np.array_equal(r.diagnostics.noise.reshape(20, D3), sigma * z)
    assert np.array_equal(r.releases, r.diagnostics.noiseless_sums + r.diagnostics.noise)
    assert r.ledger.plan.rho_exact == pytest.approx(2.0, rel=1e-15)
    paper = zo_o2nc_naive(RIDGE.loss, RIDGE.data, X1, sigma_rule="paper", **kwargs)
    assert paper.ledger.settings.noise_std == sigma / 2 and paper.ledger.settings.noise_rule == "paper"
    assert paper.ledger.plan.rho_exact == pytest.approx(4.0, rel=1e-15)  # only (α, α(2ρ)²/2)-RDP
    assert paper.ledger.plan.rho_printed == pytest.approx(2.0, rel=1e-15)
    assert "zo_o2nc.E8" in paper.ledger.plan.note
    plain = o2nc_nonprivate(RIDGE.loss, RIDGE.data, X1, T=5, K=4, smoothing_radius=0.1, step_size=1e-3, seed=8)
    assert plain.ledger.plan is None and plain.ledger.settings.block_sizes == (1, 1)
    assert plain.ledger.algorithm == "o2nc_naive" and plain.diagnostics.loss_evaluations == 2 * 20


def test_ledger_contents():
    r = _run()
    led = r.ledger
    assert led.algorithm == "zo_o2nc" and led.seed == 5
    assert led.settings.records_used == 3 * (7 + 5) and led.settings.records_available == RIDGE.n
    assert led.settings.step_bound == 0.1 / 6 and led.settings.noise_rule == "exact"
    plan = led.plan
    assert plan.relation == "replace_one" and plan.block_sizes == (7, 1)
    assert plan.rho_exact <= 1.0 * (1 + 1e-15)  # σ calibrated by the exact rule for ρ = 1
    assert led.epsilon_spent == plan.epsilon_claimed == plan.epsilon_tight
    assert plan.epsilon_tight <= plan.epsilon_exact  # the optimal conversion is never worse than §2's
    assert plan.epsilon_tight <= plan.epsilon_accountant  # the event counts every leaf at the largest s and c
    assert r.releases.shape == (3, 6, D3) and r.epoch_averages.shape == (3, D3)
    assert r.query_points is None and r.iterates is None
    assert r.diagnostics.loss_evaluations == 3 * (2 * 7 * D3 + 5 * 2 * 1 * D3)


def test_run_with_noise_std_given_reports_the_rho_it_gives():
    r = _run(rho=None, noise_std=10.0)
    plan = r.ledger.plan
    assert plan.noise_rule == "given" and plan.rho_target is None and plan.noise_std == 10.0
    s1, s2 = 2 * D3 / 7, 2 * D3 * 2 * (0.1 / 6) / 0.1
    expected = math.sqrt(max(s1**2 * 3, s2**2 * 2)) / 10.0  # c_1 = ⌊log2 6⌋ + 1 = 3, max_{q≥2} c_q = 2
    assert plan.rho_exact == pytest.approx(expected, rel=1e-14)


# --- non-finite records, mpmath ----------------------------------------------------------------------------------


def test_nonfinite_loss_values_are_replaced_and_counted():
    rows = _unit_rows(40, 2, 5)

    def loss(x, z):
        if z[0] > 0.9:
            return math.nan
        if z[0] < -0.9:
            return math.inf if x[0] > 0.3 else 0.0
        return float(np.dot(z, x))

    kwargs = dict(T=4, K=2, B1=5, B2=2, smoothing_radius=0.1, step_size=0.01, lipschitz=1.0, dp_delta=1e-5, rho=1.0,
                  seed=2)
    r = zo_o2nc(loss, rows, np.array([0.3, 0.1]), **kwargs)
    assert np.all(np.isfinite(r.releases)) and r.diagnostics.nonfinite_counts.sum() > 0
    with pytest.raises(ValueError, match="infinite finite difference"):
        zo_o2nc(loss, rows, np.array([0.3, 0.1]), T=4, K=2, B1=5, B2=2, smoothing_radius=0.1, step_size=0.01,
                seed=2, noise="none")


def test_mpmath_run_matches_float64():
    kwargs = dict(T=3, K=2, B1=4, B2=1)
    with working_precision(30):
        x1 = to_mp(X1)
        mp = zo_o2nc(RIDGE.loss, RIDGE.data, x1, T=3, K=2, B1=4, B2=1, smoothing_radius=0.1, step_size=2e-3,
                     rho=1.0, lipschitz=1.0, dp_delta=1e-5, seed=5, noise_seed=SECRET, record_path=True)
    fl = _run(**kwargs, record_path=True)
    assert mp.releases.dtype == object and isinstance(mp.output[0], mpmath.mpf)
    assert mp.ledger.settings.arithmetic == "mpmath"
    assert np.allclose(mp.releases.astype(float), fl.releases, rtol=1e-12, atol=1e-12)
    assert np.allclose(mp.query_points.astype(float), fl.query_points, rtol=0, atol=1e-12)
    assert mp.output_index == fl.output_index


# --- validation ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("overrides, error, name", [
    (dict(T=0), ValueError, "T"),
    (dict(K=1.5), TypeError, "K"),
    (dict(B1=0), ValueError, "B1"),
    (dict(smoothing_radius=-0.1), ValueError, "smoothing_radius"),
    (dict(step_size=math.nan), ValueError, "step_size"),
    (dict(step_bound=0.0), ValueError, "step_bound"),
    (dict(rho=0.0), ValueError, "rho"),
    (dict(rho=None), ValueError, "exactly one of rho"),
    (dict(noise_std=1.0), ValueError, "exactly one of rho"),
    (dict(lipschitz=None), ValueError, "lipschitz"),
    (dict(dp_delta=None), ValueError, "dp_delta"),
    (dict(dp_delta=1.5), ValueError, "dp_delta"),
    (dict(count_rule="ln"), ValueError, "count_rule"),
    (dict(noise="laplace"), ValueError, "noise"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(noise_seed="abc"), TypeError, "noise_seed"),
    (dict(T=1, count_rule="paper_2lnT"), ValueError, "T must be >= 2"),
])
def test_run_validation_names_the_parameter(overrides, error, name):
    with pytest.raises(error, match=name):
        _run(**overrides)


def test_settings_and_explicit_are_exclusive():
    from reference.algorithms.zo_o2nc_theory import naive_settings, thm49_settings

    s = thm49_settings(RIDGE.n, D3, 1.0, 0.1, 1.0, 1.0)
    with pytest.raises(ValueError, match="either settings or"):
        zo_o2nc(RIDGE.loss, RIDGE.data, X1, settings=s, T=3, dp_delta=1e-5, seed=1)
    with pytest.raises(TypeError, match="Theorem49Settings"):
        zo_o2nc(RIDGE.loss, RIDGE.data, X1, settings=naive_settings(RIDGE.n, D3, 1.0, 0.1, 1.0, 1.0), dp_delta=1e-5,
                seed=1)
    with pytest.raises(ValueError, match="d = 3"):
        zo_o2nc(RIDGE.loss, RIDGE.data, X1[:2], settings=s, dp_delta=1e-5, seed=1)
    with pytest.raises(ValueError, match="noise='none'"):
        zo_o2nc(RIDGE.loss, RIDGE.data, X1, settings=thm49_settings(RIDGE.n, D3, 1.0, 0.1, None, 1.0),
                dp_delta=1e-5, seed=1)


def test_loss_returning_nonscalar_is_refused():
    with pytest.raises(ValueError, match="scalar"):
        zo_o2nc(lambda x, z: np.ones(2), RIDGE.data, X1, T=2, K=1, B1=2, smoothing_radius=0.1, step_size=1e-3,
                seed=1, noise="none")
    with pytest.raises(TypeError, match="loss"):
        zo_o2nc(3, RIDGE.data, X1, T=2, K=1, B1=2, smoothing_radius=0.1, step_size=1e-3, seed=1, noise="none")


def test_linear_objective_runs_through_theorem_settings():
    """End to end with Theorem 4.9's settings on a linear problem (L = 1): every record read once."""
    from reference.algorithms.zo_o2nc_theory import thm49_settings

    rows = _unit_rows(300, 2, 9)
    lin = Linear(rows)
    s = thm49_settings(300, 2, lin.lipschitz, 0.2, 1.0, 1.0)
    r = zo_o2nc(lin.loss, rows, np.zeros(2), settings=s, dp_delta=1e-5, seed=4)
    assert r.ledger.settings.source == "thm49_settings"
    assert r.ledger.settings.records_used == s.records_used == 2 * s.K * s.T
    assert r.ledger.plan.rho_exact <= 1.0 * (1 + 1e-15)
    assert r.releases.shape == (s.K, s.T, 2)
