"""nsnc_improved Algorithms 3 and 5 (single pass): how the records are used, and how two runs on neighbouring data
sets are coupled — the two facts the privacy proofs of Lemma 3.3 / Lemma 3.4 (and Lemma C.1 / C.2) start from.

* Single pass. "S ← the next B1 (B2) unused samples": every record enters at most one step, a run of T steps reads
  exactly U(T) = ⌈T/Σ⌉·B1 + (T − ⌈T/Σ⌉)·B2 records (a reset step B1, any other step B2), a data set of fewer than
  U(T) records is refused (the count it needs named in the message, never recycled records), and which records a
  step reads does not depend on their values (the order is fixed before the data is looked at: otherwise the
  neighbouring runs of the privacy proof would read different records).
* Slot coupling. The directions of step t are keyed by the step alone (public randomness), so on neighbouring data
  sets D, D′ (one record replaced) two runs with the same public seed (and the same secret seed) agree up to the step
  t* that reads the differing record, and at t* their noiseless sums differ by exactly that record's term: (e(z; ξ) −
  e(z; ξ′))/B1 at a reset, ((e(z_t; ξ) − e′(z_(t−1); ξ)) − (e(z_t; ξ′) − e′(z_(t−1); ξ′)))/B2 at an increment, with
  the directions of its slot. For losses whose estimates do not depend on the point (linear losses) the difference
  then stays exactly that term until the end of the period and is 0 afterwards. This is the "g_t − g′_t" the proofs
  bound.

How the check sees it. A loss that logs the index stored in the last entry of every row it is called with gives
the records read (and their order, compared between two data sets with the same indices and different values). A
run whose query points never move (step bound D = 1e-300 below the float64 resolution of x0: z_t = x0 exactly)
isolates the steps: with independent directions (Algorithm 3) or perturbations (Algorithm 5) every record changes
the noiseless increment g_t − g_(t−1) (g_t at a reset) of exactly the steps that read it, so replacing one record at
a time and comparing the noiseless sums (``result.diagnostics``, computed but never published) shows where each
record is used. The slot terms are recomputed by the check from the public directions
(``reference.algorithms.nsnc_improved.step_directions``, the protocol's randomness contract) and the loss.
Tolerances are float64 rounding only (a difference of two sums of B terms of m summands).
"""

from __future__ import annotations

import numpy as np

from proofs_checks.authoring import Claim, deterministic, rounding_gamma, substitute
from reference.algorithms.nsnc_improved import step_directions
from reference.objectives import RidgeSum
from reference.rng import sample_sphere

from ._variants import (
    LinearLoss,
    LoggedLoss,
    RidgeGradient,
    RidgeLoss,
    path,
    records_needed,
    variant,
)

#: Below the float64 resolution of x0 (entries of size ~1): x0 + s·Δ rounds to x0, so the query points never move.
FROZEN_STEP = 1e-300


class QuadraticGradient:
    """∇f(x; z) = z[0]·x + z[1:d+1] (f = (a/2)‖x‖² + <c, x>): two perturbation sets give different averages, so the
    first-order increment of a record is nonzero at a frozen point and changes when the record does."""

    def __init__(self, d: int):
        self.d = int(d)

    def __call__(self, x, z):
        x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
        return z[..., :1] * x + z[..., 1: self.d + 1]


# --- the single-pass data schedule -------------------------------------------------------------------------------

#: (oracle, K, M, Σ, B1, B2, m): T not a multiple of Σ, Σ = 1 (every step a reset), periods across blocks.
SCHEDULES = (
    ("single_pass", 2, 3, 2, 3, 2, 1),
    ("first_order", 1, 5, 3, 2, 1, 2),
    ("single_pass_crn", 3, 2, 1, 2, 5, 1),
    ("single_pass", 1, 7, 4, 1, 3, 2),
)


def _batch(t, tree_size, B1, B2):
    return B1 if (t - 1) % tree_size == 0 else B2


def _rows(gen, oracle, d, count):
    """``count`` records with the index in the last entry: linear vectors (Algorithm 3) or (a, c) of
    ∇f = a·x + c (Algorithm 5)."""
    width = d + 1 if oracle == "first_order" else d
    payload = gen.uniform(0.5, 1.5, (count, width)) * gen.choice([-1.0, 1.0], (count, width))
    return np.column_stack([payload, np.arange(count, dtype=np.float64)])


