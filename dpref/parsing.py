"""Argument parsing shared by the sub-commands: every refusal on one line, integers written as people write them.

argparse's own refusals print a usage block and then ``<prog>: error: <reason>``, and a sub-parser hands the
options it does not know back to the top-level parser, whose usage then names the wrong command. ``OneLineParser``
(for parsers created with ``add_subparsers(parser_class=OneLineParser)``) and ``one_line_errors`` (for a parser
someone else created) print only ``<prog>: error: <reason> (see '<prog> --help')`` and exit with status 2.
"""

from __future__ import annotations

import argparse
import decimal
import sys

__all__ = ["MAX_EXPONENT", "OneLineParser", "integer", "one_line_errors", "refuse"]

#: Largest decimal exponent an integer option may be written with (1e30); beyond, refused before building the number.
MAX_EXPONENT = 30


def refuse(prog: str, message) -> None:
    """Print ``<prog>: error: <message>`` as one line on stderr and exit with status 2."""
    print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
    raise SystemExit(2)


class OneLineParser(argparse.ArgumentParser):
    """An argparse parser whose refusals (bad value, unknown option, missing option) are one line naming the option,
    with no usage block; arguments it does not know are refused here rather than handed back to the top-level
    parser (which would print its usage)."""

    def error(self, message):
        refuse(self.prog, f"{message} (see '{self.prog} --help')")

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def one_line_errors(parser: argparse.ArgumentParser, *, redact=None) -> argparse.ArgumentParser:
    """Make a parser created by someone else's ``add_parser`` (e.g. ``dpref account`` itself) refuse in one line,
    unknown arguments included. redact: optional function applied to each message and to the unknown arguments
    before they are printed (``dpref run`` hides the value of its secret --noise-seed)."""
    redact = redact or (lambda text: text)
    parse_known_args = parser.parse_known_args

    def error(message):
        refuse(parser.prog, f"{redact(str(message))} (see '{parser.prog} --help')")

    def parse_known_args_or_refuse(args=None, namespace=None):
        namespace, extras = parse_known_args(args, namespace)
        if extras:
            error(f"unrecognized arguments: {redact(' '.join(extras))}")
        return namespace, extras

    parser.error = error
    parser.parse_known_args = parse_known_args_or_refuse
    return parser


def integer(text: str) -> int:
    """argparse type of the integer options: a whole number, also written 1e18 or 1_000_000 (below 1e31).

    The range of each option is checked later, by the command, so that its refusal names the option and the reason.
    """
    try:
        number = decimal.Decimal(text.strip().replace("_", ""))
    except decimal.InvalidOperation:
        raise argparse.ArgumentTypeError(f"must be a whole number (e.g. 10000 or 1e4), got {text!r}") from None
    if not number.is_finite() or number != number.to_integral_value():
        raise argparse.ArgumentTypeError(f"must be a whole number (e.g. 10000 or 1e4), got {text!r}")
    if number.adjusted() > MAX_EXPONENT:
        raise argparse.ArgumentTypeError(f"must be a whole number below 1e{MAX_EXPONENT + 1}, got {text.strip()!r}")
    return int(number)
