"""``dpref run``: run one DPZero-paper algorithm on a built-in problem (dpzero Algorithms 1 and 2, §2.1 DP-GD,
MeZO of App. B.2; the problems of dpzero App. B.1), zo_o2nc Algorithm 3 with Algorithm 4 or 6, nsnc_improved
Algorithm 2 with Algorithm 3, 4 or 5, or spider_sosp Algorithm 2 with Algorithm 3 (below). A thin command line over
``reference.runner``, ``reference.runner_nsnc_improved`` and ``reference.runner_spider_sosp``, whose docstrings state
what a run publishes and why each part is public.

    dpref run ALGORITHM [--problem quadratic|subspace-logistic] [--mode identity|sqrt|harmonic] [--k K]
                        [--d D] [--n N] [--data-seed S] [--held-out-n M] [--steps T] [--step-size A]
                        [--perturbation L] [--clip C] [--epsilon E] [--delta D] [--accountant A]
                        [--batching full|poisson|shuffle] [--batch-size B] [--sampling-probability Q]
                        [--direction sphere|gaussian] [--seed S] [--noise-seed S]
                        [--backend reference|fast] [--replicates R] [--memory-limit SIZE]
                        [--output DIR [--overwrite]] [--format table|json] [--include-nonprivate] [--quiet | -q]

ALGORITHM: ``dpzero`` (Algorithm 2), ``dpgd-zeroth-order`` or ``dpgd0`` (Algorithm 1, DPGD-0th), ``dpgd``
(first-order DP-GD), ``mezo`` (MeZO / ZO-SGD, not private: no --epsilon, --delta, --accountant, --noise-seed).

Problems: ``quadratic`` is the effective-rank quadratic of dpzero App. B.1 (f(x; z) = ½(x − z)^T A (x − z),
z ~ N(1, I), A = I, diag(1/√i) or diag(1/i) for --mode identity, sqrt, harmonic; not Lipschitz, dpzero.E10).
``subspace-logistic`` is logistic regression with features in a random k-dimensional subspace (L = 1, ℓ = 1/4,
effective rank <= k). Training data from ``Streams(--data-seed).generator("dpref run", PROBLEM)``; a held-out set
of --held-out-n rows (default n) from the same law with the key ("dpref run", PROBLEM, "held-out"). Every run
starts at x_0 = 0 (dpzero.E11). Under add/remove neighbours (--batching poisson with --sampling-probability) the
training-set size n is private, so --held-out-n is required (a held-out set of n rows would publish n).

Reported (the summary, the table, the JSON record, the files): the objective value F — the mean loss over
the held-out rows — and the stationarity measure ‖∇F‖², at the released x_τ (the algorithm's output), at x_T,
at x_0 and their mean over t < T, E_τ (τ ~ Unif{0..T−1}). Both are computed on the held-out data, never on the training
data; the record says so in its "diagnostics" entry and the table in its "held-out set" row. ``--seed`` is the
public seed (directions, τ). ``--noise-seed`` is the secret one: by default fresh operating-system entropy, so
two runs with the same --seed release different values; a value given is never written anywhere (the recorded
command shows ``<secret>``). ``--replicates R`` (fast backend) runs R replicates whose public seeds are spawned
from --seed (``reference.secrets.replicate_seeds``) and whose secret seeds are spawned from the secret one, in
one vectorized call, and reports means and standard errors.

--output DIR writes ``releases.csv`` (replicate, t, release or release_0..release_{d-1}: the private output),
``trajectory.csv`` (replicate, t, heldout_objective, heldout_grad_norm_sq), ``ledger.json`` (the privacy plan,
public seeds, secret-seed source, guarantee condition, τ per replicate: fixed by public inputs, nothing computed
on data) and ``manifest.json`` (command, settings, public seeds, package versions, time, summary with the
held-out F and ‖∇F‖²). Training-set quantities (clip counts and fraction, batch sizes, evaluation counts,
training ‖∇F‖², time) are not private: only --include-nonprivate shows them, in a section marked NOT PRIVATE
and in ``nonprivate_diagnostics.json``. The --output directory is created and checked before the run
(``reference.reporting.prepare_output_dir``): a path under a regular file, an unwritable directory or a
non-empty one without --overwrite is bad usage.

Memory: before anything is built, the bytes the run needs are estimated from the sizes
(``reference.runner.estimate_memory``: the training and held-out data, the fast backend's per-block arrays,
releases, traces, seeds and, with --output, the files' text) and compared with --memory-limit SIZE (bytes, or
with a unit K, M, G, T — powers of 1024 — e.g. 16G; default: the memory available now, read with psutil, else
the physical memory). A run that would not fit is refused at once, nothing allocated.

Divergence: a run whose iterate or held-out F or ‖∇F‖² becomes non-finite (steps too long for the problem)
stops there; nothing is written and the message gives the step, the value and the settings that set the step
length (--step-size, --clip and, for the zeroth-order algorithms, --perturbation). Only public quantities
(iterates, held-out data) decide it. Floating-point warnings are not printed (the algorithms count replaced
per-record values; see --include-nonprivate).

Progress: a bar on stderr (``reference.progress.progress_bar``: redrawn on a terminal, whole lines every 10 s
when stderr is piped), one tick per replicate and traced step, once the traced steps have taken a second;
--quiet (``-q``) turns it off (--no-progress is an alias). Standard output holds only the table or the JSON
record.

zo_o2nc (``reference.runner.run_zo_o2nc``): ``zo_o2nc`` is zo_o2nc Algorithm 3 + projected OSD + Algorithm 4 (the
tree oracle) with Theorem 4.9's settings, ``zo_o2nc-naive`` the same with Algorithm 6 (App. E's settings):

    dpref run zo_o2nc|zo_o2nc-naive [--problem wshape|capped|abs] [--d D] [--samples M] [--population N]
                        [--held-out-n H] [--data-seed S] [--rho RHO] [--smoothing-radius DELTA]
                        [--T-rule max|paper_min] [--count-rule exact|paper_2lnT] (zo_o2nc)
                        [--sigma-rule exact|paper] [--batch-rule one|dimension | --batch-size B] (zo_o2nc-naive)
                        [--delta D] [--seed S] [--noise-seed S] [--backend reference|fast] [--goldstein-samples S]
                        [--memory-limit SIZE] [--output DIR [--overwrite]] [--format table|json]
                        [--include-nonprivate] [--quiet | -q]

Problems: f(x; z) = φ(<a, x> − c) with φ(r) = ||r| − 1| (wshape), min(|r|, 1) (capped) or |r| (abs), a population
of N ridges (a uniform on the sphere, c ~ N(0, 0.5²)) from the data seed; the M records and the H held-out rows
(default M) are draws from it, each with its own stream; start x_1 = (5/√d)·(1, …, 1). The settings (T, K, B1,
B2 or B, D = δ/T, η, σ) are the theory's for M, d, L = 1, δ, ρ and F* = F(x_1) on the population; a data set too
small for one epoch is refused with the number of records that suffices. --rho inf runs without noise (not
private). Reported, at the released w̄ = w̄^{k*} and at x_1, on the held-out rows and on the population (both
public: never the training records): F, the Goldstein norm ‖∇F‖_{2δ} (radius 2δ, zo_o2nc.E7) as an interval
[lower, upper] (upper from the gradients at w̄ and at --goldstein-samples points sampled in the ball from the
public seed), the proxy ‖(1/T) Σ_t ∇F̂_δ(w_t^{k*})‖, Theorem 4.9's bound; the privacy plan (ρ and ε under the exact
and the printed accounting, the tight ε claimed). --output writes releases.csv (k, t, the released g̃_t^k),
epochs.csv (F of every epoch average w̄^k, and w̄^k), output.csv (w̄), diagnostics.json (the held-out and
population diagnostics), ledger.json and manifest.json;
--include-nonprivate adds the training-set diagnostics (NOT PRIVATE). Options of the DPZero-paper algorithms
(--steps, --step-size, --epsilon, --clip, …) are refused, and the zo_o2nc options for them.

nsnc_improved (``reference.runner_nsnc_improved``): nsnc_improved Algorithm 2 (O2NC with clipped OGD) with the
oracle of Algorithm 3 (``single-pass``), Algorithm 3 with common random numbers (``single-pass-crn``, not in the
paper), Algorithm 5 (``first-order``), Algorithm 4 (``multi-pass``) or Algorithm 4 with Algorithm 5's estimator
(``multi-pass-first-order``), on the zo_o2nc ridge problems, with the settings of Theorem 3.1 / C.4 (single pass) or
Theorem 4.1 (multi pass):

    dpref run nsnc_improved --oracle single-pass|single-pass-crn|first-order|multi-pass|multi-pass-first-order
                        [--problem wshape|capped|abs] [--d D] [--samples M] [--population N] [--held-out-n H]
                        [--data-seed S] [--epsilon E] [--delta D] [--smoothing-radius A] [--directions M]
                        [--variant corrected|paper] [--accountant exact|paper] (single pass) [--clip-hardening]
                        (single pass) [--sensitivity-mode auto|worst-case] [--target-stationarity B] (multi pass)
                        [--seed S] [--noise-seed S] [--backend reference|fast] [--goldstein-samples S]
                        [--memory-limit SIZE] [--output DIR [--overwrite]] [--format table|json]
                        [--include-nonprivate] [--quiet | -q]

Defaults: d 4, M 20 000 (multi pass 5 000), ε 1, δ 1e-6, α 0.25, β 1.5, m = 64 directions per record. Φ =
F_population(x0). The theory's m (its privacy floor) is ~10⁶–10⁷ at these sizes (hundreds for the CRN variant);
--directions theory asks for it. With any other m the plan uses min(worst case, high probability) per step kind
(or the worst case with --sensitivity-mode worst-case), so the guarantee stays valid at every m; σ, η and the
certified bound follow the run's m. Before the
records are drawn, the run's loss (gradient) evaluations are counted from the settings: beyond
``EVALUATION_BUDGET[backend]/(d + 1)`` (10⁹ evaluations at d = 4 on the fast backend, 10⁷ on the reference backend)
or 10⁶ steps, the run is refused with the count and the options that reduce it (the largest --directions that fits,
--samples, --target-stationarity). Records too few for the settings are refused with a --samples that suffices.
Reported, at x0, at the released block average x_out and at x_T, on the held-out draws and on the population (public,
never the training records): F, the Goldstein norm ‖∇F‖_{2α} as an interval [lower, upper], the proxy ‖(1/M)Σ_t
∇F_α(z_t)‖ over the output block; the certified bound of the run's settings (and of the theory's own); the privacy
plan: which guarantee holds (worst-case; high-probability, with δ_fail paid inside δ; clip-hardened), the ε spent at
δ, μ, the sensitivities and their branches. --output writes releases.csv (k, t, the released g̃_t), blocks.csv (F of
every block average x̄_k, and x̄_k), output.csv (x_out), diagnostics.json, ledger.json and manifest.json (why each is
public: ``reference.runner_nsnc_improved``); --include-nonprivate adds the training-set diagnostics (NOT PRIVATE).
The options of the DPZero-paper and zo_o2nc algorithms (--steps, --clip, --rho, --batch-size, …) are refused with the
reason, and --oracle, --directions, --variant, --clip-hardening, --sensitivity-mode and --target-stationarity for
them.

spider_sosp (``reference.runner_spider_sosp``): spider_sosp Algorithm 2 (Liu–Talwar "Stochastic Spider": SpiderBoost
with adaptive O2 batch sizes, tree-aggregated noise and saddle perturbations) with the oracles of Algorithm 3, with
the hyper-parameters of Lemmas 3.3, 3.8, 3.10 and Proposition 3.4:

    dpref run spider_sosp [--problem cosine|cosine-det|quadratic] [--d D] [--samples N] [--data-seed S]
                        [--epsilon E|inf] [--delta D] [--mode unit|theory]
                        [--sigma-rule gdp_exact|upper_bound|thm2.2|lemma3.7|lemma3.8|thm3.11 [--allow-nonprivate]]
                        [--adjacency replace-one|zero-out] [--tree-scope global|segment] [--no-perturb]
                        [--reset-drift-on-perturb] [--start saddle|random] [--seed S] [--noise-seed S]
                        [--backend reference|fast] [--memory-limit SIZE] [--output DIR [--overwrite]]
                        [--format table|json] [--include-nonprivate] [--progress | --quiet | -q]

Problems: ``cosine`` f(x; z) = Σ_j s_j cos(x_j − z_j), s = (+1, −1, …, −1), z ~ N(0, 0.25 I) (G = √d, M = ρ = 1; an
exact strict saddle of the population at 0, minima at (π, 0, …, 0)); ``cosine-det`` the same with every record 0
(exact gradients: without the perturbation a run started at the saddle never moves); ``quadratic`` ½xᵀAx − ⟨z, x⟩,
A = diag(1, 1/2, …, 1/d), ‖z‖ = 1 (no saddle; G = 3 on ‖x‖ ≤ 2, ρ = 1). --start saddle (x0 = 0; the cosine
problems' default) or random (from --seed; the quadratic's default). Defaults: cosine, d 2, n 10⁵, ε 1, δ 1e-6, unit
mode, --sigma-rule gdp_exact (exact Gaussian-DP calibration), replace-one, one global tree. --epsilon inf runs the
non-private limit (σ = 0, no plan; --delta, --sigma-rule, --adjacency and --tree-scope are then refused, --noise-seed
still seeds the secret perturbations). --sigma-rule thm3.11 (Theorem 3.11's σ = α/√d, no ε or δ) is refused unless
--allow-nonprivate; every rule's plan reports whether it is private at the target. --no-perturb disables lines 9–11
(the ablation), --reset-drift-on-perturb is line 10's literal drift reset. The run reads every record at most once:
at most n steps and 2n gradient evaluations, refused beyond the backend's budget (the message gives the largest
--samples that fits); records too few for the first O1 batch are refused with a --samples that suffices; d is at
most 1000. Reported: the SOSP level (spider_sosp Definition 1.2, ``reference.stationarity.sosp_level``) of the
POPULATION — public, never the training records — at x0, at the last iterate and at the best iterate (the output is
the set x_1..x_T), the first α-SOSP iterate, the perturbations (at a saddle, escaped), the O1 batch b and the
distribution of the O2 batches b_t, the records used of n, the plan (σ rule and its label, private flag, exact ε at
δ, μ). --output writes releases.csv (g̃_t), trace.csv (kinds, batch sizes, drift, leaves, perturbation steps),
output.csv (the iterates, with their population F and level), diagnostics.json (population only), ledger.json and
manifest.json; --include-nonprivate adds the training-set diagnostics (NOT PRIVATE). The noiseless estimates, the
tree noise and the perturbation vectors are never written. The options of the other algorithms are refused with
the reason, and --adjacency, --tree-scope, --no-perturb, --reset-drift-on-perturb, --start and --allow-nonprivate
for them.

bgm21 (``reference.runner_bgm21``): the algorithms of Bassily–Guzmán–Menart 2021 with their theorems' settings, on
problems whose population quantities are exact (``reference.objectives_bgm21``):

    dpref run bgm21 --algorithm polysfw|nsfw|noisy-fw|phased-sgd|prox-smd [--problem P] [--n N] [--d D]
                        [--epsilon E] [--delta D] [--schedule practical|theory] (polysfw, nsfw)
                        [--sigma-hat-eta prev|printed] (nsfw) [--laplace-scale certified|ttz15] (noisy-fw)
                        [--alpha corrected|printed] (noisy-fw) [--beta corrected|printed] (phased-sgd, prox-smd)
                        [--data-seed S] [--seed S] [--noise-seed S] [--backend reference|fast] [--memory-limit SIZE]
                        [--output DIR [--overwrite]] [--format table|json] [--progress | --quiet | -q]

--algorithm: ``polysfw`` Algorithm 1 (problem sigmoid-l1), ``nsfw`` Algorithm 6 (sigmoid-l2, sigmoid-l1.5),
``noisy-fw`` Algorithm 5 (abs-cube, d <= 14: its population is enumerated exactly), ``phased-sgd`` Phased-SGD
(abs-sphere), ``prox-smd`` Algorithm 2 at p = 2 (sigmoid-wc). Defaults: n 4096 (noisy-fw and prox-smd 2000), d 10, ε 1, δ 1e-6,
the practical schedule, every variant corrected; --sigma-hat-eta printed (bgm21.E10), --laplace-scale ttz15
(bgm21.E28), --alpha printed (bgm21.E3) and --beta printed (bgm21.E2) run the paper's printed formulas and report the
ε their ledger certifies against the target. Reported: the theorem's measure (excess population risk, Frank–Wolfe
gap, proximal near-stationarity) on the exact population — its mean over every output candidate (the expectation over
the uniformly drawn output), at the output and at the start —, the fraction of the data read, and the ε the run's
ledger certifies with the route that decided. --output writes releases.csv, trace.csv, output.csv, diagnostics.json,
ledger.json and manifest.json (why each is public: ``reference.runner_bgm21``); nothing computed on the training
records is written or printed (--include-nonprivate is refused). A run beyond the evaluation budget, the memory, or
d > 200 is refused before the records are drawn. The options of the other algorithms are refused with the reason, and
--algorithm, --schedule, --sigma-hat-eta, --laplace-scale, --alpha and --beta for them.

Exit codes: 0 success; 2 refused, with ONE line on stderr — ``dpref run: error: <reason>`` naming the option
(``dpref: error: <reason>`` for an output directory that fails while writing):

* bad usage: an unknown, malformed or out-of-range option or an inconsistent combination (argparse's messages
  included: no usage block is printed; a --noise-seed value is never repeated);
* a run that would not fit in memory: the estimate, the limit and the options to reduce (--d, --n,
  --held-out-n, --batch-size, --replicates, --steps; zo_o2nc and nsnc_improved: --samples, --population,
  --directions), or --memory-limit;
* records too few for the theory's settings (zo_o2nc: one epoch; nsnc_improved: one block, or the multi-pass target;
  spider_sosp: the first O1 batch): the number of records that suffices;
* an nsnc_improved or spider_sosp run beyond the evaluation or step budget: the count, the budget and the options
  that reduce it;
* a run that diverged (exit 2 too: the settings, not the program, are at fault and the message says which to
  change): the step, the value, --step-size and, where they apply, --clip and --perturbation;
* a run that ran out of memory although the estimate fitted (the estimate is not a bound).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

from reference.algorithms.dpzero import ACCOUNTANTS, BATCHINGS, DIRECTIONS
from reference.objectives import QUADRATIC_MODES
from dpref.parsing import one_line_errors
from reference.reporting import prepare_output_dir
from reference.rng import SEED_BOUND
from reference.runner_nsnc_improved import (
    NSNC_ACCOUNTANTS,
    NSNC_DEFAULTS,
    NSNC_ORACLES,
    NSNC_PROBLEMS,
    NSNC_VARIANTS,
    BudgetExceeded,
    SamplesNeeded,
    SettingRefused,
    execute_nsnc_improved,
    nsnc_memory_parts,
    nsnc_publication,
    nsnc_summary,
    prepare_nsnc_improved,
    render_nsnc,
)
from reference.runner_bgm21 import (
    BGM21_ALGORITHMS,
    BGM21_PROBLEMS,
    bgm21_publication,
    bgm21_summary,
    execute_bgm21,
    prepare_bgm21,
    render_bgm21,
)
from reference.runner_spider_sosp import (
    D_MAX as SPIDER_D_MAX,
    EPSILON_RANGE as SPIDER_EPSILON_RANGE,
    SPIDER_DEFAULTS,
    SPIDER_MODES,
    SPIDER_PROBLEMS,
    SPIDER_SIGMA_RULES,
    SPIDER_STARTS,
    SPIDER_TREE_SCOPES,
    execute_spider_sosp,
    prepare_spider_sosp,
    render_spider,
    spider_publication,
    spider_summary,
)
from reference.runner import (
    ALGORITHMS,
    BACKENDS,
    O2NC_ALGORITHMS,
    O2NC_BATCH_RULES,
    O2NC_COUNT_RULES,
    O2NC_DEFAULTS,
    O2NC_PROBLEMS,
    O2NC_SIGMA_RULES,
    O2NC_T_RULES,
    PROBLEMS,
    SMOOTHING_RADIUS_RANGE,
    GOLDSTEIN_SAMPLES_MAX,
    MemoryLimitError,
    RecordsNeeded,
    RunDiverged,
    check_memory,
    check_o2nc_memory,
    estimate_memory,
    format_bytes,
    mask_command,
    o2nc_memory_parts,
    publication,
    render_table,
    run_algorithm,
    run_zo_o2nc,
    summary,
)

__all__ = ["register", "run", "write_publication", "parse_size", "FORMATS", "DEFAULTS", "NOISE_SEED_HELP"]

FORMATS = ("table", "json")

DEFAULTS = {
    "problem": "quadratic", "mode": "harmonic", "k": 3, "d": 100, "n": 1000, "data_seed": 0, "steps": 200,
    "step_size": 0.01, "perturbation": 1e-4, "clip": 10.0, "epsilon": 2.0, "delta": 1e-6, "batching": "full",
    "seed": 0, "backend": "fast", "replicates": 1,
}

#: Options of the zo_o2nc algorithms only (argparse dest -> option), and of the DPZero-paper algorithms only.
O2NC_OPTIONS = {"samples": "--samples", "population": "--population", "rho": "--rho",
                "smoothing_radius": "--smoothing-radius", "T_rule": "--T-rule", "count_rule": "--count-rule",
                "sigma_rule": "--sigma-rule", "batch_rule": "--batch-rule", "goldstein_samples": "--goldstein-samples"}
DPZERO_OPTIONS = {
    "mode": ("--mode", "the problems are ridge functions: --problem"),
    "k": ("--k", "the problems are ridge functions: --problem"),
    "n": ("--n", "the number of records is --samples M"),
    "steps": ("--steps", "T is set by Theorem 4.9 / App. E from --samples, --d, --smoothing-radius, --rho and "
                         "--T-rule"),
    "step_size": ("--step-size", "η = D/(G√T) is set by the theory (zo_o2nc.E10)"),
    "perturbation": ("--perturbation", "the finite-difference radius is the smoothing radius: --smoothing-radius"),
    "clip": ("--clip", "nothing is clipped: the sensitivity rests on L-Lipschitz losses (Lemmas 3.1/3.2)"),
    "epsilon": ("--epsilon", "the privacy target is --rho (ρ of (α, αρ²/2)-RDP, zo_o2nc §2); the ε it gives at "
                             "--delta is reported"),
    "accountant": ("--accountant", "the plan accounts the tree exactly and as printed, both reported"),
    "batching": ("--batching", "the data are read in one pass, in index order (zo_o2nc.E12)"),
    "sampling_probability": ("--sampling-probability", "there is no subsampling (zo_o2nc.E12)"),
    "direction": ("--direction", "the directions are uniform on the unit sphere (Algorithms 1, 2 and 6)"),
    "replicates": ("--replicates", "one run at a time (examples/zo_o2nc_study.py runs replicates)"),
}

#: Options of nsnc_improved only (argparse dest -> option).
NSNC_OPTIONS = {"oracle": "--oracle", "directions": "--directions", "variant": "--variant",
                "clip_hardening": "--clip-hardening", "sensitivity_mode": "--sensitivity-mode",
                "target_stationarity": "--target-stationarity"}
#: The algorithm name of ``dpref run nsnc_improved``.
NSNC_ALGORITHM = "nsnc_improved"
#: Options of the other algorithms that nsnc_improved refuses, with the reason.
NSNC_REFUSED = {
    "mode": ("--mode", "the problems are ridge functions: --problem"),
    "k": ("--k", "the problems are ridge functions: --problem"),
    "n": ("--n", "the number of records is --samples M"),
    "steps": ("--steps", "T is set by Theorem 3.1/C.4 (single pass: from --samples) or Theorem 4.1 (multi pass: "
                         "from --target-stationarity and --smoothing-radius)"),
    "step_size": ("--step-size", "eta = D/(G1 sqrt(M)) is set by the theory"),
    "perturbation": ("--perturbation", "the smoothing radius alpha is --smoothing-radius"),
    "clip": ("--clip", "nothing is clipped but by --clip-hardening: the sensitivities rest on L-Lipschitz losses"),
    "batching": ("--batching", "single pass: records read once in index order; multi pass: every record every step"),
    "batch_size": ("--batch-size", "B1 = tree size and B2 = 1 are the theory's (multi pass: all records)"),
    "sampling_probability": ("--sampling-probability", "there is no subsampling"),
    "direction": ("--direction", "the directions are uniform on the sphere (first order: in the ball); their number "
                                 "is --directions"),
    "replicates": ("--replicates", "one run at a time (examples/nsnc_improved_study.py runs replicates)"),
    "rho": ("--rho", "the privacy target is --epsilon at --delta"),
    "T_rule": ("--T-rule", "a zo_o2nc option"),
    "count_rule": ("--count-rule", "a zo_o2nc option"),
    "sigma_rule": ("--sigma-rule", "a zo_o2nc-naive option"),
    "batch_rule": ("--batch-rule", "a zo_o2nc-naive option"),
}
#: --sensitivity-mode values -> the algorithm's sensitivity_mode.
SENSITIVITY_MODE_NAMES = {"auto": "auto", "worst-case": "worst_case"}

#: The algorithm name of ``dpref run spider_sosp``.
SPIDER_ALGORITHM = "spider_sosp"
#: Options of spider_sosp only (argparse dest -> option).
SPIDER_OPTIONS = {"adjacency": "--adjacency", "tree_scope": "--tree-scope", "no_perturb": "--no-perturb",
                  "reset_drift_on_perturb": "--reset-drift-on-perturb", "start": "--start",
                  "allow_nonprivate": "--allow-nonprivate"}
#: Options of the other algorithms that spider_sosp refuses, with the reason.
SPIDER_REFUSED = {
    "k": ("--k", "the problems are --problem cosine, cosine-det or quadratic"),
    "n": ("--n", "the number of records is --samples N"),
    "held_out_n": ("--held-out-n", "the diagnostics use the population in closed form, not held-out rows"),
    "steps": ("--steps", "T = n: the run is data-limited, each step reads fresh records until they run out"),
    "step_size": ("--step-size", "eta = 1/M (spider_sosp §3.1)"),
    "perturbation": ("--perturbation", "the saddle perturbation's scale zeta is the theory's (--mode)"),
    "clip": ("--clip", "records are clipped to the problem's G (O1) and M|x_t - x_(t-1)| (O2)"),
    "accountant": ("--accountant", "sigma is set by --sigma-rule and accounted by the exact Gaussian-DP plan"),
    "batching": ("--batching", "one pass over the records in a public random order, fresh batches"),
    "batch_size": ("--batch-size", "b and b_t are Lemma 3.8's (adaptive)"),
    "sampling_probability": ("--sampling-probability", "there is no subsampling"),
    "direction": ("--direction", "the algorithm is first order"),
    "replicates": ("--replicates", "one run at a time"),
    "population": ("--population", "the population is the problem's law, in closed form"),
    "rho": ("--rho", "the privacy target is --epsilon at --delta"),
    "smoothing_radius": ("--smoothing-radius", "the algorithm is first order: nothing is smoothed"),
    "T_rule": ("--T-rule", "a zo_o2nc option"),
    "count_rule": ("--count-rule", "a zo_o2nc option"),
    "batch_rule": ("--batch-rule", "a zo_o2nc-naive option"),
    "goldstein_samples": ("--goldstein-samples", "the SOSP level is exact on the population"),
    "oracle": ("--oracle", "an nsnc_improved option"),
    "directions": ("--directions", "an nsnc_improved option"),
    "variant": ("--variant", "an nsnc_improved option"),
    "clip_hardening": ("--clip-hardening", "an nsnc_improved option"),
    "sensitivity_mode": ("--sensitivity-mode", "an nsnc_improved option"),
    "target_stationarity": ("--target-stationarity", "an nsnc_improved option"),
}
#: --adjacency values -> the algorithm's adjacency.
SPIDER_ADJACENCY_NAMES = {"replace-one": "replace_one", "zero-out": "zero_out"}

#: The algorithm name of ``dpref run bgm21``.
BGM21_ALGORITHM = "bgm21"
#: Options of bgm21 only (argparse dest -> option).
BGM21_OPTIONS = {"bgm21_algorithm": "--algorithm", "schedule": "--schedule", "sigma_hat_eta": "--sigma-hat-eta",
                 "laplace_scale": "--laplace-scale", "beta": "--beta", "alpha": "--alpha"}
#: Options of the other algorithms that bgm21 refuses, with the reason.
BGM21_REFUSED = {
    "mode": ("--mode", "the problems are --problem's"),
    "k": ("--k", "the problems are --problem's"),
    "samples": ("--samples", "the number of records is --n"),
    "population": ("--population", "the population is the problem's law, exact"),
    "held_out_n": ("--held-out-n", "the measures use the exact population, not held-out rows"),
    "steps": ("--steps", "the number of steps is set by the algorithm's theorem"),
    "step_size": ("--step-size", "the step sizes are the algorithm's theorem's"),
    "perturbation": ("--perturbation", "the algorithms are first order"),
    "clip": ("--clip", "nothing is clipped: the sensitivities rest on the problems' Lipschitz constants"),
    "accountant": ("--accountant", "the run's ledger certifies its epsilon (the best of its routes)"),
    "batching": ("--batching", "one pass over disjoint batches in a public order (noisy-fw: the full batch)"),
    "batch_size": ("--batch-size", "the batch sizes are the algorithm's theorem's (or the practical schedule)"),
    "sampling_probability": ("--sampling-probability", "there is no subsampling"),
    "direction": ("--direction", "the algorithms are first order"),
    "replicates": ("--replicates", "one run at a time"),
    "rho": ("--rho", "the privacy target is --epsilon at --delta"),
    "smoothing_radius": ("--smoothing-radius", "a zo_o2nc and nsnc_improved option"),
    "T_rule": ("--T-rule", "a zo_o2nc option"),
    "count_rule": ("--count-rule", "a zo_o2nc option"),
    "sigma_rule": ("--sigma-rule", "the noise scales are the paper's (see --sigma-hat-eta, --laplace-scale)"),
    "batch_rule": ("--batch-rule", "a zo_o2nc-naive option"),
    "goldstein_samples": ("--goldstein-samples", "the measures are exact on the population"),
    "oracle": ("--oracle", "an nsnc_improved option; bgm21 takes --algorithm"),
    "directions": ("--directions", "an nsnc_improved option"),
    "variant": ("--variant", "an nsnc_improved option; bgm21's printed variants are --sigma-hat-eta, "
                             "--laplace-scale, --alpha and --beta"),
    "clip_hardening": ("--clip-hardening", "an nsnc_improved option"),
    "sensitivity_mode": ("--sensitivity-mode", "an nsnc_improved option"),
    "target_stationarity": ("--target-stationarity", "an nsnc_improved option"),
    "adjacency": ("--adjacency", "a spider_sosp option (bgm21's neighbours replace one record)"),
    "tree_scope": ("--tree-scope", "a spider_sosp option"),
    "no_perturb": ("--no-perturb", "a spider_sosp option"),
    "reset_drift_on_perturb": ("--reset-drift-on-perturb", "a spider_sosp option"),
    "start": ("--start", "the start is the problem's public start"),
    "allow_nonprivate": ("--allow-nonprivate", "a spider_sosp option"),
}



def _directions_value(text: str):
    """argparse type of --directions: a whole number, or "theory" (the theory's privacy floor)."""
    if text.strip().lower() == "theory":
        return "theory"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number or 'theory', got {text!r}") from None


NOISE_SEED_HELP = ("secret seed (default: fresh OS entropy); the guarantee then rests on it staying secret; "
                   "never written")


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``run`` command to an argparse sub-parser set."""
    parser = subparsers.add_parser("run", help="run an algorithm on a built-in problem; releases, held-out "
                                   "diagnostics and ledger out", description=__doc__.split("\n\n")[0])
    parser.add_argument("algorithm", metavar="ALGORITHM",
                        help=f"one of {', '.join([*ALGORITHMS, *O2NC_ALGORITHMS, NSNC_ALGORITHM, SPIDER_ALGORITHM, BGM21_ALGORITHM])}")
    add = parser.add_argument
    add("--problem", default=None, help=f"{' | '.join(PROBLEMS)} (default {DEFAULTS['problem']}); zo_o2nc and "
        f"nsnc_improved: {' | '.join(O2NC_PROBLEMS)} (default {O2NC_DEFAULTS['problem']}); spider_sosp: "
        f"{' | '.join(SPIDER_PROBLEMS)} (default {SPIDER_DEFAULTS['problem']})")
    add("--mode", default=None, help=f"quadratic Hessian: {' | '.join(QUADRATIC_MODES)} (default {DEFAULTS['mode']}); "
        f"spider_sosp: the settings' mode, {' | '.join(SPIDER_MODES)} (default {SPIDER_DEFAULTS['mode']})")
    add("--k", type=int, default=None, help=f"subspace-logistic: subspace dimension (default {DEFAULTS['k']})")
    add("--d", type=int, default=None, help=f"dimension d (default {DEFAULTS['d']}; zo_o2nc {O2NC_DEFAULTS['d']}, "
        f"nsnc_improved {NSNC_DEFAULTS['d']}, spider_sosp {SPIDER_DEFAULTS['d']})")
    add("--n", type=int, default=None, help=f"number of training data points n (default {DEFAULTS['n']})")
    add("--data-seed", type=int, default=DEFAULTS["data_seed"], metavar="S", help="seed of the problem's data (public)")
    add("--held-out-n", type=int, default=None, metavar="M",
        help="rows of the held-out set (default n, zo_o2nc: --samples; required with --sampling-probability)")
    add("--steps", type=int, default=None, metavar="T", help=f"iterations T (default {DEFAULTS['steps']})")
    add("--step-size", type=float, default=None, metavar="A", help=f"step size α (default {DEFAULTS['step_size']:g})")
    add("--perturbation", type=float, default=None, metavar="L",
        help=f"zeroth-order perturbation λ (default {DEFAULTS['perturbation']:g}; not for dpgd)")
    add("--clip", type=float, default=None, metavar="C",
        help=f"clip threshold C (default {DEFAULTS['clip']:g}; mezo: inf, i.e. no clipping)")
    add("--epsilon", type=float, default=None, metavar="E",
        help=f"target ε (default {DEFAULTS['epsilon']:g}; nsnc_improved {NSNC_DEFAULTS['epsilon']:g}; spider_sosp "
             f"{SPIDER_DEFAULTS['epsilon']:g}, inf: the non-private limit)")
    add("--delta", type=float, default=None, metavar="D", help=f"target δ (default {DEFAULTS['delta']:g})")
    add("--accountant", default=None, help="accountant (default: the first of the batching's; see dpref run --help; "
        f"nsnc_improved single pass: {' | '.join(NSNC_ACCOUNTANTS)}, default exact)")
    add("--batching", default=None, help=f"{' | '.join(BATCHINGS)} (default {DEFAULTS['batching']})")
    add("--batch-size", type=int, default=None, metavar="B",
        help="batch size B (poisson: expected; shuffle: fixed; zo_o2nc-naive: records per query)")
    add("--sampling-probability", type=float, default=None, metavar="Q",
        help="poisson only: the rate q as a public constant (add/remove guarantee); default q = B/n (zero-out)")
    add("--direction", default=None, help=f"{' | '.join(DIRECTIONS)} (default sphere; mezo: gaussian; not for dpgd)")
    add("--seed", type=int, default=DEFAULTS["seed"], metavar="S", help="public seed (directions, output index)")
    add("--noise-seed", type=int, default=None, metavar="S", help=NOISE_SEED_HELP)
    add("--backend", default=None, help=f"{' | '.join(BACKENDS)} (default {DEFAULTS['backend']}; zo_o2nc: fast "
        "when reference.fast.zo_o2nc is installed, else reference)")
    add("--replicates", type=int, default=None, metavar="R", help="replicate runs (fast backend)")
    group = parser.add_argument_group("zo_o2nc and zo_o2nc-naive (zo_o2nc Algorithm 3 with Algorithm 4 or 6); "
                                      "--samples, --population, --smoothing-radius, --goldstein-samples: nsnc_improved "
                                      "too")
    group.add_argument("--samples", type=int, default=None, metavar="M",
                       help=f"records M, read once (default {O2NC_DEFAULTS['samples']}; nsnc_improved multi pass "
                            f"{NSNC_DEFAULTS['multi_pass_samples']}, every record at every step; spider_sosp "
                            f"{SPIDER_DEFAULTS['samples']})")
    group.add_argument("--population", type=int, default=None, metavar="N",
                       help=f"ridge functions the records are drawn from (default {O2NC_DEFAULTS['population']})")
    group.add_argument("--rho", type=float, default=None, metavar="RHO",
                       help=f"target ρ of (α, αρ²/2)-RDP (default {O2NC_DEFAULTS['rho']:g}; inf: not private)")
    group.add_argument("--smoothing-radius", type=float, default=None, metavar="DELTA",
                       help=f"δ (nsnc_improved: α); stationarity is reported at radius 2δ (default "
                            f"{O2NC_DEFAULTS['smoothing_radius']:g})")
    group.add_argument("--T-rule", default=None, help=f"{' | '.join(O2NC_T_RULES)} (default max, zo_o2nc.E5)")
    group.add_argument("--count-rule", default=None,
                       help=f"zo_o2nc: tree count of σ, {' | '.join(O2NC_COUNT_RULES)} (default exact, zo_o2nc.E3)")
    group.add_argument("--sigma-rule", default=None,
                       help=f"zo_o2nc-naive: σ, {' | '.join(O2NC_SIGMA_RULES)} (default exact, zo_o2nc.E8); "
                            f"spider_sosp: {' | '.join(SPIDER_SIGMA_RULES)} (default gdp_exact; thm3.11 needs "
                            "--allow-nonprivate, spider_sosp.E3)")
    group.add_argument("--batch-rule", default=None,
                       help=f"zo_o2nc-naive: B, {' | '.join(O2NC_BATCH_RULES)} (d^(3/2)/ρ; default one, zo_o2nc.E9)")
    group.add_argument("--goldstein-samples", type=int, default=None, metavar="S",
                       help=f"points sampled in B(w, 2δ) for the Goldstein bound (default "
                            f"{O2NC_DEFAULTS['goldstein_samples']})")
    group = parser.add_argument_group("nsnc_improved (nsnc_improved Algorithm 2 with Algorithms 3, 4 or 5)")
    group.add_argument("--oracle", default=None,
                       help=f"{' | '.join(NSNC_ORACLES)} (required): Algorithm 3, 3 with common random numbers, 5, "
                            "4, 4 with Algorithm 5's estimator")
    group.add_argument("--directions", type=_directions_value, default=None, metavar="M",
                       help=f"directions (first order: perturbations) per record (default {NSNC_DEFAULTS['directions']}: the "
                            "practical mode, accounted with min(worst case, high probability)); 'theory': the "
                            "theory's privacy floor, often beyond the evaluation budget (the refusal names the "
                            "largest M that fits)")
    group.add_argument("--variant", default=None,
                       help=f"{' | '.join(NSNC_VARIANTS)} (default corrected): the theory's parameters as corrected "
                            "or as printed")
    group.add_argument("--clip-hardening", action="store_true", default=None,
                       help="single pass: clip each record's estimate to its high-probability bound (delta_fail = 0; "
                            "not in the paper)")
    group.add_argument("--sensitivity-mode", default=None,
                       help=f"{' | '.join(SENSITIVITY_MODE_NAMES)} (default auto: min(worst case, high probability), "
                            "delta_fail paid where the high-probability bound is used)")
    group.add_argument("--target-stationarity", type=float, default=None, metavar="B",
                       help=f"multi pass: the target beta of Theorem 4.1 (default "
                            f"{NSNC_DEFAULTS['target_stationarity']:g}; T grows like beta^-3)")
    group = parser.add_argument_group("spider_sosp (spider_sosp Algorithm 2 with Algorithm 3); --samples, --mode, "
                                      "--sigma-rule: spider_sosp too")
    group.add_argument("--adjacency", default=None,
                       help=f"{' | '.join(SPIDER_ADJACENCY_NAMES)} (default replace-one; zero-out: the paper's "
                            "sensitivities, spider_sosp.E1)")
    group.add_argument("--tree-scope", default=None,
                       help=f"{' | '.join(SPIDER_TREE_SCOPES)} (default global: one tree for the run, spider_sosp.E5; "
                            "segment: a fresh tree at every O1 step)")
    group.add_argument("--no-perturb", action="store_true", default=None,
                       help="disable the saddle perturbation (Algorithm 2 lines 9-11): the ablation")
    group.add_argument("--reset-drift-on-perturb", action="store_true", default=None,
                       help="reset drift at a perturbation step (line 10 as printed; default off)")
    group.add_argument("--start", default=None,
                       help=f"{' | '.join(SPIDER_STARTS)} (default: saddle, the cosine problems' x0 = 0; random for "
                            "the quadratic, drawn from --seed)")
    group.add_argument("--allow-nonprivate", action="store_true", default=None,
                       help="allow --sigma-rule thm3.11 (sigma = alpha/sqrt(d), no epsilon or delta: not private)")
    group = parser.add_argument_group("bgm21 (Bassily-Guzman-Menart 2021: Algorithms 1, 2, 5, 6 and Phased-SGD); --problem, "
                                      "--n, --d, --epsilon, --delta, --backend: bgm21 too")
    group.add_argument("--algorithm", dest="bgm21_algorithm", default=None,
                       help=f"{' | '.join(BGM21_ALGORITHMS)} (required): Algorithm 1, 6, 5, Phased-SGD, Algorithm 2; "
                            f"problems {', '.join(BGM21_PROBLEMS)}")
    group.add_argument("--schedule", default=None,
                       help="polysfw, nsfw: practical (default; one pass, (R, b) minimising the rates' leading terms) "
                            "| theory (Theorems 8/11's R and b)")
    group.add_argument("--sigma-hat-eta", default=None,
                       help="nsfw: prev (default; sigma-hat with eta_{r,t-1}) | printed (bgm21.E10)")
    group.add_argument("--laplace-scale", default=None,
                       help="noisy-fw: certified (default) | ttz15 (Talwar-Thakurta-Zhang's printed scale, bgm21.E28)")
    group.add_argument("--beta", default=None,
                       help="phased-sgd, prox-smd: corrected (default) | printed (Theorem 5's beta, bgm21.E2; "
                            "Theorem 16's, equal at p = 2)")
    group.add_argument("--alpha", default=None,
                       help="noisy-fw: corrected (default) | printed (Theorem 6's alpha = 1/(n ln n), bgm21.E3)")
    add("--output", default=None, metavar="DIR",
        help="write releases.csv, trajectory.csv (zo_o2nc: epochs.csv, output.csv, diagnostics.json; nsnc_improved: "
             "blocks.csv, output.csv, diagnostics.json; spider_sosp: trace.csv, output.csv, diagnostics.json), "
             "ledger.json and manifest.json")
    add("--overwrite", action="store_true",
        help="with --output: write into a non-empty directory, overwriting its files (refused otherwise)")
    add("--memory-limit", default=None, metavar="SIZE",
        help="refuse a run estimated to need more memory than SIZE (bytes, or with K/M/G/T, powers of 1024: "
             "e.g. 16G; default: the memory available now)")
    add("--format", default="table", help="table | json")
    add("--include-nonprivate", action="store_true",
        help="also show training-set diagnostics (NOT PRIVATE: clip counts, batch sizes, evaluation counts, "
             "training gradient norms) and write nonprivate_diagnostics.json")
    add("--quiet", "-q", action="store_true", help="no progress bar on stderr")
    add("--no-progress", dest="quiet", action="store_true", help=argparse.SUPPRESS)  # the former spelling
    add("--progress", dest="quiet", action="store_false", default=argparse.SUPPRESS,
        help="show the progress bar on stderr (the default; undoes an earlier --quiet)")
    one_line_errors(parser, redact=_redact)
    return parser


_SECRET_VALUE = re.compile(r"(argument --noise-seed: invalid \w+ value): .*")


def _redact(text: str) -> str:
    """A refusal with the --noise-seed value hidden: it is secret, and error messages end up in logs."""
    return mask_command(_SECRET_VALUE.sub(r"\1 (the value is secret and not repeated here)", text))


# ---------------------------------------------------------------------------------------------------
# Validation (the messages name the command-line option)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _finite_positive(option: str, value) -> None:
    _require(value is not None and math.isfinite(value) and value > 0,
             f"{option} must be a finite number > 0, got {value}")


_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:e[0-9]+)?)\s*([kmgtp]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """"16G" -> 17179869184: a byte count, with an optional unit K, M, G, T or P (powers of 1024; "KiB", "GB" and
    "g" are read alike). ValueError naming --memory-limit for anything else, or for less than one byte."""
    match = _SIZE.match(str(text))
    size = math.nan
    if match:
        unit = match.group(2).lower()
        size = float(match.group(1)) * (1024 ** ("kmgtp".index(unit) + 1) if unit else 1)
    _require(math.isfinite(size) and size >= 1,
             f"--memory-limit must be a size of at least 1 byte, as bytes or with K, M, G, T (powers of 1024; "
             f"e.g. 16G), got {text!r}")
    return int(size)


def _settings_from_args(args) -> dict:
    """Validated keyword arguments of ``run_algorithm`` from parsed arguments; ValueError names the option."""
    _require(args.algorithm in ALGORITHMS, f"ALGORITHM must be one of "
                                           f"{', '.join([*ALGORITHMS, *O2NC_ALGORITHMS, NSNC_ALGORITHM])}, "
                                           f"{SPIDER_ALGORITHM}, "
                                           f"got {args.algorithm!r}")
    for dest, option in O2NC_OPTIONS.items():
        owners = ("zo_o2nc, zo_o2nc-naive and nsnc_improved" if dest in _SHARED_WITH_NSNC else
                  "zo_o2nc and zo_o2nc-naive")
        owners = _SHARED_WITH_SPIDER.get(dest, owners)
        _require(getattr(args, dest, None) is None, f"{option} applies to {owners} only")
    _refuse_nsnc_options(args)
    for key in ("d", "n", "steps", "step_size", "batching", "backend", "replicates"):
        if getattr(args, key, None) is None:
            setattr(args, key, DEFAULTS[key])
    name = ALGORITHMS[args.algorithm]
    problem = args.problem or DEFAULTS["problem"]
    _require(problem in PROBLEMS, f"--problem must be one of {', '.join(PROBLEMS)}, got {problem!r}")
    _require(args.backend in BACKENDS, f"--backend must be one of {', '.join(BACKENDS)}, got {args.backend!r}")
    _require(args.format in FORMATS, f"--format must be one of {', '.join(FORMATS)}, got {args.format!r}")
    _require(args.batching in BATCHINGS, f"--batching must be one of {', '.join(BATCHINGS)}, got {args.batching!r}")
    _require(args.d >= 1, f"--d must be >= 1, got {args.d}")
    _require(args.n >= 1, f"--n must be >= 1, got {args.n}")
    _require(args.steps >= 1, f"--steps must be >= 1, got {args.steps}")
    _finite_positive("--step-size", args.step_size)
    for option, value in (("--seed", args.seed), ("--data-seed", args.data_seed)):
        _require(0 <= value < SEED_BOUND, f"{option} must lie in [0, 2**128), got {value}")
    _require(args.noise_seed is None or 0 <= args.noise_seed < SEED_BOUND,
             "--noise-seed must lie in [0, 2**128) (the value is secret and not repeated here)")
    _require(args.held_out_n is None or args.held_out_n >= 1, f"--held-out-n must be >= 1, got {args.held_out_n}")
    _require(args.replicates >= 1, f"--replicates must be >= 1, got {args.replicates}")
    _require(args.replicates == 1 or args.backend == "fast",
             f"--replicates {args.replicates} needs --backend fast (the reference runs one seed at a time)")
    mode, k = args.mode, args.k
    if problem == "quadratic":
        _require(k is None, "--k applies to --problem subspace-logistic only")
        mode = mode or DEFAULTS["mode"]
        _require(mode in QUADRATIC_MODES, f"--mode must be one of {', '.join(QUADRATIC_MODES)}, got {mode!r}")
    else:
        _require(mode is None, "--mode applies to --problem quadratic only")
        k = DEFAULTS["k"] if k is None else k
        _require(1 <= k <= args.d, f"--k must lie in [1, d] = [1, {args.d}], got {k}")
    if name == "dpgd":
        _require(args.perturbation is None,
                 "--perturbation does not apply to dpgd (first-order: no finite differences)")
        _require(args.direction is None, "--direction does not apply to dpgd (first-order: no directions)")
    perturbation = None if name == "dpgd" else (
        DEFAULTS["perturbation"] if args.perturbation is None else args.perturbation)
    if perturbation is not None:
        _finite_positive("--perturbation", perturbation)
    _require(args.direction is None or args.direction in DIRECTIONS,
             f"--direction must be one of {', '.join(DIRECTIONS)}, got {args.direction!r}")
    if name == "mezo":
        for option, value in (("--epsilon", args.epsilon), ("--delta", args.delta), ("--accountant", args.accountant),
                              ("--noise-seed", args.noise_seed)):
            _require(value is None, f"{option} does not apply to mezo (MeZO is not private)")
        clip = math.inf if args.clip is None else args.clip
        _require(clip > 0 and not math.isnan(clip), f"--clip must be > 0 (inf: no clipping), got {clip}")
        epsilon = delta = None
    else:
        clip = DEFAULTS["clip"] if args.clip is None else args.clip
        _require(math.isfinite(clip) and clip > 0,
                 f"--clip must be a finite number > 0 for a private run (an unclipped mean has unbounded sensitivity), "
                 f"got {clip}")
        epsilon = DEFAULTS["epsilon"] if args.epsilon is None else args.epsilon
        delta = DEFAULTS["delta"] if args.delta is None else args.delta
        _finite_positive("--epsilon", epsilon)
        _require(0 < delta < 1, f"--delta must lie in (0, 1), got {delta}")
        allowed = ACCOUNTANTS[args.batching]
        _require(args.accountant is None or args.accountant in allowed,
                 f"--accountant must be one of {', '.join(allowed)} for --batching {args.batching}, "
                 f"got {args.accountant!r}")
    if args.sampling_probability is not None:
        _require(args.batching == "poisson", "--sampling-probability applies to --batching poisson only")
        _require(0 < args.sampling_probability <= 1,
                 f"--sampling-probability must lie in (0, 1], got {args.sampling_probability}")
        _require(args.held_out_n is not None,
                 "--held-out-n is required with --sampling-probability (add/remove neighbours): the training-set "
                 "size n is then private, and a held-out set of n rows would publish it")
    if args.batching == "full":
        _require(args.batch_size is None, "--batch-size applies to --batching poisson or shuffle only")
    else:
        _require(args.batch_size is not None, f"--batching {args.batching} needs --batch-size B")
        _require(1 <= args.batch_size <= args.n,
                 f"--batch-size must lie in [1, n] = [1, {args.n}], got {args.batch_size}")
    return {"problem": problem, "mode": mode, "k": k, "d": args.d, "n": args.n, "data_seed": args.data_seed,
            "held_out_n": args.held_out_n,
            "steps": args.steps, "step_size": args.step_size, "perturbation": perturbation, "clip": clip,
            "epsilon": epsilon, "delta": delta, "accountant": args.accountant, "batching": args.batching,
            "batch_size": args.batch_size, "sampling_probability": args.sampling_probability,
            "direction": args.direction, "seed": args.seed,
            "noise_seed": args.noise_seed, "backend": args.backend, "replicates": args.replicates,
            "memory_limit": None if getattr(args, "memory_limit", None) is None else parse_size(args.memory_limit)}


def _o2nc_settings_from_args(args) -> dict:
    """Validated keyword arguments of ``run_zo_o2nc`` from parsed arguments (zo_o2nc, zo_o2nc-naive); ValueError
    names the option."""
    naive = O2NC_ALGORITHMS[args.algorithm] == "zo_o2nc_naive"
    _refuse_nsnc_options(args)
    for dest, (option, why) in DPZERO_OPTIONS.items():
        _require(getattr(args, dest, None) is None, f"{option} does not apply to {args.algorithm}: {why}")
    _require(args.batch_size is None or naive,
             "--batch-size applies to zo_o2nc-naive only (Algorithm 4 reads B1 = T + 1 records, then B2 = 1)")
    for dest, option in (("count_rule", "--count-rule"),) if naive else (("sigma_rule", "--sigma-rule"),
                                                                         ("batch_rule", "--batch-rule")):
        owner = "zo_o2nc" if dest == "count_rule" else "zo_o2nc-naive"
        _require(getattr(args, dest) is None, f"{option} applies to {owner} only")
    value = {key: (O2NC_DEFAULTS[key] if getattr(args, key, None) is None else getattr(args, key))
             for key in ("problem", "d", "samples", "population", "rho", "smoothing_radius", "T_rule", "count_rule",
                         "sigma_rule", "batch_rule", "goldstein_samples")}
    value["delta"] = O2NC_DEFAULTS["delta"] if args.delta is None else args.delta
    _require(value["problem"] in O2NC_PROBLEMS,
             f"--problem must be one of {', '.join(O2NC_PROBLEMS)} for {args.algorithm}, got {value['problem']!r}")
    _require(args.format in FORMATS, f"--format must be one of {', '.join(FORMATS)}, got {args.format!r}")
    backend = args.backend
    _require(backend is None or backend in BACKENDS, f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    for option, key in (("--d", "d"), ("--samples", "samples"), ("--population", "population")):
        _require(value[key] >= 1, f"{option} must be >= 1, got {value[key]}")
    _require(1 <= value["goldstein_samples"] <= GOLDSTEIN_SAMPLES_MAX,
             f"--goldstein-samples must lie in [1, {GOLDSTEIN_SAMPLES_MAX}] (each Wolfe iteration of the min-norm "
             f"point costs S·d), got {value['goldstein_samples']}")
    _require(args.held_out_n is None or args.held_out_n >= 1, f"--held-out-n must be >= 1, got {args.held_out_n}")
    rho = value["rho"]
    _require(not math.isnan(rho) and rho > 0,
             f"--rho must be a number > 0 (inf: a run without noise, not private), got {rho}")
    low, high = SMOOTHING_RADIUS_RANGE
    radius = value["smoothing_radius"]
    _require(math.isfinite(radius) and low <= radius <= high,
             f"--smoothing-radius must lie in [{low:g}, {high:g}] (float64 finite differences need δ well above the "
             f"rounding of the iterates), got {radius}")
    _require(0 < value["delta"] < 1, f"--delta must lie in (0, 1), got {value['delta']}")
    for option, key, choices in (("--T-rule", "T_rule", O2NC_T_RULES), ("--count-rule", "count_rule", O2NC_COUNT_RULES),
                                 ("--sigma-rule", "sigma_rule", O2NC_SIGMA_RULES),
                                 ("--batch-rule", "batch_rule", O2NC_BATCH_RULES)):
        _require(value[key] in choices, f"{option} must be one of {', '.join(choices)}, got {value[key]!r}")
    _require(args.batch_size is None or args.batch_rule is None, "--batch-size and --batch-rule exclude each other")
    _require(args.batch_size is None or 1 <= args.batch_size <= value["samples"],
             f"--batch-size must lie in [1, M] = [1, {value['samples']}], got {args.batch_size}")
    for option, seed in (("--seed", args.seed), ("--data-seed", args.data_seed)):
        _require(0 <= seed < SEED_BOUND, f"{option} must lie in [0, 2**128), got {seed}")
    _require(args.noise_seed is None or 0 <= args.noise_seed < SEED_BOUND,
             "--noise-seed must lie in [0, 2**128) (the value is secret and not repeated here)")
    _require(args.noise_seed is None or not math.isinf(rho),
             "--noise-seed does not apply to --rho inf (a run without noise is not private)")
    _require(args.delta is None or not math.isinf(rho), "--delta does not apply to --rho inf (not private)")
    return {"algorithm": args.algorithm, "problem": value["problem"], "d": value["d"], "samples": value["samples"],
            "population": value["population"], "held_out_n": args.held_out_n, "data_seed": args.data_seed,
            "rho": rho, "smoothing_radius": radius, "T_rule": value["T_rule"], "count_rule": value["count_rule"],
            "sigma_rule": value["sigma_rule"], "batch_rule": value["batch_rule"], "batch_size": args.batch_size,
            "delta": value["delta"], "seed": args.seed, "noise_seed": args.noise_seed, "backend": backend,
            "goldstein_samples": value["goldstein_samples"],
            "memory_limit": None if getattr(args, "memory_limit", None) is None else parse_size(args.memory_limit)}


#: zo_o2nc options that nsnc_improved takes too.
_SHARED_WITH_NSNC = ("samples", "population", "smoothing_radius", "goldstein_samples")
#: zo_o2nc options that spider_sosp takes too, with every algorithm that takes them.
_SHARED_WITH_SPIDER = {"samples": "zo_o2nc, zo_o2nc-naive, nsnc_improved and spider_sosp",
                       "sigma_rule": "zo_o2nc-naive and spider_sosp"}


def _refuse_nsnc_options(args) -> None:
    """The options of nsnc_improved, refused for the other algorithms."""
    for dest, option in NSNC_OPTIONS.items():
        _require(getattr(args, dest, None) is None, f"{option} applies to nsnc_improved only")


def _nsnc_settings_from_args(args) -> dict:
    """Validated keyword arguments of ``reference.runner_nsnc_improved.prepare_nsnc_improved`` from parsed arguments;
    ValueError names the option. The options of the other algorithms are refused with the reason."""
    for dest, (option, why) in NSNC_REFUSED.items():
        _require(getattr(args, dest, None) is None, f"{option} does not apply to nsnc_improved: {why}")
    _require(args.oracle is not None, f"nsnc_improved needs --oracle, one of {', '.join(NSNC_ORACLES)}")
    _require(args.oracle in NSNC_ORACLES, f"--oracle must be one of {', '.join(NSNC_ORACLES)}, got {args.oracle!r}")
    multi = args.oracle.startswith("multi")
    _require(args.format in FORMATS, f"--format must be one of {', '.join(FORMATS)}, got {args.format!r}")
    backend = args.backend
    _require(backend is None or backend in BACKENDS, f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    problem = args.problem or NSNC_DEFAULTS["problem"]
    _require(problem in NSNC_PROBLEMS,
             f"--problem must be one of {', '.join(NSNC_PROBLEMS)} for nsnc_improved, got {problem!r}")
    d = NSNC_DEFAULTS["d"] if args.d is None else args.d
    samples = args.samples if args.samples is not None else NSNC_DEFAULTS["multi_pass_samples" if multi else "samples"]
    population = NSNC_DEFAULTS["population"] if args.population is None else args.population
    for option, value in (("--d", d), ("--samples", samples), ("--population", population)):
        _require(value >= 1, f"{option} must be >= 1, got {value}")
    _require(args.held_out_n is None or args.held_out_n >= 1, f"--held-out-n must be >= 1, got {args.held_out_n}")
    goldstein = NSNC_DEFAULTS["goldstein_samples"] if args.goldstein_samples is None else args.goldstein_samples
    _require(1 <= goldstein <= GOLDSTEIN_SAMPLES_MAX,
             f"--goldstein-samples must lie in [1, {GOLDSTEIN_SAMPLES_MAX}] (each Wolfe iteration of the min-norm "
             f"point costs S·d), got {goldstein}")
    epsilon = NSNC_DEFAULTS["epsilon"] if args.epsilon is None else args.epsilon
    _finite_positive("--epsilon", epsilon)
    delta = NSNC_DEFAULTS["delta"] if args.delta is None else args.delta
    _require(0 < delta < 1, f"--delta must lie in (0, 1), got {delta}")
    low, high = SMOOTHING_RADIUS_RANGE
    radius = NSNC_DEFAULTS["smoothing_radius"] if args.smoothing_radius is None else args.smoothing_radius
    _require(math.isfinite(radius) and low <= radius <= high,
             f"--smoothing-radius must lie in [{low:g}, {high:g}] (float64 finite differences need alpha well above "
             f"the rounding of the iterates), got {radius}")
    directions = NSNC_DEFAULTS["directions"] if args.directions is None else args.directions
    _require(directions == "theory" or directions >= 1, f"--directions must be >= 1 or 'theory', got {directions}")
    variant = NSNC_DEFAULTS["variant"] if args.variant is None else args.variant
    _require(variant in NSNC_VARIANTS, f"--variant must be one of {', '.join(NSNC_VARIANTS)}, got {variant!r}")
    mode = "auto" if args.sensitivity_mode is None else args.sensitivity_mode
    _require(mode in SENSITIVITY_MODE_NAMES,
             f"--sensitivity-mode must be one of {', '.join(SENSITIVITY_MODE_NAMES)}, got {mode!r}")
    clip_hardening = bool(args.clip_hardening)
    if multi:
        _require(args.accountant is None,
                 "--accountant applies to the single-pass oracles only (multi pass: sigma_1, sigma_2 by the exact "
                 "accountant)")
        _require(not clip_hardening, "--clip-hardening applies to the single-pass oracles only")
        target = NSNC_DEFAULTS["target_stationarity"] if args.target_stationarity is None else args.target_stationarity
        _finite_positive("--target-stationarity", target)
        accountant = "exact"
    else:
        _require(args.target_stationarity is None,
                 "--target-stationarity applies to the multi-pass oracles only (Theorem 4.1; the single-pass settings "
                 "follow from --samples)")
        target = None
        accountant = NSNC_DEFAULTS["accountant"] if args.accountant is None else args.accountant
        _require(accountant in NSNC_ACCOUNTANTS,
                 f"--accountant must be one of {', '.join(NSNC_ACCOUNTANTS)} for nsnc_improved, got {accountant!r}")
    _require(not (clip_hardening and mode == "worst-case"),
             "--clip-hardening and --sensitivity-mode worst-case exclude each other (the worst-case sensitivities "
             "hold without clipping)")
    for option, seed in (("--seed", args.seed), ("--data-seed", args.data_seed)):
        _require(0 <= seed < SEED_BOUND, f"{option} must lie in [0, 2**128), got {seed}")
    _require(args.noise_seed is None or 0 <= args.noise_seed < SEED_BOUND,
             "--noise-seed must lie in [0, 2**128) (the value is secret and not repeated here)")
    _require(args.noise_seed is None or args.noise_seed != args.data_seed,
             "--noise-seed must differ from --data-seed (the data seed is published: noise drawn from it could be "
             "regenerated; omit --noise-seed to draw fresh secret entropy)")
    _require(args.noise_seed is None or args.noise_seed != args.seed,
             "--noise-seed must differ from --seed (the public seed is published: noise drawn from it could be "
             "regenerated; omit --noise-seed to draw fresh secret entropy)")
    return {"oracle": args.oracle, "problem": problem, "d": d, "samples": samples, "population": population,
            "held_out_n": args.held_out_n, "data_seed": args.data_seed, "epsilon": epsilon, "delta": delta,
            "smoothing_radius": radius, "directions": directions,
            "variant": variant, "accountant": accountant,
            "clip_hardening": clip_hardening, "sensitivity_mode": SENSITIVITY_MODE_NAMES[mode],
            "target_stationarity": target, "seed": args.seed, "noise_seed": args.noise_seed, "backend": backend,
            "goldstein_samples": goldstein,
            "memory_limit": None if getattr(args, "memory_limit", None) is None else parse_size(args.memory_limit)}


def _o2nc_sizes(settings: dict) -> dict:
    """The arguments of ``reference.runner.check_o2nc_memory`` from validated settings."""
    rho = None if math.isinf(settings["rho"]) else settings["rho"]
    batch = settings["batch_size"] or (max(1, round(settings["d"] ** 1.5 / rho))
                                       if settings["batch_rule"] == "dimension" and rho else 1)
    return {"d": settings["d"], "samples": settings["samples"], "population": settings["population"],
            "held_out_n": settings["held_out_n"], "rho": rho, "batch_size": batch,
            "goldstein_samples": settings["goldstein_samples"]}


def _sizes(settings: dict) -> dict:
    """The arguments of ``reference.runner.estimate_memory`` from validated settings."""
    keys = ("problem", "d", "n", "held_out_n", "steps", "replicates", "backend", "batching", "batch_size")
    return {**{key: settings[key] for key in keys}, "k": settings["k"] or 1}


# ---------------------------------------------------------------------------------------------------
# Running and writing


def write_publication(files: dict[str, str], directory) -> Path:
    """Write the files of ``reference.runner.publication`` into ``directory`` (created if needed)."""
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).write_text(text, encoding="utf-8")
    return path


def _option_message(exc: ValueError) -> str:
    """The message of a refusal, with command-line options in place of run_algorithm's parameters."""
    described = (MemoryLimitError, RunDiverged, RecordsNeeded, SamplesNeeded, BudgetExceeded, SettingRefused)
    return exc.describe(cli=True) if isinstance(exc, described) else str(exc)


def run(args, command=None) -> int:
    """Run ``dpref run`` from parsed arguments; returns the exit code (0, or 2 for a refusal: one line on stderr,
    see the module docstring). ``command`` is the command line recorded in the manifest (any --noise-seed value is
    masked there)."""
    if args.algorithm == BGM21_ALGORITHM:
        return _run_bgm21(args, command)
    for dest, option in BGM21_OPTIONS.items():
        if getattr(args, dest, None) is not None:
            print(f"dpref run: error: {option} applies to bgm21 only", file=sys.stderr)
            return 2
    if args.algorithm == SPIDER_ALGORITHM:
        return _run_spider(args, command)
    for dest, option in SPIDER_OPTIONS.items():
        if getattr(args, dest, None) is not None:
            print(f"dpref run: error: {option} applies to spider_sosp only", file=sys.stderr)
            return 2
    if args.algorithm in O2NC_ALGORITHMS:
        return _run_o2nc(args, command)
    if args.algorithm == NSNC_ALGORITHM:
        return _run_nsnc(args, command)
    try:
        settings = _settings_from_args(args)
        # the memory the run and its files need, before the output directory is touched or anything allocated
        check_memory(args.algorithm, **_sizes(settings), publish=bool(args.output),
                     memory_limit=settings["memory_limit"])
        if args.output:
            prepare_output_dir(args.output, overwrite=getattr(args, "overwrite", False), option="--output")
        outcome = run_algorithm(args.algorithm, progress=not getattr(args, "quiet", False), **settings)
    except (ValueError, TypeError) as exc:
        print(f"dpref run: error: {_option_message(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        estimate = estimate_memory(args.algorithm, **_sizes(_settings_from_args(args)), publish=bool(args.output))
        print(f"dpref run: error: out of memory, although the run was estimated to need {format_bytes(estimate)} "
              f"(an estimate, not a bound); reduce --d, --n, --replicates or --steps", file=sys.stderr)
        return 2
    del settings  # holds the secret seed, if one was given: it goes no further
    return _report(outcome, args, command)


def _report(outcome, args, command, *, summarise=summary, publish=publication, render=render_table) -> int:
    """Print the run's summary and write what it publishes (``--output``); exit status 0."""
    include = args.include_nonprivate
    record = summarise(outcome, include_nonprivate=include)
    if args.output:
        files = publish(outcome, command=command or f"dpref run {args.algorithm}", include_nonprivate=include)
        record["output"] = str(write_publication(files, args.output))
    if args.format == "json":
        print(json.dumps(record, indent=2))
    else:
        print(render(record))
    return 0


def _run_o2nc(args, command=None) -> int:
    """``dpref run zo_o2nc`` / ``zo_o2nc-naive``: as ``run``, over ``reference.runner.run_zo_o2nc``."""
    try:
        settings = _o2nc_settings_from_args(args)
        sizes = _o2nc_sizes(settings)
        # the memory the run and its files need, before the output directory is touched or anything allocated
        check_o2nc_memory(args.algorithm, **sizes, publish=bool(args.output), memory_limit=settings["memory_limit"])
        if args.output:
            prepare_output_dir(args.output, overwrite=getattr(args, "overwrite", False), option="--output")
        algorithm = settings.pop("algorithm")
        outcome = run_zo_o2nc(algorithm, progress=not getattr(args, "quiet", False), **settings)
    except (ValueError, TypeError) as exc:
        print(f"dpref run: error: {_option_message(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        estimate = sum(part.bytes for part in o2nc_memory_parts(args.algorithm, **_o2nc_sizes(
            _o2nc_settings_from_args(args)), publish=bool(args.output)))
        print(f"dpref run: error: out of memory, although the run was estimated to need at most about "
              f"{format_bytes(estimate)} (an estimate, not a bound); reduce --samples or --d", file=sys.stderr)
        return 2
    del settings  # holds the secret seed, if one was given: it goes no further
    return _report(outcome, args, command)


