"""Auditing everything a zo_o2nc run publishes: the files of ``reference.runner.publication`` for a run of
``reference.runner.run_zo_o2nc`` scored as one output (docs/audits.md, "zo_o2nc: everything a run publishes";
threat model docs/design.md).

Sources:
- Zhang, Tran, Cutkosky 2024 (ICLR), "Private Zeroth-Order Nonsmooth Nonconvex Optimization": Alg 3 + 4 + 5 and
  Theorem 4.3: the privacy plan covers the releases g̃_t^k and their post-processing with public randomness
  (iterates, epoch averages w̄^k, the output w̄ = w̄^{k*}). Lemma 3.1: the GRAD leaf's replace-one sensitivity
  2dL/B1. Every other number a run writes is covered only if it is such a post-processing or a function of public
  data (the held-out draws, the population).
- Dong, Roth, Su 2022 (JRSS-B) Cor. 3.3: the adaptive composition of the Gaussian node releases is μ-GDP
  (the argument of ``empirical_dp.zo_o2nc``); post-processing keeps it.
- ``empirical_dp.published``: the whole-publication audit of DPZero, whose machinery this module reuses
  (``PublishedAudit``: feature selection on a training split, then ``empirical_dp.audit.audit`` with its
  Clopper–Pearson and GDP bounds; ``file_features``; ``candidate_seeds`` and ``regeneration_features``).

Threat model. Everything a run receives or writes is public — the public seed and every stream it keys
(directions, segment points s_t^k, the output epoch k*, the Goldstein points), the data seed, the hyper-parameters,
the code, both neighbouring data sets, the population and the held-out draws, and every published file — except the
run's secret seed (the tree noise, key ("zo_o2nc", "noise")).

The pipeline. Each trial runs ``run_zo_o2nc`` with its DEFAULT privacy arguments — no ``noise_seed`` (fresh
operating-system entropy per trial), the default backend (``fast`` when installed), Theorem 4.9's settings with
the default rules (T_rule "max", count_rule "exact"), the default smoothing radius δ = 0.25, data seed 0 and
Goldstein samples 256 — at a stated privacy target (ρ = μ*(ε = 1, δ = 1e-5) = 0.2681, δ = 1e-5) on M = 32 records
in d = 1 (T = 5, K = 3, B1 = 6, B2 = 1), then ``publication(outcome, command=...)`` (releases.csv, epochs.csv,
output.csv, diagnostics.json, ledger.json, manifest.json). ``run_zo_o2nc`` only runs built-in problems (the
records are draws from a population fixed by the data seed; it takes no caller's data set, unlike
``run_algorithm``'s ``objective``), so the scenario substitutes ONE thing: the problem it builds. The trial calls
``run_zo_o2nc``'s own code (its ``__code__``) over a copy of ``reference.runner``'s namespace in which
``build_ridge_problem`` returns the canary problem (``CanaryBuilder``; it checks that the run asked for that
problem's profile, d, M, population size and held-out size). ``reference.runner`` itself is never modified, so
other callers, threads and processes are unaffected; everything else — settings, calibration, the secret seed,
the algorithm, the diagnostics, the publication — is the shipped code.

The pair (``canary_problems``). Records are ridge rows z = (a, c) of the "capped" profile, f(x; z) =
L·min(|⟨a, x⟩ − c|, τ), L = τ = 1 (the runner's ``RIDGE_LIPSCHITZ``, ``RIDGE_TAU``), every one L-Lipschitz:
* the FLAT record a = e_1, c = 1000: |⟨a, x⟩ − c| > τ at every point the run can query (x_1 = 5/√d·1 and the
  iterates move at most K·δ + 2δ from it), so f ≡ τ there and every finite difference of it is exactly 0 — it
  contributes nothing to any GRAD or DIFF leaf (the "zero record" of ``empirical_dp.zo_o2nc``);
* the CANARY a = v, c = ⟨v, x_1⟩ − τ/2: at the GRAD query points x_1 ± δu_j (epoch 1, round 1: w_1^1 = x_1, the
  learner starts at Δ = 0) it lies on the linear piece r ∈ (0, τ) (δ < τ/2 is checked), so its central difference
  along u_j is exactly ⟨v, u_j⟩ and its GRAD contribution is (L/B1)(Σ_j u_j u_jᵀ)v: extremal along the public
  directions (|slope| = L). v is the top eigenvector of the canary's d public directions (v = 1 at d = 1).
D has M flat records; D′ replaces record 0 — the first record of the GRAD block Z_1^1, the leaf that enters the
most tree nodes (⌊log2 T⌋ + 1) — by the canary (replace-one, M public). The population (public: it fixes the
population diagnostics and the held-out draws) is {flat, canary}; the held-out draws are M public indices from
``Streams(data_seed).generator("zo_o2nc_published", "held-out")``. Every training-data quantity on D is a constant
(F ≡ τ, ∇F ≡ 0) and on D′ is not, so a training diagnostic that reaches a file separates D from D′ in its raw value
(which is why this audit needs no recomputation feature, unlike DPZero's).

The noiseless sums are known to the attacker. The flat records make every DIFF leaf 0 and every GRAD leaf of
epochs ≥ 2 zero, and the canary's GRAD leaf is evaluated at public points only, so the noiseless running sums g_t^k
are constants of the data: m_D = 0 and m_D′ = the canary's move a = (L/B1)λv in every release of epoch 1, 0 after —
whatever the noise and the iterates. They are read from the σ = 0 twin of the run (``run_zo_o2nc(...,
noise="none")``), and the builder checks, on a private run per data set with a known user secret S, that its
``diagnostics.noiseless_sums`` equal them and that its releases minus them are exactly the tree noise of S's
stream, TREE(σ z_S) with z_S = ``Streams(S).generator("zo_o2nc", "noise").standard_normal((K, T, d))``
(``reference.fast.mechanisms.tree_prefix_noise``): the attacker's noise model is the algorithm's (ValueError
otherwise). At d = 1 the move does not depend on the directions (u² = 1), so the means are the same for every public
seed, and the built-ins draw a fresh public seed per trial (``public_seed=None``; it is published in the ledger and
the manifest); at d > 1 one public seed serves all trials.

Features (``ZoO2ncPublishedAudit.features``; a fixed-length vector over the training split's schema):
a. ``release_score``: the log-likelihood ratio of the releases, Σ_k Δ_kᵀ(σ²RRᵀ)⁻¹(g̃^k − (m_D^k + m_D′^k)/2), R the
   tree's release matrix (``scenarios.tree_release_matrix``): the optimal test on releases.csv.
b. ``regenerated[SOURCE]`` (``published.regeneration_features``): for every candidate seed c the noise TREE(σ z_c)
   is compared with the residuals g̃ − m_D and g̃ − m_D′ (all K·T·d values); best log-match under D′ minus best
   under D. Sources (``published.candidate_seeds``): "public seeds" (the run's public seed, read from ledger.json
   or manifest.json, and the data seed), "seed offsets" (public seed + k, ``published.SEED_OFFSETS``) and
   "text:FILE" (every integer token of every file). No replicates: a candidate stands for itself only.
c. ``published.file_features``: every file's presence and length, every numeric leaf of every JSON file, every
   numeric cell of every CSV file except releases.csv, ``completed`` (0 when only error.txt is published).

Claim. μ-GDP with μ = the ledger's ``rho_exact`` (``plan.rho_exact``): the releases are μ-GDP at that μ (the argument
of ``empirical_dp.zo_o2nc``: an adaptive composition of Gaussian node releases, Dong–Roth–Su Cor. 3.3, maximised
over the leaves; parallel composition over the epochs), and every other file is a post-processing of them with
public data, so the whole publication is. It implies ε = ε_μ(δ) = 1 at δ = 1e-5, below the ledger's own
``epsilon_claimed`` (1.092: the optimal RDP conversion of the same ρ), so the audit holds the run to the stronger
statement; both the Clopper–Pearson ε_lb and the GDP μ_lb may refute it. The pair attains much less (its
releases' μ, in the description, is the leaf-1 canary's (L/B1)√(⌊log2 T⌋ + 1)/σ: the ledger's ρ is set by the DIFF
leaves, whose worst case needs iterates at the step bound), so a consistent verdict says that no file adds to what
the releases carry, not that the accounting is tight (``empirical_dp.zo_o2nc`` audits that).

Variants (``VARIANTS``; planted ones registered in ``empirical_dp.planted``, twins = the default pipeline):
(i) ``public_seed_noise``: the secret seed derived from the public seed, noise_seed = seed + 1 (the old
    ``seed + r`` arithmetic; the runner accepts it: it differs from seed and data seed) — caught by regenerating the
    noise from the seed offsets;
(ii) ``training_diagnostics``: the NOT PRIVATE diagnostics published (``include_nonprivate=True``:
    nonprivate_diagnostics.json, training-set objective and stationarity) — caught by their raw values.

Randomness. ``publish_trial(rng, which)`` draws, in order: the public seed (``integers(0, 2**62)``, when
``public_seed`` is None), then for a training publication (``proxy``) one 128-bit value v (two
``integers(0, 2**64, 2, uint64)``) that becomes ``SecretSeed(v, "os_entropy")`` — the law of fresh entropy,
reproducible; counted trials of the default pipeline draw fresh operating-system entropy inside the runner.
"""

