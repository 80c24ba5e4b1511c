"""zo_o2nc Algorithms 3, 4 and 6 (Zhang, Tran, Cutkosky, ICLR 2024): vectorized float64 twin of
``reference.algorithms.zo_o2nc``.

Same names, signatures, semantics and random draws as the reference (its module docstring gives the stream keys
and the draw schedule), so that runs agree draw for draw (validated by ``proofs_checks/claims/zo_o2nc/
backend_run.py`` and tests/test_fast_zo_o2nc.py). The argument checks, the single-pass partition and its
refusals, the privacy plans, σ, and the result types (``DPResult``, ``Ledger``, ``RunSettings``,
``NonPrivateDiagnostics``) are the reference's own objects; the reference's oracle and learner constructors are
run on the arguments (they draw nothing) so that a bad argument is refused with the reference's words. The
differences:

* **Vectorized inside a round.** The K·T rounds stay a Python loop (each query point is post-processing of the
  previous release); a round evaluates the loss ONCE on all b·m directions of its block: ``loss(points, rows)``
  with points of shape (2, b, m, d) — [w + δu, w − δu] for GRAD (Alg 1) and Alg 6, [w_t + δu, w_{t−1} + δu]
  for DIFF (Alg 2, the SAME u at both points) — and rows = the block's records as a read-only (b, 1, p) view,
  returning shape (2, b, m); with R replicates points are (2, R, b, m, d) and the result (2, R, b, m). This is
  how the objectives of ``reference.objectives`` broadcast (and how ``reference.fast.estimators`` calls them).
* **Scalar losses.** The first round probes the vectorized call: if it raises, returns another shape or a
  non-real dtype, or if its first and last values are not bitwise the values of the scalar calls
  ``loss(point (d,), row (p,))`` that the reference makes for the same entries, the run evaluates the loss one
  point and one record at a time, in the reference's order and through its checks (so a loss the reference
  refuses is refused with the same error), for the rest of the run. A later vectorized call that fails falls
  back the same way. The probe's evaluations are not counted in ``loss_evaluations`` (the algorithm's count).
* **Same arithmetic, same order.** Per record and direction the reference's operations (step = δ·u, w ± step,
  f₊ − f₋, the non-finite replacement and Lipschitz clip, (d·fd)·u or (d·Δf/δ)·u); the sums over the m
  directions and then over the b records left to right (``np.cumsum``, the order of the reference's loops),
  then /m and /b; g_t = g_{t−1} + d_t; TREE(t) summed over NODE(t) in order from 0; projected OSD with
  ``reference.precision.norm`` row by row and the reference's shrink loop; w̄^k by ``np.mean`` of each
  replicate's (T, d) block. With a loss that gives bitwise the same values in both calling conventions (the
  objectives of ``reference.objectives`` do: the same NumPy reductions along the last axis) a run is therefore
  bitwise the reference's float64 run: releases, epoch averages, output, path and diagnostics. For any other
  float64 implementation (or another loss) the backend claims check every round against the mpmath reference
  oracle within a derived one-round rounding bound (proofs_checks/claims/zo_o2nc/backend_run.py).
* **Replicates.** ``seed`` may be a 1-D sequence of R public seeds (ints in [0, 2^128)); ``noise_seed`` is then
  None (fresh entropy spawned into R), one int or ``SecretSeed`` (spawned into R), or R distinct ones; an int
  ``seed`` with a sequence ``noise_seed`` runs R replicates on the same public draws (directions, s, k*). The
  rules are ``reference.fast.dpzero``'s (``reference.secrets.secret_seeds``). Replicate r equals the reference's
  single run with seed[r] and the r-th secret seed. Every array of ``DPResult`` gains a leading axis R (output
  (R, d), output_index (R,), epoch_averages (R, K, d), releases (R, K, T, d), …); the ledger is a
  ``ReplicatedLedger`` (seed: the tuple of the public seeds) and the diagnostics ``ReplicatedDiagnostics``
  ((R, K, T, d) sums and noise, (R, K, T) counts, (R,) evaluation counts). ``select_replicate(result, r)``
  returns replicate r as a single-run ``DPResult``. Replicates run in blocks of about ``_BLOCK_BYTES`` of round
  arrays; blocking changes no draw and no arithmetic.
* Everything is float64: an mpmath x1 or data are rounded to float64 first (``arithmetic="float64"`` in the
  ledger's settings).

Randomness: the reference's schedule exactly. Each generator ``Streams(s).generator(*key)`` is rebuilt bit for bit
by ``reference.fast.dpzero``'s vectorized SeedSequence mixing (checked against NumPy on every call, with a
fallback to ``Streams``): the directions of round (k, t) are one ``sample_sphere(rng, (b, m), d)`` call of key
("zo_o2nc", "direction", k, t); s^k = ``random(T)`` of ("zo_o2nc", "segment", k); k* − 1 = ``integers(K)`` of
("zo_o2nc", "output"); the secret noise of a whole run is ONE ``standard_normal((K·T, d))`` call of
("zo_o2nc", "noise"), equal to the reference's K·T successive ``standard_normal(d)`` calls (ξ_t^k = σ·z_t^k;
Alg 4 releases TREE(t) = Σ_{(·,b) ∈ NODE(t)} ξ_b^k, the tree reset at t = 1; Alg 6 releases ξ_t^k).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..algorithms.zo_o2nc import (
    KEY,
    NOISES,
    STEP_TOLERANCE,
    DPResult,
    Ledger,
    NaiveOracle,
    NonPrivateDiagnostics,
    Partition,
    RunSettings,
    VarianceReducedOracle,
    _evaluate,
    _inputs,
    alg4_partition,
    alg6_partition,
    directions_for_round,
    naive_hyper,
    partition_and_plan,
    single_pass_partition,
    variance_reduced_hyper,
)
from ..mechanisms import tree_node as _tree_node  # private: not a protocol of this module
from ..o2nc import _FLOAT_SHRINK, ProjectedOSD, _vector
from ..precision import to_float
from ..rng import _nonzero_gaussian_rows, _normalise
from ..validation import check_array, check_int
from .dpzero import _check_seeds, _generator_factory, _is_seed_array
from .replicates import replicate_of

__all__ = [
    "KEY",
    "NOISES",
    "Partition",
    "single_pass_partition",
    "alg4_partition",
    "alg6_partition",
    "directions_for_round",
    "RunSettings",
    "Ledger",
    "ReplicatedLedger",
    "NonPrivateDiagnostics",
    "ReplicatedDiagnostics",
    "DPResult",
    "zo_o2nc",
    "zo_o2nc_naive",
    "o2nc_nonprivate",
    "select_replicate",
]

#: Rough memory budget of the per-round arrays of one block of replicates (bytes).
_BLOCK_BYTES = 200 * 2**20


# ---------------------------------------------------------------------------------------------------
# Results of R replicates


@dataclasses.dataclass(frozen=True)
class ReplicatedLedger(Ledger):
    """The ``Ledger`` of R replicates (all public): seed is the tuple of the R public seeds; plan, settings,
    secret_seed_source and guarantee_condition are those of the call."""

    @property
    def replicates(self) -> int:
        return len(self.seed)

    def replicate(self, r: int) -> Ledger:
        """The single-run ``Ledger`` of replicate r."""
        r = check_int("r", r, minimum=0, maximum=self.replicates - 1)
        return Ledger(self.algorithm, self.plan, self.settings, int(self.seed[r]), self.secret_seed_source,
                      self.guarantee_condition)


@dataclasses.dataclass(frozen=True, eq=False)
class ReplicatedDiagnostics(NonPrivateDiagnostics):
    """The ``NonPrivateDiagnostics`` of R replicates — NOT covered by the privacy plan, never to be published:
    noiseless_sums and noise (R, K, T, d), nonfinite_counts and lipschitz_exceedances (R, K, T), loss_evaluations
    (R,)."""

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    @property
    def replicates(self) -> int:
        return int(self.nonfinite_counts.shape[0])

    def replicate(self, r: int) -> NonPrivateDiagnostics:
        """The single-run ``NonPrivateDiagnostics`` of replicate r."""
        r = check_int("r", r, minimum=0, maximum=self.replicates - 1)
        return replicate_of(self, r, NonPrivateDiagnostics)


def select_replicate(result: DPResult, r: int) -> DPResult:
    """The single-run ``DPResult`` of replicate r of a replicated run (arrays copied)."""
    if not isinstance(result, DPResult) or not isinstance(result.ledger, ReplicatedLedger):
        raise TypeError("result must be a DPResult of a replicated run (seed or noise_seed a sequence)")
    r = check_int("r", r, minimum=0, maximum=result.ledger.replicates - 1)
    return replicate_of(result, r, DPResult)


# ---------------------------------------------------------------------------------------------------
# The loss, vectorized with a scalar fallback


def _where(i, j):
    return f"record i={i} of the block, direction j={j} (0-based)"  # the reference's words


def _same_values(a, b) -> bool:
    return bool(np.array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), equal_nan=True))


class _Loss:
    """loss(points (2, R, b, m, d), rows (b, p)) -> (2, R, b, m) float64 (module doc, "Scalar losses")."""

    def __init__(self, loss, replicated: bool):
        self.loss = loss
        self.replicated = replicated
        self.mode = None  # None (not probed yet), "vector" or "scalar"

    def _vectorized(self, points, rows):
        grid = rows[:, None, :]  # (b, 1, p): record i against its m directions
        call_points = points if self.replicated else points[:, 0]
        expected = points.shape[:-1] if self.replicated else (points.shape[0], *points.shape[2:-1])
        try:
            values = np.asarray(self.loss(call_points, grid))
            if values.dtype == object:
                values = to_float(values)
        except Exception:  # noqa: BLE001 — a loss written for one point and one row: evaluated one at a time
            return None
        if values.shape != expected or values.dtype.kind not in "fiu":
            return None
        return values.astype(np.float64, copy=False).reshape(points.shape[:-1])

    def _scalar(self, points, rows, index):
        return _evaluate(self.loss, points[index].copy(), rows[index[2]], False, _where(index[2], index[3]))

    def _one_at_a_time(self, points, rows):
        """The reference's order: replicate, record i, direction j, then the two points."""
        _, size, b, m, _ = points.shape
        out = np.empty(points.shape[:-1])
        for r in range(size):
            for i in range(b):
                for j in range(m):
                    for s in range(2):
                        out[s, r, i, j] = self._scalar(points, rows, (s, r, i, j))
        return out

    def __call__(self, points, rows):
        if self.mode == "scalar":
            return self._one_at_a_time(points, rows)
        values = self._vectorized(points, rows)
        if values is not None and self.mode is None:
            first = (0, 0, 0, 0)
            last = tuple(n - 1 for n in values.shape)
            # the reference evaluates the first entry first: a loss it refuses is refused here
            if not (_same_values(values[first], self._scalar(points, rows, first))
                    and _same_values(values[last], self._scalar(points, rows, last))):
                values = None
        if values is None:
            self.mode = "scalar"
            return self._one_at_a_time(points, rows)
        self.mode = "vector"
        return values


