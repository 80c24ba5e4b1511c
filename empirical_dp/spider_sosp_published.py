"""Auditing everything a spider_sosp run publishes: the files of ``reference.runner_spider_sosp.spider_publication``
for a DEFAULT run of ``reference.runner_spider_sosp.run_spider_sosp`` scored as one output (docs/audits.md,
"spider_sosp: everything a run publishes"; threat model docs/design.md). The companion of
``empirical_dp.nsnc_improved_published``, whose machinery it reuses.

Sources:
- Liu, Talwar, "Adaptive Batch Size for Privately Finding Second-Order Stationary Points" (arXiv 2024): Algorithm 2
  (drift_0 = κ; an O1 restart when Σ‖g̃_i‖ since the last one reaches κ, else ∇_t = ∇_{t−1} + O2 on b_t fresh
  records; g̃_t = ∇_t + TREE(t + 1) (+ g_t at a perturbation step); x_{t+1} = x_t − g̃_t/M) with the oracles of
  Algorithm 3 (one pass, disjoint batches in a public order). The privacy plan (``spider_sosp_plan``, rule
  "gdp_exact": μ-GDP at μ = sbar·√count/σ) covers the releases g̃_t; every branch (kinds, batch sizes, drift, leaves,
  perturbation steps, records used, halting) is a function of them and of public inputs
  (``reference.algorithms.spider_sosp.replay_schedule``), the iterates and the population diagnostics are
  post-processing. Every other number a run writes is covered only if it is such a post-processing.
- ``empirical_dp.spider_sosp``: the release audit of the same algorithm (canary in step 0's O1 batch, the tree noise
  of the secret stream ("spider_sosp", "noise"), the schedule read off the releases).
- ``empirical_dp.published`` / ``empirical_dp.nsnc_improved_published``: the whole-publication audit
  (``PublishedAudit``: feature selection on a training split, then ``empirical_dp.audit.audit``; ``file_features``,
  ``candidate_seeds``, ``regeneration_features``; the runner's own code with only its problem builder substituted).

Threat model. Everything a run receives or writes is public — the public seed (hence the record order, key
("spider_sosp", "permutation")), the data seed, the hyper-parameters, the code, both neighbouring data sets, the
population (closed form) and every published file — except the run's secret seed: the tree noise (key ("spider_sosp",
"noise")) and the saddle perturbations (keys ("spider_sosp", "perturbation", t)).

The pipeline. Each trial runs ``run_spider_sosp`` with its DEFAULT arguments — those of ``dpref run spider_sosp``:
problem "cosine" (f(x; z) = Σ_j c_j s_j cos(x_j − z_j), c = (1, 1), s = (+1, −1), G = √2, M = ρ = 1), d = 2, the
exact saddle x_0 = 0 as start, data seed 0, ε = 1, δ = 1e-6, unit mode, σ rule "gdp_exact", replace-one neighbours,
one global tree, the perturbation on, no drift reset, the default backend (fast when installed), no ``noise_seed``
(fresh operating-system entropy) — then ``spider_publication(outcome, command=...)`` (releases.csv, trace.csv,
output.csv, diagnostics.json, ledger.json, manifest.json; manifest.json's "summary" is ``spider_summary``, the record
``dpref run spider_sosp`` prints). What differs from ``dpref run spider_sosp`` with no option:
* the records: the canary pair below instead of n draws from the data seed (the one substitution; ``run_spider_sosp``
  only runs built-in problems, so ``build_spider_problem`` is replaced as for nsnc_improved: ``run_spider_sosp``,
  ``prepare_spider_sosp`` and ``execute_spider_sosp`` run their own code (``__code__``) over a copy of
  ``reference.runner_spider_sosp``'s namespace whose ``build_spider_problem`` is a ``CanaryBuilder``. It calls the real
  builder for the public parts — family, start, loss gap, constants, checked against the run's arguments — and
  attaches the pair's records; the reference modules are never modified);
* n = 10 000 records (``--samples 10000``) instead of 10⁵: a run and its files take ~35 ms instead of ~0.2 s, so the
  ~200 publications of a quick audit (training split included) take ~8 s. The plan is the same rule at another n
  (σ = 0.912 instead of 0.189, b = 80 instead of 406; μ = μ*(1, 1e-6) = 0.2367 either way), and the schedule keeps
  every kind of step of the default run — O1 restarts, O2 steps with adaptive batches b_t from ‖g̃_{t−1}‖ (16 % of the
  130–143 steps; 2/3 of ~456 at 10⁵), perturbations at 46 % of the steps (1/3 at 10⁵) — and halts for lack of
  records as the default run does;
* the public seed: a fresh one per trial (``integers(0, 2**62)``) instead of the default 0, so every trial has a new
  record order and a new seed to regenerate from (it is published in ledger.json and manifest.json).

The pair (``canary_records``). D: n records z = 0 (their gradient −(c⊙s)⊙sin x is the population's up to φ, and
0 at the saddle). D′: the record read first in the public order of the trial's seed (``public_permutation(seed,
n)[0]``, inside step 0's O1 batch, tree leaf 1) replaced by the canary z = (π/2)·s, whose gradient at x_0 = 0 is c:
norm G, the largest a record may have (replace-one; D′ as a set is the same for every seed). It moves ∇_0 by G/b,
half the worst case 2G/b of a record −c replaced by c: with zero records the training quantities of D at x_0 are 0,
so a training diagnostic at the start separates D from D′ deterministically. The canary is read once, so
∇_t on D′ is ∇_t on D plus c/b for t < τ (τ the first O1 restart after step 0, a function of the releases) and equal
after: whatever the noise, the noiseless estimates given the public path are m_D(t) = −(c⊙s)⊙sin x_t (the SPIDER sum
telescopes; the O1 and O2 clips never bind, |sin a − sin b| < |a − b|) and m_D′ = m_D + 1[t < τ]·c/b, with x_t rebuilt
from releases.csv exactly as the run computes it (x_{t+1} = x_t − η g̃_t). The setup checks the model on one private
run per data set with a known user secret S: the replayed schedule equals the trace, the run's noiseless estimates
(``NonPrivateDebugTrace.estimates``) equal m (1e-12), its perturbations are ζ/√d times the ("spider_sosp",
"perturbation", t) normals of S at the perturbation steps and 0 elsewhere, and its releases minus both are the tree
noise TREE(σ z_S), z_S = ``Streams(S).generator("spider_sosp", "noise").standard_normal((k, d))`` (ValueError
otherwise). At these settings ‖g̃_t‖ ≈ σ√2 is close to κ = 1.356, so the first restart comes at step 1 or 2 (τ = 1
in ~40 % of the runs, 2 in ~60 %): the canary moves the first one or two releases, and the pair's releases carry
μ = ‖c/b‖·√(e_1ᵀ(RRᵀ)⁻¹e_1)/σ = √2/(bσ) = 0.0194 (τ = 1) to 0.0205, against the plan's 0.2367 (its exact count is a
worst case over records, leaves and restarts). A consistent verdict therefore says that no file adds to what the
releases carry, not that the accounting is tight (the release audit ``spider-sosp-run`` checks that).

Features (``SpiderSospPublishedAudit.features``; a fixed-length vector over the training split's schema):
a. ``release_score``: the releases' exact log-likelihood ratio. The schedule (τ, the perturbation set P, the number of
   steps k) is read off the releases (``read_schedule``: Algorithm 2's rules, checked against ``replay_schedule`` and
   the trace at setup; the same for D and D′), the noise N = g̃ − m is the tree noise plus the perturbations,
   N ~ N(0, Σ_P) independently per coordinate with Σ_P = σ²RRᵀ + (ζ²/d)·diag(1_P) (R the tree's release matrix of k
   leaves); the map N ↦ g̃ is triangular with unit diagonal (m_t depends on g̃_{<t} only), and on the event that the
   schedule is P the law of N is that Gaussian, so the density of the releases is φ_{Σ_P}(g̃ − m) and the ratio is
   Δᵀ Σ_P⁻¹ (g̃ − m_D − Δ/2), Δ = m_D′ − m_D (solved by a Cholesky factorisation: ``_solve_spd``).
b. ``regenerated[SOURCE]`` (``published.regeneration_features``): the tree noise TREE(σ z_c)[:k] of every candidate
   seed c (the run's public seed and the data seed, the seed offsets, every integer token of every file) compared
   with the residuals g̃ − m_D and g̃ − m_D′ at the steps that do not perturb (at a perturbation step the residual
   also holds ζ/√d times the perturbation stream's normals, a data-independent term the plan does not count: a leak of
   it alone could not refute the claim); the best log-match under D′ minus the best under D.
c. ``published.file_features``: every file's presence and length, every numeric leaf of every JSON file (ledger,
   manifest with the printed summary, diagnostics), every numeric cell of every CSV file except releases.csv (trace,
   output), ``completed``.

Claim: the ledger's, μ-GDP at ``plan.mu`` (rule "gdp_exact", 0.2367 = μ*(1, 1e-6)) with δ = ``plan.dp_delta``; both
the Clopper–Pearson ε_lb and the GDP μ_lb may refute it.

Variants (``VARIANTS``): ``nonprivate``: the NOT PRIVATE diagnostics published (``include_nonprivate=True``:
nonprivate_diagnostics.json — the SOSP level of the empirical loss at x_0, the last and the best iterate, the
errors of the noiseless estimates, clip and replacement counts, evaluations, seconds), registered in
``empirical_dp.planted`` as ``spider_sosp-published-nonprivate`` — caught by their raw values (at x_0 the training
gradient is 0 on D and c/n on D′).

Randomness. ``publish(setup, rng, which)`` draws, in order: the public seed (``integers(0, 2**62)``, when
``public_seed`` is None), then for a training publication (``proxy``) one 128-bit value (two ``integers(0, 2**64, 2,
uint64)``) that becomes ``SecretSeed(v, "os_entropy")``; counted trials draw fresh operating-system entropy inside
the runner.
"""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from reference import runner_spider_sosp as spider_runner
from reference.algorithms.spider_sosp import KEY, public_permutation, replay_schedule
from reference.fast.mechanisms import tree_prefix_noise
from reference.precision import norm
from reference.rng import SEED_BOUND, Streams
from reference.secrets import SecretSeed
from reference.validation import check_int

