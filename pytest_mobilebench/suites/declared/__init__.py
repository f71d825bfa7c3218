"""The built-in suites' surfaces (:class:`pytest_mobilebench.suites.base.SuiteSurface`), one module per suite.

Each ``<name>.py`` here declares what the plugin needs at start-up (options, markers, columns, fixtures, the
``--dataset`` file patterns) and imports nothing heavier than :mod:`pytest_mobilebench.suites.base`; the
suite's implementation imports its declarations from here, so each fact is written once.
"""
