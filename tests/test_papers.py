"""The paper registry (proofs_checks/papers.py): records, BibTeX, errata, their citations, and `dpref cite`.

Erratum citations are found in reference/, proofs_checks/, empirical_dp/, dpref/, docs/ and README.md in two
forms: qualified (``dpzero.E5``) anywhere, and bare (``E5``) only in the files of
``papers.BARE_ERRATUM_SCOPE``, which maps each to its paper. Every citation must resolve to a defined
erratum, and every defined erratum must be cited somewhere besides the registry and the generated errata
tables.
"""

import re
import tomllib
from pathlib import Path

import pytest

from dpref import cli
from proofs_checks import papers
from proofs_checks.catalogue import generated_documents
from proofs_checks.claim import PAPERS
from proofs_checks.registry import load_claims

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("reference", "proofs_checks", "empirical_dp", "dpref", "docs")
#: the registry itself and the documents generated from it
NOT_CITATIONS = {"proofs_checks/papers.py", "docs/errata.md", *(f"docs/papers/{k}.md" for k in PAPERS)}
QUALIFIED = re.compile(r"\b(" + "|".join(PAPERS) + r")\.E(\d+)\b")
BARE = re.compile(r"(?<![\w.])E(\d{1,2})\b")
CLAIMS = {c.id: c for c in load_claims()}


def _files():
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in (".py", ".md") and ".venv" not in path.parts and "__pycache__" not in path.parts:
                yield path.relative_to(ROOT).as_posix()
    yield "README.md"


def citations():
    """[(file, line number, erratum id)] of every citation in the scanned files (bare ones resolved)."""
    found, unscoped = [], []
    for relative in _files():
        if relative == "proofs_checks/papers.py":
            continue
        for number, line in enumerate((ROOT / relative).read_text().splitlines(), 1):
            for m in QUALIFIED.finditer(line):
                found.append((relative, number, f"{m.group(1)}.E{int(m.group(2))}"))
            for m in BARE.finditer(line):
                paper = papers.BARE_ERRATUM_SCOPE.get(relative)
                if paper is None:
                    unscoped.append(f"{relative}:{number}: bare E{m.group(1)}")
                else:
                    found.append((relative, number, f"{paper}.E{int(m.group(1))}"))
    return found, unscoped


CITATIONS, UNSCOPED = citations()


# --- papers ------------------------------------------------------------------------------------------------

def test_every_paper_key_has_a_complete_record():
    assert set(papers.PAPERS_BY_KEY) == set(PAPERS)
    for key, p in papers.PAPERS_BY_KEY.items():
        assert p.key == key
        assert p.authors and all(a.strip() for a in p.authors), key
        assert p.title and p.venue and p.bibtex, key
        assert 2000 < p.year < 2100, key
        assert re.fullmatch(r"\d{4}\.\d{4,5}", p.arxiv), key


def _plain(value: str) -> str:
    """BibTeX value -> text: drop protecting braces and the accent macros used above."""
    accents = {r"{\'a}": "á", r"{\'o}": "ó", r"\'a": "á", r"\'o": "ó"}
    for macro, char in accents.items():
        value = value.replace(macro, char)
    return re.sub(r"\s+", " ", value.replace("{", "").replace("}", "")).strip()


def _bibtex_author(name: str) -> str:
    *given, family = name.split(" ")
    return f"{family}, {' '.join(given)}"


@pytest.mark.parametrize("key", PAPERS)
def test_bibtex_parses_to_the_record(key):
    p = papers.PAPERS_BY_KEY[key]
    kind, cite_key, fields = papers.parse_bibtex(p.bibtex)
    assert kind in ("inproceedings", "article", "misc")
    assert re.fullmatch(r"[a-z]+\d{4}[a-z]+", cite_key)
    assert _plain(fields["title"]) == p.title
    assert [a.strip() for a in _plain(fields["author"]).split(" and ")] == [_bibtex_author(a) for a in p.authors]
    assert int(fields["year"]) == p.year
    assert fields["eprint"] == p.arxiv and fields["archiveprefix"] == "arXiv"
    venue = fields.get("booktitle") or fields.get("journal") or fields.get("howpublished")
    assert _plain(venue) == p.venue


