"""Initializer helpers of the layers, and their per-weight config entries.

`reseeded` gives each weight its own seed, `gate_bias` builds fused gate
biases, and `serialize_weight_options` writes every weight's initializer,
regularizer and constraint into a layer's config.
"""

from keras import constraints
from keras import initializers
from keras import ops
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


def gate_bias(
    initializer, gates, units, unit_forget_bias, dtype=None, seed_offset=0
):
    """A bias of one `units`-wide block per gate, concatenated in `gates`
    order: ones for the forget gate `"f"` with `unit_forget_bias`, else a
    draw of `initializer` with its own seed (`reseeded` by `seed_offset`
    plus the block's index), so that the blocks do not start out equal.

    Args:
        initializer: A Keras initializer instance.
        gates: Gate names, e.g. `("i", "f", "o", "u")`.
        units: Positive integer, the width of each block.
        unit_forget_bias: Whether the `"f"` block is ones.
        dtype: The bias dtype.
        seed_offset: Non-negative integer, the first block's seed offset.

    Returns:
        A tensor `(len(gates) * units,)`.
    """
    return ops.concatenate(
        [
            initializers.get("ones")((units,), dtype=dtype)
            if name == "f" and unit_forget_bias
            else reseeded(initializer, seed_offset + index)(
                (units,), dtype=dtype
            )
            for index, name in enumerate(gates)
        ]
    )
