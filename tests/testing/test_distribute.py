import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
import keras_recurrent.testing

STEPS, GLOBAL_BATCH, TIMESTEPS, FEATURES, UNITS = 3, 8, 5, 3, 8
LAYERS = {
    "peephole": lambda: kr.layers.PeepholeLSTM(UNITS),
    "coupled": lambda: kr.layers.CoupledLSTM(UNITS),
    "variant_NIG": lambda: kr.layers.LSTMVariant(UNITS, variant="NIG"),
}


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(STEPS * GLOBAL_BATCH, TIMESTEPS, FEATURES))
    y = rng.normal(size=(STEPS * GLOBAL_BATCH, 1))
    return x.astype("float32"), y.astype("float32")


def _builder(make_layer, masking=False):
    def build_model():
        inputs = keras.Input((TIMESTEPS, FEATURES))
        x = keras.layers.Masking(0.0)(inputs) if masking else inputs
        x = make_layer()(x)
        return keras.Model(inputs, keras.layers.Dense(1)(x))

    return build_model


def test_strategy_has_two_replicas_on_distinct_devices():
    strategy = keras_recurrent.testing.mirrored_strategy(2)
    assert strategy.num_replicas_in_sync == 2
    assert len(set(strategy.extended.worker_devices)) == 2
    # Cached: a second strategy over the same devices would reuse the
    # collective keys of the first (tensorflow/tensorflow#62790).
    assert keras_recurrent.testing.mirrored_strategy(2) is strategy
    with strategy.scope():
        variable = keras.Variable(1.0)
    assert len(variable.value.values) == 2


def test_configure_cpu_replicas_after_runtime_start():
    tf.constant(0.0)  # the runtime is running from here on
    names = keras_recurrent.testing.configure_cpu_replicas(2)
    assert names == ["/device:CPU:0", "/device:CPU:1"]
    assert len(tf.config.list_logical_devices("CPU")) == 2
    with pytest.raises(RuntimeError, match="already initialized with 2"):
        keras_recurrent.testing.configure_cpu_replicas(3)
    with pytest.raises(ValueError, match="num_replicas=0"):
        keras_recurrent.testing.configure_cpu_replicas(0)


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_mirrored_training_matches_single_device(layer):
    x, y = _data()
    trained = keras_recurrent.testing.assert_mirrored_equivalence(
        _builder(LAYERS[layer]), x, y, steps=STEPS, atol=1e-5
    )
    assert trained["strategy"].num_replicas_in_sync == 2
    # Training moved the weights, so the comparison is not vacuous.
    kernel = trained["single"].layers[1].cell.kernel
    keras.utils.set_random_seed(0)
    fresh = _builder(LAYERS[layer])()
    assert (
        np.abs(kernel.numpy() - fresh.layers[1].cell.kernel.numpy()).max()
        > 1e-3
    )


def test_mirrored_training_with_masked_padding():
    x, y = _data(seed=1)
    x[::2, 3:] = 0.0  # every other sequence is two steps long
    keras_recurrent.testing.assert_mirrored_equivalence(
        _builder(LAYERS["peephole"], masking=True), x, y, steps=STEPS
    )


def test_detects_unscaled_replica_gradients():
    # The mean over each replica's batch, not over the global batch: twice
    # the gradient under two replicas, as if Keras did not scale the loss.
    def per_replica_mse(y_true, y_pred):
        replicas = tf.distribute.get_strategy().num_replicas_in_sync
        return keras.ops.mean((y_true - y_pred) ** 2) * replicas

    x, y = _data()
    with pytest.raises(
        AssertionError, match=r"differs after training \(steps=1\)"
    ):
        keras_recurrent.testing.assert_mirrored_equivalence(
            _builder(LAYERS["peephole"]),
            x,
            y,
            steps=1,
            compile_kwargs={"loss": per_replica_mse},
        )


def test_rejects_bad_arguments():
    x, y = _data()
    build_model = _builder(LAYERS["peephole"])
    with pytest.raises(ValueError, match="global_batch_size=7"):
        keras_recurrent.testing.assert_mirrored_equivalence(
            build_model, x, y, global_batch_size=7
        )
    with pytest.raises(ValueError, match=r"boolean.*'float32', 'bool'"):
        keras_recurrent.testing.assert_mirrored_equivalence(
            build_model, [x, np.ones(x.shape[:2], bool)], y
        )
    with pytest.raises(ValueError, match=r"x.shape=\(24, 5, 3\)"):
        keras_recurrent.testing.assert_mirrored_equivalence(
            build_model, x, y, steps=4
        )
