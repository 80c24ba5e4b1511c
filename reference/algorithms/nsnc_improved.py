"""nsnc_improved Algorithms 2–5 (Kornowski, Liu, Talwar, "Improved Sample Complexity for Private Nonsmooth
Nonconvex Optimization", ICML 2025): O2NC with clipped OGD and the single-pass / multi-pass private oracles.

Written to be read beside the pseudocode:

* Algorithm 2 (O2NC with clipped online gradient descent, block averages, a uniformly random block output) is
  ``reference.o2nc.o2nc`` with the learner ``reference.o2nc.ClippedOGD`` (not restarted between blocks): K blocks
  of M steps, T = K·M oracle calls. Step t = (k − 1)·M + j of block k; z_t = x_{t−1} + s_t·Δ_t, s_t ~ U[0, 1].
* ``SinglePassOracle``: Algorithm 3 (zeroth order, tree-aggregated SPIDER-type estimator) and Algorithm 5 (App. C,
  first order). Periods of Σ steps, τ(t) = ((t − 1) mod Σ) + 1. At τ = 1 a fresh tree and
      g = (1/B1) Σ_{ξ ∈ S} e(z_t; ξ),                         S = the next B1 unused records
  otherwise
      g = g + (1/B2) Σ_{ξ ∈ S} (e(z_t; ξ) − e'(z_{t−1}; ξ)),   S = the next B2 unused records
  and the release g̃_t = g + TREE(τ) (Algorithm 1, ``reference.mechanisms.TreeMechanism`` with Σ leaves, reset at
  τ = 1). e is the two-point estimate (1/m) Σ_j (d/(2α))(f(z + αy_j; ξ) − f(z − αy_j; ξ)) y_j with y_j ~ Unif(𝕊^{d−1})
  (Eq. (4); the difference branch of Algorithms 3/4 prints y ~ Unif(𝔹_α), erratum nsnc_improved.E7), or for
  Algorithm 5 the first-order estimate (1/m) Σ_j ∇f(z + y_j; ξ) with y_j ~ Unif(𝔹_α) (one perturbation per record
  at a reset, m otherwise; Eq. (17)'s sphere version is biased, erratum nsnc_improved.E8). e and e' use independent
  direction sets (the paper) or the same ones (``oracle="single_pass_crn"``: common random numbers, not in the
  paper; same expectation, a deterministic per-record bound dL‖z_t − z_{t−1}‖/α).
* ``MultiPassOracle``: Algorithm 4 (ERM, every call reads all n records) and its first-order variant (Algorithm 4
  with the estimator of Algorithm 5, m perturbations per record in both branches; the paper only says "replace
  Eq. (4) by Eq. (17)"):
      τ = 1: g̃_t = (1/n) Σ_i e(z_t; ξ_i) + N(0, σ1² I_d)
      else:  g̃_t = g̃_{t−1} + (1/n) Σ_i (e(z_t; ξ_i) − e'(z_{t−1}; ξ_i)) + N(0, σ2² I_d)   (builds on the RELEASED g̃)

Data (single pass). Records are read in index order, each in exactly one step: U(T) = ⌈T/Σ⌉·B1 + (T − ⌈T/Σ⌉)·B2
records (``single_pass_schedule``); a data set smaller than U(T) is refused with the count needed, and an oracle
refuses a query out of order. The paper says "sample a minibatch among unused samples" without a rule; any order
chosen without looking at the data is the same mechanism, and no amplification is claimed.

Privacy (``reference.algorithms.nsnc_improved_privacy``). A record enters one leaf of one period's tree (single
pass) or every step (multi pass). The increment's sensitivity is small only with high probability over the public
directions (the paper's key idea, Lemma 3.3): the plan uses s = min(worst case, high-probability bound) and adds
the failure probability δ_fail to δ where the high-probability branch is the smaller one. ``clip_hardening=True``
(not in the paper) clips each record's reset estimate to norm L + r and each record's difference to H‖z_t − z_{t−1}‖
+ 2r (r: the concentration radius at the plan's γ; CRN: H‖Δz‖ + r_crn); the clips are inactive on the good event
and make the high-probability sensitivities hold on every input (δ_fail = 0). ``sensitivity_mode="worst_case"``
accounts with the deterministic sensitivities only. The ledger says which guarantee holds.

Lipschitz. The sensitivities need every f(·; ξ) L-Lipschitz. Finite differences that are NaN become 0 and ±∞ become
±2Lα before they enter an estimate, and a first-order gradient with a non-finite entry becomes 0 (counted in
``diagnostics.nonfinite_counts``); ``enforce_lipschitz=True`` also clips every finite difference to ±2Lα and every
first-order gradient to norm L (a no-op for a truly L-Lipschitz f; counted in ``diagnostics.clipped_counts``).

Randomness schedule (docs/design.md, randomness contract). ``seed`` is PUBLIC; ``noise_seed`` SECRET (fresh
operating-system entropy when None; ``reference.secrets``). Keys under the paper key "nsnc_improved":

* ("nsnc_improved", "direction", t): the directions of step t, ONE call (``step_directions``), under the PUBLIC seed —
  except when the run's guarantee is the high-probability one (below), when they are drawn under the SECRET seed:
  zeroth order ``sample_sphere`` of shape (b, m, d) at a reset and (b, 2, m, d) at an increment ([:, 0] at z_t,
  [:, 1] at z_{t−1}; CRN: (b, m, d) used at both); first order ``sample_ball`` of radius α, shape (b, 1, d) at a
  single-pass reset, (b, m, d) at a multi-pass reset, (b, 2, m, d) at an increment. b is the step's batch
  (B1, B2 or n). Keyed by the step only, so two runs on neighbouring data sets with the same seeds share them slot
  by slot.

  Why the high-probability guarantee needs secret directions. Lemma 3.3's event ("every estimate lies within r of
  its mean") has probability ≥ 1 − 2γ (resp. 4γ) over the directions FOR A DATA SET FIXED BEFORE THEY ARE DRAWN.
  A public seed may be known before the data are collected (the command line's default is 0): an adversary could
  then choose the differing record knowing the directions it will meet, and δ_fail would bound nothing. The
  worst-case and clip-hardened guarantees hold for every realisation of the directions, so for them the directions
  stay public and reproducible from the public seed; ``RunSettings.direction_seed`` records which seed drew them.
* ("nsnc_improved", "segment", k) and ("nsnc_improved", "output"), public: s_t of block k and the output block
  (``reference.o2nc``).
* ("nsnc_improved", "noise"), secret: one generator; every step draws ``standard_normal(d)`` once (the tree's ξ
  of that leaf, single pass; χ_t, multi pass).

What a run returns: ``DPResult.releases`` (the g̃ sequence, covered by the plan) and its post-processing with public
randomness (z_t, x_t, Δ_t, the block averages, the output) are the private output; ``DPResult.ledger`` is public;
``DPResult.diagnostics`` (noiseless sums, the noise, counts) is computed on the private data or from the secret
seed and is never to be published.

Arithmetic follows x0: an mpmath object array runs everything in mpmath (the float64 draws are converted exactly);
float64 otherwise.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np

from ..mechanisms import TreeMechanism
from ..o2nc import ClippedOGD, o2nc
from ..precision import is_mp, norm, to_float, to_mp
from ..rng import SEED_BOUND, Streams, sample_ball, sample_sphere
from ..secrets import SecretSeed, secret_seed
from ..smoothing import smoothness_constant
from ..validation import check_array, check_int, check_real
from ._records import is_finite as _is_finite
from ._records import read_only as _read_only
from ._records import real_value
from ._records import zeros as _zeros
from . import nsnc_improved_privacy as privacy

__all__ = [
    "KEY",
    "ORACLES",
    "SINGLE_PASS_ORACLES",
    "MULTI_PASS_ORACLES",
    "FIRST_ORDER_ORACLES",
    "NOISES",
    "SENSITIVITY_MODES",
    "Schedule",
    "single_pass_schedule",
    "period_position",
    "step_directions",
    "SinglePassOracle",
    "MultiPassOracle",
    "RunSettings",
    "Ledger",
    "NonPrivateDiagnostics",
    "DPResult",
    "PreparedRun",
    "prepare_run",
    "settings_arguments",
    "nsnc_improved",
]

KEY = "nsnc_improved"
SINGLE_PASS_ORACLES = ("single_pass", "single_pass_crn", "first_order")
MULTI_PASS_ORACLES = ("multi_pass", "multi_pass_first_order")
ORACLES = SINGLE_PASS_ORACLES + MULTI_PASS_ORACLES
FIRST_ORDER_ORACLES = ("first_order", "multi_pass_first_order")
NOISES = ("gaussian", "none")
SENSITIVITY_MODES = ("auto", "worst_case")
#: Relative slack on ‖z_t − z_{t−1}‖ ≤ 2D for the rounding of z = x + sΔ (the oracles refuse more).
STEP_TOLERANCE = 1e-9


# ---------------------------------------------------------------------------------------------------
# Periods and the single-pass data schedule (Algorithm 3 "next B unused samples")


def period_position(t, tree_size) -> int:
    """τ(t) = ((t − 1) mod Σ) + 1 ∈ [Σ], the leaf of step t in its period's tree; τ = 1 is a reset step.

    The paper writes "t mod Σ = 1" and TREE(t mod Σ): the same for Σ ≥ 2 except at the last step of a period
    (t mod Σ = 0), and undefined for Σ = 1; τ fixes both.
    """
    t = check_int("t", t, minimum=1)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    return (t - 1) % tree_size + 1


@dataclasses.dataclass(frozen=True)
class Schedule:
    """Which records each step of a single-pass run reads (index order, each record at most once).

    n_records: n. T: steps. tree_size: Σ. B1, B2: batches of reset and increment steps. records_used: U(T) =
    ⌈T/Σ⌉·B1 + (T − ⌈T/Σ⌉)·B2 ≤ n; the rest are never read. ``block(t)`` is the slice of step t (1-based).
    """

    n_records: int
    T: int
    tree_size: int
    B1: int
    B2: int
    records_used: int

    def batch_size(self, t) -> int:
        return self.B1 if period_position(t, self.tree_size) == 1 else self.B2

    def block(self, t) -> slice:
        """The records of step t: contiguous, disjoint, increasing in t."""
        t = check_int("t", t, minimum=1, maximum=self.T)
        resets_before = (t - 2) // self.tree_size + 1 if t > 1 else 0  # resets among steps 1..t−1
        start = resets_before * self.B1 + (t - 1 - resets_before) * self.B2
        return slice(start, start + self.batch_size(t))


def _records_needed(T, tree_size, B1, B2) -> int:
    resets = -(-T // tree_size)
    return resets * B1 + (T - resets) * B2


def single_pass_schedule(n_records, T, tree_size, B1, B2) -> Schedule:
    """The single-pass schedule of T steps over n records; refuses n < U(T) with the count needed."""
    n_records = check_int("n_records", n_records, minimum=1)
    T = check_int("T", T, minimum=1)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    B1 = check_int("B1", B1, minimum=1)
    B2 = check_int("B2", B2, minimum=1)
    needed = _records_needed(T, tree_size, B1, B2)
    if needed > n_records:
        raise ValueError(f"a single pass of T = {T} steps with Σ = {tree_size}, B1 = {B1}, B2 = {B2} reads "
                         f"U(T) = {needed} records, but the data has {n_records}: provide {needed} records or "
                         "fewer steps (each record is used once, nsnc_improved Algorithm 3)")
    return Schedule(n_records, T, tree_size, B1, B2, needed)


# ---------------------------------------------------------------------------------------------------
# Directions (public)


def step_directions(seed, t, oracle, batch, directions, d, smoothing_radius, *, reset, arithmetic="float64"):
    """The directions or perturbations of step t, regenerated from the public key ("nsnc_improved", "direction", t).

    oracle: one of ``ORACLES``. batch: b, the step's records. directions: m per record. reset: whether τ(t) = 1.
    Shapes (module doc): zeroth order (b, m, d) at a reset, (b, 2, m, d) at an increment ((b, m, d) for CRN);
    first order radius-α ball perturbations (b, 1, d) at a single-pass reset, (b, m, d) at a multi-pass reset,
    (b, 2, m, d) at an increment. Bitwise identical on every call; never a function of data.
    """
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    t = check_int("t", t, minimum=1)
    _check_oracle(oracle)
    b = check_int("batch", batch, minimum=1)
    m = check_int("directions", directions, minimum=1)
    d = check_int("d", d, minimum=1)
    rng = Streams(seed).generator(KEY, "direction", t)
    if oracle in FIRST_ORDER_ORACLES:
        alpha = check_real("smoothing_radius", smoothing_radius, positive=True)
        if reset:
            shape = (b, 1) if oracle == "first_order" else (b, m)
        else:
            shape = (b, 2, m)
        return sample_ball(rng, shape, d, alpha, arithmetic=arithmetic)
    shape = (b, m) if reset or oracle == "single_pass_crn" else (b, 2, m)
    return sample_sphere(rng, shape, d, arithmetic=arithmetic)


def _check_oracle(oracle):
    if oracle not in ORACLES:
        raise ValueError(f"oracle must be one of {ORACLES}, got {oracle!r}")
    return oracle


# ---------------------------------------------------------------------------------------------------
# Per-record estimates (shared by the oracles)


def _clip(vector, radius):
    """min(1, radius/‖v‖)·v (clip_hardening); returns (vector, whether it was clipped)."""
    length = norm(vector)
    if length <= radius:
        return vector, False
    return vector * (radius / length), True


class _Oracle:
    """What the single- and multi-pass oracles share: the query order and step bound, the per-record estimates with
    the non-finite replacement and optional Lipschitz clipping, and the non-private record of every step."""

    def __init__(self, objective, data, *, oracle, d, tree_size, block_length, steps, smoothing_radius, step_bound,
                 directions, lipschitz, enforce_lipschitz, clip_radii, seed, noise_rng, use_mp):
        if not callable(objective):
            what = "gradient" if oracle in FIRST_ORDER_ORACLES else "loss"
            raise TypeError(f"{what} must be callable as {what}(x, z), got {type(objective).__name__}")
        self.objective = objective
        self.oracle = _check_oracle(oracle)
        self.first_order = oracle in FIRST_ORDER_ORACLES
        self.data = _read_only(data)
        self.d = d
        self.tree_size = tree_size
        self.block_length = block_length
        self.steps = steps
        self.use_mp = use_mp
        conv = mpmath.mpf if use_mp else float
        self.alpha = conv(smoothing_radius)
        self.step_bound = conv(step_bound)
        self.directions = directions  # (m_reset, m_increment)
        self.lipschitz = None if lipschitz is None else conv(lipschitz)
        self.enforce_lipschitz = bool(enforce_lipschitz)
        if self.enforce_lipschitz and self.lipschitz is None:
            raise ValueError("enforce_lipschitz=True needs lipschitz (the bound the finite differences are clipped to)")
        self.clip_radii = clip_radii  # None, or functions of the step ‖z_t − z_{t−1}‖ (module doc)
        self.seed = seed
        self.noise_rng = noise_rng
        self._next = 1
        self._z_previous = None
        self.noiseless, self.noise = [], []
        self.nonfinite_counts, self.clipped_counts = [], []
        self.evaluations = 0

    @property
    def arithmetic(self):
        return "mpmath" if self.use_mp else "float64"

    def _step(self, k, j):
        """The global step t = (k − 1)·M + j of the query (k, j) of ``reference.o2nc.o2nc``; queries in order."""
        k = check_int("k", k, minimum=1)
        j = check_int("t", j, minimum=1, maximum=self.block_length)
        t = (k - 1) * self.block_length + j
        if t != self._next:
            raise ValueError(f"queries must come in order: expected step {self._next}, got step {t} (block {k}, "
                             f"position {j}); a repeated or skipped step would reuse or skip records")
        if t > self.steps:
            raise ValueError(f"the run has T = {self.steps} steps: the oracle is exhausted")
        self._next = t + 1
        return t

    def _point(self, z, t):
        z = check_array("z", z, shape=(self.d,))
        z = to_mp(z) if self.use_mp else np.asarray(z, dtype=np.float64)
        if self._z_previous is not None:
            gap = norm(z - self._z_previous)
            if gap > 2 * self.step_bound * (1 + STEP_TOLERANCE):
                raise ValueError(f"query point moved ‖z_t − z_(t−1)‖ = {gap} > 2D = {2 * self.step_bound} at step "
                                 f"{t}: the increment sensitivities are accounted with ‖z_t − z_(t−1)‖ ≤ 2D")
        return z

    def _bounded(self, difference, counts):
        """A finite difference after the non-finite replacement and, with enforce_lipschitz, the clip to ±2Lα."""
        bound = None if self.lipschitz is None else 2 * self.lipschitz * self.alpha
        if not _is_finite(difference):
            counts[0] += 1
            if mpmath.isnan(difference):
                return mpmath.mpf(0) if self.use_mp else 0.0
            if bound is None:
                raise ValueError("loss gave an infinite finite difference and lipschitz is not given, so nothing "
                                 "bounds it (pass lipschitz to replace it by its Lipschitz bound 2Lα)")
            return bound if difference > 0 else -bound
        if bound is not None and self.enforce_lipschitz and abs(difference) > bound:
            counts[1] += 1
            return bound if difference > 0 else -bound
        return difference

    def _two_point_record(self, z, row, directions, counts, where):
        """(1/m) Σ_j (d/(2α))(f(z + αy_j; ξ) − f(z − αy_j; ξ)) y_j for one record (Eq. (4))."""
        total = _zeros(self.d, self.use_mp)
        for j in range(directions.shape[0]):
            y = directions[j]
            step = self.alpha * y
            f_plus = real_value(self.objective(z + step, row), self.use_mp, f"{where}, direction {j}")
            f_minus = real_value(self.objective(z - step, row), self.use_mp, f"{where}, direction {j}")
            with np.errstate(invalid="ignore", over="ignore"):
                difference = f_plus - f_minus
            difference = self._bounded(difference, counts)
            total = total + (self.d * difference / (2 * self.alpha)) * y
        self.evaluations += 2 * directions.shape[0]
        return total / directions.shape[0]

    def _gradient_record(self, z, row, perturbations, counts, where):
        """(1/m) Σ_j ∇f(z + y_j; ξ) for one record (Algorithm 5), y_j the given ball perturbations."""
        total = _zeros(self.d, self.use_mp)
        for j in range(perturbations.shape[0]):
            g = np.asarray(self.objective(z + perturbations[j], row))
            if g.shape != (self.d,):
                raise ValueError(f"gradient must return shape ({self.d},), got {g.shape} at {where}, perturbation {j}")
            g = to_mp(g) if self.use_mp else np.asarray(g, dtype=np.float64)
            if not all(_is_finite(v) for v in g):
                # replaced, not refused: whether one record's value is finite must not decide between an output
                # and an error (docs/design.md); 0 has norm ≤ L, so the sensitivity is unchanged
                counts[0] += 1
                g = _zeros(self.d, self.use_mp)
            if self.enforce_lipschitz:
                g, clipped = _clip(g, self.lipschitz)
                counts[1] += int(clipped)
            total = total + g
        self.evaluations += perturbations.shape[0]
        return total / perturbations.shape[0]

    def _estimate(self, z, row, directions, counts, where):
        if self.first_order:
            return self._gradient_record(z, row, directions, counts, where)
        return self._two_point_record(z, row, directions, counts, where)

    def _reset_sum(self, z, rows, directions, counts):
        """Σ_ξ e(z; ξ) over the step's records, each clipped to L + r with clip_hardening."""
        total = _zeros(self.d, self.use_mp)
        for i in range(rows.shape[0]):
            e = self._estimate(z, rows[i], directions[i], counts, f"record {i} of the step")
            if self.clip_radii is not None:
                e, clipped = _clip(e, self.clip_radii.reset)
                counts[1] += int(clipped)
            total = total + e
        return total

    def _increment_sum(self, z, z_previous, rows, directions, counts):
        """Σ_ξ (e(z_t; ξ) − e'(z_{t−1}; ξ)), each difference clipped with clip_hardening."""
        shared = directions.ndim == 3  # CRN: the same directions at both points
        total = _zeros(self.d, self.use_mp)
        radius = None if self.clip_radii is None else self.clip_radii.increment(norm(z - z_previous))
        for i in range(rows.shape[0]):
            where = f"record {i} of the step"
            current = self._estimate(z, rows[i], directions[i] if shared else directions[i, 0], counts, where)
            previous = self._estimate(z_previous, rows[i], directions[i] if shared else directions[i, 1], counts, where)
            difference = current - previous
            if radius is not None:
                difference, clipped = _clip(difference, radius)
                counts[1] += int(clipped)
            total = total + difference
        return total

    def _directions(self, t, b, reset):
        m = self.directions[0] if reset else self.directions[1]
        return step_directions(self.seed, t, self.oracle, b, m, self.d, self.alpha, reset=reset,
                               arithmetic=self.arithmetic)

    def _noise(self, sigma):
        z = self.noise_rng.standard_normal(self.d)
        return to_mp(z) * sigma if self.use_mp else sigma * z

    def _record(self, g, noise, counts):
        self.noiseless.append(g)
        self.noise.append(noise)
        self.nonfinite_counts.append(counts[0])
        self.clipped_counts.append(counts[1])


