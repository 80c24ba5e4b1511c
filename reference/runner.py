"""dpzero Algorithms 1 and 2, §2.1 DP-GD and MeZO (App. B.2), run end to end on a built-in problem (App. B.1),
and what such a run may publish. The library behind ``dpref run``.

Algorithms (keys of ``ALGORITHMS``): ``dpzero`` (Algorithm 2), ``dpgd-zeroth-order`` / ``dpgd0``
(Algorithm 1, DPGD-0th), ``dpgd`` (first-order DP-GD, §2.1) and ``mezo`` (MeZO / ZO-SGD, §2.4, not private),
on the reference (``reference.algorithms.dpzero``) or the vectorized backend (``reference.fast.dpzero``).

Problems (``build_problem``): ``quadratic``, the effective-rank quadratic of dpzero App. B.1
(``EffectiveRankQuadratic``: f(x; z) = ½(x − z)^T A (x − z), z ~ N(1, I), A = I, diag(1/√i) or diag(1/i));
``subspace-logistic``, logistic regression with features in a random k-dimensional subspace
(``SubspaceLogistic``: L = 1, ℓ = 1/4, effective rank <= k). The training data are drawn from
``Streams(data_seed).generator("dpref run", PROBLEM)``. Every run starts at x_0 = 0.

Threat model (docs/design.md). Everything a run receives or writes is public except its secret seed, which
drives the Gaussian noise and the secret minibatch coins; nothing computed on the private training data leaves
a run unless the privacy plan accounts for it. What ``publication`` writes, and why each part is public:

* ``releases.csv`` — the private output: the released ŝ_t (Algorithm 2, MeZO) or the noisy released vectors
  (Algorithm 1, DP-GD), one row per step. The privacy plan covers exactly these values; the iterates, x_τ and
  x_T are their post-processing with the public directions (x_{t+1} = x_t − α ŝ_t u_t, resp. x_t − α·release).
* ``trajectory.csv`` — the held-out objective F_H(x_t) and ‖∇F_H(x_t)‖², t = 0..T. They are functions of
  the iterates (post-processing of the releases) and of a held-out data set H drawn from the same public law
  with its own stream key ("dpref run", PROBLEM, "held-out"), never of the training data.
* ``ledger.json`` — the privacy plan (σ, sensitivity, accountant, neighbouring relation, certified and tight
  ε), the public seeds, the output index τ of every replicate (drawn from the public seed), where the secret
  seed came from (``secret_seed_source``: "os_entropy" or "user") and the condition the guarantee rests on.
  All of these are fixed by public inputs; none is computed on the data.
* ``manifest.json`` — the command line (any --noise-seed value replaced by ``<secret>``), the settings (public
  hyper-parameters; the training-set size n is left out under add/remove neighbours, whose guarantee covers
  the presence of a record and so the size of the data set), the public seeds, package versions, the creation time and the summary (held-out
  diagnostics and the plan).

Not published unless asked for (``include_nonprivate=True``, ``dpref run --include-nonprivate``):
``nonprivate_diagnostics.json``, marked NOT PRIVATE — the per-step clip counts, realised batch sizes, loss and
gradient evaluation counts, counts of replaced non-finite values, the clip fraction, ‖∇F‖² on the TRAINING
data and the wall-clock time. They are computed on the private data outside the mechanism (the time too: it
follows the realised batch sizes), so the plan does not cover them.

The secret seed itself appears nowhere: not in the outcome, not in any file, not in the summary. Without a
secret seed each run draws fresh operating-system entropy, so two runs with the same public seed release
different values. Replicates take public seeds from ``reference.secrets.replicate_seeds`` and secret seeds
from ``reference.secrets.secret_seeds`` (``SeedSequence.spawn``), never seed + r.

The built-in problems are synthetic: their training data come from ``data_seed``, which the manifest records
so that a run can be repeated. In a deployment the training set is private and only the held-out set and the
files above would be known.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import json
import math
import platform
import re
import shlex
import sys
import time
from collections.abc import Callable
from importlib import metadata

import numpy as np
from scipy.special import expit

from .algorithms import dpzero as reference_dpzero
from .objectives import EffectiveRankQuadratic
from .objectives_dpzero import SubspaceLogistic
from .rng import SEED_BOUND, Streams, sample_ball, sample_sphere
from .secrets import replicate_seeds, secret_seeds
from .validation import check_int

__all__ = [
    "ALGORITHMS",
    "PROBLEMS",
    "BACKENDS",
    "DATA_KEY",
    "HELD_OUT_KEY",
    "NOT_PRIVATE",
    "RunOutcome",
    "build_problem",
    "held_out_problem",
    "objective_value",
    "squared_gradient_norm",
    "run_algorithm",
    "summary",
    "nonprivate_diagnostics",
    "ledger_record",
    "publication",
    "mask_command",
    "render_table",
    "package_versions",
]

#: CLI name -> function of reference.algorithms.dpzero and reference.fast.dpzero.
ALGORITHMS = {
    "dpzero": "dpzero",
    "dpgd-zeroth-order": "dpgd_zeroth_order",
    "dpgd0": "dpgd_zeroth_order",
    "dpgd": "dpgd",
    "mezo": "mezo",
}
PROBLEMS = ("quadratic", "subspace-logistic")
BACKENDS = ("reference", "fast")

#: Stream keys (under ``Streams(data_seed)``) of the training data and of the held-out data.
DATA_KEY = ("dpref run",)
HELD_OUT_KEY = "held-out"

#: The mark on every quantity computed on the private training data outside the privacy plan.
NOT_PRIVATE = ("NOT PRIVATE: computed on the private training data outside the privacy plan (clip counts, batch "
               "sizes, evaluation counts, training-set gradient norms, wall-clock time); do not publish")

#: Packages whose versions a manifest records.
_PACKAGES = ("dpref", "numpy", "scipy", "mpmath", "pandas", "statsmodels", "tqdm")

_SECRET_OPTION = re.compile(r"""(--noi[\w-]*)(=|\s+)("[^"]*"|'[^']*'|\S+)""")


