import importlib.util
import pathlib

BENCHMARKS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"


def load_benchmark(name):
    """The module of `benchmarks/{name}.py`, loaded from its path."""
    spec = importlib.util.spec_from_file_location(
        f"benchmarks_{name}", BENCHMARKS / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
