"""zo_o2nc Algorithm 3 (Online-to-Nonconvex Conversion, O2NC) and its online learner, projected online
subgradient descent (Alg 3 line 3).

Zhang, Tran, Cutkosky — *Private Zeroth-Order Nonsmooth Nonconvex Optimization* (ICLR 2024), §4, after
Cutkosky, Mehta, Orabona (2023). The conversion turns an online linear optimisation learner with domain
{‖Δ‖ ≤ D} and any gradient oracle into a nonconvex optimiser that finds Goldstein stationary points
(zo_o2nc Lemma 4.6, Corollary 4.7). The pieces are generic — the oracle and the learner are parameters — so
that another paper's algorithm can reuse the driver with its own learner and oracle:

* ``project_ball``: Π_D(v) = v·min(1, D/‖v‖), with ‖Π_D(v)‖ ≤ D guaranteed in the arithmetic of v (the step
  bound D is what the DIFF sensitivity of zo_o2nc Lemma 3.2 rests on, through ‖w_t − w_{t−1}‖ ≤ 2D).
* ``ProjectedOSD``: the learner of Alg 3 line 3: Δ_1 = 0, Δ_t = Π_D(Δ_{t−1} − η g̃_{t−1}). It sees only what
  it is given (the noisy g̃ in the private algorithms), never anything else.
* ``o2nc``: Algorithm 3, line by line (below).
* ``ClippedOGD``: the learner of nsnc_improved Algorithm 2 (Kornowski, Liu, Talwar): the same update
  Δ ← clip_D(Δ − η g̃) (clip_D is Π_D), but NOT restarted between the blocks that Algorithm 2 averages
  (``restart_blocks=True`` restarts it, an option the paper does not have). Algorithm 2 is ``o2nc`` with this
  learner, T = M rounds per "epoch" (a block of M steps) and K blocks: the step is carried across blocks, the
  block averages are the epoch averages and the output is a uniformly random block average.
* ``linear_regret`` and ``osd_regret_bound``: Reg_T(u) = Σ_t <v_t, Δ_t − u> and the pathwise bound
  D²/(2η) + (η/2) Σ_t ‖v_t‖² of projected OSD started at Δ_1 = 0 (used by zo_o2nc Lemma 4.6 through
  E Reg_T ≤ D G √T when η = D/(G√T)).

Algorithm 3 as implemented (1-based k, t as in the paper):

    1: for k = 1..K:
    2:   for t = 1..T:
    3:     Δ_t^k = learner.propose()                  (restarted learner: Δ_1^k = 0 for OSD)
    4:     s_t^k ~ U[0, 1]; w_t^k = x_t^k + s_t^k Δ_t^k; x_{t+1}^k = x_t^k + Δ_t^k
                                                       (w uses x_t BEFORE the update: w_t^k is uniform on the
                                                        segment [x_t^k, x_{t+1}^k])
    5:     g̃_t^k = oracle.query(k, t, w_t^k)
    6:     learner.update(g̃_t^k)                      (the loss <g̃_t^k, ·>)
    7:   w̄^k = (1/T) Σ_t w_t^k
    8:   x_1^{k+1} = x_{T+1}^k; restart the learner
    9: output w̄ = w̄^{k*}, k* ~ Uniform{1..K}

Randomness (docs/design.md, randomness contract). s_t^k and k* are data-independent and PUBLIC: they are
post-processing randomness that the privacy argument never needs to hide. With ``rng_public`` a
``reference.rng.Streams`` (scoped to the caller's paper key, e.g. ``Streams(seed).child("zo_o2nc")``):

* key ("segment", k): s_1^k..s_T^k = ``random(T)``, one call per epoch;
* key ("output",): k* − 1 = ``integers(K)``, drawn once after the last epoch.

With a ``numpy.random.Generator`` instead, the same calls are made on it in this order: ``random(T)`` for
k = 1..K, then ``integers(K)``. ``segment_points`` replaces the s draws by given values (adversarial stress
tests, coupled runs); k* is still drawn.

Arithmetic follows x1: an mpmath object array runs everything in mpmath (the s draws are converted exactly);
float64 otherwise.
"""

