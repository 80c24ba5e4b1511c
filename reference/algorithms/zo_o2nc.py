"""zo_o2nc Algorithms 3, 4 and 6 (Zhang, Tran, Cutkosky, ICLR 2024): private zeroth-order O2NC.

Zhang, Tran, Cutkosky — *Private Zeroth-Order Nonsmooth Nonconvex Optimization* (ICLR 2024). Written to be read
beside the pseudocode:

* ``VarianceReducedOracle``: Algorithm 4, the private variance-reduced gradient oracle. Round t = 1 of epoch k:
  g_1^k = GRAD(w_1^k; Z_1^k) on B1 records (Alg 1); round t ≥ 2: g_t^k = g_{t−1}^k + DIFF(w_t^k, w_{t−1}^k; Z_t^k)
  on B2 records (Alg 2, the SAME directions at w_t^k and w_{t−1}^k). The running sum g is NOISELESS; the oracle
  releases g̃_t^k = g_t^k + TREE(t) (Alg 5, ``reference.mechanisms.TreeMechanism``, reset at t = 1 of every epoch).
* ``NaiveOracle``: Algorithm 6 (App. E): one direction per record, g̃ = g + N(0, σ² I_d) fresh per query.
* ``single_pass_partition`` (and ``alg4_partition``, ``alg6_partition``): the blocks Z_t^k in index order, every
  record in at most one block (erratum zo_o2nc.E12: the paper does not say how the data are split; the fixed
  order needs no secret randomness and no amplification is claimed). A data set smaller than K·Σ_t B_t is
  refused with the count needed; an oracle refuses a query out of order, so no block is ever read twice.
* ``zo_o2nc``: Algorithm 3 (``reference.o2nc.o2nc``) + projected OSD + Algorithm 4 — the algorithm of
  Theorem 4.9 — returning a ``DPResult``. ``zo_o2nc_naive``: Algorithm 3 + OSD + Algorithm 6.
  ``o2nc_nonprivate``: Algorithm 3 + Algorithm 6 with σ = 0 and B = 1 (Kornowski–Shamir 2023), for the
  non-private Lemma 4.6 / Corollary 4.7; ``noise="none"`` gives the σ = 0 twin of either private run (same T, K,
  η, seeds).

Hyper-parameters are passed one by one or as ``settings`` from ``zo_o2nc_theory`` (``thm49_settings``,
``naive_settings``). Privacy is decided by ``zo_o2nc_privacy_plan`` / ``zo_o2nc_naive_privacy_plan``
(``reference.algorithms.zo_o2nc_privacy``): exact tree accounting with the step bound D the learner enforces.

Sensitivity. The DIFF leaves have sensitivity 2dL·‖w_t − w_{t−1}‖/(B2·δ) ≤ 2dL·(2D)/(B2·δ) (Lemma 3.2,
Remark 4.1): the learner projects every Δ onto {‖Δ‖ ≤ D} (``reference.o2nc.project_ball``), and the oracle
refuses a query point further than 2D from the previous one (a public fact: both points are post-processing of
releases). The sensitivities need every f(·, z) to be L-Lipschitz (``lipschitz``). With
``enforce_lipschitz=True`` each finite difference is clipped to its Lipschitz bound — |f(w+δu) − f(w−δu)| ≤ 2Lδ
(GRAD, Alg 6) and |f(w_t+δu) − f(w_{t−1}+δu)| ≤ L·min(‖w_t − w_{t−1}‖, 2D) (DIFF) — a no-op for a truly
L-Lipschitz f that makes the guarantee hold for any f (not in the paper; default off, for fidelity).

Non-finite per-record values (the accounted behaviour, docs/design.md). A loss value that is NaN or ±∞ does not
abort the run: a finite difference that is NaN becomes 0 and one that is ±∞ becomes ±(its Lipschitz bound)
before it enters the estimate, so the sensitivity is unchanged; each replacement is counted in
``diagnostics.nonfinite_counts``. Without ``lipschitz`` (a non-private run) an infinite difference has no bound
to become and raises.

Directions: public. The sensitivity bounds of Lemmas 3.1/3.2 hold for EVERY realisation of the directions shared
by the two neighbouring runs (erratum zo_o2nc.E15), so the privacy proof conditions on them: for each fixed
u the release is a Gaussian tree mechanism with the stated sensitivities, and the Rényi divergence of the pair
(u, g̃) is at most the worst conditional one. An adversary who knows u (or picks the data after seeing the public
seed) faces exactly that conditional mechanism, so publishing the public seed costs nothing. The directions
never depend on data (they are keyed by (k, t) only), and two neighbouring runs with the same public seed share
them exactly — the coupling the sensitivity needs, and what lets audits measure the realised sensitivity.

Randomness schedule (docs/design.md, randomness contract). ``seed`` is the PUBLIC seed; ``noise_seed`` the
SECRET seed of the DP noise (fresh operating-system entropy when None; a user secret must differ from ``seed``;
``reference.secrets`` owns the rule). All keys live under the paper key "zo_o2nc" (1-based k, t):

* ("zo_o2nc", "direction", k, t), public: the directions of round (k, t), ONE ``sample_sphere`` call (unit
  sphere) of shape (b, m, d) — Alg 4: (B1, d, d) at t = 1, (B2, d, d) at t ≥ 2 (d directions per record, Alg 1/2);
  Alg 6: (B, 1, d). ``directions_for_round`` regenerates them.
* ("zo_o2nc", "segment", k), public: s_1^k..s_T^k = ``random(T)`` (Alg 3 line 4; ``reference.o2nc``).
* ("zo_o2nc", "output"), public: k* − 1 = ``integers(K)``, drawn once after the last epoch (Alg 3 line 9).
* ("zo_o2nc", "noise"), secret: ONE generator for the run; every round (k, t), in order, draws
  ``standard_normal(d)`` once — ξ_t^k = σ·z (Alg 5 line 2 inside ``TreeMechanism``; Alg 6's fresh noise). A run
  without noise (``noise="none"``) and without ``noise_seed`` draws these from the public seed (σ = 0).

What a run returns (docs/design.md, "What a run may publish"). ``DPResult.releases`` — the g̃ sequence, which
the privacy plan covers — and their post-processing with public randomness (every w_t^k, x_t^k, Δ_t^k, w̄^k, w̄,
k*) are the private output. ``DPResult.ledger`` is public. ``DPResult.diagnostics`` holds the noiseless sums
g_t^k and the noise itself (secret), counts of non-finite and out-of-bound finite differences, and the number of
loss evaluations: computed on the private data or from the secret seed, NOT covered by the plan, never to be
published.

Arithmetic follows x1: an mpmath object array runs everything in mpmath at the working precision (directions,
s and noise are the float64 draws converted exactly); float64 otherwise.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np

from ..mechanisms import TreeMechanism
from ..o2nc import ProjectedOSD, o2nc
from ..precision import is_mp, norm, to_mp
from ..rng import SEED_BOUND, Streams, sample_sphere
from ..secrets import SecretSeed, secret_seed
from ..validation import check_array, check_int, check_real
from ._records import is_finite as _is_finite
from ._records import read_only as _read_only
from ._records import real_value
from ._records import zeros as _zeros
from .zo_o2nc_privacy import (
    NAIVE_SIGMA_RULES,
    PLAN_PRECISION_BITS,
    TREE_RULES,
    ZoO2ncPrivacyPlan,
    zo_o2nc_naive_noise_std,
    zo_o2nc_naive_privacy_plan,
    zo_o2nc_privacy_plan,
    zo_o2nc_tree_noise_std,
)
from .zo_o2nc_theory import NaiveSettings, Theorem49Settings

__all__ = [
    "KEY",
    "NOISES",
    "Partition",
    "single_pass_partition",
    "alg4_partition",
    "alg6_partition",
    "directions_for_round",
    "VarianceReducedOracle",
    "NaiveOracle",
    "RunSettings",
    "Ledger",
    "NonPrivateDiagnostics",
    "DPResult",
    "zo_o2nc",
    "zo_o2nc_naive",
    "o2nc_nonprivate",
]

#: The paper key under which every stream of these algorithms lives.
KEY = "zo_o2nc"
NOISES = ("gaussian", "none")
#: Relative slack on ‖w_t − w_{t−1}‖ ≤ 2D for float rounding of w = x + sΔ (the oracle refuses more).
STEP_TOLERANCE = 1e-9


# ---------------------------------------------------------------------------------------------------
# The single-pass partition (Alg 4 "Init", Alg 6 "Init"; erratum zo_o2nc.E12)


@dataclasses.dataclass(frozen=True)
class Partition:
    """The blocks Z_t^k of a single-pass run, in index order (zo_o2nc Alg 4 and Alg 6, "Init").

    n_records: M, the records available. K: epochs. block_sizes: (|Z_1^k|, …, |Z_T^k|), the same in every epoch.
    records_used: K·Σ_t |Z_t^k| (≤ M); the remaining records are never read. Epoch k, round t reads the indices
    ``block(k, t)``: contiguous, disjoint, increasing in (k, t).
    """

    n_records: int
    K: int
    block_sizes: tuple

    @property
    def T(self) -> int:
        return len(self.block_sizes)

    @property
    def records_per_epoch(self) -> int:
        return sum(self.block_sizes)

    @property
    def records_used(self) -> int:
        return self.K * self.records_per_epoch

    def block(self, k, t) -> np.ndarray:
        """The 0-based record indices of Z_t^k (1-based k ∈ [K], t ∈ [T])."""
        k = check_int("k", k, minimum=1, maximum=self.K)
        t = check_int("t", t, minimum=1, maximum=self.T)
        start = (k - 1) * self.records_per_epoch + sum(self.block_sizes[: t - 1])
        out = np.arange(start, start + self.block_sizes[t - 1])
        out.flags.writeable = False
        return out


def single_pass_partition(n_records, K, block_sizes) -> Partition:
    """Blocks of sizes ``block_sizes`` (one per round t), K epochs, in index order; every record in at most one
    block. Raises ValueError when n_records < K·Σ_t block_sizes[t], naming the number of records needed."""
    n_records = check_int("n_records", n_records, minimum=1)
    K = check_int("K", K, minimum=1)
    if isinstance(block_sizes, (str, bytes)) or not hasattr(block_sizes, "__iter__"):
        raise TypeError(f"block_sizes must be a sequence of ints, got {type(block_sizes).__name__}")
    sizes = tuple(check_int(f"block_sizes[{i}]", b, minimum=1) for i, b in enumerate(block_sizes))
    if not sizes:
        raise ValueError("block_sizes must have at least one entry (T >= 1)")
    needed = K * sum(sizes)
    if n_records < needed:
        raise ValueError(f"data has M = {n_records} records but a single pass of K = {K} epochs of blocks "
                         f"{_sizes_text(sizes)} reads K·Σ_t B_t = {needed} records, each once: {needed} records are "
                         f"needed")
    return Partition(n_records, K, sizes)


def _sizes_text(sizes):
    return str(sizes) if len(sizes) <= 4 else f"({sizes[0]}, {sizes[1]}, …, {sizes[-1]}) (T = {len(sizes)})"


def alg4_partition(n_records, T, K, B1, B2) -> Partition:
    """zo_o2nc Alg 4's partition: Z_1^k of B1 records, Z_t^k of B2 records for t ∈ {2..T} (the printed
    "t = [2, K]" is a typo, erratum zo_o2nc.E1), K epochs, M ≥ K(B1 + B2(T − 1)) (the paper assumes equality)."""
    n_records = check_int("n_records", n_records, minimum=1)
    T = check_int("T", T, minimum=1)
    K = check_int("K", K, minimum=1)
    B1 = check_int("B1", B1, minimum=1)
    B2 = check_int("B2", B2, minimum=1)
    needed = K * (B1 + B2 * (T - 1))
    if n_records < needed:
        raise ValueError(f"data has M = {n_records} records but Algorithm 4 with K = {K}, T = {T}, B1 = {B1}, "
                         f"B2 = {B2} reads K·(B1 + B2(T − 1)) = {needed} records, each once: {needed} records are "
                         f"needed")
    return single_pass_partition(n_records, K, (B1,) + (B2,) * (T - 1))


def alg6_partition(n_records, T, K, batch_size) -> Partition:
    """zo_o2nc Alg 6's partition: K·T batches Z_t^k of B records (M ≥ BKT; the paper assumes equality)."""
    n_records = check_int("n_records", n_records, minimum=1)
    T = check_int("T", T, minimum=1)
    K = check_int("K", K, minimum=1)
    B = check_int("batch_size", batch_size, minimum=1)
    needed = K * T * B
    if n_records < needed:
        raise ValueError(f"data has M = {n_records} records but Algorithm 6 with K = {K}, T = {T}, B = {B} reads "
                         f"K·T·B = {needed} records, each once: {needed} records are needed")
    return single_pass_partition(n_records, K, (B,) * T)


