"""Claims of "Private Zeroth-Order Nonsmooth Nonconvex Optimization" (Zhang, Tran, Cutkosky; arXiv:2406.19579).

``PROTOCOLS``: the protocols this paper's claims add (implemented for the reference and fast subjects by
proofs_checks/adapters/dpref.py); see proofs_checks/folders.py.
"""

PROTOCOLS: dict[str, tuple[str, str]] = {
    "zo_o2nc_cor44_sigma": (
        "zo_o2nc_cor44_sigma(d, lipschitz, T, B1, B2, rho, count_rule='exact') -> float",
        "zo_o2nc Cor 4.4 tree noise: 'paper_2lnT' sqrt(2 ln T) s_2/rho, or 'exact' with the exact node counts; "
        "s_1 = 2dL/B1, s_t = 4dL/(B2 T) (reference.algorithms.zo_o2nc_privacy)",
    ),
}
