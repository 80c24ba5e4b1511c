"""bgm21 §3, Lemma 3 (bgm21.E4): the Moreau-smoothed generalized linear loss f_β(w, (x, y)) = ℓ_β^{(y)}(⟨w, x⟩).

Lemma 3 prints: f_β is 2L0R-Lipschitz and β‖x‖_*²-smooth, and |f − f_β| ≤ 2L0²/β. The tight form (bgm21.E4, a
clarification: the printed constants follow from it since ‖x‖_* ≤ R) is checked here on the subject's envelope
(``moreau_envelope``) and its derivative (``moreau_gradient``):

* 0 ≤ f(w) − f_β(w) ≤ L0²/(2β) at random points, and the upper bound is attained (absolute loss, |u − y| > L0/β);
* ‖∇f_β(w) − ∇f_β(v)‖_* = |ℓ_β′(⟨w, x⟩) − ℓ_β′(⟨v, x⟩)|·‖x‖_* ≤ β‖x‖_*²‖w − v‖ (attained inside a quadratic zone);
* |f_β(w) − f_β(v)| ≤ L0‖x‖_*‖w − v‖ (attained in a linear zone),

in the ℓ_2 setting (‖·‖_* = ‖·‖_2) and the ℓ_1 setting (‖·‖_* = ‖·‖_∞), for the absolute and hinge losses and the
smooth Huber and logistic losses of ``reference.gll`` (test problems). The subject's values must also be the Moreau
envelope: they are compared with ground truth computed here (closed forms derived from the definition; the logistic
prox by Brent's root finder), since a function that is not the envelope could satisfy the three inequalities.

Tolerances: float64 only — 64 roundings of the magnitudes involved (``_gll_truth.float_slack``), about 1e-14
relative; the printed constants are then ≥ 4× the tight ones, far outside rounding.
"""

from __future__ import annotations

import math

import numpy as np

from proofs_checks.authoring import Claim, deterministic, on_output, rebind, sometimes_nan

from ._gll_truth import dual_norm_rows, envelope_gradient_truth, envelope_truth, float_slack, loss_family, loss_value

SETTINGS = (("ℓ_2", 2.0, 2.0), ("ℓ_1", 1.0, math.inf))  # (name, primal p, dual q)


def _points(gen, count, d, p, R):
    """Pairs (w, v) and features x with ‖x‖_* ≤ R; a third of the pairs close together (inside a quadratic zone)."""
    X = gen.normal(size=(count, d))
    X *= (R * gen.uniform(0.1, 1.0, (count, 1))) / dual_norm_rows(X, 2.0 if p == 2.0 else math.inf)[:, None]
    W = gen.normal(size=(count, d)) * gen.choice([0.1, 1.0, 5.0], size=(count, 1))
    step = gen.normal(size=(count, d)) * gen.choice([1e-4, 1e-2, 1.0], size=(count, 1))
    return X, W, W + step


def _labels(loss, gen, count, u):
    if loss.binary_labels:
        return gen.choice([-1.0, 1.0], size=count)
    return u + gen.normal(0.0, 1.0, count) * gen.choice([0.0, 0.01, 1.0, 10.0], size=count)  # some kinks at u