@functools.lru_cache(maxsize=1)
def _cached_versions() -> tuple:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for package in _PACKAGES:
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = "not installed"
    return tuple(out.items())


def package_versions() -> dict[str, str]:
    """Python, the platform and the versions of the packages a run depends on (``importlib.metadata``; read
    once per process)."""
    return dict(_cached_versions())


# ---------------------------------------------------------------------------------------------------
# Problems: the training set and a held-out set from the same public law


def _check_problem(problem: str) -> str:
    if problem not in PROBLEMS:
        raise ValueError(f"problem must be one of {PROBLEMS}, got {problem!r}")
    return problem


def build_problem(problem: str, *, d: int, n: int, mode: str = "harmonic", k: int = 3, data_seed: int = 0):
    """The training objective of a built-in problem, its data drawn from
    ``Streams(data_seed).generator("dpref run", problem)``.

    problem: "quadratic" (``EffectiveRankQuadratic(d, n, mode, rng)``) or "subspace-logistic"
    (``SubspaceLogistic(d, n, k, rng)``). d, n >= 1; mode one of QUADRATIC_MODES (quadratic); 1 <= k <= d
    (subspace-logistic); data_seed in [0, 2^128)."""
    _check_problem(problem)
    data_seed = check_int("data_seed", data_seed, minimum=0, maximum=SEED_BOUND - 1)
    rng = Streams(data_seed).generator(*DATA_KEY, problem)
    if problem == "quadratic":
        return EffectiveRankQuadratic(d, n, mode, rng)
    return SubspaceLogistic(d, n, k, rng)


def held_out_problem(problem: str, *, d: int, n: int, mode: str = "harmonic", k: int = 3, data_seed: int = 0,
                     size: int | None = None):
    """An independent data set from the training set's law: ``size`` rows (default n) drawn from
    ``Streams(data_seed).generator("dpref run", problem, "held-out")``.

    The arguments are those of ``build_problem`` (n is the TRAINING size). The law is what the two sets share:

    * quadratic: z ~ N(1, I_d) with the Hessian A fixed by (mode, d); the held-out set is
      ``EffectiveRankQuadratic(d, size, mode, held_out_rng)``.
    * subspace-logistic: the law of a row (c, b) is fixed by the subspace basis U and the planted direction w,
      which ``SubspaceLogistic`` draws from the same generator as the training rows (U first, then the n
      training features, then w). Building the class on another generator would give another U and w — another
      law. So U and w are regenerated by replaying the training stream's draws, and only the rows come from the
      held-out stream, in the constructor's order: features (``sample_ball``/``sample_sphere``), then the
      label flips; b = sign(<c, w>) flipped with the training set's probability. The result is
      ``SubspaceLogistic.from_parts(U, c, b)``.
    """
    training = None if problem != "subspace-logistic" else \
        build_problem(problem, d=d, n=n, k=k, data_seed=data_seed)  # validates d, n, k
    return _held_out(problem, training, d=d, n=n, mode=mode, k=k, data_seed=data_seed, size=size)


def _held_out(problem, training, *, d, n, mode, k, data_seed, size):
    """``held_out_problem`` given the training problem (subspace-logistic: its features law and flip rate)."""
    _check_problem(problem)
    data_seed = check_int("data_seed", data_seed, minimum=0, maximum=SEED_BOUND - 1)
    size = n if size is None else size
    size = check_int("size", size, minimum=1)
    streams = Streams(data_seed)
    held = streams.generator(*DATA_KEY, problem, HELD_OUT_KEY)
    if problem == "quadratic":
        return EffectiveRankQuadratic(d, size, mode, held)
    replay = streams.generator(*DATA_KEY, problem)
    q, r = np.linalg.qr(replay.standard_normal((d, k)))
    basis = q * np.where(np.diag(r) < 0, -1.0, 1.0)
    sampler = sample_ball if training.features == "ball" else sample_sphere
    sampler(replay, n, k)  # the training features: skipped
    planted = sample_sphere(replay, (), k)
    if not np.array_equal(basis, training.basis):  # SubspaceLogistic changed its draw schedule
        raise RuntimeError("held_out_problem: the replayed subspace basis differs from the training set's; "
                           "SubspaceLogistic's draw schedule changed and this function must follow it")
    coefficients = sampler(held, size, k)
    flips = held.random(size) < training.label_flip
    labels = np.where(coefficients @ planted >= 0, 1.0, -1.0)
    labels = np.where(flips, -labels, labels)
    return SubspaceLogistic.from_parts(basis, coefficients, labels)


