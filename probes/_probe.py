"""What the probes that take ``SEED FILE COUNT`` share: their arguments and the file they
write."""

import random
import sys
from pathlib import Path


def arguments():
    """The seed's random source, the file to write and how many queries to draw, from the
    command line."""
    return random.Random(int(sys.argv[1])), sys.argv[2], int(sys.argv[3])


def write(out, lines):
    """The file ``out``: ``lines``, one a line."""
    Path(out).write_text("\n".join(lines) + "\n")