from __future__ import annotations

import json
import math
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from reference import runner
from reference.algorithms.zo_o2nc import directions_for_round
from reference.algorithms.zo_o2nc_theory import thm49_settings
from reference.fast.conversions import gaussian_mu
from reference.fast.mechanisms import participation_count, tree_prefix_noise
from reference.objectives import RidgeSum
from reference.rng import SEED_BOUND, Streams
from reference.secrets import SecretSeed
from reference.validation import check_int, check_probability, check_real

from .published import (
    TRAINING_TRIALS,
    PublishedAudit,
    candidate_seeds,
    file_features,
    regeneration_features,
)
from .scenarios import tree_release_matrix

__all__ = [
    "VARIANTS",
    "SETTINGS",
    "FLAT_OFFSET",
    "PROFILE",
    "COMMAND",
    "PipelineMismatch",
    "CanaryBuilder",
    "canary_problems",
    "ZoO2ncPublishedSetup",
    "zo_o2nc_published_setup",
    "run_pipeline",
    "publish",
    "noise_of_seed",
    "ZoO2ncPublishedAudit",
    "zo_o2nc_published_scenario",
    "ZO_O2NC_PUBLISHED_BUILTINS",
]

#: The variants of the pipeline: name → (what it runs, its correct twin or None).
VARIANTS = {
    "default": ("zo_o2nc with default arguments: fresh secret entropy, default backend, default publication", None),
    "public_seed_noise": ("(i) the secret seed derived from the public seed, noise_seed = seed + 1", "default"),
    "training_diagnostics": ("(ii) the NOT PRIVATE training diagnostics published (include_nonprivate=True)",
                             "default"),
}

