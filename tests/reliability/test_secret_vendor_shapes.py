"""Vendor tokens, private keys, headers and code-style assignments are redacted by shape.

Tokens are built from random characters at run time: none is a real credential, and each
test checks that no 8-character piece of the secret part is left in what would leave.
"""

from __future__ import annotations

import random
import string

import pytest

from cadenza.secrets import REDACTED, redact, redact_piece, redact_then_cut

_rng = random.Random(7)


def _chars(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        if alphabet == string.digits or (
            any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
        ):
            return value


UPPER = string.ascii_uppercase + string.digits
TOKENS = {
    "aws access key id": "AKIA" + _chars(16, UPPER),
    "aws session key id": "ASIA" + _chars(16, UPPER),
    "github classic": "ghp_" + _chars(36),
    "github oauth": "gho_" + _chars(36),
    "github app": "ghs_" + _chars(36),
    "github fine-grained": "github_pat_11" + _chars(20) + "_" + _chars(59),
    "gitlab": "glpat-" + _chars(20),
    "slack bot": "xoxb-" + _chars(11, string.digits) + "-" + _chars(24),
    "slack user": "xoxp-" + _chars(11, string.digits) + "-" + _chars(11, string.digits),
    "openai legacy": "sk-" + _chars(48),
    "openai project": "sk-proj-" + _chars(40) + "_" + _chars(40),
    "anthropic": "sk-ant-api03-" + _chars(90) + "AA",
    "stripe live": "sk_live_" + _chars(24),
    "stripe restricted": "rk_live_" + _chars(24),
    "google": "AIza" + _chars(35),
    "npm": "npm_" + _chars(36),
    "hugging face": "hf_" + _chars(34),
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + _chars(43),
}


def _leaks(secret: str, text: str) -> bool:
    return any(secret[i : i + 8] in text for i in range(len(secret) - 7))


@pytest.mark.parametrize("token", TOKENS.values(), ids=TOKENS.keys())
@pytest.mark.parametrize(
    "around", ["{}", "export X={}", "value: '{}' end", "curl -u {}:x", '{{"k": "{}"}}', "({})"]
)
def test_vendor_tokens_are_redacted_wherever_they_stand(token: str, around: str) -> None:
    text = around.format(token)
    shown = redact(text)
    assert not _leaks(token, shown), shown
    assert REDACTED in shown


@pytest.mark.parametrize("token", TOKENS.values(), ids=TOKENS.keys())
def test_a_token_cut_at_the_end_of_a_piece_leaks_no_head(token: str) -> None:
    for keep in (6, 12, len(token) // 2, len(token) - 1):
        piece = "output line\n" + token[:keep]
        shown = redact_piece(piece, cut_after=True)
        assert not _leaks(token[:keep], shown), (keep, shown)
        assert shown.startswith("output line\n")


@pytest.mark.parametrize("token", TOKENS.values(), ids=TOKENS.keys())
def test_a_token_across_a_cut_is_redacted_before_it(token: str) -> None:
    for at in range(4, len(token), 7):
        shown = redact_then_cut("x" * (199 - at) + " " + token + " tail", 200)
        assert not _leaks(token, shown), at


def _pem(kind: str) -> tuple[str, str]:
    body = "\n".join(_chars(64, string.ascii_letters + string.digits + "+/") for _ in range(5))
    return f"-----BEGIN {kind}-----\n{body}\n{_chars(20)}==\n-----END {kind}-----", body


@pytest.mark.parametrize(
    "kind", ["RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY"]
)
def test_private_key_blocks_are_redacted_whole(kind: str) -> None:
    block, _ = _pem(kind)
    shown = redact(f"cat id_rsa\n{block}\n$ next")
    assert shown == (
        f"cat id_rsa\n-----BEGIN {kind}-----\n{REDACTED}\n-----END {kind}-----\n$ next"
    )


def test_a_private_key_cut_inside_is_redacted_on_both_sides() -> None:
    block, body = _pem("RSA PRIVATE KEY")
    middle = len(block) // 2
    head, tail = block[:middle], block[middle:]
    assert not _leaks(body, redact_piece(head, cut_after=True))
    assert not _leaks(body, redact(head))  # no end line: hidden to the end of its lines
    shown_tail = redact_piece(tail + "\nafter", cut_before=True)
    assert not _leaks(body, shown_tail[: shown_tail.index("-----END")]), shown_tail
    assert shown_tail.endswith("-----END RSA PRIVATE KEY-----\nafter")


def test_a_public_key_or_certificate_is_left_alone() -> None:
    text = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQ\n-----END PUBLIC KEY-----"
    assert redact(text) == text
    cert = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----"
    assert redact(cert) == cert


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Authorization: Bearer abc123DEF456ghi", f"Authorization: Bearer {REDACTED}"),
        (
            "curl -H 'Authorization: Bearer abc.def.ghi123' https://api",
            f"curl -H 'Authorization: Bearer {REDACTED}' https://api",
        ),
        ("authorization: Basic dXNlcjpwYXNzd29yZA==", f"authorization: Basic {REDACTED}"),
        ('{"Authorization": "token 0a1b2c3d4e5f"}', f'{{"Authorization": "token {REDACTED}"}}'),
        ("Proxy-Authorization: Bearer x9y8z7w6v5", f"Proxy-Authorization: Bearer {REDACTED}"),
        ("sent bearer 0123456789abcdefXYZ to it", f"sent bearer {REDACTED} to it"),
    ],
)
def test_authorization_credentials_are_redacted(text: str, shown: str) -> None:
    assert redact(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ('API_KEY = "v1a2b3c4d5"', f'API_KEY = "{REDACTED}"'),
        ('API_KEY: "v1a2b3c4d5"', f'API_KEY: "{REDACTED}"'),
        ('"password": "hunter22"', f'"password": "{REDACTED}"'),
        ("password: hunter2", f"password: {REDACTED}"),
        ("  db_password: s3cret-Value", f"  db_password: {REDACTED}"),
        ('my_api_key = "zz9yy8xx"', f'my_api_key = "{REDACTED}"'),
        ('token = "abcd1234efgh"', f'token = "{REDACTED}"'),
        ("token = 'Abc-Def_ghiJ'", f"token = '{REDACTED}'"),
        (
            'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
            f'aws_secret_access_key = "{REDACTED}"',
        ),
        ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG", f"aws_secret_access_key={REDACTED}"),
        ('self.password = "S3cr3t!x"', f'self.password = "{REDACTED}"'),
        ("config['secret'] = 'abcdef12'", f"config['secret'] = '{REDACTED}'"),
        ('password: str = "hunter22"', f'password: str = "{REDACTED}"'),
        ('def connect(password="hunter22"):', f'def connect(password="{REDACTED}"):'),
        ('{"clientSecret":"q8w7e6r5t4"}', f'{{"clientSecret":"{REDACTED}"}}'),
        ("const apiKey = 'AbCdEf123456';", f"const apiKey = '{REDACTED}';"),
        ('accessToken := "tok_98765abc"', f'accessToken := "{REDACTED}"'),
        ("'auth_token' => 'f00ba4b4z'", f"'auth_token' => '{REDACTED}'"),
        ("-H 'X-Api-Key: 0123abcdef'", f"-H 'X-Api-Key: {REDACTED}'"),
    ],
)
def test_assignments_as_in_code_and_config_are_redacted(text: str, shown: str) -> None:
    assert redact(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "token = tokenize(x)",
        "token = self.token",
        "password: str",
        "def f(password: str, token: str | None = None) -> None:",
        "token: Optional[str] = None",
        "api_key: str = Field(default=None)",
        "password = password",
        "connect(user=user, password=password)",
        "API_KEY = os.environ['API_KEY']",
        "api_key = os.environ.get('OPENAI_API_KEY')",
        'api_key = os.getenv("API_KEY")',
        'AUTH_TOKEN = "auth_token"',
        'PASSWORD_FIELD = "password"',
        'API_KEY_HEADER = "X-Api-Key"',
        'token_type = "bearer"',
        'header = {"X-Api-Key": api_key}',
        'error_token = "unexpected token"',
        'password = ""',
        'api_key = "<your key here>"',
        'token = "${GITHUB_TOKEN}"',
        'secret = "{{ vault_secret }}"',
        "password: ${DB_PASSWORD}",
        'if token == "abc123def":',
        'TOKEN_URL = "https://example.com/token"',
        "max_tokens: 4096",
        "tokens = 12345678",
        "the risk-assessment-framework-v2-release notes",
        "pip install sk-learn",
        "Authorization: Bearer",
        "Authorization: required",
        "use a Bearer token",
        "primary_key=True",
        "passwords: list[str]",
    ],
)
def test_ordinary_code_is_left_alone(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("piece", "shown"),
    [
        ('log\napi_key = "abc', f'log\napi_key = "{REDACTED}'),
        ("log\npassword: hu", f"log\npassword: {REDACTED}"),
        ('log\n"secret": "x', f'log\n"secret": "{REDACTED}'),
        ("log\nAuthorization: Bearer ab", f"log\nAuthorization: Bearer {REDACTED}"),
        (
            "log\ncurl -H 'Authorization: Basic dXNl",
            f"log\ncurl -H 'Authorization: Basic {REDACTED}",
        ),
        ("log\nmax_tokens: 40", "log\nmax_tokens: 40"),
        ("log\n    token = self.token", "log\n    token = self.token"),
        ('log\n    "token": token,', 'log\n    "token": token,'),
        ("log\ntoken = None", "log\ntoken = None"),
        ("log\ntoken = ", "log\ntoken = "),
    ],
)
def test_a_value_cut_at_the_end_of_a_piece_is_masked(piece: str, shown: str) -> None:
    assert redact_piece(piece, cut_after=True) == shown


