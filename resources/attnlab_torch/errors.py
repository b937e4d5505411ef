"""The one exception the package raises for bad input: its message is one line, meant for the user."""


class LabError(Exception):
    pass
