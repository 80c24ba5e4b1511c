"""Tests of reference.accounting.pld_exact: the exact privacy-profile oracle.

Expected values come from closed forms (reference.accounting.gaussian, Balle–Wang 2018), from independent
quadratures of the defining integral ∫ (p − e^ε q)_+ written here from the densities, from the amplification bound
of Balle, Barthe & Gaboardi 2018, and from dp_accounting's PLD (an independent check, not an expected value).
"""

from __future__ import annotations

import mpmath
import pytest

from reference.accounting import pld_exact as P
from reference.accounting.errors import AccountingError
from reference.accounting.gaussian import gaussian_delta, gaussian_epsilon
from reference.precision import working_precision

DPS = 40


def rel(a, b):
    return abs(a - b) / abs(b)


# ---- independent one-step oracle: ∫ (p(x) − e^ε q(x))_+ dx from the densities ------------------------------------


def _mixture_density(components, sigma):
    return lambda x: mpmath.fsum(w * mpmath.npdf(x, m, sigma) for w, m in components)


def _direct_delta(p, q, epsilon, guess):
    """∫ (p − e^ε q)_+ over the side of the root of log p − log q = ε where p > e^ε q (found by findroot here)."""
    g = lambda x: mpmath.log(p(x)) - mpmath.log(q(x)) - epsilon  # noqa: E731
    x0 = mpmath.findroot(g, guess)
    integrand = lambda x: p(x) - mpmath.exp(epsilon) * q(x)  # noqa: E731
    side = integrand(x0 + 1)
    if side > 0:
        return mpmath.quad(integrand, [x0, x0 + 5, mpmath.inf])
    return mpmath.quad(integrand, [-mpmath.inf, x0 - 5, x0])


# ---- Gaussian: one step and T-fold against the closed form --------------------------------------------------------


@pytest.mark.parametrize("z, eps", [(1.0, 1.0), (0.5, 20.0), (3.0, 0.1), (1.5, 0.0)])
def test_gaussian_one_step_matches_closed_form(z, eps):
    with working_precision(DPS):
        mu = 1 / mpmath.mpf(z)
        exact = gaussian_delta(eps, mu)
        for pair in (
            P.LossPair.gaussian(z),
            P.LossPair.poisson_gaussian_add(z, 1.0),
            P.LossPair.poisson_gaussian_replace_one(z, 1.0),  # q = 1: N(−1/2) vs N(1/2), distance 1
        ):
            assert rel(pair.delta(eps), exact) < 1e-25, pair
        assert rel(P.poisson_gaussian_delta(eps, z, 1.0), exact) < 1e-25
        assert rel(P.gaussian_profile_delta(eps, z), exact) < 1e-25


def test_gaussian_two_fold_quadrature_matches_closed_form():
    with working_precision(DPS):
        z, eps = 1.5, 1.0
        value, err = P.composed_delta_quadrature(P.LossPair.gaussian(z), eps, 2)
        exact = gaussian_delta(eps, mpmath.sqrt(2) / z)
        assert rel(value, exact) < 1e-25
        assert err < 1e-25 * exact


@pytest.mark.parametrize("steps", [2, 5, 8])
def test_gaussian_t_fold_bracket_contains_closed_form(steps):
    with working_precision(DPS):
        z, eps = 2.0, 0.5
        comp = P.DiscretisedComposition(P.LossPair.gaussian(z), steps, loss_step=2**-6, tail_mass=1e-30)
        lo, hi = comp.delta_bounds(eps)
        exact = P.gaussian_profile_delta(eps, z, steps)
        assert lo <= exact <= hi
        assert (hi - lo) / exact < 0.1  # the bracket is informative, not only valid


# ---- Poisson-subsampled Gaussian ----------------------------------------------------------------------------------


