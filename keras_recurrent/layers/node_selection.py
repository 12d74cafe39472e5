"""Node-selection scores of Li et al. (2016)."""

import keras
from keras import activations
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_positive_int
from keras_recurrent.layers._concrete import concrete_numpy
from keras_recurrent.layers._graph_checks import poison_invalid_graphs
from keras_recurrent.layers._initializers import reseeded
from keras_recurrent.layers._initializers import serialize_weight_options
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._node_inputs import check_node_input_shapes
from keras_recurrent.layers._node_inputs import node_features
from keras_recurrent.layers._node_inputs import unpack_node_input_shapes
from keras_recurrent.layers._node_inputs import unpack_node_inputs

# The logit of padding nodes: far below any real score, yet finite, so that a
# softmax over a graph gives them exactly 0 and no NaN reaches a loss or its
# gradient. float16 cannot hold -1e9.
_MASKED_LOGIT = -1e9
_MASKED_LOGIT_FLOAT16 = -6e4


@keras.saving.register_keras_serializable(package="keras_recurrent")
class NodeSelection(KnownRankInputs, keras.layers.Layer):
    """Scores every node of a graph, for answers that are a node.

    Call it on the list `[node_states, node_inputs, node_mask]`: the output
    of `kr.layers.GatedGraph`, the node annotations it was called on and the
    node mask. Each node gets a score from its final state and annotation,
    the node-selection output of "Gated Graph Sequence Neural Networks"
    (Li et al., 2016):

    ```
    o_v = g([h_v, x_v])                  (linear, or one hidden layer)
    p(v) = softmax_{v real}(o_v)         (left to the loss)
    ```

    The result is logits over the nodes, ready for
    `SparseCategoricalCrossentropy(from_logits=True)` with the answer node's
    index as target, or for `ops.softmax`. Padding nodes get the logit
    `-1e9` (`-6e4` in float16), so they can never be selected and have
    probability 0.

    A graph with no real node (`node_mask` all zero) has no node to
    select, and a softmax over its padding would be a made-up answer: on
    eager tensors the call raises a `ValueError` naming the graph; in
    traced or compiled code (`fit`, `predict`, `jit_compile=True`, a jitted
    JAX function), where no value can raise, that graph's logits are all
    NaN and the other graphs are unaffected. Leave empty graphs out of
    node-selection data (`kr.layers.GraphReadout` does accept them).

    Weights, with `F` the width of `node_states` plus that of `node_inputs`:

    - without `hidden_units`: `kernel` `(F, 1)` and `bias` `(1,)`;
    - with `hidden_units`: `hidden_kernel` `(F, hidden_units)` and
      `hidden_bias` `(hidden_units,)`, then `kernel` `(hidden_units, 1)` and
      `bias` `(1,)`.

    The biases exist if `use_bias`.

    Args:
        hidden_units: Optional positive integer: `g` gets one hidden layer of
            this width. `None` (default): `g` is linear.
        activation: Activation of the hidden layer. Defaults to `"tanh"`.
        use_bias: Whether the layers of `g` have biases. Defaults to `True`.
        kernel_initializer: Initializer of the kernels.
            Defaults to `"glorot_uniform"`.
        bias_initializer: Initializer of the biases. Defaults to `"zeros"`.
        kernel_regularizer, bias_regularizer: Optional regularizers.
        kernel_constraint, bias_constraint: Optional constraints.
        **kwargs: Standard layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: The list `[node_states, node_inputs, node_mask]`:

            - `node_states`: float `(batch, N, units)`, e.g. the output of
              `GatedGraph`;
            - `node_inputs`: float `(batch, N, D)`, the node annotations;
            - `node_mask`: bool or numeric `(batch, N)`, 1 (or True) for
              real nodes and 0 for padding. Any other value (`2`, `-1`,
              `0.5`, NaN) is refused with a `ValueError` naming the graph
              and node; in traced code, where no error can be raised, the
              graph's outputs are NaN instead.

    Returns:
        The node logits, `(batch, N)`.

    Shapes:
        - **input:** `(B, N, units)`, `(B, N, D)`, `(B, N)`
        - **output:** `(B, N)`

    Example:

    >>> inputs = kr.graphs.graph_inputs(2, num_nodes=10)
    >>> states = kr.layers.GatedGraph(16, num_edge_types=3)(inputs)
    >>> logits = kr.layers.NodeSelection()(
    ...     [states, inputs["node_inputs"], inputs["node_mask"]]
    ... )
    >>> model = keras.Model(inputs, logits)
    >>> model.output_shape
    (None, 10)
    >>> model.compile("adam", keras.losses.SparseCategoricalCrossentropy(
    ...     from_logits=True))

    Reference:
        - [Li et al., 2016. Gated Graph Sequence Neural Networks](
          https://arxiv.org/abs/1511.05493)
    """

    input_tensor_names = ("node_states", "node_inputs", "node_mask")

    def __init__(
        self,
        hidden_units=None,
        activation="tanh",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_units = check_positive_int(
            "hidden_units", hidden_units, allow_none=True
        )
        self.activation = activations.get(activation)
        self.use_bias = check_bool("use_bias", use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def build(self, input_shape):
        features = check_node_input_shapes(
            self, unpack_node_input_shapes(self, input_shape)
        )
        self.hidden_kernel = self.hidden_bias = None
        if self.hidden_units:
            self.hidden_kernel = self._kernel(
                "hidden_kernel", (features, self.hidden_units)
            )
            self.hidden_bias = self._bias("hidden_bias", self.hidden_units)
            features = self.hidden_units
        # After a hidden layer, the output weights take the initializers'
        # second seeds, so that they do not repeat the hidden ones' values.
        second = 1 if self.hidden_units else 0
        self.kernel = self._kernel("kernel", (features, 1), second)
        self.bias = self._bias("bias", 1, second)

    def _kernel(self, name, shape, seed_offset=0):
        return self.add_weight(
            shape=shape,
            name=name,
            initializer=reseeded(self.kernel_initializer, seed_offset),
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )

    def _bias(self, name, size, seed_offset=0):
        if not self.use_bias:
            return None
        return self.add_weight(
            shape=(size,),
            name=name,
            initializer=reseeded(self.bias_initializer, seed_offset),
            regularizer=self.bias_regularizer,
            constraint=self.bias_constraint,
        )

    def call(self, inputs):
        features, is_real, valid = node_features(
            *unpack_node_inputs(self, inputs), self.compute_dtype, layer=self
        )
        has_node = ops.any(is_real, axis=1)
        concrete = concrete_numpy(has_node)
        if concrete is not None and not concrete[0].all():
            graph = int(concrete[0].argmin())
            raise ValueError(
                f"NodeSelection {self.name!r}: graph {graph} has no real node "
                "(its `node_mask` is all zero), so there is no node to "
                f"select. Received: node_mask[{graph}] with no nonzero entry "
                f"among its {is_real.shape[1]} slots"
            )
        if self.hidden_units:
            features = ops.matmul(features, self.hidden_kernel)
            if self.use_bias:
                features = features + self.hidden_bias
            features = self.activation(features)
        logits = ops.matmul(features, self.kernel)
        if self.use_bias:
            logits = logits + self.bias
        logits = ops.squeeze(logits, axis=-1)
        masked = (
            _MASKED_LOGIT_FLOAT16
            if self.compute_dtype == "float16"
            else _MASKED_LOGIT
        )
        logits = ops.where(is_real, logits, ops.full_like(logits, masked))
        # Traced or compiled: a graph without real nodes, or with a
        # `node_mask` entry other than 0 or 1, gets NaN logits.
        if valid is not None:
            has_node = ops.logical_and(has_node, valid)
        return poison_invalid_graphs(logits, has_node)

    def compute_output_shape(self, input_shape):
        node_states_shape = unpack_node_inputs(self, input_shape)[0]
        return tuple(node_states_shape[:2])

    def get_config(self):
        config = {
            "hidden_units": self.hidden_units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
        }
        config.update(serialize_weight_options(self, ("kernel", "bias")))
        base_config = super().get_config()
        return {**base_config, **config}
