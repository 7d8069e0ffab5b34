"""Open-addressing hash index for Numba kernels: int64 key -> dense slot number.

A :class:`HashIndex` maps arbitrary int64 keys (block numbers, page numbers, register tokens) to dense
slots 0, 1, 2, ... in order of first insertion, so per-key values can live in plain NumPy arrays indexed
by slot. Kernels call :func:`find` / :func:`insert` on the raw arrays; they stop before the table would
pass half full and the Python side grows it (:meth:`HashIndex.ensure`) and resumes the kernel. Memory is
therefore bounded by the number of distinct keys, never by trace length.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_M1 = np.int64(-4658895280553007687)  # 0xBF58476D1CE4E5B9 (splitmix64 finaliser) as signed 64-bit
_M2 = np.int64(-7723592293110705685)  # 0x94D049BB133111EB


@njit(cache=True, nogil=True)
def slot_hash(key, mask):
    x = np.int64(key)
    x = (x ^ ((x >> 30) & 0x3FFFFFFFF)) * _M1
    x = (x ^ ((x >> 27) & 0x1FFFFFFFFF)) * _M2
    x = x ^ ((x >> 31) & 0x1FFFFFFFF)
    return x & mask


@njit(cache=True, nogil=True)
def find(keys, slots, mask, key):
    """Slot of ``key`` or -1 when absent."""
    h = slot_hash(key, mask)
    while True:
        s = slots[h]
        if s < 0:
            return -1
        if keys[h] == key:
            return s
        h = (h + 1) & mask


@njit(cache=True, nogil=True)
def insert(keys, slots, mask, key, new_slot):
    """Slot of ``key``; inserts it with ``new_slot`` when absent. Returns (slot, inserted)."""
    h = slot_hash(key, mask)
    while True:
        s = slots[h]
        if s < 0:
            keys[h] = key
            slots[h] = new_slot
            return new_slot, True
        if keys[h] == key:
            return s, False
        h = (h + 1) & mask


@njit(cache=True, nogil=True)
def _rehash(old_keys, old_slots, new_keys, new_slots, slot_map):
    """Move every entry into the new table; ``slot_map[old] = new slot`` (-1 drops the entry)."""
    mask = new_keys.shape[0] - 1
    for i in range(old_keys.shape[0]):
        s = old_slots[i]
        if s < 0:
            continue
        ns = slot_map[s]
        if ns < 0:
            continue
        insert(new_keys, new_slots, mask, old_keys[i], ns)


class HashIndex:
    """Keys -> dense slots, plus the capacity bookkeeping kernels need.

    Attributes
    ----------
    keys, slots : numpy arrays of the table (slots == -1 marks an empty cell)
    n : number of keys stored (slots 0 .. n-1 are in use)
    limit : kernels must stop inserting once ``n`` reaches it (half the table)
    """

    def __init__(self, capacity: int = 1024) -> None:
        cap = 1
        while cap < max(16, capacity):
            cap <<= 1
        self.keys = np.zeros(cap, np.int64)
        self.slots = np.full(cap, -1, np.int64)
        self.n = 0

    @property
    def mask(self) -> int:
        return self.keys.shape[0] - 1

    @property
    def limit(self) -> int:
        return self.keys.shape[0] // 2

    def rebuild(self, slot_map: np.ndarray, n_new: int, min_free: int = 1) -> None:
        """Re-insert the entries with their new slots (``slot_map``), sizing the table for ``n_new + min_free``."""
        cap = self.keys.shape[0]
        while cap // 2 < n_new + min_free or cap // 2 < 8:
            cap <<= 1
        while cap > 1024 and cap // 8 > n_new + min_free:
            cap >>= 1
        keys = np.zeros(cap, np.int64)
        slots = np.full(cap, -1, np.int64)
        _rehash(self.keys, self.slots, keys, slots, slot_map)
        self.keys, self.slots, self.n = keys, slots, n_new

    def grow(self, min_free: int = 1) -> None:
        """Double (at least) the table, keeping every slot number."""
        self.rebuild(np.arange(self.n, dtype=np.int64), self.n, max(min_free, self.n + 1))


def grow_rows(arr: np.ndarray, n_rows: int, fill=0) -> np.ndarray:
    """``arr`` with at least ``n_rows`` rows (first axis), new rows set to ``fill``; grows geometrically."""
    if arr.shape[0] >= n_rows:
        return arr
    new_n = max(n_rows, 2 * arr.shape[0], 16)
    out = np.full((new_n,) + arr.shape[1:], fill, dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out
