"""Character-level language modelling with Gated-Feedback RNNs.

Reproduces the language-modelling comparison of Chung et al. (2015) on a text
we can have (Tiny Shakespeare): at matched parameter counts, train

- `single`: one `keras.layers.LSTM` (`GRU`, `SimpleRNN` for `--cell gru`,
  `simple`) layer,
- `stacked`: `kr.layers.GatedFeedbackRNN(feedback="none")`, a plain stack of
  `--layers` layers,
- `gf_fixed`: the GF-RNN with every global reset gate fixed to 1 (the
  paper's ablation),
- `gf_gated`: the GF-RNN (the paper's model),

each as `Embedding -> recurrent layer (return_sequences) -> Dense(vocab)`,
on the same split and the same training windows, and print validation and
test bits per character (BPC) and the parameter counts as a table.

Data: `--text-file PATH` (default: `../shared/data/tinyshakespeare.txt` next
to the repository) or `--tfds tiny_shakespeare` (needs
`tensorflow_datasets`). The vocabulary is the set of characters of the whole
text; the text is split by position into 90% train, 5% validation, 5% test.
Training uses windows of `--seq-len` characters (random start positions, or
non-overlapping consecutive windows with a random offset per epoch); the
validation and test BPC cover every character of their split (after its
first) with consecutive windows of the same length, each starting from a zero
state: BPC = mean cross-entropy in nats / ln 2.

Matched parameters: with `--params N` (the default) each model's width is
found by a search on the actual `model.count_params()`, the width whose count
is nearest to `N` (within 1-2% for budgets of a few 10k parameters and up).

The table's time is the training wall time, with the per-epoch validation.
Each model keeps the weights of its best validation epoch for the test BPC;
the learning rate is multiplied by `--lr-decay` after an epoch that did not
improve the validation BPC.

Runs on any Keras backend (numpy arrays into `fit`/`predict`; TensorFlow is
not needed with `KERAS_BACKEND=torch` or `jax`).

Usage:

    python examples/char_lm.py                       # LSTM, all four models
    python examples/char_lm.py --cell gru --params 500000 --epochs 10
    python examples/char_lm.py --models gf_gated --json-out gf_gated.json
    python examples/char_lm.py --combine single.json stacked.json ...
    python examples/char_lm.py --smoke               # seconds, for tests

Reference: Chung et al., 2015. Gated Feedback Recurrent Neural Networks.
https://arxiv.org/abs/1502.02367
"""

import argparse
import json
import math
import sys
import time
from pathlib import Path

from _quiet_tensorflow import quiet_tensorflow

quiet_tensorflow()

import keras  # noqa: E402
import numpy as np  # noqa: E402

try:
    import keras_recurrent as kr
except ModuleNotFoundError:  # run from a clone without installing it
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import keras_recurrent as kr

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TEXT_FILE = REPO_ROOT.parent / "shared" / "data" / "tinyshakespeare.txt"
MODEL_KINDS = ("single", "stacked", "gf_fixed", "gf_gated")
FEEDBACK = {"stacked": "none", "gf_fixed": "fixed", "gf_gated": "gated"}
SPLIT_FRACTIONS = (0.9, 0.05, 0.05)
SMOKE = {
    "max_chars": 20_000,
    "params": 6_000,
    "seq_len": 32,
    "batch_size": 32,
    "epochs": 2,
    "steps_per_epoch": 15,
    "learning_rate": 1e-2,
    "embed_dim": 16,
    "sample": 40,
}


# ----------------------------------------------------------------- data


