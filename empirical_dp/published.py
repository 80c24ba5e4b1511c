"""Auditing everything a run publishes: the files of ``reference.runner.publication`` scored as one output
(docs/audits.md, "Auditing everything a run publishes"; threat model docs/design.md).

Sources:
- Zhang, Li, Thekumparampil, Oh, He 2024 (ICML), "DPZero", Alg 2 and §1.4: the privacy proof covers the
  transcript (u_0, ŝ_0, …, u_{T−1}, ŝ_{T−1}) and its post-processing with public data. Every other number a run
  writes is covered only if it is such a post-processing.
- Jagielski, Ullman, Oprea 2020 (NeurIPS); Nasr et al. 2021 (S&P): threshold audits and their Clopper–Pearson
  (ε, δ) lower bounds (``empirical_dp.audit``).
- Smirnov 1939, the two-sample Kolmogorov–Smirnov distance sup_x |F_D(x) − F_D′(x)|: the separation by which
  one feature is chosen on a training split.

Threat model. Everything a run receives or writes is public — the public seed and every direction u_t, the
hyper-parameters, the code, both neighbouring data sets, the public held-out data and every published file —
except the run's secret seed (Gaussian noise, secret batch coins). A publication is private only if EVERY file
is: the ``dpzero-published`` scenario therefore scores the whole dict ``publication(outcome, ...)`` returns
(releases.csv, trajectory.csv, ledger.json, manifest.json, and whatever else a variant writes), so a leak through
any of them is caught.

Scenario (``published_setup``). A neighbouring pair run through the real pipeline: ``reference.runner
.run_algorithm("dpzero", objective=CanaryProblem(D or D′), held_out=CanaryProblem(H), ...)`` then
``reference.runner.publication``. DPZero (dpzero Alg 2) with its default arguments — no ``noise_seed``, so every
trial draws fresh operating-system secret entropy — full batch, the default accountant (Lemma 2.2), R = 2
replicates (so a leak between replicate seeds is visible), fast backend, one public seed for all trials (the
guarantee holds given the directions; ``FULL_SETTINGS``: T = 50, n = 50, d = 2, C = 1, ε = 1, δ = 1e-5). The
pair (``empirical_dp.dpzero_scenarios.canary_pair`` with the zero-record layout): the loss is linear, f(x; ξ) = ⟨ξ, x⟩; D has n zero records, D′ replaces record 0 by
the canary M·e_1 (M = 10⁶·C), whose clipped difference is +C·s_t, s_t = sign⟨e_1, u_t⟩, at every step (the
zero records contribute 0). Replace-one neighbours (n public): the per-step shift is C/n ≤ Δ = 2C/n, and the clip
count differs by one in every step. The Poisson variants (``POISSON_SETTINGS``) run add/remove neighbours with
the rate q a public constant: D has n zero records and D′ adds the canary (n + 1 records). H: ``held_out_n`` PUBLIC
rows drawn from
``Streams(public_seed).generator("published", "held-out")``; the published per-step diagnostics (held-out
objective, held-out ‖∇F‖²) are computed on H. The attacker scores replicate 0 for the release-based features.
The claim is (ε, δ): the run's target ε (the plan certifies at most it) at its δ. The default accountant
(Lemma 2.2) and the Poisson variants' RDP accountant state (ε, δ), not μ-GDP, so ``claimed_mu`` is None and only
the Clopper–Pearson ε_lb decides the verdict; the true μ of a publication is unknown (``mu`` None).

Features (``publication_features``; a fixed-length vector over the training split's ``FeatureSchema``):

a. ``release_score``: Σ_t s_t ŝ_t of replicate 0 (releases.csv), the likelihood-ratio statistic of the release.
b. ``regenerated[SOURCE]``: noise regeneration. For every candidate seed c of SOURCE the stream
   ``Streams(c).generator("dpzero", "noise").standard_normal(T)``·σ is compared with the residuals ŝ − m_D and
   ŝ − m_D′ of replicate 0 (m from the canary's known clipped differences); log-match(c, h) =
   clip(−log10(rms(r_h − σz_c)/(rms(r_h) + rms(σz_c))), 0, 12) (12: equal to rounding), and the feature is the best
   log-match under D′ minus the best under D. Sources: "public seeds" (the public seed P and the public replicate
   seeds), "seed offsets" (P + k, k ∈ [−64, 64], and P + 10000: the documented guess list ``SEED_OFFSETS``),
   and "text:FILE", every integer token of FILE's text below 2^128 (``INTEGER_TOKEN``: digits not part of a
   decimal or exponent). Each candidate also stands for its R ``SeedSequence.spawn`` children (how a single seed
   becomes R replicate seeds).
c. Every numeric leaf of every JSON file (``FILE:path``, e.g. ``ledger.json:plan.noise_std``; lists also give
   ``#sum``, strings ``#len``, nulls ``#null``) and every numeric cell of every CSV except releases.csv
   (``FILE:column[row]``); every file's presence (``file:FILE``) and length (``FILE#len``); ``completed``
   (0 when the run crashed and published only ``error.txt``). Keys named in ``EXCLUDED_KEYS`` (wall-clock time)
   are left out: D and D′ trials are drawn in separate batches, so machine load would pass for a leak. A name
   missing from a publication is 0, and every name has a presence indicator ``present:NAME``.
d. ``recomputed[COLUMN~QUANTITY]``: x_t of replicate 0 is rebuilt from releases.csv (x_0 = 0,
   x_{t+1} = x_t − α ŝ_t u_t), the training objective and ‖∇F‖² are evaluated on D and on D′ at every x_t and
   compared with each published per-step column of trajectory.csv (log-match as in b); the feature is the match
   under D′ minus the match under D. It catches diagnostics computed on the training data.

Selection split. ``FeatureSelection``: on a TRAINING split of ``training_trials`` publications per data set, drawn
from ``Streams(training_seed).generator("published", NAME, "train", "D" | "D'")`` — keys disjoint from the
audit's ("audit", NAME, …, "select" | "count") for every audit seed — the schema is the union of the feature names
seen, and the feature j, sign s and cut c with the largest KS distance between the D and D′ values win (ties: the
larger gap at the cut, then the earlier feature in schema order: regenerated, recomputed, completed, release score,
file presence, the files' values). The audit score is the indicator s·x_j > c (a binary score: a
leak that separates the data sets gives perfectly tied scores, which the threshold grid counts with no error at
small budgets). Then ``empirical_dp.audit.audit`` runs unchanged with that score: thresholds on its select split,
counts on its count split, Clopper–Pearson at the requested confidence. Training publications use a secret seed
``SecretSeed(v, "os_entropy")`` with v drawn from the training stream — the law of fresh entropy, but reproducible,
so every process that rebuilds the scenario (shard workers) chooses the same feature; counted trials use the
variant's real secrets (fresh entropy by default), so their verdicts, not their exact numbers, are reproducible.
The training seed is a parameter of the scenario (default 0), fixed before any audit; the ``Scenario``'s
``sample(rng, trials, which)`` returns (trials, len(schema)) feature vectors of fresh publications (training on
its first call) and its ``log_likelihood_ratio`` slot holds the binary score — not a likelihood ratio, the law of
a publication is not known in closed form, but the slot is the audit's default attack.

Variants (``VARIANTS``; the planted ones are registered in ``empirical_dp.planted.PLANTED``, their twins in
``TWINS``). The algorithms refuse a secret seed equal to a public seed, so the seed bugs (i) and (ii) are
reproduced around them: the run gets known user secrets S_r and its releases are checked to be m_r + σz_{S_r}
(to 1e-12; ``ReproductionError`` otherwise), m_r the clipped means, which for the canary do not depend on x_t.
(i) rewrites them ŝ_bug = (ŝ − σz_{S_r}) + σz_{p_r}, p_r replicate r's public seed; (ii) publishes the public seeds
P + r and ŝ_bug = m(P + r) + σz_{P+r+1}, m(P + r) the clipped means along the directions of P + r. Either way the
iterates, τ and the held-out trajectory are then rebuilt from the rewritten releases before publication
(``rebuild_outcome``). (iii) adds the user secrets to manifest.json as the old manifest did (``seeds.noise_seed``);
(iv) publishes ``nonprivate_diagnostics.json``; (v) adds the per-replicate batch sizes and evaluation counts to
ledger.json as the old ledger did; (vi) hands the training problem to the runner as its held-out set; (vii) checks
the first step's per-record finite differences and raises on a non-finite one, as the old algorithms did (its
twin runs the current algorithms, which replace the NaN difference by 0 and complete).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from reference.algorithms.dpzero import direction_for_step
from reference.rng import SEED_BOUND, Streams
from reference.runner import objective_value, publication, run_algorithm, squared_gradient_norm
from reference.secrets import SecretSeed, replicate_seeds
from reference.validation import check_int, check_probability, check_real

from .audit import AuditResult, audit
from .dpzero_scenarios import canary_pair, linear_loss
from .scenarios import Scenario

__all__ = [
    "VARIANTS",
    "EXCLUDED_KEYS",
    "SEED_OFFSETS",
    "INTEGER_TOKEN",
    "MATCH_CAP",
    "TRAINING_TRIALS",
    "FULL_SETTINGS",
    "POISSON_SETTINGS",
    "CanaryProblem",
    "PublishedSetup",
    "published_setup",
    "rebuild_outcome",
    "ReproductionError",
    "publish",
    "publication_features",
    "file_features",
    "candidate_seeds",
    "regeneration_features",
    "FeatureSchema",
    "FeatureSelection",
    "select_feature",
    "PublishedAudit",
    "published_scenario",
    "PublishedAuditResult",
    "audit_published",
    "PUBLISHED_BUILTINS",
]

#: The variants of the pipeline: name → (what it runs, its correct twin or None).
VARIANTS = {
    "default": ("DPZero with default arguments, full batch, default publication", None),
    "old_default_noise": ("(i) the noise drawn from the public seed's ('dpzero', 'noise') stream (the old default "
                          "noise_seed = seed)", "default"),
    "overlapping_replicate_seeds": ("(ii) public replicate seeds S..S+R−1, secret seeds S+1..S+R", "default"),
    "secret_seed_in_manifest": ("(iii) user secret seeds written into manifest.json", "default"),
    "clip_counts_published": ("(iv) clip counts published (include_nonprivate=True)", "default"),
    "poisson": ("Poisson add/remove (q = 0.5 given), n = 10 vs 11, default publication", None),
    "poisson_counts_published": ("(v) Poisson batch sizes and evaluation counts published (the old ledger's "
                                 "per-replicate fields, the old summary's total)", "poisson"),
    "training_diagnostics": ("(vi) the per-step diagnostics computed on the TRAINING data", "default"),
    "nonfinite": ("D′'s record has a NaN loss; the run completes (the non-finite difference is replaced)", None),
    "nonfinite_abort": ("(vii) a non-finite loss on one record aborts the run; only error.txt is published",
                        "nonfinite"),
}

#: JSON keys left out of the features (wall-clock time; module docstring).
EXCLUDED_KEYS = frozenset({"created", "seconds"})
#: Offsets k of the guessed seeds P + k (feature b, source "seed offsets").
SEED_OFFSETS = tuple(range(-64, 65)) + (10_000,)
#: An integer token of a publication's text: digits not adjoining a letter, digit, '.', '+' or '-' (so the digits
#: of a decimal or exponent are not tokens).
INTEGER_TOKEN = re.compile(r"(?<![\w.+\-])\d+(?![\w.])")
#: Largest log-match (a relative error of 1e-12: equal up to rounding).
MATCH_CAP = 12.0
#: Training publications per data set (feature selection), by default.
TRAINING_TRIALS = 48
#: The full-batch pipeline (``published_setup``): T, n, d, C, target (ε, δ), α, λ, public seed, replicates, |H|.
FULL_SETTINGS = dict(steps=50, n=50, d=2, clip=1.0, epsilon=1.0, delta=1e-5, step_size=0.1, perturbation=1e-3,
                     public_seed=1, replicates=2, held_out_n=50)
#: The Poisson pipeline: add/remove with the rate q = 0.5 a public constant, n = 10 (D) vs 11 (D′), B = 5.
POISSON_SETTINGS = dict(FULL_SETTINGS, steps=400, n=10, batch_size=5, sampling_probability=0.5)
#: The command a publication records (any string: the masked command line is part of the manifest).
COMMAND = "dpref run dpzero (empirical_dp.published audit pipeline)"
#: What a data-dependent crash of a run raises (validation of the data or the loss's values, floating point);
#: anything else is a broken pipeline and propagates.
_ERRORS = (ValueError, ArithmeticError)


class ReproductionError(Exception):
    """A planted reproduction's assumption failed (the run's noise is not σ·z of its secret seed's stream). Not a
    crash of the run: it propagates instead of being published as error.txt."""


# ---------------------------------------------------------------------------------------------------
# The problem objects handed to the runner


class CanaryProblem:
    """Records ξ_i with the linear loss f(x; ξ) = ⟨ξ, x⟩ (``dpzero_scenarios.linear_loss``), in the runner's problem
    interface: ``loss``, ``gradient`` (broadcasting as ``reference.fast.dpzero`` calls them), ``data``, ``d``,
    ``name``, ``objective_value(x)`` = (1/m) Σ_i f(x; ξ_i) and ``squared_gradient_norm(x)`` = ‖(1/m) Σ_i ξ_i‖², for
    x of shape (d,) or (..., d).

    features: (m, d) the records' ξ; nan_rows: records whose loss is NaN at every x (a poisoned record). The data
    handed to the algorithm are finite: ``data`` is (m, d + 1), ξ and a last column that is 1 on a NaN-loss record,
    0 elsewhere (the algorithms refuse non-finite data; the loss, not the data, is what turns non-finite)."""

    def __init__(self, features, name: str, *, nan_rows=()):
        features = np.array(features, dtype=np.float64)
        if features.ndim != 2 or features.shape[0] < 1 or not np.all(np.isfinite(features)):
            raise ValueError(f"features must be a finite non-empty (m, d) array, got shape {features.shape}")
        flags = np.zeros((features.shape[0], 1))
        flags[list(nan_rows), 0] = 1.0
        data = np.hstack([features, flags])
        data.setflags(write=False)
        self.data, self.name = data, name
        self.poisoned = bool(flags.any())
        self._mean = features.mean(axis=0)

    @property
    def d(self) -> int:
        return int(self.data.shape[1] - 1)

    @property
    def features(self) -> np.ndarray:
        return self.data[:, :-1]

    @staticmethod
    def loss(x, z):
        z = np.asarray(z, dtype=np.float64)
        return linear_loss(x, z) + np.where(z[..., -1] != 0, np.nan, 0.0)

    @staticmethod
    def gradient(x, z):
        x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
        g = np.broadcast_to(z[..., :-1], np.broadcast_shapes(x.shape, z[..., :-1].shape))
        return np.where((z[..., -1:] != 0), np.nan, g)

    def objective_value(self, x):
        value = np.asarray(x, dtype=np.float64) @ self._mean
        return value + np.nan if self.poisoned else value

    def squared_gradient_norm(self, x):
        return np.full(np.shape(x)[:-1], math.nan if self.poisoned else float(self._mean @ self._mean))


# ---------------------------------------------------------------------------------------------------
# The fixed part of a scenario


@dataclass(frozen=True)
class PublishedSetup:
    """Everything a published-output scenario fixes before any trial (``published_setup``).

    variant: a key of ``VARIANTS``; settings: the run's settings (``FULL_SETTINGS`` / ``POISSON_SETTINGS`` with
    overrides); problems: (D, D′) as ``CanaryProblem``; held_out: the public held-out ``CanaryProblem``;
    seeds: the public replicate seeds as the publication shows them; directions: (T, d) u_t of replicate 0;
    signs: (T,) s_t of replicate 0; means: (2, T) the canary's clipped mean m_t on D and D′ along replicate 0's
    directions (Poisson: the value when the canary is sampled); include_nonprivate: the variant publishes
    nonprivate_diagnostics.json.
    """

    variant: str
    settings: dict
    problems: tuple
    held_out: CanaryProblem
    seeds: tuple
    directions: np.ndarray
    signs: np.ndarray
    means: np.ndarray
    include_nonprivate: bool
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def steps(self) -> int:
        return int(self.settings["steps"])

    @property
    def public_seed(self) -> int:
        return int(self.settings["public_seed"])

    @property
    def poisson(self) -> bool:
        return "batch_size" in self.settings

    def run_arguments(self) -> dict:
        """Keyword arguments of ``run_algorithm`` besides objective, held_out and noise_seed."""
        s = self.settings
        out = dict(steps=s["steps"], step_size=s["step_size"], perturbation=s["perturbation"], clip=s["clip"],
                   epsilon=s["epsilon"], delta=s["delta"], seed=s["public_seed"], replicates=s["replicates"],
                   backend="fast")
        if self.poisson:
            out.update(batching="poisson", batch_size=s["batch_size"], sampling_probability=s["sampling_probability"])
        return out

    def noise_std(self) -> float:
        """σ of the run's privacy plan (the same for D and D′; memoised by ``privacy_plan``)."""
        if "sigma" not in self._cache:
            from reference.algorithms.dpzero import privacy_plan

            s = self.settings
            extra = (dict(batching="poisson", batch_size=s["batch_size"],
                          sampling_probability=s["sampling_probability"]) if self.poisson else {})
            plan = privacy_plan(clip_threshold=s["clip"], n=self.problems[0].data.shape[0], steps=s["steps"],
                                epsilon=s["epsilon"], delta=s["delta"], **extra)
            self._cache["sigma"] = float(plan.noise_std)
        return self._cache["sigma"]

    def directions_for(self, seed: int) -> np.ndarray:
        """(T, d): u_t of public seed ``seed`` (``direction_for_step``), memoised."""
        key = ("u", int(seed))
        if key not in self._cache:
            d = self.problems[0].d
            self._cache[key] = np.array([direction_for_step(int(seed), t, d) for t in range(self.steps)])
        return self._cache[key]