class SinglePassOracle(_Oracle):
    """nsnc_improved Algorithm 3 (zeroth order; ``oracle="single_pass"`` or ``"single_pass_crn"``) and Algorithm 5
    (first order; ``oracle="first_order"``), with Algorithm 1's tree noise.

    objective: the loss f(x; ξ) (zeroth order) or its gradient ∇f(x; ξ) (first order), called as
    ``objective(point, row)``. data: (n, p) records. schedule: ``single_pass_schedule``. noise_std: σ of every tree
    node (0 for the non-private twin). Other arguments: module doc and ``nsnc_improved``.

    ``query(k, j, z)`` (block k, position j, 1-based and in order) returns g̃_t for step t = (k − 1)M + j. Paper
    lines (Algorithm 3):
        τ = 1:  tree ← fresh; S ← next B1 records; g ← (1/B1) Σ_{ξ∈S} e(z_t; ξ)
        else:   S ← next B2 records; g ← g + (1/B2) Σ_{ξ∈S} (e(z_t; ξ) − e'(z_{t−1}; ξ))
        return  g + TREE(τ)
    """

    def __init__(self, objective, data, schedule: Schedule, *, oracle, d, block_length, smoothing_radius,
                 step_bound, directions, noise_std, lipschitz=None, enforce_lipschitz=False, clip_radii=None, seed,
                 noise_rng, use_mp=False):
        if oracle not in SINGLE_PASS_ORACLES:
            raise ValueError(f"oracle must be one of {SINGLE_PASS_ORACLES} for SinglePassOracle, got {oracle!r}")
        super().__init__(objective, data, oracle=oracle, d=d, tree_size=schedule.tree_size, block_length=block_length,
                         steps=schedule.T, smoothing_radius=smoothing_radius, step_bound=step_bound,
                         directions=directions, lipschitz=lipschitz, enforce_lipschitz=enforce_lipschitz,
                         clip_radii=clip_radii, seed=seed, noise_rng=noise_rng, use_mp=use_mp)
        self.schedule = schedule
        sigma = check_real("noise_std", noise_std, nonnegative=True)
        stds = np.empty(schedule.tree_size, dtype=object) if use_mp else np.full(schedule.tree_size, float(sigma))
        if use_mp:
            stds.fill(mpmath.mpf(sigma))
        self.tree = TreeMechanism(d, stds, noise_rng)
        self._g = None

    def query(self, k, j, z):
        """g̃_t for the query point z = z_t (class doc)."""
        t = self._step(k, j)
        z = self._point(z, t)
        tau = period_position(t, self.tree_size)
        rows = self.data[self.schedule.block(t)]
        counts = [0, 0]
        directions = self._directions(t, rows.shape[0], tau == 1)
        if tau == 1:
            g = self._reset_sum(z, rows, directions, counts) / rows.shape[0]
        else:
            g = self._g + self._increment_sum(z, self._z_previous, rows, directions, counts) / rows.shape[0]
        noise = self.tree(tau)  # Algorithm 1: TREE(τ), a fresh tree at τ = 1
        self._g, self._z_previous = g, z
        self._record(g, noise, counts)
        return g + noise