def _float_points(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def objective_value(problem) -> Callable:
    """F(x) = (1/m) Σ_i f(x; z_i) on the problem's data, for x of shape (d,) (a float) or (..., d) (shape (...)).

    A ``problem.objective_value`` method is used when present. Quadratic: ½(x − z̄)^T A (x − z̄) plus the
    constant ½·mean_i (z_i − z̄)^T A (z_i − z̄). Subspace logistic: mean_i log(1 + exp(−b_i <c_i, U^T x>)).
    Otherwise the mean of ``problem.loss(x[..., None, :], problem.data)`` over the rows."""
    method = getattr(problem, "objective_value", None)
    if callable(method):
        return method
    if isinstance(problem, EffectiveRankQuadratic):
        diagonal, centre = problem.hessian_diagonal, problem.minimizer()
        spread = 0.5 * float(np.mean(np.sum(diagonal * (problem.data - centre) ** 2, axis=1)))

        def quadratic(x):
            offset = _float_points(x) - centre
            return 0.5 * np.sum(diagonal * offset * offset, axis=-1) + spread

        return quadratic
    if isinstance(problem, SubspaceLogistic):
        basis, coefficients, labels = problem.basis, problem.coefficients, problem.labels

        def logistic(x):
            margins = (_float_points(x) @ basis) @ coefficients.T
            return np.mean(np.logaddexp(0.0, -labels * margins), axis=-1)

        return logistic

    def generic(x):
        x = _float_points(x)
        return np.mean(np.asarray(problem.loss(x[..., None, :], problem.data), dtype=np.float64), axis=-1)

    return generic


def squared_gradient_norm(problem) -> Callable:
    """‖∇F(x)‖² on the problem's data, for x of shape (d,) (a float) or (..., d) (shape (...)).

    A ``problem.squared_gradient_norm`` method is used when present. Quadratic: ∇F(x) = A(x − z̄). Subspace
    logistic: ∇F(x) = U·((1/m) Σ_i w_i c_i), w_i = −b_i σ(−b_i <c_i, U^T x>) (its ``empirical_gradient``).
    Otherwise the mean of ``problem.gradient(x[..., None, :], problem.data)`` over the rows."""
    method = getattr(problem, "squared_gradient_norm", None)
    if callable(method):
        return method
    if isinstance(problem, EffectiveRankQuadratic):
        diagonal, centre = problem.hessian_diagonal, problem.minimizer()

        def quadratic(x):
            gradient = diagonal * (_float_points(x) - centre)
            return np.sum(gradient * gradient, axis=-1)

        return quadratic
    if isinstance(problem, SubspaceLogistic):
        basis, coefficients, labels = problem.basis, problem.coefficients, problem.labels

        def logistic(x):
            margins = (_float_points(x) @ basis) @ coefficients.T
            weights = -labels * expit(-labels * margins)
            gradient = (weights @ coefficients / labels.size) @ basis.T
            return np.sum(gradient * gradient, axis=-1)

        return logistic

    def generic(x):
        x = _float_points(x)
        gradient = np.mean(np.asarray(problem.gradient(x[..., None, :], problem.data), dtype=np.float64), axis=-2)
        return np.sum(gradient * gradient, axis=-1)

    return generic


# ---------------------------------------------------------------------------------------------------
# Running


@dataclasses.dataclass(frozen=True)
class RunOutcome:
    """A run and what it was.

    result: the algorithm's ``DPResult`` (fast backend with R > 1: arrays with a leading replicate axis).
    objective: the training problem (private data). held_out: the held-out problem, or None.
    settings: the run's public settings (no secret seed). seeds: the public seed of every replicate.
    secret_seed_source: "os_entropy" | "user" | None (MeZO, not private). guarantee_condition: what the
    guarantee assumes about the secret seed (None for MeZO). seconds: wall-clock time of the algorithm (NOT
    PRIVATE: it follows the realised batch sizes).
    heldout_objective, heldout_grad_norm_sq: (R, T+1) held-out F(x_t) and ‖∇F(x_t)‖² (None without held-out
    data). training_grad_norm_sq: (R, T+1) ‖∇F(x_t)‖² on the TRAINING data — NOT PRIVATE, published only on
    request (None without held-out data).
    """

    result: object
    objective: object
    held_out: object | None
    settings: dict
    seeds: tuple
    secret_seed_source: str | None
    guarantee_condition: str | None
    seconds: float
    heldout_objective: np.ndarray | None
    heldout_grad_norm_sq: np.ndarray | None
    training_grad_norm_sq: np.ndarray | None

    @property
    def replicates(self) -> int:
        return len(self.seeds)

    @property
    def steps(self) -> int:
        return int(self.settings["steps"])

    @property
    def releases(self) -> np.ndarray:
        """The private output: (R, T) released ŝ_t (Alg 2, MeZO) or (R, T, d) released vectors (Alg 1, DP-GD)."""
        releases = np.asarray(self.result.releases, dtype=np.float64)
        return releases if self.replicates > 1 else releases[None]

    @property
    def output_index(self) -> np.ndarray:
        """τ of every replicate, shape (R,) (drawn from the public seed)."""
        return np.atleast_1d(np.asarray(self.result.output_index)).astype(np.int64)

    def diagnostics(self, r: int = 0):
        """The ``NonPrivateDiagnostics`` of replicate r (NOT PRIVATE)."""
        r = check_int("r", r, minimum=0, maximum=self.replicates - 1)
        diagnostics = self.result.diagnostics
        return diagnostics.replicate(r) if self.replicates > 1 else diagnostics


def _backend_module(backend: str):
    if backend == "reference":
        return reference_dpzero
    if backend == "fast":
        from .fast import dpzero as fast_dpzero  # vectorized twin

        return fast_dpzero
    raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


class _Recorder:
    """The ``trace`` given to the algorithm: returns the held-out F(x_t) (so ``DPResult.trace`` holds it) and
    records the held-out ‖∇F(x_t)‖² and the training ‖∇F(x_t)‖² beside it, ticking a progress bar.

    The reference calls it with x_t (d,); the fast backend with (R_b, d) per block of replicates, the block's
    T+1 calls in a row before the next block's."""

    def __init__(self, held_out, objective, steps: int, progress: bool):
        self.value = objective_value(held_out)
        self.held_norm = squared_gradient_norm(held_out)
        self.has_training = isinstance(objective, (EffectiveRankQuadratic, SubspaceLogistic)) or any(
            callable(getattr(objective, method, None)) for method in ("squared_gradient_norm", "gradient"))
        self.train_norm = squared_gradient_norm(objective) if self.has_training else (
            lambda points: np.full(points.shape[:-1], np.nan))
        self.steps = steps
        self.calls: list[np.ndarray] = []
        self.bar = None
        if progress:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=steps + 1, desc="dpref run", unit="step", leave=False, file=sys.stderr,
                            disable=None)  # None: shown on a terminal only

    def __call__(self, x):
        x = _float_points(x)
        points = x[None] if x.ndim == 1 else x
        rows = np.stack([np.asarray(f(points), dtype=np.float64).reshape(points.shape[0])
                         for f in (self.value, self.held_norm, self.train_norm)], axis=-1)  # (R_b, 3)
        self.calls.append(rows)
        if self.bar is not None:
            if self.bar.n >= self.bar.total:  # the fast backend traces each block of replicates in turn
                self.bar.total += self.steps + 1
                self.bar.refresh()
            self.bar.update()
        return float(rows[0, 0]) if x.ndim == 1 else rows[:, 0]

    def close(self):
        if self.bar is not None:
            self.bar.close()

    def arrays(self, replicates: int) -> np.ndarray:
        """(R, T+1, 3): the recorded values, blocks of replicates reassembled."""
        blocks, current = [], []
        for rows in self.calls:
            current.append(rows)
            if len(current) == self.steps + 1:
                blocks.append(np.stack(current, axis=1))
                current = []
        if current or not blocks:
            raise RuntimeError(f"trace was called {len(self.calls)} times, not a multiple of T+1 = {self.steps + 1}")
        out = np.concatenate(blocks, axis=0)
        if out.shape[0] != replicates:
            raise RuntimeError(f"trace recorded {out.shape[0]} replicates, expected {replicates}")
        return out


