"""nsnc_improved Algorithms 2–5 (Kornowski, Liu, Talwar, ICML 2025): vectorized float64 twin of
``reference.algorithms.nsnc_improved``.

Same names, signatures, semantics and random draws as the reference (its module docstring gives the stream keys and
the draw schedule), so that runs agree draw for draw (validated by ``proofs_checks/claims/nsnc_improved/
backend_run.py`` and tests/test_fast_nsnc_improved.py). Everything a run decides before its first step — the
argument checks and their refusals, the single-pass schedule, σ, the privacy plan, the clip_hardening radii, the
settings and the ledger — is the reference's ``prepare_run`` (called, not copied); the reference's oracle and learner
constructors are run on the arguments (they draw nothing) so that a bad argument is refused with the reference's
words. The differences:

* **Vectorized inside a step.** The T = K·M steps stay a Python loop (each query point is post-processing of the
  previous release); a step evaluates the objective ONCE on all its records and directions. Zeroth order:
  ``loss(points, rows)`` with points of shape (2, b, m, d) at a reset ([z + αy, z − αy]) and (4, b, m, d) at an
  increment ([z_t + αy, z_t − αy, z_(t−1) + αy', z_(t−1) − αy'], y' = y for CRN), rows = the step's records as a
  read-only (b, 1, p) view, returning shape (2 or 4, b, m). First order: ``gradient(points, rows)`` with points
  (1, b, m, d) at a reset ([z + y]) and (2, b, m, d) at an increment ([z_t + y, z_(t−1) + y']), returning the same
  shape. With R replicates the points gain an axis after the first, (S, R, b, m, d). This is how the objectives of
  ``reference.objectives`` broadcast. Multi-pass steps read all n records: b = n.
* **Scalar objectives.** The first step probes the vectorized call: if it raises, returns another shape or a
  non-real dtype, or if its first and last values are not bitwise the values of the scalar calls
  ``objective(point (d,), row (p,))`` that the reference makes for the same entries, the run evaluates the objective
  one point and one record at a time, in the reference's order (replicate, record, the estimate at z_t then at
  z_(t−1), direction, then + before −) and through its checks (so an objective the reference refuses is refused
  with the same error), for the rest of the run. A later vectorized call that fails falls back the same way. The
  probe's evaluations are not counted in ``diagnostics.evaluations`` (the algorithm's count).
* **Same arithmetic, same order.** Per record and direction the reference's operations (αy, z ± αy, f₊ − f₋, the
  non-finite replacement and Lipschitz clip, ((d·Δf)/(2α))·y; z + y, the gradient clip to L); the sums over the m
  directions and then over the b records left to right (``np.cumsum``, the order of the reference's loops) then /m
  and /b; the per-record clip of clip_hardening with ``reference.precision.norm``'s operations along the last axis;
  g_t = g_(t−1) + (sum)/b (single pass) or g̃_(t−1) + (sum)/b (multi pass); TREE(τ) summed over NODE(τ) in order
  from 0; clipped OGD with the reference's ``project_ball`` row by row; the block averages by ``np.mean`` of each
  replicate's (M, d) block. With an objective that gives bitwise the same values in both calling conventions (the
  objectives of ``reference.objectives`` do) a run is therefore BITWISE the reference's float64 run: releases,
  block averages, output, path and diagnostics. For any other float64 implementation the backend claims check
  every step against the mpmath reference oracle within a derived one-step rounding bound.
* **Replicates.** ``seed`` may be a 1-D sequence of R public seeds (ints in [0, 2^128)); ``noise_seed`` is then
  None (fresh entropy spawned into R), one int or ``SecretSeed`` (spawned into R), or R distinct ones; an int
  ``seed`` with a sequence ``noise_seed`` runs R replicates on the same public draws (directions, s, the output
  block). The rules are ``reference.fast.dpzero``'s (``reference.secrets.secret_seeds``). Replicate r equals the
  reference's single run with seed[r] and the r-th secret seed. Every array of ``DPResult`` gains a leading axis R
  (output (R, d), output_index (R,), block_averages (R, K, d), releases (R, K, M, d), …); the ledger is a
  ``ReplicatedLedger`` (seed: the tuple of the public seeds) and the diagnostics ``ReplicatedDiagnostics``
  ((R, K, M, d) sums and noise, (R, K, M) counts, (R,) evaluation counts). ``select_replicate(result, r)`` returns
  replicate r as a single-run ``DPResult``. Replicates run in blocks of about ``_BLOCK_BYTES`` of step arrays;
  blocking changes no draw and no arithmetic.
* Everything is float64: an mpmath x0 or data are rounded to float64 first (the run is prepared again on the
  float64 values, so the ledger's settings say ``arithmetic="float64"`` and the clip radii are the float64 ones).

Randomness: the reference's schedule exactly. Each generator ``Streams(s).generator(*key)`` is rebuilt bit for bit
by ``reference.fast.dpzero``'s vectorized SeedSequence mixing (checked against NumPy on every call, with a fallback
to ``Streams``): the directions of step t are one ``sample_sphere`` / ``sample_ball`` call of key ("nsnc_improved",
"direction", t) with the shape of ``step_directions``; s of block k is ``random(M)`` of ("nsnc_improved",
"segment", k); the output block − 1 is ``integers(K)`` of ("nsnc_improved", "output"); the secret noise of a whole
run is ONE ``standard_normal((T, d))`` call of ("nsnc_improved", "noise"), equal to the reference's T successive
``standard_normal(d)`` calls (single pass: the leaf noise ξ_t = σ·z_t and TREE(τ) = Σ_{(·,b) ∈ NODE(τ)} ξ of the
period's leaves, the tree reset at τ = 1; multi pass: χ_t = σ1·z_t at a reset, σ2·z_t otherwise).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..algorithms.nsnc_improved import (
    FIRST_ORDER_ORACLES,
    KEY,
    MULTI_PASS_ORACLES,
    NOISES,
    ORACLES,
    SENSITIVITY_MODES,
    SINGLE_PASS_ORACLES,
    STEP_TOLERANCE,
    DPResult,
    Ledger,
    MultiPassOracle,
    NonPrivateDiagnostics,
    PreparedRun,
    RunSettings,
    Schedule,
    SinglePassOracle,
    period_position,
    prepare_run,
    settings_arguments,
    single_pass_schedule,
    step_directions,
)
from ..algorithms._records import real_value as _scalar
from ..mechanisms import tree_node as _tree_node  # private: not a protocol of this module
from ..o2nc import ClippedOGD, _vector
from ..precision import to_float
from ..rng import _nonzero_gaussian_rows, _normalise
from ..validation import check_array, check_int
from .dpzero import _check_seeds, _generator_factory, _is_seed_array
from .replicates import replicate_of
from .zo_o2nc import _project

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
    "RunSettings",
    "Ledger",
    "ReplicatedLedger",
    "NonPrivateDiagnostics",
    "ReplicatedDiagnostics",
    "DPResult",
    "PreparedRun",
    "prepare_run",
    "settings_arguments",
    "nsnc_improved",
    "select_replicate",
]

#: Rough memory budget of the per-step arrays of one block of replicates (bytes).
_BLOCK_BYTES = 200 * 2**20


# ---------------------------------------------------------------------------------------------------
# Results of R replicates


@dataclasses.dataclass(frozen=True)
class ReplicatedLedger(Ledger):
    """The ``Ledger`` of R replicates (all public): seed is the tuple of the R public seeds; algorithm, plan,
    settings, secret_seed_source and guarantee_condition are those of the call."""

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
    noiseless_sums and noise (R, K, M, d), nonfinite_counts and clipped_counts (R, K, M), evaluations (R,)."""

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
# The objective, vectorized with a scalar fallback


