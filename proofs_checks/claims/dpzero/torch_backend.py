"""dpzero Algorithm 2 (DPZero) on PyTorch models, dpzero §2.4 (the seed trick per parameter tensor) and §5: a
backend that runs ``torch.nn.Module`` models (protocol ``dpzero_module``) reproduces the reference draw for draw
within a stated rounding bound (docs/design.md, Precision and Randomness contract).

Models (each written twice: as a torch module with a per-example loss, and on the flat parameter vector for the
reference — NumPy in float64 for its run, mpmath at 40 digits for the exact step): linear regression
½(⟨w, x⟩ + b − y)², logistic regression −log σ(y(⟨w, x⟩ + b)) with y = ±1, and a one-hidden-layer MLP
½(⟨w₂, tanh(W₁x + b₁)⟩ + b₂ − y)² (four tensors, so the per-tensor direction blocks matter). For each model ×
direction law (sphere, Gaussian) × batching (full, Poisson, shuffled) × parameter dtype (float64, float32) the
subject runs the torch model and ``reference.algorithms.dpzero.dpzero`` runs the flat vector with
``direction_blocks`` = the model's tensor numels, on the same public seed and the same explicit secret seed:

* exact: τ, every ledger field, the batch sizes, loss-evaluation and non-finite counts; the returned model holds
  θ_τ (output "uniform") or θ_T ("final") bitwise; the result's dtype and block sizes;
* clip counts: between the counts of samples clipped for every / for some value within the error bound (as the
  float64 backend claims);
* per step, from the SUBJECT's own θ_t (no propagation through T steps, whose amplification would make an
  a-priori end-to-end bound vacuous):
  - release: |ŝ_t − ŝ*_t| ≤ SAFETY·E_s, with ŝ*_t the exact release from θ_t (mpmath losses at 40 digits, the same
    u_t normalised in mpmath from the public draws, the same z_t and batch from the randomness contract);
  - update: |θ_{t+1,j} − (θ_{t,j} − α ŝ_t u_j)| ≤ SAFETY·E_x,j with the subject's own ŝ_t (the update is
    post-processing of the release; checking it apart keeps its bound free of the release's error, which is what
    lets a drift of θ as small as one rounding of λu_j be seen).
The measured end-to-end deviation max_t,j |θ_t − θ^ref_t| is reported per dtype in the details (not decided on).

The bound (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1: fl(a ∘ b) = (a ∘ b)(1 + ε), |ε| ≤ u;
γ_k = ku/(1 − ku)). u = 2⁻⁵³ for the float64 scalar work of the backend; u_p = 2⁻⁵³ (float64) or 2⁻²⁴ (float32)
for the model's dtype, γ^p_k its γ. First order, doubled by SAFETY = 2 for the dropped second-order terms.

1. Direction: |Δu_j| ≤ γ_{d+5}|u_j| for the sphere (√d·g/‖g‖ in float64), 0 for Gaussian directions.
2. Perturbed point p̃ = fl_p(θ + fl_p(fl(±λ·u))): |Δp_j| ≤ λ|Δu_j| + uλ|u_j| + u_p(|θ_j| + 2λ|u_j|).
3. Forward error |f̂(p̃) − f(p)| (data are stored in the dtype, so exact): an affine map z = Wx + b (any summation
   order, FMA or not) |Δz_i| ≤ Σ_j(|ΔW_ij||x_j| + (|W_ij| + |ΔW_ij|)|Δx_j|) + |Δb_i| + γ^p_{m+1}(Σ_j|W_ij||x_j| +
   |b_i|) for m inputs; tanh and log-sigmoid are 1-Lipschitz and, by ASSUMPTION, evaluated within ELEMENTARY_ULPS
   = 4 ulps (relative error 2·4·u_p) of their value at the rounded argument (PyTorch's CPU kernels use Sleef's
   1-ulp exp, log1p and tanh; log-sigmoid composes exp, log1p and one subtraction of like-signed terms); the
   squared residual r = z − y: |Δr| ≤ |Δz| + u_p(|r| + |Δz|), |Δf| ≤ ½[(2|r| + |Δr|)|Δr| + u_p(|r| + |Δr|)²].
   The loss is converted to float64 exactly.
4. a_i = (f̂₊ − f̂₋)/(2λ) in float64: |Δa_i| ≤ (|Δf₊| + |Δf₋|)/(2λ) + 2u|a_i|; clipping is 1-Lipschitz; a sum of
   k clipped terms in any order: Σ|Δc_i| + γ_k Σ|c_i|; /N: + u|m|; + σz: + u|σz| + u|ŝ|.
5. Update θ' = fl_p(θ − fl_p(fl(fl(αŝ)·u_j))): |θ'_j − (θ_j − αŝu_j)| ≤ α|ŝ||Δu_j| + (2u + u_p)α|ŝu_j| + u_p|θ'_j|.

On these problems the bounds are ~1e-15 (float64) and ~1e-7 (float32) relative. The mutants move a release or
an update by far more, or by one rounding of λu_j (the in-place perturbation of the public code, float32: its
restore θ += λu; θ −= 2λu; θ += λu rounds three times at the scale of λ|u_j|, which is why the problems take
λ = 0.5 with weights of scale 0.3 and α|ŝ| below 0.1: then λ|u_j| dominates |θ_j| + α|ŝu_j| in many coordinates).

PyTorch is optional: this module imports it only inside the check; a subject provides ``dpzero_module`` only
when torch is installed (``reference.torch_backend.vector.SUBJECT``), so without it the claim applies to no
subject and ``dpref claims list`` still lists it. These claims do not apply to the reference itself.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import mpmath
import numpy as np

from proofs_checks.authoring import (
    Claim,
    UNIT_ROUNDOFF,
    WorstGap,
    deterministic,
    reference_subject,
    rounding_gamma,
    same_value,
    substitute,
)
from reference.algorithms.dpzero import Ledger, NonPrivateDiagnostics, ReproductionModeWarning, direction_for_step
from reference.precision import to_mp, working_precision
from reference.rng import Streams
from reference.secrets import secret_seed

from ._contract import contract_batches

SAFETY = 2.0
DPS = 40
EPSILON, DELTA = 4.0, 1e-5
#: Assumed accuracy of PyTorch's elementwise tanh and log-sigmoid, in ulps of the result (module doc, item 3).
ELEMENTARY_ULPS = 4
#: Unit roundoff of each parameter dtype the claim runs.
DTYPE_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24}
LEDGER_FIELDS = ("algorithm", "steps", "plan", "direction", "clip_target", "batching", "seed", "secret_seed_source",
                 "guarantee_condition")
EXACT_DIAGNOSTICS = ("batch_sizes", "loss_evaluations", "nonfinite_counts")
FEATURES, HIDDEN, RECORDS, STEPS = 3, 4, 10, 4
PERTURBATION, STEP_SIZE, CLIP = 0.5, 0.02, 1.0
WEIGHT_SCALE = 0.3
ACCOUNTANTS = {"full": ("full", None, "gdp_exact"), "poisson": ("poisson", 4, "rdp_opacus"),
               "shuffle": ("shuffle", 3, "gdp_participation")}


def _torch():
    """PyTorch, imported here only (an optional dependency), or an error saying how to get it."""
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise RuntimeError("torch is not installed: the torch-model claims need the extra 'dpref[torch]' "
                           f"(pip install torch==2.13.0, the CPU build) ({exc})") from None
    return torch


# ---------------------------------------------------------------------------------------------------
# The models: torch module, flat-vector loss (NumPy and mpmath) and forward error bound


def _gamma(k: int, up: float) -> float:
    return k * up / (1.0 - k * up)


def _affine_error(w, dw, b, db, x, dx, up):
    """|Δz| of z = Wx + b (module doc, item 3); w (m_out, m_in) and x (m_in,) magnitudes, d* their errors."""
    w, dw, x, dx = np.abs(w), np.abs(dw), np.abs(x), np.abs(dx)
    return dw @ x + (w + dw) @ dx + np.abs(db) + _gamma(w.shape[1] + 1, up) * (w @ x + np.abs(b))


def _squared_error(r, dz, up):
    """|Δf| of f = ½ r², r = z − y, given |Δz| (module doc, item 3)."""
    dr = dz + up * (abs(r) + dz)
    return 0.5 * ((2 * abs(r) + dr) * dr + up * (abs(r) + dr) ** 2)


def _elementary(value, d_argument, up):
    """|Δ| of a 1-Lipschitz elementwise function within ELEMENTARY_ULPS ulps at its rounded argument."""
    return d_argument + 2 * ELEMENTARY_ULPS * up * (np.abs(value) + d_argument)


@dataclasses.dataclass(frozen=True)
class Model:
    """One model family: its tensor shapes, the torch module and per-example loss, the flat-vector losses."""

    name: str  # linear | logistic | mlp

    @property
    def shapes(self):
        if self.name == "mlp":
            return ((HIDDEN, FEATURES), (HIDDEN,), (1, HIDDEN), (1,))
        return ((1, FEATURES), (1,))

    @property
    def sizes(self):
        return tuple(int(np.prod(s)) for s in self.shapes)

    def module(self, torch, flat, dtype):
        """The torch module with trainable tensors in ``named_parameters`` order = the flat vector's blocks."""
        if self.name == "mlp":
            model = torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.Tanh(),
                                        torch.nn.Linear(HIDDEN, 1))
        else:
            model = torch.nn.Linear(FEATURES, 1)
        model = model.to(dtype)
        start = 0
        with torch.no_grad():
            for (_, p), size in zip(model.named_parameters(), self.sizes):
                p.copy_(torch.tensor(flat[start:start + size], dtype=torch.float64).reshape(p.shape))
                start += size
        return model

    def per_example_loss(self, torch):
        logistic = self.name == "logistic"

        def loss(model, batch):
            x, y = batch
            z = model(x).squeeze(-1)
            if logistic:
                return -torch.nn.functional.logsigmoid(y * z)
            return 0.5 * (z - y) ** 2

        return loss

    def _unpack(self, theta):
        if self.name == "mlp":
            hp = HIDDEN * FEATURES
            w1 = np.asarray(theta[:hp]).reshape(HIDDEN, FEATURES)
            return w1, theta[hp:hp + HIDDEN], theta[hp + HIDDEN:hp + 2 * HIDDEN], theta[-1]
        return theta[:FEATURES], theta[FEATURES]

    def loss_np(self, theta, row):
        """f(θ; (x, y)) in float64 (the reference's run)."""
        x, y = row[:FEATURES], row[FEATURES]
        if self.name == "mlp":
            w1, b1, w2, b2 = self._unpack(theta)
            z = float(np.dot(w2, np.tanh(w1 @ x + b1)) + b2)
        else:
            w, b = self._unpack(theta)
            z = float(np.dot(w, x) + b)
        if self.name == "logistic":
            return float(np.logaddexp(0.0, -y * z))
        return 0.5 * (z - y) ** 2

    def loss_mp(self, theta, row):
        """(f, r, hidden) in mpmath: the loss, its residual z − y (or margin yz) and the hidden layer (MLP)."""
        x = [mpmath.mpf(float(v)) for v in row[:FEATURES]]
        y = mpmath.mpf(float(row[FEATURES]))
        hidden = None
        if self.name == "mlp":
            hp = HIDDEN * FEATURES
            hidden = [mpmath.tanh(mpmath.fsum(theta[i * FEATURES + j] * x[j] for j in range(FEATURES)) + theta[hp + i])
                      for i in range(HIDDEN)]
            z = mpmath.fsum(theta[hp + HIDDEN + i] * hidden[i] for i in range(HIDDEN)) + theta[-1]
        else:
            z = mpmath.fsum(theta[j] * x[j] for j in range(FEATURES)) + theta[FEATURES]
        if self.name == "logistic":
            return mpmath.log1p(mpmath.exp(-y * z)), y * z, hidden
        return (z - y) ** 2 / 2, z - y, hidden

    def forward_error(self, point, dp, row, evaluated, up):
        """Bound on |f̂(p̃) − f(p)| (module doc, item 3): point = p (float), dp = |Δp| per coordinate."""
        value, residual, hidden = evaluated
        x = np.asarray(row[:FEATURES], dtype=np.float64)
        zero = np.zeros(FEATURES)
        if self.name == "mlp":
            w1, b1, w2, b2 = self._unpack(point)
            dw1, db1, dw2, db2 = self._unpack(dp)
            dz1 = _affine_error(w1, dw1, b1, db1, x, zero, up)
            h = np.array([float(v) for v in hidden])
            dh = _elementary(h, dz1, up)
            dz = float(_affine_error(np.reshape(w2, (1, -1)), np.reshape(dw2, (1, -1)), np.array([b2]),
                                     np.array([db2]), h, dh, up)[0])
        else:
            w, b = self._unpack(point)
            dw, db = self._unpack(dp)
            dz = float(_affine_error(np.reshape(w, (1, -1)), np.reshape(dw, (1, -1)), np.array([b]), np.array([db]),
                                     x, zero, up)[0])
        if self.name == "logistic":
            return float(_elementary(float(value), dz, up))
        return float(_squared_error(float(residual), dz, up))