def _problem_name(objective) -> str:
    return str(getattr(objective, "name", type(objective).__name__))


def run_algorithm(algorithm: str, *, problem: str = "quadratic", mode: str = "harmonic", k: int = 3, d: int = 100,
                  n: int = 1000, data_seed: int = 0, held_out_n: int | None = None, steps: int = 200,
                  step_size: float = 0.01, perturbation: float | None = 1e-4, clip: float = 10.0,
                  epsilon: float | None = 2.0, delta: float | None = 1e-6, accountant: str | None = None,
                  batching: str = "full", batch_size: int | None = None, sampling_probability: float | None = None,
                  direction: str | None = None, seed: int = 0, noise_seed=None, replicates: int = 1,
                  backend: str = "fast", progress: bool = False, objective=None, held_out=None) -> RunOutcome:
    """Run ALGORITHM (a key of ``ALGORITHMS``) from x_0 = 0; held-out diagnostics at every iterate.

    Problem: by default the built-in ``problem`` (``build_problem`` with d, n, mode, k, data_seed) and its
    held-out set (``held_out_problem``, ``held_out_n`` rows, default n). ``objective`` and ``held_out`` replace
    them (a caller's own problem, e.g. a privacy audit's canary data set); the problem arguments are then
    ignored. The duck-typed interface:

    * ``objective``: ``.loss(x, z)`` the per-sample loss and, for dpgd, ``.gradient(x, z)`` the per-sample
      gradient, broadcasting as ``reference.fast.dpzero`` calls them (points (..., d) against rows (..., p));
      ``.data`` the (n, p) training rows; ``.d`` the dimension; ``.name`` a label (optional).
    * ``held_out``: ``.data``, ``.d`` and either ``.objective_value(x)`` / ``.squared_gradient_norm(x)``
      (x of shape (..., d) -> shape (...)) or ``.loss`` / ``.gradient`` as above (the mean over its rows is
      taken); ``.effective_rank`` (optional) is reported. With ``objective`` given and ``held_out`` None no
      diagnostic is computed (trajectory.csv is then not written).
      The NOT PRIVATE training-set ‖∇F‖² uses the objective's ``.squared_gradient_norm`` or ``.gradient``
      (None when it has neither).

    Seeds: ``seed`` is the public seed (directions, τ); R = ``replicates`` > 1 (fast backend) runs the public
    seeds ``replicate_seeds(seed, R)``. ``noise_seed`` (not for mezo) is the secret seed: None draws fresh
    operating-system entropy (spawned into R seeds), an int (a user secret in [0, 2^128)) or a ``SecretSeed``
    is spawned into R seeds by ``secret_seeds``; it must differ from every public seed and from data_seed.
    The outcome holds where the secret came from, never its value.

    Other settings are the algorithms' (validated there): steps T, step_size α, perturbation λ (not dpgd),
    clip C (mezo: inf allowed), epsilon/delta/accountant (private algorithms), batching, batch_size,
    sampling_probability, direction (default sphere; mezo gaussian; not dpgd). progress: a progress bar on
    stderr (one tick per traced step).
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {tuple(ALGORITHMS)}, got {algorithm!r}")
    name = ALGORITHMS[algorithm]
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    module = _backend_module(backend)
    replicates = check_int("replicates", replicates, minimum=1)
    if replicates > 1 and backend != "fast":
        raise ValueError(f"replicates = {replicates} needs backend 'fast' (the reference runs one seed at a time)")
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    custom = objective is not None
    if custom:
        if held_out is not None and getattr(held_out, "d", objective.d) != objective.d:
            raise ValueError(f"held_out must have the objective's dimension d = {objective.d}, got {held_out.d}")
        d, n = int(objective.d), int(np.shape(objective.data)[0])
        problem_settings = {"problem": _problem_name(objective), "mode": None, "k": None, "d": d, "n": n,
                            "data_seed": None,
                            "held_out_n": None if held_out is None else int(np.shape(held_out.data)[0])}
    else:
        if held_out is not None:
            raise ValueError("held_out needs objective (a caller's problem); without it the built-in problem's "
                             "held-out set is used")
        _check_problem(problem)
        data_seed = check_int("data_seed", data_seed, minimum=0, maximum=SEED_BOUND - 1)
        objective = build_problem(problem, d=d, n=n, mode=mode, k=k, data_seed=data_seed)
        held_out = _held_out(problem, objective, d=d, n=n, mode=mode, k=k, data_seed=data_seed, size=held_out_n)
        problem_settings = {"problem": problem, "mode": mode if problem == "quadratic" else None,
                            "k": k if problem == "subspace-logistic" else None, "d": d, "n": n,
                            "data_seed": data_seed, "held_out_n": int(held_out.n)}

    seeds = replicate_seeds(seed, replicates)
    seed_arg = seed if replicates == 1 else seeds
    if name == "mezo":
        if noise_seed is not None:
            raise ValueError("noise_seed does not apply to mezo (MeZO adds no noise: it is not private)")
        source = condition = None
        noise_arg = None
    else:
        public = set(seeds) | {seed}
        if problem_settings["data_seed"] is not None:
            data = problem_settings["data_seed"]
            if isinstance(noise_seed, (int, np.integer)) and not isinstance(noise_seed, bool) and noise_seed == data:
                raise ValueError("noise_seed must differ from data_seed: the data seed is published, so noise drawn "
                                 "from it could be regenerated; omit noise_seed to draw fresh secret entropy")
            public.add(data)
        secrets = secret_seeds(noise_seed, replicates, public_seeds=sorted(public), name="noise_seed")
        source, condition = secrets[0].source, secrets[0].guarantee_condition
        noise_arg = secrets[0] if replicates == 1 else secrets

    recorder = None if held_out is None else _Recorder(held_out, objective, steps, progress)
    common = {"steps": steps, "step_size": step_size, "seed": seed_arg, "batching": batching,
              "batch_size": batch_size, "sampling_probability": sampling_probability, "trace": recorder}
    x0 = np.zeros(int(objective.d))
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
        if recorder is not None:
            recorder.close()
    seconds = time.perf_counter() - start
    del noise_arg  # the secret seeds go no further than the algorithm call

    heldout_value = heldout_norm = training_norm = None
    if recorder is not None:
        values = recorder.arrays(replicates)
        heldout_value, heldout_norm, training_norm = (np.ascontiguousarray(values[..., j]) for j in range(3))
        if not recorder.has_training:
            training_norm = None
        traced = np.atleast_2d(np.asarray(result.trace, dtype=np.float64))
        if not np.array_equal(traced, heldout_value):
            raise RuntimeError("the recorded held-out objective does not match DPResult.trace")
    settings = {"algorithm": name, **problem_settings, "steps": steps, "step_size": step_size,
                "perturbation": None if name == "dpgd" else perturbation, "clip": clip, "epsilon": epsilon,
                "delta": delta, "accountant": accountant, "batching": batching, "batch_size": batch_size,
                "sampling_probability": sampling_probability,
                "direction": None if name == "dpgd" else (direction or ("gaussian" if name == "mezo" else "sphere")),
                "seed": seed, "replicates": replicates, "backend": backend, "secret_seed_source": source}
    plan = result.ledger.plan
    if plan is not None and plan.relation == "add_remove":
        # Add/remove neighbours differ in size: n is private (the plan fixes q, not n), so it is not published.
        settings["n"] = None
    return RunOutcome(result, objective, held_out, settings, tuple(int(s) for s in seeds), source, condition,
                      seconds, heldout_value, heldout_norm, training_norm)


# ---------------------------------------------------------------------------------------------------
# Records: the published summary, the NOT PRIVATE diagnostics, the ledger


def _jsonable(value):
    """Plain JSON data; floats stay Python floats (``json`` writes their shortest round-trip repr), inf and
    -inf become the strings "inf" and "-inf", NaN becomes null."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _mean_se(values) -> tuple[float, float | None]:
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    return float(v.mean()), (float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else None)