def test_bibtex_keys_are_unique():
    keys = [papers.parse_bibtex(p.bibtex)[1] for p in papers.PAPERS_BY_KEY.values()]
    assert len(keys) == len(set(keys))


def test_dpzero_is_icml_2024():
    p = papers.PAPERS_BY_KEY["dpzero"]
    assert (p.year, p.arxiv) == (2024, "2310.09639") and "ICML" in p.venue
    assert p.authors == ("Liang Zhang", "Bingcong Li", "Kiran Koshy Thekumparampil", "Sewoong Oh", "Niao He")
    # nothing in the repository calls DPZero an ICLR paper
    for relative in _files():
        for line in (ROOT / relative).read_text().splitlines():
            assert not ("DPZero" in line and "ICLR" in line), f"{relative}: {line.strip()}"


def test_software_citation_uses_the_project_version():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert papers.SOFTWARE.version == version
    kind, key, fields = papers.parse_bibtex(papers.software_bibtex())
    assert (kind, key, fields["version"]) == ("software", "dpref", version)
    cff = (ROOT / "CITATION.cff").read_text()
    assert cff.startswith("cff-version: 1.2.0\n")
    assert f'version: "{version}"' in cff
    for p in papers.PAPERS_BY_KEY.values():
        assert f"arXiv:{p.arxiv}" in cff and p.title in cff


def test_citation_cff_uses_valid_top_level_keys():
    yaml = pytest.importorskip("yaml")
    data = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    allowed = {"abstract", "authors", "cff-version", "commit", "contact", "date-released", "doi", "identifiers",
               "keywords", "license", "license-url", "message", "preferred-citation", "references", "repository",
               "repository-artifact", "repository-code", "title", "type", "url", "version"}
    assert set(data) <= allowed
    assert {"cff-version", "message", "title", "authors"} <= set(data)
    assert data["type"] in ("software", "dataset")
    for reference in data["references"]:
        assert {"type", "title", "authors"} <= set(reference)


# --- errata ------------------------------------------------------------------------------------------------

def test_errata_records_are_complete():
    ids = [e.id for e in papers.ERRATA]
    assert len(ids) == len(set(ids))
    for e in papers.ERRATA:
        assert re.fullmatch(r"[a-z0-9_]+\.E[1-9]\d*", e.id), e.id
        assert e.paper in PAPERS, e.id
        assert e.status in papers.STATUSES, e.id
        assert e.location.strip() and e.printed.strip() and e.correction.strip(), e.id
        assert "spec" not in e.location.lower(), e.id


def test_evidence_is_a_registered_claim_of_the_same_paper_that_cites_the_erratum():
    for e in papers.ERRATA:
        if e.evidence is None:
            continue
        assert e.evidence in CLAIMS, f"{e.id}: evidence {e.evidence} is not a registered claim"
        claim = CLAIMS[e.evidence]
        assert claim.paper == e.paper, e.id
        cited = {f"{m.group(1)}.E{int(m.group(2))}" for m in QUALIFIED.finditer(claim.location)}
        assert e.id in cited, (
            f"{e.id}: its evidence claim's location does not cite it: {claim.location!r}")


def test_a_clarification_never_backs_an_erratum_confirmed_claim():
    for e in papers.ERRATA:
        if e.status == "clarification" and e.evidence is not None:
            assert not CLAIMS[e.evidence].erratum, (
                f"{e.evidence} reports erratum-confirmed but its evidence {e.id} is a clarification")


def test_erratum_claims_have_an_erratum_entry():
    """A claim flagged erratum cites at least one erratum (status erratum) of its paper in its location."""
    for claim in CLAIMS.values():
        if not claim.erratum:
            continue
        cited = {f"{m.group(1)}.E{int(m.group(2))}" for m in QUALIFIED.finditer(claim.location)}
        statuses = {papers.ERRATA_BY_ID[i].status for i in cited if i in papers.ERRATA_BY_ID}
        assert "erratum" in statuses, f"{claim.id} cites no erratum: {claim.location!r}"


