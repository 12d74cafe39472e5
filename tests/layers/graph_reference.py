"""NumPy references of the gated graph layers, written edge by edge.

Deliberately naive (Python loops over graphs and edges, no flattening), so
that they share no code or trick with the layers they check.
"""

import keras
import numpy as np

import keras_recurrent as kr


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def gru_step(x, h, kernel, recurrent_kernel, bias, reset_after):
    """Keras' `GRUCell` (gates `[z, r, h]`), `h_new = z h + (1 - z) h~`."""
    units = h.shape[-1]
    if bias is None:
        input_bias = recurrent_bias = np.zeros(3 * units)
    elif reset_after:
        input_bias, recurrent_bias = bias[0], bias[1]
    else:
        input_bias, recurrent_bias = bias, np.zeros(3 * units)
    x_z, x_r, x_h = np.split(x @ kernel + input_bias, 3, axis=-1)
    r_kernel_z, r_kernel_r, r_kernel_h = np.split(recurrent_kernel, 3, axis=-1)
    r_bias_z, r_bias_r, r_bias_h = np.split(recurrent_bias, 3)
    z = sigmoid(x_z + h @ r_kernel_z + r_bias_z)
    r = sigmoid(x_r + h @ r_kernel_r + r_bias_r)
    if reset_after:
        candidate = np.tanh(x_h + r * (h @ r_kernel_h + r_bias_h))
    else:
        candidate = np.tanh(x_h + (r * h) @ r_kernel_h)
    return z * h + (1.0 - z) * candidate


def gated_graph_weights(layer):
    """The weights of a built `GatedGraph`, as float64 NumPy arrays."""

    def value(variable):
        if variable is None:
            return None
        return keras.ops.convert_to_numpy(variable).astype("float64")

    weights = {
        "message_kernel": value(layer.message_kernel),
        "message_bias": value(layer.message_bias),
    }
    if layer.update_cell is None:  # The default GRU.
        weights["kernel"] = value(layer.gru.kernel)
        weights["recurrent_kernel"] = value(layer.gru.recurrent_kernel)
        weights["bias"] = value(layer.gru.bias) if layer.use_bias else None
    return weights


def gated_graph(
    node_inputs,
    edges,
    edge_types,
    node_mask,
    weights,
    *,
    num_edge_types,
    propagation_steps,
    add_reverse_edges,
    reset_after=True,
    concatenate_directions=False,
    update=None,
    state_sizes=(),
):
    """GG-NN propagation, graph by graph and edge by edge.

    With `concatenate_directions`, the GRU input is `[Σ forward messages,
    Σ reverse messages]` (the paper's Eq. 2), else their total. `update`,
    if given, replaces the GRU: a NumPy function `(sums, [h, *others]) ->
    new states`, whose other states, of `state_sizes[1:]` entries, start
    at zero.
    """
    batch_size, num_nodes, features = node_inputs.shape
    units = weights["message_kernel"].shape[-1]
    outputs = np.zeros((batch_size, num_nodes, units))
    for graph in range(batch_size):
        real = np.asarray(node_mask[graph]).astype(bool)
        node_states = np.zeros((num_nodes, units))
        node_states[real, :features] = node_inputs[graph][real]
        others = [np.zeros((num_nodes, size)) for size in state_sizes[1:]]
        cell_states = [node_states, *others]
        for _ in range(propagation_steps):
            states = cell_states[0]
            incoming = np.zeros((num_nodes, 2, units))
            for (source, target), edge_type in zip(
                edges[graph], edge_types[graph], strict=True
            ):
                if source == -1:
                    continue
                passes = [(source, target, edge_type, 0)]
                if add_reverse_edges:
                    passes.append(
                        (target, source, edge_type + num_edge_types, 1)
                    )
                for sender, receiver, message_type, direction in passes:
                    message = (
                        states[sender] @ weights["message_kernel"][message_type]
                    )
                    if weights["message_bias"] is not None:
                        message = (
                            message + weights["message_bias"][message_type]
                        )
                    incoming[receiver, direction] += message
            if concatenate_directions:
                incoming_sums = incoming.reshape(num_nodes, 2 * units)
            else:
                incoming_sums = incoming.sum(axis=1)
            if update is not None:
                cell_states = update(incoming_sums, cell_states)
                continue
            cell_states = [
                gru_step(
                    incoming_sums,
                    states,
                    weights["kernel"],
                    weights["recurrent_kernel"],
                    weights["bias"],
                    reset_after,
                )
            ]
        outputs[graph][real] = cell_states[0][real]
    return outputs


