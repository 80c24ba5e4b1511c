"""zo_o2nc Algorithm 3 + projected OSD + Algorithm 4 (Theorem 4.9) and + Algorithm 6 (App. E): backend claims — a
subject's whole run agrees with the reference draw for draw (docs/design.md, Precision and Randomness contract).

For each configuration (RidgeSum objectives from ``reference.objectives``, d ∈ {1, 3} at quick, up to 5 at full;
ρ-calibrated σ, a given σ, Theorem 4.9's / App. E's settings, no noise; the Lipschitz bound slack, exact or
violated with enforce_lipschitz) the subject and the float64 reference run on the same public seed and the same
explicit secret seed, with ``record_path=True``, and:

* exact (draws and discrete facts): the ledger (plan, settings, public seed, the secret seed's source and
  condition) equals the reference's field by field; the public draws s_t^k and k* are the reference's; the
  non-finite counts and loss evaluations equal the reference's; the structure of Algorithm 3 holds exactly
  (x_1^1 = x1, x_1^{k+1} = x_{T+1}^k, Δ_1^k = 0, final = x_{T+1}^K, output = w̄^{k*});
* every round against the mpmath reference oracle at 40 digits, taken at the subject's OWN points: the
  reference's ``VarianceReducedOracle`` / ``NaiveOracle`` in mpmath (exact directions from the public key,
  σ = 0) queried at the subject's w_t^k (converted exactly) gives the exact noiseless sums G*_t (GRAD + Σ DIFF,
  resp. Alg 6's estimate); the exact noise TREE*(t) (resp. ξ_t) is σ·z from the secret key, summed over NODE(t)
  in mpmath. The subject's g_t (diagnostics), its noise, its release g̃_t, Δ_{t+1} = Π_D(Δ_t − η g̃_t),
  x_{t+1} = x_t + Δ_t, w_t = x_t + s_tΔ_t and w̄^k = (1/T)Σ_t w_t are each compared with the exact value computed
  from the subject's own previous values. This local check needs no propagation through the K·T rounds (where
  the factor dLη/δ per round would make an a-priori end-to-end bound problem-specific): a float64 implementation
  of the algorithm is exactly one whose every round is the exact round up to its own rounding;
* Lipschitz exceedance counts lie in the window of counts possible within the rounding of each finite
  difference and of its bound.

The one-round bound (Higham's standard model, u = 2⁻⁵³, γ_n = nu/(1 − nu), first order, doubled by SAFETY = 2
for the dropped second-order terms), per coordinate j, for record z = (a, c) of a ridge loss L·φ(<a, p> − c):

  |Δu_j| ≤ γ_{d+5}|u_j|                                   (u = g/‖g‖ in float64; the exact u in mpmath)
  |Δp_j| ≤ δ|Δu_j| + u(|w_j| + 2δ|u_j|)                   (p = w ± fl(δu), w + fl(δu))
  |Δf|  ≤ L‖Δp‖₂ + L·γ_{d+4}(Σ_j|a_j p_j| + |c| + τ)      (L-Lipschitz loss, its evaluation)
  |ΔD|  ≤ |Δf₁| + |Δf₂| + u|D| (+ the rounding of the clip bound, L·γ_{d+6}‖w_t − w_{t−1}‖ or 2Lδ·γ_2, when
          enforce_lipschitz clips: clipping is 1-Lipschitz in the value and in the bound)
  GRAD / Alg 6: a = D/(2δ), |Δa| ≤ |ΔD|/(2δ) + 2u|a|, c_j = (d·a)u_j: |Δc_j| ≤ d|Δa||u_j| + d|a||Δu_j| + 2u·d|a||u_j|
  DIFF:         a = dD/δ,   |Δa| ≤ d|ΔD|/δ + 2u|a|,   c_j = a·u_j:   |Δc_j| ≤ |Δa||u_j| + |a||Δu_j| + u|a||u_j|
  the average of the bm terms, in any order: (Σ|Δc| + γ_{bm+2}Σ|c|)/(bm) =: e_t
  g_t = g_{t−1} + d_t (Alg 4): E_t = E_{t−1} + e_t + u|g_t|;  Alg 6: E_t = e_t
  noise: |ΔTREE(t)_j| ≤ γ_{n+1} Σ_{b ∈ NODE(t)} |ξ_b,j| (n = |NODE(t)|);  Alg 6: u|ξ_j|
  release g̃_t = g_t + noise: E_t + |Δnoise| + u|g̃_t|
  learner: v = Δ − ηg̃: ‖Δv‖ ≤ 2u‖η|g̃| + |v|‖; projection (1-Lipschitz) and its rounding and shrink loop
           (``reference.o2nc.project_ball``): + D(2γ_{d+8} + 2⁻⁴⁸) when ‖v‖ ≥ D/2
  x_{t+1}: u|x_{t+1,j}|;  w_t: u(|s_tΔ_t,j| + |w_t,j|);  w̄^k in any summation order: γ_{T+1}·(1/T)Σ_t|w_t,j|.

A float32 implementation (u = 2⁻²⁴), directions not shared between w_t and w_{t−1}, a tree not reset per epoch,
noise from the public stream, w_t formed from x_{t+1}, or a wrong σ rule miss these checks by orders of magnitude
(the mutants below). These claims do not apply to the reference itself (it is the oracle).
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np

from proofs_checks.authoring import (
    FAIL,
    UNIT_ROUNDOFF,
    Claim,
    combine,
    deterministic,
    on_output,
    rebind,
    reference_subject,
    rounding_gamma,
    substitute,
)
from reference.algorithms.zo_o2nc import (
    KEY,
    NaiveOracle,
    NonPrivateDiagnostics,
    VarianceReducedOracle,
    alg4_partition,
    alg6_partition,
    directions_for_round,
)
from reference.algorithms.zo_o2nc_theory import naive_settings, thm49_settings
from reference.mechanisms import TreeMechanism, tree_node
from reference.o2nc import ProjectedOSD, project_ball
from reference.objectives import RidgeSum
from reference.precision import to_mp, working_precision
from reference.rng import Streams, sample_sphere

SAFETY = 2.0
DPS = 40
DP_DELTA = 1e-5
LEDGER_FIELDS = ("algorithm", "plan", "settings", "seed", "secret_seed_source", "guarantee_condition")
U = UNIT_ROUNDOFF


# ---------------------------------------------------------------------------------------------------
# Configurations and problems


@dataclasses.dataclass(frozen=True)
class Config:
    """One run: the algorithm, a RidgeSum problem and the switches.

    blocks: (B1, B2) for zo_o2nc, (B,) for zo_o2nc_naive. privacy: "rho" (σ calibrated for ρ = 1), "noise_std"
    (σ given), "settings" (``thm49_settings`` / ``naive_settings`` for M = settings_records, ρ = 1), or "none".
    lipschitz_factor: the L passed is this times the objective's true L (None: not passed, non-private only);
    below 1 with enforce=True the clip is active.
    """

    algorithm: str
    d: int
    profile: str
    T: int = 4
    K: int = 3
    blocks: tuple = (4, 2)
    smoothing_radius: float = 0.1
    step_size: float = 0.01
    step_bound: float | None = None
    privacy: str = "rho"
    lipschitz_factor: float | None = 1.25
    enforce: bool = False
    rule: str = "exact"
    settings_records: int | None = None

    @property
    def variance_reduced(self) -> bool:
        return self.algorithm == "zo_o2nc"

    @property
    def label(self) -> str:
        return (f"{self.algorithm} d={self.d} {self.profile} T={self.T} K={self.K} blocks={self.blocks} "
                f"{self.privacy} L×{self.lipschitz_factor} enforce={self.enforce} rule={self.rule}"
                + ("" if self.settings_records is None else f" M={self.settings_records}"))


def _records(config: Config) -> int:
    if config.privacy == "settings":
        return config.settings_records
    per_epoch = (config.blocks[0] + config.blocks[1] * (config.T - 1)) if config.variance_reduced \
        else config.blocks[0] * config.T
    return config.K * per_epoch + 3  # three records the single pass never reads


def _problem(ctx, config: Config):
    rng = ctx.generator("problem", config.label)
    lipschitz = 1.0 if config.privacy == "settings" else 1.3
    objective = RidgeSum.random(config.d, _records(config), rng, lipschitz=lipschitz, profile=config.profile,
                                tau=0.4, offset_scale=0.5)
    x1 = rng.normal(0.0, 0.3, config.d)
    seed = int(rng.integers(2**31))
    noise_seed = int(rng.integers(2**31, 2**32)) if config.privacy != "none" else None  # never a public seed
    return objective, x1, seed, noise_seed


def _kwargs(config: Config, objective, seed, noise_seed) -> dict:
    kwargs = dict(seed=seed, record_path=True, enforce_lipschitz=config.enforce)
    if config.privacy == "settings":
        rule = thm49_settings if config.variance_reduced else naive_settings
        kwargs.update(settings=rule(config.settings_records, config.d, objective.lipschitz, config.smoothing_radius,
                                    1.0, 1.0), dp_delta=DP_DELTA, noise_seed=noise_seed)
        return kwargs
    kwargs.update(T=config.T, K=config.K, smoothing_radius=config.smoothing_radius, step_size=config.step_size,
                  step_bound=config.step_bound)
    if config.variance_reduced:
        kwargs.update(B1=config.blocks[0], B2=config.blocks[1], count_rule=config.rule)
    else:
        kwargs.update(batch_size=config.blocks[0], sigma_rule=config.rule)
    if config.lipschitz_factor is not None:
        kwargs["lipschitz"] = config.lipschitz_factor * objective.lipschitz
    if config.privacy == "rho":
        kwargs.update(rho=1.0, dp_delta=DP_DELTA, noise_seed=noise_seed)
    elif config.privacy == "noise_std":
        kwargs.update(noise_std=0.7, dp_delta=DP_DELTA, noise_seed=noise_seed)
    else:
        kwargs["noise"] = "none"
    return kwargs


# ---------------------------------------------------------------------------------------------------
# The exact draws and the exact round


def _noise_draws(settings, seed, noise_seed):
    """z_t^k (K, T, d): the reference's K·T successive standard_normal(d) draws of ("zo_o2nc", "noise")."""
    rng = Streams(seed if noise_seed is None else noise_seed).generator(KEY, "noise")
    return np.array([rng.standard_normal(settings.d) for _ in range(settings.K * settings.T)]).reshape(
        settings.K, settings.T, settings.d)