from .published import TRAINING_TRIALS, PublishedAudit, candidate_seeds, file_features, regeneration_features
from .scenarios import tree_release_matrix
from .zo_o2nc_published import _draw_secret, _public_seeds

__all__ = [
    "VARIANTS",
    "SETTINGS",
    "PROBLEM",
    "COMMAND",
    "PipelineMismatch",
    "CanaryBuilder",
    "canary_records",
    "SpiderSospPublishedSetup",
    "spider_sosp_published_setup",
    "run_pipeline",
    "publish",
    "noiseless_means",
    "noise_of_seed",
    "read_releases",
    "read_schedule",
    "SpiderSospPublishedAudit",
    "spider_sosp_published_scenario",
    "SPIDER_SOSP_PUBLISHED_BUILTINS",
]

#: The variants of the pipeline: name → (what it runs, its correct twin or None).
VARIANTS = {
    "default": ("spider_sosp with default arguments: fresh secret entropy, default publication", None),
    "nonprivate": ("the NOT PRIVATE training diagnostics published (include_nonprivate=True)", "default"),
}
#: The built-in run: n records, d (the default), the public seed (None: a fresh one per trial) and the data seed (the
#: default; the records are the pair's, the seed is only published).
SETTINGS = dict(samples=10_000, d=2, public_seed=None, data_seed=0)
#: The built-in problem the pair stands in for (``run_spider_sosp``'s default).
PROBLEM = "cosine"
#: The command a publication records.
COMMAND = "dpref run spider_sosp (empirical_dp.spider_sosp_published audit pipeline)"
#: The functions of ``reference.runner_spider_sosp`` re-bound to the canary builder (the run and what it calls).
_REBOUND = ("run_spider_sosp", "prepare_spider_sosp", "execute_spider_sosp")
#: The settings a default run records (``SpiderOutcome.settings``), checked on the setup's runs.
_DEFAULT_RUN = dict(problem="cosine", start="saddle", epsilon=1.0, delta=1e-6, mode="unit", sigma_rule="gdp_exact",
                    adjacency="replace_one", tree_scope="global", perturb=True, reset_drift_on_perturb=False,
                    enforce_constants=True, allow_nonprivate=False)
