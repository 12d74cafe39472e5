"""Reading the `tf.compat.v1.nn.rnn_cell` cells of a TF1 checkpoint.

`read_network(checkpoint, scope)` finds the cells under `scope` from the
variable names alone and returns what `tf1_rnn` builds: a `Cell` (one
cell), a list of `Cell`s (a `MultiRNNCell`, bottom first), or a
`("bidirectional", forward, backward)` tuple of those. Each `Cell` holds the
checkpoint's arrays in TF1's layout; `tf1_rnn` converts them.

The names TF1 gives, under the `dynamic_rnn` scope (default `rnn`) or
`bidirectional_dynamic_rnn`'s `fw/` and `bw/` (default scope
`bidirectional_rnn`), and `multi_rnn_cell/cell_<k>/` for a stack; the cell's
own scope is its name (`lstm_cell`, `basic_lstm_cell`, `gru_cell`,
`basic_rnn_cell` by default):

- `LSTMCell` and `BasicLSTMCell`: `kernel` `(input_dim + state_dim,
  4 * units)`, `bias` `(4 * units,)`, blocks `[i, j, f, o]`; `LSTMCell`
  adds `w_i_diag`, `w_f_diag`, `w_o_diag` `(units,)` with peepholes and
  `projection/kernel` `(units, num_proj)` with a projection (`state_dim`
  is then `num_proj`).
- `GRUCell`: `gates/kernel` `(input_dim + units, 2 * units)` and
  `gates/bias`, blocks `[r, u]`; `candidate/kernel` `(input_dim + units,
  units)` and `candidate/bias`.
- `BasicRNNCell`: `kernel` `(input_dim + units, units)`, `bias`.

Each kernel multiplies `concat([inputs, state])`: its first `input_dim` rows
are the input kernel, the rest the recurrent one.
"""

import dataclasses
import re

# A cell's variables, relative to its scope.
LSTM_EXTRAS = ("w_i_diag", "w_f_diag", "w_o_diag", "projection/kernel")
GRU_LEAVES = (
    "gates/kernel",
    "gates/bias",
    "candidate/kernel",
    "candidate/bias",
)
LEAVES = (*GRU_LEAVES, *LSTM_EXTRAS, "kernel", "bias")

# How many variables an error message lists.
LISTED = 30


@dataclasses.dataclass
class Cell:
    """One TF1 cell: `kind` (`"lstm"`, `"gru"` or `"rnn"`), where its
    variables are, its sizes, and its arrays by leaf name."""

    kind: str
    path: str
    input_dim: int
    units: int
    arrays: dict
    projection_units: int = None

    @property
    def use_peepholes(self):
        return "w_f_diag" in self.arrays

    @property
    def output_dim(self):
        return self.projection_units or self.units


def load_reader(checkpoint):
    """TensorFlow's reader of `checkpoint` (a prefix or a directory)."""
    try:
        import tensorflow as tf
    except ImportError as error:
        raise ImportError(
            "kr.migrate.tf1_rnn reads TF1 checkpoints with TensorFlow, "
            "on any Keras backend: `pip install tensorflow`."
        ) from error
    try:
        return tf.train.load_checkpoint(str(checkpoint))
    except (ValueError, tf.errors.OpError) as error:
        raise ValueError(
            "Argument `checkpoint` must be a TF1 checkpoint: a prefix such "
            "as 'model.ckpt' (of 'model.ckpt.index' and its data files), or "
            "a directory with a 'checkpoint' file. TensorFlow says: "
            f"{str(error).splitlines()[0]}. Received: checkpoint={checkpoint!r}"
        ) from None