class MultiPassOracle(_Oracle):
    """nsnc_improved Algorithm 4 (``oracle="multi_pass"``) and its first-order variant
    (``oracle="multi_pass_first_order"``): every step reads all n records.

    noise_stds: (σ1, σ2), the noise of reset and increment steps. Paper lines (Algorithm 4):
        τ = 1:  g̃_t = (1/n) Σ_i e(z_t; ξ_i) + χ_t,                       χ_t ~ N(0, σ1² I_d)
        else:   g̃_t = g̃_{t−1} + (1/n) Σ_i (e(z_t; ξ_i) − e'(z_{t−1}; ξ_i)) + χ_t,   χ_t ~ N(0, σ2² I_d)
    ``noiseless`` records the sum before this step's χ_t (it contains the earlier χ's: Algorithm 4 adds the increment
    to the released g̃_{t−1}); ``noise`` records χ_t.
    """

    def __init__(self, objective, data, *, oracle, d, tree_size, block_length, steps, smoothing_radius, step_bound,
                 directions, noise_stds, lipschitz=None, enforce_lipschitz=False, clip_radii=None, seed, noise_rng,
                 use_mp=False):
        if oracle not in MULTI_PASS_ORACLES:
            raise ValueError(f"oracle must be one of {MULTI_PASS_ORACLES} for MultiPassOracle, got {oracle!r}")
        super().__init__(objective, data, oracle=oracle, d=d, tree_size=tree_size, block_length=block_length,
                         steps=steps, smoothing_radius=smoothing_radius, step_bound=step_bound, directions=directions,
                         lipschitz=lipschitz, enforce_lipschitz=enforce_lipschitz, clip_radii=clip_radii, seed=seed,
                         noise_rng=noise_rng, use_mp=use_mp)
        if len(noise_stds) != 2:
            raise ValueError(f"noise_stds must be (σ1, σ2), got {noise_stds!r}")
        conv = mpmath.mpf if use_mp else float
        self.noise_stds = tuple(conv(check_real(name, value, nonnegative=True))
                                for name, value in zip(("noise_std_reset", "noise_std_increment"), noise_stds))
        self._released = None

    def query(self, k, j, z):
        """g̃_t for the query point z = z_t (class doc)."""
        t = self._step(k, j)
        z = self._point(z, t)
        reset = period_position(t, self.tree_size) == 1
        rows = self.data
        counts = [0, 0]
        directions = self._directions(t, rows.shape[0], reset)
        if reset:
            g = self._reset_sum(z, rows, directions, counts) / rows.shape[0]
            noise = self._noise(self.noise_stds[0])
        else:
            g = self._released + self._increment_sum(z, self._z_previous, rows, directions, counts) / rows.shape[0]
            noise = self._noise(self.noise_stds[1])
        released = g + noise
        self._released, self._z_previous = released, z
        self._record(g, noise, counts)
        return released


