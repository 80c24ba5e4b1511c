"""dpzero §2 clipping and sensitivity; zo_o2nc Alg 5, Theorem 4.3 tree aggregation:
vectorized float64 twins of ``reference.mechanisms``.

Same names, signatures and semantics as the reference; the differences are:

* Everything is float64; mpmath inputs are rounded to float64 first.
* ``clip_scalar`` accepts arrays of any shape (elementwise); ``clip_vector`` accepts shape (..., d) and
  clips each vector along the last axis, leading axes being a batch.
* ``tree_aggregate`` accepts leading replicate axes, (..., n, d), on either argument (they broadcast),
  and computes the release as prefix sums plus the Fenwick sum R ξ, R[t, b] = 1[b ∈ R(t)], without
  forming R: ⌊log2 n⌋ + 1 gathers instead of Theorem 4.3's node-by-node loop.
* Two extra helpers for batched simulation: ``tree_noise_all`` (all ξ of an epoch in one draw) and
  ``tree_prefix_noise`` (R ξ, i.e. TREE(1..T)).

Integer facts (NODE, Fenwick chains, participation counts), the sensitivity formula, the exact tree
covariance and the streaming ``TreeMechanism`` (sequential by nature, O(d log t) per call) are the
reference's own objects, re-exported.

Randomness: the same draws in the same order and shape as the reference (one ``standard_normal``
call per Gaussian mechanism; ``tree_noise_all`` = T successive ``TreeMechanism`` calls), so outputs
agree draw for draw; the tree noise sums are added in NODE order, so ``tree_prefix_noise`` equals the
streaming TREE(t) bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..mechanisms import (
    NEIGHBOUR_RELATIONS,
    TreeMechanism,
    _check_noise_stds,
    _check_rng,
    _real_array,
    clipped_mean_sensitivity,
    fenwick_chain,
    lowbit,
    max_participation_count,
    participation_chain,
    participation_count,
    tree_node,
    tree_node_fenwick,
    tree_noise_covariance,
)
from ..precision import to_float
from ..validation import check_int, check_real

__all__ = [
    "clip_scalar",
    "clip_vector",
    "clipped_mean",
    "clipped_mean_sensitivity",
    "gaussian_mechanism",
    "tree_node",
    "lowbit",
    "fenwick_chain",
    "tree_node_fenwick",
    "participation_chain",
    "participation_count",
    "max_participation_count",
    "tree_noise_covariance",
    "tree_aggregate",
    "tree_noise_all",
    "tree_prefix_noise",
    "TreeMechanism",
    "NEIGHBOUR_RELATIONS",
]


def _float_array(name: str, value, *, ndim=None) -> np.ndarray:
    arr = _real_array(name, value, ndim=ndim)
    return to_float(arr) if arr.dtype == object else arr


def _is_scalar(value) -> bool:
    return np.ndim(value) == 0


# ---------------------------------------------------------------------------------------------------
# Clipping


def clip_scalar(value, clip_threshold):
    """clip_C(a) = max(−C, min(C, a)) elementwise, for a scalar or an array of any shape."""
    clip_threshold = float(check_real("clip_threshold", clip_threshold, positive=True, allow_inf=True))
    if _is_scalar(value):
        a = float(check_real("value", value[()] if isinstance(value, np.ndarray) else value))
        return max(-clip_threshold, min(clip_threshold, a))
    return np.clip(_float_array("value", value), -clip_threshold, clip_threshold)


def clip_vector(vector, clip_threshold):
    """clip_C(v) = v·min(1, C/‖v‖) along the last axis of shape (..., d); clip_C(0) = 0.

    Same scaled evaluation as the reference (w = v / max|v|, so ‖v‖² never over/underflows).
    """
    clip_threshold = float(check_real("clip_threshold", clip_threshold, positive=True, allow_inf=True))
    v = _float_array("vector", vector)
    if v.ndim == 0:
        raise ValueError("vector must have at least 1 dimension (shape (..., d)), got a scalar")
    if v.shape[-1] == 0:
        raise ValueError(f"vector must have at least one entry along the last axis, got shape {v.shape}")
    if clip_threshold == np.inf:
        return v.copy()
    largest = np.max(np.abs(v), axis=-1, keepdims=True)
    w = v / np.where(largest > 0, largest, 1.0)
    w_length = np.linalg.norm(w, axis=-1, keepdims=True)
    needs_clip = largest * w_length > clip_threshold  # zero rows: 0 > C is False, clip_C(0) = 0
    scale = clip_threshold / np.where(needs_clip, w_length, 1.0)
    return np.where(needs_clip, w * scale, v)


def clipped_mean(values, clip_threshold, normalizer=None):
    """Σ_i clip_C(values_i) / (normalizer or n) for values of shape (n,) or (n, d) (see reference)."""
    clip_threshold = check_real("clip_threshold", clip_threshold, positive=True, allow_inf=True)
    items = _float_array("values", values, ndim=(1, 2))
    if normalizer is not None:
        normalizer = float(check_real("normalizer", normalizer, positive=True))
    n = items.shape[0]
    if n == 0 and normalizer is None:
        raise ValueError("values must contain at least one item when normalizer is None (mean of nothing)")
    if items.ndim == 2 and items.shape[1] == 0:
        raise ValueError(f"values must have at least one column, got shape {items.shape}")
    if items.ndim == 1:
        clipped = np.clip(items, -float(clip_threshold), float(clip_threshold))
        total = float(np.sum(clipped))
    else:
        total = np.sum(clip_vector(items, clip_threshold), axis=0) if n else np.zeros(items.shape[1])
    return total / (n if normalizer is None else normalizer)


# ---------------------------------------------------------------------------------------------------
# Gaussian mechanism


def gaussian_mechanism(value, noise_std, rng):
    """value + σ·N(0, I); one ``rng.standard_normal`` call of shape ``np.shape(value)`` (scalar: no size).

    σ = 0 still draws (see the reference).
    """
    noise_std = float(check_real("noise_std", noise_std, nonnegative=True))
    _check_rng(rng)
    if _is_scalar(value):
        q = float(check_real("value", value[()] if isinstance(value, np.ndarray) else value))
        return q + noise_std * rng.standard_normal()
    values = _float_array("value", value)
    return values + noise_std * rng.standard_normal(values.shape)


# ---------------------------------------------------------------------------------------------------
# Tree aggregation


def _check_stream(name: str, value) -> np.ndarray:
    arr = _float_array(name, value)
    if arr.ndim < 2 or arr.shape[-2] == 0 or arr.shape[-1] == 0:
        raise ValueError(f"{name} must have shape (..., n, d) with n, d >= 1, got {arr.shape}")
    return arr


def tree_prefix_noise(node_noise):
    """TREE(t) = Σ_{b∈R(t)} ξ_b for t = 1..n, i.e. R ξ with R[t, b] = 1[b ∈ R(t)] (zo_o2nc Alg 5).

    node_noise: ξ of shape (..., n, d), row b−1 = ξ_b (already scaled). Returns shape (..., n, d).
    The ξ_b are added in increasing b — the order of NODE(t) — one bit of t at a time from the top:
    the k-th node of NODE(t) has right endpoint b = t with its bits below the k-th set bit cleared.
    """
    xi = _check_stream("node_noise", node_noise)
    n = xi.shape[-2]
    times = np.arange(1, n + 1)
    out = np.zeros(xi.shape)
    for level in range(n.bit_length() - 1, -1, -1):
        bit = 1 << level
        rows = (times & bit) != 0  # t has this bit set: one more node in NODE(t)
        right_ends = times[rows] & ~(bit - 1)  # b = t truncated to its bits ≥ level
        out[..., rows, :] += xi[..., right_ends - 1, :]
    return out


def tree_aggregate(leaf_values, node_noise):
    """Row t−1 = Σ_{i≤t} m_i + TREE(t) (Thm 4.3 release), as prefix sums + R ξ.

    leaf_values: m, shape (..., n, d); node_noise: ξ, shape (..., n, d); leading axes broadcast.
    """
    m = _check_stream("leaf_values", leaf_values)
    xi = _check_stream("node_noise", node_noise)
    if m.shape[-2:] != xi.shape[-2:]:
        raise ValueError(
            f"node_noise must end in the (n, d) of leaf_values {m.shape[-2:]}, got shape {xi.shape}"
        )
    try:
        np.broadcast_shapes(m.shape, xi.shape)
    except ValueError:
        raise ValueError(
            f"node_noise leading axes {xi.shape[:-2]} do not broadcast with leaf_values' {m.shape[:-2]}"
        ) from None
    return np.cumsum(m, axis=-2) + tree_prefix_noise(xi)


def tree_noise_all(noise_stds, d, rng):
    """The (T, d) matrix of ξ_t = σ_t z_t drawn as ONE ``rng.standard_normal((T, d))`` call.

    Identical (bit for bit) to the ``node_noise`` of a ``TreeMechanism(d, noise_stds, rng)`` called
    with t = 1..T on a generator in the same state.
    """
    stds = _check_noise_stds(noise_stds)
    stds = to_float(stds) if stds.dtype == object else stds
    d = check_int("d", d, minimum=1)
    _check_rng(rng)
    return stds[:, None] * rng.standard_normal((stds.shape[0], d))