#: The known secret of the setup's checks (≠ every public seed of the checks) and their public seed.
_CHECK_SECRET = 2**100 + 20250707
_CHECK_SEED = 1
#: Memoised tree noise streams (per candidate seed; novel candidates arrive with every trial).
_MEMO_LIMIT = 12_000
_ERRORS = (ValueError, ArithmeticError)
_MEAN_TOLERANCE = 1e-12
_NOISE_TOLERANCE = 1e-9


class PipelineMismatch(Exception):
    """The runner asked for another problem than the one the pair stands in for, or a run does not follow the pair's
    model. Never published as error.txt: it propagates."""


# ---------------------------------------------------------------------------------------------------
# The pair and the pipeline


def canary_records(samples, d, seed, which) -> np.ndarray:
    """The records of D (which = 0: n zeros) or D′ (1: the record read first in the public order of ``seed`` replaced
    by the canary (π/2)·s, s = the cosine family's signs), (n, d), read-only (module docstring)."""
    samples = check_int("samples", samples, minimum=1)
    d = check_int("d", d, minimum=1)
    which = check_int("which", which, minimum=0, maximum=1)
    data = np.zeros((samples, d))
    if which:
        signs = -np.ones(d)
        signs[0] = 1.0
        data[int(public_permutation(seed, samples)[0])] = (math.pi / 2) * signs
    data.setflags(write=False)
    return data


