"""bgm21 audited through the algorithms (empirical_dp/bgm21.py; docs/audits.md, bgm21): one report-noisy-min step,
a run of Algorithm 1 and of Algorithm 6 on worst-case pairs, and the planted bug of the printed σ̂ (bgm21.E10).

Ground truth is computed here independently of the code under test: selection probabilities by mpmath quadrature
of the Laplace integrals, the Kairouz–Oh–Viswanath δ of two pure steps by its finite sum, the Gaussian-DP profile by
its closed form (Balle–Wang Thm 8) in mpmath, the noise scales from the paper's printed formulas, the densities by
scipy. The simulations are checked draw for draw against ``poly_sfw`` / ``noisy_sfw`` on several secret seeds."""

import math

import mpmath
import numpy as np
import pytest
from scipy.stats import norm

from empirical_dp import bgm21 as audit_bgm21
from empirical_dp.audit import audit
from empirical_dp.registry import BGM21_BUILTIN_NAMES, SCENARIOS, Deferred, ScenarioRegistry
from reference.algorithms.bgm21_accounting import Bgm21Ledger
from reference.algorithms.bgm21_sfw import noisy_sfw, poly_sfw
from reference.selection import laplace_noisy_argmin

QUICK_CONFIDENCE = 1 - 1e-6
RNM, POLY, NOISY = BGM21_BUILTIN_NAMES
BUG = "bgm21-noisy-sfw-printed-sigma-hat"


@pytest.fixture(scope="module")
def poly_setup():
    return audit_bgm21.poly_sfw_audit_setup(**audit_bgm21.POLY_SFW_SETTINGS)


@pytest.fixture(scope="module")
def noisy_setup():
    return audit_bgm21.noisy_sfw_audit_setup(**audit_bgm21.NOISY_SFW_SETTINGS)


@pytest.fixture(scope="module")
def bug_setup():
    return audit_bgm21.noisy_sfw_audit_setup(**audit_bgm21.PRINTED_SIGMA_HAT_SETTINGS, sigma_hat_eta="printed")


@pytest.fixture(scope="module")
def twin_setup():
    return audit_bgm21.noisy_sfw_audit_setup(**audit_bgm21.PRINTED_SIGMA_HAT_SETTINGS, sigma_hat_eta="prev")


# ---------------------------------------------------------------------------------------------------
# Independent ground truth (mpmath)


def _laplace_win_probability(gap, rivals, scale):
    """P(c + U_0 < min_k (c + gap + U_k)) for iid Lap(s): ∫ f(x) S(x − gap)^rivals dx, f the density, S the survival
    of Lap(s); mpmath quadrature split at the kinks x = 0 and x = gap."""
    with mpmath.workdps(30):
        s, g = mpmath.mpf(scale), mpmath.mpf(gap)

        def survival(t):
            return mpmath.exp(-t / s) / 2 if t >= 0 else 1 - mpmath.exp(t / s) / 2

        def integrand(x):
            return mpmath.exp(-abs(x) / s) / (2 * s) * survival(x - g) ** rivals

        cuts = sorted({mpmath.mpf(0), g})
        return mpmath.quad(integrand, [-mpmath.inf, *cuts, mpmath.inf])


def _one_out_law(gap, vertices, scale):
    """The selection law when the first of J candidates scores ``gap`` below the J − 1 others (which tie)."""
    first = _laplace_win_probability(gap, vertices - 1, scale)
    return [first] + [(1 - first) / (vertices - 1)] * (vertices - 1)


def _gdp_delta(epsilon, mu):
    """δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle–Wang Thm 8), mpmath at 40 digits."""
    with mpmath.workdps(40):
        e, m = mpmath.mpf(epsilon), mpmath.mpf(mu)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


