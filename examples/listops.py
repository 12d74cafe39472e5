"""Tree-LSTMs with gold trees and an LSTM on generated ListOps.

Trains up to three classifiers of the value (0-9) of a ListOps expression
(Nangia & Bowman 2018), all on the same generated data, and prints their
test accuracies next to the published ones:

- `childsum`: Child-Sum Tree-LSTM on the gold tree: an operator node's
  children are its arguments (`("[MAX", "2", ("[MIN", "3", "4"))`, up to 5
  children). All four operators ignore the order of their arguments, which
  is what a Child-Sum cell sees.
- `nary`: N-ary Tree-LSTM (arity 2) on the original's binary gold tree over
  the tokens (`kr.datasets.listops_binary_tree`): the operator is combined
  with its arguments one at a time, then with `]`; the tree of the
  published Tree-LSTM result (98.7%).
- `lstm`: `keras.layers.LSTM` over the bracketed token sequence (published
  71.5%).

Every tree model embeds node tokens with `keras.layers.Embedding` and maps
the root state through `Dense(10)`. The data are generated with the
original's distribution (depth limit 19, at most 5 arguments, an operator
with probability 0.25), of any length unless `--max-length` is given, as
one pool of distinct expressions, shuffled, then split. Distinct
expressions run short among the short ones, so the pool's size shapes the
lengths: about 100,000 (as the release's train and test files together;
93,000 with `--train-size 90000`) give the release's test distribution
(median 16 tokens, 21% of depth 1, 11% over 100 tokens, 4% over 200).

Examples are sorted by size and cut into batches of at most
`--batch-size` expressions and `--batch-nodes` nodes once padded (long
expressions come a few at a time); each batch is padded to
`kr.trees.bucket_size` of its largest example (a handful of shapes for
compiled code) and carries the level schedule `tree_levels`, the tree
layer's fourth input. A `keras.utils.PyDataset` makes the NumPy batches, so
the script runs on the TensorFlow backend (the default here) and on the
PyTorch one, CPU or GPU, without TensorFlow installed: it is only imported
with its backend. Each expression weighs the same in the loss
(`--weighting expression`: a batch of few long expressions would
otherwise weigh as much as a full one). `--curriculum K` trains the
first `K` epochs on the expressions of at most `--curriculum-length`
(100) tokens only. Adam's learning rate follows a cosine decay over all
the steps after a short warm-up, gradients are clipped to norm 5, and
the weights of the epoch with the best validation accuracy are tested.
The script prints the test accuracy by expression length (<= 50, 51-100,
101-200, > 200 tokens) and the training time (epochs and validation).

docs/experiments.md has the figures on the release's test sample: 99.0%
and 99.3% over two seeds (published 98.7%) for the N-ary model with
`--train-size 90000 --epochs 12 --curriculum 6 --learning-rate 5e-3`,
28 to 44 minutes on a 2-core CPU.
Earlier measurements, with training data capped at 100 tokens
(`--max-length 100`, then the default) and every batch weighing the
same (`--weighting batch`, then the default), TensorFlow backend on a
2-core CPU, with
`--train-size 90000 --epochs 5` (the published data size) and the other
defaults (units 128, embedding 64, batch 128, learning rate 1e-2), test
accuracy on generated data of at most 100 tokens:

- `nary`: 97.4% (validation 75.5, 88.0, 93.2, 97.4, 97.7% over the
  epochs; 97.5% in an earlier run of the same command, before the level
  loop's speed-ups), about 6 minutes per epoch; published 98.7%;
- `childsum`: 78.1%, validation still rising (62.2 to 76.7%). The Child-Sum
  cell on the gold tree must combine up to five arguments (e.g. their sum
  mod 10) in one step from the sum of their states, where the binary tree
  takes one argument per step;
- `lstm`: 61.8%; published 71.5%.

With 20000 expressions (8 epochs, on a GPU with the PyTorch backend) the
N-ary model overfit (training loss 0.13) and reached 85.2%, Child-Sum
67.2%, the LSTM 56.5% (learning rate 3e-3, batch 64).

    python examples/listops.py --train-size 2000 --epochs 2   # smoke test
    python examples/listops.py --models nary --train-size 90000 \\
        --epochs 12 --curriculum 6 --learning-rate 5e-3 \\
        --test-file test_d20s_last1000.tsv
    python examples/listops.py --train-file train_d20s.tsv \\
        --test-file test_d20s.tsv --train-size 90000 --epochs 5
    KERAS_BACKEND=torch python examples/listops.py --models nary \\
        --train-size 90000 --epochs 5 --json-out nary.json
"""

