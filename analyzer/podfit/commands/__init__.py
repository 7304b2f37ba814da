"""The CLI's subcommands beyond check/rules/explain/docs, one module each (``command`` is its click
command; ``podfit.cli.LAZY_COMMANDS`` names them so each is imported only when it runs), and
``_common``: the option vocabulary and input handling they share with ``check``."""
