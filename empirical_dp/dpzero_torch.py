"""Audits of the torch DPZero backend end to end: the transcript (white-box), the final model (black-box) and
everything a torch run publishes (docs/audits.md, "DPZero on torch").

Sources:
- Zhang, Li, Thekumparampil, Oh, He 2024 (ICML), "DPZero", Alg 2 and App. E: the only data-dependent release of
  step t is ŝ_t = m_t + z_t along the PUBLIC direction u_t; the proof covers the transcript and every
  post-processing of it with public data (θ_T, a public held-out metric). Erratum dpzero.E13: the public code's
  noise is a function of the public seed.
- Dong, Roth, Su 2022 (JRSS-B) Thm 2.7, Cor. 2.13, Cor. 3.3: N(m, Σ) against N(m′, Σ) is exactly μ-GDP with
  μ = ‖Σ^{−1/2}(m′ − m)‖, and its log-likelihood ratio is the optimal (Neyman–Pearson) score.
- Nasr et al. 2021 (S&P) §4; Nasr et al. 2023 (USENIX) "Tight auditing": a worst-case canary whose clipped
  contribution is ±C along the release, the other records contributing nothing.
- Jagielski, Ullman, Oprea 2020 (NeurIPS): threshold audits and their Clopper–Pearson bounds
  (``empirical_dp.audit``); Smirnov 1939 for the published audit's feature selection (``empirical_dp.published``).

Threat model (``empirical_dp.dpzero_scenarios``): replace-one neighbours, n public; the attacker knows θ_0 = 0, the
hyper-parameters, both data sets, the public seed (so every u_t) and, depending on the scenario, the releases, the
final parameters or the whole publication; the secret seed of every trial is not known. One public seed serves all
trials (the guarantee holds given the directions).

Model. Every trial runs ``reference.torch_backend.dpzero.dpzero`` — the real torch code path (parametrised
perturbations, two batched forward passes, the reference's plan, secrets, clipping and mechanism, the in-place
update) — on a float64 ``torch.nn.Module`` with one parameter x ∈ R^d (``linear_model``) and
``per_example_loss(model, rows) = rows @ x`` (``linear_per_example_loss``: f(x; ξ) = ⟨ξ, x⟩, whose central
difference along u is ⟨ξ, u⟩ at every x). The directions are the backend's: u_t from the keys ("dpzero",
"direction", t, k) of the model's tensors (``direction_for_step(..., blocks=sizes)``), not the unblocked key, so
the pair is ``dpzero_scenarios.canary_pair`` with those blocks (``torch_canary_pair``).

Scenarios.
a. ``dpzero-torch-full-run`` (white-box): the ``dpzero-full-run`` construction — the canary ∓M·e_1 in slot 0,
   n − 1 zero records, full batch, accountant "gdp_exact", the plan's μ-GDP claim (``plan_claim``) — with T = 10
   steps (``TORCH_RUN_SETTINGS``; the law does not depend on T: "gdp_exact" calibrates σ so that the T-step
   composition is μ*(ε, δ)-GDP, μ = √T·(2C/n)/σ). Outputs (trials, T): ``TorchDPResult.releases``; score: the exact
   log-likelihood ratio (2C/(nσ²))·Σ_t s_t ŝ_t, s_t = sign⟨e_1, u_t⟩ (``dpzero_scenarios``' full-batch LLR).
b. ``dpzero-torch-final-model`` (black-box): the same runs; the attacker sees only θ_T = θ_0 − α Σ_t ŝ_t u_t.
   With U the (T, d) matrix of the u_t and ŝ = m + σz: θ_T ~ N(θ_0 − αUᵀm, α²σ²UᵀU) (U of full column rank d; the
   builder checks it). The D/D′ mean shift is −α(2C/n)Uᵀs, so θ_T is exactly μ_bb-GDP with
   μ_bb = (2C/(nσ))·‖P_U s‖ ≤ μ (P_U the orthogonal projection of R^T onto U's column space, ‖s‖ = √T), and the
   optimal score is the LLR (θ − (m_0 + m_1)/2)ᵀΣ^{−1}(m_1 − m_0) of the two Gaussians (``final_model_law``). The
   CLAIM stays the plan's (μ of the whole transcript); ``Scenario.mu`` and ``tight_epsilon`` hold μ_bb and its ε
   (yardsticks only).
c. ``dpzero_torch-published``: the whole publication (``reference.torch_backend.publish.publication``) of a
   DEFAULT torch run — no ``noise_seed`` (fresh operating-system entropy), the default accountant (Lemma 2.2, an
   (ε, δ) claim) — with a public held-out metric (the run's ``trace``: the mean loss over public rows H at each
   iterate), audited as ``empirical_dp.published`` audits the runner's publication: ``TorchPublishedAudit`` reuses
   its feature extraction (``file_features``), noise regeneration from every public seed, seed offset and integer
   token of every file (``candidate_seeds``, ``regeneration_features``), the training-split feature selection
   (``FeatureSelection``) and ``PublishedAudit``'s training, sampling and scoring. Pair: D has n zero records, D′
   the canary M·e_1 in slot 0 (shift C/n ≤ Δ per step, as ``published``). Extra feature:
   ``recomputed[heldout_metric~objective]`` compares the published per-step metric with the TRAINING objective on D
   and D′ at the iterates rebuilt from releases.csv (catches a metric computed on the training data).

Planted twins (must be violations).
- ``dpzero-torch-seed-leak``: (a) with ``noise_seed = public_seed + 1`` (``LEAKED_SEED_OFFSET``), a documented
  function of the public seed — the backend refuses only a secret EQUAL to a public seed, so no reproduction
  around that check is needed. The attacker (``seed_leak_attack``) regenerates z_t from ("dpzero", "noise") under
  P + 1 and scores Σ_t s_t (ŝ_t − σz_t) = ∓T·C/n exactly: D and D′ separate perfectly. Its twin is (a) under the
  same attacker.
- ``dpzero_torch-published-seed-leak``: (c) with the same seed rule; caught by
  ``regenerated[seed offsets]`` (P + 1 is among the guessed offsets P + k, k ∈ [−64, 64]). Twin: (c).

Randomness. ``sample(rng, trials, which)`` draws ``integers(0, 2**62, trials)`` secret noise seeds (the schedule
of ``dpzero_scenarios``; a seed equal to the public seed, probability 2^−62 per trial, is refused by the backend
with a ValueError naming noise_seed); the published audit draws as ``published.publish`` does.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from reference.algorithms.dpzero import direction_for_step, privacy_plan
from reference.fast.conversions import gaussian_epsilon
from reference.rng import Streams
from reference.secrets import SecretSeed
from reference.validation import check_int, check_probability, check_real

from .dpzero_scenarios import (
    CANARY_SCALE,
    SEED_BOUND,
    CanaryPair,
    DPZeroAuditSetup,
    _full_batch_llr,
    canary_pair,
    lemma22_epsilon,
    plan_claim,
)
from .published import (
    TRAINING_TRIALS,
    PublishedAudit,
    _draw_seed,
    _log_match,
    _noise_stream,
    _parse_csv,
    _release_column,
    candidate_seeds,
    file_features,
    regeneration_features,
)
from .scenarios import Scenario

__all__ = [
    "TORCH_RUN_SETTINGS",
    "TORCH_PUBLISHED_SETTINGS",
    "LEAKED_SEED_OFFSET",
    "linear_model",
    "linear_per_example_loss",
    "torch_directions",
    "torch_canary_pair",
    "torch_run_setup",
    "torch_runs",
    "final_model_law",
    "dpzero_torch_full_run_scenario",
    "dpzero_torch_final_model_scenario",
    "dpzero_torch_seed_leak_scenario",
    "seed_leak_attack",
    "TorchPublishedSetup",
    "torch_published_setup",
    "TorchPublishedAudit",
    "torch_published_scenario",
    "rebuild_publication",
    "DPZERO_TORCH_BUILTINS",
    "DPZERO_TORCH_PUBLISHED_BUILTINS",
]

#: (a), (b) and the seed-leak twin: T = 10 steps (the law is T-free under "gdp_exact"; T sets the cost, ~1 ms a
#: step with the per-run overhead), n = 100, d = 2, C = 1, σ from "gdp_exact" at ε = 2, δ = 1e-5 (μ = 0.50155).
TORCH_RUN_SETTINGS = dict(steps=10, n=100, d=2, clip_threshold=1.0, epsilon=2.0, delta=1e-5, public_seed=0,
                          step_size=0.1, perturbation=1e-3)
#: (c): ``empirical_dp.published.FULL_SETTINGS`` for one run: T = 50, n = 50, d = 2, C = 1, target ε = 1 at
#: δ = 1e-5, default accountant, public seed P = 1, |H| = 50 public held-out rows.
TORCH_PUBLISHED_SETTINGS = dict(steps=50, n=50, d=2, clip=1.0, epsilon=1.0, delta=1e-5, step_size=0.1,
                                perturbation=1e-3, public_seed=1, held_out_n=50)
#: The planted twins' secret: noise_seed = public seed + this (a documented function of a public value).
LEAKED_SEED_OFFSET = 1
#: The command a torch publication records in the audits.
COMMAND = "reference.torch_backend.dpzero.dpzero (empirical_dp.dpzero_torch audit pipeline)"
#: Errors a run may raise on data (published as error.txt); anything else is a broken pipeline.
_ERRORS = (ValueError, ArithmeticError)


def _backend():
    """(torch, reference.torch_backend.dpzero, reference.torch_backend.publish), imported on first use so that the
    registry imports this module without torch."""
    try:
        import torch

        from reference.torch_backend import dpzero as backend
        from reference.torch_backend import publish
    except ImportError as exc:
        raise ValueError(f"the torch DPZero audits need torch (pip install 'dpref[torch]'): {exc}") from None
    return torch, backend, publish


# ---------------------------------------------------------------------------------------------------
# The model and the pair


def linear_model(d: int, x0=None):
    """A float64 ``torch.nn.Module`` with one trainable parameter ``x`` ∈ R^d (θ_0 = ``x0``, default 0)."""
    torch, _, _ = _backend()
    d = check_int("d", d, minimum=1)
    start = np.zeros(d) if x0 is None else np.array(x0, dtype=np.float64)
    if start.shape != (d,):
        raise ValueError(f"x0 must have shape ({d},), got {start.shape}")
    model = torch.nn.Module()
    model.x = torch.nn.Parameter(torch.from_numpy(start.copy()))
    return model


def linear_per_example_loss(model, rows):
    """f(x; ξ_i) = ⟨ξ_i, x⟩ for each row of ``rows`` (b, d): ``dpzero_scenarios.linear_loss`` on torch tensors."""
    return rows @ model.x


def torch_directions(public_seed: int, steps: int, sizes) -> np.ndarray:
    """(T, Σ sizes): the u_t of the torch backend for a model with these tensor numels (sphere directions; key
    ("dpzero", "direction", t, k) per tensor k, ``direction_for_step(..., blocks=sizes)``)."""
    sizes = tuple(int(s) for s in sizes)
    d = sum(sizes)
    return np.array([direction_for_step(public_seed, t, d, "sphere", blocks=sizes) for t in range(steps)])


def torch_canary_pair(n, d, steps, clip_threshold, *, relation="replace_one", public_seed=0,
                      canary_scale=CANARY_SCALE) -> CanaryPair:
    """``dpzero_scenarios.canary_pair`` on the torch backend's directions of ``linear_model(d)`` (one tensor of
    numel d: the blocked key ("dpzero", "direction", t, 0)): record 0 is −M·e_1 on D and +M·e_1 on D′
    ("replace_one") or 0 on D and +M·e_1 on D′ ("add_remove": the zero-record layout of ``empirical_dp.published``),
    the others 0, M = canary_scale·C."""
    return canary_pair(n, d, steps, clip_threshold, relation=relation, public_seed=public_seed,
                       canary_scale=canary_scale, direction_blocks=(check_int("d", d, minimum=1),))


# ---------------------------------------------------------------------------------------------------
# (a), (b): runs of the torch backend


def torch_run_setup(steps=10, n=100, d=2, clip_threshold=1.0, epsilon=2.0, delta=1e-5, *, public_seed=0,
                    step_size=0.1, perturbation=1e-3, canary_scale=CANARY_SCALE) -> DPZeroAuditSetup:
    """The fixed part of (a) and (b): the torch pair, the "gdp_exact" plan (full batch), μ = √T·(2C/n)/σ, its ε
    and what Lemma 2.2 would claim; ``run`` holds the keyword arguments of ``torch_runs``."""
    steps = check_int("steps", steps, minimum=1)
    n = check_int("n", n, minimum=2)
    delta = check_probability("delta", delta)
    plan = privacy_plan(clip_threshold=clip_threshold, n=n, steps=steps, epsilon=epsilon, delta=delta,
                        batching="full", accountant="gdp_exact")
    pair = torch_canary_pair(n, d, steps, clip_threshold, public_seed=public_seed, canary_scale=canary_scale)
    mu = math.sqrt(steps) * (2 * clip_threshold / n) / plan.noise_std
    run = dict(steps=steps, clip_threshold=float(clip_threshold), epsilon=float(epsilon), delta=float(delta),
               public_seed=int(public_seed), step_size=float(step_size), perturbation=float(perturbation))
    return DPZeroAuditSetup(pair, plan, steps, n, d, float(clip_threshold), "full", None, mu,
                            float(gaussian_epsilon(delta, mu)), lemma22_epsilon(mu, delta), run)


def torch_runs(data, noise_seeds, *, steps, clip_threshold, epsilon, delta, public_seed, step_size, perturbation,
               output="releases", seed_rule=None) -> np.ndarray:
    """One ``reference.torch_backend.dpzero.dpzero`` run per secret seed on ``linear_model(d)`` (θ_0 = 0) with
    ``linear_per_example_loss``, full batch, accountant "gdp_exact", seed = public_seed.

    data: (n, d) records; noise_seeds: 1-D ints, one per run; output: "releases" → (runs, T) ŝ_t, "final" →
    (runs, d) θ_T. seed_rule: None (noise_seed = the drawn seed), or "public_plus_one" (the planted leak: every run
    gets noise_seed = public_seed + ``LEAKED_SEED_OFFSET`` and the drawn seed is ignored).
    """
    torch, backend, _ = _backend()
    if output not in ("releases", "final"):
        raise ValueError(f"output must be 'releases' or 'final', got {output!r}")
    if seed_rule not in (None, "public_plus_one"):
        raise ValueError(f"seed_rule must be None or 'public_plus_one', got {seed_rule!r}")
    seeds = np.asarray(noise_seeds)
    if seeds.ndim != 1 or (seeds.size and seeds.dtype.kind not in "iu"):
        raise ValueError(f"noise_seeds must be a 1-D array of integers, got shape {seeds.shape}")
    rows = torch.from_numpy(np.array(data, dtype=np.float64))
    d = rows.shape[1]
    out = np.empty((seeds.size, steps if output == "releases" else d))
    for i, drawn in enumerate(seeds):
        noise_seed = int(drawn) if seed_rule is None else public_seed + LEAKED_SEED_OFFSET
        model = linear_model(d)
        result = backend.dpzero(model, linear_per_example_loss, rows, steps=steps, step_size=step_size,
                                perturbation=perturbation, clip_threshold=clip_threshold, epsilon=epsilon,
                                delta=delta, seed=public_seed, noise_seed=noise_seed, accountant="gdp_exact")
        out[i] = result.releases if output == "releases" else model.x.detach().numpy()
    return out


def _sampler(setup: DPZeroAuditSetup, output: str, seed_rule=None):
    def sample(rng, trials, which):
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        trials = check_int("trials", trials, minimum=0)
        which = check_int("which", which, minimum=0, maximum=1)
        noise_seeds = rng.integers(0, SEED_BOUND, trials)
        width = setup.steps if output == "releases" else setup.d
        if trials == 0:
            return np.empty((0, width))
        return torch_runs(setup.pair.datasets[which], noise_seeds, output=output, seed_rule=seed_rule, **setup.run)

    return sample


def _settings(kwargs: dict) -> dict:
    unknown = set(kwargs) - set(TORCH_RUN_SETTINGS) - {"canary_scale"}
    if unknown:
        raise ValueError(f"unknown setting(s) {sorted(unknown)}; allowed: {sorted(TORCH_RUN_SETTINGS)}, canary_scale")
    return {**TORCH_RUN_SETTINGS, **kwargs}


def _describe(setup: DPZeroAuditSetup, what: str) -> str:
    return (f"DPZero on torch ({what}), {setup.steps} steps, full batch, n={setup.n}, d={setup.d}, "
            f"C={setup.clip_threshold:g}, σ={setup.plan.noise_std:.6g} (gdp_exact), μ={setup.mu:.6g}")


def dpzero_torch_full_run_scenario(*, name="dpzero-torch-full-run", **settings) -> Scenario:
    """(a) ``dpzero-torch-full-run``: the transcript of torch runs on the canary pair, the exact LLR, the plan's
    μ-GDP claim (module docstring). ``settings`` override ``TORCH_RUN_SETTINGS`` (and canary_scale)."""
    setup = torch_run_setup(**_settings(settings))
    return Scenario(name=name, description=_describe(setup, "releases"), sample=_sampler(setup, "releases"),
                    **plan_claim(setup.plan), delta=setup.run["delta"], tight_epsilon=setup.tight_epsilon,
                    mu=setup.mu, log_likelihood_ratio=_full_batch_llr(setup))


@dataclass(frozen=True)
class FinalModelLaw:
    """The exact law of θ_T on D and D′ (module docstring, b): means (2, d), covariance (d, d), the LLR weights
    Σ^{−1}(m_1 − m_0) and midpoint, and μ_bb = ‖Σ^{−1/2}(m_1 − m_0)‖."""

    means: np.ndarray
    covariance: np.ndarray
    weights: np.ndarray
    midpoint: np.ndarray
    mu: float

    def log_likelihood_ratio(self, outputs) -> np.ndarray:
        outputs = np.asarray(outputs, dtype=np.float64)
        if outputs.ndim != 2 or outputs.shape[1] != self.means.shape[1]:
            raise ValueError(f"outputs must have shape (trials, {self.means.shape[1]}), got {outputs.shape}")
        return (outputs - self.midpoint) @ self.weights


def final_model_law(setup: DPZeroAuditSetup) -> FinalModelLaw:
    """θ_T ~ N(−α Uᵀ m_h, α²σ² UᵀU) on D (h = 0) and D′ (h = 1), θ_0 = 0 (module docstring, b). Raises ValueError
    if UᵀU is singular (T < d or degenerate directions: θ_T would not have a density)."""
    alpha, sigma = setup.run["step_size"], setup.plan.noise_std
    u = setup.pair.directions                                      # (T, d)
    means = -alpha * (setup.pair.canary_differences / setup.n) @ u  # (2, d): m_t = canary difference / n
    covariance = (alpha * sigma) ** 2 * (u.T @ u)
    try:
        factor = cho_factor(covariance)
    except np.linalg.LinAlgError:
        raise ValueError(f"steps must be >= d with directions spanning R^d for θ_T to have a density "
                         f"(steps={setup.steps}, d={setup.d})") from None
    gap = means[1] - means[0]
    weights = cho_solve(factor, gap)
    return FinalModelLaw(means, covariance, weights, (means[0] + means[1]) / 2, float(math.sqrt(gap @ weights)))


def dpzero_torch_final_model_scenario(*, name="dpzero-torch-final-model", **settings) -> Scenario:
    """(b) ``dpzero-torch-final-model``: the same runs, outputs θ_T (trials, d); the LLR of ``final_model_law``;
    claim: the plan's μ-GDP (the whole transcript); ``mu``/``tight_epsilon``: the black-box's exact μ_bb and ε."""
    setup = torch_run_setup(**_settings(settings))
    law = final_model_law(setup)
    delta = setup.run["delta"]
    description = (_describe(setup, "final model only") + f"; final model exactly μ={law.mu:.6g}-GDP "
                   f"(ε={float(gaussian_epsilon(delta, law.mu)):.4g})")
    return Scenario(name=name, description=description, sample=_sampler(setup, "final"), **plan_claim(setup.plan),
                    delta=delta, tight_epsilon=float(gaussian_epsilon(delta, law.mu)), mu=law.mu,
                    log_likelihood_ratio=law.log_likelihood_ratio)


def dpzero_torch_seed_leak_scenario(*, name="dpzero-torch-seed-leak", **settings) -> Scenario:
    """Planted: (a) with noise_seed = public_seed + 1 in every run (module docstring); the plan's claim. Given
    the public seed the transcript is a deterministic function of the data (tight ε = ∞, reported as None)."""
    setup = torch_run_setup(**_settings(settings))
    return Scenario(name=name, description=_describe(setup, f"noise_seed = public seed + {LEAKED_SEED_OFFSET}"),
                    sample=_sampler(setup, "releases", "public_plus_one"), **plan_claim(setup.plan),
                    delta=setup.run["delta"])


def seed_leak_attack(**settings) -> Callable[[np.ndarray], np.ndarray]:
    """The attacker of the seed leak: z_t regenerated from ("dpzero", "noise") under public_seed + 1, score
    Σ_t s_t (ŝ_t − σz_t) (= ∓T·C/n under the leak; against the real algorithm z_t is unrelated to the noise)."""
    setup = torch_run_setup(**_settings(settings))
    guess = setup.run["public_seed"] + LEAKED_SEED_OFFSET
    offset = setup.plan.noise_std * Streams(guess).generator("dpzero", "noise").standard_normal(setup.steps)
    signs = setup.pair.signs.astype(np.float64)

    def score(outputs):
        outputs = np.asarray(outputs, dtype=np.float64)
        if outputs.ndim != 2 or outputs.shape[1] != setup.steps:
            raise ValueError(f"outputs must have shape (trials, {setup.steps}), got {outputs.shape}")
        return (outputs - offset) @ signs

    return score


# ---------------------------------------------------------------------------------------------------
# (c): everything a torch run publishes

#: The published variants: name → description.
PUBLISHED_VARIANTS = {
    "default": "default arguments: fresh OS entropy, default accountant",
    "public_seed_noise": f"noise_seed = public seed + {LEAKED_SEED_OFFSET} (derivable from a public value)",
}


@dataclass(frozen=True)
class TorchPublishedSetup:
    """The fixed part of (c): variant, settings, the pair (D, D′) as (n, d) arrays, the public held-out rows H,
    the directions (T, d), signs s_t and the canary's clipped means (2, T) along them, σ of the default plan."""

    variant: str
    settings: dict
    datasets: tuple
    held_out: np.ndarray
    directions: np.ndarray
    signs: np.ndarray
    means: np.ndarray
    noise_std: float
    plan: object
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def steps(self) -> int:
        return int(self.settings["steps"])

    @property
    def public_seed(self) -> int:
        return int(self.settings["public_seed"])

    def public_settings(self) -> dict:
        """The hyper-parameters the publication's manifest records (all public; n is public here: replace-one)."""
        s = self.settings
        return dict(algorithm="dpzero", seed=s["public_seed"], n=s["n"], step_size=s["step_size"],
                    perturbation=s["perturbation"], clip=s["clip"], epsilon=s["epsilon"], delta=s["delta"],
                    batching="full", accountant=None, held_out_n=s["held_out_n"])


