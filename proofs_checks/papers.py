"""The papers dpref implements, their errata, and how to cite them (and dpref itself).

Pure data and small helpers; no heavy imports, so that ``dpref cite`` and the docs generator load fast.

* :data:`PAPERS_BY_KEY`: one :class:`Paper` per paper key (the keys of :data:`proofs_checks.claim.PAPERS`):
  authors, title, venue, year, arXiv id and a hand-written BibTeX entry (a test parses it back and compares
  it with the record's fields).
* :data:`ERRATA`: one :class:`Erratum` per defect or ambiguity of a paper, with a stable id ``<paper>.E<n>``.
  The numbers are the ones the code has always cited; ``spider_sosp.E<n>`` is the item formerly cited as
  ``A<n>``. An erratum's ``evidence`` is the claim that executes it (None when no claim does yet); that
  claim's location names the erratum id.
* :data:`SOFTWARE`: dpref's own citation (the version comes from the installed package metadata).

Citing errata in the code and docs: write the qualified id, ``dpzero.E5``. A bare ``E5`` is accepted only
in the files listed in :data:`BARE_ERRATUM_SCOPE`, which are about one paper each (tests/test_papers.py
resolves every citation and fails on an undefined or unused id).

Status of an erratum:

* ``erratum``: the printed statement (or the public code) is false as printed;
* ``clarification``: not false as printed, but easy to misread — e.g. two quantities defined separately and
  named alike, an unstated detail, a setting outside a theorem's assumptions;
* ``typo``: a slip of notation or numbering with an obvious correction.

A claim that reports ``erratum-confirmed`` never has a ``clarification`` as its evidence (there is
nothing false to confirm).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "STATUSES",
    "Paper",
    "Erratum",
    "Software",
    "PAPERS_BY_KEY",
    "ERRATA",
    "ERRATA_BY_ID",
    "SOFTWARE",
    "BARE_ERRATUM_SCOPE",
    "errata_of",
    "software_bibtex",
    "software_text",
    "paper_text",
    "parse_bibtex",
]

STATUSES = ("erratum", "clarification", "typo")


@dataclass(frozen=True)
class Paper:
    """One paper: bibliographic record and its BibTeX entry."""

    key: str
    authors: tuple[str, ...]
    title: str
    venue: str
    year: int
    arxiv: str
    bibtex: str
    #: which version of the text dpref follows, when it matters
    version_note: str = ""


@dataclass(frozen=True)
class Erratum:
    """One defect or ambiguity of a paper (or of its public code), in our words."""

    id: str
    status: str
    location: str
    printed: str
    correction: str
    evidence: str | None = None

    @property
    def paper(self) -> str:
        return self.id.split(".")[0]

    @property
    def number(self) -> int:
        return int(self.id.rsplit(".E", 1)[1])


@dataclass(frozen=True)
class Software:
    name: str
    title: str
    authors: tuple[str, ...]
    year: int
    license: str
    url: str = ""

    @property
    def version(self) -> str:
        try:
            from importlib.metadata import version

            return version(self.name)
        except Exception:  # pragma: no cover - not installed: read pyproject.toml
            import re
            from pathlib import Path

            text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
            return re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE).group(1)


# ---------------------------------------------------------------------------------------------------------
# papers

_PAPERS = (
    Paper(
        key="dpzero",
        authors=("Liang Zhang", "Bingcong Li", "Kiran Koshy Thekumparampil", "Sewoong Oh", "Niao He"),
        title="DPZero: Private Fine-Tuning of Language Models without Backpropagation",
        venue="Proceedings of the 41st International Conference on Machine Learning (ICML)",
        year=2024,
        arxiv="2310.09639",
        bibtex="""@inproceedings{zhang2024dpzero,
  author    = {Zhang, Liang and Li, Bingcong and Thekumparampil, Kiran Koshy and Oh, Sewoong and He, Niao},
  title     = {{DPZero}: Private Fine-Tuning of Language Models without Backpropagation},
  booktitle = {Proceedings of the 41st International Conference on Machine Learning (ICML)},
  series    = {Proceedings of Machine Learning Research},
  volume    = {235},
  year      = {2024},
  eprint    = {2310.09639},
  archivePrefix = {arXiv}
}""",
    ),
    Paper(
        key="zo_o2nc",
        authors=("Qinzi Zhang", "Hoang Tran", "Ashok Cutkosky"),
        title="Private Zeroth-Order Nonsmooth Nonconvex Optimization",
        venue="International Conference on Learning Representations (ICLR)",
        year=2024,
        arxiv="2406.19579",
        bibtex="""@inproceedings{zhang2024private,
  author    = {Zhang, Qinzi and Tran, Hoang and Cutkosky, Ashok},
  title     = {Private Zeroth-Order Nonsmooth Nonconvex Optimization},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year      = {2024},
  eprint    = {2406.19579},
  archivePrefix = {arXiv}
}""",
    ),
    Paper(
        key="nsnc_improved",
        authors=("Guy Kornowski", "Daogao Liu", "Kunal Talwar"),
        title="Improved Sample Complexity for Private Nonsmooth Nonconvex Optimization",
        venue="Proceedings of the 42nd International Conference on Machine Learning (ICML)",
        year=2025,
        arxiv="2410.05880",
        bibtex="""@inproceedings{kornowski2025improved,
  author    = {Kornowski, Guy and Liu, Daogao and Talwar, Kunal},
  title     = {Improved Sample Complexity for Private Nonsmooth Nonconvex Optimization},
  booktitle = {Proceedings of the 42nd International Conference on Machine Learning (ICML)},
  series    = {Proceedings of Machine Learning Research},
  volume    = {267},
  year      = {2025},
  eprint    = {2410.05880},
  archivePrefix = {arXiv}
}""",
        version_note="dpref follows arXiv v1 (2024); the ICML 2025 version corrects some statements",
    ),
    Paper(
        key="spider_sosp",
        authors=("Daogao Liu", "Kunal Talwar"),
        title="Adaptive Batch Size for Privately Finding Second-Order Stationary Points",
        venue="arXiv preprint",
        year=2024,
        arxiv="2410.07502",
        bibtex="""@misc{liu2024adaptive,
  author    = {Liu, Daogao and Talwar, Kunal},
  title     = {Adaptive Batch Size for Privately Finding Second-Order Stationary Points},
  howpublished = {arXiv preprint},
  year      = {2024},
  eprint    = {2410.07502},
  archivePrefix = {arXiv}
}""",
        version_note="dpref follows arXiv v1 (October 2024); v2 (February 2025) revises the escape procedure",
    ),
    Paper(
        key="bgm21",
        authors=("Raef Bassily", "Cristóbal Guzmán", "Michael Menart"),
        title="Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex Settings",
        venue="Advances in Neural Information Processing Systems (NeurIPS)",
        year=2021,
        arxiv="2107.05585",
        bibtex="""@inproceedings{bassily2021differentially,
  author    = {Bassily, Raef and Guzm{\\'a}n, Crist{\\'o}bal and Menart, Michael},
  title     = {Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex Settings},
  booktitle = {Advances in Neural Information Processing Systems (NeurIPS)},
  volume    = {34},
  year      = {2021},
  eprint    = {2107.05585},
  archivePrefix = {arXiv}
}""",
    ),
)

PAPERS_BY_KEY: dict[str, Paper] = {p.key: p for p in _PAPERS}

SOFTWARE = Software(
    name="dpref",
    title="dpref: a reference implementation of differentially private optimization",
    authors=("The dpref maintainers",),
    year=2026,
    license="Apache-2.0",
)


# ---------------------------------------------------------------------------------------------------------
# errata (our words; the locations are the paper's own)

def _e(id, status, location, printed, correction, evidence=None) -> Erratum:
    return Erratum(id=id, status=status, location=location, printed=printed, correction=correction,
                   evidence=evidence)


ERRATA: tuple[Erratum, ...] = (
    # --- dpzero ------------------------------------------------------------------------------------------
    _e("dpzero.E1", "erratum", "Algorithm 1 and Algorithm 2, line 5",
       "the noise z_t has \"variance σ = 4C√(2T log(e+ε/δ))/(nε)\"",
       "σ is the standard deviation (Lemma 2.2 squares it; the proofs use E‖z‖² = dσ²). Taken as a variance "
       "the noise is too small to be (ε, δ)-DP.",
       "dpzero.alg1_alg2.sigma_is_std"),
    _e("dpzero.E2", "typo", "Algorithm 1 and Algorithm 2 (line numbers); text after Algorithm 2",
       "two lines are numbered \"5:\"; the text puts the noise on \"line 6 of Algorithm 2\"",
       "the output/update line is line 6, and the noise is added there"),
    _e("dpzero.E3", "typo", "Appendix F, proofs of Corollaries F.2 and F.3 (first display)",
       "‖F_S(x_t)‖²", "‖∇F_S(x_t)‖²"),
    _e("dpzero.E4", "clarification", "Theorem 3 and Corollary F.4 (App. E, F)",
       "one symbol L̃: L̃² = L² log(2√(2π) d(r+2)n³ε²/(r Lg)) with C = 4L̃ in Theorem 3, and "
       "L̃² = 64L² log(32√(2π) κ n³ d(r+2)ε²/(r Lg)) with C = L̃/2 in Corollary F.4",
       "two different quantities, each right for its own proof; dpref keeps two named helpers, and using "
       "Theorem 3's L̃ in Corollary F.4 is what breaks the corollary's proof",
       "dpzero.thm3_corf4.two_ltilde"),
    _e("dpzero.E5", "erratum", "Lemma 2.2",
       "the Gaussian composition bound σ = 2Δ√(2T log(e+ε/δ))/ε gives (ε, δ)-DP \"for any ε > 0\"",
       "false for large ε (by exact Gaussian-DP composition it fails from ε ≈ 83 to 270, depending on δ); "
       "dpref uses it for ε ≤ 80 only and warns beyond",
       "dpzero.lemma2_2.large_epsilon"),
    _e("dpzero.E6", "erratum", "Theorem 3, proof of eq. (7) (App. E, display (17))",
       "the expectation over z_t is taken before conditioning on the no-clipping event Q, using "
       "E[z_t²·|Q] = σ²E[·|Q] and E[z_t·|Q] = 0",
       "Q depends on z_t through the later iterates, so these identities are not justified as written; "
       "dpref treats the bound (7) as a statement to check numerically",
       "dpzero.thm3.utility_bound"),
    _e("dpzero.E7", "clarification", "§5 and App. B.2 (experiments) vs Theorems 1-3",
       "the experiments run \"DPZero\"",
       "they differ from the analysed algorithm: mini-batches instead of the full batch, Gaussian instead of "
       "sphere directions, an RDP accountant for Poisson sampling applied to shuffled batches, and doubled "
       "sensitivity; dpref keeps the experiment mode separate and labels its guarantee heuristic"),
    _e("dpzero.E8", "typo", "App. B.2",
       "\"private zeroth-order baseline MeZO\"", "MeZO is not private"),
    _e("dpzero.E9", "clarification", "Assumption F.1 and Corollaries F.2-F.4",
       "PL condition together with Assumption 3.1 or 3.5 on all of R^d",
       "together they force dist(x, X*) ≤ L/μ everywhere, impossible for a bounded solution set, so there is no "
       "standard non-trivial example; dpref checks the PL corollaries locally"),
    _e("dpzero.E10", "clarification", "§5 and App. B.1 (synthetic quadratic, Figures 1-3)",
       "Theorems 1-3 are illustrated on a quadratic", "its per-sample gradients are unbounded (not Lipschitz), "
       "so the theorems do not formally apply; dpref adds Lipschitz problems for theory-faithful checks"),
    _e("dpzero.E11", "clarification", "§5, App. B.1 and B.2",
       "initial point, evaluated iterate and model selection are not stated",
       "dpref uses x₀ = 0, reports the trajectory mean and the last iterate, and selects hyper-parameters on "
       "training data (the figures of the paper were tuned on test data)"),
    _e("dpzero.E12", "clarification", "§5, App. B",
       "C, T and α are chosen by grid search on held-out or test performance",
       "this selection has a privacy cost that the paper does not account; dpref does not account it either"),
    _e("dpzero.E13", "erratum", "public code of the paper (trainer, DPZero step); Algorithm 2 line 6",
       "the noise z_t is drawn right after reseeding the generator with the direction seed of step t",
       "z_t is then a function of the (public) seed and the step releases the clipped value unprotected; the "
       "noise needs its own stream, never reseeded by direction seeds",
       "dpzero.alg2.noise_law"),
    _e("dpzero.E14", "erratum", "early public code (optimizer module, not used for the paper's runs)",
       "a fresh normal noise per parameter tensor, with a scale missing the 1/batch factor",
       "one scalar z_t per step, scaled as in Algorithm 2"),
    _e("dpzero.E15", "clarification", "Theorem 3 (eq. (7)); Remark F.6",
       "real-valued T, and the bound (7) at any n",
       "T must be rounded to an integer, and at small nε the bound exceeds the trivial L² (e.g. n = 1000, "
       "d = 100, r = 5, ε = 2, L = ℓ = 1)", "dpzero.thm3.utility_bound"),
    _e("dpzero.E16", "clarification", "Lemma C.2 (smoothing)",
       "f_λ(x) = E_v f(x + λv) with v uniform in the ball √d·B^d",
       "f_λ averages over the ball of radius λ√d, not λ; smoothed functions must use that radius",
       "dpzero.lemma_c2.smoothed_gradient_unbiased"),
    _e("dpzero.E17", "clarification", "eq. (2), Lemma C.1",
       "directions u uniform on the sphere √d·S^{d-1}",
       "the radius is √d (E[uuᵀ] = I), not 1; with unit vectors every formula changes by factors of d",
       "dpzero.lemma_c1.scaled_sphere_moments"),
    _e("dpzero.E18", "erratum", "App. B.2 (comparison with Tang et al.)",
       "clipping the raw difference f(x+λu) − f(x−λu) at 0.05 \"aligns with\" C = 0.05/λ = 50",
       "the equivalent threshold on the normalised difference is 0.05/(2λ) = 25",
       "dpzero.alg2.reductions"),
    _e("dpzero.E19", "clarification", "Theorem 2",
       "assumes Assumption 3.5 (which includes per-sample smoothness)",
       "the proof needs only Lipschitz f and the Hessian bound on F_S; harmless"),
    _e("dpzero.E20", "clarification", "§2 (notation: clip_C)",
       "clip_C(v) = v·min(1, C/‖v‖)", "undefined at v = 0; dpref sets clip_C(0) = 0, as the public code does"),
    _e("dpzero.E21", "clarification", "Algorithm 2 vs the public code (mini-batch noise)",
       "σ = 4C√(2T Lg)/(nε) for the full batch",
       "with mini-batches the code calibrates a noise multiplier on the sensitivity 2C of the batch sum and "
       "divides by B; replacing n by B in the paper's σ is a different (unamplified) guarantee, so dpref "
       "requires an explicit accountant for mini-batches"),
    # --- zo_o2nc -----------------------------------------------------------------------------------------
    _e("zo_o2nc.E1", "typo", "Algorithm 4 (partition); Theorem 4.3; Lemma C.1; §3 (decomposition); §4.1",
       "Z_t^k for t = [2, K]; M^(j)(x_{1:j−1}, Z_i); Σ_{i=1}^t in the gradient decomposition; B1 = T (§4.1)",
       "t ∈ {2, …, T}; Z_j; Σ_{i=2}^t; B1 = T + 1 as in Theorem 4.9 (both satisfy B1 ≥ T·B2/2)"),
    _e("zo_o2nc.E3", "erratum", "Theorem 4.3 proof, Lemma C.1; Corollary 4.4",
       "a record enters |OUT(q)| = ⌈log₂ n⌉ + 1 ≤ 2 ln n tree nodes",
       "the exact largest count is ⌊log₂ n⌋ + 1, which exceeds 2 ln n at n ∈ {1, 2, 4}: Corollary 4.4's "
       "σ = √(2 ln T)·s/ρ is not private at T = 1 (σ = 0) and over budget at T = 2 and 4; dpref offers the "
       "exact count",
       "zo_o2nc.thm4_3.out_count_constant"),
    _e("zo_o2nc.E4", "erratum", "Remark 4.2; Corollary 4.5",
       "|NODE(t)| ≤ 2 ln t, hence E‖TREE(t)‖² ≤ 2 ln(t)·dσ²",
       "false at t = 1 (one node, 2 ln 1 = 0); exact: popcount(t)·dσ², or 2 ln(T)·dσ² for all t ≤ T when T ≥ 2",
       "zo_o2nc.remark4_2.node_count_bound"),
    _e("zo_o2nc.E5", "erratum", "Theorem 4.9 (choice of T); Appendix E",
       "T = min{T1, T2} with T1 = (√d·LδM/(F*+Lδ))^{2/3}, T2 = (d^{3/2}LδM/((F*+Lδ)ρ))^{1/2}",
       "with the minimum the error bound a·T + b/√T + c/T keeps the decreasing term of the larger Ti "
       "uncontrolled; T = max{T1, T2} gives the stated rate. dpref defaults to the maximum (T_rule=\"max\"), "
       "the printed minimum selectable (privacy is unaffected: σ is recomputed from T)",
       "zo_o2nc.thm4_9.t_rule"),
    _e("zo_o2nc.E6", "erratum", "Lemma A.1 with Lemma A.2 (proof of Lemma 2.2(iii))",
       "Lemma A.1 bounds the smoothing constant by √d using Lemma A.2's Γ-ratio bound √(2n)",
       "with √(2n) the proof gives only 2√(2/π)·√d ≈ 1.6√d; Lemma 2.2(iii)'s √d is true (with the bound "
       "√(πn)/2 the proof gives exactly √d)",
       "zo_o2nc.lemma_a1.constant_via_a2"),
    _e("zo_o2nc.E7", "clarification", "Theorem 4.9 (statement)",
       "the output is a (δ, ε)-stationary point",
       "the proof bounds E‖∇F(w̄)‖_{2δ} (Corollary 2.3 doubles the radius), in expectation; dpref reports "
       "Goldstein stationarity at radius 2δ"),
    _e("zo_o2nc.E8", "erratum", "Appendix E (naive oracle, Algorithm 6)",
       "σ = dL/(Bρ) gives (α, αρ²/2)-RDP",
       "the replace-one sensitivity of the one-direction estimator is 2dL/B (as in Lemma 3.1), so σ = 2dL/(Bρ) "
       "is needed; dpref defaults to it, the printed value selectable and labelled",
       "zo_o2nc.appe.naive_noise"),
    _e("zo_o2nc.E9", "erratum", "Appendix E (rate of the naive oracle)",
       "M = Ω(d F*L²/(δε³) + d^{3/2} F*L²/(ρδε³)) with B = 1",
       "with B = 1 the derivation gives M ≳ d³/(ρ²δε³); the printed rate needs B ≈ d^{3/2}/ρ. dpref offers both "
       "batch sizes",
       "zo_o2nc.appe.naive_rate"),
    _e("zo_o2nc.E10", "clarification", "Algorithm 3, line 3 (OSD step size)",
       "η is \"the stepsize tuned by OSD\"",
       "no formula is given; dpref uses the data-independent η = D/(G√T) with G² = 3V + 3L² + 3N from the "
       "quantities of Lemma 4.8 and Corollary 4.5"),
    _e("zo_o2nc.E11", "typo", "§2 (RDP to (ε, δ)-DP conversion)",
       "\"for all δ [relation lost] exp(−ρ²)\"",
       "δ ≤ exp(−ρ²); dpref uses the conversion ρ²/2 + ρ√(2 ln(1/δ)), valid for every δ"),
    _e("zo_o2nc.E12", "clarification", "Algorithm 4 (partition of the data)",
       "partition Z into Z_1^k (size B1) and Z_t^k (size B2)",
       "the order is not specified; dpref partitions in index order (single pass, each record in exactly one "
       "block) and claims no amplification by shuffling"),
    _e("zo_o2nc.E13", "clarification", "Definition 2.1; Lemmas 3.1, 3.2, 4.8; Theorem 4.9",
       "f(·, z) differentiable and L-Lipschitz",
       "only Lipschitz continuity is used (Lemma 2.2 needs no differentiability); for nonsmooth F the gradients "
       "of Definition 2.1 are Clarke subgradients (or gradients at points of differentiability)",
       "zo_o2nc.lemma4_8.oracle_variance"),
    _e("zo_o2nc.E15", "clarification", "Lemmas 3.1 and 3.2 (sensitivity)",
       "the sensitivity of GRAD and DIFF is bounded deterministically",
       "only when the two neighbouring runs share the directions u_ij (the proof conditions on the internal "
       "randomness); the directions must never depend on the data",
       "zo_o2nc.lemma3_1.sensitivity"),
    # --- nsnc_improved -----------------------------------------------------------------------------------
    _e("nsnc_improved.E1", "erratum", "§3, eq. (5) (worst-case sensitivity of the oracle (4) with m = d)",
       "‖(1/B)Σ∇̃f_α(x; ξ_i) − (1/B)Σ∇̃f_α(x; ξ′_i)‖ ≤ Ld/B",
       "for neighbours that replace one sample (the relation of the proof of Lemma 3.3, which bounds the "
       "true gradients' part by 2L/B₁) and shared directions the bound is 2Ld/B, attained by f = ±L⟨e, x⟩ "
       "with every direction equal to e",
       "nsnc_improved.eq5.worst_case_sensitivity"),
    _e("nsnc_improved.E2", "erratum", "Theorem 3.1 (rate); eqs. (9)-(10) of its proof; Remark 3.2",
       "G₀ ≲ L/B₁ + LD√(dΣ)/(αB₂) + σ√(d log Σ) (eq. (9)), the L/B₁ term then dropped (eq. (10)), giving "
       "n = Ω̃(ΦL²/(αβ³) + ΦLd/(εαβ²) + ΦL^{3/2}d^{3/4}/(ε^{1/2}αβ^{5/2})) with a dimension-free non-private term",
       "Lemma 3.5's sampling term is L²/B₁, so G₀ contains L/√B₁ = L/√Σ. With the printed parameters "
       "(Σ = Θ̃((α/(εD))^{2/3}), D ∝ n^{−2/3}) it decays like n^{−2/9}, slower than the printed n^{−1/3}, and "
       "dominates as n → ∞ at fixed ε and d. Keeping it (Σ ≥ α/(D√d), the first entry of D divided by √d) gives "
       "n = Ω̃(ΦL²√d/(αβ³) + ΦLd/(εαβ²)) (the printed third term is at most the average of these two); Remark "
       "3.2's dimension-free non-private term is not supported by the proof",
       "nsnc_improved.thm3_1.printed_rate_exponent"),
    _e("nsnc_improved.E3", "erratum", "Proposition 2.5 (tree mechanism noise)",
       "σ = 4s√(log Σ·log(1/δ))/ε",
       "σ = 0 at Σ = 1, and log Σ undercounts the tree levels for small Σ; dpref uses log(max(Σ, 2)) or an "
       "exact Gaussian-DP calibration"),
    _e("nsnc_improved.E4", "erratum", "Algorithm 1 (line 3; Function NODE, lines 9-17)",
       "NODE(t): for i = 1, …, ⌈log Σ⌉ while k < t: k′ = k + 2^{⌈log Σ⌉−i}; if k′ ≤ k then S ← S ∪ {(k+1, k′)}, "
       "k ← k′; node noises ζ_(u,v) ∼ N(0, σ²)",
       "the test must be k′ ≤ t (k′ ≤ k never holds: NODE returns no node) and the loop must start at i = 0: from "
       "i = 1 the largest block is 2^{⌈log Σ⌉−1}, and NODE(t) is the dyadic decomposition of [1, t] for every "
       "t ≤ Σ except exactly t = Σ = 2^k, where [1, Σ] is never covered; the noise of a d-dimensional sum is "
       "N(0, σ² I_d). dpref's NODE is the corrected loop (reference.mechanisms.tree_node)",
       "nsnc_improved.alg1.printed_node_loop"),
    _e("nsnc_improved.E5", "erratum", "Lemma B.1 (App. B), applied to every block of M steps in the proof of "
       "Proposition 2.6",
       "with η = D/(G₁√M), E Σ_{m=1}^{M} ⟨g̃_m, Δ_m − u⟩ ≤ (3/2)·D·G₁·√M for every ‖u‖ ≤ D",
       "Algorithm 2 does not restart its OGD between blocks, so a block starts anywhere in the ball and the bound is "
       "‖Δ_start − u‖²/(2η) + (η/2)Σ‖g̃_t‖² ≤ 2D²/η + (η/2)Σ‖g̃_t‖², i.e. (5/2)·D·G₁·√M; it is attained: the block "
       "started at Δ = D·e with u = −D·e and g̃_t ≡ G·e has regret 2.5·D·G·√M at M = 4. With restarts at Δ = 0 "
       "the constant is 1. Proposition 2.6's middle term becomes (5/2)G₁/√M",
       "nsnc_improved.lemma_b1.regret_constant"),
    _e("nsnc_improved.E6", "erratum", "Proposition 5.1 and its proof (§5); Remark 4.2",
       "with probability ≥ 1 − ζ, ‖∂̄_α F(x_out)‖ ≤ ‖∂̄_α F̂^D(x_out)‖ + Õ(L√(d log(R/ζ)/n)), for L-Lipschitz losses "
       "(by uniform convergence of gradients, Mei et al. 2018, Thm 1)",
       "false for nonsmooth Lipschitz losses (the uniform convergence of gradients needs smoothness): for 1-D losses "
       "with slopes L(2b_j − 1) on J columns tiling [½ − α, ½ + α], b_j ∼ Bernoulli(3/4), and L/2 outside, "
       "‖∂̄_α F(½)‖ = L/2 while ‖∂̄_α F̂(½)‖ = 0 with probability 1 − (1 − p_n)^J, p_n = P[Bin(n, 3/4) ≤ n/2] (0.436 "
       "at n = 40, J = 1000; at least 1/2 for every n with enough columns, almost surely for columns accumulating at "
       "½). A transfer holds for the smoothed objectives F̂_α and F_α, which Algorithms 3 and 4 certify, followed by "
       "Lemma 2.4",
       "nsnc_improved.prop5_1.nonsmooth_counterexample"),
    _e("nsnc_improved.E7", "erratum", "Algorithm 3 line 12 and Algorithm 4 line 11 (difference branch)",
       "y_1, …, y_{2m} ∼ Unif(𝔹_α) with ∇̃f(z; ξ) = (1/m) Σ_j (d/(2α))(f(z + αy_j; ξ) − f(z − αy_j; ξ)) y_j",
       "the two-point formula needs y_j ∼ Unif(𝕊^{d−1}), as in the reset branch and Fact 2.3; with directions from the "
       "ball it is biased, e.g. of mean c·d/(d + 2) for f = ⟨c, ·⟩ and α = 1 (E[yyᵀ] = I/(d + 2) on the unit ball)",
       "nsnc_improved.alg3_alg4.difference_branch_directions"),
    _e("nsnc_improved.E8", "erratum", "App. C, eq. (17) (first-order estimator)",
       "∇̃f_α(x; ξ) = (1/m) Σ_j ∇f(x + αy_j; ξ) with y_j ∼ Unif(𝕊^{d−1}), of the same expectation as the zero-order "
       "estimator",
       "sphere perturbations give E∇f(x + αu) ≠ ∇f_α: on a ridge L|⟨a, x⟩ − c| at residual α/2 the mean is "
       "L·a·(1 − 2F_S(−1/2)) instead of L·a·(2F_U(1/2) − 1) (F_S, F_U the sphere and ball marginal CDFs). "
       "Algorithm 5's ∇f(x + y) with y ∼ Unif(𝔹_α) is unbiased (Fact 2.3); dpref implements that one "
       "(reference.estimators.first_order_estimate)",
       "nsnc_improved.eq17.first_order_perturbations"),
    _e("nsnc_improved.E9", "erratum", "Theorem 4.1 (parameters D and T)",
       "D = Θ̃(α²β²/L²), T = Θ̃(ΦL²/(α²β³))",
       "dimensionally inconsistent: under the change of units x → c·x (α → cα, L → L/c, β → β/c, Φ fixed) an "
       "equivalent instance gets a different number of steps (T scales like 1/c) and block length, and the regret "
       "term L√(D/α) = √α·β is not a gradient. The proof needs D = Θ̃(αβ²/L²), T = Θ̃(ΦL²/(αβ³)) (DT = Φ/β as "
       "before); dpref uses D = αβ²/(225L²), T = ⌈3(Φ + 2Lα)/(Dβ)⌉, which leave every dimensionless parameter "
       "unchanged",
       "nsnc_improved.thm4_1.scale_invariance"),
    _e("nsnc_improved.E10", "erratum", "Theorem 4.1 and Lemma 4.3 (number of directions m)",
       "m = L²dΣ/(nσ₁²) + L²d/(nσ₂²), with σ₁, σ₂ sized for the sensitivity that \"directly follows from Lemma 3.3\"",
       "that m controls the variance only. The high-probability sensitivity of Lemma 3.3 needs the concentration "
       "radius L(d + 1)√(2 log(2/γ)/m) to be O(L·min(1, κ_d D/α)), i.e. m ≥ ⌈2(d + 1)²·log(2/γ)·max{1, "
       "(α/(κ_d D))²}⌉ with γ = δ/(8T); at the printed m (d = 2, n = 2000: m = 249) the reset's high-probability "
       "bound exceeds the worst case 2Ld/n, which then applies, and the exact ε of the σ sized for the "
       "high-probability sensitivities is about 276 for a target ε = 1. dpref takes m = max(privacy floor, "
       "variance m)",
       "nsnc_improved.thm4_1.privacy_floor_on_m"),
    _e("nsnc_improved.E11", "erratum", "Lemma C.1 (reset step, t mod Σ = 1)",
       "‖g_t − g′_t‖ ≤ L/B₁",
       "for neighbours that replace one sample (§2) the reset estimate (1/B₁)Σ∇f(z_t + y_i; ξ_i) moves by up to "
       "2L/B₁, attained by ∇f = L·e against ∇f′ = −L·e whatever the perturbations (the proof's \"trivially follows "
       "from the Lipschitz assumption\" bounds each gradient by L, so their difference by 2L); dpref's first-order "
       "plan uses 2L/B₁",
       "nsnc_improved.lemma_c1.reset_sensitivity"),
    _e("nsnc_improved.E12", "clarification", "Theorem 3.1 (statement)",
       "the parameter list is cut off: \"B₁ = Σ, B₂ = 1, M = 0rithm 3 as the oracle subroutine\"",
       "rebuilt from Theorem C.4 (same structure and proof) and Lemma 3.4: M = α/(4D), Σ = Θ̃((α/(εD))^{2/3}), "
       "D = Θ̃(min{(Φ²α/(L²T²))^{1/3}, (Φαε/(dLT))^{1/2}, (Φ³α²ε/(d^{3/2}L³T³))^{1/5}}), T = Θ(n), m and σ of "
       "Lemma 3.4; dpref's printed variant takes every hidden constant 1, D at T = ⌊n/2⌋ and T from the record "
       "budget ⌈T/Σ⌉B₁ + (T − ⌈T/Σ⌉)B₂ ≤ n (nsnc_improved.E2 for what these parameters achieve)",
       "nsnc_improved.thm3_1.printed_parameters_reconstructed"),
    _e("nsnc_improved.E13", "clarification", "Eq. (11) in the proof of Lemma 3.3; Theorem E.2",
       "Pr[‖∇̃f(z_t; ξ) − ∇f_α(z_t; ξ)‖ ≤ Ld√log(8dB₁/δ)/√m] ≥ 1 − δ/(8B₁), by Theorem E.2 with \"an absolute "
       "constant c > 0\" left unspecified",
       "with c unknown the number of directions m that makes the high-probability sensitivity hold cannot be "
       "computed; dpref uses the explicit, dimension-free radius of Pinelis (1994), b√(2 log(2/γ)/m) for m i.i.d. "
       "zero-mean vectors of norm ≤ b (b = L(d + 1) for two-point estimates, 2L first order), and sets the privacy "
       "floor on m from it",
       "nsnc_improved.lemma3_4.directions_from_explicit_radius"),
    # --- spider_sosp -------------------------------------------------------------------------------------
    _e("spider_sosp.E1", "erratum", "§1 (neighbouring datasets differ by a single item); Lemma 3.7",
       "neighbours differ \"by a single item\", with O1 sensitivity G/b and O2 sensitivity M‖Δx‖/b_t",
       "replacing one item gives 2G/b and 2M‖Δx‖/b_t, attained by f = ±G⟨u, x⟩ and f = ±(M/2)⟨u, x⟩² with u ∥ Δx; "
       "the paper's constants are right (and attained) for zero-out neighbours only",
       "spider_sosp.lemma3_7.replace_one_sensitivity"),
    _e("spider_sosp.E2", "typo", "Lemma 3.7 and Lemma 3.8 (b_t); Theorem 3.11",
       "b_t = max{‖g̃_t‖√d/(αε), κ‖g̃_t‖/α², 1} and the O2 sensitivity M‖x_t − x_{t−1}‖/b_t = ‖g̃_t‖/b_t",
       "g̃_t is not known when b_t is chosen; the O2 query of step t moves by ‖x_t − x_{t−1}‖ = ‖g̃_{t−1}‖/M, so "
       "b_t uses ‖g̃_{t−1}‖ (with ceilings: b_t = max(⌈‖g̃_{t−1}‖√d/(αε)⌉, ⌈κ‖g̃_{t−1}‖/α²⌉, 1))",
       "spider_sosp.alg2.drift_bound"),
    _e("spider_sosp.E3", "erratum", "Theorem 2.2, Lemma 3.7, Lemma 3.8, Theorem 3.11",
       "four noise rules: 4s√(log Σ·log(1/δ))/ε, s·log(1/δ)/ε, 2 log(1/δ)·α/√d and α/√d",
       "they disagree (the last has no ε or δ at all); under replace-one neighbours Lemma 3.8's rule is not "
       "certified at (G, M, B, d, n, ε, δ) = (1, 1, 1, 100, 1e5, 0.1, 1e-6) even by exact accounting (δ(ε) = "
       "1.17e-4), and Theorem 3.11's is not private there: its first release alone has δ(0.1) = 0.0067 > 1e-6, "
       "under zero-out neighbours too; dpref calibrates σ to the exact Gaussian-DP μ of the run (exact node count) and reports what "
       "each printed rule gives",
       "spider_sosp.sec5.printed_rules_exact_accounting"),
    _e("spider_sosp.E5", "erratum", "Algorithm 2 with Theorem 2.2 (one tree across O1 restarts)",
       "each record enters one leaf of the tree",
       "with one tree for the whole run a record changes its own leaf and the next restart leaf, so the "
       "single-participation hypothesis fails; count two leaves, or use a fresh tree per segment",
       "spider_sosp.sec5.noise_rules"),
    _e("spider_sosp.E9", "typo", "Theorem 3.11 (b)",
       "b = G(√d/(εα) + 1/α²)",
       "dimensionally inconsistent (G/α² against G²/α² under a change of units); Lemma 3.8's b = G√d/(εα) + "
       "G²/α² is meant, with a ceiling",
       "spider_sosp.lemma3_8.batch_sizes"),
    _e("spider_sosp.E13", "erratum", "Algorithm 2, line 10; Lemma 3.6 (τ_t); Lemma 3.8",
       "at a perturbation step drift_t = 0, and Lemma 3.6 bounds ‖∇_t − ∇F(x_t)‖ from the last step whose drift "
       "was set to 0, as if O1 had been queried there",
       "no O1 query is made at a perturbation step: the SPIDER chain continues and its releases since the last O1 "
       "query add up past κ (several κ in runs), so V_t exceeds G²/b + κ/coef_bt and Lemma 3.8's accuracy does "
       "not follow; reset the drift at O1 queries only (dpref's default; the literal reading is a flag)",
       "spider_sosp.alg2.drift_reset_at_perturbation"),
    _e("spider_sosp.E18", "erratum", "Lemma 3.3",
       "from a saddle, with ∇_0 = ∇F(x_0) + ζ_1 + ζ_2 and any errors ‖∇_t − ∇F(x_t)‖ ≤ γ, F(x_Γ) − F(x_0) ≤ "
       "−Ω(γ^{3/2}/(√ρ log³(dMB/(ργι)))) with probability ≥ 1 − ι",
       "false for bounded adversarial errors: the perturbation ζ_2 (of size γ/√log(d/ι), spread over d "
       "coordinates) is smaller than the errors allowed, and e_t = clip_γ(Mx_t − ∇F(x_t)) keeps x_t at the saddle "
       "(F(x_Γ) = F(x_0)); the decrease holds for random zero-mean errors, or with a perturbation that dominates "
       "the error; the SOSP guarantee of Proposition 3.4 and Theorem 3.11 rests on it",
       "spider_sosp.lemma3_3.adversarial_errors"),
    _e("spider_sosp.E24", "erratum", "Theorem A.2 and the ERM-route display of Appendix A.2",
       "α = Õ(√d/n + (√d/(nε))^{2/3}); in the proof L for G, a \"maximal packing\" for a covering, τ for ι and "
       "(M + ρr)√(d/n) for the Hessian step",
       "Theorem A.2 gives a uniform deviation of order √(d/n) (exactly E sup_x‖∇F_D − ∇F_P‖² = "
       "(1 − e^{−τ²})Σc_j²/n on the cosine family), so the display reads Õ(√(d/n) + (√d/(nε))^{2/3}); the "
       "Hessian step is M√(d log(R/r)/n) + 2ρr",
       "spider_sosp.thm_a2.uniform_gradient_deviation"),
    _e("spider_sosp.E29", "clarification", "Lemma 3.10",
       "α is stated with O(·)", "it inherits the Õ(·) factors; dpref multiplies the formula by a constant "
       "c_alpha (default 1)"),
    # --- bgm21 -------------------------------------------------------------------------------------------
    _e("bgm21.E1", "clarification", "Appendices A, B and C (Algorithms 3, 5 and 6; Theorem 29; the proofs)",
       "the main text refers to appendices for three algorithms, the strongly convex solver and every proof",
       "the paper text ends at its references; dpref rebuilds these pieces from the main text and the cited "
       "papers (Phased-SGD from Feldman–Koren–Talwar 2020, noisy Frank–Wolfe from Talwar–Thakurta–Zhang 2015, the "
       "solver as noisy projected gradient descent under zero-concentrated DP) and marks each as rebuilt in its "
       "docstring and in docs/papers/bgm21.md"),
    _e("bgm21.E2", "erratum", "Theorem 5",
       "β = √n·L0/R_x",
       "β carries no 1/D: the smoothing error 2L0²/β is then L0R_x/√n, not a loss, and Phased-SGD's step "
       "condition η ≤ 2/(βR_x²) of its analysis fails whenever D > 1 (the step map then expands distances; the "
       "phases' steps η/4^i stay non-expansive up to D = 4); β = √n·L0/(R_x·D) is dimensionally right, gives the "
       "L0R_xD/√n term of the rate and meets the step condition exactly (dpref's default; the printed β is "
       "beta_variant='printed')",
       "bgm21.thm5.smoothing_parameter"),
    _e("bgm21.E3", "erratum", "Theorem 6",
       "α = 1/(n log n)",
       "the oracle accuracy lacks the L0R_x of Theorem 5: with L0R_x ≫ 1 the oracle bias αD is not the O(1/n) "
       "the rate needs relative to L0R_xD, and α is not invariant to rescaling the loss; dpref uses "
       "α = L0R_x/(n ln n) (alpha_variant='printed' reproduces the paper)",
       "bgm21.thm6.oracle_accuracy"),
    _e("bgm21.E4", "clarification", "Lemma 3",
       "f_β is 2L0R_x-Lipschitz and |f − f_β| ≤ 2L0²/β",
       "both constants are loose: f_β is L0‖x‖_*-Lipschitz and 0 ≤ f − f_β ≤ L0²/(2β); dpref keeps the printed "
       "constants where they feed a calibration and checks the tight ones",
       "bgm21.lemma3.smoothed_gll"),
    _e("bgm21.E5", "typo", "Theorems 8 and 11 (R)",
       "R = (2/3)·log(·) and R = (4/5)·log(·), base unstated",
       "the proofs need 2^{R/2} = (·)^{1/3} and 2^{R/2} = (·)^{2/5}, so the logarithm in R is base 2 (every other "
       "logarithm natural)",
       "bgm21.thm8_11.round_count"),
    _e("bgm21.E7", "clarification", "Algorithm 1, lines 4 and 9; Algorithm 6",
       "\"draw a batch … without replacement from S\"",
       "read as one pass over disjoint batches cut from one public permutation (the paper's single-pass claim, and "
       "a privacy analysis without amplification by subsampling), not as a fresh draw from all of S at every step",
       "bgm21.alg1_6.single_pass"),
    _e("bgm21.E9", "clarification", "Algorithm 1, line 3 (s_r) and Theorem 7",
       "s_r = 2D(L0 + L1D)·2^r·√log(1/δ)/(bε) makes Algorithm 1 (ε, δ)-DP",
       "it does only with the centred score sensitivity ½·diam(V)·‖δ∇‖_* of report-noisy-min and composition "
       "inside a round; with the uncentred D‖δ∇‖_* the same s_r certifies about 1.4ε–2ε. dpref's ledger uses the "
       "centred sensitivity and certifies at most ε",
       "bgm21.thm7.centred_ledger"),
    _e("bgm21.E10", "erratum", "§4.2 (σ̂_{r,t} of Algorithm 6) and Theorem 10",
       "σ̂_{r,t} = 4L1D·η_{r,t}·(t+1)d^{1/p−1/2}√log(1/δ)/(bε)",
       "the difference term's sensitivity is governed by ‖w_r^t − w_r^{t−1}‖ = η_{r,t−1}‖v − w‖, so σ̂ must use "
       "η_{r,t−1}; with η_{r,t} the noise is too small by √((t+1)/t) and the exact δ of step t = 1 exceeds the "
       "target (2.24δ at ε = 1, δ = 1e-8). dpref's default is sigma_hat_eta='prev'",
       "bgm21.thm10.printed_sigma_hat"),
    _e("bgm21.E13", "erratum", "Theorem 16 (β = 2ρκ with the regulariser in ‖·‖_p̄)",
       "β = 2ρκ makes every subproblem f + (β/2)‖· − w_r‖²_p̄ strongly convex",
       "for p < 1 + 1/ln d the regulariser is in ‖·‖_p̄ while weak convexity is in ‖·‖_p, the modulus is "
       "ν_eff = (p̄ − 1)d^{−2(1/p − 1/p̄)} and Proposition 13 needs ν_eff·β > ρ, which β = 2ρκ violates near p = 1 "
       "(2κν_eff ≈ 0.3–0.5 at p = 1); dpref uses β = 2ρ/ν_eff, equal to 2ρκ when p ≥ 1 + 1/ln d",
       "bgm21.thm16.regularised_strong_convexity"),
    _e("bgm21.E18", "clarification", "Algorithm 2, line 5",
       "the output is uniform over w_1, …, w_R",
       "w_1 is data-independent and w_{R+1}, computed from the last batch, is never output: the last 1/R of the "
       "data enters only the analysis. dpref implements the printed rule",
       "bgm21.alg2.output_candidates"),
    _e("bgm21.E22", "clarification", "Algorithm 1, line 7, with η_{r,t} = 1/√(t+1) (Theorems 7–11)",
       "η_{r,0} = 1",
       "every round's first step jumps to the selected vertex, w_r^1 = v_r^0; w_r^0 matters only through ∇_r^0, "
       "Δ_r^1 and as an output candidate",
       "bgm21.alg1.first_step_vertex"),
    _e("bgm21.E28", "erratum", "Theorem 6 (Algorithm 5's Laplace scale, from Talwar–Thakurta–Zhang 2015)",
       "the noisy Frank–Wolfe Laplace scale λ of TTZ15 makes the T − 1 report-noisy-min steps (ε, δ)-DP",
       "under replace-one neighbours report-noisy-min over non-monotone scores costs 2Δ/λ per step (the factor 2 "
       "is attained), and the printed λ certifies only about 2ε; dpref calibrates λ = 2Δ/ε_step with ε_step the "
       "largest per-step ε that the exact pure-composition certificate allows (noise='certified', the default; "
       "noise='ttz15' reproduces the paper)",
       "bgm21.thm6.printed_laplace_scale"),
)

ERRATA_BY_ID: dict[str, Erratum] = {e.id: e for e in ERRATA}

#: Files whose bare ``E<n>`` citations refer to one paper (path relative to the repository root, or a
#: prefix ending in "/"). Everywhere else an erratum is cited by its qualified id.
BARE_ERRATUM_SCOPE: dict[str, str] = {
    "reference/algorithms/dpzero.py": "dpzero",
    "reference/algorithms/dpzero_privacy.py": "dpzero",
    "reference/algorithms/dpzero_theory.py": "dpzero",
    "reference/objectives_dpzero.py": "dpzero",
    "empirical_dp/dpzero_scenarios.py": "dpzero",
    "proofs_checks/adapters/dpref.py": "dpzero",
    **{f"docs/papers/src/{key}.md": key for key in PAPERS_BY_KEY},
    **{f"docs/papers/{key}.md": key for key in PAPERS_BY_KEY},
}


def errata_of(paper: str) -> list[Erratum]:
    """The errata of one paper, by number."""
    return sorted((e for e in ERRATA if e.paper == paper), key=lambda e: e.number)


# ---------------------------------------------------------------------------------------------------------
# citation text

def software_bibtex() -> str:
    s = SOFTWARE
    return (
        "@software{dpref,\n"
        f"  author    = {{{{{' and '.join(s.authors)}}}}},\n"
        f"  title     = {{{s.title}}},\n"
        f"  version   = {{{s.version}}},\n"
        f"  year      = {{{s.year}}},\n"
        f"  license   = {{{s.license}}}\n"
        "}"
    )


def software_text() -> str:
    s = SOFTWARE
    return f"{', '.join(s.authors)}. {s.title}. Version {s.version}, {s.year}."


def _authors_text(authors) -> str:
    if len(authors) == 1:
        return authors[0]
    return ", ".join(authors[:-1]) + " and " + authors[-1]


def paper_text(key: str) -> str:
    p = PAPERS_BY_KEY[key]
    return f"{_authors_text(p.authors)}. {p.title}. {p.venue}, {p.year}. arXiv:{p.arxiv}."


def parse_bibtex(entry: str) -> tuple[str, str, dict[str, str]]:
    """(entry type, citation key, {field: value}) of one BibTeX entry; values lose one level of braces.

    A small parser for the entries above (brace-delimited values, no string macros), used by the tests and
    by nothing else."""
    import re

    match = re.match(r"\s*@(\w+)\s*\{\s*([^,\s]+)\s*,", entry)
    if not match:
        raise ValueError("not a BibTeX entry")
    kind, key = match.group(1).lower(), match.group(2)
    fields: dict[str, str] = {}
    i = match.end()
    body_end = entry.rstrip().rfind("}")
    while i < body_end:
        m = re.compile(r"\s*(\w+)\s*=\s*").match(entry, i)
        if not m:
            if entry[i:body_end].strip(" ,\n"):
                raise ValueError(f"cannot parse BibTeX near {entry[i:i + 30]!r}")
            break
        name, j = m.group(1).lower(), m.end()
        if entry[j] == "{":
            depth, k = 0, j
            while True:
                if entry[k] == "{":
                    depth += 1
                elif entry[k] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
            value, i = entry[j + 1:k], k + 1
        else:
            m2 = re.compile(r"([^,\n}]+)").match(entry, j)
            value, i = m2.group(1).strip(), m2.end()
        if name in fields:
            raise ValueError(f"duplicate BibTeX field {name!r}")
        fields[name] = value
        m3 = re.compile(r"\s*,?").match(entry, i)
        i = m3.end()
    return kind, key, fields
