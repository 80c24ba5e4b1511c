"""Auditing everything an nsnc_improved run publishes: the files of
``reference.runner_nsnc_improved.nsnc_publication`` for a DEFAULT run of
``reference.runner_nsnc_improved.run_nsnc_improved`` scored as one output (docs/audits.md, "nsnc_improved:
everything a run publishes"; threat model docs/design.md). The companion of ``empirical_dp.zo_o2nc_published``,
whose pair, feature set and machinery it mirrors.

Sources:
- Kornowski, Liu, Talwar 2025 (ICML), "Improved Sample Complexity for Private Nonsmooth Nonconvex Optimization":
  Algorithm 2 + 3 (single pass; the reset g = (1/B1) Σ e(z_t; ξ), the increments, the per-period tree of Σ leaves)
  and Lemmas 3.3/3.4: the privacy plan covers the releases g̃_t and their post-processing with public randomness
  (iterates, block averages, the output x̄_{k*}). Every other number a run writes is covered only if it is such a
  post-processing or a function of public data (the held-out draws, the population).
- ``empirical_dp.nsnc_improved``: the tree noise of a run (one fresh tree per period, ``_tree_noise``).
- ``empirical_dp.published`` / ``empirical_dp.zo_o2nc_published``: the whole-publication audit (``PublishedAudit``:
  feature selection on a training split, then ``empirical_dp.audit.audit``; ``file_features``,
  ``candidate_seeds``, ``regeneration_features``).

Threat model. Everything a run receives or writes is public — the public seed and every stream it keys (segment
points, k*, the Goldstein points), the data seed, the hyper-parameters, the code, both neighbouring data sets, the
population and the held-out draws, and every published file — except the run's secret seed (the tree noise, key
("nsnc_improved", "noise"), and, under the high-probability guarantee, the directions).

The pipeline. Each trial runs ``run_nsnc_improved`` with its DEFAULT arguments (oracle "single-pass", ε = 1, δ =
1e-6, α = 0.25, m = 64 directions per record (the default of the library and of ``dpref run nsnc_improved``),
variant "corrected", accountant "exact", sensitivity mode "auto", no clip hardening, Goldstein samples 256, default
backend, no ``noise_seed``: fresh operating-system entropy) on M = 32 records in d = 1 over a population of 2 ridges
of the "capped" profile (T = 17 steps, K = 17 blocks of 1 step, Σ = 4, B1 = 4, B2 = 1), then
``nsnc_publication(outcome, command=...)`` (releases.csv, blocks.csv, output.csv, diagnostics.json, ledger.json,
manifest.json). At m = 64 the plan's guarantee is "worst-case" (the high-probability bound needs the theory's m), so
the directions come from the public seed. The variant ``theory_directions`` (registered as
``nsnc_improved-published-theory-m``) runs with ``directions="theory"``: the guarantee is then
"high-probability" (the increments' Lemma 3.3 bound is below their worst case; δ_fail = 5e-7 is paid inside δ) and
the directions come from the secret seed, so that path's publication is audited too.
``run_nsnc_improved`` only runs built-in problems, so the scenario substitutes ONE thing: the problem it builds.
The trial calls ``run_nsnc_improved``, ``prepare_nsnc_improved`` and ``execute_nsnc_improved``'s own code over a
copy of ``reference.runner_nsnc_improved``'s namespace in which ``build_ridge_problem`` returns the canary problem
(``CanaryBuilder``; it checks the profile, d, population size and data seed of every call, and that a call is
either the run's (M records, M held-out) or the Φ probe's (1 and 1), answered with the same population). The
reference modules are never modified.

The pair (``canary_problems``, as ``empirical_dp.zo_o2nc_published``). Ridge rows z = (a, c), f(x; z) =
L·min(|⟨a, x⟩ − c|, τ), L = τ = 1:
* the FLAT record a = 1, c = 1000: f ≡ τ at every point a run can query (x0 = 5 and the iterates move at most
  T·D ≤ 2), so each of its two-point estimates and differences is exactly 0;
* the CANARY a = 1, c = x0 − τ/2: at the first step's query points z_1 ± α (z_1 = x0: the learner starts at Δ = 0;
  α < τ/2 is checked) it lies on the linear piece, so its estimate is exactly L, whatever the directions (at d = 1
  every y_j = ±1 gives the same term): extremal slope |L|; it moves g_1 by L/B1.
D has M flat records; D′ replaces record 0 — the first record of the first reset step, the leaf 1 of period 1's
tree, which enters ⌊log2 Σ⌋ + 1 tree nodes — by the canary. The population {flat, canary} is public (it fixes Φ,
the population diagnostics and the held-out draws: M public indices from
``Streams(data_seed).generator("nsnc_improved_published", "held-out")``). Every training quantity on D is a
constant (F ≡ τ) and on D′ is not, so a training diagnostic that reaches a file separates D from D′ in its raw value.

The noiseless sums are known to the attacker: m_D = 0, m_D′ = L/B1 on the Σ releases of period 1 (the increments
of flat records are 0) and 0 after — whatever the noise, the iterates and the (secret) directions. They are read
from the σ = 0 twin of the run (``noise="none"``), and the builder checks, on a private run per data set with a
known user secret S, that its ``diagnostics.noiseless_sums`` equal them and that its releases minus them are the
tree noise of S's stream, TREE(σ z_S) per period with z_S = ``Streams(S).generator("nsnc_improved", "noise")
.standard_normal((T, d))`` (ValueError otherwise). The means do not depend on the public seed, so every trial draws
a fresh one (published in ledger.json and manifest.json).

Features (``NsncImprovedPublishedAudit.features``):
a. ``release_score``: the releases' log-likelihood ratio Δᵀ Σ⁻¹ (g̃ − (m_D + m_D′)/2), Σ = σ²·blockdiag_p(R Rᵀ).
b. ``regenerated[SOURCE]``: the noise TREE(σ z_c) of every candidate seed c (the public seeds, the seed offsets,
   every integer token of every file) compared with the residuals under D and D′.
c. ``published.file_features``: every file's presence and length, every numeric leaf of every JSON file, every
   numeric cell of every CSV file except releases.csv, ``completed``.

Claim: the ledger's guarantee. "worst-case" (the default here) or "clip-hardened": μ-GDP at ``plan.mu`` (0.2367,
ε = 1 at δ = 1e-6) with δ = dp_delta. "high-probability" (``theory_directions``): (ε, δ) = (``plan.epsilon``,
``plan.dp_delta``) = (1, 1e-6), δ_fail included — only the Clopper–Pearson ε_lb may refute it. The pair attains far
less (its releases' μ = (L/B1)√(⌊log2 Σ⌋ + 1)/σ ≈ 0.018 at the default and 0.035 under ``theory_directions``,
against the plans' 0.237 and 0.229, which are set by the increments' sensitivity): a consistent verdict says that no
file adds to what the releases carry, not that the accounting is tight (``empirical_dp.nsnc_improved`` audits that).

Variants (``VARIANTS``): ``theory_directions`` (above); ``nonprivate``: the NOT PRIVATE diagnostics published (``include_nonprivate=True``:
nonprivate_diagnostics.json, training objective and stationarity, norms of the noiseless sums), registered in
``empirical_dp.planted`` as ``nsnc_improved-published-nonprivate`` — caught by their raw values.

Randomness. ``publish(setup, rng, which)`` draws, in order: the public seed (``integers(0, 2**62)``), then for a
training publication (``proxy``) one 128-bit value (two ``integers(0, 2**64, 2, uint64)``) that becomes
``SecretSeed(v, "os_entropy")``; counted trials draw fresh operating-system entropy inside the runner.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from reference import runner
from reference import runner_nsnc_improved as nsnc_runner
from reference.objectives import RidgeSum
from reference.rng import SEED_BOUND, Streams
from reference.secrets import SecretSeed
from reference.validation import check_int, check_probability, check_real

from .nsnc_improved import _tree_noise
from .published import TRAINING_TRIALS, PublishedAudit, candidate_seeds, file_features, regeneration_features
from .scenarios import tree_release_matrix
from .zo_o2nc_published import _draw_secret, _public_seeds

__all__ = [
    "VARIANTS",
    "SETTINGS",
    "FLAT_OFFSET",
    "PROFILE",
    "COMMAND",
    "PipelineMismatch",
    "CanaryBuilder",
    "canary_problems",
    "NsncImprovedPublishedSetup",
    "nsnc_improved_published_setup",
    "run_pipeline",
    "publish",
    "noise_of_seed",
    "NsncImprovedPublishedAudit",
    "nsnc_improved_published_scenario",
    "NSNC_IMPROVED_PUBLISHED_BUILTINS",
]

#: The variants of the pipeline: name → (what it runs, its correct twin or None).
VARIANTS = {
    "default": ("nsnc_improved single-pass with default arguments: fresh secret entropy, default publication", None),
    "theory_directions": ("nsnc_improved single-pass with the theory's directions (directions='theory'): the "
                          "high-probability guarantee, directions from the secret seed", None),
    "nonprivate": ("the NOT PRIVATE training diagnostics published (include_nonprivate=True)", "default"),
}

#: Arguments a variant passes to the run besides the defaults.
_VARIANT_ARGUMENTS = {"theory_directions": {"directions": "theory"}}
#: The built-in run: M records, d, the (ε, δ) target (the runner's defaults), α (the default), the public seed
#: (None: a fresh one per trial) and the data seed (the default).
SETTINGS = dict(samples=32, d=1, epsilon=1.0, delta=1e-6, smoothing_radius=0.25, public_seed=None, data_seed=0)
#: The ridge profile of the records: "capped", φ(r) = min(|r|, τ), flat beyond τ.
PROFILE = "capped"
#: c of the flat record: far beyond τ from every point a run queries.
FLAT_OFFSET = 1000.0
#: The command a publication records.
COMMAND = "dpref run nsnc_improved (empirical_dp.nsnc_improved_published audit pipeline)"
#: The functions of ``reference.runner_nsnc_improved`` re-bound to the canary builder (the run and what it calls).
_REBOUND = ("run_nsnc_improved", "prepare_nsnc_improved", "execute_nsnc_improved")
_MEMO_LIMIT = 20_000
_ERRORS = (ValueError, ArithmeticError)
_MEAN_TOLERANCE = 1e-12
_NOISE_TOLERANCE = 1e-9


class PipelineMismatch(Exception):
    """The runner asked for another problem than the canary problem, or the run's shape is not the one the pair
    was built for. Never published as error.txt: it propagates."""


# ---------------------------------------------------------------------------------------------------
# The pair and the pipeline


@dataclass(frozen=True)
class CanaryBuilder:
    """Stands in for ``build_ridge_problem`` inside one run: returns ``problem`` for the run's call (its M records
    and M held-out draws) and a problem over the same population for the Φ probe (1 record, 1 held-out draw), after
    checking the profile, d, population size and data seed."""

    problem: object

    def __call__(self, problem="wshape", *, d=4, samples=20_000, population=1000, held_out_n=None, data_seed=0):
        p = self.problem
        held = samples if held_out_n is None else held_out_n
        asked = (problem, d, population, data_seed)
        have = (p.problem, p.d, p.population.n, p.data_seed)
        if asked != have or (samples, held) not in ((p.samples, p.held_out_n), (1, 1)):
            raise PipelineMismatch(f"the run asked for problem {asked} with {samples} records and {held} held-out "
                                   f"draws (profile, d, population, data seed), the canary problem is {have} with "
                                   f"{p.samples} and {p.held_out_n}")
        if (samples, held) == (p.samples, p.held_out_n):
            return p
        return runner.RidgeProblem(p.problem, p.population, np.zeros(1, np.int64), np.zeros(1, np.int64),
                                   p.data_seed)


def run_pipeline(problem, **arguments):
    """``run_nsnc_improved(problem=PROFILE, d, samples, population, data_seed, **arguments)`` with its problem
    builder bound to ``problem``: the functions' own code over a copy of the module's namespace."""
    namespace = dict(vars(nsnc_runner))
    namespace["build_ridge_problem"] = CanaryBuilder(problem)
    for name in _REBOUND:
        base = getattr(nsnc_runner, name)
        function = types.FunctionType(base.__code__, namespace, base.__name__, base.__defaults__, base.__closure__)
        function.__kwdefaults__ = dict(base.__kwdefaults__ or {})
        namespace[name] = function
    return namespace["run_nsnc_improved"](problem=problem.problem, d=problem.d, samples=problem.samples,
                                          population=problem.population.n, data_seed=problem.data_seed, **arguments)


def canary_problems(samples, d=1, *, data_seed=0) -> tuple:
    """(D, D′) as ``reference.runner.RidgeProblem`` over the population {flat, canary} (module docstring)."""
    samples = check_int("samples", samples, minimum=2)
    d = check_int("d", d, minimum=1, maximum=1)
    x0 = runner.X1_NORM
    population = RidgeSum(np.array([[1.0], [1.0]]), np.array([FLAT_OFFSET, x0 - runner.RIDGE_TAU / 2]),
                          lipschitz=runner.RIDGE_LIPSCHITZ, profile=PROFILE, tau=runner.RIDGE_TAU)
    held_out = Streams(data_seed).generator("nsnc_improved_published", "held-out").integers(2, size=samples)
    first = np.zeros(samples, dtype=np.int64)
    second = first.copy()
    second[0] = 1
    return tuple(runner.RidgeProblem(PROFILE, population, index, held_out, data_seed) for index in (first, second))


@dataclass(frozen=True)
class NsncImprovedPublishedSetup:
    """Everything the scenario fixes before any trial (``nsnc_improved_published_setup``).

    variant; settings; problems: (D, D′); plan: the ledger's ``NsncPrivacyPlan`` (public); noise_std: σ; shape:
    (K, M, d) of the releases; tree_size: Σ; B1; means: (2, T, d) the noiseless sums on D and D′; weights: Σ⁻¹Δ and
    midpoint (T, d) of the release score; releases_mu: the releases' exact GDP μ for the pair."""

    variant: str
    settings: dict
    problems: tuple
    plan: object
    noise_std: float
    shape: tuple
    tree_size: int
    B1: int
    means: np.ndarray
    weights: np.ndarray
    midpoint: np.ndarray
    releases_mu: float
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def public_seed(self) -> int | None:
        return self.settings["public_seed"]

    @property
    def steps(self) -> int:
        return int(self.shape[0] * self.shape[1])

    def run_arguments(self) -> dict:
        """The arguments of every trial's run besides the problem: the (ε, δ) target and α (the defaults), and
        directions="theory" for that variant (else the default m)."""
        s = self.settings
        return dict(epsilon=s["epsilon"], delta=s["delta"], smoothing_radius=s["smoothing_radius"],
                    **_VARIANT_ARGUMENTS.get(self.variant, {}))


