"""``dpref run``: run one DPZero-paper algorithm on a built-in problem; trajectory and ledger out (DESIGN.md,
Command line; dpzero §2 Algorithms 1 and 2, §2.1 DP-GD, §2.4 MeZO; problems of dpzero.md §6.1 and §6.3).

    dpref run ALGORITHM [--problem quadratic|subspace-logistic] [--mode identity|sqrt|harmonic] [--k K]
                        [--d D] [--n N] [--data-seed S] [--steps T] [--step-size A] [--perturbation L] [--clip C]
                        [--epsilon E] [--delta D] [--accountant A] [--batching full|poisson|shuffle]
                        [--batch-size B] [--sampling-probability Q] [--direction sphere|gaussian] [--seed S]
                        [--noise-seed S]
                        [--backend reference|fast] [--replicates R] [--output DIR] [--format table|json]
                        [--no-progress]

ALGORITHM: ``dpzero`` (Algorithm 2), ``dpgd-zeroth-order`` or ``dpgd0`` (Algorithm 1, DPGD-0th), ``dpgd``
(first-order DP-GD), ``mezo`` (MeZO / ZO-SGD, not private: no --epsilon, --delta, --accountant).

Problems: ``quadratic`` is the effective-rank quadratic of dpzero §6.1 (``EffectiveRankQuadratic``: f(x; z) =
½(x − z)^T A (x − z), z ~ N(1, I), A = I, diag(1/√i) or diag(1/i) for --mode identity, sqrt, harmonic; not
Lipschitz, E10). ``subspace-logistic`` is (P2) of dpzero.md §6.3 (``SubspaceLogistic``: logistic regression with
features in a random k-dimensional subspace, L = 1, ℓ = 1/4, effective rank <= k). The data are drawn from
``Streams(--data-seed).generator("dpref run", PROBLEM)``. Every run starts at x_0 = 0 (E11).

The traced metric is ‖∇F(x_t)‖² on the training data, t = 0..T; the run reports it at x_0, at the released x_τ,
at x_T and its mean over t < T, E_τ‖∇F(x_τ)‖² (τ ~ Unif{0..T−1}). ``--seed`` is the public seed (directions, τ),
``--noise-seed`` the secret one (default: --seed). ``--replicates R`` (fast backend) runs seeds S..S+R−1 and noise
seeds N..N+R−1 in one vectorized call and reports means and standard errors over the replicates.

--output DIR writes ``trajectory.csv`` (replicate, t, grad_norm_sq), ``ledger.json`` (the privacy plan — noise σ,
sensitivity, accountant, relation, certified and tight ε — the per-step clip counts and batch sizes, the evaluation
counts; one entry per replicate) and ``manifest.json`` (command, every setting, seeds, package versions, time and the
summary). A progress bar (stderr, one tick per traced step) shows on long runs unless --no-progress.

Exit codes: 0 success; 2 bad usage (the message names the option).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit
from tqdm.auto import tqdm

import dpref
from reference.algorithms import dpzero as reference_dpzero
from reference.algorithms.dpzero import ACCOUNTANTS, BATCHINGS, DIRECTIONS
from reference.objectives import QUADRATIC_MODES, EffectiveRankQuadratic
from reference.objectives_dpzero import SubspaceLogistic
from reference.rng import Streams

__all__ = ["register", "run", "run_algorithm", "build_problem", "squared_gradient_norm", "ALGORITHMS", "PROBLEMS",
           "BACKENDS", "RunOutcome"]

#: CLI name -> protocol / function name in reference.algorithms.dpzero and reference.fast.dpzero.
ALGORITHMS = {
    "dpzero": "dpzero",
    "dpgd-zeroth-order": "dpgd_zeroth_order",
    "dpgd0": "dpgd_zeroth_order",
    "dpgd": "dpgd",
    "mezo": "mezo",
}
PROBLEMS = ("quadratic", "subspace-logistic")
BACKENDS = ("reference", "fast")
FORMATS = ("table", "json")

DEFAULTS = {
    "problem": "quadratic", "mode": "harmonic", "k": 3, "d": 100, "n": 1000, "data_seed": 0, "steps": 200,
    "step_size": 0.01, "perturbation": 1e-4, "clip": 10.0, "epsilon": 2.0, "delta": 1e-6, "batching": "full",
    "seed": 0, "backend": "fast", "replicates": 1,
}


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``run`` command to an argparse sub-parser set."""
    parser = subparsers.add_parser("run", help="run an algorithm on a built-in problem; trajectory and ledger out",
                                   description=__doc__.split("\n\n")[0])
    parser.add_argument("algorithm", metavar="ALGORITHM", help=f"one of {', '.join(ALGORITHMS)}")
    add = parser.add_argument
    add("--problem", default=None, help=f"{' | '.join(PROBLEMS)} (default {DEFAULTS['problem']})")
    add("--mode", default=None, help=f"quadratic Hessian: {' | '.join(QUADRATIC_MODES)} (default {DEFAULTS['mode']})")
    add("--k", type=int, default=None, help=f"subspace-logistic: subspace dimension (default {DEFAULTS['k']})")
    add("--d", type=int, default=DEFAULTS["d"], help="dimension d")
    add("--n", type=int, default=DEFAULTS["n"], help="number of data points n")
    add("--data-seed", type=int, default=DEFAULTS["data_seed"], metavar="S", help="seed of the problem's data")
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
    add("--noise-seed", type=int, default=None, metavar="S", help="secret seed (noise, sampling; default --seed)")
    add("--backend", default=DEFAULTS["backend"], help=f"{' | '.join(BACKENDS)} (default {DEFAULTS['backend']})")
    add("--replicates", type=int, default=DEFAULTS["replicates"], metavar="R", help="replicate runs (fast backend)")
    add("--output", default=None, metavar="DIR", help="write trajectory.csv, ledger.json and manifest.json")
    add("--format", default="table", help="table | json")
    add("--no-progress", action="store_true", help="hide the progress bar")
    return parser


