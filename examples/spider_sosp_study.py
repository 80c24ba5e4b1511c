"""spider_sosp (Liu, Talwar, "Adaptive Batch Size for Privately Finding Second-Order Stationary Points", arXiv 2024)
at CPU scale: the paper has no experiments, so this study runs its Algorithm 2 (private Stochastic SpiderBoost with
adaptive O2 batches, tree noise and saddle perturbations) in the unit mode of ``spider_settings`` on the cosine
family and measures, on the population, what the escape argument and
Theorem 3.11 are about.

Problem (``reference.objectives_sosp.CosineFamily``): f(x; z) = Σ_j c_j s_j cos(x_j − z_j), z ~ N(0, τ² I_d), d = 2,
c = (1, 1), s = (+1, −1): G = √2, M = ρ = 1. Population F(x) = φ(cos x_1 − cos x_2), φ = e^{−τ²/2}; x_0 = 0 is an
EXACT strict saddle (∇F(0) = 0, λ_min = −φ), the minima are x = (π, 0) mod 2π, B = F(x_0) − inf F = 2φ. τ = 0
("COS-det") makes every record 0 and every gradient exact; τ = 0.5 ("COS") has sampling noise.

Settings: ``spider_settings(n, d, G, M, ρ, B, ε, δ, mode="unit", noise_std=σ)`` (α of Lemma 3.10 with c_α = 1,
κ, b, b_t, T = n, γ = γ_rms, threshold = γ, Γ = ⌈M/√(ργ)⌉, ζ = γ), δ = 1e-5, replace-one neighbours, one global tree;
σ from ``spider_sosp_sigma("gdp_exact", ...)`` (the exact Gaussian-DP calibration with the exact node count, rounded
UP to float64, then re-checked by ``spider_sosp_plan(noise_std=σ).private``); ε = ∞ is the non-private limit
(σ = 0, the ε terms of α, b and b_t dropped).

Metric: the SOSP level α*(x) = max(‖∇F(x)‖, max(0, −λ_min(∇²F(x)))²/ρ) (Definition 1.2; ``reference.stationarity.
sosp_level``) of every iterate x_1..x_t on the PUBLIC population closed form, and F(x_t) − inf F. This is a
diagnostic of the study: a private run publishes its iterates, not their level, and Algorithm 2 has no private
selection of a best iterate (the paper's claim is that SOME iterate is an SOSP). The level at the saddle is φ²
(1 for COS-det, 0.779 for COS). The level of every iterate is computed in closed form (the Hessian is diagonal);
``sosp_level`` recomputes the best and the last iterate of every run and must agree to 1e-12.

(a) Escape from the exact saddle, at n = 20 000 (--quick: 5 000): COS-det and COS, ε ∈ {1, 4, ∞}, with the
    perturbation of line 11 and without it (``config(perturb=False)``, the B2 ablation); 20 replicates (paired: the
    same records, record order and tree noise with and without perturbation). Reported: the median and quartiles
    over runs of α*(x_t) and of F(x_t) − inf F against the step t (over the runs that have not halted at t), the
    fraction of runs that ESCAPE — some iterate reaches α* ≤ 0.1 (a 0.1-SOSP: only points near a minimum are) —
    beside the chance of such a hit for as many iterates drawn uniformly on the torus (0.08% of it has α* ≤ 0.1 for
    COS-det, 0.10% for COS: what a run whose iterates are mostly noise scores), and the fraction whose LAST iterate
    has F − inf F ≤ 0.1 B. Without
    perturbation the tree noise (ε < ∞) and the sampling noise (τ > 0) still move the iterate off the saddle.
(b) The SOSP level of the best and of the last iterate against n ∈ {1e3, 3e3, 1e4, 3e4, 1e5} (--quick: {1e3, 1e4}),
    COS, ε ∈ {1, 4, ∞}, with perturbation, 20 replicates, beside the α of ``spider_settings`` (Lemma 3.10 /
    Theorem 3.11's rate with c_α = 1) as a reference line; and the fraction of runs whose best iterate is an
    α-SOSP for that α.
(c) The batches of the runs of (b): the O1 batch b, the O2 batches b_t (mean, and their histogram at the largest n),
    and the share of the n records read by O1 and by O2 batches.

Seeds: the public seeds (data, record order) are ``replicate_seeds(SEED, R)``; the tree noise and perturbations use
``secret_seeds(NOISE_SEED, R)``. Both bases are fixed in this file and printed, so every figure is reproducible —
and for that reason these runs are demonstrations, not private releases (a private run draws its noise seed from
the operating system). Replicate r uses the same records in every cell of its part.

Backend: ``reference.fast.spider_sosp`` (the bitwise twin) when importable, else the reference
``reference.algorithms.spider_sosp``. Runtime with the fast backend on 2 busy cores with --workers 2: 47–63 s
(540 runs; the 40 runs without perturbation at ε = ∞ take ~n steps of one record, 1–4 s each, the others < 1 s);
--quick: 3 replicates, about 8 s (files ``*_quick.*``).

    PYTHONPATH=. python examples/spider_sosp_study.py [--quick] [--workers 2] --out DIR [--overwrite] [--quiet]

writes ``spider_sosp_escape.png`` (a), ``spider_sosp_samples.png`` (b, c), ``spider_sosp_study.csv`` (means,
standard errors, medians and fractions per cell of (a) and (b)), ``spider_sosp_study_runs.csv`` (every run),
``spider_sosp_escape_traces.csv`` (the plotted quantiles of (a)), ``spider_sosp_batches.csv`` (the b_t histogram of
(c)) and ``spider_sosp_study_meta.csv`` (seeds, backend, wall time) into DIR (checked before computing: a non-empty
directory is refused without --overwrite; the documentation's figures come from ``--out docs/img --overwrite``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread per worker process
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import functools  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from reference.algorithms.spider_sosp_privacy import spider_sosp_plan, spider_sosp_sigma  # noqa: E402
from reference.algorithms.spider_sosp_theory import spider_settings  # noqa: E402
from reference.objectives_sosp import CosineFamily  # noqa: E402
from reference.progress import progress_bar  # noqa: E402
from reference.reporting import prepare_output_dir  # noqa: E402
from reference.secrets import replicate_seeds, secret_seeds  # noqa: E402
from reference.stationarity import sosp_level  # noqa: E402

try:  # the vectorised twin (bitwise the reference's runs) when it is installed
    from reference.fast.spider_sosp import stochastic_spider  # noqa: E402

    BACKEND = "fast"
except ImportError:  # pragma: no cover - depends on the checkout
    from reference.algorithms.spider_sosp import stochastic_spider  # noqa: E402

    BACKEND = "reference"

SEED = 20241021  # public: data and record order
NOISE_SEED = 0x5D1DE7_50_5D_2024_1021_C0FFEE_BEEF  # the tree noise and perturbations (printed: not a private run)
C, S, D = (1.0, 1.0), (1.0, -1.0), 2
DP_DELTA = 1e-5
EPSILONS = (1.0, 4.0, math.inf)
TAUS = (0.0, 0.5)  # (a): COS-det and COS
SAMPLES_TAU = 0.5  # (b), (c)
ESCAPE_N, QUICK_ESCAPE_N = 20_000, 5_000
SAMPLES, QUICK_SAMPLES = (1_000, 3_000, 10_000, 30_000, 100_000), (1_000, 10_000)
REPLICATES, QUICK_REPLICATES = 20, 3
ESCAPE_LEVEL = 0.1  # "escaped": some iterate is a 0.1-SOSP of the population
GAP_FRACTION = 0.1  # "descended": the last iterate has F − inf F ≤ 0.1 B
TRACE_POINTS = 90
PLOT_FLOOR = 1e-6  # escape figure: smaller values (α* = 1e-16 at the exact minimum of COS-det) drawn here
COLOURS = {1.0: "tab:red", 4.0: "tab:orange", math.inf: "tab:blue"}


def eps_label(epsilon: float) -> str:
    return "∞" if math.isinf(epsilon) else f"{epsilon:g}"


@functools.lru_cache(maxsize=None)
def family(tau: float) -> CosineFamily:
    return CosineFamily(np.array(C), np.array(S), tau)


@functools.lru_cache(maxsize=None)
def settings(tau: float, n: int, epsilon: float):
    """The unit-mode settings of a cell and its privacy record (σ rounded up to float64 and re-checked)."""
    fam = family(tau)
    x0 = fam.saddle_point()
    problem = dict(lipschitz=fam.lipschitz, smoothness=fam.smoothness, loss_gap=fam.loss_gap(x0), d=D, n=n)
    if math.isinf(epsilon):
        sigma, privacy = None, {"noise_std": 0.0, "mu": math.inf, "epsilon_spent": math.inf, "node_count": None}
    else:
        sigma = math.nextafter(float(spider_sosp_sigma("gdp_exact", epsilon=epsilon, delta=DP_DELTA, **problem)),
                               math.inf)
        plan = spider_sosp_plan(epsilon=epsilon, delta=DP_DELTA, noise_std=sigma, **problem)
        if not plan.private:
            raise RuntimeError(f"sigma = {sigma} is not (eps, delta)-DP: {plan.summary()}")
        privacy = {"noise_std": sigma, "mu": float(plan.mu), "epsilon_spent": float(plan.epsilon),
                   "node_count": plan.node_count}
    s = spider_settings(n, D, fam.lipschitz, fam.smoothness, fam.hessian_lipschitz, problem["loss_gap"], epsilon,
                        DP_DELTA, mode="unit", noise_std=sigma)
    return s, privacy


def population_path(fam: CosineFamily, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """α*(x) and F(x) − inf F for rows x, in closed form (∇²F is diagonal: λ_min = min_j(−φ c_j s_j cos x_j))."""
    gradient = -fam.phi * fam.c * fam.s * np.sin(points)
    curvature = np.maximum(0.0, -np.min(-fam.phi * fam.c * fam.s * np.cos(points), axis=1))
    level = np.maximum(np.linalg.norm(gradient, axis=1), curvature**2 / fam.hessian_lipschitz)
    gap = fam.phi * np.sum(fam.c * fam.s * np.cos(points), axis=1) - fam.population_infimum()
    return level, gap


def checked_level(fam: CosineFamily, x: np.ndarray, closed_form: float) -> float:
    """``sosp_level`` on the population at x, which must agree with the closed form."""
    value = sosp_level(fam.population_gradient(x), fam.population_hessian(x), fam.hessian_lipschitz)
    if not abs(value - closed_form) <= 1e-12 * max(1.0, value):
        raise RuntimeError(f"closed-form SOSP level {closed_form} disagrees with sosp_level {value} at {x}")
    return value


@functools.lru_cache(maxsize=None)
def uniform_hit_probability(tau: float, grid: int = 2000) -> float:
    """The share of the torus [−π, π)² where α* ≤ ESCAPE_LEVEL (a grid of grid² points): the chance that a point
    drawn uniformly, as a run dominated by noise roughly draws its iterates, is counted as an escape."""
    g = np.linspace(-math.pi, math.pi, grid, endpoint=False)
    x1, x2 = np.meshgrid(g, g)
    level, _ = population_path(family(tau), np.column_stack([x1.ravel(), x2.ravel()]))
    return float(np.mean(level <= ESCAPE_LEVEL))


def trace_grid(n: int) -> np.ndarray:
    return np.unique(np.round(np.logspace(0, math.log10(n), TRACE_POINTS)).astype(np.int64))


def tasks(quick: bool) -> list[dict]:
    """Every run: part (a) over τ, ε, perturbation; part (b) over ε, n; replicate r with its seeds."""
    replicates = QUICK_REPLICATES if quick else REPLICATES
    seeds = replicate_seeds(SEED, replicates)
    noise = secret_seeds(NOISE_SEED, replicates, public_seeds=seeds)
    escape_n = QUICK_ESCAPE_N if quick else ESCAPE_N
    out = []
    for r in range(replicates):
        common = {"replicate": r, "seed": int(seeds[r]), "noise_seed": noise[r]}
        for tau in TAUS:
            for epsilon in EPSILONS:
                for perturb in (True, False):
                    out.append({"part": "escape", "tau": tau, "epsilon": epsilon, "n": escape_n,
                                "perturb": perturb, **common})
        for epsilon in EPSILONS:
            for n in (QUICK_SAMPLES if quick else SAMPLES):
                out.append({"part": "samples", "tau": SAMPLES_TAU, "epsilon": epsilon, "n": n, "perturb": True,
                            **common})
    return out


def cost(task: dict) -> float:
    """Rough relative cost, to start the long runs first (no perturbation at ε = ∞ takes ~n steps)."""
    stuck = not task["perturb"] and math.isinf(task["epsilon"])
    return task["n"] * (20 if stuck else 1)


def run_task(task: dict) -> dict:
    """One run of Algorithm 2 and its population diagnostics."""
    start = time.perf_counter()
    fam = family(task["tau"])
    s, privacy = settings(task["tau"], task["n"], task["epsilon"])
    x0 = fam.saddle_point()
    data = fam.sample(np.random.default_rng(task["seed"]), task["n"])  # records: i.i.d. from P (public seed)
    result = stochastic_spider(fam.gradient, data, x0, s.config(perturb=task["perturb"]), seed=task["seed"],
                               noise_seed=task["noise_seed"])
    trace = result.trace
    level, gap = population_path(fam, result.iterates)  # level[t-1] is α*(x_t)
    level0, gap0 = population_path(fam, x0[None, :])
    best = int(np.argmin(level))
    best_level = checked_level(fam, result.iterates[best], float(level[best]))
    last_level = checked_level(fam, result.iterates[-1], float(level[-1]))
    kinds = np.array(trace.kinds)
    sizes = trace.batch_sizes
    o2 = sizes[kinds == "O2"]
    used = np.cumsum(sizes)
    hit = np.flatnonzero(level <= ESCAPE_LEVEL)
    B = float(gap0[0])
    row = {key: task[key] for key in ("part", "tau", "epsilon", "n", "perturb", "replicate", "seed")}
    row.update({
        "backend": BACKEND, **privacy, "alpha_theory": s.alpha, "kappa": s.kappa, "gamma": s.gamma,
        "threshold": s.threshold, "freeze_steps": s.freeze_steps, "perturbation_scale": s.perturbation_scale,
        "o1_batch": s.batch_size, "batch_coefficient": s.batch_coefficient, "tree_levels": s.tree_levels,
        "loss_gap_B": B, "level_x0": float(level0[0]),
        "steps": trace.steps, "o1_steps": int(np.sum(kinds == "O1")), "o2_steps": int(o2.size),
        "perturbations": len(trace.perturbation_steps), "halt_reason": trace.halt_reason,
        "records_used": trace.records_used, "records_fraction": trace.records_used / task["n"],
        "records_o1_fraction": float(np.sum(sizes[kinds == "O1"])) / task["n"],
        "records_o2_fraction": float(np.sum(o2)) / task["n"],
        "o2_batch_mean": float(o2.mean()) if o2.size else math.nan,
        "o2_batch_median": float(np.median(o2)) if o2.size else math.nan,
        "o2_batch_max": int(o2.max()) if o2.size else 0,
        "o2_batch_one_fraction": float(np.mean(o2 == 1)) if o2.size else math.nan,
        "best_level": best_level, "best_step": best + 1, "last_level": last_level,
        "best_gap": float(np.min(gap)), "last_gap": float(gap[-1]),
        "escaped": bool(hit.size),
        "escape_by_chance": 1 - (1 - uniform_hit_probability(task["tau"])) ** trace.steps,
        "escape_step": int(hit[0]) + 1 if hit.size else None,
        "escape_records": int(used[hit[0]]) if hit.size else None,
        "last_descended": bool(gap[-1] <= GAP_FRACTION * B),
        "best_is_alpha_sosp": bool(best_level <= s.alpha),
        "seconds": time.perf_counter() - start,
    })
    out = {"row": row}
    if task["part"] == "escape":  # α*(x_t), F(x_t) − inf F at a log grid of steps t (NaN once the run has halted)
        grid = trace_grid(task["n"])
        alive = grid <= trace.steps
        out["trace"] = {"level": np.where(alive, level[np.minimum(grid, trace.steps) - 1], np.nan),
                        "gap": np.where(alive, gap[np.minimum(grid, trace.steps) - 1], np.nan)}
    else:
        out["o2_batches"] = o2
    return out


def _se(values: pd.Series) -> float:
    values = values.dropna()
    return float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else math.nan


def cell_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per cell: means ± standard errors over replicates, medians, and the fractions (with binomial s.e.)."""
    rows = []
    for key, cell in runs.groupby(["part", "tau", "epsilon", "perturb", "n"], sort=False):
        row = dict(zip(["part", "tau", "epsilon", "perturb", "n"], key))
        row["replicates"] = len(cell)
        for column in ("best_level", "last_level", "best_gap", "last_gap", "steps", "o1_steps", "perturbations",
                       "records_fraction", "records_o1_fraction", "records_o2_fraction", "o2_batch_mean",
                       "escape_step", "escape_records", "seconds"):
            values = pd.to_numeric(cell[column], errors="coerce")
            row[f"{column}_mean"] = float(values.mean())
            row[f"{column}_se"] = _se(values)
            row[f"{column}_median"] = float(values.median())
        row["escape_by_chance_mean"] = float(cell["escape_by_chance"].mean())
        for column in ("escaped", "last_descended", "best_is_alpha_sosp"):
            p = float(cell[column].astype(float).mean())
            row[f"{column}_fraction"] = p
            row[f"{column}_fraction_se"] = math.sqrt(p * (1 - p) / len(cell))
        for column in ("noise_std", "mu", "epsilon_spent", "node_count", "alpha_theory", "kappa", "gamma",
                       "threshold", "freeze_steps", "o1_batch", "batch_coefficient", "loss_gap_B", "level_x0"):
            row[column] = cell[column].iloc[0]
        rows.append(row)
    return pd.DataFrame(rows)


