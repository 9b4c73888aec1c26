"""Alike submissions in the class report (grader/reporting/similarity.py, the section «Похожие работы» of
grader/reporting/class_report.py).

A class of six, compared without grading anyone (the records are made up; the code is the class folder's): the
reference, the loop-heavy variant (honest code written independently of it), the untouched stubs, a folder without
work, and a pair that is one solution of its own (the ppo part, in the stubs' other modules): alice wrote it, bob
handed it in with every local variable renamed and the functions in another order (tests/kit/disguise.py).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from disguise import disguise
from schema_subset import errors

from grader.base import homeworks
from grader.base.homeworks import ROOT
from grader.reporting import class_report, similarity
from kit import HW

pytest.importorskip("copydetect", reason="the extra .[report] (pip install -e \".[report]\")")

SCHEMA = json.loads(class_report.SCHEMA_FILE.read_text(encoding="utf-8"))
VARIANT = ROOT / "tests" / "kit" / "variants" / HW / "loop_heavy"
# alice's own ppo: the stub's TODO bodies written her way (not the reference's, not the variant's)
ALICE_PPO = {
    "td_errors": """    r = np.asarray(rewards, dtype=float)
    v = np.append(np.asarray(values, dtype=float), last_value)
    return r + gamma * v[1:] - v[:-1]""",
    "gae": """    deltas = td_errors(rewards, values, last_value, gamma)
    note = "решение alice"
    weights = (gamma * lam) ** np.arange(len(deltas))
    advantages = np.array([np.dot(weights[: len(deltas) - t], deltas[t:]) for t in range(len(deltas))])
    return advantages, advantages + np.asarray(values, dtype=float)""",
    "ppo_clip_objective": """    ratio = np.exp(np.asarray(logp_new, float) - np.asarray(logp_old, float))
    a = np.asarray(adv, float)
    return float(np.mean(np.minimum(ratio * a, np.clip(ratio, 1 - eps, 1 + eps) * a)))""",
    "normalize_advantages": """    a = np.asarray(adv, float)
    return (a - a.mean()) / (a.std() + eps)""",
    "ppo_loss": """    policy_term = ppo_clip_objective(logp_new, logp_old, adv, eps)
    value_term = np.mean((np.asarray(values_pred, float) - np.asarray(returns, float)) ** 2)
    return float(-policy_term + c_v * value_term - c_e * np.mean(entropy))""",
    "gae_with_boundaries": """    r, v, nv = (np.asarray(x, dtype=float) for x in (rewards, values, next_values))
    done, cut = np.asarray(terminated, dtype=bool), np.asarray(truncated, dtype=bool)
    out = np.zeros_like(r)
    running = np.zeros(r.shape[1:])
    for t in range(len(r) - 1, -1, -1):
        delta = r[t] + gamma * nv[t] * (~done[t]) - v[t]
        running = delta + gamma * lam * running * ~(done[t] | cut[t])
        out[t] = running
    return out, out + v""",
    "clipped_value_loss": """    vp, vo, ret = (np.asarray(x, float) for x in (values_pred, values_old, returns))
    clipped = vo + np.clip(vp - vo, -eps, eps)
    return float(np.mean(np.maximum((vp - ret) ** 2, (clipped - ret) ** 2)))""",
}


def _alice_ppo(stub: str, every: bool = True) -> str:
    """``stub`` with alice's bodies in place of its TODOs (``every``: each of them must be there)."""
    for name, body in ALICE_PPO.items():
        todo = f'    # TODO: ваш код\n    raise NotImplementedError("TODO: {name}")'
        assert todo in stub or not every, name
        stub = stub.replace(todo, body)
    return stub


@pytest.fixture(scope="module")
def hw():
    return homeworks.load(HW)


