"""Layer-normalized LSTM cell (Ba et al. 2016), as TensorFlow Addons'."""

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
from keras_recurrent.layers._gates import lstm_cell_state
from keras_recurrent.layers._gates import lstm_output
from keras_recurrent.layers._initializers import gate_bias
from keras_recurrent.layers._initializers import serialize_weight_options

_NORMS = ("kernel_norm", "recurrent_norm", "state_norm")


@keras.saving.register_keras_serializable(package="keras_recurrent")
class LayerNormLSTMCell(AddonsCell):
    """Cell class for the LSTM with layer normalization (Ba et al. 2016).

    TensorFlow Addons' `LayerNormLSTMCell`, in Keras 3: the input and
    recurrent projections are normalized separately before the gates, and
    the new cell state before the output (`LN(z) = γ ⊙ (z - μ) / √(σ² + ε)
    + β` over the last axis, `ε = norm_epsilon`):

    ```
    z = LN_k(x W) + LN_r(h_{t-1} U) + b       blocks [i, f, c, o]
    i = σ(z_i)   f = σ(z_f)   g = tanh(z_c)   o = σ(z_o)
    c_t = LN_s(f ⊙ c_{t-1} + i ⊙ g)
    h_t = o ⊙ tanh(c_t)
    ```

    σ is `recurrent_activation` and tanh is `activation`. With dropout,
    `x` and `h_{t-1}` (in the matmul only) are scaled by one mask per
    sequence each.

    Weights, in TensorFlow Addons' order (`cell.weights`, what
    `set_weights` takes), gate blocks in Keras' `LSTMCell` order
    `[i, f, c, o]`:

    - `kernel`: `(input_dim, 4 * units)`.
    - `recurrent_kernel`: `(units, 4 * units)`.
    - `bias`: `(4 * units,)`, if `use_bias`.
    - `kernel_norm/gamma`, `kernel_norm/beta`: `(4 * units,)` each.
    - `recurrent_norm/gamma`, `recurrent_norm/beta`: `(4 * units,)` each.
    - `state_norm/gamma`, `state_norm/beta`: `(units,)` each.

    `LayerNormLSTMCell.from_config(config)` also reads the config of TFA's
    cell, and `set_weights` its weights in its order. States are `[h, c]`.

    Args:
        units: Positive integer, dimensionality of the cell state.
        activation: Cell input and output activation. Defaults to `"tanh"`.
        recurrent_activation: Gate activation. Defaults to `"sigmoid"`.
        use_bias: Whether to add `bias`. Defaults to `True`.
        kernel_initializer: Initializer for `kernel`.
            Defaults to `"glorot_uniform"`.
        recurrent_initializer: Initializer for `recurrent_kernel`.
            Defaults to `"orthogonal"`.
        bias_initializer: Initializer for `bias`. Defaults to `"zeros"`.
        unit_forget_bias: If `True`, the forget block of `bias` starts at 1.
            Defaults to `True`.
        kernel_regularizer: Optional regularizer of `kernel`.
        recurrent_regularizer: Optional regularizer of `recurrent_kernel`.
        bias_regularizer: Optional regularizer of `bias`.
        kernel_constraint: Optional constraint of `kernel`.
        recurrent_constraint: Optional constraint of `recurrent_kernel`.
        bias_constraint: Optional constraint of `bias`.
        dropout: Float in [0, 1). Fraction of the inputs dropped, one mask
            per sequence. Defaults to 0.
        recurrent_dropout: Float in [0, 1). Fraction of `h_{t-1}` dropped
            before the recurrent matmul, one mask per sequence. Defaults to 0.
        norm_gamma_initializer: Initializer for the three `gamma`s.
            Defaults to `"ones"`.
        norm_beta_initializer: Initializer for the three `beta`s.
            Defaults to `"zeros"`.
        norm_epsilon: Positive float added to the variance. Defaults to
            `1e-3`.
        seed: Random seed for dropout (not in TensorFlow Addons).
        **kwargs: Standard layer keyword arguments, such as `name` and
            `dtype`; and `implementation`, which Keras 2's `LSTMCell` (TFA's
            base) took: ignored, and not in the config, as in Keras 3.

    Call arguments:
        inputs: A 2D tensor `(batch, input_dim)`; integer and boolean values
            are cast to the compute dtype, as `keras.layers.LSTMCell` takes
            them.
        states: List `[h, c]` of the previous states.
        training: Python boolean; dropout is active only when `True`.

    Returns:
        A tuple `(h_t, [h_t, c_t])`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> cell = kr.layers.LayerNormLSTMCell(16)
    >>> keras.layers.RNN(cell, return_sequences=True)(x).shape
    TensorShape([4, 10, 16])
    >>> len(cell.weights)  # kernel, recurrent_kernel, bias, 3 x (gamma, beta)
    9

    Reference:
        - [Ba et al., 2016. Layer Normalization](
          https://arxiv.org/abs/1607.06450)
    """

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        unit_forget_bias=True,
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        norm_gamma_initializer="ones",
        norm_beta_initializer="zeros",
        norm_epsilon=1e-3,
        seed=None,
        **kwargs,
    ):
        self.implementation = kwargs.pop("implementation", 2)
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = check_bool("use_bias", use_bias)
        self.unit_forget_bias = check_bool("unit_forget_bias", unit_forget_bias)
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
        self.norm_gamma_initializer = initializers.get(norm_gamma_initializer)
        self.norm_beta_initializer = initializers.get(norm_beta_initializer)
        self.norm_epsilon = check_positive_float("norm_epsilon", norm_epsilon)
        self.seed = check_layer_seed(seed)
        self.seed_generator = keras.random.SeedGenerator(seed=seed)
        for name in _NORMS:
            setattr(self, name, self._norm_layer(name))
        self.state_size = [units, units]
        self.output_size = units

    def _norm_layer(self, name):
        return keras.layers.LayerNormalization(
            epsilon=self.norm_epsilon,
            gamma_initializer=self.norm_gamma_initializer,
            beta_initializer=self.norm_beta_initializer,
            name=name,
            dtype=self.dtype_policy,
        )

    def build(self, input_shape):
        input_dim = self._build_input_dim(input_shape)
        width = 4 * self.units
        self.kernel = self.add_weight(
            shape=(input_dim, width),
            name="kernel",
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, width),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(width,),
                name="bias",
                initializer=self._bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        self.kernel_norm.build((None, width))
        self.recurrent_norm.build((None, width))
        self.state_norm.build((None, self.units))

    def _bias_initializer(self, shape, dtype=None):
        del shape
        return gate_bias(
            self.bias_initializer,
            ("i", "f", "c", "o"),
            self.units,
            self.unit_forget_bias,
            dtype,
        )

    def _loop_weights(self):
        # The shifts of the two pre-activation norms and the bias, summed
        # once for all steps (Keras does not autocast the norms' weights).
        shifts = [self.kernel_norm.beta, self.recurrent_norm.beta]
        if self.bias is not None:
            shifts.append(self.bias)
        dtype = self.compute_dtype
        return {
            "kernel": self.kernel,
            "recurrent_kernel": self.recurrent_kernel,
            "shift": sum(ops.cast(shift, dtype) for shift in shifts),
            "kernel_gamma": self.kernel_norm.gamma,
            "recurrent_gamma": self.recurrent_norm.gamma,
            "state_gamma": self.state_norm.gamma,
            "state_beta": self.state_norm.beta,
        }

    def step(self, inputs, states, loop_state):
        """One step of a loop that `prepare_loop` prepared."""
        h_tm1, c_tm1 = states[0], states[1]
        weights = loop_state["weights"]
        if loop_state["input_mask"] is not None:
            inputs = inputs * loop_state["input_mask"]
        if loop_state["recurrent_mask"] is not None:
            h_tm1 = h_tm1 * loop_state["recurrent_mask"]
        # Each step projects its own input: on TensorFlow's CPU loop, one
        # matmul for all steps before the loop measured slower (as in
        # docs/design/lstm_variants.md).
        epsilon = self.norm_epsilon
        z_x = ops.matmul(inputs, weights["kernel"])
        z_h = ops.matmul(h_tm1, weights["recurrent_kernel"])
        z = (
            layer_norm(z_x, weights["kernel_gamma"], None, epsilon)
            + layer_norm(z_h, weights["recurrent_gamma"], None, epsilon)
            + weights["shift"]
        )
        z_i, z_f, z_c, z_o = ops.split(z, 4, axis=-1)
        gate = self.recurrent_activation
        c = lstm_cell_state(gate(z_i), self.activation(z_c), gate(z_f), c_tm1)
        c = layer_norm(
            c, weights["state_gamma"], weights["state_beta"], epsilon
        )
        h = lstm_output(gate(z_o), c, self.activation)
        return h, [h, c]

    def get_config(self):
        config = {
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(
                self.recurrent_activation
            ),
            "use_bias": self.use_bias,
            "unit_forget_bias": self.unit_forget_bias,
            **serialize_weight_options(self, ("kernel", "recurrent", "bias")),
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "norm_gamma_initializer": initializers.serialize(
                self.norm_gamma_initializer
            ),
            "norm_beta_initializer": initializers.serialize(
                self.norm_beta_initializer
            ),
            "norm_epsilon": self.norm_epsilon,
            "seed": self.seed,
        }
        return {**super().get_config(), **config}
