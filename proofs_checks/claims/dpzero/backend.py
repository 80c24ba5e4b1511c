"""dpzero Algorithm 2 (DPZero), Algorithm 1 (DPGD-0th), §2.1 (DP-GD), §5 (MeZO) and Algorithm 2 line 4 (the
per-sample finite differences a_i): backend claims — a subject agrees with the reference draw for draw
(docs/design.md, Precision and Randomness contract).

For each configuration (direction law, clip target, batching with each of its accountants — the
reproduction mode's warning silenced — or no noise) on small problems from ``reference.objectives``
(``EffectiveRankQuadratic``, ``RidgeSum``), the subject and the reference run on the same seeds and:

* exact: the output index τ, every field of the ledger (plan, switches, public seed, the secret seed's source
  and guarantee condition) and of the non-private diagnostics (clip counts, batch sizes, evaluation and
  non-finite counts), the trajectory's structure (x_0 = x0, output = x_τ, final = x_T);
* float64: every step of the subject is compared with the EXACT step taken from the subject's own
  previous iterate — the same u_t (mpmath-normalised from the public draws), z_t, batch (re-derived
  from the randomness contract), loss evaluated in mpmath at 40 digits. This one-step (local) check needs
  no propagation through T steps, whose amplification Π_t (1 + α‖u_t‖G/λ) would make any a-priori
  end-to-end bound either vacuous or problem-specific; a float64 implementation of the algorithm is
  exactly one whose every step is the exact step up to its own rounding.

The one-step bound (Higham's standard model, u = 2⁻⁵³, γ_k = ku/(1 − ku), first order, doubled by
SAFETY = 2 for the dropped second-order terms). For a sample ξ and point p = x ± λu:
  |Δu_j| ≤ γ_{d+5}|u_j| (√d·g/‖g‖ in float64; Gaussian directions are exact),
  |Δp_j| ≤ λ|Δu_j| + u(|x_j| + 2λ|u_j|),
  |Δf| ≤ G(p)‖Δp‖₂ + ρ(p, ξ), with G the local gradient norm (‖A(p − z)‖₂ + ‖Δp‖₂ for the
      quadratic, L for the ridge) and ρ the evaluation error: γ_{d+5}·½Σ_j A_j(|p_j| + |z_j|)² (quadratic),
      L·γ_{d+4}(Σ_j|a_j p_j| + |c| + τ) (ridge);
  |Δa| ≤ (|Δf₊| + |Δf₋|)/(2λ) + 2u|a|; raw difference: 2λ|Δa| + u|2λa|; clipping is 1-Lipschitz;
  a sum of k clipped terms in any order: Σ|Δc_i| + γ_k Σ|c_i|; /N: + u|m|; + σz: + u|σz| + u|ŝ|;
  raw: /(2λ): + u|ŝ/(2λ)|; x − (αŝ)u: α|Δŝ||u_j| + α|ŝ||Δu_j| + 2uα|ŝu_j| + u|x'_j|.
Vector releases (Alg 1, DP-GD) in ℓ2: ‖Δg_i‖ ≤ |Δa_i|‖u‖ + |a_i|‖Δu‖ + u|a_i|‖u‖ (Alg 1) or
γ_3‖A(|x| + |z|)‖₂ (a quadratic's gradient); vector clipping (projection, 1-Lipschitz) adds γ_{d+6}‖c_i‖.
Clip counts must lie between the counts of samples clipped for every value within that error and those
clipped for some. The mutants (noise from the wrong stream, τ = T − 1, the realised batch size as
normaliser, float32 drift or storage, ignored switches) move a step by 1e-8 or far more; the bounds are
~1e-15 relative.

The per-sample finite differences (last claim) are compared with the mpmath reference on the same
direction and data, within the forward error bound of (f(x + λu) − f(x − λu))/(2λ) on a ridge loss.

These claims do not apply to the reference itself (it is the oracle).
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import mpmath
import numpy as np

from proofs_checks.authoring import (
    Claim,
    FAIL,
    UNIT_ROUNDOFF,
    agreement,
    combine,
    deterministic,
    mp_to_float,
    on_output,
    rebind,
    reference_subject,
    rounding_gamma,
    same_value,
    substitute,
)
from reference.algorithms.dpzero import (
    DPResult,
    Ledger,
    NonPrivateDiagnostics,
    ReproductionModeWarning,
    direction_for_step,
)
from reference.objectives import EffectiveRankQuadratic, RidgeSum
from reference.precision import to_mp, working_precision
from reference.rng import Streams
from reference.secrets import SecretSeed, secret_seed

from ._contract import contract_batches

SAFETY = 2.0
DPS = 40
EPSILON, DELTA = 4.0, 1e-5
LEDGER_FIELDS = ("algorithm", "steps", "plan", "direction", "clip_target", "batching", "seed", "secret_seed_source",
                 "guarantee_condition")
#: Fields of ``DPResult.diagnostics`` (computed on the private data: compared, never published).
DIAGNOSTIC_FIELDS = ("clip_counts", "batch_sizes", "loss_evaluations", "gradient_evaluations", "nonfinite_counts")
PER_STEP_FIELDS = ("clip_counts", "batch_sizes", "nonfinite_counts")


# ---------------------------------------------------------------------------------------------------
# Problems and configurations


@dataclasses.dataclass(frozen=True)
class Config:
    """One run: algorithm, problem (objective kind, d, n, T) and the variant switches."""

    algorithm: str  # dpzero | dpgd_zeroth_order | dpgd | mezo
    objective: str  # quadratic | ridge
    d: int
    n: int
    steps: int
    direction: str = "sphere"
    clip_target: str = "normalized"
    batching: str = "full"
    batch_size: int | None = None
    accountant: str | None = None
    private: bool = True
    separate_noise_seed: bool = False  # for a run without noise (a private run always has its own secret seed)
    perturbation: float = 0.1
    sampling_probability: float | None = None  # Poisson q given explicitly (add/remove); None: q = B/n

    @property
    def label(self) -> str:
        noise = self.accountant if self.private else "no noise"
        rate = "" if self.sampling_probability is None else f", q={self.sampling_probability:g}"
        return (f"{self.algorithm} {self.objective} d={self.d} n={self.n} T={self.steps} {self.direction} "
                f"{self.clip_target} {self.batching}(B={self.batch_size}{rate}) {noise}")


def _problem(ctx, config: Config):
    rng = ctx.generator("problem", config.label)
    if config.objective == "quadratic":
        objective = EffectiveRankQuadratic(config.d, config.n, "sqrt", rng)
    else:
        objective = RidgeSum.random(config.d, config.n, rng, lipschitz=1.3, profile="wshape", tau=0.6)
    x0 = rng.normal(0.0, 1.0, config.d)
    seed = int(rng.integers(2**31))
    # the secret seed: never the public one (drawn from a disjoint range), explicit so that both runs share it
    separate = config.separate_noise_seed or (config.private and config.algorithm != "mezo")
    noise_seed = int(rng.integers(2**31, 2**32)) if separate else None
    return objective, x0, seed, noise_seed


def _clip(config: Config) -> float:
    """C at which some samples clip (a_i is O(1) here); C' = 2λC on the raw difference f+ − f−."""
    base = 1.0 if config.objective == "quadratic" else 0.8
    return 2 * config.perturbation * base if config.clip_target == "raw_difference" else base


