"""bgm21 privacy ledgers built from a run's public trace: Algorithms 1, 2, 5, 6 and Phased-SGD (Theorems 5–7, 10, 16).

Bassily, Guzmán, Menart — *Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex
Settings* (NeurIPS 2021). Each of the paper's private algorithms reads its data in disjoint batches (single pass) or,
for Algorithm 5, the whole data set at every step. ``ledger_of(result)`` turns one run into a ``Bgm21Ledger``
(``bgm21_accounting``): one entry per noisy release, tagged with the batches whose records it depends on, so the
ledger's per-batch composition gives the run's certified ε (parallel composition over disjoint batches, adaptive
composition inside a batch; see ``bgm21_accounting``'s module docstring).

The ledger is built ONLY from what the run publishes — its public trace and its (public) config — never from the
NOT PRIVATE debug trace. What each algorithm's record pays for (bounds rebuilt from the main text, bgm21.E1; each
trace carries them per step):

* **Algorithm 1** (``poly_sfw``, Theorem 7): a record of B_r^t enters the estimate ∇_r^{t′} of every later step t′ ≥ t
  of round r (the recursion of lines 10–11), moving it by at most G_t in the dual norm (``estimator_sensitivity``).
  It therefore pays for the 2^r − t report-noisy-min steps (r, t), …, (r, 2^r − 1), each with the centred score
  sensitivity ½·diam(V)·G_t (``score_sensitivity``) and Laplace scale s_r (``lap_scales``): ε0 = 2Δ_c/s_r = D·G_t/s_r
  per step (bgm21.E9).
* **Algorithm 6** (``noisy_sfw``, Theorem 10): a record of B_r^t enters only step (r, t): one Gaussian release at
  t = 0 (sensitivity ``gradient_sensitivity``, std σ_{r,0}), two at t ≥ 1 (the fresh-gradient term with σ_{r,t}, the
  difference term with ``difference_sensitivity`` and σ̂_{r,t}); they compose exactly as Gaussian DP,
  μ = ‖(Δ_i/σ_i)_i‖_2 (Dong–Roth–Su). The difference sensitivity in the trace uses η_{r,t−1} whatever
  ``sigma_hat_eta`` is, so a run with the printed σ̂ (bgm21.E10) is charged what it really costs.
* **Phased-SGD** (Theorem 5): phase i releases one Gaussian w_i = w̄_i + N(0, σ_i²I) on its block, ℓ2-sensitivity
  ``sensitivities[i]`` = 2η_iL (the value σ_i is calibrated to; the run checks it bounds the rebuilt
  2η_i(L0R + (n_i − 1)α)).
* **Algorithm 5** (``noisy_frank_wolfe``, Theorem 6): every record enters all T − 1 report-noisy-min steps, each with
  centred score sensitivity Δ_c (``score_sensitivity``) and Laplace scale λ: one batch, T − 1 pure steps.
* **Algorithm 2** (``prox_guided_psmd``, Theorem 16): round r's batch is read by the T noisy gradient steps of the
  strongly convex solver on it (ℓ2-sensitivity ``step_sensitivity`` = 2L0/m, std ``noise_std``); later rounds see
  it only through the centre w_{r+1} (post-processing).

A run without noise (ε = ∞, a zero scale with a positive sensitivity) has no finite ledger: ``ledger_of`` refuses it.

Cost. Algorithm 1's ledger holds Σ_r 2^r(2^r + 1)/2 releases (≈ 4^R/6) and certifies 2^R − 1 batches; the exact KOV
route (``kov_max_steps``, a bisection per batch) dominates: R = 8 takes about 20 s with the default and under 1 s
with ``kov_max_steps=0`` (closed-form routes only, a larger but still valid ε).
"""

from __future__ import annotations

import math

from ..validation import check_int
from .bgm21_accounting import DEFAULT_KOV_MAX_STEPS, Bgm21Ledger, LedgerReport
from .bgm21_gll import NoisyFWResult, PhasedSGDResult
from .bgm21_prox import ProxResult
from .bgm21_sfw import NoisySFWConfig, PolySFWConfig, SFWResult

__all__ = ["DEFAULT_KOV_MAX_STEPS", "ledger_of", "privacy_report", "poly_sfw_ledger", "noisy_sfw_ledger",
           "phased_sgd_ledger", "noisy_frank_wolfe_ledger", "prox_guided_psmd_ledger"]

#: Relative float64 slack when cross-checking a trace's redundant fields (they are computed by one formula each).
_TRACE_RTOL = 1e-9


