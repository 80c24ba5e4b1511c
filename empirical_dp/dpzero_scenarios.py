"""Audit scenarios for DPZero run through the algorithm itself (dpzero Algorithm 2; threat model and privacy:
Lemma 2.2 and App. E, mini-batches §5 and App. B.2; erratum E13).

Sources:
- Zhang, Li, Thekumparampil, Oh, He 2024 (ICML), "DPZero", Alg 2 lines 3–6 and App. E (privacy guarantee): the only data-dependent
  release of step t is the scalar ŝ_t = m_t + z_t along the PUBLIC direction u_t; the proof covers the whole
  transcript (u_0, ŝ_0, …, u_{T−1}, ŝ_{T−1}) and every post-processing of it (x_τ, x_T, the trajectory).
- Dong, Roth, Su 2022 (JRSS-B) Thm 2.7, Cor. 2.13, Cor. 3.3: N(m, σ²I_T) against N(m', σ²I_T) is exactly μ-GDP with
  μ = ‖m' − m‖/σ; T adaptive steps of sensitivity Δ each compose to √T·Δ/σ.
- Mironov, Talwar, Zhang 2019 §3.3 (the RDP of the Poisson-subsampled Gaussian: the claim of the Poisson run);
  Koskela, Jälkö, Honkela 2020 / Doroshenko et al. 2022 (privacy loss distributions, ``reference.accounting.pld``):
  its tight ε, the upper end of a certified interval around the exact ε (``poisson_pld_interval``).
- Nasr et al. 2021 (S&P) §4, Nasr et al. 2023 (USENIX) "Tight auditing": the worst-case dataset of a gradient
  audit is one canary whose clipped contribution is ±C along the release and other records contributing nothing.

Threat model (dpzero App. E: the directions are never used for privacy). Replace-one neighbours (full batch) or zero-out (Poisson: one record replaced by a
null record, the relation of the plan's RDP claim; labelled "add_remove" in ``canary_pair``), n public. The attacker knows everything except the secret
noise seed: x_0, (T, α, λ, C, ε, δ), both datasets, the public seed (so every u_t) and the released transcript
(ŝ_0, …, ŝ_{T−1}), returned as ``DPResult.releases``. The guarantee holds conditional on the directions, so ONE
public seed serves all trials; every trial gets its own secret noise seed.

The canary pair (``canary_pair``). The loss is linear, f(x; ξ) = ⟨ξ, x⟩ (``linear_loss``), so the central difference
of record ξ at any x_t is ⟨ξ, u_t⟩, whatever the trajectory. The n − 1 other records are ξ = 0 (zero loss:
difference 0, known to the attacker). The canary is record 0, ξ = ±M·e_1 with M = ``canary_scale``·C, so its
difference is ±M⟨e_1, u_t⟩ and its clipped difference ±C·s_t, s_t = sign(⟨e_1, u_t⟩) (the builder checks that
M|⟨e_1, u_t⟩| exceeds C by a wide margin at every step of the public seed, so the clip binds). Replace-one
(full batch): D has −M·e_1, D′ has +M·e_1, so m_t = ∓C s_t/n and the per-step shift is exactly 2C/n = Δ in
every step. Zero-out (Poisson; ``relation="add_remove"``): D has the zero record in slot 0 (a zero-loss record contributes exactly what an
absent one does under the fixed normaliser B), D′ the canary +M·e_1, so a step that samples the canary shifts by
C/B = Δ. (Not the pair of ``scenarios.zeroth_order_pair``: its direction comes from its own key, not the
algorithm's ("dpzero", "direction", t), and its ridge records' differences depend on x_t, which over a whole run
would tie the law and the attacker to the trajectory; the linear records give the same ∓C canary with
x-independent differences, so one construction serves T = 1 and T = 100.)

Scores. Full batch: the release is N(m, σ²I_T) vs N(m', σ²I_T) with m' − m = (2C/n)s, so the log-likelihood ratio
is (2C/(nσ²))·Σ_t s_t ŝ_t: the attack statistic Σ_t sign(⟨e_1, u_t⟩)·ŝ_t, optimal (Neyman–Pearson), and the run is
exactly μ-GDP with μ = √T·(2C/n)/σ. Poisson: steps are independent given the public directions, D gives ŝ_t ~
N(0, σ²), D′ gives (1 − q)N(0, σ²) + qN(c s_t, σ²), c = C/B, so the LLR is Σ_t log(1 − q + q·exp((2c s_t ŝ_t −
c²)/(2σ²))).

Randomness. ``sample(rng, trials, which)`` draws ``integers(0, 2**62, trials)`` secret noise seeds and nothing
else; the run draws u_t from ("dpzero", "direction", t) under the public seed, z_t from ("dpzero", "noise") and
the Poisson coins from ("dpzero", "sampling") under the trial's noise seed (``reference.algorithms.dpzero``). The
``"fast"`` backend (``reference.fast.dpzero``, replicates batched) and the ``"reference"`` backend (one plain-loop
run per trial) consume the same draws, so they agree draw for draw.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq

from reference.accounting import pld
from reference.algorithms import dpzero as reference_dpzero
from reference.algorithms.dpzero import direction_for_step, privacy_plan
from reference.fast import dpzero as fast_dpzero
from reference.fast.conversions import gaussian_epsilon
from reference.validation import check_int, check_probability, check_real

from .scenarios import Scenario

__all__ = [
    "BACKENDS",
    "SEED_BOUND",
    "linear_loss",
    "CanaryPair",
    "canary_pair",
    "dpzero_releases",
    "lemma22_epsilon",
    "PLD_TOLERANCE",
    "poisson_pld_interval",
    "poisson_pld_epsilon",
    "DPZeroAuditSetup",
    "dpzero_run_setup",
    "dpzero_scenario",
    "GDP_ACCOUNTANTS",
    "plan_claim",
    "dpzero_run_scenario",
    "dpzero_step_scenario",
    "dpzero_full_run_scenario",
    "dpzero_poisson_run_scenario",
    "DPZERO_BUILTINS",
]

#: "fast": ``reference.fast.dpzero.dpzero`` on all trials (or a chunk) at once; "reference": one plain-loop run each.
BACKENDS = ("fast", "reference")
#: Secret noise seeds are drawn uniformly from [0, SEED_BOUND).
SEED_BOUND = 2**62
#: Default M/C of the canary: its difference M⟨e_1, u_t⟩ must exceed C for the clip to bind.
CANARY_SCALE = 1e6
#: The clip must bind with this factor to spare at every step (rounding in the difference is ~1e-16·M|x|/λ).
_CLIP_MARGIN = 1e3


def linear_loss(point, row):
    """f(x; ξ) = ⟨ξ, x⟩, for one point (d,) and row (d,) (reference) or stacked points and rows that broadcast
    (fast twin). Its central difference along u is ⟨ξ, u⟩ at every x (up to rounding).

    Summed coordinate by coordinate, left to right, in both conventions, so the reference and the fast twin get
    bitwise equal losses (and the broadcast product is never materialised with a short last axis, whose
    reduction would dominate a fast run's time)."""
    point, row = np.asarray(point), np.asarray(row)
    total = point[..., 0] * row[..., 0]
    for k in range(1, point.shape[-1]):
        total = total + point[..., k] * row[..., k]
    return total


# ---------------------------------------------------------------------------------------------------
# The pair


@dataclass(frozen=True)
class CanaryPair:
    """A worst-case DPZero pair (module docstring).

    datasets: (D, D′), each (n, d); relation: "replace_one" or "add_remove"; directions: (T, d), u_t of the public
    seed; signs: (T,), s_t = sign(⟨e_1, u_t⟩) ∈ {−1, +1}; canary_differences: (2, T), the canary's clipped
    difference clip_C(M·(∓)⟨e_1, u_t⟩) on D and on D′ (−C s_t, +C s_t for replace-one; 0, +C s_t for add/remove).
    """

    datasets: tuple[np.ndarray, np.ndarray]
    relation: str
    directions: np.ndarray
    signs: np.ndarray
    canary_differences: np.ndarray


def canary_pair(n, d, steps, clip_threshold, *, relation="replace_one", public_seed=0,
                canary_scale=CANARY_SCALE, direction_blocks=None) -> CanaryPair:
    """The canary pair for ``steps`` DPZero steps with sphere directions of the public seed (module docstring).

    n: records (n ≥ 1; record 0 is the canary, the others are zero);
    d: dimension; steps: T; clip_threshold: C; relation: "replace_one" (full batch) or "add_remove" (Poisson);
    public_seed: the seed of the directions; canary_scale: M/C; direction_blocks: None, or the block sizes the run
    draws its directions with (``direction_for_step(..., blocks=...)``: a torch model's tensor numels). Raises
    ValueError (naming public_seed) if some |⟨e_1, u_t⟩| is so small that M|⟨e_1, u_t⟩| < 1000·C (the clip would
    not bind with margin).
    """
    n = check_int("n", n, minimum=1)
    d = check_int("d", d, minimum=1)
    steps = check_int("steps", steps, minimum=1)
    clip_threshold = check_real("clip_threshold", clip_threshold, positive=True)
    if relation not in ("replace_one", "add_remove"):
        raise ValueError(f"relation must be 'replace_one' or 'add_remove', got {relation!r}")
    public_seed = check_int("public_seed", public_seed, minimum=0)
    canary_scale = check_real("canary_scale", canary_scale, positive=True)
    directions = np.array([direction_for_step(public_seed, t, d, blocks=direction_blocks) for t in range(steps)])
    projections = directions[:, 0]  # ⟨e_1, u_t⟩
    large = canary_scale * clip_threshold
    if not np.all(large * np.abs(projections) >= _CLIP_MARGIN * clip_threshold):
        t = int(np.argmin(np.abs(projections)))
        raise ValueError(f"public_seed {public_seed} gives |<e_1, u_{t}>| = {abs(projections[t]):.3g}, too small for "
                         f"the canary's difference to be clipped with margin; choose another public_seed or a larger "
                         f"canary_scale")
    signs = np.sign(projections).astype(np.int64)
    canary = np.zeros(d)
    canary[0] = large
    first, second = np.zeros((n, d)), np.zeros((n, d))
    second[0] = canary
    if relation == "replace_one":
        first[0] = -canary
        differences = np.array([-clip_threshold * signs, clip_threshold * signs], dtype=np.float64)
    else:
        differences = np.array([np.zeros(steps), clip_threshold * signs], dtype=np.float64)
    for data in (first, second):
        data.setflags(write=False)
    return CanaryPair((first, second), relation, directions, signs, differences)


# ---------------------------------------------------------------------------------------------------
# Running the algorithm


def dpzero_releases(data, noise_seeds, *, steps, clip_threshold, epsilon, delta, public_seed, batching="full",
                    batch_size=None, accountant=None, step_size=0.1, perturbation=1e-3, backend="fast",
                    chunk=None) -> np.ndarray:
    """ŝ_0..ŝ_{T−1} of one DPZero run (dpzero Alg 2, ``linear_loss``, x_0 = 0, sphere directions) per noise seed.

    data: (n, d); noise_seeds: 1-D ints ≥ 0, one secret seed per trial; the rest is passed to ``dpzero`` (seed =
    public_seed). backend "fast": ``reference.fast.dpzero.dpzero`` with noise_seed an array of at most ``chunk``
    seeds per call (None: all at once); "reference": ``reference.algorithms.dpzero.dpzero`` once per seed.
    Returns (trials, T) float64.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    seeds = np.asarray(noise_seeds)
    if seeds.ndim != 1 or (seeds.size and seeds.dtype.kind not in "iu"):
        raise ValueError(f"noise_seeds must be a 1-D array of integers, got shape {seeds.shape}, dtype {seeds.dtype}")
    if seeds.size and seeds.min() < 0:
        raise ValueError("noise_seeds must be >= 0")
    steps = check_int("steps", steps, minimum=1)
    chunk = seeds.size if chunk is None else check_int("chunk", chunk, minimum=1)
    x0 = np.zeros(np.shape(data)[1])
    kwargs = dict(steps=steps, step_size=step_size, perturbation=perturbation, clip_threshold=clip_threshold,
                  epsilon=epsilon, delta=delta, seed=public_seed, batching=batching, batch_size=batch_size,
                  accountant=accountant)
    out = np.empty((seeds.size, steps))
    if backend == "reference":
        for i, noise_seed in enumerate(seeds):
            out[i] = reference_dpzero.dpzero(linear_loss, data, x0, noise_seed=int(noise_seed), **kwargs).releases
        return out
    run = fast_dpzero.dpzero
    for start in range(0, seeds.size, max(chunk, 1)):
        part = seeds[start:start + chunk].astype(np.int64)
        out[start:start + part.size] = run(linear_loss, data, x0, noise_seed=part, **kwargs).releases
    return out


# ---------------------------------------------------------------------------------------------------
# Claims: Lemma 2.2 for a given σ, PLD for the Poisson run


def lemma22_epsilon(mu, delta) -> float:
    """The ε dpzero Lemma 2.2 certifies for a noise σ whose T-step composition has μ = √T·Δ/σ.

    Lemma 2.2 calibrates σ = 2Δ√(2T log(e + ε/δ))/ε, i.e. μ = ε/(2√(2 log(e + ε/δ))) (dpzero.E5), increasing
    in ε; this solves that for ε (brentq, relative tolerance 1e-13). mu: μ > 0; delta: δ ∈ (0, 1). Lemma 2.2 is
    verified only for ε ≤ 80 (erratum E5): beyond that its ε is not a valid claim.
    """
    mu = check_real("mu", mu, positive=True)
    delta = check_probability("delta", delta)

    def excess(log_epsilon):
        epsilon = math.exp(log_epsilon)
        return epsilon / (2 * math.sqrt(2 * math.log(math.e + epsilon / delta))) - mu

    low, high = -50.0, 1.0
    while excess(high) < 0:
        high += 1.0
    return math.exp(brentq(excess, low, high, xtol=1e-15, rtol=1e-13))


#: Relative width (upper − lower)/upper to which ``poisson_pld_interval`` refines the PLD grid. The tight ε is a
#: yardstick (tightness ratios), so 1e-3 is ample; the scenarios' parameters reach it at the first grid.
PLD_TOLERANCE = 1e-3


@lru_cache(maxsize=128)
def _pld_interval(q: float, z: float, steps: int, delta: float, tolerance: float) -> tuple[float, float]:
    # Cached: each scenario build asks for it, and one evaluation costs a few tenths of a second.
    pair = pld.poisson_gaussian_pld(noise_multiplier=z, sampling_probability=q).compose(steps)
    lower, upper, _ = pld.epsilon_interval(pair, delta, tolerance=tolerance)
    return float(lower), float(upper)


def poisson_pld_interval(sampling_probability, noise_multiplier, steps, delta, *,
                         tolerance=PLD_TOLERANCE) -> tuple[float, float]:
    """(ε_lower, ε_upper): a certified interval containing the exact ε at δ of ``steps`` Poisson-subsampled
    Gaussian steps under add/remove (both directions), from ``reference.accounting.pld.epsilon_interval`` with the
    grid refined until (upper − lower)/upper ≤ ``tolerance`` (or its refinements run out: the interval is valid
    whatever its width). ValueError for bad parameters or ones outside the PLD's range (noise multiplier in
    [0.05, 1e4], q ≥ 1e-8, grid too large)."""
    q = check_probability("sampling_probability", sampling_probability, open_right=False)
    z = check_real("noise_multiplier", noise_multiplier, positive=True)
    steps = check_int("steps", steps, minimum=1)
    delta = check_probability("delta", delta)
    tolerance = check_real("tolerance", tolerance, positive=True, upper=1.0)
    return _pld_interval(float(q), float(z), int(steps), float(delta), float(tolerance))


def poisson_pld_epsilon(sampling_probability, noise_multiplier, steps, delta, *,
                        tolerance=PLD_TOLERANCE) -> float | None:
    """The tight ε yardstick of the Poisson audits: the UPPER end of ``poisson_pld_interval`` (≥ the exact ε, at
    most ``tolerance`` relative above it), so a tightness ratio ε_lb / tight ε never overstates how close an audit
    came. None when the PLD cannot bracket these parameters (outside its range, or ε_upper = +∞): the yardstick
    is then unknown, and the verdict, which reads only the claim, is unaffected."""
    q = check_probability("sampling_probability", sampling_probability, open_right=False)
    z = check_real("noise_multiplier", noise_multiplier, positive=True)
    steps = check_int("steps", steps, minimum=1)
    delta = check_probability("delta", delta)
    try:
        _, upper = poisson_pld_interval(q, z, steps, delta, tolerance=tolerance)
    except ValueError:
        return None
    return upper if math.isfinite(upper) else None


# ---------------------------------------------------------------------------------------------------
# Scenarios


@dataclass(frozen=True)
class DPZeroAuditSetup:
    """Everything a DPZero audit scenario fixes before any trial: the pair, the algorithm's privacy plan
    (``reference.algorithms.dpzero.PrivacyPlan``), the run's hyper-parameters and the derived numbers.

    mu: μ of the exact Gaussian-DP pair (full batch; None for Poisson); tight_epsilon: ε_μ(δ) (full batch) or the
    PLD ε (Poisson: ``poisson_pld_epsilon``, None outside the PLD's range); lemma22_epsilon: what Lemma 2.2 would
    claim for the same σ (full batch), else None; run: keyword arguments of ``dpzero_releases`` besides data and seeds.
    """

    pair: CanaryPair
    plan: object
    steps: int
    n: int
    d: int
    clip_threshold: float
    batching: str
    batch_size: int | None
    mu: float | None
    tight_epsilon: float | None
    lemma22_epsilon: float | None
    run: dict


def dpzero_run_setup(steps=100, n=100, d=2, clip_threshold=1.0, epsilon=2.0, delta=1e-5, *, batching="full",
                     batch_size=None, accountant=None, public_seed=0, step_size=0.1, perturbation=1e-3,
                     backend="fast", chunk=None, canary_scale=CANARY_SCALE) -> DPZeroAuditSetup:
    """The fixed part of a DPZero audit (``dpzero_run_scenario`` documents the arguments)."""
    steps = check_int("steps", steps, minimum=1)
    n = check_int("n", n, minimum=2)
    d = check_int("d", d, minimum=1)
    clip_threshold = check_real("clip_threshold", clip_threshold, positive=True)
    delta = check_probability("delta", delta)
    if batching not in ("full", "poisson"):
        raise ValueError(f"batching must be 'full' or 'poisson' (the runs with an exact or an RDP claim), "
                         f"got {batching!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if batching == "full" and accountant is None:
        accountant = "gdp_exact"
    if batching == "poisson" and accountant is None:
        accountant = "rdp"
    if batching == "poisson" and accountant != "rdp":
        raise ValueError(f"accountant must be 'rdp' for batching='poisson' (the add/remove pair), got {accountant!r}")
    plan = privacy_plan(clip_threshold=clip_threshold, n=n, steps=steps, epsilon=epsilon, delta=delta,
                        batching=batching, batch_size=batch_size, accountant=accountant)
    relation = "replace_one" if batching == "full" else "add_remove"
    pair = canary_pair(n, d, steps, clip_threshold, relation=relation, public_seed=public_seed,
                       canary_scale=canary_scale)
    run = dict(steps=steps, clip_threshold=clip_threshold, epsilon=epsilon, delta=delta, public_seed=public_seed,
               batching=batching, batch_size=batch_size, accountant=accountant, step_size=step_size,
               perturbation=perturbation, backend=backend, chunk=chunk)
    if batching == "full":
        mu = math.sqrt(steps) * (2 * clip_threshold / n) / plan.noise_std
        return DPZeroAuditSetup(pair, plan, steps, n, d, clip_threshold, batching, None, mu,
                                float(gaussian_epsilon(delta, mu)), lemma22_epsilon(mu, delta), run)
    tight = poisson_pld_epsilon(batch_size / n, plan.noise_multiplier, steps, delta)
    return DPZeroAuditSetup(pair, plan, steps, n, d, clip_threshold, batching, batch_size, None, tight, None, run)


def _check_outputs(outputs, steps: int) -> np.ndarray:
    outputs = np.asarray(outputs, dtype=np.float64)
    if outputs.ndim != 2 or outputs.shape[1] != steps:
        raise ValueError(f"outputs must have shape (trials, {steps}), got {outputs.shape}")
    return outputs


def _full_batch_llr(setup: DPZeroAuditSetup) -> Callable[[np.ndarray], np.ndarray]:
    means = setup.pair.canary_differences / setup.n  # m_t on D and D′ (the other records contribute 0)
    gap, midpoint = means[1] - means[0], (means[0] + means[1]) / 2
    variance = setup.plan.noise_std**2

    def log_likelihood_ratio(outputs):
        return (_check_outputs(outputs, setup.steps) - midpoint) @ gap / variance

    return log_likelihood_ratio


def _poisson_llr(setup: DPZeroAuditSetup) -> Callable[[np.ndarray], np.ndarray]:
    q = setup.batch_size / setup.n
    shift = setup.pair.canary_differences[1] / setup.batch_size  # c·s_t when the canary is sampled
    variance = setup.plan.noise_std**2
    log_keep = math.log1p(-q) if q < 1 else -math.inf

    def log_likelihood_ratio(outputs):
        x = _check_outputs(outputs, setup.steps)
        return np.sum(np.logaddexp(log_keep, math.log(q) + (2 * shift * x - shift**2) / (2 * variance)), axis=1)

    return log_likelihood_ratio


def dpzero_run_scenario(steps=100, n=100, d=2, clip_threshold=1.0, epsilon=2.0, delta=1e-5, *, batching="full",
                        batch_size=None, accountant=None, public_seed=0, step_size=0.1, perturbation=1e-3,
                        backend="fast", chunk=None, canary_scale=CANARY_SCALE, name=None) -> Scenario:
    """A whole DPZero run (dpzero Alg 2, T steps) on the canary pair, audited on its transcript (ŝ_0..ŝ_{T−1}).

    steps: T; n: records; d: dimension; clip_threshold: C; epsilon, delta: the target (ε, δ) of the algorithm's
    privacy plan; batching: "full" (replace-one pair, accountant "gdp_exact" by default or "lemma22") or
    "poisson" (add/remove pair, accountant "rdp", batch_size B = qn required); public_seed: the direction seed
    shared by all trials; step_size: α; perturbation: λ; backend: "fast" or "reference" (``dpzero_releases``);
    chunk: trials per fast call (None: all in one call, which the fast twin splits into memory-sized blocks
    itself; every call recomputes the privacy plan, ~4 s for the Poisson RDP calibration); canary_scale: M/C.

    Outputs (trials, T): ``DPResult.releases``. The claim is the plan's (``plan_claim``): ``gdp_exact`` claims
    μ-GDP with the plan's μ (its ε is the tight ε); ``lemma22`` claims (ε, δ) = (the target, δ); the Poisson RDP
    accountant claims (ε, δ) with its RDP ε. True law (yardsticks only): full batch μ = √T·(2C/n)/σ exactly, tight
    ε = ε_μ(δ), log-likelihood ratio (2C/(nσ²))Σ_t s_t ŝ_t; Poisson: μ None, tight ε = ``poisson_pld_epsilon``
    (the certified PLD interval's upper end; None outside the PLD's range), the mixture log-likelihood ratio of the
    module docstring.
    """
    setup = dpzero_run_setup(steps, n, d, clip_threshold, epsilon, delta, batching=batching, batch_size=batch_size,
                             accountant=accountant, public_seed=public_seed, step_size=step_size,
                             perturbation=perturbation, backend=backend, chunk=chunk, canary_scale=canary_scale)
    return dpzero_scenario(setup, name)


def _sampler(setup: DPZeroAuditSetup, releases=dpzero_releases):
    def sample(rng, trials, which):
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        trials = check_int("trials", trials, minimum=0)
        which = check_int("which", which, minimum=0, maximum=1)
        noise_seeds = rng.integers(0, SEED_BOUND, trials)
        if trials == 0:
            return np.empty((0, setup.steps))
        return releases(setup.pair.datasets[which], noise_seeds, **setup.run)

    return sample


def dpzero_scenario(setup: DPZeroAuditSetup, name=None) -> Scenario:
    """The ``Scenario`` of a ``DPZeroAuditSetup`` (``dpzero_run_scenario`` documents what it holds)."""
    plan = setup.plan
    if setup.batching == "full":
        steps = "1 step" if setup.steps == 1 else f"{setup.steps} steps"
        description = (f"DPZero, {steps}, full batch, n={setup.n}, d={setup.d}, C={setup.clip_threshold:g}, "
                       f"σ={plan.noise_std:.6g} ({plan.accountant}), μ={setup.mu:.6g}; Lemma 2.2 would claim "
                       f"ε={setup.lemma22_epsilon:.4g}")
        llr = _full_batch_llr(setup)
    else:
        tight = "tight ε from PLD" if setup.tight_epsilon is not None else "no tight ε (outside the PLD's range)"
        description = (f"DPZero, {setup.steps} steps, Poisson q={setup.batch_size / setup.n:g} (B={setup.batch_size}), "
                       f"n={setup.n}, d={setup.d}, C={setup.clip_threshold:g}, σ={plan.noise_std:.6g} "
                       f"(z={plan.noise_multiplier:.6g}), claimed by RDP; {tight}")
        llr = _poisson_llr(setup)
    return Scenario(
        name=name or (f"dpzero(steps={setup.steps},n={setup.n},d={setup.d},C={setup.clip_threshold:g},"
                      f"batching={setup.batching},accountant={plan.accountant})"),
        description=description, sample=_sampler(setup), **plan_claim(plan),
        delta=setup.run["delta"], tight_epsilon=setup.tight_epsilon, mu=setup.mu, log_likelihood_ratio=llr,
    )


#: Accountants of ``reference.algorithms.dpzero.privacy_plan`` that state a μ-GDP guarantee: "gdp_exact"
#: calibrates σ so that the T-step composition is μ*-GDP (Dong–Roth–Su Cor. 3.3) and reports that μ (``mu_gdp``).
GDP_ACCOUNTANTS = ("gdp_exact",)


def plan_claim(plan) -> dict:
    """The claim a DPZero privacy plan makes, as ``Scenario`` keyword arguments: a μ-GDP claim (``claimed_mu`` =
    the plan's ``mu_gdp``, with its ``epsilon_claimed`` as the implied ε) for the accountants in
    ``GDP_ACCOUNTANTS``; otherwise the (ε, δ) claim ``claimed_epsilon`` = ``epsilon_claimed`` (Lemma 2.2 and DRV
    state (ε, δ); the RDP accountants state RDP converted to (ε, δ), which implies no μ-GDP)."""
    if plan.accountant in GDP_ACCOUNTANTS and plan.mu_gdp is not None:
        return dict(claimed_mu=float(plan.mu_gdp), claimed_epsilon=float(plan.epsilon_claimed))
    return dict(claimed_epsilon=float(plan.epsilon_claimed))


def dpzero_step_scenario(**kwargs) -> Scenario:
    """``dpzero-step``: ONE DPZero step (T = 1), full batch, n = 100, d = 2, C = 1, σ from ``gdp_exact`` at
    ε = 1, δ = 1e-5, so μ = (2C/n)/σ = μ*(1, 1e-5) = 0.26805 and the tight ε is 1. Keyword arguments override
    ``dpzero_run_scenario``'s."""
    options = dict(steps=1, epsilon=1.0, name="dpzero-step")
    options.update(kwargs)
    return dpzero_run_scenario(**options)


def dpzero_full_run_scenario(**kwargs) -> Scenario:
    """``dpzero-full-run``: T = 100 steps, full batch, n = 100, d = 2, C = 1, σ from ``gdp_exact`` at ε = 2,
    δ = 1e-5, so μ = √T·(2C/n)/σ = μ*(2, 1e-5) = 0.50155 and the tight ε is 2 (Lemma 2.2 would claim ≈ 5.5 for
    the same σ). Keyword arguments override ``dpzero_run_scenario``'s."""
    options = dict(name="dpzero-full-run")
    options.update(kwargs)
    return dpzero_run_scenario(**options)


def dpzero_poisson_run_scenario(**kwargs) -> Scenario:
    """``dpzero-full-run-poisson``: T = 100 steps, Poisson sampling with B = 10 of n = 100 (q = 0.1), C = 1,
    σ = z·C/B with z from the RDP accountant at ε = 2, δ = 1e-5 (add/remove); tight ε from the certified PLD
    (``poisson_pld_epsilon``). Building it calibrates z in mpmath (~4 s), so the registry builds it on
    first use. Keyword arguments override ``dpzero_run_scenario``'s."""
    options = dict(batching="poisson", batch_size=10, name="dpzero-full-run-poisson")
    options.update(kwargs)
    return dpzero_run_scenario(**options)


#: Built-in name → factory (``registry.SCENARIOS`` builds each on first use).
DPZERO_BUILTINS: dict[str, Callable[[], Scenario]] = {
    "dpzero-step": dpzero_step_scenario,
    "dpzero-full-run": dpzero_full_run_scenario,
    "dpzero-full-run-poisson": dpzero_poisson_run_scenario,
}
