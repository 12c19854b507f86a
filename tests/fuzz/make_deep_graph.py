#!/usr/bin/env python3
# Usage: make_deep_graph.py BLOCKS OUT.onnx  (15 nodes per block; docs/results.md, "Large graphs")
# A deep residual graph of mixed operators: per block MatMul, Add, Relu,
# residual Add, a LayerNorm written out (ReduceMean, Sub, Mul, ReduceMean,
# Add, Sqrt, Div), a Transpose pair and a Softmax branch joined back.
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
blocks = int(sys.argv[1]); out = sys.argv[2]
D = 32
nodes, inits = [], []
rng = np.random.default_rng(0)
def init(name, arr):
    inits.append(numpy_helper.from_array(arr.astype(np.float32), name)); return name
x = "x"
eps = init("eps", np.array([1e-5]))
for b in range(blocks):
    p = f"b{b}_"
    w = init(p + "w", rng.standard_normal((D, D)) / np.sqrt(D))
    bias = init(p + "bias", rng.standard_normal(D) * 0.1)
    def n(op, ins, **kw):
        o = p + op.lower() + str(len(nodes))
        nodes.append(helper.make_node(op, ins, [o], **kw)); return o
    h = n("MatMul", [x, w]); h = n("Add", [h, bias]); h = n("Relu", [h]); h = n("Add", [h, x])
    m = n("ReduceMean", [h], axes=[-1]); c = n("Sub", [h, m]); sq = n("Mul", [c, c])
    v = n("ReduceMean", [sq], axes=[-1]); v = n("Add", [v, eps]); s = n("Sqrt", [v]); h = n("Div", [c, s])
    t = n("Transpose", [h], perm=[1, 0]); sm = n("Softmax", [t], axis=0); t2 = n("Transpose", [sm], perm=[1, 0])
    x = n("Add", [h, t2])
g = helper.make_graph(nodes, "deep", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, D])],
                      [helper.make_tensor_value_info(x, TensorProto.FLOAT, [8, D])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(m, out)
print(len(nodes), "nodes")
