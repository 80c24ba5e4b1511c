"""Errors and warnings of the accountants (they fail loudly).

The accounting code never turns a numerical failure into a number. Bad *input* raises ``ValueError``
(or ``TypeError``) naming the parameter and the rule, as everywhere in ``reference``; a failure of the
*arithmetic* on valid input raises ``AccountingError``:

- a series that has not met its proven truncation bound within its term budget (the
  Mironov–Talwar–Zhang fractional-order series, ``rdp.log_a_poisson_gaussian_fractional``);
- a quadrature whose error estimate is not below the requested accuracy;
- a quantity that must be positive but came out ≤ 0 after rounding (a "negative RDP", which
  dp_accounting maps to ε = 0 with only a logged warning);
- a δ below what the working precision can represent (conversions).

``AccountingError`` subclasses ``ArithmeticError`` so that callers who catch arithmetic failures in
general also catch it. The warnings mark results that are valid but possibly loose or imprecise.
"""

from __future__ import annotations

__all__ = ["AccountingError", "OrderGridWarning", "PrecisionWarning"]


class AccountingError(ArithmeticError):
    """A privacy quantity could not be computed to the promised accuracy (never a silent wrong value)."""


class OrderGridWarning(UserWarning):
    """The optimal Rényi order is the smallest or largest order of the grid: widen the grid."""


class PrecisionWarning(UserWarning):
    """A result is valid but carries less relative accuracy than the working precision suggests."""
