"""The helpers behind the zo_o2nc run claims (proofs_checks/claims/zo_o2nc/_runs.py and friends).

* Without a bug, ``variant_zo_o2nc`` — the algorithm the run claims' mutants are built from — is the reference run
  bit for bit, so each mutant differs from a correct algorithm in exactly the line its bug names; and each bug
  changes the run.
* The losses agree between the reference's calling convention (one point, one record) and the fast backend's
  (stacked points and rows), bitwise, so the fast twin keeps its vectorised path.
* The ground truths the checks compute by themselves: the brute-force minimum norm, the exact tree privacy
  (linear algebra = the exact participation counts), the μ-GDP ε, and the constant of the T-rule erratum.
"""

import math

import numpy as np
import pytest

from proofs_checks.claims.zo_o2nc import privacy_run, rate, stationarity
from proofs_checks.claims.zo_o2nc._runs import BUGS, LinearLoss, RidgeLoss, sample_rows, variant_zo_o2nc
from reference.algorithms.zo_o2nc import zo_o2nc
from reference.mechanisms import participation_chain
from reference.objectives import RidgeSum

FIELDS = ("releases", "query_points", "iterates", "steps", "epoch_averages", "segment_points", "output",
          "final_iterate")


def _problem():
    gen = np.random.default_rng(7)
    population = RidgeSum.random(3, 30, gen, profile="capped", tau=0.5, offset_scale=0.5)
    T, K, B1, B2 = 6, 3, 4, 2
    data = sample_rows(population.data, K * (B1 + B2 * (T - 1)), gen)
    common = dict(T=T, K=K, B1=B1, B2=B2, smoothing_radius=0.4, step_size=0.05, seed=11, record_path=True)
    return RidgeLoss(3, 1.0, "capped", 0.5), data, np.array([0.3, -0.1, 0.2]), common


@pytest.mark.parametrize("noise", [dict(noise="none"),
                                   dict(noise="gaussian", rho=1.0, lipschitz=1.0, dp_delta=1e-6, noise_seed=2**63 + 1)])
def test_variant_without_bug_is_the_reference_run(noise):
    loss, data, x1, common = _problem()
    ours = variant_zo_o2nc(loss, data, x1, **common, **noise)
    theirs = zo_o2nc(loss, data, x1, **common, **noise)
    for name in FIELDS:
        assert np.array_equal(np.asarray(getattr(ours, name)), np.asarray(getattr(theirs, name))), name
    assert np.array_equal(ours.diagnostics.noiseless_sums, theirs.diagnostics.noiseless_sums)
    assert np.array_equal(ours.diagnostics.noise, theirs.diagnostics.noise)
    assert ours.ledger.plan == theirs.ledger.plan
    assert ours.ledger.settings == theirs.ledger.settings


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_every_bug_changes_the_run(bug):
    loss, data, x1, common = _problem()
    noise = dict(noise="gaussian", noise_std=0.5, lipschitz=1.0, dp_delta=1e-6, noise_seed=2**63 + 1)
    correct = variant_zo_o2nc(loss, data, x1, **common, **noise)
    broken = variant_zo_o2nc(loss, data, x1, **common, **noise, bug=bug)
    assert not all(np.array_equal(np.asarray(getattr(correct, name)), np.asarray(getattr(broken, name)))
                   for name in FIELDS)


def test_losses_agree_across_calling_conventions():
    gen = np.random.default_rng(3)
    for d in (1, 2, 3, 32):
        population = RidgeSum.random(d, 5, gen, profile="wshape", tau=0.3)
        points = gen.standard_normal((2, 5, 4, d))
        rows = population.data[:, None, :]
        for loss in (RidgeLoss(d, 1.0, "wshape", 0.3), RidgeLoss(d, 1.0, "capped", 0.3), RidgeLoss(d, 1.0, "abs")):
            stacked = loss(points, rows)
            single = np.array([[[[loss(points[s, i, j], population.data[i]) for j in range(4)] for i in range(5)]]
                               for s in range(2)]).reshape(stacked.shape)
            assert np.array_equal(stacked, single)
            objective = RidgeSum(population.directions, population.offsets, profile=loss.profile, tau=loss.tau)
            assert np.allclose(stacked, objective.loss(points, rows), rtol=1e-14, atol=1e-14)
        vectors = gen.standard_normal((5, d))
        stacked = LinearLoss()(points, vectors[:, None, :])
        assert all(stacked[1, i, j] == LinearLoss()(points[1, i, j], vectors[i]) for i in range(5) for j in range(4))


def test_brute_force_min_norm():
    rows = np.array([[1.0, 1.0], [1.0, -1.0], [3.0, 0.0]])
    assert stationarity._brute_force_min_norm(rows) == pytest.approx(1.0, abs=1e-15)
    assert stationarity._brute_force_min_norm(np.array([[-1.0, 0.5], [1.0, 0.5]])) == pytest.approx(0.5, abs=1e-15)
    assert stationarity._brute_force_min_norm(np.array([[2.0, 0.0]])) == 2.0


def test_mahalanobis_equals_the_exact_participation_counts():
    gen = np.random.default_rng(5)
    for n in (1, 2, 3, 7, 8, 13, 16):
        s = gen.uniform(0.1, 2.0, n)
        stds = gen.uniform(0.5, 2.0, n)
        expected = [s[q - 1] ** 2 * sum(1 / stds[b - 1] ** 2 for b in participation_chain(q, n))
                    for q in range(1, n + 1)]
        assert np.allclose(privacy_run._mahalanobis(s, stds), expected, rtol=1e-12, atol=0)


def test_gdp_epsilon_inverts_the_privacy_profile():
    from scipy import stats

    for mu in (0.1, 1.0, 3.0):
        eps = privacy_run._gdp_epsilon(mu, 1e-5)
        delta = stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
        assert delta == pytest.approx(1e-5, rel=1e-8)


def test_rate_constant_bounds_the_max_rule_on_a_random_family():
    """C(T) of the zo_o2nc.E5 claim is a proof, not a fit: check it on parameters the claim does not use."""
    from types import SimpleNamespace

    from reference.algorithms.zo_o2nc_privacy import zo_o2nc_cor44_sigma

    subject = SimpleNamespace(zo_o2nc_cor44_sigma=zo_o2nc_cor44_sigma)

    gen = np.random.default_rng(9)
    for _ in range(40):
        M, d = int(10 ** gen.uniform(6, 14)), int(gen.integers(1, 50))
        L, delta, gap, rho = 10 ** gen.uniform(-1, 1), 10 ** gen.uniform(-2, 0), 10 ** gen.uniform(-1, 1), \
            10 ** gen.uniform(-6, 6)
        bound, value, T, *_ = rate._bound_at(subject, M, d, L, delta, gap, rho, "max")
        if M // (2 * T) >= 1:
            assert bound <= rate._rate_constant(T) * value
