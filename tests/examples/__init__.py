import importlib.util
import pathlib
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def load_example(name):
    """The module of `examples/{name}.py`, loaded from its path.

    `examples/` goes on `sys.path`, as when an example runs as a script, so
    that the examples' shared helpers (`_quiet_tensorflow`) import.
    """
    if str(EXAMPLES) not in sys.path:
        sys.path.append(str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(
        f"{name}_example", EXAMPLES / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