# ---------------------------------------------------------------------------------------------------
# Directions (public, keyed by the round)


def directions_for_round(seed, k, t, records, d, per_record=None, *, arithmetic="float64") -> np.ndarray:
    """The directions u_ij of round (k, t), regenerated from the public key ("zo_o2nc", "direction", k, t).

    One ``sample_sphere(rng, (records, per_record), d)`` call (unit sphere U_S): shape (records, per_record, d).
    per_record = d (default) for GRAD and DIFF (Alg 1/2 line 1: d directions per record); 1 for Alg 6.
    Bitwise identical on every call; never a function of data (erratum zo_o2nc.E15).
    """
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    k = check_int("k", k, minimum=1)
    t = check_int("t", t, minimum=1)
    records = check_int("records", records, minimum=1)
    d = check_int("d", d, minimum=1)
    per_record = d if per_record is None else check_int("per_record", per_record, minimum=1)
    rng = Streams(seed).generator(KEY, "direction", k, t)
    return sample_sphere(rng, (records, per_record), d, arithmetic=arithmetic)


# ---------------------------------------------------------------------------------------------------
# Per-record finite differences (shared by the oracles)


def _evaluate(loss, point, row, use_mp, where):
    """f(point; row) as a float or mpf; a non-finite value is returned as it is (replaced by the caller)."""
    return real_value(loss(point, row), use_mp, where)