def trace_square_norm(x):
    """The trace recorded by every run: ‖x‖² of x (d,) or of each row of (..., d)."""
    x = np.asarray(x, dtype=np.float64)
    return np.sum(x * x, axis=-1)


def _kwargs(config: Config, objective, seed, noise_seed, *, seed_arg=None, noise_arg=None):
    kwargs = dict(steps=config.steps, step_size=0.05 if config.objective == "quadratic" else 0.1,
                  seed=seed if seed_arg is None else seed_arg, batching=config.batching,
                  batch_size=config.batch_size, record_trajectory=True, trace=trace_square_norm)
    if config.sampling_probability is not None:
        kwargs["sampling_probability"] = config.sampling_probability
    if config.algorithm != "dpgd":
        kwargs.update(perturbation=config.perturbation, direction=config.direction)
    if config.algorithm == "dpzero":
        kwargs["clip_target"] = config.clip_target
    kwargs["clip_threshold"] = _clip(config)
    if config.algorithm != "mezo":
        kwargs["noise_seed"] = noise_seed if noise_arg is None else noise_arg
        if config.private:
            kwargs.update(epsilon=EPSILON, delta=DELTA, accountant=config.accountant)
        else:
            kwargs["noise"] = "none"
    return kwargs


def _call(implementation, config: Config, objective, x0, kwargs):
    fn = objective.gradient if config.algorithm == "dpgd" else objective.loss
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproductionModeWarning)  # the reproduction mode is run on purpose
        return implementation(fn, objective.data, x0, **kwargs)


# ---------------------------------------------------------------------------------------------------
# The draws of the randomness contract (reference module docstring), re-derived


def _contract_batches(config: Config, noise_seed: int) -> list[np.ndarray]:
    return contract_batches(noise_seed, n=config.n, steps=config.steps, batching=config.batching,
                            batch_size=config.batch_size, sampling_probability=config.sampling_probability)


def _contract_noise(config: Config, noise_seed: int) -> list:
    if not config.private or config.algorithm == "mezo":
        return [0.0] * config.steps
    rng = Streams(noise_seed).generator("dpzero", "noise")
    if config.algorithm == "dpzero":
        return [rng.standard_normal() for _ in range(config.steps)]
    return [rng.standard_normal(config.d) for _ in range(config.steps)]


# ---------------------------------------------------------------------------------------------------
# Exact one-step check


def _mp_abs(v) -> np.ndarray:
    return np.array([float(abs(e)) for e in v])


def _mp_norm(v) -> float:
    return float(mpmath.sqrt(mpmath.fsum(e * e for e in v)))


def _point_error(x, u_abs, du, lam):
    """|Δp_j| for p = fl(x ± fl(λu)): λ|Δu_j| + u(|x_j| + 2λ|u_j|)."""
    return lam * du + UNIT_ROUNDOFF * (np.abs(x) + 2 * lam * u_abs)


def _loss_error(objective, point_mp, row, dp):
    """|fl(f)(p̃) − f(p)| ≤ G‖Δp‖₂ + ρ (module docstring)."""
    p = np.array([float(v) for v in point_mp])
    dp_norm = float(np.linalg.norm(dp))
    d = objective.d
    if isinstance(objective, EffectiveRankQuadratic):
        a = objective.hessian_diagonal
        grad = float(np.linalg.norm(a * (p - row))) + dp_norm
        rho = rounding_gamma(d + 5) * 0.5 * float(np.sum(a * (np.abs(p) + np.abs(row)) ** 2))
        return grad * dp_norm + rho
    direction, offset = row[:d], row[d]
    rho = objective.lipschitz * rounding_gamma(d + 4) * (float(np.sum(np.abs(direction * p))) + abs(offset) + objective.tau)
    return objective.lipschitz * dp_norm + rho


def _gradient_error(objective, x, row):
    a = objective.hessian_diagonal
    return rounding_gamma(3) * float(np.linalg.norm(a * (np.abs(x) + np.abs(row))))


def _direction_error(config: Config, u_mp):
    u_abs = _mp_abs(u_mp)
    return u_abs, (rounding_gamma(config.d + 5) * u_abs if config.direction == "sphere" else np.zeros(config.d))


def _count_window(values, clip, errors):
    """(fewest, most) samples the subject may report clipped: |v| > C for every / for some value within error."""
    if math.isinf(clip):
        return 0, 0
    surely = sum(1 for v, e in zip(values, errors) if v > clip + e)
    maybe = sum(1 for v, e in zip(values, errors) if v > clip - e)
    return surely, maybe


