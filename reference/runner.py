"""dpzero Algorithms 1 and 2, §2.1 DP-GD and MeZO (App. B.2), run end to end on a built-in problem (App. B.1),
and zo_o2nc Algorithm 3 with Algorithm 4 (Theorem 4.9) or Algorithm 6 (App. E) on built-in ridge problems
(``run_zo_o2nc``, the last section of this module, whose comment states what such a run publishes and why);
what such runs may publish. The library behind ``dpref run``.

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

Before anything is built, ``run_algorithm`` checks every setting (ValueError/TypeError naming the parameter and
the rule) and compares the memory the run needs (``estimate_memory``, pure arithmetic on the sizes) with the
memory available (``available_memory``) or ``memory_limit``: a run that cannot fit is refused at once
(``MemoryLimitError``). A run whose iterate or held-out diagnostic becomes non-finite stops with ``RunDiverged``,
naming the step, the value and the step-length settings; only public quantities (iterates, held-out data)
decide it, and no RuntimeWarning is printed.

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
import os
import platform
import re
import shlex
import sys
import time
from collections.abc import Callable
from importlib import metadata
from typing import NamedTuple

import numpy as np
from scipy.special import expit

from .algorithms import dpzero as reference_dpzero
from .algorithms.dpzero_privacy import (ACCOUNTANTS, BATCHINGS, _check_batch_size, _check_sampling_probability,
                                        privacy_plan)
from .objectives import QUADRATIC_MODES, EffectiveRankQuadratic
from .objectives_dpzero import SubspaceLogistic
from .progress import progress_bar
from .rng import SEED_BOUND, Streams, sample_ball, sample_sphere
from .secrets import replicate_seeds, secret_seeds
from .validation import check_int, check_probability, check_real

__all__ = [
    "ALGORITHMS",
    "PROBLEMS",
    "BACKENDS",
    "DATA_KEY",
    "HELD_OUT_KEY",
    "NOT_PRIVATE",
    "HELD_OUT_DIAGNOSTICS",
    "DEFAULT_EPSILON",
    "DEFAULT_DELTA",
    "RunOutcome",
    "RunDiverged",
    "MemoryLimitError",
    "estimate_memory",
    "memory_parts",
    "MemoryPart",
    "available_memory",
    "check_memory",
    "format_bytes",
    "PROGRESS_DELAY",
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

#: The privacy target of a private algorithm when ``run_algorithm`` gets epsilon=None / delta=None.
DEFAULT_EPSILON = 2.0
DEFAULT_DELTA = 1e-6

#: Stream keys (under ``Streams(data_seed)``) of the training data and of the held-out data.
DATA_KEY = ("dpref run",)
HELD_OUT_KEY = "held-out"

#: The mark on every quantity computed on the private training data outside the privacy plan.
NOT_PRIVATE = ("NOT PRIVATE: computed on the private training data outside the privacy plan (clip counts, batch "
               "sizes, evaluation counts, training-set gradient norms, wall-clock time); do not publish")

#: What the held-out diagnostics of ``summary`` are (the record's "diagnostics" entry, with the held-out rows).
HELD_OUT_DIAGNOSTICS = {
    "data": "held-out set (same law as the training data, its own stream); never the training data",
    "objective": "heldout_objective_*: F(x), the mean loss over the held-out rows",
    "stationarity": "heldout_grad_norm_sq_*: |grad F(x)|^2, the squared gradient norm of that F",
    "points": "_initial at x_0, _mean over t < T (expectation over tau), _output at the released x_tau, "
              "_final at x_T",
}

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


# ---------------------------------------------------------------------------------------------------
# Memory: estimated before anything is allocated

_FLOAT = 8  # bytes of a float64 (and of an int64 or intp)
_OBJECT = 112  # bytes of a small NumPy array object (the reference backend keeps one per step)
_PER_REPLICATE = 2048  # Python objects per replicate: public and secret seeds, their SeedSequences, ledger rows
_PER_GENERATOR = 1024  # seeding one direction generator (the fast backend mixes all (seed, step) pairs at once)
_BASE = 64 * 2**20  # fixed costs of a run beyond the imported modules (plan, accountant tables, small arrays)


class MemoryPart(NamedTuple):
    """One part of ``memory_parts``: what it holds, its bytes, the parameters of ``run_algorithm`` whose
    reduction shrinks it, and whether it is transient (alive during one phase only; the estimate counts the
    largest transient part, plus every lasting one)."""

    what: str
    bytes: int
    parameters: tuple[str, ...]
    transient: bool = False


def _block_replicates(name: str, *, d, n, width, steps, replicates, batching, batch_size) -> int:
    """R_b: the replicates ``reference.fast.dpzero`` runs at once (its ``_replicates_per_block``, restated on the
    sizes so that no setup is built; ``_BLOCK_BYTES`` is read from that module)."""
    from .fast.dpzero import _BLOCK_BYTES

    vector = name in ("dpgd_zeroth_order", "dpgd")
    shared = replicates == 1  # the runner passes one int seed for R = 1 and R spawned seeds otherwise
    if batching == "full":
        m, persistent = n, 0
    elif batching == "shuffle":
        m, persistent = batch_size, steps * batch_size * 8
    else:
        m = min(n, batch_size + int(6 * math.sqrt(batch_size)) + 8)
        persistent = steps * n
    per_step = 8 * 8 * m * max(d, width) + (8 * 8 * m * d if vector else 0)
    persistent += steps * (d if vector else 1) * 8 + (0 if shared else steps * d * 8)
    per_replicate = per_step + persistent + 64 * d
    return max(1, min(replicates, _BLOCK_BYTES // per_replicate))


def memory_parts(algorithm: str, *, d: int, n: int, steps: int, replicates: int = 1, backend: str = "fast",
                 problem: str | None = "quadratic", k: int = 3, held_out_n: int | None = None,
                 batching: str = "full", batch_size: int | None = None, data_width: int | None = None,
                 publish: bool = False) -> list[MemoryPart]:
    """The parts of ``estimate_memory``, largest first (``MemoryPart``: what, bytes, parameters, transient).

    Sizes only: nothing is allocated and nothing is validated beyond what the arithmetic needs (call it with
    the validated values of ``run_algorithm``). problem: "quadratic" or "subspace-logistic" (the data are built,
    so they count), or None for a caller's problem (its data exist already and do not count; ``data_width`` is
    the width p of its rows, default d). With T = steps, R = replicates, m the rows of a step's batch (n for
    full batching, B for shuffle, about B + 6√B for Poisson), h = held_out_n (default n) and R_b the replicates
    the fast backend runs at once (as many as fit in about 200 MB of its per-block arrays, at least one):

    Lasting parts (all counted):

    * training data 8·n·d (quadratic) or 8·n·(k+1) plus the basis U, 8·d·k (subspace-logistic); held-out
      data 8·h·d, resp. 8·h·(k+1) + 8·d·k.
    * releases 8·R·T (dpzero, MeZO) or 8·R·T·d (Algorithm 1, DP-GD); traces and counts 10·8·R·(T+1) (held-out
      F, held-out ‖∇F‖² and training ‖∇F‖², recorded then split; the algorithm's trace; three per-step
      counts); the output and final iterates 2·8·R·d; seeds about 2 KiB per replicate (Python objects).
    * fast backend, the draws of a block: per replicate the noise (8·T, or 8·T·d for the vector algorithms),
      its own directions with R > 1 (2·8·T·d and about 1 KiB per step to seed their generators), the Poisson
      masks (T·n bytes) or the shuffled indices (8·(T·B + n)); a single run's shared directions likewise.
    * reference backend: the (T+1) iterates it keeps, 8·(T+1)·d (and the T released vectors, 8·T·d, of
      Algorithm 1 and DP-GD), and its directions and noise, 2·8·T·d.

    Transient parts (the largest counts):

    * drawing a data set, 8·max(n, h)·d (quadratic); the held-out objective's constant, 2·8·h·d (quadratic).
    * one step of the fast backend, per replicate of a block: the loss at the 2·m points against the batch rows,
      32·m·d bytes (quadratic and a caller's problem, width max(d, p)) or 32·m·(k+1) (subspace-logistic); the
      per-record vectors of Algorithm 1 and DP-GD, six (m, d) float64 arrays (product or gradient,
      replacement, clipping, masking, running sum). Reference backend: three (m, d) arrays for the vector
      algorithms. Evaluating the held-out diagnostics: 4·8·R_b·d (quadratic) or 6·8·R_b·max(n, h)
      (subspace-logistic).
    * the text of the published files (``publish``, ``dpref run --output``): about 120 bytes per released number
      and per trajectory row.

    And a fixed 64 MiB (the privacy plan and its accountant, small arrays). The parameters named are those of
    ``run_algorithm`` whose reduction shrinks the part (held_out_n only when given; otherwise n sets the
    held-out size too)."""
    name = ALGORITHMS.get(algorithm, algorithm)
    vector = name in ("dpgd_zeroth_order", "dpgd")
    private = name != "mezo"
    T, R, d, n = int(steps), int(replicates), int(d), int(n)
    h = n if held_out_n is None else int(held_out_n)
    held = "n" if held_out_n is None else "held_out_n"
    logistic = problem == "subspace-logistic"
    width = (k + 1) if logistic else (d if data_width is None else int(data_width))
    if batching == "full":
        m, rows = n, "n"
    elif batching == "shuffle":
        m, rows = int(batch_size), "batch_size"
    else:
        m, rows = min(n, int(batch_size) + int(6 * math.sqrt(batch_size)) + 8), "batch_size"
    releases = ("replicates", "steps", "d") if vector else ("replicates", "steps")
    parts: list[MemoryPart] = []

    def add(what, size, params, transient=False):
        if size > 0:
            parts.append(MemoryPart(what, int(size), tuple(params), transient))

    if problem is not None:  # built here: the data count
        if logistic:
            add("training data (n rows)", _FLOAT * (n * (k + 1) + d * k), ("n",))
            add("held-out data", _FLOAT * (h * (k + 1) + d * k), (held,))
            add("drawing a data set", _FLOAT * (2 * max(n, h) * k + 3 * d * k), ("n", "d"), True)
        else:
            add("training data (n x d)", _FLOAT * n * d, ("d", "n"))
            add("held-out data (rows x d)", _FLOAT * h * d, ("d", held))
            add("drawing a data set (rows x d)", _FLOAT * max(n, h) * d, ("d", "n" if n >= h else held), True)
            add("held-out objective setup (rows x d)", 2 * _FLOAT * h * d, ("d", held), True)
    if backend == "fast":
        blocked = _block_replicates(name, d=d, n=n, width=width, steps=T, replicates=R, batching=batching,
                                    batch_size=batch_size)
        also = ("replicates",) if blocked > 1 else ()
        grid = 0 if name == "dpgd" else 4 * _FLOAT * m * (width if logistic else max(d, width))
        vectors = 6 * _FLOAT * m * d if vector else 0
        add("evaluating one step (batch rows x d)", blocked * max(grid, vectors),
            (rows, *also) if logistic and not vector else ("d", rows, *also), True)
        draws = (_FLOAT * T * (d if vector else 1)) if private else 0
        directions = (2 * _FLOAT * T * d + _PER_GENERATOR * T) if name != "dpgd" else 0
        if batching == "poisson":
            draws += T * n
        elif batching == "shuffle":
            draws += _FLOAT * (T * batch_size + n)
        if R > 1:
            add("random draws of a block (steps x d)", blocked * (draws + directions), ("steps", "d", *also))
        else:
            add("random draws (steps x d)", draws + directions, ("steps", "d"))
        diagnostics = 6 * _FLOAT * blocked * max(n, h) if logistic else 4 * _FLOAT * blocked * d
        add("held-out diagnostics of a block", diagnostics, ("replicates",) if blocked > 1 else ("d",), True)
    else:
        add("per-record vectors of one step (batch rows x d)", 3 * _FLOAT * m * d if vector else 0, ("d", rows),
            True)
        kept = (T + 1) * (_FLOAT * d + _OBJECT) + (T * (_FLOAT * d + _OBJECT) if vector else 0)
        add("iterates kept by the reference backend (steps x d)", kept, ("steps", "d"))
        add("directions and noise (steps x d)", 2 * _FLOAT * T * d, ("steps", "d"))
    add("releases (replicates x steps" + (" x d)" if vector else ")"), _FLOAT * R * T * (d if vector else 1),
        releases)
    add("traces and counts (replicates x steps)", 10 * _FLOAT * R * (T + 1), ("replicates", "steps"))
    add("output iterates (replicates x d)", 2 * _FLOAT * R * d, ("replicates", "d"))
    add("seeds (replicates)", _PER_REPLICATE * R, ("replicates",))
    if publish:
        add("text of the published files", 120 * (R * T * (d if vector else 1) + R * (T + 1)), releases, True)
    add("fixed costs", _BASE, ())
    parts.sort(key=lambda part: -part.bytes)
    return parts


def estimate_memory(algorithm: str, **sizes) -> int:
    """Bytes a run of ``run_algorithm`` is estimated to need at its peak, beyond the imported modules: every
    lasting part of ``memory_parts`` plus its largest transient part (same keyword arguments: d, n, steps,
    replicates, backend, problem, k, held_out_n, batching, batch_size, data_width, publish). Pure arithmetic on
    the sizes, so it answers at once for any size. An estimate (within about ±30 % of the measured peak on the
    built-in problems), meant to tell a run that fits from one that cannot, not a bound."""
    return _total(memory_parts(algorithm, **sizes))


def _total(parts) -> int:
    return sum(p.bytes for p in parts if not p.transient) + max((p.bytes for p in parts if p.transient), default=0)


def available_memory() -> tuple[int | None, str]:
    """(bytes, where the number comes from): the memory available now (``psutil.virtual_memory().available``)
    when psutil is installed, else the physical memory (``os.sysconf('SC_PHYS_PAGES') * SC_PAGE_SIZE``), else
    (None, "unknown") — no limit is then applied."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            return int(psutil.virtual_memory().available), "available memory"
        except Exception:  # pragma: no cover - psutil without a reading on this platform
            pass
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE")), "physical memory"
    except (AttributeError, ValueError, OSError):  # pragma: no cover - no sysconf (Windows)
        return None, "unknown"


def format_bytes(size: float) -> str:
    """1536 -> "1.5 KiB": binary units, three significant digits."""
    size = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(size) < 1024 or unit == "PiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.3g} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def _param_name(param: str, cli: bool) -> str:
    """"step_size" (Python) or "--step-size" (command line)."""
    return f"--{param.replace('_', '-')}" if cli else param


def _name_setting(param: str, value, cli: bool) -> str:
    """"step_size = 1e+300" (Python) or "--step-size 1e+300" (command line)."""
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return f"{_param_name(param, cli)} {text}" if cli else f"{param} = {text}"


class MemoryLimitError(ValueError):
    """A run refused before anything is allocated: its estimated memory exceeds the limit.

    estimate, limit: bytes; limit_source: "memory_limit" (given) or where ``available_memory`` read it;
    parts: ``memory_parts``; reduce: {parameter: value} of the settings to reduce, the largest parts' first.
    ``describe(cli=True)`` gives the message with command-line options (--d) instead of parameters (d)."""

    def __init__(self, estimate: int, limit: int, limit_source: str, parts, reduce: dict):
        self.estimate, self.limit, self.limit_source = int(estimate), int(limit), limit_source
        self.parts, self.reduce = list(parts), dict(reduce)
        super().__init__(self.describe())

    def describe(self, cli: bool = False) -> str:
        option = _param_name("memory_limit", cli)
        if self.limit_source == "memory_limit":
            limit = f"{option} {format_bytes(self.limit)}" if cli else f"memory_limit = {format_bytes(self.limit)}"
        else:
            limit = f"the {format_bytes(self.limit)} of {self.limit_source} ({option} overrides)"
        largest = ", ".join(f"{part.what} {format_bytes(part.bytes)}" for part in self.parts[:2])
        reduce = " or ".join(_name_setting(p, v, cli) for p, v in self.reduce.items())
        advice = f"reduce {reduce}" if reduce else f"raise {option}"
        return (f"the run needs an estimated {format_bytes(self.estimate)} of memory, more than {limit}; "
                f"largest parts: {largest}; {advice}")


def check_memory(algorithm: str, *, memory_limit: int | None = None, **sizes) -> int:
    """The estimate of ``estimate_memory(algorithm, **sizes)`` if it is within the limit, else MemoryLimitError
    (a ValueError: the estimate, the limit, the largest parts and the parameters to reduce — those of the parts
    that make up most of the estimate, the largest values first).

    memory_limit: bytes (an int >= 1), or None for ``available_memory()`` (no check when that is unknown)."""
    values = dict(sizes)
    if values.get("held_out_n") is None:
        values["held_out_n"] = values.get("n")
    return _check_parts(memory_parts(algorithm, **sizes), values, memory_limit)


def _check_parts(parts, values: dict, memory_limit: int | None) -> int:
    """``_total(parts)`` if it is within ``memory_limit`` (None: ``available_memory()``, no check when unknown),
    else MemoryLimitError naming the settings in ``values`` ({parameter: value}) that shrink the largest parts."""
    estimate = _total(parts)
    if memory_limit is None:
        limit, source = available_memory()
        if limit is None:
            return estimate
    else:
        limit, source = check_int("memory_limit", memory_limit, minimum=1), "memory_limit"
    if estimate <= limit:
        return estimate
    reduce: dict = {}
    covered, sized = 0, sum(part.bytes for part in parts if part.parameters)
    fixed = sum(part.bytes for part in parts if not part.parameters)
    for part in parts:  # the parameters of the largest parts, until they make up most of the estimate
        if fixed >= limit:  # the fixed costs alone exceed the limit: no size can help, only a larger limit
            break
        if not part.parameters:
            continue
        for param in part.parameters:
            if values.get(param) is not None and values[param] > 1:
                reduce.setdefault(param, values[param])
        covered += part.bytes
        if covered >= 0.8 * sized or len(reduce) >= 3:
            break
    reduce = dict(sorted(reduce.items(), key=lambda item: -item[1]))  # the largest values first
    raise MemoryLimitError(estimate, limit, source, parts, reduce)


# ---------------------------------------------------------------------------------------------------
# Divergence: a non-finite iterate or held-out diagnostic ends the run with the settings that caused it


class _NonFinite(Exception):
    """Raised by ``_Recorder`` (not a ValueError, so that no algorithm check can mistake it for its own)."""

    def __init__(self, step: int, replicate: int, quantity: str, value: float):
        super().__init__(step, replicate, quantity, value)
        self.step, self.replicate, self.quantity, self.value = step, replicate, quantity, value


class RunDiverged(ValueError):
    """The run diverged: at iterate x_step (after step ``step`` of ``steps``) of replicate ``replicate`` the
    iterate or a held-out diagnostic was not finite.

    quantity: "iterate" (x_t has an inf or NaN entry), "objective" (held-out F(x_t)) or "grad_norm_sq"
    (held-out ‖∇F(x_t)‖²); value: the non-finite value. settings: {parameter: value} of the settings that set
    the length of a step (step_size; clip; perturbation for the zeroth-order algorithms). noise_std: the σ of
    a private run's plan (public) and epsilon its target, or None; when the noise outweighs the clipped mean by
    orders of magnitude (``noise_dominates``: σ > 1000·C, or σ√d > 1000·C for the vector releases) the message
    names σ and epsilon and suggests a larger epsilon. Only public quantities decide it — the iterates
    (post-processing of the releases) and the held-out set — so the message reveals nothing of the training
    data. ``describe(cli=True)`` names command-line options."""

    def __init__(self, step: int, steps: int, replicate: int, replicates: int, quantity: str, value: float,
                 settings: dict, noise_std: float | None = None, epsilon: float | None = None,
                 noise_dominates: bool = False):
        self.step, self.steps, self.replicate, self.replicates = step, steps, replicate, replicates
        self.quantity, self.value, self.settings = quantity, float(value), dict(settings)
        self.noise_std, self.epsilon, self.noise_dominates = noise_std, epsilon, noise_dominates
        super().__init__(self.describe())

    def describe(self, cli: bool = False) -> str:
        value = repr(self.value)
        what = {"iterate": f"the iterate x_{self.step} has a non-finite entry ({value})",
                "objective": f"the held-out objective F(x_{self.step}) = {value}",
                "grad_norm_sq": f"the held-out |grad F(x_{self.step})|^2 = {value}"}[self.quantity]
        where = f" (replicate {self.replicate})" if self.replicates > 1 else ""
        step_size, *others = (_name_setting(p, v, cli) for p, v in self.settings.items())
        context = ", ".join(others)
        if self.noise_dominates:
            context += f"; noise std {self.noise_std:.3g} for {_name_setting('epsilon', self.epsilon, cli)}"
        clip = self.settings.get("clip")
        advice = f"reduce {_param_name('step_size', cli)}"
        if clip is not None and math.isinf(clip):
            advice += f" or set a finite {_param_name('clip', cli)}"
        if self.noise_dominates:
            advice += f" or raise {_param_name('epsilon', cli)} (the noise outweighs the clipped mean)"
        return (f"the run diverged{where}: {what} after step {self.step} of {self.steps}; the steps were too long "
                f"for {step_size}" + (f" (with {context})" if context else "") + f": {advice}")


#: Seconds a run goes before its progress bar appears (short runs print nothing on stderr).
PROGRESS_DELAY = 1.0


class _Recorder:
    """The ``trace`` given to the algorithm: returns the held-out F(x_t) (so ``DPResult.trace`` holds it) and
    records the held-out ‖∇F(x_t)‖² and the training ‖∇F(x_t)‖² beside it, in one (R, T+1, 3) array allocated
    up front.

    The reference calls it with x_t (d,); the fast backend with (R_b, d) per block of replicates, the block's
    T+1 calls in a row before the next block's. A non-finite iterate, held-out F or held-out ‖∇F‖² raises
    ``_NonFinite`` (the run diverged); the training ‖∇F‖² is recorded as it is (NOT PRIVATE: it decides
    nothing). The evaluations run under ``np.errstate(all="ignore")``: an overflow is reported by that check,
    not by a RuntimeWarning. With ``progress`` a bar (``reference.progress.progress_bar``, one tick per
    replicate and traced step) appears once the traced steps have taken ``PROGRESS_DELAY`` seconds."""

    def __init__(self, held_out, objective, steps: int, replicates: int, progress: bool):
        self.value = objective_value(held_out)
        self.held_norm = squared_gradient_norm(held_out)
        self.has_training = isinstance(objective, (EffectiveRankQuadratic, SubspaceLogistic)) or any(
            callable(getattr(objective, method, None)) for method in ("squared_gradient_norm", "gradient"))
        self.train_norm = squared_gradient_norm(objective) if self.has_training else (
            lambda points: np.full(points.shape[:-1], np.nan))
        self.steps, self.replicates = steps, replicates
        self.values = np.empty((replicates, steps + 1, 3))
        self.row = self.t = 0  # the block being traced starts at replicate ``row``; its next iterate is x_t
        self.progress, self.bar, self.ticks = progress, None, 0
        self.start = None  # the clock starts at the first traced iterate (after the privacy plan is computed)

    def __call__(self, x):
        x = _float_points(x)
        points = x[None] if x.ndim == 1 else x
        size = points.shape[0]
        if self.row + size > self.replicates:
            raise RuntimeError(f"trace called for replicates {self.row}..{self.row + size - 1}, "
                               f"but the run has {self.replicates}")
        with np.errstate(all="ignore"):
            rows = np.stack([np.asarray(f(points), dtype=np.float64).reshape(size)
                             for f in (self.value, self.held_norm, self.train_norm)], axis=-1)  # (R_b, 3)
        checks = (("iterate", ~np.all(np.isfinite(points), axis=-1), None), ("objective", ~np.isfinite(rows[:, 0]), 0),
                  ("grad_norm_sq", ~np.isfinite(rows[:, 1]), 1))
        for quantity, bad, column in checks:
            if np.any(bad):
                r = int(np.flatnonzero(bad)[0])
                value = rows[r, column] if column is not None else points[r][~np.isfinite(points[r])][0]
                raise _NonFinite(self.t, self.row + r, quantity, float(value))
        self.values[self.row:self.row + size, self.t] = rows
        self.t += 1
        if self.t == self.steps + 1:  # the fast backend traces each block of replicates in turn
            self.row, self.t = self.row + size, 0
        self._tick(size)
        return float(rows[0, 0]) if x.ndim == 1 else rows[:, 0]

    def _tick(self, size: int) -> None:
        self.ticks += size
        if not self.progress:
            return
        if self.bar is None:
            now = time.perf_counter()
            self.start = now if self.start is None else self.start
            if now - self.start < PROGRESS_DELAY:
                return
            self.bar = progress_bar(self.replicates * (self.steps + 1), "dpref run", "step", enabled=True)
            size = self.ticks
        self.bar.update(size)

    def close(self):
        if self.bar is not None:
            self.bar.close()

    def arrays(self) -> np.ndarray:
        """(R, T+1, 3): the recorded values, every replicate's whole path."""
        if self.row != self.replicates or self.t != 0:
            raise RuntimeError(f"trace recorded {self.row} whole replicate paths (and {self.t} more iterates), "
                               f"expected {self.replicates} of T+1 = {self.steps + 1} iterates")
        return self.values


def _problem_name(objective) -> str:
    return str(getattr(objective, "name", type(objective).__name__))


def _check_choice(name: str, value, choices) -> None:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")


def _check_settings(name: str, *, steps, step_size, perturbation, clip, epsilon, delta, accountant, batching,
                    sampling_probability, direction, progress, memory_limit) -> dict:
    """The settings of ``run_algorithm`` that do not depend on the problem's size, validated (ValueError or
    TypeError naming the parameter and the rule); epsilon and delta defaulted for a private algorithm."""
    out = {"steps": check_int("steps", steps, minimum=1),
           "step_size": check_real("step_size", step_size, positive=True)}
    if name == "dpgd":
        out["perturbation"] = None if perturbation is None else check_real("perturbation", perturbation,
                                                                            positive=True)
    elif perturbation is None:
        raise ValueError(f"perturbation must be a finite real number > 0 for {name} (the finite-difference "
                         "step λ), got None")
    else:
        out["perturbation"] = check_real("perturbation", perturbation, positive=True)
    if name == "mezo":
        out["clip"] = check_real("clip", clip, positive=True, allow_inf=True)
        for param, value in (("epsilon", epsilon), ("delta", delta), ("accountant", accountant)):
            if value is not None:
                raise ValueError(f"{param} must be None for mezo (MeZO adds no noise: it is not private), "
                                 f"got {value!r}")
        out["epsilon"] = out["delta"] = None
    else:
        clip = check_real("clip", clip, positive=True, allow_inf=True)
        if math.isinf(clip):
            raise ValueError("clip must be finite for a private algorithm (an unclipped mean has unbounded "
                             "sensitivity), got inf")
        out["clip"] = clip
        out["epsilon"] = check_real("epsilon", DEFAULT_EPSILON if epsilon is None else epsilon, positive=True)
        out["delta"] = check_probability("delta", DEFAULT_DELTA if delta is None else delta)
    _check_choice("batching", batching, BATCHINGS)
    if accountant is not None and name != "mezo":
        _check_choice("accountant", accountant, ACCOUNTANTS[batching])
    out["sampling_probability"] = _check_sampling_probability(batching, sampling_probability)
    if direction is not None:
        _check_choice("direction", direction, reference_dpzero.DIRECTIONS)
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be a bool, got {type(progress).__name__} {progress!r}")
    if memory_limit is not None:
        check_int("memory_limit", memory_limit, minimum=1)
    return out


def run_algorithm(algorithm: str, *, problem: str = "quadratic", mode: str = "harmonic", k: int = 3, d: int = 100,
                  n: int = 1000, data_seed: int = 0, held_out_n: int | None = None, steps: int = 200,
                  step_size: float = 0.01, perturbation: float | None = 1e-4, clip: float = 10.0,
                  epsilon: float | None = None, delta: float | None = None, accountant: str | None = None,
                  batching: str = "full", batch_size: int | None = None, sampling_probability: float | None = None,
                  direction: str | None = None, seed: int = 0, noise_seed=None, replicates: int = 1,
                  backend: str = "fast", progress: bool = False, objective=None, held_out=None,
                  memory_limit: int | None = None) -> RunOutcome:
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

    Settings, all checked before anything is built (ValueError or TypeError naming the parameter and the rule;
    bool is not an int): steps T >= 1, step_size α finite > 0, perturbation λ finite > 0 (zeroth-order
    algorithms; None or ignored for dpgd), clip C finite > 0 (mezo: inf allowed, no clipping), epsilon > 0 and
    delta in (0, 1) for the private algorithms (None: ``DEFAULT_EPSILON`` = 2 and ``DEFAULT_DELTA`` = 1e-6;
    mezo takes neither, nor an accountant), accountant one of the batching's, batching, batch_size (None for
    full batching, an int in [1, n] otherwise), sampling_probability (Poisson only, in (0, 1]), direction
    (default sphere; mezo gaussian; not dpgd), replicates >= 1 (> 1 needs backend "fast"), seed and data_seed
    in [0, 2^128). Built-in problem: d >= 1, n >= 1, mode one of QUADRATIC_MODES (quadratic), k in [1, d]
    (subspace-logistic), held_out_n >= 1. Under add/remove neighbours (Poisson batching with a given
    sampling_probability) the training-set size n is private, so the held-out size cannot default to it:
    held_out_n is then required.

    Memory: before anything is allocated, ``check_memory`` compares ``estimate_memory`` with ``memory_limit``
    (bytes; None: ``available_memory()``) and raises ``MemoryLimitError`` (a ValueError naming the estimate,
    the limit and the parameters to reduce) when the run would not fit.

    Divergence: when an iterate, the held-out F or the held-out ‖∇F‖² becomes non-finite (too long steps),
    the run stops with ``RunDiverged`` (a ValueError naming the step, the value and step_size, clip and
    perturbation). NumPy floating-point warnings are silenced during the run (``np.errstate``): non-finite
    per-record values are replaced and counted by the algorithms (``nonfinite_counts``), non-finite iterates
    and diagnostics end the run. A caller's problem without a held-out set gets the algorithms' own check
    (ValueError "x must contain only finite values").

    progress (a bool): a progress bar on stderr (``reference.progress.progress_bar``; one tick per replicate
    and traced step), shown once the traced steps have taken ``PROGRESS_DELAY`` seconds.
    """
    _check_choice("algorithm", algorithm, ALGORITHMS)
    name = ALGORITHMS[algorithm]
    _check_choice("backend", backend, BACKENDS)
    replicates = check_int("replicates", replicates, minimum=1)
    if replicates > 1 and backend != "fast":
        raise ValueError(f"replicates = {replicates} needs backend 'fast' (the reference runs one seed at a time)")
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    checked = _check_settings(name, steps=steps, step_size=step_size, perturbation=perturbation, clip=clip,
                              epsilon=epsilon, delta=delta, accountant=accountant, batching=batching,
                              sampling_probability=sampling_probability, direction=direction, progress=progress,
                              memory_limit=memory_limit)
    steps, step_size, perturbation, clip = (checked[key] for key in ("steps", "step_size", "perturbation", "clip"))
    epsilon, delta, sampling_probability = checked["epsilon"], checked["delta"], checked["sampling_probability"]
    custom = objective is not None
    if custom:
        if held_out is not None and getattr(held_out, "d", objective.d) != objective.d:
            raise ValueError(f"held_out must have the objective's dimension d = {objective.d}, got {held_out.d}")
        d, n = int(objective.d), int(np.shape(objective.data)[0])
        width = int(np.shape(objective.data)[1]) if np.ndim(objective.data) == 2 else d
        batch_size = _check_batch_size(batching, batch_size, n)
        held_rows = None if held_out is None else int(np.shape(held_out.data)[0])
        sizes = {"problem": None, "d": d, "n": n, "data_width": width}
        problem_settings = {"problem": _problem_name(objective), "mode": None, "k": None, "d": d, "n": n,
                            "data_seed": None, "held_out_n": held_rows}
    else:
        if held_out is not None:
            raise ValueError("held_out needs objective (a caller's problem); without it the built-in problem's "
                             "held-out set is used")
        _check_choice("problem", problem, PROBLEMS)
        data_seed = check_int("data_seed", data_seed, minimum=0, maximum=SEED_BOUND - 1)
        d = check_int("d", d, minimum=1)
        n = check_int("n", n, minimum=1)
        if problem == "quadratic":
            _check_choice("mode", mode, QUADRATIC_MODES)
        else:
            k = check_int("k", k, minimum=1, maximum=d)
        if held_out_n is not None:
            held_out_n = check_int("held_out_n", held_out_n, minimum=1)
        elif batching == "poisson" and sampling_probability is not None:
            raise ValueError("held_out_n is required with batching='poisson' and a sampling_probability (add/remove "
                             "neighbours): the training-set size n is then private, and a held-out set of n rows "
                             "would publish it")
        batch_size = _check_batch_size(batching, batch_size, n)
        sizes = {"problem": problem, "d": d, "n": n, "k": k, "held_out_n": held_out_n}
    check_memory(algorithm, memory_limit=memory_limit, steps=steps, replicates=replicates, backend=backend,
                 batching=batching, batch_size=batch_size, **sizes)

    if not custom:
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

    recorder = None if held_out is None else _Recorder(held_out, objective, steps, replicates, bool(progress))
    common = {"steps": steps, "step_size": step_size, "seed": seed_arg, "batching": batching,
              "batch_size": batch_size, "sampling_probability": sampling_probability, "trace": recorder}
    x0 = np.zeros(int(objective.d))
    start = time.perf_counter()
    module = _backend_module(backend)
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if name == "mezo":
                result = module.mezo(objective.loss, objective.data, x0, perturbation=perturbation,
                                     clip_threshold=clip, direction=direction or "gaussian", **common)
            elif name == "dpgd":
                result = module.dpgd(objective.gradient, objective.data, x0, clip_threshold=clip, epsilon=epsilon,
                                     delta=delta, noise_seed=noise_arg, accountant=accountant, **common)
            else:
                result = getattr(module, name)(objective.loss, objective.data, x0, perturbation=perturbation,
                                               clip_threshold=clip, epsilon=epsilon, delta=delta,
                                               noise_seed=noise_arg, accountant=accountant,
                                               direction=direction or "sphere", **common)
    except _NonFinite as exc:
        causes = {"step_size": step_size, "clip": clip}
        if name != "dpgd":
            causes["perturbation"] = perturbation
        sigma = None
        if name != "mezo":
            try:  # the plan is memoised: this is the run's own σ (public: the ledger holds it)
                sigma = float(privacy_plan(clip_threshold=clip, n=int(np.shape(objective.data)[0]), steps=steps,
                                           epsilon=epsilon, delta=delta, batching=batching, batch_size=batch_size,
                                           accountant=accountant,
                                           sampling_probability=sampling_probability).noise_std)
            except Exception:  # pragma: no cover - the run had a plan; σ is only context for the message
                sigma = None
        # the noise outweighs the clipped mean by orders of magnitude: epsilon (σ), not only α, sets the step
        dominates = sigma is not None and sigma * (math.sqrt(objective.d) if name != "dpzero" else 1.0) > 1e3 * clip
        raise RunDiverged(exc.step, steps, exc.replicate, replicates, exc.quantity, exc.value, causes,
                          noise_std=sigma, epsilon=epsilon if sigma is not None else None,
                          noise_dominates=dominates) from None
    finally:
        if recorder is not None:
            recorder.close()
    seconds = time.perf_counter() - start
    del noise_arg  # the secret seeds go no further than the algorithm call

    heldout_value = heldout_norm = training_norm = None
    if recorder is not None:
        values = recorder.arrays()
        heldout_value, heldout_norm, training_norm = (np.ascontiguousarray(values[..., j]) for j in range(3))
        del values, recorder.values
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


def _plan_fields(plan, *names) -> dict:
    """The named fields of a privacy plan, in order; all None for a run without a plan (not private)."""
    return {name: None if plan is None else getattr(plan, name) for name in names}


def summary(outcome: RunOutcome, *, include_nonprivate: bool = False) -> dict:
    """The printed record: settings, problem, privacy plan, public seeds, τ and the held-out diagnostics.

    The results, both on the held-out set (never on the training data): heldout_objective_* — the objective
    value F(x), the mean loss over the held-out rows — and heldout_grad_norm_sq_* — the stationarity measure
    ‖∇F(x)‖² of that F; each at x_0 (``_initial``), mean over t < T (``_mean``, the expectation over
    τ ~ Unif{0..T−1}), at the released x_τ (``_output``, the algorithm's output) and at x_T (``_final``); means
    over the replicates with standard errors (``_se``, None for one replicate). "diagnostics"
    (``HELD_OUT_DIAGNOSTICS`` and the held-out rows) says so in the record itself. With include_nonprivate the
    key "nonprivate" holds ``nonprivate_diagnostics(outcome, per_replicate=False)`` — NOT PRIVATE. Plain JSON data
    (inf as "inf", NaN as None)."""
    if isinstance(outcome, O2ncOutcome):  # zo_o2nc (below)
        return _o2nc_summary(outcome, include_nonprivate=include_nonprivate)
    plan = outcome.result.ledger.plan
    held_out = outcome.held_out
    rank = getattr(held_out, "effective_rank", None) if held_out is not None else None
    record = {**outcome.settings, "objective": _problem_name(outcome.objective),
              "effective_rank": None if rank is None else float(rank)}
    record.update(_plan_fields(plan, "noise_std", "sensitivity", "accountant", "relation", "epsilon_claimed",
                               "epsilon_tight", "mu_gdp"))
    record.update({
        "guarantee": "not private" if plan is None else plan.guarantee,
        "guarantee_condition": outcome.guarantee_condition,
        "seeds": list(outcome.seeds),
        "output_index": [int(t) for t in outcome.output_index],
    })
    if outcome.heldout_objective is not None:
        taus, steps = outcome.output_index, outcome.steps
        record["diagnostics"] = {**HELD_OUT_DIAGNOSTICS, "rows": int(np.shape(held_out.data)[0])}
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
    if isinstance(outcome, O2ncOutcome):  # zo_o2nc (below)
        return _o2nc_nonprivate(outcome)
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
    if isinstance(outcome, O2ncOutcome):  # zo_o2nc (below)
        return _o2nc_ledger(outcome)
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
    if isinstance(outcome, O2ncOutcome):  # zo_o2nc (below)
        return _o2nc_publication(outcome, command=command, include_nonprivate=include_nonprivate)
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
    return with_manifest(files, command=command, settings=settings, seeds=seeds, summary=summary(outcome))


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
        (f"{label}(x_tau)", _fmt(record[f"{prefix}_output"], record[f"{prefix}_output_se"])
         + f"  (released point, tau = {taus})"),
        (f"{label}(x_T)", _fmt(record[f"{prefix}_final"], record[f"{prefix}_final_se"]) + "  (final iterate)"),
        (f"E_tau {label}", _fmt(record[f"{prefix}_mean"], record[f"{prefix}_mean_se"]) + "  (mean over t < T)"),
        (f"{label}(x_0)", _fmt(record[f"{prefix}_initial"]) + "  (start)"),
    ]


def render_table(record: dict) -> str:
    """The record of ``summary`` as aligned text; its "nonprivate" part, if any, under a NOT PRIVATE heading."""
    if record.get("algorithm") in O2NC_ALGORITHMS.values():  # zo_o2nc (below)
        return _render_o2nc(record)
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
        rows_held = record.get("diagnostics", {}).get("rows") or record.get("held_out_n")
        size = f"{rows_held} rows, " if rows_held else ""
        plural = "s" if record["replicates"] > 1 else ""
        rows.append(("held-out set", f"{size}same law as the training data; F and |grad F|^2 below are on it, never "
                                     "on the training data" + (f" (means over the {record['replicates']} "
                                     f"replicate{plural} ± standard error)" if plural else "")))
        rows.append(("objective", "F(x) = mean loss over the held-out rows"))
        rows += _statistics_rows(record, "heldout_objective", "F", taus)
        rows.append(("stationarity", "|grad F(x)|^2 on the held-out rows"))
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


# ===================================================================================================
# zo_o2nc: Algorithm 3 with Algorithm 4 (Theorem 4.9) or Algorithm 6 (App. E) on built-in ridge problems
#
# What a run publishes and why (the threat model of the module docstring, for zo_o2nc):
#
# * releases.csv — the released g̃_t^k (Alg 4: g_t^k + TREE(t); Alg 6: g + ξ), the values the privacy plan covers.
#   Every iterate, the epoch averages w̄^k and the output w̄ = w̄^{k*} are their post-processing with public
#   randomness (x_1, D, η, the segment points s_t^k and k*, all fixed by public inputs).
# * epochs.csv, output.csv — w̄^1..w̄^K and w̄ (post-processing), with F(w̄^k) on the held-out draws and on the
#   population (below); diagnostics.json — the diagnostics below.
# * the diagnostics of the summary: the objective F and the Goldstein stationarity ‖∇F(·)‖_{2δ} (zo_o2nc.E7) at x_1,
#   at w̄ (and F at x_{T+1}^K), on two public data sets: the HELD-OUT draws (rows drawn from the population with
#   their own stream, never the training draws) and the POPULATION itself — the finite set of ridge functions the
#   training records are drawn from, fixed by the public data seed: its F is the exact population risk E_z f(x, z)
#   of the synthetic problem, as the law N(1, I) is public for the dpzero quadratic. Both are functions of the
#   output and of public data only, so the plan covers them; in a deployment only a held-out set would exist.
# * ledger.json (the plan: ρ and ε under the exact and the printed rules, the theory's settings), manifest.json.
#
# NOT PRIVATE (only with include_nonprivate, in nonprivate_diagnostics.json): the same diagnostics on the TRAINING
# draws, the loss-evaluation count, the counts of replaced non-finite and out-of-bound finite differences, and the
# wall-clock time. The secret seed is written nowhere.

import mpmath  # noqa: E402

from .algorithms import zo_o2nc as reference_zo_o2nc  # noqa: E402
from .algorithms.zo_o2nc_privacy import NAIVE_SIGMA_RULES, TREE_RULES  # noqa: E402
from .algorithms.zo_o2nc_theory import T_RULES, naive_settings, thm49_bound, thm49_settings  # noqa: E402
from . import smoothing  # noqa: E402
from .objectives import RidgeSum  # noqa: E402
from .secrets import secret_seed  # noqa: E402
from .stationarity import goldstein_stationarity  # noqa: E402

#: CLI name -> function of reference.algorithms.zo_o2nc (and of reference.fast.zo_o2nc when it exists).
O2NC_ALGORITHMS = {"zo_o2nc": "zo_o2nc", "zo_o2nc-naive": "zo_o2nc_naive"}
#: The ridge profiles φ of the built-in problems (``reference.smoothing.ridge_profile``): S2, S1 and |r|.
O2NC_PROBLEMS = ("wshape", "capped", "abs")
O2NC_COUNT_RULES = TREE_RULES
O2NC_SIGMA_RULES = NAIVE_SIGMA_RULES
O2NC_T_RULES = T_RULES
#: Alg 6's batch: B = 1 (App. E) or B = max(1, round(d^{3/2}/ρ)) (the batch behind the printed rate, zo_o2nc.E9).
O2NC_BATCH_RULES = ("one", "dimension")
O2NC_NOISES = ("gaussian", "none")

#: The built-in ridge problems: f(x; z) = L·φ(<a, x> − c), z = (a, c), a ~ U(S^{d−1}), c ~ N(0, s²), τ = 1, L = 1;
#: a population of ``population`` such rows, start x_1 = (5/√d)·(1, …, 1) (‖x_1‖ = 5, data-independent).
RIDGE_TAU = 1.0
RIDGE_OFFSET_SCALE = 0.5
RIDGE_LIPSCHITZ = 1.0
X1_NORM = 5.0
POPULATION_KEY = "population"
#: Stream (under the PUBLIC seed) of the points sampled in B(x, 2δ) for the Goldstein bound.
GOLDSTEIN_KEY = ("dpref run", "zo_o2nc", "goldstein")
#: Allowed smoothing radii δ: float64 finite differences need δ well above the rounding of the iterates.
SMOOTHING_RADIUS_RANGE = (1e-9, 1e9)
#: At most this many points in the Goldstein ball (each Wolfe iteration of the min-norm point costs S·d).
GOLDSTEIN_SAMPLES_MAX = 100_000

O2NC_DEFAULTS = {"problem": "wshape", "d": 4, "samples": 20_000, "population": 1000, "rho": 1.0,
                 "smoothing_radius": 0.25, "T_rule": "max", "count_rule": "exact", "sigma_rule": "exact",
                 "batch_rule": "one", "delta": 1e-6, "goldstein_samples": 256}

NOT_PRIVATE_O2NC = ("NOT PRIVATE: computed on the private training data outside the privacy plan (training-set "
                    "objective and stationarity, loss-evaluation and replacement counts, wall-clock time); do not "
                    "publish")

#: What the diagnostics of a zo_o2nc run are (the record's "diagnostics" entry).
O2NC_DIAGNOSTICS = {
    "data": "heldout_*: the held-out draws (rows drawn from the population with their own stream, never the training "
            "draws); population_*: the population the records are drawn from (public, fixed by the data seed): the "
            "exact population risk; never the training data",
    "objective": "*_objective_*: F(x), the weighted mean loss",
    "stationarity": "*_goldstein_lower/upper_*: an interval holding the Goldstein norm |grad F(x)|_{2 delta} "
                    "(radius 2 delta, zo_o2nc.E7); upper: min-norm point of the gradients at the point and at "
                    "goldstein_samples points drawn in the open ball (public stream); lower: for the direction of that "
                    "point, the sum over the ridges of the smallest slope any point of the ball can give",
    "proxy": "*_proxy_output: |(1/T) sum_t grad F_delta(w_t^{k*})|, the smoothed gradients at the output epoch's "
             "query points (the quantity the proof of Theorem 4.9 bounds); an upper bound on |grad F(w)|_{2 delta} "
             "when the spread max_t |w_t - w| <= delta",
    "points": "_initial at x_1, _output at the released w = w^{k*}, _final at x_{T+1}^K",
}


def _ridge_pieces(profile: str, tau: float):
    """Kinks b_1 < … < b_m of φ and its slope on each of the m + 1 pieces (``reference.smoothing`` profiles)."""
    if profile == "abs":
        return [0.0], [-1.0, 1.0]
    if profile == "capped":
        return [-tau, 0.0, tau], [0.0, -1.0, 1.0, 0.0]
    return [-tau, 0.0, tau], [-1.0, 1.0, -1.0, 1.0]


class RidgeProblem:
    """A built-in zo_o2nc problem: a finite POPULATION of ridge functions and M training draws from it.

    problem: the profile ("wshape", "capped" or "abs"). population: ``RidgeSum`` of the population rows z_j =
    (a_j, c_j), drawn by ``RidgeSum.random(d, population, rng, lipschitz=1, profile, tau=1, offset_scale=0.5)`` from
    ``Streams(data_seed).generator("dpref run", problem, "population")``. training_index: the M training draws
    (indices into the population, i.i.d. uniform, ``integers(population, size=M)`` on
    ``Streams(data_seed).generator("dpref run", problem)``); held_out_index: h draws from
    ``Streams(data_seed).generator("dpref run", problem, "held-out")``. ``data`` is the (M, d + 1) training set the
    algorithm reads (private in a deployment); x1 = (5/√d)·(1, …, 1).

    Every function of the problem is a weighted mean over the population rows (``weights``): uniform weights give
    the population risk F(x) = E_z f(x; z) exactly; the held-out (training) weights are the draws' counts over their
    number, i.e. the mean over the held-out (training) rows.
    """

    def __init__(self, problem: str, population: RidgeSum, training_index, held_out_index, data_seed: int):
        self.problem, self.population, self.data_seed = problem, population, data_seed
        self.training_index = _read_only_array(np.asarray(training_index, dtype=np.int64))
        self.held_out_index = _read_only_array(np.asarray(held_out_index, dtype=np.int64))
        self.data = _read_only_array(population.data[self.training_index])
        self.d = population.d
        self.name = f"ridge[{problem}]"
        self.x1 = np.full(self.d, X1_NORM / math.sqrt(self.d))

    @property
    def samples(self) -> int:
        return int(self.training_index.shape[0])

    @property
    def held_out_n(self) -> int:
        return int(self.held_out_index.shape[0])

    def weights(self, which: str) -> np.ndarray:
        """"population" (uniform), "held_out" or "training" (counts of the draws over their number)."""
        n = self.population.n
        if which == "population":
            return np.full(n, 1.0 / n)
        index = {"held_out": self.held_out_index, "training": self.training_index}[which]
        return np.bincount(index, minlength=n) / index.shape[0]

    def _chunk(self) -> int:
        return max(1, 2**21 // (self.population.n * self.d))  # points per evaluation: about 16 MB of (n, d) floats

    def value(self, weights, points) -> np.ndarray:
        """F(x) = Σ_j w_j f(x; z_j) at points (..., d) -> (...)."""
        points = _float_points(points)
        flat = points.reshape(-1, self.d)
        data = self.population.data
        out = [self.population.loss(flat[i:i + self._chunk(), None, :], data[None]) @ weights
               for i in range(0, flat.shape[0], self._chunk())]
        return np.concatenate(out).reshape(points.shape[:-1]) if out else np.empty(points.shape[:-1])

    def gradient(self, weights, point) -> np.ndarray:
        """Σ_j w_j ∇f(x; z_j) at one point (d,): L·Σ_j w_j φ'(<a_j, x> − c_j)·a_j, with ``RidgeSum.gradient``'s
        midpoint slope at a kink (a Clarke subgradient of F), without its per-call checks of the rows."""
        ridges = self.population
        residual = ridges.directions @ _float_points(point) - ridges.offsets
        slopes = smoothing.ridge_profile_slope(residual, ridges.profile, ridges.tau)
        return (ridges.lipschitz * (weights * slopes)) @ ridges.directions

    def smoothed_gradients(self, weights, points, smoothing_radius) -> np.ndarray:
        """∇F̂_δ(w) = Σ_j w_j ∇f̂_δ(w; z_j) (exact, ``RidgeSum.smoothed_gradient``) at points (m, d) -> (m, d)."""
        points, data = _float_points(points), self.population.data
        return np.concatenate([
            np.einsum("mnd,n->md", self.population.smoothed_gradient(points[i:i + self._chunk(), None, :], data[None],
                                                                       smoothing_radius), weights)
            for i in range(0, points.shape[0], self._chunk())])


def _read_only_array(array: np.ndarray) -> np.ndarray:
    array = np.array(array, copy=True)
    array.flags.writeable = False
    return array


def build_ridge_problem(problem: str = "wshape", *, d: int = 4, samples: int = 20_000, population: int = 1000,
                        held_out_n: int | None = None, data_seed: int = 0) -> RidgeProblem:
    """The built-in zo_o2nc problem ``problem`` (one of O2NC_PROBLEMS): see ``RidgeProblem``. held_out_n: the
    held-out draws (default ``samples``)."""
    _check_choice("problem", problem, O2NC_PROBLEMS)
    d = check_int("d", d, minimum=1)
    samples = check_int("samples", samples, minimum=1)
    population = check_int("population", population, minimum=1)
    held_out_n = samples if held_out_n is None else check_int("held_out_n", held_out_n, minimum=1)
    data_seed = check_int("data_seed", data_seed, minimum=0, maximum=SEED_BOUND - 1)
    streams = Streams(data_seed)
    ridges = RidgeSum.random(d, population, streams.generator(*DATA_KEY, problem, POPULATION_KEY),
                             lipschitz=RIDGE_LIPSCHITZ, profile=problem, tau=RIDGE_TAU, offset_scale=RIDGE_OFFSET_SCALE)
    training = streams.generator(*DATA_KEY, problem).integers(population, size=samples)
    held_out = streams.generator(*DATA_KEY, problem, HELD_OUT_KEY).integers(population, size=held_out_n)
    return RidgeProblem(problem, ridges, training, held_out, data_seed)


def goldstein_interval(problem: RidgeProblem, weights, x, radius, *, samples: int, seed: int) -> dict:
    """An interval [lower, upper] holding the Goldstein norm ‖∇F(x)‖_radius (zo_o2nc Definition 2.1) of
    F = Σ_j w_j f(·; z_j).

    upper: ``reference.stationarity.goldstein_stationarity`` — the min-norm point of the hull of the gradients at x
    and at ``samples`` points drawn uniformly in the open ball B(x, radius) from the public stream
    ``Streams(seed).generator("dpref run", "zo_o2nc", "goldstein")`` (the same points for every weighting).
    lower: for the unit direction p of that min-norm point, every element g of the Goldstein set has
    ‖g‖ ≥ <g, p> ≥ Σ_j w_j L·min_{s ∈ S_j} s·<a_j, p>, where S_j is the set of slopes φ' takes on the residuals
    (r_j − radius, r_j + radius) that the ball reaches (r_j = <a_j, x> − c_j, ‖a_j‖ = 1); the residual interval is
    widened by a rounding allowance, which can only lower the bound. Returns {"lower", "upper", "samples"}.
    """
    x = _float_points(x)
    rng = Streams(seed).generator(*GOLDSTEIN_KEY)
    estimate = goldstein_stationarity(lambda y: problem.gradient(weights, y), x, float(radius), samples=samples,
                                      rng=rng)
    direction = estimate.hull.point
    length = float(np.linalg.norm(direction))
    lower = 0.0
    if length > 0 and math.isfinite(length):
        ridges = problem.population
        a, c = ridges.directions, ridges.offsets
        residual = a @ x - c
        slack = 8 * np.finfo(np.float64).eps * (problem.d + 2) * (np.abs(a) @ np.abs(x) + np.abs(c) + radius)
        reach = radius * np.linalg.norm(a, axis=1) + slack
        low, high = residual - reach, residual + reach
        kinks, slopes = _ridge_pieces(ridges.profile, ridges.tau)
        edges = [-math.inf, *kinks, math.inf]
        smallest, largest = np.full(residual.shape, math.inf), np.full(residual.shape, -math.inf)
        for piece, slope in enumerate(slopes):
            present = (low < edges[piece + 1]) & (high > edges[piece])
            smallest = np.where(present, np.minimum(smallest, slope), smallest)
            largest = np.where(present, np.maximum(largest, slope), largest)
        along = a @ (direction / length)
        bound = float(weights @ (ridges.lipschitz * np.minimum(smallest * along, largest * along)))
        allowance = 8 * np.finfo(np.float64).eps * (ridges.n + problem.d) * ridges.lipschitz
        lower = max(0.0, bound - allowance)
    return {"lower": float(min(lower, estimate.upper_bound)), "upper": float(estimate.upper_bound),
            "samples": int(samples)}


def ridge_proxy(problem: RidgeProblem, weights, points, smoothing_radius) -> dict:
    """‖(1/T) Σ_t ∇F̂_δ(w_t)‖ for one epoch's query points (T, d) — ``reference.stationarity.proxy_stationarity``,
    vectorized — and the spread max_t ‖w_t − w̄‖ (an upper bound on ‖∇F(w̄)‖_{2δ} when the spread is ≤ δ).
    Returns {"proxy", "spread"}."""
    points = _float_points(points)
    mean = problem.smoothed_gradients(weights, points, smoothing_radius).mean(axis=0)
    centre = points.mean(axis=0)
    return {"proxy": float(np.linalg.norm(mean)), "spread": float(np.max(np.linalg.norm(points - centre, axis=1)))}


class RecordsNeeded(ValueError):
    """The data cannot hold one epoch of the theory's settings: ``samples`` records, ``needed`` suffice (T grows
    with M). ``describe(cli=True)`` names the command-line options."""

    def __init__(self, algorithm: str, samples: int, needed: int, T: int, per_epoch: int):
        self.algorithm, self.samples, self.needed, self.T, self.per_epoch = algorithm, samples, needed, T, per_epoch
        super().__init__(self.describe())

    def describe(self, cli: bool = False) -> str:
        source = "Theorem 4.9" if self.algorithm == "zo_o2nc" else "App. E"
        options = ", ".join(_param_name(p, cli) for p in ("d", "smoothing_radius", "rho", "T_rule"))
        return (f"{_name_setting('samples', self.samples, cli)} cannot hold one epoch of {source}'s settings: T = "
                f"{self.T} rounds read {self.per_epoch} records per epoch; more records are needed: "
                f"{_name_setting('samples', self.needed, cli)} suffices (T grows with M; {options} set T)")


def _o2nc_theory(name, samples, problem_d, smoothing_radius, rho, gap, *, T_rule, count_rule, sigma_rule, batch):
    if name == "zo_o2nc":
        return thm49_settings(samples, problem_d, RIDGE_LIPSCHITZ, smoothing_radius, rho, gap, T_rule=T_rule,
                              count_rule=count_rule)
    return naive_settings(samples, problem_d, RIDGE_LIPSCHITZ, smoothing_radius, rho, gap, batch_size=batch,
                          T_rule=T_rule, sigma_rule=sigma_rule)


def _records_needed(fits, samples: int) -> int:
    """A record count > samples for which ``fits`` holds (doubling, then bisection; checked)."""
    lo, hi = samples, max(2 * samples, 4)
    while not fits(hi):
        lo, hi = hi, 2 * hi
        if hi > 2**80:  # pragma: no cover - the theory's T grows sub-linearly in M, so some M fits
            raise ValueError("no number of records holds one epoch of these settings")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi


def _rounds_upper_bound(name: str, samples: int, batch: int) -> int:
    """An upper bound on the K·T rounds of a run: 2KT ≤ M (Alg 4, B1 = T + 1, B2 = 1), KTB ≤ M (Alg 6)."""
    return max(1, samples // 2) if name == "zo_o2nc" else max(1, samples // batch)


def _T_upper_bound(name: str, samples: int, d: int, rho) -> int:
    """T of Theorem 4.9 with F* = 0 (T decreases in F*), capped at M/2: a bound for the memory estimate."""
    if name != "zo_o2nc":
        return 1
    T1 = (math.sqrt(d) * samples) ** (2 / 3)
    T2 = 0.0 if rho is None else math.sqrt(d ** 1.5 * samples / rho)
    return int(min(samples / 2, max(T1, T2) + 1))


def _naive_batch(batch_rule, batch_size, d, rho) -> int:
    if batch_size is not None:
        return int(batch_size)
    if batch_rule == "dimension" and rho is not None:
        return max(1, round(d ** 1.5 / rho))
    return 1


def o2nc_memory_parts(algorithm: str, *, d: int, samples: int, population: int = 1000,
                      held_out_n: int | None = None, rho: float | None = 1.0, batch_size: int = 1,
                      goldstein_samples: int = 256, publish: bool = False) -> list[MemoryPart]:
    """The parts of the memory a zo_o2nc run needs (``MemoryPart``, largest first), from the sizes alone.

    With M = samples, n = population, h = held_out_n (default M), R the rounds K·T (at most M/2 for Alg 4, M/B for
    Alg 6) and T_max Theorem 4.9's T at F* = 0:

    * lasting: the training draws 8·M·(d + 2) (rows and indices); the population 8·n·(d + 1); per round about
      4·(112 + 8d) + 48d + 160 bytes (the released, noiseless, noise, query, iterate and step vectors, their
      stacked arrays and the per-round counts; the path is recorded for the proxy).
    * transient (the largest counts): the held-out draws and counts 8·(h + n); the directions of one round and
      the points they are evaluated at, 4·8·(T_max + 1)·d² (Alg 4's GRAD round; T_max bounds T, so this part is
      an upper bound) or 8·B·d (Alg 6); the diagnostics' evaluations (chunks of about 16 MB,
      and the Goldstein points 8·(m + 1)·d·4); the text of the published files (about 25 bytes per released number).
    * fixed: 64 MiB.

    The estimate errs high: on the built-in problems (d = 4, M up to 2·10^5, both backends) the arrays' measured
    peak (tracemalloc) was 1.5–2.5 times smaller than the estimate without its fixed part.
    """
    name = O2NC_ALGORITHMS.get(algorithm, algorithm)
    M, n, d = int(samples), int(population), int(d)
    h = M if held_out_n is None else int(held_out_n)
    held = "samples" if held_out_n is None else "held_out_n"
    rounds = _rounds_upper_bound(name, M, int(batch_size))
    parts: list[MemoryPart] = []

    def add(what, size, params, transient=False):
        if size > 0:
            parts.append(MemoryPart(what, int(size), tuple(params), transient))

    add("training draws (samples x d)", _FLOAT * M * (d + 2), ("samples", "d"))
    add("population rows (population x d)", _FLOAT * n * (d + 1), ("population", "d"))
    add("rounds of the run (samples x d)", rounds * (4 * (_OBJECT + _FLOAT * d) + 6 * _FLOAT * d + 160),
        ("samples", "d"))
    add("held-out draws", _FLOAT * (h + n), (held, "population"), True)
    if name == "zo_o2nc":
        add("directions of one round (T x d x d)", 4 * _FLOAT * (_T_upper_bound(name, M, d, rho) + 1) * d * d,
            ("samples", "d"), True)
    else:
        add("directions of one round (B x d)", _FLOAT * int(batch_size) * d, ("d",), True)
    add("diagnostics (chunks and Goldstein points)", 3 * 2**24 + 4 * _FLOAT * (int(goldstein_samples) + 1) * d,
        ("goldstein_samples",), True)
    if publish:
        add("text of the published files", 25 * rounds * d, ("samples", "d"), True)
    add("fixed costs", _BASE, ())
    parts.sort(key=lambda part: -part.bytes)
    return parts


def check_o2nc_memory(algorithm: str, *, memory_limit: int | None = None, **sizes) -> int:
    """``check_memory`` for zo_o2nc: the estimate of ``o2nc_memory_parts(algorithm, **sizes)`` if it is within the
    limit, else MemoryLimitError naming the settings to reduce (samples, d, population, held_out_n)."""
    values = dict(sizes)
    if values.get("held_out_n") is None:
        values["held_out_n"] = values.get("samples")
    values.pop("rho", None)
    values.pop("batch_size", None)
    return _check_parts(o2nc_memory_parts(algorithm, **sizes), values, memory_limit)


def with_manifest(files: dict, *, command, settings, seeds, summary) -> dict:
    """``files`` plus ``manifest.json``: the command (a --noise-seed value masked), the time, platform and package
    versions, the public settings and seed keys, the file list and the printed summary (every run's publication)."""
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
        "summary": summary,
    }
    files["manifest.json"] = json.dumps(_jsonable(manifest), indent=2) + "\n"
    return files


