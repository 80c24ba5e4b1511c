"""bgm21 (Bassily, Guzmán, Menart, "Differentially Private Stochastic Optimization: New Results in Convex and
Non-Convex Settings", NeurIPS 2021) at CPU scale: the paper has no experiments, so this study runs its algorithms with
their theorems' settings on the built-in problems of ``reference.objectives_bgm21`` (exact population quantities) and
sets the measured accuracy beside each theorem's rate.

Runs go through ``reference.runner_bgm21`` (``prepare_bgm21``/``execute_bgm21``, the library behind ``dpref run
bgm21``): the problem, the theorem's settings, the algorithm, the ledger's certified ε and the population measure at
every output candidate. The reported accuracy is its MEAN OVER THE OUTPUT CANDIDATES — the exact expectation over
the uniformly drawn output of Algorithms 1, 6 (line 15) and 2 (line 5); Phased-SGD and Algorithm 5 have one output.
δ = 1e-6 throughout; every run certifies its ε by the ledger (``certified_epsilon``, at most the target).

(5) Theorem 5 — Phased-SGD with Algorithm 3's oracle on ``abs-sphere`` (L0|⟨x, w⟩ − y|, x on the unit sphere of R^d,
    d = 5, W the unit ℓ_2 ball): excess population risk F(w) − F* against n ∈ {500, 1000, 2000, 4000} (--quick: {250,
    500}) for ε ∈ {2, 8}, beside the rate L0R_xD(√(d ln(1/δ))/(nε) + 1/√n).
(6) Theorem 6 — Algorithm 5 (noisy Frank–Wolfe) on ``abs-cube`` (x uniform on {±1}^d, W the ℓ_1 ball as the polytope
    of its J = 2d vertices) at n = 600 (--quick: 300), ε = 1: excess population risk against d ∈ {2, 4, 8, 14}
    (--quick: {2, 4}) with the certified Laplace scale (the default, bgm21.E28) and with the printed
    Talwar–Thakurta–Zhang scale ("ttz15"), whose certified ε the ledger reports; beside the rate's
    √(ln J·ln n) and √(ln d) factors.
(8, 11) Theorems 8 and 11 — Algorithm 1 on ``sigmoid-l1`` (ℓ_1 ball as a polytope) and Algorithm 6 on ``sigmoid-l2``
    (ℓ_2 ball), d = 10, with the practical schedule (one pass over the data, R and b minimising the rates' leading
    terms; the theory schedule reads a few per cent of the data at these n): the mean Frank–Wolfe gap over the
    output candidates against n ∈ {1000, 2000, 4000, 8000, 16000} (--quick: {1000, 4000}) for ε ∈ {1, 8}, beside
    ``rate_theorem8`` / ``rate_theorem11``.
(16) Theorem 16 — Algorithm 2 (p = 2) on ``sigmoid-wc`` (the ℓ_2 sigmoid problem as ρ-weakly convex, ρ = L1), d = 10,
    ε ∈ {1, 8}: proximal near-stationarity max{1, βD}·‖prox^β_F(w) − w‖_2 (the ϑ a point attains in eq. (5)), mean over
    the candidates w_1..w_R, against n ∈ {250, 500, 1000, 2000} (--quick: {250, 500}), beside ϑ of eq. (7).

Every rate is printed with constant 1; the figures draw each rate rescaled to the measured mean at the smallest n
(its SHAPE is the comparison; the constant is not the paper's). The log-log slope of the measured means in n (or in
ln J for (6)) is an ordinary least-squares fit with a bootstrap standard error over replicates (resampled whole,
2000 draws from a fixed public stream), beside the same fit to the rate over the same n.

Seeds: replicate r uses the public seeds ``replicate_seeds(SEED, R)[r]`` (record order) and ``replicate_seeds(
DATA_SEED, R)[r]`` (records) in every cell, and the secret noise seed ``secret_seeds(NOISE_SEED, R)[r]``; all three
bases are fixed in this file and printed, so the figures are reproducible — and for that reason these runs are
demonstrations, not private releases (a private run draws its noise seed from the operating system).

Backend: Algorithms 1 and 6 run on ``reference.fast.bgm21_sfw`` (the bitwise twin) when it is installed
(``reference.runner.fast_twin_available``), the others on the reference. Runtime with --workers 2 on 2 shared cores:
121 s wall (440 runs, 238 s inside the runs; Phased-SGD and Algorithm 2 call Python once per record and take two
thirds of it); --quick: 2 replicates, 80 runs, about 7 s in one process (files ``*_quick.*``).

    PYTHONPATH=. python examples/bgm21_study.py [--quick] [--workers 2] --out DIR [--overwrite] [--quiet]

writes ``bgm21_convex.png`` (5, 6), ``bgm21_nonconvex.png`` (8, 11, 16), ``bgm21_study.csv`` (per cell: mean,
standard error and median over replicates of the measure, the rate, the certified ε), ``bgm21_study_runs.csv``
(every run), ``bgm21_study_slopes.csv`` (the fitted slopes) and ``bgm21_study_meta.csv`` (seeds, backend, wall time)
into DIR (checked before computing: a non-empty directory is refused without --overwrite; the documentation's
figures come from ``--out docs/img --overwrite``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread per worker process
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from reference.algorithms.bgm21_theory import rate_theorem8, rate_theorem11, rate_theorem16  # noqa: E402
from reference.progress import progress_bar  # noqa: E402
from reference.reporting import prepare_output_dir  # noqa: E402
from reference.rng import Streams  # noqa: E402
from reference.runner import fast_twin_available  # noqa: E402
from reference.runner_bgm21 import execute_bgm21, prepare_bgm21  # noqa: E402
from reference.secrets import replicate_seeds, secret_seeds  # noqa: E402

SEED = 20210712  # public: record order
DATA_SEED = 20210713  # public: the records
NOISE_SEED = 0xB6_21_2021_0712_5EED_C0DE  # the noise (printed: not a private run)
DELTA = 1e-6
D = 10
REPLICATES, QUICK_REPLICATES = 10, 2
BOOTSTRAP = 2000
SFW_BACKEND = "fast" if fast_twin_available("bgm21_sfw") else "reference"

#: part -> (algorithm, problem, theorem, measure label)
PARTS = {
    "thm5": ("phased-sgd", "abs-sphere", "Theorem 5", "excess risk F(w) − F*"),
    "thm6": ("noisy-fw", "abs-cube", "Theorem 6", "excess risk F(w) − F*"),
    "thm8": ("polysfw", "sigmoid-l1", "Theorem 8", "mean FW gap over candidates"),
    "thm11": ("nsfw", "sigmoid-l2", "Theorem 11", "mean FW gap over candidates"),
    "thm16": ("prox-smd", "sigmoid-wc", "Theorem 16", "max{1, βD}·‖prox − w‖ (mean over candidates)"),
}
GRIDS = {  # part -> (full, quick): the n grid (the d grid for thm6) and the ε values (the scales for thm6)
    "thm5": (((500, 1000, 2000, 4000), (2.0, 8.0)), ((250, 500), (2.0, 8.0))),
    "thm6": (((2, 4, 8, 14), ("certified", "ttz15")), ((2, 4), ("certified", "ttz15"))),
    "thm8": (((1000, 2000, 4000, 8000, 16000), (1.0, 8.0)), ((1000, 4000), (1.0, 8.0))),
    "thm11": (((1000, 2000, 4000, 8000, 16000), (1.0, 8.0)), ((1000, 4000), (1.0, 8.0))),
    "thm16": (((250, 500, 1000, 2000), (1.0, 8.0)), ((250, 500), (1.0, 8.0))),
}
THM5_D = 5
THM6_N, QUICK_THM6_N, THM6_EPSILON = 600, 300, 1.0
COLOURS = {1.0: "tab:red", 2.0: "tab:orange", 8.0: "tab:blue", "certified": "tab:green", "ttz15": "tab:purple"}


def tasks(quick: bool) -> list[dict]:
    """Every run: (part, grid value, ε or scale, replicate) with the replicate's seeds."""
    replicates = QUICK_REPLICATES if quick else REPLICATES
    seeds, data_seeds = replicate_seeds(SEED, replicates), replicate_seeds(DATA_SEED, replicates)
    noise = secret_seeds(NOISE_SEED, replicates, public_seeds=(*seeds, *data_seeds))
    out = []
    for part, grids in GRIDS.items():
        values, options = grids[1] if quick else grids[0]
        for r in range(replicates):
            for value in values:
                for option in options:
                    task = {"part": part, "replicate": r, "seed": int(seeds[r]), "data_seed": int(data_seeds[r]),
                            "noise_seed": noise[r]}
                    if part == "thm6":
                        task.update(n=QUICK_THM6_N if quick else THM6_N, d=value, epsilon=THM6_EPSILON, scale=option)
                    else:
                        task.update(n=value, d=THM5_D if part == "thm5" else D, epsilon=option, scale="")
                    out.append(task)
    return out


