"""The words of the learner's notebook: check(), predict(), diagnose(), the book's questions."""

TEMPLATES: dict[str, str] = {
    # the line a translated notebook's setup cell ends with (notebook/translated.py)
    "notebook: language set": "check(), predict() and diagnose() answer in this notebook's language",
    # a judged part of a prediction or a diagnosis (predict.judgement)
    "notebook: it is": "it is {actual}: {why}.",
    "notebook: not predicted": "not predicted; {actual}",
    "notebook: you said": "you said {guess}; {actual}",
    "notebook: mark right": "right",
    "notebook: mark wrong": "wrong",
    "notebook: noun predicted": "predicted",
    "notebook: noun diagnosed": "diagnosed",
    # check() (selfcheck.py)
    "notebook: no answer cell": (
        "check() found no answer cell among the cells you ran (an answer cell's first line says `# Answer cell "
        "(graded)`; put it back if you deleted it). It judged the names your notebook defines instead: the grader "
        "runs only the answer cells, and may judge otherwise."),
    "notebook: answer cell not run": (
        "Answer cell {number} has not been run since the kernel started: run it, then check again (check() judges "
        "the answer cells as you last ran them)."),
    "notebook: defined outside": (
        "`{symbol}` is defined outside an answer cell: the grader will not see it. Move it (or the import) into an "
        "answer cell."),
    "notebook: note": "Note: {note}",
    "notebook: check stopped": "Self-check stopped ({stop}): no result.",
    # predict() and its reveal() (predict.py); the count of a judged guess is diagnose's too
    "notebook: predict op named": (
        "{op} is the saved tensor's grad_fn when backward ran. If an op saved it as its output (relu, "
        "sigmoid, exp, softmax), that is the op that saved it. If an op saved it as its input (gelu, pow, "
        "mul, a linear layer), it is the last recorded in-place op that wrote it, often the line you look "
        "for; or the op that made it, if the write was not recorded (no_grad, an optimizer step). If the "
        "saved tensor is a view, it is AsStrided, whatever wrote it or its base, recorded or not. It is never "
        "the op that saved an input"),
    "notebook: predict no op": (
        "no op is named: the saved tensor has no grad_fn. Either it needs no gradient, or it is a leaf that "
        "needs one (a parameter, or a tensor made with requires_grad=True)"),
    "notebook: predict ran": (
        "it ran without an error: nothing backward needed was changed in place after it was saved."),
    "notebook: predict raised inplace": "it raised the in-place error.",
    "notebook: predict raised at write": "it raised at the in-place write itself ({message}).",
    "notebook: predict raised other": (
        "it raised {error} ({message}), not the in-place error; if that was not the failure cell, run the "
        "failure cell, then this one."),
    "notebook: predict at write": (
        "at the write, in forward: autograd refuses the in-place op before any backward runs."),
    "notebook: predict nothing saved": (
        "this error names no saved tensor and no versions: nothing was saved and checked yet."),
    "notebook: predict at backward": (
        "at backward: the write itself was allowed, and backward found a saved tensor at another version."),
    "notebook: predict found": "the version the tensor is at now, when backward reads it",
    "notebook: predict expected": "the version it was at when it was saved",
    "notebook: parts right": "{right} of {given} {noun} parts right.",
    "notebook: predict heading": "Your prediction, against what the failure cell did:",
    "notebook: predict nothing": (
        "Nothing was predicted: next time, fill in predict(...) before you run the failure cell."),
    "notebook: once": "once",
    "notebook: times": "{count} times",
    "notebook: predict bumps": (
        " found - expected = {bumps}: since it was saved, its version counter moved {times}. Each in-place "
        "op, `out=` op or `mark_dirty` moves it, on this tensor or on one that shares its counter (a view, "
        "its base, a detach() alias). One write may move it twice: `t[:, 0] += 1` does."),
    "notebook: predict fill in": (
        "Fill in your prediction: replace the ... after {parts} with your guesses, then run this cell again. "
        "(Nothing here is graded.)"),
    "notebook: predict noted": "Prediction noted ({shown}). Now run the failure cell, then the cell after it.",
    "notebook: predict none yet": (
        "No prediction yet: run the predict(...) cell above the failure cell, then the failure cell, then "
        "this one."),
    "notebook: predict needs jupyter": (
        "reveal() compares your prediction with the cell run before it, in Jupyter; run the notebook there, "
        "from the predict(...) cell down."),
    "notebook: predict run failure first": "Run the failure cell (just below your prediction) first, then this cell.",
    # diagnose() and its reveal(fn) (diagnose.py)
    "notebook: diagnose unseen": (
        "the locator did not see it (a write outside Python's view: see the book's chapter on finding the "
        "culprit)."),
    "notebook: diagnose further out": "`{guess}` calls it, further out; {actual}",
    "notebook: diagnose refused write": "the write autograd refused, the innermost line of your code in the traceback",
    "notebook: diagnose nothing saved": (
        "nothing saved is involved: this error is raised by the write itself, before any backward."),
    "notebook: diagnose the write": "the write that moved the saved tensor's version",
    "notebook: diagnose the saver": (
        "the op that saved the tensor (in anomaly mode's warning, the innermost line of your code)"),
    "notebook: diagnose heading": "Your diagnosis, against what the failing code did:",
    "notebook: diagnose nothing": (
        "Nothing was diagnosed: next time, name the line in diagnose(...) before you run this cell."),
    "notebook: diagnose report": "The locator's report, to confirm (it shows no fix: that is your task):\n{report}",
    "notebook: diagnose traceback": (
        "The traceback, to confirm: your code's frames, innermost first (the first is the write):"),
    "notebook: diagnose other runtime error": (
        "It raised RuntimeError ({message}), not an in-place error: pass the failing code to reveal()."),
    "notebook: diagnose other error": "It raised {type}, not an in-place error: pass the failing code to reveal().",
    "notebook: diagnose no error": (
        "It ran without an in-place error: pass the code that fails (the failure cell's) to reveal()."),
    "notebook: diagnose fill in": (
        "Fill in your diagnosis: replace the ... after {parts} with the line of code, as a string, then run "
        "this cell again. (Nothing here is graded.)"),
    "notebook: diagnose noted": "Diagnosis noted ({shown}). Now run the next cell: it checks it.",
    "notebook: diagnose none yet": "No diagnosis yet: run the diagnose(...) cell above first, then this one.",
    "notebook: diagnose fill in first": "Fill in {parts} in the diagnose(...) cell above and run it, then this one.",
    # the workshop's client in the notebook: check.join(URL), check.stuck(), ... (workshop/client.py)
    "notebook: workshop bad url": "not a workshop URL: {url!r} (expected http(s)://host:port/CODE)",
    "notebook: workshop no such code": (
        "No workshop with the code {code!r} at {where} (HTTP 404). Check the code on the projector: it is "
        "the last part of the URL."),
    "notebook: workshop refused": "The server at {where} refused to join (HTTP {status}).",
    "notebook: workshop unreachable": (
        "Cannot reach the workshop server at {where} ({reason}). Check the URL, that this computer is on the "
        "room's network, and that the server runs."),
    "notebook: workshop not a server": "{where} answered, but it is not a workshop server.",
    "notebook: workshop bad seat": "seat: printable text of at most {most} characters",
    "notebook: workshop join failed": "Could not join the workshop at {where}: {why}",
    "notebook: workshop odd join": "{where} answered the join, but not as a workshop server does.",
    "notebook: workshop joined": "Joined the workshop at {where} as {pseudonym}{seat}{again}",
    "notebook: workshop seat": ", seat {seat!r}",
    "notebook: workshop same participant": " (the same participant as before).",
    "notebook: workshop what is sent": (
        "Each check() now also sends: your pseudonym, the exercise, pass/fail per check, the error's class, "
        "the culprit op and whether its line is the report's{line}{feedback}. check.preview() shows exactly "
        "what; check.stuck() asks for help; check.leave() stops."),
    "notebook: workshop sends line": ", the culprit line (anonymised)",
    "notebook: workshop sends feedback": ", the feedback text (helpers only)",
    "notebook: workshop kernel died": "(Your last kernel died during check({exercise!r}); the helpers see it.)",
    "notebook: workshop reporting": (
        "(Reporting to the workshop at {url}; check.preview() shows what, check.leave() stops.)"),
    "notebook: workshop not reporting": "(Not reporting to the workshop: {why})",
    "notebook: workshop hint": "Workshop hint from the host: {hint}",
    "notebook: workshop not joined": "Not in a workshop: check.join(URL) first.",
    "notebook: workshop note lost": "Workshop: the note did not arrive ({why}). Raise your hand instead.",
    "notebook: workshop stuck": (
        "Workshop: your 'stuck' note is up; a helper will come by. check.done() takes it down."),
    "notebook: workshop done": "Workshop: marked as done. Thank you!",
    "notebook: workshop left": "Left the workshop: check() sends nothing from now on.",
    "notebook: workshop nothing sent": "Not in a workshop: nothing is sent.",
    "notebook: workshop no check yet": "No check has run yet: run check(\"<exercise>\") first, then check.preview().",
    "notebook: workshop if joined": "if you joined (check.join(URL)); nothing is sent now",
    "notebook: workshop last sends": "The last check sends, {where}:",
    # what the book's figures label (figures.py)
    "notebook: figure saved version": "\nsaved {attr}: expected v{expected}, now v{current}",
    "notebook: figure storage": "the storage: one row of memory",
    # --- measure
    # what a measured table's cell says (notebook/measured.py): an outcome, or the cases that differ
    "notebook: measured write": "refused at the write",
    "notebook: measured backward": "error at backward",
    "notebook: measured backward_leaf": "error at backward (the leaf message)",
    "notebook: measured backward_other": "error at backward (another error)",
    "notebook: measured right": "no error, right gradient",
    "notebook: measured wrong": "no error, **wrong gradient**",
    "notebook: measured none": "no error",
    "notebook: measured case": "{cases}: {verdict}",
    "notebook: measured depends": "depends: {cases}",
}
