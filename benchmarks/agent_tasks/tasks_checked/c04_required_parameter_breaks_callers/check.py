"""Checker of c04_required_parameter_breaks_callers."""

from __future__ import annotations

import ast
from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    function,
    ok,
    parse_python,
    run_pytest,
    run_python,
)

CALLERS = ("invoice.py", "receipt.py", "tests/test_money.py")


def _calls(tree: ast.AST) -> list[ast.Call]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if name == "format_amount":
                out.append(node)
    return out


def check(workspace: Path) -> Verdict:
    fn = function(parse_python(workspace, "money.py"), "format_amount", "money.py")
    params = [a.arg for a in fn.args.args]
    if params != ["value", "currency"] or fn.args.defaults:
        raise CheckFailed(f"format_amount takes {params} (defaults: {len(fn.args.defaults)})")
    for name in CALLERS:
        for node in _calls(parse_python(workspace, name)):
            if len(node.args) + len(node.keywords) != 2:
                raise CheckFailed(
                    f"{name} line {node.lineno} calls format_amount without a currency"
                )
    run_python(
        workspace,
        "from money import format_amount\n"
        "from invoice import invoice_total, invoice_rows\n"
        "from receipt import receipt\n"
        "assert format_amount(3, 'USD') == '3.00 USD'\n"
        "total = invoice_total([('a', 1.5), ('b', 2)])\n"
        "assert total == 'Total: 3.50 EUR', total\n"
        "assert invoice_rows([('tea', 2)]) == ['tea: 2.00 EUR']\n"
        "assert receipt(20, 1.25) == 'paid 20.00 EUR, change 1.25 EUR', receipt(20, 1.25)\n",
    )
    run_pytest(workspace, "tests", expect=1)
    return ok("currency required; every caller passes EUR")