def _check_smoothed_gll(subject, ctx):
    count = ctx.budget.pick(quick=100, full=1000)  # per (setting, L0, loss, β)
    worst = {"gap": 0.0, "smooth": 0.0, "lipschitz": 0.0}
    attained = {"gap": 0.0, "smooth": 0.0, "lipschitz": 0.0}
    for setting, p, q in SETTINGS:
        for L0 in (0.5, 3.0):
            for loss, beta_exponent in ((loss, e) for loss in loss_family(L0) for e in (-2, 0, 1, 3)):
                gen = ctx.generator("lemma3", setting, loss.name, str(L0), str(beta_exponent))
                d, R = int(gen.integers(2, 6)), float(gen.uniform(0.5, 4.0))
                beta = float(10.0 ** (beta_exponent + gen.uniform(-0.5, 0.5)))
                X, W, V = _points(gen, count, d, p, R)
                xs = dual_norm_rows(X, q)
                uw, uv = np.sum(X * W, axis=1), np.sum(X * V, axis=1)
                y = _labels(loss, gen, count, uw)
                env_w = np.asarray(subject.moreau_envelope(uw, y, loss, beta), dtype=np.float64)
                env_v = np.asarray(subject.moreau_envelope(uv, y, loss, beta), dtype=np.float64)
                grad_w = np.asarray(subject.moreau_gradient(uw, y, loss, beta), dtype=np.float64)
                grad_v = np.asarray(subject.moreau_gradient(uv, y, loss, beta), dtype=np.float64)
                label = f"{setting} setting, {loss!r}"

                # the subject's values are the envelope and its derivative (ground truth computed here)
                truth_env = envelope_truth(loss, uw, y, beta)
                truth_grad = envelope_gradient_truth(loss, uw, y, beta)
                value_w = loss_value(loss, uw, y)
                scale = value_w + L0 * np.abs(uw) + L0 * np.abs(y) + L0**2 / beta
                env_err = np.abs(env_w - truth_env) - float_slack(scale)
                grad_err = np.abs(grad_w - truth_grad) - float_slack(L0 + beta * (np.abs(uw) + np.abs(y) + 1.0))
                for name, err in (("ℓ_β(u)", env_err), ("ℓ_β′(u)", grad_err)):
                    if not np.all(err <= 0.0):  # NaN fails too
                        k = int(np.argmax(np.where(np.isnan(err), np.inf, err)))
                        return deterministic(False, statistic=float(err[k]), bound=0.0, detail=(
                            f"{label}: the subject's {name} is not the Moreau envelope's at u = {uw[k]!r}, "
                            f"y = {y[k]!r}, β = {beta!r}: subject {(env_w if name == 'ℓ_β(u)' else grad_w)[k]!r}, "
                            f"exact {(truth_env if name == 'ℓ_β(u)' else truth_grad)[k]!r}"))

                # 0 ≤ f − f_β ≤ L0²/(2β)
                gap = value_w - env_w
                slack = float_slack(scale)
                bound = L0**2 / (2.0 * beta)
                if not np.all((gap >= -slack) & (gap <= bound + slack)):
                    k = int(np.argmax(np.where((gap >= -slack) & (gap <= bound + slack), -np.inf, np.abs(gap))))
                    return deterministic(False, statistic=float(gap[k]), bound=float(bound[k]), detail=(
                        f"{label}: f − f_β = {gap[k]!r} outside [0, L0²/(2β) = {bound[k]!r}] at u = {uw[k]!r}, "
                        f"y = {y[k]!r}, β = {beta!r}"))
                worst["gap"] = max(worst["gap"], float(np.max(gap / bound)))

                # smoothness and Lipschitz constant in the setting's norms (Hölder: |⟨x, w − v⟩| ≤ ‖x‖_*‖w − v‖)
                dist = np.linalg.norm(W - V, ord=p, axis=1)
                moved = np.abs(grad_w - grad_v) * xs
                smooth_bound = beta * xs**2 * dist
                smooth_slack = float_slack(L0 + beta * (np.abs(uw) + np.abs(uv) + np.abs(y) + 1.0)) * 2 * xs
                change = np.abs(env_w - env_v)
                lip_bound = L0 * xs * dist
                lip_slack = 2 * float_slack(scale + loss_value(loss, uv, y) + L0 * np.abs(uv))
                for name, got, upper, tol in (("‖∇f_β(w) − ∇f_β(v)‖_*", moved, smooth_bound, smooth_slack),
                                              ("|f_β(w) − f_β(v)|", change, lip_bound, lip_slack)):
                    ok = got <= upper + tol
                    if not np.all(ok):
                        k = int(np.argmin(ok))
                        return deterministic(False, statistic=float(got[k]), bound=float(upper[k]), detail=(
                            f"{label}: {name} = {got[k]!r} exceeds its bound {upper[k]!r} at w·x = {uw[k]!r}, "
                            f"v·x = {uv[k]!r}, y = {y[k]!r}, β = {beta!r}"))
                keep = dist > 0
                worst["smooth"] = max(worst["smooth"], float(np.max(moved[keep] / smooth_bound[keep])))
                worst["lipschitz"] = max(worst["lipschitz"], float(np.max(change[keep] / lip_bound[keep])))

                if loss.name == "absolute":  # the tight constants are attained: scalar ratios at chosen margins
                    t, u0 = L0 / beta, 0.0
                    far = float(subject.moreau_envelope(3 * t, u0, loss, beta))
                    attained["gap"] = max(attained["gap"], (3 * L0 * t - far) / (L0 * t / 2))
                    g_a = float(subject.moreau_gradient(0.25 * t, u0, loss, beta))
                    g_b = float(subject.moreau_gradient(-0.25 * t, u0, loss, beta))
                    attained["smooth"] = max(attained["smooth"], (g_a - g_b) / (beta * 0.5 * t))
                    e_a = float(subject.moreau_envelope(2 * t, u0, loss, beta))
                    e_b = float(subject.moreau_envelope(4 * t, u0, loss, beta))
                    attained["lipschitz"] = max(attained["lipschitz"], (e_b - e_a) / (L0 * 2 * t))

    tight = all(abs(attained[k] - 1.0) <= 1e-9 for k in attained)
    detail = (f"largest ratios to the tight bounds over random points: (f − f_β)/(L0²/2β) {worst['gap']:.6g}, "
              f"smoothness {worst['smooth']:.6g}, Lipschitz {worst['lipschitz']:.6g}; attained (absolute loss): "
              f"{attained['gap']:.12g}, {attained['smooth']:.12g}, {attained['lipschitz']:.12g}; the printed "
              "constants 2L0R and 2L0²/β are 2R/‖x‖_* ≥ 2 and 4 times these")
    if not tight:
        return deterministic(False, statistic=min(attained.values()), bound=1.0,
                             detail="the tight constants are not attained where the envelope attains them: " + detail)
    return deterministic(True, statistic=max(worst.values()), bound=1.0, detail=detail)


