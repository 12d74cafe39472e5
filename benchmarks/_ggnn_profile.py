"""Where a GG-NN train step spends its time, by each framework's profiler.

`benchmarks/ggnn.py --profile` (or `--profile-only`) runs the real train
step of its comparisons (`model.train_on_batch` of `GatedGraph`, PyG's Adam
step) under the profiler of the framework that runs it, each contender in a
process of its own (`KERAS_BACKEND` set before Keras is imported, as
`_worker.Contender` does): TensorFlow (`jit_compile="auto"`, off on CPUs,
and `jit_compile=True`), JAX, PyTorch, and PyG (its OpenMP workers waiting
passively, unlike in the timing tables: see `contenders`).

- PyTorch (Keras' torch backend, PyG): `torch.profiler`, the self CPU
  time of each `aten::` op.
- JAX: `jax.profiler.trace`; the events of the Perfetto trace that carry
  an `hlo_op` (one per XLA thunk: `dot.3`, `ynn_fusion.12`,
  `wrapped_scatter`, `add_tanh_fusion`, ...).
- TensorFlow: `tf.profiler.experimental`; the op events of the host plane
  of the written `.xplane.pb`, named `scope/name:OpType`, or, with XLA, the
  XLA thunks (`hlo_op`), named after TensorFlow's ops (`MatMul_16.2`).

Each op name falls in a category by the first matching pattern of its
framework's table below (`CATEGORIES`); `--profile-verbose` prints the ops
left in "other", so that the table can be checked. "matmuls" holds the
dense aggregation's batched matmuls too, where `aggregation="auto"` takes
that path, and whatever XLA fused into a matmul (`ynn_fusion`). The
optimizer is told apart by its name scope (TensorFlow) or its profiler
range (PyTorch, PyG); XLA fuses its update with other elementwise work,
which leaves its row empty there.

TensorFlow and XLA run independent ops at the same time on the cores: the
summed op time may be more than the step's wall time (or less, when the
host waits), so the tables give each category's share of the summed op
time and, apart, the step's wall time without the profiler.

The layer's graph checks cannot be told apart by op name: they are timed by
difference, the same train step against one whose `GatedGraph` propagates
already prepared inputs (`GatedGraph.propagate`, as `GGSNN` calls it), the
two timed in turn in the same process.
"""

import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))

ORDER = (
    "matmuls",
    "gathers and scatters",
    "GRU elementwise",
    "concat, copies, reshapes",
    "optimizer",
    "other",
)