@dataclass(frozen=True)
class CanaryBuilder:
    """Stands in for ``build_spider_problem`` inside one run: the real builder's public parts (family, start, loss
    gap, constants) for the run's problem, d, start, data seed and public seed, and, when the run asks for its n
    records, the records of D (which = 0) or D′ (1) for that public seed (``canary_records``)."""

    samples: int
    d: int
    data_seed: int
    which: int

    def __call__(self, problem="cosine", *, d=2, samples=None, data_seed=0, start=None, seed=0):
        asked = (problem, d, data_seed)
        have = (PROBLEM, self.d, self.data_seed)
        if asked != have or start not in (None, "saddle") or samples not in (None, self.samples):
            raise PipelineMismatch(f"the run asked for problem {asked} (problem, d, data seed) with start {start!r} "
                                   f"and {samples} records; the pair stands in for {have} from the saddle with "
                                   f"{self.samples} records")
        built = spider_runner.build_spider_problem(problem, d=d, start=start, seed=seed, data_seed=data_seed)
        if samples is None:
            return built
        return dataclasses.replace(built, data=canary_records(samples, d, seed, self.which))


def run_pipeline(builder: CanaryBuilder, **arguments):
    """``run_spider_sosp(problem=PROBLEM, d, samples, data_seed, **arguments)`` with its problem builder bound to
    ``builder``: the functions' own code over a copy of the module's namespace."""
    namespace = dict(vars(spider_runner))
    namespace["build_spider_problem"] = builder
    for name in _REBOUND:
        base = getattr(spider_runner, name)
        function = types.FunctionType(base.__code__, namespace, base.__name__, base.__defaults__, base.__closure__)
        function.__kwdefaults__ = dict(base.__kwdefaults__ or {})
        namespace[name] = function
    return namespace["run_spider_sosp"](problem=PROBLEM, d=builder.d, samples=builder.samples,
                                        data_seed=builder.data_seed, **arguments)