from __future__ import annotations

import dataclasses

import mpmath
import numpy as np

from .precision import dot, is_mp, norm, to_mp
from .rng import Streams
from .validation import check_array, check_int, check_real

__all__ = [
    "project_ball",
    "ProjectedOSD",
    "ClippedOGD",
    "O2ncTrajectory",
    "o2nc",
    "linear_regret",
    "osd_regret_bound",
]

#: Factor by which ``project_ball`` shrinks a projected vector whose computed norm rounds above the radius.
_FLOAT_SHRINK = 1.0 - 2.0**-50


# ---------------------------------------------------------------------------------------------------
# Projection onto the ball {‖Δ‖ ≤ D}


def _vector(name, value, d=None):
    arr = check_array(name, value, ndim=1)
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must have at least one coordinate (d >= 1), got shape {arr.shape}")
    if d is not None and arr.shape[0] != d:
        raise ValueError(f"{name} must have shape ({d},), got {arr.shape}")
    return arr


def project_ball(v, radius):
    """Π_D(v) = v·min(1, D/‖v‖), the Euclidean projection onto {‖Δ‖ ≤ D} (zo_o2nc Alg 3 line 3).

    v: a finite 1-D vector, float64 or mpmath (object array). radius: D > 0, finite.

    Guarantee: ‖Π_D(v)‖ ≤ D as computed by ``reference.precision.norm`` in the arithmetic of v (float64: a
    rescaled norm that neither overflows nor underflows, so entries near 1e300 are fine). When the rescaled
    vector rounds to a norm just above D it is shrunk by a relative 2^-50 (float64) or by the working
    precision's epsilon (mpmath) until it is not. A vector already inside the ball is returned unchanged
    (a copy), so the projection is idempotent.
    """
    v = _vector("v", v)
    radius = check_real("radius", radius, positive=True)
    mp = is_mp(v)
    if mp:
        v = to_mp(v)
        bound = mpmath.mpf(radius)
    else:
        bound = float(radius)
    length = norm(v)
    if length <= bound:
        return v.copy()
    out = v * (bound / length)
    shrink = (1 - 4 * mpmath.eps) if mp else _FLOAT_SHRINK
    while norm(out) > bound:
        out = out * shrink
    return out


# ---------------------------------------------------------------------------------------------------
# Projected online subgradient descent (Alg 3 line 3)


class ProjectedOSD:
    """Projected online subgradient descent on {‖Δ‖ ≤ D}, the learner A of zo_o2nc Alg 3 line 3.

    Δ_1 = 0 and Δ_t = Π_D(Δ_{t−1} − η g_{t−1}) for t ≥ 2, where g_{t−1} is the vector of the linear loss
    <g_{t−1}, ·> it was last sent (``update``). In the private algorithms that vector is the released g̃,
    never the internal noiseless g. Pathwise regret for every ‖u‖ ≤ D: Σ_t <g_t, Δ_t − u> ≤ D²/(2η) +
    (η/2) Σ_t ‖g_t‖² (``osd_regret_bound``).

    d: dimension. radius: D > 0 (the step bound; zo_o2nc Thm 4.9 takes D = δ/T). step_size: η > 0.
    arithmetic: "float64" or "mpmath" (the arithmetic of Δ_1 = 0; later iterates follow it).

    ``reset()`` restarts the learner (Δ back to 0: Alg 3 line 8); ``propose()`` returns Δ_t (a copy);
    ``update(g)`` moves to Δ_{t+1}. ``rounds`` counts the updates since the last reset.
    """

    def __init__(self, d, radius, step_size, *, arithmetic="float64"):
        self.d = check_int("d", d, minimum=1)
        self.radius = check_real("radius", radius, positive=True)
        self.step_size = check_real("step_size", step_size, positive=True)
        if arithmetic not in ("float64", "mpmath"):
            raise ValueError(f"arithmetic must be 'float64' or 'mpmath', got {arithmetic!r}")
        self.arithmetic = arithmetic
        self._mp = arithmetic == "mpmath"
        self.reset()

    def reset(self) -> None:
        """Restart: Δ_1 = 0 (Alg 3 line 8, "restart A")."""
        if self._mp:
            self._delta = np.empty(self.d, dtype=object)
            self._delta.fill(mpmath.mpf(0))
        else:
            self._delta = np.zeros(self.d)
        self.rounds = 0

    def propose(self) -> np.ndarray:
        """Δ_t, the learner's current play (Alg 3 line 3). ‖Δ_t‖ ≤ D."""
        return self._delta.copy()

    def update(self, g) -> None:
        """Receive the linear loss <g, ·> (Alg 3 line 6) and move: Δ ← Π_D(Δ − η g)."""
        g = _vector("g", g, self.d)
        if self._mp:
            g = to_mp(g)
            step = mpmath.mpf(self.step_size)
        else:
            if g.dtype == object:
                g = np.array([float(v) for v in g])
            step = float(self.step_size)
        self._delta = project_ball(self._delta - step * g, self.radius)
        self.rounds += 1