def _check_settings(overrides: dict) -> dict:
    unknown = set(overrides) - set(SETTINGS)
    if unknown:
        raise ValueError(f"unknown setting(s) {sorted(unknown)}; allowed: {sorted(SETTINGS)}")
    s = {**SETTINGS, **overrides}
    s["samples"] = check_int("samples", s["samples"], minimum=2)
    s["d"] = check_int("d", s["d"], minimum=1, maximum=1)
    s["epsilon"] = float(check_real("epsilon", s["epsilon"], positive=True))
    s["delta"] = float(check_probability("delta", s["delta"]))
    s["smoothing_radius"] = float(check_real("smoothing_radius", s["smoothing_radius"], positive=True))
    if not s["smoothing_radius"] < runner.RIDGE_TAU / 2:
        raise ValueError(f"smoothing_radius must be < tau/2 = {runner.RIDGE_TAU / 2:g} (the canary's query points "
                         f"x0 ± alpha must stay on its linear piece), got {s['smoothing_radius']!r}")
    s["data_seed"] = check_int("data_seed", s["data_seed"], minimum=0, maximum=SEED_BOUND - 1)
    if s["public_seed"] is not None:
        s["public_seed"] = check_int("public_seed", s["public_seed"], minimum=0, maximum=2**62)
    return s