@dataclass(frozen=True)
class SpiderSospPublishedSetup:
    """Everything the scenario fixes before any trial (``spider_sosp_published_setup``).

    variant; settings; plan: the ledger's ``SpiderPrivacyPlan`` (public); config: the run's ``SpiderConfig`` (the same
    for every seed: the start is the saddle); noise_std: σ; perturbation_scale: ζ; weights: c⊙s of the family (the
    records' gradient −weights⊙sin(x − z)); x0: the start; shift: (d,) c/b, the canary's move of ∇_t for t < τ;
    releases_mu: the pair's μ when the first restart is at step 1, ‖c/b‖·√(e_1ᵀ(RRᵀ)⁻¹e_1)/σ (= √d/(bσ): TREE(1) is
    node 1 alone, which no later release holds)."""

    variant: str
    settings: dict
    plan: object
    config: object
    noise_std: float
    perturbation_scale: float
    weights: np.ndarray
    x0: np.ndarray
    shift: np.ndarray
    releases_mu: float
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def public_seed(self) -> int | None:
        return self.settings["public_seed"]

    @property
    def samples(self) -> int:
        return int(self.settings["samples"])

    @property
    def d(self) -> int:
        return int(self.settings["d"])

    def builder(self, which: int) -> CanaryBuilder:
        return CanaryBuilder(self.samples, self.d, self.settings["data_seed"], which)


def _check_settings(overrides: dict) -> dict:
    unknown = set(overrides) - set(SETTINGS)
    if unknown:
        raise ValueError(f"unknown setting(s) {sorted(unknown)}; allowed: {sorted(SETTINGS)}")
    s = {**SETTINGS, **overrides}
    s["samples"] = check_int("samples", s["samples"], minimum=2)
    s["d"] = check_int("d", s["d"], minimum=1, maximum=spider_runner.D_MAX)
    s["data_seed"] = check_int("data_seed", s["data_seed"], minimum=0, maximum=SEED_BOUND - 1)
    if s["public_seed"] is not None:
        s["public_seed"] = check_int("public_seed", s["public_seed"], minimum=0, maximum=2**62)
    return s


def _first_restart(kinds) -> int:
    """τ: the first step t ≥ 1 whose query is O1 (len(kinds) when there is none)."""
    return next((t for t in range(1, len(kinds)) if kinds[t] == "O1"), len(kinds))


def read_schedule(setup: SpiderSospPublishedSetup, releases) -> tuple[int, np.ndarray]:
    """(τ, perturbed) read off releases (k, d) by Algorithm 2's own rules, as ``replay_schedule`` does (the setup
    checks that they agree): τ, the first step t ≥ 1 with drift_t = Σ_{i<t}‖g̃_i‖ ≥ κ (k when none; the drift is not
    reset at a perturbation by default), and perturbed (k,) bool, step t perturbing when frozen_{t−1} ≤ 0 and
    ‖g̃_{t−1}‖ ≤ threshold (frozen_{−1} = 1, frozen_t = frozen_{t−1} − 1 or Γ after a perturbation). Only what the
    features need: batch sizes and the halting test are not replayed."""
    config = setup.config
    norms = norm(np.asarray(releases, dtype=np.float64), axis=1)
    steps = norms.shape[0]
    crossed = np.flatnonzero(np.cumsum(norms)[:-1] >= config.kappa)
    tau = int(crossed[0]) + 1 if crossed.size else steps
    perturbed = np.zeros(steps, dtype=bool)
    frozen_previous = 1
    for t in range(steps):
        frozen = frozen_previous - 1
        if config.perturb and frozen_previous <= 0 and norms[t - 1] <= config.threshold:
            frozen = config.freeze_steps
            perturbed[t] = True
        frozen_previous = frozen
    return tau, perturbed


