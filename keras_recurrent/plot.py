"""Plots of recurrent models' internals (matplotlib, imported on use)."""

import pathlib

import keras
import numpy as np


def gate_heatmap(gates, path, mask=None, per_time=False, title=None):
    """Saves the global reset gates of a GF-RNN as a heatmap PNG.

    As in the analysis of Chung et al. (2015): the mean of `g^{i→j}_t` over
    the batch and the (unmasked) steps, one cell per pair, rows the source
    layer `i` (at `t - 1`), columns the target layer `j` (at `t`). Layers are
    labelled 1 to L, as in the paper. With `per_time`, a second panel shows
    the batch mean of every pair at every step.

    matplotlib is imported only here, and the figure is drawn without a
    display (on a `matplotlib.figure.Figure`, no `pyplot` state), so this
    works under the `Agg` backend and in headless processes.

    Args:
        gates: Array `(batch, timesteps, L, L)`, `[b, t, i, j] = g^{i→j}_t`,
            as returned by `kr.layers.GatedFeedbackRNN.gate_values`.
        path: `str` or `pathlib.Path` of the PNG file to write.
        mask: Optional boolean array `(batch, timesteps)`; only the `True`
            steps enter the means.
        per_time: Whether to add the per-step panel. Defaults to `False`.
        title: Optional figure title.

    Returns:
        The `(L, L)` NumPy array of mean gate values that is drawn.

    Raises:
        ImportError: If matplotlib is not installed (the `plot` extra).

    Example:

    >>> layer = kr.layers.GatedFeedbackRNN(32, num_layers=3)
    >>> gates = layer.gate_values(x)  # (batch, time, 3, 3)
    >>> kr.plot.gate_heatmap(gates, "gates.png").shape
    (3, 3)

    Reference:
        - [Chung et al., 2015. Gated Feedback Recurrent Neural Networks](
          https://arxiv.org/abs/1502.02367)
    """
    gates = np.asarray(keras.ops.convert_to_numpy(gates), dtype="float64")
    if gates.ndim != 4 or gates.shape[2] != gates.shape[3]:
        raise ValueError(
            "Argument `gates` must have shape (batch, timesteps, L, L). "
            f"Received: gates.shape={gates.shape}"
        )
    if mask is None:
        weights = np.ones(gates.shape[:2])
    else:
        weights = np.asarray(keras.ops.convert_to_numpy(mask), dtype="float64")
        if weights.shape != gates.shape[:2]:
            raise ValueError(
                "Argument `mask` must have shape (batch, timesteps) = "
                f"{gates.shape[:2]}. Received: mask.shape={weights.shape}"
            )
    if weights.sum() == 0:
        raise ValueError("Argument `mask` must keep at least one step.")
    weighted = gates * weights[:, :, None, None]
    mean = weighted.sum(axis=(0, 1)) / weights.sum()
    num_layers = gates.shape[-1]

    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError(
            "kr.plot.gate_heatmap needs matplotlib, which keras_recurrent "
            "does not install by default: `pip install keras-recurrent[plot]` "
            "(from a clone, `pip install -e .[plot]`), or `pip install "
            "matplotlib`."
        ) from error

    panels = 2 if per_time else 1
    figure = Figure(figsize=(4.5 * panels + 0.5, 4.0))
    axes = figure.subplots(1, panels, squeeze=False)[0]
    labels = [str(index + 1) for index in range(num_layers)]
    image = axes[0].imshow(mean, vmin=0.0, vmax=1.0, cmap="viridis")
    axes[0].set_xticks(range(num_layers), labels)
    axes[0].set_yticks(range(num_layers), labels)
    axes[0].set_xlabel("to layer j (time t)")
    axes[0].set_ylabel("from layer i (time t-1)")
    axes[0].set_title(r"mean $g^{i \to j}$")
    for i in range(num_layers):
        for j in range(num_layers):
            axes[0].text(
                j, i, f"{mean[i, j]:.2f}", ha="center", va="center", color="w"
            )
    figure.colorbar(image, ax=axes[0])
    if per_time:
        step_weights = weights.sum(axis=0)
        per_step = (
            weighted.sum(axis=0) / np.maximum(step_weights, 1.0)[:, None, None]
        )
        series = per_step.reshape(per_step.shape[0], -1).T
        axes[1].imshow(
            series, vmin=0.0, vmax=1.0, aspect="auto", cmap="viridis"
        )
        axes[1].set_yticks(
            range(num_layers**2),
            [f"{source}→{target}" for source in labels for target in labels],
        )
        axes[1].set_xlabel("time step")
        axes[1].set_title("batch mean per step")
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(pathlib.Path(path), format="png")
    return mean