# ---------------------------------------------------------------------------------------------------
# Configurations and problems


@dataclasses.dataclass(frozen=True)
class Config:
    model: str
    direction: str
    batching: str
    dtype: str

    @property
    def label(self) -> str:
        return f"{self.model} {self.direction} {self.batching} {self.dtype}"

    @property
    def output(self) -> str:
        """Both outputs are exercised: θ_τ (Alg 2 line 6) on sphere runs, θ_T on Gaussian runs."""
        return "uniform" if self.direction == "sphere" else "final"


def _configs(budget):
    """Every model × direction × batching × dtype at both budgets (quick takes a few seconds)."""
    return [Config(m, direction, batching, dtype) for dtype in ("float64", "float32") for m in ("linear", "logistic",
            "mlp") for direction in ("sphere", "gaussian") for batching in ("full", "poisson", "shuffle")]


@dataclasses.dataclass
class Problem:
    model: Model
    x0: np.ndarray  # flat θ_0, representable in the dtype
    rows: np.ndarray  # (n, FEATURES + 1) records (x, y), representable in the dtype
    seed: int
    noise_seed: int


def _problem(ctx, config: Config) -> Problem:
    model = Model(config.model)
    rng = ctx.generator("problem", config.label)
    d = sum(model.sizes)
    cast = np.float32 if config.dtype == "float32" else np.float64
    x0 = rng.normal(0.0, WEIGHT_SCALE, d).astype(cast).astype(np.float64)
    features = rng.normal(0.0, 1.0, (RECORDS, FEATURES))
    if config.model == "logistic":
        labels = np.where(rng.random(RECORDS) < 0.5, -1.0, 1.0)
    else:
        labels = features @ rng.normal(0.0, 0.5, FEATURES) + rng.normal(0.0, 0.3, RECORDS)
    rows = np.column_stack([features, labels]).astype(cast).astype(np.float64)
    seed = int(rng.integers(2**31))
    noise_seed = int(rng.integers(2**31, 2**32))  # the secret seed, from a range disjoint from the public seeds
    return Problem(model, x0, rows, seed, noise_seed)


