"""dpzero Algorithm 2 (DPZero) and MeZO (dpzero §5, App. B) on any ``torch.nn.Module``, forward passes only.

Zhang, Li, Thekumparampil, Oh, He — *DPZero: Private Fine-Tuning of Language Models without Backpropagation*
(ICML 2024), Algorithm 2, on the trainable tensors of a model; Malladi et al. 2023 (MeZO) is the same loop
without noise. Step t, as the pseudocode has it:

    2: u_t regenerated per parameter tensor from public keyed streams (``directions.StepDirections``)
    3–4: a_i = (f(θ+λu; ξ_i) − f(θ−λu; ξ_i))/(2λ), two batched forward passes of ``per_example_loss``
    5: ŝ_t = (1/N) Σ_i clip_C(a_i) + z_t, z_t ~ N(0, σ²) from the SECRET stream ("dpzero", "noise")
    5: θ ← θ − α ŝ_t u_t, tensor by tensor, u_t regenerated once more
    6: the output (the final model, or θ_τ: ``output``)

Everything that is not a forward pass is the reference's own code (``reference.algorithms.dpzero``): the
validation of the switches, the privacy plan (``privacy_plan``, with its accountant per batching: Lemma 2.2 or
exact Gaussian DP for the full batch, Poisson-subsampled RDP for Poisson batches, the participation count for
shuffled batches), the secret seed (``reference.secrets``: fresh operating-system entropy unless given, never a
public seed), the batch coins (``_batches`` on the secret stream ("dpzero", "sampling")), the output index τ,
the Gaussian mechanism, the ledger; the clipped mean and the replacement of non-finite values are the reference's
rules vectorised (the same left-to-right sum, so the same bits: ``_clipped_mean``). So the releases ŝ_t follow the
reference draw for draw; only the losses come from torch (``tests/test_torch_backend.py`` and the backend claims
bound the difference).

What differs from the public research code (dpzero §5, App. B; errata dpzero.E7, dpzero.E13, dpzero.E14):

* the noise has its own secret stream, never the direction seed (dpzero.E13), and ONE scalar per step (dpzero.E14);
* the batch sampler and the accountant match: Poisson batches are Poisson-sampled and accounted as such; shuffled
  batches are accounted by their participation count, with no amplification claimed (dpzero.E7);
* the parameters are never perturbed in place. Each trainable tensor is reparametrised
  (``torch.nn.utils.parametrize``) as θ_k + c·u_k with c ∈ {+λ, −λ} computed when the forward pass reads it,
  so θ is never written during the two evaluations and its restoration is exact in every dtype (the public code's
  θ += λz; θ −= 2λz; θ += λz does not restore fp16 weights: rounding). Memory: the model, one perturbed tensor at
  a time and two chunk buffers — a forward pass that reads a weight twice computes it twice.

Precision modes. The model's dtype decides (float64, float32, bfloat16, float16; every trainable tensor must
share it). c·u_k is formed in float64 and rounded once to that dtype, the losses are converted to float64, and
a_i, the clipped mean and the noise are float64 (the released scalar ŝ_t is exact float64 whatever the model's
dtype); the update θ_k − (αŝ_t)u_k is rounded to the dtype. In float16/bfloat16 an update below half an ulp of a
weight is lost (the usual low-precision caveat; the restoration above is still exact).

What a run publishes. ``TorchDPResult.releases`` (ŝ_t), the model (post-processing of the releases with the public
directions), τ and the public ``ledger`` are covered by the plan; ``diagnostics`` (clip counts, batch sizes, loss
evaluations, non-finite counts) are computed on the private data outside the mechanism and must not be published;
``trace`` values are private only if the trace function reads public data.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math

import numpy as np
import torch
from torch.nn.utils import parametrize

from ..algorithms.dpzero import (
    DPResult,
    Ledger,
    NonPrivateDiagnostics,
    _batches,
    _check_common,
    _Counts,
    _ledger,
    _noise_generators,
    _output_index,
    _plan_for,
    _replace_scalar,
    _secret_for,
)
from ..algorithms.dpzero_privacy import _check_batch_size, _check_sampling_probability
from ..mechanisms import gaussian_mechanism
from ..rng import SEED_BOUND
from ..validation import check_int, check_real
from .directions import StepDirections

__all__ = ["DTYPES", "OUTPUTS", "TRAJECTORY_LIMIT", "TorchDPResult", "trainable_tensors", "dpzero", "mezo"]

#: The parameter dtypes the backend runs in.
DTYPES = (torch.float64, torch.float32, torch.bfloat16, torch.float16)
#: "final": the model after T steps (the experiments, dpzero §5); "uniform": θ_τ, τ ~ Unif{0..T−1} (Alg 2 line 6).
OUTPUTS = ("final", "uniform")
#: Bytes ``record_trajectory`` may hold ((T+1)·d float64 values), checked before the run allocates anything.
TRAJECTORY_LIMIT = 2 * 2**30


@dataclasses.dataclass(frozen=True)
class TorchDPResult:
    """Output of a torch run (``reference.algorithms.dpzero.DPResult``'s fields where they apply).

    model: the same module, its trainable tensors set to the output (θ_T, or θ_τ with ``output="uniform"``).
    output_index: τ (public). releases: (T,) float64 ŝ_t. trajectory: (T+1, d) float64 flattened θ_0..θ_T when
    ``record_trajectory`` (small models only), else None. trace: (T+1,) values of ``trace(model)``, or None.
    ledger: the public ``Ledger``; diagnostics: ``NonPrivateDiagnostics`` (NOT covered by the plan).
    dtype: the parameters' dtype; sizes: the numels of the trainable tensors, in order (the direction blocks).
    """

    model: torch.nn.Module
    output_index: int
    releases: np.ndarray
    trajectory: np.ndarray | None
    trace: np.ndarray | None
    ledger: Ledger
    diagnostics: NonPrivateDiagnostics
    dtype: torch.dtype
    sizes: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class _Setup:
    """What ``reference.algorithms.dpzero``'s helpers read of a run (batches, plan, streams, ledger)."""

    n: int
    steps: int
    step_size: float
    clip: float
    batching: str
    batch_size: int | None
    sampling_probability: float | None
    normalizer: float
    seed: int
    secret: object


def trainable_tensors(model: torch.nn.Module) -> list[tuple[str, torch.nn.Parameter]]:
    """The (name, parameter) pairs a run perturbs and updates: ``named_parameters()`` with requires_grad, in
    registration order, each shared parameter once (tied weights move together)."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    return [(name, p) for name, p in model.named_parameters() if p.requires_grad]


def _check_tensors(model) -> list[torch.nn.Parameter]:
    named = trainable_tensors(model)
    if not named:
        raise ValueError("model has no trainable parameter (requires_grad=True): nothing to fine-tune")
    dtypes = {p.dtype for _, p in named}
    if len(dtypes) != 1 or next(iter(dtypes)) not in DTYPES:
        raise ValueError(f"the trainable parameters must share one dtype of {[str(t) for t in DTYPES]}, "
                         f"got {sorted(str(t) for t in dtypes)}")
    for name, p in named:
        if not p.is_contiguous():
            raise ValueError(f"parameter {name!r} is not contiguous: call .contiguous() on it before the run")
        if not bool(torch.isfinite(p).all()):
            raise ValueError(f"parameter {name!r} has a non-finite entry (the starting point must be finite)")
    return [p for _, p in named]


def _check_data(data):
    tensors = tuple(data) if isinstance(data, (tuple, list)) else (data,)
    if not tensors or not all(isinstance(t, torch.Tensor) for t in tensors):
        raise TypeError("data must be a torch.Tensor or a tuple of tensors (records along dimension 0)")
    if any(t.ndim == 0 for t in tensors):
        raise ValueError("every data tensor needs a record dimension 0")
    sizes = {t.shape[0] for t in tensors}
    if len(sizes) != 1:
        raise ValueError(f"the data tensors must have the same number of records, got {sorted(sizes)}")
    n = sizes.pop()
    if n < 1:
        raise ValueError("data must have at least one record (n >= 1)")
    return tensors, n, isinstance(data, (tuple, list))


def _uses(model, parameter):
    """Every (module, name) slot holding ``parameter`` (a tied weight sits in several)."""
    return [(module, name) for module in model.modules() for name, p in list(module._parameters.items())
            if p is parameter]


class _Perturbation(torch.nn.Module):
    """θ_k ↦ θ_k + c·u_k for the current (directions, c) of the shared state; θ_k itself when c = 0."""

    def __init__(self, state: dict, block: int):
        super().__init__()
        self.state, self.block = state, block

    def forward(self, original):
        coefficient = self.state["coefficient"]
        if coefficient == 0.0:
            return original
        return self.state["directions"].perturbed(original, self.block, coefficient)


@contextlib.contextmanager
def _reparametrised(model, parameters):
    """Reparametrise every slot of every trainable tensor for the run; restore the very same Parameter objects
    on exit, whatever happens (``remove_parametrizations(..., leave_parametrized=False)``)."""
    state = {"coefficient": 0.0, "directions": None}
    slots, orders = [], {}
    try:
        for k, p in enumerate(parameters):
            for module, name in _uses(model, p):
                orders.setdefault(id(module), (module, list(module._parameters)))
                parametrize.register_parametrization(module, name, _Perturbation(state, k), unsafe=True)
                slots.append((module, name))
        yield state
    finally:
        state["coefficient"] = 0.0
        for module, name in reversed(slots):
            parametrize.remove_parametrizations(module, name, leave_parametrized=False)
        for module, order in orders.values():
            # removal re-registers a parameter at the end of its module: put the original order back, so that
            # named_parameters (hence the direction blocks of the next run) and state_dict keep their order
            kept = {name: module._parameters.pop(name) for name in order}
            rest = {name: module._parameters.pop(name) for name in list(module._parameters)}
            module._parameters.update(kept)
            module._parameters.update(rest)


def _losses(per_example_loss, model, batch, size, where):
    with torch.no_grad():
        values = per_example_loss(model, batch)
    if not isinstance(values, torch.Tensor) or tuple(values.shape) != (size,):
        got = tuple(values.shape) if isinstance(values, torch.Tensor) else type(values).__name__
        raise ValueError(f"per_example_loss must return a tensor of shape ({size},) at {where}, got {got}")
    return values.detach().to(device="cpu", dtype=torch.float64).numpy()


def _select(tensors, as_tuple, index):
    picked = tuple(t[torch.from_numpy(index).to(t.device)] for t in tensors)
    return picked if as_tuple else picked[0]


def _replace_nonfinite(a: np.ndarray, clip: float):
    """NaN -> 0, ±inf -> ±C before clipping (the reference's ``_replace_scalar``, vectorised); (a, count)."""
    bad = ~np.isfinite(a)
    if not bad.any():
        return a, 0
    if math.isinf(clip) and np.isinf(a).any():
        i = int(np.flatnonzero(np.isinf(a))[0])
        _replace_scalar(float(a[i]), clip, False, i)  # raises the reference's error
    a = np.where(np.isnan(a), 0.0, np.where(np.isinf(a), np.sign(a) * clip, a))
    return a, int(bad.sum())


def _clipped_mean(a: np.ndarray, clip: float, denominator: float) -> float:
    """Σ_i clip_C(a_i) / denominator, summed left to right from 0 as ``reference.mechanisms.clipped_mean`` does
    (``np.cumsum`` is sequential), so the value is the reference's bitwise."""
    clipped = np.clip(a, -clip, clip)
    total = float(np.cumsum(clipped)[-1]) if clipped.shape[0] else 0.0
    return total / denominator


def _flat(parameters) -> np.ndarray:
    return np.concatenate([p.detach().to("cpu", torch.float64).reshape(-1).numpy() for p in parameters])


def _trace_value(trace, model):
    value = float(trace(model))
    if not math.isfinite(value):
        raise ValueError(f"trace returned a non-finite value ({value})")
    return value


def dpzero(model, per_example_loss, data, *, steps, step_size, perturbation, clip_threshold, epsilon=None,
           delta=None, seed, noise_seed=None, direction="sphere", clip_target="normalized", batching="full",
           batch_size=None, accountant=None, noise="gaussian", sampling_probability=None, output="final",
           record_trajectory=False, trace=None, flat_key=False, progress=None):
    """dpzero Algorithm 2 on the trainable tensors of ``model`` (module doc); updates ``model`` in place.

    Args:
        model: a ``torch.nn.Module``; its parameters with requires_grad are θ (one dtype of ``DTYPES``).
        per_example_loss: ``per_example_loss(model, batch) -> (b,)`` tensor, f(θ; ξ_i) for each record of the
            batch; called under ``torch.no_grad()``. batch: ``data`` indexed by the batch's records (a tensor or
            a tuple of tensors, as ``data`` is).
        data: the n records: a tensor, or a tuple of tensors sharing dimension 0.
        steps, step_size, perturbation, clip_threshold, epsilon, delta, seed, noise_seed, direction, clip_target,
            batching, batch_size, accountant, noise, sampling_probability: as
            ``reference.algorithms.dpzero.dpzero`` (the same plan, streams and switches).
        output: "final" (θ_T; the experiments) or "uniform" (θ_τ, Algorithm 2 line 6; keeps one copy of θ).
        record_trajectory: return the flattened θ_0..θ_T in float64 (small models). trace: optional
            ``trace(model) -> float`` recorded at t = 0..T.
        flat_key: a one-tensor model draws u_t from the reference's unblocked key ("dpzero", "direction", t), so
            that it follows ``reference.algorithms.dpzero.dpzero`` without ``direction_blocks``.
        progress: optional callable ``progress(t)`` called after each step (e.g. a tqdm bar's update).
    """
    _check_common(direction, clip_target, noise, epsilon, delta)
    if not callable(per_example_loss):
        raise TypeError(f"per_example_loss must be callable as per_example_loss(model, batch), got "
                        f"{type(per_example_loss).__name__}")
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {OUTPUTS}, got {output!r}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be None or callable, got {type(progress).__name__}")
    parameters = _check_tensors(model)
    tensors, n, as_tuple = _check_data(data)
    private = noise == "gaussian"
    steps = check_int("steps", steps, minimum=1)
    step_size = float(check_real("step_size", step_size, positive=True))
    lam = float(check_real("perturbation", perturbation, positive=True))
    clip = float(check_real("clip_threshold", clip_threshold, positive=True, allow_inf=True))
    if private and math.isinf(clip):
        raise ValueError("clip_threshold must be finite for a private run (an unclipped mean has unbounded "
                         "sensitivity)")
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    batch_size = _check_batch_size(batching, batch_size, n)
    sampling_probability = _check_sampling_probability(batching, sampling_probability)
    setup = _Setup(n, steps, step_size, clip, batching, batch_size, sampling_probability,
                   float(n if batching == "full" else batch_size), seed, _secret_for(noise_seed, (seed,), private))
    plan = _plan_for(setup, noise, epsilon, delta, accountant, clip)
    noise_rng, sampling_rng = _noise_generators(setup)
    sizes = tuple(p.numel() for p in parameters)
    if record_trajectory and (steps + 1) * sum(sizes) * 8 > TRAJECTORY_LIMIT:
        raise ValueError(f"record_trajectory would hold (T+1)·d = {steps + 1}·{sum(sizes)} float64 values "
                         f"({(steps + 1) * sum(sizes) * 8 / 2**30:.1f} GiB, limit {TRAJECTORY_LIMIT / 2**30:g} GiB): "
                         "record a trace instead, or rebuild the iterates from the releases and the public directions")
    tau = _output_index(setup)

    releases, counts, snapshot = [], _Counts(), None
    trajectory = [_flat(parameters)] if record_trajectory else None
    trace_values = None if trace is None else [_trace_value(trace, model)]
    with _reparametrised(model, parameters) as state:
        for t, batch_index in enumerate(_batches(setup, sampling_rng)):
            if output == "uniform" and t == tau:
                snapshot = [p.detach().clone() for p in parameters]
            directions = StepDirections(seed, t, sizes, direction, flat_key=flat_key)              # line 2
            state["directions"] = directions
            if len(batch_index):
                batch = _select(tensors, as_tuple, batch_index)
                state["coefficient"] = lam
                f_plus = _losses(per_example_loss, model, batch, len(batch_index), f"step t={t}, θ + λu")
                state["coefficient"] = -lam
                f_minus = _losses(per_example_loss, model, batch, len(batch_index), f"step t={t}, θ − λu")
                state["coefficient"] = 0.0
                with np.errstate(invalid="ignore", over="ignore"):  # non-finite values: replaced below
                    a = (f_plus - f_minus) / (2 * lam)                                                # lines 3-4
            else:
                a = np.zeros(0)
            counts.loss_evaluations += 2 * len(batch_index)
            if clip_target == "raw_difference":
                with np.errstate(over="ignore"):
                    a = (2 * lam) * a  # f+ − f−, as the reference forms it
            a, replaced = _replace_nonfinite(a, clip)
            counts.nonfinite_counts.append(replaced)
            counts.clip_counts.append(int(np.sum(np.abs(a) > clip)))
            counts.batch_sizes.append(len(batch_index))
            m = _clipped_mean(a, clip, n if batching == "full" else setup.normalizer)                # line 5: mean
            s_hat = gaussian_mechanism(m, plan.noise_std, noise_rng) if private else m               # line 5: + z_t
            if clip_target == "raw_difference":
                s_hat = s_hat / (2 * lam)
            s_hat = float(s_hat)
            releases.append(s_hat)
            with torch.no_grad():
                for k, p in enumerate(parameters):                                                   # line 5: update
                    directions.subtract_(p, k, step_size * s_hat)
            if not all(bool(torch.isfinite(p).all()) for p in parameters):
                raise FloatingPointError(f"a parameter became non-finite at step t={t} (the step size is too "
                                         "large for this model; the iterates are public, so this check is too)")
            if record_trajectory:
                trajectory.append(_flat(parameters))
            if trace is not None:
                trace_values.append(_trace_value(trace, model))
            if progress is not None:
                progress(t)
    if output == "uniform":
        with torch.no_grad():
            for p, saved in zip(parameters, snapshot):
                p.copy_(saved)
    name = "dpzero" if private else "mezo"
    return TorchDPResult(
        model=model,
        output_index=tau,
        releases=np.array(releases, dtype=np.float64),
        trajectory=None if trajectory is None else np.array(trajectory),
        trace=None if trace_values is None else np.array(trace_values),
        ledger=_ledger(name, setup, plan, direction, clip_target),
        diagnostics=counts.diagnostics(),
        dtype=parameters[0].dtype,
        sizes=sizes,
    )


def mezo(model, per_example_loss, data, *, steps, step_size, perturbation, seed, clip_threshold=math.inf,
         direction="gaussian", batching="full", batch_size=None, sampling_probability=None, output="final",
         record_trajectory=False, trace=None, flat_key=False, progress=None):
    """MeZO / ZO-SGD (Malladi et al. 2023; dpzero §5, App. B) on a model: ``dpzero`` without noise (non-private;
    Gaussian directions by default, as MeZO)."""
    return dpzero(model, per_example_loss, data, steps=steps, step_size=step_size, perturbation=perturbation,
                  clip_threshold=clip_threshold, seed=seed, direction=direction, batching=batching,
                  batch_size=batch_size, noise="none", sampling_probability=sampling_probability, output=output,
                  record_trajectory=record_trajectory, trace=trace, flat_key=flat_key, progress=progress)


def as_dpresult(result: TorchDPResult, output: np.ndarray, final_iterate: np.ndarray) -> DPResult:
    """The reference's ``DPResult`` of a torch run, given the flattened output and final iterate."""
    return DPResult(output=output, output_index=result.output_index, final_iterate=final_iterate,
                    trajectory=result.trajectory, trace=result.trace, releases=result.releases,
                    ledger=result.ledger, diagnostics=result.diagnostics)
