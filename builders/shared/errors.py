"""The project's own error for failures a user can act on.

``bias-hub`` prints a ``UserError`` (like a ``ValueError`` or a missing file) as one line,
``bias-hub: error: <message>``, exit status 2: its message names the flag, file, row or
endpoint and what was expected, so a traceback would add only noise. Any other
``RuntimeError`` -- from torch, from a library, or a broken assumption of our own -- keeps
its traceback: it is a bug to report, not a mistake to correct.
"""

from __future__ import annotations

__all__ = ["UserError"]


class UserError(RuntimeError):
    """A failure whose message tells the user what to change (printed as one line)."""
