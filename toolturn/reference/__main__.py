"""`python -m toolturn.reference [--check] [FOLDER]`: write the generated references (default
docs/reference, from the checkout's top), or with --check only say which are stale (exit 1)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from toolturn.reference.pages import FOLDER, REMAKE, stale, write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolturn.reference", description=__doc__)
    parser.add_argument("folder", nargs="?", type=Path, default=FOLDER,
                        help=f"where the pages go (default {FOLDER})")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a page is missing or stale")
    args = parser.parse_args(argv)
    if args.check:
        old = stale(args.folder)
        for path in old:
            print(f"{path}: stale; remake it with {REMAKE}", file=sys.stderr)
        return 1 if old else 0
    for path in write(args.folder):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