@pytest.mark.parametrize("z, q, eps", [(1.0, 0.1, 0.5), (2.0, 0.01, 0.1), (0.8, 0.3, 3.0), (1.0, 1e-4, 1e-3)])
def test_remove_direction_attains_amplification_bound_and_add_stays_below(z, q, eps):
    with working_precision(DPS):
        eps_prime = mpmath.log1p(mpmath.expm1(eps) / q)
        bound = q * gaussian_delta(eps_prime, 1 / mpmath.mpf(z))  # Balle–Barthe–Gaboardi 2018
        remove = P.LossPair.poisson_gaussian_remove(z, q).delta(eps)
        add = P.LossPair.poisson_gaussian_add(z, q).delta(eps)
        replace = P.LossPair.poisson_gaussian_replace_one(z, q).delta(eps)
        assert rel(remove, bound) < 1e-25  # the remove direction is the bound itself (tail computation, not reused)
        assert 0 <= add <= bound * (1 + mpmath.mpf(10) ** -30)
        assert 0 <= replace <= bound * (1 + mpmath.mpf(10) ** -30)  # both mixture components within distance 1
        assert P.poisson_gaussian_delta(eps, z, q) == max(remove, add)


@pytest.mark.parametrize("name", ["remove", "add", "replace"])
def test_one_step_matches_direct_quadrature(name):
    z, q, eps = 1.0, 0.2, 0.1
    with working_precision(30):
        s = mpmath.mpf(z)
        mix0 = _mixture_density([(1 - mpmath.mpf(q), 0), (mpmath.mpf(q), 1)], s)
        base = _mixture_density([(1, 0)], s)
        if name == "remove":
            p, qd, pair = mix0, base, P.LossPair.poisson_gaussian_remove(z, q)
        elif name == "add":
            p, qd, pair = base, mix0, P.LossPair.poisson_gaussian_add(z, q)
        else:
            half = mpmath.mpf(1) / 2
            p = _mixture_density([(1 - mpmath.mpf(q), 0), (mpmath.mpf(q), -half)], s)
            qd = _mixture_density([(1 - mpmath.mpf(q), 0), (mpmath.mpf(q), half)], s)
            pair = P.LossPair.poisson_gaussian_replace_one(z, q)
        expected = _direct_delta(p, qd, eps, 0.0)
        assert rel(pair.delta(eps), expected) < 1e-20
        assert rel(P.LossPair.poisson_gaussian_replace_one(z, q).delta(eps), P.replace_one_delta(eps, z, q)) == 0


def test_replace_one_loss_is_strictly_decreasing_and_odd():
    with working_precision(30):
        s, q = mpmath.mpf(1), mpmath.mpf("0.25")  # exact in binary, like the float passed below
        half = mpmath.mpf(1) / 2
        p = _mixture_density([(1 - q, 0), (q, -half)], s)
        qd = _mixture_density([(1 - q, 0), (q, half)], s)
        xs = [mpmath.mpf(k) / 4 for k in range(-40, 41)]
        losses = [mpmath.log(p(x) / qd(x)) for x in xs]
        assert all(a > b for a, b in zip(losses, losses[1:]))
        assert all(abs(a + b) < 1e-25 for a, b in zip(losses, reversed(losses)))
        pair = P.LossPair.poisson_gaussian_replace_one(1.0, 0.25)
        assert all(abs(pair.loss(x) - l) < 1e-25 for x, l in zip(xs, losses))


def test_sampled_without_replacement_is_the_mixture_pair_with_gamma():
    with working_precision(DPS):
        a = P.sampled_without_replacement_gaussian_delta(0.3, 1.2, 1000, 100)
        b = P.replace_one_delta(0.3, 1.2, mpmath.mpf(1) / 10)
        assert rel(a, b) < 1e-35


