"""Auditing everything a bgm21 run publishes: the files of ``reference.runner_bgm21.bgm21_publication`` for a DEFAULT
run of ``reference.runner_bgm21.run_bgm21`` (``dpref run bgm21 --algorithm nsfw|polysfw``) scored as one output
(docs/audits.md, "bgm21: everything a run publishes"; threat model docs/design.md). The companion of
``empirical_dp.spider_sosp_published``, whose machinery it reuses. For the three other algorithms (``noisy-fw``,
``phased-sgd``, ``prox-smd``) it provides the neighbouring pair and the secret draws with which the tests show that a
default run publishes only post-processing of its releases and public inputs, and that no seed found in its files
regenerates its noise (last section below; no statistical scenario for them).

Sources:
- Bassily, Guzmán, Menart, "Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex
  Settings" (NeurIPS 2021): Algorithm 1 (A_polySFW, §4.1, Theorem 7: Laplace report-noisy-min over the vertices of W
  at every step, lines 6 and 12) and Algorithm 6 (A_nSFW, §4.2, Theorem 10: Gaussian noise on the recursive gradient
  estimator, an exact LMO), one pass over disjoint batches B_r^t cut from a public order. Their privacy proofs
  (Appendices B.1–B.2) are missing; the per-step sensitivities the ledger composes are the rebuilt ones each run puts
  in its public trace (bgm21.E1; ``reference.algorithms.bgm21_ledgers``). The ledger covers the releases — Algorithm
  1's selected vertices v_r^t, Algorithm 6's noisy estimates ∇̃_r^t — and everything else a run writes must be their
  post-processing or a function of public inputs (``reference.runner_bgm21``'s module docstring lists why each file
  is).
- ``empirical_dp.bgm21``: the release audits of the same algorithms (one round each, worst-case pairs).
- ``empirical_dp.published`` / ``empirical_dp.spider_sosp_published``: the whole-publication audit
  (``PublishedAudit``: feature selection on a training split, then ``empirical_dp.audit.audit``; ``file_features``,
  ``candidate_seeds``, ``regeneration_features``; the runner's own code with only its problem builder substituted).

Threat model. Everything a run receives or writes is public — the public seed (hence the record order, key ("bgm21",
ALG, "order"), and the output index), the data seed, the hyper-parameters, the code, both neighbouring data sets,
the public pool that defines the population and every published file — except the run's secret seed: the Gaussian
noise of Algorithm 6 (keys ("bgm21", "noisy_sfw", "noise", r, t)) and the Laplace noise of Algorithm 1 (keys
("bgm21", "poly_sfw", "noise", r, t)).

The pipeline. Each trial runs ``run_bgm21`` with the DEFAULT arguments of ``dpref run bgm21 --algorithm ALG``:
problem "sigmoid-l2" (nsfw: W the ℓ_2 unit ball) or "sigmoid-l1" (polysfw: the ℓ_1 unit ball as the polytope of its
J = 20 vertices), d = 10, ε = 1, δ = 1e-6, the practical schedule, σ̂ with η_{r,t−1} (nsfw), data seed 0, the default
backend (fast when installed), no ``noise_seed`` (fresh operating-system entropy) — then
``bgm21_publication(outcome, command=...)`` (releases.csv, trace.csv, output.csv, diagnostics.json, ledger.json,
manifest.json; manifest.json's "summary" is ``bgm21_summary``, the record ``dpref run bgm21`` prints, and
``render_bgm21`` of it is the printed table). What differs from ``dpref run bgm21`` with no other option:
* the records: the canary pair below instead of n draws from the data seed (the one substitution: ``run_bgm21``,
  ``prepare_bgm21`` and ``execute_bgm21`` run their own code (``__code__``) over a copy of
  ``reference.runner_bgm21``'s namespace whose ``build_bgm21_problem`` is a ``CanaryBuilder``: the real builder's
  problem — the public pool, W, the constants, the start, the population measure — with the pair's records as its
  ``sample``; the reference modules are never modified);
* the ledger's certification is memoised (``_CERTIFICATIONS``): ``privacy_report`` is a pure function of the public
  trace and config, which are the same in every trial (the schedule and the noise scales are fixed by the settings),
  and its exact mpmath calibration takes ~60 ms a run; the copy's ``_bgm21`` is the module's namespace with
  ``privacy_report`` looked up by those inputs (every trace field the ledger reads, the config, ε, δ), so every file
  is byte for byte what the runner writes (checked in the tests against the unmodified runner);
* n = 2048 records (``--n 2048``) instead of 4096: a run and its files take ~18 ms instead of ~26 ms (the fast twin
  evaluates the first batch record by record to choose its batched route), so the ~164 publications of a quick audit
  (training split included) take ~3 s. The plan keeps its shape: the practical schedule still has R = 3 rounds, 7
  steps on batches of b, b, b/2, b, b/2, b/3, b/4 records (b = 446 instead of 893; 2045 of 2048 records read instead
  of 4095 of 4096), the same noise formulas and the same per-batch ledger, whose values depend on n only through the
  rounding of b/(t + 1): nsfw's worst batch is ('B', 1, 1) with μ = 0.19024 (0.19003 at 4096; ε 0.7904 against
  0.7895), polysfw's ('B', 2, 1) with ε = 0.1840 (0.1838);
* the training split: ``BGM21_TRAINING_TRIALS`` = 32 publications per data set instead of 48 (it only chooses the
  feature; a leak that separates the data sets does so on any training split);
* the public seed: a fresh one per trial (``integers(0, 2**62)``) instead of the default 0, so every trial has a new
  record order and a new seed to regenerate from (it is published in ledger.json and manifest.json).

The pairs (``canary_records``). Every record but one is z = (0, +1): its gradient −sech²(y⟨x, w⟩)·y·x is exactly 0 at
every w, so every noiseless estimate of every step is 0 except where the differing record enters. The differing
record sits in the slot read first in the public order of the trial's seed (``public_order(seed, n, ("bgm21", ALG,
"order"))[0]``), the first record of B_0^0, read at the public start w_0^0: D holds (x*, −1), D′ holds (x*, +1). At
w_0^0 the margin ⟨x*, w_0^0⟩ is 0, so sech² = 1 and the estimate ∇_0^0 is x*/b on D and −x*/b on D′: the record moves
it by 2x*/b, twice a zero record's move (replace-one). Flipping y negates the gradient at every w, so the pair is
legitimate for any path; both records satisfy the constants the run is certified with (‖x*‖_q = R_x, the pool's
largest norm).
* nsfw: x* = the pool point of largest ℓ_2 norm (R_x = L0 = 2.597); the start is the centre 0. The canary moves the
  release ∇̃_0^0 = ∇_0^0 + N_0^0 by 2L0/b, exactly the trace's gradient sensitivity, so the pair's releases carry
  μ = 2L0/(bσ_{0,0}) = ε/(2√log(1/δ)) = 0.1345 exactly, the ledger's μ for B_0^0. The plan's μ (the worst batch,
  ('B', 1, 1)) is 0.1902: a batch of a step t ≥ 1 pays for two Gaussian releases (fresh-gradient and difference
  terms) composed as √((Δ/σ)² + (Δ̂/σ̂)²) = √2·0.1345, but the run publishes their sum, ∇̃_r^t − (1 − η)∇̃_r^{t−1} =
  (1 − η)(Δ_r^t + N̂) + η(fresh + N), whose noise std is √((1 − η)²σ̂² + η²σ²); a record of this problem moves that
  sum by at most 2R_x/m_t (the fresh term and the difference are both along x with sech² weights in [0, 1]), which
  gives at most μ ≤ 0.098 ((1, 1), (2, 1)), 0.101 ((2, 2)), 0.106 ((2, 3)): B_0^0's 0.1345 = 1/√2 = 0.707 of the
  plan's μ is the closest any record of the problem gets (``_step_bounds`` computes these from the trace; the tests
  check them).
* polysfw: x* = R_x·(0, 1, …, 1) (R_x = L0 = 0.99993, the pool's largest ‖x‖_∞); the start is vertex 0 = e_1, so the
  margin is 0. The canary moves ∇_0^0 by G_0 = 2L0/b in every coordinate but the first — exactly the trace's G_0 —,
  so 18 of the 20 vertex scores move by ±½·D·G_0, the trace's centred score sensitivity Δ_c. Every other step's
  scores are all 0 (the selections are uniform whatever the data), so the whole publication's likelihood ratio is
  that of the one selection v_0^0: pure ε = max_j |log P_D′(j)/P_D(j)| = 0.0558 (exact selection probabilities,
  ``reference.selection.noisy_argmin_probabilities``), 0.53 of that step's ε0 = 2Δ_c/s_0 = 0.1059 (two scores move by
  ±Δ_c in pairs, never one by 2Δ_c, so report-noisy-min's factor 2 is not reached; the number of moved coordinates
  does not change it, and 18 gives the largest total variation, 0.025) and 0.30 of the ledger's ε = 0.1840 at δ =
  1e-6. The worst batch ('B', 2, 1) enters 3 steps, each charged its full ε0 = 2·½D·G_1/s_2 = 0.0613 (G_1 = 2.32·G_0,
  s_2 = 4s_0); a record there moves ∇_2^1 by at most 2R_x/m_1 in ℓ∞ (the fresh term and the difference are both along
  x with sech² weights in [0, 1]), 0.86 of G_1, and the two later steps only through the recursion's (1 − η) factors
  (0.42, then 0.21), so its selections carry less than B_0^0's.
So a consistent verdict says that no file adds to what the releases carry, not that the accounting is tight (the
release audits ``bgm21-noisy-sfw-round`` and ``bgm21-poly-sfw-round`` check that).

The setup checks the model on one private run per data set with a known user secret S: the settings are the default
run's, the slot is in B_0^0, the run's noiseless estimates (``NonPrivateDebugTrace.estimates``) are ±x*/b at step 0
and exactly 0 elsewhere, and (nsfw) the releases' innovations ∇̃_r^t − (1 − η_{r,t})∇̃_r^{t−1} (∇̃_r^0 at t = 0) minus
the model are the noise of S's streams, σ_{r,0}z_1 at t = 0 and (1 − η)σ̂z_2 + ησz_1 at t ≥ 1 (z_1, z_2 the two
``standard_normal(d)`` draws of key ("bgm21", "noisy_sfw", "noise", r, t)); (polysfw) every selection is
argmin_j(score_j + u_j), u = ``laplace(0, s_r, J)`` of key ("bgm21", "poly_sfw", "noise", r, t) under S (ValueError /
``PipelineMismatch`` otherwise).

Features (``Bgm21PublishedAudit.features``; a fixed-length vector over the training split's schema):
a. ``release_score``: the exact log-likelihood ratio of the publication's releases. Only step (0, 0) differs in law
   between D and D′ (every later step's conditional law given the past is the same: its records are z = (0, 1) on
   both): nsfw Δᵀ(∇̃_0^0 − m_D − Δ/2)/σ_{0,0}², Δ = m_D′ − m_D = −2x*/b; polysfw log P_D′(v_0^0) − log P_D(v_0^0).
b. ``regenerated[SOURCE]``: the noise of step (0, 0) — the noise that protects the canary; any other step's noise is
  the same under D and D′ and cannot separate them — regenerated from every candidate seed c (the run's public seed
  and the data seed, the seed offsets ``published.SEED_OFFSETS``, every integer token of every file). nsfw
  (``published.regeneration_features``): σ_{0,0}z_1(c) against the residuals ∇̃_0^0 − m_D and ∇̃_0^0 − m_D′, the
  best log-match under D′ minus the best under D. polysfw: the selection argmin(scores_h + u_c) under h = D, D′ against
  the published v_0^0; a candidate whose step-(0, 0) selection matches under either hypothesis is confirmed when its
  noise also reproduces every later published selection (a wrong seed does so with probability 20^−6), and the
  feature is the number of matched steps under D′ minus under D for the best confirmed candidate (0 when none).
c. ``published.file_features``: every file's presence and length, every numeric leaf of every JSON file (ledger,
   manifest with the printed summary, diagnostics), every numeric cell of every CSV file except releases.csv (trace,
   output), ``completed``.

Claims (the ledger's): nsfw, μ-GDP at the worst batch's μ = 0.1902 (route gdp_exact: the ledger's ε = 0.7904 at δ =
1e-6 is the exact ε of that μ) with δ = 1e-6 — both the Clopper–Pearson ε_lb and the GDP μ_lb may refute it; polysfw,
(ε, δ) = (0.1840, 1e-6) (route pure:kov_exact) — only Clopper–Pearson may.

Variants (``VARIANTS``): ``nsfw`` and ``polysfw`` (the default runs); ``nsfw_public_seed_noise``: the nsfw run with
its secret seed computed from the public seed (``noise_seed = seed + 1``: the runner accepts it, it differs from the
public and the data seed), registered in ``empirical_dp.planted`` as ``bgm21_nsfw-published-public-seed-noise`` —
caught by ``regenerated[seed offsets]``.

Randomness. ``publish(setup, rng, which)`` draws, in order: the public seed (``integers(0, 2**62)``, when
``public_seed`` is None), then for a training publication (``proxy``) one 128-bit value (two ``integers(0, 2**64, 2,
uint64)``) that becomes ``SecretSeed(v, "os_entropy")``; counted trials draw fresh operating-system entropy inside
the runner (the planted variant uses seed + 1 instead).

The other algorithms (``OTHER_STREAMS``). Algorithm 5 (``noisy-fw``, §3, Theorem 6: report-noisy-min with Laplace
noise of key ("bgm21", "noisy_fw", "noise", t) at each of its T − 1 full-batch steps; releases: the selected vertices
j_t), Phased-SGD (Theorem 5: one Gaussian release w_i = w̄_i + σ_iξ_i per phase, key ("bgm21", "phased_sgd", "noise",
i); releases: the noisy phase outputs) and Algorithm 2 (``prox-smd``, §5.2, Theorem 16: the rebuilt solver's noisy
gradient steps, key ("bgm21", "prox_psmd", "noise", r, t); releases: the solver iterates of every round, their
post-processing). ``neighbour_builder(ALG, which, seed)`` is a ``CanaryBuilder``-like stand-in for
``build_bgm21_problem``: the real problem, whose ``sample`` draws the default run's n records (``DEFAULT_N``) from the
data seed and, on D′, changes the record read first (``neighbour_slot``: the first of the public order; Algorithm 5,
which reads every record at every step, record 0) — features negated (abs-cube, abs-sphere) or label flipped
(sigmoid-wc); ``secret_draw`` regenerates one release's noise under a candidate seed exactly as the run draws it.
"""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from reference import runner_bgm21 as bgm21_runner
from reference.algorithms import bgm21 as bgm21_algorithms
from reference.batching import public_order
from reference.objectives_bgm21 import AbsCubeProblem, AbsSphereProblem, SigmoidPoolProblem
from reference.rng import SEED_BOUND, Streams
from reference.secrets import SecretSeed
from reference.selection import noisy_argmin_probabilities
from reference.validation import check_int

