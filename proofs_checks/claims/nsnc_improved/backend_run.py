"""nsnc_improved Algorithm 2 (O2NC with clipped OGD) with the oracles of Algorithms 3, 4 and 5: backend claims — a
subject's whole run agrees with the reference draw for draw (docs/design.md, Precision and Randomness contract).

One claim per oracle kind ("single_pass", "single_pass_crn", "first_order", "multi_pass",
"multi_pass_first_order"). For each configuration (RidgeSum objectives from ``reference.objectives``, d ∈ {1, 3} at
quick, up to 5 at full; σ given explicitly — so no calibration runs — or no noise; clip_hardening with a Lipschitz
bound small enough that the clips are active, enforce_lipschitz, restart_blocks) the subject and the float64
reference run on the same public seed and the same explicit secret seed, with ``record_path=True``, and:

* exact (draws and discrete facts): the ledger (plan, settings, public seed, the secret seed's source and
  condition) equals the reference's field by field; the public draws s_t and the output block are the reference's;
  the non-finite counts and the evaluation count equal the reference's; the structure of Algorithm 2 holds exactly
  (x_0 as given, the iterate carried from block to block, Δ = 0 at the first step — and at every block's first step
  with restart_blocks —, the final iterate, output = the block average of the output block);
* every step against the mpmath reference oracle at 40 digits, taken at the subject's OWN points: the reference's
  ``SinglePassOracle`` / ``MultiPassOracle`` in mpmath (exact directions from the public key, σ = 0, the float64
  run's clip radii) queried at the subject's z_t (converted exactly) gives the exact noiseless sums G*_t, hence
  the exact increment G*_t − G*_(t−1); the exact noise is σ·z from the secret key (TREE(τ) summed over NODE(τ) in
  mpmath, single pass; χ_t, multi pass). The subject's g_t (diagnostics), its noise, its release g̃_t,
  Δ_(t+1) = clip_D(Δ_t − η g̃_t), x_t = x_(t−1) + Δ_t, z_t = x_(t−1) + s_tΔ_t and the block averages are each
  compared with the exact value computed from the subject's OWN previous values (g_t* = G*_t at a reset, else
  g_(t−1) + (G*_t − G*_(t−1)) single pass and g̃_(t−1) + (G*_t − G*_(t−1)) multi pass, which builds on the RELEASED
  vector). This local check needs no propagation through the T steps (where the factor dLη/α per step would make an
  a-priori end-to-end bound problem-specific): a float64 implementation of the algorithm is exactly one whose every
  step is the exact step up to its own rounding;
* the clipped counts (clip_hardening, and the clips of enforce_lipschitz) lie in the window of counts
  possible within the rounding of each clipped vector and of its radius.

The one-step bound (Higham's standard model, u = 2⁻⁵³, γ_n = nu/(1 − nu), first order, doubled by SAFETY = 2 for
the dropped second-order terms), in Euclidean norms per record, for a record ξ = (a, c) of a ridge loss L·φ(<a, p> − c)
(‖a‖ = 1) — every bound is evaluated on this module's own float64 recomputation of the step:

  directions |Δy_j| ≤ γ_{d+5}|y_j| (sphere: g·(1/‖g‖)); perturbations |Δy_j| ≤ γ_{d+8}|y_j| (ball: g·(αU^{1/d}/‖g‖),
             the power within 2 ulp)
  zeroth order, per direction: |Δp_j| ≤ α|Δy_j| + u(|z_j| + 2α|y_j|)  (p = z ± fl(αy))
             |Δf| ≤ L‖Δp‖ + L·γ_{d+4}(Σ_j|a_j p_j| + |c| + τ)         (L-Lipschitz loss and its evaluation)
             |ΔD| ≤ |Δf₊| + |Δf₋| + u|D| (+ u·2L'α, the rounding of the bound, when enforce_lipschitz clips D to
             ±2L'α: clipping is 1-Lipschitz in the value and in the bound)
             a = (dD)/(2α): |Δa| ≤ d|ΔD|/(2α) + 2u|a|;   c = a·y: ‖Δc‖ ≤ |Δa|‖y‖ + |a|‖Δy‖ + u|a|‖y‖
  first order, per perturbation: |Δp_j| ≤ |Δy_j| + u|p_j| (p = z + y); the residual r = <a, p> − c moves by at most
             ‖Δp‖ + γ_{d+1}(Σ_j|a_j p_j| + |c|); the gradient L·φ'(r)·a is piecewise constant: ‖Δ∇f‖ ≤ 2u‖∇f‖, plus
             the largest jump 2L‖a‖ when r lies within SAFETY times that distance of a kink of φ (0, ±τ);
             enforce_lipschitz's clip to L': + γ_{d+6}(L' + ‖∇f‖)
  the estimate of a record, the mean of its m terms in any order: (Σ‖Δc‖ + γ_{m+1}Σ‖c‖)/m
  increment: v = e(z_t) − e'(z_(t−1)): ‖Δv‖ ≤ ‖Δe‖ + ‖Δe'‖ + u‖v‖
  clip_hardening (1-Lipschitz in v and in the radius r): + |r(fl‖z_t − z_(t−1)‖) − r(‖z_t − z_(t−1)‖)| (the radius at
             the float64 and at the exact step length, evaluated) + γ_{d+6}(r + ‖v‖) (norm, quotient, product)
  the step's mean of its b records, in any order: e_t = (Σ‖Δv_i‖ + γ_{b+1}Σ‖v_i‖)/b
  g_t = g_(t−1) + mean (single pass) or g̃_(t−1) + mean (multi pass), from the subject's own previous value:
           e_t + u‖g_t‖
  noise: ‖ΔTREE(τ)‖ ≤ γ_{n+1}‖Σ_{b ∈ NODE(τ)} |ξ_b|‖ (n = |NODE(τ)|);  multi pass: u‖σz‖
  release g̃_t = g_t + noise: (e_t + u‖g_t‖) + ‖Δnoise‖ + u‖g̃_t‖
  learner: v = Δ − ηg̃: ‖Δv‖ ≤ 2u‖η|g̃| + |v|‖; clip_D (1-Lipschitz) and its rounding and shrink loop
           (``reference.o2nc.project_ball``): + D(2γ_{d+8} + 2⁻⁴⁸) when ‖v‖ ≥ D/2
  x_t: u|x_t,j|;  z_t: u(|s_tΔ_t,j| + |z_t,j|);  block average in any summation order: γ_{M+1}·(1/M)Σ_t|z_t,j|.
  clipped counts: a record whose ‖v‖ lies more than SAFETY·(2‖Δv‖ + γ_{d+4}‖v‖ + |Δr|) above (below) its radius is
           (is not) clipped by every float64 implementation.

Swapped direction sets, a reused noise draw, a dropped record, a tree not reset at each period, noise from the
public stream, directions shared (or not) against the oracle's rule, sphere instead of ball perturbations, the
multi-pass increment built on the noiseless g, swapped σ1/σ2, clip_hardening ignored, releases in float32: each
misses these checks by orders of magnitude (the mutants below). These claims do not apply to the reference itself
(it is the oracle).
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
    reference_subject,
    rounding_gamma,
    same_value,
    substitute,
)
from reference.algorithms.nsnc_improved import (
    FIRST_ORDER_ORACLES,
    KEY,
    SINGLE_PASS_ORACLES,
    DPResult,
    MultiPassOracle,
    NonPrivateDiagnostics,
    SinglePassOracle,
    prepare_run,
    step_directions,
)
from reference.mechanisms import TreeMechanism, tree_node
from reference.o2nc import ClippedOGD, o2nc, project_ball
from reference.objectives import RidgeSum
from reference.precision import norm, to_mp, working_precision
from reference.rng import Streams, sample_sphere

SAFETY = 2.0
DPS = 40
DP_DELTA = 1e-5
TAU = 0.4
LEDGER_FIELDS = ("algorithm", "plan", "settings", "seed", "secret_seed_source", "guarantee_condition")
U = UNIT_ROUNDOFF


def _kinks(profile):
    """The kinks of the ridge profile φ (``reference.smoothing.ridge_profile``): |r| at 0; min(|r|, τ) and
    ||r| − τ| at 0 and ±τ."""
    return (0.0,) if profile == "abs" else (0.0, TAU, -TAU)


# ---------------------------------------------------------------------------------------------------
# Configurations and problems


@dataclasses.dataclass(frozen=True)
class Config:
    """One run: the oracle, a RidgeSum problem and the switches.

    privacy: "noise_std" (σ given: 0.7 single pass, (0.5, 0.9) multi pass) or "none". lipschitz_factor: the L passed
    is this times the objective's true L (None: not passed, non-private only); small with hardening=True, the
    clip_hardening radii L + r and H‖Δz‖ + 2r are then exceeded. records: n of a multi-pass run.
    """

    oracle: str
    d: int
    profile: str
    K: int = 2
    M: int = 4
    tree_size: int = 3
    B1: int = 4
    B2: int = 2
    directions: object = 2
    records: int = 5
    smoothing_radius: float = 0.1
    step_bound: float = 0.02
    step_size: float = 0.5
    privacy: str = "noise_std"
    lipschitz_factor: float | None = 1.25
    enforce: bool = False
    hardening: bool = False
    restart: bool = False

    @property
    def single(self) -> bool:
        return self.oracle in SINGLE_PASS_ORACLES

    @property
    def first_order(self) -> bool:
        return self.oracle in FIRST_ORDER_ORACLES

    @property
    def label(self) -> str:
        return (f"{self.oracle} d={self.d} {self.profile} K={self.K} M={self.M} Σ={self.tree_size} "
                + (f"B1={self.B1} B2={self.B2} " if self.single else f"n={self.records} ")
                + f"m={self.directions} α={self.smoothing_radius} {self.privacy} L×{self.lipschitz_factor}"
                + (" enforce" if self.enforce else "") + (" clip_hardening" if self.hardening else "")
                + (" restart_blocks" if self.restart else ""))


def _records(config: Config) -> int:
    if not config.single:
        return config.records
    T = config.K * config.M
    resets = -(-T // config.tree_size)
    return resets * config.B1 + (T - resets) * config.B2 + 3  # three records the single pass never reads


def _problem(ctx, config: Config):
    rng = ctx.generator("problem", config.label)
    objective = RidgeSum.random(config.d, _records(config), rng, lipschitz=1.3, profile=config.profile, tau=TAU,
                                offset_scale=0.5)
    x0 = rng.normal(0.0, 0.3, config.d)
    seed = int(rng.integers(2**31))
    noise_seed = int(rng.integers(2**31, 2**32)) if config.privacy != "none" else None  # never a public seed
    return objective, x0, seed, noise_seed


def _kwargs(config: Config, objective, seed, noise_seed) -> dict:
    kwargs = dict(oracle=config.oracle, blocks=config.K, block_length=config.M, tree_size=config.tree_size,
                  smoothing_radius=config.smoothing_radius, step_bound=config.step_bound,
                  step_size=config.step_size, directions=config.directions, seed=seed, record_path=True,
                  enforce_lipschitz=config.enforce, clip_hardening=config.hardening,
                  restart_blocks=config.restart)
    if config.single:
        kwargs.update(B1=config.B1, B2=config.B2)
    if config.lipschitz_factor is not None:
        kwargs["lipschitz"] = config.lipschitz_factor * objective.lipschitz
    if config.privacy == "noise_std":
        kwargs.update(noise_std=0.7 if config.single else (0.5, 0.9), dp_delta=DP_DELTA, noise_seed=noise_seed)
    else:
        kwargs["noise"] = "none"
    return kwargs


def _objective_function(config: Config, objective):
    return objective.gradient if config.first_order else objective.loss


# ---------------------------------------------------------------------------------------------------
# The float64 bound of one step (module doc), from this module's own float64 recomputation


def _zeroth_order_records(settings, objective, centre, y, rows):
    """(estimates e (b, d), their bounds (b,), fewest and most enforce_lipschitz clips) of the two-point estimates at
    ``centre`` along y (b, m, d)."""
    d, alpha, m = settings.d, settings.smoothing_radius, y.shape[1]
    a, offset = rows[:, None, :d], rows[:, None, d]
    dy = rounding_gamma(d + 5) * np.abs(y)
    dp = alpha * dy + U * (np.abs(centre) + 2 * alpha * np.abs(y))
    dp_norm = np.linalg.norm(dp, axis=-1)

    def loss_error(p):
        evaluation = rounding_gamma(d + 4) * (np.sum(np.abs(a * p), axis=-1) + np.abs(offset) + TAU)
        return objective.lipschitz * (dp_norm + evaluation)

    plus, minus = centre + alpha * y, centre - alpha * y
    grid = rows[:, None, :]
    difference = objective.loss(plus, grid) - objective.loss(minus, grid)
    e_difference = loss_error(plus) + loss_error(minus) + U * np.abs(difference)
    fewest = most = 0
    if settings.enforce_lipschitz:
        bound = 2 * settings.lipschitz * alpha
        # a difference further than the rounding from the bound is (is not) clipped by every implementation
        slack = SAFETY * (e_difference + U * bound)
        fewest = int(np.count_nonzero(np.abs(difference) > bound + slack))
        most = int(np.count_nonzero(np.abs(difference) > bound - slack))
        difference = np.clip(difference, -bound, bound)
        e_difference = e_difference + U * bound
    coefficient = (d * difference) / (2 * alpha)
    e_coefficient = d * e_difference / (2 * alpha) + 2 * U * np.abs(coefficient)
    y_norm, dy_norm = np.linalg.norm(y, axis=-1), np.linalg.norm(dy, axis=-1)
    term_norm = np.abs(coefficient) * y_norm
    e_terms = e_coefficient * y_norm + np.abs(coefficient) * dy_norm + U * term_norm
    value = np.sum(coefficient[..., None] * y, axis=1) / m
    error = (e_terms.sum(axis=1) + rounding_gamma(m + 1) * term_norm.sum(axis=1)) / m
    return value, error, fewest, most


def _first_order_records(settings, objective, profile, centre, y, rows):
    """(estimates (b, d), bounds (b,), fewest and most gradient clips) of (1/m) Σ_j ∇f(centre + y_j)."""
    d, m = settings.d, y.shape[1]
    a, offset = rows[:, None, :d], rows[:, None, d]
    dy = rounding_gamma(d + 8) * np.abs(y)
    points = centre + y
    dp = dy + U * np.abs(points)
    residual = np.sum(a * points, axis=-1) - offset
    a_norm = np.linalg.norm(a, axis=-1)
    e_residual = a_norm * np.linalg.norm(dp, axis=-1) + rounding_gamma(d + 1) * (
        np.sum(np.abs(a * points), axis=-1) + np.abs(offset))
    distance = np.min(np.abs(residual[..., None] - np.array(_kinks(profile))), axis=-1)
    near = distance <= SAFETY * e_residual
    gradients = objective.gradient(points, rows[:, None, :])
    g_norm = np.linalg.norm(gradients, axis=-1)
    e_g = 2 * U * g_norm + np.where(near, 2 * objective.lipschitz * a_norm, 0.0)
    fewest = most = 0
    if settings.enforce_lipschitz:
        radius = settings.lipschitz
        slack = SAFETY * (2 * e_g + rounding_gamma(d + 4) * g_norm)
        fewest, most = int(np.count_nonzero(g_norm > radius + slack)), int(np.count_nonzero(g_norm > radius - slack))
        over = g_norm > radius
        gradients = np.where(over[..., None], gradients * (radius / np.where(over, g_norm, 1.0))[..., None], gradients)
        e_g = e_g + rounding_gamma(d + 6) * (radius + g_norm)
        g_norm = np.linalg.norm(gradients, axis=-1)
    value = np.sum(gradients, axis=1) / m
    error = (e_g.sum(axis=1) + rounding_gamma(m + 1) * g_norm.sum(axis=1)) / m
    return value, error, fewest, most


def _step_bound(config, settings, objective, radii, seed, t, z, z_previous, rows, reset, exact_radius):
    """(e_t, fewest and most clipped counts) of step t at the subject's points (module doc)."""
    d, oracle = settings.d, settings.oracle
    m = settings.directions[0] if reset else settings.directions[1]
    y = step_directions(seed, t, oracle, rows.shape[0], m, d, settings.smoothing_radius, reset=reset)
    if reset:
        halves = [(z, y)]
    elif oracle == "single_pass_crn":
        halves = [(z, y), (z_previous, y)]
    else:
        halves = [(z, y[:, 0]), (z_previous, y[:, 1])]
    values, errors, fewest, most = [], [], 0, 0
    for centre, directions in halves:
        if config.first_order:
            value, error, lo, hi = _first_order_records(settings, objective, config.profile, centre, directions, rows)
        else:
            value, error, lo, hi = _zeroth_order_records(settings, objective, centre, directions, rows)
        values.append(value)
        errors.append(error)
        fewest, most = fewest + lo, most + hi
    if reset:
        v, e_v = values[0], errors[0]
    else:
        v = values[0] - values[1]
        e_v = errors[0] + errors[1] + U * np.linalg.norm(v, axis=-1)
    if radii is not None:
        radius = radii.reset if reset else radii.increment(norm(z - z_previous))
        d_radius = 0.0 if reset else abs(float(radius) - float(exact_radius))
        v_norm = np.linalg.norm(v, axis=-1)
        slack = SAFETY * (2 * e_v + rounding_gamma(d + 4) * v_norm + d_radius)
        fewest += int(np.count_nonzero(v_norm > radius + slack))
        most += int(np.count_nonzero(v_norm > radius - slack))
        over = v_norm > radius
        v = np.where(over[:, None], v * (radius / np.where(over, v_norm, 1.0))[:, None], v)
        e_v = e_v + d_radius + rounding_gamma(d + 6) * (radius + v_norm)
    b = rows.shape[0]
    e_t = (e_v.sum() + rounding_gamma(b + 1) * np.linalg.norm(v, axis=-1).sum()) / b
    return float(e_t), fewest, most


