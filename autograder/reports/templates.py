"""The HTML templates (jinja2, autoescaped). Kept as strings so a plain `pip install` carries them.

Every page is self-contained (inline CSS and SVG) and forbids scripts and outside fetches by its
Content-Security-Policy: a page that somehow carried a submission's markup still could not run it. No page
needs a script: the sorted views are separate pages, the grader's traceback is a <details> element.

A status is always written out (a code such as `F` and its name), and coloured as well, never coloured
only; the legend says what each code means.
"""

BASE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{% block title %}{% endblock %}</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 64em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; margin: .4em 0; } h2 { font-size: 1.2em; margin-top: 1.5em; } h3 { font-size: 1em; margin: .2em 0; }
nav { font-size: .95em; padding-bottom: .4em; border-bottom: 1px solid #ddd; }
nav a, nav strong { margin-right: .9em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { border: 1px solid #ccc; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.grid td { padding: .1em .35em; white-space: nowrap; }
table.grid th .note { font-size: .7em; font-weight: normal; }
table.grid tr.group th { background: #e8eef6; text-align: left; }
.status { font-weight: 600; padding: .05em .35em; border-radius: .3em; white-space: nowrap; text-decoration: none; }
.status .scode { font-size: .8em; margin-left: .2em; letter-spacing: .02em; }
a.status:hover { outline: 1px solid #555; }
.passed { background: #d9f2d9; color: #135e13; }
.failed { background: #fdf0cc; color: #6b4900; }
.not_attempted { background: #e6e6e6; color: #333; }
.timed_out { background: #d9f1fa; color: #0b4f66; }
.crashed { background: #f9dada; color: #8a1414; }
.malformed { background: #f1dcec; color: #6d1a55; }
.grader_error { background: #333; color: #fff; }
.missing { background: #fff; color: #555; border: 1px dashed #999; }
.legend { display: grid; grid-template-columns: max-content 1fr; gap: .25em .8em; margin: .5em 0; font-size: .95em; }
.banner { border: 2px solid #333; padding: .5em .8em; margin: .8em 0; background: #f7f7f7; }
.flag { border-left: 4px solid #8a1414; padding: .2em .6em; background: #fbeaea; }
.tag { font-size: .8em; border: 1px solid #999; border-radius: .3em; padding: 0 .3em; color: #444; }
.cause { border-left: 4px solid #7a5300; padding: .3em .8em; background: #fffaf0; margin: .8em 0; }
.same { color: #555; font-style: italic; }
.names { line-height: 1.7; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: .6em; overflow-x: auto; white-space: pre-wrap; margin: .3em 0; }
.code { font: 13px/1.4 ui-monospace, monospace; border: 1px solid #ddd; background: #fafafa; }
.code div { white-space: pre; padding: 0 .6em; }
.code .ln { display: inline-block; width: 3em; color: #777; user-select: none; }
.code .culprit { background: #ffe0b2; }
.note { color: #555; font-size: .9em; }
section { border-top: 1px solid #ddd; margin-top: 1.5em; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
</style>
</head>
<body>
{% block body %}{% endblock %}
</body>
</html>
"""

MACROS = """
{% macro chip(status) -%}
<span class="status {{ status }}" title="{{ labels[status] }}">{{ labels[status] }}<span class="scode">({{ codes[status] }})</span></span>
{%- endmacro %}

{% macro cell(c) -%}
{% if c.href %}<a class="status {{ c.status }}" href="{{ c.href }}" title="{{ c.title }}">{% else %}<span class="status {{ c.status }}" title="{{ c.title }}">{% endif %}{{ c.score }}<span class="scode">{{ codes[c.status] }}</span>{% if c.late %}<span class="scode">L</span>{% endif %}{% if c.href %}</a>{% else %}</span>{% endif %}
{%- endmacro %}

{% macro nav(prefix, active) -%}
<nav>{% for href, label in [("index.html", "Class overview"), ("by_name.html", "Students by name"), ("by_score.html", "by score"), ("by_status.html", "by status")] %}{% if href == active %}<strong>{{ label }}</strong>{% else %}<a href="{{ prefix }}{{ href }}">{{ label }}</a>{% endif %}{% endfor %}</nav>
{%- endmacro %}

{% macro legend(statuses) -%}
<div class="legend" role="list">
{% for s in statuses %}<span role="listitem"><span class="status {{ s }}">{{ codes[s] }}</span></span><span><strong>{{ labels[s] }}</strong>: {{ meanings[s] }}</span>
{% endfor %}</div>
{%- endmacro %}

{% macro submission_body(s, anchor, teacher) %}
<table>
<tr><th>Status</th><td>{{ chip(s.status) }}{% if s.late %} <span class="tag">late</span>{% endif %}</td></tr>
<tr><th>Score</th><td>{{ s.score }} / {{ s.max_score }}</td></tr>
{% if teacher %}<tr><th>Submission</th><td>{{ s.submission }}</td></tr>
{% if s.path %}<tr><th>File</th><td><code>{{ s.path }}</code></td></tr>{% endif %}{% endif %}
</table>
{% if teacher and s.flags %}<p class="flag">Flagged: {{ s.flags|join("; ") }}.</p>{% endif %}
{% if s.summary %}<p>{{ s.summary }}</p>{% endif %}
{% if s.cause %}
<div class="cause"><h3>What went wrong{% if s.cause_checks > 1 %} (the same in {{ s.cause_checks }} checks){% endif %}</h3>
<pre>{{ s.cause|join("\\n") }}</pre>
{% for line in s.cause_lines %}<div>Culprit: <a href="#{{ anchor }}L{{ line }}">line {{ line }} of your answer</a>{% if s.code_lines and line <= s.code_lines|length %}: <code>{{ s.code_lines[line - 1] }}</code>{% endif %}</div>{% endfor %}
</div>
{% endif %}
{% if teacher and s.traceback %}<details><summary>The grader's traceback (teachers only)</summary><pre>{{ s.traceback }}</pre></details>{% endif %}
{% if s.tests %}
<table>
<tr><th>Check</th><th>Result</th><th class="num">Points</th><th>What it checks, and what to fix</th></tr>
{% for t in s.tests %}
<tr id="{{ anchor }}check-{{ loop.index }}">
<td>{{ t.name }}{% if t.hidden %}<br><span class="note">hidden inputs</span>{% endif %}</td>
<td>{{ chip(t.status) }}</td>
<td class="num">{{ t.score }} / {{ t.max_score }}</td>
<td>{% if t.description %}<div>{{ t.description }}</div>{% endif %}
{% for context in t.contexts %}<div class="same">{{ context }}: see “What went wrong” above.</div>{% endfor %}
{% if t.same_cause and not t.contexts %}<div class="same">See “What went wrong” above.</div>{% endif %}
{% if t.output %}<pre>{{ t.output }}</pre>{% endif %}
{% for line in t.lines %}<div>Culprit: <a href="#{{ anchor }}L{{ line }}">line {{ line }} of your answer</a>{% if s.code_lines and line <= s.code_lines|length %}: <code>{{ s.code_lines[line - 1] }}</code>{% endif %}</div>{% endfor %}
</td>
</tr>
{% endfor %}
</table>
<p class="note">Checks on hidden inputs say whether they passed and why in general terms, never their
inputs or expected values. What your code printed while grading is not shown: it ran on those inputs.</p>
{% endif %}
{% if s.code_lines %}
<h3>Your answer{% if s.culprits %} (culprit lines highlighted){% endif %}</h3>
<div class="code">
{% for line in s.code_lines %}<div id="{{ anchor }}L{{ loop.index }}"{% if loop.index in s.culprits %} class="culprit"{% endif %}><span class="ln">{{ loop.index }}</span>{{ line }}</div>
{% endfor %}</div>
{% elif s.culprits %}
<p>Culprit line(s) of your answer: {{ s.culprits|sort|join(", ") }} (the submitted file was not available
when this report was written).</p>
{% endif %}
{% endmacro %}
"""

SUBMISSION = """{% extends "base.html" %}{% import "macros.html" as m with context %}
{% block title %}{{ s.exercise }} — {{ student }}{% endblock %}
{% block body %}
{{ m.nav("../", "") }}
<p><a href="../students/{{ student_page }}">All of {{ student }}'s exercises</a></p>
<h1>{{ s.title }}</h1>
<p>{{ student }}</p>
{{ m.submission_body(s, "", True) }}
{% endblock %}
"""

STUDENT = """{% extends "base.html" %}{% import "macros.html" as m with context %}
{% block title %}{{ student }} — feedback{% endblock %}
{% block body %}
{% if teacher %}{{ m.nav("../", "") }}{% endif %}
<h1>{{ student }}</h1>
{% if teacher and roster_name %}<p>On the roster as {{ roster_name }}.</p>{% endif %}
{% if teacher and attention %}<p class="flag">Needs attention: {{ attention|join("; ") }}.</p>{% endif %}
<table>
<tr><th>Exercise</th><th>Status</th><th class="num">Score</th></tr>
{% for ex in exercises %}
<tr><td><a href="#ex-{{ ex.anchor }}">{{ ex.title }}</a></td><td>{{ m.chip(ex.status) }}{% if ex.late %} <span class="tag">late</span>{% endif %}</td><td class="num">{{ ex.score }} / {{ ex.max_score }}</td></tr>
{% endfor %}
<tr><th colspan="2">Total</th><th class="num">{{ total }} / {{ max_total }}</th></tr>
</table>
{% if grader_error %}<p class="note">{% if teacher %}The total is not known: the grader itself failed on an exercise
(not the student's fault). Regrade it.{% else %}The total is not known yet: the grader itself failed on an exercise
(not your fault), and your teacher has been told.{% endif %}</p>{% endif %}
{% for ex in exercises %}
<section id="ex-{{ ex.anchor }}">
<h2>{{ ex.title }}</h2>
{% if ex.submission %}
{{ m.submission_body(ex.submission, ex.anchor ~ "-", teacher) }}
{% if ex.others %}<p class="note">{{ "Other submissions" if teacher else "Your other submissions" }} of this exercise (the best score counts):
{% for o in ex.others %}{% if teacher %}<a href="../submissions/{{ o.page }}">{{ o.submission }}</a>{% else %}one{% endif %}
({{ m.chip(o.status) }}, {{ o.score }}{% if o.late %}, late{% endif %}){{ "; " if not loop.last }}{% endfor %}.</p>{% endif %}
{% else %}
<p>{{ m.chip("missing") }}: no submission of this exercise.</p>
{% endif %}
</section>
{% endfor %}
{% endblock %}
"""

OVERVIEW = """{% extends "base.html" %}{% import "macros.html" as m with context %}
{% block title %}Class overview{% endblock %}
{% block body %}
{{ m.nav("", "index.html") }}
<h1>Class overview</h1>
<p>{{ n_submissions }} submissions from {{ n_students }} students{% if roster %} ({{ roster.n }} on the {{ roster.lms }} roster){% endif %},
{{ exercises|length }} exercises. Gradebooks: <a href="gradebook_lms.csv">gradebook_lms.csv</a> (a spreadsheet){% if roster %},
<a href="{{ roster.file }}">{{ roster.file }}</a> ({{ roster.lms }}'s import format){% endif %}.</p>
{% if grader_errors %}
<div class="banner"><strong>{{ grader_errors|length }} submission(s) hit an internal grading error</strong> (not the
students' fault; no score was given). Their cells read <code>grader_error</code> in gradebook_lms.csv{% if roster %} and
<code>-</code> (no grade) in {{ roster.file }}{% endif %}, and those students' totals are left out, not summed without them.
Regrade them (run the same <code>autograder grade</code> command again):
{% for g in grader_errors %}<a href="{{ g.href }}">{{ g.name }}</a>{{ ", " if not loop.last }}{% endfor %}.</div>
{% endif %}
{% if skipped %}<div class="banner"><strong>{{ skipped|length }} results.json file(s) could not be read</strong> and are not in this report:
<ul>{% for line in skipped %}<li>{{ line }}</li>{% endfor %}</ul></div>{% endif %}
{% if roster and (roster.unmatched or roster.ambiguous) %}
<div class="banner"><strong>Not in {{ roster.file }}:</strong>
{% if roster.unmatched %}{{ roster.unmatched|length }} student(s) not on the roster: {{ roster.unmatched|join(", ") }}.{% endif %}
{% if roster.ambiguous %}{{ roster.ambiguous|length }} matching several roster students: {% for name, which in roster.ambiguous %}{{ name }} ({{ which|join(" or ") }}){{ "; " if not loop.last }}{% endfor %}.{% endif %}
Rename their folders or files after their login or email, then run the report again.</div>
{% endif %}

<h2>Status codes</h2>
{{ m.legend(legend) }}

<h2 id="attention">Needs attention</h2>
{% if attention %}
<table>
<tr><th>Why</th><th class="num">Students</th><th>Who (and which exercises)</th></tr>
{% for group in attention %}
<tr><td><strong>{{ group.label }}</strong><br><span class="note">{{ group.why }}</span></td><td class="num">{{ group.entries|length }}</td>
<td class="names">{% for e in group.entries %}{% if e.href %}<a href="{{ e.href }}">{{ e.name }}</a>{% else %}{{ e.name }}{% endif %}{% if e.detail %} ({{ e.detail }}){% endif %}{{ ", " if not loop.last }}{% endfor %}</td></tr>
{% endfor %}
</table>
{% else %}<p>Nobody: no untouched, crashed, unreadable or tampered submission, no check failed everywhere.</p>{% endif %}

<h2 id="missing">Missing submissions</h2>
{% if missing_all or missing_some %}
{% if missing_all %}<p><strong>No submission at all ({{ missing_all|length }}{% if roster %}, against the roster{% endif %}):</strong>
<span class="names">{{ missing_all|join(", ") }}</span>.</p>{% endif %}
{% if missing_some %}<p><strong>Some exercises missing ({{ missing_some|length }}):</strong>
<span class="names">{% for e in missing_some %}<a href="{{ e.href }}">{{ e.name }}</a> ({{ e.detail }}){{ ", " if not loop.last }}{% endfor %}</span>.</p>{% endif %}
{% else %}<p>None{% if not roster %} among the students who handed something in (give <code>--roster</code> to find those who handed in nothing){% endif %}.</p>{% endif %}

<h2>Per exercise</h2>
<p class="note">Students per status: each student's best submission of the exercise counts.</p>
<table>
<tr><th>#</th><th>Exercise</th><th class="num">Files</th><th class="num">Mean score</th>{% for s in statuses %}<th class="num"><span class="status {{ s }}" title="{{ labels[s] }}">{{ codes[s] }}</span></th>{% endfor %}</tr>
{% for row in per_exercise %}
<tr><td class="num">{{ row.number }}</td><td>{{ row.exercise }}</td><td class="num">{{ row.count }}</td><td class="num">{{ row.mean }} / {{ row.max }}</td>
{% for s in statuses %}<td class="num">{{ row.statuses.get(s, "") }}</td>{% endfor %}</tr>
{% endfor %}
</table>

<h2>Score distribution per exercise</h2>
<figure>{{ score_plot|safe }}<figcaption>Students per score, one panel per exercise, each bar split by status
(colour, hatching and the legend under the panels). Grader errors have no score and are not drawn.</figcaption></figure>
<h2>Most common failing checks</h2>
<figure>{{ checks_plot|safe }}<figcaption>How many submissions failed each check (top {{ top }}), among submissions that ran and
failed some checks: untouched, unreadable or crashed files fail every check and are counted in the table above.</figcaption></figure>
<h2>Every student</h2>
<p>The gradebook, one row per student, on pages of its own: <a href="by_name.html">by name</a>,
<a href="by_score.html">by score</a> (highest first), <a href="by_status.html">by status</a> (worst first).</p>
{% endblock %}
"""

TABLE = """{% extends "base.html" %}{% import "macros.html" as m with context %}
{% block title %}Students {{ order }}{% endblock %}
{% block body %}
{{ m.nav("", page) }}
<h1>Students {{ order }}</h1>
<p>{{ rows|length }} students. A cell is the best score of the student's submissions of the exercise and its status code
(<span class="scode">L</span>: late); it links to the student's page. Totals are out of {{ max_total }}.</p>
{{ m.legend(legend) }}
<table class="grid">
<tr><th>Student</th>{% for e in exercises %}<th class="num">{{ e.label }}<br><span class="note">{{ e.id }}</span></th>{% endfor %}<th class="num">Total</th></tr>
{% for row in rows %}
{% if row.group %}<tr class="group"><th colspan="{{ exercises|length + 2 }}">{{ row.group }}</th></tr>{% endif %}
<tr><td>{% if row.href %}<a href="{{ row.href }}">{{ row.student }}</a>{% else %}{{ row.student }}{% endif %}</td>
{% for c in row.cells %}<td class="num">{{ m.cell(c) }}</td>{% endfor %}<td class="num">{{ row.total }}</td></tr>
{% endfor %}
</table>
{% endblock %}
"""