def fast_twin_available(name: str) -> bool:
    """Whether the vectorized twin ``reference.fast.<name>`` is installed (``importlib.util.find_spec``)."""
    import importlib.util

    try:
        return importlib.util.find_spec(f".fast.{name}", __package__) is not None
    except (ImportError, ValueError):  # pragma: no cover - a broken package
        return False


def backend_module(backend: str, name: str, reference_module):
    """``reference_module`` for backend "reference", else the twin ``reference.fast.<name>``; a missing twin is one
    ValueError naming the other backend."""
    if backend == "reference":
        return reference_module
    import importlib

    try:
        return importlib.import_module(f".fast.{name}", __package__)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.endswith(f"fast.{name}"):
            raise ValueError(f"backend 'fast' needs reference.fast.{name}, which this installation does not have; "
                             "use backend 'reference'") from None
        raise


def fast_zo_o2nc_available() -> bool:
    """Whether the vectorized twin ``reference.fast.zo_o2nc`` is installed."""
    return fast_twin_available("zo_o2nc")


def _o2nc_module(backend: str):
    return backend_module(backend, "zo_o2nc", reference_zo_o2nc)


class _RidgeLoss:
    """f(x; z) = L·φ(<a, x> − c), z = (a, c): the loss the algorithm reads (the problem's ``RidgeSum.loss``
    without its per-call checks, which cost more than the loss). A 1-d point and row (the reference) give a float;
    arrays broadcast over their leading axes (points (..., d), rows (..., d + 1)), with the same NumPy reduction
    along the last axis, so both conventions give bitwise the same values (``reference.fast.zo_o2nc`` checks it
    and then evaluates a whole round in one call). Every call counts its
    evaluations into ``progress`` (a ``_RoundProgress``), which advances the bar by the rounds completed."""

    def __init__(self, profile: str, tau: float, lipschitz: float, d: int, progress=None):
        self.profile, self.tau, self.lipschitz, self.d = profile, float(tau), float(lipschitz), d
        self.progress = progress

    def _phi(self, r):
        if self.profile == "abs":
            return abs(r)
        if self.profile == "capped":
            return min(abs(r), self.tau) if isinstance(r, float) else np.minimum(np.abs(r), self.tau)
        return abs(abs(r) - self.tau)

    def __call__(self, x, z):
        d = self.d
        if isinstance(x, np.ndarray) and isinstance(z, np.ndarray) and x.ndim == 1 and z.ndim == 1:
            if self.progress is not None:
                self.progress.add(1)
            return self.lipschitz * self._phi(float(np.sum(x * z[:d], axis=-1) - z[d]))
        x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
        r = np.sum(x * z[..., :d], axis=-1) - z[..., d]
        if self.progress is not None:
            self.progress.add(int(np.prod(np.shape(r), dtype=np.int64)))
        value = self.lipschitz * self._phi(r)
        return float(value) if np.ndim(value) == 0 else value


