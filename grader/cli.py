"""The grader's command line: ``python homework/check.py HW [PART ...] [options]``.

Options may stand anywhere (``check.py HW -v PART`` = ``check.py HW PART -v``), as with pytest. Every usage
mistake exits 2 with one line in Russian saying what is wrong and what would work, before anything is graded
(a check name that is no check of its part: as soon as the checking process has collected the part's checks).
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.base import homeworks
from grader.base.homeworks import ROOT, UsageError
from grader.base.results import Totals
from grader.boundary import confine
from grader.grading import hidden_answers
from grader.grading.runner import PYTEST_FLAGS, checking_template, inputs_for, interruptible, run_parts, schedule
from grader.reporting import export, lms
from grader.reporting.feedback import required_passed, scoreboard

INTERRUPTED = 130  # the exit code of a command line ended by Ctrl-C (SIGINT), as a shell reports it


def _epilog() -> str:
    """Examples with the names of a homework of this kit and its first part (whatever the kit holds)."""
    names = homeworks.available()
    hw = homeworks.load(names[0]).name if names else "HW"
    part = homeworks.load(names[0]).parts[0].id if names and homeworks.load(names[0]).parts else "ЧАСТЬ"
    cmd = f"python homework/check.py {hw}"
    rows = [(cmd, "все части, ваш код из homework/"), (f"{cmd} {part}", "одна часть"),
            (f'{cmd} "{part}::test_имя"', "одна проверка"), (f"{cmd} {part} --list", "имена проверок части"),
            (f"{cmd} -v {part}", "опции можно ставить до и после частей"),
            (f"{cmd} --solutions", "эталонные решения (для преподавателя)"),
            (f"{cmd} --notebook notebooks/{hw}.ipynb", "тетрадка"),
            (f"{cmd} --batch submissions/ --csv scores.csv --feedback out/", "все работы класса"),
            (f"{cmd} --batch submissions/ --csv scores.csv --report report/", "и отчёт об ошибках класса")]
    width = max(len(what) for _, what in rows) + 2
    return "примеры:\n" + "\n".join(f"  {what + ':':<{width}}{c}" for c, what in rows) + "\n"


HELP = "Справка: python homework/check.py --help"


USAGE = "использование: "


class _Parser(argparse.ArgumentParser):
    def parse_known_intermixed_args(self, args=None, namespace=None):
        if self.usage is None:  # argparse would capture it cutting off its own 7-character "usage: "
            self.usage = self.format_usage()[len(USAGE):].rstrip("\n")
        return super().parse_known_intermixed_args(args, namespace)

    def error(self, message):  # usage errors exit 2, one line in Russian
        if message.startswith("unrecognized arguments:"):
            words = message.split(":", 1)[1].split()
            options = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
            first = next((w for w in words if w.startswith("-")), words[0] if words else "")
            close = difflib.get_close_matches(first.split("=")[0], options, n=1, cutoff=0.6)
            message = (f"неизвестная опция {first}" if first.startswith("-")
                       else f"лишние аргументы: {' '.join(words)}")
            message += f". Может быть, {close[0]}?" if close else ""
        else:
            for english, russian in _ARGPARSE_RU:
                message = message.replace(english, russian)
        print(f"ошибка: {message}{' ' if message.endswith('?') else '. '}{HELP}", file=sys.stderr)
        sys.exit(2)


_ARGPARSE_RU = [
    ("unrecognized arguments", "неизвестные аргументы"),
    ("expected one argument", "после опции нужно значение"),
    ("invalid int value: ", "нужно целое число, а не "),
    ("invalid float value: ", "нужно число, а не "),
    ("not allowed with argument", "нельзя вместе с"),
    ("ambiguous option", "неоднозначная опция"),
    ("could match", "подходит к"),
    ("ignored explicit argument", "опция не принимает значения"),
    ("invalid choice: ", "недопустимое значение "),
    ("choose from", "можно"),
    ("argument ", "аргумент "),
]


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, prefix=USAGE if prefix is None else prefix)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python homework/check.py", description="Автопроверка домашних работ курса.",
                epilog=_epilog(), formatter_class=_Formatter, add_help=False)
    p._positionals.title, p._optionals.title = "аргументы", "опции"
    p.add_argument("-h", "--help", action="help", help="показать эту справку и выйти")
    p.add_argument("homework", nargs="?", help="имя домашней работы (список: --list)")
    p.add_argument("parts", nargs="*", help="части (их имена: --list) или одна проверка: часть::имя_теста")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--solutions", action="store_true", help="проверить эталонные решения из solutions/")
    src.add_argument("--dir", metavar="PATH", help="проверить модули из другой папки")
    src.add_argument("--notebook", metavar="PATH", help="проверить функции из тетрадки .ipynb")
    src.add_argument("--batch", metavar="DIR", help="проверить все работы в папке (по папке с модулями или тетрадке "
                                                    "на студента); с --csv — строка баллов на работу")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="подробнее: вызов, давший неверный ответ, и трассировка ошибки в вашем коде")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                   help="сколько частей (с --batch — работ) проверять параллельно (по умолчанию — по числу ядер)")
    p.add_argument("--timeout", type=float, default=None, help="лимит времени на одну проверку, с")
    p.add_argument("--json", metavar="PATH", help="записать результаты в формате Gradescope (results.json)")
    p.add_argument("--csv", metavar="PATH", help="записать баллы по частям строкой CSV")
    p.add_argument("--feedback", metavar="DIR", help="с --batch: записать отзыв каждому студенту (DIR/<работа>.txt "
                                                     "и .json)")
    p.add_argument("--report", metavar="DIR", help="с --batch: отчёт об ошибках класса (DIR/index.html, report.json, "
                                                   "mistakes.csv) и запись каждой работы (DIR/records/)")
    p.add_argument("--public", action="store_true",
                   help="только открытые входы, как в копии студента (самопроверка; оценка для ведомости — без флага)")
    p.add_argument("--show-hidden", action="store_true",
                   help="для преподавателя: показать провал на скрытых входах целиком, с командой для повтора (с "
                        "--batch — и в отзывах, и в отчёте; без флага их входы, ответ и текст кода студента скрыты)")
    p.add_argument("--allow-default-secret", action="store_true",
                   help="с --batch: скрытые входы из секрета набора по умолчанию (для пробы; свой: python -m "
                        "grader.grading.secret)")
    p.add_argument("--allow-unconfined", action="store_true",
                   help="с --batch: выставить оценки, даже если код работ здесь не изолирован (ни пространств имён, "
                        "ни отдельного пользователя)")
    p.add_argument("--list", action="store_true",
                   help="показать домашние работы и их части; с частью — имена её проверок")
    lms.add_options(p)  # with --batch: the grades into Canvas or Moodle
    return p


def _source(args, hw) -> tuple[str, str, list[str]]:
    """(value for --impl, what the scoreboard says is graded, options to repeat in a rerun command)."""
    if args.solutions:
        if not hw.solutions_dir.is_dir():
            raise UsageError("эталонных решений в этой копии нет: это копия домашней работы для студентов, "
                             "папки solutions/ в ней нет. Проверьте свой код: python homework/check.py " + hw.name)
        return "solutions", f"эталонные решения ({hw.solutions_dir.relative_to(ROOT).as_posix()}/)", ["--solutions"]
    if args.dir:
        path = Path(args.dir).resolve()
        if path.is_file():
            other = (f"тетрадку проверяет --notebook {args.dir}" if path.suffix == ".ipynb" else
                     f"укажите папку с модулями ({', '.join(p.module + '.py' for p in hw.parts[:2])}, ...)")
            raise UsageError(f"--dir {args.dir}: это файл, а --dir ждёт папку с модулями; {other}")
        if not path.is_dir():
            raise UsageError(f"--dir {args.dir}: такой папки нет; укажите папку с модулями "
                             f"({', '.join(p.module + '.py' for p in hw.parts[:2])}, ...)")
        return str(path), f"модули из {args.dir}", ["--dir", args.dir]
    if args.notebook:
        _check_notebook(args.notebook, hw)
        return str(Path(args.notebook).resolve()), f"тетрадка {args.notebook}", ["--notebook", args.notebook]
    return "homework", f"ваш код ({hw.homework_dir.relative_to(ROOT).as_posix()}/)", []


def _check_notebook(arg: str, hw) -> None:
    """A path given to --notebook is an existing .ipynb that is JSON: else one usage error, not one per part."""
    path = Path(arg)
    example = f"notebooks/{hw.name}.ipynb"
    if path.is_dir():
        raise UsageError(f"--notebook {arg}: это папка, а --notebook ждёт файл .ipynb (например {example}); "
                         f"папку с модулями проверяет --dir {arg}")
    if not path.is_file():
        raise UsageError(f"--notebook {arg}: такого файла нет; укажите тетрадку .ipynb, например {example}")
    if path.suffix != ".ipynb":
        raise UsageError(f"--notebook {arg}: это не тетрадка (нужен файл .ipynb, например {example}); "
                         "модули .py в папке проверяет --dir ПАПКА")
    try:
        with path.open(encoding="utf-8") as f:
            data = json.load(f)
    except UnicodeDecodeError:
        raise UsageError(f"--notebook {arg}: файл не в UTF-8, это не тетрадка Jupyter; "
                         "сохраните тетрадку заново из Jupyter (File → Save)") from None
    except ValueError as exc:
        where = f"строка {exc.lineno}, столбец {exc.colno}" if hasattr(exc, "lineno") else "не JSON"
        raise UsageError(f"--notebook {arg}: файл повреждён — это не JSON ({where}); откройте тетрадку в Jupyter "
                         "и сохраните заново (File → Save) или возьмите копию из git") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells", data.get("worksheets")), list):
        raise UsageError(f"--notebook {arg}: это JSON, но не тетрадка Jupyter (в нём нет ячеек cells); "
                         f"укажите файл .ipynb, сохранённый из Jupyter, например {example}")


def _load_homework(name: str) -> homeworks.Homework:
    names = homeworks.available()
    if name in names:
        return homeworks.load(name)
    owners = [hw for hw in map(homeworks.load, names) if any(p.id == name.partition("::")[0] for p in hw.parts)]
    if owners:  # a part given without its homework: check.py PART
        raise UsageError(f"«{name}» — часть, а не домашняя работа: сначала имя работы, потом часть — "
                         f"python homework/check.py {owners[0].name} {name}")
    raise UsageError(f"домашней работы «{name}» нет. {homeworks.closest(name, names)}"
                     f"Есть: {', '.join(names) if names else '(ни одной)'}")


def collect(hw, part) -> list[dict]:
    """The checks of a part, without running them: ``{"name", "title", "weight", "bonus"}`` each, in order.

    A quick ``pytest --collect-only`` of the part's test file in a child process (nothing of the student's is
    loaded); the names come from pytest's own listing, the titles and weights from the grader's plugin when
    it reports them (else the name and weight 1).
    """
    test_file = hw.tests_dir / part.tests
    if not test_file.is_file():
        return []
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONIOENCODING="utf-8")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    with tempfile.TemporaryDirectory(prefix="hwcollect-") as tmp:
        events = Path(tmp) / "collected.jsonl"
        proc = subprocess.run([sys.executable, "-m", "pytest", str(test_file), "--collect-only", "--results-file",
                               str(events), *PYTEST_FLAGS, "-W", "ignore"], cwd=tmp, env=env, capture_output=True,
                              text=True, encoding="utf-8", errors="replace", timeout=300)
        meta: dict[str, dict] = {}
        if events.is_file():
            for line in events.read_text(encoding="utf-8").splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("event") == "collected":
                    meta = {item.get("name"): item for item in rec.get("items", []) if isinstance(item, dict)}
    names = [line.rsplit("::", 1)[1].strip() for line in proc.stdout.splitlines() if "::" in line]
    names = [n for n in names if not meta.get(n, {}).get("twin")]  # hidden twins carry no points of their own
    return [{"name": n, "title": meta.get(n, {}).get("title", n), "weight": float(meta.get(n, {}).get("weight", 1.0)),
             "bonus": bool(meta.get(n, {}).get("bonus", False))} for n in names]


def _check_selection(hw, part, tests: list[str], checks: list[dict]) -> None:
    """Every ``part::test`` names a check of the part (``test_x`` selects all of ``test_x[...]``)."""
    names = [c["name"] for c in checks]
    if not names:
        return  # the part's checks could not be listed: the grader says why when it runs them
    bases = sorted({n.split("[")[0] for n in names})
    for test in tests:
        if test in names or test in bases:
            continue
        base = test.split("[")[0]
        if base in bases:
            params = [n for n in names if n.split("[")[0] == base]
            raise UsageError(f"у проверки {part.id}::{base} нет варианта «{test[len(base):]}». Есть: "
                             f"{', '.join(params[:6])}{' …' if len(params) > 6 else ''}")
        close = difflib.get_close_matches(test, list(dict.fromkeys(bases + names)), n=3, cutoff=0.5)
        suggest = f"Может быть, {' или '.join(part.id + '::' + c for c in close)}? " if close else ""
        raise UsageError(f"в части {part.id} нет проверки «{test}». {suggest}Все проверки части: "
                         f"python homework/check.py {hw.name} {part.id} --list")


def _validate_selection(hw, selected, whole: dict[str, list[dict]]) -> None:
    """Check names given as ``part::test`` exist (before any grading); ``whole`` gets every check of those parts."""
    for part, tests in selected:
        if tests is not None:
            whole[part.id] = collect(hw, part)
            _check_selection(hw, part, tests, whole[part.id])


def _list_checks(hw, selected) -> str:
    lines = []
    for part, _ in selected:
        lines.append(f"{part.id} — {part.title}:")
        lines += [f'    "{part.id}::{c["name"]}"  {c["title"]}' for c in collect(hw, part)]
    return "\n".join(lines)


def _listing() -> str:
    lines = []
    for name in homeworks.available():
        hw = homeworks.load(name)
        lines.append(f"{name} — {hw.title}")
        lines += [f"    {p.id:<16} {p.title} ({p.points:g} баллов)" for p in hw.parts]
    return "\n".join(lines) or "домашних работ нет"


def main(argv: list[str] | None = None) -> int:
    """The command line; Ctrl-C ends it within seconds (exit 130), with every process it started and what it
    wrote kept (grader.grading.runner.interruptible)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("прервано (Ctrl-C): проверка остановлена, её процессы завершены", file=sys.stderr)
        return INTERRUPTED