def cost(task: dict) -> float:
    """Rough relative cost (to start the long runs first): Phased-SGD and Algorithm 2 call Python per record."""
    per_record = {"thm5": 1.0, "thm6": 0.4, "thm8": 0.02, "thm11": 0.03, "thm16": 0.5}[task["part"]]
    return per_record * task["n"]


def theory_rate(part: str, problem, params, n: int, d: int, epsilon: float) -> float:
    """The theorem's rate with constant 1 at the run's problem constants."""
    P = problem
    if part == "thm5":
        return P.L0 * P.R_x * P.D * (math.sqrt(d * math.log(1 / DELTA)) / (n * epsilon) + 1 / math.sqrt(n))
    if part == "thm6":
        return P.L0 * P.R_x * P.D * (math.log(1 / DELTA) ** 0.25 * math.sqrt(math.log(P.J) * math.log(n))
                                     / math.sqrt(n * epsilon) + math.sqrt(math.log(d)) / math.sqrt(n))
    if part == "thm8":
        return rate_theorem8(n, epsilon, DELTA, P.J, P.D, P.L0, P.L1)
    if part == "thm11":
        return rate_theorem11(n, d, P.p, epsilon, DELTA, P.D, P.L0, P.L1)
    return rate_theorem16(n, d, 2.0, P.rho, P.L0, P.D, epsilon, DELTA)