# ---------------------------------------------------------------------------------------------------
# Problems


def build_problem(problem: str, *, d: int, n: int, mode: str = "harmonic", k: int = 3, data_seed: int = 0):
    """The built-in problem with its data drawn from ``Streams(data_seed).generator("dpref run", problem)``."""
    rng = Streams(data_seed).generator("dpref run", problem)
    if problem == "quadratic":
        return EffectiveRankQuadratic(d, n, mode, rng)
    if problem == "subspace-logistic":
        return SubspaceLogistic(d, n, k, rng)
    raise ValueError(f"--problem must be one of {PROBLEMS}, got {problem!r}")


def squared_gradient_norm(objective):
    """‖∇F(x)‖² on the objective's data, for x of shape (d,) (a float) or stacked (..., d) (shape (...)).

    Quadratic: ∇F(x) = A(x − z̄), z̄ the data mean (F is the mean of ½(x − z_i)^T A (x − z_i)). Subspace
    logistic: ∇F(x) = U·((1/n) Σ_i w_i c_i), w_i = −b_i σ(−b_i <c_i, U^T x>) (its ``empirical_gradient``)."""
    if isinstance(objective, EffectiveRankQuadratic):
        diagonal, centre = objective.hessian_diagonal, objective.minimizer()

        def quadratic(x):
            gradient = diagonal * (np.asarray(x, dtype=np.float64) - centre)
            return np.sum(gradient * gradient, axis=-1)

        return quadratic
    if isinstance(objective, SubspaceLogistic):
        basis, coefficients, labels = objective.basis, objective.coefficients, objective.labels

        def logistic(x):
            margins = (np.asarray(x, dtype=np.float64) @ basis) @ coefficients.T
            weights = -labels * expit(-labels * margins)
            gradient = (weights @ coefficients / labels.size) @ basis.T
            return np.sum(gradient * gradient, axis=-1)

        return logistic
    raise TypeError(f"no gradient norm for {type(objective).__name__}")


