"""The fast twin of bgm21 Algorithm 2 and its solver (reference.fast.bgm21_prox) against the reference
(reference.algorithms.bgm21_prox), draw for draw: on the same public and secret seeds every returned field — output,
iterates, final iterate, the solver paths, the public trace and the NOT PRIVATE debug trace — is BITWISE the
reference's (same bytes, so −0.0 and +0.0 are told apart), and bad input is refused with the reference's exception
type and words."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from reference.algorithms import bgm21_prox as ref
from reference.fast import bgm21_prox as fast
from reference.geometry import LpBall
from reference.rng import Streams

SEED, SECRET = 7, 2**90 + 31


def quad_grad(w, z):
    """f(w, z) = ½‖w − z‖² on (d,) rows: ∇f = w − z; broadcasts over a batch of rows (the batched path)."""
    return w - z


def logistic_grad(w, z):
    """Logistic loss on z = (x, y): written for one record only (z[:-1] of a batch drops a row), so the probe
    refuses to batch it and the twin calls it one record at a time."""
    x, y = z[:-1], z[-1]
    return -y * x / (1.0 + np.exp(y * np.dot(x, w)))


def scalar_only(w, z):
    """Refuses a batch outright: one record at a time, in the reference's order."""
    if np.ndim(z) != 1:
        raise ValueError("one record at a time")
    return np.tanh(w - z) + 0.1 * w


class SmoothHuber:
    """A record loss with a per-record ``gradient`` and its owner's batch form ``gradients`` (the runner's
    convention): the Huber gradient clip(w − z, −1, 1), elementwise, so both forms give the same values."""

    def gradient(self, w, z):
        return np.clip(w - z, -1.0, 1.0)

    def gradients(self, w, rows):
        return np.clip(w - rows, -1.0, 1.0)


def _same_bytes(x, y, name):
    x, y = np.asarray(x), np.asarray(y)
    assert x.dtype == y.dtype and x.shape == y.shape, (name, x.dtype, y.dtype, x.shape, y.shape)
    assert x.tobytes() == y.tobytes(), name


def _same_dataclass(a, b, prefix):
    assert type(a) is type(b), prefix
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        name = f"{prefix}.{field.name}"
        if isinstance(x, tuple):
            assert len(x) == len(y), name
            for k, (p, q) in enumerate(zip(x, y)):
                if dataclasses.is_dataclass(p):
                    _same_dataclass(p, q, f"{name}[{k}]")
                else:
                    _same_bytes(p, q, f"{name}[{k}]")
        elif dataclasses.is_dataclass(x):
            _same_dataclass(x, y, name)
        elif isinstance(x, (np.ndarray, float, int)):
            assert type(x) is type(y), name
            _same_bytes(x, y, name)
        else:
            assert x == y, name


def _logistic_data(rng, n, d):
    x = rng.standard_normal((n, d)) / np.sqrt(d)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return np.column_stack([x, y])


# (name, gradient, ball, data builder, solver fields, algorithm fields, w_init)
PROX_CASES = [
    ("decreasing step, calibrated noise, defaults (m = n/R, T = m, w_1 = centre)", quad_grad,
     LpBall(2.0, 1.0, np.zeros(5)), lambda rng: 0.5 * rng.standard_normal((400, 5)),
     dict(), dict(n_rounds=4, weak_convexity=0.5), None),
    ("constant step, no noise, batch_size and w_init given, projection active", quad_grad,
     LpBall(2.0, 0.3, np.full(4, 0.1)), lambda rng: 2.0 + rng.standard_normal((300, 4)),
     dict(noise_std=0.0, step="constant", smoothness=1.0, n_steps=25), dict(n_rounds=5, weak_convexity=0.2,
                                                                            batch_size=40),
     np.array([0.2, 0.0, 0.1, -0.1])),
    ("decreasing step, input noise, one record at a time (logistic), beta given", logistic_grad,
     LpBall(2.0, 2.0, np.zeros(6)), lambda rng: _logistic_data(rng, 240, 6),
     dict(noise_std=0.3, n_steps=15), dict(n_rounds=3, weak_convexity=0.25, beta=1.0, batch_size=30), None),
    ("constant step, calibrated noise, owner's gradients (batched through the owner)", SmoothHuber().gradient,
     LpBall(2.0, 1.5, np.zeros(3)), lambda rng: rng.standard_normal((200, 3)),
     dict(step="constant", smoothness=1.0), dict(n_rounds=2, weak_convexity=0.0, beta=0.5), np.full(3, 0.5)),
    ("decreasing step, tiny noise, refused batch (scalar_only), R = 1", scalar_only,
     LpBall(2.0, 1.0, np.full(2, -0.2)), lambda rng: rng.standard_normal((50, 2)),
     dict(noise_std=1e-12, n_steps=40), dict(n_rounds=1, weak_convexity=1.0), None),
]