def _path_statistics(prefix: str, paths: np.ndarray, taus: np.ndarray, steps: int) -> dict:
    """x_0 value, then mean over t < T, at the released x_τ and at x_T (means over replicates, standard errors)."""
    record = {f"{prefix}_initial": float(np.mean(paths[:, 0]))}
    for key, values in (("mean", paths[:, :steps].mean(axis=1)), ("output", paths[np.arange(paths.shape[0]), taus]),
                        ("final", paths[:, -1])):
        record[f"{prefix}_{key}"], record[f"{prefix}_{key}_se"] = _mean_se(values)
    return record


def summary(outcome: RunOutcome, *, include_nonprivate: bool = False) -> dict:
    """The printed record: settings, problem, privacy plan, public seeds, τ and the held-out diagnostics.

    heldout_objective_* and heldout_grad_norm_sq_*: at x_0 (``_initial``), mean over t < T (``_mean``, the
    expectation over τ ~ Unif{0..T−1}), at the released x_τ (``_output``) and at x_T (``_final``); means over
    the replicates with standard errors (``_se``, None for one replicate). With include_nonprivate the key
    "nonprivate" holds ``nonprivate_diagnostics(outcome, per_replicate=False)`` — NOT PRIVATE. Plain JSON data
    (inf as "inf", NaN as None)."""
    plan = outcome.result.ledger.plan
    held_out = outcome.held_out
    rank = getattr(held_out, "effective_rank", None) if held_out is not None else None
    record = {**outcome.settings, "objective": _problem_name(outcome.objective),
              "effective_rank": None if rank is None else float(rank)}
    record.update({
        "noise_std": None if plan is None else plan.noise_std,
        "sensitivity": None if plan is None else plan.sensitivity,
        "accountant": None if plan is None else plan.accountant,
        "relation": None if plan is None else plan.relation,
        "epsilon_claimed": None if plan is None else plan.epsilon_claimed,
        "epsilon_tight": None if plan is None else plan.epsilon_tight,
        "mu_gdp": None if plan is None else plan.mu_gdp,
        "guarantee": "not private" if plan is None else plan.guarantee,
        "guarantee_condition": outcome.guarantee_condition,
        "seeds": list(outcome.seeds),
        "output_index": [int(t) for t in outcome.output_index],
    })
    if outcome.heldout_objective is not None:
        taus, steps = outcome.output_index, outcome.steps
        record.update(_path_statistics("heldout_objective", outcome.heldout_objective, taus, steps))
        record.update(_path_statistics("heldout_grad_norm_sq", outcome.heldout_grad_norm_sq, taus, steps))
    if include_nonprivate:
        record["nonprivate"] = nonprivate_diagnostics(outcome, per_replicate=False)
    return _jsonable(record)