SMOOTHED_GLL = Claim(
    id="bgm21.lemma3.smoothed_gll",
    paper="bgm21",
    location="§3, Lemma 3; bgm21.E4",
    statement=(
        "For an L0-Lipschitz convex GLL and x with ‖x‖_* ≤ R, f_β(w, (x, y)) = ℓ_β^{(y)}(⟨w, x⟩) satisfies "
        "0 ≤ f − f_β ≤ L0²/(2β), ∇f_β is β‖x‖_*²-Lipschitz and f_β is L0‖x‖_*-Lipschitz (all three attained), which "
        "imply Lemma 3's printed 2L0R and 2L0²/β."
    ),
    kind="deterministic",
    requires=("moreau_envelope", "moreau_gradient"),
    check=_check_smoothed_gll,
    mutants=(
        rebind("inverse_beta", "the envelope taken with 1/β in place of β (ℓ_{1/β})", "moreau_envelope",
               beta=lambda b: 1.0 / np.asarray(b, dtype=np.float64)),
        rebind("quarter_beta", "the envelope and its derivative taken at β/4: the printed gap 2L0²/β then holds, "
                               "the tight L0²/(2β) does not", "moreau_envelope",
               beta=lambda b: np.asarray(b, dtype=np.float64) / 4.0),
        on_output("gradient_doubled", "ℓ_β′ returned twice too large (2β-smooth, 2L0-Lipschitz)", "moreau_gradient",
                  lambda g, call: 2.0 * np.asarray(g, dtype=np.float64)),
        on_output("gap_one_percent", "the envelope 1 % of L0²/(2β) too low (a near miss of the gap bound)",
                  "moreau_envelope", lambda e, call: np.asarray(e, dtype=np.float64)
                  - 0.01 * call.loss.lipschitz**2 / (2.0 * np.asarray(call.beta, dtype=np.float64))),
        on_output("unsmoothed_gradient", "the derivative of ℓ itself (a subgradient) instead of ℓ_β′",
                  "moreau_gradient", lambda g, call: call.loss.subgradient(call.u, call.y)),
        sometimes_nan("moreau_envelope"),
    ),
)
