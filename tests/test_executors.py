"""Tests for empirical_dp.executors: the same seed gives the same counts on every executor, and audit_sharded on the
serial executor equals audit(shards=k) exactly."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from empirical_dp.attacks import likelihood_ratio_score, projection_score
from empirical_dp.audit import Counts, audit, count_shard, merge_counts, roc_from_counts
from empirical_dp.executors import audit_sharded, check_executor, resolve_scenario, run_shards
from empirical_dp.registry import SCENARIOS
from empirical_dp.scenarios import gaussian_scenario

GAUSSIAN = SCENARIOS["gaussian"]
THRESHOLDS = np.array([-1.0, 0.0, 0.3, 2.5])

#: An external scenario, reachable as "<this module>:EXTERNAL" from a worker process.
EXTERNAL = gaussian_scenario(1.0, 2.0, 3, 1e-5, name="external_gaussian")


def _manual_counts(scenario, attack, thresholds, sizes, seed):
    """The definition: count_shard on each shard index, merged per threshold."""
    per_shard = [count_shard(scenario, attack, thresholds, n, seed=seed, shard=j) for j, n in enumerate(sizes)]
    return tuple(merge_counts(s[i] for s in per_shard) for i in range(len(thresholds)))


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_serial_matches_count_shard_definition():
    got = run_shards("gaussian", None, THRESHOLDS, 500, seed=3, shards=3)
    want = _manual_counts(GAUSSIAN, likelihood_ratio_score(GAUSSIAN), THRESHOLDS, [500] * 3, 3)
    assert got == want
    assert all(isinstance(c, Counts) and c.negatives == c.positives == 1500 for c in got)


def test_uneven_shard_sizes_and_scenario_object():
    got = run_shards(GAUSSIAN, None, THRESHOLDS, [7, 0, 11], seed=1, shards=3)
    assert got == _manual_counts(GAUSSIAN, likelihood_ratio_score(GAUSSIAN), THRESHOLDS, [7, 0, 11], 1)
    assert got[0].negatives == 18


def test_serial_local_and_dask_give_identical_counts(dask_client):
    kwargs = dict(seed=11, shards=5)
    serial = run_shards("gaussian", None, THRESHOLDS, 2000, **kwargs)
    local = run_shards("gaussian", None, THRESHOLDS, 2000, executor="local", workers=2, **kwargs)
    dask = run_shards("gaussian", None, THRESHOLDS, 2000, executor=dask_client, **kwargs)
    assert serial == local == dask
    # another seed changes the counts (the comparison is not vacuous)
    assert run_shards("gaussian", None, THRESHOLDS, 2000, seed=12, shards=5) != serial


def test_dask_address_string_connects_to_the_cluster(dask_client):
    address = dask_client.scheduler.address  # tcp://HOST:PORT
    got = run_shards("poisson_gaussian", None, THRESHOLDS, 300, seed=2, shards=2,
                     executor="dask://" + address.removeprefix("tcp://"))
    assert got == run_shards("poisson_gaussian", None, THRESHOLDS, 300, seed=2, shards=2)


def test_external_scenario_by_module_attr_name_on_the_pool():
    spec = f"{__name__}:EXTERNAL"  # the name pytest imported this file under
    assert resolve_scenario(spec) is EXTERNAL
    attack = projection_score(np.ones(3))
    serial = run_shards(spec, None, THRESHOLDS, 400, seed=5, shards=2)
    local = run_shards(spec, None, THRESHOLDS, 400, seed=5, shards=2, executor="local", workers=2)
    assert serial == local == _manual_counts(EXTERNAL, likelihood_ratio_score(EXTERNAL), THRESHOLDS, [400] * 2, 5)
    # a closure attack runs serially but cannot be pickled for the process pool
    assert run_shards(spec, attack, THRESHOLDS, 10, seed=5, shards=1) == _manual_counts(
        EXTERNAL, attack, THRESHOLDS, [10], 5)
    with pytest.raises(TypeError, match="attack must be picklable"):
        run_shards(spec, attack, THRESHOLDS, 10, seed=5, shards=1, executor="local")


def test_non_builtin_scenario_object_is_refused_by_the_pool():
    with pytest.raises(TypeError, match="module:attr"):
        run_shards(EXTERNAL, None, THRESHOLDS, 10, seed=0, shards=1, executor="local")


@pytest.mark.parametrize("strategy", ["bonferroni_grid", "split"])
@pytest.mark.parametrize("shards,trials", [(1, 500), (3, 1001), (4, 2000)])
def test_audit_sharded_serial_equals_audit(shards, trials, strategy):
    for name in ("gaussian", "poisson_gaussian"):
        want = audit(SCENARIOS[name], trials, seed=7, shards=shards, threshold_strategy=strategy)
        got = audit_sharded(name, trials, seed=7, shards=shards, threshold_strategy=strategy)
        assert got == want, name
        assert got.threshold_strategy == strategy
        # the known-law oracle exists exactly for the μ-GDP scenario audited with its likelihood ratio
        assert (got.known_law_oracle_epsilon_lb is None) == (SCENARIOS[name].mu is None)
        # the Bonferroni split follows the claim (gaussian: μ-GDP, two verdict bounds; poisson_gaussian: (ε, δ))
        assert got.bound_confidence == pytest.approx(0.975 if SCENARIOS[name].claim_type == "gdp" else 0.95)


def test_audit_sharded_follows_the_claim_not_the_true_law():
    """An (ε, δ) claim on a scenario whose true μ is known: one verdict bound at the whole confidence, the same
    verdict and deciding bound as ``audit``."""
    scenario = gaussian_scenario(1.0, 2.0, 1, 1e-5, claimed_epsilon=0.5, name="eps_claim_known_mu")
    want = audit(scenario, 3000, seed=6, shards=3)
    got = audit_sharded(scenario, 3000, seed=6, shards=3)
    assert got == want and got.claim_type == "epsilon_delta" and got.bound_confidence == 0.95
    assert got.verdict_bounds == ("clopper_pearson_epsilon",) == (got.decided_by,)
    assert got.known_law_oracle_epsilon_lb is not None  # the true μ still feeds the yardstick


def test_audit_sharded_defaults_to_the_grid_and_passes_grid_size_and_fraction():
    want = audit(GAUSSIAN, 4000, seed=2, shards=2, grid_size=6, threshold_fraction=0.1)
    got = audit_sharded("gaussian", 4000, seed=2, shards=2, grid_size=6, threshold_fraction=0.1)
    assert got == want and (got.threshold_strategy, got.grid_size, got.select_trials) == ("bonferroni_grid", 6, 400)
    with pytest.raises(ValueError, match="threshold_strategy"):
        audit_sharded("gaussian", 100, seed=0, shards=1, threshold_strategy="best")
    with pytest.raises(ValueError, match="grid_size"):
        audit_sharded("gaussian", 100, seed=0, shards=1, grid_size=5)


def test_audit_sharded_with_an_explicit_attack_has_no_known_law_oracle():
    attack = projection_score(np.ones(1))
    want = audit(GAUSSIAN, 2000, seed=3, shards=2, attack=attack)
    got = audit_sharded(GAUSSIAN, 2000, seed=3, shards=2, attack=attack)
    assert got == want and got.known_law_oracle_epsilon_lb is None


@pytest.mark.parametrize("strategy", ["bonferroni_grid", "split"])
def test_audit_sharded_local_equals_audit(strategy):
    want = audit(GAUSSIAN, 3000, seed=4, shards=3, threshold_strategy=strategy)
    assert audit_sharded("gaussian", 3000, seed=4, shards=3, executor="local", workers=2,
                         threshold_strategy=strategy) == want


@pytest.mark.parametrize("strategy", ["bonferroni_grid", "split"])
def test_audit_sharded_without_exact_oracle_keeps_the_bounds(strategy):
    want = audit(GAUSSIAN, 3000, seed=4, shards=3, threshold_strategy=strategy)
    got = audit_sharded("gaussian", 3000, seed=4, shards=3, exact_oracle=False, threshold_strategy=strategy)
    # every certified field is identical; only the report-only oracle is computed differently
    assert dataclasses.replace(got, oracle_epsilon_lb=want.oracle_epsilon_lb) == want
    assert np.isfinite(got.oracle_epsilon_lb) and got.oracle_epsilon_lb >= got.epsilon_lb


@pytest.mark.parametrize("executor", ["threads", "dask://", "dask://host", "dask://host:0", "tcp://host:8786",
                                      "dask://host:99999", "Serial"])
def test_bad_executor_string_raises_value_error_naming_executor(executor):
    with pytest.raises(ValueError, match="executor"):
        run_shards("gaussian", None, THRESHOLDS, 10, seed=0, shards=1, executor=executor)
    with pytest.raises(ValueError, match="executor"):
        audit_sharded("gaussian", 100, seed=0, shards=1, executor=executor)


def test_bad_executor_object_and_bad_arguments():
    with pytest.raises(ValueError, match="executor"):
        run_shards("gaussian", None, THRESHOLDS, 10, seed=0, shards=1, executor=object())
    with pytest.raises(ValueError, match="workers"):
        run_shards("gaussian", None, THRESHOLDS, 10, seed=0, shards=1, executor="serial", workers=2)
    with pytest.raises(ValueError, match="workers"):
        run_shards("gaussian", None, THRESHOLDS, 10, seed=0, shards=1, executor="local", workers=0)
    with pytest.raises(ValueError, match="trials_per_shard"):
        run_shards("gaussian", None, THRESHOLDS, [1, 2], seed=0, shards=3)
    with pytest.raises(ValueError, match="shards"):
        run_shards("gaussian", None, THRESHOLDS, 10, seed=0, shards=0)
    with pytest.raises(ValueError, match="seed"):
        run_shards("gaussian", None, THRESHOLDS, 10, seed=-1, shards=1)
    with pytest.raises(ValueError, match="scenario"):
        run_shards("no_such_scenario", None, THRESHOLDS, 10, seed=0, shards=1)
    with pytest.raises(ValueError, match="thresholds"):
        run_shards("gaussian", None, np.array([[0.0]]), 10, seed=0, shards=1)


def test_progress_bar_does_not_change_the_result():
    assert run_shards("gaussian", None, THRESHOLDS, 50, seed=9, shards=2, progress=True) == run_shards(
        "gaussian", None, THRESHOLDS, 50, seed=9, shards=2)


# ---------------------------------------------------------------------------------------------------
# ROC from counts and progress, on every executor


def test_roc_from_counts_is_one_point_per_test():
    fpr, tpr = roc_from_counts([Counts(10, 100, 30, 200), Counts(0, 100, 200, 200), Counts(100, 100, 0, 200)])
    np.testing.assert_array_equal(fpr, [0.1, 0.0, 1.0])
    np.testing.assert_array_equal(tpr, [0.85, 0.0, 1.0])
    with pytest.raises(ValueError, match="no trials"):
        roc_from_counts([Counts(0, 0, 0, 5)])
    with pytest.raises(TypeError, match="Counts"):
        roc_from_counts([(1, 2, 3, 4)])


@pytest.mark.parametrize("executor", ["serial", "local"])
def test_audit_sharded_roc_equals_the_serial_audit(executor):
    """A sharded audit carries the empirical ROC, the same points as ``audit`` (exact oracle: the pooled scores'
    candidate thresholds), on every executor."""
    want = audit(GAUSSIAN, 3000, seed=4, shards=3)
    workers = 2 if executor == "local" else None
    got = audit_sharded("gaussian", 3000, seed=4, shards=3, executor=executor, workers=workers)
    assert got.roc is not None
    np.testing.assert_array_equal(got.roc[0], want.roc[0])
    np.testing.assert_array_equal(got.roc[1], want.roc[1])


def test_audit_sharded_roc_on_dask(dask_client):
    want = audit(GAUSSIAN, 2000, seed=5, shards=2)
    got = audit_sharded("gaussian", 2000, seed=5, shards=2, executor=dask_client)
    np.testing.assert_array_equal(got.roc[0], want.roc[0])
    np.testing.assert_array_equal(got.roc[1], want.roc[1])


def test_audit_sharded_roc_from_counts_only():
    """Without the exact oracle the shards return counts only; the ROC is their (FPR, TPR) at the counted
    thresholds, in threshold order: non-increasing in both rates, each point what its counts give."""
    got = audit_sharded("gaussian", 4000, seed=6, shards=2, exact_oracle=False)
    fpr, tpr = got.roc
    assert fpr.size == tpr.size > 10
    assert np.all((fpr >= 0) & (fpr <= 1)) and np.all((tpr >= 0) & (tpr <= 1))
    assert np.all(np.diff(fpr) <= 0) and np.all(np.diff(tpr) <= 0)
    counts = got.counts  # the chosen threshold's counts are one of the points
    point = (counts.fp / counts.negatives, (counts.positives - counts.fn) / counts.positives)
    assert point in set(zip(fpr, tpr))


def test_audit_sharded_progress_counts_every_trial(capsys):
    quiet = audit_sharded("gaussian", 3000, seed=1, shards=3)
    shown = audit_sharded("gaussian", 3000, seed=1, shards=3, progress=True)
    assert shown == quiet
    err = capsys.readouterr().err
    assert "audit gaussian" in err and "6000/6000" in err and "\r" not in err


def test_refused_executor_prints_no_progress(capsys):
    with pytest.raises(ValueError, match="executor"):
        audit_sharded("gaussian", 3000, seed=1, shards=3, executor="nosuch", progress=True)
    with pytest.raises(TypeError, match="module:attr"):
        audit_sharded(EXTERNAL, 3000, seed=1, shards=3, executor="local", progress=True)
    assert capsys.readouterr().err == ""


def test_check_executor():
    assert check_executor("serial") == ("serial", None)
    assert check_executor("local", 3) == ("local", 3)
    assert check_executor("dask://host:8786") == (("dask", "tcp://host:8786"), None)
    for bad in ("nosuch", "dask://host:0", "dask://host"):
        with pytest.raises(ValueError, match="executor"):
            check_executor(bad)
