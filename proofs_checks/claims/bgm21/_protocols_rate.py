"""Protocols declared by the bgm21 claims of this area (data only; merged in the folder's ``__init__``)."""

PROTOCOLS: dict[str, tuple[str, str]] = {
    "rate_theorem8": (
        "rate_theorem8(n, eps, delta, J, D, L0, L1) -> float",
        "bgm21 Theorem 8: the bound on E Gap(w_hat) of Algorithm 1 with constant 1, "
        "D(L0 + L1 D) ln^{2/3}J ln^{2/3}n ln^{1/6}(1/delta)/(n eps)^{1/3}",
    ),
    "rate_theorem11": (
        "rate_theorem11(n, d, p, eps, delta, D, L0, L1) -> float",
        "bgm21 Theorem 11: the bound on E Gap(w_hat) of Algorithm 6 with constant 1, D(L0 + L1 D) kappa^{2/3} "
        "(ln^{2/3}n/n^{1/3} + d^{1/5} kappa~^{1/5} ln^{1/5}(1/delta) ln^{4/5}n/(n eps)^{2/5}), "
        "kappa = min(1/(p-1), 2 ln d)",
    ),
}