# ---------------------------------------------------------------------------------------------------
# Running


@dataclasses.dataclass(frozen=True)
class RunOutcome:
    """A run and what it was: the algorithm's ``DPResult``, the problem, the settings, the seeds and the time."""

    result: object
    objective: object
    settings: dict
    seeds: np.ndarray
    noise_seeds: np.ndarray
    seconds: float

    @property
    def traces(self) -> np.ndarray:
        """‖∇F(x_t)‖², shape (R, T+1)."""
        return np.atleast_2d(np.asarray(self.result.trace, dtype=np.float64))


def _backend_module(backend: str):
    if backend == "reference":
        return reference_dpzero
    if backend == "fast":
        from reference.fast import dpzero as fast_dpzero  # vectorized twin

        return fast_dpzero
    raise ValueError(f"--backend must be one of {BACKENDS}, got {backend!r}")


class _ProgressTrace:
    """The traced metric, ticking a progress bar once per traced step (the algorithms have no callback)."""

    def __init__(self, metric, steps: int, progress: bool):
        self.metric, self.steps = metric, steps
        self.bar = tqdm(total=steps + 1, desc="dpref run", unit="step", leave=False, file=sys.stderr,
                        disable=None if progress else True)  # None: shown on a terminal only

    def __call__(self, x):
        value = self.metric(x)
        if self.bar.n >= self.bar.total:  # the fast backend traces each block of replicates in turn
            self.bar.total += self.steps + 1
            self.bar.refresh()
        self.bar.update()
        return value


def run_algorithm(algorithm: str, *, problem: str = "quadratic", mode: str = "harmonic", k: int = 3, d: int = 100,
                  n: int = 1000, data_seed: int = 0, steps: int = 200, step_size: float = 0.01,
                  perturbation: float | None = 1e-4, clip: float = 10.0, epsilon: float | None = 2.0,
                  delta: float | None = 1e-6, accountant: str | None = None, batching: str = "full",
                  batch_size: int | None = None, sampling_probability: float | None = None,
                  direction: str | None = None, seed: int = 0,
                  noise_seed: int | None = None, backend: str = "fast", replicates: int = 1,
                  progress: bool = False) -> RunOutcome:
    """Run ALGORITHM (a key of ``ALGORITHMS``) on a built-in problem from x_0 = 0 with ``trace`` = ‖∇F(x_t)‖².

    Settings as the command line (already validated there; the algorithms validate them again). ``replicates``
    R > 1 needs the fast backend: seeds seed..seed+R−1, noise seeds noise_seed..noise_seed+R−1."""
    name = ALGORITHMS[algorithm]
    module = _backend_module(backend)
    objective = build_problem(problem, d=d, n=n, mode=mode, k=k, data_seed=data_seed)
    if replicates > 1:
        seeds = np.arange(seed, seed + replicates, dtype=np.int64)
        noise_seeds = seeds if noise_seed is None else np.arange(noise_seed, noise_seed + replicates, dtype=np.int64)
        seed_arg, noise_arg = seeds, noise_seeds
    else:
        seeds, noise_seeds = np.array([seed]), np.array([seed if noise_seed is None else noise_seed])
        seed_arg, noise_arg = seed, noise_seed
    trace = _ProgressTrace(squared_gradient_norm(objective), steps, progress)
    common = {"steps": steps, "step_size": step_size, "seed": seed_arg, "batching": batching,
              "batch_size": batch_size, "sampling_probability": sampling_probability, "trace": trace}
    x0 = np.zeros(objective.d)
    start = time.perf_counter()
    try:
        if name == "mezo":
            result = module.mezo(objective.loss, objective.data, x0, perturbation=perturbation, clip_threshold=clip,
                                 direction=direction or "gaussian", **common)
        elif name == "dpgd":
            result = module.dpgd(objective.gradient, objective.data, x0, clip_threshold=clip, epsilon=epsilon,
                                 delta=delta, noise_seed=noise_arg, accountant=accountant, **common)
        else:
            result = getattr(module, name)(objective.loss, objective.data, x0, perturbation=perturbation,
                                           clip_threshold=clip, epsilon=epsilon, delta=delta, noise_seed=noise_arg,
                                           accountant=accountant, direction=direction or "sphere", **common)
    finally:
        trace.bar.close()
    settings = {"algorithm": name, "problem": problem, "mode": mode if problem == "quadratic" else None,
                "k": k if problem == "subspace-logistic" else None, "d": d, "n": n, "data_seed": data_seed,
                "steps": steps, "step_size": step_size, "perturbation": perturbation, "clip": clip,
                "epsilon": epsilon, "delta": delta, "accountant": accountant, "batching": batching,
                "batch_size": batch_size, "sampling_probability": sampling_probability,
                "direction": None if name == "dpgd" else (direction or
                                                                                 ("gaussian" if name == "mezo" else "sphere")),
                "seed": seed, "noise_seed": noise_seed, "backend": backend, "replicates": replicates}
    return RunOutcome(result, objective, settings, seeds, noise_seeds, time.perf_counter() - start)


