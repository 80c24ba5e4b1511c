"""spider_sosp Algorithms 2 and 3 (Liu, Talwar, "Adaptive Batch Size for Privately Finding Second-Order Stationary
Points", arXiv 2024): vectorized float64 twin of ``reference.algorithms.spider_sosp``.

Same names, signatures, semantics and random draws as the reference (its module docstring gives the pseudocode, the
readings of the printed text, the stream keys and the draw schedule), so that runs agree draw for draw
(tests/test_fast_spider_sosp.py). What this module defines itself — the fast subject's own code — is the run
(``stochastic_spider``: the loop of Algorithm 2), the oracles of Algorithm 3 over whole batches (``GradientOracles``,
which the run calls), the streaming tree noise and the batch-size rules (``o1_batch_size``, ``adaptive_batch_size``).
Borrowed on purpose: the record order (``public_permutation``) and the saddle perturbation (``saddle_perturbation``),
which are the randomness contract itself, and the result types (``SpiderConfig``, ``PublicTrace``,
``NonPrivateDebugTrace``, ``SpiderResult``).

The differences from the reference:

* **A batch at a time.** Algorithm 2 stays a Python loop over steps (each step's batch size and query point are
  post-processing of the previous release); a step evaluates its b (O1) or 2·b_t (O2) record gradients in one or two
  calls, through ``GradientOracles`` (the object a caller gets too: one O1 or O2 call evaluates one batch). For the
  families of ``reference.objectives_sosp`` (``CosineFamily.gradient``, ``QuadraticFamily.gradient`` passed as the
  bound method) this module evaluates the family's formula on the whole batch itself (the same elementwise
  operations, ``_family_gradients``); for another callable it tries ``gradient(x, rows)`` with rows of shape (m, p),
  then the owner's ``gradients(x, rows)`` (the ``LossFamily`` protocol), each required to return (m, d). The first
  batch of an oracle object (of a run) probes the candidate: its first and last rows must equal, bit for bit, the
  reference's own calls ``gradient(x, z)`` on those records, or the next candidate is tried; with none, the oracles
  call ``gradient(x, z)`` one record at a time in the reference's order and through its checks (so a gradient the
  reference refuses is refused with the same words), for the rest of the object's life. A later batched call that
  raises or returns another shape falls back the same way. The probe's calls are not counted in ``evaluations``.
* **Same arithmetic, same order.** Per record the reference's operations (the non-finite replacement by 0, the clip
  to G or M‖x_t − x_{t−1}‖ with ``reference.precision.norm``'s operations, ∇f(x_t; z) − ∇f(x_{t−1}; z)); the sum
  over the batch left to right from 0 (``np.add.accumulate``: the reference's ``total = total + g``), then /b;
  ∇_t = ∇_{t−1} + O2; TREE(leaf) = 0 + ξ_{b_1} + ξ_{b_2} + … over NODE(leaf) in increasing order; g̃ = ∇ + TREE (+ g);
  x_{t+1} = x_t − ηg̃; drift + ‖g̃‖. So with a gradient whose batched values equal its per-record values (the
  probe's test) a run is BITWISE the reference's: iterates, release, trace and debug trace.
* **Tolerance.** Nothing here sums in another order, so the agreement to expect is equality, not a rounding band.
  A nonzero band could not be promised anyway: every branch of Algorithm 2 (drift ≥ κ, ‖g̃_{t−1}‖ ≤ threshold, the
  ceilings of b_t) is discontinuous in the release, and near the saddle the iteration amplifies a perturbation by
  up to 1 + |λ_min|/M per step (that is what escaping is), so a difference of one rounding in one record gradient
  can grow geometrically and then change the public trace. A gradient whose batched values differ from its
  per-record values in rows the probe does not look at voids bitwise agreement; nothing else does.
* **Tree noise.** The tree's generator ("spider_sosp", "noise") is read ahead in chunks of rows (``standard_normal
  ((k, d))``, k doubling), which consumes it exactly like the reference's one ``standard_normal(d)`` per step; rows
  drawn beyond the last step are never used. ξ = σ·z, and TREE(leaf) sums the ξ of the current tree (the run's,
  or with tree_scope="segment" the one started at the last O1 step) as ``TreeMechanism`` does.
* **Batch sizes.** The ceilings are evaluated in float64 with a relative bracket of 16u around the computed value
  (each computed value is within 6u of the exact one: at most 5 roundings on any path, each ≤ u = 2⁻⁵³, on inputs
  in [2⁻²⁰⁰, 2²⁰⁰] where nothing under- or overflows): when the bracket holds no integer its ceiling is the exact
  one; otherwise (an integer or near-integer value, inputs outside the range, results ≥ 2⁵⁰) the ceiling is
  computed in rationals by the reference's rule. The integers are therefore the reference's, always.

Arithmetic: float64; mpmath data or x0 are refused with a TypeError, as by the reference.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from ..algorithms.spider_sosp import (
    ADJACENCIES,
    KEY,
    STEP_KINDS,
    TREE_SCOPES,
    NonPrivateDebugTrace,
    PublicTrace,
    SpiderConfig,
    SpiderResult,
    _check_bool,  # the reference's argument checks, word for word
    _float,
    _float_vector,
    public_permutation,
    saddle_perturbation,
)
from ..objectives_sosp import CosineFamily, LossFamily, QuadraticFamily
from ..rng import SEED_BOUND
from ..secrets import secret_seed
from ..validation import check_array, check_int, check_real

__all__ = [
    "KEY",
    "ADJACENCIES",
    "TREE_SCOPES",
    "STEP_KINDS",
    "o1_batch_size",
    "adaptive_batch_size",
    "saddle_perturbation",
    "public_permutation",
    "GradientOracles",
    "SpiderConfig",
    "PublicTrace",
    "NonPrivateDebugTrace",
    "SpiderResult",
    "stochastic_spider",
]


# ---------------------------------------------------------------------------------------------------
# Batch sizes (Lemma 3.8): the reference's exact ceilings, in float64 when the answer is certain

_U = 2.0**-53
_LOW, _HIGH = 1.0 - 16 * _U, 1.0 + 16 * _U  # both exact in float64 (1 ∓ 2⁻⁴⁹)
_SAFE = (2.0**-200, 2.0**200)  # products and quotients of two or three such numbers stay normal
_LARGEST_FLOAT_CEILING = 2.0**50
_LARGEST_FLOAT_D = 2**50


def _safe(*values: float) -> bool:
    return all(_SAFE[0] <= v <= _SAFE[1] for v in values)


def _bracketed_ceil(value: float) -> int | None:
    """⌈t⌉ for an exact t with |t − value| ≤ 6u·value (value > 0, normal), or None when an integer may lie between
    them. fl(value·(1 − 16u)) ≤ value(1 − 16u)(1 + u) < t and likewise above, so ⌈low⌉ = ⌈high⌉ pins ⌈t⌉ (⌈·⌉ is
    monotone)."""
    if not value < _LARGEST_FLOAT_CEILING:
        return None
    low = math.ceil(value * _LOW)
    return low if low == math.ceil(value * _HIGH) else None


def _exact_ceil_sqrt(q: Fraction) -> int:
    """⌈√q⌉ for a rational q ≥ 0: the smallest integer m with m² ≥ ⌈q⌉."""
    c = math.ceil(q)
    return 0 if c <= 0 else math.isqrt(c - 1) + 1


def _exact_ceil_sum_sqrt(r: Fraction, q: Fraction) -> int:
    """⌈r + √q⌉ for rationals r, q ≥ 0: the smallest integer k ≥ r with (k − r)² ≥ q (k is the estimate below or one
    more, since ⌈r⌉ + ⌈√q⌉ − 2 < r + √q ≤ ⌈r⌉ + ⌈√q⌉)."""
    k = math.ceil(r) + _exact_ceil_sqrt(q) - 1
    return k if (k >= r and (k - r) ** 2 >= q) else k + 1


def _o1_size(G: float, d: int, epsilon: float, alpha: float) -> int:
    """b = ⌈G√d/(εα) + G²/α²⌉ on checked floats (``o1_batch_size``)."""
    private = not math.isinf(epsilon)
    if d <= _LARGEST_FLOAT_D and _safe(G, alpha, *((epsilon,) if private else ())):
        # ≤ 5 roundings on a path: √d, G·√d, ε·α, the quotient, the sum (G·G, α·α, the quotient on the other);
        # both terms are non-negative, so the sum's relative error is at most the larger term's plus one rounding
        value = G * G / (alpha * alpha) + (G * math.sqrt(d) / (epsilon * alpha) if private else 0.0)
        found = _bracketed_ceil(value)
        if found is not None:
            return found
    Gq, aq = Fraction(G), Fraction(alpha)
    q = Fraction(0) if not private else Gq * Gq * d / (Fraction(epsilon) * aq) ** 2
    return _exact_ceil_sum_sqrt(Gq * Gq / (aq * aq), q)


def _adaptive_size(v: float, alpha: float, epsilon: float, d: int, kappa: float) -> int:
    """b_t = max(⌈v√d/(αε)⌉, ⌈κv/α²⌉, 1) on checked floats (``adaptive_batch_size``)."""
    if v == 0.0:
        return 1  # both terms are exactly 0
    private = not math.isinf(epsilon)
    terms = []
    usable = d <= _LARGEST_FLOAT_D and _safe(v, alpha, kappa, *((epsilon,) if private else ()))
    # the κ term: 3 roundings (κ·v, α·α, the quotient)
    found = _bracketed_ceil(kappa * v / (alpha * alpha)) if usable else None
    terms.append(found if found is not None else
                 math.ceil(Fraction(kappa) * Fraction(v) / (Fraction(alpha) * Fraction(alpha))))
    if private:
        # the privacy term: 4 roundings (√d, v·√d, α·ε, the quotient); ⌈√(v²d/(αε)²)⌉ = ⌈v√d/(αε)⌉
        found = _bracketed_ceil(v * math.sqrt(d) / (alpha * epsilon)) if usable else None
        terms.append(found if found is not None else
                     _exact_ceil_sqrt(Fraction(v) ** 2 * d / (Fraction(alpha) * Fraction(epsilon)) ** 2))
    return max(*terms, 1)


def o1_batch_size(lipschitz, d, epsilon, alpha) -> int:
    """b = ⌈G√d/(εα) + G²/α²⌉, the O1 batch of spider_sosp Lemma 3.8 (Algorithm 2 line 5): the reference's integer,
    in float64 unless the value is within 16 roundings of an integer (module doc)."""
    G = float(check_real("lipschitz", lipschitz, positive=True))
    d = check_int("d", d, minimum=1)
    epsilon = float(check_real("epsilon", epsilon, positive=True, allow_inf=True))
    alpha = float(check_real("alpha", alpha, positive=True))
    return _o1_size(G, d, epsilon, alpha)


def adaptive_batch_size(previous_release_norm, alpha, epsilon, d, kappa) -> int:
    """b_t = max(⌈‖g̃_{t−1}‖√d/(αε)⌉, ⌈κ‖g̃_{t−1}‖/α²⌉, 1), the O2 batch of spider_sosp Lemma 3.8: the reference's
    integer, in float64 unless a term is within 16 roundings of an integer (module doc)."""
    v = float(check_real("previous_release_norm", previous_release_norm, nonnegative=True))
    alpha = float(check_real("alpha", alpha, positive=True))
    epsilon = float(check_real("epsilon", epsilon, positive=True, allow_inf=True))
    d = check_int("d", d, minimum=1)
    kappa = float(check_real("kappa", kappa, positive=True))
    return _adaptive_size(v, alpha, epsilon, d, kappa)


# ---------------------------------------------------------------------------------------------------
# The reference's vector operations, whole batches at once


def _norm(v: np.ndarray) -> float:
    """``reference.precision.norm`` of one float64 vector (the same operations: max|v| scaling, ``np.linalg.norm``)."""
    largest = float(np.abs(v).max())
    if 0.0 < largest < math.inf:  # the usual case, with fewer NumPy calls: the same divisions and product
        return largest * float(np.linalg.norm(v / largest, axis=-1))
    peak = np.max(np.abs(v), axis=-1, keepdims=True)  # 0, or an overflowed difference: the reference's steps
    safe = np.where(peak > 0, peak, 1.0)
    with np.errstate(invalid="ignore"):
        return float(np.squeeze(peak, axis=-1) * np.linalg.norm(v / safe, axis=-1))


def _norms(rows: np.ndarray) -> np.ndarray:
    """``_norm`` of every row of (m, d), in one pass."""
    largest = np.max(np.abs(rows), axis=-1, keepdims=True)
    safe = np.where(largest > 0, largest, 1.0)
    return largest[:, 0] * np.linalg.norm(rows / safe, axis=-1)


def _clip_rows(rows: np.ndarray, radius: float) -> tuple[np.ndarray, int]:
    """The reference's ``_clip`` on every row: v·(radius/‖v‖) where ‖v‖ > radius; and how many rows were clipped."""
    lengths = _norms(rows)
    over = ~(lengths <= radius)  # the reference clips unless ‖v‖ <= radius: a NaN length (overflow) is "over" too
    count = int(np.count_nonzero(over))
    if count == 0:
        return rows, 0
    with np.errstate(divide="ignore", invalid="ignore"):  # rows of length 0 are never over: their quotient is unused
        scaled = rows * (radius / lengths)[:, None]
    return np.where(over[:, None], scaled, rows), count


