"""Benchmark: spider_sosp Algorithm 2 (Liu–Talwar private SpiderBoost) — the reference's record-at-a-time oracles vs
the batched float64 backend (reference.fast.spider_sosp), same draws.

Problem: the cosine family of ``reference.objectives_sosp`` (c_j = 1, s = (+1, −1, …, −1), τ = 0.5: a strict saddle at
0), x0 = 0, n records drawn from it, d = 2 and 10; the unit-mode settings of
``reference.algorithms.spider_sosp_theory.spider_settings`` at ε = 4, δ = 1e-5, with σ calibrated by
``spider_sosp_sigma("gdp_exact", …)`` (global tree); the public seed and an explicit secret seed shared by both
backends.

It prints, for n = 10⁴ and 10⁵ and each d, measured in one run (ratios, not timed assertions): the steps and O1
steps of the run, the reference's time (once), the fast backend's (best of ``--repeats``), their ratio, and whether
the two runs agree (iterates bitwise, and the public trace). Exit status 1 if an agreement fails.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_spider_sosp.py [--repeats 3]
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

from reference.algorithms import spider_sosp as ref  # noqa: E402
from reference.algorithms.spider_sosp_privacy import spider_sosp_sigma  # noqa: E402
from reference.algorithms.spider_sosp_theory import spider_settings  # noqa: E402
from reference.fast import spider_sosp as fast  # noqa: E402
from reference.objectives_sosp import CosineFamily  # noqa: E402
from reference.secrets import SecretSeed  # noqa: E402

#: The secret seed of the agreement check: explicit, so that both backends draw the same noise (a benchmark value,
#: never a real secret).
BENCH_SECRET = SecretSeed(0x5EC2E7_0000_0000_0000_0000_0000_0005, "user")
EPSILON, DELTA = 4.0, 1e-5


def timed(fn, repeats: int = 1):
    """(best wall time over ``repeats`` calls, last result)."""
    best, result = float("inf"), None
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def problem(n: int, d: int):
    """(gradient, data, x0, config) of the benchmark run."""
    family = CosineFamily(np.ones(d), np.r_[1.0, -np.ones(d - 1)], 0.5)
    x0 = np.zeros(d)
    gap = family.loss_gap(x0)
    constants = dict(lipschitz=family.lipschitz, smoothness=family.smoothness, loss_gap=gap, d=d, n=n)
    sigma = float(spider_sosp_sigma("gdp_exact", epsilon=EPSILON, delta=DELTA, **constants))
    settings = spider_settings(n, d, family.lipschitz, family.smoothness, family.hessian_lipschitz, gap, EPSILON,
                               DELTA, noise_std=sigma)
    data = family.sample(np.random.default_rng(1), n)
    return family.gradient, data, x0, settings.config()


def agree(a, b) -> bool:
    ta, tb = a.trace, b.trace
    return bool(np.array_equal(a.iterates, b.iterates) and np.array_equal(ta.released, tb.released)
                and ta.kinds == tb.kinds and np.array_equal(ta.batch_sizes, tb.batch_sizes)
                and ta.perturbation_steps == tb.perturbation_steps and ta.halt_reason == tb.halt_reason)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="fast runs per case (best time is kept)")
    args = parser.parse_args(argv)
    failed = False
    print(f"{'n':>7} {'d':>3} {'steps':>6} {'O1':>4} {'reference s':>12} {'fast s':>9} {'ratio':>7}  agree")
    for n in (10_000, 100_000):
        for d in (2, 10):
            gradient, data, x0, config = problem(n, d)
            run_ref = lambda: ref.stochastic_spider(gradient, data, x0, config, seed=0,  # noqa: E731
                                                    noise_seed=BENCH_SECRET)
            run_fast = lambda: fast.stochastic_spider(gradient, data, x0, config, seed=0,  # noqa: E731
                                                      noise_seed=BENCH_SECRET)
            t_ref, want = timed(run_ref)
            t_fast, got = timed(run_fast, args.repeats)
            same = agree(got, want)
            failed |= not same
            print(f"{n:>7} {d:>3} {want.trace.steps:>6} {want.trace.kinds.count('O1'):>4} {t_ref:>12.3f} "
                  f"{t_fast:>9.4f} {t_ref / t_fast:>7.1f}  {'yes' if same else 'NO'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
