"""The paste attack on the answer key (#26, tests/kit/test_answer_key.py): a submission made of the copy's own code.

The student's copy (grader.authoring.release) must hold no code that computes a graded answer. The attack takes every
function the copy defines (top-level functions of every ``.py`` file: the grader, the graded suites, the provided
modules, the benchmarks; functions nested in others when they use nothing of the enclosing function, lifted to the
top level; no methods) and puts them, one at a time, in place of each function the student writes. A stub's
candidates are the functions callable with the stub's required positional arguments; the submission's function
keeps the stub's signature and hands its positional arguments on (as many as the candidate takes).

Grading each (stub, candidate) pair alone would take thousands of gradings; the attack grades rounds instead:
round k puts the k-th candidate of every stub in its place (cycling through a stub's candidates when it has fewer),
until every candidate of every stub has been in place once. A round grades, in the instructor's checkout, on public
and hidden inputs as for the record, the parts with a candidate not yet tried. ``check.py HW PARTS --dir ROUND``
would cost about 2 s of CPU a round (a couple of hundred rounds); tests/kit/answer_key_run.py grades all the rounds
in one process, the same way, only the checks a new candidate can change (tests/kit/test_answer_key.py compares
its round 0 with the command line's).

Each candidate's file of the copy sits beside the submission as a module of its own (``_paste_<path>.py``, the
copy's text, lifted functions appended); a module of the copy it imports by its plain name (``control_envs``) is
copied beside it under that name, so its imports resolve in the worker as they would in the copy.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import symtable
import sys
import textwrap
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from grader.base import homeworks
from grader.base.homeworks import ROOT
from grader.boundary import confine
from grader.grading.runner import checking_environment
from kit import run_measured

PREFIX = "_paste_"  # a copy's file as a module beside the submission


@dataclass(frozen=True)
class Candidate:
    file: str  # the copy's file, relative POSIX path
    name: str  # the function's name in its paste module (a lifted one's: _lifted_<outer>__<name>)
    where: str  # file:qualified name:line, for the report

    @property
    def module(self) -> str:
        return paste_module(self.file)


@dataclass(frozen=True)
class Stub:
    part: str
    module: str  # the part's module
    name: str
    params: str  # the stub's parameter list, as written in a def
    positional: tuple[str, ...]  # its positional parameters, in order
    required: int  # how many of them have no default


@dataclass
class Copy:
    """A released copy, read: its stubs, its candidates and the text of each paste module."""

    root: Path
    stubs: list[Stub] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    pastes: dict[str, str] = field(default_factory=dict)  # paste module -> text
    plain: dict[str, str] = field(default_factory=dict)  # a plain module name of the copy -> its file
    needs: dict[str, set[str]] = field(default_factory=dict)  # paste module -> plain names it imports
    fits: dict[Stub, list[Candidate]] = field(default_factory=dict)  # the candidates of each stub
    broken: dict[str, str] = field(default_factory=dict)  # paste module -> why it does not import
    arity: dict[str, list] = field(default_factory=dict)  # "module:function" -> [fewest, most positional] (None: any)


def paste_module(rel: str) -> str:
    return PREFIX + re.sub(r"\W", "_", rel[:-3])


# ---- reading the copy ----------------------------------------------------------------------------------------


def read_copy(root: Path, hw_name: str) -> Copy:
    hw = homeworks.load(hw_name)
    copy = Copy(Path(root))
    part_files = {f"homework/{hw.name}/{p.module}.py": p for p in hw.parts}
    for path in sorted(copy.root.rglob("*.py")):
        rel = path.relative_to(copy.root).as_posix()
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, rel)
        if rel in part_files:
            copy.stubs += _stubs(tree, part_files[rel])
        lifted = []
        for node, outer, top in _functions(tree):
            if rel in part_files and top and _is_stub(node):
                continue  # the stubs themselves raise NotImplementedError
            where = f"{rel}:{'.'.join([*outer, node.name])}:{node.lineno}"
            if not _answers(node) or not in_scope(rel):
                continue
            if top and _last_top_level(tree, node):
                copy.candidates.append(Candidate(rel, node.name, where))
            elif _liftable(source, rel, node):
                name = "_lifted_" + "__".join([*outer, node.name])
                lifted.append(_renamed(node, name))
                copy.candidates.append(Candidate(rel, name, where))
        module = paste_module(rel)
        copy.pastes[module] = source + ("\n\n# ---- lifted by the paste attack ----\n\n" + "\n\n".join(lifted) + "\n"
                                        if lifted else "")
        copy.needs[module] = _plain_imports(tree)
        if not (path.parent / "__init__.py").is_file():
            copy.plain.setdefault(path.stem, rel)
    return copy


SCOPE_ENV = "HWKIT_PASTE_EVERYTHING"  # "1": the grader's own functions are candidates too (about 6x the cost)


def in_scope(rel: str) -> bool:
    """Whether the functions of the copy's file ``rel`` are candidates. By default every file but the grader's own
    (grader/: the machinery of checking, which names no homework and computes no RL quantity; the release's guard
    refuses any file holding a key function's body); with HWKIT_PASTE_EVERYTHING=1 every file (measured once: 502
    candidates, 203 rounds, 385 s of CPU, no point scored)."""
    return os.environ.get(SCOPE_ENV) == "1" or not rel.startswith("grader/")


def _answers(node) -> bool:
    """Whether a function can answer anything: it returns a value or yields (one that never does returns None, which
    no check takes for an answer: every stub computes something)."""
    own = [n for n in ast.walk(node) if n is node or not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                          ast.Lambda))]
    return any(isinstance(n, ast.Return) and n.value is not None or isinstance(n, (ast.Yield, ast.YieldFrom))
               for n in own)


def _functions(tree: ast.Module):
    """(function node, names of the enclosing functions, whether it is at module scope), methods left out."""
    def walk(node, outer: list[str], scope: str):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if scope != "class":
                    yield child, outer, scope == "module"
                yield from walk(child, [*outer, child.name], "function")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, [*outer, child.name], "class")
            else:
                yield from walk(child, outer, scope)
    yield from walk(tree, [], "module")


def _is_stub(node) -> bool:
    return any(isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n) for n in ast.walk(node))


def _last_top_level(tree: ast.Module, node) -> bool:
    """Whether the module's attribute of this name is this function: defined in the module's body (not under an
    ``if``) and not redefined later."""
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and n.name == node.name]
    return bool(defs) and defs[-1] is node


def _liftable(source: str, rel: str, node) -> bool:
    """Whether the function uses nothing of an enclosing function (then it means the same at the top level): no
    free variable, no default value made of the enclosing function's names."""
    if isinstance(node, ast.AsyncFunctionDef):
        return False
    chain = _find_table(symtable.symtable(source, rel, "exec"), node)
    if chain is None or chain[-1].get_frees():
        return False
    enclosing = {name for table in chain[:-1] if table.get_type() == "function" for name in table.get_locals()}
    defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    return not any(isinstance(n, ast.Name) and n.id in enclosing for d in defaults for n in ast.walk(d))