import argparse
import json
import os
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from _allocator import keep_freed_memory  # noqa: E402
from _quiet_tensorflow import quiet_tensorflow  # noqa: E402

keep_freed_memory()
quiet_tensorflow()

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_recurrent as kr  # noqa: E402

VOCABULARY = kr.datasets.LISTOPS_VOCABULARY
VOCABULARY_SIZE = max(VOCABULARY.values()) + 1
MODELS = {
    "childsum": ("Child-Sum Tree-LSTM, gold tree", "98.7 (binary)"),
    "nary": ("N-ary Tree-LSTM, binary gold tree", "98.7"),
    "lstm": ("LSTM, token sequence", "71.5"),
}


def encode(data, model):
    """One dict of NumPy arrays per example, for `model`'s input."""
    if model == "lstm":
        return [
            {"tokens": np.array([VOCABULARY[t] for t in tokens], "int32")}
            for tokens in data["tokens"]
        ]
    if model == "childsum":
        return [
            kr.trees.encode_tree(tree, vocabulary=VOCABULARY, num_children=5)
            for tree in data["trees"]
        ]
    return [
        kr.trees.encode_tree(
            kr.datasets.listops_binary_tree(tree),
            vocabulary=VOCABULARY,
            labeled=False,
            num_children=2,
        )
        for tree in data["trees"]
    ]


LENGTH_BINS = ((0, 50), (51, 100), (101, 200), (201, None))
"""Token-length bins of the accuracy table: <= 50, 51-100, 101-200, > 200."""


def bin_name(low, high):
    if high is None:
        return f"> {low - 1}"
    return f"<= {high}" if low == 0 else f"{low}-{high}"


def pad(examples, size):
    """Pads a list of per-example dicts to `size` nodes (or tokens) into one
    batch dict; trees get the level schedule `"tree_levels"` too."""
    if "tokens" in examples[0]:
        tokens = np.zeros((len(examples), size), "int32")
        for row, example in enumerate(examples):
            tokens[row, : len(example["tokens"])] = example["tokens"]
        return {"tokens": tokens}
    # `encode_trees` pads already encoded trees in NumPy and adds the
    # schedule that the tree layers take as their fourth input, packed:
    # each batch reaches the model whole.
    return kr.trees.encode_trees(examples, num_nodes=size, pack_levels=True)


def size_batches(sizes, batch_size, batch_nodes):
    """Cuts indices sorted by `sizes` into batches: at most `batch_size`
    examples, and at most `batch_nodes` nodes once padded to the batch's
    bucket size (`kr.trees.bucket_size` of its largest example; one example
    at least). Returns the batches and their padded sizes."""
    batches, padded, start = [], [], 0
    order = np.argsort(sizes, kind="stable")
    while start < len(order):
        end = start + 1
        while end < len(order) and end - start < batch_size:
            size = kr.trees.bucket_size(sizes[order[end]])
            if (end + 1 - start) * size > batch_nodes:
                break
            end += 1
        batches.append(order[start:end])
        padded.append(kr.trees.bucket_size(sizes[order[end - 1]]))
        start = end
    return batches, padded


