"""Draws the PNG figures of the documentation into docs/figures/.

    python docs/make_figures.py                 # every figure
    python docs/make_figures.py --only tree graph gates

Three kinds of figure:

- recorded figures: the benchmark ratios and the ListOps validation curve
  are drawn from the numbers in `RECORDED` below, copied from the tables of
  docs/benchmarks.md and docs/experiments.md (measured by the commands named
  there); nothing is re-measured;
- measured here: the gate heatmap trains a small `GatedFeedbackRNN` to
  predict the next character of generated "Learning to Execute" programs
  (`kr.datasets.program_eval`; a few minutes on 2 CPU cores), and the
  deep-residual learning curves read the JSON that
  `python examples/deep_residual.py --layer-norm --json-out FILE` writes
  (`--deep-residual-json FILE`; docs/figures/deep_residual.json holds the
  run drawn in the docs);
- drawings: an encoded tree (`kr.trees.encode_tree`) and an encoded graph
  (`kr.graphs.encode_graph`), with their tensors.

matplotlib draws on `Figure` objects under the Agg backend: no display is
needed.
"""

import argparse
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent
FIGURES = ROOT / "figures"
DPI = 90

# Copied from the tables of docs/benchmarks.md and docs/experiments.md.
RECORDED = {
    # benchmarks/lstm_variants.py: train-step time / keras.layers.LSTM.
    "lstm_variants": {
        "layers": [
            "PeepholeLSTM",
            "CoupledLSTM",
            "V",
            "NIG",
            "NFG",
            "NOG",
            "NIAF",
            "NOAF",
            "NP",
            "CIFG",
            "FGR",
        ],
        "small (64 in, 256 units)": [
            1.10,
            0.68,
            1.19,
            0.67,
            0.64,
            0.66,
            1.08,
            0.98,
            1.00,
            0.64,
            2.22,
        ],
        "large (128 in, 512 units)": [
            1.02,
            0.51,
            0.98,
            0.58,
            0.56,
            0.59,
            0.98,
            1.04,
            1.04,
            0.63,
            3.03,
        ],
    },
    # benchmarks/gated_feedback.py: time and FLOP ratios to StackedRNNCells.
    "gated_feedback": {
        "rows": [
            ("tanh", "none", 1.03, 1.00),
            ("tanh", "fixed", 1.98, 2.14),
            ("tanh", "gated", 2.29, 2.17),
            ("GRU", "none", 1.07, 1.00),
            ("GRU", "fixed", 1.40, 1.38),
            ("GRU", "gated", 1.35, 1.39),
            ("LSTM", "none", 0.94, 1.00),
            ("LSTM", "fixed", 1.19, 1.29),
            ("LSTM", "gated", 1.31, 1.29),
        ],
    },
    # benchmarks/tree_lstm.py: ranges over four and five runs.
    "tree_lstm": {
        "cells": ["Child-Sum, gold trees", "N-ary, binary trees"],
        "node_loop_over_levels": [(20.7, 22.4), (23.4, 26.5)],
        "levels_over_keras_lstm": [(0.29, 0.36), (1.05, 1.25)],
    },
    # benchmarks/ggnn.py: train step against PyTorch Geometric, TensorFlow
    # backend, each side in a process of its own.
    "ggnn": {
        "cases": [
            "1 type, auto (dense)\nvs GatedGraphConv",
            "1 type, sparse\nvs GatedGraphConv",
            "4 types + reverse,\nauto (dense)",
            "4 types + reverse,\nsparse",
        ],
        "wall": [0.61, 0.72, 0.70, 0.90],
        "cpu": [0.58, 0.71, 0.68, 0.78],
    },
    # examples/listops.py --train-size 90000 --epochs 5, validation (%).
    "listops": {
        "nary": [75.5, 88.0, 93.2, 97.4, 97.7],
        "nary_test": 97.4,
        "published": 98.7,
        "childsum_first_last": (62.2, 76.7),
        "childsum_test": 78.1,
    },
}


def _save(figure, name):
    path = FIGURES / name
    figure.savefig(path, dpi=DPI)
    print(f"wrote {path} ({path.stat().st_size // 1024} KB)")


