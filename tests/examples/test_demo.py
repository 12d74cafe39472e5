"""`examples/demo.py` (`python3 dev.py demo`): every model learns, and the
log is short: one line per epoch, no progress bars."""

import io
import os
import re
import subprocess
import sys

import keras_tuner
import numpy as np
import pytest

import keras_recurrent as kr
from tests.examples import EXAMPLES
from tests.examples import load_example

ROOT = EXAMPLES.parent
MAX_LINES = 90


@pytest.mark.slow
def test_demo_models_learn_and_print_one_line_per_epoch(tmp_path):
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "demo.py"), "--workdir", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={
            **os.environ,
            "KERAS_BACKEND": "tensorflow",
            "PYTHONPATH": str(ROOT),
            "TF_CPP_MIN_LOG_LEVEL": "3",
        },
        timeout=1800,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    check_demo_output(result.stdout)


def check_demo_output(output):
    """Asserts what the demo's standard output must show."""
    lines = output.splitlines()
    assert len(lines) <= MAX_LINES, output
    # No progress bar: no carriage returns, no terminal escapes, no bars.
    assert not re.search("[\r\x1b\u2501]", output), output[-3000:]
    assert len(re.findall(r"^  epoch \d+/10: loss ", output, re.M)) == 20
    # Each trial's epoch lines name its cell type.
    trial_epochs = re.findall(
        r"^  trial \((\w+)\) epoch \d+/10: ", output, re.M
    )
    assert len(trial_epochs) == 30
    assert set(trial_epochs) <= set(kr.tuning.SequenceHyperModel.CELL_TYPES)

    baseline = float(re.search(r"baseline MSE (\d\.\d+)", output).group(1))
    assert 0.15 < baseline < 0.19
    for name in ("peephole_lstm", "coupled_lstm"):
        match = re.search(
            rf"^{name}: test MSE (\d\.\d+), learned \((\d+) times below",
            output,
            re.M,
        )
        assert match, output
        assert float(match.group(1)) < baseline / 10
    trials = re.findall(r"^trial \d+: .* val_loss=(\d\.\d+)", output, re.M)
    assert len(trials) == 3, output
    assert max(float(score) for score in trials) < baseline / 10

    # The served predictions are the Keras model's.
    served = re.findall(
        r"^\| \d \| \d+ \| \S+ \| \S+ \| \S+ \| (\S+) \|$", output, re.M
    )
    assert len(served) == 5, output
    assert max(float(diff) for diff in served) < 1e-4


def test_trial_epoch_lines_name_the_cell_type():
    demo = load_example("demo")
    hp = keras_tuner.HyperParameters()
    hp.Fixed("cell_type", "greff_nig")
    hp.Fixed("units", 2)
    hypermodel = demo.ClippedSequenceHyperModel((3, 2), 1)
    model = hypermodel.build(hp)
    stream = io.StringIO()
    x = np.zeros((4, 3, 2), "float32")
    hypermodel.fit(
        hp,
        model,
        x,
        np.zeros((4, 1), "float32"),
        epochs=2,
        verbose=0,
        callbacks=[demo.EpochLine(stream=stream)],
    )
    lines = stream.getvalue().splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "  trial (greff_nig) epoch 1/2",
        "  trial (greff_nig) epoch 2/2",
    ]
