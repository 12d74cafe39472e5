"""Train-step time of `kr.layers.GatedGraph` against PyG's `GatedGraphConv`.

Both sides get identical random graphs (by default 64 graphs of 50 nodes and
150 edges, 128-wide node inputs), 128 units and 8 propagation steps, and
take one Adam step on the MSE between the node states and a fixed random
target: forward, backward and update. Our layer is fed the padded graph
tensors through `model.train_on_batch`, as `fit` runs it, PyG the flat
`edge_index` of the same graphs.

Each contender runs in a process of its own (`_worker.py`), as a user runs
one framework: ours on TensorFlow (`jit_compile="auto"`, which is off on
CPUs, and with XLA), on JAX and on PyTorch, and PyG with PyTorch's default
settings. The processes take one step each in turn, so that a noisy
machine slows them all alike and only one runs at a time; the tables give
medians of wall time and of each process's CPU time (all its threads).
Timed in one process, TensorFlow's and PyTorch's thread pools compete for
the cores: PyG's step took about twice its own time there, which made the
ratios look better than a user's.

Three comparisons:

1. One edge type, no reverse edges, no message bias: the exact math of
   PyG's `GatedGraphConv` (`a_v = sum_u h_u W`, `torch.nn.GRUCell`, which is
   `GRUCell(reset_after=True)`).
2. Four edge types with reverse edges (8 transforms), which PyG's
   `GatedGraphConv` cannot express: ours against `TypedGatedGraphConv`
   below, the same propagation written with PyG's scatter, as a PyG user
   would write it.
3. Node throughput from 10^3 to 10^6 total nodes (graphs of the same size
   and density, forward pass only: a 10^6-node train step needs more memory
   than a workstation has), to show the cost grows linearly: ours on
   TensorFlow, JAX and PyTorch, each timed in turn with a PyG process of
   its own.

On TensorFlow, ours is timed with `aggregation="auto"` (what a user gets:
the dense path on these small graphs when the count tensor is small
enough, see `GatedGraph`), and with each path forced, `"dense"`
(per-graph adjacency-count matmuls) and `"sparse"` (gather + segment sum).

With `--profile`, also where each contender's train step of 1. and 2.
spends its time, by its framework's own profiler over `--profile-steps`
steps after the warm-up, each in a process of its own (`_ggnn_profile.py`):
ms per step and share of the summed op time of matmuls, gathers and
scatters, GRU elementwise, concatenation and copies, the optimizer and the
rest, beside the step's wall time; the graph checks by difference, the same
step timed in turn against one whose `GatedGraph` takes prepared inputs.
`--profile-only` prints only that (a few minutes); `--profile-verbose`
lists the ops left in "other".

Needs the benchmark extra: `pip install -e .[bench]` (PyTorch CPU build and
torch-geometric).

    python benchmarks/ggnn.py --profile            # everything, ~45 minutes
    python benchmarks/ggnn.py --profile-only       # the profile split alone
    python benchmarks/ggnn.py --repeats 5 --max-nodes 100000
    python benchmarks/ggnn.py --backend all --repeats 5   # our rows only

With `--backend`, each backend's subprocess times only our rows of 1. and
2. (`train_on_batch` with `jit_compile="auto"` unless `--jit-compile`: XLA
on JAX, off on TensorFlow's CPU and on torch), not PyG, the profile or the
scaling table, and a last table gives the ratio of each backend to
TensorFlow. On JAX it first counts the train-step compilations of one
`fit` epoch over `--compile-graphs` graphs of varied sizes, batched by
`kr.graphs.padded_batch` with and without node and edge budgets
(`kr.testing.count_jax_compilations`).

    python benchmarks/ggnn.py --backend jax --repeats 3
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
# PyTorch's OpenMP workers spin while they wait; on a machine with more
# runnable threads than cores (TensorFlow's pool idles beside them, and the
# machine may be shared), spinning made a PyG step 5-10x slower and erratic
# in our runs. Passive waiting removes that without slowing an idle machine.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import _backend  # noqa: E402
import _ggnn_profile  # noqa: E402

if __name__ == "__main__":
    # Before Keras is imported: with --backend, this process only launches
    # one subprocess per backend.
    _backend.dispatch_if_requested(__file__)

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import torch  # noqa: E402

try:
    import torch_geometric
except ImportError:  # Only the `--backend` runs, which time no PyG, work.
    torch_geometric = None

from _ggnn_steps import keras_step  # noqa: E402
from _worker import Contender  # noqa: E402
from _worker import time_in_turn  # noqa: E402

import keras_recurrent as kr  # noqa: E402

# The Keras backends of the scaling table, each against a PyG run of its own.
SCALING_BACKENDS = ("tensorflow", "jax", "torch")
# PyTorch processes, ours and PyG's, wait as PyTorch does by default
# (`OMP_WAIT_POLICY` unset, not the passive waiting set above for the
# others): passive waiting made either train step 1.2x (PyG) to 1.8x (ours
# on PyTorch) slower, timed alone on a quiet machine.
PYTORCH_DEFAULT = {"OMP_WAIT_POLICY": None}


def pyg_contender(args, common, warmup):
    """PyG's step on `common`'s graphs, as a PyTorch user runs it
    (PyTorch's default OpenMP waiting, `--torch-threads` threads)."""
    return Contender(
        "_ggnn_steps:pyg_step",
        {**common, "threads": args.torch_threads},
        PYTORCH_DEFAULT,
        warmup,
    )


def keras_env(backend):
    """The environment of a worker that runs our layer on `backend`."""
    return {
        "KERAS_BACKEND": backend,
        **(PYTORCH_DEFAULT if backend == "torch" else {}),
    }


def time_round_robin(steps, repeats, warmup):
    """Wall and CPU seconds of each step function, timed round-robin.

    Returns `{name: (wall seconds, process CPU seconds)}`, lists with one
    entry per repeat. CPU time (all threads of this process) counts what a
    step costs even when other processes share the cores, which only
    stretch its wall time.
    """
    for step in steps.values():
        for _ in range(warmup):
            step()
    times = {name: ([], []) for name in steps}
    for _ in range(repeats):
        for name, step in steps.items():
            wall, cpu = time.perf_counter(), time.process_time()
            step()
            times[name][0].append(time.perf_counter() - wall)
            times[name][1].append(time.process_time() - cpu)
    return times


def compare_keras_only(args, num_edge_types, reverse):
    """Our rows of `compare` on the backend of this process, no PyG.

    A row whose model fails to build or train on this backend is left out,
    with its error printed.
    """
    jit_compile = True if args.jit_compile else "auto"
    contenders = {}
    for aggregation in ("auto", "dense", "sparse"):
        name = f"GatedGraph (aggregation={aggregation!r})"
        try:
            step = keras_step(
                **step_arguments(args, num_edge_types, reverse),
                aggregation=aggregation,
                jit_compile=jit_compile,
            )
            step()
        except Exception as error:  # noqa: BLE001 (reported, row skipped)
            print(f"{name} failed on {keras.backend.backend()}: {error!r}")
            continue
        contenders[name] = step
    return time_round_robin(contenders, args.repeats, args.warmup)


def print_keras_rows(title, times):
    print(f"\n### {title} ({keras.backend.backend()})\n")
    print("| implementation | wall median ms | wall min ms | CPU median ms |")
    print("| --- | ---: | ---: | ---: |")
    for name, (wall, cpu) in times.items():
        print(
            f"| {name} | {1e3 * statistics.median(wall):.1f} | "
            f"{1e3 * min(wall):.1f} | {1e3 * statistics.median(cpu):.1f} |"
        )


def variable_size_graphs(args, seed=2):
    """`args.compile_graphs` graphs of 1/2 to 1x `--nodes` and `--edges`,
    as a `tf.data.Dataset` of `(graph, target)`."""
    rng = np.random.default_rng(seed)
    examples = []
    for _ in range(args.compile_graphs):
        num_nodes = int(rng.integers(args.nodes // 2, args.nodes + 1))
        num_edges = int(rng.integers(args.edges // 2, args.edges + 1))
        graph = kr.graphs.encode_graph(
            [tuple(e) for e in rng.integers(0, num_nodes, (num_edges, 2))],
            num_nodes=num_nodes,
            node_inputs=rng.normal(size=(num_nodes, args.features)),
            num_edge_types=1,
        )
        examples.append((graph, np.float32(rng.normal())))
    spec = (
        kr.graphs.graph_spec(args.features),
        tf.TensorSpec((), tf.float32),
    )
    return tf.data.Dataset.from_generator(
        lambda: iter(examples), output_signature=spec
    )


def compile_counts(args):
    """Train-step compilations of one `fit` epoch on JAX: graphs of varied
    sizes through `kr.graphs.padded_batch`, with and without budgets."""
    dataset = variable_size_graphs(args)
    pipelines = {
        "padded to each batch's largest graph": kr.graphs.padded_batch(
            dataset, args.compile_batch, drop_remainder=True
        ),
        f"budgets num_nodes={args.nodes}, num_edges={args.edges}": (
            kr.graphs.padded_batch(
                dataset,
                args.compile_batch,
                num_nodes=args.nodes,
                num_edges=args.edges,
                drop_remainder=True,
            )
        ),
    }
    print(
        f"\n### Compilations, one epoch of {args.compile_graphs} graphs of "
        f"{args.nodes // 2}-{args.nodes} nodes, {args.edges // 2}-"
        f"{args.edges} edges, batch {args.compile_batch} "
        f"({keras.backend.backend()})\n"
    )
    print(
        "| pipeline | batches | batch shapes | train-step compilations "
        "| epoch s |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, batched in pipelines.items():
        shapes = {
            (tuple(graph["node_inputs"].shape), tuple(graph["edges"].shape))
            for graph, _ in batched
        }
        inputs = kr.graphs.graph_inputs(args.features)
        states = kr.layers.GatedGraph(
            args.units, 1, propagation_steps=args.steps
        )(inputs)
        pooled = kr.layers.GraphReadout(args.units)(
            [states, inputs["node_inputs"], inputs["node_mask"]]
        )
        model = keras.Model(inputs, keras.layers.Dense(1)(pooled))
        model.compile(keras.optimizers.Adam(1e-3), "mse")
        start = time.perf_counter()
        with kr.testing.count_jax_compilations() as compiles:
            model.fit(batched, epochs=1, verbose=0)
        seconds = time.perf_counter() - start
        print(
            f"| {name} | {args.compile_graphs // args.compile_batch} | "
            f"{len(shapes)} | {compiles.of('train_step')} | {seconds:.1f} |"
        )


def backend_run(args):
    """What one `--backend` subprocess times: our rows of 1. and 2., and
    on JAX the compilations of one epoch of variable-size batches."""
    if keras.backend.backend() == "jax" and args.compile_graphs:
        compile_counts(args)
    medians = {}
    for title, num_edge_types, reverse in (
        ("One edge type, no reverse edges", 1, False),
        ("Four edge types + reverse edges", 4, True),
    ):
        times = compare_keras_only(args, num_edge_types, reverse)
        print_keras_rows(title, times)
        for name, (wall, _) in times.items():
            medians[f"{num_edge_types} type(s): {name}"] = statistics.median(
                wall
            )
    _backend.record(medians)


def step_arguments(args, num_edge_types, reverse, train=True):
    return {
        "graphs": args.graphs,
        "nodes": args.nodes,
        "edges": args.edges,
        "features": args.features,
        "units": args.units,
        "types": num_edge_types,
        "steps": args.steps,
        "reverse": reverse,
        "train": train,
    }


def auto_choice(
    args, num_edge_types, reverse, nodes=None, edges=None, xla=False
):
    """`"dense"` or `"sparse"`: what `aggregation="auto"` takes here, in a
    TensorFlow graph or on PyTorch, or compiled by XLA (`xla`: JAX,
    `jit_compile=True`)."""
    layer = kr.layers.GatedGraph(
        args.units, num_edge_types, add_reverse_edges=reverse
    )
    dense = layer._uses_dense_aggregation(
        (None, nodes or args.nodes), (None, edges or args.edges), xla=xla
    )
    return "dense" if dense else "sparse"


def contenders(args, num_edge_types, reverse):
    """Every row of a comparison, each in a worker process of its own.

    Ours on TensorFlow (`aggregation` auto and forced, and with XLA), on
    JAX and on PyTorch (`train_on_batch` as a user's `fit` runs it), and
    PyG last, as a PyTorch user runs it (PyTorch's default OpenMP waiting,
    `--torch-threads` threads).
    """
    common = step_arguments(args, num_edge_types, reverse)
    auto = auto_choice(args, num_edge_types, reverse)
    xla_auto = auto_choice(args, num_edge_types, reverse, xla=True)
    tensorflow = {"KERAS_BACKEND": "tensorflow"}
    rows = {}
    for aggregation in ("auto", "dense", "sparse"):
        name = (
            f"GatedGraph, TensorFlow (auto: {auto})"
            if aggregation == "auto"
            else f"GatedGraph, TensorFlow ({aggregation})"
        )
        rows[name] = Contender(
            "_ggnn_steps:keras_step",
            {**common, "aggregation": aggregation},
            tensorflow,
            args.warmup,
        )
    rows[f"GatedGraph, TensorFlow + XLA (auto: {xla_auto})"] = Contender(
        "_ggnn_steps:keras_step",
        {**common, "jit_compile": True},
        tensorflow,
        args.warmup,
    )
    for backend, choice in (("jax", xla_auto), ("torch", auto)):
        rows[f"GatedGraph, {backend} backend (auto: {choice})"] = Contender(
            "_ggnn_steps:keras_step", common, keras_env(backend), args.warmup
        )
    name = (
        "PyG GatedGraphConv"
        if num_edge_types == 1 and not reverse
        else "PyG TypedGatedGraphConv (scatter)"
    )
    rows[name] = pyg_contender(args, common, args.warmup)
    return rows


def compare(args, num_edge_types, reverse):
    return time_in_turn(contenders(args, num_edge_types, reverse), args.repeats)


def scaling(args):
    """Prints forward time and node throughput per size and backend.

    Each backend is timed in turn with a PyG process of its own, so that
    only two processes hold a batch at a time (four 10^6-node workers
    outgrew a 23 GB machine) and each row's PyG figure is paired with it.
    """
    print("\n### Forward throughput against size (one edge type)\n")
    print(
        "| nodes | edges | backend | ours ms | ours nodes/s | PyG ms "
        "| PyG nodes/s | ratio | ours CPU ms | PyG CPU ms | CPU ratio |"
    )
    print("| ---: | ---: | --- |" + " ---: |" * 8)
    total = 1000
    while total <= args.max_nodes:
        num_graphs = max(1, total // args.nodes)
        common = {
            **step_arguments(args, 1, False, train=False),
            "graphs": num_graphs,
        }
        # The big sizes take seconds a pass: fewer repeats there.
        small = total <= 10**4
        warmup = args.warmup if small else 1
        repeats = args.repeats if small else max(3, args.repeats // 5)
        nodes, edges = num_graphs * args.nodes, num_graphs * args.edges
        for backend in SCALING_BACKENDS:
            times = time_in_turn(
                {
                    "ours": Contender(
                        "_ggnn_steps:keras_step",
                        common,
                        keras_env(backend),
                        warmup,
                    ),
                    "pyg": pyg_contender(args, common, warmup),
                },
                repeats,
            )
            if len(times) < 2:
                continue  # A build failed (printed): nothing to compare.
            ours, pyg = (statistics.median(times[k][0]) for k in times)
            ours_cpu, pyg_cpu = (statistics.median(times[k][1]) for k in times)
            print(
                f"| {nodes:,} | {edges:,} | {backend} | {1e3 * ours:.1f} | "
                f"{nodes / ours:,.0f} | {1e3 * pyg:.1f} | "
                f"{nodes / pyg:,.0f} | {ours / pyg:.2f}x | "
                f"{1e3 * ours_cpu:.1f} | {1e3 * pyg_cpu:.1f} | "
                f"{ours_cpu / pyg_cpu:.2f}x |",
                flush=True,
            )
        total *= 10


def profile(args):
    """Each contender's train step under its framework's profiler, split
    into matmuls, gathers and scatters, GRU elementwise, ... and checks
    (`_ggnn_profile`)."""
    _ggnn_profile.profile_split(args, verbose=args.profile_verbose)


def print_comparison(title, times):
    print(f"\n### {title}\n")
    names = list(times)
    wall_base = statistics.median(times[names[-1]][0])
    cpu_base = statistics.median(times[names[-1]][1])
    print(
        "| implementation | wall median ms | wall min ms | ratio to PyG "
        "| CPU median ms | CPU ratio to PyG |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name in names:
        wall, cpu = times[name]
        print(
            f"| {name} | {1e3 * statistics.median(wall):.1f} | "
            f"{1e3 * min(wall):.1f} | "
            f"{statistics.median(wall) / wall_base:.2f}x | "
            f"{1e3 * statistics.median(cpu):.1f} | "
            f"{statistics.median(cpu) / cpu_base:.2f}x |"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graphs", type=int, default=64)
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--edges", type=int, default=150)
    parser.add_argument("--features", type=int, default=128)
    parser.add_argument("--units", type=int, default=128)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument(
        "--max-nodes",
        type=int,
        default=10**6,
        help="largest total node count of the scaling table (0 to skip)",
    )
    parser.add_argument(
        "--compile-graphs",
        type=int,
        default=64,
        help="with --backend jax: graphs of the epoch whose compilations "
        "are counted (0 to skip)",
    )
    parser.add_argument("--compile-batch", type=int, default=8)
    parser.add_argument("--torch-threads", type=int, default=2)
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also split each contender's train step by its framework's "
        "profiler (matmuls, gathers and scatters, GRU elementwise, ...)",
    )
    parser.add_argument(
        "--profile-only",
        action="store_true",
        help="only the profile split: no timing tables, no scaling",
    )
    parser.add_argument(
        "--profile-steps",
        type=int,
        default=5,
        help="train steps run under the profiler, after the warm-up",
    )
    parser.add_argument(
        "--profile-repeats",
        type=int,
        default=7,
        help="steps timed in turn with and without the graph checks "
        "(at least 7)",
    )
    parser.add_argument(
        "--profile-verbose",
        action="store_true",
        help="list the ops of each profile that fall in 'other'",
    )
    parser.add_argument(
        "--jit-compile",
        action="store_true",
        help="compile our train step with XLA (off by default on CPU)",
    )
    _backend.add_backend_argument(parser)
    args = parser.parse_args()
    torch.set_num_threads(args.torch_threads)
    # Rows show up as they are measured, also when piped to a file.
    sys.stdout.reconfigure(line_buffering=True)
    if not _backend.in_backend_run() and torch_geometric is None:
        sys.exit(
            "The PyG comparison needs torch-geometric (pip install -e "
            ".[bench]); `--backend` runs time our layer alone without it."
        )
    if _backend.in_backend_run():
        print(
            f"keras {keras.__version__}, backend {keras.backend.backend()}; "
            f"{args.graphs} graphs x {args.nodes} nodes x {args.edges} "
            f"edges, {args.features} input features, {args.units} units, "
            f"{args.steps} steps; median of {args.repeats} repeats"
        )
        backend_run(args)
        return

    print(
        f"keras {keras.__version__}, tensorflow {tf.__version__}, "
        f"torch {torch.__version__} ({args.torch_threads} threads), "
        f"torch_geometric {torch_geometric.__version__}; "
        f"{os.cpu_count()} CPUs; XLA {'on' if args.jit_compile else 'off'}"
    )
    if args.profile_only:
        profile(args)
        return
    print(
        f"{args.graphs} graphs x {args.nodes} nodes x {args.edges} edges, "
        f"{args.features} input features, {args.units} units, "
        f"{args.steps} steps; Adam train step on MSE; "
        f"median of {args.repeats} round-robin repeats"
    )
    times = compare(args, num_edge_types=1, reverse=False)
    print_comparison(
        "One edge type, no reverse edges (PyG GatedGraphConv's math)", times
    )
    times = compare(args, num_edge_types=4, reverse=True)
    print_comparison(
        "Four edge types + reverse edges (8 transforms; no PyG built-in)",
        times,
    )
    if args.profile:
        profile(args)
    if args.max_nodes >= 1000:
        scaling(args)


if __name__ == "__main__":
    main()
