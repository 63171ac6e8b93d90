"""`python -m autograder.workshop serve ...`: the workshop server without the course command line (no torch)."""

import sys

from .cli import main

sys.exit(main())
