"""Checker of c01_rename_function_four_files."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    names_used,
    ok,
    parse_python,
    run_python,
)

FILES = ("pricing.py", "cart.py", "invoice.py", "report.py")


def check(workspace: Path) -> Verdict:
    for name in FILES:
        used = names_used(parse_python(workspace, name))
        if "fmt_price" in used:
            raise CheckFailed(f"{name} still uses fmt_price")
        if "format_price" not in used:
            raise CheckFailed(f"{name} does not use format_price")
    run_python(
        workspace,
        "from cart import Cart\n"
        "from invoice import invoice_lines\n"
        "from report import daily_report\n"
        "from pricing import format_price\n"
        "assert format_price(1999) == '$19.99'\n"
        "c = Cart(); c.add('tea', 450); c.add('cake', 1205)\n"
        "assert c.summary() == '2 items, total $16.55', c.summary()\n"
        "assert invoice_lines([('tea', 450)]) == ['tea              $4.50']\n"
        "assert daily_report([c]) == '1 carts, revenue $16.55, largest $16.55'\n",
    )
    return ok("renamed in all four files; the shop still formats prices")