from .published import PublishedAudit, candidate_seeds, file_features, regeneration_features
from .zo_o2nc_published import _draw_secret, _public_seeds

__all__ = [
    "VARIANTS",
    "ALGORITHM_OF",
    "STREAM_OF",
    "SETTINGS",
    "BGM21_TRAINING_TRIALS",
    "COMMAND",
    "PipelineMismatch",
    "CanaryPoolProblem",
    "CanaryBuilder",
    "canary_records",
    "Bgm21PublishedSetup",
    "bgm21_published_setup",
    "run_pipeline",
    "publish",
    "read_releases",
    "step_noise",
    "Bgm21PublishedAudit",
    "bgm21_published_scenario",
    "BGM21_PUBLISHED_BUILTINS",
    "OTHER_STREAMS",
    "NeighbourBuilder",
    "neighbour_builder",
    "neighbour_slot",
    "secret_draw",
]

#: The variants of the pipeline: name → (what it runs, its correct twin or None).
VARIANTS = {
    "nsfw": ("Algorithm 6 (nsfw) with default arguments: fresh secret entropy, default publication", None),
    "polysfw": ("Algorithm 1 (polysfw) with default arguments: fresh secret entropy, default publication", None),
    "nsfw_public_seed_noise": ("Algorithm 6 (nsfw) with the secret seed computed from the public seed (noise_seed = "
                               "seed + 1)", "nsfw"),
}
#: The ``dpref run bgm21 --algorithm`` of each variant.
ALGORITHM_OF = {"nsfw": "nsfw", "polysfw": "polysfw", "nsfw_public_seed_noise": "nsfw"}
#: The algorithm's stream name (keys ("bgm21", NAME, "order" / "output" / "noise", ...)).
STREAM_OF = {"nsfw": "noisy_sfw", "polysfw": "poly_sfw"}
#: The built-in run: n records (half the default 4096: module docstring), d (the default), the public seed (None: a
#: fresh one per trial) and the data seed (the default; the records are the pair's, the seed is only published).
SETTINGS = dict(n=2048, d=10, public_seed=None, data_seed=0)
#: Training publications per data set of the built-ins (feature selection only; module docstring).
BGM21_TRAINING_TRIALS = 32
#: The command a publication records.
COMMAND = "dpref run bgm21 (empirical_dp.bgm21_published audit pipeline)"
#: The functions of ``reference.runner_bgm21`` re-bound to the canary builder (the run and what it calls).
_REBOUND = ("run_bgm21", "prepare_bgm21", "execute_bgm21")
#: The settings a default run records (``Bgm21Outcome.settings``), checked on the setup's runs.
_DEFAULT_RUN = {"nsfw": dict(algorithm="nsfw", problem="sigmoid-l2", epsilon=1.0, delta=1e-6, schedule="practical",
                             sigma_hat_eta="prev"),
                "polysfw": dict(algorithm="polysfw", problem="sigmoid-l1", epsilon=1.0, delta=1e-6,
                                schedule="practical")}