def _exact_step(config, objective, x, u_mp, batch, z, sigma, step_size):
    """The exact step from x (float64, converted exactly): (release, x', release bound, x' bound, count window).

    Scalar release: bounds are per entry of x' (array) and absolute for ŝ; vector releases: ℓ2 bounds.
    """
    data = objective.data
    lam = mpmath.mpf(config.perturbation)
    clip = _clip(config)
    clip_mp = mpmath.mpf(clip) if math.isfinite(clip) else mpmath.inf
    normaliser = config.n if config.batching == "full" else config.batch_size
    x_mp = to_mp(x)
    alpha = mpmath.mpf(step_size)
    u = UNIT_ROUNDOFF
    vector = config.algorithm in ("dpgd_zeroth_order", "dpgd")
    if config.algorithm != "dpgd":
        u_abs, du = _direction_error(config, u_mp)
    terms, term_errors, magnitudes, errors = [], [], [], []
    for i in batch:
        row = data[i]
        if config.algorithm == "dpgd":
            g = objective.gradient(x_mp, row)
            g_error = _gradient_error(objective, x, row)
        else:
            plus, minus = x_mp + lam * u_mp, x_mp - lam * u_mp
            dp = _point_error(x, u_abs, du, float(lam))
            a = (objective.loss(plus, row) - objective.loss(minus, row)) / (2 * lam)
            f_error = _loss_error(objective, plus, row, dp) + _loss_error(objective, minus, row, dp)
            a_error = f_error / (2 * float(lam)) + 2 * u * abs(float(a))
            if config.algorithm in ("dpzero", "mezo"):
                if config.clip_target == "raw_difference":
                    a = 2 * lam * a
                    a_error = 2 * float(lam) * a_error + u * abs(float(a))
                terms.append(max(-clip_mp, min(clip_mp, a)))
                term_errors.append(a_error)
                magnitudes.append(abs(float(a)))
                errors.append(a_error)
                continue
            g = np.array([a * v for v in u_mp], dtype=object)
            u_norm = float(np.linalg.norm(u_abs))
            g_error = a_error * u_norm + abs(float(a)) * float(np.linalg.norm(du)) + u * abs(float(a)) * u_norm
        g_norm = mpmath.sqrt(mpmath.fsum(v * v for v in g))
        scale = 1 if g_norm <= clip_mp else clip_mp / g_norm
        c = np.array([v * scale for v in g], dtype=object)
        c_norm = float(min(g_norm, clip_mp))
        terms.append(c)
        term_errors.append(g_error + rounding_gamma(config.d + 6) * c_norm)
        magnitudes.append(float(g_norm))
        errors.append(g_error + rounding_gamma(config.d + 6) * (clip if math.isfinite(clip) else 0.0))
    k = len(batch)
    if vector:
        total = np.array([mpmath.fsum(c[j] for c in terms) for j in range(config.d)], dtype=object) if k else \
            np.array([mpmath.mpf(0)] * config.d, dtype=object)
        total_error = sum(term_errors) + rounding_gamma(k) * sum(_mp_norm(c) for c in terms)
        mean = total / normaliser
        z_vector = np.array(np.broadcast_to(np.asarray(z, dtype=np.float64), (config.d,)))  # 0.0 when not private
        noise = to_mp(z_vector) * mpmath.mpf(sigma)
        release = mean + noise
        mean_norm, noise_norm, release_norm = _mp_norm(mean), _mp_norm(noise), _mp_norm(release)
        release_error = total_error / normaliser + u * mean_norm + u * noise_norm + u * release_norm
        x_next = x_mp - alpha * release
        x_error = float(alpha) * release_error + u * float(alpha) * release_norm + u * _mp_norm(x_next)
        return release, x_next, SAFETY * release_error, SAFETY * x_error, _count_window(magnitudes, clip, errors)
    total = mpmath.fsum(terms)
    total_error = sum(term_errors) + rounding_gamma(k) * sum(abs(float(c)) for c in terms)
    mean = total / normaliser
    noise = mpmath.mpf(sigma) * mpmath.mpf(float(z))
    s_hat = mean + noise
    s_error = total_error / normaliser + u * abs(float(mean)) + u * abs(float(noise)) + u * abs(float(s_hat))
    if config.clip_target == "raw_difference":
        s_hat = s_hat / (2 * lam)
        s_error = s_error / (2 * float(lam)) + u * abs(float(s_hat))
    x_next = x_mp - alpha * s_hat * u_mp
    s_abs = abs(float(s_hat))
    x_error = (float(alpha) * s_error * u_abs + float(alpha) * s_abs * du + 2 * u * float(alpha) * s_abs * u_abs
               + u * _mp_abs(x_next))
    return s_hat, x_next, SAFETY * s_error, SAFETY * x_error, _count_window(magnitudes, clip, errors)


