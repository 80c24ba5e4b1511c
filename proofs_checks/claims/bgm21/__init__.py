"""Claims of "Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex Settings"
(Bassily, Guzmán, Menart; NeurIPS 2021, arXiv:2107.05585).

The paper text stops at its references: Algorithms 3, 5 and 6, the strongly convex solver of Theorem 29 and the
proofs of Appendices A–C are rebuilt (bgm21.E1), and the claims check the rebuilt pieces against the statements the
main text makes about them.

``PROTOCOLS``: the protocols this paper's claims add (proofs_checks/folders.py), merged from one data file per area
(``_protocols_<area>.py``) so that each area declares its own. The reference and fast subjects find them by name in
``REFERENCE_MODULES`` / ``FAST_MODULES``.
"""

from ._protocols_core import PROTOCOLS as _CORE
from ._protocols_gll import PROTOCOLS as _GLL
from ._protocols_privacy import PROTOCOLS as _PRIVACY
from ._protocols_rate import PROTOCOLS as _RATE
from ._protocols_sfw import PROTOCOLS as _SFW

REFERENCE_MODULES = (
    "reference.algorithms.bgm21_sfw",
    "reference.algorithms.bgm21_gll",
    "reference.algorithms.bgm21_prox",
    "reference.algorithms.bgm21_accounting",
    "reference.algorithms.bgm21_theory",
    "reference.algorithms.bgm21_privacy",
    "reference.gll",
    "reference.selection",
    "reference.geometry",
    "reference.batching",
)
FAST_MODULES = ("reference.fast.bgm21_sfw", "reference.fast.bgm21_prox")


def _merge(*areas: dict) -> dict:
    merged: dict = {}
    for area in areas:
        twice = sorted(set(merged) & set(area))
        if twice:
            raise ValueError(f"bgm21 protocols declared by two areas: {twice}")
        merged.update(area)
    return merged


PROTOCOLS: dict[str, tuple[str, str]] = _merge(_CORE, _GLL, _PRIVACY, _SFW, _RATE)
