"""DPZero paper, Figure 1 at CPU scale: how DPZero, DPGD-0th and DP-GD depend on the dimension d for the three
effective-rank patterns of the synthetic quadratic (dpzero §5, App. B.1; errata dpzero.E10, dpzero.E11 in docs/errata.md).

Problem: ``reference.objectives.EffectiveRankQuadratic``, f(x; z) = ½(x − z)^T A (x − z), z ~ N(1, I_d), with
A = I (identity, r = d), diag(1/√i) (sqrt, r ≈ 2√d) or diag(1/i) (harmonic, r = H_d ≈ ln d + 0.58);
n = 1000 training rows, 10 000 test rows from the same law, d ∈ {20, 50, 100, 200, 500, 1000}.
Methods (the vectorized twin ``reference.fast.dpzero``): DPZero (Algorithm 2), DPGD-0th (Algorithm 1) and
first-order DP-GD, full batch, ε = 2, δ = 1e-6 (Lemma 2.2, the paper's accountant), λ = 1e-4 for both
zeroth-order methods, sphere directions, x_0 = 0 (dpzero.E11), T = 150 iterations, R = 2 replicate runs per setting
with common public seeds (``reference.secrets.replicate_seeds``: spawned, never seed + r). The noise comes
from a secret seed drawn from fresh operating-system entropy for every run (the algorithms' default): the
study is a simulation, but it follows the rule every private run must, so repeated runs of the study differ
by their noise.

Metric — what the figure shows: for every (pattern, d, method) the configuration of a small grid,
step size α ∈ {0.1, 0.3, 1} × clip threshold C ∈ {0.3, 1, 3}, with the smallest TRAINING error
E_τ‖∇F_S(x_τ)‖² = (1/T) Σ_{t<T} ‖∇F_S(x_t)‖² (mean over the R replicates) is selected (dpzero.E11: the paper selected on
test data; we select on training data), and for it the figure plots the TEST gradient norm
E_τ‖∇F_test(x_τ)‖ = (1/T) Σ_{t<T} ‖A(x_t − z̄_test)‖ (mean over the replicates), the quantity of the paper's
Figure 1 ("gradient norm on the test set"), with the released iterate τ ~ Unif{0..T−1} averaged out. The CSV
holds both, the selected (α, C), the standard errors over replicates, the clip fraction and the noise σ.
Selecting on training data, the training metric and the clip fraction are NOT private (computed on the
training data outside the privacy plan): fine for a simulation on synthetic data, never for a real release.

Runtime: about 3 minutes on 2 cores (two worker processes, ``--workers``; 172 s wall, 333 s CPU measured).
``--quick`` runs d ∈ {20, 100} only and writes ``*_quick.*`` files.

    PYTHONPATH=. python examples/dimension_study.py [--quick] [--workers 2] [--out DIR]

writes ``dpzero_dimension_study.png``, ``dpzero_dimension_study.csv`` (the selected configuration of every
(pattern, d, method)) and ``dpzero_dimension_study_grid.csv`` (every configuration) into DIR (default
``./dimension_study_out`` under the current directory; the directory is checked before computing, and a
non-empty one is refused without ``--overwrite``; the figure of the documentation is regenerated with
``--out docs/img --overwrite``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread per worker process
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import itertools  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from reference.fast import dpzero as fast  # noqa: E402
from reference.objectives import QUADRATIC_MODES, EffectiveRankQuadratic  # noqa: E402
from reference.progress import progress_bar  # noqa: E402
from reference.reporting import prepare_output_dir  # noqa: E402
from reference.rng import Streams  # noqa: E402
from reference.secrets import replicate_seeds  # noqa: E402

DIMENSIONS = (20, 50, 100, 200, 500, 1000)
QUICK_DIMENSIONS = (20, 100)
TRAIN, TEST = 1000, 10_000
EPSILON, DELTA = 2.0, 1e-6
PERTURBATION = 1e-4
STEPS = 150
REPLICATES = 2
STEP_SIZES = (0.1, 0.3, 1.0)
CLIPS = (0.3, 1.0, 3.0)
METHODS = ("DPZero", "DPGD-0th", "DP-GD")
SEED = 20240601
COLOURS = {"DPZero": "tab:blue", "DPGD-0th": "tab:orange", "DP-GD": "tab:green"}


class QuadraticLoss:
    """f(x; z_i) = ½x^T A x − (Ax)^T z_i + ½z_i^T A z_i, the same per-sample loss as the objective's, computed with
    one matrix product over the full data (for a diagonal A the finite difference costs one matrix-vector product). Called by the fast
    backend with points (..., 1, d) and all n rows; anything else falls back to the objective."""

    def __init__(self, objective: EffectiveRankQuadratic):
        self.objective = objective
        self.diagonal = objective.hessian_diagonal
        self.weighted_rows = np.ascontiguousarray((objective.data * self.diagonal).T)  # (d, n): A z_i
        self.row_terms = 0.5 * np.sum(self.diagonal * objective.data**2, axis=1)  # ½ z_i^T A z_i

    def __call__(self, x, z):
        x = np.asarray(x)
        if x.ndim < 2 or x.shape[-2] != 1 or z.shape != self.objective.data.shape:
            return self.objective.loss(x, z)
        flat = np.ascontiguousarray(x).reshape(-1, x.shape[-1])
        cross = (flat @ self.weighted_rows).reshape(x.shape[:-2] + (-1,))
        return 0.5 * np.sum(self.diagonal * x * x, axis=-1) - cross + self.row_terms


def _problem(mode: str, d: int):
    """Training objective and the test mean z̄_test; data from the study's seed, one stream per (mode, d)."""
    streams = Streams(SEED)
    objective = EffectiveRankQuadratic(d, TRAIN, mode, streams.generator("dimension_study", "train", mode, d))
    test_mean = (streams.generator("dimension_study", "test", mode, d).standard_normal((TEST, d)) + 1.0).mean(axis=0)
    return objective, test_mean