class _Oracle:
    """What Alg 4 and Alg 6 share: the partition, the query order, the per-record finite differences with their
    non-finite replacement and optional Lipschitz clipping, and the non-private record of every round."""

    def __init__(self, loss, data, partition, *, d, smoothing_radius, lipschitz, enforce_lipschitz, seed,
                 noise_rng, use_mp):
        if not callable(loss):
            raise TypeError(f"loss must be callable as loss(x, z), got {type(loss).__name__}")
        self.loss = loss
        self.data = _read_only(data)
        self.partition = partition
        self.d = d
        self.use_mp = use_mp
        self.smoothing_radius = mpmath.mpf(smoothing_radius) if use_mp else float(smoothing_radius)
        self.lipschitz = None if lipschitz is None else (mpmath.mpf(lipschitz) if use_mp else float(lipschitz))
        self.enforce_lipschitz = bool(enforce_lipschitz)
        if self.enforce_lipschitz and self.lipschitz is None:
            raise ValueError("enforce_lipschitz=True needs lipschitz (the bound each finite difference is clipped to)")
        self.seed = seed
        self.noise_rng = noise_rng
        self._next = (1, 1)
        # non-private record of every round (NonPrivateDiagnostics)
        self.noiseless, self.noise = [], []
        self.nonfinite_counts, self.exceedances = [], []
        self.loss_evaluations = 0

    @property
    def arithmetic(self):
        return "mpmath" if self.use_mp else "float64"

    def _check_order(self, k, t):
        """Queries come as (1, 1), (1, 2), …, (K, T): a block is read once, the tree restarts with each epoch."""
        k = check_int("k", k, minimum=1)
        t = check_int("t", t, minimum=1)
        if (k, t) != self._next:
            raise ValueError(f"queries must come in the order (1, 1), (1, 2), …, (K, T): expected (k, t) = "
                             f"{self._next}, got {(k, t)} (a repeated or skipped round would reuse or skip records)")
        if k > self.partition.K:
            raise ValueError(f"k must be <= K = {self.partition.K}: the single pass over the data is complete")
        T = self.partition.T
        self._next = (k, t + 1) if t < T else (k + 1, 1)
        return k, t

    def _point(self, w):
        w = check_array("w", w, shape=(self.d,))
        return to_mp(w) if self.use_mp else np.asarray(w, dtype=np.float64)

    def _bounded(self, difference, bound, counts):
        """A finite difference after the non-finite replacement (NaN -> 0, ±inf -> ±bound) and, with
        enforce_lipschitz, the clip to [−bound, bound]. counts = [nonfinite, exceeding]."""
        if not _is_finite(difference):
            counts[0] += 1
            if mpmath.isnan(difference):
                return mpmath.mpf(0) if self.use_mp else 0.0
            if bound is None:
                raise ValueError("loss gave an infinite finite difference and lipschitz is not given, so nothing "
                                 "bounds it (pass lipschitz to replace it by its Lipschitz bound)")
            return bound if difference > 0 else -bound
        if bound is not None and abs(difference) > bound:
            counts[1] += 1
            if self.enforce_lipschitz:
                return bound if difference > 0 else -bound
        return difference

    def _two_point(self, w, batch, directions, counts):
        """(1/b) Σ_i (1/m) Σ_j (d/(2δ))(f(w+δu_ij; z_i) − f(w−δu_ij; z_i)) u_ij: GRAD (Alg 1, m = d) and
        Alg 6's estimate (m = 1). Same operations, in the same order, as ``estimators.two_point_estimate``."""
        b, m = directions.shape[0], directions.shape[1]
        h = self.smoothing_radius
        bound = None if self.lipschitz is None else 2 * self.lipschitz * h  # |f(w+δu) − f(w−δu)| ≤ 2Lδ
        scale = self.d
        total = _zeros(self.d, self.use_mp)
        for i in range(b):
            sample_sum = _zeros(self.d, self.use_mp)
            for j in range(m):
                u = directions[i, j]
                step = h * u
                where = f"record i={i} of the block, direction j={j} (0-based)"
                f_plus = _evaluate(self.loss, w + step, batch[i], self.use_mp, where)
                f_minus = _evaluate(self.loss, w - step, batch[i], self.use_mp, where)
                with np.errstate(invalid="ignore", over="ignore"):
                    difference = f_plus - f_minus
                difference = self._bounded(difference, bound, counts)
                fd = difference / (2 * h)
                sample_sum = sample_sum + (scale * fd) * u
            total = total + sample_sum / m
        self.loss_evaluations += 2 * b * m
        return total / b

    def _difference(self, x, y, batch, directions, counts, step_bound):
        """DIFF(x, y; z_{1:b}) = (1/b) Σ_i (1/d) Σ_j (d/δ)(f(x+δu_ij; z_i) − f(y+δu_ij; z_i)) u_ij (Alg 2), the same
        u_ij at x and y. Same operations, in the same order, as ``estimators.diff_estimate``."""
        b, m = directions.shape[0], directions.shape[1]
        h = self.smoothing_radius
        bound = None
        if self.lipschitz is not None:
            bound = self.lipschitz * min(norm(x - y), 2 * step_bound)  # |f(x+δu) − f(y+δu)| ≤ L‖x − y‖ ≤ 2LD
        scale = self.d
        total = _zeros(self.d, self.use_mp)
        for i in range(b):
            sample_sum = _zeros(self.d, self.use_mp)
            for j in range(m):
                u = directions[i, j]
                step = h * u
                where = f"record i={i} of the block, direction j={j} (0-based)"
                f_x = _evaluate(self.loss, x + step, batch[i], self.use_mp, where)
                f_y = _evaluate(self.loss, y + step, batch[i], self.use_mp, where)
                with np.errstate(invalid="ignore", over="ignore"):
                    difference = f_x - f_y
                difference = self._bounded(difference, bound, counts)
                sample_sum = sample_sum + (scale * difference / h) * u
            total = total + sample_sum / m
        self.loss_evaluations += 2 * b * m
        return total / b

    def _batch(self, k, t):
        return self.data[self.partition.block(k, t)]

    def _record(self, g, noise, counts):
        self.noiseless.append(g)
        self.noise.append(noise)
        self.nonfinite_counts.append(counts[0])
        self.exceedances.append(counts[1])


