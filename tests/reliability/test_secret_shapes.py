"""Credentials recognised by their shape: a URL's password, a secret-named assignment's value.

They are nobody's registered key (a database URL in a config file, a token a command prints),
so they are found by how they look, at every exit ``redact`` serves, and before any cut.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import pytest

from cadenza.messages import ToolCall
from cadenza.secrets import REDACTED, RedactingFilter, redact, redact_piece, redact_then_cut
from cadenza.tools.base import ToolContext
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.read import MAX_LINE_CHARS
from cadenza.tools.registry import default_tools
from cadenza.tools.shell import DEFAULT_MAX_OUTPUT_BYTES
from tests.doubles import MemoryEditor


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://user:pass123@host/x", f"https://user:{REDACTED}@host/x"),
        ("postgres://app:s3cr@t@db:5432/app", f"postgres://app:{REDACTED}@db:5432/app"),
        ("redis://:hunter2@cache:6379/0", f"redis://:{REDACTED}@cache:6379/0"),
        (
            "mongodb+srv://me:pw@cluster0.example.net",
            f"mongodb+srv://me:{REDACTED}@cluster0.example.net",
        ),
        ("amqp://guest:guest@localhost", f"amqp://guest:{REDACTED}@localhost"),
        (
            "git clone https://ghp_0123456789abcdefghijKLMN@github.com/o/r",
            f"git clone https://{REDACTED}@github.com/o/r",
        ),
        ("PGPASSWORD=hunter2 psql -h db", f"PGPASSWORD={REDACTED} psql -h db"),
        ("export GITHUB_PAT=ghp_123456", f"export GITHUB_PAT={REDACTED}"),
        ("STRIPE_SECRET=sk_live_1", f"STRIPE_SECRET={REDACTED}"),
        ("DB_PASSWORD='two words'", f"DB_PASSWORD='{REDACTED}'"),
        ('OPENAI_API_KEY="sk-abc"', f'OPENAI_API_KEY="{REDACTED}"'),
        ("AWS_SECRET_ACCESS_KEY=abc/def+g", f"AWS_SECRET_ACCESS_KEY={REDACTED}"),
        ("NPM_TOKEN=npm_x; npm publish", f"NPM_TOKEN={REDACTED}; npm publish"),
        (
            'environment: ["POSTGRES_PASSWORD=example"]',
            f'environment: ["POSTGRES_PASSWORD={REDACTED}"]',
        ),
    ],
)
def test_credentials_are_redacted_by_shape(text: str, shown: str) -> None:
    assert redact(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "ssh://git@github.com:22/o/r",  # a user name, no password
        "https://github.com:443/o/r@main",
        "http://localhost:8080/path?a=b",
        "MONKEY=banana",  # KEY inside a word
        "KEY=value",
        "myAPI_KEY=abc",
        "TOKENIZERS_PARALLELISM=false",
        "MAX_TOKENS=100",
        "OLDPWD=/home/me",
        "models.AutoField(primary_key=True)",  # code: lower-case names are not env-style
        "connect(user=user, password=password)",
        "API_KEY = os.environ['API_KEY']",  # spaced: an assignment in code, not a value
        "GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",  # a reference, not the secret
        "API_KEY=$API_KEY",
        "SECRET_KEY=",
        "a == b and c=d",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_a_password_across_a_cut_is_redacted_before_it() -> None:
    url = "postgres://app:" + os.urandom(16).hex() + "@db/app"
    for at in range(5, 45, 5):
        text = "x" * (100 - at) + url
        cut = redact_then_cut(text, 100)
        assert url.split(":")[2][:8] not in cut, at
    naive = ("x" * 75 + url)[:100]  # cut first: the password's head went out
    assert url.split(":")[2][:8] in naive


def test_a_piece_cut_inside_a_value_masks_what_is_left() -> None:
    assert redact_piece('log\nPGPASSWORD="hunt', cut_after=True) == f'log\nPGPASSWORD="{REDACTED}'
    assert redact_piece("log\npostgres://app:hunt", cut_after=True) == (
        f"log\npostgres://app:{REDACTED}"
    )
    assert redact_piece("log\nFOO=bar", cut_after=True) == "log\nFOO=bar"


def test_log_records_are_redacted_by_shape_without_a_registered_key() -> None:
    record = logging.LogRecord(
        "cadenza.any", logging.INFO, __file__, 1, "dsn %s", ("redis://:pw123@cache",), None
    )
    assert RedactingFilter().filter(record)
    assert record.getMessage() == f"dsn redis://:{REDACTED}@cache"


async def _result(root: Path, name: str, **arguments: object) -> str:
    prepared = prepare(
        ToolCall(id="1", name=name, arguments=json.dumps(arguments)), default_tools()
    )
    assert isinstance(prepared, PreparedCall)
    return (await run(prepared, ToolContext(root=root, host=MemoryEditor()))).content


async def test_read_file_redacts_a_long_line_before_cutting_it(tmp_path: Path) -> None:
    secret = os.urandom(24).hex()
    line = "x" * (MAX_LINE_CHARS - 20) + f" GITHUB_PAT={secret}"
    (tmp_path / "deploy.sh").write_text(line + "\n")
    content = await _result(tmp_path, "read_file", path="deploy.sh")
    assert "line cut at" in content
    assert secret[:6] not in content


async def test_run_command_output_cut_inside_a_value(tmp_path: Path) -> None:
    secret = os.urandom(24).hex()
    half = DEFAULT_MAX_OUTPUT_BYTES // 2
    script = (
        "import sys\n"
        f"sys.stdout.write('h' * ({half} - 31) + '\\nDB_PASSWORD={secret}' + 'm' * 100000)\n"
        "sys.stdout.write('\\n')\n"
    )
    (tmp_path / "emit.py").write_text(script)
    content = await _result(tmp_path, "run_command", command=f"{sys.executable} emit.py")
    assert "bytes omitted" in content
    assert f"DB_PASSWORD={REDACTED}" in content
    assert secret[:6] not in content
