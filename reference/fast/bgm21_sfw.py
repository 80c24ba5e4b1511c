"""bgm21 §4.1 Algorithm 1 (A_polySFW) and §4.2 Algorithm 6 (A_nSFW): vectorized float64 twin of
``reference.algorithms.bgm21_sfw``.

Same names, signatures, refusals, random draws and results as the reference (its module docstring gives the
pseudocode with the paper's line numbers, the readings of the printed text, the stream keys and the draw schedule), so
that runs agree draw for draw and bit for bit (tests/test_fast_bgm21.py; the backend claim
``bgm21.backend.sfw_run``). What this module defines itself — the fast subject's own code — is the run of each
algorithm (``poly_sfw``, ``noisy_sfw``), the recursive estimator over whole batches (``RecursiveGradientEstimator``,
lines 5, 10, 11) and the scores of the report-noisy-min step (lines 6, 12). Borrowed on purpose: the record order
(``reference.batching``), the Laplace draw and the argmin of ``reference.selection`` (the randomness contract), the
linear minimization oracles of ``reference.geometry``, the argument checks and schedule (the reference's own
``_prepare_poly_sfw`` and ``_prepare_noisy_sfw``), and the result types.

The differences from the reference:

* **A batch at a time.** A step evaluates the m record gradients of its batch in one call per point. Candidates, in
  this order: ``gradient(w, rows)`` with rows of shape (m, p), then the owner's ``gradients(w, rows)`` (the
  ``LossFamily`` protocol of ``reference.objectives_sosp``), each required to return (m, d) real values. The first
  batch of a run probes a candidate: each of its rows must equal, bit for bit, the reference's own call
  ``gradient(w, z)`` on that record (made first, in the reference's order), and likewise at a second, generic point
  w + (1 + |w|)⊙cos(1.7k)/√d; else the next candidate is tried. With none, or when a later batched call raises or
  returns another shape, the run calls ``gradient(w, z)`` one record at a time in the reference's order (record by
  record, w before w_prev) through the reference's checks, so a gradient the reference refuses is refused with the
  same words. The probe's calls are not counted in ``evaluations``. This is the convention of
  ``reference.fast.spider_sosp``, made stricter: a gradient that forms ⟨x, w⟩ by a matrix product on a batch (BLAS
  gemv) and by ``np.dot`` on one record differs in the last bit on about 70 % of rows (measured at d = 10), yet
  agrees on every row at a start such as w = 0, where the inner products are exact in any order; hence the whole
  batch and the generic point. Bitwise agreement still rests on the batched values equalling the per-record ones at
  the points and records the probe does not see (tests/test_fast_bgm21.py runs such a gradient: it is refused).
* **Same arithmetic, same order.** Per record the reference's operations (a non-finite gradient contributes 0; a
  pair with a non-finite value at w_prev contributes its fresh term only), the batch sums left to right from 0
  (``np.add.accumulate``: the reference's ``total += g``), then /m, + the noise (zeros when there is none, as the
  reference adds them), and line 11's (1 − η)(∇ + Δ) + η(fresh + N). Hence with a gradient whose batched values equal
  its per-record values a run is BITWISE the reference's: iterates, output, public and debug traces.
* **Scores by one matrix product, certified.** Lines 6 and 12 take argmin_j (⟨V_j, ∇⟩ + u_j); the reference computes
  each ⟨V_j, ∇⟩ with its own ``np.dot`` and BLAS's matrix-vector product sums in another order (on this machine they
  differ in the last bit for most inputs), so a vertex chosen from ``V @ ∇`` could in principle differ. Here the
  Laplace vector is drawn exactly as ``laplace_noisy_argmin`` draws it (one ``laplace(0, s_r, J)`` call on the key
  ("bgm21", "poly_sfw", "noise", r, t)), and the winner of ``V @ ∇ + u`` is accepted only when it is certain: any
  float64 dot product of d terms is within γ_d Σ_k |V_jk ∇_k| of the exact one (Higham, Th. 3.5, in any order, with
  or without fused multiply-adds), so the two computations differ by at most 2γ_d (|V| @ |∇|)_j; with that interval
  (doubled, plus 4u of the magnitudes for the roundings of the comparison itself) the winner's upper end must lie
  strictly below every other vertex's lower end. Otherwise (a near tie, a non-finite value) the step is recomputed
  by the reference's own route on a fresh generator of the same key (same draw): ``laplace_noisy_argmin`` on the
  ``np.dot`` scores, or ``Polytope.lmo`` when s_r = 0. The chosen index is therefore always the reference's.

Arithmetic: float64; mpmath data are refused with a TypeError, as by the reference.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..algorithms.bgm21_sfw import (
    KEY,
    MAX_ROUNDS,
    ROUNDINGS,
    SIGMA_HAT_ETAS,
    NoisySFWConfig,
    NonPrivateDebugTrace,
    PolySFWConfig,
    PublicTrace,
    SFWResult,
    _data,
    _finite_point,
    _float,
    _float_vector,
    _mu,
    _output_index,
    _prepare_noisy_sfw,  # the reference's argument checks and schedule, word for word
    _prepare_poly_sfw,
    _step,
    inverse_sqrt_step,
    printed_lap_scale,
    printed_noise_factor,
    sfw_batch_sizes,
    sfw_data_budget,
)
from ..geometry import LpBall, Polytope
from ..selection import laplace_noisy_argmin
from ..validation import check_int

__all__ = [
    "KEY",
    "SIGMA_HAT_ETAS",
    "ROUNDINGS",
    "MAX_ROUNDS",
    "inverse_sqrt_step",
    "sfw_batch_sizes",
    "sfw_data_budget",
    "printed_lap_scale",
    "printed_noise_factor",
    "RecursiveGradientEstimator",
    "PolySFWConfig",
    "NoisySFWConfig",
    "PublicTrace",
    "NonPrivateDebugTrace",
    "SFWResult",
    "poly_sfw",
    "noisy_sfw",
]

_U = 2.0**-53


def _gamma(n: int) -> float:
    """γ_n = nu/(1 − nu) (Higham's standard model)."""
    return n * _U / (1.0 - n * _U)


# ---------------------------------------------------------------------------------------------------
# Record gradients of a batch


class _RecordGradients:
    """The record gradients of one batch at one or two points, (m, d) float64 each (module doc, "A batch at a time").

    Non-finite entries are returned as they are (the estimator replaces the rows, as the reference does)."""

    def __init__(self, gradient: Callable, d: int):
        self.gradient = gradient
        self.d = d
        self.batched: Callable | None = None
        self.mode: str | None = None  # None: not probed yet; "batched" or "scalar"

    def _scalar(self, w: np.ndarray, row: np.ndarray) -> np.ndarray:
        """One call ``gradient(w, z)`` through the reference's checks and words (``_record_gradient``)."""
        g = np.asarray(self.gradient(w.copy(), row), dtype=np.float64)
        if g.shape != (self.d,):
            raise ValueError(f"gradient(w, z) must return shape ({self.d},), got {g.shape}")
        return g

    def _one_at_a_time(self, points, rows) -> list[np.ndarray]:
        """The reference's order: record by record, and within a record w before w_prev."""
        out = [np.empty((rows.shape[0], self.d)) for _ in points]
        for i in range(rows.shape[0]):
            for s, w in enumerate(points):
                out[s][i] = self._scalar(w, rows[i])
        return out

    def _candidates(self):
        yield self.gradient
        owner_batch = getattr(getattr(self.gradient, "__self__", None), "gradients", None)
        if callable(owner_batch):
            yield owner_batch

    def _call(self, batched, w: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
        """batched(w, rows) as (m, d) float64, or None when it raises or returns another shape or dtype."""
        try:
            with np.errstate(all="ignore"):
                values = np.asarray(batched(w.copy(), rows))
        except Exception:  # noqa: BLE001 — a gradient written for one record: the next candidate, or one at a time
            return None
        if values.shape != (rows.shape[0], self.d) or values.dtype.kind not in "fiu":
            return None
        return values.astype(np.float64, copy=False)

    def _probe(self, w: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
        """Choose the batched candidate on the first batch; its values at w, or None (one at a time from now on).

        Every row of the first batch is also evaluated by the reference's own calls, in its order (so a gradient it
        refuses is refused here with its words), and a candidate must equal them bit for bit on every row."""
        scalar = np.empty((rows.shape[0], self.d))
        for i in range(rows.shape[0]):
            scalar[i] = self._scalar(w, rows[i])
        # a second, generic point: at a start such as 0 or a vertex many inner products are exact in any order,
        # so agreement there says little; a call that fails here (not a reference call) just rejects batching
        generic = w + (1.0 + np.abs(w)) * np.cos(np.arange(1, self.d + 1) * 1.7) / np.sqrt(self.d)
        try:
            with np.errstate(all="ignore"):
                scalar_generic = np.array([self._scalar(generic, row) for row in rows]).reshape(rows.shape[0], self.d)
        except Exception:  # noqa: BLE001 — the probe point is ours, not the run's: one record at a time instead
            return None
        for candidate in self._candidates():
            values = self._call(candidate, w, rows)
            if values is None or not np.array_equal(values, scalar, equal_nan=True):
                continue
            at_generic = self._call(candidate, generic, rows)
            if at_generic is not None and np.array_equal(at_generic, scalar_generic, equal_nan=True):
                self.batched = candidate
                return values
        return None

    def __call__(self, points, rows: np.ndarray) -> list[np.ndarray]:
        """[(m, d) gradients at each point] for points [w] (line 5) or [w, w_prev] (lines 10–11)."""
        if self.mode is None:
            values = self._probe(points[0], rows)
            self.mode = "scalar" if values is None else "batched"
            if values is not None:
                out = [values, *(self._call(self.batched, w, rows) for w in points[1:])]
                if all(v is not None for v in out):
                    return out
                self.mode = "scalar"
        if self.mode == "batched":
            out = [self._call(self.batched, w, rows) for w in points]
            if all(v is not None for v in out):
                return out
            self.mode = "scalar"  # a later batched call failed: the reference's calls from here on
        return self._one_at_a_time(points, rows)


def _ordered_sum(rows: np.ndarray) -> np.ndarray:
    """0 + r_1 + r_2 + … + r_m, left to right as the reference's loop. The accumulation starts at r_1 rather than
    0 + r_1; the two differ only in the sign of a zero sum of −0.0 terms, which + 0.0 makes +0.0 as 0 + … does (the
    reference's running sum, started at +0.0, is never −0.0)."""
    return np.add.accumulate(rows, axis=0)[-1] + 0.0


# ---------------------------------------------------------------------------------------------------
# The recursive estimator (Algorithm 1 lines 5, 10, 11; Algorithm 6's noisy version), a batch at a time


class RecursiveGradientEstimator:
    """The recursive gradient estimator of Algorithm 1 (lines 5, 10, 11) and Algorithm 6, each call evaluating its
    batch at once (module doc).

    Constructor, methods, attributes, refusals and values as ``reference.algorithms.bgm21_sfw.
    RecursiveGradientEstimator`` (its docstring gives the formulas): ``start(w, batch, noise=None)``, ``update(w,
    w_prev, batch, eta, difference_noise=None, gradient_noise=None)``, ``value``, ``last_difference``, ``last_fresh``,
    ``nonfinite_counts`` (NOT PRIVATE) and ``evaluations`` (the reference's gradient calls: m per start, 2m per
    update; the probe's calls are not counted).
    """

    def __init__(self, gradient: Callable, data, d):
        if not callable(gradient):
            raise TypeError(f"gradient must be callable as gradient(w, z), got {type(gradient).__name__}")
        self.gradient = gradient
        self.data = _data(data)
        self.d = check_int("d", d, minimum=1)
        self.value: np.ndarray | None = None
        self.last_difference: np.ndarray | None = None
        self.last_fresh: np.ndarray | None = None
        self.nonfinite_counts: list[int] = []
        self.evaluations = 0
        self._gradients = _RecordGradients(gradient, self.d)
        self._zeros = np.zeros(self.d)

    # -- the reference's argument checks ---------------------------------------------------------------

    def _batch(self, batch) -> np.ndarray:
        idx = np.asarray(batch)
        if idx.ndim != 1 or idx.shape[0] < 1 or idx.dtype.kind not in "iu":
            raise ValueError("batch must be a non-empty 1-D array of record indices")
        if idx.min() < 0 or idx.max() >= self.data.shape[0]:
            raise ValueError(f"batch indices must lie in [0, {self.data.shape[0]})")
        return idx

    def _noise(self, name: str, noise) -> np.ndarray:
        return self._zeros if noise is None else _float_vector(name, noise, self.d)

    def start(self, w, batch, noise=None) -> np.ndarray:
        """∇^0 = mean of ∇f(w, z) over the batch, plus ``noise`` (Algorithm 1 line 5; Algorithm 6's N_r^0)."""
        w = _float_vector("w", w, self.d)
        idx = self._batch(batch)
        return self._start(w, idx, self._noise("noise", noise))

    def update(self, w, w_prev, batch, eta, difference_noise=None, gradient_noise=None) -> np.ndarray:
        """∇^t = (1 − η)(∇^{t−1} + Δ^t) + η·fresh^t (Algorithm 1 lines 10–11; Algorithm 6's Δ̃, ∇̃ with the noises)."""
        if self.value is None:
            raise RuntimeError("update() before start(): the recursion needs ∇^0 (Algorithm 1 line 5)")
        w = _float_vector("w", w, self.d)
        w_prev = _float_vector("w_prev", w_prev, self.d)
        idx = self._batch(batch)
        eta = _float("eta", eta)
        if not 0.0 < eta <= 1.0:
            raise ValueError(f"eta must lie in (0, 1], got {eta}")
        return self._update(w, w_prev, idx, eta, self._noise("difference_noise", difference_noise),
                            self._noise("gradient_noise", gradient_noise))

    # -- what the runs call, on checked values ---------------------------------------------------------------

    def _start(self, w: np.ndarray, idx: np.ndarray, noise: np.ndarray) -> np.ndarray:
        (values,) = self._gradients([w], self.data[idx])
        self.evaluations += idx.shape[0]
        finite = np.isfinite(values).all(axis=1)
        bad = idx.shape[0] - int(np.count_nonzero(finite))
        if bad:
            values = np.where(finite[:, None], values, 0.0)  # a skipped record adds nothing (module doc)
        fresh = _ordered_sum(values) / idx.shape[0]
        self.nonfinite_counts.append(bad)
        self.last_difference, self.last_fresh = None, fresh
        self.value = fresh + noise
        return self.value.copy()

    def _update(self, w, w_prev, idx, eta, difference_noise, gradient_noise) -> np.ndarray:
        now, prev = self._gradients([w, w_prev], self.data[idx])
        m = idx.shape[0]
        self.evaluations += 2 * m
        finite_now = np.isfinite(now).all(axis=1)
        both = finite_now & np.isfinite(prev).all(axis=1)
        bad = m - int(np.count_nonzero(both))  # the reference counts a record once, at w or else at w_prev
        with np.errstate(invalid="ignore", over="ignore"):  # pairs with a non-finite value are replaced below
            diff = now - prev
        if bad:
            now = np.where(finite_now[:, None], now, 0.0)
            diff = np.where(both[:, None], diff, 0.0)
        difference = _ordered_sum(diff) / m + difference_noise  # line 10: Δ^t (Algorithm 6: Δ̃^t)
        fresh = _ordered_sum(now) / m
        self.nonfinite_counts.append(bad)
        self.last_difference, self.last_fresh = difference, fresh
        self.value = (1.0 - eta) * (self.value + difference) + eta * (fresh + gradient_noise)  # line 11
        return self.value.copy()


# ---------------------------------------------------------------------------------------------------
# Lines 6 and 12: the noisy vertex, scores by one matrix product when the winner is certain


def _certain_winner(V: np.ndarray, abs_V: np.ndarray, G: np.ndarray, noise: np.ndarray | None) -> int | None:
    """argmin_j (fl(⟨V_j, G⟩) + u_j) as the reference's per-vertex ``np.dot`` computes it, or None when ``V @ G``
    cannot certify it (module doc: the interval 2·2γ_d(|V| @ |G|)_j + 4u·magnitudes around each noisy score)."""
    with np.errstate(all="ignore"):
        fast = V @ G
        noisy = fast if noise is None else fast + noise
        radius = 4.0 * _gamma(V.shape[1]) * (abs_V @ np.abs(G))
        radius = radius + 4.0 * _U * (np.abs(fast) + radius + (0.0 if noise is None else np.abs(noise)))
        if not (np.all(np.isfinite(noisy)) and np.all(np.isfinite(radius)) and np.max(np.abs(noisy) + radius) < 1e300):
            return None
        k = int(np.argmin(noisy))
        if noisy.shape[0] == 1:
            return k
        lower = noisy - radius
        lower[k] = np.inf
        return k if noisy[k] + radius[k] < float(np.min(lower)) else None


def _polytope_diameter(polytope: Polytope, p: float) -> float:
    """``Polytope.diameter(p)`` with the pairs of one vertex at a time: max_{i<j} ‖V_i − V_j‖_p by the same float64
    operations (``reference.geometry``'s ℓ_p norm: |x|, its max, the sum along the row — NumPy's reduction of a
    contiguous row, the same for a 1-D array and a row of a 2-D one —, and Python's power for the 1/p root), so the
    same value; anything non-finite is handed to ``Polytope.diameter`` for its own refusal."""
    V = polytope.vertices
    best = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(polytope.J - 1):
            diff = V[i] - V[i + 1:]
            a = np.abs(diff)
            top = np.max(a, axis=1)
            if not (np.all(np.isfinite(diff)) and np.all(np.isfinite(top))):
                return polytope.diameter(p)
            if math.isinf(p):
                norms = [float(x) for x in top]
            elif p == 1.0:
                norms = [float(x) for x in np.sum(a, axis=1)]
            else:
                safe = np.where(top > 0.0, top, 1.0)
                sums = np.sum((a / safe[:, None]) ** p, axis=1)
                norms = [float(tk) * float(sk) ** (1.0 / p) if tk > 0.0 else 0.0 for tk, sk in zip(top, sums)]
            for value in norms:
                if not math.isfinite(value):
                    return polytope.diameter(p)
                best = max(best, value)
    return best


def _exact_scores(V: np.ndarray, G: np.ndarray) -> np.ndarray:
    """⟨V_j, G⟩ one vertex at a time with ``np.dot``, as the reference computes them."""
    return np.array([float(np.dot(V[j], G)) for j in range(V.shape[0])])


# ---------------------------------------------------------------------------------------------------
# Algorithm 1


def poly_sfw(gradient: Callable, data, polytope: Polytope, config: PolySFWConfig, *, seed, noise_seed=None,
             w_init=None, eta=None) -> SFWResult:
    """bgm21 Algorithm 1 (A_polySFW, §4.1), one batch evaluation per estimator call (module doc).

    Arguments, draws, refusals and result as ``reference.algorithms.bgm21_sfw.poly_sfw``.
    """
    # the reference's checks and preparation, with the faster diameter (the same value)
    run = _prepare_poly_sfw(gradient, data, polytope, config, seed, noise_seed, w_init, eta,
                            diameter=_polytope_diameter)
    eta, d, data, seed, secret = run.eta, run.d, run.data, run.seed, run.secret
    schedule, batcher, D, w, L0, L1 = run.schedule, run.batcher, run.diameter, run.w, run.lipschitz, run.smoothness
    scales, noise_scales = run.scales, run.noise_scales
    estimator = RecursiveGradientEstimator(gradient, data, d)
    noise_streams = secret.streams()
    V = polytope.vertices
    abs_V = np.abs(V)
    J = polytope.J

    def select(G: np.ndarray, s: float, r: int, t: int) -> int:
        if s == 0.0:  # the non-private limit: the exact argmin, lowest index on ties
            j = _certain_winner(V, abs_V, G, None)
            return polytope.lmo(G)[1] if j is None else j
        # laplace_noisy_argmin's one draw, on the step's own key
        noise = noise_streams.generator(KEY, "poly_sfw", "noise", r, t).laplace(0.0, s, J)
        j = _certain_winner(V, abs_V, G, noise)
        if j is None:  # the reference's route, on a fresh generator of the same key: the same draw
            j = laplace_noisy_argmin(_exact_scores(V, G), s, noise_streams.generator(KEY, "poly_sfw", "noise", r, t))
        return j

    count = sum(len(sizes) for sizes in schedule)
    iterates = np.empty((count, d))
    estimates = np.empty((count, d))
    rounds, steps, sizes, indices, etas, chosen, lap, G_sens, score_sens, affected = (
        [], [], [], [], [], [], [], [], [], [])
    zeros = estimator._zeros
    k = 0
    eta_prev = None
    w_prev = None
    for r in range(config.n_rounds):  # line 2
        s_r = scales[r]  # line 3
        for t in range(2**r):  # line 8 (t = 0: lines 4–7)
            iterates[k] = w  # w_r^t
            B = batcher.take(schedule[r][t])  # lines 4, 9
            m = B.shape[0]
            if t == 0:  # η is asked for where the reference asks (an eta that raises, raises at the same point)
                G = estimator._start(w, B, zeros)  # line 5: ∇_r^0
                j = select(G, s_r, r, t)  # line 6
                eta_t = _step(eta, r, t)
                sens = 2.0 * L0 / m  # G_0 (rebuilt)
            else:
                eta_t = _step(eta, r, t)
                G = estimator._update(w, w_prev, B, eta_t, zeros, zeros)  # lines 10–11
                j = select(G, s_r, r, t)  # line 12 (fresh noise)
                sens = (2.0 / m) * ((1.0 - eta_t) * eta_prev * L1 * D + eta_t * L0)  # G_t (rebuilt)
            w_prev, w = w, _finite_point("w", (1.0 - eta_t) * w + eta_t * V[j], r, t)  # lines 7, 13
            rounds.append(r); steps.append(t); sizes.append(m); indices.append(B); etas.append(eta_t)
            chosen.append(j); lap.append(s_r); G_sens.append(sens); score_sens.append(0.5 * D * sens)
            affected.append(2**r - t)
            estimates[k] = G
            eta_prev = eta_t
            k += 1
        # line 14: w_{r+1}^0 = w_r^{2^r} = w
    tau = _output_index(seed, "poly_sfw", count)  # line 15
    zero_steps = np.zeros(count)
    trace = PublicTrace(
        rounds=np.array(rounds, dtype=np.int64), steps=np.array(steps, dtype=np.int64),
        batch_sizes=np.array(sizes, dtype=np.int64), batch_indices=tuple(indices),
        step_sizes=np.array(etas), selected=np.array(chosen, dtype=np.int64), lap_scales=np.array(lap),
        noisy_estimates=np.zeros((0, d)), estimator_sensitivity=np.array(G_sens),
        score_sensitivity=np.array(score_sens), affected_steps=np.array(affected, dtype=np.int64),
        sigma=zero_steps.copy(), sigma_hat=zero_steps.copy(), gradient_sensitivity=zero_steps.copy(),
        difference_sensitivity=zero_steps.copy(), mu=zero_steps.copy(),
        records_used=batcher.used, records_available=batcher.n, output_index=tau,
    )
    debug = NonPrivateDebugTrace(
        estimates=estimates, gradient_noise=np.zeros((count, d)), difference_noise=np.zeros((count, d)),
        nonfinite_counts=np.array(estimator.nonfinite_counts, dtype=np.int64), evaluations=estimator.evaluations,
    )
    return SFWResult(output=iterates[tau].copy(), iterates=iterates, final_iterate=w.copy(), trace=trace, debug=debug,
                     config=config, seed=seed, secret_seed_source=secret.source,
                     guarantee_condition=secret.guarantee_condition, noise_scales=noise_scales)


# ---------------------------------------------------------------------------------------------------
# Algorithm 6


def noisy_sfw(gradient: Callable, data, ball: LpBall, config: NoisySFWConfig, *, seed, noise_seed=None,
              w_init=None, eta=None) -> SFWResult:
    """bgm21 Algorithm 6 (A_nSFW, §4.2; rebuilt, its listing in Appendix B.2 is missing), one batch evaluation per
    estimator call (module doc).

    Arguments, draws, refusals and result as ``reference.algorithms.bgm21_sfw.noisy_sfw``.
    """
    # the reference's checks and preparation
    run = _prepare_noisy_sfw(gradient, data, ball, config, seed, noise_seed, w_init, eta)
    eta, d, data, seed, secret = run.eta, run.d, run.data, run.seed, run.secret
    schedule, batcher, D, w, L0, L1 = run.schedule, run.batcher, run.diameter, run.w, run.lipschitz, run.smoothness
    c, noise_scales = run.noise_factor, run.noise_scales
    p = ball.p
    dim_factor = float(d) ** (1.0 / p - 0.5)  # ‖g‖_2 ≤ d^{1/p−1/2}‖g‖_q
    estimator = RecursiveGradientEstimator(gradient, data, d)
    noise_streams = secret.streams()

    count = sum(len(sizes) for sizes in schedule)
    iterates, noisy, estimates = np.empty((count, d)), np.empty((count, d)), np.empty((count, d))
    g_noise, d_noise = np.empty((count, d)), np.zeros((count, d))
    rounds, steps, sizes, indices, etas, sig, sig_hat, g_sens, d_sens, mus = [], [], [], [], [], [], [], [], [], []
    k = 0
    eta_prev = None
    w_prev = None
    for r in range(config.n_rounds):
        for t in range(2**r):
            iterates[k] = w  # w_r^t
            B = batcher.take(schedule[r][t])
            m = B.shape[0]
            sens = 2.0 * L0 * dim_factor / m  # the fresh-gradient (t = 0: round-start) release
            if t == 0:  # η is asked for where the reference asks
                rng = noise_streams.generator(KEY, "noisy_sfw", "noise", r, t)
                sigma = c * L0  # σ_{r,0} (t + 1 = 1)
                N = sigma * rng.standard_normal(d)
                G = estimator._start(w, B, N)  # ∇̃_r^0
                eta_t = _step(eta, r, t)
                sigma_hat, dsens, mu = 0.0, 0.0, _mu([(sens, sigma)])
            else:
                eta_t = _step(eta, r, t)
                eta_hat = eta_prev if config.sigma_hat_eta == "prev" else eta_t  # the erratum of the printed σ̂
                sigma = c * L0 * (t + 1)  # σ_{r,t}
                sigma_hat = c * L1 * D * eta_hat * (t + 1)  # σ̂_{r,t}
                rng = noise_streams.generator(KEY, "noisy_sfw", "noise", r, t)
                N = sigma * rng.standard_normal(d)
                N_hat = sigma_hat * rng.standard_normal(d)
                G = estimator._update(w, w_prev, B, eta_t, N_hat, N)  # Δ̃, ∇̃
                dsens = 2.0 * L1 * D * eta_prev * dim_factor / m  # ‖w_r^t − w_r^{t−1}‖_p ≤ η_{r,t−1}D
                mu = _mu([(sens, sigma), (dsens, sigma_hat)])
                d_noise[k] = N_hat
            w_prev, w = w, _finite_point("w", (1.0 - eta_t) * w + eta_t * ball.lmo(G), r, t)
            rounds.append(r); steps.append(t); sizes.append(m); indices.append(B); etas.append(eta_t)
            sig.append(sigma); sig_hat.append(sigma_hat); g_sens.append(sens); d_sens.append(dsens); mus.append(mu)
            noisy[k], estimates[k], g_noise[k] = G, estimator.last_fresh, N
            eta_prev = eta_t
            k += 1
    tau = _output_index(seed, "noisy_sfw", count)
    zero_steps = np.zeros(count)
    trace = PublicTrace(
        rounds=np.array(rounds, dtype=np.int64), steps=np.array(steps, dtype=np.int64),
        batch_sizes=np.array(sizes, dtype=np.int64), batch_indices=tuple(indices), step_sizes=np.array(etas),
        selected=np.full(count, -1, dtype=np.int64), lap_scales=zero_steps.copy(),
        noisy_estimates=noisy, estimator_sensitivity=zero_steps.copy(),
        score_sensitivity=zero_steps.copy(), affected_steps=np.ones(count, dtype=np.int64), sigma=np.array(sig),
        sigma_hat=np.array(sig_hat), gradient_sensitivity=np.array(g_sens), difference_sensitivity=np.array(d_sens),
        mu=np.array(mus), records_used=batcher.used, records_available=batcher.n, output_index=tau,
    )
    debug = NonPrivateDebugTrace(
        estimates=estimates, gradient_noise=g_noise, difference_noise=d_noise,
        nonfinite_counts=np.array(estimator.nonfinite_counts, dtype=np.int64), evaluations=estimator.evaluations,
    )
    return SFWResult(output=iterates[tau].copy(), iterates=iterates, final_iterate=w.copy(), trace=trace, debug=debug,
                     config=config, seed=seed, secret_seed_source=secret.source,
                     guarantee_condition=secret.guarantee_condition, noise_scales=noise_scales)