def _check_settings(settings: dict) -> dict:
    out = dict(settings)
    for key in ("steps", "n", "d", "replicates", "held_out_n"):
        out[key] = check_int(key, out[key], minimum=1)
    out["public_seed"] = check_int("public_seed", out["public_seed"], minimum=0, maximum=SEED_BOUND - 2 ** 20)
    for key in ("clip", "epsilon", "step_size", "perturbation"):
        out[key] = check_real(key, out[key], positive=True)
    out["delta"] = check_probability("delta", out["delta"])
    if "batch_size" in out:
        out["batch_size"] = check_int("batch_size", out["batch_size"], minimum=1, maximum=out["n"])
        out["sampling_probability"] = check_probability("sampling_probability", out["sampling_probability"],
                                                        open_right=False)
    return out


def published_setup(variant: str = "default", **overrides) -> PublishedSetup:
    """The fixed part of a published-output scenario for ``variant`` (a key of ``VARIANTS``).

    overrides: keys of ``FULL_SETTINGS`` (``POISSON_SETTINGS`` for "poisson*" variants): steps T, n (D's size;
    D′ has n for replace-one, n + 1 for Poisson add/remove), d, clip C, epsilon, delta (the run's target), step_size
    α, perturbation λ, public_seed P, replicates R, held_out_n |H|; Poisson also batch_size B and
    sampling_probability q. ValueError names a bad variant or setting (``canary_pair`` names public_seed when the
    canary's clip would not bind with margin at some step).
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {tuple(VARIANTS)}, got {variant!r}")
    poisson = variant.startswith("poisson")
    base = POISSON_SETTINGS if poisson else FULL_SETTINGS
    unknown = set(overrides) - set(base)
    if unknown:
        raise ValueError(f"unknown setting(s) {sorted(unknown)}; allowed: {sorted(base)}")
    settings = _check_settings({**base, **overrides})
    steps, n, d, clip, public = (settings[k] for k in ("steps", "n", "d", "clip", "public_seed"))
    replicates = settings["replicates"]
    if variant == "overlapping_replicate_seeds":
        if replicates < 2:
            raise ValueError("replicates must be >= 2 for variant 'overlapping_replicate_seeds'")
        seeds = tuple(public + r for r in range(replicates))  # the old runner's arithmetic
    else:
        seeds = tuple(replicate_seeds(public, replicates))
    size = n + 1 if poisson else n
    pair = canary_pair(size, d, steps, clip, relation="add_remove", public_seed=seeds[0])
    zero, canary = pair.datasets  # zero records; the canary M·e_1 in slot 0, zero records elsewhere
    if poisson:
        first, second = zero[1:], canary  # add/remove: D has n records, D′ adds the canary
        normalizer = settings["batch_size"]
    else:
        first, second = zero, canary
        normalizer = n
    nan_rows = (0,) if variant.startswith("nonfinite") else ()  # D′'s record 0: zero features, NaN loss
    if nan_rows:
        second = zero
    held = Streams(public).generator("published", "held-out").standard_normal((settings["held_out_n"], d))
    means = pair.canary_differences / normalizer
    if variant.startswith("nonfinite"):
        means = np.zeros_like(means)  # the NaN record's difference is replaced by 0 (or aborts the run)
    return PublishedSetup(
        variant=variant, settings=settings,
        problems=(CanaryProblem(first, "canary"), CanaryProblem(second, "canary", nan_rows=nan_rows)),
        held_out=CanaryProblem(held, "held-out"), seeds=seeds, directions=pair.directions,
        signs=pair.signs.astype(np.float64), means=means,
        include_nonprivate=variant == "clip_counts_published",
    )


# ---------------------------------------------------------------------------------------------------
# Running and publishing one trial


def _draw_seed(rng: np.random.Generator) -> int:
    """A uniform integer in [0, 2^128) from two 64-bit draws."""
    low, high = (int(v) for v in rng.integers(0, 2**64, size=2, dtype=np.uint64))
    return low | (high << 64)


def _noise_stream(setup: PublishedSetup, seed: int) -> np.ndarray:
    """z_0..z_{T−1} of key ("dpzero", "noise") under ``seed`` (what Alg 2 draws from a secret seed), memoised in
    ``setup._cache``. Reads only ``setup.steps`` and ``setup._cache`` (the torch publication's setup,
    ``empirical_dp.dpzero_torch``, has both)."""
    key = ("z", int(seed))
    cache = setup._cache
    if key not in cache:
        _evict(cache)
        cache[key] = Streams(int(seed)).generator("dpzero", "noise").standard_normal(setup.steps)
    return cache[key]


def _evict(cache: dict, limit: int = 20_000) -> None:
    """Keep the memo of noise streams bounded: novel candidate seeds (e.g. a leaked secret) arrive with every
    trial. Drops the oldest half of the per-seed entries once there are ``limit`` entries."""
    if len(cache) > limit:
        for key in [k for k in cache if k[0] in ("z", "family")][: limit // 2]:
            del cache[key]


def _clipped_means(setup: PublishedSetup, problem: CanaryProblem, seed: int) -> np.ndarray:
    """(T,) the full-batch clipped mean (1/n) Σ_i clip_C(⟨ξ_i, u_t⟩) along the directions of ``seed`` (the
    central difference of the linear loss; a non-finite one replaced by 0, as the algorithm does)."""
    differences = problem.features @ setup.directions_for(seed).T  # (n, T)
    differences[problem.data[:, -1] != 0] = 0.0  # a NaN-loss record's difference is replaced by 0
    clip = setup.settings["clip"]
    return np.clip(differences, -clip, clip).sum(axis=0) / problem.data.shape[0]


def rebuild_outcome(outcome, releases, seeds=None):
    """``outcome`` with its releases replaced by ``releases`` (R, T) and its public seeds by ``seeds`` (default:
    unchanged), and everything downstream of them rebuilt from the public directions: the iterates
    x_{t+1} = x_t − α ŝ_t u_t (x_0 = 0), τ (key ("dpzero", "output") of each public seed), x_τ, x_T, the trajectory
    (if recorded), the held-out objective and ‖∇F‖² and the (NOT PRIVATE) training ‖∇F‖² at every x_t, and the
    ledger's seeds. For a full-batch DPZero outcome of ``run_algorithm`` with R > 1 replicates."""
    result = outcome.result
    seeds = tuple(outcome.seeds) if seeds is None else tuple(int(s) for s in seeds)
    releases = np.array(releases, dtype=np.float64)
    replicates, steps = releases.shape
    if replicates != len(seeds) or replicates != outcome.replicates or steps != outcome.steps:
        raise ValueError(f"releases must have shape (R, T) = ({outcome.replicates}, {outcome.steps}) and seeds R "
                         f"entries, got {releases.shape} and {len(seeds)}")
    d = int(outcome.objective.d)
    alpha = float(outcome.settings["step_size"])
    x = np.zeros((replicates, steps + 1, d))
    for r, seed in enumerate(seeds):
        u = np.array([direction_for_step(seed, t, d) for t in range(steps)])
        for t in range(steps):
            x[r, t + 1] = x[r, t] - (alpha * releases[r, t]) * u[t]
    taus = np.array([Streams(s).generator("dpzero", "output").integers(steps) for s in seeds], dtype=np.int64)
    rows = np.arange(replicates)
    heldout = np.asarray(objective_value(outcome.held_out)(x), dtype=np.float64)
    heldout_norm = np.asarray(squared_gradient_norm(outcome.held_out)(x), dtype=np.float64)
    training_norm = np.asarray(squared_gradient_norm(outcome.objective)(x), dtype=np.float64)
    ledger = dataclasses.replace(result.ledger, seed=seeds)
    new_result = dataclasses.replace(
        result, releases=releases, output_index=taus, output=x[rows, taus], final_iterate=x[:, -1].copy(),
        trajectory=None if result.trajectory is None else x, trace=heldout.copy(), ledger=ledger)
    return dataclasses.replace(outcome, result=new_result, seeds=seeds, heldout_objective=heldout,
                               heldout_grad_norm_sq=heldout_norm, training_grad_norm_sq=training_norm)


