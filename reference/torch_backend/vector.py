"""dpzero Algorithm 2 and MeZO through the torch backend, with the reference's signature: a subject for the DPZero
claims and audits (``dpref claims run --subject reference.torch_backend.vector``).

``dpzero(loss, data, x0, ...)`` and ``mezo(...)`` take what ``reference.algorithms.dpzero`` takes — a per-sample
loss ``loss(point, row)`` on NumPy vectors, data of shape (n, p), x0 of shape (d,) — and run
``reference.torch_backend.dpzero.dpzero`` on a float64 module whose parameters are x (one tensor, or one per block
of ``direction_blocks``). The per-example loss evaluates ``loss`` on the perturbed parameters the backend's
reparametrisation hands to the forward pass, one record at a time. So everything the torch backend does — the
keyed per-tensor directions, the out-of-place perturbation, the secret streams, the batches, the update in place,
the restoration — is exercised by the claims written for the reference, on the reference's own problems. A
one-tensor run uses the reference's unblocked direction key (``flat_key``), so the two follow the same draws.

Float64 only: an mpmath x0 is refused (the torch backend has no mpmath arithmetic).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch

from ..algorithms.dpzero import check_direction_blocks, direction_for_step, privacy_plan
from ..precision import is_mp
from ..validation import check_array
from . import dpzero as torch_dpzero

__all__ = ["SUBJECT", "VectorModel", "dpzero", "mezo"]


class VectorModel(torch.nn.Module):
    """x ∈ R^d as float64 parameter blocks (one per direction block, in order); ``point()`` is their
    concatenation as the forward pass sees it (perturbed during the two evaluations of a step)."""

    def __init__(self, x0: np.ndarray, blocks: tuple[int, ...]):
        super().__init__()
        starts = np.cumsum((0,) + blocks[:-1])
        self.blocks = torch.nn.ParameterList(
            torch.nn.Parameter(torch.tensor(x0[s:s + b], dtype=torch.float64)) for s, b in zip(starts, blocks))

    def point(self) -> np.ndarray:
        return np.concatenate([b.detach().numpy() for b in self.blocks])


def _per_example_loss(loss):
    def per_example(model: VectorModel, rows: torch.Tensor) -> torch.Tensor:
        point = model.point()
        point.setflags(write=False)  # the user's loss must not write into the parameters
        return torch.tensor([float(loss(point, row)) for row in rows.numpy()], dtype=torch.float64)
    return per_example


def _inputs(loss, data, x0, direction_blocks):
    if not callable(loss):
        raise TypeError(f"loss must be callable as loss(point, row), got {type(loss).__name__}")
    if isinstance(x0, np.ndarray) and x0.dtype == object and is_mp(x0):
        raise TypeError("x0 is an mpmath array: the torch backend runs in float64 (use the reference for mpmath)")
    x0 = check_array("x0", x0, ndim=1)
    data = check_array("data", data, ndim=2)
    if x0.shape[0] < 1:
        raise ValueError("x0 must have at least one coordinate (d >= 1)")
    if data.shape[0] < 1:
        raise ValueError("data must have at least one row (n >= 1)")
    d = x0.shape[0]
    blocks = (d,) if direction_blocks is None else check_direction_blocks(direction_blocks, d)
    return np.array(x0, dtype=np.float64), torch.tensor(np.array(data, dtype=np.float64)), blocks


def dpzero(loss, data, x0, *, steps, step_size, perturbation, clip_threshold, epsilon=None, delta=None, seed,
           noise_seed=None, direction="sphere", clip_target="normalized", batching="full", batch_size=None,
           accountant=None, noise="gaussian", record_trajectory=False, trace=None, sampling_probability=None,
           direction_blocks=None):
    """``reference.algorithms.dpzero.dpzero`` run by the torch backend (module doc); returns its ``DPResult``."""
    x0, rows, blocks = _inputs(loss, data, x0, direction_blocks)
    model = VectorModel(x0, blocks)
    model_trace = None if trace is None else (lambda m: trace(m.point()))
    result = torch_dpzero.dpzero(
        model, _per_example_loss(loss), rows, steps=steps, step_size=step_size, perturbation=perturbation,
        clip_threshold=clip_threshold, epsilon=epsilon, delta=delta, seed=seed, noise_seed=noise_seed,
        direction=direction, clip_target=clip_target, batching=batching, batch_size=batch_size,
        accountant=accountant, noise=noise, sampling_probability=sampling_probability, output="final",
        record_trajectory=True, trace=model_trace, flat_key=direction_blocks is None)
    trajectory = result.trajectory
    return torch_dpzero.as_dpresult(
        result if record_trajectory else _without_trajectory(result),
        output=trajectory[result.output_index].copy(), final_iterate=trajectory[-1].copy())


def _without_trajectory(result):
    return dataclasses.replace(result, trajectory=None)


def mezo(loss, data, x0, *, steps, step_size, perturbation, seed, clip_threshold=math.inf, direction="gaussian",
         batching="full", batch_size=None, record_trajectory=False, trace=None, sampling_probability=None,
         direction_blocks=None):
    """``reference.algorithms.dpzero.mezo`` run by the torch backend: ``dpzero`` without noise."""
    return dpzero(loss, data, x0, steps=steps, step_size=step_size, perturbation=perturbation,
                  clip_threshold=clip_threshold, seed=seed, direction=direction, batching=batching,
                  batch_size=batch_size, noise="none", record_trajectory=record_trajectory, trace=trace,
                  sampling_probability=sampling_probability, direction_blocks=direction_blocks)


#: The protocols of a torch run, as a claim subject: ``--subject reference.torch_backend.vector:SUBJECT`` (with
#: ``dpzero_module``, the backend itself on torch models). The
#: backend draws u_t with the reference's ``direction_for_step`` and plans with its ``privacy_plan``, so those two
#: are the reference's own (claims that call only them test the reference, not torch).
SUBJECT = {"dpzero": dpzero, "mezo": mezo, "dpzero_module": torch_dpzero.dpzero,
           "direction_for_step": direction_for_step, "privacy_plan": privacy_plan}