class VarianceReducedOracle(_Oracle):
    """zo_o2nc Algorithm 4: the private variance-reduced gradient oracle (with Alg 5's tree noise).

    loss: f(x; z), called as ``loss(point, row)`` -> real. data: (M, p) records. partition: ``alg4_partition``.
    d: dimension. smoothing_radius: δ. step_bound: D (the learner's radius; DIFF is accounted with
    ‖w_t − w_{t−1}‖ ≤ 2D and a query further away is refused). noise_stds: σ_1..σ_T (σ ≡ σ in the paper; zeros
    for the non-private twin). lipschitz: L (None only without privacy). enforce_lipschitz: module doc.
    seed: the public seed (directions). noise_rng: the secret generator ("zo_o2nc", "noise").
    use_mp: run in mpmath.

    ``query(k, t, w)`` (1-based, in order) returns g̃_t^k = g_t^k + TREE(t), keeping the NOISELESS running sum
    g_t^k internally (``last_noiseless``; ``last_noise`` is TREE(t)). Paper lines (Alg 4 "On query"):
        t = 1:  g_1^k = GRAD_{f,δ}(w_1^k, Z_1^k)                                   B1 records, (B1, d, d) directions
        t ≥ 2:  d_t^k = DIFF_{f,δ}(w_t^k, w_{t−1}^k, Z_t^k); g_t^k = g_{t−1}^k + d_t^k   B2 records, (B2, d, d)
        return  g̃_t^k = g_t^k + TREE(t)                                           TREE reset at t = 1
    """

    def __init__(self, loss, data, partition, *, d, smoothing_radius, step_bound, noise_stds, lipschitz=None,
                 enforce_lipschitz=False, seed, noise_rng, use_mp=False):
        super().__init__(loss, data, partition, d=d, smoothing_radius=smoothing_radius, lipschitz=lipschitz,
                         enforce_lipschitz=enforce_lipschitz, seed=seed, noise_rng=noise_rng, use_mp=use_mp)
        self.step_bound = mpmath.mpf(step_bound) if use_mp else float(step_bound)
        self.tree = TreeMechanism(d, noise_stds, noise_rng)
        if self.tree.horizon != partition.T:
            raise ValueError(f"noise_stds must have T = {partition.T} entries (one σ_t per round), "
                             f"got {self.tree.horizon}")
        self._g = None
        self._w_previous = None
        self.last_noiseless = None
        self.last_noise = None

    def query(self, k, t, w):
        """g̃_t^k for the query point w = w_t^k (Alg 4 "On query"; module doc)."""
        k, t = self._check_order(k, t)
        w = self._point(w)
        batch = self._batch(k, t)
        counts = [0, 0]
        directions = directions_for_round(self.seed, k, t, batch.shape[0], self.d, arithmetic=self.arithmetic)
        if t == 1:
            g = self._two_point(w, batch, directions, counts)                                      # GRAD (Alg 1)
        else:
            gap = norm(w - self._w_previous)
            if gap > 2 * self.step_bound * (1 + STEP_TOLERANCE):
                raise ValueError(f"query point moved ‖w_t − w_(t−1)‖ = {gap} > 2D = {2 * self.step_bound} at "
                                 f"(k, t) = {(k, t)}: the DIFF sensitivity of zo_o2nc Lemma 3.2 is accounted with "
                                 "‖w_t − w_(t−1)‖ ≤ 2D (Remark 4.1)")
            d_t = self._difference(w, self._w_previous, batch, directions, counts, self.step_bound)  # DIFF (Alg 2)
            g = self._g + d_t                                                                       # noiseless sum
        noise = self.tree(t)                                                                        # TREE(t) (Alg 5)
        released = g + noise
        self._g, self._w_previous = g, w
        self.last_noiseless, self.last_noise = g, noise
        self._record(g, noise, counts)
        return released


