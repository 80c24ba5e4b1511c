"""bgm21 §5.2 Algorithm 2 (Proximally Guided Private Stochastic Mirror Descent, Theorem 16, p = 2) and its strongly
convex solver ``asc_dp_gd``: vectorized float64 twin of ``reference.algorithms.bgm21_prox``.

Same names, signatures, refusals, random draws and results as the reference (its module docstring gives the
pseudocode with the paper's line numbers, the rebuilt solver, the stream keys and the draw schedule), so that runs
agree draw for draw and bit for bit (tests/test_fast_bgm21_prox.py; the backend claim ``bgm21.backend.prox_run``).
What this module defines itself — the fast subject's own code — is the solver loop (``_solve``: the mean gradient of
a step, the noise, the projected step, the weighted average) and the round loop of Algorithm 2. Borrowed on purpose:
the record order (``reference.batching``), the noise calibration and the argument checks (the reference's own
``calibrated_noise_std``, ``_ball``, ``_point_in``, ``_beta_mu``), the projection onto W (``reference.geometry``) and
the result types.

The differences from the reference:

* **A batch at a time.** The mean gradient (1/m) Σ_{z∈S_r} ∇f(w_t, z) of a solver step is the fast twin of
  Algorithms 1 and 6's estimator (``reference.fast.bgm21_sfw.RecursiveGradientEstimator``, its ``start``): one call
  ``gradient(w, rows)`` or the owner's ``gradients(w, rows)`` per step, accepted only after a probe on the first batch
  equals the reference's own per-record calls bit for bit (at the first point and at a generic one), else one record
  at a time in the reference's order; non-finite record gradients contribute zero and are counted; the batch is summed
  left to right from 0 as the reference's loop sums it. That module's docstring states the convention in full.
* **Noise generators seeded in one pass.** The reference builds one generator per solver step from
  ``Streams(noise seed).generator("bgm21", key, "noise", [r,] t)``. Here the SeedSequence state words of every step
  of a run (all R·T pairs (r, t) of Algorithm 2, or the T steps of a solver call) are computed in one vectorized pass
  over uint32 words — NumPy's published SeedSequence mixing with ``reference.fast.dpzero``'s constants, extended to
  keys that end in two integers; checked against ``np.random.SeedSequence`` on the first step of every run, with a
  fallback to ``Streams`` — and each step still draws its own ``standard_normal(d)`` from its own PCG64 (seeded
  through NumPy's ``ISeedSequence`` interface): the same draws, about 3 µs a step instead of 30.
* **Same arithmetic, same order.** Per step the reference's float64 operations in its order: N = σ·z, g = (G +
  β(w − centre)) + N, η_t = 2/(μ(t+1)) or 1/(L1 + β), w_{t+1} = Π_W(w − η g) by ``LpBall.project``; the weighted
  average's numerator Σ t·w_t accumulated left to right from 0 and its denominator Σ t (integers below 2^53, exact in
  any order). Hence with a gradient whose batched values equal its per-record values a run is BITWISE the
  reference's: output, iterates, final iterate, solver paths, public and debug traces.

Arithmetic: float64; mpmath data are refused with a TypeError, as by the reference.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from ..algorithms.bgm21_prox import (
    CALIBRATION_DPS,
    KEY,
    MAX_STEPS,
    STEP_RULES,
    ASCConfig,
    ASCDebugTrace,
    ASCResult,
    ASCTrace,
    ProxConfig,
    ProxPublicTrace,
    ProxResult,
    _ball,  # the reference's argument checks, word for word
    _beta_mu,
    _data,
    _point_in,
    _prepare_prox,
    calibrated_noise_std,
    zcdp_budget,
)
from ..geometry import LpBall
from ..rng import SEED_BOUND, Streams, encode_key
from ..secrets import secret_seed
from .bgm21_sfw import RecursiveGradientEstimator, _ordered_sum
from .dpzero import _PresetSeedSequence  # NumPy's ISeedSequence interface with precomputed state words
from .dpzero import _state_words as _dpzero_state_words

__all__ = [
    "KEY",
    "CALIBRATION_DPS",
    "STEP_RULES",
    "MAX_STEPS",
    "zcdp_budget",
    "calibrated_noise_std",
    "ASCConfig",
    "ASCTrace",
    "ASCDebugTrace",
    "ASCResult",
    "asc_dp_gd",
    "ProxConfig",
    "ProxPublicTrace",
    "ProxResult",
    "prox_guided_psmd",
]


def _state_words(seed: int, key: tuple, tails: list[np.ndarray]) -> np.ndarray:
    """(M, 4) uint64: row k is ``np.random.SeedSequence(seed, spawn_key=encode_key(key + (tails[0][k], …)))
    .generate_state(4, np.uint64)``, for integer tails below 2^32 (``reference.fast.dpzero``'s rebuild of NumPy's
    seeding, one seed for every row)."""
    return _dpzero_state_words([seed] * int(tails[0].shape[0]), key, tuple(tails))


def _standard_normals(noise_seed: int, key: tuple, tails: list[np.ndarray], d: int) -> np.ndarray:
    """(M, d): row k is ``Streams(noise_seed).generator(*key, tails[0][k], …).standard_normal(d)`` — the draws of
    the reference's steps, each from its own generator (module doc, "Noise generators seeded in one pass")."""
    M = tails[0].shape[0]
    z = np.empty((M, d))
    if M == 0:
        return z
    first = key + tuple(int(tail[0]) for tail in tails)
    fast = 0 <= noise_seed < SEED_BOUND and all(int(tail.max()) < 2**32 for tail in tails)
    if fast:
        words = _state_words(noise_seed, key, tails)
        expected = np.random.SeedSequence(noise_seed, spawn_key=encode_key(first)).generate_state(4, np.uint64)
        fast = bool(np.array_equal(words[0], expected))  # NumPy changed its seeding: fall back, stay exact
    for k in range(M):
        if fast:
            rng = np.random.Generator(np.random.PCG64(_PresetSeedSequence(words[k])))
        else:
            rng = Streams(noise_seed).generator(*key, *(int(tail[k]) for tail in tails))
        z[k] = rng.standard_normal(d)
    return z