class ClippedOGD(ProjectedOSD):
    """Clipped online gradient descent, the learner of nsnc_improved Algorithm 2: Δ_1 = 0 and
    Δ_{t+1} = clip_D(Δ_t − η g̃_t) with clip_D(v) = min(1, D/‖v‖)·v (= ``project_ball``), run over all T = K·M steps.

    ``o2nc`` calls ``reset()`` before every block of M steps; Algorithm 2 does not restart the learner, so
    ``reset()`` only empties the learner before its first step (restart_blocks=False, the paper). With
    restart_blocks=True every block starts again at Δ = 0 (not in the paper): the regret bound of a block is then
    D²/(2η) + (η/2)Σ‖g‖² instead of 2D²/η + (η/2)Σ‖g‖² (nsnc_improved Lemma B.1's constant; see
    docs/papers/nsnc_improved.md).

    d, radius (D), step_size (η), arithmetic: as ``ProjectedOSD``.
    """

    def __init__(self, d, radius, step_size, *, arithmetic="float64", restart_blocks=False):
        self.restart_blocks = bool(restart_blocks)
        self._started = False
        super().__init__(d, radius, step_size, arithmetic=arithmetic)

    def reset(self) -> None:
        """Start a block: Δ back to 0 only before the first step, or at every block with restart_blocks."""
        if self.restart_blocks or not self._started:
            super().reset()

    def update(self, g) -> None:
        """Receive g̃_t and move: Δ ← clip_D(Δ − η g̃_t) (Algorithm 2, the OGD step)."""
        super().update(g)
        self._started = True


# ---------------------------------------------------------------------------------------------------
# Regret (zo_o2nc §4, Lemma 4.6)


def linear_regret(losses, plays, comparator):
    """Reg_T(u) = Σ_t <v_t, Δ_t − u> of an online linear optimisation run (zo_o2nc Lemma 4.6).

    losses: v_1..v_T, shape (T, d). plays: Δ_1..Δ_T, shape (T, d). comparator: u, shape (d,).
    float64, or mpmath (exact summation) if any operand is mpmath.
    """
    v = check_array("losses", losses, ndim=2)
    plays = check_array("plays", plays, shape=(v.shape[0], v.shape[1]))
    u = _vector("comparator", comparator, v.shape[1])
    if is_mp(v) or is_mp(plays) or is_mp(u):
        return mpmath.fsum(dot(v[t], to_mp(plays[t]) - to_mp(u)) for t in range(v.shape[0]))
    return float(sum(dot(v[t], plays[t] - u) for t in range(v.shape[0])))


