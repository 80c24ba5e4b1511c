"""The torch DPZero backend audited end to end (``empirical_dp.dpzero_torch``; dpzero Alg 2, App. E; erratum
dpzero.E13): the white-box transcript audit and its planted seed leak, the final model as a function of the
releases, every published byte rebuilt from the releases and public inputs, and no published seed regenerating
the noise."""

import math
import zlib

import numpy as np
import pytest
from scipy.stats import chi2, norm

torch = pytest.importorskip("torch")

from empirical_dp import dpzero_torch as dt  # noqa: E402
from empirical_dp.audit import audit  # noqa: E402
from empirical_dp.dpzero_scenarios import linear_loss  # noqa: E402
from empirical_dp.published import candidate_seeds  # noqa: E402
from reference.algorithms import dpzero as reference_dpzero  # noqa: E402
from reference.rng import Streams  # noqa: E402

#: The quick audits' confidence: a correct scenario is reported "violation" with probability <= 1e-6.
CONFIDENCE = 1 - 1e-6
#: Trials per data set of the small white-box audits (select 5 %, count 95 %).
TRIALS = 200


def _name_seed(name: str) -> int:
    """A test's audit seed, derived from its name (never tuned)."""
    return zlib.crc32(name.encode())


def test_torch_releases_are_the_reference_releases_and_theta_T_is_their_post_processing():
    """White-box premise: each trial's transcript is the reference algorithm's (same plan, streams and directions
    with ``direction_blocks``), bitwise; and θ_T = −α Σ_t ŝ_t u_t, the linear map the black-box law assumes."""
    setup = dt.torch_run_setup(**dt.TORCH_RUN_SETTINGS)
    run = setup.run
    seeds = np.array([_name_seed("torch releases") + k for k in range(3)])
    for which in (0, 1):
        data = setup.pair.datasets[which]
        releases = dt.torch_runs(data, seeds, **run)
        finals = dt.torch_runs(data, seeds, output="final", **run)
        for i, seed in enumerate(seeds):
            expected = reference_dpzero.dpzero(
                linear_loss, data, np.zeros(setup.d), steps=run["steps"], step_size=run["step_size"],
                perturbation=run["perturbation"], clip_threshold=run["clip_threshold"], epsilon=run["epsilon"],
                delta=run["delta"], seed=run["public_seed"], noise_seed=int(seed), accountant="gdp_exact",
                direction_blocks=(setup.d,)).releases
            np.testing.assert_array_equal(releases[i], expected)
        # T float64 updates: each adds at most one rounding of |θ| + |αŝu| (a few units of 1e-16 relative).
        rebuilt = -(run["step_size"] * releases) @ setup.pair.directions
        scale = np.abs(run["step_size"] * releases) @ np.abs(setup.pair.directions)
        assert np.all(np.abs(finals - rebuilt) <= 4 * run["steps"] * np.finfo(float).eps * (scale + 1e-300))


def test_final_model_law_is_the_projection_formula():
    """μ_bb = (2C/(nσ))·‖P_U s‖ (module docstring, b), from the direction matrix alone; μ_bb ≤ μ."""
    setup = dt.torch_run_setup(**dt.TORCH_RUN_SETTINGS)
    law = dt.final_model_law(setup)
    u, s = setup.pair.directions, setup.pair.signs.astype(float)
    projected = u @ np.linalg.lstsq(u, s, rcond=None)[0]
    expected = 2 * setup.clip_threshold / (setup.n * setup.plan.noise_std) * np.linalg.norm(projected)
    assert law.mu == pytest.approx(expected, rel=1e-12)
    assert law.mu <= setup.mu * (1 + 1e-12)


def test_white_box_is_consistent_and_the_seed_leak_a_violation():
    """(i) Level: the real torch run against its own μ-GDP claim is "consistent" except with probability <= 1e-6
    (the audit's Bonferroni-split Clopper–Pearson and GDP bounds at CONFIDENCE). Power: with noise_seed = public
    seed + 1 the attacker's residuals are the canary's clipped means ∓C s_t/n exactly, so every counted score is
    ∓T·C/n and FP = FN = 0 of N = 190 counted trials; Clopper–Pearson at level α' = (1 − CONFIDENCE)/4 then bounds
    both error rates by 1 − α'^{1/N}, and the GDP μ_lb is at least 2Φ^{−1}(α'^{1/N}) ≈ 2.9 > the claimed 0.5016."""
    twin = dt.dpzero_torch_full_run_scenario()
    attack = dt.seed_leak_attack()
    consistent = audit(twin, TRIALS, seed=_name_seed(twin.name), confidence=CONFIDENCE)
    assert consistent.verdict == "consistent"
    same_attack = audit(twin, TRIALS, seed=_name_seed(twin.name), attack=attack, confidence=CONFIDENCE)
    assert same_attack.verdict == "consistent"

    leak = dt.dpzero_torch_seed_leak_scenario()
    result = audit(leak, TRIALS, seed=_name_seed(leak.name), attack=attack, confidence=CONFIDENCE)
    counted = result.count_trials
    alpha = (1 - CONFIDENCE) / 4
    mu_floor = 2 * norm.ppf(alpha ** (1 / counted))
    assert mu_floor > leak.claimed_mu  # the power statement above, from the counts alone
    assert result.verdict == "violation"
    assert (result.gdp_counts.fp, result.gdp_counts.fn) == (0, 0)
    assert result.gdp_mu_lb >= 0.99 * mu_floor  # the bound's conservative rounding (bounds._shave) costs << 1 %


