"""PagerDuty incident notes: the match written where on-call reads the incident.

`content` renders a search result as a note's plain text (pure); `client` adds it through
PagerDuty's REST API and finds it again. When a note is owed and sent exactly once is the
pipeline's part (enricher.pipeline.notes), through the same ledger record as the page.
"""
