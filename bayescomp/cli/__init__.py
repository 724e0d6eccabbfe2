"""The ``bayescomp`` command: argument parsing and dispatch (``main``), console output
(``console``), checked input and atomic output files (``io``), CSV/JSON export
(``export``) and the ``rank`` and ``cache`` subcommands."""
