"""Tests of `examples/char_lm.py` (GF-RNN character-level language model)."""

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

from tests.examples import load_example

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "examples" / "char_lm.py"
TEXT_FILE = REPO_ROOT.parent / "shared" / "data" / "tinyshakespeare.txt"


@pytest.fixture(scope="module")
def char_lm():
    return load_example("char_lm")


def _numpy_bpc(logits, targets):
    """-mean(log2 softmax(logits)[target]), one prediction at a time."""
    logits = np.asarray(logits, dtype="float64").reshape(-1, logits.shape[-1])
    bits = []
    for row, target in zip(logits, np.asarray(targets).reshape(-1)):
        probs = np.exp(row - row.max())
        probs /= probs.sum()
        bits.append(-math.log2(probs[target]))
    return float(np.mean(bits))


def test_bits_per_char_matches_numpy(char_lm):
    rng = np.random.default_rng(0)
    logits = rng.normal(scale=3.0, size=(4, 7, 11)).astype("float32")
    targets = rng.integers(0, 11, size=(4, 7))
    np.testing.assert_allclose(
        char_lm.bits_per_char(logits, targets),
        _numpy_bpc(logits, targets),
        rtol=1e-10,
    )
    # Uniform predictions cost log2(vocab) bits; a sure, right one costs 0.
    assert char_lm.bits_per_char(np.zeros((3, 8)), [0, 5, 7]) == pytest.approx(
        3.0
    )
    sure = np.array([[0.0, 200.0, 0.0]])
    assert char_lm.bits_per_char(sure, [1]) == pytest.approx(0.0, abs=1e-12)
    # Nats to bits: the Keras loss divided by ln 2.
    nats = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(
        targets, logits
    )
    np.testing.assert_allclose(
        float(keras.ops.convert_to_numpy(nats)) / math.log(2.0),
        _numpy_bpc(logits, targets),
        rtol=1e-5,
    )


def test_vocabulary_and_encoding(char_lm):
    text = "abca cb!"
    vocabulary = char_lm.build_vocabulary(text)
    assert vocabulary == [" ", "!", "a", "b", "c"]
    ids = char_lm.encode(text, vocabulary)
    assert "".join(vocabulary[i] for i in ids) == text
    assert ids.dtype == np.int32


def test_split_is_90_5_5_by_position(char_lm):
    ids = np.arange(1000)
    train, valid, test = char_lm.split_ids(ids)
    assert (len(train), len(valid), len(test)) == (900, 50, 50)
    np.testing.assert_array_equal(np.concatenate([train, valid, test]), ids)
    train, valid, test = char_lm.split_ids(np.arange(1001))
    assert len(train) + len(valid) + len(test) == 1001
    assert train[-1] + 1 == valid[0] and valid[-1] + 1 == test[0]
    with pytest.raises(ValueError, match="fractions"):
        char_lm.split_ids(ids, (0.5, 0.5, 0.5))


def test_consecutive_windows_cover_every_target_once(char_lm):
    ids = np.arange(23) * 3  # distinct values; the next one is +3
    x, y, tail = char_lm.consecutive_windows(ids, 5)
    assert x.shape == y.shape == (4, 5)
    np.testing.assert_array_equal(y, x + 3)
    np.testing.assert_array_equal(x.reshape(-1), ids[:20])
    np.testing.assert_array_equal(tail[0], ids[20:22])
    np.testing.assert_array_equal(tail[1], ids[21:23])
    targets = np.concatenate([y.reshape(-1), tail[1]])
    np.testing.assert_array_equal(targets, ids[1:])
    # No leftover when the windows fit exactly.
    x, y, tail = char_lm.consecutive_windows(np.arange(21), 5)
    assert tail is None and x.shape == (4, 5)
    # With an offset, the tiling starts there.
    x, y, _ = char_lm.consecutive_windows(ids, 5, offset=2)
    np.testing.assert_array_equal(x[:, 0], ids[[2, 7, 12, 17]])


def test_training_windows(char_lm):
    ids = np.arange(1001)
    rng = np.random.default_rng(0)
    x, y = char_lm.random_windows(ids, 10, 500, rng)
    assert x.shape == y.shape == (500, 10)
    np.testing.assert_array_equal(y, x + 1)
    np.testing.assert_array_equal(np.diff(x, axis=1), 1)  # contiguous
    assert x.min() >= 0 and y.max() <= 1000
    assert len(np.unique(x[:, 0])) > 300  # random starts
    x, y = char_lm.training_windows(ids, 10, "random", rng)
    assert x.shape == (100, 10)
    x, y = char_lm.training_windows(ids, 10, "consecutive", rng)
    np.testing.assert_array_equal(y, x + 1)
    starts = np.sort(x[:, 0])
    np.testing.assert_array_equal(np.diff(starts), 10)  # tiling, shuffled
    assert starts[0] < 10 and len(x) >= 99
    with pytest.raises(ValueError, match="windows"):
        char_lm.training_windows(ids, 10, "overlapping", rng)
    with pytest.raises(ValueError, match="seq_len"):
        char_lm.random_windows(ids[:5], 10, 3, rng)


