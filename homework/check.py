"""Проверка домашней работы: python homework/check.py s6-hw00-rl-foundations [часть ...] [опции].

Запускайте из корня репозитория; `python homework/check.py --help` покажет все опции.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