class _RoundProgress:
    """A progress bar over the K·T rounds of a run, driven by the loss evaluations (the reference makes 2·B·m of
    them in a round of B records and m directions per record: Alg 4 m = d, Alg 6 m = 1), shown once the run has
    taken ``PROGRESS_DELAY`` seconds (``reference.progress.progress_bar``, "dpref run", unit "round")."""

    def __init__(self, per_round, K: int, enabled: bool):
        self.cumulative = np.cumsum(np.asarray(per_round, dtype=np.int64))
        self.per_epoch, self.T, self.total = int(self.cumulative[-1]), len(per_round), K * len(per_round)
        self.enabled, self.evaluations, self.shown, self.bar = enabled, 0, 0, None
        self.next = int(self.cumulative[0]) if enabled else math.inf
        self.start = time.perf_counter()

    def add(self, count: int) -> None:
        self.evaluations += count
        if self.evaluations >= self.next:
            self._advance()

    def _advance(self) -> None:
        epochs, rest = divmod(self.evaluations, self.per_epoch)
        done = min(self.total, epochs * self.T + int(np.searchsorted(self.cumulative, rest, side="right")))
        if done < self.total:
            k, t = divmod(done, self.T)
            self.next = k * self.per_epoch + int(self.cumulative[t])
        else:
            self.next = math.inf
        if self.bar is None:
            if time.perf_counter() - self.start < PROGRESS_DELAY:
                return
            self.bar = progress_bar(self.total, "dpref run", "round", enabled=True)
        self.bar.update(done - self.shown)
        self.shown = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@dataclasses.dataclass(frozen=True)
