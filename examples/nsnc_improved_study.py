"""nsnc_improved (Kornowski, Liu, Talwar, ICML 2025) at CPU scale: the paper has no experiments, so this study
measures its oracles on the synthetic nonsmooth nonconvex problem of ``dpref run zo_o2nc`` / ``dpref run
nsnc_improved``, beside zo_o2nc's tree oracle, and shows what the high-probability sensitivity buys.

(a) Stationarity against the number of records n ∈ {1 000, 2 000, 4 000, 8 000, 16 000} at ε = 1 and at ε = 4
    (δ = 1e-6):
    Algorithm 2 with the single-pass oracles — Algorithm 3 ("single pass"), Algorithm 3 with common random numbers
    ("single pass CRN", not in the paper), Algorithm 5 ("first order") — with the settings of Theorem 3.1 / C.4; with
    the multi-pass oracle Algorithm 4 ("multi pass", Theorem 4.1 at target β = 3: T grows like β^−3 and each step
    reads all n records, so this is the smallest β affordable here; β ≥ L = 1 certifies nothing, the settings are
    run for their D, M, T, Σ); and zo_o2nc's Algorithm 3 + 4 ("zo_o2nc tree", Theorem 4.9's settings,
    ``reference.runner.run_zo_o2nc`` over ``reference.fast.zo_o2nc``) at the ρ whose tight conversion gives ε at δ
    (its RDP accounting; the nsnc_improved plans are exact Gaussian DP). The nsnc_improved oracles run in the
    practical mode with m = 8 directions (perturbations) per record: the theory's privacy floor, ~10⁶–10⁷ here (374
    for CRN), is beyond the CPU budget (CRN excepted), so their accounting uses min(worst case, high probability),
    which at m = 8 is the worst case (4Ld/B2 per increment for Algorithm 3, 4L/B2 for Algorithm 5, 4dLD/α for CRN). 4
    replicates (public seeds from ``replicate_seeds``, fresh secret noise every run); means ± standard errors.
(b) The high-probability sensitivity at work: the tree noise σ the exact accountant needs
    (``nsnc_single_pass_noise_std``, ``nsnc_multi_pass_noise_stds``; ε = 1, δ = 1e-6) against the number of
    directions m, under the worst case only and under min(worst case, high probability) (δ_fail = 4γ paid inside δ),
    for the single-pass oracles at n = 20 000 (the settings of Theorem 3.1 / C.4: D, Σ, B1, B2, γ = δ/8 do not depend
    on m) and the multi-pass ones at n = 5 000, β = 1.5 (σ2, the increment's noise). Marked: the theory's privacy
    floor on m and the largest m within the fast backend's evaluation budget
    (``reference.runner_nsnc_improved.EVALUATION_BUDGET``). No run: accounting only (41 values of m from 1 to 10¹⁰;
    --quick: 11).

Problem (``reference.runner.build_ridge_problem``): W-shaped ridges f(x; z) = ||<a, x> − c| − 1| (L = 1), a
population of 1 000 rows, a uniform on the sphere, c ~ N(0, 0.5²), records drawn from it with replacement, d = 4,
α = δ_zo_o2nc = 0.25, x0 = (5/√d)·1, Φ = F(x0). Metric (a): at the released output, on the POPULATION (the exact law
of the records), the Goldstein norm ‖∇F‖_{2α} (radius 0.5 for every method) as an interval [lower, upper]
(``reference.runner.goldstein_interval``, 256 points) and the proxy (the output block's ‖(1/M)Σ_t ∇F_α(z_t)‖); the
plotted upper bound is min(upper, proxy). Every number is a function of the released values and public data.

Runtime on 2 busy cores with --workers 2: about 3–5 minutes (200 runs; --quick: n ∈ {1 000, 4 000}, 2 replicates,
under a minute; files ``*_quick.*``). Backend: the fast twins (bitwise the reference's float64 runs) when installed.

    PYTHONPATH=. python examples/nsnc_improved_study.py [--quick] [--workers 2] --out DIR [--overwrite] [--quiet]

writes ``nsnc_improved_samples.png`` (a), ``nsnc_improved_sigma.png`` (b), ``nsnc_improved_study_runs.csv`` (every
run of (a)), ``nsnc_improved_study.csv`` (means and standard errors per cell of (a)) and ``nsnc_improved_sigma.csv``
(b) into DIR (checked before computing: a non-empty directory is refused without --overwrite; the documentation's
figures come from ``--out docs/img --overwrite``).
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

import mpmath  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from reference.accounting.conversions import epsilon_from_zcdp  # noqa: E402
from reference.algorithms.nsnc_improved_privacy import (  # noqa: E402
    nsnc_multi_pass_noise_stds,
    nsnc_single_pass_noise_std,
)
from reference.algorithms.nsnc_improved_theory import multi_pass_settings, single_pass_settings  # noqa: E402
from reference.progress import progress_bar  # noqa: E402
from reference.reporting import prepare_output_dir  # noqa: E402
from reference.runner import build_ridge_problem, run_zo_o2nc, summary  # noqa: E402
from reference.runner_nsnc_improved import (  # noqa: E402
    evaluation_budget,
    fast_nsnc_available,
    nsnc_summary,
    planned_evaluations,
    run_nsnc_improved,
)
from reference.secrets import replicate_seeds  # noqa: E402

SEED = 20250713
PROBLEM, D, ALPHA, POPULATION, EPSILON, DP_DELTA = "wshape", 4, 0.25, 1000, 1.0, 1e-6
EPSILONS = (1.0, 4.0)  # part (a); part (b) at EPSILON
SAMPLES, QUICK_SAMPLES = (1_000, 2_000, 4_000, 8_000, 16_000), (1_000, 4_000)
REPLICATES, QUICK_REPLICATES = 4, 2
DIRECTIONS = 8
MULTI_TARGET = 3.0
METHODS = {  # label -> (oracle of run_nsnc_improved, or "zo_o2nc")
    "single pass (Alg 3)": "single-pass",
    "single pass CRN": "single-pass-crn",
    "first order (Alg 5)": "first-order",
    "multi pass (Alg 4)": "multi-pass",
    "zo_o2nc tree (Thm 4.9)": "zo_o2nc",
}
COLOURS = {"single pass (Alg 3)": "tab:red", "single pass CRN": "tab:orange", "first order (Alg 5)": "tab:purple",
           "multi pass (Alg 4)": "tab:blue", "zo_o2nc tree (Thm 4.9)": "black"}
METRICS = ("objective", "goldstein_lower", "goldstein_upper", "proxy", "stationarity_upper")
#: Part (b): m on a log grid, the oracles and their sizes.
SIGMA_DIRECTIONS = np.unique(np.round(np.logspace(0, 10, 41)).astype(np.int64))
QUICK_SIGMA_DIRECTIONS = np.unique(np.round(np.logspace(0, 10, 11)).astype(np.int64))
SIGMA_SINGLE_N, SIGMA_MULTI_N, SIGMA_MULTI_TARGET = 20_000, 5_000, 1.5


def zo_o2nc_rho(epsilon: float, delta: float) -> float:
    """The ρ of (α, αρ²/2)-RDP whose tight conversion (``epsilon_from_zcdp``, ρ²/2-zCDP) gives ε at δ (bisection;
    the ρ returned gives at most ε)."""
    lo, hi = 1e-6, 100.0
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        if epsilon_from_zcdp(mpmath.mpf(mid) ** 2 / 2, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo


def tasks(quick: bool) -> list[dict]:
    """Every run of part (a): method, ε, n, replicate and its public seed."""
    replicates = QUICK_REPLICATES if quick else REPLICATES
    seeds = replicate_seeds(SEED, replicates)
    return [{"method": method, "epsilon": epsilon, "samples": n, "replicate": r, "seed": int(seeds[r])}
            for r in range(replicates) for epsilon in EPSILONS for method in METHODS
            for n in (QUICK_SAMPLES if quick else SAMPLES)]


def run_task(task: dict) -> dict:
    """One run and its public record (fresh secret noise every run)."""
    oracle = METHODS[task["method"]]
    start = time.perf_counter()
    common = dict(problem=PROBLEM, d=D, samples=task["samples"], population=POPULATION, smoothing_radius=ALPHA,
                  delta=DP_DELTA, seed=task["seed"])
    if oracle == "zo_o2nc":
        record = summary(run_zo_o2nc("zo_o2nc", rho=zo_o2nc_rho(task["epsilon"], DP_DELTA), **common))
        extra = {"epsilon_spent": record["epsilon_claimed"], "guarantee": "RDP (tight conversion)",
                 "noise_std": record["noise_std"], "certified_bound": record["theory_bound"], "m": record["d"],
                 "evaluations_planned": None}
    else:
        options = {"target_stationarity": MULTI_TARGET} if oracle.startswith("multi") else {}
        record = nsnc_summary(run_nsnc_improved(oracle, epsilon=task["epsilon"], directions=DIRECTIONS, **options,
                                                **common))
        sigma = record["noise_std"] if record["noise_std"] is not None else record["noise_std_increment"]
        extra = {"epsilon_spent": record["epsilon_spent"], "guarantee": record["guarantee"], "noise_std": sigma,
                 "certified_bound": record["certified_bound"], "m": DIRECTIONS,
                 "evaluations_planned": record["evaluations_planned"]}
    row = {**task, "backend": record["backend"], "T": record["T"], "K": record["K"], **extra,
           "seconds": time.perf_counter() - start}
    for data in ("population", "heldout"):
        for metric in METRICS:
            row[f"{data}_{metric}"] = record[f"{data}_{metric}_output"]
        row[f"{data}_goldstein_upper_start"] = record[f"{data}_goldstein_upper_initial"]
        row[f"{data}_goldstein_lower_start"] = record[f"{data}_goldstein_lower_initial"]
        row[f"{data}_objective_start"] = record[f"{data}_objective_initial"]
    return row


def cell_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Means and standard errors over replicates of every (method, ε, n)."""
    keys = ["method", "epsilon", "samples"]
    values = [f"{data}_{metric}" for data in ("population", "heldout")
              for metric in (*METRICS, "goldstein_upper_start", "goldstein_lower_start", "objective_start")]
    grouped = runs.groupby(keys, sort=False)
    table = grouped[values + ["T", "K", "noise_std", "epsilon_spent", "certified_bound", "seconds"]].mean()
    errors = grouped[values].std(ddof=1) / np.sqrt(grouped.size().to_numpy()[:, None])
    table = table.join(errors.add_suffix("_se"))
    table["replicates"] = grouped.size()
    table["guarantee"] = grouped["guarantee"].first()
    return table.reset_index()