#: The built-in run: M records, d, the privacy target (ε → ρ = μ*(ε, δ)) at δ, the smoothing radius (the runner's
#: default), the public seed (None: a fresh public seed per trial, d = 1 only) and the data seed (the default).
SETTINGS = dict(samples=32, d=1, epsilon=1.0, delta=1e-5, smoothing_radius=0.25, public_seed=None, data_seed=0)
#: The ridge profile of the records (``reference.runner.O2NC_PROBLEMS``): "capped", φ(r) = min(|r|, τ), flat beyond τ.
PROFILE = "capped"
#: c of the flat record: far beyond τ from every point a run queries (checked against x_1 and the step bound).
FLAT_OFFSET = 1000.0
#: The command a publication records.
COMMAND = "dpref run zo_o2nc (empirical_dp.zo_o2nc_published audit pipeline)"
#: Bound on the per-seed memo of regenerated noise (entries; half are dropped when it is reached).
_MEMO_LIMIT = 20_000
#: What a data-dependent crash of a run raises; a publication is then only error.txt.
_ERRORS = (ValueError, ArithmeticError)
#: Tolerances of the build-time checks: the noiseless sums (absolute) and the residual noise (relative rms).
_MEAN_TOLERANCE = 1e-12
_NOISE_TOLERANCE = 1e-9


class PipelineMismatch(Exception):
    """The runner asked for another problem than the canary problem, or a build-time check of the noise model
    failed in a way that is not the run's fault. Never published as error.txt: it propagates."""


# ---------------------------------------------------------------------------------------------------
# The pair and the pipeline


@dataclass(frozen=True)
class CanaryBuilder:
    """Stands in for ``reference.runner.build_ridge_problem`` inside one call of ``run_zo_o2nc``: returns
    ``problem`` after checking that the call asked for its profile, d, M, population size, held-out size (None: the
    runner's default M) and data seed."""

    problem: object

    def __call__(self, problem="wshape", *, d=4, samples=20_000, population=1000, held_out_n=None, data_seed=0):
        p = self.problem
        asked = (problem, d, samples, population, samples if held_out_n is None else held_out_n, data_seed)
        have = (p.problem, p.d, p.samples, p.population.n, p.held_out_n, p.data_seed)
        if asked != have:
            raise PipelineMismatch(f"the run asked for problem {asked} (profile, d, M, population, held-out, data "
                                   f"seed), the canary problem is {have}")
        return p


