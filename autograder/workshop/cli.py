"""`autograder workshop serve | end | misconceptions`: the live view of a workshop room.

`serve` keeps the room in a state file: stopped (Ctrl-C, SIGTERM, or SIGHUP when its terminal closes) and
started again, it is the same room, with the same code, tokens and participants. `end` exports and deletes
it. autograder/cli.py registers these; also `python -m autograder.workshop ...`. Neither imports torch
(`misconceptions`, the teacher's generator, does).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import signal
import sys
import time
from pathlib import Path

from ..feedback.wording import say

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: read off a projector
DEFAULT_PORT = 8765


def default_state() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "autograder-workshop" / "room.sqlite"


def configure(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    from .net import TRUSTABLE

    sub = p.add_subparsers(dest="workshop_command", required=True)
    s = sub.add_parser("serve", help="start (or resume) the workshop server and print the join and host URLs")
    s.add_argument("--state", type=Path, default=default_state(),
                   help="the room's state file, kept across restarts (default: %(default)s)")
    s.add_argument("--new", action="store_true",
                   help="start a new room (a new code and tokens) in place of the kept one")
    s.add_argument("--exercises", metavar="ID,...", help="the workshop's exercises, in order (default: all)")
    s.add_argument("--host", default="0.0.0.0",
                   help="address to listen on (default: all; 127.0.0.1: this machine only)")
    s.add_argument("--port", type=int, help=f"port (default: the room's, else {DEFAULT_PORT}; 0: any free port)")
    s.add_argument("--public-url", help="the base URL participants reach this server by (a tunnel's https URL; a "
                   "path in it, as a reverse proxy keeps it, is served under)")
    s.add_argument("--fold-join-after", type=float, default=120.0, metavar="SECONDS",
                   help="the projector folds its join panel to one line once nobody has joined for this long "
                   "(default 120)")
    s.add_argument("--export", type=Path, metavar="DIR",
                   help="at every stop, write aggregates (CSV, PNG) into a new timestamped folder here")
    s.add_argument("--stuck-attempts", type=int, default=3, help="stuck after this many failed runs (default 3) ...")
    s.add_argument("--stuck-minutes", type=float, default=3.0, help="... over at least this many minutes (default 3)")
    s.add_argument("--gone-minutes", type=float, default=10.0,
                   help="not seen for this long (no check, no heartbeat from the kernel): gone (default 10)")
    s.add_argument("--max-participants", type=int, help="newcomers beyond this many are refused (default 250; "
                   "the host can raise it from the dashboard)")
    s.add_argument("--participant-rate", type=float, default=0.5,
                   help="reports per second a participant may send, sustained (default 0.5, bursts of 10)")
    s.add_argument("--address-rate", type=float, default=50,
                   help="requests per second from one address, sustained (default 50, bursts of 200)")
    s.add_argument("--connections-per-address", type=int, default=16, help="open connections from one address (16)")
    s.add_argument("--max-connections", type=int, default=512, help="open connections in all (512)")
    s.add_argument("--trust-forwarded", metavar="HEADER", type=str.title, choices=TRUSTABLE,
                   help="behind a tunnel or proxy on this machine: count clients by this header, which it sets "
                        f"({', '.join(TRUSTABLE)}); never a header it only passes on")
    s.add_argument("--hub", action="store_true", help="run as a JupyterHub-managed service (see the book)")
    s.add_argument("--hub-group", default="workshop-hosts", help="the hub group whose members see the dashboard")
    s.add_argument("--no-qr", action="store_true", help="do not print the QR code")
    s.set_defaults(func=cmd_serve)
    e = sub.add_parser("end", help="end the room: export its aggregates (with --export) and delete its state file")
    e.add_argument("--state", type=Path, default=default_state(), help="the room's state file (default: %(default)s)")
    e.add_argument("--export", type=Path, metavar="DIR", help="first write the aggregates into a new folder here")
    e.set_defaults(func=cmd_end)
    m = sub.add_parser("misconceptions", help="write the known wrong answers' signatures from references/ "
                       "(course.json; needs torch and references/)")
    m.add_argument("--check", action="store_true", help="exit 1 where the shipped course.json has drifted")
    m.set_defaults(func=cmd_misconceptions)
    return p


def qr_text(url: str) -> str:
    try:
        import io

        import segno
    except ImportError:
        return say("workshop: no qr")
    out = io.StringIO()
    segno.make(url, error="m").terminal(out=out, compact=True, border=2)
    return out.getvalue()


def qr_rows(url: str) -> tuple[str, ...]:
    """The QR code of `url` as rows of 0 and 1, which the projector page draws; () without segno."""
    try:
        import segno
    except ImportError:
        return ()
    return tuple("".join("1" if cell else "0" for cell in row) for row in segno.make(url, error="m").matrix)


def cmd_serve(args: argparse.Namespace) -> int:
    from .net import StartError

    try:
        return asyncio.run(_serve(args))
    except StartError as e:
        print(say("workshop: error", why=e), file=sys.stderr)
        return 2


def _room(store, args, course) -> tuple[dict, bool]:
    """The kept room's settings, or a new room's; and whether it was resumed."""
    meta = store.meta()
    resumed = "code" in meta
    if not resumed:
        meta = {"code": "".join(secrets.choice(CODE_ALPHABET) for _ in range(6)), "room": secrets.token_hex(8),
                "host_token": secrets.token_urlsafe(24), "helper_token": secrets.token_urlsafe(24),
                "hub_key": secrets.token_hex(32), "started": str(time.time())}
    if args.exercises or "exercises" not in meta:
        meta["exercises"] = ",".join(course.exercises)
    if args.max_participants is not None or "max_participants" not in meta:
        meta["max_participants"] = str(args.max_participants or 250)
    return meta, resumed


async def _serve(args: argparse.Namespace) -> int:
    from .course import load
    from .export import check_folder
    from .limits import Rate
    from .net import PROXY, StartError, interface_addresses, listen
    from .room import Config, Workshop
    from .server import make_app, quiet_tornado
    from .storage import Store, Thresholds

    course = load()
    if args.exercises:
        try:
            course = course.restricted(tuple(e.strip() for e in args.exercises.split(",") if e.strip()))
        except ValueError as e:
            raise StartError(say("workshop: exercises option", why=e)) from None
    export = check_folder(args.export) if args.export else None
    if args.new and args.state.exists():
        _end(args.state, export)
    existed = args.state.exists()
    try:
        store = Store(args.state)
        meta, resumed = _room(store, args, course)
    except Exception as e:  # noqa: BLE001 - a file that is not a room's state: say so, in one line
        raise StartError(say("workshop: state not a room", state=args.state, type=type(e).__name__, why=e)) from None
    if not args.exercises:
        course = course.restricted(tuple(e for e in meta["exercises"].split(",") if e in course.exercises))
    hub = None
    if args.hub:
        from urllib.parse import urlsplit

        try:
            from .hub import Hub
        except ImportError as e:
            raise StartError(say("workshop: hub needs jupyterhub", why=e)) from None
        hub = Hub(args.hub_group, bytes.fromhex(meta["hub_key"]))
        service = urlsplit(os.environ.get("JUPYTERHUB_SERVICE_URL", ""))
        args.host, args.port = service.hostname or args.host, service.port or args.port
    port = args.port if args.port is not None else int(meta.get("port", DEFAULT_PORT))
    quiet_tornado()
    config = Config(meta["code"], meta["host_token"], meta["helper_token"], course, room=meta["room"],
                    thresholds=Thresholds(args.stuck_attempts, args.stuck_minutes, args.gone_minutes),
                    max_participants=int(meta["max_participants"]), participant_rate=Rate(args.participant_rate, 10),
                    address_rate=Rate(args.address_rate, 4 * args.address_rate),
                    prefix=hub.prefix if hub else public_prefix(args.public_url), fold_join_s=args.fold_join_after,
                    trusted=args.trust_forwarded or ("X-Forwarded-For" if hub else None))
    workshop = Workshop(config, store, hub)
    try:
        server, port = listen(make_app(workshop), args.host, port, args.connections_per_address, args.max_connections,
                              exempt=PROXY if config.trusted else ())
    except StartError:
        store.close()
        if not existed:
            store.delete()  # nothing of a room that never started is left behind
        raise
    workshop.connections = server
    meta["port"] = str(port)
    store.set_meta(meta)
    bases = _bases(args, port, interface_addresses())
    config.join_urls = tuple(f"{base}{config.code}" for base, _ in bases)
    config.helper_urls = tuple(f"{base}dashboard#view=helper&token={config.helper_token}" for base, _ in bases[:1])
    config.qr = qr_rows(config.join_urls[0]) if config.join_urls else ()
    _banner(args, config, port, bases, resumed, store)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        server.stop()
        try:  # the requests in flight finish before the store closes (a long poll is not waited for)
            await asyncio.wait_for(server.close_all_connections(), 1.0)
        except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - a stop goes on whatever a connection does
            pass
        workshop.save()
        if export is not None:
            from .export import export as write_export

            path = write_export(store, course, config.code, time.time(), config.thresholds, export)
            print(say("workshop: exported", path=path), flush=True)
        store.close()
        print(say("workshop: stopped", attempts=workshop.accepted, state=args.state), flush=True)
    return 0


def public_prefix(public_url: str | None) -> str:
    """The path a reverse proxy keeps in front of every route ("/" where there is none): the server serves
    under it, so `https://host/workshop/` and the proxy forwarding `/workshop/CODE/join` as it is agree."""
    from urllib.parse import urlsplit

    from .net import StartError

    path = urlsplit(public_url or "").path.strip("/")
    if path and not re.fullmatch(r"[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*", path):
        raise StartError(say("workshop: public url path", path=path))
    return f"/{path}/" if path else "/"


def _bases(args, port: int, interfaces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(base URL, where it comes from) for participants: the public URL, or one per interface address."""
    if args.public_url:
        return [(args.public_url.rstrip("/") + "/", "public URL")]
    if args.host not in ("0.0.0.0", "", "::"):
        return [(f"http://{args.host}:{port}/", "--host")]
    return [(f"http://{address}:{port}/", name) for name, address in interfaces]


