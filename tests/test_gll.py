"""Tests for reference.gll: bgm21 Definition 2 losses, Moreau envelopes (Lemma 3), Algorithm 3's bisection (Lemma 4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from reference import gll
from reference.gll import (
    AbsoluteLoss,
    HingeLoss,
    HuberLoss,
    LogisticLoss,
    bisection_steps,
    moreau_envelope,
    moreau_glm_gradient,
    moreau_gradient,
    moreau_prox,
    moreau_prox_bisection,
)

LOSSES = [
    pytest.param(AbsoluteLoss(2.0), id="absolute"),
    pytest.param(HingeLoss(1.5), id="hinge"),
    pytest.param(HuberLoss(0.3, 2.0), id="huber"),
    pytest.param(LogisticLoss(1.25), id="logistic"),
]
CLOSED = [p for p in LOSSES if p.values[0].has_closed_form]
BETAS = [0.5, 3.0, 40.0]


def _grid(loss, beta):
    """Margins u with labels y, including every kink of ℓ and of ℓ_β."""
    y = np.array([-1.0, 1.0]) if loss.binary_labels else np.array([-0.7, 0.0, 2.0])
    base = np.linspace(-4.0, 4.0, 161)
    specials = [0.0, 1.0, -1.0, 1.0 - loss.lipschitz / beta, -(1.0 - loss.lipschitz / beta)]
    specials += [yy + k * loss.lipschitz / beta for yy in y for k in (-1, 0, 1)]
    specials += [yy + k * (getattr(loss, "delta", 0.0) + loss.lipschitz / beta) for yy in y for k in (-1, 1)]
    u = np.concatenate([base, np.array(specials)])
    U, Y = np.meshgrid(u, y, indexing="ij")
    return U.ravel(), Y.ravel()


def _envelope_by_scipy(loss, u, y, beta):
    r = loss.lipschitz / beta
    res = minimize_scalar(
        lambda v: float(loss.value(v, y)) + 0.5 * beta * (v - u) ** 2,
        bounds=(u - 2 * r, u + 2 * r),  # the prox may sit on the edge of [u − r, u + r]
        method="bounded",
        options={"xatol": 1e-12},
    )
    return res.fun, res.x


@pytest.mark.parametrize("loss", CLOSED)
@pytest.mark.parametrize("beta", BETAS)
def test_closed_forms_agree_with_bisection(loss, beta):
    u, y = _grid(loss, beta)
    for fn in (moreau_prox, moreau_envelope, moreau_gradient):
        closed = fn(u, y, loss, beta, method="closed_form")
        bisected = fn(u, y, loss, beta, method="bisection")
        scale = 1.0 + np.abs(closed)
        assert np.max(np.abs(closed - bisected) / scale) < 1e-12, fn.__name__


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("beta", BETAS)
def test_envelope_against_minimize_scalar(loss, beta):
    u, y = _grid(loss, beta)
    env = moreau_envelope(u, y, loss, beta)
    prox = moreau_prox(u, y, loss, beta)
    for k in range(0, u.shape[0], 7):
        fun, x = _envelope_by_scipy(loss, u[k], y[k], beta)
        assert env[k] <= fun + 1e-12  # ours is the minimum: never above scipy's value
        # scipy's bounded Brent stops at a relative x-tolerance of about 1.5e-8, so on a kink its value is only
        # accurate to about L0·1e-8: two-sided agreement at 1e-7, one-sided (ours is never above) at 1e-12
        assert env[k] == pytest.approx(fun, abs=1e-7)
        assert prox[k] == pytest.approx(x, abs=1e-5)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("beta", BETAS)
def test_gradient_is_beta_times_u_minus_prox_and_matches_finite_differences(loss, beta):
    u, y = _grid(loss, beta)
    g = moreau_gradient(u, y, loss, beta)
    assert np.allclose(g, beta * (u - moreau_prox(u, y, loss, beta)), atol=1e-12, rtol=0)
    h = 1e-6
    fd = (moreau_envelope(u + h, y, loss, beta) - moreau_envelope(u - h, y, loss, beta)) / (2 * h)
    assert np.max(np.abs(fd - g)) < 1e-5 * (1 + beta)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("beta", BETAS)
def test_lipschitz_constants_and_lemma3_on_grids(loss, beta):
    L0 = loss.lipschitz
    u, y = _grid(loss, beta)
    order = np.lexsort((u, y))
    u, y = u[order], y[order]
    same = y[1:] == y[:-1]
    du = np.diff(u)[same]
    ok = du > 0
    value = loss.value(u, y)
    assert np.all(np.abs(loss.subgradient(u, y)) <= L0)
    assert np.all(np.abs(np.diff(value)[same][ok]) <= L0 * du[ok] * (1 + 1e-12) + 1e-15)
    g = moreau_gradient(u, y, loss, beta)
    env = moreau_envelope(u, y, loss, beta)
    assert np.all(np.abs(g) <= L0 * (1 + 1e-12))  # Lemma 3 (tight form): ℓ_β is L0-Lipschitz
    assert np.all(np.abs(np.diff(g)[same][ok]) <= beta * du[ok] * (1 + 1e-9) + 1e-12)  # β-smooth
    gap = value - env
    assert np.all(gap >= -1e-12) and np.all(gap <= L0**2 / (2 * beta) + 1e-12)  # 0 ≤ ℓ − ℓ_β ≤ L0²/(2β)
    if math.isfinite(loss.smoothness):
        dg = np.abs(np.diff(loss.subgradient(u, y))[same][ok])
        assert np.all(dg <= loss.smoothness * du[ok] * (1 + 1e-9) + 1e-12)


def test_absolute_envelope_is_huber_and_hinge_closed_form_values():
    u = np.array([-3.0, -0.1, 0.0, 0.2, 5.0])
    L0, beta = 2.0, 4.0
    want = np.where(np.abs(u) <= L0 / beta, beta / 2 * u**2, L0 * np.abs(u) - L0**2 / (2 * beta))
    assert np.allclose(moreau_envelope(u, 0.0, AbsoluteLoss(L0), beta), want, rtol=1e-15)
    assert np.allclose(moreau_envelope(u, 0.0, AbsoluteLoss(L0), beta),
                       HuberLoss(L0 / beta, L0).value(u, 0.0), rtol=1e-15)
    s = np.array([2.0, 1.0, 0.9, 0.0, -3.0])
    h = HingeLoss(1.0)
    assert np.allclose(moreau_envelope(s, 1.0, h, 2.0), [0.0, 0.0, 0.01, 0.75, 3.75], rtol=1e-14)
    assert np.allclose(moreau_gradient(-s, -1.0, h, 2.0), [0.0, 0.0, 0.2, 1.0, 1.0], rtol=1e-14)


def test_bisection_accuracy_and_bracket():
    rng = np.random.default_rng(1)
    for loss in (AbsoluteLoss(1.7), HingeLoss(0.4), LogisticLoss(3.0), HuberLoss(0.05, 1.0)):
        beta = 2.5
        y = rng.choice([-1.0, 1.0], 300) if loss.binary_labels else rng.normal(size=300)
        u = rng.normal(scale=3, size=300)
        exact = moreau_prox(u, y, loss, beta, steps=200)
        for K in (0, 1, 5, 20):
            v = moreau_prox_bisection(u, y, loss, beta, K)
            assert np.all(np.abs(v - exact) <= loss.lipschitz / beta * 2.0**-K * (1 + 1e-9) + 1e-14)
            assert np.all(np.abs(v - u) <= loss.lipschitz / beta * (1 + 1e-15))


def test_bisection_steps_is_the_least_accurate_count():
    rng = np.random.default_rng(2)
    assert bisection_steps(1.0, 1.0, 1.0) == 0 and bisection_steps(1.0, 1.0, 10.0) == 0
    assert bisection_steps(1.0, 1.0, 0.125) == 3 and bisection_steps(1.0, 1.0, 0.1) == 4
    for _ in range(500):
        L0, R, a = 10.0 ** rng.uniform(-3, 3, 3)
        K = bisection_steps(L0, R, a)
        assert L0 * R * 2.0**-K <= a
        assert K == 0 or L0 * R * 2.0 ** -(K - 1) > a


def test_algorithm3_oracle_error_and_norm_bound():
    rng = np.random.default_rng(3)
    d, m, R, alpha = 5, 400, 2.0, 1e-3
    for loss in (AbsoluteLoss(1.3), HingeLoss(0.8), HuberLoss(0.2, 1.0)):
        beta = 7.0
        X = rng.normal(size=(m, d))
        X *= (R * rng.uniform(0, 1, m) / np.linalg.norm(X, axis=1))[:, None]
        y = rng.choice([-1.0, 1.0], m) if loss.binary_labels else rng.normal(size=m)
        w = rng.normal(size=d)
        # put some margins exactly on kinks
        X[0] = 0.0
        rows = moreau_glm_gradient(w, X, y, loss, beta, alpha, R)
        exact = moreau_gradient(X @ w, y, loss, beta)[:, None] * X
        assert rows.shape == (m, d)
        assert np.all(np.linalg.norm(rows - exact, axis=1) <= alpha)
        assert np.all(np.linalg.norm(rows, axis=1) <= loss.lipschitz * np.linalg.norm(X, axis=1) * (1 + 1e-12))


def test_vectorisation_broadcasts_and_scalars_stay_scalar():
    loss = AbsoluteLoss()
    out = moreau_envelope(np.zeros((3, 1)), np.arange(4.0), loss, 1.0)
    assert out.shape == (3, 4)
    assert np.ndim(moreau_gradient(0.3, 1.0, LogisticLoss(), 2.0)) == 0
    assert np.ndim(loss.value(1.0, 0.0)) == 0


class _NonConvex(gll.GLL):
    def __init__(self):
        super().__init__(1.0)
        self.convex = False

    def _value(self, u, y):
        return np.sin(u)

    def _subgradient(self, u, y):
        return np.cos(u)


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda: moreau_envelope(0.0, 0.0, AbsoluteLoss(), 0.0), ValueError),
        (lambda: moreau_envelope(0.0, 0.0, AbsoluteLoss(), -1.0), ValueError),
        (lambda: moreau_envelope(0.0, 0.0, AbsoluteLoss(), float("nan")), ValueError),
        (lambda: moreau_envelope(0.0, 0.0, AbsoluteLoss(), float("inf")), ValueError),
        (lambda: moreau_envelope(0.0, 0.0, AbsoluteLoss(), True), TypeError),
        (lambda: moreau_envelope(float("nan"), 0.0, AbsoluteLoss(), 1.0), ValueError),
        (lambda: moreau_envelope([0.0, 1.0], [0.0, 1.0, 2.0], AbsoluteLoss(), 1.0), ValueError),
        (lambda: moreau_envelope(np.array([True]), 0.0, AbsoluteLoss(), 1.0), TypeError),
        (lambda: moreau_envelope("1", 0.0, AbsoluteLoss(), 1.0), TypeError),
        (lambda: moreau_envelope(0.0, 0.5, HingeLoss(), 1.0), ValueError),
        (lambda: LogisticLoss().value(0.0, 0.0), ValueError),
        (lambda: moreau_envelope(0.0, 1.0, LogisticLoss(), 1.0, method="closed_form"), ValueError),
        (lambda: moreau_envelope(0.0, 1.0, LogisticLoss(), 1.0, method="newton"), ValueError),
        (lambda: moreau_envelope(0.0, 1.0, "hinge", 1.0), TypeError),
        (lambda: moreau_envelope(0.0, 1.0, _NonConvex(), 1.0), ValueError),
        (lambda: moreau_prox_bisection(0.0, 0.0, AbsoluteLoss(), 1.0, -1), ValueError),
        (lambda: moreau_prox_bisection(0.0, 0.0, AbsoluteLoss(), 1.0, 2.0), TypeError),
        (lambda: moreau_prox_bisection(1.7e308, 0.0, AbsoluteLoss(), 1e-309, 3), ValueError),
        (lambda: AbsoluteLoss(0.0), ValueError),
        (lambda: AbsoluteLoss(float("inf")), ValueError),
        (lambda: HuberLoss(delta=0.0), ValueError),
        (lambda: bisection_steps(1.0, 1.0, 0.0), ValueError),
        (lambda: bisection_steps(1e300, 1e300, 1e-300), ValueError),
        (lambda: bisection_steps(-1.0, 1.0, 1.0), ValueError),
        (lambda: moreau_glm_gradient(np.zeros(3), np.zeros((2, 2)), np.zeros(2), AbsoluteLoss(), 1.0, 0.1, 1.0), ValueError),
        (lambda: moreau_glm_gradient(np.zeros(2), np.zeros((2, 2)), np.zeros(3), AbsoluteLoss(), 1.0, 0.1, 1.0), ValueError),
        (lambda: moreau_glm_gradient(np.zeros(2), np.zeros((2, 2)), np.zeros(2), AbsoluteLoss(), 1.0, 0.0, 1.0), ValueError),
        (lambda: moreau_glm_gradient(np.full(2, 1e300), np.full((2, 2), 1e300), np.zeros(2), AbsoluteLoss(), 1.0, 0.1, 1.0), ValueError),
    ],
)
def test_hostile_inputs(call, exc):
    with pytest.raises(exc):
        call()
