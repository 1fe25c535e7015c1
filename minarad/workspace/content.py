"""Checks and ids for file content: UTF-8 text only, bounded in size."""

from __future__ import annotations

from minarad.errors import InvalidInput


def decode_text(data: bytes, max_bytes: int, origin: str = "text") -> str:
    """Decode bytes as UTF-8 text or raise a clear :class:`InvalidInput`.

    Args:
        data: the raw bytes.
        max_bytes: the largest size accepted.
        origin: how to name the input in messages (a path, ``-``, ...).
    """
    if len(data) > max_bytes:
        raise InvalidInput(f"{origin}: larger than the {max_bytes:,}-byte limit "
                           f"(set MINARA_MAX_FILE_BYTES to change it)", code="file_too_large")
    if b"\x00" in data:
        raise InvalidInput(f"{origin}: binary content (NUL byte at offset {data.index(0)}); "
                           f"minara stores text only", code="binary_content")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{origin}: invalid UTF-8 at byte {exc.start}", code="invalid_utf8") \
            from None


def encode_text(text: str, max_bytes: int, origin: str = "text") -> bytes:
    """Encode text for storage, refusing what :func:`decode_text` would refuse."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # lone surrogates from a bad decode upstream
        raise InvalidInput(f"{origin}: not valid Unicode at character {exc.start}",
                           code="invalid_utf8") from None
    decode_text(data, max_bytes, origin)
    return data


def git_blob_id(data: bytes) -> str:
    """The git blob id (SHA-1 of ``blob <len>\\0<data>``) as hex."""
    import hashlib

    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def sha256_hex(data: bytes) -> str:
    """SHA-256 of the content, hex (the HTTP API's version id)."""
    import hashlib

    return hashlib.sha256(data).hexdigest()