def _check_steps(config, objective, run, seed, noise_seed, sigma, step_size):
    """The worst (error / bound) over the steps of one run, with the first violation described."""
    batches = _contract_batches(config, noise_seed if noise_seed is not None else seed)
    noise = _contract_noise(config, noise_seed if noise_seed is not None else seed)
    worst, worst_detail = 0.0, ""
    with working_precision(DPS):
        for t in range(config.steps):
            u_mp = None if config.algorithm == "dpgd" else direction_for_step(seed, t, config.d, config.direction,
                                                                                arithmetic="mpmath")
            release, x_next, release_bound, x_bound, (fewest, most) = _exact_step(
                config, objective, run.trajectory[t], u_mp, batches[t], noise[t], sigma, step_size)
            count = int(run.clip_counts[t])
            if not fewest <= count <= most:
                return False, math.inf, f"step {t}: clip count {count} outside the exact window [{fewest}, {most}]"
            got_release, got_x = run.releases[t], run.trajectory[t + 1]
            if np.ndim(release) == 0:
                release_gap = abs(float(mpmath.mpf(float(got_release)) - release))
                x_gap = np.array([abs(float(mpmath.mpf(float(g)) - e)) for g, e in zip(got_x, x_next)])
                ratios = [release_gap / release_bound if release_bound else (math.inf if release_gap else 0.0),
                          float(np.max(np.where(x_gap == 0, 0.0, x_gap / np.where(x_bound > 0, x_bound, 1e-300))))]
            else:
                release_gap = _mp_norm(to_mp(np.asarray(got_release, dtype=np.float64)) - release)
                x_gap = _mp_norm(to_mp(np.asarray(got_x, dtype=np.float64)) - x_next)
                ratios = [release_gap / release_bound if release_bound else (math.inf if release_gap else 0.0),
                          x_gap / x_bound if x_bound else (math.inf if x_gap else 0.0)]
            ratio = max(ratios)
            if not np.isfinite(ratio) or ratio > worst:
                worst = ratio if np.isfinite(ratio) else math.inf
                worst_detail = f"step {t}: release gap / bound {ratios[0]:.3g}, iterate gap / bound {ratios[1]:.3g}"
            if not ratio <= 1.0:
                return False, worst, worst_detail
    return True, worst, worst_detail


# ---------------------------------------------------------------------------------------------------
# Comparing one subject run (or one replicate of a batched run) with the reference run


@dataclasses.dataclass
class RunView:
    """The fields of one run, from a single run or from replicate r of a batched one."""

    output: np.ndarray
    output_index: int
    final_iterate: np.ndarray
    trajectory: np.ndarray
    trace: np.ndarray
    releases: np.ndarray
    ledger: dict

    @property
    def clip_counts(self):
        return self.ledger["clip_counts"]

    @staticmethod
    def _fields(result):
        """(owner, name) of every compared field: the public ledger's and the non-private diagnostics'."""
        return [(result.ledger, name) for name in LEDGER_FIELDS] + \
            [(result.diagnostics, name) for name in DIAGNOSTIC_FIELDS]

    @classmethod
    def single(cls, result):
        ledger = {name: getattr(owner, name) for owner, name in cls._fields(result)}
        return cls(np.asarray(result.output), result.output_index, np.asarray(result.final_iterate),
                   np.asarray(result.trajectory), np.asarray(result.trace), np.asarray(result.releases), ledger)

    @classmethod
    def replicate(cls, result, r: int):
        ledger = {}
        for owner, name in cls._fields(result):
            value = getattr(owner, name)
            if name in PER_STEP_FIELDS:
                value = tuple(int(v) for v in np.asarray(value)[r])
            elif name in ("loss_evaluations", "gradient_evaluations", "seed"):  # (R,): a seed may exceed int64
                value = int(value[r]) if np.ndim(value) else int(value)
            ledger[name] = value
        return cls(np.asarray(result.output)[r], int(np.asarray(result.output_index)[r]),
                   np.asarray(result.final_iterate)[r], np.asarray(result.trajectory)[r], np.asarray(result.trace)[r],
                   np.asarray(result.releases)[r], ledger)


def _compare(config, objective, x0, seed, noise_seed, run: RunView, reference, label) -> list:
    parts = []
    d, steps = config.d, config.steps
    vector = config.algorithm in ("dpgd_zeroth_order", "dpgd")
    shapes = {"output": (d,), "final_iterate": (d,), "trajectory": (steps + 1, d), "trace": (steps + 1,),
              "releases": (steps, d) if vector else (steps,)}
    for name, shape in shapes.items():
        value = getattr(run, name)
        if value.shape != shape or not np.all(np.isfinite(value)):
            return [deterministic(False, detail=f"{label}: {name} has shape {value.shape} (want {shape}) "
                                                "or non-finite values")]
    tau = int(reference.output_index)
    if int(run.output_index) != tau:
        return [deterministic(False, detail=f"{label}: output index {run.output_index} != reference {tau}")]
    for owner, name in RunView._fields(reference):
        if not same_value(run.ledger[name], getattr(owner, name)):
            where = "ledger" if name in LEDGER_FIELDS else "diagnostics"
            return [deterministic(False, detail=f"{label}: {where}.{name} {run.ledger[name]!r} != reference "
                                                f"{getattr(owner, name)!r}")]
    structure = (np.array_equal(run.trajectory[0], x0) and np.array_equal(run.output, run.trajectory[tau])
                 and np.array_equal(run.final_iterate, run.trajectory[steps]))
    if not structure:
        return [deterministic(False, detail=f"{label}: x_0 != x0, output != x_tau or final != x_T")]
    exact_trace = np.array([float(mpmath.fsum(mpmath.mpf(float(v)) ** 2 for v in x)) for x in run.trajectory])
    trace_gap = float(np.max(np.abs(run.trace - exact_trace)))
    trace_bound = SAFETY * rounding_gamma(d + 1) * float(np.max(exact_trace))
    parts.append(deterministic(trace_gap <= trace_bound, statistic=trace_gap, bound=trace_bound,
                               detail=f"{label}: trace vs ‖x_t‖²"))
    sigma = 0.0 if reference.ledger.plan is None else float(reference.ledger.plan.noise_std)
    step_size = 0.05 if config.objective == "quadratic" else 0.1
    ok, worst, detail = _check_steps(config, objective, run, seed, noise_seed, sigma, step_size)
    parts.append(deterministic(ok, statistic=worst, bound=1.0,
                               detail=f"{label}: worst one-step gap / float64 bound; {detail}"))
    return parts


def _check_configs(subject, ctx, configs):
    ref = reference_subject()
    parts = []
    for config in configs:
        objective, x0, seed, noise_seed = _problem(ctx, config)
        kwargs = _kwargs(config, objective, seed, noise_seed)
        got = _call(getattr(subject, config.algorithm), config, objective, x0, kwargs)
        want = _call(getattr(ref, config.algorithm), config, objective, x0, kwargs)
        parts.extend(_compare(config, objective, x0, seed, noise_seed, RunView.single(got), want, config.label))
        if any(p.verdict == FAIL for p in parts):
            break
    return combine(parts, ctx)


