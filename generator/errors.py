"""The one exception a user error raises: printed as one line, without a traceback."""


class ConfigError(Exception):
    """A user error in targets.yaml or on the command line: where, the key, what is wrong."""

    def __init__(self, where: str, key: str, message: str):
        text = f"{where}: {key}: {message}" if key else f"{where}: {message}"
        # One line whatever the input held: control characters are shown escaped.
        super().__init__("".join(c if c.isprintable() else repr(c)[1:-1] for c in text))
