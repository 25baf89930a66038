"""``with`` support for the objects that own a resource and release it in ``close()``."""

from __future__ import annotations

from typing import Self


class Closeable:
    """Mixin: ``with obj:`` gives ``obj`` and calls ``obj.close()`` on the way out."""

    def close(self) -> None:
        """Release what the object holds; subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} must define close()")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
