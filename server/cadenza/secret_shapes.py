"""Credentials recognised by their shape alone: vendor tokens, key blocks, secret assignments.

The vendor token patterns follow the rules of two maintained scanners, narrowed or widened where
noted: Yelp's detect-secrets 1.5 plugins (Apache-2.0: ``aws``, ``github_token``, ``slack``,
``stripe``, ``jwt``, ``private_key``, ``npm``) and gitleaks 8 ``config/gitleaks.toml`` (MIT:
``github-fine-grained-pat``, ``gitlab-pat``, ``anthropic-api-key``, ``openai-api-key``,
``gcp-api-key``, ``huggingface-access-token``). They are copied rather than imported:
detect-secrets costs about 1.8 s of import (it loads every plugin and ``requests``) in a server
whose cold start matters, and it has no rule for Anthropic, Google or current OpenAI keys.

Code the agent reads must stay readable, so an assignment counts only when its name ends in a
secret word (``password``, ``api_key``, ``clientSecret``, ``auth_token``) and its value looks
like a secret: a string literal or a bare value that is not a reference (``$X``, ``<your key>``),
not a plain word or identifier (``"bearer"``, ``"api_key"``, ``str``), not a colour or a
placeholder (``"#cccccc"``, ``"hf_..."``), and, bare, holds a digit and is no attribute or name
in code (``token = tokenize(x)``, ``password: str``, ``key = settings.KEY_2``,
``f(private_key: Ed25519Key, ...)`` stay). A private key's block holds only a key's lines, so
code naming its header and end line stays too.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 6
"""Shorter values are not treated as secrets: replacing them would mangle ordinary text."""

_AWS_START = r"(?<![A-Z0-9])(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)"
"""An AWS key id's first four characters, after anything but a capital or a digit: an id glued
to a name (``prefix_AKIA…``, ``awsAKIA…``) is still one, a longer run of capitals is none."""
_TOKEN_PREFIXES = (
    r"\b(?:(?:ghp|gho|ghu|ghs|ghr)_|github_pat_|glpat-|xox[abposr]-|sk-ant-|sk-|[rs]k_(?:live|test)_"
    r"|AIza(?=[\w-]{4})|npm_(?=[A-Za-z0-9]{4})|hf_(?=[A-Za-z0-9]{4})|eyJ(?=[\w-]{4}))"
    rf"|{_AWS_START}(?=[0-9A-Z]{{4}})"
)
"""How each token below begins: a text cut right after one of these ends inside a token."""
_TOKENS = re.compile(
    rf"{_AWS_START}[0-9A-Z]{{16}}(?![0-9A-Z])"  # AWS access key id
    r"|\b(?:"
    r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36,}"  # GitHub classic / OAuth / app tokens
    r"|github_pat_[A-Za-z0-9_]{22,}"  # GitHub fine-grained token
    r"|glpat-[\w-]{20,}"  # GitLab personal access token
    r"|xox[abposr]-[0-9A-Za-z-]{10,}"  # Slack
    r"|sk-ant-[\w-]{20,}"  # Anthropic
    r"|sk-(?:proj-|svcacct-|admin-)?(?=[\w-]*\d)[\w-]{20,}"  # OpenAI (and compatible)
    r"|[rs]k_(?:live|test)_[0-9A-Za-z]{10,}"  # Stripe secret / restricted key
    r"|AIza[\w-]{35}"  # Google API key
    r"|npm_[A-Za-z0-9]{36}"  # npm
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*"  # JSON Web Token (header.payload.signature)
    r")"
)
_TOKEN_HEADS = (
    *("A3T", "ABIA", "ACCA", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    *("github_pat_", "glpat-", "xox", "sk-", "k_live_", "k_test_", "AIza", "npm_", "hf_", "eyJ"),
)
"""What each token of ``_TOKENS`` holds (case kept): only lines with one are searched."""
_CUT_TOKEN = re.compile(rf"(?:{_TOKEN_PREFIXES})[\w.-]*\Z")
"""A token's head at the end of a piece whose rest was cut off."""

