"""Certified PLD intervals (reference.accounting.pld) against closed forms and the mpmath oracle (pld_exact)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from reference.accounting import events as ev
from reference.accounting import pld, pld_exact
from reference.accounting.gaussian import gaussian_delta, gaussian_epsilon


def _exact_eps(delta, mu):
    with mpmath.workdps(30):
        return float(gaussian_epsilon(delta, mu))


def _exact_delta(eps, mu):
    with mpmath.workdps(30):
        return float(gaussian_delta(eps, mu))


# ---------------------------------------------------------------------------------------------------
# containment of exact values


@pytest.mark.parametrize("z,T", [(1.0, 1), (2.0, 4), (4.0, 16), (0.8, 3), (10.0, 1000), (30.0, 10_000)])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_gaussian_interval_contains_exact_epsilon(z, T, delta):
    pair = pld.gaussian_pld(1e-3, noise_multiplier=z).compose(T)
    lo, up = pair.epsilon_interval(delta)
    exact = _exact_eps(delta, math.sqrt(T) / z)  # T-fold Gaussian = Gaussian with μ = √T/z (Dong–Roth–Su Cor 3.3)
    assert 0 <= lo <= exact <= up
    assert (up - lo) <= 2e-3 * exact  # second-order discretisation: far narrower than T·h


@pytest.mark.parametrize("eps", [0.0, 0.5, 2.0, 6.0])
def test_gaussian_delta_interval_contains_exact(eps):
    lo, up = pld.gaussian_pld(1e-3, noise_multiplier=1.5).compose(5).delta_interval(eps)
    exact = _exact_delta(eps, math.sqrt(5) / 1.5)
    assert lo <= exact <= up
    assert up - lo <= 1e-3 * exact


def _one_step_exact(pair, eps):
    with mpmath.workdps(30):
        return float(pair.delta(eps))


@pytest.mark.parametrize("sigma,q", [(1.0, 0.01), (0.7, 0.1), (2.0, 0.3), (1.0, 0.5), (0.3, 0.05)])
@pytest.mark.parametrize("eps", [0.0, 0.01, 0.5, 2.0])
def test_subsampled_gaussian_one_step_both_directions(sigma, q, eps):
    pair = pld.poisson_gaussian_pld(1e-3, noise_multiplier=sigma, sampling_probability=q)
    lo, up = pair.delta_interval(eps)
    with mpmath.workdps(30):
        exact = float(pld_exact.poisson_gaussian_delta(eps, sigma, q))
    assert lo <= exact <= up
    lo, up, _ = pld.delta_interval(pair, eps, tolerance=1e-3, max_refinements=2)  # from h ≈ spread/16
    assert lo <= exact <= up
    if exact > 1e-8:  # below, the absolute rounding bounds (~1e-13) dominate the width
        assert up - lo <= 1e-3 * up
    # each direction alone is bracketed too (the max must not hide a wrong direction)
    for (pess, opt), exact_pair in zip(
        pair.composed(),
        (pld_exact.LossPair.poisson_gaussian_remove(sigma, q), pld_exact.LossPair.poisson_gaussian_add(sigma, q)),
    ):
        value = _one_step_exact(exact_pair, eps)
        assert opt.delta_bound(eps) <= value <= pess.delta_bound(eps)


@pytest.mark.parametrize("sigma,gamma,eps", [(1.0, 0.01, 0.0), (0.8, 0.1, 0.3), (2.0, 0.5, 0.1), (1.0, 1.0, 1.0)])
def test_replace_one_mixture_one_step(sigma, gamma, eps):
    lo, up = pld.replace_one_gaussian_pld(1e-3, noise_multiplier=sigma, sampling_probability=gamma).delta_interval(eps)
    exact = _one_step_exact(pld_exact.LossPair.poisson_gaussian_replace_one(sigma, gamma), eps)
    assert lo <= exact <= up
    pair = pld.replace_one_gaussian_pld(noise_multiplier=sigma, sampling_probability=gamma)
    lo, up, _ = pld.delta_interval(pair, eps, tolerance=1e-3)
    assert lo <= exact <= up and up - lo <= 1e-3 * up


def test_sampling_without_replacement_is_the_mixture_with_gamma_m_over_n():
    event = ev.SampledWithoutReplacementEvent(200, 10, ev.GaussianEvent(0.9))
    lo, up = pld.pld_from_event(event, 1e-3).delta_interval(0.2)
    with mpmath.workdps(30):
        exact = float(pld_exact.sampled_without_replacement_gaussian_delta(0.2, 0.9, 200, 10))
    assert lo <= exact <= up


@pytest.mark.parametrize("b", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("eps", [0.0, 0.1, 0.3])
def test_laplace_one_step_and_pure_dp(b, eps):
    pair = pld.laplace_pld(1e-3, noise_multiplier=b)
    lo, up = pair.delta_interval(eps)
    with mpmath.workdps(30):
        exact = float(pld_exact.laplace_delta(eps, b))
    assert lo <= exact <= up
    assert pair.delta_interval(1 / b + 0.01)[1] <= 1e-12  # ε₀-DP: δ vanishes beyond ε₀


@pytest.mark.parametrize("sigma,q", [(1.0, 0.1), (0.8, 0.05)])
def test_two_steps_contain_quadrature(sigma, q):
    eps = 0.3
    lo, up = pld.poisson_gaussian_pld(1e-3, noise_multiplier=sigma, sampling_probability=q).compose(2).delta_interval(eps)
    with mpmath.workdps(20):
        exact = max(
            float(pld_exact.composed_delta_quadrature(p, eps, 2)[0])
            for p in (pld_exact.LossPair.poisson_gaussian_remove(sigma, q), pld_exact.LossPair.poisson_gaussian_add(sigma, q))
        )
    assert lo <= exact <= up


def test_consistent_with_the_proven_bracket_at_8_steps():
    sigma, q, eps, steps = 1.0, 0.2, 0.5, 8
    lo, up = pld.poisson_gaussian_pld(1e-3, noise_multiplier=sigma, sampling_probability=q).compose(steps).delta_interval(eps)
    with mpmath.workdps(20):
        b_lo, b_hi = pld_exact.composed_delta_bounds(pld_exact.LossPair.poisson_gaussian_remove(sigma, q), eps, steps,
                                                     loss_step=4e-3)
    # both contain the exact value, so they intersect; ours is far narrower
    assert lo <= float(b_hi) and float(b_lo) <= up
    assert up - lo < float(b_hi - b_lo)


def test_events_q_one_tree_and_heterogeneous():
    lo, up = pld.poisson_gaussian_pld(2e-3, noise_multiplier=1.0, sampling_probability=1.0).epsilon_interval(1e-5)
    assert lo <= _exact_eps(1e-5, 1.0) <= up
    lo, up = pld.pld_from_event(ev.SelfComposedEvent(ev.GaussianEvent(2.0), 4), 2e-3).epsilon_interval(1e-5)
    assert lo <= _exact_eps(1e-5, 1.0) <= up
    # tree: 7 leaves, 2 restarts → 2·(⌊log2 7⌋ + 1) = 6 nodes per record: Gaussian with μ = √6/z
    lo, up = pld.pld_from_event(ev.TreeAggregationEvent(2.0, 7, 2), 2e-3).epsilon_interval(1e-5)
    assert lo <= _exact_eps(1e-5, math.sqrt(6) / 2.0) <= up
    # heterogeneous: z = 1 then z = 2 → μ = √(1 + 1/4)
    mixed = ev.ComposedEvent([ev.GaussianEvent(1.0), ev.GaussianEvent(2.0)])
    lo, up = pld.pld_from_event(mixed, 2e-3).epsilon_interval(1e-4)
    assert lo <= _exact_eps(1e-4, math.sqrt(1.25)) <= up
    with pytest.raises(ValueError, match="REPLACE_ONE"):
        pld.pld_from_event(ev.PoissonSampledEvent(0.1, ev.GaussianEvent(1.0)), relation="replace_one")
    with pytest.raises(NotImplementedError):
        pld.pld_from_event(ev.ZCDPEvent(0.1))


def test_reference_case_width_at_default_grid():
    """q = 0.01, σ = 1, T = 10⁴, δ = 1e-5: relative width ≤ 1e-3 at the default h = 1e-4 (measured ~1.1e-4)."""
    lo, up = pld.poisson_gaussian_pld(noise_multiplier=1.0, sampling_probability=0.01).compose(10_000).epsilon_interval(1e-5)
    assert (up - lo) / up <= 1e-3
    # the refinement returns the grid it used and a width within the tolerance
    lo2, up2, h = pld.epsilon_interval(pld.poisson_gaussian_pld(noise_multiplier=1.0, sampling_probability=0.01)
                                       .compose(10_000), 1e-5, tolerance=1e-3)
    assert (up2 - lo2) / up2 <= 1e-3 and h <= pld.DEFAULT_GRID_WIDTH


# ---------------------------------------------------------------------------------------------------
# the pieces: masses, conservation, FFT bound, window


def _mp_laws(loss):
    """mpmath P(L ≤ t), Q(L ≤ t) for the loss laws implemented here (independent closed forms)."""
    if isinstance(loss, pld.PoissonGaussianPld):
        s, q = mpmath.mpf(loss.sigma), mpmath.mpf(loss.q)

        def x_of(t):  # remove-direction preimage
            return s**2 * mpmath.log((mpmath.exp(t) - 1 + q) / q) + mpmath.mpf(1) / 2

        def mix(x):
            return (1 - q) * mpmath.ncdf(x / s) + q * mpmath.ncdf((x - 1) / s)

        if loss.direction == "remove":
            def below(t, law):
                if t <= mpmath.log(1 - q):
                    return mpmath.mpf(0)
                x = x_of(t)
                return mix(x) if law == "p" else mpmath.ncdf(x / s)
        else:
            def below(t, law):
                if -t <= mpmath.log(1 - q):
                    return mpmath.mpf(1)
                x = x_of(-t)  # L ≤ t ⟺ X ≥ x(−t)
                return 1 - mpmath.ncdf(x / s) if law == "p" else 1 - mix(x)
        return below
    if isinstance(loss, pld.ReplaceOneMixturePld):
        pair = pld_exact.LossPair.poisson_gaussian_replace_one(loss.sigma, loss.gamma)

        def below(t, law):
            return 1 - pair._mass_above(law, mpmath.mpf(t))
        return below
    raise TypeError(loss)


@pytest.mark.parametrize("loss", [
    pld.PoissonGaussianPld(1.0, 0.01, "remove"), pld.PoissonGaussianPld(1.0, 0.01, "add"),
    pld.PoissonGaussianPld(0.5, 0.2, "remove"), pld.PoissonGaussianPld(0.5, 0.2, "add"),
    pld.ReplaceOneMixturePld(1.0, 0.05), pld.ReplaceOneMixturePld(0.7, 0.5),
])
@pytest.mark.parametrize("law", ["p", "q"])
def test_cell_masses_within_the_assumed_margin(loss, law):
    """The stated assumption MASS_REL_MARGIN: every float64 cell mass within relative 1e-9 of mpmath."""
    h = 1e-3
    k_lo, k_hi = pld._grid_range(loss, h, 1e-12)
    ks = np.unique(np.linspace(k_lo, k_hi - 1, 60).astype(int))
    a, b = ks * h, (ks + 1) * h
    got = np.exp(pld._log_interval(loss, law, a, b))
    below = _mp_laws(loss)
    with mpmath.workdps(40):
        for ai, bi, g in zip(a, b, got):
            true = below(mpmath.mpf(float(bi)), law) - below(mpmath.mpf(float(ai)), law)
            if true < mpmath.mpf(10) ** -250:
                continue
            assert abs(g - float(true)) <= pld.MASS_REL_MARGIN * float(true)


def test_connect_the_dots_keeps_both_masses():
    """The pessimistic split keeps the P-mass (Σ m + m_∞ = 1) and the Q-mass (Σ m e^{−l} = 1 − Q(L = −∞ part))."""
    for loss in (pld.PoissonGaussianPld(1.0, 0.01, "remove"), pld.GaussianPld(0.7), pld.ReplaceOneMixturePld(1.0, 0.1)):
        pess, opt = pld.discretize(loss, 1e-3, 1e-18)
        l = pess.losses()
        assert math.fsum(pess.masses) + pess.inf_mass == pytest.approx(1.0, abs=3e-9)
        assert math.fsum(pess.masses * np.exp(-l)) == pytest.approx(1.0, abs=1e-8)
        assert math.fsum(opt.masses) <= 1.0 and opt.inf_mass == 0.0
        assert -1e-3 / 2 <= opt.shift <= 0.0


def test_fft_error_bound_holds_against_exact_convolution():
    rng = np.random.default_rng(0)
    masses = rng.random(300) ** 6
    masses /= masses.sum() * 1.0000001
    g = pld.GridPld(0.01, -40, masses, 0.0, 0.0, True)
    count = 7
    comp = pld.compose_grid([(g, count)])
    exact = np.array([1.0], dtype=np.longdouble)
    for _ in range(count):
        exact = np.convolve(exact, masses.astype(np.longdouble))
    ks = count * -40 + np.arange(exact.size)
    full = np.zeros(comp.masses.size, dtype=np.longdouble)
    k_first = round(comp.losses[0] / 0.01)
    inside = (ks >= k_first) & (ks < k_first + full.size)
    full[ks[inside] - k_first] = exact[inside]
    err = float(np.sum(np.abs(comp.masses - full)))
    assert err <= comp.fft_error + 1e-30
    assert comp.fft_error < 1e-11


def test_gaussian_factors_merge_into_one_exact_gaussian():
    pair = pld.gaussian_pld(noise_multiplier=2.0).compose(3).compose_with(pld.gaussian_pld(noise_multiplier=1.0))
    (loss, count), = pair.directions[0]
    assert count == 1 and loss.mu == pytest.approx(math.sqrt(3 / 4 + 1), rel=1e-15)
    (pess, opt), = pair.composed()
    assert pess.fft_error == 0.0 == opt.fft_error  # one factor used once: no transform


def test_window_outside_mass_is_bounded_and_small():
    comp = pld.poisson_gaussian_pld(noise_multiplier=1.0, sampling_probability=0.01).compose(1000).composed()
    for pess, opt in comp:
        assert pess.outside <= 2.01 * pld.WINDOW_TAIL and opt.outside <= 2.01 * pld.WINDOW_TAIL
        assert pess.inf_mass < 1e-13


def test_too_large_grid_is_refused_before_allocating_and_refinement_coarsens():
    import dataclasses

    pair = pld.poisson_gaussian_pld(1e-3, noise_multiplier=1.0, sampling_probability=0.5).compose(4)
    small = dataclasses.replace(pair, max_fft_size=1 << 12)
    with pytest.raises(pld.GridTooLarge, match="choose a larger h"):  # the window needs > 2^12 points at 1e-3
        small.epsilon_interval(1e-5)
    lo, up, h = pld.epsilon_interval(small, 1e-5, tolerance=1.0)
    ref_lo, ref_up = pair.epsilon_interval(1e-5)
    assert h > 1e-3 and lo <= ref_up and ref_lo <= up  # both contain the exact ε


def test_epsilon_infinite_when_mass_at_infinity_reaches_delta():
    pair = pld.gaussian_pld(1e-3, noise_multiplier=1.0, tail=1e-3)  # 1e-3 of P-mass sent to +∞ per step
    lo, up = pair.epsilon_interval(1e-4)
    assert up == math.inf and lo <= _exact_eps(1e-4, 1.0)


# ---------------------------------------------------------------------------------------------------
# the proof's load-bearing steps, broken on purpose


def test_swapped_sides_are_caught():
    pair = pld.gaussian_pld(1e-3, noise_multiplier=1.0).compose(9)
    (pess, opt), = pair.composed()
    exact = _exact_delta(1.0, 3.0)
    assert not opt.delta_bound(1.0) >= exact  # the optimistic side alone is below: swapping breaks the upper bound
    assert pess.delta_bound(1.0) >= exact


def test_plain_rounding_without_merging_drifts_by_order_T_h():
    """Why the optimistic side merges bins: rounding every loss down by up to h drifts by ~T·h/2."""
    loss = pld.PoissonGaussianPld(1.0, 0.01, "remove")
    h, steps = 1e-4, 10_000
    k_lo, k_hi = pld._grid_range(loss, h, 1e-18)
    t = np.arange(k_lo, k_hi + 1) * h
    masses = np.exp(pld._log_interval(loss, "p", t[:-1], t[1:]))  # mass of (t_j, t_{j+1}] at t_j: rounded down
    plain = pld.compose_grid([(pld.GridPld(h, k_lo, masses, 0.0, 0.0, False), steps)])
    merged = pld.compose_grid([(pld.discretize(loss, h, 1e-18)[1], steps)])
    assert merged.epsilon_bound(1e-5) - plain.epsilon_bound(1e-5) > 0.1


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: pld.gaussian_pld(-1.0, noise_multiplier=1.0), "h"),
        (lambda: pld.gaussian_pld(1e-3, noise_multiplier=float("nan")), "noise_multiplier"),
        (lambda: pld.poisson_gaussian_pld(1e-3, noise_multiplier=1.0, sampling_probability=1.5), "sampling_prob"),
        (lambda: pld.poisson_gaussian_pld(1e-3, noise_multiplier=1.0, sampling_probability=0.0), "sampling_prob"),
        (lambda: pld.poisson_gaussian_pld(1e-3, noise_multiplier=0.01, sampling_probability=0.1), "noise_multiplier"),
        (lambda: pld.gaussian_pld(1e-3, noise_multiplier=1.0).epsilon_interval(0.0), "delta"),
        (lambda: pld.gaussian_pld(1e-3, noise_multiplier=1.0).delta_interval(-1.0), "epsilon"),
        (lambda: pld.gaussian_pld(1e-3, noise_multiplier=1.0).compose(0), "count"),
        (lambda: pld.laplace_pld(1e-3, noise_multiplier=0.0), "noise_multiplier"),
        (lambda: pld.gaussian_pld(1e-3, noise_multiplier=1.0, tail=0.5), "tail"),
        (lambda: pld.epsilon_interval(pld.gaussian_pld(noise_multiplier=1.0), 1e-5, tolerance=0.0), "tolerance"),
        (lambda: pld.sampled_without_replacement_gaussian_pld(noise_multiplier=1.0, source_size=5, sample_size=6),
         "sample_size"),
    ],
)
def test_validation_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
