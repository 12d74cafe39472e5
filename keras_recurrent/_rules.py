"""The executors of the tree and graph rule tables, and shared shape checks.

A structure's rules are written once: one function computes, for every
rule, the bool flags of the bad items (nodes or edges) of each example,
with the functions NumPy and `keras.ops` share (`xp` is `NUMPY` or
`keras.ops`); its table holds each rule's `Rule`: the `statement`, with
`{placeholders}`, and `received(arrays, *index)`, which names the
offending values. Three executors read the flags: `first_problem` eagerly
on NumPy (a `ValueError` message), `layers._tf_checks.rule_assertions` in
a traced TensorFlow graph, and `any_bad_example`, a `(batch,)` flag for
compiled code, where the layers give bad examples NaN outputs.
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np


class Rule(NamedTuple):
    """A rule's message; `traced=False`: only eagerly, as the flags of a
    later rule include its items, and traced assertions name that one."""

    statement: str
    received: Callable
    traced: bool = True


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


def any_of(xp, flags):
    """The elementwise `or` of a list of bool arrays."""
    result = flags[0]
    for flag in flags[1:]:
        result = xp.logical_or(result, flag)
    return result


def any_bad_example(xp, flags):
    """`(batch,)` bool: the examples with a bad item in any of `flags`,
    each `(batch, items)`."""
    return xp.any(xp.concatenate(flags, axis=1), axis=1)


def check_dtypes(arrays, kinds):
    """Checks NumPy dtypes: `kinds` maps a name to `"integer"`, `"boolean
    or integer"` or `"floating-point"`."""
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


def ranks(layouts):
    """The rank of each layout, e.g. 2 for `"(batch, num_nodes)"`."""
    return {name: layout.count(",") + 1 for name, layout in layouts.items()}


def check_ranks(shapes, layouts):
    """Checks the ranks of `shapes` (a dict of tuples) against `layouts`."""
    for name, shape in shapes.items():
        rank = ranks(layouts)[name]
        if shape is None or len(shape) != rank:
            raise ValueError(
                f"`{name}` must have rank {rank}, {layouts[name]}. "
                f"Received: {name}.shape={_shape(shape)}"
            )


def check_sizes(structure, shapes, groups):
    """Checks that the sizes of each `(axis, label, names)` group agree
    (`None` sizes match anything)."""
    for axis, label, names in groups:
        if len({shapes[name][axis] for name in names} - {None}) > 1:
            raise ValueError(
                f"The {structure} tensors disagree on the {label}. Received "
                "shapes: "
                + ", ".join(f"{n}.shape={_shape(shapes[n])}" for n in names)
            )


def _shape(shape):
    return None if shape is None else tuple(shape)
