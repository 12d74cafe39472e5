"""The bAbI graph tasks of Li et al. (2016).

`tasks` describes each task and checks task names; `generator` writes the
stories (with the private `_stories`) as examples and padded graph tensors;
`reader` reads the paper's own files into the same tensors; `builder` is
the `"babi_graph"` TFDS builder and its config. The public names are those
of `kr.datasets`.
"""
