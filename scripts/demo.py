"""`make demo`: send the sample webhooks through the real service and show what Slack would get.

Self-contained: its own redis-server, an embedded Qdrant copy of the sample runbooks, the
service under uvicorn on a free port with webhook auth on, Slack in console mode and the fake
PagerDuty API (tests/fakepagerduty.py) on 127.0.0.1 for incident notes. For each sample it
prints the search result JSON (what `python -m enricher.search` shows) and the Slack message
the service posted; the Grafana sample goes to /webhook/grafana signed, the PagerDuty one is
followed by the incident note the service added. Last, the grouped alert is resolved and
fires again from another cluster: that page carries the "last time" line.

The samples carry fixed times; each is sent with them moved to the moment it is sent
(`stamped`), so the demo means the same on any date: a PagerDuty event older than 48 h
would be ignored as a replay, and an alert's age is shown on its page.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from enricher import logs, serving
from enricher.app import create_app
from enricher.errors import ConfigError
from enricher.index.connect import open_index
from enricher.index.embedding import Embedder
from enricher.service import Services
from enricher.settings import Settings, load_settings
from enricher.slack.delivery import ConsoleDelivery
from enricher.sources import Ignored, parse_body
from ingest.cache import EmbeddingCache, connect
from ingest.sync import Syncer, SyncOptions
from scripts.local_redis import RedisServer
from tests.fakepagerduty import FakePagerDuty, running_fake_pagerduty

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "golden" / "samples"
TOKEN = "demo-token"
SECRET = "demo-pagerduty-secret"
GRAFANA_SECRET = "demo-grafana-secret"
NOTES_FROM = "oncall-bot@example.com"
#: The sample that is resolved and fires again, from another cluster, at the end.
REFIRED = "alertmanager-grouped.json"
#: The sample fields that hold a time (Alertmanager's and PagerDuty's).
TIME_FIELDS = frozenset({"startsAt", "endsAt", "occurred_at", "created_at"})
#: Alertmanager's "no end yet" on a firing alert: not a time to move.
NO_END = "0001-01-01T00:00:00Z"


def _times(node: Any) -> Iterator[tuple[dict[str, Any], str]]:
    """(object, key) of every time field in a JSON document."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in TIME_FIELDS and isinstance(value, str) and value != NO_END:
                yield node, key
            else:
                yield from _times(value)
    elif isinstance(node, list):
        for item in node:
            yield from _times(item)


def stamped(body: bytes, now: datetime) -> bytes:
    """`body` as if sent at `now`: every time in it moved by the same amount, the latest
    to `now`, so the gaps between them (alerts starting 30 s apart) stay as written."""
    doc = json.loads(body)
    fields = list(_times(doc))
    if not fields:
        return body
    latest = max(datetime.fromisoformat(obj[key]) for obj, key in fields)
    for obj, key in fields:
        moved = datetime.fromisoformat(obj[key]) + (now - latest)
        obj[key] = moved.isoformat().replace("+00:00", "Z")
    return json.dumps(doc, indent=2).encode()


def wait_for_messages(out: io.StringIO, count: int, timeout_s: float = 30) -> list[dict[str, Any]]:
    """The messages printed so far, once there are `count` (fewer after `timeout_s`)."""
    deadline = time.monotonic() + timeout_s
    while True:
        decoder = json.JSONDecoder()
        text, docs, pos = out.getvalue(), [], 0
        while pos < len(text):
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                break
            doc, pos = decoder.raw_decode(text, pos)
            docs.append(doc)
        if len(docs) >= count or time.monotonic() > deadline:
            return docs
        time.sleep(0.1)


def index_samples(settings: Settings, embedder: Embedder) -> None:
    index = open_index(settings)
    try:
        report = Syncer(
            index, embedder, EmbeddingCache(connect(settings.redis_url), embedder.identity.dense)
        ).run(SyncOptions.from_settings(settings, [REPO / "golden" / "runbooks"], use_git=False))
    finally:
        index.close()
    print(f"ingest: {report.summary()}\n")


@contextmanager
def serving_on_free_port(services: Services) -> Iterator[int]:
    """The service's app served as `python -m enricher` serves it, on a free local port."""
    sock = serving.bind("127.0.0.1", 0)
    port = int(sock.getsockname()[1])
    server = serving.server(create_app(services), services.settings)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def send(name: str, body: bytes, port: int) -> None:
    if name.startswith("pagerduty"):
        sig = "v1=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        url, headers = "/webhook/pagerduty", {"X-PagerDuty-Signature": sig}
    elif name.startswith("grafana"):
        # Grafana signs `timestamp:body` when it sends its timestamp header.
        stamp = str(int(time.time()))
        signed = stamp.encode() + b":" + body
        sig = hmac.new(GRAFANA_SECRET.encode(), signed, hashlib.sha256).hexdigest()
        url = "/webhook/grafana"
        headers = {"X-Grafana-Alerting-Signature": sig, "X-Grafana-Alerting-Timestamp": stamp}
    else:
        url, headers = "/webhook/alertmanager", {"Authorization": f"Bearer {TOKEN}"}
    response = httpx.post(f"http://127.0.0.1:{port}{url}", content=body, headers=headers)
    print("=" * 100)
    print(f"{name}: POST {url} -> {response.status_code} {response.text}")


def show_search(sample: Path, body: bytes, services: Services) -> None:
    parsed = parse_body(body)
    if isinstance(parsed, Ignored):
        return
    result = services.searcher.search(parsed.alert).to_json()
    for match in [*result["matches"], *result["leads"]]:
        match.pop("text")
    print(f"\nsearch result (python -m enricher.search --payload {sample.relative_to(REPO)}),")
    print("match text left out:")
    print(json.dumps(result, indent=2))


