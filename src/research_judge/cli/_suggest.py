"""Did-you-mean for a misspelt flag or verb, checked before argparse parses the words.

argparse checks required options before it looks at unknown ones, so ``grade x --modle m`` was
reported as "the following arguments are required: --model", which sends the user after the
wrong problem; and it suggests nothing for ``--concurency``. This walks the words the way the
parser will (verb, then action, e.g. ``tasks run``), and stops at the first long flag the chosen
parser does not know, naming the closest ones it does.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence


def _subparsers(
    parser: argparse.ArgumentParser,
) -> argparse._SubParsersAction[argparse.ArgumentParser] | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {flag: action for action in parser._actions for flag in action.option_strings}


def _takes_one_value(action: argparse.Action) -> bool:
    return action.nargs is None and not isinstance(
        action,
        (
            argparse._StoreTrueAction,
            argparse._StoreFalseAction,
            argparse._StoreConstAction,
            argparse._CountAction,
            argparse._HelpAction,
            argparse._VersionAction,
        ),
    )


def _close(word: str, choices: Sequence[str]) -> list[str]:
    return difflib.get_close_matches(word, choices, n=3, cutoff=0.6)


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def check_words(parser: argparse.ArgumentParser, words: Sequence[str]) -> None:
    """Exit through ``parser.error`` (status 2, with the verb's usage) at the first unknown long
    flag or misspelt verb that has a close match; everything else is left to argparse."""
    current = parser
    options = _options(parser)
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            return  # the rest are positional by the user's own word
        if word.startswith("--"):
            name, has_value = word.split("=", 1)[0], "=" in word
            action = options.get(name)
            if action is None:
                # argparse accepts an unambiguous prefix (--conc for --concurrency)
                prefixed = [flag for flag in options if flag.startswith(name)]
                if len(prefixed) == 1:
                    action = options[prefixed[0]]
            if action is None:
                longs = [
                    flag
                    for flag in options
                    if flag.startswith("--") and flag not in ("--help", "--version")
                ]
                near = _close(name, longs)
                hint = f"; did you mean {' or '.join(near)}?" if near else ""
                current.error(f"unrecognized argument: {name}{hint}")
            if _takes_one_value(action) and not has_value:
                index += 1  # its value, whatever it looks like
            continue
        if word.startswith("-") and word != "-" and not _is_number(word):
            continue  # short flags are few; argparse reports those itself
        sub = _subparsers(current)
        if sub is None:
            continue  # a positional argument
        chosen = sub.choices.get(word)
        if chosen is None:
            near = _close(word, list(sub.choices))
            if near:
                what = "action" if current is not parser else "verb"
                current.error(
                    f"unknown {what} {word!r}; did you mean {' or '.join(map(repr, near))}?"
                )
            return  # argparse lists the choices
        current = chosen
        options = {**options, **_options(chosen)}
