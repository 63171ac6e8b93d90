"""Issue 35, the report's side: students named as the roster writes them (accents and all, in the pages, the
gradebooks and the folders handed back), "failing the same check everywhere" only of checks that ran, and files
of no exercise the grader could tell (exercise `unknown`) under "needs attention" and nowhere else. Each through
the real command, `autograder report`, on a graded folder as `autograder grade` writes it."""

import csv
import io
import json
import unicodedata
from pathlib import Path

from autograder.cli import main as autograder
from autograder.reports.pages import _safe, student_pages

CANVAS_HEADER = ("Student,ID,SIS User ID,SIS Login ID,Section,03_residual_add (4411),The .data trap (4416),"
                 "Current Score\n    Points Possible,,,,,10,10,(read only)\n")
ROSTER = [  # (roster name, Canvas user id, login)
    ("Núñez, José", "2001", "nunezjose"),
    ("Ångström, Zoë", "2002", "angstromzoe"),
    ("Lovelace, Ada", "2003", "ada"),
    ("Smith, John", "2004", "jsmith1"),
    ("Smith, John", "2005", "jsmith2"),
    ("O'Brien, Siobhán", "2006", "obrien"),  # these two hand nothing in
    ("Smith, John", "2007", "jsmith3"),
]


def write_result(folder: Path, name: str, exercise: str, status: str, score: float, path: str = "",
                 tests: list[dict] | None = None, output: str = "") -> None:
    data = {"exercise": exercise, "submission": name, "status": status, "score": score, "max_score": 10,
            "output": output or f"{score:g}/10 points.", "tests": tests or [], "devices": ["cpu"],
            "execution_time": 0.1}
    if path:
        data["submission_path"] = path
    (folder / name).mkdir(parents=True)
    (folder / name / "results.json").write_text(json.dumps(data))


def canvas_roster(folder: Path) -> Path:
    roster = folder / "roster_canvas.csv"
    rows = io.StringIO()
    writer = csv.writer(rows, lineterminator="\n")
    for name, user, login in ROSTER:
        writer.writerow([name, user, f"S{user}", login, "Deep Learning 101", "", "", ""])
    roster.write_text(CANVAS_HEADER + rows.getvalue(), encoding="utf-8")
    return roster


def canvas_class(folder: Path) -> Path:
    """Canvas downloads (`<login-ish name>_<user id>_<submission id>_<file>`) of the roster's students but
    the last two, two exercises each; and one file of a student not on the roster."""
    graded = folder / "grades"
    for _, user, login in ROSTER[:-2]:
        for i, exercise in ((3, "residual_add"), (2, "data_trap")):
            file = f"{login.replace('_', '')}_{user}_{int(user) * 10 + i}_{i:02d}_{exercise}.ipynb"
            write_result(graded, file, exercise, "passed", 10, f"downloads/{file}")
    write_result(graded, "mallory_9999_1_03_residual_add.ipynb", "residual_add", "failed", 3,
                 "downloads/mallory_9999_1_03_residual_add.ipynb")
    return graded


def report(graded: Path, out: Path, *options: str) -> tuple[int, Path]:
    return autograder(["report", str(graded), "--out", str(out / "report"), *options]), out / "report"


# ---- names as the roster writes them -----------------------------------------------------------------------


def test_students_are_named_as_the_roster_writes_them(tmp_path, capsys):
    graded, roster = canvas_class(tmp_path), canvas_roster(tmp_path)
    rc, out = report(graded, tmp_path, "--roster", str(roster), "--for-students", str(tmp_path / "hand"))
    assert rc == 0, capsys.readouterr().err
    handed = sorted(p.name for p in (tmp_path / "hand").iterdir())
    assert handed == sorted(["Núñez_José", "Ångström_Zoë", "Lovelace_Ada", "Smith_John_jsmith1",
                             "Smith_John_jsmith2", "mallory"]), handed  # no letter lost, two Johns apart
    assert all(unicodedata.is_normalized("NFC", name) for name in handed)
    page = (tmp_path / "hand" / "Núñez_José" / "index.html").read_text(encoding="utf-8")
    assert "<h1>Núñez, José</h1>" in page and "nunezjose" not in page
    assert (out / "students" / "Ångström_Zoë.html").is_file()
    # the spreadsheet gradebook names every roster student as the roster does, with or without submissions
    rows = list(csv.DictReader(io.StringIO((out / "gradebook_lms.csv").read_text(encoding="utf-8"))))
    assert sorted(r["student"] for r in rows) == sorted(
        ["Núñez, José", "Ångström, Zoë", "Lovelace, Ada", "Smith, John (jsmith1)", "Smith, John (jsmith2)",
         "O'Brien, Siobhán", "Smith, John (jsmith3)", "mallory"])
    assert {r["student"]: r["total"] for r in rows}["Núñez, José"] == "20"
    for page in ("index.html", "by_name.html", "by_score.html", "by_status.html"):
        text = (out / page).read_text(encoding="utf-8")
        assert "angstromzoe" not in text and "nunezjose" not in text, page
    assert "Ångström, Zoë" in (out / "by_name.html").read_text(encoding="utf-8")
    missing = (out / "index.html").read_text(encoding="utf-8").split('id="missing"', 1)[1]
    assert "O&#39;Brien, Siobhán, Smith, John (jsmith3)" in missing  # as the gradebook names them
    canvas = list(csv.reader(io.StringIO((out / "gradebook_canvas.csv").read_text(encoding="utf-8"))))
    assert [r[0] for r in canvas[2:]] == [name for name, _, _ in ROSTER]  # the roster's rows, as it wrote them
    assert "mallory" in capsys.readouterr().err  # not on the roster: said, and left out of the LMS file


