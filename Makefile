# Every target installs what it needs first (scripts/setup.sh is idempotent and fast when done).
SHELL := /bin/bash
PY := .venv/bin/python
export HF_HUB_OFFLINE := 1

.PHONY: setup models test lint typecheck unit ingest run demo stop eval feedback-export bench bench-ingest bench-enrich bench-render bench-ack chaos fuzz clean audit bench-audit reader

setup:
	@bash scripts/setup.sh

models: setup

lint: setup
	.venv/bin/ruff check enricher ingest quality tests scripts golden

typecheck: setup
	.venv/bin/mypy

## pytest exits 5 when it collected no tests (a filtered run, say): that is not a failure.
unit: setup
	$(PY) -m pytest -q $(PYTEST_ARGS) || [ $$? -eq 5 ]

## The one test command (README, .ci/run): lint, strict types, the whole suite.
test: lint typecheck unit

ingest: setup
	$(PY) -m ingest --root golden/runbooks

## The product on embedded defaults: ingest golden/runbooks, serve 127.0.0.1:8080, Slack to stdout.
run: setup
	@bash scripts/run_local.sh

## Send the sample webhooks through the real service; print search results and Slack messages.
demo: setup
	$(PY) -m scripts.demo

## Retrieval quality on four corpora side by side (golden/, the two real dev slices in
## ../shared/data when present, a synthetic corpus of 1,000 runbooks), with a reliability
## diagram per corpus in eval-out/; fails when golden or a real dev slice falls more than
## 2 points below its baseline in golden/baselines/ (quality/suite.py).
## When $(FEEDBACK_CASES) exists (`make feedback-export`), on-call's votes are scored too,
## before and after replaying them (reported, not gated; docs/FEEDBACK.md).
FEEDBACK_CASES ?= data/feedback-cases.jsonl
eval: setup
	$(PY) -m quality.suite --gate golden/baselines $(if $(wildcard $(FEEDBACK_CASES)),--feedback $(FEEDBACK_CASES))

## On-call's votes (in the Redis `make run` uses, unless REDIS_URL says otherwise) as golden cases.
feedback-export: setup
	REDIS_URL=$${REDIS_URL:-redis://127.0.0.1:$${REDIS_PORT:-6399}/0} $(PY) -m enricher.feedback export --out $(FEEDBACK_CASES)

## Every alerting rule in golden/rules against golden/runbooks, one verdict each
## (python -m enricher.audit; docs/SOURCES.md). Rules with no runbook are noted for the gap
## report in the Redis `make run` uses, when it is up.
audit: setup
	REDIS_URL=$${REDIS_URL:-redis://127.0.0.1:$${REDIS_PORT:-6399}/0} $(PY) -m enricher.audit golden/rules --runbooks golden/runbooks

## The reader (issue 36), from the fetched mirrors to enricher/search/reader/ in one command:
## collect, mine with the product's search, train (a torch-only venv, .cache/train-venv),
## export int8 ONNX, measure (quality/train/train_reader.sh; docs/RETRIEVAL.md, "The reader").
reader: setup
	bash quality/train/train_reader.sh

## Stop what `make run` started: the service and its redis-server.
stop:
	@bash scripts/run_local.sh stop

## Benchmarks (docs/PERFORMANCE.md): they report, never assert a speed. JSON lands in bench-out/.
bench-ingest: setup
	$(PY) -m scripts.bench_ingest --out bench-out/ingest.json

bench-enrich: setup
	$(PY) -m scripts.bench_enrich --out bench-out/enrich.json

## 1,000 rules audited against the ~10k-chunk index of bench-enrich (cached in .cache/bench).
bench-audit: setup
	$(PY) -m scripts.bench_audit --out bench-out/audit.json

## CPU time of one Slack render of a heavy page (issue 23); reports, never asserts.
bench-render: setup
	$(PY) -m scripts.bench_render --out bench-out/render.json

## The webhook's ack measured apart: the real service and a lean client (issue 23).
bench-ack: setup
	$(PY) -m scripts.bench_ack --out bench-out/ack.json

bench: bench-ingest bench-enrich bench-render bench-ack

## Chaos proof (docs/RELIABILITY.md): page burst, kill -9 mid-burst, Slack 429/500 storm.
## It reports what Slack received per alert group; exit 1 on a lost or doubled page.
## `make chaos CHAOS_ARGS=--redis-failover`: the Redis primary killed under Sentinel instead
## (issue 22), two enricher replicas; add `--min-replicas-ack 0` for the run without the ack.
chaos: setup
	$(PY) -m scripts.chaos $(CHAOS_ARGS)

## Randomized hostile bodies against the real service for FUZZ_SECONDS (scripts/fuzz; the unit
## suite runs the same strategies derandomized). Exit 1 on a 5xx, an answer after 10 s, a
## worker crash or a lost job, with the batch seed to rerun: `make fuzz FUZZ_SEED=N`. The last
## line counts the answers per status code. FUZZ_SECONDS=600 is the 10-minute run of issue 18.
FUZZ_SECONDS ?= 60
fuzz: setup
	$(PY) -m scripts.fuzz --seconds $(FUZZ_SECONDS) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))

clean:
	rm -rf .venv .cache data models
