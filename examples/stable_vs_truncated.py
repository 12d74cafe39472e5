"""Do recurrent models need to be recurrent? (Miller & Hardt, 2019)

Trains character-level language models on a long sequence and compares

- an unconstrained LSTM,
- a *stable* LSTM: its recurrent kernel is kept inside the stability region
  of Miller & Hardt's Proposition 2 by `kr.constraints.LSTMStability`, and
  its forget gate is kept below the proposition's `λ` (see
  `ForgetGateInputCap` below),
- `kr.layers.TruncatedRNN` models: the stable LSTM run over only the last
  `k` characters, i.e. feed-forward models, trained from scratch for several
  `k`,

and, without retraining, the two full LSTMs evaluated as truncated models
(their trained weights run over the last `k` characters only). For a stable
model the truncated one approaches the full one exponentially fast in `k`.

Data: the text file given with `--text-file` (90% train, 10% validation),
else a generated long sequence: a noisy second-order Markov chain over a
small vocabulary of made-up words, written out character by character. The
first character of a word depends on the two words before it, up to about 14
characters back; more context does not help.

Usage:

    python examples/stable_vs_truncated.py
    python examples/stable_vs_truncated.py --text-file tinyshakespeare.txt

Reference: Miller & Hardt, 2019. Stable Recurrent Models.
https://arxiv.org/abs/1805.10369
"""

import argparse
import logging
import math
import time

from _quiet_tensorflow import quiet_tensorflow

quiet_tensorflow()

import keras  # noqa: E402
import numpy as np  # noqa: E402
from _progress import EpochLine  # noqa: E402
from keras import ops  # noqa: E402

import keras_recurrent as kr  # noqa: E402


class ForgetGateInputCap(keras.constraints.Constraint):
    """Caps the forget-gate block of an LSTM input kernel at `cap`.

    With one-hot inputs and no bias, the forget gate's pre-activation is at
    most `cap + ||W_f||_∞`, so `cap = logit(λ) - ||W_f||_∞` keeps every
    forget gate below `λ`, the assumption of Proposition 2.
    """

    def __init__(self, cap):
        self.cap = float(cap)

    def __call__(self, w):
        i, f, c, o = ops.split(w, 4, axis=-1)
        return ops.concatenate([i, ops.minimum(f, self.cap), c, o], axis=-1)

    def get_config(self):
        return {"cap": self.cap}


def synthetic_text(num_chars, seed, num_words=12, noise=0.1):
    """A noisy second-order Markov chain over made-up words, as a string.

    Each word is followed by one of two words chosen by the two words before
    it (or, with probability `noise`, by a random word).
    """
    rng = np.random.default_rng(seed)
    letters = list("abcdefghijklmnopqrst")
    words = set()
    while len(words) < num_words:
        length = rng.integers(2, 7)
        words.add("".join(rng.choice(letters, size=length)))
    words = sorted(words)
    successors = rng.choice(num_words, size=(num_words, num_words, 2))
    pieces, total, previous, word = [], 0, 0, 0
    while total < num_chars:
        if rng.random() < noise:
            following = rng.integers(num_words)
        else:
            following = successors[previous, word, rng.integers(2)]
        previous, word = word, following
        pieces.append(words[word])
        total += len(words[word]) + 1
    return " ".join(pieces)[:num_chars]


def sequences(ids, length):
    """Next-character prediction pairs, `(N, length)` each."""
    num = (len(ids) - 1) // length
    x = ids[: num * length].reshape(num, length)
    y = ids[1 : num * length + 1].reshape(num, length)
    return x, y


def build_model(vocab_size, units, window=None, stable=None, weights=None):
    """One-hot characters -> (truncated) LSTM -> logits over characters.

    `stable` is `None` (unconstrained) or `λ`; `weights` optionally copies a
    trained model's weights.
    """
    if stable is None:
        lstm_kwargs = {}
    else:
        recurrent = kr.constraints.LSTMStability(stable)
        cap = math.log(stable / (1 - stable)) - recurrent.gate_bounds["f"]
        lstm_kwargs = {
            "use_bias": False,
            "recurrent_constraint": recurrent,
            "kernel_constraint": ForgetGateInputCap(cap),
        }
    inputs = keras.Input((None, vocab_size))
    if window is None:
        lstm = keras.layers.LSTM(units, return_sequences=True, **lstm_kwargs)
        hidden = lstm(inputs)
    else:
        lstm = keras.layers.LSTM(units, **lstm_kwargs)
        hidden = kr.layers.TruncatedRNN(
            lstm, window=window, return_sequences=True
        )(inputs)
    model = keras.Model(inputs, keras.layers.Dense(vocab_size)(hidden))
    if weights is not None:
        model.set_weights(weights)
    return model


def one_hot(ids, vocab_size):
    return np.eye(vocab_size, dtype="float32")[ids]


def evaluate(model, x, y, vocab_size, batch_size):
    """Validation accuracy and bits per character."""
    logits = model.predict(
        one_hot(x, vocab_size), batch_size=batch_size, verbose=0
    )
    logits = logits - logits.max(axis=-1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, y[..., None], axis=-1)
    bits = -picked.mean() / math.log(2)
    return (log_probs.argmax(axis=-1) == y).mean(), bits