def test_folder_names_keep_letters_and_stay_apart():
    nfd = unicodedata.normalize("NFD", "Zoë Ångström")
    assert _safe("Núñez José") == "Núñez_José" and _safe(nfd) == "Zoë_Ångström"
    assert _safe("Пётр Чайковский") == "Пётр_Чайковский" and _safe("李小龍") == "李小龍"
    assert _safe("../../etc/passwd") == "etc_passwd" and _safe("a\x00b\nc: d*e?f") == "a_b_c_d_e_f"
    assert _safe("CON") == "_CON" and _safe("...") == "_"
    long = _safe("Ñ" * 200)
    assert len(long.encode()) <= 120 and long.startswith("Ñ") and long != _safe("Ñ" * 199)
    pages = student_pages(["Zoë Ångström", nfd, "Ada Lovelace", "Ada_Lovelace", "ada lovelace", "index"])
    assert len({p.casefold() for p in pages.values()}) == 6  # distinct on a case-insensitive file system too
    assert {pages["Zoë Ångström"], pages[nfd]} == {"Zoë_Ångström", "Zoë_Ångström-2"}  # one name to a Mac: apart
    assert pages["index"] == "index-2"  # not the overview's name


def test_moodle_names_keep_their_letters(tmp_path, capsys):
    roster = tmp_path / "roster_moodle.csv"
    roster.write_text("First name,Last name,ID number,Institution,Department,Email address,"
                      "Assignment: 03_residual_add (Real),Course total (Real)\n"
                      "José,Núñez,S1,U,C,jose@example.edu,-,-\nZoë,Ångström,S2,U,C,zoe@example.edu,-,-\n",
                      encoding="utf-8")
    graded = tmp_path / "grades"
    for name in ("José Núñez", "Zoë Ångström"):
        file = f"{name}_77_assignsubmission_file_03_residual_add.ipynb"
        write_result(graded, file.replace(" ", "_"), "residual_add", "passed", 10, f"dl/{file}")
    rc, out = report(graded, tmp_path, "--roster", str(roster), "--for-students", str(tmp_path / "hand"))
    assert rc == 0, capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "hand").iterdir()) == ["José_Núñez", "Zoë_Ångström"]
    rows = list(csv.DictReader(io.StringIO((out / "gradebook_lms.csv").read_text(encoding="utf-8"))))
    assert [r["student"] for r in rows] == ["José Núñez", "Zoë Ångström"]


# ---- failing the same check everywhere: only checks that ran -----------------------------------------------


def check(name: str, status: str, output: str = "") -> dict:
    return {"name": name, "score": 10 if status == "passed" else 0, "max_score": 10, "status": status,
            "output": output, "visibility": "visible", "description": ""}


def test_same_check_everywhere_lists_only_checks_that_ran(tmp_path, capsys):
    graded = tmp_path / "grades"
    gated = "Not counted yet: backward must first run without the in-place error."
    for i, exercise in ((3, "residual_add"), (2, "data_trap")):
        write_result(graded, f"ada__{i:02d}_{exercise}.ipynb", exercise, "failed", 0,
                     tests=[check("forward", "failed", gated), check("backward", "failed", "RuntimeError ...")])
        write_result(graded, f"bob__{i:02d}_{exercise}.ipynb", exercise, "failed", 10,
                     tests=[check("forward", "failed", gated), check("backward", "passed")])
    rc, out = report(graded, tmp_path)
    assert rc == 0, capsys.readouterr().err
    index = (out / "index.html").read_text()
    assert "Failing the same check everywhere" in index
    assert "“backward” in 2" in index and "“forward”" not in index  # gated: never ran as itself
    assert "“forward”" not in (out / "students" / "bob.html").read_text()


# ---- files of no exercise ----------------------------------------------------------------------------------


