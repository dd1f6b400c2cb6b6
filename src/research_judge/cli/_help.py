"""Help text formatting shared by the verbs."""

from __future__ import annotations

import argparse


class DefaultsFormatter(argparse.RawDescriptionHelpFormatter):
    """Shows a flag's default only when there is one worth reading (not None, False or [])."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        # Identity checks: 0 and 0.0 are real defaults even though they equal False.
        nothing = (
            default is None or default is False or default == [] or default is argparse.SUPPRESS
        )
        if "%(default)" in text or nothing:
            return text
        if action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            return f"{text} (default: %(default)s)"
        return text