def nonprivate_diagnostics(outcome: RunOutcome, *, per_replicate: bool = True) -> dict:
    """NOT PRIVATE: what the run computed on the training data outside the privacy plan.

    n: the training-set size (private under add/remove neighbours). Totals over replicates: clip_fraction (mean, se), loss_evaluations and gradient_evaluations (sums),
    nonfinite_values (sum of replaced non-finite per-record values), training_grad_norm_sq_* (as the held-out
    statistics of ``summary``) and the wall-clock seconds. per_replicate adds "runs": per replicate the per-step
    clip_counts, batch_sizes and nonfinite_counts, the evaluation counts, the clip fraction and the training
    ‖∇F(x_t)‖², t = 0..T."""
    singles = [outcome.diagnostics(r) for r in range(outcome.replicates)]
    record = {"warning": NOT_PRIVATE, "n": int(np.shape(outcome.objective.data)[0])}
    record["clip_fraction"], record["clip_fraction_se"] = _mean_se([float(s.clip_fraction) for s in singles])
    record["loss_evaluations"] = int(sum(int(s.loss_evaluations) for s in singles))
    record["gradient_evaluations"] = int(sum(int(s.gradient_evaluations) for s in singles))
    record["nonfinite_values"] = int(sum(int(np.sum(s.nonfinite_counts)) for s in singles))
    if outcome.training_grad_norm_sq is not None:
        record.update(_path_statistics("training_grad_norm_sq", outcome.training_grad_norm_sq, outcome.output_index,
                                       outcome.steps))
    record["seconds"] = outcome.seconds
    if per_replicate:
        runs = []
        for r, single in enumerate(singles):
            run = {"replicate": r, "clip_counts": [int(c) for c in single.clip_counts],
                   "batch_sizes": [int(b) for b in single.batch_sizes],
                   "nonfinite_counts": [int(c) for c in single.nonfinite_counts],
                   "clip_fraction": float(single.clip_fraction), "loss_evaluations": int(single.loss_evaluations),
                   "gradient_evaluations": int(single.gradient_evaluations)}
            if outcome.training_grad_norm_sq is not None:
                run["training_grad_norm_sq"] = [float(v) for v in outcome.training_grad_norm_sq[r]]
            runs.append(run)
        record["runs"] = runs
    return _jsonable(record)


