"""Tests for reference.selection: Laplace report-noisy-min (bgm21 Algorithm 1, lines 6 and 11).

Frequencies against the exact law (chi-square at level 1e-6 with a computed power against a wrong-scale mutant),
shift invariance, the ε = 2Δ/s guarantee on exact probabilities of neighbouring score vectors (and that the factor 2
is needed), and hostile inputs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from reference.rng import Streams
from reference.selection import (
    centred_score_sensitivity,
    laplace_noisy_argmin,
    noisy_argmin_probabilities,
    report_noisy_min_epsilon,
)

LEVEL = 1e-6


def _two_candidate_probability(d: float, s: float) -> float:
    """P(c_0 + U_0 < c_1 + U_1) for d = c_1 − c_0: the Laplace-difference CDF, 1 − ½e^{−d/s}(1 + d/(2s)) for d ≥ 0."""
    t = abs(d) / s
    tail = 0.5 * math.exp(-t) * (1.0 + t / 2.0)
    return 1.0 - tail if d >= 0 else tail


@pytest.mark.parametrize("d, s", [(0.0, 1.0), (0.5, 1.0), (-2.0, 0.7), (30.0, 1.0), (-12.0, 0.5)])
def test_exact_probabilities_match_closed_form_for_two_candidates(d, s):
    p, err = noisy_argmin_probabilities([0.0, d], s, return_error=True)
    want = _two_candidate_probability(d, s)
    assert p[0] == pytest.approx(want, rel=1e-10)
    assert p[1] == pytest.approx(_two_candidate_probability(-d, s), rel=1e-10)
    assert np.all(err < 1e-10)


def test_exact_probabilities_basic_properties():
    assert np.allclose(noisy_argmin_probabilities([1.0] * 4, 0.3), 0.25, atol=1e-12)
    p = noisy_argmin_probabilities([0.0, 0.2, 0.9, 3.0], 0.5)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.diff(p) < 0)  # a lower score is selected more often
    assert noisy_argmin_probabilities([5.0], 1.0).tolist() == [1.0]


def _frequencies(scores, scale, seed, N):
    streams = Streams(seed)
    counts = np.zeros(len(scores), dtype=np.int64)
    for i in range(N):
        counts[laplace_noisy_argmin(scores, scale, streams.generator("test", "noise", i))] += 1
    return counts


def test_frequencies_match_exact_probabilities_chi_square_with_power():
    scores, scale, N = [0.0, 0.3, 0.7, 1.5, 1.5], 0.8, 20_000
    p = noisy_argmin_probabilities(scores, scale)
    df = len(scores) - 1
    critical = stats.chi2.ppf(1.0 - LEVEL, df)
    # Power against a near-miss mutant that draws Lap(1.3·scale): noncentrality N·Σ(q − p)²/p.
    q = noisy_argmin_probabilities(scores, 1.3 * scale)
    noncentrality = N * np.sum((q - p) ** 2 / p)
    power = stats.ncx2.sf(critical, df, noncentrality)
    assert power > 0.999, f"chi-square power against the 1.3x-scale mutant is only {power:.4f}"
    counts = _frequencies(scores, scale, seed=2024, N=N)
    assert stats.chisquare(counts, N * p).pvalue > LEVEL
    mutant_counts = _frequencies(scores, 1.3 * scale, seed=2025, N=N)
    assert stats.chisquare(mutant_counts, N * p).pvalue < LEVEL  # the test does reject the mutant


def test_shift_invariance_with_shared_noise_and_in_law():
    scores = np.array([0.4, -1.0, 2.5, 0.0])
    for i in range(200):
        g1 = Streams(5).generator("noise", i)
        g2 = Streams(5).generator("noise", i)
        assert laplace_noisy_argmin(scores, 0.6, g1) == laplace_noisy_argmin(scores + 123.25, 0.6, g2)
    assert np.allclose(noisy_argmin_probabilities(scores, 0.6), noisy_argmin_probabilities(scores - 7.0, 0.6), rtol=1e-10)


def test_draw_schedule_is_one_laplace_call():
    scores = np.array([0.1, 0.0, 0.3])
    g = np.random.default_rng(3)
    u = np.random.default_rng(3).laplace(0.0, 0.5, 3)
    assert laplace_noisy_argmin(scores, 0.5, g) == int(np.argmin(scores + u))
    ref = np.random.default_rng(3)
    ref.laplace(0.0, 0.5, 3)
    assert g.random() == ref.random()  # exactly one Laplace draw of length J was consumed


def _max_log_ratio(a, b, s):
    pa, pb = noisy_argmin_probabilities(a, s), noisy_argmin_probabilities(b, s)
    return float(np.max(np.abs(np.log(pa) - np.log(pb))))


def test_epsilon_dp_on_exact_probabilities_of_neighbouring_scores():
    rng = np.random.default_rng(17)
    for _ in range(60):
        J = int(rng.integers(2, 6))
        s = float(rng.uniform(0.2, 2.0))
        a = rng.uniform(-3, 3, J)
        sensitivity = float(rng.uniform(0.05, 1.5))
        b = a + rng.uniform(-sensitivity, sensitivity, J) + rng.normal() * 10  # common shift is free
        delta_c = centred_score_sensitivity(a, b)
        assert delta_c <= sensitivity + 1e-12
        eps = report_noisy_min_epsilon(delta_c, s)
        assert _max_log_ratio(a, b, s) <= eps * (1 + 1e-9) + 1e-12


def test_factor_two_is_needed_and_monotone_case_gets_delta_over_s():
    s, delta = 1.0, 0.5
    a = np.array([0.0, 40.0])
    b = a + np.array([delta, -delta])  # scores move in opposite directions
    ratio = _max_log_ratio(a, b, s)
    assert ratio > 1.9 * delta / s  # far above the monotone bound Δ/s
    assert ratio <= report_noisy_min_epsilon(centred_score_sensitivity(a, b), s)
    # monotone move (all scores up by amounts in [0, Δ]): centred sensitivity Δ/2, ε = Δ/s (Dwork–Roth Claim 3.9)
    c = a + np.array([delta, 0.0])
    assert centred_score_sensitivity(c, a) == pytest.approx(delta / 2)
    assert report_noisy_min_epsilon(centred_score_sensitivity(c, a), s) == pytest.approx(delta / s)
    assert _max_log_ratio(a, c, s) <= delta / s * (1 + 1e-9)


def test_report_noisy_min_epsilon_values():
    assert report_noisy_min_epsilon(1.0, 4.0) == 0.5
    assert report_noisy_min_epsilon(0.0, 1.0) == 0.0


@pytest.mark.parametrize(
    "scores, scale, rng, exc",
    [
        ([], 1.0, np.random.default_rng(0), ValueError),
        ([0.0, float("nan")], 1.0, np.random.default_rng(0), ValueError),
        ([0.0, float("inf")], 1.0, np.random.default_rng(0), ValueError),
        ([[0.0, 1.0]], 1.0, np.random.default_rng(0), ValueError),
        (np.array([True, False]), 1.0, np.random.default_rng(0), TypeError),
        (["a", "b"], 1.0, np.random.default_rng(0), TypeError),
        ([0.0, 1.0], 0.0, np.random.default_rng(0), ValueError),
        ([0.0, 1.0], -1.0, np.random.default_rng(0), ValueError),
        ([0.0, 1.0], float("nan"), np.random.default_rng(0), ValueError),
        ([0.0, 1.0], float("inf"), np.random.default_rng(0), ValueError),
        ([0.0, 1.0], True, np.random.default_rng(0), TypeError),
        ([0.0, 1.0], 1.0, np.random.RandomState(0), TypeError),
        ([0.0, 1.0], 1.0, 0, TypeError),
    ],
)
def test_hostile_noisy_argmin(scores, scale, rng, exc):
    with pytest.raises(exc):
        laplace_noisy_argmin(scores, scale, rng)


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda: noisy_argmin_probabilities([], 1.0), ValueError),
        (lambda: noisy_argmin_probabilities([0.0, 1.0], 0.0), ValueError),
        (lambda: noisy_argmin_probabilities([0.0, float("nan")], 1.0), ValueError),
        (lambda: noisy_argmin_probabilities([1e308, -1e308], 1.0), ValueError),
        (lambda: report_noisy_min_epsilon(-1.0, 1.0), ValueError),
        (lambda: report_noisy_min_epsilon(1.0, 0.0), ValueError),
        (lambda: report_noisy_min_epsilon(float("nan"), 1.0), ValueError),
        (lambda: report_noisy_min_epsilon(1e308, 1e-308), ValueError),
        (lambda: report_noisy_min_epsilon("1", 1.0), TypeError),
        (lambda: centred_score_sensitivity([0.0, 1.0], [0.0]), ValueError),
        (lambda: centred_score_sensitivity([0.0], [float("inf")]), ValueError),
    ],
)
def test_hostile_probabilities_and_epsilon(call, exc):
    with pytest.raises(exc):
        call()