def torch_published_setup(variant="default", **overrides) -> TorchPublishedSetup:
    """(c)'s fixed part for ``variant`` (a key of ``PUBLISHED_VARIANTS``); overrides: keys of
    ``TORCH_PUBLISHED_SETTINGS``. H: ``held_out_n`` rows from ``Streams(P).generator("published", "held-out")``."""
    if variant not in PUBLISHED_VARIANTS:
        raise ValueError(f"variant must be one of {tuple(PUBLISHED_VARIANTS)}, got {variant!r}")
    unknown = set(overrides) - set(TORCH_PUBLISHED_SETTINGS)
    if unknown:
        raise ValueError(f"unknown setting(s) {sorted(unknown)}; allowed: {sorted(TORCH_PUBLISHED_SETTINGS)}")
    s = {**TORCH_PUBLISHED_SETTINGS, **overrides}
    for key in ("steps", "n", "d", "held_out_n"):
        s[key] = check_int(key, s[key], minimum=1)
    s["public_seed"] = check_int("public_seed", s["public_seed"], minimum=0, maximum=SEED_BOUND - 2**20)
    for key in ("clip", "epsilon", "step_size", "perturbation"):
        s[key] = float(check_real(key, s[key], positive=True))
    s["delta"] = float(check_probability("delta", s["delta"]))
    pair = torch_canary_pair(s["n"], s["d"], s["steps"], s["clip"], relation="add_remove",
                             public_seed=s["public_seed"])
    plan = privacy_plan(clip_threshold=s["clip"], n=s["n"], steps=s["steps"], epsilon=s["epsilon"],
                        delta=s["delta"])  # the default accountant, as the default run computes it
    held = Streams(s["public_seed"]).generator("published", "held-out").standard_normal((s["held_out_n"], s["d"]))
    held.setflags(write=False)
    return TorchPublishedSetup(variant, s, pair.datasets, held, pair.directions, pair.signs.astype(np.float64),
                               pair.canary_differences / s["n"], float(plan.noise_std), plan)


