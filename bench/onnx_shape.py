"""An encoder of multilingual-e5-small's shape in ONNX, random weights, quantised to int8.

No e5-small ONNX model can be had here (no package ships one; the model hub
is out of reach), but the time an encoder takes does not depend on its
weights: this builds the same shape (12 layers, 384 wide, 12 heads, 1,536
feed-forward, 250,037 words) with random weights, quantises its matrices to
int8 with ONNX Runtime's dynamic quantisation, and so tells what ONNX
Runtime would do with a real int8 e5-small on this machine. Needs
``onnxruntime`` and ``onnx`` (not dependencies of minara).
"""

from __future__ import annotations

from pathlib import Path

LAYERS, WIDTH, HEADS, FFN, VOCAB, POSITIONS = 12, 384, 12, 1536, 250_037, 514


def build(folder: Path) -> Path:
    """Write ``e5-shape-int8.onnx`` into ``folder`` (once) and return its path."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target = folder / "e5-shape-int8.onnx"
    if target.exists():
        return target
    rng = np.random.default_rng(5)
    inits: list = []
    nodes: list = []

    def weight(name: str, *shape: int) -> str:
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * 0.02).astype(np.float32), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [output], **attrs))
        return output

    def const(name: str, values) -> str:
        inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def dense(x: str, name: str, n_in: int, n_out: int) -> str:
        y = node("MatMul", [x, weight(f"{name}.w", n_in, n_out)], f"{name}.mm")
        return node("Add", [y, weight(f"{name}.b", n_out)], f"{name}.out")

    def norm(x: str, name: str) -> str:
        inits.append(numpy_helper.from_array(np.ones(WIDTH, np.float32), f"{name}.g"))
        inits.append(numpy_helper.from_array(np.zeros(WIDTH, np.float32), f"{name}.b"))
        return node("LayerNormalization", [x, f"{name}.g", f"{name}.b"], f"{name}.out",
                    axis=-1, epsilon=1e-12)

    heads_shape = const("heads_shape", [0, 0, HEADS, WIDTH // HEADS])
    flat_shape = const("flat_shape", [0, 0, WIDTH])
    scale = "scale"
    inits.append(numpy_helper.from_array(np.array((WIDTH // HEADS) ** -0.5, np.float32), scale))
    words = node("Gather", [weight("emb.word", VOCAB, WIDTH), "input_ids"], "emb.w")
    where = node("Gather", [weight("emb.pos", POSITIONS, WIDTH), "positions"], "emb.p")
    x = norm(node("Add", [words, where], "emb.sum"), "emb.ln")
    for i in range(LAYERS):
        p = f"l{i}"
        split = []
        for part in ("q", "k", "v"):
            y = node("Reshape", [dense(x, f"{p}.{part}", WIDTH, WIDTH), heads_shape],
                     f"{p}.{part}.r")
            perm = [0, 2, 3, 1] if part == "k" else [0, 2, 1, 3]
            split.append(node("Transpose", [y], f"{p}.{part}.t", perm=perm))
        scores = node("Mul", [node("MatMul", split[:2], f"{p}.qk"), scale], f"{p}.s")
        context = node("MatMul", [node("Softmax", [scores], f"{p}.sm", axis=-1), split[2]],
                       f"{p}.ctx")
        context = node("Reshape", [node("Transpose", [context], f"{p}.ctx.t",
                                        perm=[0, 2, 1, 3]), flat_shape], f"{p}.ctx.r")
        x = norm(node("Add", [x, dense(context, f"{p}.o", WIDTH, WIDTH)], f"{p}.res1"),
                 f"{p}.ln1")
        hidden = node("Gelu", [dense(x, f"{p}.up", WIDTH, FFN)], f"{p}.gelu")
        x = norm(node("Add", [x, dense(hidden, f"{p}.down", FFN, WIDTH)], f"{p}.res2"),
                 f"{p}.ln2")
    node("ReduceMean", [x, const("axis1", [1])], "pooled", keepdims=0)
    graph = helper.make_graph(
        nodes, "e5_shape",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("positions", TensorProto.INT64, ["seq"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", WIDTH])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    fp32 = folder / "e5-shape-fp32.onnx"
    onnx.save(model, fp32, save_as_external_data=True, location="e5-shape-fp32.data")
    quantize_dynamic(str(fp32), str(target), weight_type=QuantType.QInt8,
                     op_types_to_quantize=["MatMul"])
    return target


def session(path: Path, threads: int):
    """An ONNX Runtime session on ``threads`` threads."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def embed(sess, lengths: list[int], batch: int = 8) -> None:
    """Run the encoder over sequences of ``lengths`` tokens (padded per batch)."""
    import numpy as np

    rng = np.random.default_rng(1)
    order = sorted(lengths)
    for start in range(0, len(order), batch):
        seq = order[start + min(batch, len(order) - start) - 1]
        ids = rng.integers(5, VOCAB, size=(min(batch, len(order) - start), seq), dtype=np.int64)
        sess.run(None, {"input_ids": ids, "positions": np.arange(seq, dtype=np.int64)})
