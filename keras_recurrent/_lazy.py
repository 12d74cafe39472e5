"""Attributes of a package that are imported on first use.

The layers need only Keras (any backend); `tf.data` helpers, TFDS builders,
SavedModel export and keras-tuner search spaces need TensorFlow or
keras-tuner. Importing those lazily keeps `import keras_recurrent` working on
a JAX or PyTorch installation without TensorFlow.
"""

import importlib


def lazy_getattr(package, attributes):
    """Returns a module `__getattr__` that imports `attributes` on first use.

    Args:
        package: The `__name__` of the package the attributes belong to.
        attributes: A dict mapping each attribute's name to the module that
            defines it, relative to `package` (`".export"`); the attribute
            is that module itself when the module's last name is the
            attribute's name, else the module's attribute of that name.

    Returns:
        A `__getattr__(name)` for the package's namespace (PEP 562).
    """

    def lazy_attribute(name):
        if name not in attributes:
            raise no_attribute(package, name)
        module = importlib.import_module(attributes[name], package)
        if module.__name__.rsplit(".", 1)[-1] == name:
            return module
        return getattr(module, name)

    return lazy_attribute


def no_attribute(module, name):
    """The `AttributeError` of a module `__getattr__` for an unknown name."""
    return AttributeError(f"module {module!r} has no attribute {name!r}")
