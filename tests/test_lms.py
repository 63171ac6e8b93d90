"""The gradebooks an LMS imports, against the sample rosters (samples/roster_canvas.csv, roster_moodle.csv) of
the sample class, each read back the way the LMS's own importer reads it:

- Canvas: instructure/canvas-lms app/models/gradebook_importer.rb (header checks, the Points Possible row,
  computed columns ignored, `Title (id)` columns, students found by ID, `-` as no score);
- Moodle: moodle/moodle grade/import/csv/classes/load_data.php (a user column mapped to email, `''`/`-` as
  no grade, any other text or an unknown user aborting the whole import).
"""

import csv
import io
import json
import re
from pathlib import Path

import pytest

from autograder.cli import main as autograder
from autograder.exercises import get
from autograder.reports.gradebook import gradebook, lms_csv
from autograder.reports.graded import load
from autograder.reports.html import write_report
from autograder.reports.roster import RosterError, join, read_roster

ROOT = Path(__file__).resolve().parent.parent
CANVAS_ROSTER = ROOT / "samples" / "roster_canvas.csv"
MOODLE_ROSTER = ROOT / "samples" / "roster_moodle.csv"
IDS = {"ada": "1001", "bob": "1002", "cleo": "1003", "dan": "1004", "eve": "1005", "frank": "1006"}
EMAILS = {name: f"{name}@example.edu" for name in [*IDS, "grace"]}
# The class these tests grade: some of the exercises, each for what the sample rosters (exports of a term that
# graded the first six) make of it, with dan's score. Adding an exercise to the course changes nothing here.
DAN = {  # in the course's order
    "data_trap": 3,  # by its title in both; worth 20 points in Canvas
    "residual_add": 5,  # a column named by its id in both rosters; eve's grader error
    "inplace_dropout": 8,  # named by its title in both
    "rnn_hidden": 4,  # by its id in Canvas, by its title in Moodle
    "custom_inplace": 8,  # in neither roster: a new column
}


def write_result(folder: Path, name: str, exercise: str, status: str, score: float, path: str = "") -> None:
    data = {"exercise": exercise, "submission": name, "status": status, "score": score, "max_score": 10,
            "output": f"{score:g}/10 points.", "tests": [], "devices": ["cpu"], "execution_time": 0.1}
    if path:
        data["submission_path"] = path
    (folder / name).mkdir(parents=True)
    (folder / name / "results.json").write_text(json.dumps(data))


def sample_class(folder: Path) -> Path:
    """Results of the sample class's students for the exercises of DAN, as `autograder grade` writes them, with
    one grader error (eve's residual_add) for the gradebooks to keep out of any sum."""
    for ex in map(get, DAN):
        file = f"{ex.number:02d}_{ex.id}.ipynb"
        for student, status, score in (("ada", "passed", 10), ("bob", "not_attempted", 0),
                                       ("cleo", "failed", ex.number % 5), ("dan", "failed", DAN[ex.id]),
                                       ("eve", "grader_error" if ex.id == "residual_add" else "passed",
                                        10 * (ex.id != "residual_add")),
                                       ("frank", "malformed" if ex.number in (1, 2, 3, 7) else "failed", 0)):
            write_result(folder, f"{student}__{file}", ex.id, status, score, f"samples/class/{student}/{file}")
    return folder


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return sample_class(tmp_path_factory.mktemp("lms") / "grades")


def canvas_import(text: str) -> tuple[dict[str, dict[str, str]], dict[str, str], list[str]]:
    """{user id: {assignment: grade}}, {assignment: points possible} and the new assignments, as Canvas's
    GradebookImporter reads a CSV: it refuses a header without Student, ID ... Section; it takes the row whose
    first cell contains `Points Possible` as points; it drops its computed columns; a `Title (id)` column is
    assignment `id`; a student is found by the ID column."""
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1], "InvalidHeaderRow"
    end = 3
    if re.search(r"SIS\s+Login\s+ID", header[2]):
        end = 4
    elif re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        end = 5 + bool(re.search(r"Integration\s+ID", header[4]))
    assert "Section" in header[end - 1], "InvalidHeaderRow: the last student column must be Section"
    computed = re.compile("Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|Override")
    assignments = [(i, h) for i, h in enumerate(header) if i >= end and not computed.search(h)]
    grades, points, new = {}, {}, [h for _, h in assignments if not re.search(r"\(\d+\)$", h)]
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            points = {h: row[i] for i, h in assignments}
            continue
        assert row[1], f"a student without an ID: Canvas would look them up by name ({row[0]})"
        grades[row[1]] = {h: row[i].strip() for i, h in assignments}
    return grades, points, new