def _exact_noise(settings, z, k, t):
    """(exact noise (mp, d), its float64 rounding bound (d,)) of round (k, t)."""
    sigma = mpmath.mpf(settings.noise_std)
    if settings.oracle == "naive":
        xi = to_mp(z[k - 1, t - 1]) * sigma
        return xi, U * np.abs(settings.noise_std * z[k - 1, t - 1])
    nodes = tree_node(t)
    total = np.array([mpmath.mpf(0)] * settings.d, dtype=object)
    magnitude = np.zeros(settings.d)
    for _, b in nodes:
        total = total + to_mp(z[k - 1, b - 1]) * sigma
        magnitude += np.abs(settings.noise_std * z[k - 1, b - 1])
    return total, rounding_gamma(len(nodes) + 1) * magnitude


def _loss_error(objective, points, dp, rows):
    """|fl(f)(p̃) − f(p)| ≤ L‖Δp‖₂ + L·γ_{d+4}(Σ_j|a_j p_j| + |c| + τ): points, dp (b, m, d); rows (b, p)."""
    d = objective.d
    a, c = rows[:, None, :d], rows[:, None, d]
    evaluation = rounding_gamma(d + 4) * (np.sum(np.abs(a * points), axis=-1) + np.abs(c) + objective.tau)
    return objective.lipschitz * (np.linalg.norm(dp, axis=-1) + evaluation)


