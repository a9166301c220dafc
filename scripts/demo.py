"""`make demo`: send the sample webhooks through the real service and show what Slack would get.

Self-contained: its own redis-server, an embedded Qdrant copy of the sample runbooks, the
service under uvicorn on a free port with webhook auth on, and Slack in console mode. For
each sample it prints the search result JSON (what `python -m enricher.search` shows) and
the Slack message the service posted.
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
from pathlib import Path

import httpx
import uvicorn

from enricher import logs
from enricher.app import create_app
from enricher.index.connect import open_index
from enricher.index.embedding import Embedder
from enricher.service import Services
from enricher.settings import Settings
from enricher.slack.delivery import ConsoleDelivery
from enricher.sources import Ignored, parse_body
from ingest.cache import EmbeddingCache, connect
from ingest.sync import Syncer, SyncOptions
from scripts.local_redis import RedisServer, free_port

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "golden" / "samples"
TOKEN = "demo-token"
SECRET = "demo-pagerduty-secret"


def wait_for_messages(
    out: io.StringIO, count: int, timeout_s: float = 30
) -> list[dict[str, object]]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        decoder = json.JSONDecoder()
        text, docs, pos = out.getvalue(), [], 0
        while pos < len(text):
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                break
            doc, pos = decoder.raw_decode(text, pos)
            docs.append(doc)
        if len(docs) >= count:
            return docs
        time.sleep(0.1)
    raise SystemExit("demo: the service did not post in time; see the log lines above")


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
def serving(services: Services) -> Iterator[int]:
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(services), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def send(sample: Path, port: int) -> None:
    body = sample.read_bytes()
    if sample.name.startswith("pagerduty"):
        sig = "v1=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        url, headers = "/webhook/pagerduty", {"X-PagerDuty-Signature": sig}
    else:
        url, headers = "/webhook/alertmanager", {"Authorization": f"Bearer {TOKEN}"}
    response = httpx.post(f"http://127.0.0.1:{port}{url}", content=body, headers=headers)
    print("=" * 100)
    print(f"{sample.name}: POST {url} -> {response.status_code} {response.text}")


def show_search(sample: Path, services: Services) -> None:
    parsed = parse_body(sample.read_bytes())
    if isinstance(parsed, Ignored):
        return
    result = services.searcher.search(parsed.alert).to_json()
    for match in [*result["matches"], *result["leads"]]:
        match.pop("text")
    print(f"\nsearch result (python -m enricher.search --payload {sample.relative_to(REPO)}),")
    print("match text left out:")
    print(json.dumps(result, indent=2))


def main() -> int:
    logs.configure(json=False, level="WARNING")
    with tempfile.TemporaryDirectory(prefix="rbe-demo-") as tmp:
        work = Path(tmp)
        redis_server = RedisServer(work)
        redis_server.start()
        redis_url = redis_server.url
        try:
            settings = Settings(
                qdrant_path=work / "qdrant",
                redis_url=redis_url,
                models_dir=REPO / "models",
                alertmanager_bearer_tokens=(TOKEN,),
                pagerduty_signing_secrets=(SECRET,),
                workers=1,
            )
            embedder = Embedder(settings)
            index_samples(settings, embedder)
            out = io.StringIO()
            services = Services.build(settings, delivery=ConsoleDelivery(out), embedder=embedder)
            with serving(services) as port:
                for posted, sample in enumerate(sorted(SAMPLES.glob("*.json")), start=1):
                    send(sample, port)
                    show_search(sample, services)
                    message = wait_for_messages(out, posted)[-1]
                    print("\nSlack message the service posted (console mode):")
                    print(json.dumps(message, indent=2, ensure_ascii=False))
        finally:
            redis_server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