def read_network(checkpoint, scope):
    """The cells under `scope` in `checkpoint`, and `input_dim`."""
    reader = load_reader(checkpoint)
    shapes = {
        name: tuple(shape)
        for name, shape in reader.get_variable_to_shape_map().items()
    }
    prefix = scope.strip("/") + "/" if scope.strip("/") else ""
    under = {
        name[len(prefix) :]: shape
        for name, shape in shapes.items()
        if name.startswith(prefix)
    }
    groups = cell_groups(under)
    if not groups:
        raise ValueError(no_cells_message(scope, shapes))
    cells = {
        path: read_cell(path, prefix, leaves, reader)
        for path, leaves in groups.items()
    }
    try:
        network = arrange(cells)
    except ValueError as error:
        found = ", ".join(repr(prefix + path) for path in sorted(cells))
        raise ValueError(
            f"Argument `scope` must name one recurrent network (one cell, "
            "a MultiRNNCell or the fw/ and bw/ of bidirectional_dynamic_rnn)"
            f": {error} Cells found under it: {found}. Received: "
            f"scope={scope!r}"
        ) from None
    check_input_dims(network, scope)
    return network


def cell_groups(shapes):
    """`{cell path: {leaf: shape}}` of the variables that TF1 cells name
    (optimizer slots such as `kernel/Adam` and other variables are left
    out). A group is kept if it has a whole cell's variables."""
    groups = {}
    for name, shape in shapes.items():
        for leaf in LEAVES:
            if name == leaf or name.endswith("/" + leaf):
                path = name[: -len(leaf)].rstrip("/")
                groups.setdefault(path, {})[leaf] = shape
                break
    return {
        path: leaves
        for path, leaves in groups.items()
        if set(GRU_LEAVES) <= set(leaves) or {"kernel", "bias"} <= set(leaves)
    }


def read_cell(path, prefix, leaves, reader):
    """The `Cell` of the variables `leaves` (`{leaf: shape}`) at `path`."""
    full = prefix + path + ("/" if path else "")

    def fail(why):
        listing = ", ".join(
            f"{full}{leaf} {list(shape)}"
            for leaf, shape in sorted(leaves.items())
        )
        return ValueError(
            f"The variables at {full!r} are not those of a "
            f"tf.compat.v1.nn.rnn_cell cell: {why}. They are: {listing}."
        )

    if set(GRU_LEAVES) <= set(leaves):
        kind = "gru"
        rows, units = leaves["candidate/kernel"]
        expected = {
            "gates/kernel": (rows, 2 * units),
            "gates/bias": (2 * units,),
            "candidate/bias": (units,),
        }
        input_dim = rows - units
    else:
        kind = lstm_or_rnn(path, leaves, fail)
        rows, columns = leaves["kernel"]
        projection_units = None
        if kind == "lstm":
            units = columns // 4
            if "projection/kernel" in leaves:
                projection_units = leaves["projection/kernel"][-1]
            input_dim = rows - (projection_units or units)
            expected = {"bias": (4 * units,)}
            expected.update(
                (name, (units,)) for name in LSTM_EXTRAS[:3] if name in leaves
            )
            if projection_units:
                expected["projection/kernel"] = (units, projection_units)
        else:
            units = columns
            input_dim = rows - units
            expected = {"bias": (units,)}
    for leaf, shape in expected.items():
        if leaves[leaf] != shape:
            raise fail(f"{leaf} should be {list(shape)}")
    if input_dim < 1:
        raise fail("the kernel has no rows left for the inputs")
    if kind == "lstm":
        peepholes = [name in leaves for name in LSTM_EXTRAS[:3]]
        if any(peepholes) and not all(peepholes):
            raise fail("an LSTMCell has all three peepholes or none")
    arrays = {leaf: reader.get_tensor(full + leaf) for leaf in leaves}
    return Cell(
        kind=kind,
        path=prefix + path,
        input_dim=input_dim,
        units=units,
        arrays=arrays,
        projection_units=projection_units if kind == "lstm" else None,
    )


def lstm_or_rnn(path, leaves, fail):
    """`"lstm"` or `"rnn"` for a cell of `kernel` and `bias`: from the LSTM
    variables if any, else from the shapes, else from the cell's name."""
    if any(name in leaves for name in LSTM_EXTRAS):
        return "lstm"
    rows, columns = leaves["kernel"]
    if leaves["bias"] != (columns,):
        raise fail("the bias should be as wide as the kernel")
    projection_rows = columns // 4
    fits_lstm = columns % 4 == 0 and rows > projection_rows
    fits_rnn = rows > columns
    if fits_lstm != fits_rnn:
        return "lstm" if fits_lstm else "rnn"
    name = path.rsplit("/", 1)[-1].lower()
    if "lstm" in name:
        return "lstm"
    if "rnn" in name:
        return "rnn"
    raise fail(
        "a kernel and a bias alone can be an LSTMCell or a BasicRNNCell, "
        "and the shapes and the cell's name do not tell which (TF1 names "
        "them 'lstm_cell', 'basic_lstm_cell' and 'basic_rnn_cell')"
    )