@pytest.fixture(scope="module")
def published_setup():
    return dt.torch_published_setup()


@pytest.mark.parametrize("which", [0, 1])
def test_every_published_byte_is_rebuilt_from_the_releases_and_public_inputs(published_setup, which):
    """(ii) A default run (fresh entropy, default accountant) on D or D′: every file, byte for byte, is rebuilt by
    ``rebuild_publication`` from releases.csv and public inputs only (the rebuild reads neither data set; the
    manifest's creation time is the one thing copied)."""
    files = dt.run_published(published_setup, which, None)
    assert set(files) == {"releases.csv", "parameters.csv", "trajectory.csv", "ledger.json", "manifest.json"}
    rebuilt = dt.rebuild_publication(files, published_setup)
    assert rebuilt.keys() == files.keys()
    for name in files:
        assert rebuilt[name] == files[name], name


def _distances(files, setup, residual, sigma):
    """Per candidate seed c of every source, ‖r − σz_c‖²/(2σ²) (χ²_T when z_c is independent of r = σz)."""
    out = []
    for source, seeds in candidate_seeds((setup.public_seed,), setup.public_seed, files):
        for c in seeds:
            z = Streams(c).generator("dpzero", "noise").standard_normal(setup.steps)
            out.append((source, c, float(np.sum((residual - sigma * z) ** 2) / (2 * sigma**2))))
    return out


def test_no_published_seed_regenerates_the_noise(published_setup):
    """(iii) The run's residual r = ŝ − m (m the canary's known clipped means) is σ·z of its secret. For a candidate
    c independent of the secret, ‖r − σz_c‖²/(2σ²) ~ χ²_T; every candidate (the public seed, the offsets P + k,
    every integer token of every published file) must exceed the χ²_T quantile at 1e-9/K (K candidates: a false
    failure has probability <= 1e-9), while the real secret gives ~0 (so the check can fail)."""
    setup, sigma = published_setup, published_setup.noise_std
    secret = int(Streams(_name_seed("seed attack")).generator("test").integers(2**62)) * 2**60 + 12345
    files = dt.run_published(setup, 1, secret)
    releases = np.array([float(line.split(",")[2]) for line in files["releases.csv"].splitlines()[1:]])
    residual = releases - setup.means[1]
    distances = _distances(files, setup, residual, sigma)
    floor = chi2.ppf(1e-9 / len(distances), setup.steps)
    assert len(distances) > 130  # the public seed, 130 offsets and the files' tokens
    assert min(d for _, _, d in distances) > floor, min(distances, key=lambda item: item[2])
    secret_z = Streams(secret).generator("dpzero", "noise").standard_normal(setup.steps)
    assert np.sum((residual - sigma * secret_z) ** 2) / (2 * sigma**2) < 1e-20


def test_a_seed_derived_from_the_public_seed_is_regenerated(published_setup):
    """The planted publication (noise_seed = P + 1): the candidate P + 1 of "seed offsets" regenerates the noise
    (distance ~0), the feature the published audit selects."""
    leak = dt.torch_published_scenario("public_seed_noise")
    setup = leak.setup
    files = leak.publish_trial(Streams(_name_seed("planted publication")).generator("test"), 1)
    releases = np.array([float(line.split(",")[2]) for line in files["releases.csv"].splitlines()[1:]])
    distances = _distances(files, setup, releases - setup.means[1], setup.noise_std)
    hits = {(source, c) for source, c, d in distances if d < 1e-20}
    assert ("seed offsets", setup.public_seed + dt.LEAKED_SEED_OFFSET) in hits
    features = leak.features(files)
    # log-match 12 (the cap) under D′; under D the residual is off by the canary's means (rms C/n = 0.02 against
    # rms(r) + rms(σz) ≈ 2σ ≈ 5.4), a log-match ≈ 2.4, so the feature is ≈ 9.6
    assert features["regenerated[seed offsets]"] > 9
    assert math.isfinite(features["release_score"])


def test_write_publication_and_refusals(published_setup, tmp_path):
    """``write_publication`` writes the files and refuses a non-empty directory unless overwrite;
    ``publication`` refuses settings it writes itself and a held-out metric of the wrong length, naming them."""
    from reference.torch_backend import publish

    files = dt.run_published(published_setup, 0, None)
    out = publish.write_publication(files, tmp_path / "run")
    assert {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()} == files
    with pytest.raises(ValueError, match="out_dir"):
        publish.write_publication(files, out)
    publish.write_publication(files, out, overwrite=True)

    s = published_setup.settings
    model = dt.linear_model(s["d"])
    from reference.torch_backend.dpzero import dpzero

    rows = torch.zeros((s["n"], s["d"]), dtype=torch.float64)
    result = dpzero(model, dt.linear_per_example_loss, rows, steps=3, step_size=0.1, perturbation=1e-3,
                    clip_threshold=1.0, epsilon=1.0, delta=1e-5, seed=1)
    with pytest.raises(ValueError, match="settings"):
        publish.publication(result, settings={"dtype": "float16"})
    with pytest.raises(ValueError, match="held_out"):
        publish.publication(result, held_out=[0.0, 1.0])
    assert "nonprivate" not in "".join(publish.publication(result))