# ---------------------------------------------------------------------------------------------------
# What a run returns


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """The hyper-parameters a run used. Every field is public.

    oracle: one of ``ORACLES``. d; records_available (n); records_used (U(T), or n for multi pass). K blocks of
    block_length M (T = K·M steps); tree_size Σ (period length); B1, B2 (single pass; None for multi pass);
    directions (m_reset, m_increment); smoothing_radius α; step_bound D; step_size η; noise_stds (σ,) single pass or
    (σ1, σ2) multi pass (zeros without noise); noise_rule ("exact", "paper", "given" or "none"); gamma γ (the
    per-evaluation failure probability of the high-probability sensitivities); sensitivity_mode; clip_hardening;
    lipschitz L; enforce_lipschitz; restart_blocks; arithmetic; direction_seed: "public" or "secret" (module doc:
    secret exactly when the plan's guarantee is the high-probability one).
    """

    oracle: str
    d: int
    records_available: int
    records_used: int
    K: int
    block_length: int
    tree_size: int
    B1: int | None
    B2: int | None
    directions: tuple
    smoothing_radius: float
    step_bound: float
    step_size: float
    noise_stds: tuple
    noise_rule: str
    gamma: float | None
    sensitivity_mode: str
    clip_hardening: bool
    lipschitz: float | None
    enforce_lipschitz: bool
    restart_blocks: bool
    arithmetic: str
    direction_seed: str = "public"

    @property
    def T(self) -> int:
        return self.K * self.block_length