#: The known secret of the setup's checks (≠ every public seed of the checks) and their public seed.
_CHECK_SECRET = 2**100 + 20210601
_CHECK_SEED = 1
#: Memoised noise draws per candidate seed (novel candidates arrive with every trial).
_MEMO_LIMIT = 20_000
_ERRORS = (ValueError, ArithmeticError)
_MEAN_TOLERANCE = 1e-15
_NOISE_TOLERANCE = 1e-9
#: Certifications of the ledger by their inputs (module docstring): the same for every trial of a setting.
_CERTIFICATIONS: dict = {}
#: The public trace fields ``reference.algorithms.bgm21_ledgers.ledger_of`` reads.
_LEDGER_FIELDS = ("rounds", "steps", "affected_steps", "score_sensitivity", "estimator_sensitivity", "lap_scales",
                  "gradient_sensitivity", "sigma", "difference_sensitivity", "sigma_hat")


class PipelineMismatch(Exception):
    """The runner asked for another problem than the one the pair stands in for, or a run does not follow the pair's
    model. Never published as error.txt: it propagates."""


# ---------------------------------------------------------------------------------------------------
# The pair and the pipeline


def _canary_x(algorithm: str, problem) -> np.ndarray:
    """x* of the pair (module docstring): nsfw the pool point of largest ℓ_2 norm; polysfw R_x·(0, 1, …, 1)."""
    if algorithm == "nsfw":
        return np.array(problem.pool_x[int(np.argmax(np.linalg.norm(problem.pool_x, axis=1)))], dtype=np.float64)
    x = np.full(problem.d, problem.R_x)
    x[0] = 0.0  # the start is vertex 0 = e_1: margin 0
    return x


