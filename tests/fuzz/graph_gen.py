"""Random ONNX graphs that are valid by construction (NNSmith-style), for
differential fuzzing of whole graphs (graph_fuzz.py).

Every operator is added through a rule that knows its shape semantics, so the
generator tracks each value's dtype and shape itself and only ever builds
what ONNX allows: broadcasting, odd sizes, strides, dilations, pads and
groups, reductions on any axis, layout chains, several outputs, float32 with
float64 and integer side paths. onnx.checker with full shape inference
confirms every graph (a generator bug fails loudly, not as a finding).

Numerics: the interpreter and the compiled program may sum in different
orders, so operators that turn a rounding difference into a different answer
(comparisons, Floor, ArgMax, a max over near-ties) only ever see graph inputs
or constants, never computed values; divisors, logarithms and square roots
get arguments kept away from their poles.

    graph_gen.generate(seed) -> onnx.ModelProto
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
FLOAT, DOUBLE, INT64, INT32, BOOL = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64,
                                     TensorProto.INT32, TensorProto.BOOL)
NP = {FLOAT: np.float32, DOUBLE: np.float64, INT64: np.int64, INT32: np.int32, BOOL: np.bool_}


class Value:
    def __init__(self, name, dtype, shape, computed, constant=False):
        self.name = name
        self.constant = constant  # an initializer
        self.hidden = False       # never an operand of a later rule (an unscaled sum)
        self.squashed = False     # values crowded together (a Softmax, a Sigmoid): no normalization of them
        self.dtype = dtype
        self.shape = tuple(int(d) for d in shape)
        self.computed = computed  # produced by a node (not a graph input or constant)

    @property
    def rank(self):
        return len(self.shape)

    @property
    def numel(self):
        return int(np.prod(self.shape)) if self.shape else 1


class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inputs, self.initializers = [], [], []
        self.values = []     # every Value, in creation order
        self.counter = 0

    def name(self, hint):
        self.counter += 1
        return f"{hint}_{self.counter}"

    # -- values --------------------------------------------------------------
    def input(self, shape, dtype=FLOAT):
        v = Value(self.name("in"), dtype, shape, computed=False)
        self.inputs.append(helper.make_tensor_value_info(v.name, dtype, v.shape))
        self.values.append(v)
        return v

    def const(self, array, dtype=None):
        array = np.asarray(array)
        if dtype is not None:
            array = array.astype(NP[dtype])
        v = Value(self.name("c"), onnx.helper.np_dtype_to_tensor_dtype(array.dtype), array.shape,
                  computed=False, constant=True)
        self.initializers.append(numpy_helper.from_array(array, v.name))
        self.values.append(v)
        return v

    def random_const(self, shape, low=-1.0, high=1.0, dtype=FLOAT):
        return self.const(self.rng.uniform(low, high, size=shape), dtype)

    def ints(self, values):
        return self.const(np.array(values, dtype=np.int64))

    def op(self, op_type, inputs, outputs, **attrs):
        """outputs: [(dtype, shape)]; returns the new Values."""
        made = [Value(self.name(op_type.lower()), dtype, shape, computed=True) for dtype, shape in outputs]
        for m in made:
            m.squashed = op_type in SQUASHING
        names = [i.name if i is not None else "" for i in inputs]
        self.nodes.append(helper.make_node(op_type, names, [m.name for m in made],
                                           name=self.name(op_type), **attrs))
        self.values.extend(made)
        return made if len(made) > 1 else made[0]

    # -- choices -------------------------------------------------------------
    def pick(self, options):
        return options[int(self.rng.integers(len(options)))]

    def recent(self, values):
        """One of `values` (in creation order), most likely one of the last:
        chains of operators, which is what fusion and epilogues work on."""
        back = min(len(values) - 1, int(self.rng.geometric(0.45)) - 1)
        return values[len(values) - 1 - back]

    def chance(self, p):
        return bool(self.rng.random() < p)

    def dim(self, low=1, high=9):
        return int(self.rng.integers(low, high + 1))

    def floats(self, rank=None, computed_only=False):
        """float32 operands: graph inputs and computed values (constants are
        made by the rules that need them)."""
        return [v for v in self.values if v.dtype == FLOAT and v.numel <= 4096 and not v.constant and not v.hidden
                and (rank is None or v.rank == rank) and (v.computed or not computed_only)]


# ---------------------------------------------------------------------------
# Shape helpers

def broadcast(a, b):
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        assert x == y or x == 1 or y == 1, (a, b)
        out.append(max(x, y))
    return tuple(out)


def broadcastable_variant(g, shape):
    """A shape that broadcasts with `shape` to `shape`: leading dims dropped,
    some dims set to 1."""
    shape = list(shape)
    drop = int(g.rng.integers(0, len(shape) + 1)) if shape else 0
    shape = shape[drop:]
    return tuple(1 if g.chance(0.4) else d for d in shape)


def conv_out(size, kernel, stride, dilation, pad_begin, pad_end):
    return (size + pad_begin + pad_end - dilation * (kernel - 1) - 1) // stride + 1


# ---------------------------------------------------------------------------
# Operator rules: each takes the builder and returns the new Value (or None
# when it found nothing to apply to).

def unary(g):
    x = g.recent(g.floats())
    op = g.pick(["Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Erf", "Softplus", "Softsign", "Elu", "Selu",
                 "LeakyRelu", "HardSigmoid", "HardSwish", "Exp", "Clip", "Sqrt", "Log", "Reciprocal",
                 "Identity", "Sin", "Cos", "Floor", "Sign"])
    attrs = {}
    if op in ("Floor", "Sign") and x.computed:
        op = "Relu"  # discontinuous: only on inputs and constants
    if op in ("Exp", "Sin", "Cos"):
        # Bounded argument: e^x overflows, and sin / cos of a large x turn
        # its float rounding into an absolute error of the result (seed
        # 14779: Sin(130) off by 3 ulp of 130, 4.6e-5 of an O(1) output).
        x = g.op("Tanh", [x], [(FLOAT, x.shape)])
    if op in ("Sqrt", "Log", "Reciprocal"):
        # Away from the pole: |x| + 1.
        a = g.op("Abs", [x], [(FLOAT, x.shape)])
        x = g.op("Add", [a, g.const(np.float32(1.0))], [(FLOAT, x.shape)])
    if op == "LeakyRelu":
        attrs["alpha"] = float(g.rng.uniform(0.01, 0.5))
    if op == "Elu":
        attrs["alpha"] = float(g.rng.uniform(0.5, 1.5))
    if op == "HardSigmoid":
        attrs.update(alpha=float(g.rng.uniform(0.1, 0.3)), beta=0.5)
    if op == "Clip":
        lo = float(g.rng.uniform(-1, 0))
        return g.op("Clip", [x, g.const(np.float32(lo)), g.const(np.float32(lo + g.rng.uniform(0.2, 2)))],
                    [(FLOAT, x.shape)])
    return g.op(op, [x], [(FLOAT, x.shape)], **attrs)


def binary(g):
    a = g.recent(g.floats())
    op = g.pick(["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Add", "Mul"])
    partners = [v for v in g.floats() if v is not a and _broadcasts(v.shape, a.shape)]
    if partners and g.chance(0.6):
        b = g.pick(partners)
    elif g.chance(0.5):
        b = g.input(broadcastable_variant(g, a.shape))
    else:
        b = g.random_const(broadcastable_variant(g, a.shape))
    if g.chance(0.5):
        a, b = b, a
    out = broadcast(a.shape, b.shape)
    if op == "Div":
        ab = g.op("Abs", [b], [(FLOAT, b.shape)])
        b = g.op("Add", [ab, g.const(np.float32(0.5))], [(FLOAT, b.shape)])
    if op == "Pow":
        # A positive base, a small constant exponent.
        aa = g.op("Abs", [a], [(FLOAT, a.shape)])
        a = g.op("Add", [aa, g.const(np.float32(0.25))], [(FLOAT, a.shape)])
        b = g.const(np.float32(g.pick([2.0, 3.0, 0.5, -1.0])))
        out = a.shape
    return g.op(op, [a, b], [(FLOAT, out)])


def _broadcasts(small, big):
    if len(small) > len(big):
        return False
    try:
        return broadcast(small, big) == tuple(big)
    except AssertionError:
        return False


def reduce(g):
    x = g.recent([v for v in g.floats() if v.rank >= 1])
    op = g.pick(["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceLogSumExp",
                 "ReduceSumSquare", "ReduceProd"])
    if op in ("ReduceMax", "ReduceMin") and x.computed and g.chance(0.5):
        op = "ReduceSum"
    axes = sorted({int(a) for a in g.rng.choice(x.rank, size=g.dim(1, x.rank), replace=False)})
    keep = g.chance(0.5)
    shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keep else \
        tuple(d for i, d in enumerate(x.shape) if i not in axes)
    signed_axes = [a - x.rank if g.chance(0.3) else a for a in axes]
    if op == "ReduceProd":
        x = g.op("Sigmoid", [x], [(FLOAT, x.shape)])  # bounded factors
    if op == "ReduceSum":
        out = g.op(op, [x, g.ints(signed_axes)], [(FLOAT, shape)], keepdims=int(keep))
    else:
        out = g.op(op, [x], [(FLOAT, shape)], axes=signed_axes, keepdims=int(keep))
    if op in ("ReduceSum", "ReduceSumSquare", "ReduceL2"):
        # Back to O(1): a sum of hundreds of terms added to O(1) values and
        # then normalized (seed 11476: ReduceSumSquare -> Add -> LayerNorm)
        # is ill-conditioned, and float32 rounding of the sum alone moves
        # the result by more than any tolerance.
        count = int(np.prod([x.shape[a] for a in axes]))
        scale = 1.0 / count if op != "ReduceL2" else 1.0 / np.sqrt(count)
        out.hidden = True
        out = g.op("Mul", [out, g.const(np.float32(scale))], [(FLOAT, shape)])
    return out


# Normalizing values that crowd around an offset (Softmax of a Softmax, a
# LayerNorm of a LogSoftmax) divides float32 rounding by their tiny spread:
# campaign seed 12959 (Softmax, Softmax, LogSoftmax, LayerNorm) differed by
# 3e-5 of an O(1) output for that reason alone. Such outputs are not
# normalized again. Reductions that average or soft-max over an axis crowd
# their outputs the same way (seed 14533: LayerNorm of a ReduceLogSumExp of
# Softplus values, 1.5e-4 off in every configuration).
SQUASHING = {"Softmax", "LogSoftmax", "Sigmoid", "Tanh", "Erf", "Softsign", "HardSigmoid", "ReduceLogSumExp",
             "ReduceMean"}


def softmax(g):
    x = g.recent([v for v in g.floats() if v.rank >= 1 and not v.squashed])
    axis = int(g.rng.integers(-x.rank, x.rank))
    return g.op(g.pick(["Softmax", "LogSoftmax"]), [x], [(FLOAT, x.shape)], axis=axis)


def layer_norm(g):
    x = g.recent([v for v in g.floats() if v.rank >= 1 and not v.squashed])
    axis = int(g.rng.integers(-x.rank, x.rank))
    normalized = x.shape[axis:]
    scale = g.random_const(normalized, 0.5, 1.5)
    bias = g.random_const(normalized)
    return g.op("LayerNormalization", [x, scale, bias], [(FLOAT, x.shape)], axis=axis,
                epsilon=float(g.pick([1e-5, 1e-3])))


def matmul(g):
    candidates = [v for v in g.floats() if v.rank >= 1]
    a = g.recent(candidates)
    if a.rank == 1:
        k = a.shape[0]
        b = g.random_const((k, g.dim())) if g.chance(0.5) else g.input((k, g.dim()))
        return g.op("MatMul", [a, b], [(FLOAT, (b.shape[1],))])
    k = a.shape[-1]
    n = g.dim(1, 12)
    batch = a.shape[:-2]
    if batch and g.chance(0.4):
        b_shape = broadcastable_variant(g, batch) + (k, n)
    else:
        b_shape = (k, n)
    b = g.random_const(b_shape) if g.chance(0.6) else g.input(b_shape)
    if g.chance(0.3):
        a, b = _swap_matmul(g, a, b)
    out = broadcast(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    return g.op("MatMul", [a, b], [(FLOAT, out)])


def _swap_matmul(g, a, b):
    """x @ a^T-shaped: a new left operand of shape [..., m, a_rows]."""
    m = g.dim()
    left = g.input(a.shape[:-2] + (m, a.shape[-2]))
    return left, a


def gemm(g):
    a = g.pick(g.floats(rank=2) or [g.input((g.dim(), g.dim()))])
    trans_a, trans_b = g.chance(0.3), g.chance(0.5)
    m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
    n = g.dim(1, 12)
    b = g.random_const((n, k) if trans_b else (k, n))
    inputs = [a, b]
    if g.chance(0.7):
        inputs.append(g.random_const(g.pick([(n,), (1, n), (m, n), (m, 1), ()])))
    return g.op("Gemm", inputs, [(FLOAT, (m, n))], transA=int(trans_a), transB=int(trans_b),
                alpha=float(g.pick([1.0, 0.5])), beta=float(g.pick([1.0, 2.0])))


def image(g, spatial_rank=2):
    """A rank-4 (or rank-3) float value to convolve, made if none exists."""
    found = [v for v in g.floats(rank=2 + spatial_rank) if all(d >= 3 for d in v.shape[2:])]
    if found and g.chance(0.8):
        return g.recent(found)
    return g.input((g.dim(1, 2), g.dim(1, 6)) + tuple(g.dim(4, 12) for _ in range(spatial_rank)))


def conv(g):
    spatial = 2 if g.chance(0.85) else 1
    x = image(g, spatial)
    c = x.shape[1]
    group = g.pick([d for d in range(1, c + 1) if c % d == 0]) if g.chance(0.4) else 1
    m = group * g.dim(1, 4)
    kernel = [g.dim(1, 3) for _ in range(spatial)]
    strides = [g.dim(1, 2) for _ in range(spatial)]
    dilations = [g.dim(1, 2) for _ in range(spatial)]
    pads = [g.dim(0, k - 1) if k > 1 else 0 for k in kernel] + [g.dim(0, k - 1) if k > 1 else 0 for k in kernel]
    out = []
    for i in range(spatial):
        out.append(conv_out(x.shape[2 + i], kernel[i], strides[i], dilations[i], pads[i], pads[spatial + i]))
    if min(out) < 1:
        return None
    w = g.random_const((m, c // group) + tuple(kernel))
    inputs = [x, w] + ([g.random_const((m,))] if g.chance(0.6) else [])
    return g.op("Conv", inputs, [(FLOAT, (x.shape[0], m) + tuple(out))], kernel_shape=kernel,
                strides=strides, dilations=dilations, pads=pads, group=group)


def conv_transpose(g):
    x = image(g)
    c = x.shape[1]
    group = g.pick([d for d in range(1, c + 1) if c % d == 0]) if g.chance(0.3) else 1
    m_per_group = g.dim(1, 3)
    kernel = [g.dim(1, 4) for _ in range(2)]
    strides = [g.dim(1, 3) for _ in range(2)]
    pads = [g.dim(0, k - 1) if k > 1 else 0 for k in kernel] * 2
    output_padding = [g.dim(0, s - 1) if s > 1 and g.chance(0.3) else 0 for s in strides]
    out = [strides[i] * (x.shape[2 + i] - 1) + output_padding[i] + kernel[i] - pads[i] - pads[2 + i]
           for i in range(2)]
    if min(out) < 1:
        return None
    w = g.random_const((c, m_per_group) + tuple(kernel))
    inputs = [x, w] + ([g.random_const((m_per_group * group,))] if g.chance(0.5) else [])
    return g.op("ConvTranspose", inputs, [(FLOAT, (x.shape[0], m_per_group * group) + tuple(out))],
                kernel_shape=kernel, strides=strides, pads=pads, group=group, output_padding=output_padding)


def pool(g):
    x = image(g)
    op = g.pick(["MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"])
    if op in ("MaxPool", "GlobalMaxPool") and x.computed and g.chance(0.5):
        op = "AveragePool"
    if op.startswith("Global"):
        return g.op(op, [x], [(FLOAT, x.shape[:2] + (1, 1))])
    kernel = [g.dim(1, 3) for _ in range(2)]
    strides = [g.dim(1, 2) for _ in range(2)]
    pads = [g.dim(0, k - 1) if k > 1 else 0 for k in kernel] * 2
    dilations = [g.dim(1, 2) for _ in range(2)] if op == "MaxPool" else [1, 1]
    out = [conv_out(x.shape[2 + i], kernel[i], strides[i], dilations[i], pads[i], pads[2 + i]) for i in range(2)]
    if min(out) < 1:
        return None
    attrs = dict(kernel_shape=kernel, strides=strides, pads=pads)
    if op == "MaxPool":
        attrs["dilations"] = dilations
    else:
        attrs["count_include_pad"] = int(g.chance(0.5))
    return g.op(op, [x], [(FLOAT, x.shape[:2] + tuple(out))], **attrs)


def batch_norm(g):
    x = image(g)
    c = x.shape[1]
    scale, bias, mean = g.random_const((c,), 0.5, 1.5), g.random_const((c,)), g.random_const((c,))
    var = g.random_const((c,), 0.5, 2.0)
    return g.op("BatchNormalization", [x, scale, bias, mean, var], [(FLOAT, x.shape)],
                epsilon=float(g.pick([1e-5, 1e-3])))


def transpose(g):
    x = g.recent([v for v in g.floats() if v.rank >= 2])
    perm = [int(p) for p in g.rng.permutation(x.rank)]
    return g.op("Transpose", [x], [(FLOAT, tuple(x.shape[p] for p in perm))], perm=perm)


def factorizations(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def reshape(g):
    x = g.recent(g.floats())
    n = x.numel
    dims, rest = [], n
    for _ in range(g.dim(1, 3)):
        d = g.pick(factorizations(rest))
        dims.append(d)
        rest //= d
    dims.append(rest)
    g.rng.shuffle(dims)
    shape = list(dims)
    spec = list(dims)
    if g.chance(0.4):
        spec[int(g.rng.integers(len(spec)))] = -1
    return g.op("Reshape", [x, g.ints(spec)], [(FLOAT, tuple(shape))])


def flatten(g):
    x = g.recent([v for v in g.floats() if v.rank >= 1])
    axis = int(g.rng.integers(-x.rank, x.rank + 1))
    a = axis + x.rank if axis < 0 else axis
    return g.op("Flatten", [x], [(FLOAT, (int(np.prod(x.shape[:a])), int(np.prod(x.shape[a:]))))], axis=axis)


def unsqueeze_squeeze(g):
    x = g.recent([v for v in g.floats() if v.rank <= 4])
    ones = [i for i, d in enumerate(x.shape) if d == 1]
    if ones and g.chance(0.5):
        axes = sorted(int(a) for a in g.rng.choice(ones, size=g.dim(1, len(ones)), replace=False))
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return g.op("Squeeze", [x, g.ints(axes)], [(FLOAT, shape)])
    axis = int(g.rng.integers(0, x.rank + 1))
    shape = x.shape[:axis] + (1,) + x.shape[axis:]
    return g.op("Unsqueeze", [x, g.ints([axis])], [(FLOAT, shape)])


def slice_(g):
    x = g.recent([v for v in g.floats() if v.rank >= 1])
    axes = sorted(int(a) for a in g.rng.choice(x.rank, size=g.dim(1, x.rank), replace=False))
    starts, ends, steps, shape = [], [], [], list(x.shape)
    for a in axes:
        n = x.shape[a]
        step = g.pick([1, 1, 2, 3, -1, -2])
        if step > 0:
            s = int(g.rng.integers(0, n))
            e = n + 5 if g.chance(0.2) else int(g.rng.integers(s + 1, n + 1))  # past the end: clamped
            count = (min(e, n) - s + step - 1) // step
        else:
            s = int(g.rng.integers(0, n))
            e = int(g.rng.integers(-1, s))
            count = (s - e + (-step) - 1) // (-step)
            e = e if e >= 0 else -n - 3  # before the start: clamped to -1
        starts.append(s - n if g.chance(0.2) else s)
        ends.append(e)
        steps.append(step)
        shape[a] = count
    return g.op("Slice", [x, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)], [(FLOAT, tuple(shape))])


def concat(g):
    x = g.recent([v for v in g.floats() if v.rank >= 1])
    axis = int(g.rng.integers(0, x.rank))
    parts = [x]
    for _ in range(g.dim(1, 2)):
        shape = list(x.shape)
        shape[axis] = g.dim(1, 4)
        same = [v for v in g.floats(rank=x.rank)
                if all(v.shape[i] == x.shape[i] for i in range(x.rank) if i != axis)]
        parts.append(g.pick(same) if same and g.chance(0.5) else g.input(tuple(shape)))
    total = sum(p.shape[axis] for p in parts)
    return g.op("Concat", parts, [(FLOAT, x.shape[:axis] + (total,) + x.shape[axis + 1:])],
                axis=axis - x.rank if g.chance(0.3) else axis)


def split(g):
    x = g.recent([v for v in g.floats() if v.rank >= 1 and max(v.shape) >= 2])
    axis = g.pick([i for i, d in enumerate(x.shape) if d >= 2])
    n = x.shape[axis]
    cut = sorted(set(int(c) for c in g.rng.integers(1, n, size=g.dim(1, min(3, n - 1)))))
    sizes = [b - a for a, b in zip([0] + cut, cut + [n])]
    outs = [(FLOAT, x.shape[:axis] + (s,) + x.shape[axis + 1:]) for s in sizes]
    made = g.op("Split", [x, g.ints(sizes)], outs, axis=axis)
    return made if isinstance(made, list) else [made]


def pad(g):
    x = g.recent([v for v in g.floats() if v.rank >= 1])
    mode = g.pick(["constant", "constant", "reflect", "edge"])
    pads = []
    for side in range(2):
        for d in x.shape:
            limit = d - 1 if mode == "reflect" else 3
            pads.append(g.dim(0, max(0, min(3, limit))))
    shape = tuple(d + pads[i] + pads[x.rank + i] for i, d in enumerate(x.shape))
    inputs = [x, g.ints(pads)]
    if mode == "constant" and g.chance(0.5):
        inputs.append(g.const(np.float32(g.rng.uniform(-1, 1))))
    return g.op("Pad", inputs, [(FLOAT, shape)], mode=mode)


def gather(g):
    x = g.recent([v for v in g.floats() if v.rank >= 1])
    axis = int(g.rng.integers(0, x.rank))
    n = x.shape[axis]
    idx_shape = g.pick([(), (g.dim(1, 4),), (g.dim(1, 3), g.dim(1, 3))])
    indices = g.const(g.rng.integers(-n, n, size=idx_shape).astype(np.int64))
    shape = x.shape[:axis] + tuple(idx_shape) + x.shape[axis + 1:]
    return g.op("Gather", [x, indices], [(FLOAT, shape)], axis=axis - x.rank if g.chance(0.3) else axis)


def resize(g):
    x = image(g)
    mode = g.pick(["nearest", "linear"])
    factors = [g.pick([1, 2, 3]) for _ in range(2)]
    scales = g.const(np.array([1, 1] + factors, dtype=np.float32))
    attrs = dict(mode=mode)
    if mode == "linear":
        attrs["coordinate_transformation_mode"] = g.pick(["half_pixel", "align_corners", "asymmetric",
                                                          "pytorch_half_pixel"])
    else:
        attrs["coordinate_transformation_mode"] = g.pick(["asymmetric", "half_pixel"])
        attrs["nearest_mode"] = g.pick(["floor", "round_prefer_floor"]) if x.computed is False else "floor"
    shape = x.shape[:2] + tuple(x.shape[2 + i] * factors[i] for i in range(2))
    return g.op("Resize", [x, None, scales], [(FLOAT, shape)], **attrs)


def expand(g):
    x = g.recent([v for v in g.floats() if v.rank <= 3])
    shape = tuple(g.dim(2, 4) if d == 1 and g.chance(0.6) else d for d in x.shape)
    if g.chance(0.4):
        shape = (g.dim(1, 3),) + shape
    return g.op("Expand", [x, g.ints(list(shape))], [(FLOAT, shape)])


def depth_space(g):
    x = image(g)
    n, c, h, w = x.shape
    if c % 4 == 0 and g.chance(0.5):
        return g.op("DepthToSpace", [x], [(FLOAT, (n, c // 4, h * 2, w * 2))], blocksize=2,
                    mode=g.pick(["DCR", "CRD"]))
    if h % 2 == 0 and w % 2 == 0:
        return g.op("SpaceToDepth", [x], [(FLOAT, (n, c * 4, h // 2, w // 2))], blocksize=2)
    return None


def where(g):
    x = g.recent(g.floats())
    a, b = g.input(x.shape), g.input(broadcastable_variant(g, x.shape))
    cond = g.op(g.pick(["Less", "Greater", "Equal"]), [a, b], [(BOOL, x.shape)])
    other = g.random_const(broadcastable_variant(g, x.shape))
    return g.op("Where", [cond, x, other], [(FLOAT, x.shape)])


def double_path(g):
    """float32 -> float64 arithmetic -> float32."""
    x = g.recent(g.floats())
    d = g.op("Cast", [x], [(DOUBLE, x.shape)], to=DOUBLE)
    d = g.op(g.pick(["Tanh", "Sigmoid", "Abs", "Neg", "Exp"]), [g.op("Tanh", [d], [(DOUBLE, x.shape)])],
             [(DOUBLE, x.shape)])
    c = g.const(g.rng.uniform(-1, 1, size=broadcastable_variant(g, x.shape)).astype(np.float64))
    d = g.op(g.pick(["Add", "Mul", "Sub"]), [d, c], [(DOUBLE, x.shape)])
    return g.op("Cast", [d], [(FLOAT, x.shape)], to=FLOAT)


def integer_path(g):
    """Integer inputs through integer arithmetic, cast to float; or an ArgMax."""
    dtype = g.pick([INT64, INT32])
    shape = tuple(g.dim(1, 6) for _ in range(g.dim(1, 3)))
    a = g.input(shape, dtype)
    b = g.input(broadcastable_variant(g, shape), dtype)
    c = g.op(g.pick(["Add", "Mul", "Sub", "Max", "Min"]), [a, b], [(dtype, shape)])
    if g.chance(0.3):
        axis = int(g.rng.integers(0, len(shape)))
        f = g.input(shape)
        idx = g.op("ArgMax", [f], [(INT64, shape[:axis] + (1,) + shape[axis + 1:])], axis=axis, keepdims=1)
        c = g.op("Cast", [idx], [(dtype, idx.shape)], to=dtype)
    return g.op("Cast", [c], [(FLOAT, c.shape)], to=FLOAT)


RULES = [
    (unary, 10), (binary, 12), (reduce, 4), (softmax, 3), (layer_norm, 2), (matmul, 5), (gemm, 2),
    (conv, 6), (conv_transpose, 2), (pool, 3), (batch_norm, 2), (transpose, 4), (reshape, 4),
    (flatten, 1), (unsqueeze_squeeze, 2), (slice_, 3), (concat, 3), (split, 2), (pad, 2), (gather, 2),
    (resize, 2), (expand, 2), (depth_space, 1), (where, 1), (double_path, 1), (integer_path, 1),
]


def generate(seed, max_nodes=None):
    rng = np.random.default_rng(seed)
    g = Builder(rng)
    for _ in range(int(rng.integers(1, 3))):
        rank = int(rng.integers(1, 5))
        g.input(tuple(int(rng.integers(1, 9)) for _ in range(rank)) if rank < 4
                else (int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(3, 11)),
                      int(rng.integers(3, 11))))
    target = max_nodes or int(rng.integers(3, 28))
    rules, weights = zip(*RULES)
    p = np.array(weights, dtype=float) / sum(weights)
    attempts = 0
    while sum(1 for v in g.values if v.computed) < target and attempts < 200:
        attempts += 1
        rule = rules[int(rng.choice(len(rules), p=p))]
        try:
            rule(g)
        except (IndexError, ValueError):
            continue  # nothing suitable to apply the rule to (an empty pick)
    computed = [v for v in g.values if v.computed]
    if not computed:
        computed = [unary(g)]
    # Outputs: every computed value nobody reads, plus a few intermediates.
    read = {name for node in g.nodes for name in node.input}
    outputs = [v for v in g.values if v.computed and v.name not in read]
    outputs += [v for v in g.values if v.computed and v.name in read and g.chance(0.15)]
    graph = helper.make_graph(g.nodes, f"fuzz_{seed}", g.inputs,
                              [helper.make_tensor_value_info(v.name, v.dtype, v.shape) for v in outputs],
                              g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="orchid graph_gen")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model
