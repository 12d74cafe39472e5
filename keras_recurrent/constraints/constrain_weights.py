"""Applying the weight constraints before the first optimizer update."""

import keras


def constrain_weights(model):
    """Applies every weight's constraint to its current value, in place.

    Keras applies a weight's constraint only after an optimizer update, never
    to the initial weights. So the bounds of `kr.constraints.LSTMStability`
    and `kr.constraints.SpectralNorm` hold only from the first update on,
    and a `fit` that updates nothing leaves the initial weights outside them.
    That happens under the `"mixed_float16"` policy: the
    `keras.optimizers.LossScaleOptimizer` that `compile` adds starts with a
    loss scale of `2**15`, and skips each step whose scaled gradients
    overflow float16 (while it halves the scale), constraints included. A
    short `fit` can skip every step: the recurrent kernel of an LSTM stays
    at its orthogonal initialization, whose block column sums exceed
    `LSTMStability(0.6)`'s bounds 12 times, and a `SimpleRNN`'s at spectral
    norm 1.

    Call this function once the model is built (before `fit`): the bounds
    then hold from the start and after every step, applied or skipped.
    The layers of `kr.layers` already constrain their weights when they
    create them; it is needed for Keras' own layers (`keras.layers.LSTM`)
    and other layers given these constraints.

    Args:
        model: A built `keras.Layer` or `keras.Model`.

    Returns:
        The list of the variables it constrained.

    Example:

    >>> keras.mixed_precision.set_global_policy("mixed_float16")
    >>> inputs = keras.Input((20, 2))
    >>> lstm = keras.layers.LSTM(
    ...     32, recurrent_constraint=kr.constraints.LSTMStability(0.6))
    >>> model = keras.Model(inputs, keras.layers.Dense(1)(lstm(inputs)))
    >>> model.compile("adam", "mse")
    >>> [v.path for v in kr.constraints.constrain_weights(model)]
    ['lstm/lstm_cell/recurrent_kernel']
    >>> model.fit(x, y, epochs=1)  # Inside the bounds, skipped steps or not.
    """
    if not isinstance(model, keras.Layer):
        raise ValueError(
            "Argument `model` must be a `keras.Layer` or `keras.Model`. "
            f"Received: model={model!r} of type {type(model).__name__}"
        )
    if not model.built:
        raise ValueError(
            f"Argument `model` must be built (call it on data, or build it "
            "from `keras.Input`s) so that its weights exist. "
            f"Received: model={model.name!r}, not built"
        )
    constrained = []
    for variable in model.weights:
        constraint = getattr(variable, "constraint", None)
        if constraint is not None:
            variable.assign(constraint(variable))
            constrained.append(variable)
    return constrained
