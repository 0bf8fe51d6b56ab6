r"""File bytes ↔ text, exactly: encodings, byte-order marks and line endings.

Three rules, so an edit never damages what it does not touch (field cases F04, F05):

- **Decoding is deliberate.** UTF-8 first (strict; a leading UTF-8 BOM is remembered, not
  kept in the text); otherwise the encoding is detected with ``charset-normalizer`` (never
  guessed by hand) and accepted only when decoding and encoding again gives back the very
  same bytes. Bytes that no encoding decodes exactly (binary files, damaged text) are refused
  with ``UndecodableError``: such a file is never rewritten lossily.
- **Encoding keeps the bytes outside the change.** ``encode_change`` re-encodes the new text
  in the file's own format and checks that every byte before and after the changed span is
  the original byte; otherwise it refuses (``UnencodableError``), e.g. for new characters
  that the file's legacy encoding cannot represent.
- **Line endings are the file's.** Lines are split by the LSP rules (``\n``, ``\r\n``, ``\r``;
  LSP 3.17 §Text Documents), never by ``str.splitlines``. ``carry_line_endings`` gives the
  lines of a replacement the endings of the lines they replace, and new lines the file's
  dominant ending, whatever endings the model typed.

Offsets in this module count code points (Python ``str`` indices) unless they say bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import charset_normalizer

from cadenza.tools.linediff import line_opcodes

UTF8 = "utf-8"
UTF8_SIG = "utf-8-sig"
"""Python's codec for UTF-8 with a BOM: decoding drops one leading BOM, encoding writes it."""
UTF8_BOM = b"\xef\xbb\xbf"

LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""An LSP line terminator (LSP 3.17 §Text Documents, ``EOL``)."""
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def lines_with_ends(text: str) -> list[str]:
    r"""``text`` split after each ``\r\n``, ``\r`` or ``\n`` only, breaks kept.

    Unlike ``str.splitlines`` a form feed, ``\x1c``-``\x1e`` or U+2028 does not end a line,
    so line numbers agree with editors (LSP counts these three breaks only).
    """
    return _LINE.findall(text)


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
    # ~40 ms a megabyte (docs/performance.md).
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


# --- line endings -------------------------------------------------------------------------


def split_ending(text: str) -> list[tuple[str, str]]:
    """Split ``text`` into ``(content, ending)`` pairs by LSP line rules.

    The last pair has ending ``""`` (it is ``("", "")`` when the text ends with a line break).
    """
    pieces: list[tuple[str, str]] = []
    start = 0
    for match in LINE_BREAK.finditer(text):
        pieces.append((text[start : match.start()], match.group()))
        start = match.end()
    pieces.append((text[start:], ""))
    return pieces


_LONE_LF = re.compile(r"(?<!\r)\n")
_LONE_CR = re.compile(r"\r(?!\n)")


def dominant_line_ending(text: str, default: str = "\n") -> str:
    """The most frequent line ending of ``text`` (the first seen wins a tie), or ``default``."""
    # Counted with str.count (C speed); a regex scan into a Counter took ~100 ms for 10 MB.
    crlf = text.count("\r\n")
    counts = {"\r\n": crlf, "\n": text.count("\n") - crlf, "\r": text.count("\r") - crlf}
    most = max(counts.values())
    if most == 0:
        return default
    tied = [ending for ending, count in counts.items() if count == most]
    if len(tied) == 1:
        return tied[0]
    first = {"\r\n": text.find("\r\n")}
    for ending, pattern in (("\n", _LONE_LF), ("\r", _LONE_CR)):
        found = pattern.search(text)
        first[ending] = found.start() if found else len(text)
    return min(tied, key=lambda ending: first[ending])


def _pair_endings(
    old: list[tuple[str, str]], new: list[tuple[str, str]], default: str
) -> list[str]:
    """For each new line with a break: the ending of the old line it replaces, or ``default``.

    Lines equal at both ends pair up directly (cheap for whole-file rewrites); the middle is
    paired by a line diff of the contents (``linediff``, linear for a sparse change at any
    length, so a long file's lines are never paired by position past a distant change).
    """
    endings = [default if ending else "" for _, ending in new]

    def pair(i: int, j: int) -> None:
        if new[j][1] and old[i][1]:
            endings[j] = old[i][1]

    n, m = len(old), len(new)
    head = 0
    while head < min(n, m) and old[head][0] == new[head][0]:
        pair(head, head)
        head += 1
    tail = 0
    while tail < min(n, m) - head and old[n - 1 - tail][0] == new[m - 1 - tail][0]:
        pair(n - 1 - tail, m - 1 - tail)
        tail += 1
    old_mid, new_mid = old[head : n - tail], new[head : m - tail]
    for tag, i1, i2, j1, j2 in line_opcodes([c for c, _ in old_mid], [c for c, _ in new_mid]):
        if tag != "insert":
            for k in range(min(i2 - i1, j2 - j1)):
                pair(head + i1 + k, head + j1 + k)
    return endings


def carry_line_endings(old: str, new: str, default: str) -> str:
    r"""``new`` with line endings taken from ``old``, the text it replaces.

    Lines of ``new`` that correspond to lines of ``old`` (equal or replaced, paired by a line
    diff) keep the ending their old line had; every other line break becomes ``default``.
    The endings the model typed never matter, so an edit written with ``\n`` lands in a CRLF
    file with CRLF, and untouched lines of a mixed file keep their own endings.

    Args:
        old: The replaced text.
        new: The replacement as written.
        default: The ending of new lines, normally ``dominant_line_ending`` of the file.
    """
    new_pieces = split_ending(new)
    endings = _pair_endings(split_ending(old), new_pieces, default)
    return "".join(
        content + ending for (content, _), ending in zip(new_pieces, endings, strict=True)
    )
