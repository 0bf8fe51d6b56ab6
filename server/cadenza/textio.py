r"""File bytes ↔ text, exactly: encodings and byte-order marks; and atomic writes.

The ground floor under the tools, the faces and the headless client, which must read and write
files exactly as the server does. Two rules, so an edit never damages what it does not touch:

- **Decoding is deliberate.** UTF-8 first (strict; a leading UTF-8 BOM is remembered, not
  kept in the text); otherwise the encoding is detected with ``charset-normalizer`` (never
  guessed by hand) and accepted only when decoding and encoding again gives back the very
  same bytes. Bytes that no encoding decodes exactly (binary files, damaged text) are refused
  with ``UndecodableError``: such a file is never rewritten lossily.
- **Encoding keeps the bytes outside the change.** ``encode_change`` re-encodes the new text
  in the file's own format and checks that every byte before and after the changed span is
  the original byte; otherwise it refuses (``UnencodableError``), e.g. for new characters
  that the file's legacy encoding cannot represent.

``write_atomic`` writes through a temp file and a rename, so a reader never sees half a file.
Line endings (LSP line rules) are ``cadenza.tools.textfile``'s. Offsets in this module count
code points (Python ``str`` indices) unless they say bytes.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import charset_normalizer

UTF8 = "utf-8"
UTF8_SIG = "utf-8-sig"
"""Python's codec for UTF-8 with a BOM: decoding drops one leading BOM, encoding writes it."""
UTF8_BOM = b"\xef\xbb\xbf"

_SAME_CHAOS = 0.005
_SAME_COHERENCE = 0.02
"""charset-normalizer's own tie margins (``CharsetMatch.__lt__``): closer matches are ties."""


class UndecodableError(ValueError):
    """The bytes are not text in any encoding that gives them back exactly.

    The message says why, in words for the model (e.g. "it contains NUL bytes").
    """


class UnencodableError(ValueError):
    """The new text cannot be written in the file's encoding without changing other bytes."""


@dataclass(frozen=True, kw_only=True)
class TextFormat:
    """How a file's text is stored as bytes.

    Attributes:
        encoding: Python codec name: ``utf-8``, ``utf-8-sig`` (UTF-8 with a BOM), or a legacy
            encoding found by charset-normalizer (e.g. ``gb18030``, ``cp1252``).
        alternatives: Other encodings that charset-normalizer found exactly as likely and that
            decode the bytes to other text (short legacy files are often ambiguous). Empty
            for UTF-8.
    """

    encoding: str = UTF8
    alternatives: tuple[str, ...] = ()

    @property
    def is_utf8(self) -> bool:
        """UTF-8, with or without a BOM."""
        return self.encoding in (UTF8, UTF8_SIG)

    @property
    def bom(self) -> bool:
        """The file starts with a UTF-8 byte-order mark."""
        return self.encoding == UTF8_SIG

    def describe(self) -> str:
        """A short name for messages, e.g. ``UTF-8 with BOM`` or ``gb18030``.

        An ambiguous legacy encoding is named with its equally likely alternatives.
        """
        if self.encoding == UTF8:
            return "UTF-8"
        if self.encoding == UTF8_SIG:
            return "UTF-8 with BOM"
        if self.alternatives:
            return f"{self.encoding} (or {', '.join(self.alternatives)}: its bytes fit each)"
        return self.encoding


PLAIN_UTF8 = TextFormat()


@dataclass(frozen=True, kw_only=True)
class DecodedText:
    """A file's text and the format it came in.

    Attributes:
        text: The text in code points, without a BOM, line endings exactly as in the bytes.
        format: How to encode it back.
    """

    text: str
    format: TextFormat


def _ties(
    results: charset_normalizer.CharsetMatches, best: charset_normalizer.CharsetMatch
) -> tuple[str, ...]:
    """Encodings scored as well as ``best`` that decode to different text."""
    text = str(best)
    out: list[str] = []
    for match in results:
        if match is best or match.encoding in out:
            continue
        if (
            abs(match.chaos - best.chaos) < _SAME_CHAOS
            and abs(match.coherence - best.coherence) <= _SAME_COHERENCE
            and str(match) != text
        ):
            out.append(match.encoding)
    return tuple(out)


def decode_bytes(data: bytes) -> DecodedText:
    """Decode a file's bytes exactly.

    Args:
        data: The whole file.

    Returns:
        The text and its format; ``encode_text(result.text, result.format) == data``.

    Raises:
        UndecodableError: The bytes look binary (NUL bytes), or no encoding decodes them so
            that encoding again restores every byte.
    """
    if data.startswith(UTF8_BOM):
        try:
            return DecodedText(
                text=data[len(UTF8_BOM) :].decode(UTF8), format=TextFormat(encoding=UTF8_SIG)
            )
        except UnicodeDecodeError as exc:
            raise UndecodableError(
                f"it starts with a UTF-8 byte-order mark but byte {exc.start + len(UTF8_BOM)} "
                "is not valid UTF-8"
            ) from None
    if b"\x00" in data and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise UndecodableError("it does not look like text (it contains NUL bytes)")
    try:
        return DecodedText(text=data.decode(UTF8), format=PLAIN_UTF8)
    except UnicodeDecodeError:
        pass
    results = charset_normalizer.from_bytes(data)
    best = results.best()
    if best is None:
        why = "it contains NUL bytes" if b"\x00" in data else "no text encoding fits its bytes"
        raise UndecodableError(f"it does not look like text ({why})")
    encoding = best.encoding
    try:
        text = data.decode(encoding)
        exact = text.encode(encoding) == data
    except (UnicodeError, LookupError):
        exact = False
    if not exact:
        raise UndecodableError(
            f"its bytes are not exact text in {encoding}, the closest encoding found"
        )
    if "\x00" in text and encoding not in ("utf_16", "utf_32"):
        raise UndecodableError("it does not look like text (it contains NUL bytes)")
    return DecodedText(
        text=text, format=TextFormat(encoding=encoding, alternatives=_ties(results, best))
    )