def escape_traces(results: list[dict], n: int) -> pd.DataFrame:
    """Quantiles over the runs of a cell that are still running at step t, and how many are."""
    grid = trace_grid(n)
    frames = []
    escape = [r for r in results if r["row"]["part"] == "escape"]
    cells = sorted({(r["row"]["tau"], r["row"]["epsilon"], r["row"]["perturb"]) for r in escape})
    for tau, epsilon, perturb in cells:
        members = [r for r in escape if (r["row"]["tau"], r["row"]["epsilon"], r["row"]["perturb"])
                   == (tau, epsilon, perturb)]
        frame = {"tau": tau, "epsilon": epsilon, "perturb": perturb, "step": grid,
                 "runs_alive": np.sum([~np.isnan(r["trace"]["level"]) for r in members], axis=0),
                 "runs": len(members)}
        for metric in ("level", "gap"):
            stack = np.array([r["trace"][metric] for r in members])
            with np.errstate(all="ignore"):
                for q, name in ((0.25, "q25"), (0.5, "median"), (0.75, "q75")):
                    values = np.full(grid.size, np.nan)
                    some = frame["runs_alive"] > 0
                    values[some] = np.nanquantile(stack[:, some], q, axis=0)
                    frame[f"{metric}_{name}"] = values
        frames.append(pd.DataFrame(frame))
    return pd.concat(frames, ignore_index=True)


