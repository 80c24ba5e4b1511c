"""Benchmark: our certified PLD interval for ε of the Poisson-subsampled Gaussian against dp_accounting's PLD and
prv_accountant, time and width in one run.

The accountant benchmarked is ``reference.accounting.pld`` (Koskela, Jälkö & Honkela 2020; Doroshenko et al. 2022
connect-the-dots; the module docstring proves that [lower, upper] contains the exact ε of the composed pair). The
compositions, all add/remove, at δ = 1e-5 unless stated:

* q = 0.01, noise multiplier z = 1, T ∈ {1e3, 1e4, 1e5} (DP-SGD's canonical setting, as ``bench_accounting.py``);
* the whole DPZero Poisson run of the audit scenario ``dpzero-full-run-poisson`` (T = 100, B = 10 of n = 100, so
  q = 0.1, C = 1, z from the plan's RDP accountant at ε = 2, δ = 1e-5: the run whose tight ε the audits report);
* the whole DPZero Poisson run of ``examples/dpzero_torch_finetune.py`` at its defaults (T = 200, B = 256 of
  n = 2000, so q = 0.128, z from the same RDP accountant at ε = 2, δ = 1e-5).

For each, in one run: ours at the default grid (``pair.epsilon_interval(δ)``, h = 1e-4) and refined to a relative
width of 1e-3 (``pld.epsilon_interval(pair, δ, tolerance=1e-3)``): lower, upper, relative width (upper − lower)/upper,
seconds, h; dp_accounting's ``PLDAccountant()`` (default discretisation 1e-4, pessimistic estimate): ε and seconds;
prv_accountant's ``PRVAccountant`` (``eps_error`` 0.01, ``delta_error`` δ/1000, as ``proofs_checks/adapters``):
lower, estimate, upper and seconds; whether each library value lies inside our default-grid interval; and the time
ratio ours (default grid) / dp_accounting.

Timing: ``time.perf_counter``, the smallest of ``--repeats`` (3) calls; one warm-up call per accountant on a small
composition first (imports, FFT plans), which is not reported. Our discretisation cache
(``pld.discretize``) is cleared before every timed call, so each time includes the whole computation. The machine
is shared and noisy: compare the ratios of one run, not absolute seconds across runs.

Exit status: 0; 1 if a library contradicts our certified interval (dp_accounting's pessimistic ε below our lower
end, or prv_accountant's [lower, upper] disjoint from ours: one of the two would be wrong); 2 (one line on stderr)
if dp_accounting or prv_accountant is missing (extra "compare").

    nice -n 19 .venv/bin/python benchmarks/bench_pld.py [--repeats 3] [--skip-prv-above 100000]
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
import warnings
from pathlib import Path

try:
    import reference  # noqa: F401
except ImportError:  # run as a script from a checkout: put the project root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SAMPLING_PROBABILITY = 0.01
NOISE_MULTIPLIER = 1.0
STEPS = (1_000, 10_000, 100_000)
DELTA = 1e-5
TOLERANCE = 1e-3
PRV_EPS_ERROR = 0.01
PRV_DELTA_ERROR_FRACTION = 1e-3
# The DPZero Poisson runs: (label, T, B, n, target ε, δ, C).
AUDIT_RUN = ("dpzero-full-run-poisson", 100, 10, 100, 2.0, 1e-5, 1.0)
EXAMPLE_RUN = ("dpzero_torch_finetune defaults", 200, 256, 2000, 2.0, 1e-5, 1.0)


def best_of(fn, repeats: int, before=None):
    """(value of the last call, smallest wall time over ``repeats`` calls); ``before`` runs untimed before each."""
    best, value = math.inf, None
    for _ in range(repeats):
        if before is not None:
            before()
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return value, best


def ours_default(q, z, steps, delta):
    from reference.accounting import pld

    pair = pld.poisson_gaussian_pld(noise_multiplier=z, sampling_probability=q).compose(steps)
    lower, upper = pair.epsilon_interval(delta)
    return lower, upper, pair.h


def ours_refined(q, z, steps, delta):
    from reference.accounting import pld

    pair = pld.poisson_gaussian_pld(noise_multiplier=z, sampling_probability=q).compose(steps)
    return pld.epsilon_interval(pair, delta, tolerance=TOLERANCE)


def dp_accounting_epsilon(q, z, steps, delta):
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), steps)
    return float(accountant.get_epsilon(delta))


def prv_bounds(q, z, steps, delta):
    import prv_accountant

    mechanism = prv_accountant.PoissonSubsampledGaussianMechanism(sampling_probability=q, noise_multiplier=z)
    accountant = prv_accountant.PRVAccountant(prvs=mechanism, max_self_compositions=steps, eps_error=PRV_EPS_ERROR,
                                              delta_error=PRV_DELTA_ERROR_FRACTION * delta)
    return tuple(float(v) for v in accountant.compute_epsilon(delta=delta, num_self_compositions=steps))


def dpzero_noise_multiplier(steps, batch, n, epsilon, delta, clip):
    """z of the DPZero plan (batching "poisson", accountant "rdp": the default; q = B/n, zero-out)."""
    from reference.algorithms.dpzero import privacy_plan

    plan = privacy_plan(clip_threshold=clip, n=n, steps=steps, epsilon=epsilon, delta=delta, batching="poisson",
                        batch_size=batch)
    return float(plan.noise_multiplier), float(plan.epsilon_claimed)


def _inside(value, lower, upper):
    return "yes" if lower <= value <= upper else ("below" if value < lower else "above")


def measure(label, q, z, steps, delta, repeats, with_prv):
    from reference.accounting import pld

    clear = pld.clear_caches
    (lo, up, h), t_ours = best_of(lambda: ours_default(q, z, steps, delta), repeats, clear)
    (rlo, rup, rh), t_ref = best_of(lambda: ours_refined(q, z, steps, delta), repeats, clear)
    dpa, t_dpa = best_of(lambda: dp_accounting_epsilon(q, z, steps, delta), repeats)
    prv, t_prv = (best_of(lambda: prv_bounds(q, z, steps, delta), repeats) if with_prv
                  else ((math.nan,) * 3, math.nan))
    return dict(label=label, q=q, z=z, steps=steps, delta=delta, lo=lo, up=up, h=h, t_ours=t_ours, rlo=rlo, rup=rup,
                rh=rh, t_ref=t_ref, dpa=dpa, t_dpa=t_dpa, prv=prv, t_prv=t_prv)


def _width(lo, up):
    return (up - lo) / up if up > 0 and math.isfinite(up) else math.inf


def report(rows, repeats) -> int:
    print(f"ε at δ of T Poisson-subsampled Gaussian steps (add/remove); seconds: best of {repeats} after a warm-up")
    print()
    print("| composition | ours h=1e-4 [lower, upper] | rel. width | s | ours tol 1e-3 [lower, upper] | rel. width "
          "| h | s | dp_accounting PLD ε | s | inside | prv_accountant (lower, estimate, upper) | s | inside "
          "| ours/dp_accounting time |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    status = 0
    for r in rows:
        prv_lo, prv_est, prv_up = r["prv"]
        if math.isnan(prv_est):
            prv_text, prv_time, prv_in = "skipped", "–", "–"
        else:
            prv_text = f"({prv_lo:.5f}, {prv_est:.5f}, {prv_up:.5f})"
            prv_time = f"{r['t_prv']:.2f}"
            prv_in = f"estimate {_inside(prv_est, r['lo'], r['up'])}, upper {_inside(prv_up, r['lo'], r['up'])}"
            if prv_up < r["lo"] or prv_lo > r["up"]:
                status = 1
        if r["dpa"] < r["lo"] * (1 - 1e-9):
            status = 1
        print(f"| {r['label']} | [{r['lo']:.7f}, {r['up']:.7f}] | {_width(r['lo'], r['up']):.1e} | {r['t_ours']:.2f} "
              f"| [{r['rlo']:.7f}, {r['rup']:.7f}] | {_width(r['rlo'], r['rup']):.1e} | {r['rh']:.3g} "
              f"| {r['t_ref']:.2f} | {r['dpa']:.7f} | {r['t_dpa']:.2f} | {_inside(r['dpa'], r['lo'], r['up'])} "
              f"| {prv_text} | {prv_time} | {prv_in} | {r['t_ours'] / r['t_dpa']:.2f} |")
    if status:
        print("bench_pld: a library value contradicts our certified interval", file=sys.stderr)
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="best of N timed calls (default 3)")
    parser.add_argument("--skip-prv-above", type=int, default=None, metavar="T",
                        help="skip prv_accountant for T above this (it takes ~30 s per call at T = 1e5)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        print(f"bench_pld: --repeats must be >= 1, got {args.repeats}", file=sys.stderr)
        return 2
    for module, package in (("dp_accounting", "dp-accounting"), ("prv_accountant", "prv-accountant")):
        try:
            __import__(module)
        except ImportError:
            print(f"bench_pld: {module} is not installed (pip install {package}, or the 'compare' extra)",
                  file=sys.stderr)
            return 2
    logging.getLogger("absl").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Warm-up (imports, FFT plans, first-call costs): not reported.
        ours_default(0.1, 1.0, 10, DELTA), ours_refined(0.1, 1.0, 10, DELTA)
        dp_accounting_epsilon(0.1, 1.0, 10, DELTA), prv_bounds(0.1, 1.0, 10, DELTA)
        runs = [(f"q={SAMPLING_PROBABILITY:g}, z={NOISE_MULTIPLIER:g}, T={steps:.0e}", SAMPLING_PROBABILITY,
                 NOISE_MULTIPLIER, steps, DELTA) for steps in STEPS]
        notes = []
        for label, steps, batch, n, epsilon, delta, clip in (AUDIT_RUN, EXAMPLE_RUN):
            z, claimed = dpzero_noise_multiplier(steps, batch, n, epsilon, delta, clip)
            runs.append((f"{label}: q={batch / n:g}, z={z:.6g}, T={steps}", batch / n, z, steps, delta))
            notes.append(f"{label}: T = {steps}, B = {batch} of n = {n} (q = {batch / n:g}), C = {clip:g}, z = {z!r} "
                         f"(the plan's RDP accountant at ε = {epsilon:g}, δ = {delta:g}; RDP claims ε = {claimed:.6f})")
        rows = []
        for label, q, z, steps, delta in runs:
            with_prv = args.skip_prv_above is None or steps <= args.skip_prv_above
            rows.append(measure(label, q, z, steps, delta, args.repeats, with_prv))
    status = report(rows, args.repeats)
    print()
    for note in notes:
        print(f"* {note}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