class NaiveOracle(_Oracle):
    """zo_o2nc Algorithm 6 (App. E): the naive private gradient oracle.

    Arguments as ``VarianceReducedOracle`` with partition = ``alg6_partition`` and one noise_std σ.
    ``query(k, t, w)`` (1-based, in order), paper lines:
        u_1..u_B ~ U_S                      ONE direction per record: (B, 1, d) from ("zo_o2nc", "direction", k, t)
        g = (1/B) Σ_i (d/(2δ))(f(w+δu_i; z_i) − f(w−δu_i; z_i)) u_i,  z_i the i-th record of Z_t^k
        return g̃ = g + ξ,  ξ = σ·z, z = noise_rng.standard_normal(d), fresh for every (k, t)
    """

    def __init__(self, loss, data, partition, *, d, smoothing_radius, noise_std, lipschitz=None,
                 enforce_lipschitz=False, seed, noise_rng, use_mp=False):
        super().__init__(loss, data, partition, d=d, smoothing_radius=smoothing_radius, lipschitz=lipschitz,
                         enforce_lipschitz=enforce_lipschitz, seed=seed, noise_rng=noise_rng, use_mp=use_mp)
        sigma = check_real("noise_std", noise_std, nonnegative=True)
        self.noise_std = mpmath.mpf(sigma) if use_mp else float(sigma)
        self.last_noiseless = None
        self.last_noise = None

    def query(self, k, t, w):
        """g̃_t^k = g_t^k + ξ_t^k (Alg 6 "On query"; class doc)."""
        k, t = self._check_order(k, t)
        w = self._point(w)
        batch = self._batch(k, t)
        counts = [0, 0]
        directions = directions_for_round(self.seed, k, t, batch.shape[0], self.d, 1, arithmetic=self.arithmetic)
        g = self._two_point(w, batch, directions, counts)
        z = self.noise_rng.standard_normal(self.d)
        noise = to_mp(z) * self.noise_std if self.use_mp else self.noise_std * z
        released = g + noise
        self.last_noiseless, self.last_noise = g, noise
        self._record(g, noise, counts)
        return released


# ---------------------------------------------------------------------------------------------------
# What a run returns


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """The hyper-parameters a run used. Every field is public.

    oracle: "variance_reduced" (Alg 4) or "naive" (Alg 6). source: "thm49_settings", "naive_settings" or
    "explicit". d; records_available (M); records_used. T, K. block_sizes: (B1, B2) or (B, B).
    smoothing_radius (δ), step_bound (D), step_size (η), noise_std (σ, 0 without noise). noise_rule: how σ was
    chosen ("exact", "paper_2lnT", "paper", "given", or "none"). lipschitz (L or None), enforce_lipschitz.
    arithmetic: "float64" or "mpmath".
    """

    oracle: str
    source: str
    d: int
    records_available: int
    records_used: int
    T: int
    K: int
    block_sizes: tuple
    smoothing_radius: float
    step_bound: float
    step_size: float
    noise_std: float
    noise_rule: str
    lipschitz: float | None
    enforce_lipschitz: bool
    arithmetic: str


@dataclasses.dataclass(frozen=True)
class Ledger:
    """What a run spent. Every field is public (docs/design.md, threat model).

    algorithm: "zo_o2nc" (Alg 3 + 4), "zo_o2nc_naive" (Alg 3 + 6), or "o2nc_variance_reduced" /
    "o2nc_naive" for the runs without noise. plan: the ``ZoO2ncPrivacyPlan`` (None without noise): ρ and ε under
    the printed and the exact rules, the accountant's ε, and the ε claimed. settings: the ``RunSettings``.
    seed: the public seed. secret_seed_source: "os_entropy" or "user" (None without noise);
    guarantee_condition: what the guarantee assumes about that seed (None without noise). The secret seed itself
    is never recorded.
    """

    algorithm: str
    plan: ZoO2ncPrivacyPlan | None
    settings: RunSettings
    seed: int
    secret_seed_source: str | None
    guarantee_condition: str | None

    @property
    def epsilon_spent(self):
        """The ε the plan claims for this run (None when the run is not private)."""
        return None if self.plan is None else self.plan.epsilon_claimed


@dataclasses.dataclass(frozen=True)
class NonPrivateDiagnostics:
    """Values computed on the PRIVATE data or from the SECRET seed: NOT covered by the privacy plan. Never publish.

    noiseless_sums: g_t^k before noise, shape (K, T, d) (Alg 4: the noiseless running sums; Alg 6: the estimate).
    noise: what was added, shape (K, T, d) (Alg 4: TREE(t); Alg 6: ξ_t^k). releases − noiseless_sums is the noise.
    nonfinite_counts: per (k, t), the finite differences that were NaN or ±∞ and were replaced (module doc).
    lipschitz_exceedances: per (k, t), the finite finite differences larger than their Lipschitz bound (clipped
    when enforce_lipschitz; evidence against the stated L otherwise). loss_evaluations: total over the run.
    """

    noiseless_sums: np.ndarray
    noise: np.ndarray
    nonfinite_counts: np.ndarray
    lipschitz_exceedances: np.ndarray
    loss_evaluations: int


@dataclasses.dataclass(frozen=True)
class DPResult:
    """Output of a run (module doc, "What a run returns"). Epoch k is row k − 1, round t column t − 1.

    The private output the plan covers: output: w̄ = w̄^{k*} (Alg 3 line 9). output_index: k* − 1.
    epoch_averages: w̄^1..w̄^K, (K, d). final_iterate: x_{T+1}^K. releases: g̃_t^k, (K, T, d) — the released
    sequence. segment_points: s_t^k, (K, T) (public). query_points (w_t^k, (K, T, d)), iterates (x_1^k..x_{T+1}^k,
    (K, T + 1, d)) and steps (Δ_t^k, (K, T, d)) when record_path, else None.
    ledger: the public ``Ledger``. diagnostics: ``NonPrivateDiagnostics`` — NOT covered by the plan.
    """

    output: np.ndarray
    output_index: int
    epoch_averages: np.ndarray
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


def _float_up(value) -> float:
    """The smallest float64 ≥ value (σ is rounded up, so the run is at least as noisy as calibrated)."""
    out = float(value)
    if mpmath.mpf(out) < value:
        out = math.nextafter(out, math.inf)
    return out


