"""What a teacher reads after grading: the class report (`html`: the pages; `templates`, `plots`), the
graded folder read back (`graded`), the gradebooks for a spreadsheet and an LMS (`gradebook`), the LMS's
roster read and joined to them (`roster`). Pure functions of results.json files: nothing is re-graded."""
