"""Who may post an Alertmanager-shaped body: bearer tokens and basic auth."""

from __future__ import annotations

import base64
import hmac
from collections.abc import Mapping, Sequence

from enricher.errors import Forbidden, Unauthorized


def check_alertmanager_auth(
    authorization_header: str | None,
    *,
    bearer_tokens: Sequence[str],
    basic_users: Mapping[str, str],
) -> None:
    """Accept `Bearer <token>` or `Basic base64(user:pass)` matching the configuration.

    401 when the request carries no credentials we can check: no header, an empty one, or a
    scheme other than Bearer/Basic. 403 when it carries credentials that don't check out,
    including Basic credentials that are not base64 of `user:pass`. Every configured
    credential is compared (no early exit) with `hmac.compare_digest`; empty configured
    tokens and passwords never match, since anyone could present them.
    """
    if isinstance(bearer_tokens, str):
        raise TypeError("bearer_tokens must be a sequence of tokens, not one string")
    scheme, _, credentials = (authorization_header or "").strip().partition(" ")
    scheme, credentials = scheme.lower(), credentials.strip()
    if not scheme:
        raise Unauthorized("missing Authorization header")
    if scheme not in ("bearer", "basic"):
        raise Unauthorized("unsupported Authorization scheme; use Bearer or Basic")
    if not credentials:
        raise Unauthorized(f"empty {scheme.capitalize()} credentials")

    if scheme == "bearer":
        presented = credentials.encode()
        ok = False
        for token in bearer_tokens:
            ok |= hmac.compare_digest(presented, token.encode()) and bool(token)
        if not ok:
            raise Forbidden("invalid bearer token")
        return

    try:
        decoded = base64.b64decode(credentials, validate=True)
    except ValueError:  # binascii.Error, or non-ASCII text
        raise Forbidden("malformed Basic credentials") from None
    user, colon, password = decoded.partition(b":")
    if not colon:
        raise Forbidden("malformed Basic credentials")
    ok = False
    for name, secret in basic_users.items():
        same_user = hmac.compare_digest(user, name.encode())
        same_password = hmac.compare_digest(password, secret.encode())
        ok |= same_user and same_password and bool(secret)
    if not ok:
        raise Forbidden("invalid username or password")


__all__ = ["check_alertmanager_auth"]
