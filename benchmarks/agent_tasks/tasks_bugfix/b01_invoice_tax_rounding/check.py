"""Checker of b01_invoice_tax_rounding."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_original_tests, run_python


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "invoice.py")
    run_original_tests(workspace, Path(__file__).parent, expect=6)
    run_python(
        workspace,
        "from decimal import Decimal as D\n"
        "from invoice import Invoice\n"
        "inv = Invoice()\n"
        "inv.add('screw', '0.125', 3)\n"
        "assert inv.total() == D('0.45'), inv.total()\n"
        "inv = Invoice(discount_percent=D(10), tax_rate=D('0.07'))\n"
        "inv.add('cable', '9.95')\n"
        "assert inv.total() == D('9.58'), inv.total()\n"
        "inv = Invoice(discount_percent=D(100))\n"
        "inv.add('sample', '3.99', 2)\n"
        "assert inv.total() == D('0.00'), inv.total()\n",
    )
    return ok("the total is rounded once; the tests and the hidden cases pass")
