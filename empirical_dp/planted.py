"""Planted privacy bugs and their correctly implemented twins (docs/audits.md, planted bugs): each bug is a
``Scenario`` whose claim (``Scenario.claim``) is what the buggy accountant claims and whose ``sample`` runs the
buggy mechanism on a worst-case neighbouring pair, with the attack that exposes it and a trial budget within which
``empirical_dp.audit.audit`` must report a violation by a bound valid for that claim. Each twin runs the correct
mechanism against the same claim (or, for the sampling bug, the correct accountant) and must be reported
"consistent".

Claims and budgets. Bugs 1–4, 6–12 and 19 state (ε, δ) claims ("ε = 1 at δ = 1e-5", the RDP accountant's ε, the
run's target ε, Theorem 3.11's "(ε, δ)-DP"): only the Clopper–Pearson ε_lb may refute them, and the budgets are
sized for it at the quick audits' confidence 1 − 1e-6 (bugs 1 and 2: 500 000 trials per dataset, expected best-threshold ε_lb ≈ 1.32 at that
confidence, 1.50 at 0.95, against the claim 1; the true μ-GDP of the pair, ``Scenario.mu``, only feeds the
yardsticks). Bug 5 states the claim of its twin's plan, ``gdp_exact``: μ-GDP (``dpzero_scenarios.plan_claim``),
so the GDP μ bound may refute it too; so do bugs 13–16 (μ-GDP at the zo_o2nc ledger's exact ρ), 17 (μ-GDP at the
nsnc_improved plan's μ), 20 (μ-GDP at the spider_sosp ledger's μ) and 22 (μ-GDP at the bgm21 Algorithm 6 ledger's
μ).

Sources:
- Dong, Roth, Su 2022 (JRSS-B) Thm 2.7 / Cor. 2.13: the Gaussian mechanism with sensitivity Δ and noise σ is
  exactly μ-GDP, μ = Δ/σ, and its tight ε(δ); calibration for ε = 1 at δ = 1e-5 uses σ = Δ/μ(1, 1e-5).
- Mironov, Talwar, Zhang 2019 §3.3: the RDP of the Poisson-subsampled Gaussian (the claim of bug 3).
- Zhang et al. 2024 (ICML), "DPZero" (Algorithm 2 lines 5–6): the private scalar s = clip_C(a) + σz released along a
  public direction u; the randomness contract of ``reference.rng`` forbids drawing z from u's stream; the public
  code draws it right after reseeding with the direction seed (dpzero.E13).

The bugs:
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
   ("dpzero", "noise") under a secret seed that is not released (the reference's noise stream).
5. ``noise_from_direction_seed_full_run``: the same bug (erratum dpzero.E13) in the whole DPZero run, ``planted_dpzero``
   (Alg 2, T = 100 steps, full batch) on the canary pair of ``empirical_dp.dpzero_scenarios`` with the
   ``dpzero-full-run`` settings, claimed at ε = 2 (``gdp_exact``). One public seed for all trials, as in that
   scenario: z_t is a function of it, so the transcript is a deterministic function of the data; the attacker
   regenerates every z_t, subtracts σz_t and reads off the canary's ∓C s_t/n. The twin is the real algorithm
   (``reference.fast.dpzero``), i.e. the ``dpzero-full-run`` scenario, against the same attacker.
13. ``zo_o2nc-noise-halved-sensitivity`` and 14. ``zo_o2nc-nodes-renoised`` (``empirical_dp.zo_o2nc``): one epoch
   of zo_o2nc Alg 4 on the canary pair of the ``zo_o2nc-epoch`` scenario, claimed μ-GDP at the ledger's ρ =
   μ*(1, 1e-5) — 13 with the tree noise calibrated for half the sensitivities (dL/B1 for the GRAD leaf instead of
   2dL/B1: σ/2, true μ = 2ρ), 14 with every release summing fresh node noises (independent releases, true μ =
   1.384ρ at T = 16). Twins: the correct ``zo_o2nc-epoch`` mechanism against the same claim.
15. ``zo_o2nc-published-public-seed-noise`` and 16. ``zo_o2nc-published-training-diagnostics``
   (``empirical_dp.zo_o2nc_published``): the whole publication of a zo_o2nc run with its secret seed computed from
   the public seed (seed + 1), resp. with the NOT PRIVATE training diagnostics published; claimed μ-GDP at the
   ledger's ρ (ε = 1), caught at 100 publications per data set. Twins: the default pipeline.
17. ``nsnc_improved-fo-reset-halved`` (``empirical_dp.nsnc_improved``): nsnc_improved Alg 2 with the
   first-order single-pass oracle (Alg 5), the tree noise calibrated with Lemma C.1's printed reset sensitivity L/B1
   instead of the replace-one 2L/B1 (σ/2), claimed μ-GDP at the calibration target μ*(2, 1e-5) = 0.5016; true μ =
   1.003. Twin: the correctly calibrated run against the same claim.
18. ``nsnc_improved-published-nonprivate`` (``empirical_dp.nsnc_improved_published``): the whole publication of a
   default nsnc_improved run with the NOT PRIVATE training diagnostics published (include_nonprivate=True);
   claimed (ε, δ) = (1, 1e-6), the ledger's high-probability guarantee, caught at 100 publications per data set.
   Twin: the default pipeline.
19. ``spider-sosp-printed-noise`` (``empirical_dp.spider_sosp``): spider_sosp Alg 2 + 3 (global tree, T = Σ = 3,
   d = 16) on the worst pair of leaves (1, 3), the tree noise σ = α/√d of Theorem 3.11 as printed (spider_sosp.E3),
   which claims (ε, δ) = (1, 1e-5); the pair's true μ is 1.194 (exact ε 5.38). Twin: the exact calibration
   ("gdp_exact") on the same pair against the same (ε, δ) claim.
20. ``spider_sosp-published-nonprivate`` (``empirical_dp.spider_sosp_published``): the whole publication of a
   default spider_sosp run (n = 10⁴, the canary pair in step 0's O1 batch, a fresh public seed per trial) with the
   NOT PRIVATE training diagnostics published (include_nonprivate=True); claimed μ-GDP at the ledger's μ = 0.2367
   (rule gdp_exact, ε = 1 at δ = 1e-6), caught at 50 publications per data set. Twin: the default pipeline.
21. ``bgm21-noisy-sfw-printed-sigma-hat`` (``empirical_dp.bgm21``): bgm21 Algorithm 6 (R = 2, d = 1, b = 64) on a
   worst-case pair in the batch of step (1, 1), the difference term's noise σ̂ with η_{r,t} as printed in §4.2
   (bgm21.E10), against the (ε, δ) = (5, 0.1) the paper's calibration claims; the published μ is 2.599 (exact ε
   5.91). Twin: σ̂ with η_{r,t−1} (dpref's default) on the same pair against the same claim.
22. ``bgm21_nsfw-published-public-seed-noise`` (``empirical_dp.bgm21_published``): the whole publication of a default
   bgm21 Algorithm 6 run (n = 2048, the canary pair first in batch B_0^0, a fresh public seed per trial) with its
   secret seed computed from the public seed (noise_seed = seed + 1; the runner accepts it: it differs from the public
   and the data seed); claimed μ-GDP at the ledger's μ = 0.1902 (route gdp_exact, ε = 0.79 at δ = 1e-6), caught at 50
   publications per data set by the noise regenerated from the seed offsets. Twin: the default pipeline.
23. ``opacus-fixed-order-loader`` (``empirical_dp.opacus_dpsgd``): Opacus DP-SGD with ``poisson_sampling=False`` on
   a fixed-order loader (one record per batch of n = 100, one epoch, σ = 1), claimed by Opacus's own accountant as
   Poisson q = 0.01 (ε = 0.728 at δ = 1e-5); the canary's batch is public, so the run is exactly 1-GDP (tight ε
   4.38). Twin: the same loader through ``make_private(poisson_sampling=True)``. Needs opacus and torch.
24. ``dpzero-torch-seed-leak`` (``empirical_dp.dpzero_torch``): the torch DPZero backend (T = 10, n = 100, d = 2,
   gdp_exact at ε = 2) with noise_seed = public seed + 1 (accepted: it differs from the public seed), against the
   plan's μ = 0.5016; an attacker who regenerates the noise from the public seed's neighbours subtracts it. Twin:
   the default secret seed, the same attacker. Needs torch.
25. ``dpzero_torch-published-seed-leak`` (``empirical_dp.dpzero_torch``): the whole publication of a torch
   DPZero run (``reference.torch_backend.publish``) with noise_seed = public seed + 1; caught by the noise
   regenerated from the seed offsets. Twin: the default run. Needs torch.

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
from .bgm21 import BGM21_PLANTED, BGM21_TWINS
from .bgm21_published import BGM21_PUBLISHED_BUILTINS, bgm21_published_scenario
from .dpzero_scenarios import dpzero_run_scenario, dpzero_run_setup, linear_loss, plan_claim
from .nsnc_improved import fo_reset_sensitivity_halved_scenario
from .nsnc_improved_published import NSNC_IMPROVED_PUBLISHED_BUILTINS, nsnc_improved_published_scenario
from .published import PUBLISHED_BUILTINS, published_scenario
from .scenarios import Scenario, poisson_gaussian_scenario
from .spider_sosp import printed_noise_scenario
from .spider_sosp_published import SPIDER_SOSP_PUBLISHED_BUILTINS, spider_sosp_published_scenario
from .zo_o2nc import nodes_renoised_scenario, noise_halved_sensitivity_scenario
from .zo_o2nc_published import ZO_O2NC_PUBLISHED_BUILTINS, zo_o2nc_published_scenario

__all__ = [
    "calibrated_noise_std",
    "clipped_mean_scenario",
    "noise_halved_scenario",
    "sensitivity_c_over_n_scenario",
    "shuffle_run_scenario",
    "poisson_run_scenario",
    "direction_seed_scenario",
    "direction_seed_attack",
    "planted_dpzero",
    "RUN_SETTINGS",
    "direction_seed_run_scenario",
    "direction_seed_run_attack",
    "CLIPPED_MEAN_BUDGET",
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
    claimed_epsilon: the (ε, δ) claim of the accountant at ``delta``. Release: (1/n) Σ_i clip_C(x_i) + σz,
    z ~ N(0, 1), drawn as ``standard_normal((trials, 1))``. The pair differs by 2C/n (the worst case), so the
    mechanism is μ-GDP with true μ = (2C/n)/σ (``Scenario.mu``, a yardstick: the accountant claims only ε); the
    likelihood ratio is that of the two Gaussians.
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


def planted_dpzero(loss, data, x0, *, steps, step_size, perturbation, clip_threshold, noise_std, seed, noise_seed,
                   noise_from_direction=True) -> np.ndarray:
    """dpzero Alg 2 (full batch, sphere directions) with the noise source as a switch: the planted bug of erratum
    dpzero.E13 (``noise_from_direction=True``) or the reference's noise stream (False), vectorized over secret noise seeds.

    loss: f(x; ξ) called once per step as ``loss(points, data)`` with points (2, R, 1, d) (x_t ± λu_t) and data
    (n, p), returning (2, R, n) (leading axes broadcast, as for ``reference.fast``); data: (n, p); x0: (d,);
    steps: T; step_size: α; perturbation: λ; clip_threshold: C; noise_std: σ (the plan's, passed in: the
    accounting is not what is planted); seed: the PUBLIC seed; noise_seed: the SECRET seed, an int or a 1-D
    array of R ints (one run each).

    Step t:
        3: rng = key ("dpzero", "direction", t) under seed; u_t = sample_sphere(rng, (), d, √d)
           (= ``reference.algorithms.dpzero.direction_for_step``)
        4: a_i = (f(x_t + λu_t; ξ_i) − f(x_t − λu_t; ξ_i))/(2λ)
        5: m_t = Σ_i clip_C(a_i)/n, summed in index order as the reference does
        6: the bug: z_t = rng.standard_normal(), the SAME generator right after u_t (the public code calls
           torch.randn(1) right after torch.manual_seed(seed_t), dpzero.E13), so z_t is a function of the public seed;
           the fix: z_t = the t-th standard_normal() of key ("dpzero", "noise") under noise_seed, the reference's
           stream. ŝ_t = m_t + σz_t
        7: x_{t+1} = x_t − α ŝ_t u_t
    With the fix the releases agree with ``reference.algorithms.dpzero.dpzero`` (full batch, same σ) draw for
    draw. Returns the releases ŝ, shape (R, T), or (T,) for an int noise_seed.
    """
    steps = check_int("steps", steps, minimum=1)
    step_size = check_real("step_size", step_size, positive=True)
    perturbation = check_real("perturbation", perturbation, positive=True)
    clip_threshold = check_real("clip_threshold", clip_threshold, positive=True)
    noise_std = check_real("noise_std", noise_std, nonnegative=True)
    seed = check_int("seed", seed, minimum=0)
    data = np.asarray(data, dtype=np.float64)
    x0 = np.asarray(x0, dtype=np.float64)
    if data.ndim != 2 or x0.ndim != 1:
        raise ValueError(f"data must be (n, p) and x0 (d,), got shapes {data.shape} and {x0.shape}")
    single = np.ndim(noise_seed) == 0
    seeds = [check_int("noise_seed", s, minimum=0) for s in np.atleast_1d(noise_seed)]
    d, n = x0.size, data.shape[0]
    if noise_from_direction:
        secret_noise = None
    else:  # one generator per run, T draws in step order (standard_normal(T) = T calls of standard_normal())
        secret_noise = np.array([Streams(s).generator("dpzero", "noise").standard_normal(steps) for s in seeds])
    x = np.broadcast_to(x0, (len(seeds), d))
    releases = np.empty((len(seeds), steps))
    for t in range(steps):
        direction_rng = Streams(seed).generator("dpzero", "direction", t)
        u = sample_sphere(direction_rng, (), d, math.sqrt(d))                                      # line 3
        step = perturbation * u
        points = np.stack([x + step, x - step])[:, :, None, :]
        values = np.asarray(loss(points, data), dtype=np.float64)
        if values.shape != (2, len(seeds), n):
            raise ValueError(f"loss must return shape {(2, len(seeds), n)}, got {values.shape}")
        a = (values[0] - values[1]) / (2 * perturbation)                                            # line 4
        # cumsum adds in index order, as the reference's Σ_i loop does (np.sum would pair terms up)
        m = np.cumsum(np.clip(a, -clip_threshold, clip_threshold), axis=1)[:, -1] / n               # line 5
        z = direction_rng.standard_normal() if noise_from_direction else secret_noise[:, t]         # line 6
        releases[:, t] = m + noise_std * z
        x = x - (step_size * releases[:, t])[:, None] * u                                           # line 7
    return releases[0] if single else releases


def _dpzero_release(public_seed: int, secret_seed: int, gradients: np.ndarray, clip_threshold: float,
                    noise_std: float, dimension: int, same_stream: bool) -> float:
    """One DPZero step's private scalar (dpzero Algorithm 2 lines 5–6): ``planted_dpzero`` with T = 1 on the linear loss
    f(x; g_i) = ⟨g_i, x⟩, whose difference is ⟨g_i, u⟩, so s = (1/n) Σ_i clip_C(⟨g_i, u⟩) + σz with u from key
    ("dpzero", "direction", 0) under the public seed and z from the SAME generator right after u (``same_stream``,
    the bug) or from key ("dpzero", "noise") under the secret seed (the fix)."""
    return float(planted_dpzero(linear_loss, gradients, np.zeros(dimension), steps=1, step_size=1.0, perturbation=1.0,
                                clip_threshold=clip_threshold, noise_std=noise_std, seed=public_seed,
                                noise_seed=secret_seed, noise_from_direction=same_stream)[0])


def direction_seed_scenario(n=100, clip_threshold=1.0, dimension=8, *, buggy=True) -> Scenario:
    """Bug 4 (``buggy=True``) or its fix: DPZero's released scalar with the public direction seed as part of the
    output, outputs (trials, 2) = (s, public seed).

    Pair: record 0's per-example gradient is −M·1 (D) or +M·1 (D'), M = 1e6·C, the others 0, so ⟨g_0, u⟩ is
    clipped to ∓C·sign(Σu) (non-zero with probability 1); σ is calibrated for Δ = 2C/n at ε = 1, δ = 1e-5, which
    is tight given u. Draws per call: ``integers(0, 2**31, trials)`` public seeds, then
    ``integers(0, 2**31, trials)`` secret seeds (unused by the bug, drawn anyway so both share one schedule).
    Claim: (ε, δ) = (1, 1e-5).
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
# Bug 5: the whole DPZero run with its noise drawn from the direction generator (erratum dpzero.E13)