def _banner(args, config, port: int, bases, resumed: bool, store) -> None:
    if args.hub:
        print(say("workshop: hub service", host=args.host, port=port, prefix=config.prefix), flush=True)
        print(say("workshop: hub participants", prefix=config.prefix, group=args.hub_group), flush=True)
        return
    people = len(store.people())
    if not resumed:
        print(say("workshop: running new", code=config.code, state=args.state))
    elif people == 1:
        print(say("workshop: running resumed one", code=config.code, state=args.state))
    else:
        print(say("workshop: running resumed", code=config.code, people=people, state=args.state))
    print(say("workshop: stops, exports and keeps", export=args.export) if args.export
          else say("workshop: stops and keeps"))
    print(say("workshop: host url", port=port, prefix=config.prefix, token=config.host_token))
    print(say("workshop: host url note"))
    if config.helper_urls:
        print(say("workshop: helpers url", url=config.helper_urls[0]))
    print()
    if not bases:
        print(say("workshop: no address"))
        return
    print(say("workshop: join with code", code=config.code))
    width = max(len(url) for url in config.join_urls)
    for url, (_, where) in zip(config.join_urls, bases):
        print(say("workshop: join url", url=url.ljust(width), where=where))
    print(say("workshop: join in a notebook", url=config.join_urls[0]))
    if not args.no_qr:
        print(qr_text(config.join_urls[0]))
    sys.stdout.flush()


