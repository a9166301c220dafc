"""A tiny bi-encoder reader folder for tests: a real ONNX graph that honours the model
folder's contract (enricher.search.reader) and embeds a text of n tokens as (n, 1) at unit
length, so the cosine of two texts says how many tokens each kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import onnx
from onnx import TensorProto, helper

from enricher.search.reader import BI_OUTPUT, INPUTS
from tests.conftest import MODELS_DIR

TOKENIZER = MODELS_DIR / "all-MiniLM-L6-v2-int8" / "tokenizer.json"


def bi_graph() -> onnx.ModelProto:
    """embedding[b] = (n, 1) / |(n, 1)|, n the tokens the attention mask keeps."""
    declared = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in INPUTS
    ]
    nodes = [
        helper.make_node("Cast", ["attention_mask"], ["kept"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["kept", "axis"], ["n"], keepdims=1),
        helper.make_node("Mul", ["n", "zero"], ["nothing"]),
        helper.make_node("Add", ["nothing", "one"], ["ones"]),
        helper.make_node("Concat", ["n", "ones"], ["raw"], axis=1),
        helper.make_node("LpNormalization", ["raw"], [BI_OUTPUT], axis=1, p=2),
    ]
    constants = [
        helper.make_tensor("axis", TensorProto.INT64, [1], [1]),
        helper.make_tensor("zero", TensorProto.FLOAT, [1], [0.0]),
        helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0]),
    ]
    output = helper.make_tensor_value_info(BI_OUTPUT, TensorProto.FLOAT, ["batch", 2])
    graph = helper.make_graph(nodes, "tiny_bi_reader", declared, [output], initializer=constants)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def bi_folder(root: Path, **config: Any) -> Path:
    folder = root / "bi"
    folder.mkdir(parents=True)
    onnx.save(bi_graph(), str(folder / "model.onnx"))
    shutil.copy(TOKENIZER, folder / "tokenizer.json")
    wanted = {"kind": "bi", "alert_tokens": 8, "passage_tokens": 16, "scale": 10.0, "shift": 0.9}
    (folder / "config.json").write_text(json.dumps({**wanted, **config}))
    (folder / "reader.json").write_text(json.dumps({"excluded": []}))
    return folder