def _kov_two_step_delta(step, epsilon):
    """The exact δ of two ε0-DP steps at ε (Kairouz–Oh–Viswanath Thm 3.3, k = 2): (1 + e^ε0)^−2 Σ_i C(2, i)
    [e^{ε0(2−i)} − e^ε e^{ε0 i}]_+."""
    with mpmath.workdps(40):
        e0, e = mpmath.mpf(step), mpmath.mpf(epsilon)
        total = sum(mpmath.binomial(2, i) * max(mpmath.exp(e0 * (2 - i)) - mpmath.exp(e) * mpmath.exp(e0 * i), 0)
                    for i in range(3))
        return total / (1 + mpmath.exp(e0)) ** 2


def _printed_noise(batch, epsilon, delta):
    """c = 4·√log(1/δ)/(bε) (§4.2, d = 1, p = 2) in mpmath."""
    return 4 * mpmath.sqrt(mpmath.log(1 / mpmath.mpf(delta))) / (batch * mpmath.mpf(epsilon))


# ---------------------------------------------------------------------------------------------------
# 1. One report-noisy-min step


def test_report_noisy_min_claim_and_exact_epsilon_against_mpmath():
    """Scores equal on D, the first of J = 8 raised by 2Δ_c = 2 on D′ (s = 1): the claim is 2Δ_c/s = 2; the exact ε is
    the log-ratio of the first vertex's selection probabilities, 1/J against the mpmath integral (0.9993 of the
    claim)."""
    scenario = SCENARIOS[RNM]
    assert scenario.claim_type == "epsilon_delta" and scenario.delta == 0.0 and scenario.claimed_epsilon == 2.0
    raised = _one_out_law(-2, 8, 1)  # the first vertex scores 2 ABOVE the others: a negative gap
    exact = max(float(mpmath.log(mpmath.mpf(1) / 8 / raised[0])), float(mpmath.log(8 * raised[1])))
    assert scenario.tight_epsilon == pytest.approx(exact, rel=1e-9)
    assert 0.999 * 2 < scenario.tight_epsilon < 2
    outputs = np.arange(8, dtype=np.float64)[:, None]
    expected = [float(mpmath.log(8 * p)) for p in raised]
    np.testing.assert_allclose(scenario.log_likelihood_ratio(outputs), expected, rtol=1e-9)


def test_report_noisy_min_sampler_is_laplace_noisy_argmin_draw_for_draw():
    scenario = SCENARIOS[RNM]
    for which in (0, 1):
        outputs = scenario.sample(np.random.default_rng(5), 200, which)[:, 0]
        rng = np.random.default_rng(5)
        scores = np.zeros(8)
        scores[0] = 2.0 * which
        expected = [laplace_noisy_argmin(scores, 1.0, rng) for _ in range(200)]
        assert outputs.tolist() == expected


def test_report_noisy_min_consistent_at_the_quick_budget():
    """200 000 trials per dataset at 1 − 1e-6: consistent, and ε_lb > 1 = Δ_c/s, the ε a monotone (one-sided) reading of
    Dwork–Roth Claim 3.9 would claim: the factor 2 is needed."""
    result = audit(SCENARIOS[RNM], audit_bgm21.QUICK_TRIALS, seed=0, confidence=QUICK_CONFIDENCE)
    assert result.verdict == "consistent" and result.decided_by == "clopper_pearson_epsilon"
    assert 1.0 < result.epsilon_lb <= 2.0


# ---------------------------------------------------------------------------------------------------
# 2. A run of Algorithm 1