def _solve(estimator: RecursiveGradientEstimator, batch: np.ndarray, ball: LpBall, center: np.ndarray, beta: float,
           mu: float, config: ASCConfig, normals) -> ASCResult:
    """The solver on the rows ``batch`` (reference ``_solve``): noisy projected gradient descent on the proximal
    subproblem. ``normals(T)``: the (T, d) standard normal draws z_t of the call's steps t = 1..T."""
    m = int(batch.shape[0])
    T = m if config.n_steps is None else config.n_steps
    if config.noise_std is None:
        sigma = calibrated_noise_std(lipschitz=config.lipschitz, batch_size=m, n_steps=T, epsilon=config.epsilon,
                                     delta=config.delta)
    else:
        sigma = config.noise_std
    sens = 2.0 * config.lipschitz / m
    rho = math.inf if sigma == 0.0 else T * sens**2 / (2.0 * sigma**2)
    eps_at = math.inf if math.isinf(rho) else rho + 2.0 * math.sqrt(rho * math.log(1.0 / config.delta))
    rate = None
    d = ball.d
    if config.step == "constant":
        L_h = config.smoothness + beta
        rate = 1.0 - mu / L_h
        etas = np.full(T, 1.0 / L_h)
    else:  # η_t = 2/(μ(t+1)): the same float64 product and quotient as the reference's
        etas = 2.0 / (mu * np.arange(2, T + 2, dtype=np.float64))
    noises = sigma * normals(T)  # N_t = σ·z_t, drawn also when σ = 0
    evaluations0 = estimator.evaluations
    zeros = estimator._zeros
    iterates = np.empty((T + 1, d))
    grads = np.empty((T, d))
    bad = np.empty(T, dtype=np.int64)
    w = center.copy()
    iterates[0] = w
    for k in range(T):  # step t = k + 1
        G = estimator._start(w, batch, zeros)  # (1/m) Σ ∇f(w_t, z) (+ 0, as the reference adds its zero noise)
        bad[k] = estimator.nonfinite_counts[-1]
        g = G + beta * (w - center) + noises[k]
        w = ball.project(w - etas[k] * g)
        if not np.all(np.isfinite(w)):
            raise ValueError(f"the solver iterate is not finite at step {k + 1} (float64 overflow)")
        iterates[k + 1] = w
        grads[k] = G
    if config.step == "decreasing":
        weights = np.arange(1, T + 1, dtype=np.float64)[:, None]
        den = float(T * (T + 1) // 2)  # Σ t: every partial sum an integer < 2^53, exact as the reference's
        output = _ordered_sum(weights * iterates[:T]) / den  # 0 + 1·w_1 + 2·w_2 + … in the reference's order
    else:
        output = w.copy()
    output = ball.project(output)
    trace = ASCTrace(batch_size=m, n_steps=T, step_sizes=etas, noise_std=sigma, step_sensitivity=sens, rho_zcdp=rho,
                     epsilon_at_delta=eps_at, beta=beta, mu=mu, center=center.copy())
    debug = ASCDebugTrace(mean_gradients=grads, noises=noises, nonfinite_counts=bad,
                          evaluations=estimator.evaluations - evaluations0)
    return ASCResult(output=output, iterates=iterates, trace=trace, debug=debug, rate=rate)


def asc_dp_gd(gradient: Callable, data, ball: LpBall, config: ASCConfig, *, center, beta, mu,
              noise_seed=None) -> ASCResult:
    """The strongly convex subproblem solver (rebuilt stand-in for A_SC, Theorem 29), one batch evaluation per step
    (module doc). Arguments, draws, refusals and result as ``reference.algorithms.bgm21_prox.asc_dp_gd``."""
    if not callable(gradient):
        raise TypeError(f"gradient must be callable as gradient(w, z), got {type(gradient).__name__}")
    ball = _ball(ball)
    if not isinstance(config, ASCConfig):
        raise TypeError(f"config must be an ASCConfig, got {type(config).__name__}")
    data = _data(data)
    center = _point_in(ball, "center", center)
    beta, mu = _beta_mu(beta, mu)
    secret = secret_seed(noise_seed, name="noise_seed")
    estimator = RecursiveGradientEstimator(gradient, data, ball.d)
    batch = np.arange(data.shape[0], dtype=np.int64)
    entropy = secret.streams().seed
    res = _solve(estimator, batch, ball, center, beta, mu, config,
                 lambda T: _standard_normals(entropy, (KEY, "asc_dp_gd", "noise"), [np.arange(1, T + 1)], ball.d))
    return dataclasses.replace(res, secret_seed_source=secret.source, guarantee_condition=secret.guarantee_condition)


def prox_guided_psmd(gradient: Callable, data, ball: LpBall, config: ProxConfig, *, seed, noise_seed=None,
                     w_init=None) -> ProxResult:
    """bgm21 Algorithm 2 (§5.2, Theorem 16) at p = 2 with ``asc_dp_gd`` as A_SC (rebuilt), one batch evaluation per
    solver step (module doc). Arguments, draws, refusals and result as
    ``reference.algorithms.bgm21_prox.prox_guided_psmd``; the checks are the reference's own (``_prepare_prox``)."""
    ball, data, seed, secret, n, R, m, w, batcher = _prepare_prox(gradient, data, ball, config, seed, noise_seed,
                                                                  w_init)
    estimator = RecursiveGradientEstimator(gradient, data, ball.d)
    # every round has m records and the same T: the draws of all R·T steps at once, row (r − 1)·T + t − 1
    T = m if config.solver.n_steps is None else config.solver.n_steps
    steps = np.tile(np.arange(1, T + 1), R)
    normals = _standard_normals(secret.streams().seed, (KEY, "prox_psmd", "noise"),
                                [np.repeat(np.arange(1, R + 1), T), steps], ball.d).reshape(R, T, ball.d)
    iterates = np.empty((R, ball.d))
    batches, traces, debugs, paths = [], [], [], []
    for r in range(1, R + 1):  # line 2
        iterates[r - 1] = w  # w_r
        B = batcher.take(m)  # line 3
        res = _solve(estimator, B, ball, w, config.beta, config.mu, config.solver,
                     lambda _, r=r: normals[r - 1])  # line 4
        w = res.output  # w_{r+1}
        batches.append(B); traces.append(res.trace); debugs.append(res.debug); paths.append(res.iterates)
    tau = int(Streams(seed).generator(KEY, "prox_psmd", "output").integers(R))  # line 5
    trace = ProxPublicTrace(batch_indices=tuple(batches), solver_traces=tuple(traces), records_used=batcher.used,
                            records_available=n, output_index=tau)
    return ProxResult(output=iterates[tau].copy(), iterates=iterates, final_iterate=w.copy(),
                      solver_iterates=tuple(paths), trace=trace, debug=tuple(debugs), config=config, seed=seed,
                      secret_seed_source=secret.source, guarantee_condition=secret.guarantee_condition,
                      noise_scales="calibrated" if config.solver.noise_std is None else "input")
