"""Checker of t05_add_parameter."""

from __future__ import annotations

import ast
from pathlib import Path

from benchmarks.agent_tasks.checks import (
    CheckFailed,
    Verdict,
    function,
    ok,
    parse_python,
    run_python,
)


def check(workspace: Path) -> Verdict:
    func = function(parse_python(workspace, "greet.py"), "greet", "greet.py")
    args = func.args
    positional = args.posonlyargs + args.args
    defaults = (
        dict(zip([a.arg for a in positional][-len(args.defaults) :], args.defaults, strict=False))
        if args.defaults
        else {}
    )
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d})
    default = defaults.get("greeting")
    if default is None:
        raise CheckFailed("greet has no parameter greeting with a default")
    if not (isinstance(default, ast.Constant) and default.value == "Hello"):
        raise CheckFailed(f"the default of greeting is {ast.unparse(default)}, not 'Hello'")
    run_python(
        workspace,
        "from greet import greet\n"
        "assert greet('Bob') == 'Hello, Bob!', greet('Bob')\n"
        "assert greet('Bob', greeting='Hi') == 'Hi, Bob!', greet('Bob', greeting='Hi')\n",
    )
    return ok("greet(name, greeting='Hello') works")
