"""Sharded audit counting on a chosen executor (docs/audits.md, Executors; audit module docstring).

Trials are sharded: a run returns mergeable counts, so it runs serially, on a local process pool, or on a Dask
cluster unchanged. Shard j draws its outputs from the stream key ("audit", name, "D" | "D'", "count", j)
(``empirical_dp.audit.count_shard``), so a shard's counts depend only on (seed, j, its size) and never on where or
in which order it ran: every executor returns the same merged counts for the same seed.

Executors:
- ``"serial"``: a plain loop in this process.
- ``"local"``: ``concurrent.futures.ProcessPoolExecutor`` with ``workers`` processes (default: all cores).
- ``"dask://HOST:PORT"``: a ``dask.distributed.Client`` connected to ``tcp://HOST:PORT`` for this call (waiting
  at most ``DASK_CONNECT_TIMEOUT`` seconds; an unreachable scheduler raises ``SchedulerUnreachable``, a
  ValueError), or an existing ``dask.distributed.Client`` (left open).

What crosses to a worker: built-in scenarios travel by NAME (``registry.SCENARIOS``) and are rebuilt there,
because a ``Scenario`` holds closures (``sample``, ``log_likelihood_ratio``) that the standard pickle of a process
pool cannot send. An external scenario is named ``"module:attr"`` or ``"path/file.py:attr"`` (a module attribute
holding a ``Scenario``, loaded by ``reference.loading``); that works on every executor whose workers see the same
module or file. A ``Scenario`` object that is not a built-in runs serially, and on
Dask (cloudpickle sends closures); the process pool raises TypeError for it. ``attack=None`` means the scenario's
likelihood-ratio score, built in the worker; an explicit attack must be picklable (a module-level function) for
the process pool.

Checks before work: the executor, the workers, the scenario's wire form and the attack are checked (and a
``dask://`` scheduler connected) before anything is drawn, so a bad argument costs nothing and prints no progress.
Progress (``progress=True``): ``run_shards`` shows a bar over shards, ``audit_sharded`` one over the trials drawn
(select split and every counted shard, both datasets: 2 × trials), advanced as shards complete, on any executor
(``reference.progress.progress_bar``: on a pipe it writes whole lines, at most one every 10 s).

ROC: ``audit_sharded`` returns ``AuditResult.roc`` like ``audit``: with ``exact_oracle`` the same points (counts of
the pooled counted scores at their ``candidate_thresholds``), without it the counts the shards returned at the
select split's candidate thresholds and the planned ones (``audit.roc_from_counts``). Descriptive, not a bound.
"""

from __future__ import annotations

import os
import pickle
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager

import numpy as np

from reference.loading import load_object, one_line
from reference.progress import progress_bar
from reference.validation import check_array, check_int, check_real

from .attacks import likelihood_ratio_score
from .audit import (
    GRID_SIZE,
    AuditResult,
    Counts,
    candidate_thresholds,
    check_threshold_strategy,
    count_errors,
    count_shard,
    draw_scores,
    finish_audit,
    has_known_law,
    merge_counts,
    plan_thresholds,
    roc_curve_at,
    roc_from_counts,
    select_threshold,
    split_sizes,
    verdict_bound_confidence,
)
from .bounds import epsilon_lower_bound
from .registry import SCENARIOS
from .scenarios import Scenario

__all__ = ["resolve_scenario", "check_executor", "run_shards", "audit_sharded", "SchedulerUnreachable",
           "DASK_CONNECT_TIMEOUT"]

#: Seconds to wait for a ``dask://HOST:PORT`` scheduler before giving up (Dask's own default is 30 s, which makes a
#: mistyped address look like a hang). A scheduler that is up answers in milliseconds, so a few seconds suffice.
DASK_CONNECT_TIMEOUT = 5.0


class SchedulerUnreachable(ValueError):
    """The Dask scheduler of a ``dask://HOST:PORT`` executor did not answer within ``DASK_CONNECT_TIMEOUT``.
    A ValueError: the executor argument names an address where nothing listens (one-line message)."""


_DASK_ADDRESS = re.compile(r"^dask://([^/:\s]+):(\d{1,5})$")


