"""bgm21 (Bassily, Guzmán, Menart, "Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex
Settings") end to end on built-in problems: Algorithm 1 (A_polySFW, Theorems 7–8), Algorithm 6 (A_nSFW, Theorems
10–11), Algorithm 5 (noisy Frank–Wolfe, Theorem 6), Phased-SGD (Theorem 5) and Algorithm 2 (proximally guided private
stochastic mirror descent, Theorem 16), each with its theorem's settings, its accuracy measure on the exact population
(``reference.objectives_bgm21``), the fraction of the data it reads and the ε its ledger certifies
(``reference.algorithms.bgm21_ledgers``). The library behind ``dpref run bgm21``.

Algorithms and problems (``BGM21_ALGORITHMS``, ``BGM21_PROBLEMS``; the first problem of each is its default):

* ``polysfw`` — Algorithm 1 on ``sigmoid-l1``: f = 1 − tanh(y⟨x, w⟩) on a public pool of ``POOL_SIZE`` points, W the
  ℓ_1 ball of radius 1 as the polytope of its 2d vertices; measure: the Frank–Wolfe gap (eq. (1)).
* ``nsfw`` — Algorithm 6 on ``sigmoid-l2`` (W the ℓ_2 ball) or ``sigmoid-l1.5`` (the ℓ_1.5 ball); the gap.
* ``noisy-fw`` — Algorithm 5 on ``abs-cube``: L0|⟨x, w⟩ − y|, x uniform on {±1}^d, W the ℓ_1 ball as a polytope;
  measure: the excess population risk (exact enumeration: d ≤ 14).
* ``phased-sgd`` — Phased-SGD on ``abs-sphere``: the same loss with x uniform on the unit sphere, W the ℓ_2 ball;
  the excess population risk (quadrature).
* ``prox-smd`` — Algorithm 2 (p = 2) on ``sigmoid-wc``: the ℓ_2 sigmoid problem as ρ-weakly convex, ρ = L1; measure:
  proximal near-stationarity ‖prox^β_F(w) − w‖_2 (Definition 15) at the run's β.

The reported measure is its mean over every output candidate of the run — the exact expectation over the uniformly
drawn output (Algorithm 1 line 15, Algorithm 2 line 5; Phased-SGD and Algorithm 5 have one output) — beside its value
at the drawn output and at the public start.

Settings. ``polysfw``/``nsfw``: ``theorem8_params``/``theorem11_params`` with ``schedule`` "practical" (default: the
(R, b) of one pass over the data that minimises the rates' leading terms; not in the paper) or "theory" (the theorems'
R and b, which at laptop scale read a few per cent of the data); the printed noise scales (line 3; §4.2), σ̂ with
η_{r,t−1} (``sigma_hat_eta`` "prev") or as printed ("printed", bgm21.E10). ``noisy-fw``: ``theorem6_params`` with the
certified Laplace scale (``laplace_scale`` "certified") or Talwar–Thakurta–Zhang's ("ttz15", bgm21.E28) and α
corrected or printed (``alpha``, bgm21.E3). ``phased-sgd``: ``theorem5_params`` with β corrected or printed (``beta``,
bgm21.E2). ``prox-smd``: ``theorem16_params`` (at p = 2 the printed and corrected β agree: 2ρ); the rebuilt solver
``asc_dp_gd`` with the constant step 1/(L1 + β) and T = min(m, ⌈ln m / ln(1/q)⌉) steps per round, q = 1 − (β − ρ)/(L1 +
β) its contraction factor (the optimisation error q^T·D then stays below D/m; a choice of this runner, not the
paper's). A printed variant runs as printed and its certified ε is reported against the target, whatever it is.

Records: n draws from ``Streams(data_seed).generator("dpref run", "bgm21", PROBLEM)`` (the problem's ``sample``).
The population — the pool of the sigmoid problems, w0 of the absolute-loss ones — is fixed by ``POPULATION_SEED``
(public: the published problem). Start: the problem's public start (vertex 0 of a polytope, else the centre 0).

Budget and memory. Before the records are drawn, the gradient (oracle) evaluations a run needs are counted from its
settings (polysfw/nsfw: two per record read at t ≥ 1, one at t = 0; noisy-fw: n per step; phased-sgd: one per record;
prox-smd: m per solver step) and refused beyond ``EVALUATION_BUDGET[backend]``/(d + 1) — the "fast" budget for
noisy-fw, whose oracle runs over all records in one NumPy call, and at most ``ORACLE_CALL_BUDGET`` calls for
phased-sgd, which makes one Python call per record (``BudgetExceeded``); the memory of the records is compared with the
limit first (``reference.runner.MemoryLimitError``); d beyond ``D_MAX`` (and beyond 14 for ``abs-cube``, whose
population is enumerated exactly) is refused.

Threat model (docs/design.md). Everything a run receives or writes is public except its secret seed, which drives the
noise (Laplace or Gaussian); nothing computed on the private training records leaves a run. The records are read in a
public order from the public seed; the releases are covered by the ledger, and everything else is their
post-processing or a function of public inputs. What ``bgm21_publication`` writes, and why each part is public:

* ``releases.csv`` — the released values: polysfw and noisy-fw the selected vertex of every report-noisy-min step;
  nsfw the noisy estimates ∇̃_r^t; phased-sgd the noisy phase outputs w_i; prox-smd the solver iterates of every round
  (post-processing of its noisy gradients, which the run does not keep apart).
* ``trace.csv`` — the public schedule per step: batch sizes, the offset of each batch in the public record order, step
  sizes, noise scales and the sensitivity bounds the ledger composes (functions of the settings).
* ``output.csv`` — every output candidate (post-processing of the releases) with its population measure, and which one
  the public output index drew.
* ``diagnostics.json`` — the population measure (mean over candidates, at the output, at the start): functions of the
  output and of the public population only.
* ``ledger.json`` — the certification (``privacy_report``: ε at δ, the deciding route, the worst batch, whether it
  meets the target), the settings and the config, the public seed, where the secret seed came from and what the
  guarantee assumes. Fixed by public inputs.
* ``manifest.json`` — the command (a --noise-seed value replaced by ``<secret>``), the public settings and seeds, the
  package versions, the time and the summary.

Never written or printed: the records, the NOT PRIVATE debug traces of the algorithms (noiseless estimates, the noise
draws, counts of non-finite gradients), any loss or gradient on the training records, the wall-clock time of the run
and the secret seed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time

import numpy as np

from . import runner as _runner
from .algorithms import bgm21 as _bgm21
from .algorithms import bgm21_sfw as reference_sfw
from .algorithms.bgm21_prox import ASCConfig, ProxConfig
from .algorithms.bgm21_sfw import NoisySFWConfig, PolySFWConfig, sfw_batch_sizes
from .gll import AbsoluteLoss
from .objectives_bgm21 import (CUBE_EXACT_MAX_D, abs_cube_problem, abs_sphere_problem, sigmoid_pool_problem,
                               weakly_convex_sigmoid_problem)
from .progress import progress_bar
from .rng import SEED_BOUND, Streams
from .runner import MemoryPart, _BASE, _FLOAT, _check_parts, _fmt, _jsonable, _number
from .secrets import secret_seed
from .validation import check_int, check_probability, check_real

__all__ = [
    "BGM21_ALGORITHMS",
    "BGM21_PROBLEMS",
    "PROBLEMS_OF",
    "BGM21_SCHEDULES",
    "SIGMA_HAT_ETAS",
    "LAPLACE_SCALES",
    "BETA_VARIANTS",
    "ALPHA_VARIANTS",
    "VARIANT_ALGORITHMS",
    "BGM21_DEFAULTS",
    "DEFAULT_N",
    "EPSILON_RANGE",
    "D_MAX",
    "N_MAX",
    "POOL_SIZE",
    "POPULATION_SEED",
    "EVALUATION_BUDGET",
    "ORACLE_CALL_BUDGET",
    "BudgetExceeded",
    "Bgm21Prepared",
    "Bgm21Outcome",
    "fast_bgm21_available",
    "build_bgm21_problem",
    "prepare_bgm21",
    "execute_bgm21",
    "run_bgm21",
    "bgm21_summary",
    "bgm21_ledger",
    "bgm21_publication",
    "render_bgm21",
]

BGM21_ALGORITHMS = ("polysfw", "nsfw", "noisy-fw", "phased-sgd", "prox-smd")
#: The paper's name of each algorithm.
ALGORITHM_LABELS = {
    "polysfw": "Algorithm 1 (A_polySFW: private polyhedral stochastic Frank-Wolfe), Theorems 7-8",
    "nsfw": "Algorithm 6 (A_nSFW: noisy stochastic Frank-Wolfe, l_p), Theorems 10-11",
    "noisy-fw": "Algorithm 5 (noisy Frank-Wolfe with Algorithm 3's oracle), Theorem 6",
    "phased-sgd": "Phased-SGD with Algorithm 3's oracle, Theorem 5",
    "prox-smd": "Algorithm 2 (proximally guided private stochastic mirror descent, p = 2), Theorem 16",
}
#: Problem -> (algorithm, description).
BGM21_PROBLEMS = {
    "sigmoid-l1": "1 - tanh(y<x, w>) on a public pool, x uniform in [-1, 1]^d; W = l_1 unit ball (polytope, J = 2d)",
    "sigmoid-l2": "1 - tanh(y<x, w>) on a public pool; W = l_2 unit ball",
    "sigmoid-l1.5": "1 - tanh(y<x, w>) on a public pool; W = l_1.5 unit ball",
    "abs-cube": "|<x, w> - y|, x uniform on {-1, 1}^d, y = <x, w0> + N(0, s^2); W = l_1 unit ball (polytope)",
    "abs-sphere": "|<x, w> - y|, x uniform on the unit sphere, y = <x, w0> + N(0, s^2); W = l_2 unit ball",
    "sigmoid-wc": "1 - tanh(y<x, w>) on a public pool, read as rho-weakly convex (rho = L1); W = l_2 unit ball",
}
#: The problems each algorithm takes (the first is its default).
PROBLEMS_OF = {"polysfw": ("sigmoid-l1",), "nsfw": ("sigmoid-l2", "sigmoid-l1.5"), "noisy-fw": ("abs-cube",),
               "phased-sgd": ("abs-sphere",), "prox-smd": ("sigmoid-wc",)}
BGM21_SCHEDULES = ("practical", "theory")
SIGMA_HAT_ETAS = ("prev", "printed")
LAPLACE_SCALES = ("certified", "ttz15")
BETA_VARIANTS = ("corrected", "printed")
ALPHA_VARIANTS = ("corrected", "printed")
#: Which algorithms take each variant option (the others refuse it).
VARIANT_ALGORITHMS = {"schedule": ("polysfw", "nsfw"), "sigma_hat_eta": ("nsfw",), "laplace_scale": ("noisy-fw",),
                      "beta": ("phased-sgd", "prox-smd"), "alpha": ("noisy-fw",)}

#: Defaults of ``run_bgm21`` (and ``dpref run bgm21``): n = 4096 records (noisy-fw and prox-smd: ``DEFAULT_N``) in
#: d = 10, ε = 1, δ = 1e-6. Each default run takes a few seconds at most on 2 cores (phased-sgd: one Python oracle call
#: per record; noisy-fw: every record at each of Theorem 6's T − 1 steps and the exact composition of those steps;
#: prox-smd: the certification of each of its R rounds).
BGM21_DEFAULTS = {"algorithm": "polysfw", "d": 10, "epsilon": 1.0, "delta": 1e-6, "seed": 0,
                  "data_seed": 0, "schedule": "practical", "sigma_hat_eta": "prev", "laplace_scale": "certified",
                  "beta": "corrected", "alpha": "corrected"}
#: The default n of each algorithm: smaller for noisy-fw (its T − 1 full passes grow like n^(5/3)) and prox-smd (its
#: ledger certifies each of its R ~ √n rounds).
DEFAULT_N = {"polysfw": 4096, "nsfw": 4096, "noisy-fw": 2000, "phased-sgd": 4096, "prox-smd": 2000}
#: The finite ε a run accepts.
EPSILON_RANGE = (1e-3, 1e3)
#: The largest d: the population gradient sums POOL_SIZE × d products at every candidate, and Algorithm 1's polytope
#: has 2d vertices whose diameter takes (2d)² norms; abs-cube enumerates 2^(d−1) sign vectors (d ≤ 14).
D_MAX = 200
#: The largest n: the records are held in memory, (n, d + 1) float64.
N_MAX = 10**8
#: Points in the public pool of the sigmoid problems (𝒟 is uniform over them).
POOL_SIZE = 4096
#: The public seed of the population (pool, w0).
POPULATION_SEED = 0
#: Gradient (oracle) evaluations × (d + 1) a run may need on each backend.
EVALUATION_BUDGET = {"reference": 5 * 10**7, "fast": 5 * 10**9}
#: Phased-SGD calls Algorithm 3 once per record from Python (about 0.2 ms a call): at most this many calls (some
#: 4 minutes). Algorithm 5's oracle runs over all records in one NumPy call: it has the "fast" budget.
ORACLE_CALL_BUDGET = 10**6


class BudgetExceeded(ValueError):
    """A run beyond ``EVALUATION_BUDGET[backend]``/(d + 1) evaluations, refused before the records are drawn.
    ``describe(cli=True)`` names the command-line options."""

    def __init__(self, algorithm: str, needed: int, budget: int, backend: str, detail: str):
        self.algorithm, self.needed, self.budget, self.backend, self.detail = (algorithm, int(needed), int(budget),
                                                                               backend, detail)
        super().__init__(self.describe())

    def describe(self, cli: bool = False) -> str:
        n, d = ("--n", "--d") if cli else ("n", "d")
        return (f"the {self.algorithm} run needs {self.needed} gradient evaluations ({self.detail}), beyond the "
                f"budget of {self.budget} at this d ({self.backend} backend); reduce {n} or {d}")


def fast_bgm21_available() -> bool:
    """Whether the fast twin of Algorithms 1 and 6 (``reference.fast.bgm21_sfw``) is installed."""
    return _runner.fast_twin_available("bgm21_sfw")


def _sfw_module(backend: str):
    return _runner.backend_module(backend, "bgm21_sfw", reference_sfw)


#: The fast twin of each algorithm that has one (``reference.fast.<name>``, validated draw for draw).
_TWINS = {"polysfw": "bgm21_sfw", "nsfw": "bgm21_sfw", "prox-smd": "bgm21_prox"}


def _prox_module(backend: str):
    return _runner.backend_module(backend, "bgm21_prox", _bgm21)


# ---------------------------------------------------------------------------------------------------
# Problems, settings


def build_bgm21_problem(problem: str, d: int, *, beta: float | None = None):
    """The problem object of ``reference.objectives_bgm21`` for a problem name (population from
    ``POPULATION_SEED``)."""
    if problem == "sigmoid-l1":
        return sigmoid_pool_problem(d, pool_size=POOL_SIZE, geometry="polytope", p=1.0, seed=POPULATION_SEED)
    if problem in ("sigmoid-l2", "sigmoid-l1.5"):
        p = 2.0 if problem == "sigmoid-l2" else 1.5
        return sigmoid_pool_problem(d, pool_size=POOL_SIZE, geometry="lp_ball", p=p, seed=POPULATION_SEED)
    if problem == "abs-cube":
        return abs_cube_problem(d, noise_std=0.1, seed=POPULATION_SEED)
    if problem == "abs-sphere":
        return abs_sphere_problem(d, noise_std=0.1, seed=POPULATION_SEED)
    if problem == "sigmoid-wc":
        return weakly_convex_sigmoid_problem(d, pool_size=POOL_SIZE, seed=POPULATION_SEED, beta=beta)
    raise ValueError(f"problem must be one of {', '.join(BGM21_PROBLEMS)}, got {problem!r}")


def _choice(name: str, value, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _solver_steps(batch: int, beta: float, rho: float, smoothness: float) -> int:
    """T = min(m, ⌈ln m / ln(1/q)⌉), q = 1 − (β − ρ)/(L1 + β): the constant-step solver's error q^T·D ≤ D/m."""
    q = 1.0 - (beta - rho) / (smoothness + beta)
    if batch <= 1 or q <= 0.0:
        return 1
    return max(1, min(batch, math.ceil(math.log(batch) / -math.log(q))))


