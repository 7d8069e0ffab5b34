"""Run a native program under Portcast's Valgrind tool and stream its trace into sinks.

The process side of native recording: the valgrind command line, the FIFO the tool writes its messages to
(memory stays bounded: the tool blocks when the reader falls behind), the shared-memory ring its record
blocks travel through by default, time-outs and the program's exit status. The messages and their decoder
are in :mod:`profiler.native.stream`; its names are importable from here too.
"""

from __future__ import annotations

import os
import select
import shlex
import shutil
import subprocess
import tempfile
import time
from typing import Iterable, Sequence

import numpy as np

from ..trace import DEFAULT_CHUNK_RECORDS
from .build import NativeToolError, ensure_tool
from .stream import (  # noqa: F401  (re-exported: importable from here with record_program)
    BUF_BYTES,
    RECORD_BYTES,
    SHM_SLOT_BYTES,
    SHM_SLOTS,
    STREAM_VERSION,
    WIRE_COLUMNS,
    StreamDecoder,
    _decode_pipelined,
    _Prefixed,
    decode_file,
    decode_records,
    encode_records,
)


def valgrind_command(out_path: str, program: Sequence[str], *, region: str | None = None,
                     whole_program: bool = False, extra_args: Sequence[str] = (),
                     ring: tuple[str, int, str] | None = None) -> list[str]:
    """The valgrind command line that runs ``program`` under the tool.

    Parameters
    ----------
    out_path:
        File or FIFO the tool writes its message stream to.
    program:
        The traced command.
    region, whole_program, extra_args:
        As for :func:`record_program`.
    ring:
        ``(ring file, slots, credits FIFO)``: hand record blocks over in this shared-memory ring
        (RECORDS_SHM messages, see the module documentation) instead of writing them to ``out_path``.

    Returns
    -------
    list of str
        The command; run it with ``VALGRIND_LIB`` set to :func:`profiler.native.build.ensure_tool`'s folder.
    """
    cmd = ["valgrind", "-q", "--tool=portcast", "--vex-guest-chase=no", "--vex-iropt-level=0", f"--out={out_path}"]
    if region:
        cmd.append(f"--region={region}")
    if whole_program:
        cmd.append("--all=yes")
    if ring is not None:
        cmd += [f"--shm={ring[0]}", f"--shm-slots={int(ring[1])}", f"--credits={ring[2]}"]
    cmd += list(extra_args)
    cmd += list(program)
    return cmd