def _round_terms(settings, objective, seed, k, t, w, w_previous, rows):
    """The float64 estimates and rounding bounds of round (k, t) at the subject's points.

    Returns (e_t (d,) the bound on the estimate, differences (b, m), their bounds (b, m), the Lipschitz bound
    (float or None) and its rounding bound)."""
    d, h = settings.d, settings.smoothing_radius
    b = rows.shape[0]
    m = d if settings.oracle == "variance_reduced" else 1
    u = directions_for_round(seed, k, t, b, d, m)  # float64, the subject's draws
    u_abs = np.abs(u)
    du = rounding_gamma(d + 5) * u_abs
    diff = settings.oracle == "variance_reduced" and t > 1
    second = w_previous if diff else w
    p1, p2 = w + h * u, (second + h * u) if diff else (w - h * u)
    dp1 = h * du + U * (np.abs(w) + 2 * h * u_abs)
    dp2 = h * du + U * (np.abs(second) + 2 * h * u_abs)
    grid = rows[:, None, :]
    f1, f2 = objective.loss(p1, grid), objective.loss(p2, grid)
    difference = f1 - f2
    e_difference = _loss_error(objective, p1, dp1, rows) + _loss_error(objective, p2, dp2, rows) \
        + U * np.abs(difference)
    bound, e_bound = None, 0.0
    if settings.lipschitz is not None:
        if diff:
            gap = float(np.linalg.norm(w - w_previous))
            bound = settings.lipschitz * min(gap, 2 * settings.step_bound)
            e_bound = settings.lipschitz * rounding_gamma(d + 6) * gap
        else:
            bound = 2 * settings.lipschitz * h
            e_bound = rounding_gamma(2) * bound
    used = difference
    e_used = e_difference
    if settings.enforce_lipschitz and bound is not None:
        used = np.clip(difference, -bound, bound)
        e_used = e_difference + e_bound
    if diff:
        a = d * used / h
        e_a = d * e_used / h + 2 * U * np.abs(a)
        terms = np.abs(a)[..., None] * u_abs
        e_terms = e_a[..., None] * u_abs + np.abs(a)[..., None] * du + U * terms
    else:
        a = used / (2 * h)
        e_a = e_used / (2 * h) + 2 * U * np.abs(a)
        terms = d * np.abs(a)[..., None] * u_abs
        e_terms = d * e_a[..., None] * u_abs + d * np.abs(a)[..., None] * du + 2 * U * terms
    count = b * m
    e_t = (e_terms.sum(axis=(0, 1)) + rounding_gamma(count + 2) * terms.sum(axis=(0, 1))) / count
    return e_t, difference, e_difference, bound, e_bound