def test_code_that_names_a_key_s_header_and_end_line_is_left_alone() -> None:
    code = (
        '_SK_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n'
        '_SK_END = b"-----END OPENSSH PRIVATE KEY-----"\n'
        '_BCRYPT = b"bcrypt"\n'
    )
    assert redact(code) == code
    prose = (
        '"""Reads a key that starts with -----BEGIN RSA PRIVATE KEY-----\n'
        "and ends at its end line, one key per file\n"
        '"""\n'
    )
    assert redact(prose) == prose


def test_a_key_written_out_in_a_json_string_keeps_its_line() -> None:
    _, body = _pem("PRIVATE KEY")
    escaped = body.replace("\n", "\\n")
    line = (
        f'  "private_key": "-----BEGIN PRIVATE KEY-----\\n{escaped}\\n'
        '-----END PRIVATE KEY-----\\n",'
    )
    shown = redact(line)
    assert "\n" not in shown
    assert not _leaks(body.replace("\n", ""), shown.replace("\\n", "")), shown


@pytest.mark.parametrize(
    "text",
    [
        "Token:                 '#cccccc',",
        'api_key="hf_...",  # Pass your HF token',
        'password = "********"',
        "api_key = process.env.API_KEY_2",
        "secret_key = settings.SECRET_KEY_1",
        "def f(self, private_key: MLDSA44Ed25519PrivateKey, f_priv: _FragList) -> None:",
        "connect(host, password=pass_word2)",
        "const options = { token: token2, user };",
    ],
)
def test_colours_placeholders_and_attributes_are_left_alone(text: str) -> None:
    assert redact(text) == text