def run_pipeline(problem, **arguments):
    """``reference.runner.run_zo_o2nc(problem=PROFILE, d, samples, population, data_seed, **arguments)`` with its
    problem builder bound to ``problem`` (a ``reference.runner.RidgeProblem``): the function's own code over a copy
    of its module's namespace, so ``reference.runner`` is not modified (module docstring)."""
    base = runner.run_zo_o2nc
    namespace = dict(base.__globals__)
    namespace["build_ridge_problem"] = CanaryBuilder(problem)
    run = types.FunctionType(base.__code__, namespace, base.__name__, base.__defaults__, base.__closure__)
    run.__kwdefaults__ = dict(base.__kwdefaults__ or {})
    return run(problem=problem.problem, d=problem.d, samples=problem.samples, population=problem.population.n,
               data_seed=problem.data_seed, **arguments)


def canary_problems(samples, d, direction, *, data_seed=0) -> tuple:
    """(D, D′) as ``reference.runner.RidgeProblem`` over the population {flat, canary} (module docstring): D has
    ``samples`` flat records, D′ the canary ``direction`` (unit, (d,)) as record 0. Held-out: ``samples`` public
    indices from ``Streams(data_seed).generator("zo_o2nc_published", "held-out")``."""
    samples = check_int("samples", samples, minimum=2)
    d = check_int("d", d, minimum=1)
    v = np.asarray(direction, dtype=np.float64).reshape(d)
    x1 = np.full(d, runner.X1_NORM / math.sqrt(d))
    flat = np.zeros(d)
    flat[0] = 1.0
    population = RidgeSum(np.stack([flat, v]), np.array([FLAT_OFFSET, float(v @ x1) - runner.RIDGE_TAU / 2]),
                          lipschitz=runner.RIDGE_LIPSCHITZ, profile=PROFILE, tau=runner.RIDGE_TAU)
    held_out = Streams(data_seed).generator("zo_o2nc_published", "held-out").integers(2, size=samples)
    first = np.zeros(samples, dtype=np.int64)
    second = first.copy()
    second[0] = 1
    return tuple(runner.RidgeProblem(PROFILE, population, index, held_out, data_seed) for index in (first, second))


@dataclass(frozen=True)
class ZoO2ncPublishedSetup:
    """Everything a zo_o2nc published-output scenario fixes before any trial (``zo_o2nc_published_setup``).

    variant: a key of ``VARIANTS``; settings: ``SETTINGS`` with overrides; problems: (D, D′); rho: the target ρ
    the runs are given; plan: the ledger's ``ZoO2ncPrivacyPlan`` (public); noise_std: σ; shape: (K, T, d) of the
    releases; B1; means: (2, K, T, d) the noiseless sums on D and D′; weights: Σ⁻¹Δ (K, T, d) and midpoint
    (K, T, d) of the release score; releases_mu: the releases' exact GDP μ for the pair.
    """

    variant: str
    settings: dict
    problems: tuple
    rho: float
    plan: object
    noise_std: float
    shape: tuple
    B1: int
    means: np.ndarray
    weights: np.ndarray
    midpoint: np.ndarray
    releases_mu: float
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def public_seed(self) -> int | None:
        return self.settings["public_seed"]

    def run_arguments(self) -> dict:
        """The privacy arguments of every trial's run: the target ρ and δ, the smoothing radius (no noise_seed, no
        backend: their defaults)."""
        s = self.settings
        return dict(rho=self.rho, delta=s["delta"], smoothing_radius=s["smoothing_radius"])