def _objective(oracle, d):
    return QuadraticGradient(d) if oracle == "first_order" else LinearLoss(d)


def _run(subject, objective, data, x0, spec, seed, *, step_bound, record_path=False):
    oracle, K, M, S, B1, B2, m = spec
    return subject.nsnc_improved(objective, data, x0, oracle=oracle, blocks=K, block_length=M, tree_size=S, B1=B1,
                                 B2=B2, smoothing_radius=0.3, step_bound=step_bound, step_size=0.5, directions=m,
                                 noise="none", seed=seed, record_path=record_path)


def _increments(result, K, M, S, d):
    """The noiseless increments: g_t at a reset, g_t − g_(t−1) otherwise, (T, d), and max |g_t|; or a deterministic
    failure."""
    a = path(result, K, M, d, fields=("releases",), diagnostics=True)
    if not isinstance(a, dict):
        return a
    g = a["noiseless_sums"].reshape(K * M, d)
    out = g.copy()
    for t in range(2, K * M + 1):
        if (t - 1) % S:
            out[t - 1] = g[t - 1] - g[t - 2]
    return out, float(np.max(np.abs(g)))


def _schedule_problems(subject, ctx, spec, index):
    oracle, K, M, S, B1, B2, m = spec
    T, d = K * M, 3
    U = records_needed(T, S, B1, B2)
    gen = ctx.generator("alg3_data", index)
    seed = int(gen.integers(2**62))
    x0 = np.array([0.75, -1.25, 0.5])
    label = f"{oracle} (K={K}, M={M}, Σ={S}, B1={B1}, B2={B2}): U(T) = {U}"
    problems = []

    # (1) the records read, and their order, from a logging loss; the same indices on data of other values
    data = _rows(gen, oracle, d, U + 3)  # three records more than a single pass needs: never read
    other = _rows(gen, oracle, d, U + 3)
    logs = []
    for rows in (data, other):
        logged = LoggedLoss(_objective(oracle, d))
        result = _run(subject, logged, rows, x0, spec, seed, step_bound=0.05)
        failed = path(result, K, M, d, fields=("releases",))
        if not isinstance(failed, dict):
            return [f"{label}: {failed.detail}"], U
        logs.append(logged.indices())
    read = sorted(set(logs[0]))
    if len(read) != U:
        problems.append(f"{label}: the run read {len(read)} distinct records, not U(T) = {U}")
    if any(i < 0 or i >= U + 3 for i in read):
        problems.append(f"{label}: the loss saw an index outside the data")
    if logs[0] != logs[1]:
        problems.append(f"{label}: the records read (or their order) changed with the data's values")

    # (2) where each record is used: replace one record at a time in a run whose query points never move
    if oracle != "single_pass_crn" or S == 1:  # CRN increments are exactly 0 at a frozen point: no record shows
        result = _run(subject, _objective(oracle, d), data, x0, spec, seed, step_bound=FROZEN_STEP, record_path=True)
        points = path(result, K, M, d, fields=("query_points",))
        if not isinstance(points, dict):
            return [f"{label}: {points.detail}"], U
        if np.any(points["query_points"] != x0):
            return [f"{label}: with step bound D = {FROZEN_STEP:g} the query points moved off x0 (z = x0 + s·Δ with "
                    "‖Δ‖ ≤ D rounds to x0)"], U
        base = _increments(result, K, M, S, d)
        if not isinstance(base, tuple):
            return [f"{label}: {base.detail}"], U
        users = {}
        for i in list(read) + [U + 2]:
            changed = data.copy()
            changed[i, :-1] = -2.0 * changed[i, :-1] + 0.25
            moved = _increments(_run(subject, _objective(oracle, d), changed, x0, spec, seed,
                                     step_bound=FROZEN_STEP), K, M, S, d)
            if not isinstance(moved, tuple):
                return [f"{label}: {moved.detail}"], U
            # an increment g_t − g_(t−1) of a step that does not read record i changes by rounding only (two roundings
            # of numbers of size max |g|): γ_16·max |g| is far below a record's term
            rounding = rounding_gamma(16) * max(base[1], moved[1])
            users[i] = [t + 1 for t in range(T) if np.max(np.abs(moved[0][t] - base[0][t])) > rounding]
        if users.pop(U + 2):
            problems.append(f"{label}: a record that is never read changed the run")
        for i, steps in users.items():
            if len(steps) != 1:
                problems.append(f"{label}: record {i} is used by the steps {steps}, not by exactly one")
        counts = {t: sum(1 for steps in users.values() if steps == [t]) for t in range(1, T + 1)}
        wrong = {t: c for t, c in counts.items() if c != _batch(t, S, B1, B2)}
        if wrong:
            problems.append(f"{label}: steps read {wrong} records (B1 = {B1} at a reset, B2 = {B2} otherwise)")

    # (3) a data set one record short is refused, naming U(T)
    try:
        _run(subject, _objective(oracle, d), data[: U - 1], x0, spec, seed, step_bound=0.05)
    except ValueError as error:
        if str(U) not in str(error):
            problems.append(f"{label}: the refusal of {U - 1} records does not name the {U} needed: {error}")
    else:
        problems.append(f"{label}: a data set of {U - 1} < U(T) records was not refused")
    return problems, U


