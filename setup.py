"""Setup script for keras_recurrent."""

import pathlib

from setuptools import find_packages
from setuptools import setup

HERE = pathlib.Path(__file__).parent
VERSION = "0.1.0"

setup(
    name="keras-recurrent",
    version=VERSION,
    description=(
        "Recurrent layers Keras 3 does not ship: LSTM variants, gated-feedback "
        "RNNs, Tree-LSTMs and gated graph networks."
    ),
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    license_files=["LICENSE"],
    python_requires=">=3.10",
    packages=find_packages(include=["keras_recurrent", "keras_recurrent.*"]),
    install_requires=[
        "tensorflow>=2.16",
        "keras>=3",
        # The [bayesian] extra brings scipy and scikit-learn, which
        # BayesianOptimization needs.
        "keras-tuner[bayesian]>=1.4",
        # keras-tuner imports it on the TensorFlow backend; TF no longer
        # depends on it.
        "tensorboard",
        "tensorflow-datasets>=4.9",
        # tensorflow-datasets 4.9.10 imports it but only declares it for
        # Python < 3.9 (tensorflow/datasets#11212).
        "importlib_resources",
        "numpy",
    ],
    extras_require={
        "test": ["pytest>=8", "pytest-xdist>=3", "ruff>=0.6", "networkx"],
        "graphs": ["networkx"],
        "plot": ["matplotlib>=3.7"],
        # The other Keras backends (`KERAS_BACKEND=jax` or `torch`); the test
        # environment installs both, to run the layers on every backend.
        "jax": ["jax"],
        # Any torch 2 from 2.4: `python3 dev.py` installs 2.13.0 (the CPU
        # wheel), the version the test suite runs on.
        "torch": ["torch>=2.4,<3"],
        # `python3 dev.py docs`: the documentation site.
        "docs": [
            "mkdocs>=1.6",
            "mkdocs-material>=9.5",
            "mkdocstrings[python]>=0.26",
        ],
        # `model.export(path, format="onnx")` (tf2onnx on TensorFlow; onnx
        # and onnxscript for PyTorch's exporter) and `format="litert"`, and
        # the runtimes that serve them (docs/guides/export_and_serving.md).
        "export": [
            "onnx>=1.16",
            "onnxscript>=0.5",
            "onnxruntime>=1.20",
            "tf2onnx>=1.16",
            "ai-edge-litert>=1.2",
        ],
        # Benchmark-only: PyTorch Geometric comparison for the GG-NN.
        "bench": ["torch>=2.4,<3", "torch-geometric"],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
