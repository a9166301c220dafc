"""The corpus generator: the (service, component, kind) combinations in seeded order, the
slots each runbook fills its templates with, and the markdown it renders."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from scripts.corpus_gen.infra_kinds import INFRA_KINDS
from scripts.corpus_gen.kinds import WORKLOAD_KINDS, Kind
from scripts.corpus_gen.pools import (
    ACRONYMS,
    BACKGROUND,
    CAUSES,
    EFFECTS,
    ESCALATION,
    FIXES,
    NOTES,
    SERVICES,
    TAGS,
    TEAMS,
    VERIFY,
)

#: Bump when the generated text changes, so cached benchmark indexes are rebuilt.
GENERATOR_VERSION = 1
MIN_WORDS = 300
MAX_WORDS = 1000

#: The order is part of the corpus: it decides which runbook each seed and index get.
KINDS: tuple[Kind, ...] = WORKLOAD_KINDS + INFRA_KINDS


@dataclass(frozen=True)
class Runbook:
    """One generated runbook and what an alert for it would say."""

    path: str
    service: str
    component: str
    kind: str
    alert_name: str
    alert_names: tuple[str, ...]
    title: str
    summary: str
    description: str
    text: str

    @property
    def words(self) -> int:
        return len(self.text.split())


def _display(name: str) -> str:
    return " ".join(ACRONYMS.get(w, w) for w in name.split("-"))


def _camel(name: str) -> str:
    return "".join(ACRONYMS.get(w, w.capitalize()) for w in name.split("-"))


def _combos(seed: int) -> list[tuple[str, str, Kind, str]]:
    """Every (service, component, kind, alert name) the generator can write, in seeded order."""
    combos: list[tuple[str, str, Kind, str]] = []
    for service, components in SERVICES:
        for component, ctype in components:
            for kind in KINDS:
                if ctype in kind.types:
                    name = _camel(f"{service}-{component}") + kind.key
                    combos.append((service, component, kind, name))
    random.Random(seed).shuffle(combos)
    # Beyond the natural combinations, regional variants (runbooks per region are common).
    # New regions go last, so every shorter corpus stays the same prefix (and its cached
    # index valid): the first three give 6,204 runbooks, all nine about 15,500 (100k chunks).
    regions = ("EU", "US", "APAC", "LATAM", "MEA", "ANZ", "JP", "IN", "CN")
    extra = [(s, c, k, f"{name}{r}") for r in regions for s, c, k, name in combos]
    return combos + extra


def _slots(rng: random.Random, service: str, component: str) -> dict[str, object]:
    deploy = f"{service}-{component}"
    replicas = rng.choice((3, 4, 6, 8, 12))
    mem = rng.choice((256, 512, 1024, 2048))
    others = [s for s, _ in SERVICES if s != service]
    return {
        "svc": service, "deploy": deploy, "ns": service, "Name": _display(deploy)[:1].upper()
        + _display(deploy)[1:],
        "team": rng.choice(TEAMS), "chan": f"#{service}-oncall",
        "cluster": rng.choice(("prod-eu-1", "prod-us-1", "prod-eu-2")),
        "dash": f"https://grafana.acme.example/d/{service}/{deploy}",
        "prom": "http://prometheus.monitoring:9090", "es": f"http://{deploy}.{service}:9200",
        "host": f"{service}.acme.example", "dep": rng.choice(others),
        "pod": f"{deploy}-{rng.randrange(16**8):08x}-{rng.randrange(36**5):05x}",
        "node": f"ip-10-{rng.randrange(256)}-{rng.randrange(256)}-{rng.randrange(256)}",
        "db": deploy, "replica": f"{deploy}-replica-{rng.randint(1, 3)}",
        "broker": f"{deploy}-0.{deploy}:9092", "topic": f"{service}.events.v{rng.randint(1, 3)}",
        "group": f"{service}-{rng.choice(('consumer', 'projector', 'indexer'))}",
        "queue": f"{service}.{rng.choice(('jobs', 'tasks', 'events', 'emails'))}",
        "pct": rng.choice((2, 5, 8, 12, 15, 25, 40, 85, 90, 95)), "thr": rng.choice((1, 2, 5)),
        "win": rng.choice((5, 10, 15, 30)), "ms": rng.randint(800, 4000),
        "thr_ms": rng.choice((250, 500, 1000)), "burn": rng.choice((6, 14, 14.4)),
        "restarts": rng.randint(3, 30), "mem": mem, "mem2": mem * 2,
        "cpu": rng.choice((500, 1000, 2000)), "replicas": replicas, "replicas2": replicas * 2,
        "ready": rng.randint(0, replicas - 1), "pool": rng.choice((20, 50, 100)),
        "backlog": rng.randint(5, 900) * 1000, "hours": rng.randint(2, 48),
        "lag": rng.randint(30, 900),
        "maxconn": rng.choice((200, 500, 1000)), "size": rng.choice((200, 500, 1000)),
        "rate": rng.randint(100, 5000), "count": rng.randint(1, 60), "days": rng.randint(1, 14),
        "minutes": rng.choice((15, 30)), "rps": rng.randint(50, 8000),
        "effect": rng.choice(EFFECTS), "quarter": rng.choice(("Q1", "Q2", "Q3", "Q4")),
    }


def _render(
    rng: random.Random, kind: Kind, slots: dict[str, object], alert_names: tuple[str, ...],
    service: str, title: str, target_words: int,
) -> str:
    def fill(template: str) -> str:
        return template.format(**slots)

    head: list[str] = []
    style = rng.random()
    if style < 0.75:
        last = date(2026, 11, 1) - timedelta(days=rng.randint(0, 700))
        head += ["---", f"title: {title}", f"alert_names: [{', '.join(alert_names)}]",
                 f"services: [{service}]", f"owner: {slots['team']}", f"last_reviewed: {last}"]
        head += [f"tags: [{', '.join(rng.sample(TAGS, 3))}]", "---"]
    if style < 0.9:
        head += [f"# {title}", ""]
    # Each section is a list of markdown blocks, joined by blank lines.
    background = [fill(s) for s in rng.sample(BACKGROUND, len(BACKGROUND))]
    sections: dict[str, list[str]] = {
        "Background": [" ".join(background.pop() for _ in range(2))],
        "Symptoms": ["\n".join(f"- {fill(s)}" for s in kind.symptoms)],
        "Impact": [fill(kind.impact)],
        "Diagnosis": [f"{fill(lead)}\n\n```bash\n{fill(cmd)}\n```" for lead, cmd in kind.diagnosis],
        "Mitigation": [
            f"### {heading}\n\n{fill(prose)}" + (f"\n\n```bash\n{fill(cmd)}\n```" if cmd else "")
            for heading, prose, cmd in kind.mitigation
        ],
        "Escalation": [fill(rng.choice(ESCALATION))],
    }

    def body() -> str:
        parts = [f"## {name}\n\n" + "\n\n".join(blocks) for name, blocks in sections.items()]
        return "\n".join(head) + "\n" + "\n\n".join(parts) + "\n"

    # Grow towards the target the way real runbooks grow: more context, more diagnosis
    # notes, a verification section, and finally a table of past incidents.
    notes = [fill(s) for s in rng.sample(NOTES, len(NOTES))]
    verify = [fill(s) for s in rng.sample(VERIFY, len(VERIFY))]
    incidents: list[str] = []
    while len(body().split()) < target_words:
        step = len(incidents) + len(notes) + len(verify) + len(background)
        if background and step % 3 == 0:
            sections["Background"][-1] += " " + background.pop()
        elif notes and step % 3 == 1:
            sections["Diagnosis"].insert(rng.randint(0, len(sections["Diagnosis"])), notes.pop())
        elif verify:
            sections.setdefault("Verification", []).append(verify.pop())
        else:
            when = date(2026, 10, 1) - timedelta(days=rng.randint(0, 900))
            incidents.append(f"| {when} | {rng.choice(CAUSES)} | {rng.choice(FIXES)} | "
                             f"PM-{rng.randint(100, 999)} |")
            sections["Past incidents"] = [
                "| date | cause | what fixed it | postmortem |\n|---|---|---|---|\n"
                + "\n".join(sorted(incidents, reverse=True))
            ]
    return body()


def capacity(seed: int = 7) -> int:
    """How many runbooks the generator can write."""
    return len(_combos(seed))


def runbooks(count: int, seed: int = 7) -> list[Runbook]:
    """The first `count` runbooks of the corpus for `seed`."""
    combos = _combos(seed)
    if count > len(combos):
        raise ValueError(f"the generator can write at most {len(combos)} runbooks, not {count}")
    out: list[Runbook] = []
    for i, (service, component, kind, alert_name) in enumerate(combos[:count]):
        rng = random.Random(f"{seed}:{i}")
        slots = _slots(rng, service, component)
        title = kind.title.format(**slots)
        aliases = (alert_name, kind.key) if rng.random() < 0.3 else (alert_name,)
        text = _render(rng, kind, slots, aliases, service, title, rng.randint(MIN_WORDS, MAX_WORDS))
        out.append(Runbook(
            path=f"{service}/{alert_name}.md", service=service, component=component,
            kind=kind.key, alert_name=alert_name, alert_names=aliases, title=title,
            summary=kind.summary.format(**slots), description=kind.description.format(**slots),
            text=text,
        ))
    return out


def write_corpus(root: Path, count: int, seed: int = 7) -> list[Runbook]:
    """Write the first `count` runbooks under `root` and return them."""
    books = runbooks(count, seed)
    for book in books:
        path = root / book.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(book.text, encoding="utf-8")
    return books