def _kwargs(config: Config, problem: Problem) -> dict:
    batching, batch_size, accountant = ACCOUNTANTS[config.batching]
    return dict(steps=STEPS, step_size=STEP_SIZE, perturbation=PERTURBATION, clip_threshold=CLIP, epsilon=EPSILON,
                delta=DELTA, seed=problem.seed, noise_seed=problem.noise_seed, direction=config.direction,
                batching=batching, batch_size=batch_size, accountant=accountant)


def _run_subject(subject, torch, config: Config, problem: Problem):
    dtype = getattr(torch, config.dtype)
    module = problem.model.module(torch, problem.x0, dtype)
    rows = torch.tensor(problem.rows, dtype=dtype)
    data = (rows[:, :FEATURES].contiguous(), rows[:, FEATURES].contiguous())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproductionModeWarning)
        return subject.dpzero_module(module, problem.model.per_example_loss(torch), data, output=config.output,
                                     record_trajectory=True, **_kwargs(config, problem))


def _run_reference(config: Config, problem: Problem):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproductionModeWarning)
        return reference_subject().dpzero(problem.model.loss_np, problem.rows, problem.x0, record_trajectory=True,
                                          direction_blocks=problem.model.sizes, **_kwargs(config, problem))


# ---------------------------------------------------------------------------------------------------
# The draws of the randomness contract (reference.algorithms.dpzero module docstring), re-derived