def _held_out_trace(torch, rows):
    """The public held-out metric: the mean loss (1/|H|) Σ_h ⟨h, x⟩ over the public rows H, in torch."""
    def trace(model):
        return float((rows @ model.x.detach()).mean())

    return trace


def run_published(setup: TorchPublishedSetup, which: int, noise_seed) -> dict[str, str]:
    """One torch run on D (which = 0) or D′ (1) with ``noise_seed`` (None: fresh OS entropy), published by
    ``reference.torch_backend.publish.publication`` with the public held-out trace; a run that raises ValueError
    or ArithmeticError publishes only ``{"error.txt": ...}``."""
    torch, backend, publish = _backend()
    s = setup.settings
    rows = torch.from_numpy(np.array(setup.datasets[which]))
    model = linear_model(s["d"])
    try:
        result = backend.dpzero(model, linear_per_example_loss, rows, steps=s["steps"], step_size=s["step_size"],
                                perturbation=s["perturbation"], clip_threshold=s["clip"], epsilon=s["epsilon"],
                                delta=s["delta"], seed=s["public_seed"], noise_seed=noise_seed,
                                trace=_held_out_trace(torch, torch.from_numpy(np.array(setup.held_out))))
        return publish.publication(result, held_out=result.trace, settings=setup.public_settings(), command=COMMAND)
    except _ERRORS as exc:
        return {"error.txt": f"{type(exc).__name__}: {exc}\n"}


