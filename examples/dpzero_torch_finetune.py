"""dpzero §5 (private fine-tuning without backpropagation) at CPU scale: a small transformer pre-trained on PUBLIC
data, then fine-tuned on PRIVATE data with DPZero (dpzero Algorithm 2, ``reference.torch_backend.dpzero.dpzero``),
beside MeZO (Malladi et al. 2023, the same loop without noise: not private) and beside no fine-tuning.

The story of the paper's experiments, shrunk: a pre-trained model, a private labelled set of the target domain, a
forward-pass-only optimiser, a privacy budget ε = 2 at δ = 1e-5, and the accuracy on a public test set.

Data (generated; ``make_reviews``). "Reviews" of ``LENGTH`` tokens from a vocabulary of ``VOCAB`` ids: ids 8..19 are
positive words, 20..31 negative words, 32..VOCAB−1 neutral words (ids 0..7 are never used). A review draws k+ ~
Unif{0..5} positive and k− ~ Unif({0..5} \\ {k+}) negative words at random positions among uniform neutral words;
its label is 1 iff k+ > k−, flipped with probability ``LABEL_NOISE`` (so the best accuracy is 1 − LABEL_NOISE).
Two domains share this rule: in the PUBLIC pre-training domain a review is just that; in the TARGET domain (the
private training set and the public test set) every review also carries ``BOILERPLATE`` extra negative words (a
support-forum template: "problem", "issue", ...) that do not change its label. A model that counts sentiment words
as the public domain taught it is biased towards "negative" in the target domain; fine-tuning on target-domain data
re-calibrates it.

* public pre-training set: ``PUBLIC_RECORDS`` reviews of the public domain (labels known, not private);
* private training set: ``PRIVATE_RECORDS`` reviews of the target domain — the only data the privacy plan covers;
* public test set: ``TEST_RECORDS`` held-out reviews of the target domain (a published benchmark split, say).

Model (``TinyEncoder``, random initialisation, no downloaded weights): token embedding + learned positional embedding,
``LAYERS`` pre-norm encoder blocks (multi-head self-attention written with ``nn.Linear`` and
``scaled_dot_product_attention``, GELU feed-forward), final LayerNorm, mean pooling, linear head to 2 classes.
Pre-training: Adam (lr 1e-3, batches of 64) for ``--pretrain-steps`` steps on the public set (non-private).

Fine-tuning. A zeroth-order step size must shrink like 1/d in d dimensions unless the problem has a low effective
rank r (dpzero Assumption 3.5: Theorem 3's step size is 1/(4ℓ(r+2))), which is why the paper fine-tunes pre-trained
models. Here the trainable parameters are a BitFit-like subset (Ben Zaken, Ravfogel, Goldberg, ACL 2022):
every bias, every LayerNorm and the classification head; the other tensors get requires_grad=False, so DPZero
neither perturbs nor updates them: d = 1,666 of the model's 85,634 parameters.
DPZero: Poisson batches of expected size ``BATCH`` (q = BATCH / PRIVATE_RECORDS), sphere directions, perturbation
λ = 1e-3, clipping C = 1 of the normalised difference, the plan's accountant (Poisson-subsampled RDP; with
``--batching full``, the whole private set each step and exact Gaussian-DP composition) calibrated to
ε = ``--epsilon``, δ = 1e-5 for ``--steps`` steps; the ε the plan certifies (``result.ledger.plan``) is printed.
MeZO: the same steps, step size, batches, perturbation, sphere directions and clipping, without the noise (so the
gap between the two curves is the cost of privacy; MeZO as published draws Gaussian directions and does not clip:
here, at step size 0.1, that collapsed to predicting one class).

What is printed and plotted reads PUBLIC data only. The accuracy curves come from the ``trace`` argument of the
backend, evaluated every ``--eval-every`` steps on the public test set (the trace function never sees the private
set; on the other steps it returns 0 and the value is not used). Nothing computed on the private set (loss,
accuracy, clip counts: ``result.diagnostics``) is printed or written. One DPZero run: the step index t of the
direction keys runs over 0..T−1 once (one call, never chunks of calls).

Seeds: the data and the model's initialisation come from fixed public seeds (``DATA_SEED``, ``MODEL_SEED``); the
directions from ``DIRECTION_SEED`` (public, as in the paper's seed trick); DPZero's noise and batch coins from fresh
operating-system entropy (the library's default: a private run), so its curve varies a little between runs; MeZO
(non-private) draws its batch coins from the public seed.

At the defaults (one run): public test accuracy 0.689 pre-trained, 0.870 after 200 DPZero steps at ε = 2 (the plan
certifies 2.0000 at δ = 1e-5; most of the gain comes in the first 30 steps), 0.866 with MeZO; the gap to the best
possible 0.95 is what the biases, LayerNorms and head can re-calibrate, the private and the non-private curves being
equal within a point. Runtime: 1 to 3 minutes on 2 shared cores (57 s on a lightly loaded machine), of which about
20 s is the Poisson plan's RDP calibration.

    PYTHONPATH=. python examples/dpzero_torch_finetune.py --out DIR [--overwrite] [--steps 200] [--epsilon 2]
        [--pretrain-steps 300] [--eval-every 10] [--batching poisson|full] [--private-records 2000]
        [--threads 1] [--quiet]

writes ``dpzero_torch_finetune.png`` (test accuracy against steps) and ``dpzero_torch_finetune.csv`` (step, method,
public test accuracy, ε) into DIR; an existing file of those names is refused without --overwrite (checked before
computing). The documentation's figure: ``--out docs/img --overwrite``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

try:
    import reference  # noqa: F401
except ImportError:  # run as a script from a checkout: put the project root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpref.parsing import OneLineParser, integer  # noqa: E402
from reference.progress import progress_bar  # noqa: E402
from reference.reporting import prepare_output_dir  # noqa: E402
from reference.rng import Streams  # noqa: E402
from reference.torch_backend.dpzero import dpzero, mezo  # noqa: E402

PROG = "dpzero_torch_finetune.py"
VOCAB, LENGTH = 256, 32
POSITIVE, NEGATIVE, NEUTRAL_START = np.arange(8, 20), np.arange(20, 32), 32
MAX_SENTIMENT = 5  # k+, k− in {0..5}
BOILERPLATE = 2  # extra negative words per target-domain review
LABEL_NOISE = 0.05
PUBLIC_RECORDS, PRIVATE_RECORDS, TEST_RECORDS = 4000, 2000, 1000
WIDTH, HEADS, FFN, LAYERS = 64, 4, 128, 2
PRETRAIN_BATCH, PRETRAIN_LR = 64, 1e-3
BATCH = 256  # expected Poisson batch of the fine-tuning
STEP_SIZE, PERTURBATION, CLIP = 0.05, 1e-3, 1.0
DELTA = 1e-5
DATA_SEED, MODEL_SEED, DIRECTION_SEED = 20240517, 20240518, 20240519  # public
FILES = ("dpzero_torch_finetune.png", "dpzero_torch_finetune.csv")


# ---- data ---------------------------------------------------------------------------------------------------------

def make_reviews(n: int, rng: np.random.Generator, *, boilerplate: int) -> tuple[torch.Tensor, torch.Tensor]:
    """n generated reviews (module doc, "Data"): token ids (n, LENGTH) int64 and labels (n,) int64 in {0, 1}.

    boilerplate: extra negative words per review (0 in the public domain, ``BOILERPLATE`` in the target domain)."""
    tokens = rng.integers(NEUTRAL_START, VOCAB, size=(n, LENGTH))
    k_pos = rng.integers(0, MAX_SENTIMENT + 1, size=n)
    k_neg = (k_pos + rng.integers(1, MAX_SENTIMENT + 1, size=n)) % (MAX_SENTIMENT + 1)  # uniform on {0..5} \ {k+}
    labels = (k_pos > k_neg).astype(np.int64)
    for i in range(n):
        slots = rng.permutation(LENGTH)[:k_pos[i] + k_neg[i] + boilerplate]
        tokens[i, slots[:k_pos[i]]] = rng.choice(POSITIVE, k_pos[i])
        tokens[i, slots[k_pos[i]:]] = rng.choice(NEGATIVE, k_neg[i] + boilerplate)
    flip = rng.random(n) < LABEL_NOISE
    labels[flip] = 1 - labels[flip]
    return torch.from_numpy(tokens), torch.from_numpy(labels)


def make_datasets(private_records: int = PRIVATE_RECORDS):
    """(public pre-training set, private training set, public test set), each (tokens, labels), from DATA_SEED."""
    streams = Streams(DATA_SEED)
    public = make_reviews(PUBLIC_RECORDS, streams.generator("reviews", "public"), boilerplate=0)
    private = make_reviews(private_records, streams.generator("reviews", "private"), boilerplate=BOILERPLATE)
    test = make_reviews(TEST_RECORDS, streams.generator("reviews", "test"), boilerplate=BOILERPLATE)
    return public, private, test


# ---- model --------------------------------------------------------------------------------------------------------

class EncoderBlock(nn.Module):
    """Pre-norm transformer block: x + Attn(LN(x)), then x + FFN(LN(x)); attention from nn.Linear layers (so that
    Opacus' per-sample gradients support it, see benchmarks/bench_torch_memory.py)."""

    def __init__(self, width: int, heads: int, ffn: int):
        super().__init__()
        if width % heads:
            raise ValueError(f"width ({width}) must be a multiple of heads ({heads})")
        self.heads = heads
        self.norm1, self.qkv, self.proj = nn.LayerNorm(width), nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.norm2, self.fc1, self.fc2 = nn.LayerNorm(width), nn.Linear(width, ffn), nn.Linear(ffn, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, length, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, length, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
        attended = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, length, width)
        x = x + self.proj(attended)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class TinyEncoder(nn.Module):
    """Token + positional embeddings, ``layers`` encoder blocks, final LayerNorm, mean pooling, linear head."""

    def __init__(self, vocab: int, length: int, width: int, heads: int, ffn: int, layers: int, classes: int = 2):
        super().__init__()
        self.tokens, self.positions = nn.Embedding(vocab, width), nn.Embedding(length, width)
        self.blocks = nn.ModuleList(EncoderBlock(width, heads, ffn) for _ in range(layers))
        self.norm, self.head = nn.LayerNorm(width), nn.Linear(width, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        # positions as a (b, length) index: Opacus' per-sample gradients need the batch dimension first
        positions = torch.arange(tokens.shape[1], device=tokens.device).expand(tokens.shape[0], -1)
        hidden = self.tokens(tokens) + self.positions(positions)
        for block in self.blocks:
            hidden = block(hidden)
        return self.head(self.norm(hidden).mean(dim=1))


def build_model() -> TinyEncoder:
    torch.manual_seed(MODEL_SEED)  # the public initialisation (torch's global generator is only used here)
    return TinyEncoder(VOCAB, LENGTH, WIDTH, HEADS, FFN, LAYERS)


def per_example_loss(model: nn.Module, batch) -> torch.Tensor:
    """Cross-entropy of each review of the batch, shape (b,): the f(θ; ξ_i) of dpzero Algorithm 2."""
    tokens, labels = batch
    return F.cross_entropy(model(tokens), labels, reduction="none")


def accuracy(model: nn.Module, data) -> float:
    tokens, labels = data
    with torch.no_grad():
        return float((model(tokens).argmax(dim=1) == labels).double().mean())


# ---- the three stages ---------------------------------------------------------------------------------------------

def pretrain(model: nn.Module, public, steps: int, progress) -> None:
    """Non-private Adam on the PUBLIC pre-training set (batches drawn from a public stream)."""
    rng = Streams(DATA_SEED).generator("pretrain", "batches")
    optimiser = torch.optim.Adam(model.parameters(), lr=PRETRAIN_LR)
    tokens, labels = public
    for _ in range(steps):
        index = torch.from_numpy(rng.integers(0, tokens.shape[0], size=PRETRAIN_BATCH))
        loss = F.cross_entropy(model(tokens[index]), labels[index])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        progress()


def fine_tune_subset(model: nn.Module) -> int:
    """Freeze all but the biases, the LayerNorms and the head (module doc, "Fine-tuning"); returns d."""
    for name, parameter in model.named_parameters():
        module = name.rsplit(".", 1)[0]
        parameter.requires_grad_(name.endswith(".bias") or "norm" in module or module == "head")
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


class PublicTrace:
    """``trace`` for the backend: the accuracy on the PUBLIC test set at t = 0, every ``every`` steps and at T.

    The backend calls it once at t = 0 and after each step; it records (t, accuracy) for the evaluated steps and
    returns 0 elsewhere (the returned values are not used: ``records`` is the curve)."""

    def __init__(self, test, every: int, steps: int):
        self.test, self.every, self.steps = test, every, steps
        self.calls, self.records = 0, []

    def __call__(self, model: nn.Module) -> float:
        t, self.calls = self.calls, self.calls + 1
        if t % self.every and t != self.steps:
            return 0.0
        value = accuracy(model, self.test)
        self.records.append((t, value))
        return value


def fine_tune(method: str, model: nn.Module, private, test, *, steps: int, epsilon: float, every: int, batching: str,
              quiet: bool):
    """One DPZero or MeZO run on the private set; returns (curve records, ε spent or None)."""
    trace = PublicTrace(test, every, steps)
    bar = progress_bar(steps, method, "step", enabled=not quiet)
    common = dict(steps=steps, step_size=STEP_SIZE, perturbation=PERTURBATION, seed=DIRECTION_SEED,
                  batching=batching, batch_size=BATCH if batching == "poisson" else None, trace=trace,
                  progress=lambda t: bar.update())
    if method == "DPZero":
        result = dpzero(model, per_example_loss, private, clip_threshold=CLIP, epsilon=epsilon, delta=DELTA,
                        **common)
        spent = float(result.ledger.plan.epsilon_claimed)
    else:
        # the same directions and clipping as DPZero: the two runs differ by the noise only
        mezo(model, per_example_loss, private, direction="sphere", clip_threshold=CLIP, **common)
        spent = None
    bar.close()
    return trace.records, spent


# ---- output -------------------------------------------------------------------------------------------------------

def write_csv(path: Path, rows: list[dict]) -> None:
    import csv

    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def plot(path: Path, curves: dict, epsilon_spent: float, d: int, total: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    styles = {"DPZero": ("tab:red", f"DPZero (ε = {epsilon_spent:.2f}, δ = {DELTA:g})"),
              "MeZO": ("tab:blue", "MeZO (non-private)"), "no fine-tuning": ("0.4", "no fine-tuning (pre-trained)")}
    for method, records in curves.items():
        colour, label = styles[method]
        steps, values = zip(*records)
        ax.plot(steps, values, color=colour, label=label, marker="o" if len(steps) < 30 else None, ms=3,
                linestyle="--" if method == "no fine-tuning" else "-")
    ax.axhline(1 - LABEL_NOISE, color="0.7", lw=0.8, ls=":", label=f"best possible (label noise {LABEL_NOISE:g})")
    ax.set_xlabel("fine-tuning step t")
    ax.set_ylabel(f"accuracy on the public test set ({TEST_RECORDS} reviews)")
    ax.set_title(f"Private fine-tuning of a {total:,}-parameter transformer (d = {d} trainable)", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---- command line -------------------------------------------------------------------------------------------------

def parse(argv):
    parser = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, metavar="DIR", help="directory for the PNG and the CSV")
    parser.add_argument("--overwrite", action="store_true", help="replace existing output files")
    parser.add_argument("--steps", type=integer, default=200, help="fine-tuning steps T (default 200)")
    parser.add_argument("--epsilon", type=float, default=2.0, help="DPZero's ε at δ = 1e-5 (default 2)")
    parser.add_argument("--pretrain-steps", type=integer, default=300, help="public Adam steps (default 300)")
    parser.add_argument("--eval-every", type=integer, default=10, help="steps between test evaluations (default 10)")
    parser.add_argument("--private-records", type=integer, default=PRIVATE_RECORDS,
                        help=f"size of the private set (default {PRIVATE_RECORDS}; at least {BATCH})")
    parser.add_argument("--batching", choices=("poisson", "full"), default="poisson",
                        help=f"DPZero's and MeZO's batches: Poisson with expected size {BATCH} (default; the plan's "
                             "Poisson-subsampled RDP calibration takes about 20 s) or the full private set")
    parser.add_argument("--threads", type=integer, default=1, help="torch threads (default 1)")
    parser.add_argument("--quiet", "-q", "--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if not 1 <= args.steps <= 100_000:
        parser.error(f"--steps must lie in [1, 100000], got {args.steps}")
    if not 0 <= args.pretrain_steps <= 100_000:
        parser.error(f"--pretrain-steps must lie in [0, 100000], got {args.pretrain_steps}")
    if not 1 <= args.eval_every <= args.steps:
        parser.error(f"--eval-every must lie in [1, --steps = {args.steps}], got {args.eval_every}")
    if not (math.isfinite(args.epsilon) and 0 < args.epsilon <= 100):
        parser.error(f"--epsilon must lie in (0, 100], got {args.epsilon}")
    if not 1 <= args.threads <= 64:
        parser.error(f"--threads must lie in [1, 64], got {args.threads}")
    if not BATCH <= args.private_records <= 1_000_000:
        parser.error(f"--private-records must lie in [{BATCH}, 1000000], got {args.private_records}")
    return parser, args


def output_paths(parser, args) -> list[Path]:
    """Checked before computing: the directory can be written and no output file exists (unless --overwrite)."""
    try:
        out = prepare_output_dir(args.out, overwrite=True, option="--out")  # other files in DIR are left alone
    except ValueError as exc:
        parser.error(str(exc))
    paths = [out / name for name in FILES]
    existing = [p.name for p in paths if p.exists()]
    if existing and not args.overwrite:
        verb = "exists" if len(existing) == 1 else "exist"
        parser.error(f"--out {args.out!r}: {' and '.join(existing)} already {verb}; pass --overwrite to replace")
    return paths


def main(argv=None) -> int:
    parser, args = parse(argv)
    png, csv_path = output_paths(parser, args)
    torch.set_num_threads(args.threads)
    public, private, test = make_datasets(args.private_records)
    model = build_model()
    total = sum(p.numel() for p in model.parameters())
    bar = progress_bar(args.pretrain_steps, "public pre-training", "step", enabled=not args.quiet)
    pretrain(model, public, args.pretrain_steps, bar.update)
    bar.close()
    d = fine_tune_subset(model)
    pretrained = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    base = accuracy(model, test)
    curves = {"no fine-tuning": [(0, base), (args.steps, base)]}
    spent = None
    for method in ("DPZero", "MeZO"):
        model.load_state_dict(pretrained)  # both start from the same pre-trained model
        curves[method], epsilon_spent = fine_tune(
            method, model, private, test, steps=args.steps, epsilon=args.epsilon, every=args.eval_every,
            batching=args.batching, quiet=args.quiet)
        spent = epsilon_spent if method == "DPZero" else spent
    rows = [{"method": method, "step": t, "public_test_accuracy": round(value, 6),
             "epsilon": f"{spent:.6g}" if method == "DPZero" else ("inf" if method == "MeZO" else "0")}
            for method, records in curves.items() for t, value in records]
    write_csv(csv_path, rows)
    plot(png, curves, spent, d, total)
    print(f"model: {total:,} parameters, d = {d} fine-tuned (biases, LayerNorms, head); private set "
          f"{args.private_records} reviews, public test set {TEST_RECORDS}")
    print(f"public test accuracy: pre-trained {base:.3f}; after {args.steps} steps: DPZero "
          f"{curves['DPZero'][-1][1]:.3f}, MeZO (non-private) {curves['MeZO'][-1][1]:.3f}")
    batches = f"Poisson q = {BATCH / args.private_records:.4g}" if args.batching == "poisson" else "full batch"
    print(f"DPZero privacy: ε = {spent:.4f} at δ = {DELTA:g} (the plan's certified ε; target {args.epsilon:g}, "
          f"{batches}, {args.steps} steps)")
    # No run time is printed: under Poisson batches the time of the private run grows with the realised batch
    # sizes, which the plan does not cover (a timing channel; result.diagnostics holds them, never printed).
    print(f"wrote {png} and {csv_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