def _run(setup: PublishedSetup, which: int, noise_seed, held_out=None):
    return run_algorithm("dpzero", objective=setup.problems[which],
                         held_out=setup.held_out if held_out is None else held_out, noise_seed=noise_seed,
                         **setup.run_arguments())


def _reproduced_seed_bug(setup: PublishedSetup, which: int, rng) -> tuple:
    """Planted (i) and (ii): a run with known user secrets S_r, its noise replaced (module docstring)."""
    secrets = [_draw_seed(rng) for _ in range(setup.settings["replicates"])]
    outcome = _run(setup, which, secrets)
    sigma = float(outcome.result.ledger.plan.noise_std)
    releases = outcome.releases
    problem = setup.problems[which]
    for r, secret in enumerate(secrets):  # the run's noise is σ·z_{S_r}, exactly as assumed
        means = releases[r] - sigma * _noise_stream(setup, secret)
        if not np.allclose(means, _clipped_means(setup, problem, outcome.seeds[r]), rtol=0, atol=1e-12):
            raise ReproductionError("the run's releases are not clipped means plus sigma times the secret seed's "
                                    "('dpzero', 'noise') stream: the planted reproduction does not apply")
    if setup.variant == "old_default_noise":  # noise_seed = seed: each replicate's public seed's noise stream
        new = np.array([releases[r] - sigma * _noise_stream(setup, s) + sigma * _noise_stream(setup, p)
                        for r, (s, p) in enumerate(zip(secrets, outcome.seeds))])
        return rebuild_outcome(outcome, new), secrets
    # overlapping seeds: public P + r, secret P + r + 1 (replicate r's secret is replicate r+1's public seed)
    new = np.array([_clipped_means(setup, problem, p) + sigma * _noise_stream(setup, p + 1) for p in setup.seeds])
    return rebuild_outcome(outcome, new, setup.seeds), secrets