def test_bare_erratum_ids_only_in_single_paper_files():
    assert not UNSCOPED, "qualify these (paper.E<n>) or scope the file in papers.BARE_ERRATUM_SCOPE:\n" + "\n".join(
        UNSCOPED)
    for relative in papers.BARE_ERRATUM_SCOPE:
        if relative.startswith("docs/papers/"):  # per-paper pages, hand-written ones optional
            continue
        assert (ROOT / relative).is_file(), f"BARE_ERRATUM_SCOPE lists a missing file {relative}"


def test_every_cited_erratum_is_defined():
    undefined = [f"{f}:{n}: {i}" for f, n, i in CITATIONS if i not in papers.ERRATA_BY_ID]
    assert not undefined, "undefined errata cited:\n" + "\n".join(undefined)


def test_every_defined_erratum_is_cited():
    cited = {i for f, _, i in CITATIONS if f not in NOT_CITATIONS}
    unused = [e.id for e in papers.ERRATA if e.id not in cited]
    assert not unused, f"errata defined but cited by no claim, code or hand-written doc: {unused}"


def test_the_scan_sees_the_known_citations():
    """Guards the scanner itself: a qualified, a bare and a claim-location citation are all found."""
    where = {(f, i) for f, _, i in CITATIONS}
    assert ("reference/algorithms/dpzero_privacy.py", "dpzero.E5") in where
    assert ("docs/papers/src/dpzero.md", "dpzero.E13") in where
    assert ("proofs_checks/claims/foundations/tree.py", "zo_o2nc.E4") in where


def test_generated_docs_include_the_errata():
    documents = generated_documents()
    errata = documents["docs/errata.md"]
    for e in papers.ERRATA:
        assert f"`{e.id}`" in errata
    for key in PAPERS:
        page = documents[f"docs/papers/{key}.md"]
        assert papers.PAPERS_BY_KEY[key].title in page and "## Errata" in page
        for e in papers.errata_of(key):
            assert f"`{e.id}`" in page


def test_no_claim_location_cites_the_development_notes():
    for claim in CLAIMS.values():
        assert not re.search(r"\bspec\b", claim.location), f"{claim.id}: {claim.location}"


# --- dpref cite --------------------------------------------------------------------------------------------

def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cite_software_by_default(capsys):
    code, out, err = run(capsys, "cite")
    assert code == 0 and not err
    kind, key, fields = papers.parse_bibtex(out)
    assert (kind, key, fields["version"]) == ("software", "dpref", papers.SOFTWARE.version)


@pytest.mark.parametrize("key", PAPERS)
def test_cite_paper_bibtex(capsys, key):
    code, out, _ = run(capsys, "cite", "--paper", key)
    assert code == 0 and out.strip() == papers.PAPERS_BY_KEY[key].bibtex


def test_cite_text_and_several_papers(capsys):
    code, out, _ = run(capsys, "cite", "--paper", "dpzero", "--paper", "bgm21", "--format", "text")
    lines = out.strip().splitlines()
    assert code == 0 and len(lines) == 2
    assert "DPZero" in lines[0] and "ICML" in lines[0] and "arXiv:2310.09639" in lines[0]
    assert "Bassily" in lines[1]
    code, out, _ = run(capsys, "cite", "--format", "text")
    assert code == 0 and papers.SOFTWARE.version in out


def test_cite_all(capsys):
    code, out, _ = run(capsys, "cite", "--paper", "all")
    assert code == 0
    assert [papers.parse_bibtex(chunk)[1] for chunk in out.strip().split("\n\n")] == [
        papers.parse_bibtex(p.bibtex)[1] for p in papers.PAPERS_BY_KEY.values()]


def test_cite_unknown_paper(capsys):
    code, out, err = run(capsys, "cite", "--paper", "nope")
    assert code == 2 and not out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpref: error: ")
    assert "'nope'" in lines[0] and all(k in lines[0] for k in PAPERS)


def test_cite_bad_format(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["cite", "--format", "ris"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
