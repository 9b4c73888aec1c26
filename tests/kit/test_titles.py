"""The checks' shown titles: GitHub Classroom and Gradescope list each graded case as «[part] title»
(grader.reporting.export.gradescope), so two cases that share a title show one name twice."""
from collections import Counter

from kit import collected


def test_every_graded_case_has_a_shown_title_of_its_own(tmp_path):
    """Every case as the grade for the record collects it (public cases, their hidden twins, checks run only in the
    grade): a case's parameters that tell it apart are in its title, a hidden seed as «скрытый №k», a twin whose
    title shows no seed with «на скрытых входах»."""
    items = collected(tmp_path)
    shown = Counter(f"[{item['part']}] {item['title']}" for item in items)
    twice = {name: [i["nodeid"].split("::")[1] for i in items if f"[{i['part']}] {i['title']}" == name]
             for name, n in shown.items() if n > 1}
    assert not twice, twice
    assert len(items) > 200 and any(item["hidden"] for item in items)  # the whole collection, twins included
