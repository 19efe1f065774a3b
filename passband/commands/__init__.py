"""Subcommands of the ``passband`` console command (see ``passband.cli``)."""
