"""The chaos proof of issue 4 (`python -m scripts.chaos`, described in __main__.py): the
process harness, the workload, the faults, what Slack received, and the report."""
