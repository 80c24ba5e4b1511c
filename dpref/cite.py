"""``dpref cite``: how to cite dpref and the papers it implements (proofs_checks/papers.py).

    dpref cite                              dpref's own BibTeX entry
    dpref cite --paper dpzero               the paper's entry (repeatable; ``--paper all`` for every paper)
    dpref cite --format text                a one-line reference instead of BibTeX

Without --paper the software entry is printed; with it, only the papers asked for.
"""

from __future__ import annotations

import sys

from proofs_checks.papers import PAPERS_BY_KEY, paper_text, software_bibtex, software_text

FORMATS = ("bibtex", "text")


def register(commands) -> None:
    parser = commands.add_parser("cite", help="print the BibTeX (or text) citation of dpref or of a paper")
    # No argparse `choices`: an unknown key gets one `dpref: error:` line that lists the keys (exit 2).
    parser.add_argument("--paper", action="append", default=[], metavar="KEY",
                        help=f"paper key, repeatable: {', '.join(PAPERS_BY_KEY)} or all")
    parser.add_argument("--format", default="bibtex", choices=FORMATS)


def run(args) -> int:
    keys = []
    for key in args.paper:
        if key == "all":
            keys += [k for k in PAPERS_BY_KEY if k not in keys]
        elif key in PAPERS_BY_KEY:
            keys += [key] if key not in keys else []
        else:
            print(f"dpref: error: unknown paper {key!r}; known papers: {', '.join(PAPERS_BY_KEY)}", file=sys.stderr)
            return 2
    if not keys:
        entries = [software_bibtex() if args.format == "bibtex" else software_text()]
    else:
        entries = [PAPERS_BY_KEY[k].bibtex if args.format == "bibtex" else paper_text(k) for k in keys]
    print(("\n\n" if args.format == "bibtex" else "\n").join(entries))
    return 0