def _find_table(table, node, path=()):
    """The symbol tables from the module's down to the function's (None: not found)."""
    for child in table.get_children():
        if child.get_type() == "function" and child.get_name() == node.name and child.get_lineno() == node.lineno:
            return [*path, table, child]
        found = _find_table(child, node, (*path, table))
        if found is not None:
            return found
    return None


def _renamed(node, name: str) -> str:
    node = ast.parse(textwrap.dedent(ast.unparse(node))).body[0]
    node.name, node.decorator_list = name, []
    return ast.unparse(node)


def _plain_imports(tree: ast.Module) -> set[str]:
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            names |= {a.name.split(".")[0] for a in n.names}
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            names.add(n.module.split(".")[0])
    return names


def _stubs(tree: ast.Module, part) -> list[Stub]:
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and _is_stub(node):
            a = node.args
            positional = tuple(x.arg for x in [*a.posonlyargs, *a.args])
            out.append(Stub(part.id, part.module, node.name, ast.unparse(a), positional,
                            len(positional) - len(a.defaults)))
    return out


# ---- which candidates fit which stub ------------------------------------------------------------------------

PROBE = r"""
import importlib, inspect, json, sys
folder, names = sys.argv[1], json.loads(sys.argv[2])
out = {"broken": {}, "arity": {}}
for module, functions in names.items():
    try:
        m = importlib.import_module(module)
    except BaseException as exc:
        out["broken"][module] = f"{type(exc).__name__}: {exc}"
        continue
    for name in functions:
        f = getattr(m, name, None)
        try:
            ps = list(inspect.signature(f).parameters.values())
        except (TypeError, ValueError):
            continue
        pos = [p for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        low = sum(p.default is p.empty for p in pos)
        high = None if any(p.kind == p.VAR_POSITIONAL for p in ps) else len(pos)
        if not any(p.kind == p.KEYWORD_ONLY and p.default is p.empty for p in ps):
            out["arity"][f"{module}:{name}"] = [low, high]
print(json.dumps(out))
"""


def fit(copy: Copy, hw_name: str, scratch: Path) -> None:
    """Each stub's candidates: the functions callable with its required positional arguments, as their live
    signatures say (the paste modules imported as a worker imports them: the submission's folder first, then
    the kit and the homework's shared modules)."""
    hw = homeworks.load(hw_name)
    folder = scratch / "probe"
    folder.mkdir(parents=True)
    (scratch / "pool").mkdir(exist_ok=True)
    for p in hw.parts:
        shutil.copy2(copy.root / "homework" / hw.name / f"{p.module}.py", folder / f"{p.module}.py")
    for module in copy.pastes:
        place(copy, module, folder, scratch / "pool")
    names: dict[str, list[str]] = {}
    for c in copy.candidates:
        names.setdefault(c.module, []).append(c.name)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(ROOT), str(hw.shared_dir)]),
               PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, "-s", "-c", PROBE, str(folder), json.dumps(names)], cwd=str(folder),
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    probed = json.loads(proc.stdout.strip().splitlines()[-1])
    copy.broken = probed["broken"]
    arity = probed["arity"]
    for stub in copy.stubs:
        copy.fits[stub] = [c for c in copy.candidates if f"{c.module}:{c.name}" in arity
                           and arity[f"{c.module}:{c.name}"][0] <= stub.required
                           and (arity[f"{c.module}:{c.name}"][1] is None
                                or stub.required <= arity[f"{c.module}:{c.name}"][1])]
    copy.arity = arity


