PROTOCOLS: dict[str, tuple[str, str]] = {
    "RecursiveGradientEstimator": (
        "RecursiveGradientEstimator(gradient, data (n, p), d) with start(w, batch, noise=None) -> (d,) and "
        "update(w, w_prev, batch, eta, difference_noise=None, gradient_noise=None) -> (d,)",
        "bgm21 Algorithm 1 lines 5, 10, 11 (and Algorithm 6's noisy terms): start returns the batch mean of "
        "grad f(w, z) plus noise; update returns (1 - eta)(previous + batch mean of grad f(w, z) - grad f(w_prev, z) "
        "+ difference_noise) + eta(batch mean of grad f(w, z) + gradient_noise), each record read at w and w_prev",
    ),
    "sfw_batch_sizes": (
        "sfw_batch_sizes(b, n_rounds, rounding='ceil') -> list[list[int]]",
        "bgm21 Algorithm 1 lines 4 and 9: round r reads b, then ceil(b/(t+1)) records at steps t = 1..2^r - 1",
    ),
    "sfw_data_budget": (
        "sfw_data_budget(b, n_rounds, rounding='ceil') -> int",
        "the number of records one run of Algorithm 1 or 6 reads: the sum of sfw_batch_sizes",
    ),
    "theorem8_params": (
        "theorem8_params(n, eps, delta, J, schedule='theory') -> SFWParams",
        "bgm21 Theorem 8's R (log base 2, bgm21.E5), b = n/ln^2 n and eta = 1/sqrt(t+1), rounded "
        "(n_rounds = max(1, floor R), b = floor(n/ln^2 n)), with n_rounds_real and b_real",
    ),
    "theorem11_params": (
        "theorem11_params(n, d, p, eps, delta, schedule='theory') -> SFWParams",
        "bgm21 Theorem 11's R (log base 2, bgm21.E5; kappa = min(1/(p-1), 2 ln d)), b and eta for Algorithm 6",
    ),
    "theorem16_params": (
        "theorem16_params(n, d, p, rho_wc, L0, D, eps, delta, beta_variant='corrected') -> ProxGuidedParams",
        "bgm21 Theorem 16's R and beta for Algorithm 2 (printed beta = 2 rho kappa, corrected 2 rho/nu_eff, "
        "bgm21.E13), with p_bar, nu_eff and mu = nu_eff beta - rho",
    ),
    "nu_eff": (
        "nu_eff(p, d) -> float",
        "the strong-convexity modulus of (1/2)||.||_pbar^2 with respect to ||.||_p, pbar = min(2, max(p, 1 + 1/ln d)) "
        "(Proposition 13's nu)",
    ),
    "rate_theorem16": (
        "rate_theorem16(n, d, p, rho_wc, L0, D, eps, delta) -> float",
        "bgm21 Theorem 16, eq. (7): the accuracy vartheta with constant 1, kappa = min(1/(p-1), ln d)",
    ),
}
"""Protocols declared by the bgm21 claims of this area (data only; merged in the folder's ``__init__``)."""
