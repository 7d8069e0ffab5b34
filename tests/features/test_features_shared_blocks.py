"""Fast paths of the shared block map, reuse distance and PPM against the reference (featref.py) and against
the straightforward formulations:

* the engine's shared block map (features/fast/blocks.py): dense ids in first-touch order, pages, growth;
* footprint and reuse distance reading dense ids; reuse's live-byte map plus Fenwick tree over groups of
  64 positions (group boundaries, compactions);
* PPM keeping only the stored orders (features/branch.py: _branch_kernel_stored), the rare sum over
  descendants for unseen contexts, and the switch to the full kernel (_fill_orders);
* the warp views on traces of many short threads (the union of bytes and sectors is tested in
  test_features_warp.py).
"""

import numpy as np
import pytest
from featref import footprint, ppm, records, reuse, warp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.trace_schema import Op
from features import BranchAnalyzer, FeatureEngine, FootprintAnalyzer, ReuseDistanceAnalyzer
from features.branch import _fill_orders, stored_orders
from features.fast.blocks import BlockMap
from profiler.trace import TraceChunk

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _mem_trace(seed, n, nblocks, p_store=0.3, p_other=0.2, tids=False):
    """Loads and stores over ``nblocks`` 64-byte blocks (some accesses straddle two blocks), mixed with
    other records; pcs 1..6."""
    rng = np.random.default_rng(seed)
    kind = rng.random(n)
    op = np.where(kind < p_other, Op.INT_ALU, np.where(kind < p_other + p_store, Op.STORE, Op.LOAD)).astype(np.uint8)
    blk = rng.integers(0, nblocks, size=n)
    off = rng.choice([0, 8, 60], size=n, p=[0.6, 0.3, 0.1])
    size = rng.choice([4, 8, 16], size=n).astype(np.int32)
    mem = (op == Op.LOAD) | (op == Op.STORE)
    addr = np.where(mem, blk * 64 + off + (1 << 20), 0).astype(np.int64)
    size = np.where(mem, size, 0).astype(np.int32)
    pc = rng.integers(1, 7, size=n)
    tid = (np.arange(n) // 5) if tids else np.full(n, -1)
    return TraceChunk.from_columns(pc=pc, op=op, addr=addr, size=size, tid=tid)


def _blocks_ref(recs):
    """Dense ids of every block reference in first-touch order, and the set of pages, with a dict."""
    ids, seen, pages = [], {}, set()
    for r in recs:
        if r["op"] in (Op.LOAD, Op.STORE):
            for b in range(r["addr"] >> 6, ((r["addr"] + r["size"] - 1) >> 6) + 1):
                ids.append(seen.setdefault(b, len(seen)))
                pages.add(b >> 6)
    return ids, len(seen), len(pages)


# --------------------------------------------------------------------------------------------- block map


@settings(max_examples=40, **SETTINGS)
@given(st.integers(0, 2**31), st.integers(1, 3000), st.sampled_from([3, 40, 700, 5000]),
       st.sampled_from([1, 7, 333, None]))
def test_block_map_ids_match_a_dict(seed, n, nblocks, chunk_records):
    """Ids are dense, in first-touch order, the same however the trace is cut; n_before/n_after count the
    blocks; pages are counted; tables grow past their first 512 entries (nblocks 700, 5000)."""
    chunk = _mem_trace(seed, n, nblocks)
    want_ids, want_blocks, want_pages = _blocks_ref(records(chunk))
    bm = BlockMap()
    got = []
    for c in (chunk.split(chunk_records) if chunk_records else [chunk]):
        before = bm.n_blocks
        refs = bm.map(c)
        assert refs.n_before == before and refs.n_after == bm.n_blocks
        assert refs.off[0] == 0 and refs.off.shape[0] == refs.rec.shape[0] + 1
        mem = np.flatnonzero((c.op == Op.LOAD) | (c.op == Op.STORE))
        assert refs.rec.tolist() == mem.tolist()
        got.extend(refs.ids.tolist())
    assert got == want_ids
    assert (bm.n_blocks, bm.n_pages) == (want_blocks, want_pages)


def test_block_map_worked_example():
    """Blocks 5, 5, 7 (an access straddling 7 and 8), 5 (a store), 9 -> ids 0, 0, 1, 2, 0, 3."""
    chunk = TraceChunk.from_columns(pc=[1, 1, 2, 3, 1], op=[Op.LOAD, Op.LOAD, Op.LOAD, Op.STORE, Op.LOAD],
                                    addr=[5 * 64, 5 * 64 + 8, 7 * 64 + 60, 5 * 64, 9 * 64], size=[8, 8, 8, 4, 8])
    refs = BlockMap().map(chunk)
    assert refs.ids.tolist() == [0, 0, 1, 2, 0, 3]
    assert refs.off.tolist() == [0, 1, 2, 4, 5, 6]
    assert refs.rec.tolist() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("chunk_records", [None, 501])
def test_shared_map_equals_private_maps(chunk_records):
    """Footprint and reuse fed by the engine's one map give what they give on their own (private maps)."""
    chunk = _mem_trace(11, 6000, 1500)
    e = FeatureEngine(["footprint", "reuse"])
    fp, ru = FootprintAnalyzer(), ReuseDistanceAnalyzer()
    for c in (chunk.split(chunk_records) if chunk_records else [chunk]):
        e.consume(c)
        fp.consume(c)
        ru.consume(c)
    assert e.analyzers[0].blockmap is e.analyzers[1].blockmap is e.blockmap
    alone = {**fp.result(), **ru.result()}
    got = e.result()
    assert {k: float(got[k]) for k in alone} == alone
    want = {**footprint(records(chunk))[0], **reuse(records(chunk))}
    assert alone == pytest.approx(want, rel=1e-12, abs=0)
    assert alone["mica_dataBlocks"] == want["mica_dataBlocks"] and alone["mica_dataPages"] == want["mica_dataPages"]


def test_analyzer_fed_before_the_engine_keeps_its_own_map():
    chunk = _mem_trace(4, 800, 90)
    first, rest = chunk.slice(0, 300), chunk.slice(300, 800)
    fp = FootprintAnalyzer()
    fp.consume(first)
    e = FeatureEngine([fp, "reuse"])
    assert fp.blockmap is not e.blockmap
    e.consume(rest)
    assert fp.result()["mica_dataBlocks"] == footprint(records(chunk))[0]["mica_dataBlocks"]
    assert e.result()["mica_loadBlockRefs"] == reuse(records(rest))["mica_loadBlockRefs"]


# --------------------------------------------------------------------------------------------- reuse distance


@settings(max_examples=25, **SETTINGS)
@given(st.integers(0, 2**31), st.integers(1, 5000), st.sampled_from([2, 30, 64, 65, 300, 3000]),
       st.sampled_from([1, 13, 640, None]))
def test_reuse_groups_and_compaction_match_the_lru_stack(seed, n, nblocks, chunk_records):
    """Distances within and across groups of 64 positions, past several compactions (> 4096 references),
    with stores (not references) touching blocks first, against the literal LRU stack."""
    chunk = _mem_trace(seed, n, nblocks)
    ru = ReuseDistanceAnalyzer()
    for c in (chunk.split(chunk_records) if chunk_records else [chunk]):
        ru.consume(c)
    got = ru.result()
    want = reuse(records(chunk))
    assert got["mica_loadBlockRefs"] == want["mica_loadBlockRefs"]
    refs = want["mica_loadBlockRefs"]
    for k in range(19):  # counts exactly
        assert round(got[f"mica_reuse_b{k}"] * refs) == round(want[f"mica_reuse_b{k}"] * refs), k
    assert got == pytest.approx(want, rel=1e-12, abs=0)


def test_reuse_distance_exactly_at_group_edges():
    """A sweep over B blocks repeated: every re-reference has distance B - 1, for B around the group
    size (63, 64, 65) and around bucket edges (129 -> 128: bucket 7; 257 -> 256: bucket 8)."""
    for nb, bucket in ((63, 5), (64, 5), (65, 6), (129, 7), (257, 8)):
        n = nb * 40
        chunk = TraceChunk.from_columns(pc=np.ones(n, np.int64), op=np.full(n, Op.LOAD),
                                        addr=(np.arange(n) % nb) * 64, size=np.full(n, 8))
        got = ReuseDistanceAnalyzer()
        got.consume(chunk)
        r = got.result()
        assert r["mica_reuse_cold"] == nb / n
        assert r[f"mica_reuse_b{bucket}"] == (n - nb) / n, nb


# --------------------------------------------------------------------------------------------- PPM


def test_stored_orders_cover_every_order_within_four():
    for hs in [(4, 8, 12), (0,), (12,), (0, 20), (3,), (5,), (1, 2, 3, 9), (7, 19)]:
        s = stored_orders(hs).tolist()
        assert set(hs) <= set(s) and s == sorted(set(s)) and max(s) == max(hs)
        for j in range(max(hs) + 1):
            assert min(h for h in s if h >= j) - j <= 4, (hs, j)
    assert stored_orders((4, 8, 12)).tolist() == [4, 8, 12]
    assert stored_orders((12,)).tolist() == [2, 7, 12]


def _branches(seed, n, npc, p_taken):
    rng = np.random.default_rng(seed)
    pcs = rng.integers(1, npc + 1, size=n)
    taken = (rng.random(n) < p_taken).astype(np.uint8)
    loop = pcs == 1  # a loop branch: taken 7 times in 8
    taken[loop] = (np.arange(int(loop.sum())) % 8 != 7).astype(np.uint8)
    return TraceChunk.from_columns(pc=pcs, op=np.full(n, Op.BRANCH), taken=taken)


@settings(max_examples=40, **SETTINGS)
@given(st.integers(0, 2**31), st.integers(0, 700), st.integers(1, 5), st.sampled_from([0.1, 0.5, 0.9]),
       st.sampled_from([(4, 8, 12), (12,), (0, 11), (2, 9), (1, 7, 13), (6,)]), st.sampled_from([1, 9, None]),
       st.sampled_from([None, 0, 1, 150]))
def test_ppm_stored_orders_and_switch_match_reference(seed, n, npc, p_taken, histories, chunk_records, full_after):
    """Stored orders with fillers (gaps > 5), unseen contexts summed from descendants, and the switch to
    the full kernel after ``full_after`` branches (None: never; 0: from the start) at any chunk boundary."""
    chunk = _branches(seed, n, npc, p_taken)
    a = BranchAnalyzer(histories)
    if full_after is not None:
        a.full_after = full_after
    for c in (chunk.split(chunk_records) if chunk_records and n else [chunk]):
        a.consume(c)
    want = ppm(records(chunk), tuple(sorted(histories)))
    got = a.result()
    for name, v in want.items():
        assert got[name] == v, name


@pytest.mark.parametrize("histories", [(4, 8, 12), (3, 10), (12,)])
def test_filled_tables_equal_the_full_kernel_tables(histories):
    """After the stored-order kernel, _fill_orders gives every context the counter (and seen state) the full
    kernel gives it when it runs from the start: the tables are equal entry by entry."""
    chunk = _branches(5, 5000, 4, 0.3)
    stored = BranchAnalyzer(histories)
    stored.consume(chunk)
    full = BranchAnalyzer(histories)
    full.full_after = 0
    full.consume(chunk)
    assert stored.stored_only and not full.stored_only
    rows = 2 + 2 * int(stored.state[0])
    assert not np.array_equal(stored.tables[:rows], full.tables[:rows])  # shorter orders not kept
    _fill_orders(stored.tables, rows, stored.stored, stored.maxh)
    assert np.array_equal(stored.tables[:rows], full.tables[:rows])
    assert np.array_equal(stored.miss, full.miss)


# --------------------------------------------------------------------------------------------- warp


@settings(max_examples=30, **SETTINGS)
@given(st.integers(0, 2**31), st.integers(0, 3000), st.sampled_from([3, 200, 5000]), st.sampled_from([1, 11, None]))
def test_warp_matches_reference(seed, n, nblocks, chunk_records):
    chunk = _mem_trace(seed, n, nblocks, tids=True)
    e = FeatureEngine(["warp"])
    for c in (chunk.split(chunk_records) if chunk_records and n else [chunk]):
        e.consume(c)
    got = e.result()
    want = warp(records(chunk))
    for name, v in want.items():
        assert got[name] == pytest.approx(v, rel=1e-12, abs=0), name


@pytest.mark.parametrize("chunk_records", [None, 1, 50])
def test_block_map_wide_accesses_grow_the_id_buffer_and_tables(chunk_records):
    """Every record a wide access (up to 70 blocks, several pages): more block references than records
    (the id buffer grows mid-chunk) and hash tables grown from inside one record's blocks."""
    rng = np.random.default_rng(9)
    n = 300
    addr = rng.integers(0, 1 << 22, size=n).astype(np.int64)
    size = rng.choice([64, 130, 4500], size=n).astype(np.int32)
    chunk = TraceChunk.from_columns(pc=rng.integers(1, 4, size=n), op=rng.choice([Op.LOAD, Op.STORE], size=n),
                                    addr=addr, size=size)
    want_ids, want_blocks, want_pages = _blocks_ref(records(chunk))
    assert len(want_ids) > 3 * n
    bm = BlockMap()
    got = []
    for c in (chunk.split(chunk_records) if chunk_records else [chunk]):
        got.extend(bm.map(c).ids.tolist())
    assert got == want_ids and (bm.n_blocks, bm.n_pages) == (want_blocks, want_pages)
    e = FeatureEngine(["footprint", "reuse"])
    for c in (chunk.split(chunk_records) if chunk_records else [chunk]):
        e.consume(c)
    want = {**footprint(records(chunk))[0], **reuse(records(chunk))}
    got_r = e.result()
    assert {k: float(got_r[k]) for k in want} == pytest.approx(want, rel=1e-12, abs=0)
