"""Planted privacy bugs and their correctly implemented twins (DESIGN.md, empirical_dp/ "planted bugs"): each bug is a
``Scenario`` whose ``claimed_epsilon`` is what the buggy accountant claims and whose ``sample`` runs the buggy
mechanism on a worst-case neighbouring pair, with the attack that exposes it and a trial budget within which
``empirical_dp.audit.audit`` must report a violation. Each twin runs the correct mechanism against the same claim
(or, for the sampling bug, the correct accountant) and must be reported "consistent".

Sources:
- Dong, Roth, Su 2022 (JRSS-B) Thm 2.7 / Cor. 2.13: the Gaussian mechanism with sensitivity Δ and noise σ is
  exactly μ-GDP, μ = Δ/σ, and its tight ε(δ); calibration for ε = 1 at δ = 1e-5 uses σ = Δ/μ(1, 1e-5).
- Mironov, Talwar, Zhang 2019 §3.3: the RDP of the Poisson-subsampled Gaussian (the claim of bug 3).
- Zhang et al. 2024 (ICLR), "DPZero" (dpzero.md §2.0): the private scalar s = clip_C(a) + σz released along a
  public direction u; the randomness contract of ``reference.rng`` forbids drawing z from u's stream.

The bugs (the issue's list):
1. ``noise_halved``: clipped mean (replace-one, Δ = 2C/n) calibrated for ε = 1, run with σ/2 (true μ doubles).
2. ``sensitivity_c_over_n``: σ calibrated for Δ = C/n while the replace-one pair (+C vs −C) has Δ = 2C/n.
3. ``poisson_accounted_shuffle_run``: ε claimed by the Poisson-subsampled RDP accountant with q = B/n for one
   step, while the run takes the first B records of a shuffle by a PUBLIC permutation. Threat model: the data order
   is public randomness (``reference.rng``), fixed from a public seed before the data are chosen, so the adversary
   who picks the neighbouring pair puts the differing record at a position inside the released batch. Given the
   permutation the step is the unsampled Gaussian mechanism: no amplification, true ε = ε_Gauss(δ, 1/σ).
4. ``noise_from_direction_seed``: DPZero scalar s = mean_i clip_C(⟨g_i, u⟩) + σz with z drawn from the SAME
   generator (key ("dpzero", "direction", t) under the public seed) right after u. Threat model: the direction
   seed is public (released so others can regenerate u); the attacker regenerates u and z, and s − σz is the
   clipped mean exactly, so the two datasets are perfectly distinguished. The fix draws z from a separate key
   ("dpzero", "noise", t) under a secret seed that is not released.

Randomness: each scenario's ``sample(rng, trials, which)`` draws from the generator it is given, in the order
stated in its docstring.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from reference.fast.conversions import epsilon_from_rdp, gaussian_epsilon, gaussian_mu
from reference.fast.rdp import DEFAULT_ORDERS, rdp_poisson_gaussian
from reference.rng import Streams, sample_sphere
from reference.validation import check_int, check_probability, check_real

from .attacks import likelihood_ratio_score
from .audit import AuditResult, audit
from .scenarios import Scenario, poisson_gaussian_scenario

__all__ = [
    "calibrated_noise_std",
    "clipped_mean_scenario",
    "noise_halved_scenario",
    "sensitivity_c_over_n_scenario",
    "shuffle_run_scenario",
    "poisson_run_scenario",
    "direction_seed_scenario",
    "direction_seed_attack",
    "PLANTED",
    "TWINS",
    "audit_planted",
    "audit_twin",
]

CLAIMED_EPSILON = 1.0
DELTA = 1e-5


def _check_sample_args(rng, trials, which) -> tuple[int, int]:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return check_int("trials", trials, minimum=0), check_int("which", which, minimum=0, maximum=1)


def _check_outputs(outputs, columns: int) -> np.ndarray:
    outputs = np.asarray(outputs, dtype=np.float64)
    if outputs.ndim != 2 or outputs.shape[1] != columns:
        raise ValueError(f"outputs must have shape (trials, {columns}), got {outputs.shape}")
    return outputs


def calibrated_noise_std(sensitivity, epsilon, delta) -> float:
    """σ = Δ/μ with μ the exact GDP μ whose ε(δ) is ε (Dong–Roth–Su Cor. 2.13): the Gaussian mechanism's
    calibration. sensitivity: Δ; epsilon: ε; delta: δ."""
    sensitivity = check_real("sensitivity", sensitivity, positive=True)
    epsilon = check_real("epsilon", epsilon, positive=True)
    delta = check_probability("delta", delta)
    return sensitivity / gaussian_mu(epsilon, delta)


# ---------------------------------------------------------------------------------------------------
# Bugs 1 and 2: the clipped mean


def clipped_mean_scenario(records, clip_threshold, noise_std, claimed_epsilon, delta, *, name) -> Scenario:
    """Gaussian clipped mean of scalar records on the replace-one pair that changes record 0 from −C (D) to +C (D').

    records: the other n − 1 public records (1-D); clip_threshold: C; noise_std: σ the mechanism RUNS with;
    claimed_epsilon: what the accountant claims at ``delta``. Release: (1/n) Σ_i clip_C(x_i) + σz, z ~ N(0, 1),
    drawn as ``standard_normal((trials, 1))``. The pair differs by 2C/n (the worst case), so the mechanism is
    μ-GDP with μ = (2C/n)/σ; the likelihood ratio is that of the two Gaussians.
    """
    records = np.asarray(records, dtype=np.float64)
    if records.ndim != 1 or not np.all(np.isfinite(records)):
        raise ValueError("records must be a finite 1-D array")
    clip_threshold = check_real("clip_threshold", clip_threshold, positive=True)
    noise_std = check_real("noise_std", noise_std, positive=True)
    claimed_epsilon = check_real("claimed_epsilon", claimed_epsilon, nonnegative=True)
    delta = check_probability("delta", delta)
    n = records.size + 1
    datasets = [np.concatenate([[-clip_threshold], records]), np.concatenate([[clip_threshold], records])]
    means = [float(np.mean(np.clip(x, -clip_threshold, clip_threshold))) for x in datasets]
    mu = abs(means[1] - means[0]) / noise_std

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        return means[which] + noise_std * rng.standard_normal((trials, 1))

    def log_likelihood_ratio(outputs):
        x = _check_outputs(outputs, 1)[:, 0]
        return ((x - means[0]) ** 2 - (x - means[1]) ** 2) / (2 * noise_std**2)

    return Scenario(
        name=name, description=f"clipped mean, n={n}, C={clip_threshold:g}, σ={noise_std:.6g}, μ={mu:.6g}",
        sample=sample, claimed_epsilon=claimed_epsilon, delta=delta, tight_epsilon=gaussian_epsilon(delta, mu),
        mu=mu, log_likelihood_ratio=log_likelihood_ratio,
    )


def _check_mean_args(n, clip_threshold):
    return check_int("n", n, minimum=2), check_real("clip_threshold", clip_threshold, positive=True)


def noise_halved_scenario(n=100, clip_threshold=1.0, *, buggy=True) -> Scenario:
    """Bug 1: σ calibrated for Δ = 2C/n at ε = 1, δ = 1e-5, but the mechanism runs with σ/2 (``buggy=False``:
    with σ). n: dataset size; clip_threshold: C."""
    n, clip_threshold = _check_mean_args(n, clip_threshold)
    sigma = calibrated_noise_std(2 * clip_threshold / n, CLAIMED_EPSILON, DELTA)
    run_sigma = sigma / 2 if buggy else sigma
    return clipped_mean_scenario(np.zeros(n - 1), clip_threshold, run_sigma, CLAIMED_EPSILON, DELTA,
                                 name="noise_halved" if buggy else "noise_halved_twin")


def sensitivity_c_over_n_scenario(n=100, clip_threshold=1.0, *, buggy=True) -> Scenario:
    """Bug 2: σ calibrated at ε = 1, δ = 1e-5 for Δ = C/n (``buggy=False``: the correct replace-one Δ = 2C/n), run
    on the pair +C vs −C. n: dataset size; clip_threshold: C."""
    n, clip_threshold = _check_mean_args(n, clip_threshold)
    sensitivity = clip_threshold / n if buggy else 2 * clip_threshold / n
    sigma = calibrated_noise_std(sensitivity, CLAIMED_EPSILON, DELTA)
    return clipped_mean_scenario(np.zeros(n - 1), clip_threshold, sigma, CLAIMED_EPSILON, DELTA,
                                 name="sensitivity_c_over_n" if buggy else "sensitivity_c_over_n_twin")


# ---------------------------------------------------------------------------------------------------
# Bug 3: Poisson accounted, fixed-size shuffled batch run


def _poisson_claim(q, noise_std, delta) -> float:
    """ε claimed by the Poisson-subsampled Gaussian RDP accountant for one step (Mironov–Talwar–Zhang 2019)."""
    epsilon, _ = epsilon_from_rdp(DEFAULT_ORDERS, rdp_poisson_gaussian(DEFAULT_ORDERS, q, noise_std), delta)
    return float(epsilon)


def shuffle_run_scenario(n=1000, batch_size=10, noise_std=1.0, delta=DELTA, *, public_seed=0) -> Scenario:
    """Bug 3: the sum of a fixed-size batch (the first B = batch_size records of a public shuffle) plus N(0, σ²),
    claimed with the Poisson accountant at q = B/n.

    n: dataset size; batch_size: B; noise_std: σ (noise multiplier, Δ = 1: records in [0, 1]); public_seed: seed of
    the public data order, key ("data_order",). The adversary, knowing the permutation, puts the differing record
    (0 in D, 1 in D'; the others 0) at the shuffled position 0, so it is always in the batch. Draws:
    ``standard_normal((trials, 1))``. True ε: the unsampled Gaussian's, ε_Gauss(δ, 1/σ).
    """
    n = check_int("n", n, minimum=2)
    batch_size = check_int("batch_size", batch_size, minimum=1, maximum=n - 1)
    noise_std = check_real("noise_std", noise_std, positive=True)
    delta = check_probability("delta", delta)
    public_seed = check_int("public_seed", public_seed, minimum=0)
    permutation = Streams(public_seed).generator("data_order").permutation(n)
    target = int(permutation[0])  # the adversary's choice: an index the public shuffle puts in the batch
    datasets = [np.zeros(n), np.zeros(n)]
    datasets[1][target] = 1.0
    batch = permutation[:batch_size]
    sums = [float(np.sum(x[batch])) for x in datasets]

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        return sums[which] + noise_std * rng.standard_normal((trials, 1))

    def log_likelihood_ratio(outputs):
        x = _check_outputs(outputs, 1)[:, 0]
        return ((x - sums[0]) ** 2 - (x - sums[1]) ** 2) / (2 * noise_std**2)

    q = batch_size / n
    return Scenario(
        name="poisson_accounted_shuffle_run",
        description=f"fixed batch B={batch_size} of n={n} from a public shuffle, σ={noise_std:g}, claimed as Poisson "
                    f"q={q:g}",
        sample=sample, claimed_epsilon=_poisson_claim(q, noise_std, delta), delta=delta,
        tight_epsilon=gaussian_epsilon(delta, 1 / noise_std), mu=1 / noise_std,
        log_likelihood_ratio=log_likelihood_ratio,
    )


def poisson_run_scenario(n=1000, batch_size=10, noise_std=1.0, delta=DELTA) -> Scenario:
    """Twin of bug 3: the step really is Poisson-subsampled (q = B/n) and accounted as such
    (``scenarios.poisson_gaussian_scenario``)."""
    n = check_int("n", n, minimum=2)
    batch_size = check_int("batch_size", batch_size, minimum=1, maximum=n - 1)
    return poisson_gaussian_scenario(batch_size / n, noise_std, delta, name="poisson_accounted_poisson_run")


# ---------------------------------------------------------------------------------------------------
# Bug 4: DP noise drawn from the public direction's stream


def _dpzero_release(public_seed: int, secret_seed: int, gradients: np.ndarray, clip_threshold: float,
                    noise_std: float, dimension: int, same_stream: bool) -> float:
    """One DPZero step's private scalar (dpzero.md §2.0): u ~ Unif(√d S^{d−1}) from key ("dpzero", "direction", 0)
    under the public seed; s = (1/n) Σ_i clip_C(⟨g_i, u⟩) + σz, z from the SAME generator right after u
    (``same_stream``, the bug) or from key ("dpzero", "noise", 0) under the secret seed (the fix)."""
    direction_rng = Streams(public_seed).generator("dpzero", "direction", 0)
    u = sample_sphere(direction_rng, (), dimension, math.sqrt(dimension))
    noise_rng = direction_rng if same_stream else Streams(secret_seed).generator("dpzero", "noise", 0)
    z = noise_rng.standard_normal()
    clipped_mean = float(np.mean(np.clip(gradients @ u, -clip_threshold, clip_threshold)))
    return clipped_mean + noise_std * z


def direction_seed_scenario(n=100, clip_threshold=1.0, dimension=8, *, buggy=True) -> Scenario:
    """Bug 4 (``buggy=True``) or its fix: DPZero's released scalar with the public direction seed as part of the
    output, outputs (trials, 2) = (s, public seed).

    Pair: record 0's per-example gradient is −M·1 (D) or +M·1 (D'), M = 1e6·C, the others 0, so ⟨g_0, u⟩ is
    clipped to ∓C·sign(Σu) (non-zero with probability 1); σ is calibrated for Δ = 2C/n at ε = 1, δ = 1e-5, which
    is tight given u. Draws per call: ``integers(0, 2**31, trials)`` public seeds, then
    ``integers(0, 2**31, trials)`` secret seeds (unused by the bug, drawn anyway so both share one schedule).
    """
    n = check_int("n", n, minimum=2)
    clip_threshold = check_real("clip_threshold", clip_threshold, positive=True)
    dimension = check_int("dimension", dimension, minimum=1)
    sigma = calibrated_noise_std(2 * clip_threshold / n, CLAIMED_EPSILON, DELTA)
    large = 1e6 * clip_threshold
    gradients = [np.zeros((n, dimension)), np.zeros((n, dimension))]
    gradients[0][0], gradients[1][0] = -large, large

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        public = rng.integers(0, 2**31, trials)
        secret = rng.integers(0, 2**31, trials)
        out = np.empty((trials, 2))
        for i in range(trials):
            out[i, 0] = _dpzero_release(int(public[i]), int(secret[i]), gradients[which], clip_threshold, sigma,
                                        dimension, buggy)
            out[i, 1] = public[i]
        return out

    return Scenario(
        name="noise_from_direction_seed" if buggy else "noise_from_direction_seed_twin",
        description=f"DPZero scalar, n={n}, C={clip_threshold:g}, d={dimension}, noise "
                    + ("from the direction's stream" if buggy else "from a separate secret noise key"),
        sample=sample, claimed_epsilon=CLAIMED_EPSILON, delta=DELTA,
        tight_epsilon=None if buggy else CLAIMED_EPSILON,
    )


def direction_seed_attack(n=100, clip_threshold=1.0, dimension=8) -> Callable[[np.ndarray], np.ndarray]:
    """The attacker of bug 4: from the public seed regenerate u and the would-be noise z from key
    ("dpzero", "direction", 0) (u first, then z, as the buggy code draws them), form r = s − σz, and score
    |r − m_D(u)| − |r − m_{D'}(u)| with m_D(u) = −clip(M⟨1, u⟩)/n, m_{D'}(u) = +clip(M⟨1, u⟩)/n the two clipped
    means. Against the bug r is the clipped mean exactly; against the fix z is unrelated to the noise."""
    n = check_int("n", n, minimum=2)
    clip_threshold = check_real("clip_threshold", clip_threshold, positive=True)
    dimension = check_int("dimension", dimension, minimum=1)
    sigma = calibrated_noise_std(2 * clip_threshold / n, CLAIMED_EPSILON, DELTA)
    large = 1e6 * clip_threshold

    def score(outputs):
        outputs = _check_outputs(outputs, 2)
        scores = np.empty(len(outputs))
        for i, (released, seed) in enumerate(outputs):
            rng = Streams(int(seed)).generator("dpzero", "direction", 0)
            u = sample_sphere(rng, (), dimension, math.sqrt(dimension))
            z = rng.standard_normal()
            residual = released - sigma * z
            mean_d_prime = float(np.clip(large * np.sum(u), -clip_threshold, clip_threshold)) / n
            scores[i] = abs(residual + mean_d_prime) - abs(residual - mean_d_prime)
        return scores

    return score


# ---------------------------------------------------------------------------------------------------
# Registry and audit


def _likelihood_ratio_attack(scenario: Scenario):
    return likelihood_ratio_score(scenario)


#: name → (scenario factory, attack factory (scenario → score), trial budget per dataset): the audit at this budget
#: (confidence 0.95) must report "violation".
PLANTED: dict[str, tuple[Callable[[], Scenario], Callable[[Scenario], Callable], int]] = {
    "noise_halved": (noise_halved_scenario, _likelihood_ratio_attack, 4000),
    "sensitivity_c_over_n": (sensitivity_c_over_n_scenario, _likelihood_ratio_attack, 4000),
    "poisson_accounted_shuffle_run": (shuffle_run_scenario, _likelihood_ratio_attack, 2000),
    "noise_from_direction_seed": (direction_seed_scenario, lambda scenario: direction_seed_attack(), 1000),
}

#: The correctly implemented twins, same layout; the audit at the budget must report "consistent".
TWINS: dict[str, tuple[Callable[[], Scenario], Callable[[Scenario], Callable], int]] = {
    "noise_halved": (lambda: noise_halved_scenario(buggy=False), _likelihood_ratio_attack, 4000),
    "sensitivity_c_over_n": (lambda: sensitivity_c_over_n_scenario(buggy=False), _likelihood_ratio_attack, 4000),
    "poisson_accounted_shuffle_run": (poisson_run_scenario, _likelihood_ratio_attack, 2000),
    "noise_from_direction_seed": (lambda: direction_seed_scenario(buggy=False),
                                  lambda scenario: direction_seed_attack(), 1000),
}


def _run(registry: dict, name, seed, trials, confidence) -> AuditResult:
    if not isinstance(name, str) or name not in registry:
        raise ValueError(f"name must be one of {sorted(registry)}, got {name!r}")
    scenario_factory, attack_factory, budget = registry[name]
    trials = budget if trials is None else check_int("trials", trials, minimum=2)
    scenario = scenario_factory()
    return audit(scenario, trials, seed=seed, attack=attack_factory(scenario), confidence=confidence)


def audit_planted(name, seed, trials=None, *, confidence=0.95) -> AuditResult:
    """Audit planted bug ``name`` (a key of ``PLANTED``) with ``trials`` outputs per dataset (default: its stated
    budget) and its exposing attack; the expected verdict is "violation"."""
    return _run(PLANTED, name, seed, trials, confidence)


def audit_twin(name, seed, trials=None, *, confidence=0.95) -> AuditResult:
    """Audit the correct twin of planted bug ``name`` (a key of ``TWINS``); the expected verdict is "consistent"."""
    return _run(TWINS, name, seed, trials, confidence)