@dataclasses.dataclass(frozen=True)
class _Hyper:
    T: int
    K: int
    block_sizes: tuple
    smoothing_radius: float
    step_bound: float
    step_size: float
    noise_std: float
    noise_rule: str
    rho: float | None
    lipschitz: float | None
    source: str


_SETTINGS_FIELDS = ("T", "K", "B1", "B2", "batch_size", "smoothing_radius", "step_bound", "step_size", "rho",
                    "noise_std", "lipschitz")


def _from_settings(settings, kind, d, explicit, noise):
    given = [name for name, value in explicit.items() if value is not None]
    if given:
        raise ValueError(f"pass either settings or the hyper-parameters one by one, not both (got settings and "
                         f"{', '.join(given)})")
    if not isinstance(settings, kind):
        raise TypeError(f"settings must be a {kind.__name__}, got {type(settings).__name__}")
    if settings.d != d:
        raise ValueError(f"settings are for d = {settings.d} but x1 has d = {d} coordinates")
    if settings.rho is None and noise == "gaussian":
        raise ValueError("settings have rho=None (a non-private run): pass noise='none'")
    private = noise == "gaussian"
    sigma = _float_up(settings.noise_std) if private else 0.0
    if kind is Theorem49Settings:
        blocks, rule, source = (settings.B1, settings.B2), settings.count_rule, "thm49_settings"
    else:
        blocks, rule, source = (settings.batch_size,) * 2, settings.sigma_rule, "naive_settings"
    return _Hyper(settings.T, settings.K, blocks, float(settings.smoothing_radius), float(settings.step_bound),
                  float(settings.step_size), sigma, rule if private else "none",
                  None if settings.rho is None else float(settings.rho), float(settings.lipschitz), source)


def _explicit(kind, d, noise, *, T, K, blocks, smoothing_radius, step_bound, step_size, rho, noise_std, rule,
              lipschitz):
    T = check_int("T", T, minimum=1) if T is not None else _missing("T")
    K = check_int("K", K, minimum=1) if K is not None else _missing("K")
    delta = float(check_real("smoothing_radius", smoothing_radius, positive=True)) if smoothing_radius is not None \
        else _missing("smoothing_radius")
    D = delta / T if step_bound is None else float(check_real("step_bound", step_bound, positive=True))
    eta = float(check_real("step_size", step_size, positive=True)) if step_size is not None else _missing("step_size")
    if lipschitz is not None:
        lipschitz = float(check_real("lipschitz", lipschitz, positive=True))
    private = noise == "gaussian"
    if not private:
        if rho is not None or noise_std is not None:
            raise ValueError("rho and noise_std must be None when noise='none' (the run is not private)")
        return _Hyper(T, K, blocks, delta, D, eta, 0.0, "none", None, lipschitz, "explicit")
    if lipschitz is None:
        raise ValueError("a private run needs lipschitz (L: the sensitivities of zo_o2nc Lemmas 3.1/3.2 assume every "
                         "f(·, z) is L-Lipschitz)")
    if (rho is None) == (noise_std is None):
        raise ValueError("a private run needs exactly one of rho (σ calibrated by the noise rule) and noise_std "
                         "(σ given; the plan reports the rho it gives)")
    if noise_std is not None:
        sigma = float(check_real("noise_std", noise_std, positive=True))
        return _Hyper(T, K, blocks, delta, D, eta, sigma, "given", None, lipschitz, "explicit")
    rho = float(check_real("rho", rho, positive=True))
    with mpmath.workprec(max(mpmath.mp.prec, PLAN_PRECISION_BITS)):  # then rounded UP to float64
        if kind == "variance_reduced":
            sigma = zo_o2nc_tree_noise_std(d, lipschitz, T, blocks[0], blocks[1], delta, D, rho, rule)
        else:
            sigma = zo_o2nc_naive_noise_std(d, lipschitz, blocks[0], rho, rule)
    return _Hyper(T, K, blocks, delta, D, eta, _float_up(sigma), rule, rho, lipschitz, "explicit")


def _missing(name):
    raise ValueError(f"{name} is required (or pass settings)")


def _check_noise(noise, dp_delta):
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    if noise == "none" and dp_delta is not None:
        raise ValueError("dp_delta must be None when noise='none' (the run is not private)")
    if noise == "gaussian" and dp_delta is None:
        raise ValueError("a private run (noise='gaussian') needs dp_delta (δ of the (ε, δ) statements in the ledger)")


def _inputs(data, x1, seed, noise_seed, private):
    data = check_array("data", data, ndim=2)
    if data.shape[0] < 1:
        raise ValueError("data must have at least one row (M >= 1)")
    x1 = check_array("x1", x1, ndim=1)
    if x1.shape[0] < 1:
        raise ValueError("x1 must have at least one coordinate (d >= 1)")
    use_mp = is_mp(x1)
    if use_mp:
        x1, data = to_mp(x1), to_mp(data)
    else:
        x1 = np.array(x1, dtype=np.float64)
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    if noise_seed is None and not private:
        secret = None
    else:
        secret = secret_seed(noise_seed, public_seeds=(seed,), name="noise_seed")
    return data, x1, use_mp, seed, secret


def _noise_generator(seed, secret: SecretSeed | None):
    """("zo_o2nc", "noise") under the secret seed (the public seed's stream for a run without a secret: σ = 0)."""
    streams = Streams(seed) if secret is None else secret.streams()
    return streams.generator(KEY, "noise")


def partition_and_plan(oracle_kind, hyper: _Hyper, d, M, *, private, dp_delta, enforce_lipschitz):
    """The single-pass partition of M records and the privacy plan (None when not private) of a run; shared with
    the fast twin, so both refuse the same data sizes and state the same ledger."""
    T, K, (b_first, b_later) = hyper.T, hyper.K, hyper.block_sizes
    if oracle_kind == "variance_reduced":
        partition = alg4_partition(M, T, K, b_first, b_later)
    else:
        partition = alg6_partition(M, T, K, b_first)
    plan = None
    if private:
        common = dict(d=d, lipschitz=hyper.lipschitz, T=T, K=K, noise_std=hyper.noise_std, dp_delta=dp_delta,
                      rho_target=hyper.rho, noise_rule=hyper.noise_rule, enforce_lipschitz=enforce_lipschitz)
        if oracle_kind == "variance_reduced":
            plan = zo_o2nc_privacy_plan(B1=b_first, B2=b_later, smoothing_radius=hyper.smoothing_radius,
                                        step_bound=hyper.step_bound, **common)
        else:
            plan = zo_o2nc_naive_privacy_plan(batch_size=b_first, **common)
    return partition, plan