@pytest.mark.parametrize("case", PROX_CASES, ids=[c[0] for c in PROX_CASES])
def test_prox_guided_psmd_twin_is_bitwise_the_reference(case):
    _, gradient, ball, data_of, solver_fields, fields, w_init = case
    data = data_of(np.random.default_rng(12))
    solver = ref.ASCConfig(**{**dict(epsilon=1.0, delta=1e-5, lipschitz=2.0), **solver_fields})
    config = ref.ProxConfig(solver=solver, **fields)
    want = ref.prox_guided_psmd(gradient, data, ball, config, seed=SEED, noise_seed=SECRET, w_init=w_init)
    got = fast.prox_guided_psmd(gradient, data, ball, config, seed=SEED, noise_seed=SECRET, w_init=w_init)
    _same_dataclass(got, want, "result")
    # the runs move: every round's solver path leaves its centre
    assert all(not np.array_equal(path[0], path[-1]) for path in want.solver_iterates)


def test_the_projection_and_the_noise_are_exercised():
    """The constant-step case above hits the boundary of W and the calibrated cases draw non-zero noise: the bitwise
    agreement covers the projection and the noise, not only the interior, noise-free path."""
    _, gradient, ball, data_of, solver_fields, fields, w_init = PROX_CASES[1]
    data = data_of(np.random.default_rng(12))
    config = ref.ProxConfig(solver=ref.ASCConfig(epsilon=1.0, delta=1e-5, lipschitz=2.0, **solver_fields), **fields)
    res = fast.prox_guided_psmd(gradient, data, ball, config, seed=SEED, noise_seed=SECRET, w_init=w_init)
    radii = np.linalg.norm(np.vstack(res.solver_iterates) - ball.center, axis=1)
    assert np.max(radii) == pytest.approx(ball.radius, rel=1e-12)
    _, gradient, ball, data_of, solver_fields, fields, _ = PROX_CASES[0]
    config = ref.ProxConfig(solver=ref.ASCConfig(epsilon=1.0, delta=1e-5, lipschitz=2.0), **fields)
    res = fast.prox_guided_psmd(gradient, data_of(np.random.default_rng(12)), ball, config, seed=SEED,
                                noise_seed=SECRET)
    assert all(t.noise_std > 0 for t in res.trace.solver_traces)
    assert all(np.all(dbg.noises != 0.0) for dbg in res.debug)


@pytest.mark.parametrize("step", ["decreasing", "constant"])
@pytest.mark.parametrize("noise_std", [None, 0.0, 0.05])
def test_asc_dp_gd_twin_is_bitwise_the_reference(step, noise_std):
    rng = np.random.default_rng(4)
    data = rng.standard_normal((60, 4))
    ball = LpBall(2.0, 1.0, np.zeros(4))
    config = ref.ASCConfig(epsilon=0.5, delta=1e-6, lipschitz=3.0, noise_std=noise_std, step=step, smoothness=1.0,
                           n_steps=None if noise_std is None else 30)
    kwargs = dict(center=np.array([0.1, -0.2, 0.3, 0.0]), beta=0.8, mu=0.6, noise_seed=SECRET)
    want = ref.asc_dp_gd(quad_grad, data, ball, config, **kwargs)
    got = fast.asc_dp_gd(quad_grad, data, ball, config, **kwargs)
    _same_dataclass(got, want, "asc")


def test_nonfinite_records_are_skipped_as_the_reference_skips_them():
    def sometimes_nan(w, z):
        g = w - z[..., :-1]
        return np.where(z[..., -1:] > 1.0, np.nan, g)  # records flagged by their last entry give NaN

    rng = np.random.default_rng(3)
    data = np.column_stack([0.3 * rng.standard_normal((200, 4)), rng.standard_normal(200)])
    config = ref.ProxConfig(n_rounds=4, weak_convexity=0.5, batch_size=30,
                            solver=ref.ASCConfig(epsilon=1.0, delta=1e-5, lipschitz=2.0, n_steps=20))
    ball = LpBall(2.0, 1.0, np.zeros(4))
    want = ref.prox_guided_psmd(sometimes_nan, data, ball, config, seed=SEED, noise_seed=SECRET)
    got = fast.prox_guided_psmd(sometimes_nan, data, ball, config, seed=SEED, noise_seed=SECRET)
    assert sum(int(dbg.nonfinite_counts.sum()) for dbg in want.debug) > 0
    _same_dataclass(got, want, "result")


