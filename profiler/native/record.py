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
    program = [str(p) for p in program]
    if not program:
        raise NativeToolError("no program given to record")
    exe = program[0]
    if os.sep not in exe and shutil.which(exe) is None:
        raise NativeToolError(f"program {exe!r} not found on PATH")
    if os.sep in exe and not os.access(exe, os.X_OK):
        raise NativeToolError(f"program {exe!r} does not exist or is not executable")
    tool_dir = ensure_tool()
    decoder = StreamDecoder(sinks, chunk_records, source=shlex.join(program))
    tmp = tempfile.mkdtemp(prefix="portcast-rec-")
    fifo = os.path.join(tmp, "trace.fifo")
    os.mkfifo(fifo, 0o600)
    env = dict(os.environ, VALGRIND_LIB=str(tool_dir))
    cmd = valgrind_command(fifo, program, region=region, whole_program=whole_program,
                           extra_args=valgrind_args)
    proc = None
    fd = None
    ring_path = ring_map = ring = None
    credit_fd = -1
    try:
        if pipelined and shm is not False:
            try:
                ring_path, ring_map = _make_ring(SHM_SLOTS)
            except OSError as exc:
                if shm:
                    raise NativeToolError(f"cannot create the shared-memory ring in /dev/shm: {exc}") from None
            if ring_map is not None:
                ring = np.frombuffer(ring_map, np.uint8)
                credits = os.path.join(tmp, "credits.fifo")
                os.mkfifo(credits, 0o600)
                credit_fd = os.open(credits, os.O_RDWR)  # never blocks; the tool opens it for reading
                cmd = valgrind_command(fifo, program, region=region, whole_program=whole_program,
                                       extra_args=valgrind_args, ring=(ring_path, SHM_SLOTS, credits))
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:  # a larger pipe means fewer context switches between the tool and this reader
            import fcntl

            fcntl.fcntl(fd, 1031, 1 << 20)  # F_SETPIPE_SZ
        except OSError:
            pass
        proc = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=stderr, cwd=cwd)
        deadline = None if timeout is None else time.monotonic() + timeout
        # wait until the tool has opened the FIFO for writing (first bytes arrive) or valgrind exits
        first = b""
        while True:
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                try:
                    first = os.read(fd, 8)
                except BlockingIOError:
                    first = b""
                if first:
                    break
            if proc.poll() is not None:
                break
            if deadline is not None and time.monotonic() > deadline:
                proc.kill()
                break
            if r:  # readable but empty: no writer yet
                time.sleep(0.01)
        if ring_path is not None and first:  # the tool has mapped the ring (before its greeting)
            os.unlink(ring_path)
            ring_path = None
        if first and pipelined:
            os.set_blocking(fd, True)
            try:
                _decode_pipelined(decoder, fd, first, on_error=proc.kill, ring=ring, credit_fd=credit_fd)
            except BaseException as exc:
                proc.kill()
                decoder.abort(_abort_reason(exc))
                raise
        elif first:
            os.set_blocking(fd, True)
            with os.fdopen(fd, "rb", buffering=1 << 20) as f:
                fd = None
                stream = _Prefixed(first, f)
                try:
                    decoder.read_stream(stream)
                except BaseException as exc:
                    proc.kill()
                    decoder.abort(_abort_reason(exc))
                    raise
        rc = proc.wait(timeout=None if deadline is None else max(0.1, deadline - time.monotonic()))
        if decoder._info is not None:
            decoder.abort(f"the trace stream ended inside the region: the program exec()ed another program "
                          f"(trace that one directly) or was killed (exit status {rc})")
        if decoder.hello is None:
            raise NativeToolError(
                f"valgrind did not start the Portcast tool (exit status {rc}); command: {shlex.join(cmd)}")
        decoder.exit_code = rc  # valgrind exits with the program's status
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        decoder.abort(f"killed after {timeout} s")
        raise NativeToolError(f"the traced program did not finish within {timeout} s") from None
    finally:
        if fd is not None:
            os.close(fd)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if credit_fd >= 0:
            os.close(credit_fd)
        if ring_path is not None:
            os.unlink(ring_path)
        ring = None
        if ring_map is not None:
            try:
                ring_map.close()
            except BufferError:  # a view of it is still alive (e.g. in a traceback): freed with it
                pass
        shutil.rmtree(tmp, ignore_errors=True)
    return decoder


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