def arrange(cells):
    """A `Cell`, a stack (list) or `("bidirectional", fw, bw)` of `cells`
    (`{path relative to the scope: Cell}`)."""
    directions = {path.split("/", 1)[0] for path in cells}
    if directions == {"fw", "bw"}:
        return (
            "bidirectional",
            *(
                arrange(
                    {
                        path.split("/", 1)[1] if "/" in path else "": cell
                        for path, cell in cells.items()
                        if path.split("/", 1)[0] == side
                    }
                )
                for side in ("fw", "bw")
            ),
        )
    if len(cells) == 1:
        return next(iter(cells.values()))
    pattern = re.compile(r"^(.*?)(?:^|/)cell_(\d+)(?:/|$)")
    layers = {}
    for path, cell in cells.items():
        match = pattern.match(path)
        if match is None:
            raise ValueError(f"{path!r} is not in a MultiRNNCell (cell_<k>/).")
        layers.setdefault(match.group(1), {})[int(match.group(2))] = cell
    if len(layers) != 1:
        raise ValueError(
            f"it holds {len(layers)} MultiRNNCells ({sorted(layers)})."
        )
    (stack,) = layers.values()
    if sorted(stack) != list(range(len(stack))) or len(stack) != len(cells):
        raise ValueError("its MultiRNNCell's cell_<k> are not 0, 1, ... once.")
    return [stack[index] for index in range(len(stack))]


def cells_of(network):
    """The `Cell`s of a network, in order."""
    if isinstance(network, Cell):
        return [network]
    if isinstance(network, tuple):
        return [*cells_of(network[1]), *cells_of(network[2])]
    return list(network)


def check_input_dims(network, scope):
    """Each cell of a stack reads the one below; both directions one input."""
    sides = network[1:] if isinstance(network, tuple) else [network]
    for side in sides:
        stack = cells_of(side)
        for below, above in zip(stack, stack[1:]):
            if above.input_dim != below.output_dim:
                raise ValueError(
                    f"The cell at {above.path!r} reads {above.input_dim} "
                    f"features but the cell below it, {below.path!r}, gives "
                    f"{below.output_dim}. Received: scope={scope!r}"
                )
    if len(sides) == 2:
        forward, backward = (cells_of(side)[0] for side in sides)
        if forward.input_dim != backward.input_dim:
            raise ValueError(
                f"The two directions read different inputs: {forward.path!r} "
                f"{forward.input_dim} features, {backward.path!r} "
                f"{backward.input_dim}. Received: scope={scope!r}"
            )


def no_cells_message(scope, shapes):
    """The error for a scope without cells: what the checkpoint holds."""
    names = sorted(shapes)
    listed = [f"{name} {list(shapes[name])}" for name in names[:LISTED]]
    if len(names) > LISTED:
        listed.append(f"... and {len(names) - LISTED} more")
    elsewhere = sorted(cell_groups(shapes))
    hint = (
        "Cells of tf.compat.v1.nn.rnn_cell found in the checkpoint, whose "
        "scope (or a scope above it) to pass: "
        + ", ".join(repr(path) for path in elsewhere[:LISTED])
        + ("" if len(elsewhere) <= LISTED else ", ...")
        + ". "
        if elsewhere
        else "The checkpoint holds no tf.compat.v1.nn.rnn_cell cell. "
    )
    return (
        f"Argument `scope` must name variables of a LSTMCell, BasicLSTMCell, "
        f"GRUCell or BasicRNNCell (or a MultiRNNCell or bidirectional pair "
        f"of them), but there are none under {scope!r}. {hint}The "
        f"checkpoint holds {len(names)} variables: " + "; ".join(listed) + "."
        f" Received: scope={scope!r}"
    )