def test_poly_sfw_pair_attains_the_traces_sensitivity(poly_setup):
    """The record of B_1^0 moves ∇_1^0 by G_0 = 2L0/b in ℓ∞ with centred score change ½·D·G_0 (D = 2), ∇_1^1 by
    (1 − η_{1,1})·G_0 through the recursion, and nothing in round 0; on D the scores of step (1, 0) all tie."""
    b = poly_setup.config.batch_size
    shift = poly_setup.estimates[0] - poly_setup.estimates[1]
    assert np.all(shift[0] == 0)
    np.testing.assert_allclose(np.abs(shift[1]), 2 / b, rtol=1e-12)
    np.testing.assert_allclose(np.abs(shift[2]), (1 - 1 / math.sqrt(2)) * 2 / b, rtol=1e-12)
    assert poly_setup.score_sensitivity == pytest.approx(0.5 * 2 * 2 / b, rel=1e-15)
    assert 0.5 * (shift[1].max() - shift[1].min()) == pytest.approx(poly_setup.score_sensitivity, rel=1e-12)
    assert np.ptp(poly_setup.scores[0, 1]) < 1e-15 and poly_setup.affected_steps == 2
    D, D2 = poly_setup.datasets
    assert np.flatnonzero(np.any(D != D2, axis=1)).tolist() == [poly_setup.differing_index]


def test_poly_sfw_claim_against_independent_composition(poly_setup):
    """ε_0 = 2·(½·D·G_0)/s_1 with the printed s_1 = 2D(L0 + L1·D)·2·√log(1/δ)/(bε) is ε/(2√log(1/δ)); the claim is the
    smallest of 2ε_0 (basic) and the exact two-step ε (Kairouz–Oh–Viswanath, solved here from its finite sum), and
    ``Bgm21Ledger`` states the same."""
    eps, delta, b = 4, mpmath.mpf("1e-5"), 16
    s1 = 2 * 2 * 1 * 2 * mpmath.sqrt(mpmath.log(1 / delta)) / (b * eps)
    assert poly_setup.scales[1] == pytest.approx(float(s1), rel=1e-14)
    step = 2 * (mpmath.mpf(2) / b) / s1
    assert step == pytest.approx(eps / (2 * mpmath.sqrt(mpmath.log(1 / delta))), rel=1e-14)
    assert poly_setup.step_epsilon == pytest.approx(float(step), rel=1e-14)
    kov = mpmath.findroot(lambda e: _kov_two_step_delta(step, e) - delta, (mpmath.mpf(0), 2 * step), solver="bisect")
    assert poly_setup.claimed_epsilon == pytest.approx(float(min(2 * step, kov)), rel=1e-9)
    ledger = Bgm21Ledger()
    for label in ("(1, 0)", "(1, 1)"):
        ledger.record_report_noisy_min(poly_setup.score_sensitivity, poly_setup.scales[1], ["B_1^0"], label)
    assert float(ledger.certified(10, delta).epsilon) == pytest.approx(poly_setup.claimed_epsilon, rel=1e-12)


def test_poly_sfw_laws_and_exact_epsilon_against_mpmath(poly_setup):
    """Each step's selection law equals the mpmath integral (on D′ the first vertex scores 4L0/b, resp.
    (1 − η)·4L0/b, below the others), and the tight ε at δ solves the hockey-stick equation of the two product laws
    (computed here in mpmath)."""
    b = poly_setup.config.batch_size
    gaps = [4 / b, (1 - 1 / math.sqrt(2)) * 4 / b]
    laws_prime = []
    for step, gap in zip((1, 2), gaps):
        law = _one_out_law(gap, 8, poly_setup.scales[step])
        np.testing.assert_allclose(poly_setup.laws[1, step], [float(p) for p in law], rtol=1e-9)
        np.testing.assert_allclose(poly_setup.laws[0, step], 1 / 8, rtol=1e-9)
        laws_prime.append(law)
    joint = [p * q for p in laws_prime[0] for q in laws_prime[1]]
    uniform = mpmath.mpf(1) / 64

    def hockey(eps):
        e = mpmath.exp(eps)
        return max(sum(max(q - e * uniform, 0) for q in joint), sum(max(uniform - e * q, 0) for q in joint))

    tight = poly_setup.tight_epsilon
    assert float(hockey(tight)) == pytest.approx(1e-5, rel=1e-6)
    assert hockey(tight * 0.999) > 1e-5 and tight < poly_setup.claimed_epsilon