#: The run of bug 5: the ``dpzero-full-run`` scenario's (T = 100, n = 100, d = 2, C = 1, full batch, σ from
#: ``gdp_exact`` at ε = 2, δ = 1e-5, public seed 0).
RUN_SETTINGS = dict(steps=100, n=100, d=2, clip_threshold=1.0, epsilon=2.0, delta=1e-5, public_seed=0)


def direction_seed_run_scenario(*, buggy=True, **settings) -> Scenario:
    """Bug 5 (``buggy=True``): the whole DPZero run (``planted_dpzero`` with ``noise_from_direction=True``) on the
    canary pair of ``empirical_dp.dpzero_scenarios`` with the ``dpzero-full-run`` settings (``RUN_SETTINGS``;
    keyword arguments override them), with the plan's claim (``plan_claim``: ``gdp_exact`` claims μ-GDP with the
    plan's μ, implying ε = 2). Its twin (``buggy=False``) is the real algorithm, ``reference.fast.dpzero.dpzero``:
    the ``dpzero-full-run`` scenario itself under another name, against the same claim.

    Outputs (trials, T): the releases ŝ_0..ŝ_{T−1}. With the bug, z_t is a function of the public seed alone, so
    given the public seed the transcript is a deterministic function of the data: not private for any δ < 1 (tight
    ε = ∞, reported as None). Draws: ``integers(0, 2**62, trials)`` secret noise seeds (unused by the bug, drawn so
    bug and twin share one schedule).
    """
    options = dict(RUN_SETTINGS)
    options.update(settings)
    if not buggy:
        return dpzero_run_scenario(**options, name="noise_from_direction_seed_full_run_twin")
    setup = dpzero_run_setup(**options)
    run = setup.run

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        noise_seeds = rng.integers(0, 2**62, trials)
        if trials == 0:
            return np.empty((0, setup.steps))
        return planted_dpzero(linear_loss, setup.pair.datasets[which], np.zeros(setup.d), steps=setup.steps,
                              step_size=run["step_size"], perturbation=run["perturbation"],
                              clip_threshold=setup.clip_threshold, noise_std=setup.plan.noise_std,
                              seed=run["public_seed"], noise_seed=noise_seeds, noise_from_direction=True)

    return Scenario(
        name="noise_from_direction_seed_full_run",
        description=f"whole DPZero run, T={setup.steps}, n={setup.n}, full batch, noise z_t drawn from the direction "
                    f"generator after u_t (dpzero.E13)",
        sample=sample, **plan_claim(setup.plan), delta=run["delta"],
    )