def test_a_batched_gradient_that_sums_in_another_order_is_not_used():
    """⟨x, w⟩ by a matrix product on a batch and by np.dot on one record differ in the last bit on most rows; the
    probe (whole first batch, and a generic point) refuses the batched form and the run stays bitwise."""
    def gemv_logistic(w, z):
        x, y = z[..., :-1], z[..., -1:]
        return -y * x / (1.0 + np.exp(y * (x @ w)[..., None]))

    rng = np.random.default_rng(9)
    data = _logistic_data(rng, 300, 10)
    x0, w = data[:20, :-1], rng.standard_normal(10)
    assert not np.array_equal(x0 @ w, np.array([np.dot(row, w) for row in x0]))  # the hazard is real here
    config = ref.ProxConfig(n_rounds=3, weak_convexity=0.5, batch_size=40,
                            solver=ref.ASCConfig(epsilon=1.0, delta=1e-5, lipschitz=2.0, n_steps=10))
    ball = LpBall(2.0, 1.0, np.zeros(10))
    _same_dataclass(fast.prox_guided_psmd(gemv_logistic, data, ball, config, seed=SEED, noise_seed=SECRET),
                    ref.prox_guided_psmd(gemv_logistic, data, ball, config, seed=SEED, noise_seed=SECRET), "result")


def test_the_runners_problem_at_theorem16s_settings():
    """The problem and settings ``dpref run bgm21 --algorithm prox-smd`` uses (the weakly convex sigmoid, its batched
    ``gradients`` found through the bound method's owner): bitwise."""
    from reference import runner_bgm21 as runner

    prepared = runner.prepare_bgm21("prox-smd", n=600, d=5, seed=3, noise_seed=SECRET, backend="reference")
    P = prepared.problem
    data = P.sample(600, np.random.default_rng(1))
    want = ref.prox_guided_psmd(P.gradient, data, P.W, prepared.config, seed=3, noise_seed=SECRET)
    got = fast.prox_guided_psmd(P.gradient, data, P.W, prepared.config, seed=3, noise_seed=SECRET)
    _same_dataclass(got, want, "result")


def test_noise_rows_are_the_per_step_generators_draws():
    """The one-pass seeding gives, row by row, the draw of ``Streams(secret).generator(*key, r, t)`` (Algorithm 2's
    per-step generator) and ``Streams(secret).generator(*key, t)`` (the standalone solver's), for several secrets
    including one of 128 bits and index words beyond 2^16."""
    rounds, steps = np.array([1, 1, 2, 7, 70_000]), np.array([1, 2, 1, 65_537, 3])
    for secret in (SECRET, 2**128 - 5, 0, 1):
        z = fast._standard_normals(secret, ("bgm21", "prox_psmd", "noise"), [rounds, steps], 3)
        want = np.array([Streams(secret).generator("bgm21", "prox_psmd", "noise", int(r), int(t)).standard_normal(3)
                         for r, t in zip(rounds, steps)])
        assert z.tobytes() == want.tobytes()
        z = fast._standard_normals(secret, ("bgm21", "asc_dp_gd", "noise"), [steps], 4)
        want = np.array([Streams(secret).generator("bgm21", "asc_dp_gd", "noise", int(t)).standard_normal(4)
                         for t in steps])
        assert z.tobytes() == want.tobytes()


def test_noise_falls_back_to_streams_when_the_seeding_check_fails(monkeypatch):
    """Were NumPy's seeding to change, the check on the first step fails and every step's generator is built by
    ``Streams``: the draws stay the reference's."""
    monkeypatch.setattr(fast, "_state_words", lambda seed, key, tails: np.zeros((tails[0].shape[0], 4), np.uint64))
    steps = np.arange(1, 6)
    z = fast._standard_normals(SECRET, ("bgm21", "asc_dp_gd", "noise"), [steps], 2)
    want = np.array([Streams(SECRET).generator("bgm21", "asc_dp_gd", "noise", int(t)).standard_normal(2)
                     for t in steps])
    assert z.tobytes() == want.tobytes()
    _, gradient, ball, data_of, solver_fields, fields, w_init = PROX_CASES[0]
    data = data_of(np.random.default_rng(12))
    config = ref.ProxConfig(solver=ref.ASCConfig(epsilon=1.0, delta=1e-5, lipschitz=2.0, **solver_fields), **fields)
    _same_dataclass(fast.prox_guided_psmd(gradient, data, ball, config, seed=SEED, noise_seed=SECRET),
                    ref.prox_guided_psmd(gradient, data, ball, config, seed=SEED, noise_seed=SECRET), "result")


def _refusal(run):
    try:
        run()
    except Exception as exc:  # noqa: BLE001 — the refusal itself is compared
        return type(exc), str(exc)
    return None


