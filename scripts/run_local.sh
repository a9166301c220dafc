#!/usr/bin/env bash
# `make run`: the product on embedded defaults. A private redis-server, the webhooks on
# 127.0.0.1:8080, Slack messages printed to stdout. The service syncs the sample runbooks
# into its qdrant-edge shard under ./data/qdrant itself, at start and every SYNC_INTERVAL_S,
# so an edit to golden/runbooks reaches search without a restart.
#
# `scripts/run_local.sh stop` (`make stop`) stops what it started: the service (by the pid
# it wrote to RUN_DIR) and the redis-server on REDIS_PORT.
set -euo pipefail
cd "$(dirname "$0")/.."

RUN_DIR=${RUN_DIR:-data}
REDIS_PORT=${REDIS_PORT:-6399}
PIDFILE=$RUN_DIR/enricher.pid

if [[ "${1:-}" == stop ]]; then
    if [[ -f "$PIDFILE" ]]; then
        pid=$(cat "$PIDFILE")
        # Only our service: a stale pid may have been reused by another process since.
        # (An exited one's cmdline is empty, also while it waits to be reaped. Redirections
        # apply left to right, so 2>/dev/null goes first to silence a cmdline already gone.)
        ours() { tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q -- "-m enricher"; }
        if ours; then
            kill -TERM "$pid"
            while ours; do sleep 0.2; done
            echo "stop: stopped the service (pid $pid)" >&2
        fi
        rm -f "$PIDFILE"
    fi
    if redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1; then
        echo "stop: stopped redis-server on 127.0.0.1:$REDIS_PORT" >&2
    fi
    exit 0
fi

export QDRANT_PATH=${QDRANT_PATH:-data/qdrant}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:$REDIS_PORT/0}
export ALLOW_UNAUTHENTICATED=${ALLOW_UNAUTHENTICATED:-true}
export HOST=${HOST:-127.0.0.1} PORT=${PORT:-8080}
# The sample runbooks only when no source is configured: RUNBOOK_GIT_URL or CONFLUENCE_URL
# alone serve that source alone.
if [[ -z "${RUNBOOK_ROOTS:-}${RUNBOOK_GIT_URL:-}${CONFLUENCE_URL:-}" ]]; then
    export RUNBOOK_ROOTS=golden/runbooks
fi
export SYNC_INTERVAL_S=${SYNC_INTERVAL_S:-10}
sources=()
[[ -n "${RUNBOOK_ROOTS:-}" ]] && sources+=("$RUNBOOK_ROOTS")
# Credentials written into a URL stay out of the banner.
[[ -n "${RUNBOOK_GIT_URL:-}" ]] && sources+=("$(sed -E 's#://[^/@]*@#://#g' <<<"$RUNBOOK_GIT_URL")")
[[ -n "${CONFLUENCE_URL:-}" ]] && sources+=("$CONFLUENCE_URL (${CONFLUENCE_SPACES:-no space})")

mkdir -p "$RUN_DIR/redis"
redis_dir=$(realpath "$RUN_DIR/redis")
if ! redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$redis_dir" \
        --appendonly yes --daemonize yes --pidfile "$redis_dir/redis.pid" >/dev/null
    echo "run: started redis-server on 127.0.0.1:$REDIS_PORT ($RUN_DIR/redis; stop: make stop)" >&2
fi

echo "run: serving on http://$HOST:$PORT, syncing $(IFS=,; echo "${sources[*]}" | sed 's/,/, /g') every ${SYNC_INTERVAL_S}s; Slack messages are printed below. Try the curl example in README.md; stop: Ctrl-C, or make stop (the service and redis-server)" >&2
echo $$ >"$PIDFILE"  # exec keeps the pid: `make stop` finds the service by it
exec .venv/bin/python -m enricher
