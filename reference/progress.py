"""Progress bars for long jobs (claims, audits, runs, conformance) that also work when stderr is not a terminal.

On a terminal this is an ordinary tqdm bar. When stderr is piped or redirected (CI logs, ``2> log``), a bar
redrawn with carriage returns turns into one unreadable line, so the bar is written as whole lines instead,
the first, then at most one every ``PIPED_INTERVAL`` seconds, and the final count, e.g.::

    claims: 40%|████      | 58/146 [00:41<01:02, 1.41check/s]

Library code only creates the bar when its caller asks for progress (``progress=True``); the command line
turns it off with ``--quiet``. The bar always writes to stderr, never to stdout, so machine-readable output
(``--format json``) stays clean.
"""

from __future__ import annotations

import sys

from tqdm import tqdm

PIPED_INTERVAL = 10.0  # seconds between progress lines when stderr is not a terminal


class _Lines:
    """A file-like wrapper turning tqdm's carriage-return redraws into whole lines."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> None:
        text = text.replace("\r", "").rstrip()
        # tqdm clears a finished bar (leave=False) by overwriting it with blanks: nothing to keep of that.
        if text:
            self.stream.write(text + "\n")

    def flush(self) -> None:
        self.stream.flush()


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def progress_bar(total: int | None, desc: str, unit: str = "it", *, enabled: bool = True, stream=None) -> tqdm:
    """A tqdm bar over ``total`` units, disabled (a no-op with the same interface) unless ``enabled``.

    stream: where to write (default: ``sys.stderr`` at call time, so that redirections made by tests apply).
    """
    stream = sys.stderr if stream is None else stream
    if not enabled:
        return tqdm(total=total, disable=True)
    if _is_terminal(stream):
        return tqdm(total=total, desc=desc, unit=unit, file=stream, leave=False, dynamic_ncols=True)
    return tqdm(total=total, desc=desc, unit=unit, file=_Lines(stream), leave=True, ncols=100, ascii=True,
                mininterval=PIPED_INTERVAL, maxinterval=PIPED_INTERVAL, miniters=1)
