"""The one exception a user error raises: printed as one line, without a traceback."""


class ConfigError(Exception):
    """A user error in targets.yaml or on the command line: where, the key, what is wrong."""

    def __init__(self, where: str, key: str, message: str):
        super().__init__(f"{where}: {key}: {message}" if key else f"{where}: {message}")
