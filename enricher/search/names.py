"""Alert and service names: splitting identifiers into words, and keys for exact filtering."""

from __future__ import annotations

import re

_IDENTIFIER_SEPARATORS = re.compile(r"[\W_]+")
_IDENTIFIER_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]*[a-z0-9]+|[A-Z]+")
#: Deployment noise in service labels: `payments-api-prod` is the `payments` service.
_ENV_TOKENS = frozenset(
    {
        "prod",
        "production",
        "prd",
        "staging",
        "stage",
        "stg",
        "dev",
        "development",
        "test",
        "qa",
        "uat",
        "canary",
        "live",
        "primary",
        "replica",
        "main",
        "blue",
        "green",
        "eu",
        "us",
        "ap",
        "east",
        "west",
        "north",
        "south",
        "central",
        "1",
        "2",
        "3",
    }
)


def split_identifier(name: str) -> str:
    """Alert name to words: "TLSCertificateExpiringSoon" -> "TLS Certificate Expiring Soon".

    Splits CamelCase, snake_case and kebab-case; a run of capitals stays one
    word (an acronym), and digits stay with the word they follow ("K8sNodeDown"
    -> "K8s Node Down"). Non-ASCII words are kept whole.
    """
    words: list[str] = []
    for token in _IDENTIFIER_SEPARATORS.split(name):
        if token.isascii():
            words.extend(_IDENTIFIER_WORD.findall(token))
        elif token:
            words.append(token)
    return " ".join(words)


def name_key(value: str) -> str:
    """Case and separators ignored: `checkout_api`, `Checkout-API` and `checkoutapi` are one key."""
    return "".join(ch for ch in value.lower() if ch.isalnum())


#: A word some teams end a runbook's or a rule's name with, which names nothing.
_ALERT_SUFFIX = "alert"


def alert_key_forms(key: str) -> tuple[str, ...]:
    """`key` and the same name with or without a trailing "Alert": a runbook file named
    `SouthboundStaleAlert.md` is the runbook of the alert `SouthboundStale`, and a rule
    named `QuotaBytesAlert` is the alert of `QuotaBytes.md`."""
    if not key:
        return ()
    bare = key.removesuffix(_ALERT_SUFFIX)
    return (key, bare) if bare != key and bare else (key, key + _ALERT_SUFFIX)


def severity_bare(name: str, severity: str | None) -> str:
    """`name` without the alert's own severity as its first or last separate word, "" when
    it has none: `warning_frontend_p99_latency` (severity `warning`) is the alert of
    `frontend: p99_latency`, as Sourcegraph's generated alerts and teams that route by name
    write it. A severity run into the name (`etcdSignerCAExpirationCritical`) stays: upstream
    that is a rule of its own, often with its own runbook."""
    level = (severity or "").strip()
    if not level:
        return ""
    sep = r"[\s_:.-]+"
    found = re.fullmatch(
        rf"{re.escape(level)}{sep}(?P<a>.+)|(?P<b>.+?){sep}{re.escape(level)}",
        name.strip(),
        flags=re.IGNORECASE,
    )
    return (found.group("a") or found.group("b")) if found else ""


def service_keys(label: str) -> tuple[str, ...]:
    """Keys a service label may stand for, most specific first.

    Labels in the wild rarely equal runbook folder names (`payments-api-prod` vs `payments`).
    Environment and region tokens are dropped, then every run of up to three consecutive
    remaining tokens becomes a candidate key, so `payments-api-prod` offers `paymentsapi`,
    `payments` and `api`.
    """
    tokens = [t for t in re.split(r"[^a-z0-9]+", label.lower()) if t]
    if not tokens:
        return ()
    keys: list[str] = [name_key(label)]
    core = [t for t in tokens if t not in _ENV_TOKENS and not t.isdigit()] or tokens
    for size in range(min(3, len(core)), 0, -1):
        for start in range(len(core) - size + 1):
            key = "".join(core[start : start + size])
            if len(key) >= 2 and key not in keys:
                keys.append(key)
    return tuple(keys)
