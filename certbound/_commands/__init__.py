"""Sub-commands of the ``certbound`` CLI, one module each.

Each module defines ``NAME`` (the sub-command), ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int`` (the exit code).
``certbound.cli`` discovers them; nothing here is public API.
"""

__all__: list[str] = []  # nothing public: certbound.cli imports the modules by name