def _settings(algorithm, problem_obj, n, d, epsilon, delta, variants):
    """(theorem params, algorithm config, evaluations, notes) of a run: public functions of the settings."""
    P = problem_obj
    if algorithm == "polysfw":
        params = _bgm21.theorem8_params(n, epsilon, delta, P.J, schedule=variants["schedule"])
        config = PolySFWConfig(n_rounds=params.n_rounds, batch_size=params.b, epsilon=epsilon, delta=delta,
                               lipschitz=P.L0, smoothness=P.L1)
        return params, config, _sfw_evaluations(params.b, params.n_rounds)
    if algorithm == "nsfw":
        params = _bgm21.theorem11_params(n, d, P.p, epsilon, delta, schedule=variants["schedule"])
        config = NoisySFWConfig(n_rounds=params.n_rounds, batch_size=params.b, epsilon=epsilon, delta=delta,
                                lipschitz=P.L0, smoothness=P.L1, sigma_hat_eta=variants["sigma_hat_eta"])
        return params, config, _sfw_evaluations(params.b, params.n_rounds)
    if algorithm == "noisy-fw":
        params = _bgm21.theorem6_params(n, d, P.J, P.L0, P.R_x, P.D, P.C1, epsilon, delta,
                                        noise=variants["laplace_scale"], alpha_variant=variants["alpha"])
        return params, params.config(), n * (params.steps - 1)
    if algorithm == "phased-sgd":
        params = _bgm21.theorem5_params(n, d, P.L0, P.R_x, P.D, epsilon, delta, beta_variant=variants["beta"])
        if not params.step_condition_holds:  # pragma: no cover - D = 2 <= 4: both β variants meet it
            raise ValueError("Theorem 5's step size fails the step condition eta/4 <= 2/beta_s at these settings")
        return params, params.config(), sum(params.phase_sizes)
    params = _bgm21.theorem16_params(n, d, 2.0, P.rho, P.L0, P.D, epsilon, delta, beta_variant=variants["beta"])
    steps = _solver_steps(params.batch_size, params.beta, P.rho, P.L1)
    solver = ASCConfig(epsilon=epsilon, delta=delta, lipschitz=P.L0, n_steps=steps, step="constant",
                       smoothness=P.L1)
    config = ProxConfig(n_rounds=params.n_rounds, weak_convexity=P.rho, solver=solver, beta=params.beta,
                        batch_size=params.batch_size)
    return params, config, params.n_rounds * steps * params.batch_size


