"""The token vocabulary of ListOps."""

# 0 pads; 1 is the label of the inner nodes of `listops_binary_tree`, which
# carry no token; then the ten digits, the four operators and the closing
# bracket.
LISTOPS_VOCABULARY = {
    None: 1,
    **{str(digit): digit + 2 for digit in range(10)},
    "[MIN": 12,
    "[MAX": 13,
    "[MED": 14,
    "[SM": 15,
    "]": 16,
}
"""Dict from ListOps token to integer id, for `kr.trees.encode_tree`.

Id 0 is padding, id 1 the label `None` of the inner nodes that
`kr.datasets.listops_binary_tree` adds, ids 2 to 11 the digits `"0"` to
`"9"`, then `"[MIN"`, `"[MAX"`, `"[MED"`, `"[SM"` (12 to 15) and the closing
bracket `"]"` (16). An embedding needs `input_dim=17`.
"""