# ---------------------------------------------------------------------------------------------------
# Configurations per algorithm (quick: each switch at least once; full: the products)

_PRIVATE = (("full", None, "lemma22"), ("full", None, "gdp_exact"), ("full", None, "drv_advanced"),
            ("poisson", 3, "rdp_opacus"),
            ("shuffle", 4, "gdp_participation"), ("shuffle", 5, "poisson_rdp_for_shuffling"))
_FULL_ONLY = (("poisson", 4, "rdp"),)  # its calibration costs seconds
_NONE = (("full", None), ("poisson", 4), ("shuffle", 3))


# --- Algorithm 2: DPZero runs agree with the reference ---------------------------------------------------

def _dpzero_configs(budget):
    quick = [
        Config("dpzero", "quadratic", 3, 10, 6, "sphere", "normalized", "full", None, "lemma22",
               separate_noise_seed=True),
        Config("dpzero", "ridge", 6, 12, 8, "gaussian", "raw_difference", "full", None, "gdp_exact", perturbation=1e-3),
        Config("dpzero", "quadratic", 1, 8, 8, "sphere", "raw_difference", "poisson", 3, "rdp_opacus",
               separate_noise_seed=True),
        Config("dpzero", "ridge", 4, 12, 8, "gaussian", "normalized", "shuffle", 4, "gdp_participation"),
        Config("dpzero", "quadratic", 4, 12, 8, "sphere", "normalized", "shuffle", 5, "poisson_rdp_for_shuffling"),
        Config("dpzero", "ridge", 3, 9, 7, "sphere", "normalized", "poisson", 4, None, private=False),
        Config("dpzero", "quadratic", 3, 9, 6, "gaussian", "normalized", "poisson", 3, "rdp_opacus",
               separate_noise_seed=True, sampling_probability=0.4),
        Config("dpzero", "quadratic", 2, 6, 5, "gaussian", "raw_difference", "full", None, None, private=False),
    ]
    full = []
    for objective, d in (("quadratic", 5), ("ridge", 6)):
        for direction in ("sphere", "gaussian"):
            for clip_target in ("normalized", "raw_difference"):
                for batching, batch, accountant in _PRIVATE + _FULL_ONLY:
                    full.append(Config("dpzero", objective, d, 12, 8, direction, clip_target, batching, batch,
                                       accountant, separate_noise_seed=True))
                for batching, batch in _NONE:
                    full.append(Config("dpzero", objective, d, 12, 8, direction, clip_target, batching, batch, None,
                                       private=False))
    return budget.pick(quick=quick, full=quick + full)


def _check_dpzero(subject, ctx):
    return _check_configs(subject, ctx, _dpzero_configs(ctx.budget))


def _naive_dpzero(bug: str):
    """A loop implementation of Alg 2 (single runs) with one bug, as a ``substitute`` implementation:

    * "direction_noise": z_t drawn from the direction stream right after u_t (the public code, dpzero.E13);
    * "realised_normaliser": Poisson batches averaged over |B_t| instead of the fixed B;
    * "float32_drift": x kept in float32 and perturbed in place, x += λu; x −= 2λu; x += λu.
    """

    def dpzero(call):
        ref = reference_subject()
        loss, data, seed, steps, direction = call.loss, call.data, call.seed, call.steps, call.direction
        clip_threshold, clip_target, batching, batch_size = (call.clip_threshold, call.clip_target, call.batching,
                                                             call.batch_size)
        private = call.noise == "gaussian"
        hidden = None if call.noise_seed is None and not private else secret_seed(call.noise_seed, public_seeds=(seed,))
        secret = seed if hidden is None else hidden.entropy
        n, d = data.shape[0], len(call.x0)
        plan = ref.privacy_plan(clip_threshold=clip_threshold, n=n, steps=steps, epsilon=call.epsilon,
                                delta=call.delta, batching=batching, batch_size=batch_size,
                                accountant=call.accountant,
                                sampling_probability=call.sampling_probability) if private else None
        config = Config("dpzero", "quadratic", d, n, steps, direction, clip_target, batching, batch_size,
                        call.accountant, private, sampling_probability=call.sampling_probability)
        batches = _contract_batches(config, secret)
        noise_rng = Streams(secret).generator("dpzero", "noise")
        lam = float(call.perturbation)
        x = np.array(call.x0, dtype=np.float32 if bug == "float32_drift" else np.float64)
        iterates, releases, counts, sizes = [x.astype(np.float64)], [], [], []
        for t, batch in enumerate(batches):
            u = direction_for_step(seed, t, d, direction)
            a = []
            for i in batch:
                if bug == "float32_drift":
                    x += (lam * u).astype(np.float32)
                    f_plus = loss(x.astype(np.float64), data[i])
                    x -= (2 * lam * u).astype(np.float32)
                    f_minus = loss(x.astype(np.float64), data[i])
                    x += (lam * u).astype(np.float32)
                else:
                    f_plus, f_minus = loss(x + lam * u, data[i]), loss(x - lam * u, data[i])
                a.append((f_plus - f_minus) / (2 * lam))
            a = np.array(a, dtype=np.float64)
            if clip_target == "raw_difference":
                a = 2 * lam * a
            counts.append(int(np.sum(np.abs(a) > clip_threshold)))
            sizes.append(len(batch))
            normaliser = n if batching == "full" else batch_size
            if bug == "realised_normaliser" and batching == "poisson":
                normaliser = max(len(batch), 1)
            s_hat = float(np.sum(np.clip(a, -clip_threshold, clip_threshold))) / normaliser
            if private:
                if bug == "direction_noise":
                    rng = Streams(seed).generator("dpzero", "direction", t)
                    rng.standard_normal(d)  # the direction's draw, then the "noise"
                    z = rng.standard_normal()
                else:
                    z = noise_rng.standard_normal()
                s_hat += float(plan.noise_std) * z
            if clip_target == "raw_difference":
                s_hat /= 2 * lam
            releases.append(s_hat)
            x = x - (call.step_size * s_hat * u).astype(x.dtype)
            iterates.append(x.astype(np.float64))
        tau = int(Streams(seed).generator("dpzero", "output").integers(steps))
        ledger = Ledger("dpzero" if private else "mezo", steps, plan, direction, clip_target, batching, seed,
                        hidden.source if private else None, hidden.guarantee_condition if private else None)
        diagnostics = NonPrivateDiagnostics(tuple(counts), tuple(sizes), 2 * sum(sizes), 0, (0,) * steps)
        trajectory = np.array(iterates)
        return DPResult(trajectory[tau].copy(), tau, trajectory[-1].copy(),
                        trajectory if call.record_trajectory else None,
                        None if call.trace is None else np.array([float(call.trace(v)) for v in trajectory]),
                        np.array(releases), ledger, diagnostics)

    return dpzero