KEY_LINE = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"
SSH_LINE = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn"


@pytest.mark.parametrize(
    "text",
    [
        f"{KEY_LINE}\n{KEY_LINE}",  # a window in the middle of a key: no header, no end line
        f"12:{KEY_LINE}",  # a search's matching line
        f'    "{KEY_LINE}\\n"',  # a key quoted line by line in code
        f"# {SSH_LINE}",  # OpenSSH wraps at 70
        '"private_key": "-----BEGIN PRIVATE KEY-----\\n' + KEY_LINE + "\\n" + KEY_LINE,
    ],
)
def test_a_key_body_line_is_hidden_without_its_header(text: str) -> None:
    shown = redact(text)
    assert KEY_LINE[8:40] not in shown and SSH_LINE[8:40] not in shown


@pytest.mark.parametrize(
    "text",
    [
        "digest = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'",
        "x" + KEY_LINE,  # 65 characters: not a key's line
        "ThisIsAVeryLongCamelCaseIdentifierWithoutAnyDigitsInItAtAllReally",
    ],
)
def test_hex_digests_and_other_lengths_stay(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("SMTP_PASS=S3cretPass", "S3cretPass"),
        ("REDIS_PWD=S3cretPass", "S3cretPass"),
        ("AccountName=a;AccountKey=abcd1234efgh5678ijkl==;", "abcd1234efgh5678ijkl"),
        ("encryption_key = 'abcd1234efgh5678'", "abcd1234efgh5678"),
    ],
)
def test_short_password_names_and_named_keys(text: str, secret: str) -> None:
    assert secret not in redact(text)


@pytest.mark.parametrize(
    "text", ["compass = 'north1'", "bypass = 'abc123def'", "pwd = os.getcwd()"]
)
def test_words_that_end_in_pass_stay(text: str) -> None:
    assert redact(text) == text


AWS_ID = TOKENS["aws access key id"]


@pytest.mark.parametrize(
    "around", ["prefix_{}", "aws{}", "{}_suffix", "AWS_KEY_ID_{}", "x{}y", "id=aws_{}"]
)
def test_an_aws_key_id_glued_to_a_name_is_redacted(around: str) -> None:
    shown = redact(around.format(AWS_ID))
    assert not _leaks(AWS_ID, shown) and REDACTED in shown, shown
    head = around.split("{}")[0] + AWS_ID[:10]  # a piece cut inside the id
    assert AWS_ID[4:10] not in redact_piece(head, cut_after=True)


@pytest.mark.parametrize(
    "text",
    [
        "Asia, ASIA_PACIFIC_REGION, fantasia, caucasian, EURASIA",
        "KUALA_LUMPUR_ASIA_PACIFIC_REGIONS and euroASIA_2024_REGION_LIST",
        "X" + AWS_ID,  # inside a longer run of capitals or digits: no key id
        "7" + AWS_ID,
        AWS_ID + "Q",
        "THAKIAMYSTERYNOVELSERIESANDMORE",
    ],
)
def test_words_holding_akia_or_asia_stay(text: str) -> None:
    assert redact(text) == text
    assert redact_piece("ASIA_PACIFIC", cut_after=True) == "ASIA_PACIFIC"
