"""Echo state network cell (Jaeger 2001), as TensorFlow Addons'."""

import keras
from keras import activations
from keras import initializers
from keras import ops

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_positive_float
from keras_recurrent._checks import check_positive_int
from keras_recurrent._checks import invalid
from keras_recurrent.layers._addons_cell import AddonsCell


def _check_fraction(name, value, allow_zero):
    """`value` as a `float` in `(0, 1]` (or `[0, 1]` with `allow_zero`)."""
    low = 0.0 if allow_zero else None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not (value > 0 or value == low)
        or value > 1
    ):
        interval = "[0, 1]" if allow_zero else "(0, 1]"
        raise invalid(name, value, f"a float in {interval}")
    return float(value)


@keras.saving.register_keras_serializable(package="keras_recurrent")
class ESNCell(AddonsCell):
    """Cell class for the echo state network (Jaeger 2001).

    TensorFlow Addons' `ESNCell`, in Keras 3: a leaky-integrator reservoir
    whose weights are drawn once and not trained (only a readout on its
    states is):

    ```
    h_t = (1 - α) h_{t-1} + α act(x W + h_{t-1} U + b)
    ```

    `α` is `leaky` and act is `activation`. `U` is drawn from
    `recurrent_initializer`, each entry kept with probability
    `connectivity`, then scaled so that its spectral radius (its largest
    eigenvalue modulus; its Frobenius norm, an upper bound, with
    `use_norm2`) is `spectral_radius`, which gives the echo state property
    when below 1.

    Weights, all non-trainable, in TensorFlow Addons' order (`cell.weights`,
    what `set_weights` takes):

    - `recurrent_kernel`: `(units, units)`.
    - `kernel`: `(input_dim, units)`.
    - `bias`: `(units,)`, if `use_bias`.

    `ESNCell.from_config(config)` also reads the config of TFA's cell. The
    state is `[h]`.

    Args:
        units: Positive integer, the reservoir size.
        connectivity: Float in [0, 1], the probability that two reservoir
            units are connected. Defaults to 0.1.
        leaky: Float in (0, 1], the leaking rate; 1 is no leaky
            integration. Defaults to 1.
        spectral_radius: Positive float, the spectral radius of `U`.
            Defaults to 0.9.
        use_norm2: Whether to scale `U` by its Frobenius norm instead of its
            largest eigenvalue (no eigendecomposition). Defaults to `False`.
        use_bias: Whether to add `bias`. Defaults to `True`.
        activation: Activation. Defaults to `"tanh"`.
        kernel_initializer: Initializer for `kernel`.
            Defaults to `"glorot_uniform"`.
        recurrent_initializer: Initializer of `U` before the sparsity and
            the scaling. Defaults to `"glorot_uniform"`.
        bias_initializer: Initializer for `bias`. Defaults to `"zeros"`.
        **kwargs: Standard layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: A 2D tensor `(batch, input_dim)`; integer and boolean values
            are cast to the compute dtype, as `keras.layers.LSTMCell` takes
            them.
        states: List `[h]` of the previous state.
        training: Python boolean; unused.

    Returns:
        A tuple `(h_t, [h_t])`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> cell = kr.layers.ESNCell(16)
    >>> keras.layers.RNN(cell, return_sequences=True)(x).shape
    TensorShape([4, 10, 16])
    >>> [w.path.split("/")[-1] for w in cell.weights]
    ['recurrent_kernel', 'kernel', 'bias']

    Reference:
        - [Jaeger, 2001. The "echo state" approach to analysing and training
          recurrent neural networks. GMD Report 148](
          https://www.researchgate.net/publication/215385037)
    """

    def __init__(
        self,
        units,
        connectivity=0.1,
        leaky=1,
        spectral_radius=0.9,
        use_norm2=False,
        use_bias=True,
        activation="tanh",
        kernel_initializer="glorot_uniform",
        recurrent_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.connectivity = _check_fraction("connectivity", connectivity, True)
        self.leaky = _check_fraction("leaky", leaky, False)
        self.spectral_radius = check_positive_float(
            "spectral_radius", spectral_radius
        )
        self.use_norm2 = check_bool("use_norm2", use_norm2)
        self.use_bias = check_bool("use_bias", use_bias)
        self.activation = activations.get(activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.state_size = [units]
        self.output_size = units

    def build(self, input_shape):
        input_dim = self._build_input_dim(input_shape)
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, self.units),
            name="recurrent_kernel",
            initializer=self._reservoir_initializer,
            trainable=False,
        )
        self.kernel = self.add_weight(
            shape=(input_dim, self.units),
            name="kernel",
            initializer=self.kernel_initializer,
            trainable=False,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(self.units,),
                name="bias",
                initializer=self.bias_initializer,
                trainable=False,
            )

    def _reservoir_initializer(self, shape, dtype=None):
        weights = self.recurrent_initializer(shape, dtype="float32")
        kept = keras.random.uniform(shape) <= self.connectivity
        weights = ops.where(kept, weights, 0.0)
        if self.use_norm2:
            radius = ops.sqrt(ops.sum(ops.square(weights)))
        else:
            radius = ops.max(ops.abs(ops.eig(weights)[0]))
        # A reservoir without connections (radius 0) stays zero.
        scale = ops.where(radius > 0, self.spectral_radius / radius, 0.0)
        return ops.cast(weights * ops.cast(scale, "float32"), dtype)

    def _loop_weights(self):
        return {
            "kernel": self.kernel,
            "recurrent_kernel": self.recurrent_kernel,
            "bias": self.bias,
        }

    def step(self, inputs, states, loop_state):
        """One step of a loop that `prepare_loop` prepared."""
        h_tm1 = states[0]
        weights = loop_state["weights"]
        z = ops.matmul(inputs, weights["kernel"]) + ops.matmul(
            h_tm1, weights["recurrent_kernel"]
        )
        if weights["bias"] is not None:
            z = z + weights["bias"]
        h = self.activation(z)
        if self.leaky != 1.0:
            h = (1.0 - self.leaky) * h_tm1 + self.leaky * h
        return h, [h]

    def get_config(self):
        config = {
            "units": self.units,
            "connectivity": self.connectivity,
            "leaky": self.leaky,
            "spectral_radius": self.spectral_radius,
            "use_norm2": self.use_norm2,
            "use_bias": self.use_bias,
            "activation": activations.serialize(self.activation),
            "kernel_initializer": initializers.serialize(
                self.kernel_initializer
            ),
            "recurrent_initializer": initializers.serialize(
                self.recurrent_initializer
            ),
            "bias_initializer": initializers.serialize(self.bias_initializer),
        }
        return {**super().get_config(), **config}
