"""The bgm21 algorithms as protocols (data only; merged in the folder's ``__init__``)."""

PROTOCOLS: dict[str, tuple[str, str]] = {
    "poly_sfw": (
        "poly_sfw(gradient, data (n, p), polytope: Polytope, config: PolySFWConfig, *, seed, noise_seed=None, "
        "w_init=None, eta=None) -> SFWResult",
        "bgm21 Algorithm 1 (A_polySFW): rounds r < R of 2^r Frank-Wolfe steps over W = Conv(V), the recursive "
        "gradient estimator on disjoint batches of sizes b and ceil(b/(t+1)) in the public order, Laplace "
        "report-noisy-min over the vertices with scale s_r, step eta_{r,t} = 1/sqrt(t+1); public trace (selected "
        "vertices, batch sizes, per-step sensitivities G_t) and output uniform over the 2^R - 1 iterates w_r^t",
    ),
    "noisy_sfw": (
        "noisy_sfw(gradient, data (n, p), ball: LpBall, config: NoisySFWConfig, *, seed, noise_seed=None, "
        "w_init=None, eta=None) -> SFWResult",
        "bgm21 Algorithm 6 (A_nSFW, rebuilt): the same skeleton over an l_p ball, 1 < p <= 2, with Gaussian noise "
        "N(0, sigma_{r,t}^2 I) on the round-start and fresh-gradient terms and N(0, sigmahat_{r,t}^2 I) on the "
        "difference term (sigmahat from eta_{r,t-1} by default, bgm21.E10), exact linear minimization over W",
    ),
    "phased_sgd": (
        "phased_sgd(X (n, d), y (n,), loss: GLL, W: LpBall | None, w0 (d,), config: PhasedSGDConfig, *, seed, "
        "noise_seed=None) -> PhasedSGDResult",
        "bgm21 Theorem 5 (rebuilt from FKT20): phases i = 1..k on disjoint blocks of n_i = floor(n/2^i) records, "
        "projected SGD with step eta/4^i on the Moreau-smoothed GLL through Algorithm 3's oracle, each phase's "
        "average plus N(0, sigma_i^2 I) released",
    ),
    "noisy_frank_wolfe": (
        "noisy_frank_wolfe(X (n, d), y (n,), loss: GLL, polytope: Polytope, config: NoisyFWConfig, *, "
        "theta1=None, noise_seed=None, public_seeds=()) -> NoisyFWResult",
        "bgm21 Theorem 6, Algorithm 5 (rebuilt from TTZ15): T - 1 Frank-Wolfe steps on the full smoothed empirical "
        "loss, each choosing a vertex by Laplace report-noisy-min with scale lambda (certified by default, "
        "bgm21.E28)",
    ),
    "prox_guided_psmd": (
        "prox_guided_psmd(gradient, data (n, k), ball: LpBall, config: ProxConfig, *, seed, noise_seed=None, "
        "w_init=None) -> ProxResult",
        "bgm21 Algorithm 2 at p = 2: R rounds on disjoint batches of floor(n/R) records, each solving the "
        "regularised subproblem f + (beta/2)||w - w_r||^2 privately with the strongly convex solver; output "
        "uniform over w_1..w_R (bgm21.E18)",
    ),
    "asc_dp_gd": (
        "asc_dp_gd(gradient, data (m, k), ball: LpBall, config: ASCConfig, *, center, beta, mu, noise_seed=None) "
        "-> ASCResult",
        "the strongly convex solver used inside Algorithm 2 (rebuilt stand-in for Theorem 29's A_SC): T noisy "
        "projected full-batch gradient steps, sigma = (2 L0/m) sqrt(T/(2 rho)), rho-zCDP converted to (eps, delta)",
    ),
}