def _same_values(a, b) -> bool:
    return bool(np.array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), equal_nan=True))


_INFINITE_DIFFERENCE = ("loss gave an infinite finite difference and lipschitz is not given, so nothing bounds it "
                        "(pass lipschitz to replace it by its Lipschitz bound 2Lα)")  # the reference's words


def _where(i):
    return f"record {i} of the step"  # the reference's words


def _gradient_value(objective, point, row, d, i, j):
    """One gradient call with the reference's checks and words (``_Oracle._gradient_record``)."""
    g = np.asarray(objective(point, row))
    if g.shape != (d,):
        raise ValueError(f"gradient must return shape ({d},), got {g.shape} at {_where(i)}, perturbation {j}")
    return np.asarray(g, dtype=np.float64)  # a non-finite entry is replaced by the caller (``_first_order``)


class _Objective:
    """objective(points (S, R, b, m, d), rows (b, p)) -> (S, R, b, m) losses or (S, R, b, m, d) gradients, float64
    (module doc, "Scalar objectives"). Zeroth order: S = 2 (reset) or 4 (increment), entries in pairs (+, −) per
    direction; first order: S = 1 or 2."""

    def __init__(self, objective, first_order: bool, d: int, replicated: bool, bounded: bool):
        self.objective = objective
        self.first_order = first_order
        self.d = d
        self.replicated = replicated
        self.bounded = bounded  # lipschitz given: an infinite difference is replaced, not refused
        self.mode = None  # None (not probed yet), "vector" or "scalar"

    def _vectorized(self, points, rows):
        grid = rows[:, None, :]  # (b, 1, p): record i against its m directions
        call_points = points if self.replicated else points[:, 0]
        expected = call_points.shape if self.first_order else call_points.shape[:-1]
        try:
            values = np.asarray(self.objective(call_points, grid))
            if values.dtype == object:
                values = to_float(values)
        except Exception:  # noqa: BLE001 — an objective written for one point and one row: one at a time
            return None
        if values.shape != expected or values.dtype.kind not in "fiu":
            return None
        shape = points.shape if self.first_order else points.shape[:-1]
        return values.astype(np.float64, copy=False).reshape(shape)

    def _scalar(self, points, rows, index):
        s, r, i, j = index
        point = points[s, r, i, j].copy()
        if self.first_order:
            return _gradient_value(self.objective, point, rows[i], self.d, i, j)
        return _scalar(self.objective(point, rows[i]), False, f"{_where(i)}, direction {j}")

    def _one_at_a_time(self, points, rows):
        """The reference's order: replicate, record i, the estimate at z_t then at z_(t−1), direction j, + then −."""
        size, b, m = points.shape[1], points.shape[2], points.shape[3]
        pairs = 1 if self.first_order else 2
        halves = points.shape[0] // pairs
        out = np.empty(points.shape if self.first_order else points.shape[:-1])
        for r in range(size):
            for i in range(b):
                for h in range(halves):
                    for j in range(m):
                        for q in range(pairs):
                            out[h * pairs + q, r, i, j] = self._scalar(points, rows, (h * pairs + q, r, i, j))
                        if not self.first_order and not self.bounded:
                            with np.errstate(invalid="ignore", over="ignore"):
                                difference = out[2 * h, r, i, j] - out[2 * h + 1, r, i, j]
                            if math.isinf(difference):
                                raise ValueError(_INFINITE_DIFFERENCE)
        return out

    def __call__(self, points, rows):
        if self.mode == "scalar":
            return self._one_at_a_time(points, rows)
        values = self._vectorized(points, rows)
        if values is not None and self.mode is None:
            first = (0, 0, 0, 0)
            last = tuple(n - 1 for n in points.shape[:4])
            # the reference evaluates the first entry first: an objective it refuses is refused here; a refusal of
            # the last entry is left to the one-at-a-time evaluation, which meets the reference's first refusal
            if not _same_values(values[first], self._scalar(points, rows, first)):
                values = None
            else:
                try:
                    agrees = _same_values(values[last], self._scalar(points, rows, last))
                except Exception:  # noqa: BLE001 — evaluated again below, in the reference's order
                    agrees = False
                if not agrees:
                    values = None
        if values is None:
            self.mode = "scalar"
            return self._one_at_a_time(points, rows)
        self.mode = "vector"
        return values