@dataclasses.dataclass(frozen=True)
class Ledger:
    """What a run spent. Every field is public (docs/design.md, threat model).

    algorithm: "nsnc_improved" (private) or "o2nc_clipped_ogd" (noise="none"). plan: the ``NsncPrivacyPlan``
    (None without noise) — sensitivities, which guarantee holds (worst-case, high-probability with the δ_fail paid,
    or clip-hardened), μ and the ε at dp_delta. settings: ``RunSettings``. seed: the public seed.
    secret_seed_source and guarantee_condition: ``reference.secrets`` (None without noise).
    """

    algorithm: str
    plan: object
    settings: RunSettings
    seed: int
    secret_seed_source: str | None
    guarantee_condition: str | None

    @property
    def epsilon_spent(self):
        """The ε the plan claims at dp_delta (None when the run is not private)."""
        return None if self.plan is None else self.plan.epsilon


@dataclasses.dataclass(frozen=True)
class NonPrivateDiagnostics:
    """Values computed on the PRIVATE data or from the SECRET seed: NOT covered by the privacy plan. Never publish.

    noiseless_sums: g_t before this step's noise, (K, M, d). noise: TREE(τ) (single pass) or χ_t (multi pass),
    (K, M, d). nonfinite_counts: per step, finite differences that were NaN or ±∞ and were replaced, and the
    nonfinite gradients (first order) that were replaced by 0. clipped_counts: per step, the estimates clipped
    (clip_hardening) and the finite differences or gradients clipped by enforce_lipschitz.
    evaluations: loss or gradient evaluations of the run.
    """

    noiseless_sums: np.ndarray
    noise: np.ndarray
    nonfinite_counts: np.ndarray
    clipped_counts: np.ndarray
    evaluations: int


@dataclasses.dataclass(frozen=True)
class DPResult:
    """Output of a run (module doc). Block k is row k − 1, position j column j − 1 (step t = (k − 1)M + j).

    The private output the plan covers: output (the block average x̄_{k*}), output_index (k* − 1), block_averages
    (K, d), final_iterate x_T, releases g̃_t (K, M, d), segment_points s_t (K, M) (public); query_points z_t,
    iterates and steps Δ_t when record_path. ledger: public ``Ledger``. diagnostics: NOT covered by the plan.
    """

    output: np.ndarray
    output_index: int
    block_averages: np.ndarray
    final_iterate: np.ndarray
    releases: np.ndarray
    segment_points: np.ndarray
    query_points: np.ndarray | None
    iterates: np.ndarray | None
    steps: np.ndarray | None
    ledger: Ledger
    diagnostics: NonPrivateDiagnostics


