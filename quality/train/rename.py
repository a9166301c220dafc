"""A team's own name and words for a project's alert: the renamed and reworded cases.

Deterministic rules, the same for every corpus, never a per-alert choice: the name is cut
into words, the project's prefix (a first word that starts at least three of the corpus's
alert names) is dropped, words with a team synonym are swapped for it, the other words are
dropped except one kept in half the names, the words are sometimes rotated, and a team's
name is put in front (``TempoCompactionsFailing`` -> ``IdentityMergesErroring``). Rewording
swaps words of the summary and description the same way and drops the exporters'
``VALUE = / LABELS =`` tails. Pure.

Why words are dropped: a team's own name shares few words with the upstream one. In the
released slices' renamed cases, 0.07 (prom) and 0.21 (OpenShift) of the runbook name's
words are in the alert's name, and golden's 0.03. Renames that kept every word but the
prefix shared 0.64, which taught a refit of the decision that names decide renamed alerts
too (docs/RETRIEVAL.md, "Renames as teams write them").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from scripts.corpus_gen.payloads import digest

__all__ = [
    "TEAMS",
    "name_words",
    "project_prefixes",
    "renamed",
    "reworded",
    "reworded_description",
    "reworded_summary",
    "team_of",
]

TEAMS = (
    "Payments",
    "Checkout",
    "Ledger",
    "Orders",
    "Catalog",
    "Billing",
    "Identity",
    "Shipping",
    "Analytics",
    "Inventory",
    "Booking",
    "Storefront",
)

#: Alert-name words and a team's word for the same thing.
NAME_SYNONYMS: dict[str, str] = {
    "down": "Unavailable",
    "unavailable": "Down",
    "high": "Elevated",
    "elevated": "High",
    "low": "Depleted",
    "failing": "Erroring",
    "failed": "Broken",
    "failure": "Error",
    "failures": "Errors",
    "error": "Failure",
    "errors": "Failures",
    "unhealthy": "Degraded",
    "slow": "Sluggish",
    "lag": "Delay",
    "lagging": "Behind",
    "latency": "ResponseTime",
    "full": "Exhausted",
    "missing": "Absent",
    "absent": "Missing",
    "critical": "Severe",
    "offline": "Unreachable",
    "unreachable": "Offline",
    "restart": "Reboot",
    "restarts": "Reboots",
    "stuck": "Hung",
    "exceeded": "Breached",
    "expiring": "NearExpiry",
    "expired": "Lapsed",
    "pending": "Queued",
    "disk": "Volume",
    "memory": "Ram",
    "cpu": "Processor",
    "connections": "Sessions",
    "connection": "Session",
    "requests": "Calls",
    "request": "Call",
    "replication": "Sync",
    "usage": "Consumption",
    "space": "Capacity",
    "many": "Excessive",
    "too": "",
    "crash": "Dies",
    "crashlooping": "KeepsDying",
    "destroyed": "Deleted",
    "deleted": "Removed",
    "timeout": "Deadline",
    "timeouts": "Deadlines",
    "duration": "Time",
    "queue": "Backlog",
    "pod": "Workload",
    "pods": "Workloads",
    "node": "Host",
    "nodes": "Hosts",
    "host": "Machine",
    "hosts": "Machines",
    "instance": "Replica",
    "instances": "Replicas",
    "replica": "Copy",
    "replicas": "Copies",
    "container": "Box",
    "containers": "Boxes",
    "job": "Task",
    "jobs": "Tasks",
    "cluster": "Fleet",
    "certificate": "Cert",
    "certificates": "Certs",
    "cert": "Certificate",
    "backup": "Snapshot",
    "backups": "Snapshots",
    "query": "Lookup",
    "queries": "Lookups",
    "read": "Fetch",
    "reads": "Fetches",
    "write": "Store",
    "writes": "Stores",
    "leader": "Primary",
    "database": "Db",
    "table": "Relation",
    "tables": "Relations",
    "service": "App",
    "api": "Endpoint",
    "http": "Web",
    "response": "Reply",
    "responses": "Replies",
    "compaction": "Merge",
    "compactions": "Merges",
    "ingestion": "Intake",
    "scheduler": "Planner",
    "worker": "Runner",
    "workers": "Runners",
    "consumer": "Subscriber",
    "consumers": "Subscribers",
    "producer": "Publisher",
    "message": "Event",
    "messages": "Events",
    "topic": "Stream",
    "partition": "Shard",
    "partitions": "Shards",
    "cache": "Buffer",
    "size": "Footprint",
    "count": "Tally",
    "rate": "Pace",
    "ratio": "Share",
    "percent": "Share",
    "temperature": "Heat",
    "network": "Net",
    "interface": "Nic",
    "packets": "Frames",
    "dropped": "Lost",
    "dns": "Resolver",
    "ssl": "Tls",
    "tls": "Ssl",
    "storage": "Disk",
    "volume": "Drive",
    "files": "Documents",
    "file": "Document",
    "increase": "Growth",
    "increasing": "Growing",
    "ready": "Serving",
    "health": "Status",
    "status": "State",
    "limit": "Cap",
    "threshold": "Cap",
    "exhausted": "Drained",
    "saturated": "Maxed",
    "overloaded": "Swamped",
}
#: What a team calls an alert whose name kept no word: a name that says nothing.
BLANK_NAMES = ("Alarm", "Problem", "Check", "Issue", "Incident")
#: Words of summaries and descriptions and a team's plainer word.
TEXT_SYNONYMS: dict[str, str] = {
    "high": "elevated",
    "errors": "failures",
    "error": "failure",
    "failed": "broke",
    "down": "unreachable",
    "instance": "node",
    "instances": "nodes",
    "requests": "calls",
    "request": "call",
    "latency": "response time",
    "disk": "volume",
    "memory": "RAM",
    "more than": "over",
    "less than": "under",
    "exceeded": "went past",
    "detected": "seen",
    "unable": "not able",
    "replica": "copy",
    "replicas": "copies",
    "connection": "session",
    "connections": "sessions",
    "usage": "use",
    "available": "free",
    "running": "up",
    "restarted": "rebooted",
    "number": "count",
    "increase": "rise",
    "increasing": "rising",
    "slow": "sluggish",
    "delayed": "behind",
    "pending": "queued",
    "failing": "breaking",
    "unhealthy": "degraded",
    "missing": "absent",
    "certificate": "cert",
    "server": "host",
    "query": "lookup",
    "queries": "lookups",
    "critical": "severe",
    "cluster": "deployment",
    "too many": "an excess of",
    "is down": "has stopped answering",
    "has": "shows",
    "cannot": "can not",
    "exceeds": "is past",
    "reached": "hit",
    "storage": "disk space",
    "information": "data",
    "latest": "newest",
    "accesses": "reaches",
    "access": "reach",
    "according to": "based on",
    "within": "inside",
    "leader": "primary",
    "changed": "moved",
    "current": "present",
    "service": "app",
    "services": "apps",
    "providing": "offering",
    "triggered": "raised",
    "alert": "page",
    "node": "host",
    "nodes": "hosts",
    "process": "daemon",
    "heartbeat": "keepalive",
    "percentage": "share",
    "ratio": "share",
    "total": "overall",
    "average": "mean",
    "duration": "time taken",
    "frequently": "often",
    "abnormal": "unusual",
    "normal": "healthy",
    "recover": "restore",
    "check": "inspect",
    "large": "big",
    "small": "little",
    "increased": "grew",
    "decreased": "dropped",
    "reports": "says",
    "reported": "said",
    "received": "got",
    "sending": "delivering",
    "send": "deliver",
    "receive": "get",
    "lost": "dropped",
    "stopped": "halted",
    "started": "began",
    "waiting": "blocked",
    "busy": "saturated",
    "used": "consumed",
    "too high": "above its limit",
    "too low": "below its floor",
    "jobs": "tasks",
    "job": "task",
    "rate": "pace",
    "count": "tally",
    "table": "relation",
    "tables": "relations",
    "database": "DB",
    "file": "document",
    "files": "documents",
    "threshold": "limit",
}
_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_VALUE_TAIL = re.compile(r"\s*VALUE\s*=.*", re.DOTALL)
_CLAUSE = re.compile(r"\s*[(,;:]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_TEXT_WORDS = re.compile(
    r"\b(" + "|".join(re.escape(k) for k in sorted(TEXT_SYNONYMS, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)


def name_words(name: str) -> list[str]:
    """The words of an alert name, in any case style (CamelCase, snake_case, spaced)."""
    return _SPLIT.findall(name)


def project_prefixes(names: Sequence[str], least: int = 3) -> frozenset[str]:
    """Lower-cased first words that start at least `least` of the corpus's alert names."""
    firsts = Counter(words[0].lower() for words in map(name_words, names) if len(words) > 1)
    return frozenset(word for word, count in firsts.items() if count >= least)


