"""`python -m sim`: the `sim` console script, for when the script is not on PATH."""

from sim.cli import console

if __name__ == "__main__":
    console()
