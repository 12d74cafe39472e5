"""Tests of `keras_recurrent._batching`, what `kr.trees.padded_batch` and
`kr.graphs.padded_batch` share."""

import pytest
import tensorflow as tf

from keras_recurrent._batching import find_matches
from keras_recurrent._batching import padding_of
from keras_recurrent._batching import with_checked_tensors


def _is_match(value):
    return isinstance(value, dict) and "x" in value


def test_find_matches_depth_first_and_not_inside_a_match():
    inner = {"x": 1}
    outer = {"x": 2, "nested": {"x": 3}}
    structure = ({"a": [inner, 4]}, outer, "x")
    found = find_matches(structure, _is_match)
    assert len(found) == 2
    assert found[0] is inner and found[1] is outer
    assert find_matches([1, "x", (2,)], _is_match) == []


def test_padding_of_pads_matches_their_way_and_the_rest_with_zeros():
    spec = (
        {"x": tf.TensorSpec((None,), tf.int32)},
        {
            "label": tf.TensorSpec((), tf.int64),
            "name": tf.TensorSpec((), tf.string),
        },
    )
    shapes, values = padding_of(
        spec,
        _is_match,
        lambda match: (
            {"x": tf.TensorShape([7])},
            {"x": tf.constant(-1, tf.int32)},
        ),
    )
    assert shapes[0]["x"] == tf.TensorShape([7])
    assert int(values[0]["x"]) == -1
    assert shapes[1]["label"] == tf.TensorShape([])
    assert values[1]["label"].dtype == tf.int64 and int(values[1]["label"]) == 0
    assert values[1]["name"].numpy() == b""


def test_padding_of_refuses_other_specs():
    spec = (tf.RaggedTensorSpec((None, None), tf.float32),)
    with pytest.raises(ValueError, match="dense tensors .*RaggedTensorSpec"):
        padding_of(spec, _is_match, lambda match: None)


def test_with_checked_tensors_replaces_one_tensor_of_each_match():
    first = {"x": tf.constant([1, 2]), "y": tf.constant(3)}
    second = {"x": tf.constant([4]), "y": tf.constant(5)}
    element = (first, [second, tf.constant(6)])
    result = with_checked_tensors(
        element, _is_match, lambda match: (match["x"], match["x"] * 10)
    )
    assert result[0]["x"].numpy().tolist() == [10, 20]
    assert result[1][0]["x"].numpy().tolist() == [40]
    assert int(result[0]["y"]) == 3 and int(result[1][1]) == 6
    # A dataset of single structures passes a 1-tuple.
    alone = with_checked_tensors(
        (first,), _is_match, lambda match: (match["y"], match["y"] + 1)
    )
    assert int(alone["y"]) == 4 and alone["x"] is first["x"]
