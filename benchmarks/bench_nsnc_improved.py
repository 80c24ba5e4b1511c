"""Benchmark: nsnc_improved Algorithm 2 with the oracles of Algorithms 3, 4 and 5 — reference loops vs the vectorized
float64 backend (reference.fast.nsnc_improved), same draws.

Problem: a RidgeSum objective (``reference.objectives``, profile "wshape", τ = 1, offsets ~ N(0, 2²)) with d = 10,
x0 = 0, L = 1, α = 0.1; σ given (no calibration: 0.5 single pass, (0.5, 1.0) multi pass), δ = 1e-5; the public seed
and an explicit secret seed shared by both backends.

* single pass ("single_pass", "single_pass_crn", "first_order"): K = 10 blocks of M = 20 steps, Σ = 20, B1 = 50,
  B2 = 5, m = d directions per record (first order: m = d perturbations at an increment), clip_hardening on
  (the zeroth-order oracles) — 200 steps over 1450 of the 2000 records;
* multi pass ("multi_pass", "multi_pass_first_order"): K = 4 blocks of M = 5 steps, Σ = 5, n = 100 records read at
  every step, m = d.

It prints, measured in one run (ratios, not timed assertions):

* reference / fast for one run of each oracle (the reference once, the fast backend best of ``--repeats``), with
  the agreement of the two runs (max |fast − reference| over releases, block averages and output; the backend
  performs the reference's operations in its order, so this is 0 — bitwise — for this objective);
* R = ``--replicates`` separate fast runs vs one batched fast run (R public seeds, and one public seed with R
  secret seeds: the audit layout), per replicate.

A single-pass increment step evaluates only 4·B2·m = 200 losses, so part of a step's cost is Python overhead (the
objective's own argument checks included); a multi-pass step evaluates 4·n·m = 4000 in one call. Exit status 1 if
an agreement fails.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_nsnc_improved.py [--replicates 16] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

try:
    import reference  # noqa: F401
except ImportError:  # run as a script from a checkout: put the project root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reference.algorithms import nsnc_improved as ref  # noqa: E402
from reference.fast import nsnc_improved as fast  # noqa: E402
from reference.objectives import RidgeSum  # noqa: E402
from reference.rng import Streams  # noqa: E402
from reference.secrets import SecretSeed, replicate_seeds  # noqa: E402

#: The secret seed of the agreement check: explicit, so that both backends draw the same noise (a benchmark value,
#: never a real secret).
BENCH_SECRET = SecretSeed(0x5EC2E7_0000_0000_0000_0000_0000_0003, "user")


def timed(fn, repeats: int = 1):
    """(best wall time over ``repeats`` calls, last result)."""
    best, result = float("inf"), None
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def gap(a, b) -> float:
    return max(float(np.max(np.abs(np.asarray(getattr(a, n)) - np.asarray(getattr(b, n)))))
               for n in ("releases", "block_averages", "output"))


def settings_for(oracle: str, d: int, records: int, multi_records: int) -> tuple[dict, int]:
    """(keyword arguments, number of records) of the benchmark run of ``oracle``."""
    common = dict(oracle=oracle, smoothing_radius=0.1, step_bound=0.01, step_size=0.05, directions=d, lipschitz=1.0,
                  dp_delta=1e-5)
    if oracle in ref.SINGLE_PASS_ORACLES:
        return dict(common, blocks=10, block_length=20, tree_size=20, B1=50, B2=5, noise_std=0.5,
                    clip_hardening=oracle not in ref.FIRST_ORDER_ORACLES), records
    return dict(common, blocks=4, block_length=5, tree_size=5, noise_std=(0.5, 1.0)), multi_records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="Streams seed of the problem (default 0)")
    parser.add_argument("--d", type=int, default=10, help="dimension d (default 10)")
    parser.add_argument("--records", type=int, default=2000, help="records of a single-pass run (default 2000)")
    parser.add_argument("--multi-records", type=int, default=100, help="records n of a multi-pass run (default 100)")
    parser.add_argument("--replicates", type=int, default=16, help="R for the batching ratio (default 16)")
    parser.add_argument("--repeats", type=int, default=3, help="fast repeats, best taken (default 3)")
    parser.add_argument("--oracles", nargs="*", default=list(ref.ORACLES), choices=ref.ORACLES,
                        help="the oracles to time (default all)")
    args = parser.parse_args(argv)

    d = args.d
    objective = RidgeSum.random(d, max(args.records, args.multi_records),
                                Streams(args.seed).generator("bench_nsnc_improved", "data"), lipschitz=1.0,
                                profile="wshape", tau=1.0, offset_scale=2.0)
    x0 = np.zeros(d)
    ok = True
    print(f"nsnc_improved, RidgeSum[wshape] d = {d}, σ given, δ = 1e-5 (reference vs reference.fast, same draws)")
    for oracle in args.oracles:
        kwargs, n = settings_for(oracle, d, args.records, args.multi_records)
        data = objective.data[:n]
        function = objective.gradient if oracle in ref.FIRST_ORDER_ORACLES else objective.loss
        T = kwargs["blocks"] * kwargs["block_length"]
        batches = (f"B1 = {kwargs['B1']}, B2 = {kwargs['B2']}" if oracle in ref.SINGLE_PASS_ORACLES
                   else f"n = {n} every step")
        print(f"\n{oracle}: K = {kwargs['blocks']}, M = {kwargs['block_length']}, Σ = {kwargs['tree_size']}, "
              f"{batches}, m = {d}{', clip_hardening' if kwargs.get('clip_hardening') else ''}  ({T} steps)")

        def run(module, seed=1, noise_seed=BENCH_SECRET, _kwargs=kwargs, _data=data, _function=function):
            return module.nsnc_improved(_function, _data, x0, seed=seed, noise_seed=noise_seed, **_kwargs)

        run(fast)  # the privacy plan and clip radii are memoised: neither backend's time includes them
        ref_time, want = timed(lambda: run(ref))
        fast_time, got = timed(lambda: run(fast), args.repeats)
        agreement = gap(got, want)
        bitwise = all(np.array_equal(getattr(got, name), getattr(want, name))
                      for name in ("releases", "block_averages", "output"))
        ok &= agreement == 0.0 and got.output_index == want.output_index
        print(f"  reference {ref_time:8.3f} s   fast {fast_time:7.3f} s   "
              f"ratio reference/fast {ref_time / fast_time:6.1f}x   "
              f"max |fast − ref| = {agreement:.3g} (bitwise equal: {bitwise})")

        R = args.replicates
        seeds = list(replicate_seeds(args.seed + 1, R))
        secrets = BENCH_SECRET.spawn(R)
        separate_time, _ = timed(lambda: [run(fast, seeds[r], secrets[r]) for r in range(R)])
        batched_time, batched = timed(lambda: run(fast, seeds, list(secrets)), args.repeats)
        shared_time, _ = timed(lambda: run(fast, seeds[0], list(secrets)), args.repeats)
        check = fast.select_replicate(batched, R - 1)
        single = run(fast, seeds[R - 1], secrets[R - 1])
        same = np.array_equal(check.releases, single.releases) and check.output_index == single.output_index
        ok &= same
        print(f"  R = {R}: {R} separate fast runs {separate_time:7.3f} s ({separate_time / R * 1e3:7.1f} ms each); "
              f"batched {batched_time:6.3f} s — ratio separate/batched {separate_time / batched_time:5.1f}x; "
              f"one public seed, {R} secret seeds {shared_time:6.3f} s — ratio {separate_time / shared_time:5.1f}x "
              f"(replicate {R - 1} = its single run: {same}); reference / batched per replicate "
              f"{ref_time * R / batched_time:6.1f}x")
    print("\nagreement:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
