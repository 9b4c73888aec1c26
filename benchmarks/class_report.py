"""How fast the class report builds for a big class, and how big it is (a benchmark, not a test).

    python benchmarks/class_report.py [--n 500] [--records FOLDER_OR_BUNDLE] [--tables] [--keep OUT]
    python benchmarks/class_report.py --make-class CLASS        # the sample's class of 32, from the catalogue
    python homework/check.py s6-hw00-rl-foundations --batch CLASS --report REPORT --jobs 2 --allow-default-secret
    python benchmarks/class_report.py --pack REPORT/records     # make the recorded sample from a real batch
    python benchmarks/class_report.py --n 60 --example docs/class-report-example.html   # the docs' example
    python benchmarks/class_report.py --alike [--n 500] [--sample 80]   # the section «Похожие работы»

A synthetic class of ``--n`` submissions is made from recorded results: the records a real
``check.py HW --batch DIR --report REPORT`` kept (``REPORT/records/``), or the sample the kit ships
(``benchmarks/data/class_records.json.gz``: a class of 32 graded on every part: the reference, the stubs, and 30
submissions with one to three typical mistakes of the catalogue in different parts, ``CLASS``; ``--make-class``
writes it, the commands above grade and pack it). Each synthetic submission
takes each part's results (scores, checks' verdicts, the mistakes its feedback named) from a recorded submission
drawn at random, so the mistakes, their shares and the failures without a name mix as in a real class. The records
are written to a folder, as a batch writes them, and the report is built from that folder as
``python -m grader.reporting.class_report`` builds it; the script prints the build's wall and CPU time and the sizes of
index.html, report.json and mistakes.csv. Nothing is graded.

``--alike``: the cost of comparing a class's code (grader.reporting.similarity) and where its THRESHOLD falls. A class
folder of ``--n`` submissions is written, each made from the reference or the loop-heavy variant (tests/kit/variants/),
with one to three typical mistakes of the catalogue appended to their modules and every module disguised
(tests/kit/disguise.py: local variables renamed, functions reordered). Two submissions of one origin are a disguised
copy; of the two origins, honest independent work. On ``--sample`` of them every pair is compared (the threshold at 0):
the script prints the highest honest share and the lowest disguised one; then the whole class is compared as a report
compares it, and the script prints its CPU time and whether the pairs listed are exactly the disguised ones.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.reporting import class_report  # noqa: E402

SAMPLE = Path(__file__).resolve().parent / "data" / "class_records.json.gz"
BUNDLE = 2  # the bundle's version: 2, records whose typical mistakes are the checks' fields (1 read them from texts)
HW = "s6-hw00-rl-foundations"
MUTANTS = ROOT / "tests" / "kit" / "mutants" / HW
# the sample's class: submission -> the catalogue's mistakes planted in a copy of the reference (None: the stubs)
CLASS = {
    "r00": [], "r01": ["policy_gradient/gradient_descent", "ppo/truncated_as_terminal"],
    "r02": ["boss/grad_without_ratio"], "r03": ["dp/q_gamma_outside", "control/return_not_reset"],
    "r04": ["mc_td/mc_alpha_ignored", "control/q_learning_terminal_not_updated", "dp/validation_exact_sum"],
    "r05": ["policy_gradient/gradient_descent", "ppo/boundaries_flattened", "boss/score_overwrites_kl"],
    "r06": ["control/return_not_reset", "ppo/td_next_shifted_back"],
    "r07": ["dp/eval_rewards_not_weighted_by_pi", "ppo/td_sign_flipped"],
    "r08": ["mc_td/mc_alpha_ignored", "policy_gradient/bandit_variance_ddof1", "boss/score_overwrites_kl"],
    "r09": ["dp/q_gamma_outside", "boss/adam_no_bias_correction", "control/ties_isclose"],
    "r10": ["mc_td/returns_forward"], "r11": ["policy_gradient/step_without_lr", "control/ties_isclose"],
    "r12": ["dp/vi_alias_one_sweep", "control/sarsa_resampled_next_action"],
    "r13": ["mc_td/td_no_gamma", "ppo/boundaries_next_from_values", "policy_gradient/softmax_global_sum"],
    "r14": ["mc_td/returns_forward"],
    "r15": ["mc_td/returns_forward", "control/return_not_reset", "policy_gradient/bandit_variance_ddof1"],
    "r16": ["ppo/boundaries_flattened", "boss/score_overwrites_kl"], "r17": ["policy_gradient/bandit_descent"],
    "r18": ["mc_td/td_epochs_ignored", "boss/adam_no_bias_correction", "ppo/normalize_per_column"],
    "r19": ["ppo/boundaries_next_from_values", "boss/score_overwrites_kl"],
    "r20": ["control/q_learning_terminal_not_updated", "policy_gradient/bandit_variance_all_steps"],
    "r21": ["ppo/td_next_shifted_back"],
    "r22": ["control/rng_per_episode", "policy_gradient/gradient_descent", "ppo/td_next_shifted_back"],
    "r23": ["mc_td/td_v0_int_copy", "ppo/td_next_shifted_back", "boss/ppo_update_step_counter_reset"],
    "r24": ["boss/ppo_update_drops_eps"], "r25": ["dp/eval_never_updates"], "r26": ["control/argmax_first_tie"],
    "r27": ["dp/eval_rewards_not_weighted_by_pi", "ppo/truncated_as_terminal"],
    "r28": ["dp/eval_rewards_not_weighted_by_pi", "mc_td/td_terminal_not_updated"],
    "r29": ["mc_td/td_epochs_ignored", "ppo/truncated_as_terminal", "control/ties_isclose"],
    "r30": ["dp/q_wrong_axis", "policy_gradient/step_without_lr"], "r31": None,
}


def make_class(folder: Path) -> None:
    """Write CLASS: each submission's modules, the reference's (or the stubs') with its mistakes appended to theirs
    (later definitions win), as tests/kit/catalogue.py applies a mistake."""
    for name, planted in CLASS.items():
        (folder / name).mkdir(parents=True)
        for module in ("dp", "mc_td", "control", "policy_gradient", "ppo", "boss"):
            text = (ROOT / ("homework" if planted is None else "solutions") / HW / f"{module}.py").read_text(
                encoding="utf-8")
            for m in planted or []:
                if m.split("/")[0] == module:
                    text += "\n\n# ---- mutant ----\n" + (MUTANTS / f"{m}.py").read_text(encoding="utf-8")
            (folder / name / f"{module}.py").write_text(text, encoding="utf-8")
    print(f"{folder}: {len(CLASS)} submissions")


def pack(records_dir: Path, out: Path) -> None:
    """A compact bundle of a batch's records: each part's checks once; per record only what failed."""
    records, _ = class_report.read_source(records_dir)
    catalogue: dict[str, list] = {}
    for r in records:
        for c in r["checks"]:
            rows = catalogue.setdefault(c["part"], [])
            row = [c["check"], c["title"], c["function"], c["bonus"]]
            if row not in rows:
                rows.append(row)
    packed = []
    for i, r in enumerate(records):
        packed.append({**{k: r[k] for k in ("error", "confinement", "parts", "kind")}, "name": f"r{i:02d}",
                       "ran": sorted({c["part"] for c in r["checks"]}),
                       "failed": [[c["part"], c["check"], c["kind"]] for c in r["checks"] if not c["passed"]],
                       "mistakes": r["mistakes"], "shown": r["shown"]})
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt", encoding="utf-8") as f:
        json.dump({"version": BUNDLE, "checks": catalogue, "records": packed}, f, ensure_ascii=False)
    print(f"{out}: {len(packed)} records, {out.stat().st_size / 1024:.0f} KB")


def unpack(bundle: Path) -> list[dict]:
    with gzip.open(bundle, "rt", encoding="utf-8") as f:
        data = json.load(f)
    if data.get("version") != BUNDLE:  # its mistakes were read from the feedback's texts
        raise SystemExit(f"{bundle}: a bundle of version {data.get('version')}, not {BUNDLE}: grade its class again "
                         "and pack it (the commands of this script's docstring)")
    records = []
    for p in data["records"]:
        failed = {(part, check): kind for part, check, kind in p["failed"]}
        checks = [{"part": part, "check": c, "title": t, "function": fn, "bonus": b,
                   "passed": (part, c) not in failed, "kind": failed.get((part, c), "")}
                  for part in p["ran"] for c, t, fn, b in data["checks"][part]]
        records.append(class_report._record(p["name"], "", p["kind"], "", p["error"], p["confinement"], p["parts"],
                                            checks, p["mistakes"], "batch", p["shown"]))
    return records


def synthetic(recorded: list[dict], n: int, seed: int = 0) -> list[dict]:
    """``n`` submissions, each part's results taken from a recorded submission drawn at random."""
    rng = random.Random(seed)
    parts = [p["id"] for p in next(r for r in recorded if not r["error"])["parts"]]
    out = []
    for i in range(n):
        donor = rng.choice(recorded)
        if donor["error"] and rng.random() < 0.5:  # a submission that could not be graded stays whole
            chosen = {pid: donor for pid in parts}
        else:
            chosen = {pid: rng.choice([r for r in recorded if not r["error"]]) for pid in parts}
        name = f"студент-{i + 1:03d}"
        checks = [c for pid, r in chosen.items() for c in r["checks"] if c["part"] == pid]
        mistakes = [m for pid, r in chosen.items() for m in r["mistakes"] if m["part"] == pid]
        shown = [s for pid, r in chosen.items() for s in r["shown"] if s[0] == pid]
        part_rows = [next(p for p in r["parts"] if p["id"] == pid) for pid, r in chosen.items()]
        error = donor["error"] if all(r is donor for r in chosen.values()) else ""
        out.append(class_report._record(name, f"../feedback/{name}.txt", "folder", ".", error,
                                        donor["confinement"], part_rows, checks, mistakes, "batch", shown))
    return out


VARIANT = ROOT / "tests" / "kit" / "variants" / HW / "loop_heavy"


def make_alike_class(folder: Path, n: int, seed: int) -> dict[str, str]:
    """Write a class of ``n`` disguised submissions into ``folder``; return each one's origin."""
    sys.path.insert(0, str(ROOT / "tests" / "kit"))
    from disguise import disguise

    rng = random.Random(seed)
    mutants = sorted(MUTANTS.glob("*/*.py"))
    modules = ("dp", "mc_td", "control", "policy_gradient", "ppo", "boss")
    origins = {}
    for i in range(n):
        name = f"s{i:03d}"
        origins[name] = rng.choice(["reference", "loop_heavy"])
        source = ROOT / "solutions" / HW if origins[name] == "reference" else VARIANT
        planted = rng.sample(mutants, rng.randint(1, 3))
        (folder / name).mkdir(parents=True)
        for module in modules:
            text = (source / f"{module}.py").read_text(encoding="utf-8")
            for m in planted:
                if m.parent.name == module:
                    text += "\n\n" + m.read_text(encoding="utf-8")
            (folder / name / f"{module}.py").write_text(disguise(text, rng.randrange(10**9)), encoding="utf-8")
    return origins


def alike(n: int, sample: int, seed: int) -> None:
    from grader.base import homeworks
    from grader.reporting import similarity
    hw = homeworks.load(HW)
    with tempfile.TemporaryDirectory(prefix="class-alike-") as tmp:
        wall, cpu = time.perf_counter(), time.process_time()
        origins = make_alike_class(Path(tmp), n, seed)
        print(f"class of {n} written ({sum(o == 'reference' for o in origins.values())} from the reference, the rest "
              f"from the variant): {time.perf_counter() - wall:.1f} s wall, {time.process_time() - cpu:.1f} s CPU")
        codes = similarity.class_code(Path(tmp), hw)
        common = similarity.boilerplate(hw)
        few = {name: codes[name] for name in sorted(codes)[:sample]}
        every = similarity.compare(few, common, threshold=0.0, listed=0)["found"]
        honest = [s for a, b, s in every if origins[a] != origins[b]]
        disguised = [s for a, b, s in every if origins[a] == origins[b]]
        print(f"sample of {len(few)}: {len(every)} pairs; highest honest share {max(honest):.3f}, lowest disguised "
              f"share {min(disguised):.3f} (THRESHOLD {similarity.THRESHOLD})")
        wall, cpu = time.perf_counter(), time.process_time()
        records = [{"name": name, "parts": []} for name in origins]
        found = similarity.for_class(records, hw, Path(tmp))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        listed = {(a, b) for a, b, _ in found["found"]}
        expected = {(a, b) for a in origins for b in origins if a < b and origins[a] == origins[b]}
        shares = [s for _, _, s in found["found"]]
        quoted = sum(1 for p in found["pairs"] if p["regions"])
        print(f"whole class of {found['compared']}: read, fingerprint, compare: {wall:.1f} s wall, {cpu:.1f} s CPU; "
              f"pairs listed {len(listed)} (with regions quoted {quoted}), disguised pairs {len(expected)}, "
              f"listed == disguised: {listed == expected}; lowest listed share {min(shares, default=0):.3f}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=500, help="submissions in the synthetic class")
    p.add_argument("--records", default=str(SAMPLE), help="a batch's records folder, or a bundle (--pack)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tables", action="store_true", help="no matplotlib plots: the histograms as tables")
    p.add_argument("--keep", metavar="OUT", help="build the report here and keep it (else a temporary folder)")
    p.add_argument("--pack", metavar="RECORDS", help="pack a batch's records folder into the sample bundle")
    p.add_argument("--make-class", metavar="FOLDER", help="write the sample's class (CLASS) into FOLDER, to grade")
    p.add_argument("--alike", action="store_true", help="the cost and the threshold of comparing a class's code")
    p.add_argument("--sample", type=int, default=80, help="with --alike: submissions whose every pair is compared")
    p.add_argument("--example", metavar="HTML", help="write the docs' example instead: a class of --n, tables, no "
                                                     "links (docs/class-report-example.html)")
    args = p.parse_args()
    if args.alike:
        alike(args.n, args.sample, args.seed)
        return 0
    if args.pack:
        pack(Path(args.pack), SAMPLE)
        return 0
    if args.make_class:
        make_class(Path(args.make_class))
        return 0
    source = Path(args.records)
    recorded = unpack(source) if source.is_file() else class_report.read_source(source)[0]
    if args.example:
        data = class_report.build_data(synthetic(recorded, args.n, args.seed), homework="пример: синтетический класс")
        Path(args.example).write_text(class_report.render(data, plots=False), encoding="utf-8")
        size = Path(args.example).stat().st_size / 1024
        print(f"{args.example}: {len(data['submissions'])} submissions, {size:.0f} KB")
        return 0
    with tempfile.TemporaryDirectory(prefix="class-report-") as tmp:
        records_dir = Path(tmp) / "records"
        for r in synthetic(recorded, args.n, args.seed):
            class_report.write_record(records_dir, r["name"], r)
        out = Path(args.keep) if args.keep else Path(tmp) / "report"
        wall, cpu = time.perf_counter(), time.process_time()
        records, base = class_report.read_source(records_dir)
        data = class_report.build(records, out, class_report.links_for(records, base, out),
                                  plots=False if args.tables else None)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        size = {f: (out / f).stat().st_size for f in ("index.html", "report.json", "mistakes.csv")}
        stored = sum(f.stat().st_size for f in records_dir.iterdir())
        plots = "tables" if args.tables or not class_report._plots_available(None) else "matplotlib SVG"
        print(f"recorded submissions: {len(recorded)} ({source.name}); synthetic class: {len(records)} "
              f"(records {stored / 1e6:.1f} MB)")
        print(f"named mistakes: {len(data['mistakes'])}; checks: {len(data['checks'])}; "
              f"functions with unnamed failures: {len(data['unnamed'])}; histograms: {plots}")
        print(f"build (read the records, write the report): {wall:.2f} s wall, {cpu:.2f} s CPU")
        print("sizes: " + ", ".join(f"{f} {b / 1024:.0f} KB" for f, b in size.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