def test_two_fold_subsampled_quadrature_inside_certified_bracket():
    with working_precision(30):
        pair = P.LossPair.poisson_gaussian_remove(1.0, 0.1)
        value, err = P.composed_delta_quadrature(pair, 0.5, 2)
        assert err < 1e-20 * value
        lo, hi = P.DiscretisedComposition(pair, 2, loss_step=2**-6, tail_mass=1e-25).delta_bounds(0.5)
        assert lo <= value <= hi
        # two steps are no better than one at the same ε, and no worse than the one-step bound composed basically
        one = pair.delta(0.5)
        assert one < value


def test_add_direction_vanishes_beyond_its_support():
    with working_precision(DPS):
        q = 0.1
        top = -mpmath.log1p(-mpmath.mpf(q))
        assert P.LossPair.poisson_gaussian_add(1.0, q).delta(top * (1 + mpmath.mpf(10) ** -30)) == 0
        assert P.LossPair.poisson_gaussian_add(1.0, q).delta(top * (1 - mpmath.mpf(10) ** -3)) > 0


def test_agrees_with_dp_accounting_pld():
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    z, q, eps = 1.0, 0.1, 0.5
    theirs = pld.from_gaussian_mechanism(
        z, sampling_prob=q, value_discretization_interval=1e-4, pessimistic_estimate=True
    ).get_delta_for_epsilon(eps)
    with working_precision(DPS):
        ours = P.poisson_gaussian_delta(eps, z, q)
    # pessimistic: at or above the exact value up to float64 rounding; close (connect-the-dots error is O(h²))
    assert theirs >= float(ours) * (1 - 1e-12)
    assert theirs <= float(ours) * (1 + 1e-6)


# ---- Laplace -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("b, d, eps", [(1.0, 1.0, 0.3), (0.5, 2.0, 1.0), (2.0, 1.0, 0.49), (1.0, 1.0, 1.5)])
def test_laplace_closed_form_against_quadrature(b, d, eps):
    with working_precision(30):
        b_, d_, e_ = mpmath.mpf(b), mpmath.mpf(d), mpmath.mpf(eps)
        p = lambda x: mpmath.exp(-abs(x) / b_) / (2 * b_)  # noqa: E731
        qd = lambda x: mpmath.exp(-abs(x - d_) / b_) / (2 * b_)  # noqa: E731
        integrand = lambda x: max(p(x) - mpmath.exp(e_) * qd(x), 0)  # noqa: E731
        cut = (d_ - b_ * e_) / 2
        points = sorted({mpmath.mpf(0), d_, min(max(cut, 0), d_)})
        expected = mpmath.quad(integrand, [-mpmath.inf, *points, mpmath.inf])
        closed = P.laplace_delta(eps, b, d)
        assert abs(closed - expected) < 1e-25
        assert abs(P.LossPair.laplace(b, d).delta(eps) - closed) < 1e-25


def test_laplace_t_fold_bracket_contains_quadrature():
    with working_precision(30):
        b, eps = 2.0, 0.3  # λ = 1/2
        pair = P.LossPair.laplace(b)
        lam = mpmath.mpf(1) / 2

        def one(level):  # closed form at any real level
            if level >= lam:
                return mpmath.mpf(0)
            if level < -lam:
                return -mpmath.expm1(level)
            return -mpmath.expm1((level - lam) / 2)

        # δ_2(ε) = E_{x∼Lap(0,b)}[δ_1(ε − L(x))], L linear on [0, 1] and constant outside
        f = lambda x: mpmath.exp(-abs(x) / b) / (2 * b) * one(eps - (abs(x - 1) - abs(x)) / b)  # noqa: E731
        kinks = sorted({mpmath.mpf(0), mpmath.mpf(1), *[(1 - b * (eps - c)) / 2 for c in (-lam, lam)]})
        kinks = [k for k in kinks if 0 <= k <= 1]
        expected = mpmath.quad(f, [-mpmath.inf, *kinks, mpmath.inf])
        lo, hi = P.DiscretisedComposition(pair, 2, loss_step=2**-8).delta_bounds(eps)
        assert lo <= expected <= hi
        assert (hi - lo) / expected < 0.05