def test_evaluate_bpc_matches_per_window_numpy(char_lm):
    keras.utils.set_random_seed(1)
    vocab = 7
    model = char_lm.build_model("single", vocab, 5, embed_dim=4)
    dense = model.get_layer("logits")
    kernel, bias = dense.get_weights()
    rng = np.random.default_rng(0)
    dense.set_weights([rng.normal(size=kernel.shape) * 2, bias])
    ids = rng.integers(0, vocab, size=38).astype("int32")
    seq_len = 8
    logits, targets = [], []
    for start in range(0, len(ids) - 1, seq_len):  # 0, 8, ..., 32 (tail 5)
        window = ids[start : min(start + seq_len, len(ids) - 1)]
        out = keras.ops.convert_to_numpy(model(window[None]))[0]
        logits.append(out)
        targets.append(ids[start + 1 : start + 1 + len(window)])
    expected = _numpy_bpc(np.concatenate(logits), np.concatenate(targets))
    got = char_lm.evaluate_bpc(model, ids, seq_len, batch_size=3)
    np.testing.assert_allclose(got, expected, rtol=1e-5)


@pytest.mark.parametrize(
    "kind, cell",
    [
        ("single", "lstm"),
        ("stacked", "lstm"),
        ("gf_fixed", "lstm"),
        ("gf_gated", "lstm"),
        ("gf_gated", "gru"),
    ],
)
def test_match_width_lands_within_tolerance(char_lm, kind, cell):
    budget, vocab = 60_000, 65
    kwargs = {"cell": cell, "num_layers": 3, "embed_dim": 16}
    width, params = char_lm.match_width(kind, vocab, budget, **kwargs)
    model = char_lm.build_model(kind, vocab, width, **kwargs)
    assert model.count_params() == params
    assert abs(params / budget - 1) < 0.015
    # No other width is nearer to the budget (the count grows with width).
    for other in (width - 1, width + 1):
        count = char_lm.count_params(kind, vocab, other, **kwargs)
        assert abs(count - budget) >= abs(params - budget)
    if kind != "single":
        layer = model.get_layer("rnn")
        assert layer.cell.layer_units == [width] * 3
        assert layer.cell.feedback == char_lm.FEEDBACK[kind]


def test_format_table_and_combine(char_lm, tmp_path, capsys):
    def result(kind, bpc):
        return {
            "model": kind,
            "cell": "lstm",
            "layers": 3,
            "width": 10,
            "params": 1234,
            "valid_bpc": bpc,
            "test_bpc": bpc + 0.01,
            "best_epoch": 2,
            "epochs": 2,
            "train_seconds": 5.0,
        }

    config = {"text": "t", "seq_len": 8, "params": 1000, "epochs": 2}
    for name, kind, bpc in (("a", "gf_gated", 1.5), ("b", "single", 2.25)):
        with open(tmp_path / f"{name}.json", "w") as f:
            json.dump({"config": config, "results": [result(kind, bpc)]}, f)
    results = char_lm.main(
        ["--combine", str(tmp_path / "a.json"), str(tmp_path / "b.json")]
    )
    assert [r["model"] for r in results] == ["gf_gated", "single"]
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[2].startswith("| single | lstm | 3 x 10 | 1,234 | 2.2500")
    assert lines[3].startswith("| gf_gated | lstm | 3 x 10 | 1,234 | 1.5000")


@pytest.mark.skipif(not TEXT_FILE.is_file(), reason="no tinyshakespeare.txt")
def test_smoke_training_lowers_the_loss(char_lm, tmp_path):
    out = tmp_path / "run.json"
    report = char_lm.main(
        [
            "--smoke",
            "--models",
            "gf_gated",
            "--text-file",
            str(TEXT_FILE),
            "--json-out",
            str(out),
        ],
        log=lambda *args: None,
    )
    with open(out) as f:
        assert json.load(f)["results"] == json.loads(
            json.dumps(report["results"])
        )
    config = report["config"]
    assert config["chars"] == 20_000
    assert config["split_sizes"] == [18_000, 1_000, 1_000]
    (result,) = report["results"]
    vocab = config["vocab_size"]
    # Untrained: about uniform; trained: clearly below it.
    assert abs(result["initial_valid_bpc"] - math.log2(vocab)) < 0.3
    assert result["valid_bpc"] < result["initial_valid_bpc"] - 0.5
    train_bpc = result["history"]["train_bpc"]
    assert train_bpc[-1] < train_bpc[0]
    assert abs(result["params"] / 6_000 - 1) < 0.02
    sample = report["sample"]["text"]
    assert sample.startswith("ROMEO:\n") and len(sample) == 7 + 40


@pytest.mark.slow
@pytest.mark.skipif(not TEXT_FILE.is_file(), reason="no tinyshakespeare.txt")
@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch not installed"
)
def test_smoke_run_on_torch_without_tensorflow(tmp_path):
    # The script must not need TensorFlow on another backend.
    code = (
        "import sys, runpy\n"
        "sys.modules['tensorflow'] = None\n"
        "sys.modules['tensorflow_datasets'] = None\n"
        f"sys.argv = ['char_lm.py', '--smoke', '--models', 'single,gf_gated',"
        f" '--json-out', {str(tmp_path / 'run.json')!r}]\n"
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n"
    )
    env = {**os.environ, "KERAS_BACKEND": "torch"}
    subprocess.run(
        [sys.executable, "-c", code], check=True, env=env, cwd=tmp_path
    )
    with open(tmp_path / "run.json") as f:
        report = json.load(f)
    assert report["config"]["backend"] == "torch"
    for result in report["results"]:
        assert result["valid_bpc"] < result["initial_valid_bpc"] - 0.5
