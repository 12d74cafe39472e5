"""What the Child-Sum and N-ary Tree-LSTM cells share."""

import keras
from keras import activations
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_layer_seed
from keras_recurrent._checks import check_positive_int
from keras_recurrent._checks import check_rate
from keras_recurrent.layers._constrained_weights import ConstrainedWeights
from keras_recurrent.layers._gates import lstm_step
from keras_recurrent.layers._initializers import gate_bias
from keras_recurrent.layers._initializers import serialize_weight_options


class TreeLSTMCell(ConstrainedWeights, keras.layers.Layer):
    """A Tree-LSTM cell (`TreeRNN`'s tree-cell contract, with its optional
    `leaf_step`, `prepare_loop` and `step`); a subclass gives the shape of
    `recurrent_kernel` and the gates' pre-activations.

    The base owns the arguments, `kernel` `(D, 4 * units)` and `bias`
    `(4 * units,)` (gate blocks `[i, f, o, u]`), dropout, the leaves and
    the LSTM update (`keras_recurrent.layers._gates.lstm_step`). The
    states are `[h, c]`; the output is `h`. A subclass defines:

    - `_recurrent_kernel_shape()`: the shape of `recurrent_kernel`.
    - `_level_weights()`: what `_preactivations` reads of the recurrent
      weights, arranged once per call (outside the loop).
    - `_preactivations(weights, projected, child_h)`: the pre-activations
      `(z_i, z_f, z_u, z_o)` of `M` nodes from their input projections
      `projected`, `(M, (3 + F) * units)` with the blocks `[i, o, u, f_1,
      ..., f_F]` (`F = 1`, or `arity`), and their children's `h`,
      `(M, K, units)`; `z_f` is `(M, K, units)`, one forget gate per child.
    """

    # The number of forget blocks of the input projection that
    # `_preactivations` reads (one per child slot for the N-ary cell).
    _forget_blocks = 1

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        unit_forget_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.use_bias = check_bool("use_bias", use_bias)
        self.unit_forget_bias = check_bool("unit_forget_bias", unit_forget_bias)
        self.dropout = check_rate("dropout", dropout)
        self.recurrent_dropout = check_rate(
            "recurrent_dropout", recurrent_dropout
        )
        self.seed = check_layer_seed(seed)
        self.seed_generator = keras.random.SeedGenerator(seed=seed)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.state_size = [self.units, self.units]
        self.output_size = self.units
        self._weights_loaded_by_layer = False

    def build(self, input_shape):
        units = self.units
        self.kernel = self.add_weight(
            shape=(input_shape[-1], 4 * units),
            name="kernel",
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            shape=self._recurrent_kernel_shape(),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(4 * units,),
                name="bias",
                initializer=self._bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        else:
            self.bias = None

    def _bias_initializer(self, shape, dtype=None):
        del shape
        return gate_bias(
            self.bias_initializer,
            ("i", "f", "o", "u"),
            self.units,
            self.unit_forget_bias,
            dtype,
        )

    def call(self, inputs, child_states, child_mask, training=False):
        # One step with a loop state made for this call; alone, each node
        # is its own tree for recurrent dropout.
        count = ops.shape(inputs)[0]
        loop_inputs, loop_state = self.prepare_loop(
            inputs, ops.arange(count, dtype="int32"), count, training=training
        )
        return self.step(loop_inputs, child_states, child_mask, loop_state)

    def leaf_step(self, inputs, training=False):
        # Without children, c = σ(x_i) ⊙ tanh(x_u), h = σ(x_o) ⊙ tanh(c):
        # the [i, o, u] columns alone.
        def input_gates(weight):
            i, _, o, u = ops.split(weight, 4, axis=-1)
            return ops.concatenate([i, o, u], axis=-1)

        projected = _project(
            self._dropped(inputs, training),
            input_gates(self.kernel),
            None if self.bias is None else input_gates(self.bias),
        )
        z_i, z_o, z_u = ops.split(projected, 3, axis=-1)
        h, c = lstm_step(
            z_i,
            None,
            z_u,
            z_o,
            None,
            self.activation,
            self.recurrent_activation,
        )
        return h, [h, c]

    def prepare_loop(self, inputs, tree_ids, num_trees, training=False):
        kernel, bias = self._input_weights()
        inputs = self._dropped(inputs, training)
        loop_state = {"recurrent": self._level_weights()}
        if kernel.shape[0] < kernel.shape[1]:
            # Inputs narrower than their projections: each step projects
            # its own rows, so that the rows read per step (and their
            # gradients) are smaller.
            loop_state["input_weights"] = (kernel, bias)
        else:
            inputs = _project(inputs, kernel, bias)
        loop_inputs = {"inputs": inputs}
        if training and self.recurrent_dropout > 0:
            # One mask per tree, as Keras' recurrent dropout keeps one per
            # sequence; a node applies its tree's mask to its children's h.
            masks = keras.random.dropout(
                ops.ones((num_trees, self.units), dtype=self.compute_dtype),
                self.recurrent_dropout,
                seed=self.seed_generator,
            )
            loop_inputs["recurrent_mask"] = ops.take(masks, tree_ids, axis=0)
        return loop_inputs, loop_state

    def step(self, loop_inputs, child_states, child_mask, loop_state):
        del child_mask  # Empty slots hold zero states.
        child_h, child_c = child_states
        if "recurrent_mask" in loop_inputs:
            child_h = child_h * ops.expand_dims(
                loop_inputs["recurrent_mask"], 1
            )
        projected = loop_inputs["inputs"]
        if "input_weights" in loop_state:
            projected = _project(projected, *loop_state["input_weights"])
        z_i, z_f, z_u, z_o = self._preactivations(
            loop_state["recurrent"], projected, child_h
        )
        h, c = lstm_step(
            z_i,
            z_f,
            z_u,
            z_o,
            child_c,
            self.activation,
            self.recurrent_activation,
        )
        return h, [h, c]

    def _dropped(self, inputs, training):
        inputs = ops.cast(inputs, self.compute_dtype)
        if training and self.dropout > 0:
            inputs = keras.random.dropout(
                inputs, self.dropout, seed=self.seed_generator
            )
        return inputs

    def _input_weights(self):
        """`kernel` and `bias` (or `None`) with their gate blocks reordered
        from `[i, f, o, u]` to `[i, o, u, f]`, the forget block repeated
        once per forget gate of `_preactivations` (`_forget_blocks`), so
        that the input and recurrent terms add up whole, without slicing.
        Read once per call (a variable read inside the level loop would
        run, and be kept for the gradient, at each step)."""

        def reorder(weight):
            # A split, not slices: TensorFlow's slice gradient is slow
            # (docs/design/tree_lstm.md).
            i, f, o, u = ops.split(weight, 4, axis=-1)
            return ops.concatenate(
                [i, o, u] + [f] * self._forget_blocks, axis=-1
            )

        return (
            reorder(self.kernel),
            None if self.bias is None else reorder(self.bias),
        )

    def load_own_variables(self, store):
        # Files saved before the weights moved into the cell keep them in
        # the layer's own entry, which the layer hands to the cell; the
        # cell's entry is then empty.
        if self._weights_loaded_by_layer and not len(store.keys()):
            self._weights_loaded_by_layer = False
            return
        super().load_own_variables(store)

    def get_config(self):
        config = {
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(
                self.recurrent_activation
            ),
            "use_bias": self.use_bias,
            "unit_forget_bias": self.unit_forget_bias,
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "seed": self.seed,
        }
        config.update(
            serialize_weight_options(self, ("kernel", "recurrent", "bias"))
        )
        return {**super().get_config(), **config}


def _project(inputs, kernel, bias):
    projected = ops.matmul(inputs, kernel)
    return projected if bias is None else projected + bias
