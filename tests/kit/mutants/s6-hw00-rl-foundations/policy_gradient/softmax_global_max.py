"""softmax subtracts the maximum of the whole array (z.max(), no axis) and normalises per row: right for one vector,
but in a batch a row whose logits lie far below the global maximum (logits −1000 next to a row of +1000) underflows
to exp = 0 and gives 0/0 = NaN. Breaks softmax; rejected by «softmax численно устойчив …», which now also takes a
batch [2, 3] with large logits in every row."""
BREAKS = "softmax"
NAMED_BY = ["Один максимум всего массива"]  # the hint that names this mistake in the first block
import numpy as np


def softmax(z):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z.max())  # the mistake: the global max, not the max of each row
    return e / e.sum(axis=-1, keepdims=True)