def _title(word: str) -> str:
    return (
        word if word[:1].isupper() and not word.isupper() else word[:1].upper() + word[1:].lower()
    )


def renamed(name: str, prefixes: frozenset[str], salt: str) -> str:
    """A team's own name for the alert `name` (salt: the corpus, so teams differ)."""
    words = name_words(name)
    if len(words) > 1 and words[0].lower() in prefixes:
        words = words[1:]
    pick = int(digest("rename", salt, name), 16)
    keep = int(digest("keep", salt, name), 16)
    spare = keep // 2 % len(words) if keep % 2 == 0 else -1
    swapped: list[str] = []
    for at, word in enumerate(words):
        synonym = NAME_SYNONYMS.get(word.lower())
        if synonym is None and at == spare:
            swapped.append(_title(word))
        elif synonym:
            swapped.append(synonym)
    swapped = swapped or [BLANK_NAMES[keep // 2 % len(BLANK_NAMES)]]
    if pick % 3 == 0 and len(swapped) > 2:
        swapped = swapped[1:] + swapped[:1]
    team = TEAMS[pick // 3 % len(TEAMS)]
    return team + "".join(swapped)


def team_of(name: str, salt: str) -> str:
    """The team whose name `renamed` puts in front of `name`."""
    return TEAMS[int(digest("rename", salt, name), 16) // 3 % len(TEAMS)]


def reworded(text: str) -> str:
    """The sentence in a team's words: synonyms swapped, exporter tails dropped."""
    plain = _VALUE_TAIL.sub("", text).strip()

    def swap(found: re.Match[str]) -> str:
        word = TEXT_SYNONYMS[found.group(0).lower()]
        return word[:1].upper() + word[1:] if found.group(0)[:1].isupper() else word

    return " ".join(_TEXT_WORDS.sub(swap, plain).split())


def reworded_summary(text: str) -> str:
    """A summary as a team shortens it: reworded, cut at its first bracket or comma."""
    head = _CLAUSE.split(reworded(text), maxsplit=1)[0].strip(" .")
    return head or reworded(text)


def reworded_description(text: str) -> str:
    """A description reworded, its first sentence moved to the end when it has several."""
    sentences = [s for s in _SENTENCE.split(reworded(text)) if s]
    return " ".join(sentences[1:] + sentences[:1])
