"""`tf.distribute.MultiWorkerMirroredStrategy` that Keras 3 `fit` can use."""

import tensorflow as tf


class MultiWorkerMirroredStrategy(tf.distribute.MultiWorkerMirroredStrategy):
    """`tf.distribute.MultiWorkerMirroredStrategy` for Keras 3 `fit`.

    A drop-in replacement (same arguments, same behavior) that lets Keras 3's
    `Model.fit`, `evaluate` and `train_on_batch` run across workers, with
    their callbacks (keras-team/keras#20585).

    Why it is needed: Keras 3's TensorFlow trainer calls
    `Strategy.reduce` in two ways it only supports on one worker, where
    `MirroredStrategy` reduces with local ops; with more than one worker
    the reduce is a collective op and both fail:

    1. Before the first step, `_maybe_symbolic_build` (in `fit` and
       `evaluate` of a model created in a strategy scope) passes the whole
       first distributed batch, a structure such as `(x, y)` of `PerReplica`
       values, to `strategy.reduce("MEAN", batch, axis=None)`.
       `Strategy.reduce` takes a single tensor or `DistributedValues`; the
       collective reduce converts its argument to one tensor: "Attempt to
       convert a value (PerReplica: ...) with an unsupported type".
    2. After each step, `reduce_per_replica` averages the logs (the loss and
       metric results, scalars on each replica) with
       `strategy.reduce("MEAN", value, axis=0)`, which sums each replica's
       value over its axis 0 first: "Invalid reduction dimension 0 for input
       with 0 dimensions".

    This strategy's `reduce` accepts a structure and reduces each of its
    values (Keras only reads the shapes and dtypes of the result, to build
    the metrics and the optimizer), and reduces a scalar given with an
    `axis` across the replicas, the mean over replicas Keras means by it.

    Integer inputs (token ids, child indices, edges) keep their dtype and
    shape through that reduce; their values, an integer mean over workers,
    are only used for those shapes. Boolean inputs cannot be all-reduced by
    TensorFlow's collectives: feed masks as int32, as `kr.trees` and
    `kr.graphs` do by default.

    Use it like `tf.distribute.MultiWorkerMirroredStrategy`: set `TF_CONFIG`
    on every worker, create the strategy first thing in every worker, then
    build and compile the model in its scope and call `fit` on every worker
    with the same global batch size. See
    `docs/guides/distributed_training.md`.

    Args:
        cluster_resolver: Optional `tf.distribute.cluster_resolver`; `None`
            (default) reads `TF_CONFIG`.
        communication_options: Optional
            `tf.distribute.experimental.CommunicationOptions`.

    Example:

    ```python
    # On each worker, with TF_CONFIG naming all workers and this one's index:
    strategy = kr.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        model = build_model()
        model.compile(optimizer="sgd", loss="mse")
    model.fit(dataset, epochs=3, callbacks=[...])
    ```
    """

    def reduce(self, reduce_op, value, axis):
        """Reduces `value` across replicas, or each value of a structure.

        Like `tf.distribute.Strategy.reduce`, but `value` may also be a
        nested structure (tuple, list or dict) of tensors and
        `DistributedValues`, and a scalar `value` given an `axis` is reduced
        across replicas, as Keras 3's trainer needs.

        Args:
            reduce_op: A `tf.distribute.ReduceOp` or its name, `"SUM"` or
                `"MEAN"`.
            value: A `DistributedValues`, a tensor, or a nested structure of
                them.
            axis: As in `tf.distribute.Strategy.reduce`.

        Returns:
            A tensor, or the structure of `value` with a tensor for each of
            its values.
        """
        reduce = super().reduce
        if tf.nest.is_nested(value) and not isinstance(
            value, tf.distribute.DistributedValues
        ):
            return tf.nest.map_structure(
                lambda item: self.reduce(reduce_op, item, axis), value
            )
        if axis is not None and self._rank(value) == 0:
            axis = None
        return _reduce_keeping_dtype(reduce, reduce_op, value, axis)

    def _rank(self, value):
        if isinstance(value, tf.distribute.DistributedValues):
            value = self.experimental_local_results(value)[0]
        shape = getattr(value, "shape", None)
        return None if shape is None else shape.rank


def _reduce_keeping_dtype(reduce, reduce_op, value, axis):
    reduced = reduce(reduce_op, value, axis)
    dtype = getattr(value, "dtype", None)
    if dtype is not None and reduced.dtype != dtype:
        # A "MEAN" divides integers into floats.
        reduced = tf.cast(reduced, dtype)
    return reduced