_BUDGET_DETAIL = {"polysfw": "up to two per record read", "nsfw": "up to two per record read",
                  "noisy-fw": "n oracle rows per step, Theorem 6's T - 1 steps (T grows like n^(2/3))",
                  "phased-sgd": "one oracle call per record", "prox-smd": "m per solver step, T steps per round"}


def _sfw_evaluations(b: int, rounds: int) -> int:
    sizes = sfw_batch_sizes(b, rounds)
    return sum(s[0] + 2 * sum(s[1:]) for s in sizes)


@dataclasses.dataclass(frozen=True)
class Bgm21Prepared:
    """Everything decided before a run starts (``prepare_bgm21``): settings (public, plain data), the problem
    (public population), the theorem's params and the algorithm's config (public), the evaluations counted and the
    secret seed (never written)."""

    settings: dict
    problem: object
    params: object
    config: object
    evaluations: int
    secret: object


def _memory_parts(n: int, d: int, algorithm: str) -> list:
    parts = [MemoryPart("records", n * (d + 2) * _FLOAT, ("n", "d")),
             MemoryPart("public order and batch indices", 2 * n * _FLOAT, ("n",)),
             MemoryPart("population pool", POOL_SIZE * (d + 1) * _FLOAT * 3, ("d",)),
             MemoryPart("fixed costs", _BASE, ())]
    if algorithm == "noisy-fw":
        parts.append(MemoryPart("oracle rows of a full-batch step", 6 * n * (d + 1) * _FLOAT, ("n", "d"), True))
    return sorted(parts, key=lambda part: -part.bytes)