_KEY_LINE_BREAK = r"(?:\r?\n|\\(?:r\\)?n)"
"""A line break in a key: a real one, or ``\\n`` written out in a JSON or code string."""
_KEY_BLOCK = re.compile(
    r"(-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----)"
    r"(?:[\w\s+/=\\:,.-]{0,20000}?(-----END \2PRIVATE KEY(?: BLOCK)?-----)"
    rf"|(?:{_KEY_LINE_BREAK}(?:[ \t]*{_KEY_LINE_BREAK})?[ \t]*"
    r"(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset):[^\r\n\\]*))*"
    rf"(?:{_KEY_LINE_BREAK}[ \t]*[A-Za-z0-9+/=]+\Z)?)",
)
"""A PEM / OpenSSH / PGP private key: the whole block, or from its header on when no end line
follows (a read or an output cut inside it) as far as its base64 and header lines run. The text
between the header and the end line holds only what a key's lines hold: code that names both
lines (``BEGIN = "-----BEGIN ..."`` and ``END = "-----END ..."``) is no key."""
_KEY_BLOCK_TAIL = re.compile(
    r"\A(?:[ \t]*[A-Za-z0-9+/=]*\r?\n)+(?=-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)"
)
"""A key's base64 lines before its end line, at the start of a piece cut inside the key."""
_KEY_BODY_LINE = re.compile(
    r"(?:(?<=\\n)|(?<![A-Za-z0-9+/]))"
    r"(?=[A-Za-z0-9+/]*[0-9])(?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*[A-Z])"
    r"(?:[A-Za-z0-9+/]{70}|[A-Za-z0-9+/]{64})(?![A-Za-z0-9+/=])"
)
"""A full line of a key's body wherever it stands (PEM and PGP wrap base64 at 64 characters,
OpenSSH at 70): a piece that holds neither the header nor the end line (a completion's window
in the middle of a key, a search's matching lines, a key quoted line by line in code) still
shows none of it. Mixed case and a digit: hex digests and identifiers are not keys."""

_SECRET_WORD = re.compile(
    r"(?:pass(?:word|wd|phrase)|(?<![a-z])pass|(?<![a-z])pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|secret[_-]?key|auth[_-]?key|account[_-]?key|encryption[_-]?key|signing[_-]?key"
    r"|master[_-]?key|credentials?|client[_-]?secret)\Z",
    re.I,
)
"""A name ends in one of these to hold a secret (``db_password``, ``apiKey``, ``AUTH_TOKEN``)."""
_NAME = r"(?<![\w$-])([\"']?)([A-Za-z_][\w.-]*?)\1\]?"
_KEYWORD = re.compile(
    _NAME + r"[ \t]*(?::[ \t]*[A-Za-z_][\w\[\]|., ]*?[ \t]*(?==[^=]))?"
    r"(:=|=>|=(?!=)|:(?!:))[ \t]*"
    r"(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^\s\"'`,;(){}\[\]<>]+)(?![\w(\[.]))"
)
"""``name = "v"``, ``name: 'v'``, ``"name": "v"``, ``name: str = "v"``, ``name: v``."""
_CUT_KEYWORD = re.compile(_NAME + r"[ \t]*(?::=|=>|=|:)[ \t]*([\"']?)([^\s\"'`]*)\Z")
"""An assignment whose value runs into the end of a piece (its closing quote cut off too)."""
_AUTHORIZATION = re.compile(
    r"\b((?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:(?:bearer|basic|token|digest|bot)[ \t]+)?)([\w.~+/=-]{6,})",
    re.I,
)
"""An HTTP ``Authorization`` header's credentials, whatever the scheme (kept when a word)."""
_BEARER = re.compile(r"\b(bearer[ \t]+)([\w.~+/-]{16,}=*)", re.I)
"""``Bearer <token>`` anywhere else (a curl command, a log line)."""
_CUT_AUTHORIZATION = re.compile(
    r"\b((?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:(?:bearer|basic|token|digest|bot)[ \t]+)?|bearer[ \t]+)[\w.~+/=-]+\Z",
    re.I,
)
_HINTS = ("pass", "pwd", "secret", "token", "key", "credential", "authorization", "bearer")
"""Words every match of ``_KEYWORD``, ``_AUTHORIZATION`` and ``_BEARER`` holds (lower case):
only lines with one are searched. Those patterns never span lines, and run over a whole file of
code they took three times as long as the rest of ``redact``."""
_REFERENCE = ("$", "%", "<", "{", "[", REDACTED)
"""Values that name another value rather than hold one."""
_WORD = re.compile(r"[a-z]+(?:[-_.][a-z]+)*|[A-Z]+(?:[-_.][A-Z]+)*|[A-Z][a-z]+(?:-[A-Z][a-z]+)*")
"""A plain word or identifier (``bearer``, ``api_key``, ``X-Api-Key``...): not a secret."""
_NOT_SECRET = re.compile(r"#[0-9A-Fa-f]{3,8}|.*(?:\.\.\.|…).*|(.)\1*|[a-z]+-\d{1,3}")
"""A colour (``Token: "#cccccc"``), a placeholder (``"hf_..."``, ``"xxxxxxxx"``), a numbered
label (an LSP progress token ``"progress-1"``)."""
_CONSTANTS = frozenset({"None", "True", "False", "null", "true", "false", "nil", "undefined"})
"""Bare values that are a language's constants."""
_ATTRIBUTE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
"""A bare value that names an attribute (``settings.SECRET_KEY_2``, ``process.env.TOKEN1``)."""


