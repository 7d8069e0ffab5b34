"""The error every layer of Portcast raises for a problem in the user's input (a file, an option, a value)."""

from __future__ import annotations


class UserError(Exception):
    """An error caused by the user's input; the command line prints it as one clear line (exit code 2)."""