# ---------------------------------------------------------------------------------------------------
# Whole runs


@dataclasses.dataclass(frozen=True)
class _ClipRadii:
    """The clip_hardening radii: reset L + r; increment H·‖Δz‖ + 2r (CRN: H·‖Δz‖ + r_crn(‖Δz‖))."""

    reset: object
    increment: object  # a function of ‖z_t − z_{t−1}‖


def _float_up(value) -> float:
    """The smallest float64 ≥ value (σ is rounded up, so a run is at least as noisy as calibrated)."""
    out = float(value)
    if mpmath.mpf(out) < value:
        out = math.nextafter(out, math.inf)
    return out


def _float_down(value) -> float:
    """The largest float64 ≤ value (a clip radius is rounded down, so the clip is at least as tight)."""
    out = float(value)
    if mpmath.mpf(out) > value:
        out = math.nextafter(out, -math.inf)
    return out


def _clip_radii(oracle, *, d, lipschitz, alpha, m_reset, m_increment, gamma, use_mp):
    """The radii of clip_hardening at failure probability γ (module doc; nsnc_improved_privacy)."""
    conv = mpmath.mpf if use_mp else _float_down
    kind = "fo" if oracle in FIRST_ORDER_ORACLES else "zo"
    common = dict(d=d, lipschitz=lipschitz, smoothing_radius=alpha, gamma=gamma)
    smoothness = mpmath.mpf(lipschitz) * smoothness_constant(d, arithmetic="mpmath") / mpmath.mpf(alpha)
    if kind == "fo":
        reset = conv(lipschitz)  # ‖∇f‖ ≤ L: the first-order reset is bounded without concentration
    else:
        reset = conv(lipschitz + privacy.concentration_radius("zo", m=m_reset, **common))
    if oracle == "single_pass_crn":
        def increment(step_norm):
            r = privacy.concentration_radius("crn", m=m_increment, step_norm=float(step_norm), **common)
            return conv(smoothness * mpmath.mpf(step_norm) + r)
    else:
        r = privacy.concentration_radius(kind, m=m_increment, **common)

        def increment(step_norm):
            return conv(smoothness * mpmath.mpf(step_norm) + 2 * r)
    return _ClipRadii(reset, increment)


def _inputs(data, x0, seed, noise_seed, private):
    data = check_array("data", data, ndim=2)
    if data.shape[0] < 1:
        raise ValueError("data must have at least one row (n >= 1)")
    x0 = check_array("x0", x0, ndim=1)
    if x0.shape[0] < 1:
        raise ValueError("x0 must have at least one coordinate (d >= 1)")
    use_mp = is_mp(x0)
    if use_mp:
        x0, data = to_mp(x0), to_mp(data)
    else:  # the run's arithmetic is x0's: mpmath data are rounded to float64 (the ledger says "float64")
        x0, data = np.array(x0, dtype=np.float64), np.asarray(to_float(data), dtype=np.float64)
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    secret = None if (noise_seed is None and not private) else secret_seed(noise_seed, public_seeds=(seed,),
                                                                           name="noise_seed")
    return data, x0, use_mp, seed, secret


def _noise_generator(seed, secret: SecretSeed | None):
    """("nsnc_improved", "noise") under the secret seed (the public seed's stream for a run without noise: σ = 0)."""
    streams = Streams(seed) if secret is None else secret.streams()
    return streams.generator(KEY, "noise")


