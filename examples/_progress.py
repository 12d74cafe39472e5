"""One line of progress per epoch, for the examples.

Keras' `verbose=1` redraws a progress bar on every step, which fills a log
file with control characters and partial lines; `verbose=2` prints two lines
per epoch without saying how many epochs are left. The examples train with
`verbose=0` and pass `EpochLine()` as a callback instead:

    epoch 3/20: loss 0.0412, val_loss 0.0398 (4.1 s)

Import it after `quiet_tensorflow()`, like Keras itself.
"""

import sys
import time

import keras


class EpochLine(keras.callbacks.Callback):
    """Prints the epoch, its logs and its time on one line when it ends.

    Args:
        prefix: text before each line, such as the model's name.
        stream: where to print; standard output by default.
        digits: decimals of the logged values.
    """

    def __init__(self, prefix="", stream=None, digits=4):
        super().__init__()
        self.prefix = prefix
        self.stream = stream
        self.digits = digits
        self._start = None

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        seconds = time.perf_counter() - (self._start or time.perf_counter())
        total = (self.params or {}).get("epochs")
        count = f"{epoch + 1}/{total}" if total else f"{epoch + 1}"
        values = ", ".join(
            f"{name} {float(value):.{self.digits}f}"
            for name, value in (logs or {}).items()
        )
        line = f"{self.prefix}epoch {count}: {values} ({seconds:.1f} s)"
        print(line, file=self.stream or sys.stdout, flush=True)
