"""The one exception a user error raises: printed as one line, without a traceback.

Errors about the command line name the option the way the user typed it: the cli's
``--channels``, or make's ``CHANNELS=`` when the Makefile runs the cli (it passes
``--via-make``; main() sets the style before anything can fail).
"""

from typing import Optional, Sequence

# The cli's options and the make variables that carry them.
MAKE_VARIABLES = {"--target": "TARGET", "--channels": "CHANNELS", "--dest": "DEST",
                  "--hal": "HAL", "--config": "CONFIG"}
# Options whose value is a list: an error shows its first values, each shortened.
LISTS = ("--channels",)
_VIA_MAKE = [False]
# An error line names at most this many values of a list, this much of one of them,
# and this much of a setting that is one value (a folder's path).
SHOWN_VALUES = 4
SHOWN_CHARS = 40
SHOWN_SETTING_CHARS = 200


def spell_options_for_make(via_make: bool) -> None:
    _VIA_MAKE[0] = via_make


def option(name: str) -> str:
    """How a message names an option: --target, or TARGET= under make."""
    return f"{MAKE_VARIABLES[name]}=" if _VIA_MAKE[0] and name in MAKE_VARIABLES else name


def shortened(text: str, limit: int = SHOWN_CHARS) -> str:
    """One value as an error line shows it: at most ``limit`` characters of it."""
    return text if len(text) <= limit else f"{text[:limit - 3]}... ({len(text)} characters)"


def some_of(values: Sequence, what: str = "values") -> str:
    """The first SHOWN_VALUES of a list, and how many there are in all."""
    shown = " ".join(shortened(str(v)) for v in values[:SHOWN_VALUES])
    return shown if len(values) <= SHOWN_VALUES else f"{shown} ... ({len(values)} {what})"


class ConfigError(Exception):
    """A user error in targets.yaml or on the command line: where, the key, what is wrong."""

    def __init__(self, where: str, key: str, message: str):
        text = f"{where}: {key}: {message}" if key else f"{where}: {message}"
        # One line whatever the input held: control characters are shown escaped.
        super().__init__("".join(c if c.isprintable() else repr(c)[1:-1] for c in text))


def option_error(name: str, value: Optional[str], message: str,
                 item: Optional[str] = None) -> ConfigError:
    """An error about option ``name`` given ``value`` (None: not given), at ``item`` of
    it when the fault is one part: ``--channels: x: ...`` for the cli, ``CHANNELS="48 x":
    x: ...`` under make (which shows the whole setting, shortened)."""
    if not _VIA_MAKE[0] or name not in MAKE_VARIABLES:
        key = shortened(item) if item is not None else shortened(value or "", SHOWN_SETTING_CHARS)
        return ConfigError(name, key, message)
    whole = item is None or item == (value or "").strip()
    return ConfigError(setting(name, value or ""), "" if whole else shortened(item), message)


def setting(name: str, value: str) -> str:
    """An option and its value as the user typed them, shortened: CHANNELS="48 96" under
    make, --channels "48 96" otherwise."""
    words = value.split()
    shown = some_of(words) if len(words) > 1 or name in LISTS else \
        shortened(value, SHOWN_SETTING_CHARS)
    quoted = f'"{shown}"' if len(words) > 1 else shown
    return f"{option(name)}{quoted}" if _VIA_MAKE[0] else f"{name} {quoted}"
