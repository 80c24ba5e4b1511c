"""The batches of a DPZero run as the randomness contract draws them (reference.algorithms.dpzero module docstring,
key ("dpzero", "sampling") under the secret seed), re-derived independently of the implementation under test, for
the backend claims of this folder."""

from __future__ import annotations

import numpy as np

from reference.rng import Streams


def contract_batches(noise_seed: int, *, n: int, steps: int, batching: str, batch_size: int | None = None,
                     sampling_probability: float | None = None) -> list[np.ndarray]:
    """The sample indices of each step: all n (full); Poisson masks, one random(n) per step, record i in iff its
    uniform < q (q = batch_size/n unless ``sampling_probability``); per epoch one permutation(n) cut into ⌊n/B⌋
    sorted batches of B (shuffle)."""
    if batching == "full":
        return [np.arange(n)] * steps
    rng = Streams(noise_seed).generator("dpzero", "sampling")
    if batching == "poisson":
        q = batch_size / n if sampling_probability is None else sampling_probability
        return [np.flatnonzero(rng.random(n) < q) for _ in range(steps)]
    per_epoch, out = n // batch_size, []
    for t in range(steps):
        if t % per_epoch == 0:
            permutation = rng.permutation(n)
        k = t % per_epoch
        out.append(np.sort(permutation[k * batch_size:(k + 1) * batch_size]))
    return out