# ---------------------------------------------------------------------------------------------------
# Validation (the messages name the command-line option)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _finite_positive(option: str, value) -> None:
    _require(value is not None and math.isfinite(value) and value > 0, f"{option} must be a finite number > 0, got {value}")


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
    for option, value in (("--seed", args.seed), ("--noise-seed", args.noise_seed), ("--data-seed", args.data_seed)):
        _require(value is None or value >= 0, f"{option} must be >= 0, got {value}")
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
        _require(args.perturbation is None, "--perturbation does not apply to dpgd (first-order: no finite differences)")
        _require(args.direction is None, "--direction does not apply to dpgd (first-order: no directions)")
    perturbation = None if name == "dpgd" else (DEFAULTS["perturbation"] if args.perturbation is None else args.perturbation)
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
                 f"--accountant must be one of {', '.join(allowed)} for --batching {args.batching}, got {args.accountant!r}")
    if args.sampling_probability is not None:
        _require(args.batching == "poisson", "--sampling-probability applies to --batching poisson only")
        _require(0 < args.sampling_probability <= 1,
                 f"--sampling-probability must lie in (0, 1], got {args.sampling_probability}")
    if args.batching == "full":
        _require(args.batch_size is None, "--batch-size applies to --batching poisson or shuffle only")
    else:
        _require(args.batch_size is not None, f"--batching {args.batching} needs --batch-size B")
        _require(1 <= args.batch_size <= args.n, f"--batch-size must lie in [1, n] = [1, {args.n}], got {args.batch_size}")
    return {"problem": problem, "mode": mode, "k": k, "d": args.d, "n": args.n, "data_seed": args.data_seed,
            "steps": args.steps, "step_size": args.step_size, "perturbation": perturbation, "clip": clip,
            "epsilon": epsilon, "delta": delta, "accountant": args.accountant, "batching": args.batching,
            "batch_size": args.batch_size, "sampling_probability": args.sampling_probability,
            "direction": args.direction, "seed": args.seed,
            "noise_seed": args.noise_seed, "backend": args.backend, "replicates": args.replicates}


# ---------------------------------------------------------------------------------------------------
# Summary, ledger, files


def _mean_se(values) -> tuple[float, float | None]:
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    return float(v.mean()), (float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else None)