def resolve_scenario(scenario) -> Scenario:
    """The ``Scenario`` named by ``scenario``: a ``Scenario`` itself, a built-in name (key of ``SCENARIOS``), or
    ``"module:attr"`` / ``"path/file.py:attr"`` (attr may be dotted; ``reference.loading``, current directory
    searched) naming a module attribute that holds a ``Scenario``. A spec that cannot be loaded (missing file,
    error raised by the user's module, missing attribute) raises ``reference.loading.LoadError`` (a ValueError)."""
    if isinstance(scenario, Scenario):
        return scenario
    if not isinstance(scenario, str):
        raise TypeError(f"scenario must be a Scenario or a name, got {type(scenario).__name__}")
    if scenario in SCENARIOS:
        return SCENARIOS[scenario]
    if ":" not in scenario:
        raise ValueError(f"scenario must be one of {sorted(SCENARIOS)}, 'module:attr' or 'path/file.py:attr', "
                         f"got {scenario!r}")
    value = load_object(scenario, "scenario")  # LoadError (a ValueError), one line, for any failure
    if not isinstance(value, Scenario):
        raise TypeError(f"scenario {scenario!r} must name a Scenario, got {type(value).__name__}")
    return value


def _shard_task(scenario_spec, attack, thresholds, trials, seed, shard, keep_scores=False):
    """Worker entry point (module level, so a process pool can pickle it): rebuild the scenario, count one shard.
    With ``keep_scores`` also return the shard's scores (for ``audit_sharded``'s exact oracle)."""
    scenario = resolve_scenario(scenario_spec)
    if attack is None:
        attack = likelihood_ratio_score(scenario)
    if not keep_scores:
        return count_shard(scenario, attack, thresholds, trials, seed=seed, shard=shard)
    scores_d, scores_dp = draw_scores(scenario, attack, trials, seed=seed, split="count", shard=shard)
    return tuple(count_errors(scores_d, scores_dp, t) for t in thresholds), scores_d, scores_dp


def check_executor(executor, workers=None):
    """(kind, workers): ``executor`` normalised to "serial", "local", ("dask", "tcp://HOST:PORT") or
    ("client", Client), and ``workers`` checked (an int ≥ 1, for "local" only; None: all cores). ValueError naming
    ``executor`` or ``workers`` otherwise. Connects to nothing."""
    if isinstance(executor, str):
        if executor in ("serial", "local"):
            kind = executor
        else:
            match = _DASK_ADDRESS.match(executor)
            if match is None or not 0 < int(match.group(2)) < 65536:
                raise ValueError(f"executor must be 'serial', 'local', 'dask://HOST:PORT' or a dask.distributed."
                                 f"Client, got {executor!r}")
            kind = ("dask", f"tcp://{match.group(1)}:{match.group(2)}")
    else:
        try:
            from distributed import Client
        except ImportError:  # without Dask nothing else can be a client
            Client = ()
        if not (Client and isinstance(executor, Client)):
            raise ValueError(f"executor must be 'serial', 'local', 'dask://HOST:PORT' or a dask.distributed.Client, "
                             f"got {type(executor).__name__}")
        kind = ("client", executor)
    if workers is not None:
        if kind != "local":
            raise ValueError(f"workers applies only to executor='local', got workers={workers!r}")
        workers = check_int("workers", workers, minimum=1)
    return kind, workers


def _wire_scenario(scenario, kind):
    """What to send to workers for ``scenario``: the built-in name when it is one, else the spec as given."""
    if isinstance(scenario, Scenario):
        if SCENARIOS.get(scenario.name) is scenario:
            return scenario.name
        if kind == "local":
            raise TypeError(f"scenario {scenario.name!r} is a Scenario object, which a process pool cannot pickle; "
                            "pass a built-in name or an importable 'module:attr' name")
        return scenario
    resolve_scenario(scenario)  # fail here, not in a worker
    return scenario


def _check_attack(attack, kind):
    if attack is None:
        return None
    if not callable(attack):
        raise TypeError(f"attack must be callable or None, got {type(attack).__name__}")
    if kind == "local":
        try:
            pickle.dumps(attack)
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            raise TypeError("attack must be picklable (a module-level function) for executor='local'") from error
    return attack


def _dask_client(kind, executor):
    """(client, ``distributed.as_completed``): a new client for ("dask", address), connected within
    ``DASK_CONNECT_TIMEOUT`` seconds (else ``SchedulerUnreachable``), or the given one for ("client", Client)."""
    try:
        from distributed import Client
        from distributed import as_completed as dask_as_completed
    except ImportError as exc:
        raise ValueError(f"executor {executor!r} needs dask.distributed ({one_line(exc)})") from None
    if kind[0] != "dask":
        return kind[1], dask_as_completed
    try:
        return Client(kind[1], timeout=DASK_CONNECT_TIMEOUT), dask_as_completed
    except OSError as exc:  # refused, unknown host or timed out (TimeoutError is an OSError)
        raise SchedulerUnreachable(f"cannot reach the Dask scheduler at {executor} within "
                                   f"{DASK_CONNECT_TIMEOUT:g} s ({one_line(exc)})") from None


