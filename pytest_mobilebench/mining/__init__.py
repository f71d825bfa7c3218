"""Instances from a repository's history: mine, validate, lint (issue-resolution suite; ``docs/mining.md``).

* :mod:`.gitsource`: the repository (a path, a mirror, a bundle or a clone URL) and the git reads;
* :mod:`.scan`: the static filters and their rejection reasons, framework inference;
* :mod:`.split`: test patch / fix patch, the test plan and the environment at the base commit;
* :mod:`.records`: candidate records, the manifest YAML and the JSONL dialects written;
* :mod:`.validate`: the harness's validation mode run on the candidates (a pytest subprocess);
* :mod:`.report`: the report (JSON and the terminal table);
* :mod:`.pipeline`: ``mine`` end to end; :mod:`.check`: ``dataset check``, the linter.
"""

from __future__ import annotations