BAD_PROX = [
    ("gradient not callable", dict(gradient=3)),
    ("an l1 ball", dict(ball=LpBall(1.0, 1.0, np.zeros(3)))),
    ("not a ball", dict(ball=np.eye(3))),
    ("config of the solver", dict(config="asc")),
    ("mpmath-like object data", dict(data=np.array([[object()]] * 90, dtype=object))),
    ("fewer records than rounds", dict(data=np.zeros((2, 3)))),
    ("R batches of batch_size beyond n", dict(config=ref.ProxConfig(n_rounds=3, weak_convexity=0.5, batch_size=31,
                                                                     solver=ref.ASCConfig(epsilon=1.0, delta=1e-5,
                                                                                          lipschitz=2.0)))),
    ("public seed equal to the secret", dict(noise_seed=SEED)),
    ("negative seed", dict(seed=-1)),
    ("w_init outside W", dict(w_init=np.full(3, 3.0))),
    ("w_init of the wrong length", dict(w_init=np.zeros(4))),
    ("gradient of the wrong shape", dict(gradient=lambda w, z: np.zeros(2))),
    ("gradient raising", dict(gradient=lambda w, z: 1 / 0)),
    ("iterate overflow", dict(gradient=lambda w, z: np.full(3, 1e308), ball=LpBall(2.0, 1e308, np.zeros(3)))),
]


@pytest.mark.parametrize("case", BAD_PROX, ids=[c[0] for c in BAD_PROX])
def test_prox_guided_psmd_refuses_what_the_reference_refuses(case):
    _, change = case
    args = dict(gradient=quad_grad, data=0.3 * np.random.default_rng(1).standard_normal((90, 3)),
                ball=LpBall(2.0, 1.0, np.zeros(3)), seed=SEED, noise_seed=SECRET, w_init=None,
                config=ref.ProxConfig(n_rounds=3, weak_convexity=0.5,
                                      solver=ref.ASCConfig(epsilon=1.0, delta=1e-5, lipschitz=2.0, n_steps=5)))
    args.update(change)

    def run(module):
        kw = dict(args)
        return lambda: module.prox_guided_psmd(kw.pop("gradient"), kw.pop("data"), kw.pop("ball"), kw.pop("config"),
                                               **kw)

    with np.errstate(over="ignore"):  # the overflow case: the refusal is compared, not the warning
        want = _refusal(run(ref))
        assert want is not None
        assert _refusal(run(fast)) == want


BAD_ASC = [
    ("gradient not callable", dict(gradient=None)),
    ("an l_inf ball", dict(ball=LpBall(float("inf"), 1.0, np.zeros(3)))),
    ("a ProxConfig", dict(config=ref.ProxConfig(n_rounds=1, weak_convexity=0.0, beta=1.0,
                                                solver=ref.ASCConfig(epsilon=1.0, delta=1e-5, lipschitz=1.0)))),
    ("centre outside W", dict(center=np.full(3, 2.0))),
    ("negative beta", dict(beta=-1.0)),
    ("mu zero", dict(mu=0.0)),
    ("mu not finite", dict(mu=float("nan"))),
    ("noise seed of a bad type", dict(noise_seed="secret")),
    ("gradient of the wrong shape", dict(gradient=lambda w, z: np.zeros((3, 1)))),
]


@pytest.mark.parametrize("case", BAD_ASC, ids=[c[0] for c in BAD_ASC])
def test_asc_dp_gd_refuses_what_the_reference_refuses(case):
    _, change = case
    args = dict(gradient=quad_grad, data=np.zeros((20, 3)), ball=LpBall(2.0, 1.0, np.zeros(3)),
                config=ref.ASCConfig(epsilon=1.0, delta=1e-5, lipschitz=2.0, n_steps=4), center=np.zeros(3),
                beta=1.0, mu=1.0, noise_seed=SECRET)
    args.update(change)

    def run(module):
        kw = dict(args)
        return lambda: module.asc_dp_gd(kw.pop("gradient"), kw.pop("data"), kw.pop("ball"), kw.pop("config"), **kw)

    want = _refusal(run(ref))
    assert want is not None
    assert _refusal(run(fast)) == want


def test_the_twin_reexports_the_references_types():
    """Results built by either backend are the same types (the ledgers and the runner accept both)."""
    for name in ("ASCConfig", "ASCTrace", "ASCDebugTrace", "ASCResult", "ProxConfig", "ProxPublicTrace", "ProxResult",
                 "calibrated_noise_std", "zcdp_budget"):
        assert getattr(fast, name) is getattr(ref, name)
    assert set(ref.__all__) == set(fast.__all__)