@pytest.fixture(scope="module")
def klass(tmp_path_factory, hw):
    folder = tmp_path_factory.mktemp("class")
    shutil.copytree(hw.solutions_dir, folder / "anna", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(VARIANT, folder / "ivan")
    shutil.copytree(hw.homework_dir, folder / "dave", ignore=shutil.ignore_patterns("__pycache__", "*.md"))
    (folder / "erin").mkdir()
    for name in ("alice", "bob"):
        shutil.copytree(hw.homework_dir, folder / name, ignore=shutil.ignore_patterns("__pycache__", "*.md"))
    ppo = _alice_ppo((hw.homework_dir / "ppo.py").read_text(encoding="utf-8"))
    (folder / "alice" / "ppo.py").write_text(ppo, encoding="utf-8")
    for i, part in enumerate(hw.parts):  # bob: every module of alice's, renamed and reordered
        module = folder / "bob" / f"{part.module}.py"
        mine = ppo if part.module == "ppo" else module.read_text(encoding="utf-8")
        module.write_text(disguise(mine, seed=i), encoding="utf-8")
    return folder


def _records(names: list[str], hw) -> list[dict]:
    parts = [{"id": p.id, "title": p.title, "points": p.points, "bonus_points": p.bonus_points, "score": 0.0,
              "bonus_score": 0.0, "error": ""} for p in hw.parts]
    return [class_report._record(n, f"../feedback/{n}.txt", "folder", ".", "", "", parts, [], [], "batch", [])
            for n in names]


NAMES = ["alice", "anna", "bob", "dave", "erin", "ivan"]


@pytest.fixture(scope="module")
def alike(klass, hw):
    return similarity.for_class(_records(NAMES, hw), hw, klass)


def test_the_disguised_pair_is_listed_first_and_honest_code_is_not(alike, klass):
    bob = (klass / "bob" / "ppo.py").read_text(encoding="utf-8")
    assert "advantages = " not in bob and "running = " not in bob  # renamed indeed
    assert alike["available"] and alike["compared"] == 5  # erin's folder has no code
    pairs = [(p["a"], p["b"], p["share"]) for p in alike["pairs"]]
    assert pairs and pairs[0][:2] == ("alice", "bob") and pairs[0][2] >= similarity.THRESHOLD, pairs
    assert all(p["share"] >= similarity.THRESHOLD for p in alike["pairs"])
    listed = {n for p in alike["pairs"] for n in (p["a"], p["b"])}
    assert not listed & {"anna", "ivan", "dave"}, pairs  # honest, independent code; the stubs are boilerplate
    regions = alike["pairs"][0]["regions"]
    assert regions and all(q["a"]["where"] == q["b"]["where"] == "ppo.py" for q in regions)
    assert any("np.clip(ratio, 1 - eps, 1 + eps)" in q["a"]["text"] and "np.clip(" in q["b"]["text"]
               for q in regions)


def test_the_report_shows_the_pair_side_by_side_with_links_and_the_json_validates(alike, hw, tmp_path):
    records = _records(NAMES, hw)
    links = {n: f"feedback/{n}.txt" for n in NAMES}
    data = class_report.build(records, tmp_path, links, plots=False, alike=alike)
    assert not errors(json.loads((tmp_path / "report.json").read_text(encoding="utf-8")), SCHEMA)
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    section = page[page.index('<h2 id="alike">'):]
    assert section.index("alice") < section.index("bob")
    assert 'href="feedback/alice.txt"' in section and 'href="feedback/bob.txt"' in section
    assert '<table class="alike">' in section and "ppo.py, строки" in section
    assert data["alike"]["pairs"][0]["feedback"] == ["feedback/alice.txt", "feedback/bob.txt"]


def test_quoted_code_is_escaped_by_the_kit(hw):
    code = similarity.Code([("ppo.py", "x = '</pre><script>alert(1)</script>'\n" * 3)])
    quote = similarity._quote(code, code.text, 0, 10)
    alike = {"available": True, "compared": 2, "threshold": similarity.THRESHOLD, "more": 0, "message": "",
             "pairs": [{"a": "alice", "b": "bob", "share": 1.0, "shares": [1.0, 1.0],
                        "regions": [{"a": quote, "b": quote}]}]}
    data = class_report.build_data(_records(["alice", "bob"], hw), alike=alike)
    page = class_report.render(data, plots=False)
    assert "<script>" not in page and "&lt;/pre&gt;&lt;script&gt;" in page


def test_anonymized_pairs_are_hashes_without_links_and_the_code_names_no_one(alike, hw, tmp_path):
    records = _records(NAMES, hw)
    assert any("alice" in q["a"]["text"] + q["b"]["text"] for q in alike["pairs"][0]["regions"])  # quoted as written
    class_report.build(records, tmp_path, {n: f"feedback/{n}.txt" for n in NAMES}, anonymize=True, salt="k",
                       plots=False, alike=alike)
    for file in ("index.html", "report.json"):
        text = (tmp_path / file).read_text(encoding="utf-8")
        assert not any(n in text for n in NAMES), file
        assert "feedback/" not in text
    pair = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["alike"]["pairs"][0]
    assert (pair["a"], pair["b"]) == (class_report.anonymous("alice", "k"), class_report.anonymous("bob", "k"))
    assert pair["feedback"] == ["", ""]


def test_without_copydetect_the_section_says_how_to_install_it(hw, klass, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "copydetect", None)  # import copydetect raises ImportError
    alike = similarity.for_class(_records(NAMES, hw), hw, klass)
    class_report.build(_records(NAMES, hw), tmp_path, plots=False, alike=alike)
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert not alike["available"] and "нет библиотеки copydetect" in page and similarity.INSTALL.replace(
        '"', "&quot;") in page


def test_report_class_compares_the_code_folder_and_a_gradescope_export(klass, hw, tmp_path, capsys):
    records_dir = tmp_path / "records"
    for r in _records(NAMES, hw):
        class_report.write_record(records_dir, r["name"], r)
    assert class_report.main([str(records_dir), str(tmp_path / "out"), "--code", str(klass), "--tables"]) == 0
    pairs = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))["alike"]["pairs"]
    assert (pairs[0]["a"], pairs[0]["b"]) == ("alice", "bob")
    assert class_report.main([str(records_dir), str(tmp_path / "bare"), "--tables"]) == 0  # no code: it says so
    assert "--code" in (tmp_path / "bare" / "index.html").read_text(encoding="utf-8")
    # a Gradescope export: each submission_<id>/ holds the student's files beside results.json
    export = tmp_path / "export"
    for i, name in enumerate(["alice", "bob", "anna"]):
        shutil.copytree(klass / name, export / f"submission_{i}")
        (export / f"submission_{i}" / "results.json").write_text(json.dumps({"tests": []}), encoding="utf-8")
    records, _ = class_report.read_source(export)
    assert all(Path(r["folder"]).is_dir() for r in records)
    found = similarity.for_class(records, hw)
    assert [(p["a"], p["b"]) for p in found["pairs"]] == [("submission_0", "submission_1")]


