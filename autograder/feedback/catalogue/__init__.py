"""The catalogue's areas: one module of templates per part of the course that speaks (see ../wording.py).

Each area module defines `TEMPLATES: dict[str, str]`, message id -> `str.format` template. Ids are unique over
all areas (wording.py refuses a duplicate); new ids are written `"<area>: <what>"`.
"""

AREAS = ("run", "intake", "notebook", "blame", "workshop", "reports", "platforms", "cli")
