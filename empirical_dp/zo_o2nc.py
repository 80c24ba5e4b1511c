"""Audit scenarios for zo_o2nc run through the algorithm itself (zo_o2nc Algorithms 3 + 4 with Algorithm 5's tree
noise; Theorem 4.3, Corollary 4.4; docs/audits.md, "zo_o2nc: one epoch and the whole run").

Sources:
- Zhang, Tran, Cutkosky 2024 (ICLR), "Private Zeroth-Order Nonsmooth Nonconvex Optimization": Alg 4 (the
  variance-reduced oracle: g_1 = GRAD on the B1 records of block Z_1^k, g_t = g_{t−1} + DIFF on the B2 records of
  Z_t^k, released as g̃_t = g_t + TREE(t)), Alg 5 (TREE), Lemma 3.1 (GRAD sensitivity 2dL/B1), Thm 4.3 (the tree
  release; exact participation counts: leaf 1 enters ⌊log2 T⌋ + 1 nodes, erratum zo_o2nc.E3).
- Dong, Roth, Su 2022 (JRSS-B) Thm 2.7, Cor. 2.13, Thm 3.2 / Cor. 3.3: N(m, Σ) against N(m', Σ) is exactly μ-GDP
  with μ² = (m' − m)ᵀ Σ⁻¹ (m' − m); adaptive composition of Gaussian node releases.
- Nasr et al. 2021 (S&P) §4: the worst-case pair of a gradient audit is one canary with an extremal contribution
  and other records contributing nothing.

Threat model. Replace-one neighbours (the relation of the plan, ``ZoO2ncPrivacyPlan.relation``), M public. The
attacker knows everything except the secret noise seed: x_1, (T, K, B1, B2, δ, D, η, L), σ and ρ (the ledger is
public), both datasets, and the public seed, hence every direction u_ij of every round and every s_t^k. The
output audited is ``DPResult.releases`` (K, T, d) — what the privacy plan covers — flattened epoch by epoch.
One public seed serves all trials (the guarantee holds given the directions, erratum zo_o2nc.E15).

The pair (``canary_pair``). The loss is linear, f(x; z) = L·⟨z, x⟩ with ‖z‖ ≤ 1 (L-Lipschitz for every record,
``LinearLoss``). Every record is z = 0 (loss 0: every GRAD and DIFF contribution is exactly 0) except the canary,
the FIRST record of the GRAD block Z_1^{k_c} of epoch k_c: z = −v on D, +v on D′. Its GRAD contribution at any
query point w is (1/B1)·(1/d)Σ_j d·(f(w + δu_j) − f(w − δu_j))/(2δ)·u_j = ±(L/B1)·(Σ_j u_j u_jᵀ)v: the finite
difference of a linear function is exact and does not depend on w. The attacker, who knows the canary's d public
directions u_1..u_d of round (k_c, 1), takes v the top eigenvector of Σ_j u_j u_jᵀ (largest eigenvalue λ), so the
canary moves g_1^{k_c} by (2L/B1)·λ·v. At d = 1 the "sphere" is {−1, +1}, λ = 1 and the move is 2L/B1 = 2dL/B1,
Lemma 3.1's sensitivity, attained exactly. At d > 1 no record attains it: λ ≤ d with equality only if all d
directions are parallel (λ ≈ 2 at d = 2, ≈ 4 for large d), so the audit at d > 1 measures Lemma 3.1's slack
rather than the accounting; the built-ins use d = 1.
Why leaf 1: the canary's leaf is the GRAD leaf, which enters ⌊log2 T⌋ + 1 tree nodes (every DIFF leaf at most
⌊log2 T⌋). With B1 = T·B2/2 and D = δ/T (Corollary 4.4's regime) s_1 = s_2, so leaf 1 is the ledger's worst leaf and
ρ_exact² = s_1²(⌊log2 T⌋ + 1)/σ². A DIFF canary moves its leaf by 2L‖w_t − w_{t−1}‖/(B2δ), which depends on the
noisy iterates and reaches the bound 2·2DL/(B2δ) only when w_t − w_{t−1} has length 2D (s_t = 1, s_{t−1} = 0 and two
equal steps of length D), essentially never.

Why the law is a fixed shift plus tree noise, sampled exactly without running the algorithm per trial (the
whole-run argument). With the linear loss every noiseless running sum g_t^k is a constant of the data: the zero
records contribute exactly 0 to GRAD and DIFF at any query points, and the canary's GRAD contribution does not
depend on w_1^{k_c}. (A DIFF contribution of a NON-zero linear record would be L⟨z, w_t − w_{t−1}⟩-weighted, i.e.
depend on the iterates and hence on earlier noise: the zero records are what makes every DIFF leaf 0, not
linearity alone.) So the iterates — which do depend on the noise through the releases — never enter the means,
and the K·T releases are m + N with m = the σ = 0 run's releases (``zo_o2nc(..., noise="none")``, a constant) and
N the tree noise: per epoch R ξ^k, ξ^k = σ·z^k, z^k ~ N(0, I_{T×d}), independent across epochs (the tree restarts
every epoch and one secret generator draws ``standard_normal(d)`` per round in order, i.e. ``standard_normal((K,
T, d))``). The builder checks the argument on the algorithm: a private reference run's noiseless sums
(``DPResult.diagnostics.noiseless_sums``) must equal the σ = 0 run's releases. tests/test_audit_zo_o2nc.py
checks the sampler draw for draw against ``reference.algorithms.zo_o2nc.zo_o2nc`` (same secret seed, same
releases) and its covariance against ``reference.mechanisms.tree_noise_covariance``.

Exact privacy of the pair. D gives N(m_0, Σ), D′ gives N(m_1, Σ) with Σ = σ²·blockdiag_k(R Rᵀ ⊗ I_d) and
m_1 − m_0 = Δ nonzero only in epoch k_c (every release t of that epoch moves by the canary's GRAD move a, since
g_t = g_1 + Σ DIFF): μ² = Δᵀ Σ⁻¹ Δ = ‖a‖²·c_1/σ² with c_1 = ⌊log2 T⌋ + 1 (R⁻¹ applied to a constant prefix change is
the indicator of the nodes containing leaf 1, Thm 4.3). The other epochs carry no information about the canary
(parallel composition: their releases have the same law under D and D′), so the whole run's μ equals the
epoch's. The log-likelihood ratio is Δᵀ Σ⁻¹ (x − (m_0 + m_1)/2), linear in the release (``log_likelihood_ratio``).

Claims. The plan (``ZoO2ncPrivacyPlan``) states (α, α·ρ_exact²/2)-RDP for every α. For this mechanism that
ρ_exact is also a μ-GDP statement: the release is a post-processing of the node releases N_b = Σ_{i ∈ N_b} leaf_i
+ ξ_b taken in order of their right endpoints, each leaf depends on the data only through its own block and on
the past releases only through public post-processing, so a replace-one change in block q is an adaptive
composition of c_q Gaussian mechanisms with sensitivity ≤ s_q and noise σ: √(s_q² c_q)/σ-GDP (Dong–Roth–Su Cor.
3.3), maximised over q: ρ_exact; disjoint epochs compose in parallel. So the scenarios claim μ-GDP with claimed μ =
the ledger's ``rho_exact`` (RDP curve αμ²/2 ⇔ μ = ρ for one Gaussian), whose implied ε_μ(δ) is the run's exact ε
(at d = 1 the true μ equals ρ_exact, to the rounding up of σ and ρ). The ledger's own ε (``epsilon_claimed``, the
ρ²/2-zCDP conversion of Canonne–Kamath–Steinke) is larger (1.092 against the exact 1 at ρ = 0.268) and is only
named in the description: the audit holds the run to the stronger μ-GDP statement.

Randomness. ``sample(rng, trials, which)`` draws ``standard_normal((trials, K, T, d))`` (the secret z of every
trial, in the reference's order) and nothing else.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from reference.algorithms.zo_o2nc import directions_for_round, zo_o2nc
from reference.fast.conversions import gaussian_epsilon, gaussian_mu
from reference.fast.mechanisms import participation_count, tree_prefix_noise
from reference.validation import check_int, check_probability, check_real

from .scenarios import Scenario, tree_release_matrix

__all__ = [
    "LinearLoss",
    "CanaryPair",
    "canary_pair",
    "ZoO2ncAuditSetup",
    "zo_o2nc_audit_setup",
    "vectorised_releases",
    "reference_releases",
    "zo_o2nc_scenario",
    "zo_o2nc_epoch_scenario",
    "zo_o2nc_full_run_scenario",
    "noise_halved_sensitivity_scenario",
    "nodes_renoised_scenario",
    "ZO_O2NC_BUILTINS",
    "EPOCH_SETTINGS",
    "FULL_RUN_SETTINGS",
]

#: The secret seed of the one private reference run a setup makes to read the ledger (its releases are discarded).
LEDGER_NOISE_SEED = 2**64 + 20240501
#: Absolute tolerance of the build-time check that the private run's noiseless sums equal the σ = 0 run's releases.
_MEAN_TOLERANCE = 1e-12


class LinearLoss:
    """f(x; z) = L·⟨z, x⟩ for a point x (d,) and a record z (d,) with ‖z‖ ≤ 1: L-Lipschitz in x for every record.

    Its central difference along u is L⟨z, u⟩·2δ at every x (exactly, up to rounding), so GRAD of a record does not
    depend on the query point, and DIFF of the zero record is exactly 0. A class (not a closure) so that a setup
    pickles."""

    def __init__(self, lipschitz):
        self.lipschitz = float(check_real("lipschitz", lipschitz, positive=True))

    def __call__(self, point, row):
        return self.lipschitz * float(np.dot(np.asarray(row, dtype=np.float64), np.asarray(point, dtype=np.float64)))


# ---------------------------------------------------------------------------------------------------
# The pair


@dataclass(frozen=True)
class CanaryPair:
    """The worst-case replace-one pair of the module docstring.

    datasets: (D, D′), each (M, d), M = K·(B1 + B2(T − 1)) (Alg 4's single pass); canary_index: 0-based index of the
    canary, the first record of Z_1^{k_c}; canary_epoch: k_c (1-based); direction: v (d,), unit, the top eigenvector
    of the canary's Σ_j u_j u_jᵀ; gain: its eigenvalue λ (the canary moves g_1^{k_c} by (2L/B1)·λ·v; λ = 1 at d = 1).
    """

    datasets: tuple[np.ndarray, np.ndarray]
    canary_index: int
    canary_epoch: int
    direction: np.ndarray
    gain: float


def canary_pair(T, K, d, B1, B2, *, canary_epoch=1, public_seed=0) -> CanaryPair:
    """The canary pair of zo_o2nc Alg 4 with the directions of ``public_seed`` (module docstring).

    T, K: rounds per epoch and epochs; d: dimension; B1, B2: GRAD and DIFF batch sizes; canary_epoch: k_c ∈ [K];
    public_seed: the run's public seed (the canary's directions are ``directions_for_round(public_seed, k_c, 1, B1,
    d)[0]``).
    """
    T = check_int("T", T, minimum=1)
    K = check_int("K", K, minimum=1)
    d = check_int("d", d, minimum=1)
    B1 = check_int("B1", B1, minimum=1)
    B2 = check_int("B2", B2, minimum=1)
    canary_epoch = check_int("canary_epoch", canary_epoch, minimum=1, maximum=K)
    public_seed = check_int("public_seed", public_seed, minimum=0)
    directions = directions_for_round(public_seed, canary_epoch, 1, B1, d)[0]  # (d, d): u_1..u_d of the canary
    gram = directions.T @ directions  # Σ_j u_j u_jᵀ
    eigenvalues, eigenvectors = np.linalg.eigh(gram)
    direction = eigenvectors[:, -1]
    direction = direction * (1.0 if direction[np.flatnonzero(direction)[0]] > 0 else -1.0)  # a fixed sign
    if d == 1:
        direction = np.ones(1)  # exactly
    per_epoch = B1 + B2 * (T - 1)
    index = (canary_epoch - 1) * per_epoch
    first, second = np.zeros((K * per_epoch, d)), np.zeros((K * per_epoch, d))
    first[index], second[index] = -direction, direction
    for data in (first, second):
        data.setflags(write=False)
    return CanaryPair((first, second), index, canary_epoch, direction, float(eigenvalues[-1]) if d > 1 else 1.0)


# ---------------------------------------------------------------------------------------------------
# The setup: the pair, the ledger, the means and the exact law


@dataclass(frozen=True)
class ZoO2ncAuditSetup:
    """Everything a zo_o2nc audit fixes before any trial.

    pair: ``CanaryPair``; plan: the ``ZoO2ncPrivacyPlan`` of the ledger of a private reference run with these
    settings; noise_std: σ as the run uses it (the ledger's ``settings.noise_std``); means: (2, K, T, d), the
    releases of the σ = 0 reference run on D and on D′ (the means of the private releases); shift: means[1] −
    means[0]; mu: the exact GDP μ of the pair, √(Δᵀ Σ⁻¹ Δ); weights: Σ⁻¹ Δ, (K, T, d); run: keyword arguments of
    ``reference.algorithms.zo_o2nc.zo_o2nc`` besides the data, x_1 and the noise (T, K, B1, B2, δ, D, η, L, seed);
    lipschitz: L of the records; delta: δ of the (ε, δ) statements.
    """

    pair: CanaryPair
    plan: object
    noise_std: float
    means: np.ndarray
    shift: np.ndarray
    mu: float
    weights: np.ndarray
    run: dict
    lipschitz: float
    delta: float

    @property
    def shape(self) -> tuple[int, int, int]:
        """(K, T, d): the shape of one run's releases."""
        return self.means.shape[1:]

    @property
    def columns(self) -> int:
        """K·T·d: the length of one flattened output."""
        return int(np.prod(self.shape))


def zo_o2nc_audit_setup(T=16, K=1, d=1, *, B1=None, B2=1, lipschitz=1.0, smoothing_radius=0.1, step_bound=None,
                        step_size=0.01, rho=None, epsilon=1.0, delta=1e-5, canary_epoch=1, public_seed=0,
                        calibration_lipschitz=None) -> ZoO2ncAuditSetup:
    """The fixed part of a zo_o2nc audit (module docstring).

    T, K, d: rounds per epoch, epochs, dimension. B1: GRAD batch (default max(1, ⌈T·B2/2⌉), Corollary 4.4's
    smallest B1, for which s_1 ≤ s_2 and leaf 1 — in ⌊log2 T⌋ + 1 nodes — is the worst leaf). B2: DIFF batch.
    lipschitz: L of the records. smoothing_radius: δ. step_bound: D (default δ/T). step_size: η (irrelevant to
    the law: no mean depends on the iterates). rho: the ρ σ is calibrated for (default: μ*(ε, δ), the μ whose
    exact GDP ε at δ is ``epsilon``). delta: δ. canary_epoch: k_c. public_seed: the seed of the directions,
    shared by all trials. calibration_lipschitz: the L the run is TOLD (default L): the ledger and σ come from
    a run with lipschitz = calibration_lipschitz (a smaller one plants a calibration bug: the sensitivities it
    calibrates for are smaller than the records' real ones).

    Makes four reference runs (σ = 0 and one private run per dataset, T·K rounds each): raises ValueError when the
    private run's noiseless sums differ from the σ = 0 run's releases (the means would depend on the noise).
    """
    T = check_int("T", T, minimum=1)
    K = check_int("K", K, minimum=1)
    d = check_int("d", d, minimum=1)
    B2 = check_int("B2", B2, minimum=1)
    B1 = max(1, math.ceil(T * B2 / 2)) if B1 is None else check_int("B1", B1, minimum=1)
    lipschitz = float(check_real("lipschitz", lipschitz, positive=True))
    delta = float(check_probability("delta", delta))
    if rho is None:
        rho = gaussian_mu(check_real("epsilon", epsilon, positive=True), delta)
    rho = float(check_real("rho", rho, positive=True))
    calibration_lipschitz = lipschitz if calibration_lipschitz is None else float(
        check_real("calibration_lipschitz", calibration_lipschitz, positive=True))
    public_seed = check_int("public_seed", public_seed, minimum=0)
    pair = canary_pair(T, K, d, B1, B2, canary_epoch=canary_epoch, public_seed=public_seed)
    run = dict(T=T, K=K, B1=B1, B2=B2, smoothing_radius=smoothing_radius, step_bound=step_bound, step_size=step_size,
               lipschitz=lipschitz, seed=public_seed)
    loss, x1 = LinearLoss(lipschitz), np.zeros(d)
    noise_seed = LEDGER_NOISE_SEED if LEDGER_NOISE_SEED != public_seed else LEDGER_NOISE_SEED + 1
    means, plan, sigma = [], None, None
    for data in pair.datasets:
        noiseless = zo_o2nc(loss, data, x1, noise="none", **run)
        private = zo_o2nc(loss, data, x1, rho=rho, dp_delta=delta, noise_seed=noise_seed,
                          **{**run, "lipschitz": calibration_lipschitz})
        if not np.allclose(private.diagnostics.noiseless_sums, noiseless.releases, rtol=0, atol=_MEAN_TOLERANCE):
            raise ValueError("the noiseless sums of a private run differ from the sigma = 0 run's releases: the "
                             "release means depend on the iterates, so the law is not a fixed shift plus tree noise")
        means.append(np.array(noiseless.releases, dtype=np.float64))
        plan, sigma = private.ledger.plan, float(private.ledger.settings.noise_std)
    means = np.stack(means)
    means.setflags(write=False)
    shift = means[1] - means[0]
    release = tree_release_matrix(T)
    whitened = np.stack([np.linalg.solve(release, shift[k]) for k in range(K)])  # R⁻¹Δ per epoch and coordinate
    mu = float(math.sqrt(float(np.sum(whitened**2)))) / sigma
    covariance = release @ release.T
    weights = np.stack([np.linalg.solve(covariance, shift[k]) for k in range(K)]) / sigma**2
    return ZoO2ncAuditSetup(pair, plan, sigma, means, shift, mu, weights, run, lipschitz, delta)


def vectorised_releases(setup: ZoO2ncAuditSetup, which, standard_normals) -> np.ndarray:
    """The releases of ``trials`` runs on D (which = 0) or D′ (1) from their secret normals, without the algorithm.

    standard_normals: (trials, K, T, d), each trial's z in the order the reference's secret generator
    ("zo_o2nc", "noise") draws them (``standard_normal(d)`` per round (1, 1), (1, 2), …, (K, T)). Returns (trials,
    K, T, d): m_which + R(σz) epoch by epoch (``reference.fast.mechanisms.tree_prefix_noise``), σ the setup's.
    """
    which = check_int("which", which, minimum=0, maximum=1)
    z = np.asarray(standard_normals, dtype=np.float64)
    if z.ndim != 4 or z.shape[1:] != setup.shape:
        raise ValueError(f"standard_normals must have shape (trials, {', '.join(map(str, setup.shape))}), "
                         f"got {z.shape}")
    if z.shape[0] == 0:
        return np.empty(z.shape)
    return setup.means[which] + tree_prefix_noise(setup.noise_std * z)


def reference_releases(setup: ZoO2ncAuditSetup, which, noise_seeds) -> np.ndarray:
    """``DPResult.releases`` of one private run of ``reference.algorithms.zo_o2nc.zo_o2nc`` per secret seed (the
    plain-loop reference, for the tests), shape (len(noise_seeds), K, T, d). Runs at the setup's ρ and with its
    calibration (so at the setup's σ)."""
    which = check_int("which", which, minimum=0, maximum=1)
    loss, x1 = LinearLoss(setup.lipschitz), np.zeros(setup.shape[2])
    run = {**setup.run, "lipschitz": setup.plan.lipschitz}
    out = []
    for seed in noise_seeds:
        result = zo_o2nc(loss, setup.pair.datasets[which], x1, rho=setup.plan.rho_target, dp_delta=setup.delta,
                         noise_seed=int(seed), **run)
        if float(result.ledger.settings.noise_std) != setup.noise_std:
            raise ValueError("the reference run's sigma differs from the setup's")
        out.append(np.array(result.releases, dtype=np.float64))
    return np.array(out).reshape((len(out), *setup.shape))


def _check_outputs(outputs, columns: int) -> np.ndarray:
    outputs = np.asarray(outputs, dtype=np.float64)
    if outputs.ndim != 2 or outputs.shape[1] != columns:
        raise ValueError(f"outputs must have shape (trials, {columns}), got {outputs.shape}")
    return outputs


def _check_sample_args(rng, trials, which) -> tuple[int, int]:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return check_int("trials", trials, minimum=0), check_int("which", which, minimum=0, maximum=1)


def _describe(setup: ZoO2ncAuditSetup, mu: float, bug: str | None = None) -> str:
    K, T, d = setup.shape
    run, plan = setup.run, setup.plan
    epochs = "1 epoch" if K == 1 else f"{K} epochs (canary in epoch {setup.pair.canary_epoch})"
    planted = "" if bug is None else f" [{bug}]"
    return (f"zo_o2nc Alg 3+4, {epochs}, T={T}, d={d}, B1={run['B1']}, B2={run['B2']}, L={setup.lipschitz:g}, "
            f"canary in leaf 1 ({participation_count(1, T)} nodes){planted}, σ={setup.noise_std:.6g}, μ={mu:.6g}; "
            f"ledger ρ={plan.rho_exact:.6g} (its zCDP ε={plan.epsilon_claimed:.4g})")


def zo_o2nc_scenario(setup: ZoO2ncAuditSetup, *, name, bug=None) -> Scenario:
    """The honest ``Scenario`` of a setup: outputs (trials, K·T·d) = the flattened ``DPResult.releases`` of the run
    on D or D′ (``vectorised_releases``); claim μ-GDP with μ = the ledger's ``rho_exact``; true μ = ``setup.mu``,
    tight ε = ε_μ(δ); the exact log-likelihood ratio Δᵀ Σ⁻¹ (x − (m_0 + m_1)/2). bug: a planted bug's label for
    the description (None for the honest scenarios)."""
    weights = setup.weights.reshape(-1)
    midpoint = ((setup.means[0] + setup.means[1]) / 2).reshape(-1)
    shape, columns = setup.shape, setup.columns

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        z = rng.standard_normal((trials, *shape))
        return vectorised_releases(setup, which, z).reshape(trials, columns)

    def log_likelihood_ratio(outputs):
        return (_check_outputs(outputs, columns) - midpoint) @ weights

    return Scenario(
        name=name, description=_describe(setup, setup.mu, bug), sample=sample,
        claimed_mu=float(setup.plan.rho_exact), delta=setup.delta,
        tight_epsilon=gaussian_epsilon(setup.delta, setup.mu), mu=setup.mu, log_likelihood_ratio=log_likelihood_ratio,
    )


#: ``zo_o2nc-epoch``: one epoch (K = 1), T = 16, d = 1, B1 = 8 = T·B2/2, B2 = 1, L = 1, ρ = μ*(1, 1e-5).
EPOCH_SETTINGS = dict(T=16, K=1, d=1, B2=1, epsilon=1.0, delta=1e-5, canary_epoch=1, public_seed=0)
#: ``zo_o2nc-full-run``: K = 3 epochs, the canary in epoch 2, T = 16, d = 1, B1 = 8, B2 = 1, ρ = μ*(2, 1e-5).
FULL_RUN_SETTINGS = dict(T=16, K=3, d=1, B2=1, epsilon=2.0, delta=1e-5, canary_epoch=2, public_seed=0)


def zo_o2nc_epoch_scenario(**kwargs) -> Scenario:
    """``zo_o2nc-epoch``: the oracle's T = 16 releases of ONE epoch (Alg 4 + Alg 5) on the canary pair, d = 1,
    B1 = 8, B2 = 1, σ calibrated by the reference for ρ = μ*(1, 1e-5) = 0.26805 (exact counts), so the exact
    μ-GDP of the pair is ρ and its ε at δ = 1e-5 is 1. Keyword arguments override ``zo_o2nc_audit_setup``'s."""
    options = {**EPOCH_SETTINGS, **kwargs}
    name = options.pop("name", "zo_o2nc-epoch")
    return zo_o2nc_scenario(zo_o2nc_audit_setup(**options), name=name)


def zo_o2nc_full_run_scenario(**kwargs) -> Scenario:
    """``zo_o2nc-full-run``: the whole run's K·T = 48 releases (K = 3 epochs of T = 16), the canary in epoch 2,
    d = 1, B1 = 8, B2 = 1, σ for ρ = μ*(2, 1e-5) = 0.50155: the exact ε of the whole run is 2 (parallel
    composition: epochs 1 and 3 carry nothing about the canary). Keyword arguments override
    ``zo_o2nc_audit_setup``'s."""
    options = {**FULL_RUN_SETTINGS, **kwargs}
    name = options.pop("name", "zo_o2nc-full-run")
    return zo_o2nc_scenario(zo_o2nc_audit_setup(**options), name=name)


#: Built-in name → factory (``registry.SCENARIOS`` builds each on first use).
ZO_O2NC_BUILTINS: dict[str, Callable[[], Scenario]] = {
    "zo_o2nc-epoch": zo_o2nc_epoch_scenario,
    "zo_o2nc-full-run": zo_o2nc_full_run_scenario,
}


# ---------------------------------------------------------------------------------------------------
# Planted bugs (registered in ``empirical_dp.planted``)


def noise_halved_sensitivity_scenario(*, buggy=True, **kwargs) -> Scenario:
    """Planted bug ``zo_o2nc-noise-halved-sensitivity``: the tree noise calibrated for half the sensitivities —
    dL/B1 for the GRAD leaf instead of Lemma 3.1's replace-one 2dL/B1 (the add/remove value; cf. erratum zo_o2nc.E8
    for Alg 6), and the DIFF leaves halved alike. Reproduced by running the reference's calibration told L/2
    (``calibration_lipschitz``): σ_bug = σ/2, and the buggy ledger states ρ_exact = ρ, the μ-GDP claim; the pair's
    records are L-Lipschitz, so its true μ is 2ρ. ``buggy=False``: the twin, the correct ``zo_o2nc-epoch``
    mechanism against the same claim. Settings: ``EPOCH_SETTINGS`` (keyword arguments override them)."""
    options = {**EPOCH_SETTINGS, **kwargs}
    if buggy:
        options["calibration_lipschitz"] = options.get("lipschitz", 1.0) / 2
    name = "zo_o2nc-noise-halved-sensitivity" if buggy else "zo_o2nc-noise-halved-sensitivity-twin"
    bug = "planted: σ for half the sensitivity" if buggy else None
    return zo_o2nc_scenario(zo_o2nc_audit_setup(**options), name=name, bug=bug)


def nodes_renoised_scenario(*, buggy=True, **kwargs) -> Scenario:
    """Planted bug ``zo_o2nc-nodes-renoised``: TREE(t) sums FRESH node noises at every release instead of the stored
    ξ_b (Alg 5 line 2 stores ξ_t once per epoch): release t is m_t + Σ_{b ∈ R(t)} ξ_b^{(t)}, independent across t,
    i.e. m_t + √|R(t)|·σ·z_t (|R(t)| = popcount(t)), while the ledger is the correct one (claim ρ). Independent
    releases each carrying the canary's move a: μ² = ‖a‖² Σ_t 1/(|R(t)|σ²), against the tree's ‖a‖²c_1/σ² (T = 16:
    μ = 1.384ρ). Draws ``standard_normal((trials, K, T, d))``. ``buggy=False``: the twin, the correct mechanism.
    Settings: ``EPOCH_SETTINGS`` (keyword arguments override them)."""
    options = {**EPOCH_SETTINGS, **kwargs}
    setup = zo_o2nc_audit_setup(**options)
    if not buggy:
        return zo_o2nc_scenario(setup, name="zo_o2nc-nodes-renoised-twin")
    K, T, d = setup.shape
    counts = np.array([_release_node_count(t) for t in range(1, T + 1)], dtype=np.float64)
    scale = (setup.noise_std * np.sqrt(counts))[None, :, None]  # (1, T, 1): the std of release t
    weights = (setup.shift / scale**2).reshape(-1)
    midpoint = ((setup.means[0] + setup.means[1]) / 2).reshape(-1)
    mu = float(math.sqrt(float(np.sum((setup.shift / scale) ** 2))))
    columns = setup.columns

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        z = rng.standard_normal((trials, K, T, d))
        return (setup.means[which] + scale * z).reshape(trials, columns)

    def log_likelihood_ratio(outputs):
        return (_check_outputs(outputs, columns) - midpoint) @ weights

    return Scenario(
        name="zo_o2nc-nodes-renoised",
        description=_describe(setup, mu, "planted: nodes re-noised at every release"),
        sample=sample, claimed_mu=float(setup.plan.rho_exact), delta=setup.delta,
        tight_epsilon=gaussian_epsilon(setup.delta, mu), mu=mu, log_likelihood_ratio=log_likelihood_ratio,
    )


def _release_node_count(t: int) -> int:
    """|R(t)| = popcount(t): the number of tree nodes whose noise TREE(t) sums (zo_o2nc Alg 5)."""
    return bin(t).count("1")
