"""nsnc_improved (Kornowski, Liu, Talwar, ICML 2025) end to end on the built-in ridge problems: Algorithm 2 with the
single-pass oracles (Algorithm 3, its common-random-numbers variant, Algorithm 5) or the multi-pass oracles
(Algorithm 4 and its first-order variant), the theory's settings, public diagnostics, and what such a run may
publish. The library behind ``dpref run nsnc_improved``; the companion of ``reference.runner.run_zo_o2nc``, whose
problems, Goldstein interval, proxy, memory helpers and progress bar it reuses.

Oracles (keys of ``NSNC_ORACLES`` -> ``reference.algorithms.nsnc_improved`` oracle): ``single-pass`` (Algorithm 3),
``single-pass-crn`` (Algorithm 3 with the same directions at z_t and z_(t−1): not in the paper), ``first-order``
(Algorithm 5, App. C; the per-record gradient ∇f(x; z) = L·φ'(<a, x> − c)·a, with the midpoint slope at a kink),
``multi-pass`` (Algorithm 4, ERM) and ``multi-pass-first-order`` (Algorithm 4 with Algorithm 5's estimator).

Problems (``reference.runner.build_ridge_problem``, as ``dpref run zo_o2nc``): f(x; z) = L·φ(<a, x> − c), φ(r) =
||r| − 1| (wshape), min(|r|, 1) (capped) or |r| (abs), L = 1, a population of N ridges (a uniform on the sphere,
c ~ N(0, 0.5²)) from the data seed; the M records and the H held-out rows (default M) are draws from it, each with
its own stream; x0 = (5/√d)·(1, …, 1). Φ = F_population(x0) (public: the population is fixed by the data seed, and
inf F ≥ 0). For the multi-pass oracles the theory's Φ bounds the EMPIRICAL gap F̂(x0) − inf F̂; F_population(x0)
stands in for it (a public number: the empirical one is computed on the records). Φ enters the settings only (D,
M, T), never the privacy plan.

Settings (``reference.algorithms.nsnc_improved_theory``): single pass ``single_pass_settings(M, d, L, Φ, α, ε, δ,
variant, accountant, oracle, directions, clip_hardening)`` (Theorem 3.1 / C.4); multi pass ``multi_pass_settings(M,
d, L, Φ, α, β, ε, δ, variant)`` (Theorem 4.1; it is stated for Algorithm 4, and its D, M, T, Σ and γ serve the
first-order variant too). The theory's number of directions per record m (its privacy floor, step 6 of the single
pass, step 3 of the multi pass) is ~10⁶–10⁷ at CPU sizes (hundreds for the CRN variant): the practical mode is
``directions=m``, an explicit m, with which the accounting uses min(worst case, high probability) per step kind
(``sensitivity_mode="auto"``) or the worst case (``"worst_case"``). The run's σ is the theory's when nothing differs
from it (single pass, "auto"), else calibrated for the run's oracle, m and sensitivity mode (the exact accountant;
single pass with ``accountant="paper"``: Proposition 2.5's printed rule, nsnc_improved.E3), rounded up to float64.
The step size η = D/(G1√M) and the certified bound (Φ + 2Lα)/(DT) + (5/2)G1/√M + 2G0 (Proposition 2.6 corrected,
nsnc_improved.E5) are recomputed for the run's m and σ (G0 from Lemma 3.5 / C.3 / 4.4 explicitly, at τ = Σ with
bitlen(Σ) tree nodes): with the theory's m and σ they are the theory's values.

Budget. Before anything is built beyond the population, the run's loss (gradient) evaluations are counted from the
settings (``planned_evaluations``: single pass ⌈T/Σ⌉·B1·2m_reset + (T − ⌈T/Σ⌉)·B2·4m_increment, first order
⌈T/Σ⌉·B1 + (T − ⌈T/Σ⌉)·B2·2m; multi pass N1·n·2m + N2·n·4m, first order N1·n·m + N2·n·2m) and a run beyond
``EVALUATION_BUDGET[backend]/(d + 1)`` evaluations (each reads d + 1 numbers: 10⁹ at d = 4 on the fast backend,
about 5 minutes on one core; 10⁷ on the reference backend) or ``STEP_BUDGET`` steps is refused
(``BudgetExceeded``: the count, the budget, and the options that reduce it — the largest --directions that fits,
--samples, --target-stationarity, --smoothing-radius). The memory is checked twice: the data before anything is
built (``check_nsnc_memory`` without the settings), everything (paths, one step's arrays) once the settings are
known (``nsnc_memory_parts``).

Threat model (docs/design.md). Everything a run receives or writes is public except its secret seed (the tree /
Gaussian noise); nothing computed on the private training records leaves a run unless the privacy plan accounts
for it. Neighbouring data sets replace one record (§2), so the number of records M is public. What
``nsnc_publication`` writes, and why each part is public:

* ``releases.csv`` — k, t, release_0..release_{d−1}: the released g̃_t of every step (block k, position t). The
  privacy plan covers exactly these values.
* ``blocks.csv`` — k, heldout_objective, population_objective, average_0..: the block averages x̄_k and F(x̄_k) on the
  held-out draws and the population. x̄_k is post-processing of the releases with the public segment points s_t
  (clipped OGD is a function of the releases); the held-out draws (stream ("dpref run", PROBLEM, "held-out")) and
  the population are public, never the training records.
* ``output.csv`` — j, output: the released x̄_{k*} (k* from the public seed).
* ``diagnostics.json`` — at x0, at the output and at the final iterate, on the held-out draws and on the
  population: F, the Goldstein norm ‖∇F‖_{2α} as an interval [lower, upper] (``reference.runner.goldstein_interval``:
  the min-norm point of the gradients at the point and at --goldstein-samples points drawn in the ball from the
  public stream ("dpref run", "zo_o2nc", "goldstein"); a ridge-by-ridge lower bound), and the proxy
  ‖(1/M) Σ_t ∇F_α(z_t)‖ over the output block's query points z_t (post-processing) — an upper bound on
  ‖∇F(x̄)‖_{2α} when their spread is ≤ α, which M·D ≤ α/4 makes certain. Functions of the output and public data.
* ``ledger.json`` — the ``NsncPrivacyPlan`` (which guarantee holds: "worst-case", "high-probability" with δ_fail
  counted in δ, or "clip-hardened"; ε spent at δ, μ, the sensitivities and their branches), the algorithm's
  ``RunSettings``, the public seed, where the secret seed came from and what the guarantee assumes, k*. Fixed by
  public inputs; none is computed on the data.
* ``manifest.json`` — the command (any --noise-seed value replaced by ``<secret>``), the public settings, the
  theory's settings and the run's, the planned number of evaluations (a function of the settings, not of the
  data), the seeds and stream keys, package versions, the time, and the summary.

Not published unless asked for (``include_nonprivate=True``, ``--include-nonprivate``): ``nonprivate_diagnostics.json``,
marked NOT PRIVATE — F and the Goldstein interval on the TRAINING draws (the ERM objective of the multi-pass
oracles), the counted evaluations, the replaced non-finite values and clip counts, the noiseless sums' norms and
the wall-clock time. The algorithm's noiseless sums and noise themselves are never written (their norms only, on
request): the first is computed on the data outside the mechanism, the second derives from the secret seed.

The secret seed appears nowhere (``reference.secrets``): not in the outcome's settings, the files or the summary;
a value given must differ from the public seed and the data seed.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time

import mpmath
import numpy as np

from . import smoothing
from .algorithms import nsnc_improved as reference_nsnc
from .algorithms import nsnc_improved_privacy as nsnc_privacy
from .algorithms.nsnc_improved import SENSITIVITY_MODES, settings_arguments
from .algorithms.nsnc_improved_theory import (
    ACCOUNTANTS,
    VARIANTS,
    multi_pass_settings,
    multi_pass_variance_bound,
    o2nc_certified_bound,
    single_pass_settings,
    single_pass_variance_bound,
)
from .rng import SEED_BOUND
from .runner import (  # the shared pieces of the zo_o2nc runner (private ones too: one implementation each)
    BACKENDS,
    GOLDSTEIN_SAMPLES_MAX,
    O2NC_PROBLEMS,
    RIDGE_LIPSCHITZ,
    RIDGE_OFFSET_SCALE,
    RIDGE_TAU,
    SMOOTHING_RADIUS_RANGE,
    X1_NORM,
    MemoryPart,
    backend_module,
    fast_twin_available,
    RidgeProblem,
    _BASE,
    _FLOAT,
    _OBJECT,
    _check_choice,
    _check_parts,
    _flatten_diagnostics,
    _fmt,
    _interval,
    _jsonable,
    _name_setting,
    _o2nc_diagnostics,
    o2nc_family_files,
    _param_name,
    _RidgeLoss,
    _RoundProgress,
    build_ridge_problem,
)
from .secrets import secret_seed
from .validation import check_int, check_probability, check_real

__all__ = [
    "NSNC_ORACLES",
    "NSNC_PROBLEMS",
    "NSNC_VARIANTS",
    "NSNC_ACCOUNTANTS",
    "NSNC_SENSITIVITY_MODES",
    "NSNC_NOISES",
    "NSNC_DEFAULTS",
    "NSNC_DIAGNOSTICS",
    "NOT_PRIVATE_NSNC",
    "EVALUATION_BUDGET",
    "STEP_BUDGET",
    "SamplesNeeded",
    "BudgetExceeded",
    "SettingRefused",
    "NsncPrepared",
    "NsncOutcome",
    "planned_evaluations",
    "evaluation_budget",
    "nsnc_memory_parts",
    "check_nsnc_memory",
    "fast_nsnc_available",
    "prepare_nsnc_improved",
    "execute_nsnc_improved",
    "run_nsnc_improved",
    "nsnc_summary",
    "nsnc_nonprivate",
    "nsnc_ledger",
    "nsnc_publication",
    "render_nsnc",
]

#: CLI name -> oracle of reference.algorithms.nsnc_improved (and of reference.fast.nsnc_improved).
NSNC_ORACLES = {"single-pass": "single_pass", "single-pass-crn": "single_pass_crn", "first-order": "first_order",
                "multi-pass": "multi_pass", "multi-pass-first-order": "multi_pass_first_order"}
_SINGLE = ("single_pass", "single_pass_crn", "first_order")
_FIRST_ORDER = ("first_order", "multi_pass_first_order")
NSNC_PROBLEMS = O2NC_PROBLEMS
NSNC_VARIANTS = VARIANTS
NSNC_ACCOUNTANTS = ACCOUNTANTS
NSNC_SENSITIVITY_MODES = SENSITIVITY_MODES
NSNC_NOISES = ("gaussian", "none")

#: Defaults of ``run_nsnc_improved`` (and ``dpref run nsnc_improved``). samples: single pass; multi_pass_samples:
#: the multi-pass oracles (every step reads every record). directions: m per record, the practical mode (the
#: theory's privacy floor, ``directions="theory"``, is ~10⁶–10⁷ at these sizes and beyond the evaluation budget; the
#: plan stays valid at any m, with min(worst case, high probability) per step kind).
#: target_stationarity: β of Theorem 4.1 (multi pass only; T grows like β^−3, and the 2α-Goldstein norm of an
#: L-Lipschitz F never exceeds L = 1, so β ≥ 1 certifies nothing a start point does not already have: at CPU scale
#: the multi-pass settings are run for their D, M, T and Σ).
NSNC_DEFAULTS = {"problem": "wshape", "d": 4, "samples": 20_000, "multi_pass_samples": 5_000, "population": 1000,
                 "epsilon": 1.0, "delta": 1e-6, "smoothing_radius": 0.25, "directions": 64,
                 "variant": "corrected", "accountant": "exact", "clip_hardening": False, "sensitivity_mode": "auto",
                 "target_stationarity": 1.5, "goldstein_samples": 256}

#: Evaluations × (d + 1) a run may need (each evaluation reads a point and a record): 10⁹ evaluations at d = 4 on
#: the fast backend (about 0.2–0.3 µs each there, i.e. about 5 minutes on one core), 10⁷ on the reference backend
#: (about 20 µs each). ``evaluation_budget(backend, d)`` is the count.
EVALUATION_BUDGET = {"fast": 5 * 10**9, "reference": 5 * 10**7}
#: Steps T = K·M a run may take (a step of either backend is a Python-level iteration, 0.2–0.4 ms on the fast one).
STEP_BUDGET = {"fast": 10**6, "reference": 10**6}

NOT_PRIVATE_NSNC = ("NOT PRIVATE: computed on the private training data outside the privacy plan (training-set "
                    "objective and stationarity, evaluation, replacement and clip counts, norms of the noiseless "
                    "sums, wall-clock time); do not publish")

#: What the diagnostics of an nsnc_improved run are (the record's "diagnostics" entry).
NSNC_DIAGNOSTICS = {
    "data": "heldout_*: the held-out draws (rows drawn from the population with their own stream, never the training "
            "draws); population_*: the population the records are drawn from (public, fixed by the data seed): the "
            "exact population risk; never the training data",
    "objective": "*_objective_*: F(x), the weighted mean loss",
    "stationarity": "*_goldstein_lower/upper_*: an interval holding the Goldstein norm |grad F(x)|_{2 alpha} "
                    "(radius 2 alpha, the norm Proposition 2.6 and Lemma 2.4 certify); upper: min-norm point of the "
                    "gradients at the point and at goldstein_samples points drawn in the open ball (public stream); "
                    "lower: for the direction of that point, the sum over the ridges of the smallest slope any point "
                    "of the ball can give",
    "proxy": "*_proxy_output: |(1/M) sum_t grad F_alpha(z_t)| over the output block's query points (the quantity "
             "Proposition 2.6 bounds); an upper bound on |grad F(x_out)|_{2 alpha} when the spread max_t |z_t - x_out| "
             "<= alpha (always: M D <= alpha/4)",
    "points": "_initial at x0, _output at the released block average x_out, _final at the last iterate x_T",
}


# ---------------------------------------------------------------------------------------------------
# Refusals that name the settings (``describe(cli=True)``: command-line options)


class SamplesNeeded(ValueError):
    """The records cannot support the theory's settings: a single-pass run cannot hold one block (K < 1), or the
    multi-pass settings cannot certify the target β at ``samples`` records. needed: a record count that suffices
    (None when none does, multi pass). ``describe(cli=True)`` names the command-line options."""

    def __init__(self, oracle: str, samples: int, needed: int | None, *, target: float | None = None,
                 bound: float | None = None):
        self.oracle, self.samples, self.needed, self.target, self.bound = oracle, samples, needed, target, bound
        super().__init__(self.describe())

    def describe(self, cli: bool = False) -> str:
        samples = _name_setting("samples", self.samples, cli)
        if self.oracle in _SINGLE:
            options = ", ".join(_param_name(p, cli) for p in ("d", "smoothing_radius", "epsilon"))
            return (f"{samples} cannot hold one block of the single-pass settings (Theorem 3.1/C.4: the records "
                    f"allow fewer than M steps); more records are needed: {_name_setting('samples', self.needed, cli)}"
                    f" suffices ({options} set M and the tree size)")
        target = _name_setting("target_stationarity", self.target, cli)
        raise_target = f"raise {_param_name('target_stationarity', cli)}"
        if self.needed is None:
            return (f"no number of records certifies {target} with Theorem 4.1's settings (the terms that do not "
                    f"depend on the records already exceed it); {raise_target} or "
                    f"{_param_name('smoothing_radius', cli)}")
        return (f"{samples} cannot certify {target} with Theorem 4.1's settings (certified bound {self.bound:.4g}); "
                f"{_name_setting('samples', self.needed, cli)} is the smallest that suffices, or {raise_target}")


class BudgetExceeded(ValueError):
    """A run beyond the evaluation budget (``EVALUATION_BUDGET``) or the step budget (``STEP_BUDGET``) of its backend,
    refused before it starts. kind: "evaluations" or "steps"; needed, budget: the counts; reduce: the message's
    advice as (parameter, value or None) pairs; fits: the largest explicit number of directions that fits, or None.
    ``describe(cli=True)`` names the command-line options."""

    def __init__(self, kind: str, needed: int, budget: int, backend: str, detail: str, reduce, fits: int | None):
        self.kind, self.needed, self.budget, self.backend = kind, int(needed), int(budget), backend
        self.detail, self.reduce, self.fits = detail, list(reduce), fits
        super().__init__(self.describe())

    def describe(self, cli: bool = False) -> str:
        advice = []
        if self.fits is not None:
            advice.append(f"lower {_param_name('directions', cli)} (at most {self.fits} fits)")
        for param, how in self.reduce:
            advice.append(f"{how} {_param_name(param, cli)}")
        what = "evaluations" if self.kind == "evaluations" else "steps"
        return (f"the run needs {self.needed:.3g} {what} ({self.detail}), more than the {self.backend} backend's "
                f"budget of {self.budget:.3g} {what}; {' or '.join(advice) if advice else 'no setting reduces it'}")


class SettingRefused(ValueError):
    """A setting the problem refuses once its public numbers are known (e.g. α > Φ/L). ``describe(cli=True)`` names
    the command-line option."""

    def __init__(self, param: str, value, rule: str):
        self.param, self.value, self.rule = param, value, rule
        super().__init__(self.describe())

    def describe(self, cli: bool = False) -> str:
        return f"{_param_name(self.param, cli)} must be {self.rule}, got {self.value:g}"


def _smoothing_refusal(radius: float, gap: float) -> SettingRefused:
    return SettingRefused("smoothing_radius", radius, f"<= F(x0)/L = {gap:.6g} (the assumption alpha <= Phi/L of "
                                                      "Theorems 3.1, 4.1 and C.4; Phi = F_population(x0))")


# ---------------------------------------------------------------------------------------------------
# Counting: evaluations, memory


def _resets(T: int, tree_size: int) -> tuple[int, int]:
    resets = -(-T // tree_size)
    return resets, T - resets


def planned_evaluations(oracle: str, *, T: int, tree_size: int, B1: int | None, B2: int | None, n: int,
                        m_reset: int, m_increment: int) -> int:
    """The loss (zeroth order) or gradient (first order) evaluations of a run, from its settings alone (module doc);
    ``NonPrivateDiagnostics.evaluations`` of the run equals it. oracle: an algorithm oracle name."""
    resets, increments = _resets(int(T), int(tree_size))
    if oracle in _SINGLE:
        if oracle == "first_order":
            return resets * B1 + increments * B2 * 2 * m_increment
        return resets * B1 * 2 * m_reset + increments * B2 * 4 * m_increment
    if oracle == "multi_pass_first_order":
        return n * (resets * m_reset + increments * 2 * m_increment)
    return n * (resets * 2 * m_reset + increments * 4 * m_increment)


def evaluation_budget(backend: str, d: int) -> int:
    """The evaluations a run may need on ``backend`` at dimension d: ``EVALUATION_BUDGET[backend] // (d + 1)``."""
    return max(1, EVALUATION_BUDGET[backend] // (int(d) + 1))


def nsnc_memory_parts(oracle: str, *, d: int, samples: int, population: int = 1000, held_out_n: int | None = None,
                      goldstein_samples: int = 256, publish: bool = False, steps: int | None = None,
                      step_points: int | None = None) -> list[MemoryPart]:
    """The parts of the memory an nsnc_improved run needs (``reference.runner.MemoryPart``, largest first).

    With M = samples, n = population, h = held_out_n (default M): lasting — the training draws 8·M·(d + 2), the
    population 8·n·(d + 1); once the settings are known (steps T and step_points P, the most points one step
    evaluates: the per-step evaluations of ``planned_evaluations``), the path of the run, T·(6·(112 + 8d) + 8·(9d + 5))
    bytes (the reference's per-step arrays, then the stacked releases, noiseless sums, noise, query points, iterates,
    steps, segment points, counts and the progress counts); transient (the largest counts) — the held-out draws
    8·(h + n), one step's arrays 8·4·P·(d + 1) (the fast backend's points, values, directions and terms: about
    2.5·P·d + P numbers), the diagnostics (chunks of 16 MB and the Goldstein points) and, with ``publish``, the text
    of the files (about 25 bytes per released number); fixed — 64 MiB. Without the settings (steps None) only the
    data parts are counted: the check before anything is built.
    """
    M, n, d = int(samples), int(population), int(d)
    h = M if held_out_n is None else int(held_out_n)
    held = "samples" if held_out_n is None else "held_out_n"
    multi = NSNC_ORACLES.get(oracle, oracle) not in _SINGLE
    parts: list[MemoryPart] = []

    def add(what, size, params, transient=False):
        if size > 0:
            parts.append(MemoryPart(what, int(size), tuple(params), transient))

    add("training draws (samples x d)", _FLOAT * M * (d + 2), ("samples", "d"))
    add("population rows (population x d)", _FLOAT * n * (d + 1), ("population", "d"))
    add("held-out draws", _FLOAT * (h + n), (held, "population"), True)
    if steps is not None:
        T = int(steps)
        path_params = ("target_stationarity", "smoothing_radius", "d") if multi else ("samples", "d")
        add("path of the run (steps x d)", T * (6 * (_OBJECT + _FLOAT * d) + _FLOAT * (9 * d + 5)), path_params)
        add("one step's arrays (points x d)", _FLOAT * 4 * int(step_points) * (d + 1),
            ("directions", "samples" if multi else "d", "d"), True)
        if publish:
            add("text of the published files", 25 * 2 * T * d, path_params, True)
    add("diagnostics (chunks and Goldstein points)", 3 * 2**24 + 4 * _FLOAT * (int(goldstein_samples) + 1) * d,
        ("goldstein_samples",), True)
    add("fixed costs", _BASE, ())
    parts.sort(key=lambda part: -part.bytes)
    return parts


def check_nsnc_memory(oracle: str, *, memory_limit: int | None = None, directions_value: int | None = None,
                      target_stationarity: float | None = None, smoothing_radius: float | None = None,
                      **sizes) -> int:
    """The estimate of ``nsnc_memory_parts(oracle, **sizes)`` if it is within the limit (None: the memory available
    now), else ``reference.runner.MemoryLimitError`` naming the settings to reduce (samples, d, population,
    held_out_n, directions — ``directions_value``, the m of the run)."""
    values = {key: value for key, value in sizes.items() if isinstance(value, int) and not isinstance(value, bool)}
    if values.get("held_out_n") is None:
        values["held_out_n"] = values.get("samples")
    values.pop("step_points", None)
    values.pop("steps", None)
    values["directions"] = directions_value
    values["target_stationarity"] = None  # raised, not reduced: named by the budget refusal instead
    values["smoothing_radius"] = None
    return _check_parts(nsnc_memory_parts(oracle, **sizes), values, memory_limit)


def fast_nsnc_available() -> bool:
    """Whether the vectorized twin ``reference.fast.nsnc_improved`` is installed."""
    return fast_twin_available("nsnc_improved")


def _nsnc_module(backend: str):
    return backend_module(backend, "nsnc_improved", reference_nsnc)


# ---------------------------------------------------------------------------------------------------
# The per-record gradient (first-order oracles)


class _RidgeGradient:
    """∇f(x; z) = L·φ'(<a, x> − c)·a, z = (a, c), with ``reference.smoothing.ridge_profile_slope``'s midpoint slope
    at a kink (a Clarke subgradient; the kinks have measure zero under the ball perturbations of Algorithm 5). Like
    ``reference.runner._RidgeLoss``: a 1-d point and row (the reference) give a (d,) array; arrays broadcast over their
    leading axes (points (..., d), rows (..., d + 1)) and give (..., d), with the same operations, so both conventions
    give bitwise the same values. Every call counts its evaluations into ``progress``."""

    def __init__(self, profile: str, tau: float, lipschitz: float, d: int, progress=None):
        self.profile, self.tau, self.lipschitz, self.d = profile, float(tau), float(lipschitz), d
        self.progress = progress

    def __call__(self, x, z):
        d = self.d
        x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
        r = np.sum(x * z[..., :d], axis=-1) - z[..., d]
        if self.progress is not None:
            self.progress.add(int(np.prod(np.shape(r), dtype=np.int64)))
        slope = np.asarray(smoothing.ridge_profile_slope(r, self.profile, self.tau), dtype=np.float64)
        return (self.lipschitz * slope)[..., None] * z[..., :d]


# ---------------------------------------------------------------------------------------------------
# Preparing a run: checks, Φ, the theory's settings, the run's σ and η, budgets, memory


def _float_up(value) -> float:
    """The smallest float64 ≥ value (σ is rounded up: a run is at least as noisy as calibrated)."""
    out = float(value)
    if mpmath.mpf(out) < value:
        out = math.nextafter(out, math.inf)
    return out


@dataclasses.dataclass(frozen=True)
class NsncPrepared:
    """A run decided but not started (``prepare_nsnc_improved``): every check passed, the budgets and the memory
    fit. settings: the public settings (no secret seed). theory: the ``SinglePassSettings`` / ``MultiPassSettings``.
    run: the run's own values (oracle, T, K, M, Σ, B1, B2, m_reset, m_increment, D, η, σ's, γ, G0, G1, certified
    bound, planned evaluations). arguments: the keyword arguments of ``nsnc_improved`` (no data, x0 or seeds).
    secret: the ``SecretSeed`` (None without noise; its repr hides the value)."""

    settings: dict
    theory: object
    run: dict
    arguments: dict
    secret: object
    memory_limit: int | None


def _theory(oracle, samples, d, gap, alpha, epsilon, delta, *, variant, accountant, directions, clip_hardening,
            target):
    """The theory's settings, or SamplesNeeded naming a record count that suffices."""
    L = RIDGE_LIPSCHITZ
    if oracle in _SINGLE:
        try:
            return single_pass_settings(samples, d, L, gap, alpha, epsilon, delta, variant=variant,
                                        accountant=accountant, oracle=oracle, directions=directions,
                                        clip_hardening=clip_hardening, allow_vacuous=True)
        except ValueError as exc:
            found = re.search(r"cannot hold one block.*n = (\d+) suffices", str(exc))
            if not found:
                raise
            raise SamplesNeeded(oracle, samples, int(found.group(1))) from None
    try:
        return multi_pass_settings(samples, d, L, gap, alpha, target, epsilon, delta, variant=variant,
                                   allow_vacuous=True)
    except ValueError as exc:
        found = re.search(r"cannot certify target_stationarity.*certified bound is ([0-9.e+-]+);", str(exc))
        if not found:
            raise
        needed = re.search(r"n = (\d+) is the smallest", str(exc))
        raise SamplesNeeded(oracle, samples, None if needed is None else int(needed.group(1)), target=target,
                            bound=float(found.group(1))) from None


def _run_values(oracle, theory, directions, sensitivity_mode, accountant, clip_hardening, n):
    """The run's m, σ's, G0, G1, η and certified bound (module doc): the theory's where nothing differs."""
    s = theory
    d, L, alpha, D, sigma_size = s.d, s.lipschitz, s.smoothing_radius, s.step_bound, s.tree_size
    common = dict(d=d, lipschitz=L, smoothing_radius=alpha, step_bound=D, tree_size=sigma_size, gamma=s.gamma,
                  epsilon=s.epsilon, delta=s.delta, sensitivity_mode=sensitivity_mode)
    if oracle in _SINGLE:
        m_reset, m_increment = s.m_reset, s.m_increment
        with mpmath.workdps(max(mpmath.mp.dps, 30)):
            if sensitivity_mode == "auto":
                sigma = float(s.noise_std)
            else:
                sigma = _float_up(nsnc_privacy.nsnc_single_pass_noise_std(
                    oracle=oracle, B1=s.B1, B2=s.B2, m_reset=m_reset, m_increment=m_increment, rule=accountant,
                    clip_hardening=clip_hardening, **common))
        sigmas = (sigma,)
        same = sigma == float(s.noise_std)
        if same:
            G0, G1, eta, bound = s.G0, s.G1, s.step_size, s.certified_bound
        else:
            variance = single_pass_variance_bound(sigma_size, d=d, lipschitz=L, smoothing_radius=alpha, step_bound=D,
                                                  B1=s.B1, B2=s.B2, m_reset=m_reset, m_increment=m_increment,
                                                  noise_std=sigma, oracle=oracle)
            # the theory counts bitlen(Σ) tree nodes at τ = Σ (a bound for every τ ≤ Σ); the lemma counts popcount(τ)
            variance += d * sigma**2 * (sigma_size.bit_length() - bin(sigma_size).count("1"))
            G0 = math.sqrt(variance)
            G1 = L + G0
            eta = D / (G1 * math.sqrt(s.M))
            bound = o2nc_certified_bound(s.initial_gap, L, alpha, D, s.T, s.M, G0, G1)
        B1, B2 = s.B1, s.B2
    else:
        m = s.m if directions is None else directions
        m_reset = m_increment = m
        theory_sigmas = (float(s.noise_std_reset),
                         None if s.noise_std_increment is None else float(s.noise_std_increment))
        if oracle == "multi_pass" and directions is None and sensitivity_mode == "auto":
            sigmas = theory_sigmas  # calibrated at the privacy floor m_privacy <= m: the plan at m is never worse
        else:
            with mpmath.workdps(max(mpmath.mp.dps, 30)):
                s1, s2 = nsnc_privacy.nsnc_multi_pass_noise_stds(oracle=oracle, n=n, T=s.T, m=m, rule="exact",
                                                                 **common)
            sigmas = (_float_up(s1), None if s2 is None else _float_up(s2))
        if sigmas == theory_sigmas and m == s.m and oracle == "multi_pass":
            G0, G1, eta, bound = s.G0, s.G1, s.step_size, s.certified_bound
        else:
            G0 = math.sqrt(multi_pass_variance_bound(sigma_size, d=d, lipschitz=L, n=n, m=m,
                                                     noise_std_reset=sigmas[0],
                                                     noise_std_increment=sigmas[1] or 0.0, oracle=oracle))
            G1 = L + G0
            eta = D / (G1 * math.sqrt(s.M))
            bound = o2nc_certified_bound(s.initial_gap, L, alpha, D, s.T, s.M, G0, G1)
        B1 = B2 = None
    resets, increments = _resets(s.T, sigma_size)
    return {"oracle": oracle, "n": n, "T": s.T, "K": s.K, "M": s.M, "tree_size": sigma_size, "resets": resets,
            "increments": increments, "B1": B1, "B2": B2, "m_reset": m_reset, "m_increment": m_increment,
            "step_bound": D, "step_size": eta, "noise_stds": sigmas, "gamma": float(s.gamma), "G0": G0, "G1": G1,
            "certified_bound": bound,
            "records_used": s.records_used,
            "evaluations_planned": planned_evaluations(oracle, T=s.T, tree_size=sigma_size, B1=B1, B2=B2, n=n,
                                                       m_reset=m_reset, m_increment=m_increment)}


def _check_budgets(run: dict, *, oracle, backend, d, directions, multi) -> None:
    """BudgetExceeded for a run beyond ``STEP_BUDGET`` steps or ``evaluation_budget(backend, d)`` evaluations."""
    T = run["T"]
    if T > STEP_BUDGET[backend]:
        reduce = ([("target_stationarity", "raise"), ("smoothing_radius", "raise")] if multi else
                  [("samples", "reduce")])
        raise BudgetExceeded("steps", T, STEP_BUDGET[backend], backend,
                             "T = K·M steps of Algorithm 2" + ("" if multi else ", about samples/2"), reduce, None)
    needed, budget = run["evaluations_planned"], evaluation_budget(backend, d)
    if needed <= budget:
        return
    m_reset, m_inc = run["m_reset"], run["m_increment"]
    # evaluations are affine in an explicit m (m_reset = m_increment = m; Algorithm 5's reset uses one perturbation)
    at_one = planned_evaluations(oracle, T=T, tree_size=run["tree_size"], B1=run["B1"], B2=run["B2"],
                                 n=run["n"], m_reset=1, m_increment=1)
    at_two = planned_evaluations(oracle, T=T, tree_size=run["tree_size"], B1=run["B1"], B2=run["B2"],
                                 n=run["n"], m_reset=1 if oracle == "first_order" else 2, m_increment=2)
    per_m, fixed = at_two - at_one, 2 * at_one - at_two
    fits = (budget - fixed) // per_m if per_m > 0 else None
    fits = fits if fits is not None and fits >= 1 else None
    what = "gradient" if oracle in _FIRST_ORDER else "loss"
    source = "the theory's privacy floor" if directions is None else "given"
    passes = (f"every step reads all {run['n']} records" if multi else
              f"B1 = {run['B1']} records at each of {run['resets']} resets, B2 = {run['B2']} at {run['increments']} "
              "increments")
    detail = (f"{what} evaluations of T = {T} steps, {passes}, m = ({m_reset}, {m_inc}) directions per record "
              f"({source}); the budget is {EVALUATION_BUDGET[backend]:.3g}/(d + 1) at d = {d}")
    reduce = ([("samples", "reduce"), ("target_stationarity", "raise")] if multi else [("samples", "reduce")])
    raise BudgetExceeded("evaluations", needed, budget, backend, detail, reduce, fits)


def _check_directions(directions):
    """directions: a whole number ≥ 1, or "theory" (returned as None: the theory's privacy floor)."""
    if isinstance(directions, str):
        if directions != "theory":
            raise ValueError(f"directions must be a whole number >= 1 or 'theory' (the theory's privacy floor), got "
                             f"{directions!r}")
        return None
    if directions is None:
        raise TypeError("directions must be a whole number >= 1 or 'theory' (the theory's privacy floor), got None")
    return check_int("directions", directions, minimum=1)


def prepare_nsnc_improved(oracle: str = "single-pass", *, problem: str = "wshape", d: int = 4,
                          samples: int | None = None, population: int = 1000, held_out_n: int | None = None,
                          data_seed: int = 0, epsilon: float = 1.0, delta: float = 1e-6,
                          smoothing_radius: float = 0.25, directions: int | str = 64, variant: str = "corrected",
                          accountant: str = "exact", clip_hardening: bool = False, sensitivity_mode: str = "auto",
                          target_stationarity: float | None = None, seed: int = 0, noise_seed=None,
                          noise: str = "gaussian", backend: str | None = None, goldstein_samples: int = 256,
                          memory_limit: int | None = None, publish: bool = False) -> NsncPrepared:
    """Every check of ``run_nsnc_improved`` (same arguments) and every decision made before the run starts: the
    settings, the theory's settings, the run's values, the budgets and the memory (``publish``: count the text of the
    files too). Builds the population only (for Φ), never the training draws. ValueError/TypeError name the
    parameter; ``SamplesNeeded``, ``BudgetExceeded`` and ``reference.runner.MemoryLimitError`` have ``describe(cli)``.
    """
    _check_choice("oracle", oracle, NSNC_ORACLES)
    name = NSNC_ORACLES[oracle]
    multi = name not in _SINGLE
    _check_choice("problem", problem, NSNC_PROBLEMS)
    d = check_int("d", d, minimum=1)
    default_samples = NSNC_DEFAULTS["multi_pass_samples" if multi else "samples"]
    samples = default_samples if samples is None else check_int("samples", samples, minimum=1)
    population = check_int("population", population, minimum=1)
    if held_out_n is not None:
        held_out_n = check_int("held_out_n", held_out_n, minimum=1)
    data_seed = check_int("data_seed", data_seed, minimum=0, maximum=SEED_BOUND - 1)
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    epsilon = float(check_real("epsilon", epsilon, positive=True))
    delta = float(check_probability("delta", delta))
    smoothing_radius = float(check_real("smoothing_radius", smoothing_radius, positive=True))
    low, high = SMOOTHING_RADIUS_RANGE
    if not low <= smoothing_radius <= high:
        raise ValueError(f"smoothing_radius must lie in [{low:g}, {high:g}] (float64 finite differences at |x0| = "
                         f"{X1_NORM:g} need alpha well above the rounding of the iterates), got {smoothing_radius!r}")
    directions = _check_directions(directions)
    _check_choice("variant", variant, NSNC_VARIANTS)
    _check_choice("accountant", accountant, NSNC_ACCOUNTANTS)
    _check_choice("sensitivity_mode", sensitivity_mode, NSNC_SENSITIVITY_MODES)
    _check_choice("noise", noise, NSNC_NOISES)
    if not isinstance(clip_hardening, (bool, np.bool_)):
        raise TypeError(f"clip_hardening must be a bool, got {type(clip_hardening).__name__} {clip_hardening!r}")
    clip_hardening = bool(clip_hardening)
    if multi:
        if clip_hardening:
            raise ValueError("clip_hardening applies to the single-pass oracles only (the algorithm implements it "
                             "there)")
        if accountant != "exact":
            raise ValueError("accountant applies to the single-pass oracles only (multi pass: sigma_1, sigma_2 by the "
                             "exact accountant; Theorem 4.1's printed rule leaves its constant unspecified)")
        target = NSNC_DEFAULTS["target_stationarity"] if target_stationarity is None else target_stationarity
        target = float(check_real("target_stationarity", target, positive=True))
    else:
        if target_stationarity is not None:
            raise ValueError("target_stationarity applies to the multi-pass oracles only (Theorem 4.1; the "
                             "single-pass settings follow from the records, Theorem 3.1)")
        target = None
    if clip_hardening and sensitivity_mode == "worst_case":
        raise ValueError("clip_hardening does nothing for the accounting under sensitivity_mode 'worst_case' (the "
                         "worst-case sensitivities hold without clipping): choose one")
    goldstein_samples = check_int("goldstein_samples", goldstein_samples, minimum=1, maximum=GOLDSTEIN_SAMPLES_MAX)
    private = noise == "gaussian"
    if not private and noise_seed is not None:
        raise ValueError("noise_seed does not apply to a run without noise (noise = 'none': not private)")
    if private and isinstance(noise_seed, (int, np.integer)) and not isinstance(noise_seed, bool) \
            and noise_seed == data_seed:
        raise ValueError("noise_seed must differ from data_seed: the data seed is published, so noise drawn from it "
                         "could be regenerated; omit noise_seed to draw fresh secret entropy")
    secret = secret_seed(noise_seed, public_seeds=(seed, data_seed), name="noise_seed") if private else None
    if backend is None:
        backend = "fast" if fast_nsnc_available() else "reference"
    _check_choice("backend", backend, BACKENDS)
    _nsnc_module(backend)
    if memory_limit is not None:
        memory_limit = check_int("memory_limit", memory_limit, minimum=1)
    sizes = dict(d=d, samples=samples, population=population, held_out_n=held_out_n,
                 goldstein_samples=goldstein_samples, publish=publish)
    check_nsnc_memory(oracle, memory_limit=memory_limit, **sizes)  # the data, before anything is built

    # Φ = F_population(x0): the population only (its stream does not depend on the number of draws)
    built = build_ridge_problem(problem, d=d, samples=1, population=population, held_out_n=1, data_seed=data_seed)
    gap = float(built.value(built.weights("population"), built.x1))
    del built
    if smoothing_radius > gap / RIDGE_LIPSCHITZ:
        raise _smoothing_refusal(smoothing_radius, gap)
    theory = _theory(name, samples, d, gap, smoothing_radius, epsilon, delta, variant=variant, accountant=accountant,
                     directions=directions, clip_hardening=clip_hardening, target=target)
    run = _run_values(name, theory, directions, sensitivity_mode, accountant, clip_hardening, samples)
    _check_budgets(run, oracle=name, backend=backend, d=d, directions=directions, multi=multi)
    run["step_points"] = max(_per_step_evaluations(run, name, 2))  # the most points one step evaluates
    check_nsnc_memory(oracle, memory_limit=memory_limit, steps=run["T"], step_points=run["step_points"],
                      directions_value=max(run["m_reset"], run["m_increment"]), **sizes)

    arguments = settings_arguments(theory)
    arguments.update(oracle=name, directions=(run["m_reset"], run["m_increment"]) if not multi else run["m_reset"],
                     step_size=run["step_size"], sensitivity_mode=sensitivity_mode)
    arguments["noise_std"] = run["noise_stds"][0] if not multi else (run["noise_stds"][0],
                                                                      run["noise_stds"][1] or run["noise_stds"][0])
    if not private:
        arguments.update(noise_std=None, dp_delta=None, noise="none")
    settings = {"algorithm": "nsnc_improved", "oracle": name, "problem": problem, "objective": f"ridge[{problem}]",
                "d": d, "samples": samples, "population": population,
                "held_out_n": samples if held_out_n is None else held_out_n, "data_seed": data_seed,
                "x0_norm": X1_NORM, "tau": RIDGE_TAU, "offset_scale": RIDGE_OFFSET_SCALE,
                "lipschitz": RIDGE_LIPSCHITZ, "initial_gap": gap, "epsilon": epsilon, "delta": delta,
                "smoothing_radius": smoothing_radius,
                "goldstein_radius": 2 * smoothing_radius,
                "directions": "theory" if directions is None else directions, "variant": variant,
                "accountant": accountant if not multi else None, "clip_hardening": clip_hardening,
                "sensitivity_mode": sensitivity_mode, "target_stationarity": target, "noise": noise, "seed": seed,
                "backend": backend, "goldstein_samples": goldstein_samples,
                "secret_seed_source": None if secret is None else secret.source}
    return NsncPrepared(settings, theory, run, arguments, secret, memory_limit)


# ---------------------------------------------------------------------------------------------------
# Running


@dataclasses.dataclass(frozen=True)
class NsncOutcome:
    """An nsnc_improved run and what it was.

    result: the algorithm's ``DPResult`` (its ledger public, its diagnostics NOT private). problem: the
    ``RidgeProblem`` (its training draws are private data). settings: the public settings (no secret seed).
    theory: the ``SinglePassSettings`` / ``MultiPassSettings`` (public). run: the run's values (``NsncPrepared.run``;
    public: functions of the settings). seconds: wall-clock time of the algorithm (NOT PRIVATE by convention).
    diagnostics: {"held_out": …, "population": …} (``NSNC_DIAGNOSTICS``); block_objectives: {"held_out",
    "population"} F(x̄_k), k = 1..K. ``training_diagnostics()``: the same on the TRAINING draws — NOT PRIVATE.
    """

    result: object
    problem: RidgeProblem
    settings: dict
    theory: object
    run: dict
    seed: int
    secret_seed_source: str | None
    guarantee_condition: str | None
    seconds: float
    diagnostics: dict
    block_objectives: dict

    @property
    def private(self) -> bool:
        return self.result.ledger.plan is not None

    def training_diagnostics(self) -> dict:
        """The diagnostics of ``diagnostics`` on the TRAINING draws — NOT PRIVATE (computed on request)."""
        s = self.settings
        return _point_diagnostics_all(self.problem, self.result, "training", s["smoothing_radius"],
                                      samples=s["goldstein_samples"], seed=self.seed)


def _point_diagnostics_all(problem, result, which, smoothing_radius, *, samples, seed) -> dict:
    """``reference.runner._o2nc_diagnostics`` on an nsnc_improved result (x0 = the problem's x1, the output block's
    query points for the proxy: the same fields)."""
    return _o2nc_diagnostics(problem, result, which, smoothing_radius, samples=samples, seed=seed)


def _per_step_evaluations(run: dict, oracle: str, steps: int | None = None) -> list[int]:
    """Evaluations of every step, in order (the progress bar's schedule; the first ``steps`` only when given): the
    reset and increment counts of ``planned_evaluations`` at τ = 1 and τ > 1."""
    one = dict(T=1, tree_size=1, B1=run["B1"], B2=run["B2"], n=run["n"], m_reset=run["m_reset"],
               m_increment=run["m_increment"])
    reset = planned_evaluations(oracle, **one)
    two = planned_evaluations(oracle, **{**one, "T": 2, "tree_size": 2})
    increment = two - reset
    T, size = run["T"], run["tree_size"]
    return [reset if t % size == 0 else increment for t in range(T if steps is None else min(steps, T))]


def execute_nsnc_improved(prepared: NsncPrepared, *, progress: bool = False) -> NsncOutcome:
    """Build the problem and run a prepared run (``prepare_nsnc_improved``); its public diagnostics."""
    if not isinstance(prepared, NsncPrepared):
        raise TypeError(f"prepared must be an NsncPrepared (from prepare_nsnc_improved), got "
                        f"{type(prepared).__name__}")
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be a bool, got {type(progress).__name__} {progress!r}")
    s, run = prepared.settings, prepared.run
    name = s["oracle"]
    built = build_ridge_problem(s["problem"], d=s["d"], samples=s["samples"], population=s["population"],
                                held_out_n=s["held_out_n"], data_seed=s["data_seed"])
    counter = _RoundProgress(_per_step_evaluations(run, name), 1, bool(progress))
    kind = _RidgeGradient if name in _FIRST_ORDER else _RidgeLoss
    objective = kind(s["problem"], RIDGE_TAU, RIDGE_LIPSCHITZ, s["d"], counter)
    module = _nsnc_module(s["backend"])
    start = time.perf_counter()
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            result = module.nsnc_improved(objective, built.data, built.x1.copy(), **prepared.arguments,
                                          seed=s["seed"], noise_seed=prepared.secret, record_path=True)
    finally:
        counter.close()
    seconds = time.perf_counter() - start
    for what, value in (("the output", result.output), ("a block average", result.block_averages),
                        ("the final iterate", result.final_iterate)):
        if not np.all(np.isfinite(np.asarray(value, dtype=np.float64))):  # public values only
            raise ValueError(f"the run produced a non-finite value in {what}: the steps D are too long for float64 "
                             f"at smoothing_radius = {s['smoothing_radius']:g}; reduce smoothing_radius")
    radius = s["smoothing_radius"]
    diagnostics = {which: _point_diagnostics_all(built, result, which, radius, samples=s["goldstein_samples"],
                                                 seed=s["seed"]) for which in ("held_out", "population")}
    blocks = {which: built.value(built.weights(which), np.asarray(result.block_averages, dtype=np.float64))
              for which in ("held_out", "population")}
    ledger = result.ledger
    private = ledger.plan is not None
    return NsncOutcome(result, built, dict(s), prepared.theory, dict(run), s["seed"],
                       ledger.secret_seed_source if private else None,
                       ledger.guarantee_condition if private else None, seconds, diagnostics, blocks)


def run_nsnc_improved(oracle: str = "single-pass", *, problem: str = "wshape", d: int = 4, samples: int | None = None,
                      population: int = 1000, held_out_n: int | None = None, data_seed: int = 0,
                      epsilon: float = 1.0, delta: float = 1e-6, smoothing_radius: float = 0.25,
                      directions: int | str = 64, variant: str = "corrected", accountant: str = "exact",
                      clip_hardening: bool = False, sensitivity_mode: str = "auto",
                      target_stationarity: float | None = None, seed: int = 0, noise_seed=None,
                      noise: str = "gaussian", backend: str | None = None, goldstein_samples: int = 256,
                      progress: bool = False, memory_limit: int | None = None) -> NsncOutcome:
    """nsnc_improved Algorithm 2 with the oracle ``oracle`` (a key of ``NSNC_ORACLES``) on a built-in ridge problem,
    with the theory's settings (module doc), and its public diagnostics.

    problem, d, samples (M records; default 20 000, multi pass 5 000), population, held_out_n (default M), data_seed:
    ``reference.runner.build_ridge_problem``. epsilon, delta: the (ε, δ) target. smoothing_radius: α ≤ Φ/L (the
    output's Goldstein norm is reported at radius 2α). directions: m per record (default 64, the practical
    mode; "theory": the theory's privacy floor; first order: the increment's m, the reset uses one perturbation). variant: "corrected" or "paper".
    accountant (single pass): "exact" or "paper". clip_hardening (single pass): per-record clipping to the
    high-probability bounds. sensitivity_mode: "auto" (min(worst case, high probability), δ_fail counted) or
    "worst_case". target_stationarity: β (multi pass only; default 1.5). seed: public (directions, s_t, k*, the
    Goldstein points); noise_seed: secret (None: fresh operating-system entropy; an int in [0, 2^128) other than
    seed and data_seed). noise "none": the σ = 0 twin of the private settings (same T, K, η, public draws; not
    private). backend: "fast" (``reference.fast.nsnc_improved``, bitwise the same run) when installed, else
    "reference". goldstein_samples: points in the Goldstein ball. progress: a bar over the T steps. memory_limit:
    bytes (None: the memory available).

    Refusals before anything but the population is built: ValueError/TypeError naming the parameter,
    ``SamplesNeeded`` (a record count that suffices), ``BudgetExceeded``, ``reference.runner.MemoryLimitError``.
    """
    prepared = prepare_nsnc_improved(
        oracle, problem=problem, d=d, samples=samples, population=population, held_out_n=held_out_n,
        data_seed=data_seed, epsilon=epsilon, delta=delta, smoothing_radius=smoothing_radius, directions=directions,
        variant=variant, accountant=accountant, clip_hardening=clip_hardening, sensitivity_mode=sensitivity_mode,
        target_stationarity=target_stationarity, seed=seed, noise_seed=noise_seed, noise=noise, backend=backend,
        goldstein_samples=goldstein_samples, memory_limit=memory_limit)
    return execute_nsnc_improved(prepared, progress=progress)


# ---------------------------------------------------------------------------------------------------
# Records: the summary, the NOT PRIVATE diagnostics, the ledger


def _plain(value):
    """mpmath numbers as floats (ints stay ints); tuples as lists; anything else unchanged."""
    if isinstance(value, mpmath.mpf):
        return float(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


_THEORY_FIELDS = ("T0", "T", "K", "M", "tree_size", "B1", "B2", "step_bound", "step_size", "m", "m_reset",
                  "m_increment", "m_privacy", "m_privacy_reset", "m_privacy_increment", "m_variance", "noise_std",
                  "noise_std_reset", "noise_std_increment", "mu", "epsilon_exact", "delta_fail", "guarantee", "G0",
                  "G1", "certified_bound", "vacuous", "records_used", "records_unused", "meets_target", "note")


def _theory_record(theory) -> dict:
    """The theory's settings as plain data (the fields a reader compares with the run's)."""
    return {key: _plain(getattr(theory, key)) for key in _THEORY_FIELDS if hasattr(theory, key)}


#: The plan's fields in the summary (its σ's, m's and γ are the run's, already there; ε is ``epsilon_spent``).
_PLAN_FIELDS = ("guarantee", "relation", "passes", "mu", "delta_fail", "sensitivity_reset", "sensitivity_increment",
                "reset_branch", "increment_branch", "worst_case_reset", "worst_case_increment",
                "high_probability_reset", "high_probability_increment", "condition", "note")


def _plan_record(plan) -> dict | None:
    return None if plan is None else {f.name: _plain(getattr(plan, f.name)) for f in dataclasses.fields(plan)}


def nsnc_summary(outcome: NsncOutcome, *, include_nonprivate: bool = False) -> dict:
    """The printed record of an nsnc_improved run: the settings, the run's values (``run_*`` where they are not the
    settings' own names), the theory's (``theory``), the privacy plan (which guarantee holds, ε spent, μ, δ_fail, the
    sensitivities and their branches), k* and the output, and the public diagnostics (``NSNC_DIAGNOSTICS``). With
    include_nonprivate the key "nonprivate" holds ``nsnc_nonprivate(outcome)`` — NOT PRIVATE. Plain JSON data."""
    plan = outcome.result.ledger.plan
    run = outcome.run
    record = dict(outcome.settings)
    record.update({key: _plain(run[key]) for key in ("T", "K", "M", "tree_size", "resets", "increments", "B1", "B2",
                                                     "m_reset", "m_increment", "step_bound", "step_size", "gamma",
                                                     "G0", "G1", "certified_bound", "records_used",
                                                     "evaluations_planned")})
    sigmas = run["noise_stds"]
    record["noise_std"] = None if len(sigmas) != 1 else (sigmas[0] if outcome.private else 0.0)
    record["noise_std_reset"] = (sigmas[0] if outcome.private else 0.0) if len(sigmas) == 2 else None
    record["noise_std_increment"] = (sigmas[1] if outcome.private else 0.0) if len(sigmas) == 2 else None
    record["evaluation_budget"] = evaluation_budget(outcome.settings["backend"], outcome.settings["d"])
    record["meets_target"] = (None if outcome.settings["target_stationarity"] is None else
                              bool(run["certified_bound"] <= outcome.settings["target_stationarity"]))
    # ‖∂̄_{2α}F‖ ≤ L everywhere, so a bound ≥ L certifies nothing (nsnc_improved_theory, "Vacuous settings")
    record["certified_bound_vacuous"] = bool(run["certified_bound"] >= outcome.settings["lipschitz"])
    record["theory"] = _theory_record(outcome.theory)
    if plan is None:
        record.update({key: None for key in _PLAN_FIELDS})
        record["guarantee"] = "not private"
        record["epsilon_spent"] = None
        record["plan_summary"] = None
    else:
        record.update({key: _plain(getattr(plan, key)) for key in _PLAN_FIELDS})
        record["epsilon_spent"] = plan.epsilon
        record["plan_summary"] = plan.summary()
    record["guarantee_condition"] = outcome.guarantee_condition
    record["output_block"] = int(outcome.result.output_index) + 1
    record["output_point"] = np.asarray(outcome.result.output, dtype=np.float64)
    record["diagnostics"] = {**NSNC_DIAGNOSTICS, "held_out_rows": outcome.problem.held_out_n,
                             "population_rows": outcome.problem.population.n}
    record.update(_flatten_diagnostics("heldout", outcome.diagnostics["held_out"]))
    record.update(_flatten_diagnostics("population", outcome.diagnostics["population"]))
    if include_nonprivate:
        record["nonprivate"] = nsnc_nonprivate(outcome)
    return _jsonable(record)


def nsnc_nonprivate(outcome: NsncOutcome) -> dict:
    """NOT PRIVATE: the diagnostics on the training draws (for the multi-pass oracles the ERM objective), the counted
    evaluations, the replaced non-finite values and clips, the largest norm of the noiseless sums, the time."""
    diagnostics = outcome.result.diagnostics
    sums = np.asarray(diagnostics.noiseless_sums, dtype=np.float64)
    record = {"warning": NOT_PRIVATE_NSNC, **_flatten_diagnostics("training", outcome.training_diagnostics()),
              "loss_evaluations": int(diagnostics.evaluations),
              "nonfinite_values": int(np.sum(diagnostics.nonfinite_counts)),
              "clipped_values": int(np.sum(diagnostics.clipped_counts)),
              "noiseless_sum_norm_max": float(np.max(np.linalg.norm(sums, axis=-1))) if sums.size else None,
              "seconds": outcome.seconds}
    return _jsonable(record)


def nsnc_ledger(outcome: NsncOutcome) -> dict:
    """The ledger (all public): the plan, the algorithm's ``RunSettings``, the public seed, where the secret seed came
    from and what the guarantee assumes, ε spent and which guarantee holds, k*."""
    ledger = outcome.result.ledger
    plan = ledger.plan
    return _jsonable({"algorithm": ledger.algorithm, "guarantee": "not private" if plan is None else plan.guarantee,
                      "epsilon_spent": ledger.epsilon_spent, "dp_delta": None if plan is None else plan.dp_delta,
                      "delta_fail": None if plan is None else plan.delta_fail,
                      "plan_summary": None if plan is None else plan.summary(), "plan": _plan_record(plan),
                      "settings": {k: _plain(v) for k, v in dataclasses.asdict(ledger.settings).items()},
                      "seed": ledger.seed, "secret_seed_source": ledger.secret_seed_source,
                      "guarantee_condition": ledger.guarantee_condition,
                      "output_block": int(outcome.result.output_index) + 1})


def nsnc_publication(outcome: NsncOutcome, *, command, include_nonprivate: bool = False) -> dict[str, str]:
    """File name -> text of ``dpref run nsnc_improved --output DIR`` (module doc; ``reference.runner.
    o2nc_family_files``): releases.csv (g̃_t), blocks.csv (x̄_k), output.csv, diagnostics.json, ledger.json,
    manifest.json and, with include_nonprivate, nonprivate_diagnostics.json (NOT PRIVATE)."""
    # the directions are keyed by the secret seed when the plan's guarantee is the high-probability one
    secret_directions = outcome.result.ledger.settings.direction_seed == "secret"
    streams = ("(\"nsnc_improved\", \"segment\", k), (\"nsnc_improved\", \"output\")"
               + ("" if secret_directions else ", (\"nsnc_improved\", \"direction\", t)") + " under seed; "
               + ("(\"nsnc_improved\", \"direction\", t), " if secret_directions else "")
               + "(\"nsnc_improved\", \"noise\") under the secret seed")
    return o2nc_family_files(
        outcome, averages=outcome.result.block_averages, objectives=outcome.block_objectives,
        averages_file="blocks.csv", index_name="output_block", diagnostics_doc=NSNC_DIAGNOSTICS,
        ledger=nsnc_ledger(outcome), nonprivate=lambda: nsnc_nonprivate(outcome), summary=nsnc_summary(outcome),
        algorithm_streams=streams, command=command, include_nonprivate=include_nonprivate)


# ---------------------------------------------------------------------------------------------------
# The table


_ORACLE_LABELS = {"single_pass": "Algorithm 2 + 3 (single pass, zeroth order)",
                  "single_pass_crn": "Algorithm 2 + 3 with common random numbers (single pass; not in the paper)",
                  "first_order": "Algorithm 2 + 5 (single pass, first order)",
                  "multi_pass": "Algorithm 2 + 4 (multi pass, zeroth order)",
                  "multi_pass_first_order": "Algorithm 2 + 4 with Algorithm 5's estimator (multi pass, first order)"}


def render_nsnc(record: dict) -> str:
    """The record of ``nsnc_summary`` as aligned text; its "nonprivate" part under a NOT PRIVATE heading."""
    oracle = record["oracle"]
    multi = oracle not in _SINGLE
    private = record["epsilon_spent"] is not None
    theory = record["theory"]
    source = "Theorem 4.1" if multi else ("Theorem C.4" if oracle == "first_order" else "Theorem 3.1")
    batches = (f"n = {record['samples']} records per step" if multi else
               f"B1 = {record['B1']}, B2 = {record['B2']}, {record['records_used']} of {record['samples']} records "
               "used")
    noise = (f"sigma = {_fmt(record['noise_std'])}" if not multi else
             f"sigma_1 = {_fmt(record['noise_std_reset'])}, sigma_2 = {_fmt(record['noise_std_increment'])}")
    given = record["directions"] != "theory"
    floor = theory.get("m_privacy", theory.get("m_privacy_increment"))
    rows = [
        ("algorithm", f"nsnc_improved {oracle}: {_ORACLE_LABELS[oracle]}, {record['backend']} backend"),
        ("problem", f"{record['objective']}, d={record['d']}, M={record['samples']} records, population "
                    f"{record['population']} ridges, |x0| = {_fmt(record['x0_norm'])}, Phi = F(x0) = "
                    f"{_fmt(record['initial_gap'])}"),
        ("settings", f"{source} ({record['variant']}"
                     + (f", target beta = {_fmt(record['target_stationarity'])}" if multi else "")
                     + f"): T={record['T']}, K={record['K']}, M={record['M']}, tree size {record['tree_size']} "
                     f"({record['resets']} resets), {batches}, alpha={_fmt(record['smoothing_radius'])}, "
                     f"D={_fmt(record['step_bound'])}, eta={_fmt(record['step_size'])}, {noise}"),
        ("directions", f"m = ({record['m_reset']}, {record['m_increment']}) per record "
                       + (f"(given; the theory's privacy floor is {floor})" if given else "(the theory's)")),
        ("cost", f"{record['evaluations_planned']} {'gradient' if oracle in _FIRST_ORDER else 'loss'} evaluations "
                 f"planned (budget {record['evaluation_budget']:.3g})"),
    ]
    if private:
        branches = (f"s_reset = {_fmt(record['sensitivity_reset'])} ({record['reset_branch']}), s_increment = "
                    f"{_fmt(record['sensitivity_increment'])} ({record['increment_branch']}); worst case "
                    f"({_fmt(record['worst_case_reset'])}, {_fmt(record['worst_case_increment'])})")
        held = {"worst-case": "deterministic sensitivities: delta_fail = 0",
                "high-probability": f"delta_fail = {_fmt(record['delta_fail'])} paid inside delta",
                "clip-hardened": "clipped to the high-probability bounds: delta_fail = 0"}[record["guarantee"]]
        target = record["epsilon"]
        over = "" if record["epsilon_spent"] <= target * (1 + 1e-9) else " (above the target: the printed rule)"
        rows += [
            ("privacy", f"{record['relation']}: ({_fmt(record['epsilon_spent'])}, {_fmt(record['delta'])})-DP, "
                        f"{record['guarantee']} guarantee ({held}); mu = {_fmt(record['mu'])}"),
            ("epsilon", f"spent {_fmt(record['epsilon_spent'])} at delta {_fmt(record['delta'])}, target "
                        f"{_fmt(target)}{over}; sensitivity mode {record['sensitivity_mode']}"
                        + ("" if multi else f", accountant {record['accountant']}")
                        + (", clip hardening" if record["clip_hardening"] else "")),
            ("sensitivities", branches),
            ("condition", record["condition"]),
            ("secret seed", f"{record['secret_seed_source']}: {record['guarantee_condition']}"),
        ]
    else:
        rows.append(("privacy", f"not private (noise none: the sigma = 0 twin of the epsilon = "
                                f"{_fmt(record['epsilon'])} settings)"))
    rows.append(("output", f"x_out = block average k* = {record['output_block']} of {record['K']}"))
    radius = _fmt(record["goldstein_radius"])
    for prefix, label, size in (("heldout", "held-out", record["held_out_n"]),
                                ("population", "population", record["population"])):
        rows.append((f"{label} data", f"{size} {'draws' if prefix == 'heldout' else 'ridges'}: "
                     + ("drawn from the population with their own stream; never the training data"
                        if prefix == "heldout" else "the law the records are drawn from (public): exact F")))
        rows.append(("  F", f"x0 {_fmt(record[f'{prefix}_objective_initial'])} -> x_out "
                            f"{_fmt(record[f'{prefix}_objective_output'])} "
                            f"(x_T {_fmt(record[f'{prefix}_objective_final'])})"))
        rows.append(("  |grad F|_{2alpha}", f"x0 {_interval(record, prefix, 'initial')}; x_out "
                     f"{_interval(record, prefix, 'output')} (2alpha = {radius}, "
                     f"{record['goldstein_samples']} points sampled)"))
        spread = record[f"{prefix}_spread_output"]
        bound = ("<= alpha: an upper bound too" if spread <= record["smoothing_radius"] * (1 + 1e-9) else
                 "> alpha: not a bound on it")
        rows.append(("  proxy", f"{_fmt(record[f'{prefix}_proxy_output'])} over the output block (spread "
                                f"{_fmt(spread)} {bound})"))
    certified = (f"E|grad F(x_out)|_{{2alpha}} <= {_fmt(record['certified_bound'])} (Proposition 2.6 corrected, "
                 f"G0 = {_fmt(record['G0'])}, G1 = {_fmt(record['G1'])}; the theory's own settings: "
                 f"{_fmt(theory['certified_bound'])})")
    if record["certified_bound_vacuous"]:
        certified += f"; VACUOUS: >= L = {_fmt(record['lipschitz'])}, which every point meets"
    if multi:
        certified += (f"; for the empirical risk (ERM); target {_fmt(record['target_stationarity'])} "
                      f"{'met' if record['meets_target'] else 'not met'}")
    rows.append(("certified", certified))
    if record.get("output"):
        rows.append(("files", record["output"]))
    nonprivate = record.get("nonprivate")
    extra = []
    if nonprivate:
        extra = [("training F", f"x0 {_fmt(nonprivate['training_objective_initial'])} -> x_out "
                                f"{_fmt(nonprivate['training_objective_output'])}"),
                 ("training |grad F|", f"x_out {_interval(nonprivate, 'training', 'output')}, proxy "
                                       f"{_fmt(nonprivate['training_proxy_output'])}"),
                 ("evaluations", f"{nonprivate['loss_evaluations']} counted; {nonprivate['nonfinite_values']} "
                                 f"non-finite replaced, {nonprivate['clipped_values']} clipped"),
                 ("noiseless sums", f"largest norm {_fmt(nonprivate['noiseless_sum_norm_max'])}"),
                 ("seconds", f"{nonprivate['seconds']:.3g}")]
    width = max(len(k) for k, _ in rows + extra)
    text = "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
    if extra:
        text += ("\n\nNOT PRIVATE — computed on the training data outside the privacy plan; do not publish:\n"
                 + "\n".join(f"{k:<{width}}  {v}" for k, v in extra))
    return text
