"""Static listing of the built-in audit scenarios and planted bugs, for ``dpref audit list`` (docs/audits.md).

Building some scenarios is costly (``dpzero-full-run-poisson`` calibrates its noise in mpmath, ~4 s; the published
ones build a training split on first use), and importing the scenario modules pulls in SciPy and statsmodels. The
listing needs none of that: it shows what each scenario CLAIMS and the yardstick it knows, which are fixed by the
scenario's construction. So they are stored here as data, and this module imports nothing.

The values are the built scenarios' own (``Scenario.claim_type``, ``claimed_epsilon``, ``claimed_mu``,
``tight_epsilon``, ``description``), copied at full float precision. ``tests/test_audit_listing.py`` builds every
entry of ``empirical_dp.registry.SCENARIOS`` and ``empirical_dp.planted.PLANTED`` and checks that this table names
the same targets in the same order with the same values (floats to a relative 1e-9, text exactly), so a change to a
scenario that is not copied here fails the tests. An audit never reads this table: ``dpref audit run`` builds the
scenario and reports its computed values.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Entry", "CATALOGUE", "KINDS"]

#: The kinds of listed target.
KINDS = ("scenario", "planted bug")


class Entry(NamedTuple):
    """One listed target: its name, kind ("scenario" or "planted bug"), claim ("gdp" or "epsilon_delta", the
    claimed ε at the scenario's δ, the claimed μ or None), the true ε at δ when known (a yardstick, else None) and
    its one-line description."""

    name: str
    kind: str
    claim_type: str
    claimed_epsilon: float
    claimed_mu: float | None
    tight_epsilon: float | None
    description: str


#: Every built-in scenario (``registry.SCENARIOS`` order), then every planted bug (``planted.PLANTED`` order).
CATALOGUE: tuple[Entry, ...] = (
    Entry("gaussian", "scenario", "gdp", 1.0, 0.26805112321129426, 1.0,
          "Gaussian mechanism, Δ=1, σ=3.73063, k=1, μ=0.268051"),
    Entry("poisson_gaussian", "scenario", "epsilon_delta", 0.9555491477031695, None, 0.19945044779591473,
          "one Poisson-subsampled Gaussian step, q=0.01, σ=1"),
    Entry("tree", "scenario", "gdp", 1.0, 0.26805112321129426, 1.0,
          "tree aggregation, T=16 prefix sums, leaf 1 changed by 1, σ=8.34195, μ=0.268051"),
    Entry("zeroth_order", "scenario", "gdp", 1.0, 0.26805112321129426, 1.0,
          "one DPZero release, d=5, n=10, C=1, σ=0.746126, μ=0.268051"),
    Entry("dpzero-step", "scenario", "gdp", 1.0, 0.2680511232112942, 1.0,
          "DPZero, 1 step, full batch, n=100, d=2, C=1, σ=0.0746126 (gdp_exact), μ=0.268051; Lemma 2.2 "
          "would claim ε=2.68"),
    Entry("dpzero-full-run", "scenario", "gdp", 2.0, 0.5015516891696564, 1.9999999999999991,
          "DPZero, 100 steps, full batch, n=100, d=2, C=1, σ=0.398762 (gdp_exact), μ=0.501552; Lemma 2.2 "
          "would claim ε=5.144"),
    Entry("dpzero-full-run-poisson", "scenario", "epsilon_delta", 1.9999999999994964, None, 1.8148164550671377,
          "DPZero, 100 steps, Poisson q=0.1 (B=10), n=100, d=2, C=1, σ=0.24224 (z=2.4224), claimed by RDP; "
          "tight ε from PLD"),
    Entry("dpzero-published", "scenario", "epsilon_delta", 1.0, None, None,
          "DPZero publication (DPZero with default arguments, full batch, default publication), T=50, full "
          "batch, n=50, R=2; score: the training split's best feature"),
    Entry("zo_o2nc-epoch", "scenario", "gdp", 1.0, 0.26805112321129426, 1.0,
          "zo_o2nc Alg 3+4, 1 epoch, T=16, d=1, B1=8, B2=1, L=1, canary in leaf 1 (5 nodes), σ=2.08549, "
          "μ=0.268051; ledger ρ=0.268051 (its zCDP ε=1.092)"),
    Entry("zo_o2nc-full-run", "scenario", "gdp", 2.0, 0.5015516891696566, 2.0,
          "zo_o2nc Alg 3+4, 3 epochs (canary in epoch 2), T=16, d=1, B1=8, B2=1, L=1, canary in leaf 1 (5 nodes), "
          "σ=1.11458, μ=0.501552; ledger ρ=0.501552 (its zCDP ε=2.173)"),
    Entry("zo_o2nc-published", "scenario", "gdp", 1.0, 0.26805112321129426, None,
          "zo_o2nc publication (zo_o2nc with default arguments: fresh secret entropy, default backend, default "
          "publication), d=1, M=32 (T=5, K=3, B1=6), canary in leaf 1 of epoch 1 (3 nodes), σ=4.22073, releases' "
          "μ=0.06839, a fresh public seed per trial; ledger ρ=0.268051 (its ε=1.092); score: the training split's "
          "best feature"),
    Entry("nsnc_improved-single-pass", "scenario", "gdp", 2.9999999999999996, 0.7191174352217927, 2.9999999999999996,
          "nsnc_improved Alg 2+Alg 3, T=32 (2 periods of Σ=16), d=2, B1=1, B2=2, m=1, L=1, canary in the reset leaf of "
          "period 2, σ=12.4378, pair μ=0.719117; plan worst-case, μ=0.719117, δ_fail=0"),
    Entry("nsnc_improved-high-probability", "scenario", "epsilon_delta", 2.0, None, 0.8950766620588853,
          "nsnc_improved Alg 2+Alg 3, T=32 (2 periods of Σ=16), d=3, B1=1, B2=4, m=(400, 1), L=1, canary in the reset "
          "leaf of period 2, σ=18.7329, fresh directions per trial, ‖a‖≈1.002; plan high-probability, μ=0.493946, "
          "δ_fail=2.5e-06"),
    Entry("nsnc_improved-published", "scenario", "gdp", 0.9999999999999996, 0.23670438066343558, None,
          "nsnc_improved publication (nsnc_improved single-pass with default arguments: fresh secret entropy, default "
          "publication), d=1, M=32 (T=17, Σ=4, B1=4), canary in the reset leaf of period 1, σ=23.8984, releases' "
          "μ=0.01812, a fresh public seed per trial; plan worst-case, μ=0.236704, δ_fail=0; score: the training "
          "split's best feature"),
    Entry("nsnc_improved-published-theory-m", "scenario", "epsilon_delta", 0.9999999999999998, None, None,
          "nsnc_improved publication (nsnc_improved single-pass with the theory's directions (directions='theory'): "
          "the high-probability guarantee, directions from the secret seed), d=1, M=32 (T=17, Σ=4, B1=4), canary in "
          "the reset leaf of period 1, σ=12.3455, releases' μ=0.03507, a fresh public seed per trial; plan "
          "high-probability, μ=0.229087, δ_fail=5e-07; score: the training split's best feature"),
    Entry("spider-sosp-run", "scenario", "gdp", 2.9999999999999996, 0.7191174352217927, 2.9999999999999996,
          "spider_sosp Alg 2+3, T=Σ=16 (global tree), d=2, n=200000, b=10939, κ=1.2, canary in leaf 1 (step 0's O1 "
          "batch), restart at leaf 9 (7 nodes), σ=0.000672669, pair μ=0.719117; plan gdp_exact, μ=0.719117"),
    Entry("spider_sosp-published", "scenario", "gdp", 1.0000000000000004, 0.23670438066343572, None,
          "spider_sosp publication (spider_sosp with default arguments: fresh secret entropy, default publication), "
          "cosine, d=2, n=10000 (b=80, κ=1.356, ζ=3.657), canary in step 0's O1 batch, σ=0.912325, releases' "
          "μ≈0.01938, a fresh public seed per trial; plan gdp_exact, μ=0.236704; score: the training split's best "
          "feature"),
    Entry("bgm21-report-noisy-min", "scenario", "epsilon_delta", 2.0, None, 1.9986987716319011,
          "bgm21 Alg 1 line 6, one Laplace report-noisy-min step over the 8 vertices of the simplex, s=1, scores "
          "equal vs first raised by 2Δ_c, Δ_c=1; claimed 2Δ_c/s"),
    Entry("bgm21-poly-sfw-round", "scenario", "epsilon_delta", 1.178849166561357, None, 0.7341702287844368,
          "bgm21 Alg 1, R=2 (3 report-noisy-min steps), simplex J=8, b=16, n=40, linear loss L0=1, printed "
          "s_1=0.424134, canary first in B_1^0 (2 steps of ε_0=0.589437); claimed by certify_pure (kov_exact) at "
          "δ=1e-05"),
    Entry("bgm21-noisy-sfw-round", "scenario", "gdp", 2.560817063906146, 0.6251919974799154, 2.548198104410554,
          "bgm21 Alg 6, R=2, d=1 ℓ2 ball λ=0.5, b=64, n=160, L0=1, L1=2, σ̂ η=prev, canary first in B_1^1 "
          "(σ=0.141378, σ̂=0.282756), published μ=0.622458; trace μ=0.625192"),
    Entry("bgm21_nsfw-published", "scenario", "gdp", 0.7904464759856156, 0.1902398665508126, None,
          "bgm21 publication (Algorithm 6 (nsfw) with default arguments: fresh secret entropy, default "
          "publication), d=10, n=2048 (R=3, b=446), canary first in B_0^0, σ_00=0.0865732, pair μ=0.13452, a "
          "fresh public seed per trial; ledger μ=0.19024 (ε=0.790446), worst batch ('B', 1, 1); score: the "
          "training split's best feature"),
    Entry("bgm21_polysfw-published", "scenario", "epsilon_delta", 0.18401683845991945, None, None,
          "bgm21 publication (Algorithm 1 (polysfw) with default arguments: fresh secret entropy, default "
          "publication), d=10, n=2048 (R=3, b=446), canary first in B_0^0, s_0=0.0846492, pair ε=0.0557584, a "
          "fresh public seed per trial; ledger ε=0.184017 (pure:kov_exact), worst batch ('B', 2, 1); score: the"
          " training split's best feature"),
    Entry("opacus-dpsgd", "scenario", "epsilon_delta", 2.5338996043771402, None, 2.523722045197447,
          "Opacus DP-SGD, T=4, n=2, Poisson q=0.5 (make_private, poisson_sampling=True), σ=2, C=1, every update; "
          "claimed by Opacus PRV (RDP ε=2.81313, PRV ε=2.5339)"),
    Entry("opacus-dpsgd-final-model", "scenario", "epsilon_delta", 2.5338996043771402, None, 2.523722045197447,
          "Opacus DP-SGD, T=4, n=2, Poisson q=0.5 (make_private, poisson_sampling=True), σ=2, C=1, final model only; "
          "claimed by Opacus PRV (RDP ε=2.81313, PRV ε=2.5339)"),
    Entry("dpzero-torch-full-run", "scenario", "gdp", 2.0, 0.5015516891696564, 1.9999999999999991,
          "DPZero on torch (releases), 10 steps, full batch, n=100, d=2, C=1, σ=0.1261 (gdp_exact), μ=0.501552"),
    Entry("dpzero-torch-final-model", "scenario", "gdp", 2.0, 0.5015516891696564, 1.7872006472162656,
          "DPZero on torch (final model only), 10 steps, full batch, n=100, d=2, C=1, σ=0.1261 (gdp_exact), "
          "μ=0.501552; final model exactly μ=0.453408-GDP (ε=1.787)"),
    Entry("dpzero_torch-published", "scenario", "epsilon_delta", 1.0, None, None,
          "DPZero on torch, whole publication (default arguments: fresh OS entropy, default accountant), T=50, "
          "full batch, n=50, d=2; score: the training split's best feature"),
    Entry("noise_halved", "planted bug", "epsilon_delta", 1.0, None, 2.1546766576676992,
          "clipped mean, n=100, C=1, σ=0.0373063, μ=0.536102"),
    Entry("sensitivity_c_over_n", "planted bug", "epsilon_delta", 1.0, None, 2.1546766576676992,
          "clipped mean, n=100, C=1, σ=0.0373063, μ=0.536102"),
    Entry("poisson_accounted_shuffle_run", "planted bug", "epsilon_delta", 0.9555491477031695, None, 4.377178095681225,
          "fixed batch B=10 of n=1000 from a public shuffle, σ=1, claimed as Poisson q=0.01"),
    Entry("noise_from_direction_seed", "planted bug", "epsilon_delta", 1.0, None, None,
          "DPZero scalar, n=100, C=1, d=8, noise from the direction's stream"),
    Entry("noise_from_direction_seed_full_run", "planted bug", "gdp", 2.0, 0.5015516891696564, None,
          "whole DPZero run, T=100, n=100, full batch, noise z_t drawn from the direction generator after "
          "u_t (dpzero.E13)"),
    Entry("published-old-default-noise", "planted bug", "epsilon_delta", 1.0, None, None,
          "DPZero publication ((i) the noise drawn from the public seed's ('dpzero', 'noise') stream (the "
          "old default noise_seed = seed)), T=50, full batch, n=50, R=2; score: the training split's best "
          "feature"),
    Entry("published-overlapping-replicate-seeds", "planted bug", "epsilon_delta", 1.0, None, None,
          "DPZero publication ((ii) public replicate seeds S..S+R−1, secret seeds S+1..S+R), T=50, full "
          "batch, n=50, R=2; score: the training split's best feature"),
    Entry("published-secret-seed-in-manifest", "planted bug", "epsilon_delta", 1.0, None, None,
          "DPZero publication ((iii) user secret seeds written into manifest.json), T=50, full batch, "
          "n=50, R=2; score: the training split's best feature"),
    Entry("published-clip-counts", "planted bug", "epsilon_delta", 1.0, None, None,
          "DPZero publication ((iv) clip counts published (include_nonprivate=True)), T=50, full batch, "
          "n=50, R=2; score: the training split's best feature"),
    Entry("published-poisson-counts", "planted bug", "epsilon_delta", 1.0, None, None,
          "DPZero publication ((v) Poisson batch sizes and evaluation counts published (the old ledger's "
          "per-replicate fields, the old summary's total)), T=400, Poisson q=0.5, B=5, n=10 vs 11, R=2; "
          "score: the training split's best feature"),
    Entry("published-training-diagnostics", "planted bug", "epsilon_delta", 1.0, None, None,
          "DPZero publication ((vi) the per-step diagnostics computed on the TRAINING data), T=50, full "
          "batch, n=50, R=2; score: the training split's best feature"),
    Entry("published-nonfinite-abort", "planted bug", "epsilon_delta", 1.0, None, None,
          "DPZero publication ((vii) a non-finite loss on one record aborts the run; only error.txt is "
          "published), T=50, full batch, n=50, R=2; score: the training split's best feature"),
    Entry("zo_o2nc-noise-halved-sensitivity", "planted bug", "gdp", 1.0, 0.26805112321129426, 2.1546766576676992,
          "zo_o2nc Alg 3+4, 1 epoch, T=16, d=1, B1=8, B2=1, L=1, canary in leaf 1 (5 nodes) [planted: σ for half "
          "the sensitivity], σ=1.04274, μ=0.536102; ledger ρ=0.268051 (its zCDP ε=1.092)"),
    Entry("zo_o2nc-nodes-renoised", "planted bug", "gdp", 1.0, 0.26805112321129426, 1.4310758452841763,
          "zo_o2nc Alg 3+4, 1 epoch, T=16, d=1, B1=8, B2=1, L=1, canary in leaf 1 (5 nodes) [planted: nodes "
          "re-noised at every release], σ=2.08549, μ=0.3711; ledger ρ=0.268051 (its zCDP ε=1.092)"),
    Entry("zo_o2nc-published-public-seed-noise", "planted bug", "gdp", 1.0, 0.26805112321129426, None,
          "zo_o2nc publication ((i) the secret seed derived from the public seed, noise_seed = seed + 1), d=1, M=32 "
          "(T=5, K=3, B1=6), canary in leaf 1 of epoch 1 (3 nodes), σ=4.22073, releases' μ=0.06839, a fresh public "
          "seed per trial; ledger ρ=0.268051 (its ε=1.092); score: the training split's best feature"),
    Entry("zo_o2nc-published-training-diagnostics", "planted bug", "gdp", 1.0, 0.26805112321129426, None,
          "zo_o2nc publication ((ii) the NOT PRIVATE training diagnostics published (include_nonprivate=True)), "
          "d=1, M=32 (T=5, K=3, B1=6), canary in leaf 1 of epoch 1 (3 nodes), σ=4.22073, releases' μ=0.06839, a "
          "fresh public seed per trial; ledger ρ=0.268051 (its ε=1.092); score: the training split's best feature"),
    Entry("nsnc_improved-fo-reset-halved", "planted bug", "gdp", 2.0, 0.5015516891696565, 4.392910874934877,
          "nsnc_improved Alg 2+Alg 5, T=32 (2 periods of Σ=16), d=2, B1=1, B2=4, m=1, L=1, canary in the reset leaf of "
          "period 2, σ=4.4583, pair μ=1.0031; [planted: σ for Lemma C.1's printed L/B1, claimed μ=0.501552]"),
    Entry("nsnc_improved-published-nonprivate", "planted bug", "gdp", 0.9999999999999996, 0.23670438066343558, None,
          "nsnc_improved publication (the NOT PRIVATE training diagnostics published (include_nonprivate=True)), d=1, "
          "M=32 (T=17, Σ=4, B1=4), canary in the reset leaf of period 1, σ=23.8984, releases' μ=0.01812, a fresh "
          "public seed per trial; plan worst-case, μ=0.236704, δ_fail=0; score: the training split's best feature"),
    Entry("spider-sosp-printed-noise", "planted bug", "epsilon_delta", 1.0, None, 5.379613229948038,
          "spider_sosp Alg 2+3, T=Σ=3 (global tree), d=16, n=20000, b=87, κ=1.2, canary in leaf 1 (step 0's O1 "
          "batch), restart at leaf 3 (3 nodes), σ=0.033359, pair μ=1.1936; [planted: σ=α/√d (Theorem 3.11 as "
          "printed), claimed (ε, δ)=(1, 1e-05)]"),
    Entry("spider_sosp-published-nonprivate", "planted bug", "gdp", 1.0000000000000004, 0.23670438066343572, None,
          "spider_sosp publication (the NOT PRIVATE training diagnostics published (include_nonprivate=True)), "
          "cosine, d=2, n=10000 (b=80, κ=1.356, ζ=3.657), canary in step 0's O1 batch, σ=0.912325, releases' "
          "μ≈0.01938, a fresh public seed per trial; plan gdp_exact, μ=0.236704; score: the training split's best "
          "feature"),
    Entry("bgm21-noisy-sfw-printed-sigma-hat", "planted bug", "epsilon_delta", 5.0, None, 5.910457973561357,
          "bgm21 Alg 6, R=2, d=1 ℓ2 ball λ=0.5, b=64, n=160, L0=1, L1=2, σ̂ η=printed, canary first in B_1^1 "
          "(σ=0.0379357, σ̂=0.0536492), published μ=2.59925; [planted: σ̂ with η_(r,t) (§4.2 as printed, "
          "bgm21.E10), claimed (ε, δ)=(5, 0.1)]"),
    Entry("bgm21_nsfw-published-public-seed-noise", "planted bug", "gdp", 0.7904464759856156, 0.1902398665508126, None,
          "bgm21 publication (Algorithm 6 (nsfw) with the secret seed computed from the public seed (noise_seed"
          " = seed + 1)), d=10, n=2048 (R=3, b=446), canary first in B_0^0, σ_00=0.0865732, pair μ=0.13452, a "
          "fresh public seed per trial; ledger μ=0.19024 (ε=0.790446), worst batch ('B', 1, 1); score: the "
          "training split's best feature"),
    Entry("opacus-fixed-order-loader", "planted bug", "epsilon_delta", 0.7281339329831141, None, 4.377178095681225,
          "Opacus DP-SGD, T=100, n=100, fixed-order batches b=1 (poisson_sampling=False, canary in batch 1), true "
          "μ=1, σ=1, C=1, every update; claimed by Opacus PRV (RDP ε=1.21415, PRV ε=0.728134)"),
    Entry("dpzero-torch-seed-leak", "planted bug", "gdp", 2.0, 0.5015516891696564, None,
          "DPZero on torch (noise_seed = public seed + 1), 10 steps, full batch, n=100, d=2, C=1, σ=0.1261 "
          "(gdp_exact), μ=0.501552"),
    Entry("dpzero_torch-published-seed-leak", "planted bug", "epsilon_delta", 1.0, None, None,
          "DPZero on torch, whole publication (noise_seed = public seed + 1 (derivable from a public value)), "
          "T=50, full batch, n=50, d=2; score: the training split's best feature"),
)
