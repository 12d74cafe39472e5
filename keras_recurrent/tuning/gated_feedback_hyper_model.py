"""HyperModel searching over Gated-Feedback RNNs."""

from keras_recurrent import layers as recurrent_layers
from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_int
from keras_recurrent.layers.gated_feedback_cell import CELL_TYPES
from keras_recurrent.layers.gated_feedback_cell import FEEDBACK_MODES
from keras_recurrent.tuning._hyper_model import choice
from keras_recurrent.tuning.sequence_hyper_model import SequenceHyperModel
from keras_recurrent.tuning.sequence_hyper_model import _dropout_rates

# Most layers the search builds; `units_j` exists for j < num_layers.
MAX_LAYERS = 4


class GatedFeedbackHyperModel(SequenceHyperModel):
    """HyperModel for Gated-Feedback RNNs (Chung et al. 2015).

    Builds `Input(input_shape)`, an optional `Masking(0.0)`, one
    `kr.layers.GatedFeedbackRNN` and a `Dense(output_units)` head (on the
    last step, or on every step with `return_sequences`), compiled with
    Adam. Losses and metrics per `task` are those of
    `kr.tuning.SequenceHyperModel`.

    Hyperparameters, all declared in `build` (fix any of them with
    `hp.Fixed(name, value)` before the search to take it out of the search):

    - `cell_type`: Choice of `"simple"`, `"gru"`, `"lstm"`. Default `"lstm"`.
    - `feedback`: Choice of `"gated"`, `"fixed"`, `"none"` (a stacked RNN,
      the baseline). Default `"gated"`.
    - `num_layers`: Int in `[1, 4]`. Default 3 (as in the paper).
    - `units_0`, ..., `units_{num_layers-1}`: the width of each layer, Int in
      `[16, 256]`, step 16. Default 64.
    - `dropout`: Float in `[0, 0.5]`, on every layer's input. Default 0.
    - `recurrent_dropout`: Float in `[0, 0.5]`. Default 0.
    - `learning_rate`: Float in `[1e-4, 1e-2]`, log sampling. Default 1e-3.

    Args:
        input_shape: Tuple `(timesteps, features)`; `timesteps` may be
            `None` for sequences of any length.
        output_units: Positive integer: the number of targets for
            regression, the number of classes (at least 2) for
            classification.
        task: `"regression"` or `"classification"`. Defaults to
            `"regression"`.
        masking: Whether to mask all-zero steps with `Masking(0.0)`.
            Defaults to `False`.
        return_sequences: Whether the head predicts at every step
            (`(batch, timesteps, output_units)`, e.g. language modelling)
            rather than from the last step. Defaults to `False`.
        name: Optional name of the HyperModel, also used for the model.
        tunable: Whether the hyperparameters defined in this HyperModel
            should be added to the search space. Defaults to `True`.

    Returns:
        `build(hp)` returns a compiled `keras.Model` mapping
        `(batch, timesteps, features)` to `(batch, output_units)` or, with
        `return_sequences`, `(batch, timesteps, output_units)`.

    Example:

    >>> x, y, _ = kr.datasets.adding_problem(256, length=20)
    >>> hypermodel = kr.tuning.GatedFeedbackHyperModel((20, 2), 1)
    >>> tuner = keras_tuner.RandomSearch(
    ...     hypermodel, objective="val_loss", max_trials=3,
    ...     directory=tmp_dir)
    >>> tuner.search(x, y, epochs=2, validation_split=0.25, verbose=0)
    >>> best_model = tuner.get_best_models(1)[0]

    Reference:
        - [Chung et al., 2015. Gated Feedback Recurrent Neural Networks](
          https://arxiv.org/abs/1502.02367)
    """

    CELL_TYPES = tuple(CELL_TYPES)
    FEEDBACK_MODES = FEEDBACK_MODES

    def __init__(
        self,
        input_shape,
        output_units,
        *,
        task="regression",
        masking=False,
        return_sequences=False,
        name=None,
        tunable=True,
    ):
        super().__init__(
            input_shape,
            output_units,
            task=task,
            masking=masking,
            name=name,
            tunable=tunable,
        )
        self.return_sequences = check_bool("return_sequences", return_sequences)

    def _recurrent_layers(self, hp, sequences):
        cell_type = choice(hp, "cell_type", self.CELL_TYPES, "lstm")
        feedback = choice(hp, "feedback", self.FEEDBACK_MODES, "gated")
        num_layers = check_int(
            "num_layers", hp.Int("num_layers", 1, MAX_LAYERS, default=3), 1
        )
        units = [
            hp.Int(f"units_{index}", 16, 256, step=16, default=64)
            for index in range(num_layers)
        ]
        dropout, recurrent_dropout = _dropout_rates(hp)
        return recurrent_layers.GatedFeedbackRNN(
            units,
            cell_type=cell_type,
            feedback=feedback,
            dropout=dropout,
            recurrent_dropout=recurrent_dropout,
            return_sequences=self.return_sequences,
            name="gated_feedback_rnn",
        )(sequences)
