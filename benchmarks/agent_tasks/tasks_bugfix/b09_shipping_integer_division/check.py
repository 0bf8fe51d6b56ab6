"""Checker of b09_shipping_integer_division."""

from __future__ import annotations

from pathlib import Path

from benchmarks.agent_tasks.checks import Verdict, ok, parse_python, run_original_tests, run_python


def check(workspace: Path) -> Verdict:
    parse_python(workspace, "units.py")
    parse_python(workspace, "shipping.py")
    run_original_tests(workspace, Path(__file__).parent, expect=6)
    run_python(
        workspace,
        "from shipping import Parcel, chargeable_kilograms as kg, price\n"
        "assert kg(Parcel(999, 10, 10, 10)) == 1.0, kg(Parcel(999, 10, 10, 10))\n"
        "assert kg(Parcel(2001, 10, 10, 10)) == 2.5, kg(Parcel(2001, 10, 10, 10))\n"
        "assert kg(Parcel(3500, 10, 10, 10)) == 3.5\n"
        "assert price(Parcel(1, 10, 10, 10), 'eu') == 10.90, price(Parcel(1, 10, 10, 10), 'eu')\n",
    )
    return ok("fractions of a kilogram are charged; the tests and hidden cases pass")