def osd_regret_bound(radius, step_size, losses):
    """D²/(2η) + (η/2) Σ_t ‖v_t‖²: the pathwise regret bound of ``ProjectedOSD`` started at Δ_1 = 0, valid
    for every comparator ‖u‖ ≤ D and every loss sequence, adversarial ones included (zo_o2nc §4, the OSD
    bound behind E Reg_T ≤ D G √T with η = D/(G√T)).

    radius: D > 0. step_size: η > 0. losses: v_1..v_T, shape (T, d). mpmath if losses are mpmath.
    """
    radius = check_real("radius", radius, positive=True)
    step_size = check_real("step_size", step_size, positive=True)
    v = check_array("losses", losses, ndim=2)
    if is_mp(v) or isinstance(radius, mpmath.mpf) or isinstance(step_size, mpmath.mpf):
        D, eta = mpmath.mpf(radius), mpmath.mpf(step_size)
        return D**2 / (2 * eta) + eta / 2 * mpmath.fsum(norm(to_mp(np.asarray(row))) ** 2 for row in v)
    return radius**2 / (2 * step_size) + step_size / 2 * float(sum(norm(row) ** 2 for row in v))


# ---------------------------------------------------------------------------------------------------
# Algorithm 3


@dataclasses.dataclass(frozen=True)
class O2ncTrajectory:
    """What one run of ``o2nc`` (zo_o2nc Algorithm 3) produced. Indices are 0-based in arrays: epoch k is row
    k − 1, round t is column t − 1.

    output: w̄ = w̄^{k*}, shape (d,) (line 9). output_index: k* − 1 (0-based row of ``epoch_averages``).
    epoch_averages: w̄^1..w̄^K, shape (K, d) (line 7). final_point: x_{T+1}^K, shape (d,).
    oracle_outputs: g̃_t^k as returned by the oracle, shape (K, T, d) (line 5).
    segment_points: s_t^k, shape (K, T) (line 4).
    query_points: w_t^k, shape (K, T, d); iterates: x_1^k..x_{T+1}^k, shape (K, T + 1, d); steps: Δ_t^k,
    shape (K, T, d) — when ``record_path=True``, else None.
    """

    output: np.ndarray
    output_index: int
    epoch_averages: np.ndarray
    final_point: np.ndarray
    oracle_outputs: np.ndarray
    segment_points: np.ndarray
    query_points: np.ndarray | None
    iterates: np.ndarray | None
    steps: np.ndarray | None


def _query(oracle, k, t, w):
    if hasattr(oracle, "query"):
        return oracle.query(k, t, w)
    return oracle(k, t, w)


def _check_learner(learner):
    for name in ("reset", "propose", "update"):
        if not callable(getattr(learner, name, None)):
            raise TypeError(f"learner must have reset(), propose() and update(g) methods (no {name}), "
                            f"got {type(learner).__name__}")


def _segment_draws(rng_public, k, T):
    if isinstance(rng_public, Streams):
        return rng_public.generator("segment", k).random(T)
    return rng_public.random(T)


def _output_draw(rng_public, K):
    if isinstance(rng_public, Streams):
        return int(rng_public.generator("output").integers(K))
    return int(rng_public.integers(K))


def _mean(rows, mp):
    """(1/T) Σ_t w_t: exact summation in mpmath, ``np.mean`` over the stacked rows in float64."""
    if mp:
        T = len(rows)
        return np.array([mpmath.fsum(row[j] for row in rows) / T for j in range(rows[0].shape[0])], dtype=object)
    return np.mean(np.array(rows, dtype=np.float64), axis=0)


