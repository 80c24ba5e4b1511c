"""Benchmark: DPZero (dpzero Alg 2) and MeZO — reference loops vs the vectorized float64 backend, same draws.

Problem: the §6.1 effective-rank quadratic (``EffectiveRankQuadratic``, mode "sqrt") with d = 50,
n = 200 rows, x_0 = 0, T = 20 steps, λ = 1e-3, C = 2, full batch; DPZero with the Lemma 2.2 plan
(ε = 2, δ = 1e-5), MeZO with clipping and no noise (no privacy plan to compute).

It prints, measured in one run (ratios, not timed assertions):

* reference / fast for one run of each algorithm (the reference once, the fast backend best of
  ``--repeats``), on the same public seed and the same explicit secret seed (a fixed ``SecretSeed``; the
  default would draw fresh entropy per run), with the agreement of the two trajectories (max |fast − ref| /
  max |ref|, required ≤ ``--tolerance``) and the time of the privacy plan alone (mpmath calibration,
  re-exported by the fast backend; the reference memoises it, so the runs below reuse it);
* per replicate: R = ``--replicates`` single fast runs (public seeds ``replicate_seeds(0, R)``, fresh secret
  entropy) vs one batched fast run with those public seeds, and with one public seed and R secret seeds
  (shared directions); and the same for an audit-sized MeZO run (d = 2, n = 100, T = 100, Poisson B = 10),
  where one replicate's step is too small to amortise Python's overhead.

Exit status 1 if the agreement fails.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_dpzero.py [--replicates 100] [--repeats 5]
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

from reference.algorithms import dpzero as ref  # noqa: E402
from reference.fast import dpzero as fast  # noqa: E402
from reference.objectives import EffectiveRankQuadratic  # noqa: E402
from reference.rng import Streams  # noqa: E402
from reference.secrets import SecretSeed, replicate_seeds  # noqa: E402

#: The secret seed of the agreement check: explicit, so that both backends draw the same noise (a benchmark
#: value, never a real secret).
BENCH_SECRET = SecretSeed(0x5EC2E7_0000_0000_0000_0000_0000_0001, "user")


def timed(fn, repeats: int = 1):
    """(best wall time over ``repeats`` calls, last result)."""
    best, result = float("inf"), None
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="Streams seed of the problem (default 0)")
    parser.add_argument("--d", type=int, default=50, help="dimension d (default 50)")
    parser.add_argument("--n", type=int, default=200, help="rows n (default 200)")
    parser.add_argument("--steps", type=int, default=20, help="T (default 20)")
    parser.add_argument("--replicates", type=int, default=100, help="R for the batching ratio (default 100)")
    parser.add_argument("--repeats", type=int, default=5, help="fast repeats, best taken (default 5)")
    parser.add_argument("--tolerance", type=float, default=1e-10, help="max relative difference (default 1e-10)")
    args = parser.parse_args(argv)

    objective = EffectiveRankQuadratic(args.d, args.n, "sqrt", Streams(args.seed).generator("bench_dpzero", "data"))
    x0 = np.zeros(args.d)
    common = dict(steps=args.steps, step_size=0.05, perturbation=1e-3, clip_threshold=2.0, record_trajectory=True)
    private = dict(common, epsilon=2.0, delta=1e-5)
    algorithms = {
        "dpzero": (lambda module, **kw: module.dpzero(objective.loss, objective.data, x0, **private, **kw)),
        "mezo": (lambda module, **kw: module.mezo(objective.loss, objective.data, x0, **common, **kw)),
    }
    plan_time, _ = timed(lambda: ref.privacy_plan(clip_threshold=2.0, n=args.n, steps=args.steps, epsilon=2.0,
                                                  delta=1e-5))
    print("DPZero (Alg 2) and MeZO, effective-rank quadratic [sqrt]")
    print(f"d = {args.d}, n = {args.n}, T = {args.steps}, full batch; Lemma 2.2 plan alone (first call): "
          f"{plan_time:.4f} s")
    print()
    print(f"{'algorithm':<10} {'reference [s]':>14} {'fast [s]':>10} {'ref / fast':>11} {'max rel diff':>13}")
    ok = True
    for name, call in algorithms.items():
        secret = dict(noise_seed=BENCH_SECRET) if name == "dpzero" else {}
        ref_time, want = timed(lambda: call(ref, seed=1, **secret))
        fast_time, got = timed(lambda: call(fast, seed=1, **secret), args.repeats)
        diff = float(np.max(np.abs(got.trajectory - want.trajectory)) / np.max(np.abs(want.trajectory)))
        ok &= diff <= args.tolerance and got.output_index == want.output_index and got.ledger == want.ledger
        ok &= got.diagnostics == want.diagnostics
        print(f"{name:<10} {ref_time:>14.4f} {fast_time:>10.5f} {ref_time / fast_time:>10.1f}x {diff:>13.2e}")
    print(f"agreement (max rel diff <= {args.tolerance:.0e}, same tau and ledger): {'PASS' if ok else 'FAIL'}")
    print()

    replicates = args.replicates
    seeds = list(replicate_seeds(0, replicates))
    print(f"per replicate, R = {replicates}: {replicates} single fast runs vs one batched fast run")
    print(f"{'algorithm':<10} {'layout':<28} {'singles [s]':>12} {'batched [s]':>12} {'singles / batched':>18}")
    for name, call in algorithms.items():
        singles, _ = timed(lambda: [call(fast, seed=s) for s in seeds])
        batched, _ = timed(lambda: call(fast, seed=seeds))
        print(f"{name:<10} {'seed = replicate_seeds(0, R)':<28} {singles:>12.3f} {batched:>12.4f} "
              f"{singles / batched:>17.1f}x")
        if name == "dpzero":
            secrets = BENCH_SECRET.spawn(replicates)
            shared_singles, _ = timed(lambda: [call(fast, seed=7, noise_seed=s) for s in secrets])
            shared, _ = timed(lambda: call(fast, seed=7, noise_seed=list(secrets)))
            print(f"{name:<10} {'seed = 7, R secret seeds':<28} {shared_singles:>12.3f} {shared:>12.4f} "
                  f"{shared_singles / shared:>17.1f}x")
    print("(the privacy plan is memoised by the reference: computed once, shared by every run above)")

    # Audit-sized problem: the per-step work of one replicate is tiny, so batching removes the Python overhead.
    small = EffectiveRankQuadratic(2, 100, "identity", Streams(args.seed).generator("bench_dpzero", "small"))
    audit = dict(steps=100, step_size=0.05, perturbation=0.1, clip_threshold=1.0, batching="poisson", batch_size=10)

    def small_run(**kw):
        return fast.mezo(small.loss, small.data, np.zeros(2), **audit, **kw)

    singles, _ = timed(lambda: [small_run(seed=s) for s in seeds])
    batched, _ = timed(lambda: small_run(seed=seeds))
    print(f"{'mezo':<10} {'d=2 n=100 T=100 Poisson B=10':<28} {singles:>12.3f} {batched:>12.4f} "
          f"{singles / batched:>17.1f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