# ---------------------------------------------------------------------------------------------------
# The per-step arithmetic (the reference's, entrywise)


def _norms(v):
    """``reference.precision.norm(v, axis=-1)`` for a float64 array: the same operations (max|v| scaling, then
    ``np.linalg.norm`` along the last axis), every row at once."""
    largest = np.max(np.abs(v), axis=-1, keepdims=True)
    safe = np.where(largest > 0, largest, 1.0)
    return largest[..., 0] * np.linalg.norm(v / safe, axis=-1)


def _clip_rows(v, radius):
    """The reference's ``_clip`` on every vector of v (…, d): (clipped v, the mask of the clipped vectors).
    radius: a float, or an array broadcasting against v's leading shape."""
    lengths = _norms(v)
    over = ~(lengths <= radius)
    if not over.any():
        return v, over
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = v * (radius / lengths)[..., None]
    return np.where(over[..., None], scaled, v), over


def _bounded(difference, bound, enforce):
    """The reference's ``_Oracle._bounded`` entrywise on (R, b, m): NaN -> 0, ±inf -> ±bound (refused without a
    bound) and with enforce_lipschitz the clip to [−bound, bound]. Returns (difference, non-finite counts (R,),
    enforce_lipschitz clip counts (R,))."""
    bad = ~np.isfinite(difference)
    counts = np.count_nonzero(bad, axis=(1, 2))
    if bad.any():
        if bound is None:
            if np.isinf(difference).any():
                raise ValueError(_INFINITE_DIFFERENCE)
            difference = np.where(bad, 0.0, difference)
        else:
            signed = np.where(difference > 0, bound, -bound)
            difference = np.where(bad, np.where(np.isnan(difference), 0.0, signed), difference)
    clipped = np.zeros(counts.shape, dtype=np.int64)
    if enforce:
        exceeding = np.abs(difference) > bound
        clipped = np.count_nonzero(exceeding, axis=(1, 2))
        if exceeding.any():
            difference = np.where(exceeding, np.where(difference > 0, bound, -bound), difference)
    return difference, counts, clipped


