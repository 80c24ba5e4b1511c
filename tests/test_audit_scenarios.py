"""Tests for the tree-prefix and zeroth-order audit scenarios (empirical_dp/scenarios.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal, norm

from empirical_dp.audit import audit
from empirical_dp.executors import run_shards
from empirical_dp.registry import SCENARIOS
from empirical_dp.scenarios import (
    tree_prefix_mu,
    tree_prefix_scenario,
    tree_prefix_shift,
    tree_release_matrix,
    zeroth_order_pair,
    zeroth_order_scenario,
)
from reference.fast.conversions import gaussian_epsilon, gaussian_mu
from reference.fast.mechanisms import tree_noise_all
from reference.estimators import per_sample_finite_differences as reference_finite_differences
from reference.mechanisms import fenwick_chain, participation_count, tree_aggregate
from reference.objectives import RidgeSum
from reference.rng import Streams, sample_sphere

TREE = SCENARIOS["tree"]
ZO = SCENARIOS["zeroth_order"]


# ---------------------------------------------------------------------------------------------------
# Tree: the μ identity (zo_o2nc Thm 4.3 exact version) and the release law


@pytest.mark.parametrize("steps", [1, 2, 3, 7, 8, 16, 33])
def test_tree_release_matrix_is_the_fenwick_indicator(steps):
    want = np.zeros((steps, steps))
    for t in range(1, steps + 1):
        for b in fenwick_chain(t):
            want[t - 1, b - 1] = 1.0
    np.testing.assert_array_equal(tree_release_matrix(steps), want)


@pytest.mark.parametrize("steps", [1, 2, 5, 8, 16, 31, 64])
def test_tree_mu_from_covariance_equals_sqrt_participation_count(steps):
    sigma = 1.7
    for leaf in range(1, steps + 1):
        # the Mahalanobis form, by an independent route: explicit inverse of the covariance R Rᵀ
        release = tree_release_matrix(steps)
        v = tree_prefix_shift(steps, leaf)
        np.testing.assert_array_equal(v, (np.arange(1, steps + 1) >= leaf).astype(float))
        mahalanobis = math.sqrt(v @ np.linalg.inv(release @ release.T) @ v) / sigma
        exact = math.sqrt(participation_count(leaf, steps)) / sigma
        assert mahalanobis == pytest.approx(exact, rel=1e-10)
        assert tree_prefix_mu(steps, sigma, leaf) == pytest.approx(exact, rel=1e-12)
    # worst case: q = 1 with ⌊log2 T⌋ + 1 nodes
    assert tree_prefix_mu(steps, sigma) == pytest.approx(math.sqrt(steps.bit_length()) / sigma, rel=1e-12)


def test_tree_builtin_is_calibrated_to_epsilon_one():
    assert TREE.name == "tree"
    assert TREE.mu == pytest.approx(math.sqrt(5) / _tree_builtin_sigma(), rel=1e-12)
    assert TREE.tight_epsilon == pytest.approx(1.0, abs=1e-9)
    # the accountant's count ⌊log2 16⌋ + 1 = 5 is exact at q = 1, so claim and truth agree
    assert TREE.claimed_epsilon == pytest.approx(TREE.tight_epsilon, rel=1e-9)
    assert TREE.delta == 1e-5
    # the claim is μ-GDP with the accountant's μ = √(⌊log2 T⌋ + 1)/σ (Thm 4.3, exact version)
    assert TREE.claim_type == "gdp"
    assert TREE.claimed_mu == pytest.approx(math.sqrt(5) / _tree_builtin_sigma(), rel=1e-12)
    assert TREE.claimed_epsilon == gaussian_epsilon(1e-5, TREE.claimed_mu)


def _tree_builtin_sigma():
    return math.sqrt(5) / gaussian_mu(1.0, 1e-5)


def test_tree_non_worst_leaf_claim_exceeds_truth():
    s = tree_prefix_scenario(16, 3.0, 1e-5, leaf=6)  # c_6(16) = 3 < 5
    assert s.mu == pytest.approx(math.sqrt(3) / 3.0, rel=1e-12)
    assert s.claim_type == "gdp" and s.claimed_mu == pytest.approx(math.sqrt(5) / 3.0, rel=1e-12)  # not the true μ
    assert s.tight_epsilon == pytest.approx(gaussian_epsilon(1e-5, math.sqrt(3) / 3.0), rel=1e-12)
    assert s.claimed_epsilon == pytest.approx(gaussian_epsilon(1e-5, math.sqrt(5) / 3.0), rel=1e-12)
    assert s.claimed_epsilon > s.tight_epsilon


def test_tree_sample_matches_reference_tree_aggregate_draw_for_draw():
    steps, sigma = 8, 2.5
    s = tree_prefix_scenario(steps, sigma, 1e-5)
    out = s.sample(np.random.default_rng(3), 4, 1)
    rng = np.random.default_rng(3)
    z = rng.standard_normal((4, steps, 1))
    leaves = np.zeros((steps, 1))
    leaves[0, 0] = 1.0
    for i in range(4):
        want = tree_aggregate(leaves, sigma * z[i])[:, 0]
        np.testing.assert_allclose(out[i], want, rtol=0, atol=1e-12)
    # one trial = one epoch of the streaming tree's noise (tree_noise_all draws (T, 1) the same way)
    one = s.sample(np.random.default_rng(9), 1, 0)[0]
    xi = tree_noise_all(np.full(steps, sigma), 1, np.random.default_rng(9))
    np.testing.assert_allclose(one, tree_aggregate(np.zeros((steps, 1)), xi)[:, 0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("leaf", [1, 3, 4])
def test_tree_log_likelihood_ratio_equals_exact_log_density_ratio(leaf):
    steps, sigma = 6, 1.3
    s = tree_prefix_scenario(steps, sigma, 1e-5, leaf=leaf)
    release = tree_release_matrix(steps)
    cov = sigma**2 * release @ release.T
    mean = (np.arange(1, steps + 1) >= leaf).astype(float)
    x = np.vstack([s.sample(np.random.default_rng(1), 20, 0), s.sample(np.random.default_rng(2), 20, 1)])
    want = multivariate_normal(mean, cov).logpdf(x) - multivariate_normal(np.zeros(steps), cov).logpdf(x)
    np.testing.assert_allclose(s.log_likelihood_ratio(x), want, rtol=1e-9, atol=1e-9)


def test_tree_empirical_moments_match_the_gaussian_law():
    steps, sigma = 4, 1.0
    s = tree_prefix_scenario(steps, sigma, 1e-5)
    x = s.sample(np.random.default_rng(11), 200_000, 1)
    release = tree_release_matrix(steps)
    np.testing.assert_allclose(x.mean(axis=0), np.ones(steps), atol=0.02)
    np.testing.assert_allclose(np.cov(x.T), release @ release.T, atol=0.05)
    # the LR score is N(±μ²/2, μ²) under D' / D
    llr = s.log_likelihood_ratio(x)
    assert llr.mean() == pytest.approx(s.mu**2 / 2, abs=0.02)
    assert llr.std() == pytest.approx(s.mu, rel=0.01)


# ---------------------------------------------------------------------------------------------------
# Zeroth order: the pair, μ, the release law


def test_zeroth_order_pair_is_the_worst_case_replace_one_pair():
    means, diffs = zeroth_order_pair(5, 10, 1.0, 1e-3)
    # shared records agree; the replaced record's difference is ∓L√d (past the clip) on D / D'
    np.testing.assert_array_equal(diffs[0, :-1], diffs[1, :-1])
    assert diffs[0, -1] == pytest.approx(-math.sqrt(5), rel=1e-9)
    assert diffs[1, -1] == pytest.approx(math.sqrt(5), rel=1e-9)
    shared = np.clip(diffs[0, :-1], -1.0, 1.0).sum()
    assert means[0] == pytest.approx((shared - 1.0) / 10, rel=1e-12, abs=1e-15)
    assert means[1] == pytest.approx((shared + 1.0) / 10, rel=1e-12, abs=1e-15)
    assert means[1] - means[0] == pytest.approx(2 * 1.0 / 10, rel=1e-12)


def test_zeroth_order_direction_is_public_and_keyed():
    a = zeroth_order_pair(4, 6, 0.5, 1e-3, public_seed=7)
    b = zeroth_order_pair(4, 6, 0.5, 1e-3, public_seed=7)
    c = zeroth_order_pair(4, 6, 0.5, 1e-3, public_seed=8)
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[1][0, :-1], c[1][0, :-1])
    # independent recomputation with the plain-loop reference estimator from the documented stream keys
    streams = Streams(7)
    u = sample_sphere(streams.generator("zeroth_order", "direction"), (), 4, radius=2.0)
    shared = RidgeSum.random(4, 5, streams.generator("zeroth_order", "data"))
    want = reference_finite_differences(shared.loss, np.zeros(4), shared.data, u, 1e-3)
    np.testing.assert_allclose(a[1][0, :-1], want, rtol=1e-12, atol=1e-12)


def test_zeroth_order_clip_must_bind():
    with pytest.raises(ValueError, match="clip_threshold"):
        zeroth_order_pair(4, 6, 2.5, 1e-3)  # C ≥ L√d = 2: the differing record is not clipped to ±C


def test_zeroth_order_builtin_mu_and_epsilon():
    assert ZO.name == "zeroth_order"
    sigma = 2 * 1.0 / (10 * gaussian_mu(1.0, 1e-5))
    assert ZO.mu == pytest.approx(2 * 1.0 / (10 * sigma), rel=1e-12)
    assert ZO.tight_epsilon == pytest.approx(1.0, abs=1e-9)
    assert ZO.claimed_epsilon == pytest.approx(ZO.tight_epsilon, rel=1e-12)
    # the gdp_exact accounting states μ = (2C/n)/σ: a μ-GDP claim
    assert ZO.claim_type == "gdp" and ZO.claimed_mu == pytest.approx(2 * 1.0 / (10 * sigma), rel=1e-12)
    s = zeroth_order_scenario(3, 0.5, 1e-6, n=4, clip_threshold=0.7)
    assert s.mu == pytest.approx(2 * 0.7 / (4 * 0.5), rel=1e-12)
    assert s.tight_epsilon == pytest.approx(gaussian_epsilon(1e-6, 2 * 0.7 / (4 * 0.5)), rel=1e-12)


def test_zeroth_order_log_likelihood_ratio_equals_exact_log_density_ratio_and_is_increasing():
    s = zeroth_order_scenario(5, 0.3, 1e-5, n=8)
    means, _ = zeroth_order_pair(5, 8, 1.0, 1e-3)
    x = np.linspace(-2, 2, 41)[:, None]
    want = norm.logpdf(x[:, 0], means[1], 0.3) - norm.logpdf(x[:, 0], means[0], 0.3)
    llr = s.log_likelihood_ratio(x)
    np.testing.assert_allclose(llr, want, rtol=1e-9, atol=1e-9)
    assert np.all(np.diff(llr) > 0)  # so the release itself is an equivalent score
    out = s.sample(np.random.default_rng(5), 3, 1)
    np.testing.assert_array_equal(out, means[1] + 0.3 * np.random.default_rng(5).standard_normal((3, 1)))


# ---------------------------------------------------------------------------------------------------
# Shared behaviour: validation, reproducibility, audits, executors


@pytest.mark.parametrize("scenario", [TREE, ZO], ids=["tree", "zeroth_order"])
def test_sample_is_reproducible_and_shaped(scenario):
    k = 16 if scenario is TREE else 1
    for which in (0, 1):
        a = scenario.sample(np.random.default_rng(42), 50, which)
        b = scenario.sample(np.random.default_rng(42), 50, which)
        assert a.shape == (50, k)
        np.testing.assert_array_equal(a, b)
    assert scenario.sample(np.random.default_rng(0), 0, 1).shape == (0, k)
    with pytest.raises(ValueError, match="which"):
        scenario.sample(np.random.default_rng(0), 3, 2)
    with pytest.raises(TypeError, match="rng"):
        scenario.sample(0, 3, 0)
    with pytest.raises(ValueError, match="outputs"):
        scenario.log_likelihood_ratio(np.zeros((3, k + 1)))


def test_builders_validate_parameters():
    with pytest.raises(ValueError, match="steps"):
        tree_prefix_scenario(0)
    with pytest.raises(ValueError, match="leaf"):
        tree_prefix_scenario(4, 1.0, leaf=5)
    with pytest.raises(ValueError, match="noise_std"):
        tree_prefix_scenario(4, -1.0)
    with pytest.raises(ValueError, match="delta"):
        zeroth_order_scenario(5, 1.0, 0.0)
    with pytest.raises(ValueError, match="n"):
        zeroth_order_scenario(5, 1.0, n=0)
    with pytest.raises(ValueError, match="d"):
        zeroth_order_scenario(0, 1.0)


@pytest.mark.parametrize("scenario", [TREE, ZO], ids=["tree", "zeroth_order"])
def test_audit_200k_is_consistent_and_nearly_tight(scenario):
    r = audit(scenario, 200_000, seed=2026)
    assert r.verdict == "consistent"
    assert r.claim_type == "gdp" and r.verdict_bounds == ("clopper_pearson_epsilon", "gdp_mu")
    assert r.decided_by in r.verdict_bounds and r.margin <= 0
    assert r.epsilon_lb <= r.tight_epsilon
    assert r.gdp_mu_lb <= scenario.mu
    assert 0.8 <= r.gdp_epsilon_lb <= r.tight_epsilon
    again = audit(scenario, 2000, seed=7)
    assert again == audit(scenario, 2000, seed=7)


@pytest.mark.parametrize("name", ["tree", "zeroth_order"])
def test_run_shards_serial_equals_local_pool(name):
    thresholds = np.array([-1.0, 0.0, 0.05, 1.0])
    kwargs = dict(seed=3, shards=3)
    serial = run_shards(name, None, thresholds, 500, executor="serial", **kwargs)
    local = run_shards(name, None, thresholds, 500, executor="local", workers=2, **kwargs)
    assert serial == local
    assert all(c.negatives == c.positives == 1500 for c in serial)
