"""Live agents: a model behind an OpenAI-compatible endpoint, driven by the harness in the item's own sandbox.

Modules (import them directly; this package imports nothing heavy):

- :mod:`.endpoint`: the one endpoint client (retries with backoff; :class:`~.endpoint.AgentInfraError`).
- :mod:`.shell`: the :class:`~.shell.Shell` a runtime implements, output bounding.
- :mod:`.limits`: run limits and the price table.
- :mod:`.prompt`: the prompt template file and its fields.
- :mod:`.tools`: tools declared once (schema and argument check from one typed function).
- :mod:`.loop`: the built-in shell agent (:func:`~.loop.run_shell_agent`).
- :mod:`.trajectory`: the JSONL trajectory, written line by line.
- :mod:`.options`: the shared ``--mb-agent-*`` and ``--mb-trials`` options.
"""