def summary(outcome: RunOutcome) -> dict:
    """The printed record: settings, problem, privacy plan and the traced metric (means over replicates)."""
    result, objective, steps = outcome.result, outcome.objective, outcome.settings["steps"]
    traces = outcome.traces
    taus = np.atleast_1d(np.asarray(result.output_index))
    ledger = result.ledger
    plan = ledger.plan
    clip_fraction = np.atleast_1d(np.asarray(ledger.clip_fraction, dtype=np.float64))
    record = {**outcome.settings, "effective_rank": float(objective.effective_rank), "objective": objective.name}
    record.update({
        "noise_std": None if plan is None else plan.noise_std,
        "sensitivity": None if plan is None else plan.sensitivity,
        "accountant": None if plan is None else plan.accountant,
        "relation": None if plan is None else plan.relation,
        "epsilon_claimed": None if plan is None else plan.epsilon_claimed,
        "epsilon_tight": None if plan is None else plan.epsilon_tight,
        "mu_gdp": None if plan is None else plan.mu_gdp,
        "guarantee": "not private" if plan is None else plan.guarantee,
        "grad_norm_sq_initial": float(traces[0, 0]),
    })
    for key, values in (("grad_norm_sq_mean", traces[:, :steps].mean(axis=1)),
                        ("grad_norm_sq_output", traces[np.arange(traces.shape[0]), taus]),
                        ("grad_norm_sq_final", traces[:, -1]),
                        ("clip_fraction", clip_fraction)):
        record[key], record[key + "_se"] = _mean_se(values)
    record["output_index"] = [int(t) for t in taus]
    record["loss_evaluations"] = int(np.sum(ledger.loss_evaluations))
    record["gradient_evaluations"] = int(np.sum(ledger.gradient_evaluations))
    record["seconds"] = outcome.seconds
    return record


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def ledger_record(outcome: RunOutcome) -> dict:
    """The ledger as plain data: the privacy plan once, then one entry per replicate."""
    ledger = outcome.result.ledger
    plan = None if ledger.plan is None else dataclasses.asdict(ledger.plan)
    replicated = outcome.traces.shape[0] > 1 and hasattr(ledger, "replicate")
    singles = [ledger.replicate(r) for r in range(outcome.traces.shape[0])] if replicated else [ledger]
    runs = []
    for r, single in enumerate(singles):
        runs.append({"replicate": r, "seed": int(outcome.seeds[r]), "noise_seed": int(outcome.noise_seeds[r]),
                     "output_index": int(np.atleast_1d(outcome.result.output_index)[r]),
                     "clip_counts": list(single.clip_counts), "batch_sizes": list(single.batch_sizes),
                     "clip_fraction": float(single.clip_fraction), "loss_evaluations": int(single.loss_evaluations),
                     "gradient_evaluations": int(single.gradient_evaluations)})
    return _jsonable({"algorithm": ledger.algorithm, "steps": ledger.steps, "batching": ledger.batching,
                      "direction": ledger.direction, "clip_target": ledger.clip_target,
                      "epsilon_spent": None if ledger.plan is None else ledger.plan.epsilon_claimed,
                      "plan": plan, "runs": runs})


def trajectory_frame(outcome: RunOutcome) -> pd.DataFrame:
    """Long table of the traced metric: replicate, t, grad_norm_sq."""
    traces = outcome.traces
    replicates, points = traces.shape
    return pd.DataFrame({"replicate": np.repeat(np.arange(replicates), points),
                         "t": np.tile(np.arange(points), replicates),
                         "grad_norm_sq": traces.reshape(-1)})