def batch_histogram(results: list[dict], n: int) -> pd.DataFrame:
    """The O2 batch sizes b_t of part (b) at n, pooled over replicates, in log-spaced integer bins."""
    rows = []
    for epsilon in EPSILONS:
        sizes = np.concatenate([r["o2_batches"] for r in results if r["row"]["part"] == "samples"
                                and r["row"]["n"] == n and r["row"]["epsilon"] == epsilon] or [np.zeros(0, int)])
        top = max(2, int(sizes.max()) + 1 if sizes.size else 2)
        edges = np.unique(np.round(np.logspace(0, math.log10(top) + 1e-9, 25)).astype(np.int64))
        edges = np.append(edges[edges < top], top)
        counts, _ = np.histogram(sizes, bins=edges)
        for lo, hi, count in zip(edges[:-1], edges[1:], counts):
            rows.append({"epsilon": epsilon, "n": n, "b_t_from": int(lo), "b_t_below": int(hi), "count": int(count),
                         "share": count / sizes.size if sizes.size else math.nan})
    return pd.DataFrame(rows)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_escape(traces: pd.DataFrame, table: pd.DataFrame, n: int, path: Path) -> None:
    plt = _plt()
    fig, axes = plt.subplots(2 * len(TAUS), len(EPSILONS), figsize=(14, 3.1 * 2 * len(TAUS)), squeeze=False,
                             sharex=True)
    cells = table[table["part"] == "escape"]
    for i, tau in enumerate(TAUS):
        name = "COS-det (τ = 0)" if tau == 0 else f"COS (τ = {tau:g})"
        for j, epsilon in enumerate(EPSILONS):
            for k, (metric, label) in enumerate((("level", "α*(x_t)"), ("gap", "F(x_t) − inf F"))):
                ax = axes[2 * i + k, j]
                title_bits = []
                for perturb, colour in ((True, "tab:blue"), (False, "tab:red")):
                    part = traces[(traces["tau"] == tau) & (traces["epsilon"] == epsilon)
                                  & (traces["perturb"] == perturb)]
                    part = part[part["runs_alive"] >= np.ceil(part["runs"] / 2)]  # a median of most runs
                    word = "perturbed" if perturb else "no perturbation"
                    shown = {q: np.maximum(part[f"{metric}_{q}"], PLOT_FLOOR) for q in ("q25", "median", "q75")}
                    ax.plot(part["step"], shown["median"], color=colour, label=f"{word}: median")
                    ax.fill_between(part["step"], shown["q25"], shown["q75"], color=colour, alpha=0.2, linewidth=0)
                    cell = cells[(cells["tau"] == tau) & (cells["epsilon"] == epsilon) & (cells["perturb"] == perturb)]
                    frac = cell["escaped_fraction"].iloc[0] if metric == "level" else \
                        cell["last_descended_fraction"].iloc[0]
                    title_bits.append(f"{'P' if perturb else 'no P'} {frac:.0%}")
                reference = ESCAPE_LEVEL if metric == "level" else GAP_FRACTION * float(cells[
                    cells["tau"] == tau]["loss_gap_B"].iloc[0])
                ax.axhline(reference, color="grey", linestyle=":", linewidth=1)
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_ylim(PLOT_FLOOR / 2, 5)
                ax.grid(True, which="major", alpha=0.3)
                what = f"α* ≤ {ESCAPE_LEVEL:g} at some t" if metric == "level" else "last gap ≤ 0.1 B"
                ax.set_title(f"{name}, ε = {eps_label(epsilon)}: {label}\n{what}: " + ", ".join(title_bits),
                             fontsize=9)
                if j == 0:
                    ax.set_ylabel(f"{label} (population)")
                if 2 * i + k == 2 * len(TAUS) - 1:
                    ax.set_xlabel("step t")
    axes[0, 0].legend(fontsize=8, loc="lower left")
    fig.suptitle(f"spider_sosp Algorithm 2 (unit mode) from the exact saddle x_0 = 0, n = {n}, d = {D}, "
                 f"δ = {DP_DELTA:g}, on the population; blue: perturbed (line 11), red: no perturbation\n"
                 f"median and quartiles over the runs still running at t (shown while ≥ half are); values below "
                 f"{PLOT_FLOOR:g} (the exact minimum) drawn at {PLOT_FLOOR:g}; dotted: α* = {ESCAPE_LEVEL:g}, "
                 f"gap = {GAP_FRACTION:g} B", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_samples(table: pd.DataFrame, histogram: pd.DataFrame, path: Path) -> None:
    plt = _plt()
    cells = table[table["part"] == "samples"]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.6))
    for epsilon in EPSILONS:
        part = cells[cells["epsilon"] == epsilon].sort_values("n")
        colour, label = COLOURS[epsilon], f"ε = {eps_label(epsilon)}"
        for ax, column in ((axes[0, 0], "best_level"), (axes[0, 1], "last_level")):
            ax.errorbar(part["n"], part[f"{column}_mean"], yerr=part[f"{column}_se"], marker="o", ms=4, capsize=2,
                        color=colour, label=f"{label}: measured")
            ax.plot(part["n"], part["alpha_theory"], color=colour, linestyle="--", linewidth=1,
                    label=f"{label}: α of Thm 3.11 (c_α = 1)")
        axes[0, 2].errorbar(part["n"], part["best_is_alpha_sosp_fraction"], yerr=part["best_is_alpha_sosp_fraction_se"],
                            marker="o", ms=4, capsize=2, color=colour, label=label)
        axes[1, 0].plot(part["n"], part["o1_batch"], marker="s", ms=4, color=colour, label=f"{label}: O1 b")
        axes[1, 0].errorbar(part["n"], part["o2_batch_mean_mean"], yerr=part["o2_batch_mean_se"], marker="o", ms=3,
                            capsize=2, linestyle=":", color=colour, label=f"{label}: mean O2 b_t")
        axes[1, 2].errorbar(part["n"], part["records_o1_fraction_mean"], yerr=part["records_o1_fraction_se"],
                            marker="s", ms=4, capsize=2, color=colour, label=f"{label}: O1 batches")
        axes[1, 2].errorbar(part["n"], part["records_o2_fraction_mean"], yerr=part["records_o2_fraction_se"],
                            marker="o", ms=4, capsize=2, linestyle=":", color=colour, label=f"{label}: O2 batches")
        bins = histogram[histogram["epsilon"] == epsilon]
        if len(bins):
            axes[1, 1].stairs(bins["share"].to_numpy(), np.append(bins["b_t_from"].to_numpy(),
                                                                  bins["b_t_below"].iloc[-1]),
                              color=colour, label=label, linewidth=1.5)
    n_top = int(histogram["n"].iloc[0]) if len(histogram) else 0
    titles = {(0, 0): "(b) SOSP level of the best iterate, min_t α*(x_t)",
              (0, 1): "(b) SOSP level of the last iterate α*(x_last)",
              (0, 2): "(b) fraction of runs whose best iterate is an α-SOSP",
              (1, 0): "(c) batch sizes: O1 b and the mean O2 b_t per run",
              (1, 1): f"(c) O2 batch sizes b_t at n = {n_top} (pooled over runs)",
              (1, 2): "(c) share of the n records read by O1 / O2 batches"}
    for (r, c), title in titles.items():
        axes[r, c].set_title(title, fontsize=10)
        axes[r, c].grid(True, which="both", alpha=0.3)
        axes[r, c].set_xscale("log")
        axes[r, c].legend(fontsize=7)
    for ax in (axes[0, 0], axes[0, 1], axes[1, 0]):
        ax.set_yscale("log")
    axes[0, 0].set_ylabel("population α* (mean ± s.e.)")
    axes[0, 2].set_ylim(-0.05, 1.05)
    axes[1, 1].set_xlabel("b_t (log bins)")
    axes[1, 1].set_ylabel("share of the O2 steps")
    axes[1, 2].set_ylim(0, 1.05)
    for ax in (axes[0, 0], axes[0, 1], axes[0, 2], axes[1, 0], axes[1, 2]):
        ax.set_xlabel("records n")
    fig.suptitle(f"spider_sosp Algorithm 2 (unit mode) on COS (τ = {SAMPLES_TAU:g}, d = {D}) from the saddle, "
                 f"with perturbation, δ = {DP_DELTA:g}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"n = {QUICK_ESCAPE_N} in (a), n in {QUICK_SAMPLES} in (b), {QUICK_REPLICATES} "
                             "replicates (seconds)")
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
    print(f"spider_sosp study: backend {BACKEND}; public seed base {SEED}, noise seed base {NOISE_SEED} "
          f"(replicate seeds: replicate_seeds / secret_seeds, {replicates} replicates)"
          + (" [quick]" if args.quick else ""))
    start = time.perf_counter()
    work = sorted(tasks(args.quick), key=lambda t: -cost(t))
    bar = progress_bar(len(work), "spider_sosp study", "run", enabled=not args.quiet)
    results = []
    if args.workers == 1:
        for task in work:
            results.append(run_task(task))
            bar.update()
    else:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            for result in pool.map(run_task, work, chunksize=2):
                results.append(result)
                bar.update()
    bar.close()
    runs = pd.DataFrame([r["row"] for r in results])
    runs = runs.sort_values(["part", "tau", "epsilon", "perturb", "n", "replicate"]).reset_index(drop=True)
    table = cell_summary(runs)
    escape_n = QUICK_ESCAPE_N if args.quick else ESCAPE_N
    samples = QUICK_SAMPLES if args.quick else SAMPLES
    traces = escape_traces(results, escape_n)
    histogram = batch_histogram(results, max(samples))
    suffix = "_quick" if args.quick else ""
    runs.to_csv(out / f"spider_sosp_study_runs{suffix}.csv", index=False, float_format="%.6g")
    table.to_csv(out / f"spider_sosp_study{suffix}.csv", index=False, float_format="%.6g")
    traces.to_csv(out / f"spider_sosp_escape_traces{suffix}.csv", index=False, float_format="%.6g")
    histogram.to_csv(out / f"spider_sosp_batches{suffix}.csv", index=False, float_format="%.6g")
    plot_escape(traces, table, escape_n, out / f"spider_sosp_escape{suffix}.png")
    plot_samples(table, histogram, out / f"spider_sosp_samples{suffix}.png")
    seconds = time.perf_counter() - start
    meta = {"command": "python examples/spider_sosp_study.py " + " ".join(sys.argv[1:] if argv is None else argv),
            "backend": BACKEND, "public_seed_base": SEED, "noise_seed_base": NOISE_SEED, "replicates": replicates,
            "workers": args.workers, "runs": len(runs), "wall_seconds": round(seconds, 1),
            "run_seconds_total": round(float(runs["seconds"].sum()), 1),
            "python": platform.python_version(), "numpy": np.__version__}
    pd.DataFrame({"key": list(meta), "value": [str(v) for v in meta.values()]}).to_csv(
        out / f"spider_sosp_study_meta{suffix}.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_rows", None, "display.max_columns", None):
        esc = table[table["part"] == "escape"].set_index(["tau", "epsilon", "perturb"])
        print(esc[["escaped_fraction", "escape_by_chance_mean", "last_descended_fraction", "best_level_median",
                   "last_gap_median", "escape_step_median", "escape_records_median", "steps_mean", "perturbations_mean",
                   "noise_std"]].round(4))
        smp = table[table["part"] == "samples"].set_index(["epsilon", "n"])
        print(smp[["best_level_mean", "best_level_se", "best_level_median", "last_level_mean", "last_level_se",
                   "alpha_theory", "best_is_alpha_sosp_fraction", "o1_batch", "o2_batch_mean_mean", "steps_mean",
                   "records_fraction_mean", "records_o1_fraction_mean", "noise_std", "gamma"]].round(4))
    print(f"{len(runs)} runs ({BACKEND} backend) in {seconds:.1f} s wall, {runs['seconds'].sum():.1f} s in the runs; "
          f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