def _contract_batches(config: Config, noise_seed: int) -> list[np.ndarray]:
    batching, batch, _ = ACCOUNTANTS[config.batching]
    return contract_batches(noise_seed, n=RECORDS, steps=STEPS, batching=batching, batch_size=batch)


def _contract_noise(noise_seed: int) -> list[float]:
    rng = Streams(noise_seed).generator("dpzero", "noise")
    return [rng.standard_normal() for _ in range(STEPS)]


# ---------------------------------------------------------------------------------------------------
# The exact step and its bounds


def _count_window(values, errors):
    surely = sum(1 for v, e in zip(values, errors) if v > CLIP + e)
    maybe = sum(1 for v, e in zip(values, errors) if v > CLIP - e)
    return surely, maybe


def _exact_release(config, problem, theta, u_mp, du, batch, z, sigma):
    """(ŝ*, its error bound, the clip-count window) from θ (module doc, items 1–4)."""
    u, up = UNIT_ROUNDOFF, DTYPE_ROUNDOFF[config.dtype]
    lam = mpmath.mpf(PERTURBATION)
    theta_mp = to_mp(theta)
    u_abs = np.array([float(abs(v)) for v in u_mp])
    dp = PERTURBATION * du + u * PERTURBATION * u_abs + up * (np.abs(theta) + 2 * PERTURBATION * u_abs)
    normaliser = RECORDS if config.batching == "full" else ACCOUNTANTS[config.batching][1]
    terms, term_errors, magnitudes = [], [], []
    for i in batch:
        row = problem.rows[i]
        values = []
        for sign in (1, -1):
            point = theta_mp + sign * lam * u_mp
            evaluated = problem.model.loss_mp(point, row)
            error = problem.model.forward_error(np.array([float(v) for v in point]), dp, row, evaluated, up)
            values.append((evaluated[0], error))
        a = (values[0][0] - values[1][0]) / (2 * lam)
        a_error = (values[0][1] + values[1][1]) / (2 * PERTURBATION) + 2 * u * abs(float(a))
        terms.append(max(-mpmath.mpf(CLIP), min(mpmath.mpf(CLIP), a)))
        term_errors.append(a_error)
        magnitudes.append(abs(float(a)))
    total = mpmath.fsum(terms)
    total_error = sum(term_errors) + rounding_gamma(max(len(batch), 1)) * sum(abs(float(c)) for c in terms)
    mean = total / normaliser
    noise = mpmath.mpf(sigma) * mpmath.mpf(float(z))
    s_hat = mean + noise
    s_error = total_error / normaliser + u * (abs(float(mean)) + abs(float(noise)) + abs(float(s_hat)))
    return s_hat, SAFETY * s_error, _count_window(magnitudes, term_errors)