def _direction_sum(terms, m):
    """(1/m) Σ_j terms_j over axis 2 of (R, b, m, d), left to right as the reference's loop."""
    return np.cumsum(terms, axis=2)[:, :, -1] / m


def _record_sum(v):
    """Σ_i v_i over axis 1 of (R, b, d), left to right as the reference's loop."""
    return np.cumsum(v, axis=1)[:, -1]


# ---------------------------------------------------------------------------------------------------
# One block of replicates


@dataclasses.dataclass(frozen=True)
class _Problem:
    oracle: str
    objective: _Objective
    data: np.ndarray  # float64, read-only
    x0: np.ndarray
    d: int
    K: int
    M: int
    tree_size: int
    blocks: tuple  # per step (start, stop) of its records
    alpha: float
    D: float
    eta: float
    sigmas: tuple  # (σ,) single pass, (σ1, σ2) multi pass
    lipschitz: float | None
    enforce: bool
    clip_radii: object  # the reference's _ClipRadii, or None
    directions: tuple  # (m_reset, m_increment)
    restart_blocks: bool
    record_path: bool
    replicated: bool
    secret_directions: bool  # the reference's RunSettings.direction_seed == "secret"

    @property
    def T(self) -> int:
        return self.K * self.M

    @property
    def single(self) -> bool:
        return self.oracle in SINGLE_PASS_ORACLES

    @property
    def first_order(self) -> bool:
        return self.oracle in FIRST_ORDER_ORACLES


@dataclasses.dataclass
class _Out:
    output_index: np.ndarray
    block_averages: np.ndarray
    final: np.ndarray
    releases: np.ndarray
    segments: np.ndarray
    query_points: np.ndarray | None
    iterates: np.ndarray | None
    steps: np.ndarray | None
    noiseless: np.ndarray
    noise: np.ndarray
    nonfinite: np.ndarray
    clipped: np.ndarray
    evaluations: int


def _shared(seeds) -> bool:
    return all(s == seeds[0] for s in seeds)