def canary_records(algorithm: str, problem, n, seed, which) -> np.ndarray:
    """The records of D (which = 0) or D′ (1), (n, d + 1), read-only: every row (0, +1) but the slot read first in the
    public order of ``seed``, which holds (x*, −1) on D and (x*, +1) on D′ (module docstring)."""
    if algorithm not in STREAM_OF:
        raise ValueError(f"algorithm must be one of {tuple(STREAM_OF)}, got {algorithm!r}")
    n = check_int("n", n, minimum=2)
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    which = check_int("which", which, minimum=0, maximum=1)
    d = problem.d
    data = np.zeros((n, d + 1))
    data[:, -1] = 1.0
    slot = int(public_order(seed, n, key=("bgm21", STREAM_OF[algorithm], "order"))[0])
    data[slot, :-1] = _canary_x(algorithm, problem)
    data[slot, -1] = 1.0 if which else -1.0
    data.setflags(write=False)
    return data


@dataclass(frozen=True)
class CanaryPoolProblem(SigmoidPoolProblem):
    """The built-in sigmoid problem (its public pool, W, constants, start and population measure) whose ``sample``
    returns the pair's records instead of n pool draws."""

    pair_records: np.ndarray = field(default=None, repr=False, compare=False)

    def sample(self, n, rng) -> np.ndarray:
        if int(n) != self.pair_records.shape[0]:
            raise PipelineMismatch(f"the run asked for {n} records; the pair has {self.pair_records.shape[0]}")
        return self.pair_records


@dataclass(frozen=True)
class CanaryBuilder:
    """Stands in for ``build_bgm21_problem`` inside one run: the real builder's problem for the run's problem and d,
    with the records of D (which = 0) or D′ (1) for the trial's public seed (``canary_records``)."""

    algorithm: str
    n: int
    d: int
    seed: int
    which: int

    def __call__(self, problem, d, *, beta=None):
        expected = bgm21_runner.PROBLEMS_OF[self.algorithm][0]
        if (problem, d, beta) != (expected, self.d, None):
            raise PipelineMismatch(f"the run asked for problem {problem!r} in d = {d} (beta {beta}); the pair stands "
                                   f"in for {expected!r} in d = {self.d}")
        built = bgm21_runner.build_bgm21_problem(problem, d)
        fields = {f.name: getattr(built, f.name) for f in dataclasses.fields(built)}
        return CanaryPoolProblem(**fields, pair_records=canary_records(self.algorithm, built, self.n, self.seed,
                                                                      self.which))


def _certification_key(result, epsilon, delta) -> tuple:
    trace = result.trace
    arrays = tuple(np.ascontiguousarray(getattr(trace, name)).tobytes() for name in _LEDGER_FIELDS)
    return (type(result).__name__, repr(result.config), float(epsilon), float(delta), arrays)


def _memoised_privacy_report(result, epsilon, delta):
    """``reference.algorithms.bgm21.privacy_report`` looked up by its inputs (module docstring)."""
    key = _certification_key(result, epsilon, delta)
    report = _CERTIFICATIONS.get(key)
    if report is None:
        if len(_CERTIFICATIONS) > 64:
            _CERTIFICATIONS.clear()
        report = _CERTIFICATIONS[key] = bgm21_algorithms.privacy_report(result, epsilon, delta)
    return report


def _namespace(builder: CanaryBuilder, memoise: bool) -> dict:
    namespace = dict(vars(bgm21_runner))
    namespace["build_bgm21_problem"] = builder
    if memoise:
        algorithms = types.SimpleNamespace(**vars(bgm21_algorithms))
        algorithms.privacy_report = _memoised_privacy_report
        namespace["_bgm21"] = algorithms
    for name in _REBOUND:
        base = getattr(bgm21_runner, name)
        function = types.FunctionType(base.__code__, namespace, base.__name__, base.__defaults__, base.__closure__)
        function.__kwdefaults__ = dict(base.__kwdefaults__ or {})
        namespace[name] = function
    return namespace


def run_pipeline(builder: CanaryBuilder, *, memoise: bool = True, **arguments):
    """``run_bgm21(ALG, n, d, data_seed, seed, **arguments)`` with its problem builder bound to ``builder`` (and, by
    default, its certification memoised): the functions' own code over a copy of the module's namespace."""
    namespace = _namespace(builder, memoise)
    return namespace["run_bgm21"](builder.algorithm, n=builder.n, d=builder.d, seed=builder.seed, **arguments)