def _check_data_use(subject, ctx):
    specs = SCHEDULES if ctx.budget.name == "full" else SCHEDULES[:3]
    problems, counts = [], []
    for index, spec in enumerate(specs):
        found, U = _schedule_problems(subject, ctx, spec, index)
        problems += found
        counts.append(U)
    return deterministic(
        not problems, counterexample=problems[:3] or None,
        detail=(f"{len(specs)} single-pass runs (oracles {sorted({s[0] for s in specs})}, U(T) = {counts}): records "
                "read = U(T), each used by exactly one step, B1 per reset and B2 per other step, the same records in "
                "the same order for other data values, and one record short refused"
                + (f"; violations: {'; '.join(problems[:3])}" if problems else "")))


def _needed(call):
    T = int(call.blocks) * int(call.block_length)
    return records_needed(T, int(call.tree_size), int(call.B1), int(call.B2))


def _recycle(call):
    """Too few records: recycle them (np.resize) instead of refusing."""
    data = np.asarray(call.data, dtype=np.float64)
    U = _needed(call)
    if data.shape[0] < U:
        data = np.resize(data, (U, data.shape[1]))
    return call.original(data=data)


def _sorted_by_value(call):
    """The records read in the order of their first entry (an order that looks at the data)."""
    data = np.asarray(call.data, dtype=np.float64)
    return call.original(data=data[np.argsort(data[:, 0], kind="stable")])


def _reuse_first(call):
    """The last record of the pass replaced by the first one: record 0 is read twice, record U − 1 never."""
    data = np.array(call.data, dtype=np.float64)
    U = _needed(call)
    if data.shape[0] >= U >= 2:
        data[U - 1] = data[0]
    return call.original(data=data)


DATA_USE = Claim(
    id="nsnc_improved.alg3.single_pass_data_use",
    paper="nsnc_improved",
    location="Algorithm 3 (\"the next B unused samples\"), Algorithm 5; proof of Theorem 3.1 (sample budget "
             "B1·T/Σ + B2·T); Lemma 3.4 (each record in one step of one period)",
    statement=(
        "A single-pass run of T steps (Algorithms 3 and 5, also with common random numbers) reads exactly U(T) = "
        "⌈T/Σ⌉·B1 + (T − ⌈T/Σ⌉)·B2 records, each in exactly one step (B1 at a reset, B2 at any other step), reads "
        "the same records in the same order whatever their values, and refuses a data set of fewer than U(T) records "
        "with a message naming U(T)."
    ),
    kind="deterministic",
    requires=("nsnc_improved",),
    check=_check_data_use,
    mutants=(
        substitute("recycled_records", "too few records recycled (np.resize) instead of refused", "nsnc_improved",
                   _recycle),
        substitute("value_ordered", "the records read in the order of their first entry (the order looks at the "
                   "data)", "nsnc_improved", _sorted_by_value),
        substitute("record_reused", "the first record read again in the last step (the last record never read)",
                   "nsnc_improved", _reuse_first),
        variant("reset_batch_short"),
    ),
)


