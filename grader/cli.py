"""The grader's command line: ``python homework/check.py HW [PART ...] [options]``."""
from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader import export, homeworks
from grader.homeworks import ROOT, UsageError
from grader.report import all_passed, scoreboard
from grader.runner import run_part

EPILOG = """примеры:
  python homework/check.py s6-hw00-rl-foundations              все части, ваш код из homework/
  python homework/check.py s6-hw00-rl-foundations ppo          одна часть
  python homework/check.py s6-hw00-rl-foundations "ppo::test_gae_courier[lam0.95]"   одна проверка
  python homework/check.py s6-hw00-rl-foundations --solutions  эталонные решения (для преподавателя)
  python homework/check.py s6-hw00-rl-foundations --notebook notebooks/s6-hw00-rl-foundations.ipynb
  python homework/check.py s6-hw00-rl-foundations --batch submissions/ --jobs 2 --csv scores.csv --feedback out/
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors exit 2, in Russian
        self.print_usage(sys.stderr)
        for english, russian in _ARGPARSE_RU:
            message = message.replace(english, russian)
        print(f"ошибка: {message}", file=sys.stderr)
        sys.exit(2)


_ARGPARSE_RU = [
    ("unrecognized arguments", "неизвестные аргументы"),
    ("expected one argument", "после опции нужно значение"),
    ("invalid int value", "нужно целое число, а не"),
    ("invalid float value", "нужно число, а не"),
    ("not allowed with argument", "нельзя вместе с"),
    ("argument ", "аргумент "),
]


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, prefix="использование: " if prefix is None else prefix)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python homework/check.py", description="Автопроверка домашних работ курса.",
                epilog=EPILOG, formatter_class=_Formatter, add_help=False)
    p._positionals.title, p._optionals.title = "аргументы", "опции"
    p.add_argument("-h", "--help", action="help", help="показать эту справку и выйти")
    p.add_argument("homework", nargs="?", help="имя домашней работы, например s6-hw00-rl-foundations")
    p.add_argument("parts", nargs="*", help="части (ppo, dp, ...) или одна проверка: часть::имя_теста")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--solutions", action="store_true", help="проверить эталонные решения из solutions/")
    src.add_argument("--dir", metavar="PATH", help="проверить модули из другой папки")
    src.add_argument("--notebook", metavar="PATH", help="проверить функции из тетрадки .ipynb")
    src.add_argument("--batch", metavar="DIR", help="проверить все работы в папке (по папке с модулями или тетрадке "
                                                    "на студента); с --csv — строка баллов на работу")
    p.add_argument("-v", "--verbose", action="store_true", help="показывать трассировки ошибок")
    p.add_argument("--jobs", type=int, default=2, help="сколько частей (с --batch — работ) проверять параллельно "
                                                       "(по умолчанию 2)")
    p.add_argument("--timeout", type=float, default=None, help="лимит времени на одну проверку, с")
    p.add_argument("--json", metavar="PATH", help="записать результаты в формате Gradescope (results.json)")
    p.add_argument("--csv", metavar="PATH", help="записать баллы по частям строкой CSV")
    p.add_argument("--feedback", metavar="DIR", help="с --batch: записать отзыв каждому студенту (DIR/<работа>.txt "
                                                     "и .json)")
    p.add_argument("--list", action="store_true", help="показать домашние работы и их части")
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
        if not path.is_dir():
            raise UsageError(f"папки {args.dir} нет")
        return str(path), f"модули из {args.dir}", ["--dir", args.dir]
    if args.notebook:
        path = Path(args.notebook).resolve()
        if not path.is_file() or path.suffix != ".ipynb":
            raise UsageError(f"тетрадки {args.notebook} нет (нужен файл .ipynb)")
        return str(path), f"тетрадка {args.notebook}", ["--notebook", args.notebook]
    return "homework", f"ваш код ({hw.homework_dir.relative_to(ROOT).as_posix()}/)", []


def _split_parts(hw, names: list[str]) -> list[tuple[homeworks.Part, list[str] | None]]:
    """Part names, or ``part::test`` selections, grouped by part in the homework's order."""
    chosen: dict[str, list[str] | None] = {}
    for name in names:
        part_id, _, test = name.partition("::")
        hw.part(part_id)  # raises UsageError for an unknown part
        if not test:
            chosen[part_id] = None
        elif chosen.get(part_id, []) is not None:
            chosen.setdefault(part_id, []).append(test)
    if not chosen:
        return [(p, None) for p in hw.parts]
    return [(p, chosen[p.id]) for p in hw.parts if p.id in chosen]


def _listing() -> str:
    lines = []
    for name in homeworks.available():
        hw = homeworks.load(name)
        lines.append(f"{name} — {hw.title}")
        lines += [f"    {p.id:<16} {p.title} ({p.points:g} баллов)" for p in hw.parts]
    return "\n".join(lines) or "домашних работ нет"


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8", errors="replace")
    args = build_parser().parse_args(argv)
    try:
        if args.list:
            print(_listing())
            return 0
        if not args.homework:
            raise UsageError("укажите домашнюю работу. Есть: " + ", ".join(homeworks.available()))
        hw = homeworks.load(args.homework)
        selected = _split_parts(hw, args.parts)
        if args.jobs < 1:
            raise UsageError("--jobs должно быть не меньше 1")
        if args.feedback and not args.batch:
            raise UsageError("--feedback — для пакетной проверки (--batch)")
        if args.batch:
            if args.json:
                raise UsageError("с --batch баллы записывает --csv; --json — для одной работы")
            try:
                from grader import batch
            except ImportError:
                raise UsageError("пакетная проверка (--batch) — инструмент преподавателя, в копии для студентов "
                                 "её нет") from None
            batch.run(hw, selected, Path(args.batch), jobs=args.jobs, timeout=args.timeout, csv_path=args.csv,
                      feedback_dir=args.feedback)
            return 0
        impl, label, source_opts = _source(args, hw)
    except UsageError as exc:
        print(f"ошибка: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_part, hw, part, impl, sel, args.timeout) for part, sel in selected]
        results = [f.result() for f in futures]
    rerun = " ".join(["python homework/check.py", hw.name, *source_opts])
    print(scoreboard(hw, results, label, rerun, verbose=args.verbose,
                     partial=any(sel is not None for _, sel in selected)))
    if args.json:
        export.write_json(args.json, results, time.perf_counter() - started)
    if args.csv:
        export.write_csv(args.csv, [export.csv_row(label, results)])
    return 0 if all_passed(results) else 1