class SizeBatches(keras.utils.PyDataset):
    """Batches of examples of similar size, padded, as NumPy arrays.

    Sorting by size (with random tie-breaking) and cutting the sorted list
    into batches keeps the padding and, for trees, the number of levels per
    batch small. A batch holds `batch_size` examples, or fewer where they
    would pad to more than `batch_nodes` nodes (tokens, for the LSTM):
    long expressions come a few at a time, so a batch costs about the same
    whatever its size. Each batch is padded to `kr.trees.bucket_size` of
    its largest example, so compiled code sees a handful of shapes. With
    `shuffle`, the batches are redrawn and their order shuffled after every
    epoch. With `weighted`, each batch also carries sample weights `n /
    batch_size` for its `n` examples, so that the mean loss of a batch of
    few long expressions counts each of them as much as an expression of a
    full batch (without, every batch weighs the same in its step).
    """

    def __init__(
        self,
        examples,
        labels,
        batch_size,
        batch_nodes,
        shuffle,
        seed,
        weighted=False,
    ):
        super().__init__()
        self.examples = examples
        self.labels = np.asarray(labels, "int32")
        self.batch_size = batch_size
        self.batch_nodes = batch_nodes
        self.shuffle = shuffle
        self.weighted = weighted
        self.rng = np.random.default_rng(seed)
        self.sizes = np.array(
            [len(next(iter(example.values()))) for example in examples]
        )
        self._draw()

    def _draw(self):
        if self.shuffle:
            # Random tie-breaking: equal sizes are batched differently
            # every epoch.
            permutation = self.rng.permutation(len(self.sizes))
            batches, self.padded = size_batches(
                self.sizes[permutation], self.batch_size, self.batch_nodes
            )
            batches = [permutation[batch] for batch in batches]
            order = self.rng.permutation(len(batches))
            self.batches = [batches[i] for i in order]
            self.padded = [self.padded[i] for i in order]
        else:
            self.batches, self.padded = size_batches(
                self.sizes, self.batch_size, self.batch_nodes
            )

    def __len__(self):
        return len(self.batches)

    def __getitem__(self, index):
        chosen = self.batches[index]
        inputs = pad([self.examples[i] for i in chosen], self.padded[index])
        if not self.weighted:
            return inputs, self.labels[chosen]
        weights = np.full(len(chosen), len(chosen) / self.batch_size)
        return inputs, self.labels[chosen], weights.astype("float32")

    def on_epoch_end(self):
        if self.shuffle:
            self._draw()


def epoch_batches(examples, labels, lengths, args):
    """The training batches of each epoch (a list of `SizeBatches`, one
    object per distinct set): all the expressions, except in the first
    `--curriculum` epochs, which see those of at most
    `--curriculum-length` tokens only."""

    def batches(keep):
        keep = np.flatnonzero(keep)
        return SizeBatches(
            [examples[i] for i in keep],
            np.asarray(labels)[keep],
            args.batch_size,
            args.batch_nodes,
            shuffle=True,
            seed=args.seed,
            weighted=args.weighting == "expression",
        )

    lengths = np.asarray(lengths)
    every = batches(np.ones(len(lengths), bool))
    short_epochs = min(args.curriculum, args.epochs)
    if not short_epochs:
        return [every] * args.epochs
    short = batches(lengths <= args.curriculum_length)
    return [short] * short_epochs + [every] * (args.epochs - short_epochs)


def as_input(batches):
    """What `fit` and `evaluate` take: `batches`, or with TensorFlow a
    `tf.data.Dataset` over them with unknown batch size and lengths (Keras
    would fix the shapes it sees in the first batches)."""
    if keras.backend.backend() != "tensorflow":
        return batches
    import tensorflow as tf

    inputs = batches[0][0]
    signature = (
        {
            key: tf.TensorSpec(
                (None,) * (value.ndim - 1) + value.shape[-1:]
                if key == "children"
                else (None,) * value.ndim,
                tf.int32,
            )
            for key, value in inputs.items()
        },
        tf.TensorSpec((None,), tf.int32),
    )
    if batches.weighted:
        signature += (tf.TensorSpec((None,), tf.float32),)

    def generate():
        for index in range(len(batches)):
            yield batches[index]
        batches.on_epoch_end()

    dataset = tf.data.Dataset.from_generator(
        generate, output_signature=signature
    )
    return dataset.apply(
        tf.data.experimental.assert_cardinality(len(batches))
    ).prefetch(2)


