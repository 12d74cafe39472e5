"""HyperModel searching over recurrent sequence models."""

import keras

from keras_recurrent import layers as recurrent_layers
from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_int
from keras_recurrent._checks import check_option
from keras_recurrent._checks import check_output_units
from keras_recurrent._checks import is_positive_int
from keras_recurrent.tuning._hyper_model import RecurrentHyperModel
from keras_recurrent.tuning._hyper_model import choice

_TASKS = ("regression", "classification")


def _greff_variant(variant):
    def make(units, **kwargs):
        return recurrent_layers.LSTMVariant(units, variant=variant, **kwargs)

    return make


def _coupled_without_peepholes(units, **kwargs):
    return recurrent_layers.CoupledLSTM(units, use_peepholes=False, **kwargs)


# Every cell type the search can choose, and how to make its layer.
_RECURRENT_LAYERS = {
    "lstm": keras.layers.LSTM,
    "peephole": recurrent_layers.PeepholeLSTM,
    "coupled": _coupled_without_peepholes,  # "greff_cifg" has peepholes.
    **{
        f"greff_{variant.lower()}": _greff_variant(variant)
        for variant in recurrent_layers.VARIANTS
    },
}


class SequenceHyperModel(RecurrentHyperModel):
    """HyperModel for stacked recurrent models over sequences.

    Builds `Input(input_shape)`, an optional `Masking(0.0)` (or, for token
    ids, an `Embedding`), `num_layers` recurrent layers of one `cell_type`
    (all but the last with `return_sequences=True`) and a
    `Dense(output_units)` head, compiled with Adam. For `"regression"` the
    head is linear and the loss is the mean squared error; for
    `"classification"` the head gives logits, the loss is
    `SparseCategoricalCrossentropy(from_logits=True)` and accuracy is
    reported.

    Hyperparameters, all declared in `build` (fix any of them with
    `hp.Fixed(name, value)` before the search to take it out of the search):

    - `cell_type`: Choice of `"lstm"` (`keras.layers.LSTM`), `"peephole"`
      (`kr.layers.PeepholeLSTM`), `"coupled"` (`kr.layers.CoupledLSTM` with
      `use_peepholes=False`) and `"greff_v"`, `"greff_nig"`, `"greff_nfg"`,
      `"greff_nog"`, `"greff_niaf"`, `"greff_noaf"`, `"greff_np"`,
      `"greff_cifg"`, `"greff_fgr"` (`kr.layers.LSTMVariant` with that
      variant). Default `"peephole"`.
    - `units`: Int in `[16, 256]`, step 16. Default 64.
    - `num_layers`: Int in `[1, 3]`. Default 1.
    - `dropout`: Float in `[0, 0.5]`, on the inputs of each recurrent layer.
      Default 0.
    - `recurrent_dropout`: Float in `[0, 0.5]`. Default 0.
    - `learning_rate`: Float in `[1e-4, 1e-2]`, log sampling. Default 1e-3.
    - `embedding_dim`: Int in `[8, 128]`, step 8, only with
      `vocabulary_size`. Default 32.

    Args:
        input_shape: Tuple `(timesteps, features)` of float features, or
            `(timesteps,)` of int token ids with `vocabulary_size`;
            `timesteps` may be `None` for sequences of any length.
        output_units: Positive integer: the number of targets for
            regression, the number of classes (at least 2) for
            classification.
        task: `"regression"` or `"classification"`. Defaults to
            `"regression"`.
        masking: Whether to mask all-zero steps with `Masking(0.0)`, for
            zero-padded sequences of different lengths (with
            `vocabulary_size`: whether token id 0 is padding, through
            `Embedding(mask_zero=True)`). Defaults to `False`.
        vocabulary_size: Optional positive integer: the inputs are int
            token ids in `[0, vocabulary_size)`, embedded by a
            `keras.layers.Embedding(vocabulary_size, embedding_dim)` before
            the recurrent layers. Defaults to `None` (float features).
        name: Optional name of the HyperModel, also used for the model.
        tunable: Whether the hyperparameters defined in this HyperModel
            should be added to the search space. Defaults to `True`.

    Returns:
        `build(hp)` returns a compiled `keras.Model` mapping
        `(batch, timesteps, features)` (or int `(batch, timesteps)` with
        `vocabulary_size`) to `(batch, output_units)`.

    Example:

    >>> x, y, _ = kr.datasets.adding_problem(256, length=20)
    >>> hypermodel = kr.tuning.SequenceHyperModel((20, 2), 1)
    >>> tuner = keras_tuner.RandomSearch(
    ...     hypermodel, objective="val_loss", max_trials=3,
    ...     directory=tmp_dir)
    >>> tuner.search(x, y, epochs=2, validation_split=0.25, verbose=0)
    >>> best_model = tuner.get_best_models(1)[0]

    Reference:
        - [Greff et al., 2017. LSTM: A Search Space Odyssey](
          https://arxiv.org/abs/1503.04069)
    """

    CELL_TYPES = tuple(_RECURRENT_LAYERS)

    def __init__(
        self,
        input_shape,
        output_units,
        *,
        task="regression",
        masking=False,
        vocabulary_size=None,
        name=None,
        tunable=True,
    ):
        super().__init__(name=name, tunable=tunable)
        self.vocabulary_size = check_int(
            "vocabulary_size", vocabulary_size, 1, allow_none=True
        )
        _check_input_shape(input_shape, tokens=vocabulary_size is not None)
        task = check_option("task", task, _TASKS)
        self.output_units = check_output_units(
            output_units, task, classification=task == "classification"
        )
        self.masking = check_bool("masking", masking)
        self.input_shape = tuple(
            None if size is None else int(size) for size in input_shape
        )
        self.task = task

    def build(self, hp):
        if self.vocabulary_size is None:
            inputs = keras.Input(self.input_shape, name="sequences")
            outputs = inputs
            if self.masking:
                outputs = keras.layers.Masking(0.0, name="masking")(outputs)
        else:
            inputs = keras.Input(
                self.input_shape, dtype="int32", name="sequences"
            )
            outputs = keras.layers.Embedding(
                self.vocabulary_size,
                hp.Int("embedding_dim", 8, 128, step=8, default=32),
                mask_zero=self.masking,
                name="embedding",
            )(inputs)
        outputs = self._recurrent_layers(hp, outputs)
        outputs = keras.layers.Dense(self.output_units, name="head")(outputs)
        model = keras.Model(inputs, outputs, name=self.name)

        learning_rate = hp.Float(
            "learning_rate", 1e-4, 1e-2, sampling="log", default=1e-3
        )
        if self.task == "classification":
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            metrics = ["accuracy"]
        else:
            loss = "mse"
            metrics = None
        model.compile(
            optimizer=keras.optimizers.Adam(learning_rate=learning_rate),
            loss=loss,
            metrics=metrics,
        )
        return model

    def _recurrent_layers(self, hp, sequences):
        """The tunable recurrent part, from the sequences to the head."""
        cell_type = choice(hp, "cell_type", self.CELL_TYPES, "peephole")
        units = hp.Int("units", 16, 256, step=16, default=64)
        num_layers = check_int(
            "num_layers", hp.Int("num_layers", 1, 3, default=1), 1
        )
        dropout, recurrent_dropout = _dropout_rates(hp)
        make_layer = _RECURRENT_LAYERS[cell_type]
        for index in range(num_layers):
            sequences = make_layer(
                units,
                dropout=dropout,
                recurrent_dropout=recurrent_dropout,
                return_sequences=index < num_layers - 1,
                name=f"{cell_type}_{index}",
            )(sequences)
        return sequences


def _check_input_shape(input_shape, tokens):
    """Raises a `ValueError` unless `input_shape` fits the kind of inputs."""
    rank = 1 if tokens else 2
    if (
        not isinstance(input_shape, (tuple, list))
        or len(input_shape) != rank
        or not (input_shape[0] is None or is_positive_int(input_shape[0]))
        or not all(is_positive_int(size) for size in input_shape[1:])
    ):
        expected = (
            "`(timesteps,)` of token ids, with `vocabulary_size`,"
            if tokens
            else "`(timesteps, features)`"
        )
        raise ValueError(
            f"Argument `input_shape` must be a tuple {expected} of positive "
            "integers (`timesteps` may be None). "
            f"Received: input_shape={input_shape!r}"
        )


def _dropout_rates(hp):
    """The tunable input and recurrent dropout rates."""
    return (
        hp.Float("dropout", 0.0, 0.5, default=0.0),
        hp.Float("recurrent_dropout", 0.0, 0.5, default=0.0),
    )