def prepare_bgm21(algorithm: str = "polysfw", *, problem: str | None = None, n: int | None = None, d: int = 10,
                  epsilon: float = 1.0, delta: float = 1e-6, schedule: str | None = None,
                  sigma_hat_eta: str | None = None, laplace_scale: str | None = None, beta: str | None = None,
                  alpha: str | None = None, seed: int = 0, data_seed: int = 0, noise_seed=None,
                  backend: str | None = None, memory_limit: int | None = None) -> Bgm21Prepared:
    """Every check of ``run_bgm21`` (same arguments) and every decision made before the run: the problem, the
    theorem's settings and the config, the evaluation budget and the memory. Draws no record. ValueError/TypeError
    name the parameter; ``BudgetExceeded`` and ``reference.runner.MemoryLimitError`` have ``describe(cli)``.

    n None: ``DEFAULT_N[algorithm]``. A variant left None takes its default (``BGM21_DEFAULTS``); given for an algorithm it does not apply to
    (``VARIANT_ALGORITHMS``), it is refused."""
    _choice("algorithm", algorithm, BGM21_ALGORITHMS)
    problem = PROBLEMS_OF[algorithm][0] if problem is None else problem
    _choice("problem", problem, BGM21_PROBLEMS)
    if problem not in PROBLEMS_OF[algorithm]:
        raise ValueError(f"problem {problem!r} is not a problem of {algorithm}; it takes "
                         f"{', '.join(PROBLEMS_OF[algorithm])}")
    if n is None:
        n = DEFAULT_N[algorithm]
    n = check_int("n", n, minimum=2, maximum=N_MAX)
    d = check_int("d", d, minimum=2, maximum=D_MAX)
    if problem == "abs-cube" and d > CUBE_EXACT_MAX_D:
        raise ValueError(f"d must be <= {CUBE_EXACT_MAX_D} for abs-cube, got {d}: its population risk is an exact "
                         f"enumeration of the 2^d sign vectors")
    epsilon = float(check_real("epsilon", epsilon, positive=True))
    low, high = EPSILON_RANGE
    if not low <= epsilon <= high:
        raise ValueError(f"epsilon must lie in [{low:g}, {high:g}], got {epsilon!r}")
    delta = float(check_probability("delta", delta))
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    data_seed = check_int("data_seed", data_seed, minimum=0, maximum=SEED_BOUND - 1)
    choices = {"schedule": BGM21_SCHEDULES, "sigma_hat_eta": SIGMA_HAT_ETAS, "laplace_scale": LAPLACE_SCALES,
               "beta": BETA_VARIANTS, "alpha": ALPHA_VARIANTS}
    given = {"schedule": schedule, "sigma_hat_eta": sigma_hat_eta, "laplace_scale": laplace_scale, "beta": beta,
             "alpha": alpha}
    variants = {}
    for name, value in given.items():
        if value is not None and algorithm not in VARIANT_ALGORITHMS[name]:
            raise ValueError(f"{name} does not apply to {algorithm} (it applies to "
                             f"{', '.join(VARIANT_ALGORITHMS[name])})")
        if algorithm in VARIANT_ALGORITHMS[name]:
            variants[name] = _choice(name, BGM21_DEFAULTS[name] if value is None else value, choices[name])
    secret = secret_seed(noise_seed, public_seeds=(seed, data_seed), name="noise_seed")
    twin = _TWINS.get(algorithm)
    if backend is None:
        backend = "fast" if twin is not None and _runner.fast_twin_available(twin) else "reference"
    _choice("backend", backend, _runner.BACKENDS)
    if backend == "fast":
        if twin is None:
            raise ValueError(f"backend 'fast' exists for polysfw, nsfw (reference.fast.bgm21_sfw) and prox-smd "
                             f"(reference.fast.bgm21_prox) only; {algorithm} runs on the reference backend")
        _runner.backend_module("fast", twin, None)
    if memory_limit is not None:
        memory_limit = check_int("memory_limit", memory_limit, minimum=1)
    problem_obj = build_bgm21_problem(problem, d)
    _check_parts(_memory_parts(n, d, algorithm), {"n": n, "d": d}, memory_limit)
    # the evaluation budget, first from an upper bound (the settings of huge runs are slow to compute), then exactly
    vectorised = algorithm == "noisy-fw"  # Algorithm 3's oracle runs over all n records in one NumPy call
    budget = EVALUATION_BUDGET["fast" if vectorised else backend] // (d + 1)
    if algorithm == "phased-sgd":  # one Python call of Algorithm 3 per record, whatever d
        budget = min(budget, ORACLE_CALL_BUDGET)
    if algorithm == "noisy-fw":
        P = problem_obj  # Theorem 6's T (milliseconds even at n = 10^8)
        bound = n * (_bgm21.theorem6_params(n, d, P.J, P.L0, P.R_x, P.D, P.C1, epsilon, delta).steps - 1)
    else:  # Algorithm 2's count needs Theorem 16's R (cheap): checked exactly below
        bound = {"polysfw": 2 * n, "nsfw": 2 * n, "phased-sgd": n, "prox-smd": 0}[algorithm]
    if bound > budget:
        raise BudgetExceeded(algorithm, bound, budget, backend, _BUDGET_DETAIL[algorithm])
    all_variants = {name: variants.get(name) for name in given}
    params, config, evaluations = _settings(algorithm, problem_obj, n, d, epsilon, delta, all_variants)
    if evaluations > budget:
        raise BudgetExceeded(algorithm, evaluations, budget, backend, _BUDGET_DETAIL[algorithm])
    if algorithm == "prox-smd":  # the measure's β is the run's
        problem_obj = build_bgm21_problem(problem, d, beta=params.beta)
    settings = {"algorithm": algorithm, "problem": problem, "n": n, "d": d, "epsilon": epsilon, "delta": delta,
                **variants, "seed": seed, "data_seed": data_seed, "population_seed": POPULATION_SEED,
                "pool_size": POOL_SIZE if problem.startswith("sigmoid") else None, "backend": backend}
    return Bgm21Prepared(settings, problem_obj, params, config, int(evaluations), secret)


