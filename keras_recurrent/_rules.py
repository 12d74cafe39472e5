"""Rule tables and their executors, and shared shape checks.

A structure's flag function gives, with NumPy (`NUMPY`) or `keras.ops`,
the bool flags of the bad items of each `Rule` of its table; they are read
eagerly by `first_problem` (a message), traced by `layers._tf_checks`
(assertions) and compiled by `any_bad_example` (NaN outputs).
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from keras_recurrent._checks import named_errors


class Rule(NamedTuple):
    """A rule's `statement` (with `{placeholders}`), `received(arrays,
    *index)`, naming the bad values, and the `item` its flags mark;
    `traced=False`: eager only (a later rule's flags include its items)."""

    statement: str
    received: Callable
    traced: bool = True
    item: str = "node"


class _NumPyOps:
    """NumPy under the names of `keras.ops` that the rules use."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def cast(values, dtype):
        return np.asarray(values).astype(dtype)


NUMPY = _NumPyOps()


def show(arrays, name, *index):
    """`name[i, j]=value` for a message."""
    value = arrays[name][index].tolist()
    return f"{name}[{', '.join(str(i) for i in index)}]={value}"


# Trees and graphs alike.
FINITE_INPUTS_RULE = Rule(
    "`node_inputs` of real nodes must be finite.",
    lambda a, *index: show(a, "node_inputs", *index),
)


def first_problem(rules, flags, arrays, **names):
    """The message of the first rule with a flag at its first bad item, or
    `None`; `names` fill the statements' placeholders."""
    for rule, bad in zip(rules, flags, strict=True):
        if bad.any():
            index = (int(i) for i in np.argwhere(bad)[0])
            return (
                f"{rule.statement.format(**names)} "
                f"Received: {rule.received(arrays, *index)}"
            )
    return None


def raise_message(problem, start=""):
    """Raises a `ValueError` of `start + problem` unless `problem` is `None`."""
    if problem is not None:
        raise ValueError(start + problem)


def any_bad_example(xp, flags):
    """`(batch,)` bool: the examples with a bad item in any of `flags`."""
    return xp.any(xp.concatenate(flags, axis=1), axis=1)


def unpack_inputs(layer, inputs, names, describe=repr):
    """The list of tensors `names` from a list or a dict of them."""
    name = type(layer).__name__
    if isinstance(inputs, dict):
        if any(key not in inputs for key in names):
            raise ValueError(
                f"{name} takes a dict with the keys {list(names)}. "
                f"Received keys: {sorted(inputs)}"
            )
        return [inputs[key] for key in names]
    # A single shape (`build` of a layer called on one tensor) is a tuple
    # of sizes, not of shapes.
    if (
        not isinstance(inputs, (list, tuple))
        or len(inputs) != len(names)
        or any(item is None or isinstance(item, int) for item in inputs)
    ):
        raise ValueError(
            f"{name} takes the list `[{', '.join(names)}]` (or a dict with "
            f"these keys). Received: inputs={describe(inputs)}"
        )
    return list(inputs)


def check_named_shapes(layer, check, shapes, **options):
    """`check(*shapes, **options)`, its error naming `layer`'s class."""
    with named_errors(layer):
        check(*[None if s is None else tuple(s) for s in shapes], **options)


# The shape rules, each statement written once: checked here on static
# shapes, asserted on run-time ones (`layers._graph_checks`).


def ranks(layouts):
    """The rank of each layout, e.g. 2 for `"(batch, num_nodes)"`."""
    return {name: layout.count(",") + 1 for name, layout in layouts.items()}


def rank_statement(name, layout):
    """`name` has the rank of `layout`, e.g. `"(batch, num_nodes)"`."""
    return f"`{name}` must have rank {layout.count(',') + 1}, {layout}."


def check_ranks(shapes, layouts):
    """Checks the ranks of `shapes` (a dict of tuples or `None`)."""
    for name, shape in shapes.items():
        if shape is None or len(shape) != ranks(layouts)[name]:
            raise ValueError(
                f"{rank_statement(name, layouts[name])} "
                f"Received: {name}.shape={shape}"
            )


def sizes_statement(structure, label):
    """The tensors of a `structure` agree on a size (`label`)."""
    return f"The {structure} tensors disagree on the {label}."


def check_sizes(structure, shapes, groups):
    """Checks that the sizes of each `(axis, label, names)` group agree
    (`None` sizes match anything)."""
    for axis, label, names in groups:
        if sizes_differ([shapes[name][axis] for name in names]):
            raise ValueError(
                f"{sizes_statement(structure, label)} Received shapes: "
                + ", ".join(f"{n}.shape={shapes[n]}" for n in names)
            )


def sizes_differ(sizes):
    """Whether two known sizes of `sizes` differ (`None` is unknown).

    Compared with `!=`, not as set members: while PyTorch traces, a size is
    a 0-d tensor (TorchScript) or a `SymInt` (`torch.export`), which hash
    by identity or not at all, so that equal sizes would look different.
    """
    known = [size for size in sizes if size is not None]
    return any(bool(size != known[0]) for size in known[1:])


def at_least_one(what, name, axis=None):
    """The rule "at least one node or step": `name` has at least one
    `what` (`"node"`, `"timestep"`), along `axis` of its shape if given."""
    where = "" if axis is None else f" (axis {axis})"
    return f"`{name}` must have at least one {what}{where}."


def check_at_least_one(what, name, shape, axis=1):
    """Raises `at_least_one`'s message if `shape[axis]` is 0."""
    size = shape[axis]
    if size is not None and size == 0:
        raise ValueError(
            f"{at_least_one(what, name, axis)} "
            f"Received: {name}.shape={tuple(shape)}"
        )


def width_statement(name, features):
    """`name` has the width (last axis) its layer was built for."""
    return (
        f"`{name}` must have {features} features (last axis), the width "
        "the layer was built for."
    )


def check_built_width(shape, features, name="inputs", note=""):
    """Raises unless the last size of `shape`, where known, is `features`
    (`None`: any width); `note` ends the message."""
    if features is not None and shape[-1] is not None and shape[-1] != features:
        raise ValueError(
            f"{width_statement(name, features)} "
            f"Received: {name}.shape={tuple(shape)}{note}"
        )
