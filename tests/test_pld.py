"""Certified PLD intervals (reference.accounting.pld) against closed forms and independent computations."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from reference.accounting import events as ev
from reference.accounting import pld
from reference.accounting.gaussian import gaussian_delta, gaussian_epsilon


def _exact_eps(delta, mu):
    with mpmath.workdps(30):
        return float(gaussian_epsilon(delta, mu))


def _exact_delta(eps, mu):
    with mpmath.workdps(30):
        return float(gaussian_delta(eps, mu))


@pytest.mark.parametrize("z,T", [(1.0, 1), (2.0, 4), (4.0, 16), (0.8, 3)])
@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_gaussian_interval_contains_exact_epsilon(z, T, delta):
    pair = pld.gaussian_pld(2e-3, noise_multiplier=z)
    pair = pair.compose(T) if T > 1 else pair
    lo, up = pair.epsilon_interval(delta)
    exact = _exact_eps(delta, math.sqrt(T) / z)  # T-fold Gaussian = Gaussian with μ = √T/z (Dong–Roth–Su Cor 3.3)
    assert 0 <= lo <= exact <= up
    assert up - lo <= T * 2e-3 + 1e-3  # width ≈ T·h


@pytest.mark.parametrize("eps", [0.0, 0.5, 2.0])
def test_gaussian_delta_interval_contains_exact(eps):
    pair = pld.gaussian_pld(2e-3, noise_multiplier=1.5).compose(5)
    lo, up = pair.delta_interval(eps)
    assert lo <= _exact_delta(eps, math.sqrt(5) / 1.5) <= up


def test_width_shrinks_with_h():
    widths = []
    for h in (8e-3, 2e-3, 5e-4):
        lo, up = pld.gaussian_pld(h, noise_multiplier=1.0).compose(4).epsilon_interval(1e-5)
        assert lo <= _exact_eps(1e-5, 2.0) <= up
        widths.append(up - lo)
    assert widths[0] > widths[1] > widths[2]
    assert widths[2] < 0.25 * widths[0]


def test_swapped_sides_are_caught():
    pair = pld.gaussian_pld(1e-2, noise_multiplier=1.0).compose(4)
    (pess, opt), = pair.directions
    swapped = pld.PldPair([(opt, pess)], pair.tail)
    lo, up = swapped.epsilon_interval(1e-5)
    exact = _exact_eps(1e-5, 2.0)
    assert not (lo <= exact <= up)
    dlo, dup = swapped.delta_interval(1.0)
    assert not (dlo <= _exact_delta(1.0, 2.0) <= dup)


def test_dropping_pessimistic_tail_breaks_upper_bound():
    # μ = 2: L ~ N(2, 4). Truncating at the 1e-3 quantile leaves mass 1e-3 above l_hi ≈ 8.18, where (1 − e^{6−l}) ≈ 0.9.
    pess, opt = pld.discretize(pld.GaussianPld(2.0), 1e-3, tail=1e-3)
    exact = _exact_delta(6.0, 2.0)
    good = pld.PldPair([(pess, opt)])
    assert good.delta_interval(6.0)[1] >= exact
    bad_pess = pld.DiscretePld(pess.h, pess.offset, pess.masses, 0.0, True)  # tail mass dropped instead of at +∞
    bad = pld.PldPair([(bad_pess, opt)])
    assert bad.delta_interval(6.0)[1] < exact
    assert bad.epsilon_interval(exact)[1] < 6.0  # the "upper" ε falls below the exact ε(δ) = 6


def _subsampled_delta_one_step(eps, sigma, q):
    """max over add/remove of δ(ε) for one Poisson-subsampled Gaussian, from Φ in mpmath (independent formula)."""
    with mpmath.workdps(40):
        eps, s, q = mpmath.mpf(eps), mpmath.mpf(sigma), mpmath.mpf(q)
        ncdf = mpmath.ncdf

        def x_of(t):  # remove-loss preimage: log(1−q+q e^{(2x−1)/(2σ²)}) = t
            return s**2 * mpmath.log((mpmath.exp(t) - (1 - q)) / q) + mpmath.mpf(1) / 2

        # remove: P = mixture, Q = N(0); L > ε ⇔ x > x(ε)
        if eps > mpmath.log(1 - q):
            x = x_of(eps)
            p_tail = (1 - q) * ncdf(-x / s) + q * ncdf((1 - x) / s)
            rem = p_tail - mpmath.exp(eps) * ncdf(-x / s)
        else:
            rem = 1 - mpmath.exp(eps)
        # add: P = N(0), Q = mixture; L = −L_rem > ε ⇔ L_rem < −ε ⇔ x < x(−ε)
        if -eps > mpmath.log(1 - q):
            x = x_of(-eps)
            add = ncdf(x / s) - mpmath.exp(eps) * ((1 - q) * ncdf(x / s) + q * ncdf((x - 1) / s))
        else:
            add = mpmath.mpf(0)
        return float(max(rem, add))


@pytest.mark.parametrize("sigma,q", [(1.0, 0.01), (0.7, 0.2), (2.0, 0.5)])
@pytest.mark.parametrize("eps", [0.0, 0.05, 0.5, 1.5])
def test_subsampled_gaussian_one_step(sigma, q, eps):
    pair = pld.poisson_gaussian_pld(1e-3, noise_multiplier=sigma, sampling_probability=q)
    lo, up = pair.delta_interval(eps)
    exact = _subsampled_delta_one_step(eps, sigma, q)
    assert lo <= exact <= up
    assert up - lo <= 0.01 * max(exact, 1e-12) + 1e-12 or up - lo < 2e-3


def test_subsampled_gaussian_two_steps_quadrature():
    sigma, q, eps = 0.8, 0.3, 0.4
    pair = pld.poisson_gaussian_pld(1e-3, noise_multiplier=sigma, sampling_probability=q).compose(2)
    lo, up = pair.delta_interval(eps)
    with mpmath.workdps(20):
        s, qq = mpmath.mpf(sigma), mpmath.mpf(q)

        def rem_loss(x):
            return mpmath.log(1 - qq + qq * mpmath.exp((2 * x - 1) / (2 * s**2)))

        def density_mix(x):
            return (1 - qq) * mpmath.npdf(x, 0, s) + qq * mpmath.npdf(x, 1, s)

        # δ_2(ε) = E_{X1~P}[δ_1(ε − L(X1))], δ_1 at any real ε' (the one-step formula is valid for every ε')
        def one(e, direction):
            e = mpmath.mpf(e)
            if direction == "remove":
                if e <= mpmath.log(1 - qq):
                    return 1 - mpmath.exp(e)
                x = s**2 * mpmath.log((mpmath.exp(e) - (1 - qq)) / qq) + mpmath.mpf(1) / 2
                p_tail = (1 - qq) * mpmath.ncdf(-x / s) + qq * mpmath.ncdf((1 - x) / s)
                return p_tail - mpmath.exp(e) * mpmath.ncdf(-x / s)
            if -e <= mpmath.log(1 - qq):
                return mpmath.mpf(0)
            x = s**2 * mpmath.log((mpmath.exp(-e) - (1 - qq)) / qq) + mpmath.mpf(1) / 2
            return mpmath.ncdf(x / s) - mpmath.exp(e) * ((1 - qq) * mpmath.ncdf(x / s) + qq * mpmath.ncdf((x - 1) / s))

        rem = mpmath.quad(lambda x: density_mix(x) * one(eps - rem_loss(x), "remove"), [-12, 0, 1, 13])
        add = mpmath.quad(lambda x: mpmath.npdf(x, 0, s) * one(eps + rem_loss(x), "add"), [-12, 0, 1, 13])
        exact = float(max(rem, add))
    assert lo <= exact <= up


def test_q_one_is_gaussian_and_events():
    lo, up = pld.poisson_gaussian_pld(2e-3, noise_multiplier=1.0, sampling_probability=1.0).epsilon_interval(1e-5)
    assert lo <= _exact_eps(1e-5, 1.0) <= up
    pair = pld.pld_from_event(ev.SelfComposedEvent(ev.GaussianEvent(2.0), 4), 2e-3)
    lo, up = pair.epsilon_interval(1e-5)
    assert lo <= _exact_eps(1e-5, 1.0) <= up
    # tree: 7 leaves → ⌊log2 7⌋ + 1 = 3 nodes per record: Gaussian with μ = √3/z
    lo, up = pld.pld_from_event(ev.TreeAggregationEvent(2.0, 7), 2e-3).epsilon_interval(1e-5)
    assert lo <= _exact_eps(1e-5, math.sqrt(3) / 2.0) <= up
    # heterogeneous: z = 1 then z = 2 → μ = √(1 + 1/4)
    mixed = ev.ComposedEvent([ev.GaussianEvent(1.0), ev.GaussianEvent(2.0)])
    lo, up = pld.pld_from_event(mixed, 2e-3).epsilon_interval(1e-4)
    assert lo <= _exact_eps(1e-4, math.sqrt(1.25)) <= up


@pytest.mark.parametrize("b", [0.5, 1.0, 3.0])
def test_laplace_pure_dp(b):
    eps0 = 1 / b
    pair = pld.laplace_pld(1e-3, noise_multiplier=b)
    # Laplace is ε₀-DP and not better: δ(ε₀) = 0 and ε(δ) → ε₀ as δ → 0; δ(0) = TV = 1 − e^{−ε₀/2}
    lo, up = pair.delta_interval(0.0)
    assert lo <= 1 - math.exp(-eps0 / 2) <= up
    assert pair.delta_interval(eps0 + 0.01)[1] == pytest.approx(0.0, abs=1e-12)
    # the atom P(L = ε₀) = 1/2 alone gives δ(ε) ≥ (1 − e^{ε−ε₀})/2, so ε(δ) ∈ [ε₀ + log(1 − 2δ), ε₀]
    lo, up = pair.epsilon_interval(1e-6)
    assert lo <= eps0 and up >= eps0 + math.log1p(-2e-6)


def test_initial_masses_match_mpmath():
    loss = pld.PoissonGaussianPld(1.0, 0.01, "remove")
    pess, opt = pld.discretize(loss, 1e-2, tail=1e-12)
    ks = pess.offset + np.arange(pess.masses.size)
    with mpmath.workdps(40):
        s, q = mpmath.mpf(1), mpmath.mpf("0.01")

        def cdf_of_loss(t):
            if t <= mpmath.log(1 - q):
                return mpmath.mpf(0)
            x = s**2 * mpmath.log((mpmath.exp(t) - (1 - q)) / q) + mpmath.mpf(1) / 2
            return (1 - q) * mpmath.ncdf(x / s) + q * mpmath.ncdf((x - 1) / s)

        for i in range(1, pess.masses.size, max(1, pess.masses.size // 40)):
            k = int(ks[i])
            true = cdf_of_loss(mpmath.mpf(k) / 100) - cdf_of_loss(mpmath.mpf(k - 1) / 100)
            assert pess.masses[i] >= float(true) * (1 - 1e-14)
            assert abs(pess.masses[i] - float(true)) <= 2e-9 * float(true) + 1e-300


def test_fft_error_bound_holds():
    rng = np.random.default_rng(0)
    a = rng.random(3000) ** 8
    a /= a.sum()
    b = rng.random(2000) ** 8
    b /= b.sum()
    n = 1 << (a.size + b.size - 2).bit_length()
    fft = np.fft.irfft(np.fft.rfft(a, n) * np.fft.rfft(b, n), n)[: a.size + b.size - 1]
    direct = np.convolve(a.astype(np.longdouble), b.astype(np.longdouble))
    bound = pld.fft_convolution_error_bound(n, float(np.linalg.norm(a)), a.sum(), float(np.linalg.norm(b)), b.sum())
    assert float(np.max(np.abs(fft - direct))) <= bound
    assert bound < 1e-12


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: pld.gaussian_pld(-1.0, noise_multiplier=1.0), "h"),
        (lambda: pld.gaussian_pld(1e-3, noise_multiplier=float("nan")), "noise_multiplier"),
        (lambda: pld.poisson_gaussian_pld(1e-3, noise_multiplier=1.0, sampling_probability=1.5), "sampling_prob"),
        (lambda: pld.poisson_gaussian_pld(1e-3, noise_multiplier=1.0, sampling_probability=0.0), "sampling_prob"),
        (lambda: pld.gaussian_pld(1e-3, noise_multiplier=1.0).epsilon_interval(0.0), "delta"),
        (lambda: pld.gaussian_pld(1e-3, noise_multiplier=1.0).delta_interval(-1.0), "epsilon"),
        (lambda: pld.gaussian_pld(1e-3, noise_multiplier=1.0).compose(0), "count"),
        (lambda: pld.laplace_pld(1e-3, noise_multiplier=0.0), "noise_multiplier"),
        (lambda: pld.gaussian_pld(1e-3, noise_multiplier=1.0, tail=0.5), "tail"),
    ],
)
def test_validation_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
