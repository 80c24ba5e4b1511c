"""Whole runs of nsnc_improved Algorithm 2 with the oracles of Algorithms 3–5 for the run claims of this folder
(private helpers of ``oracle``, ``o2nc``, ``data`` and ``concentration``).

* Losses the runs use, callable by both subjects (the reference calls them with one point (d,) and one row (p,),
  a vectorised twin with stacked points (..., d) against rows (..., p) that broadcast): :class:`LinearLoss`
  (f(x; z) = <c, x> with c the first d entries of z) and its gradient :class:`LinearGradient`; :class:`RidgeLoss`
  and :class:`RidgeGradient` (L·φ(<a, x> − c) on the rows (a, c) of ``reference.objectives.RidgeSum``, whose
  exact smoothed gradients are the ground truth); :class:`LoggedLoss`, a loss that records which rows it is
  called with (the index in the last entry of every row).
* :func:`sample_rows`: records drawn i.i.d. from a finite population, so that E over a record is the population
  average (the F of the paper's §1.1 with P uniform on the population).
* :func:`records_needed`: U(T) = ⌈T/Σ⌉·B1 + (T − ⌈T/Σ⌉)·B2, the records a single pass of T steps reads.
* :func:`path`: the float64 arrays of a ``DPResult`` the checks read, or a deterministic failure when the subject
  returned a field of the wrong shape or with a non-finite entry.
* :func:`variant_nsnc_improved`: Algorithm 2 with the oracles of Algorithms 3, 4 and 5 assembled from the
  reference's public building blocks (``prepare_run`` for the argument checks, schedule, σ and ledger;
  ``step_directions``; ``reference.mechanisms.TreeMechanism``; ``reference.o2nc.project_ball``), float64 only,
  with the randomness schedule of the ``nsnc_improved`` protocol and one deliberate bug switched on by ``bug``.
  Without a bug it reproduces the reference run bit for bit (tests/test_nsnc_improved_algorithm.py); the run
  claims' mutants are these one-bug variants, so each differs from a correct run in exactly the line it names.
"""

from __future__ import annotations

import numpy as np

from proofs_checks.authoring import deterministic, rebind, substitute
from reference.algorithms.nsnc_improved import (
    FIRST_ORDER_ORACLES,
    KEY,
    SINGLE_PASS_ORACLES,
    DPResult,
    NonPrivateDiagnostics,
    period_position,
    prepare_run,
    step_directions,
)
from reference.mechanisms import TreeMechanism
from reference.o2nc import project_ball
from reference.rng import Streams, sample_ball

__all__ = [
    "LinearLoss",
    "LinearGradient",
    "RidgeLoss",
    "RidgeGradient",
    "LoggedLoss",
    "sample_rows",
    "records_needed",
    "path",
    "replicate_runs",
    "BUGS",
    "variant_nsnc_improved",
    "variant",
    "noise_scaled",
]


# --- losses ----------------------------------------------------------------------------------------------------


class LinearLoss:
    """f(x; z) = <c, x>, c = z[:d] (further entries of z, e.g. an index, are ignored). ‖c‖-Lipschitz; every
    smoothing leaves it unchanged, and its two-point summand d<c, y>y does not depend on the point."""

    def __init__(self, d: int):
        self.d = int(d)

    def __call__(self, x, z):
        x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
        if x.ndim == 1 and z.ndim == 1:
            return float(np.sum(x * z[: self.d]))
        return np.sum(x * z[..., : self.d], axis=-1)


class LinearGradient:
    """∇f(x; z) = c = z[:d] for the linear loss: constant in x (the first-order oracles' linear case)."""

    def __init__(self, d: int):
        self.d = int(d)

    def __call__(self, x, z):
        x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
        return np.broadcast_to(z[..., : self.d], np.broadcast_shapes(x.shape, z[..., : self.d].shape)).copy()