def run_task(task: dict) -> dict:
    """One run and its population measures."""
    start = time.perf_counter()
    part = task["part"]
    algorithm, problem, _, _ = PARTS[part]
    options = {}
    if part in ("thm8", "thm11"):
        options = {"schedule": "practical", "backend": SFW_BACKEND}
    elif part == "thm6":
        options = {"laplace_scale": task["scale"]}
    prepared = prepare_bgm21(algorithm, problem=problem, n=task["n"], d=task["d"], epsilon=task["epsilon"],
                             delta=DELTA, seed=task["seed"], data_seed=task["data_seed"],
                             noise_seed=task["noise_seed"], **options)
    outcome = execute_bgm21(prepared)
    P, params, measures = outcome.problem, outcome.params, outcome.measures
    scale = P.normalised if part == "thm16" else (lambda v: v)
    result = outcome.result
    row = {key: task[key] for key in ("part", "n", "d", "epsilon", "scale", "replicate", "seed")}
    row.update({
        "algorithm": algorithm, "problem": problem, "backend": outcome.settings["backend"],
        "measure_mean": scale(float(np.mean(measures))),
        "measure_output": scale(float(measures[outcome.output_position])),
        "measure_start": scale(float(outcome.start_measure)),
        "candidates": int(len(measures)),
        "rate": theory_rate(part, P, params, task["n"], task["d"], task["epsilon"]),
        "certified_epsilon": float(outcome.report.epsilon), "meets_target": bool(outcome.report.meets_target),
        "data_fraction": float(getattr(result, "data_fraction", math.nan)),
        "rounds": getattr(params, "n_rounds", None), "batch": getattr(params, "b", getattr(params, "batch_size", None)),
        "fw_steps": getattr(params, "steps", None),
        "lap_scale": getattr(params, "lap_scale", None), "scale_ratio": getattr(params, "scale_ratio", None),
        "seconds": time.perf_counter() - start,
    })
    return row


def _se(values) -> float:
    values = np.asarray(values, dtype=np.float64)
    return float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else math.nan