# ---- ε(δ) ----------------------------------------------------------------------------------------------------------


def test_epsilon_interval_gaussian_contains_exact_and_is_narrow():
    with working_precision(DPS):
        z, delta, tol = 1.0, mpmath.mpf("1e-5"), mpmath.mpf("1e-20")
        lo, hi = P.profile_epsilon_interval(P.LossPair.gaussian(z), delta, tol)
        exact = gaussian_epsilon(delta, 1 / mpmath.mpf(z))  # rounded up by at most 4·2^{-prec} relative
        assert lo <= exact and exact - hi < 1e-35
        assert hi - lo <= tol


def test_epsilon_interval_subsampled_never_overshoots():
    with working_precision(DPS):
        pairs = P.poisson_gaussian_pairs(1.0, 0.01)
        delta = mpmath.mpf("1e-5")
        lo, hi = P.profile_epsilon_interval(pairs, delta, 1e-12)
        assert P.profile_delta(pairs, hi) <= delta
        assert lo == 0 or P.profile_delta(pairs, lo) > delta
        assert 0 < hi - lo <= 1e-12


def test_epsilon_interval_from_t_fold_bracket_contains_exact_gaussian():
    with working_precision(DPS):
        z, steps, delta = 2.0, 4, mpmath.mpf("1e-3")
        comp = P.DiscretisedComposition(P.LossPair.gaussian(z), steps, loss_step=2**-6, tail_mass=1e-30)
        lo, hi = P.epsilon_interval(comp.delta_bounds, delta, 1e-6)
        exact = gaussian_epsilon(delta, mpmath.sqrt(steps) / z)
        assert lo <= exact <= hi


# ---- validation ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: P.LossPair.poisson_gaussian_remove(-1.0, 0.1), "noise_multiplier"),
        (lambda: P.LossPair.poisson_gaussian_add(1.0, 1.5), "sampling_probability"),
        (lambda: P.LossPair.poisson_gaussian_replace_one(1.0, float("nan")), "sampling_probability"),
        (lambda: P.poisson_gaussian_delta(float("inf"), 1.0, 0.1), "epsilon"),
        (lambda: P.poisson_gaussian_delta(-0.5, 1.0, 0.1), "epsilon"),
        (lambda: P.poisson_gaussian_delta(0.5, 1.0, 0.1, direction="both"), "direction"),
        (lambda: P.laplace_delta(1.0, 0.0), "scale"),
        (lambda: P.laplace_delta(1.0, 1.0, -2.0), "sensitivity"),
        (lambda: P.sampled_without_replacement_gaussian_delta(1.0, 1.0, 10, 11), "batch_size"),
        (lambda: P.composed_delta_quadrature(P.LossPair.gaussian(1.0), 1.0, 3), "steps"),
        (lambda: P.DiscretisedComposition(P.LossPair.gaussian(1.0), 0), "steps"),
        (lambda: P.DiscretisedComposition(P.LossPair.gaussian(1.0), 2, loss_step=0.0), "loss_step"),
        (lambda: P.DiscretisedComposition(P.LossPair.gaussian(0.01), 2, loss_step=1e-6), "loss_step"),
        (lambda: P.DiscretisedComposition(P.LossPair.gaussian(1.0), 2, tail_mass=0.0), "tail_mass"),
        (lambda: P.profile_epsilon_interval(P.LossPair.gaussian(1.0), 1.0), "delta"),
        (lambda: P.profile_epsilon_interval(P.LossPair.gaussian(1.0), 1e-5, tolerance=-1), "tolerance"),
    ],
)
def test_validation_names_the_parameter(call, word):
    with pytest.raises((ValueError, TypeError), match=word):
        call()


def test_too_fine_tolerance_is_refused():
    with working_precision(20):
        with pytest.raises(AccountingError, match="tolerance"):
            P.profile_epsilon_interval(P.LossPair.gaussian(1.0), 1e-5, tolerance=1e-40)
