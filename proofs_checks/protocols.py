"""Subject protocols: the functions a claim may call on an implementation under test.

A subject is a set of named implementations. ``reference`` and ``fast`` provide all of them; a user's
implementation provides whichever it has, and the claims that need only those run on it. Each entry
gives the call signature and the semantics the claims rely on; the reference module that defines the
semantics is named so that a reader can open it next to the paper.

Arrays are NumPy float64 unless stated; ``loss(x, z)`` is the per-sample loss f(x; z). The reference
calls it on one point x of shape (d,) and one data row z of shape (p,); the fast backend calls it once
with stacked points (..., d) and rows (..., p) that broadcast. The objectives in
``reference.objectives`` support both, and the claims only pass such losses.

``Subject`` is such a set of named implementations (checked against ``PROTOCOLS``); the ways to obtain one
(``reference``, ``fast``, a library adapter, ``module:attr``) are in ``proofs_checks.subjects``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

__all__ = ["PROTOCOLS", "protocol_names", "Subject", "SubjectError"]

PROTOCOLS: dict[str, tuple[str, str]] = {
    # --- samplers (reference.rng) -------------------------------------------------------------
    "sample_sphere": (
        "sample_sphere(rng, shape, d, radius=1.0) -> (*shape, d)",
        "uniform on the sphere of the given radius; consumes rng.standard_normal((*shape, d))",
    ),
    "sample_ball": (
        "sample_ball(rng, shape, d, radius=1.0) -> (*shape, d)",
        "uniform in the ball; consumes standard_normal((*shape, d)) then random(shape)",
    ),
    "sample_gaussian": (
        "sample_gaussian(rng, shape, d) -> (*shape, d)",
        "N(0, I_d) directions; consumes standard_normal((*shape, d))",
    ),
    # --- mechanisms (reference.mechanisms) ----------------------------------------------------
    "clip_scalar": ("clip_scalar(value, clip_threshold)", "max(-C, min(C, a)), elementwise"),
    "clip_vector": ("clip_vector(vector, clip_threshold)", "v * min(1, C/||v||), clip(0) = 0"),
    "clipped_mean": (
        "clipped_mean(values, clip_threshold, normalizer=None)",
        "sum_i clip(values_i) / (normalizer or n); rows are scalars (n,) or vectors (n, d)",
    ),
    "clipped_mean_sensitivity": (
        "clipped_mean_sensitivity(clip_threshold, n, relation='replace_one') -> float",
        "declared l2 sensitivity of clipped_mean: 2C/n under replace-one",
    ),
    "gaussian_mechanism": (
        "gaussian_mechanism(value, noise_std, rng)",
        "value + noise_std * N(0, I); consumes one standard_normal(shape of value)",
    ),
    "tree_node": ("tree_node(t) -> list[(a, b)]", "NODE(t) of zo_o2nc Alg 5 (dyadic decomposition of [1, t])"),
    "participation_count": (
        "participation_count(q, n) -> int",
        "number of tree nodes N_b (b <= n) containing leaf q",
    ),
    "max_participation_count": ("max_participation_count(n) -> int", "max over q of participation_count(q, n)"),
    "tree_aggregate": (
        "tree_aggregate(leaf_values (n, d), node_noise (n, d)) -> (n, d)",
        "released prefix sums: row t-1 = sum over NODE(t) of (node sum of leaves + xi_b)",
    ),
    "tree_noise_covariance": (
        "tree_noise_covariance(t, t_other, noise_stds) -> float",
        "c with Cov(TREE(t), TREE(t')) = c I",
    ),
    # --- smoothing facts (reference.smoothing) ------------------------------------------------
    "smoothness_constant": ("smoothness_constant(d) -> float", "kappa_d = 2 Gamma(d/2+1)/(sqrt(pi) Gamma((d+1)/2))"),
    "gamma_ratio": ("gamma_ratio(n) -> float", "Gamma(n/2+1)/Gamma((n-1)/2+1) (zo_o2nc Lemma A.2)"),
    "symmetric_difference_fraction": (
        "symmetric_difference_fraction(distance, smoothing_radius, d) -> float",
        "vol(B(x,delta) sym-diff B(y,delta)) / vol(delta B) (zo_o2nc Lemma A.1)",
    ),
    "smoothed_abs_at_zero": (
        "smoothed_abs_at_zero(lipschitz, smoothing_radius, d) -> float",
        "uniform-ball smoothing of L|x_1| at 0",
    ),
    "smoothed_ridge_slope": (
        "smoothed_ridge_slope(r, smoothing_radius, d, profile='abs', tau=1.0) -> float",
        "E[phi'(r + delta v_1)], v uniform in the unit ball",
    ),
    "smoothed_ridge_value": (
        "smoothed_ridge_value(r, smoothing_radius, d, profile='abs', tau=1.0) -> float",
        "E[phi(r + delta v_1)], v uniform in the unit ball",
    ),
    # --- zeroth-order estimators (reference.estimators) ---------------------------------------
    "direction_scale": ("direction_scale(direction_law, d) -> float", "c with E[c u u^T] = I"),
    "finite_difference": (
        "finite_difference(loss, x, z, direction, perturbation) -> float",
        "(f(x + h u; z) - f(x - h u; z)) / (2h)",
    ),
    "per_sample_finite_differences": (
        "per_sample_finite_differences(loss, x, batch, direction, perturbation) -> (b,)",
        "DPZero's a_i for one shared direction",
    ),
    "two_point_estimate": (
        "two_point_estimate(loss, x, batch (b, p), directions (b, m, d), perturbation, direction_law='unit_sphere') -> (d,)",
        "zo_o2nc Alg 1 (GRAD) with m directions per sample: mean_i mean_j c fd(x, z_i, u_ij) u_ij",
    ),
    "one_point_estimate": (
        "one_point_estimate(loss, x, batch, directions, smoothing_radius) -> (d,)",
        "mean_i mean_j (d/delta) f(x + delta u_ij; z_i) u_ij (zo_o2nc Lemma 2.2(iv))",
    ),
    "diff_estimate": (
        "diff_estimate(loss, x, y, batch, directions, smoothing_radius) -> (d,)",
        "zo_o2nc Alg 2 (DIFF): mean_i mean_j (d/delta)(f(x + delta u; z_i) - f(y + delta u; z_i)) u",
    ),
    # --- accounting (reference.accounting; the library adapters in proofs_checks.adapters) ----
    "rdp_poisson_gaussian": (
        "rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps) -> (len(orders),)",
        "total RDP per order of `steps` Poisson-subsampled Gaussians, remove direction under add/remove "
        "(as dp_accounting/Opacus compute it); q = 1 gives steps * alpha / (2 z^2)",
    ),
    "epsilon_from_rdp": (
        "epsilon_from_rdp(orders, rdp, delta) -> float",
        "improved RDP -> (eps, delta) conversion (Balle et al. 2020 Thm 21 / CKS Prop 12) minimised over the given orders",
    ),
    "epsilon_poisson_gaussian": (
        "epsilon_poisson_gaussian(sampling_probability, noise_multiplier, steps, delta) -> float",
        "the implementation's own end-to-end eps for `steps` Poisson-subsampled Gaussians at delta",
    ),
    "gaussian_delta": (
        "gaussian_delta(epsilon, mu) -> float",
        "exact Gaussian / mu-GDP privacy profile Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle-Wang 2018 Thm 8)",
    ),
    "noise_multiplier_poisson_gaussian": (
        "noise_multiplier_poisson_gaussian(target_epsilon, delta, sampling_probability, steps) -> float",
        "noise multiplier z = sigma/Delta calibrated so that the implementation's eps is at most target_epsilon",
    ),
    "epsilon_from_zcdp": (
        "epsilon_from_zcdp(rho, delta) -> float",
        "optimal RDP-route eps of a rho-zCDP mechanism: min over alpha > 1 of the BBGHS conversion of rho*alpha "
        "(Canonne-Kamath-Steinke 2020; reference.accounting.conversions)",
    ),
    "rdp_tree_aggregation": (
        "rdp_tree_aggregation(orders, noise_multiplier, steps, restarts=1) -> (len(orders),)",
        "RDP of tree aggregation: restarts * alpha * (floor(log2 steps) + 1) / (2 z^2) (zo_o2nc Thm 4.3 corrected)",
    ),
    "rdp_tree_exact": (
        "rdp_tree_exact(orders, sensitivities (n,), noise_stds (n,)) -> (len(orders),)",
        "exact per-record tree RDP alpha/2 * max_q s_q^2 sum_{b <= n, q in N_b} 1/sigma_b^2 (zo_o2nc Theorem 4.3 via Lemma C.1, exact)",
    ),
    "dpzero_lemma22_sigma": (
        "dpzero_lemma22_sigma(sensitivity, steps, epsilon, delta) -> float",
        "dpzero Lemma 2.2 as printed: sigma = 2 Delta sqrt(2 T log(e + eps/delta)) / eps (a standard deviation)",
    ),
    "zo_o2nc_cor44_sigma": (
        "zo_o2nc_cor44_sigma(d, lipschitz, T, B1, B2, rho, count_rule='exact') -> float",
        "zo_o2nc Cor 4.4 tree noise: 'paper_2lnT' sqrt(2 ln T) s_2/rho, or 'exact' with the exact node counts; "
        "s_1 = 2dL/B1, s_t = 4dL/(B2 T) (reference.algorithms.zo_o2nc_privacy)",
    ),
    "spider_sosp_sigma": (
        "spider_sosp_sigma(rule, *, lipschitz, smoothness, loss_gap, d, n, epsilon, delta, steps=None, "
        "adjacency='replace_one', tree_scope='global') -> float",
        "Liu-Talwar Alg 2 tree noise by rule 'gdp_exact', 'thm2.2', 'lemma3.7', 'lemma3.8' or 'thm3.11' (the last "
        "computed although not private); spider_sosp.E3",
    ),
    "spider_sosp_mu": (
        "spider_sosp_mu(sigma, *, lipschitz, smoothness, loss_gap, d, n, epsilon, steps=None, adjacency='replace_one', "
        "tree_scope='global') -> float",
        "true GDP mu = sbar sqrt(k_adj L) / sigma of Liu-Talwar Alg 2 with tree noise sigma (Theorem 2.2 tree; spider_sosp.E1, spider_sosp.E5)",
    ),
    # --- audit bounds (empirical_dp.bounds, empirical_dp.one_run; proofs_checks.adapters.audit_bounds) --
    "epsilon_lower_bound": (
        "epsilon_lower_bound(false_positives, negatives, false_negatives, positives, delta, confidence) -> float",
        "eps_lb of one fixed threshold test: max(0, log((1-delta-FNR_u)/FPR_u), log((1-delta-FPR_u)/FNR_u)) with "
        "one-sided Clopper-Pearson upper bounds at 1-(1-confidence)/2 each (Kairouz-Oh-Viswanath Thm 2.1); "
        "P[eps_lb > true eps(delta)] <= 1 - confidence",
    ),
    "gdp_mu_lower_bound": (
        "gdp_mu_lower_bound(false_positives, negatives, false_negatives, positives, confidence) -> float",
        "mu_lb = max(0, Phi^-1(1-FPR_u) - Phi^-1(FNR_u)) with the same Bonferroni CP upper bounds "
        "(Dong-Roth-Su Def. 2.6); P[mu_lb > true mu] <= 1 - confidence",
    ),
    "epsilon_ceiling": (
        "epsilon_ceiling(trials_per_side, delta, confidence) -> float",
        "largest eps_lb any threshold test with N trials per side can certify: max(0, log((1-delta-u)/u)), "
        "u = 1 - ((1-confidence)/2)^(1/N)",
    ),
    "one_run_epsilon_lower_bound": (
        "one_run_epsilon_lower_bound(correct, guesses, delta, confidence, canaries) -> float",
        "largest eps at which v correct of r guesses among m canaries reject (eps, delta)-DP at level "
        "1 - confidence (Steinke-Nasr-Jagielski 2023 Thm 3); canaries may be None when delta = 0",
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


def protocol_names() -> tuple[str, ...]:
    return tuple(PROTOCOLS)


class SubjectError(ValueError):
    """A subject specification that cannot be resolved, with the reason."""


class Subject:
    """A named set of implementations, one per protocol name (a key of ``PROTOCOLS``)."""

    def __init__(
        self,
        name: str,
        implementations: Mapping[str, Callable] | None = None,
        *,
        is_reference: bool = False,
        borrowed: Iterable[str] = (),
        **more: Callable,
    ):
        impls = dict(implementations or {}, **more)
        unknown = sorted(set(impls) - set(PROTOCOLS))
        if unknown:
            raise SubjectError(f"unknown protocol name(s) {unknown}; known: {sorted(PROTOCOLS)}")
        for key, fn in impls.items():
            if not callable(fn):
                raise SubjectError(f"implementation of {key!r} must be callable, got {type(fn).__name__}")
        self.name = name
        self._impls = impls
        self.is_reference = is_reference
        self.borrowed = tuple(sorted(borrowed))

    def __repr__(self) -> str:
        return f"Subject({self.name!r}, protocols={sorted(self._impls)})"

    def __getattr__(self, item: str):
        impls = self.__dict__.get("_impls", {})
        if item in impls:
            return impls[item]
        raise AttributeError(f"subject {self.__dict__.get('name', '?')!r} does not provide {item!r}")

    @property
    def protocols(self) -> tuple[str, ...]:
        return tuple(sorted(self._impls))

    def provides(self, names: Iterable[str]) -> bool:
        return all(n in self._impls for n in names)

    def replace(self, label: str = "mutant", **implementations: Callable) -> "Subject":
        """A copy with some implementations swapped (how mutants are built). Never the reference."""
        for key in implementations:
            if key not in self._impls:
                raise SubjectError(f"cannot replace {key!r}: subject {self.name!r} does not provide it")
        return Subject(f"{self.name}[{label}]", {**self._impls, **implementations}, borrowed=self.borrowed)
