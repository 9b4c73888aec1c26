"""A copied solution in disguise, as a student hides one: every local variable of every function renamed, the
top-level functions and classes in another order, comments gone (the code is written back by ``ast.unparse``).
Used by tests/kit/test_similarity.py and benchmarks/class_report.py --alike; the names are drawn from ``seed``.
"""
from __future__ import annotations

import ast
import builtins
import random

_WORDS = ["acc", "buf", "cur", "delta", "est", "food", "gain", "hold", "item", "jump", "keep", "left", "mass",
          "next_", "out", "part", "quota", "rest", "step", "tmp", "unit", "val", "work", "x_", "yield_", "zone"]


class _Renamer(ast.NodeTransformer):
    """Renames the names a function assigns (not its parameters: callers name them) to fresh ones."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def visit_FunctionDef(self, node):
        params = {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                                  *([node.args.vararg] if node.args.vararg else []),
                                  *([node.args.kwarg] if node.args.kwarg else [])]}
        declared = {n for s in ast.walk(node) if isinstance(s, (ast.Global, ast.Nonlocal)) for n in s.names}
        local = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        local -= params | declared | set(dir(builtins))
        mapping = {name: f"{self.rng.choice(_WORDS)}{self.rng.randrange(100)}_{i}" for i, name in
                   enumerate(sorted(local))}
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in mapping:
                n.id = mapping[n.id]
        return node

    visit_AsyncFunctionDef = visit_FunctionDef


def disguise(source: str, seed: int) -> str:
    """``source`` with its functions' local variables renamed and its top-level definitions reordered."""
    rng = random.Random(seed)
    tree = _Renamer(rng).visit(ast.parse(source))
    head = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom, ast.Expr)) and s is tree.body[0]
            or isinstance(s, (ast.Import, ast.ImportFrom))]
    defs = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))]
    rest = [s for s in tree.body if s not in head and s not in defs]
    last = {}  # a name defined twice (a mistake appended after the reference): the later one must stay later
    for s in defs:
        last[s.name] = s
    kept = [s for s in defs if last[s.name] is s]
    rng.shuffle(kept)
    tree.body = head + rest + kept
    return ast.unparse(tree) + "\n"