def _solve_spd(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """matrix⁻¹ rhs for a symmetric positive definite matrix (SciPy's Cholesky factorisation and solve)."""
    factor = scipy.linalg.cho_factor(matrix, lower=True, check_finite=False)
    return scipy.linalg.cho_solve(factor, rhs, check_finite=False)


def noiseless_means(setup: SpiderSospPublishedSetup, releases, which: int, tau: int) -> np.ndarray:
    """(k, d): ∇_t of D (which = 0) or D′ (1) along the public path of ``releases`` (k, d) with the first restart at
    step ``tau``: −weights⊙sin(x_t), x_0 the start and x_{t+1} = x_t − η g̃_t (the run's arithmetic), plus c/b for
    t < τ on D′ (module docstring)."""
    g = np.asarray(releases, dtype=np.float64)
    eta = setup.config.step_size
    x = np.empty_like(g)
    point = setup.x0.copy()
    for t in range(g.shape[0]):
        x[t] = point
        point = point - eta * g[t]
    means = -setup.weights * np.sin(x)
    if which:
        means[:tau] = means[:tau] + setup.shift
    return means


def noise_of_seed(setup: SpiderSospPublishedSetup, seeds, steps: int) -> np.ndarray:
    """(len(seeds), steps, d): the tree noise TREE(σ z_c)[:steps] a run whose secret seed is c adds, z_c =
    ``Streams(c).generator("spider_sosp", "noise").standard_normal((k, d))`` (one global tree; memoised per seed)."""
    cache, d = setup._cache, setup.d
    steps = int(steps)
    found = {}
    for c in seeds:
        entry = cache.get(("z", int(c)))
        if entry is not None and entry.shape[0] >= steps:
            found[int(c)] = entry
    missing = sorted({int(c) for c in seeds} - set(found))
    if missing:
        if len(cache) > _MEMO_LIMIT:
            for key in [k for k in cache if k[0] == "z"][: _MEMO_LIMIT // 2]:
                del cache[key]
        length = max(steps, int(cache.get("length", 0)))
        z = np.array([Streams(c).generator(KEY, "noise").standard_normal((length, d)) for c in missing])
        for c, noise in zip(missing, tree_prefix_noise(setup.noise_std * z)):
            found[c] = cache[("z", c)] = noise
    rows = [found[int(c)][:steps] for c in seeds]
    return np.array(rows) if rows else np.empty((0, steps, d))


def _release_gram(setup: SpiderSospPublishedSetup, steps: int) -> np.ndarray:
    """R Rᵀ of the first ``steps`` leaves of the global tree (memoised at a doubling size)."""
    gram = setup._cache.get("gram")
    if gram is None or gram.shape[0] < steps:
        size = max(steps, 2 * (0 if gram is None else gram.shape[0]), 64)
        release = tree_release_matrix(size)
        gram = setup._cache["gram"] = release @ release.T
    return gram[:steps, :steps]


def spider_sosp_published_setup(variant: str = "default", **overrides) -> SpiderSospPublishedSetup:
    """The fixed part of the scenario (module docstring). overrides: keys of ``SETTINGS``. Makes one private run of
    the pipeline per data set with a known user secret and checks the noise model on them (ValueError /
    ``PipelineMismatch`` otherwise)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {tuple(VARIANTS)}, got {variant!r}")
    s = _check_settings(overrides)
    outcomes = [run_pipeline(CanaryBuilder(s["samples"], s["d"], s["data_seed"], which), seed=_CHECK_SEED,
                             noise_seed=_CHECK_SECRET) for which in (0, 1)]
    first = outcomes[0]
    config, plan, family = first.config, first.plan, first.problem.family
    recorded = {key: first.settings[key] for key in _DEFAULT_RUN}
    if recorded != _DEFAULT_RUN or plan is None or not plan.private:
        raise PipelineMismatch(f"the run's settings {recorded} are not the default run's {_DEFAULT_RUN}")
    if any(o.config != config for o in outcomes):
        raise PipelineMismatch("the runs on D and D' have different configs: the schedule rule is not public")
    weights = np.asarray(family.c * family.s, dtype=np.float64)
    shift = np.asarray(family.c, dtype=np.float64) / config.batch_size
    setup = SpiderSospPublishedSetup(
        variant=variant, settings=s, plan=plan, config=config, noise_std=float(config.noise_std),
        perturbation_scale=float(config.perturbation_scale), weights=weights,
        x0=np.array(first.problem.x0, dtype=np.float64), shift=shift, releases_mu=0.0)
    if not np.array_equal(setup.x0, np.zeros(s["d"])):
        raise PipelineMismatch(f"the run starts at {setup.x0}, the pair is built for the saddle 0")
    streams = Streams(_CHECK_SECRET)
    for which, outcome in enumerate(outcomes):
        trace, debug = outcome.result.trace, outcome.result.debug
        released = np.asarray(trace.released, dtype=np.float64)
        replay = replay_schedule(released, config, s["samples"])
        if (replay.kinds != trace.kinds or not np.array_equal(replay.batch_sizes, trace.batch_sizes)
                or replay.perturbation_steps != trace.perturbation_steps):
            raise PipelineMismatch("the schedule replayed from the releases differs from the run's trace")
        tau, perturbed = read_schedule(setup, released)
        if tau != _first_restart(trace.kinds) or tuple(np.flatnonzero(perturbed)) != trace.perturbation_steps:
            raise PipelineMismatch("the first restart or the perturbation steps read off the releases differ from the "
                                   "run's trace")
        means = noiseless_means(setup, released, which, _first_restart(trace.kinds))
        if not np.allclose(debug.estimates, means, rtol=0, atol=_MEAN_TOLERANCE):
            raise ValueError("the run's noiseless estimates differ from the pair's means along its public path: the "
                             "attacker could not subtract them")
        perturbations = np.zeros_like(released)
        for t in trace.perturbation_steps:
            perturbations[t] = (streams.generator(KEY, "perturbation", t).standard_normal(s["d"])
                                * (setup.perturbation_scale / math.sqrt(s["d"])))
        if not np.allclose(debug.perturbations, perturbations, rtol=1e-12, atol=0):
            raise ValueError("the run's perturbations are not zeta/sqrt(d) times its secret seed's ('spider_sosp', "
                             "'perturbation', t) normals at its perturbation steps")
        expected = tree_prefix_noise(setup.noise_std * streams.generator(KEY, "noise").standard_normal(released.shape))
        residual = released - means - perturbations
        if np.sqrt(np.mean((residual - expected) ** 2)) > _NOISE_TOLERANCE * np.sqrt(np.mean(expected**2)):
            raise ValueError("a private run's releases minus its noiseless estimates and perturbations are not "
                             "TREE(sigma z) of its secret seed's ('spider_sosp', 'noise') stream: the regeneration "
                             "features would miss its noise")
    if not np.array_equal(outcomes[1].result.debug.estimates[0] - outcomes[0].result.debug.estimates[0], shift):
        raise PipelineMismatch("the canary does not move step 0's O1 estimate by c/b: it is not in step 0's batch")
    # the pair's μ on the usual path (first restart at step 1, no perturbation before it matters): Δ at step 0 only
    gram = _release_gram(setup, 64)
    unit = np.zeros(64)
    unit[0] = 1.0
    mu = float(np.linalg.norm(shift)) * math.sqrt(float(np.linalg.solve(gram, unit)[0])) / setup.noise_std
    setup._cache["length"] = max(o.steps for o in outcomes) + 32
    return dataclasses.replace(setup, releases_mu=mu, _cache=setup._cache)


# ---------------------------------------------------------------------------------------------------
# One trial and its features


def publish(setup: SpiderSospPublishedSetup, rng: np.random.Generator, which: int, *, proxy: bool = False) -> dict:
    """One trial: the publication (file name → text) of a default run on D (which = 0) or D′ (1). Draws as stated
    in the module docstring; a run that raises ValueError or ArithmeticError publishes only error.txt."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    which = check_int("which", which, minimum=0, maximum=1)
    public = setup.public_seed if setup.public_seed is not None else int(rng.integers(0, 2**62))
    secret = SecretSeed(_draw_secret(rng), "os_entropy") if proxy else None
    try:
        outcome = run_pipeline(setup.builder(which), seed=public, noise_seed=secret)
        return spider_runner.spider_publication(outcome, command=COMMAND,
                                                include_nonprivate=setup.variant == "nonprivate")
    except _ERRORS as exc:
        return {"error.txt": f"{type(exc).__name__}: {exc}\n"}


def read_releases(files: Mapping[str, str], d: int) -> np.ndarray | None:
    """g̃ as (k, d) from releases.csv (columns t, release_0..release_{d−1}, t = 0..k−1 in order); None when absent or
    malformed."""
    text = files.get("releases.csv")
    if text is None:
        return None
    lines = [line.split(",") for line in text.splitlines() if line.strip()]
    try:
        header = lines[0]
        t_col = header.index("t")
        columns = [header.index(f"release_{j}") for j in range(d)]
        if [int(row[t_col]) for row in lines[1:]] != list(range(len(lines) - 1)) or len(lines) < 2:
            return None
        out = np.array([[float(row[c]) for c in columns] for row in lines[1:]])
    except (ValueError, IndexError):
        return None
    return out if np.all(np.isfinite(out)) else None


class SpiderSospPublishedAudit(PublishedAudit):
    """The spider_sosp published-output scenario: ``empirical_dp.published.PublishedAudit`` with this pipeline's claim,
    description, trials and features."""

    def _claim(self) -> dict:
        """μ-GDP at the ledger's μ (rule gdp_exact) with its δ."""
        plan = self.setup.plan
        return {"claimed_mu": float(plan.mu), "delta": float(plan.dp_delta)}

    def _description(self) -> str:
        setup, s, config = self.setup, self.setup.settings, self.setup.config
        seed = "a fresh public seed per trial" if setup.public_seed is None else f"public seed {setup.public_seed}"
        return (f"spider_sosp publication ({VARIANTS[setup.variant][0]}), cosine, d={s['d']}, n={s['samples']} "
                f"(b={config.batch_size}, κ={config.kappa:.4g}, ζ={setup.perturbation_scale:.4g}), canary in step 0's "
                f"O1 batch, σ={setup.noise_std:.6g}, releases' μ≈{setup.releases_mu:.4g}, {seed}; plan "
                f"{setup.plan.rule}, μ={float(setup.plan.mu):.6g}; score: the training split's best feature")

    def publish_trial(self, rng, which, *, proxy=False):
        return publish(self.setup, rng, which, proxy=proxy)

    def features(self, publication_files):
        setup = self.setup
        files = dict(publication_files)
        out = file_features(files)                                                          # c
        releases = read_releases(files, setup.d)
        if releases is None:
            return out
        steps = releases.shape[0]
        tau, perturbed = read_schedule(setup, releases)
        means = np.stack([noiseless_means(setup, releases, which, tau) for which in (0, 1)])
        residuals = releases[None] - means                                                 # (2, k, d)
        delta = means[1] - means[0]                                                          # (k, d), 0 from τ on
        # Σ_P restricted to what Δ needs: the whole run (Δ's nodes reach every later release of their subtree)
        covariance = setup.noise_std**2 * _release_gram(setup, steps) + np.diag(
            perturbed * setup.perturbation_scale**2 / setup.d)
        solved = _solve_spd(covariance, delta)
        out["release_score"] = float(np.sum(solved * (residuals[0] - delta / 2)))         # a
        keep = ~perturbed
        seed, public = _public_seeds(setup, files)
        candidates = candidate_seeds(public, seed if seed is not None else 0, files)
        if seed is None:
            candidates = [(source, seeds if source != "seed offsets" else []) for source, seeds in candidates]
        regeneration_features(candidates, residuals[:, keep].reshape(2, -1),
                              lambda seeds: noise_of_seed(setup, seeds, steps)[:, keep].reshape(len(seeds), -1),
                              out)                                                          # b
        return out


def spider_sosp_published_scenario(variant: str = "default", *, name=None, training_trials=TRAINING_TRIALS,
                                   training_seed=0, **settings) -> SpiderSospPublishedAudit:
    """A ``SpiderSospPublishedAudit`` of ``variant``; name defaults to "spider_sosp-published" for the default
    variant, else "spider_sosp-published-VARIANT"."""
    setup = spider_sosp_published_setup(variant, **settings)
    if name is None:
        name = "spider_sosp-published" if variant == "default" else f"spider_sosp-published-{variant.replace('_', '-')}"
    return SpiderSospPublishedAudit(setup, name, training_trials=training_trials, training_seed=training_seed)


def _factory(variant: str, name: str) -> Callable[[], SpiderSospPublishedAudit]:
    return lambda: spider_sosp_published_scenario(variant, name=name)


#: Registered name → factory of its ``SpiderSospPublishedAudit`` (the default and the planted leak).
SPIDER_SOSP_PUBLISHED_BUILTINS: dict[str, Callable[[], SpiderSospPublishedAudit]] = {
    "spider_sosp-published": _factory("default", "spider_sosp-published"),
    "spider_sosp-published-nonprivate": _factory("nonprivate", "spider_sosp-published-nonprivate"),
}
