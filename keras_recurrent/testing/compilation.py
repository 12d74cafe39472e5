"""Counting the programs that JAX compiles, to check compilation is bounded."""

import collections
import contextlib

import keras

_BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class CompilationCount:
    """The XLA compilations JAX ran inside a `count_jax_compilations` block.

    Attributes:
        by_function: `collections.Counter` of compilations per name of the
            compiled function (Keras' train step is `"one_train_step"` or
            `"multi_train_steps"`; small helpers such as `"convert_element_
            type"` show up too).
    """

    def __init__(self):
        self.by_function = collections.Counter()

    @property
    def total(self):
        """All compilations, of every function."""
        return sum(self.by_function.values())

    def of(self, substring):
        """Compilations of the functions whose name contains `substring`."""
        return sum(
            count
            for name, count in self.by_function.items()
            if substring in name
        )

    def __repr__(self):
        return f"CompilationCount({dict(self.by_function)})"


@contextlib.contextmanager
def count_jax_compilations():
    """Counts the XLA compilations JAX runs inside the block.

    Listens to JAX's `"/jax/core/compile/backend_compile_duration"`
    monitoring event, recorded once per program that XLA compiles (a cache
    hit records none). A `fit` on variable-size batches compiles its train
    step once per distinct batch shape: pad to a few shapes (node and edge
    budgets, length buckets) to keep the count bounded.

    Yields:
        A `CompilationCount`, filled in while the block runs.

    Raises:
        ValueError: On a Keras backend other than JAX.

    Example:

    >>> with kr.testing.count_jax_compilations() as compiles:
    ...     model.fit(dataset, epochs=1, verbose=0)
    >>> compiles.of("train_step")
    2
    """
    if keras.backend.backend() != "jax":
        raise ValueError(
            "`count_jax_compilations` counts JAX compilations and needs the "
            "JAX backend (KERAS_BACKEND=jax). Received: backend="
            f"{keras.backend.backend()!r}"
        )
    import jax.monitoring

    count = CompilationCount()

    def listener(event, duration, **kwargs):
        del duration
        if event == _BACKEND_COMPILE_EVENT:
            count.by_function[str(kwargs.get("fun_name", "?"))] += 1

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield count
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
