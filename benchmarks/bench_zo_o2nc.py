"""Benchmark: zo_o2nc Algorithm 3 + Algorithm 4 (Theorem 4.9) and + Algorithm 6 — reference loops vs the vectorized
float64 backend (reference.fast.zo_o2nc), same draws.

Problem: a RidgeSum objective (``reference.objectives``, profile "wshape", τ = 1, offsets ~ N(0, 2²)) with d = 10
and M = 10⁴ records, x1 = 0, L = 1, δ = 0.1, ρ = 1, F* = 1; Theorem 4.9's settings (``thm49_settings``: T = 202,
K = 24, B1 = 203, B2 = 1 — 4848 rounds, one DIFF record of d = 10 directions per round) and App. E's naive
settings (``naive_settings``); the public seed and an explicit secret seed shared by both backends.

It prints, measured in one run (ratios, not timed assertions):

* reference / fast for one run of each algorithm (the reference once, the fast backend best of ``--repeats``),
  with the agreement of the two runs (max |fast − reference| over releases, epoch averages and output; the
  backend performs the reference's operations in its order, so this is 0 — bitwise — for this objective);
* R = ``--replicates`` separate fast runs vs one batched fast run (R public seeds, and one public seed with R
  secret seeds: the audit layout), per replicate.

With B2 = 1 a round of Theorem 4.9 evaluates only 2d = 20 losses, so a round's cost is mostly Python overhead
(the objective's own argument checks included); batching replicates amortises it.

Last, the Goldstein measurement's minimum-norm point (Definition 2.1): Wolfe's algorithm of the reference
(``reference.stationarity``) against the non-negative least-squares twin (``reference.fast.stationarity``) on hulls
of k gradients in R^d sampled like ``goldstein_stationarity``'s (a shifted Gaussian cloud), with the two certified
intervals, which must overlap (each contains the exact minimum norm).
Exit status 1 if an agreement fails.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_zo_o2nc.py [--replicates 16] [--repeats 3]
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

from reference.algorithms import zo_o2nc as ref  # noqa: E402
from reference.algorithms.zo_o2nc_theory import naive_settings, thm49_settings  # noqa: E402
from reference import stationarity as ref_stationarity  # noqa: E402
from reference.fast import stationarity as fast_stationarity  # noqa: E402
from reference.fast import zo_o2nc as fast  # noqa: E402
from reference.objectives import RidgeSum  # noqa: E402
from reference.rng import Streams  # noqa: E402
from reference.secrets import SecretSeed, replicate_seeds  # noqa: E402

#: The secret seed of the agreement check: explicit, so that both backends draw the same noise (a benchmark value,
#: never a real secret).
BENCH_SECRET = SecretSeed(0x5EC2E7_0000_0000_0000_0000_0000_0002, "user")


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
               for n in ("releases", "epoch_averages", "output"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="Streams seed of the problem (default 0)")
    parser.add_argument("--d", type=int, default=10, help="dimension d (default 10)")
    parser.add_argument("--records", type=int, default=10_000, help="records M (default 10000)")
    parser.add_argument("--replicates", type=int, default=16, help="R for the batching ratio (default 16)")
    parser.add_argument("--repeats", type=int, default=3, help="fast repeats, best taken (default 3)")
    args = parser.parse_args(argv)

    d, M = args.d, args.records
    objective = RidgeSum.random(d, M, Streams(args.seed).generator("bench_zo_o2nc", "data"), lipschitz=1.0,
                                profile="wshape", tau=1.0, offset_scale=2.0)
    x1 = np.zeros(d)
    runs = {
        "zo_o2nc (Alg 4)": ("zo_o2nc", thm49_settings(M, d, 1.0, 0.1, 1.0, 1.0)),
        "zo_o2nc_naive (Alg 6)": ("zo_o2nc_naive", naive_settings(M, d, 1.0, 0.1, 1.0, 1.0)),
    }
    ok = True
    print(f"zo_o2nc, RidgeSum[wshape] d = {d}, M = {M}, ρ = 1, δ = 0.1 (reference vs reference.fast, same draws)")
    for label, (name, chosen) in runs.items():
        blocks = (f"B1 = {chosen.B1}, B2 = {chosen.B2}" if name == "zo_o2nc" else f"B = {chosen.batch_size}")
        print(f"\n{label}: T = {chosen.T}, K = {chosen.K}, {blocks}  ({chosen.T * chosen.K} rounds)")

        def run(module, seed=1, noise_seed=BENCH_SECRET, _name=name, _settings=chosen):
            return getattr(module, _name)(objective.loss, objective.data, x1, settings=_settings, seed=seed,
                                          noise_seed=noise_seed, dp_delta=1e-5)

        ref_time, want = timed(lambda: run(ref))
        fast_time, got = timed(lambda: run(fast), args.repeats)
        agreement = gap(got, want)
        bitwise = all(np.array_equal(getattr(got, n), getattr(want, n)) for n in ("releases", "epoch_averages",
                                                                                  "output"))
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
        same = np.array_equal(check.releases, single.releases)
        ok &= same
        print(f"  R = {R}: {R} separate fast runs {separate_time:7.3f} s ({separate_time / R * 1e3:7.1f} ms each); "
              f"batched {batched_time:6.3f} s — ratio separate/batched {separate_time / batched_time:5.1f}x; "
              f"one public seed, {R} secret seeds {shared_time:6.3f} s — ratio {separate_time / shared_time:5.1f}x "
              f"(replicate {R - 1} = its single run: {same}); reference / batched per replicate "
              f"{ref_time * R / batched_time:6.1f}x")
    ok &= bench_min_norm_point(args.seed, args.repeats)
    print("\nagreement:", "ok" if ok else "FAILED")
    return 0 if ok else 1


def bench_min_norm_point(seed: int, repeats: int) -> bool:
    """Wolfe (reference) vs NNLS (fast) on shifted Gaussian clouds; True if every pair of intervals overlaps."""
    print("\nmin_norm_point (Definition 2.1): Wolfe (reference) vs non-negative least squares (fast)")
    rng = Streams(seed).generator("bench_zo_o2nc", "hulls")
    ok = True
    for k, d in ((64, 10), (400, 50), (2000, 100)):
        rows = rng.standard_normal((k, d)) + 0.3
        ref_time, want = timed(lambda: ref_stationarity.min_norm_point(rows))
        fast_time, got = timed(lambda: fast_stationarity.min_norm_point(rows), repeats)
        overlap = got.lower <= want.upper and want.lower <= got.upper
        ok &= overlap
        print(f"  k = {k:5d}, d = {d:4d}: reference {ref_time * 1e3:8.2f} ms   fast {fast_time * 1e3:7.2f} ms   "
              f"ratio {ref_time / fast_time:5.1f}x   norm {want.norm:.6g} vs {got.norm:.6g}, interval widths "
              f"{want.gap:.2g} / {got.gap:.2g}, overlapping: {overlap}")
    return ok


if __name__ == "__main__":
    raise SystemExit(main())