class RidgeLoss:
    """f(x; z) = L·φ(<a, x> − c) for rows z = (a, c) with ‖a‖ = 1; φ = "abs" |r| or "capped" min(|r|, τ)
    (``reference.smoothing.ridge_profile``, here without its argument checks: the reference calls a loss once per
    point). L-Lipschitz."""

    def __init__(self, d: int, lipschitz: float = 1.0, profile: str = "capped", tau: float = 1.0):
        if profile not in ("abs", "capped"):
            raise ValueError(f"profile must be 'abs' or 'capped', got {profile!r}")
        self.d, self.lipschitz, self.profile, self.tau = int(d), float(lipschitz), profile, float(tau)

    def residual(self, x, z):
        x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
        return np.sum(x * z[..., : self.d], axis=-1) - z[..., self.d]

    def __call__(self, x, z):
        x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
        if x.ndim == 1 and z.ndim == 1:  # one point, one record (the reference's calls)
            r = abs(float(np.sum(x * z[: self.d])) - float(z[self.d]))
            return self.lipschitz * (min(r, self.tau) if self.profile == "capped" else r)
        r = np.abs(self.residual(x, z))
        return self.lipschitz * (np.minimum(r, self.tau) if self.profile == "capped" else r)


class RidgeGradient(RidgeLoss):
    """∇f(x; z) = L·φ'(<a, x> − c)·a (at a kink the midpoint of the one-sided slopes, a Clarke subgradient, as
    ``reference.smoothing.ridge_profile_slope``)."""

    def __call__(self, x, z):
        x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
        if x.ndim == 1 and z.ndim == 1:  # one point, one record (the reference's calls)
            r = float(np.sum(x * z[: self.d])) - float(z[self.d])
            size = abs(r)
            slope = (r > 0) - (r < 0)
            if self.profile == "capped" and size >= self.tau:
                slope = 0.5 * slope if size == self.tau else 0.0
            return (self.lipschitz * slope) * z[: self.d]
        r = self.residual(x, z)
        slope = np.sign(r)
        if self.profile == "capped":
            slope = np.where(np.abs(r) > self.tau, 0.0, np.where(np.abs(r) == self.tau, 0.5 * slope, slope))
        a = z[..., : self.d]
        return self.lipschitz * np.asarray(slope)[..., None] * a + np.zeros(np.broadcast_shapes(np.shape(x), a.shape))


class LoggedLoss:
    """A loss (or gradient) that records the rows it is called with: ``seen`` is the list, call by call, of the
    record indices stored in the last entry of each row (a stacked call records all of its rows)."""

    def __init__(self, inner):
        self.inner = inner
        self.seen: list[tuple[int, ...]] = []

    def __call__(self, x, z):
        z = np.asarray(z, dtype=np.float64)
        self.seen.append(tuple(int(i) for i in np.ravel(z[..., -1])))
        return self.inner(x, z)

    def indices(self) -> list[int]:
        """Every index read, in call order, repeats included."""
        return [i for call in self.seen for i in call]


def sample_rows(rows, count: int, gen: np.random.Generator) -> np.ndarray:
    """``count`` records drawn uniformly with replacement from the population ``rows`` (one ``integers`` call)."""
    rows = np.asarray(rows, dtype=np.float64)
    return rows[gen.integers(rows.shape[0], size=count)].copy()