def max_forget_gate(model, x, vocab_size):
    """The largest forget gate activation of the LSTM over `x`."""
    lstm = next(
        layer for layer in model.layers if isinstance(layer, keras.layers.LSTM)
    )
    kernel, recurrent_kernel = (
        np.asarray(w, dtype="float64")
        for w in (lstm.cell.kernel, lstm.cell.recurrent_kernel)
    )
    bias = 0.0 if lstm.cell.bias is None else np.asarray(lstm.cell.bias)
    units = recurrent_kernel.shape[0]
    h = np.zeros((len(x), units))
    c = np.zeros((len(x), units))
    largest = 0.0
    for t in range(x.shape[1]):
        z = kernel[x[:, t]] + h @ recurrent_kernel + bias
        z_i, z_f, z_c, z_o = np.split(z, 4, axis=-1)  # Keras' [i, f, c, o]
        f = 1 / (1 + np.exp(-z_f))
        c = f * c + np.tanh(z_c) / (1 + np.exp(-z_i))
        h = np.tanh(c) / (1 + np.exp(-z_o))
        largest = max(largest, f.max())
    return largest


def train(model, x, y, vocab_size, args):
    model.compile(
        keras.optimizers.Adam(args.learning_rate),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    start = time.perf_counter()
    model.fit(
        one_hot(x, vocab_size),
        y,
        batch_size=args.batch_size,
        epochs=args.epochs,
        verbose=0,
        callbacks=[EpochLine("    ")],
    )
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text-file", help="Train on this text file.")
    parser.add_argument(
        "--max-chars",
        type=int,
        default=160_000,
        help="characters of text used (read from --text-file, or generated)",
    )
    parser.add_argument(
        "--sequence-length",
        type=int,
        default=64,
        help="characters per training window",
    )
    parser.add_argument(
        "--units", type=int, default=64, help="units of every LSTM"
    )
    parser.add_argument(
        "--batch-size", type=int, default=32, help="windows per batch"
    )
    parser.add_argument(
        "--epochs", type=int, default=3, help="training epochs of each model"
    )
    parser.add_argument(
        "--learning-rate", type=float, default=1e-2, help="Adam's learning rate"
    )
    parser.add_argument(
        "--max-forget-gate",
        type=float,
        default=0.6,
        help="λ of the stable LSTM: the bound on its forget gates.",
    )
    parser.add_argument(
        "--windows",
        type=int,
        nargs="+",
        default=[1, 2, 4, 8, 16, 32],
        help="the k of the truncated models: characters each one reads",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the generated text and of the initial weights",
    )
    args = parser.parse_args()
    # Every model traces its own functions; TensorFlow warns about that.
    logging.getLogger("tensorflow").setLevel(logging.ERROR)

    if args.text_file:
        with open(args.text_file, encoding="utf-8") as file:
            text = file.read()[: args.max_chars]
        source = args.text_file
    else:
        text = synthetic_text(args.max_chars, args.seed)
        source = "synthetic word chain"
    vocab = sorted(set(text))
    index = {char: i for i, char in enumerate(vocab)}
    ids = np.array([index[char] for char in text], dtype="int32")
    split = int(0.9 * len(ids))
    x_train, y_train = sequences(ids[:split], args.sequence_length)
    x_val, y_val = sequences(ids[split:], args.sequence_length)
    vocab_size = len(vocab)
    print(
        f"{source}: {len(text)} characters, vocabulary {vocab_size}, "
        f"{len(x_train)} train / {len(x_val)} validation sequences of "
        f"{args.sequence_length}"
    )

    def fit_and_score(name, **model_kwargs):
        keras.utils.set_random_seed(args.seed)
        model = build_model(vocab_size, args.units, **model_kwargs)
        seconds = train(model, x_train, y_train, vocab_size, args)
        accuracy, bits = evaluate(
            model, x_val, y_val, vocab_size, args.batch_size
        )
        print(f"  trained {name} in {seconds:.0f} s")
        return model, accuracy, bits

    lam = args.max_forget_gate
    full, full_accuracy, full_bits = fit_and_score("LSTM")
    stable, stable_accuracy, stable_bits = fit_and_score(
        "stable LSTM", stable=lam
    )
    largest_forget = max_forget_gate(stable, x_val, vocab_size)

    rows = []
    for window in args.windows:
        _, accuracy, bits = fit_and_score(
            f"TruncatedRNN k={window}", window=window, stable=lam
        )
        scores = [(accuracy, bits)]
        for trained, kwargs in ((stable, {"stable": lam}), (full, {})):
            truncated = build_model(
                vocab_size,
                args.units,
                window=window,
                weights=trained.get_weights(),
                **kwargs,
            )
            scores.append(
                evaluate(truncated, x_val, y_val, vocab_size, args.batch_size)
            )
        rows.append((window, scores))

    print()
    print(
        f"Validation, {len(x_val) * args.sequence_length} characters "
        "(acc: next-character accuracy, bpc: bits per character; gap: bpc "
        "minus that of the full model)"
    )
    print(
        f"  LSTM (unconstrained):  acc {full_accuracy:.3f}  bpc {full_bits:.3f}"
    )
    print(
        f"  stable LSTM (λ={lam}): acc {stable_accuracy:.3f}  bpc "
        f"{stable_bits:.3f}  (largest forget gate on validation: "
        f"{largest_forget:.3f})"
    )
    print()
    header = (
        f"{'k':>4} | {'TruncatedRNN(stable), trained':^29} | "
        f"{'stable LSTM truncated':^29} | {'LSTM truncated':^29}"
    )
    print(header)
    print(f"{'':>4} | " + " | ".join([f"{'acc':>7} {'bpc':>9} {'gap':>9}"] * 3))
    print("-" * len(header))
    references = [stable_bits, stable_bits, full_bits]
    for window, scores in rows:
        cells = [
            f"{accuracy:7.3f} {bits:9.3f} {bits - reference:+9.3f}"
            for (accuracy, bits), reference in zip(scores, references)
        ]
        print(f"{window:>4} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