def redact_shapes(text: str) -> str:
    """``text`` with vendor tokens, private keys and secret assignments as ``[redacted]``."""
    text = _on_lines(text, _TOKEN_HEADS, functools.partial(_TOKENS.sub, REDACTED))
    if "PRIVATE KEY" in text:
        text = _KEY_BLOCK.sub(_key_block, text)
        text = _KEY_BLOCK_TAIL.sub(f"{REDACTED}\n", text)
    text = _KEY_BODY_LINE.sub(REDACTED, text)
    return _on_lines(text, _HINTS, _redact_line, fold=True)


def _on_lines(
    text: str, hints: tuple[str, ...], redact: Callable[[str], str], *, fold: bool = False
) -> str:
    """``text`` with ``redact`` applied to each of its lines that holds one of ``hints``.

    ``fold``: the hints are lower case, and found in any case. The patterns applied never span
    lines, and a search with ``str.find`` costs little next to a pattern's over every line.
    """
    seek = text.lower() if fold else text
    if len(seek) != len(text):  # a character whose lower case is longer: search it all
        return redact(text)
    lines: set[tuple[int, int]] = set()
    for hint in hints:
        at = seek.find(hint)
        while at >= 0:
            end = seek.find("\n", at)
            end = len(seek) if end < 0 else end
            lines.add((seek.rfind("\n", 0, at) + 1, end))
            at = seek.find(hint, end)
    pieces: list[str] = []
    done = 0
    for start, end in sorted(lines):
        pieces += (text[done:start], redact(text[start:end]))
        done = end
    return "".join([*pieces, text[done:]]) if pieces else text


def _redact_line(line: str) -> str:
    line = _AUTHORIZATION.sub(_authorization, line)
    line = _BEARER.sub(rf"\1{REDACTED}", line)
    return _KEYWORD.sub(_keyword, line)


def redact_cut_end(text: str) -> str:
    """``text`` (cut after its end) with a token or secret value running into the cut hidden."""
    text = _CUT_TOKEN.sub(REDACTED, text)
    text = _CUT_AUTHORIZATION.sub(rf"\1{REDACTED}", text)
    cut = _CUT_KEYWORD.search(text)
    if (
        cut
        and _SECRET_WORD.search(cut[2])
        and not cut[0].endswith(REDACTED)
        and (cut[3] or not _code_value(cut[4]))
    ):
        text = text[: cut.start()] + _mask_cut_value(cut[0])
    return text


def _code_value(value: str) -> bool:
    """A bare value that is code, not the head of a secret.

    A piece cut after whole lines (an inline completion's context) ends in a whole line:
    ``token = self.token``, ``"token": token,``.
    """
    return (
        bool(_ATTRIBUTE.fullmatch(value))
        or value in _CONSTANTS
        or any(c in value for c in "()[]{},;|")
    )


def _mask_cut_value(assignment: str) -> str:
    """``name = "partial`` → ``name = "[redacted]`` (the separator and quote kept)."""
    match = re.match(r"(.*?(?::=|=>|=|:)[ \t]*[\"']?)(.*)\Z", assignment, re.S)
    assert match is not None  # _CUT_KEYWORD matched this text
    return match[1] + REDACTED if match[2] else assignment


def _authorization(match: re.Match[str]) -> str:
    if not _looks_secret(match[2], bare=True):
        return match[0]
    return match[1] + REDACTED


def _key_block(match: re.Match[str]) -> str:
    if match[0] == match[1]:  # a header and no key lines after it (code naming the header)
        return match[0]
    end = match[3] or ""
    escaped = match[0][len(match[1]) :].startswith(("\\n", "\\r\\n"))
    brk = "\\n" if escaped else "\n"  # a key in a JSON string keeps its line written out
    return f"{match[1]}{brk}{REDACTED}{brk}{end}" if end else f"{match[1]}{brk}{REDACTED}"


def _keyword(match: re.Match[str]) -> str:
    """A secret-named assignment with its value hidden when the value looks like a secret."""
    double, single, bare = match[4], match[5], match[6]
    value = next(v for v in (double, single, bare) if v is not None)
    if not _SECRET_WORD.search(match[2]) or not _looks_secret(value, bare=bare is not None):
        return match[0]
    if bare is not None and (
        _ATTRIBUTE.fullmatch(value) or match.string.startswith((",", ")", "]", "|"), match.end())
    ):
        return match[0]  # an attribute, or a name in code: an argument, an annotation
    start = match.end() - match.start() - len(value) - (0 if bare is not None else 1)
    return f"{match[0][:start]}{REDACTED}{match[0][start + len(value) :]}"


def _looks_secret(value: str, *, bare: bool) -> bool:
    if len(value) < MIN_SECRET_LENGTH or value.startswith(_REFERENCE) or _WORD.fullmatch(value):
        return False
    if _NOT_SECRET.fullmatch(value):
        return False
    if bare:
        return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    return not any(c.isspace() for c in value) and not value.startswith(("http", "/"))
