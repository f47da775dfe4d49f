"""The claude-code profile's read-only shell rule (`toolturn.runtime.read_only_shell`) as one
regular expression, the form a scenario's `concurrency_safe_when` takes (with `forbid = ""`: the
expression itself says where a separator or a quote may stand).

Built from the rule's own lists (its programs, git subcommands, find's and date's writing
arguments, git branch's listing options), so the two cannot drift: a compound command (`;`, `&&`,
`||`, `|`) of parts that each read. The expression never accepts what the rule refuses; on a few
odd spellings it refuses what the rule accepts (a program or option written in quotes, an escaped
or quoted operator character standing alone as a word): a wrong "not read-only" only runs a call
alone.
"""

from __future__ import annotations

import re

from toolturn.runtime.read_only_shell import (
    _DATE_SETTERS,
    _GIT_BRANCH_LISTING,
    FIND_WRITERS,
    READ_ONLY_GIT,
    READ_ONLY_PROGRAMS,
)

_OPERATOR_CHARS = r"();<>|&"
# One word as the rule's lexer (shlex, POSIX, punctuation split off) reads it: unquoted
# characters, '...' , "..." and backslash escapes, glued. Substitutions, backquotes and line
# breaks are refused for the whole command (`_NO_SUBSTITUTION`).
_UNQUOTED = rf"[^ \t\n\r'\"\\{_OPERATOR_CHARS}`]"
_WORD_BODY = (
    rf"(?:{_UNQUOTED}|'[^']*'|\"(?:[^\"\\]|\\[\s\S])*\"|\\[^\n\r{_OPERATOR_CHARS}])+"
)
_END = r"(?=[ \t;&|]|$)"
# A word the lexer gives as operator characters only (`">"`, `"|"`) is an operator to the rule.
_NOT_OPERATOR = rf"(?![\"'\\{_OPERATOR_CHARS}]*[{_OPERATOR_CHARS}][\"'\\{_OPERATOR_CHARS}]*{_END})"
_WORD = _NOT_OPERATOR + _WORD_BODY
# An option before git's subcommand, as the rule reads it: written plainly (a quoted `-C` would
# shift which word is the subcommand).
_PLAIN_OPTION = rf"-[^ \t\n\r'\"\\{_OPERATOR_CHARS}`$]*{_END}"
# Quotes and escapes the lexer removes, which may stand between the letters of a word.
_QUOTING = r"[\"'\\]*"
_GAP = r"[ \t]+"
_NO_SUBSTITUTION = r"(?![\s\S]*(?:\$\(|`|<\(|>\(|[\n\r]))"
_SEPARATOR = r"[ \t]*(?:&&|\|\||\||;)[ \t]*"


def _alternatives(words: frozenset[str] | tuple[str, ...]) -> str:
    return "|".join(re.escape(word) for word in sorted(words, key=lambda w: (-len(w), w)))


def _spelled(word: str) -> str:
    """`word` however the lexer may have had it quoted (`"-exec"`, `-e'xec'`, `\\-exec`)."""
    return "".join(_QUOTING + re.escape(char) for char in word)


def _argument_except(words: frozenset[str] | tuple[str, ...], prefixes: tuple[str, ...] = ()
                     ) -> str:
    """Any word that does not unquote to one of `words` nor start with one of `prefixes`."""
    refused = [f"{_spelled(w)}{_QUOTING}{_END}" for w in sorted(words)]
    refused += [_spelled(prefix) for prefix in prefixes]
    return rf"(?!{'|'.join(refused)}){_WORD}"


def _git() -> str:
    # As the rule: `-C DIR`, `--git-dir DIR`, `--work-tree DIR` take a value; `-c` and
    # `--exec-path` are refused; any other option stands alone.
    with_value = "-C|--git-dir|--work-tree"
    options = (
        rf"(?:{_GAP}(?:(?:{with_value}){_END}{_GAP}{_WORD}"
        rf"|(?!(?:{with_value}|-c|--exec-path(?:=[^ \t]*)?){_END}){_PLAIN_OPTION}))*"
    )
    others = _alternatives(READ_ONLY_GIT - {"branch"})
    rest = rf"(?:{_GAP}{_argument_except(('--output',), ('--output=',))})*"
    branch = rf"branch(?:{_GAP}(?:{_alternatives(frozenset(_GIT_BRANCH_LISTING))}){_END})*"
    return rf"git{options}{_GAP}(?:(?:{others}){_END}{rest}|{branch})"


def _parts() -> str:
    simple = READ_ONLY_PROGRAMS - {"find", "date", "git"}
    find = rf"find(?:{_GAP}{_argument_except(FIND_WRITERS)})*"
    date = rf"date(?:{_GAP}{_argument_except(tuple(_DATE_SETTERS), ('--set=',))})*"
    simple_part = rf"(?:{_alternatives(simple)}){_END}(?:{_GAP}{_WORD})*"
    return rf"(?:{find}|{date}|{_git()}|{simple_part})"


def read_only_shell_pattern() -> str:
    """The expression: a whole command whose every part reads (see the module docstring)."""
    part = _parts()
    return rf"{_NO_SUBSTITUTION}[ \t]*{part}(?:{_SEPARATOR}{part})*(?:[ \t]*;)?[ \t]*"
