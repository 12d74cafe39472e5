"""Gated graph sequence neural networks (GGS-NN) of Li et al. (2016)."""

import warnings

import keras
from keras import initializers
from keras import ops

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_option
from keras_recurrent._checks import check_positive_int
from keras_recurrent.graphs.validation import GRAPH_TENSOR_NAMES
from keras_recurrent.layers._graph_checks import check_graph_input_shapes
from keras_recurrent.layers._graph_checks import check_host_graph
from keras_recurrent.layers._graph_checks import poison_invalid_graphs
from keras_recurrent.layers._graph_checks import prepare_graph_inputs
from keras_recurrent.layers._graph_checks import unpack_graph_inputs
from keras_recurrent.layers._initializers import reseeded
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers.gated_graph import GatedGraph
from keras_recurrent.layers.graph_readout import GraphReadout
from keras_recurrent.layers.node_selection import NodeSelection

TASKS = ("node_selection", "graph_classification")


@keras.saving.register_keras_serializable(package="keras_recurrent")
class GGSNN(KnownRankInputs, keras.layers.Layer):
    """Gated graph sequence neural network: a sequence of outputs per graph.

    Call it, like `kr.layers.GatedGraph`, on the list
    `[node_inputs, edges, edge_types, node_mask]` (or a dict with these
    keys). It emits `output_steps` outputs per graph, re-annotating the
    nodes between output steps as in section 4 of "Gated Graph Sequence
    Neural Networks" (Li et al., 2016). With `X^(1)` the `node_inputs`,
    for `k = 1 .. output_steps`:

    ```
    H^(k)     = GatedGraph_o(X^(k), edges)        (F_o's propagation)
    o^(k)     = NodeSelection([H^(k), X^(k)])      (`task` picks
                or Dense(GraphReadout([H^(k), X^(k)]))  the head)
    H_X^(k)   = GatedGraph_X(X^(k), edges)        (F_X's propagation; the
                                                   same as H^(k) with
                                                   share_propagation)
    X^(k+1)_v = σ([H_X^(k)_v, X^(k)_v] W + b)      (the next annotations)
    ```

    With `hidden_units`, each output network gets one `tanh` hidden layer
    of that width, as in the paper's code (`yujiali/ggnn`, whose output
    networks all have one hidden layer of the state size): the node scores
    become `g = w · tanh([h_v, x_v] U + c) + b` (`NodeSelection`'s
    `hidden_units`), the class logits `tanh(h_G U + c) W + b`, and the next
    annotations `σ(tanh([H_X_v, X_v] U + c) W + b)`.

    Each propagation starts again from the annotations zero-padded to
    `units`. All weights are shared across output steps. For path answers
    (bAbI task 19, shortest paths), output step `k` predicts the `k`-th
    element of the path: a node (`"node_selection"`) or a class such as a
    direction (`"graph_classification"`). Answers shorter than
    `output_steps` can be padded with an end class or masked with sample
    weights. With `return_annotations`, the annotations read at each step
    are returned too, for the paper's supervision of intermediate
    annotations.

    Sublayers and weights:

    - `output_propagation`: a `GatedGraph` (`message_kernel`,
      `message_bias`, `gru/...`).
    - `annotation_propagation`: a second `GatedGraph`, unless
      `share_propagation`.
    - `annotation`: a `Dense(D, activation="sigmoid")`, kernel
      `(units + D, D)`; with `hidden_units`, after `annotation_hidden`, a
      `Dense(hidden_units, activation="tanh")` (and `annotation`'s kernel
      is `(hidden_units, D)`).
    - With `"node_selection"`: `node_selection`, a `NodeSelection`
      (`NodeSelection(hidden_units=hidden_units)`).
      With `"graph_classification"`: `readout`, a
      `GraphReadout(readout_units)`, and `classifier`, a
      `Dense(num_classes)` giving logits; with `hidden_units`, after
      `classifier_hidden`, a `Dense(hidden_units, activation="tanh")`.

    Args:
        units: Positive integer, the node state size of the propagations
            (at least the number of node features `D`).
        num_edge_types: Positive integer, the number of edge types.
        output_steps: Positive integer, the number of outputs per graph.
        task: `"node_selection"` (default): each output is logits over the
            nodes. `"graph_classification"`: each output is logits over
            `num_classes` classes. (The name of `kr.tuning.GraphHyperModel`'s
            argument; `output_mode=`, its former name, is still accepted
            with a `DeprecationWarning`, and configs saved with it load.)
        num_classes: Positive integer, the number of classes for
            `"graph_classification"`; must be `None` otherwise.
        propagation_steps: Positive integer, the propagation steps of each
            `GatedGraph`. Defaults to 5.
        add_reverse_edges: Passed to the `GatedGraph`s. Defaults to `True`.
        concatenate_directions: Passed to the `GatedGraph`s: `True` for
            the paper's GRU input `[Σ forward, Σ reverse messages]`.
            Defaults to `False`.
        share_propagation: Whether `F_o` and `F_X` share one propagation
            model (the paper tries both). Defaults to `False`.
        readout_units: Positive integer, the `GraphReadout` size for
            `"graph_classification"`. Defaults to `units`.
        hidden_units: Optional positive integer: the node-selection, class
            and annotation networks each get one `tanh` hidden layer of
            this width (the paper's code uses the state size, `units`).
            `None` (default): they are linear (then a sigmoid for the
            annotations).
        return_annotations: Whether to also return the annotations.
            Defaults to `False`.
        use_bias: Passed to the `GatedGraph`s. Defaults to `True`.
        reset_after: Passed to the `GatedGraph`s. Defaults to `True`.
        kernel_initializer: Initializer of every kernel: the `GatedGraph`s'
            `message_kernel` and `gru/kernel`, and the kernels of the output
            networks. Defaults to `"glorot_uniform"`.
        recurrent_initializer: Initializer of the `GatedGraph`s'
            `gru/recurrent_kernel`. Defaults to `"orthogonal"`.
        bias_initializer: Initializer of every bias. Defaults to `"zeros"`.
            Each weight draws its own values: a name (such as the defaults)
            makes a fresh initializer in each sublayer, as Keras layers
            do; an initializer instance or config is reseeded per sublayer
            (seed + a fixed offset), as in `GatedGraph`.
        **kwargs: Standard layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: The list `[node_inputs, edges, edge_types, node_mask]`, or a
            dict with these keys, as for `GatedGraph`: float `(batch, N, D)`,
            int `(batch, E, 2)` with `-1` padding rows, int `(batch, E)` and
            bool or int `(batch, N)`.
        training: Python boolean, passed to the sublayers.

    Returns:
        The logits of every output step: `(batch, output_steps, N)` for
        `"node_selection"` (padding nodes at `-1e9`), or
        `(batch, output_steps, num_classes)` for `"graph_classification"`.
        With `return_annotations`, the tuple `(logits, annotations)`, where
        `annotations` `(batch, output_steps, N, D)` holds at `[:, k]` the
        `X^(k+1)` that output step `k` read (`[:, 0]` is `node_inputs`,
        zero at padding nodes). Bad input is refused as by `GatedGraph`;
        where no assertion can run (XLA, traced JAX or PyTorch code), the
        logits and annotations of a graph with a bad edge or `node_mask`
        entry are NaN, and the other graphs' are unaffected.

    Shapes:
        - **input:** `(B, N, D)`, `(B, E, 2)`, `(B, E)`, `(B, N)`
        - **output:** `(B, K, N)` or `(B, K, num_classes)`, and with
          `return_annotations` also `(B, K, N, D)`, where
          `K = output_steps`.

    Example:

    >>> inputs = kr.graphs.graph_inputs(2, num_nodes=10)
    >>> path = kr.layers.GGSNN(16, num_edge_types=2, output_steps=3)(inputs)
    >>> model = keras.Model(inputs, path)
    >>> model.output_shape  # 3 steps, logits over 10 nodes
    (None, 3, 10)
    >>> model.compile("adam", keras.losses.SparseCategoricalCrossentropy(
    ...     from_logits=True))  # targets: (batch, 3) node indices

    Reference:
        - [Li et al., 2016. Gated Graph Sequence Neural Networks](
          https://arxiv.org/abs/1511.05493)
    """

    input_tensor_names = GRAPH_TENSOR_NAMES

    def __init__(
        self,
        units,
        num_edge_types,
        output_steps,
        task="node_selection",
        num_classes=None,
        propagation_steps=5,
        add_reverse_edges=True,
        concatenate_directions=False,
        share_propagation=False,
        readout_units=None,
        hidden_units=None,
        return_annotations=False,
        use_bias=True,
        reset_after=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        **kwargs,
    ):
        # Messages name the argument as the caller spelled it.
        task_argument = "task"
        if "output_mode" in kwargs:
            task_argument = "output_mode"
            task = _deprecated_output_mode(task, kwargs.pop("output_mode"))
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.num_edge_types = check_positive_int(
            "num_edge_types", num_edge_types
        )
        self.output_steps = check_positive_int("output_steps", output_steps)
        task = check_option(task_argument, task, TASKS)
        self.task = task
        if task == "graph_classification":
            self.num_classes = check_positive_int("num_classes", num_classes)
        elif num_classes is not None:
            raise ValueError(
                "Argument `num_classes` is only for "
                f"{task_argument}='graph_classification'. "
                f"Received: num_classes={num_classes!r}, "
                f"{task_argument}={task!r}"
            )
        else:
            self.num_classes = None
        self.readout_units = check_positive_int(
            "readout_units", readout_units, allow_none=True
        )
        self.hidden_units = check_positive_int(
            "hidden_units", hidden_units, allow_none=True
        )
        check_bool("add_reverse_edges", add_reverse_edges)
        check_bool("concatenate_directions", concatenate_directions)
        check_bool("share_propagation", share_propagation)
        check_bool("return_annotations", return_annotations)
        check_bool("use_bias", use_bias)
        check_bool("reset_after", reset_after)
        self.propagation_steps = check_positive_int(
            "propagation_steps", propagation_steps
        )
        self.add_reverse_edges = add_reverse_edges
        self.concatenate_directions = concatenate_directions
        self.share_propagation = share_propagation
        self.return_annotations = return_annotations
        self.use_bias = use_bias
        self.reset_after = reset_after
        # A name is kept as it is, for each sublayer to make its own
        # initializer from (so the defaults start the sublayers exactly as
        # their own defaults would); anything else becomes one instance.
        (
            self.kernel_initializer,
            self.recurrent_initializer,
            self.bias_initializer,
        ) = (
            value if isinstance(value, str) else initializers.get(value)
            for value in (
                kernel_initializer,
                recurrent_initializer,
                bias_initializer,
            )
        )
        # Seed offsets: sublayer k draws its kernels from offset
        # k * (T + 1) and its biases from 2 * k on, since a `GatedGraph`
        # uses T + 1 kernel offsets (T message types, then `gru/kernel`)
        # and 2 bias ones, a `NodeSelection` 2 of each.
        self._kernel_offset_step = 1 + num_edge_types * (
            2 if add_reverse_edges else 1
        )

        def propagation(name, index):
            return GatedGraph(
                units,
                num_edge_types,
                propagation_steps=propagation_steps,
                add_reverse_edges=add_reverse_edges,
                concatenate_directions=concatenate_directions,
                use_bias=use_bias,
                reset_after=reset_after,
                **self._initializers(index, recurrent=True),
                name=name,
                dtype=self.dtype_policy,
            )

        self.output_propagation = propagation("output_propagation", 0)
        self.annotation_propagation = (
            None
            if share_propagation
            else propagation("annotation_propagation", 1)
        )
        if task == "node_selection":
            self.node_selection = NodeSelection(
                hidden_units=hidden_units,
                **self._initializers(2),
                name="node_selection",
                dtype=self.dtype_policy,
            )
        else:
            self.readout = GraphReadout(
                self.readout_units or units,
                **self._initializers(2),
                name="readout",
                dtype=self.dtype_policy,
            )
            self.classifier_hidden = self._hidden_layer("classifier_hidden", 3)
            self.classifier = keras.layers.Dense(
                self.num_classes,
                **self._initializers(4),
                name="classifier",
                dtype=self.dtype_policy,
            )
        self.annotation_hidden = self._hidden_layer("annotation_hidden", 5)

    @property
    def output_mode(self):
        """Deprecated name of `task`."""
        warnings.warn(
            "`GGSNN.output_mode` is deprecated; use `GGSNN.task`.",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.task

    def _initializers(self, index, recurrent=False):
        """The initializers of sublayer `index`, with its own seeds."""
        names = {
            "kernel_initializer": index * self._kernel_offset_step,
            "bias_initializer": 2 * index,
        }
        if recurrent:
            names["recurrent_initializer"] = index
        return {
            name: value if isinstance(value, str) else reseeded(value, offset)
            for name, offset in names.items()
            for value in [getattr(self, name)]
        }

    def _hidden_layer(self, name, index):
        """A `tanh` hidden layer of an output network, or `None`."""
        if self.hidden_units is None:
            return None
        return keras.layers.Dense(
            self.hidden_units,
            activation="tanh",
            **self._initializers(index),
            name=name,
            dtype=self.dtype_policy,
        )

    def build(self, input_shape):
        shapes = unpack_graph_inputs(self, input_shape)
        check_graph_input_shapes(self, shapes)
        self.output_propagation.build(shapes)
        if self.annotation_propagation is not None:
            self.annotation_propagation.build(shapes)
        node_inputs_shape = tuple(shapes[0])
        batch_size, num_nodes, features = node_inputs_shape
        self._node_features = features
        self.annotation = keras.layers.Dense(
            features,
            activation="sigmoid",
            **self._initializers(6),
            name="annotation",
            dtype=self.dtype_policy,
        )
        annotation_inputs = self.units + features
        if self.annotation_hidden is not None:
            self.annotation_hidden.build(
                (batch_size, num_nodes, annotation_inputs)
            )
            annotation_inputs = self.hidden_units
        self.annotation.build((batch_size, num_nodes, annotation_inputs))
        states_shape = (batch_size, num_nodes, self.units)
        node_shapes = [states_shape, node_inputs_shape, tuple(shapes[3])]
        if self.task == "node_selection":
            self.node_selection.build(node_shapes)
        else:
            self.readout.build(node_shapes)
            classifier_inputs = self.readout.units
            if self.classifier_hidden is not None:
                self.classifier_hidden.build((batch_size, classifier_inputs))
                classifier_inputs = self.hidden_units
            self.classifier.build((batch_size, classifier_inputs))

    def check_host_inputs(self, inputs):
        check_host_graph(self, inputs, self.num_edge_types)

    def call(self, inputs, training=False):
        node_inputs, edges, edge_types, node_mask, valid = prepare_graph_inputs(
            self, inputs, self.num_edge_types, self._node_features
        )
        is_real = ops.expand_dims(node_mask, -1)
        annotations = ops.cast(node_inputs, self.compute_dtype)
        annotations = ops.where(
            is_real, annotations, ops.zeros_like(annotations)
        )
        outputs = []
        read_annotations = []
        for step in range(self.output_steps):
            read_annotations.append(annotations)
            # The graph is checked once, above: the propagations run on it
            # as prepared.
            graph = [annotations, edges, edge_types, node_mask]
            states = self.output_propagation.propagate(
                *graph, training=training
            )
            node_inputs_and_mask = [states, annotations, node_mask]
            if self.task == "node_selection":
                outputs.append(self.node_selection(node_inputs_and_mask))
            else:
                graph_vector = self.readout(node_inputs_and_mask)
                if self.classifier_hidden is not None:
                    graph_vector = self.classifier_hidden(graph_vector)
                outputs.append(self.classifier(graph_vector))
            if step == self.output_steps - 1:
                break
            if self.annotation_propagation is not None:
                states = self.annotation_propagation.propagate(
                    *graph, training=training
                )
            features = ops.concatenate([states, annotations], axis=-1)
            if self.annotation_hidden is not None:
                features = self.annotation_hidden(features)
            annotations = self.annotation(features)
            annotations = ops.where(
                is_real, annotations, ops.zeros_like(annotations)
            )
        logits = poison_invalid_graphs(ops.stack(outputs, axis=1), valid)
        if self.return_annotations:
            annotations = ops.stack(read_annotations, axis=1)
            return logits, poison_invalid_graphs(annotations, valid)
        return logits

    def compute_output_shape(self, input_shape):
        shapes = unpack_graph_inputs(self, input_shape)
        batch_size, num_nodes, features = tuple(shapes[0])
        if self.task == "node_selection":
            logits_shape = (batch_size, self.output_steps, num_nodes)
        else:
            logits_shape = (batch_size, self.output_steps, self.num_classes)
        if self.return_annotations:
            return logits_shape, (
                batch_size,
                self.output_steps,
                num_nodes,
                features,
            )
        return logits_shape

    def get_config(self):
        config = {
            "units": self.units,
            "num_edge_types": self.num_edge_types,
            "output_steps": self.output_steps,
            "task": self.task,
            "num_classes": self.num_classes,
            "propagation_steps": self.propagation_steps,
            "add_reverse_edges": self.add_reverse_edges,
            "concatenate_directions": self.concatenate_directions,
            "share_propagation": self.share_propagation,
            "readout_units": self.readout_units,
            "hidden_units": self.hidden_units,
            "return_annotations": self.return_annotations,
            "use_bias": self.use_bias,
            "reset_after": self.reset_after,
            **{
                name: value
                if isinstance(value, str)
                else initializers.serialize(value)
                for name in (
                    "kernel_initializer",
                    "recurrent_initializer",
                    "bias_initializer",
                )
                for value in [getattr(self, name)]
            },
        }
        base_config = super().get_config()
        return {**base_config, **config}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if "output_mode" in config:  # Saved before `task` had its name.
            config["task"] = config.pop("output_mode")
        return super().from_config(config)


def _deprecated_output_mode(task, output_mode):
    """`task` from the deprecated `output_mode=` argument of `GGSNN`."""
    warnings.warn(
        "`GGSNN(output_mode=...)` is deprecated; use `task=...`, as in "
        "`kr.tuning.GraphHyperModel`. `output_mode` will be removed in the "
        "next release.",
        DeprecationWarning,
        stacklevel=3,
    )
    if task != "node_selection":
        raise ValueError(
            "Pass `task` only: `output_mode` is its deprecated name. "
            f"Received: task={task!r}, output_mode={output_mode!r}"
        )
    return output_mode
