"""``dpref run``: run one DPZero-paper algorithm on a built-in problem (dpzero Algorithms 1 and 2, §2.1 DP-GD,
MeZO of App. B.2; the problems of dpzero App. B.1). A thin command line over ``reference.runner``, whose docstring states
what a run publishes and why each part is public.

    dpref run ALGORITHM [--problem quadratic|subspace-logistic] [--mode identity|sqrt|harmonic] [--k K]
                        [--d D] [--n N] [--data-seed S] [--held-out-n M] [--steps T] [--step-size A]
                        [--perturbation L] [--clip C] [--epsilon E] [--delta D] [--accountant A]
                        [--batching full|poisson|shuffle] [--batch-size B] [--sampling-probability Q]
                        [--direction sphere|gaussian] [--seed S] [--noise-seed S]
                        [--backend reference|fast] [--replicates R] [--output DIR [--overwrite]] [--format table|json]
                        [--include-nonprivate] [--no-progress]

ALGORITHM: ``dpzero`` (Algorithm 2), ``dpgd-zeroth-order`` or ``dpgd0`` (Algorithm 1, DPGD-0th), ``dpgd``
(first-order DP-GD), ``mezo`` (MeZO / ZO-SGD, not private: no --epsilon, --delta, --accountant, --noise-seed).

Problems: ``quadratic`` is the effective-rank quadratic of dpzero App. B.1 (f(x; z) = ½(x − z)^T A (x − z),
z ~ N(1, I), A = I, diag(1/√i) or diag(1/i) for --mode identity, sqrt, harmonic; not Lipschitz, dpzero.E10).
``subspace-logistic`` is logistic regression with features in a random k-dimensional subspace (L = 1, ℓ = 1/4,
effective rank <= k). Training data from ``Streams(--data-seed).generator("dpref run", PROBLEM)``; a held-out set
of --held-out-n rows (default n) from the same law with the key ("dpref run", PROBLEM, "held-out"). Every run
starts at x_0 = 0 (dpzero.E11).

Reported (the summary, the table, the files): the held-out objective F and ‖∇F‖² at x_0, at the released x_τ,
at x_T and their mean over t < T, E_τ (τ ~ Unif{0..T−1}) — computed on the held-out data, never on the
training data. ``--seed`` is the public seed (directions, τ). ``--noise-seed`` is the secret one: by default
fresh operating-system entropy, so two runs with the same --seed release different values; a value given is
never written anywhere (the recorded command shows ``<secret>``). ``--replicates R`` (fast backend) runs R
replicates whose public seeds are spawned from --seed (``reference.secrets.replicate_seeds``) and whose secret
seeds are spawned from the secret one, in one vectorized call, and reports means and standard errors.

--output DIR writes ``releases.csv`` (replicate, t, release or release_0..release_{d-1}: the private output),
``trajectory.csv`` (replicate, t, heldout_objective, heldout_grad_norm_sq), ``ledger.json`` (the privacy plan,
public seeds, secret-seed source, guarantee condition, τ per replicate) and ``manifest.json`` (command, settings,
public seeds, package versions, time, summary). Training-set quantities (clip counts and fraction, batch sizes,
evaluation counts, training ‖∇F‖², time) are not private: only --include-nonprivate shows them, in a section
marked NOT PRIVATE and in ``nonprivate_diagnostics.json``. The --output directory is created and checked before
the run (``reference.reporting.prepare_output_dir``): a path under a regular file, an unwritable directory or a
non-empty one without --overwrite is bad usage. A progress bar (stderr, one tick per traced step)
shows on long runs unless --no-progress.

Exit codes: 0 success; 2 bad usage (the message names the option).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from reference.algorithms.dpzero import ACCOUNTANTS, BATCHINGS, DIRECTIONS
from reference.objectives import QUADRATIC_MODES
from reference.reporting import prepare_output_dir
from reference.rng import SEED_BOUND
from reference.runner import (
    ALGORITHMS,
    BACKENDS,
    PROBLEMS,
    publication,
    render_table,
    run_algorithm,
    summary,
)

__all__ = ["register", "run", "write_publication", "FORMATS", "DEFAULTS", "NOISE_SEED_HELP"]

FORMATS = ("table", "json")

DEFAULTS = {
    "problem": "quadratic", "mode": "harmonic", "k": 3, "d": 100, "n": 1000, "data_seed": 0, "steps": 200,
    "step_size": 0.01, "perturbation": 1e-4, "clip": 10.0, "epsilon": 2.0, "delta": 1e-6, "batching": "full",
    "seed": 0, "backend": "fast", "replicates": 1,
}

NOISE_SEED_HELP = ("secret seed (default: fresh OS entropy); the guarantee then rests on it staying secret; "
                   "never written")


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``run`` command to an argparse sub-parser set."""
    parser = subparsers.add_parser("run", help="run an algorithm on a built-in problem; releases, held-out "
                                   "diagnostics and ledger out", description=__doc__.split("\n\n")[0])
    parser.add_argument("algorithm", metavar="ALGORITHM", help=f"one of {', '.join(ALGORITHMS)}")
    add = parser.add_argument
    add("--problem", default=None, help=f"{' | '.join(PROBLEMS)} (default {DEFAULTS['problem']})")
    add("--mode", default=None, help=f"quadratic Hessian: {' | '.join(QUADRATIC_MODES)} (default {DEFAULTS['mode']})")
    add("--k", type=int, default=None, help=f"subspace-logistic: subspace dimension (default {DEFAULTS['k']})")
    add("--d", type=int, default=DEFAULTS["d"], help="dimension d")
    add("--n", type=int, default=DEFAULTS["n"], help="number of training data points n")
    add("--data-seed", type=int, default=DEFAULTS["data_seed"], metavar="S", help="seed of the problem's data (public)")
    add("--held-out-n", type=int, default=None, metavar="M", help="rows of the held-out set (default n)")
    add("--steps", type=int, default=DEFAULTS["steps"], metavar="T", help="iterations T")
    add("--step-size", type=float, default=DEFAULTS["step_size"], metavar="A", help="step size α")
    add("--perturbation", type=float, default=None, metavar="L",
        help=f"zeroth-order perturbation λ (default {DEFAULTS['perturbation']:g}; not for dpgd)")
    add("--clip", type=float, default=None, metavar="C",
        help=f"clip threshold C (default {DEFAULTS['clip']:g}; mezo: inf, i.e. no clipping)")
    add("--epsilon", type=float, default=None, metavar="E", help=f"target ε (default {DEFAULTS['epsilon']:g})")
    add("--delta", type=float, default=None, metavar="D", help=f"target δ (default {DEFAULTS['delta']:g})")
    add("--accountant", default=None, help="accountant (default: the first of the batching's; see dpref run --help)")
    add("--batching", default=DEFAULTS["batching"], help=f"{' | '.join(BATCHINGS)}")
    add("--batch-size", type=int, default=None, metavar="B", help="batch size B (poisson: expected; shuffle: fixed)")
    add("--sampling-probability", type=float, default=None, metavar="Q",
        help="poisson only: the rate q as a public constant (add/remove guarantee); default q = B/n (zero-out)")
    add("--direction", default=None, help=f"{' | '.join(DIRECTIONS)} (default sphere; mezo: gaussian; not for dpgd)")
    add("--seed", type=int, default=DEFAULTS["seed"], metavar="S", help="public seed (directions, output index)")
    add("--noise-seed", type=int, default=None, metavar="S", help=NOISE_SEED_HELP)
    add("--backend", default=DEFAULTS["backend"], help=f"{' | '.join(BACKENDS)} (default {DEFAULTS['backend']})")
    add("--replicates", type=int, default=DEFAULTS["replicates"], metavar="R", help="replicate runs (fast backend)")
    add("--output", default=None, metavar="DIR",
        help="write releases.csv, trajectory.csv, ledger.json and manifest.json")
    add("--overwrite", action="store_true",
        help="with --output: write into a non-empty directory, overwriting its files (refused otherwise)")
    add("--format", default="table", help="table | json")
    add("--include-nonprivate", action="store_true",
        help="also show training-set diagnostics (NOT PRIVATE: clip counts, batch sizes, evaluation counts, "
             "training gradient norms) and write nonprivate_diagnostics.json")
    add("--no-progress", action="store_true", help="hide the progress bar")
    return parser


