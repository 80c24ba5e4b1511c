"""The fast twin of bgm21 Algorithms 1 and 6 (reference.fast.bgm21_sfw) against the reference
(reference.algorithms.bgm21_sfw), draw for draw: on the same public and secret seeds every published and debug
field is BITWISE the reference's (the twin sums in the reference's order and certifies its vertex choices; see its
module docstring), and bad input is refused with the reference's exception type and words."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from reference.algorithms import bgm21_sfw as ref
from reference.fast import bgm21_sfw as fast
from reference.geometry import LpBall, Polytope

SEED, SECRET = 7, 2**90 + 31


def quad_grad(w, z):
    """f(w, z) = ½‖w − z‖² on (d,) rows: ∇f = w − z; broadcasts over a batch of rows (the batched path)."""
    return w - z


def logistic_grad(w, z):
    """Logistic loss on z = (x, y), y ∈ {±1}: −y·x·σ(−y⟨w, x⟩); written for one record only (x.dot(w) of a batch is
    (m,), which the record layout z[:-1] breaks), so the twin falls back to one record at a time or batches it."""
    x, y = z[:-1], z[-1]
    return -y * x / (1.0 + np.exp(y * np.dot(x, w)))


def scalar_only(w, z):
    """Refuses a batch: the twin must call it one record at a time, in the reference's order."""
    if np.ndim(z) != 1:
        raise ValueError("one record at a time")
    return np.tanh(w - z) + 0.1 * w