def moodle_import(text: str, emails: set[str]) -> dict[str, dict[str, float | None]]:
    """{email: {column: grade}} as Moodle's CSV import reads it with "Map from: Email address, Map to:
    useremail" and every other column mapped to a grade item: a user it cannot find, or a grade that is
    neither '', '-' nor a number, aborts the whole import."""
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    email = header.index("Email address")
    identity = {"First name", "Last name", "Surname", "ID number", "Institution", "Department", "Email address"}
    out = {}
    for row in rows[1:]:
        assert row[email] in emails, f"usermappingerrorusernotfound: {row[email]!r}"
        grades: dict[str, float | None] = {}
        for i, h in enumerate(header):
            if h in identity:
                continue
            value = row[i].strip()
            if value in ("", "-"):
                grades[h] = None
            else:
                try:
                    grades[h] = float(value)
                except ValueError:
                    raise AssertionError(f"badgrade: {value!r} in {h}: Moodle aborts the import") from None
        out[row[email]] = grades
    return out


# ---- Canvas ------------------------------------------------------------------------------------------------


def test_canvas_import_file_from_the_sample_roster(graded, tmp_path):
    paths = write_report(graded, tmp_path / "report", roster=CANVAS_ROSTER)
    assert paths["lms"] == tmp_path / "report" / "gradebook_canvas.csv"
    text = paths["lms"].read_text()
    header = next(csv.reader(io.StringIO(text)))
    assert header[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]  # as the roster had them
    assert not any(re.search(r"(?i)total|current|final|quiz", h) for h in header)  # nothing counted twice
    grades, points, new = canvas_import(text)
    assert list(grades) == ["1001", "1002", "1003", "1004", "1005", "1006", "1007"]  # the roster's order,
    assert "1099" not in grades  # without Canvas's Test Student
    assert new == ["11_custom_inplace"]  # the only exercise with no assignment in Canvas yet
    # course order; no column for what was not graded
    assert header[5:] == ["The .data trap (4416)", "03_residual_add (4411)", "In-place dropout (4412)",
                          "07_rnn_hidden (4414)", "11_custom_inplace"]
    assert points == {h: "20" if "data trap" in h else "10" for h in header[5:]}
    assert grades["1001"] == {h: "20" if "data trap" in h else "10" for h in header[5:]}  # ada; scaled to 20
    assert grades["1002"] == dict.fromkeys(header[5:], "0")  # bob: untouched is a 0, not empty
    assert list(grades["1004"].values()) == ["6", "5", "8", "4", "8"]  # dan, joined by login
    assert set(grades["1007"].values()) == {""}  # grace handed in nothing: there, with empty grades
    eve = grades["1005"]
    assert eve["03_residual_add (4411)"] == "-"  # a grader error: no score to Canvas, and visibly not a number
    assert all(v == "20" if "data trap" in h else v == "10" for h, v in eve.items() if "4411" not in h)
    for row in grades.values():
        assert all(v in ("", "-") or re.fullmatch(r"\d+(\.\d+)?", v) for v in row.values())
    assert any("worth 20 points in Canvas" in w for w in paths["warnings"])
    assert any("grader error" in w and "Noether, Eve/residual_add" in w and "'-' in gradebook_canvas.csv" in w
               for w in paths["warnings"])
    overview = paths["index"].read_text()
    assert "No submission at all (1, against the roster)" in overview and "Hopper, Grace" in overview
    assert "<code>-</code> (no grade) in gradebook_canvas.csv" in overview
    spreadsheet = list(csv.reader(io.StringIO(paths["gradebook"].read_text())))
    # the roster's missing student, in the spreadsheet too (no total)
    assert spreadsheet[-1] == ["Hopper, Grace", *[""] * (len(DAN) + 1)]