def _exceedance_window(difference, e_difference, bound, e_bound):
    """(fewest, most) exceedances |D| > bound a float64 implementation may count within the rounding."""
    if bound is None:
        return 0, 0
    slack = SAFETY * 2 * (e_difference + e_bound)  # both this estimate and the subject's err by e
    return int(np.count_nonzero(np.abs(difference) > bound + slack)), \
        int(np.count_nonzero(np.abs(difference) > bound - slack))


def _mp_gap(got, exact) -> np.ndarray:
    """|got − exact| per entry as float64 (got float64, exact mpmath)."""
    return np.array([float(abs(mpmath.mpf(float(g)) - e)) for g, e in zip(np.ravel(got), np.ravel(exact))]).reshape(
        np.shape(got))


def _ratio(gap, bound) -> float:
    """max_j gap_j / bound_j (a nonzero gap against a zero bound is infinite)."""
    gap, bound = np.asarray(gap, dtype=np.float64), np.asarray(bound, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(gap == 0, 0.0, gap / bound)
    return float(np.max(ratios)) if ratios.size else 0.0


class _Worst:
    def __init__(self):
        self.ratio, self.detail = 0.0, "no round"

    def see(self, ratio, detail):
        if not ratio <= self.ratio:  # NaN sticks
            self.ratio, self.detail = (math.inf if math.isnan(ratio) else ratio), detail


def _check_rounds(config, objective, x1, seed, noise_seed, got, settings):
    """Every round of the subject against the exact round from its own previous values (module doc)."""
    K, T, d = settings.K, settings.T, settings.d
    M = objective.n
    if settings.oracle == "variance_reduced":
        partition = alg4_partition(M, T, K, *settings.block_sizes)
    else:
        partition = alg6_partition(M, T, K, settings.block_sizes[0])
    z = _noise_draws(settings, seed, noise_seed)
    w_all, x_all, delta_all = (np.asarray(a, dtype=np.float64) for a in (got.query_points, got.iterates, got.steps))
    releases = np.asarray(got.releases, dtype=np.float64)
    sums = np.asarray(got.diagnostics.noiseless_sums, dtype=np.float64)
    noise = np.asarray(got.diagnostics.noise, dtype=np.float64)
    s_all = np.asarray(got.segment_points, dtype=np.float64)
    averages = np.asarray(got.epoch_averages, dtype=np.float64)
    exceedances = np.asarray(got.diagnostics.lipschitz_exceedances)
    eta, D = settings.step_size, settings.step_bound
    worst = _Worst()
    unused = np.random.Generator(np.random.PCG64(0))  # σ = 0: the exact oracle draws no noise of its own
    with working_precision(DPS):
        common = dict(d=d, smoothing_radius=settings.smoothing_radius, lipschitz=settings.lipschitz,
                      enforce_lipschitz=settings.enforce_lipschitz, seed=seed, noise_rng=unused, use_mp=True)
        if settings.oracle == "variance_reduced":
            oracle = VarianceReducedOracle(objective.loss, objective.data, partition, step_bound=D,
                                           noise_stds=np.zeros(T), **common)
        else:
            oracle = NaiveOracle(objective.loss, objective.data, partition, noise_std=0.0, **common)
        eta_mp, D_mp = mpmath.mpf(eta), mpmath.mpf(D)
        for k in range(1, K + 1):
            e_sum = np.zeros(d)
            for t in range(1, T + 1):
                where = f"(k, t) = ({k}, {t})"
                w, x, delta, s = w_all[k - 1, t - 1], x_all[k - 1, t - 1], delta_all[k - 1, t - 1], s_all[k - 1, t - 1]
                # w_t = x_t + s_t Δ_t and x_{t+1} = x_t + Δ_t (Alg 3 line 4)
                exact_w = to_mp(x) + mpmath.mpf(s) * to_mp(delta)
                worst.see(_ratio(_mp_gap(w, exact_w), SAFETY * U * (np.abs(s * delta) + np.abs(w))), f"w at {where}")
                exact_x = to_mp(x) + to_mp(delta)
                x_next = x_all[k - 1, t]
                worst.see(_ratio(_mp_gap(x_next, exact_x), SAFETY * U * np.abs(x_next)), f"x_(t+1) at {where}")
                # the exact oracle at the subject's w_t
                try:
                    exact_g = oracle.query(k, t, to_mp(w))
                except ValueError as exc:
                    return deterministic(False, detail=f"{config.label}: the reference oracle refuses the subject's "
                                                       f"query point at {where}: {exc}")
                rows = objective.data[partition.block(k, t)]
                w_previous = w_all[k - 1, t - 2] if t > 1 else None
                e_t, difference, e_difference, bound, e_bound = _round_terms(settings, objective, seed, k, t, w,
                                                                             w_previous, rows)
                fewest, most = _exceedance_window(difference, e_difference, bound, e_bound)
                count = int(exceedances[k - 1, t - 1])
                if not fewest <= count <= most:
                    return deterministic(False, detail=f"{config.label}: {count} Lipschitz exceedances at {where}, "
                                                       f"outside the window [{fewest}, {most}] of the rounding")
                g = sums[k - 1, t - 1]
                if settings.oracle == "variance_reduced" and t > 1:
                    e_sum = e_sum + e_t + U * np.abs(g)
                else:
                    e_sum = e_t
                worst.see(_ratio(_mp_gap(g, exact_g), SAFETY * e_sum), f"noiseless sum g_t at {where}")
                exact_noise, e_noise = _exact_noise(settings, z, k, t)
                worst.see(_ratio(_mp_gap(noise[k - 1, t - 1], exact_noise), SAFETY * e_noise), f"noise at {where}")
                released = releases[k - 1, t - 1]
                worst.see(_ratio(_mp_gap(released, exact_g + exact_noise),
                                 SAFETY * (e_sum + e_noise + U * np.abs(released))), f"release at {where}")
                # Δ_{t+1} = Π_D(Δ_t − η g̃_t) (Alg 3 line 3; the learner sees the release)
                if t < T:
                    v = to_mp(delta) - eta_mp * to_mp(released)
                    exact_delta = project_ball(v, D_mp)
                    v_float = np.array([float(e) for e in v])
                    e_v = 2 * U * float(np.linalg.norm(eta * np.abs(released) + np.abs(v_float)))
                    if np.linalg.norm(v_float) >= D / 2:
                        e_v += D * (2 * rounding_gamma(d + 8) + 2.0**-48)
                    gap = float(np.linalg.norm(_mp_gap(delta_all[k - 1, t], exact_delta)))
                    worst.see(gap / (SAFETY * e_v) if gap else 0.0, f"learner step Δ_(t+1) at {where}")
            exact_mean = np.array([mpmath.fsum(to_mp(w_all[k - 1, :, j])) / T for j in range(d)], dtype=object)
            bound = SAFETY * rounding_gamma(T + 1) * np.mean(np.abs(w_all[k - 1]), axis=0)
            worst.see(_ratio(_mp_gap(averages[k - 1], exact_mean), bound), f"epoch average w̄^{k}")
    return deterministic(worst.ratio <= 1.0, statistic=worst.ratio, bound=1.0,
                         detail=f"{config.label}: worst round gap / float64 bound at {worst.detail}")


# ---------------------------------------------------------------------------------------------------
# Comparing one subject run with the reference


def _shapes(settings):
    K, T, d = settings.K, settings.T, settings.d
    return {"output": (d,), "epoch_averages": (K, d), "final_iterate": (d,), "releases": (K, T, d),
            "segment_points": (K, T), "query_points": (K, T, d), "iterates": (K, T + 1, d), "steps": (K, T, d)}


def _same(a, b) -> bool:
    if isinstance(a, (tuple, list, np.ndarray)) or isinstance(b, (tuple, list, np.ndarray)):
        return np.shape(a) == np.shape(b) and bool(np.all(np.asarray(a) == np.asarray(b)))
    return a == b


def _compare(config, objective, x1, seed, noise_seed, got, want) -> list:
    settings = want.ledger.settings
    K, T, d = settings.K, settings.T, settings.d
    label = config.label
    for name, shape in _shapes(settings).items():
        value = getattr(got, name)
        value = None if value is None else np.asarray(value, dtype=np.float64)
        if value is None or value.shape != shape or not np.all(np.isfinite(value)):
            return [deterministic(False, detail=f"{label}: {name} is missing, has shape "
                                                f"{None if value is None else value.shape} (want {shape}) or "
                                                "non-finite values")]
    for name in ("noiseless_sums", "noise"):
        value = np.asarray(getattr(got.diagnostics, name), dtype=np.float64)
        if value.shape != (K, T, d) or not np.all(np.isfinite(value)):
            return [deterministic(False, detail=f"{label}: diagnostics.{name} has shape {value.shape} (want "
                                                f"{(K, T, d)}) or non-finite values")]
    for name in LEDGER_FIELDS:
        if not _same(getattr(got.ledger, name), getattr(want.ledger, name)):
            return [deterministic(False, detail=f"{label}: ledger.{name} {getattr(got.ledger, name)!r} != reference "
                                                f"{getattr(want.ledger, name)!r}")]
    if int(got.output_index) != int(want.output_index):
        return [deterministic(False, detail=f"{label}: output index {got.output_index} != reference "
                                            f"{want.output_index} (the public draw of ('zo_o2nc', 'output'))")]
    if not np.array_equal(np.asarray(got.segment_points), np.asarray(want.segment_points)):
        return [deterministic(False, detail=f"{label}: segment points s_t^k are not the public draws of "
                                            "('zo_o2nc', 'segment', k)")]
    for name in ("nonfinite_counts", "loss_evaluations"):
        if not _same(getattr(got.diagnostics, name), getattr(want.diagnostics, name)):
            return [deterministic(False, detail=f"{label}: diagnostics.{name} {getattr(got.diagnostics, name)!r} != "
                                                f"reference {getattr(want.diagnostics, name)!r}")]
    iterates, steps = np.asarray(got.iterates), np.asarray(got.steps)
    averages = np.asarray(got.epoch_averages)
    structure = (np.array_equal(iterates[0, 0], x1) and all(np.array_equal(iterates[k, 0], iterates[k - 1, T])
                                                            for k in range(1, K))
                 and not np.any(steps[:, 0]) and np.array_equal(got.final_iterate, iterates[K - 1, T])
                 and np.array_equal(got.output, averages[int(got.output_index)]))
    if not structure:
        return [deterministic(False, detail=f"{label}: x_1^1 != x1, x_1^(k+1) != x_(T+1)^k, Δ_1^k != 0, final != "
                                            "x_(T+1)^K or output != w̄^(k*)")]
    return [_check_rounds(config, objective, x1, seed, noise_seed, got, settings)]


def _check_configs(subject, ctx, configs):
    ref = reference_subject()
    parts = []
    for config in configs:
        objective, x1, seed, noise_seed = _problem(ctx, config)
        kwargs = _kwargs(config, objective, seed, noise_seed)
        want = getattr(ref, config.algorithm)(objective.loss, objective.data, x1, **kwargs)
        try:
            got = getattr(subject, config.algorithm)(objective.loss, objective.data, x1, **kwargs)
        except Exception as exc:  # noqa: BLE001 — a refusal of a run the reference completes is a failure
            parts.append(deterministic(False, detail=f"{config.label}: the subject raised {type(exc).__name__}: "
                                                     f"{exc} on a run the reference completes"))
            break
        parts.extend(_compare(config, objective, x1, seed, noise_seed, got, want))
        if any(p.verdict == FAIL for p in parts):
            break
    return combine(parts, ctx)


# ---------------------------------------------------------------------------------------------------
# Configurations (quick: each switch at least once on d ∈ {1, 3}; full: more sizes and profiles)


def _run_configs(budget):
    quick = [
        Config("zo_o2nc", 3, "wshape", T=4, K=3, blocks=(4, 2), step_size=0.01, privacy="rho"),
        Config("zo_o2nc", 1, "abs", T=5, K=2, blocks=(3, 1), step_size=0.05, privacy="none", lipschitz_factor=None),
        Config("zo_o2nc", 3, "capped", T=3, K=2, blocks=(3, 2), step_size=0.02, privacy="noise_std",
               lipschitz_factor=0.5, enforce=True),
        Config("zo_o2nc", 1, "wshape", privacy="settings", settings_records=40, smoothing_radius=0.5),
    ]
    full = [
        Config("zo_o2nc", 5, profile, T=6, K=3, blocks=(5, 2), step_size=0.02, privacy="rho", rule=rule)
        for profile in ("abs", "capped", "wshape") for rule in ("exact", "paper_2lnT")
    ] + [
        Config("zo_o2nc", 2, "wshape", T=8, K=2, blocks=(3, 1), step_size=0.2, step_bound=0.05, privacy="noise_std",
               lipschitz_factor=0.8, enforce=True),
        Config("zo_o2nc", 4, "capped", T=5, K=3, blocks=(4, 3), step_size=0.03, privacy="none"),
        Config("zo_o2nc", 3, "abs", privacy="settings", settings_records=30, smoothing_radius=0.5),
    ]
    return budget.pick(quick=quick, full=quick + full)


def _naive_configs(budget):
    quick = [
        Config("zo_o2nc_naive", 3, "wshape", T=4, K=3, blocks=(3,), step_size=0.01, privacy="rho"),
        Config("zo_o2nc_naive", 1, "abs", T=5, K=2, blocks=(2,), step_size=0.05, privacy="none",
               lipschitz_factor=None),
        Config("zo_o2nc_naive", 3, "capped", T=3, K=2, blocks=(4,), step_size=0.02, privacy="noise_std",
               lipschitz_factor=0.5, enforce=True),
        Config("zo_o2nc_naive", 1, "wshape", privacy="settings", settings_records=40, smoothing_radius=0.5),
    ]
    full = [
        Config("zo_o2nc_naive", 5, profile, T=6, K=3, blocks=(3,), step_size=0.02, privacy="rho", rule=rule)
        for profile in ("abs", "capped", "wshape") for rule in ("exact", "paper")
    ] + [
        Config("zo_o2nc_naive", 2, "wshape", T=8, K=2, blocks=(2,), step_size=0.2, step_bound=0.05,
               privacy="noise_std", lipschitz_factor=0.8, enforce=True),
        Config("zo_o2nc_naive", 3, "abs", privacy="settings", settings_records=30, smoothing_radius=0.5),
    ]
    return budget.pick(quick=quick, full=quick + full)


def _check_run(subject, ctx):
    return _check_configs(subject, ctx, _run_configs(ctx.budget))


def _check_naive_run(subject, ctx):
    return _check_configs(subject, ctx, _naive_configs(ctx.budget))


# ---------------------------------------------------------------------------------------------------
# Mutants: the reference's oracles and learner driven by Algorithm 3 with one bug


class _UnsharedDiff(VarianceReducedOracle):
    """DIFF(w_t, w_{t−1}) evaluated at w_{t−1} along fresh directions v_ij (another public key), not u_ij."""

    def _difference(self, x, y, batch, directions, counts, step_bound):
        b, m = directions.shape[0], directions.shape[1]
        self.unshared_calls = getattr(self, "unshared_calls", 0) + 1
        fresh = sample_sphere(Streams(self.seed).generator(KEY, "unshared", self.unshared_calls), (b, m), self.d)
        h = self.smoothing_radius
        bound = None if self.lipschitz is None else self.lipschitz * min(float(np.linalg.norm(x - y)), 2 * step_bound)
        total = np.zeros(self.d)
        for i in range(b):
            sample_sum = np.zeros(self.d)
            for j in range(m):
                u, v = directions[i, j], fresh[i, j]
                difference = self._bounded(self.loss(x + h * u, batch[i]) - self.loss(y + h * v, batch[i]), bound,
                                           counts)
                sample_sum = sample_sum + (self.d * difference / h) * u
            total = total + sample_sum / m
        self.loss_evaluations += 2 * b * m
        return total / b


class _SharedDirection(NaiveOracle):
    """Alg 6 with every record of a block using the first record's direction."""

    def _two_point(self, w, batch, directions, counts):
        return super()._two_point(w, batch, np.broadcast_to(directions[:1], directions.shape).copy(), counts)


class _EpochlessTree:
    """TREE called with the run's round count (k − 1)T + t on one tree of K·T leaves: never reset per epoch."""

    def __init__(self, tree):
        self.tree, self.calls = tree, 0

    def __call__(self, t):
        self.calls += 1
        return self.tree(self.calls)


def _mutated_run(bug: str):
    """A loop implementation of Alg 3 + OSD + Alg 4/6 from the reference's oracle and learner, with one bug:

    * "unshared_diff": DIFF's evaluation at w_{t−1} uses fresh directions (the coupling of Alg 2 broken);
    * "tree_not_reset": one tree over the K·T rounds of the run (Alg 5 is restarted at t = 1 of every epoch);
    * "public_noise": the noise drawn from the PUBLIC seed's ("zo_o2nc", "noise") stream;
    * "next_iterate": w_t = x_{t+1} + s_tΔ_t (the query point formed after the update);
    * "shared_direction": Alg 6 with one direction for all records of a block.
    """

    def implementation(call):
        naive = "batch_size" in call.arguments
        correct = getattr(reference_subject(), "zo_o2nc_naive" if naive else "zo_o2nc")(**call.arguments)
        st = correct.ledger.settings  # T, K, blocks, δ, D, η, σ, L: the reference's
        T, K, d = st.T, st.K, st.d
        data = np.asarray(call.data, dtype=np.float64)
        seed = call.seed
        secret = seed if (bug == "public_noise" or call.noise_seed is None) else int(call.noise_seed)
        noise_rng = Streams(secret).generator(KEY, "noise")
        common = dict(d=d, smoothing_radius=st.smoothing_radius, lipschitz=st.lipschitz,
                      enforce_lipschitz=st.enforce_lipschitz, seed=seed, noise_rng=noise_rng)
        if naive:
            partition = alg6_partition(data.shape[0], T, K, st.block_sizes[0])
            kind = _SharedDirection if bug == "shared_direction" else NaiveOracle
            oracle = kind(call.loss, data, partition, noise_std=st.noise_std, **common)
        else:
            partition = alg4_partition(data.shape[0], T, K, *st.block_sizes)
            kind = _UnsharedDiff if bug == "unshared_diff" else VarianceReducedOracle
            oracle = kind(call.loss, data, partition, step_bound=st.step_bound, noise_stds=np.full(T, st.noise_std),
                          **common)
            if bug == "tree_not_reset":
                oracle.tree = _EpochlessTree(TreeMechanism(d, np.full(K * T, st.noise_std), noise_rng))
            if bug == "next_iterate":
                oracle.step_bound = math.inf  # its query points may move more than 2D: not refused here
        learner = ProjectedOSD(d, st.step_bound, st.step_size)
        public = Streams(seed).child(KEY)
        x = np.asarray(call.x1, dtype=np.float64)
        averages, releases, s_rows, w_rows, x_rows, d_rows = [], [], [], [], [], []
        for k in range(1, K + 1):
            learner.reset()
            s = public.generator("segment", k).random(T)
            ws, xs, ds = [], [x], []
            for t in range(1, T + 1):
                delta = learner.propose()
                x_next = x + delta
                w = (x_next if bug == "next_iterate" else x) + s[t - 1] * delta
                g = oracle.query(k, t, w)
                learner.update(g)
                releases.append(g)
                ws.append(w)
                ds.append(delta)
                x = x_next
                xs.append(x)
            averages.append(np.mean(np.array(ws), axis=0))
            s_rows.append(s)
            w_rows.append(ws)
            x_rows.append(xs)
            d_rows.append(ds)
        index = int(public.generator("output").integers(K))
        averages = np.array(averages)
        diagnostics = NonPrivateDiagnostics(np.array(oracle.noiseless).reshape(K, T, d),
                                            np.array(oracle.noise).reshape(K, T, d),
                                            np.array(oracle.nonfinite_counts, dtype=np.int64).reshape(K, T),
                                            np.array(oracle.exceedances, dtype=np.int64).reshape(K, T),
                                            oracle.loss_evaluations)
        return dataclasses.replace(correct, output=averages[index].copy(), output_index=index,
                                   epoch_averages=averages, final_iterate=x.copy(),
                                   releases=np.array(releases).reshape(K, T, d), segment_points=np.array(s_rows),
                                   query_points=np.array(w_rows), iterates=np.array(x_rows), steps=np.array(d_rows),
                                   diagnostics=diagnostics)

    return implementation


def _releases_in_float32(result, call):
    """A backend that keeps the released sums in float32."""
    return dataclasses.replace(result, releases=np.asarray(result.releases, dtype=np.float32).astype(np.float64))


RUN = Claim(
    id="zo_o2nc.backend.run",
    paper="zo_o2nc",
    location="Algorithm 3, Algorithm 4 (with Algorithm 5), Theorem 4.9; randomness contract",
    statement="On the same public and secret seeds the subject's zo_o2nc run has the reference's ledger, public "
              "draws (s_t^k, k*), non-finite counts and loss evaluations exactly, its Lipschitz exceedance counts "
              "within the rounding window, and every round — g_t, TREE(t), g̃_t, Δ_(t+1), x_(t+1), w_t, w̄^k — equal "
              "to the mpmath reference oracle's exact round at the subject's own points within the float64 one-round "
              "bound.",
    kind="backend",
    requires=("zo_o2nc",),
    check=_check_run,
    mutants=(
        substitute("unshared_diff", "DIFF evaluates f(w_(t-1) + δv) with fresh directions v, not the u of w_t",
                   "zo_o2nc", _mutated_run("unshared_diff")),
        substitute("tree_not_reset", "one tree over all K·T rounds: TREE is not restarted at t = 1 of each epoch",
                   "zo_o2nc", _mutated_run("tree_not_reset")),
        substitute("public_noise", "the tree noise drawn from the public seed's stream", "zo_o2nc",
                   _mutated_run("public_noise")),
        substitute("next_iterate", "w_t = x_(t+1) + s_t Δ_t: the query point formed after the update", "zo_o2nc",
                   _mutated_run("next_iterate")),
        rebind("count_rule_ignored", "σ always from the printed 2 ln T count (Corollary 4.4)", "zo_o2nc",
               count_rule="paper_2lnT"),
        on_output("float32", "released sums kept in float32", "zo_o2nc", _releases_in_float32),
    ),
    applies_to_reference=False,
)


NAIVE_RUN = Claim(
    id="zo_o2nc.backend.naive_run",
    paper="zo_o2nc",
    location="Algorithm 3, Algorithm 6 (App. E); randomness contract",
    statement="On the same public and secret seeds the subject's zo_o2nc_naive run has the reference's ledger, "
              "public draws, non-finite counts and loss evaluations exactly, its Lipschitz exceedance counts within "
              "the rounding window, and every round — the estimate, ξ_t, g̃_t, Δ_(t+1), x_(t+1), w_t, w̄^k — equal to "
              "the mpmath reference oracle's exact round at the subject's own points within the float64 one-round "
              "bound.",
    kind="backend",
    requires=("zo_o2nc_naive",),
    check=_check_naive_run,
    mutants=(
        substitute("public_noise", "the noise drawn from the public seed's stream", "zo_o2nc_naive",
                   _mutated_run("public_noise")),
        substitute("shared_direction", "one direction for every record of a block", "zo_o2nc_naive",
                   _mutated_run("shared_direction")),
        rebind("sigma_rule_ignored", "σ always from the printed sensitivity dL/B (erratum zo_o2nc.E8)",
               "zo_o2nc_naive", sigma_rule="paper"),
        on_output("float32", "released estimates kept in float32", "zo_o2nc_naive", _releases_in_float32),
    ),
    applies_to_reference=False,
)