class O2ncOutcome:
    """A zo_o2nc run and what it was.

    result: the algorithm's ``DPResult`` (reference.algorithms.zo_o2nc). problem: the ``RidgeProblem`` (its training
    draws are private data). settings: the public settings (no secret seed). theory: the ``Theorem49Settings`` or
    ``NaiveSettings`` the run used (public). secret_seed_source, guarantee_condition: None for a run without noise.
    seconds: wall-clock time of the algorithm (NOT PRIVATE by convention). diagnostics: {"held_out": …,
    "population": …} public diagnostics (``O2NC_DIAGNOSTICS``); epoch_objectives: {"held_out", "population"} F(w̄^k),
    k = 1..K. ``training_diagnostics()``: the same diagnostics on the TRAINING draws — NOT PRIVATE.
    """

    result: object
    problem: RidgeProblem
    settings: dict
    theory: object
    seed: int
    secret_seed_source: str | None
    guarantee_condition: str | None
    seconds: float
    diagnostics: dict
    epoch_objectives: dict

    @property
    def private(self) -> bool:
        return self.result.ledger.plan is not None

    def training_diagnostics(self) -> dict:
        """The diagnostics of ``diagnostics`` on the TRAINING draws — NOT PRIVATE (computed on request)."""
        s = self.settings
        return _o2nc_diagnostics(self.problem, self.result, "training", s["smoothing_radius"],
                                 samples=s["goldstein_samples"], seed=self.seed)


