"""nsnc_improved eq. (11) and Lemma 3.3 (Lemma C.1 for Algorithm 5): the m-direction estimate of one record
concentrates around ∇f_α, so the sensitivity of a step is, with high probability, far below its worst case — the
paper's key idea, with the explicit radius the privacy plan uses.

* Eq. (11), explicit (Pinelis 1994, Hilbert-space Hoeffding, dimension-free, in place of Theorem E.2's unspecified
  constant): for m i.i.d. zero-mean vectors of norm ≤ b, P[‖their mean‖ ≥ b·√(2 log(2/γ)/m)] ≤ γ. The two-point
  summand (d/2α)(f(z + αy) − f(z − αy))y has norm ≤ Ld and mean ∇f_α(z; ξ) of norm ≤ L, so b = L(d + 1) and
  r = L(d + 1)·√(2 log(2/γ)/m); the first-order summand ∇f(z + y; ξ) − ∇f_α(z; ξ) has b = 2L; the common-random-numbers
  difference e(z) − e(z′) has b = (d + κ_d)L‖z − z′‖/α.
* Lemma 3.3, explicit (replace-one neighbours, directions coupled by slot, so only the differing slot matters): at a
  reset ‖g − g′‖ ≤ (2L + 2r)/B1 except with probability 2γ (two records' deviations), at an increment
  ‖Δg − Δg′‖ ≤ (2H‖z_t − z_(t−1)‖ + 4r)/B2 except with probability 4γ (four estimates; H = Lκ_d/α the smoothness of
  f_α), while the deterministic worst cases 2Ld/B1 and 4Ld/B2 always hold; for Algorithm 5 (Lemma C.1) the reset is
  ≤ 2L/B1 always and the increment ≤ (2H‖Δz‖ + 4r_FO)/B2 except with probability 4γ (worst case 4L/B2).

The radius is the subject's ``concentration_radius`` (what its privacy plan uses); the estimates are the subject's
``two_point_estimate`` (eq. (4)) and ``first_order_estimate`` (Algorithm 5) — inside a run, g_t − g′_t on neighbouring
data sets is exactly this estimator-level difference of the replaced slot (claim nsnc_improved.lemma3_3.slot_coupling)
— on the worst-case problems of the bounds: the linear pair c = ±L·e_1 (every two-point summand spread as far as a
linear loss allows), the convex and concave ridges ±L|<a, x> − b| straddling the kink at <a, z_t> − b = +D,
<a, z_(t−1)> − b = −D (the smoothness term attained as D/α → 0), and the ridge at its kink (first order: ±L·a with
probability 1/2 each).

Statistics. Each statement is a probability bound P[exceed] ≤ γ (2γ, 4γ); the check shows it with confidence: the
Clopper–Pearson upper bound on the exceedance frequency, at the claim's level (Bonferroni over the sub-checks), must
lie below the bound. (These radii are loose by a factor of about √d on these problems, so a correct subject never
comes near, and neither does a radius 30 % too small; a radius that drops the factor d + 1 is exceeded most of the
time: 565 of 600 two-point estimates at d = 16, m = 16.) The radius itself is therefore also checked against the
Pinelis formula (deterministic, to float64 rounding of the mpmath value): that is what rejects a radius 30 % too small.
The worst cases are exact inequalities (rounding of a mean of m terms).
"""

from __future__ import annotations

import math

import numpy as np

from proofs_checks.authoring import Claim, clopper_pearson, deterministic, on_output, substitute
from reference.objectives import RidgeSum
from reference.rng import sample_ball, sample_sphere
from reference.smoothing import smoothness_constant

from ._mc import replicate_estimates
from ._variants import LinearLoss, RidgeGradient, RidgeLoss

#: The failure probabilities the checks use.
GAMMAS = (0.05, 0.2)
#: Relative tolerance between the subject's radius (an mpf rounded to float64) and the formula in float64.
RADIUS_ROUNDING = 1e-12
#: Relative slack of the exact worst-case inequalities (a mean of m terms of norm ≤ Ld, then a difference).
WORST_CASE_ROUNDING = 1e-12


class SignedRidge:
    """f(x; z) = s·L·|<a, x> − b| for rows z = (a, b, s) with ‖a‖ = 1 and s = ±1: the convex ridge and its concave
    partner, the worst-case neighbours of an increment step. Broadcasts stacked points against rows."""

    def __init__(self, d: int, lipschitz: float):
        self.d, self.lipschitz = int(d), float(lipschitz)

    def __call__(self, x, z):
        x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
        if x.ndim == 1 and z.ndim == 1:
            return float(z[self.d + 1]) * self.lipschitz * abs(float(np.sum(x * z[: self.d])) - float(z[self.d]))
        return z[..., self.d + 1] * self.lipschitz * np.abs(np.sum(x * z[..., : self.d], axis=-1) - z[..., self.d])