def direction_seed_run_attack(**settings) -> Callable[[np.ndarray], np.ndarray]:
    """The attacker of bug 5: from the public seed regenerate, for every step, u_t and then the would-be noise
    z_t from key ("dpzero", "direction", t) (u_t first, as the buggy code draws them), subtract σz_t from ŝ_t and
    score the canary statistic Σ_t s_t (ŝ_t − σz_t), s_t = sign(⟨e_1, u_t⟩). Against the bug the residuals are the
    clipped means ∓C s_t/n exactly (score ∓T·C/n); against the real algorithm z_t is unrelated to the noise.
    ``settings`` as for ``direction_seed_run_scenario``."""
    options = dict(RUN_SETTINGS)
    options.update(settings)
    setup = dpzero_run_setup(**options)
    would_be_noise = np.empty(setup.steps)
    for t in range(setup.steps):
        rng = Streams(options["public_seed"]).generator("dpzero", "direction", t)
        sample_sphere(rng, (), setup.d, math.sqrt(setup.d))
        would_be_noise[t] = rng.standard_normal()
    offset = setup.plan.noise_std * would_be_noise
    signs = setup.pair.signs.astype(np.float64)

    def score(outputs):
        return (_check_outputs(outputs, setup.steps) - offset) @ signs

    return score


