"""Callback resetting the states of stateful RNN layers."""

import keras

from keras_recurrent._checks import check_positive_int


@keras.saving.register_keras_serializable(package="keras_recurrent")
class ResetStatesCallback(keras.callbacks.Callback):
    """Resets the states of a model's stateful RNN layers.

    A `stateful=True` RNN keeps its final states as the initial states of the
    next batch. When training with truncated backpropagation through time
    (see `kr.data.tbptt_batches`) the states must be reset to zero whenever
    new sequences start:

    - at the start of every epoch (and of every `evaluate` and `predict`);
    - with `reset_every=n`, also before every `n`-th batch (batches
      `n, 2n, ...` of the epoch, counted from 0), where `tbptt_batches` starts
      the next set of sequences (`n = timesteps // window`).

    It resets every layer with `stateful=True` and a `reset_state` method
    (`keras.layers.RNN` and its subclasses, `keras.layers.Bidirectional`),
    including those in nested models.

    Batches are counted as `fit` reports them, so with `steps_per_execution`
    above 1, `reset_every` must be a multiple of it.

    Args:
        reset_every: Optional positive integer; also reset before every
            `reset_every`-th batch. Defaults to `None` (only at the start of
            each epoch, evaluation and prediction).

    Example:

    >>> inputs, targets, num_batches = kr.data.tbptt_batches(
    ...     x, y, batch_size=8, window=20
    ... )
    >>> reset = kr.callbacks.ResetStatesCallback(reset_every=x.shape[1] // 20)
    >>> model.fit(
    ...     inputs, targets, batch_size=8, shuffle=False, callbacks=[reset]
    ... )

    Reference:
        - [Williams & Peng, 1990. An Efficient Gradient-Based Algorithm for
          On-Line Training of Recurrent Network Trajectories](
          https://doi.org/10.1162/neco.1990.2.4.490)
    """

    def __init__(self, reset_every=None):
        super().__init__()
        if reset_every is not None:
            reset_every = check_positive_int("reset_every", reset_every)
        self.reset_every = reset_every

    def get_config(self):
        return {"reset_every": self.reset_every}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def reset_states(self):
        """Resets the states of all stateful layers of the model to zero."""
        for layer in _stateful_layers(self.model):
            layer.reset_state()

    def _check_steps_per_execution(self):
        steps_per_execution = getattr(self.model, "steps_per_execution", 1)
        if self.reset_every and self.reset_every % steps_per_execution:
            raise ValueError(
                "Argument `reset_every` must be a multiple of the model's "
                f"`steps_per_execution` ({steps_per_execution}): callbacks "
                "only see the first batch of every execution. "
                f"Received: reset_every={self.reset_every}"
            )

    def _reset_at(self, batch):
        if self.reset_every and batch > 0 and batch % self.reset_every == 0:
            self.reset_states()

    def on_train_begin(self, logs=None):
        self._check_steps_per_execution()

    def on_epoch_begin(self, epoch, logs=None):
        self.reset_states()

    def on_train_batch_begin(self, batch, logs=None):
        self._reset_at(batch)

    def on_test_begin(self, logs=None):
        self._check_steps_per_execution()
        self.reset_states()

    def on_test_batch_begin(self, batch, logs=None):
        self._reset_at(batch)

    def on_predict_begin(self, logs=None):
        self._check_steps_per_execution()
        self.reset_states()

    def on_predict_batch_begin(self, batch, logs=None):
        self._reset_at(batch)


def _stateful_layers(layer):
    """The layers with `stateful=True` in `layer`, recursing into models."""
    found = []
    if getattr(layer, "stateful", False) and hasattr(layer, "reset_state"):
        found.append(layer)
    for sublayer in getattr(layer, "layers", None) or []:
        found.extend(_stateful_layers(sublayer))
    return found
