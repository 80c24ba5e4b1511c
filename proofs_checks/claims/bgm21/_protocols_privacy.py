"""Protocols declared by the bgm21 privacy claims (data only; merged in the folder's ``__init__``)."""

PROTOCOLS: dict[str, tuple[str, str]] = {
    "advanced_composition": (
        "advanced_composition(eps, k, delta_prime, delta=0, form='lemma1') -> (eps_total, delta_total)",
        "bgm21 Lemma 1: k adaptive (eps, delta)-DP steps are (eps*sqrt(2k log(1/delta')) + k*eps*(e^eps - 1), "
        "k*delta + delta')-DP",
    ),
    "laplace_noisy_argmin": (
        "laplace_noisy_argmin(scores (J,), scale, rng) -> int",
        "bgm21 Algorithm 1 lines 6 and 12: argmin_j scores_j + u_j with u_j iid Laplace(0, scale), lowest index on "
        "ties; consumes one rng.laplace(0, scale, J) call",
    ),
    "noisy_argmin_probabilities": (
        "noisy_argmin_probabilities(scores (J,), scale, *, return_error=False) -> (J,)",
        "the exact law of laplace_noisy_argmin: P(j) = integral of the Laplace density of u_j times the probability "
        "that every rival's noisy score is larger",
    ),
    "report_noisy_min_epsilon": (
        "report_noisy_min_epsilon(sensitivity, scale) -> float",
        "the pure-DP epsilon of report-noisy-min with iid Laplace(scale) noise over scores of centred "
        "l_inf sensitivity Delta: 2*Delta/scale",
    ),
    "centred_score_sensitivity": (
        "centred_score_sensitivity(scores (J,), scores_prime (J,)) -> float",
        "min over kappa of ||scores - scores_prime - kappa*1||_inf = (max_j d_j - min_j d_j)/2, d = scores - "
        "scores_prime",
    ),
    "theorem6_params": (
        "theorem6_params(n, d, J, L0, R_x, D, C1, eps, delta, noise='certified', alpha_variant='corrected') -> "
        "Theorem6Params",
        "bgm21 Theorem 6's settings for Algorithm 5: smoothing beta, accuracy alpha, steps T, score sensitivity "
        "L0*R_x*D/n and the Laplace scales lambda (certified: 2*Delta/eps_step with eps_step the largest per-step "
        "epsilon whose (T-1)-fold composition certifies eps; ttz15: TTZ15's printed scale, bgm21.E28)",
    ),
}
"""Protocols declared by the bgm21 claims of this area (data only; merged in the folder's ``__init__``)."""
