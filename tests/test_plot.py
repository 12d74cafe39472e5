import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import keras_recurrent as kr

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _gates(seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(size=(3, 6, 3, 3)).astype("float32")


@pytest.mark.parametrize("per_time", [False, True])
def test_gate_heatmap_writes_a_png(tmp_path, per_time):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.image

    gates = _gates()
    path = tmp_path / "gates.png"
    mean = kr.plot.gate_heatmap(gates, path, per_time=per_time, title="GF")
    np.testing.assert_allclose(mean, gates.mean(axis=(0, 1)), rtol=1e-6)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


def test_gate_heatmap_mask_excludes_padded_steps(tmp_path):
    pytest.importorskip("matplotlib")
    gates = _gates(1)
    mask = np.ones((3, 6), bool)
    mask[0, 2:] = False
    mean = kr.plot.gate_heatmap(gates, tmp_path / "g.png", mask=mask)
    np.testing.assert_allclose(mean, gates[mask].mean(axis=0), rtol=1e-6)


def test_gate_heatmap_of_a_layer(tmp_path):
    pytest.importorskip("matplotlib")
    x = np.random.default_rng(2).normal(size=(2, 4, 3)).astype("float32")
    layer = kr.layers.GatedFeedbackRNN(4, num_layers=2, cell_type="gru")
    mean = kr.plot.gate_heatmap(layer.gate_values(x), tmp_path / "l.png")
    assert mean.shape == (2, 2) and np.all((mean > 0) & (mean < 1))


def test_gate_heatmap_rejects_bad_shapes(tmp_path):
    with pytest.raises(ValueError, match=r"gates.shape=\(3, 3\)"):
        kr.plot.gate_heatmap(np.ones((3, 3)), tmp_path / "x.png")
    with pytest.raises(ValueError, match=r"mask.shape=\(2,\)"):
        kr.plot.gate_heatmap(_gates(), tmp_path / "x.png", mask=np.ones(2))


def test_the_package_works_without_matplotlib(tmp_path):
    # Keras itself may import matplotlib when present; what matters is that
    # `keras_recurrent` needs it only inside `gate_heatmap`.
    code = (
        "import sys\n"
        "sys.modules['matplotlib'] = None\n"
        "import numpy as np\n"
        "import keras_recurrent as kr\n"
        "try:\n"
        "    kr.plot.gate_heatmap(np.ones((1, 1, 2, 2)), 'unused.png')\n"
        "except ImportError as error:\n"
        "    assert 'pip install keras-recurrent[plot]' in str(error), error\n"
        "    sys.exit(0)\n"
        "sys.exit('gate_heatmap ran without matplotlib')\n"
    )
    subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        cwd=tmp_path,
        # This checkout, not whichever one the environment installed.
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