def _check_o2nc_rho(rho):
    if rho is None:
        return None
    rho = check_real("rho", rho, positive=True, allow_inf=True)
    return None if math.isinf(rho) else float(rho)


def _point_diagnostics(problem, weights, point, radius, *, samples, seed) -> dict:
    interval = goldstein_interval(problem, weights, point, radius, samples=samples, seed=seed)
    return {"objective": float(problem.value(weights, point)), "goldstein_lower": interval["lower"],
            "goldstein_upper": interval["upper"]}


def _o2nc_diagnostics(problem: RidgeProblem, result, which: str, smoothing_radius: float, *, samples: int,
                      seed: int) -> dict:
    """F and the Goldstein interval at x_1 and at w̄, the proxy and its spread at the output epoch, F at x_{T+1}^K,
    and ``stationarity_upper_output`` = the smaller of the valid upper bounds on ‖∇F(w̄)‖_{2δ}."""
    weights, radius = problem.weights(which), 2 * smoothing_radius
    out = {"initial": _point_diagnostics(problem, weights, problem.x1, radius, samples=samples, seed=seed),
           "output": _point_diagnostics(problem, weights, result.output, radius, samples=samples, seed=seed),
           "final": {"objective": float(problem.value(weights, result.final_iterate))}}
    out["output"].update(ridge_proxy(problem, weights, result.query_points[result.output_index], smoothing_radius))
    upper = out["output"]["goldstein_upper"]
    if out["output"]["spread"] <= smoothing_radius * (1 + 1e-9):  # Algorithm 3 with D = δ/T: always
        upper = min(upper, out["output"]["proxy"])
    out["output"]["stationarity_upper"] = upper
    return out


