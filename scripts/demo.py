"""`make demo`: send the sample webhooks through the real service and show what Slack would get.

Self-contained: its own redis-server, an embedded Qdrant copy of the sample runbooks, the
service under uvicorn on a free port with webhook auth on, and Slack in console mode. For
each sample it prints the search result JSON (what `python -m enricher.search` shows) and
the Slack message the service posted.

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

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "golden" / "samples"
TOKEN = "demo-token"
SECRET = "demo-pagerduty-secret"
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


def run(work: Path) -> tuple[int, int]:
    """Send every sample through the service; (pages posted, samples sent)."""
    redis_server = RedisServer(work)
    redis_server.start()
    try:
        settings = load_settings(
            qdrant_path=work / "qdrant",
            redis_url=redis_server.url,
            models_dir=REPO / "models",
            alertmanager_bearer_tokens=(TOKEN,),
            pagerduty_signing_secrets=(SECRET,),
            workers=1,
            log_level="WARNING",
        )
        embedder = Embedder(settings)
        index_samples(settings, embedder)
        out = io.StringIO()
        services = Services.build(settings, delivery=ConsoleDelivery(out), embedder=embedder)
        samples = sorted(SAMPLES.glob("*.json"))
        posted = 0
        with serving_on_free_port(services) as port:
            for sample in samples:
                body = stamped(sample.read_bytes(), datetime.now(UTC))
                send(sample.name, body, port)
                show_search(sample, body, services)
                messages = wait_for_messages(out, posted + 1)
                if len(messages) <= posted:
                    print(f"\ndemo: {sample.name} was not posted within 30 s; see the log above")
                    continue
                posted += 1
                print("\nSlack message the service posted (console mode):")
                print(json.dumps(messages[-1], indent=2, ensure_ascii=False))
        return posted, len(samples)
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