# --- slot coupling of neighbouring runs --------------------------------------------------------------------------

#: (oracle, K, M, Σ, B1, B2, m, loss): linear losses (the whole difference pattern is exact) and capped ridges
#: (the difference at the first step that reads the replaced record is exact).
COUPLING = (
    ("single_pass", 2, 3, 3, 3, 2, 2, "linear"),
    ("single_pass", 2, 3, 3, 3, 2, 2, "ridge"),
    ("single_pass_crn", 1, 5, 5, 2, 2, 3, "ridge"),
    ("first_order", 1, 4, 4, 3, 2, 2, "ridge"),
)


def _slot_term(oracle, loss, rows_pair, z_now, z_before, directions, alpha, d, batch, reset):
    """The differing slot's contribution to g_t − g′_t: (e(ξ) − e(ξ′))/B (reset) or the difference of the two
    records' increments /B, with that slot's directions (the check's own two-point / first-order estimates)."""
    def estimate(point, row, y):
        total = np.zeros(d)
        for j in range(y.shape[0]):
            if oracle == "first_order":
                total = total + np.asarray(loss(point + y[j], row), dtype=np.float64)
            else:
                difference = float(loss(point + alpha * y[j], row)) - float(loss(point - alpha * y[j], row))
                total = total + (d * difference / (2 * alpha)) * y[j]
        return total / y.shape[0]

    def record(row):
        if reset:
            return estimate(z_now, row, directions)
        now, before = (directions, directions) if directions.ndim == 2 else (directions[0], directions[1])
        return estimate(z_now, row, now) - estimate(z_before, row, before)

    return (record(rows_pair[0]) - record(rows_pair[1])) / batch


