"""HyperModel searching over Tree-LSTM models."""

import keras

from keras_recurrent import layers as recurrent_layers
from keras_recurrent import trees as tree_encoding
from keras_recurrent._checks import check_option
from keras_recurrent._checks import check_output_units
from keras_recurrent._checks import check_positive_int
from keras_recurrent.tuning._hyper_model import RecurrentHyperModel
from keras_recurrent.tuning._hyper_model import choice

_TASKS = ("classification", "regression")


class TreeHyperModel(RecurrentHyperModel):
    """HyperModel for Tree-LSTM models over padded trees.

    Builds a functional model on the inputs of `kr.trees.tree_inputs` (fit
    it on the dict of `kr.trees.encode_trees`): an `Embedding` of the
    `node_tokens` (or, with `node_features`, float `node_inputs` as they
    are), a Tree-LSTM whose root state feeds a `Dense(output_units)` head,
    compiled with Adam. For `"classification"` the head gives logits, the
    loss is `SparseCategoricalCrossentropy(from_logits=True)` and accuracy
    is reported; for `"regression"` the head is linear and the loss is the
    mean squared error.

    Hyperparameters, all declared in `build` (fix any of them with
    `hp.Fixed(name, value)` before the search to take it out of the
    search):

    - `cell_type`: Choice of `"child_sum"` (`kr.layers.ChildSumTreeLSTM`)
      and `"nary"` (`kr.layers.NaryTreeLSTM` with `arity=num_children`).
      Default `"child_sum"`.
    - `units`: Int in `[16, 256]`, step 16. Default 64.
    - `embedding_size` (with `vocabulary_size` only): Int in `[8, 128]`,
      step 8. Default 32.
    - `dropout`: Float in `[0, 0.5]`, the Tree-LSTM's dropout of the node
      inputs. Default 0.
    - `learning_rate`: Float in `[1e-4, 1e-2]`, log sampling. Default 1e-3.

    Args:
        num_children: Positive integer `K`, the child slots of the trees
            (`num_children` of `kr.trees.encode_trees`); the N-ary cell's
            arity.
        output_units: Positive integer: the number of classes (at least 2)
            for classification, of targets for regression.
        vocabulary_size: Positive integer, the number of token ids of
            `node_tokens`. Exactly one of it and `node_features` is given.
        node_features: Positive integer `D` of float `node_inputs`.
        task: `"classification"` (default) or `"regression"`.
        num_nodes: Optional positive integer, a fixed padded number of
            nodes. Defaults to `None`, any.
        name: Optional name of the HyperModel, also used for the model.
        tunable: Whether the hyperparameters defined in this HyperModel
            should be added to the search space. Defaults to `True`.

    Returns:
        `build(hp)` returns a compiled `keras.Model` mapping the dict of tree
        tensors to `(batch, output_units)`.

    Example:

    >>> trees = kr.trees.encode_trees(texts, vocabulary=vocabulary,
    ...                               binarize="left", num_children=2)
    >>> hypermodel = kr.tuning.TreeHyperModel(
    ...     2, output_units=10, vocabulary_size=len(vocabulary))
    >>> tuner = keras_tuner.RandomSearch(
    ...     hypermodel, objective="val_accuracy", max_trials=3,
    ...     directory=tmp_dir)
    >>> tuner.search(trees, labels, epochs=5, validation_split=0.2)
    >>> best_model = tuner.get_best_models(1)[0]

    Reference:
        - [Tai et al., 2015. Improved Semantic Representations From
          Tree-Structured Long Short-Term Memory Networks](
          https://arxiv.org/abs/1503.00075)
    """

    CELL_TYPES = ("child_sum", "nary")

    def __init__(
        self,
        num_children,
        output_units,
        *,
        vocabulary_size=None,
        node_features=None,
        task="classification",
        num_nodes=None,
        name=None,
        tunable=True,
    ):
        super().__init__(name=name, tunable=tunable)
        self.num_children = check_positive_int("num_children", num_children)
        task = check_option("task", task, _TASKS)
        self.output_units = check_output_units(
            output_units, task, classification=task == "classification"
        )
        if (vocabulary_size is None) == (node_features is None):
            raise ValueError(
                "Exactly one of the arguments `vocabulary_size` (token "
                "inputs) and `node_features` (float inputs) must be given. "
                f"Received: vocabulary_size={vocabulary_size!r}, "
                f"node_features={node_features!r}"
            )
        for argument, value in (
            ("vocabulary_size", vocabulary_size),
            ("node_features", node_features),
            ("num_nodes", num_nodes),
        ):
            check_positive_int(argument, value, allow_none=True)
        self.vocabulary_size = vocabulary_size
        self.node_features = node_features
        self.task = task
        self.num_nodes = num_nodes

    def build(self, hp):
        cell_type = choice(hp, "cell_type", self.CELL_TYPES, "child_sum")
        units = hp.Int("units", 16, 256, step=16, default=64)
        embedding_size = None
        if self.vocabulary_size is not None:
            embedding_size = hp.Int(
                "embedding_size", 8, 128, step=8, default=32
            )
        dropout = hp.Float("dropout", 0.0, 0.5, default=0.0)
        learning_rate = hp.Float(
            "learning_rate", 1e-4, 1e-2, sampling="log", default=1e-3
        )

        inputs = tree_encoding.tree_inputs(
            self.num_children,
            num_nodes=self.num_nodes,
            node_features=self.node_features,
        )
        if embedding_size is None:
            node_inputs = inputs["node_inputs"]
        else:
            node_inputs = keras.layers.Embedding(
                self.vocabulary_size, embedding_size, name="embedding"
            )(inputs["node_tokens"])
        if cell_type == "nary":
            tree_lstm = recurrent_layers.NaryTreeLSTM(
                units, arity=self.num_children, dropout=dropout, name="nary"
            )
        else:
            tree_lstm = recurrent_layers.ChildSumTreeLSTM(
                units, dropout=dropout, name="child_sum"
            )
        # The dict of tree tensors, the schedule `tree_levels` included.
        tree_tensors = {**inputs, "node_inputs": node_inputs}
        tree_tensors.pop("node_tokens", None)
        root = tree_lstm(tree_tensors)
        outputs = keras.layers.Dense(self.output_units, name="head")(root)
        model = keras.Model(inputs, outputs, name=self.name)

        if self.task == "classification":
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            metrics = ["accuracy"]
        else:
            loss, metrics = "mse", None
        model.compile(
            optimizer=keras.optimizers.Adam(learning_rate=learning_rate),
            loss=loss,
            metrics=metrics,
        )
        return model