def ledger_record(outcome: RunOutcome) -> dict:
    """The ledger as plain data (all public): the privacy plan, the switches, where the secret seed came from and
    the condition the guarantee rests on, then per replicate its public seed and output index τ."""
    ledger = outcome.result.ledger
    plan = None if ledger.plan is None else dataclasses.asdict(ledger.plan)
    runs = [{"replicate": r, "seed": int(s), "output_index": int(t)}
            for r, (s, t) in enumerate(zip(outcome.seeds, outcome.output_index))]
    return _jsonable({"algorithm": ledger.algorithm, "steps": ledger.steps, "batching": ledger.batching,
                      "direction": ledger.direction, "clip_target": ledger.clip_target,
                      "epsilon_spent": ledger.epsilon_spent, "plan": plan,
                      "secret_seed_source": ledger.secret_seed_source,
                      "guarantee_condition": ledger.guarantee_condition, "runs": runs})


# ---------------------------------------------------------------------------------------------------
# Publication: the files of ``dpref run --output DIR``

#: Version of the ``manifest.json`` layout written by ``publication`` (its docstring lists the fields).
MANIFEST_SCHEMA_VERSION = 1


def mask_command(command) -> str:
    """The command line with the value of --noise-seed (or any abbreviation of it, ``--noi...``, with a space or
    '=') replaced by ``<secret>``. command: a string or a sequence of arguments (joined with shlex)."""
    if isinstance(command, str):
        return _SECRET_OPTION.sub(lambda m: f"{m.group(1)}{m.group(2)}<secret>", command)
    tokens, masked, hide = [str(t) for t in command], [], False
    for token in tokens:
        if hide:
            masked.append("<secret>")
            hide = False
        elif token.startswith("--noi"):
            option, eq, _ = token.partition("=")
            masked.append(f"{option}=<secret>" if eq else token)
            hide = not eq
        else:
            masked.append(token)
    return shlex.join(masked)


def _number(value) -> str:
    """A float written exactly: its shortest round-trip repr (``float(text) == value``)."""
    return repr(float(value))


def _releases_csv(outcome: RunOutcome) -> str:
    releases = outcome.releases
    vector = releases.ndim == 3
    header = ["replicate", "t"] + ([f"release_{j}" for j in range(releases.shape[2])] if vector else ["release"])
    lines = [",".join(header)]
    for r in range(releases.shape[0]):
        for t in range(releases.shape[1]):
            values = releases[r, t] if vector else (releases[r, t],)
            lines.append(f"{r},{t}," + ",".join(_number(v) for v in values))
    return "\n".join(lines) + "\n"


def _trajectory_csv(outcome: RunOutcome) -> str:
    lines = ["replicate,t,heldout_objective,heldout_grad_norm_sq"]
    for r in range(outcome.replicates):
        for t in range(outcome.steps + 1):
            lines.append(f"{r},{t},{_number(outcome.heldout_objective[r, t])},"
                         f"{_number(outcome.heldout_grad_norm_sq[r, t])}")
    return "\n".join(lines) + "\n"


def _json_with_runs(record: dict) -> str:
    """Indented JSON with the "runs" list one line per replicate (long per-step lists stay on one line)."""
    record = dict(record)
    runs = record.pop("runs")
    head = json.dumps(record, indent=2)[:-2]
    body = ",\n".join("    " + json.dumps(r) for r in runs)
    return f'{head},\n  "runs": [\n{body}\n  ]\n}}\n'


def publication(outcome: RunOutcome, *, command, include_nonprivate: bool = False) -> dict[str, str]:
    """File name -> text: exactly what ``dpref run --output DIR`` writes.

    * ``releases.csv``: columns replicate, t, release (Alg 2 / MeZO: the released ŝ_t) or release_0 ..
      release_{d-1} (Alg 1 / DP-GD: the released noisy vector), t = 0..T−1 — the private output.
    * ``trajectory.csv`` (when there is a held-out set): columns replicate, t, heldout_objective,
      heldout_grad_norm_sq, t = 0..T.
    * ``ledger.json``: ``ledger_record``.
    * ``manifest.json``: schema_version (``MANIFEST_SCHEMA_VERSION``, the version of this layout), command
      (``mask_command``), created (UTC), platform (python, implementation, os, os_release, machine), versions
      (``package_versions``), settings,
      seeds (public seeds, data seed and the data and held-out stream keys), files, summary (``summary``
      without NOT PRIVATE entries).
    * with include_nonprivate, ``nonprivate_diagnostics.json``: ``nonprivate_diagnostics`` — NOT PRIVATE.

    Numbers are written as their shortest round-trip repr, so every file except the manifest's creation time is
    a deterministic function of the outcome and of the installed versions. Non-finite floats: CSV inf/nan,
    JSON "inf"/"-inf"/null. No secret seed is in the outcome, so none can be written.
    """
    files = {"releases.csv": _releases_csv(outcome)}
    if outcome.heldout_objective is not None:
        files["trajectory.csv"] = _trajectory_csv(outcome)
    files["ledger.json"] = _json_with_runs(ledger_record(outcome))
    if include_nonprivate:
        files["nonprivate_diagnostics.json"] = _json_with_runs(nonprivate_diagnostics(outcome))
    settings = outcome.settings
    problem = settings["problem"]
    seeds = {"seed": list(outcome.seeds), "data_seed": settings["data_seed"]}
    if settings["data_seed"] is not None:
        seeds["data_stream"] = [*DATA_KEY, problem]
        seeds["held_out_stream"] = [*DATA_KEY, problem, HELD_OUT_KEY]
    manifest = {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "command": mask_command(command),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "platform": {"python": platform.python_version(), "implementation": platform.python_implementation(),
                     "os": platform.system(), "os_release": platform.release(), "machine": platform.machine()},
        "versions": package_versions(),
        "settings": settings,
        "seeds": seeds,
        "files": sorted([*files, "manifest.json"]),
        "summary": summary(outcome),
    }
    files["manifest.json"] = json.dumps(_jsonable(manifest), indent=2) + "\n"
    return files


