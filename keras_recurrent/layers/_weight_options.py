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


def reseeded(initializer, offset):
    """`initializer` with its own random stream number `offset`.

    Keras' random initializers draw the same values at every call when their
    seed is an integer, and an unseeded one (`seed=None`) is given an
    integer seed when it is created. A layer that initializes several
    weights, or several blocks of one weight, from one initializer passes a
    distinct `offset` for each, so that they do not start out equal (nor,
    with counter-based generators, share their first values). `offset=0`
    returns `initializer` itself, so the first weight starts as Keras would
    start it; initializers without an integer seed (constants, or a
    `keras.random.SeedGenerator` seed, which draws anew at every call) are
    returned unchanged.

    Args:
        initializer: A Keras initializer instance.
        offset: Non-negative integer, added to the seed.

    Returns:
        An initializer.
    """
    seed = getattr(initializer, "seed", None)
    if offset == 0 or not isinstance(seed, int) or isinstance(seed, bool):
        return initializer
    config = initializer.get_config()
    return type(initializer).from_config({**config, "seed": seed + offset})
