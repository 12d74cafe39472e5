"""The hooks that `TreeLSTMBase` declares for its subclasses."""

import numpy as np
import pytest

import keras_recurrent as kr
from keras_recurrent.layers._tree_lstm import TreeLSTMBase


class _NoHooks(TreeLSTMBase):
    pass


class _KernelOnly(TreeLSTMBase):
    def _recurrent_kernel_shape(self, units):
        return (units, 4 * units)


SHAPES = [(2, 3, 5), (2, 3, 2), (2, 3)]


def test_a_subclass_without_the_kernel_shape_fails_to_build():
    with pytest.raises(NotImplementedError, match="_recurrent_kernel_shape"):
        _NoHooks(4).build(SHAPES)


def test_a_subclass_without_the_update_fails_to_run():
    trees = kr.trees.encode_trees(["(1 2 3)", "(4 5)"])
    node_inputs = np.ones((*trees["node_mask"].shape, 5), "float32")
    layer = _KernelOnly(4)
    layer.build(SHAPES)
    assert tuple(layer.recurrent_kernel.shape) == (4, 16)
    with pytest.raises(NotImplementedError, match="_update"):
        layer([node_inputs, trees["children"], trees["node_mask"]])
