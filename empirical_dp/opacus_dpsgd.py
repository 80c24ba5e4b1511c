"""Audit scenarios that run Opacus DP-SGD itself (``opacus.PrivacyEngine.make_private``) on a canary pair, and a
planted misuse of it (docs/audits.md, Opacus DP-SGD).

Sources:
- Abadi et al. 2016 (CCS), "Deep learning with differential privacy", Alg. 1 (DP-SGD: per-example clipping to C,
  Gaussian noise N(0, σ²C²I) on the clipped sum) and Yousefpour et al. 2021, "Opacus: user-friendly differential
  privacy library in PyTorch" (the implementation audited: ``GradSampleModule``, ``DPOptimizer``,
  ``DPDataLoader``, ``RDPAccountant``, ``PRVAccountant``).
- Mironov, Talwar, Zhang 2019 §3.3 (RDP of the Poisson-subsampled Gaussian: Opacus's ``RDPAccountant``) and Gopi,
  Lee, Wutschitz 2021 (privacy random variables: Opacus's ``PRVAccountant``). The CLAIM is what the engine reports,
  ``PrivacyEngine.get_epsilon(δ)`` after the run, never recomputed here.
- Koskela, Jälkö, Honkela 2020 / Doroshenko et al. 2022 (privacy loss distributions, ``reference.accounting.pld``):
  the tight ε of the Poisson-subsampled Gaussian (``dpzero_scenarios.poisson_pld_epsilon``: the upper end of a
  certified interval around the exact ε), a yardstick only.
- Nasr et al. 2021 (S&P) §4 and Nasr et al. 2023 (USENIX), "Tight auditing of differentially private machine
  learning": the worst-case gradient canary (clipped norm C along a direction the attacker knows, the other records
  contributing nothing along it) and the white-box attacker who sees every noisy update.
- Chua et al. 2024 (ICML), "How private are DP-SGD implementations?": batches drawn by shuffling (or in a fixed
  order) while the accountant assumes Poisson sampling — the planted misuse.

The canary pair (``canary_features``; exact in float32). The model is a bank of K independent linear models,
``torch.nn.Linear(d, K, bias=False)`` with weight W ∈ R^{K×d}, W_0 = 0; record i of trial k is (x_i, k) and its loss
is the k-th output, ℓ_i(W) = ⟨W_k, x_i⟩, so its per-sample gradient (Opacus ``GradSampleModule``, hooks) is
e_k x_iᵀ: it lives in row k only, and Opacus's per-sample clipping, which sees the whole gradient, clips each record
within its own trial. The direction the attacker knows is v = e_1 (first column of row k). Per trial, n records:
- position 0: on D′ the canary x = M e_1 with M = 2^20 (``CANARY_SCALE``), C = 1; Opacus clips with the factor
  C/(‖g‖ + 1e-6) clamped at 1: ‖g‖ = 2^20 exactly, 2^20 + 1e-6 rounds to 2^20 in float32, so the factor is 2^-20
  and the clipped gradient is exactly C e_k e_1ᵀ (norm C along v). On D the same position holds the null record
  x = 0, whose per-sample gradient, and hence clipped gradient, is exactly 0: the null record adds exactly what an
  absent one adds, so with the normaliser fixed (below) the pair is Opacus's add/remove pair (D′ = D ∪ {canary});
- positions 1..n−1: x = e_2, gradient e_k e_2ᵀ, exactly 0 along v (clipped by C/(1 + 1e-6) along e_2 only).
Every trial of a run has its own row, its own noise coordinates (Opacus draws N(0, σ²C²) per coordinate) and its own
Poisson coins (one per record), so the K trials of one Opacus run are independent and identically distributed —
it is still Opacus that samples, clips, noises and steps. ``loss_reduction="sum"``: the per-sample gradients are
then exact (the default "mean" multiplies the batch-mean's backprops by the realised batch size, which rounds in
float32) and Opacus does not divide by the expected batch size, so the SGD update is Δθ_t = −lr·(noisy clipped sum);
"mean" would differ by the public factor 1/E[B] and float32 rounding. Opacus sets E[B] = int(len(dataset)·q), which
depends on the dataset size, so a literal removal would change the normaliser; the null record keeps it fixed.

Releases. After every ``optimizer.step()`` the attacker reads W (captured in float64 from the float32 weights) and
forms x_t = −⟨W_{t+1} − W_t, v⟩/(lr·C), the noisy clipped sum along v in units of C: on D N(0, σ²); on D′ (Poisson)
(1 − q)N(0, σ²) + qN(1, σ²), independently over t (σ = the noise multiplier). The white-box scenario outputs
(x_0, …, x_{T−1}) and scores them by the log-likelihood ratio Σ_t log(1 − q + q·exp((2x_t − 1)/(2σ²))) (as
``dpzero-full-run-poisson``); the black-box scenario outputs the final model's projection S = −⟨W_T − W_0, v⟩/(lr·C)
only, N(0, Tσ²) vs Σ_k Bin(T, q)(k)·N(k, Tσ²), scored by that mixture's log-likelihood ratio (increasing in S, so
the same as thresholding S). Both are exact laws up to float32 rounding of W.

Threat model. Add/remove neighbours, Poisson sampling at q = 1/len(loader) (what ``make_private`` sets), n, d, C,
σ, lr, T and the construction public; the attacker knows everything except the Poisson coins and the noise.

The planted misuse (``opacus_fixed_order_scenario``): ``make_private(..., poisson_sampling=False)`` with a plain
``DataLoader(shuffle=False)`` of fixed batch size b per trial, while Opacus's accountant still assumes Poisson
sampling at q = 1/len(loader) = b/n for the T = n/b steps of an epoch. The data order is public, so the canary's
batch (the first) is known: x_0 is N(0, σ²) vs N(1, σ²) and the run is exactly (1/σ)-GDP, far above the Poisson
claim. Why fixed order and not shuffled batches: with the canary in a uniformly random batch of one shuffled epoch
(the exact log-likelihood ratio log((1/T)Σ_t exp((2x_t − 1)/(2σ²))) of this pair), our audits at 10⁵ trials per
dataset (confidence 0.95, numpy simulation of that law) certify ε_lb 3.01, 2.36, 1.82, 1.41, 0.88 for σ = 0.5, 0.6,
0.7, 0.8, 1 at T = 10 against Opacus's PRV claims 12.3, 8.35, 6.03, 4.55, 2.87 (RDP 14.4, 9.88, 7.18, 5.44, 3.44),
and 1.14, 0.41, 0.23 for σ = 0.6, 0.8, 1 at T = 100 against 3.83, 1.52, 0.73: never a violation (shuffling's ε
exceeds Poisson's only far out in the tail, at a δ that 10⁵ trials cannot reach with this pair). The fixed order is
caught at a few thousand trials. The twin: the same loader with ``poisson_sampling=True``.

Randomness. ``sample(rng, trials, which)`` draws ``integers(0, SEED_BOUND, runs)`` torch seeds, one per Opacus run
of at most ``chunk`` trials, and nothing else; each run seeds a forked torch generator (``torch.random.fork_rng``)
with its seed, from which Opacus draws the Poisson coins (``DPDataLoader``) and the noise (``DPOptimizer``), so the
caller's torch state is untouched.

Opacus and torch are optional (extra "compare"): this module imports them inside functions only; building a
scenario without them raises a one-line ValueError.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import logsumexp
from scipy.stats import binom

from reference.fast.conversions import gaussian_epsilon
from reference.validation import check_int, check_probability, check_real

from .dpzero_scenarios import poisson_pld_epsilon
from .scenarios import Scenario

__all__ = [
    "CANARY_SCALE",
    "SEED_BOUND",
    "SAMPLINGS",
    "ACCOUNTANTS",
    "require_opacus",
    "OpacusSetup",
    "opacus_setup",
    "canary_features",
    "opacus_releases",
    "opacus_claims",
    "opacus_scenario",
    "opacus_dpsgd_scenario",
    "opacus_dpsgd_final_model_scenario",
    "opacus_fixed_order_scenario",
    "opacus_fixed_order_twin_scenario",
    "OPACUS_BUILTINS",
    "DEFAULT_CHUNK",
    "DPSGD_SETTINGS",
    "FIXED_ORDER_SETTINGS",
    "FIXED_ORDER_BUDGET",
]

#: M/C of the canary, a power of two so that Opacus's clip factor C/(M + 1e-6) is exactly C/M in float32.
CANARY_SCALE = 2.0**20
#: Torch seeds of the runs are drawn uniformly from [0, SEED_BOUND).
SEED_BOUND = 2**62
#: "poisson": ``make_private(poisson_sampling=True)`` (correct use); "fixed_order": ``poisson_sampling=False`` with a
#: ``DataLoader(shuffle=False)`` (the planted misuse).
SAMPLINGS = ("poisson", "fixed_order")
#: Opacus accountants whose ε is read after the run ("prv" is ``PrivacyEngine``'s default).
ACCOUNTANTS = ("rdp", "prv")
#: Trials per Opacus run (rows of the linear bank K). The per-sample gradients hold B·K·d floats per step (B ≈ qnK),
#: so the cost per trial grows with K, while Opacus's per-step overhead is paid once per run: measured on one core
#: (torch 2.13 CPU, opacus 1.6), trials/s of the fixed-order misuse (T = 100) at K = 64, 128, 256, 512, 1024:
#: 626, 870, 1076, 875, 587; of ``opacus-dpsgd`` (T = 4): 12 806, 18 708, 26 764, 25 187, 8 727.
DEFAULT_CHUNK = 256
#: Trials per data set of the planted misuse (``opacus-fixed-order-loader``): the pair is (1/σ)-GDP with σ = 1 and the
#: Clopper–Pearson ε_lb over the 16-threshold grid at the quick confidence 1 − 1e-6, simulated from that law (20
#: seeds), is 0.92–1.01 (min–median) at 3 000 trials, against Opacus's PRV claim 0.728 (at 2 000: 0.77–0.84, at
#: 1 000: 0.45–0.61, mostly missed). ~3 s per data set on one core (≈ 1 000 trials/s, T = 100 steps).
FIXED_ORDER_BUDGET = 3000


def require_opacus(name: str) -> None:
    """Raise a one-line ValueError naming ``name`` when torch or opacus is not installed (extra "compare")."""
    try:
        import opacus  # noqa: F401
        import torch  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"{name} needs the optional dependencies opacus and torch (pip install 'dpref[compare]'): "
                         f"{exc}") from None


@dataclass(frozen=True)
class OpacusSetup:
    """Everything fixed before any trial of an Opacus audit.

    n: records per trial (position 0 the canary or the null record); batch: b, records per trial in a batch of the
    underlying loader (q = b/n); noise_multiplier: σ; clip: C; steps: T; lr: SGD step size; d: features (≥ 2);
    sampling: one of ``SAMPLINGS``; delta: δ; chunk: trials per Opacus run; claims: accountant → ε Opacus reported
    after a run (``opacus_claims``); history: the accountant's history after that run.
    """

    n: int
    batch: int
    noise_multiplier: float
    clip: float
    steps: int
    lr: float
    d: int
    sampling: str
    delta: float
    chunk: int
    claims: dict = field(default_factory=dict)
    history: tuple = ()

    @property
    def sample_rate(self) -> float:
        """q = 1/len(loader) = b/n, what ``make_private`` hands the accountant."""
        return self.batch / self.n


def canary_features(n, d, trials, *, canary: bool, scale=CANARY_SCALE, clip=1.0) -> np.ndarray:
    """(n·trials, d) float32 features, position-major (record p of trial k at row p·trials + k), so that the
    b·trials rows of batch t of a fixed-order loader hold positions t·b..(t+1)b − 1 of every trial. Position 0:
    scale·clip·e_1 (the canary) if ``canary`` else 0 (the null record); positions 1..n−1: e_2 (module docstring)."""
    features = np.zeros((n, trials, d), dtype=np.float32)
    if canary:
        features[0, :, 0] = scale * clip
    features[1:, :, 1] = 1.0
    return features.reshape(n * trials, d)


def _run(setup: OpacusSetup, which: int, trials: int, seed: int, accountant: str = "prv"):
    """One Opacus run of ``trials`` independent trials on D (which 0) or D′ (1): ((trials, T) float64 releases x_t,
    (trials,) final projection S, the engine). Warnings Opacus and torch raise on every run (secure RNG off; the
    full backward hook on a module whose input needs no gradient) are silenced here, once per run."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    features = torch.from_numpy(canary_features(setup.n, setup.d, trials, canary=which == 1, clip=setup.clip))
    slots = torch.arange(trials).repeat(setup.n)  # position-major: row p·trials + k belongs to trial k
    loader = DataLoader(TensorDataset(features, slots), batch_size=setup.batch * trials, shuffle=False)
    model = torch.nn.Linear(setup.d, trials, bias=False)
    with torch.no_grad():
        model.weight.zero_()
    optimizer = torch.optim.SGD(model.parameters(), lr=setup.lr)
    releases = np.empty((trials, setup.steps))
    threads = torch.get_num_threads()
    try:
        # The tensors are tiny: intra-op threads only add synchronisation (measured: a 10⁵-trial audit on a loaded
        # 2-core machine spent ~15x the single-thread CPU time), so a run uses one and restores the caller's setting.
        torch.set_num_threads(1)
        return _train(setup, model, optimizer, loader, releases, seed, accountant)
    finally:
        torch.set_num_threads(threads)


