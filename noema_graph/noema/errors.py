"""Errors of the learning domain.

:class:`ToolInputError` is a caller mistake (a bad argument, an unknown id); its message names
the field and the fix, so a model reading it as a tool observation can correct the call.
:class:`SchemaVersionError` is a database this code cannot safely open.
"""

from __future__ import annotations

from noema_graph.errors import FieldError, NoemaError


class ToolInputError(FieldError):
    """An argument of a domain operation is invalid; the message names the field and the fix."""


class RecordNotFound(ToolInputError):
    """An id given in ``field`` names no row; ``plain`` says so in the learner's words."""

    def __init__(
        self,
        field: str,
        message: str,
        *,
        fix: str | None = None,
        fix_call: dict[str, object] | None = None,
        plain: str | None = None,
    ) -> None:
        """Build the error; ``plain`` defaults to the message (``There is no card 250.``)."""
        super().__init__(field, message, fix=fix, fix_call=fix_call)
        self.plain = plain or message


class SchemaVersionError(NoemaError):
    """The database was written by a newer schema than this code knows."""

    def __init__(self, found: int, supported: int) -> None:
        """Describe a database at version ``found`` when only ``supported`` is known."""
        self.found = found
        self.supported = supported
        super().__init__(
            f"database schema version {found} is newer than the newest this code supports "
            f"({supported}); upgrade noema_graph or open a database written by this version"
        )
