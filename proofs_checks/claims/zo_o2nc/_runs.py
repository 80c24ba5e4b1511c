"""Runs of zo_o2nc Algorithm 3 (with Algorithm 4 or 6) for the run claims of this folder (private helpers).

* Losses the runs use: :class:`RidgeLoss` (L·φ(<a, x> − c) on the rows (a, c) of ``reference.objectives.RidgeSum``,
  whose exact smoothed values and gradients are the ground truth) and :class:`LinearLoss` (<z, x>). Both broadcast
  stacked points (..., d) against stacked rows (..., p), as the subject protocols require of a loss (the fast
  backend calls it once per round), and skip the objectives' per-call validation (the reference calls the loss
  once per point).
* :func:`sample_rows`: records drawn i.i.d. (with replacement) from a finite population, so that E_z over a record
  is the population average — the F of the paper's §1.1 with P uniform on the population.
* :func:`path`: the float64 arrays of a ``DPResult`` that the checks read, with a deterministic failure when the
  subject returned a path of the wrong shape or with a non-finite entry.
* :func:`variant_zo_o2nc`: Algorithm 3 + projected OSD + Algorithm 4 assembled from the reference's public building
  blocks (``reference.o2nc.ProjectedOSD``, ``reference.estimators.two_point_estimate`` / ``diff_estimate``,
  ``reference.mechanisms.TreeMechanism``, ``reference.algorithms.zo_o2nc.directions_for_round``), with the same
  randomness schedule as the ``zo_o2nc`` protocol, and with one deliberate bug switched on by ``bug``. Without a
  bug it reproduces the reference run exactly (tests/test_zo_o2nc_claims.py); the mutants of the run claims are
  these one-bug variants, so each differs from a correct algorithm in exactly the line it names.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from proofs_checks.authoring import deterministic, substitute
from reference.algorithms.zo_o2nc import (
    DPResult,
    Ledger,
    NonPrivateDiagnostics,
    RunSettings,
    alg4_partition,
    directions_for_round,
)
from reference.algorithms.zo_o2nc_privacy import zo_o2nc_privacy_plan, zo_o2nc_tree_noise_std
from reference.estimators import diff_estimate, one_point_estimate, two_point_estimate
from reference.mechanisms import TreeMechanism
from reference.o2nc import ProjectedOSD
from reference.rng import Streams

__all__ = ["RidgeLoss", "LinearLoss", "sample_rows", "path", "variant_zo_o2nc", "BUGS", "variant", "float_up"]


# --- losses ---------------------------------------------------------------------------------------------------


class RidgeLoss:
    """f(x; z) = L·φ(<a, x> − c) for rows z = (a, c) with ‖a‖ = 1; φ = "abs" |r|, "capped" min(|r|, τ) or "wshape"
    ||r| − τ| (``reference.smoothing.ridge_profile``). x (..., d) and z (..., d + 1) broadcast; L-Lipschitz in x."""

    def __init__(self, d: int, lipschitz: float = 1.0, profile: str = "abs", tau: float = 1.0):
        self.d, self.lipschitz, self.profile, self.tau = int(d), float(lipschitz), profile, float(tau)

    def __call__(self, x, z):
        x = np.asarray(x, dtype=np.float64)
        z = np.asarray(z, dtype=np.float64)
        if x.ndim == 1 and z.ndim == 1:  # one point, one record (the reference's calls): the same reduction
            r = float(np.sum(x * z[: self.d]) - z[self.d])
            if self.profile == "abs":
                return self.lipschitz * abs(r)
            if self.profile == "capped":
                return self.lipschitz * min(abs(r), self.tau)
            return self.lipschitz * abs(abs(r) - self.tau)
        r = np.sum(x * z[..., : self.d], axis=-1) - z[..., self.d]
        if self.profile == "abs":
            value = np.abs(r)
        elif self.profile == "capped":
            value = np.minimum(np.abs(r), self.tau)
        else:
            value = np.abs(np.abs(r) - self.tau)
        return self.lipschitz * value


class LinearLoss:
    """f(x; z) = <z, x> (rows z of shape (..., d)); ‖z‖-Lipschitz, and every smoothing leaves it unchanged."""

    def __call__(self, x, z):
        x = np.asarray(x, dtype=np.float64)
        z = np.asarray(z, dtype=np.float64)
        if x.ndim == 1 and z.ndim == 1:
            return float(np.sum(x * z))
        return np.sum(x * z, axis=-1)


def sample_rows(rows, count: int, gen: np.random.Generator) -> np.ndarray:
    """``count`` records drawn uniformly with replacement from the population ``rows`` (one ``integers`` call)."""
    rows = np.asarray(rows, dtype=np.float64)
    return rows[gen.integers(rows.shape[0], size=count)].copy()


# --- reading a run -------------------------------------------------------------------------------------------


PATH_FIELDS = ("releases", "query_points", "iterates", "steps", "segment_points", "epoch_averages")


def path(result, K: int, T: int, d: int, *, fields=PATH_FIELDS, diagnostics=False):
    """The float64 arrays ``fields`` of a run (and the diagnostics' noiseless sums and noise when asked), as a
    dict; or a deterministic failure (Evidence) when one is missing, of the wrong shape, or not finite."""
    shapes = {"releases": (K, T, d), "query_points": (K, T, d), "iterates": (K, T + 1, d), "steps": (K, T, d),
              "segment_points": (K, T), "epoch_averages": (K, d), "noiseless_sums": (K, T, d), "noise": (K, T, d)}
    out = {}
    names = list(fields) + (["noiseless_sums", "noise"] if diagnostics else [])
    for name in names:
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


def float_up(value) -> float:
    """The smallest float64 ≥ an mpmath value (how a run rounds its calibrated σ)."""
    out = float(value)
    if mpmath.mpf(out) < value:
        out = math.nextafter(out, math.inf)
    return out


# --- one-bug variants of Algorithm 3 + OSD + Algorithm 4 -------------------------------------------------------

#: The bugs ``variant_zo_o2nc`` can switch on (None: none; the run then equals the reference's).
BUGS = {
    "w_after_step": "w_t^k = x_{t+1}^k + s_t^k Δ_t^k (Alg 3 line 4 evaluated after the update: the off-by-one)",
    "segment_short": "s_t^k drawn on [0, 0.85] instead of [0, 1] (w_t^k on the first 85 % of the segment)",
    "no_restart": "the learner is not restarted between epochs (Alg 3 line 8 skipped: Δ_1^{k+1} = Δ_{T+1}^k)",
    "osd_sees_noiseless": "the learner is sent the noiseless g_t^k instead of the released g̃_t^k",
    "step_bound_5pct": "the learner projects onto the ball of radius 1.05 D",
    "noisy_running_sum": "g_t^k = g̃_{t−1}^k + DIFF (the running sum accumulates the released, noisy values)",
    "unshared_diff_directions": "DIFF evaluates f at y + δu'_ij with directions u' ≠ u (the coupling of Alg 2 lost)",
    "grad_one_record_short": "GRAD averages the first B1 − 1 records of its block (one record read but unused)",
    "fresh_noise_per_round": "TREE(t) replaced by fresh N(0, σ² I) per round (no tree aggregation)",
}


def variant_zo_o2nc(loss, data, x1, *, T, K, B1, B2=1, smoothing_radius, step_bound=None, step_size, seed,
                    noise="none", noise_std=None, rho=None, count_rule="exact", lipschitz=None, dp_delta=None,
                    noise_seed=None, record_path=False, bug=None, **unused):
    """zo_o2nc Algorithm 3 + projected OSD + Algorithm 4 from the reference's public building blocks, float64,
    explicit hyper-parameters only, with the bug ``bug`` (a key of :data:`BUGS`, or None).

    Randomness as the ``zo_o2nc`` protocol declares it: directions ``directions_for_round(seed, k, t, b, d)``;
    s_1^k..s_T^k = ``random(T)`` of ("zo_o2nc", "segment", k) and k* − 1 = ``integers(K)`` of ("zo_o2nc",
    "output") under the public seed; TREE node noise ``standard_normal(d)`` per round from ("zo_o2nc", "noise")
    under ``noise_seed`` (under ``seed`` for a run without noise). Returns a ``DPResult``; the ledger's plan is
    the reference's ``zo_o2nc_privacy_plan`` for the σ used (None without noise).
    """
    if bug is not None and bug not in BUGS:
        raise ValueError(f"bug must be one of {sorted(BUGS)} or None, got {bug!r}")
    given = sorted(name for name, value in unused.items() if value not in (None, False))
    if given:
        raise TypeError(f"variant_zo_o2nc does not take {given}")
    x = np.array(x1, dtype=np.float64)
    data = np.asarray(data, dtype=np.float64)
    d, M = x.shape[0], data.shape[0]
    delta = float(smoothing_radius)
    D = delta / T if step_bound is None else float(step_bound)
    partition = alg4_partition(M, T, K, B1, B2)
    private = noise == "gaussian"
    if private:
        if noise_std is None:
            with mpmath.workprec(128):
                noise_std = float_up(zo_o2nc_tree_noise_std(d, lipschitz, T, B1, B2, delta, D, rho, count_rule))
            rule = count_rule
        else:
            rule = "given"
        sigma = float(noise_std)
        noise_rng = Streams(int(noise_seed)).generator("zo_o2nc", "noise")
    else:
        sigma, rule = 0.0, "none"
        noise_rng = Streams(seed).generator("zo_o2nc", "noise")
    tree = TreeMechanism(d, np.full(T, sigma), noise_rng)
    learner = ProjectedOSD(d, D * (1.05 if bug == "step_bound_5pct" else 1.0), float(step_size))
    public = Streams(seed).child("zo_o2nc")

    releases, noiseless, noises, ws, xs, deltas, segments, averages = [], [], [], [], [], [], [], []
    evaluations = 0
    for k in range(1, K + 1):
        if not (bug == "no_restart" and k > 1):
            learner.reset()
        s_row = public.generator("segment", k).random(T)
        if bug == "segment_short":
            s_row = 0.85 * s_row
        segments.append(s_row)
        g = released = w_previous = None
        x_rows, w_rows, delta_rows = [x.copy()], [], []
        for t in range(1, T + 1):
            step = learner.propose()
            w = x + s_row[t - 1] * step
            x_next = x + step
            if bug == "w_after_step":
                w = x_next + s_row[t - 1] * step
            batch = data[partition.block(k, t)]
            u = directions_for_round(seed, k, t, batch.shape[0], d)
            if t == 1:
                used = batch[:-1] if bug == "grad_one_record_short" and batch.shape[0] > 1 else batch
                g = two_point_estimate(loss, w, used, u[: used.shape[0]], delta)
            else:
                if bug == "unshared_diff_directions":
                    other = np.roll(u, 1, axis=-1)  # the same law, not the same directions
                    diff = one_point_estimate(loss, w, batch, u, delta) - one_point_estimate(loss, w_previous, batch,
                                                                                            other, delta)
                else:
                    diff = diff_estimate(loss, w, w_previous, batch, u, delta)
                g = (released if bug == "noisy_running_sum" else g) + diff
            evaluations += 2 * u.shape[0] * u.shape[1]
            if bug == "fresh_noise_per_round":
                tree_noise = sigma * noise_rng.standard_normal(d)
            else:
                tree_noise = tree(t)
            released = g + tree_noise
            learner.update(g if bug == "osd_sees_noiseless" else released)
            releases.append(released)
            noiseless.append(g)
            noises.append(tree_noise)
            w_rows.append(w)
            delta_rows.append(step)
            w_previous, x = w, x_next
            x_rows.append(x.copy())
        averages.append(np.mean(np.array(w_rows), axis=0))
        ws.append(w_rows)
        xs.append(x_rows)
        deltas.append(delta_rows)
    index = int(public.generator("output").integers(K))
    epoch_averages = np.array(averages)

    plan = None
    if private:
        plan = zo_o2nc_privacy_plan(d=d, lipschitz=lipschitz, T=T, K=K, B1=B1, B2=B2, smoothing_radius=delta,
                                    step_bound=D, noise_std=sigma, dp_delta=dp_delta, rho_target=rho,
                                    noise_rule=rule)
    settings = RunSettings("variance_reduced", "explicit", d, M, partition.records_used, T, K, (B1, B2), delta, D,
                           float(step_size), sigma, rule, None if lipschitz is None else float(lipschitz), False,
                           "float64")
    ledger = Ledger("zo_o2nc" if private else "o2nc_variance_reduced", plan, settings, seed,
                    "user" if private else None, None)
    diagnostics = NonPrivateDiagnostics(
        noiseless_sums=np.array(noiseless).reshape(K, T, d), noise=np.array(noises).reshape(K, T, d),
        nonfinite_counts=np.zeros((K, T), dtype=np.int64), lipschitz_exceedances=np.zeros((K, T), dtype=np.int64),
        loss_evaluations=evaluations)
    return DPResult(output=epoch_averages[index].copy(), output_index=index, epoch_averages=epoch_averages,
                    final_iterate=x.copy(), releases=np.array(releases).reshape(K, T, d),
                    segment_points=np.array(segments), query_points=np.array(ws) if record_path else None,
                    iterates=np.array(xs) if record_path else None, steps=np.array(deltas) if record_path else None,
                    ledger=ledger, diagnostics=diagnostics)


def variant(name: str, description: str | None = None):
    """A mutant whose ``zo_o2nc`` is :func:`variant_zo_o2nc` with the bug ``name`` (one line of Alg 3/4 wrong)."""
    return substitute(name, description or BUGS[name], "zo_o2nc",
                      lambda call: variant_zo_o2nc(**call.arguments, bug=name))
