"""`python -m keras_recurrent.migrate OLD.h5 NEW.keras`."""

import keras
import pytest

from keras_recurrent.migrate.__main__ import main
from tests.migrate.legacy_cases import FIXTURES
from tests.migrate.legacy_cases import max_difference


def test_converts_prints_mapping_and_verifies(tmp_path, capsys):
    new = tmp_path / "bidirectional.keras"
    assert main([str(FIXTURES / "bidirectional.h5"), str(new)]) == 0
    printed = capsys.readouterr().out
    assert (
        "Bidirectional(LSTM)     keras.layers.Bidirectional(LSTM) (6 weights)"
        in printed
    )
    assert "TimeDistributed(Dense)" in printed
    assert "verified:" in printed and "14 weights" in printed
    assert max_difference(keras.saving.load_model(new), "bidirectional") < 1e-5


def test_new_file_must_be_keras(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([str(FIXTURES / "nested.h5"), str(tmp_path / "nested.h5")])
    assert "NEW must end in .keras" in capsys.readouterr().err
