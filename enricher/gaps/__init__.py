"""The runbook-gap report: alerts that paged with no confident runbook match.

The processor records every no-match page it posts (`GapStore.record`);
`python -m enricher.gaps` lists them per (alert name, service), and an optional digest
goes to a Slack channel (enricher.gaps.digest). docs/FEEDBACK.md has an example.
"""
