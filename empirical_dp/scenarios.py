"""Audit scenarios: a mechanism, a worst-case neighbouring pair D, D', and the (ε, δ) claimed for it (DESIGN.md,
empirical_dp/ "scenario").

Sources:
- Dong, Roth, Su 2022 (JRSS-B), "Gaussian differential privacy", Thm 2.7: the Gaussian mechanism with
  sensitivity Δ and noise σ is μ-GDP with μ = Δ/σ, and Cor. 2.13 gives its exact (tight) ε(δ).
- Balle, Wang 2018 (ICML) Thm 8: the same exact profile δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).
- Mironov, Talwar, Zhang 2019 §3.3 (RDP of the Poisson-subsampled Gaussian) for the accountant's claim of
  ``poisson_gaussian_scenario``; its tight ε is the exact hockey-stick profile of the one-step pair, which is
  closed form here because the privacy loss is monotone in the output (see ``poisson_gaussian_delta``).

A scenario's ``sample(rng, trials, which)`` returns the mechanism's outputs on D (which = 0) or D' (which = 1),
shape (trials, k), drawing ``standard_normal((trials, k))`` (and for the subsampled scenario one
``random(trials)`` call for the inclusion coins first) from the generator it is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import numpy as np
from scipy.optimize import brentq

from reference.fast.conversions import epsilon_from_rdp, gaussian_epsilon, gaussian_mu
from reference.fast.rdp import DEFAULT_ORDERS, rdp_poisson_gaussian
from reference.validation import check_int, check_probability, check_real

__all__ = [
    "Scenario",
    "gaussian_scenario",
    "poisson_gaussian_scenario",
    "poisson_gaussian_delta",
    "poisson_gaussian_tight_epsilon",
    "SCENARIOS",
]


@dataclass(frozen=True)
class Scenario:
    """One audit target.

    name: key for streams and reports; description: one line; sample(rng, trials, which) -> (trials, k) outputs on
    D (which = 0) or D' (which = 1); claimed_epsilon: ε the accountant claims at ``delta`` (δ); tight_epsilon: the
    exact ε of the mechanism at δ, or None if unknown; mu: μ when the pair is N(0, I) vs N(μ e, I) up to an
    invertible map (μ-GDP exactly), else None; log_likelihood_ratio(outputs) -> (trials,) log dP_{D'}/dP_D, or None.
    """

    name: str
    description: str
    sample: Callable[[np.random.Generator, int, int], np.ndarray]
    claimed_epsilon: float
    delta: float
    tight_epsilon: float | None = None
    mu: float | None = None
    log_likelihood_ratio: Callable[[np.ndarray], np.ndarray] | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("name must be a non-empty string")
        check_real("claimed_epsilon", self.claimed_epsilon, nonnegative=True, allow_inf=True)
        check_probability("delta", self.delta, open_left=False)
        if self.tight_epsilon is not None:
            check_real("tight_epsilon", self.tight_epsilon, nonnegative=True)
        if self.mu is not None:
            check_real("mu", self.mu, nonnegative=True)


def _check_sample_args(rng, trials, which) -> tuple[int, int]:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    trials = check_int("trials", trials, minimum=0)
    which = check_int("which", which, minimum=0, maximum=1)
    return trials, which


# ---------------------------------------------------------------------------------------------------
# Gaussian mechanism


def gaussian_scenario(sensitivity=1.0, noise_std=1.0, dimension=1, delta=1e-5, *, claimed_epsilon=None,
                      name=None) -> Scenario:
    """Gaussian mechanism on a worst-case pair: D → N(0, σ² I_k), D' → N(s, σ² I_k) with ‖s‖ = Δ.

    sensitivity: Δ (ℓ2); noise_std: σ; dimension: k; delta: δ.  s = (Δ/√k)(1, …, 1), so the projection on the
    all-ones direction is the optimal (likelihood-ratio) statistic.  μ = Δ/σ (Dong–Roth–Su Thm 2.7) and the
    tight ε is the exact GDP profile's ε(δ) (Cor. 2.13).  claimed_epsilon defaults to the tight ε; pass another
    value to model an accountant that claims something else (e.g. a planted "noise too small" bug).
    log dP_{D'}/dP_D (x) = (⟨x, s⟩ − ‖s‖²/2)/σ².
    """
    sensitivity = check_real("sensitivity", sensitivity, positive=True)
    noise_std = check_real("noise_std", noise_std, positive=True)
    dimension = check_int("dimension", dimension, minimum=1)
    delta = check_probability("delta", delta)
    mu = sensitivity / noise_std
    tight = gaussian_epsilon(delta, mu)
    claimed = tight if claimed_epsilon is None else check_real("claimed_epsilon", claimed_epsilon, nonnegative=True)
    shift = np.full(dimension, sensitivity / math.sqrt(dimension))

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        noise = noise_std * rng.standard_normal((trials, dimension))
        return noise + shift if which == 1 else noise

    def log_likelihood_ratio(outputs):
        outputs = np.asarray(outputs, dtype=np.float64)
        if outputs.ndim != 2 or outputs.shape[1] != dimension:
            raise ValueError(f"outputs must have shape (trials, {dimension}), got {outputs.shape}")
        return (outputs @ shift - sensitivity**2 / 2) / noise_std**2

    return Scenario(
        name=name or f"gaussian(sensitivity={sensitivity:g},noise_std={noise_std:g},dimension={dimension})",
        description=f"Gaussian mechanism, Δ={sensitivity:g}, σ={noise_std:g}, k={dimension}, μ={mu:.6g}",
        sample=sample, claimed_epsilon=claimed, delta=delta, tight_epsilon=tight, mu=mu,
        log_likelihood_ratio=log_likelihood_ratio,
    )


# ---------------------------------------------------------------------------------------------------
# One step of the Poisson-subsampled Gaussian


def _log_ratio_threshold(epsilon, q, noise_std, sign):
    """The output x at which the privacy loss L(x) = log(1 − q + q e^{(2x−1)/(2σ²)}) equals sign·ε (mpmath), or
    None when L never reaches it (L > log(1 − q) everywhere)."""
    target = mpmath.exp(sign * epsilon) - 1 + q
    if target <= 0:
        return None
    return noise_std**2 * mpmath.log(target / q) + mpmath.mpf(1) / 2


def poisson_gaussian_delta(epsilon, q, noise_std):
    """Exact hockey-stick δ(ε) of one Poisson-subsampled Gaussian step, the max of both orders of the pair
    P = (1 − q)N(0, σ²) + qN(1, σ²) (D') and Q = N(0, σ²) (D).

    The loss L = log dP/dQ (x) = log(1 − q + q e^{(2x−1)/(2σ²)}) is increasing in x, so the optimal rejection
    regions are half-lines and (Φ̄ the normal survival function, t, t' the solutions of L = ε, L = −ε)
        δ_{P‖Q}(ε) = q Φ̄((t − 1)/σ) − (e^ε − 1 + q) Φ̄(t/σ),
        δ_{Q‖P}(ε) = (1 − e^ε(1 − q)) Φ(t'/σ) − e^ε q Φ((t' − 1)/σ)   (0 when e^{−ε} ≤ 1 − q).
    Evaluated in mpmath at 40 digits (the two terms cancel) and returned as a float.
    """
    epsilon = check_real("epsilon", epsilon, nonnegative=True)
    q = check_probability("q", q, open_right=False)
    noise_std = check_real("noise_std", noise_std, positive=True)
    with mpmath.workdps(40):
        eps, qm, sigma = mpmath.mpf(epsilon), mpmath.mpf(q), mpmath.mpf(noise_std)
        t = _log_ratio_threshold(eps, qm, sigma, +1)
        forward = qm * mpmath.ncdf(-(t - 1) / sigma) - (mpmath.exp(eps) - 1 + qm) * mpmath.ncdf(-t / sigma)
        backward = mpmath.mpf(0)
        t_back = _log_ratio_threshold(eps, qm, sigma, -1)
        if t_back is not None:
            backward = ((1 - mpmath.exp(eps) * (1 - qm)) * mpmath.ncdf(t_back / sigma)
                        - mpmath.exp(eps) * qm * mpmath.ncdf((t_back - 1) / sigma))
        return float(max(forward, backward, mpmath.mpf(0)))


def poisson_gaussian_tight_epsilon(q, noise_std, delta):
    """The smallest ε with ``poisson_gaussian_delta(ε) ≤ δ`` (δ(ε) is non-increasing), by bracketing + brentq,
    then stepped up by ulps until the inequality holds as evaluated."""
    q = check_probability("q", q, open_right=False)
    noise_std = check_real("noise_std", noise_std, positive=True)
    delta = check_probability("delta", delta)

    def excess(eps):
        return poisson_gaussian_delta(eps, q, noise_std) - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2
        if hi > 1e6:
            raise ValueError(f"tight epsilon of q={q}, noise_std={noise_std} at delta={delta} exceeds 1e6")
    epsilon = brentq(excess, 0.0, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps)
    while excess(epsilon) > 0:
        epsilon = float(np.nextafter(epsilon, math.inf))
    return epsilon


def poisson_gaussian_scenario(q, noise_std, delta=1e-5, *, name=None) -> Scenario:
    """One step of the Poisson-subsampled Gaussian (sensitivity 1): D → N(0, σ²), D' → (1 − q)N(0, σ²) + qN(1, σ²).

    q: sampling probability; noise_std: σ (= noise multiplier z, Δ = 1); delta: δ.  claimed ε: the RDP accountant
    (``reference.fast.rdp.rdp_poisson_gaussian`` on ``DEFAULT_ORDERS``, converted by ``epsilon_from_rdp``); tight ε:
    ``poisson_gaussian_tight_epsilon``.  Draws: ``random(trials)`` inclusion coins (D' only), then
    ``standard_normal((trials, 1))``.
    """
    q = check_probability("q", q, open_right=False)
    noise_std = check_real("noise_std", noise_std, positive=True)
    delta = check_probability("delta", delta)
    claimed, _ = epsilon_from_rdp(DEFAULT_ORDERS, rdp_poisson_gaussian(DEFAULT_ORDERS, q, noise_std), delta)
    tight = poisson_gaussian_tight_epsilon(q, noise_std, delta)

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        if which == 1:
            included = rng.random(trials) < q
            return noise_std * rng.standard_normal((trials, 1)) + included[:, None]
        return noise_std * rng.standard_normal((trials, 1))

    def log_likelihood_ratio(outputs):
        outputs = np.asarray(outputs, dtype=np.float64)
        if outputs.ndim != 2 or outputs.shape[1] != 1:
            raise ValueError(f"outputs must have shape (trials, 1), got {outputs.shape}")
        x = outputs[:, 0]
        # log(1 − q + q e^{(2x−1)/(2σ²)}) without overflow
        return np.logaddexp(math.log1p(-q) if q < 1 else -np.inf, math.log(q) + (2 * x - 1) / (2 * noise_std**2))

    return Scenario(
        name=name or f"poisson_gaussian(q={q:g},noise_std={noise_std:g})",
        description=f"one Poisson-subsampled Gaussian step, q={q:g}, σ={noise_std:g}",
        sample=sample, claimed_epsilon=claimed, delta=delta, tight_epsilon=tight, mu=None,
        log_likelihood_ratio=log_likelihood_ratio,
    )


# ---------------------------------------------------------------------------------------------------
# Built-ins

#: μ whose exact GDP ε at δ = 1e-5 is 1 (so the ``gaussian`` built-in has tight ε = 1).
GAUSSIAN_BUILTIN_MU = gaussian_mu(1.0, 1e-5)


def _builtins() -> dict[str, Scenario]:
    return {
        "gaussian": gaussian_scenario(1.0, 1.0 / GAUSSIAN_BUILTIN_MU, 1, 1e-5, name="gaussian"),
        "poisson_gaussian": poisson_gaussian_scenario(0.01, 1.0, 1e-5, name="poisson_gaussian"),
    }


SCENARIOS: dict[str, Scenario] = _builtins()
