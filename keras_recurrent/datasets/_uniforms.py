"""The block-fetched uniform draws the sequence generators share."""


class Uniforms:
    """Uniform draws in [0, 1) from `rng`, fetched in blocks for speed."""

    def __init__(self, rng):
        self._rng = rng
        self._block = []

    def next(self):
        if not self._block:
            self._block = self._rng.random(4096).tolist()[::-1]
        return self._block.pop()

    def integer(self, low, high):
        """Uniform integer in `[low, high]`."""
        return low + int(self.next() * (high - low + 1))
