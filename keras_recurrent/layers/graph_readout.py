"""The gated graph-level readout of Li et al. (2016)."""

import keras
from keras import activations
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_positive_int
from keras_recurrent.layers._graph_checks import poison_invalid_graphs
from keras_recurrent.layers._initializers import serialize_weight_options
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._node_inputs import check_node_input_shapes
from keras_recurrent.layers._node_inputs import node_features
from keras_recurrent.layers._node_inputs import unpack_node_input_shapes
from keras_recurrent.layers._node_inputs import unpack_node_inputs


@keras.saving.register_keras_serializable(package="keras_recurrent")
class GraphReadout(KnownRankInputs, keras.layers.Layer):
    """Gated sum of node states into one vector per graph.

    Call it on the list `[node_states, node_inputs, node_mask]`: the output
    of `kr.layers.GatedGraph`, the node annotations it was called on and the
    node mask. It computes the graph-level output of "Gated Graph Sequence
    Neural Networks" (Li et al., 2016, eq. 7), a soft-attention sum over the
    real nodes:

    ```
    h_G = tanh( Σ_{v real} σ(i([h_v, x_v])) ⊙ tanh(j([h_v, x_v])) )
    ```

    with `i` and `j` linear maps to `units` features, fused in one kernel.
    `σ(i(·))` decides which nodes matter to the graph, `tanh(j(·))` what they
    contribute. Padding nodes never contribute, whatever their values; a
    graph with no real node reads out `tanh(0) = 0`. Under mixed precision
    the sum runs in float32.

    Weights:

    - `kernel`: `(units_in + D, 2 * units)`, column blocks `[i, j]`, where
      `units_in` is the width of `node_states` and `D` of `node_inputs`.
    - `bias`: `(2 * units,)`, if `use_bias`.

    Args:
        units: Positive integer, the size of the graph vector `h_G`.
        activation: Activation of `j` and of the sum (the paper's tanh).
            Defaults to `"tanh"`.
        gate_activation: Activation of the gate `i`. Defaults to
            `"sigmoid"`.
        use_bias: Whether `i` and `j` have a bias. Defaults to `True`.
        kernel_initializer: Initializer of `kernel`.
            Defaults to `"glorot_uniform"`.
        bias_initializer: Initializer of `bias`. Defaults to `"zeros"`.
        kernel_regularizer, bias_regularizer: Optional regularizers.
        kernel_constraint, bias_constraint: Optional constraints.
        **kwargs: Standard layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: The list `[node_states, node_inputs, node_mask]`:

            - `node_states`: float `(batch, N, units_in)`, e.g. the output
              of `GatedGraph`;
            - `node_inputs`: float `(batch, N, D)`, the node annotations;
            - `node_mask`: bool or numeric `(batch, N)`, 1 (or True) for
              real nodes and 0 for padding. Any other value (`2`, `-1`,
              `0.5`, NaN) is refused with a `ValueError` naming the graph
              and node; in traced code, where no error can be raised, the
              graph's outputs are NaN instead.

    Returns:
        The graph vectors `h_G`, `(batch, units)`.

    Shapes:
        - **input:** `(B, N, units_in)`, `(B, N, D)`, `(B, N)`
        - **output:** `(B, units)`

    Example:

    >>> inputs = kr.graphs.graph_inputs(2)
    >>> states = kr.layers.GatedGraph(16, num_edge_types=3)(inputs)
    >>> graph = kr.layers.GraphReadout(32)(
    ...     [states, inputs["node_inputs"], inputs["node_mask"]]
    ... )
    >>> logits = keras.layers.Dense(5)(graph)
    >>> keras.Model(inputs, logits).output_shape
    (None, 5)

    Reference:
        - [Li et al., 2016. Gated Graph Sequence Neural Networks](
          https://arxiv.org/abs/1511.05493)
    """

    input_tensor_names = ("node_states", "node_inputs", "node_mask")

    def __init__(
        self,
        units,
        activation="tanh",
        gate_activation="sigmoid",
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
        self.units = check_positive_int("units", units)
        check_bool("use_bias", use_bias)
        self.activation = activations.get(activation)
        self.gate_activation = activations.get(gate_activation)
        self.use_bias = use_bias
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
        self.kernel = self.add_weight(
            shape=(features, 2 * self.units),
            name="kernel",
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(2 * self.units,),
                name="bias",
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        else:
            self.bias = None

    def call(self, inputs):
        features, is_real, valid = node_features(
            *unpack_node_inputs(self, inputs), self.compute_dtype, layer=self
        )
        z = ops.matmul(features, self.kernel)
        if self.use_bias:
            z = z + self.bias
        gate, transform = ops.split(z, 2, axis=-1)
        contributions = self.gate_activation(gate) * self.activation(transform)
        contributions = ops.where(
            ops.expand_dims(is_real, -1),
            ops.cast(contributions, "float32"),
            0.0,
        )
        total = ops.cast(ops.sum(contributions, axis=1), self.compute_dtype)
        outputs = self.activation(total)
        if valid is not None:
            outputs = poison_invalid_graphs(outputs, valid)
        return outputs

    def compute_output_shape(self, input_shape):
        node_states_shape = unpack_node_inputs(self, input_shape)[0]
        return (node_states_shape[0], self.units)

    def get_config(self):
        config = {
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "gate_activation": activations.serialize(self.gate_activation),
            "use_bias": self.use_bias,
        }
        config.update(serialize_weight_options(self, ("kernel", "bias")))
        base_config = super().get_config()
        return {**base_config, **config}
