"""reference.algorithms.spider_sosp: Liu–Talwar Algorithms 2 and 3 and the procedure of Lemma 3.3 (the loop invariants, the oracles, the
batch rules, the escape on the cosine family and the Lemma 3.3 counterexample).

Monte Carlo checks use "z ≤ 4.5" (every coordinate within 4.5 standard errors: two-sided normal tail 6.8e-6 per
coordinate) and the binomial criterion K ≤ binom.ppf(1 − 1e-6, N, p) for tail bounds. Deterministic identities are
checked exactly, or within the float64 rounding of the quantities involved (stated where used).
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from reference.algorithms import spider_sosp as sp
from reference.algorithms import spider_sosp_theory as th
from reference.algorithms.spider_sosp_privacy import spider_sosp_sigma
from reference.mechanisms import TreeMechanism
from reference.objectives_sosp import CosineFamily, QuadraticFamily
from reference.precision import norm
from reference.rng import Streams
from reference.stationarity import sosp_level

U = 2.0**-53
Z = 4.5  # standard errors allowed per coordinate
LEVEL = 1e-6  # tail level of the binomial criteria

COS2 = CosineFamily([1.0, 1.0], [1.0, -1.0], 0.5)  # the study's problem: saddle at 0, minima at (π, 0)
COS_DET = CosineFamily([1.0, 1.0], [1.0, -1.0], 0.0)  # τ = 0: every record is 0, every gradient exact


def make_settings(family, n, epsilon, *, delta=1e-5, x0=None, tree_scope="global", adjacency="replace_one",
                  mode="unit", steps=None):
    x0 = np.zeros(family.d) if x0 is None else x0
    B = family.loss_gap(x0)
    sigma = None
    if not math.isinf(epsilon):
        sigma = float(spider_sosp_sigma("gdp_exact", lipschitz=family.lipschitz, smoothness=family.smoothness,
                                        loss_gap=B, d=family.d, n=n, epsilon=epsilon, delta=delta, steps=steps,
                                        adjacency=adjacency, tree_scope=tree_scope))
    rho = family.hessian_lipschitz or 1.0  # the quadratic's Hessian is constant: every ρ > 0 is valid
    return th.spider_settings(n, family.d, family.lipschitz, family.smoothness, rho, B, epsilon,
                              delta, mode=mode, noise_std=sigma, steps=steps, adjacency=adjacency,
                              tree_scope=tree_scope)


def run(family, n, epsilon, *, seed=0, noise_seed=12345, data_seed=1, x0=None, tree_scope="global", steps=None,
        mode="unit", **flags):
    data = family.sample(np.random.default_rng(data_seed), n)
    s = make_settings(family, n, epsilon, x0=x0, tree_scope=tree_scope, steps=steps, mode=mode)
    x0 = np.zeros(family.d) if x0 is None else x0
    return sp.stochastic_spider(family.gradient, data, x0, s.config(**flags), seed=seed, noise_seed=noise_seed), s, data


def path(result):
    """x_0..x_t."""
    return np.vstack([result.initial_point[None, :], result.iterates])


# ---------------------------------------------------------------------------------------------------
# Batch sizes (Lemma 3.8): exact ceilings


def _exact_b(G, d, eps, alpha):
    # smallest k with k − G²/α² ≥ G√d/(εα) ≥ 0, decided in rationals: (k − r)² ≥ q
    G, alpha = Fraction(G), Fraction(alpha)
    r = G * G / (alpha * alpha)
    q = Fraction(0) if math.isinf(eps) else G * G * d / (Fraction(eps) * alpha) ** 2
    k = 0
    while not (k >= r and (k - r) ** 2 >= q):
        k += 1
    return k


def test_o1_batch_size_is_the_exact_ceiling():
    rng = np.random.default_rng(0)
    for _ in range(200):
        G, alpha = float(rng.uniform(0.1, 3)), float(rng.uniform(0.2, 3))
        d, eps = int(rng.integers(1, 50)), float(rng.uniform(0.1, 5))
        assert sp.o1_batch_size(G, d, eps, alpha) == _exact_b(G, d, eps, alpha)
        assert sp.o1_batch_size(G, d, math.inf, alpha) == _exact_b(G, d, math.inf, alpha)
    # on an integer boundary: G = 1, α = 1/2, d = 4, ε = 4: √4/(4·0.5) + 1/0.25 = 1 + 4 = 5 exactly
    assert sp.o1_batch_size(1.0, 4, 4.0, 0.5) == 5


def test_adaptive_batch_size_exact_on_integer_boundaries():
    # κv/α² = 1·0.75/0.25 = 3 exactly: ⌈3⌉ = 3, not 4; v√d/(αε) = 0.75·2/(0.5·1) = 3 exactly (d = 4)
    assert sp.adaptive_batch_size(0.75, 0.5, math.inf, 4, 1.0) == 3
    assert sp.adaptive_batch_size(0.75, 0.5, 1.0, 4, 0.1) == 3
    # an irrational term: ⌈v√2/(αε)⌉ with v = α = ε = 1 is ⌈1.414…⌉ = 2
    assert sp.adaptive_batch_size(1.0, 1.0, 1.0, 2, 1e-9) == 2


@given(v=st.floats(0, 10), w=st.floats(0, 10), alpha=st.floats(0.01, 2), eps=st.floats(0.05, 20),
       d=st.integers(1, 200), kappa=st.floats(0.01, 20))
def test_adaptive_batch_size_properties(v, w, alpha, eps, d, kappa):
    # an integer ≥ 1, non-decreasing in ‖g̃_{t−1}‖, and b_t ≥ coef_bt·‖g̃_{t−1}‖ exactly
    bt = sp.adaptive_batch_size(v, alpha, eps, d, kappa)
    assert isinstance(bt, int) and bt >= 1
    lo, hi = sorted((v, w))
    assert sp.adaptive_batch_size(lo, alpha, eps, d, kappa) <= sp.adaptive_batch_size(hi, alpha, eps, d, kappa)
    V, A, K, E = (Fraction(x) for x in (v, alpha, kappa, eps))
    assert bt >= K * V / (A * A)  # the κ term, in rationals
    assert bt * bt * (A * E) ** 2 >= V * V * d  # the privacy term: b_t ≥ v√d/(αε) ⟺ b_t²(αε)² ≥ v²d


@pytest.mark.parametrize(
    "args, error, name",
    [
        ((-1e-3, 1.0, 1.0, 2, 1.0), ValueError, "previous_release_norm"),
        ((np.nan, 1.0, 1.0, 2, 1.0), ValueError, "previous_release_norm"),
        ((np.inf, 1.0, 1.0, 2, 1.0), ValueError, "previous_release_norm"),
        ((1.0, 0.0, 1.0, 2, 1.0), ValueError, "alpha"),
        ((1.0, 1.0, 0.0, 2, 1.0), ValueError, "epsilon"),
        ((1.0, 1.0, 1.0, 0, 1.0), ValueError, "d"),
        ((1.0, 1.0, 1.0, 2.0, 1.0), TypeError, "d"),
        ((1.0, 1.0, 1.0, 2, -1.0), ValueError, "kappa"),
        (("1", 1.0, 1.0, 2, 1.0), TypeError, "previous_release_norm"),
    ],
)
def test_adaptive_batch_size_hostile(args, error, name):
    with pytest.raises(error, match=name):
        sp.adaptive_batch_size(*args)


@pytest.mark.parametrize("args, name", [((0.0, 2, 1.0, 1.0), "lipschitz"), ((1.0, 2, 1.0, np.nan), "alpha"),
                                        ((1.0, -2, 1.0, 1.0), "d"), ((1.0, 2, -np.inf, 1.0), "epsilon")])
def test_o1_batch_size_hostile(args, name):
    with pytest.raises(ValueError, match=name):
        sp.o1_batch_size(*args)


# ---------------------------------------------------------------------------------------------------
# Algorithm 3: the oracles


def test_oracles_single_pass_disjoint_and_refuse_reuse():
    data = COS2.sample(np.random.default_rng(3), 20)
    order = sp.public_permutation(5, 20)
    oracles = sp.GradientOracles(COS2.gradient, data, order, d=2)
    x = np.array([0.3, -0.2])
    g = oracles.o1(x, 7)
    expected = sum((COS2.gradient(x, data[i]) for i in order[:7]), np.zeros(2)) / 7
    assert np.array_equal(g, expected)
    oracles.o2(x, np.zeros(2), 10)
    assert oracles.remaining == 3 and oracles.records_used == 17
    assert np.array_equal(np.concatenate(oracles.batches), order[:17])
    with pytest.raises(ValueError, match="unused"):
        oracles.o1(x, 4)  # only 3 unused records: Algorithm 3 never reads a record twice
    assert oracles.remaining == 3  # a refused draw consumes nothing
    with pytest.raises(ValueError, match="order"):
        sp.GradientOracles(COS2.gradient, data, np.r_[order[:-1], order[0]], d=2)  # a repeated index


def test_o2_uses_the_same_record_at_both_points():
    calls = []

    def recording(x, z):
        calls.append((np.array(x), np.array(z)))
        return COS2.gradient(x, z)

    data = COS2.sample(np.random.default_rng(4), 30)
    oracles = sp.GradientOracles(recording, data, np.arange(30), d=2)
    x, y = np.array([0.5, 1.0]), np.array([0.4, 0.9])
    oracles.o2(x, y, 6)
    assert len(calls) == 12 and oracles.evaluations == 12
    for k in range(6):
        (x1, z1), (x0, z0) = calls[2 * k], calls[2 * k + 1]
        assert np.array_equal(z1, z0) and np.array_equal(z1, data[k])
        assert np.array_equal(x1, x) and np.array_equal(x0, y)


def test_oracle_moments_o1_o2():
    # on COS (d = 3, τ = 0.5): unbiased, and second moments equal Σ_j v_j/b (exact variances)
    fam = CosineFamily([1.0, 0.7, 1.3], [1.0, -1.0, 1.0], 0.5)
    x, y = np.array([1.3, -0.4, 2.0]), np.array([1.1, -0.1, 2.3])
    reps, b, bt = 2000, 50, 20
    data = fam.sample(np.random.default_rng(8), reps * (b + bt))
    oracles = sp.GradientOracles(fam.gradient, data, np.arange(data.shape[0]), d=3)
    o1 = np.array([oracles.o1(x, b) for _ in range(reps)])
    o2 = np.array([oracles.o2(x, y, bt) for _ in range(reps)])
    grad, diff = fam.population_gradient(x), fam.population_gradient(x) - fam.population_gradient(y)
    for sample, mean, var, size in ((o1, grad, fam.gradient_variance(x), b),
                                    (o2, diff, fam.difference_variance(x, y), bt)):
        se = sample.std(axis=0, ddof=1) / math.sqrt(reps)
        assert np.all(np.abs(sample.mean(axis=0) - mean) <= Z * se)
        sq = np.sum((sample - mean) ** 2, axis=1)
        assert abs(sq.mean() - var.sum() / size) <= Z * sq.std(ddof=1) / math.sqrt(reps)
    # O2's second moment is at most M²‖x − y‖²/b_t (Lemma 3.5 (2), exact form)
    assert fam.difference_variance(x, y).sum() / bt <= fam.smoothness**2 * np.sum((x - y) ** 2) / bt


def test_oracles_replace_nonfinite_records_and_clip():
    data = np.array([[0.0], [1.0], [2.0], [3.0]])

    def gradient(x, z):
        return np.array([np.nan]) if z[0] == 1.0 else np.array([10.0 * (x[0] - z[0])])

    oracles = sp.GradientOracles(gradient, data, np.arange(4), d=1, lipschitz=1.0, smoothness=10.0,
                                 enforce_constants=True)
    g = oracles.o1(np.array([0.5]), 2)  # records 0 (gradient 5, clipped to 1) and 1 (NaN → 0)
    assert np.array_equal(g, np.array([0.5]))
    assert oracles.nonfinite_counts == [1] and oracles.clipped_counts == [1]
    # O2 differences are 10·(x − y) = 10·0.1 = 1 ≤ M‖x − y‖ = 1: no clip (up to rounding of 10·0.1 vs 10·(0.6 − 0.5))
    g2 = oracles.o2(np.array([0.6]), np.array([0.5]), 2)
    assert abs(g2[0] - 1.0) <= 8 * U and oracles.nonfinite_counts[-1] == 0


# ---------------------------------------------------------------------------------------------------
# Algorithm 2: invariants of every run


CASES = [
    dict(family=COS2, n=3000, epsilon=4.0, seed=s, noise_seed=100 + s, tree_scope=scope)
    for s, scope in ((0, "global"), (1, "segment"), (2, "global"), (3, "segment"))
] + [
    dict(family=COS2, n=3000, epsilon=math.inf, seed=4, noise_seed=104),
    dict(family=CosineFamily([1.0, 0.5, 2.0], [1.0, -1.0, -1.0], 0.3), n=4000, epsilon=1.0, seed=5, noise_seed=105),
    dict(family=COS2, n=3000, epsilon=4.0, seed=6, noise_seed=106, reset_drift_on_perturb=True),
    dict(family=COS_DET, n=1500, epsilon=math.inf, seed=7, noise_seed=107),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"seed{c['seed']}")
def test_run_invariants(case):
    result, s, _ = run(**case)
    tr, cfg = result.trace, result.config
    steps = tr.steps
    assert steps > 10
    # t = 0 is O1 (drift_0 = κ)
    assert tr.kinds[0] == "O1" and tr.drift[0] == cfg.kappa
    # O1 iff drift_t ≥ κ, and drift is the running Σ‖g̃‖ since the last reset (O1, or a perturbation with the flag)
    drift = cfg.kappa
    for t in range(steps):
        assert tr.drift[t] == drift
        assert (tr.kinds[t] == "O1") == (drift >= cfg.kappa)
        if tr.kinds[t] == "O1" or (cfg.reset_drift_on_perturb and t in tr.perturbation_steps):
            drift = 0.0
        drift = drift + norm(tr.released[t])
    # perturbations at least Γ + 1 apart, none at t = 0
    gaps = np.diff(tr.perturbation_steps)
    assert len(tr.perturbation_steps) >= 1 and tr.perturbation_steps[0] >= 1 and np.all(gaps >= cfg.freeze_steps + 1)
    # data: disjoint batches of the announced sizes, a single pass, Σ b = records used ≤ n
    used = np.concatenate(tr.batch_indices)
    assert len(np.unique(used)) == len(used) == tr.records_used == int(tr.batch_sizes.sum()) <= tr.records_available
    assert [len(i) for i in tr.batch_indices] == list(tr.batch_sizes)
    assert np.array_equal(used, sp.public_permutation(case["seed"], case["n"])[:tr.records_used])
    # line 15, exactly: x_{t+1} = x_t − (1/M) g̃_t
    xs = path(result)
    assert np.array_equal(xs[1:], xs[:-1] - cfg.step_size * tr.released)
    # the release is ∇_t + TREE + g_t (NOT PRIVATE debug trace), exactly
    dbg = result.debug
    assert np.array_equal(tr.released, dbg.estimates + dbg.tree_noise + dbg.perturbations)
    assert np.all(dbg.perturbations[[t for t in range(steps) if t not in tr.perturbation_steps]] == 0)
    # O2 batch sizes follow b_t(‖g̃_{t−1}‖); O1 batches are b
    for t in range(steps):
        if tr.kinds[t] == "O1":
            assert tr.batch_sizes[t] == cfg.batch_size
        else:
            assert tr.batch_sizes[t] == sp.adaptive_batch_size(norm(tr.released[t - 1]), cfg.alpha, cfg.epsilon,
                                                               cfg.d, cfg.kappa)
    # Lemma 3.9 (exact sub-claims): (#O1 − 1)κ ≤ Σ‖g̃‖; Σ_{O2} b_t ≤ coef_bt Σ‖g̃_{t−1}‖ + #O2; samples = b#O1 + Σ b_t
    o1 = [t for t in range(steps) if tr.kinds[t] == "O1"]
    o2 = [t for t in range(steps) if tr.kinds[t] == "O2"]
    norms = np.array([norm(g) for g in tr.released])
    if not cfg.reset_drift_on_perturb:
        assert (len(o1) - 1) * cfg.kappa <= math.fsum(norms[:o1[-1]])
    previous = math.fsum(norms[[t - 1 for t in o2]])
    assert tr.batch_sizes[o2].sum() <= s.batch_coefficient * previous * (1 + 8 * U) + len(o2)
    assert tr.records_used == cfg.batch_size * len(o1) + tr.batch_sizes[o2].sum()
    # Lemma 3.6 made explicit: with drift reset only at O1 steps, V_t = G²/b + Σ_{O2 i in the segment} ‖g̃_{i−1}‖²/b_i
    # ≤ G²/b + κ/coef_bt at every step (b_i ≥ coef_bt‖g̃_{i−1}‖ and the segment's Σ‖g̃_{i−1}‖ < κ)
    if not cfg.reset_drift_on_perturb:
        G = case["family"].lipschitz
        V = G**2 / cfg.batch_size
        for t in range(steps):
            V = G**2 / cfg.batch_size if tr.kinds[t] == "O1" else V + norms[t - 1] ** 2 / tr.batch_sizes[t]
            assert V <= s.variance_bound * (1 + 16 * U)
    # the halting rule: the run stopped at the horizon or when the next step's batch did not fit
    if tr.halt_reason == "data":
        assert tr.records_available - tr.records_used < tr.next_batch_size
    else:
        assert steps == s.steps


@pytest.mark.parametrize("case", CASES[:3] + CASES[-2:], ids=lambda c: f"seed{c['seed']}")
def test_control_flow_is_a_function_of_the_release(case):
    # kinds, batch sizes, drift, leaves, perturbation steps and the halt, from g̃ and the config alone
    result, _, _ = run(**case)
    replay = sp.replay_schedule(result.trace.released, result.config, case["n"])
    tr = result.trace
    assert replay.kinds == tr.kinds and replay.perturbation_steps == tr.perturbation_steps
    assert np.array_equal(replay.batch_sizes, tr.batch_sizes) and np.array_equal(replay.leaves, tr.leaves)
    assert np.array_equal(replay.drift, tr.drift)
    assert (replay.records_used, replay.halt_reason, replay.next_batch_size) == (
        tr.records_used, tr.halt_reason, tr.next_batch_size)
    with pytest.raises(ValueError, match="released"):
        sp.replay_schedule(tr.released[:-1], result.config, case["n"])  # a run would have taken another step


def test_tree_noise_comes_from_the_shared_tree_mechanism():
    # global: leaf t + 1 of one tree; segment: leaf t − τ + 1 of a tree restarted at every O1 step τ. The debug trace's
    # noise must be TreeMechanism's output on the secret stream ("spider_sosp", "noise"), leaf for leaf.
    for scope in ("global", "segment"):
        result, s, _ = run(COS2, 3000, 4.0, seed=9, noise_seed=4242, tree_scope=scope)
        tr = result.trace
        if scope == "global":
            assert np.array_equal(tr.leaves, np.arange(1, tr.steps + 1))
        else:
            starts = [t for t in range(tr.steps) if tr.kinds[t] == "O1"]
            assert len(starts) >= 2 and all(tr.leaves[t] == 1 for t in starts)
            assert all(tr.leaves[t] == tr.leaves[t - 1] + 1 for t in range(1, tr.steps) if tr.kinds[t] == "O2")
        tree = TreeMechanism(2, np.full(s.steps, s.noise_std), Streams(4242).generator("spider_sosp", "noise"))
        replayed = np.array([tree(int(leaf)) for leaf in tr.leaves])
        assert np.array_equal(replayed, result.debug.tree_noise)


def test_perturbations_come_from_the_secret_stream():
    result, s, _ = run(COS2, 3000, 4.0, seed=2, noise_seed=777)
    for t in result.trace.perturbation_steps:
        rng = Streams(777).generator("spider_sosp", "perturbation", t)
        expected = rng.standard_normal(2) * (s.perturbation_scale / math.sqrt(2))
        assert np.array_equal(result.debug.perturbations[t], expected)


def test_run_reads_each_o2_record_at_both_points():
    calls = []

    def recording(x, z):
        calls.append((np.array(x), np.array(z)))
        return COS2.gradient(x, z)

    data = COS2.sample(np.random.default_rng(2), 1500)
    s = make_settings(COS2, 1500, 4.0)
    result = sp.stochastic_spider(recording, data, np.zeros(2), s.config(), seed=3, noise_seed=33)
    xs, tr = path(result), result.trace
    k = 0
    for t in range(tr.steps):
        for i in tr.batch_indices[t]:
            if tr.kinds[t] == "O1":
                assert np.array_equal(calls[k][0], xs[t]) and np.array_equal(calls[k][1], data[i])
                k += 1
            else:  # same z at x_t and x_{t−1}
                assert np.array_equal(calls[k][0], xs[t]) and np.array_equal(calls[k + 1][0], xs[t - 1])
                assert np.array_equal(calls[k][1], data[i]) and np.array_equal(calls[k + 1][1], data[i])
                k += 2
    assert k == len(calls) == result.debug.evaluations


# ---------------------------------------------------------------------------------------------------
# Halting rule and edge cases


def test_halting_by_data_and_by_horizon():
    result, s, _ = run(COS2, 2000, 4.0, steps=25)
    assert result.trace.halt_reason == "horizon" and result.trace.steps == 25 and result.trace.next_batch_size is None
    result, s, _ = run(COS2, 2000, 4.0)
    tr = result.trace
    assert tr.halt_reason == "data" and tr.steps < 2000
    assert 0 <= tr.records_available - tr.records_used < tr.next_batch_size


def test_too_little_data_for_one_o1_batch_returns_no_iterate():
    s = make_settings(COS2, 5000, 4.0)
    data = COS2.sample(np.random.default_rng(0), s.batch_size - 1)
    result = sp.stochastic_spider(COS2.gradient, data, np.zeros(2), s.config(), seed=0, noise_seed=1)
    assert result.iterates.shape == (0, 2) and result.trace.released.shape == (0, 2)
    assert result.trace.halt_reason == "data" and result.trace.next_batch_size == s.batch_size
    assert result.trace.records_used == 0


def test_dimension_one_and_zero_release_gives_unit_batches():
    fam = CosineFamily([1.0], [1.0], 0.0)  # a critical point at 0 with exact gradients: every release is 0
    result, s, _ = run(fam, 500, math.inf, perturb=False)
    tr = result.trace
    assert np.all(tr.released == 0) and np.all(result.iterates == 0)
    assert tr.kinds[0] == "O1" and set(tr.kinds[1:]) == {"O2"} and np.all(tr.batch_sizes[1:] == 1)
    assert tr.steps == 500 - s.batch_size + 1 and tr.halt_reason == "data"


def test_single_step_horizon():
    result, s, _ = run(COS2, 1000, 4.0, steps=1)
    assert result.trace.steps == 1 and result.trace.halt_reason == "horizon" and s.tree_levels == 1


# ---------------------------------------------------------------------------------------------------
# Flags


def test_reset_drift_on_perturb_literal_reading():
    result, _, _ = run(COS2, 3000, 4.0, seed=6, noise_seed=106, reset_drift_on_perturb=True)
    tr = result.trace
    assert tr.perturbation_steps
    for t in tr.perturbation_steps:
        if t + 1 < tr.steps:
            assert tr.drift[t + 1] == norm(tr.released[t])  # line 10 set drift_t = 0 before line 15 added ‖g̃_t‖


def test_perturb_false_disables_line_9():
    result, _, _ = run(COS2, 3000, 4.0, perturb=False)
    assert result.trace.perturbation_steps == () and np.all(result.debug.perturbations == 0)


def test_enforce_constants_is_a_no_op_for_a_family_satisfying_assumption_3_1():
    plain, _, _ = run(COS2, 2000, 4.0, seed=1, noise_seed=5)
    clipped, _, _ = run(COS2, 2000, 4.0, seed=1, noise_seed=5, enforce_constants=True)
    assert np.all(clipped.debug.clipped_counts == 0)
    assert np.array_equal(plain.iterates, clipped.iterates)


def test_nonfinite_record_gradients_do_not_stop_the_run():
    def gradient(x, z):
        return np.full(2, np.nan) if z[0] > 1.0 else COS2.gradient(x, z)

    data = COS2.sample(np.random.default_rng(5), 2000)
    s = make_settings(COS2, 2000, 4.0)
    result = sp.stochastic_spider(gradient, data, np.zeros(2), s.config(), seed=0, noise_seed=9)
    assert result.debug.nonfinite_counts.sum() > 0
    assert np.all(np.isfinite(result.iterates)) and np.all(np.isfinite(result.trace.released))


# ---------------------------------------------------------------------------------------------------
# σ = 0, no perturbation: non-private SpiderBoost


def spiderboost(gradient, data, x0, *, b, alpha, kappa, M, horizon, order):
    """SpiderBoost with the drift restart rule and the adaptive O2 batch, written from the paper, no noise."""
    x, x_prev, drift, used, nabla, prev_norm, xs = x0.copy(), None, kappa, 0, None, None, []
    for _ in range(horizon):
        size = b if drift >= kappa else max(math.ceil(Fraction(kappa) * Fraction(prev_norm) / Fraction(alpha) ** 2), 1)
        if len(order) - used < size:
            break
        batch = data[order[used:used + size]]
        used += size
        total = np.zeros(x.shape)
        if drift >= kappa:
            for z in batch:
                total = total + gradient(x, z)
            nabla, drift = total / size, 0.0
        else:
            for z in batch:
                total = total + (gradient(x, z) - gradient(x_prev, z))
            nabla = nabla + total / size
        x_prev, x = x, x - (1.0 / M) * nabla
        prev_norm = float(np.linalg.norm(nabla))
        drift = drift + prev_norm
        xs.append(x)
    return np.array(xs)


@pytest.mark.parametrize("family", [COS2, QuadraticFamily(np.diag([1.0, 0.25]), 0.5, 10.0)], ids=["cos", "quad"])
def test_sigma_zero_without_perturbation_is_spiderboost(family):
    n, seed = 3000, 11
    x0 = np.array([0.3, -2.0])
    data = family.sample(np.random.default_rng(0), n)
    s = make_settings(family, n, math.inf, x0=x0)
    result = sp.stochastic_spider(family.gradient, data, x0, s.config(perturb=False), seed=seed, noise_seed=1)
    order = Streams(seed).generator("spider_sosp", "permutation").permutation(n)
    expected = spiderboost(family.gradient, data, x0, b=s.batch_size, alpha=s.alpha, kappa=s.kappa,
                           M=family.smoothness, horizon=s.steps, order=order)
    assert len(expected) > 20
    assert np.array_equal(result.iterates, expected)
    assert np.all(result.debug.tree_noise == 0)


# ---------------------------------------------------------------------------------------------------
# Lemma 3.2 along runs


@pytest.mark.parametrize("family", [COS2, QuadraticFamily(np.diag([1.0, 0.3]), 0.5, 10.0)], ids=["cos", "quad"])
def test_descent_inequality_of_lemma_3_2_along_a_run(family):
    # F(x_{t+1}) ≤ F(x_t) + η‖g̃_t‖‖∇F(x_t) − g̃_t‖ − (η/2)‖g̃_t‖² for M-smooth F and η = 1/M, every step of any run.
    # Rounding: each side is a few float64 operations on numbers of size ≤ S = |F(x_t)| + η‖g̃‖(‖∇F‖ + ‖g̃‖), so
    # the comparison allows 16u·S (cos/sin have ≤ 1 ulp error each, and F sums d ≤ 2 terms).
    x0 = np.array([0.2, -1.0])
    result, _, _ = run(family, 3000, 4.0, x0=x0)
    xs, eta = path(result), result.config.step_size
    for t in range(result.trace.steps):
        g, grad = result.trace.released[t], family.population_gradient(xs[t])
        lhs = family.population_loss(xs[t + 1])
        rhs = family.population_loss(xs[t]) + eta * norm(g) * norm(grad - g) - eta / 2 * norm(g) ** 2
        scale = abs(family.population_loss(xs[t])) + abs(lhs) + eta * norm(g) * (norm(grad) + norm(g))
        assert lhs <= rhs + 16 * U * scale + 4 * U


# ---------------------------------------------------------------------------------------------------
# Saddle escape


def test_escape_from_the_exact_saddle_noiseless():
    # COS-det (τ = 0), ε = ∞ (σ = 0), x_0 = 0, the exact saddle: ∇f(0; 0) = 0 for every record.
    n = 2000
    s = make_settings(COS_DET, n, math.inf)
    data = COS_DET.sample(np.random.default_rng(0), n)
    rho = COS_DET.hessian_lipschitz
    # without the perturbation every release is 0: the run never leaves the saddle, α* = φ²c_1²/ρ = 1 throughout
    stay = sp.stochastic_spider(COS_DET.gradient, data, np.zeros(2), s.config(perturb=False), seed=0, noise_seed=1)
    assert stay.trace.steps > 100 and np.all(stay.iterates == 0)
    levels = {sosp_level(COS_DET.population_gradient(x), COS_DET.population_hessian(x), rho) for x in stay.iterates}
    assert levels == {1.0}
    # with it: after the first kick (t = 1) the exact gradient steps x ↦ x − ∇F(x) contract the distance u to a
    # minimiser as u ↦ u − sin u ≈ u³/6, so within a Γ + 1 = 3-step cycle a kick of size ~ζ ≈ 0.36 is undone to
    # (u³/6)³/6 < 1e-6 whenever |u| < 0.5; with ~70 cycles per run, missing it in every cycle has negligible
    # probability. Every seed must reach α* ≤ 1e-6 (the saddle has α* = 1).
    for noise_seed in range(20):
        escape = sp.stochastic_spider(COS_DET.gradient, data, np.zeros(2), s.config(), seed=0,
                                      noise_seed=1000 + noise_seed)
        best = min(sosp_level(COS_DET.population_gradient(x), COS_DET.population_hessian(x), rho)
                   for x in escape.iterates)
        assert best <= 1e-6
        assert escape.trace.perturbation_steps[0] == 1  # frozen_0 = 0 and ‖g̃_0‖ = 0 ≤ threshold


# ---------------------------------------------------------------------------------------------------
# Lemma 3.8 accuracy (small scale)


def test_theory_gamma_bounds_every_step_error():
    # theory mode: with probability ≥ 1 − ι every step has ‖∇_t + TREE − ∇F(x_t)‖ ≤ γ_hp; count runs with a violation
    runs, violations = 20, 0
    for r in range(runs):
        result, s, _ = run(COS2, 3000, 4.0, seed=r, noise_seed=500 + r, data_seed=50 + r, mode="theory")
        xs = path(result)
        err = result.debug.estimates + result.debug.tree_noise - np.array(
            [COS2.population_gradient(x) for x in xs[:-1]])
        violations += int(np.any(np.linalg.norm(err, axis=1) > s.gamma))
    assert violations <= stats.binom.ppf(1 - LEVEL, runs, s.iota)


# ---------------------------------------------------------------------------------------------------
# Saddle perturbation


def test_saddle_perturbation_draw_schedule_and_moments():
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    assert np.array_equal(sp.saddle_perturbation(rng_a, 3, 0.7), rng_b.standard_normal(3) * (0.7 / math.sqrt(3)))
    d, zeta, N = 4, 0.7, 50_000
    rng = np.random.default_rng(10)
    g = np.array([sp.saddle_perturbation(rng, d, zeta) for _ in range(N)])
    std = zeta / math.sqrt(d)
    assert np.all(np.abs(g.mean(axis=0)) <= Z * std / math.sqrt(N))  # E g = 0
    sq = np.sum(g**2, axis=1)  # (ζ²/d)χ²_d: mean ζ², variance 2ζ⁴/d
    assert abs(sq.mean() - zeta**2) <= Z * zeta**2 * math.sqrt(2 / d) / math.sqrt(N)
    cov = np.cov(g.T)  # off-diagonal entries: SE of a product of independent N(0, s²) is s²/√N
    off = cov[~np.eye(d, dtype=bool)]
    assert np.all(np.abs(off) <= Z * std**2 / math.sqrt(N))
    with pytest.raises(ValueError, match="perturbation_scale"):
        sp.saddle_perturbation(rng, 2, -1.0)
    with pytest.raises(TypeError, match="rng"):
        sp.saddle_perturbation(np.random.RandomState(0), 2, 1.0)


# ---------------------------------------------------------------------------------------------------
# Lemma 3.3 (random errors, the adversarial counterexample)


def _uniform_error(rng, d, gamma):
    """A vector with uniform direction and norm U[0, 1]·γ."""
    u = rng.standard_normal(d)
    return u / np.linalg.norm(u) * gamma * rng.random()


def test_lemma_3_3_with_random_errors():
    # F = Σ s_j cos x_j, s = (+1, −1, …, −1), d = 10, B = 2, M = ρ = 1, ι = 0.01, γ = 1e-3: α = 0.439 and
    # λ_min(∇²F(0)) = −1 ≤ −√(ρα) = −0.663, so x_0 = 0 is a saddle of Lemma 3.3; Γ = 459
    d, gamma, iota = 10, 1e-3, 0.01
    fam = CosineFamily(np.ones(d), np.r_[1.0, -np.ones(d - 1)], 0.0)
    kw = dict(d=d, smoothness=1.0, hessian_lipschitz=1.0, loss_gap=2.0, iota=iota)
    steps = th.freeze_rule(gamma, mode="theory", **kw)
    zeta = th.perturbation_scale_rule(gamma, mode="theory", d=d, iota=iota)
    target = -th.escape_decrease(gamma, **kw)
    assert fam.saddle_curvature() <= -math.sqrt(th.threshold_rule(gamma, mode="theory", **kw))
    trials, failures = 200, 0
    rng = np.random.default_rng(33)
    for _ in range(trials):
        out = sp.perturbed_inexact_descent(
            fam.population_gradient, np.zeros(d), smoothness=1.0, gamma=gamma, steps=steps, perturbation_scale=zeta,
            initial_error=_uniform_error(rng, d, gamma), error_oracle=lambda t, x, g: _uniform_error(rng, d, gamma),
            rng=rng)
        assert out.largest_error <= gamma and out.iterates.shape == (steps + 1, d)
        failures += int(fam.population_loss(out.iterates[-1]) - fam.population_loss(out.iterates[0]) > target)
    assert failures <= stats.binom.ppf(1 - LEVEL, trials, iota)


def test_lemma_3_3_adversarial_counterexample():
    # spider_sosp.E18: d = 100, ι = 0.01, γ = 1e-5, M = ρ = 1, B = 2 (α = 0.00971, Γ = 6773), ζ_1 = 0, and the
    # errors e_t = x_t/η − ∇F(x_t) allowed by the lemma (‖e_t‖ ≤ γ, checked by the procedure) force x_{t+1} = 0 up to
    # rounding: F(x_Γ) = F(x_0) exactly, where the lemma promises a decrease. Deterministic once the hypotheses hold.
    d, gamma, iota = 100, 1e-5, 0.01
    fam = CosineFamily(np.ones(d), np.r_[1.0, -np.ones(d - 1)], 0.0)
    kw = dict(d=d, smoothness=1.0, hessian_lipschitz=1.0, loss_gap=2.0, iota=iota)
    steps = th.freeze_rule(gamma, mode="theory", **kw)
    assert steps == 6773
    zeta = th.perturbation_scale_rule(gamma, mode="theory", d=d, iota=iota)
    rng = np.random.default_rng(18)
    for _ in range(5):
        out = sp.perturbed_inexact_descent(
            fam.population_gradient, np.zeros(d), smoothness=1.0, gamma=gamma, steps=steps, perturbation_scale=zeta,
            initial_error=np.zeros(d), error_oracle=lambda t, x, g: x / 1.0 - g, rng=rng)
        assert out.largest_error <= gamma  # the lemma's hypotheses hold
        assert np.linalg.norm(out.perturbation) > 0
        assert fam.population_loss(out.iterates[-1]) == fam.population_loss(out.iterates[0])
        assert fam.population_loss(out.iterates[-1]) - fam.population_loss(out.iterates[0]) > -th.escape_decrease(
            gamma, **kw)


def test_perturbed_inexact_descent_refuses_errors_beyond_gamma():
    fam = CosineFamily([1.0, 1.0], [1.0, -1.0], 0.0)
    common = dict(smoothness=1.0, gamma=0.1, steps=5, perturbation_scale=0.01, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="error_oracle"):
        sp.perturbed_inexact_descent(fam.population_gradient, np.zeros(2), initial_error=np.zeros(2),
                                     error_oracle=lambda t, x, g: np.array([0.2, 0.0]), **common)
    with pytest.raises(ValueError, match="initial_error"):
        sp.perturbed_inexact_descent(fam.population_gradient, np.zeros(2), initial_error=np.array([0.0, 0.11]),
                                     error_oracle=lambda t, x, g: np.zeros(2), **common)
    with pytest.raises(TypeError, match="error_oracle"):
        sp.perturbed_inexact_descent(fam.population_gradient, np.zeros(2), initial_error=np.zeros(2),
                                     error_oracle=None, **common)
    # zero errors and zero perturbation from the saddle: plain gradient descent stays at 0
    out = sp.perturbed_inexact_descent(fam.population_gradient, np.zeros(2), smoothness=1.0, gamma=0.1, steps=5,
                                       perturbation_scale=0.0, initial_error=np.zeros(2),
                                       error_oracle=lambda t, x, g: np.zeros(2), rng=np.random.default_rng(0))
    assert np.all(out.iterates == 0) and out.estimates.shape == (5, 2)


# ---------------------------------------------------------------------------------------------------
# Reproducibility and seeds


def test_same_seeds_same_trajectory():
    a, _, _ = run(COS2, 2000, 4.0, seed=3, noise_seed=99)
    b, _, _ = run(COS2, 2000, 4.0, seed=3, noise_seed=99)
    assert np.array_equal(a.iterates, b.iterates) and np.array_equal(a.trace.released, b.trace.released)
    assert a.trace.kinds == b.trace.kinds and a.trace.perturbation_steps == b.trace.perturbation_steps
    # another secret seed: the same public order (first batch), other noise
    c, _, _ = run(COS2, 2000, 4.0, seed=3, noise_seed=98)
    assert np.array_equal(c.trace.batch_indices[0], a.trace.batch_indices[0])
    assert not np.array_equal(c.trace.released[0], a.trace.released[0])
    # another public seed: another order
    e, _, _ = run(COS2, 2000, 4.0, seed=4, noise_seed=99)
    assert not np.array_equal(e.trace.batch_indices[0], a.trace.batch_indices[0])
    # no secret seed: fresh operating-system entropy, so the noise differs between calls
    f, _, _ = run(COS2, 2000, 4.0, seed=3, noise_seed=None)
    g, _, _ = run(COS2, 2000, 4.0, seed=3, noise_seed=None)
    assert f.secret_seed_source == "os_entropy" and not np.array_equal(f.trace.released[0], g.trace.released[0])
    assert a.secret_seed_source == "user"


def test_secret_seed_equal_to_public_seed_is_refused():
    with pytest.raises(ValueError, match="noise_seed"):
        run(COS2, 500, 4.0, seed=7, noise_seed=7)


# ---------------------------------------------------------------------------------------------------
# Hostile inputs


def _config(**changes):
    base = dict(d=2, smoothness=1.0, alpha=0.1, epsilon=1.0, kappa=1.0, batch_size=10, threshold=0.1,
                freeze_steps=3, perturbation_scale=0.1, noise_std=0.05)
    base.update(changes)
    return sp.SpiderConfig(**base)


@pytest.mark.parametrize(
    "changes, error, name",
    [
        (dict(alpha=np.nan), ValueError, "alpha"), (dict(alpha=-0.1), ValueError, "alpha"),
        (dict(smoothness=0.0), ValueError, "smoothness"), (dict(epsilon=0.0), ValueError, "epsilon"),
        (dict(kappa="1"), TypeError, "kappa"), (dict(batch_size=1.5), TypeError, "batch_size"),
        (dict(batch_size=0), ValueError, "batch_size"), (dict(threshold=-1.0), ValueError, "threshold"),
        (dict(freeze_steps=-1), ValueError, "freeze_steps"), (dict(noise_std=np.inf), ValueError, "noise_std"),
        (dict(perturbation_scale=np.nan), ValueError, "perturbation_scale"), (dict(steps=0), ValueError, "steps"),
        (dict(d=0), ValueError, "d"), (dict(tree_scope="local"), ValueError, "tree_scope"),
        (dict(adjacency="add_remove"), ValueError, "adjacency"), (dict(perturb="yes"), TypeError, "perturb"),
        (dict(reset_drift_on_perturb=1), TypeError, "reset_drift_on_perturb"),
        (dict(enforce_constants=True), ValueError, "lipschitz"),
    ],
)
def test_hostile_config(changes, error, name):
    with pytest.raises(error, match=name):
        _config(**changes)


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        (dict(data=np.full((50, 2), np.nan)), ValueError, "data"),
        (dict(data=np.zeros(50)), ValueError, "data"),
        (dict(data=np.zeros((0, 2))), ValueError, "data"),
        (dict(x0=np.zeros(3)), ValueError, "x0"),
        (dict(x0=[np.nan, 0.0]), ValueError, "x0"),
        (dict(config="config"), TypeError, "config"),
        (dict(gradient=None), TypeError, "gradient"),
        (dict(gradient=lambda x, z: np.zeros(3)), ValueError, "gradient"),
        (dict(seed=-1), ValueError, "seed"),
        (dict(seed=1.0), TypeError, "seed"),
        (dict(noise_seed="secret"), TypeError, "noise_seed"),
    ],
)
def test_hostile_run_inputs(kwargs, error, name):
    args = dict(gradient=COS2.gradient, data=COS2.sample(np.random.default_rng(0), 50), x0=np.zeros(2),
                config=_config(), seed=0, noise_seed=1)
    args.update(kwargs)
    with pytest.raises(error, match=name):
        sp.stochastic_spider(args.pop("gradient"), args.pop("data"), args.pop("x0"), args.pop("config"), **args)


def test_families_validate_inputs():
    with pytest.raises(ValueError, match="c"):
        CosineFamily([1.0, -1.0], [1.0, 1.0], 0.1)
    with pytest.raises(ValueError, match="s"):
        CosineFamily([1.0, 1.0], [1.0, 0.5], 0.1)
    with pytest.raises(ValueError, match="tau"):
        CosineFamily([1.0], [1.0], -0.1)
    with pytest.raises(ValueError, match="symmetric"):
        QuadraticFamily([[1.0, 0.1], [0.0, 1.0]], 0.1, 1.0)
    with pytest.raises(ValueError, match="positive definite"):
        QuadraticFamily(np.diag([1.0, -1.0]), 0.1, 1.0)
    with pytest.raises(ValueError, match="x"):
        COS2.gradient(np.zeros(3), np.zeros(2))
    with pytest.raises(TypeError, match="rng"):
        COS2.sample(0, 5)
