"""The config entries of a layer's per-weight initializers and friends."""

from keras import constraints
from keras import initializers
from keras import regularizers


def serialize_weight_options(layer, weights):
    """`{w}_initializer`, `{w}_regularizer`, `{w}_constraint` for each `w`.

    Args:
        layer: A layer with those attributes for every name in `weights`.
        weights: Names, e.g. `("kernel", "recurrent", "bias")`.

    Returns:
        A dict of their serialized values, for `get_config`.
    """
    config = {}
    for weight in weights:
        config[f"{weight}_initializer"] = initializers.serialize(
            getattr(layer, f"{weight}_initializer")
        )
        config[f"{weight}_regularizer"] = regularizers.serialize(
            getattr(layer, f"{weight}_regularizer")
        )
        config[f"{weight}_constraint"] = constraints.serialize(
            getattr(layer, f"{weight}_constraint")
        )
    return config