def _abort_if_nonfinite(setup: PublishedSetup, which: int) -> None:
    """Planted (vii): the old behaviour — the first non-finite per-record finite difference aborts the run."""
    problem, lam = setup.problems[which], setup.settings["perturbation"]
    u, x0 = setup.directions_for(setup.seeds[0])[0], np.zeros(problem.d)  # step 0 of replicate 0, x_0 = 0
    with np.errstate(invalid="ignore"):
        a = (problem.loss(x0 + lam * u, problem.data) - problem.loss(x0 - lam * u, problem.data)) / (2 * lam)
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size:
        raise ValueError(f"loss returned a non-finite value for sample i={int(bad[0])} at step 0 (replicate 0)")


def publish(setup: PublishedSetup, rng: np.random.Generator, which: int, *, proxy: bool = False) -> dict[str, str]:
    """One trial: the publication (file name → text) of a run of ``setup``'s variant on D (which = 0) or D′ (1).

    Secrets: the variant's own — fresh operating-system entropy, or for the seed variants (i)–(iii) R user
    secrets, each a uniform integer in [0, 2^128) from two ``rng.integers(0, 2**64, 2, uint64)`` draws. With
    ``proxy`` one such value v is drawn first and a default-secret run gets ``SecretSeed(v, "os_entropy")`` (the
    law of fresh entropy, reproducible: the training split). A run that raises ValueError or ArithmeticError (a
    data-dependent crash) publishes only ``{"error.txt": "<type>: <message>"}``.
    """
    variant = setup.variant
    secret = SecretSeed(_draw_seed(rng), "os_entropy") if proxy else None
    try:
        if variant in ("old_default_noise", "overlapping_replicate_seeds"):
            outcome, _ = _reproduced_seed_bug(setup, which, rng)
        elif variant == "secret_seed_in_manifest":
            secrets = [_draw_seed(rng) for _ in range(setup.settings["replicates"])]
            outcome = _run(setup, which, secrets)
            files = publication(outcome, command=COMMAND)
            manifest = json.loads(files["manifest.json"])
            manifest["seeds"]["noise_seed"] = secrets  # the old manifest's "seeds": {"seed": …, "noise_seed": …}
            files["manifest.json"] = json.dumps(manifest, indent=2) + "\n"
            return files
        elif variant == "poisson_counts_published":
            outcome = _run(setup, which, secret)
            files = publication(outcome, command=COMMAND)
            ledger = json.loads(files["ledger.json"])
            for run in ledger["runs"]:  # the old ledger's per-replicate batch sizes and evaluation counts
                counts = outcome.diagnostics(run["replicate"])
                run.update(batch_sizes=[int(b) for b in counts.batch_sizes],
                           loss_evaluations=int(counts.loss_evaluations),
                           gradient_evaluations=int(counts.gradient_evaluations))
            files["ledger.json"] = json.dumps(ledger, indent=2) + "\n"
            manifest = json.loads(files["manifest.json"])  # the old summary's totals over the replicates
            manifest["summary"]["loss_evaluations"] = int(sum(int(outcome.diagnostics(r).loss_evaluations)
                                                              for r in range(outcome.replicates)))
            files["manifest.json"] = json.dumps(manifest, indent=2) + "\n"
            return files
        elif variant == "training_diagnostics":
            outcome = _run(setup, which, secret, held_out=setup.problems[which])
        else:
            if variant == "nonfinite_abort":
                _abort_if_nonfinite(setup, which)
            outcome = _run(setup, which, secret)
        return publication(outcome, command=COMMAND, include_nonprivate=setup.include_nonprivate)
    except _ERRORS as exc:
        return {"error.txt": f"{type(exc).__name__}: {exc}\n"}