def load_text(text_file=None, tfds_name=None, data_dir=None):
    """The corpus as one string, from a file or a TFDS dataset."""
    if tfds_name is not None:
        try:
            import tensorflow_datasets as tfds
        except ImportError as error:
            raise SystemExit(
                f"--tfds {tfds_name} needs tensorflow_datasets, which is not "
                "installed; use --text-file PATH instead."
            ) from error
        try:
            splits = tfds.load(tfds_name, data_dir=data_dir)
        except Exception as error:  # not built and no network, ...
            raise SystemExit(
                f"Could not load the TFDS dataset {tfds_name!r} ({error}); "
                "use --text-file PATH instead."
            ) from error
        pieces = []
        for split in ("train", "validation", "test"):
            if split in splits:
                for example in tfds.as_numpy(splits[split]):
                    pieces.append(example["text"].decode("utf-8"))
        return "".join(pieces)
    path = Path(text_file) if text_file is not None else DEFAULT_TEXT_FILE
    if not path.is_file():
        raise SystemExit(
            f"Text file not found: {path}. Pass --text-file PATH (e.g. Tiny "
            "Shakespeare, https://raw.githubusercontent.com/karpathy/"
            "char-rnn/master/data/tinyshakespeare/input.txt) or "
            "--tfds tiny_shakespeare."
        )
    return path.read_text(encoding="utf-8")


def build_vocabulary(text):
    """Sorted list of the distinct characters of `text`."""
    return sorted(set(text))


def encode(text, vocabulary):
    """`text` as an int32 array of indices into `vocabulary`."""
    index = {char: i for i, char in enumerate(vocabulary)}
    return np.array([index[char] for char in text], dtype="int32")


def split_ids(ids, fractions=SPLIT_FRACTIONS):
    """Splits `ids` by position into consecutive train/valid/test parts."""
    if len(fractions) != 3 or not math.isclose(sum(fractions), 1.0):
        raise ValueError(
            "Argument `fractions` must be three fractions summing to 1. "
            f"Received: fractions={fractions!r}"
        )
    n = len(ids)
    train_end = int(round(fractions[0] * n))
    valid_end = int(round((fractions[0] + fractions[1]) * n))
    return ids[:train_end], ids[train_end:valid_end], ids[valid_end:]


def random_windows(ids, seq_len, num_windows, rng):
    """`num_windows` windows at random starts: inputs and next characters.

    Returns `(x, y)`, both `(num_windows, seq_len)` int32, with
    `x[k] = ids[s:s + seq_len]` and `y[k] = ids[s + 1:s + seq_len + 1]`.
    """
    if len(ids) < seq_len + 1:
        raise ValueError(
            f"Argument `seq_len` must be below the split length {len(ids)}. "
            f"Received: seq_len={seq_len}"
        )
    starts = rng.integers(0, len(ids) - seq_len, size=num_windows)
    offsets = np.arange(seq_len)
    x = ids[starts[:, None] + offsets]
    y = ids[starts[:, None] + offsets + 1]
    return x, y


def consecutive_windows(ids, seq_len, offset=0):
    """Non-overlapping windows tiling `ids[offset:]`, and the leftover.

    Returns `(x, y, tail)`: `x`, `y` as in `random_windows` for the starts
    `offset, offset + seq_len, ...` that fit, and `tail = (x_tail, y_tail)`,
    1D arrays of the last, shorter window (`None` if nothing is left). From
    `offset = 0`, the targets of `x`, `y` and the tail are `ids[1:]`, each
    character exactly once.
    """
    usable = len(ids) - 1 - offset
    if usable < 1:
        raise ValueError(
            f"Argument `ids` is too short ({len(ids)}) for offset={offset}."
        )
    num = usable // seq_len
    end = offset + num * seq_len
    x = ids[offset:end].reshape(num, seq_len)
    y = ids[offset + 1 : end + 1].reshape(num, seq_len)
    tail = None
    if end < len(ids) - 1:
        tail = (ids[end:-1], ids[end + 1 :])
    return x, y, tail