def _last_iterate(call):
    """Outputs x_{T−1} (τ = T − 1) instead of x_τ for the drawn τ."""
    result = call.original(record_trajectory=True)
    steps = call.steps
    return dataclasses.replace(result, output=result.trajectory[..., steps - 1, :].copy(),
                               output_index=steps - 1 if np.ndim(result.output_index) == 0
                               else np.full(np.shape(result.output_index), steps - 1),
                               trajectory=result.trajectory if call.record_trajectory else None)


DPZERO = Claim(
    id="dpzero.backend.dpzero",
    paper="dpzero",
    location="Algorithm 2; §5 (experiment variants and accountants); dpzero.E7",
    statement="On the same seeds the subject's DPZero run (sphere/Gaussian directions, normalized/raw-difference "
              "clipping, full/Poisson/shuffled batches with each accountant, or no noise) has the reference's output "
              "index, ledger and diagnostics exactly, and each of its steps is the exact step from its previous "
              "iterate within the float64 one-step error bound.",
    kind="backend",
    requires=("dpzero",),
    check=_check_dpzero,
    mutants=(
        substitute("direction_noise", "z_t drawn from the public direction stream after u_t (dpzero.E13)", "dpzero",
                   _naive_dpzero("direction_noise")),
        substitute("last_iterate", "outputs x_{T-1} instead of x_tau", "dpzero", _last_iterate),
        substitute("realised_normaliser", "Poisson mean divided by |B_t| instead of B", "dpzero",
                   _naive_dpzero("realised_normaliser")),
        substitute("float32_drift", "x kept in float32, perturbed in place (x += lam u; x -= 2 lam u; x += lam u)",
                   "dpzero", _naive_dpzero("float32_drift")),
    ),
    applies_to_reference=False,
)


# --- Algorithm 1: DPGD-0th runs agree with the reference -------------------------------------------------

def _dpgd_zeroth_order_configs(budget):
    quick = [
        Config("dpgd_zeroth_order", "quadratic", 3, 10, 6, "sphere", batching="full", accountant="gdp_exact",
               separate_noise_seed=True),
        Config("dpgd_zeroth_order", "ridge", 5, 12, 8, "gaussian", batching="poisson", batch_size=4,
               accountant="rdp_opacus", separate_noise_seed=True),
        Config("dpgd_zeroth_order", "quadratic", 1, 8, 6, "gaussian", batching="shuffle", batch_size=3,
               accountant="poisson_rdp_for_shuffling", separate_noise_seed=True),
        Config("dpgd_zeroth_order", "ridge", 2, 7, 5, "sphere", batching="shuffle", batch_size=2,
               accountant=None, private=False),
    ]
    full = [Config("dpgd_zeroth_order", objective, d, 12, 8, direction, batching=b, batch_size=s, accountant=a,
                   separate_noise_seed=True)
            for objective, d in (("quadratic", 4), ("ridge", 6)) for direction in ("sphere", "gaussian")
            for b, s, a in _PRIVATE + _FULL_ONLY]
    full += [Config("dpgd_zeroth_order", "ridge", 3, 12, 8, direction, batching=b, batch_size=s, private=False)
             for direction in ("sphere", "gaussian") for b, s in _NONE]
    return budget.pick(quick=quick, full=quick + full)


def _check_dpgd_zeroth_order(subject, ctx):
    return _check_configs(subject, ctx, _dpgd_zeroth_order_configs(ctx.budget))


def _float32_storage(result, call):
    """Iterates, releases and output stored in float32."""

    def f32(v):
        return None if v is None else np.asarray(v, dtype=np.float32).astype(np.float64)

    return dataclasses.replace(result, output=f32(result.output), final_iterate=f32(result.final_iterate),
                               trajectory=f32(result.trajectory), releases=f32(result.releases))


DPGD_ZEROTH_ORDER = Claim(
    id="dpzero.backend.dpgd_zeroth_order",
    paper="dpzero",
    location="Algorithm 1 (DPGD-0th)",
    statement="On the same seeds the subject's DPGD-0th run has the reference's output index, ledger and diagnostics "
              "exactly, and each step (vector clipping of a_i u_t, d-dimensional noise) is the exact step within the "
              "float64 one-step bound.",
    kind="backend",
    requires=("dpgd_zeroth_order",),
    check=_check_dpgd_zeroth_order,
    mutants=(
        # the caller's secret seed dropped: the noise is not the one of the secret seed passed
        rebind("noise_seed_ignored", "the given secret noise seed ignored", "dpgd_zeroth_order", noise_seed=None),
        on_output("float32", "iterates and releases stored in float32", "dpgd_zeroth_order", _float32_storage),
    ),
    applies_to_reference=False,
)


# --- §2.1: first-order DP-GD runs agree with the reference -----------------------------------------------

