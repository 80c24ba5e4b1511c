"""Threshold audits with a disjoint selection split (docs/audits.md, Bounds).

Sources:
- Jagielski, Ullman, Oprea 2020 (NeurIPS) and Nasr et al. 2021 (S&P): draw the mechanism's output on D and D' many
  times, threshold an attack score, count false positives / false negatives and turn Clopper–Pearson bounds on the
  two error rates into an ε lower bound (``empirical_dp.bounds``).
- The Jagielski ``compute_results`` pitfall (tensorflow/privacy research/audit_2020): picking the best threshold on the counted data voids
  the confidence. Here the threshold is chosen on a SELECT split drawn from streams disjoint from the COUNT split
  (jax_privacy ``Split(frac)``); the search oracle (best threshold searched on the counted split itself) is
  reported for comparison only: not a bound, optimistic.
- Dong, Roth, Su 2022 Def. 2.6 / Cor. 2.13 for the Gaussian-DP μ lower bound and its ε(δ).

Randomness schedule (``Streams(seed)``): the select split draws ``scenario.sample(rng, n_select, which)`` from
key ("audit", name, "D" | "D'", "select"); count shard j draws ``scenario.sample(rng, n_j, which)`` from
("audit", name, "D" | "D'", "count", j). Different keys, so the splits are independent and disjoint by
construction; a shard's result is a ``Counts`` per threshold, and shards add (``merge_counts``), so the counting
can run serially, on a process pool or on Dask with the same answer.

Decision rule: "D'" iff score > threshold. FP = #{D outputs with score > t}, FN = #{D' outputs with score ≤ t}.

Threshold strategies (``audit(threshold_strategy=...)``):
- "split": one threshold, the select split's best ε_lb (``select_threshold``), counted once.
- "bonferroni_grid" (default): a grid of k = ``grid_size`` thresholds fixed from the SELECT split only, before any counted
  output is looked at: for expected counted event numbers c_i geometric in ``GRID_EVENTS`` (k/2 values), the select
  split's D-score quantile at level 1 − c_i/n_count (a false-positive tail) and its D'-score quantile at level
  c_i/n_count (a false-negative tail) (``grid_thresholds``). Every grid threshold is counted and its ε_lb computed at
  confidence 1 − (1 − c)/k (so each of its two Clopper–Pearson rates at 1 − (1 − c)/(2k)); the reported ε_lb is
  the maximum, valid at confidence c by the union bound over the k thresholds and two rates. Why it wins: the best
  fixed threshold sits at a roughly constant number of counted tail events (a few hundred to a few thousand for
  the ``gaussian`` built-in at 10⁶ trials), which a 1–5 % select split locates well enough, while the one-point
  search of "split" spends 20 % of the trials and then misses the optimum by its own selection noise. The GDP μ
  bound keeps its single select-split threshold (valid as before) under both strategies.
  Measured on ``gaussian`` at 10⁶ trials, seeds 0–4, confidence 0.95: grid (fraction 0.05, k = 16) ε_lb 0.745 mean /
  0.729 min, vs 0.754 for the best fixed threshold of the TRUE law counted on the same split (max gap 0.024);
  "split" 0.713 / 0.676. ``GRID_EVENTS`` suits ε ≈ 1 with small δ; for a large true ε (e.g. 2) or ≤ 2 000 trials
  "split" was up to ~0.07 better. ``executors.audit_sharded`` reproduces both strategies field for field.

Known-law oracle (``AuditResult.known_law_oracle_epsilon_lb``): what an oracle-chosen threshold would certify with
the same trial count, the yardstick for ε_lb. When the score's law is known (``has_known_law``: a μ-GDP scenario
with its likelihood-ratio score, LLR ~ N(∓μ²/2, μ²)), ``known_law_oracle_threshold`` fixes, from μ alone, the one
threshold maximising the expected ε_lb at the counted trial count; it is counted on the same counted split with
the other thresholds and its ε_lb taken at ``bound_confidence`` (one threshold: no Bonferroni). Not in the verdict.
On ``gaussian`` at 10⁶ trials, seeds 0–4, the default audit's ε_lb minus it was −0.010, −0.010, −0.001, +0.013,
+0.038 (GDP ε_lb 0.971–0.984).

ROC: ``AuditResult.roc`` holds (false-positive rates, true-positive rates) of the counted split at the
``candidate_thresholds`` of the pooled counted scores (≤ ``MAX_CANDIDATES`` points) — descriptive, for plots, NOT
a bound (those thresholds are read off the counted data). Each point is what one threshold's counts give,
(FP/N, (N′ − FN)/N′) (``roc_from_counts``), so a sharded audit that keeps only counts has the same curve at the
thresholds it counted (``executors.audit_sharded``).

Progress: ``audit(..., progress=True)`` shows a bar over the 2 × trials outputs drawn (``reference.progress``),
advanced after each split, shard and dataset is drawn; off by default (library code shows progress only when asked).

Claims and verdicts (``verdict_bounds``; docs/audits.md, Claims and verdicts). The verdict compares lower bounds
with the scenario's CLAIM (``Scenario.claim``) and with nothing else; what is known about the true law
(``Scenario.mu``, ``tight_epsilon``) feeds only the yardsticks (known-law oracle, tightness ratios). Two bounds:
- "clopper_pearson_epsilon" (``CLOPPER_PEARSON_EPSILON``): ε_lb from Clopper–Pearson rates through
  Kairouz–Oh–Viswanath, valid against any (ε, δ) claim, hence also against a μ-GDP claim through the (ε_μ(δ), δ)
  it implies; violated when ε_lb > claimed ε.
- "gdp_mu" (``GDP_MU``): the Gaussian-DP μ_lb (Dong–Roth–Su Def. 2.6), valid only against a μ-GDP claim: an
  (ε, δ)-DP mechanism need not be μ-GDP for the μ whose ε_μ(δ) is ε, so against an (ε, δ) claim μ_lb and its ε are
  reported but never decide. Violated when μ_lb > claimed μ.
Against an (ε, δ) claim ε_lb alone decides, at the whole confidence. Against a μ-GDP claim both decide, each at
1 − (1 − confidence)/2 (Bonferroni), so a "violation" is a false alarm with probability ≤ 1 − confidence either way.
``AuditResult.decided_by`` names the deciding bound — for a violation the bound that exceeded its claim (both: the
larger ε lower bound, ties to Clopper–Pearson), for "consistent" the verdict bound that came closest (the larger ε
lower bound) — with ``margin`` (its value minus its claim, in its own units: ε or μ) and
``false_alarm_probability`` (1 − its confidence after the Bonferroni split). One-run bounds
(``empirical_dp.one_run``) are not part of ``audit``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import norm

from reference.progress import progress_bar
from reference.rng import Streams
from reference.validation import check_array, check_int, check_probability, check_real

from .attacks import likelihood_ratio_score
from .bounds import epsilon_lower_bound, gdp_epsilon, gdp_mu_lower_bound
from .scenarios import Scenario

__all__ = [
    "Counts",
    "merge_counts",
    "count_errors",
    "candidate_thresholds",
    "select_threshold",
    "grid_thresholds",
    "THRESHOLD_STRATEGIES",
    "draw_scores",
    "count_shard",
    "split_sizes",
    "roc_from_counts",
    "roc_curve_at",
    "AuditResult",
    "check_threshold_strategy",
    "known_law_oracle_threshold",
    "has_known_law",
    "CLOPPER_PEARSON_EPSILON",
    "GDP_MU",
    "BOUND_NAMES",
    "verdict_bounds",
    "verdict_bound_confidence",
    "plan_thresholds",
    "finish_audit",
    "audit",
]

#: Most thresholds tried on a split (quantiles of the pooled scores, dense in both tails).
MAX_CANDIDATES = 257
#: Thresholds tried for the GDP μ bound (uniform quantile levels; see ``candidate_thresholds``).
GDP_CANDIDATES = 33
#: Fewest pooled select outputs beyond the most extreme candidate threshold.
TAIL_EVENTS = 50
#: Threshold strategies of ``audit`` (module docstring).
THRESHOLD_STRATEGIES = ("split", "bonferroni_grid")
#: Range (lowest, highest) of the expected counted tail-event numbers c_i the "bonferroni_grid" thresholds aim at.
GRID_EVENTS = (250.0, 4000.0)
#: Default grid size k of "bonferroni_grid" (k/2 thresholds per tail) and its default select fraction.
GRID_SIZE = 16
GRID_THRESHOLD_FRACTION = 0.05
#: Default select fraction of "split".
SPLIT_THRESHOLD_FRACTION = 0.2
#: Names of the bounds that may decide a verdict (module docstring, Claims and verdicts).
CLOPPER_PEARSON_EPSILON = "clopper_pearson_epsilon"
GDP_MU = "gdp_mu"
BOUND_NAMES = (CLOPPER_PEARSON_EPSILON, GDP_MU)


def verdict_bounds(scenario: Scenario) -> tuple[str, ...]:
    """The bounds valid against the scenario's claim, in the order ties are broken: ("clopper_pearson_epsilon",)
    for an (ε, δ) claim, ("clopper_pearson_epsilon", "gdp_mu") for a μ-GDP claim."""
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    return (CLOPPER_PEARSON_EPSILON, GDP_MU) if scenario.claim_type == "gdp" else (CLOPPER_PEARSON_EPSILON,)


def verdict_bound_confidence(scenario: Scenario, confidence) -> float:
    """Confidence of each verdict bound: the joint ``confidence`` split by Bonferroni over ``verdict_bounds``."""
    return 1 - (1 - confidence) / len(verdict_bounds(scenario))


@dataclass(frozen=True)
class Counts:
    """Error counts of one threshold test: fp false positives out of ``negatives`` D trials, fn false negatives out
    of ``positives`` D' trials. Counts from disjoint shards add."""

    fp: int
    negatives: int
    fn: int
    positives: int

    def __post_init__(self):
        negatives = check_int("negatives", self.negatives, minimum=0)
        positives = check_int("positives", self.positives, minimum=0)
        check_int("fp", self.fp, minimum=0, maximum=negatives)
        check_int("fn", self.fn, minimum=0, maximum=positives)

    def __add__(self, other: "Counts") -> "Counts":
        if not isinstance(other, Counts):
            return NotImplemented
        return Counts(self.fp + other.fp, self.negatives + other.negatives, self.fn + other.fn,
                      self.positives + other.positives)


