"""zo_o2nc (Zhang, Tran, Cutkosky, ICLR 2024) at CPU scale: the paper has no experiments, so this study measures
two of its claims on a synthetic nonsmooth nonconvex problem (docs/papers/zo_o2nc.md shows the figures).

(a) Oracles and "privacy for free" (Theorem 4.9 vs App. E). At M = 20 000 records and ρ ∈ {0.3, 1, 3, 10, ∞}:
    the tree oracle (Algorithm 3 + 4, Theorem 4.9's settings), its σ = 0 twin (the same T, K, η and public draws,
    no noise: what privacy costs), and the naive oracle (Algorithm 3 + 6, App. E's settings) with B = 1 and with
    B = max(1, round(d^{3/2}/ρ)) (the batch behind the printed rate, zo_o2nc.E9). ρ = ∞ is the non-private run
    (σ = 0, T = T1). Theorem 4.9 predicts the privacy term to vanish — privacy for free — once ρ ≳ √d·ε.
(b) Stationarity against the number of records M ∈ {2 500, 5 000, 10 000, 20 000, 40 000} for the tree oracle at
    ρ ∈ {0.3, 1, ∞}, with Theorem 4.9's explicit bound (``thm49_bound``) for comparison.

Problem (``reference.runner.build_ridge_problem``, the default of ``dpref run zo_o2nc``): the W-shaped ridges
f(x; z) = ||<a, x> − c| − 1| (L = 1, nonsmooth, nonconvex), a population of 1 000 rows z = (a, c), a uniform on
the sphere, c ~ N(0, 0.5²), records drawn from it with replacement, d = 4, δ = 0.25, x_1 = (5/√d)·1,
F* = F(x_1); T rule "max" (zo_o2nc.E5), exact tree count (zo_o2nc.E3), exact naive σ (zo_o2nc.E8), δ_DP = 1e-6.

Metrics, at the output w̄ = w̄^{k*}, on the POPULATION (the exact law of the records: the population risk F), the
held-out draws in the CSV too (``reference.runner.O2NC_DIAGNOSTICS``): the Goldstein norm ‖∇F(w̄)‖_{2δ} (radius 2δ,
zo_o2nc.E7) bracketed by [lower, upper] (upper: min-norm point of the gradients at w̄ and at 256 points sampled in
the ball, ``reference.stationarity.goldstein_stationarity``; lower: the ridge-by-ridge interval bound of
``reference.runner.goldstein_interval``), and the proxy ‖(1/T) Σ_t ∇F̂_δ(w_t^{k*})‖ (the quantity Theorem 4.9's
proof bounds; an upper bound on ‖∇F(w̄)‖_{2δ} too). Every number is a function of the released values and public
data only. Replicates differ by their public seed (directions, segment points, k*; ``replicate_seeds``) and by
their noise (fresh operating-system entropy every run); the population and the records are the same. Means and
standard errors over 4 replicates.

Backend: ``reference.fast.zo_o2nc`` when installed (bitwise the reference's float64 run), else the reference.
Runtime: about 2 minutes on 2 cores with --workers 2 (--quick: ~30 s, M = 5 000 in (a), M ≤ 10 000 and ρ ∈ {1, ∞}
in (b), 2 replicates; files ``*_quick.*``).

    PYTHONPATH=. python examples/zo_o2nc_study.py [--quick] [--workers 2] [--out DIR] [--overwrite] [--quiet]

writes ``zo_o2nc_oracles.png`` (a), ``zo_o2nc_samples.png`` (b), ``zo_o2nc_study_runs.csv`` (every run) and
``zo_o2nc_study.csv`` (means and standard errors per cell) into DIR (default ``./zo_o2nc_study_out``; checked
before computing, a non-empty directory refused without --overwrite; the documentation's figures come from
``--out docs/img --overwrite``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread per worker process
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from reference.progress import progress_bar  # noqa: E402
from reference.reporting import prepare_output_dir  # noqa: E402
from reference.runner import fast_zo_o2nc_available, run_zo_o2nc, summary  # noqa: E402
from reference.secrets import replicate_seeds  # noqa: E402

SEED = 20240607
PROBLEM, D, DELTA, POPULATION, DP_DELTA = "wshape", 4, 0.25, 1000, 1e-6
ORACLE_SAMPLES, QUICK_ORACLE_SAMPLES = 20_000, 5_000
RHOS = (0.3, 1.0, 3.0, 10.0, math.inf)
SAMPLES, QUICK_SAMPLES = (2_500, 5_000, 10_000, 20_000, 40_000), (2_500, 5_000, 10_000)
SAMPLE_RHOS, QUICK_SAMPLE_RHOS = (0.3, 1.0, math.inf), (1.0, math.inf)
REPLICATES = {"oracles": 4, "samples": 4}
QUICK_REPLICATES = 2
METHODS = {  # label -> (algorithm, keyword arguments of run_zo_o2nc)
    "tree (Alg 4)": ("zo_o2nc", {}),
    "tree, sigma = 0 twin": ("zo_o2nc", {"noise": "none"}),
    "naive B = 1 (Alg 6)": ("zo_o2nc-naive", {"batch_rule": "one"}),
    "naive B = d^1.5/rho": ("zo_o2nc-naive", {"batch_rule": "dimension"}),
}
COLOURS = {"tree (Alg 4)": "tab:blue", "tree, sigma = 0 twin": "tab:cyan", "naive B = 1 (Alg 6)": "tab:red",
           "naive B = d^1.5/rho": "tab:orange"}
RHO_COLOURS = {0.3: "tab:red", 1.0: "tab:blue", 3.0: "tab:green", 10.0: "tab:purple", math.inf: "black"}
METRICS = ("objective", "goldstein_lower", "goldstein_upper", "proxy", "stationarity_upper")


def tasks(quick: bool) -> list[dict]:
    """Every run of the study: part, method, ρ, M, replicate and its public seed."""
    out = []
    samples_a = QUICK_ORACLE_SAMPLES if quick else ORACLE_SAMPLES
    replicates = {part: QUICK_REPLICATES if quick else count for part, count in REPLICATES.items()}
    seeds = {part: replicate_seeds(SEED, count) for part, count in replicates.items()}
    for r in range(replicates["oracles"]):
        for rho in RHOS:
            for method in METHODS:
                if math.isinf(rho) and method in ("tree, sigma = 0 twin", "naive B = d^1.5/rho"):
                    continue  # ρ = ∞ is already σ = 0, and its naive batch rule gives B = 1
                out.append({"part": "oracles", "method": method, "rho": rho, "samples": samples_a, "replicate": r,
                            "seed": int(seeds["oracles"][r])})
    for r in range(replicates["samples"]):
        for rho in QUICK_SAMPLE_RHOS if quick else SAMPLE_RHOS:
            for samples in QUICK_SAMPLES if quick else SAMPLES:
                out.append({"part": "samples", "method": "tree (Alg 4)", "rho": rho, "samples": samples,
                            "replicate": r, "seed": int(seeds["samples"][r])})
    return out


def run_task(task: dict) -> dict:
    """One run of ``reference.runner.run_zo_o2nc`` and its public record (fresh secret noise every run)."""
    algorithm, options = METHODS[task["method"]]
    start = time.perf_counter()
    outcome = run_zo_o2nc(algorithm, problem=PROBLEM, d=D, samples=task["samples"], population=POPULATION,
                          rho=task["rho"], smoothing_radius=DELTA, delta=DP_DELTA, seed=task["seed"], **options)
    record = summary(outcome)
    row = {**task, "backend": record["backend"], "T": record["T"], "K": record["K"],
           "batch_size": record["batch_size"], "noise_std": record["noise_std"],
           "epsilon": record["epsilon_claimed"], "theory_bound": record["theory_bound"],
           "seconds": time.perf_counter() - start}
    for data in ("population", "heldout"):
        for metric in METRICS:
            row[f"{data}_{metric}"] = record[f"{data}_{metric}_output"]
        row[f"{data}_goldstein_upper_start"] = record[f"{data}_goldstein_upper_initial"]
        row[f"{data}_objective_start"] = record[f"{data}_objective_initial"]
    return row


def cell_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Means and standard errors over replicates of every (part, method, ρ, M)."""
    keys = ["part", "method", "rho", "samples"]
    values = [f"{data}_{metric}" for data in ("population", "heldout")
              for metric in (*METRICS, "goldstein_upper_start")]
    grouped = runs.groupby(keys, sort=False)
    table = grouped[values + ["T", "K", "batch_size", "noise_std", "epsilon", "theory_bound", "seconds"]].mean()
    errors = grouped[values].std(ddof=1) / np.sqrt(grouped.size().to_numpy()[:, None])
    table = table.join(errors.add_suffix("_se"))
    table["replicates"] = grouped.size()
    return table.reset_index()


