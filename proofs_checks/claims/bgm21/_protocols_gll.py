PROTOCOLS: dict[str, tuple[str, str]] = {
    # --- bgm21 §3: Moreau smoothing of GLLs and Algorithm 3 (reference.gll) ----------------------------------------
    "moreau_envelope": (
        "moreau_envelope(u, y, loss: GLL, beta, *, method='auto', steps=100) -> array like u",
        "bgm21 Lemma 3: l_beta(u) = min_v l(v) + (beta/2)(v - u)^2 of the scalar loss l^(y), elementwise",
    ),
    "moreau_gradient": (
        "moreau_gradient(u, y, loss: GLL, beta, *, method='auto', steps=100) -> array like u",
        "bgm21 Lemma 3: the derivative l_beta'(u) = beta(u - prox_{l/beta}(u)), elementwise",
    ),
    "moreau_prox_bisection": (
        "moreau_prox_bisection(u, y, loss: GLL, beta, steps) -> array like u",
        "bgm21 Algorithm 3's bisection (rebuilt): prox_{l/beta}(u) to within (L0/beta)2^-steps, bracket "
        "[u - L0/beta, u + L0/beta], one subgradient of l per step and record",
    ),
    "bisection_steps": (
        "bisection_steps(lipschitz, feature_bound, alpha) -> int",
        "bgm21 Lemma 4 (rebuilt): K = ceil(log2(L0 R / alpha)), 0 when alpha >= L0 R",
    ),
    "moreau_glm_gradient": (
        "moreau_glm_gradient(w (d,), X (m, d), y (m,), loss: GLL, beta, alpha, feature_bound) -> (m, d)",
        "bgm21 Lemma 4, Algorithm 3 (rebuilt): per-record rows beta(u_i - v_i) x_i, u_i = <w, x_i>, v_i the "
        "bisection prox after bisection_steps(L0, R, alpha) steps; within alpha of grad f_beta in any dual norm with "
        "||x_i||_* <= R, and of dual norm <= L0 ||x_i||_*",
    ),
    # --- bgm21 Theorem 5: the settings (reference.algorithms.bgm21_gll; theorem6_params is the privacy area's) ------
    "theorem5_params": (
        "theorem5_params(n, d, L0, R_x, D, eps, delta, beta_variant='corrected') -> Theorem5Params",
        "bgm21 Theorem 5: beta = sqrt(n) L0/(R_x D) ('corrected') or sqrt(n) L0/R_x ('printed'), alpha = "
        "L0 R_x/(n ln n), L = 2 L0 R_x, beta_s = beta R_x^2, step eta = (D/L) min{4/sqrt(n), eps/sqrt(d ln(1/delta))}",
    ),
    # --- bgm21 §2 and §4.1: the feasible sets (reference.geometry) ----------------------------------------------------
    "LpBall": (
        "LpBall(p, radius, center) with .lmo(g) -> (d,), .project(w) -> (d,), .contains(w, tol), .vertices() (p = 1)",
        "the l_p ball {w : ||w - c||_p <= radius}: closed-form linear minimization oracle and Euclidean projection",
    ),
    "Polytope": (
        "Polytope(vertices (J, d)) with .lmo(g) -> (vertex (d,), index), .diameter(p)",
        "W = Conv(V) (bgm21 Theorem 6, Algorithm 1): the vertex minimizing <V_j, g>, lowest index on ties",
    ),
    "fw_gap": (
        "fw_gap(gradient (d,), w (d,), lmo) -> float",
        "bgm21 §2 eq. (1): Gap(w) = max_{v in W} <g, w - v> = <g, w> - <g, lmo(g)>, >= 0 on W",
    ),
}
"""Protocols declared by the bgm21 claims of this area (data only; merged in the folder's ``__init__``)."""