@pytest.mark.parametrize("which", [0, 1])
def test_poly_sfw_simulation_equals_the_algorithm(poly_setup, which):
    """Same secret seed, same selected vertices (and the iterates are those vertices)."""
    for seed in (3, 11, 2**70 + 5):
        run = poly_sfw(audit_bgm21.LinearGradient(), poly_setup.datasets[which], poly_setup.polytope,
                       poly_setup.config, seed=0, noise_seed=seed)
        noise = audit_bgm21.poly_sfw_secret_laplace(seed, poly_setup)
        simulated = audit_bgm21.poly_sfw_simulated_selections(poly_setup, which, noise[None])[0]
        assert run.trace.selected.tolist() == simulated.tolist()
        np.testing.assert_array_equal(run.iterates[1:], poly_setup.polytope.vertices[simulated[:2]])


def test_poly_sfw_sampler_frequencies_follow_the_exact_law(poly_setup):
    """Chi-square of the 64 outcomes of round 1 in 10⁵ draws per dataset against the exact product law, at level 1e-6
    (deterministic seed); round 0's vertex is uniform on both."""
    from scipy.stats import chisquare

    scenario = SCENARIOS[POLY]
    laws = poly_setup.round_laws()
    for which in (0, 1):
        x = scenario.sample(np.random.default_rng(100 + which), 100_000, which).astype(np.int64)
        counts = np.bincount(x[:, 1] * 8 + x[:, 2], minlength=64)
        assert chisquare(counts, 100_000 * laws[which]).pvalue > 1e-6
        assert chisquare(np.bincount(x[:, 0], minlength=8)).pvalue > 1e-6


def test_poly_sfw_consistent_at_the_quick_budget(poly_setup):
    result = audit(SCENARIOS[POLY], audit_bgm21.QUICK_TRIALS, seed=0, confidence=QUICK_CONFIDENCE)
    assert result.verdict == "consistent" and result.verdict_bounds == ("clopper_pearson_epsilon",)
    assert 0.5 * poly_setup.tight_epsilon < result.epsilon_lb <= poly_setup.tight_epsilon


# ---------------------------------------------------------------------------------------------------
# 3. A run of Algorithm 6


@pytest.mark.parametrize("which", [0, 1])
def test_noisy_sfw_simulation_equals_the_algorithm(noisy_setup, twin_setup, bug_setup, which):
    """Same secret seed, same published ∇̃ (1e-12) and iterates, for the corrected and the printed σ̂; the path is the
    designed one (w_1^0 = −λ, w_1^1 = +λ)."""
    for setup in (noisy_setup, twin_setup, bug_setup):
        for seed in (1, 2, 2**70 + 9):
            run = noisy_sfw(audit_bgm21.AffineGradient(), setup.datasets[which], setup.ball, setup.config, seed=0,
                            noise_seed=seed, w_init=np.array([setup.radius]))
            simulated = audit_bgm21.noisy_sfw_simulated_releases(
                setup, which, audit_bgm21.noisy_sfw_secret_normals(seed)[None])[0]
            np.testing.assert_allclose(run.trace.noisy_estimates[:, 0], simulated, rtol=0, atol=1e-12)
            np.testing.assert_array_equal(run.iterates[:, 0], [setup.radius, -setup.radius, setup.radius])