def _run(oracle_kind, loss, data, x1, hyper: _Hyper, *, seed, noise_seed, noise, dp_delta, enforce_lipschitz,
         record_path):
    private = noise == "gaussian"
    data, x1, use_mp, seed, secret = _inputs(data, x1, seed, noise_seed, private)
    d, M = x1.shape[0], data.shape[0]
    T, K = hyper.T, hyper.K
    partition, plan = partition_and_plan(oracle_kind, hyper, d, M, private=private, dp_delta=dp_delta,
                                         enforce_lipschitz=enforce_lipschitz)
    conv = mpmath.mpf if use_mp else float
    noise_rng = _noise_generator(seed, secret)
    shared = dict(d=d, smoothing_radius=hyper.smoothing_radius, lipschitz=hyper.lipschitz,
                  enforce_lipschitz=enforce_lipschitz, seed=seed, noise_rng=noise_rng, use_mp=use_mp)
    if oracle_kind == "variance_reduced":
        stds = np.empty(T, dtype=object) if use_mp else np.full(T, hyper.noise_std)
        if use_mp:
            stds.fill(mpmath.mpf(hyper.noise_std))
        oracle = VarianceReducedOracle(loss, data, partition, step_bound=hyper.step_bound, noise_stds=stds, **shared)
    else:
        oracle = NaiveOracle(loss, data, partition, noise_std=hyper.noise_std, **shared)
    learner = ProjectedOSD(d, conv(hyper.step_bound), conv(hyper.step_size), arithmetic=oracle.arithmetic)
    path = o2nc(oracle, learner, x1, T, K, rng_public=Streams(seed).child(KEY), record_path=record_path)

    dtype = object if use_mp else np.float64
    settings = RunSettings(oracle_kind, hyper.source, d, M, partition.records_used, T, K, hyper.block_sizes,
                           hyper.smoothing_radius, hyper.step_bound, hyper.step_size, hyper.noise_std,
                           hyper.noise_rule, hyper.lipschitz, bool(enforce_lipschitz), oracle.arithmetic)
    if private:
        name = "zo_o2nc" if oracle_kind == "variance_reduced" else "zo_o2nc_naive"
    else:
        name = "o2nc_variance_reduced" if oracle_kind == "variance_reduced" else "o2nc_naive"
    ledger = Ledger(name, plan, settings, seed, secret.source if private else None,
                    secret.guarantee_condition if private else None)
    diagnostics = NonPrivateDiagnostics(
        noiseless_sums=np.array(oracle.noiseless, dtype=dtype).reshape(K, T, d),
        noise=np.array(oracle.noise, dtype=dtype).reshape(K, T, d),
        nonfinite_counts=np.array(oracle.nonfinite_counts, dtype=np.int64).reshape(K, T),
        lipschitz_exceedances=np.array(oracle.exceedances, dtype=np.int64).reshape(K, T),
        loss_evaluations=oracle.loss_evaluations,
    )
    return DPResult(output=path.output, output_index=path.output_index, epoch_averages=path.epoch_averages,
                    final_iterate=path.final_point, releases=path.oracle_outputs, segment_points=path.segment_points,
                    query_points=path.query_points, iterates=path.iterates, steps=path.steps, ledger=ledger,
                    diagnostics=diagnostics)


def variance_reduced_hyper(x1, *, settings, T, K, B1, B2, smoothing_radius, step_bound, step_size, rho, noise_std,
                           count_rule, lipschitz, noise, dp_delta) -> _Hyper:
    """The hyper-parameters of an Algorithm 4 run (``zo_o2nc``'s arguments, checked), shared with the fast twin."""
    _check_noise(noise, dp_delta)
    d = check_array("x1", x1, ndim=1).shape[0]
    explicit = dict(T=T, K=K, B1=B1, B2=B2, smoothing_radius=smoothing_radius, step_bound=step_bound,
                    step_size=step_size, rho=rho, noise_std=noise_std, lipschitz=lipschitz)
    if settings is not None:
        hyper = _from_settings(settings, Theorem49Settings, d, explicit, noise)
    else:
        if count_rule not in TREE_RULES:
            raise ValueError(f"count_rule must be one of {TREE_RULES}, got {count_rule!r}")
        B1 = check_int("B1", B1, minimum=1) if B1 is not None else _missing("B1")
        B2 = 1 if B2 is None else check_int("B2", B2, minimum=1)
        hyper = _explicit("variance_reduced", d, noise, T=T, K=K, blocks=(B1, B2), smoothing_radius=smoothing_radius,
                          step_bound=step_bound, step_size=step_size, rho=rho, noise_std=noise_std, rule=count_rule,
                          lipschitz=lipschitz)
    return hyper


def naive_hyper(x1, *, settings, T, K, batch_size, smoothing_radius, step_bound, step_size, rho, noise_std,
                sigma_rule, lipschitz, noise, dp_delta) -> _Hyper:
    """The hyper-parameters of an Algorithm 6 run (``zo_o2nc_naive``'s arguments, checked), shared with the fast twin."""
    _check_noise(noise, dp_delta)
    d = check_array("x1", x1, ndim=1).shape[0]
    explicit = dict(T=T, K=K, batch_size=batch_size, smoothing_radius=smoothing_radius, step_bound=step_bound,
                    step_size=step_size, rho=rho, noise_std=noise_std, lipschitz=lipschitz)
    if settings is not None:
        hyper = _from_settings(settings, NaiveSettings, d, explicit, noise)
    else:
        if sigma_rule not in NAIVE_SIGMA_RULES:
            raise ValueError(f"sigma_rule must be one of {NAIVE_SIGMA_RULES}, got {sigma_rule!r}")
        B = check_int("batch_size", batch_size, minimum=1) if batch_size is not None else _missing("batch_size")
        hyper = _explicit("naive", d, noise, T=T, K=K, blocks=(B, B), smoothing_radius=smoothing_radius,
                          step_bound=step_bound, step_size=step_size, rho=rho, noise_std=noise_std, rule=sigma_rule,
                          lipschitz=lipschitz)
    return hyper


