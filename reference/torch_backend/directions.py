"""dpzero §2.4 (the seed trick) and Algorithm 2 lines 2–5 on a model's parameter tensors: directions regenerated
tensor by tensor from keyed public streams, never stored.

The direction of step t for a model with trainable tensors θ_0, …, θ_{K−1} (numels d_0, …, d_{K−1}, d = Σ d_k) is
``reference.algorithms.dpzero.direction_for_step(seed, t, d, direction, blocks=(d_0, …, d_{K−1}))``: block k is
``standard_normal(d_k)`` of the generator of key ("dpzero", "direction", t, k) under the public seed, and

* "gaussian": u_k = g_k;
* "sphere": u_k = s·g_k with s = √d/‖g‖ over the whole vector; ‖g‖² is summed chunk by chunk as the reference's
  ``blocked_squared_norm`` does, so the blocked directions are the reference's bitwise. With ``flat_key`` (one
  tensor, the reference's unblocked key) they are bitwise for d ≤ CHUNK; beyond, the reference's single
  ``np.linalg.norm`` rounds differently in the last bits.

A block is drawn in chunks of at most ``CHUNK`` numbers (NumPy's ``standard_normal`` continues its stream across
calls, so the chunks concatenate to the single call bitwise), and each chunk is written into the tensor it
perturbs at once: the extra memory of one step is one tensor-sized result plus two chunk buffers, never a stored
direction.

Arithmetic. ``c·u_k`` is formed in float64 and rounded once to the tensor's dtype; the sum with θ_k is then
formed in the tensor's dtype. For float64 tensors this is the reference's ``x + (λu)`` bitwise (Gaussian
directions).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..algorithms.dpzero import DIRECTION_CHUNK, KEY
from ..rng import Streams

__all__ = ["CHUNK", "KEPT", "StepDirections"]

#: Numbers drawn per chunk (64 Ki float64 = 512 KiB per buffer); the reference sums ‖g‖² in the same chunks.
CHUNK = DIRECTION_CHUNK
#: Numbers of small blocks kept for the whole step (the rest is regenerated at each use).
KEPT = DIRECTION_CHUNK


class StepDirections:
    """The direction u_t of one step over K blocks (module doc); regenerated on every use.

    seed: the public seed; t: the step; sizes: (d_0, …, d_{K−1}); direction: "sphere" or "gaussian";
    flat_key: use the single key ("dpzero", "direction", t) for a model with ONE block (the reference's key
    without blocks), so that a one-tensor model follows ``direction_for_step(seed, t, d)`` exactly.
    """

    def __init__(self, seed: int, t: int, sizes: tuple[int, ...], direction: str, *, flat_key: bool = False):
        if flat_key and len(sizes) != 1:
            raise ValueError(f"flat_key needs exactly one parameter tensor, the model has {len(sizes)}")
        self.streams = Streams(seed)
        self.t, self.sizes, self.direction, self.flat_key = t, tuple(sizes), direction, flat_key
        self.scale = 1.0
        # Small blocks are drawn once per step and kept (KEPT numbers in all: 512 KiB) instead of being re-derived
        # from their key at each use; larger ones are regenerated at each use, never stored.
        self._kept, budget = {}, KEPT
        for k, size in enumerate(self.sizes):
            if size <= budget:
                self._kept[k] = self._generator(k).standard_normal(size)
                budget -= size
        if direction == "sphere":
            self.scale = self._sphere_scale()
            for g in self._kept.values():
                np.multiply(g, self.scale, out=g)  # u = g·s, the rounding of the regenerated blocks

    def _generator(self, k: int) -> np.random.Generator:
        if self.flat_key:
            return self.streams.generator(KEY, "direction", self.t)
        return self.streams.generator(KEY, "direction", self.t, k)

    def _raw_chunks(self, k: int):
        """Yield (start, g_chunk): the unscaled draws of block k in chunks (the buffer is reused)."""
        rng, size = self._generator(k), self.sizes[k]
        buffer = np.empty(min(CHUNK, size))
        for start in range(0, size, CHUNK):
            piece = buffer[:min(CHUNK, size - start)]
            rng.standard_normal(out=piece)
            yield start, piece

    def chunks(self, k: int):
        """Yield (start, u_chunk) for block k: u_k in float64 chunks, in order (u_chunk is reused: copy to keep)."""
        if k in self._kept:
            yield 0, self._kept[k]
            return
        for start, piece in self._raw_chunks(k):
            if self.scale != 1.0:
                np.multiply(piece, self.scale, out=piece)
            yield start, piece

    def _sphere_scale(self) -> float:
        partials = []  # reference.algorithms.dpzero.blocked_squared_norm, one chunk at a time
        for k in range(len(self.sizes)):
            pieces = [(0, self._kept[k])] if k in self._kept else self._raw_chunks(k)
            partials.extend(float(np.add.reduce(piece * piece)) for _, piece in pieces)
        squared = math.fsum(partials)
        if squared == 0.0:
            raise ValueError(f"the direction of step t={self.t} has norm 0 (probability below 2^-1000)")
        d = sum(self.sizes)
        # The reference's rounding order: s = √d / ‖g‖, then u = g·s (reference.rng._normalise).
        return math.sqrt(d) / math.sqrt(squared)

    def perturbed(self, original: torch.Tensor, k: int, coefficient: float) -> torch.Tensor:
        """A new tensor θ_k + c·u_k (``original`` untouched); c·u in float64, rounded once to the dtype."""
        flat = original.detach().reshape(-1)
        out = torch.empty_like(flat)
        for start, piece in self.chunks(k):
            step = torch.from_numpy(piece * coefficient).to(device=flat.device, dtype=flat.dtype)
            torch.add(flat[start:start + piece.shape[0]], step, out=out[start:start + piece.shape[0]])
        return out.reshape(original.shape)

    def subtract_(self, tensor: torch.Tensor, k: int, coefficient: float) -> None:
        """θ_k ← θ_k − c·u_k in place (the update of line 5); c·u in float64, rounded once to the dtype."""
        flat = tensor.data.view(-1)
        for start, piece in self.chunks(k):
            step = torch.from_numpy(piece * coefficient).to(device=flat.device, dtype=flat.dtype)
            flat[start:start + piece.shape[0]].sub_(step)
