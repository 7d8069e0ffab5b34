"""Portcast's version, for every layer: the installed distribution's (pyproject.toml is its one source)."""

from __future__ import annotations

import functools


@functools.cache
def portcast_version() -> str:
    """The version of the installed ``portcast`` distribution, or ``0+unknown`` in a checkout never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("portcast")
    except PackageNotFoundError:
        return "0+unknown"