# ---------------------------------------------------------------------------------------------------
# Running


class _Progress:
    """A progress bar over the gradient (oracle) evaluations the settings count, shown once the run has taken
    ``reference.runner.PROGRESS_DELAY`` seconds. Cosmetic only: its counts decide nothing."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled, self.done, self.shown = int(total), bool(enabled), 0, 0
        self.bar, self.start = None, time.perf_counter()

    def tick(self, count: int) -> None:
        self.done += int(count)
        if not self.enabled:
            return
        if self.bar is None:
            if time.perf_counter() - self.start < _runner.PROGRESS_DELAY:
                return
            self.bar = progress_bar(self.total, "dpref run bgm21", "evaluation", enabled=True)
        done = min(self.done, self.total)
        if done - self.shown >= 1000 or done == self.total:
            self.bar.update(done - self.shown)
            self.shown = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.update(min(self.done, self.total) - self.shown)
            self.bar.close()


class _Gradient:
    """The problem's ``gradient(w, z)`` with a progress tick, and its batch form ``gradients(w, rows)`` (found by the
    fast twin through the bound method's owner)."""

    def __init__(self, problem, tracker: _Progress | None):
        self.problem, self.tracker = problem, tracker

    def gradient(self, w, z):
        if self.tracker is not None:
            self.tracker.tick(1)
        return self.problem.gradient(w, z)

    def gradients(self, w, rows):
        if self.tracker is not None:
            self.tracker.tick(rows.shape[0])
        return self.problem.gradients(w, rows)


class _CountedAbsoluteLoss(AbsoluteLoss):
    """L0|u − y| with a progress tick per oracle row (Algorithm 3 prepares its margins once per call)."""

    def __init__(self, lipschitz, tracker: _Progress | None):
        super().__init__(lipschitz)
        self._tracker = tracker

    def _prepare(self, u, y):
        out = super()._prepare(u, y)
        if self._tracker is not None:
            self._tracker.tick(int(np.size(out[0])))
        return out


@dataclasses.dataclass(frozen=True)
class Bgm21Outcome:
    """A bgm21 run and what it was. result: the algorithm's result (its trace and iterates public, its ``debug`` NOT
    PRIVATE). problem: the public population. settings, params, config: public. report: the ledger's
    ``LedgerReport`` (public). candidates: the output candidates (n_candidates, d); measures: the population measure
    at each; output_position: which candidate is the output; start_measure: the measure at the public start."""

    result: object
    problem: object
    settings: dict
    params: object
    config: object
    report: object
    candidates: np.ndarray
    measures: np.ndarray
    output_position: int
    start_measure: float