def _end(state: Path, export: Path | None) -> None:
    from .course import load
    from .export import export as write_export
    from .storage import Store, Thresholds

    store = Store(state)
    meta = store.meta()
    if export is not None and "code" in meta:
        course = load()
        kept = tuple(e for e in meta.get("exercises", "").split(",") if e in course.exercises)
        path = write_export(store, course.restricted(kept or course.exercises), meta["code"], time.time(),
                            Thresholds(), export)
        print(say("workshop: exported", path=path))
    store.delete()
    print(say("workshop: deleted", code=meta["code"], state=state) if "code" in meta
          else say("workshop: deleted empty", state=state))


def cmd_end(args: argparse.Namespace) -> int:
    from .export import check_folder
    from .net import StartError

    if not args.state.is_file():
        print(say("workshop: no room kept", state=args.state), file=sys.stderr)
        return 2
    try:
        _end(args.state, check_folder(args.export) if args.export else None)
    except StartError as e:
        print(say("workshop: error", why=e), file=sys.stderr)
        return 2
    return 0


def cmd_misconceptions(args: argparse.Namespace) -> int:
    from . import misconceptions

    if args.check:
        problems = misconceptions.drift()
        for problem in problems:
            print(say("workshop: course drifted", problem=problem))
        if problems:
            print(say("workshop: course drifted fix"))
        return 1 if problems else 0
    print(say("workshop: wrote", path=misconceptions.write()))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = configure(argparse.ArgumentParser(prog="python -m autograder.workshop", description=__doc__))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