def records_needed(T: int, tree_size: int, B1: int, B2: int) -> int:
    """U(T) = ⌈T/Σ⌉·B1 + (T − ⌈T/Σ⌉)·B2: the records a single pass of T steps reads (Algorithm 3)."""
    resets = -(-T // tree_size)
    return resets * B1 + (T - resets) * B2


# --- reading a run ---------------------------------------------------------------------------------------------

PATH_FIELDS = ("releases", "query_points", "iterates", "steps", "segment_points", "block_averages")


def path(result, K: int, M: int, d: int, *, fields=PATH_FIELDS, diagnostics: bool = False):
    """The float64 arrays ``fields`` of a run (and the diagnostics' noiseless sums and noise when asked), as a dict,
    or a deterministic failure (Evidence) when one is missing, of the wrong shape or not finite."""
    shapes = {"releases": (K, M, d), "query_points": (K, M, d), "iterates": (K, M + 1, d), "steps": (K, M, d),
              "segment_points": (K, M), "block_averages": (K, d), "noiseless_sums": (K, M, d), "noise": (K, M, d),
              "output": (d,), "final_iterate": (d,)}
    out = {}
    for name in list(fields) + (["noiseless_sums", "noise"] if diagnostics else []):
        source = result.diagnostics if name in ("noiseless_sums", "noise") else result
        value = getattr(source, name, None)
        if value is None:
            return deterministic(False, detail=f"the run returned no {name} (record_path=True was passed)")
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return deterministic(False, detail=f"the run's {name} is not a float array")
        if array.shape != shapes[name]:
            return deterministic(False, detail=f"the run's {name} has shape {array.shape}, expected {shapes[name]}")
        if not np.all(np.isfinite(array)):
            index = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
            return deterministic(False, counterexample=index,
                                 detail=f"the run's {name} holds a non-finite value at {list(index)}")
        out[name] = array
    return out


#: Relative agreement required between a replicated call and the subject's own single call (the same draws; rounding).
AGREEMENT = 1e-12


def _replicate_paths(result, R, K, M, d, fields, diagnostics):
    """The per-replicate dicts of a replicated run (arrays with a leading axis R); None if its shapes are not that."""
    out = [dict() for _ in range(R)]
    for name in list(fields) + (["noiseless_sums", "noise"] if diagnostics else []):
        source = result.diagnostics if name in ("noiseless_sums", "noise") else result
        try:
            array = np.asarray(getattr(source, name), dtype=np.float64)
        except (AttributeError, TypeError, ValueError):
            return None
        if array.shape[:1] != (R,):
            return None
        for r in range(R):
            out[r][name] = array[r]
    return out


def replicate_runs(subject, objective, data, x0, *, seeds, noise_seeds=None, fields=("releases",),
                   diagnostics=False, **keywords):
    """One dict of float64 arrays (``path``) per public seed of ``seeds`` (and secret seed of ``noise_seeds``), all on
    the same ``data``; or a deterministic failure (Evidence).

    The protocol takes one seed. A subject that also accepts a sequence of seeds (the ``fast`` twin's replicates) is
    called once for all of them, but only if that call returns arrays with a leading replicate axis whose first
    replicate equals (to ``AGREEMENT`` relative) the subject's own single run with the first seeds, and every replicate
    passes ``path``'s checks; otherwise, or if the call raises, every replicate is a single run. Either way every number
    comes from the subject, and the replicates are the same runs.
    """
    K, M, d = int(keywords["blocks"]), int(keywords["block_length"]), np.shape(x0)[0]
    R = len(seeds)

    def single(r):
        extra = {} if noise_seeds is None else {"noise_seed": noise_seeds[r]}
        result = subject.nsnc_improved(objective, data, x0, seed=seeds[r], **extra, **keywords)
        return path(result, K, M, d, fields=fields, diagnostics=diagnostics)

    first = single(0)
    if not isinstance(first, dict) or R == 1:
        return first if not isinstance(first, dict) else [first]
    extra = {} if noise_seeds is None else {"noise_seed": list(noise_seeds)}
    try:
        result = subject.nsnc_improved(objective, data, x0, seed=list(seeds), **extra, **keywords)
        replicated = _replicate_paths(result, R, K, M, d, fields, diagnostics)
    except (TypeError, ValueError):  # the subject takes one seed, as the protocol says
        replicated = None
    if replicated is not None:
        scale = 1.0 + max(float(np.max(np.abs(v))) for v in first.values())
        checked = [path(_Arrays(rep), K, M, d, fields=list(rep)) for rep in replicated]
        agrees = all(np.all(np.abs(replicated[0][name] - first[name]) <= AGREEMENT * scale) for name in first)
        if agrees and all(isinstance(c, dict) for c in checked):
            return checked
    return [first] + [single(r) for r in range(1, R)]


class _Arrays:
    """Arrays by attribute, for ``path``'s checks of one replicate of a replicated run."""

    def __init__(self, arrays):
        self.__dict__.update(arrays)
        self.diagnostics = self


# --- one-bug variants of Algorithm 2 with Algorithms 3, 4, 5 -----------------------------------------------------

#: The bugs ``variant_nsnc_improved`` can switch on (None: none; the run then equals the reference's).
BUGS = {
    # the oracles
    "noisy_running_sum": "single pass: g_t = g̃_{t−1} + increment (the increment added to the released, noisy sum, "
                         "so the tree noise accumulates; Algorithm 3 adds it to the noiseless g_{t−1})",
    "noiseless_running_sum": "multi pass: g̃_t = g_{t−1} + increment + χ_t (the increment added to the noiseless sum; "
                             "Algorithm 4 adds it to the released g̃_{t−1}, so the χ's accumulate)",
    "shared_record_directions": "every record of a step uses the first record's directions (directions reused across "
                                "records instead of m fresh ones per record)",
    "reset_batch_short": "a reset step averages its first B1 − 1 records (one record read but unused)",
    "fresh_noise_per_step": "TREE(τ) replaced by fresh N(0, σ²I_d) at every step (no tree aggregation)",
    "first_order_sphere": "Algorithm 5's perturbations on the sphere of radius α instead of the ball (eq. (17), "
                          "erratum nsnc_improved.E8)",
    "stale_previous_point": "the increment's second estimate e'(·; ξ) taken at z_t instead of z_{t−1} (the SPIDER "
                            "difference then has mean 0 and g_t stays at the reset's estimate)",
    "batch_sorted_by_value": "the records of a step sorted by their first entry before directions are assigned (the "
                             "slot of a record, hence its directions, depends on the data)",
    "data_keyed_directions": "the directions of a step drawn from a key that includes the step's data (not a public "
                             "function of the step alone)",
    # the learner and Algorithm 2
    "unclipped_learner": "the learner does not clip: Δ_{t+1} = Δ_t − η g̃_t",
    "clip_radius_5pct": "the learner clips to radius 1.05 D",
    "z_after_step": "z_t = x_t + s_t Δ_t (the query point taken after the step instead of on [x_{t−1}, x_t])",
}


class _VariantOracle:
    """Algorithms 3, 5 (single pass) and 4 (multi pass, zeroth or first order), float64, with one bug."""

    def __init__(self, objective, prepared, noise_rng, bug):
        s = prepared.settings
        self.objective, self.bug = objective, bug
        self.oracle, self.d, self.M = s.oracle, s.d, s.block_length
        self.single = s.oracle in SINGLE_PASS_ORACLES
        self.first_order = s.oracle in FIRST_ORDER_ORACLES
        self.alpha = float(s.smoothing_radius)
        self.tree_size, self.directions = s.tree_size, s.directions
        self.stds = tuple(float(v) for v in s.noise_stds)
        self.data = np.asarray(prepared.data, dtype=np.float64)
        self.schedule, self.seed = prepared.schedule, prepared.seed
        self.noise_rng = noise_rng
        self.tree = TreeMechanism(self.d, np.full(s.tree_size, self.stds[0]), noise_rng) if self.single else None
        self.g = self.released = self.z_previous = None
        self.noiseless, self.noise = [], []

    def _directions(self, t, rows, reset):
        m = self.directions[0] if reset else self.directions[1]
        b = rows.shape[0]
        if self.bug == "data_keyed_directions":
            tag = int(abs(float(np.sum(rows))) * 1e6) % (2**31)
            rng = Streams(self.seed).generator(KEY, "direction", t, tag)
            if self.first_order:
                shape = ((b, 1) if self.oracle == "first_order" else (b, m)) if reset else (b, 2, m)
                return sample_ball(rng, shape, self.d, self.alpha)
            shape = (b, m) if reset or self.oracle == "single_pass_crn" else (b, 2, m)
            return _sphere(rng, shape, self.d)
        y = np.asarray(step_directions(self.seed, t, self.oracle, b, m, self.d, self.alpha, reset=reset))
        if self.bug == "shared_record_directions":
            y = np.broadcast_to(y[:1], y.shape).copy()
        if self.bug == "first_order_sphere" and self.first_order:
            y = self.alpha * y / np.linalg.norm(y, axis=-1, keepdims=True)
        return y

    def _estimate(self, z, row, y):
        """(1/m)Σ_j (d/(2α))(f(z + αy_j) − f(z − αy_j)) y_j, or (1/m)Σ_j ∇f(z + y_j): the reference's order of sums."""
        total = np.zeros(self.d)
        for j in range(y.shape[0]):
            if self.first_order:
                total = total + np.asarray(self.objective(z + y[j], row), dtype=np.float64)
            else:
                step = self.alpha * y[j]
                difference = float(self.objective(z + step, row)) - float(self.objective(z - step, row))
                total = total + (self.d * difference / (2 * self.alpha)) * y[j]
        return total / y.shape[0]

    def query(self, k, j, z):
        t = (k - 1) * self.M + j
        z = np.asarray(z, dtype=np.float64)
        tau = period_position(t, self.tree_size)
        reset = tau == 1
        rows = self.data[self.schedule.block(t)] if self.single else self.data
        if self.bug == "batch_sorted_by_value":
            rows = rows[np.argsort(rows[:, 0], kind="stable")]
        y = self._directions(t, rows, reset)
        total = np.zeros(self.d)
        if reset:
            used = rows.shape[0] - 1 if self.bug == "reset_batch_short" and rows.shape[0] > 1 else rows.shape[0]
            for i in range(used):
                total = total + self._estimate(z, rows[i], y[i])
            g = total / used
        else:
            previous_point = z if self.bug == "stale_previous_point" else self.z_previous
            for i in range(rows.shape[0]):
                now, before = (y[i], y[i]) if y.ndim == 3 else (y[i, 0], y[i, 1])
                total = total + (self._estimate(z, rows[i], now) - self._estimate(previous_point, rows[i], before))
            if self.single:
                base = self.released if self.bug == "noisy_running_sum" else self.g
            else:
                base = self.g if self.bug == "noiseless_running_sum" else self.released
            g = base + total / rows.shape[0]
        if self.single and self.bug != "fresh_noise_per_step":
            noise = self.tree(tau)
        else:
            sigma = self.stds[0] if (self.single or reset) else self.stds[1]
            noise = sigma * self.noise_rng.standard_normal(self.d)
        released = g + noise
        self.g, self.released, self.z_previous = g, released, z
        self.noiseless.append(g)
        self.noise.append(noise)
        return released


def _sphere(rng, shape, d):
    g = rng.standard_normal((*shape, d))
    return g / np.linalg.norm(g, axis=-1, keepdims=True)


def variant_nsnc_improved(objective, data, x0, *, oracle="single_pass", blocks, block_length, tree_size,
                          smoothing_radius, step_bound, step_size, directions, B1=None, B2=1, noise_std=None,
                          epsilon=None, lipschitz=None, dp_delta=None, gamma=None, sensitivity_mode="auto",
                          clip_hardening=False, seed, noise_seed=None, noise="gaussian", enforce_lipschitz=False,
                          restart_blocks=False, record_path=False, bug=None) -> DPResult:
    """nsnc_improved Algorithm 2 with the oracle of Algorithm 3, 4 or 5 from the reference's public building blocks,
    float64, with the bug ``bug`` (a key of :data:`BUGS`, or None). Arguments, checks, σ and ledger: the
    ``nsnc_improved`` protocol's (``prepare_run``); clip_hardening and enforce_lipschitz are not supported here.

    Randomness as the protocol declares it: directions ``step_directions(seed, t, ...)``; s of block k =
    ``random(M)`` of ("nsnc_improved", "segment", k) and k* − 1 = ``integers(K)`` of ("nsnc_improved", "output")
    under the public seed; ``standard_normal(d)`` per step from ("nsnc_improved", "noise") under the secret seed (the
    public one without noise).
    """
    if bug is not None and bug not in BUGS:
        raise ValueError(f"bug must be one of {sorted(BUGS)} or None, got {bug!r}")
    if clip_hardening or enforce_lipschitz:
        raise ValueError("variant_nsnc_improved supports neither clip_hardening nor enforce_lipschitz")
    prepared = prepare_run(oracle, data, x0, blocks=blocks, block_length=block_length, tree_size=tree_size,
                           smoothing_radius=smoothing_radius, step_bound=step_bound, step_size=step_size,
                           directions=directions, B1=B1, B2=B2, noise_std=noise_std, epsilon=epsilon,
                           lipschitz=lipschitz, dp_delta=dp_delta, gamma=gamma, sensitivity_mode=sensitivity_mode,
                           clip_hardening=clip_hardening, seed=seed, noise_seed=noise_seed, noise=noise,
                           enforce_lipschitz=enforce_lipschitz, restart_blocks=restart_blocks)
    if prepared.settings.arithmetic != "float64":
        raise ValueError("variant_nsnc_improved runs in float64 only")
    s = prepared.settings
    d, K, M = s.d, s.K, s.block_length
    streams = Streams(prepared.seed) if prepared.secret is None else prepared.secret.streams()
    the_oracle = _VariantOracle(objective, prepared, streams.generator(KEY, "noise"), bug)
    public = Streams(prepared.seed).child(KEY)
    radius = float(s.step_bound) * (1.05 if bug == "clip_radius_5pct" else 1.0)
    eta = float(s.step_size)

    x = np.array(prepared.x0, dtype=np.float64)
    delta = np.zeros(d)
    averages, releases, segments, zs, xs, deltas = [], [], [], [], [], []
    for k in range(1, K + 1):
        if restart_blocks:
            delta = np.zeros(d)
        s_row = public.generator("segment", k).random(M)
        segments.append(s_row)
        z_rows, g_rows, x_rows, delta_rows = [], [], [x], []
        for j in range(1, M + 1):
            z = x + s_row[j - 1] * delta
            x_next = x + delta
            if bug == "z_after_step":
                z = x_next + s_row[j - 1] * delta
            g = the_oracle.query(k, j, z)
            moved = delta - eta * g
            z_rows.append(z)
            g_rows.append(g)
            delta_rows.append(delta)
            delta = moved if bug == "unclipped_learner" else project_ball(moved, radius)
            x = x_next
            x_rows.append(x)
        averages.append(np.mean(np.array(z_rows), axis=0))
        releases.append(g_rows)
        zs.append(z_rows)
        xs.append(x_rows)
        deltas.append(delta_rows)
    index = int(public.generator("output").integers(K))
    block_averages = np.array(averages)
    diagnostics = NonPrivateDiagnostics(
        noiseless_sums=np.array(the_oracle.noiseless).reshape(K, M, d),
        noise=np.array(the_oracle.noise).reshape(K, M, d),
        nonfinite_counts=np.zeros((K, M), dtype=np.int64), clipped_counts=np.zeros((K, M), dtype=np.int64),
        evaluations=0)
    return DPResult(output=block_averages[index].copy(), output_index=index, block_averages=block_averages,
                    final_iterate=x.copy(), releases=np.array(releases).reshape(K, M, d),
                    segment_points=np.array(segments), query_points=np.array(zs) if record_path else None,
                    iterates=np.array(xs) if record_path else None, steps=np.array(deltas) if record_path else None,
                    ledger=prepared.ledger, diagnostics=diagnostics)


def variant(name: str, description: str | None = None):
    """A mutant whose ``nsnc_improved`` is :func:`variant_nsnc_improved` with the bug ``name`` (one line wrong)."""
    return substitute(name, description or BUGS[name], "nsnc_improved",
                      lambda call: variant_nsnc_improved(**call.arguments, bug=name))


def noise_scaled(name: str, factor: float, description: str):
    """A mutant that runs with every noise standard deviation × ``factor`` (σ, or σ1 and σ2), a near miss when the
    factor is close to 1 (the ledger is the one of the smaller σ: a run that adds less noise than asked)."""
    def scale(value):
        if value is None:
            return None
        if isinstance(value, (tuple, list)):
            return tuple(factor * float(v) for v in value)
        return factor * float(value)

    return rebind(name, description, "nsnc_improved", noise_std=scale)
