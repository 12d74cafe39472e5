"""What the sequence layers share: a thin `RNN` of one cell, whose
arguments, properties and docs come from the cell."""

import inspect

import keras
from keras import ops

from keras_recurrent._checks import check_bool
from keras_recurrent._compat import cudnn_ok
from keras_recurrent._compat import fused_lstm
from keras_recurrent._compat import rnn_inner_loop
from keras_recurrent.layers._cell_layer import CellLayer
from keras_recurrent.layers._concrete import torchscript_tracing
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._masking import zero_masked_steps
from keras_recurrent.layers._sequence_checks import check_mask
from keras_recurrent.layers._sequence_checks import check_sequence_shape
from keras_recurrent.layers._sequence_checks import check_sequences
from keras_recurrent.layers._sequence_checks import check_stateful_batch
from keras_recurrent.layers._sequence_checks import refuse_traced_open_steps

# The options of `keras.layers.RNN` that the layers take; each is a boolean
# that defaults to `False`.
RNN_OPTIONS = (
    "return_sequences",
    "return_state",
    "go_backwards",
    "stateful",
    "unroll",
    "zero_output_for_mask",
)

# The values `keras.layers.LSTM` takes for `use_cudnn`.
USE_CUDNN_VALUES = ("auto", True, False)


class CellRNN(CellLayer, KnownRankInputs, keras.layers.RNN):
    """An `RNN` layer that builds its cell from its own keyword arguments.

    A subclass names its cell class, `cell_class = SomeCell`, and nothing
    else about the cell (`CellLayer`): the layer takes every argument of the
    cell, with the cell's defaults, followed by the `RNN_OPTIONS` of
    `keras.layers.RNN` and the standard layer keyword arguments. The
    subclass's `__init__` signature (what `inspect.signature` and `help`
    show) is made from the cell's, so an argument added to the cell reaches
    the layer's signature, properties and config without touching the
    layer. An argument that the cell class fixes itself (its
    `_fixed_arguments`) goes to the cell, which refuses it with its own
    `ValueError`. The config is the cell's, flattened into the layer's, so
    `from_config` is `cls(**config)`.

    The layer checks its inputs (rank 3, numbers, the built width, at least
    one step; a boolean `(batch, timesteps)` mask), casts integer and
    boolean inputs to its compute dtype (as `keras.layers.LSTM` takes them)
    and zeroes the inputs at masked steps (so NaN or inf there reaches
    neither the outputs nor the gradients).

    As `keras.layers.LSTM`, the layer takes `use_cudnn` (`"auto"`, `True`
    or `False`) and `implementation` (passed to the cell, which ignores it).
    Where the cell is exactly `keras.layers.LSTMCell` (its
    `_fused_lstm_blocker()` is `None`) and the call has no mask (nor, on
    JAX, `go_backwards` with `return_sequences`, whose outputs Keras' JAX
    kernel orders differently from its loop), `"auto"`
    and `True` run Keras' fused LSTM kernel (cuDNN on a GPU; on PyTorch
    also its CPU loop) on the cell's own weights, as `keras.layers.LSTM`
    does; elsewhere `"auto"` runs the cell's loop, and `True` raises a
    `ValueError` saying why. Neither value is in the config, as in Keras: a
    model saved where cuDNN runs loads where it does not.

    The loop contract. A cell run by this layer has, besides Keras' cell
    contract (`state_size`, `output_size`, `call(inputs, states,
    training=False)` returning `(output, new_states)`, and
    `get_initial_state(batch_size)`), two methods:

    - `prepare_loop(sequences, training=False)` returns `(step_inputs,
      loop_state)`. The layer calls it once per call, before its time loop.
      `step_inputs` is what the loop steps through, `(batch, timesteps, k)`:
      the sequences themselves, or a form of them that the cell's steps
      read instead (e.g. their input projections, made for all steps at
      once). `loop_state` is a structure (a dict) of what every step of
      this loop reads and nothing else changes: the weights arranged and
      cast once, the dropout masks of the sequences (`None` outside
      training; see `SequenceDropout.sequence_dropout_masks`).
    - `step(inputs, states, loop_state)` returns `(output, new_states)` for
      one step of `step_inputs`. The layer passes `loop_state` to each step
      as it is.

    `call` is one `step` with a `loop_state` the cell makes for that call
    from its variables, so a cell also gives the same numbers run by a plain
    `keras.layers.RNN`, `Bidirectional` or `StackedRNNCells` (to float
    rounding: a loop may order the matmuls differently). The cell keeps
    nothing between calls; the only state on it is the dropout masks that
    Keras' `RNN` asks for before its loop and clears after it (see
    `keras_recurrent.layers._dropout`). This is Keras' own split of a fast
    path: `keras.layers.LSTM.inner_loop` hands the weights to
    `backend.lstm` explicitly.
    """

    # Set by a subclass: the cell class it wraps.
    _signature = None
    # Passed on to the cell, as `keras.layers.LSTM` passes it to `LSTMCell`.
    _cell_kwargs = ("implementation",)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "cell_class" not in vars(cls):
            return
        cls._signature = inspect.Signature(
            [
                inspect.Parameter(
                    "self", inspect.Parameter.POSITIONAL_OR_KEYWORD
                ),
                *cls._cell_parameters,
                *(
                    inspect.Parameter(
                        name, inspect.Parameter.KEYWORD_ONLY, default=False
                    )
                    for name in RNN_OPTIONS
                ),
                inspect.Parameter(
                    "use_cudnn", inspect.Parameter.KEYWORD_ONLY, default="auto"
                ),
                inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
            ]
        )
        if "__init__" not in vars(cls):
            # An `__init__` of the subclass's own, for its signature alone.
            def init(self, *args, **kwargs):
                CellRNN.__init__(self, *args, **kwargs)

            init.__signature__ = cls._signature
            init.__name__ = "__init__"
            init.__qualname__ = f"{cls.__qualname__}.__init__"
            init.__module__ = cls.__module__
            cls.__init__ = init

    def __init__(self, *args, **kwargs):
        arguments = self._signature.bind(self, *args, **kwargs).arguments
        kwargs = arguments.pop("kwargs", {})
        options = {name: arguments.pop(name, False) for name in RNN_OPTIONS}
        # Keras' RNN takes any value here; `"no"` would mean True.
        for name, value in options.items():
            check_bool(name, value)
        use_cudnn = arguments.pop("use_cudnn", "auto")
        if use_cudnn not in USE_CUDNN_VALUES:  # Keras' own test.
            raise ValueError(
                "Invalid value for argument `use_cudnn`. Expected one of "
                f"{{'auto', True, False}}. Received: use_cudnn={use_cudnn!r}"
            )
        cell = self._make_cell(arguments, kwargs)
        super().__init__(cell, **options, **kwargs)
        self.use_cudnn = use_cudnn
        if use_cudnn is True and self._cell_fused_blocker() is not None:
            raise self._cudnn_error(self._cell_fused_blocker())
        if (
            use_cudnn in ("auto", True)
            and keras.backend.backend() == "tensorflow"
            and self._cell_fused_blocker() is None
            and cudnn_ok(
                cell.activation,
                cell.recurrent_activation,
                self.unroll,
                cell.use_bias,
            )
        ):
            # As `keras.layers.LSTM`: cuDNN kernels do not compile with XLA.
            self.supports_jit = False

    # The last-axis size and the number of steps the layer was built for
    # (`None` until built, or where open).
    _built_features = None
    _built_steps = None

    def build(self, sequences_shape, initial_state_shape=None):
        sequences_shape = check_sequence_shape(self, sequences_shape)
        self._built_features = sequences_shape[-1]
        self._built_steps = sequences_shape[1]
        super().build(sequences_shape, initial_state_shape)

    def call(self, sequences, initial_state=None, mask=None, training=False):
        sequences = check_sequences(
            self, sequences, self._built_features, cast_integers=True
        )
        mask = check_mask(self, mask, sequences)
        refuse_traced_open_steps(self, sequences, self._built_steps)
        if self.stateful and initial_state is None and self.states is not None:
            sequences = check_stateful_batch(self, sequences)
        sequences = zero_masked_steps(sequences, mask)
        cell = self.cell
        try:
            # Keras' `RNN.call` asks the cell for its dropout masks before
            # `inner_loop` and clears them after it; the `finally` also
            # clears them when a step fails.
            return super().call(
                sequences,
                initial_state=initial_state,
                mask=mask,
                training=training,
            )
        finally:
            cell.reset_dropout_mask()
            cell.reset_recurrent_dropout_mask()

    def inner_loop(self, sequences, initial_state, mask, training=False):
        if self.use_cudnn in ("auto", True):
            fused = self._fused_loop(sequences, initial_state, mask, training)
            if fused is not None:
                return fused
        return self._time_loop(
            sequences,
            initial_state,
            mask,
            training,
            zero_output_for_mask=self.zero_output_for_mask,
            return_sequences=self.return_sequences,
        )

    def _time_loop(
        self,
        sequences,
        initial_state,
        mask,
        training,
        *,
        zero_output_for_mask,
        return_sequences,
    ):
        """Keras' time loop over the cell's `step`, with the options given.

        Returns `(last_output, outputs, states)`, as `inner_loop`.
        """
        cell = self.cell
        step_inputs, loop_state = cell.prepare_loop(sequences, training)
        # Keras' JAX loop takes the first state for the previous output at
        # masked steps; a cell whose output is another of its states
        # (`NASCell`'s `[c, m]`) is looped with that state first.
        first = getattr(cell, "output_state_index", 0)
        order = [first, *(i for i in range(len(initial_state)) if i != first)]
        inverse = [order.index(i) for i in range(len(order))]

        def step(inputs, states):
            states = [states[i] for i in inverse]
            output, new_states = cell.step(inputs, states, loop_state)
            return output, [new_states[i] for i in order]

        go_backwards = self.go_backwards
        if go_backwards and torchscript_tracing():
            # Keras' PyTorch loop, traced (ONNX export with an open batch),
            # reverses by the maximum of the traced 0-d `T`, an ONNX
            # `ReduceMax` that ONNX Runtime refuses to load. The same loop,
            # forwards over the reversed steps (outputs in loop order, as
            # Keras gives them).
            step_inputs = keras.tree.map_structure(
                lambda x: ops.flip(x, axis=1), step_inputs
            )
            mask = None if mask is None else ops.flip(mask, axis=1)
            go_backwards = False

        last_output, outputs, states = rnn_inner_loop(
            step,
            step_inputs,
            [initial_state[i] for i in order],
            mask,
            go_backwards=go_backwards,
            unroll=self.unroll,
            stateful=self.stateful,
            zero_output_for_mask=zero_output_for_mask,
            return_sequences=return_sequences,
        )
        return last_output, outputs, [states[i] for i in inverse]

    def _cell_fused_blocker(self):
        """Why Keras' fused LSTM kernel cannot compute the cell, or `None`
        where the cell is exactly `keras.layers.LSTMCell`."""
        blocker = getattr(self.cell, "_fused_lstm_blocker", None)
        if blocker is None:
            return (
                f"{type(self.cell).__name__} is not the LSTM cell of "
                "`keras.layers.LSTM`, the only one Keras' fused kernels compute"
            )
        return blocker()

    def _fused_blocker(self, mask):
        """Why a call with `mask` does not run on Keras' fused LSTM kernel,
        or `None` where it is tried (the backend may still decline it)."""
        blocker = self._cell_fused_blocker()
        if blocker is None and mask is not None:
            blocker = (
                "the call has a mask, which the layer runs with its own loop "
                "on every backend (Keras' cuDNN kernels do not keep the "
                "previous output at masked steps)"
            )
        if (
            blocker is None
            and self.go_backwards
            and self.return_sequences
            and keras.backend.backend() == "jax"
        ):
            blocker = (
                "go_backwards=True with return_sequences=True on JAX, where "
                "Keras' cuDNN kernel returns the outputs in the input's "
                "order and its loop (and ours) in the reversed order"
            )
        return blocker

    def _cudnn_error(self, reason):
        return ValueError(
            f"{type(self).__name__} '{self.name}': use_cudnn=True was "
            "specified, but Keras' fused (cuDNN) LSTM kernel cannot run this "
            f"layer: {reason}. Pass use_cudnn='auto' to fall back to the "
            "layer's own loop, which computes the same numbers."
        )

    def _fused_loop(self, sequences, initial_state, mask, training):
        """Keras' fused LSTM kernel over `sequences`, as `inner_loop`
        returns it; `None` where it does not run and `use_cudnn="auto"`."""
        reason = self._fused_blocker(mask)
        if reason is None:
            cell = self.cell
            # One input dropout mask per sequence, as the cell's loop and
            # `keras.layers.LSTM` apply it (no recurrent dropout here).
            input_mask, _ = cell.sequence_dropout_masks(
                sequences[:, 0, :], training
            )
            if input_mask is not None:
                sequences = sequences * ops.expand_dims(input_mask, 1)
            dtype = cell.compute_dtype
            try:
                output = fused_lstm(
                    sequences,
                    initial_state[0],
                    initial_state[1],
                    None,
                    kernel=ops.cast(cell.kernel, dtype),
                    recurrent_kernel=ops.cast(cell.recurrent_kernel, dtype),
                    bias=None
                    if cell.bias is None
                    else ops.cast(cell.bias, dtype),
                    activation=cell.activation,
                    recurrent_activation=cell.recurrent_activation,
                    return_sequences=self.return_sequences,
                    go_backwards=self.go_backwards,
                    unroll=self.unroll,
                )
            except NotImplementedError:
                reason = (
                    f"Keras' {keras.backend.backend()} backend has no fused "
                    "LSTM kernel for it here (cuDNN needs a GPU, "
                    "activation='tanh', recurrent_activation='sigmoid', "
                    "use_bias=True and unroll=False)"
                )
            else:
                if keras.backend.backend() == "tensorflow":
                    self.supports_jit = False
                return output
        if self.use_cudnn is True:
            raise self._cudnn_error(reason)
        return None
