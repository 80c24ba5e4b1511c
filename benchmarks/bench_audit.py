"""Benchmark: audit throughput, serial and on the local process pool.

In one run:

* serial: ``empirical_dp.audit.audit`` of the scalar-release scenario (``zeroth_order`` when shipped, else
  ``gaussian``) at ``--trials`` = 10⁶ outputs per dataset; prints the wall time (target < 10 s), the trials per second
  (2·trials outputs drawn and scored per audit counted as 2·trials) and the bounds;
* pool: ``empirical_dp.executors.audit_sharded`` of the same scenario at ``--large`` = 4·10⁷ trials per dataset,
  ``--shards`` shards, once with ``executor="serial"`` and once with ``executor="local"`` (all cores), both with
  ``exact_oracle=False`` (only counts cross the process boundary); prints both times, the speedup and checks that the
  two results agree field for field (they must: shards are keyed by index); then the counting phase alone
  (``run_shards`` at one threshold, the part that runs in parallel) serial against the pool.

The select split (20 % of the trials) is drawn serially in both runs, so the end-to-end speedup is below the
counting speedup (Amdahl), and both are bounded by the core count (printed).

Targets are reported, not enforced; exit status 1 only if serial and pool results differ.

    .venv/bin/python benchmarks/bench_audit.py [--trials 1000000] [--large 40000000] [--shards 32] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

try:
    import empirical_dp  # noqa: F401
except ImportError:  # run as a script from a checkout: put the project root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empirical_dp.audit import audit
from empirical_dp.executors import audit_sharded, run_shards
from empirical_dp.registry import SCENARIOS

TARGET_SECONDS = 10.0


def scalar_scenario() -> str:
    return "zeroth_order" if "zeroth_order" in SCENARIOS else "gaussian"


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=1_000_000)
    parser.add_argument("--large", type=int, default=40_000_000)
    parser.add_argument("--shards", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    name = scalar_scenario()
    scenario = SCENARIOS[name]

    result, seconds = timed(lambda: audit(scenario, args.trials, seed=args.seed))
    print(f"serial audit of {name!r}, {args.trials:,} trials per dataset: {seconds:.3f} s "
          f"(target < {TARGET_SECONDS:g} s: {'met' if seconds < TARGET_SECONDS else 'MISSED'}), "
          f"{2 * args.trials / seconds:,.0f} outputs/s ({args.trials / seconds:,.0f} trials per dataset per s)")
    print(f"  epsilon_lb {result.epsilon_lb:.6g}, gdp_epsilon_lb {result.gdp_epsilon_lb:.6g}, "
          f"oracle (not a bound) {result.oracle_epsilon_lb:.6g}, claimed {result.claimed_epsilon:.6g}, "
          f"verdict {result.verdict}")

    common = dict(seed=args.seed, shards=args.shards, exact_oracle=False)
    serial, serial_seconds = timed(lambda: audit_sharded(name, args.large, executor="serial", **common))
    pooled, pool_seconds = timed(lambda: audit_sharded(name, args.large, executor="local", **common))
    print(f"{args.large:,} trials per dataset, {args.shards} shards: serial {serial_seconds:.2f} s, "
          f"local pool ({os.cpu_count()} cores) {pool_seconds:.2f} s, speedup {serial_seconds / pool_seconds:.2f}x")
    print(f"  epsilon_lb {pooled.epsilon_lb:.6g}, gdp_epsilon_lb {pooled.gdp_epsilon_lb:.6g}, verdict {pooled.verdict}")
    # the parallel part alone (the select split above runs serially in both): counting shards at one threshold
    per_shard = args.large // args.shards
    shard_common = dict(seed=args.seed, shards=args.shards)
    counts_serial, count_serial_seconds = timed(
        lambda: run_shards(name, None, [0.0], per_shard, executor="serial", **shard_common))
    counts_pool, count_pool_seconds = timed(
        lambda: run_shards(name, None, [0.0], per_shard, executor="local", **shard_common))
    print(f"  counting only ({args.shards} x {per_shard:,} trials): serial {count_serial_seconds:.2f} s, "
          f"pool {count_pool_seconds:.2f} s, speedup {count_serial_seconds / count_pool_seconds:.2f}x")
    if serial != pooled or counts_serial != counts_pool:
        print("serial and pool results differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