def _check_settings(overrides: dict) -> dict:
    unknown = set(overrides) - set(SETTINGS)
    if unknown:
        raise ValueError(f"unknown setting(s) {sorted(unknown)}; allowed: {sorted(SETTINGS)}")
    s = {**SETTINGS, **overrides}
    s["samples"] = check_int("samples", s["samples"], minimum=2)
    s["d"] = check_int("d", s["d"], minimum=1)
    s["epsilon"] = float(check_real("epsilon", s["epsilon"], positive=True))
    s["delta"] = float(check_probability("delta", s["delta"]))
    s["smoothing_radius"] = float(check_real("smoothing_radius", s["smoothing_radius"], positive=True))
    if not s["smoothing_radius"] < runner.RIDGE_TAU / 2:
        raise ValueError(f"smoothing_radius must be < tau/2 = {runner.RIDGE_TAU / 2:g} (the canary's GRAD points "
                         f"x_1 ± delta u must stay on its linear piece), got {s['smoothing_radius']!r}")
    s["data_seed"] = check_int("data_seed", s["data_seed"], minimum=0, maximum=SEED_BOUND - 1)
    if s["public_seed"] is not None:
        s["public_seed"] = check_int("public_seed", s["public_seed"], minimum=0, maximum=2**62)
    elif s["d"] != 1:
        raise ValueError("public_seed must be given when d > 1 (the canary's direction depends on the public "
                         "directions; only at d = 1 may every trial draw its own public seed)")
    return s


def _direction(s: dict, gap: float, rho: float) -> tuple[np.ndarray, int]:
    """v (the top eigenvector of the canary's d public GRAD directions; 1 at d = 1) and B1 of the theory's
    settings."""
    theory = thm49_settings(s["samples"], s["d"], runner.RIDGE_LIPSCHITZ, s["smoothing_radius"], rho, gap)
    B1 = int(theory.B1)
    if s["d"] == 1:
        return np.ones(1), B1
    directions = directions_for_round(s["public_seed"], 1, 1, B1, s["d"])[0]
    _, vectors = np.linalg.eigh(directions.T @ directions)
    v = vectors[:, -1]
    return v * (1.0 if v[np.flatnonzero(v)[0]] > 0 else -1.0), B1