@contextmanager
def _connected(kind, executor):
    """The Dask client of a ("dask", address) or ("client", Client) executor and ``distributed.as_completed``
    (None, None for "serial" and "local"); a client this opened is closed on exit."""
    if kind in ("serial", "local"):
        yield None, None
        return
    client, dask_as_completed = _dask_client(kind, executor)
    try:
        yield client, dask_as_completed
    finally:
        if kind[0] == "dask":
            client.close()


def _map_shards(jobs, kind, workers, client, dask_as_completed, on_done=None):
    """Results of ``_shard_task(*job)`` for every job, in job order, on the chosen (checked, connected) executor;
    ``on_done(j)`` after job j completes (progress)."""
    results = [None] * len(jobs)

    def done(j, value):
        results[j] = value
        if on_done is not None:
            on_done(j)

    if kind == "serial":
        for j, job in enumerate(jobs):
            done(j, _shard_task(*job))
    elif kind == "local":
        with ProcessPoolExecutor(max_workers=workers or os.cpu_count()) as pool:
            futures = {pool.submit(_shard_task, *job): j for j, job in enumerate(jobs)}
            for future in as_completed(futures):
                done(futures[future], future.result())
    else:
        futures = [client.submit(_shard_task, *job, pure=False) for job in jobs]
        index = {future.key: j for j, future in enumerate(futures)}
        for future in dask_as_completed(futures):
            done(index[future.key], future.result())
    return results


def _check_sizes(trials_per_shard, shards) -> list[int]:
    shards = check_int("shards", shards, minimum=1)
    if isinstance(trials_per_shard, Sequence) and not isinstance(trials_per_shard, str):
        if len(trials_per_shard) != shards:
            raise ValueError(f"trials_per_shard must have length shards={shards}, got {len(trials_per_shard)}")
        return [check_int(f"trials_per_shard[{j}]", n, minimum=0) for j, n in enumerate(trials_per_shard)]
    return [check_int("trials_per_shard", trials_per_shard, minimum=0)] * shards


def run_shards(scenario, attack: Callable | None, thresholds, trials_per_shard, *, seed, shards, executor="serial",
               workers=None, progress=False) -> tuple[Counts, ...]:
    """Count shards 0 … shards−1 of the COUNT split on ``executor`` and merge them: one ``Counts`` per threshold.

    scenario: a ``Scenario``, a built-in name or ``"module:attr"`` (module docstring); attack: score function, or
    None for the scenario's likelihood ratio; thresholds: 1-d array; trials_per_shard: outputs per dataset in each
    shard (an int, or one int per shard); executor: "serial" | "local" | "dask://HOST:PORT" | a Dask Client;
    workers: process-pool size for "local" (default all cores); progress: show a tqdm bar over shards.
    The result is the same for every executor (shards are keyed by index and merged in index order).
    """
    seed = check_int("seed", seed, minimum=0)
    sizes = _check_sizes(trials_per_shard, shards)
    thresholds = np.asarray(check_array("thresholds", thresholds, ndim=1), dtype=np.float64)
    kind, workers = check_executor(executor, workers)
    spec = _wire_scenario(scenario, kind)
    attack = _check_attack(attack, kind)
    jobs = [(spec, attack, thresholds, size, seed, j, False) for j, size in enumerate(sizes)]
    with _connected(kind, executor) as (client, dask_as_completed):  # before the bar: a failure prints only itself
        with progress_bar(len(jobs), "shards", "shard", enabled=progress) as bar:
            per_shard = _map_shards(jobs, kind, workers, client, dask_as_completed, lambda j: bar.update())
    return tuple(merge_counts(shard[i] for shard in per_shard) for i in range(thresholds.size))


