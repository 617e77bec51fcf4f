"""Process-wide settings of the file loader, made by entry points (the library never makes
them), kept apart from the parsers so that making them loads none."""

from __future__ import annotations

#: whether big YAML texts may go to rapidyaml (see :mod:`.fastyaml`, which mutes file
#: descriptor 2 while rapidyaml runs, so that its own error printing does not reach the user;
#: the event builder reports every error instead)
native_yaml_parser = False


def allow_native_yaml_parser() -> None:
    """Let big YAML texts go to rapidyaml in this process."""
    global native_yaml_parser
    native_yaml_parser = True