def _dpgd_configs(budget):
    quick = [
        Config("dpgd", "quadratic", 3, 10, 6, batching="full", accountant="lemma22", separate_noise_seed=True),
        Config("dpgd", "quadratic", 5, 12, 8, batching="poisson", batch_size=4, accountant="rdp_opacus",
               separate_noise_seed=True),
        Config("dpgd", "quadratic", 1, 9, 7, batching="shuffle", batch_size=3, accountant="gdp_participation",
               separate_noise_seed=True),
        Config("dpgd", "quadratic", 2, 6, 5, batching="poisson", batch_size=2, private=False),
    ]
    full = [Config("dpgd", "quadratic", 6, 12, 8, batching=b, batch_size=s, accountant=a, separate_noise_seed=True)
            for b, s, a in _PRIVATE + _FULL_ONLY]
    full += [Config("dpgd", "quadratic", 4, 12, 8, batching=b, batch_size=s, private=False) for b, s in _NONE]
    return budget.pick(quick=quick, full=quick + full)


def _check_dpgd(subject, ctx):
    return _check_configs(subject, ctx, _dpgd_configs(ctx.budget))


DPGD = Claim(
    id="dpzero.backend.dpgd",
    paper="dpzero",
    location="§2.1 (first-order DP-GD)",
    statement="On the same seeds the subject's DP-GD run has the reference's output index, ledger and diagnostics "
              "exactly, and each step is the exact clipped-gradient step within the float64 one-step bound.",
    kind="backend",
    requires=("dpgd",),
    check=_check_dpgd,
    mutants=(
        rebind("noise_seed_ignored", "the given secret noise seed ignored", "dpgd", noise_seed=None),
        substitute("last_iterate", "outputs x_{T-1} instead of x_tau", "dpgd", _last_iterate),
    ),
    applies_to_reference=False,
)


# --- §5, App. B.2: MeZO runs agree with the reference ----------------------------------------------------

def _mezo_configs(budget):
    quick = [
        Config("mezo", "quadratic", 3, 10, 6, "gaussian", batching="full", private=False),
        Config("mezo", "ridge", 4, 12, 8, "gaussian", batching="poisson", batch_size=4, private=False),
        Config("mezo", "ridge", 3, 10, 6, "gaussian", batching="poisson", batch_size=4, private=False,
               sampling_probability=0.25),
        Config("mezo", "quadratic", 2, 9, 7, "sphere", batching="shuffle", batch_size=3, private=False),
    ]
    full = [Config("mezo", objective, d, 12, 8, direction, batching=b, batch_size=s, private=False)
            for objective, d in (("quadratic", 5), ("ridge", 6)) for direction in ("sphere", "gaussian")
            for b, s in _NONE]
    return budget.pick(quick=quick, full=quick + full)


def _check_mezo(subject, ctx):
    return _check_configs(subject, ctx, _mezo_configs(ctx.budget))


MEZO = Claim(
    id="dpzero.backend.mezo",
    paper="dpzero",
    location="§5 (MeZO), App. B.2 (MeZO with clipping); dpzero.E8",
    statement="On the same seed the subject's MeZO run (Gaussian or sphere directions, with clipping) has the "
              "reference's output index, ledger and diagnostics exactly, and each step is the exact step within the "
              "float64 bound.",
    kind="backend",
    requires=("mezo",),
    check=_check_mezo,
    mutants=(
        rebind("sphere_directions", "ignores direction: always the sqrt(d)-sphere", "mezo", direction="sphere"),
        rebind("clip_ignored", "clip_threshold ignored (plain MeZO)", "mezo", clip_threshold=math.inf),
    ),
    applies_to_reference=False,
)


# --- randomness contract: replicate r of a batched run (seed, noise_seed arrays of length R) is a single run ---

def _replicate_configs(budget):
    """Quick: the noise plan only where it is cheap (lemma22): the plan is the same for every replicate, but
    each reference single run recomputes it."""
    quick = [
        Config("dpzero", "quadratic", 3, 8, 5, "sphere", "raw_difference", "full", None, "lemma22",
               separate_noise_seed=True),
        Config("dpgd_zeroth_order", "ridge", 2, 8, 5, "gaussian", batching="poisson", batch_size=3, private=False),
        Config("dpgd", "quadratic", 2, 7, 4, batching="shuffle", batch_size=2, private=False),
        Config("mezo", "ridge", 3, 8, 5, "gaussian", batching="poisson", batch_size=3, private=False),
    ]
    full = [
        Config("dpzero", "ridge", 4, 10, 7, "gaussian", "normalized", "poisson", 3, "rdp_opacus",
               separate_noise_seed=True),
        Config("dpzero", "quadratic", 2, 10, 7, "sphere", "normalized", "shuffle", 3, "poisson_rdp_for_shuffling",
               separate_noise_seed=True),
        Config("dpgd_zeroth_order", "quadratic", 3, 10, 7, "sphere", batching="shuffle", batch_size=4,
               accountant="gdp_participation", separate_noise_seed=True),
        Config("dpgd", "quadratic", 3, 10, 7, batching="poisson", batch_size=3, accountant="rdp_opacus",
               separate_noise_seed=True),
    ]
    return budget.pick(quick=quick, full=quick + full)