# ---------------------------------------------------------------------------------------------------
# Features


def _log_match(residual: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """clip(−log10(rms(r − ref)/(rms(r) + rms(ref))), 0, MATCH_CAP) along the last axis (NaN → 0)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        diff = np.sqrt(np.mean((residual - reference) ** 2, axis=-1))
        scale = np.sqrt(np.mean(residual**2, axis=-1)) + np.sqrt(np.mean(reference**2, axis=-1))
        ratio = np.where(diff == 0, 0.0, diff / scale)
        out = np.clip(-np.log10(ratio), 0.0, MATCH_CAP)
    return np.where(np.isnan(out), 0.0, out)


def _parse_csv(text: str) -> tuple[list[str], list[list[str]]]:
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return [], []
    header = lines[0].split(",")
    return header, [line.split(",") for line in lines[1:]]


def _to_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _flatten_json(value, path: str, out: dict) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in EXCLUDED_KEYS:
                continue
            _flatten_json(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list):
        out[f"{path}#len"] = float(len(value))
        numbers = []
        for i, item in enumerate(value):
            _flatten_json(item, f"{path}[{i}]", out)
            if isinstance(item, (int, float)) and not isinstance(item, bool):
                numbers.append(float(item))
        if numbers and len(numbers) == len(value):
            out[f"{path}#sum"] = float(np.sum(numbers))
    elif isinstance(value, bool):
        out[path] = float(value)
    elif isinstance(value, (int, float)):
        out[path] = float(value)
    elif value is None:
        out[f"{path}#null"] = 1.0
    elif isinstance(value, str):
        number = _to_float(value)  # the runner writes non-finite floats as "inf" / "-inf"
        if number is not None:
            out[path] = number
        out[f"{path}#len"] = float(len(value))


def _release_column(publication_files: Mapping[str, str], steps: int) -> np.ndarray | None:
    """ŝ_0..ŝ_{T−1} of replicate 0 from releases.csv (None when absent or malformed)."""
    text = publication_files.get("releases.csv")
    if text is None:
        return None
    header, rows = _parse_csv(text)
    try:
        r, t, s = header.index("replicate"), header.index("t"), header.index("release")
        values = {int(row[t]): float(row[s]) for row in rows if int(row[r]) == 0}
        return np.array([values[k] for k in range(steps)])
    except (ValueError, KeyError, IndexError):
        return None


def candidate_seeds(public_seeds, offset_base: int,
                    publication_files: Mapping[str, str]) -> list[tuple[str, list[int]]]:
    """(source, candidate seeds) of the noise-regeneration features, in a fixed source order: "public seeds"
    (``public_seeds``), "seed offsets" (offset_base + k for k in ``SEED_OFFSETS``, those ≥ 0) and "text:FILE" for
    every file (its integer tokens below 2^128, ``INTEGER_TOKEN``). Shared by every published-output audit."""
    offset_base = int(offset_base)
    sources = [("public seeds", sorted({int(s) for s in public_seeds})),
               ("seed offsets", sorted({offset_base + k for k in SEED_OFFSETS if offset_base + k >= 0}))]
    for name in sorted(publication_files):
        tokens = {int(m) for m in INTEGER_TOKEN.findall(publication_files[name])}
        sources.append((f"text:{name}", sorted(t for t in tokens if t < SEED_BOUND)))
    return sources


def regeneration_features(candidates, residuals: np.ndarray, noise_of: Callable[[list[int]], np.ndarray], out: dict,
                          cache: dict | None = None) -> None:
    """Feature b of every published-output audit: for each (source, seeds) of ``candidates``, the best log-match
    of the residual under D′ (``residuals[1]``) against the noise regenerated from every seed of the source, minus
    the best under D (``residuals[0]``), as ``out["regenerated[SOURCE]"]`` (0 for a source without seeds).

    residuals: (2, n), the release minus the known noiseless value under D and under D′, flattened; noise_of:
    seeds → (m, n) the noise each seed (and whatever it stands for, e.g. its spawned children) would have added;
    cache: where the noise of the non-text sources is kept between publications (their seeds do not change)."""
    for source, seeds in candidates:
        if not seeds:
            out[f"regenerated[{source}]"] = 0.0
            continue
        key = ("stack", source, tuple(seeds)) if cache is not None and not source.startswith("text:") else None
        if key is not None and key in cache:
            streams = cache[key]
        else:
            streams = noise_of(seeds)
            if key is not None:
                cache[key] = streams
        best = [float(np.max(_log_match(residuals[h][None, :], streams))) for h in (0, 1)]
        out[f"regenerated[{source}]"] = best[1] - best[0]


def _candidates(setup: PublishedSetup, publication_files: Mapping[str, str]) -> list[tuple[str, list[int]]]:
    """(source, candidate seeds) for feature b, in a fixed source order."""
    return candidate_seeds((setup.public_seed, *setup.seeds), setup.public_seed, publication_files)


def _with_children(setup: PublishedSetup, seeds: list[int]) -> np.ndarray:
    """(K, T) noise streams of the seeds and of their R spawned children, memoised per seed."""
    replicates = setup.settings["replicates"]
    rows = []
    for seed in seeds:
        key = ("family", seed)
        if key not in setup._cache:
            _evict(setup._cache)
            family = [seed] + (list(replicate_seeds(seed, replicates)) if replicates > 1 else [])
            setup._cache[key] = np.array([_noise_stream(setup, s) for s in family])
        rows.append(setup._cache[key])
    return np.concatenate(rows) if rows else np.empty((0, setup.steps))


def _regeneration_features(setup: PublishedSetup, files: Mapping[str, str], releases: np.ndarray, out: dict) -> None:
    sigma = setup.noise_std()
    residuals = releases[None, :] - setup.means  # (2, T): ŝ − m_D, ŝ − m_D′
    regeneration_features(_candidates(setup, files), residuals, lambda seeds: sigma * _with_children(setup, seeds),
                          out, setup._cache)


def _recomputed_features(setup: PublishedSetup, files: Mapping[str, str], releases: np.ndarray, out: dict) -> None:
    text = files.get("trajectory.csv")
    if text is None:
        return
    header, rows = _parse_csv(text)
    if "replicate" not in header or "t" not in header:
        return
    r_col, t_col = header.index("replicate"), header.index("t")
    try:
        mine = sorted((int(row[t_col]), row) for row in rows if int(row[r_col]) == 0)
    except (ValueError, IndexError):
        return
    steps = setup.steps
    if [t for t, _ in mine] != list(range(steps + 1)):
        return
    alpha = setup.settings["step_size"]
    x = np.zeros((steps + 1, setup.problems[0].d))
    for t in range(steps):
        x[t + 1] = x[t] - (alpha * releases[t]) * setup.directions[t]
    quantities = {"objective": [np.asarray(p.objective_value(x), dtype=np.float64) for p in setup.problems],
                  "grad_norm_sq": [np.asarray(p.squared_gradient_norm(x), dtype=np.float64)
                                   for p in setup.problems]}
    for j, column in enumerate(header):
        if j in (r_col, t_col):
            continue
        try:
            published = np.array([float(row[j]) for _, row in mine])
        except (ValueError, IndexError):
            continue
        for quantity, (on_d, on_dp) in quantities.items():
            out[f"recomputed[{column}~{quantity}]"] = float(_log_match(published, on_dp) - _log_match(published, on_d))


def file_features(publication_files: Mapping[str, str], *, skip=("releases.csv",)) -> dict[str, float]:
    """The features every published-output audit reads the same way (module docstring, c): ``completed`` (0 when
    the publication is only error.txt), every file's presence ``file:NAME`` and length ``NAME#len``, every numeric
    leaf of every JSON file and every numeric cell of every CSV file except those named in ``skip`` (the releases,
    which an audit scores itself)."""
    files = dict(publication_files)
    out: dict[str, float] = {"completed": 0.0 if "error.txt" in files else 1.0}
    for name, text in sorted(files.items()):
        out[f"file:{name}"] = 1.0
        out[f"{name}#len"] = float(len(text))
    for name, text in sorted(files.items()):
        if name in skip:
            continue
        if name.endswith(".json"):
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            leaves: dict = {}
            _flatten_json(parsed, "", leaves)
            out.update({f"{name}:{k}": v for k, v in leaves.items()})
        elif name.endswith(".csv"):
            header, rows = _parse_csv(text)
            for i, row in enumerate(rows):
                for column, cell in zip(header, row):
                    value = _to_float(cell)
                    if value is not None:
                        out[f"{name}:{column}[{i}]"] = value
    return out


def publication_features(publication_files: Mapping[str, str], setup: PublishedSetup) -> dict[str, float]:
    """The features of one publication (module docstring, a–d): name → value, every value a float (non-finite
    values are mapped to finite ones by ``FeatureSchema.vector``). Every file of the publication contributes."""
    files = dict(publication_files)
    out = file_features(files)                                                    # c
    releases = _release_column(files, setup.steps)
    if releases is not None:
        out["release_score"] = float(setup.signs @ releases)                      # a
        _regeneration_features(setup, files, releases, out)                      # b
        _recomputed_features(setup, files, releases, out)                         # d
    return out


def _feature_files(name: str) -> tuple[str, ...]:
    """The files a feature reads (for reports)."""
    name = name.removeprefix("present:")
    if name == "completed":
        return ("error.txt",)
    if name == "release_score":
        return ("releases.csv",)
    if name.startswith("regenerated["):
        source = name[len("regenerated["):-1]
        return ("releases.csv", source[len("text:"):]) if source.startswith("text:") else ("releases.csv",)
    if name.startswith("recomputed["):
        return ("releases.csv", "trajectory.csv")
    if name.startswith("file:"):
        return (name[len("file:"):],)
    return (re.split(r"[:#]", name, maxsplit=1)[0],)


#: Feature groups in schema order, which is also the tie-break order of ``select_feature``: the features that
#: explain a leak (regenerated noise, recomputed diagnostics, a crash) before raw values.
_GROUP_ORDER = ("regenerated[", "recomputed[", "completed", "release_score", "file:")


def _name_order(name: str) -> tuple:
    base = name.removeprefix("present:")
    group = next((i for i, p in enumerate(_GROUP_ORDER) if base.startswith(p)), len(_GROUP_ORDER))
    return (name.startswith("present:"), group, base.endswith("#len"), base)  # lengths after values


@dataclass(frozen=True)
class FeatureSchema:
    """The fixed feature order: names seen on the training split (each with a ``present:`` indicator)."""

    names: tuple[str, ...]

    @classmethod
    def from_features(cls, feature_dicts) -> "FeatureSchema":
        seen = set()
        for features in feature_dicts:
            seen.update(features)
        names = sorted(seen | {f"present:{n}" for n in seen}, key=_name_order)
        return cls(tuple(names))

    def vector(self, features: Mapping[str, float]) -> np.ndarray:
        """Values in schema order: a missing name is 0, ``present:NAME`` is 1 when NAME is there; NaN → 0 and
        ±inf → ±1e300 (scores must be finite)."""
        out = np.empty(len(self.names))
        for i, name in enumerate(self.names):
            if name.startswith("present:"):
                out[i] = 1.0 if name[len("present:"):] in features else 0.0
            else:
                out[i] = features.get(name, 0.0)
        return np.nan_to_num(out, nan=0.0, posinf=1e300, neginf=-1e300)


@dataclass(frozen=True)
class FeatureSelection:
    """The feature chosen on the training split (``select_feature``).

    name, index: the feature and its column in ``schema``; sign, cut: the score is 1 if sign·x > cut else 0;
    ks: its Kolmogorov–Smirnov distance on the training split; gap: the empty interval around the cut relative
    to the feature's training range; files: the publication files it reads; top: the five best (name, ks);
    training_trials per data set; training_seed; schema."""

    name: str
    index: int
    sign: int
    cut: float
    ks: float
    gap: float
    files: tuple[str, ...]
    top: tuple[tuple[str, float], ...]
    training_trials: int
    training_seed: int
    schema: FeatureSchema = field(repr=False)

    def score(self, outputs) -> np.ndarray:
        """The binary audit score of feature vectors (trials, len(schema))."""
        outputs = np.asarray(outputs, dtype=np.float64)
        if outputs.ndim != 2 or outputs.shape[1] != len(self.schema.names):
            raise ValueError(f"outputs must have shape (trials, {len(self.schema.names)}), got {outputs.shape}")
        return np.where(self.sign * outputs[:, self.index] > self.cut, 1.0, 0.0)


def _half_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a / 2 + b / 2


def select_feature(train_d, train_dp, schema: FeatureSchema, *, training_seed=0) -> FeatureSelection:
    """The feature, sign and cut maximising the KS distance between the training values on D (rows of
    ``train_d``) and on D′ (``train_dp``); the cut is the midpoint of the gap after the D′-favouring ECDF
    maximum. Ties (KS to 1e-9): the larger gap around the cut relative to the feature's range (to 0.01), then the
    earlier feature in schema order (regenerated noise, recomputed diagnostics, completed, release score, file
    presence, then the files' values), then sign +1."""
    a, b = np.asarray(train_d, dtype=np.float64), np.asarray(train_dp, dtype=np.float64)
    k = len(schema.names)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != k or b.shape[1] != k or not len(a) or not len(b):
        raise ValueError(f"train_d and train_dp must be non-empty (trials, {k}) arrays")
    pooled = np.vstack([a, b])
    labels = np.concatenate([np.zeros(len(a), bool), np.ones(len(b), bool)])
    span = np.ptp(pooled, axis=0)
    best = None
    candidates = []
    for sign in (1, -1):
        values = sign * pooled
        order = np.argsort(values, axis=0, kind="stable")
        ordered = np.take_along_axis(values, order, axis=0)
        is_dp = labels[order]
        diff = np.cumsum(~is_dp, axis=0) / len(a) - np.cumsum(is_dp, axis=0) / len(b)
        end_of_run = np.ones_like(ordered, dtype=bool)
        end_of_run[:-1] = ordered[1:] != ordered[:-1]
        diff = np.where(end_of_run, diff, -np.inf)
        position = np.argmax(diff, axis=0)
        columns = np.arange(k)
        ks = diff[position, columns]
        following = np.minimum(position + 1, len(pooled) - 1)
        low, high = ordered[position, columns], ordered[following, columns]
        cut = np.where(position + 1 < len(pooled), _half_sum(low, high), low)
        with np.errstate(invalid="ignore", divide="ignore"):
            gap = np.where(span > 0, (high - low) / span, 0.0)
        candidates.append((sign, ks, gap, cut))
    for index in range(k):  # schema order: the earlier feature wins a tie
        for sign, ks, gap, cut in candidates:
            key = (round(float(ks[index]), 9), round(float(np.nan_to_num(gap[index])), 2))
            if best is None or key > best[0]:
                best = (key, index, sign, float(cut[index]), float(ks[index]), float(np.nan_to_num(gap[index])))
    _, index, sign, cut, ks, gap = best
    strength = np.maximum(candidates[0][1], candidates[1][1])
    top = tuple((schema.names[i], float(strength[i])) for i in np.argsort(-strength, kind="stable")[:5])
    name = schema.names[index]
    return FeatureSelection(name, index, sign, cut, ks, gap, _feature_files(name), top, len(a),
                            int(training_seed), schema)


# ---------------------------------------------------------------------------------------------------
# The scenario


class PublishedAudit:
    """A published-output scenario: the setup, the lazily trained feature selection and the ``Scenario``.

    ``scenario`` is an ``empirical_dp.scenarios.Scenario`` whose outputs are feature vectors (trials,
    len(schema)) of whole publications and whose ``log_likelihood_ratio`` slot holds the trained binary score
    (not a likelihood ratio: the audit's default attack). The first ``sample`` or score call trains the selection
    (``training_trials`` publications per data set) and keeps it. The pipeline enters through four methods —
    ``_claim``, ``_description``, ``publish_trial`` and ``features`` — which another pipeline's audit overrides
    (``empirical_dp.zo_o2nc_published``); training, sampling and scoring are shared."""

    def __init__(self, setup, name: str, *, claimed_epsilon=None, training_trials=TRAINING_TRIALS,
                 training_seed=0, description=None):
        if not isinstance(name, str) or not name:
            raise ValueError("name must be a non-empty string")
        self.setup = setup
        self.name = name
        self.training_trials = check_int("training_trials", training_trials, minimum=2)
        self.training_seed = check_int("training_seed", training_seed, minimum=0, maximum=SEED_BOUND - 1)
        self._selection: FeatureSelection | None = None
        claim = self._claim()
        if claimed_epsilon is not None:
            claim = {"claimed_epsilon": float(check_real("claimed_epsilon", claimed_epsilon, nonnegative=True)),
                     "delta": claim["delta"]}
        self.scenario = Scenario(name=name, description=description or self._description(), sample=self.sample,
                                 **claim, tight_epsilon=None, mu=None, log_likelihood_ratio=self.score)

    # The four hooks a published-output audit of another pipeline overrides (``empirical_dp.zo_o2nc_published``):
    # the claim, the description, one trial's publication and its features.

    def _claim(self) -> dict:
        """The ``Scenario`` claim arguments: the run's target ε at its δ (an (ε, δ) claim)."""
        s = self.setup.settings
        return {"claimed_epsilon": float(s["epsilon"]), "delta": float(s["delta"])}

    def _description(self) -> str:
        s, setup = self.setup.settings, self.setup
        batching = (f"Poisson q={s['sampling_probability']:g}, B={s['batch_size']}, n={s['n']} vs {s['n'] + 1}"
                    if setup.poisson else f"full batch, n={s['n']}")
        return (f"DPZero publication ({VARIANTS[setup.variant][0]}), T={s['steps']}, {batching}, "
                f"R={s['replicates']}; score: the training split's best feature")

    def publish_trial(self, rng: np.random.Generator, which: int, *, proxy: bool = False) -> dict[str, str]:
        """One trial's publication on D (which = 0) or D′ (1) (``publish``)."""
        return publish(self.setup, rng, which, proxy=proxy)

    def features(self, publication_files: Mapping[str, str]) -> dict[str, float]:
        """The features of one publication (``publication_features``)."""
        return publication_features(publication_files, self.setup)

    @property
    def selection(self) -> FeatureSelection:
        """The trained ``FeatureSelection`` (training on first use)."""
        if self._selection is None:
            self._selection = self._train()
        return self._selection

    def _train(self) -> FeatureSelection:
        streams = Streams(self.training_seed)
        features = []
        for label, which in (("D", 0), ("D'", 1)):
            rng = streams.generator("published", self.name, "train", label)
            features.append([self.features(self.publish_trial(rng, which, proxy=True))
                             for _ in range(self.training_trials)])
        schema = FeatureSchema.from_features(features[0] + features[1])
        matrices = [np.array([schema.vector(f) for f in group]) for group in features]
        return select_feature(matrices[0], matrices[1], schema, training_seed=self.training_seed)

    def publications(self, rng: np.random.Generator, trials: int, which: int) -> list[dict[str, str]]:
        """``trials`` publications of the variant on D (which = 0) or D′ (1), secrets as ``publish`` draws them."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        trials = check_int("trials", trials, minimum=0)
        which = check_int("which", which, minimum=0, maximum=1)
        return [self.publish_trial(rng, which) for _ in range(trials)]

    def sample(self, rng: np.random.Generator, trials: int, which: int) -> np.ndarray:
        """(trials, len(schema)) feature vectors of fresh publications (``Scenario.sample``)."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        check_int("trials", trials, minimum=0)
        check_int("which", which, minimum=0, maximum=1)
        schema = self.selection.schema  # trained before the first trial is drawn
        pubs = self.publications(rng, trials, which)
        out = np.empty((len(pubs), len(schema.names)))
        for i, files in enumerate(pubs):
            out[i] = schema.vector(self.features(files))
        return out

    def score(self, outputs) -> np.ndarray:
        """The trained binary score (``FeatureSelection.score``)."""
        return self.selection.score(outputs)


def published_scenario(variant: str = "default", *, name=None, training_trials=TRAINING_TRIALS, training_seed=0,
                       **settings) -> PublishedAudit:
    """A ``PublishedAudit`` for ``variant`` (``published_setup`` takes ``settings``); name defaults to
    "dpzero-published" for the default variant, else "published-VARIANT"."""
    setup = published_setup(variant, **settings)
    if name is None:
        name = "dpzero-published" if variant == "default" else f"published-{variant.replace('_', '-')}"
    return PublishedAudit(setup, name, training_trials=training_trials, training_seed=training_seed)


@dataclass(frozen=True)
class PublishedAuditResult:
    """``audit_published``'s outcome: the ``AuditResult`` (Clopper–Pearson ε_lb, verdict), the feature that
    decided (``FeatureSelection``: name, files, KS on the training split) and the wall-clock seconds (training
    included)."""

    result: AuditResult
    selection: FeatureSelection
    seconds: float

    @property
    def verdict(self) -> str:
        return self.result.verdict

    @property
    def epsilon_lb(self) -> float:
        return self.result.epsilon_lb


def audit_published(target, trials, *, seed=0, confidence=0.95, **audit_options) -> PublishedAuditResult:
    """Audit a published-output scenario: ``target`` a ``PublishedAudit`` or a name of ``PUBLISHED_BUILTINS``;
    ``trials`` publications per data set for ``empirical_dp.audit.audit`` (select + count; the training split
    comes on top); ``audit_options`` are passed on (threshold_strategy, grid_size, …)."""
    if isinstance(target, str):
        if target not in PUBLISHED_BUILTINS:
            raise ValueError(f"target must be a PublishedAudit or one of {sorted(PUBLISHED_BUILTINS)}, got {target!r}")
        target = PUBLISHED_BUILTINS[target]()
    if not isinstance(target, PublishedAudit):
        raise TypeError(f"target must be a PublishedAudit or a name, got {type(target).__name__}")
    start = time.perf_counter()
    selection = target.selection
    result = audit(target.scenario, trials, seed=seed, confidence=confidence, **audit_options)
    return PublishedAuditResult(result, selection, time.perf_counter() - start)


def _factory(variant: str, name: str) -> Callable[[], PublishedAudit]:
    return lambda: published_scenario(variant, name=name)


#: Registered name → factory of its ``PublishedAudit`` (the default and the planted reintroductions).
PUBLISHED_BUILTINS: dict[str, Callable[[], PublishedAudit]] = {
    "dpzero-published": _factory("default", "dpzero-published"),
    "published-old-default-noise": _factory("old_default_noise", "published-old-default-noise"),
    "published-overlapping-replicate-seeds": _factory("overlapping_replicate_seeds",
                                                      "published-overlapping-replicate-seeds"),
    "published-secret-seed-in-manifest": _factory("secret_seed_in_manifest", "published-secret-seed-in-manifest"),
    "published-clip-counts": _factory("clip_counts_published", "published-clip-counts"),
    "published-poisson-counts": _factory("poisson_counts_published", "published-poisson-counts"),
    "published-training-diagnostics": _factory("training_diagnostics", "published-training-diagnostics"),
    "published-nonfinite-abort": _factory("nonfinite_abort", "published-nonfinite-abort"),
}