def zo_o2nc(loss, data, x1, *, settings=None, T=None, K=None, B1=None, B2=None, smoothing_radius=None,
            step_bound=None, step_size=None, rho=None, noise_std=None, count_rule="exact", lipschitz=None,
            dp_delta=None, seed, noise_seed=None, noise="gaussian", enforce_lipschitz=False,
            record_path=False) -> DPResult:
    """zo_o2nc Algorithm 3 + projected OSD + Algorithm 4 (the algorithm of Theorem 4.9), one whole run.

    Args:
        loss: per-record loss f(x; z), called as ``loss(point, row)`` (point (d,), row (p,)) -> real.
        data: Z = (z_1..z_M), shape (M, p); read once, in index order (``alg4_partition``).
        x1: x_1^1, shape (d,), data-independent; float64, or an mpmath object array to run in mpmath.
        settings: a ``Theorem49Settings`` (``zo_o2nc_theory.thm49_settings``) supplying T, K, B1, B2, δ, D, η, σ,
            ρ and L — or None and the hyper-parameters one by one:
        T, K: rounds per epoch and epochs. B1: GRAD batch (t = 1). B2: DIFF batch (t ≥ 2; default 1).
        smoothing_radius: δ. step_bound: D, the learner's radius (default δ/T, Theorem 4.9).
        step_size: η of projected OSD (``zo_o2nc_theory.osd_step_size``; the paper says "tuned", zo_o2nc.E10).
        rho: target ρ of (α, αρ²/2)-RDP, σ from ``zo_o2nc_tree_noise_std`` with ``count_rule`` ("exact", default,
            or "paper_2lnT", Corollary 4.4 as printed, erratum zo_o2nc.E3); or noise_std: σ given (the ledger
            reports the ρ it gives). σ is rounded up to float64.
        lipschitz: L, with every f(·, z) L-Lipschitz (required for a private run).
        dp_delta: δ_DP of the (ε, δ) statements of the ledger (required for a private run).
        seed: the public seed (directions, s_t^k, k*), an int in [0, 2^128); it may be published.
        noise_seed: the secret seed of the tree noise — None (fresh operating-system entropy, the default), an int
            different from seed, or a ``reference.secrets.SecretSeed``.
        noise: "gaussian" (private) or "none" (σ = 0: the non-private twin with the same T, K, η and seeds).
        enforce_lipschitz: clip each finite difference to its Lipschitz bound (module doc; default off).
        record_path: also return every w_t^k, x_t^k, Δ_t^k.

    Raises ValueError when the data cannot hold K epochs (naming the records needed), for inconsistent
    arguments, and when a query point moves more than 2D (it cannot, with ``ProjectedOSD``).
    """
    hyper = variance_reduced_hyper(x1, settings=settings, T=T, K=K, B1=B1, B2=B2, smoothing_radius=smoothing_radius,
                                   step_bound=step_bound, step_size=step_size, rho=rho, noise_std=noise_std,
                                   count_rule=count_rule, lipschitz=lipschitz, noise=noise, dp_delta=dp_delta)
    return _run("variance_reduced", loss, data, x1, hyper, seed=seed, noise_seed=noise_seed, noise=noise,
                dp_delta=dp_delta, enforce_lipschitz=enforce_lipschitz, record_path=record_path)


def zo_o2nc_naive(loss, data, x1, *, settings=None, T=None, K=None, batch_size=None, smoothing_radius=None,
                  step_bound=None, step_size=None, rho=None, noise_std=None, sigma_rule="exact", lipschitz=None,
                  dp_delta=None, seed, noise_seed=None, noise="gaussian", enforce_lipschitz=False,
                  record_path=False) -> DPResult:
    """zo_o2nc Algorithm 3 + projected OSD + Algorithm 6 (App. E, the naive private oracle), one whole run.

    Arguments as ``zo_o2nc`` with settings a ``NaiveSettings`` (``zo_o2nc_theory.naive_settings``) and
    batch_size (B, records per query) for B1/B2. With rho, σ = 2dL/(Bρ) (``sigma_rule="exact"``, default: the
    replace-one sensitivity is 2dL/B, erratum zo_o2nc.E8) or the printed dL/(Bρ) (``sigma_rule="paper"``,
    labelled in the ledger: the run is then only (α, α(2ρ)²/2)-RDP).
    """
    hyper = naive_hyper(x1, settings=settings, T=T, K=K, batch_size=batch_size, smoothing_radius=smoothing_radius,
                        step_bound=step_bound, step_size=step_size, rho=rho, noise_std=noise_std, sigma_rule=sigma_rule,
                        lipschitz=lipschitz, noise=noise, dp_delta=dp_delta)
    return _run("naive", loss, data, x1, hyper, seed=seed, noise_seed=noise_seed, noise=noise, dp_delta=dp_delta,
                enforce_lipschitz=enforce_lipschitz, record_path=record_path)


def o2nc_nonprivate(loss, data, x1, *, T, K, smoothing_radius, step_size, seed, step_bound=None, batch_size=1,
                    lipschitz=None, enforce_lipschitz=False, record_path=False) -> DPResult:
    """Non-private O2NC: Algorithm 3 + projected OSD + Algorithm 6 with σ = 0 (Kornowski–Shamir 2023; B = 1 by
    default), for zo_o2nc Lemma 4.6 and Corollary 4.7. ``zo_o2nc(..., noise="none")`` is the σ = 0 twin with the
    variance-reduced oracle. Arguments as ``zo_o2nc_naive``; no noise, no ledger plan."""
    return zo_o2nc_naive(loss, data, x1, T=T, K=K, batch_size=batch_size, smoothing_radius=smoothing_radius,
                         step_bound=step_bound, step_size=step_size, lipschitz=lipschitz, seed=seed, noise="none",
                         enforce_lipschitz=enforce_lipschitz, record_path=record_path)