class SignedRidgeGradient(SignedRidge):
    """∇f(x; z) = s·L·sign(<a, x> − b)·a."""

    def __call__(self, x, z):
        x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
        r = np.sum(x * z[..., : self.d], axis=-1) - z[..., self.d]
        return (z[..., self.d + 1] * self.lipschitz * np.sign(r))[..., None] * z[..., : self.d] \
            + np.zeros(np.broadcast_shapes(x.shape, z[..., : self.d].shape))


def _radius(subject, kind, **keywords) -> float:
    return float(subject.concentration_radius(kind, **keywords))


def _pinelis(bound, m, gamma) -> float:
    return bound * math.sqrt(2.0 * math.log(2.0 / gamma) / m)


def _radius_problems(subject):
    """The subject's radius against b·√(2 log(2/γ)/m) with the b of each kind, on a grid."""
    problems, count = [], 0
    for d in (1, 3, 16):
        for lipschitz, alpha in ((1.0, 0.5), (2.5, 0.01)):
            for m in (1, 7, 64):
                for gamma in GAMMAS + (1e-9,):
                    cases = {"zo": (lipschitz * (d + 1), {}), "fo": (2.0 * lipschitz, {})}
                    step = 0.3 * alpha
                    cases["crn"] = ((d + smoothness_constant(d)) * lipschitz * step / alpha, {"step_norm": step})
                    for kind, (b, extra) in cases.items():
                        count += 1
                        got = _radius(subject, kind, d=d, lipschitz=lipschitz, smoothing_radius=alpha, m=m,
                                      gamma=gamma, **extra)
                        want = _pinelis(b, m, gamma)
                        if not abs(got - want) <= RADIUS_ROUNDING * want:
                            problems.append(f"concentration_radius({kind!r}, d={d}, L={lipschitz}, α={alpha}, m={m}, "
                                            f"γ={gamma:g}) = {got!r}, the Pinelis radius is {want!r}")
    return problems, count


def _radius_evidence(subject):
    problems, count = _radius_problems(subject)
    return deterministic(not problems, counterexample=problems[:3] or None,
                         detail=f"the radius on {count} cases is b·√(2 log(2/γ)/m) with b = L(d + 1) (two-point), 2L "
                                f"(first order), (d + κ_d)L‖z − z′‖/α (common random numbers)"
                                + (f"; violations: {'; '.join(problems[:3])}" if problems else ""))


def _frequency_part(values, threshold, probability, level, label):
    """Exceedance frequency of ``values`` > ``threshold``: pass iff its Clopper–Pearson upper bound at ``level`` lies
    below ``probability`` (a NaN counts as an exceedance)."""
    values = np.asarray(values, dtype=np.float64)
    exceed = int(np.sum(~(values <= threshold)))
    upper = clopper_pearson(exceed, values.size, level)[1]
    ok = upper < probability
    return ok, upper, (f"{label}: {exceed}/{values.size} above {threshold:.4g} (upper confidence bound {upper:.3g} "
                       f"{'<' if ok else '≥'} {probability:g})")


def _combine_frequencies(results, prefix):
    ok = all(r[0] for r in results)
    worst = max(results, key=lambda r: r[1])
    failed = [r[2] for r in results if not r[0]]
    return deterministic(ok, statistic=worst[1], counterexample=failed[:3] or None,
                         detail=f"{prefix}: " + "; ".join(r[2] for r in results))


# --- eq. (11): the Pinelis radius bounds the deviation of one record's estimate ------------------------------------

R8 = {"d": 16, "m": 16, "L": 1.5, "alpha": 0.5}