def test_canvas_downloads_join_by_user_id(tmp_path):
    """Canvas names files after the user's sortable name and id: the id joins, late or handed in again."""
    grades_dir = tmp_path / "grades"
    for name, exercise, score in (("lovelaceada_1001_5001_01_residual_add.ipynb", "residual_add", 4),
                                  ("lovelaceada_LATE_1001_5002_01_residual_add-1.ipynb", "residual_add", 9),
                                  ("someoneelse_1003_5003_06_data_trap.ipynb", "data_trap", 7),
                                  ("ghost_9999_5004_06_data_trap.ipynb", "data_trap", 5)):
        write_result(grades_dir, name, exercise, "failed", score)
    book = gradebook(load(grades_dir))
    assert [r.student for r in book.rows] == ["ghost", "lovelaceada", "someoneelse"]  # one row for ada's three
    joined = join(book, read_roster(CANVAS_ROSTER))
    assert [r.student for r in joined.unmatched] == ["ghost"]
    grades, _, _ = canvas_import(lms_csv(book, joined)[0])
    assert grades["1001"]["03_residual_add (4411)"] == "9"  # the latest, the late resubmission
    assert grades["1003"]["The .data trap (4416)"] == "14"  # cleo's id, whatever the file's name said; 7/10 of 20
    assert "9999" not in grades


def test_ambiguous_and_unknown_students_are_left_out_and_said(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,03_residual_add (1)\n"
                      '"Smith, John",1,,jsmith1,A,\n"Smith, John",2,,jsmith2,A,\n"Doe, Jane",3,,jdoe,A,\n')
    grades_dir = tmp_path / "grades"
    write_result(grades_dir, "John_Smith__01_residual_add.ipynb", "residual_add", "passed", 10)
    write_result(grades_dir, "jdoe__01_residual_add.ipynb", "residual_add", "failed", 6)
    write_result(grades_dir, "zed__01_residual_add.ipynb", "residual_add", "failed", 2)
    paths = write_report(grades_dir, tmp_path / "r", roster=roster)
    grades, _, _ = canvas_import(paths["lms"].read_text())
    assert grades == {"1": {"03_residual_add (1)": ""}, "2": {"03_residual_add (1)": ""},
                      "3": {"03_residual_add (1)": "6"}}
    assert any("John_Smith matches several roster students (Smith, John or Smith, John)" in w
               for w in paths["warnings"])
    assert any("not on the roster, left out: zed" in w for w in paths["warnings"])
    overview = paths["index"].read_text()
    assert "1 student(s) not on the roster: zed" in overview and "John_Smith (Smith, John or Smith, John)" in overview


