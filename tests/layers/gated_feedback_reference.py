"""NumPy reference of the Gated-Feedback RNN of Chung et al. (2015).

Written from the equations of the issue, one (i, j) pair at a time, without
the package's batching: `U^{i→j}`, `w_g^{i→j}` and `u_g^{i→j}` are sliced
out of the documented weights and applied separately.
"""

import keras
import numpy as np


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def named_weights(layer):
    """`{name: array}` of a layer's weights (last path element), float64."""
    return {
        w.path.split("/")[-1]: np.array(w.numpy(), "float64")
        for w in layer.weights
    }


def randomize_weights(layer, scale=0.5, seed=0):
    rng = np.random.default_rng(seed)
    for weight in layer.weights:
        weight.assign(rng.uniform(-scale, scale, size=weight.shape))


def gf_step(x, h, c, w, cell_type, feedback, masks=(None, None)):
    """One step. `h`, `c`: lists of per-layer arrays (`c` only for lstm).

    Returns `(new_h, new_c, gates)` with `gates[:, i, j] = g^{i→j}`.
    """
    num_layers = len(h)
    widths = [a.shape[-1] for a in h]
    starts = np.concatenate([[0], np.cumsum(widths)])
    input_mask, recurrent_mask = masks
    h_drop = list(h)
    if recurrent_mask is not None:
        h_drop = [
            h[i] * recurrent_mask[:, starts[i] : starts[i + 1]]
            for i in range(num_layers)
        ]
    h_star = np.concatenate(h_drop, axis=-1)
    batch = x.shape[0]
    gates = np.zeros((batch, num_layers, num_layers))
    new_h, new_c = [], []
    below = x
    input_offset = 0
    for j in range(num_layers):
        u = below
        if input_mask is not None:
            width = u.shape[-1]
            u = u * input_mask[:, input_offset : input_offset + width]
            input_offset += width
        n = widths[j]
        feedback_sum = np.zeros((batch, n))
        for i in range(num_layers):
            if feedback == "none":
                if i != j:
                    continue
                g = np.ones((batch, 1))
                u_ij = w[f"feedback_kernel_{j}"]
            else:
                u_ij = w[f"feedback_kernel_{j}"][starts[i] : starts[i + 1]]
                if feedback == "gated":
                    w_g = w[f"gate_kernel_{j}"][:, i]
                    u_g = w["gate_recurrent_kernel"][:, j * num_layers + i]
                    g = sigmoid(u @ w_g + h_star @ u_g)[:, None]
                else:
                    g = np.ones((batch, 1))
            gates[:, i, j] = g[:, 0]
            feedback_sum = feedback_sum + g * (h_drop[i] @ u_ij)
        kernel = w[f"kernel_{j}"]
        bias = w.get(f"bias_{j}", np.zeros(kernel.shape[-1]))
        pre = u @ kernel + bias
        if cell_type == "simple":
            hj = np.tanh(pre + feedback_sum)
        elif cell_type == "gru":
            x_z, x_r, x_h = np.split(pre, 3, axis=-1)
            rec = h_drop[j] @ w[f"recurrent_kernel_{j}"]
            r_z, r_r = np.split(rec, 2, axis=-1)
            z = sigmoid(x_z + r_z)
            r = sigmoid(x_r + r_r)
            candidate = np.tanh(x_h + r * feedback_sum)
            hj = z * h[j] + (1 - z) * candidate
        else:
            x_i, x_f, x_c, x_o = np.split(pre, 4, axis=-1)
            rec = h_drop[j] @ w[f"recurrent_kernel_{j}"]
            r_i, r_f, r_o = np.split(rec, 3, axis=-1)
            i_gate = sigmoid(x_i + r_i)
            f_gate = sigmoid(x_f + r_f)
            o_gate = sigmoid(x_o + r_o)
            cj = f_gate * c[j] + i_gate * np.tanh(x_c + feedback_sum)
            hj = o_gate * np.tanh(cj)
            new_c.append(cj)
        new_h.append(hj)
        below = hj
    return new_h, new_c, gates