@dataclass(frozen=True)
class Bgm21PublishedSetup:
    """Everything the scenario fixes before any trial (``bgm21_published_setup``).

    variant; algorithm ("nsfw" / "polysfw"); settings; report: the ledger's ``LedgerReport`` (public; the same for
    every trial); claim: the ``Scenario`` claim arguments; x_star: the canary's x; batch: b; step0: what the features
    need of step (0, 0) — nsfw: sigma (σ_{0,0}) and means (2, d), m_D and m_D′ of ∇_0^0; polysfw: scale s_0, scores
    (2, J) on D and D′ at w_0^0, log_probabilities (2, J) of the selection; pair: the pair's μ (nsfw) or pure ε
    (polysfw); trace: the public trace of the checks' run on D (schedule fields only are used)."""

    variant: str
    algorithm: str
    settings: dict
    report: object
    claim: dict
    x_star: np.ndarray
    batch: int
    step0: dict
    pair: float
    trace: object
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def public_seed(self) -> int | None:
        return self.settings["public_seed"]

    @property
    def d(self) -> int:
        return int(self.settings["d"])

    @property
    def n(self) -> int:
        return int(self.settings["n"])

    def builder(self, which: int, seed: int) -> CanaryBuilder:
        return CanaryBuilder(self.algorithm, self.n, self.d, int(seed), which)


def _check_settings(overrides: dict) -> dict:
    unknown = set(overrides) - set(SETTINGS)
    if unknown:
        raise ValueError(f"unknown setting(s) {sorted(unknown)}; allowed: {sorted(SETTINGS)}")
    s = {**SETTINGS, **overrides}
    s["n"] = check_int("n", s["n"], minimum=2, maximum=bgm21_runner.N_MAX)
    s["d"] = check_int("d", s["d"], minimum=2, maximum=bgm21_runner.D_MAX)
    s["data_seed"] = check_int("data_seed", s["data_seed"], minimum=0, maximum=SEED_BOUND - 1)
    if s["public_seed"] is not None:
        s["public_seed"] = check_int("public_seed", s["public_seed"], minimum=0, maximum=2**62)
    return s


def step_noise(algorithm: str, seed: int, r: int, t: int, d: int, J: int | None = None) -> np.ndarray:
    """The secret draws of step (r, t) under ``seed``: nsfw (2, d), z_1 and z_2 (z_2 = 0 at t = 0: not drawn);
    polysfw (J,), the unit-scale Laplace vector (``laplace(0, 1, J)``: the run's ``laplace(0, s_r, J)`` is s_r times
    it, bit for bit)."""
    generator = Streams(int(seed)).generator("bgm21", STREAM_OF[algorithm], "noise", r, t)
    if algorithm == "polysfw":
        return generator.laplace(0.0, 1.0, J)
    first = generator.standard_normal(d)
    second = generator.standard_normal(d) if t >= 1 else np.zeros(d)
    return np.stack([first, second])


def _innovations(estimates: np.ndarray, trace) -> np.ndarray:
    """∇̃_r^t − (1 − η_{r,t})∇̃_r^{t−1} (∇̃_r^0 at t = 0): each step's new noisy part (module docstring)."""
    out = np.array(estimates, dtype=np.float64)
    for i in range(1, out.shape[0]):
        if int(trace.steps[i]) >= 1:
            out[i] = estimates[i] - (1.0 - float(trace.step_sizes[i])) * estimates[i - 1]
    return out


def _nsfw_noise(trace, seed: int, d: int) -> np.ndarray:
    """(steps, d): the noise of every step's innovation under ``seed``: σz_1 at t = 0, (1 − η)σ̂z_2 + ησz_1 at t ≥ 1."""
    rows = []
    for i, (r, t) in enumerate(zip(trace.rounds, trace.steps)):
        z = step_noise("nsfw", seed, int(r), int(t), d)
        if int(t) == 0:
            rows.append(float(trace.sigma[i]) * z[0])
        else:
            eta = float(trace.step_sizes[i])
            rows.append((1.0 - eta) * float(trace.sigma_hat[i]) * z[1] + eta * float(trace.sigma[i]) * z[0])
    return np.array(rows)


def _selections(trace, scores: np.ndarray, seed: int, J: int) -> np.ndarray:
    """(steps,): the selection argmin(scores_step + s_r·u) of every step under ``seed`` (scores (steps, J))."""
    return np.array([int(np.argmin(scores[i] + float(trace.lap_scales[i]) * step_noise("polysfw", seed, int(r),
                                                                                          int(t), 0, J)))
                     for i, (r, t) in enumerate(zip(trace.rounds, trace.steps))])


def _step_bounds(trace, R_x: float) -> np.ndarray:
    """The largest μ a record of the problem can give the published innovation of each step (module docstring):
    (2R_x/m_t)/√((1 − η)²σ̂² + η²σ²) at t ≥ 1, (2R_x/b)/σ at t = 0."""
    out = []
    for i, t in enumerate(trace.steps):
        eta, sigma, sigma_hat = float(trace.step_sizes[i]), float(trace.sigma[i]), float(trace.sigma_hat[i])
        std = sigma if int(t) == 0 else math.hypot((1.0 - eta) * sigma_hat, eta * sigma)
        out.append(2.0 * R_x / int(trace.batch_sizes[i]) / std)
    return np.array(out)


def _check_default_run(algorithm: str, outcome, s: dict) -> None:
    recorded = {key: outcome.settings.get(key) for key in _DEFAULT_RUN[algorithm]}
    if recorded != _DEFAULT_RUN[algorithm] or outcome.settings["n"] != s["n"] or outcome.settings["d"] != s["d"]:
        raise PipelineMismatch(f"the run's settings {recorded} are not the default run's {_DEFAULT_RUN[algorithm]}")
    if outcome.settings["backend"] != ("fast" if bgm21_runner.fast_bgm21_available() else "reference"):
        raise PipelineMismatch("the run does not use the default backend")


