"""Atomic file output, the one way Portcast writes results: nothing appears under the final name until it
is whole, and a failure leaves no partial file behind.

Lives in ``profiler`` because every other package may import from it (see the layering in ARCHITECTURE).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path in the folder of ``path``; rename it over ``path`` when the block succeeds.

    The folder is created if needed. When the block raises (or is interrupted), the temporary file is
    removed and ``path`` is left as it was.

    Parameters
    ----------
    path : the final file name

    Yields
    ------
    pathlib.Path
        Where to write (an empty file that already exists).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # the permissions a plain open() would give, not mkstemp's 0600
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns ``path`` as a Path."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def atomic_write_json(path: str | os.PathLike, obj: Any, **dump_kwargs) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically (``dump_kwargs`` go to :func:`json.dump`)."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(obj, fh, **dump_kwargs)
    return Path(path)