# ---------------------------------------------------------------------------------------------------
# Registry and audit


def _likelihood_ratio_attack(scenario: Scenario):
    return likelihood_ratio_score(scenario)


#: Trials per dataset of bugs 1 and 2 (and their twins): what the Clopper–Pearson ε_lb needs to refute their
#: (ε, δ) claim ε = 1 at the quick audits' confidence 1 − 1e-6 (true μ = 0.536, tight ε = 2.155; expected ε_lb of
#: the best fixed threshold at the rounded expected counts: 1.06 at 10⁵, 1.18 at 2·10⁵, 1.32 at 5·10⁵).
CLIPPED_MEAN_BUDGET = 500_000

#: name → (scenario factory, attack factory (scenario → score), trial budget per dataset): the audit at this budget
#: must report "violation", by a bound valid for the bug's claim, even at the quick audits' confidence 1 − 1e-6
#: (dpref.audit.QUICK_CONFIDENCE), which runs every planted bug at this budget.
PLANTED: dict[str, tuple[Callable[[], Scenario], Callable[[Scenario], Callable], int]] = {
    "noise_halved": (noise_halved_scenario, _likelihood_ratio_attack, CLIPPED_MEAN_BUDGET),
    "sensitivity_c_over_n": (sensitivity_c_over_n_scenario, _likelihood_ratio_attack, CLIPPED_MEAN_BUDGET),
    "poisson_accounted_shuffle_run": (shuffle_run_scenario, _likelihood_ratio_attack, 20_000),
    "noise_from_direction_seed": (direction_seed_scenario, lambda scenario: direction_seed_attack(), 1000),
    "noise_from_direction_seed_full_run": (direction_seed_run_scenario, lambda scenario: direction_seed_run_attack(),
                                           500),
}

#: The correctly implemented twins, same layout; the audit at the budget must report "consistent".
TWINS: dict[str, tuple[Callable[[], Scenario], Callable[[Scenario], Callable], int]] = {
    "noise_halved": (lambda: noise_halved_scenario(buggy=False), _likelihood_ratio_attack, CLIPPED_MEAN_BUDGET),
    "sensitivity_c_over_n": (lambda: sensitivity_c_over_n_scenario(buggy=False), _likelihood_ratio_attack,
                             CLIPPED_MEAN_BUDGET),
    "poisson_accounted_shuffle_run": (poisson_run_scenario, _likelihood_ratio_attack, 20_000),
    "noise_from_direction_seed": (lambda: direction_seed_scenario(buggy=False),
                                  lambda scenario: direction_seed_attack(), 1000),
    "noise_from_direction_seed_full_run": (lambda: direction_seed_run_scenario(buggy=False),
                                           lambda scenario: direction_seed_run_attack(), 500),
}