def lstm_variants():
    data = RECORDED["lstm_variants"]
    layers = data["layers"]
    sizes = [key for key in data if key != "layers"]
    figure = Figure(figsize=(8, 4.2))
    axes = figure.subplots()
    positions = np.arange(len(layers))
    width = 0.4
    for index, size in enumerate(sizes):
        axes.bar(
            positions + (index - 0.5) * width, data[size], width, label=size
        )
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_xticks(positions, layers, rotation=35, ha="right")
    axes.set_ylabel("train-step time / keras.layers.LSTM")
    axes.set_title("LSTM variants (LSTMVariant by name), lower is faster")
    axes.legend(frameon=False)
    figure.tight_layout()
    _save(figure, "lstm_variants_speed.png")


def gated_feedback_speed():
    rows = RECORDED["gated_feedback"]["rows"]
    labels = [f"{unit}\n{feedback}" for unit, feedback, _, _ in rows]
    figure = Figure(figsize=(8, 3.8))
    axes = figure.subplots()
    positions = np.arange(len(rows))
    width = 0.4
    axes.bar(positions - width / 2, [r[2] for r in rows], width, label="time")
    axes.bar(
        positions + width / 2, [r[3] for r in rows], width, label="matmul FLOPs"
    )
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_xticks(positions, labels)
    axes.set_ylabel("ratio to StackedRNNCells")
    axes.set_title("GatedFeedbackRNN, 3 x 256 units: time follows the FLOPs")
    axes.legend(frameon=False)
    figure.tight_layout()
    _save(figure, "gated_feedback_speed.png")


def tree_lstm_speed():
    data = RECORDED["tree_lstm"]
    figure = Figure(figsize=(9, 2.8))
    left, right = figure.subplots(1, 2, sharey=True)
    panels = [
        (left, "node_loop_over_levels", "node loop / level-batched", 20.0),
        (right, "levels_over_keras_lstm", "level-batched / keras LSTM", 3.0),
    ]
    for axes, key, title, target in panels:
        lows = np.array([low for low, _ in data[key]])
        highs = np.array([high for _, high in data[key]])
        positions = np.arange(len(lows))
        axes.barh(positions, lows, height=0.5, color="#9ecae1")
        axes.barh(
            positions, highs - lows, left=lows, height=0.5, color="#3182bd"
        )
        for position, low, high in zip(positions, lows, highs):
            axes.text(high, position, f" {low:g} to {high:g}x", va="center")
        axes.axvline(target, color="black", linestyle="--", linewidth=0.8)
        axes.set_xlim(0, max(highs.max(), target) * 1.5)
        axes.set_title(f"{title} (dashed: target {target:g}x)", fontsize=10)
    left.set_yticks(np.arange(len(data["cells"])), data["cells"])
    figure.tight_layout()
    _save(figure, "tree_lstm_speed.png")


def ggnn_speed():
    data = RECORDED["ggnn"]
    figure = Figure(figsize=(8, 3.6))
    axes = figure.subplots()
    positions = np.arange(len(data["cases"]))
    width = 0.4
    axes.bar(positions - width / 2, data["wall"], width, label="wall time")
    axes.bar(positions + width / 2, data["cpu"], width, label="CPU time")
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_xticks(positions, data["cases"], fontsize=8)
    axes.set_ylabel("GatedGraph / PyTorch Geometric")
    axes.set_title("GG-NN train step on TensorFlow, 64 graphs x 50 nodes")
    axes.set_ylim(0, 1.3)
    axes.legend(frameon=False, loc="upper center", ncol=2)
    figure.tight_layout()
    _save(figure, "ggnn_speed.png")


def listops_curve():
    data = RECORDED["listops"]
    figure = Figure(figsize=(6, 3.8))
    axes = figure.subplots()
    epochs = np.arange(1, len(data["nary"]) + 1)
    axes.plot(epochs, data["nary"], "o-", label="N-ary Tree-LSTM, validation")
    first, last = data["childsum_first_last"]
    axes.plot(
        [1, len(epochs)],
        [first, last],
        "s",
        label="Child-Sum, validation (first and last epoch)",
    )
    axes.axhline(
        data["published"],
        color="gray",
        linestyle=":",
        label=f"published N-ary test ({data['published']}%)",
    )
    axes.set_xticks(epochs)
    axes.set_xlabel("epoch")
    axes.set_ylabel("accuracy (%)")
    axes.set_title("ListOps, 90,000 expressions")
    axes.legend(frameon=False, loc="lower right", fontsize=8)
    figure.tight_layout()
    _save(figure, "listops_curve.png")


