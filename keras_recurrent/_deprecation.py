"""Public names that moved, kept at their old place for one release."""

import importlib
import warnings

from keras_recurrent._lazy import no_attribute


def moved_getattr(old_module, moved):
    """Returns a module `__getattr__` that serves names from their new home.

    Each use of an old name warns with a `DeprecationWarning` naming the new
    one, then returns the very object found there (so `isinstance` and the
    registered serialization names are unchanged).

    Args:
        old_module: The `__name__` of the module the names were in.
        moved: A dict mapping each old name to `(new_module, new_name)`,
            e.g. `("keras_recurrent.callbacks", "ResetStatesCallback")`.

    Returns:
        A `__getattr__(name)` for the old module's namespace (PEP 562).
    """

    def moved_attribute(name):
        if name not in moved:
            raise no_attribute(old_module, name)
        new_module, new_name = moved[name]
        warnings.warn(
            f"`{old_module}.{name}` moved to `{new_module}.{new_name}`; the "
            "old name will be removed in the next release.",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(new_module), new_name)

    return moved_attribute