def _run(registry: dict, name, seed, trials, confidence, progress=False) -> AuditResult:
    if not isinstance(name, str) or name not in registry:
        raise ValueError(f"name must be one of {sorted(registry)}, got {name!r}")
    scenario_factory, attack_factory, budget = registry[name]
    trials = budget if trials is None else check_int("trials", trials, minimum=2)
    scenario = scenario_factory()
    return audit(scenario, trials, seed=seed, attack=attack_factory(scenario), confidence=confidence,
                 progress=progress)


def audit_planted(name, seed, trials=None, *, confidence=0.95, progress=False) -> AuditResult:
    """Audit planted bug ``name`` (a key of ``PLANTED``) with ``trials`` outputs per dataset (default: its stated
    budget) and its exposing attack; the expected verdict is "violation". progress: a bar on stderr (``audit``)."""
    return _run(PLANTED, name, seed, trials, confidence, progress)


def audit_twin(name, seed, trials=None, *, confidence=0.95, progress=False) -> AuditResult:
    """Audit the correct twin of planted bug ``name`` (a key of ``TWINS``); the expected verdict is "consistent"."""
    return _run(TWINS, name, seed, trials, confidence, progress)


# ---------------------------------------------------------------------------------------------------
# Bugs 6–12: leaks through the published files of a run (``empirical_dp.published``)
#
# Each is the DPZero pipeline of ``empirical_dp.published`` (``reference.runner.run_algorithm`` and
# ``publication``, R = 2 replicates, T = 50, n = 50, claimed ε = 1 at δ = 1e-5) with one old defect put back,
# audited on the whole publication with the feature chosen on a separate training split:
#  6. ``published-old-default-noise``: the secret noise stream is each replicate's public seed's
#     ("dpzero", "noise") stream (the old default noise_seed = seed);
#  7. ``published-overlapping-replicate-seeds``: public replicate seeds S..S+R−1, secret S+1..S+R;
#  8. ``published-secret-seed-in-manifest``: the user's secret seeds written into manifest.json;
#  9. ``published-clip-counts``: the per-step clip counts published (include_nonprivate=True);
# 10. ``published-poisson-counts``: Poisson add/remove (q = 0.5 a public constant, n = 10 vs 11, T = 400) with the
#     realised batch sizes and evaluation counts in ledger.json, as the old ledger had them;
# 11. ``published-training-diagnostics``: the per-step objective and ‖∇F‖² computed on the TRAINING data;
# 12. ``published-nonfinite-abort``: a record whose loss is NaN aborts the run, which then publishes only
#     error.txt.
# The algorithms refuse a secret seed equal to a public seed, so 6 and 7 are reproduced around them (a run with
# known user secrets whose noise is then replaced, iterates and trajectory rebuilt; ``published.publish``), and
# 12 aborts in the planted code. Twins: the correct pipeline (``dpzero-published``; for 10 the same Poisson run
# with the default publication, for 12 the same NaN record with the run completing).

#: Trials per data set of the published-output planted bugs (plus ``published.TRAINING_TRIALS`` for training):
#: at the quick audits' confidence 1 − 1e-6 a perfect separation then certifies ε_lb ≈ 1.6 > 1.
PUBLISHED_BUDGET = 100
#: Planted name → (variant of ``published.VARIANTS``, its twin's variant).
PUBLISHED_PLANTED = {
    "published-old-default-noise": ("old_default_noise", "default"),
    "published-overlapping-replicate-seeds": ("overlapping_replicate_seeds", "default"),
    "published-secret-seed-in-manifest": ("secret_seed_in_manifest", "default"),
    "published-clip-counts": ("clip_counts_published", "default"),
    "published-poisson-counts": ("poisson_counts_published", "poisson"),
    "published-training-diagnostics": ("training_diagnostics", "default"),
    "published-nonfinite-abort": ("nonfinite_abort", "nonfinite"),
}


def _published_planted(name: str) -> Scenario:
    return PUBLISHED_BUILTINS[name]().scenario


def _published_twin(name: str) -> Scenario:
    return published_scenario(PUBLISHED_PLANTED[name][1], name=f"{name}-twin").scenario


def _published_attack(scenario: Scenario) -> Callable:
    """The score the scenario trained on its own training split (``published.PublishedAudit.score``)."""
    return scenario.log_likelihood_ratio


PLANTED.update({name: (lambda name=name: _published_planted(name), _published_attack, PUBLISHED_BUDGET)
                for name in PUBLISHED_PLANTED})
TWINS.update({name: (lambda name=name: _published_twin(name), _published_attack, PUBLISHED_BUDGET)
              for name in PUBLISHED_PLANTED})
__all__ += ["PUBLISHED_BUDGET", "PUBLISHED_PLANTED"]


# ---------------------------------------------------------------------------------------------------
# Bugs 13–14: zo_o2nc's tree noise (``empirical_dp.zo_o2nc``; docs/audits.md, zo_o2nc)
#
# Both claim μ-GDP at the ledger's ρ = μ*(1, 1e-5) = 0.268 (the plan's exact ρ, a μ-GDP statement for the tree
# release), so the GDP μ bound may decide. Budgets from the expected μ_lb at the quick confidence 1 − 1e-6 (each
# rate's Clopper–Pearson bound at 1 − 2.5e-7 costs ≈ 6.3/√N_count in μ, two rates ≈ 12.6/√N_count): bug 13 (true
# μ = 0.536) expects μ_lb ≈ 0.44 at 20 000 trials per dataset (19 000 counted), bug 14 (true μ = 0.371) expects
# μ_lb ≈ 0.33 at 100 000, each above the claim 0.268 by several standard deviations of μ_lb (≈ 0.01).

#: Trials per data set of ``zo_o2nc-noise-halved-sensitivity`` (true μ = 2ρ).
ZO_O2NC_HALVED_BUDGET = 20_000
#: Trials per data set of ``zo_o2nc-nodes-renoised`` (true μ = 1.384ρ).
ZO_O2NC_RENOISED_BUDGET = 100_000

