"""The C library's allocator made to give large freed blocks back (glibc only).

Arrow allocates through the C library (toolturn/cli.py, `ARROW_POOL`). glibc serves a block of at
least its mmap threshold with a mapping of its own, unmapped on free, and smaller ones from its
heaps, which keep what is freed. The threshold is dynamic: freeing a mapped block raises it to
that block's size (up to 32 MB), so after Arrow's first large buffer is freed, buffers of
megabytes come from the heaps. Assembling a run folder frees and allocates such buffers row
group after row group; the heaps, fragmented, then grew with the run's rows while Arrow held no
more than one row group (issue 19: 93 MB over the process's start for the turns of 20,000
sessions of the default scenario against 66 MB for 5,000, Arrow's pool at most 60 MB in both).
`fix_mmap_threshold` pins the threshold (pinning also stops the dynamic rise), so every large
buffer is mapped and its memory returned when freed.
"""

from __future__ import annotations

import ctypes
import os

# mallopt's parameter number for the threshold (glibc's malloc.h).
M_MMAP_THRESHOLD = -3
# glibc's own starting value is 128 KiB; twice that keeps Python's small objects and Arrow's
# small buffers (a batch's column of a few thousand values) on the heaps, where they are cheap.
MMAP_THRESHOLD = 256 * 1024
# glibc reads this at start-up: a threshold the user chose is left alone.
USER_VARIABLE = "MALLOC_MMAP_THRESHOLD_"


def fix_mmap_threshold() -> bool:
    """Pins glibc's mmap threshold at `MMAP_THRESHOLD`; whether it did (not on another C
    library, nor when the user set `USER_VARIABLE`)."""
    if USER_VARIABLE in os.environ or not _glibc():
        return False
    libc = ctypes.CDLL(None)
    return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def _glibc() -> bool:
    try:
        return bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError):  # not a name this system knows
        return False