def test_noisy_sfw_claim_against_the_printed_scales(noisy_setup):
    """σ_{1,1} = 2cL0, σ̂_{1,1} = 2cL1·D·η_{1,0} (c printed), m = b/2: the composed μ of the two releases is
    √((2L0/(mσ))² + (2L1D/(mσ̂))²) = √2·ε/(2√log(1/δ)); ``Bgm21Ledger`` certifies the same μ; the claimed ε is the
    ε at which the mpmath GDP profile reaches δ."""
    b, eps, delta = 64, 3, mpmath.mpf("1e-5")
    c = _printed_noise(b, eps, delta)
    L0, L1, D, m = 1, 2, 1, b // 2
    sigma, sigma_hat = 2 * c * L0, 2 * c * L1 * D
    mu = mpmath.sqrt((2 * L0 / (m * sigma)) ** 2 + (2 * L1 * D / (m * sigma_hat)) ** 2)
    assert mu == pytest.approx(mpmath.sqrt(2) * eps / (2 * mpmath.sqrt(mpmath.log(1 / delta))), rel=1e-25)
    assert noisy_setup.sigma == pytest.approx(float(sigma), rel=1e-14)
    assert noisy_setup.sigma_hat == pytest.approx(float(sigma_hat), rel=1e-14)
    scenario = SCENARIOS[NOISY]
    assert scenario.claim_type == "gdp" and scenario.claimed_mu == pytest.approx(float(mu), rel=1e-14)
    assert float(audit_bgm21.ledger_mu(noisy_setup)) == pytest.approx(float(mu), rel=1e-14)
    assert float(_gdp_delta(scenario.claimed_epsilon, scenario.claimed_mu)) == pytest.approx(1e-5, rel=1e-8)


def test_noisy_sfw_published_mu_and_score_are_exact(noisy_setup):
    """∇̃_1^1 = (1 − η)(∇̃_1^0 + Δ̃) + η(fresh + N): one Gaussian, shift (1 − η)·2L1D/m + η·2L0/m over
    √((1 − η)²σ̂² + η²σ²) (0.9956 of the composed μ at L1·D = 2L0); the score is the log-ratio of scipy's densities
    given the earlier releases."""
    eta, m = 1 / math.sqrt(2), 32
    shift = (1 - eta) * 2 * 2 / m + eta * 2 / m
    std = math.hypot((1 - eta) * noisy_setup.sigma_hat, eta * noisy_setup.sigma)
    assert noisy_setup.mu == pytest.approx(shift / std, rel=1e-12)
    a1, a2 = 1 - eta, eta  # in units of 2L0/(m·c·(t + 1)): shifts 2L1D = 2·2, 2L0 = 2; scales σ̂ ∝ L1·D = 2, σ ∝ 1
    ratio = (a1 * 4 + a2 * 2) / math.sqrt((a1 * 2) ** 2 + a2**2) / math.sqrt(2**2 + 2**2)
    assert noisy_setup.mu / noisy_setup.claimed_mu == pytest.approx(ratio, rel=1e-12)
    assert ratio == pytest.approx(0.9956, abs=1e-4)
    assert noisy_setup.failure_probability < 1e-40
    scenario = SCENARIOS[NOISY]
    x = scenario.sample(np.random.default_rng(2), 50, 1)
    means = [(1 - eta) * (x[:, 1] + (1 - 2 * k / m) * 2) + eta * (1 - 2 * k / m) for k in (0, 1)]
    expected = norm.logpdf(x[:, 2], means[1], std) - norm.logpdf(x[:, 2], means[0], std)
    np.testing.assert_allclose(scenario.log_likelihood_ratio(x), expected, rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="outputs must have shape"):
        scenario.log_likelihood_ratio(np.zeros((2, 2)))


def test_noisy_sfw_sample_moments(noisy_setup):
    """On the designed path ∇̃_1^1 has mean (1 − η)(∇̃_1^0 + s̄·D) + η·s̄·λ (s̄ the batch's mean slope) and variance
    (1 − η)²σ̂² + η²σ², and ∇̃_1^0 has mean −L0 and variance σ_{r,0}²: within 6 standard errors at 10⁵ draws."""
    scenario = SCENARIOS[NOISY]
    eta, m, n = 1 / math.sqrt(2), 32, 100_000
    std = math.hypot((1 - eta) * noisy_setup.sigma_hat, eta * noisy_setup.sigma)
    for which in (0, 1):
        x = scenario.sample(np.random.default_rng(7 + which), n, which)
        slope = 2 * (1 - 2 * which / m)
        residual = x[:, 2] - ((1 - eta) * (x[:, 1] + slope * 1.0) + eta * slope * 0.5)
        assert abs(residual.mean()) <= 6 * std / math.sqrt(n)
        assert abs(residual.var() / std**2 - 1) <= 6 * math.sqrt(2 / n)
        assert abs(x[:, 1].mean() + 1) <= 6 * noisy_setup.sigma0 / math.sqrt(n)
        assert abs(x[:, 1].var() / noisy_setup.sigma0**2 - 1) <= 6 * math.sqrt(2 / n)


