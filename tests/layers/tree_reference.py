"""NumPy Tree-LSTMs that process one tree recursively, node by node."""

import numpy as np

import keras_recurrent as kr


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def tree_lstm(x, children, weights, kind, units):
    """States `(h, c)` of every node of one unpadded tree, recursively.

    `x` `(n, D)`, `children` a list of child index lists (slot order).
    """
    kernel = weights["kernel"]
    recurrent = weights["recurrent_kernel"]
    bias = weights.get("bias", np.zeros(4 * units))
    h = [None] * len(children)
    c = [None] * len(children)

    def block(matrix, index, width=units):
        return matrix[..., index * width : (index + 1) * width]

    def visit(node):
        for child in children[node]:
            if child >= 0 and h[child] is None:
                visit(child)
        projected = x[node] @ kernel + bias
        x_i, x_f, x_o, x_u = (block(projected, k) for k in range(4))
        if kind == "child_sum":
            kids = [k for k in children[node] if k >= 0]
            h_sum = sum((h[k] for k in kids), np.zeros(units))
            i = sigmoid(x_i + h_sum @ block(recurrent, 0))
            o = sigmoid(x_o + h_sum @ block(recurrent, 2))
            u = np.tanh(x_u + h_sum @ block(recurrent, 3))
            cell = i * u
            for k in kids:
                f = sigmoid(x_f + h[k] @ block(recurrent, 1))
                cell = cell + f * c[k]
        else:
            arity = recurrent.shape[0] // units
            slots = list(children[node]) + [-1] * (arity - len(children[node]))
            h_slots = [h[k] if k >= 0 else np.zeros(units) for k in slots]
            c_slots = [c[k] if k >= 0 else np.zeros(units) for k in slots]

            def recurrent_term(column):
                return sum(
                    h_slots[slot]
                    @ block(recurrent, column)[
                        slot * units : (slot + 1) * units
                    ]
                    for slot in range(arity)
                )

            i = sigmoid(x_i + recurrent_term(0))
            o = sigmoid(x_o + recurrent_term(1 + arity))
            u = np.tanh(x_u + recurrent_term(2 + arity))
            cell = i * u
            for k in range(arity):
                f = sigmoid(x_f + recurrent_term(1 + k))
                cell = cell + f * c_slots[k]
        c[node] = cell
        h[node] = o * np.tanh(cell)

    # Deep chains: visit bottom-up so the recursion stays shallow.
    for node in range(len(children)):
        if h[node] is None:
            visit(node)
    return np.stack(h), np.stack(c)


def mixed_trees():
    """A chain, a star, a full binary tree and a single node."""
    chain = ("a", ("b", ("c", ("d", "e"))))
    star = ("s", "1", "2", "3", "4")
    binary = ("r", ("p", "1", "2"), ("q", "3", "4"))
    return [chain, star, binary, "x"]


def random_weights(layer, seed=0):
    rng = np.random.default_rng(seed)
    values = []
    for weight in layer.weights:
        values.append(rng.uniform(-0.6, 0.6, size=weight.shape))
    layer.set_weights(values)
    return {
        weight.name: np.asarray(weight.numpy(), dtype="float64")
        for weight in layer.weights
    }


def encode(trees, num_children, features, seed=0, **kwargs):
    """The padded tree tensors with random node inputs."""
    batch = kr.trees.encode_trees(
        trees,
        vocabulary=lambda label: 0,
        num_children=num_children,
        **kwargs,
    )
    rng = np.random.default_rng(seed)
    shape = batch["node_mask"].shape + (features,)
    node_inputs = rng.normal(size=shape).astype("float32")
    node_inputs *= batch["node_mask"][..., None]
    return [node_inputs, batch["children"], batch["node_mask"]]


def expected_states(inputs, weights, kind, units):
    """Node states `(B, N, units)` of the reference, zeros at padding."""
    node_inputs, children, node_mask = inputs
    h_all = np.zeros(node_mask.shape + (units,))
    c_all = np.zeros(node_mask.shape + (units,))
    for tree in range(len(node_mask)):
        size = int(node_mask[tree].sum())
        kids = [list(children[tree, node]) for node in range(size)]
        if kind == "child_sum":
            kids = [[k for k in slots if k >= 0] for slots in kids]
        h, c = tree_lstm(
            node_inputs[tree, :size].astype("float64"),
            kids,
            weights,
            kind,
            units,
        )
        h_all[tree, :size], c_all[tree, :size] = h, c
    return h_all, c_all
