"""Claim discovery (proofs_checks/registry.py): folders by paper, modules by name, claims by definition."""

from __future__ import annotations

import sys
import textwrap

import pytest

from proofs_checks.claim import PAPERS
from proofs_checks.folders import (
    FOUNDATIONS,
    claim_folders,
    declared_modules,
    declared_optional_protocols,
    declared_protocols,
)
from proofs_checks.registry import claim_modules, load_claims

CLAIM = textwrap.dedent('''
    from proofs_checks.authoring import Claim, deterministic, rebind

    {name} = Claim(id="{id}", paper="{paper}", location="Lemma 1", statement="s", kind="deterministic",
                   requires=("gaussian_delta",), check=lambda subject, ctx: deterministic(True),
                   mutants=(rebind("m", "d", "gaussian_delta", mu=1.0),))
''')


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A throw-away claims package ``fake_claims_<n>`` whose folders and modules a test writes."""
    name = f"fake_claims_{abs(hash(tmp_path)) % 10**8}"
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(relative: str, text: str = "") -> None:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if not (path.parent / "__init__.py").exists():
            (path.parent / "__init__.py").write_text("")
        path.write_text(text)

    yield name, write
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]


def test_the_shipped_folders_are_foundations_and_paper_keys():
    folders = claim_folders()
    assert folders[0] == FOUNDATIONS
    assert set(folders[1:]) <= set(PAPERS) and folders[1:] == [p for p in PAPERS if p in folders]


def test_every_shipped_claim_sits_in_its_papers_folder_or_foundations():
    modules = claim_modules()
    claims = load_claims()
    assert len({c.id for c in claims}) == len(claims) > 80
    for module in modules:
        folder = module.split(".")[2]
        assert folder == FOUNDATIONS or all(c.paper == folder for c in load_claims([module]))


def test_discovery_order_and_private_modules_skipped(package):
    name, write = package
    write("dpzero/b.py", CLAIM.format(name="B", id="dpzero.x.b", paper="dpzero"))
    write("dpzero/a.py", CLAIM.format(name="A", id="dpzero.x.a", paper="dpzero")
          + CLAIM.format(name="A2", id="dpzero.x.a2", paper="dpzero"))
    write("dpzero/_helpers.py", "VALUE = 1\n")
    write(f"{FOUNDATIONS}/f.py", CLAIM.format(name="F", id="zo_o2nc.x.f", paper="zo_o2nc"))
    assert claim_folders(name) == [FOUNDATIONS, "dpzero"]
    modules = claim_modules(name)
    assert modules == [f"{name}.{FOUNDATIONS}.f", f"{name}.dpzero.a", f"{name}.dpzero.b"]
    assert [c.id for c in load_claims(modules)] == ["zo_o2nc.x.f", "dpzero.x.a", "dpzero.x.a2", "dpzero.x.b"]


def test_unknown_folder_is_refused(package):
    name, write = package
    write("dp_zero/a.py", CLAIM.format(name="A", id="dpzero.x.a", paper="dpzero"))
    with pytest.raises(ValueError, match=r"claim folders \['dp_zero'\] are neither 'foundations' nor a paper key"):
        claim_folders(name)


def test_claim_filed_under_another_paper_is_refused(package):
    name, write = package
    write("dpzero/a.py", CLAIM.format(name="A", id="zo_o2nc.x.a", paper="zo_o2nc"))
    with pytest.raises(ValueError, match=r"claim zo_o2nc.x.a \(paper 'zo_o2nc'\) is filed in the folder of 'dpzero'"):
        load_claims(claim_modules(name))


def test_module_without_claims_is_refused(package):
    name, write = package
    write("dpzero/empty.py", "X = 1\n")
    with pytest.raises(ValueError, match=r"defines no claim \(helpers belong in a module named _\*\.py\)"):
        load_claims(claim_modules(name))


def test_duplicate_ids_are_refused(package):
    name, write = package
    write("dpzero/a.py", CLAIM.format(name="A", id="dpzero.x.a", paper="dpzero"))
    write("dpzero/b.py", f"from {name}.dpzero.a import A\n")  # a claim imported elsewhere counts twice
    with pytest.raises(ValueError, match=r"duplicate claim id 'dpzero.x.a'"):
        load_claims(claim_modules(name))


def test_folders_declare_protocols_and_modules(package):
    name, write = package
    write("foundations/__init__.py", 'PROTOCOLS = {"p": ("p(x)", "s")}\nREFERENCE_MODULES = ("reference.rng",)\n')
    write("dpzero/__init__.py", 'PROTOCOLS = {"q": ("q(x)", "t")}\nFAST_MODULES = ("reference.fast.dpzero",)\n')
    assert declared_protocols(name) == {"p": ("p(x)", "s"), "q": ("q(x)", "t")}
    assert declared_modules("reference", name) == ("reference.rng",)
    assert declared_modules("fast", name) == ("reference.fast.dpzero",)
    with pytest.raises(ValueError, match="kind must be 'reference' or 'fast'"):
        declared_modules("slow", name)


def test_a_protocol_declared_twice_is_refused(package):
    name, write = package
    write("foundations/__init__.py", 'PROTOCOLS = {"p": ("p(x)", "s")}\n')
    write("zo_o2nc/__init__.py", 'PROTOCOLS = {"p": ("p(y)", "t")}\n')
    with pytest.raises(ValueError, match="protocol 'p' is declared by the folders 'foundations' and 'zo_o2nc'"):
        declared_protocols(name)


def test_the_shipped_protocols_are_all_declared_once():
    from proofs_checks.protocols import PROTOCOLS
    from proofs_checks.subjects import reference_subject

    assert PROTOCOLS == declared_protocols()
    optional = declared_optional_protocols()
    assert set(optional) <= set(PROTOCOLS)
    # the reference implements every protocol but those of an optional backend (folders' OPTIONAL_PROTOCOLS)
    assert set(reference_subject().protocols) == set(PROTOCOLS) - set(optional)
