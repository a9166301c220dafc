"""On-call feedback: clicks on a page's buttons become votes, votes become ranking evidence
(enricher.search.feedback) and golden cases (`python -m enricher.feedback export`).

    Slack click ─> /slack/interactions ─> intake (verify, parse) ─> store (Redis, at once)
                                                                └─> updater (chat.update, later)
    a page posted ─> store.remember_page (its alert, for the click and the export)
    a page searched ─> store.tallies(alert name) ─> Searcher.search(feedback=...)

docs/FEEDBACK.md describes the Slack app settings and what the buttons do.
"""