def _ordered_mean(rows: np.ndarray) -> np.ndarray:
    """(0 + r_1 + r_2 + … + r_m)/m, left to right as the reference's loop. The accumulation starts at r_1 rather
    than 0 + r_1; the two differ only in the sign of a zero sum of −0.0 terms, which + 0.0 makes +0.0 as 0 + … does."""
    return (np.add.accumulate(rows, axis=0)[-1] + 0.0) / rows.shape[0]


# ---------------------------------------------------------------------------------------------------
# Record gradients of a batch


def _family_gradients(family: LossFamily, x: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """∇f(x; z) for every row z of a batch, by the family's own formula applied elementwise to the batch
    (``CosineFamily``: −c·s·sin(x − z); ``QuadraticFamily``: Ax − z with Ax formed once)."""
    if isinstance(family, CosineFamily):
        return -family.c * family.s * np.sin(x - rows)
    return family.A @ x - rows


def _known_family(gradient) -> LossFamily | None:
    """The family whose (not overridden) ``gradient`` method ``gradient`` is, for the families this module knows."""
    owner = getattr(gradient, "__self__", None)
    if type(owner) in (CosineFamily, QuadraticFamily) and getattr(gradient, "__func__", None) is LossFamily.gradient:
        return owner
    return None


class _RecordGradients:
    """The record gradients of a batch at one or two points, (m, d) float64 each (module doc, "A batch at a time").

    Non-finite entries are returned as they are (the caller replaces the row, as the reference does)."""

    def __init__(self, gradient: Callable, d: int):
        self.gradient = gradient
        self.d = d
        self.batched: Callable | None = None
        self.mode: str | None = None  # None: not probed yet; "batched" or "scalar"
        # calls ``gradient(x, z)`` in the reference's order that returned during the current evaluation: when one
        # raises, this is how many the reference's loop had counted (its ``evaluations += 1`` follows each call)
        self.returned = 0

    # -- the reference's calls, one record at a time -----------------------------------------------------

    def _scalar(self, x: np.ndarray, row: np.ndarray, index) -> np.ndarray:
        """One call ``gradient(x, z)`` through the reference's checks and words (``GradientOracles``)."""
        where = f"record {index}"
        g = np.asarray(self.gradient(x.copy(), row))  # a fresh x per call, as the reference's checked copy
        self.returned += 1
        if g.shape != (self.d,):
            raise ValueError(f"gradient must return shape ({self.d},), got {g.shape} at {where}")
        if g.dtype.kind not in "fiu":
            raise TypeError(f"gradient must return real float64 values, got dtype {g.dtype} at {where}")
        return g.astype(np.float64)

    def _one_at_a_time(self, points, rows, indices) -> list[np.ndarray]:
        """The reference's order: record by record, and within a record x_t before x_{t−1}."""
        self.returned = 0
        out = [np.empty((rows.shape[0], self.d)) for _ in points]
        for i in range(rows.shape[0]):
            for s, x in enumerate(points):
                out[s][i] = self._scalar(x, rows[i], indices[i])
        return out

    # -- batched candidates --------------------------------------------------------------------------------

    def _candidates(self):
        family = _known_family(self.gradient)
        if family is not None:
            yield lambda x, rows: _family_gradients(family, x, rows)
        yield self.gradient
        owner_batch = getattr(getattr(self.gradient, "__self__", None), "gradients", None)
        if callable(owner_batch):
            yield owner_batch

    def _call(self, batched, x: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
        """batched(x, rows) as (m, d) float64, or None when it raises or returns another shape or dtype."""
        try:
            values = np.asarray(batched(x.copy(), rows))
        except Exception:  # noqa: BLE001 — a gradient written for one record: the next candidate, or one at a time
            return None
        if values.shape != (rows.shape[0], self.d) or values.dtype.kind not in "fiu":
            return None
        return values.astype(np.float64, copy=False)

    def _probe(self, x: np.ndarray, rows: np.ndarray, indices) -> np.ndarray | None:
        """Choose the batched candidate on the first batch; its values at x, or None (one at a time from now on)."""
        # the reference's first call comes first: a gradient it refuses there is refused here with its words
        first = self._scalar(x, rows[0], indices[0])
        last = None
        for candidate in self._candidates():
            values = self._call(candidate, x, rows)
            if values is None or not np.array_equal(values[0], first, equal_nan=True):
                continue
            if last is None:
                try:
                    last = self._scalar(x, rows[-1], indices[-1])
                except Exception:  # noqa: BLE001 — met again, in the reference's order, one record at a time
                    return None
            if np.array_equal(values[-1], last, equal_nan=True):
                self.batched = candidate
                return values
        return None

    def __call__(self, points, rows: np.ndarray, indices) -> list[np.ndarray]:
        """[(m, d) gradients at each point] for points [x_t] (O1) or [x_t, x_{t−1}] (O2)."""
        self.returned = 0  # the probe's first call is the reference's first call
        if self.mode is None:
            values = self._probe(points[0], rows, indices)
            self.mode = "scalar" if values is None else "batched"
            if values is not None:
                out = [values, *(self._call(self.batched, x, rows) for x in points[1:])]
                if all(v is not None for v in out):
                    return out
                self.mode = "scalar"
        if self.mode == "batched":
            out = [self._call(self.batched, x, rows) for x in points]
            if all(v is not None for v in out):
                return out
            self.mode = "scalar"  # a later batched call failed: the reference's calls from here on
        return self._one_at_a_time(points, rows, indices)


# ---------------------------------------------------------------------------------------------------
# Algorithm 3: the gradient oracles, a batch at a time


def _read_only(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr


def _is_permutation(order: np.ndarray) -> bool:
    """Whether an integer vector of length n holds each of 0..n−1 once: the reference's sort(order) == arange(n), in
    O(n) (n values in [0, n), every one of them reached)."""
    n = order.shape[0]
    if n == 0:
        return True
    if order.min() < 0 or order.max() >= n:
        return False
    seen = np.zeros(n, dtype=bool)
    seen[order] = True
    return bool(seen.all())


class GradientOracles:
    """spider_sosp Algorithm 3: the gradient oracles O1 and O2 over ONE pass of the data in a public order, each call
    evaluating its batch at once (``_RecordGradients``).

    Constructor, methods, attributes, refusals and values as ``reference.algorithms.spider_sosp.GradientOracles``
    (its docstring gives the arguments and the paper lines): ``o1(x, batch_size)``, ``o2(x, x_previous, batch_size, *,
    clip_radius=None)``, ``remaining``, ``records_used``, ``batches`` (public), ``nonfinite_counts``,
    ``clipped_counts`` (NOT PRIVATE) and ``evaluations`` (the reference's gradient calls: b per O1, 2b_t per O2; the
    probe's calls are not counted). Per record the reference's operations — a record whose gradient has a non-finite
    entry (O1), or is non-finite at either point (O2), contributes 0 and is not clipped; the clip to G (O1) or to the
    radius (O2: ``clip_radius``, default M‖x − x'‖) with ``reference.precision.norm``'s operations — then the sum left
    to right from 0 and /b (``_ordered_mean``): outputs BITWISE equal to the reference's (module doc).

    Arguments are checked in the reference's order and words; a draw consumes its records before the gradient is
    called (a gradient that raises leaves them used, and ``evaluations`` counts the calls the reference's loop had
    made, as the reference does). One reference behaviour is reproduced, not corrected: with ``enforce_constants``
    and no ``clip_radius``, when x − x' overflows the radius M‖x − x'‖ is NaN, every finite record difference is
    "clipped" to NaN, and a zero difference raises ZeroDivisionError (the reference's ``radius / length``).
    """

    def __init__(self, gradient: Callable, data, order, *, d, lipschitz=None, smoothness=None,
                 enforce_constants=False):
        # the reference's checks, in its order and words
        if not callable(gradient):
            raise TypeError(f"gradient must be callable as gradient(x, z), got {type(gradient).__name__}")
        data = check_array("data", data, ndim=2)
        if data.dtype == object:
            raise TypeError("data must be float64 (this module computes in float64)")
        self.gradient = gradient
        self.data = _read_only(np.array(data, dtype=np.float64))
        n = self.data.shape[0]
        order = np.asarray(order)
        if order.shape != (n,) or order.dtype.kind not in "iu" or not _is_permutation(order):
            raise ValueError(f"order must be a permutation of 0..n-1 (n = {n}): each record is read at most once")
        self.order = _read_only(order.astype(np.int64))
        self.d = check_int("d", d, minimum=1)
        self.enforce_constants = _check_bool("enforce_constants", enforce_constants)
        self.lipschitz = None if lipschitz is None else _float("lipschitz", lipschitz, positive=True)
        self.smoothness = None if smoothness is None else _float("smoothness", smoothness, positive=True)
        if self.enforce_constants and (self.lipschitz is None or self.smoothness is None):
            raise ValueError("enforce_constants=True needs lipschitz (G) and smoothness (M): the clip radii")
        self._next = 0
        self.batches: list[np.ndarray] = []
        self.nonfinite_counts: list[int] = []
        self.clipped_counts: list[int] = []
        self.evaluations = 0
        self._gradients = _RecordGradients(gradient, self.d)

    @property
    def n(self) -> int:
        return self.data.shape[0]

    @property
    def remaining(self) -> int:
        """The number of unused records."""
        return self.n - self._next

    @property
    def records_used(self) -> int:
        return self._next

    # -- what the run calls, on checked values -------------------------------------------------------------

    def _take(self, batch_size: int) -> np.ndarray:
        """The next ``batch_size`` (1 ≤ batch_size ≤ remaining) unused records' indices, marked used."""
        indices = self.order[self._next:self._next + batch_size]
        self._next += batch_size
        self.batches.append(indices)
        return indices

    def _evaluate(self, points: list, indices: np.ndarray) -> list[np.ndarray]:
        """The record gradients of the batch at each point, counted as the reference counts its calls."""
        rows = _read_only(self.data[indices])
        try:
            values = self._gradients(points, rows, indices)
        except Exception:
            self.evaluations += self._gradients.returned
            raise
        self.evaluations += len(points) * indices.shape[0]
        return values

    def _o1(self, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """(1/b) Σ_{z∈S} ∇f(x; z) over the drawn records (non-finite rows 0, clipped to G with enforce_constants)."""
        values = self._evaluate([x], indices)[0]
        finite = np.isfinite(values).all(axis=1)
        nonfinite = indices.shape[0] - int(np.count_nonzero(finite))
        if nonfinite:
            values = np.where(finite[:, None], values, 0.0)
        clipped = 0
        if self.enforce_constants:  # a zero row (replaced) is never over G > 0
            values, clipped = _clip_rows(values, self.lipschitz)
        self.nonfinite_counts.append(nonfinite)
        self.clipped_counts.append(clipped)
        return _ordered_mean(values)

    def _o2(self, x: np.ndarray, x_previous: np.ndarray, indices: np.ndarray, radius: float | None) -> np.ndarray:
        """(1/b_t) Σ_{z∈S} (∇f(x; z) − ∇f(x'; z)) over the drawn records (a pair with a non-finite value 0; each
        difference clipped to ``radius`` unless it is None)."""
        evaluations = self.evaluations
        current, previous = self._evaluate([x, x_previous], indices)
        finite = np.isfinite(current).all(axis=1) & np.isfinite(previous).all(axis=1)
        nonfinite = indices.shape[0] - int(np.count_nonzero(finite))
        with np.errstate(invalid="ignore", over="ignore"):  # pairs with a non-finite value are replaced below
            values = current - previous
        if nonfinite:
            values = np.where(finite[:, None], values, 0.0)
        clipped = 0
        if radius is not None:
            if math.isnan(radius):  # the reference: ‖v‖ <= NaN is false, so every finite pair takes v·(NaN/‖v‖)
                zero = finite & (_norms(values) == 0.0)
                if zero.any():  # NaN/0.0 in Python floats, at the first such record of the reference's loop
                    self.evaluations = evaluations + 2 * (int(np.argmax(zero)) + 1)
                    raise ZeroDivisionError("float division by zero")
                values = np.where(finite[:, None], np.nan, values)
                clipped = indices.shape[0] - nonfinite
            else:  # a zero row (replaced) is never over a radius ≥ 0
                values, clipped = _clip_rows(values, radius)
        self.nonfinite_counts.append(nonfinite)
        self.clipped_counts.append(clipped)
        return _ordered_mean(values)

    # -- Algorithm 3 ---------------------------------------------------------------------------------------

    def _draw(self, batch_size) -> np.ndarray:
        """The next ``batch_size`` unused records' indices (Algorithm 3 line 3), checked as the reference does."""
        batch_size = check_int("batch_size", batch_size, minimum=1)
        if batch_size > self.remaining:
            raise ValueError(f"batch_size = {batch_size} exceeds the {self.remaining} unused records: Algorithm 3 "
                             "draws among unused records only (one pass, no record reused)")
        return self._take(batch_size)

    def o1(self, x, batch_size) -> np.ndarray:
        """O1(x_t) = (1/b) Σ_{z∈S} ∇f(x_t; z) over the next b unused records."""
        x = _float_vector("x", x, self.d)
        return self._o1(x, self._draw(batch_size))

    def o2(self, x, x_previous, batch_size, *, clip_radius=None) -> np.ndarray:
        """O2(x_t, x_{t−1}) = (1/b_t) Σ_{z∈S} (∇f(x_t; z) − ∇f(x_{t−1}; z)), the SAME record z at both points.

        clip_radius (with ``enforce_constants``): the radius each difference is clipped to; default M‖x_t − x_{t−1}‖
        (the reference's; checked after the draw, as there)."""
        x = _float_vector("x", x, self.d)
        x_previous = _float_vector("x_previous", x_previous, self.d)
        indices = self._draw(batch_size)
        if clip_radius is not None:
            clip_radius = _float("clip_radius", clip_radius, nonnegative=True)
        radius = (None if not self.enforce_constants else
                  self.smoothness * _norm(x - x_previous) if clip_radius is None else clip_radius)
        return self._o2(x, x_previous, indices, radius)


# ---------------------------------------------------------------------------------------------------
# TREE(t) of the shared TreeMechanism, streamed


class _TreeNoise:
    """TREE(leaf) = Σ_{(·,b) ∈ NODE(leaf)} ξ_b of ``reference.mechanisms.TreeMechanism`` with one generator for the
    run: step t draws z_t (a row of a chunk read ahead, module doc), ξ_t = σ·z_t, and the tree of step t is the one
    whose leaf 1 was drawn at step t − leaf + 1."""

    _FIRST_CHUNK = 64

    def __init__(self, d: int, sigma: float, rng: np.random.Generator):
        self.d, self.sigma, self.rng = d, float(sigma), rng
        self.xi = np.empty((0, d))

    def _draw(self, count: int) -> None:
        size = max(self._FIRST_CHUNK, self.xi.shape[0])  # doubling: O(log steps) draws
        while self.xi.shape[0] < count:
            chunk = self.sigma * self.rng.standard_normal((size, self.d))  # = size calls standard_normal(d), scaled
            self.xi = np.concatenate([self.xi, chunk])

    def __call__(self, step: int, leaf: int) -> np.ndarray:
        if step >= self.xi.shape[0]:
            self._draw(step + 1)
        first = step - leaf + 1  # the draw index of the tree's leaf 1
        total = np.zeros(self.d)
        bits = leaf
        while bits:  # NODE(leaf) in increasing order: the right ends are leaf with its low set bits cleared
            top = 1 << (bits.bit_length() - 1)
            bits ^= top
            total = total + self.xi[first + (leaf - bits) - 1]
        return total


# ---------------------------------------------------------------------------------------------------
# Algorithm 2


def stochastic_spider(gradient: Callable, data, x0, config: SpiderConfig, *, seed, noise_seed=None) -> SpiderResult:
    """spider_sosp Algorithm 2 with the oracles of Algorithm 3, one batch evaluation per oracle call (module doc).

    Arguments, draws, refusals and result as ``reference.algorithms.spider_sosp.stochastic_spider``.
    """
    # the reference's checks, in its order and words
    data = check_array("data", data, ndim=2)
    if data.dtype == object:
        raise TypeError("data must be float64 (this module computes in float64)")
    if data.shape[0] < 1:
        raise ValueError("data must have at least one row (n >= 1)")
    if not isinstance(config, SpiderConfig):
        raise TypeError(f"config must be a SpiderConfig, got {type(config).__name__}")
    x0 = _float_vector("x0", x0, config.d)
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    secret = secret_seed(noise_seed, public_seeds=(seed,), name="noise_seed")
    n, d = data.shape[0], config.d
    horizon = n if config.steps is None else config.steps  # T
    eta = config.step_size
    kappa, alpha, epsilon, threshold = config.kappa, config.alpha, config.epsilon, config.threshold

    oracles = GradientOracles(gradient, data, public_permutation(seed, n), d=d, lipschitz=config.lipschitz,
                              smoothness=config.smoothness, enforce_constants=config.enforce_constants)
    secret_streams = secret.streams()
    tree = _TreeNoise(d, config.noise_std, secret_streams.generator(KEY, "noise"))

    iterates, released_all, kinds, sizes, drifts, leaves, perturbation_steps = [], [], [], [], [], [], []
    estimates, noises, perturbations = [], [], []

    x, x_previous = x0.copy(), None
    drift = kappa  # line 2
    frozen_previous = 1
    previous_norm = None  # ‖g̃_{t−1}‖, computed once per step (the reference computes the same value where needed)
    nabla = None
    segment_start = 0
    halt_reason, next_batch_size = "horizon", None
    t = 0
    while t < horizon:  # line 3
        if drift >= kappa:  # line 4
            kind, need = "O1", config.batch_size
        else:
            kind, need = "O2", _adaptive_size(previous_norm, alpha, epsilon, d, kappa)
        if oracles.remaining < need:  # line 3's data test, for the batch this step needs
            halt_reason, next_batch_size = "data", need
            break
        drifts.append(drift)
        indices = oracles._take(need)  # need ≥ 1 and ≤ remaining: the public draw's checks hold
        if kind == "O1":  # line 5: (1/b) Σ ∇f(x_t; z)
            nabla = oracles._o1(x, indices)
            drift = 0.0
            segment_start = t
        else:  # line 7: ∇_{t−1} + (1/b_t) Σ (∇f(x_t; z) − ∇f(x_{t−1}; z))
            # with enforce_constants each difference is clipped to ‖g̃_{t−1}‖, the quantity b_t is sized for (the
            # reference's clip_radius)
            nabla = nabla + oracles._o2(x, x_previous, indices, previous_norm if config.enforce_constants else None)
        frozen = frozen_previous - 1  # lines 5 and 7
        leaf = t + 1 if config.tree_scope == "global" else t - segment_start + 1
        noise = tree(t, leaf)
        g = np.zeros(d)
        if config.perturb and frozen_previous <= 0 and previous_norm <= threshold:  # line 9
            frozen = config.freeze_steps  # line 10
            if config.reset_drift_on_perturb:
                drift = 0.0
            g = saddle_perturbation(secret_streams.generator(KEY, "perturbation", t), d, config.perturbation_scale)
            released = nabla + noise + g  # line 11
            perturbation_steps.append(t)
        else:
            released = nabla + noise  # line 13
        x_next = x - eta * released  # line 15
        if not (np.isfinite(released).all() and np.isfinite(x_next).all()):
            raise ValueError(f"the run diverged at step t = {t}: the release or the iterate is not finite "
                             "(float64 overflow); lower the step or the noise")
        released_norm = _norm(released)
        drift = drift + released_norm  # line 15

        iterates.append(x_next)
        released_all.append(released)
        kinds.append(kind)
        sizes.append(need)
        leaves.append(leaf)
        estimates.append(nabla)
        noises.append(noise)
        perturbations.append(g)

        x_previous, x = x, x_next
        frozen_previous, previous_norm = frozen, released_norm
        t += 1

    def stack(rows_):
        return np.array(rows_, dtype=np.float64).reshape(len(rows_), d)

    trace = PublicTrace(
        released=stack(released_all), kinds=tuple(kinds), batch_sizes=np.array(sizes, dtype=np.int64),
        drift=np.array(drifts, dtype=np.float64), leaves=np.array(leaves, dtype=np.int64),
        perturbation_steps=tuple(perturbation_steps), batch_indices=tuple(oracles.batches),
        records_used=oracles.records_used, records_available=n, halt_reason=halt_reason,
        next_batch_size=next_batch_size,
    )
    debug = NonPrivateDebugTrace(
        estimates=stack(estimates), tree_noise=stack(noises), perturbations=stack(perturbations),
        nonfinite_counts=np.array(oracles.nonfinite_counts, dtype=np.int64),
        clipped_counts=np.array(oracles.clipped_counts, dtype=np.int64), evaluations=oracles.evaluations,
    )
    return SpiderResult(iterates=stack(iterates), initial_point=x0, trace=trace, debug=debug, config=config,
                        seed=seed, secret_seed_source=secret.source, guarantee_condition=secret.guarantee_condition)