# ---------------------------------------------------------------------------------------------------
# The exact steps


def _noise_draws(settings, seed, noise_seed):
    """z_t (T, d): the reference's T successive standard_normal(d) draws of ("nsnc_improved", "noise")."""
    rng = Streams(seed if noise_seed is None else noise_seed).generator(KEY, "noise")
    return np.array([rng.standard_normal(settings.d) for _ in range(settings.T)])


def _exact_noise(settings, z, t):
    """(exact noise (mp, d), its float64 rounding bound) of step t."""
    tau = (t - 1) % settings.tree_size + 1
    if settings.oracle in SINGLE_PASS_ORACLES:
        sigma = settings.noise_stds[0]
        nodes = tree_node(tau)
        total = np.array([mpmath.mpf(0)] * settings.d, dtype=object)
        magnitude = np.zeros(settings.d)
        for _, b in nodes:
            leaf = z[t - tau + b - 1]
            total = total + to_mp(leaf) * mpmath.mpf(sigma)
            magnitude += np.abs(sigma * leaf)
        return total, rounding_gamma(len(nodes) + 1) * float(np.linalg.norm(magnitude))
    sigma = settings.noise_stds[0] if tau == 1 else settings.noise_stds[1]
    return to_mp(z[t - 1]) * mpmath.mpf(sigma), U * float(np.linalg.norm(sigma * z[t - 1]))


