"""Claims of DPZero (Zhang, Li, Thekumparampil, Oh, He; ICML 2024, arXiv:2310.09639).

``PROTOCOLS``, ``REFERENCE_MODULES`` and ``FAST_MODULES``: the protocols this paper's claims add, and where
the reference and fast subjects find them (proofs_checks/folders.py); ``OPTIONAL_PROTOCOLS``: those only the torch
backend implements.
"""

REFERENCE_MODULES = ("reference.algorithms.dpzero", "reference.algorithms.dpzero_theory")
FAST_MODULES = ("reference.fast.dpzero",)
#: Protocols only an optional backend implements (not the reference, not fast): the torch backend, extra "torch";
#: its subject is ``reference.torch_backend.vector:SUBJECT``.
OPTIONAL_PROTOCOLS = {"dpzero_module": "reference.torch_backend.dpzero"}

PROTOCOLS: dict[str, tuple[str, str]] = {
    "dpzero_lemma22_sigma": (
        "dpzero_lemma22_sigma(sensitivity, steps, epsilon, delta) -> float",
        "dpzero Lemma 2.2 as printed: sigma = 2 Delta sqrt(2 T log(e + eps/delta)) / eps (a standard deviation)",
    ),
    # --- DPZero algorithms (reference.algorithms.dpzero; fast twin reference.fast.dpzero) -------------
    "dpzero": (
        "dpzero(loss, data, x0, *, steps, step_size, perturbation, clip_threshold, epsilon=None, delta=None, seed, "
        "noise_seed=None, direction='sphere', clip_target='normalized', batching='full', batch_size=None, "
        "accountant=None, noise='gaussian', record_trajectory=False, trace=None, sampling_probability=None) -> DPResult",
        "dpzero Alg 2: u_t from key ('dpzero','direction',t) under the public seed; a_i central differences "
        "(NaN -> 0, +-inf -> +-C before clipping); s_t = clipped mean + sigma z_t with z_t the t-th "
        "standard_normal() of key ('dpzero','noise') under the secret noise_seed (None: fresh OS entropy; an int "
        "or SecretSeed must differ from seed); x_{t+1} = x_t - alpha s_t u_t; tau = integers(T) of key "
        "('dpzero','output'); result.ledger public (plan, switches, seed, secret_seed_source, "
        "guarantee_condition), result.diagnostics non-private counts; fast: seed may be a sequence of R public "
        "seeds, noise_seed None / one secret (spawned) / R secrets (replicates, leading axis)",
    ),
    "dpgd_zeroth_order": (
        "dpgd_zeroth_order(loss, data, x0, *, steps, step_size, perturbation, clip_threshold, epsilon=None, "
        "delta=None, seed, noise_seed=None, direction='sphere', batching='full', batch_size=None, accountant=None, "
        "noise='gaussian', record_trajectory=False, trace=None, sampling_probability=None) -> DPResult",
        "dpzero Alg 1 (DPGD-0th): g_i = a_i u_t (non-finite -> 0), vector clipping, z_t = standard_normal(d) of "
        "the noise key under the secret noise_seed",
    ),
    "dpgd": (
        "dpgd(gradient, data, x0, *, steps, step_size, clip_threshold, epsilon=None, delta=None, seed, "
        "noise_seed=None, batching='full', batch_size=None, accountant=None, noise='gaussian', "
        "record_trajectory=False, trace=None, sampling_probability=None) -> DPResult",
        "first-order DP-GD (dpzero §2.1): clipped mean of per-sample gradients (non-finite -> 0) + "
        "N(0, sigma^2 I_d) from the secret noise_seed",
    ),
    "mezo": (
        "mezo(loss, data, x0, *, steps, step_size, perturbation, seed, clip_threshold=inf, direction='gaussian', "
        "batching='full', batch_size=None, record_trajectory=False, trace=None, sampling_probability=None) -> DPResult",
        "MeZO / ZO-SGD: Alg 2 with no noise (non-private; batches from the public seed)",
    ),
    "dpzero_module": (
        "dpzero_module(model, per_example_loss, data, *, steps, step_size, perturbation, clip_threshold, "
        "epsilon=None, delta=None, seed, noise_seed=None, direction='sphere', clip_target='normalized', "
        "batching='full', batch_size=None, accountant=None, noise='gaussian', sampling_probability=None, "
        "output='final', record_trajectory=False, trace=None, flat_key=False, progress=None) -> TorchDPResult",
        "dpzero Alg 2 on the trainable tensors of a torch.nn.Module (reference.torch_backend.dpzero.dpzero): "
        "per_example_loss(model, batch) -> (b,) tensor; u_t block k from key ('dpzero','direction',t,k) under the "
        "public seed (= direction_for_step(..., blocks=tensor numels)); plan, secret streams, batches, tau, ledger "
        "as the reference's dpzero; theta never written during the two evaluations; update theta_k -= (alpha s_t u_k) "
        "rounded to the dtype; result.trajectory (T+1, d) float64 when record_trajectory, result.model holds theta_T "
        "('final') or theta_tau ('uniform'), result.sizes / result.dtype",
    ),
    "privacy_plan": (
        "privacy_plan(*, clip_threshold, n, steps, epsilon, delta, batching='full', batch_size=None, "
        "accountant=None, sampling_probability=None) -> PrivacyPlan",
        "noise sigma, relation, sensitivity and the eps of one run (dpzero Lemma 2.2; §5 and App. B.2), never below the exact eps when "
        "that is known (Lemma 2.2 beyond eps = 80, dpzero.E5); Poisson: add/remove when sampling_probability q is given, "
        "zero-out (n public) when q = B/n",
    ),
    "direction_for_step": (
        "direction_for_step(seed, t, d, direction='sphere') -> (d,)",
        "u_t regenerated from key ('dpzero','direction',t) (the seed trick, dpzero App. B.2)",
    ),
    # --- DPZero theory (reference.algorithms.dpzero_theory; no fast twin, the fast subject borrows it) ----
    "theorem3_settings": (
        "theorem3_settings(n, d, effective_rank, epsilon, delta, lipschitz, smoothness) -> TheoremSettings",
        "dpzero Thm 3 choices (mpf): step_size 1/(4 ell (r+2)), steps_formula n(r+2)eps/(4 sqrt(r Lg)), "
        "clip_threshold C = 4 Ltilde, extra['C0'] = C/sqrt(2), extra['Ltilde2'], noise_std with the integer T",
    ),
    "corollary_f4_settings": (
        "corollary_f4_settings(n, d, effective_rank, epsilon, delta, lipschitz, smoothness, pl_constant) -> "
        "TheoremSettings",
        "dpzero Cor F.4 choices (mpf): steps_formula 8 kappa (r+2) log(n^2 eps^2/(kappa r Lg)), clip_threshold "
        "C = LtildeF4/2, extra['C0'] = C/sqrt(2), extra['LtildeF4_2'] (its own Ltilde, erratum dpzero.E4)",
    ),
    "ltilde_theorem3_squared": (
        "ltilde_theorem3_squared(n, d, effective_rank, epsilon, delta, lipschitz) -> mpf",
        "L^2 log(2 sqrt(2 pi) d (r+2) n^3 eps^2/(r Lg)) (dpzero Thm 3)",
    ),
    "ltilde_corollary_f4_squared": (
        "ltilde_corollary_f4_squared(n, d, effective_rank, epsilon, delta, lipschitz, smoothness, pl_constant) -> mpf",
        "64 L^2 log(32 sqrt(2 pi) kappa n^3 d (r+2) eps^2/(r Lg)), kappa = ell/mu (dpzero Cor F.4)",
    ),
    "clip_failure_bound": (
        "clip_failure_bound(c0, lipschitz) -> mpf",
        "2 sqrt(2 pi) exp(-c0^2/(8 L^2)): Lemma C.1(ii) bound on P(|u^T a| >= c0), ||a|| <= L, u on the sqrt(d) sphere",
    ),
}