def run_zo_o2nc(algorithm: str = "zo_o2nc", *, problem: str = "wshape", d: int = 4, samples: int = 20_000,
                population: int = 1000, held_out_n: int | None = None, data_seed: int = 0, rho=1.0,
                smoothing_radius: float = 0.25, T_rule: str = "max", count_rule: str = "exact",
                sigma_rule: str = "exact", batch_rule: str = "one", batch_size: int | None = None,
                delta: float = 1e-6, seed: int = 0, noise_seed=None, noise: str = "gaussian",
                backend: str | None = None, goldstein_samples: int = 256, progress: bool = False,
                memory_limit: int | None = None) -> O2ncOutcome:
    """zo_o2nc Algorithm 3 + projected OSD + Algorithm 4 (``algorithm="zo_o2nc"``, Theorem 4.9) or + Algorithm 6
    (``"zo_o2nc-naive"``, App. E) on a built-in ridge problem (``build_ridge_problem``), with the theory's settings,
    and its public diagnostics.

    Settings: ``thm49_settings`` (T_rule "max" or "paper_min", zo_o2nc.E5; count_rule "exact" or "paper_2lnT",
    zo_o2nc.E3) or ``naive_settings`` (sigma_rule "exact" or "paper", zo_o2nc.E8; B from batch_rule "one" or
    "dimension", zo_o2nc.E9, or batch_size) for M = samples, d, L = 1, δ = smoothing_radius, ρ = rho and
    F* = F_population(x_1) (public: the population is fixed by the data seed, and inf F ≥ 0). rho: ρ > 0 of
    (α, αρ²/2)-RDP, or None / inf for the non-private run (σ = 0, T = T1). noise "none": the σ = 0 twin of the ρ
    settings (same T, K, η and public draws; not private). delta: δ of the (ε, δ) statements of the ledger.
    A data set too small for one epoch raises ``RecordsNeeded`` (a ValueError naming the records that suffice).

    Seeds: seed is public (directions, s_t^k, k*, the Goldstein points); data_seed is public (population, training
    and held-out draws); noise_seed is the secret seed of the noise (None: fresh operating-system entropy; an int
    in [0, 2^128) different from seed and data_seed). backend: "reference" (``reference.algorithms.zo_o2nc``) or
    "fast" (``reference.fast.zo_o2nc``, same signature); None picks "fast" when installed.

    Memory: checked before anything is built (``check_o2nc_memory``; memory_limit bytes or None for the memory
    available). progress: a bar over the K·T rounds (``_RoundProgress``). Diagnostics: ``O2NC_DIAGNOSTICS``; the
    output's stationarity at radius 2δ (zo_o2nc.E7).
    """
    _check_choice("algorithm", algorithm, O2NC_ALGORITHMS)
    name = O2NC_ALGORITHMS[algorithm]
    _check_choice("problem", problem, O2NC_PROBLEMS)
    d = check_int("d", d, minimum=1)
    samples = check_int("samples", samples, minimum=1)
    population = check_int("population", population, minimum=1)
    if held_out_n is not None:
        held_out_n = check_int("held_out_n", held_out_n, minimum=1)
    data_seed = check_int("data_seed", data_seed, minimum=0, maximum=SEED_BOUND - 1)
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    rho = _check_o2nc_rho(rho)
    smoothing_radius = float(check_real("smoothing_radius", smoothing_radius, positive=True))
    low, high = SMOOTHING_RADIUS_RANGE
    if not low <= smoothing_radius <= high:
        raise ValueError(f"smoothing_radius must lie in [{low:g}, {high:g}] (float64 finite differences at ‖x_1‖ = "
                         f"{X1_NORM:g} need δ well above the rounding of the iterates), got {smoothing_radius!r}")
    _check_choice("T_rule", T_rule, O2NC_T_RULES)
    _check_choice("noise", noise, O2NC_NOISES)
    if name == "zo_o2nc":
        _check_choice("count_rule", count_rule, O2NC_COUNT_RULES)
        if batch_size is not None:
            raise ValueError("batch_size applies to zo_o2nc-naive only (Algorithm 4 uses B1 = T + 1, B2 = 1)")
        batch = 1
    else:
        _check_choice("sigma_rule", sigma_rule, O2NC_SIGMA_RULES)
        _check_choice("batch_rule", batch_rule, O2NC_BATCH_RULES)
        if batch_size is not None:
            batch_size = check_int("batch_size", batch_size, minimum=1, maximum=samples)
        batch = _naive_batch(batch_rule, batch_size, d, rho)
    delta = float(check_probability("delta", delta))
    goldstein_samples = check_int("goldstein_samples", goldstein_samples, minimum=1, maximum=GOLDSTEIN_SAMPLES_MAX)
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be a bool, got {type(progress).__name__} {progress!r}")
    private = rho is not None and noise == "gaussian"
    if not private and noise_seed is not None:
        raise ValueError("noise_seed does not apply to a run without noise (rho = inf or noise = 'none': not "
                         "private)")
    if private and isinstance(noise_seed, (int, np.integer)) and not isinstance(noise_seed, bool) \
            and noise_seed == data_seed:
        raise ValueError("noise_seed must differ from data_seed: the data seed is published, so noise drawn from it "
                         "could be regenerated; omit noise_seed to draw fresh secret entropy")
    secret = secret_seed(noise_seed, public_seeds=(seed, data_seed), name="noise_seed") if private else None
    if backend is None:
        backend = "fast" if fast_zo_o2nc_available() else "reference"
    _check_choice("backend", backend, BACKENDS)
    module = _o2nc_module(backend)
    if memory_limit is not None:
        memory_limit = check_int("memory_limit", memory_limit, minimum=1)
    check_o2nc_memory(algorithm, memory_limit=memory_limit, d=d, samples=samples, population=population,
                      held_out_n=held_out_n, rho=rho, batch_size=batch, goldstein_samples=goldstein_samples)

    built = build_ridge_problem(problem, d=d, samples=samples, population=population, held_out_n=held_out_n,
                                data_seed=data_seed)
    gap = float(built.value(built.weights("population"), built.x1))  # F* = F(x_1) ≥ F(x_1) − inf F (φ ≥ 0)
    rule_batch = batch_size if batch_size is not None else batch_rule

    def settings_for(m):
        return _o2nc_theory(name, m, d, smoothing_radius, rho, gap, T_rule=T_rule, count_rule=count_rule,
                            sigma_rule=sigma_rule, batch=rule_batch)

    try:
        theory = settings_for(samples)
    except ValueError as exc:
        if "cannot hold one epoch" not in str(exc):
            raise

        def fits(m):
            try:
                settings_for(m)
            except ValueError:
                return False
            return True

        T = int(re.search(r"T = (\d+)", str(exc)).group(1))
        per_epoch = 2 * T if name == "zo_o2nc" else batch * T
        raise RecordsNeeded(name, samples, _records_needed(fits, samples), T, per_epoch) from None

    T, K = theory.T, theory.K
    if name == "zo_o2nc":
        per_round = [2 * theory.B1 * d] + [2 * theory.B2 * d] * (T - 1)
    else:
        per_round = [2 * theory.batch_size] * T
    counter = _RoundProgress(per_round, K, bool(progress))
    loss = _RidgeLoss(problem, RIDGE_TAU, RIDGE_LIPSCHITZ, d, counter)
    run_noise = "gaussian" if private else "none"
    start = time.perf_counter()
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            result = getattr(module, name)(loss, built.data, built.x1.copy(), settings=theory,
                                           dp_delta=delta if private else None, seed=seed, noise_seed=secret,
                                           noise=run_noise, record_path=True)
    finally:
        counter.close()
    seconds = time.perf_counter() - start
    del secret
    for what, value in (("the output w", result.output), ("an epoch average", result.epoch_averages),
                        ("the final iterate", result.final_iterate)):
        if not np.all(np.isfinite(np.asarray(value, dtype=np.float64))):
            raise ValueError(f"the run produced a non-finite value in {what}: the steps D = δ/T are too long for "
                             f"float64 at smoothing_radius = {smoothing_radius:g}; reduce smoothing_radius")

    diagnostics = {which: _o2nc_diagnostics(built, result, which, smoothing_radius, samples=goldstein_samples,
                                            seed=seed) for which in ("held_out", "population")}
    epochs = {which: built.value(built.weights(which), np.asarray(result.epoch_averages, dtype=np.float64))
              for which in ("held_out", "population")}
    plan = result.ledger.plan
    settings = {"algorithm": name, "problem": problem, "objective": built.name, "d": d, "samples": samples,
                "population": population, "held_out_n": built.held_out_n, "data_seed": data_seed,
                "x1_norm": X1_NORM, "tau": RIDGE_TAU, "offset_scale": RIDGE_OFFSET_SCALE,
                "lipschitz": RIDGE_LIPSCHITZ, "rho": math.inf if rho is None else rho, "noise": noise,
                "smoothing_radius": smoothing_radius, "goldstein_radius": 2 * smoothing_radius, "T_rule": T_rule,
                "count_rule": count_rule if name == "zo_o2nc" else None,
                "sigma_rule": sigma_rule if name != "zo_o2nc" else None,
                "batch_rule": (None if name == "zo_o2nc" else ("given" if batch_size is not None else batch_rule)),
                "delta": delta if private else None, "seed": seed, "backend": backend,
                "goldstein_samples": goldstein_samples,
                "secret_seed_source": None if plan is None else result.ledger.secret_seed_source}
    return O2ncOutcome(result, built, settings, theory, seed,
                       None if plan is None else result.ledger.secret_seed_source,
                       None if plan is None else result.ledger.guarantee_condition, seconds, diagnostics, epochs)