def o2nc(oracle, learner, x1, T, K, *, rng_public, segment_points=None, record_path=False) -> O2ncTrajectory:
    """zo_o2nc Algorithm 3 (O2NC), lines 1–9, with any oracle and any online learner (module doc).

    Args:
        oracle: the gradient oracle O: an object with ``query(k, t, w) -> g̃`` (1-based k, t, in the order
            (1, 1), (1, 2), …, (K, T)), or a callable ``oracle(k, t, w)``. It returns a finite vector of shape
            (d,).
        learner: the online learner A with ``reset()``, ``propose() -> Δ`` and ``update(g)`` (e.g.
            ``ProjectedOSD``). It is reset before every epoch (Δ_1^k = 0 for OSD: lines 3 and 8).
        x1: x_1^1, shape (d,), data-independent; float64, or an mpmath object array to run in mpmath.
        T: rounds per epoch, ≥ 1. K: epochs, ≥ 1.
        rng_public: a ``reference.rng.Streams`` (keys ("segment", k) and ("output",)) or a
            ``numpy.random.Generator`` (module doc). Public: s_t^k and k* are post-processing randomness.
        segment_points: optional (K, T) values of s_t^k in [0, 1] used instead of drawing them.
        record_path: also return every w_t^k, x_t^k and Δ_t^k.

    Returns an ``O2ncTrajectory``. Raises ValueError for a learner play or an oracle answer of the wrong
    shape or with a non-finite entry.
    """
    if not (hasattr(oracle, "query") or callable(oracle)):
        raise TypeError("oracle must have query(k, t, w) or be callable as oracle(k, t, w), "
                        f"got {type(oracle).__name__}")
    _check_learner(learner)
    x = _vector("x1", x1)
    d = x.shape[0]
    mp = is_mp(x)
    if mp:
        x = to_mp(x)
    T = check_int("T", T, minimum=1)
    K = check_int("K", K, minimum=1)
    if not isinstance(rng_public, (Streams, np.random.Generator)):
        raise TypeError(f"rng_public must be a reference.rng.Streams or a numpy.random.Generator, "
                        f"got {type(rng_public).__name__}")
    if segment_points is not None:
        segment_points = check_array("segment_points", segment_points, shape=(K, T))
        if any(not (0 <= s <= 1) for s in segment_points.flat):
            raise ValueError("segment_points must lie in [0, 1] (s_t^k ~ Uniform[0, 1], zo_o2nc Alg 3 line 4)")

    dtype = object if mp else np.float64
    averages, outputs, all_s = [], [], []
    path_w, path_x, path_delta = [], [], []
    for k in range(1, K + 1):                                                                    # line 1
        learner.reset()                                                                          # line 8 (restart)
        s_row = segment_points[k - 1] if segment_points is not None else _segment_draws(rng_public, k, T)
        s_row = to_mp(np.asarray(s_row)) if mp else np.asarray(s_row, dtype=np.float64)
        all_s.append(s_row)
        w_rows, g_rows, x_rows, delta_rows = [], [], [x], []
        for t in range(1, T + 1):                                                                # line 2
            delta = _vector(f"learner play at (k={k}, t={t})", learner.propose(), d)             # line 3
            if mp:
                delta = to_mp(delta)
            w = x + s_row[t - 1] * delta                                                         # line 4: x_t before
            x_next = x + delta                                                                   # line 4: x_{t+1}
            g = _vector(f"oracle answer at (k={k}, t={t})", _query(oracle, k, t, w), d)          # line 5
            learner.update(g)                                                                    # line 6
            w_rows.append(w)
            g_rows.append(g)
            delta_rows.append(delta)
            x = x_next
            x_rows.append(x)
        averages.append(_mean(w_rows, mp))                                                       # line 7
        outputs.append(np.array(g_rows, dtype=g_rows[0].dtype))
        if record_path:
            path_w.append(np.array(w_rows, dtype=dtype))
            path_x.append(np.array(x_rows, dtype=dtype))
            path_delta.append(np.array(delta_rows, dtype=dtype))
        # line 8: x_1^{k+1} = x_{T+1}^k — ``x`` carries over
    index = _output_draw(rng_public, K)                                                          # line 9
    epoch_averages = np.array(averages, dtype=dtype)
    return O2ncTrajectory(
        output=epoch_averages[index].copy(),
        output_index=index,
        epoch_averages=epoch_averages,
        final_point=x.copy(),
        oracle_outputs=np.array(outputs, dtype=object if any(o.dtype == object for o in outputs) else np.float64),
        segment_points=np.array(all_s, dtype=dtype),
        query_points=np.array(path_w, dtype=dtype) if record_path else None,
        iterates=np.array(path_x, dtype=dtype) if record_path else None,
        steps=np.array(path_delta, dtype=dtype) if record_path else None,
    )