def noise_of_seed(setup: ZoO2ncPublishedSetup, seeds) -> np.ndarray:
    """(len(seeds), K·T·d): TREE(σ z_c) for each seed c, z_c = ``Streams(c).generator("zo_o2nc", "noise")
    .standard_normal((K, T, d))`` — the tree noise a run whose secret seed is c adds (memoised per seed)."""
    cache = setup._cache
    found = {int(c): cache[("z", int(c))] for c in seeds if ("z", int(c)) in cache}
    missing = sorted({int(c) for c in seeds} - set(found))
    if missing:
        if len(cache) > _MEMO_LIMIT:  # bounded: novel candidates (e.g. a leaked secret) arrive with every trial
            for key in [k for k in cache if k[0] == "z"][: _MEMO_LIMIT // 2]:
                del cache[key]
        z = np.array([Streams(c).generator("zo_o2nc", "noise").standard_normal(setup.shape) for c in missing])
        for c, noise in zip(missing, tree_prefix_noise(setup.noise_std * z)):
            found[c] = cache[("z", c)] = noise.reshape(-1)
    rows = [found[int(c)] for c in seeds]
    return np.array(rows) if rows else np.empty((0, int(np.prod(setup.shape))))


def zo_o2nc_published_setup(variant: str = "default", **overrides) -> ZoO2ncPublishedSetup:
    """The fixed part of a zo_o2nc published-output scenario (module docstring). overrides: keys of ``SETTINGS``.

    Makes four runs of the pipeline (σ = 0 and one private run with a known user secret per data set) and checks
    the noise model on them: the private run's noiseless sums equal the σ = 0 releases, and its releases minus them
    equal TREE(σ z_S) of its secret S (ValueError otherwise)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {tuple(VARIANTS)}, got {variant!r}")
    s = _check_settings(overrides)
    rho = float(gaussian_mu(s["epsilon"], s["delta"]))
    probe, _ = canary_problems(s["samples"], s["d"], np.eye(s["d"])[0], data_seed=s["data_seed"])
    gap = float(probe.value(probe.weights("population"), probe.x1))  # F* as the runner computes it (v-independent)
    direction, B1 = _direction(s, gap, rho)
    problems = canary_problems(s["samples"], s["d"], direction, data_seed=s["data_seed"])
    check_seed = 0 if s["public_seed"] is None else s["public_seed"]
    arguments = dict(rho=rho, delta=s["delta"], smoothing_radius=s["smoothing_radius"], seed=check_seed)
    user_secret = 2**100 + 20240501  # the checks' known secret (≠ every public seed of the checks)
    means, plan, sigma = [], None, None
    for problem in problems:
        noiseless = run_pipeline(problem, noise="none", **arguments)
        private = run_pipeline(problem, noise_seed=user_secret, **arguments)
        if int(private.theory.B1) != B1:
            raise PipelineMismatch(f"the run used B1 = {private.theory.B1}, the canary was built for B1 = {B1}")
        mean = np.array(noiseless.result.releases, dtype=np.float64)
        if not np.allclose(private.result.diagnostics.noiseless_sums, mean, rtol=0, atol=_MEAN_TOLERANCE):
            raise ValueError("the noiseless sums of a private run differ from the sigma = 0 run's releases: the means "
                             "depend on the noise, so the attacker could not subtract them")
        means.append(mean)
        plan, sigma = private.result.ledger.plan, float(private.result.ledger.settings.noise_std)
        K, T, d = mean.shape
        z = Streams(user_secret).generator("zo_o2nc", "noise").standard_normal((K, T, d))
        residual = np.asarray(private.result.releases, dtype=np.float64) - mean
        expected = tree_prefix_noise(sigma * z)
        if np.sqrt(np.mean((residual - expected) ** 2)) > _NOISE_TOLERANCE * np.sqrt(np.mean(expected**2)):
            raise ValueError("a private run's releases minus its noiseless sums are not TREE(sigma z) of its secret "
                             "seed's ('zo_o2nc', 'noise') stream: the regeneration features would miss its noise")
    means = np.stack(means)
    means.setflags(write=False)
    K, T, d = means.shape[1:]
    shift = means[1] - means[0]
    release = tree_release_matrix(T)
    covariance = release @ release.T
    weights = np.stack([np.linalg.solve(covariance, shift[k]) for k in range(K)]) / sigma**2
    whitened = np.stack([np.linalg.solve(release, shift[k]) for k in range(K)])
    mu = float(math.sqrt(float(np.sum(whitened**2)))) / sigma
    return ZoO2ncPublishedSetup(variant=variant, settings=s, problems=problems, rho=rho, plan=plan, noise_std=sigma,
                                shape=(K, T, d), B1=B1, means=means, weights=weights,
                                midpoint=(means[0] + means[1]) / 2, releases_mu=mu)


# ---------------------------------------------------------------------------------------------------
# One trial and its features


def _draw_secret(rng: np.random.Generator) -> int:
    """A uniform integer in [0, 2^128) from two 64-bit draws."""
    low, high = (int(v) for v in rng.integers(0, 2**64, size=2, dtype=np.uint64))
    return low | (high << 64)


def publish(setup: ZoO2ncPublishedSetup, rng: np.random.Generator, which: int, *, proxy: bool = False) -> dict:
    """One trial: the publication (file name → text) of a run of ``setup``'s variant on D (which = 0) or D′ (1).
    Draws as stated in the module docstring; a run that raises ValueError or ArithmeticError publishes only
    ``{"error.txt": "<type>: <message>"}``."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    which = check_int("which", which, minimum=0, maximum=1)
    public = setup.public_seed if setup.public_seed is not None else int(rng.integers(0, 2**62))
    secret = SecretSeed(_draw_secret(rng), "os_entropy") if proxy else None
    include_nonprivate = setup.variant == "training_diagnostics"
    if setup.variant == "public_seed_noise":
        secret = public + 1  # the planted bug: a secret seed computed from the public one
    try:
        outcome = run_pipeline(setup.problems[which], seed=public, noise_seed=secret, **setup.run_arguments())
        return runner.publication(outcome, command=COMMAND, include_nonprivate=include_nonprivate)
    except _ERRORS as exc:
        return {"error.txt": f"{type(exc).__name__}: {exc}\n"}


def _releases(files: Mapping[str, str], shape) -> np.ndarray | None:
    """g̃ (K, T, d) from releases.csv (columns k, t, release_0..release_{d−1}); None when absent or malformed."""
    text = files.get("releases.csv")
    if text is None:
        return None
    K, T, d = shape
    lines = [line.split(",") for line in text.splitlines() if line.strip()]
    try:
        header = lines[0]
        k_col, t_col = header.index("k"), header.index("t")
        columns = [header.index(f"release_{j}") for j in range(d)]
        out = np.full((K, T, d), np.nan)
        for row in lines[1:]:
            out[int(row[k_col]) - 1, int(row[t_col]) - 1] = [float(row[c]) for c in columns]
    except (ValueError, IndexError):
        return None
    return out if np.all(np.isfinite(out)) else None


def _public_seeds(setup: ZoO2ncPublishedSetup, files: Mapping[str, str]) -> tuple[int | None, set[int]]:
    """The run's public seed (as ledger.json or manifest.json state it; the setup's when fixed) and every public
    seed of the publication (that seed and the data seed)."""
    seed = setup.public_seed
    if seed is None:
        for name, path in (("ledger.json", ("seed",)), ("manifest.json", ("seeds", "seed"))):
            try:
                value = json.loads(files[name])
                for key in path:
                    value = value[key]
                seed = int(value)
                break
            except (KeyError, ValueError, TypeError):
                continue
    seeds = {setup.settings["data_seed"]} | ({seed} if seed is not None else set())
    return seed, seeds


class ZoO2ncPublishedAudit(PublishedAudit):
    """A zo_o2nc published-output scenario: ``empirical_dp.published.PublishedAudit`` (training split, feature
    selection, binary score, ``Scenario``) with this pipeline's claim, description, trials and features."""

    def _claim(self) -> dict:
        """μ-GDP at the ledger's exact ρ (module docstring, Claim)."""
        return {"claimed_mu": float(self.setup.plan.rho_exact), "delta": float(self.setup.settings["delta"])}

    def _description(self) -> str:
        setup, s = self.setup, self.setup.settings
        K, T, d = setup.shape
        seed = "a fresh public seed per trial" if setup.public_seed is None else f"public seed {setup.public_seed}"
        return (f"zo_o2nc publication ({VARIANTS[setup.variant][0]}), d={d}, M={s['samples']} (T={T}, K={K}, "
                f"B1={setup.B1}), canary in leaf 1 of epoch 1 ({participation_count(1, T)} nodes), "
                f"σ={setup.noise_std:.6g}, releases' μ={setup.releases_mu:.4g}, {seed}; ledger "
                f"ρ={setup.plan.rho_exact:.6g} (its ε={setup.plan.epsilon_claimed:.4g}); score: the training "
                f"split's best feature")

    def publish_trial(self, rng, which, *, proxy=False):
        return publish(self.setup, rng, which, proxy=proxy)

    def features(self, publication_files):
        setup = self.setup
        files = dict(publication_files)
        out = file_features(files)                                                          # c
        releases = _releases(files, setup.shape)
        if releases is not None:
            out["release_score"] = float(np.sum(setup.weights * (releases - setup.midpoint)))  # a
            residuals = (releases[None] - setup.means).reshape(2, -1)
            seed, public = _public_seeds(setup, files)
            candidates = candidate_seeds(public, seed if seed is not None else 0, files)
            if seed is None:  # no public seed found: no offsets to guess around
                candidates = [(source, seeds if source != "seed offsets" else []) for source, seeds in candidates]
            cache = setup._cache if setup.public_seed is not None else None  # fixed seeds: keep their stacks
            regeneration_features(candidates, residuals, lambda seeds: noise_of_seed(setup, seeds), out, cache)  # b
        return out


def zo_o2nc_published_scenario(variant: str = "default", *, name=None, training_trials=TRAINING_TRIALS,
                               training_seed=0, **settings) -> ZoO2ncPublishedAudit:
    """A ``ZoO2ncPublishedAudit`` of ``variant`` (``zo_o2nc_published_setup`` takes ``settings``); name defaults to
    "zo_o2nc-published" for the default variant, else "zo_o2nc-published-VARIANT"."""
    setup = zo_o2nc_published_setup(variant, **settings)
    if name is None:
        name = "zo_o2nc-published" if variant == "default" else f"zo_o2nc-published-{variant.replace('_', '-')}"
    return ZoO2ncPublishedAudit(setup, name, training_trials=training_trials, training_seed=training_seed)


def _factory(variant: str, name: str) -> Callable[[], ZoO2ncPublishedAudit]:
    return lambda: zo_o2nc_published_scenario(variant, name=name)


#: Registered name → factory of its ``ZoO2ncPublishedAudit`` (the default and the planted leaks).
ZO_O2NC_PUBLISHED_BUILTINS: dict[str, Callable[[], ZoO2ncPublishedAudit]] = {
    "zo_o2nc-published": _factory("default", "zo_o2nc-published"),
    "zo_o2nc-published-public-seed-noise": _factory("public_seed_noise", "zo_o2nc-published-public-seed-noise"),
    "zo_o2nc-published-training-diagnostics": _factory("training_diagnostics",
                                                       "zo_o2nc-published-training-diagnostics"),
}