def gf_sequence(
    x,
    w,
    widths,
    cell_type,
    feedback,
    mask=None,
    initial_states=None,
    dropout_masks=(None, None),
    output_mode="top",
):
    """Runs the reference; returns `(outputs, final_states, gates)`.

    `final_states` follow the cell's order (`[h_0, c_0, h_1, ...]` for lstm);
    `gates` is `(batch, time, L, L)`, zero at masked steps.
    """
    batch, steps, _ = x.shape
    lstm = cell_type == "lstm"
    if initial_states is None:
        h = [np.zeros((batch, n)) for n in widths]
        c = [np.zeros((batch, n)) for n in widths] if lstm else []
    else:
        states = [np.asarray(s, "float64") for s in initial_states]
        h = states[::2] if lstm else states
        c = states[1::2] if lstm else []
    outputs, all_gates = [], []
    previous_output = None
    for t in range(steps):
        new_h, new_c, gates = gf_step(
            x[:, t], h, c, w, cell_type, feedback, dropout_masks
        )
        out = new_h[-1] if output_mode == "top" else np.concatenate(new_h, -1)
        if mask is not None:
            keep = mask[:, t][:, None]
            new_h = [np.where(keep, a, b) for a, b in zip(new_h, h)]
            new_c = [np.where(keep, a, b) for a, b in zip(new_c, c)]
            if previous_output is None:
                previous_output = np.zeros_like(out)
            out = np.where(keep, out, previous_output)
            gates = np.where(keep[:, :, None], gates, 0.0)
        previous_output = out
        h, c = new_h, new_c
        outputs.append(out)
        all_gates.append(gates)
    if lstm:
        states = [s for pair in zip(h, c) for s in pair]
    else:
        states = h
    return np.stack(outputs, 1), states, np.stack(all_gates, 1)


def keras_stacked_weights(layer, cell_type):
    """Weights of `StackedRNNCells` equal to a `feedback="none"` GF layer.

    SimpleRNNCell: `[kernel, recurrent_kernel, bias]`; GRUCell
    (`reset_after=True`): `[kernel, recurrent_kernel = [U_z, U_r, U_h],
    bias = [input_bias; recurrent_bias = 0]]`; LSTMCell: `[kernel,
    recurrent_kernel = [U_i, U_f, U_c, U_o], bias]`.
    """
    w = named_weights(layer)
    weights = []
    for j in range(layer.cell.num_layers):
        kernel = w[f"kernel_{j}"]
        feedback = w[f"feedback_kernel_{j}"]
        bias = w[f"bias_{j}"]
        if cell_type == "simple":
            weights += [kernel, feedback, bias]
        elif cell_type == "gru":
            recurrent = np.concatenate(
                [w[f"recurrent_kernel_{j}"], feedback], 1
            )
            weights += [kernel, recurrent, np.stack([bias, 0 * bias])]
        else:
            gates = w[f"recurrent_kernel_{j}"]
            n = feedback.shape[0]
            recurrent = np.concatenate(
                [gates[:, : 2 * n], feedback, gates[:, 2 * n :]], 1
            )
            weights += [kernel, recurrent, bias]
    return weights


def keras_cells(widths, cell_type):
    make = {
        "simple": lambda n: keras.layers.SimpleRNNCell(n),
        "gru": lambda n: keras.layers.GRUCell(n, reset_after=True),
        "lstm": lambda n: keras.layers.LSTMCell(n),
    }[cell_type]
    return [make(n) for n in widths]


def gf_reference(layer, widths, cell_type, feedback="gated"):
    """`gf_sequence` with `layer`'s weights, for `check_per_sequence_dropout`:
    a callable `(x, mask, dropout_masks)` returning `(outputs, states)`."""
    weights = named_weights(layer)

    def reference(x, mask, dropout_masks):
        outputs, states, _ = gf_sequence(
            x,
            weights,
            widths,
            cell_type,
            feedback,
            mask=mask,
            dropout_masks=dropout_masks,
        )
        return outputs, states

    return reference
