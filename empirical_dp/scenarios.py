"""Audit scenarios: a mechanism, a worst-case neighbouring pair D, D', and what is claimed for it — an (ε, δ)
guarantee or a μ-GDP guarantee (``Claim``) — kept apart from what is known about its true law (docs/audits.md,
Claims and verdicts; Shipped scenarios and planted bugs).

Sources:
- Dong, Roth, Su 2022 (JRSS-B), "Gaussian differential privacy", Thm 2.7: the Gaussian mechanism with
  sensitivity Δ and noise σ is μ-GDP with μ = Δ/σ, and Cor. 2.13 gives its exact (tight) ε(δ).
- Balle, Wang 2018 (ICML) Thm 8: the same exact profile δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).
- Mironov, Talwar, Zhang 2019 §3.3 (RDP of the Poisson-subsampled Gaussian) for the accountant's claim of
  ``poisson_gaussian_scenario``; its tight ε is the exact hockey-stick profile of the one-step pair, which is
  closed form here because the privacy loss is monotone in the output (see ``poisson_gaussian_delta``).
- zo_o2nc Alg 5 / Thm 4.3 (exact version, §5 item 3) for ``tree_prefix_scenario``: the T released prefix sums are
  N(P m, σ² R Rᵀ), a leaf-q change is μ-GDP with μ = √c_q(T)/σ, and the accountant counts ⌊log2 T⌋ + 1 nodes.
- dpzero Alg 2 (lines 3–7) and §1.2 (replace-one sensitivity 2C/n) for ``zeroth_order_scenario``. The built-ins
  ``dpzero-step``, ``dpzero-full-run`` and ``dpzero-full-run-poisson`` run the DPZero algorithm itself
  (``empirical_dp.dpzero_scenarios``); the registry of built-ins by name is ``empirical_dp.registry.SCENARIOS``.

A scenario's ``sample(rng, trials, which)`` returns the mechanism's outputs on D (which = 0) or D' (which = 1),
shape (trials, k), drawing ``standard_normal((trials, k))`` (for the subsampled scenario one ``random(trials)`` call
for the inclusion coins first; for the tree ``standard_normal((trials, T, 1))`` node noises) from the generator it
is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass

import mpmath
import numpy as np
from scipy.optimize import brentq

from reference.fast.conversions import epsilon_from_rdp, gaussian_epsilon, gaussian_mu
from reference.fast.estimators import per_sample_finite_differences
from reference.fast.mechanisms import (
    clipped_mean,
    clipped_mean_sensitivity,
    participation_count,
    tree_aggregate,
    tree_prefix_noise,
)
from reference.fast.rdp import DEFAULT_ORDERS, rdp_poisson_gaussian, rdp_tree_aggregation
from reference.objectives import RidgeSum
from reference.rng import Streams, sample_sphere
from reference.validation import check_int, check_probability, check_real

__all__ = [
    "CLAIM_TYPES",
    "Claim",
    "Scenario",
    "gdp_claim_epsilon",
    "gaussian_scenario",
    "poisson_gaussian_scenario",
    "poisson_gaussian_delta",
    "poisson_gaussian_tight_epsilon",
    "tree_release_matrix",
    "tree_prefix_shift",
    "tree_prefix_mu",
    "tree_prefix_scenario",
    "zeroth_order_pair",
    "zeroth_order_scenario",
]


#: The two kinds of claim a scenario can state (``Claim.kind``).
CLAIM_TYPES = ("epsilon_delta", "gdp")
#: Relative tolerance within which a ``claimed_epsilon`` stated beside a ``claimed_mu`` must equal ε_μ(δ).
IMPLIED_EPSILON_RTOL = 1e-9


def gdp_claim_epsilon(mu, delta) -> float:
    """ε at δ implied by a μ-GDP claim (Dong–Roth–Su Cor. 2.13, exact profile): ε_μ(δ); at δ = 0, 0 for μ = 0
    and ∞ otherwise (μ-GDP with μ > 0 is (ε, 0)-DP for no finite ε)."""
    mu = check_real("claimed_mu", mu, nonnegative=True)
    delta = check_probability("delta", delta, open_left=False)
    if delta == 0:
        return 0.0 if mu == 0 else math.inf
    return gaussian_epsilon(delta, mu)


@dataclass(frozen=True)
class Claim:
    """What a scenario's accountant claims, the ONLY input of an audit's verdict besides the counts.

    kind: "epsilon_delta" (the mechanism is (ε, δ)-DP) or "gdp" (it is μ-GDP, Dong–Roth–Su Def. 2.6, which
    implies (ε_μ(δ), δ)-DP for every δ, Cor. 2.13); epsilon: the claimed ε at ``delta`` (for "gdp" the one the
    μ-GDP claim implies); mu: the claimed μ ("gdp" only, else None).
    """

    kind: str
    epsilon: float
    delta: float
    mu: float | None = None

    def describe(self) -> str:
        """One line, e.g. "(ε, δ) = (1, 1e-05)" or "μ-GDP, μ = 0.268 (implies ε = 1 at δ = 1e-05)"."""
        if self.kind == "gdp":
            return f"mu-GDP, mu = {self.mu:.6g} (implies epsilon = {self.epsilon:.6g} at delta = {self.delta:g})"
        return f"(epsilon, delta) = ({self.epsilon:.6g}, {self.delta:g})"


@dataclass(frozen=True)
class Scenario:
    """One audit target: a mechanism on a neighbouring pair, WHAT IS CLAIMED for it, and what is known about its
    true law (yardsticks only).

    name: key for streams and reports; description: one line; sample(rng, trials, which) -> (trials, k) outputs on
    D (which = 0) or D' (which = 1).

    The claim (keyword-only; the verdict of ``empirical_dp.audit.audit`` uses nothing else):
    - an (ε, δ) claim: ``claimed_epsilon`` = ε at ``delta`` = δ, ``claimed_mu`` None. Only (ε, δ)-valid lower
      bounds (Clopper–Pearson / Kairouz–Oh–Viswanath) may refute it;
    - a μ-GDP claim: ``claimed_mu`` = μ (finite, ≥ 0). It implies (ε_μ(δ), δ) at ``delta``; ``claimed_epsilon``
      may be left None (it is then set to ε_μ(δ), ``gdp_claim_epsilon``) or given, in which case it must equal
      ε_μ(δ) to a relative 1e-9 (an accountant's rounded statement of the same claim). The GDP μ lower bound
      and the (ε, δ) bound may both refute it.

    The true law (known to the scenario's author, never to the auditor; NOT in the verdict): tight_epsilon: the
    exact ε of the mechanism at δ, or None if unknown; mu: the TRUE μ when the pair is N(0, I) vs N(μ e, I) up to
    an invertible map (μ-GDP exactly), else None — used for the known-law oracle and tightness ratios only;
    log_likelihood_ratio(outputs) -> (trials,) log dP_{D'}/dP_D, or None (the audit's default attack).
    """

    name: str
    description: str
    sample: Callable[[np.random.Generator, int, int], np.ndarray]
    _: KW_ONLY
    delta: float
    claimed_epsilon: float | None = None
    claimed_mu: float | None = None
    tight_epsilon: float | None = None
    mu: float | None = None
    log_likelihood_ratio: Callable[[np.ndarray], np.ndarray] | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("name must be a non-empty string")
        delta = check_probability("delta", self.delta, open_left=False)
        if self.claimed_mu is not None:
            mu = check_real("claimed_mu", self.claimed_mu, nonnegative=True)
            implied = gdp_claim_epsilon(mu, delta)
            if self.claimed_epsilon is None:
                object.__setattr__(self, "claimed_epsilon", implied)
            else:
                stated = check_real("claimed_epsilon", self.claimed_epsilon, nonnegative=True, allow_inf=True)
                if not (stated == implied
                        or abs(stated - implied) <= IMPLIED_EPSILON_RTOL * max(1.0, abs(implied))):
                    raise ValueError(
                        f"claimed_epsilon {stated!r} disagrees with claimed_mu {mu!r}, which implies epsilon "
                        f"{implied!r} at delta {delta!r}: state one claim (claimed_mu for mu-GDP, or "
                        f"claimed_epsilon alone with claimed_mu=None for (epsilon, delta))")
        elif self.claimed_epsilon is None:
            raise ValueError("claimed_epsilon (an (epsilon, delta) claim) or claimed_mu (a mu-GDP claim) must be "
                             "given")
        else:
            check_real("claimed_epsilon", self.claimed_epsilon, nonnegative=True, allow_inf=True)
        if self.tight_epsilon is not None:
            check_real("tight_epsilon", self.tight_epsilon, nonnegative=True, allow_inf=True)
        if self.mu is not None:
            check_real("mu", self.mu, nonnegative=True)

    @property
    def claim_type(self) -> str:
        """"gdp" for a μ-GDP claim, "epsilon_delta" for an (ε, δ) claim."""
        return "gdp" if self.claimed_mu is not None else "epsilon_delta"

    @property
    def claim(self) -> Claim:
        """The claim as a ``Claim``."""
        return Claim(self.claim_type, float(self.claimed_epsilon), float(self.delta),
                     None if self.claimed_mu is None else float(self.claimed_mu))


def _check_sample_args(rng, trials, which) -> tuple[int, int]:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    trials = check_int("trials", trials, minimum=0)
    which = check_int("which", which, minimum=0, maximum=1)
    return trials, which


# ---------------------------------------------------------------------------------------------------
# Gaussian mechanism


def gaussian_scenario(sensitivity=1.0, noise_std=1.0, dimension=1, delta=1e-5, *, claimed_epsilon=None,
                      claimed_mu=None, name=None) -> Scenario:
    """Gaussian mechanism on a worst-case pair: D → N(0, σ² I_k), D' → N(s, σ² I_k) with ‖s‖ = Δ.

    sensitivity: Δ (ℓ2); noise_std: σ; dimension: k; delta: δ.  s = (Δ/√k)(1, …, 1), so the projection on the
    all-ones direction is the optimal (likelihood-ratio) statistic.  True μ = Δ/σ (Dong–Roth–Su Thm 2.7) and the
    tight ε is the exact GDP profile's ε(δ) (Cor. 2.13).

    The claim: by default the accountant's, which knows Δ and σ and states the theorem: a μ-GDP claim with
    claimed μ = Δ/σ (so claimed ε = tight ε).  Pass ``claimed_mu`` for another μ-GDP claim, or
    ``claimed_epsilon`` for an (ε, δ) claim (e.g. an accountant that states only "ε = 1 at δ"); not both.
    log dP_{D'}/dP_D (x) = (⟨x, s⟩ − ‖s‖²/2)/σ².
    """
    sensitivity = check_real("sensitivity", sensitivity, positive=True)
    noise_std = check_real("noise_std", noise_std, positive=True)
    dimension = check_int("dimension", dimension, minimum=1)
    delta = check_probability("delta", delta)
    if claimed_epsilon is not None and claimed_mu is not None:
        raise ValueError("pass claimed_epsilon (an (epsilon, delta) claim) or claimed_mu (a mu-GDP claim), not both")
    mu = sensitivity / noise_std
    tight = gaussian_epsilon(delta, mu)
    if claimed_epsilon is not None:
        claim = dict(claimed_epsilon=check_real("claimed_epsilon", claimed_epsilon, nonnegative=True))
    else:
        claim = dict(claimed_mu=mu if claimed_mu is None else check_real("claimed_mu", claimed_mu, nonnegative=True))
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
        sample=sample, **claim, delta=delta, tight_epsilon=tight, mu=mu,
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

    q: sampling probability; noise_std: σ (= noise multiplier z, Δ = 1); delta: δ.  The claim is (ε, δ): ε from
    the RDP accountant (``reference.fast.rdp.rdp_poisson_gaussian`` on ``DEFAULT_ORDERS``, converted by
    ``epsilon_from_rdp``; the subsampled Gaussian is not μ-GDP for any useful μ, and no μ is claimed); tight ε:
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
# Tree aggregation: all T released prefix sums (zo_o2nc Alg 5, Thm 4.3 exact version)


def tree_release_matrix(steps) -> np.ndarray:
    """R with R[t−1, b−1] = 1[b ∈ R(t)] (zo_o2nc Alg 5): TREE(t) = (R ξ)_t, shape (steps, steps).

    Built as ``tree_prefix_noise`` of the identity, so it is the very map the sampler applies to the node noise.
    R is unit lower triangular (b = t is always in R(t)), hence invertible.
    """
    steps = check_int("steps", steps, minimum=1)
    return tree_prefix_noise(np.eye(steps))


def tree_prefix_shift(steps, leaf=1, sensitivity=1.0) -> np.ndarray:
    """P (s e_q): the change of the T noiseless prefix sums when leaf q moves by s (P lower-triangular ones),
    i.e. s·1[t ≥ q], t = 1..T."""
    steps = check_int("steps", steps, minimum=1)
    leaf = check_int("leaf", leaf, minimum=1, maximum=steps)
    sensitivity = check_real("sensitivity", sensitivity, positive=True)
    change = np.zeros(steps)
    change[leaf - 1] = sensitivity
    return np.cumsum(change)


def tree_prefix_mu(steps, noise_std, leaf=1, sensitivity=1.0) -> float:
    """Exact GDP μ of the T released prefix sums for a change of s in leaf q, from the covariance:

        μ = √((P s e_q)ᵀ (R Rᵀ)^{-1} (P s e_q)) / σ,

    the Mahalanobis distance of N(0, σ² R Rᵀ) and N(P s e_q, σ² R Rᵀ) (Dong–Roth–Su Thm 2.7 after whitening).
    zo_o2nc Thm 4.3 (exact version): R^{-1} P e_q is the indicator of the nodes containing q, so μ = s√c_q(T)/σ.
    """
    noise_std = check_real("noise_std", noise_std, positive=True)
    shift = tree_prefix_shift(steps, leaf, sensitivity)
    release = tree_release_matrix(len(shift))
    whitened = np.linalg.solve(release, shift)  # R^{-1} P s e_q; (R Rᵀ)^{-1} = R^{-T} R^{-1}
    return float(math.sqrt(float(whitened @ whitened)) / noise_std)


def _tree_accountant_mu(steps, noise_std) -> float:
    """μ the accountant assigns one tree: its RDP α·c/(2z²) (``rdp_tree_aggregation``, c = ⌊log2 T⌋ + 1) is the
    RDP curve αμ²/2 of μ-GDP with μ² = 2·RDP(α)/α (exact at any α; α = 2 here)."""
    order = 2.0
    rdp = float(rdp_tree_aggregation(np.array([order]), noise_std, steps)[0])
    return math.sqrt(2 * rdp / order)


def tree_prefix_scenario(steps=16, noise_std=None, delta=1e-5, *, leaf=1, name=None) -> Scenario:
    """The tree mechanism's T released prefix sums (zo_o2nc Alg 5 / Thm 4.3) on a leaf-change pair.

    steps: T leaves; noise_std: σ of every node noise ξ_b (default: the σ whose exact ε at δ is 1, i.e.
    σ = √c_q(T)/μ*(1, δ)); delta: δ; leaf: q, the leaf whose value changes by 1 (default 1, the worst case,
    participation count c_1(T) = ⌊log2 T⌋ + 1).  D: leaves m = 0; D': m = e_q.  Output (trials, T): row t−1 is
    Σ_{i≤t} m_i + TREE(t), computed by ``reference.fast.mechanisms.tree_aggregate``.

    The release is N(P m, σ² R Rᵀ), so the pair is μ-GDP exactly with μ = ``tree_prefix_mu`` (= √c_q/σ); tight ε
    = ε_μ(δ).  The claim is μ-GDP with μ_acc = √(⌊log2 T⌋ + 1)/σ: the accountant's tree RDP
    (``rdp_tree_aggregation``, count ⌊log2 T⌋ + 1) is the RDP curve of that Gaussian, and the accountant's ε,
    ε_{μ_acc}(δ) by the exact GDP profile, is valid only because zo_o2nc Thm 4.3 (exact version) states the
    release μ-GDP with μ ≤ μ_acc for every leaf — the μ-GDP statement is the claim the ε rests on.
    log dP_{D'}/dP_D (x) = vᵀ(R Rᵀ)^{-1} x/σ² − μ²/2, v = P e_q (linear in x).
    Draws: ``standard_normal((trials, T, 1))``, scaled by σ, as the node noise ξ of every trial.
    """
    steps = check_int("steps", steps, minimum=1)
    leaf = check_int("leaf", leaf, minimum=1, maximum=steps)
    delta = check_probability("delta", delta)
    if noise_std is None:
        noise_std = math.sqrt(participation_count(leaf, steps)) / gaussian_mu(1.0, delta)
    noise_std = check_real("noise_std", noise_std, positive=True)
    shift = tree_prefix_shift(steps, leaf)
    release = tree_release_matrix(steps)
    weights = np.linalg.solve(release @ release.T, shift) / noise_std**2  # Σ^{-1} v
    mu = tree_prefix_mu(steps, noise_std, leaf)
    tight = gaussian_epsilon(delta, mu)
    claimed_mu = _tree_accountant_mu(steps, noise_std)
    leaves = (np.zeros((steps, 1)), np.zeros((steps, 1)))  # m on D and on D'
    leaves[1][leaf - 1, 0] = 1.0

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        node_noise = noise_std * rng.standard_normal((trials, steps, 1))
        return tree_aggregate(leaves[which], node_noise)[..., 0]

    def log_likelihood_ratio(outputs):
        outputs = np.asarray(outputs, dtype=np.float64)
        if outputs.ndim != 2 or outputs.shape[1] != steps:
            raise ValueError(f"outputs must have shape (trials, {steps}), got {outputs.shape}")
        return outputs @ weights - mu**2 / 2

    return Scenario(
        name=name or f"tree(steps={steps},noise_std={noise_std:g},leaf={leaf})",
        description=f"tree aggregation, T={steps} prefix sums, leaf {leaf} changed by 1, σ={noise_std:g}, μ={mu:.6g}",
        sample=sample, claimed_mu=claimed_mu, delta=delta, tight_epsilon=tight, mu=mu,
        log_likelihood_ratio=log_likelihood_ratio,
    )


# ---------------------------------------------------------------------------------------------------
# One zeroth-order (DPZero) release


def zeroth_order_pair(d=5, n=10, clip_threshold=1.0, perturbation=1e-3, *, lipschitz=1.0, public_seed=0):
    """The noiseless part of one DPZero release (dpzero Alg 2 lines 3–6) on a worst-case replace-one pair.

    Public randomness, from ``Streams(public_seed)`` and shared by both datasets: the direction
    u ~ Unif(√d S^{d−1}) (key ("zeroth_order", "direction")) and n − 1 ridge records (zo_o2nc §2 smoothing, ``RidgeSum``
    with profile "abs", key ("zeroth_order", "data")); the point is x = 0.  Record n differs: on D it is
    (a, c) = (u/‖u‖, +M), on D' (u/‖u‖, −M) with M = perturbation·‖u‖ + 1, so the residual ⟨a, x ± λu⟩ − c never
    crosses the kink and its finite difference is ∓L‖u‖, clipped to ∓C (needs C < L‖u‖ = L√d).

    d: dimension; n: records; clip_threshold: C; perturbation: λ; lipschitz: L.
    Returns (means, differences): means[k] = clipped_mean(a^{(k)}, C) on D (k = 0) and D' (k = 1), the
    releases before noise; differences: (2, n) per-sample finite differences a_i (``per_sample_finite_differences``).
    """
    d = check_int("d", d, minimum=1)
    n = check_int("n", n, minimum=1)
    clip_threshold = check_real("clip_threshold", clip_threshold, positive=True)
    perturbation = check_real("perturbation", perturbation, positive=True)
    lipschitz = check_real("lipschitz", lipschitz, positive=True)
    public_seed = check_int("public_seed", public_seed, minimum=0)
    streams = Streams(public_seed)
    direction = sample_sphere(streams.generator("zeroth_order", "direction"), (), d, radius=math.sqrt(d))
    length = float(np.linalg.norm(direction))
    if not clip_threshold < lipschitz * length:
        raise ValueError(f"clip_threshold must be < lipschitz·√d = {lipschitz * length:g} so that the differing "
                         f"record's finite difference is clipped to ±C, got {clip_threshold:g}")
    shared = RidgeSum.random(d, n - 1, streams.generator("zeroth_order", "data"), lipschitz=lipschitz) \
        if n > 1 else None
    unit = direction / length
    margin = perturbation * length + 1.0
    x = np.zeros(d)
    means, differences = [], []
    for offset in (margin, -margin):  # D: residual −M (difference −L‖u‖); D': +M (difference +L‖u‖)
        record = np.concatenate([unit, [offset]])[None, :]
        rows = record if shared is None else np.vstack([shared.data, record])
        objective = RidgeSum(rows[:, :d], rows[:, d], lipschitz=lipschitz)
        a = per_sample_finite_differences(objective.loss, x, objective.data, direction, perturbation)
        differences.append(a)
        means.append(float(clipped_mean(a, clip_threshold)))
    return np.array(means), np.array(differences)


def zeroth_order_scenario(d=5, noise_std=None, delta=1e-5, *, n=10, clip_threshold=1.0, perturbation=1e-3,
                          lipschitz=1.0, public_seed=0, name=None) -> Scenario:
    """One DPZero scalar release (dpzero Alg 2 lines 3–7): clip_C-averaged finite differences along a public u,
    plus N(0, σ²), on the worst-case replace-one pair of ``zeroth_order_pair`` (clipped difference −C on D,
    +C on D').

    d, n, clip_threshold (C), perturbation (λ), lipschitz (L), public_seed: see ``zeroth_order_pair``;
    noise_std: σ (default: the σ with exact ε = 1 at δ, i.e. σ = 2C/(n μ*(1, δ))); delta: δ.
    The noiseless part is computed once (it does not depend on the trial); the two means differ by 2C/n, the
    replace-one sensitivity.  True μ = 2C/(nσ) (Dong–Roth–Su Thm 2.7); tight ε = ε_μ(δ).  The claim is μ-GDP
    with μ = the accountant's sensitivity ``clipped_mean_sensitivity(C, n, "replace_one")``/σ (the
    ``dpzero_gdp_exact_sigma`` accounting, one step, which states the Gaussian mechanism's μ); claimed ε =
    ε_μ(δ).
    log dP_{D'}/dP_D (x) = (m' − m)(x − (m + m')/2)/σ², increasing in the release x (so the release itself is an
    equivalent score).  Draws: ``standard_normal((trials, 1))``.
    """
    delta = check_probability("delta", delta)
    means, _ = zeroth_order_pair(d, n, clip_threshold, perturbation, lipschitz=lipschitz, public_seed=public_seed)
    sensitivity = 2 * clip_threshold / n
    if noise_std is None:
        noise_std = sensitivity / gaussian_mu(1.0, delta)
    noise_std = check_real("noise_std", noise_std, positive=True)
    mu = sensitivity / noise_std
    tight = gaussian_epsilon(delta, mu)
    claimed_mu = clipped_mean_sensitivity(clip_threshold, n, "replace_one") / noise_std
    gap, midpoint = means[1] - means[0], (means[0] + means[1]) / 2

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        return means[which] + noise_std * rng.standard_normal((trials, 1))

    def log_likelihood_ratio(outputs):
        outputs = np.asarray(outputs, dtype=np.float64)
        if outputs.ndim != 2 or outputs.shape[1] != 1:
            raise ValueError(f"outputs must have shape (trials, 1), got {outputs.shape}")
        return gap * (outputs[:, 0] - midpoint) / noise_std**2

    return Scenario(
        name=name or f"zeroth_order(d={d},n={n},C={clip_threshold:g},noise_std={noise_std:g})",
        description=f"one DPZero release, d={d}, n={n}, C={clip_threshold:g}, σ={noise_std:g}, μ={mu:.6g}",
        sample=sample, claimed_mu=claimed_mu, delta=delta, tight_epsilon=tight, mu=mu,
        log_likelihood_ratio=log_likelihood_ratio,
    )


#: μ whose exact GDP ε at δ = 1e-5 is 1 (so the ``gaussian`` built-in has tight ε = 1).
GAUSSIAN_BUILTIN_MU = gaussian_mu(1.0, 1e-5)