def _run_nsnc(args, command=None) -> int:
    """``dpref run nsnc_improved``: as ``run``, over ``reference.runner_nsnc_improved``. Every check, the theory's
    settings, the evaluation and step budgets and the memory come before the output directory is touched."""
    prepared = None
    try:
        settings = _nsnc_settings_from_args(args)
        prepared = prepare_nsnc_improved(**settings, publish=bool(args.output))
        del settings  # holds the secret seed, if one was given: it goes no further
        if args.output:
            prepare_output_dir(args.output, overwrite=getattr(args, "overwrite", False), option="--output")
        outcome = execute_nsnc_improved(prepared, progress=not getattr(args, "quiet", False))
    except (ValueError, TypeError) as exc:
        print(f"dpref run: error: {_option_message(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        if prepared is None:  # while the population was drawn
            print("dpref run: error: out of memory while drawing the population; reduce --population or --d",
                  file=sys.stderr)
            return 2
        run = prepared.run
        s = prepared.settings
        estimate = sum(part.bytes for part in nsnc_memory_parts(
            s["oracle"], d=s["d"], samples=s["samples"], population=s["population"], held_out_n=s["held_out_n"],
            goldstein_samples=s["goldstein_samples"], publish=bool(args.output), steps=run["T"],
            step_points=run["step_points"]))
        print(f"dpref run: error: out of memory, although the run was estimated to need at most about "
              f"{format_bytes(estimate)} (an estimate, not a bound); reduce --samples, --d or --directions",
              file=sys.stderr)
        return 2
    del prepared
    return _report(outcome, args, command, summarise=nsnc_summary, publish=nsnc_publication, render=render_nsnc)


def _spider_settings_from_args(args) -> dict:
    """Validated keyword arguments of ``reference.runner_spider_sosp.prepare_spider_sosp`` from parsed arguments;
    ValueError names the option. The options of the other algorithms are refused with the reason."""
    for dest, (option, why) in SPIDER_REFUSED.items():
        _require(getattr(args, dest, None) is None, f"{option} does not apply to spider_sosp: {why}")
    _require(args.format in FORMATS, f"--format must be one of {', '.join(FORMATS)}, got {args.format!r}")
    backend = args.backend
    _require(backend is None or backend in BACKENDS, f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    problem = args.problem or SPIDER_DEFAULTS["problem"]
    _require(problem in SPIDER_PROBLEMS,
             f"--problem must be one of {', '.join(SPIDER_PROBLEMS)} for spider_sosp, got {problem!r}")
    d = SPIDER_DEFAULTS["d"] if args.d is None else args.d
    samples = SPIDER_DEFAULTS["samples"] if args.samples is None else args.samples
    for option, value in (("--d", d), ("--samples", samples)):
        _require(value >= 1, f"{option} must be >= 1, got {value}")
    _require(d <= SPIDER_D_MAX, f"--d must be <= {SPIDER_D_MAX} for spider_sosp, got {d} (the SOSP level needs the "
                                "smallest eigenvalue of the d x d population Hessian: d^3 operations)")
    epsilon = SPIDER_DEFAULTS["epsilon"] if args.epsilon is None else args.epsilon
    low, high = SPIDER_EPSILON_RANGE
    _require(epsilon == math.inf or low <= epsilon <= high,
             f"--epsilon must lie in [{low:g}, {high:g}], or be inf (the non-private limit: no noise), got {epsilon}")
    private = not math.isinf(epsilon)
    mode = SPIDER_DEFAULTS["mode"] if args.mode is None else args.mode
    _require(mode in SPIDER_MODES, f"--mode must be one of {', '.join(SPIDER_MODES)} for spider_sosp, got {mode!r}")
    start = args.start
    _require(start is None or start in SPIDER_STARTS,
             f"--start must be one of {', '.join(SPIDER_STARTS)}, got {start!r}")
    _require(not (start == "saddle" and problem == "quadratic"),
             "--start saddle applies to the cosine problems only (the quadratic is strongly convex: it has no saddle); "
             "use --start random")
    rule, allow = args.sigma_rule, bool(args.allow_nonprivate)
    delta, adjacency, scope = args.delta, args.adjacency, args.tree_scope
    if private:
        delta = SPIDER_DEFAULTS["delta"] if delta is None else delta
        _require(0 < delta < 1, f"--delta must lie in (0, 1), got {delta}")
        rule = SPIDER_DEFAULTS["sigma_rule"] if rule is None else rule
        _require(rule in SPIDER_SIGMA_RULES,
                 f"--sigma-rule must be one of {', '.join(SPIDER_SIGMA_RULES)} for spider_sosp, got {rule!r}")
        _require(rule != "thm3.11" or allow,
                 "--sigma-rule thm3.11 (Theorem 3.11 as printed: sigma = alpha/sqrt(d), no epsilon or delta) is not "
                 "private (spider_sosp.E3); add --allow-nonprivate to run it anyway")
        _require(not allow or rule == "thm3.11", "--allow-nonprivate applies to --sigma-rule thm3.11 only")
        adjacency = "replace-one" if adjacency is None else adjacency
        _require(adjacency in SPIDER_ADJACENCY_NAMES,
                 f"--adjacency must be one of {', '.join(SPIDER_ADJACENCY_NAMES)}, got {adjacency!r}")
        adjacency = SPIDER_ADJACENCY_NAMES[adjacency]
        scope = SPIDER_DEFAULTS["tree_scope"] if scope is None else scope
        _require(scope in SPIDER_TREE_SCOPES,
                 f"--tree-scope must be one of {', '.join(SPIDER_TREE_SCOPES)}, got {scope!r}")
    else:
        for option, value in (("--delta", delta), ("--sigma-rule", rule), ("--adjacency", adjacency),
                              ("--tree-scope", scope)):
            _require(value is None, f"{option} does not apply to --epsilon inf (the non-private limit: no noise, no "
                                    "privacy plan)")
        _require(not allow, "--allow-nonprivate does not apply to --epsilon inf (the run is not private anyway)")
    for option, seed in (("--seed", args.seed), ("--data-seed", args.data_seed)):
        _require(0 <= seed < SEED_BOUND, f"{option} must lie in [0, 2**128), got {seed}")
    _require(args.noise_seed is None or 0 <= args.noise_seed < SEED_BOUND,
             "--noise-seed must lie in [0, 2**128) (the value is secret and not repeated here)")
    _require(args.noise_seed is None or args.noise_seed != args.data_seed,
             "--noise-seed must differ from --data-seed (the data seed is published: noise drawn from it could be "
             "regenerated; omit --noise-seed to draw fresh secret entropy)")
    _require(args.noise_seed is None or args.noise_seed != args.seed,
             "--noise-seed must differ from --seed (the public seed is published: noise drawn from it could be "
             "regenerated; omit --noise-seed to draw fresh secret entropy)")
    return {"problem": problem, "d": d, "samples": samples, "data_seed": args.data_seed, "epsilon": epsilon,
            "delta": delta, "mode": mode, "sigma_rule": rule, "adjacency": adjacency, "tree_scope": scope,
            "perturb": not args.no_perturb, "reset_drift_on_perturb": bool(args.reset_drift_on_perturb),
            "start": start, "allow_nonprivate": allow, "seed": args.seed, "noise_seed": args.noise_seed,
            "backend": backend,
            "memory_limit": None if getattr(args, "memory_limit", None) is None else parse_size(args.memory_limit)}


def _run_spider(args, command=None) -> int:
    """``dpref run spider_sosp``: as ``run``, over ``reference.runner_spider_sosp``. Every check, the settings, the
    privacy plan, the budget and the memory come before the output directory is touched or a record is drawn."""
    try:
        settings = _spider_settings_from_args(args)
        prepared = prepare_spider_sosp(**settings, publish=bool(args.output),
                                       include_nonprivate=bool(args.include_nonprivate))
        del settings  # holds the secret seed, if one was given: it goes no further
        if args.output:
            prepare_output_dir(args.output, overwrite=getattr(args, "overwrite", False), option="--output")
        outcome = execute_spider_sosp(prepared, progress=not getattr(args, "quiet", False))
    except (ValueError, TypeError, ArithmeticError) as exc:
        message = exc.describe(cli=True) if callable(getattr(exc, "describe", None)) else str(exc)
        print(f"dpref run: error: {' '.join(message.split())}", file=sys.stderr)
        return 2
    except MemoryError:
        print("dpref run: error: out of memory, although the run was estimated to fit (an estimate, not a bound); "
              "reduce --samples or --d", file=sys.stderr)
        return 2
    del prepared
    return _report(outcome, args, command, summarise=spider_summary, publish=spider_publication,
                   render=render_spider)


def _bgm21_settings_from_args(args) -> dict:
    """Validated keyword arguments of ``reference.runner_bgm21.prepare_bgm21`` from parsed arguments; ValueError
    names the option. The options of the other algorithms are refused with the reason."""
    for dest, (option, why) in BGM21_REFUSED.items():
        _require(getattr(args, dest, None) is None, f"{option} does not apply to bgm21: {why}")
    _require(not args.include_nonprivate, "--include-nonprivate does not apply to bgm21: its runs compute nothing "
                                          "on the training records outside the privacy plan")
    _require(args.format in FORMATS, f"--format must be one of {', '.join(FORMATS)}, got {args.format!r}")
    algorithm = args.bgm21_algorithm
    _require(algorithm is not None, f"--algorithm is required for bgm21: one of {', '.join(BGM21_ALGORITHMS)}")
    _require(algorithm in BGM21_ALGORITHMS,
             f"--algorithm must be one of {', '.join(BGM21_ALGORITHMS)} for bgm21, got {algorithm!r}")
    _require(args.backend is None or args.backend in BACKENDS,
             f"--backend must be one of {', '.join(BACKENDS)}, got {args.backend!r}")
    _require(args.problem is None or args.problem in BGM21_PROBLEMS,
             f"--problem must be one of {', '.join(BGM21_PROBLEMS)} for bgm21, got {args.problem!r}")
    for option, value in (("--n", args.n), ("--d", args.d)):
        _require(value is None or value >= 2, f"{option} must be >= 2, got {value}")
    for option, value in (("--epsilon", args.epsilon), ("--delta", args.delta)):
        _require(value is None or math.isfinite(value), f"{option} must be a finite number, got {value}")
    _require(args.epsilon is None or args.epsilon > 0, f"--epsilon must be > 0, got {args.epsilon}")
    _require(args.delta is None or 0 < args.delta < 1, f"--delta must lie in (0, 1), got {args.delta}")
    for option, seed in (("--seed", args.seed), ("--data-seed", args.data_seed)):
        _require(0 <= seed < SEED_BOUND, f"{option} must lie in [0, 2**128), got {seed}")
    _require(args.noise_seed is None or 0 <= args.noise_seed < SEED_BOUND,
             "--noise-seed must lie in [0, 2**128) (the value is secret and not repeated here)")
    _require(args.noise_seed is None or args.noise_seed != args.data_seed,
             "--noise-seed must differ from --data-seed (the data seed is published: noise drawn from it could be "
             "regenerated; omit --noise-seed to draw fresh secret entropy)")
    _require(args.noise_seed is None or args.noise_seed != args.seed,
             "--noise-seed must differ from --seed (the public seed is published: noise drawn from it could be "
             "regenerated; omit --noise-seed to draw fresh secret entropy)")
    settings = {"problem": args.problem, "n": args.n, "d": args.d, "epsilon": args.epsilon, "delta": args.delta,
                "schedule": args.schedule, "sigma_hat_eta": args.sigma_hat_eta, "laplace_scale": args.laplace_scale,
                "beta": args.beta, "alpha": args.alpha, "seed": args.seed, "data_seed": args.data_seed,
                "noise_seed": args.noise_seed, "backend": args.backend,
                "memory_limit": None if getattr(args, "memory_limit", None) is None else parse_size(args.memory_limit)}
    return {"algorithm": algorithm, **{k: v for k, v in settings.items() if v is not None}}


_BGM21_OPTION_NAMES = {"n": "--n", "d": "--d", "epsilon": "--epsilon", "delta": "--delta", "schedule": "--schedule",
                       "sigma_hat_eta": "--sigma-hat-eta", "laplace_scale": "--laplace-scale", "beta": "--beta",
                       "alpha": "--alpha", "problem": "--problem", "backend": "--backend", "seed": "--seed",
                       "data_seed": "--data-seed", "memory_limit": "--memory-limit"}


def _bgm21_message(exc: Exception) -> str:
    """A refusal of ``prepare_bgm21`` with the command-line options in place of its parameters."""
    if callable(getattr(exc, "describe", None)):
        return exc.describe(cli=True)
    text = str(exc)
    for param, option in _BGM21_OPTION_NAMES.items():
        text = re.sub(rf"^{param}\b", option, text)
    return text


def _run_bgm21(args, command=None) -> int:
    """``dpref run bgm21``: as ``run``, over ``reference.runner_bgm21``. Every check, the settings, the budget and the
    memory come before the output directory is touched or a record is drawn."""
    try:
        settings = _bgm21_settings_from_args(args)
        prepared = prepare_bgm21(**settings)
        del settings  # holds the secret seed, if one was given: it goes no further
        if args.output:
            prepare_output_dir(args.output, overwrite=getattr(args, "overwrite", False), option="--output")
        outcome = execute_bgm21(prepared, progress=not getattr(args, "quiet", False))
    except (ValueError, TypeError, ArithmeticError) as exc:
        print(f"dpref run: error: {' '.join(_bgm21_message(exc).split())}", file=sys.stderr)
        return 2
    except MemoryError:
        print("dpref run: error: out of memory, although the run was estimated to fit (an estimate, not a bound); "
              "reduce --n or --d", file=sys.stderr)
        return 2
    del prepared
    return _report(outcome, args, command, summarise=lambda o, include_nonprivate=False: bgm21_summary(o),
                   publish=bgm21_publication, render=render_bgm21)