def _public_draws(problem: _Problem, distinct: list):
    """s (R', K, M) and the output block − 1 (R',) of the distinct public seeds."""
    K, M = problem.K, problem.M
    pairs = [s for s in distinct for _ in range(K)]
    segment = _generator_factory(pairs, (KEY, "segment"), np.tile(np.arange(1, K + 1), len(distinct)))
    s = np.empty((len(distinct), K, M))
    for n in range(len(pairs)):
        s[n // K, n % K] = segment(n).random(M)
    output = _generator_factory(distinct, (KEY, "output"))
    index = np.array([int(output(r).integers(K)) for r in range(len(distinct))], dtype=np.int64)
    return s, index


def _noise(problem: _Problem, entropies: list):
    """The noise of every step (R, T, d) from one standard_normal((T, d)) call per replicate: TREE(τ) of the
    period's leaves (single pass) or χ_t (multi pass)."""
    T, d = problem.T, problem.d
    generator = _generator_factory(entropies, (KEY, "noise"))
    z = np.empty((len(entropies), T, d))
    for r in range(len(entropies)):
        generator(r).standard_normal(out=z[r])
    out = np.empty_like(z)
    if problem.single:
        xi = problem.sigmas[0] * z  # TreeMechanism: ξ = float(σ)·z
        for t in range(1, T + 1):
            tau = (t - 1) % problem.tree_size + 1
            first_leaf = t - tau  # 0-based index of the period's leaf 1
            total = np.zeros((len(entropies), d))
            for _, b in _tree_node(tau):
                total = total + xi[:, first_leaf + b - 1]
            out[:, t - 1] = total
        return out
    for t in range(1, T + 1):
        reset = (t - 1) % problem.tree_size == 0
        out[:, t - 1] = (problem.sigmas[0] if reset else problem.sigmas[1]) * z[:, t - 1]
    return out


def _step_shape(problem: _Problem, b: int, reset: bool):
    """``step_directions``'s shape (without d) and whether it samples the ball."""
    m = problem.directions[0] if reset else problem.directions[1]
    if problem.first_order:
        if reset:
            return ((b, 1) if problem.oracle == "first_order" else (b, m)), True
        return (b, 2, m), True
    return ((b, m) if reset or problem.oracle == "single_pass_crn" else (b, 2, m)), False


def _directions(problem: _Problem, factory, count: int, t: int, b: int, reset: bool):
    """The directions of step t for each distinct direction seed: (R', *shape, d), bitwise ``step_directions``
    (the reference's sampler, called through its two steps to skip the argument checks)."""
    shape, ball = _step_shape(problem, b, reset)
    d = problem.d
    draws = []
    for r in range(count):
        rng = factory(r * problem.T + t - 1)
        g = _nonzero_gaussian_rows(rng, shape, d)
        if ball:
            uniforms = rng.random(shape)
            draws.append(_normalise(g, problem.alpha * uniforms ** (1.0 / d), "float64"))
        else:
            draws.append(_normalise(g, np.full(shape, 1.0), "float64"))
    return draws[0][None] if count == 1 else np.stack(draws)


def _zeroth_order(problem: _Problem, w, w_previous, u, rows, reset):
    """Per-record estimates (reset) or differences e(z_t) − e'(z_(t−1)) (increment), (R, b, d); non-finite counts
    (R,); evaluations."""
    size, (b, d, alpha) = w.shape[0], (rows.shape[0], problem.d, problem.alpha)
    if reset:
        halves = [u]
    elif problem.oracle == "single_pass_crn":
        halves = [u, u]
    else:
        halves = [u[:, :, 0], u[:, :, 1]]
    m = halves[0].shape[2]
    points = np.empty((2 * len(halves), size, b, m, d))
    centres = [w, w_previous]
    for h, y in enumerate(halves):
        step = alpha * y
        centre = centres[h][:, None, None, :]
        np.add(centre, step, out=points[2 * h])
        np.subtract(centre, step, out=points[2 * h + 1])
    values = problem.objective(points, rows)
    bound = None if problem.lipschitz is None else 2 * problem.lipschitz * alpha
    estimates, bad, clipped = [], np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        for h, y in enumerate(halves):
            difference, counts, clips = _bounded(values[2 * h] - values[2 * h + 1], bound, problem.enforce)
            bad, clipped = bad + counts, clipped + clips
            terms = ((d * difference) / (2 * alpha))[..., None] * y
            estimates.append(_direction_sum(terms, m))
    v = estimates[0] if reset else estimates[0] - estimates[1]
    return v, bad, clipped, 2 * len(halves) * b * m


def _first_order(problem: _Problem, w, w_previous, y, rows, reset):
    """As ``_zeroth_order`` for Algorithm 5's estimate (1/m) Σ_j ∇f(z + y_j); clipped counts of enforce_lipschitz."""
    size, b, d = w.shape[0], rows.shape[0], problem.d
    halves = [y] if reset else [y[:, :, 0], y[:, :, 1]]
    m = halves[0].shape[2]
    points = np.empty((len(halves), size, b, m, d))
    centres = [w, w_previous]
    for h, pert in enumerate(halves):
        np.add(centres[h][:, None, None, :], pert, out=points[h])
    gradients = problem.objective(points, rows)
    finite = np.all(np.isfinite(gradients), axis=-1)  # (S, R, b, m): the reference replaces the others by 0
    bad = np.count_nonzero(~finite, axis=(0, 2, 3))
    if bad.any():
        gradients = np.where(finite[..., None], gradients, 0.0)
    clipped = np.zeros(size, dtype=np.int64)
    if problem.enforce:
        gradients, over = _clip_rows(gradients, problem.lipschitz)
        clipped = np.count_nonzero(over, axis=(0, 2, 3))
    estimates = [_direction_sum(gradients[h], m) for h in range(len(halves))]
    v = estimates[0] if reset else estimates[0] - estimates[1]
    return v, bad, clipped, len(halves) * b * m


def _run_block(problem: _Problem, seeds: list, entropies: list) -> _Out:
    K, M, T, d = problem.K, problem.M, problem.T, problem.d
    size = len(seeds)
    distinct = seeds[:1] if _shared(seeds) else seeds
    s_all, index = _public_draws(problem, distinct)
    s_all = np.broadcast_to(s_all, (size, K, M))
    index = np.broadcast_to(index, (size,)).copy()
    # the directions' seeds: the distinct public seeds, or every replicate's secret one (the reference's
    # PreparedRun.direction_seed)
    direction_seeds = list(entropies) if problem.secret_directions else distinct
    pairs = [s for s in direction_seeds for _ in range(T)]
    factory = _generator_factory(pairs, (KEY, "direction"), np.tile(np.arange(1, T + 1), len(direction_seeds)))
    noise = _noise(problem, entropies)
    averages = np.empty((size, K, d))
    releases = np.empty((size, T, d))
    noiseless = np.empty((size, T, d))
    nonfinite = np.empty((size, T), dtype=np.int64)
    clipped = np.empty((size, T), dtype=np.int64)
    w_path = np.empty((size, K, M, d))
    x_path = np.empty((size, K, M + 1, d)) if problem.record_path else None
    delta_path = np.empty((size, K, M, d)) if problem.record_path else None
    evaluations = 0
    x = np.repeat(problem.x0[None, :], size, axis=0)
    delta = np.zeros((size, d))
    w_previous, g, released = None, None, None
    D = problem.D
    estimate = _first_order if problem.first_order else _zeroth_order
    for t in range(1, T + 1):
        k, j = divmod(t - 1, M)  # 0-based block and position
        if j == 0:
            if k == 0 or problem.restart_blocks:
                delta = np.zeros((size, d))  # ClippedOGD.reset(): Δ = 0 before the first step (or every block)
            if problem.record_path:
                x_path[:, k, 0] = x
        w = x + s_all[:, k, j, None] * delta  # z_t = x_(t−1) + s_t·Δ_t
        x_next = x + delta
        if not np.isfinite(w).all():
            r = int(np.flatnonzero(~np.all(np.isfinite(w), axis=1))[0])
            check_array("z", w[r], shape=(d,))  # the reference's refusal
        gaps = None
        if t > 1:
            gaps = _norms(w - w_previous)
            too_far = gaps > 2 * D * (1 + STEP_TOLERANCE)
            if too_far.any():
                r = int(np.flatnonzero(too_far)[0])
                raise ValueError(f"query point moved ‖z_t − z_(t−1)‖ = {float(gaps[r])} > 2D = {2 * D} at step {t}: "
                                 "the increment sensitivities are accounted with ‖z_t − z_(t−1)‖ ≤ 2D")
        tau = (t - 1) % problem.tree_size + 1
        reset = tau == 1
        start, stop = problem.blocks[t - 1]
        rows = problem.data[start:stop]
        b = rows.shape[0]
        u = _directions(problem, factory, len(direction_seeds), t, b, reset)
        v, bad, clip_count, count = estimate(problem, w, w_previous, u, rows, reset)
        evaluations += count
        if problem.clip_radii is not None:  # clip_hardening: every record's estimate or difference
            if reset:
                radius = problem.clip_radii.reset
            else:
                radius = np.array([problem.clip_radii.increment(float(gap)) for gap in gaps], dtype=np.float64)[:, None]
            v, over = _clip_rows(v, radius)
            clip_count = clip_count + np.count_nonzero(over, axis=1)
        increment = _record_sum(v) / b
        if reset:
            g = increment
        elif problem.single:
            g = g + increment  # g_t = g_(t−1) + (1/B2) Σ (e − e')
        else:
            g = released + increment  # Algorithm 4 builds on the RELEASED g̃_(t−1)
        released = g + noise[:, t - 1]
        if not np.isfinite(released).all():
            r = int(np.flatnonzero(~np.all(np.isfinite(released), axis=1))[0])
            _vector(f"oracle answer at (k={k + 1}, t={j + 1})", released[r], d)  # the reference's refusal
        releases[:, t - 1] = released
        noiseless[:, t - 1] = g
        nonfinite[:, t - 1] = bad
        clipped[:, t - 1] = clip_count
        w_path[:, k, j] = w
        if problem.record_path:
            delta_path[:, k, j] = delta
            x_path[:, k, j + 1] = x_next
        delta = _project(delta - problem.eta * released, D)  # ClippedOGD.update(g̃_t)
        w_previous = w
        x = x_next
    for r in range(size):
        for k in range(K):
            averages[r, k] = np.mean(w_path[r, k], axis=0)  # the reference's np.mean of the (M, d) rows
    return _Out(index, averages, x, releases.reshape(size, K, M, d), np.array(s_all),
                w_path if problem.record_path else None, x_path, delta_path, noiseless.reshape(size, K, M, d),
                noise.reshape(size, K, M, d), nonfinite.reshape(size, K, M), clipped.reshape(size, K, M), evaluations)


def _replicates_per_block(problem: _Problem, size: int) -> int:
    largest = max(stop - start for start, stop in problem.blocks)
    per_step = 8 * 8 * 4 * largest * max(problem.directions) * max(problem.d, problem.data.shape[1])
    persistent = 8 * problem.T * problem.d * 8  # releases, sums, noise, path
    return max(1, min(size, _BLOCK_BYTES // (per_step + persistent)))


# ---------------------------------------------------------------------------------------------------
# Whole runs


def _read_only(arr: np.ndarray) -> np.ndarray:
    view = arr.view()
    view.flags.writeable = False
    return view


def nsnc_improved(objective, data, x0, *, oracle="single_pass", blocks, block_length, tree_size, smoothing_radius,
                  step_bound, step_size, directions, B1=None, B2=1, noise_std=None, epsilon=None, lipschitz=None,
                  dp_delta=None, gamma=None, sensitivity_mode="auto", clip_hardening=False, seed, noise_seed=None,
                  noise="gaussian", enforce_lipschitz=False, restart_blocks=False, record_path=False) -> DPResult:
    """nsnc_improved Algorithm 2 (O2NC with clipped OGD) with the oracle of Algorithm 3, 4 or 5, vectorized
    (module doc).

    Arguments, draws and result as ``reference.algorithms.nsnc_improved.nsnc_improved``; ``objective`` is called
    once per step on stacked points (module doc); ``seed``/``noise_seed`` may be sequences (R replicates, module
    doc).
    """
    arguments = dict(blocks=blocks, block_length=block_length, tree_size=tree_size, smoothing_radius=smoothing_radius,
                     step_bound=step_bound, step_size=step_size, directions=directions, B1=B1, B2=B2,
                     noise_std=noise_std, epsilon=epsilon, lipschitz=lipschitz, dp_delta=dp_delta, gamma=gamma,
                     sensitivity_mode=sensitivity_mode, clip_hardening=clip_hardening, noise=noise,
                     enforce_lipschitz=enforce_lipschitz, restart_blocks=restart_blocks)
    private = noise == "gaussian"
    replicated = _is_seed_array(seed) or _is_seed_array(noise_seed)
    if replicated:
        seeds, secrets, _, (source, condition) = _check_seeds(seed, noise_seed, private)
        prepared = prepare_run(oracle, data, x0, seed=seeds[0], noise_seed=secrets[0] if private else None,
                               **arguments)
    else:
        prepared = prepare_run(oracle, data, x0, seed=seed, noise_seed=noise_seed, **arguments)
        seeds, secrets = [prepared.seed], [prepared.secret]
    if prepared.settings.arithmetic == "mpmath":  # rounded to float64, and prepared again on the float64 values
        prepared = prepare_run(oracle, to_float(prepared.data), to_float(prepared.x0), seed=prepared.seed,
                               noise_seed=prepared.secret, **arguments)
        if not replicated:
            secrets = [prepared.secret]
    settings = prepared.settings
    d, K, M, T = settings.d, settings.K, settings.block_length, settings.T
    data = _read_only(to_float(prepared.data) if prepared.data.dtype == object
                      else np.asarray(prepared.data, dtype=np.float64))  # mpmath data with a float64 x0: rounded
    x0 = np.array(prepared.x0, dtype=np.float64)

    # The reference's constructors check the objective, enforce_lipschitz, σ and the learner; nothing is drawn.
    unused = np.random.Generator(np.random.PCG64(0))
    common = dict(oracle=oracle, d=d, block_length=M, smoothing_radius=settings.smoothing_radius,
                  step_bound=settings.step_bound, directions=settings.directions, lipschitz=settings.lipschitz,
                  enforce_lipschitz=enforce_lipschitz, clip_radii=prepared.clip_radii, seed=prepared.seed,
                  noise_rng=unused, use_mp=False)
    if oracle in SINGLE_PASS_ORACLES:
        SinglePassOracle(objective, data, prepared.schedule, noise_std=settings.noise_stds[0], **common)
        spans = [prepared.schedule.block(t) for t in range(1, T + 1)]
        spans = tuple((s.start, s.stop) for s in spans)
    else:
        MultiPassOracle(objective, data, tree_size=settings.tree_size, steps=T, noise_stds=settings.noise_stds,
                        **common)
        spans = ((0, data.shape[0]),) * T
    ClippedOGD(d, float(settings.step_bound), float(settings.step_size), restart_blocks=restart_blocks)

    problem = _Problem(oracle, _Objective(objective, oracle in FIRST_ORDER_ORACLES, d, replicated,
                                          settings.lipschitz is not None),
                       data, x0, d, K, M, settings.tree_size, spans, float(settings.smoothing_radius),
                       float(settings.step_bound), float(settings.step_size),
                       tuple(float(s) for s in settings.noise_stds),
                       None if settings.lipschitz is None else float(settings.lipschitz), bool(enforce_lipschitz),
                       prepared.clip_radii, tuple(settings.directions), bool(restart_blocks), bool(record_path),
                       replicated, settings.direction_seed == "secret")
    entropies = [s if secret is None else secret.entropy for s, secret in zip(seeds, secrets)]
    size = len(seeds)
    per_block = _replicates_per_block(problem, size)
    outs = [_run_block(problem, seeds[a:a + per_block], entropies[a:a + per_block]) for a in range(0, size, per_block)]

    def cat(name):
        parts = [getattr(out, name) for out in outs]
        return None if parts[0] is None else np.concatenate(parts, axis=0)

    index = cat("output_index")
    averages = cat("block_averages")
    output = averages[np.arange(size), index].copy()
    evaluations = np.array([out.evaluations for out in outs for _ in range(out.final.shape[0])], dtype=np.int64)
    if replicated:
        ledger = ReplicatedLedger(prepared.ledger.algorithm, prepared.ledger.plan, settings,
                                  tuple(int(s) for s in seeds), source if private else None,
                                  condition if private else None)
        diagnostics = ReplicatedDiagnostics(cat("noiseless"), cat("noise"), cat("nonfinite"), cat("clipped"),
                                            evaluations)
        return DPResult(output=output, output_index=index, block_averages=averages, final_iterate=cat("final"),
                        releases=cat("releases"), segment_points=cat("segments"), query_points=cat("query_points"),
                        iterates=cat("iterates"), steps=cat("steps"), ledger=ledger, diagnostics=diagnostics)
    out = outs[0]
    diagnostics = NonPrivateDiagnostics(noiseless_sums=out.noiseless[0], noise=out.noise[0],
                                        nonfinite_counts=out.nonfinite[0], clipped_counts=out.clipped[0],
                                        evaluations=int(out.evaluations))

    def first(v):
        return None if v is None else v[0]

    return DPResult(output=output[0], output_index=int(index[0]), block_averages=averages[0],
                    final_iterate=out.final[0], releases=out.releases[0], segment_points=out.segments[0],
                    query_points=first(out.query_points), iterates=first(out.iterates), steps=first(out.steps),
                    ledger=prepared.ledger, diagnostics=diagnostics)