# Per framework, `(category, pattern)`: the first pattern that matches the
# whole op name (`re.fullmatch`, case-sensitive) names its category.
# PyTorch: the `aten::` name without its prefix. TensorFlow: the op type
# (`_Mkl` prefix dropped). XLA: the HLO name without its `.N` suffix.
CATEGORIES = {
    "torch": (
        ("matmuls", r"mm|addmm|bmm|baddbmm|matmul|linear|einsum"),
        (
            "gathers and scatters",
            r"index_select|index_select_backward|gather|scatter\w*|"
            r"index_add_?|index_put_?|_index_put_impl_|index|"
            r"embedding\w*|\w*segment_reduce\w*",
        ),
        (
            "GRU elementwise",
            r"sigmoid_?|tanh_?|sigmoid_backward|tanh_backward|gru_cell|"
            r"mul_?|add_?|sub_?|rsub|div_?|neg|sum",
        ),
        (
            "concat, copies, reshapes",
            r"cat|stack|split|split_with_sizes|unbind|chunk|narrow|slice|"
            r"select|copy_|_to_copy|to|clone|contiguous|view|_unsafe_view|"
            r"reshape|t|transpose|permute|expand|as_strided|squeeze|"
            r"unsqueeze|flatten|flip|repeat|tile|detach|alias|"
            r"resolve_conj|resolve_neg|unsafe_split|unsafe_chunk|"
            r"_reshape_alias|m_t|mT|unsafe_view",
        ),
        ("optimizer", r"_foreach_\w+|addcmul_|addcdiv_|lerp_|sqrt"),
    ),
    "tensorflow": (
        ("matmuls", r"(Fused)?(Batch)?MatMul(V2|V3)?|Einsum"),
        (
            "gathers and scatters",
            r"(Resource)?Gather(V2|Nd)?|(Unsorted)?Segment(Sum|Max|Min)\w*|"
            r"SparseSegment\w*|(Tensor)?Scatter\w*|Bincount|DenseBincount",
        ),
        (
            "GRU elementwise",
            r"Sigmoid|Tanh|SigmoidGrad|TanhGrad|Mul|Add|AddV2|AddN|Sub|Neg|"
            r"RealDiv|Square|Sum|BiasAdd|BiasAddGrad|"
            # `AccumulateNV2` (a gradient's sum, as `AddN`), as it runs.
            r"TemporaryVariable|DestroyTemporaryVariable|Assign|AssignAdd",
        ),
        (
            "concat, copies, reshapes",
            r"Concat(V2)?|Split(V)?|Pack|Unpack|Slice|StridedSlice|"
            r"StridedSliceGrad|Reshape|Transpose|Tile|Identity|Pad|Cast|"
            r"Squeeze|ExpandDims|BroadcastTo|Copy|OneHot",
        ),
        (
            "optimizer",
            r"ResourceApply\w+|Assign(Add|Sub)?VariableOp|Sqrt|Pow",
        ),
    ),
    "xla": (
        ("matmuls", r"dot|ynn_fusion|\w*MatMul\w*|\w*dot\w*_fusion"),
        ("gathers and scatters", r"\w*(gather|scatter|segment)\w*"),
        (
            "concat, copies, reshapes",
            r"concat\w*|concatenate\w*|copy|\w*_copy_fusion|"
            r"wrapped_(slice|copy|transpose|broadcast|pad|concatenate|"
            r"reshape|bitcast)|transpose\w*|slice_bitcast_fusion",
        ),
        (
            "GRU elementwise",
            r"\w+_fusion|wrapped_(add|subtract|multiply|divide|tanh|"
            r"logistic|negate|exponential|select|sqrt|rsqrt|maximum)",
        ),
    ),
}


def categorize(name, framework):
    """The category of an op name on `framework` ("torch", "tensorflow",
    "xla"); names no pattern matches are "other"."""
    for category, pattern in CATEGORIES[framework]:
        if re.fullmatch(pattern, name):
            return category
    return "other"


# --- In the worker process -------------------------------------------------


def _keras_steps(sizes, jit_compile):
    """The train step and the same step without checks, and the model."""
    from _ggnn_steps import batch_step
    from _ggnn_steps import graph_arrays
    from _ggnn_steps import keras_model
    from _ggnn_steps import target_array

    padded, _ = graph_arrays(
        sizes["graphs"],
        sizes["nodes"],
        sizes["edges"],
        sizes["features"],
        sizes["types"],
    )
    target = target_array(sizes["graphs"], sizes["nodes"], sizes["units"])
    shape = (
        sizes["units"],
        sizes["types"],
        sizes["steps"],
        sizes["reverse"],
        jit_compile,
    )
    model = keras_model(padded, *shape, "auto")
    unchecked = keras_model(padded, *shape, "auto", checks=False)
    return (
        batch_step(model, padded, target),
        batch_step(unchecked, padded, target),
        model,
    )


def _torch_ops(step, count, optimizer_ranges=("Optimizer.step",)):
    """`{aten op: self CPU seconds}` over `count` steps; ops run inside a
    range whose name starts with one of `optimizer_ranges` are
    "optimizer: <op>"."""
    import torch

    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU]
    ) as profiler:
        start = time.perf_counter()
        for _ in range(count):
            step()
        wall = time.perf_counter() - start
    totals = {}
    for event in profiler.events():
        name = event.name
        parent = event
        while parent is not None:
            if parent.name.startswith(optimizer_ranges):
                name = f"optimizer: {name}"
                break
            parent = parent.cpu_parent
        seconds = event.self_cpu_time_total / 1e6
        totals[name] = totals.get(name, 0.0) + seconds
    return totals, wall


