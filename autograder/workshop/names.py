"""Pseudonyms such as `amber-otter-42`: what the room and the log know a participant by.

Drawn at random for each session (client.py), or on a hub derived from the user name with a key that only
the server holds (hub.py), so that the log never holds the name itself. Standard library only.
"""

from __future__ import annotations

import secrets

ADJECTIVES = ("amber", "brave", "calm", "clever", "coral", "daring", "eager", "fair", "gentle", "golden", "happy",
              "hazel", "jolly", "keen", "kind", "lively", "lucky", "merry", "mild", "noble", "olive", "plucky",
              "proud", "quick", "quiet", "rapid", "ruby", "sage", "silver", "steady", "sunny", "swift", "tidy",
              "topaz", "vivid", "warm", "wise", "witty", "young", "zesty")
ANIMALS = ("badger", "bison", "crane", "dingo", "eagle", "egret", "ferret", "finch", "gecko", "heron", "ibis",
           "koala", "lemur", "lynx", "marten", "moose", "newt", "ocelot", "otter", "owl", "panda", "puffin",
           "quail", "raven", "robin", "seal", "shrew", "stoat", "swan", "tapir", "tern", "toucan", "viper",
           "walrus", "wombat", "wren", "yak", "zebra")


def pseudonym(seed: bytes | None = None) -> str:
    """A pseudonym from `seed` (at least 4 bytes), or a random one: 40 x 38 x 900 = 1.4 million of them."""
    seed = seed if seed is not None else secrets.token_bytes(8)
    n = int.from_bytes(seed[:8], "big")
    return f"{ADJECTIVES[n % len(ADJECTIVES)]}-{ANIMALS[n // 64 % len(ANIMALS)]}-{n // 4096 % 900 + 10}"
