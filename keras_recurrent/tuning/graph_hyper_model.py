"""HyperModel searching over gated graph neural networks."""

import math

import keras

from keras_recurrent import graphs as graph_encoding
from keras_recurrent import layers as recurrent_layers
from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_option
from keras_recurrent._checks import check_output_units
from keras_recurrent._checks import check_positive_int
from keras_recurrent.tuning._hyper_model import RecurrentHyperModel
from keras_recurrent.tuning._hyper_model import choice

_TASKS = ("graph_classification", "graph_regression", "node_selection")


class GraphHyperModel(RecurrentHyperModel):
    """HyperModel for gated graph neural networks (GG-NN and GGS-NN).

    Builds a functional model on the four graph inputs of
    `kr.graphs.graph_inputs` (`node_inputs`, `edges`, `edge_types`,
    `node_mask`; fit it on the dict of `kr.graphs.encode_graphs`), compiled
    with Adam:

    - `"graph_classification"`, `"graph_regression"`: a `GatedGraph`, a
      readout and a `Dense(output_units)` head: logits with
      `SparseCategoricalCrossentropy(from_logits=True)` and accuracy, or a
      linear output with the mean squared error.
    - `"node_selection"`: a `GatedGraph` and a `NodeSelection` head, logits
      over the nodes with `SparseCategoricalCrossentropy(from_logits=True)`
      and accuracy; the target is the answer node's index.
    - With `output_steps` (GGS-NN), for `"node_selection"` or
      `"graph_classification"`: one `GGSNN` layer emitting `output_steps`
      outputs; targets are `(batch, output_steps)` indices.

    Hyperparameters, all declared in `build` (fix any with
    `hp.Fixed(name, value)` to take it out of the search):

    - `units`: Int in `[16, 256]`, step 16. Default 64. The lower bound
      (and the default, if needed) rises to the multiple of 16 that holds
      `node_features`, since node states start as the zero-padded
      annotations.
    - `propagation_steps`: Int in `[1, 10]`. Default 5.
    - `readout` (graph tasks without `output_steps` only): Choice of
      `"gated"` (the paper's `GraphReadout` with `units` outputs),
      `"mean"`, `"max"` or `"attention"` (`kr.layers.SequencePooling` over
      the real nodes). Default `"gated"`.
    - `propagation` (with `add_reverse_edges` only): Choice of `"sum"`
      (the GRU reads the sum of all messages, with the reset gate after
      the recurrent matmul: the `GatedGraph` defaults) or `"paper"` (the
      GRU reads the sums of the forward and of the reverse messages side
      by side, the paper's Eq. 2, with the reset gate before the recurrent
      matmul: `concatenate_directions=True, reset_after=False`).
      Default `"sum"`.
    - `learning_rate`: Float in `[1e-4, 1e-2]`, log sampling. Default 1e-3.

    Args:
        node_features: Positive integer, the number of node features `D`.
        num_edge_types: Positive integer, the number of edge types.
        task: `"graph_classification"` (default), `"graph_regression"` or
            `"node_selection"`.
        output_units: Positive integer: the number of classes (at least 2)
            for graph classification, of targets for regression. Must be
            `None` for node selection.
        output_steps: Optional positive integer: build a GGS-NN with this
            many outputs (not for regression). Defaults to `None`.
        num_nodes: Optional positive integer, a fixed padded number of nodes
            (static shapes). Defaults to `None`, any.
        num_edges: Optional positive integer, a fixed padded number of
            edges. Defaults to `None`, any.
        add_reverse_edges: Passed to the propagation layers.
            Defaults to `True`.
        name: Optional name of the HyperModel, also used for the model.
        tunable: Whether the hyperparameters defined in this HyperModel
            should be added to the search space. Defaults to `True`.

    Returns:
        `build(hp)` returns a compiled `keras.Model` mapping the dict of
        graph tensors to `(batch, output_units)` (graph tasks), `(batch, N)`
        (node selection), or with `output_steps` to
        `(batch, output_steps, output_units)` or `(batch, output_steps, N)`.

    Example:

    >>> hypermodel = kr.tuning.GraphHyperModel(
    ...     node_features=2, num_edge_types=4, task="node_selection")
    >>> tuner = keras_tuner.RandomSearch(
    ...     hypermodel, objective="val_accuracy", max_trials=3,
    ...     directory=tmp_dir)
    >>> tuner.search(graphs, answers, epochs=10, validation_split=0.2)
    >>> best_model = tuner.get_best_models(1)[0]

    Reference:
        - [Li et al., 2016. Gated Graph Sequence Neural Networks](
          https://arxiv.org/abs/1511.05493)
    """

    TASKS = _TASKS
    READOUTS = ("gated", "mean", "max", "attention")
    # The `propagation` choices, as `GatedGraph` arguments.
    PROPAGATIONS = {
        "sum": dict(concatenate_directions=False, reset_after=True),
        "paper": dict(concatenate_directions=True, reset_after=False),
    }

    def __init__(
        self,
        node_features,
        num_edge_types,
        *,
        task="graph_classification",
        output_units=None,
        output_steps=None,
        num_nodes=None,
        num_edges=None,
        add_reverse_edges=True,
        name=None,
        tunable=True,
    ):
        super().__init__(name=name, tunable=tunable)
        check_positive_int("node_features", node_features)
        check_positive_int("num_edge_types", num_edge_types)
        task = check_option("task", task, _TASKS)
        if task == "node_selection":
            if output_units is not None:
                raise ValueError(
                    "Argument `output_units` must be None for "
                    "task='node_selection' (the outputs are the nodes). "
                    f"Received: output_units={output_units!r}"
                )
        else:
            check_output_units(
                output_units,
                task,
                classification=task == "graph_classification",
            )
        if output_steps is not None:
            check_positive_int("output_steps", output_steps, allow_none=True)
            if task == "graph_regression":
                raise ValueError(
                    "Argument `output_steps` (a GGS-NN) needs "
                    "task='node_selection' or 'graph_classification'. "
                    f"Received: output_steps={output_steps!r}, task={task!r}"
                )
        check_positive_int("num_nodes", num_nodes, allow_none=True)
        check_positive_int("num_edges", num_edges, allow_none=True)
        check_bool("add_reverse_edges", add_reverse_edges)
        self.node_features = int(node_features)
        self.num_edge_types = int(num_edge_types)
        self.task = task
        self.output_units = None if output_units is None else int(output_units)
        self.output_steps = None if output_steps is None else int(output_steps)
        self.num_nodes = num_nodes
        self.num_edges = num_edges
        self.add_reverse_edges = add_reverse_edges

    def build(self, hp):
        min_units = max(16, 16 * math.ceil(self.node_features / 16))
        units = hp.Int(
            "units",
            min_units,
            max(256, min_units),
            step=16,
            default=max(64, min_units),
        )
        propagation_steps = hp.Int("propagation_steps", 1, 10, default=5)
        readout = None
        if self.task != "node_selection" and self.output_steps is None:
            readout = choice(hp, "readout", self.READOUTS, "gated")
        propagation = self.PROPAGATIONS["sum"]
        if self.add_reverse_edges:
            propagation = self.PROPAGATIONS[
                choice(hp, "propagation", self.PROPAGATIONS, "sum")
            ]
        learning_rate = hp.Float(
            "learning_rate", 1e-4, 1e-2, sampling="log", default=1e-3
        )

        inputs = graph_encoding.graph_inputs(
            self.node_features,
            num_nodes=self.num_nodes,
            num_edges=self.num_edges,
        )
        node_inputs, node_mask = inputs["node_inputs"], inputs["node_mask"]
        if self.output_steps is not None:
            classification = self.task == "graph_classification"
            outputs = recurrent_layers.GGSNN(
                units,
                self.num_edge_types,
                self.output_steps,
                task=self.task,
                num_classes=self.output_units if classification else None,
                propagation_steps=propagation_steps,
                add_reverse_edges=self.add_reverse_edges,
                **propagation,
                name="ggsnn",
            )(inputs)
        else:
            states = recurrent_layers.GatedGraph(
                units,
                self.num_edge_types,
                propagation_steps=propagation_steps,
                add_reverse_edges=self.add_reverse_edges,
                **propagation,
                name="gated_graph",
            )(inputs)
            if self.task == "node_selection":
                outputs = recurrent_layers.NodeSelection(name="node_selection")(
                    [states, node_inputs, node_mask]
                )
            else:
                if readout == "gated":
                    graph = recurrent_layers.GraphReadout(
                        units, name="readout"
                    )([states, node_inputs, node_mask])
                else:
                    graph = recurrent_layers.SequencePooling(
                        readout, name="readout"
                    )(states, mask=node_mask)
                outputs = keras.layers.Dense(self.output_units, name="head")(
                    graph
                )
        model = keras.Model(inputs, outputs, name=self.name)

        if self.task == "graph_regression":
            loss, metrics = "mse", None
        else:
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            metrics = ["accuracy"]
        model.compile(
            optimizer=keras.optimizers.Adam(learning_rate=learning_rate),
            loss=loss,
            metrics=metrics,
        )
        return model
