"""What can go wrong talking to Confluence, written down once.

    ConfluenceError                the site could not be read; the message says what to do
    ├── ConfluenceAuthError        401/403: the token is wrong, expired or lacks permission
    └── ConfluenceUnavailable      timeouts, 5xx and 429 past the retries, or a bad answer
"""

from __future__ import annotations


class ConfluenceError(Exception):
    """The Confluence source failed this run: its pages stay indexed as they were."""


class ConfluenceAuthError(ConfluenceError):
    pass


class ConfluenceUnavailable(ConfluenceError):
    pass


__all__ = ["ConfluenceAuthError", "ConfluenceError", "ConfluenceUnavailable"]