def audit_sharded(scenario, trials, *, seed, shards, executor="serial", workers=None, attack=None, confidence=0.95,
                  threshold_fraction=None, threshold_strategy="bonferroni_grid", grid_size=GRID_SIZE,
                  exact_oracle=True, progress=False) -> AuditResult:
    """``empirical_dp.audit.audit`` with the COUNT shards run on ``executor`` (``run_shards``).

    The thresholds are planned serially on the SELECT split by the same public pieces as ``audit``
    (``plan_thresholds``: "bonferroni_grid" (default) or "split", ``grid_size``, ``threshold_fraction`` with the
    same defaults, and the known-law oracle threshold) and the result is assembled by ``finish_audit``; with
    ``exact_oracle`` the shards also return their scores so ``oracle_epsilon_lb`` is the best ε_lb over
    ``candidate_thresholds`` of the pooled counted scores, and the result equals ``audit(..., shards=shards)`` field
    for field, ``roc`` included (``roc`` is not part of equality; it is the same points). With
    ``exact_oracle=False`` only counts come back (memory independent of ``trials``), ``oracle_epsilon_lb`` is the
    best ε_lb on the counted split over the SELECT split's candidate thresholds — also report only, not a bound —
    and ``roc`` holds the counted split's (FPR, TPR) at those thresholds and the planned ones. ``progress``: a bar
    over the 2 × ``trials`` outputs drawn (module docstring).
    """
    scenario_obj = resolve_scenario(scenario)
    trials = check_int("trials", trials, minimum=2)
    seed = check_int("seed", seed, minimum=0)
    confidence = check_real("confidence", confidence)
    if not 0.5 < confidence < 1:
        raise ValueError(f"confidence must lie in (0.5, 1), got {confidence}")
    use_grid, grid_size, threshold_fraction = check_threshold_strategy(threshold_strategy, grid_size, threshold_fraction)
    select_trials, shard_sizes = split_sizes(trials, threshold_fraction, shards)
    if attack is not None and not callable(attack):
        raise TypeError(f"attack must be callable, got {type(attack).__name__}")
    kind, workers = check_executor(executor, workers)
    spec = _wire_scenario(scenario, kind)  # refused here, before anything is drawn
    wire_attack = _check_attack(attack, kind)
    known_law = has_known_law(scenario_obj, attack)
    local_attack = likelihood_ratio_score(scenario_obj) if attack is None else attack
    delta = scenario_obj.delta
    bound_confidence = verdict_bound_confidence(scenario_obj, confidence)

    with _connected(kind, executor) as (client, dask_as_completed):  # before the bar: a failure prints only itself
        with progress_bar(2 * trials, f"audit {scenario_obj.name}", "trial", enabled=progress) as bar:
            # SELECT split, serially: thresholds fixed before any counted output is drawn.
            select_d, select_dp = draw_scores(scenario_obj, local_attack, select_trials, seed=seed, split="select",
                                              advance=bar.update)
            plan = plan_thresholds(scenario_obj, select_d, select_dp, sum(shard_sizes), use_grid=use_grid,
                                   grid_size=grid_size, delta=delta, bound_confidence=bound_confidence,
                                   known_law=known_law)
            planned = plan.counted()
            counted = planned
            if not exact_oracle:
                counted = np.concatenate([planned, candidate_thresholds(select_d, select_dp)])
            jobs = [(spec, wire_attack, counted, size, seed, j, exact_oracle) for j, size in enumerate(shard_sizes)]
            per_shard = _map_shards(jobs, kind, workers, client, dask_as_completed,
                                    lambda j: bar.update(2 * shard_sizes[j]))
    shard_counts = [r[0] for r in per_shard] if exact_oracle else per_shard
    merged = [merge_counts(c[i] for c in shard_counts) for i in range(counted.size)]

    if exact_oracle:
        pooled_d = np.concatenate([r[1] for r in per_shard])
        pooled_dp = np.concatenate([r[2] for r in per_shard])
        _, oracle_epsilon_lb = select_threshold(pooled_d, pooled_dp, "epsilon", delta=delta,
                                                confidence=bound_confidence)
        roc = roc_curve_at(pooled_d, pooled_dp, candidate_thresholds(pooled_d, pooled_dp))
    else:
        oracle_epsilon_lb = max(epsilon_lower_bound(c.fp, c.negatives, c.fn, c.positives, delta,
                                                    bound_confidence).epsilon_lb for c in merged[planned.size:])
        order = np.argsort(counted, kind="stable")
        roc = roc_from_counts([merged[i] for i in order])
    return finish_audit(scenario_obj, plan, merged[:planned.size], trials=trials, select_trials=select_trials,
                        count_trials=sum(shard_sizes), seed=seed, shards=len(shard_sizes), confidence=confidence,
                        bound_confidence=bound_confidence, oracle_epsilon_lb=oracle_epsilon_lb,
                        threshold_strategy=threshold_strategy, grid_size=grid_size, roc=roc)