def _iterates(setup: TorchPublishedSetup, releases: np.ndarray) -> np.ndarray:
    """x_0..x_T rebuilt from the releases with the public directions (x_0 = 0, x_{t+1} = x_t − (αŝ_t)u_t, the
    backend's update rounded as it rounds it in float64)."""
    alpha = setup.settings["step_size"]
    x = np.zeros((setup.steps + 1, setup.directions.shape[1]))
    for t in range(setup.steps):
        x[t + 1] = x[t] - (alpha * releases[t]) * setup.directions[t]
    return x


def torch_publication_features(files: Mapping[str, str], setup: TorchPublishedSetup) -> dict[str, float]:
    """The features of one torch publication: ``published.file_features`` (every file's values, presence and
    length), ``release_score`` = Σ_t s_t ŝ_t, ``regenerated[SOURCE]`` (``published.regeneration_features`` over
    the public seed, the seed offsets and every integer token of every file) and
    ``recomputed[heldout_metric~objective]`` (module docstring, c)."""
    out = file_features(files)
    releases = _release_column(files, setup.steps)
    if releases is None:
        return out
    out["release_score"] = float(setup.signs @ releases)
    residuals = releases[None, :] - setup.means
    sigma = setup.noise_std
    regeneration_features(candidate_seeds((setup.public_seed,), setup.public_seed, files), residuals,
                          lambda seeds: sigma * np.array([_noise_stream(setup, c) for c in seeds]), out,
                          setup._cache)
    header, rows = _parse_csv(files.get("trajectory.csv", ""))
    if "heldout_metric" in header and len(rows) == setup.steps + 1:
        try:
            published = np.array([float(row[header.index("heldout_metric")]) for row in rows])
        except (ValueError, IndexError):
            return out
        x = _iterates(setup, releases)
        on_d, on_dp = (x @ np.asarray(data).mean(axis=0) for data in setup.datasets)
        out["recomputed[heldout_metric~objective]"] = float(_log_match(published, on_dp) - _log_match(published, on_d))
    return out


