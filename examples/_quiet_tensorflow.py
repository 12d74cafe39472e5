"""Keeps TensorFlow's C++ start-up lines out of the examples' output.

TensorFlow 2.19 and later print their oneDNN and CUDA-driver notices while
their libraries load, before they read `TF_CPP_MIN_LOG_LEVEL`, and a failed
`cuInit` (a machine without a GPU driver) as an error at the first device
query, below level 3 (tensorflow/tensorflow#100442). Once running, it logs
harmless fallbacks as errors too (`oneDNN supports DT_BOOL only on platforms
with AVX-512`, at the first masked batch). Each example calls
`quiet_tensorflow()` before it imports Keras.
"""

import importlib.util
import os
import sys


def quiet_tensorflow():
    """Sets `TF_CPP_MIN_LOG_LEVEL=3` unless set, and starts TensorFlow quietly.

    Level 3 keeps TensorFlow's C++ errors off the output; real failures
    still raise Python exceptions with their message. Set the variable to
    see more (`2` for errors, `0` for everything). Unless the level is
    `"0"`, or the Keras backend is not TensorFlow, or TensorFlow is
    imported already, it imports TensorFlow and lists its devices with the
    process's standard error (file descriptor 2) sent to `/dev/null`, so the
    start-up lines never show. Python exceptions raised meanwhile still
    print, after the descriptor is back.
    Listing the physical devices leaves the runtime unconfigured, so
    logical devices can still be set up afterwards.
    """
    level = os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if (
        level == "0"
        or os.environ.get("KERAS_BACKEND", "tensorflow") != "tensorflow"
        or "tensorflow" in sys.modules
        or importlib.util.find_spec("tensorflow") is None
    ):
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            import tensorflow as tf

            tf.config.list_physical_devices()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