def _main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8", errors="replace")
    args = build_parser().parse_intermixed_args(argv)
    if argv is None:  # the process's own command line (a caller in a process of its own keeps its umask)
        confine.own_outputs()  # a root grader's --json, --csv and feedback: read by no submission's code, ever
    whole: dict[str, list[dict]] = {}  # part id -> all its checks, for a part run only in part
    try:
        if args.list and not args.homework:
            print(_listing())
            return 0
        if not args.homework:
            raise UsageError("укажите домашнюю работу: python homework/check.py "
                             + (homeworks.available() or ["ИМЯ"])[0] + f". Есть: {', '.join(homeworks.available())}")
        hw = _load_homework(args.homework)
        selected = hw.select(args.parts)
        if args.list:
            print(_list_checks(hw, selected) if args.parts else _listing())
            return 0
        _check_options(args)
        if args.batch:
            try:
                from grader import batch
            except ImportError:
                raise UsageError("пакетная проверка (--batch) — инструмент преподавателя, в копии для студентов "
                                 "её нет") from None
            _validate_selection(hw, selected, whole)
            export_to = lms.from_args(args, Path(args.report) if args.report else None, hw.name)
            if export_to:  # the roster and the grade's fitness for the LMS are checked before anything is graded
                lms.check_batch(export_to, hw, selected, Path(args.batch))
            subs = batch.run(hw, selected, Path(args.batch), jobs=args.jobs, timeout=args.timeout,
                             csv_path=args.csv, feedback_dir=args.feedback,
                             allow_default_secret=args.allow_default_secret, report_dir=args.report,
                             allow_unconfined=args.allow_unconfined, show_hidden=args.show_hidden)
            code = 1 if any(s.error or any(r.error for r in s.results) for s in subs) else 0  # one not graded
            return max(code, lms.write(export_to, lms.batch_records(subs), hw.name)) if export_to else code
        impl, label, source_opts = _source(args, hw)
    except UsageError as exc:
        print(f"ошибка: {exc}", file=sys.stderr)
        return 2
    return _grade(args, hw, selected, impl, label, source_opts)


