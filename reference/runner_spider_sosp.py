"""spider_sosp (Liu, Talwar, "Adaptive Batch Size for Privately Finding Second-Order Stationary Points") end to end on
built-in problems: Algorithm 2 ("Stochastic Spider") with the oracles of Algorithm 3, the hyper-parameters of Lemmas
3.3, 3.8, 3.10 and Proposition 3.4 (``reference.algorithms.spider_sosp_theory``), the tree noise σ of a selectable rule
with its exact Gaussian-DP plan (``reference.algorithms.spider_sosp_privacy``), public diagnostics and what such a run
may publish. The library behind ``dpref run spider_sosp``; the companion of ``reference.runner_nsnc_improved``.

Problems (``SPIDER_PROBLEMS``; ``reference.objectives_sosp``), each a law of records with a closed-form population:

* ``cosine``: f(x; z) = Σ_j c_j s_j cos(x_j − z_j), c = (1, …, 1), s = (+1, −1, …, −1), z ~ N(0, τ² I_d), τ = 0.5
  (``COSINE_SPREAD``): G = √d, M = ρ = 1; the population F(x) = φ Σ_j c_j s_j cos x_j (φ = e^{−τ²/2}) has an exact
  strict saddle at x = 0 (λ_min = −φ) and global minima where x_1 = π, x_j = 0 (j ≥ 2). The problem of the paper's
  saddle-escape question (the paper has no experiments; this is dpref's).
* ``cosine-det``: the same with τ = 0: every record is 0, every gradient exact. Without the perturbation of line 11 a
  run started at the saddle never moves (the ablation that shows what the perturbation is for).
* ``quadratic``: f(x; z) = ½ xᵀAx − ⟨z, x⟩, A = diag(1, 1/2, …, 1/d), z uniform on the sphere of radius
  r = ``QUADRATIC_NOISE_RADIUS``: strongly convex, no saddle. M = 1; G = M·R + r on the ball ‖x‖ ≤ R =
  ``QUADRATIC_DOMAIN_RADIUS`` only, and ρ = ``QUADRATIC_HESSIAN_LIPSCHITZ`` (the Hessian is constant: every ρ > 0
  satisfies Assumption 3.1).

Every record gradient is clipped to G (O1) and every record difference to ‖g̃_{t−1}‖ = M‖x_t − x_{t−1}‖ (O2: the
released norm b_t is sized for)
(``SpiderConfig.enforce_constants``): no-ops for a record that satisfies Assumption 3.1, so they change nothing for the
cosine problems, and they make the sensitivities of Lemma 3.7 hold for the quadratic outside its ball too.

Records: n draws from ``Streams(data_seed).generator("dpref run", "spider_sosp", PROBLEM)``. Start x_0 (public):
``saddle`` (cosine problems, default) x_0 = 0; ``random`` (default for the quadratic) a draw from
``Streams(seed).generator("dpref run", "spider_sosp", "start")``: uniform in [−π, π]^d (cosine), uniform on the sphere
of radius R/2 (quadratic). B = F(x_0) − inf F from the population (public).

Settings. ``spider_settings(n, d, G, M, ρ, B, ε, δ, mode=...)`` (``mode`` "unit": polylogs set to 1, γ = γ_rms, for
experiments; "theory": the explicit high-probability constants, vacuous at laptop scale), T = n, tree Σ = T leaves.
σ by ``sigma_rule`` (``spider_sosp_plan``): "gdp_exact" (default; exact Gaussian-DP calibration with the exact node
count), "upper_bound", or a printed rule ("thm2.2", "lemma3.7", "lemma3.8", "thm3.11" — the last has no ε or δ and is
refused unless ``allow_nonprivate``; spider_sosp.E3); ``adjacency`` "replace_one" (default) or "zero_out" (the paper's
constants, spider_sosp.E1); ``tree_scope`` "global" (one tree, spider_sosp.E5) or "segment". ε = inf is the non-private
limit: σ = 0, no plan, and the privacy options do not apply. The run's σ is the plan's rounded up to float64, its α
rounded down and κ up, its O1 batch b the plan's: so the run's per-leaf sensitivity never exceeds the plan's sbar,
which ``prepare_spider_sosp`` checks in exact rational arithmetic before anything runs.

Budget and memory. A run reads each record at most once, and a step reads at least one: it takes at most n steps and
at most 2n gradient evaluations (an O2 record is evaluated at two points). Before the records are drawn those bounds
are compared with ``STEP_BUDGET[backend]`` and ``EVALUATION_BUDGET[backend]/(d + 1)`` (``BudgetExceeded``: the counts,
the budget, the largest --samples that fits) and the memory of the records, of a path of n steps and of the files
(``spider_memory_parts``) with the memory available (``reference.runner.MemoryLimitError``). Records too few for one O1
batch are refused with a number that suffices (``SamplesNeeded``).

Threat model (docs/design.md). Everything a run receives or writes is public except its secret seed, which drives the
tree noise and the saddle perturbations g_t; nothing computed on the private training records leaves a run unless the
privacy plan accounts for it. Neighbours replace (or zero out) one record, so n is public. The plan covers the
released g̃_t; the iterates x_{t+1} = x_t − g̃_t/M and every branch of the algorithm — step kinds, batch sizes, drift,
tree leaves, perturbation steps, records used, halting — are functions of the releases and public inputs
(``reference.algorithms.spider_sosp.replay_schedule`` recomputes them without data or secret seed). What
``spider_publication`` writes, and why each part is public:

* ``releases.csv`` — t, release_0..release_{d−1}: the released g̃_t (the noise and the perturbation included).
* ``trace.csv`` — t, kind, batch_size, record_offset, drift, leaf, perturbed: the public schedule (post-processing of
  the releases; record_offset is the position in the public record order where the step's batch starts).
* ``output.csv`` — t, x_0..x_{d−1}, population_objective, population_sosp_level: the output set x_1..x_T (Algorithm 2
  line 17) and, for each iterate, F and the SOSP level on the POPULATION (closed form, public): functions of the output.
* ``diagnostics.json`` — population-only diagnostics (``SPIDER_DIAGNOSTICS``): at x_0, at the last iterate and at the
  iterate of smallest level, F, ‖∇F‖, λ_min(∇²F) and ``reference.stationarity.sosp_level``; the first iterate that is
  an α-SOSP; the perturbations, those at a saddle and the escapes. Functions of the output and the public population.
* ``ledger.json`` — the ``SpiderPrivacyPlan`` (rule and label, private flag, μ, exact ε at δ, δ at the target ε, σ,
  sbar, node count), the settings and the run's ``SpiderConfig``, the public seed, where the secret seed came from and
  what the guarantee assumes. Fixed by public inputs.
* ``manifest.json`` — the command (any --noise-seed value replaced by ``<secret>``), the public settings, seeds and
  stream keys, package versions, the time, and the summary.

Not published unless asked for (``include_nonprivate``; ``nonprivate_diagnostics.json``, marked NOT PRIVATE): the
SOSP level on the TRAINING records (the empirical loss) at x_0, at the last and at the best iterate, the largest
error ‖∇_t − ∇F(x_t)‖ of the noiseless SPIDER estimates, the clip and replacement counts and the wall-clock time.
Never written, even on request: the noiseless estimates ∇_t, the tree noise and the perturbation vectors g_t
(``NonPrivateDebugTrace``: computed on the data or from the secret seed), and the secret seed itself.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from fractions import Fraction

import mpmath
import numpy as np

from . import runner as _runner
from .algorithms import spider_sosp as reference_spider
from .algorithms.spider_sosp import ADJACENCIES, TREE_SCOPES, SpiderConfig
from .algorithms.spider_sosp_privacy import (RULE_LABELS, SPIDER_SOSP_RULES, SpiderPrivacyPlan, spider_sosp_parameters,
                                             spider_sosp_plan)
from .algorithms.spider_sosp_theory import MODES, SpiderSettings, escape_decrease, spider_settings
from .objectives_sosp import CosineFamily, QuadraticFamily
from .progress import progress_bar
from .rng import SEED_BOUND, Streams, sample_sphere
from .runner import (
    BACKENDS,
    MemoryPart,
    _BASE,
    _FLOAT,
    _OBJECT,
    _check_choice,
    _check_parts,
    _fmt,
    _jsonable,
    _name_setting,
    _number,
    _param_name,
)
from .secrets import secret_seed
from .stationarity import sosp_level
from .validation import check_int, check_probability, check_real

__all__ = [
    "SPIDER_PROBLEMS",
    "SPIDER_MODES",
    "SPIDER_SIGMA_RULES",
    "SPIDER_ADJACENCIES",
    "SPIDER_TREE_SCOPES",
    "SPIDER_STARTS",
    "SPIDER_DEFAULTS",
    "SPIDER_DIAGNOSTICS",
    "NOT_PRIVATE_SPIDER",
    "COSINE_SPREAD",
    "EPSILON_RANGE",
    "D_MAX",
    "QUADRATIC_NOISE_RADIUS",
    "QUADRATIC_DOMAIN_RADIUS",
    "QUADRATIC_HESSIAN_LIPSCHITZ",
    "EVALUATION_BUDGET",
    "STEP_BUDGET",
    "SamplesNeeded",
    "BudgetExceeded",
    "SpiderProblem",
    "SpiderPrepared",
    "SpiderOutcome",
    "build_spider_problem",
    "spider_memory_parts",
    "check_spider_memory",
    "evaluation_budget",
    "fast_spider_available",
    "prepare_spider_sosp",
    "execute_spider_sosp",
    "run_spider_sosp",
    "population_levels",
    "spider_summary",
    "spider_nonprivate",
    "spider_ledger",
    "spider_publication",
    "render_spider",
]

SPIDER_PROBLEMS = ("cosine", "cosine-det", "quadratic")
#: "unit" (polylogs set to 1, γ = γ_rms: experiments) or "theory" (explicit high-probability constants).
SPIDER_MODES = tuple(sorted(MODES, key=lambda mode: mode != "unit"))  # ("unit", "theory"): the default first
SPIDER_SIGMA_RULES = SPIDER_SOSP_RULES
SPIDER_ADJACENCIES = ADJACENCIES
SPIDER_TREE_SCOPES = TREE_SCOPES
SPIDER_STARTS = ("saddle", "random")

#: τ of the cosine problem (the spread of the records; spider_sosp's experiments use τ = 0.5).
COSINE_SPREAD = 0.5
#: r, R and ρ of the quadratic problem (module doc).
QUADRATIC_NOISE_RADIUS = 1.0
QUADRATIC_DOMAIN_RADIUS = 2.0
QUADRATIC_HESSIAN_LIPSCHITZ = 1.0

#: Defaults of ``run_spider_sosp`` (and ``dpref run spider_sosp``): the cosine problem at n = 10⁵, d = 2 from the
#: exact saddle, ε = 1, δ = 1e-6, unit mode, exact Gaussian-DP σ, replace-one neighbours, one global tree. About 3 s
#: on the reference backend (a step costs about 0.1 ms there, an evaluation about 20 µs), well under a second on the
#: fast one. start None: "saddle" for the cosine problems, "random" for the quadratic.
SPIDER_DEFAULTS = {"problem": "cosine", "d": 2, "samples": 100_000, "epsilon": 1.0, "delta": 1e-6, "mode": "unit",
                   "sigma_rule": "gdp_exact", "adjacency": "replace_one", "tree_scope": "global", "perturb": True,
                   "reset_drift_on_perturb": False, "start": None, "iota": 0.01, "c_alpha": 1.0}

#: The largest dimension: the SOSP level needs the eigenvalues of d x d Hessians (``_check_d``).
D_MAX = 1000
#: The finite ε a run accepts (inf too: the non-private limit).
EPSILON_RANGE = (1e-6, 1e6)

#: Gradient evaluations × (d + 1) a run may need on each backend (each evaluation reads a point and a record): at
#: d = 2, 1.7·10⁷ evaluations on the reference backend (about 20 µs each: some 6 minutes at worst) and 1.7·10⁹ on the
#: fast one. ``evaluation_budget(backend, d)`` is the count; a run needs at most 2n.
EVALUATION_BUDGET = {"reference": 5 * 10**7, "fast": 5 * 10**9}
#: Steps a run may take (at most n: a step reads at least one record). A step of the reference backend costs about
#: 0.1–0.15 ms of Python, so 10⁶ steps are some 2–3 minutes at worst.
STEP_BUDGET = {"reference": 10**6, "fast": 10**7}

NOT_PRIVATE_SPIDER = ("NOT PRIVATE: computed on the private training records outside the privacy plan (empirical-loss "
                      "stationarity, errors of the noiseless SPIDER estimates, clip and replacement counts, wall-clock "
                      "time); do not publish")

#: What the diagnostics of a spider_sosp run are (the record's "diagnostics" entry).
SPIDER_DIAGNOSTICS = {
    "data": "population_*: the population F_P (closed form; public: the law of the records is a fixed, published "
            "problem), evaluated at the public start and at the iterates (post-processing of the releases); never "
            "the training records",
    "sosp_level": "reference.stationarity.sosp_level: the smallest alpha for which x is an alpha-SOSP of F_P "
                  "(spider_sosp Definition 1.2): max(|grad F(x)|, max(0, -lambda_min(hess F(x)))^2 / rho)",
    "points": "_initial at x_0 (not in the output set), _last at the last iterate x_T, _min at the iterate of "
              "smallest level (the output is the set x_1..x_T with no private selection: Theorem 3.11's claim is "
              "that some iterate is an SOSP, and the best one is found with the public population)",
    "first_alpha_sosp_step": "the first t with sosp_level(x_t) <= alpha (alpha of Lemma 3.10, the run's), or null",
    "first_tenth_gap_step": "the first t with F(x_t) - inf F < B/10, B = F(x_0) - inf F, or null",
    "saddles": "a perturbation at step t is at a saddle when |grad F(x_t)| <= alpha and lambda_min(hess F(x_t)) <= "
               "-sqrt(rho alpha) (Lemma 3.3's saddle); it escapes when some later iterate, before the next "
               "perturbation at a saddle, has F <= F(x_t) - decrease, decrease = Lemma 3.3's gamma^(3/2)/(sqrt(rho) "
               "log^3(dMB/(rho gamma iota))) with its Omega constant 1 (unit mode: every polylog 1)",
}


# ---------------------------------------------------------------------------------------------------
# Refusals that name the settings (``describe(cli=True)``: command-line options)


class SamplesNeeded(ValueError):
    """The records cannot hold the first O1 batch b (Lemma 3.8) of the settings. needed: a record count that does
    (b grows more slowly than n). ``describe(cli=True)`` names the command-line options."""

    def __init__(self, samples: int, batch_size: int, needed: int):
        self.samples, self.batch_size, self.needed = int(samples), int(batch_size), int(needed)
        super().__init__(self.describe())

    def describe(self, cli: bool = False) -> str:
        options = ", ".join(_param_name(p, cli) for p in ("d", "epsilon"))
        return (f"{_name_setting('samples', self.samples, cli)} cannot hold the first O1 batch of the settings "
                f"(Lemma 3.8: b = {self.batch_size} records; the run would release nothing); "
                f"{_name_setting('samples', self.needed, cli)} suffices ({options} set b too)")


class BudgetExceeded(ValueError):
    """A run beyond ``STEP_BUDGET[backend]`` steps or ``evaluation_budget(backend, d)`` gradient evaluations, refused
    before the records are drawn. kind: "steps" or "evaluations"; needed, budget: the counts; fits: the largest
    --samples that fits; fast: whether the fast backend would take it. ``describe(cli=True)``: command-line options."""

    def __init__(self, kind: str, needed: int, budget: int, backend: str, d: int, fits: int, fast: bool):
        self.kind, self.needed, self.budget, self.backend = kind, int(needed), int(budget), backend
        self.d, self.fits, self.fast = int(d), int(fits), bool(fast)
        super().__init__(self.describe())

    def describe(self, cli: bool = False) -> str:
        if self.kind == "steps":
            detail = "up to n steps: every step reads at least one record"
            advice = [f"reduce {_param_name('samples', cli)} (at most {self.fits} fits)"]
        else:
            detail = (f"up to 2n gradient evaluations: an O2 query evaluates each of its records at two points; the "
                      f"budget is {EVALUATION_BUDGET[self.backend]:.3g}/(d + 1) at d = {self.d}")
            advice = [f"reduce {_param_name('samples', cli)} (at most {self.fits} fits)",
                      f"reduce {_param_name('d', cli)}"]
        if self.fast:
            advice.append(f"use {_param_name('backend', cli)} fast" if cli else "use backend 'fast'")
        what = "steps" if self.kind == "steps" else "gradient evaluations"
        return (f"the run may need {self.needed:.3g} {what} ({detail}), more than the {self.backend} backend's budget "
                f"of {self.budget:.3g}; {' or '.join(advice)}")


# ---------------------------------------------------------------------------------------------------
# Problems


@dataclasses.dataclass(frozen=True)
class SpiderProblem:
    """A built-in problem: the ``LossFamily`` (its population is public), the public start x0 and its gap B, the
    problem constants (G, M, ρ) the settings use, and — once drawn — the training records ``data`` (PRIVATE: never
    published, only read by the algorithm and, on request, by the NOT PRIVATE diagnostics)."""

    name: str
    family: object
    x0: np.ndarray
    start: str
    loss_gap: float
    lipschitz: float
    smoothness: float
    hessian_lipschitz: float
    data: np.ndarray | None = None

    @property
    def d(self) -> int:
        return self.family.d


def _family(problem: str, d: int):
    if problem in ("cosine", "cosine-det"):
        signs = -np.ones(d)
        signs[0] = 1.0
        return CosineFamily(np.ones(d), signs, COSINE_SPREAD if problem == "cosine" else 0.0)
    return QuadraticFamily(np.diag(1.0 / np.arange(1, d + 1)), QUADRATIC_NOISE_RADIUS, QUADRATIC_DOMAIN_RADIUS)


def _start_point(problem: str, family, start: str, seed: int) -> np.ndarray:
    if start == "saddle":
        return family.saddle_point()
    rng = Streams(seed).generator("dpref run", "spider_sosp", "start")
    if problem == "quadratic":
        return np.asarray(sample_sphere(rng, 1, family.d, QUADRATIC_DOMAIN_RADIUS / 2), dtype=np.float64)[0]
    return rng.uniform(-math.pi, math.pi, family.d)


def build_spider_problem(problem: str = "cosine", *, d: int = 2, samples: int | None = None, data_seed: int = 0,
                         start: str | None = None, seed: int = 0) -> SpiderProblem:
    """The built-in problem ``problem`` (module doc) at dimension d, started at ``start`` ("saddle": the cosine
    problems' exact saddle 0; "random": a draw from the public seed; None: the problem's default), with ``samples``
    records drawn from the data seed (None: no records, the public parts only)."""
    _check_choice("problem", problem, SPIDER_PROBLEMS)
    d = _check_d(d)
    start = _check_start(problem, start)
    data_seed = check_int("data_seed", data_seed, minimum=0, maximum=SEED_BOUND - 1)
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    family = _family(problem, d)
    x0 = _start_point(problem, family, start, seed)
    gap = family.loss_gap(x0)
    rho = QUADRATIC_HESSIAN_LIPSCHITZ if problem == "quadratic" else family.hessian_lipschitz
    data = None
    if samples is not None:
        samples = check_int("samples", samples, minimum=1)
        data = family.sample(Streams(data_seed).generator("dpref run", "spider_sosp", problem), samples)
        data.flags.writeable = False
    return SpiderProblem(problem, family, x0, start, gap, family.lipschitz, family.smoothness, rho, data)


def _check_d(d) -> int:
    d = check_int("d", d, minimum=1)
    if d > D_MAX:
        raise ValueError(f"d must be <= {D_MAX}, got {d}: the SOSP level needs the smallest eigenvalue of the d x d "
                         f"population Hessian (LAPACK, d^3 operations), and the quadratic builds its d x d matrix")
    return d


def _check_start(problem: str, start) -> str:
    if start is None:
        return "random" if problem == "quadratic" else "saddle"
    _check_choice("start", start, SPIDER_STARTS)
    if start == "saddle" and problem == "quadratic":
        raise ValueError("start 'saddle' applies to the cosine problems only (the quadratic is strongly convex: it has "
                         "no saddle); use start 'random'")
    return start


class _Gradient:
    """∇f(x; z) of a built-in family, as the family computes it (cosine −c·s·sin(x − z), quadratic a·x − z with
    a = diag A), without its input checks: a 1-d point and record give a (d,) array; arrays broadcast over their
    leading axes (points (..., d), records (..., d)) with the same elementwise operations, so both conventions give
    bitwise the same values. Every call reports its points to ``progress`` (or nothing, when it is None)."""

    def __init__(self, problem: SpiderProblem, progress=None):
        family = problem.family
        if isinstance(family, CosineFamily):
            self.kind, self.weights = "cosine", np.asarray(family.c * family.s, dtype=np.float64)
        else:
            self.kind, self.weights = "quadratic", np.array(np.diag(family.A), dtype=np.float64)
        self.d, self.progress = family.d, progress

    def __call__(self, x, z):
        x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
        value = -self.weights * np.sin(x - z) if self.kind == "cosine" else self.weights * x - z
        if self.progress is not None:
            self.progress.observe(x, value.shape)
        return value


def population_levels(problem: SpiderProblem, points) -> dict:
    """F, ‖∇F‖, λ_min(∇²F) and the SOSP level max(‖∇F‖, λ_min⁻²/ρ) of the POPULATION at every row of ``points``
    (k, d), vectorised from the closed forms (``reference.stationarity.sosp_level`` is the one-point oracle they are
    tested against; the reported single values are computed by it)."""
    family = problem.family
    x = np.asarray(points, dtype=np.float64).reshape(-1, family.d)
    if isinstance(family, CosineFamily):
        weights = family.phi * family.c * family.s
        objective = np.sum(weights * np.cos(x), axis=1)
        gradient = -weights * np.sin(x)
        lambda_min = np.min(-weights * np.cos(x), axis=1)
    else:
        a = np.diag(family.A)
        objective = 0.5 * np.sum(a * x * x, axis=1)
        gradient = a * x
        lambda_min = np.full(x.shape[0], float(np.linalg.eigvalsh(family.A)[0]))
    norm = np.linalg.norm(gradient, axis=1)
    negative = np.maximum(0.0, -lambda_min)
    level = np.maximum(norm, negative * negative / problem.hessian_lipschitz)
    return {"objective": objective, "grad_norm": norm, "lambda_min": lambda_min, "sosp_level": level}


def _point_record(problem: SpiderProblem, x) -> dict:
    """F, ‖∇F‖, λ_min(∇²F) and ``sosp_level`` of the population at one point (the reported values)."""
    family = problem.family
    gradient, hessian = family.population_gradient(x), family.population_hessian(x)
    return {"objective": family.population_loss(x), "grad_norm": float(np.linalg.norm(gradient)),
            "lambda_min": float(np.linalg.eigvalsh(hessian)[0]),
            "sosp_level": sosp_level(gradient, hessian, problem.hessian_lipschitz)}


def _training_moments(problem: SpiderProblem) -> tuple:
    """NOT PRIVATE: the record means the empirical loss needs — cosine (mean cos z_j, mean sin z_j) per coordinate
    (cos(x − z) = cos x cos z + sin x sin z), quadratic the mean record."""
    data = problem.data
    if isinstance(problem.family, CosineFamily):
        return np.mean(np.cos(data), axis=0), np.mean(np.sin(data), axis=0)
    return (np.mean(data, axis=0),)


def _training_record(problem: SpiderProblem, x, moments) -> dict:
    """NOT PRIVATE: F_D, ‖∇F_D‖, λ_min(∇²F_D) and the SOSP level of the EMPIRICAL loss on the training records, from
    ``_training_moments``."""
    family = problem.family
    x = np.asarray(x, dtype=np.float64)
    if isinstance(family, CosineFamily):
        weights = family.c * family.s
        mean_cos, mean_sin = moments
        cosine = np.cos(x) * mean_cos + np.sin(x) * mean_sin  # mean_i cos(x_j − z_ij)
        sine = np.sin(x) * mean_cos - np.cos(x) * mean_sin  # mean_i sin(x_j − z_ij)
        objective = float(np.sum(weights * cosine))
        gradient = -weights * sine
        hessian = np.diag(-weights * cosine)
    else:
        (mean,) = moments
        objective = float(0.5 * x @ family.A @ x - mean @ x)
        gradient = family.A @ x - mean
        hessian = np.array(family.A)
    return {"objective": objective, "grad_norm": float(np.linalg.norm(gradient)),
            "lambda_min": float(np.linalg.eigvalsh(hessian)[0]),
            "sosp_level": sosp_level(gradient, hessian, problem.hessian_lipschitz)}


# ---------------------------------------------------------------------------------------------------
# Counting: budget, memory


def evaluation_budget(backend: str, d: int) -> int:
    """The gradient evaluations a run may need on ``backend`` at dimension d:
    ``EVALUATION_BUDGET[backend] // (d + 1)``."""
    return max(1, EVALUATION_BUDGET[backend] // (int(d) + 1))


#: Bytes one step of a run keeps until it ends: the algorithm's eight (d,) arrays per step (iterate, release,
#: estimate, noise, perturbation, the zero vector, the batch index view and list slots) and its scalars, then the
#: stacked arrays, the population diagnostics and the schedule of the table.
def _step_bytes(d: int) -> int:
    return 8 * (_OBJECT + _FLOAT * d) + 4 * 40 + 6 * _FLOAT * d + 8 * _FLOAT


def spider_memory_parts(*, d: int, samples: int, publish: bool = False,
                        include_nonprivate: bool = False) -> list[MemoryPart]:
    """The parts of the memory a spider_sosp run needs (``reference.runner.MemoryPart``, largest first), with n =
    samples: lasting — the records 8·n·d twice (the drawn array and the oracles' read-only copy) and the public order
    8·n, the d x d matrices 4·8·d² (the quadratic's A and its copies, the population Hessians of the reported points),
    the path of at most n steps (``_step_bytes``); transient — the text of the published files (about 25 bytes per
    number, 3d + 8 numbers a step) with ``publish``, the empirical diagnostics (two n x d arrays) with
    ``include_nonprivate``; fixed — 64 MiB."""
    n, d = int(samples), int(d)
    parts: list[MemoryPart] = []

    def add(what, size, params, transient=False):
        if size > 0:
            parts.append(MemoryPart(what, int(size), tuple(params), transient))

    add("training records (samples x d)", 2 * _FLOAT * n * d + _FLOAT * n, ("samples", "d"))
    add("population Hessians and the quadratic's matrix (d x d)", 4 * _FLOAT * d * d, ("d",))
    add("path of the run (at most samples steps x d)", n * _step_bytes(d), ("samples", "d"))
    if publish:
        add("text of the published files", 25 * n * (3 * d + 8), ("samples", "d"), True)
    if include_nonprivate:
        add("training-set diagnostics (samples x d)", 2 * _FLOAT * n * d, ("samples", "d"), True)
    add("fixed costs", _BASE, ())
    parts.sort(key=lambda part: -part.bytes)
    return parts


def check_spider_memory(*, d: int, samples: int, publish: bool = False, include_nonprivate: bool = False,
                        memory_limit: int | None = None) -> int:
    """The estimate of ``spider_memory_parts`` if it is within the limit (None: the memory available now), else
    ``reference.runner.MemoryLimitError`` naming samples and d."""
    parts = spider_memory_parts(d=d, samples=samples, publish=publish, include_nonprivate=include_nonprivate)
    return _check_parts(parts, {"samples": int(samples), "d": int(d)}, memory_limit)


def _check_budget(samples: int, d: int, backend: str) -> None:
    steps, evaluations = samples, 2 * samples
    fast = backend == "reference" and fast_spider_available()
    if steps > STEP_BUDGET[backend]:
        raise BudgetExceeded("steps", steps, STEP_BUDGET[backend], backend, d, STEP_BUDGET[backend],
                             fast and samples <= STEP_BUDGET["fast"] and 2 * samples <= evaluation_budget("fast", d))
    budget = evaluation_budget(backend, d)
    if evaluations > budget:
        raise BudgetExceeded("evaluations", evaluations, budget, backend, d, budget // 2,
                             fast and samples <= STEP_BUDGET["fast"] and 2 * samples <= evaluation_budget("fast", d))


def fast_spider_available() -> bool:
    """Whether the vectorized twin ``reference.fast.spider_sosp`` is installed."""
    return _runner.fast_twin_available("spider_sosp")


def _spider_module(backend: str):
    return _runner.backend_module(backend, "spider_sosp", reference_spider)


# ---------------------------------------------------------------------------------------------------
# Preparing a run: checks, the settings, the plan, the run's config, budget, memory


def _float_down(value) -> float:
    """The largest float64 ≤ value (an mpf)."""
    out = float(value)
    if mpmath.mpf(out) > value:
        out = math.nextafter(out, -math.inf)
    return out


def _float_up(value) -> float:
    """The smallest float64 ≥ value (an mpf): σ is rounded up, so a run is at least as noisy as calibrated."""
    out = float(value)
    if mpmath.mpf(out) < value:
        out = math.nextafter(out, math.inf)
    return out


def _fraction(value) -> Fraction:
    """An mpf or a float as an exact rational."""
    if isinstance(value, mpmath.mpf):
        mantissa, exponent = value.man_exp
        return Fraction(int(mantissa)) * Fraction(2) ** int(exponent)
    return Fraction(value)


def _check_sensitivity(config: SpiderConfig, plan: SpiderPrivacyPlan, lipschitz: float, c_adj: int) -> None:
    """The run's per-leaf sensitivity ≤ the plan's sbar, in exact rationals: c_adj·G/b (O1) and c_adj/coef_bt (O2,
    coef_bt = max(√d/(αε), κ/α²) of the run's float64 α, ε, κ, which the exact batch ceilings guarantee)."""
    sbar = _fraction(plan.sbar)
    G, alpha, kappa = Fraction(lipschitz), Fraction(config.alpha), Fraction(config.kappa)
    ok_o1 = c_adj * G / config.batch_size <= sbar
    target = c_adj / sbar  # need coef_bt ≥ c_adj/sbar
    ok_o2 = kappa / (alpha * alpha) >= target
    if not ok_o2 and not math.isinf(config.epsilon):
        ok_o2 = config.d >= (target * alpha * Fraction(config.epsilon)) ** 2  # √d/(αε) ≥ target
    if not (ok_o1 and ok_o2):  # pragma: no cover - the construction in prepare_spider_sosp excludes it
        raise RuntimeError("the run's sensitivity exceeds the plan's sbar; refusing to run (report this)")


@dataclasses.dataclass(frozen=True)
class SpiderPrepared:
    """A run decided but not started (``prepare_spider_sosp``): every check passed, the budget and the memory fit.
    settings: the public settings (no secret seed). theory: the ``SpiderSettings``. config: the ``SpiderConfig`` the
    run uses (α, κ, b, σ from the plan; module doc). plan: the ``SpiderPrivacyPlan`` (None for ε = inf). problem: the
    ``SpiderProblem`` without records. secret: the ``SecretSeed`` (its repr hides the value). memory_limit: the limit
    the estimate was checked against (None: the memory available)."""

    settings: dict
    theory: SpiderSettings
    config: SpiderConfig
    plan: SpiderPrivacyPlan | None
    problem: SpiderProblem
    secret: object
    memory_limit: int | None


def _smallest_samples(problem, d, epsilon, mode_args) -> int:
    """A record count n with n ≥ b(n) (b of Lemma 3.8 grows like n^(2/3) at most): doubling, then bisection."""

    def holds(n):
        s = spider_settings(n, d, problem.lipschitz, problem.smoothness, problem.hessian_lipschitz, problem.loss_gap,
                            epsilon, 0.5, noise_std=0.0, **mode_args)
        return n >= s.batch_size + 1  # one more than the float64 b: the plan's b may be larger by one at a tie

    high = 1
    while not holds(high):
        high *= 2
        if high > 2**62:  # pragma: no cover - b grows more slowly than n
            raise RuntimeError("no record count holds the first O1 batch")
    low = high // 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if holds(mid) else (mid, high)
    return high


def prepare_spider_sosp(problem: str = "cosine", *, d: int = 2, samples: int = 100_000, data_seed: int = 0,
                        epsilon: float = 1.0, delta: float | None = None, mode: str = "unit",
                        sigma_rule: str | None = None, adjacency: str | None = None, tree_scope: str | None = None,
                        perturb: bool = True, reset_drift_on_perturb: bool = False, start: str | None = None,
                        allow_nonprivate: bool = False, seed: int = 0, noise_seed=None, backend: str | None = None,
                        memory_limit: int | None = None, publish: bool = False,
                        include_nonprivate: bool = False) -> SpiderPrepared:
    """Every check of ``run_spider_sosp`` (same arguments) and every decision made before the run starts: the
    settings, the privacy plan and the run's config, the budget and the memory (``publish``, ``include_nonprivate``:
    count the files and the NOT PRIVATE diagnostics too). Draws no record. ValueError/TypeError name the parameter;
    ``SamplesNeeded``, ``BudgetExceeded`` and ``reference.runner.MemoryLimitError`` have ``describe(cli)``."""
    _check_choice("problem", problem, SPIDER_PROBLEMS)
    d = _check_d(d)
    samples = check_int("samples", samples, minimum=1)
    data_seed = check_int("data_seed", data_seed, minimum=0, maximum=SEED_BOUND - 1)
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    epsilon = float(check_real("epsilon", epsilon, positive=True, allow_inf=True))
    private = not math.isinf(epsilon)
    low, high = EPSILON_RANGE
    if private and not low <= epsilon <= high:
        raise ValueError(f"epsilon must lie in [{low:g}, {high:g}], or be inf (the non-private limit), got "
                         f"{epsilon!r}: below, the O1 batch b of Lemma 3.8 exceeds any data set that fits in memory; "
                         "above, the noise is below float64's resolution of the gradients (use inf)")
    _check_choice("mode", mode, SPIDER_MODES)
    for name, value in (("perturb", perturb), ("reset_drift_on_perturb", reset_drift_on_perturb),
                        ("allow_nonprivate", allow_nonprivate), ("publish", publish),
                        ("include_nonprivate", include_nonprivate)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    if private:
        delta = SPIDER_DEFAULTS["delta"] if delta is None else float(check_probability("delta", delta))
        sigma_rule = SPIDER_DEFAULTS["sigma_rule"] if sigma_rule is None else sigma_rule
        _check_choice("sigma_rule", sigma_rule, SPIDER_SIGMA_RULES)
        adjacency = SPIDER_DEFAULTS["adjacency"] if adjacency is None else adjacency
        _check_choice("adjacency", adjacency, SPIDER_ADJACENCIES)
        tree_scope = SPIDER_DEFAULTS["tree_scope"] if tree_scope is None else tree_scope
        _check_choice("tree_scope", tree_scope, SPIDER_TREE_SCOPES)
        if sigma_rule == "thm3.11" and not allow_nonprivate:
            raise ValueError("sigma_rule 'thm3.11' (sigma = alpha/sqrt(d), Theorem 3.11 as printed) has no epsilon or "
                             "delta and is not private (spider_sosp.E3); pass allow_nonprivate=True to run it anyway")
        if allow_nonprivate and sigma_rule != "thm3.11":
            raise ValueError("allow_nonprivate applies to sigma_rule 'thm3.11' only (the other rules are run as "
                             "selected, their plan's private flag reported)")
    else:
        for name, value in (("delta", delta), ("sigma_rule", sigma_rule), ("adjacency", adjacency),
                            ("tree_scope", tree_scope)):
            if value is not None:
                raise ValueError(f"{name} does not apply to epsilon = inf (the non-private limit: no noise, no plan)")
        if allow_nonprivate:
            raise ValueError("allow_nonprivate does not apply to epsilon = inf (the run is not private anyway)")
        tree_scope, adjacency = SPIDER_DEFAULTS["tree_scope"], SPIDER_DEFAULTS["adjacency"]
    if isinstance(noise_seed, (int, np.integer)) and not isinstance(noise_seed, bool) and noise_seed == data_seed:
        raise ValueError("noise_seed must differ from data_seed: the data seed is published, so noise drawn from it "
                         "could be regenerated; omit noise_seed to draw fresh secret entropy")
    # the perturbations are secret even without noise (module doc of reference.algorithms.spider_sosp)
    secret = secret_seed(noise_seed, public_seeds=(seed, data_seed), name="noise_seed")
    if backend is None:
        backend = "fast" if fast_spider_available() else "reference"
    _check_choice("backend", backend, BACKENDS)
    _spider_module(backend)
    if memory_limit is not None:
        memory_limit = check_int("memory_limit", memory_limit, minimum=1)
    start = _check_start(problem, start)
    # the memory and the budget: pure arithmetic on the sizes, before anything of size n or d x d is built
    check_spider_memory(d=d, samples=samples, publish=publish, include_nonprivate=include_nonprivate,
                        memory_limit=memory_limit)
    _check_budget(samples, d, backend)
    built = build_spider_problem(problem, d=d, start=start, seed=seed, data_seed=data_seed)
    if not built.loss_gap > 0:
        raise ValueError("the start is a global minimiser of the population (B = F(x0) - inf F = 0): choose another "
                         "seed or start")

    G, M, rho, B = built.lipschitz, built.smoothness, built.hessian_lipschitz, built.loss_gap
    iota, c_alpha = SPIDER_DEFAULTS["iota"], SPIDER_DEFAULTS["c_alpha"]
    plan, noise_std = None, 0.0
    with mpmath.workdps(max(mpmath.mp.dps, 30)):
        if private:
            plan = spider_sosp_plan(lipschitz=G, smoothness=M, loss_gap=B, d=d, n=samples, epsilon=epsilon,
                                    delta=delta, adjacency=adjacency, tree_scope=tree_scope, c_alpha=c_alpha,
                                    rule=sigma_rule, allow_nonprivate=bool(allow_nonprivate))
            noise_std = _float_up(plan.noise_std)
            params = spider_sosp_parameters(lipschitz=G, smoothness=M, loss_gap=B, d=d, n=samples, epsilon=epsilon,
                                            adjacency=adjacency, c_alpha=c_alpha)
    theory = spider_settings(samples, d, G, M, rho, B, epsilon, delta if private else 0.5, mode=mode, iota=iota,
                             c_alpha=c_alpha, noise_std=noise_std, adjacency=adjacency, tree_scope=tree_scope)
    config = theory.config(reset_drift_on_perturb=bool(reset_drift_on_perturb), perturb=bool(perturb),
                           enforce_constants=True)
    if private:
        # α rounded down, κ up, b the plan's: the run's sensitivity is at most the plan's sbar (checked exactly)
        config = dataclasses.replace(config, alpha=_float_down(params["alpha"]), kappa=_float_up(params["kappa"]),
                                     batch_size=int(params["b"]))
        _check_sensitivity(config, plan, G, int(params["c_adj"]))
    if samples < config.batch_size:
        raise SamplesNeeded(samples, config.batch_size,
                            _smallest_samples(built, d, epsilon, {"mode": mode, "iota": iota, "c_alpha": c_alpha}))
    settings = {"algorithm": "spider_sosp", "problem": problem, "objective": built.family.name, "d": d,
                "samples": samples, "data_seed": data_seed, "start": built.start, "x0": built.x0.tolist(),
                "lipschitz": G, "smoothness": M, "hessian_lipschitz": rho, "loss_gap": B,
                "population_infimum": built.family.population_infimum(),
                "record_spread": getattr(built.family, "tau", None),
                "noise_radius": QUADRATIC_NOISE_RADIUS if problem == "quadratic" else None,
                "domain_radius": QUADRATIC_DOMAIN_RADIUS if problem == "quadratic" else None,
                "epsilon": epsilon, "delta": delta if private else None, "mode": mode, "iota": iota,
                "c_alpha": c_alpha, "sigma_rule": sigma_rule if private else None,
                "sigma_rule_label": RULE_LABELS[sigma_rule] if private else None,
                "adjacency": adjacency if private else None, "tree_scope": tree_scope,
                "perturb": bool(perturb), "reset_drift_on_perturb": bool(reset_drift_on_perturb),
                "enforce_constants": True, "allow_nonprivate": bool(allow_nonprivate), "seed": seed,
                "backend": backend, "secret_seed_source": secret.source}
    return SpiderPrepared(settings, theory, config, plan, built, secret, memory_limit)


# ---------------------------------------------------------------------------------------------------
# Running


class _Progress:
    """A progress bar over the n records (unit "record"), with the step count beside it, driven by the gradient
    calls: a call at a point not seen in the last two starts a step, and the records of calls at the newest point are
    the step's batch (an O2 query's second point, x_{t−1}, reads the same records). Shown once the run has taken
    ``reference.runner.PROGRESS_DELAY`` seconds (``reference.progress.progress_bar``, "dpref run"). Cosmetic only: its
    counts decide nothing, and the last update sets the run's true numbers."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled = int(total), bool(enabled)
        self.records = self.steps = self.shown = 0
        self.newest = self.previous = None
        self.bar = None
        self.start = time.perf_counter()

    def observe(self, x, shape) -> None:
        d = shape[-1]
        if x.ndim == 1:
            self._point(x, int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) > 1 else 1)
        else:
            points = np.broadcast_to(x, shape).reshape(-1, d)
            unique, first, counts = np.unique(points, axis=0, return_index=True, return_counts=True)
            for i in np.argsort(first):
                self._point(unique[i], int(counts[i]))
        self._show()

    def _point(self, x, count: int) -> None:
        if self.newest is not None and np.array_equal(x, self.newest):
            self.records += count
        elif self.previous is not None and np.array_equal(x, self.previous):
            return
        else:
            self.previous, self.newest = self.newest, np.array(x)
            self.steps += 1
            self.records += count

    def _show(self) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.perf_counter() - self.start < _runner.PROGRESS_DELAY:
                return
            self.bar = progress_bar(self.total, "dpref run", "record", enabled=True)
        done = min(self.records, self.total)
        if done > self.shown:
            self.bar.set_postfix_str(f"step {self.steps}", refresh=False)
            self.bar.update(done - self.shown)
            self.shown = done

    def close(self, records: int | None = None, steps: int | None = None) -> None:
        if self.bar is not None:
            if records is not None:  # the run's own numbers (the counts above may double count a repeated point)
                self.bar.set_postfix_str(f"{steps} steps", refresh=False)
                self.bar.n = int(records)
            self.bar.close()


@dataclasses.dataclass(frozen=True)
class SpiderOutcome:
    """A spider_sosp run and what it was.

    result: the algorithm's ``SpiderResult`` (its trace and iterates public, its ``debug`` NOT PRIVATE). problem: the
    ``SpiderProblem`` (its records are private data). settings, theory, config, plan: public (``SpiderPrepared``).
    population: ``population_levels`` at x_1..x_T (public). seconds: wall-clock time of the algorithm (NOT PRIVATE by
    convention: it follows the realised work)."""

    result: object
    problem: SpiderProblem
    settings: dict
    theory: SpiderSettings
    config: SpiderConfig
    plan: SpiderPrivacyPlan | None
    population: dict
    seconds: float

    @property
    def private(self) -> bool:
        return self.plan is not None

    @property
    def steps(self) -> int:
        return int(self.result.trace.steps)


def execute_spider_sosp(prepared: SpiderPrepared, *, progress: bool = False) -> SpiderOutcome:
    """Draw the records and run a prepared run (``prepare_spider_sosp``); its population diagnostics."""
    if not isinstance(prepared, SpiderPrepared):
        raise TypeError(f"prepared must be a SpiderPrepared (from prepare_spider_sosp), got {type(prepared).__name__}")
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be a bool, got {type(progress).__name__} {progress!r}")
    s = prepared.settings
    built = build_spider_problem(s["problem"], d=s["d"], samples=s["samples"], data_seed=s["data_seed"],
                                 start=s["start"], seed=s["seed"])
    tracker = _Progress(s["samples"], bool(progress)) if progress else None
    gradient = _Gradient(built, tracker)
    module = _spider_module(s["backend"])
    start, result = time.perf_counter(), None
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            result = module.stochastic_spider(gradient, built.data, built.x0.copy(), prepared.config, seed=s["seed"],
                                              noise_seed=prepared.secret)
    finally:
        if tracker is not None:
            tracker.close(None if result is None else result.trace.records_used,
                          None if result is None else result.trace.steps)
    seconds = time.perf_counter() - start
    if result.trace.steps == 0:  # pragma: no cover - n ≥ b is checked by prepare
        raise ValueError("the run released nothing: the records cannot hold the first O1 batch")
    population = population_levels(built, result.iterates)
    return SpiderOutcome(result, built, dict(s), prepared.theory, prepared.config, prepared.plan, population, seconds)


def run_spider_sosp(problem: str = "cosine", *, d: int = 2, samples: int = 100_000, data_seed: int = 0,
                    epsilon: float = 1.0, delta: float | None = None, mode: str = "unit",
                    sigma_rule: str | None = None, adjacency: str | None = None, tree_scope: str | None = None,
                    perturb: bool = True, reset_drift_on_perturb: bool = False, start: str | None = None,
                    allow_nonprivate: bool = False, seed: int = 0, noise_seed=None, backend: str | None = None,
                    progress: bool = False, memory_limit: int | None = None) -> SpiderOutcome:
    """spider_sosp Algorithm 2 with the oracles of Algorithm 3 on a built-in problem (module doc), and its public
    diagnostics.

    problem: "cosine", "cosine-det" or "quadratic". d: dimension. samples: n records (read once; T = n). data_seed:
    the records. epsilon: ε > 0, or inf (the non-private limit: σ = 0, no plan; delta, sigma_rule, adjacency and
    tree_scope must then be None). delta: δ (default 1e-6). mode: "unit" or "theory" (``spider_settings``).
    sigma_rule: one of ``SPIDER_SIGMA_RULES`` (default "gdp_exact"; "thm3.11" needs allow_nonprivate=True).
    adjacency: "replace_one" (default) or "zero_out". tree_scope: "global" (default) or "segment". perturb: False
    disables line 9–11 (the no-perturbation ablation). reset_drift_on_perturb: line 10's literal drift reset. start:
    "saddle" or "random" (None: the problem's default). seed: public (record order, random start); noise_seed: secret
    (tree noise, perturbations; None: fresh operating-system entropy; an int other than seed and data_seed).
    backend: "fast" (``reference.fast.spider_sosp``) when installed, else "reference". progress: a bar over the
    records. memory_limit: bytes (None: the memory available).

    Refusals before any record is drawn: ValueError/TypeError naming the parameter, ``SamplesNeeded``,
    ``BudgetExceeded``, ``reference.runner.MemoryLimitError``.
    """
    prepared = prepare_spider_sosp(
        problem, d=d, samples=samples, data_seed=data_seed, epsilon=epsilon, delta=delta, mode=mode,
        sigma_rule=sigma_rule, adjacency=adjacency, tree_scope=tree_scope, perturb=perturb,
        reset_drift_on_perturb=reset_drift_on_perturb, start=start, allow_nonprivate=allow_nonprivate, seed=seed,
        noise_seed=noise_seed, backend=backend, memory_limit=memory_limit)
    return execute_spider_sosp(prepared, progress=progress)


# ---------------------------------------------------------------------------------------------------
# Records: diagnostics, the summary, the NOT PRIVATE diagnostics, the ledger


def _plain(value):
    if isinstance(value, mpmath.mpf):
        return float(value)
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _escape_decrease(outcome: SpiderOutcome) -> float:
    theory = outcome.theory
    if theory.mode == "unit":
        return theory.gamma**1.5 / math.sqrt(theory.hessian_lipschitz)
    return escape_decrease(theory.gamma, d=theory.d, smoothness=theory.smoothness,
                           hessian_lipschitz=theory.hessian_lipschitz, loss_gap=theory.loss_gap, iota=theory.iota)


def _diagnostics(outcome: SpiderOutcome) -> dict:
    """The population diagnostics (``SPIDER_DIAGNOSTICS``): plain data."""
    problem, result, population = outcome.problem, outcome.result, outcome.population
    iterates = np.asarray(result.iterates, dtype=np.float64)
    levels = population["sosp_level"]
    best = int(np.argmin(levels))
    alpha, rho = outcome.config.alpha, problem.hessian_lipschitz
    below = np.flatnonzero(levels <= alpha)
    # saddles and escapes: path x_0..x_T, perturbation at step t acts at x_t
    path = np.vstack([problem.x0[None, :], iterates])
    on_path = population_levels(problem, path)
    T, Gamma = iterates.shape[0], outcome.config.freeze_steps
    decrease = _escape_decrease(outcome)
    saddles = [int(t) for t in result.trace.perturbation_steps
               if on_path["grad_norm"][t] <= alpha and on_path["lambda_min"][t] <= -math.sqrt(rho * alpha)]
    escapes = 0
    for i, t in enumerate(saddles):  # x_{t+1} .. x_u, u the next perturbation at a saddle (or T)
        end = saddles[i + 1] if i + 1 < len(saddles) else T
        escapes += int(np.min(on_path["objective"][t + 1:end + 1]) <= on_path["objective"][t] - decrease)
    at_saddle = len(saddles)
    x0_record = _point_record(problem, problem.x0)
    gap = population["objective"] - problem.family.population_infimum()
    descended = np.flatnonzero(gap < 0.1 * problem.loss_gap)
    record = {
        "initial": x0_record, "last": _point_record(problem, iterates[-1]),
        "min": _point_record(problem, iterates[best]),
        "min_step": best + 1, "first_alpha_sosp_step": None if below.size == 0 else int(below[0]) + 1,
        "first_tenth_gap_step": None if descended.size == 0 else int(descended[0]) + 1,
        "alpha": alpha, "hessian_lipschitz": rho,
        "start_is_saddle": bool(x0_record["grad_norm"] <= alpha and x0_record["lambda_min"] <= -math.sqrt(rho * alpha)),
        "perturbations": len(result.trace.perturbation_steps), "perturbations_at_saddle": at_saddle,
        "escapes": escapes, "escape_decrease": decrease, "freeze_steps": Gamma,
    }
    if problem.name == "quadratic":
        norms = np.linalg.norm(iterates, axis=1)
        record["max_iterate_norm"] = float(np.max(norms))
        record["iterates_in_domain"] = bool(np.all(norms <= QUADRATIC_DOMAIN_RADIUS))
    return record


def _batch_record(outcome: SpiderOutcome) -> dict:
    trace = outcome.result.trace
    kinds = np.array(trace.kinds)
    sizes = np.asarray(trace.batch_sizes, dtype=np.int64)
    o2 = sizes[kinds == "O2"]
    o1 = sizes[kinds == "O1"]
    stats = (None if o2.size == 0 else
             {"count": int(o2.size), "min": int(o2.min()), "median": float(np.median(o2)), "mean": float(o2.mean()),
              "p90": float(np.quantile(o2, 0.9)), "max": int(o2.max()), "total": int(o2.sum())})
    return {"o1_steps": int(o1.size), "o1_batch_size": outcome.config.batch_size, "o1_records": int(o1.sum()),
            "o2_steps": int(o2.size), "o2_batch_sizes": stats,
            "gradient_evaluations": int(o1.sum() + 2 * o2.sum())}


#: The theory's fields in the summary.
_THEORY_FIELDS = ("alpha", "kappa", "batch_size", "batch_coefficient", "steps", "tree_levels", "variance_bound",
                  "gamma", "threshold", "freeze_steps", "perturbation_scale", "sample_requirement", "step_size")
#: The plan's fields in the summary -> their names there (ε at δ is ``epsilon_spent``; the target is ``epsilon``).
_PLAN_FIELDS = {"guarantee": "guarantee", "private": "private", "epsilon": "epsilon_spent", "dp_delta": "dp_delta",
                "target_epsilon": "target_epsilon", "delta_at_target": "delta_at_target", "mu": "mu",
                "noise_std": "plan_noise_std", "sbar": "sbar", "node_count": "node_count", "count_rule": "count_rule",
                "Sigma": "tree_leaves", "note": "plan_note"}


def _plan_record(plan) -> dict | None:
    return None if plan is None else {f.name: _plain(getattr(plan, f.name)) for f in dataclasses.fields(plan)}


def spider_summary(outcome: SpiderOutcome, *, include_nonprivate: bool = False) -> dict:
    """The printed record of a spider_sosp run: the settings, the theory's values (``theory``) and the run's config
    (α, κ, b, σ), the schedule (steps, O1/O2 counts, the O2 batch sizes, records used of n, perturbations), the privacy
    plan (σ rule and label, private flag, ε spent at δ, μ) and the population diagnostics (``SPIDER_DIAGNOSTICS``).
    With include_nonprivate the key "nonprivate" holds ``spider_nonprivate(outcome)`` — NOT PRIVATE. Plain JSON data."""
    result, plan, config = outcome.result, outcome.plan, outcome.config
    trace = result.trace
    record = dict(outcome.settings)
    record["theory"] = {key: _plain(getattr(outcome.theory, key)) for key in _THEORY_FIELDS}
    record.update({"alpha": config.alpha, "kappa": config.kappa, "batch_size": config.batch_size,
                   "threshold": config.threshold, "freeze_steps": config.freeze_steps,
                   "perturbation_scale": config.perturbation_scale, "noise_std": config.noise_std,
                   "step_size": config.step_size, "horizon": outcome.theory.steps, "gamma": outcome.theory.gamma})
    record.update({"steps": trace.steps, "halt_reason": trace.halt_reason, "next_batch_size": trace.next_batch_size,
                   "records_used": int(trace.records_used), "records_available": int(trace.records_available)})
    record.update(_batch_record(outcome))
    record["perturbation_steps_first"] = [int(t) for t in trace.perturbation_steps[:10]]
    for key, name in _PLAN_FIELDS.items():
        record[name] = None if plan is None else _plain(getattr(plan, key))
    if plan is None:
        record.update({"guarantee": "not private", "private": False})
    record["plan_summary"] = None if plan is None else plan.summary()
    record["guarantee_condition"] = result.guarantee_condition
    record["diagnostics"] = dict(SPIDER_DIAGNOSTICS)
    diagnostics = _diagnostics(outcome)
    for point in ("initial", "last", "min"):
        for key, value in diagnostics.pop(point).items():
            record[f"population_{key}_{point}"] = value
    record.update(diagnostics)
    record["last_point"] = np.asarray(result.iterates[-1], dtype=np.float64)
    record["min_point"] = np.asarray(result.iterates[record["min_step"] - 1], dtype=np.float64)
    if include_nonprivate:
        record["nonprivate"] = spider_nonprivate(outcome)
    return _jsonable(record)


def spider_nonprivate(outcome: SpiderOutcome) -> dict:
    """NOT PRIVATE: the SOSP level of the EMPIRICAL loss on the training records at x_0, at the last and at the best
    iterate (by the population level), the largest error of the noiseless SPIDER estimates ‖∇_t − ∇F(x_t)‖ (population
    gradient at x_t), the clip and replacement counts, the counted evaluations and the time. The estimates, the tree
    noise and the perturbations themselves are never returned."""
    problem, result = outcome.problem, outcome.result
    iterates = np.asarray(result.iterates, dtype=np.float64)
    path = np.vstack([problem.x0[None, :], iterates])[:-1]  # x_0..x_{T−1}: step t queries x_t
    family = problem.family
    if isinstance(family, CosineFamily):
        population_gradient = -(family.phi * family.c * family.s) * np.sin(path)
    else:
        population_gradient = np.diag(family.A) * path
    errors = np.linalg.norm(np.asarray(result.debug.estimates) - population_gradient, axis=1)
    best = int(np.argmin(outcome.population["sosp_level"]))
    record = {"warning": NOT_PRIVATE_SPIDER}
    moments = _training_moments(problem)
    for name, x in (("initial", problem.x0), ("last", iterates[-1]), ("min", iterates[best])):
        for key, value in _training_record(problem, x, moments).items():
            record[f"training_{key}_{name}"] = value
    record.update({"estimate_error_max": float(np.max(errors)), "estimate_error_median": float(np.median(errors)),
                   "clipped_values": int(np.sum(result.debug.clipped_counts)),
                   "nonfinite_values": int(np.sum(result.debug.nonfinite_counts)),
                   "gradient_evaluations_counted": int(result.debug.evaluations), "seconds": outcome.seconds})
    return _jsonable(record)


def spider_ledger(outcome: SpiderOutcome) -> dict:
    """The ledger (all public): the plan, the settings and the run's config, the public seed, where the secret seed
    came from and what the guarantee assumes."""
    plan = outcome.plan
    return _jsonable({"algorithm": "spider_sosp", "guarantee": "not private" if plan is None else plan.guarantee,
                      "private": False if plan is None else bool(plan.private),
                      "epsilon_spent": None if plan is None else float(plan.epsilon),
                      "dp_delta": None if plan is None else float(plan.dp_delta),
                      "mu": None if plan is None else float(plan.mu),
                      "sigma_rule": outcome.settings["sigma_rule"],
                      "sigma_rule_label": outcome.settings["sigma_rule_label"],
                      "plan_summary": None if plan is None else plan.summary(), "plan": _plan_record(plan),
                      "settings": {k: (None if k == "delta" and plan is None else _plain(v))
                                   for k, v in dataclasses.asdict(outcome.theory).items()},
                      "config": {k: _plain(v) for k, v in dataclasses.asdict(outcome.config).items()},
                      "seed": outcome.result.seed, "secret_seed_source": outcome.result.secret_seed_source,
                      "guarantee_condition": outcome.result.guarantee_condition})


def _csv(header, rows) -> str:
    return "\n".join([",".join(header), *(",".join(row) for row in rows)]) + "\n"


def spider_publication(outcome: SpiderOutcome, *, command, include_nonprivate: bool = False) -> dict[str, str]:
    """File name -> text of ``dpref run spider_sosp --output DIR`` (module doc): releases.csv, trace.csv, output.csv,
    diagnostics.json, ledger.json, manifest.json and, with include_nonprivate, nonprivate_diagnostics.json (NOT
    PRIVATE). Numbers are written as their shortest round-trip repr."""
    result, d = outcome.result, outcome.problem.d
    trace = result.trace
    releases = np.asarray(trace.released, dtype=np.float64)
    files = {"releases.csv": _csv(["t", *(f"release_{j}" for j in range(d))],
                                  ([str(t), *(_number(v) for v in releases[t])] for t in range(trace.steps)))}
    offsets = np.concatenate([[0], np.cumsum(np.asarray(trace.batch_sizes, dtype=np.int64))[:-1]])
    perturbed = set(int(t) for t in trace.perturbation_steps)
    files["trace.csv"] = _csv(
        ["t", "kind", "batch_size", "record_offset", "drift", "leaf", "perturbed"],
        ([str(t), trace.kinds[t], str(int(trace.batch_sizes[t])), str(int(offsets[t])), _number(trace.drift[t]),
          str(int(trace.leaves[t])), str(int(t in perturbed))] for t in range(trace.steps)))
    iterates = np.asarray(result.iterates, dtype=np.float64)
    population = outcome.population
    files["output.csv"] = _csv(
        ["t", *(f"x_{j}" for j in range(d)), "population_objective", "population_sosp_level"],
        ([str(t + 1), *(_number(v) for v in iterates[t]), _number(population["objective"][t]),
          _number(population["sosp_level"][t])] for t in range(iterates.shape[0])))
    files["diagnostics.json"] = json.dumps(_jsonable({"diagnostics": SPIDER_DIAGNOSTICS, **_diagnostics(outcome)}),
                                           indent=2) + "\n"
    files["ledger.json"] = json.dumps(spider_ledger(outcome), indent=2) + "\n"
    if include_nonprivate:
        files["nonprivate_diagnostics.json"] = json.dumps(spider_nonprivate(outcome), indent=2) + "\n"
    s = outcome.settings
    seeds = {"seed": outcome.result.seed, "data_seed": s["data_seed"],
             "data_stream": ["dpref run", "spider_sosp", s["problem"]],
             "start_stream": ["dpref run", "spider_sosp", "start"] if s["start"] == "random" else None,
             "algorithm_streams": "(\"spider_sosp\", \"permutation\") under seed; (\"spider_sosp\", \"noise\"), "
                                  "(\"spider_sosp\", \"perturbation\", t) under the secret seed"}
    return _runner.with_manifest(files, command=command, settings=s, seeds=seeds, summary=spider_summary(outcome))


# ---------------------------------------------------------------------------------------------------
# The table


_PROBLEM_LABELS = {"cosine": "cosine family, records z ~ N(0, 0.25 I)", "cosine-det": "cosine family, exact records",
                   "quadratic": "quadratic family, records on the sphere"}


def _point(record, point) -> str:
    return (f"level {_fmt(record[f'population_sosp_level_{point}'])} (|grad F| "
            f"{_fmt(record[f'population_grad_norm_{point}'])}, lambda_min "
            f"{_fmt(record[f'population_lambda_min_{point}'])}, F {_fmt(record[f'population_objective_{point}'])})")


def render_spider(record: dict) -> str:
    """The record of ``spider_summary`` as aligned text; its "nonprivate" part under a NOT PRIVATE heading."""
    private = record["epsilon_spent"] is not None
    o2 = record["o2_batch_sizes"]
    o2_text = ("no O2 step" if o2 is None else
               f"{o2['count']} O2 steps, b_t min {o2['min']}, median {_fmt(o2['median'])}, mean {_fmt(o2['mean'])}, "
               f"p90 {_fmt(o2['p90'])}, max {o2['max']} ({o2['total']} records)")
    rows = [
        ("algorithm", f"spider_sosp Algorithm 2 + 3 (Stochastic Spider, adaptive O2 batches, tree noise), "
                      f"{record['backend']} backend"),
        ("problem", f"{record['problem']}: {_PROBLEM_LABELS[record['problem']]}, d={record['d']}, "
                    f"n={record['samples']} "
                    f"records, G={_fmt(record['lipschitz'])}, M={_fmt(record['smoothness'])}, "
                    f"rho={_fmt(record['hessian_lipschitz'])}, start {record['start']} (B = F(x0) - inf F = "
                    f"{_fmt(record['loss_gap'])})"),
        ("settings", f"{record['mode']} mode: alpha={_fmt(record['alpha'])}, kappa={_fmt(record['kappa'])}, "
                     f"gamma={_fmt(record['gamma'])}, threshold={_fmt(record['threshold'])}, "
                     f"Gamma={record['freeze_steps']}, zeta={_fmt(record['perturbation_scale'])}, "
                     f"sigma={_fmt(record['noise_std'])}, eta=1/M={_fmt(record['step_size'])}, T={record['horizon']}"
                     + ("" if record["perturb"] else "; perturbation OFF")
                     + ("; drift reset at perturbations (literal line 10)" if record["reset_drift_on_perturb"]
                        else "")),
        ("steps", f"{record['steps']} ({record['halt_reason']}"
                  + (f": the next step needed {record['next_batch_size']} records" if record["next_batch_size"] else "")
                  + f"); {record['gradient_evaluations']} gradient evaluations"),
        ("batches", f"O1: {record['o1_steps']} x b = {record['o1_batch_size']}; {o2_text}"),
        ("records", f"{record['records_used']} of {record['records_available']} used (one pass)"),
        ("perturbations", f"{record['perturbations']} ({record['perturbations_at_saddle']} at a saddle, "
                          f"{record['escapes']} escaped: F down by >= {_fmt(record['escape_decrease'])} before "
                          f"the next one); start is {'a' if record['start_is_saddle'] else 'not a'} saddle"),
    ]
    if private:
        verdict = "private" if record["private"] else "NOT private at the target"
        over = "" if record["private"] else f" (delta(target eps) = {_fmt(record['delta_at_target'])})"
        rows += [
            ("privacy", f"{record['adjacency'].replace('_', '-')} neighbours: ({_fmt(record['epsilon_spent'])}, "
                        f"{_fmt(record['delta'])})-DP, "
                        f"mu = {_fmt(record['mu'])} ({record['guarantee']}); {verdict}{over}"),
            ("sigma rule", f"{record['sigma_rule']}: {record['sigma_rule_label']}"),
            ("epsilon", f"spent {_fmt(record['epsilon_spent'])} at delta {_fmt(record['delta'])}, target "
                        f"{_fmt(record['epsilon'])}; {record['tree_scope']} tree, {record['node_count']} nodes per "
                        f"record ({record['count_rule']}), sbar = {_fmt(record['sbar'])}"),
            ("secret seed", f"{record['secret_seed_source']}: {record['guarantee_condition']}"),
        ]
    else:
        rows.append(("privacy", "not private (epsilon = inf: no noise)"))
    rows += [
        ("population", "F_P in closed form (public); never the training records"),
        ("  x_0", _point(record, "initial")),
        ("  last x_T", _point(record, "last")),
        ("  best iterate", f"t = {record['min_step']}: " + _point(record, "min")),
        ("  alpha-SOSP", (f"first at t = {record['first_alpha_sosp_step']}" if record["first_alpha_sosp_step"] else
                          "none of the iterates") + f" (alpha = {_fmt(record['alpha'])}, Lemma 3.10)"),
        ("  descent", ("F - inf F < B/10 first at t = " + str(record["first_tenth_gap_step"]))
         if record["first_tenth_gap_step"] else "F - inf F stays >= B/10 at every iterate"),
    ]
    if record["problem"] == "quadratic":
        rows.append(("  domain", f"max |x_t| = {_fmt(record['max_iterate_norm'])} (G holds on |x| <= "
                                 f"{_fmt(record['domain_radius'])}; records are clipped to G anyway)"))
    if record.get("output"):
        rows.append(("files", record["output"]))
    nonprivate = record.get("nonprivate")
    extra = []
    if nonprivate:
        extra = [("training level", f"x_0 {_fmt(nonprivate['training_sosp_level_initial'])}, last "
                                    f"{_fmt(nonprivate['training_sosp_level_last'])}, best "
                                    f"{_fmt(nonprivate['training_sosp_level_min'])}"),
                 ("estimate error", f"max |nabla_t - grad F(x_t)| {_fmt(nonprivate['estimate_error_max'])}, median "
                                    f"{_fmt(nonprivate['estimate_error_median'])}"),
                 ("counts", f"{nonprivate['clipped_values']} clipped, {nonprivate['nonfinite_values']} non-finite "
                            f"replaced, {nonprivate['gradient_evaluations_counted']} evaluations"),
                 ("seconds", f"{nonprivate['seconds']:.3g}")]
    width = max(len(k) for k, _ in rows + extra)
    text = "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
    if extra:
        text += ("\n\nNOT PRIVATE — computed on the training records outside the privacy plan; do not publish:\n"
                 + "\n".join(f"{k:<{width}}  {v}" for k, v in extra))
    return text
