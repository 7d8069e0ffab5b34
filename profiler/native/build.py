"""Build Portcast's Valgrind tool from its C source into a cache folder (first use), and locate it.

The tool is an out-of-tree Valgrind tool: compiled with the amd64-linux defines against the Valgrind
headers and linked statically with Valgrind's ``libcoregrind``, ``libvex`` and ``libgcc-sup`` (plus
``libgcc``) at text address 0x58000000. Valgrind runs it when ``VALGRIND_LIB`` names a folder holding
``portcast-amd64-linux`` and ``vgpreload_core-amd64-linux.so``; :func:`ensure_tool` makes that folder.

Needs: ``gcc`` and Debian's ``valgrind`` package (it ships the headers and static libraries; on other
distributions the ``valgrind-devel``/``valgrind-dev`` package). Run ``python -m profiler.native.build``
to build ahead of time (e.g. as an install step); it prints the folder or says what is missing.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parent / "vgtool"
INCLUDE_DIR = Path(__file__).resolve().parent / "include"
TOOL_NAME = "portcast"
PLATFORM = "amd64-linux"

DEFINES = ("-DVGA_amd64=1", "-DVGO_linux=1", "-DVGP_amd64_linux=1", "-DVGPV_amd64_linux_vanilla=1")
CFLAGS = ("-O2", "-g", "-Wall", "-Wno-unused-function", "-fno-stack-protector", "-fno-builtin", "-fno-PIE",
          "-fno-strict-aliasing")
LDFLAGS = ("-static", "-nodefaultlibs", "-nostartfiles", "-u", "_start", "-Wl,--build-id=none",
           "-Wl,-Ttext-segment=0x58000000", "-no-pie")

_LIB_CANDIDATES = ("/usr/lib/x86_64-linux-gnu/valgrind", "/usr/lib64/valgrind", "/usr/lib/valgrind",
                   "/usr/local/lib/valgrind", "/usr/libexec/valgrind", "/usr/local/libexec/valgrind")
_INCLUDE_CANDIDATES = ("/usr/include/valgrind", "/usr/local/include/valgrind")


class NativeToolError(RuntimeError):
    """The Valgrind tool cannot be built or run here; the message says what is missing and how to get it."""


def _first_with(candidates, name: str, env: str) -> Path | None:
    dirs = [os.environ[env]] if os.environ.get(env) else []
    dirs += list(candidates)
    for d in dirs:
        if (Path(d) / name).exists():
            return Path(d)
    return None


def find_toolchain() -> dict:
    """Locate gcc, the Valgrind headers, static libraries and core preload library.

    Returns
    -------
    dict
        ``gcc``, ``valgrind``, ``include``, ``libdir`` (static libraries), ``preload`` (folder of
        ``vgpreload_core-amd64-linux.so``).

    Raises
    ------
    NativeToolError
        Naming each missing piece and the Debian package that provides it.
    """
    missing = []
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise NativeToolError(
            f"the native recorder supports amd64 Linux only (this is {platform.system()} {platform.machine()})"
        )
    cc = os.environ.get("CC") or "gcc"
    gcc = shutil.which(cc)
    if not gcc:
        missing.append(f"the C compiler {cc!r} (apt-get install gcc, or set CC)")
    valgrind = shutil.which("valgrind")
    if not valgrind:
        missing.append("the 'valgrind' program (apt-get install valgrind)")
    include = _first_with(_INCLUDE_CANDIDATES, "pub_tool_basics.h", "PORTCAST_VALGRIND_INCLUDE")
    if include is None:
        missing.append("the Valgrind tool headers pub_tool_*.h, usually /usr/include/valgrind "
                       "(apt-get install valgrind; elsewhere valgrind-devel); or set PORTCAST_VALGRIND_INCLUDE")
    libdir = _first_with(_LIB_CANDIDATES, f"libcoregrind-{PLATFORM}.a", "PORTCAST_VALGRIND_LIBDIR")
    if libdir is None:
        missing.append(f"Valgrind's static libraries libcoregrind-{PLATFORM}.a / libvex-{PLATFORM}.a "
                       "(apt-get install valgrind; elsewhere valgrind-devel); or set PORTCAST_VALGRIND_LIBDIR")
    preload = _first_with(_LIB_CANDIDATES, f"vgpreload_core-{PLATFORM}.so", "PORTCAST_VALGRIND_PRELOAD")
    if preload is None:
        missing.append(f"vgpreload_core-{PLATFORM}.so (part of the valgrind package); or set PORTCAST_VALGRIND_PRELOAD")
    if libdir is not None:
        for lib in (f"libvex-{PLATFORM}.a", f"libgcc-sup-{PLATFORM}.a"):
            if not (libdir / lib).exists():
                missing.append(f"{libdir / lib}")
    if missing:
        raise NativeToolError("cannot build Portcast's Valgrind tool; missing: " + "; ".join(missing))
    return {"gcc": gcc, "valgrind": valgrind, "include": include, "libdir": libdir, "preload": preload}


def cache_root() -> Path:
    """Folder under which built tools are kept (``$PORTCAST_CACHE`` or ``~/.cache/portcast``)."""
    base = os.environ.get("PORTCAST_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "portcast")
    return Path(base) / "vgtool"


def _fingerprint(tc: dict) -> str:
    h = hashlib.sha256()
    for src in sorted(SOURCE_DIR.glob("*.[ch]")):
        h.update(src.name.encode())
        h.update(src.read_bytes())
    h.update(" ".join(DEFINES + CFLAGS + LDFLAGS).encode())
    for key in ("include", "libdir"):
        h.update(str(tc[key]).encode())
    lib = Path(tc["libdir"]) / f"libcoregrind-{PLATFORM}.a"
    st = lib.stat()
    h.update(f"{st.st_size}:{int(st.st_mtime)}".encode())
    return h.hexdigest()[:16]


def ensure_tool(verbose: bool = False) -> Path:
    """Build the tool if needed and return the folder to use as ``VALGRIND_LIB``.

    Parameters
    ----------
    verbose:
        Print the compiler commands to stderr.

    Returns
    -------
    Path
        A folder holding ``portcast-amd64-linux`` and ``vgpreload_core-amd64-linux.so``.

    Raises
    ------
    NativeToolError
        When gcc or Valgrind's headers/static libraries are missing, or compiling fails (with the
        compiler's message).
    """
    tc = find_toolchain()
    target = cache_root() / _fingerprint(tc)
    exe = target / f"{TOOL_NAME}-{PLATFORM}"
    if exe.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        objs = []
        for src in sorted(SOURCE_DIR.glob("*.c")):
            obj = work / (src.stem + ".o")
            cmd = [tc["gcc"], "-c", *CFLAGS, f"-I{tc['include']}", *DEFINES, "-o", str(obj), str(src)]
            _run(cmd, verbose)
            objs.append(str(obj))
        libdir = Path(tc["libdir"])
        cmd = [tc["gcc"], "-o", str(work / exe.name), *objs, *LDFLAGS,
               str(libdir / f"libcoregrind-{PLATFORM}.a"), str(libdir / f"libvex-{PLATFORM}.a"),
               str(libdir / f"libgcc-sup-{PLATFORM}.a"), "-lgcc"]
        _run(cmd, verbose)
        for obj in objs:
            os.unlink(obj)
        shutil.copy2(Path(tc["preload"]) / f"vgpreload_core-{PLATFORM}.so", work)
        supp = Path(tc["preload"]) / "default.supp"
        if supp.exists():
            shutil.copy2(supp, work)
        try:
            os.replace(work, target)  # atomic: another process may have finished first
        except OSError:
            if not exe.exists():
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return target


def _run(cmd: list[str], verbose: bool) -> None:
    if verbose:
        print(" ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise NativeToolError(
            f"building Portcast's Valgrind tool failed ({Path(cmd[0]).name} exit {proc.returncode}):\n"
            f"{' '.join(cmd)}\n{proc.stderr.strip()[-4000:]}"
        )


def main(argv: list[str] | None = None) -> int:
    """``python -m profiler.native.build [-v]``: build the tool now and print its folder."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        folder = ensure_tool(verbose="-v" in argv)
    except NativeToolError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
