"""Checker of t19_rename_method_two_files."""

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


def check(workspace: Path) -> Verdict:
    for name in ("cart.py", "shop.py"):
        used = names_used(parse_python(workspace, name))
        if "addItem" in used:
            raise CheckFailed(f"{name} still uses addItem")
        if "add_item" not in used:
            raise CheckFailed(f"{name} does not use add_item")
    run_python(
        workspace,
        "import cart, shop\n"
        "assert hasattr(cart.Cart, 'add_item') and not hasattr(cart.Cart, 'addItem')\n"
        "assert shop.basket() == 5, shop.basket()\n",
    )
    return ok("Cart.add_item defined and used by shop.py")
