"""The words of the culprit locator: its report, its suggestions, blame --fix."""

TEMPLATES: dict[str, str] = {
    # the report (blame/locator/report.py)
    "blame: no user frame": "(no frame of your code on the stack)",
    "blame: where code": "{site}: {code}",
    "blame: summary": "The tensor was modified by {op} at {where}; it was saved by {saved_by} at {saved_at}.",
    "blame: summary unseen": (
        "The tensor was modified by an operation the locator could not see (see book/reference/blame.md, limits); "
        "it was saved by {saved_by} at {saved_at}."),
    "blame: report head": "In-place modification of a tensor saved for backward\n  modified by  {op}  at {site}",
    "blame: report head unseen": (
        "In-place modification of a tensor saved for backward\n"
        "  modified by  (not seen: made outside locate() or outside Python's view; book/reference/blame.md, limits)"),
    "blame: report code": "      {code}",
    "blame: report saved by": "  saved by     {op}  at {site}",
    "blame: report tensor": "  tensor       {dtype} {shape}, saved at version {expected}, found at version {found}",
    "blame: report backward": "  backward     {node} needed it",
    "blame: report calls": "  calls        {calls}",
    "blame: report call": "{function} ({site})",
    "blame: report modifications": "  {count} modifications since it was saved (the first is the culprit):",
    "blame: report modification": "    {number}. {op} at {where} -> version {version}",
    # a suggestion, shown (blame/suggest/suggest.py)
    "blame: words only": "What to do (no safe automatic rewrite; {status}):\n  {why}",
    "blame: costs": "Verified rewrites and what each costs (the one kept costs least):\n{costs}",
    "blame: cost": "({kind}) {file}:{line}: {lines} line(s) changed, {copied} values copied by `clone()` per forward",
    "blame: cost unmeasured": "an unmeasured number of",
    "blame: words not verified": "advice in words, not verified: nothing applied it or ran it",
    "blame: advice withdrawn": (
        "No advice: every rewrite these words would advise ({kinds}) was applied in the scratch folder and run, and "
        "none removed the error with the program's numbers kept (each is listed above as tried and not kept). The "
        "two lines named above are where to look."),
    "blame: suggested fix": "Suggested fix ({status}):\n{diff}\n  why: {why}",
    "blame: not verified, --fix would": "not verified: `autograder blame --fix` applies it and checks it",
    "blame: not verified, nothing ran": "not verified: nothing was run again",
    "blame: not verified, dry run": "not verified: --dry-run runs nothing more",
    # what to do, in words, when no rewrite applies (blame/suggest/suggest.py)
    "blame: words no_grad": (
        "{shown} runs with gradients off (inside `torch.no_grad()`, or a function decorated with it): a write the "
        "program means to make (a buffer, a state it keeps, running statistics, a queue), so keep it as it is. It "
        "still changes {saved}, so give that line a copy: `.clone()` where it reads the tensor{at} (as PyTorch's "
        "own spectral norm does), or make the write after the backward that needs the old values."),
    "blame: at line": " (line {line})",
    "blame: words inplace module": (
        "{shown} calls a module or function with `inplace=True` ({op}), which overwrote its input, {saved}: build it "
        "without `inplace=True` where it is defined (`nn.ReLU()`)."),
    "blame: words setitem": (
        "{shown} writes into {saved}: write into a copy (`x = x.clone()` first), or build the new tensor without "
        "writing into it (`torch.where`, `torch.cat`)."),
    "blame: words twin": (
        "{shown} ({op}) overwrote {saved}: use the out-of-place `{twin}` (`t = t.{twin}(...)`), or write into a "
        "`clone()` of the tensor."),
    "blame: words method": (
        "{shown} ({op}) overwrote {saved}: make it write into a copy (`t = t.clone()` just before it), or give the "
        "line that saved the tensor a copy (`.clone()` where it reads or makes it)."),
    "blame: words other":
        "{shown} overwrote {saved}: make that operation out of place, or make it write into a `clone()`.",
    # the command, blame --fix (blame/fix/fix_command.py)
    "blame: cannot read script": "cannot read {script} as Python source text",
    "blame: running once": (
        "running {script} once under the locator, in this folder, as `python {script}` would; then --fix says what "
        "more it runs, and why"),
    "blame: stopped by signal": "autograder blame --fix: stopped by {signal}; {what}",
    "blame: stopped, fix written": "the verified fix had been written: {backups} hold the originals",
    "blame: stopped, nothing changed": "no file was changed",
    "blame: ran without it": "the script ran without it",
    "blame: failed otherwise": "the script failed otherwise (exit {status})",
    "blame: nothing to fix": "Nothing to fix: no in-place error was raised; {said}.",
    "blame: not fixed": "Not fixed: {why}",
    # the command, blame (blame/fix/script.py)
    "blame: no such script": "error: no such script: {script}",
    "blame: more errors caught": "({count} more in-place error(s) were raised and caught by the script)",
    # why a run of --fix failed (blame/fix/runs.py)
    "blame: run too long": "it ran longer than {seconds:.0f} s",
    "blame: run crashed": "it crashed (exit {status}): {output}",
    "blame: recording unreadable": "it wrote over its own recording ({error})",
    # the search of --fix, and what it found (blame/fix/fix.py)
    "blame: reference out_of_place": "the culprit call made out of place, every saved tensor kept as saved",
    "blame: reference same": "every saved tensor kept as saved, the write kept",
    "blame: reference truncated":
        "every saved tensor kept as saved, each backward stopped at the previous step's graph",
    "blame: tried, not kept": "Tried ({kind}) {file}:{line}: not kept: {detail}",
    "blame: verified, not written": "verified, not written",
    "blame: applied and verified": "applied and verified",
    "blame: fix diff": "Suggested fix ({status}):\n{diff}",
    "blame: fix why": "  why ({file}:{line}): {why}",
    "blame: verified": "Verified: the in-place error is gone, and {detail}.",
    "blame: not written": "Not written: {why}",
    "blame: fixed": "Fixed {file}; the original is in {backup}.",
    "blame: no rewrite verified": "Not fixed: no rewrite could be verified, so no file was changed.",
    "blame: trying": "trying ({kind}) {file}:{line} ...",
    "blame: another culprit follows":
        "  that error is gone; another in-place error follows at {file}:{line}: fixing it too",
    "blame: running the reference": "running the reference ({what})...",
    "blame: the write is part of the program": (
        "making the culprit out of place changes what the program computes ({detail}): the in-place write is part "
        "of the program (another name reads what it wrote), so only a rewrite that keeps it can be right"),
    "blame: no rewrite applies": "no rewrite applies",
    # the plan of --fix, said before it runs anything more (blame/fix/fix.py)
    "blame: plan try": "  try ({kind}) {file}:{line}, compared with the reference: {reference}",
    "blame: plan nothing applies": "No rewrite applies: --fix runs nothing more and gives the suggestion in words.",
    "blame: plan runs": (
        "--fix runs {script} again, each time in a fresh Python, from its text as read now, in a scratch folder that "
        "shows this folder's files and keeps every file the run writes (your files are only read; a write anywhere "
        "else fails the run), with stdin from /dev/null and a time limit:"),
    "blame: plan references": (
        "  {count} reference run{s}, to compare with: the program with every saved tensor kept as saved (each in "
        "float64, and once more in the script's own dtypes if it fails in float64);"),
    "blame: plan one run each":
        "  1 run for each rewrite tried, best first, until one is verified ({count} for this culprit);",
    "blame: plan next culprit": (
        "  if a rewrite removes its error and another culprit follows, the same for that one (at most {culprits} "
        "culprits, {tries} rewrites in all)."),
    "blame: plan rewrites": "Rewrites it would try:",
    "blame: plan nothing written":
        "Nothing is written until a rewrite is verified; then the original is kept beside it.",
    # a rewrite's run compared with its reference (blame/fix/verify.py)
    "blame: tolerance float64": "float64: a rewrite may only change the order of a few roundings (eps 2.2e-16)",
    "blame: tolerance float32": "float32 (the program would not run in float64): eps 1.2e-7 times a few hundred",
    "blame: reference fails": (
        "cannot verify: the program fails even with every saved tensor kept as it was saved ({type}: {message})"),
    "blame: the in-place error remains": "the in-place error remains: {type}: {message}",
    "blame: it now raises": "it now raises: {type}: {message}",
    "blame: other exit status": "it exits with {status}, the reference with {reference}",
    "blame: other backward count": "{count} backward passes, the reference {reference}",
    "blame: other values": "it computes other values: {other}",
    "blame: fewer leaves": (
        "fewer leaf tensors get a gradient: {count}, the reference {reference} (a tensor the loss was made of no "
        "longer is)"),
    "blame: other leaves":
        "its backward passes reach other leaf tensors ({count} against {reference}, or in another order)",
    "blame: other steps": "its optimizers step other parameters, or another number of times",
    "blame: leaf without gradient": "leaf tensor {index} {shape} gets no gradient {where}; in the reference it got one",
    "blame: leaf differs":
        "leaf tensor {index} {shape} differs {where} by up to {difference:.3g} (rtol {rtol:g}, atol {atol:g})",
    "blame: claim not checked": (
        "the culprit call could not be made out of place in the reference run, so the rewrite's claim could not be "
        "checked"),
    "blame: equal": (
        "{compared} equal the reference's (largest difference {worst:.2g}; {tolerance}: rtol {rtol:g}, atol {atol:g})"),
    "blame: at step": "at step {step} of optimizer {optimizer}",
    "blame: after backward": "after backward {number}",
    "blame: at the end": "at the end",
    "blame: the backward pass": "the backward pass",
    "blame: the first backward passes": "each of the first {count} backward passes",
    "blame: leaf tensors": "{count} leaf tensor{s}",
    "blame: the loss": "the loss",
    "blame: the losses": "the losses",
    "blame: each optimizer step": "each of the {count} optimizer step{s}",
    "blame: the first steps": "each of the first {count} steps of each optimizer",
    "blame: compared, no optimizer": "{loss}, the gradients of the {leaves} after {after}, and their final values,",
    "blame: compared, with optimizers": (
        "{loss}, the gradients {used} used, the gradients after {after} (of each leaf tensor no optimizer steps, and "
        "of those both runs' pass reached), and the final values of the {leaves}"),
    "blame: other root shape": "backward {number} starts from a {shape} tensor, the reference from a {reference} one",
    "blame: other loss": "the loss of backward {number} is {loss:.6g}, the reference's {reference:.6g}",
    "blame: other root": "the {shape} tensor backward {number} starts from differs by up to {difference:.3g}",
    # why --fix writes nothing (blame/fix/transaction.py)
    "blame: lock folder not yours":
        "the folder for --fix's locks, {folder}, is not yours alone: remove it and try again",
    "blame: locked by another": (
        "another `autograder blame --fix` (process {process}) is working on {file}: nothing was run or written; try "
        "again when it has finished"),
    "blame: unreadable now": "it cannot be read any more ({error})",
    "blame: read-only": "it is read-only (no write permission for anyone)",
    "blame: no permission": "you do not have permission to write it",
    "blame: folder not writable": "its folder {folder} is not writable (the backup and the new file are made there)",
    "blame: cannot write": "cannot write {file}: {why}",
    "blame: could not write": "could not write {file}: {error}; every file is as it was",
    "blame: a file": "a file",
    "blame: cannot read again": "cannot read {file} again ({error}): nothing was written",
    "blame: changed meanwhile": "{file} changed while --fix ran: your version is kept, and nothing was written",
    "blame: too many backups": "{file} has 1000 backups beside it already: remove some",
    # a verification run (blame/fix/scratch.py, blame/fix/gradients.py)
    "blame: write outside scratch": (
        "autograder blame --fix: a verification run writes only in its scratch folder; the script tried to write "
        "{path!r}, outside it (your files are never changed by these runs)"),
    "blame: too many entries": "{folder} has more than {most} entries: too many to show in a scratch folder",
    "blame: no sequence numbers": "this PyTorch has no sequence numbers: the truncated reference cannot be made",
    # the tensor a suggestion names (blame/suggest/culprit.py)
    "blame: the tensor saved by": "the tensor that `{code}` (line {line}) saved for backward",
    "blame: a tensor saved": "a tensor saved for backward",
    # why a rewrite of the culprit line is right (blame/suggest/rewrite.py)
    "blame: why clone the output": (
        "Later code writes into the output of `{code}` through another name (a view, `detach()`, a function it is "
        "passed to); `{copy} = {copy}.clone()` right after it gives that code its own copy, and backward keeps the "
        "original."),
    "blame: why clone the made tensor": (
        "Later code writes, through another name, into the tensor `{made}` made and saved for backward; `{cloned}` "
        "hands that code a copy, and backward keeps the original."),
    "blame: why clone the read": (
        "`{saver}` (line {line}) saved `{code}` for backward as it read it, and `{method}` later writes into "
        "`{code}`; `{code}.clone()` there gives backward its own copy, and the write still reaches `{code}`."),
    "blame: why expand": (
        "`{before}` writes into {saved}; `{after}` computes the same values into a new tensor and leaves the saved "
        "one as it was."),
    "blame: why not behind autograd": (
        "`{call}` changes `{behind}` behind autograd's back (its version counter still changes, so backward fails, "
        "and its gradient would ignore the change); `{new}` makes the change an operation autograd records, so the "
        "gradient accounts for it."),
    "blame: why out of place": "`{call}` overwrote {saved}; `{new}` computes the same values into a new tensor.",
    "blame: why twin": (
        "`{call}` overwrote {saved}; `{twin}` computes the same values into a new tensor (`{receiver}` itself is no "
        "longer changed)."),
    "blame: its input": "its input",
    "blame: why no out": "`out={out}` wrote into {saved}; `{new}` puts the result in a new tensor.",
    "blame: why clone first": (
        "The write must stay, so it goes into a copy: `{copy} = {copy}.clone()` before `{write}` leaves {saved} "
        "untouched, and the code after it sees the written values."),
    # why a module built with inplace=True is rebuilt (blame/suggest/construct.py)
    "blame: why not inplace": (
        "`inplace=True` makes `{module}`{where} overwrite its input, {saved}; `{new}` returns a new tensor with the "
        "same values (at the cost of one more activation's memory)."),
    "blame: built and called at": " (built at line {built}, called at line {called})",
    "blame: why inplace attribute": (
        "`{assign}` (line {line}) turns `inplace` on, so the module called at line {called} overwrites its input, "
        "{saved}; with `inplace = False` it returns a new tensor with the same values."),
    "blame: why every inplace module": (
        "Every `inplace=True` module of this kind in {file} overwrites its input; without it each returns a new "
        "tensor with the same values, and {saved} stays as backward needs it."),
    # an optimizer's step as the culprit (blame/suggest/steps.py)
    "blame: code at line": "`{code}` (line {line})",
    "blame: the line that saved it": "the line that saved it",
    "blame: a later backward": "a later `backward()`",
    "blame: the forward": " (`{code}`, line {line})",
    "blame: words step, carried state": (
        "`{step}` changed, in place, parameters that the graph of an earlier pass through {saver} still holds: the "
        "state that pass produced was carried into this one with its graph, so this backward runs back into it. "
        "Detach the carried state at the start of each step (`h = h.detach()`; for an LSTM's pair, "
        "`h = tuple(s.detach() for s in h)`): backpropagation then stops at the step boundary (truncated "
        "backpropagation through time), and `retain_graph=True` is no longer needed."),
    "blame: words step": (
        "`{step}` changes, in place, parameters that the graph of {later} still needs: that graph was built before "
        "the step, with the old values. Two fixes, two different maths: move the step after {later} if those "
        "gradients should come from the parameters the forward used (the step then also sees what that backward "
        "adds to their gradients), or run the forward again after the step{forward} if they should come from the "
        "new parameters, as most GAN and multi-loss code does. Which one is a choice about the training, so "
        "neither is written for you."),
    "blame: why detach the carried state": (
        "`{state}` carries the graph of an earlier pass through this line into the next backward, and `{step}` has "
        "changed its parameters in place since; detaching it at the start of each step ends backpropagation at the "
        "step boundary (truncated backpropagation through time), for a tensor state and for an LSTM's `(h, c)` "
        "pair alike."),
    "blame: why detach the state": (
        "`{state}` carries the previous step's graph, whose parameters `{step}` has since changed in place; "
        "detaching it at the start of each step ends backpropagation at the step boundary (truncated "
        "backpropagation through time), which is what `retain_graph=True` was working around."),
    "blame: the other parameters' grad":
        "the other parameters' `.grad` misses that backward's share (re-running checks that no step used it)",
    "blame: why restrict the backward": (
        "`{backward}` also sends gradients back through the parameters `{step}` changed, yet only `{stepper}` steps "
        "after it: `inputs={params}` keeps it to `{stepper}`'s parameters, whose gradients `{stepper}.step()` sees "
        "as before, and it no longer goes back into the changed ones (unless they lie between the loss and "
        "`{stepper}`'s); {rest}."),
    "blame: why move the step": (
        "`{step}` changed parameters that the graph of `{backward}` still needs: the step now runs after that "
        "backward, and `inputs={params}` keeps the backward to `{stepper}`'s parameters, so `{step}` sees only the "
        "gradients it saw before and `{stepper}.step()` the same as before; {rest}."),
    # --- truthB
    "blame: words no_grad activation": (
        "{shown} runs with gradients off (inside `torch.no_grad()`, or a function decorated with it): autograd does "
        "not record it, yet it still changes {saved}, so backward still fails. And the write is left out of the "
        "graph: the tensor it wrote still requires grad, but what the write read (the `x` of `out += x`) gets no "
        "gradient through it. Take it out of `torch.no_grad()`; then ask which tensor that line writes, and "
        "whether it could make a new one instead, so that {saved} stays as it was saved."),
}
