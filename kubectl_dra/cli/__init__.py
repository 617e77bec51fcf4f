"""The ``kubectl dra`` command line: click commands and presenters (tables, JSON, YAML)."""