def _exact_oracle(function, data, prepared):
    """The reference oracle in mpmath with σ = 0 and the float64 run's clip radii: its query returns G*_t."""
    st = prepared.settings
    unused = np.random.Generator(np.random.PCG64(0))  # σ = 0: its draws are multiplied by 0
    common = dict(oracle=st.oracle, d=st.d, block_length=st.block_length, smoothing_radius=st.smoothing_radius,
                  step_bound=st.step_bound, directions=st.directions, lipschitz=st.lipschitz,
                  enforce_lipschitz=st.enforce_lipschitz, clip_radii=prepared.clip_radii, seed=prepared.seed,
                  noise_rng=unused, use_mp=True)
    if st.oracle in SINGLE_PASS_ORACLES:
        return SinglePassOracle(function, to_mp(data), prepared.schedule, noise_std=0.0, **common)
    return MultiPassOracle(function, to_mp(data), tree_size=st.tree_size, steps=st.T, noise_stds=(0.0, 0.0),
                           **common)


def _gap(got, exact) -> float:
    """‖got − exact‖₂ (got float64, exact mpmath)."""
    return float(mpmath.sqrt(mpmath.fsum((mpmath.mpf(float(g)) - e) ** 2 for g, e in zip(np.ravel(got),
                                                                                           np.ravel(exact)))))


