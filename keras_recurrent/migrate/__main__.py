"""`python -m keras_recurrent.migrate OLD.h5 NEW.keras`.

Converts a tf.keras 2 `.h5` model to a Keras 3 `.keras` file with
`kr.migrate.load_legacy_model`, prints each layer it mapped (the file's
class, the Keras 3 class, the number of weights), saves the new file, and
verifies it by loading it back and comparing every weight.
"""

import argparse
import sys

import keras
import numpy as np

from keras_recurrent.migrate.legacy_model import convert


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m keras_recurrent.migrate",
        description=(
            "Convert a tf.keras 2 .h5 model (recurrent layers and "
            "TensorFlow Addons cells included) to a Keras 3 .keras file."
        ),
    )
    parser.add_argument("old", help="the tf.keras 2 model file (.h5)")
    parser.add_argument("new", help="the Keras 3 file to write (.keras)")
    args = parser.parse_args(argv)
    if not args.new.endswith(".keras"):
        parser.error(f"NEW must end in .keras; received: {args.new!r}")

    model, rows = convert(args.old)
    width = max([len(row[0]) for row in rows] + [5])
    legacy_width = max([len(row[1]) for row in rows] + [10])
    print(f"{args.old} -> {args.new}")
    print(f"{'layer':<{width}}  {'tf.keras 2':<{legacy_width}}  Keras 3")
    for name, legacy, new, count in rows:
        print(
            f"{name:<{width}}  {legacy:<{legacy_width}}  {new}"
            f" ({count} weights)"
        )
    model.save(args.new)

    import keras_recurrent  # noqa: F401 (registers the layers to load)

    reloaded = keras.saving.load_model(args.new, compile=False)
    expected = model.get_weights()
    found = reloaded.get_weights()
    if len(expected) != len(found) or any(
        a.shape != b.shape or not np.array_equal(a, b)
        for a, b in zip(expected, found)
    ):
        print(f"error: {args.new} reloaded with different weights")
        return 1
    print(
        f"verified: {args.new} reloads as {type(reloaded).__name__} "
        f"{reloaded.name!r} with the same {len(found)} weights"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