def lstm_step(x, states, kernel, recurrent_kernel, bias):
    """Keras' `LSTMCell` (gates `[i, f, c, o]`): the new `[h, c]`."""
    h, c = states
    z = x @ kernel + h @ recurrent_kernel + bias
    i, f, g, o = np.split(z, 4, axis=-1)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return [sigmoid(o) * np.tanh(c), c]


def graph_readout(node_states, node_inputs, node_mask, kernel, bias):
    """`tanh(Σ_v real σ(i([h, x])) ⊙ tanh(j([h, x])))`, graph by graph."""
    units = kernel.shape[1] // 2
    outputs = np.zeros((node_states.shape[0], units))
    for graph in range(node_states.shape[0]):
        total = np.zeros(units)
        for node in range(node_states.shape[1]):
            if not node_mask[graph, node]:
                continue
            z = np.concatenate(
                [node_states[graph, node], node_inputs[graph, node]]
            )
            z = z @ kernel + (0.0 if bias is None else bias)
            total += sigmoid(z[:units]) * np.tanh(z[units:])
        outputs[graph] = np.tanh(total)
    return outputs


def node_selection(
    node_states, node_inputs, node_mask, kernel, bias, hidden=None
):
    """Per-node logits `g([h, x])`, `-1e9` at padding nodes."""
    features = np.concatenate([node_states, node_inputs], axis=-1)
    if hidden is not None:
        hidden_kernel, hidden_bias = hidden
        features = np.tanh(features @ hidden_kernel + hidden_bias)
    logits = (features @ kernel)[..., 0] + bias[0]
    return np.where(np.asarray(node_mask).astype(bool), logits, -1e9)


def node_data(seed=0, batch_size=3, num_nodes=5, units=4, features=2):
    """Random node states and annotations; graph `g` has `g` padding nodes."""
    rng = np.random.default_rng(seed)
    states = rng.normal(size=(batch_size, num_nodes, units)).astype("float32")
    node_inputs = rng.normal(size=(batch_size, num_nodes, features))
    node_mask = np.zeros((batch_size, num_nodes), dtype="int32")
    for graph in range(batch_size):
        node_mask[graph, : num_nodes - graph] = 1
    return states, node_inputs.astype("float32"), node_mask


def randomize_weights(layer, seed=0, scale=0.5):
    """Sets every weight of `layer` to normal noise (biases included)."""
    rng = np.random.default_rng(seed)
    layer.set_weights(
        [
            rng.normal(scale=scale, size=weight.shape).astype("float32")
            for weight in layer.get_weights()
        ]
    )


def random_graphs(seed=0, num_graphs=3, num_edge_types=2, features=3):
    """A small padded batch: varied sizes, self-loops, parallel edges.

    Returns the dict of `kr.graphs.encode_graphs` with `N = 6`, `E = 8`.
    """
    rng = np.random.default_rng(seed)
    graphs = []
    for index in range(num_graphs):
        num_nodes = 3 + index  # 3, 4, 5, ... nodes: all batches have padding
        num_edges = 4 + index
        edges = [
            (
                int(rng.integers(num_nodes)),
                int(rng.integers(num_nodes)),
                int(rng.integers(num_edge_types)),
            )
            for _ in range(num_edges)
        ]
        edges[0] = (0, 0, 0)  # a self-loop
        edges[1] = edges[2] = (1, 2, num_edge_types - 1)  # parallel edges
        graphs.append(
            {
                "edges": edges,
                "node_inputs": rng.normal(size=(num_nodes, features)),
            }
        )
    return kr.graphs.encode_graphs(
        graphs, num_nodes=6, num_edges=8, num_edge_types=num_edge_types
    )


def as_list(graphs):
    """The dict of graph tensors as the list the layers take."""
    return [graphs[name] for name in kr.graphs.GRAPH_TENSOR_NAMES]


def permute_nodes(graphs, graph, permutation):
    """Relabels the nodes of one graph of a padded batch.

    Node `v` becomes node `permutation[v]`. Padding stays padding (the
    permutation may move it anywhere).
    """
    permuted = {name: np.array(array) for name, array in graphs.items()}
    inverse = np.argsort(permutation)
    permuted["node_inputs"][graph] = graphs["node_inputs"][graph][inverse]
    permuted["node_mask"][graph] = graphs["node_mask"][graph][inverse]
    edges = graphs["edges"][graph]
    permuted["edges"][graph] = np.where(
        edges >= 0, np.asarray(permutation)[np.maximum(edges, 0)], -1
    )
    return permuted
