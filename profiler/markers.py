"""Region markers (NVTX style). They cost one global check when no profiling session is active.

    @portcast.region("name")            # a whole function
    with portcast.region("name"): ...   # a block inside a function
    portcast.region_start("name"); ...; portcast.region_end("name")
    for i in portcast.parallel(range(n)): ...   # marks the loop whose iterations are GPU threads

The active profiling session (``profiler.session``) installs itself in ``_state.session``; the markers
delegate to it. Without a session they do nothing but run the code.
"""

from __future__ import annotations

import functools


class _State:
    session = None  # the active profiling session, or None


_state = _State()


class region:
    """Marks a region: decorator for a function, or context manager around a block."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a region needs a non-empty name, got {name!r}")
        self.name = name

    def __call__(self, fn):
        name = self.name

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            session = _state.session
            if session is None:
                return fn(*args, **kwargs)
            return session.call_region(name, fn, args, kwargs)

        wrapper.__portcast_region__ = name
        wrapper.__wrapped__ = fn
        return wrapper

    def __enter__(self):
        session = _state.session
        if session is not None:
            session.enter_block(self.name)
        return self

    def __exit__(self, exc_type, exc, tb):
        session = _state.session
        if session is not None:
            session.exit_block(self.name, exc)
        return False


def region_start(name: str) -> None:
    session = _state.session
    if session is not None:
        session.region_start(name)


def region_end(name: str) -> None:
    session = _state.session
    if session is not None:
        session.region_end(name)


def parallel(iterable):
    """Marks the loop whose iterations become GPU threads; returns ``iterable`` unchanged."""
    return iterable
