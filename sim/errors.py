"""The one exception type the command line turns into a clean message and exit status 2."""


class UserError(Exception):
    """Bad input from the user (a file, a flag, a scenario): reported in one line, no traceback.

    The message should name what was wrong and where (file, field path) and why.
    """