def cell_summary(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for key, cell in runs.groupby(["part", "epsilon", "scale", "n", "d"], sort=True):
        row = dict(zip(["part", "epsilon", "scale", "n", "d"], key))
        row["replicates"] = len(cell)
        for column in ("measure_mean", "measure_output", "certified_epsilon", "data_fraction", "seconds"):
            row[f"{column}_mean"] = float(cell[column].mean())
            row[f"{column}_se"] = _se(cell[column])
            row[f"{column}_median"] = float(cell[column].median())
        row["certified_epsilon_max"] = float(cell["certified_epsilon"].max())
        row["meets_target_fraction"] = float(cell["meets_target"].astype(float).mean())
        for column in ("measure_start", "rate", "candidates", "rounds", "batch", "fw_steps", "lap_scale",
                       "scale_ratio"):
            row[column] = cell[column].iloc[0]
        row["measure_over_rate"] = row["measure_mean_mean"] / row["rate"]
        rows.append(row)
    return pd.DataFrame(rows)


def _ols_slope(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.polyfit(x, y, 1)[0])


def slopes(runs: pd.DataFrame, quick: bool) -> pd.DataFrame:
    """Log-log slope of the replicate means in n (in ln J = ln 2d for thm6), bootstrap s.e. over replicates, and
    the same fit to the rate."""
    gen = Streams(SEED).generator("bgm21 study", "bootstrap")
    rows = []
    for (part, epsilon, scale), cell in runs.groupby(["part", "epsilon", "scale"], sort=True):
        axis = "d" if part == "thm6" else "n"
        table = cell.pivot_table(index="replicate", columns=axis, values="measure_mean")
        grid = np.array(table.columns, dtype=np.float64)
        if grid.size < 2:
            continue
        x = np.log(np.log(2 * grid)) if part == "thm6" else np.log(grid)
        values = table.to_numpy()
        slope = _ols_slope(x, np.log(values.mean(axis=0)))
        draws = gen.integers(values.shape[0], size=(BOOTSTRAP, values.shape[0]))
        boot = [_ols_slope(x, np.log(values[idx].mean(axis=0))) for idx in draws]
        rates = cell.groupby(axis)["rate"].first().reindex(table.columns).to_numpy()
        rows.append({"part": part, "epsilon": epsilon, "scale": scale,
                     "against": "ln ln(2d) (ln J)" if part == "thm6" else "ln n",
                     "grid": " ".join(f"{v:g}" for v in grid), "slope": slope, "slope_se": float(np.std(boot, ddof=1)),
                     "rate_slope": _ols_slope(x, np.log(rates)), "replicates": values.shape[0]})
    return pd.DataFrame(rows)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _grid_ticks(ax, values) -> None:
    """The grid values as the x ticks (plain numbers, no minor labels)."""
    from matplotlib.ticker import NullFormatter

    ax.set_xticks(values)
    ax.set_xticklabels([f"{v:g}" for v in values], fontsize=7)
    ax.xaxis.set_minor_formatter(NullFormatter())


def _panel(ax, table, part, option_column, axis, title, ylabel, slope_table):
    cells = table[table["part"] == part]
    for option, cell in cells.groupby(option_column, sort=True):
        cell = cell.sort_values(axis)
        colour = COLOURS.get(option, "black")
        label = f"ε = {option:g}" if option_column == "epsilon" else f"λ {option}"
        fit = slope_table[(slope_table["part"] == part) & (slope_table[option_column] == option)]
        if len(fit):
            label += f": slope {fit['slope'].iloc[0]:.2f} ± {fit['slope_se'].iloc[0]:.2f} " \
                     f"(rate {fit['rate_slope'].iloc[0]:.2f})"
        ax.errorbar(cell[axis], cell["measure_mean_mean"], yerr=cell["measure_mean_se"], marker="o", ms=4,
                    capsize=2, color=colour, label=label)
        first = cell.iloc[0]
        ax.plot(cell[axis], cell["rate"] * first["measure_mean_mean"] / first["rate"], color=colour, linestyle="--",
                linewidth=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _grid_ticks(ax, sorted(cells[axis].unique()))
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(title, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.set_xlabel("d (J = 2d)" if axis == "d" else "records n", fontsize=8)
    ax.legend(fontsize=7)


def plot_convex(table, slope_table, path: Path, thm6_n: int) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    _panel(axes[0], table, "thm5", "epsilon", "n", f"(5) Phased-SGD on abs-sphere, d = {THM5_D}: excess risk vs n",
           "F(w) − F* (mean ± s.e.)", slope_table)
    _panel(axes[1], table, "thm6", "scale", "d", f"(6) Algorithm 5 on abs-cube, n = {thm6_n}, ε = {THM6_EPSILON:g}: "
           "excess risk vs d", "F(w) − F* (mean ± s.e.)", slope_table)
    cells = table[table["part"] == "thm6"]
    for scale, cell in cells.groupby("scale", sort=True):
        cell = cell.sort_values("d")
        axes[2].errorbar(cell["d"], cell["certified_epsilon_mean"], yerr=cell["certified_epsilon_se"], marker="o",
                         ms=4, capsize=2, color=COLOURS[scale], label=f"λ {scale}: certified ε")
    axes[2].axhline(THM6_EPSILON, color="grey", linestyle=":", label="target ε")
    axes[2].set_xscale("log")
    _grid_ticks(axes[2], sorted(cells["d"].unique()))
    axes[2].set_title("(6) the ε the ledger certifies for each Laplace scale", fontsize=9)
    axes[2].set_xlabel("d (J = 2d)", fontsize=8)
    axes[2].grid(True, which="both", alpha=0.3)
    axes[2].legend(fontsize=7)
    fig.suptitle(f"bgm21 §3 (convex GLLs), δ = {DELTA:g}; dashed: the theorem's rate (constant 1) rescaled to the "
                 "first point; slopes: log-log OLS of the means (thm 6: against ln J), bootstrap s.e.", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_nonconvex(table, slope_table, path: Path) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    _panel(axes[0], table, "thm8", "epsilon", "n", f"(8) Algorithm 1 on sigmoid-l1 (J = {2 * D}), practical "
           "schedule", "population FW gap (mean over candidates)", slope_table)
    _panel(axes[1], table, "thm11", "epsilon", "n", "(11) Algorithm 6 on sigmoid-l2, practical schedule",
           "population FW gap (mean over candidates)", slope_table)
    _panel(axes[2], table, "thm16", "epsilon", "n", "(16) Algorithm 2 (p = 2) on sigmoid-wc",
           "max{1, βD}‖prox − w‖ (mean over candidates)", slope_table)
    fig.suptitle(f"bgm21 §4–5 (non-convex), d = {D}, δ = {DELTA:g}; dashed: the theorem's rate (constant 1) rescaled "
                 "to the first point; mean ± s.e. over replicates", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"the smallest grids and {QUICK_REPLICATES} replicates (seconds)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2; 1: in this process)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="directory for the PNGs and the CSVs (created if needed; refused when not empty "
                             "without --overwrite)")
    parser.add_argument("--overwrite", action="store_true", help="write into a non-empty --out directory")
    parser.add_argument("--quiet", "-q", "--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if not 1 <= args.workers <= 64:
        parser.error("--workers must lie in [1, 64]")
    try:  # before computing: a result that cannot be written is refused now, not lost after the runs
        out = prepare_output_dir(args.out, overwrite=args.overwrite, option="--out")
    except ValueError as exc:
        parser.error(str(exc))
    replicates = QUICK_REPLICATES if args.quick else REPLICATES
    print(f"bgm21 study: Algorithms 1/6 on the {SFW_BACKEND} backend; public seed bases {SEED} (order), {DATA_SEED} "
          f"(records), noise seed base {NOISE_SEED} (replicate_seeds / secret_seeds, {replicates} replicates)"
          + (" [quick]" if args.quick else ""))
    start = time.perf_counter()
    work = sorted(tasks(args.quick), key=lambda t: -cost(t))
    bar = progress_bar(len(work), "bgm21 study", "run", enabled=not args.quiet)
    rows = []
    if args.workers == 1:
        for task in work:
            rows.append(run_task(task))
            bar.update()
    else:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            for row in pool.map(run_task, work, chunksize=1):
                rows.append(row)
                bar.update()
    bar.close()
    runs = pd.DataFrame(rows).sort_values(["part", "epsilon", "scale", "n", "d", "replicate"]).reset_index(drop=True)
    numeric = runs[["measure_mean", "measure_output", "rate", "certified_epsilon"]].to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(numeric)):
        raise ArithmeticError("a run produced a non-finite measure, rate or certified epsilon")
    table = cell_summary(runs)
    slope_table = slopes(runs, args.quick)
    suffix = "_quick" if args.quick else ""
    runs.to_csv(out / f"bgm21_study_runs{suffix}.csv", index=False, float_format="%.6g")
    table.to_csv(out / f"bgm21_study{suffix}.csv", index=False, float_format="%.6g")
    slope_table.to_csv(out / f"bgm21_study_slopes{suffix}.csv", index=False, float_format="%.6g")
    plot_convex(table, slope_table, out / f"bgm21_convex{suffix}.png", QUICK_THM6_N if args.quick else THM6_N)
    plot_nonconvex(table, slope_table, out / f"bgm21_nonconvex{suffix}.png")
    seconds = time.perf_counter() - start
    meta = {"command": "python examples/bgm21_study.py " + " ".join(sys.argv[1:] if argv is None else argv),
            "sfw_backend": SFW_BACKEND, "public_seed_base": SEED, "data_seed_base": DATA_SEED,
            "noise_seed_base": NOISE_SEED, "replicates": replicates, "workers": args.workers, "runs": len(runs),
            "wall_seconds": round(seconds, 1), "run_seconds_total": round(float(runs["seconds"].sum()), 1),
            "python": platform.python_version(), "numpy": np.__version__}
    pd.DataFrame({"key": list(meta), "value": [str(v) for v in meta.values()]}).to_csv(
        out / f"bgm21_study_meta{suffix}.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_rows", None, "display.max_columns", None):
        print(table[["part", "epsilon", "scale", "n", "d", "measure_mean_mean", "measure_mean_se",
                     "measure_mean_median", "measure_start", "rate", "measure_over_rate", "certified_epsilon_max",
                     "candidates", "rounds", "batch", "data_fraction_mean"]].round(5))
        print(slope_table.round(4))
    print(f"{len(runs)} runs in {seconds:.1f} s wall, {runs['seconds'].sum():.1f} s in the runs; wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
