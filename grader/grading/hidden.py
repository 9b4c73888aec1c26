"""Hidden inputs: the grade for the record also runs every randomized check on seeds the student's copy never held.

A randomized check takes its seed from :func:`inputs` in place of ``pytest.mark.parametrize``::

    @inputs("seed", [0, 1, 2])
    def test_gae_random(ppo, seed): ...

On public inputs (the student's copy, the notebook's self-check, ``--public``) that is the parametrization it
replaces. On hidden inputs (the instructor's grade) each public case gets a twin, ``test_gae_random[hidden-0]``,
whose seed derives from the instructor's secret (``tests/<hw>/key/secret``, never shipped); the twin carries no
points of its own: its public check counts only when both pass (grader.grading.runner.gated). ``behaviour=True``: a
statistical check (a training run judged by a margin measured over seeds) runs its hidden seeds in place of the
public ones, under the same names.

The secret never leaves the instructor's side: the checking process reads it, a worker never sees the key folder
(grader.boundary.zygote), and a check's hidden seed reaches the student's code only as the inputs it makes.
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

# its text is the secret (the hidden inputs of the kit's own tests derive from it): kept as written
DEFAULT_SECRET = "hwkit-default-secret: the kit's own tests; make your own with python -m grader.secret"
INPUTS_ENV = "HWKIT_INPUTS"  # "public" or "hidden", set by the grader's command line for the checking process
SECRET_ENV = "HWKIT_SECRET_FILE"  # another secret's file (python -m grader.grading.secret tries a new one this way)
HIDDEN_PREFIX = "hidden-"


def secret_path(tests_dir: Path) -> Path:
    return Path(tests_dir) / "key" / "secret"


def secret_file(tests_dir: Path) -> Path:
    """The file the secret in force is read from: the one HWKIT_SECRET_FILE names, else ``tests/<hw>/key/secret``."""
    return Path(os.environ[SECRET_ENV]) if os.environ.get(SECRET_ENV) else secret_path(tests_dir)


def secret(tests_dir: Path) -> str:
    """The instructor's secret of a homework (its first line), or the kit's default when there is none."""
    path = secret_file(tests_dir)
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return DEFAULT_SECRET
    return text.splitlines()[0].strip() if text else DEFAULT_SECRET


def fingerprint(text: str) -> str:
    """What names a secret in a grade's records without giving it away."""
    return hashlib.sha256(("hwkit-secret-fingerprint/" + text).encode("utf-8")).hexdigest()[:12]


def checks_version(tests_dir: Path) -> str:
    """The version of a homework's public checks: a digest of what the student's copy holds of them (the test files,
    the test environments, the parts, the recorded answers), the same in the copy and the instructor's checkout."""
    tests_dir = Path(tests_dir)
    digest = hashlib.sha256()
    for path in sorted([*tests_dir.glob("*.py"), *tests_dir.glob("*.toml"), *(tests_dir / "shared").glob("*.py"),
                        *(tests_dir / "answers").glob("*.json")]):
        digest.update(path.relative_to(tests_dir).as_posix().encode() + b"\0"
                      + path.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()[:12]


def hidden_available(tests_dir: Path) -> bool:
    """Whether hidden inputs can be graded here: the instructor's modules of the answer key are present."""
    return (Path(tests_dir) / "key").is_dir()


def hidden_mode(tests_dir: Path) -> bool:
    """Whether this checking process grades hidden inputs: as the grader's command line says, else where the
    instructor's key is present."""
    chosen = os.environ.get(INPUTS_ENV, "")
    if chosen in ("public", "hidden"):
        return chosen == "hidden" and hidden_available(tests_dir)
    return hidden_available(tests_dir)


def seed_of(tests_dir: Path, test: str, case: str) -> int:
    digest = hashlib.sha256(f"{secret(tests_dir)}/{Path(tests_dir).name}/{test}/{case}".encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def grade_only(test):
    """A check that runs only in the grade for the record (its expected answer replays what the student's code did,
    so the copy could hold it only as the rule itself): on public inputs it is not run, and the copy's scoreboard
    says so beside its part (grader.reporting.feedback). It runs as a check on hidden inputs: its answer key is the
    instructor's."""
    import pytest

    return pytest.mark.inputs(hidden=True, grade_only=True)(test)


def inputs(argnames: str, argvalues: list, ids: list[str] | None = None, *, seed: str = "seed",
           behaviour: bool = False):
    """``pytest.mark.parametrize(argnames, argvalues, ids=ids)`` with hidden twins on hidden inputs (see the module
    docstring); ``seed``: the argument that is the seed (the others stay as the public case has them)."""
    import pytest

    names = [n.strip() for n in argnames.split(",")]
    at = names.index(seed)
    tests_dir = Path(sys._getframe(1).f_globals["__file__"]).resolve().parent
    cases = [tuple(v) if len(names) > 1 else (v,) for v in argvalues]
    case_ids = list(ids) if ids is not None else ["-".join(str(x) for x in case) for case in cases]

    def wrap(test):
        params = []
        for number, (case, case_id) in enumerate(zip(cases, case_ids), 1):  # number: a hidden seed's shown name
            hidden = list(case)
            hidden[at] = seed_of(tests_dir, test.__name__, case_id)
            if not hidden_mode(tests_dir):
                params.append(pytest.param(*case, id=case_id))
            elif behaviour:
                params.append(pytest.param(*hidden, id=case_id,
                                           marks=pytest.mark.inputs(hidden=True, seed=seed, case=number)))
            else:
                params.append(pytest.param(*case, id=case_id))
                params.append(pytest.param(*hidden, id=HIDDEN_PREFIX + case_id,
                                           marks=pytest.mark.inputs(hidden=True, twin=case_id,
                                                                    seed=seed, case=number)))
        return pytest.mark.parametrize(argnames, params)(test)
    return wrap
