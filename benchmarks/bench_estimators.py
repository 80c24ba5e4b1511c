"""Benchmark: zo_o2nc Alg 1 (GRAD) — reference loop vs the vectorized float64 backend, same draws.

Builds d = 100, b = 64 samples and m = d = 100 unit-sphere directions per sample from
``Streams(seed)`` (the reference gets the mpmath copies of the very draws the fast backend gets), a
nonsmooth ridge loss f(x; z) = |<a_z, x> − c_z| with random unit a_z, and computes
``two_point_estimate`` twice:

* reference (``reference.estimators``): plain loops over samples and directions, in mpmath at
  ``--dps`` digits (default 30), or in float64 with ``--arithmetic float64``; timed once;
* fast (``reference.fast.estimators``): one vectorized float64 loss call; best of ``--repeats``.

It prints the agreement (max |fast − ref| / max |ref|, required ≤ ``--tolerance`` = 1e-10), both
times and the speed ratio (target ≥ 100× against the mpmath reference). Exit status 1 if the
agreement fails; the speed target is reported, not enforced.

    .venv/bin/python benchmarks/bench_estimators.py [--seed 0] [--arithmetic mpmath|float64]
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

from reference import estimators as ref  # noqa: E402
from reference.fast import estimators as fast  # noqa: E402
from reference.precision import dot, is_mp, to_mp, working_precision  # noqa: E402
from reference.rng import Streams, sample_sphere  # noqa: E402

SPEED_TARGET = 100.0


def ridge_loss(x, z):
    """f(x; z) = |<a, x> − c| with z = (a, c); mpmath for a single mpmath point, else NumPy broadcasting."""
    if is_mp(x) or is_mp(z):
        return abs(dot(z[:-1], x) - z[-1])
    return np.abs(np.sum(z[..., :-1] * x, axis=-1) - z[..., -1])


def build_problem(seed: int, d: int, b: int, m: int, arithmetic: str):
    """x, the batch of rows (a_z, c_z), and the directions for the fast and the reference backends."""
    streams = Streams(seed).child("bench_estimators")
    data = streams.generator("data")
    x = data.standard_normal(d) / np.sqrt(d)
    a = data.standard_normal((b, d))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    c = 0.1 * data.standard_normal((b, 1))
    batch = np.concatenate([a, c], axis=1)
    directions = sample_sphere(streams.generator("directions"), (b, m), d)
    if arithmetic == "mpmath":  # same generator key: the same Gaussian draws, normalised in mpmath
        ref_directions = sample_sphere(streams.generator("directions"), (b, m), d, arithmetic="mpmath")
        return x, batch, directions, to_mp(x), to_mp(batch), ref_directions
    return x, batch, directions, x, batch, directions


def max_relative_difference(fast_value: np.ndarray, ref_value: np.ndarray) -> tuple[float, float]:
    """(max_k |fast_k − ref_k| / max_k |ref_k|, ‖fast − ref‖ / ‖ref‖), differences taken in the reference's
    arithmetic before rounding to float."""
    diff = np.array([float(f - r) for f, r in zip(fast_value, ref_value, strict=True)])
    ref_float = np.array([float(r) for r in ref_value])
    return (
        float(np.max(np.abs(diff)) / np.max(np.abs(ref_float))),
        float(np.linalg.norm(diff) / np.linalg.norm(ref_float)),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="Streams seed (default 0)")
    parser.add_argument("--d", type=int, default=100, help="dimension d (default 100)")
    parser.add_argument("--b", type=int, default=64, help="batch size b (default 64)")
    parser.add_argument("--m", type=int, default=None, help="directions per sample m (default d)")
    parser.add_argument("--perturbation", type=float, default=1e-2, help="δ (default 1e-2)")
    parser.add_argument("--arithmetic", choices=("mpmath", "float64"), default="mpmath",
                        help="arithmetic of the reference loop (default mpmath)")
    parser.add_argument("--dps", type=int, default=30, help="mpmath decimal digits (default 30)")
    parser.add_argument("--repeats", type=int, default=7, help="fast repeats, best taken (default 7)")
    parser.add_argument("--tolerance", type=float, default=1e-10, help="max relative difference (default 1e-10)")
    args = parser.parse_args(argv)
    d, b = args.d, args.b
    m = d if args.m is None else args.m

    with working_precision(args.dps):
        start = time.perf_counter()
        x, batch, directions, x_ref, batch_ref, directions_ref = build_problem(args.seed, d, b, m, args.arithmetic)
        setup_time = time.perf_counter() - start

        start = time.perf_counter()
        ref_value = ref.two_point_estimate(ridge_loss, x_ref, batch_ref, directions_ref, args.perturbation)
        ref_time = time.perf_counter() - start

        fast_times = []
        for _ in range(max(1, args.repeats)):
            start = time.perf_counter()
            fast_value = fast.two_point_estimate(ridge_loss, x, batch, directions, args.perturbation)
            fast_times.append(time.perf_counter() - start)
        fast_time = min(fast_times)

        rel_max, rel_norm = max_relative_difference(fast_value, ref_value)

    evaluations = 2 * b * m
    ratio = ref_time / fast_time
    ref_label = f"mpmath (dps {args.dps})" if args.arithmetic == "mpmath" else "float64"
    print("two_point_estimate (zo_o2nc Alg 1, GRAD), ridge loss |<a_z, x> - c_z|")
    print(f"d = {d}, b = {b}, m = {m}, δ = {args.perturbation:g}, seed = {args.seed}, "
          f"{evaluations} loss evaluations; setup (draws) {setup_time:.2f} s")
    print()
    print(f"{'backend':<12} {'arithmetic':<16} {'time [s]':>12} {'per eval [µs]':>14}  timing")
    print(f"{'reference':<12} {ref_label:<16} {ref_time:>12.4f} {1e6 * ref_time / evaluations:>14.3f}  once")
    print(f"{'fast':<12} {'float64':<16} {fast_time:>12.6f} {1e6 * fast_time / evaluations:>14.3f}  "
          f"best of {len(fast_times)}")
    print()
    agreement_ok = rel_max <= args.tolerance
    print(f"max |fast - ref| / max |ref| = {rel_max:.3e}   (required <= {args.tolerance:.0e}: "
          f"{'PASS' if agreement_ok else 'FAIL'})")
    print(f"‖fast - ref‖ / ‖ref‖         = {rel_norm:.3e}")
    target = (f"target >= {SPEED_TARGET:.0f}x: {'met' if ratio >= SPEED_TARGET else 'not met'}"
              if args.arithmetic == "mpmath" else "target applies to the mpmath reference")
    print(f"speed ratio reference / fast  = {ratio:,.1f}x   ({target})")
    return 0 if agreement_ok else 1


if __name__ == "__main__":
    sys.exit(main())