def encode_text(text: str, fmt: TextFormat) -> bytes:
    """Encode ``text`` in ``fmt`` (a BOM included when the format has one).

    Raises:
        UnencodableError: A character has no representation in the encoding (the message
            names it and its code-point offset).
    """
    try:
        return text.encode(fmt.encoding)
    except UnicodeEncodeError as exc:
        char = text[exc.start]
        raise UnencodableError(
            f"{char!r} (U+{ord(char):04X}, character {exc.start}) cannot be written in "
            f"{fmt.describe()}"
        ) from None


def changed_span(old: str, new: str) -> tuple[int, int, int]:
    """The common prefix and suffix of two texts (code points).

    Returns:
        ``(prefix, old_end, new_end)``: ``old[:prefix] == new[:prefix]`` and
        ``old[old_end:] == new[new_end:]``, with ``prefix <= old_end`` and
        ``prefix <= new_end``.
    """
    limit = min(len(old), len(new))
    # Binary searches over slice comparisons (memcmp in C): a character loop in Python took
    # ~40 ms a megabyte (docs/lab/performance.md).
    low, high = 0, limit  # old[:low] == new[:low]; the common prefix is at most high
    while low < high:
        mid = (low + high + 1) // 2
        if old[low:mid] == new[low:mid]:
            low = mid
        else:
            high = mid - 1
    prefix = low
    a, b = len(old), len(new)
    low, high = 0, limit - prefix  # the last low characters match; the suffix is at most high
    while low < high:
        mid = (low + high + 1) // 2
        if old[a - mid : a - low] == new[b - mid : b - low]:
            low = mid
        else:
            high = mid - 1
    return prefix, a - low, b - low


def _depends_on_guess(inserted: str, fmt: TextFormat) -> bool:
    """Whether ``inserted`` would get other bytes (or none) in an equally likely encoding."""
    if inserted.isascii() or not fmt.alternatives:
        return False
    try:
        mine = inserted.encode(fmt.encoding)
    except UnicodeEncodeError:
        return False  # encode_text reports the character itself
    for other in fmt.alternatives:
        try:
            if inserted.encode(other) != mine:
                return True
        except (UnicodeEncodeError, LookupError):
            return True
    return False


def encode_change(old_data: bytes, old_text: str, new_text: str, fmt: TextFormat) -> bytes:
    """The bytes of ``new_text``, byte-identical to ``old_data`` outside the changed span.

    Args:
        old_data: The file's bytes now (``old_text`` encoded in ``fmt``).
        old_text: The decoded text of ``old_data``.
        new_text: The text to write.
        fmt: The file's format.

    Raises:
        UnencodableError: A new character is not representable in the encoding; a legacy
            encoding is ambiguous (``fmt.alternatives``) and the new text would get other
            bytes in another candidate, so its bytes would depend on a guess; or the encoder
            would change bytes outside the changed span (a stateful encoding).
    """
    prefix, old_end, new_end = changed_span(old_text, new_text)
    inserted = new_text[prefix:new_end]
    if _depends_on_guess(inserted, fmt):
        candidates = ", ".join((fmt.encoding, *fmt.alternatives))
        raise UnencodableError(
            f"its encoding is ambiguous ({candidates} fit its bytes equally well) and the new "
            "non-ASCII text would get different bytes in each; write the change in ASCII or "
            "ask the person to open the file in the editor"
        )
    new_data = encode_text(new_text, fmt)
    head = len(encode_text(old_text[:prefix], fmt)) if prefix else 0
    tail = len(old_data) - len(encode_text(old_text[:old_end], fmt))
    if (
        head + tail > len(new_data)
        or new_data[:head] != old_data[:head]
        or new_data[len(new_data) - tail :] != old_data[len(old_data) - tail :]
    ):
        raise UnencodableError(
            f"writing the change in {fmt.describe()} would alter bytes outside it"
        )
    return new_data


def _new_file_mode() -> int:
    """The mode ``open()`` would give a new file (0o666 less the umask); mkstemp uses 0o600."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temp file in the same folder, then rename.

    A reader sees either the old or the new bytes, never a mix; an existing file keeps its
    mode, a new one gets the usual 0o666 less the umask.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _new_file_mode()
    with contextlib.suppress(FileNotFoundError):
        mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".cadenza-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
