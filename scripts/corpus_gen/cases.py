"""Labelled alert cases for the synthetic corpus, in the golden format (quality/cases.py).

Built the way the real-corpus dev slice was (shared/data/prom-runbooks/README.md), with
these kinds:

- exact_name: the alert named like its runbook, annotations as the runbook's alert has them.
- paraphrase: the same alert under a team's own name (rewordings.RENAMED), which is no
  runbook's alert name; annotations unchanged.
- paraphrase_rewritten: renamed, and the annotations in other words (rewordings.REWORDED).
- pagerduty_title: renamed, delivered by PagerDuty; the incident title is Alertmanager's
  default subject, so the name and label values are all the search gets.
- near_miss: an alert the generator would write a runbook for, but for a combination past
  the first `count` runbooks, so the corpus has its siblings (same service or same kind)
  and not it: no runbook should match. A corpus that holds every combination the
  generator has (count above the number of combinations) gets none.
- noise: an alert from another domain (noise.py): no runbook should match.

An alert's facts (deployment, namespace, pod, thresholds) are the slots its runbook was
rendered with, recomputed from the same seeded generator, so labels, annotations and the
rule expression (rules.py) agree with the runbook text the way they do in a real setup.

Deterministic: each case draws from its own `random.Random` seeded by (seed, count, kind,
position); ids are hashes of the same; dev and test take turns within each kind in the order
of a hash of the id, so each kind is split in half; timestamps are a fixed base time plus
drawn offsets.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from scripts.corpus_gen.generate import KINDS, Runbook, _combos, _slots, runbooks
from scripts.corpus_gen.kinds import Kind
from scripts.corpus_gen.noise import NOISE, NOISE_SLOTS
from scripts.corpus_gen.payloads import alertmanager_body, digest, pagerduty_body
from scripts.corpus_gen.pools import SERVICES
from scripts.corpus_gen.rewordings import RENAMED, REWORDED
from scripts.corpus_gen.rules import EXPRESSIONS

POSITIVE_KINDS = ("exact_name", "paraphrase", "paraphrase_rewritten", "pagerduty_title")
CASE_KINDS = (*POSITIVE_KINDS, "near_miss", "noise")
SPLITS = ("dev", "test")
BASE_TIME = datetime(2026, 11, 20, tzinfo=UTC)
#: Alerts start within this long after BASE_TIME.
SPREAD = timedelta(days=7)

_KIND_BY_KEY = {kind.key: kind for kind in KINDS}
_COMPONENT_TYPE = {(s, c): ctype for s, components in SERVICES for c, ctype in components}
#: Exporter ports of the `instance` label, per component type without pods of its own.
_PORTS = {"postgres": 9187, "redis": 9121, "kafka": 9308, "elasticsearch": 9114,
          "platform": 9100}
#: Components too generic to name an alert on their own: `ApiKeepsFailing` names nothing.
_GENERIC = frozenset({"api", "db", "cache", "worker", "events", "cluster", "frontend", "portal",
                      "web", "edge", "search", "scheduler", "loader", "store", "fleet"})
_SEVERITIES = ("critical", "warning", "info")
_RECEIVERS = ("runbook-enricher", "runbook-bot", "default")
_GROUPINGS = (("alertname",), ("alertname",), ("alertname", "service"),
              ("alertname", "namespace"), ("namespace",))
_NOISE_TEAMS = ("it-helpdesk", "workplace", "people-ops", "finance-ops")


@dataclass(frozen=True)
class Target:
    """What an in-domain alert is about: a runbook of the corpus (`path`), or a combination
    the generator could have written a runbook for (`path` None)."""

    service: str
    component: str
    kind: Kind
    alert_name: str
    slots: dict[str, object]
    path: str | None

    def fill(self, template: str) -> str:
        return template.format(**self.slots)


def _target(seed: int, index: int, service: str, component: str, kind: Kind, name: str,
            path: str | None) -> Target:
    # The generator seeds runbook `index` this way and draws its slots first (generate.py).
    slots = _slots(random.Random(f"{seed}:{index}"), service, component)
    return Target(service, component, kind, name, slots, path)


def sizes(count: int) -> dict[str, int]:
    """Cases per kind for a corpus of `count`: the full numbers at 1000 runbooks and above,
    fewer (down to a floor that still says something) for small corpora."""
    scale = min(count, 1000) / 1000

    def scaled(full: int, floor: int) -> int:
        return max(floor, round(full * scale))

    return {
        "exact_name": min(120, max(1, count // 8)),
        "paraphrase": scaled(80, 8),
        "paraphrase_rewritten": scaled(40, 4),
        "pagerduty_title": scaled(10, 2),
        "near_miss": scaled(60, 6),
        "noise": scaled(20, 6),
    }


def _pascal(name: str) -> str:
    return "".join(word.capitalize() for word in name.split("-"))


def _renamed(target: Target, rng: random.Random, taken: frozenset[str]) -> str:
    """A team's own name for the alert: subject plus an ending that says the same in other
    words. Never a name the generator gives any runbook (`taken`, lower-cased)."""
    subjects = [_pascal(target.service), _pascal(f"{target.service}-{target.component}")]
    if target.component not in _GENERIC:
        subjects.append(_pascal(target.component))
    subject = rng.choice(subjects)
    for ending in rng.sample(RENAMED[target.kind.key], len(RENAMED[target.kind.key])):
        if (subject + ending).lower() not in taken:
            return subject + ending
    raise ValueError(f"every renaming of {target.alert_name} is some runbook's alert name")


def _service_label(target: Target, rng: random.Random) -> str:
    """Service labels rarely equal the runbook folder: sometimes they do, sometimes they
    are the deployment name, sometimes the service with deployment noise."""
    roll = rng.random()
    if roll < 0.4:
        return target.service
    if roll < 0.65:
        return f"{target.service}-{target.component}"
    words = target.service.split("-")
    return f"{target.service}-{rng.choice([s for s in ('api', 'prod', 'svc') if s not in words])}"


def _members(target: Target, name: str, rng: random.Random) -> list[dict[str, str]]:
    """Label sets of the firing alerts: workloads alert per pod (sometimes several pods at
    once), databases, brokers and nodes per exporter instance."""
    slots = target.slots
    labels = {
        "alertname": name,
        "severity": rng.choices(_SEVERITIES, weights=(4, 5, 1))[0],
        "service": _service_label(target, rng),
        "namespace": str(slots["ns"]),
        "team": str(slots["team"]),
        "cluster": str(slots["cluster"]),
    }
    ctype = _COMPONENT_TYPE[(target.service, target.component)]
    if ctype not in _PORTS:
        replica_set = str(slots["pod"]).rsplit("-", 1)[0]
        extra = rng.choice((0, 0, 0, 1, 2))
        pods = [str(slots["pod"])] + [
            f"{replica_set}-{''.join(rng.choices('bcdfghjklmnpqrstvwxz2456789', k=5))}"
            for _ in range(extra)
        ]
        return [{**labels, "pod": pod} for pod in pods]
    host = slots["node"] if ctype == "platform" else f"{slots['db']}-{rng.randint(0, 2)}"
    return [{**labels, "instance": f"{host}:{_PORTS[ctype]}"}]


def _start(rng: random.Random) -> datetime:
    return BASE_TIME + timedelta(milliseconds=rng.randrange(int(SPREAD.total_seconds() * 1000)))


def _alertmanager(members: Sequence[dict[str, str]], summary: str, description: str,
                  expr: str, rng: random.Random) -> dict[str, Any]:
    annotations = {"summary": summary, "description": description}
    return alertmanager_body(members, annotations, expr, _start(rng), rng.choice(_GROUPINGS),
                             rng.choice(_RECEIVERS))


def _in_domain(kind: str, case_id: str, target: Target, rng: random.Random,
               taken: frozenset[str]) -> dict[str, Any]:
    """The payload of every kind but noise."""
    renamed = kind in ("paraphrase", "paraphrase_rewritten", "pagerduty_title")
    name = _renamed(target, rng, taken) if renamed else target.alert_name
    members = _members(target, name, rng)
    if kind == "pagerduty_title":
        occurred = _start(rng) + timedelta(minutes=1)
        return pagerduty_body(case_id, members[0], members[0]["service"], occurred)
    texts = REWORDED[target.kind.key] if kind == "paraphrase_rewritten" else (
        target.kind.summary, target.kind.description)
    return _alertmanager(members, target.fill(texts[0]), target.fill(texts[1]),
                         target.fill(EXPRESSIONS[target.kind.key]), rng)


def _noise(position: int, order: Sequence[int], rng: random.Random) -> dict[str, Any]:
    alert = NOISE[order[position % len(order)]]
    slots = {slot: rng.choice(values) for slot, values in NOISE_SLOTS.items()}
    labels = {
        "alertname": alert.name,
        "severity": rng.choice(("warning", "info")),
        "service": alert.service,
        "instance": alert.instance.format(**slots),
        "team": rng.choice(_NOISE_TEAMS),
    }
    return _alertmanager([labels], alert.summary.format(**slots),
                         alert.description.format(**slots), alert.expr.format(**slots), rng)


def _near_misses(books: Sequence[Runbook], seed: int, wanted: int,
                 rng: random.Random) -> list[Target]:
    """Up to `wanted` combinations past the corpus whose service or kind the corpus has,
    those sharing both first. Regional variants are left out: their base runbook may be in
    the corpus, and for an alert of one region that runbook is a fair answer."""
    combos = _combos(seed)
    services, kinds = {b.service for b in books}, {b.kind for b in books}

    def kin(index: int) -> int:
        service, _, kind, _ = combos[index]
        return (service in services) + (kind.key in kinds)

    pool = [j for j in range(len(books), len(combos))
            if combos[j][3].endswith(combos[j][2].key) and kin(j) > 0]
    rng.shuffle(pool)
    pool.sort(key=kin, reverse=True)  # stable: closest kin first, in shuffled order
    return [_target(seed, j, *combos[j], None) for j in pool[:wanted]]


def cases_for(books: Sequence[Runbook], seed: int) -> list[dict[str, Any]]:
    """The cases for the corpus `books`, which must be `runbooks(len(books), seed)`."""
    count = len(books)
    if count < 1:
        raise ValueError("cases need a corpus of at least one runbook")
    wanted = sizes(count)
    pick = random.Random(f"cases:{seed}:{count}")
    # Positives spread over distinct runbooks while there are enough of them.
    picks = itertools.cycle(pick.sample(range(count), count))
    near = _near_misses(books, seed, wanted["near_miss"], pick)
    wanted["near_miss"] = len(near)
    noise_order = pick.sample(range(len(NOISE)), len(NOISE))
    taken = frozenset({name.lower() for *_, name in _combos(seed)}
                      | {kind.key.lower() for kind in KINDS})

    def target(kind: str, position: int) -> Target:
        if kind == "near_miss":
            return near[position]
        index = next(picks)
        book = books[index]
        return _target(seed, index, book.service, book.component, _KIND_BY_KEY[book.kind],
                       book.alert_name, book.path)

    out: list[dict[str, Any]] = []
    for kind in CASE_KINDS:
        built: list[tuple[str, dict[str, Any], str | None]] = []
        for position in range(wanted[kind]):
            case_id = f"{kind}-{digest('case', seed, count, kind, position)[:10]}"
            rng = random.Random(f"cases:{seed}:{count}:{kind}:{position}")
            if kind == "noise":
                built.append((case_id, _noise(position, noise_order, rng), None))
            else:
                about = target(kind, position)
                built.append((case_id, _in_domain(kind, case_id, about, rng, taken), about.path))
        # Dev and test alternate in the order of a hash of the id: half each within a kind.
        ranks = {case_id: rank for rank, case_id in
                 enumerate(sorted((b[0] for b in built), key=lambda i: digest("split", i)))}
        out += [{"id": case_id, "kind": kind, "split": SPLITS[ranks[case_id] % len(SPLITS)],
                 "payload": payload, "expected_doc": expected}
                for case_id, payload, expected in built]
    return out


def cases(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """The cases for the corpus `runbooks(count, seed)`."""
    return cases_for(runbooks(count, seed), seed)


def save(path: Path, items: Sequence[dict[str, Any]]) -> None:
    """One JSON object per line, as quality.eval reads them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items),
                    encoding="utf-8")


def write_cases(path: Path, count: int, seed: int = 7) -> list[dict[str, Any]]:
    """Write the cases for the corpus `runbooks(count, seed)` to `path` and return them."""
    items = cases(count, seed)
    save(path, items)
    return items