def _check_r8(subject, ctx):
    radius = _radius_evidence(subject)
    if radius.verdict != "pass":
        return radius
    c = R8
    d, m, L, alpha = c["d"], c["m"], c["L"], c["alpha"]
    n = ctx.budget.pick(quick=600, full=6000)
    level = ctx.level / (3 * len(GAMMAS))
    results = []
    e1 = np.eye(d)[0]

    # two-point (eq. (4)), linear c = L·e_1: ∇f_α = c
    row = (L * e1)[None, :]
    y = sample_sphere(ctx.generator("eq11", "zo"), (n, 1, m), d)
    x = np.full(d, 0.1)
    estimates = replicate_estimates(lambda v: subject.two_point_estimate(LinearLoss(d), x, row, v, alpha), y)
    deviation = np.linalg.norm(estimates - L * e1, axis=1)
    for gamma in GAMMAS:
        r = _radius(subject, "zo", d=d, lipschitz=L, smoothing_radius=alpha, m=m, gamma=gamma)
        results.append(_frequency_part(deviation, r, gamma, level, f"two-point, linear c = L·e_1, γ = {gamma}"))

    # first order (Algorithm 5), the ridge L|<a, x> − b| at its kink: ∇f(z + y) = ±L·a, ∇f_α(z) = 0
    ridge = RidgeSum(e1[None, :], [0.0], lipschitz=L, profile="abs")
    y = sample_ball(ctx.generator("eq11", "fo"), (n, 1, m), d, alpha)
    z = np.zeros(d)
    target = ridge.smoothed_gradient(z, ridge.data[0], alpha)
    estimates = replicate_estimates(
        lambda v: subject.first_order_estimate(RidgeGradient(d, L, "abs"), z, ridge.data, v), y)
    deviation = np.linalg.norm(estimates - target, axis=1)
    for gamma in GAMMAS:
        r = _radius(subject, "fo", d=d, lipschitz=L, smoothing_radius=alpha, m=m, gamma=gamma)
        results.append(_frequency_part(deviation, r, gamma, level, f"first order, ridge at its kink, γ = {gamma}"))

    # common random numbers: e(z) − e(z′) with the same directions, z and z′ on either side of the kink
    step = 0.2 * alpha
    z_now, z_before = 0.5 * step * e1, -0.5 * step * e1
    y = sample_sphere(ctx.generator("eq11", "crn"), (n, 1, m), d)
    loss = RidgeLoss(d, L, "abs")
    now = replicate_estimates(lambda v: subject.two_point_estimate(loss, z_now, ridge.data, v, alpha), y)
    before = replicate_estimates(lambda v: subject.two_point_estimate(loss, z_before, ridge.data, v, alpha), y)
    target = ridge.smoothed_gradient(z_now, ridge.data[0], alpha) - ridge.smoothed_gradient(z_before, ridge.data[0],
                                                                                             alpha)
    deviation = np.linalg.norm(now - before - target, axis=1)
    for gamma in GAMMAS:
        r = _radius(subject, "crn", d=d, lipschitz=L, smoothing_radius=alpha, m=m, gamma=gamma, step_norm=step)
        results.append(_frequency_part(deviation, r, gamma, level,
                                       f"common random numbers, ‖z − z′‖ = {step:g} across the kink, γ = {gamma}"))
    frequencies = _combine_frequencies(results, f"d={d}, m={m}, L={L}, α={alpha}, N={n} per estimator")
    if frequencies.verdict != "pass":
        return frequencies
    return deterministic(True, statistic=frequencies.statistic,
                         detail=f"{radius.detail}; P[‖estimate − mean‖ > r] < γ: {frequencies.detail}")


def _d_free(call):
    """The two-point radius without the factor d + 1 (b = L, as if the summands had the gradient's norm)."""
    if call.kind != "zo":
        return call.original()
    return call.lipschitz * math.sqrt(2.0 * math.log(2.0 / call.gamma) / call.m)


RADIUS_MUTANTS = (
    on_output("radius_30pct_small", "the concentration radius 30 % too small", "concentration_radius",
              lambda r, call: 0.7 * float(r)),
    substitute("d_free_radius", "the two-point radius L·√(2 log(2/γ)/m), without the factor d + 1 of the summands' "
               "norm bound", "concentration_radius", _d_free),
)


PINELIS_CONCENTRATION = Claim(
    id="nsnc_improved.eq11.pinelis_concentration",
    paper="nsnc_improved",
    location="Eq. (11) in the proof of Lemma 3.3 (Theorem E.2); proof of Lemma C.1",
    statement=(
        "One record's m-direction estimate deviates from its mean by more than r = b·√(2 log(2/γ)/m) with probability "
        "at most γ, with b = L(d + 1) for the two-point estimate of eq. (4) (deviation from ∇f_α(z; ξ)), b = 2L for "
        "Algorithm 5's first-order estimate, and b = (d + κ_d)L‖z − z′‖/α for the common-random-numbers difference "
        "e(z) − e(z′) (deviation from ∇f_α(z) − ∇f_α(z′)); checked for γ ∈ {0.05, 0.2} on the worst-case problems."
    ),
    kind="monte_carlo",
    requires=("concentration_radius", "two_point_estimate", "first_order_estimate"),
    check=_check_r8,
    mutants=RADIUS_MUTANTS,
)


