"""The words of what a teacher reads after grading: the class report, the LMS gradebooks."""

TEMPLATES: dict[str, str] = {
    # a status's name on the pages (pages.LABELS)
    "reports: status passed": "passed",
    "reports: status failed": "failed",
    "reports: status not attempted": "not attempted",
    "reports: status timed out": "timed out",
    "reports: status crashed": "crashed",
    "reports: status malformed": "malformed",
    "reports: status grader error": "grader error",
    "reports: status missing": "no submission",
    # the score histograms' axes (plots.py)
    "reports: plot score": "score",
    "reports: plot students": "students",
    "reports: tampering flag": (
        "tampering: the grader caught this code changing the grader or torch, or forging its report"),
    # `autograder report`: what it wrote (reports/cli.py)
    "reports: wrote overview": "class overview: {path} (students sorted by name, score and status beside it)",
    "reports: wrote pages": "a page per student: {students}/; per submission: {submissions}/",
    "reports: wrote spreadsheet gradebook": "gradebook for a spreadsheet: {path}",
    "reports: wrote lms gradebook": "gradebook to import into the LMS: {path}",
    "reports: wrote student folders": "to hand out, a folder per student with only their own page: {path}/",
    # its warnings and errors (reports/html.py)
    "reports: nothing graded": "no */results.json under {folder}{skipped}: grade first with "
                               "`autograder grade ... --out {folder}`",
    "reports: nothing graded skipped": " ({count} skipped: {first})",
    "reports: not a graded folder": "{folder} is not a folder: give the --out folder of `autograder grade`",
    "reports: results not read": "{folder}/results.json: not read ({why}); regrade that submission",
    "reports: results not the grader's": (
        "{folder}/results.json: not a results.json written by `autograder grade` ({why})"),
    "reports: skipped": "skipped {line}",
    "reports: lms note": "{file}: {note}",
    "reports: not on the roster": "{file}: {count} student(s) not on the roster, left out: {students}",
    "reports: several roster students": "{file}: {student} matches several roster students ({names}), left out",
    "reports: undecided": "{count} file(s) of no exercise the grader could tell, left out of the gradebooks and "
                          "the students' pages (under Needs attention in {index}): {submissions}",
    "reports: grader errors": "{count} grader error(s): no score, and no total for those students ({where}); "
                              "regrade them: {submissions}",
    "reports: grader errors where": "grader_error in gradebook_lms.csv",
    "reports: grader errors where lms": "grader_error in gradebook_lms.csv, '-' in {file}",
    # the LMS's import file, column by column (reports/gradebook.py)
    "reports: new column canvas": "{exercise}: no column of the roster matches it; `{column}` is a new assignment "
                                  "in Canvas",
    "reports: new column moodle": "{exercise}: no column of the roster matches it; `{column}` is a new column: map "
                                  "it to a grade item",
    "reports: several columns": "{exercise}: several roster columns match it ({columns}); using {column}",
    "reports: points scaled": "{exercise}: `{column}` is worth {lms_points} points in Canvas and {points} here: "
                              "scores are scaled to Canvas's points",
    # a roster (reports/roster.py)
    "reports: roster unreadable": "cannot read the roster {path}: {error}",
    "reports: roster empty": "the roster {path} is empty",
    "reports: roster unknown": "{path} is neither a Canvas gradebook export (columns Student, ID, SIS User ID, SIS "
                               "Login ID, Section, then assignments) nor a Moodle grades export (First name, Last "
                               "name, ID number, Email address, then grade items); its columns are: {columns}",
    "reports: not on the roster label": "not on the roster",
    # who needs attention, and why (reports/analysis.py)
    "reports: attention tampering": "Flagged as tampering",
    "reports: attention tampering why": "a check failed because the code changed the grader or torch, or the "
                                        "process sent a report of its own",
    "reports: attention crashed": "Crashed",
    "reports: attention crashed why": "the process died or exited before reporting",
    "reports: attention timed out": "Timed out",
    "reports: attention timed out why": "stopped when its time was up",
    "reports: attention malformed": "Unreadable (malformed)",
    "reports: attention malformed why": (
        "invalid notebook, no answer cells, empty, a syntax error, another exercise's notebook handed in for an "
        "assignment"),
    "reports: attention not attempted": "Not attempted",
    "reports: attention not attempted why": "handed in the exercise untouched",
    "reports: attention same check": "Failing the same check everywhere",
    "reports: attention same check why": "the same check failed in every exercise they ran that has it (two or more)",
    "reports: attention undecided": "Of no exercise the grader could tell",
    "reports: attention undecided why": "graded nowhere: regrade each with --exercise ID, or ask the student for "
                                        "the exercise's notebook",
    "reports: attention failed by all": "Failed by every submission that ran",
    "reports: attention failed by all why": "the exercise, its hints or the check may need a look",
    # what each status means, in the pages' legend (reports/pages.py)
    "reports: meaning passed": "full marks.",
    "reports: meaning failed": "the code ran; some checks failed.",
    "reports: meaning not attempted": "the answer still raises NotImplementedError.",
    "reports: meaning timed out": "stopped when its time was up.",
    "reports: meaning crashed": "the process died or exited before reporting, or sent a report that did not come "
                                "from the grader's harness.",
    "reports: meaning malformed": "could not be read: invalid notebook, no answer cells, empty, a syntax error, not "
                                  "a file.",
    "reports: meaning grader error": "the grader itself failed: not the student's fault, no score yet; regrade.",
    "reports: meaning missing": "nothing handed in for the exercise.",
    # the pages (reports/pages.py)
    "reports: grader error for the student": "Internal grading error: not your fault, and your teacher has been "
                                             "told. No score was given yet.",
    "reports: order by name": "by name",
    "reports: order by score": "by score, highest first",
    "reports: order by status": "by status, worst first",
    "reports: worst status group": "Worst status: {status} ({count} student{plural})",
    # the pages' own words (reports/templates/*.html, said with `say`; a field written there as markup, a link or
    # `<code>`, stays markup)
    "reports: class overview": "Class overview",
    "reports: nav by name": "Students by name",
    "reports: nav by score": "by score",
    "reports: nav by status": "by status",
    "reports: legend entry": "{status}: {meaning}",
    "reports: status": "Status",
    "reports: score": "Score",
    "reports: submission": "Submission",
    "reports: file": "File",
    "reports: late": "late",
    "reports: flagged": "Flagged: {flags}.",
    "reports: what went wrong": "What went wrong",
    "reports: what went wrong in checks": "What went wrong (the same in {count} checks)",
    "reports: culprit": "Culprit: {line}",
    "reports: culprit with code": "Culprit: {line}: {code}",
    "reports: culprit line": "line {line} of your answer",
    "reports: traceback": "The grader's traceback (teachers only)",
    "reports: check": "Check",
    "reports: result": "Result",
    "reports: points": "Points",
    "reports: what it checks": "What it checks, and what to fix",
    "reports: hidden inputs": "hidden inputs",
    "reports: same cause in": "{context}: see “What went wrong” above.",
    "reports: same cause": "See “What went wrong” above.",
    "reports: hidden note": "Checks on hidden inputs say whether they passed and why in general terms, never their "
                            "inputs or expected values. What your code printed while grading is not shown: it ran on "
                            "those inputs.",
    "reports: your answer": "Your answer",
    "reports: your answer highlighted": "Your answer (culprit lines highlighted)",
    "reports: culprit lines no file": "Culprit line(s) of your answer: {lines} (the submitted file was not available "
                                      "when this report was written).",
    "reports: all of the student's exercises": "All of {student}'s exercises",
    "reports: students in order": "Students {order}",
    "reports: table intro": "{count} students. A cell is the score of the student's submission of the exercise that "
                            "counts and its status code ({late}: late); it links to the student's page. Totals are "
                            "out of {max_total}.",
    "reports: student": "Student",
    "reports: total": "Total",
    "reports: student title": "{student} — feedback",
    "reports: on the roster as": "On the roster as {name}.",
    "reports: student needs attention": "Needs attention: {reasons}.",
    "reports: exercise": "Exercise",
    "reports: total unknown": "The total is not known: the grader itself failed on an exercise (not the student's "
                              "fault). Regrade it.",
    "reports: total unknown for the student": "The total is not known yet: the grader itself failed on an exercise "
                                              "(not your fault), and your teacher has been told.",
    "reports: other submissions": "Other submissions of this exercise (the one handed in last counts): "
                                  "{submissions}.",
    "reports: your other submissions": "Your other submissions of this exercise (the one handed in last counts): "
                                       "{submissions}.",
    "reports: other submission": "{submission} ({status}, {score})",
    "reports: other submission late": "{submission} ({status}, {score}, late)",
    "reports: other submission one": "one",
    "reports: no submission of the exercise": "{status}: no submission of this exercise.",
    "reports: overview counts": "{submissions} submissions from {students} students{roster}, {exercises} exercises.",
    "reports: overview counts roster": " ({count} on the {lms} roster)",
    "reports: gradebooks": "Gradebooks: {spreadsheet} (a spreadsheet){lms}.",
    "reports: gradebooks lms": ", {file} ({lms}'s import format)",
    "reports: banner grader errors": "{count} submission(s) hit an internal grading error",
    "reports: banner grader errors detail": "{what} (not the students' fault; no score was given). Their cells read "
                                            "{cell} in gradebook_lms.csv{lms}, and those students' totals are left "
                                            "out, not summed without them.",
    "reports: banner grader errors lms": " and {dash} (no grade) in {file}",
    "reports: banner regrade": "Regrade them (run the same {command} command again): {submissions}.",
    "reports: banner skipped": "{count} results.json file(s) could not be read",
    "reports: banner skipped detail": "{what} and are not in this report:",
    "reports: banner not in the roster file": "Not in {file}:",
    "reports: banner unmatched": "{count} student(s) not on the roster: {students}.",
    "reports: banner ambiguous": "{count} matching several roster students: {students}.",
    "reports: banner ambiguous one": "{student} ({names})",
    "reports: or": " or ",
    "reports: banner rename": "Rename their folders or files after their login or email, then run the report again.",
    "reports: status codes": "Status codes",
    "reports: needs attention": "Needs attention",
    "reports: why": "Why",
    "reports: students": "Students",
    "reports: who": "Who (and which exercises)",
    "reports: attention nobody": "Nobody: no untouched, crashed, unreadable or tampered submission, no check failed "
                                 "everywhere.",
    "reports: missing submissions": "Missing submissions",
    "reports: missing all": "No submission at all ({count}):",
    "reports: missing all against the roster": "No submission at all ({count}, against the roster):",
    "reports: missing some": "Some exercises missing ({count}):",
    "reports: missing none": "None.",
    "reports: missing none without a roster": "None among the students who handed something in (give {option} to "
                                              "find those who handed in nothing).",
    "reports: per exercise": "Per exercise",
    "reports: per exercise note": "Students per status: each student's submission of the exercise that counts (the "
                                  "one handed in last; none of several that nothing orders).",
    "reports: files": "Files",
    "reports: mean score": "Mean score",
    "reports: score distribution": "Score distribution per exercise",
    "reports: score distribution caption": "Students per score, one panel per exercise, each bar split by status "
                                           "(colour, hatching and the legend under the panels). Grader errors have "
                                           "no score and are not drawn.",
    "reports: most common failing checks": "Most common failing checks",
    "reports: failing checks caption": "How many submissions failed each check (top {top}), among submissions that "
                                       "ran and failed some checks: untouched, unreadable or crashed files fail every "
                                       "check and are counted in the table above.",
    "reports: every student": "Every student",
    "reports: every student pages": "The gradebook, one row per student, on pages of its own: {by_name}, {by_score} "
                                    "(highest first), {by_status} (worst first).",
    # the plots (reports/plots.py)
    "reports: plot no failed checks": "(no failed checks)",
    "reports: plot failing the check": "submissions failing the check",
    # --- regrade
    "reports: overrides not read": "{file} was not read ({why}): no score set by hand was applied",
    "reports: overrides columns": "{file} needs the columns {needed} (it has {found}): no score set by hand was "
                                  "applied",
    "reports: override bad score": "{file}, line {line}: the score {score} is not a number of 0 or more; that row "
                                   "was not applied",
    "reports: override matches nothing": "{file}, line {line}: nothing graded of {student} for {exercise}; that row "
                                         "was not applied",
    "reports: override dropped": "{file}: dropped the score set by hand for {student}, {exercise} ({score}: "
                                 "{reason}), which was graded again (--drop-overrides)",
    "reports: overridden": "Score set by hand to {score} (graded {graded}): {reason}. {summary}",
    "reports: overridden for the student": "Score set by your teacher: {score}. {summary}",
    # --- identity
    "reports: several files": (
        "Not graded: {count} files of exercise {exercise} from one student ({files}), and nothing the LMS wrote says "
        "which was handed in last. None counts, and the grader does not pick the best: keep the one to grade (move "
        "the others out of the class's folder) and grade again."),
}