def _pair(name, value):
    """(m_reset, m_increment) from one int or a pair."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ValueError(f"{name} must be one integer or a pair (reset, increment), got {value!r}")
        return tuple(check_int(name, v, minimum=1) for v in value)
    value = check_int(name, value, minimum=1)
    return value, value


def _plan(oracle, *, d, lipschitz, alpha, D, n, tree_size, T, B1, B2, directions, gamma, noise_stds, dp_delta,
          clip_hardening, sensitivity_mode):
    common = dict(oracle=oracle, d=d, lipschitz=lipschitz, smoothing_radius=alpha, step_bound=D,
                  tree_size=tree_size, gamma=gamma, dp_delta=dp_delta, sensitivity_mode=sensitivity_mode)
    if oracle in SINGLE_PASS_ORACLES:
        return privacy.nsnc_single_pass_plan(B1=B1, B2=B2, m_reset=directions[0], m_increment=directions[1],
                                             noise_std=noise_stds[0], clip_hardening=clip_hardening, **common)
    return privacy.nsnc_multi_pass_plan(n=n, T=T, m=directions[0], noise_std_reset=noise_stds[0],
                                        noise_std_increment=noise_stds[1], **common)


def _noise_stds(oracle, noise, noise_std, epsilon, *, d, lipschitz, alpha, D, n, tree_size, T, B1, B2, directions,
                gamma, dp_delta, clip_hardening, sensitivity_mode):
    """(σ's, rule): given, calibrated exactly to ε at dp_delta, or zeros without noise."""
    single = oracle in SINGLE_PASS_ORACLES
    if noise == "none":
        if noise_std is not None or epsilon is not None:
            raise ValueError("noise_std and epsilon must be None when noise='none' (the run is not private)")
        return ((0.0,) if single else (0.0, 0.0)), "none"
    if (noise_std is None) == (epsilon is None):
        raise ValueError("a private run needs exactly one of epsilon (σ calibrated exactly to (ε, dp_delta)) and "
                         "noise_std (σ given; the ledger reports the ε it gives)")
    if noise_std is not None:
        if single:
            return (float(check_real("noise_std", noise_std, positive=True)),), "given"
        if not isinstance(noise_std, (tuple, list)) or len(noise_std) != 2:
            raise ValueError(f"noise_std must be the pair (σ1, σ2) for a multi-pass oracle, got {noise_std!r}")
        return tuple(float(check_real("noise_std", v, positive=True)) for v in noise_std), "given"
    epsilon = check_real("epsilon", epsilon, positive=True)
    common = dict(oracle=oracle, d=d, lipschitz=lipschitz, smoothing_radius=alpha, step_bound=D,
                  tree_size=tree_size, gamma=gamma, epsilon=epsilon, delta=dp_delta,
                  sensitivity_mode=sensitivity_mode, rule="exact")
    if single:
        sigma = privacy.nsnc_single_pass_noise_std(B1=B1, B2=B2, m_reset=directions[0], m_increment=directions[1],
                                                   clip_hardening=clip_hardening, **common)
        return (_float_up(sigma),), "exact"
    sigmas = privacy.nsnc_multi_pass_noise_stds(n=n, T=T, m=directions[0], **common)
    return tuple(_float_up(s) for s in sigmas), "exact"


def nsnc_improved(objective, data, x0, *, oracle="single_pass", blocks, block_length, tree_size, smoothing_radius,
                  step_bound, step_size, directions, B1=None, B2=1, noise_std=None, epsilon=None, lipschitz=None,
                  dp_delta=None, gamma=None, sensitivity_mode="auto", clip_hardening=False, seed, noise_seed=None,
                  noise="gaussian", enforce_lipschitz=False, restart_blocks=False, record_path=False) -> DPResult:
    """nsnc_improved Algorithm 2 (O2NC with clipped OGD) with the oracle of Algorithm 3, 4 or 5, one whole run.

    Args:
        objective: the per-record loss f(x; ξ) (zeroth-order oracles) or its gradient ∇f(x; ξ) (first-order
            oracles), called as ``objective(point, row)`` with point (d,) and row (p,).
        data: (n, p) records. Single pass: read once in index order (``single_pass_schedule``); multi pass: all of
            them at every step.
        x0: x_0, shape (d,), data-independent; float64, or an mpmath object array to run in mpmath.
        oracle: "single_pass" (Alg 3), "single_pass_crn" (Alg 3 with common random numbers), "first_order" (Alg 5),
            "multi_pass" (Alg 4) or "multi_pass_first_order".
        blocks: K. block_length: M. T = K·M steps; the output is a uniformly random block average.
        tree_size: Σ, the period (the tree restarts, single pass; σ1 is used, multi pass, at τ = 1).
        smoothing_radius: α. step_bound: D (the clip radius of OGD; M·D ≤ α is the paper's constraint, not
            enforced here). step_size: η.
        directions: m, per record — one int or (m_reset, m_increment).
        B1, B2: the single-pass batches of reset and increment steps (B1 required for single pass).
        noise_std: σ (single pass) or (σ1, σ2) (multi pass), given; or epsilon: σ calibrated exactly so that the
            run is (ε, dp_delta)-DP (``nsnc_improved_privacy``). σ is rounded up to float64.
        lipschitz: L (required for a private run). dp_delta: δ (required for a private run).
        gamma: γ, the failure probability per evaluation of the high-probability sensitivities (default δ/8 single
            pass, δ/(8T) multi pass: δ_fail ≤ δ/2).
        sensitivity_mode: "auto" (min of worst-case and high-probability, δ_fail paid where the latter is used) or
            "worst_case". clip_hardening: module doc (single pass only).
        seed: public seed. noise_seed: secret seed (None: fresh OS entropy). noise: "gaussian" or "none".
        enforce_lipschitz: module doc. restart_blocks: restart OGD at every block (not in the paper).
        record_path: also return every z_t, x_t, Δ_t.
    """
    prepared = prepare_run(oracle, data, x0, blocks=blocks, block_length=block_length, tree_size=tree_size,
                           smoothing_radius=smoothing_radius, step_bound=step_bound, step_size=step_size,
                           directions=directions, B1=B1, B2=B2, noise_std=noise_std, epsilon=epsilon,
                           lipschitz=lipschitz, dp_delta=dp_delta, gamma=gamma, sensitivity_mode=sensitivity_mode,
                           clip_hardening=clip_hardening, seed=seed, noise_seed=noise_seed, noise=noise,
                           enforce_lipschitz=enforce_lipschitz, restart_blocks=restart_blocks)
    settings, data, x0 = prepared.settings, prepared.data, prepared.x0
    d, K, M = settings.d, settings.K, settings.block_length
    use_mp = settings.arithmetic == "mpmath"
    noise_rng = _noise_generator(prepared.seed, prepared.secret)
    common = dict(oracle=oracle, d=d, block_length=M, smoothing_radius=settings.smoothing_radius,
                  step_bound=settings.step_bound, directions=settings.directions, lipschitz=settings.lipschitz,
                  enforce_lipschitz=enforce_lipschitz, clip_radii=prepared.clip_radii, seed=prepared.direction_seed,
                  noise_rng=noise_rng, use_mp=use_mp)
    if oracle in SINGLE_PASS_ORACLES:
        the_oracle = SinglePassOracle(objective, data, prepared.schedule, noise_std=settings.noise_stds[0], **common)
    else:
        the_oracle = MultiPassOracle(objective, data, tree_size=settings.tree_size, steps=settings.T,
                                     noise_stds=settings.noise_stds, **common)
    conv = mpmath.mpf if use_mp else float
    learner = ClippedOGD(d, conv(settings.step_bound), conv(settings.step_size), arithmetic=settings.arithmetic,
                         restart_blocks=restart_blocks)
    path = o2nc(the_oracle, learner, x0, M, K, rng_public=Streams(prepared.seed).child(KEY), record_path=record_path)

    dtype = object if use_mp else np.float64
    diagnostics = NonPrivateDiagnostics(
        noiseless_sums=np.array(the_oracle.noiseless, dtype=dtype).reshape(K, M, d),
        noise=np.array(the_oracle.noise, dtype=dtype).reshape(K, M, d),
        nonfinite_counts=np.array(the_oracle.nonfinite_counts, dtype=np.int64).reshape(K, M),
        clipped_counts=np.array(the_oracle.clipped_counts, dtype=np.int64).reshape(K, M),
        evaluations=the_oracle.evaluations,
    )
    return DPResult(output=path.output, output_index=path.output_index, block_averages=path.epoch_averages,
                    final_iterate=path.final_point, releases=path.oracle_outputs, segment_points=path.segment_points,
                    query_points=path.query_points, iterates=path.iterates, steps=path.steps, ledger=prepared.ledger,
                    diagnostics=diagnostics)


def settings_arguments(settings) -> dict:
    """The keyword arguments of ``nsnc_improved`` that run the hyper-parameters of a ``SinglePassSettings`` or
    ``MultiPassSettings`` (``reference.algorithms.nsnc_improved_theory``): oracle, K, M, Σ, α, D, η, m, B1, B2, σ
    (rounded up to float64 by the settings), L, δ, γ and clip_hardening. Add the data, x0 and the seeds.

        run = nsnc_improved(loss, data, x0, **settings_arguments(single_pass_settings(...)), seed=0)
    """
    common = dict(blocks=settings.K, block_length=settings.M, tree_size=settings.tree_size,
                  smoothing_radius=float(settings.smoothing_radius), step_bound=float(settings.step_bound),
                  step_size=float(settings.step_size), lipschitz=float(settings.lipschitz),
                  dp_delta=float(settings.delta), gamma=float(settings.gamma))
    if hasattr(settings, "B1"):  # single pass
        return dict(oracle=settings.oracle, directions=(settings.m_reset, settings.m_increment), B1=settings.B1,
                    B2=settings.B2, noise_std=float(settings.noise_std), clip_hardening=settings.clip_hardening,
                    **common)
    return dict(oracle="multi_pass", directions=settings.m,
                noise_std=(float(settings.noise_std_reset), float(settings.noise_std_increment or
                                                                   settings.noise_std_reset)), **common)


@dataclasses.dataclass(frozen=True)
class PreparedRun:
    """Everything a run decides before its first step (shared with the fast twin, so both refuse the same inputs and
    state the same ledger): the checked data and x0 (in the run's arithmetic), the public seed and the secret seed,
    the single-pass ``schedule`` (None for multi pass), the clip_hardening radii (None without), the
    ``RunSettings`` and the public ``Ledger`` (its plan included)."""

    data: np.ndarray
    x0: np.ndarray
    seed: int
    secret: SecretSeed | None
    schedule: Schedule | None
    clip_radii: _ClipRadii | None
    settings: RunSettings
    ledger: Ledger

    @property
    def direction_seed(self) -> int:
        """The seed of the direction stream: the public seed, or the secret one when the guarantee is the
        high-probability one (``RunSettings.direction_seed``; module doc). Never write it anywhere."""
        return self.secret.entropy if self.settings.direction_seed == "secret" else self.seed


def prepare_run(oracle, data, x0, *, blocks, block_length, tree_size, smoothing_radius, step_bound, step_size,
                directions, B1, B2, noise_std, epsilon, lipschitz, dp_delta, gamma, sensitivity_mode, clip_hardening,
                seed, noise_seed, noise, enforce_lipschitz, restart_blocks) -> PreparedRun:
    """Check a run's arguments (``nsnc_improved``'s), build its schedule, σ, plan, clip radii, settings and ledger."""
    _check_oracle(oracle)
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    if sensitivity_mode not in SENSITIVITY_MODES:
        raise ValueError(f"sensitivity_mode must be one of {SENSITIVITY_MODES}, got {sensitivity_mode!r}")
    private = noise == "gaussian"
    if private and (lipschitz is None or dp_delta is None):
        raise ValueError("a private run needs lipschitz (L: the sensitivities assume every f(·; ξ) is L-Lipschitz) "
                         "and dp_delta (δ of the (ε, δ) guarantee)")
    if not private and dp_delta is not None:
        raise ValueError("dp_delta must be None when noise='none' (the run is not private)")
    if clip_hardening and lipschitz is None:
        raise ValueError("clip_hardening needs lipschitz (the clip radii are L + r and H‖Δz‖ + 2r)")
    data, x0, use_mp, seed, secret = _inputs(data, x0, seed, noise_seed, private)
    d, n = x0.shape[0], data.shape[0]
    K = check_int("blocks", blocks, minimum=1)
    M = check_int("block_length", block_length, minimum=1)
    T = K * M
    tree_size = check_int("tree_size", tree_size, minimum=1)
    alpha = float(check_real("smoothing_radius", smoothing_radius, positive=True))
    D = float(check_real("step_bound", step_bound, positive=True))
    eta = float(check_real("step_size", step_size, positive=True))
    m = _pair("directions", directions)
    if lipschitz is not None:
        lipschitz = float(check_real("lipschitz", lipschitz, positive=True))
    single = oracle in SINGLE_PASS_ORACLES
    if single:
        if B1 is None:
            raise ValueError("B1 is required for a single-pass oracle (the batch of reset steps)")
        B1 = check_int("B1", B1, minimum=1)
        B2 = check_int("B2", B2, minimum=1)
        schedule = single_pass_schedule(n, T, tree_size, B1, B2)
    else:
        if clip_hardening:
            raise ValueError("clip_hardening is implemented for the single-pass oracles only")
        if m[0] != m[1]:
            raise ValueError("the multi-pass oracles use one number of directions m for both branches (Algorithm 4): "
                             f"directions must be one integer, got {directions!r}")
        B1 = B2 = None
        schedule = None
    if gamma is None:
        gamma = None if dp_delta is None else float(dp_delta) / (8 if single else 8 * T)
    else:
        gamma = float(check_real("gamma", gamma, positive=True, upper=1))
    if clip_hardening and gamma is None:
        raise ValueError("clip_hardening needs gamma (the failure probability its radii are computed at)")

    plan_inputs = dict(d=d, lipschitz=lipschitz, alpha=alpha, D=D, n=n, tree_size=tree_size, T=T, B1=B1, B2=B2,
                       directions=m, gamma=gamma, clip_hardening=bool(clip_hardening),
                       sensitivity_mode=sensitivity_mode)
    with mpmath.workdps(max(mpmath.mp.dps, 30)):
        sigmas, rule = _noise_stds(oracle, noise, noise_std, epsilon, dp_delta=dp_delta, **plan_inputs)
        plan = _plan(oracle, noise_stds=sigmas, dp_delta=dp_delta, **plan_inputs) if private else None
        radii = (_clip_radii(oracle, d=d, lipschitz=lipschitz, alpha=alpha, m_reset=m[0], m_increment=m[1],
                             gamma=gamma, use_mp=use_mp) if clip_hardening else None)

    secret_directions = plan is not None and plan.guarantee == "high-probability"
    settings = RunSettings(oracle, d, n, schedule.records_used if single else n, K, M, tree_size, B1, B2, m, alpha,
                           D, eta, sigmas, rule, gamma, sensitivity_mode, bool(clip_hardening), lipschitz,
                           bool(enforce_lipschitz), bool(restart_blocks), "mpmath" if use_mp else "float64",
                           "secret" if secret_directions else "public")
    ledger = Ledger("nsnc_improved" if private else "o2nc_clipped_ogd", plan, settings, seed,
                    secret.source if private else None, secret.guarantee_condition if private else None)
    return PreparedRun(data, x0, seed, secret, schedule, radii, settings, ledger)