def build_model(model, args, total_steps):
    if model == "lstm":
        tokens = keras.Input((None,), dtype="int32", name="tokens")
        x = keras.layers.Embedding(
            VOCABULARY_SIZE, args.embedding_dim, mask_zero=True
        )(tokens)
        state = keras.layers.LSTM(args.units)(x)
        inputs = {"tokens": tokens}
    else:
        arity = 5 if model == "childsum" else 2
        inputs = kr.trees.tree_inputs(arity, levels=True)
        x = keras.layers.Embedding(VOCABULARY_SIZE, args.embedding_dim)(
            inputs["node_tokens"]
        )
        # The host's level schedule as the fourth input: the layer runs
        # its level loop without working it out.
        tree = [
            x,
            inputs["children"],
            inputs["node_mask"],
            inputs["tree_levels"],
        ]
        if model == "childsum":
            state = kr.layers.ChildSumTreeLSTM(args.units)(tree)
        else:
            state = kr.layers.NaryTreeLSTM(args.units, arity=2)(tree)
    logits = keras.layers.Dense(10)(state)
    network = keras.Model(inputs, logits)
    learning_rate = args.learning_rate
    if args.schedule == "cosine":
        warmup = min(200, total_steps // 10)
        learning_rate = keras.optimizers.schedules.CosineDecay(
            args.learning_rate / 10,
            decay_steps=max(total_steps - warmup, 1),
            alpha=0.01,
            warmup_target=args.learning_rate,
            warmup_steps=warmup,
        )
    network.compile(
        optimizer=keras.optimizers.Adam(
            learning_rate, clipnorm=args.clipnorm or None
        ),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return network


def run(model, splits, args, report):
    """Trains `model`; returns its test accuracy and training record.

    `report(partial)` is called after every epoch with the record so far.
    """
    keras.utils.set_random_seed(args.seed)
    encoded = {
        name: (encode(split, model), split["labels"])
        for name, split in splits.items()
    }
    schedule = epoch_batches(
        *encoded["train"], [len(t) for t in splits["train"]["tokens"]], args
    )
    evaluation = {
        name: SizeBatches(
            *encoded[name],
            2 * args.batch_size,
            2 * args.batch_nodes,
            shuffle=False,
            seed=0,
        )
        for name in ("validation", "test")
    }
    network = build_model(model, args, sum(len(b) for b in schedule))
    best, best_weights, curve = -1.0, None, []
    start = time.perf_counter()
    inputs = {id(batches): as_input(batches) for batches in schedule}
    for epoch, batches in enumerate(schedule):
        # The batches shuffle themselves (`SizeBatches.on_epoch_end`).
        history = network.fit(
            inputs[id(batches)], epochs=1, verbose=0, shuffle=False
        )
        _, accuracy = network.evaluate(
            as_input(evaluation["validation"]), verbose=0
        )
        seconds = time.perf_counter() - start
        curve.append(
            {
                "epoch": epoch + 1,
                "train_loss": float(history.history["loss"][-1]),
                "validation_accuracy": float(accuracy),
                "seconds": seconds,
            }
        )
        print(
            f"  {model:8s} epoch {epoch + 1}: loss "
            f"{curve[-1]['train_loss']:.4f}, validation accuracy "
            f"{accuracy:.4f} ({seconds:.0f} s)",
            flush=True,
        )
        if accuracy > best:
            best, best_weights = accuracy, network.get_weights()
        report({"model": model, "curve": curve})
    training_seconds = time.perf_counter() - start
    network.set_weights(best_weights)
    test = evaluation["test"]
    logits = network.predict(as_input(test), verbose=0)
    # `predict` returns the batches in order; map them back to examples.
    order = np.concatenate(test.batches)
    correct = np.zeros(len(order), bool)
    correct[order] = np.argmax(logits, axis=-1) == test.labels[order]
    lengths = np.array([len(t) for t in splits["test"]["tokens"]])
    return {
        "model": model,
        "name": MODELS[model][0],
        "published": MODELS[model][1],
        "test_accuracy": float(correct.mean()),
        "test_by_length": accuracy_by_length(correct, lengths),
        "best_validation_accuracy": float(best),
        "training_seconds": training_seconds,
        "seconds": time.perf_counter() - start,
        "curve": curve,
    }


def accuracy_by_length(correct, lengths):
    """`[{"bin", "count", "accuracy"}]` over `LENGTH_BINS` (accuracy `None`
    for an empty bin)."""
    table = []
    for low, high in LENGTH_BINS:
        inside = (lengths >= low) & (
            lengths <= (high if high is not None else lengths.max())
        )
        count = int(inside.sum())
        table.append(
            {
                "bin": bin_name(low, high),
                "count": count,
                "accuracy": float(correct[inside].mean()) if count else None,
            }
        )
    return table


def int_at_least(minimum, kind):
    """An argparse type: an integer of at least `minimum` (`kind` names
    it in the error)."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(
                f"expected a {kind} integer; received {text!r}"
            )
        return value

    return parse


positive_int = int_at_least(1, "positive")
non_negative_int = int_at_least(0, "non-negative")


def models_list(text):
    models = [model.strip() for model in text.split(",") if model.strip()]
    unknown = sorted(set(models) - set(MODELS))
    if not models or unknown:
        raise argparse.ArgumentTypeError(
            f"expected a comma-separated subset of {','.join(MODELS)}; "
            f"received {text!r}"
        )
    return models


def rows(data, keep):
    """The examples of `data` (a dict of lists and arrays) at `keep`."""
    keep = np.flatnonzero(keep)
    return {
        key: [value[i] for i in keep]
        if isinstance(value, list)
        else value[keep]
        for key, value in data.items()
    }


def generated_splits(args):
    """Train, validation and test data from one call of the generator.

    As the release was made: one pool of distinct expressions, in random
    order, split. The pool's size shapes its distribution: distinct
    expressions run out among the short ones (there are only 400 of
    `[OP d d ]`), so the more are drawn, the longer they are. About
    100,000 (the release's train and test files together; 93,000 here
    with `--train-size 90000`) give the lengths and depths of the
    release's test file.
    """
    sizes = [args.train_size, args.validation_size, args.test_size]
    data = kr.datasets.listops(
        sum(sizes), max_length=args.max_length, seed=args.seed
    )
    bounds = np.cumsum([0] + sizes)
    # The generator draws the short expressions first (before they run
    # out): shuffled, every split has the pool's distribution.
    order = np.random.default_rng(args.seed).permutation(bounds[-1])
    return {
        name: rows(data, (order >= bounds[i]) & (order < bounds[i + 1]))
        for i, name in enumerate(("train", "validation", "test"))
    }


def describe_lengths(name, tokens):
    """Prints the length and depth distribution of a split."""
    lengths = np.array([len(t) for t in tokens])
    counts = [
        int(np.sum((lengths >= low) & (lengths <= (high or lengths.max()))))
        for low, high in LENGTH_BINS
    ]
    bins = ", ".join(
        f"{bin_name(*bounds)}: {count}"
        for bounds, count in zip(LENGTH_BINS, counts)
    )
    print(
        f"{name}: {len(lengths)} expressions, tokens median "
        f"{np.median(lengths):.0f}, max {lengths.max()} ({bins})"
    )


def release_splits(args):
    """Test data from `--test-file` (all of it), and with `--train-file`
    train and validation data from that file (its expressions of at most
    `--max-length` tokens); prints how many were long."""
    test = kr.datasets.read_listops_tsv(args.test_file)
    lengths = np.array([len(tokens) for tokens in test["tokens"]])
    limit = np.inf if args.max_length is None else args.max_length
    longer = (
        ""
        if args.max_length is None
        else f"{np.sum(lengths > limit)} longer than {limit} tokens, "
    )
    print(
        f"{args.test_file}: {len(lengths)} expressions, all tested "
        f"({longer}median length {np.median(lengths):.0f})"
    )
    if not args.train_file:
        return {"test": test}
    train = kr.datasets.read_listops_tsv(args.train_file)
    short = np.array([len(t) <= limit for t in train["tokens"]])
    if args.max_length is not None:
        print(
            f"{args.train_file}: {len(short)} expressions, {np.sum(~short)} "
            f"longer than {args.max_length} tokens skipped"
        )
    kept = np.flatnonzero(short)
    if len(kept) <= args.validation_size:
        raise SystemExit(
            f"{args.train_file} has {len(kept)} expressions of at most "
            f"{args.max_length} tokens: too few for --validation-size "
            f"{args.validation_size} and training"
        )
    validation = kept[-args.validation_size :]
    training = kept[: -args.validation_size][: args.train_size]
    order = np.arange(len(short))
    return {
        "train": rows(train, np.isin(order, training)),
        "validation": rows(train, np.isin(order, validation)),
        "test": test,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--models",
        type=models_list,
        default=list(MODELS),
        help="comma-separated subset of childsum,nary,lstm (default: all)",
    )
    parser.add_argument(
        "--train-size", type=int, default=20000, help="training expressions"
    )
    parser.add_argument(
        "--validation-size",
        type=int,
        default=1000,
        help="validation expressions",
    )
    parser.add_argument(
        "--test-size",
        type=int,
        default=2000,
        help="test expressions (generated data only)",
    )
    parser.add_argument(
        "--max-length",
        type=positive_int,
        default=None,
        help="longest training expression, in tokens (generated data: also "
        "the validation's and test's; default: no limit, as the release)",
    )
    parser.add_argument("--epochs", type=int, default=5, help="training epochs")
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        default=128,
        help="most expressions per batch (evaluation: twice as many)",
    )
    parser.add_argument(
        "--batch-nodes",
        type=positive_int,
        default=16384,
        help="most tree nodes (LSTM: tokens) per padded batch, so that long "
        "expressions come in smaller batches (evaluation: twice as many)",
    )
    parser.add_argument(
        "--units",
        type=int,
        default=128,
        help="units of the recurrent layer (Tree-LSTM or LSTM)",
    )
    parser.add_argument(
        "--embedding-dim", type=int, default=64, help="token embedding size"
    )
    parser.add_argument(
        "--learning-rate",
        type=float,
        default=1e-2,
        help="Adam's learning rate (the peak, with --schedule cosine)",
    )
    parser.add_argument(
        "--schedule",
        choices=["cosine", "constant"],
        default="cosine",
        help="learning rate: a warmup then cosine decay, or constant",
    )
    parser.add_argument(
        "--clipnorm",
        type=float,
        default=5.0,
        help="gradient norm clipping (0: none)",
    )
    parser.add_argument(
        "--weighting",
        choices=["batch", "expression"],
        default="expression",
        help="training loss: the mean of each batch (every batch weighs the "
        "same, so the few-expression batches of long ones weigh more per "
        "expression), or weighted so that every expression weighs the same",
    )
    parser.add_argument(
        "--curriculum",
        type=non_negative_int,
        default=0,
        help="train the first this many epochs on the training expressions "
        "of at most --curriculum-length tokens only, then on all of them",
    )
    parser.add_argument(
        "--curriculum-length",
        type=positive_int,
        default=100,
        help="the longest expression (tokens) of the curriculum's first epochs",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the generated data and of the initial weights",
    )
    parser.add_argument(
        "--train-file",
        help="a file of the ListOps release (label<TAB>binary parse), e.g. "
        "train_d20s.tsv: train on its first --train-size expressions of at "
        "most --max-length tokens and validate on its last "
        "--validation-size (instead of generated data)",
    )
    parser.add_argument(
        "--test-file",
        help="test on every expression of this release file (e.g. "
        "test_d20s.tsv), whatever its length; without --train-file, the "
        "model trains on generated data",
    )
    parser.add_argument(
        "--json-out", help="write the configuration and results here"
    )
    args = parser.parse_args()
    if args.train_file and not args.test_file:
        parser.error("--train-file needs --test-file")

    if args.train_file:
        splits = release_splits(args)
    else:
        splits = generated_splits(args)
        if args.test_file:
            splits["test"] = release_splits(args)["test"]
    for name, split in splits.items():
        describe_lengths(name, split["tokens"])
    results = []

    def report(partial=None):
        # Written after every epoch, so a stopped run leaves its curves.
        if args.json_out:
            with open(args.json_out, "w") as file:
                json.dump(
                    {
                        "backend": keras.backend.backend(),
                        "config": vars(args),
                        "results": results,
                        "running": partial,
                    },
                    file,
                    indent=2,
                )

    for model in args.models:
        results.append(run(model, splits, args, report))
        report()
    limit = (
        "any length"
        if args.max_length is None
        else f"at most {args.max_length} tokens"
    )
    print(
        f"\nListOps, {len(splits['train']['labels'])} training expressions "
        f"of {limit}, {args.epochs} epochs, "
        f"{keras.backend.backend()} backend; tested on "
        f"{len(splits['test']['labels'])} expressions"
    )
    print(
        f"{'model':36s} {'test acc. %':>11s} {'published %':>12s} "
        f"{'training s':>10s}"
    )
    for result in results:
        print(
            f"{result['name']:36s} {100 * result['test_accuracy']:11.1f} "
            f"{result['published']:>12s} {result['training_seconds']:10.0f}"
        )
    print("\nTest accuracy % by expression length (tokens; count in brackets)")
    print(
        f"{'model':36s} "
        + " ".join(f"{bin_name(*b):>13s}" for b in LENGTH_BINS)
    )
    for result in results:
        cells = [
            ("-" if row["accuracy"] is None else f"{100 * row['accuracy']:.1f}")
            + f" ({row['count']})"
            for row in result["test_by_length"]
        ]
        print(f"{result['name']:36s} " + " ".join(f"{c:>13s}" for c in cells))


if __name__ == "__main__":
    main()