def test_noisy_sfw_consistent_and_tight_at_the_quick_budget(noisy_setup):
    """Consistent at 1 − 1e-6; the Gaussian-DP ε_lb reaches 0.9 of the exact ε (seed 0: 2.425 of 2.548, 0.952)."""
    scenario = SCENARIOS[NOISY]
    result = audit(scenario, audit_bgm21.QUICK_TRIALS, seed=0, confidence=QUICK_CONFIDENCE)
    assert result.verdict == "consistent" and result.margin <= 0
    assert 0.9 * scenario.tight_epsilon <= result.gdp_epsilon_lb <= scenario.claimed_epsilon


# ---------------------------------------------------------------------------------------------------
# 4. The planted bug (bgm21.E10)


def test_printed_sigma_hat_claim_and_exact_epsilon(bug_setup, twin_setup):
    """Theorem 10 claims (5, 0.1). Printed σ̂ = 2c·L1·D·η_{1,1}: the published μ is 2.599, whose exact δ at ε = 5 is 1.72
    times 0.1 (mpmath profile); the twin's corrected σ̂ gives 2.320 (exact ε 4.88 < 5), and its composed μ (the
    calibration's) certifies (5, 0.1) too."""
    c = _printed_noise(64, 5, "0.1")
    eta = 1 / mpmath.sqrt(2)
    m = 32
    for setup, eta_hat, expected_mu in ((bug_setup, eta, 2.599), (twin_setup, 1, 2.320)):
        sigma, sigma_hat = 2 * c, 2 * c * 2 * 1 * eta_hat
        assert setup.sigma_hat == pytest.approx(float(sigma_hat), rel=1e-14)
        mu = ((1 - eta) * 4 / m + eta * 2 / m) / mpmath.sqrt(((1 - eta) * sigma_hat) ** 2 + (eta * sigma) ** 2)
        assert setup.mu == pytest.approx(float(mu), rel=1e-12) and setup.mu == pytest.approx(expected_mu, abs=1e-3)
    assert _gdp_delta(5, bug_setup.mu) / mpmath.mpf("0.1") == pytest.approx(1.723, abs=1e-3)
    assert _gdp_delta(5, twin_setup.mu) < 0.1 and _gdp_delta(5, twin_setup.claimed_mu) < 0.1
    bug, twin = audit_bgm21.printed_sigma_hat_scenario(), audit_bgm21.printed_sigma_hat_scenario(buggy=False)
    assert bug.claim_type == twin.claim_type == "epsilon_delta" and bug.claimed_epsilon == twin.claimed_epsilon == 5
    assert bug.delta == twin.delta == 0.1
    assert float(_gdp_delta(bug.tight_epsilon, bug_setup.mu)) == pytest.approx(0.1, rel=1e-8)
    assert bug.tight_epsilon == pytest.approx(5.9105, abs=1e-4)
    exact_eps, exact_delta = audit_bgm21.exact_printed_sigma_hat_epsilon(bug_setup)
    assert float(exact_eps) == pytest.approx(bug.tight_epsilon, rel=1e-9)
    assert float(exact_delta) == pytest.approx(float(_gdp_delta(5, bug_setup.mu)), rel=1e-9)


