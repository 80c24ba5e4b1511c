"""Audit scenarios for nsnc_improved run through the algorithm itself: Algorithm 2 (O2NC with clipped OGD) with the
single-pass oracle of Algorithm 3 (zeroth order) or Algorithm 5 (first order) and its per-period tree noise
(Algorithm 1); docs/audits.md, "nsnc_improved: the single-pass oracle, worst case and high probability".

Sources:
- Kornowski, Liu, Talwar 2025 (ICML), "Improved Sample Complexity for Private Nonsmooth Nonconvex Optimization":
  Algorithm 3 (reset: g = (1/B1) Σ_{ξ∈S} ∇̃f(z_t; ξ), S the next B1 unused records, each with m fresh directions
  y_j ~ Unif(𝕊^{d−1}) and the two-point estimate of Eq. (4); increment: g ← g + (1/B2) Σ (∇̃f(z_t; ξ) −
  ∇̃f(z_{t−1}; ξ)); release g̃_t = g + TREE(t mod Σ)), Algorithm 5 (first order: the reset averages ∇f(z_t + y_i; ξ_i)
  with one y_i ~ Unif(𝔹_α) per record), Proposition 2.5 (the tree: one fresh tree per period of Σ steps), Lemma 3.3
  (sensitivity with probability ≥ 1 − δ/2 over the directions: ≲ L/B1 + Ld√log(·)/√m at a reset, instead of the
  worst case of Eq. (5)), Lemma 3.4 and its proof (privacy: the Tree Mechanism on the good event, the failure
  probability added to δ), Lemma C.1 (first-order reset sensitivity, printed L/B1), Fact 2.3 (‖∇f_α‖ ≤ L).
- Dong, Roth, Su 2022 (JRSS-B) Thm 2.7, Cor. 2.13, Cor. 3.3: N(m, Σ) against N(m′, Σ) is exactly μ-GDP with
  μ² = (m′ − m)ᵀ Σ⁻¹ (m′ − m); adaptive composition of the Gaussian node releases.
- Pinelis 1994 (Ann. Probab.), Thm 3.5: m iid zero-mean vectors of norm ≤ b in a Hilbert space have a mean of norm
  ≥ b√(2 log(2/γ)/m) with probability ≤ γ (the concentration radius of the plan).
- Nasr et al. 2021 (S&P) §4: the worst-case pair of a gradient audit is one canary with an extremal contribution
  and other records contributing nothing.

Threat model. Replace-one neighbours (the plan's relation). Everything is public except each trial's secret noise
seed: x_0, the hyper-parameters, the ledger (σ, μ, δ_fail), both datasets and — in the worst-case scenarios — the
public seed, hence every direction of every step and every s_t. The output audited is ``DPResult.releases``
(K, M, d), the g̃ sequence the plan covers, flattened step by step (the whole run: T = K·M steps, several periods).

The pair (``canary_pair``). The loss is linear, f(x; ξ) = L·⟨ξ, x⟩ with ‖ξ‖ ≤ 1 (L-Lipschitz for every record;
``LinearLoss``, and ``LinearGradient`` = L·ξ for Algorithm 5). Every record is ξ = 0 (every estimate and every
difference is exactly 0) except the canary, the FIRST record of the reset step t_c = (p_c − 1)Σ + 1 of period p_c:
ξ = −v on D, +v on D′. The central difference of a linear function is exact, so the canary's Eq. (4) estimate with
its m directions is L·u at every query point, u = (d/m) Σ_j ⟨v, y_j⟩ y_j = d·G v with G = (1/m) Σ_j y_j y_jᵀ, and it
moves g_{t_c} by ±(L/B1)·u (first order: ±(L/B1)·v, whatever the perturbation). With m = 1, G = y yᵀ and v = ±y
(the attacker knows the public direction y of the canary's slot), u = ±d·y: the move 2dL/B1 between D and D′ is the
replace-one worst case 2Ld/B1 exactly (Eq. (5) with its factor 2 restored, erratum nsnc_improved.E1) at every d —
the one record that attains it. With m > 1 the best v is the top eigenvector of G and ‖u‖ = d·λ_max(G) < d.
Why the reset leaf: leaf 1 of a period's tree enters bitlen(Σ) = ⌊log2 Σ⌋ + 1 nodes, every other leaf at most
bitlen(Σ) − 1 (``nsnc_tree_leaf_counts``); the built-ins take B2 large enough that bitlen(Σ)·s_reset² ≥ (bitlen(Σ) −
1)·s_inc², so the plan's μ = √max(bitlen(Σ) s_reset², (bitlen(Σ) − 1) s_inc²)/σ is the reset leaf's, and the pair
attains it. An increment canary cannot: a linear record's increment is L·d(G_A − G_B)v (independent directions at
z_t and z_{t−1}), so the pair ±v moves it by 2Ld(G_A − G_B)v/B2, of norm ≤ 2Ld/B2 < 4Ld/B2 and 0 in expectation; a
non-linear record would follow the noisy iterates.

Why the law is a fixed shift plus tree noise, sampled without running the algorithm per trial. The zero records
contribute exactly 0 at any query point, and the canary's estimate does not depend on z_{t_c}; so although the
iterates depend on the noise (through the releases), no mean does: every noiseless running sum g_t is a constant of
the data and the public directions, and the T releases are m + N with m the σ = 0 run's releases
(``nsnc_improved(..., noise="none")``, a constant) and N the tree noise: per period R ξ^p, ξ^p = σ·z^p, z^p ~ N(0, I),
independent across periods (a fresh tree per period, and the one secret generator ("nsnc_improved", "noise") draws
``standard_normal(d)`` per step in order, i.e. ``standard_normal((T, d))``). The builder checks this on the
algorithm: a private reference run's ``diagnostics.noiseless_sums`` must equal the σ = 0 run's releases, and the
σ = 0 releases must be ±(L/B1)·u on the canary's period and 0 elsewhere, with u computed from
``step_directions`` (the formula the fresh-direction sampler uses). tests/test_audit_nsnc_improved.py checks the
sampler draw for draw against ``reference.algorithms.nsnc_improved.nsnc_improved`` (same public and secret seeds,
same releases), for both oracles and for several public seeds.

Exact privacy of the pair (fixed directions). D gives N(m_0, Σ), D′ gives N(m_1, Σ), Σ = σ²·blockdiag_p(R Rᵀ ⊗ I_d),
Δ = m_1 − m_0 = 2a on every release of period p_c (g_t = g_{t_c} + 0 increments) and 0 elsewhere, a = (L/B1)·u:
μ² = Δᵀ Σ⁻¹ Δ = 4‖a‖²·1ᵀ(R Rᵀ)⁻¹1/σ² = ‖2a‖²·bitlen(Σ)/σ² (R⁻¹ maps a constant change from leaf 1 on to the indicator
of the nodes containing leaf 1). The other periods carry nothing (a fresh tree, disjoint records): the whole run's
μ is the period's (the "no composition" remark of the proof of Theorem 3.1). The log-likelihood ratio is
Δᵀ Σ⁻¹ (x − (m_0 + m_1)/2), linear in the release.

The high-probability scenario (``nsnc_high_probability_scenario``). With m directions per record the plan may use
Lemma 3.3's high-probability sensitivity s_HP = (2L + 2r)/B1 at a reset, r = L(d + 1)√(2 log(2/γ)/m) (Pinelis with the
summand bound L(d + 1)), in place of 2Ld/B1, and then pays δ_fail = 2γ (each of the two records' estimates leaves its
radius with probability ≤ γ): the run is (ε, δ_GDP(ε; μ_HP) + δ_fail)-DP. Why δ_fail pays for a probability over the
PUBLIC directions: the good event G = {both estimates of the differing slot lie within r of their means ∇f_α} is an
event of that slot's m directions, drawn from the public seed independently of the data and of the history; on G the
step's sensitivity is ≤ s_HP and the releases are the μ_HP-GDP Gaussian mechanisms of the tree; so for every event E,
P[A(D) ∈ E] ≤ P[A(D) ∈ E, G] + P(Gᶜ) ≤ e^ε P[A(D′) ∈ E] + δ_GDP(ε; μ_HP) + P(Gᶜ) (proof of Lemma 3.4). The guarantee
is an average over the directions: it does not hold given a public seed that the data were chosen after (a record
built for the realised directions may make Gᶜ certain). So this scenario draws FRESH directions for every trial (a
fresh public seed; only the canary slot's directions matter), the pair being fixed before — the quantifier order of
the (ε, δ) definition for a mechanism whose randomness includes the directions — and publishes, beside the
releases, the canary's public move a = (L/B1)·u (a function of the public directions and of the public pair, what
the attacker learns from the public seed). Given a, the pair is N(∓a⊗1, Σ) on the canary's period: the exact
log-likelihood ratio is 2aᵀ Σ_τ ω_τ x_τ /σ² (ω = (R Rᵀ)⁻¹1), and the true privacy profile is the mixture
δ(ε) = E_a δ_GDP(ε; 2‖a‖√bitlen(Σ)/σ), whose ε at δ (``tight_epsilon``) is computed by Monte Carlo over a.
How the pair makes the failure event as likely as it can: the attacker does not see the directions, so it can only
choose the record. The linear canary (i) attains Fact 2.3's bound on the mean move, ‖∇f_α(ξ′) − ∇f_α(ξ)‖ = 2L — the
deterministic part 2L/B1 of s_HP — so its realised sensitivity 2‖a‖ = 2L‖u‖/B1 exceeds s_HP exactly when the
fluctuation does, ‖u‖ > 1 + r/L; (ii) among ridge records f = Lψ(⟨v, x⟩), ψ 1-Lipschitz, it has the largest
finite differences in every direction (|ψ(s + α⟨v, y⟩) − ψ(s − α⟨v, y⟩)| ≤ 2α|⟨v, y⟩|, equality for linear ψ), hence
the largest fluctuation; (iii) its two records fail together (their deviations are ∓L(dG − I)v); (iv) it sits in
the slot whose sensitivity sets the plan's μ (leaf 1, bitlen(Σ) nodes). Even so the failure event is out of reach:
each summand deviation L(d⟨v, y⟩y − v) has norm ≤ L(d − 1) (not the plan's L(d + 1)), so Pinelis gives
P(‖u − v‖ ≥ r/L) ≤ 2(γ/2)^{((d+1)/(d−1))²} ≈ 3·10⁻²⁵ at d = 3 — never observed; at the built-in's m = 400 the typical
‖u‖ is 1 ± 0.045 against the threshold 2.07. δ_fail = 2γ = 2.5·10⁻⁶ is the price of a bound that must hold for every
L-Lipschitz record and every draw; the audit sees the mechanism on the good event, whose true sensitivity (≈ 2L/B1)
is about half the plan's s_HP (4.14L/B1 at d = 3, m = 400): consistent, with that slack (docs/audits.md).

Claims. Worst case (``nsnc_single_pass_scenario``, the planted bug and its twin): the plan (``NsncPrivacyPlan``,
guarantee "worst-case", δ_fail = 0) states μ-GDP with μ = ``plan.mu`` (adaptive GDP composition of the tree's node
releases; no failure term), so the scenario claims μ-GDP at ``plan.mu`` and its ε at δ is the run's exact ε (at m = 1
the pair's true μ equals the plan's, to the rounding of σ and of the unit vector). High probability: the plan states
(ε, δ) with ε = ``plan.epsilon``, the smallest ε with δ_GDP(ε; μ) + δ_fail ≤ dp_delta — an (ε, δ) claim only (the
run is not μ-GDP: with probability δ_fail nothing is promised), so only the Clopper–Pearson bound may refute it.

Randomness. Worst case: ``sample(rng, trials, which)`` draws ``standard_normal((trials, T, d))`` (each trial's secret
z, in the reference's order) and nothing else. High probability: the same, then the canary slot's directions,
``standard_normal((c, m, d))`` for consecutive chunks of c ≤ ``DIRECTION_CHUNK`` trials, normalised (the law of
``reference.rng.sample_sphere``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from reference.algorithms import nsnc_improved_privacy as privacy
from reference.algorithms.nsnc_improved import (
    FIRST_ORDER_ORACLES,
    SINGLE_PASS_ORACLES,
    nsnc_improved,
    single_pass_schedule,
    step_directions,
)
from reference.fast.conversions import gaussian_epsilon, gaussian_mu
from reference.fast.mechanisms import tree_prefix_noise
from reference.rng import Streams
from reference.validation import check_int, check_probability, check_real

from .scenarios import Scenario, tree_release_matrix

__all__ = [
    "LinearLoss",
    "LinearGradient",
    "CanaryPair",
    "canary_pair",
    "canary_move",
    "NsncAuditSetup",
    "nsnc_audit_setup",
    "vectorised_releases",
    "reference_releases",
    "sample_public_moves",
    "mixture_epsilon",
    "nsnc_worst_case_scenario",
    "nsnc_single_pass_scenario",
    "nsnc_high_probability_scenario",
    "fo_reset_sensitivity_halved_scenario",
    "failure_probability_bound",
    "NSNC_IMPROVED_BUILTINS",
    "SINGLE_PASS_SETTINGS",
    "HIGH_PROBABILITY_SETTINGS",
    "FO_RESET_SETTINGS",
    "DIRECTION_CHUNK",
    "TIGHT_MC_DRAWS",
]

#: The secret seed of the one private reference run per dataset a setup makes to read the ledger.
LEDGER_NOISE_SEED = 2**64 + 20250713
#: Absolute tolerance of the build-time checks (private noiseless sums = σ = 0 releases = the canary-move formula).
_MEAN_TOLERANCE = 1e-12
#: Trials whose canary directions the high-probability sampler draws at once (memory: c·m·d doubles).
DIRECTION_CHUNK = 4096
#: Draws of the canary's public move behind the Monte Carlo ``tight_epsilon`` of the high-probability scenario.
TIGHT_MC_DRAWS = 2**14
#: Public seed of those draws (key ("nsnc_improved_audit", "tight")).
TIGHT_MC_SEED = 20250713


class LinearLoss:
    """f(x; ξ) = L·⟨ξ, x⟩ for a point x (d,) and a record ξ (d,) with ‖ξ‖ ≤ 1: L-Lipschitz in x for every record.

    Its central difference along y is L⟨ξ, y⟩·2α at every x (exactly, up to rounding), so the Eq. (4) estimate of a
    record does not depend on the query point, and the zero record's is exactly 0. A class (not a closure) so that a
    setup pickles."""

    def __init__(self, lipschitz):
        self.lipschitz = float(check_real("lipschitz", lipschitz, positive=True))

    def __call__(self, point, row):
        return self.lipschitz * float(np.dot(np.asarray(row, dtype=np.float64), np.asarray(point, dtype=np.float64)))


class LinearGradient:
    """∇f(x; ξ) = L·ξ, the gradient of ``LinearLoss`` (Algorithm 5's first-order oracle): constant in x."""

    def __init__(self, lipschitz):
        self.lipschitz = float(check_real("lipschitz", lipschitz, positive=True))

    def __call__(self, point, row):
        return self.lipschitz * np.asarray(row, dtype=np.float64)


# ---------------------------------------------------------------------------------------------------
# The pair


@dataclass(frozen=True)
class CanaryPair:
    """The replace-one pair of the module docstring.

    datasets: (D, D′), each (n, d), n = U(T) (every record read once); canary_index: 0-based index of the canary,
    the first record of the reset step canary_step = t_c = (p_c − 1)Σ + 1; canary_period: p_c (1-based); direction:
    v (d,), unit; adapted: whether v was chosen from the public directions of the canary's slot (the top eigenvector
    of G, ±y exactly at m = 1) or fixed before them (e_1).
    """

    datasets: tuple[np.ndarray, np.ndarray]
    canary_index: int
    canary_step: int
    canary_period: int
    direction: np.ndarray
    adapted: bool


def _canary_directions(oracle, public_seed, t, B1, m_reset, d, smoothing_radius):
    """The (m, d) directions (first order: the (1, d) perturbation) of slot 0 of reset step t."""
    return step_directions(public_seed, t, oracle, B1, m_reset, d, smoothing_radius, reset=True)[0]


def canary_pair(oracle, T, tree_size, d, B1, B2, m_reset, *, smoothing_radius, canary_period=1, public_seed=0,
                adapt=True) -> CanaryPair:
    """The canary pair of nsnc_improved Algorithm 3 or 5 with the directions of ``public_seed`` (module doc).

    oracle: "single_pass" or "first_order" (the canary's estimate is L·u resp. L·v; "single_pass_crn" resets as
    "single_pass"). T: steps; tree_size: Σ; d; B1, B2: batches; m_reset: directions per reset record;
    smoothing_radius: α (the first-order perturbation radius); canary_period: p_c; public_seed: the seed of the
    directions; adapt: choose v from the canary slot's public directions (zeroth order: the top eigenvector of
    G = (1/m)Σ y_j y_jᵀ, ±y_1 exactly at m = 1, sign fixed) — else, and always for first order (whose move does not
    depend on the perturbation), v = e_1.
    """
    if oracle not in SINGLE_PASS_ORACLES:
        raise ValueError(f"oracle must be one of {SINGLE_PASS_ORACLES}, got {oracle!r}")
    T = check_int("T", T, minimum=1)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    d = check_int("d", d, minimum=1)
    m_reset = check_int("m_reset", m_reset, minimum=1)
    periods = -(-T // tree_size)
    canary_period = check_int("canary_period", canary_period, minimum=1, maximum=periods)
    public_seed = check_int("public_seed", public_seed, minimum=0)
    schedule = single_pass_schedule(2**62, T, tree_size, B1, B2)
    n = schedule.records_used
    schedule = single_pass_schedule(n, T, tree_size, B1, B2)
    step = (canary_period - 1) * tree_size + 1
    index = schedule.block(step).start
    direction = np.zeros(d)
    direction[0] = 1.0
    adapted = bool(adapt) and oracle not in FIRST_ORDER_ORACLES
    if adapted:
        y = _canary_directions(oracle, public_seed, step, B1, m_reset, d, smoothing_radius)
        if m_reset == 1:
            direction = np.array(y[0], dtype=np.float64)  # exactly the public direction: u = d·y
        else:
            _, eigenvectors = np.linalg.eigh(y.T @ y)
            direction = eigenvectors[:, -1]
            direction = direction / np.linalg.norm(direction)
        direction = direction * (1.0 if direction[np.flatnonzero(direction)[0]] > 0 else -1.0)  # a fixed sign
    first, second = np.zeros((n, d)), np.zeros((n, d))
    first[index], second[index] = -direction, direction
    for data in (first, second, direction):
        data.setflags(write=False)
    return CanaryPair((first, second), index, step, canary_period, direction, adapted)


def canary_move(oracle, directions, v, lipschitz, B1) -> np.ndarray:
    """a: how the canary ξ = +v moves g at its reset step (ξ = −v moves it by −a), from its public directions.

    Zeroth order: a = (L/B1)·(d/m) Σ_j ⟨v, y_j⟩ y_j, directions (..., m, d) (leading axes: trials) — the exact Eq. (4)
    estimate of L⟨v, ·⟩ divided by B1; first order: a = (L/B1)·v whatever the perturbation. Returns (..., d)."""
    v = np.asarray(v, dtype=np.float64)
    L = float(lipschitz)
    if oracle in FIRST_ORDER_ORACLES:
        lead = np.shape(directions)[:-2]
        return np.broadcast_to((L / B1) * v, (*lead, v.shape[0])).copy()
    y = np.asarray(directions, dtype=np.float64)
    m, d = y.shape[-2], y.shape[-1]
    weights = y @ v  # ⟨v, y_j⟩, (..., m)
    return (L / B1) * (d / m) * np.einsum("...j,...jd->...d", weights, y)


# ---------------------------------------------------------------------------------------------------
# The setup: the pair, the ledger, the means and the exact law


@dataclass(frozen=True)
class NsncAuditSetup:
    """Everything an nsnc_improved audit fixes before any trial.

    oracle; pair: ``CanaryPair``; plan: the ``NsncPrivacyPlan`` of the ledger of a private reference run with these
    settings; noise_std: σ as the run adds it (the ledger's); means: (2, K, M, d), the releases of the σ = 0 reference
    runs on D and D′ at the setup's public seed; move: a (d,), the canary's move at that seed (means[1] = +a and
    means[0] = −a on the canary's period, 0 elsewhere); shift: means[1] − means[0]; mu: the exact GDP μ of the pair
    at that seed, √(Δᵀ Σ⁻¹ Δ); weights: Σ⁻¹Δ, (K, M, d); period_weights: ω = (R Rᵀ)⁻¹1 for the canary's period (the
    exact score given a move a is 2aᵀ Σ_τ ω_τ x_τ/σ²); run: keyword arguments of ``nsnc_improved`` besides the data,
    x0 and the privacy arguments; private: those privacy arguments (epsilon or noise_std, lipschitz, dp_delta,
    sensitivity_mode); lipschitz: L of the records; delta: dp_delta. direction_seed: the seed the setup's runs drew
    their directions from — the public seed, or, when the plan's guarantee is the high-probability one, the private
    runs' SECRET seed (``reference.algorithms.nsnc_improved``: Lemma 3.3's event is over directions drawn after the data
    are fixed, so such runs key their directions by the secret seed); ``means`` and ``move`` are at that seed.
    """

    oracle: str
    pair: CanaryPair
    plan: object
    noise_std: float
    means: np.ndarray
    move: np.ndarray
    shift: np.ndarray
    mu: float
    weights: np.ndarray
    period_weights: np.ndarray
    run: dict
    private: dict
    lipschitz: float
    delta: float
    direction_seed: int

    @property
    def shape(self) -> tuple[int, int, int]:
        """(K, M, d): the shape of one run's releases."""
        return self.means.shape[1:]

    @property
    def steps(self) -> int:
        """T = K·M."""
        return self.shape[0] * self.shape[1]

    @property
    def columns(self) -> int:
        """T·d: the length of one flattened run."""
        return int(np.prod(self.shape))

    @property
    def tree_size(self) -> int:
        return int(self.run["tree_size"])

    @property
    def canary_rows(self) -> slice:
        """The steps (0-based) of the canary's period."""
        start = self.pair.canary_step - 1
        return slice(start, min(start + self.tree_size, self.steps))

    @property
    def leaf_count(self) -> float:
        """1ᵀ(R Rᵀ)⁻¹1 of the canary's period: bitlen(Σ) for a full period (μ = 2‖a‖√count/σ)."""
        return float(np.sum(self.period_weights))

    def objective(self):
        return LinearGradient(self.lipschitz) if self.oracle in FIRST_ORDER_ORACLES else LinearLoss(self.lipschitz)

    def public_directions(self, public_seed):
        """The canary slot's directions (perturbation) under another direction seed (a public seed; the secret seed
        for a high-probability plan)."""
        run = self.run
        return _canary_directions(self.oracle, public_seed, self.pair.canary_step, run["B1"], _m_reset(run),
                                  self.shape[2], run["smoothing_radius"])

    def public_move(self, public_seed) -> np.ndarray:
        """The canary's move a under another direction seed (the same pair; ``public_directions``)."""
        return canary_move(self.oracle, self.public_directions(public_seed), self.pair.direction, self.lipschitz,
                           self.run["B1"])


def _m_reset(run) -> int:
    directions = run["directions"]
    return int(directions[0] if isinstance(directions, (tuple, list)) else directions)


def _tree_noise(node_noise, tree_size):
    """TREE(τ) of every step from the node noises ξ (trials, T, d), one fresh tree per period of Σ steps."""
    T = node_noise.shape[-2]
    full = (T // tree_size) * tree_size
    out = np.empty(node_noise.shape)
    if full:
        lead = node_noise.shape[:-2]
        blocks = node_noise[..., :full, :].reshape(*lead, full // tree_size, tree_size, node_noise.shape[-1])
        out[..., :full, :] = tree_prefix_noise(blocks).reshape(*lead, full, node_noise.shape[-1])
    if full < T:
        out[..., full:, :] = tree_prefix_noise(node_noise[..., full:, :])
    return out


def _period_inverse(rows: slice):
    """(R Rᵀ)⁻¹ of the tree of the period whose steps are ``rows`` (a last period may be partial)."""
    release = tree_release_matrix(rows.stop - rows.start)
    return np.linalg.inv(release @ release.T)


def nsnc_audit_setup(*, oracle="single_pass", d=2, tree_size=16, blocks=4, block_length=8, B1=1, B2=2, directions=1,
                     lipschitz=1.0, smoothing_radius=0.5, step_bound=0.01, step_size=0.05, epsilon=2.0, delta=1e-5,
                     gamma=None, sensitivity_mode="auto", noise_std=None, canary_period=2, adapt=True,
                     public_seed=0) -> NsncAuditSetup:
    """The fixed part of an nsnc_improved audit (module docstring).

    oracle: "single_pass" (Algorithm 3) or "first_order" (Algorithm 5). d; tree_size: Σ; blocks, block_length: K, M
    (T = K·M); B1, B2; directions: m (one int or (m_reset, m_increment)); lipschitz: L of the records and of the
    accounting; smoothing_radius: α; step_bound: D; step_size: η (D and η move the iterates, which no mean depends
    on); epsilon: the target ε the reference calibrates σ for (exact rule), or noise_std: σ given (the planted bug);
    delta: dp_delta; gamma: γ (None: the reference's δ/8); sensitivity_mode: the plan's; canary_period: p_c;
    adapt: v from the canary's public directions (``canary_pair``); public_seed: the run's public seed.

    Makes four short reference runs (σ = 0 and one private run per dataset): raises ValueError when the private run's
    noiseless sums differ from the σ = 0 releases or when these are not ±a on the canary's period and 0 elsewhere.
    """
    d = check_int("d", d, minimum=1)
    lipschitz = float(check_real("lipschitz", lipschitz, positive=True))
    delta = float(check_probability("delta", delta))
    public_seed = check_int("public_seed", public_seed, minimum=0)
    T = check_int("blocks", blocks, minimum=1) * check_int("block_length", block_length, minimum=1)
    m_reset = _m_reset({"directions": directions})
    pair = canary_pair(oracle, T, tree_size, d, B1, B2, m_reset, smoothing_radius=smoothing_radius,
                       canary_period=canary_period, public_seed=public_seed, adapt=adapt)
    run = dict(oracle=oracle, blocks=blocks, block_length=block_length, tree_size=tree_size,
               smoothing_radius=smoothing_radius, step_bound=step_bound, step_size=step_size, directions=directions,
               B1=B1, B2=B2, seed=public_seed)
    private = dict(lipschitz=lipschitz, dp_delta=delta, sensitivity_mode=sensitivity_mode)
    if gamma is not None:
        private["gamma"] = gamma
    if noise_std is None:
        private["epsilon"] = float(check_real("epsilon", epsilon, positive=True))
    else:
        private["noise_std"] = float(check_real("noise_std", noise_std, positive=True))
    objective = LinearGradient(lipschitz) if oracle in FIRST_ORDER_ORACLES else LinearLoss(lipschitz)
    x0 = np.zeros(d)
    noise_seed = LEDGER_NOISE_SEED if LEDGER_NOISE_SEED != public_seed else LEDGER_NOISE_SEED + 1
    means, plan, sigma, direction_seed = [], None, None, public_seed
    for data in pair.datasets:
        result = nsnc_improved(objective, data, x0, noise_seed=noise_seed, **private, **run)
        if result.ledger.settings.direction_seed == "secret":  # the high-probability guarantee: module doc
            if adapt:
                raise ValueError("adapt=True builds the canary from the public seed's directions, but this plan's "
                                 "high-probability guarantee draws them under the secret seed: pass adapt=False")
            direction_seed = noise_seed
        # the sigma = 0 run with the private run's directions (its public stream under direction_seed is the
        # private run's direction stream; the means do not depend on the iterates, which the check below confirms)
        noiseless = nsnc_improved(objective, data, x0, noise="none", **dict(run, seed=direction_seed))
        if not np.allclose(result.diagnostics.noiseless_sums, noiseless.releases, rtol=0, atol=_MEAN_TOLERANCE):
            raise ValueError("the noiseless sums of a private run differ from the sigma = 0 run's releases: the "
                             "release means depend on the iterates, so the law is not a fixed shift plus tree noise")
        means.append(np.array(noiseless.releases, dtype=np.float64))
        plan, sigma = result.ledger.plan, float(result.ledger.settings.noise_stds[0])
    means = np.stack(means)
    K, M = means.shape[1], means.shape[2]
    move = canary_move(oracle, _canary_directions(oracle, direction_seed, pair.canary_step, B1, m_reset, d,
                                                  smoothing_radius), pair.direction, lipschitz, B1)
    rows = slice(pair.canary_step - 1, min(pair.canary_step - 1 + tree_size, T))
    expected = np.zeros((2, T, d))
    expected[0, rows], expected[1, rows] = -move, move
    if not np.allclose(means.reshape(2, T, d), expected, rtol=0, atol=_MEAN_TOLERANCE):
        raise ValueError("the sigma = 0 releases are not +-a on the canary's period and 0 elsewhere (a = the canary's "
                         "move computed from its public directions)")
    means.setflags(write=False)
    shift = means[1] - means[0]
    inverse = _period_inverse(rows)
    period_weights = inverse @ np.ones(rows.stop - rows.start)
    flat_shift = shift.reshape(T, d)
    weights = np.zeros((T, d))
    weights[rows] = inverse @ flat_shift[rows] / sigma**2
    mu = math.sqrt(float(np.sum(flat_shift[rows] * (inverse @ flat_shift[rows])))) / sigma  # √(Δᵀ Σ⁻¹ Δ)
    weights = weights.reshape(K, M, d)
    for array in (move, shift, weights, period_weights):
        array.setflags(write=False)
    return NsncAuditSetup(oracle, pair, plan, sigma, means, move, shift, mu, weights, period_weights, run, private,
                          lipschitz, delta, direction_seed)


def vectorised_releases(setup: NsncAuditSetup, which, standard_normals, moves=None) -> np.ndarray:
    """The releases of ``trials`` runs on D (which = 0) or D′ (1) from their secret normals, without the algorithm.

    standard_normals: (trials, T, d), each trial's z in the order the reference's secret generator
    ("nsnc_improved", "noise") draws them (``standard_normal(d)`` per step t = 1..T). moves: the canary's move a per
    trial, (trials, d) — for runs under other public seeds (``setup.public_move``, ``sample_public_moves``) — or None
    for the setup's own seed. Returns (trials, K, M, d): ∓a on the canary's period (0 elsewhere) + TREE(τ) from
    ξ = σz, one fresh tree per period.
    """
    which = check_int("which", which, minimum=0, maximum=1)
    z = np.asarray(standard_normals, dtype=np.float64)
    K, M, d = setup.shape
    if z.ndim != 3 or z.shape[1:] != (K * M, d):
        raise ValueError(f"standard_normals must have shape (trials, {K * M}, {d}), got {z.shape}")
    noise = _tree_noise(setup.noise_std * z, setup.tree_size)
    if moves is None:
        out = setup.means[which].reshape(K * M, d) + noise
    else:
        moves = np.asarray(moves, dtype=np.float64)
        if moves.shape != (z.shape[0], d):
            raise ValueError(f"moves must have shape ({z.shape[0]}, {d}), got {moves.shape}")
        out = noise
        out[:, setup.canary_rows] += ((2 * which - 1) * moves)[:, None, :]
    return out.reshape(z.shape[0], K, M, d)


def reference_releases(setup: NsncAuditSetup, which, noise_seeds, public_seed=None) -> np.ndarray:
    """``DPResult.releases`` of one private run of ``reference.algorithms.nsnc_improved.nsnc_improved`` per secret
    seed (the plain-loop reference, for the tests), shape (len(noise_seeds), K, M, d), at the setup's privacy
    arguments (so at its σ) and at ``public_seed`` (default: the setup's)."""
    which = check_int("which", which, minimum=0, maximum=1)
    run = dict(setup.run)
    if public_seed is not None:
        run["seed"] = check_int("public_seed", public_seed, minimum=0)
    out = []
    for seed in noise_seeds:
        result = nsnc_improved(setup.objective(), setup.pair.datasets[which], np.zeros(setup.shape[2]),
                               noise_seed=int(seed), **setup.private, **run)
        if float(result.ledger.settings.noise_stds[0]) != setup.noise_std:
            raise ValueError("the reference run's sigma differs from the setup's")
        out.append(np.array(result.releases, dtype=np.float64))
    return np.array(out).reshape((len(out), *setup.shape))


def sample_public_moves(setup: NsncAuditSetup, rng, trials) -> np.ndarray:
    """The canary's move a under ``trials`` fresh public seeds: its slot's m directions drawn as Gaussian rows
    normalised (the law of ``reference.rng.sample_sphere``), ``standard_normal((c, m, d))`` per chunk of c ≤
    ``DIRECTION_CHUNK`` trials; a = ``canary_move``. Zeroth order only (a first-order move is fixed). (trials, d)."""
    if setup.oracle in FIRST_ORDER_ORACLES:
        raise ValueError("the first-order canary's move does not depend on the public perturbation")
    trials = check_int("trials", trials, minimum=0)
    m, d = _m_reset(setup.run), setup.shape[2]
    out = np.empty((trials, d))
    for start in range(0, trials, DIRECTION_CHUNK):
        count = min(DIRECTION_CHUNK, trials - start)
        g = rng.standard_normal((count, m, d))
        squared = np.einsum("tjd,tjd->tj", g, g)
        squared = np.where(squared > 0, squared, 1.0)  # a zero row (probability 0) would contribute 0
        weights = (g @ setup.pair.direction) / squared  # ⟨v, y_j⟩/‖g_j‖ with y_j = g_j/‖g_j‖
        out[start:start + count] = (setup.lipschitz / setup.run["B1"]) * (d / m) * np.einsum("tj,tjd->td", weights, g)
    return out


# ---------------------------------------------------------------------------------------------------
# Exact privacy of the mixture (fresh directions)


def _log_gaussian_delta(epsilon, mu):
    """log δ_GDP(ε; μ) = log(Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)), vectorised over μ (> 0)."""
    mu = np.asarray(mu, dtype=np.float64)
    first = log_ndtr(-epsilon / mu + mu / 2)
    second = epsilon + log_ndtr(-epsilon / mu - mu / 2)
    return first + np.log1p(-np.exp(np.minimum(second - first, 0.0)))


def mixture_epsilon(mus, delta) -> float:
    """The ε at δ of the mixture of μ_i-GDP pairs (equal weights): the root of mean_i δ_GDP(ε; μ_i) = δ (the
    hockey-stick divergence of a mixture given the public mixing variable is the mean of the components')."""
    mus = np.asarray(mus, dtype=np.float64)
    delta = float(check_probability("delta", delta))
    log_delta = math.log(delta)

    def excess(eps):
        values = _log_gaussian_delta(eps, mus)
        top = float(np.max(values))
        return top + math.log(float(np.mean(np.exp(values - top)))) - log_delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2
    return float(brentq(excess, 0.0, hi, xtol=1e-12, rtol=1e-12))


def failure_probability_bound(d, m, gamma) -> float:
    """Pinelis' bound on P(‖u − v‖ ≥ r/L) for the linear canary (module doc): its summand deviations
    d⟨v, y⟩y − v have norm ≤ max(d − 1, 1), so P ≤ 2 exp(−(r/L)² m/(2(d − 1)²)) with r/L = (d + 1)√(2 log(2/γ)/m),
    i.e. 2(γ/2)^{((d+1)/(d−1))²} (capped at 1)."""
    d = check_int("d", d, minimum=2)
    m = check_int("m", m, minimum=1)
    gamma = float(check_probability("gamma", gamma))
    exponent = ((d + 1) / max(d - 1, 1)) ** 2
    return float(min(1.0, 2 * (gamma / 2) ** exponent))


# ---------------------------------------------------------------------------------------------------
# Scenarios


def _check_outputs(outputs, columns: int) -> np.ndarray:
    outputs = np.asarray(outputs, dtype=np.float64)
    if outputs.ndim != 2 or outputs.shape[1] != columns:
        raise ValueError(f"outputs must have shape (trials, {columns}), got {outputs.shape}")
    return outputs


def _check_sample_args(rng, trials, which) -> tuple[int, int]:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return check_int("trials", trials, minimum=0), check_int("which", which, minimum=0, maximum=1)


def _describe(setup: NsncAuditSetup, what: str, bug: str | None = None) -> str:
    K, M, d = setup.shape
    run, plan = setup.run, setup.plan
    algorithm = "Alg 5" if setup.oracle in FIRST_ORDER_ORACLES else "Alg 3"
    m = run["directions"]
    if bug is None:
        ledger = f"plan {plan.guarantee}, μ={plan.mu:.6g}, δ_fail={plan.delta_fail:.3g}"
    else:
        ledger = f"[{bug}]"
    return (f"nsnc_improved Alg 2+{algorithm}, T={K * M} ({-(-K * M // setup.tree_size)} periods of Σ="
            f"{setup.tree_size}), d={d}, B1={run['B1']}, B2={run['B2']}, m={m}, L={setup.lipschitz:g}, canary in "
            f"the reset leaf of period {setup.pair.canary_period}, σ={setup.noise_std:.6g}, {what}; {ledger}")


def nsnc_worst_case_scenario(setup: NsncAuditSetup, *, name, claimed_mu=None, bug=None) -> Scenario:
    """The ``Scenario`` of a fixed-directions setup: outputs (trials, T·d) = the flattened ``DPResult.releases`` on D
    or D′ (``vectorised_releases``); claim μ-GDP at ``claimed_mu`` (default: the plan's μ, which must be a μ-GDP
    statement: δ_fail = 0); true μ = ``setup.mu``, tight ε = ε_μ(δ); the exact log-likelihood ratio
    Δᵀ Σ⁻¹ (x − (m_0 + m_1)/2). bug: a planted bug's label for the description."""
    if claimed_mu is None:
        if setup.plan.delta_fail != 0:
            raise ValueError("the plan pays delta_fail > 0: it states (epsilon, delta), not mu-GDP "
                             "(use nsnc_high_probability_scenario)")
        claimed_mu = float(setup.plan.mu)
    weights = setup.weights.reshape(-1)
    midpoint = ((setup.means[0] + setup.means[1]) / 2).reshape(-1)
    T, d, columns = setup.steps, setup.shape[2], setup.columns

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        z = rng.standard_normal((trials, T, d))
        return vectorised_releases(setup, which, z).reshape(trials, columns)

    def log_likelihood_ratio(outputs):
        return (_check_outputs(outputs, columns) - midpoint) @ weights

    return Scenario(
        name=name, description=_describe(setup, f"pair μ={setup.mu:.6g}", bug), sample=sample,
        claimed_mu=float(claimed_mu), delta=setup.delta, tight_epsilon=gaussian_epsilon(setup.delta, setup.mu),
        mu=setup.mu, log_likelihood_ratio=log_likelihood_ratio,
    )


#: ``nsnc_improved-single-pass``: Algorithm 3, d = 2, m = 1 (the worst case is in force: Lemma 3.3's bound needs
#: m ≳ 2 log(2/γ)(d + 1)²/(d − 1)²), Σ = 16, T = 32 (K = 4 blocks of M = 8: two periods), B1 = 1, B2 = 2 (the reset
#: leaf sets the plan's μ: 5·4² ≥ 4·4²), canary in period 2, σ calibrated for ε = 3 at δ = 1e-5 (μ = 0.7191: the
#: GDP bound at 10⁵ trials loses an almost constant ≈ 0.02 in μ, so ε = 3 puts its ε_lb above 0.9 of the exact ε in
#: every one of 20 audit seeds; at ε = 2 in 18 of 20, docs/audits.md).
SINGLE_PASS_SETTINGS = dict(oracle="single_pass", d=2, tree_size=16, blocks=4, block_length=8, B1=1, B2=2,
                            directions=1, epsilon=3.0, delta=1e-5, sensitivity_mode="auto", canary_period=2,
                            public_seed=0)
#: ``nsnc_improved-high-probability``: d = 3, m = (400, 1): Lemma 3.3's branch at the resets (s = 4.14 < 2Ld = 6,
#: δ_fail = 2γ = 2.5e-6), the worst case 4Ld/B2 = 3 at the increments (B2 = 4: the reset leaf sets μ), fresh
#: directions per trial, ε = 2 at δ = 1e-5.
HIGH_PROBABILITY_SETTINGS = dict(oracle="single_pass", d=3, tree_size=16, blocks=4, block_length=8, B1=1, B2=4,
                                 directions=(400, 1), epsilon=2.0, delta=1e-5, sensitivity_mode="auto",
                                 canary_period=2, adapt=False, public_seed=0)
#: The planted bug and its twin: Algorithm 5, d = 2, B1 = 1, B2 = 4 (the reset leaf sets μ even with the printed
#: L/B1: 5·1² ≥ 4·1²), m = 1, Σ = 16, T = 32, canary in period 2, ε = 2 at δ = 1e-5.
FO_RESET_SETTINGS = dict(oracle="first_order", d=2, tree_size=16, blocks=4, block_length=8, B1=1, B2=4, directions=1,
                         epsilon=2.0, delta=1e-5, sensitivity_mode="auto", canary_period=2, public_seed=0)


def nsnc_single_pass_scenario(**kwargs) -> Scenario:
    """``nsnc_improved-single-pass``: the whole run's T = 32 releases (two periods of Σ = 16) of Algorithm 2 with
    Algorithm 3 on the worst-case canary pair, d = 2, m = 1, B1 = 1, B2 = 2, one public seed for all trials; the plan
    is "worst-case" (2Ld/B1 = 4 at the reset, 4Ld/B2 = 4 at the increments, μ = √(5·16)/σ) and the pair attains it:
    claimed μ = the plan's μ = μ*(3, 1e-5) = 0.71912, exact ε = claimed ε = 3. Keyword arguments override
    ``SINGLE_PASS_SETTINGS``."""
    options = {**SINGLE_PASS_SETTINGS, **kwargs}
    name = options.pop("name", "nsnc_improved-single-pass")
    setup = nsnc_audit_setup(**options)
    if setup.plan.guarantee != "worst-case":
        raise ValueError(f"the worst-case scenario needs a worst-case plan, got {setup.plan.guarantee!r}")
    return nsnc_worst_case_scenario(setup, name=name)


def nsnc_high_probability_scenario(**kwargs) -> Scenario:
    """``nsnc_improved-high-probability``: Lemma 3.3's branch (module docstring). Outputs (trials, T·d + d): the
    flattened releases, then the canary's public move a (a function of the trial's fresh public directions);
    the pair is the linear canary ±e_1, fixed before the directions. Claim (ε, δ) = (``plan.epsilon``, dp_delta):
    δ_GDP(ε; μ_HP) + δ_fail ≤ dp_delta. tight ε: the mixture's (``mixture_epsilon`` over ``TIGHT_MC_DRAWS``
    moves). Keyword arguments override ``HIGH_PROBABILITY_SETTINGS``."""
    options = {**HIGH_PROBABILITY_SETTINGS, **kwargs}
    name = options.pop("name", "nsnc_improved-high-probability")
    setup = nsnc_audit_setup(**options)
    plan = setup.plan
    if plan.guarantee != "high-probability" or not plan.delta_fail > 0:
        raise ValueError(f"the high-probability scenario needs a plan that pays delta_fail > 0, got "
                         f"{plan.guarantee!r} with delta_fail = {plan.delta_fail}")
    if setup.oracle in FIRST_ORDER_ORACLES:
        raise ValueError("the high-probability scenario audits a zeroth-order reset (the first-order reset is "
                         "deterministic)")
    T, d, columns, sigma = setup.steps, setup.shape[2], setup.columns, setup.noise_std
    rows = setup.canary_rows
    omega = np.asarray(setup.period_weights)
    scale = math.sqrt(setup.leaf_count)
    tight_moves = sample_public_moves(setup, Streams(TIGHT_MC_SEED).generator("nsnc_improved_audit", "tight"),
                                      TIGHT_MC_DRAWS)
    tight = mixture_epsilon(2 * np.linalg.norm(tight_moves, axis=1) * scale / sigma, setup.delta)

    def sample(rng, trials, which):
        trials, which = _check_sample_args(rng, trials, which)
        z = rng.standard_normal((trials, T, d))
        moves = sample_public_moves(setup, rng, trials)
        releases = vectorised_releases(setup, which, z, moves)
        return np.concatenate([releases.reshape(trials, columns), moves], axis=1)

    def log_likelihood_ratio(outputs):
        x = _check_outputs(outputs, columns + d)
        releases = x[:, :columns].reshape(-1, T, d)[:, rows]
        moves = x[:, columns:]
        return (2 / sigma**2) * np.einsum("tc,tc->t", moves, np.einsum("r,trc->tc", omega, releases))

    what = f"fresh directions per trial, ‖a‖≈{float(np.mean(np.linalg.norm(tight_moves, axis=1))):.4g}"
    return Scenario(
        name=name, description=_describe(setup, what), sample=sample, claimed_epsilon=float(plan.epsilon),
        delta=setup.delta, tight_epsilon=tight, mu=None, log_likelihood_ratio=log_likelihood_ratio,
    )


#: Built-in name → factory (``registry.SCENARIOS`` builds each on first use).
NSNC_IMPROVED_BUILTINS: dict[str, Callable[[], Scenario]] = {
    "nsnc_improved-single-pass": nsnc_single_pass_scenario,
    "nsnc_improved-high-probability": nsnc_high_probability_scenario,
}


# ---------------------------------------------------------------------------------------------------
# Planted bug (registered in ``empirical_dp.planted``)


def _float_up(value) -> float:
    out = float(value)
    if mpmath.mpf(out) < value:
        out = math.nextafter(out, math.inf)
    return out


def fo_reset_sensitivity_halved_scenario(*, buggy=True, **kwargs) -> Scenario:
    """Planted bug ``nsnc_improved-fo-reset-halved``: Algorithm 5's tree noise calibrated with Lemma
    C.1's printed first-order reset sensitivity L/B1 instead of the replace-one 2L/B1 (the reset averages
    ∇f(z + y_i; ξ_i) over B1 records; replacing one moves it by up to 2L/B1: ξ and ξ′ have gradients L·v and −L·v).
    The buggy accountant takes s_reset = L/B1 in the plan's formula, S = √max(bitlen(Σ)(L/B1)², (bitlen(Σ) − 1)
    s_inc²), σ_bug = S/μ*(ε, δ) (δ_fail = 0), and claims μ-GDP at μ*: with B2 = 4 the reset leaf sets S in both
    plans, so σ_bug = σ/2 and the pair's true μ is 2μ*. The run is the reference's, given σ_bug. ``buggy=False``:
    the twin, the correctly calibrated run against the same claim (its plan's μ). Settings: ``FO_RESET_SETTINGS``
    (keyword arguments override them)."""
    options = {**FO_RESET_SETTINGS, **kwargs}
    honest = nsnc_audit_setup(**options)
    if honest.plan.guarantee != "worst-case":
        raise ValueError(f"the planted bug needs a worst-case plan, got {honest.plan.guarantee!r}")
    claimed = float(honest.plan.mu)
    if not buggy:
        return nsnc_worst_case_scenario(honest, name="nsnc_improved-fo-reset-halved-twin",
                                        claimed_mu=claimed)
    plan = honest.plan
    with mpmath.workprec(privacy.PLAN_PRECISION_BITS):
        printed = mpmath.mpf(plan.lipschitz) / plan.B1  # Lemma C.1 as printed: L/B1
        effective = privacy.nsnc_single_pass_effective_sensitivity(printed, plan.sensitivity_increment,
                                                                   plan.tree_size)
        sigma_bug = _float_up(effective / mpmath.mpf(gaussian_mu(options["epsilon"], options["delta"])))
        buggy_mu = float(privacy.nsnc_single_pass_mu(printed, plan.sensitivity_increment, plan.tree_size, sigma_bug))
    if not math.isclose(buggy_mu, claimed, rel_tol=1e-9):
        raise ValueError(f"the buggy accountant's mu {buggy_mu!r} differs from the target {claimed!r}")
    options.pop("epsilon")
    setup = nsnc_audit_setup(**options, noise_std=sigma_bug)
    return nsnc_worst_case_scenario(setup, name="nsnc_improved-fo-reset-halved", claimed_mu=claimed,
                                    bug=f"planted: σ for Lemma C.1's printed L/B1, claimed μ={claimed:.6g}")