def _flat_releases(releases) -> np.ndarray:
    """(K, M, d) → (T, d), step t = (k − 1)·M + j."""
    array = np.asarray(releases, dtype=np.float64)
    return array.reshape(-1, array.shape[-1])


def _periods(steps: int, tree_size: int) -> list[slice]:
    return [slice(start, min(start + tree_size, steps)) for start in range(0, steps, tree_size)]


def noise_of_seed(setup: NsncImprovedPublishedSetup, seeds) -> np.ndarray:
    """(len(seeds), T·d): the tree noise a run whose secret seed is c adds, TREE(σ z_c) per period, z_c =
    ``Streams(c).generator("nsnc_improved", "noise").standard_normal((T, d))`` (memoised per seed)."""
    cache = setup._cache
    found = {int(c): cache[("z", int(c))] for c in seeds if ("z", int(c)) in cache}
    missing = sorted({int(c) for c in seeds} - set(found))
    if missing:
        if len(cache) > _MEMO_LIMIT:
            for key in [k for k in cache if k[0] == "z"][: _MEMO_LIMIT // 2]:
                del cache[key]
        shape = (setup.steps, setup.shape[2])
        z = np.array([Streams(c).generator("nsnc_improved", "noise").standard_normal(shape) for c in missing])
        for c, noise in zip(missing, _tree_noise(setup.noise_std * z, setup.tree_size)):
            found[c] = cache[("z", c)] = noise.reshape(-1)
    rows = [found[int(c)] for c in seeds]
    return np.array(rows) if rows else np.empty((0, setup.steps * setup.shape[2]))


def nsnc_improved_published_setup(variant: str = "default", **overrides) -> NsncImprovedPublishedSetup:
    """The fixed part of the scenario (module docstring). overrides: keys of ``SETTINGS``. Makes four runs of the
    pipeline (σ = 0 and one private run with a known user secret per data set) and checks the noise model on them
    (ValueError otherwise)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {tuple(VARIANTS)}, got {variant!r}")
    s = _check_settings(overrides)
    problems = canary_problems(s["samples"], s["d"], data_seed=s["data_seed"])
    arguments = dict(epsilon=s["epsilon"], delta=s["delta"], smoothing_radius=s["smoothing_radius"],
                     seed=0 if s["public_seed"] is None else s["public_seed"], **_VARIANT_ARGUMENTS.get(variant, {}))
    user_secret = 2**100 + 20250701  # the checks' known secret (≠ every public seed of the checks)
    means, plan, sigma, shape, tree_size, B1 = [], None, None, None, None, None
    for problem in problems:
        noiseless = run_pipeline(problem, noise="none", **arguments)
        private = run_pipeline(problem, noise_seed=user_secret, **arguments)
        run = private.run
        if private.settings["oracle"] != "single_pass":
            raise PipelineMismatch(f"the run used oracle {private.settings['oracle']}, the pair is built for "
                                   "single_pass")
        shape = np.asarray(private.result.releases).shape
        tree_size, B1 = int(run["tree_size"]), int(run["B1"])
        mean = _flat_releases(noiseless.result.releases)
        sums = _flat_releases(private.result.diagnostics.noiseless_sums)
        if not np.allclose(sums, mean, rtol=0, atol=_MEAN_TOLERANCE):
            raise ValueError("the noiseless sums of a private run differ from the sigma = 0 run's releases: the means "
                             "depend on the noise, so the attacker could not subtract them")
        means.append(mean)
        plan = private.result.ledger.plan
        sigma = float(plan.noise_std)
        z = Streams(user_secret).generator("nsnc_improved", "noise").standard_normal(mean.shape)
        expected = _tree_noise(sigma * z, tree_size)
        residual = _flat_releases(private.result.releases) - mean
        if np.sqrt(np.mean((residual - expected) ** 2)) > _NOISE_TOLERANCE * np.sqrt(np.mean(expected**2)):
            raise ValueError("a private run's releases minus its noiseless sums are not TREE(sigma z) of its secret "
                             "seed's ('nsnc_improved', 'noise') stream: the regeneration features would miss its noise")
    means = np.stack(means)
    means.setflags(write=False)
    shift = means[1] - means[0]
    expected_shift = np.zeros_like(shift)
    expected_shift[:tree_size] = runner.RIDGE_LIPSCHITZ / B1
    if not np.allclose(shift, expected_shift, rtol=0, atol=_MEAN_TOLERANCE) or np.any(means[0] != 0):
        raise PipelineMismatch("the sigma = 0 releases are not 0 on D and L/B1 on period 1 of D': the pair is not "
                               "the flat/canary pair of the module docstring")
    weights = np.zeros_like(shift)
    mu_squared = 0.0
    for rows in _periods(shift.shape[0], tree_size):
        release = tree_release_matrix(rows.stop - rows.start)
        solved = np.linalg.solve(release @ release.T, shift[rows])
        weights[rows] = solved / sigma**2
        mu_squared += float(np.sum(shift[rows] * solved)) / sigma**2
    return NsncImprovedPublishedSetup(variant=variant, settings=s, problems=problems, plan=plan, noise_std=sigma,
                                      shape=tuple(int(n) for n in shape), tree_size=tree_size, B1=B1, means=means,
                                      weights=weights, midpoint=(means[0] + means[1]) / 2,
                                      releases_mu=math.sqrt(mu_squared))


# ---------------------------------------------------------------------------------------------------
# One trial and its features


def publish(setup: NsncImprovedPublishedSetup, rng: np.random.Generator, which: int, *,
            proxy: bool = False) -> dict:
    """One trial: the publication (file name → text) of a default run on D (which = 0) or D′ (1). Draws as stated
    in the module docstring; a run that raises ValueError or ArithmeticError publishes only error.txt."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    which = check_int("which", which, minimum=0, maximum=1)
    public = setup.public_seed if setup.public_seed is not None else int(rng.integers(0, 2**62))
    secret = SecretSeed(_draw_secret(rng), "os_entropy") if proxy else None
    try:
        outcome = run_pipeline(setup.problems[which], seed=public, noise_seed=secret, **setup.run_arguments())
        return nsnc_runner.nsnc_publication(outcome, command=COMMAND,
                                            include_nonprivate=setup.variant == "nonprivate")
    except _ERRORS as exc:
        return {"error.txt": f"{type(exc).__name__}: {exc}\n"}


def _releases(files: Mapping[str, str], shape) -> np.ndarray | None:
    """g̃ as (T, d) from releases.csv (columns k, t, release_0..); None when absent or malformed."""
    text = files.get("releases.csv")
    if text is None:
        return None
    K, M, d = shape
    lines = [line.split(",") for line in text.splitlines() if line.strip()]
    try:
        header = lines[0]
        k_col, t_col = header.index("k"), header.index("t")
        columns = [header.index(f"release_{j}") for j in range(d)]
        out = np.full((K, M, d), np.nan)
        for row in lines[1:]:
            out[int(row[k_col]) - 1, int(row[t_col]) - 1] = [float(row[c]) for c in columns]
    except (ValueError, IndexError):
        return None
    return out.reshape(K * M, d) if np.all(np.isfinite(out)) else None


class NsncImprovedPublishedAudit(PublishedAudit):
    """The nsnc_improved published-output scenario: ``empirical_dp.published.PublishedAudit`` with this pipeline's
    claim, description, trials and features."""

    def _claim(self) -> dict:
        """The ledger's guarantee (module docstring, Claim)."""
        plan = self.setup.plan
        if plan.guarantee == "high-probability":
            return {"claimed_epsilon": float(plan.epsilon), "delta": float(plan.dp_delta)}
        return {"claimed_mu": float(plan.mu), "delta": float(plan.dp_delta)}

    def _description(self) -> str:
        setup, s, plan = self.setup, self.setup.settings, self.setup.plan
        K, M, d = setup.shape
        seed = "a fresh public seed per trial" if setup.public_seed is None else f"public seed {setup.public_seed}"
        return (f"nsnc_improved publication ({VARIANTS[setup.variant][0]}), d={d}, M={s['samples']} (T={K * M}, "
                f"Σ={setup.tree_size}, B1={setup.B1}), canary in the reset leaf of period 1, σ={setup.noise_std:.6g}, "
                f"releases' μ={setup.releases_mu:.4g}, {seed}; plan {plan.guarantee}, μ={plan.mu:.6g}, "
                f"δ_fail={plan.delta_fail:.3g}; score: the training split's best feature")

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
            if seed is None:
                candidates = [(source, seeds if source != "seed offsets" else []) for source, seeds in candidates]
            cache = setup._cache if setup.public_seed is not None else None
            regeneration_features(candidates, residuals, lambda seeds: noise_of_seed(setup, seeds), out, cache)  # b
        return out


def nsnc_improved_published_scenario(variant: str = "default", *, name=None, training_trials=TRAINING_TRIALS,
                                     training_seed=0, **settings) -> NsncImprovedPublishedAudit:
    """A ``NsncImprovedPublishedAudit`` of ``variant``; name defaults to "nsnc_improved-published" for the default
    variant, else "nsnc_improved-published-VARIANT" (the registered theory_directions one is
    "nsnc_improved-published-theory-m")."""
    setup = nsnc_improved_published_setup(variant, **settings)
    if name is None:
        name = ("nsnc_improved-published" if variant == "default"
                else f"nsnc_improved-published-{variant.replace('_', '-')}")
    return NsncImprovedPublishedAudit(setup, name, training_trials=training_trials, training_seed=training_seed)


def _factory(variant: str, name: str) -> Callable[[], NsncImprovedPublishedAudit]:
    return lambda: nsnc_improved_published_scenario(variant, name=name)


#: Registered name → factory of its ``NsncImprovedPublishedAudit`` (the default and the planted leak).
NSNC_IMPROVED_PUBLISHED_BUILTINS: dict[str, Callable[[], NsncImprovedPublishedAudit]] = {
    "nsnc_improved-published": _factory("default", "nsnc_improved-published"),
    "nsnc_improved-published-theory-m": _factory("theory_directions", "nsnc_improved-published-theory-m"),
    "nsnc_improved-published-nonprivate": _factory("nonprivate", "nsnc_improved-published-nonprivate"),
}