def _plain_number(value):
    """mpmath numbers as floats (ints stay ints); anything else unchanged."""
    if isinstance(value, mpmath.mpf):
        return float(value)
    return value


def _theory_record(outcome: O2ncOutcome) -> dict:
    s = outcome.theory
    record = {"T": s.T, "K": s.K}
    if outcome.settings["algorithm"] == "zo_o2nc":
        record.update({"B1": s.B1, "B2": s.B2, "batch_size": None})
    else:
        record.update({"B1": None, "B2": None, "batch_size": s.batch_size})
    record.update({"step_bound": s.step_bound, "step_size": s.step_size, "noise_std": s.noise_std,
                   "initial_gap": s.initial_gap, "T_gradient": s.T_gradient, "T_privacy": s.T_privacy,
                   "T_real": s.T_real, "gradient_bound": s.gradient_bound, "records_used": s.records_used,
                   "records_unused": s.records_unused})
    record["theory_bound"] = thm49_bound(s) if outcome.settings["algorithm"] == "zo_o2nc" else None
    return {key: _plain_number(value) for key, value in record.items()}


def _plan_record(plan) -> dict:
    """The ``ZoO2ncPrivacyPlan`` as plain data (its accountant event as {"event": name, fields})."""
    if plan is None:
        return None
    record = {}
    for field in dataclasses.fields(plan):
        value = getattr(plan, field.name)
        if field.name == "accountant_event":
            value = {"event": type(value).__name__,
                     **{f.name: _plain_number(getattr(value, f.name)) for f in dataclasses.fields(value)}}
        record[field.name] = _plain_number(value)
    return record


def _flatten_diagnostics(prefix: str, diagnostics: dict) -> dict:
    """{"output": {"proxy": v}} -> {"<prefix>_proxy_output": v}."""
    return {f"{prefix}_{key}_{point}": value for point, values in diagnostics.items() for key, value in values.items()}


def _o2nc_summary(outcome: O2ncOutcome, *, include_nonprivate: bool = False) -> dict:
    """The printed record of a zo_o2nc run: settings, the theory's values, the privacy plan (ρ and ε under the
    exact and the printed rules), k*, the output point and the public diagnostics (``O2NC_DIAGNOSTICS``)."""
    plan = outcome.result.ledger.plan
    record = {**outcome.settings, **_theory_record(outcome)}
    record.update(_plan_fields(plan, "relation"))
    record["guarantee"] = ("not private" if plan is None else
                           f"(alpha, alpha rho^2/2)-RDP for every alpha > 1 with rho = {plan.rho_exact:.6g}")
    record.update(_plan_fields(plan, "noise_rule", "rho_target", "rho_exact", "rho_printed", "epsilon_claimed",
                               "epsilon_tight", "epsilon_exact", "epsilon_printed", "epsilon_accountant"))
    record.update({
        "sensitivities": None if plan is None else list(plan.sensitivities),
        "lipschitz_condition": None if plan is None else plan.condition,
        "plan_note": None if plan is None else plan.note,
        "guarantee_condition": outcome.guarantee_condition,
        "output_epoch": int(outcome.result.output_index) + 1,
        "output_point": np.asarray(outcome.result.output, dtype=np.float64),
        "diagnostics": {**O2NC_DIAGNOSTICS, "held_out_rows": outcome.problem.held_out_n,
                        "population_rows": outcome.problem.population.n},
    })
    record.update(_flatten_diagnostics("heldout", outcome.diagnostics["held_out"]))
    record.update(_flatten_diagnostics("population", outcome.diagnostics["population"]))
    if include_nonprivate:
        record["nonprivate"] = _o2nc_nonprivate(outcome)
    return _jsonable(record)