def _jax_ops(step, count, folder):
    import jax

    with jax.profiler.trace(folder, create_perfetto_trace=True):
        start = time.perf_counter()
        for _ in range(count):
            step()
        wall = time.perf_counter() - start
    totals = {}
    for root, _, files in os.walk(folder):
        for file in files:
            if not file.endswith(".trace.json.gz"):
                continue
            with gzip.open(os.path.join(root, file)) as stream:
                trace = json.load(stream)
            events = trace.get("traceEvents", trace)
            for event in events:
                if event.get("ph") != "X":
                    continue
                if "hlo_op" not in (event.get("args") or {}):
                    continue
                name = event["name"]
                totals[name] = totals.get(name, 0.0) + event["dur"] / 1e6
    return totals, wall


_TF_OP = re.compile(r"[^\s:]+:\w+")


def _xplane():
    try:
        from tsl.profiler.protobuf import xplane_pb2
    except ImportError:
        from tensorflow.tsl.profiler.protobuf import xplane_pb2
    return xplane_pb2


def _tensorflow_ops(step, count, folder):
    """TensorFlow's op events (`scope/name:OpType`) and XLA's thunks
    (events with an `hlo_op` stat) of the host plane, outside the Python
    thread."""
    import tensorflow as tf

    tf.profiler.experimental.start(folder)
    try:
        start = time.perf_counter()
        for _ in range(count):
            step()
        wall = time.perf_counter() - start
    finally:
        tf.profiler.experimental.stop()
    xplane_pb2 = _xplane()
    totals = {}
    for root, _, files in os.walk(folder):
        for file in files:
            if not file.endswith(".xplane.pb"):
                continue
            space = xplane_pb2.XSpace()
            with open(os.path.join(root, file), "rb") as stream:
                space.ParseFromString(stream.read())
            for plane in space.planes:
                if not plane.name.startswith("/host:CPU"):
                    continue
                hlo = {
                    key
                    for key, value in plane.stat_metadata.items()
                    if value.name == "hlo_op"
                }
                for line in plane.lines:
                    if line.name == "python":
                        continue
                    for event in line.events:
                        name = plane.event_metadata[event.metadata_id].name
                        xla = any(s.metadata_id in hlo for s in event.stats)
                        if not xla and (
                            not _TF_OP.fullmatch(name)
                            or name.split(":")[1].startswith("__")
                        ):
                            continue
                        seconds = event.duration_ps / 1e12
                        key = f"xla: {name}" if xla else name
                        totals[key] = totals.get(key, 0.0) + seconds
    return totals, wall


def _wrap_optimizer(model):
    """Keras' torch backend: the optimizer's update under a profiler range
    (`_torch_ops` counts the ops inside it as the optimizer's)."""
    import torch

    apply = model.optimizer.apply

    def recorded(*args, **kwargs):
        with torch.profiler.record_function("keras optimizer.apply"):
            return apply(*args, **kwargs)

    model.optimizer.apply = recorded


def _time_in_turn(steps, repeats):
    walls = [[] for _ in steps]
    for _ in range(repeats):
        for index, step in enumerate(steps):
            start = time.perf_counter()
            step()
            walls[index].append(time.perf_counter() - start)
    return walls


def run(spec):
    """One contender's profile: `{"ops": {name: seconds per step},
    "framework", "wall": [...], "unchecked": [...], "profiled_wall"}`."""
    sizes, count = spec["sizes"], spec["profile_steps"]
    kind = spec["kind"]
    sys.path.insert(0, _HERE)
    if kind == "pyg":
        from _ggnn_steps import pyg_step

        step = pyg_step(**sizes, threads=spec["threads"])
        steps = [step]
        framework = "torch"
    else:
        import keras

        step, unchecked, model = _keras_steps(sizes, spec["jit_compile"])
        steps = [step, unchecked]
        backend = keras.backend.backend()
        if backend == "torch":
            _wrap_optimizer(model)
        framework = "tensorflow" if backend == "tensorflow" else backend
    for _ in range(spec["warmup"]):
        for each in steps:
            each()
    walls = _time_in_turn(steps, spec["repeats"])
    with tempfile.TemporaryDirectory() as folder:
        if framework == "torch":
            ranges = ("Optimizer.step", "keras optimizer.apply")
            ops, profiled = _torch_ops(step, count, ranges)
        elif framework == "jax":
            ops, profiled = _jax_ops(step, count, folder)
        else:
            ops, profiled = _tensorflow_ops(step, count, folder)
    return {
        "framework": framework,
        "ops": {name: seconds / count for name, seconds in ops.items()},
        "wall": walls[0],
        "unchecked": walls[1] if len(walls) > 1 else None,
        "profiled_wall": profiled / count,
    }


