"""Проверка домашней работы: python homework/check.py s6-hw00-rl-foundations [часть ...] [опции].

Запускайте из корня репозитория; `python homework/check.py --help` покажет все опции.
"""
import importlib.util
import sys
from pathlib import Path

# what the check needs: without it, one line that says how to install it, instead of a scoreboard of errors
NEEDED = ["numpy", "pytest"] + (["tomli"] if sys.version_info < (3, 11) else [])

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if __name__ == "__main__":
    missing = [name for name in NEEDED if importlib.util.find_spec(name) is None]
    if missing:
        print(f"ошибка: не установлены пакеты, нужные проверке: {', '.join(missing)}. Установите их из корня "
              "репозитория: python -m pip install -e . (в виртуальном окружении, как в README)", file=sys.stderr)
        sys.exit(2)
    from grader.cli import main

    sys.exit(main())
