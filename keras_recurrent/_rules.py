"""Rule tables and their executors, and shared shape checks.

A structure's flag function gives, with NumPy (`NUMPY`) or `keras.ops`,
the bool flags of the bad items of each `Rule` of its table; they are read
eagerly by `first_problem` (a message), traced by `layers._tf_checks`
(assertions) and compiled by `any_bad_example` (NaN outputs).
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np


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


def check_dtypes(arrays, kinds):
    """Checks NumPy dtypes: `kinds` maps a name to a kind of dtype."""
    allowed = {"integer": "iu", "boolean or integer": "biu"}
    for name, kind in kinds.items():
        dtype = arrays[name].dtype
        if dtype.kind not in allowed.get(kind, "f"):
            verb = "hold integers" if kind == "integer" else f"be {kind}"
            raise ValueError(
                f"`{name}` must {verb}. Received: {name}.dtype={dtype}"
            )


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
    try:
        check(*[None if s is None else tuple(s) for s in shapes], **options)
    except ValueError as error:
        raise ValueError(f"{type(layer).__name__}: {error}") from None


def ranks(layouts):
    """The rank of each layout, e.g. 2 for `"(batch, num_nodes)"`."""
    return {name: layout.count(",") + 1 for name, layout in layouts.items()}


def check_ranks(shapes, layouts):
    """Checks the ranks of `shapes` (a dict of tuples or `None`)."""
    for name, shape in shapes.items():
        rank = ranks(layouts)[name]
        if shape is None or len(shape) != rank:
            raise ValueError(
                f"`{name}` must have rank {rank}, {layouts[name]}. "
                f"Received: {name}.shape={shape}"
            )


def check_sizes(structure, shapes, groups):
    """Checks that the sizes of each `(axis, label, names)` group agree
    (`None` sizes match anything)."""
    for axis, label, names in groups:
        if sizes_differ([shapes[name][axis] for name in names]):
            raise ValueError(
                f"The {structure} tensors disagree on the {label}. Received "
                "shapes: " + ", ".join(f"{n}.shape={shapes[n]}" for n in names)
            )


def sizes_differ(sizes):
    """Whether two known sizes of `sizes` differ (`None` is unknown).

    Compared with `!=`, not as set members: while PyTorch traces, a size is
    a 0-d tensor (TorchScript) or a `SymInt` (`torch.export`), which hash
    by identity or not at all, so that equal sizes would look different.
    """
    known = [size for size in sizes if size is not None]
    return any(bool(size != known[0]) for size in known[1:])
