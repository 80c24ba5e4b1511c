"""Claims of "Adaptive Batch Size for Privately Finding Second-Order Stationary Points" (Liu, Talwar;
arXiv:2410.07502).

``PROTOCOLS``: the protocols this paper's claims add (implemented for the reference and fast subjects by
proofs_checks/adapters/dpref.py); see proofs_checks/folders.py.
"""

PROTOCOLS: dict[str, tuple[str, str]] = {
    "spider_sosp_sigma": (
        "spider_sosp_sigma(rule, *, lipschitz, smoothness, loss_gap, d, n, epsilon, delta, steps=None, "
        "adjacency='replace_one', tree_scope='global') -> float",
        "Liu-Talwar Alg 2 tree noise by rule 'gdp_exact', 'thm2.2', 'lemma3.7', 'lemma3.8' or 'thm3.11' (the last "
        "computed although not private); spider_sosp.E3",
    ),
    "spider_sosp_mu": (
        "spider_sosp_mu(sigma, *, lipschitz, smoothness, loss_gap, d, n, epsilon, steps=None, adjacency='replace_one', "
        "tree_scope='global') -> float",
        "an upper bound mu = sbar sqrt(k_adj L) / sigma on the GDP mu of Liu-Talwar Alg 2 with tree noise sigma (L "
        "nodes per leaf from the a-priori level count, no cancellation between shared ancestors; Theorem 2.2 tree; "
        "spider_sosp.E1, spider_sosp.E5)",
    ),
}