def _coordinate_ratio(got, exact, bound) -> float:
    """max_j |got_j − exact_j| / bound_j (a nonzero gap against a zero bound is infinite)."""
    gap = np.array([float(abs(mpmath.mpf(float(g)) - e)) for g, e in zip(np.ravel(got), np.ravel(exact))])
    bound = np.ravel(np.asarray(bound, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(gap == 0, 0.0, gap / bound)
    return float(np.max(ratios)) if ratios.size else 0.0


class _Worst:
    def __init__(self):
        self.ratio, self.detail = 0.0, "no step"

    def see(self, ratio, detail):
        if not ratio <= self.ratio:  # NaN sticks
            self.ratio, self.detail = (math.inf if math.isnan(ratio) else ratio), detail


def _check_steps(config, objective, prepared, seed, noise_seed, got):
    """Every step of the subject against the exact step from its own previous values (module doc)."""
    st = prepared.settings
    K, M, T, d = st.K, st.block_length, st.T, st.d
    function = _objective_function(config, objective)
    z_draws = _noise_draws(st, seed, noise_seed)
    w_all = np.asarray(got.query_points, dtype=np.float64).reshape(T, d)
    x_all = np.asarray(got.iterates, dtype=np.float64)
    delta_all = np.asarray(got.steps, dtype=np.float64).reshape(T, d)
    s_all = np.asarray(got.segment_points, dtype=np.float64).reshape(T)
    releases = np.asarray(got.releases, dtype=np.float64).reshape(T, d)
    sums = np.asarray(got.diagnostics.noiseless_sums, dtype=np.float64).reshape(T, d)
    noise = np.asarray(got.diagnostics.noise, dtype=np.float64).reshape(T, d)
    clipped = np.asarray(got.diagnostics.clipped_counts).reshape(T)
    averages = np.asarray(got.block_averages, dtype=np.float64)
    data = np.asarray(prepared.data, dtype=np.float64)
    eta, D = st.step_size, st.step_bound
    worst = _Worst()
    with working_precision(DPS):
        oracle = _exact_oracle(function, data, prepared)
        eta_mp, D_mp = mpmath.mpf(eta), mpmath.mpf(D)
        G_previous = None
        for t in range(1, T + 1):
            k, j = divmod(t - 1, M)
            where = f"step t = {t} (block {k + 1}, position {j + 1})"
            w, x, delta, s = w_all[t - 1], x_all[k, j], delta_all[t - 1], s_all[t - 1]
            # z_t = x_(t−1) + s_tΔ_t and x_t = x_(t−1) + Δ_t (Algorithm 2)
            worst.see(_coordinate_ratio(w, to_mp(x) + mpmath.mpf(s) * to_mp(delta),
                                        SAFETY * U * (np.abs(s * delta) + np.abs(w))), f"z_t at {where}")
            x_next = x_all[k, j + 1]
            worst.see(_coordinate_ratio(x_next, to_mp(x) + to_mp(delta), SAFETY * U * np.abs(x_next)),
                      f"x_t at {where}")
            # the exact oracle at the subject's z_t
            try:
                G = oracle.query(k + 1, j + 1, to_mp(w))
            except ValueError as exc:
                return deterministic(False, detail=f"{config.label}: the reference oracle refuses the subject's "
                                                   f"query point at {where}: {exc}")
            reset = (t - 1) % st.tree_size == 0
            rows = data[prepared.schedule.block(t)] if st.oracle in SINGLE_PASS_ORACLES else data
            w_previous = w_all[t - 2] if t > 1 else None
            exact_radius = None
            if prepared.clip_radii is not None and not reset:
                exact_radius = prepared.clip_radii.increment(norm(to_mp(w) - to_mp(w_previous)))
            e_t, fewest, most = _step_bound(config, st, objective, prepared.clip_radii, seed, t, w, w_previous, rows,
                                            reset, exact_radius)
            if not fewest <= int(clipped[t - 1]) <= most:
                return deterministic(False, detail=f"{config.label}: {int(clipped[t - 1])} clipped vectors at {where}, "
                                                   f"outside the window [{fewest}, {most}] of the rounding")
            if reset:
                exact_g = G
            else:
                base = sums[t - 2] if st.oracle in SINGLE_PASS_ORACLES else releases[t - 2]
                exact_g = to_mp(base) + (G - G_previous)
            G_previous = G
            g = sums[t - 1]
            e_g = e_t + U * float(np.linalg.norm(g))
            worst.see(_gap(g, exact_g) / (SAFETY * e_g) if e_g > 0 else (0.0 if _gap(g, exact_g) == 0 else math.inf),
                      f"noiseless sum g_t at {where}")
            exact_noise, e_noise = _exact_noise(st, z_draws, t)
            gap = _gap(noise[t - 1], exact_noise)
            worst.see(gap / (SAFETY * e_noise) if gap else 0.0, f"noise at {where}")
            released = releases[t - 1]
            e_release = e_g + e_noise + U * float(np.linalg.norm(released))
            gap = _gap(released, exact_g + exact_noise)
            worst.see(gap / (SAFETY * e_release) if gap else 0.0, f"release g̃_t at {where}")
            # Δ_(t+1) = clip_D(Δ_t − η g̃_t) (Algorithm 2, OGD on the release), unless restart_blocks empties it
            if t < T and not (st.restart_blocks and (j + 1) == M):
                v = to_mp(delta) - eta_mp * to_mp(released)
                exact_delta = project_ball(v, D_mp)
                v_float = np.array([float(e) for e in v])
                e_v = 2 * U * float(np.linalg.norm(eta * np.abs(released) + np.abs(v_float)))
                if np.linalg.norm(v_float) >= D / 2:
                    e_v += D * (2 * rounding_gamma(d + 8) + 2.0**-48)
                gap = _gap(delta_all[t], exact_delta)
                worst.see(gap / (SAFETY * e_v) if gap else 0.0, f"learner step Δ_(t+1) at {where}")
        for k in range(K):
            block = w_all[k * M:(k + 1) * M]
            exact_mean = np.array([mpmath.fsum(to_mp(block[:, i])) / M for i in range(d)], dtype=object)
            bound = SAFETY * rounding_gamma(M + 1) * np.mean(np.abs(block), axis=0)
            worst.see(_coordinate_ratio(averages[k], exact_mean, bound), f"block average {k + 1}")
    return deterministic(worst.ratio <= 1.0, statistic=worst.ratio, bound=1.0,
                         detail=f"{config.label}: worst step gap / float64 bound at {worst.detail}")


# ---------------------------------------------------------------------------------------------------
# Comparing one subject run with the reference


def _shapes(settings):
    K, M, d = settings.K, settings.block_length, settings.d
    return {"output": (d,), "block_averages": (K, d), "final_iterate": (d,), "releases": (K, M, d),
            "segment_points": (K, M), "query_points": (K, M, d), "iterates": (K, M + 1, d), "steps": (K, M, d)}


def _compare(config, objective, x0, seed, noise_seed, prepared, got, want) -> list:
    st = want.ledger.settings
    K, M, d = st.K, st.block_length, st.d
    label = config.label
    for name, shape in _shapes(st).items():
        value = getattr(got, name)
        value = None if value is None else np.asarray(value, dtype=np.float64)
        if value is None or value.shape != shape or not np.all(np.isfinite(value)):
            return [deterministic(False, detail=f"{label}: {name} is missing, has shape "
                                                f"{None if value is None else value.shape} (want {shape}) or "
                                                "non-finite values")]
    for name, shape in (("noiseless_sums", (K, M, d)), ("noise", (K, M, d)), ("clipped_counts", (K, M))):
        value = np.asarray(getattr(got.diagnostics, name), dtype=np.float64)
        if value.shape != shape or not np.all(np.isfinite(value)):
            return [deterministic(False, detail=f"{label}: diagnostics.{name} has shape {value.shape} (want "
                                                f"{shape}) or non-finite values")]
    for name in LEDGER_FIELDS:
        if not same_value(getattr(got.ledger, name), getattr(want.ledger, name)):
            return [deterministic(False, detail=f"{label}: ledger.{name} {getattr(got.ledger, name)!r} != reference "
                                                f"{getattr(want.ledger, name)!r}")]
    if int(got.output_index) != int(want.output_index):
        return [deterministic(False, detail=f"{label}: output block index {got.output_index} != reference "
                                            f"{want.output_index} (the public draw of ('nsnc_improved', 'output'))")]
    if not np.array_equal(np.asarray(got.segment_points), np.asarray(want.segment_points)):
        return [deterministic(False, detail=f"{label}: segment points s_t are not the public draws of "
                                            "('nsnc_improved', 'segment', k)")]
    for name in ("nonfinite_counts", "evaluations"):
        if not same_value(getattr(got.diagnostics, name), getattr(want.diagnostics, name)):
            return [deterministic(False, detail=f"{label}: diagnostics.{name} {getattr(got.diagnostics, name)!r} != "
                                                f"reference {getattr(want.diagnostics, name)!r}")]
    iterates, steps = np.asarray(got.iterates), np.asarray(got.steps)
    averages = np.asarray(got.block_averages)
    first_steps = steps[:, 0] if st.restart_blocks else steps[:1, 0]
    structure = (np.array_equal(iterates[0, 0], x0) and all(np.array_equal(iterates[k, 0], iterates[k - 1, M])
                                                            for k in range(1, K))
                 and not np.any(first_steps) and np.array_equal(got.final_iterate, iterates[K - 1, M])
                 and np.array_equal(got.output, averages[int(got.output_index)]))
    if not structure:
        return [deterministic(False, detail=f"{label}: x_0 not the start, an iterate not carried to the next block, "
                                            "Δ ≠ 0 at a (re)started step, final ≠ the last iterate or output ≠ the "
                                            "output block's average")]
    return [_check_steps(config, objective, prepared, seed, noise_seed, got)]


def _prepare(config, objective, x0, kwargs):
    """The float64 reference's prepared run (settings, schedule, the float64 clip radii)."""
    arguments = {key: value for key, value in kwargs.items() if key not in ("oracle", "record_path")}
    defaults = dict(B1=None, B2=1, noise_std=None, epsilon=None, lipschitz=None, dp_delta=None, gamma=None,
                    sensitivity_mode="auto", noise_seed=None, noise="gaussian")
    return prepare_run(config.oracle, objective.data, x0, **{**defaults, **arguments})


def _check_configs(subject, ctx, configs):
    ref = reference_subject()
    parts = []
    for config in configs:
        objective, x0, seed, noise_seed = _problem(ctx, config)
        kwargs = _kwargs(config, objective, seed, noise_seed)
        function = _objective_function(config, objective)
        want = ref.nsnc_improved(function, objective.data, x0, **kwargs)
        try:
            got = subject.nsnc_improved(function, objective.data, x0, **kwargs)
        except Exception as exc:  # noqa: BLE001 — a refusal of a run the reference completes is a failure
            parts.append(deterministic(False, detail=f"{config.label}: the subject raised {type(exc).__name__}: "
                                                     f"{exc} on a run the reference completes"))
            break
        prepared = _prepare(config, objective, x0, kwargs)
        parts.extend(_compare(config, objective, x0, seed, noise_seed, prepared, got, want))
        if any(p.verdict == FAIL for p in parts):
            break
    return combine(parts, ctx)


# ---------------------------------------------------------------------------------------------------
# Configurations (quick: given σ, no noise, and the clips, on d ∈ {1, 3}; full: more sizes and profiles)


def _configs(oracle, budget):
    first = oracle in FIRST_ORDER_ORACLES
    alpha = 0.3 if first else 0.1  # first order: perturbations wide enough to cross the kinks of φ often
    if oracle in SINGLE_PASS_ORACLES:
        quick = [
            Config(oracle, 3, "wshape", smoothing_radius=alpha),
            Config(oracle, 1, "abs", K=2, M=3, tree_size=2, B1=3, B2=1, directions=(3, 2), smoothing_radius=alpha,
                   privacy="none", lipschitz_factor=0.6, enforce=True, restart=True),
            Config(oracle, 3, "wshape", tree_size=4, smoothing_radius=alpha, lipschitz_factor=0.05, hardening=True),
        ]
        full = [
            Config(oracle, 5, profile, K=3, M=5, tree_size=4, B1=5, B2=2, directions=3, smoothing_radius=alpha)
            for profile in ("abs", "capped", "wshape")
        ] + [
            Config(oracle, 2, "wshape", K=2, M=8, tree_size=8, B1=3, B2=1, smoothing_radius=alpha, step_size=2.0,
                   step_bound=0.05, lipschitz_factor=0.1, hardening=True),
            Config(oracle, 4, "capped", K=3, M=4, tree_size=5, smoothing_radius=alpha, privacy="none",
                   lipschitz_factor=0.6, enforce=True),
        ]
    else:
        quick = [
            Config(oracle, 3, "wshape", smoothing_radius=alpha),
            Config(oracle, 1, "abs", K=2, M=3, tree_size=2, directions=3, records=4, smoothing_radius=alpha,
                   privacy="none", lipschitz_factor=None, restart=True),
            Config(oracle, 3, "capped", tree_size=4, smoothing_radius=alpha, lipschitz_factor=0.6, enforce=True),
        ]
        full = [
            Config(oracle, 5, profile, K=3, M=5, tree_size=4, directions=3, records=8, smoothing_radius=alpha)
            for profile in ("abs", "capped", "wshape")
        ] + [
            Config(oracle, 2, "wshape", K=2, M=8, tree_size=8, records=6, smoothing_radius=alpha, step_size=2.0,
                   step_bound=0.05, lipschitz_factor=0.6, enforce=True),
        ]
    return budget.pick(quick=quick, full=quick + full)


def _checker(oracle):
    def check(subject, ctx):
        return _check_configs(subject, ctx, _configs(oracle, ctx.budget))

    return check


# ---------------------------------------------------------------------------------------------------
# Mutants: the reference's oracles and learner driven by Algorithm 2 with one bug


class _ReusedTree:
    """TREE whose output at every second step is the previous step's: a noise draw released twice."""

    def __init__(self, tree):
        self.tree, self.calls, self.last = tree, 0, None

    def __call__(self, tau):
        out = self.tree(tau)
        self.calls += 1
        if self.calls % 2 == 0:
            return self.last
        self.last = out
        return out


class _PeriodlessTree:
    """TREE called with the run's step count on one tree of T leaves: never reset at τ = 1."""

    def __init__(self, tree):
        self.tree, self.calls = tree, 0

    def __call__(self, tau):
        self.calls += 1
        return self.tree(self.calls)


def _oracle_class(oracle, bug):
    """The reference's oracle class for ``oracle`` with one bug (``_mutated_run``)."""
    base = SinglePassOracle if oracle in SINGLE_PASS_ORACLES else MultiPassOracle

    class Bugged(base):
        def _directions(self, t, b, reset):
            directions = super()._directions(t, b, reset)
            increment = not reset
            if bug == "swapped_directions" and increment and directions.ndim == 4:
                return directions[:, ::-1].copy()  # the set of z_(t−1) used at z_t and vice versa
            if bug == "shared_directions" and increment and directions.ndim == 4:
                return directions[:, 0].copy()  # one set at both points (CRN) under the paper's oracle
            if bug == "unshared_directions" and increment and directions.ndim == 3:
                fresh = sample_sphere(Streams(self.seed).generator(KEY, "unshared", t), directions.shape[:-1], self.d)
                return np.stack([directions, fresh], axis=1)  # CRN broken: fresh directions at z_(t−1)
            if bug == "sphere_perturbations":
                rng = Streams(self.seed).generator(KEY, "direction", t)
                # Eq. (17)'s sphere perturbations (erratum nsnc_improved.E8)
                return sample_sphere(rng, directions.shape[:-1], self.d, self.alpha)
            return directions

        def _reset_sum(self, z, rows, directions, counts):
            if bug == "dropped_record":  # the last record evaluated (and counted), its estimate left out
                super()._reset_sum(z, rows[-1:], directions[-1:], [0, 0])
                return super()._reset_sum(z, rows[:-1], directions[:-1], counts)
            return super()._reset_sum(z, rows, directions, counts)

        def _increment_sum(self, z, z_previous, rows, directions, counts):
            if bug == "dropped_record":
                super()._increment_sum(z, z_previous, rows[-1:], directions[-1:], [0, 0])
                return super()._increment_sum(z, z_previous, rows[:-1], directions[:-1], counts)
            return super()._increment_sum(z, z_previous, rows, directions, counts)

        def _noise(self, sigma):
            out = super()._noise(sigma)
            self.noise_calls = getattr(self, "noise_calls", 0) + 1
            if bug == "reused_noise" and self.noise_calls % 2 == 0:
                return self.last_noise  # χ_t = χ_(t−1)
            self.last_noise = out
            return out

        def query(self, k, j, z):
            released = super().query(k, j, z)
            if bug == "builds_on_noiseless":
                self._released = self.noiseless[-1]  # the next increment added to g_t, not to the released g̃_t
            return released

    return Bugged


def _mutated_run(bug: str):
    """A loop implementation of Algorithm 2 from the reference's prepare_run, oracles and learner, with one bug:

    * "swapped_directions": at an increment the direction set of z_(t−1) is used at z_t and vice versa;
    * "shared_directions": the paper's oracle evaluates e' with e's directions (CRN where it must not);
    * "unshared_directions": the CRN oracle evaluates e' with fresh directions (CRN broken);
    * "sphere_perturbations": first order, perturbations on the radius-α sphere, not in the ball (Eq. (17));
    * "dropped_record": each step evaluates all its records but sums all but the last, still dividing by the batch;
    * "reused_noise": every second step releases the previous step's noise again;
    * "tree_not_reset": one tree over all T steps (Algorithm 1 is restarted at τ = 1 of every period);
    * "public_noise": the noise drawn from the PUBLIC seed's ("nsnc_improved", "noise") stream;
    * "builds_on_noiseless": Algorithm 4's increment added to the noiseless g_(t−1), not to the released g̃_(t−1);
    * "swapped_sigmas": Algorithm 4 with σ2 at the resets and σ1 at the increments;
    * "clip_ignored": clip_hardening's clips not applied (the ledger still claims them).
    """

    def implementation(call):
        arguments = call.arguments
        function, data, x0 = arguments.pop("objective"), arguments.pop("data"), arguments.pop("x0")
        oracle, record_path = arguments.pop("oracle"), arguments.pop("record_path")
        prepared = prepare_run(oracle, data, x0, **arguments)
        st = prepared.settings
        K, M, d = st.K, st.block_length, st.d
        public = bug == "public_noise" or prepared.secret is None
        noise_rng = (Streams(prepared.seed) if public else prepared.secret.streams()).generator(KEY, "noise")
        common = dict(oracle=oracle, d=d, block_length=M, smoothing_radius=st.smoothing_radius,
                      step_bound=st.step_bound, directions=st.directions, lipschitz=st.lipschitz,
                      enforce_lipschitz=st.enforce_lipschitz,
                      clip_radii=None if bug == "clip_ignored" else prepared.clip_radii, seed=prepared.seed,
                      noise_rng=noise_rng)
        kind = _oracle_class(oracle, bug)
        if oracle in SINGLE_PASS_ORACLES:
            the = kind(function, prepared.data, prepared.schedule, noise_std=st.noise_stds[0], **common)
            if bug == "reused_noise":
                the.tree = _ReusedTree(the.tree)
            if bug == "tree_not_reset":
                the.tree = _PeriodlessTree(TreeMechanism(d, np.full(st.T, st.noise_stds[0]), noise_rng))
        else:
            the = kind(function, prepared.data, tree_size=st.tree_size, steps=st.T, noise_stds=st.noise_stds,
                       **common)
            if bug == "swapped_sigmas":
                the.noise_stds = the.noise_stds[::-1]
        learner = ClippedOGD(d, st.step_bound, st.step_size, restart_blocks=st.restart_blocks)
        path = o2nc(the, learner, prepared.x0, M, K, rng_public=Streams(prepared.seed).child(KEY),
                    record_path=record_path)
        diagnostics = NonPrivateDiagnostics(np.array(the.noiseless).reshape(K, M, d),
                                            np.array(the.noise).reshape(K, M, d),
                                            np.array(the.nonfinite_counts, dtype=np.int64).reshape(K, M),
                                            np.array(the.clipped_counts, dtype=np.int64).reshape(K, M),
                                            the.evaluations)
        return DPResult(output=path.output, output_index=path.output_index, block_averages=path.epoch_averages,
                        final_iterate=path.final_point, releases=path.oracle_outputs,
                        segment_points=path.segment_points, query_points=path.query_points, iterates=path.iterates,
                        steps=path.steps, ledger=prepared.ledger, diagnostics=diagnostics)

    return implementation


def _releases_in_float32(result, call):
    """A backend that keeps the released sums in float32."""
    return dataclasses.replace(result, releases=np.asarray(result.releases, dtype=np.float32).astype(np.float64))


def _substitute(bug, description):
    return substitute(bug, description, "nsnc_improved", _mutated_run(bug))


FLOAT32 = on_output("float32", "released sums kept in float32", "nsnc_improved", _releases_in_float32)
DROPPED = _substitute("dropped_record", "each step evaluates its records but leaves the last one out of its sum, "
                                        "still dividing by the batch")
REUSED = _substitute("reused_noise", "every second step releases the previous step's noise draw again")
PUBLIC = _substitute("public_noise", "the noise drawn from the public seed's stream")
CLIP_IGNORED = _substitute("clip_ignored", "clip_hardening's per-record clips not applied (the ledger still claims "
                                           "them)")

_STATEMENT = ("On the same public and secret seeds the subject's {what} run has the reference's ledger, public draws "
              "(s_t, the output block), non-finite counts and evaluation count exactly, its clipped counts within "
              "the rounding window, and every step — g_t, {noise}, g̃_t, Δ_(t+1), x_t, z_t, the block averages — equal "
              "to the mpmath reference oracle's exact step at the subject's own points within the float64 one-step "
              "bound.")


SINGLE_PASS_RUN = Claim(
    id="nsnc_improved.backend.single_pass_run",
    paper="nsnc_improved",
    location="Algorithm 2 with Algorithm 3 (and Algorithm 1's tree); clip_hardening; randomness contract",
    statement=_STATEMENT.format(what="nsnc_improved (oracle='single_pass')", noise="TREE(τ)"),
    kind="backend",
    requires=("nsnc_improved",),
    check=_checker("single_pass"),
    mutants=(
        _substitute("swapped_directions", "at an increment the directions of z_(t-1) are used at z_t and vice versa"),
        _substitute("shared_directions", "e' evaluated with e's directions (common random numbers where Algorithm 3 "
                                         "draws independent ones)"),
        DROPPED, REUSED,
        _substitute("tree_not_reset", "one tree over all T steps: TREE is not restarted at τ = 1 of each period"),
        PUBLIC, CLIP_IGNORED, FLOAT32,
    ),
    applies_to_reference=False,
)


SINGLE_PASS_CRN_RUN = Claim(
    id="nsnc_improved.backend.single_pass_crn_run",
    paper="nsnc_improved",
    location="Algorithm 2 with Algorithm 3, common random numbers (not in the paper); randomness contract",
    statement=_STATEMENT.format(what="nsnc_improved (oracle='single_pass_crn')", noise="TREE(τ)"),
    kind="backend",
    requires=("nsnc_improved",),
    check=_checker("single_pass_crn"),
    mutants=(
        _substitute("unshared_directions", "e' evaluated with fresh directions: the common random numbers broken"),
        DROPPED, REUSED, PUBLIC, CLIP_IGNORED, FLOAT32,
    ),
    applies_to_reference=False,
)


FIRST_ORDER_RUN = Claim(
    id="nsnc_improved.backend.first_order_run",
    paper="nsnc_improved",
    location="Algorithm 2 with Algorithm 5 (App. C); nsnc_improved.E8; randomness contract",
    statement=_STATEMENT.format(what="nsnc_improved (oracle='first_order')", noise="TREE(τ)"),
    kind="backend",
    requires=("nsnc_improved",),
    check=_checker("first_order"),
    mutants=(
        _substitute("sphere_perturbations", "perturbations on the radius-α sphere, not in the ball (Eq. (17))"),
        _substitute("swapped_directions", "at an increment the perturbations of z_(t-1) are used at z_t and vice "
                                          "versa"),
        DROPPED, REUSED, CLIP_IGNORED, FLOAT32,
    ),
    applies_to_reference=False,
)


MULTI_PASS_RUN = Claim(
    id="nsnc_improved.backend.multi_pass_run",
    paper="nsnc_improved",
    location="Algorithm 2 with Algorithm 4; randomness contract",
    statement=_STATEMENT.format(what="nsnc_improved (oracle='multi_pass')", noise="χ_t"),
    kind="backend",
    requires=("nsnc_improved",),
    check=_checker("multi_pass"),
    mutants=(
        _substitute("builds_on_noiseless", "the increment added to the noiseless g_(t-1), not to the released "
                                           "g̃_(t-1)"),
        _substitute("swapped_sigmas", "σ2 at the resets and σ1 at the increments"),
        _substitute("swapped_directions", "at an increment the directions of z_(t-1) are used at z_t and vice versa"),
        DROPPED, REUSED, FLOAT32,
    ),
    applies_to_reference=False,
)


MULTI_PASS_FIRST_ORDER_RUN = Claim(
    id="nsnc_improved.backend.multi_pass_first_order_run",
    paper="nsnc_improved",
    location="Algorithm 2 with Algorithm 4 and the estimator of Algorithm 5; randomness contract",
    statement=_STATEMENT.format(what="nsnc_improved (oracle='multi_pass_first_order')", noise="χ_t"),
    kind="backend",
    requires=("nsnc_improved",),
    check=_checker("multi_pass_first_order"),
    mutants=(
        _substitute("builds_on_noiseless", "the increment added to the noiseless g_(t-1), not to the released "
                                           "g̃_(t-1)"),
        _substitute("sphere_perturbations", "perturbations on the radius-α sphere, not in the ball (Eq. (17))"),
        DROPPED, REUSED, FLOAT32,
    ),
    applies_to_reference=False,
)
