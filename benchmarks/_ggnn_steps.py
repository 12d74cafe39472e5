"""The steps `benchmarks/ggnn.py` times, each built in a process of its own.

Every builder imports its framework itself, so that a worker process
(`_worker.Contender`) holds only the one a user would run: Keras on the
backend of its `KERAS_BACKEND`, or PyTorch with PyTorch Geometric. Both
sides get the same graphs (`graph_arrays`, from a seed) and the same
targets.
"""

import numpy as np


def graph_arrays(num_graphs, num_nodes, num_edges, features, types, seed=0):
    """Random graphs as padded graph arrays and as flat PyG-style arrays."""
    rng = np.random.default_rng(seed)
    node_inputs = rng.normal(size=(num_graphs, num_nodes, features))
    edges = rng.integers(0, num_nodes, size=(num_graphs, num_edges, 2))
    edge_types = rng.integers(0, types, size=(num_graphs, num_edges))
    padded = {
        "node_inputs": node_inputs.astype(np.float32),
        "edges": edges.astype(np.int32),
        "edge_types": edge_types.astype(np.int32),
        "node_mask": np.ones((num_graphs, num_nodes), dtype=np.int32),
    }
    offsets = (np.arange(num_graphs) * num_nodes)[:, None, None]
    flat = {
        "x": padded["node_inputs"].reshape(-1, features),
        "edge_index": (edges + offsets).reshape(-1, 2).T.astype(np.int64),
        "edge_type": edge_types.reshape(-1).astype(np.int64),
    }
    return padded, flat


def target_array(num_graphs, num_nodes, units):
    rng = np.random.default_rng(1)
    return rng.normal(size=(num_graphs, num_nodes, units)).astype(np.float32)


GRAPH_KEYS = ("node_inputs", "edges", "edge_types", "node_mask")


def keras_model(
    padded,
    units,
    types,
    steps,
    reverse,
    jit_compile,
    aggregation,
    checks=True,
):
    """`GatedGraph` (no biases, as PyG's comparison) in a compiled model.

    Without `checks`, the layer propagates the graph as already checked
    (`GatedGraph.propagate`, as `GGSNN` calls it): the same step without
    the graph checks, which `_ggnn_profile` times against the one with
    them.
    """
    import keras
    from keras import ops

    import keras_recurrent as kr

    class Unchecked(keras.layers.Layer):
        def __init__(self, graph):
            super().__init__()
            self.graph = graph

        def build(self, input_shape):
            self.graph.build(input_shape)

        def call(self, inputs):
            node_inputs, edges, edge_types, node_mask = inputs
            return self.graph.propagate(
                node_inputs,
                ops.cast(edges, "int32"),
                ops.cast(edge_types, "int32"),
                ops.cast(node_mask, "bool"),
            )

    num_graphs, num_nodes, features = padded["node_inputs"].shape
    num_edges = padded["edges"].shape[1]
    inputs = [
        keras.Input((num_nodes, features), batch_size=num_graphs),
        keras.Input((num_edges, 2), batch_size=num_graphs, dtype="int32"),
        keras.Input((num_edges,), batch_size=num_graphs, dtype="int32"),
        keras.Input((num_nodes,), batch_size=num_graphs, dtype="int32"),
    ]
    layer = kr.layers.GatedGraph(
        units,
        types,
        propagation_steps=steps,
        add_reverse_edges=reverse,
        use_bias=False,
        aggregation=aggregation,
    )
    outputs = (layer if checks else Unchecked(layer))(inputs)
    model = keras.Model(inputs, outputs)
    model.compile(keras.optimizers.Adam(1e-3), "mse", jit_compile=jit_compile)
    return model


def keras_step(
    graphs,
    nodes,
    edges,
    features,
    units,
    types,
    steps,
    reverse,
    aggregation="auto",
    jit_compile="auto",
    train=True,
):
    """A `train_on_batch` (or `predict_on_batch`) step of `GatedGraph`."""
    padded, _ = graph_arrays(graphs, nodes, edges, features, types)
    model = keras_model(
        padded, units, types, steps, reverse, jit_compile, aggregation
    )
    target = target_array(graphs, nodes, units) if train else None
    return batch_step(model, padded, target)


def batch_step(model, padded, target=None):
    """`model.train_on_batch` on the padded graphs and a NumPy target, or
    `predict_on_batch` without a target, as a function of no argument."""
    from keras import ops

    inputs = [ops.convert_to_tensor(padded[key]) for key in GRAPH_KEYS]
    if target is None:
        return lambda: model.predict_on_batch(inputs)
    target = ops.convert_to_tensor(target)
    return lambda: model.train_on_batch(inputs, target)


def pyg_step(
    graphs,
    nodes,
    edges,
    features,
    units,
    types,
    steps,
    reverse,
    threads=None,
    train=True,
):
    """PyG's `GatedGraphConv` (one edge type, no reverse edges) or
    `TypedGatedGraphConv`, with an Adam step on the same MSE."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    padded, flat = graph_arrays(graphs, nodes, edges, features, types)
    torch.manual_seed(0)
    x = torch.from_numpy(flat["x"])
    edge_index = torch.from_numpy(flat["edge_index"])
    if types == 1 and not reverse:
        from torch_geometric.nn import GatedGraphConv

        # No GRU biases: the exact math of `GatedGraph(use_bias=False)`.
        module = GatedGraphConv(units, num_layers=steps, aggr="add", bias=False)
        arguments = (x, edge_index)
    else:
        from _typed_gated_graph_conv import TypedGatedGraphConv

        edge_type = torch.from_numpy(flat["edge_type"])
        total_types = types * (2 if reverse else 1)
        if reverse:
            edge_index = torch.cat([edge_index, edge_index.flip(0)], dim=1)
            edge_type = torch.cat([edge_type, edge_type + types])
        module = TypedGatedGraphConv(units, total_types, steps)
        arguments = (x, edge_index, edge_type)
    if not train:

        def forward():
            with torch.no_grad():
                module(*arguments)

        return forward
    target = target_array(graphs, nodes, units).reshape(-1, units)
    return adam_step(module, arguments, target)


def adam_step(module, arguments, target):
    """One Adam step of a PyTorch module on the MSE to a NumPy target."""
    import torch

    optimizer = torch.optim.Adam(module.parameters(), 1e-3)
    target = torch.from_numpy(target)

    def step():
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(module(*arguments), target)
        loss.backward()
        optimizer.step()

    return step