def _update_gap(config, theta, theta_next, s_hat, u_mp, du):
    """(|θ' − (θ − αŝu)| per coordinate, its bound) for the subject's own release ŝ (module doc, item 5)."""
    u, up = UNIT_ROUNDOFF, DTYPE_ROUNDOFF[config.dtype]
    alpha, s = mpmath.mpf(STEP_SIZE), mpmath.mpf(float(s_hat))
    expected = to_mp(theta) - alpha * s * u_mp
    gap = np.array([float(abs(mpmath.mpf(float(g)) - e)) for g, e in zip(theta_next, expected)])
    u_abs = np.array([float(abs(v)) for v in u_mp])
    a_s = STEP_SIZE * abs(float(s_hat))
    bound = a_s * du + (2 * u + up) * a_s * u_abs + up * np.array([float(abs(e)) for e in expected])
    return gap, SAFETY * bound


def _check_steps(config, problem, result, sigma, worst: WorstGap):
    """False and the reason at the first step outside its bound; else True (the worst ratio goes to ``worst``)."""
    batches = _contract_batches(config, problem.noise_seed)
    noise = _contract_noise(problem.noise_seed)
    trajectory, releases = np.asarray(result.trajectory), np.asarray(result.releases)
    d = sum(problem.model.sizes)
    with working_precision(DPS):
        for t in range(STEPS):
            u_mp = direction_for_step(problem.seed, t, d, config.direction, arithmetic="mpmath",
                                      blocks=problem.model.sizes)
            u_abs = np.array([float(abs(v)) for v in u_mp])
            du = rounding_gamma(d + 5) * u_abs if config.direction == "sphere" else np.zeros(d)
            s_hat, s_bound, (fewest, most) = _exact_release(config, problem, trajectory[t], u_mp, du, batches[t],
                                                            noise[t], sigma)
            count = int(result.diagnostics.clip_counts[t])
            if not fewest <= count <= most:
                return False, f"step {t}: clip count {count} outside the window [{fewest}, {most}]"
            s_gap = float(abs(mpmath.mpf(float(releases[t])) - s_hat))
            x_gap, x_bound = _update_gap(config, trajectory[t], trajectory[t + 1], releases[t], u_mp, du)
            label = f"step {t}"
            for gap, bound, what in ((s_gap, s_bound, "release"), (x_gap, x_bound, "update")):
                step = WorstGap()
                step.see(gap, bound, f"{label}: {what}")
                worst.see(gap, bound, f"{config.label} {label}: {what} gap / bound {step.ratio:.3g}")
                if not step.ratio <= 1.0:
                    return False, f"{label}: {what} gap / {config.dtype} bound = {step.ratio:.3g} > 1"
    return True, ""