class TorchPublishedAudit(PublishedAudit):
    """``empirical_dp.published.PublishedAudit`` for the torch pipeline: the four hooks (claim, description, one
    trial's publication, its features) are the torch run's; training, sampling and scoring are shared."""

    def _claim(self) -> dict:
        """The default plan's claim (``plan_claim``: Lemma 2.2 states (ε, δ)) at the run's δ."""
        return {**plan_claim(self.setup.plan), "delta": float(self.setup.settings["delta"])}

    def _description(self) -> str:
        s = self.setup.settings
        return (f"DPZero on torch, whole publication ({PUBLISHED_VARIANTS[self.setup.variant]}), T={s['steps']}, full "
                f"batch, n={s['n']}, d={s['d']}; score: the training split's best feature")

    def publish_trial(self, rng: np.random.Generator, which: int, *, proxy: bool = False) -> dict[str, str]:
        """One publication: a default run gets fresh OS entropy (``proxy``: ``SecretSeed(v, "os_entropy")`` with v
        drawn from ``rng``, the training split's reproducible stand-in); the planted variant public_seed + 1."""
        secret = SecretSeed(_draw_seed(rng), "os_entropy") if proxy else None
        if self.setup.variant == "public_seed_noise":
            secret = self.setup.public_seed + LEAKED_SEED_OFFSET
        return run_published(self.setup, which, secret)

    def features(self, publication_files: Mapping[str, str]) -> dict[str, float]:
        return torch_publication_features(publication_files, self.setup)


