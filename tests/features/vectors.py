"""The worked vectors V1, V4 and V5 of docs/features.md as traces."""

from core.trace_schema import Op
from profiler.trace import TraceChunk


def _chunk(rows):
    names = ("pc", "op", "taken", "src1", "src2", "src3", "dst", "addr", "size")
    cols = {k: [r.get(k, 0) for r in rows] for k in names}
    return TraceChunk.from_columns(**cols)


def v1():
    """Array sum, 5 iterations, N = 20."""
    rows = []
    for i in range(5):
        rows.append(dict(pc=1, op=Op.LOAD, src1=2, dst=1, addr=0x100000 + 8 * i, size=8))
        rows.append(dict(pc=2, op=Op.INT_ALU, src1=3, src2=1, dst=3))
        rows.append(dict(pc=3, op=Op.INT_ALU, src1=2, dst=2))
        rows.append(dict(pc=4, op=Op.BRANCH, src1=2, src2=4, taken=1 if i < 4 else 0))
    return _chunk(rows)


def v4():
    """Linked list of 4 nodes, N = 25."""
    nodes = [0x600000, 0x600020, 0x608000, 0x700000]
    values = [5, -3, 7, 1]
    rows = []
    for k, node in enumerate(nodes):
        rows.append(dict(pc=1, op=Op.LOAD, src1=1, dst=2, addr=node + 8, size=8))
        rows.append(dict(pc=2, op=Op.BRANCH, src1=2, taken=1 if values[k] >= 0 else 0))
        if k == 1:
            rows.append(dict(pc=3, op=Op.INT_ALU, src1=2, dst=2))
        rows.append(dict(pc=4, op=Op.INT_ALU, src1=3, src2=2, dst=3))
        rows.append(dict(pc=5, op=Op.STORE, src1=1, src2=3, addr=node + 16, size=8))
        rows.append(dict(pc=6, op=Op.LOAD, src1=1, dst=1, addr=node, size=8))
        rows.append(dict(pc=7, op=Op.BRANCH, src1=1, taken=1 if k < 3 else 0))
    return _chunk(rows)


def v5():
    """Mixed precision, one thread, N = 10."""
    rows = [
        dict(pc=1, op=Op.LOAD, src1=1, dst=2, addr=0x2000, size=8),
        dict(pc=2, op=Op.FP64_MUL, src1=2, src2=2, dst=3),
        dict(pc=3, op=Op.FP_ALU, src1=3, dst=4),
        dict(pc=4, op=Op.FP64_DIV, src1=3, src2=4, dst=5),
        dict(pc=5, op=Op.FP64_SPECIAL, src1=5, dst=6),
        dict(pc=6, op=Op.FP_SPECIAL, src1=4, dst=7),
        dict(pc=7, op=Op.INT_MUL, src1=1, dst=8),
        dict(pc=8, op=Op.STORE, src1=6, src2=8, addr=0x3000, size=4),
        dict(pc=9, op=Op.INT_ALU, src1=1, dst=1),
        dict(pc=10, op=Op.BRANCH, src1=1),
    ]
    chunk = _chunk(rows)
    chunk.tid[:] = 0
    return chunk