def _flat_model(result) -> np.ndarray:
    return np.concatenate([p.detach().double().reshape(-1).numpy() for p in result.model.parameters()
                           if p.requires_grad])


def _compare(config, problem, got, want, worst: WorstGap):
    """None when the subject's run agrees with the reference's, else the reason."""
    d = sum(problem.model.sizes)
    trajectory = np.asarray(got.trajectory, dtype=np.float64)
    releases = np.asarray(got.releases, dtype=np.float64)
    if trajectory.shape != (STEPS + 1, d) or releases.shape != (STEPS,) or not (
            np.all(np.isfinite(trajectory)) and np.all(np.isfinite(releases))):
        return f"trajectory {trajectory.shape} / releases {releases.shape} (want {(STEPS + 1, d)} / {(STEPS,)}) " \
               "or non-finite values"
    if tuple(got.sizes) != problem.model.sizes or str(got.dtype) != f"torch.{config.dtype}":
        return f"sizes {got.sizes} / dtype {got.dtype} (want {problem.model.sizes} / torch.{config.dtype})"
    tau = int(want.output_index)
    if int(got.output_index) != tau:
        return f"output index {got.output_index} != reference {tau}"
    for name in LEDGER_FIELDS:
        if not same_value(getattr(got.ledger, name), getattr(want.ledger, name)):
            return f"ledger.{name} {getattr(got.ledger, name)!r} != reference {getattr(want.ledger, name)!r}"
    for name in EXACT_DIAGNOSTICS:
        if not same_value(getattr(got.diagnostics, name), getattr(want.diagnostics, name)):
            return f"diagnostics.{name} {getattr(got.diagnostics, name)!r} != reference " \
                   f"{getattr(want.diagnostics, name)!r}"
    if not np.array_equal(trajectory[0], problem.x0):
        return "θ_0 of the trajectory is not the model's starting point"
    held = trajectory[tau] if config.output == "uniform" else trajectory[STEPS]
    if not np.array_equal(_flat_model(got), held):
        return f"the returned model is not θ_{'τ' if config.output == 'uniform' else 'T'} of the trajectory"
    sigma = float(want.ledger.plan.noise_std)
    ok, why = _check_steps(config, problem, got, sigma, worst)
    return None if ok else why


def _check_models(subject, ctx):
    torch = _torch()
    worst, deviation = WorstGap(), {}
    runs = 0
    for config in _configs(ctx.budget):
        problem = _problem(ctx, config)
        got = _run_subject(subject, torch, config, problem)
        want = _run_reference(config, problem)
        why = _compare(config, problem, got, want, worst)
        if why is not None:
            return deterministic(False, detail=f"{config.label}: {why}")
        runs += 1
        gap = float(np.max(np.abs(np.asarray(got.trajectory) - np.asarray(want.trajectory))))
        deviation[config.dtype] = max(deviation.get(config.dtype, 0.0), gap)
    measured = ", ".join(f"{dtype} {value:.3g}" for dtype, value in deviation.items())
    return deterministic(worst.ratio <= 1.0, statistic=worst.ratio, bound=1.0,
                         detail=f"{runs} runs; worst per-step gap / bound {worst.ratio:.3g} ({worst.detail}); "
                                f"measured end-to-end max |θ_t − θ_t(reference)| over the runs (not decided on): "
                                f"{measured}")


# ---------------------------------------------------------------------------------------------------
# Mutants: a loop implementation of Algorithm 2 on a torch model with one bug, and wrappers of the subject