def _positive_scale(name: str, scale: float, sensitivity: float, where: str) -> float:
    if not math.isfinite(scale) or scale < 0.0:
        raise ValueError(f"{name} at {where} must be finite and >= 0, got {scale}")
    if scale == 0.0 and sensitivity > 0.0:
        raise ValueError(f"{name} at {where} is 0 with a positive sensitivity: the run is not private "
                         "(epsilon = inf or zero noise) and has no finite ledger")
    return scale


def _sensitivity(name: str, value: float, where: str) -> float:
    if not math.isfinite(value) or value < 0.0:
        raise ValueError(f"{name} at {where} must be finite and >= 0, got {value}")
    return value


def poly_sfw_ledger(result: SFWResult, *, kov_max_steps: int = DEFAULT_KOV_MAX_STEPS) -> Bgm21Ledger:
    """Ledger of one Algorithm 1 run (Theorem 7): for each batch B_r^t, the 2^r − t report-noisy-min steps it enters,
    each (2·½D·G_t/s_r)-DP. Batch ids are ("B", r, t)."""
    trace = result.trace
    ledger = Bgm21Ledger(kov_max_steps=kov_max_steps)
    rounds = [int(r) for r in trace.rounds]
    steps = [int(t) for t in trace.steps]
    for i, (r, t) in enumerate(zip(rounds, steps)):
        where = f"(r, t) = ({r}, {t})"
        if t >= 2**r:
            raise ValueError(f"trace step {where} lies outside round r (t must be < 2^r)")
        if int(trace.affected_steps[i]) != 2**r - t:
            raise ValueError(f"trace affected_steps at {where} is {int(trace.affected_steps[i])}, but a record of "
                             f"B_r^t enters 2^r - t = {2**r - t} report-noisy-min steps")
        score_sens = _sensitivity("score_sensitivity", float(trace.score_sensitivity[i]), where)
        G_t = _sensitivity("estimator_sensitivity", float(trace.estimator_sensitivity[i]), where)
        D = result.config.diameter
        if D is not None and not math.isclose(score_sens, 0.5 * D * G_t, rel_tol=_TRACE_RTOL, abs_tol=0.0):
            raise ValueError(f"trace score_sensitivity at {where} is {score_sens}, not ½·D·G_t = {0.5 * D * G_t}")
        # the steps of round r, t′ = t..2^r − 1, in run order; each uses s_r of its own step (all equal to s_r)
        for j in range(i, i + 2**r - t):
            if rounds[j] != r or steps[j] != t + (j - i):
                raise ValueError(f"trace is not in run order at {where}: expected step (r, t') = ({r}, {t + j - i})")
            s_r = _positive_scale("lap_scales", float(trace.lap_scales[j]), score_sens, f"(r, t') = ({r}, {steps[j]})")
            if score_sens == 0.0:
                continue
            ledger.record_report_noisy_min(score_sens, s_r, [("B", r, t)], label=f"argmin ({r}, {steps[j]})")
    return ledger


def noisy_sfw_ledger(result: SFWResult, *, kov_max_steps: int = DEFAULT_KOV_MAX_STEPS) -> Bgm21Ledger:
    """Ledger of one Algorithm 6 run (Theorem 10): batch B_r^t pays for the Gaussian release(s) of step (r, t) only:
    N_r^t's (σ_{r,t}, ``gradient_sensitivity``) and, at t ≥ 1, N̂_r^t's (σ̂_{r,t}, ``difference_sensitivity``)."""
    trace = result.trace
    ledger = Bgm21Ledger(kov_max_steps=kov_max_steps)
    for i, (r, t) in enumerate(zip(trace.rounds, trace.steps)):
        r, t = int(r), int(t)
        where = f"(r, t) = ({r}, {t})"
        batch = [("B", r, t)]  # one batch id (a tuple alone would be read as a set of ids)
        g_sens = _sensitivity("gradient_sensitivity", float(trace.gradient_sensitivity[i]), where)
        sigma = _positive_scale("sigma", float(trace.sigma[i]), g_sens, where)
        if g_sens > 0.0:
            ledger.record_gaussian(g_sens, sigma, batch, label=f"N ({r}, {t})")
        if t >= 1:
            d_sens = _sensitivity("difference_sensitivity", float(trace.difference_sensitivity[i]), where)
            sigma_hat = _positive_scale("sigma_hat", float(trace.sigma_hat[i]), d_sens, where)
            if d_sens > 0.0:
                ledger.record_gaussian(d_sens, sigma_hat, batch, label=f"N_hat ({r}, {t})")
    return ledger