# --- Lemma 3.3 / Lemma C.1: the high-probability sensitivities on worst-case neighbours -----------------------------

R7 = {"d": 8, "L": 1.0, "alpha": 0.5, "D": 0.025, "B1": 2, "B2": 2}


def _neighbours(first, first_neighbour, others):
    """A batch whose first slot is ``first`` and its neighbour, the batch with the first slot replaced (the other
    records shared)."""
    return np.vstack([first, others]), np.vstack([first_neighbour, others])


def _ridge_rows(gen, d, count):
    """``count`` signed ridges (a, b, s) with random unit a, offsets b near 0 and signs s = ±1."""
    return np.column_stack([sample_sphere(gen, count, d), gen.uniform(-0.3, 0.3, count),
                            gen.choice([-1.0, 1.0], count)])


def _check_r7(subject, ctx):
    radius = _radius_evidence(subject)
    if radius.verdict != "pass":
        return radius
    c = R7
    d, L, alpha, D, B1, B2 = c["d"], c["L"], c["alpha"], c["D"], c["B1"], c["B2"]
    H = L * smoothness_constant(d) / alpha
    n = ctx.budget.pick(quick=500, full=5000)
    level = ctx.level / (4 * len(GAMMAS))
    e1 = np.eye(d)[0]
    results, worst_cases = [], []

    def worst(label, values, bound):
        largest = float(np.max(values)) if values.size else 0.0
        worst_cases.append((not largest <= bound * (1 + WORST_CASE_ROUNDING), label, largest, bound))

    # Algorithm 3, reset: the linear pair c = L·e_1, c′ = −L·e_1 (other records shared); m = 1 and m = d
    gen = ctx.generator("lemma3_3", "reset")
    S, S2 = _neighbours(L * e1, -L * e1, 0.5 * L * sample_sphere(gen, B1 - 1, d))
    x = np.full(d, 0.2)
    for m in (1, d):
        y = sample_sphere(gen, (n, B1, m), d)
        g = replicate_estimates(lambda v: subject.two_point_estimate(LinearLoss(d), x, S, v, alpha), y)
        g2 = replicate_estimates(lambda v: subject.two_point_estimate(LinearLoss(d), x, S2, v, alpha), y)
        sensitivity = np.linalg.norm(g - g2, axis=1)
        worst(f"reset, m={m}: ‖g − g′‖ ≤ 2Ld/B1", sensitivity, 2 * L * d / B1)
        for gamma in GAMMAS:
            r = _radius(subject, "zo", d=d, lipschitz=L, smoothing_radius=alpha, m=m, gamma=gamma)
            results.append(_frequency_part(sensitivity, (2 * L + 2 * r) / B1, 2 * gamma, level,
                                           f"Alg 3 reset, m={m}, γ={gamma}: ‖g − g′‖ > (2L + 2r)/B1"))

    # Algorithm 3, increment: the convex and concave ridges ±L|<a, x> − b| with <a, z_t> − b = +D, <a, z_(t−1)> − b = −D
    gen = ctx.generator("lemma3_3", "increment")
    S, S2 = _neighbours(np.r_[e1, 0.0, 1.0], np.r_[e1, 0.0, -1.0], _ridge_rows(gen, d, B2 - 1))
    z_now, z_before = D * e1, -D * e1
    m = d
    loss = SignedRidge(d, L)
    y = sample_sphere(gen, (n, B2, 2, m), d)

    def increment(batch, v):
        return (np.asarray(subject.two_point_estimate(loss, z_now, batch, v[..., 0, :, :], alpha), dtype=np.float64)
                - np.asarray(subject.two_point_estimate(loss, z_before, batch, v[..., 1, :, :], alpha),
                             dtype=np.float64))

    g = replicate_estimates(lambda v: increment(S, v), y)
    g2 = replicate_estimates(lambda v: increment(S2, v), y)
    sensitivity = np.linalg.norm(g - g2, axis=1)
    worst(f"increment, m={m}: ‖Δg − Δg′‖ ≤ 4Ld/B2", sensitivity, 4 * L * d / B2)
    for gamma in GAMMAS:
        r = _radius(subject, "zo", d=d, lipschitz=L, smoothing_radius=alpha, m=m, gamma=gamma)
        results.append(_frequency_part(sensitivity, (2 * H * 2 * D + 4 * r) / B2, 4 * gamma, level,
                                       f"Alg 3 increment, m={m}, γ={gamma}: ‖Δg − Δg′‖ > (2H‖Δz‖ + 4r)/B2"))

    # Algorithm 5 (Lemma C.1): reset ≤ 2L/B1 always; increment ≤ (2H‖Δz‖ + 4r_FO)/B2 except with probability 4γ
    gen = ctx.generator("lemma3_3", "first_order")
    gradient = SignedRidgeGradient(d, L)
    R, R2 = _neighbours(np.r_[e1, 0.0, 1.0], np.r_[e1, 0.0, -1.0], _ridge_rows(gen, d, B1 - 1))
    y = sample_ball(gen, (n, B1, 1), d, alpha)  # one perturbation per record at a single-pass reset
    g = replicate_estimates(lambda v: subject.first_order_estimate(gradient, z_now, R, v), y)
    g2 = replicate_estimates(lambda v: subject.first_order_estimate(gradient, z_now, R2, v), y)
    worst("Alg 5 reset: ‖g − g′‖ ≤ 2L/B1", np.linalg.norm(g - g2, axis=1), 2 * L / B1)
    y = sample_ball(gen, (n, B2, 2, m), d, alpha)

    def first_order_increment(batch, v):
        return (np.asarray(subject.first_order_estimate(gradient, z_now, batch, v[..., 0, :, :]), dtype=np.float64)
                - np.asarray(subject.first_order_estimate(gradient, z_before, batch, v[..., 1, :, :]),
                             dtype=np.float64))

    g = replicate_estimates(lambda v: first_order_increment(S, v), y)
    g2 = replicate_estimates(lambda v: first_order_increment(S2, v), y)
    sensitivity = np.linalg.norm(g - g2, axis=1)
    worst(f"Alg 5 increment, m={m}: ‖Δg − Δg′‖ ≤ 4L/B2", sensitivity, 4 * L / B2)
    for gamma in GAMMAS:
        r = _radius(subject, "fo", d=d, lipschitz=L, smoothing_radius=alpha, m=m, gamma=gamma)
        results.append(_frequency_part(sensitivity, (2 * H * 2 * D + 4 * r) / B2, 4 * gamma, level,
                                       f"Alg 5 increment, m={m}, γ={gamma}: ‖Δg − Δg′‖ > (2H‖Δz‖ + 4r_FO)/B2"))

    broken = [f"{label}: {largest:.6g} > {bound:.6g}" for bad, label, largest, bound in worst_cases if bad]
    if broken:
        return deterministic(False, counterexample=broken, detail="a deterministic worst case is exceeded: "
                                                                   + "; ".join(broken))
    frequencies = _combine_frequencies(results, f"d={d}, L={L}, α={alpha}, D={D}, B1={B1}, B2={B2}, N={n} per part")
    if frequencies.verdict != "pass":
        return frequencies
    largest = "; ".join(f"{label}: largest {value:.4g} (bound {bound:.4g})" for _, label, value, bound in worst_cases)
    return deterministic(True, statistic=frequencies.statistic,
                         detail=f"{radius.detail}; {frequencies.detail}; worst cases: {largest}")


