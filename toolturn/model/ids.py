"""Message, tool_use and request ids shaped like the API's, derived from the turn's identity.

The API's ids are a prefix, `01`, then 22 base-62 characters (`toolu_01A09q90qw90lq917835lq9x`).
Ours hash (root seed, session, turn, attempt, position): the same turn gets the same ids under
every executor policy, and two ids of one session collide with probability about 62**-22.
"""

from __future__ import annotations

import hashlib

_ALPHABET = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_DIGITS = 22
# Byte -> base-62 character. The modulo bias (256 = 4 * 62 + 8) does not matter for ids; a
# translation table is ten times faster than repeated division of a 128-bit integer.
_TO_BASE62 = bytes(_ALPHABET[byte % 62] for byte in range(256))


# The hash with its digest size set, copied per id: cheaper than parsing the size again.
_HASH = hashlib.blake2b(digest_size=_DIGITS)


def api_id(prefix: str, root_seed: int, *parts: str | int) -> str:
    """`{prefix}_01...`: a stable id for whatever `parts` name under `root_seed`."""
    keyed = _HASH.copy()
    keyed.update(":".join(map(str, (prefix, root_seed, *parts))).encode())
    return f"{prefix}_01{keyed.digest().translate(_TO_BASE62).decode()}"