def _naive_dpzero(bug: str | None):
    """Algorithm 2 on a torch model, written plainly (out-of-place perturbation by saved copies), with one bug:

    * "direction_noise": z_t drawn from the public direction stream of step t after u_t (dpzero.E13);
    * "noise_per_tensor": one noise draw per parameter tensor, each tensor updated with its own ŝ (dpzero.E14);
    * "inplace_float32": float32 models perturbed in place, θ += λu; θ −= 2λu; θ += λu (the public code's restore);
    * "shared_key": every tensor's part of u_t from the one key ("dpzero", "direction", t);
    * "swapped_keys": blocks 0 and 1 drawn from each other's keys;
    * "realised_normaliser": Poisson batches averaged over |B_t| instead of the fixed B;
    * "bfloat16_update": a float32 model's update rounded to bfloat16;
    * None: no bug (the implementation the mutants start from).
    """

    def dpzero_module(call):
        torch = _torch()
        from reference.torch_backend.dpzero import TorchDPResult  # torch is optional: imported with it

        ref = reference_subject()
        model, seed, steps, lam, alpha = call.model, call.seed, call.steps, float(call.perturbation), call.step_size
        params = [p for p in model.parameters() if p.requires_grad]
        sizes = tuple(p.numel() for p in params)
        d = sum(sizes)
        x, y = call.data
        n = x.shape[0]
        hidden = secret_seed(call.noise_seed, public_seeds=(seed,))
        plan = ref.privacy_plan(clip_threshold=call.clip_threshold, n=n, steps=steps, epsilon=call.epsilon,
                                delta=call.delta, batching=call.batching, batch_size=call.batch_size,
                                accountant=call.accountant, sampling_probability=call.sampling_probability)
        config = Config("linear", call.direction, call.batching, "float64")
        batches = _contract_batches(config, hidden.entropy)
        noise_rng = Streams(hidden.entropy).generator("dpzero", "noise")
        dtype = params[0].dtype

        def direction(t):
            if bug == "shared_key":
                return direction_for_step(seed, t, d, call.direction)
            if bug == "swapped_keys":
                order = (1, 0) + tuple(range(2, len(sizes)))
                streams = Streams(seed)
                g = [streams.generator("dpzero", "direction", t, order[k]).standard_normal(size)
                     for k, size in enumerate(sizes)]
                g = np.concatenate(g)
                return g * (math.sqrt(d) / float(np.linalg.norm(g))) if call.direction == "sphere" else g
            return direction_for_step(seed, t, d, call.direction, blocks=sizes)

        def pieces(vector, coefficient):
            out, start = [], 0
            for p, size in zip(params, sizes):
                out.append(torch.from_numpy(vector[start:start + size] * coefficient).to(dtype).reshape(p.shape))
                start += size
            return out

        def flat():
            return np.concatenate([p.detach().double().reshape(-1).numpy() for p in params])

        trajectory, releases, counts, batch_sizes = [flat()], [], [], []
        tau = int(Streams(seed).generator("dpzero", "output").integers(steps))
        snapshot = None
        with torch.no_grad():
            for t, batch in enumerate(batches):
                if t == tau:
                    snapshot = [p.clone() for p in params]
                u = direction(t)
                index = torch.from_numpy(batch)
                rows = (x[index], y[index])
                saved = [p.clone() for p in params]
                if bug == "inplace_float32" and dtype == torch.float32:
                    for p, s in zip(params, pieces(u, lam)):
                        p.add_(s)
                    f_plus = call.per_example_loss(model, rows).double().numpy()
                    for p, s in zip(params, pieces(u, 2 * lam)):
                        p.sub_(s)
                    f_minus = call.per_example_loss(model, rows).double().numpy()
                    for p, s in zip(params, pieces(u, lam)):
                        p.add_(s)
                else:
                    for p, base, s in zip(params, saved, pieces(u, lam)):
                        p.copy_(base + s)
                    f_plus = call.per_example_loss(model, rows).double().numpy()
                    for p, base, s in zip(params, saved, pieces(u, -lam)):
                        p.copy_(base + s)
                    f_minus = call.per_example_loss(model, rows).double().numpy()
                    for p, base in zip(params, saved):
                        p.copy_(base)
                a = (f_plus - f_minus) / (2 * lam)
                counts.append(int(np.sum(np.abs(a) > call.clip_threshold)))
                batch_sizes.append(len(batch))
                normaliser = n if call.batching == "full" else call.batch_size
                if bug == "realised_normaliser" and call.batching == "poisson":
                    normaliser = max(len(batch), 1)
                mean = float(np.sum(np.clip(a, -call.clip_threshold, call.clip_threshold))) / normaliser
                if bug == "direction_noise":
                    rng = Streams(seed).generator("dpzero", "direction", t)
                    rng.standard_normal(d)  # the direction's draw, then the "noise"
                    z = [rng.standard_normal()] * len(params)
                elif bug == "noise_per_tensor":
                    z = [noise_rng.standard_normal() for _ in params]
                else:
                    z = [noise_rng.standard_normal()] * len(params)
                s_hats = [mean + float(plan.noise_std) * zk for zk in z]
                releases.append(s_hats[0])
                for k, p in enumerate(params):
                    step = pieces(u, alpha * s_hats[k])[k]
                    if bug == "bfloat16_update" and dtype == torch.float32:
                        p.copy_((p - step).to(torch.bfloat16).to(dtype))
                    else:
                        p.sub_(step)
                trajectory.append(flat())
            if call.output == "uniform":
                for p, s in zip(params, snapshot):
                    p.copy_(s)
        ledger = Ledger("dpzero", steps, plan, call.direction, call.clip_target, call.batching, seed, hidden.source,
                        hidden.guarantee_condition)
        diagnostics = NonPrivateDiagnostics(tuple(counts), tuple(batch_sizes), 2 * sum(batch_sizes), 0,
                                            (0,) * steps)
        return TorchDPResult(model=model, output_index=tau, releases=np.array(releases),
                             trajectory=np.array(trajectory) if call.record_trajectory else None, trace=None,
                             ledger=ledger, diagnostics=diagnostics, dtype=dtype, sizes=sizes)

    return dpzero_module