PLANTED.update({
    "zo_o2nc-noise-halved-sensitivity": (noise_halved_sensitivity_scenario, _likelihood_ratio_attack,
                                         ZO_O2NC_HALVED_BUDGET),
    "zo_o2nc-nodes-renoised": (nodes_renoised_scenario, _likelihood_ratio_attack, ZO_O2NC_RENOISED_BUDGET),
})
TWINS.update({
    "zo_o2nc-noise-halved-sensitivity": (lambda: noise_halved_sensitivity_scenario(buggy=False),
                                         _likelihood_ratio_attack, ZO_O2NC_HALVED_BUDGET),
    "zo_o2nc-nodes-renoised": (lambda: nodes_renoised_scenario(buggy=False), _likelihood_ratio_attack,
                               ZO_O2NC_RENOISED_BUDGET),
})
__all__ += ["ZO_O2NC_HALVED_BUDGET", "ZO_O2NC_RENOISED_BUDGET"]


# ---------------------------------------------------------------------------------------------------
# Bugs 15–16: leaks through the published files of a zo_o2nc run (``empirical_dp.zo_o2nc_published``)
#
# Each is the zo_o2nc pipeline of ``empirical_dp.zo_o2nc_published`` (``reference.runner.run_zo_o2nc`` with its
# default privacy arguments on the flat/canary pair, M = 32, d = 1, T = 5, K = 3, then ``publication``; a fresh
# public seed per trial) with one defect put in, audited on the whole publication with the feature chosen on a
# separate training split, against the μ-GDP claim at the ledger's exact ρ = μ*(1, 1e-5) = 0.2681 (ε = 1):
# 15. ``zo_o2nc-published-public-seed-noise``: the secret seed computed from the public seed (noise_seed =
#     seed + 1, the old seed + r arithmetic), which the runner accepts (it differs from seed and data seed);
# 16. ``zo_o2nc-published-training-diagnostics``: the NOT PRIVATE training diagnostics published
#     (include_nonprivate=True).
# Twins: the default pipeline (``zo_o2nc-published``). Budget: 50 publications per data set (plus
# ``published.TRAINING_TRIALS`` for training; a publication costs ~50 ms, ten times a DPZero one, so half the
# DPZero budget keeps `dpref check` under its 3 minutes); a perfect separation of 50 still certifies a μ_lb far
# above the claim's 0.2681 at the quick confidence 1 − 1e-6 (0/0 errors: each error rate ≤ 1 − 1e-6^(1/n)).

#: Trials per data set of the zo_o2nc published-output planted bugs.
ZO_O2NC_PUBLISHED_BUDGET = 50
#: Planted name → (variant of ``zo_o2nc_published.VARIANTS``, its twin's variant).
ZO_O2NC_PUBLISHED_PLANTED = {
    "zo_o2nc-published-public-seed-noise": ("public_seed_noise", "default"),
    "zo_o2nc-published-training-diagnostics": ("training_diagnostics", "default"),
}


def _zo_o2nc_published_planted(name: str) -> Scenario:
    return ZO_O2NC_PUBLISHED_BUILTINS[name]().scenario


def _zo_o2nc_published_twin(name: str) -> Scenario:
    return zo_o2nc_published_scenario(ZO_O2NC_PUBLISHED_PLANTED[name][1], name=f"{name}-twin").scenario


PLANTED.update({name: (lambda name=name: _zo_o2nc_published_planted(name), _published_attack,
                       ZO_O2NC_PUBLISHED_BUDGET) for name in ZO_O2NC_PUBLISHED_PLANTED})
TWINS.update({name: (lambda name=name: _zo_o2nc_published_twin(name), _published_attack, ZO_O2NC_PUBLISHED_BUDGET)
              for name in ZO_O2NC_PUBLISHED_PLANTED})
__all__ += ["ZO_O2NC_PUBLISHED_BUDGET", "ZO_O2NC_PUBLISHED_PLANTED"]


# ---------------------------------------------------------------------------------------------------
# Bug 17: nsnc_improved's first-order reset sensitivity (``empirical_dp.nsnc_improved``; docs/audits.md, nsnc_improved)
#
# Algorithm 2 with Algorithm 5 (T = 32, two periods of Σ = 16, d = 2, B1 = 1, B2 = 4, m = 1) on the linear canary
# pair in the reset leaf of period 2, σ calibrated with Lemma C.1's printed L/B1: σ/2, claimed μ-GDP at μ*(2, 1e-5) =
# 0.5016 (the GDP bound may decide), true μ = 1.0031. Budget from the measured μ_lb at the quick confidence 1 − 1e-6
# (seeds 0–4): at 5 000 trials 0.79–0.84, at 10 000 0.84–0.90, each far above the claim; at 2 000 the tails hold too
# few counted errors and the bound often says nothing. 10 000 trials take ~1 s.

#: Trials per data set of ``nsnc_improved-fo-reset-halved`` (true μ = 2μ*).
NSNC_IMPROVED_FO_RESET_BUDGET = 10_000

PLANTED["nsnc_improved-fo-reset-halved"] = (fo_reset_sensitivity_halved_scenario, _likelihood_ratio_attack,
                                                        NSNC_IMPROVED_FO_RESET_BUDGET)
TWINS["nsnc_improved-fo-reset-halved"] = (lambda: fo_reset_sensitivity_halved_scenario(buggy=False),
                                                      _likelihood_ratio_attack, NSNC_IMPROVED_FO_RESET_BUDGET)
__all__ += ["NSNC_IMPROVED_FO_RESET_BUDGET"]