def deep_residual_curve(path):
    figures = json.loads(pathlib.Path(path).read_text())
    settings = figures["settings"]
    figure = Figure(figsize=(6, 3.8))
    axes = figure.subplots()
    for name, model in figures["models"].items():
        losses = model["history"]["val_loss"]
        epochs = np.arange(1, len(losses) + 1)
        axes.plot(epochs, losses, "o-", label=name)
    axes.axhline(
        figures["baseline_mse"],
        color="gray",
        linestyle=":",
        label="predicting the mean",
    )
    axes.set_yscale("log")
    axes.set_xlabel("epoch")
    axes.set_ylabel("validation MSE (log scale)")
    axes.set_title(
        f"{settings['layers']} stacked LSTM layers x {settings['units']} "
        f"units, adding problem (T = {settings['length']})",
        fontsize=10,
    )
    axes.legend(frameon=False, fontsize=8)
    figure.tight_layout()
    _save(figure, "deep_residual_curve.png")


def gates(steps, seed):
    import keras

    import keras_recurrent as kr

    # Programs and their outputs, deterministic by seed, as the text.
    data = kr.datasets.program_eval(2000, length=2, nesting=2, seed=seed)
    text = "\n".join(
        f"{program}\n{target}"
        for program, target in zip(data["programs"], data["targets"])
    )
    alphabet = sorted(set(text))
    ids = np.array([alphabet.index(char) for char in text], dtype="int32")
    length, batch = 40, 32
    rng = np.random.default_rng(seed)
    keras.utils.set_random_seed(seed)
    inputs = keras.Input((length,), dtype="int32")
    x = keras.layers.Embedding(len(alphabet), 16)(inputs)
    rnn = kr.layers.GatedFeedbackRNN(
        [32, 32, 32], cell_type="lstm", return_sequences=True
    )
    outputs = keras.layers.Dense(len(alphabet))(rnn(x))
    model = keras.Model(inputs, outputs)
    model.compile(
        keras.optimizers.Adam(1e-2),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    for _ in range(steps):
        starts = rng.integers(0, len(ids) - length - 1, size=batch)
        windows = np.stack([ids[s : s + length + 1] for s in starts])
        loss = model.train_on_batch(windows[:, :-1], windows[:, 1:])
    print(f"gate model: {steps} steps, last training loss {loss:.3f}")
    starts = rng.integers(0, len(ids) - length, size=64)
    windows = np.stack([ids[s : s + length] for s in starts])
    embedded = model.layers[1](windows)
    values = rnn.gate_values(embedded)
    kr.plot.gate_heatmap(
        values,
        FIGURES / "gf_gates.png",
        per_time=True,
        title=(
            f"GF-LSTM 3 x 32, {steps} Adam steps of next-character "
            "prediction on generated programs"
        ),
    )
    print(f"wrote {FIGURES / 'gf_gates.png'}")


def tree_drawing():
    import keras_recurrent as kr

    vocabulary = {"MAX": 10, "MIN": 11, **{str(d): d for d in range(10)}}
    text = "(MAX 2 (MIN 3 4))"
    tree = kr.trees.encode_tree(text, vocabulary=vocabulary)
    labels = {v: k for k, v in vocabulary.items()}
    children = tree["children"]
    n = len(children)
    # Depth from the root (the last node in post-order) and x by leaf order.
    depth, x_pos, next_leaf = {n - 1: 0}, {}, [0]

    def place(node):
        kids = [k for k in children[node] if k >= 0]
        for kid in kids:
            depth[kid] = depth[node] + 1
            place(kid)
        if kids:
            x_pos[node] = np.mean([x_pos[k] for k in kids])
        else:
            x_pos[node] = next_leaf[0]
            next_leaf[0] += 1

    place(n - 1)
    figure = Figure(figsize=(8, 3.4))
    left, right = figure.subplots(
        1, 2, gridspec_kw={"width_ratios": [1.1, 1.0]}
    )
    for node in range(n):
        for kid in children[node]:
            if kid >= 0:
                left.plot(
                    [x_pos[node], x_pos[kid]],
                    [-depth[node], -depth[kid]],
                    color="gray",
                    zorder=1,
                )
    for node in range(n):
        token = int(tree["node_tokens"][node])
        left.scatter(
            x_pos[node], -depth[node], s=900, color="#cfe3f7", zorder=2
        )
        left.text(
            x_pos[node],
            -depth[node],
            f"{node}\n{labels[token]}",
            ha="center",
            va="center",
            fontsize=9,
            zorder=3,
        )
    left.set_title(f"{text}: node index and label", fontsize=10)
    left.set_xlim(-0.6, next_leaf[0] - 0.4)
    left.set_ylim(-max(depth.values()) - 0.6, 0.6)
    left.axis("off")
    rows = [
        [
            str(node),
            str(int(tree["node_tokens"][node])),
            str(children[node].tolist()),
        ]
        for node in range(n)
    ]
    table = right.table(
        cellText=rows,
        colLabels=["node", "node_tokens", "children"],
        loc="center",
        cellLoc="center",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(9)
    table.scale(1, 1.4)
    right.set_title(
        "kr.trees.encode_tree: post-order,\n"
        "children before parents, -1 = empty",
        fontsize=10,
    )
    right.axis("off")
    figure.tight_layout()
    _save(figure, "encoded_tree.png")


def graph_drawing():
    import keras_recurrent as kr

    edge_list = [(0, 1, 0), (1, 2, 0), (2, 0, 1), (2, 3, 1), (3, 1, 0)]
    graph = kr.graphs.encode_graph(edge_list, num_nodes=4, num_edge_types=2)
    positions = {0: (0.0, 1.0), 1: (1.0, 1.0), 2: (0.5, 0.0), 3: (1.6, 0.2)}
    colors = ["#1f77b4", "#d62728"]
    figure = Figure(figsize=(8, 3.4))
    left, right = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1]})
    for (source, target), kind in zip(graph["edges"], graph["edge_types"]):
        (x0, y0), (x1, y1) = positions[int(source)], positions[int(target)]
        left.annotate(
            "",
            xy=(x1, y1),
            xytext=(x0, y0),
            arrowprops={
                "arrowstyle": "-|>",
                "color": colors[int(kind)],
                "shrinkA": 14,
                "shrinkB": 14,
                "linewidth": 1.8,
                "connectionstyle": "arc3,rad=0.15",
            },
        )
    for node, (x, y) in positions.items():
        left.scatter(x, y, s=700, color="#e8e8e8", edgecolor="black", zorder=2)
        left.text(x, y, str(node), ha="center", va="center", zorder=3)
    for kind, color in enumerate(colors):
        left.plot([], [], color=color, label=f"edge type {kind}")
    left.legend(frameon=False, loc="lower left", fontsize=8)
    left.set_xlim(-0.3, 1.9)
    left.set_ylim(-0.35, 1.3)
    left.set_title("a graph of 4 nodes, 2 edge types", fontsize=10)
    left.axis("off")
    rows = [
        [str(row), f"{int(s)} -> {int(t)}", str(int(kind))]
        for row, ((s, t), kind) in enumerate(
            zip(graph["edges"], graph["edge_types"])
        )
    ]
    table = right.table(
        cellText=rows,
        colLabels=["row", "edges (src -> dst)", "edge_types"],
        loc="center",
        cellLoc="center",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(9)
    table.scale(1, 1.4)
    right.set_title(
        "kr.graphs.encode_graph; node_mask = "
        f"{graph['node_mask'].tolist()},\nnode_inputs = ones "
        f"{graph['node_inputs'].shape}",
        fontsize=10,
    )
    right.axis("off")
    figure.tight_layout()
    _save(figure, "encoded_graph.png")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    names = [
        "lstm",
        "gf_speed",
        "tree_speed",
        "ggnn",
        "listops",
        "residual",
        "gates",
        "tree",
        "graph",
    ]
    parser.add_argument("--only", nargs="+", choices=names, default=names)
    parser.add_argument(
        "--deep-residual-json",
        default=str(FIGURES / "deep_residual.json"),
        help="What examples/deep_residual.py --json-out wrote.",
    )
    parser.add_argument("--gate-steps", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    FIGURES.mkdir(exist_ok=True)
    draw = {
        "lstm": lstm_variants,
        "gf_speed": gated_feedback_speed,
        "tree_speed": tree_lstm_speed,
        "ggnn": ggnn_speed,
        "listops": listops_curve,
        "residual": lambda: deep_residual_curve(args.deep_residual_json),
        "gates": lambda: gates(args.gate_steps, args.seed),
        "tree": tree_drawing,
        "graph": graph_drawing,
    }
    for name in args.only:
        draw[name]()


if __name__ == "__main__":
    main()