def _candidates(algorithm: str, result) -> tuple[np.ndarray, int]:
    if algorithm in ("polysfw", "nsfw", "prox-smd"):
        return np.asarray(result.iterates, dtype=np.float64), int(result.trace.output_index)
    return np.asarray(result.output, dtype=np.float64)[None, :], 0


def execute_bgm21(prepared: Bgm21Prepared, *, progress: bool = False) -> Bgm21Outcome:
    """Draw the records and run a prepared run (``prepare_bgm21``); its certification and population measures."""
    if not isinstance(prepared, Bgm21Prepared):
        raise TypeError(f"prepared must be a Bgm21Prepared (from prepare_bgm21), got {type(prepared).__name__}")
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be a bool, got {type(progress).__name__} {progress!r}")
    s, P = prepared.settings, prepared.problem
    algorithm, seed = s["algorithm"], s["seed"]
    rng = Streams(s["data_seed"]).generator("dpref run", "bgm21", s["problem"])
    tracker = _Progress(prepared.evaluations, bool(progress)) if progress else None
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if algorithm in ("polysfw", "nsfw", "prox-smd"):
                data = P.sample(s["n"], rng)
                gradient = _Gradient(P, tracker).gradient
                if algorithm == "polysfw":
                    result = _sfw_module(s["backend"]).poly_sfw(gradient, data, P.W, prepared.config, seed=seed,
                                                                noise_seed=prepared.secret)
                elif algorithm == "nsfw":
                    result = _sfw_module(s["backend"]).noisy_sfw(gradient, data, P.W, prepared.config, seed=seed,
                                                                 noise_seed=prepared.secret)
                else:
                    result = _prox_module(s["backend"]).prox_guided_psmd(gradient, data, P.W, prepared.config,
                                                                         seed=seed, noise_seed=prepared.secret)
            else:
                X, y = P.sample(s["n"], rng)
                loss = _CountedAbsoluteLoss(P.L0, tracker)
                if algorithm == "phased-sgd":
                    result = _bgm21.phased_sgd(X, y, loss, P.W, P.start, prepared.config, seed=seed,
                                               noise_seed=prepared.secret)
                else:
                    result = _bgm21.noisy_frank_wolfe(X, y, loss, P.W, prepared.config, noise_seed=prepared.secret,
                                                      public_seeds=(seed, s["data_seed"]))
    finally:
        if tracker is not None:
            tracker.close()
    report = _bgm21.privacy_report(result, s["epsilon"], s["delta"])
    candidates, position = _candidates(algorithm, result)
    measures = np.array([P.accuracy(w) for w in candidates], dtype=np.float64)
    if not np.all(np.isfinite(measures)):  # pragma: no cover - the population measures are finite on W
        raise ArithmeticError("a population measure is not finite")
    return Bgm21Outcome(result, P, dict(s), prepared.params, prepared.config, report, candidates, measures, position,
                        float(P.accuracy(P.start)))


def run_bgm21(algorithm: str = "polysfw", *, progress: bool = False, **kwargs) -> Bgm21Outcome:
    """``prepare_bgm21`` then ``execute_bgm21`` (same arguments)."""
    return execute_bgm21(prepare_bgm21(algorithm, **kwargs), progress=progress)


# ---------------------------------------------------------------------------------------------------
# Records: summary, ledger, files


def _plain(value):
    if isinstance(value, (np.generic,)):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "__float__") and not isinstance(value, (int, float, bool, str)):
        return float(value)
    return value


def _data_use(algorithm: str, result) -> dict:
    if algorithm == "noisy-fw":
        t = result.trace
        return {"records_used": int(t.records_available), "records_available": int(t.records_available),
                "data_fraction": float(t.fraction_used), "passes": int(t.passes)}
    if algorithm == "phased-sgd":
        t = result.trace
        return {"records_used": int(t.records_used), "records_available": int(t.records_available),
                "data_fraction": float(t.fraction_used), "passes": 1}
    t = result.trace
    return {"records_used": int(t.records_used), "records_available": int(t.records_available),
            "data_fraction": float(t.records_used / t.records_available), "passes": 1}


def _run_settings(outcome: Bgm21Outcome) -> dict:
    """The algorithm's settings that the table and ledger show (public)."""
    a, p, c = outcome.settings["algorithm"], outcome.params, outcome.config
    if a in ("polysfw", "nsfw"):
        out = {"rounds_R": c.n_rounds, "batch_b": c.batch_size, "steps": 2**c.n_rounds - 1,
               "theory_R": p.n_rounds_real, "noise_scales": "printed (line 3 / section 4.2)"}
        if a == "polysfw":
            out["laplace_scales"] = [float(s) for s in np.unique(outcome.result.trace.lap_scales)]
        return out
    if a == "noisy-fw":
        return {"steps_T": p.steps, "beta_smoothing": p.beta_smooth, "alpha": p.alpha, "laplace_scale": p.lap_scale,
                "laplace_scale_certified": p.lap_scale_certified, "laplace_scale_ttz15": p.lap_scale_ttz15,
                "epsilon_per_step": outcome.result.trace.epsilon_per_step}
    if a == "phased-sgd":
        return {"phases": len(p.phase_sizes), "beta_smoothing": p.beta_smooth, "alpha": p.alpha,
                "step_size": p.step_size, "first_phase_sigma": p.phase_sigmas[0], "last_phase_sigma":
                p.phase_sigmas[-1]}
    solver = c.solver
    trace = outcome.result.trace.solver_traces[0]
    return {"rounds_R": c.n_rounds, "batch_m": p.batch_size, "beta": p.beta, "rho": c.weak_convexity,
            "solver_steps_T": solver.n_steps, "solver_noise_std": trace.noise_std, "theory_R": p.n_rounds_real}