def show_note(body: bytes, pagerduty: FakePagerDuty, timeout_s: float = 30) -> None:
    """Print the note the service added to the incident in `body` (it follows the page)."""
    incident = str(json.loads(body)["event"]["data"]["id"])
    deadline = time.monotonic() + timeout_s
    while not (notes := pagerduty.notes(incident)) and time.monotonic() < deadline:
        time.sleep(0.1)
    print(f"\nPagerDuty note the service added to incident {incident} (fake PagerDuty API):")
    print(notes[-1]["content"] if notes else "(none within 30 s; see the log above)")


def resolved(body: bytes, now: datetime) -> bytes:
    """`body`'s group, resolved at `now`."""
    doc = json.loads(body)
    doc["status"] = "resolved"
    for alert in doc["alerts"]:
        alert["status"] = "resolved"
        alert["endsAt"] = now.isoformat().replace("+00:00", "Z")
    return json.dumps(doc, indent=2).encode()


def refired(body: bytes) -> bytes:
    """`body`'s alert firing again in another group (the canary namespace): a new page of
    the same alert, which says what happened last time."""
    doc = json.loads(body)
    doc["groupKey"] = doc["groupKey"].removesuffix("}") + ', namespace="checkout-canary"}'
    for alert in doc["alerts"]:
        alert["labels"]["namespace"] = "checkout-canary"
        alert["fingerprint"] = "c" + alert["fingerprint"][1:]
    doc["commonLabels"]["namespace"] = "checkout-canary"
    return json.dumps(doc, indent=2).encode()


def settings_for(work: Path, redis_url: str, pagerduty: FakePagerDuty) -> Settings:
    return load_settings(
        qdrant_path=work / "qdrant",
        redis_url=redis_url,
        models_dir=REPO / "models",
        alertmanager_bearer_tokens=(TOKEN,),
        pagerduty_signing_secrets=(SECRET,),
        grafana_signing_secrets=(GRAFANA_SECRET,),
        pagerduty_api_url=pagerduty.url,
        pagerduty_api_token=pagerduty.token,
        pagerduty_from=NOTES_FROM,
        # Where the sample runbooks would live: the page and the note link their sections.
        runbook_base_url="https://git.example.com/sre/runbooks/-/blob/main",
        workers=1,
        log_level="WARNING",
    )


def print_new(out: io.StringIO, printed: int, settle_s: float = 0.0) -> int:
    """Print the console messages after the first `printed`, once at least one is there
    (and `settle_s` passed, for an output of several messages); returns how many are
    printed now."""
    if len(wait_for_messages(out, printed + 1)) > printed and settle_s:
        time.sleep(settle_s)
    messages = wait_for_messages(out, printed + 1)
    for message in messages[printed:]:
        print("\nSlack message the service posted (console mode):")
        print(json.dumps(message, indent=2, ensure_ascii=False))
    return len(messages)


def send_samples(
    port: int, out: io.StringIO, services: Services, pagerduty: FakePagerDuty
) -> tuple[int, int]:
    """Every sample, then the grouped one resolved and firing again; (pages posted, pages
    sent)."""
    posted = printed = 0
    sent: dict[str, bytes] = {}
    samples = sorted(SAMPLES.glob("*.json"))
    for sample in samples:
        body = sent[sample.name] = stamped(sample.read_bytes(), datetime.now(UTC))
        send(sample.name, body, port)
        show_search(sample, body, services)
        now_printed = print_new(out, printed)
        if now_printed == printed:
            print(f"\ndemo: {sample.name} was not posted within 30 s; see the log above")
        posted += now_printed > printed
        printed = now_printed
        if sample.name.startswith("pagerduty"):
            show_note(body, pagerduty)
    print("=" * 100)
    print(f"{REFIRED} resolves, then its alert fires again in another namespace: the new "
          "page says what happened last time (the line under its header)")
    send(f"{REFIRED} resolved", resolved(sent[REFIRED], datetime.now(UTC)), port)
    printed = print_new(out, printed, settle_s=1.0)
    send(f"{REFIRED} firing again", refired(sent[REFIRED]), port)
    now_printed = print_new(out, printed)
    if now_printed == printed:
        print(f"\ndemo: {REFIRED} firing again was not posted within 30 s; see the log above")
    posted += now_printed > printed
    return posted, len(samples) + 1


def run(work: Path) -> tuple[int, int]:
    """Send the samples through the service; (pages posted, pages sent)."""
    redis_server = RedisServer(work)
    redis_server.start()
    try:
        with running_fake_pagerduty(users=(NOTES_FROM,)) as pagerduty:
            settings = settings_for(work, redis_server.url, pagerduty)
            embedder = Embedder(settings)
            index_samples(settings, embedder)
            out = io.StringIO()
            services = Services.build(settings, delivery=ConsoleDelivery(out), embedder=embedder)
            with serving_on_free_port(services) as port:
                return send_samples(port, out, services, pagerduty)
    finally:
        redis_server.stop()


def main() -> int:
    logs.configure(json=False, level="WARNING")
    with tempfile.TemporaryDirectory(prefix="rbe-demo-") as tmp:
        try:
            posted, sent = run(Path(tmp))
        except ConfigError as exc:
            print(f"demo: cannot start: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("demo: interrupted", file=sys.stderr)
            return 130
    print(f"demo: {posted} of {sent} pages posted")
    return 0 if posted == sent else 1


if __name__ == "__main__":
    sys.exit(main())
