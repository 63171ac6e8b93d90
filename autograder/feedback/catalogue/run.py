"""The words of a run of the answer: the runner, the sandbox, the harness, the public data."""

TEMPLATES: dict[str, str] = {
    # why a job of the pool came back without a report (runner/pool.py): a student reads these
    "run: worker killed": "the worker running your code was killed (did your code use up all memory?)",
    "run: observations too large": "your code's observations were too large to send back",
    "run: forged report": (
        "the report did not come from the grader's harness: your code wrote on the grader's report channel, or "
        "ended the process before the harness could report"),
    "run: ended after hidden inputs": (
        "the process ended before it could report (after it had received the hidden inputs)"),
    "run: ended by SIGSEGV": "the process ended by a segmentation fault before reporting",
    "run: ended by SIGKILL": "the process ended by being killed (out of memory?) before reporting",
    "run: ended by SIGXCPU": "the process ended by the CPU-time limit before reporting",
    "run: ended by SIGXFSZ": "the process ended by the file-size limit (too much output?) before reporting",
    "run: ended by SIGABRT": "the process ended by an abort before reporting",
    "run: ended by signal": "the process ended by {signal} before reporting",
    "run: exited without report": "the process exited with status {code} before reporting (it sent no report)",
    "run: exited with broken report": "the process exited with status {code} before reporting ({why})",
    # the pool, to the teacher who grades (runner/pool.py, runner/sandbox.py)
    "run: slot did not start": "worker slot {slot} did not start",
    "run: slot not launched": "a worker slot could not be launched: {error}",
    "run: slot not launched as user": (
        "a worker slot could not be launched: {error} (user {user} must be able to read and run {python} and its "
        "packages)"),
    "run: no such user": "no user {user!r} to run submissions as",
    "run: not as root": "submissions may not run as root",
    "run: only root runs as another user": "only root can run submissions as another user ({user})",
    "run: cannot sandbox": "cannot sandbox: {problem}",
    "run: sandbox turned off": "sandbox turned off",
    "run: no bubblewrap": "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)",
    "run: bubblewrap failed to start": "bubblewrap failed to start: {error}",
    "run: bubblewrap failed": "bubblewrap failed: {error}",
    "run: not sandboxed as user": (
        "NOT SANDBOXED: {problem}. Submissions run as plain processes under rlimits only, as user {user}: they can "
        "read what that user can read and reach the network."),
    "run: not sandboxed": (
        "NOT SANDBOXED: {problem}. Submissions run as plain processes under rlimits only: they can read your files "
        "and reach the network. Install bubblewrap to grade untrusted code."),
    "run: not isolated": (
        "Jobs share their worker's namespaces (this kernel lets no unprivileged process make a user namespace): a "
        "job can signal or lower the limits of its worker, and reach the System V shared memory of the jobs after "
        "it."),
    "run: also not isolated": (
        "{warning} Also, jobs share their worker's namespaces (this kernel lets no unprivileged process make a user "
        "namespace): a job can signal or lower the limits of its worker, and reach the System V shared memory of "
        "the jobs after it."),
    # why a run in this process stopped (call.stopping): the self-check and `check` print it
    "run: interrupted": "interrupted (Ctrl-C)",
    "run: out of time": "out of time ({seconds:g} s)",
    # the guard of a job (runner/worker/guard.py): what the answer was refused, or why its report cannot be trusted
    "run: refused event": "the grader does not allow {event} in submitted code",
    "run: refused proc": "the grader does not allow reading /proc in submitted code",
    "run: refused change": (
        "your code tried to change {target}.{attribute}: changing torch or the grader is not allowed"),
    "run: hidden channel used": "the grader's channel for the hidden inputs was used by your code.",
    "run: no report": "the run ended without a report.",
    "run: harness escaped": "the run ended without a report (an exception escaped the grader's harness).",
    "run: tampered": (
        "your code replaced parts of the grader or of torch ({changed}); the grader cannot trust what it observed "
        "after that, so this counts as a failure."),
    "run: threads left": (
        "your code left threads running after it returned; the grader cannot trust observations that another "
        "thread may still change."),
    # the answer's names and exceptions, as the harness reads them (harness.py): a student reads these
    "run: not defined": (
        "`{symbol}` is not defined. Define it in an answer cell (the grader runs only the answer cells, so imports "
        "and helpers must be there too)."),
    "run: not inspectable": "`{symbol}` could not be inspected: looking at it raised {type}.",
    "run: called exit": "the code called exit({code!r})",
    "run: global state left": (
        "your code left torch's global state changed when it returned ({states}), so what the grader observed "
        "after it was observed under your code's settings, not torch's: use a `with` block, so that a mode or "
        "a setting ends with the code that needs it."),
    # what the shared probes observe, and the gradient check (probes.py, finite_differences.py)
    "run: no gradient": "`{tensor}` got no gradient (its .grad is None)",
    "run: gradient check": "The gradient check",
    "run: gradient check failed": (
        "{failure} (in {trial}: finite differences give {numeric:.6g} along a random direction, your backward "
        "gives {analytic:.6g})."),
    # the references and the public data (reference_store.py, public.py)
    "run: references missing": (
        "The reference implementations are not installed (no {path}). Grading needs the course's references/ "
        "folder: run the grader from a source checkout of the course, or set {variable} to that folder. The "
        "notebook self-check, check(), works without them."),
    "run: references not found": (
        "The reference implementations are not installed ({variable} is not set, and there is no {checkout}). "
        "Grading needs the course's references/ folder: run the grader from a source checkout of the course, or "
        "set {variable} to that folder. The notebook self-check, check(), works without them."),
    "run: public data unusable": (
        "The self-check's public data {path} is not usable: {why}. Reinstall the course package; in a source "
        "checkout, run `autograder publish`."),
    # --- hidden
    # a leaf's in-place error, for a class graded without fixes (describe.Explainer.fixes): what it means, no fix
    "run: leaf meaning without fix": (
        "\nWhat it means: a tensor made with `requires_grad=True` (a leaf: a parameter, or a tensor your code was "
        "handed) was changed in place while autograd was recording. Autograd cannot record a write into a tensor "
        "that it must hand gradients back to. Find that write, and whether it is a parameter's update or a "
        "write into a tensor your code was given."),
    # `autograder release --no-fixes` (release.py): the package copied has no line to turn fixes off
    "run: release no fixes switch": "{path} has no line `SHOW_FIXES = True` to turn the fixes off in the edition",
}