def bgm21_summary(outcome: Bgm21Outcome) -> dict:
    """The printed record of a run: settings, the problem's constants, the run's settings, the data used, the
    population measure (mean over candidates, at the output, at the start) and the certification. Plain JSON data;
    nothing computed on the training records."""
    s, P, report, result = outcome.settings, outcome.problem, outcome.report, outcome.result
    record = dict(s)
    record["algorithm_label"] = ALGORITHM_LABELS[s["algorithm"]]
    record["problem_label"] = BGM21_PROBLEMS[s["problem"]]
    record["constants"] = {"L0": P.L0, "L1": getattr(P, "L1", None), "R_x": P.R_x, "D": P.D,
                           "J": getattr(P, "J", None)}
    record["run_settings"] = {k: _plain(v) for k, v in _run_settings(outcome).items()}
    record.update(_data_use(s["algorithm"], result))
    record["measure"] = P.measure
    record["candidates"] = int(outcome.candidates.shape[0])
    record["measure_mean"] = float(np.mean(outcome.measures))
    record["measure_output"] = float(outcome.measures[outcome.output_position])
    record["measure_start"] = outcome.start_measure
    record["output_position"] = outcome.output_position
    if s["algorithm"] == "prox-smd":
        record["measure_mean_normalised"] = P.normalised(record["measure_mean"])
    record["epsilon_spent"] = float(report.epsilon)
    record["route"] = report.route
    record["meets_target"] = bool(report.meets_target)
    record["worst_batch"] = [_plain(part) for part in report.worst_batch] if isinstance(report.worst_batch, tuple) \
        else _plain(report.worst_batch)
    record["composition"] = report.composition
    record["secret_seed_source"] = result.secret_seed_source
    record["guarantee_condition"] = result.guarantee_condition
    record["output"] = None
    record["diagnostics"] = ("population only: the measure of every output candidate on the exact population law "
                             "(public), never the training records")
    return _jsonable(record)


def bgm21_ledger(outcome: Bgm21Outcome) -> dict:
    """The ledger (all public): the certification, the settings and config, the public seed, where the secret seed
    came from and what the guarantee assumes."""
    report, result, s = outcome.report, outcome.result, outcome.settings
    config = {k: _plain(v) for k, v in dataclasses.asdict(outcome.config).items() if not isinstance(v, dict)}
    if s["algorithm"] == "prox-smd":
        config["solver"] = {k: _plain(v) for k, v in dataclasses.asdict(outcome.config.solver).items()}
    params = {k: _plain(v) for k, v in dataclasses.asdict(outcome.params).items()}
    per_batch = sorted(((str(b), float(c.epsilon), c.route) for b, c in report.per_batch.items()),
                       key=lambda item: -item[1])
    return _jsonable({"algorithm": s["algorithm"], "epsilon_target": s["epsilon"], "delta": s["delta"],
                      "epsilon_spent": float(report.epsilon), "route": report.route,
                      "meets_target": bool(report.meets_target), "worst_batch": str(report.worst_batch),
                      "composition": report.composition, "batches": len(per_batch),
                      "largest_batch_epsilons": [{"batch": b, "epsilon": e, "route": r} for b, e, r in per_batch[:10]],
                      "settings": dict(s), "theorem_params": params, "config": config, "seed": s["seed"],
                      "secret_seed_source": result.secret_seed_source,
                      "guarantee_condition": result.guarantee_condition})


def _csv(header, rows) -> str:
    return "\n".join([",".join(header), *(",".join(row) for row in rows)]) + "\n"


def _trace_csv(outcome: Bgm21Outcome) -> str:
    a, result = outcome.settings["algorithm"], outcome.result
    t = result.trace
    if a in ("polysfw", "nsfw"):
        offsets = np.concatenate([[0], np.cumsum(np.asarray(t.batch_sizes, dtype=np.int64))[:-1]])
        header = ["step", "r", "t", "batch_size", "record_offset", "eta", "laplace_scale", "score_sensitivity",
                  "affected_steps", "sigma", "sigma_hat", "gradient_sensitivity", "difference_sensitivity", "mu"]
        rows = ([str(i), str(int(t.rounds[i])), str(int(t.steps[i])), str(int(t.batch_sizes[i])), str(int(offsets[i])),
                 _number(t.step_sizes[i]), _number(t.lap_scales[i]), _number(t.score_sensitivity[i]),
                 str(int(t.affected_steps[i])), _number(t.sigma[i]), _number(t.sigma_hat[i]),
                 _number(t.gradient_sensitivity[i]), _number(t.difference_sensitivity[i]), _number(t.mu[i])]
                for i in range(len(t.rounds)))
        return _csv(header, rows)
    if a == "phased-sgd":
        offsets = np.concatenate([[0], np.cumsum(np.asarray(t.phase_sizes, dtype=np.int64))[:-1]])
        return _csv(["phase", "batch_size", "record_offset", "eta", "sigma", "sensitivity", "sensitivity_bound"],
                    ([str(i + 1), str(int(t.phase_sizes[i])), str(int(offsets[i])), _number(t.phase_step_sizes[i]),
                      _number(t.noise_stds[i]), _number(t.sensitivities[i]), _number(t.sensitivity_bounds[i])]
                     for i in range(len(t.phase_sizes))))
    if a == "noisy-fw":
        return _csv(["step", "records", "laplace_scale", "score_sensitivity", "epsilon_step"],
                    ([str(i + 1), str(int(t.records_used_per_step)), _number(t.lap_scale),
                      _number(t.score_sensitivity), _number(t.epsilon_per_step)] for i in range(len(t.selected))))
    rows = []
    for r, solver in enumerate(t.solver_traces, start=1):
        rows.append([str(r), str(int(solver.batch_size)), str((r - 1) * int(solver.batch_size)),
                     str(int(solver.n_steps)), _number(solver.noise_std), _number(solver.step_sensitivity),
                     _number(solver.step_sizes[0]), _number(solver.beta), _number(solver.mu)])
    return _csv(["round", "batch_size", "record_offset", "solver_steps", "sigma", "step_sensitivity", "eta", "beta",
                 "mu"], rows)


