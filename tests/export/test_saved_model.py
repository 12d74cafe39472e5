import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
import keras_recurrent.testing

TIMESTEPS, FEATURES, UNITS = 6, 3, 8
LENGTHS = np.array([6, 4, 2], dtype="int32")


def _padded_batch(seed=0, pad=0.0):
    """Sequences of `LENGTHS`, padded with `pad` to `TIMESTEPS`."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(len(LENGTHS), TIMESTEPS, FEATURES)).astype("float32")
    valid = np.arange(TIMESTEPS)[None, :] < LENGTHS[:, None]
    return np.where(valid[..., None], x, np.float32(pad)), valid


def _sequence_model(make_layer, masking, name="frames"):
    keras.utils.set_random_seed(0)
    inputs = keras.Input((None, FEATURES), name=name)
    x = keras.layers.Masking(0.0)(inputs) if masking else inputs
    x = make_layer()(x)
    return keras.Model(inputs, keras.layers.Dense(2, name="score")(x))


def test_peephole_with_masking_serves_lengths(tmp_path):
    model = _sequence_model(lambda: kr.layers.PeepholeLSTM(UNITS), True)
    x, _ = _padded_batch()
    # The client may send anything in the padding; lengths decide.
    x_dirty, _ = _padded_batch(pad=7.0)
    served = keras_recurrent.testing.assert_export_roundtrip(
        model, x_dirty, tmp_path=tmp_path, lengths=LENGTHS
    )
    assert sorted(served) == ["score"]
    # The harness compared with `model.predict` on the zero-padded batch;
    # each sequence run alone, without padding, gives the same.
    for index, length in enumerate(LENGTHS):
        alone = model(x[index : index + 1, :length], training=False)
        np.testing.assert_allclose(
            served["score"][index : index + 1], alone, atol=1e-5
        )


# Keras warns that a functional model "destroys" a mask passed to it; the
# layers inside do get it, only the model's outputs carry none.
@pytest.mark.filterwarnings("ignore:.*mask attached to it:UserWarning")
def test_coupled_with_explicit_mask_serves_lengths(tmp_path):
    model = _sequence_model(lambda: kr.layers.CoupledLSTM(UNITS), False)
    x, valid = _padded_batch(seed=1, pad=3.0)
    served = keras_recurrent.testing.assert_export_roundtrip(
        model, x, tmp_path=tmp_path, lengths=LENGTHS
    )
    masked = model(x, mask=valid, training=False)
    np.testing.assert_allclose(served["score"], masked, atol=1e-5)
    # Without the mask the padding counts: the lengths input is what
    # carries the mask through the export (keras-team/keras#21133).
    unmasked = model(x, training=False)
    assert np.abs(served["score"][1:] - unmasked[1:]).min() > 1e-3


def test_full_gate_recurrence_without_lengths(tmp_path):
    model = _sequence_model(
        lambda: kr.layers.LSTMVariant(UNITS, variant="FGR"), False
    )
    x, _ = _padded_batch(seed=2)
    # Compares with `model.predict(x)`; saved_model_cli lists "frames".
    served = keras_recurrent.testing.assert_export_roundtrip(
        model, {"frames": x}, tmp_path=tmp_path
    )
    assert served["score"].shape == (len(LENGTHS), 2)


def test_signature_names_dtypes_and_embedding_padding(tmp_path):
    keras.utils.set_random_seed(0)
    tokens = keras.Input((None,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(10, 4, mask_zero=True)(tokens)
    x = kr.layers.PeepholeLSTM(UNITS)(x)
    model = keras.Model(tokens, keras.layers.Dense(1, name="dense")(x))
    specs = kr.export.export_saved_model(model, tmp_path, lengths=True)
    assert [(s.name, s.dtype, s.shape.as_list()) for s in specs] == [
        ("tokens", tf.int32, [None, None]),
        ("lengths", tf.int32, [None]),
    ]

    serve = tf.saved_model.load(str(tmp_path)).signatures["serve"]
    _, inputs = serve.structured_input_signature
    assert sorted(inputs) == ["lengths", "tokens"]
    assert sorted(serve.structured_outputs) == ["dense"]
    ids = np.array([[3, 1, 4, 1], [5, 9, 8, 8]], dtype="int32")
    lengths = np.array([4, 2], dtype="int32")
    served = serve(tokens=ids, lengths=lengths)["dense"]
    zero_padded = np.where(np.arange(4) < lengths[:, None], ids, 0)
    np.testing.assert_allclose(
        served, model.predict(zero_padded, verbose=0), atol=1e-5
    )


class _Subclassed(keras.Model):
    def __init__(self):
        super().__init__(name="subclassed")
        self.rnn = kr.layers.CoupledLSTM(UNITS)
        self.head = keras.layers.Dense(1)

    def call(self, inputs, mask=None):
        return self.head(self.rnn(inputs, mask=mask))


@pytest.mark.filterwarnings("ignore:.*mask attached to it:UserWarning")
def test_input_signature_for_subclassed_model(tmp_path):
    keras.utils.set_random_seed(0)
    model = _Subclassed()
    x, valid = _padded_batch(seed=3, pad=5.0)
    model(x)
    with pytest.raises(ValueError, match="input_signature=None"):
        kr.export.export_saved_model(model, tmp_path)
    signature = [tf.TensorSpec((None, None, FEATURES), tf.float32)]
    specs = kr.export.export_saved_model(
        model, tmp_path, lengths=True, input_signature=signature
    )
    assert [spec.name for spec in specs] == ["input_0", "lengths"]
    serve = tf.saved_model.load(str(tmp_path)).signatures["serve"]
    served = serve(input_0=x, lengths=LENGTHS)["output_0"]
    expected = model(x, mask=valid)
    np.testing.assert_allclose(served, expected, atol=1e-5)


@pytest.mark.filterwarnings("ignore:.*mask attached to it:UserWarning")
def test_dict_inputs_and_several_outputs(tmp_path):
    keras.utils.set_random_seed(0)
    # Flattened in key order: the sequence is the second input.
    inputs = {
        "context": keras.Input((2,), name="context"),
        "steps": keras.Input((None, FEATURES), name="steps"),
    }
    h = kr.layers.LSTMVariant(UNITS, variant="NOG")(inputs["steps"])
    h = keras.layers.Concatenate()([h, inputs["context"]])
    model = keras.Model(
        inputs,
        [
            keras.layers.Dense(1, name="mean")(h),
            keras.layers.Dense(2, name="spread")(h),
        ],
    )
    specs = kr.export.export_saved_model(model, tmp_path, lengths=True)
    assert [spec.name for spec in specs] == ["context", "steps", "lengths"]

    serve = tf.saved_model.load(str(tmp_path)).signatures["serve"]
    x, valid = _padded_batch(seed=4, pad=2.0)
    context = np.ones((len(LENGTHS), 2), "float32")
    served = serve(context=context, steps=x, lengths=LENGTHS)
    expected = model(
        {"context": context, "steps": x},
        mask={"context": None, "steps": valid},
    )
    assert sorted(served) == sorted(model.output_names) == ["mean", "spread"]
    np.testing.assert_allclose(served["mean"], expected[0], atol=1e-5)
    np.testing.assert_allclose(served["spread"], expected[1], atol=1e-5)


class _NoMask(keras.Model):
    def __init__(self):
        super().__init__(name="no_mask")
        self.rnn = kr.layers.PeepholeLSTM(UNITS)

    def call(self, inputs):
        return self.rnn(inputs)


def test_rejects_bad_arguments(tmp_path):
    sequence_spec = tf.TensorSpec((None, None, FEATURES), tf.float32)
    model = _sequence_model(lambda: kr.layers.PeepholeLSTM(UNITS), True)
    with pytest.raises(ValueError, match="must be a `keras.Model`"):
        kr.export.export_saved_model(kr.layers.PeepholeLSTM(4), tmp_path)
    with pytest.raises(ValueError, match="lengths=1"):
        kr.export.export_saved_model(model, tmp_path, lengths=1)
    with pytest.raises(ValueError, match="endpoint_name=''"):
        kr.export.export_saved_model(model, tmp_path, endpoint_name="")

    flat = keras.Input((FEATURES,), name="features")
    flat_model = keras.Model(flat, keras.layers.Dense(1)(flat))
    with pytest.raises(ValueError, match=r"rank >= 3.*'features': \(None, 3\)"):
        kr.export.export_saved_model(flat_model, tmp_path, lengths=True)
    with pytest.raises(ValueError, match="one spec per model input"):
        kr.export.export_saved_model(
            flat_model, tmp_path, input_signature=[sequence_spec] * 2
        )

    lengths_input = keras.Input((None, FEATURES), name="lengths")
    clash = keras.Model(lengths_input, kr.layers.PeepholeLSTM(2)(lengths_input))
    with pytest.raises(ValueError, match="already uses"):
        kr.export.export_saved_model(clash, tmp_path, lengths=True)

    with pytest.raises(ValueError, match="must accept `mask`"):
        kr.export.export_saved_model(
            _NoMask(), tmp_path, lengths=True, input_signature=[sequence_spec]
        )


@pytest.mark.parametrize(
    "make_layer",
    [
        lambda: kr.layers.PeepholeLSTM(2, stateful=True),
        lambda: keras.layers.Bidirectional(
            keras.layers.LSTM(2, stateful=True), name="bidirectional"
        ),
    ],
)
def test_stateful_model_is_refused(make_layer, tmp_path):
    # Upstream, the served model keeps its state across requests: two equal
    # requests get two answers.
    inputs = keras.Input((TIMESTEPS, FEATURES), batch_size=2, name="frames")
    model = keras.Model(inputs, make_layer()(inputs))
    with pytest.raises(ValueError, match=r"stateful layers \(.*\).*identical"):
        kr.export.export_saved_model(model, tmp_path / "model")
    assert not (tmp_path / "model").exists()


def _tree_model(node_features=3):
    keras.utils.set_random_seed(0)
    inputs = kr.trees.tree_inputs(2, node_features=node_features, levels=False)
    root = kr.layers.NaryTreeLSTM(2, arity=2, name="root")(
        [inputs["node_inputs"], inputs["children"], inputs["node_mask"]]
    )
    return keras.Model(inputs, root)


def test_tree_and_graph_models_refuse_lengths(tmp_path):
    # Upstream the served tree model took a `lengths` input and ignored it:
    # `children` (rank 3) was taken for the sequence input.
    with pytest.raises(
        ValueError, match=r"Tree and graph tensors \(\[.*'children'.*without"
    ):
        kr.export.export_saved_model(_tree_model(), tmp_path, lengths=True)
    inputs = kr.graphs.graph_inputs(2)
    states = kr.layers.GatedGraph(4, 1, propagation_steps=1)(inputs)
    graph_model = keras.Model(inputs, states)
    with pytest.raises(ValueError, match=r"'edges'.*without `lengths`"):
        kr.export.export_saved_model(graph_model, tmp_path, lengths=True)


def test_served_tree_model_refuses_trees_without_nodes(tmp_path):
    model = _tree_model()
    kr.export.export_saved_model(model, tmp_path / "model")
    serve = tf.saved_model.load(str(tmp_path / "model")).signatures["serve"]

    def trees(batch, nodes):
        return dict(
            node_inputs=tf.zeros((batch, nodes, 3)),
            children=tf.fill((batch, nodes, 2), -1),
            node_mask=tf.ones((batch, nodes), tf.int32),
        )

    # The eager layer refuses N = 0; upstream the served one answered 0.0.
    with pytest.raises(
        ValueError, match="`children` must have at least one node"
    ):
        model(trees(1, 0))
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"`children` must have at least one node.*children.shape\[1\]",
    ):
        serve(**trees(1, 0))
    np.testing.assert_allclose(
        serve(**trees(2, 1))["root"].numpy(),
        keras.ops.convert_to_numpy(model(trees(2, 1))),
        atol=1e-6,
    )
    assert serve(**trees(0, 3))["root"].shape == (0, 2)


def _addons_model():
    """TensorFlow Addons' four cells, in their layers, one after another,
    each reading the mask of `Masking`."""
    keras.utils.set_random_seed(0)
    inputs = keras.Input((None, FEATURES), name="frames")
    x = keras.layers.Masking(0.0)(inputs)
    x = kr.layers.LayerNormSimpleRNN(UNITS, return_sequences=True)(x)
    x = kr.layers.NAS(UNITS, projection=4, return_sequences=True)(x)
    x = kr.layers.ESN(UNITS, leaky=0.5, return_sequences=True)(x)
    x = kr.layers.LayerNormLSTM(UNITS)(x)
    return keras.Model(inputs, keras.layers.Dense(2, name="score")(x))


# Four layers exported and served in a subprocess: 20 to 90 s on a shared
# 2-core machine.
@pytest.mark.slow
def test_addons_layers_serve_lengths(tmp_path):
    model = _addons_model()
    x, _ = _padded_batch(3, pad=5.0)
    served = keras_recurrent.testing.assert_export_roundtrip(
        model, x, tmp_path=tmp_path, lengths=LENGTHS
    )
    assert sorted(served) == ["score"]
