"""The learner's `check()`, made in one place from its two parts: the self-check (selfcheck.Checker) and the
workshop's client as its listener (workshop/client.py), which lends it check.join(URL), check.stuck(), ... and
reports a check once joined. Neither part reaches into the other: selfcheck imports no workshop, and the client
imports no checker (it stays free of torch, for the server side); this module, above both, puts them together.
`from autograder import check` gives `check` below (autograder/__init__.py only returns it).
"""

from __future__ import annotations

from ..workshop.client import LISTENER
from .selfcheck import Checker

check = Checker(LISTENER)
"""The notebook's check(): the public checks and what to fix; it reports to a workshop once joined
(check.join(URL), or $AUTOGRADER_WORKSHOP on a hub), and not before."""
