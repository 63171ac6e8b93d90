"""`autograder workshop serve`: start the live view, print how to join it, and delete its data at the end.

autograder/cli.py registers it; also `python -m autograder.workshop serve ...`. Neither imports torch.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import signal
import socket
import sys
import time
from pathlib import Path

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: read off a projector


def configure(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    sub = p.add_subparsers(dest="workshop_command", required=True)
    s = sub.add_parser("serve", help="start the workshop server and print the join and host URLs")
    s.add_argument("--host", default="0.0.0.0", help="address to listen on (default: all; 127.0.0.1: this machine only)")
    s.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free port)")
    s.add_argument("--public-url", help="the base URL participants reach this server by (a tunnel's https URL)")
    s.add_argument("--export", type=Path, metavar="DIR",
                   help="at shutdown, write aggregates (CSV) and the grid (PNG) here before the log is deleted")
    s.add_argument("--stuck-attempts", type=int, default=3, help="stuck after this many failed runs (default 3)")
    s.add_argument("--stuck-minutes", type=float, default=5.0, help="... or this many minutes failing (default 5)")
    s.add_argument("--max-participants", type=int, default=250,
                   help="newcomers beyond this many are refused (default 250)")
    s.add_argument("--participant-rate", type=float, default=0.5,
                   help="reports per second a participant may send, sustained (default 0.5, bursts of 10)")
    s.add_argument("--address-rate", type=float, default=50,
                   help="requests per second from one address, sustained (default 50, bursts of 200)")
    s.add_argument("--trust-forwarded", action="store_true",
                   help="behind a tunnel or proxy: rate-limit by its X-Forwarded-For / X-Real-Ip header")
    s.add_argument("--hub", action="store_true", help="run as a JupyterHub-managed service (see the book)")
    s.add_argument("--hub-group", default="workshop-hosts", help="the hub group whose members see the dashboard")
    s.add_argument("--no-qr", action="store_true", help="do not print the QR code")
    s.set_defaults(func=cmd_serve)
    return p


def _lan_address() -> str:
    """This machine's first non-loopback IPv4 address by its host name (no packet is sent), for the join URL."""
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            if not info[4][0].startswith("127."):
                return info[4][0]
    except OSError:
        pass
    return "THIS-MACHINE"


def qr_text(url: str) -> str:
    try:
        import io

        import segno
    except ImportError:
        return "(pip install segno, or the course's [workshop] extra, for a QR code here)"
    out = io.StringIO()
    segno.make(url, error="m").terminal(out=out, compact=True, border=2)
    return out.getvalue()


def cmd_serve(args: argparse.Namespace) -> int:
    return asyncio.run(_serve(args))


async def _serve(args: argparse.Namespace) -> int:
    from ..catalog import exercise_ids
    from .limits import Rate
    from .server import Config, Workshop, listen, make_app, quiet_tornado
    from .storage import Store, Thresholds

    hub = None
    if args.hub:
        import os
        from urllib.parse import urlsplit

        try:
            from .hub import Hub
        except ImportError as e:
            print(f"error: --hub needs jupyterhub ({e}); run it in the hub's own environment", file=sys.stderr)
            return 2
        hub = Hub(args.hub_group)
        service = urlsplit(os.environ.get("JUPYTERHUB_SERVICE_URL", ""))
        args.host, args.port = service.hostname or args.host, service.port or args.port
    config = Config(code="".join(secrets.choice(CODE_ALPHABET) for _ in range(6)),
                    host_token=secrets.token_urlsafe(24), helper_token=secrets.token_urlsafe(24),
                    exercises=exercise_ids(), thresholds=Thresholds(args.stuck_attempts, args.stuck_minutes),
                    max_participants=args.max_participants, participant_rate=Rate(args.participant_rate, 10),
                    address_rate=Rate(args.address_rate, 4 * args.address_rate), prefix=hub.prefix if hub else "/")
    quiet_tornado()
    store = Store()
    workshop = Workshop(config, store, hub)
    server, port = listen(make_app(workshop), args.host, args.port, xheaders=args.trust_forwarded or args.hub)
    _banner(args, config, port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        server.stop()
        if args.export:
            from .export import export

            paths = export(store, config.exercises, time.time(), config.thresholds, args.export)
            print("exported: " + ", ".join(str(p) for p in paths), flush=True)
        store.close(delete=True)
        print(f"stopped; the workshop's log ({workshop.accepted} reports) is deleted", flush=True)
    return 0


def _banner(args: argparse.Namespace, config, port: int) -> None:
    local = f"http://127.0.0.1:{port}{config.prefix}"
    if args.hub:
        print(f"Workshop service on {args.host}:{port}, under the hub at {config.prefix}", flush=True)
        print(f"  Participants: nothing to do (the hub sets AUTOGRADER_WORKSHOP); dashboard: {config.prefix}dashboard "
              f"for the hub group {args.hub_group!r}", flush=True)
        return
    host = args.host if args.host not in ("0.0.0.0", "", "::") else _lan_address()
    base = (args.public_url.rstrip("/") + "/") if args.public_url else f"http://{host}:{port}/"
    join = f"{base}{config.code}"
    print("Workshop server running. Ctrl-C stops it and deletes its data"
          + (f" (after exporting aggregates to {args.export})." if args.export else "."), flush=True)
    print(f"  Join code:    {config.code}")
    print(f"  Participants: {join}")
    print(f'                in a notebook: check.join("{join}", seat="B12")')
    if not args.no_qr:
        print(qr_text(join))
    print(f"  Helpers:      {base}dashboard#view=helper&token={config.helper_token}")
    print(f"  Host:         {local}dashboard#token={config.host_token}")
    print("                (this machine only: the host token is refused from elsewhere; keep this line off the projector)",
          flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = configure(argparse.ArgumentParser(prog="python -m autograder.workshop", description=__doc__))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