def _train(setup: OpacusSetup, model, optimizer, loader, releases: np.ndarray, seed: int, accountant: str):
    """The Opacus part of ``_run``: ``make_private`` and T steps, recording x_t after every ``optimizer.step()``."""
    import torch
    from opacus import PrivacyEngine

    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(seed)
        engine = PrivacyEngine(accountant=accountant)
        module, optimizer, loader = engine.make_private(
            module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=setup.noise_multiplier,
            max_grad_norm=setup.clip, loss_reduction="sum", poisson_sampling=setup.sampling == "poisson")
        before = model.weight.detach().to(torch.float64)[:, 0].clone()
        step = 0
        while step < setup.steps:
            for batch_features, batch_slots in loader:
                optimizer.zero_grad()
                module(batch_features).gather(1, batch_slots[:, None]).sum().backward()
                optimizer.step()
                after = model.weight.detach().to(torch.float64)[:, 0].clone()
                releases[:, step] = ((before - after) / (setup.lr * setup.clip)).numpy()
                before = after
                step += 1
                if step == setup.steps:
                    break
        final = (-model.weight.detach().to(torch.float64)[:, 0] / (setup.lr * setup.clip)).numpy()
    return releases, final, engine


def opacus_releases(setup: OpacusSetup, which, seeds, trials) -> tuple[np.ndarray, np.ndarray]:
    """Releases of ``trials`` trials on D (which 0) or D′ (1): ((trials, T) per-step x_t, (trials,) final S), one
    Opacus run per seed in ``seeds`` (len(seeds) = ceil(trials/chunk)), the last run holding the remainder."""
    which = check_int("which", which, minimum=0, maximum=1)
    trials = check_int("trials", trials, minimum=0)
    runs = -(-trials // setup.chunk)
    if len(seeds) != runs:
        raise ValueError(f"seeds must hold one seed per run of at most {setup.chunk} trials ({runs}), got {len(seeds)}")
    steps, finals = np.empty((trials, setup.steps)), np.empty(trials)
    for j, seed in enumerate(seeds):
        start = j * setup.chunk
        size = min(setup.chunk, trials - start)
        steps[start:start + size], finals[start:start + size], _ = _run(setup, which, size, int(seed))
    return steps, finals


def opacus_claims(setup: OpacusSetup) -> tuple[dict, tuple]:
    """(accountant → ε at δ, history): for each of ``ACCOUNTANTS`` one Opacus run of ONE trial on D′ with
    ``PrivacyEngine(accountant=...)``, then ``engine.get_epsilon(δ)`` as the engine reports it (default arguments)."""
    claims, history = {}, ()
    for accountant in ACCOUNTANTS:
        _, _, engine = _run(setup, 1, 1, 0, accountant)
        claims[accountant] = float(engine.get_epsilon(setup.delta))
        history = tuple(tuple(entry) for entry in engine.accountant.history)
    return claims, history


def opacus_setup(*, n, batch, noise_multiplier, steps, sampling="poisson", clip=1.0, lr=1.0, d=2, delta=1e-5,
                 chunk=DEFAULT_CHUNK, name="opacus") -> OpacusSetup:
    """Validate the arguments (``OpacusSetup``), check opacus is installed, and read Opacus's claims."""
    require_opacus(name)
    n = check_int("n", n, minimum=2)
    batch = check_int("batch", batch, minimum=1, maximum=n)
    if n % batch:
        raise ValueError(f"batch must divide n (q = batch/n = 1/len(loader)), got batch={batch}, n={n}")
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be one of {SAMPLINGS}, got {sampling!r}")
    clip = check_real("clip", clip, positive=True)
    if math.frexp(clip)[0] != 0.5:
        raise ValueError(f"clip must be a power of two (the canary's clip factor is then exact in float32), got {clip}")
    setup = OpacusSetup(n=n, batch=batch, noise_multiplier=check_real("noise_multiplier", noise_multiplier,
                                                                      positive=True),
                        clip=clip, steps=check_int("steps", steps, minimum=1), lr=check_real("lr", lr, positive=True),
                        d=check_int("d", d, minimum=2), sampling=sampling, delta=check_probability("delta", delta),
                        chunk=check_int("chunk", chunk, minimum=1))
    claims, history = opacus_claims(setup)
    return OpacusSetup(**{**setup.__dict__, "claims": claims, "history": history})


def _check_outputs(outputs, columns: int) -> np.ndarray:
    outputs = np.asarray(outputs, dtype=np.float64)
    if outputs.ndim != 2 or outputs.shape[1] != columns:
        raise ValueError(f"outputs must have shape (trials, {columns}), got {outputs.shape}")
    return outputs


def _poisson_steps_llr(q: float, sigma: float, steps: int) -> Callable[[np.ndarray], np.ndarray]:
    log_keep = math.log1p(-q) if q < 1 else -math.inf

    def log_likelihood_ratio(outputs):
        x = _check_outputs(outputs, steps)
        return np.sum(np.logaddexp(log_keep, math.log(q) + (2 * x - 1) / (2 * sigma**2)), axis=1)

    return log_likelihood_ratio


def _poisson_final_llr(q: float, sigma: float, steps: int) -> Callable[[np.ndarray], np.ndarray]:
    counts = np.arange(steps + 1)
    log_weights = binom.logpmf(counts, steps, q)
    variance = steps * sigma**2

    def log_likelihood_ratio(outputs):
        s = _check_outputs(outputs, 1)
        return logsumexp(log_weights + (2 * counts * s - counts**2) / (2 * variance), axis=1)

    return log_likelihood_ratio


def _fixed_order_llr(sigma: float, steps: int) -> Callable[[np.ndarray], np.ndarray]:
    def log_likelihood_ratio(outputs):
        return (_check_outputs(outputs, steps)[:, 0] - 0.5) / sigma**2  # the canary's batch is the first

    return log_likelihood_ratio


def opacus_scenario(setup: OpacusSetup, *, release="steps", accountant="prv", name) -> Scenario:
    """The ``Scenario`` of an ``OpacusSetup``: release "steps" (white-box, outputs (trials, T)) or "final"
    (black-box, outputs (trials, 1), Poisson only); the claim: ``setup.claims[accountant]``, an (ε, δ) claim."""
    if release not in ("steps", "final"):
        raise ValueError(f"release must be 'steps' or 'final', got {release!r}")
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")
    q, sigma, steps = setup.sample_rate, setup.noise_multiplier, setup.steps
    if setup.sampling == "poisson":
        tight, mu = poisson_pld_epsilon(q, sigma, steps, setup.delta), None
        llr = _poisson_steps_llr(q, sigma, steps) if release == "steps" else _poisson_final_llr(q, sigma, steps)
        law = f"Poisson q={q:g} (make_private, poisson_sampling=True)"
    elif release == "final":
        raise ValueError("release='final' is defined for sampling='poisson' only")
    else:
        mu = 1 / sigma  # the canary adds exactly C in the first batch, noise σC: sensitivity 1 in units of C
        tight, llr = gaussian_epsilon(setup.delta, mu), _fixed_order_llr(sigma, steps)
        law = f"fixed-order batches b={setup.batch} (poisson_sampling=False, canary in batch 1), true μ={mu:.6g}"
    seen = "every update" if release == "steps" else "final model only"
    description = (f"Opacus DP-SGD, T={steps}, n={setup.n}, {law}, σ={sigma:g}, C={setup.clip:g}, {seen}; claimed by "
                   f"Opacus {accountant.upper()} (RDP ε={setup.claims['rdp']:.6g}, PRV ε={setup.claims['prv']:.6g})")
    columns = steps if release == "steps" else 1

    def sample(rng, trials, which):
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        trials = check_int("trials", trials, minimum=0)
        which = check_int("which", which, minimum=0, maximum=1)
        seeds = rng.integers(0, SEED_BOUND, -(-trials // setup.chunk))
        if trials == 0:
            return np.empty((0, columns))
        per_step, final = opacus_releases(setup, which, seeds, trials)
        return per_step if release == "steps" else final[:, None]

    return Scenario(name=name, description=description, sample=sample, delta=setup.delta,
                    claimed_epsilon=setup.claims[accountant], tight_epsilon=tight, mu=mu, log_likelihood_ratio=llr)


#: Settings of the correct-use built-ins: q = 1/2, σ = 2, T = 4, n = 2 per trial (the canary and one e_2 record).
DPSGD_SETTINGS = dict(n=2, batch=1, noise_multiplier=2.0, steps=4)
#: Settings of the planted misuse and its twin: b = 1 of n = 100 per trial, one epoch (T = 100), σ = 1.
FIXED_ORDER_SETTINGS = dict(n=100, batch=1, noise_multiplier=1.0, steps=100)


def opacus_dpsgd_scenario(**kwargs) -> Scenario:
    """``opacus-dpsgd``: Opacus DP-SGD with Poisson sampling (q = 1/2, σ = 2, T = 4, C = 1, n = 2), white-box: every
    update seen, scored by the Poisson-mixture likelihood ratio; claimed by Opacus's PRV accountant (the engine's
    default). Keyword arguments override ``opacus_setup``'s."""
    setup = opacus_setup(**{**DPSGD_SETTINGS, "name": "opacus-dpsgd", **kwargs})
    return opacus_scenario(setup, release="steps", name="opacus-dpsgd")


def opacus_dpsgd_final_model_scenario(**kwargs) -> Scenario:
    """``opacus-dpsgd-final-model``: the ``opacus-dpsgd`` run, black-box: only ⟨θ_T − θ_0, v⟩ seen."""
    setup = opacus_setup(**{**DPSGD_SETTINGS, "name": "opacus-dpsgd-final-model", **kwargs})
    return opacus_scenario(setup, release="final", name="opacus-dpsgd-final-model")


def opacus_fixed_order_scenario(**kwargs) -> Scenario:
    """Planted ``opacus-fixed-order-loader``: ``make_private(poisson_sampling=False)`` on a fixed-order loader
    (b = 1 of n = 100 per trial, one epoch, σ = 1) claimed by Opacus's PRV accountant as Poisson q = 1/100."""
    setup = opacus_setup(**{**FIXED_ORDER_SETTINGS, "sampling": "fixed_order", "name": "opacus-fixed-order-loader",
                            **kwargs})
    return opacus_scenario(setup, name="opacus-fixed-order-loader")


def opacus_fixed_order_twin_scenario(**kwargs) -> Scenario:
    """Twin of ``opacus-fixed-order-loader``: the same loader through ``make_private(poisson_sampling=True)``."""
    setup = opacus_setup(**{**FIXED_ORDER_SETTINGS, "sampling": "poisson", "name": "opacus-fixed-order-loader-twin",
                            **kwargs})
    return opacus_scenario(setup, name="opacus-fixed-order-loader-twin")


#: Built-in name → factory (``registry.SCENARIOS`` builds each on first use).
OPACUS_BUILTINS: dict[str, Callable[[], Scenario]] = {
    "opacus-dpsgd": opacus_dpsgd_scenario,
    "opacus-dpsgd-final-model": opacus_dpsgd_final_model_scenario,
}
