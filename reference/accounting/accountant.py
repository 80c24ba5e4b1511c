"""An exact, dp_accounting-like RDP accountant.

``RdpAccountant(relation, orders)`` keeps one RDP value per order, starting at 0. ``compose(event, count)``
checks the event against the accountant's neighbouring relation (``events.check_relation``: e.g. Poisson
sampling needs add/remove or zero-out, sampling without replacement needs replace-one), computes the
event's RDP curve (``rdp.rdp_of_event``) and adds ``count`` times it — RDP composes additively, also
adaptively (Mironov 2017 Prop 1). ``get_epsilon(δ)`` / ``get_delta(ε)`` convert the curve with
``conversions.epsilon_from_rdp`` / ``delta_from_rdp`` (default "bbghs": Balle et al. 2020 Thm 21 = CKS 2020
Prop 12, minimised over the orders).

Noise multipliers inside the events are relative to the sensitivity under the accountant's relation:
z = σ/Δ with Δ the ℓ2 sensitivity for *that* relation (for a clipped sum, Δ = C under add/remove and zero-out,
Δ = 2C under replace-one; see ``events``).

Everything is mpmath. ``dps=None`` (default) computes at the caller's working precision, like the functions
of ``rdp``; an integer runs every method under ``working_precision(dps)`` (the CLI passes
``rdp.ACCOUNTING_DPS`` or ``--precision``).
"""

from __future__ import annotations

import contextlib

import mpmath

from ..precision import working_precision
from ..validation import check_int
from .events import NeighbouringRelation, as_relation, check_relation
from .rdp import DEFAULT_ORDERS, _orders, rdp_of_event

__all__ = ["RdpAccountant"]


class RdpAccountant:
    """Rényi-DP accountant over a fixed grid of orders, exact in mpmath.

    relation: the neighbouring relation (``NeighbouringRelation`` or its value string).
    orders: Rényi orders α > 1 (default: dp_accounting's 156 ``DEFAULT_ORDERS``).
    dps: working precision in decimal digits for every method, or None for the caller's precision.
    """

    def __init__(self, relation=NeighbouringRelation.ADD_OR_REMOVE_ONE, orders=DEFAULT_ORDERS, *, dps=None):
        self._relation = as_relation(relation)
        if dps is not None:
            dps = check_int("dps", dps, minimum=15)
        self._dps = dps
        with self._precision():
            self._orders = _orders(orders)
            self._rdp = [mpmath.mpf(0) for _ in self._orders]

    def _precision(self):
        return working_precision(self._dps) if self._dps is not None else contextlib.nullcontext()

    @property
    def relation(self) -> NeighbouringRelation:
        return self._relation

    @property
    def orders(self) -> list:
        return list(self._orders)

    @property
    def dps(self):
        return self._dps

    def compose(self, event, count=1) -> RdpAccountant:
        """Add ``count`` runs of ``event`` (validated against the relation; ValueError if invalid). Returns self."""
        count = check_int("count", count, minimum=0)
        check_relation(event, self._relation)  # before any arithmetic: a refused event leaves the ledger as it was
        with self._precision():
            curve = rdp_of_event(event, self._orders, self._relation)
            self._rdp = [total + count * value for total, value in zip(self._rdp, curve)]
        return self

    def rdp(self) -> list:
        """The accumulated RDP values, one mpf per order (a copy)."""
        return list(self._rdp)

    def get_epsilon_and_order(self, delta, method="bbghs"):
        """(ε, α*): the smallest ε over the orders for which the composition is (ε, δ)-DP, and its order."""
        from .conversions import epsilon_from_rdp  # lazily: conversions is a separate module (helper B)

        with self._precision():
            return epsilon_from_rdp(self._orders, self._rdp, delta, method=method)

    def get_epsilon(self, delta, method="bbghs"):
        """ε for the target δ (see ``get_epsilon_and_order``)."""
        return self.get_epsilon_and_order(delta, method=method)[0]

    def get_delta_and_order(self, epsilon, method="bbghs"):
        """(δ, α*): the smallest δ over the orders for which the composition is (ε, δ)-DP, and its order."""
        from .conversions import delta_from_rdp

        with self._precision():
            return delta_from_rdp(self._orders, self._rdp, epsilon, method=method)

    def get_delta(self, epsilon, method="bbghs"):
        """δ for the target ε (see ``get_delta_and_order``)."""
        return self.get_delta_and_order(epsilon, method=method)[0]

    def __repr__(self) -> str:
        return f"RdpAccountant(relation={self._relation.name}, orders={len(self._orders)}, dps={self._dps})"