def _check_options(args) -> None:
    if args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: нужно целое число не меньше 1, например --jobs 2")
    if args.timeout is not None and not args.timeout > 0:
        raise UsageError(f"--timeout {args.timeout:g}: нужно число секунд больше 0, например --timeout 30")
    if args.feedback and not args.batch:
        raise UsageError("--feedback — для пакетной проверки: добавьте --batch ПАПКА_С_РАБОТАМИ")
    if args.report and not args.batch:
        raise UsageError("--report — отчёт о классе для пакетной проверки: добавьте --batch ПАПКА_С_РАБОТАМИ "
                         "(из выгрузки Gradescope: python -m grader.reporting.class_report ВЫГРУЗКА ПАПКА)")
    if (args.lms or args.roster) and not args.batch:
        raise UsageError("--lms и --roster — для пакетной проверки: добавьте --batch ПАПКА_С_РАБОТАМИ (из записей или "
                         "выгрузки Gradescope: python -m grader.reporting.class_report ИСТОЧНИК ПАПКА --lms ... "
                         "--roster ...)")
    if args.batch and args.json:
        raise UsageError("с --batch баллы записывает --csv; --json — для одной работы")


def _grade(args, hw, selected, impl: str, label: str, source_opts: list[str]) -> int:
    """Grade the selected parts, print the scoreboard, write --json/--csv; the exit code. Check names given as
    ``part::test`` are matched by the checking process itself (no collection of their own beforehand): a name
    that is no check of its part is a usage error, and then nothing was graded."""
    started = time.perf_counter()
    refused = hidden_answers.refusal(hw, [part.module for part, tests in selected if tests is None]) \
        if inputs_for(hw, args.public) == "hidden" else None  # the grade for the record reads the key's answers
    if refused:
        print(f"ошибка: {refused}", file=sys.stderr)
        return 2
    # one checking process per group, the costliest parts first; without namespaces one for all the parts: processes
    # of one submission's users share /tmp and /proc, and only within one process does no hidden check run before a
    # public one (grader.grading.plugin)
    groups = schedule(selected, args.jobs if confine.mode() == "namespaces" else 1)
    # one submission, one user for its workers (without namespaces), whichever group runs them; Ctrl-C ends every
    # checking process and worker at once. The checking processes and the zygotes are forked by the two templates
    # (grader.grading.runner.checking_template, a warm start, as a batch's): their imports are paid once, not once
    # per process
    with checking_template(), confine.lease() as uid, interruptible(len(groups)) as pool:
        graded = {r.part.id: r for g in pool.map(lambda g: run_parts(hw, g, impl, args.timeout, public=args.public,
                                                                     show_hidden=args.show_hidden, uid=uid), groups)
                  for r in g}
    results = [graded[part.id] for part, _ in selected]
    try:
        for (part, tests), result in zip(selected, results):
            if result.unknown:
                _check_selection(hw, part, tests, result.all_checks)
    except UsageError as exc:
        print(f"ошибка: {exc}", file=sys.stderr)
        return 2
    whole = {r.part.id: r.all_checks for r in results if r.all_checks}
    rerun = " ".join(["python homework/check.py", hw.name, *source_opts])
    files = None if args.notebook else (hw.homework_dir.relative_to(ROOT).as_posix() if impl == "homework"
                                         else args.dir or hw.solutions_dir.relative_to(ROOT).as_posix())
    totals = Totals.of(results)
    print(scoreboard(hw, results, label, rerun, verbose=args.verbose,
                     partial={part.id for part, sel in selected if sel is not None}, whole=whole, files=files,
                     reference=bool(args.solutions), totals=totals))
    if args.json:
        export.write_json(args.json, results, time.perf_counter() - started, totals)
    if args.csv:
        export.write_csv(args.csv, [export.csv_row(label, results, totals)])
    return 0 if required_passed(results) else 1