def _check_replicates(subject, ctx):
    """Replicate r of a batched run is the reference's single run with seed[r], noise_seed[r]: with distinct
    public seeds (some repeated), and with one public seed and an array of noise seeds."""
    ref = reference_subject()
    parts = []
    for config in _replicate_configs(ctx.budget):
        objective, x0, seed, _ = _problem(ctx, config)
        rng = ctx.generator("replicates", config.label)
        seeds = np.array([seed, int(rng.integers(2**31)), seed], dtype=np.int64)  # a repeated public seed too
        noise = rng.choice(2**31, size=3, replace=False) + 2**31  # distinct secrets, never a public seed
        layouts = [(seeds, None if config.algorithm == "mezo" else noise)]
        if config.algorithm != "mezo":
            layouts.append((seed, noise))  # shared public seed, fresh secret seeds (the audit layout)
        for seed_arg, noise_arg in layouts:
            kwargs = _kwargs(config, objective, seed, None, seed_arg=seed_arg, noise_arg=noise_arg)
            if config.algorithm == "mezo":
                kwargs.pop("noise_seed", None)
            got = _call(getattr(subject, config.algorithm), config, objective, x0, kwargs)
            replicates = len(noise_arg) if noise_arg is not None else len(seeds)
            for r in range(replicates):
                public = int(seed_arg[r]) if np.ndim(seed_arg) else int(seed_arg)
                secret = None if noise_arg is None else int(noise_arg[r])
                single = _kwargs(config, objective, public, None if config.algorithm == "mezo" else secret)
                want = _call(getattr(ref, config.algorithm), config, objective, x0, single)
                label = f"{config.label} replicate {r} (seed {public}, noise seed {secret})"
                parts.extend(_compare(config, objective, x0, public, secret, RunView.replicate(got, r), want, label))
                if any(p.verdict == FAIL for p in parts):
                    return combine(parts, ctx)
    return combine(parts, ctx)


def _first_noise_seed_for_all(call):
    """Every replicate's secret seed derived from replicate 0's (spawned from it) instead of its own: the
    replicates' noise is not that of the secret seeds given (a subject refuses repeated secret seeds)."""
    noise = call.noise_seed
    if noise is not None and np.ndim(noise):
        first = noise[0] if isinstance(noise[0], SecretSeed) else SecretSeed(int(noise[0]), "user")
        return call.original(noise_seed=list(first.spawn(len(noise))))
    return call.original()


def _replicates_reversed(result, call):
    """The replicate axis of the outputs reversed (results written back in the wrong order)."""
    if np.ndim(result.output_index) == 0:
        return result

    def rev(v):
        return None if v is None else np.asarray(v)[::-1].copy()

    return dataclasses.replace(result, output=rev(result.output), output_index=rev(result.output_index),
                               final_iterate=rev(result.final_iterate), trajectory=rev(result.trajectory),
                               trace=rev(result.trace), releases=rev(result.releases))


REPLICATES = Claim(
    id="dpzero.backend.replicates",
    paper="dpzero",
    location="Algorithm 1, Algorithm 2, DP-GD, MeZO; randomness contract",
    statement="A subject that batches replicates (seed and noise_seed as 1-D arrays of length R, or one public seed "
              "with an array of noise seeds) returns in replicate r the reference's single run with seed[r], "
              "noise_seed[r]: same output index, ledger and diagnostics, every step exact within the float64 "
              "one-step bound.",
    kind="backend",
    requires=("dpzero", "dpgd_zeroth_order", "dpgd", "mezo"),
    check=_check_replicates,
    mutants=(
        substitute("first_noise_seed", "every replicate's secret seed spawned from replicate 0's", "dpzero",
                   _first_noise_seed_for_all),
        on_output("replicates_reversed", "outputs written back in reverse replicate order", "dpgd_zeroth_order",
                  _replicates_reversed),
    ),
    applies_to_reference=False,
)


# --- Algorithm 2 line 4: per-sample finite differences a_i agree with the mpmath reference ------------------

def _fd_error_bound(objective, point_norm, offset, perturbation, fd_magnitude, d):
    """|fl(fd) − fd| for fd = (f(x + h u) − f(x − h u)) / (2h) on a ridge loss L·φ(<a, p> − c)."""
    lipschitz = objective.lipschitz
    evaluation = lipschitz * rounding_gamma(d + 4) * (point_norm + abs(offset))  # <a,p>, − c, φ, × L
    point_rounding = lipschitz * rounding_gamma(2) * point_norm  # p = x ± h u rounded
    return (2 * evaluation + 2 * point_rounding) / (2 * perturbation) + rounding_gamma(3) * fd_magnitude


def _check_finite_differences(subject, ctx):
    ref = reference_subject()
    parts = []
    d, b = 6, 8
    for law in ("scaled_sphere", "gaussian"):
        for h in (1e-2, 1e-4):
            key = f"fd{law}{h}"
            rng = ctx.generator("problem", key)
            objective = RidgeSum.random(d, b, rng, lipschitz=1.7, profile="wshape", tau=0.8, offset_scale=1.5)
            x = rng.normal(0.0, 1.0, d)
            draws = ctx.generator("directions", key)
            direction = (ref.sample_sphere(draws, (), d, math.sqrt(d)) if law == "scaled_sphere"
                         else ref.sample_gaussian(draws, (), d))
            got = subject.per_sample_finite_differences(objective, x, objective.data, direction, h)
            with working_precision(DPS):
                exact = mp_to_float(ref.per_sample_finite_differences(objective, to_mp(x), objective.data,
                                                                       to_mp(direction), h))
            point_norm = float(np.linalg.norm(x)) + h * float(np.linalg.norm(direction))
            bound = SAFETY * max(
                _fd_error_bound(objective, point_norm, c, h, abs(fd), d) for c, fd in zip(objective.data[:, -1], exact)
            )
            parts.append(agreement(f"per-sample fd {law} h={h}", got, exact, bound))
    return combine(parts, ctx)


FINITE_DIFFERENCES = Claim(
    id="dpzero.backend.finite_differences",
    paper="dpzero",
    location="Algorithm 2 line 4 (a_i)",
    statement="The subject's per-sample finite differences equal the mpmath reference within the float64 error bound.",
    kind="backend",
    requires=("per_sample_finite_differences",),
    check=_check_finite_differences,
    mutants=(
        on_output("halved", "divides by 4 lambda instead of 2 lambda", "per_sample_finite_differences",
                  lambda fd, call: np.asarray(fd) * 0.5),
        # a backend that accumulates in float32: the output carries float32 rounding
        on_output("float32", "accumulates in float32", "per_sample_finite_differences",
                  lambda fd, call: np.asarray(fd, dtype=np.float32).astype(np.float64)),
    ),
    applies_to_reference=False,
)
