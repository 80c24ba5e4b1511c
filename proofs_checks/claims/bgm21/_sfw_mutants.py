"""Mutants of the ``RecursiveGradientEstimator`` protocol shared by the bgm21 estimator claims (private to the folder).

The protocol is a class; a mutant replaces it by a factory that builds the subject's own estimator and wraps it, so
that ``start`` and ``update`` can be changed one at a time while the recursion itself stays the subject's.
"""

from __future__ import annotations

import functools

import numpy as np

from proofs_checks.authoring import mutant

__all__ = ["estimator_mutant", "BiasedDifference", "DroppedDifference", "HalfBatch", "LouderNoise"]


class _Wrapped:
    """The subject's estimator (``inner``) built on the same arguments; subclasses change what they need."""

    def __init__(self, inner, gradient, data):
        self._inner, self._gradient, self._data = inner, gradient, np.asarray(data, dtype=np.float64)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def start(self, w, batch, noise=None):
        return self._inner.start(w, batch, noise)

    def update(self, w, w_prev, batch, eta, difference_noise=None, gradient_noise=None):
        return self._inner.update(w, w_prev, batch, eta, difference_noise, gradient_noise)


class BiasedDifference(_Wrapped):
    """Δ^t computed ``factor`` times too large (a wrong normalisation of the difference term only): the wrapper
    carries the linear correction c_t = (1 − η_t)(c_{t−1} + (factor − 1)·Δ^t) of the recursion of line 11."""

    factor = 1.08

    def start(self, w, batch, noise=None):
        self._correction = 0.0
        return self._inner.start(w, batch, noise)

    def update(self, w, w_prev, batch, eta, difference_noise=None, gradient_noise=None):
        out = np.asarray(self._inner.update(w, w_prev, batch, eta, difference_noise, gradient_noise))
        rows = self._data[np.asarray(batch)]
        w, w_prev = np.asarray(w), np.asarray(w_prev)
        delta = np.mean([np.asarray(self._gradient(w, z)) - np.asarray(self._gradient(w_prev, z)) for z in rows],
                        axis=0)
        self._correction = (1.0 - eta) * (self._correction + (self.factor - 1.0) * delta)
        return out + self._correction


class DroppedDifference(BiasedDifference):
    """Δ^t left out of line 11 altogether (factor 0)."""

    factor = 0.0


class HalfBatch(_Wrapped):
    """Every batch read only up to its first half (rounded up): unbiased, with about twice the variance."""

    def start(self, w, batch, noise=None):
        batch = np.asarray(batch)
        return self._inner.start(w, batch[: (batch.shape[0] + 1) // 2], noise)

    def update(self, w, w_prev, batch, eta, difference_noise=None, gradient_noise=None):
        batch = np.asarray(batch)
        return self._inner.update(w, w_prev, batch[: (batch.shape[0] + 1) // 2], eta, difference_noise, gradient_noise)


class LouderNoise(_Wrapped):
    """Both Gaussian noise terms √1.1 times too large (their variances 10 % too large)."""

    scale = 1.1**0.5

    def start(self, w, batch, noise=None):
        return self._inner.start(w, batch, None if noise is None else self.scale * np.asarray(noise))

    def update(self, w, w_prev, batch, eta, difference_noise=None, gradient_noise=None):
        dn = None if difference_noise is None else self.scale * np.asarray(difference_noise)
        gn = None if gradient_noise is None else self.scale * np.asarray(gradient_noise)
        return self._inner.update(w, w_prev, batch, eta, dn, gn)


def estimator_mutant(name: str, description: str, wrapper: type) -> object:
    """A mutant of ``RecursiveGradientEstimator``: the subject's estimator wrapped by ``wrapper``."""

    def transform(original):
        @functools.wraps(original)
        def build(gradient, data, d):
            return wrapper(original(gradient, data, d), gradient, data)

        return build

    return mutant(name, description, "RecursiveGradientEstimator", transform)