def torch_published_scenario(variant="default", *, name=None, training_trials=TRAINING_TRIALS, training_seed=0,
                             **settings) -> TorchPublishedAudit:
    """A ``TorchPublishedAudit`` for ``variant``; name defaults to "dpzero_torch-published" (default) or
    "dpzero_torch-published-seed-leak"."""
    setup = torch_published_setup(variant, **settings)
    if name is None:
        name = "dpzero_torch-published" + ("" if variant == "default" else "-" + variant.replace("_", "-"))
    return TorchPublishedAudit(setup, name, training_trials=training_trials, training_seed=training_seed)


# ---------------------------------------------------------------------------------------------------
# Rebuilding a publication from the releases and the public inputs


def rebuild_publication(files: Mapping[str, str], setup: TorchPublishedSetup) -> dict[str, str]:
    """Every file of a torch publication of ``setup``'s default pipeline, rebuilt from its releases.csv and the
    public inputs alone (no data set is read): the iterates from the releases and the public directions, the
    output parameters θ_T and the held-out metric (the same torch trace on the PUBLIC rows) from them, and the
    ledger from a run of the same code on a public stand-in data set (n zero records: the plan depends on n, τ
    and the seed's source on the public seed and on the default secret). The manifest's "created" time is copied
    from ``files`` (wall-clock time is not a function of anything). Compare with ``files`` byte for byte."""
    torch, backend, publish = _backend()
    s = setup.settings
    releases = _release_column(files, setup.steps)
    if releases is None:
        raise ValueError("files must hold a releases.csv with T rows of replicate 0")
    stand_in = torch.zeros((s["n"], s["d"]), dtype=torch.float64)
    trace = _held_out_trace(torch, torch.from_numpy(np.array(setup.held_out)))
    ledger_run = backend.dpzero(linear_model(s["d"]), linear_per_example_loss, stand_in, steps=s["steps"],
                                step_size=s["step_size"], perturbation=s["perturbation"], clip_threshold=s["clip"],
                                epsilon=s["epsilon"], delta=s["delta"], seed=s["public_seed"])
    x = _iterates(setup, releases)
    model = linear_model(s["d"], x[-1])
    metric = np.array([trace(linear_model(s["d"], point)) for point in x])
    rebuilt = dataclasses.replace(ledger_run, model=model, releases=releases, trace=metric)
    out = publish.publication(rebuilt, held_out=metric, settings=setup.public_settings(), command=COMMAND)
    manifest = json.loads(out["manifest.json"])
    manifest["created"] = json.loads(files["manifest.json"])["created"]
    out["manifest.json"] = json.dumps(manifest, indent=2) + "\n"
    return out


# ---------------------------------------------------------------------------------------------------
# Built-ins


def _published_factory(variant: str, name: str) -> Callable[[], TorchPublishedAudit]:
    return lambda: torch_published_scenario(variant, name=name)


#: Built-in name → Scenario factory ((a), (b)); building one without torch raises a one-line ValueError on first
#: trial (the setup itself needs no torch).
DPZERO_TORCH_BUILTINS: dict[str, Callable[[], Scenario]] = {
    "dpzero-torch-full-run": dpzero_torch_full_run_scenario,
    "dpzero-torch-final-model": dpzero_torch_final_model_scenario,
}

#: Published-output built-ins (``TorchPublishedAudit`` factories): the default and the planted leak.
DPZERO_TORCH_PUBLISHED_BUILTINS: dict[str, Callable[[], TorchPublishedAudit]] = {
    "dpzero_torch-published": _published_factory("default", "dpzero_torch-published"),
    "dpzero_torch-published-seed-leak": _published_factory("public_seed_noise",
                                                                   "dpzero_torch-published-seed-leak"),
}