# ---------------------------------------------------------------------------------------------------
# One block of replicates


@dataclasses.dataclass(frozen=True)
class _Problem:
    kind: str  # "variance_reduced" | "naive"
    loss: _Loss
    data: np.ndarray  # float64, read-only
    x1: np.ndarray
    partition: Partition
    d: int
    T: int
    K: int
    h: float  # δ
    D: float  # step bound
    eta: float
    sigma: float
    lipschitz: float | None
    enforce: bool
    per_record: int  # m: d (Alg 4) or 1 (Alg 6)
    record_path: bool
    replicated: bool


@dataclasses.dataclass
class _Out:
    output_index: np.ndarray
    epoch_averages: np.ndarray
    final: np.ndarray
    releases: np.ndarray
    segments: np.ndarray
    query_points: np.ndarray | None
    iterates: np.ndarray | None
    steps: np.ndarray | None
    noiseless: np.ndarray
    noise: np.ndarray
    nonfinite: np.ndarray
    exceed: np.ndarray
    evaluations: int


def _shared(seeds) -> bool:
    return all(s == seeds[0] for s in seeds)


def _public_draws(problem: _Problem, seeds: list):
    """s (R', K, T) and k* − 1 (R',), R' = 1 when the public seeds are shared."""
    K, T = problem.K, problem.T
    distinct = seeds[:1] if _shared(seeds) else seeds
    pairs = [s for s in distinct for _ in range(K)]
    segment = _generator_factory(pairs, (KEY, "segment"), np.tile(np.arange(1, K + 1), len(distinct)))
    s = np.empty((len(distinct), K, T))
    for n in range(len(pairs)):
        s[n // K, n % K] = segment(n).random(T)
    output = _generator_factory(distinct, (KEY, "output"))
    index = np.array([int(output(r).integers(K)) for r in range(len(distinct))], dtype=np.int64)
    return s, index


def _noise(problem: _Problem, entropies: list):
    """The released noise (R, K, T, d): TREE(t) per epoch (Alg 4) or ξ_t^k (Alg 6), from one standard_normal
    ((K·T, d)) call per replicate."""
    K, T, d = problem.K, problem.T, problem.d
    generator = _generator_factory(entropies, (KEY, "noise"))
    z = np.empty((len(entropies), K * T, d))
    for r in range(len(entropies)):
        generator(r).standard_normal(out=z[r])
    xi = problem.sigma * z.reshape(len(entropies), K, T, d)
    if problem.kind == "naive":
        return xi
    tree = np.empty_like(xi)
    for t in range(1, T + 1):
        total = np.zeros(xi.shape[:2] + (d,))
        for _, b in _tree_node(t):
            total = total + xi[:, :, b - 1]
        tree[:, :, t - 1] = total
    return tree


def _directions(problem: _Problem, seeds: list, k: int):
    """u of every round of epoch k: a list over t of (R', b_t, m, d), R' = 1 when the public seeds are shared.
    Round (k, t) is ``sample_sphere(rng, (b_t, m), d)`` of its own generator (the reference's sampler, called
    through its two steps to skip the argument checks)."""
    T, d, m = problem.T, problem.d, problem.per_record
    distinct = seeds[:1] if _shared(seeds) else seeds
    pairs = [s for s in distinct for _ in range(T)]
    factory = _generator_factory(pairs, (KEY, "direction", k), np.tile(np.arange(1, T + 1), len(distinct)))
    out, radii = [], {}
    for t in range(1, T + 1):
        shape = (problem.partition.block_sizes[t - 1], m)
        radius = radii.setdefault(shape, np.ones(shape))
        draws = [_normalise(_nonzero_gaussian_rows(factory(r * T + t - 1), shape, d), radius, "float64")
                 for r in range(len(distinct))]
        out.append(draws[0][None] if len(draws) == 1 else np.stack(draws))
    return out


def _replicate_text(problem, first, r):
    return f", replicate {first + r}" if problem.replicated else ""


def _bounded(problem, difference, bound, zeros):
    """The reference's ``_bounded`` entrywise: NaN -> 0, ±inf -> ±bound (raise without a bound), and with
    enforce_lipschitz the clip to [−bound, bound]. difference (R, b, m); bound None or (R, 1, 1); zeros: (R,) int
    zeros. Returns (difference, nonfinite counts (R,), exceedances (R,))."""
    bad = ~np.isfinite(difference)
    any_bad = bad.any()
    if bound is None:
        if not any_bad:
            return difference, zeros, zeros
        if np.isinf(difference).any():
            raise ValueError("loss gave an infinite finite difference and lipschitz is not given, so nothing "
                             "bounds it (pass lipschitz to replace it by its Lipschitz bound)")
        return np.where(bad, 0.0, difference), np.count_nonzero(bad, axis=(1, 2)), zeros
    exceeding = np.abs(difference) > bound  # False where NaN; ±inf are excluded just below
    if any_bad:
        exceeding &= ~bad
    elif not exceeding.any():
        return difference, zeros, zeros
    signed = np.where(difference > 0, bound, -bound)
    out = difference
    if problem.enforce:
        out = np.where(exceeding, signed, out)
    if any_bad:
        out = np.where(bad, np.where(np.isnan(difference), 0.0, signed), out)
    return out, np.count_nonzero(bad, axis=(1, 2)), np.count_nonzero(exceeding, axis=(1, 2))


def _average(terms, m, b):
    """(1/b) Σ_i ((1/m) Σ_j terms_ij): terms (R, b, m, d), both sums left to right as the reference's loops."""
    sample_sums = np.cumsum(terms, axis=2)[:, :, -1]
    return np.cumsum(sample_sums / m, axis=1)[:, -1] / b


def _norm_rows(v):
    """``reference.precision.norm(v, axis=-1)`` for a float64 (R, d) array, without its Python overhead: the same
    operations (max|v| scaling, then ``np.linalg.norm``'s sqrt(add.reduce(x·x)) along the last axis)."""
    largest = np.max(np.abs(v), axis=-1, keepdims=True)
    scaled = v / np.where(largest > 0, largest, 1.0)
    return largest[:, 0] * np.sqrt(np.add.reduce(scaled * scaled, axis=-1))


def _project(v, radius):
    """``reference.o2nc.project_ball`` on each row of v (R, d): the same operations, row by row."""
    length = _norm_rows(v)
    outside = ~(length <= radius)
    if not outside.any():
        return v
    out = v.copy()
    scaled = v[outside] * (radius / length[outside])[:, None]
    while True:
        over = _norm_rows(scaled) > radius
        if not over.any():
            break
        scaled[over] = scaled[over] * _FLOAT_SHRINK
    out[outside] = scaled
    return out


def _run_block(problem: _Problem, seeds: list, entropies: list, first: int) -> _Out:
    K, T, d, m = problem.K, problem.T, problem.d, problem.per_record
    size = len(seeds)
    h, scale, D = problem.h, problem.d, problem.D
    s_all, index = _public_draws(problem, seeds)
    s_all = np.broadcast_to(s_all, (size, K, T))
    index = np.broadcast_to(index, (size,)).copy()
    noise = _noise(problem, entropies)
    averages = np.empty((size, K, d))
    releases = np.empty((size, K, T, d))
    noiseless = np.empty((size, K, T, d))
    nonfinite = np.empty((size, K, T), dtype=np.int64)
    exceed = np.empty((size, K, T), dtype=np.int64)
    w_path = np.empty((size, K, T, d))
    x_path = np.empty((size, K, T + 1, d)) if problem.record_path else None
    delta_path = np.empty((size, K, T, d)) if problem.record_path else None
    zeros = np.zeros(size, dtype=np.int64)
    evaluations = 0
    x = np.repeat(problem.x1[None, :], size, axis=0)
    grad_bound = None if problem.lipschitz is None else 2 * problem.lipschitz * h
    sizes = problem.partition.block_sizes
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    per_epoch = problem.partition.records_per_epoch
    variance_reduced = problem.kind == "variance_reduced"
    for k in range(1, K + 1):
        directions = _directions(problem, seeds, k)
        delta = np.zeros((size, d))  # learner.reset(): Δ_1^k = 0
        w_previous, g = None, None
        if problem.record_path:
            x_path[:, k - 1, 0] = x
        for t in range(1, T + 1):
            w = x + s_all[:, k - 1, t - 1, None] * delta  # Alg 3 line 4: x_t before the update
            x_next = x + delta
            if not np.isfinite(w).all():
                r = int(np.flatnonzero(~np.all(np.isfinite(w), axis=1))[0])
                check_array("w", w[r], shape=(d,))  # the reference's refusal
            start = (k - 1) * per_epoch + int(offsets[t - 1])
            rows = problem.data[start:start + sizes[t - 1]]  # Z_t^k = partition.block(k, t)
            b = rows.shape[0]
            u = directions[t - 1]
            step = h * u  # (R', b, m, d)
            points = np.empty((2, size, b, m, d))
            with np.errstate(invalid="ignore", over="ignore"):  # non-finite values: replaced as the reference does
                if variance_reduced and t > 1:
                    gap = _norm_rows(w - w_previous)
                    too_far = gap > 2 * D * (1 + STEP_TOLERANCE)
                    if too_far.any():
                        r = int(np.flatnonzero(too_far)[0])
                        raise ValueError(f"query point moved ‖w_t − w_(t−1)‖ = {gap[r]} > 2D = {2 * D} at (k, t) = "
                                         f"{(k, t)}{_replicate_text(problem, first, r)}: the DIFF sensitivity of "
                                         "zo_o2nc Lemma 3.2 is accounted with ‖w_t − w_(t−1)‖ ≤ 2D (Remark 4.1)")
                    np.add(w[:, None, None, :], step, out=points[0])
                    np.add(w_previous[:, None, None, :], step, out=points[1])
                    values = problem.loss(points, rows)
                    bound = None
                    if problem.lipschitz is not None:
                        bound = (problem.lipschitz * np.minimum(gap, 2 * D))[:, None, None]
                    difference, bad, over = _bounded(problem, values[0] - values[1], bound, zeros)
                    terms = (scale * difference / h)[..., None] * u
                    g = g + _average(terms, m, b)  # g_t = g_{t−1} + DIFF(w_t, w_{t−1})
                else:
                    np.add(w[:, None, None, :], step, out=points[0])
                    np.subtract(w[:, None, None, :], step, out=points[1])
                    values = problem.loss(points, rows)
                    difference, bad, over = _bounded(problem, values[0] - values[1], grad_bound, zeros)
                    terms = (scale * (difference / (2 * h)))[..., None] * u
                    g = _average(terms, m, b)  # GRAD (Alg 1) or Alg 6's estimate
            evaluations += 2 * b * m
            released = g + noise[:, k - 1, t - 1]
            if not np.isfinite(released).all():
                r = int(np.flatnonzero(~np.all(np.isfinite(released), axis=1))[0])
                _vector(f"oracle answer at (k={k}, t={t})", released[r], d)  # the reference's refusal
            releases[:, k - 1, t - 1] = released
            noiseless[:, k - 1, t - 1] = g
            nonfinite[:, k - 1, t - 1] = bad
            exceed[:, k - 1, t - 1] = over
            w_path[:, k - 1, t - 1] = w
            if problem.record_path:
                delta_path[:, k - 1, t - 1] = delta
                x_path[:, k - 1, t] = x_next
            delta = _project(delta - problem.eta * released, D)  # learner.update(g̃)
            w_previous = w
            x = x_next
        for r in range(size):
            averages[r, k - 1] = np.mean(w_path[r, k - 1], axis=0)  # the reference's np.mean of the (T, d) rows
    return _Out(index, averages, x, releases, np.array(s_all), w_path if problem.record_path else None, x_path,
                delta_path, noiseless, noise, nonfinite, exceed, evaluations)


def _replicates_per_block(partition: Partition, d: int, p: int, m: int, K: int, T: int, size: int) -> int:
    largest = max(partition.block_sizes)
    per_round = 8 * 8 * largest * m * max(d, p)  # points, loss temporaries, terms
    persistent = 8 * K * T * d * 8  # releases, sums, noise, path
    return max(1, min(size, _BLOCK_BYTES // (per_round + persistent)))


# ---------------------------------------------------------------------------------------------------
# Whole runs


def _seeds_and_inputs(data, x1, seed, noise_seed, private):
    """The reference's input checks in its order; (data, x1 float64, seeds, secrets, replicated, source, cond)."""
    if not _is_seed_array(seed) and not _is_seed_array(noise_seed):
        data, x1, use_mp, seed, secret = _inputs(data, x1, seed, noise_seed, private)
        source = secret.source if secret is not None else None
        condition = secret.guarantee_condition if secret is not None else None
        seeds, secrets, replicated = [seed], [secret], False
    else:
        data, x1, use_mp, _, _ = _inputs(data, x1, 0, None, False)  # data and x1 only: the seeds are sequences
        seeds, secrets, replicated, (source, condition) = _check_seeds(seed, noise_seed, private)
    if use_mp:
        data, x1 = to_float(data), to_float(x1)
    data = np.asarray(data, dtype=np.float64)
    view = data.view()
    view.flags.writeable = False
    return view, np.array(x1, dtype=np.float64), seeds, secrets, replicated, source, condition


def _run(oracle_kind, loss, data, x1, hyper, *, seed, noise_seed, noise, dp_delta, enforce_lipschitz, record_path):
    private = noise == "gaussian"
    data, x1, seeds, secrets, replicated, source, condition = _seeds_and_inputs(data, x1, seed, noise_seed, private)
    d, M = x1.shape[0], data.shape[0]
    T, K = hyper.T, hyper.K
    partition, plan = partition_and_plan(oracle_kind, hyper, d, M, private=private, dp_delta=dp_delta,
                                         enforce_lipschitz=enforce_lipschitz)
    # The reference's constructors check loss, enforce_lipschitz, σ and the learner's arguments; nothing is drawn.
    unused = np.random.Generator(np.random.PCG64(0))
    shared = dict(d=d, smoothing_radius=hyper.smoothing_radius, lipschitz=hyper.lipschitz,
                  enforce_lipschitz=enforce_lipschitz, seed=seeds[0], noise_rng=unused, use_mp=False)
    if oracle_kind == "variance_reduced":
        VarianceReducedOracle(loss, data, partition, step_bound=hyper.step_bound,
                              noise_stds=np.full(T, hyper.noise_std), **shared)
    else:
        NaiveOracle(loss, data, partition, noise_std=hyper.noise_std, **shared)
    ProjectedOSD(d, float(hyper.step_bound), float(hyper.step_size))

    problem = _Problem(oracle_kind, _Loss(loss, replicated), data, x1, partition, d, T, K,
                       float(hyper.smoothing_radius), float(hyper.step_bound), float(hyper.step_size),
                       float(hyper.noise_std), None if hyper.lipschitz is None else float(hyper.lipschitz),
                       bool(enforce_lipschitz), d if oracle_kind == "variance_reduced" else 1, record_path, replicated)
    entropies = [s if secret is None else secret.entropy for s, secret in zip(seeds, secrets)]
    size = len(seeds)
    per_block = _replicates_per_block(partition, d, data.shape[1], problem.per_record, K, T, size)
    blocks = [_run_block(problem, seeds[a:a + per_block], entropies[a:a + per_block], a)
              for a in range(0, size, per_block)]

    def cat(name):
        parts = [getattr(block, name) for block in blocks]
        return None if parts[0] is None else np.concatenate(parts, axis=0)

    index = cat("output_index")
    averages = cat("epoch_averages")
    output = averages[np.arange(size), index].copy()
    settings = RunSettings(oracle_kind, hyper.source, d, M, partition.records_used, T, K, hyper.block_sizes,
                           hyper.smoothing_radius, hyper.step_bound, hyper.step_size, hyper.noise_std,
                           hyper.noise_rule, hyper.lipschitz, bool(enforce_lipschitz), "float64")
    if private:
        name = "zo_o2nc" if oracle_kind == "variance_reduced" else "zo_o2nc_naive"
    else:
        name = "o2nc_variance_reduced" if oracle_kind == "variance_reduced" else "o2nc_naive"
    source = source if private else None
    condition = condition if private else None
    evaluations = np.array([block.evaluations for block in blocks for _ in range(block.final.shape[0])],
                           dtype=np.int64)
    if replicated:
        ledger = ReplicatedLedger(name, plan, settings, tuple(int(s) for s in seeds), source, condition)
        diagnostics = ReplicatedDiagnostics(cat("noiseless"), cat("noise"), cat("nonfinite"), cat("exceed"),
                                            evaluations)
        return DPResult(output=output, output_index=index, epoch_averages=averages, final_iterate=cat("final"),
                        releases=cat("releases"), segment_points=cat("segments"), query_points=cat("query_points"),
                        iterates=cat("iterates"), steps=cat("steps"), ledger=ledger, diagnostics=diagnostics)
    ledger = Ledger(name, plan, settings, seeds[0], source, condition)
    block = blocks[0]
    diagnostics = NonPrivateDiagnostics(noiseless_sums=block.noiseless[0], noise=block.noise[0],
                                        nonfinite_counts=block.nonfinite[0], lipschitz_exceedances=block.exceed[0],
                                        loss_evaluations=int(block.evaluations))

    def first(v):
        return None if v is None else v[0]

    return DPResult(output=output[0], output_index=int(index[0]), epoch_averages=averages[0],
                    final_iterate=block.final[0], releases=block.releases[0], segment_points=block.segments[0],
                    query_points=first(block.query_points), iterates=first(block.iterates), steps=first(block.steps),
                    ledger=ledger, diagnostics=diagnostics)


def zo_o2nc(loss, data, x1, *, settings=None, T=None, K=None, B1=None, B2=None, smoothing_radius=None,
            step_bound=None, step_size=None, rho=None, noise_std=None, count_rule="exact", lipschitz=None,
            dp_delta=None, seed, noise_seed=None, noise="gaussian", enforce_lipschitz=False,
            record_path=False) -> DPResult:
    """zo_o2nc Algorithm 3 + projected OSD + Algorithm 4 (Theorem 4.9), vectorized (module doc).

    Arguments, draws and result as ``reference.algorithms.zo_o2nc.zo_o2nc``; ``loss`` is called once per round on
    stacked points (module doc); ``seed``/``noise_seed`` may be sequences (R replicates, module doc).
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
    """zo_o2nc Algorithm 3 + projected OSD + Algorithm 6 (App. E), vectorized (module doc).

    Arguments, draws and result as ``reference.algorithms.zo_o2nc.zo_o2nc_naive``.
    """
    hyper = naive_hyper(x1, settings=settings, T=T, K=K, batch_size=batch_size, smoothing_radius=smoothing_radius,
                        step_bound=step_bound, step_size=step_size, rho=rho, noise_std=noise_std, sigma_rule=sigma_rule,
                        lipschitz=lipschitz, noise=noise, dp_delta=dp_delta)
    return _run("naive", loss, data, x1, hyper, seed=seed, noise_seed=noise_seed, noise=noise, dp_delta=dp_delta,
                enforce_lipschitz=enforce_lipschitz, record_path=record_path)


def o2nc_nonprivate(loss, data, x1, *, T, K, smoothing_radius, step_size, seed, step_bound=None, batch_size=1,
                    lipschitz=None, enforce_lipschitz=False, record_path=False) -> DPResult:
    """Non-private O2NC (Algorithm 3 + projected OSD + Algorithm 6 with σ = 0), vectorized; as the reference's."""
    return zo_o2nc_naive(loss, data, x1, T=T, K=K, batch_size=batch_size, smoothing_radius=smoothing_radius,
                         step_bound=step_bound, step_size=step_size, lipschitz=lipschitz, seed=seed, noise="none",
                         enforce_lipschitz=enforce_lipschitz, record_path=record_path)

