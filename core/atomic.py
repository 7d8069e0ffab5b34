"""Atomic file output, the one way Portcast writes results: nothing appears under the final name until it
is whole, and a failure leaves no partial file behind.

Lives in ``core``, the bottom layer, because every other package uses it (docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator


class OutputWriteError(OSError):
    """An output that could not be written: ``path`` (its final name) and ``reason`` (the system's words for
    ``errno``: "No space left on device", "Is a directory", ...); its message is one line naming both."""

    def __init__(self, path: str | os.PathLike, cause: BaseException | str, what: str = "") -> None:
        code = getattr(cause, "errno", None)
        code = code if isinstance(code, int) and code else None
        reason = os.strerror(code) if code else str(cause)
        super().__init__(code if code else errno.EIO, reason)
        self.errno, self.strerror = code if code else errno.EIO, reason
        self.path, self.reason, self.what = Path(path), reason, what

    def __str__(self) -> str:
        return f"cannot write {f'the {self.what} ' if self.what else ''}{self.path}: {self.reason}"


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

    Raises
    ------
    OutputWriteError
        For an ``OSError`` while creating, writing or renaming (a full disk, a read-only folder, a directory
        named ``path``): one line naming ``path`` and the cause.
    """
    path = Path(path)
    try:
        fd, tmp = make_temp(path)
        os.close(fd)
        os.chmod(tmp, 0o666 & ~_umask())  # the permissions a plain open() would give, not mkstemp's 0600
    except OSError as exc:
        raise OutputWriteError(path, exc) from exc
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, OutputWriteError):
            raise OutputWriteError(path, exc) from exc  # a full disk, a directory of that name, ...
        raise


def make_temp(path: str | os.PathLike) -> tuple[int, str]:
    """Create the hidden temporary file that will become ``path``: ``.<name>.<pid>.<random>.tmp`` in its
    folder (created if needed), after removing the temporaries that killed runs left for the same name
    (:func:`remove_stale_temps`). Returns ``(fd, temporary path)`` as :func:`tempfile.mkstemp` does."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    return tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)


#: a temporary without a process id (written before they carried one) is stale after this many seconds
STALE_UNTAGGED_S = 3600.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def remove_stale_temps(path: str | os.PathLike) -> list[Path]:
    """Remove the temporaries of ``path`` whose writing process no longer runs (a run killed before it could
    rename or remove them); returns what was removed. Temporaries of live processes are kept."""
    import time

    path = Path(path)
    removed = []
    if not path.parent.is_dir():
        return removed
    prefix = f".{path.name}."
    for tmp in path.parent.glob(f".{glob_escape(path.name)}.*.tmp"):
        rest = tmp.name[len(prefix):-len(".tmp")]
        head = rest.split(".", 1)[0]
        try:
            stale = not _alive(int(head)) if head.isdigit() and "." in rest else \
                time.time() - tmp.stat().st_mtime > STALE_UNTAGGED_S
            if stale:
                tmp.unlink()
                removed.append(tmp)
        except OSError:
            pass  # gone meanwhile, or not ours to remove
    return removed


def glob_escape(name: str) -> str:
    """``name`` with the glob metacharacters escaped."""
    import glob

    return glob.escape(name)


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
