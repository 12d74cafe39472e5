"""The feedback of `GatedFeedbackCell`: what each layer reads of `h*_{t-1}`.

`F^j = Σ_i g^{i→j} U^{i→j} h^i_{t-1}` with the global reset gates
`g^{i→j} = σ(w_g^{i→j} · h^{j-1}_t + u_g^{i→j} · h*_{t-1})` (`"gated"`),
`g = 1` (`"fixed"`), or only `i = j` with `g = 1` (`"none"`).
"""

import numpy as np
from keras import ops


def split_sizes(x, sizes, axis=-1):
    """`x` cut into parts of `sizes` along `axis` (equal parts in one
    `split` by count, which builds fewer ops than split points)."""
    if len(sizes) == 1:
        return [x]
    if len(set(sizes)) == 1:
        return ops.split(x, len(sizes), axis=axis)
    return ops.split(x, [int(i) for i in np.cumsum(sizes)[:-1]], axis=axis)


class FeedbackCombiner:
    """The feedback `F^j` and the gates of a step, for one feedback mode.

    Holds no weights: the cell passes its weights to each method.

    Args:
        feedback: `"gated"`, `"fixed"` or `"none"`.
        layer_units: The layers' widths `n_j`.
        own_blocks: The number of gate blocks of a layer's own recurrent
            kernel `U^j` (`G - 1`: 0 for simple, 2 for gru, 3 for lstm).
    """

    def __init__(self, feedback, layer_units, own_blocks):
        self.feedback = feedback
        self.layer_units = list(layer_units)
        self.num_layers = len(self.layer_units)
        self.own_blocks = own_blocks
        # The 0/1 matrix `(L, sum(units))` that broadcasts g^{i→j} over
        # layer i's units (for unequal widths; equal widths broadcast
        # through a reshape).
        self.gate_expansion = np.repeat(
            np.eye(self.num_layers), self.layer_units, axis=1
        )

    def arrange_weights(self, feedback_kernels, recurrent_kernels):
        """For `"gated"`: per source layer `i`, `[U^i, U^{i→0}, ...,
        U^{i→L-1}]` side by side; `None` for the other modes.

        `(n_i, (G - 1) * n_i + N)`: `recurrent_kernel_i` (gru and lstm
        only), then the rows of layer `i` of every `feedback_kernel_j`. With
        them a step makes every product of `h^i_{t-1}` at its start, in one
        matmul per source layer, and weights the feedback products by the
        gates after: the feedback matmuls then need not wait for the gates,
        which wait for the layer below, and run alongside them. (Scaling
        `h*` by the gates first puts each layer's feedback matmul after its
        gates.)
        """
        if self.feedback != "gated":
            return None
        rows = [
            split_sizes(kernel, self.layer_units, axis=0)
            for kernel in feedback_kernels
        ]
        return [
            ops.concatenate(
                list(recurrent_kernels[i : i + 1])
                + [kernel_rows[i] for kernel_rows in rows],
                axis=1,
            )
            for i in range(self.num_layers)
        ]

    def recurrent_terms(self, h_rec, h_star, gate_recurrent_kernel, arranged):
        """What a `"gated"` step computes of `h*_{t-1}` for all layers at
        once, before the layers: a dict (empty for the other modes).

        Args:
            h_rec: The (dropped-out) `h^i_{t-1}`, one per layer.
            h_star: Their concatenation `h*_{t-1}`.
            gate_recurrent_kernel: The `u_g` of every pair.
            arranged: `arrange_weights(...)`, or `None` to scale `h*` by
                the gates before each layer's feedback matmul.
        """
        if self.feedback != "gated":
            return {}
        num_layers = self.num_layers
        # u_g^{i→j} · h*_{t-1} for every pair at once, one split into
        # the layers' parts (cheaper than a slice per layer, backward).
        terms = {
            "gate_recurrent": ops.split(
                ops.matmul(h_star, gate_recurrent_kernel), num_layers, axis=-1
            )
        }
        if arranged is None:
            terms["h_blocks"] = self._layer_blocks(h_star)
            return terms
        # `own_recurrent[i]` = h^i_{t-1} U^i (gru, lstm) and
        # `pair_products[i][j]` = h^i_{t-1} U^{i→j}.
        own = self.own_blocks
        pair_products, own_recurrent = [], []
        for h, kernel, width in zip(h_rec, arranged, self.layer_units):
            parts = split_sizes(
                ops.matmul(h, kernel),
                [own * width] * (own > 0) + self.layer_units,
            )
            if own:
                own_recurrent.append(parts[0])
            pair_products.append(parts[-num_layers:])
        terms["pair_products"] = pair_products
        if own:
            terms["own_recurrent"] = own_recurrent
        return terms

    def layer_feedback(self, j, gate_input, terms, h_star, h_rec, kernel):
        """Layer `j`'s feedback `F^j` and its gates `g^{·→j}` (`"gated"`;
        else `None`), with `kernel` its `feedback_kernel_j`."""
        if self.feedback == "fixed":
            return ops.matmul(h_star, kernel), None
        if self.feedback == "none":
            return ops.matmul(h_rec[j], kernel), None
        g = ops.sigmoid(gate_input + terms["gate_recurrent"][j])
        pair_products = terms.get("pair_products")
        if pair_products is None:
            # Σ_i g^{i→j} U^{i→j} h^i = (h* ⊙ g broadcast per layer) U.
            scaled = self._scale_by_layer(h_star, terms["h_blocks"], g)
            return ops.matmul(scaled, kernel), g
        # Σ_i g^{i→j} (h^i U^{i→j}).
        num_layers = self.num_layers
        g_columns = ops.split(g, num_layers, axis=-1) if num_layers > 1 else [g]
        feedback = g_columns[0] * pair_products[0][j]
        for i in range(1, num_layers):
            feedback = feedback + g_columns[i] * pair_products[i][j]
        return feedback, g

    @staticmethod
    def own_recurrent(terms, j, h_rec, recurrent_kernel):
        """`h^j_{t-1} U^j`, the gru/lstm gates' own-layer recurrent term."""
        own_recurrent = terms.get("own_recurrent")
        if own_recurrent is not None:
            return own_recurrent[j]
        return ops.matmul(h_rec[j], recurrent_kernel)

    def all_gates(self, gates, h_rec):
        """The gates of a step `(batch, L, L)`: those of `"gated"`, ones for
        `"fixed"`, the identity for `"none"`."""
        if self.feedback == "gated":
            return ops.stack(gates, axis=2)
        num_layers = self.num_layers
        pattern = (
            np.ones((num_layers, num_layers))
            if self.feedback == "fixed"
            else np.eye(num_layers)
        )
        return ops.zeros_like(h_rec[0][:, :1, None]) + ops.cast(
            pattern, h_rec[0].dtype
        )

    def _layer_blocks(self, h_star):
        """`h*` as `(batch, L, units)` if the layers' widths are equal (made
        once per step for all layers' gates), else `None`."""
        widths = self.layer_units
        if len(set(widths)) > 1:
            return None
        return ops.reshape(h_star, (-1, self.num_layers, widths[0]))

    def _scale_by_layer(self, h_star, h_blocks, g):
        """`h*` with layer i's units multiplied by `g[:, i]`."""
        if h_blocks is not None:
            # A reshape and a broadcast: cheaper than a gather or a matmul,
            # forward and backward.
            return ops.reshape(
                h_blocks * ops.expand_dims(g, -1), (-1, sum(self.layer_units))
            )
        expansion = ops.cast(self.gate_expansion, g.dtype)
        return h_star * ops.matmul(g, expansion)