def _assert_same(a, b):
    for name in ("output", "iterates", "final_iterate"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for field in dataclasses.fields(a.trace):
        x, y = getattr(a.trace, field.name), getattr(b.trace, field.name)
        if field.name == "batch_indices":
            assert len(x) == len(y) and all(np.array_equal(p, q) for p, q in zip(x, y))
        else:
            assert np.array_equal(np.asarray(x), np.asarray(y)), field.name
            assert np.asarray(x).dtype == np.asarray(y).dtype, field.name
    for field in dataclasses.fields(a.debug):
        assert np.array_equal(np.asarray(getattr(a.debug, field.name)),
                              np.asarray(getattr(b.debug, field.name))), field.name
    assert (a.seed, a.secret_seed_source, a.guarantee_condition, a.noise_scales) == (
        b.seed, b.secret_seed_source, b.guarantee_condition, b.noise_scales)


def _random_polytope(rng, J, d):
    return Polytope(rng.standard_normal((J, d)))


def _logistic_data(rng, n, d):
    x = rng.standard_normal((n, d)) / np.sqrt(d)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return np.column_stack([x, y])


POLY_CASES = [
    # (name, gradient, polytope builder, data builder, config fields, eta)
    ("l1 ball, quadratic (batched), printed s_r", quad_grad,
     lambda rng: Polytope(LpBall(1.0, 1.0, np.zeros(5)).vertices()), lambda rng: 0.3 * rng.standard_normal((300, 5)),
     dict(n_rounds=4, batch_size=20, epsilon=2.0), None),
    ("random polytope J=9 d=4, logistic, input scales", logistic_grad,
     lambda rng: _random_polytope(rng, 9, 4), lambda rng: _logistic_data(rng, 400, 4),
     dict(n_rounds=5, batch_size=16, epsilon=1.0, lap_scales=(0.05, 0.1, 0.0, 0.2, 0.3)), None),
    ("random polytope J=30 d=6, one record at a time, non-private limit, practical eta", scalar_only,
     lambda rng: _random_polytope(rng, 30, 6), lambda rng: rng.standard_normal((200, 6)),
     dict(n_rounds=4, batch_size=12, epsilon=float("inf")), lambda r, t: 2.0 / (t + 2)),
    ("l1 ball d=40, tiny Laplace scale (the choice decided by the scores)", quad_grad,
     lambda rng: Polytope(LpBall(1.0, 2.0, np.full(40, 0.1)).vertices()), lambda rng: rng.standard_normal((500, 40)),
     dict(n_rounds=5, batch_size=24, epsilon=1.0, lap_scales=(1e-14,) * 5), None),
]


@pytest.mark.parametrize("case", POLY_CASES, ids=[c[0] for c in POLY_CASES])
def test_poly_sfw_twin_is_bitwise_the_reference(case):
    _, gradient, polytope_of, data_of, fields, eta = case
    rng = np.random.default_rng(12)
    polytope, data = polytope_of(rng), data_of(rng)
    config = ref.PolySFWConfig(**{**dict(delta=1e-5, lipschitz=2.0, smoothness=1.0), **fields})
    want = ref.poly_sfw(gradient, data, polytope, config, seed=SEED, noise_seed=SECRET, eta=eta)
    got = fast.poly_sfw(gradient, data, polytope, config, seed=SEED, noise_seed=SECRET, eta=eta)
    _assert_same(got, want)
    assert len(set(want.trace.selected.tolist())) > 1  # the runs move between vertices: the choice is exercised


NOISY_CASES = [
    ("l2 ball, quadratic, corrected σ̂", quad_grad, LpBall(2.0, 1.0, np.zeros(6)),
     lambda rng: 0.5 * rng.standard_normal((300, 6)), dict(n_rounds=5, batch_size=16), None),
    ("l1.5 ball, logistic, printed σ̂", logistic_grad, LpBall(1.5, 1.5, np.full(5, 0.2)),
     lambda rng: _logistic_data(rng, 300, 5), dict(n_rounds=4, batch_size=20, sigma_hat_eta="printed"), None),
    ("l1.5 ball, one record at a time, input noise factor, practical eta", scalar_only, LpBall(1.5, 2.0, np.zeros(3)),
     lambda rng: rng.standard_normal((150, 3)), dict(n_rounds=4, batch_size=10, noise_factor=0.02),
     lambda r, t: 2.0 / (t + 2)),
]


@pytest.mark.parametrize("case", NOISY_CASES, ids=[c[0] for c in NOISY_CASES])
def test_noisy_sfw_twin_is_bitwise_the_reference(case):
    _, gradient, ball, data_of, fields, eta = case
    data = data_of(np.random.default_rng(5))
    config = ref.NoisySFWConfig(**{**dict(epsilon=2.0, delta=1e-5, lipschitz=2.0, smoothness=1.0), **fields})
    want = ref.noisy_sfw(gradient, data, ball, config, seed=SEED, noise_seed=SECRET, eta=eta)
    got = fast.noisy_sfw(gradient, data, ball, config, seed=SEED, noise_seed=SECRET, eta=eta)
    _assert_same(got, want)


def test_nonfinite_records_are_skipped_as_the_reference_skips_them():
    def sometimes_nan(w, z):
        g = w - z[:-1]
        return np.where(z[..., -1:] > 1.0, np.nan, g)  # records flagged by their last entry give NaN

    rng = np.random.default_rng(3)
    data = np.column_stack([rng.standard_normal((200, 4)), rng.standard_normal(200)])
    data[:, :-1] *= 0.3
    polytope = Polytope(LpBall(1.0, 1.0, np.zeros(4)).vertices())
    config = ref.PolySFWConfig(n_rounds=4, batch_size=12, epsilon=1.0, delta=1e-5, lipschitz=2.0, smoothness=1.0)
    want = ref.poly_sfw(sometimes_nan, data, polytope, config, seed=SEED, noise_seed=SECRET)
    got = fast.poly_sfw(sometimes_nan, data, polytope, config, seed=SEED, noise_seed=SECRET)
    assert want.debug.nonfinite_counts.sum() > 0
    _assert_same(got, want)


def test_the_certified_choice_falls_back_on_ties():
    # G = 0 at s_r = 0 ties every vertex: the reference's lowest index, through Polytope.lmo
    V = np.random.default_rng(0).standard_normal((6, 3))
    assert fast._certain_winner(V, np.abs(V), np.zeros(3), None) is None
    G = np.array([1.0, -2.0, 0.5])
    exact = fast._exact_scores(V, G)
    assert fast._certain_winner(V, np.abs(V), G, None) == int(np.argmin(exact))
    # two vertices whose scores differ by one rounding are not certified
    W = np.vstack([V[0], V[0] * (1 + 2**-52)])
    assert fast._certain_winner(W, np.abs(W), G, None) is None


def test_estimator_matches_the_reference_call_for_call():
    rng = np.random.default_rng(4)
    data = rng.standard_normal((40, 3))
    a, b = ref.RecursiveGradientEstimator(quad_grad, data, 3), fast.RecursiveGradientEstimator(quad_grad, data, 3)
    w0, w1 = rng.standard_normal(3), rng.standard_normal(3)
    noise = rng.standard_normal(3)
    assert np.array_equal(a.start(w0, np.arange(10), noise=noise), b.start(w0, np.arange(10), noise=noise))
    args = (w1, w0, np.arange(10, 17), 0.6)
    assert np.array_equal(a.update(*args, difference_noise=noise), b.update(*args, difference_noise=noise))
    assert a.evaluations == b.evaluations == 10 + 14
    for est in (a, b):
        with pytest.raises(ValueError, match="eta must lie in"):
            est.update(w1, w0, np.arange(3), 1.5)
        with pytest.raises(ValueError, match="batch indices must lie in"):
            est.start(w0, np.array([40]))
    with pytest.raises(RuntimeError, match="update\\(\\) before start\\(\\)"):
        fast.RecursiveGradientEstimator(quad_grad, data, 3).update(w1, w0, np.arange(3), 0.5)


def _refusal(run):
    try:
        run()
    except Exception as exc:  # noqa: BLE001 — the refusal itself is compared
        return type(exc), str(exc)
    return None


BAD_POLY = [
    ("gradient not callable", dict(gradient=3)),
    ("mpmath-like object data", dict(data=np.array([[object()]] * 300, dtype=object))),
    ("too little data for the schedule", dict(data=np.zeros((50, 5)))),
    ("public seed equal to the secret", dict(noise_seed=SEED)),
    ("w_init outside W", dict(w_init=np.full(5, 3.0))),
    ("diameter below the polytope's", dict(config=dict(diameter=0.5))),
    ("eta outside (0, 1]", dict(eta=lambda r, t: 1.5)),
    ("gradient of the wrong shape", dict(gradient=lambda w, z: np.zeros(2))),
    ("negative seed", dict(seed=-1)),
]


@pytest.mark.parametrize("case", BAD_POLY, ids=[c[0] for c in BAD_POLY])
def test_poly_sfw_refuses_what_the_reference_refuses(case):
    _, change = case
    rng = np.random.default_rng(1)
    args = dict(gradient=quad_grad, data=0.3 * rng.standard_normal((300, 5)),
                polytope=Polytope(LpBall(1.0, 1.0, np.zeros(5)).vertices()), seed=SEED, noise_seed=SECRET,
                w_init=None, eta=None)
    fields = dict(n_rounds=4, batch_size=20, epsilon=2.0, delta=1e-5, lipschitz=2.0, smoothness=1.0)
    fields.update(change.pop("config", {}))
    args.update(change)
    args["config"] = ref.PolySFWConfig(**fields)

    def run(module):
        kw = dict(args)
        return lambda: module.poly_sfw(kw.pop("gradient"), kw.pop("data"), kw.pop("polytope"), kw.pop("config"), **kw)

    want = _refusal(run(ref))
    assert want is not None
    assert _refusal(run(fast)) == want


def test_noisy_sfw_refuses_what_the_reference_refuses():
    data = np.zeros((300, 3))
    config = ref.NoisySFWConfig(n_rounds=3, batch_size=8, epsilon=1.0, delta=1e-5, lipschitz=1.0, smoothness=1.0)
    cases = [
        lambda m: m.noisy_sfw(quad_grad, data, LpBall(1.0, 1.0, np.zeros(3)), config, seed=SEED, noise_seed=SECRET),
        lambda m: m.noisy_sfw(quad_grad, data, Polytope(np.eye(3)), config, seed=SEED, noise_seed=SECRET),
        lambda m: m.noisy_sfw(quad_grad, data, LpBall(2.0, 1.0, np.zeros(3)),
                              ref.PolySFWConfig(n_rounds=3, batch_size=8, epsilon=1.0, delta=1e-5, lipschitz=1.0,
                                                smoothness=1.0), seed=SEED, noise_seed=SECRET),
        lambda m: m.noisy_sfw(quad_grad, data, LpBall(2.0, 1.0, np.zeros(3)), config, seed=SEED, noise_seed=SECRET,
                              w_init=np.ones(3)),
        lambda m: m.noisy_sfw(quad_grad, data[:10], LpBall(2.0, 1.0, np.zeros(3)), config, seed=SEED,
                              noise_seed=SECRET),
        lambda m: m.noisy_sfw(lambda w, z: np.zeros(4), data, LpBall(2.0, 1.0, np.zeros(3)), config, seed=SEED,
                              noise_seed=SECRET),
    ]
    for make in cases:
        want = _refusal(lambda: make(ref))
        assert want is not None
        assert _refusal(lambda: make(fast)) == want


@pytest.mark.parametrize("p", [1.0, 1.5, 2.0, 3.0, float("inf")])
def test_polytope_diameter_is_the_reference_value(p):
    rng = np.random.default_rng(int(10 * p) if p < 10 else 99)
    for J, d in [(1, 3), (2, 1), (7, 4), (40, 20)]:
        polytope = Polytope(rng.standard_normal((J, d)) * 10.0 ** rng.uniform(-3, 3))
        assert fast._polytope_diameter(polytope, p) == polytope.diameter(p)
    with pytest.raises(ValueError) as want:
        Polytope(np.array([[1e308], [-1e308]])).diameter(1.0)
    with pytest.raises(ValueError) as got:
        fast._polytope_diameter(Polytope(np.array([[1e308], [-1e308]])), 1.0)
    assert str(got.value) == str(want.value)


def test_practical_schedules_of_theorems_8_and_11():
    """(R, b) from bgm21_theory's practical schedule (Theorems 8 and 11 at n = 2^12): both algorithms, bitwise."""
    from reference.algorithms.bgm21_theory import theorem8_params, theorem11_params

    n, d = 2**12, 8
    rng = np.random.default_rng(8)
    data = 0.4 * rng.standard_normal((n, d))
    polytope = Polytope(LpBall(1.0, 1.0, np.zeros(d)).vertices())
    p8 = theorem8_params(n, 1.0, 1e-5, polytope.J, schedule="practical")
    config = ref.PolySFWConfig(n_rounds=p8.n_rounds, batch_size=p8.b, epsilon=1.0, delta=1e-5, lipschitz=2.0,
                               smoothness=1.0)
    _assert_same(fast.poly_sfw(quad_grad, data, polytope, config, seed=SEED, noise_seed=SECRET),
                 ref.poly_sfw(quad_grad, data, polytope, config, seed=SEED, noise_seed=SECRET))
    p11 = theorem11_params(n, d, 2.0, 1.0, 1e-5, schedule="practical")
    ball = LpBall(2.0, 1.0, np.zeros(d))
    config = ref.NoisySFWConfig(n_rounds=p11.n_rounds, batch_size=p11.b, epsilon=1.0, delta=1e-5, lipschitz=2.0,
                                smoothness=1.0)
    _assert_same(fast.noisy_sfw(quad_grad, data, ball, config, seed=SEED, noise_seed=SECRET),
                 ref.noisy_sfw(quad_grad, data, ball, config, seed=SEED, noise_seed=SECRET))
    assert p8.n_rounds >= 2 and p11.n_rounds >= 2


def test_a_batched_gradient_that_sums_in_another_order_is_not_used():
    """⟨x, w⟩ by a matrix product on a batch (BLAS gemv) and by np.dot on one record differ in the last bit on most
    rows; the probe compares the whole first batch, so the twin falls back to the reference's calls and stays
    bitwise."""
    def gemv_logistic(w, z):
        x, y = z[..., :-1], z[..., -1:]
        return -y * x / (1.0 + np.exp(y * (x @ w)[..., None]))

    rng = np.random.default_rng(9)
    data = _logistic_data(rng, 600, 10)
    x0 = data[:20, :-1]
    w = rng.standard_normal(10)
    assert not np.array_equal(x0 @ w, np.array([np.dot(row, w) for row in x0]))  # the hazard is real here
    ball = LpBall(1.5, 1.0, np.zeros(10))
    config = ref.NoisySFWConfig(n_rounds=4, batch_size=20, epsilon=1.0, delta=1e-5, lipschitz=2.0, smoothness=1.0)
    _assert_same(fast.noisy_sfw(gemv_logistic, data, ball, config, seed=SEED, noise_seed=SECRET),
                 ref.noisy_sfw(gemv_logistic, data, ball, config, seed=SEED, noise_seed=SECRET))
