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
}