def _o2nc_nonprivate(outcome: O2ncOutcome) -> dict:
    """NOT PRIVATE: the diagnostics on the training draws, the loss evaluations, the replaced non-finite and the
    out-of-bound finite differences, the wall-clock time."""
    diagnostics = outcome.result.diagnostics
    record = {"warning": NOT_PRIVATE_O2NC, **_flatten_diagnostics("training", outcome.training_diagnostics()),
              "loss_evaluations": int(diagnostics.loss_evaluations),
              "nonfinite_values": int(np.sum(diagnostics.nonfinite_counts)),
              "lipschitz_exceedances": int(np.sum(diagnostics.lipschitz_exceedances)),
              "seconds": outcome.seconds}
    return _jsonable(record)


def _o2nc_ledger(outcome: O2ncOutcome) -> dict:
    """The ledger (all public): the plan, the run's settings (``RunSettings``), the public seed, where the secret
    seed came from and what the guarantee assumes, ε spent, k*."""
    ledger = outcome.result.ledger
    return _jsonable({"algorithm": ledger.algorithm, "epsilon_spent": ledger.epsilon_spent,
                      "plan": _plan_record(ledger.plan),
                      "settings": {k: _plain_number(v) for k, v in dataclasses.asdict(ledger.settings).items()},
                      "seed": ledger.seed, "secret_seed_source": ledger.secret_seed_source,
                      "guarantee_condition": ledger.guarantee_condition,
                      "output_epoch": int(outcome.result.output_index) + 1})


def o2nc_family_files(outcome, *, averages, objectives, averages_file, index_name, diagnostics_doc, ledger,
                      nonprivate, summary, algorithm_streams, command, include_nonprivate) -> dict[str, str]:
    """File name -> text of an O2NC-family publication (``dpref run zo_o2nc`` and ``nsnc_improved``): releases.csv
    (k, t, release_0..release_{d−1}), ``averages_file`` (k, heldout_objective, population_objective, average_0..: the
    epoch or block averages ``averages`` with their ``objectives``), output.csv (j, output), diagnostics.json (the
    held-out and population diagnostics with ``diagnostics_doc``; ``index_name``: the output's epoch or block, 1-based),
    ledger.json (``ledger``), manifest.json (``summary``; ``algorithm_streams`` names the run's stream keys) and, with
    include_nonprivate, nonprivate_diagnostics.json (``nonprivate()``, NOT PRIVATE)."""
    result, d = outcome.result, outcome.problem.d
    releases = np.asarray(result.releases, dtype=np.float64)
    K, T = releases.shape[:2]
    lines = ["k,t," + ",".join(f"release_{j}" for j in range(d))]
    for k in range(K):
        for t in range(T):
            lines.append(f"{k + 1},{t + 1}," + ",".join(_number(v) for v in releases[k, t]))
    files = {"releases.csv": "\n".join(lines) + "\n"}
    averages = np.asarray(averages, dtype=np.float64)
    lines = ["k,heldout_objective,population_objective," + ",".join(f"average_{j}" for j in range(d))]
    for k in range(K):
        lines.append(f"{k + 1},{_number(objectives['held_out'][k])},{_number(objectives['population'][k])}," +
                     ",".join(_number(v) for v in averages[k]))
    files[averages_file] = "\n".join(lines) + "\n"
    files["output.csv"] = "j,output\n" + "".join(f"{j},{_number(v)}\n" for j, v in
                                                  enumerate(np.asarray(result.output, dtype=np.float64)))
    files["diagnostics.json"] = json.dumps(_jsonable({
        "diagnostics": {**diagnostics_doc, "held_out_rows": outcome.problem.held_out_n,
                        "population_rows": outcome.problem.population.n},
        "goldstein_radius": outcome.settings["goldstein_radius"],
        "goldstein_samples": outcome.settings["goldstein_samples"], index_name: int(result.output_index) + 1,
        "held_out": outcome.diagnostics["held_out"], "population": outcome.diagnostics["population"]}), indent=2) + "\n"
    files["ledger.json"] = json.dumps(ledger, indent=2) + "\n"
    if include_nonprivate:
        files["nonprivate_diagnostics.json"] = json.dumps(nonprivate(), indent=2) + "\n"
    problem = outcome.settings["problem"]
    seeds = {"seed": outcome.seed, "data_seed": outcome.settings["data_seed"],
             "population_stream": [*DATA_KEY, problem, POPULATION_KEY], "data_stream": [*DATA_KEY, problem],
             "held_out_stream": [*DATA_KEY, problem, HELD_OUT_KEY], "goldstein_stream": list(GOLDSTEIN_KEY),
             "algorithm_streams": algorithm_streams}
    return with_manifest(files, command=command, settings=outcome.settings, seeds=seeds, summary=summary)


def _o2nc_publication(outcome: O2ncOutcome, *, command, include_nonprivate: bool = False) -> dict[str, str]:
    """File name -> text of ``dpref run zo_o2nc --output DIR`` (``o2nc_family_files``): releases.csv (g̃_t^k),
    epochs.csv (w̄^k), output.csv (w̄), diagnostics.json (``O2NC_DIAGNOSTICS``), ledger.json, manifest.json and, with
    include_nonprivate, nonprivate_diagnostics.json (NOT PRIVATE)."""
    return o2nc_family_files(
        outcome, averages=outcome.result.epoch_averages, objectives=outcome.epoch_objectives,
        averages_file="epochs.csv", index_name="output_epoch", diagnostics_doc=O2NC_DIAGNOSTICS,
        ledger=_o2nc_ledger(outcome), nonprivate=lambda: _o2nc_nonprivate(outcome), summary=_o2nc_summary(outcome),
        algorithm_streams="(\"zo_o2nc\", \"direction\", k, t), (\"zo_o2nc\", \"segment\", k), (\"zo_o2nc\", "
                          "\"output\") under seed; (\"zo_o2nc\", \"noise\") under the secret seed",
        command=command, include_nonprivate=include_nonprivate)


def _interval(record, prefix, point) -> str:
    lower, upper = record[f"{prefix}_goldstein_lower_{point}"], record[f"{prefix}_goldstein_upper_{point}"]
    return f"in [{_fmt(lower)}, {_fmt(upper)}]"


def _render_o2nc(record: dict) -> str:
    """The record of a zo_o2nc run as aligned text; its "nonprivate" part under a NOT PRIVATE heading."""
    naive = record["algorithm"] == "zo_o2nc_naive"
    private = record["rho_exact"] is not None
    oracle = "Algorithm 3 + 6 (naive oracle)" if naive else "Algorithm 3 + 4 (tree oracle)"
    blocks = f"B = {record['batch_size']}" if naive else f"B1 = {record['B1']}, B2 = {record['B2']}"
    rules = (f"T rule {record['T_rule']}, " + (f"sigma rule {record['sigma_rule']}, batch rule {record['batch_rule']}"
                                                if naive else f"count rule {record['count_rule']}"))
    radius = _fmt(record["goldstein_radius"])
    rows = [
        ("algorithm", f"{record['algorithm']}: {oracle}, {record['backend']} backend"),
        ("problem", f"{record['objective']}, d={record['d']}, M={record['samples']} records "
                    f"({record['records_used']} used), population {record['population']} ridges, |x_1| = "
                    f"{_fmt(record['x1_norm'])}, F* = F(x_1) = {_fmt(record['initial_gap'])}"),
        ("settings", f"{'Theorem 4.9' if not naive else 'App. E'} ({rules}): T={record['T']}, K={record['K']}, "
                     f"{blocks}, delta={_fmt(record['smoothing_radius'])}, D={_fmt(record['step_bound'])}, "
                     f"eta={_fmt(record['step_size'])}, sigma={_fmt(record['noise_std'])}"),
    ]
    if private:
        rows += [
            ("privacy", f"{record['relation']}: {record['guarantee']} (target {_fmt(record['rho_target'])}, "
                        f"{record['noise_rule']} rule; printed accounting: rho = {_fmt(record['rho_printed'])})"),
            ("epsilon", f"at delta {_fmt(record['delta'])}: claimed {_fmt(record['epsilon_claimed'])} (tight); "
                        f"exact rule {_fmt(record['epsilon_exact'])}, printed rule {_fmt(record['epsilon_printed'])} "
                        f"(zo_o2nc §2 conversion); accountant {_fmt(record['epsilon_accountant'])}"),
            ("condition", record["lipschitz_condition"]),
            ("secret seed", f"{record['secret_seed_source']}: {record['guarantee_condition']}"),
        ]
    else:
        why = ("rho = inf: sigma = 0, T = T1" if record["rho"] == "inf" else
               f"noise none: the sigma = 0 twin of the rho = {_fmt(record['rho'])} settings")
        rows.append(("privacy", f"not private ({why})"))
    rows.append(("output", f"w = w^{{k*}}, k* = {record['output_epoch']} of {record['K']}"))
    for prefix, label, size in (("heldout", "held-out", record["held_out_n"]),
                                ("population", "population", record["population"])):
        rows.append((f"{label} data", f"{size} {'draws' if prefix == 'heldout' else 'ridges'}: "
                     + ("drawn from the population with their own stream; never the training data"
                        if prefix == "heldout" else "the law the records are drawn from (public): exact F")))
        rows.append(("  F", f"x_1 {_fmt(record[f'{prefix}_objective_initial'])} -> w "
                            f"{_fmt(record[f'{prefix}_objective_output'])} "
                            f"(x_T {_fmt(record[f'{prefix}_objective_final'])})"))
        rows.append(("  |grad F|_{2delta}", f"x_1 {_interval(record, prefix, 'initial')}; w "
                     f"{_interval(record, prefix, 'output')} (2delta = {radius}, "
                     f"{record['goldstein_samples']} points sampled)"))
        spread = record[f"{prefix}_spread_output"]
        bound = ("<= delta: an upper bound too" if spread <= record["smoothing_radius"] * (1 + 1e-9) else
                 "> delta: not a bound on it")
        rows.append(("  proxy", f"{_fmt(record[f'{prefix}_proxy_output'])} at the output epoch (spread "
                                f"{_fmt(spread)} {bound})"))
    if record.get("theory_bound") is not None:
        rows.append(("theorem 4.9", f"bound on E|grad F(w)|_{{2delta}}: {_fmt(record['theory_bound'])}"))
    if record.get("output"):
        rows.append(("files", record["output"]))
    nonprivate = record.get("nonprivate")
    extra = []
    if nonprivate:
        extra = [("training F", f"x_1 {_fmt(nonprivate['training_objective_initial'])} -> w "
                                f"{_fmt(nonprivate['training_objective_output'])}"),
                 ("training |grad F|", f"w {_interval(nonprivate, 'training', 'output')}, proxy "
                                       f"{_fmt(nonprivate['training_proxy_output'])}"),
                 ("evaluations", f"{nonprivate['loss_evaluations']} loss; {nonprivate['nonfinite_values']} non-finite "
                                 f"and {nonprivate['lipschitz_exceedances']} out-of-bound difference(s)"),
                 ("seconds", f"{nonprivate['seconds']:.3g}")]
    width = max(len(k) for k, _ in rows + extra)
    text = "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
    if extra:
        text += ("\n\nNOT PRIVATE — computed on the training data outside the privacy plan; do not publish:\n"
                 + "\n".join(f"{k:<{width}}  {v}" for k, v in extra))
    return text
