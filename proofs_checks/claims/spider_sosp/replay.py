"""spider_sosp Algorithm 2 (lines 3-4, 9-10, 15) and Lemma 3.7's premise: every decision of a run — O1 or O2, the batch
size, the drift, the tree leaf, the perturbation steps, the records used and the halt — is a function of the public
inputs and of the released g̃ alone, so it is post-processing of the release and costs no privacy (the accounting
counts only the Gaussian node releases).

The check runs the subject's ``stochastic_spider`` and recomputes the schedule with the subject's ``replay_schedule``
from the release, the config and n only — without the data and without the secret seed — and requires the two to
agree exactly (the drift as floats to 1e-12 relative: the same sums in possibly another order); a replay that refuses
the release (no run with this config could produce it) is a failure too. Runs that halt for data and at the horizon,
with one tree and a tree per segment, are covered.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from proofs_checks.authoring import Claim, deterministic, rebind

from ._problems import COS2, COS3, run, settings

#: (family, records, ε, tree scope, horizon)
RUNS = (
    (COS2, 2000, 4.0, "segment", None),
    (COS3, 600, 2.0, "global", 40),
    (COS2, 1500, 1.0, "global", None),
)


def _differences(replay, trace) -> list[str]:
    out = []
    for name in ("kinds", "perturbation_steps"):
        if tuple(getattr(replay, name)) != tuple(getattr(trace, name)):
            out.append(name)
    for name in ("batch_sizes", "leaves"):
        if not np.array_equal(np.asarray(getattr(replay, name)), np.asarray(getattr(trace, name))):
            out.append(name)
    a, b = np.asarray(replay.drift, dtype=np.float64), np.asarray(trace.drift, dtype=np.float64)
    if a.shape != b.shape or not np.all(np.abs(a - b) <= 1e-12 * np.maximum(1.0, np.abs(b))):
        out.append("drift")
    for name in ("records_used", "halt_reason", "next_batch_size"):
        if getattr(replay, name) != getattr(trace, name):
            out.append(f"{name} ({getattr(replay, name)!r} vs {getattr(trace, name)!r})")
    return out


def _check_replay(subject, ctx):
    gen = ctx.generator("runs")
    count = ctx.budget.pick(quick=1, full=8)
    steps, halts = 0, set()
    for family, n, eps, scope, horizon in RUNS:
        x0 = np.zeros(family.d)
        s, _ = settings(family, x0, n, eps, tree_scope=scope)
        config = dataclasses.replace(s.config(), steps=horizon)
        for _ in range(count):
            result = run(subject, family, family.sample(gen, n), x0, config, gen)
            trace = result.trace
            try:
                replay = subject.replay_schedule(np.asarray(trace.released, dtype=np.float64), config, n)
            except ValueError as exc:  # the replay refuses a release no run with this config can produce
                return deterministic(False, detail=f"d = {family.d}, n = {n}, {scope} tree: the release is not one "
                                                   f"a run with this config produces: {exc}")
            different = _differences(replay, trace)
            if different:
                return deterministic(False, detail=f"d = {family.d}, n = {n}, {scope} tree: the schedule recomputed "
                                                   f"from the release differs from the run's in {', '.join(different)}")
            steps += len(trace.kinds)
            halts.add(trace.halt_reason)
    return deterministic(True, statistic=steps,
                         detail=f"{len(RUNS) * count} runs ({steps} steps; halted by {', '.join(sorted(halts))}): "
                                "kinds, batch sizes, drift, leaves, perturbation steps, records used and the halt "
                                "recomputed from the release and the config alone")


PUBLIC_CONTROL_FLOW = Claim(
    id="spider_sosp.alg2.public_control_flow",
    paper="spider_sosp",
    location="Algorithm 2, lines 3-4, 9-10 and 15; Lemma 3.7 (the privacy of the released stream)",
    statement=(
        "Every decision of Algorithm 2 — the O1/O2 choice from the drift Σ‖g̃‖, the batch sizes b and b_t(‖g̃_(t−1)‖), "
        "the tree leaves, the perturbation steps (frozen and ‖g̃_(t−1)‖), the records used and the halt — is "
        "recomputed exactly from the release g̃, the config and n, without the data or the secret seed."
    ),
    kind="privacy",
    requires=("stochastic_spider", "replay_schedule"),
    check=_check_replay,
    mutants=(
        rebind("replay_without_perturbations", "the replay ignores line 9 (no perturbation steps, frozen never set)",
               "replay_schedule", config=lambda c: dataclasses.replace(c, perturb=False)),
        rebind("run_ignores_horizon", "the run ignores its horizon T (runs until the data run out)",
               "stochastic_spider", config=lambda c: dataclasses.replace(c, steps=None)),
        rebind("replay_one_tree", "the replay assumes one tree for the run whatever the config", "replay_schedule",
               config=lambda c: dataclasses.replace(c, tree_scope="global")),
    ),
)