def _run(method: str, objective, loss, step_size: float, clip: float, seeds):
    # noise_seed omitted: fresh secret entropy per call, spawned into one secret seed per replicate
    common = {"steps": STEPS, "step_size": step_size, "clip_threshold": clip, "epsilon": EPSILON, "delta": DELTA,
              "seed": seeds, "record_trajectory": True}
    x0 = np.zeros(objective.d)
    if method == "DPZero":
        return fast.dpzero(loss, objective.data, x0, perturbation=PERTURBATION, **common)
    if method == "DPGD-0th":
        return fast.dpgd_zeroth_order(loss, objective.data, x0, perturbation=PERTURBATION, **common)
    return fast.dpgd(objective.gradient, objective.data, x0, **common)


def study_cell(task):
    """Every grid configuration of one (mode, d, method): train and test metrics per configuration."""
    mode, d, method = task
    objective, test_mean = _problem(mode, d)
    loss = QuadraticLoss(objective)
    diagonal, train_mean = objective.hessian_diagonal, objective.minimizer()
    seeds = replicate_seeds(SEED, REPLICATES)  # public replicate seeds, spawned from the study's seed
    rows = []
    start = time.process_time()
    for step_size, clip in itertools.product(STEP_SIZES, CLIPS):
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                result = _run(method, objective, loss, step_size, clip, seeds)
        except ValueError as exc:  # the iterates left float64 range: this configuration diverged
            if "finite" not in str(exc):
                raise
            rows.append({"mode": mode, "d": d, "method": method, "effective_rank": objective.effective_rank,
                         "step_size": step_size, "clip": clip, "train_grad_sq": math.inf, "test_grad_norm": math.inf,
                         "diverged": True})
            continue
        path = result.trajectory[:, :STEPS]  # x_0..x_{T-1}: τ ~ Unif{0..T−1}
        train = np.sum((diagonal * (path - train_mean)) ** 2, axis=-1).mean(axis=1)  # (R,)
        test = np.sqrt(np.sum((diagonal * (path - test_mean)) ** 2, axis=-1)).mean(axis=1)
        test_sq = np.sum((diagonal * (path - test_mean)) ** 2, axis=-1).mean(axis=1)
        finite = bool(np.all(np.isfinite(train)))
        rows.append({
            "mode": mode, "d": d, "method": method, "effective_rank": objective.effective_rank,
            "step_size": step_size, "clip": clip, "noise_std": result.ledger.plan.noise_std,
            "train_grad_sq": float(train.mean()) if finite else math.inf,
            "train_grad_sq_se": float(train.std(ddof=1) / math.sqrt(REPLICATES)) if finite else math.nan,
            "test_grad_norm": float(test.mean()) if finite else math.inf,
            "test_grad_norm_se": float(test.std(ddof=1) / math.sqrt(REPLICATES)) if finite else math.nan,
            "test_grad_sq": float(test_sq.mean()) if finite else math.inf,
            "clip_fraction": float(np.mean(result.diagnostics.clip_fraction)),  # NOT PRIVATE (simulation only)
            "diverged": not finite,
        })
    for row in rows:
        row["cpu_seconds"] = (time.process_time() - start) / len(rows)
    return rows