def merge_counts(counts: Iterable[Counts]) -> Counts:
    """Sum of shard counts (an empty iterable gives all zeros)."""
    total = Counts(0, 0, 0, 0)
    for i, c in enumerate(counts):
        if not isinstance(c, Counts):
            raise TypeError(f"counts[{i}] must be a Counts, got {type(c).__name__}")
        total = total + c
    return total


def _check_scores(name: str, scores) -> np.ndarray:
    return check_array(name, scores, ndim=1)


def count_errors(scores_d, scores_d_prime, threshold) -> Counts:
    """Counts of the test "D' iff score > threshold" on scores of D outputs and D' outputs."""
    scores_d = _check_scores("scores_d", scores_d)
    scores_d_prime = _check_scores("scores_d_prime", scores_d_prime)
    threshold = check_real("threshold", threshold, allow_inf=True)
    return Counts(int(np.count_nonzero(scores_d > threshold)), scores_d.size,
                  int(np.count_nonzero(scores_d_prime <= threshold)), scores_d_prime.size)


def candidate_thresholds(scores_d, scores_d_prime, max_candidates=MAX_CANDIDATES, *, tails=True) -> np.ndarray:
    """Sorted distinct thresholds to try: quantiles of the pooled scores at levels uniform in [0, 1] and, with
    ``tails``, geometric towards both tails (where the (ε, δ) bound is decided).

    The GDP μ bound is decided in the bulk (for a Gaussian pair every threshold has the same μ and the central
    ones the smallest variance), so ``select_threshold`` searches it on the uniform levels only: tail candidates
    there only add noisy contenders whose selection-split luck does not carry over (winner's curse).
    """
    pooled = np.concatenate([_check_scores("scores_d", scores_d), _check_scores("scores_d_prime", scores_d_prime)])
    max_candidates = check_int("max_candidates", max_candidates, minimum=3)
    if pooled.size == 0:
        raise ValueError("scores_d and scores_d_prime must not both be empty")
    if not tails:
        levels = np.linspace(0, 1, max_candidates)
    else:
        third = max(1, max_candidates // 3)
        # no level below TAIL_EVENTS/n: a threshold beyond the last few select outputs is chosen for luck
        tail = np.geomspace(min(0.5, TAIL_EVENTS / pooled.size), 0.5, third)
        levels = np.unique(np.concatenate([np.linspace(0, 1, third), tail, 1 - tail]))
    return np.unique(np.quantile(pooled, levels, method="inverted_cdf"))


def _counts_at(scores_d, scores_d_prime, thresholds) -> list[Counts]:
    """Counts for every threshold at once (sorted scores + binary search)."""
    sorted_d, sorted_dp = np.sort(scores_d), np.sort(scores_d_prime)
    fp = sorted_d.size - np.searchsorted(sorted_d, thresholds, side="right")
    fn = np.searchsorted(sorted_dp, thresholds, side="right")
    return [Counts(int(a), sorted_d.size, int(b), sorted_dp.size) for a, b in zip(fp, fn)]


def _epsilon_lb(c: Counts, delta: float, confidence: float) -> float:
    return epsilon_lower_bound(c.fp, c.negatives, c.fn, c.positives, delta, confidence).epsilon_lb


def _gdp_mu_lb(c: Counts, confidence: float) -> float:
    return gdp_mu_lower_bound(c.fp, c.negatives, c.fn, c.positives, confidence).mu_lb


def select_threshold(scores_d, scores_d_prime, objective: str, *, delta, confidence) -> tuple[float, float]:
    """The candidate threshold maximising ``objective`` ("epsilon": ε_lb, "gdp_mu": μ_lb) on the given scores, and
    that maximum. The first maximiser (smallest threshold) wins ties. Call it on the SELECT split only; on the
    counted split the maximum is the oracle value, not a bound."""
    if objective not in ("epsilon", "gdp_mu"):
        raise ValueError(f"objective must be 'epsilon' or 'gdp_mu', got {objective!r}")
    scores_d = _check_scores("scores_d", scores_d)
    scores_d_prime = _check_scores("scores_d_prime", scores_d_prime)
    if scores_d.size == 0 or scores_d_prime.size == 0:
        raise ValueError("scores_d and scores_d_prime must be non-empty")
    if objective == "epsilon":
        thresholds = candidate_thresholds(scores_d, scores_d_prime)
    else:
        thresholds = candidate_thresholds(scores_d, scores_d_prime, GDP_CANDIDATES, tails=False)
    counts = _counts_at(scores_d, scores_d_prime, thresholds)
    if objective == "epsilon":
        values = [_epsilon_lb(c, delta, confidence) for c in counts]
    else:
        values = [_gdp_mu_lb(c, confidence) for c in counts]
    best = int(np.argmax(values))
    return float(thresholds[best]), float(values[best])


def grid_thresholds(scores_d, scores_d_prime, count_trials, grid_size=GRID_SIZE, events=GRID_EVENTS) -> np.ndarray:
    """The "bonferroni_grid" thresholds from SELECT-split scores (module docstring): for c_i =
    geomspace(events[0], events[1], grid_size // 2), the quantile of ``scores_d`` at level 1 − c_i/count_trials
    (expected ≈ c_i counted false positives) and of ``scores_d_prime`` at level c_i/count_trials (≈ c_i counted
    false negatives); levels are clipped to [1/n, 1/2] of the select split (n its size per dataset). Sorted, with
    duplicates kept out, so at most ``grid_size`` thresholds. Depends on the select split only."""
    scores_d = _check_scores("scores_d", scores_d)
    scores_d_prime = _check_scores("scores_d_prime", scores_d_prime)
    if scores_d.size == 0 or scores_d_prime.size == 0:
        raise ValueError("scores_d and scores_d_prime must be non-empty")
    count_trials = check_int("count_trials", count_trials, minimum=1)
    grid_size = check_int("grid_size", grid_size, minimum=2)
    if grid_size % 2:
        raise ValueError(f"grid_size must be even (half the thresholds per tail), got {grid_size}")
    low = check_real("events[0]", events[0], positive=True)
    high = check_real("events[1]", events[1], positive=True)
    if high < low:
        raise ValueError(f"events must be (low, high) with low <= high, got {events}")
    levels = np.geomspace(low, high, grid_size // 2) / count_trials
    upper = np.quantile(scores_d, 1 - np.clip(levels, 1 / scores_d.size, 0.5), method="inverted_cdf")
    lower = np.quantile(scores_d_prime, np.clip(levels, 1 / scores_d_prime.size, 0.5), method="inverted_cdf")
    return np.unique(np.concatenate([upper, lower]))


def draw_scores(scenario: Scenario, attack: Callable, trials, *, seed, split: str, shard=None,
                advance: Callable[[int], object] | None = None):
    """Scores of ``trials`` outputs on D and on D' from the keys ("audit", name, "D" | "D'", split[, shard]).
    ``advance(trials)`` is called after each dataset's outputs are drawn and scored (progress)."""
    trials = check_int("trials", trials, minimum=0)
    if split not in ("select", "count"):
        raise ValueError(f"split must be 'select' or 'count', got {split!r}")
    streams = Streams(seed)
    suffix = () if shard is None else (check_int("shard", shard, minimum=0),)
    out = []
    for which, label in ((0, "D"), (1, "D'")):
        rng = streams.generator("audit", scenario.name, label, split, *suffix)
        scores = np.asarray(attack(scenario.sample(rng, trials, which)), dtype=np.float64)
        if scores.shape != (trials,):
            raise ValueError(f"attack must map (trials, k) outputs to (trials,) scores, got shape {scores.shape}")
        if not np.all(np.isfinite(scores)):
            raise ValueError("attack returned non-finite scores")
        out.append(scores)
        if advance is not None:
            advance(trials)
    return out[0], out[1]


def count_shard(scenario: Scenario, attack: Callable, thresholds, trials, *, seed, shard) -> tuple[Counts, ...]:
    """The unit of work: draw shard ``shard`` of the COUNT split (``trials`` per dataset) and return one ``Counts``
    per threshold. Pure function of its arguments, so shards run anywhere and ``merge_counts`` adds them."""
    thresholds = check_array("thresholds", thresholds, ndim=1)
    scores_d, scores_d_prime = draw_scores(scenario, attack, trials, seed=seed, split="count", shard=shard)
    return tuple(count_errors(scores_d, scores_d_prime, t) for t in thresholds)


def split_sizes(trials, threshold_fraction, shards=1) -> tuple[int, list[int]]:
    """(select trials, count trials per shard): select = round(fraction·trials), clamped so both splits are
    non-empty; the count split is divided as evenly as possible over the shards."""
    trials = check_int("trials", trials, minimum=2)
    threshold_fraction = check_probability("threshold_fraction", threshold_fraction)
    shards = check_int("shards", shards, minimum=1)
    select = min(trials - 1, max(1, round(threshold_fraction * trials)))
    count = trials - select
    if shards > count:
        raise ValueError(f"shards must be <= the count split size {count}, got {shards}")
    base, extra = divmod(count, shards)
    return select, [base + (1 if j < extra else 0) for j in range(shards)]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of ``audit``.

    scenario: name; trials: outputs drawn per dataset (select + count); select_trials / count_trials: split sizes;
    epsilon_lb: certified ε lower bound (Kairouz–Oh–Viswanath) from ``threshold`` and ``counts``; gdp_mu_lb /
    gdp_epsilon_lb: certified μ lower bound and its ε at δ, from ``gdp_threshold`` and ``gdp_counts`` (bounds only
    against a μ-GDP claim); claim_type: "epsilon_delta" or "gdp"; claimed_epsilon / claimed_mu / delta: the claim
    (claimed_mu None for an (ε, δ) claim; for a μ-GDP claim claimed_epsilon is the ε it implies at δ);
    tight_epsilon: the scenario's true ε (yardstick); verdict: "violation" or "consistent"; verdict_bounds: the
    bounds valid against the claim (``verdict_bounds``); decided_by: the one that decided (module docstring);
    margin: its value minus its claim (ε_lb − claimed ε, or μ_lb − claimed μ; > 0 iff it is violated);
    false_alarm_probability: 1 − its confidence, (1 − confidence)/len(verdict_bounds);
    tightness: epsilon_lb / tight_epsilon (None if unknown or 0); gdp_tightness: likewise for gdp_epsilon_lb;
    oracle_epsilon_lb: the best ε_lb over thresholds searched on the counted split itself (report only — NOT a
    bound, optimistic: inflated by the search); known_law_oracle_epsilon_lb: what an oracle-chosen threshold would
    certify with the same trial count — the ε_lb at ``bound_confidence`` of ``known_law_oracle_threshold`` (the one
    threshold maximising the EXPECTED ε_lb under the scenario's known law, ``known_law_oracle_threshold()``),
    counted on the same counted split; None unless the law is known (``has_known_law``: μ-GDP scenario, default
    likelihood-ratio attack). It is the yardstick for ε_lb, not part of the verdict; bound_confidence: the confidence of each reported bound (ε_lb and the GDP bound).
    threshold_strategy: "split" or "bonferroni_grid"; grid_size: thresholds counted for ε_lb (1 for "split"; for
    the grid, ε_lb is the max over them, each at 1 − (1 − bound_confidence)/grid_size, and ``threshold`` /
    ``counts`` are the maximiser's); roc: (false-positive rates, true-positive rates) on the counted split at the
    ``candidate_thresholds`` of the pooled counted scores — descriptive, for plots, NOT a bound; None when not
    computed (e.g. ``executors.audit_sharded``). Excluded from equality, hashing and repr.
    """

    scenario: str
    trials: int
    select_trials: int
    count_trials: int
    seed: int
    shards: int
    confidence: float
    bound_confidence: float
    delta: float
    epsilon_lb: float
    gdp_mu_lb: float
    gdp_epsilon_lb: float
    claimed_epsilon: float
    tight_epsilon: float | None
    verdict: str
    claim_type: str
    claimed_mu: float | None
    verdict_bounds: tuple[str, ...]
    decided_by: str
    margin: float
    false_alarm_probability: float
    tightness: float | None
    gdp_tightness: float | None
    threshold: float
    counts: Counts
    gdp_threshold: float
    gdp_counts: Counts
    oracle_epsilon_lb: float
    threshold_strategy: str = "split"
    grid_size: int = 1
    known_law_oracle_epsilon_lb: float | None = None
    known_law_oracle_threshold: float | None = None
    roc: tuple[np.ndarray, np.ndarray] | None = field(default=None, compare=False, repr=False)


def roc_from_counts(counts: Sequence[Counts]) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, TPR) of the threshold tests whose ``Counts`` are given, in their order: FPR = fp/negatives,
    TPR = (positives − fn)/positives, one point per test (descriptive, not a bound). Needs no scores, so sharded
    counts give the same points as the scores they came from."""
    counts = list(counts)
    for i, c in enumerate(counts):
        if not isinstance(c, Counts):
            raise TypeError(f"counts[{i}] must be a Counts, got {type(c).__name__}")
        if c.negatives == 0 or c.positives == 0:
            raise ValueError(f"counts[{i}] has no trials on D or on D' (negatives {c.negatives}, positives "
                             f"{c.positives}): no rate to plot")
    fpr = np.array([c.fp / c.negatives for c in counts], dtype=np.float64)
    tpr = np.array([(c.positives - c.fn) / c.positives for c in counts], dtype=np.float64)
    return fpr, tpr


def roc_curve_at(scores_d, scores_d_prime, thresholds) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, TPR) of "D' iff score > t" for each t in ``thresholds`` (``roc_from_counts`` of their counts)."""
    scores_d = _check_scores("scores_d", scores_d)
    scores_d_prime = _check_scores("scores_d_prime", scores_d_prime)
    thresholds = check_array("thresholds", thresholds, ndim=1)
    return roc_from_counts(_counts_at(scores_d, scores_d_prime, thresholds))


def _ratio(value: float, reference: float | None) -> float | None:
    return None if reference is None or reference == 0 else value / reference


def known_law_oracle_threshold(mu, count_trials, delta, confidence) -> float:
    """The single threshold an oracle that knows the output law would fix before counting: for a μ-GDP pair audited
    with its likelihood-ratio score (LLR ~ N(−μ²/2, μ²) under D, N(+μ²/2, μ²) under D'), the LLR threshold
    t = zμ − μ²/2 maximising the EXPECTED Clopper–Pearson ε_lb at ``count_trials`` per dataset, i.e. the bound at
    the rounded expected counts (round(Φ(−z)·n) false positives, round(Φ(z − μ)·n) false negatives) at
    ``confidence`` (no Bonferroni over thresholds: the threshold does not depend on any data). z runs over
    μ/2 + [0, 8] in steps of 0.02 (the pair is symmetric, so the FP tail suffices); the first maximiser wins ties.
    Counting this threshold on the counted split gives ``AuditResult.known_law_oracle_epsilon_lb``."""
    mu = check_real("mu", mu, positive=True)
    count_trials = check_int("count_trials", count_trials, minimum=1)
    delta = check_probability("delta", delta, open_left=False)
    confidence = check_probability("confidence", confidence)
    z = mu / 2 + np.linspace(0.0, 8.0, 401)
    fp = np.rint(norm.sf(z) * count_trials).astype(np.int64)
    fn = np.rint(norm.cdf(z - mu) * count_trials).astype(np.int64)
    values = [epsilon_lower_bound(int(a), count_trials, int(b), count_trials, delta, confidence).epsilon_lb
              for a, b in zip(fp, fn)]
    best = int(np.argmax(values))
    return float(z[best] * mu - mu**2 / 2)


def check_threshold_strategy(threshold_strategy, grid_size, threshold_fraction) -> tuple[bool, int, float]:
    """(use_grid, grid_size, threshold_fraction) after validation and defaults (shared with ``executors``)."""
    if threshold_strategy not in THRESHOLD_STRATEGIES:
        raise ValueError(f"threshold_strategy must be one of {THRESHOLD_STRATEGIES}, got {threshold_strategy!r}")
    use_grid = threshold_strategy == "bonferroni_grid"
    grid_size = check_int("grid_size", grid_size, minimum=2)
    if grid_size % 2:
        raise ValueError(f"grid_size must be even (half the thresholds per tail), got {grid_size}")
    if threshold_fraction is None:
        threshold_fraction = GRID_THRESHOLD_FRACTION if use_grid else SPLIT_THRESHOLD_FRACTION
    return use_grid, grid_size, threshold_fraction


@dataclass(frozen=True)
class _Plan:
    """Everything fixed before the counted split is drawn (``plan_thresholds``)."""

    thresholds: np.ndarray  # the ε_lb thresholds (1 for "split", the grid otherwise)
    threshold_confidence: float  # confidence of each of their ε_lb
    gdp_threshold: float
    known_law_threshold: float | None

    def counted(self) -> np.ndarray:
        """All thresholds to count: ε_lb thresholds, the GDP threshold, then the known-law oracle's (if any)."""
        extra = [] if self.known_law_threshold is None else [self.known_law_threshold]
        return np.asarray(list(self.thresholds) + [self.gdp_threshold] + extra, dtype=np.float64)


def plan_thresholds(scenario: Scenario, select_d, select_dp, count_trials, *, use_grid, grid_size, delta,
                    bound_confidence, known_law) -> _Plan:
    """The thresholds of an audit from the SELECT split (and, with ``known_law``, the scenario's μ only)."""
    if use_grid:
        thresholds = grid_thresholds(select_d, select_dp, count_trials, grid_size)
        # Bonferroni over the grid: each threshold's ε_lb (itself Bonferroni over its two rates) at 1 − (1 − c)/k
        threshold_confidence = 1 - (1 - bound_confidence) / grid_size
    else:
        threshold, _ = select_threshold(select_d, select_dp, "epsilon", delta=delta, confidence=bound_confidence)
        thresholds = np.array([threshold])
        threshold_confidence = bound_confidence
    gdp_threshold, _ = select_threshold(select_d, select_dp, "gdp_mu", delta=delta, confidence=bound_confidence)
    oracle = (known_law_oracle_threshold(scenario.mu, count_trials, delta, bound_confidence) if known_law
              else None)
    return _Plan(thresholds, threshold_confidence, gdp_threshold, oracle)


def has_known_law(scenario: Scenario, attack) -> bool:
    """True when the audit score's law is known in closed form: a μ-GDP scenario (μ > 0) with the default
    (likelihood-ratio) attack, whose log-likelihood ratio is N(∓μ²/2, μ²) under D / D'."""
    return attack is None and scenario.mu is not None and scenario.mu > 0 and scenario.log_likelihood_ratio is not None


def finish_audit(scenario: Scenario, plan: _Plan, merged: list[Counts], *, trials, select_trials, count_trials,
                 seed, shards, confidence, bound_confidence, oracle_epsilon_lb, threshold_strategy, grid_size,
                 roc=None) -> AuditResult:
    """The ``AuditResult`` from the merged counts of ``plan.counted()`` (shared by ``audit`` and ``executors``)."""
    delta = scenario.delta
    k = plan.thresholds.size
    grid_counts, gdp_counts = merged[:k], merged[k]
    grid_bounds = [_epsilon_lb(c, delta, plan.threshold_confidence) for c in grid_counts]
    best = int(np.argmax(grid_bounds))  # first maximiser (smallest threshold) wins ties
    threshold, counts, epsilon_lb = float(plan.thresholds[best]), grid_counts[best], grid_bounds[best]
    gdp_mu_lb = _gdp_mu_lb(gdp_counts, bound_confidence)
    gdp_epsilon_lb = gdp_epsilon(gdp_mu_lb, delta) if delta > 0 else 0.0
    known = None if plan.known_law_threshold is None else _epsilon_lb(merged[k + 1], delta, bound_confidence)
    claim = scenario.claim  # the verdict reads the claim only; scenario.mu / tight_epsilon are yardsticks
    bounds = verdict_bounds(scenario)
    value = {CLOPPER_PEARSON_EPSILON: (epsilon_lb, claim.epsilon), GDP_MU: (gdp_mu_lb, claim.mu)}
    epsilon_value = {CLOPPER_PEARSON_EPSILON: epsilon_lb, GDP_MU: gdp_epsilon_lb}
    exceeded = [b for b in bounds if value[b][0] > value[b][1]]
    # the exceeding bound (or, if none, the closest verdict bound) with the larger ε lower bound; ties: first in order
    decided = max(exceeded or bounds, key=lambda b: epsilon_value[b])
    return AuditResult(
        scenario=scenario.name, trials=trials, select_trials=select_trials, count_trials=count_trials,
        seed=seed, shards=shards, confidence=confidence, bound_confidence=bound_confidence, delta=delta,
        epsilon_lb=epsilon_lb, gdp_mu_lb=gdp_mu_lb, gdp_epsilon_lb=gdp_epsilon_lb, claimed_epsilon=claim.epsilon,
        tight_epsilon=scenario.tight_epsilon, verdict="violation" if exceeded else "consistent",
        claim_type=claim.kind, claimed_mu=claim.mu, verdict_bounds=bounds, decided_by=decided,
        margin=float(value[decided][0] - value[decided][1]), false_alarm_probability=(1 - confidence) / len(bounds),
        tightness=_ratio(epsilon_lb, scenario.tight_epsilon), gdp_tightness=_ratio(gdp_epsilon_lb, scenario.tight_epsilon),
        threshold=threshold, counts=counts, gdp_threshold=float(plan.gdp_threshold), gdp_counts=gdp_counts,
        oracle_epsilon_lb=float(oracle_epsilon_lb), threshold_strategy=threshold_strategy,
        grid_size=grid_size if threshold_strategy == "bonferroni_grid" else 1,
        known_law_oracle_epsilon_lb=known, known_law_oracle_threshold=plan.known_law_threshold, roc=roc,
    )


def audit(scenario: Scenario, trials, *, seed, attack=None, confidence=0.95, threshold_fraction=None,
          shards=1, threshold_strategy="bonferroni_grid", grid_size=GRID_SIZE, progress=False) -> AuditResult:
    """Audit ``scenario`` with ``trials`` outputs per dataset (module docstring for splits, keys, strategies and
    confidence).

    attack: score function outputs (trials, k) → (trials,) (default: the scenario's likelihood ratio);
    confidence: joint confidence of the verdict, in (0.5, 1); threshold_fraction: share of the trials in the
    SELECT split (default ``SPLIT_THRESHOLD_FRACTION`` = 0.2 for "split", ``GRID_THRESHOLD_FRACTION`` = 0.05 for
    "bonferroni_grid"); shards: number of COUNT shards (each its own stream key; results merged);
    threshold_strategy: "bonferroni_grid" (the default: ``grid_size`` select-split thresholds, Bonferroni over
    them) or "split" (one select-split threshold; see the module docstring); ``executors.audit_sharded``
    reproduces both field for field; grid_size: k, even, ≥ 2 (used by the grid only); progress: show a bar over
    the 2 × trials outputs drawn (stderr; module docstring).
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    trials = check_int("trials", trials, minimum=2)
    seed = check_int("seed", seed, minimum=0)
    confidence = check_real("confidence", confidence)
    if not 0.5 < confidence < 1:
        raise ValueError(f"confidence must lie in (0.5, 1), got {confidence}")
    use_grid, grid_size, threshold_fraction = check_threshold_strategy(threshold_strategy, grid_size, threshold_fraction)
    select_trials, shard_sizes = split_sizes(trials, threshold_fraction, shards)
    known_law = has_known_law(scenario, attack)
    if attack is None:
        attack = likelihood_ratio_score(scenario)
    elif not callable(attack):
        raise TypeError(f"attack must be callable, got {type(attack).__name__}")
    delta = scenario.delta
    bound_confidence = verdict_bound_confidence(scenario, confidence)

    with progress_bar(2 * trials, f"audit {scenario.name}", "trial", enabled=progress) as bar:
        # SELECT split: thresholds fixed before the counted outputs are drawn.
        select_d, select_dp = draw_scores(scenario, attack, select_trials, seed=seed, split="select",
                                          advance=bar.update)
        plan = plan_thresholds(scenario, select_d, select_dp, sum(shard_sizes), use_grid=use_grid,
                               grid_size=grid_size, delta=delta, bound_confidence=bound_confidence,
                               known_law=known_law)
        counted = plan.counted()

        # COUNT split, shard by shard (the scores are kept only for the oracle comparison and the ROC).
        shard_counts, count_d, count_dp = [], [], []
        for j, size in enumerate(shard_sizes):
            scores_d, scores_dp = draw_scores(scenario, attack, size, seed=seed, split="count", shard=j,
                                              advance=bar.update)
            shard_counts.append(tuple(count_errors(scores_d, scores_dp, t) for t in counted))
            count_d.append(scores_d)
            count_dp.append(scores_dp)
    merged = [merge_counts(c[i] for c in shard_counts) for i in range(counted.size)]
    pooled_d, pooled_dp = np.concatenate(count_d), np.concatenate(count_dp)
    _, oracle_epsilon_lb = select_threshold(pooled_d, pooled_dp, "epsilon", delta=delta, confidence=bound_confidence)
    roc = roc_curve_at(pooled_d, pooled_dp, candidate_thresholds(pooled_d, pooled_dp))
    return finish_audit(scenario, plan, merged, trials=trials, select_trials=select_trials,
                        count_trials=sum(shard_sizes), seed=seed, shards=len(shard_sizes), confidence=confidence,
                        bound_confidence=bound_confidence, oracle_epsilon_lb=oracle_epsilon_lb,
                        threshold_strategy=threshold_strategy, grid_size=grid_size, roc=roc)
