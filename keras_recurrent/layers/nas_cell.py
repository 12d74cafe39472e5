"""Neural architecture search cell (Zoph & Le 2017), as TensorFlow Addons'."""

import keras
from keras import initializers
from keras import ops

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_positive_int
from keras_recurrent.layers._addons_cell import AddonsCell

# The number of pre-activation blocks of the cell.
_BLOCKS = 8


@keras.saving.register_keras_serializable(package="keras_recurrent")
class NASCell(AddonsCell):
    """Cell class for the recurrent cell found by neural architecture search.

    TensorFlow Addons' `NASCell` (Zoph & Le 2017, the cell of their Penn
    Treebank model), in Keras 3. With `a_k = x W_k` and `b_k = m_{t-1} U_k
    (+ bias_k)` for the eight blocks `k`:

    ```
    l_0 = σ(a_0 + b_0)    l_1 = relu(a_1 + b_1)    l_2 = σ(a_2 + b_2)
    l_3 = relu(a_3 ⊙ b_3) l_4 = tanh(a_4 + b_4)    l_5 = σ(a_5 + b_5)
    l_6 = tanh(a_6 + b_6) l_7 = σ(a_7 + b_7)
    c_t = tanh(tanh(l_0 ⊙ l_1) + c_{t-1}) ⊙ tanh(l_2 + l_3)
    m_t = tanh(c_t ⊙ tanh(tanh(l_4 ⊙ l_5) + σ(l_6 + l_7)))
    ```

    With `projection`, `m_t` is then projected, `m_t P`, and is the output
    and recurrent state.

    Weights, in TensorFlow Addons' order (`cell.weights`, what
    `set_weights` takes), blocks 0 to 7 side by side:

    - `recurrent_kernel`: `(state_dim, 8 * units)`; `state_dim` is
      `projection` if set, else `units`.
    - `kernel`: `(input_dim, 8 * units)`.
    - `bias`: `(8 * units,)`, if `use_bias` (added to the recurrent half).
    - `projection_weights`: `(units, projection)`, with `projection`.

    States are `[c, m]`, in TensorFlow Addons' order (the cell state
    first, unlike the LSTM cells' `[h, c]`), so that its initial states and
    returned states carry over unchanged. `NASCell.from_config(config)`
    also reads the config of TFA's cell. On JAX, mask with `kr.layers.NAS`
    rather than `keras.layers.RNN(NASCell(...))`: Keras' JAX loop outputs
    the first state at masked steps, which the layer orders for it.

    Args:
        units: Positive integer, the width of the cell state.
        projection: Optional positive integer, the width of the projected
            output. Defaults to `None` (no projection).
        use_bias: Whether to add `bias`. Defaults to `False`.
        kernel_initializer: Initializer for `kernel`.
            Defaults to `"glorot_uniform"`.
        recurrent_initializer: Initializer for `recurrent_kernel`.
            Defaults to `"glorot_uniform"`.
        projection_initializer: Initializer for `projection_weights`.
            Defaults to `"glorot_uniform"`.
        bias_initializer: Initializer for `bias`. Defaults to `"zeros"`.
        **kwargs: Standard layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: A 2D tensor `(batch, input_dim)`; integer and boolean values
            are cast to the compute dtype, as `keras.layers.LSTMCell` takes
            them.
        states: List `[c, m]` of the previous states.
        training: Python boolean; unused.

    Returns:
        A tuple `(m_t, [c_t, m_t])`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> cell = kr.layers.NASCell(16, projection=6)
    >>> keras.layers.RNN(cell, return_sequences=True)(x).shape
    TensorShape([4, 10, 6])
    >>> [tuple(w.shape) for w in cell.weights]
    [(6, 128), (8, 128), (16, 6)]

    Reference:
        - [Zoph & Le, 2017. Neural Architecture Search with Reinforcement
          Learning](https://arxiv.org/abs/1611.01578)
    """

    # The state that is the output, `m` (for `CellRNN`'s loop).
    output_state_index = 1

    def __init__(
        self,
        units,
        projection=None,
        use_bias=False,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="glorot_uniform",
        projection_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.projection = check_positive_int(
            "projection", projection, allow_none=True
        )
        self.use_bias = check_bool("use_bias", use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.projection_initializer = initializers.get(projection_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.output_size = self.projection or units
        self.state_size = [units, self.output_size]

    def _recurrent_mask_width(self):
        return self.output_size

    def build(self, input_shape):
        input_dim = self._build_input_dim(input_shape)
        width = _BLOCKS * self.units
        self.recurrent_kernel = self.add_weight(
            shape=(self.output_size, width),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
        )
        self.kernel = self.add_weight(
            shape=(input_dim, width),
            name="kernel",
            initializer=self.kernel_initializer,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(width,), name="bias", initializer=self.bias_initializer
            )
        self.projection_weights = None
        if self.projection is not None:
            self.projection_weights = self.add_weight(
                shape=(self.units, self.projection),
                name="projection_weights",
                initializer=self.projection_initializer,
            )

    def _loop_weights(self):
        return {
            "kernel": self.kernel,
            "recurrent_kernel": self.recurrent_kernel,
            "bias": self.bias,
            "projection_weights": self.projection_weights,
        }

    def step(self, inputs, states, loop_state):
        """One step of a loop that `prepare_loop` prepared."""
        c_tm1, m_tm1 = states[0], states[1]
        weights = loop_state["weights"]
        recurrent = ops.matmul(m_tm1, weights["recurrent_kernel"])
        if weights["bias"] is not None:
            recurrent = recurrent + weights["bias"]
        a = ops.split(ops.matmul(inputs, weights["kernel"]), _BLOCKS, axis=-1)
        b = ops.split(recurrent, _BLOCKS, axis=-1)
        sigmoid, tanh, relu = ops.sigmoid, ops.tanh, ops.relu
        l2_0 = tanh(sigmoid(a[0] + b[0]) * relu(a[1] + b[1]))
        l2_1 = tanh(sigmoid(a[2] + b[2]) + relu(a[3] * b[3]))
        l2_2 = tanh(tanh(a[4] + b[4]) * sigmoid(a[5] + b[5]))
        l2_3 = sigmoid(tanh(a[6] + b[6]) + sigmoid(a[7] + b[7]))
        c = tanh(l2_0 + c_tm1) * l2_1
        m = tanh(c * tanh(l2_2 + l2_3))
        if weights["projection_weights"] is not None:
            m = ops.matmul(m, weights["projection_weights"])
        return m, [c, m]

    def get_config(self):
        config = {
            "units": self.units,
            "projection": self.projection,
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(
                self.kernel_initializer
            ),
            "recurrent_initializer": initializers.serialize(
                self.recurrent_initializer
            ),
            "projection_initializer": initializers.serialize(
                self.projection_initializer
            ),
            "bias_initializer": initializers.serialize(self.bias_initializer),
        }
        return {**super().get_config(), **config}
