"""Layer-normalized simple RNN cell, as TensorFlow Addons'."""

import keras
from keras import activations
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_layer_seed
from keras_recurrent._checks import check_positive_float
from keras_recurrent._checks import check_positive_int
from keras_recurrent._checks import check_rate
from keras_recurrent.layers._addons_cell import AddonsCell
from keras_recurrent.layers._gates import layer_norm
from keras_recurrent.layers._initializers import serialize_weight_options


@keras.saving.register_keras_serializable(package="keras_recurrent")
class LayerNormSimpleRNNCell(AddonsCell):
    """Cell class for the simple RNN with layer normalization.

    TensorFlow Addons' `LayerNormSimpleRNNCell`, in Keras 3: Keras'
    `SimpleRNNCell` with the pre-activation scaled by layer normalization
    (Ba et al. 2016) before the bias, which stands in for its shift:

    ```
    net = x W + h_{t-1} U
    h_t = act(γ ⊙ (net - μ) / √(σ² + ε) + b)
    ```

    `μ` and `σ²` are over the units, `ε = layernorm_epsilon` and act is
    `activation`. With dropout, `x` and `h_{t-1}` (in the matmul only) are
    scaled by one mask per sequence each.

    Weights, in TensorFlow Addons' order (`cell.weights`, what
    `set_weights` takes):

    - `kernel`: `(input_dim, units)`.
    - `recurrent_kernel`: `(units, units)`.
    - `bias`: `(units,)`, if `use_bias`.
    - `gamma`: `(units,)`, the layer normalization's scale.

    `LayerNormSimpleRNNCell.from_config(config)` also reads the config of
    TFA's cell. The state is `[h]`.

    Args:
        units: Positive integer, dimensionality of the state.
        activation: Output activation. Defaults to `"tanh"`.
        use_bias: Whether to add `bias`. Defaults to `True`.
        layernorm_epsilon: Positive float added to the variance.
            Defaults to `1e-5`.
        kernel_initializer: Initializer for `kernel`.
            Defaults to `"glorot_uniform"`.
        recurrent_initializer: Initializer for `recurrent_kernel`.
            Defaults to `"orthogonal"`.
        bias_initializer: Initializer for `bias`. Defaults to `"zeros"`.
        gamma_initializer: Initializer for `gamma`. Defaults to `"ones"`.
        kernel_regularizer: Optional regularizer of `kernel`.
        recurrent_regularizer: Optional regularizer of `recurrent_kernel`.
        bias_regularizer: Optional regularizer of `bias`.
        gamma_regularizer: Optional regularizer of `gamma`.
        kernel_constraint: Optional constraint of `kernel`.
        recurrent_constraint: Optional constraint of `recurrent_kernel`.
        bias_constraint: Optional constraint of `bias`.
        gamma_constraint: Optional constraint of `gamma`.
        dropout: Float in [0, 1). Fraction of the inputs dropped, one mask
            per sequence. Defaults to 0.
        recurrent_dropout: Float in [0, 1). Fraction of `h_{t-1}` dropped
            before the recurrent matmul, one mask per sequence. Defaults to 0.
        seed: Random seed for dropout (not in TensorFlow Addons).
        **kwargs: Standard layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: A 2D tensor `(batch, input_dim)`; integer and boolean values
            are cast to the compute dtype, as `keras.layers.LSTMCell` takes
            them.
        states: List `[h]` of the previous state.
        training: Python boolean; dropout is active only when `True`.

    Returns:
        A tuple `(h_t, [h_t])`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> cell = kr.layers.LayerNormSimpleRNNCell(16)
    >>> keras.layers.RNN(cell)(x).shape
    TensorShape([4, 16])
    >>> [w.path.split("/")[-1] for w in cell.weights]
    ['kernel', 'recurrent_kernel', 'bias', 'gamma']

    Reference:
        - [Ba et al., 2016. Layer Normalization](
          https://arxiv.org/abs/1607.06450)
    """

    def __init__(
        self,
        units,
        activation="tanh",
        use_bias=True,
        layernorm_epsilon=1e-5,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        gamma_initializer="ones",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        gamma_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        gamma_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.activation = activations.get(activation)
        self.use_bias = check_bool("use_bias", use_bias)
        self.layernorm_epsilon = check_positive_float(
            "layernorm_epsilon", layernorm_epsilon
        )
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = check_rate("dropout", dropout)
        self.recurrent_dropout = check_rate(
            "recurrent_dropout", recurrent_dropout
        )
        self.seed = check_layer_seed(seed)
        self.seed_generator = keras.random.SeedGenerator(seed=seed)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.state_size = [units]
        self.output_size = units

    def build(self, input_shape):
        input_dim = self._build_input_dim(input_shape)
        self.kernel = self.add_weight(
            shape=(input_dim, self.units),
            name="kernel",
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, self.units),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(self.units,),
                name="bias",
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        self.gamma = self.add_weight(
            shape=(self.units,),
            name="gamma",
            initializer=self.gamma_initializer,
            regularizer=self.gamma_regularizer,
            constraint=self.gamma_constraint,
        )

    def _loop_weights(self):
        return {
            "kernel": self.kernel,
            "recurrent_kernel": self.recurrent_kernel,
            "bias": self.bias,
            "gamma": self.gamma,
        }

    def step(self, inputs, states, loop_state):
        """One step of a loop that `prepare_loop` prepared."""
        h_tm1 = states[0]
        weights = loop_state["weights"]
        if loop_state["input_mask"] is not None:
            inputs = inputs * loop_state["input_mask"]
        if loop_state["recurrent_mask"] is not None:
            h_tm1 = h_tm1 * loop_state["recurrent_mask"]
        net = ops.matmul(inputs, weights["kernel"]) + ops.matmul(
            h_tm1, weights["recurrent_kernel"]
        )
        h = layer_norm(net, weights["gamma"], None, self.layernorm_epsilon)
        if weights["bias"] is not None:
            h = h + weights["bias"]
        h = self.activation(h)
        return h, [h]

    def get_config(self):
        config = {
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "layernorm_epsilon": self.layernorm_epsilon,
            **serialize_weight_options(
                self, ("kernel", "recurrent", "bias", "gamma")
            ),
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "seed": self.seed,
        }
        return {**super().get_config(), **config}