def test_a_file_of_no_exercise_is_under_needs_attention_and_nowhere_else(tmp_path, capsys):
    graded = canvas_class(tmp_path)
    reason = "hw3.py does not say which exercise it is (no notebook metadata, no exercise id in its name): " \
             "grade it with --exercise ID."
    write_result(graded, "ada_2003_77_hw3.py", "unknown", "malformed", 0, "downloads/ada_2003_77_hw3.py",
                 output=reason)
    write_result(graded, "scratch.py", "unknown", "malformed", 0, "class/scratch.py",
                 output=reason.replace("hw3.py", "scratch.py"))
    rc, out = report(graded, tmp_path, "--roster", str(canvas_roster(tmp_path)), "--for-students",
                     str(tmp_path / "hand"))
    err = capsys.readouterr().err
    assert rc == 0, err
    index = (out / "index.html").read_text(encoding="utf-8")
    attention, rest = index.split('id="attention"', 1)[1].split('id="missing"', 1)
    assert "Of no exercise the grader could tell" in attention and "ada_2003_77_hw3.py" in attention
    assert "hw3.py does not say which exercise it is" in attention and "scratch.py does not say" in attention
    assert "unknown" not in rest and "hw3" not in rest and "scratch" not in rest  # not an exercise, nobody missing it
    assert "unknown" not in index.split('id="attention"', 1)[0]
    for page in [*out.rglob("*.html"), *(tmp_path / "hand").rglob("*.html")]:
        if page.name != "index.html" or page.parent != out:
            text = page.read_text(encoding="utf-8")
            assert "unknown" not in text and "hw3" not in text and "scratch" not in text, page
    assert not any("scratch" in p.name or "hw3" in p.name for p in [*out.rglob("*"), *(tmp_path / "hand").rglob("*")])
    for name in ("gradebook_lms.csv", "gradebook_canvas.csv"):
        header = next(csv.reader(io.StringIO((out / name).read_text(encoding="utf-8"))))
        assert "unknown" not in header and not any("unknown" in c for c in header), (name, header)
    rows = list(csv.DictReader(io.StringIO((out / "gradebook_lms.csv").read_text(encoding="utf-8"))))
    assert "scratch" not in {r["student"] for r in rows}
    assert "2 file(s) of no exercise the grader could tell" in err and "scratch.py" in err


def test_moodle_import_file_gains_no_unknown_column(tmp_path, capsys):
    roster = tmp_path / "roster_moodle.csv"
    roster.write_text("First name,Last name,ID number,Institution,Department,Email address,"
                      "Assignment: 03_residual_add (Real),Course total (Real)\n"
                      "Ada,Lovelace,S1,U,C,ada@example.edu,-,-\n")
    graded = tmp_path / "grades"
    write_result(graded, "ada__03_residual_add.ipynb", "residual_add", "passed", 10)
    write_result(graded, "ada__notes.ipynb", "unknown", "malformed", 0, output="notes.ipynb does not say which "
                 "exercise it is (no notebook metadata, no exercise id in its name): grade it with --exercise ID.")
    rc, out = report(graded, tmp_path, "--roster", str(roster))
    assert rc == 0, capsys.readouterr().err
    lines = (out / "gradebook_moodle.csv").read_text().splitlines()
    assert lines == ["First name,Last name,ID number,Institution,Department,Email address,"
                     "Assignment: 03_residual_add (Real)", "Ada,Lovelace,S1,U,C,ada@example.edu,10"]


def test_stray_files_graded_by_the_batch_reach_no_gradebook(tmp_path, capsys):
    """The same, with the batch's own verdicts: `autograder grade` on a class folder holding a file it cannot tell
    the exercise of (`ada/hw3.py`, a loose `scratch.py`), into the graded folder of a Canvas class."""
    graded = canvas_class(tmp_path)
    (tmp_path / "class" / "ada").mkdir(parents=True)
    (tmp_path / "class" / "ada" / "hw3.py").write_text("x = 1\n")
    (tmp_path / "class" / "scratch.py").write_text("y = 2\n")
    assert autograder(["grade", str(tmp_path / "class"), "--out", str(graded)]) == 0
    assert json.loads((graded / "scratch.py" / "results.json").read_text())["exercise"] == "unknown"
    capsys.readouterr()
    rc, out = report(graded, tmp_path, "--roster", str(canvas_roster(tmp_path)), "--for-students",
                     str(tmp_path / "hand"))
    err = capsys.readouterr().err
    assert rc == 0, err
    index = (out / "index.html").read_text(encoding="utf-8")
    attention, rest = index.split('id="attention"', 1)[1].split('id="missing"', 1)
    assert "ada__hw3.py (hw3.py does not say which exercise it is" in attention
    assert "scratch.py (scratch.py does not say which exercise it is" in attention
    assert "unknown" not in rest and "hw3" not in rest and "scratch" not in rest
    assert "unknown" not in (out / "gradebook_canvas.csv").read_text().splitlines()[0]
    assert "unknown" not in (out / "gradebook_lms.csv").read_text().splitlines()[0]
    assert sorted(p.name for p in (tmp_path / "hand").iterdir()) == sorted(
        ["Núñez_José", "Ångström_Zoë", "Lovelace_Ada", "Smith_John_jsmith1", "Smith_John_jsmith2", "mallory"])
    assert "2 file(s) of no exercise the grader could tell" in err
