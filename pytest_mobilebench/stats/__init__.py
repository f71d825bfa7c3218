"""Pure statistics over repeated measurements (no files, processes or network; builtins in, builtins out).

- :mod:`.trials`: repeated trials of one model (``--mb-trials K``): per task pass@1, pass@k (Chen et al. 2021)
  and pass^k (Yao et al. 2024); per model a hierarchical bootstrap interval beside Wilson's, the share of
  variance between tasks and between trials, the tasks whose trials disagree.
- :mod:`.paired`: two models' trial runs on shared tasks: a paired (hierarchical) bootstrap of the difference.
- :mod:`.irt`: one- and two-parameter item-response models over several models' outcomes (instance
  difficulty and discrimination, model ability with intervals); needs the ``stats`` extra (scipy).

docs/statistics.md explains the methods and their sources.
"""
