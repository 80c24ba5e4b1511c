"""Audit of everything a default bgm21 run publishes (empirical_dp/bgm21_published.py): the pipeline is the shipped
``run_bgm21`` (Algorithm 6 ``nsfw``, Algorithm 1 ``polysfw``) with default arguments on the canary pair, the
attacker's model (the pair's noiseless estimates, the secret streams' noise) is the algorithm's, the claims are the
ledger's (checked against closed forms: Dong–Roth–Su's μ-GDP profile, Kairouz–Oh–Viswanath's exact composition of
pure steps), every published byte and the printed record are functions of the releases and public inputs, no seed
found in the files regenerates the secret noise, the default publications are consistent and the planted leak (the
noise seed computed from the public seed) is a violation named by its feature. For Algorithm 5 (noisy-fw),
Phased-SGD and Algorithm 2 (prox-smd), default runs on a neighbouring pair: every published byte is rebuilt from the
releases and public inputs, and no seed found in the files regenerates the secret noise (a known secret and a secret
computed from the public seed are found). The registered planted budget is run by tests/test_planted.py."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from empirical_dp import planted
from empirical_dp.bgm21_published import (
    BGM21_PUBLISHED_BUILTINS,
    OTHER_STREAMS,
    STREAM_OF,
    VARIANTS,
    Bgm21PublishedAudit,
    CanaryBuilder,
    PipelineMismatch,
    _poly_regeneration,
    _step_bounds,
    bgm21_published_scenario,
    bgm21_published_setup,
    canary_records,
    neighbour_builder,
    neighbour_slot,
    publish,
    read_releases,
    run_pipeline,
    secret_draw,
    step_noise,
)
from empirical_dp.published import PublishedAudit, audit_published, candidate_seeds
from empirical_dp.registry import BGM21_PUBLISHED_BUILTIN_NAMES, SCENARIOS
from empirical_dp.scenarios import Scenario
from reference import runner_bgm21 as bgm21_runner
from reference.algorithms.bgm21 import noisy_frank_wolfe, phased_sgd, privacy_report, prox_guided_psmd
from reference.algorithms.bgm21_gll import NoisyFWDebugTrace, PhasedSGDDebugTrace
from reference.algorithms.bgm21_prox import ASCDebugTrace
from reference.algorithms.bgm21_sfw import NonPrivateDebugTrace
from reference.batching import public_order
from reference.gll import AbsoluteLoss

FILES = {"releases.csv", "trace.csv", "output.csv", "diagnostics.json", "ledger.json", "manifest.json"}
SECRET = 2**90 + 7
LOG_1_OVER_DELTA = math.log(1e6)
QUICK_CONFIDENCE = 1 - 1e-6


@pytest.fixture(scope="module")
def nsfw():
    return bgm21_published_setup("nsfw")


@pytest.fixture(scope="module")
def polysfw():
    return bgm21_published_setup("polysfw")


def _laplace_argmin_probability(z: np.ndarray, j: int) -> float:
    """P(argmin_k (z_k + U_k) = j), U_k iid Lap(1): ∫ ½e^{−|x|} Π_{k≠j} P(U > z_j − z_k + x) dx by scipy's quad on the
    pieces between the kinks (an independent integral, not reference.selection's)."""
    rivals = np.delete(z, j)

    def survival(t):
        return 0.5 * math.exp(-t) if t >= 0 else 1.0 - 0.5 * math.exp(t)

    def integrand(x):
        return 0.5 * math.exp(-abs(x)) * math.prod(survival(z[j] - zk + x) for zk in rivals)

    cuts = sorted({0.0, *(float(zk - z[j]) for zk in rivals)})
    pieces = [(-np.inf, cuts[0]), *zip(cuts[:-1], cuts[1:]), (cuts[-1], np.inf)]
    return sum(integrate.quad(integrand, a, b, epsabs=1e-14, epsrel=1e-12)[0] for a, b in pieces)


def test_nsfw_claim_and_pair_from_closed_forms(nsfw):
    """Printed noise factor c = 4√log(1/δ)/(bε) (§4.2, p = 2): batch B_1^1 (m = b/2 = 223) pays for two releases with
    Δ/σ = (2L0/m)/(2cL0) and Δ̂/σ̂ = (2L1D/m)/(2cL1D): μ = √2/(mc); B_0^0's release has μ = 2/(bc)."""
    b = 446
    c = 4 * math.sqrt(LOG_1_OVER_DELTA) / b
    mu = math.sqrt(2) / (223 * c)
    assert nsfw.batch == b and nsfw.n == 2048 and nsfw.d == 10
    assert nsfw.claim["claimed_mu"] == pytest.approx(mu, rel=1e-12) and nsfw.claim["delta"] == 1e-6
    assert str(nsfw.report.worst_batch) == "('B', 1, 1)" and nsfw.report.route == "gdp_exact"
    # the ledger's ε is the exact ε of that μ at δ (Dong–Roth–Su: δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2))
    eps = float(nsfw.report.epsilon)
    delta = stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
    assert delta == pytest.approx(1e-6, rel=1e-6) and delta <= 1e-6 * (1 + 1e-9)
    assert nsfw.pair == pytest.approx(2 / (b * c), rel=1e-12) == pytest.approx(mu / math.sqrt(2), rel=1e-12)
    # the canary is the pool's largest ℓ2 norm: ‖x*‖ = L0, so ∇_0^0 moves by 2L0/b, the trace's sensitivity
    problem = bgm21_runner.build_bgm21_problem("sigmoid-l2", 10)
    assert np.linalg.norm(nsfw.x_star) == pytest.approx(problem.L0, rel=1e-15)
    np.testing.assert_array_equal(nsfw.step0["means"][1] - nsfw.step0["means"][0], -2 * nsfw.x_star / b)


def test_no_record_moves_a_later_release_as_far_as_the_canary(nsfw):
    """The published innovation of a step t ≥ 1 is (1 − η)(Δ + N̂) + η(fresh + N); a record moves it by
    ‖a(z) − a(z′)‖/m ≤ 2R_x/m, a(z) = y·x·((1 − η)sech²⟨x, w0⟩ − sech²⟨x, w1⟩) (each weight in [0, 1]). The bound,
    from the printed scales, stays below the pair's μ; random records and iterate pairs stay below the bound."""
    trace, L0 = nsfw.trace, float(np.linalg.norm(nsfw.x_star))
    problem = bgm21_runner.build_bgm21_problem("sigmoid-l2", 10)
    c = 4 * math.sqrt(LOG_1_OVER_DELTA) / nsfw.batch
    bounds = _step_bounds(trace, L0)
    rng = np.random.default_rng(20210601)
    for i, t in enumerate(trace.steps):
        t, m, eta = int(t), int(trace.batch_sizes[i]), float(trace.step_sizes[i])
        if t == 0:
            assert bounds[i] == pytest.approx(nsfw.pair, rel=1e-12)
            continue
        eta_prev = 1 / math.sqrt(t)
        std = c * (t + 1) * math.hypot((1 - eta) * problem.L1 * problem.D * eta_prev, eta * L0)
        assert bounds[i] == pytest.approx(2 * L0 / m / std, rel=1e-12) and bounds[i] < 0.8 * nsfw.pair
        for _ in range(200):
            x = rng.uniform(-1, 1, 10)
            x *= L0 / np.linalg.norm(x) * rng.uniform(0.5, 1)
            w0, w1 = (v / max(1.0, np.linalg.norm(v)) for v in rng.normal(size=(2, 10)))
            plus, minus = np.append(x, 1.0), np.append(x, -1.0)
            move = sum(k * ((1 - eta) * (problem.gradient(w1, z) - problem.gradient(w0, z)) + eta * problem.gradient(
                w1, z)) for k, z in ((1, plus), (-1, minus))) / m
            assert np.linalg.norm(move) / std <= bounds[i] * (1 + 1e-12)


def test_polysfw_claim_and_pair_from_closed_forms(polysfw):
    """The worst batch B_2^1 enters 3 report-noisy-min steps, each ε0 = D·G_1/s_2 (G_1 = (2/m)((1 − η_1)L1D + η_1L0),
    s_2 = 2D(L0 + L1D)·4·√log(1/δ)/b): the exact composition of 3 ε0-DP steps (Kairouz–Oh–Viswanath) at δ = 1e-6.
    The pair's pure ε is the largest |log-ratio| of v_0^0's law, by an independent integral."""
    problem = bgm21_runner.build_bgm21_problem("sigmoid-l1", 10)
    L0, L1, D, b = problem.L0, problem.L1, 2.0, polysfw.batch
    eta1 = 1 / math.sqrt(2)
    G1 = (2 / 223) * ((1 - eta1) * L1 * D + eta1 * L0)
    s2 = 2 * D * (L0 + L1 * D) * 4 * math.sqrt(LOG_1_OVER_DELTA) / b
    eps0 = D * G1 / s2

    def kov_delta(eps):  # the hockey-stick divergence of 3-fold ε0 randomized response
        p = math.exp(eps0) / (1 + math.exp(eps0))
        return sum(special.comb(3, k) * max(0.0, p ** (3 - k) * (1 - p) ** k
                                            - math.exp(eps) * p**k * (1 - p) ** (3 - k)) for k in range(4))

    exact = optimize.brentq(lambda e: kov_delta(e) - 1e-6, 0.0, 3 * eps0, xtol=1e-15, rtol=1e-14)
    claimed = polysfw.claim["claimed_epsilon"]
    assert claimed == pytest.approx(exact, rel=1e-9) and claimed >= exact * (1 - 1e-12) and claimed < 3 * eps0
    assert str(polysfw.report.worst_batch) == "('B', 2, 1)" and polysfw.claim["delta"] == 1e-6
    # v_0^0: w_0^0 = e_1, ∇_0^0 = ±x*/b with x* = L0·(0, 1, …, 1); scores ⟨V_j, ∇⟩ over the 20 vertices ±e_i
    np.testing.assert_array_equal(polysfw.x_star, np.r_[0.0, np.full(9, L0)])
    scale = 2 * D * (L0 + L1 * D) * math.sqrt(LOG_1_OVER_DELTA) / b
    assert polysfw.step0["scale"] == pytest.approx(scale, rel=1e-12)
    scores_d = np.ravel(np.column_stack([polysfw.x_star / b, -polysfw.x_star / b]))  # rows 2i: +e_i, 2i + 1: −e_i
    z = scores_d / scale
    probabilities = np.array([[_laplace_argmin_probability(sign * z, j) for j in range(20)] for sign in (1, -1)])
    np.testing.assert_allclose(np.exp(polysfw.step0["log_probabilities"]), probabilities, rtol=1e-9)
    pair = np.max(np.abs(np.log(probabilities[1] / probabilities[0])))
    assert polysfw.pair == pytest.approx(pair, rel=1e-8)
    # two scores move by ±Δ_c in pairs, never one by 2Δ_c: between half and all of B_0^0's ε0 = 2Δ_c/s_0
    eps0_first = 2 * (0.5 * D * 2 * L0 / b) / scale
    assert 0.5 * eps0_first < polysfw.pair < eps0_first and polysfw.pair < 0.31 * claimed


def test_pipeline_is_the_default_run_and_the_memo_is_exact(nsfw, polysfw):
    original = bgm21_runner.build_bgm21_problem
    for setup in (nsfw, polysfw):
        outcomes = [run_pipeline(setup.builder(1, 11), memoise=memo, noise_seed=SECRET) for memo in (True, False)]
        assert bgm21_runner.build_bgm21_problem is original  # the reference module is never modified
        settings = outcomes[0].settings
        assert settings["algorithm"] == setup.algorithm and settings["seed"] == 11 and settings["n"] == 2048
        assert settings["epsilon"] == 1.0 and settings["delta"] == 1e-6 and settings["schedule"] == "practical"
        assert settings["backend"] == ("fast" if bgm21_runner.fast_bgm21_available() else "reference")
        files = [_without_time(bgm21_runner.bgm21_publication(o, command="c")) for o in outcomes]
        assert files[0] == files[1]  # the memoised certification changes no byte
        assert outcomes[0].report == privacy_report(outcomes[0].result, 1.0, 1e-6)
        slot = int(public_order(11, 2048, key=("bgm21", STREAM_OF[setup.algorithm], "order"))[0])
        assert slot in outcomes[0].result.trace.batch_indices[0]
    with pytest.raises(PipelineMismatch, match="asked for"):
        CanaryBuilder("nsfw", 2048, 10, 0, 1)("sigmoid-l1.5", 10)
    with pytest.raises(PipelineMismatch, match="asked for"):
        CanaryBuilder("nsfw", 2048, 10, 0, 1)("sigmoid-l2", 5)


def _without_time(files):
    files = dict(files)
    manifest = json.loads(files["manifest.json"])
    manifest.pop("created")
    files["manifest.json"] = json.dumps(manifest)
    return files


def _public_outcome(outcome, algorithm: str, released):
    """The outcome rebuilt from the releases and public inputs only: the settings and the public problem
    (``prepare_bgm21``, which draws no record), the public schedule of a run on public records z = (0, 1) with the
    same public seed, the iterates rebuilt from the releases by the LMO of W, no records, no secret, a NaN debug
    trace."""
    s = outcome.settings
    prepared = bgm21_runner.prepare_bgm21(algorithm, n=s["n"], seed=s["seed"])
    problem = prepared.problem
    public_data = np.zeros((s["n"], 11))
    public_data[:, -1] = 1.0
    runner = {"nsfw": "noisy_sfw", "polysfw": "poly_sfw"}[algorithm]
    module = bgm21_runner._sfw_module(s["backend"])
    schedule = getattr(module, runner)(problem.gradient, public_data, problem.W, prepared.config, seed=s["seed"]).trace
    W, trace = problem.W, schedule
    w, iterates = np.array(problem.start, dtype=np.float64), []
    for i in range(len(trace.rounds)):
        iterates.append(w.copy())
        target = W.lmo(released[i]) if algorithm == "nsfw" else W.vertices[int(released[i])]
        if isinstance(target, tuple):
            target = target[0]
        eta = float(trace.step_sizes[i])
        w = (1.0 - eta) * w + eta * np.asarray(target, dtype=np.float64)
    iterates = np.array(iterates)
    fields = {"noisy_estimates": np.array(released)} if algorithm == "nsfw" else {"selected": np.array(released)}
    trace = dataclasses.replace(schedule, **fields)
    count = iterates.shape[0]
    nan = np.full((count, 10), np.nan)
    debug = NonPrivateDebugTrace(nan, nan, nan, np.zeros(0, np.int64), -1)
    result = dataclasses.replace(outcome.result, iterates=iterates, output=iterates[trace.output_index].copy(),
                                 final_iterate=w, trace=trace, debug=debug)
    report = privacy_report(result, s["epsilon"], s["delta"])
    measures = np.array([problem.accuracy(v) for v in iterates])
    return bgm21_runner.Bgm21Outcome(result, problem, dict(prepared.settings), prepared.params, prepared.config,
                                     report, iterates, measures, int(trace.output_index),
                                     float(problem.accuracy(problem.start)))


@pytest.mark.parametrize("algorithm, which", [("nsfw", 0), ("nsfw", 1), ("polysfw", 0), ("polysfw", 1)])
def test_every_published_byte_is_a_function_of_the_releases_and_public_inputs(nsfw, polysfw, algorithm, which):
    """The files, the printed record (manifest.json's "summary", ``dpref run bgm21``'s record) and its rendering are
    the same when rebuilt from the releases and public inputs alone."""
    setup = nsfw if algorithm == "nsfw" else polysfw
    outcome = run_pipeline(setup.builder(which, 2**61 + 3))  # fresh operating-system entropy
    trace = outcome.result.trace
    released = trace.noisy_estimates if algorithm == "nsfw" else trace.selected
    public = _public_outcome(outcome, algorithm, released)
    assert _without_time(bgm21_runner.bgm21_publication(outcome, command="c")) == _without_time(
        bgm21_runner.bgm21_publication(public, command="c"))
    assert bgm21_runner.bgm21_summary(outcome) == bgm21_runner.bgm21_summary(public)
    assert bgm21_runner.render_bgm21(bgm21_runner.bgm21_summary(outcome)) == bgm21_runner.render_bgm21(
        bgm21_runner.bgm21_summary(public))
    with pytest.raises(ValueError, match="include_nonprivate"):
        bgm21_runner.bgm21_publication(outcome, command="c", include_nonprivate=True)


def test_trials_publish_every_file_with_fresh_seeds(nsfw):
    first, second = (publish(nsfw, np.random.default_rng(5), 0) for _ in range(2))
    assert set(first) == set(second) == FILES
    assert json.loads(first["ledger.json"])["seed"] == json.loads(second["ledger.json"])["seed"]
    assert not np.array_equal(read_releases(first, "nsfw", 10), read_releases(second, "nsfw", 10))  # fresh entropy
    ledger = json.loads(first["ledger.json"])
    assert ledger["secret_seed_source"] == "os_entropy" and ledger["route"] == "gdp_exact"
    assert ledger["epsilon_spent"] == float(nsfw.report.epsilon) and ledger["delta"] == 1e-6
    third = publish(nsfw, np.random.default_rng(6), 0)
    assert json.loads(third["ledger.json"])["seed"] != ledger["seed"]  # a fresh public seed per trial
    a, b = (publish(nsfw, np.random.default_rng(5), 1, proxy=True) for _ in range(2))
    np.testing.assert_array_equal(read_releases(a, "nsfw", 10), read_releases(b, "nsfw", 10))
    leaky = bgm21_published_setup("nsfw_public_seed_noise")
    c, d = (publish(leaky, np.random.default_rng(7), 1) for _ in range(2))
    np.testing.assert_array_equal(read_releases(c, "nsfw", 10), read_releases(d, "nsfw", 10))  # seed + 1: no secret


def _candidates(files):
    seed = json.loads(files["ledger.json"])["seed"]
    return candidate_seeds({seed, 0}, seed, files)


def test_features_read_every_file_and_the_release_score_is_the_likelihood_ratio(nsfw, polysfw):
    for setup in (nsfw, polysfw):
        audit = Bgm21PublishedAudit(setup, "bgm21-published-test")
        files = publish(setup, np.random.default_rng(0), 1)
        features = audit.features(files)
        for name in FILES:
            assert features[f"file:{name}"] == 1.0 and f"regenerated[text:{name}]" in features
        assert {"regenerated[public seeds]", "regenerated[seed offsets]", "release_score", "completed"} <= set(features)
        assert "trace.csv:batch_size[0]" in features and "output.csv:population_measure[0]" in features
        assert "manifest.json:summary.epsilon_spent" in features and "ledger.json:epsilon_spent" in features
        assert not any(name.startswith("releases.csv:") for name in features)
        released = read_releases(files, setup.algorithm, 10)
        if setup.algorithm == "nsfw":  # Gaussian log-likelihood ratio of ∇̃_0^0, scipy
            law = [stats.multivariate_normal(mean, setup.step0["sigma"] ** 2) for mean in setup.step0["means"]]
            expected = law[1].logpdf(released[0]) - law[0].logpdf(released[0])
            assert features["release_score"] == pytest.approx(expected, rel=1e-9, abs=1e-12)
            assert all(abs(v) < 1 for k, v in features.items() if k.startswith("regenerated["))
        else:
            log_p = setup.step0["log_probabilities"]
            assert features["release_score"] == log_p[1, released[0]] - log_p[0, released[0]]
            assert all(v == 0 for k, v in features.items() if k.startswith("regenerated["))
        assert audit.features({"error.txt": "ValueError: x\n"})["completed"] == 0.0


def test_a_secret_written_anywhere_is_regenerated(nsfw):
    audit = Bgm21PublishedAudit(nsfw, "bgm21-published-test")
    for which in (0, 1):
        outcome = run_pipeline(nsfw.builder(which, 9), noise_seed=SECRET)
        files = bgm21_runner.bgm21_publication(outcome, command="test")
        files["notes.json"] = json.dumps({"note": f"secret {SECRET}"})
        leaked = audit.features(files)
        sign = 1 if which else -1
        assert sign * leaked["regenerated[text:notes.json]"] > 8 and abs(leaked["regenerated[public seeds]"]) < 1


def test_polysfw_regeneration_confirms_a_seed_by_every_later_selection(polysfw):
    """With scores far apart (D favours vertex 2, D′ vertex 3), the secret's noise predicts v_0^0 under each
    hypothesis; the feature is +1 when the published v_0^0 is D′'s, −1 when it is D's, 0 for a wrong seed."""
    scores = np.zeros((2, 20))
    scores[0, 2] = scores[1, 3] = -100.0
    setup = dataclasses.replace(polysfw, step0={**polysfw.step0, "scores": scores}, _cache={})
    trace = polysfw.trace
    later = [int(np.argmin(step_noise("polysfw", SECRET, int(r), int(t), 0, 20)))
             for r, t in zip(trace.rounds[1:], trace.steps[1:])]
    for first, expected in ((3, 1.0), (2, -1.0)):
        out = {}
        _poly_regeneration(setup, [("s", [SECRET + 1, SECRET])], np.array([first, *later]), out)
        assert out["regenerated[s]"] == expected
        _poly_regeneration(setup, [("s", [SECRET + 1])], np.array([first, *later]), out)
        assert out["regenerated[s]"] == 0.0


def _nsfw_noise_matrix(trace, seed):
    return np.concatenate([np.ravel([trace.sigma[i] * z[0], trace.sigma_hat[i] * z[1]]) for i, z in enumerate(
        step_noise("nsfw", seed, int(r), int(t), 10) for r, t in zip(trace.rounds, trace.steps))])


@pytest.mark.parametrize("which", [0, 1])
def test_no_seed_found_in_the_files_regenerates_the_secret_noise(nsfw, polysfw, which):
    """Every public seed, seed offset and integer token of every file, tried as the noise seed of every step: none
    reproduces the secret noise (nsfw: N and N̂ of the NOT PRIVATE debug trace; polysfw: the 7 selections); the
    secret itself does (the positive control)."""
    for user_secret in (None, SECRET):
        outcome = run_pipeline(nsfw.builder(which, 2**60 + which), noise_seed=user_secret)
        files = bgm21_runner.bgm21_publication(outcome, command="c")
        debug, trace = outcome.result.debug, outcome.result.trace
        truth = np.concatenate([np.ravel([g, h]) for g, h in zip(debug.gradient_noise, debug.difference_noise)])
        seeds = sorted({c for _, group in _candidates(files) for c in group} | ({SECRET} if user_secret else set()))
        matches = {c: np.max(np.abs(_nsfw_noise_matrix(trace, c) - truth)) for c in seeds}
        assert all(v > 1e-3 for c, v in matches.items() if c != SECRET) and len(seeds) > 150
        if user_secret:
            assert matches[SECRET] <= 1e-15 * np.max(np.abs(truth))
        outcome = run_pipeline(polysfw.builder(which, 2**60 + which), noise_seed=user_secret)
        files = bgm21_runner.bgm21_publication(outcome, command="c")
        trace = outcome.result.trace
        scores = np.zeros((len(trace.rounds), 20))
        scores[0] = polysfw.step0["scores"][which]
        seeds = sorted({c for _, group in _candidates(files) for c in group} | ({SECRET} if user_secret else set()))
        agree = {c: int(np.sum([np.argmin(scores[i] + trace.lap_scales[i] * step_noise("polysfw", c, int(r), int(t),
                                                                                          0, 20)) == trace.selected[i]
                                for i, (r, t) in enumerate(zip(trace.rounds, trace.steps))])) for c in seeds}
        assert all(v < 7 for c, v in agree.items() if c != SECRET)
        if user_secret:
            assert agree[SECRET] == 7


def test_default_publications_are_consistent_at_the_quick_budget():
    for name, claim_type in (("bgm21_nsfw-published", "gdp"), ("bgm21_polysfw-published", "epsilon_delta")):
        outcome = audit_published(BGM21_PUBLISHED_BUILTINS[name](), 50, seed=0, confidence=QUICK_CONFIDENCE)
        result = outcome.result
        assert result.verdict == "consistent" and result.claim_type == claim_type


def test_planted_leak_is_a_violation_named_by_its_feature():
    target = bgm21_published_scenario("nsfw_public_seed_noise", training_trials=16)
    outcome = audit_published(target, planted.BGM21_PUBLISHED_BUDGET, seed=0, confidence=QUICK_CONFIDENCE)
    result = outcome.result
    assert result.verdict == "violation" and result.decided_by == "gdp_mu" and result.counts.fp == result.counts.fn == 0
    assert outcome.selection.ks == 1.0 and outcome.selection.name == "regenerated[seed offsets]"
    assert outcome.selection.files == ("releases.csv",)


def test_registered_scenarios_planted_leak_and_twin():
    assert BGM21_PUBLISHED_BUILTIN_NAMES == ("bgm21_nsfw-published", "bgm21_polysfw-published")
    for name, claim_type in zip(BGM21_PUBLISHED_BUILTIN_NAMES, ("gdp", "epsilon_delta")):
        scenario = SCENARIOS[name]
        assert isinstance(scenario, Scenario) and scenario.name == name and scenario.claim_type == claim_type
        assert scenario.delta == 1e-6 and scenario.tight_epsilon is None
    assert set(planted.BGM21_PUBLISHED_PLANTED) == set(BGM21_PUBLISHED_BUILTINS) - set(BGM21_PUBLISHED_BUILTIN_NAMES)
    for name, (variant, twin) in planted.BGM21_PUBLISHED_PLANTED.items():
        factory, attack, budget = planted.PLANTED[name]
        built = factory()
        assert built.name == name and budget == planted.BGM21_PUBLISHED_BUDGET == 50
        assert attack(built) == built.log_likelihood_ratio
        assert built.claimed_mu == SCENARIOS["bgm21_nsfw-published"].claimed_mu and built.claim_type == "gdp"
        assert VARIANTS[variant][1] == twin and planted.TWINS[name][0]().name == f"{name}-twin"
        assert len(name) <= 38
    assert isinstance(BGM21_PUBLISHED_BUILTINS["bgm21_polysfw-published"](), PublishedAudit)


# ---------------------------------------------------------------------------------------------------
# Algorithm 5 (noisy-fw), Phased-SGD and Algorithm 2 (prox-smd): every byte and every seed


OTHER = tuple(OTHER_STREAMS)
OTHER_SEED = 2**61 + 3  # the public seed of these runs (≠ the data seed 0, ≠ SECRET)


@pytest.fixture(scope="module")
def other_runs():
    """(algorithm, which, secret) → the outcome of a default run on D (which = 0) or D′ (1) with that user secret
    (None: fresh operating-system entropy), each run once for the tests below."""
    cache = {}

    def run(algorithm, which, secret=None):
        key = (algorithm, which, secret)
        if key not in cache:
            cache[key] = run_pipeline(neighbour_builder(algorithm, which, OTHER_SEED), memoise=False,
                                      noise_seed=secret)
        return cache[key]

    return run


@pytest.fixture(scope="module")
def public_schedules():
    """algorithm → its run on PUBLIC records (no private data enters: abs problems x = 0, y = 0, whose oracle output
    is 0; sigmoid rows (0, +1), whose gradient is 0) with the same public settings and seed and fresh entropy: the
    schedule every public trace field must come from."""
    cache = {}

    def schedule(algorithm):
        if algorithm not in cache:
            prepared = bgm21_runner.prepare_bgm21(algorithm, seed=OTHER_SEED)
            s, P, config = prepared.settings, prepared.problem, prepared.config
            n, d = s["n"], s["d"]
            if algorithm == "noisy-fw":
                result = noisy_frank_wolfe(np.zeros((n, d)), np.zeros(n), AbsoluteLoss(P.L0), P.W, config,
                                           public_seeds=(s["seed"], s["data_seed"]))
            elif algorithm == "phased-sgd":
                result = phased_sgd(np.zeros((n, d)), np.zeros(n), AbsoluteLoss(P.L0), P.W, P.start, config,
                                    seed=s["seed"])
            else:
                rows = np.zeros((n, d + 1))
                rows[:, -1] = 1.0
                result = prox_guided_psmd(P.gradient, rows, P.W, config, seed=s["seed"])
            cache[algorithm] = (prepared, result)
        return cache[algorithm]

    return schedule


def _csv_rows(text):
    lines = [line.split(",") for line in text.splitlines() if line.strip()]
    return lines[0], [[float(cell) for cell in row] for row in lines[1:]]


def _public_other_outcome(algorithm, files, schedule):
    """The outcome rebuilt from releases.csv (the releases: Algorithm 5's selected vertices j_t, Phased-SGD's noisy
    phase outputs w_i, Algorithm 2's solver iterates of every round) and public inputs only: the settings, problem,
    params and config from ``prepare_bgm21`` (which draws no record), every other trace field from the run on public
    records (``public_schedules``), the iterates as the paper's post-processing of the releases, the ledger's
    certification and the population measures; no records, no secret, a NaN debug trace."""
    prepared, public = schedule
    s, P = prepared.settings, prepared.problem
    header, rows = _csv_rows(files["releases.csv"])
    nan = np.full((1, s["d"]), np.nan)
    if algorithm == "noisy-fw":  # Algorithm 5 line 5: θ_{t+1} = (1 − μ_t)θ_t + μ_t V_{j_t}, μ_t = 2/(t + 2)
        assert header == ["step", "selected_vertex"] and [row[0] for row in rows] == list(range(1, len(rows) + 1))
        selected = [int(row[1]) for row in rows]
        V = P.W.vertices
        theta = V[0].copy()
        iterates = [theta.copy()]
        for t, j in enumerate(selected, start=1):
            mu = 2.0 / (t + 2.0)
            theta = (1.0 - mu) * theta + mu * V[j]
            iterates.append(theta.copy())
        trace = dataclasses.replace(public.trace, selected=tuple(selected), iterates=np.array(iterates))
        result = dataclasses.replace(public, output=theta, trace=trace, debug=NoisyFWDebugTrace(nan, nan))
        candidates, position = theta[None, :], 0
    elif algorithm == "phased-sgd":  # line 7: the output is w_k (not projected by default)
        assert header == ["phase", *(f"x_{j}" for j in range(s["d"]))] and not prepared.config.project_output
        outputs = np.array([row[1:] for row in rows])
        trace = dataclasses.replace(public.trace, phase_outputs=outputs)
        result = dataclasses.replace(public, output=outputs[-1].copy(), trace=trace,
                                     debug=PhasedSGDDebugTrace(nan, nan, nan))
        candidates, position = outputs[-1][None, :], 0
    else:  # Algorithm 2: w_r is round r's solver start (its centre), w_{r+1} = Π_W(last solver iterate); line 5
        rounds = len(public.trace.solver_traces)
        paths = [np.array([row[2:] for row in rows if int(row[0]) == r]) for r in range(1, rounds + 1)]
        assert sum(len(path) for path in paths) == len(rows)
        assert all([int(row[1]) for row in rows if int(row[0]) == r] == list(range(len(paths[r - 1])))
                   for r in range(1, rounds + 1))
        iterates = np.array([path[0] for path in paths])
        solver_traces = tuple(dataclasses.replace(solver, center=iterates[r].copy())
                              for r, solver in enumerate(public.trace.solver_traces))
        trace = dataclasses.replace(public.trace, solver_traces=solver_traces)
        debug = tuple(ASCDebugTrace(nan, nan, np.zeros(0, np.int64), -1) for _ in range(rounds))
        tau = int(trace.output_index)
        result = dataclasses.replace(public, output=iterates[tau].copy(), iterates=iterates,
                                     final_iterate=P.W.project(paths[-1][-1]), solver_iterates=tuple(paths),
                                     trace=trace, debug=debug)
        candidates, position = iterates, tau
    report = privacy_report(result, s["epsilon"], s["delta"])
    measures = np.array([P.accuracy(v) for v in candidates])
    return bgm21_runner.Bgm21Outcome(result, P, dict(s), prepared.params, prepared.config, report, candidates,
                                     measures, position, float(P.accuracy(P.start)))


@pytest.mark.parametrize("algorithm, which", [(a, w) for a in OTHER for w in (0, 1)])
def test_other_algorithms_publish_only_functions_of_the_releases_and_public_inputs(other_runs, public_schedules,
                                                                                    algorithm, which):
    """A default run of Algorithm 5, Phased-SGD or Algorithm 2 on D or D′ with fresh entropy: every file (but the
    manifest's time), the printed record and its rendering are the same when rebuilt from releases.csv and public
    inputs alone (``_public_other_outcome``); the run is the default one and its certification is the ledger's."""
    outcome = other_runs(algorithm, which)
    s = outcome.settings
    assert s["algorithm"] == algorithm and s["n"] == bgm21_runner.DEFAULT_N[algorithm] and s["d"] == 10
    twin = algorithm == "prox-smd" and bgm21_runner.fast_bgm21_available()  # the default backend: the fast twin
    assert s["backend"] == ("fast" if twin else "reference")
    assert s["epsilon"] == 1.0 and s["delta"] == 1e-6 and s["seed"] == OTHER_SEED
    defaults = {k: bgm21_runner.BGM21_DEFAULTS[k] for k, algorithms in bgm21_runner.VARIANT_ALGORITHMS.items()
                if algorithm in algorithms}
    assert {k: s[k] for k in defaults} == defaults and outcome.result.secret_seed_source == "os_entropy"
    files = bgm21_runner.bgm21_publication(outcome, command="c")
    public = _public_other_outcome(algorithm, files, public_schedules(algorithm))
    assert _without_time(files) == _without_time(bgm21_runner.bgm21_publication(public, command="c"))
    assert bgm21_runner.bgm21_summary(outcome) == bgm21_runner.bgm21_summary(public)
    assert bgm21_runner.render_bgm21(bgm21_runner.bgm21_summary(outcome)) == bgm21_runner.render_bgm21(
        bgm21_runner.bgm21_summary(public))
    assert json.loads(files["ledger.json"])["epsilon_spent"] == float(outcome.report.epsilon) <= 1.0


def _other_noise_check(algorithm, outcome, seeds):
    """seed → how many releases of the run that seed's noise reproduces, from the NOT PRIVATE debug trace:
    Algorithm 5, the selections j_t = argmin(scores_t + Lap(λ)^J) in order up to the first it misses (a wrong seed
    stops at a step where its noise picks another vertex; only a seed with the run's noise reproduces all T − 1);
    Phased-SGD, the phases whose noise σ_i·ξ_i it reproduces to 1e-12 relative; Algorithm 2, the rounds whose first
    solver noise N_1 it reproduces, or every (r, t) when the seed reproduces all R first ones."""
    trace, debug, out = outcome.result.trace, outcome.result.debug, {}
    for c in seeds:
        if algorithm == "noisy-fw":
            scores, J, count = debug.scores, debug.scores.shape[1], 0
            for t, j in enumerate(trace.selected, start=1):
                if int(np.argmin(scores[t - 1] + secret_draw(algorithm, c, (t,), J, trace.lap_scale))) != j:
                    break
                count += 1
        elif algorithm == "phased-sgd":
            count = sum(bool(np.max(np.abs(secret_draw(algorithm, c, (i,), 10, sigma) - debug.noises[i - 1]))
                             <= 1e-12 * sigma) for i, sigma in enumerate(trace.noise_stds, start=1))
        else:
            def matches(r, t, solver):
                noise = secret_draw(algorithm, c, (r, t), 10, solver.noise_std)
                return bool(np.max(np.abs(noise - debug[r - 1].noises[t - 1])) <= 1e-12 * solver.noise_std)

            solvers = trace.solver_traces
            count = sum(matches(r, 1, solver) for r, solver in enumerate(solvers, start=1))
            if count == len(solvers):
                count = sum(matches(r, t, solver) for r, solver in enumerate(solvers, start=1)
                            for t in range(1, solver.n_steps + 1))
        out[c] = count
    return out


@pytest.mark.parametrize("algorithm, which", [(a, w) for a in OTHER for w in (0, 1)])
def test_no_seed_found_in_the_other_algorithms_files_regenerates_the_secret_noise(other_runs, algorithm, which):
    """Every public seed, seed offset and integer token of every file of a default run of Algorithm 5, Phased-SGD
    or Algorithm 2, tried as the noise seed of every release (``_other_noise_check``): none reproduces any release's
    noise (Algorithm 5: none reproduces all T − 1 selections); with a known user secret the same check finds the
    secret reproducing every release (the positive control). D and D′ differ in a record the run reads: with the same
    secret their noiseless computations (gradients, phase averages) differ."""
    releases = {"noisy-fw": lambda o: len(o.result.trace.selected),
                "phased-sgd": lambda o: len(o.result.trace.noise_stds),
                "prox-smd": lambda o: sum(s.n_steps for s in o.result.trace.solver_traces)}[algorithm]
    for user_secret in (None, SECRET):
        outcome = other_runs(algorithm, which, user_secret)
        files = bgm21_runner.bgm21_publication(outcome, command="c")
        seeds = sorted({c for _, group in _candidates(files) for c in group} | ({SECRET} if user_secret else set()))
        assert OTHER_SEED in seeds and 0 in seeds and OTHER_SEED + 1 in seeds and len(seeds) > 150
        found = _other_noise_check(algorithm, outcome, seeds)
        if algorithm == "noisy-fw":
            assert all(v < releases(outcome) for c, v in found.items() if c != SECRET)
        else:
            assert all(v == 0 for c, v in found.items() if c != SECRET)
        if user_secret:
            assert found[SECRET] == releases(outcome) > 1
    debug = [other_runs(algorithm, w, SECRET).result.debug for w in (0, 1)]
    noiseless = {"noisy-fw": lambda g: g.gradients, "phased-sgd": lambda g: g.phase_averages,
                 "prox-smd": lambda g: np.concatenate([r.mean_gradients for r in g])}[algorithm]
    assert not np.array_equal(noiseless(debug[0]), noiseless(debug[1]))


def test_a_secret_computed_from_the_public_seed_is_regenerated_from_the_files():
    """The planted leak noise_seed = seed + 1 (the runner accepts it): the seed offsets of the files reproduce all R·T
    solver noises of Algorithm 2; no other candidate reproduces any (the candidate search reaches such a secret)."""
    leaky = run_pipeline(neighbour_builder("prox-smd", 1, OTHER_SEED), memoise=False, noise_seed=OTHER_SEED + 1)
    files = bgm21_runner.bgm21_publication(leaky, command="c")
    seeds = sorted({c for _, group in _candidates(files) for c in group})
    found = _other_noise_check("prox-smd", leaky, seeds)
    steps = sum(s.n_steps for s in leaky.result.trace.solver_traces)
    assert {c: v for c, v in found.items() if v} == {OTHER_SEED + 1: steps} and steps == 480


def test_other_algorithms_neighbour_slot_is_read_first():
    for algorithm, stream in OTHER_STREAMS.items():
        n = bgm21_runner.DEFAULT_N[algorithm]
        slot = neighbour_slot(algorithm, n, OTHER_SEED)
        expected = 0 if algorithm == "noisy-fw" else int(public_order(OTHER_SEED, n, key=("bgm21", stream,
                                                                                          "order"))[0])
        assert slot == expected
    with pytest.raises(PipelineMismatch, match="asked for"):
        neighbour_builder("phased-sgd", 0, 1)("abs-cube", 10)
    with pytest.raises(PipelineMismatch, match="asked for"):
        neighbour_builder("noisy-fw", 0, 1)("abs-cube", 10, beta=2.0)


@pytest.mark.parametrize("call, parameter", [
    (lambda: bgm21_published_setup("nope"), "variant"),
    (lambda: bgm21_published_setup(colour=1), "colour"),
    (lambda: bgm21_published_setup(n=1), "n"),
    (lambda: bgm21_published_setup(public_seed=-1), "public_seed"),
    (lambda: canary_records("nope", None, 10, 0, 1), "algorithm"),
    (lambda: canary_records("nsfw", bgm21_runner.build_bgm21_problem("sigmoid-l2", 2), 10, 0, 2), "which"),
    (lambda: neighbour_builder("nsfw", 0, 1), "algorithm"),
    (lambda: neighbour_builder("prox-smd", 2, 1), "which"),
    (lambda: neighbour_slot("phased-sgd", 4096, -1), "seed"),
    (lambda: secret_draw("polysfw", 1, (0,), 3, 1.0), "algorithm"),
])
def test_validation_errors_name_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()


def test_publish_rejects_a_non_generator(nsfw):
    with pytest.raises(TypeError, match="rng"):
        publish(nsfw, 0, 0)
