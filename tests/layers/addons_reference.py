"""NumPy references of the TensorFlow Addons cells, from TFA's equations.

Each `*_step(x, states, w, dropout_masks)` does one step in float64, with
`w` the cell's weights by name (`named_weights`; for `LayerNormLSTMCell`
the norm weights are keyed `kernel_norm/gamma`, ...). `sequence` runs a
step over `(batch, time, features)` with an optional mask (masked steps
keep the states and repeat the previous output) and returns `(outputs,
final_states)`.
"""

import numpy as np


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def layer_norm(z, gamma, beta, epsilon):
    mean = z.mean(-1, keepdims=True)
    variance = ((z - mean) ** 2).mean(-1, keepdims=True)
    out = (z - mean) / np.sqrt(variance + epsilon) * gamma
    return out if beta is None else out + beta


def weights_by_path(cell):
    """`{name: array}`: the last path element, or `norm/gamma` for the
    layer norms of `LayerNormLSTMCell`."""
    weights = {}
    for weight in cell.weights:
        parts = weight.path.split("/")
        key = "/".join(parts[-2:]) if parts[-2].endswith("_norm") else parts[-1]
        weights[key] = np.asarray(weight.numpy(), "float64")
    return weights


def _drop(x, h, dropout_masks):
    input_mask, recurrent_mask = dropout_masks or (None, None)
    if input_mask is not None:
        x = x * input_mask
    if recurrent_mask is not None:
        h = h * recurrent_mask
    return x, h


def layer_norm_lstm_step(x, states, w, epsilon=1e-3, dropout_masks=None):
    h, c = states
    x, h_in = _drop(x, h, dropout_masks)
    z = layer_norm(
        x @ w["kernel"], w["kernel_norm/gamma"], w["kernel_norm/beta"], epsilon
    ) + layer_norm(
        h_in @ w["recurrent_kernel"],
        w["recurrent_norm/gamma"],
        w["recurrent_norm/beta"],
        epsilon,
    )
    if "bias" in w:
        z = z + w["bias"]
    z_i, z_f, z_c, z_o = np.split(z, 4, -1)
    c = sigmoid(z_f) * c + sigmoid(z_i) * np.tanh(z_c)
    c = layer_norm(c, w["state_norm/gamma"], w["state_norm/beta"], epsilon)
    h = sigmoid(z_o) * np.tanh(c)
    return h, [h, c]


def layer_norm_simple_rnn_step(x, states, w, epsilon=1e-5, dropout_masks=None):
    x, h_in = _drop(x, states[0], dropout_masks)
    net = x @ w["kernel"] + h_in @ w["recurrent_kernel"]
    h = np.tanh(layer_norm(net, w["gamma"], None, epsilon) + w.get("bias", 0))
    return h, [h]


def esn_step(x, states, w, leaky=1.0):
    h = states[0]
    z = x @ w["kernel"] + h @ w["recurrent_kernel"] + w.get("bias", 0)
    h = (1 - leaky) * h + leaky * np.tanh(z)
    return h, [h]


def nas_step(x, states, w):
    c, m = states
    a = np.split(x @ w["kernel"], 8, -1)
    b = np.split(m @ w["recurrent_kernel"] + w.get("bias", 0), 8, -1)
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    l0 = np.tanh(sigmoid(a[0] + b[0]) * relu(a[1] + b[1]))
    l1 = np.tanh(sigmoid(a[2] + b[2]) + relu(a[3] * b[3]))
    l2 = np.tanh(np.tanh(a[4] + b[4]) * sigmoid(a[5] + b[5]))
    l3 = sigmoid(np.tanh(a[6] + b[6]) + sigmoid(a[7] + b[7]))
    c = np.tanh(l0 + c) * l1
    m = np.tanh(c * np.tanh(l2 + l3))
    if "projection_weights" in w:
        m = m @ w["projection_weights"]
    return m, [c, m]


def sequence(step, x, initial_states, mask=None, output_index=0):
    """Runs `step(x_t, states)`; returns `(outputs, final_states)`."""
    states = [np.asarray(s, "float64") for s in initial_states]
    output = np.zeros_like(states[output_index])
    outputs = []
    for t in range(x.shape[1]):
        new_output, new_states = step(x[:, t].astype("float64"), states)
        keep = np.ones((x.shape[0], 1), bool)
        if mask is not None:
            keep = mask[:, t : t + 1]
        output = np.where(keep, new_output, output)
        states = [np.where(keep, n, s) for n, s in zip(new_states, states)]
        outputs.append(output)
    return np.stack(outputs, 1), states