# ---------------------------------------------------------------------------------------------------
# Validation (the messages name the command-line option)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _finite_positive(option: str, value) -> None:
    _require(value is not None and math.isfinite(value) and value > 0,
             f"{option} must be a finite number > 0, got {value}")


def _settings_from_args(args) -> dict:
    """Validated keyword arguments of ``run_algorithm`` from parsed arguments; ValueError names the option."""
    _require(args.algorithm in ALGORITHMS, f"ALGORITHM must be one of {', '.join(ALGORITHMS)}, got {args.algorithm!r}")
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
            "noise_seed": args.noise_seed, "backend": args.backend, "replicates": args.replicates}


# ---------------------------------------------------------------------------------------------------
# Running and writing


def write_publication(files: dict[str, str], directory) -> Path:
    """Write the files of ``reference.runner.publication`` into ``directory`` (created if needed)."""
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).write_text(text, encoding="utf-8")
    return path


def run(args, command=None) -> int:
    """Run ``dpref run`` from parsed arguments; returns the exit code (0, or 2 for bad usage). ``command`` is the
    command line recorded in the manifest (any --noise-seed value is masked there)."""
    try:
        settings = _settings_from_args(args)
        if args.output:
            prepare_output_dir(args.output, overwrite=getattr(args, "overwrite", False), option="--output")
        outcome = run_algorithm(args.algorithm, progress=not args.no_progress, **settings)
    except (ValueError, TypeError) as exc:
        print(f"dpref run: error: {exc}", file=sys.stderr)
        return 2
    del settings  # holds the secret seed, if one was given: it goes no further
    include = args.include_nonprivate
    record = summary(outcome, include_nonprivate=include)
    if args.output:
        files = publication(outcome, command=command or f"dpref run {args.algorithm}", include_nonprivate=include)
        record["output"] = str(write_publication(files, args.output))
    if args.format == "json":
        print(json.dumps(record, indent=2))
    else:
        print(render_table(record))
    return 0

