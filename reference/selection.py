"""bgm21 §4.1 Algorithm 1, lines 6 and 11 — Laplace report-noisy-min over a finite candidate set.

Algorithm 1 selects a vertex by v = argmin_{v∈𝒱} ⟨v, ∇⟩ + u(v) with u(v) ~ iid Lap(s_r), the Laplace law of density
(1/(2s)) e^{−|x|/s} (scale s, variance 2s²). The same primitive serves the noisy Frank–Wolfe step of Theorem 6
(rebuilt: the algorithm of Appendix A.3 is missing from the paper; it follows the noisy Frank–Wolfe of [TTZ15] cited in
§3).

* ``laplace_noisy_argmin(scores, scale, rng)``: u_j ~ iid Lap(scale), return argmin_j (scores_j + u_j), lowest index on
  ties (ties have probability 0). Draw schedule: one ``rng.laplace(0, scale, J)`` call.
* ``noisy_argmin_probabilities(scores, scale)``: the exact selection law by numerical integration,
  P(j) = ∫ p(x) Π_{k≠j} P(U > c_j − c_k + x) dx, p the Laplace density, split at its kinks (x = 0 and x = c_k − c_j)
  and integrated piece by piece with ``scipy.integrate.quad`` (relative tolerance 1e-12, no absolute tolerance, so
  tiny probabilities keep their relative accuracy). The returned error is the sum of quad's error estimates per
  probability — an estimate, not a rigorous bound; the integrand is smooth on each piece, and in practice the error is
  below 1e-13 relative. Float64: for tests and audits, not a privacy accountant.
* ``report_noisy_min_epsilon(sensitivity, scale)``: ε = 2Δ/s (statement below).
* ``centred_score_sensitivity(scores, scores_prime)``: Δ_c = ½ (max_j δ_j − min_j δ_j), δ = scores − scores_prime.

**Privacy statement used.** Report-noisy-min with iid Lap(s) noise is (2Δ/s)-DP whenever the score vectors of
neighbouring datasets satisfy ‖c(S) − c(S′) − κ·1‖_∞ ≤ Δ for some constant κ. Proof: shift invariance (adding κ to every
score does not change the argmin) reduces to κ = 0; the winner's score and its rivals' each move by at most Δ, costing
e^{Δ/s} twice (the argument of Dwork–Roth, *The Algorithmic Foundations of Differential Privacy*, Claim 3.9, without its
monotonicity step). The factor 2 is needed and tight: with two candidates the output is a threshold of the difference
c_1 − c_2 + (u_1 − u_2), whose law has tails ∝ e^{−|t|/s}, and scores (0, 0) vs (Δ, −Δ) move that difference by 2Δ,
so the log-ratio of selection probabilities tends to 2Δ/s. Dwork–Roth Claim 3.9 states ε with Lap(1/ε) noise for
sensitivity-1 counting queries; its proof uses that all counts move in the *same* direction (add/remove a record), the
monotone case. That case is contained here: scores that all move by amounts in [0, Δ] have centred sensitivity
Δ_c = Δ/2 and get ε = 2Δ_c/s = Δ/s. Pass ``centred_score_sensitivity`` (or a bound on it) as ``sensitivity`` to get
the sharpest certified ε; passing the plain ℓ_∞ sensitivity max_j |δ_j| is always valid (it is ≥ Δ_c).
A calibration that takes Lap(Δ/ε) for scores that move in both directions — as a Laplace scale
"Δ·(…)/ε" read through the monotone claim does — certifies only about 2ε.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate

from .validation import check_array, check_real

__all__ = [
    "laplace_noisy_argmin",
    "noisy_argmin_probabilities",
    "report_noisy_min_epsilon",
    "centred_score_sensitivity",
]

#: Relative tolerance asked of ``scipy.integrate.quad`` for every piece of the selection integral.
QUAD_EPSREL = 1e-12


def _scores(name: str, value) -> np.ndarray:
    if isinstance(value, np.ndarray) and value.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {value.dtype}")
    arr = check_array(name, value, ndim=1)
    if arr.dtype == object:
        arr = arr.astype(np.float64)
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one candidate score")
    return arr


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def laplace_noisy_argmin(scores, scale, rng: np.random.Generator) -> int:
    """argmin_j (scores_j + u_j), u_j ~ iid Lap(scale); lowest index on ties (bgm21 Algorithm 1, lines 6, 11).

    Draw schedule: one ``rng.laplace(0.0, scale, J)`` call, J = len(scores).
    """
    c = _scores("scores", scores)
    s = float(check_real("scale", scale, positive=True))
    _check_rng(rng)
    noise = rng.laplace(0.0, s, c.shape[0])
    with np.errstate(over="ignore", invalid="ignore"):
        noisy = c + noise
    if not np.all(np.isfinite(noisy)):
        raise ValueError("scores + Laplace noise overflowed float64; rescale the scores")
    return int(np.argmin(noisy))  # numpy returns the first (lowest) index among equal minima


def _survival(t: float) -> float:
    """P(U > t) for U ~ Lap(1)."""
    return 0.5 * math.exp(-t) if t >= 0 else 1.0 - 0.5 * math.exp(t)


def noisy_argmin_probabilities(scores, scale, *, return_error: bool = False):
    """Exact P(laplace_noisy_argmin(scores, scale) = j) for each j, by numerical integration (see module docstring).

    Returns a float64 array summing to 1 (checked to 1e-9); with ``return_error=True`` also the per-probability sum of
    quad's absolute error estimates. Cost grows like J² quad calls; meant for small J (tests, audits).
    """
    c = _scores("scores", scores)
    s = float(check_real("scale", scale, positive=True))
    if c.shape[0] == 1:
        one = np.ones(1)
        return (one, np.zeros(1)) if return_error else one
    with np.errstate(over="ignore", invalid="ignore"):
        z = (c - c.min()) / s  # shift invariance, then unit scale: integrate in units of s
    if not np.all(np.isfinite(z)):
        raise ValueError("scores/scale overflowed float64")
    J = z.shape[0]
    probs = np.empty(J)
    errors = np.empty(J)
    for j in range(J):
        rivals = np.delete(z, j)

        def integrand(x, rivals=rivals, zj=z[j]):
            value = 0.5 * math.exp(-abs(x))
            for zk in rivals:
                value *= _survival(zj - zk + x)
                if value == 0.0:
                    break
            return value

        cuts = sorted({0.0, *(float(zk - z[j]) for zk in rivals)})
        pieces = [(-math.inf, cuts[0]), *zip(cuts[:-1], cuts[1:]), (cuts[-1], math.inf)]
        total, err = 0.0, 0.0
        for lo, hi in pieces:
            if lo == hi:
                continue
            value, abserr = integrate.quad(integrand, lo, hi, epsabs=0.0, epsrel=QUAD_EPSREL, limit=200)
            total += value
            err += abserr
        probs[j], errors[j] = total, err
    if not abs(probs.sum() - 1.0) <= 1e-9:
        raise ArithmeticError(f"selection probabilities sum to {probs.sum()!r}, not 1; integration failed")
    return (probs, errors) if return_error else probs


def report_noisy_min_epsilon(sensitivity, scale) -> float:
    """ε = 2Δ/s: report-noisy-min with Lap(s) noise is ε-DP when scores move by at most Δ (centred ℓ_∞, see module).

    ``sensitivity`` Δ ≥ 0 is a bound on min_κ ‖c(S) − c(S′) − κ·1‖_∞ over neighbouring S, S′; the plain ℓ_∞
    sensitivity is a valid (looser) choice. Monotone scores moving by at most Δ have centred sensitivity Δ/2,
    giving Dwork–Roth Claim 3.9's ε = Δ/s.
    """
    delta = check_real("sensitivity", sensitivity, nonnegative=True)
    s = check_real("scale", scale, positive=True)
    eps = 2.0 * float(delta) / float(s)
    if not math.isfinite(eps):
        raise ValueError(f"epsilon 2*sensitivity/scale overflowed ({delta}/{s})")
    return eps


def centred_score_sensitivity(scores, scores_prime) -> float:
    """Δ_c = min_κ ‖scores − scores_prime − κ·1‖_∞ = ½ (max_j δ_j − min_j δ_j), δ = scores − scores_prime."""
    a = _scores("scores", scores)
    b = _scores("scores_prime", scores_prime)
    if a.shape != b.shape:
        raise ValueError(f"scores and scores_prime must have the same shape, got {a.shape} and {b.shape}")
    with np.errstate(over="ignore", invalid="ignore"):
        diff = a - b
    if not np.all(np.isfinite(diff)):
        raise ValueError("scores - scores_prime overflowed float64")
    return float(0.5 * (diff.max() - diff.min()))