# ---------------------------------------------------------------------------------------------------
# Bug 18: a leak through the published files of an nsnc_improved run (``empirical_dp.nsnc_improved_published``)
#
# The default nsnc_improved pipeline of ``empirical_dp.nsnc_improved_published`` (``run_nsnc_improved`` with its
# default arguments on the flat/canary pair, M = 32, d = 1, T = 17, Σ = 4, B1 = 4, then ``nsnc_publication``; a fresh
# public seed per trial) with the NOT PRIVATE training diagnostics published (include_nonprivate=True), audited on
# the whole publication against the ledger's claim: μ-GDP at μ = 0.2367 at the default m = 64 (worst case), so the
# GDP bound decides and the budget is zo_o2nc's (50 per data set: a perfect separation of the 48 counted trials
# certifies μ_lb ≈ 1.22 > 0.2367 at the quick confidence 1 − 1e-6; against an (ε, δ) claim only Clopper–Pearson
# would decide, and 50 would certify only ε_lb ≈ 0.79 < 1).

#: Trials per data set of the nsnc_improved published-output planted bug.
NSNC_IMPROVED_PUBLISHED_BUDGET = 50
#: Planted name → (variant of ``nsnc_improved_published.VARIANTS``, its twin's variant).
NSNC_IMPROVED_PUBLISHED_PLANTED = {"nsnc_improved-published-nonprivate": ("nonprivate", "default")}


def _nsnc_improved_published_planted(name: str) -> Scenario:
    return NSNC_IMPROVED_PUBLISHED_BUILTINS[name]().scenario


def _nsnc_improved_published_twin(name: str) -> Scenario:
    return nsnc_improved_published_scenario(NSNC_IMPROVED_PUBLISHED_PLANTED[name][1], name=f"{name}-twin").scenario


PLANTED.update({name: (lambda name=name: _nsnc_improved_published_planted(name), _published_attack,
                       NSNC_IMPROVED_PUBLISHED_BUDGET) for name in NSNC_IMPROVED_PUBLISHED_PLANTED})
TWINS.update({name: (lambda name=name: _nsnc_improved_published_twin(name), _published_attack,
                     NSNC_IMPROVED_PUBLISHED_BUDGET) for name in NSNC_IMPROVED_PUBLISHED_PLANTED})
__all__ += ["NSNC_IMPROVED_PUBLISHED_BUDGET", "NSNC_IMPROVED_PUBLISHED_PLANTED"]


# ---------------------------------------------------------------------------------------------------
# Bug 19: spider_sosp's printed tree noise (``empirical_dp.spider_sosp``; docs/audits.md, spider_sosp)
#
# Algorithm 2 (global tree, T = Σ = 3, d = 16, n = 20 000, b = 87, κ = 1.2) on the canary pair in leaf 1 with the
# restart at leaf 3, σ = α/√d = 0.0334 (Theorem 3.11 as printed), which claims (ε, δ) = (1, 1e-5): only the
# Clopper–Pearson ε_lb may decide. The pair's true μ is 1.194 (exact ε 5.38). Budget from the expected ε_lb of the
# best fixed threshold at the rounded expected counts of that μ-GDP pair, each threshold of the Bonferroni grid at
# 1 − 1e-6/16 (the quick audits' confidence): 1.65 at 5 000 trials per dataset, 1.93 at 10 000, 2.19 at 20 000 (at
# 0.95: 2.11, 2.37, 2.62); 10 000 trials take ~0.2 s.

#: Trials per data set of ``spider-sosp-printed-noise``.
SPIDER_SOSP_PRINTED_NOISE_BUDGET = 10_000

PLANTED["spider-sosp-printed-noise"] = (printed_noise_scenario, _likelihood_ratio_attack,
                                        SPIDER_SOSP_PRINTED_NOISE_BUDGET)
TWINS["spider-sosp-printed-noise"] = (lambda: printed_noise_scenario(buggy=False), _likelihood_ratio_attack,
                                      SPIDER_SOSP_PRINTED_NOISE_BUDGET)
__all__ += ["SPIDER_SOSP_PRINTED_NOISE_BUDGET"]


# ---------------------------------------------------------------------------------------------------
# Bug 20: a leak through the published files of a spider_sosp run (``empirical_dp.spider_sosp_published``)
#
# The default spider_sosp pipeline of ``empirical_dp.spider_sosp_published`` (``run_spider_sosp`` with its default
# arguments but n = 10⁴, on the canary pair in step 0's O1 batch, then ``spider_publication``; a fresh public seed per
# trial) with the NOT PRIVATE training diagnostics published (include_nonprivate=True), audited on the whole
# publication against the ledger's μ-GDP claim μ = 0.2367 (rule gdp_exact): the GDP bound may decide, and a perfect
# separation of 50 publications per data set certifies μ_lb ≈ 1.22 at the quick confidence 1 − 1e-6 (zo_o2nc's
# published budget). 50 publications per data set take ~10 s with the training split.

#: Trials per data set of the spider_sosp published-output planted bug.
SPIDER_SOSP_PUBLISHED_BUDGET = 50
#: Planted name → (variant of ``spider_sosp_published.VARIANTS``, its twin's variant).
SPIDER_SOSP_PUBLISHED_PLANTED = {"spider_sosp-published-nonprivate": ("nonprivate", "default")}


def _spider_sosp_published_planted(name: str) -> Scenario:
    return SPIDER_SOSP_PUBLISHED_BUILTINS[name]().scenario


def _spider_sosp_published_twin(name: str) -> Scenario:
    return spider_sosp_published_scenario(SPIDER_SOSP_PUBLISHED_PLANTED[name][1], name=f"{name}-twin").scenario


PLANTED.update({name: (lambda name=name: _spider_sosp_published_planted(name), _published_attack,
                       SPIDER_SOSP_PUBLISHED_BUDGET) for name in SPIDER_SOSP_PUBLISHED_PLANTED})
TWINS.update({name: (lambda name=name: _spider_sosp_published_twin(name), _published_attack,
                     SPIDER_SOSP_PUBLISHED_BUDGET) for name in SPIDER_SOSP_PUBLISHED_PLANTED})
__all__ += ["SPIDER_SOSP_PUBLISHED_BUDGET", "SPIDER_SOSP_PUBLISHED_PLANTED"]


