"""The HTML templates (jinja2, autoescaped). Kept as strings so a plain `pip install` carries them.

Every page is self-contained (inline CSS and SVG) and forbids scripts and outside fetches by its
Content-Security-Policy: a page that somehow carried a submission's markup still could not run it.
"""

BASE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{% block title %}{% endblock %}</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 64em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { border: 1px solid #ccc; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.status { font-weight: 600; padding: .05em .4em; border-radius: .3em; white-space: nowrap; }
.passed { background: #d9f2d9; color: #135e13; }
.failed { background: #fdf0cc; color: #7a5300; }
.not_attempted, .timed_out, .crashed, .malformed { background: #f9dada; color: #8a1414; }
.grader_error { background: #e4e4e4; color: #333; }
.empty { color: #999; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: .6em; overflow-x: auto; white-space: pre-wrap; }
.code { font: 13px/1.4 ui-monospace, monospace; border: 1px solid #ddd; background: #fafafa; }
.code div { white-space: pre; padding: 0 .6em; }
.code .ln { display: inline-block; width: 3em; color: #999; user-select: none; }
.code .culprit { background: #ffe0b2; }
.hidden-note { color: #555; font-size: .9em; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
</style>
</head>
<body>
{% block body %}{% endblock %}
</body>
</html>
"""

SUBMISSION = """{% extends "base.html" %}
{% block title %}{{ exercise }} — {{ student }}{% endblock %}
{% block body %}
<p><a href="../index.html">Class overview</a></p>
<h1>{{ title }}</h1>
<table>
<tr><th>Student</th><td>{{ student }}</td></tr>
<tr><th>Submission</th><td>{{ submission }}</td></tr>
<tr><th>Status</th><td><span class="status {{ status }}">{{ status }}</span></td></tr>
<tr><th>Score</th><td>{{ score }} / {{ max_score }}</td></tr>
</table>
<pre>{{ output }}</pre>
{% if tests %}
<h2>Checks</h2>
<table>
<tr><th>Check</th><th>Result</th><th>Points</th><th>What it checks, and what to fix</th></tr>
{% for t in tests %}
<tr id="check-{{ loop.index }}">
<td>{{ t.name }}{% if t.hidden %}<br><span class="hidden-note">hidden inputs</span>{% endif %}</td>
<td><span class="status {{ t.status }}">{{ t.status }}</span></td>
<td class="num">{{ t.score }} / {{ t.max_score }}</td>
<td>{% if t.description %}<div>{{ t.description }}</div>{% endif %}
{% if t.output %}<pre>{{ t.output }}</pre>{% endif %}
{% for line in t.lines %}<div>Culprit: <a href="#L{{ line }}">line {{ line }} of your answer</a>{% if code_lines and line <= code_lines|length %}: <code>{{ code_lines[line - 1] }}</code>{% endif %}</div>{% endfor %}
</td>
</tr>
{% endfor %}
</table>
<p class="hidden-note">Checks on hidden inputs say whether they passed and why in general terms, never their
inputs or expected values. What your code printed while grading is not shown: it ran on those inputs.</p>
{% endif %}
{% if code_lines %}
<h2>Your answer{% if culprits %} (culprit lines highlighted){% endif %}</h2>
<div class="code">
{% for line in code_lines %}<div id="L{{ loop.index }}"{% if loop.index in culprits %} class="culprit"{% endif %}><span class="ln">{{ loop.index }}</span>{{ line }}</div>
{% endfor %}</div>
{% elif culprits %}
<p>Culprit line(s) of your answer: {{ culprits|sort|join(", ") }} (the submitted file was not available
when this report was written).</p>
{% endif %}
{% endblock %}
"""

OVERVIEW = """{% extends "base.html" %}
{% block title %}Class overview{% endblock %}
{% block body %}
<h1>Class overview</h1>
<p>{{ n_submissions }} submissions from {{ n_students }} students, {{ exercises|length }} exercises.
Gradebook for an LMS: <a href="gradebook_lms.csv">gradebook_lms.csv</a>.</p>
{% if grader_errors %}
<p class="status grader_error">{{ grader_errors|length }} submission(s) hit an internal grading error (not the
students' fault; no score was given): {{ grader_errors|join(", ") }}. Their results.json holds the details.</p>
{% endif %}
<h2>Per exercise</h2>
<table>
<tr><th>Exercise</th><th>Submissions</th><th>Mean score</th>{% for s in statuses %}<th>{{ s }}</th>{% endfor %}</tr>
{% for row in per_exercise %}
<tr><td>{{ row.exercise }}</td><td class="num">{{ row.count }}</td><td class="num">{{ row.mean }} / {{ row.max }}</td>
{% for s in statuses %}<td class="num">{{ row.statuses.get(s, "") }}</td>{% endfor %}</tr>
{% endfor %}
</table>
<h2>Score distribution per exercise</h2>
<figure>{{ score_plot|safe }}<figcaption>Submissions per score, one panel per exercise.</figcaption></figure>
<h2>Most common failing checks</h2>
<figure>{{ checks_plot|safe }}<figcaption>How many submissions failed each check (top {{ top }}), among submissions that ran and failed
some checks: untouched, unreadable or crashed files fail every check and are counted in the table above.</figcaption></figure>
<h2>Gradebook</h2>
<table>
<tr><th>Student</th>{% for e in exercises %}<th>{{ e }}</th>{% endfor %}<th>Total / {{ max_total }}</th></tr>
{% for row in rows %}
<tr><td>{{ row.student }}</td>
{% for cell in row.cells %}<td class="num">{% if cell.links %}{% for link in cell.links %}<a href="{{ link.href }}"><span class="status {{ link.status }}">{{ link.score }}</span></a> {% endfor %}{% else %}<span class="empty">—</span>{% endif %}</td>
{% endfor %}<td class="num">{{ row.total }}</td></tr>
{% endfor %}
</table>
{% endblock %}
"""