def write_outputs(outcome: RunOutcome, directory, *, command: str, record: dict) -> Path:
    """trajectory.csv, ledger.json and manifest.json in ``directory`` (created if needed)."""
    from proofs_checks.report import versions  # package versions, as every dpref report records them

    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    trajectory_frame(outcome).to_csv(path / "trajectory.csv", index=False)
    ledger = ledger_record(outcome)
    runs = ledger.pop("runs")  # one line per replicate: T-long lists would otherwise take a line per entry
    head = json.dumps(ledger, indent=2)[:-2]
    body = ",\n".join("    " + json.dumps(r) for r in runs)
    (path / "ledger.json").write_text(f'{head},\n  "runs": [\n{body}\n  ]\n}}\n')
    manifest = {
        "command": command,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": {**versions(), "dpref": dpref.__version__},
        "settings": outcome.settings,
        "seeds": {"seed": [int(s) for s in outcome.seeds], "noise_seed": [int(s) for s in outcome.noise_seeds],
                  "data_seed": outcome.settings["data_seed"],
                  "data_stream": ["dpref run", outcome.settings["problem"]]},
        "files": ["trajectory.csv", "ledger.json", "manifest.json"],
        "summary": record,
    }
    (path / "manifest.json").write_text(json.dumps(_jsonable(manifest), indent=2))
    return path


def _fmt(value, se=None) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        text = f"{value:.6g}"
        return text if se is None else f"{text} ± {se:.2g}"
    return str(value)


def _table(record: dict) -> str:
    problem = record["objective"] + f", d={record['d']}, n={record['n']}, r={record['effective_rank']:.4g}"
    rows = [
        ("algorithm", f"{record['algorithm']} ({record['backend']} backend, {record['replicates']} replicate(s))"),
        ("problem", problem),
        ("steps", f"T={record['steps']}, step size {_fmt(record['step_size'])}, perturbation "
                  f"{_fmt(record['perturbation'])}, clip {_fmt(record['clip'])}, direction {_fmt(record['direction'])}"),
        ("batching", f"{record['batching']}" + (f", B={record['batch_size']}" if record["batch_size"] else "")),
        ("privacy", "not private (MeZO)" if record["noise_std"] is None else
         f"{record['accountant']} ({record['relation']}, {record['guarantee']}): sigma {_fmt(record['noise_std'])}, "
         f"sensitivity {_fmt(record['sensitivity'])}"),
        ("epsilon", "-" if record["noise_std"] is None else
         f"target {_fmt(record['epsilon'])} at delta {_fmt(record['delta'])}; certified {_fmt(record['epsilon_claimed'])}"
         f"; tight {_fmt(record['epsilon_tight'])}"),
        ("|grad F(x_0)|^2", _fmt(record["grad_norm_sq_initial"])),
        ("E_tau |grad F|^2", _fmt(record["grad_norm_sq_mean"], record["grad_norm_sq_mean_se"]) + "  (mean over t < T)"),
        ("|grad F(x_tau)|^2", _fmt(record["grad_norm_sq_output"], record["grad_norm_sq_output_se"])
         + f"  (released point, tau = {', '.join(map(str, record['output_index'][:5]))}"
         + (", ..." if len(record["output_index"]) > 5 else "") + ")"),
        ("|grad F(x_T)|^2", _fmt(record["grad_norm_sq_final"], record["grad_norm_sq_final_se"])),
        ("clip fraction", _fmt(record["clip_fraction"], record["clip_fraction_se"])),
        ("evaluations", f"{record['loss_evaluations']} loss, {record['gradient_evaluations']} gradient"),
        ("seconds", f"{record['seconds']:.3g}"),
    ]
    if record.get("output"):
        rows.append(("output", record["output"]))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def run(args, command: str | None = None) -> int:
    """Run ``dpref run`` from parsed arguments; returns the exit code (0, or 2 for bad usage). ``command`` is the
    command line recorded in the manifest."""
    try:
        settings = _settings_from_args(args)
        outcome = run_algorithm(args.algorithm, progress=not args.no_progress, **settings)
    except (ValueError, TypeError) as exc:
        print(f"dpref run: error: {exc}", file=sys.stderr)
        return 2
    record = summary(outcome)
    if args.output:
        command = command or f"dpref run {args.algorithm}"
        record["output"] = str(write_outputs(outcome, args.output, command=command, record=record))
    if args.format == "json":
        print(json.dumps(_jsonable(record), indent=2))
    else:
        print(_table(record))
    return 0