# ---------------------------------------------------------------------------------------------------
# Bug 21: bgm21 Algorithm 6 with the printed σ̂ (``empirical_dp.bgm21``; docs/audits.md, bgm21)
#
# The scenario, its twin and the budget (10⁶ trials per dataset, sized from the expected Clopper–Pearson ε_lb at the
# quick confidence) are defined beside the scenario; only the (ε, δ) claim can be refuted, so Clopper–Pearson decides.

PLANTED.update(BGM21_PLANTED)
TWINS.update(BGM21_TWINS)


# ---------------------------------------------------------------------------------------------------
# Bug 22: a leak through the published files of a bgm21 run (``empirical_dp.bgm21_published``)
#
# The default bgm21 Algorithm 6 pipeline of ``empirical_dp.bgm21_published`` (``run_bgm21("nsfw")`` with its default
# arguments but n = 2048, on the canary pair first in batch B_0^0, then ``bgm21_publication``; a fresh public seed per
# trial) with its secret seed computed from the public one (noise_seed = seed + 1), audited on the whole publication
# against the ledger's μ-GDP claim μ = 0.1902 (route gdp_exact): the GDP bound may decide, and a perfect separation of
# 50 publications per data set certifies μ_lb ≈ 1.22 at the quick confidence 1 − 1e-6 (zo_o2nc's published budget).
# 50 publications per data set take ~3 s with the training split.

#: Trials per data set of the bgm21 published-output planted bug.
BGM21_PUBLISHED_BUDGET = 50
#: Planted name → (variant of ``bgm21_published.VARIANTS``, its twin's variant).
BGM21_PUBLISHED_PLANTED = {"bgm21_nsfw-published-public-seed-noise": ("nsfw_public_seed_noise", "nsfw")}


def _bgm21_published_planted(name: str) -> Scenario:
    return BGM21_PUBLISHED_BUILTINS[name]().scenario


def _bgm21_published_twin(name: str) -> Scenario:
    return bgm21_published_scenario(BGM21_PUBLISHED_PLANTED[name][1], name=f"{name}-twin").scenario


PLANTED.update({name: (lambda name=name: _bgm21_published_planted(name), _published_attack,
                       BGM21_PUBLISHED_BUDGET) for name in BGM21_PUBLISHED_PLANTED})
TWINS.update({name: (lambda name=name: _bgm21_published_twin(name), _published_attack,
                     BGM21_PUBLISHED_BUDGET) for name in BGM21_PUBLISHED_PLANTED})
__all__ += ["BGM21_PUBLISHED_BUDGET", "BGM21_PUBLISHED_PLANTED"]


# ---------------------------------------------------------------------------------------------------
# Bug 23: Opacus DP-SGD on a fixed-order loader accounted as Poisson (``empirical_dp.opacus_dpsgd``; docs/audits.md,
# Opacus DP-SGD)
#
# ``make_private(..., poisson_sampling=False)`` on ``DataLoader(shuffle=False)`` (b = 1 of n = 100 per trial, one
# epoch, σ = 1), claimed by Opacus's PRV accountant as Poisson q = 1/len(loader) = 0.01 over 100 steps (ε = 0.728 at
# δ = 1e-5); the canary's batch is public, so the run is exactly 1-GDP (tight ε 4.38). Only the (ε, δ) claim can be
# refuted, so Clopper–Pearson decides; budget ``opacus_dpsgd.FIXED_ORDER_BUDGET``. Twin: the same loader through
# ``make_private(poisson_sampling=True)``. Building either needs opacus and torch (extra "compare").


# opacus_dpsgd imports torch and opacus only inside its functions, so importing it here stays cheap.
from .opacus_dpsgd import FIXED_ORDER_BUDGET as OPACUS_FIXED_ORDER_BUDGET  # noqa: E402
from .opacus_dpsgd import opacus_fixed_order_scenario, opacus_fixed_order_twin_scenario  # noqa: E402

PLANTED["opacus-fixed-order-loader"] = (opacus_fixed_order_scenario, _likelihood_ratio_attack,
                                        OPACUS_FIXED_ORDER_BUDGET)
TWINS["opacus-fixed-order-loader"] = (opacus_fixed_order_twin_scenario, _likelihood_ratio_attack,
                                      OPACUS_FIXED_ORDER_BUDGET)
__all__ += ["OPACUS_FIXED_ORDER_BUDGET"]


# ---------------------------------------------------------------------------------------------------
# Bugs 24–25: the torch DPZero backend with noise_seed = public seed + 1 (``empirical_dp.dpzero_torch``)

from .dpzero_torch import (DPZERO_TORCH_PUBLISHED_BUILTINS, dpzero_torch_full_run_scenario,  # noqa: E402
                           dpzero_torch_seed_leak_scenario, seed_leak_attack, torch_published_scenario)

#: FP = FN = 0 of the 190 counted trials gives μ_lb 2.85 > 0.5016 at confidence 1 − 1e-6.
TORCH_SEED_LEAK_BUDGET = 200
PLANTED["dpzero-torch-seed-leak"] = (dpzero_torch_seed_leak_scenario, lambda scenario: seed_leak_attack(),
                                     TORCH_SEED_LEAK_BUDGET)
TWINS["dpzero-torch-seed-leak"] = (lambda: dpzero_torch_full_run_scenario(name="dpzero-torch-seed-leak-twin"),
                                   lambda scenario: seed_leak_attack(), TORCH_SEED_LEAK_BUDGET)
PLANTED["dpzero_torch-published-seed-leak"] = (
    lambda: DPZERO_TORCH_PUBLISHED_BUILTINS["dpzero_torch-published-seed-leak"]().scenario,
    _published_attack, PUBLISHED_BUDGET)
TWINS["dpzero_torch-published-seed-leak"] = (
    lambda: torch_published_scenario("default", name="dpzero_torch-published-seed-leak-twin").scenario,
    _published_attack, PUBLISHED_BUDGET)
__all__ += ["TORCH_SEED_LEAK_BUDGET"]