def bgm21_published_setup(variant: str = "nsfw", **overrides) -> Bgm21PublishedSetup:
    """The fixed part of the scenario (module docstring). overrides: keys of ``SETTINGS``. Makes one private run of
    the pipeline per data set with a known user secret and checks the pair's model on them (ValueError /
    ``PipelineMismatch`` otherwise)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {tuple(VARIANTS)}, got {variant!r}")
    algorithm = ALGORITHM_OF[variant]
    s = _check_settings(overrides)
    outcomes = [run_pipeline(CanaryBuilder(algorithm, s["n"], s["d"], _CHECK_SEED, which),
                             data_seed=s["data_seed"], noise_seed=_CHECK_SECRET) for which in (0, 1)]
    first = outcomes[0]
    for outcome in outcomes:
        _check_default_run(algorithm, outcome, s)
    problem, report, trace = first.problem, first.report, first.result.trace
    if any(o.config != first.config or o.report.epsilon != report.epsilon for o in outcomes):
        raise PipelineMismatch("the runs on D and D' have different configs or certifications: the plan is not public")
    x_star = _canary_x(algorithm, problem)
    b = int(trace.batch_sizes[0])
    slot = int(public_order(_CHECK_SEED, s["n"], key=("bgm21", STREAM_OF[algorithm], "order"))[0])
    if slot not in set(int(i) for i in trace.batch_indices[0]):
        raise PipelineMismatch("the canary's slot is not in batch B_0^0")
    means = np.stack([x_star / b, -x_star / b])  # ∇_0^0 on D (the record (x*, −1)) and on D′ ((x*, +1))
    for which, outcome in enumerate(outcomes):
        estimates = np.asarray(outcome.result.debug.estimates, dtype=np.float64)
        expected = np.zeros_like(estimates)
        expected[0] = means[which]
        if not np.allclose(estimates, expected, rtol=0, atol=_MEAN_TOLERANCE):
            raise ValueError("the run's noiseless estimates are not ±x*/b at step (0, 0) and 0 elsewhere: the pair's "
                             "model does not hold")
    best = max(report.per_batch.values(), key=lambda c: c.epsilon)
    if algorithm == "nsfw":
        sigma = float(trace.sigma[0])
        mu = float(best.gaussian_mu)
        if not math.isclose(mu, float(np.max(trace.mu)), rel_tol=1e-12) or report.route != "gdp_exact":
            raise PipelineMismatch("the ledger's worst batch is not the trace's largest Gaussian-DP mu")
        for which, outcome in enumerate(outcomes):
            released = np.asarray(outcome.result.trace.noisy_estimates, dtype=np.float64)
            residual = _innovations(released, trace)
            residual[0] -= means[which]
            noise = _nsfw_noise(trace, _CHECK_SECRET, s["d"])
            if np.sqrt(np.mean((residual - noise) ** 2)) > _NOISE_TOLERANCE * np.sqrt(np.mean(noise**2)):
                raise ValueError("a private run's releases minus the pair's means are not the noise of its secret "
                                 "seed's ('bgm21', 'noisy_sfw', 'noise', r, t) streams")
        pair = float(np.linalg.norm(means[1] - means[0])) / sigma
        if not math.isclose(pair, float(trace.mu[0]), rel_tol=1e-12):
            raise PipelineMismatch("the canary does not attain the trace's sensitivity of step (0, 0)")
        step0 = {"sigma": sigma, "means": means}
        claim = {"claimed_mu": mu, "delta": float(report.delta)}
    else:
        vertices = np.asarray(problem.W.vertices, dtype=np.float64)
        J = vertices.shape[0]
        scores = means @ vertices.T  # (2, J) ⟨V_j, ∇_0^0⟩
        scale = float(trace.lap_scales[0])
        for which, outcome in enumerate(outcomes):
            step_scores = np.zeros((len(trace.rounds), J))
            step_scores[0] = scores[which]
            chosen = _selections(trace, step_scores, _CHECK_SECRET, J)
            if not np.array_equal(chosen, np.asarray(outcome.result.trace.selected)):
                raise ValueError("a private run's selections are not argmin(scores + Laplace noise of its secret "
                                 "seed's ('bgm21', 'poly_sfw', 'noise', r, t) streams)")
        probabilities = np.stack([noisy_argmin_probabilities(row, scale) for row in scores])
        log_probabilities = np.log(probabilities)
        pair = float(np.max(np.abs(log_probabilities[1] - log_probabilities[0])))
        step0 = {"scale": scale, "scores": scores, "log_probabilities": log_probabilities, "J": J}
        claim = {"claimed_epsilon": float(report.epsilon), "delta": float(report.delta)}
    return Bgm21PublishedSetup(variant=variant, algorithm=algorithm, settings=s, report=report, claim=claim,
                               x_star=x_star, batch=b, step0=step0, pair=pair, trace=trace)


# ---------------------------------------------------------------------------------------------------
# One trial and its features


def publish(setup: Bgm21PublishedSetup, rng: np.random.Generator, which: int, *, proxy: bool = False) -> dict:
    """One trial: the publication (file name → text) of a default run on D (which = 0) or D′ (1). Draws as stated
    in the module docstring; a run that raises ValueError or ArithmeticError publishes only error.txt."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    which = check_int("which", which, minimum=0, maximum=1)
    public = setup.public_seed if setup.public_seed is not None else int(rng.integers(0, 2**62))
    secret = SecretSeed(_draw_secret(rng), "os_entropy") if proxy else None
    if setup.variant == "nsfw_public_seed_noise":
        secret = public + 1  # the planted bug: a secret seed computed from the public one
    try:
        outcome = run_pipeline(setup.builder(which, public), data_seed=setup.settings["data_seed"], noise_seed=secret)
        return bgm21_runner.bgm21_publication(outcome, command=COMMAND)
    except _ERRORS as exc:
        return {"error.txt": f"{type(exc).__name__}: {exc}\n"}


def read_releases(files: Mapping[str, str], algorithm: str, d: int) -> np.ndarray | None:
    """The releases from releases.csv (steps 0..k−1 in order): nsfw (k, d) from estimate_0..estimate_{d−1}, polysfw
    (k,) int from selected_vertex; None when absent or malformed."""
    text = files.get("releases.csv")
    if text is None:
        return None
    lines = [line.split(",") for line in text.splitlines() if line.strip()]
    try:
        header = lines[0]
        step = header.index("step")
        if len(lines) < 2 or [int(row[step]) for row in lines[1:]] != list(range(len(lines) - 1)):
            return None
        if algorithm == "polysfw":
            column = header.index("selected_vertex")
            return np.array([int(row[column]) for row in lines[1:]], dtype=np.int64)
        columns = [header.index(f"estimate_{j}") for j in range(d)]
        out = np.array([[float(row[c]) for c in columns] for row in lines[1:]])
    except (ValueError, IndexError):
        return None
    return out if np.all(np.isfinite(out)) else None


