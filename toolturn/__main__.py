"""`python -m toolturn`: the `toolturn` console script, for when the script is not on PATH."""

from toolturn.cli import console

if __name__ == "__main__":
    console()
