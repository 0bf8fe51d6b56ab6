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
not a plain word or identifier (``"bearer"``, ``"api_key"``, ``str``), and, bare, holds a digit
(``token = tokenize(x)``, ``password: str`` and ``password: Optional[str]`` stay).
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 6
"""Shorter values are not treated as secrets: replacing them would mangle ordinary text."""

_TOKEN_PREFIXES = (
    r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)(?=[0-9A-Z]{4})"
    r"|(?:ghp|gho|ghu|ghs|ghr)_|github_pat_|glpat-|xox[abposr]-|sk-ant-|sk-|[rs]k_(?:live|test)_"
    r"|AIza(?=[\w-]{4})|npm_(?=[A-Za-z0-9]{4})|hf_(?=[A-Za-z0-9]{4})|eyJ(?=[\w-]{4})"
)
"""How each token below begins: a text cut right after one of these ends inside a token."""
_TOKENS = re.compile(
    r"\b(?:"
    r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS access key id
    r"|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36,}"  # GitHub classic / OAuth / app tokens
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
_CUT_TOKEN = re.compile(rf"\b(?:{_TOKEN_PREFIXES})[\w.-]*\Z")
"""A token's head at the end of a piece whose rest was cut off."""

_KEY_BLOCK = re.compile(
    r"(-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----)"
    r"(?:.{0,20000}?(-----END \2PRIVATE KEY(?: BLOCK)?-----)|(?:\r?\n[ \t]*[\w+/=:, -]*)*)",
    re.S,
)
"""A PEM / OpenSSH / PGP private key: the whole block, or from its header on when no end line
follows (a read or an output cut inside it) as far as its base64 lines run."""
_KEY_BLOCK_TAIL = re.compile(
    r"\A(?:[ \t]*[A-Za-z0-9+/=]*\r?\n)+(?=-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)"
)
"""A key's base64 lines before its end line, at the start of a piece cut inside the key."""

_SECRET_WORD = re.compile(
    r"(?:pass(?:word|wd|phrase)|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|secret[_-]?key|auth[_-]?key|credentials?|client[_-]?secret)\Z",
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
_CUT_KEYWORD = re.compile(_NAME + r"[ \t]*(?::=|=>|=|:)[ \t]*([\"']?)[^\s\"'`]*\Z")
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
_REFERENCE = ("$", "%", "<", "{", "[", REDACTED)
"""Values that name another value rather than hold one."""
_WORD = re.compile(r"[a-z]+(?:[-_.][a-z]+)*|[A-Z]+(?:[-_.][A-Z]+)*|[A-Z][a-z]+(?:-[A-Z][a-z]+)*")
"""A plain word or identifier (``bearer``, ``api_key``, ``X-Api-Key``...): not a secret."""


def redact_shapes(text: str) -> str:
    """``text`` with vendor tokens, private keys and secret assignments as ``[redacted]``."""
    text = _TOKENS.sub(REDACTED, text)
    if "PRIVATE KEY" in text:
        text = _KEY_BLOCK.sub(_key_block, text)
        text = _KEY_BLOCK_TAIL.sub(f"{REDACTED}\n", text)
    text = _AUTHORIZATION.sub(_authorization, text)
    text = _BEARER.sub(rf"\1{REDACTED}", text)
    if ":" in text or "=" in text:
        text = _KEYWORD.sub(_keyword, text)
    return text


def redact_cut_end(text: str) -> str:
    """``text`` (cut after its end) with a token or secret value running into the cut hidden."""
    text = _CUT_TOKEN.sub(REDACTED, text)
    text = _CUT_AUTHORIZATION.sub(rf"\1{REDACTED}", text)
    cut = _CUT_KEYWORD.search(text)
    if cut and _SECRET_WORD.search(cut[2]) and not cut[0].endswith(REDACTED):
        text = text[: cut.start()] + _mask_cut_value(cut[0])
    return text


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
    end = match[3] or ""
    return f"{match[1]}\n{REDACTED}\n{end}" if end else f"{match[1]}\n{REDACTED}"


def _keyword(match: re.Match[str]) -> str:
    """A secret-named assignment with its value hidden when the value looks like a secret."""
    double, single, bare = match[4], match[5], match[6]
    value = next(v for v in (double, single, bare) if v is not None)
    if not _SECRET_WORD.search(match[2]) or not _looks_secret(value, bare=bare is not None):
        return match[0]
    start = match.end() - match.start() - len(value) - (0 if bare is not None else 1)
    return f"{match[0][:start]}{REDACTED}{match[0][start + len(value) :]}"


def _looks_secret(value: str, *, bare: bool) -> bool:
    if len(value) < MIN_SECRET_LENGTH or value.startswith(_REFERENCE) or _WORD.fullmatch(value):
        return False
    if bare:
        return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    return not any(c.isspace() for c in value) and not value.startswith(("http", "/"))
