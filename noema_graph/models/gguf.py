"""What a GGUF model file says about itself: a small pure-Python metadata reader.

A GGUF file (version 2 or 3, little-endian) starts with the magic ``GGUF``, a ``uint32``
version, a ``uint64`` tensor count and a ``uint64`` count of key-value pairs; each pair is a
string key, a ``uint32`` value type and the value (numbers, booleans, strings, arrays of
those). The tensor infos follow: name, dimensions, type and offset. :func:`read_gguf_info`
reads the few keys a model profile needs (architecture, context length, parameter count,
name) from a memory map, skipping the rest (the tokenizer's arrays) without decoding them;
the weights are never read.
"""

from __future__ import annotations

import math
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from noema_graph.errors import ConfigurationError, InvalidValue

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)

_SCALARS: dict[int, str] = {
    0: "<B",  # uint8
    1: "<b",  # int8
    2: "<H",  # uint16
    3: "<h",  # int16
    4: "<I",  # uint32
    5: "<i",  # int32
    6: "<f",  # float32
    7: "<?",  # bool
    10: "<Q",  # uint64
    11: "<q",  # int64
    12: "<d",  # float64
}
_STRING, _ARRAY = 8, 9
_LENGTH = struct.Struct("<Q")
_WANTED = ("general.architecture", "general.name", "general.parameter_count", "general.size_label")
_FIX = "point local: at a GGUF model file (e.g. local:/models/llama-3.2-1b-q4_k_m.gguf)"


@dataclass(frozen=True)
class GGUFInfo:
    """The metadata of a GGUF model file that shapes how it is served and driven.

    Attributes:
        path: The file.
        version: The GGUF format version.
        architecture: ``general.architecture`` (``llama``, ``gemma3``...), or None.
        name: ``general.name``, or None.
        context_length: ``<architecture>.context_length``: the training window, or None.
        parameters: ``general.parameter_count``, else the sum of the tensors' element counts.
        size_label: ``general.size_label`` (``135M``), or None.
    """

    path: Path
    version: int
    architecture: str | None
    name: str | None
    context_length: int | None
    parameters: int
    size_label: str | None

    @property
    def display_name(self) -> str:
        """Return the model's name: ``general.name``, else the file's stem."""
        return self.name or self.path.stem


class _Reader:
    """Reads little-endian GGUF values from a buffer, advancing an offset."""

    def __init__(self, buffer: bytes | mmap.mmap) -> None:
        self.buffer = buffer
        self.offset = 0

    def scalar(self, fmt: str) -> Any:
        (value,) = struct.unpack_from(fmt, self.buffer, self.offset)
        self.offset += struct.calcsize(fmt)
        return value

    def string(self, *, keep: bool = True) -> str:
        size = self.scalar("<Q")
        if self.offset + size > len(self.buffer):
            raise struct.error("a string runs past the end of the file")
        start, self.offset = self.offset, self.offset + size
        return bytes(self.buffer[start : self.offset]).decode("utf-8", "replace") if keep else ""

    def value(self, kind: int, *, keep: bool) -> object:
        """Return a value of type ``kind``; with ``keep`` False, skip it and return None."""
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind])
        if kind == _STRING:
            return self.string(keep=keep)
        if kind != _ARRAY:
            raise struct.error(f"unknown value type {kind}")
        item, count = self.scalar("<I"), self.scalar("<Q")
        if item in _SCALARS and not keep:
            self.offset += count * struct.calcsize(_SCALARS[item])
            return None
        if item == _STRING and not keep:  # the tokenizer's vocabulary: hot, so inlined
            offset, size = self.offset, _LENGTH.unpack_from
            for _ in range(count):
                offset += 8 + size(self.buffer, offset)[0]
            if offset > len(self.buffer):
                raise struct.error("an array runs past the end of the file")
            self.offset = offset
            return None
        values = [self.value(item, keep=keep) for _ in range(count)]
        return values if keep else None


def read_gguf_info(path: Path | str) -> GGUFInfo:
    """Return the metadata of the GGUF file at ``path``.

    Raises:
        ConfigurationError: The file does not exist, is not a GGUF file (wrong magic), has an
            unsupported version or ends inside its metadata; the message names the path.
            Big-endian GGUF files are not read.
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigurationError(
            "model", f"GGUF file {str(file)!r} does not exist", fix=f"check the path, or {_FIX}"
        )
    with file.open("rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            raise ConfigurationError(
                "model",
                f"{str(file)!r} is not a GGUF file (its first bytes are not 'GGUF')",
                fix=_FIX,
            )
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
            try:
                return _parse(file, buffer)
            except (struct.error, ValueError, OverflowError) as exc:
                raise ConfigurationError(
                    "model",
                    f"GGUF file {str(file)!r}: cannot read its metadata ({exc}); the file is "
                    "truncated, corrupt or of a GGUF version this reader does not know",
                    fix=_FIX,
                ) from None


def _parse(file: Path, buffer: bytes | mmap.mmap) -> GGUFInfo:
    reader = _Reader(buffer)
    reader.offset = 4
    version = reader.scalar("<I")
    if version not in SUPPORTED_VERSIONS:
        raise InvalidValue(f"GGUF version {version} (this reader knows 2 and 3)")
    tensors, pairs = reader.scalar("<Q"), reader.scalar("<Q")
    found: dict[str, object] = {}
    for _ in range(pairs):
        key = reader.string()
        kind = reader.scalar("<I")
        if key in _WANTED or key.endswith(".context_length"):
            found[key] = reader.value(kind, keep=True)
        else:
            reader.value(kind, keep=False)
    architecture = _text(found.get("general.architecture"))
    context = found.get(f"{architecture}.context_length") if architecture else None
    parameters = found.get("general.parameter_count")
    if not isinstance(parameters, int) or parameters <= 0:
        parameters = _tensor_parameters(reader, tensors)
    return GGUFInfo(
        path=file,
        version=version,
        architecture=architecture,
        name=_text(found.get("general.name")),
        context_length=context if isinstance(context, int) and context > 0 else None,
        parameters=parameters,
        size_label=_text(found.get("general.size_label")),
    )


def _tensor_parameters(reader: _Reader, tensors: int) -> int:
    """Return the element count of all tensors (the tensor infos follow the key-value pairs)."""
    total = 0
    for _ in range(tensors):
        reader.string(keep=False)  # name
        dims = reader.scalar("<I")
        total += math.prod(reader.scalar("<Q") for _ in range(dims))
        reader.offset += 4 + 8  # ggml type (uint32), data offset (uint64)
    return total


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None