def _releases_csv(outcome: Bgm21Outcome) -> str:
    a, result, d = outcome.settings["algorithm"], outcome.result, outcome.problem.d
    t = result.trace
    coords = [f"x_{j}" for j in range(d)]
    if a == "polysfw":
        return _csv(["step", "r", "t", "selected_vertex"],
                    ([str(i), str(int(t.rounds[i])), str(int(t.steps[i])), str(int(t.selected[i]))]
                     for i in range(len(t.rounds))))
    if a == "nsfw":
        est = np.asarray(t.noisy_estimates, dtype=np.float64)
        return _csv(["step", "r", "t", *(f"estimate_{j}" for j in range(d))],
                    ([str(i), str(int(t.rounds[i])), str(int(t.steps[i])), *(_number(v) for v in est[i])]
                     for i in range(len(t.rounds))))
    if a == "noisy-fw":
        return _csv(["step", "selected_vertex"], ([str(i + 1), str(int(j))] for i, j in enumerate(t.selected)))
    if a == "phased-sgd":
        out = np.asarray(t.phase_outputs, dtype=np.float64)
        return _csv(["phase", *coords], ([str(i + 1), *(_number(v) for v in out[i])] for i in range(out.shape[0])))
    rows = []
    for r, path in enumerate(result.solver_iterates, start=1):
        path = np.asarray(path, dtype=np.float64)
        rows += [[str(r), str(k), *(_number(v) for v in path[k])] for k in range(path.shape[0])]
    return _csv(["round", "solver_iterate", *coords], rows)


def bgm21_publication(outcome: Bgm21Outcome, *, command, include_nonprivate: bool = False) -> dict[str, str]:
    """File name -> text of ``dpref run bgm21 --output DIR`` (module doc): releases.csv, trace.csv, output.csv,
    diagnostics.json, ledger.json, manifest.json. Numbers are written as their shortest round-trip repr.
    include_nonprivate must be False: nothing NOT PRIVATE exists to write."""
    if include_nonprivate:
        raise ValueError("bgm21 runs publish nothing computed on the training records: include_nonprivate does not "
                         "apply")
    d = outcome.problem.d
    files = {"releases.csv": _releases_csv(outcome), "trace.csv": _trace_csv(outcome)}
    files["output.csv"] = _csv(
        ["candidate", "is_output", *(f"x_{j}" for j in range(d)), "population_measure"],
        ([str(i), str(int(i == outcome.output_position)), *(_number(v) for v in outcome.candidates[i]),
          _number(outcome.measures[i])] for i in range(outcome.candidates.shape[0])))
    summary = bgm21_summary(outcome)
    diagnostics = {"measure": summary["measure"], "diagnostics": summary["diagnostics"],
                   "measure_mean": summary["measure_mean"], "measure_output": summary["measure_output"],
                   "measure_start": summary["measure_start"], "candidates": summary["candidates"]}
    files["diagnostics.json"] = json.dumps(_jsonable(diagnostics), indent=2) + "\n"
    files["ledger.json"] = json.dumps(bgm21_ledger(outcome), indent=2) + "\n"
    s = outcome.settings
    seeds = {"seed": s["seed"], "data_seed": s["data_seed"], "data_stream": ["dpref run", "bgm21", s["problem"]],
             "population_seed": s["population_seed"],
             "algorithm_streams": "(\"bgm21\", ALGORITHM, \"order\"/\"output\") under seed; (\"bgm21\", ALGORITHM, "
                                  "\"noise\", ...) under the secret seed"}
    return _runner.with_manifest(files, command=command, settings=dict(s), seeds=seeds, summary=summary)


# ---------------------------------------------------------------------------------------------------
# The table


def render_bgm21(record: dict) -> str:
    """The record of ``bgm21_summary`` as aligned text."""
    c = record["constants"]
    variants = ", ".join(f"{k.replace('_', '-')} {record[k]}" for k in VARIANT_ALGORITHMS if record.get(k))
    settings = ", ".join(f"{k}={_fmt(v) if not isinstance(v, list) else '/'.join(_fmt(x) for x in v)}"
                         for k, v in record["run_settings"].items())
    verdict = "meets the target" if record["meets_target"] else "EXCEEDS the target: NOT private at the target"
    rows = [
        ("algorithm", f"bgm21 {record['algorithm']}: {record['algorithm_label']}, {record['backend']} backend"),
        ("problem", f"{record['problem']}: {record['problem_label']}; d={record['d']}, n={record['n']}"),
        ("constants", ", ".join(f"{k}={_fmt(v)}" for k, v in c.items() if v is not None)),
        ("settings", (variants + "; " if variants else "") + settings),
        ("data used", f"{record['records_used']} of {record['records_available']} records "
                      f"({100 * record['data_fraction']:.3g} %)"
                      + (f", every record in each of {record['passes']} steps" if record["passes"] > 1 else
                         ", one pass")),
        ("privacy", f"({_fmt(record['epsilon_spent'])}, {_fmt(record['delta'])})-DP certified by the ledger (route "
                    f"{record['route']}, worst batch {record['worst_batch']}); target epsilon "
                    f"{_fmt(record['epsilon'])}: {verdict}"),
        ("secret seed", f"{record['secret_seed_source']}: {record['guarantee_condition']}"),
        ("measure", f"{record['measure']}, on the exact population (public; never the training records)"),
        ("  E over output", f"{_fmt(record['measure_mean'])}  (mean over the {record['candidates']} candidates)"
         + (f"; normalised max(1, beta D) x mean = {_fmt(record['measure_mean_normalised'])}"
            if "measure_mean_normalised" in record else "")),
        ("  at the output", _fmt(record["measure_output"])),
        ("  at the start", _fmt(record["measure_start"])),
    ]
    if record.get("output"):
        rows.append(("files", record["output"]))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