def place(copy: Copy, module: str, folder: Path, pool: Path) -> None:
    """The paste module beside the submission in ``folder``, and the copy's modules it imports by their plain names
    (each written once into ``pool``, then linked)."""
    _link(pool / f"{module}.py", folder, lambda path: path.write_text(copy.pastes[module], encoding="utf-8"))
    for name in sorted(copy.needs.get(module, ())):
        rel = copy.plain.get(name)
        if rel is not None:
            _link(copy.root / rel, folder, None, f"{name}.py")


def _link(path: Path, folder: Path, make, name: str | None = None) -> None:
    target = folder / (name or path.name)
    if target.exists():
        return
    if not path.exists():
        make(path)
    try:
        os.link(path, target)
    except OSError:
        shutil.copy2(path, target)


# ---- rounds ----------------------------------------------------------------------------------------------


@dataclass
class Round:
    chosen: dict[str, dict[Stub, Candidate]]  # part -> each stub's candidate in this round
    fresh: dict[str, list[str]]  # part -> the stubs whose candidate is tried here for the first time


def rounds(copy: Copy) -> list[Round]:
    """Round k: for each part with a candidate not yet tried, every stub of the part by its k-th candidate
    (cycling); the rounds end when every candidate of every stub has been in place."""
    out = []
    for k in range(max((len(c) for c in copy.fits.values()), default=0)):
        one = Round({}, {})
        for part in dict.fromkeys(s.part for s in copy.stubs):
            stubs = [s for s in copy.stubs if s.part == part and copy.fits[s]]
            fresh = [s.name for s in stubs if len(copy.fits[s]) > k]
            if fresh:
                one.chosen[part] = {s: copy.fits[s][k % len(copy.fits[s])] for s in stubs}
                one.fresh[part] = fresh
        out.append(one)
    return out


def write_round(copy: Copy, hw_name: str, one: Round, folder: Path, pool: Path) -> None:
    """The submission of one round: the copy's stubs and provided modules, each stub of a chosen part replaced by a
    function of the stub's signature that calls its candidate (the paste modules: links to ``pool``'s files)."""
    hw = homeworks.load(hw_name)
    folder.mkdir(parents=True)
    for path in sorted((copy.root / "homework" / hw.name).glob("*.py")):
        shutil.copy2(path, folder / path.name)
    for part, replaced in one.chosen.items():
        module = folder / f"{hw.part(part).module}.py"
        # imported as the module loads: a paste module that does not import is a load error, never a silent 0
        used = sorted({cand.module for cand in replaced.values()})
        lines = ["", "", "# ---- the paste attack: each function is a function of the student's copy ----",
                 *(f"import {m}  # noqa: E402" for m in used), "", ""]
        for stub, cand in replaced.items():
            high = copy.arity[f"{cand.module}:{cand.name}"][1]
            passed = ", ".join(stub.positional[:len(stub.positional) if high is None else high])
            lines += [f"def {stub.name}({stub.params}):  # {cand.where}",
                      f"    return {cand.module}.{cand.name}({passed})", "", ""]
        for m in used:
            place(copy, m, folder, pool)
        module.write_text(module.read_text(encoding="utf-8") + "\n".join(lines), encoding="utf-8")


RUN = Path(__file__).resolve().parent / "answer_key_run.py"


def grade_rounds(hw_name: str, folders: list[Path], all_rounds: list[Round], tmp: Path) -> tuple[dict, float]:
    """Every round graded in the instructor's checkout (tests/kit/answer_key_run.py): its results, and the CPU
    seconds that took (that process and every process it waited for: the zygote, the workers)."""
    job, out = tmp / "job.json", tmp / "out.json"
    job.write_text(json.dumps({"homework": hw_name, "rounds": [
        {"folder": str(f), "fresh": r.fresh} for f, r in zip(folders, all_rounds)]}), encoding="utf-8")
    token = uuid.uuid4().hex
    proc, cpu = run_measured([sys.executable, str(RUN), str(job), str(out)], 3600,
                             env=checking_environment(token, "hidden"), cwd=str(tmp))
    confine.reap(token)
    assert out.is_file(), f"grading the rounds failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(out.read_text(encoding="utf-8")), cpu