# --- In the launching process -----------------------------------------------


def contenders(threads):
    """`{column: (spec, environment)}`, in the table's order."""
    tensorflow = {"KERAS_BACKEND": "tensorflow"}
    return {
        "TF": ({"kind": "keras", "jit_compile": "auto"}, tensorflow),
        "TF + XLA": ({"kind": "keras", "jit_compile": True}, tensorflow),
        "jax": (
            {"kind": "keras", "jit_compile": "auto"},
            {"KERAS_BACKEND": "jax"},
        ),
        "torch": (
            {"kind": "keras", "jit_compile": "auto"},
            {"KERAS_BACKEND": "torch"},
        ),
        # Unlike `ggnn.py`'s timing tables, PyG's OpenMP workers wait
        # passively here too (`ggnn.py` sets `OMP_WAIT_POLICY`): under the
        # profiler's own thread, spinning workers made a profiled PyG step
        # 8x slower than a plain one, on 2 cores.
        "PyG": ({"kind": "pyg", "threads": threads}, {}),
    }


def run_in_subprocess(spec, env, timeout=None):
    """`run(spec)` in a new Python process with `env` on top of this
    process' environment (`None` removes a variable); the result, or
    `{"error": ...}`."""
    environment = {**os.environ, **env}
    environment.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        completed = subprocess.run(
            [sys.executable, os.path.abspath(__file__)],
            input=json.dumps(spec),
            capture_output=True,
            text=True,
            env={k: v for k, v in environment.items() if v is not None},
            cwd=_HERE,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    lines = completed.stdout.strip().splitlines()
    if completed.returncode or not lines:
        return {"error": completed.stderr.strip()[-2000:] or "no output"}
    return json.loads(lines[-1])


def split(result):
    """`{category: seconds per step}` of one contender, and the names of
    its "other" ops with their seconds."""
    seconds = dict.fromkeys(ORDER, 0.0)
    other = {}
    for name, value in result["ops"].items():
        if name.startswith("xla: "):
            name = re.sub(r"\.\d+$", "", name[len("xla: ") :])
            category = categorize(name, "xla")
        elif result["framework"] == "tensorflow":
            scope, op_type = name.rsplit(":", 1)
            op_type = op_type.removeprefix("_Mkl")
            category = categorize(op_type, "tensorflow")
            if re.search(r"(^|/)adam(_\d+)?/", scope, re.IGNORECASE):
                category = "optimizer"
            name = op_type
        elif result["framework"] == "jax":
            name = re.sub(r"\.\d+$", "", name)
            category = categorize(name, "xla")
        else:
            optimizer = name.startswith("optimizer: ")
            name = name.removeprefix("optimizer: ")
            category = categorize(_torch_op(name), "torch")
            if optimizer:
                category = "optimizer"
            elif category == "optimizer":
                # `sqrt`, `addcmul_`, ... outside an optimizer range.
                category = "other"
        seconds[category] += value
        if category == "other":
            other[name] = other.get(name, 0.0) + value
    return seconds, other


def _torch_op(name):
    """`aten::mm` -> `mm`; an autograd node (`MmBackward0`, its
    `autograd::engine::evaluate_function: ...`) -> its forward op, `mm`."""
    name = name.removeprefix("aten::")
    name = name.removeprefix("autograd::engine::evaluate_function: ")
    backward = re.fullmatch(r"(\w+)Backward\d+", name)
    if backward:
        name = re.sub(r"(?<!^)(?=[A-Z])", "_", backward.group(1)).lower()
    return name


def _ms(seconds):
    return f"{1e3 * seconds:.{1 if seconds >= 1e-3 else 2}f}"


def _cell(value, total):
    share = f" ({100 * value / total:.0f}%)" if total else ""
    return f"{_ms(value)}{share}"


def print_split(title, results, verbose=False):
    """A Markdown table: categories x contenders, ms per step and share."""
    names = list(results)
    columns = {}
    for name, result in results.items():
        if "error" in result:
            print(f"{name} failed: {result['error']}")
            continue
        columns[name] = split(result)
    print(f"\n### {title}: where a train step's op time goes\n")
    print("| ms per step (% of summed op time) | " + " | ".join(names) + " |")
    print("| --- |" + " ---: |" * len(names))
    for category in ORDER:
        cells = []
        for name in names:
            if name not in columns:
                cells.append("failed")
                continue
            seconds = columns[name][0]
            cells.append(_cell(seconds[category], sum(seconds.values())))
        print(f"| {category} | " + " | ".join(cells) + " |")
    rows = {
        "summed op time": lambda r, s: _ms(sum(s.values())),
        "step wall median (no profiler)": lambda r, s: _ms(
            statistics.median(r["wall"])
        ),
        "step wall, profiled": lambda r, s: _ms(r["profiled_wall"]),
        "checks (wall difference)": _checks_cell,
    }
    for row, cell in rows.items():
        cells = []
        for name in names:
            if name not in columns:
                cells.append("failed")
            else:
                cells.append(cell(results[name], columns[name][0]))
        print(f"| {row} | " + " | ".join(cells) + " |")
    if verbose:
        # What no pattern matched, in ms per step, the biggest first.
        for name, (_, other) in columns.items():
            listed = sorted(other.items(), key=lambda item: -item[1])
            shown = [(op, value) for op, value in listed if value >= 1e-5]
            print(
                f"\n{name}, other: "
                + ", ".join(f"{op} {_ms(value)}" for op, value in shown)
                + f" (and {len(listed) - len(shown)} under 0.01 ms)"
            )


def _checks_cell(result, _):
    if not result.get("unchecked"):
        return "-"
    wall = statistics.median(result["wall"])
    difference = wall - statistics.median(result["unchecked"])
    return f"{_ms(difference)} ({100 * difference / wall:.0f}%)"


CASES = (
    ("One edge type, no reverse edges", 1, False),
    ("Four edge types + reverse edges", 4, True),
)


def profile_split(args, verbose=False):
    """Profiles each contender of each case of `ggnn.py` and prints the
    tables; returns `{case: {contender: result}}`."""
    warmup, repeats = max(2, args.warmup), max(7, args.profile_repeats)
    print(
        f"\nProfiles: {args.profile_steps} train steps under each "
        f"framework's profiler after {warmup} warm-up steps; walls: medians "
        f"of {repeats} steps without the profiler, in turn with the same "
        "step without the graph checks (the checks row: the difference)"
    )
    tables = {}
    for title, types, reverse in CASES:
        sizes = {
            "graphs": args.graphs,
            "nodes": args.nodes,
            "edges": args.edges,
            "features": args.features,
            "units": args.units,
            "types": types,
            "steps": args.steps,
            "reverse": reverse,
        }
        results = {}
        for name, (spec, env) in contenders(args.torch_threads).items():
            spec = {
                **spec,
                "sizes": sizes,
                "warmup": warmup,
                "repeats": repeats,
                "profile_steps": args.profile_steps,
            }
            results[name] = run_in_subprocess(spec, env)
        print_split(
            f"{title} ({args.graphs} graphs x {args.nodes} nodes x "
            f"{args.edges} edges, {args.units} units, {args.steps} steps)",
            results,
            verbose,
        )
        tables[title] = results
    return tables


if __name__ == "__main__":
    # Standard output carries the result: whatever the step prints goes to
    # standard error instead.
    protocol = sys.stdout
    sys.stdout = sys.stderr
    result = run(json.loads(sys.stdin.read()))
    protocol.write(json.dumps(result) + "\n")
    protocol.flush()
