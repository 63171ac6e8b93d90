"""The words of the live room: the participant's client, the host's view, the server's answers."""

TEMPLATES: dict[str, str] = {
    # the server's answers to a participant (room.py, server.py, storage.py), shown by the client
    "workshop: too many requests": "too many requests",
    "workshop: no such code": "no workshop with this code here: check the code on the projector",
    "workshop: too many joins": "too many joins from this address; try again in a minute",
    "workshop: invalid join": "invalid join: {why}",
    "workshop: invalid attempt": "invalid report: {why}",
    "workshop: too many attempts": "too many reports: at most one every two seconds",
    "workshop: invalid event": "invalid event: {why}",
    "workshop: too many notes": "too many notes: wait a little",
    "workshop: not a participant": "not a participant of this workshop: run check.join(URL) again",
    "workshop: room full": "the workshop is full ({cap} participants): tell the host, who can raise the limit",
    # what is wrong with a posted body (schema.py), after "invalid report: " and the like
    "workshop: field too long": "{key}: a string of at most {limit} characters",
    "workshop: field control characters": "{key}: control or formatting characters",
    "workshop: field form": "{key}: not in the expected form",
    "workshop: body too large": "body over {limit} bytes",
    "workshop: not json": "not JSON",
    "workshop: not an object": "not a JSON object",
    "workshop: keys": "unknown or missing keys",
    "workshop: version": "v: must be {version} (update the course on this machine)",
    "workshop: true false or null": "{key}: true, false or null",
    "workshop: exercise unknown": "exercise: not an exercise of this workshop",
    "workshop: status": "status: one of {statuses}",
    "workshop: checks too many": "checks: a list of at most {limit}",
    "workshop: checks items": "checks: items are {{name, passed}}",
    "workshop: checks not public": "checks: not a public check of this exercise",
    "workshop: checks twice": "checks: a name twice",
    "workshop: ago": "ago: seconds, from 0 to {limit}",
    "workshop: pseudonym and secret": "pseudonym and secret: both or neither",
    "workshop: kind": "kind: one of {kinds}",
    # what became of a post (sender.py), shown by the client
    "workshop: answer not json": "the answer was not JSON",
    "workshop: no answer in time": "no answer in time",
    "workshop: cannot reach": "cannot reach the server ({why})",
    "workshop: too many waiting": "too many reports waiting (the server is not answering)",
    # the one line a check ends with, once joined (sender.py)
    "workshop: received": "Workshop: report received ({pseudonym}).",
    "workshop: received with kept": "Workshop: report received ({pseudonym}), after the {late} kept while the server "
                                    "did not answer, in order.",
    "workshop: kept": "Workshop: report NOT received yet ({why}): kept on this computer and sent, in order, as soon "
                      "as the server answers ({waiting} waiting). Your check is unaffected.",
    "workshop: behind an earlier one": "Workshop: report NOT received yet: the server has not answered an earlier "
                                       "one; this one is kept and sent after it ({waiting} waiting). Your check is "
                                       "unaffected.",
    "workshop: refused": "Workshop: report NOT received: the server refused it ({why}). It is not sent again; your "
                         "check is unaffected.",
    "workshop: not confirmed": "Workshop: report sent, not confirmed within {wait:g} s (the server is slow); it is "
                               "sent again until it arrives.",
    "workshop: kept ones arrived": "({late} kept earlier have arrived since.)",
    "workshop: kept ones refused": "({lost} kept earlier were refused when the server answered: {why}. They are "
                                   "not sent again.)",
    # the host's dashboard (host.py, hub.py)
    "workshop: host token elsewhere": "the host token works only on the host's machine",
    "workshop: not in the hosts' group": "you are not in the hub's group of hosts",
    "workshop: host only": "only the host may do this (a helper's token is read-only)",
    "workshop: view refused": "no such view, or not for this token (the controls are the host's only)",
    "workshop: no such page": ("no such page on this workshop server: participants join at {prefix}CODE, the "
                               "host at {prefix}dashboard"),
    "workshop: public url path": ("--public-url's path {path!r} can't be a path prefix: use letters, digits and "
                                  "- . _ ~ between slashes"),
    "workshop: no such line": "no shared line with this id",
    "workshop: join page title": "Workshop {code}",
    "workshop: join page intro": ("In your exercise notebook, after `from autograder import check`, run this line "
                                  "(copy it from here):"),
    "workshop: join page seat": "Put your seat label between the quotes after seat=, so that a helper can find you.",
    "workshop: no token": "no token, or not this room's: open the URL the server printed",
    "workshop: hint too long": "a hint is one line of at most {limit} characters",
    "workshop: hint exercise unknown": "not an exercise of this workshop",
    "workshop: max participants": "max_participants: a whole number from {low} to {high}",
    "workshop: hub group only": "the dashboard is for the hub group {group!r}",
    # the command line (cli.py, net.py, course.py, export.py)
    "workshop: error": "error: {why}",
    "workshop: no qr": "(pip install segno, or the course's [workshop] extra, for a QR code here)",
    "workshop: exercises option": "--exercises: {why}",
    "workshop: not exercises": "not exercises of this course: {unknown}; they are: {exercises}",
    "workshop: state not a room": "--state {state}: not a workshop room's state ({type}: {why})",
    "workshop: hub needs jupyterhub": "--hub needs jupyterhub ({why}); run it in the hub's own environment",
    "workshop: port busy": "port {port} is busy (another workshop server?): stop it, or choose --port",
    "workshop: cannot listen": "cannot listen on {host}:{port}: {why}",
    "workshop: export folder": "--export {folder}: {why}",
    "workshop: no free export name": "no free name for an export in {folder}",
    "workshop: exported": "exported: {path}",
    "workshop: stopped": (
        "stopped ({attempts} attempts this run). The room is kept in {state}: run the same command to resume it; "
        "`autograder workshop end` deletes it."),
    "workshop: hub service": "Workshop service on {host}:{port}, under the hub at {prefix}",
    "workshop: hub participants": (
        "  Participants: nothing to do (the hub sets AUTOGRADER_WORKSHOP); dashboard: {prefix}dashboard for the "
        "hub group {group!r}"),
    "workshop: running new": "Workshop server running: room {code}, new. State: {state}",
    "workshop: running resumed one": (
        "Workshop server running: room {code}, resumed (1 participant so far). State: {state}"),
    "workshop: running resumed": (
        "Workshop server running: room {code}, resumed ({people} participants so far). State: {state}"),
    "workshop: stops and keeps": "Ctrl-C (or closing this terminal) stops it and keeps the room.",
    "workshop: stops, exports and keeps": (
        "Ctrl-C (or closing this terminal) stops it and keeps the room, after exporting aggregates into {export}."),
    "workshop: host url": "  Host:    http://127.0.0.1:{port}{prefix}dashboard#token={token}",
    "workshop: host url note": (
        "           (this machine only; its projector view shows the join panel: project the page, not this terminal)"),
    "workshop: helpers url": "  Helpers: {url}",
    "workshop: no address": (
        "  No network address found: participants on other machines cannot reach this one. Join the room's network, "
        "or use a tunnel and --public-url."),
    "workshop: join with code": "Participants join with code {code}:",
    "workshop: join url": "  {url}  ({where})",
    "workshop: join in a notebook": '  in a notebook: check.join("{url}", seat="B12")',
    "workshop: deleted": "deleted the room {code} ({state})",
    "workshop: deleted empty": "deleted the room (empty) ({state})",
    "workshop: no room kept": "error: no room kept at {state}",
    "workshop: course drifted": "course.json has drifted: {problem}",
    "workshop: course drifted fix": (
        "run `autograder workshop misconceptions` and commit autograder/workshop/course.json"),
    "workshop: wrote": "wrote {path}",
    # the export's figure (export.py)
    "workshop: grid title": "Where the room got to",
    "workshop: grid axis": "participants (of {participants})",
    # the known wrong answers, as the projector and the helpers read them (misconceptions.py -> course.json)
    "workshop: the bug unchanged": "the bug, unchanged",
    "workshop: fails like the bug": "Like the starting code, it fails {fails}.",
    "workshop: fails": "It fails {fails}.",
    "workshop: every check": "every check",
    "workshop: label and more": "{label}, and {more} more that fail alike",
    "workshop: explain h but not c": (
        "Only h is detached: c still carries the last chunk's graph, already freed by its backward. Detach both."),
    "workshop: read chapter": "Chapter {number}: {title}",
    "workshop: read exercise": "Exercise {number}: {title}",
    "workshop: explain no_grad": (
        "`torch.no_grad()` only stops recording new operations. An in-place write inside it still moves the version "
        "counter of a tensor saved before, so backward fails the same way."),
    "workshop: explain data": (
        "`.data` is the same storage with autograd looking away: a write through it does not move the version "
        "counter. Nothing raises, and what backward computes from the changed tensor is silently wrong."),
    "workshop: explain detach cuts": (
        "`detach()` cuts the graph: no gradient flows back through it, and nothing says so."),
    "workshop: explain detach shares": (
        "`detach()` shares the storage and the version counter: a write through it still changes the saved tensor."),
    "workshop: explain late clone": (
        "A clone made after the in-place write copies the changed tensor: the saved one is still changed. Clone "
        "before writing, and write into the clone."),
    "workshop: explain retain_graph": (
        "`retain_graph=True` keeps the graph for another backward; it does not undo an in-place write to a tensor the "
        "graph saved."),
    # --- tried fix
    "workshop: tried fix label": "a tried fix that fails like the bug",
    "workshop: tried fix": (
        "The line changed, but not the write: it still writes in place into the tensor backward saved, by its own "
        "name or through a view or .detach. Put the result in a new tensor."),

    # --- labels written for their answers
    'workshop: label momentum buffer': (
        "The momentum buffer is not SGD's: it must become momentum * buf + grad + weight_decay * p, written "
        'inside `torch.no_grad()` too, so that it never carries history.'
    ),
    'workshop: label not in place': (
        "The caller's parameters do not hold SGD's values after the step: update each in its own tensor, in "
        'place, from a buffer that keeps momentum times its old value.'
    ),
    'workshop: label requires_grad off': (
        'Turning requires_grad off to write the leaf, and leaving it off, stops the parameter learning: no '
        'later backward reaches it. Write it inside `torch.no_grad()` instead.'
    ),
    'workshop: label grads zeroed': (
        'The step zeroes each .grad; it must leave .grad as None, as zero_grad does by default since torch '
        '2.0.'
    ),
    'workshop: label clamp_ softmax': (
        'softmax saves its output for backward, and clamp_ writes into that tensor, by its name or through '
        '.detach: backward raises. Clamp out of place, into a new tensor.'
    ),
    'workshop: label hidden add': (
        'Through .data or after .detach, autograd does not see part of the sum: nothing raises, but a path of'
        ' the gradient is missing. Add out of place, into a new tensor.'
    ),
    'workshop: label adds into x': (
        "`x += out` writes into the caller's x: the caller's tensor changes, and autograd refuses the write "
        'to a tensor it needs. Add into a new tensor instead.'
    ),
    'workshop: label relu after add': (
        'This block adds x after its last ReLU. Moving the ReLU after the add changes the output: keep the '
        'order, and make only the add out of place.'
    ),
    "workshop: label not proj's own": (
        "The exercise keeps the memory saving: `fc` must receive proj's own output, changed in place. Dropout"
        ' out of place, or on a clone, makes a new tensor.'
    ),
    'workshop: label not dropout': (
        'Not the dropout asked for: in training, each entry zeroed with probability drop_rate or divided by 1'
        " - drop_rate, a new mask at each call, after the ReLU's values; none in eval."
    ),
    'workshop: label hidden dropout': (
        'Through .data or after .detach, autograd does not see the dropout: nothing raises, but the gradient '
        'ignores the mask or stops at proj.'
    ),
    'workshop: label dropout into x': (
        "The dropout writes into the caller's x, before proj: the caller's tensor changes, and the input is "
        "dropped out instead of proj's output."
    ),
    'workshop: label second pass': (
        "The second pass is not the one asked for: the caller's tokens with their last 3 replaced by each "
        "row's own label tokens, the mask set to 1 there, through the same embed."
    ),
    'workshop: label copy of embed': (
        'A copy of embed, or a first pass under `torch.no_grad()`, cuts a path of the gradient: embed.weight '
        'gets nothing from one of the passes. Use embed itself, with autograd on.'
    ),
    'workshop: label registered copy': (
        'A copy of embed registered inside forward adds a submodule the model must not have, and what that '
        'copy learns never reaches embed.weight.'
    ),
    'workshop: label mutation context': (
        'allow_mutation_on_saved_tensors must stay open through the backward too: closed at the end of '
        'forward, backward fails. Write into copies of tokens and mask instead.'
    ),
    'workshop: label not a buffer': (
        'label_tokens must be a buffer, registered with register_buffer, so that it moves and is saved with '
        'the model; a plain attribute is not.'
    ),
    'workshop: label hidden scale': (
        "Scaling through .data, or after .detach, hides the scale from autograd: nothing raises, but q's "
        'gradient misses it or stops. Scale out of place, into a new tensor.'
    ),
    'workshop: label scale place': (
        'The scale is missing or in the wrong place: the scores are q times k transposed, times head_dim to '
        'the power -0.5, before the softmax.'
    ),
    'workshop: label scaled weights': (
        "Scaling qkv's weights in place changes the caller's parameters at every forward, and the gradient is"
        ' then of other weights. Scale q, out of place, instead.'
    ),
    'workshop: label not the loop': (
        'The training loop is not the one asked for: per chunk, zero the grads, run from the carried state, '
        'backward, step, and carry the final state, detached, into the next chunk.'
    ),
    'workshop: label tuple detach': (
        "An LSTM's state is a tuple of h and c, and a tuple has no .detach: detach each tensor in it."
    ),
    'workshop: label history grows': (
        "The losses are right, but the state carried into each chunk keeps its history, so each chunk's graph"
        ' grows. Detach the state between chunks: truncated BPTT.'
    ),
    'workshop: label into state0': (
        "Copying the new state into state0 writes into the caller's tensor. Carry the state in a name of your"
        ' own instead.'
    ),
    'workshop: label D late': (
        "With D's step after g_loss's backward, D's gradients also hold g_loss's. D steps first, on d_loss "
        'alone; then g_loss goes through the updated D.'
    ),
    'workshop: label G step': (
        "G's step is not the one asked for: after D's step, g_loss computed through the updated D, and only "
        'its gradients reaching G.'
    ),
    'workshop: label D grads kept': (
        "D's gradients are never cleared, so the second step adds the first step's gradients to its own. Zero"
        ' them before each backward.'
    ),
    'workshop: label loss floats': (
        'train_step must return the two losses as Python floats, with .item, not as tensors.'
    ),
    'workshop: label first batch': (
        'Something is made once, for the first batch, and kept: a batch of another size then fails. Make it '
        'from each batch.'
    ),
    'workshop: label detached target': (
        "Detaching the target's output cuts the graph there: no gradient reaches the target, so its hook "
        'never runs. Keep the graph; make the ReLU after it out of place.'
    ),
    'workshop: label hook on relu': (
        'The hook must be on model.target itself: a hook on the ReLU after it captures the gradient of '
        'another tensor.'
    ),
    'workshop: label grad_input': (
        "A full backward hook's grad_output is the gradient of the module's output, which Grad-CAM needs; "
        'grad_input is the gradient of its input.'
    ),
    'workshop: label relu removed': (
        'The model must keep its ReLU after the target, and its relu and pool modules: removing them changes '
        'the scores. Make the ReLU out of place instead.'
    ),
    'workshop: label pack history': (
        'pack_hook must return no tensor that requires grad: keeping the saved tensor itself keeps its '
        'history alive. Keep a detached copy.'
    ),
    'workshop: label which version': (
        "Compare, at unpack, the saved tensor's version now with its version when packed: a copy's version "
        'never moves, 0 is not always the start, and pack is too early.'
    ),
    'workshop: label assert': (
        "The change must raise a RuntimeError, as PyTorch's own check does; an assert raises AssertionError, "
        'and python -O removes it.'
    ),
    'workshop: label unpack twice': (
        'A saved tensor can be unpacked more than once, in a graph run backward twice with retain_graph: '
        'unpack must not free what it packed.'
    ),
    'workshop: label say versions': (
        "The error must say both versions, as PyTorch's does: is at version N; expected version M, with the "
        "saved tensor's real numbers."
    ),
    'workshop: label save output': (
        'The output must be saved with save_for_backward: a saved copy, or an output kept on ctx, is never '
        'version-checked, so a later in-place write goes unseen.'
    ),
    'workshop: label weight grad': (
        "The weight's gradient is wrong or missing: per channel, the sum of grad times the input where the "
        'input was negative, the input recovered from the saved output.'
    ),
    'workshop: label own function': (
        'prelu_ must be a Function of your own that writes x in place and marks it dirty; the built-in prelu,'
        ' or a write through .data, is not that.'
    ),
    'workshop: label own error': (
        "Backward must not raise an error of its own: PyTorch's version check already raises when the saved "
        'output changed. Save it with save_for_backward.'
    ),
    'workshop: label silent bugs': (
        "The numbers are not the script's as it should have been: every write must stay, out of place and "
        'seen by autograd. No .data, no detach, nothing deleted.'
    ),
    'workshop: label new parameter': (
        'A new Parameter replaces model.scale, but the optimizer still holds the old one: the temperature is '
        'no longer trained. Clamp the Parameter itself, under `torch.no_grad()`.'
    ),
}