def _rho_position(rho: float) -> float:
    return 30.0 if math.isinf(rho) else rho


def _rho_label(rho: float, epsilon) -> str:
    if math.isinf(rho):
        return "∞\n(not private)"
    return f"{rho:g}\n(ε={epsilon:.3g})"


def plot_oracles(table: pd.DataFrame, path: Path, samples: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    part = table[table["part"] == "oracles"]
    fig, axes = plt.subplots(1, 2, figsize=(12.5, 4.6), sharey=True)
    for ax, metric, title in ((axes[0], "stationarity_upper", "upper bound on ‖∇F(w̄)‖_{2δ}: min(Goldstein, proxy)"),
                              (axes[1], "proxy", "proxy ‖(1/T) Σ_t ∇F̂_δ(w_t)‖ (output epoch)")):
        for method in METHODS:
            rows = part[part["method"] == method].sort_values("rho", key=lambda s: s.map(_rho_position))
            ax.errorbar(rows["rho"].map(_rho_position), rows[f"population_{metric}"],
                        yerr=rows[f"population_{metric}_se"], marker="o", ms=4, capsize=2, label=method,
                        color=COLOURS[method], linestyle="--" if "twin" in method else "-")
        start = float(part["population_goldstein_upper_start"].mean())
        ax.axhline(start, color="grey", linestyle=":", linewidth=1, label="Goldstein upper bound at x_1")
        ax.set_xscale("log")
        ax.set_ylim(bottom=0)
        tree = part[part["method"] == "tree (Alg 4)"].sort_values("rho", key=lambda s: s.map(_rho_position))
        ax.set_xticks([_rho_position(r) for r in tree["rho"]])
        ax.set_xticklabels([_rho_label(r, e) for r, e in zip(tree["rho"], tree["epsilon"])], fontsize=8)
        ax.minorticks_off()
        ax.set_xlabel("ρ of (α, αρ²/2)-RDP  (ε of the tree run at δ = 1e-6)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("population, at the output w̄ (mean ± s.e.)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"zo_o2nc, W-shaped ridges, d = {D}, M = {samples}, δ = {DELTA}: tree oracle vs naive oracle; "
                 "the σ = 0 twin has the tree run's T, K, η", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def plot_samples(table: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    part = table[table["part"] == "samples"]
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for rho in sorted(part["rho"].unique(), key=_rho_position):
        rows = part[part["rho"] == rho].sort_values("samples")
        label = "ρ = ∞ (not private)" if math.isinf(rho) else f"ρ = {rho:g}"
        colour = RHO_COLOURS.get(rho, "grey")
        ax.errorbar(rows["samples"], rows["population_proxy"], yerr=rows["population_proxy_se"], marker="o", ms=4,
                    capsize=2, color=colour, label=f"{label}: proxy")
        ax.errorbar(rows["samples"], rows["population_goldstein_upper"], yerr=rows["population_goldstein_upper_se"],
                    marker="s", ms=3, capsize=2, color=colour, linestyle="--", label=f"{label}: Goldstein upper")
        ax.plot(rows["samples"], rows["theory_bound"], color=colour, linestyle=":", linewidth=1,
                label=f"{label}: Theorem 4.9 bound")
    ax.axhline(float(part["population_goldstein_upper_start"].mean()), color="grey", linestyle=":", linewidth=1,
               label="Goldstein upper bound at x_1")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("records M")
    ax.set_ylabel("‖∇F(w̄)‖_{2δ} bounds, population (mean ± s.e.)")
    ax.set_title(f"zo_o2nc tree oracle, W-shaped ridges, d = {D}, δ = {DELTA}: stationarity against M", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller M, fewer cells and 2 replicates (~30 s)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--out", default="zo_o2nc_study_out", metavar="DIR",
                        help="directory for the PNGs and the CSVs (default ./zo_o2nc_study_out; created if needed)")
    parser.add_argument("--overwrite", action="store_true", help="write into a non-empty --out directory")
    parser.add_argument("--quiet", "-q", "--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be >= 1")
    try:  # before computing: a result that cannot be written is refused now, not lost after the runs
        out = prepare_output_dir(args.out, overwrite=args.overwrite, option="--out")
    except ValueError as exc:
        parser.error(str(exc))
    work = sorted(tasks(args.quick), key=lambda t: -t["samples"] * (2 if "naive B = 1" in t["method"] else 1))
    start = time.perf_counter()
    rows = []
    bar = progress_bar(len(work), "zo_o2nc study", "run", enabled=not args.quiet)
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for row in pool.map(run_task, work):
            rows.append(row)
            bar.update()
    bar.close()
    runs = pd.DataFrame(rows).sort_values(["part", "method", "rho", "samples", "replicate"]).reset_index(drop=True)
    table = cell_summary(runs)
    suffix = "_quick" if args.quick else ""
    runs.to_csv(out / f"zo_o2nc_study_runs{suffix}.csv", index=False, float_format="%.6g")
    table.to_csv(out / f"zo_o2nc_study{suffix}.csv", index=False, float_format="%.6g")
    plot_oracles(table, out / f"zo_o2nc_oracles{suffix}.png",
                 QUICK_ORACLE_SAMPLES if args.quick else ORACLE_SAMPLES)
    plot_samples(table, out / f"zo_o2nc_samples{suffix}.png")
    seconds = time.perf_counter() - start
    with pd.option_context("display.width", 200, "display.max_rows", None):
        columns = ["population_stationarity_upper", "population_stationarity_upper_se", "population_proxy",
                   "population_goldstein_lower", "population_goldstein_upper", "epsilon", "T", "K"]
        print(table.set_index(["part", "method", "rho", "samples"])[columns].round(4))
    backend = runs["backend"].iloc[0]
    print(f"{len(runs)} runs ({backend} backend{'' if fast_zo_o2nc_available() else ', fast twin not installed'}) "
          f"in {seconds:.0f} s wall, {runs['seconds'].sum():.0f} s in the runs; wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
