"""bgm21 §3, Theorem 5 (Phased-SGD of Feldman–Koren–Talwar 2020 [FKT20] with Algorithm 3's oracle; the phase schedule
and the sensitivity analysis are rebuilt from [FKT20], bgm21.E1).

* ``bgm21.thm5.smoothing_parameter`` (erratum bgm21.E2): Theorem 5 prints β = √n·L0/R. With [FKT20]'s step
  η = (D/L)·min{4/√n, ε/√(d ln(1/δ))}, L = 2L0R (rebuilt: Theorem 5 gives no step), the smoothed loss is βR²-smooth and
  [FKT20]'s analysis needs η ≤ 2/(βR²) — the condition under which a projected gradient step on a convex smooth loss is
  non-expansive, which the privacy argument uses. On the 4/√n branch ηβR²/2 = D under the printed β: the condition fails
  for every D > 1, and the step map w ↦ w − η𝒪(w, z) run with the subject's oracle expands distances by |1 − 2D|
  inside a quadratic zone of the loss. With β = √n·L0/(R·D) the condition holds with equality (ηβR²/2 = 1), and the
  step moves two points apart by at most 2ηα (the oracle's error) on random pairs.
  (Phased-SGD's phases use η/4^i, so under the printed β its phase steps stay non-expansive while D ≤ 4; the
  reference refuses to run beyond. No neighbouring pair exceeding the traced sensitivity is exhibited here.)
* ``bgm21.thm5.phase_sensitivity``: for neighbouring datasets in the same public order, the average w̄_i of the phase
  holding the differing record moves by at most 2η_i(L0R + (n_i − 1)α), and by at most 2η_iL0R(1 + 1e-9) when the
  oracle is run to α = 1e-12·L0R (exact gradients up to rounding); the phases before are unchanged. A near-worst-case
  pair (x′ = −x at the first position of the phase, every other record in a linear zone of the absolute loss, W = R^d)
  reaches at least half of the bound (in fact all of it, up to the oracle's error). Both runs of a pair share the
  public and the secret seed, so the released phase outputs differ exactly by the difference of the averages.
* ``bgm21.thm5.phase_structure``: from the public trace of the subject's run: n_i = ⌊n/2^i⌋ for i = 1..⌊log₂ n⌋,
  η_i = η/4^i, σ_i = 4Lη_i√ln(1/δ)/ε, disjoint phases, Σ n_i ≤ n records read; and the trace tells the truth: a record
  outside every phase does not change the output, and one in phase i does not change the phases before it.

Tolerances: float64 rounding (``_gll_truth.float_slack``); parameters compared to 1e-12 relative.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from proofs_checks.authoring import Claim, deterministic, erratum_evidence, mutant, on_output, rebind
from reference.algorithms.bgm21_gll import PhasedSGDConfig
from reference.geometry import LpBall
from reference.gll import AbsoluteLoss, HingeLoss

from ._gll_truth import float_slack

RELATIVE = 1e-12


# --- Theorem 5's β: the step condition η ≤ 2/(βR²) (bgm21.E2) -------------------------------------------------------

THM5 = dict(n=1024, d=5, L0=1.0, R_x=1.0, eps=10.0, delta=1e-6)
DIAMETERS = (0.5, 1.0, 2.0, 3.0, 8.0)


def _step_ratio(subject, gen, params, pairs):
    """max over pairs of ‖T(w) − T(w′)‖/‖w − w′‖ and of (‖T(w) − T(w′)‖ − ‖w − w′‖)/(2ηα), T(w) = w − η𝒪(w, z), for
    points inside the quadratic zone |⟨w, x⟩ − y| ≤ L0/β of the absolute loss (first return) and anywhere (second)."""
    d, L0, R, beta, alpha, eta = params.d, params.L0, params.R_x, params.beta_smooth, params.alpha, params.step_size
    loss = AbsoluteLoss(L0)
    expansion, excess = 0.0, -math.inf
    for k in range(pairs):
        x = gen.normal(size=d)
        x *= R / np.linalg.norm(x)
        inside = k % 2 == 0
        w = gen.normal(size=d)
        w_prime = w + (0.5 * L0 / (beta * R)) * (x / R) if inside else gen.normal(size=d) * 3.0
        y = float(x @ w) + (0.25 * L0 / beta if inside else float(gen.normal()))
        outs = [np.asarray(subject.moreau_glm_gradient(p, x[None, :], np.array([y]), loss, beta, alpha, R),
                           dtype=np.float64)[0] for p in (w, w_prime)]
        moved = float(np.linalg.norm((w - eta * outs[0]) - (w_prime - eta * outs[1])))
        dist = float(np.linalg.norm(w - w_prime))
        if inside:
            expansion = max(expansion, moved / dist)
        slack = float(float_slack(np.abs(w).sum() + np.abs(w_prime).sum() + 2 * eta * L0 * R))
        excess = max(excess, (moved - dist - slack) / (2 * eta * alpha))
    return expansion, excess


def _check_smoothing_parameter(subject, ctx):
    p = THM5
    n, L0, R = p["n"], p["L0"], p["R_x"]
    gen = ctx.generator("thm5_beta")
    pairs = ctx.budget.pick(quick=20, full=200)
    lines, printed_fail, corrected_hold, largest = [], [], [], 0.0
    for D in DIAMETERS:
        for variant in ("printed", "corrected"):
            params = subject.theorem5_params(n, p["d"], L0, R, D, p["eps"], p["delta"], beta_variant=variant)
            expected = math.sqrt(n) * L0 / R if variant == "printed" else math.sqrt(n) * L0 / (R * D)
            if abs(params.beta_smooth - expected) > RELATIVE * expected:
                return deterministic(False, statistic=params.beta_smooth, bound=expected, detail=(
                    f"theorem5_params(D = {D}, beta_variant={variant!r}).beta_smooth = {params.beta_smooth!r}; "
                    f"Theorem 5's formula gives {expected!r}"))
            condition = params.step_size * params.beta_smooth * params.R_x**2 / 2.0  # ≤ 1 is η ≤ 2/(βR²)
            expansion, excess = _step_ratio(subject, gen, params, pairs)
            largest = max(largest, condition)
            lines.append(f"D = {D:g}, {variant} β: ηβR²/2 = {condition:.12g}, step expansion {expansion:.6g}, "
                         f"max (‖ΔT‖ − ‖Δw‖)/(2ηα) = {excess:.3g}")
            if variant == "printed" and D > 1.0:
                printed_fail.append(condition > 1.0 + RELATIVE and expansion > 1.0 + 1e-3)
            if variant == "corrected":
                corrected_hold.append(abs(condition - 1.0) <= RELATIVE and excess <= 1.0)
    return erratum_evidence(all(printed_fail), all(corrected_hold), statistic=largest, bound=1.0,
                            detail="; ".join(lines))


def _printed_is_corrected(params, call):
    return call.original(beta_variant="corrected") if call.beta_variant == "printed" else params


def _over_d_squared(params, call):
    if call.beta_variant != "corrected":
        return params
    beta = params.beta_smooth / params.D
    return dataclasses.replace(params, beta_smooth=beta, smoothness=beta * params.R_x**2)


def _step_replaced(factor):
    def transform(params, call):
        return dataclasses.replace(params, step_size=factor * params.step_size)
    return transform


SMOOTHING_PARAMETER = Claim(
    id="bgm21.thm5.smoothing_parameter",
    paper="bgm21",
    location="Theorem 5 (β); the step condition of Feldman–Koren–Talwar 2020 (rebuilt: bgm21.E1); bgm21.E2",
    statement=(
        "With Phased-SGD's step η = (D/L)·min{4/√n, ε/√(d ln(1/δ))}, L = 2L0R, Theorem 5 needs η ≤ 2/(βR²) (a "
        "non-expansive step): β = √n·L0/(R·D) meets it with equality, the printed β = √n·L0/R violates it for every "
        "D > 1, where the step run with Algorithm 3's oracle expands distances."
    ),
    kind="deterministic",
    requires=("theorem5_params", "moreau_glm_gradient"),
    check=_check_smoothing_parameter,
    mutants=(
        on_output("printed_is_corrected", "beta_variant='printed' returns the corrected β", "theorem5_params",
                  _printed_is_corrected),
        on_output("step_ten_percent", "the step η 10 % larger than [FKT20]'s", "theorem5_params", _step_replaced(1.1)),
        on_output("corrected_over_d_squared", "the corrected β divided by D once more (√n·L0/(R·D²))",
                  "theorem5_params", _over_d_squared),
    ),
    erratum=True,
)


# --- Phased-SGD sensitivity (Theorem 5's privacy, rebuilt from [FKT20]) ---------------------------------------------

SEED, NOISE_SEED = 11, 12345


#: ε of the sensitivity runs: both runs of a pair share the noise seed, so their outputs differ by the difference of
#: the averages; ε = 1e8 keeps the noise (σ_1 ≈ 7e-8) from inflating the rounding slack.
SENSITIVITY_EPSILON = 1e8


def _config(alpha, step=1.0, beta=4.0, R=1.0, L0=1.0):
    """βR² = 4, η = 1: η_1 = 1/4 ≤ 2/(βR²); L = 2L0R covers L0R + (n_1 − 1)α."""
    return PhasedSGDConfig(beta_smooth=beta, alpha=alpha, feature_bound=R, lipschitz=2.0 * L0 * R, step_size=step,
                           epsilon=SENSITIVITY_EPSILON, delta=1e-6)


def _run(subject, X, y, loss, W, config):
    return subject.phased_sgd(X, y, loss, W, np.zeros(X.shape[1]), config, seed=SEED, noise_seed=NOISE_SEED)


def _compare(run_s, run_t, phase, config, L0, R, label):
    """(distance of phase ``phase``'s outputs, its bound, failure evidence or None)."""
    out_s, out_t = np.asarray(run_s.trace.phase_outputs), np.asarray(run_t.trace.phase_outputs)
    if not np.array_equal(out_s[:phase - 1], out_t[:phase - 1]):
        return None, None, deterministic(False, detail=(
            f"{label}: the differing record is in phase {phase}, yet an earlier phase's output changed"))
    n_i = len(run_s.trace.batch_indices[phase - 1])
    eta_i = config.step_size / 4.0**phase
    bound = 2.0 * eta_i * (L0 * R + (n_i - 1) * config.alpha)
    dist = float(np.linalg.norm(out_s[phase - 1] - out_t[phase - 1]))
    slack = float(float_slack(n_i * (np.abs(out_s[phase - 1]).sum() + np.abs(out_t[phase - 1]).sum()
                                     + eta_i * L0 * R)))
    if not dist <= bound + slack:
        return dist, bound, deterministic(False, statistic=dist, bound=bound, detail=(
            f"{label}: ‖w̄_{phase}(S) − w̄_{phase}(S′)‖ = {dist!r} > 2η_i(L0R + (n_i − 1)α) = {bound!r} "
            f"(η_i = {eta_i!r}, n_i = {n_i}, α = {config.alpha!r})"))
    return dist, bound, None


def _check_phase_sensitivity(subject, ctx):
    n, d, L0, R = ctx.budget.pick(quick=64, full=128), 3, 1.0, 1.0
    gen = ctx.generator("phase_sensitivity")
    loss = AbsoluteLoss(L0)
    lines = []

    # near-worst case: every record deep in a linear zone (y = 1000), x′ = −x first in the phase, W = R^d
    X = gen.normal(size=(n, d))
    X *= R / np.linalg.norm(X, axis=1, keepdims=True)
    y = np.full(n, 1000.0)
    for alpha_label, alpha in (("α = 1e-4·L0R", 1e-4 * L0 * R), ("α = 1e-12·L0R", 1e-12 * L0 * R)):
        config = _config(alpha)
        base = _run(subject, X, y, loss, None, config)
        ratios = []
        for phase in range(1, len(base.trace.batch_indices) + 1):
            first = int(base.trace.batch_indices[phase - 1][0])
            X2 = X.copy()
            X2[first] = -X[first]
            other = _run(subject, X2, y, loss, None, config)
            dist, bound, failed = _compare(base, other, phase, config, L0, R, f"worst case, {alpha_label}")
            if failed:
                return failed
            ratios.append(dist / bound)
        if min(ratios) < 0.5:
            return deterministic(False, statistic=min(ratios), bound=0.5, detail=(
                f"worst case, {alpha_label}: a phase reaches only {min(ratios):.4g} of its bound (the pair x′ = −x in "
                "a linear zone moves the average by 2η_iL0R)"))
        lines.append(f"worst case, {alpha_label}: distance/bound over the phases {min(ratios):.9g}–{max(ratios):.9g}")

    # random pairs: random records, labels and replacement, W an ℓ_2 ball of radius 1 (projections active)
    ball = LpBall(2, 1.0, np.zeros(d))  # the feasible set is a test problem here, not the subject
    worst = 0.0
    for k in range(ctx.budget.pick(quick=4, full=20)):
        hinge = k % 2 == 1
        loss_k = HingeLoss(L0) if hinge else AbsoluteLoss(L0)
        Xr = gen.normal(size=(n, d))
        Xr *= (R * gen.uniform(0.2, 1.0, (n, 1))) / np.linalg.norm(Xr, axis=1, keepdims=True)
        yr = gen.choice([-1.0, 1.0], size=n) if hinge else gen.normal(size=n)
        alpha = (1e-4, 1e-12)[k % 2] * L0 * R
        config = _config(alpha)
        base = _run(subject, Xr, yr, loss_k, ball, config)
        phase = int(gen.integers(1, len(base.trace.batch_indices) + 1))
        batch = base.trace.batch_indices[phase - 1]
        idx = int(batch[int(gen.integers(len(batch)))])
        X2 = Xr.copy()
        X2[idx] = -Xr[idx] if gen.random() < 0.5 else gen.normal(size=d) * 0.3
        X2[idx] *= min(1.0, R / np.linalg.norm(X2[idx]))
        y2 = yr.copy()
        if not hinge:
            y2[idx] = gen.normal() * 3.0
        other = _run(subject, X2, y2, loss_k, ball, config)
        dist, bound, failed = _compare(base, other, phase, config, L0, R, f"random pair {k} ({loss_k!r})")
        if failed:
            return failed
        worst = max(worst, dist / bound)
    lines.append(f"random pairs: largest distance/bound {worst:.4g}")
    return deterministic(True, statistic=worst, bound=1.0, detail="; ".join(lines))


def _reseeding(original):
    """Each call draws its public order from a different seed (neighbouring runs no longer share the order)."""
    calls = [0]

    @functools.wraps(original)
    def run(*args, seed, **kwargs):
        calls[0] += 1
        return original(*args, seed=seed + calls[0], **kwargs)

    return run


PHASE_SENSITIVITY = Claim(
    id="bgm21.thm5.phase_sensitivity",
    paper="bgm21",
    location="Theorem 5 (privacy of Phased-SGD with Algorithm 3's oracle; rebuilt from Feldman–Koren–Talwar 2020: "
             "bgm21.E1)",
    statement=(
        "For neighbouring datasets in the same public order, η_i ≤ 2/(βR²), the average of the phase i holding the "
        "differing record moves by at most 2η_i(L0R + (n_i − 1)α) (2η_iL0R with exact gradients) and earlier phases do "
        "not move; the pair x′ = −x in a linear zone of the loss reaches the bound."
    ),
    kind="privacy",
    requires=("phased_sgd",),
    check=_check_phase_sensitivity,
    mutants=(
        rebind("step_ten_percent", "every phase step 10 % larger than η/4^i (a near miss)", "phased_sgd",
               config=lambda c: dataclasses.replace(c, step_size=1.1 * c.step_size)),
        rebind("lipschitz_misread", "the oracle run on the loss with 1.5·L0 (a Lipschitz constant confused)",
               "phased_sgd", loss=lambda l: type(l)(1.5 * l.lipschitz)),
        mutant("order_not_shared", "each run draws its public order from another seed", "phased_sgd", _reseeding),
    ),
)


# --- Phased-SGD structure, from the public trace -------------------------------------------------------------------

def _check_phase_structure(subject, ctx):
    d, L0, R, eps, delta, eta = 3, 1.0, 1.0, 1.0, 1e-6, 1.0
    gen = ctx.generator("phase_structure")
    lines = []
    for n in ctx.budget.pick(quick=(100, 128), full=(1000, 1024)):
        X = gen.normal(size=(n, d))
        X *= R / np.linalg.norm(X, axis=1, keepdims=True)
        y = gen.normal(size=n)
        loss = AbsoluteLoss(L0)
        config = PhasedSGDConfig(beta_smooth=4.0, alpha=L0 * R / (n * math.log(n)), feature_bound=R,
                                 lipschitz=2.0 * L0 * R, step_size=eta, epsilon=eps, delta=delta)
        run = subject.phased_sgd(X, y, loss, None, np.zeros(d), config, seed=SEED, noise_seed=NOISE_SEED)
        tr = run.trace
        k = n.bit_length() - 1
        sizes = [n // 2**i for i in range(1, k + 1)]
        label = f"n = {n}"
        if list(tr.phase_sizes) != sizes:
            return deterministic(False, detail=f"{label}: phase sizes {list(tr.phase_sizes)} != ⌊n/2^i⌋ = {sizes}")
        batches = [np.asarray(b, dtype=np.int64) for b in tr.batch_indices]
        if [len(b) for b in batches] != sizes:
            return deterministic(False, detail=f"{label}: the phases read {[len(b) for b in batches]} records, "
                                               f"not n_i = {sizes}")
        every = np.concatenate(batches)
        if len(np.unique(every)) != len(every) or every.min() < 0 or every.max() >= n:
            return deterministic(False, detail=f"{label}: the phases' records are not disjoint indices of 0..n−1")
        if not (tr.records_used == sum(sizes) <= n):
            return deterministic(False, detail=f"{label}: records_used = {tr.records_used}, Σn_i = {sum(sizes)}")
        steps = [eta / 4.0**i for i in range(1, k + 1)]
        sigmas = [4.0 * config.lipschitz * s * math.sqrt(math.log(1.0 / delta)) / eps for s in steps]
        for name, got, want in (("η_i", tr.phase_step_sizes, steps), ("σ_i", tr.noise_stds, sigmas)):
            got = np.asarray(got, dtype=np.float64)
            if got.shape != (k,) or not np.all(np.abs(got - want) <= RELATIVE * np.abs(want)):
                return deterministic(False, detail=f"{label}: {name} = {got.tolist()}, expected {want}")
        # the trace tells the truth: an unread record changes nothing, a record of phase i nothing before phase i
        unused = np.setdiff1d(np.arange(n), every)
        if unused.size:
            X2 = X.copy()
            X2[unused[0]] = 0.0
            again = subject.phased_sgd(X2, y, loss, None, np.zeros(d), config, seed=SEED, noise_seed=NOISE_SEED)
            if not np.array_equal(np.asarray(again.output), np.asarray(run.output)):
                return deterministic(False, detail=f"{label}: record {unused[0]}, read by no phase per the trace, "
                                                   "changed the output")
        phase = min(3, k)
        X3 = X.copy()
        X3[batches[phase - 1][-1]] = 0.0  # (x → −x may leave an absolute-loss gradient unchanged)
        again = subject.phased_sgd(X3, y, loss, None, np.zeros(d), config, seed=SEED, noise_seed=NOISE_SEED)
        before = np.asarray(run.trace.phase_outputs)[:phase - 1]
        if not np.array_equal(np.asarray(again.trace.phase_outputs)[:phase - 1], before):
            return deterministic(False, detail=f"{label}: a record of phase {phase} changed an earlier phase's output")
        if np.array_equal(np.asarray(again.trace.phase_outputs)[phase - 1],
                          np.asarray(run.trace.phase_outputs)[phase - 1]):
            return deterministic(False, detail=f"{label}: a record of phase {phase} did not change that phase's output")
        lines.append(f"n = {n}: {k} phases, Σn_i = {sum(sizes)}, σ_1 = {sigmas[0]:.6g}")
    return deterministic(True, detail="; ".join(lines))


def _overlapping_batches(result, call):
    trace = result.trace
    batches = list(trace.batch_indices)
    batches[1] = np.asarray(batches[0])[: len(batches[1])]
    return dataclasses.replace(result, trace=dataclasses.replace(trace, batch_indices=tuple(batches)))


PHASE_STRUCTURE = Claim(
    id="bgm21.thm5.phase_structure",
    paper="bgm21",
    location="Theorem 5 (Phased-SGD's phases, rebuilt from Feldman–Koren–Talwar 2020: bgm21.E1)",
    statement=(
        "Phased-SGD runs k = ⌊log₂ n⌋ phases on disjoint blocks of n_i = ⌊n/2^i⌋ records (Σn_i ≤ n: one pass), with "
        "step η_i = η/4^i and Gaussian noise σ_i = 4Lη_i√ln(1/δ)/ε, as its public trace states and its outputs "
        "confirm."
    ),
    kind="deterministic",
    requires=("phased_sgd",),
    check=_check_phase_structure,
    mutants=(
        rebind("sigma_ten_percent_low", "σ_i calibrated to 0.9·L (a near miss)", "phased_sgd",
               config=lambda c: dataclasses.replace(c, lipschitz=0.9 * c.lipschitz)),
        rebind("last_record_dropped", "the run reads the data without its last record", "phased_sgd",
               X=lambda X: np.asarray(X)[:-1], y=lambda y: np.asarray(y)[:-1]),
        on_output("phase_two_rereads_phase_one", "phase 2 reports (reads) the records of phase 1", "phased_sgd",
                  _overlapping_batches),
    ),
)