def test_hostile_roster_names_stay_text(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text('Student,ID,SIS Login ID,Section,03_residual_add (1)\n'
                      '"=HYPERLINK(""http://x"")",1,ada,A,\n"<script>alert(1)</script>",2,bob,A,\n'
                      '"<b>Nobody</b>",3,nobody,A,\n')
    grades_dir = tmp_path / "grades"
    write_result(grades_dir, "ada__01_residual_add.ipynb", "residual_add", "passed", 10)
    write_result(grades_dir, "bob__01_residual_add.ipynb", "residual_add", "passed", 10)
    paths = write_report(grades_dir, tmp_path / "r", roster=roster)
    rows = list(csv.reader(io.StringIO(paths["lms"].read_text())))
    assert rows[2][:2] == ["'=HYPERLINK(\"http://x\")", "1"]  # no formula when the teacher opens it
    assert canvas_import(paths["lms"].read_text())[0]["1"] == {"03_residual_add (1)": "10"}  # joined by ID all the same
    for page in [paths["index"], *paths["students"].iterdir(), *(tmp_path / "r").glob("by_*.html")]:
        text = page.read_text()
        assert "<script>" not in text and "<b>" not in text, page
    assert "&lt;b&gt;Nobody&lt;/b&gt;" in paths["index"].read_text()


# ---- Moodle ------------------------------------------------------------------------------------------------


def test_moodle_import_file_from_the_sample_roster(graded, tmp_path):
    paths = write_report(graded, tmp_path / "report", roster=MOODLE_ROSTER)
    assert paths["lms"] == tmp_path / "report" / "gradebook_moodle.csv"
    text = paths["lms"].read_text()
    header = next(csv.reader(io.StringIO(text)))
    assert header[:6] == ["First name", "Last name", "ID number", "Institution", "Department", "Email address"]
    assert "Course total (Real)" not in header and "Last downloaded from this course" not in header
    assert not any(re.search(r"(?i)total", h) for h in header)
    grades = moodle_import(text, set(EMAILS.values()))
    assert list(grades) == [EMAILS[n] for n in ("ada", "bob", "cleo", "dan", "eve", "frank", "grace")]
    columns = header[6:]
    assert columns == ["Assignment: The .data trap (Real)", "Assignment: 03_residual_add (Real)",
                       "Assignment: In-place dropout (Real)", "Assignment: The carried hidden state (Real)",
                       "11_custom_inplace"]
    assert list(grades[EMAILS["dan"]].values()) == [float(score) for score in DAN.values()]
    assert set(grades[EMAILS["ada"]].values()) == {10.0}
    assert set(grades[EMAILS["grace"]].values()) == {None}  # no submission: there, with empty grades
    assert grades[EMAILS["eve"]]["Assignment: 03_residual_add (Real)"] is None  # the grader error: `-`
    eve_row = next(r for r in csv.reader(io.StringIO(text)) if r[5] == EMAILS["eve"])
    assert eve_row[6:] == ["-" if e == "residual_add" else "10" for e in DAN]  # the grader error's cell only


def test_moodle_downloads_join_by_name(tmp_path):
    """Moodle names files (or, by default, folders) after the student's full name and a participant id of the
    assignment, which its grades export does not have: the name joins."""
    grades_dir = tmp_path / "grades"
    write_result(grades_dir, "Ada_Lovelace_71_assignsubmission_file___01_residual_add.ipynb", "residual_add",
                 "failed", 6, "dl/Ada Lovelace_71_assignsubmission_file_/03_residual_add.ipynb")
    write_result(grades_dir, "Ada_Lovelace_71_assignsubmission_file_06_data_trap.ipynb", "data_trap", "passed", 10,
                 "dl/Ada Lovelace_71_assignsubmission_file_06_data_trap.ipynb")
    write_result(grades_dir, "Grace_Hopper_72_assignsubmission_file_06_data_trap.ipynb", "data_trap", "failed", 3)
    book = gradebook(load(grades_dir))
    assert [r.student for r in book.rows] == ["Ada Lovelace", "Grace Hopper"]
    grades = moodle_import(lms_csv(book, join(book, read_roster(MOODLE_ROSTER)))[0], set(EMAILS.values()))
    assert grades[EMAILS["ada"]] == {"Assignment: 03_residual_add (Real)": 6.0,
                                     "Assignment: The .data trap (Real)": 10.0}
    assert grades[EMAILS["grace"]] == {"Assignment: 03_residual_add (Real)": None,
                                       "Assignment: The .data trap (Real)": 3.0}
    assert grades[EMAILS["bob"]] == {"Assignment: 03_residual_add (Real)": None,
                                     "Assignment: The .data trap (Real)": None}


def test_moodle_roster_variants(tmp_path):
    roster = tmp_path / "moodle.csv"
    roster.write_bytes("\ufeffFirst name,Surname,ID number,Email address,Quiz: Warm-up (Real),Course total (Real)\n"
                       "Zoë,Ørsted,77,zoe@example.edu,3,3\n".encode())  # Excel's byte-order mark; older "Surname"
    read = read_roster(roster)
    assert read.lms == "moodle" and read.identity == ("First name", "Surname", "ID number", "Email address")
    assert read.grade_columns == ("Quiz: Warm-up (Real)",) and read.students[0].name == "Zoë Ørsted"
    grades_dir = tmp_path / "grades"
    write_result(grades_dir, "zoe__05_leaf_sgd.ipynb", "leaf_sgd", "passed", 10)
    book = gradebook(load(grades_dir))
    text, notes = lms_csv(book, join(book, read))
    assert text.splitlines() == ["First name,Surname,ID number,Email address,01_leaf_sgd",
                                 "Zoë,Ørsted,77,zoe@example.edu,10"]
    assert notes == ["leaf_sgd: no column of the roster matches it; `01_leaf_sgd` is a new column: "
                     "map it to a grade item"]


# ---- the command -------------------------------------------------------------------------------------------


def test_report_command_with_a_roster(graded, tmp_path, capsys):
    assert autograder(["report", str(graded), "--out", str(tmp_path / "c"), "--roster", str(CANVAS_ROSTER)]) == 0
    out, err = capsys.readouterr()
    assert "gradebook to import into the LMS: " in out and (tmp_path / "c" / "gradebook_canvas.csv").is_file()
    assert "warning: 1 grader error(s)" in err and "Noether, Eve/residual_add" in err  # named as the roster writes her
    bad = tmp_path / "bad.csv"
    bad.write_text("name,score\nada,3\n")
    assert autograder(["report", str(graded), "--out", str(tmp_path / "b"), "--roster", str(bad)]) == 2
    assert "neither a Canvas gradebook export" in capsys.readouterr().err
    assert autograder(["report", str(graded), "--roster", str(tmp_path / "absent.csv")]) == 2
    assert "cannot read the roster" in capsys.readouterr().err
    with pytest.raises(RosterError):
        read_roster(tmp_path / "absent.csv")