def test_a_batch_report_compares_the_class_folder(klass, hw, tmp_path):
    """What ``check.py HW --batch DIR --report REPORT`` does after grading (grader.batch.build_class_report), on
    records."""
    from grader import batch

    for r in _records(NAMES, hw):
        class_report.write_record(tmp_path / "records", r["name"], r)
    said = batch.build_class_report(hw, tmp_path, klass)
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert (data["alike"]["pairs"][0]["a"], data["alike"]["pairs"][0]["b"]) == ("alice", "bob")
    assert f"похожих пар работ: {len(data['alike']['pairs'])}" in said


def test_notebooks_are_compared_on_their_code_cells_and_the_provided_cells_are_boilerplate(klass, hw, tmp_path):
    """carol pasted alice's ppo into the kit's notebook; dave handed the notebook in untouched."""
    kit = json.loads((ROOT / "notebooks" / f"{HW}.ipynb").read_text(encoding="utf-8"))
    folder = tmp_path / "class"
    shutil.copytree(klass / "alice", folder / "alice")
    (folder / "dave.ipynb").write_text(json.dumps(kit), encoding="utf-8")
    for cell in kit["cells"]:
        if cell["cell_type"] == "code":
            cell["source"] = _alice_ppo("".join(cell["source"]), every=False)
    (folder / "carol.ipynb").write_text(json.dumps(kit), encoding="utf-8")
    found = similarity.for_class(_records(["alice", "carol", "dave"], hw), hw, folder)
    assert found["compared"] == 3
    assert [(p["a"], p["b"]) for p in found["pairs"]] == [("alice", "carol")], found["pairs"]
    assert all(q["b"]["where"].startswith("ячейка ") for q in found["pairs"][0]["regions"])


def test_the_same_class_gives_the_same_pairs_in_every_process(klass, hw):
    """copydetect hashes its k-grams with Python's hash(), which PYTHONHASHSEED salts per process: the kit gives it a
    hash of the text itself, so two processes salted differently find the same pairs, shares and regions."""
    script = ("import json, sys; from pathlib import Path; from grader.base import homeworks; "
              "from grader.reporting import similarity; "
              "hw = homeworks.load(sys.argv[1]); codes = similarity.class_code(Path(sys.argv[2]), hw); "
              "got = similarity.compare(codes, similarity.boilerplate(hw)); "
              "print(json.dumps(got['pairs'], sort_keys=True))")
    runs = [subprocess.run([sys.executable, "-c", script, HW, str(klass)], cwd=str(ROOT), capture_output=True,
                           text=True, env={**os.environ, "PYTHONHASHSEED": seed}, timeout=300) for seed in ("1", "2")]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    assert json.loads(runs[0].stdout) and runs[0].stdout == runs[1].stdout