# ---------------------------------------------------------------------------------------------------
# The table


def _fmt(value, se=None) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        text = f"{value:.6g}"
        return text if se is None else f"{text} ± {se:.2g}"
    return str(value)


def _statistics_rows(record: dict, prefix: str, label: str, taus: str) -> list[tuple[str, str]]:
    return [
        (f"{label}(x_0)", _fmt(record[f"{prefix}_initial"])),
        (f"E_tau {label}", _fmt(record[f"{prefix}_mean"], record[f"{prefix}_mean_se"]) + "  (mean over t < T)"),
        (f"{label}(x_tau)", _fmt(record[f"{prefix}_output"], record[f"{prefix}_output_se"])
         + f"  (released point, tau = {taus})"),
        (f"{label}(x_T)", _fmt(record[f"{prefix}_final"], record[f"{prefix}_final_se"])),
    ]


def render_table(record: dict) -> str:
    """The record of ``summary`` as aligned text; its "nonprivate" part, if any, under a NOT PRIVATE heading."""
    rank = "" if record.get("effective_rank") is None else f", r={record['effective_rank']:.4g}"
    taus = ", ".join(map(str, record["output_index"][:5])) + (", ..." if len(record["output_index"]) > 5 else "")
    rows = [
        ("algorithm", f"{record['algorithm']} ({record['backend']} backend, {record['replicates']} replicate(s))"),
        ("problem", f"{record['objective']}, d={record['d']}, "
                    f"{'n private (add/remove)' if record['n'] is None else 'n=' + str(record['n'])}{rank}"),
        ("steps", f"T={record['steps']}, step size {_fmt(record['step_size'])}, perturbation "
                  f"{_fmt(record['perturbation'])}, clip {_fmt(record['clip'])}, "
                  f"direction {_fmt(record['direction'])}"),
        ("batching", f"{record['batching']}" + (f", B={record['batch_size']}" if record["batch_size"] else "")),
        ("privacy", "not private (MeZO)" if record["noise_std"] is None else
         f"{record['accountant']} ({record['relation']}, {record['guarantee']}): sigma {_fmt(record['noise_std'])}, "
         f"sensitivity {_fmt(record['sensitivity'])}"),
        ("epsilon", "-" if record["noise_std"] is None else
         f"target {_fmt(record['epsilon'])} at delta {_fmt(record['delta'])}; "
         f"certified {_fmt(record['epsilon_claimed'])}"
         f"; tight {_fmt(record['epsilon_tight'])}"),
        ("secret seed", "-" if record["secret_seed_source"] is None else
         f"{record['secret_seed_source']}: {record['guarantee_condition']}"),
    ]
    if "heldout_objective_initial" in record:
        size = f" ({record['held_out_n']} rows)" if record.get("held_out_n") else ""
        rows.append(("diagnostics", f"on the held-out set{size}, never on the training data"))
        rows += _statistics_rows(record, "heldout_objective", "F", taus)
        rows += _statistics_rows(record, "heldout_grad_norm_sq", "|grad F|^2", taus)
    if record.get("output"):
        rows.append(("output", record["output"]))
    nonprivate = record.get("nonprivate")
    extra = []
    if nonprivate:
        extra = [("clip fraction", _fmt(nonprivate["clip_fraction"], nonprivate["clip_fraction_se"])),
                 ("evaluations", f"{nonprivate['loss_evaluations']} loss, {nonprivate['gradient_evaluations']} "
                                 f"gradient; {nonprivate['nonfinite_values']} non-finite value(s) replaced")]
        if "training_grad_norm_sq_initial" in nonprivate:
            extra += _statistics_rows(nonprivate, "training_grad_norm_sq", "train |grad F|^2", taus)
        extra.append(("seconds", f"{nonprivate['seconds']:.3g}"))
    width = max(len(k) for k, _ in rows + extra)
    text = "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
    if extra:
        text += ("\n\nNOT PRIVATE — computed on the training data outside the privacy plan; do not publish:\n"
                 + "\n".join(f"{k:<{width}}  {v}" for k, v in extra))
    return text