def _last_iterate(call):
    """τ = T − 1: the run reports x_{T−1} as its output (and holds it with output "uniform")."""
    torch = _torch()
    result = call.original(record_trajectory=True)
    steps = call.steps
    if call.output == "uniform":
        params = [p for p in result.model.parameters() if p.requires_grad]
        start, flat = 0, result.trajectory[steps - 1]
        with torch.no_grad():
            for p in params:
                p.copy_(torch.from_numpy(flat[start:start + p.numel()]).reshape(p.shape).to(p.dtype))
                start += p.numel()
    return dataclasses.replace(result, output_index=steps - 1)


TORCH_MODELS = Claim(
    id="dpzero.backend.torch_models",
    paper="dpzero",
    location="Algorithm 2; §2.4 (the seed trick per parameter tensor); §5; dpzero.E13, dpzero.E14",
    statement="On linear regression, logistic regression and a one-hidden-layer tanh MLP written as torch modules "
              "(float64 and float32 parameters; sphere and Gaussian directions; full, Poisson and shuffled "
              "batches), the subject's DPZero run has the reference's output index, ledger and batch sizes exactly "
              "(the reference run on the flat parameter vector with the model's tensors as direction blocks), and "
              "each step's release and update lie within the stated rounding bound of the exact step from the "
              "subject's own iterate.",
    kind="backend",
    requires=("dpzero_module",),
    check=_check_models,
    mutants=(
        substitute("direction_noise", "z_t drawn from the public direction stream after u_t (dpzero.E13)",
                   "dpzero_module", _naive_dpzero("direction_noise")),
        substitute("noise_per_tensor", "one noise draw per parameter tensor (dpzero.E14)", "dpzero_module",
                   _naive_dpzero("noise_per_tensor")),
        substitute("inplace_float32", "float32 weights perturbed in place: θ += λu; θ −= 2λu; θ += λu",
                   "dpzero_module", _naive_dpzero("inplace_float32")),
        substitute("shared_key", "every tensor's direction from the one key ('dpzero', 'direction', t)",
                   "dpzero_module", _naive_dpzero("shared_key")),
        substitute("swapped_keys", "the direction keys of tensors 0 and 1 swapped", "dpzero_module",
                   _naive_dpzero("swapped_keys")),
        substitute("last_iterate", "outputs x_{T-1} (τ = T − 1) instead of x_τ", "dpzero_module", _last_iterate),
        substitute("realised_normaliser", "Poisson mean divided by |B_t| instead of B", "dpzero_module",
                   _naive_dpzero("realised_normaliser")),
        substitute("bfloat16_update", "a float32 model's update rounded to bfloat16", "dpzero_module",
                   _naive_dpzero("bfloat16_update")),
    ),
    applies_to_reference=False,
)