def _abort_reason(exc: BaseException) -> str:
    """Why a region ends incomplete when reading stopped on ``exc`` (Ctrl-C reads as the Python profiler's)."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (KeyboardInterrupt)"
    return f"{type(exc).__name__}: {exc}"


def record_program(program: Sequence[str], sinks: Iterable, *, region: str | None = None,
                   whole_program: bool = False, chunk_records: int = DEFAULT_CHUNK_RECORDS,
                   valgrind_args: Sequence[str] = (), stdout=None, stderr=None, cwd=None,
                   timeout: float | None = None, pipelined: bool = True,
                   shm: bool | None = None) -> StreamDecoder:
    """Run ``program`` under Portcast's Valgrind tool and send each recorded region to the sinks.

    Parameters
    ----------
    program:
        The command (program path and arguments).
    sinks:
        :class:`profiler.trace.TraceSink` objects.
    region:
        Record only regions with this name (default: every ``PORTCAST_REGION_START``/``END`` pair).
    whole_program:
        Record the whole run as one region named ``program`` (no markers needed).
    chunk_records:
        Most records per chunk handed to the sinks.
    valgrind_args:
        Extra Valgrind core options.
    stdout, stderr, cwd:
        Passed to :class:`subprocess.Popen` for the traced program.
    timeout:
        Seconds after which the program is killed (its open region is then marked incomplete).
    pipelined:
        Read the trace in a thread without the GIL while the sinks run in this one
        (:meth:`StreamDecoder.read_fd_pipelined`; the default), or in this thread between sink calls
        (:meth:`StreamDecoder.read_stream`). The sinks get the same calls either way.
    shm:
        With ``pipelined``: the tool hands record blocks over in a shared-memory ring in ``/dev/shm``
        (:data:`SHM_SLOTS` slots of :data:`SHM_SLOT_BYTES`) instead of writing them into the FIFO, which
        saves copying every record into and out of the pipe. ``None`` (default): where ``/dev/shm`` can
        hold the ring, else the FIFO; ``True``: required (:class:`NativeToolError` otherwise); ``False``:
        the FIFO. The records and sink calls are the same.

    Returns
    -------
    StreamDecoder
        With ``regions`` (the :class:`RegionInfo` of each region sent), ``exit_code`` and
        ``total_instructions``.

    Raises
    ------
    NativeToolError
        When the tool cannot be built or the program cannot be started.
    """
    program = _checked_program(program)
    tool_dir = ensure_tool()
    decoder = StreamDecoder(sinks, chunk_records, source=shlex.join(program))
    rec = _Recording()
    env = dict(os.environ, VALGRIND_LIB=str(tool_dir))
    cmd = valgrind_command(rec.fifo, program, region=region, whole_program=whole_program,
                           extra_args=valgrind_args)
    try:
        if pipelined and shm is not False:
            credits = rec.open_ring(required=bool(shm))
            if credits is not None:
                cmd = valgrind_command(rec.fifo, program, region=region, whole_program=whole_program,
                                       extra_args=valgrind_args, ring=(rec.ring_path, SHM_SLOTS, credits))
        rec.open_fifo()
        rec.proc = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=stderr, cwd=cwd)
        deadline = None if timeout is None else time.monotonic() + timeout
        first = rec.wait_first(deadline)
        if rec.ring_path is not None and first:  # the tool has mapped the ring (before its greeting)
            os.unlink(rec.ring_path)
            rec.ring_path = None
        if first:
            rec.read(decoder, first, pipelined)
        rc = rec.proc.wait(timeout=None if deadline is None else max(0.1, deadline - time.monotonic()))
        if decoder._info is not None:
            decoder.abort(f"the trace stream ended inside the region: the program exec()ed another program "
                          f"(trace that one directly) or was killed (exit status {rc})")
        if decoder.hello is None:
            raise NativeToolError(
                f"valgrind did not start the Portcast tool (exit status {rc}); command: {shlex.join(cmd)}")
        decoder.exit_code = rc  # valgrind exits with the program's status
    except subprocess.TimeoutExpired:
        rec.proc.kill()
        rec.proc.wait()
        decoder.abort(f"killed after {timeout} s")
        raise NativeToolError(f"the traced program did not finish within {timeout} s") from None
    finally:
        rec.close()
    return decoder


def _checked_program(program: Sequence[str]) -> list[str]:
    """The command as strings, once its program is known to exist (:class:`NativeToolError` otherwise)."""
    program = [str(p) for p in program]
    if not program:
        raise NativeToolError("no program given to record")
    exe = program[0]
    if os.sep not in exe and shutil.which(exe) is None:
        raise NativeToolError(f"program {exe!r} not found on PATH")
    if os.sep in exe and not os.access(exe, os.X_OK):
        raise NativeToolError(f"program {exe!r} does not exist or is not executable")
    return program


class _Recording:
    """What one recording holds: a temporary folder with the FIFO the tool writes to (and the credits FIFO of
    the ring), the FIFO's descriptor, the shared-memory ring and the valgrind process. :meth:`close` releases
    all of it."""

    def __init__(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="portcast-rec-")
        self.fifo = os.path.join(self.tmp, "trace.fifo")
        os.mkfifo(self.fifo, 0o600)
        self.proc: subprocess.Popen | None = None
        self.fd: int | None = None
        self.ring_path: str | None = None
        self.ring_map = None
        self.ring: np.ndarray | None = None
        self.credit_fd = -1

    def open_ring(self, required: bool) -> str | None:
        """Create the shared-memory ring and the credits FIFO; returns that FIFO's path, or None when
        ``/dev/shm`` cannot hold the ring and it is not ``required`` (:class:`NativeToolError` when it is)."""
        try:
            self.ring_path, self.ring_map = _make_ring(SHM_SLOTS)
        except OSError as exc:
            if required:
                raise NativeToolError(f"cannot create the shared-memory ring in /dev/shm: {exc}") from None
            return None
        self.ring = np.frombuffer(self.ring_map, np.uint8)
        credits = os.path.join(self.tmp, "credits.fifo")
        os.mkfifo(credits, 0o600)
        self.credit_fd = os.open(credits, os.O_RDWR)  # never blocks; the tool opens it for reading
        return credits

    def open_fifo(self) -> None:
        self.fd = os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:  # a larger pipe means fewer context switches between the tool and this reader
            import fcntl

            fcntl.fcntl(self.fd, 1031, 1 << 20)  # F_SETPIPE_SZ
        except OSError:
            pass

    def wait_first(self, deadline: float | None) -> bytes:
        """The first bytes of the stream, once the tool has opened the FIFO for writing; empty when valgrind
        exits first or the deadline passes (the program is then killed)."""
        while True:
            r, _, _ = select.select([self.fd], [], [], 0.05)
            if r:
                try:
                    first = os.read(self.fd, 8)
                except BlockingIOError:
                    first = b""
                if first:
                    return first
            if self.proc.poll() is not None:
                return b""
            if deadline is not None and time.monotonic() > deadline:
                self.proc.kill()
                return b""
            if r:  # readable but empty: no writer yet
                time.sleep(0.01)

    def read(self, decoder: StreamDecoder, first: bytes, pipelined: bool) -> None:
        """Decode the stream whose ``first`` bytes were read; on any failure the program is killed and the open
        region ends incomplete."""
        os.set_blocking(self.fd, True)
        if pipelined:
            try:
                _decode_pipelined(decoder, self.fd, first, on_error=self.proc.kill, ring=self.ring,
                                  credit_fd=self.credit_fd)
            except BaseException as exc:
                self._stop(decoder, exc)
                raise
            return
        with os.fdopen(self.fd, "rb", buffering=1 << 20) as f:
            self.fd = None
            try:
                decoder.read_stream(_Prefixed(first, f))
            except BaseException as exc:
                self._stop(decoder, exc)
                raise

    def _stop(self, decoder: StreamDecoder, exc: BaseException) -> None:
        self.proc.kill()
        decoder.abort(_abort_reason(exc))

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.credit_fd >= 0:
            os.close(self.credit_fd)
        if self.ring_path is not None:
            os.unlink(self.ring_path)
        self.ring = None
        if self.ring_map is not None:
            try:
                self.ring_map.close()
            except BufferError:  # a view of it is still alive (e.g. in a traceback): freed with it
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)


def _make_ring(slots: int, folder: str = "/dev/shm"):
    """A ring file of ``slots`` slots of :data:`SHM_SLOT_BYTES` in ``folder`` (memory backed), its space
    allocated (so that a full tmpfs fails here, not with a fault in the tool), and its mapping.

    Returns
    -------
    (str, mmap.mmap)
        The file's path and a shared read/write mapping of all of it.
    """
    import mmap

    if not os.path.isdir(folder):
        raise OSError(f"{folder} does not exist")
    size = slots * SHM_SLOT_BYTES
    fd, path = tempfile.mkstemp(prefix="portcast-ring-", dir=folder)
    try:
        os.posix_fallocate(fd, 0, size)
        return path, mmap.mmap(fd, size)
    except BaseException:
        os.unlink(path)
        raise
    finally:
        os.close(fd)


__all__ = ["RECORD_BYTES", "SHM_SLOT_BYTES", "SHM_SLOTS", "encode_records", "decode_records", "StreamDecoder",
           "record_program", "decode_file", "valgrind_command", "NativeToolError"]
