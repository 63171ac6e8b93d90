"""What a teacher reads after grading: the class report (`html`: the pages; `templates`, `plots`), the
graded folder read back (`graded`), the gradebooks for a spreadsheet and an LMS (`lms`). Pure functions of
results.json files: nothing is re-graded."""