HIGH_PROBABILITY_SENSITIVITY = Claim(
    id="nsnc_improved.lemma3_3.high_probability_sensitivity",
    paper="nsnc_improved",
    location="Lemma 3.3 (and its proof, eq. (11)); Lemma C.1 (Algorithm 5)",
    statement=(
        "On replace-one neighbours with directions coupled by slot: the reset sensitivity of Algorithm 3 exceeds "
        "(2L + 2r)/B1 with probability at most 2γ and never exceeds 2Ld/B1; the increment sensitivity exceeds "
        "(2H‖z_t − z_(t−1)‖ + 4r)/B2 with probability at most 4γ and never exceeds 4Ld/B2 "
        "(r = L(d + 1)√(2 log(2/γ)/m), "
        "H = Lκ_d/α); for Algorithm 5 the reset sensitivity never exceeds 2L/B1 (Lemma C.1 prints L/B1) and the "
        "increment exceeds (2H‖Δz‖ + 4r_FO)/B2 (r_FO = 2L√(2 log(2/γ)/m)) with probability at most 4γ and never "
        "4L/B2. Checked for γ ∈ {0.05, 0.2} on the worst-case pairs (±L·e_1; the convex and concave ridges "
        "straddling the kink)."
    ),
    kind="monte_carlo",
    requires=("concentration_radius", "two_point_estimate", "first_order_estimate"),
    check=_check_r7,
    mutants=RADIUS_MUTANTS,
)
