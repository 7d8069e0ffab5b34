"""Whether this machine can build and run the native recorder (gcc, Valgrind and its headers), for the native
tests: :data:`needs_tool` marks a test that needs it, :data:`MISSING` says what is missing (None: nothing)."""

import pytest

from profiler.native.build import NativeToolError, find_toolchain

try:
    find_toolchain()
    MISSING = None
except NativeToolError as exc:  # pragma: no cover - this machine has gcc and valgrind
    MISSING = str(exc)

needs_tool = pytest.mark.skipif(MISSING is not None, reason=f"native toolchain missing: {MISSING}")
