"""Benchmark: bgm21 Algorithm 1 (A_polySFW, §4.1), Algorithm 6 (A_nSFW, §4.2) and Algorithm 2 (§5.2, p = 2) — the
reference's record-at-a-time gradient sums vs the batched float64 backends (reference.fast.bgm21_sfw,
reference.fast.bgm21_prox), same draws.

Problem: a smooth logistic loss f(w, (x, y)) = log(1 + exp(−y⟨x, w⟩)) on records x ~ N(0, I_d/d), y = ±1 (its
gradient is written once for a record and a batch of records); Algorithm 1 over the ℓ1 ball of radius 1 (J = 2d
vertices, printed s_r at ε = 4, δ = 1e-5, L0 = L1 = 1), Algorithm 6 over the ℓ1.5 ball of radius 1 (printed noise
factor, σ̂ from η_{r,t−1}); Algorithm 2 over the ℓ2 ball of radius 1 with ρ = 1/4 (the loss's smoothness bound at
‖x‖ ≤ 1, read as weak convexity), β = 2ρ, and the solver's decreasing step with calibrated noise (ε = 4, δ = 1e-5,
L0 = 1); the public seed and an explicit secret seed shared by both backends.

It prints, for two sizes (d, b, R) measured in one run (ratios, not timed assertions; for Algorithm 2, b is the batch
m and "steps" counts the R·T solver steps, each reading its m records): the steps and records read, the reference's
time (once), the fast backend's (best of ``--repeats``), their ratio, and whether the two runs agree bitwise
(iterates, output, public trace; for Algorithm 2 also the solver paths). Exit status 1 if an agreement fails.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_bgm21.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

try:
    import reference  # noqa: F401
except ImportError:  # run as a script from a checkout: put the project root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reference.algorithms import bgm21_prox as ref_prox  # noqa: E402
from reference.algorithms import bgm21_sfw as ref  # noqa: E402
from reference.fast import bgm21_prox as fast_prox  # noqa: E402
from reference.fast import bgm21_sfw as fast  # noqa: E402
from reference.geometry import LpBall, Polytope  # noqa: E402
from reference.secrets import SecretSeed  # noqa: E402

#: The secret seed of the agreement check: explicit, so that both backends draw the same noise (a benchmark value,
#: never a real secret).
BENCH_SECRET = SecretSeed(0xB6D21_0000_0000_0000_0000_0000_0007, "user")
SEED = 2021
SIZES = ((10, 64, 6), (50, 1024, 8))  # (d, b, R): 63 and 255 steps
PROX_SIZES = ((10, 100, 4, 100), (50, 1000, 8, 50))  # (d, m, R, T): 400 and 400 solver steps


def logistic_gradient(w, z):
    """∇f(w, z) = −y·x/(1 + exp(y⟨x, w⟩)) for z = (x, y); z one record (p,) or a batch (m, p). ⟨x, w⟩ is an
    elementwise product summed along the last axis, the same reduction for a record and for each row of a batch (a
    matrix product would sum a batch in another order than ``np.dot`` sums one record)."""
    x, y = z[..., :-1], z[..., -1:]
    return -y * x / (1.0 + np.exp(y * np.sum(x * w, axis=-1, keepdims=True)))


def _data(d: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(d)
    x = rng.standard_normal((n, d)) / np.sqrt(d)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return np.column_stack([x, y])


def _same(a, b) -> bool:
    if not (np.array_equal(a.iterates, b.iterates) and np.array_equal(a.output, b.output)):
        return False
    for field in dataclasses.fields(a.trace):
        x, y = getattr(a.trace, field.name), getattr(b.trace, field.name)
        if field.name == "batch_indices":
            if not all(np.array_equal(p, q) for p, q in zip(x, y)):
                return False
        elif not np.array_equal(np.asarray(x), np.asarray(y)):
            return False
    return True


def _same_prox(a, b) -> bool:
    """Algorithm 2's runs: candidates, output, solver paths, batches and each round's public solver trace."""
    if not (np.array_equal(a.iterates, b.iterates) and np.array_equal(a.output, b.output)
            and np.array_equal(a.final_iterate, b.final_iterate)
            and all(np.array_equal(p, q) for p, q in zip(a.solver_iterates, b.solver_iterates))
            and all(np.array_equal(p, q) for p, q in zip(a.trace.batch_indices, b.trace.batch_indices))
            and a.trace.output_index == b.trace.output_index):
        return False
    for x, y in zip(a.trace.solver_traces, b.trace.solver_traces):
        if not all(np.array_equal(np.asarray(getattr(x, f.name)), np.asarray(getattr(y, f.name)))
                   for f in dataclasses.fields(x)):
            return False
    return True


def _time(run, repeats: int):
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fast-backend repetitions (best kept)")
    args = parser.parse_args(argv)
    ok = True
    print(f"{'algorithm':<22}{'d':>4}{'b':>6}{'R':>4}{'steps':>7}{'records':>9}{'reference s':>13}{'fast s':>10}"
          f"{'ratio':>8}  agree")
    for d, b, R in SIZES:
        budget = ref.sfw_data_budget(b, R)
        data = _data(d, budget)
        common = dict(n_rounds=R, batch_size=b, epsilon=4.0, delta=1e-5, lipschitz=1.0, smoothness=1.0)
        runs = (
            ("Algorithm 1 (l1 ball)", "poly_sfw", Polytope(LpBall(1.0, 1.0, np.zeros(d)).vertices()),
             ref.PolySFWConfig(**common)),
            ("Algorithm 6 (l1.5 ball)", "noisy_sfw", LpBall(1.5, 1.0, np.zeros(d)), ref.NoisySFWConfig(**common)),
        )
        for label, name, feasible, config in runs:
            def run(module):
                return lambda: getattr(module, name)(logistic_gradient, data, feasible, config, seed=SEED,
                                                     noise_seed=BENCH_SECRET)

            t_ref, want = _time(run(ref), 1)
            t_fast, got = _time(run(fast), args.repeats)
            agree = _same(got, want)
            ok &= agree
            print(f"{label:<22}{d:>4}{b:>6}{R:>4}{want.iterates.shape[0]:>7}{want.trace.records_used:>9}"
                  f"{t_ref:>13.3f}{t_fast:>10.3f}{t_ref / t_fast:>8.1f}  {'bitwise' if agree else 'NO'}")
    for d, m, R, T in PROX_SIZES:
        data = _data(d, m * R)
        ball = LpBall(2.0, 1.0, np.zeros(d))
        config = ref_prox.ProxConfig(n_rounds=R, weak_convexity=0.25, solver=ref_prox.ASCConfig(
            epsilon=4.0, delta=1e-5, lipschitz=1.0, n_steps=T))

        def run(module):
            return lambda: module.prox_guided_psmd(logistic_gradient, data, ball, config, seed=SEED,
                                                   noise_seed=BENCH_SECRET)

        t_ref, want = _time(run(ref_prox), 1)
        t_fast, got = _time(run(fast_prox), args.repeats)
        agree = _same_prox(got, want)
        ok &= agree
        print(f"{'Algorithm 2 (l2 ball)':<22}{d:>4}{m:>6}{R:>4}{R * T:>7}{want.trace.records_used:>9}"
              f"{t_ref:>13.3f}{t_fast:>10.3f}{t_ref / t_fast:>8.1f}  {'bitwise' if agree else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