def _gap() -> float:
    built = build_ridge_problem(PROBLEM, d=D, samples=1, population=POPULATION, held_out_n=1)
    return float(built.value(built.weights("population"), built.x1))


def largest_m_within_budget(oracle: str, **settings) -> int:
    """The largest m whose planned evaluations fit the fast backend's budget (they are affine in m), 0 if none."""
    def count(m):
        return planned_evaluations(oracle, m_reset=1 if oracle == "first_order" else m, m_increment=m, **settings)

    fixed, per_m = 2 * count(1) - count(2), count(2) - count(1)
    return max(0, (evaluation_budget("fast", D) - fixed) // per_m)


def sigma_table(quick: bool = False) -> pd.DataFrame:
    """Part (b): σ against m for every oracle and sensitivity mode (accounting only)."""
    gap, rows = _gap(), []
    grid = QUICK_SIGMA_DIRECTIONS if quick else SIGMA_DIRECTIONS
    for oracle in ("single_pass", "single_pass_crn", "first_order"):
        s = single_pass_settings(SIGMA_SINGLE_N, D, 1.0, gap, ALPHA, EPSILON, DP_DELTA, oracle=oracle)
        budget = evaluation_budget("fast", D)
        fits = largest_m_within_budget(oracle, T=s.T, tree_size=s.tree_size, B1=s.B1, B2=s.B2, n=s.n)
        for m in grid:
            m = int(m)
            m_reset = 1 if oracle == "first_order" else m
            evaluations = planned_evaluations(oracle, T=s.T, tree_size=s.tree_size, B1=s.B1, B2=s.B2, n=s.n,
                                              m_reset=m_reset, m_increment=m)
            for mode in ("auto", "worst_case"):
                with mpmath.workdps(30):
                    sigma = nsnc_single_pass_noise_std(
                        oracle=oracle, d=D, lipschitz=1.0, smoothing_radius=ALPHA, step_bound=s.step_bound,
                        tree_size=s.tree_size, B1=s.B1, B2=s.B2, m_reset=m_reset, m_increment=m, gamma=s.gamma,
                        epsilon=EPSILON, delta=DP_DELTA, sensitivity_mode=mode)
                rows.append({"passes": "single", "oracle": oracle, "n": SIGMA_SINGLE_N, "m": m, "mode": mode,
                             "noise_std": float(sigma), "noise_std_reset": None,
                             "evaluations": evaluations, "within_budget": evaluations <= budget, "budget_m": fits,
                             "privacy_floor": s.m_privacy_increment, "T": s.T, "tree_size": s.tree_size})
    s = multi_pass_settings(SIGMA_MULTI_N, D, 1.0, gap, ALPHA, SIGMA_MULTI_TARGET, EPSILON, DP_DELTA)
    for oracle in ("multi_pass", "multi_pass_first_order"):
        fits = largest_m_within_budget(oracle, T=s.T, tree_size=s.tree_size, B1=None, B2=None, n=s.n)
        for m in grid:
            m = int(m)
            evaluations = planned_evaluations(oracle, T=s.T, tree_size=s.tree_size, B1=None, B2=None, n=s.n,
                                              m_reset=m, m_increment=m)
            for mode in ("auto", "worst_case"):
                with mpmath.workdps(30):
                    s1, s2 = nsnc_multi_pass_noise_stds(
                        oracle=oracle, d=D, lipschitz=1.0, smoothing_radius=ALPHA, step_bound=s.step_bound,
                        n=s.n, tree_size=s.tree_size, T=s.T, m=m, gamma=s.gamma, epsilon=EPSILON, delta=DP_DELTA,
                        sensitivity_mode=mode)
                rows.append({"passes": "multi", "oracle": oracle, "n": SIGMA_MULTI_N, "m": m, "mode": mode,
                             "noise_std": float(s2), "noise_std_reset": float(s1), "evaluations": evaluations,
                             "within_budget": evaluations <= evaluation_budget("fast", D), "budget_m": fits,
                             "privacy_floor": s.m_privacy, "T": s.T, "tree_size": s.tree_size})
    return pd.DataFrame(rows)


def plot_samples(table: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(EPSILONS), 2, figsize=(12.5, 4.2 * len(EPSILONS)), squeeze=False)
    for row, epsilon in enumerate(EPSILONS):
        part = table[table["epsilon"] == epsilon]
        for ax, metric, bound, title in (
                (axes[row, 0], "stationarity_upper", "upper",
                 "upper bound on ‖∇F(x_out)‖_{2α}: min(Goldstein upper, proxy)"),
                (axes[row, 1], "goldstein_lower", "lower", "lower bound on ‖∇F(x_out)‖_{2α} (ridge by ridge)")):
            for method in METHODS:
                rows = part[part["method"] == method].sort_values("samples")
                ax.errorbar(rows["samples"], rows[f"population_{metric}"], yerr=rows[f"population_{metric}_se"],
                            marker="o", ms=4, capsize=2, label=method, color=COLOURS[method])
            ax.axhline(float(part[f"population_goldstein_{bound}_start"].mean()), color="grey", linestyle=":",
                       linewidth=1, label="at x0")
            ax.set_xscale("log")
            ax.set_ylim(bottom=0)
            ax.set_xlabel("records n")
            ax.set_title(f"ε = {epsilon:g}: {title}", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
        axes[row, 0].set_ylabel("population, at the output (mean ± s.e.)")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"nsnc_improved oracles vs zo_o2nc, W-shaped ridges, d = {D}, α = {ALPHA}, δ = {DP_DELTA:g}; "
                 f"m = {DIRECTIONS} directions per record, multi pass at β = {MULTI_TARGET:g}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def plot_sigma(sigma: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"single_pass": "tab:red", "single_pass_crn": "tab:orange", "first_order": "tab:purple",
               "multi_pass": "tab:blue", "multi_pass_first_order": "tab:cyan"}
    fig, axes = plt.subplots(1, 2, figsize=(12.5, 4.8))
    for ax, passes, title in ((axes[0], "single", f"single pass, n = {SIGMA_SINGLE_N}: tree σ"),
                              (axes[1], "multi", f"multi pass, n = {SIGMA_MULTI_N}, β = {SIGMA_MULTI_TARGET:g}: "
                                                 "σ2 (increments)")):
        part = sigma[sigma["passes"] == passes]
        for oracle in part["oracle"].unique():
            rows = part[part["oracle"] == oracle]
            for mode, style in (("auto", "-"), ("worst_case", "--")):
                line = rows[rows["mode"] == mode].sort_values("m")
                label = f"{oracle}: " + ("min(WC, HP)" if mode == "auto" else "worst case")
                ax.plot(line["m"], line["noise_std"], linestyle=style, color=colours[oracle], label=label)
            floor = int(rows["privacy_floor"].iloc[0])
            ax.axvline(floor, color=colours[oracle], linestyle=":", linewidth=1)
            fits = int(rows["budget_m"].iloc[0])
            if fits >= 1:
                ax.axvline(fits, color=colours[oracle], linestyle="-.", linewidth=0.8, alpha=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("directions per record m (dotted: the theory's privacy floor; dash-dot: the largest m "
                      "within budget)", fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel(f"σ by the exact accountant at (ε, δ) = ({EPSILON:g}, {DP_DELTA:g})")
    fig.suptitle("The high-probability sensitivity at work: noise against the number of directions, d = 4",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="n in {1000, 4000} and 2 replicates (under a minute)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
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
    start = time.perf_counter()
    work = sorted(tasks(args.quick), key=lambda t: -t["samples"] * (8 if t["method"].startswith("multi") else 1))
    bar = progress_bar(len(work) + 1, "nsnc_improved study", "run", enabled=not args.quiet)
    rows = []
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        pending = pool.submit(sigma_table, args.quick)
        for row in pool.map(run_task, work):
            rows.append(row)
            bar.update()
        sigma = pending.result()
        bar.update()
    bar.close()
    runs = pd.DataFrame(rows).sort_values(["method", "epsilon", "samples", "replicate"]).reset_index(drop=True)
    table = cell_summary(runs)
    suffix = "_quick" if args.quick else ""
    runs.to_csv(out / f"nsnc_improved_study_runs{suffix}.csv", index=False, float_format="%.6g")
    table.to_csv(out / f"nsnc_improved_study{suffix}.csv", index=False, float_format="%.6g")
    sigma.to_csv(out / f"nsnc_improved_sigma{suffix}.csv", index=False, float_format="%.6g")
    plot_samples(table, out / f"nsnc_improved_samples{suffix}.png")
    plot_sigma(sigma, out / f"nsnc_improved_sigma{suffix}.png")
    seconds = time.perf_counter() - start
    with pd.option_context("display.width", 250, "display.max_rows", None, "display.max_columns", None):
        columns = ["population_stationarity_upper", "population_stationarity_upper_se", "population_goldstein_lower",
                   "population_goldstein_upper", "population_objective", "noise_std", "epsilon_spent", "T"]
        print(table.set_index(["epsilon", "method", "samples"])[columns].round(4))
        picks = sigma[sigma["m"].isin([1, 10, 100, 1000, 10**4, 10**5, 10**6, 10**7, 10**8])]
        print(picks.pivot_table(index="m", columns=["oracle", "mode"], values="noise_std").round(4))
    backend = runs["backend"].iloc[0]
    print(f"{len(runs)} runs ({backend} backend{'' if fast_nsnc_available() else ', fast twin not installed'}) "
          f"in {seconds:.0f} s wall, {runs['seconds'].sum():.0f} s in the runs; wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
