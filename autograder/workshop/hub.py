"""`serve --hub`: the server as a JupyterHub-managed service. The hub, not a join code, says who is who.

A participant's kernel sends its server's API token (`$JUPYTERHUB_API_TOKEN`, which must hold the scope
`access:services!service=NAME`); HubAuth turns it into a user name, and the room gets only a pseudonym made
from that name with a key kept in the room's state file (so that a restarted service knows everyone again).
The dashboard is for members of one hub group (`--hub-group`, default `workshop-hosts`), who log in through
the hub's OAuth; nobody else, not even an admin, sees it. Only loaded with `--hub` (it imports jupyterhub).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets

from jupyterhub.services.auth import HubOAuth, HubOAuthCallbackHandler, HubOAuthenticated
from tornado import web

from ..feedback.wording import say
from .names import pseudonym


class Hub:
    def __init__(self, group: str = "workshop-hosts", key: bytes | None = None):
        self.group = group
        self.auth = HubOAuth.instance()  # configured by the hub's JUPYTERHUB_* environment variables
        self.prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/workshop/")
        self.key = key or secrets.token_bytes(32)
        self.cookie_secret = secrets.token_bytes(32)

    async def participant(self, handler: web.RequestHandler) -> str:
        """The hub user whose token came with this request (401 without one, 403 for a token without access)."""
        match = self.auth.auth_header_pat.match(handler.request.headers.get("Authorization", ""))
        if not match:
            raise web.HTTPError(401)
        model = await self.auth.user_for_token(match.group(1), sync=False)
        if (not model or model.get("kind", "user") != "user"
                or not self.auth.check_scopes(self.auth.access_scopes, model)):
            raise web.HTTPError(403)
        return model["name"]

    def pseudonym(self, name: str) -> str:
        """The user's pseudonym in this room: keyed, so the log never holds the name."""
        return pseudonym(hmac.new(self.key, name.encode(), hashlib.sha256).digest())

    def is_host(self, handler: web.RequestHandler) -> bool:
        model = handler.current_user  # HubOAuthenticated: the OAuth cookie, access scope checked
        return bool(model) and self.group in (model.get("groups") or ())

    def require_login(self, handler: web.RequestHandler) -> None:
        if not handler.current_user:
            handler.redirect(handler.get_login_url())
            raise web.Finish()
        if not self.is_host(handler):
            raise web.HTTPError(403, reason=say("workshop: hub group only", group=self.group))
        handler.xsrf_token  # noqa: B018 - sets the _xsrf cookie that the page's fetch() sends back (X-XSRFToken)

    def wrap(self, handler_class: type) -> type:
        """The handler, identifying users by the hub's OAuth cookie."""
        return type(f"Hub{handler_class.__name__}", (HubOAuthenticated, handler_class), {})

    def routes(self, prefix: str) -> list:
        return [(rf"{prefix}oauth_callback", HubOAuthCallbackHandler)]
