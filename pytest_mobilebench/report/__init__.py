"""Reports: evidence files, the run summary, junit properties and pytest-html columns."""