def training_windows(ids, seq_len, mode, rng):
    """One epoch of training windows, about `len(ids) / seq_len` of them."""
    if mode == "random":
        return random_windows(ids, seq_len, (len(ids) - 1) // seq_len, rng)
    if mode == "consecutive":
        offset = int(rng.integers(0, seq_len))
        x, y, _ = consecutive_windows(ids, seq_len, offset)
        order = rng.permutation(len(x))
        return x[order], y[order]
    raise ValueError(
        "Argument `windows` must be 'random' or 'consecutive'. "
        f"Received: windows={mode!r}"
    )


# ----------------------------------------------------------------- BPC


def bits_per_char(logits, targets):
    """Mean cross-entropy of `targets` under softmax(`logits`), in bits.

    Args:
        logits: Float array `(..., vocab)`.
        targets: Int array of the leading shape of `logits`.

    Returns:
        A Python float: `mean(logsumexp(logits) - logits[target]) / ln 2`.
    """
    logits = np.asarray(logits, dtype="float64")
    targets = np.asarray(targets)
    peak = logits.max(axis=-1, keepdims=True)
    log_norm = np.log(np.exp(logits - peak).sum(axis=-1)) + peak[..., 0]
    picked = np.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    return float(np.mean(log_norm - picked) / math.log(2.0))


def evaluate_bpc(model, ids, seq_len, batch_size):
    """BPC of `model` over all of `ids`, in consecutive windows."""
    x, y, tail = consecutive_windows(ids, seq_len)
    total, count = 0.0, 0
    if len(x):
        logits = model.predict(x, batch_size=batch_size, verbose=0)
        total += bits_per_char(logits, y) * y.size
        count += y.size
    if tail is not None:
        logits = model.predict(tail[0][None], verbose=0)
        total += bits_per_char(logits[0], tail[1]) * tail[1].size
        count += tail[1].size
    return total / count


# ----------------------------------------------------------------- models


def build_model(
    kind,
    vocab_size,
    units,
    cell="lstm",
    num_layers=3,
    embed_dim=64,
    output_mode="top",
    stateful=False,
):
    """`Embedding -> recurrent layer(s) -> Dense(vocab_size)` (logits)."""
    if kind not in MODEL_KINDS:
        raise ValueError(
            f"Argument `kind` must be one of {list(MODEL_KINDS)}. "
            f"Received: kind={kind!r}"
        )
    batch_size = 1 if stateful else None
    inputs = keras.Input((None,), batch_size=batch_size, dtype="int32")
    x = keras.layers.Embedding(vocab_size, embed_dim, name="embedding")(inputs)
    if kind == "single":
        layer_class = {
            "lstm": keras.layers.LSTM,
            "gru": keras.layers.GRU,
            "simple": keras.layers.SimpleRNN,
        }[cell]
        rnn = layer_class(
            units, return_sequences=True, stateful=stateful, name="rnn"
        )
    else:
        rnn = kr.layers.GatedFeedbackRNN(
            units,
            num_layers=num_layers,
            cell_type=cell,
            feedback=FEEDBACK[kind],
            output_mode=output_mode,
            return_sequences=True,
            stateful=stateful,
            name="rnn",
        )
    x = rnn(x)
    outputs = keras.layers.Dense(vocab_size, name="logits")(x)
    return keras.Model(inputs, outputs, name=kind)


def count_params(kind, vocab_size, units, **model_kwargs):
    """`count_params()` of the model `build_model` makes."""
    model = build_model(kind, vocab_size, units, **model_kwargs)
    count = model.count_params()
    del model
    keras.backend.clear_session(free_memory=False)
    return count


def match_width(kind, vocab_size, budget, max_units=8192, **model_kwargs):
    """Width whose model's parameter count is nearest to `budget`.

    Bisects the width on the actual `model.count_params()` (which grows with
    the width). Returns `(width, params)`.
    """
    cache = {}

    def params(width):
        if width not in cache:
            cache[width] = count_params(kind, vocab_size, width, **model_kwargs)
        return cache[width]

    low, high = 1, 2
    if params(low) >= budget:
        return low, params(low)
    while params(high) < budget:  # doubling: never builds a huge model
        if high >= max_units:
            return high, params(high)
        low, high = high, min(2 * high, max_units)
    while high - low > 1:  # params(low) < budget <= params(high)
        middle = (low + high) // 2
        if params(middle) < budget:
            low = middle
        else:
            high = middle
    best = min((low, high), key=lambda w: (abs(params(w) - budget), w))
    return best, params(best)


# ----------------------------------------------------------------- training


def set_learning_rate(optimizer, value):
    optimizer.learning_rate.assign(value)


def train_and_evaluate(kind, width, data, args, log=print):
    """Trains one model; returns a dict of its figures (and the model)."""
    train_ids, valid_ids, test_ids = data["splits"]
    keras.utils.set_random_seed(args.seed)
    model = build_model(
        kind,
        data["vocab_size"],
        width,
        cell=args.cell,
        num_layers=args.layers,
        embed_dim=args.embed_dim,
        output_mode=args.output_mode,
    )
    optimizer = keras.optimizers.Adam(
        learning_rate=args.learning_rate, global_clipnorm=args.clipnorm
    )
    model.compile(
        optimizer=optimizer,
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=args.jit_compile,
    )
    rng = np.random.default_rng(args.seed)  # the same windows for every model
    learning_rate = args.learning_rate
    history = {"train_bpc": [], "valid_bpc": [], "learning_rate": []}
    best = (math.inf, None, 0)
    initial_valid = evaluate_bpc(
        model, valid_ids, args.seq_len, args.batch_size
    )
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        x, y = training_windows(train_ids, args.seq_len, args.windows, rng)
        steps = len(x) // args.batch_size
        if args.steps_per_epoch:
            steps = min(steps, args.steps_per_epoch)
        steps = max(steps, 1)
        x, y = x[: steps * args.batch_size], y[: steps * args.batch_size]
        fit = model.fit(
            x,
            y,
            batch_size=args.batch_size,
            epochs=1,
            shuffle=False,
            verbose=args.verbose,
        )
        train_bpc = fit.history["loss"][-1] / math.log(2.0)
        valid_bpc = evaluate_bpc(
            model, valid_ids, args.seq_len, args.batch_size
        )
        history["train_bpc"].append(train_bpc)
        history["valid_bpc"].append(valid_bpc)
        history["learning_rate"].append(learning_rate)
        log(
            f"  {kind} epoch {epoch}/{args.epochs}: train BPC "
            f"{train_bpc:.4f}, valid BPC {valid_bpc:.4f} "
            f"({time.perf_counter() - start:.0f} s)"
        )
        if valid_bpc < best[0]:
            best = (valid_bpc, model.get_weights(), epoch)
        elif args.lr_decay < 1.0:
            learning_rate *= args.lr_decay
            set_learning_rate(optimizer, learning_rate)
    train_seconds = time.perf_counter() - start
    model.set_weights(best[1])
    test_bpc = evaluate_bpc(model, test_ids, args.seq_len, args.batch_size)
    result = {
        "model": kind,
        "cell": args.cell,
        "layers": 1 if kind == "single" else args.layers,
        "width": int(width),
        "params": int(model.count_params()),
        "initial_valid_bpc": initial_valid,
        "valid_bpc": best[0],
        "test_bpc": test_bpc,
        "best_epoch": best[2],
        "epochs": args.epochs,
        "train_seconds": train_seconds,
        "history": history,
    }
    return result, model


# ----------------------------------------------------------------- sampling


def _reset_rnn_states(model):
    for layer in model.layers:
        if getattr(layer, "stateful", False):
            layer.reset_state()


def generate(kind, width, weights, vocabulary, args, prime, num_chars):
    """`num_chars` characters sampled after `prime`, one step at a time.

    Copies `weights` into a stateful, batch-1 copy of the `kind` model of
    that `width`, runs it over `prime`, then feeds back each sampled
    character (temperature `args.temperature`; 0 takes the argmax).
    """
    sampler = build_model(
        kind,
        len(vocabulary),
        width,
        cell=args.cell,
        num_layers=args.layers,
        embed_dim=args.embed_dim,
        output_mode=args.output_mode,
        stateful=True,
    )
    sampler.set_weights(weights)
    _reset_rnn_states(sampler)
    rng = np.random.default_rng(args.seed)
    prime_ids = encode(prime, vocabulary)
    logits = keras.ops.convert_to_numpy(
        sampler(prime_ids[None], training=False)
    )[0, -1]
    chars = []
    for _ in range(num_chars):
        logits = logits.astype("float64")
        if args.temperature <= 0:
            index = int(np.argmax(logits))
        else:
            scaled = logits / args.temperature
            probs = np.exp(scaled - scaled.max())
            index = int(rng.choice(len(probs), p=probs / probs.sum()))
        chars.append(vocabulary[index])
        step = np.array([[index]], dtype="int32")
        logits = keras.ops.convert_to_numpy(sampler(step, training=False))[
            0, -1
        ]
    return prime + "".join(chars)


# ----------------------------------------------------------------- reports


def format_table(results):
    """Markdown table of results (sorted by cell, then model order)."""
    order = {kind: i for i, kind in enumerate(MODEL_KINDS)}
    rows = sorted(results, key=lambda r: (r["cell"], order[r["model"]]))
    lines = [
        "| model | cell | layers x width | params | valid BPC | test BPC "
        "| best epoch | time (s) |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['cell']} | {r['layers']} x {r['width']} "
            f"| {r['params']:,} | {r['valid_bpc']:.4f} | {r['test_bpc']:.4f} "
            f"| {r['best_epoch']}/{r['epochs']} | {r['train_seconds']:.0f} |"
        )
    return "\n".join(lines)


def combine(paths):
    """Merges the results of several `--json-out` files; prints the table."""
    results, configs = [], []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        results.extend(report["results"])
        configs.append(report["config"])
    keys = ("text", "seq_len", "params", "units", "epochs", "layers")
    for key in keys:
        values = {json.dumps(c.get(key)) for c in configs}
        if len(values) > 1:
            print(f"warning: the runs differ in {key}: {sorted(values)}")
    print(format_table(results))
    return results


# ----------------------------------------------------------------- main


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    data = parser.add_mutually_exclusive_group()
    data.add_argument(
        "--text-file", help=f"Text to model; if unset, {DEFAULT_TEXT_FILE}."
    )
    data.add_argument("--tfds", help="A TFDS text dataset: tiny_shakespeare.")
    parser.add_argument("--data-dir", help="TFDS data_dir.")
    parser.add_argument(
        "--max-chars", type=int, help="Use only the first N characters."
    )
    parser.add_argument(
        "--models",
        default=",".join(MODEL_KINDS),
        help=f"Comma list out of {','.join(MODEL_KINDS)}.",
    )
    parser.add_argument(
        "--cell",
        default="lstm",
        choices=("lstm", "gru", "simple"),
        help="Unit type of every model.",
    )
    parser.add_argument(
        "--layers", type=int, default=3, help="Layers of stacked and GF."
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--params",
        type=int,
        default=100_000,
        help="Parameter budget; each model's width is matched to it.",
    )
    size.add_argument(
        "--units", type=int, help="The same width for every model (no match)."
    )
    parser.add_argument(
        "--embed-dim", type=int, default=32, help="Character embedding size."
    )
    parser.add_argument(
        "--output-mode",
        default="top",
        choices=("top", "all"),
        help="GF/stacked: Dense reads the top layer or all layers.",
    )
    parser.add_argument(
        "--seq-len", type=int, default=50, help="Window length (chars)."
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=128,
        help="Windows per training batch.",
    )
    parser.add_argument("--epochs", type=int, default=6, help="Epochs.")
    parser.add_argument(
        "--steps-per-epoch",
        type=int,
        default=150,
        help="Cap on training steps per epoch (0: one pass over the split).",
    )
    parser.add_argument(
        "--windows",
        default="random",
        choices=("random", "consecutive"),
        help="An epoch's training windows: at random offsets, or "
        "consecutive from a random start, shuffled.",
    )
    parser.add_argument(
        "--learning-rate",
        type=float,
        default=5e-3,
        help="Adam's initial learning rate.",
    )
    parser.add_argument(
        "--lr-decay",
        type=float,
        default=0.5,
        help="Multiply the learning rate by this when valid BPC worsens.",
    )
    parser.add_argument(
        "--clipnorm", type=float, default=1.0, help="Adam global_clipnorm."
    )
    parser.add_argument(
        "--jit-compile",
        default="auto",
        type=lambda v: {"true": True, "false": False}.get(v.lower(), v),
        help="auto, true or false.",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="Seed of the weights, the windows and the sample.",
    )
    parser.add_argument("--sample", type=int, default=0, help="Characters.")
    parser.add_argument(
        "--temperature",
        type=float,
        default=0.8,
        help="Sampling temperature; 0 picks the likeliest character.",
    )
    parser.add_argument(
        "--prime", default="ROMEO:\n", help="Text the sample starts from."
    )
    parser.add_argument("--json-out", help="Write all figures to this file.")
    parser.add_argument(
        "--combine",
        nargs="+",
        metavar="JSON",
        help="Print the table of several --json-out files and exit.",
    )
    parser.add_argument(
        "--verbose",
        type=int,
        default=0,
        help="Keras fit verbosity within each epoch (0: only the one line "
        "per epoch that this script prints).",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="Tiny, fast settings."
    )
    args = parser.parse_args(argv)
    if args.smoke:
        for key, value in SMOKE.items():
            setattr(args, key, value)
        args.units = None
    return args


def prepare_data(args):
    text = load_text(args.text_file, args.tfds, args.data_dir)
    if args.max_chars:
        text = text[: args.max_chars]
    vocabulary = build_vocabulary(text)
    ids = encode(text, vocabulary)
    return {
        "text": text,
        "vocabulary": vocabulary,
        "vocab_size": len(vocabulary),
        "splits": split_ids(ids),
    }


def main(argv=None, log=print):
    args = parse_args(argv)
    if args.combine:
        return combine(args.combine)
    kinds = [k.strip() for k in args.models.split(",") if k.strip()]
    unknown = sorted(set(kinds) - set(MODEL_KINDS))
    if unknown or not kinds:
        raise SystemExit(
            f"--models must be a comma list out of {list(MODEL_KINDS)}. "
            f"Received: {args.models!r}"
        )
    data = prepare_data(args)
    train_ids, valid_ids, test_ids = data["splits"]
    log(
        f"backend {keras.backend.backend()}; {len(data['text']):,} chars, "
        f"vocabulary {data['vocab_size']}; train/valid/test "
        f"{len(train_ids):,}/{len(valid_ids):,}/{len(test_ids):,}"
    )
    model_kwargs = {
        "cell": args.cell,
        "num_layers": args.layers,
        "embed_dim": args.embed_dim,
        "output_mode": args.output_mode,
    }
    widths = {}
    for kind in kinds:
        if args.units:
            width = args.units
            params = count_params(
                kind, data["vocab_size"], width, **model_kwargs
            )
        else:
            width, params = match_width(
                kind, data["vocab_size"], args.params, **model_kwargs
            )
        widths[kind] = width
        note = ""
        if not args.units:
            deviation = 100 * (params / args.params - 1)
            note = f" ({deviation:+.2f}% of the budget {args.params:,})"
        log(f"{kind:>8} ({args.cell}): width {width}, {params:,} params{note}")
    results, best = [], None
    for kind in kinds:
        log(f"training {kind} ...")
        result, model = train_and_evaluate(kind, widths[kind], data, args, log)
        results.append(result)
        if best is None or result["valid_bpc"] < best[0]["valid_bpc"]:
            best = (result, model.get_weights())
        del model
        keras.backend.clear_session(free_memory=False)
    log("")
    log(format_table(results))
    report = {
        "config": {
            **{k: v for k, v in vars(args).items() if k != "combine"},
            "text": args.tfds or str(args.text_file or DEFAULT_TEXT_FILE),
            "backend": keras.backend.backend(),
            "chars": len(data["text"]),
            "vocab_size": data["vocab_size"],
            "split_sizes": [len(train_ids), len(valid_ids), len(test_ids)],
        },
        "results": results,
    }
    if args.sample:
        result, weights = best
        sample = generate(
            result["model"],
            result["width"],
            weights,
            data["vocabulary"],
            args,
            args.prime,
            args.sample,
        )
        log(
            f"\nsample from {result['model']} (temperature "
            f"{args.temperature}):\n{sample}"
        )
        report["sample"] = {"model": result["model"], "text": sample}
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
        log(f"wrote {args.json_out}")
    return report


if __name__ == "__main__":
    main()
