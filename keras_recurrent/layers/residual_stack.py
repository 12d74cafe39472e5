"""A deep stack of RNN layers with residual connections between them."""

import keras
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_layer_seed
from keras_recurrent._checks import check_positive_float
from keras_recurrent._checks import check_rate
from keras_recurrent._checks import invalid
from keras_recurrent.layers._initializers import reseeded
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._sequence_checks import check_mask
from keras_recurrent.layers._sequence_checks import check_sequence_shape
from keras_recurrent.layers._sequence_checks import check_sequences
from keras_recurrent.layers._sequence_checks import refuse_traced_open_steps
from keras_recurrent.layers.sequence_pooling import SequencePooling

_RNN_LAYERS = (keras.layers.RNN, keras.layers.Bidirectional)


@keras.saving.register_keras_serializable(package="keras_recurrent")
class ResidualStack(KnownRankInputs, keras.layers.Layer):
    """Deep stacked RNN with residual connections between the layers.

    Runs the RNN layers `RNN_1 ... RNN_L` in order over the whole sequence,
    each one's output sequence feeding the next, and adds each layer's input
    to its output (Wu et al. 2016; Kim et al. 2017). With `y_0` the input:

    ```
    residual=True:                   y_l = P_l y_{l-1} + D(RNN_l(y_{l-1}))
    residual=True, layer_norm=True:  y_l = P_l y_{l-1} + D(RNN_l(LN_l(y_{l-1})))
                                     output = LN_final(y_L)
    residual=False:                  y_l = D(RNN_l(y_{l-1}))   (plain stack)
    ```

    `D` is dropout (`dropout`, identity by default). `P_l` is the identity
    when `y_{l-1}` is as wide as `RNN_l`'s output, and otherwise a learned
    linear projection `Dense(width_l, use_bias=False)` of the skip path,
    sublayer `projection_{l-1}` (0-based, as the list). The first layer gets
    one too if the input width differs from its own, so every layer, the
    first included, is residual.

    Layer normalization is pre-norm: it normalizes the input of each RNN,
    leaving the skip path an identity from the input to the top, plus one
    final normalization of the output (as in pre-LN Transformers). Post-norm,
    `y_l = LN(y_{l-1} + RNN_l(y_{l-1}))`, puts a normalization on the skip
    path at every layer, and is the variant that is hard to train at depth
    without warm-up (Xiong et al. 2020, Wang et al. 2019).

    `layers` may hold RNN cells (Keras' cells, this package's cells, or a
    `StackedRNNCells`), each run by a `keras.layers.RNN(cell,
    return_sequences=True)` named `rnn_{index}`, or RNN layers
    (`keras.layers.RNN` and its subclasses such as `LSTM` and `GRU`, or
    `Bidirectional`) that return sequences, run as given (for `stateful`,
    `unroll` or other options, pass a layer). `go_backwards=True` layers are
    rejected, as they return the sequence reversed; use `Bidirectional`.

    The mask is passed to every RNN. Values at masked steps are unspecified:
    with `return_sequences=True` the mask is passed on and the next layer
    must honour it. With `return_sequences=False`, the output is the top
    output at each row's last *valid* step, as `SequencePooling("last")`
    reads it (not the last index, whose residual sum includes the padding);
    a fully masked row gives zeros. The per-step residuals keep every
    layer's output as a sequence, so the last RNN cannot simply stop
    returning sequences.

    Args:
        layers: Non-empty list of RNN cells or RNN layers that return
            sequences, applied in order.
        residual: Whether to add the skip connections. `False` gives the plain
            stack with the same sublayers. Defaults to `True`.
        layer_norm: Whether to apply pre-norm layer normalization (see above).
            Defaults to `False`.
        return_sequences: Whether to return the whole output sequence or only
            its last valid step. Defaults to `True`.
        dropout: Float in [0, 1). Dropout on each RNN's output, before the
            addition. Defaults to 0.
        layer_norm_epsilon: Positive float, the epsilon of the layer
            normalizations. Defaults to `1e-5`.
        projection_initializer: Initializer for the projections' `kernel`.
            Defaults to `"glorot_uniform"`.
        projection_regularizer: Optional regularizer for the projections'
            `kernel`.
        projection_constraint: Optional constraint for the projections'
            `kernel`.
        seed: Random seed for dropout.
        **kwargs: Standard layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: A 3D float tensor `(batch, timesteps, features)`.
        mask: Optional boolean tensor `(batch, timesteps)`; `True` marks the
            valid steps.
        training: Python boolean; dropout is active only when `True`.

    Returns:
        `(batch, timesteps, width)` with `return_sequences`, where `width` is
        the output width of the last RNN (the mask is passed on), else
        `(batch, width)`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> stack = kr.layers.ResidualStack(
    ...     [keras.layers.LSTMCell(16) for _ in range(4)], layer_norm=True
    ... )
    >>> stack(x).shape
    TensorShape([4, 10, 16])
    >>> stack.projections[0].kernel.shape  # the input, 8 -> 16 wide
    TensorShape([8, 16])
    >>> kr.layers.ResidualStack(
    ...     [keras.layers.GRU(16, return_sequences=True)],
    ...     return_sequences=False,
    ... )(x).shape
    TensorShape([4, 16])

    Reference:
        - [Wu et al., 2016. Google's Neural Machine Translation System:
          Bridging the Gap between Human and Machine Translation](
          https://arxiv.org/abs/1609.08144)
        - [Kim et al., 2017. Residual LSTM: Design of a Deep Recurrent
          Architecture for Distant Speech Recognition](
          https://arxiv.org/abs/1701.03360)
        - [Xiong et al., 2020. On Layer Normalization in the Transformer
          Architecture](https://arxiv.org/abs/2002.04745)
        - [Wang et al., 2019. Learning Deep Transformer Models for Machine
          Translation](https://arxiv.org/abs/1906.01787)
    """

    # The last-axis size and the number of steps the layer was built for
    # (`None` until built, or where open).
    _built_features = None
    _built_steps = None

    def __init__(
        self,
        layers,
        residual=True,
        layer_norm=False,
        return_sequences=True,
        dropout=0.0,
        layer_norm_epsilon=1e-5,
        projection_initializer="glorot_uniform",
        projection_regularizer=None,
        projection_constraint=None,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not isinstance(layers, (list, tuple)) or not layers:
            raise invalid(
                "layers", layers, "a non-empty list of RNN cells or RNN layers"
            )
        self.residual = check_bool("residual", residual)
        self.layer_norm = check_bool("layer_norm", layer_norm)
        self.return_sequences = check_bool("return_sequences", return_sequences)
        self.dropout = check_rate("dropout", dropout)
        self.layer_norm_epsilon = check_positive_float(
            "layer_norm_epsilon", layer_norm_epsilon
        )
        self.projection_initializer = initializers.get(projection_initializer)
        self.projection_regularizer = regularizers.get(projection_regularizer)
        self.projection_constraint = constraints.get(projection_constraint)
        self.seed = check_layer_seed(seed)

        # Whether each entry of `layers` was a cell, which `get_config` needs
        # to give back the cell rather than its wrapper.
        self._wraps_cell = []
        rnn_layers = []
        for index, item in enumerate(layers):
            if _is_rnn_layer(item):
                _check_rnn_layer(index, item)
                rnn_layers.append(item)
                self._wraps_cell.append(False)
            elif isinstance(item, keras.layers.Layer) and hasattr(
                item, "state_size"
            ):
                rnn_layers.append(
                    keras.layers.RNN(
                        item,
                        return_sequences=True,
                        name=f"rnn_{index}",
                        dtype=self.dtype_policy,
                    )
                )
                self._wraps_cell.append(True)
            else:
                raise ValueError(
                    "Argument `layers` must contain RNN cells (layers with a "
                    "`state_size`) or RNN layers (`keras.layers.RNN`, "
                    f"`Bidirectional`). Received: layers[{index}]={item!r}"
                )
        self.rnn_layers = rnn_layers
        self.dropout_layer = (
            keras.layers.Dropout(
                self.dropout,
                seed=seed,
                name="dropout",
                dtype=self.dtype_policy,
            )
            if self.dropout > 0
            else None
        )
        self.last_step = (
            None
            if self.return_sequences
            else SequencePooling(
                "last", name="last_step", dtype=self.dtype_policy
            )
        )
        self.supports_masking = True

    def build(self, input_shape):
        shape = check_sequence_shape(self, input_shape, known_features=True)
        self._built_features = shape[-1]
        self._built_steps = shape[1]
        # One entry per RNN, `None` where there is no such sublayer.
        self.layer_norms = []
        self.projections = []
        for index, rnn in enumerate(self.rnn_layers):
            if self.layer_norm:
                norm = keras.layers.LayerNormalization(
                    epsilon=self.layer_norm_epsilon,
                    name=f"layer_norm_{index}",
                    dtype=self.dtype_policy,
                )
                norm.build(shape)
            else:
                norm = None
            self.layer_norms.append(norm)
            if not rnn.built:
                rnn.build(shape)
            output_shape = _rnn_output_shape(rnn, shape)
            projection = None
            if self.residual and output_shape[-1] != shape[-1]:
                projection = keras.layers.Dense(
                    output_shape[-1],
                    use_bias=False,
                    kernel_initializer=reseeded(
                        self.projection_initializer, index
                    ),
                    kernel_regularizer=self.projection_regularizer,
                    kernel_constraint=self.projection_constraint,
                    name=f"projection_{index}",
                    dtype=self.dtype_policy,
                )
                projection.build(shape)
            self.projections.append(projection)
            shape = output_shape
        if self.layer_norm:
            self.final_layer_norm = keras.layers.LayerNormalization(
                epsilon=self.layer_norm_epsilon,
                name="final_layer_norm",
                dtype=self.dtype_policy,
            )
            self.final_layer_norm.build(shape)
        if self.last_step is not None:
            self.last_step.build(shape)

    def call(self, inputs, mask=None, training=None):
        check_sequences(self, inputs, self._built_features)
        mask = check_mask(self, mask, inputs)
        refuse_traced_open_steps(self, inputs, self._built_steps)
        outputs = inputs
        if mask is not None:
            # NaN or inf at a masked step would reach the gradients through
            # the residual path, the layer norms and wrapped RNNs of any kind
            # (Keras' own too); it is zeroed. Finite values stay, so the
            # outputs at masked steps keep their documented composition.
            keep = ops.logical_or(
                ops.expand_dims(mask, -1), ops.isfinite(inputs)
            )
            outputs = ops.where(keep, inputs, 0)
        for rnn, norm, projection in zip(
            self.rnn_layers, self.layer_norms, self.projections
        ):
            branch = outputs if norm is None else norm(outputs)
            branch = rnn(branch, mask=mask, training=training)
            if self.dropout_layer is not None:
                branch = self.dropout_layer(branch, training=training)
            if self.residual:
                skip = outputs if projection is None else projection(outputs)
                outputs = skip + branch
            else:
                outputs = branch
        if self.layer_norm:
            outputs = self.final_layer_norm(outputs)
        if self.last_step is not None:
            outputs = self.last_step(outputs, mask=mask)
        return outputs

    def compute_mask(self, inputs, mask=None):
        return mask if self.return_sequences else None

    def compute_output_shape(self, input_shape):
        shape = check_sequence_shape(self, input_shape, known_features=True)
        for rnn in self.rnn_layers:
            shape = _rnn_output_shape(rnn, shape)
        if self.return_sequences:
            return shape
        return (shape[0], shape[2])

    def get_config(self):
        items = [
            rnn.cell if wraps_cell else rnn
            for rnn, wraps_cell in zip(self.rnn_layers, self._wraps_cell)
        ]
        config = {
            "layers": [keras.saving.serialize_keras_object(i) for i in items],
            "residual": self.residual,
            "layer_norm": self.layer_norm,
            "return_sequences": self.return_sequences,
            "dropout": self.dropout,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "projection_initializer": initializers.serialize(
                self.projection_initializer
            ),
            "projection_regularizer": regularizers.serialize(
                self.projection_regularizer
            ),
            "projection_constraint": constraints.serialize(
                self.projection_constraint
            ),
            "seed": self.seed,
        }
        base_config = super().get_config()
        return {**base_config, **config}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["layers"] = [
            keras.saving.deserialize_keras_object(item)
            for item in config["layers"]
        ]
        return super().from_config(config)


def _is_rnn_layer(item):
    return isinstance(item, _RNN_LAYERS)


def _check_rnn_layer(index, layer):
    for option, wrong in (
        ("return_sequences", False),
        ("return_state", True),
        ("go_backwards", True),
    ):
        value = getattr(layer, option, not wrong)
        if value == wrong:
            hint = (
                "; wrap the layer in `keras.layers.Bidirectional` instead"
                if option == "go_backwards"
                else ""
            )
            raise ValueError(
                f"Every RNN layer of a ResidualStack must have "
                f"`{option}={not wrong}`{hint}. Received: layers[{index}]="
                f"{layer!r} with {option}={value!r}"
            )
    if getattr(layer, "merge_mode", "concat") is None:
        raise ValueError(
            "A `Bidirectional` layer of a ResidualStack must merge its two "
            f"directions. Received: layers[{index}]={layer!r} with "
            "merge_mode=None"
        )


def _rnn_output_shape(rnn, shape):
    output_shape = tuple(rnn.compute_output_shape(shape))
    if len(output_shape) != 3 or output_shape[-1] is None:
        raise ValueError(
            "Every RNN of a ResidualStack must map (batch, timesteps, "
            "features) to (batch, timesteps, units). Received: "
            f"{rnn!r} with output shape {output_shape} for inputs of "
            f"shape {shape}"
        )
    return output_shape
