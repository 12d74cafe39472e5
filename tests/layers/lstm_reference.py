"""NumPy reference of the LSTM variants of Greff et al. (2017).

Written from the papers' equations, independently of the package: gate
blocks, peepholes and special cases are spelled out here, not imported.
"""

import keras
import numpy as np

# Gate blocks of each variant's kernel, in Keras' [i, f, c, o] order.
BLOCKS = {
    "V": "ifco",
    "NIG": "fco",
    "NFG": "ico",
    "NOG": "ifc",
    "NIAF": "ifco",
    "NOAF": "ifco",
    "NP": "ifco",
    "CIFG": "fco",
    "FGR": "ifco",
}


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def named_weights(layer):
    """`{name: array}` of a cell's or layer's weights (last path element)."""
    return {w.path.split("/")[-1]: np.array(w.numpy()) for w in layer.weights}


def lstm_step(x, states, w, variant="V", cell_clip=None, dropout_masks=None):
    """One step. `states` is `[h, c]` (plus `gates` for FGR)."""
    h, c = states[0], states[1]
    x_mask, h_mask = dropout_masks or (None, None)
    if x_mask is not None:
        x = x * x_mask
    h_in = h if h_mask is None else h * h_mask
    blocks = BLOCKS[variant]
    z = x @ w["kernel"] + h_in @ w["recurrent_kernel"]
    if "bias" in w:
        z = z + w["bias"]
    z = dict(zip(blocks, np.split(z, len(blocks), axis=-1)))
    if variant == "FGR":
        extra = np.split(states[2] @ w["gate_recurrent_kernel"], 3, axis=-1)
        for gate, e in zip("ifo", extra):
            z[gate] = z[gate] + e

    def peep(name, cell):
        key = f"{name}_gate_peephole_weights"
        return w[key] * cell if key in w else 0.0

    f = sigmoid(z["f"] + peep("forget", c)) if "f" in blocks else 1.0
    if "i" in blocks:
        i = sigmoid(z["i"] + peep("input", c))
    elif variant == "CIFG":
        i = 1.0 - f
    else:
        i = 1.0
    g = z["c"] if variant == "NIAF" else np.tanh(z["c"])
    c_new = f * c + i * g
    if cell_clip is not None:
        c_new = np.clip(c_new, -cell_clip, cell_clip)
    o = sigmoid(z["o"] + peep("output", c_new)) if "o" in blocks else 1.0
    h_new = o * (c_new if variant == "NOAF" else np.tanh(c_new))
    if "projection_kernel" in w:
        h_new = h_new @ w["projection_kernel"]
    new_states = [h_new, c_new]
    if variant == "FGR":
        new_states.append(np.concatenate([i, f, o], axis=-1))
    return h_new, new_states


def lstm_sequence(
    x,
    w,
    variant="V",
    mask=None,
    initial_states=None,
    cell_clip=None,
    go_backwards=False,
    dropout_masks=None,
):
    """Runs `x` `(batch, time, features)`; returns `(outputs, final_states)`.

    Masked steps keep the previous states and repeat the previous output
    (Keras' default, `zero_output_for_mask=False`).
    """
    batch, steps, _ = x.shape
    units = w["kernel"].shape[1] // len(BLOCKS[variant])
    state_units = w["recurrent_kernel"].shape[0]
    if initial_states is None:
        initial_states = [
            np.zeros((batch, state_units)),
            np.zeros((batch, units)),
        ]
        if variant == "FGR":
            initial_states.append(np.zeros((batch, 3 * units)))
    states = [np.array(s, dtype=np.float64) for s in initial_states]
    output = np.zeros((batch, state_units))
    outputs = []
    order = range(steps - 1, -1, -1) if go_backwards else range(steps)
    for t in order:
        new_output, new_states = lstm_step(
            x[:, t], states, w, variant, cell_clip, dropout_masks
        )
        if mask is not None:
            keep = mask[:, t][:, None].astype(bool)
            new_output = np.where(keep, new_output, output)
            new_states = [
                np.where(keep, n, s) for n, s in zip(new_states, states)
            ]
        output, states = new_output, new_states
        outputs.append(output)
    return np.stack(outputs, axis=1), states


def randomize_weights(layer, seed=0, scale=0.5):
    """Gives every weight of a built layer random normal values."""
    rng = np.random.default_rng(seed)
    for weight in layer.weights:
        weight.assign(rng.normal(scale=scale, size=weight.shape))


def assert_learns_sequence_sum(layer):
    """Trains `Input -> layer -> Dense(1)` to sum a sequence; loss must drop."""
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(64, 8, 1)).astype("float32")
    y = x.sum(axis=1)
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((8, 1)), layer, keras.layers.Dense(1)]
    )
    model.compile(keras.optimizers.Adam(0.02), "mse")
    history = model.fit(x, y, epochs=30, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.1 * history.history["loss"][0]