def best_by_train(grid: pd.DataFrame) -> pd.DataFrame:
    """One row per (mode, d, method): the configuration with the smallest training error (dpzero.E11)."""
    index = grid.groupby(["mode", "d", "method"])["train_grad_sq"].idxmin()
    return grid.loc[index].reset_index(drop=True)


def plot(best: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=False)
    titles = {"identity": "A = I  (r = d)", "sqrt": "A = diag(1/√i)  (r ≈ 2√d)", "harmonic": "A = diag(1/i)  (r ≈ ln d)"}
    for ax, mode in zip(axes, QUADRATIC_MODES):
        part = best[best["mode"] == mode]
        for method in METHODS:
            rows = part[part["method"] == method].sort_values("d")
            ax.errorbar(rows["d"], rows["test_grad_norm"], yerr=rows["test_grad_norm_se"], marker="o", ms=4,
                        capsize=2, label=method, color=COLOURS[method])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("dimension d")
        ax.set_title(titles[mode])
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("test gradient norm  E_τ ‖∇F_test(x_τ)‖")
    axes[0].legend()
    fig.suptitle(f"Synthetic quadratic, n = {TRAIN}, ε = {EPSILON:g}, δ = {DELTA:g}, T = {STEPS}, R = {REPLICATES}: "
                 "best of α × C grid selected by TRAIN E_τ‖∇F_S‖², TEST gradient norm shown", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"only d in {QUICK_DIMENSIONS}")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--out", default="dimension_study_out", metavar="DIR",
                        help="directory for the PNG and the CSVs (default ./dimension_study_out; created if needed)")
    parser.add_argument("--overwrite", action="store_true", help="write into a non-empty --out directory")
    parser.add_argument("--quiet", "-q", "--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be >= 1")
    try:  # before computing: a result that cannot be written is refused now, not lost after 3 minutes
        out = prepare_output_dir(args.out, overwrite=args.overwrite, option="--out")
    except ValueError as exc:
        parser.error(str(exc))
    dims = QUICK_DIMENSIONS if args.quick else DIMENSIONS
    # biggest cells first, so that the two workers finish together
    tasks = sorted(itertools.product(QUADRATIC_MODES, dims, METHODS),
                   key=lambda t: -t[1] * (1 if t[2] == "DPZero" else 12))
    start = time.perf_counter()
    rows = []
    bar = progress_bar(len(tasks), "cells", "cell", enabled=not args.quiet)
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for cell in pool.map(study_cell, tasks):
            rows.extend(cell)
            bar.update()
    bar.close()
    grid = pd.DataFrame(rows)
    best = best_by_train(grid)
    name = "dpzero_dimension_study" + ("_quick" if args.quick else "")
    best.to_csv(out / f"{name}.csv", index=False, float_format="%.6g")
    grid.to_csv(out / f"{name}_grid.csv", index=False, float_format="%.6g")
    plot(best, out / f"{name}.png")
    seconds = time.perf_counter() - start
    with pd.option_context("display.width", 200, "display.max_rows", None):
        print(best.pivot_table(index=["mode", "d"], columns="method", values="test_grad_norm").round(4))
    print(f"wrote {out / (name + '.png')} and {out / (name + '.csv')} in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