def _memo(setup: Bgm21PublishedSetup, key: tuple, compute: Callable[[], np.ndarray]) -> np.ndarray:
    cache = setup._cache
    value = cache.get(key)
    if value is None:
        if len(cache) > _MEMO_LIMIT:
            for old in list(cache)[: _MEMO_LIMIT // 2]:
                del cache[old]
        value = cache[key] = compute()
    return value


def _poly_regeneration(setup: Bgm21PublishedSetup, candidates, selected: np.ndarray, out: dict) -> None:
    """Feature b for polysfw (module docstring)."""
    step0, trace = setup.step0, setup.trace
    J, scale = step0["J"], step0["scale"]
    steps = len(trace.rounds)
    for source, seeds in candidates:
        best = [0, 0]
        for c in seeds:
            u = _memo(setup, ("u", int(c), 0), lambda c=c: step_noise("polysfw", c, 0, 0, 0, J))
            first = [int(np.argmin(step0["scores"][h] + scale * u)) == int(selected[0]) for h in (0, 1)]
            if not any(first):
                continue
            later = _memo(setup, ("later", int(c)), lambda c=c: _selections(trace, np.zeros((steps, J)), c, J)[1:])
            if not np.array_equal(later, selected[1:]):
                continue
            for h in (0, 1):
                best[h] = max(best[h], int(first[h]) + steps - 1)
        out[f"regenerated[{source}]"] = float(best[1] - best[0])


class Bgm21PublishedAudit(PublishedAudit):
    """The bgm21 published-output scenario: ``empirical_dp.published.PublishedAudit`` with this pipeline's claim,
    description, trials and features."""

    def _claim(self) -> dict:
        """The ledger's: μ-GDP at the worst batch's μ (nsfw) or (ε, δ) (polysfw)."""
        return dict(self.setup.claim)

    def _description(self) -> str:
        setup, s, trace = self.setup, self.setup.settings, self.setup.trace
        seed = "a fresh public seed per trial" if setup.public_seed is None else f"public seed {setup.public_seed}"
        if setup.algorithm == "nsfw":
            pair = f"σ_00={setup.step0['sigma']:.6g}, pair μ={setup.pair:.6g}"
            plan = f"ledger μ={setup.claim['claimed_mu']:.6g} (ε={float(setup.report.epsilon):.6g})"
        else:
            pair = f"s_0={setup.step0['scale']:.6g}, pair ε={setup.pair:.6g}"
            plan = f"ledger ε={setup.claim['claimed_epsilon']:.6g} ({setup.report.route})"
        return (f"bgm21 publication ({VARIANTS[setup.variant][0]}), d={s['d']}, n={s['n']} (R={max(trace.rounds) + 1}, "
                f"b={setup.batch}), canary first in B_0^0, {pair}, {seed}; {plan}, worst batch "
                f"{setup.report.worst_batch}; score: the training split's best feature")

    def publish_trial(self, rng, which, *, proxy=False):
        return publish(self.setup, rng, which, proxy=proxy)

    def features(self, publication_files):
        setup = self.setup
        files = dict(publication_files)
        out = file_features(files)                                                          # c
        releases = read_releases(files, setup.algorithm, setup.d)
        if releases is None or releases.shape[0] != len(setup.trace.rounds):
            return out
        seed, public = _public_seeds(setup, files)
        candidates = candidate_seeds(public, seed if seed is not None else 0, files)
        if seed is None:
            candidates = [(source, seeds if source != "seed offsets" else []) for source, seeds in candidates]
        step0 = setup.step0
        if setup.algorithm == "polysfw":
            log_p = step0["log_probabilities"]
            j = int(releases[0])
            out["release_score"] = float(log_p[1, j] - log_p[0, j])                          # a
            _poly_regeneration(setup, candidates, releases, out)                             # b
            return out
        sigma, means = step0["sigma"], step0["means"]
        delta = means[1] - means[0]
        residuals = releases[0][None, :] - means                                              # (2, d)
        out["release_score"] = float(delta @ (residuals[0] - delta / 2)) / sigma**2          # a
        regeneration_features(candidates, residuals,
                              lambda seeds: np.array([sigma * _memo(setup, ("z", int(c)), lambda c=c: step_noise(
                                  "nsfw", c, 0, 0, setup.d)[0]) for c in seeds]),
                              out)                                                          # b
        return out


def bgm21_published_scenario(variant: str = "nsfw", *, name=None, training_trials=BGM21_TRAINING_TRIALS,
                             training_seed=0, **settings) -> Bgm21PublishedAudit:
    """A ``Bgm21PublishedAudit`` of ``variant``; name defaults to "bgm21_ALG-published" for a default variant, else
    "bgm21_nsfw-published-VARIANT-REST"."""
    setup = bgm21_published_setup(variant, **settings)
    if name is None:
        name = f"bgm21_{variant}-published" if VARIANTS[variant][1] is None else (
            f"bgm21_{ALGORITHM_OF[variant]}-published-"
            + variant.removeprefix(ALGORITHM_OF[variant] + "_").replace("_", "-"))
    return Bgm21PublishedAudit(setup, name, training_trials=training_trials, training_seed=training_seed)


def _factory(variant: str, name: str) -> Callable[[], Bgm21PublishedAudit]:
    return lambda: bgm21_published_scenario(variant, name=name)



# ---------------------------------------------------------------------------------------------------
# Algorithms 5, 2 and Phased-SGD: the neighbouring pair whose publications the tests rebuild


#: The stream name of each of the other algorithms of ``dpref run bgm21`` (keys ("bgm21", NAME, "order" / "output" /
#: "noise", ...)): Algorithm 5 (noisy-fw; no public randomness: it reads every record at every step), Phased-SGD and
#: Algorithm 2 (prox-smd).
OTHER_STREAMS = {"noisy-fw": "noisy_fw", "phased-sgd": "phased_sgd", "prox-smd": "prox_psmd"}


def neighbour_slot(algorithm: str, n, seed) -> int:
    """The record D′ changes: the one read first in the public order of ``seed`` (Phased-SGD: the first record of
    phase 1; Algorithm 2: the first of S_1); Algorithm 5 has no order (every record enters every step): record 0."""
    if algorithm not in OTHER_STREAMS:
        raise ValueError(f"algorithm must be one of {tuple(OTHER_STREAMS)}, got {algorithm!r}")
    n = check_int("n", n, minimum=2)
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    if algorithm == "noisy-fw":
        return 0
    return int(public_order(seed, n, key=("bgm21", OTHER_STREAMS[algorithm], "order"))[0])


def _changed(records, slot: int, which: int):
    """D (which = 0): the records as drawn; D′ (1): the record at ``slot`` with its features negated (abs-cube and
    abs-sphere: x ↦ −x keeps ‖x‖_∞ = R_x and ‖x‖_2 = R_x; the loss L0|⟨x, w⟩ − y| then has another subgradient) or its
    label flipped (sigmoid: y ↦ −y negates the record's gradient at every w). Read-only copies."""
    if isinstance(records, tuple):
        X, y = (np.array(a, dtype=np.float64) for a in records)
        if which:
            X[slot] = -X[slot]
        X.setflags(write=False), y.setflags(write=False)
        return X, y
    data = np.array(records, dtype=np.float64)
    if which:
        data[slot, -1] = -data[slot, -1]
    data.setflags(write=False)
    return data


@dataclass(frozen=True)
class _Neighbour:
    """A problem whose ``sample`` returns its records with record ``slot`` changed to dataset ``which``'s version."""

    slot: int = 0
    which: int = 0

    def sample(self, n, rng):
        return _changed(super().sample(n, rng), self.slot, self.which)


@dataclass(frozen=True)
class _NeighbourCube(_Neighbour, AbsCubeProblem):
    pass


@dataclass(frozen=True)
class _NeighbourSphere(_Neighbour, AbsSphereProblem):
    pass


@dataclass(frozen=True)
class _NeighbourPool(_Neighbour, SigmoidPoolProblem):
    pass


def _with_fields(cls, built, **extra):
    return cls(**{f.name: getattr(built, f.name) for f in dataclasses.fields(built)}, **extra)


@dataclass(frozen=True)
class NeighbourBuilder:
    """Stands in for ``build_bgm21_problem`` inside one run of ``noisy-fw``, ``phased-sgd`` or ``prox-smd``: the real
    builder's problem (public population, W, constants, start, measure) whose ``sample`` draws the default run's n
    records from the data seed and, on D′ (which = 1), changes the record ``neighbour_slot`` names (``_changed``)."""

    algorithm: str
    n: int
    d: int
    seed: int
    which: int

    def __call__(self, problem, d, *, beta=None):
        expected = bgm21_runner.PROBLEMS_OF[self.algorithm][0]
        if problem != expected or d != self.d or (beta is not None and self.algorithm != "prox-smd"):
            raise PipelineMismatch(f"the run asked for problem {problem!r} in d = {d} (beta {beta}); the pair stands "
                                   f"in for {expected!r} in d = {self.d}")
        built = bgm21_runner.build_bgm21_problem(problem, d, beta=beta)
        extra = dict(slot=neighbour_slot(self.algorithm, self.n, self.seed), which=self.which)
        if self.algorithm == "noisy-fw":
            return _with_fields(_NeighbourCube, built, **extra)
        if self.algorithm == "phased-sgd":
            return _with_fields(_NeighbourSphere, built, **extra)
        return dataclasses.replace(built, base=_with_fields(_NeighbourPool, built.base, **extra))


def neighbour_builder(algorithm: str, which, seed) -> NeighbourBuilder:
    """The ``NeighbourBuilder`` of a default run of ``algorithm`` (n = ``DEFAULT_N``, d = 10) on D (which = 0) or D′
    (1) with public seed ``seed``; run it with ``run_pipeline(builder, memoise=False)`` (the memo keys on Algorithms 1
    and 6's trace fields)."""
    neighbour_slot(algorithm, bgm21_runner.DEFAULT_N.get(algorithm, 2), seed)
    which = check_int("which", which, minimum=0, maximum=1)
    return NeighbourBuilder(algorithm, bgm21_runner.DEFAULT_N[algorithm], bgm21_runner.BGM21_DEFAULTS["d"],
                            int(seed), which)


def secret_draw(algorithm: str, seed: int, step: tuple, size: int, scale: float) -> np.ndarray:
    """The secret noise of one release under ``seed``, as the run draws it: Algorithm 5's step t (``step`` = (t,))
    ``laplace(0, λ, J)`` (size J, scale λ); Phased-SGD's phase i (``(i,)``) σ_i·``standard_normal(d)``; Algorithm 2's
    solver step t of round r (``(r, t)``) σ·``standard_normal(d)``."""
    if algorithm not in OTHER_STREAMS:
        raise ValueError(f"algorithm must be one of {tuple(OTHER_STREAMS)}, got {algorithm!r}")
    generator = Streams(int(seed)).generator("bgm21", OTHER_STREAMS[algorithm], "noise", *(int(k) for k in step))
    if algorithm == "noisy-fw":
        return generator.laplace(0.0, float(scale), int(size))
    return float(scale) * generator.standard_normal(int(size))

#: Registered name → factory of its ``Bgm21PublishedAudit`` (the two default runs and the planted leak).
BGM21_PUBLISHED_BUILTINS: dict[str, Callable[[], Bgm21PublishedAudit]] = {
    "bgm21_nsfw-published": _factory("nsfw", "bgm21_nsfw-published"),
    "bgm21_polysfw-published": _factory("polysfw", "bgm21_polysfw-published"),
    "bgm21_nsfw-published-public-seed-noise": _factory("nsfw_public_seed_noise",
                                                       "bgm21_nsfw-published-public-seed-noise"),
}