def phased_sgd_ledger(result: PhasedSGDResult, *, kov_max_steps: int = DEFAULT_KOV_MAX_STEPS) -> Bgm21Ledger:
    """Ledger of one Phased-SGD run (Theorem 5): phase i's block pays for the one Gaussian release of w_i.
    Batch ids are ("phase", i), i = 1..k."""
    trace = result.trace
    ledger = Bgm21Ledger(kov_max_steps=kov_max_steps)
    for i, (sens, bound, sigma) in enumerate(zip(trace.sensitivities, trace.sensitivity_bounds, trace.noise_stds),
                                             start=1):
        where = f"phase {i}"
        sens = _sensitivity("sensitivities", float(sens), where)
        if float(bound) > sens * (1.0 + _TRACE_RTOL):
            raise ValueError(f"trace sensitivity_bounds at {where} ({bound}) exceeds the calibrated sensitivity {sens}")
        sigma = _positive_scale("noise_stds", float(sigma), sens, where)
        if sens > 0.0:
            ledger.record_gaussian(sens, sigma, [("phase", i)], label=f"w_{i}")
    return ledger


def noisy_frank_wolfe_ledger(result: NoisyFWResult, *, kov_max_steps: int = DEFAULT_KOV_MAX_STEPS) -> Bgm21Ledger:
    """Ledger of one Algorithm 5 run (Theorem 6): every record pays for all T − 1 report-noisy-min steps (full batch),
    each (2Δ_c/λ)-DP. One batch, id "S"."""
    trace = result.trace
    ledger = Bgm21Ledger(kov_max_steps=kov_max_steps)
    sens = _sensitivity("score_sensitivity", float(trace.score_sensitivity), "every step")
    lam = _positive_scale("lap_scale", float(trace.lap_scale), sens, "every step")
    n_steps = len(trace.selected)
    if n_steps != result.config.steps - 1:
        raise ValueError(f"trace holds {n_steps} selections but the config has T - 1 = {result.config.steps - 1}")
    if sens == 0.0:
        raise ValueError("score_sensitivity is 0: the ledger would hold no release")
    for t in range(1, n_steps + 1):
        ledger.record_report_noisy_min(sens, lam, "S", label=f"argmin t={t}")
    return ledger


def prox_guided_psmd_ledger(result: ProxResult, *, kov_max_steps: int = DEFAULT_KOV_MAX_STEPS) -> Bgm21Ledger:
    """Ledger of one Algorithm 2 run (Theorem 16): round r's batch pays for the T Gaussian gradient steps of the
    solver on it (ℓ2-sensitivity 2L0/m, std σ). Batch ids are ("round", r), r = 1..R."""
    trace = result.trace
    ledger = Bgm21Ledger(kov_max_steps=kov_max_steps)
    for r, solver in enumerate(trace.solver_traces, start=1):
        where = f"round {r}"
        sens = _sensitivity("step_sensitivity", float(solver.step_sensitivity), where)
        sigma = _positive_scale("noise_std", float(solver.noise_std), sens, where)
        if sens == 0.0:
            continue
        for t in range(1, check_int("n_steps", solver.n_steps, minimum=1) + 1):
            ledger.record_gaussian(sens, sigma, [("round", r)], label=f"solver step ({r}, {t})")
    return ledger


def ledger_of(result, *, kov_max_steps: int = DEFAULT_KOV_MAX_STEPS) -> Bgm21Ledger:
    """The ``Bgm21Ledger`` of one run of poly_sfw / noisy_sfw (``SFWResult``; the config says which), phased_sgd,
    noisy_frank_wolfe or prox_guided_psmd, from its public trace and config only (module docstring)."""
    kov_max_steps = check_int("kov_max_steps", kov_max_steps, minimum=0)
    if isinstance(result, SFWResult):
        if isinstance(result.config, PolySFWConfig):
            return poly_sfw_ledger(result, kov_max_steps=kov_max_steps)
        if isinstance(result.config, NoisySFWConfig):
            return noisy_sfw_ledger(result, kov_max_steps=kov_max_steps)
        raise TypeError(f"SFWResult.config must be a PolySFWConfig or NoisySFWConfig, got "
                        f"{type(result.config).__name__}")
    if isinstance(result, PhasedSGDResult):
        return phased_sgd_ledger(result, kov_max_steps=kov_max_steps)
    if isinstance(result, NoisyFWResult):
        return noisy_frank_wolfe_ledger(result, kov_max_steps=kov_max_steps)
    if isinstance(result, ProxResult):
        return prox_guided_psmd_ledger(result, kov_max_steps=kov_max_steps)
    raise TypeError("result must be an SFWResult, PhasedSGDResult, NoisyFWResult or ProxResult, got "
                    f"{type(result).__name__}")


def privacy_report(result, epsilon, delta) -> LedgerReport:
    """``ledger_of(result).certified(epsilon, delta)``: the run is (report.epsilon, δ)-DP; ``meets_target`` says
    whether that is ≤ ``epsilon``."""
    return ledger_of(result).certified(epsilon, delta)