def _coupling_problems(subject, ctx, spec, index):
    oracle, K, M, S, B1, B2, m, kind = spec
    d, alpha, T = 3, 0.4, K * M
    U = records_needed(T, S, B1, B2)
    gen = ctx.generator("coupling", index)
    x0 = np.array([0.2, -0.1, 0.3])
    if kind == "linear":
        loss, data = LinearLoss(d), 0.8 * sample_sphere(gen, U, d)
    else:
        population = RidgeSum.random(d, U, gen, profile="capped", tau=0.3, offset_scale=0.2)
        loss = (RidgeGradient if oracle == "first_order" else RidgeLoss)(d, 1.0, "capped", 0.3)
        data = population.data.copy()
    seed, noise_seed = int(gen.integers(2**62)), int(gen.integers(2**62)) + 2**62
    keywords = dict(oracle=oracle, blocks=K, block_length=M, tree_size=S, B1=B1, B2=B2, smoothing_radius=alpha,
                    step_bound=0.05, step_size=0.3, directions=m, noise_std=0.2, lipschitz=1.0, dp_delta=1e-6,
                    seed=seed, noise_seed=noise_seed, record_path=True)
    label = f"{oracle}, {kind} losses (K={K}, M={M}, Σ={S}, B1={B1}, B2={B2}, m={m})"
    base = subject.nsnc_improved(loss, data, x0, **keywords)
    a = path(base, K, M, d, fields=("releases", "query_points"), diagnostics=True)
    if not isinstance(a, dict):
        return [f"{label}: {a.detail}"], 0.0
    problems, worst = [], 0.0
    for i in (0, B1, U - 1):  # records of a reset and of an increment (in index order), and the last one read
        neighbour = data.copy()
        if kind == "linear":
            neighbour[i] = -data[i]  # the worst-case pair c, −c of Lemma 3.3
        else:
            neighbour[i] = RidgeSum.random(d, 1, gen, profile="capped", tau=0.3, offset_scale=0.2).data[0]
        b = path(subject.nsnc_improved(loss, neighbour, x0, **keywords), K, M, d,
                 fields=("releases", "query_points"), diagnostics=True)
        if not isinstance(b, dict):
            return [f"{label}: {b.detail}"], 0.0
        g, g2 = a["noiseless_sums"].reshape(T, d), b["noiseless_sums"].reshape(T, d)
        differs = [t for t in range(T) if np.any(g[t] != g2[t])]
        if not differs:
            problems.append(f"{label}: replacing record {i} changed nothing")
            continue
        first = differs[0]
        t = first + 1
        if np.any(a["releases"].reshape(T, d)[:first] != b["releases"].reshape(T, d)[:first]) or \
                np.any(a["query_points"].reshape(T, d)[: first + 1] != b["query_points"].reshape(T, d)[: first + 1]):
            problems.append(f"{label}: the runs differ before step {t}, the first that reads the replaced record")
        reset = (t - 1) % S == 0
        batch = B1 if reset else B2
        z = a["query_points"].reshape(T, d)
        directions = np.asarray(step_directions(seed, t, oracle, batch, m, d, alpha, reset=reset), dtype=np.float64)
        terms = [_slot_term(oracle, loss, (data[i], neighbour[i]), z[first], z[first - 1] if first else None,
                            directions[j], alpha, d, batch, reset) for j in range(batch)]
        observed = g[first] - g2[first]
        scale = float(np.max(np.abs(g[first])) + np.max(np.abs(g2[first])) + max(np.max(np.abs(u)) for u in terms))
        tolerance = rounding_gamma(8 * (batch * m + 4)) * max(scale, 1e-300)
        errors = [float(np.max(np.abs(observed - u))) for u in terms]
        slot = int(np.argmin(errors))
        worst = max(worst, errors[slot] / tolerance)
        if errors[slot] > tolerance:
            problems.append(f"{label}: at step {t} (the first that reads record {i}), g_t − g′_t is not one slot's "
                            f"term (closest: slot {slot}, off by {errors[slot]:.3g} > {tolerance:.3g})")
            continue
        if kind == "linear":  # the whole pattern: the term until the period ends, then 0
            end = ((first // S) + 1) * S
            expected = np.zeros((T, d))
            expected[first:end] = terms[slot]
            # after t* the two runs query different points: a linear loss's two-point terms then differ by the
            # rounding of f(z ± αy), relative d·|z|/α to the term; S steps of the period add up
            drift = 1.0 + d * float(np.max(np.abs(z))) / alpha
            if np.any(np.abs((g - g2) - expected) > tolerance * (1 + S) * drift):
                problems.append(f"{label}: with record {i} replaced, g_t − g′_t is not its slot's term from step {t} "
                                "to the end of the period and 0 elsewhere")
    return problems, worst


def _check_coupling(subject, ctx):
    problems, worst = [], 0.0
    for index, spec in enumerate(COUPLING):
        found, ratio = _coupling_problems(subject, ctx, spec, index)
        problems += found
        worst = max(worst, ratio)
    return deterministic(
        not problems, statistic=worst, bound=1.0, counterexample=problems[:3] or None,
        detail=(f"{len(COUPLING)} pairs of runs × 3 replaced records (private, the same public and secret seeds): "
                f"identical before the step that reads the replaced record, and there g_t − g′_t equals that slot's "
                f"term (largest error / rounding allowance {worst:.3g}); for linear losses the term until the end of "
                f"the period and 0 after" + (f"; violations: {'; '.join(problems[:3])}" if problems else "")))


SLOT_COUPLING = Claim(
    id="nsnc_improved.lemma3_3.slot_coupling",
    paper="nsnc_improved",
    location="Proof of Lemma 3.3 (g_t − g′_t on neighbouring minibatches S_t, S′_t) and of Lemma C.1; Algorithms 3 "
             "and 5 (directions keyed by the step)",
    statement=(
        "Two single-pass runs on neighbouring data sets (one record replaced) with the same public and secret seeds "
        "are identical up to the step t* that reads the replaced record, and there their noiseless sums differ by "
        "exactly that record's term with its slot's directions: (e(z; ξ) − e(z; ξ′))/B1 at a reset, the difference "
        "of the two records' increments e(z_t) − e′(z_(t−1)) over B2 otherwise; for linear losses the difference "
        "stays that term until the period ends and is 0 afterwards."
    ),
    kind="deterministic",
    requires=("nsnc_improved",),
    check=_check_coupling,
    mutants=(
        variant("batch_sorted_by_value"),
        variant("data_keyed_directions"),
    ),
)