def test_printed_sigma_hat_caught_at_its_budget_and_twin_consistent():
    """Only Clopper–Pearson may refute the (ε, δ) claim; at the budget (10⁶ per dataset) and the quick confidence it
    does (expected 5.52 > 5 from the best threshold's rounded expected counts), and the twin is consistent."""
    name = BUG
    factory, attack, budget = audit_bgm21.BGM21_PLANTED[name]
    assert budget == audit_bgm21.PRINTED_SIGMA_HAT_BUDGET == 1_000_000
    scenario = factory()
    bug = audit(scenario, budget, seed=0, attack=attack(scenario), confidence=QUICK_CONFIDENCE)
    assert bug.verdict == "violation" and bug.verdict_bounds == ("clopper_pearson_epsilon",)
    assert bug.decided_by == "clopper_pearson_epsilon" and bug.margin == bug.epsilon_lb - 5 > 0.3
    factory, attack, budget = audit_bgm21.BGM21_TWINS[name]
    scenario = factory()
    twin = audit(scenario, budget, seed=0, attack=attack(scenario), confidence=QUICK_CONFIDENCE)
    assert twin.verdict == "consistent" and twin.epsilon_lb <= 5


def test_discrete_privacy_of_randomized_response():
    """Randomized response with P = (e^a, 1)/(1 + e^a) against its mirror: exact ε = a at δ = 0, and at δ > 0 the ε with
    (e^a − e^ε)/(1 + e^a) = δ."""
    a = 1.3
    p = np.array([math.exp(a), 1.0]) / (1 + math.exp(a))
    assert audit_bgm21.discrete_tight_epsilon(p, p[::-1], 0.0) == pytest.approx(a, rel=1e-13)
    delta = 0.05
    expected = math.log(math.exp(a) - delta * (1 + math.exp(a)))
    assert audit_bgm21.discrete_tight_epsilon(p, p[::-1], delta) == pytest.approx(expected, rel=1e-10)
    assert audit_bgm21.discrete_privacy_delta(expected, p, p[::-1]) == pytest.approx(delta, rel=1e-10)
    assert audit_bgm21.discrete_tight_epsilon([0.5, 0.5, 0.0], [0.5, 0.25, 0.25], 0.0) == math.inf


# ---------------------------------------------------------------------------------------------------
# Registry, quick budget, validation


def test_registered_deferred_and_quick_budget():
    from dpref.audit import QUICK_TRIALS, QUICK_TRIALS_BY_SCENARIO

    assert set(BGM21_BUILTIN_NAMES) == set(audit_bgm21.BGM21_BUILTINS) and set(BGM21_BUILTIN_NAMES) <= set(SCENARIOS)
    fresh = ScenarioRegistry({"x": Deferred(audit_bgm21.BGM21_BUILTINS[POLY])})
    assert fresh["x"].name == POLY
    for name in BGM21_BUILTIN_NAMES:
        assert QUICK_TRIALS_BY_SCENARIO.get(name, QUICK_TRIALS) == audit_bgm21.QUICK_TRIALS
        assert len(name) <= 38 and SCENARIOS[name].name == name
    assert len(BUG) <= 38 and len(f"{BUG}-twin") <= 38


@pytest.mark.parametrize("call, parameter", [
    (lambda: audit_bgm21.report_noisy_min_scenario(vertices=1), "vertices"),
    (lambda: audit_bgm21.report_noisy_min_scenario(scale=0), "scale"),
    (lambda: audit_bgm21.poly_sfw_audit_setup(batch_size=1), "batch_size"),
    (lambda: audit_bgm21.noisy_sfw_audit_setup(batch_size=63), "batch_size"),
    (lambda: audit_bgm21.noisy_sfw_audit_setup(radius=-1.0), "radius"),
    (lambda: audit_bgm21.noisy_sfw_audit_setup(sigma_hat_eta="paper"), "sigma_hat_eta"),
    (lambda: audit_bgm21.discrete_tight_epsilon([0.5, 0.5], [0.5], 0.1), "same shape"),
])
def test_validation_errors_name_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()
