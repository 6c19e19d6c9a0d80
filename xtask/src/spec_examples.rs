//! The worked examples of the operator specifications, as data: one [`Case`] per
//! `testdata/spec-examples/<name>/` directory.
//!
//! Every expected output is a literal, copied from the spec text or worked by hand from the spec's
//! equations (the working is in the comment above the case). Nothing in xtask implements an
//! operator, so a bug here cannot make a wrong answer agree with a wrong kernel: the literals are
//! an independent oracle for the library. The one exception is the backward pass (GatherGrad,
//! GatherElementsGrad), whose float sums were computed with numpy's `np.add.at`, an independent
//! implementation of "add at the gathered positions"; the comments give the numpy expressions.
//!
//! Sources: the ONNX operator docs (onnx.ai/onnx/operators) of GatherElements 11 and 13,
//! ScatterElements 11, 13, 16 and 18, Gather, with the Gather shape table that describes
//! Gather as a layer (data (P, Q) or (P, Q, R), indices a scalar or (R, S)), GatherND 11, 12 and
//! 13, ScatterND 11, 13, 16 and 18, and TensorScatter 24; OpenVINO's Gather-8 specification
//! (`operation-specs/movement/gather-8`, seven examples); and onnxruntime's training op
//! definitions of GatherGrad and GatherElementsGrad (`com.microsoft` version 1, docs/semantics.md
//! D14). Scatter-9 is ScatterElements-11 under its old name, so its examples are ScatterElements'.

// tidy: long file: data: one case per worked example of the spec, each with its working.

/// One single-node test: the node, its inputs and the outputs the spec says it must produce.
#[derive(Debug, Clone)]
pub struct Case {
    /// Directory name under `testdata/spec-examples/`; ends in `_opset<N>`.
    pub name: &'static str,
    /// Where the example comes from, stored as the graph's doc_string.
    pub source: &'static str,
    /// The op type of the single node.
    pub op_type: &'static str,
    /// The node's domain: `""` (the default ai.onnx domain) for ONNX operators, otherwise
    /// `org.openvinotoolkit` or `com.microsoft`.
    pub domain: &'static str,
    /// The ai.onnx opset the model imports (always imported, first).
    pub opset: i64,
    /// Further opset imports, written after the ai.onnx one, in this order: `(domain, version)`.
    pub imports: Vec<(&'static str, i64)>,
    /// Node attributes, in the order they are written.
    pub attributes: Vec<Attribute>,
    /// Graph inputs, which are also the node's inputs, in order.
    pub inputs: Vec<Tensor>,
    /// Graph outputs with their expected values.
    pub outputs: Vec<Tensor>,
    /// How the tensor files store their values.
    pub storage: Storage,
}

/// A node attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attribute {
    /// An INT attribute such as `axis`.
    Int(&'static str, i64),
    /// A STRING attribute such as `reduction`.
    Str(&'static str, &'static str),
}

/// Which TensorProto field holds the values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// `raw_data`, fixed-width little-endian (strings still go to `string_data`: the format
    /// forbids raw strings).
    Raw,
    /// The typed field of the dtype: `float_data`, `int32_data` (also bool and 16-bit float bit
    /// patterns), `int64_data`, `string_data`.
    Typed,
}

/// A named tensor with a static shape and its values in row-major order.
#[derive(Debug, Clone)]
pub struct Tensor {
    /// The graph input or output name, also written into the `.pb` file.
    pub name: &'static str,
    /// Dimensions; empty for a rank-0 tensor.
    pub shape: Vec<i64>,
    /// The elements, `shape.iter().product()` of them.
    pub values: Values,
}

/// Element values of one dtype.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// FLOAT.
    Float(Vec<f32>),
    /// DOUBLE.
    Double(Vec<f64>),
    /// FLOAT16 as IEEE 754 binary16 bit patterns, so the literal is exactly what is stored.
    Float16(Vec<u16>),
    /// BFLOAT16 as bit patterns (the high half of the f32 pattern).
    Bfloat16(Vec<u16>),
    /// INT32.
    Int32(Vec<i32>),
    /// INT64.
    Int64(Vec<i64>),
    /// BOOL.
    Bool(Vec<bool>),
    /// STRING (UTF-8 here, though ONNX strings are bytes).
    String(Vec<&'static str>),
}

impl Values {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Values::Float(v) => v.len(),
            Values::Double(v) => v.len(),
            Values::Float16(v) | Values::Bfloat16(v) => v.len(),
            Values::Int32(v) => v.len(),
            Values::Int64(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::String(v) => v.len(),
        }
    }

    /// The index values, when this is an int32 or int64 tensor.
    #[cfg(test)]
    pub fn as_indices(&self) -> Option<Vec<i64>> {
        match self {
            Values::Int32(v) => Some(v.iter().map(|&k| i64::from(k)).collect()),
            Values::Int64(v) => Some(v.clone()),
            _ => None,
        }
    }
}

impl Tensor {
    /// The element count the shape calls for (1 for rank 0).
    pub fn numel(&self) -> i64 {
        self.shape.iter().product()
    }
}

impl Case {
    /// The value of the INT attribute `name`, or `default` when the case does not write it.
    #[cfg(test)]
    pub fn int_attr(&self, name: &str, default: i64) -> i64 {
        self.attributes
            .iter()
            .find_map(|a| match *a {
                Attribute::Int(n, v) if n == name => Some(v),
                _ => None,
            })
            .unwrap_or(default)
    }

    /// The value of the `axis` attribute, or its default 0.
    #[cfg(test)]
    pub fn axis(&self) -> i64 {
        self.int_attr("axis", 0)
    }

    /// The input named `name`.
    #[cfg(test)]
    pub fn input_named(&self, name: &str) -> Option<&Tensor> {
        self.inputs.iter().find(|t| t.name == name)
    }

    pub(crate) fn with_axis(mut self, axis: i64) -> Self {
        self.attributes.push(Attribute::Int("axis", axis));
        self
    }

    pub(crate) fn with_reduction(mut self, reduction: &'static str) -> Self {
        self.attributes.push(Attribute::Str("reduction", reduction));
        self
    }

    pub(crate) fn input(mut self, tensor: Tensor) -> Self {
        self.inputs.push(tensor);
        self
    }

    pub(crate) fn output(mut self, tensor: Tensor) -> Self {
        self.outputs.push(tensor);
        self
    }

    pub(crate) fn typed(mut self) -> Self {
        self.storage = Storage::Typed;
        self
    }

    pub(crate) fn with_int(mut self, name: &'static str, value: i64) -> Self {
        self.attributes.push(Attribute::Int(name, value));
        self
    }

    pub(crate) fn with_str(mut self, name: &'static str, value: &'static str) -> Self {
        self.attributes.push(Attribute::Str(name, value));
        self
    }

    /// Puts the node in `domain` and imports that domain at `version` (after ai.onnx).
    pub(crate) fn in_domain(mut self, domain: &'static str, version: i64) -> Self {
        self.domain = domain;
        self.imports.push((domain, version));
        self
    }
}

fn case(name: &'static str, op_type: &'static str, opset: i64, source: &'static str) -> Case {
    Case {
        name,
        source,
        op_type,
        domain: "",
        opset,
        imports: Vec::new(),
        attributes: Vec::new(),
        inputs: Vec::new(),
        outputs: Vec::new(),
        storage: Storage::Raw,
    }
}

pub(crate) fn tensor(name: &'static str, shape: &[i64], values: Values) -> Tensor {
    Tensor {
        name,
        shape: shape.to_vec(),
        values,
    }
}

pub(crate) fn f32s(name: &'static str, shape: &[i64], v: &[f32]) -> Tensor {
    tensor(name, shape, Values::Float(v.to_vec()))
}

fn f64s(name: &'static str, shape: &[i64], v: &[f64]) -> Tensor {
    tensor(name, shape, Values::Double(v.to_vec()))
}

fn f16s(name: &'static str, shape: &[i64], bits: &[u16]) -> Tensor {
    tensor(name, shape, Values::Float16(bits.to_vec()))
}

fn bf16s(name: &'static str, shape: &[i64], bits: &[u16]) -> Tensor {
    tensor(name, shape, Values::Bfloat16(bits.to_vec()))
}

pub(crate) fn i32s(name: &'static str, shape: &[i64], v: &[i32]) -> Tensor {
    tensor(name, shape, Values::Int32(v.to_vec()))
}

pub(crate) fn i64s(name: &'static str, shape: &[i64], v: &[i64]) -> Tensor {
    tensor(name, shape, Values::Int64(v.to_vec()))
}

fn bools(name: &'static str, shape: &[i64], v: &[bool]) -> Tensor {
    tensor(name, shape, Values::Bool(v.to_vec()))
}

pub(crate) fn strs(name: &'static str, shape: &[i64], v: &[&'static str]) -> Tensor {
    tensor(name, shape, Values::String(v.to_vec()))
}

const GE11_EX1: &str = "ONNX GatherElements-11 doc, Example 1. The v11 text prints the output \
     with an extra bracket level; the output has the shape of indices, (2, 2), as the v13 text shows";
const GE11_EX2: &str = "ONNX GatherElements-11 doc, Example 2. The v11 text prints the output \
     with an extra bracket level; the output has the shape of indices, (2, 3), as the v13 text shows";
const SE_EX1: &str =
    "ONNX ScatterElements doc (identical in versions 11, 13, 16 and 18), Example 1";
const SE_EX2: &str =
    "ONNX ScatterElements doc (identical in versions 11, 13, 16 and 18), Example 2";
const SE_DUP: &str = "ONNX ScatterElements doc, reduction equations \
     output[i][indices[i][j]] = f(output[i][indices[i][j]], updates[i][j]) with axis = 1, applied \
     in row-major order of indices; worked by hand";
const SCATTER9: &str = "ONNX Scatter-9 (deprecated at 11 in favour of ScatterElements, same \
     semantics), example of the ScatterElements doc";

/// Every spec example, in the order the README lists them.
pub fn cases() -> Vec<Case> {
    let mut all = Vec::new();
    all.extend(gather_elements());
    all.extend(scatter_elements());
    all.extend(scatter());
    all.extend(gather());
    all.extend(openvino_gather());
    all.extend(gather_nd());
    all.extend(scatter_nd());
    all.extend(tensor_scatter());
    all.extend(gather_grad());
    all
}

/// GatherElements: `out[i][j] = data[indices[i][j]][j]` (axis 0), `data[i][indices[i][j]]` (axis 1).
fn gather_elements() -> Vec<Case> {
    // Example 1, axis 1: row 0 takes data[0][0], data[0][0] = 1, 1; row 1 takes data[1][1],
    // data[1][0] = 4, 3.
    let example1 = |name, opset, source| {
        case(name, "GatherElements", opset, source)
            .with_axis(1)
            .input(f32s("data", &[2, 2], &[1.0, 2.0, 3.0, 4.0]))
            .input(i64s("indices", &[2, 2], &[0, 0, 1, 0]))
            .output(f32s("output", &[2, 2], &[1.0, 1.0, 4.0, 3.0]))
    };
    // Example 2, axis 0: row 0 = data[1][0], data[2][1], data[0][2] = 4, 8, 3; row 1 =
    // data[2][0], data[0][1], data[0][2] = 7, 2, 3.
    let example2_data = f32s(
        "data",
        &[3, 3],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    );
    let example2_output = f32s("output", &[2, 3], &[4.0, 8.0, 3.0, 7.0, 2.0, 3.0]);
    vec![
        example1("gather_elements_example1_opset11", 11, GE11_EX1).typed(),
        example1(
            "gather_elements_example1_opset13",
            13,
            "ONNX GatherElements-13 doc, Example 1",
        ),
        // int32 indices (Tind = int32).
        case(
            "gather_elements_example2_opset11",
            "GatherElements",
            11,
            GE11_EX2,
        )
        .with_axis(0)
        .input(example2_data.clone())
        .input(i32s("indices", &[2, 3], &[1, 2, 0, 2, 0, 0]))
        .output(example2_output.clone()),
        case(
            "gather_elements_example2_opset13",
            "GatherElements",
            13,
            "ONNX GatherElements-13 doc, Example 2",
        )
        .with_axis(0)
        .input(example2_data)
        .input(i64s("indices", &[2, 3], &[1, 2, 0, 2, 0, 0]))
        .output(example2_output),
        // axis 0, s = 3: row 0 = data[-1 -> 2][0], data[-2 -> 1][1], data[0][2] = 7, 5, 3;
        // row 1 = data[-2 -> 1][0], data[0][1], data[0][2] = 4, 2, 3.
        case(
            "gather_elements_negative_indices_opset13",
            "GatherElements",
            13,
            "ONNX GatherElements-13 doc: indices in [-s, s-1]; the official negative-indices \
             example, worked by hand",
        )
        .with_axis(0)
        .input(f32s(
            "data",
            &[3, 3],
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        ))
        .input(i64s("indices", &[2, 3], &[-1, -2, 0, -2, 0, 0]))
        .output(f32s("output", &[2, 3], &[7.0, 5.0, 3.0, 4.0, 2.0, 3.0])),
        // Example 1 in float16: 1.0 = 0x3C00, 2.0 = 0x4000, 3.0 = 0x4200, 4.0 = 0x4400, so the
        // output [[1, 1], [4, 3]] is [0x3C00, 0x3C00, 0x4400, 0x4200].
        case(
            "gather_elements_float16_opset13",
            "GatherElements",
            13,
            "ONNX GatherElements-13 doc, Example 1 with float16 data",
        )
        .with_axis(1)
        .input(f16s("data", &[2, 2], &[0x3C00, 0x4000, 0x4200, 0x4400]))
        .input(i64s("indices", &[2, 2], &[0, 0, 1, 0]))
        .output(f16s("output", &[2, 2], &[0x3C00, 0x3C00, 0x4400, 0x4200])),
        // axis 0, data [[T, F], [F, T]], indices [[1, 0], [0, 0]]: row 0 = data[1][0],
        // data[0][1] = F, F; row 1 = data[0][0], data[0][1] = T, F.
        case(
            "gather_elements_bool_opset13",
            "GatherElements",
            13,
            "ONNX GatherElements-13 doc equations (axis = 0) with bool data; worked by hand",
        )
        .with_axis(0)
        .input(bools("data", &[2, 2], &[true, false, false, true]))
        .input(i64s("indices", &[2, 2], &[1, 0, 0, 0]))
        .output(bools("output", &[2, 2], &[false, false, true, false])),
    ]
}

/// ScatterElements: `output[indices[i][j]][j] = updates[i][j]` (axis 0),
/// `output[i][indices[i][j]] = updates[i][j]` (axis 1), on a copy of data.
fn scatter_elements() -> Vec<Case> {
    let mut cases = Vec::new();
    for (name, opset) in [
        ("scatter_elements_example1_opset11", 11),
        ("scatter_elements_example1_opset13", 13),
        ("scatter_elements_example1_opset16", 16),
        ("scatter_elements_example1_opset18", 18),
    ] {
        cases.push(example1("ScatterElements", name, opset, SE_EX1));
    }
    for (name, opset) in [
        ("scatter_elements_example2_opset11", 11),
        ("scatter_elements_example2_opset13", 13),
        ("scatter_elements_example2_opset16", 16),
    ] {
        cases.push(example2("ScatterElements", name, opset, SE_EX2));
    }
    // Spelling out the default reduction must mean the same as leaving it out.
    cases.push(
        example2(
            "ScatterElements",
            "scatter_elements_example2_opset18",
            18,
            "ONNX ScatterElements-18 doc, Example 2, with reduction = \"none\" written out",
        )
        .with_reduction("none"),
    );
    // axis 1, s = 5: 1 -> position 1 gets 1.1, -3 -> 5 - 3 = 2 gets 2.1.
    cases.push(
        case(
            "scatter_elements_negative_indices_opset13",
            "ScatterElements",
            13,
            "ONNX ScatterElements-13 doc: indices in [-s, s-1]; the official negative-indices \
             example, worked by hand",
        )
        .with_axis(1)
        .input(f32s("data", &[1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]))
        .input(i64s("indices", &[1, 2], &[1, -3]))
        .input(f32s("updates", &[1, 2], &[1.1, 2.1]))
        .output(f32s("output", &[1, 5], &[1.0, 1.1, 2.1, 4.0, 5.0])),
    );
    // Both updates land on output[0][1], which starts at 2.0: add 2 + 1.1 + 2.1 = 5.2,
    // mul 2 * 1.1 * 2.1 = 4.62, max(2, 1.1, 2.1) = 2.1, min(2, 1.1, 2.1) = 1.1. The float
    // results are compared with a tolerance, so the decimal literals stand as written.
    for (name, opset, reduction, cell) in [
        ("scatter_elements_reduction_add_opset16", 16, "add", 5.2),
        ("scatter_elements_reduction_mul_opset16", 16, "mul", 4.62),
        ("scatter_elements_reduction_max_opset18", 18, "max", 2.1),
        ("scatter_elements_reduction_min_opset18", 18, "min", 1.1),
    ] {
        cases.push(
            case(name, "ScatterElements", opset, SE_DUP)
                .with_axis(1)
                .with_reduction(reduction)
                .input(f32s("data", &[1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]))
                .input(i64s("indices", &[1, 2], &[1, 1]))
                .input(f32s("updates", &[1, 2], &[1.1, 2.1]))
                .output(f32s("output", &[1, 5], &[1.0, cell, 3.0, 4.0, 5.0])),
        );
    }
    // axis 0, output[indices[i][j]][j] += updates[i][j]:
    //   i = 0: [1][0] += 10, [0][1] += 20, [1][2] += 30
    //   i = 1: [1][0] += 40, [1][1] += 50, [1][2] += 60
    // row 0 = 1, 2 + 20, 3 = 1, 22, 3; row 1 = 4 + 10 + 40, 5 + 50, 6 + 30 + 60 = 54, 55, 96.
    cases.push(
        case(
            "scatter_elements_reduction_add_int32_opset16",
            "ScatterElements",
            16,
            "ONNX ScatterElements-16 doc, \"add\" equation with axis = 0 and int32 data and \
             indices, duplicates included; worked by hand",
        )
        .with_axis(0)
        .with_reduction("add")
        .input(i32s("data", &[2, 3], &[1, 2, 3, 4, 5, 6]))
        .input(i32s("indices", &[2, 3], &[1, 0, 1, 1, 1, 1]))
        .input(i32s("updates", &[2, 3], &[10, 20, 30, 40, 50, 60]))
        .output(i32s("output", &[2, 3], &[1, 22, 3, 54, 55, 96]))
        .typed(),
    );
    // axis 0 on a 1-D tensor: output[2] = "z", output[0] = "x".
    cases.push(
        case(
            "scatter_elements_string_opset13",
            "ScatterElements",
            13,
            "ONNX ScatterElements-13 doc equations on a 1-D string tensor; worked by hand",
        )
        .with_axis(0)
        .input(strs("data", &[3], &["a", "b", "c"]))
        .input(i64s("indices", &[2], &[2, 0]))
        .input(strs("updates", &[2], &["z", "x"]))
        .output(strs("output", &[3], &["x", "b", "z"])),
    );
    cases
}

/// Scatter-9, at opset 10 as the official tests run it (it is deprecated from opset 11).
fn scatter() -> Vec<Case> {
    vec![
        example1("Scatter", "scatter_example1_opset10", 10, SCATTER9),
        example2("Scatter", "scatter_example2_opset10", 10, SCATTER9),
    ]
}

/// ScatterElements Example 1, default axis 0 (`output[indices[i][j]][j] = updates[i][j]`):
///   i = 0: [1][0] = 1.0, [0][1] = 1.1, [2][2] = 1.2
///   i = 1: [0][0] = 2.0, [2][1] = 2.1, [1][2] = 2.2
/// giving [[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]], as the doc prints.
fn example1(op_type: &'static str, name: &'static str, opset: i64, source: &'static str) -> Case {
    case(name, op_type, opset, source)
        .input(f32s("data", &[3, 3], &[0.0; 9]))
        .input(i64s("indices", &[2, 3], &[1, 0, 2, 0, 2, 1]))
        .input(f32s("updates", &[2, 3], &[1.0, 1.1, 1.2, 2.0, 2.1, 2.2]))
        .output(f32s(
            "output",
            &[3, 3],
            &[2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2],
        ))
}

/// ScatterElements Example 2, axis 1: positions 1 and 3 of the single row get 1.1 and 2.1.
fn example2(op_type: &'static str, name: &'static str, opset: i64, source: &'static str) -> Case {
    case(name, op_type, opset, source)
        .with_axis(1)
        .input(f32s("data", &[1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]))
        .input(i64s("indices", &[1, 2], &[1, 3]))
        .input(f32s("updates", &[1, 2], &[1.1, 2.1]))
        .output(f32s("output", &[1, 5], &[1.0, 1.1, 3.0, 2.1, 5.0]))
}

/// Gather: output shape `data.shape[:axis] ++ indices.shape ++ data.shape[axis+1:]`, each index
/// selecting a slice of data along the axis. Gather-1 has no negative indices, so cases at
/// opset < 11 use only indices in [0, s-1].
fn gather() -> Vec<Case> {
    const TABLE: &str = "Gather shape table, with small concrete values; worked by hand";
    vec![
        // (P, Q) = (3, 2), scalar index 1, axis 0: output[q] = data[1, q] = [3, 4], shape (Q).
        case("gather_table_scalar_axis0_opset1", "Gather", 1, TABLE)
            .with_axis(0)
            .input(f32s("data", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
            .input(i64s("indices", &[], &[1]))
            .output(f32s("output", &[2], &[3.0, 4.0])),
        // (P, Q, R) = (2, 3, 2) holding 1..12, scalar index 2, axis 1:
        // output[p, r] = data[p, 2, r]: p = 0 -> [5, 6], p = 1 -> [11, 12]; shape (P, R).
        case("gather_table_scalar_axis1_opset11", "Gather", 11, TABLE)
            .with_axis(1)
            .input(f32s(
                "data",
                &[2, 3, 2],
                &[
                    1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
                ],
            ))
            .input(i64s("indices", &[], &[2]))
            .output(f32s("output", &[2, 2], &[5.0, 6.0, 11.0, 12.0])),
        // (P, Q) = (3, 2), (R, S) = (2, 2) indices [[2, 0], [1, 2]], axis 0:
        // output[r, s, q] = data[indices[r, s], q] = [[row2, row0], [row1, row2]]; shape (R, S, Q).
        case("gather_table_2d_indices_axis0_opset13", "Gather", 13, TABLE)
            .with_axis(0)
            .input(f32s("data", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
            .input(i64s("indices", &[2, 2], &[2, 0, 1, 2]))
            .output(f32s(
                "output",
                &[2, 2, 2],
                &[5.0, 6.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            )),
        // (P, Q) = (2, 3), (R, S) = (2, 2) int32 indices [[0, 2], [1, 0]], axis 1:
        // output[p, r, s] = data[p, indices[r, s]]: p = 0 -> [[1, 3], [2, 1]],
        // p = 1 -> [[4, 6], [5, 4]]; shape (P, R, S).
        case("gather_table_2d_indices_axis1_opset1", "Gather", 1, TABLE)
            .with_axis(1)
            .input(f32s("data", &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
            .input(i32s("indices", &[2, 2], &[0, 2, 1, 0]))
            .output(f32s(
                "output",
                &[2, 2, 2],
                &[1.0, 3.0, 2.0, 1.0, 4.0, 6.0, 5.0, 4.0],
            )),
        // The same gather with axis -1, which names axis 1 of the rank-2 data.
        case(
            "gather_negative_axis_opset13",
            "Gather",
            13,
            "ONNX Gather-13 doc: negative axis counts from the back; Gather shape table row 4",
        )
        .with_axis(-1)
        .input(f32s("data", &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
        .input(i64s("indices", &[2, 2], &[0, 2, 1, 0]))
        .output(f32s(
            "output",
            &[2, 2, 2],
            &[1.0, 3.0, 2.0, 1.0, 4.0, 6.0, 5.0, 4.0],
        )),
        // Rows 0, 1 and 1, 2 of data; shape (2, 2, 2).
        case(
            "gather_doc_example1_axis0_opset11",
            "Gather",
            11,
            "ONNX Gather doc, Example 1 (axis = 0)",
        )
        .with_axis(0)
        .input(f32s("data", &[3, 2], &[1.0, 1.2, 2.3, 3.4, 4.5, 5.7]))
        .input(i64s("indices", &[2, 2], &[0, 1, 1, 2]))
        .output(f32s(
            "output",
            &[2, 2, 2],
            &[1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7],
        )),
        // Columns 0 and 2 of each row; shape (3, 1, 2).
        case(
            "gather_doc_example2_axis1_opset13",
            "Gather",
            13,
            "ONNX Gather doc, Example 2 (axis = 1)",
        )
        .with_axis(1)
        .input(f32s(
            "data",
            &[3, 3],
            &[1.0, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9],
        ))
        .input(i64s("indices", &[1, 2], &[0, 2]))
        .output(f32s("output", &[3, 1, 2], &[1.0, 1.9, 2.3, 3.9, 4.5, 5.9])),
        // int64 data (3, 2), 1-D indices [2, 0, 2], axis 0: rows 2, 0, 2; shape (3, 2).
        case(
            "gather_1d_indices_axis0_int64_opset1",
            "Gather",
            1,
            "ONNX Gather-1 doc equations with 1-D indices and int64 data; worked by hand",
        )
        .with_axis(0)
        .input(i64s("data", &[3, 2], &[10, 11, 20, 21, 30, 31]))
        .input(i64s("indices", &[3], &[2, 0, 2]))
        .output(i64s("output", &[3, 2], &[30, 31, 10, 11, 30, 31])),
        // (2, 3), 1-D indices [-1, 0, -3], axis 1, s = 3: columns 2, 0, 0:
        // row 0 -> [3, 1, 1], row 1 -> [6, 4, 4]; shape (2, 3).
        case(
            "gather_negative_indices_axis1_opset11",
            "Gather",
            11,
            "ONNX Gather-11 doc: indices in [-s, s-1]; 1-D indices on axis 1, worked by hand",
        )
        .with_axis(1)
        .input(f32s("data", &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
        .input(i64s("indices", &[3], &[-1, 0, -3]))
        .output(f32s("output", &[2, 3], &[3.0, 1.0, 1.0, 6.0, 4.0, 4.0])),
        // 1-D data with a scalar index: the only axis disappears and the output is rank 0.
        case(
            "gather_scalar_index_rank0_output_opset13",
            "Gather",
            13,
            "Gather shape rule: scalar indices remove the axis, so rank-1 data gives rank \
             q + r - 1 = 0",
        )
        .with_axis(0)
        .input(i64s("data", &[4], &[10, 20, 30, 40]))
        .input(i64s("indices", &[], &[3]))
        .output(i64s("output", &[], &[40]))
        .typed(),
        // Strings, 1-D data, (2, 2) indices [[2, 0], [1, 1]], axis 0.
        case(
            "gather_string_opset13",
            "Gather",
            13,
            "ONNX Gather-13 doc equations with string data; worked by hand",
        )
        .with_axis(0)
        .input(strs("data", &[3], &["alpha", "βeta", "gamma"]))
        .input(i64s("indices", &[2, 2], &[2, 0, 1, 1]))
        .output(strs("output", &[2, 2], &["gamma", "alpha", "βeta", "βeta"])),
        // bfloat16 [[1, 2], [3, 4]] = [0x3F80, 0x4000, 0x4040, 0x4080]; indices [1, 0] on axis 0
        // swap the rows: [[3, 4], [1, 2]].
        case(
            "gather_bfloat16_opset13",
            "Gather",
            13,
            "ONNX Gather-13 doc (bfloat16 allowed from version 13); worked by hand",
        )
        .with_axis(0)
        .input(bf16s("data", &[2, 2], &[0x3F80, 0x4000, 0x4040, 0x4080]))
        .input(i64s("indices", &[2], &[1, 0]))
        .output(bf16s("output", &[2, 2], &[0x4040, 0x4080, 0x3F80, 0x4000]))
        .typed(),
    ]
}

/// OpenVINO's operator domain (docs/semantics.md D13).
pub const OPENVINO: &str = "org.openvinotoolkit";
/// onnxruntime's contrib and training domain (docs/semantics.md D14).
pub const MICROSOFT: &str = "com.microsoft";

/// OpenVINO Gather-8: `output[p_0, .., p_{axis-1}, i_b, .., i_{M-1}, p_{axis+1}, ..] =
/// data[p_0, .., p_{axis-1}, indices[p_0, .., p_{b-1}, i_b, .., i_{M-1}], p_{axis+1}, ..]`, with
/// `axis` a third input, `batch_dims` normalised against the indices rank, and out-of-range
/// indices giving zeros. The seven examples of the spec, inputs and outputs as it prints them; the
/// model imports ai.onnx 13 beside org.openvinotoolkit 8.
fn openvino_gather() -> Vec<Case> {
    let ov = |name, source| case(name, "Gather", 13, source).in_domain(OPENVINO, 8);
    let axis = |a: i64| i64s("axis", &[], &[a]);
    let one_to_five = || i64s("data", &[5], &[1, 2, 3, 4, 5]);
    // Examples 2 and 5 share their inputs: batch 0 = [1..5] picks 0, 0, 4 -> [1, 1, 5];
    // batch 1 = [6..10] picks 4, 0, 0 -> [10, 6, 6].
    let batched_data = || i64s("data", &[2, 5], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    let batched_indices = || i64s("indices", &[2, 3], &[0, 0, 4, 4, 0, 0]);
    let batched_output = || i64s("output", &[2, 3], &[1, 1, 5, 10, 6, 6]);
    // Example 4: data (2, 1, 5, 4) holding 1..40; batch 0 takes rows 1, 2, 4 of its 5 x 4 block
    // ([5..8], [9..12], [17..20]), batch 1 rows 4, 3, 2 of its block ([37..40], [33..36],
    // [29..32]); output shape data.shape[:2] ++ indices.shape[1:] ++ data.shape[3:] = (2, 1, 3, 4).
    let ex4_data: Vec<f32> = (1..=40).map(|v| v as f32).collect();
    vec![
        // Example 1, batch_dims left at its default 0: elements 0, 0, 4.
        ov(
            "openvino_gather8_example1_opset13",
            "OpenVINO Gather-8 spec, Example 1 (default batch_dims); batch_dims is not written",
        )
        .input(one_to_five())
        .input(i64s("indices", &[3], &[0, 0, 4]))
        .input(axis(0))
        .output(i64s("output", &[3], &[1, 1, 5])),
        ov(
            "openvino_gather8_example2_opset13",
            "OpenVINO Gather-8 spec, Example 2 (batch_dims = 1, axis = 1)",
        )
        .with_int("batch_dims", 1)
        .input(batched_data())
        .input(batched_indices())
        .input(axis(1))
        .output(batched_output()),
        // Example 3, batch_dims = 2, axis = 2: each of the four 5-element batches picks its own
        // three indices: [0, 0, 4] -> 1, 1, 5; [4, 0, 0] -> 10, 6, 6; [1, 2, 4] -> 12, 13, 15;
        // [4, 3, 2] -> 20, 19, 18. The axis input is the 1-element 1-D tensor [2] here (D13).
        ov(
            "openvino_gather8_example3_opset13",
            "OpenVINO Gather-8 spec, Example 3 (batch_dims = 2, axis = 2), axis given as a \
             1-element 1-D tensor",
        )
        .with_int("batch_dims", 2)
        .input(i64s(
            "data",
            &[2, 2, 5],
            &[
                1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
            ],
        ))
        .input(i64s(
            "indices",
            &[2, 2, 3],
            &[0, 0, 4, 4, 0, 0, 1, 2, 4, 4, 3, 2],
        ))
        .input(i64s("axis", &[1], &[2]))
        .output(i64s(
            "output",
            &[2, 2, 3],
            &[1, 1, 5, 10, 6, 6, 12, 13, 15, 20, 19, 18],
        )),
        ov(
            "openvino_gather8_example4_opset13",
            "OpenVINO Gather-8 spec, Example 4 (axis > batch_dims: batch_dims = 1, axis = 2), \
             float data",
        )
        .with_int("batch_dims", 1)
        .input(f32s("data", &[2, 1, 5, 4], &ex4_data))
        .input(i64s("indices", &[2, 3], &[1, 2, 4, 4, 3, 2]))
        .input(axis(2))
        .output(f32s(
            "output",
            &[2, 1, 3, 4],
            &[
                5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 17.0, 18.0, 19.0, 20.0, 37.0, 38.0,
                39.0, 40.0, 33.0, 34.0, 35.0, 36.0, 29.0, 30.0, 31.0, 32.0,
            ],
        )),
        // Example 5: batch_dims = -1 normalises to indices.rank - 1 = 1, so it is Example 2.
        // The axis is an int32 scalar here.
        ov(
            "openvino_gather8_example5_opset13",
            "OpenVINO Gather-8 spec, Example 5 (negative batch_dims = -1 -> 2 - 1 = 1), axis \
             given as an int32 scalar",
        )
        .with_int("batch_dims", -1)
        .input(batched_data())
        .input(batched_indices())
        .input(i32s("axis", &[], &[1]))
        .output(batched_output()),
        // Example 6: -2 -> 5 - 2 = 3 and -1 -> 4, so elements 0, 3, 4 = 1, 4, 5. int32 indices.
        ov(
            "openvino_gather8_example6_opset13",
            "OpenVINO Gather-8 spec, Example 6 (negative indices), int32 indices",
        )
        .with_int("batch_dims", 0)
        .input(one_to_five())
        .input(i32s("indices", &[3], &[0, -2, -1]))
        .input(axis(0))
        .output(i64s("output", &[3], &[1, 4, 5])),
        // Example 7: 3 -> 4; 10 and -20 (-> -15) stay outside [0, 4], so their outputs are 0.
        ov(
            "openvino_gather8_example7_opset13",
            "OpenVINO Gather-8 spec, Example 7 (out-of-range indices fill zeros)",
        )
        .with_int("batch_dims", 0)
        .input(one_to_five())
        .input(i64s("indices", &[3], &[3, 10, -20]))
        .input(axis(0))
        .output(i64s("output", &[3], &[4, 0, 0])),
    ]
}

/// GatherND: each k-tuple of `indices` (k = indices.shape[-1]) selects `data[b.., tuple.., ..]`,
/// a slice of shape `data.shape[b + k:]`; the output has shape
/// `indices.shape[:-1] ++ data.shape[b + k:]`. The five examples of the doc (identical in versions
/// 11, 12 and 13 but for Example 5, which needs batch_dims from version 12), inputs and outputs as
/// the doc prints them.
fn gather_nd() -> Vec<Case> {
    const EX: [&str; 5] = [
        "ONNX GatherND doc, Example 1 (batch_dims = 0, k = r: elements)",
        "ONNX GatherND doc, Example 2 (batch_dims = 0, k < r: rows)",
        "ONNX GatherND doc, Example 3 (batch_dims = 0, rank-3 data)",
        "ONNX GatherND doc, Example 4 (batch_dims = 0, rank-3 indices)",
        "ONNX GatherND doc, Example 5 (batch_dims = 1)",
    ];
    let cube = || [0, 1, 2, 3, 4, 5, 6, 7];
    // Example 1: [0, 0] -> 0, [1, 1] -> 3.
    let example1 = |name, opset| {
        case(name, "GatherND", opset, EX[0])
            .input(i32s("data", &[2, 2], &[0, 1, 2, 3]))
            .input(i64s("indices", &[2, 2], &[0, 0, 1, 1]))
            .output(i32s("output", &[2], &[0, 3]))
    };
    // Example 5: batch 0 = [[0, 1], [2, 3]] takes its row 1 = [2, 3]; batch 1 =
    // [[4, 5], [6, 7]] takes its row 0 = [4, 5].
    let example5 = |name, opset| {
        case(name, "GatherND", opset, EX[4])
            .with_int("batch_dims", 1)
            .input(f32s("data", &[2, 2, 2], &cube().map(|v| v as f32)))
            .input(i64s("indices", &[2, 1], &[1, 0]))
            .output(f32s("output", &[2, 2], &[2.0, 3.0, 4.0, 5.0]))
    };
    vec![
        example1("gather_nd_example1_opset11", 11),
        example1("gather_nd_example1_opset13", 13).typed(),
        // Example 2: [1] -> row 1 = [2, 3], [0] -> row 0 = [0, 1].
        case("gather_nd_example2_opset11", "GatherND", 11, EX[1])
            .input(f32s("data", &[2, 2], &[0.0, 1.0, 2.0, 3.0]))
            .input(i64s("indices", &[2, 1], &[1, 0]))
            .output(f32s("output", &[2, 2], &[2.0, 3.0, 0.0, 1.0])),
        // Example 3: [0, 1] -> data[0][1] = [2, 3], [1, 0] -> data[1][0] = [4, 5]. batch_dims = 0
        // is written out: the attribute exists from version 12.
        case("gather_nd_example3_opset12", "GatherND", 12, EX[2])
            .with_int("batch_dims", 0)
            .input(i64s("data", &[2, 2, 2], &cube().map(i64::from)))
            .input(i64s("indices", &[2, 2], &[0, 1, 1, 0]))
            .output(i64s("output", &[2, 2], &[2, 3, 4, 5])),
        // Example 4: the same tuples as Example 3 inside a (2, 1) grid: [[[2, 3]], [[4, 5]]].
        case("gather_nd_example4_opset13", "GatherND", 13, EX[3])
            .input(f32s("data", &[2, 2, 2], &cube().map(|v| v as f32)))
            .input(i64s("indices", &[2, 1, 2], &[0, 1, 1, 0]))
            .output(f32s("output", &[2, 1, 2], &[2.0, 3.0, 4.0, 5.0])),
        example5("gather_nd_example5_opset12", 12),
        example5("gather_nd_example5_opset13", 13),
    ]
}

/// ScatterND: `output = copy(data)`, then for each idx of `indices.shape[:-1]` in row-major order
/// `output[indices[idx]] = f(output[indices[idx]], updates[idx])`; f overwrites, or is +, *, max,
/// min with `reduction` (16: add, mul; 18: max, min).
fn scatter_nd() -> Vec<Case> {
    const EX1: &str = "ONNX ScatterND doc (identical in versions 11, 13, 16 and 18), Example 1";
    const EX2: &str = "ONNX ScatterND doc (identical in versions 11, 13, 16 and 18), Example 2";
    const RED: &str = "ONNX ScatterND doc, reduction loop output[indices[idx]] = \
         f(output[indices[idx]], updates[idx]) in row-major order of indices.shape[:-1], with \
         duplicate indices; worked by hand";
    // Example 1: positions 4, 3, 1, 7 get 9, 10, 11, 12.
    let example1 = |name, opset| {
        case(name, "ScatterND", opset, EX1)
            .input(f32s(
                "data",
                &[8],
                &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
            ))
            .input(i64s("indices", &[4, 1], &[4, 3, 1, 7]))
            .input(f32s("updates", &[4], &[9.0, 10.0, 11.0, 12.0]))
            .output(f32s(
                "output",
                &[8],
                &[1.0, 11.0, 3.0, 10.0, 9.0, 6.0, 7.0, 12.0],
            ))
    };
    // Example 2: the 4 x 4 blocks 0 and 2 are replaced by the two update blocks.
    let ex2_data: [f32; 64] = [
        1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, //
        1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, //
        8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, //
        8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0,
    ];
    let ex2_updates: [f32; 32] = [
        5.0, 5.0, 5.0, 5.0, 6.0, 6.0, 6.0, 6.0, 7.0, 7.0, 7.0, 7.0, 8.0, 8.0, 8.0, 8.0, //
        1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0, 4.0, 4.0, 4.0, 4.0,
    ];
    let ex2_output: [f32; 64] = [
        5.0, 5.0, 5.0, 5.0, 6.0, 6.0, 6.0, 6.0, 7.0, 7.0, 7.0, 7.0, 8.0, 8.0, 8.0, 8.0, //
        1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, //
        1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0, 4.0, 4.0, 4.0, 4.0, //
        8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0,
    ];
    let example2 = |name, opset| {
        case(name, "ScatterND", opset, EX2)
            .input(f32s("data", &[4, 4, 4], &ex2_data))
            .input(i64s("indices", &[2, 1], &[0, 2]))
            .input(f32s("updates", &[2, 4, 4], &ex2_updates))
            .output(f32s("output", &[4, 4, 4], &ex2_output))
    };
    vec![
        example1("scatter_nd_example1_opset11", 11),
        example1("scatter_nd_example1_opset13", 13).typed(),
        example2("scatter_nd_example2_opset11", 11),
        example2("scatter_nd_example2_opset13", 13),
        // Rows (k = 1 < r = 2): row 1 += [10, 20, 30], row 1 += [1, 2, 3], row 0 += [100, 200, 300]:
        // row 0 = [1 + 100, 2 + 200, 3 + 300] = [101, 202, 303];
        // row 1 = [4 + 10 + 1, 5 + 20 + 2, 6 + 30 + 3] = [15, 27, 39]. Exact in f32.
        case("scatter_nd_reduction_add_opset16", "ScatterND", 16, RED)
            .with_reduction("add")
            .input(f32s("data", &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
            .input(i64s("indices", &[3, 1], &[1, 1, 0]))
            .input(f32s(
                "updates",
                &[3, 3],
                &[10.0, 20.0, 30.0, 1.0, 2.0, 3.0, 100.0, 200.0, 300.0],
            ))
            .output(f32s(
                "output",
                &[2, 3],
                &[101.0, 202.0, 303.0, 15.0, 27.0, 39.0],
            )),
        // Elements (k = r = 2), int32: [0][1] *= 3 then *= -2: 2 * 3 * -2 = -12; [1][0] *= 5:
        // 3 * 5 = 15. Output [[1, -12], [15, 4]].
        case("scatter_nd_reduction_mul_opset16", "ScatterND", 16, RED)
            .with_reduction("mul")
            .input(i32s("data", &[2, 2], &[1, 2, 3, 4]))
            .input(i64s("indices", &[3, 2], &[0, 1, 1, 0, 0, 1]))
            .input(i32s("updates", &[3], &[3, 5, -2]))
            .output(i32s("output", &[2, 2], &[1, -12, 15, 4])),
        // Negative indices count from the back (8 elements): 1, -7 -> 1, 6, -2 -> 6.
        // [1] = max(max(2, 5), 3) = 5; [6] = max(max(7, 0.5), 9) = 9.
        case("scatter_nd_reduction_max_opset18", "ScatterND", 18, RED)
            .with_reduction("max")
            .input(f32s(
                "data",
                &[8],
                &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
            ))
            .input(i64s("indices", &[4, 1], &[1, -7, 6, -2]))
            .input(f32s("updates", &[4], &[5.0, 3.0, 0.5, 9.0]))
            .output(f32s(
                "output",
                &[8],
                &[1.0, 5.0, 3.0, 4.0, 5.0, 6.0, 9.0, 8.0],
            )),
        // Rows: row 0 = min(min([4, 4], [5, 3]), [-1, 8]) = [-1, 3]; row 2 = min([6, 2], [0, 7])
        // = [0, 2]; row 1 stays [1, 9].
        case("scatter_nd_reduction_min_opset18", "ScatterND", 18, RED)
            .with_reduction("min")
            .input(f32s("data", &[3, 2], &[4.0, 4.0, 1.0, 9.0, 6.0, 2.0]))
            .input(i64s("indices", &[3, 1], &[0, 2, 0]))
            .input(f32s("updates", &[3, 2], &[5.0, 3.0, 0.0, 7.0, -1.0, 8.0]))
            .output(f32s("output", &[3, 2], &[-1.0, 3.0, 1.0, 9.0, 0.0, 2.0])),
    ]
}

/// TensorScatter-24, the doc's pseudocode: for each prefix over `past_cache.shape[:axis]` and each
/// `j < sequence_length`, `present[prefix, w[prefix[0]] + j] = update[prefix, j]`, the sequence
/// index taken mod max_sequence_length in circular mode; `axis` defaults to -2, `mode` to
/// "linear", `write_indices` to zeros.
fn tensor_scatter() -> Vec<Case> {
    const PSEUDO: &str = "ONNX TensorScatter-24 doc pseudocode; worked by hand";
    // past (2, 4, 2): batch 0 rows [1, 2], [3, 4], [5, 6], [7, 8]; batch 1 rows [11, 12], [13, 14],
    // [15, 16], [17, 18]. update (2, 2, 2): batch 0 rows [-1, -2], [-3, -4]; batch 1 rows [-5, -6],
    // [-7, -8]. axis -2 = 1 (max_sequence_length 4, sequence_length 2).
    let past = || {
        f32s(
            "past_cache",
            &[2, 4, 2],
            &[
                1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0,
                18.0,
            ],
        )
    };
    let update = || {
        f32s(
            "update",
            &[2, 2, 2],
            &[-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0],
        )
    };
    vec![
        // Linear, write_indices [1, 2] (1 + 2 <= 4, 2 + 2 <= 4): batch 0 rows 1, 2 and batch 1
        // rows 2, 3 take the update rows.
        case("tensor_scatter_linear_opset24", "TensorScatter", 24, PSEUDO)
            .input(past())
            .input(update())
            .input(i64s("write_indices", &[2], &[1, 2]))
            .output(f32s(
                "present_cache",
                &[2, 4, 2],
                &[
                    1.0, 2.0, -1.0, -2.0, -3.0, -4.0, 7.0, 8.0, 11.0, 12.0, 13.0, 14.0, -5.0, -6.0,
                    -7.0, -8.0,
                ],
            )),
        // No write_indices: zeros, so both batches write rows 0 and 1.
        case(
            "tensor_scatter_no_write_indices_opset24",
            "TensorScatter",
            24,
            "ONNX TensorScatter-24 doc: write_indices is optional and assumed zero; pseudocode \
             worked by hand",
        )
        .input(past())
        .input(update())
        .output(f32s(
            "present_cache",
            &[2, 4, 2],
            &[
                -1.0, -2.0, -3.0, -4.0, 5.0, 6.0, 7.0, 8.0, -5.0, -6.0, -7.0, -8.0, 15.0, 16.0,
                17.0, 18.0,
            ],
        )),
        // Circular, axis 1 and mode written out, past zeros, write_indices [1, 3]: batch 0 writes
        // rows 1, 2 = [1, 2], [3, 4]; batch 1 writes row 3 = [5, 6] and row (3 + 1) mod 4 = 0 =
        // [7, 8].
        case(
            "tensor_scatter_circular_opset24",
            "TensorScatter",
            24,
            PSEUDO,
        )
        .with_int("axis", 1)
        .with_str("mode", "circular")
        .input(f32s("past_cache", &[2, 4, 2], &[0.0; 16]))
        .input(f32s(
            "update",
            &[2, 2, 2],
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        ))
        .input(i64s("write_indices", &[2], &[1, 3]))
        .output(f32s(
            "present_cache",
            &[2, 4, 2],
            &[
                0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 7.0, 8.0, 0.0, 0.0, 0.0, 0.0, 5.0, 6.0,
            ],
        )),
    ]
}

/// The backward pass of a Gather layer (D14), com.microsoft version 1 beside ai.onnx 13:
/// GatherGrad(shape, indices, dY; axis) and GatherElementsGrad(dY, shape, indices; axis) give
/// dX = zeros(shape) with dY added at the positions the forward op gathered from; duplicated
/// indices accumulate. The expected dX come from numpy's `np.add.at` (an unbuffered, sequential
/// scatter-add), run once and written here as literals; each comment gives the expression.
fn gather_grad() -> Vec<Case> {
    const GG: &str = "onnxruntime GatherGrad (com.microsoft 1): dX = zeros(shape), dY slices \
         added at the gathered positions; expected output from numpy np.add.at";
    const GEG: &str = "onnxruntime GatherElementsGrad (com.microsoft 1): dX = zeros(shape), dY \
         elements added at the gathered positions; expected output from numpy np.add.at";
    let ms = |name, op, source| case(name, op, 13, source).in_domain(MICROSOFT, 1);
    vec![
        // Forward Gather(data (3, 2), indices [[2, 0], [2, 2]], axis 0) -> dY (2, 2, 2).
        // dX = np.zeros((3, 2), np.float32)
        // np.add.at(dX, np.array([[2, 0], [2, 2]]), dY)
        // -> [[2, 4], [0, 0], [1.5, 2.5]]  (row 2 = [0.5 + 1.25 - 0.25, -1 + 3 + 0.5])
        ms("gather_grad_axis0_opset13", "GatherGrad", GG)
            .with_axis(0)
            .input(i64s("shape", &[2], &[3, 2]))
            .input(i64s("indices", &[2, 2], &[2, 0, 2, 2]))
            .input(f32s(
                "dY",
                &[2, 2, 2],
                &[0.5, -1.0, 2.0, 4.0, 1.25, 3.0, -0.25, 0.5],
            ))
            .output(f32s("dX", &[3, 2], &[2.0, 4.0, 0.0, 0.0, 1.5, 2.5])),
        // Forward Gather(data (2, 3), int32 indices [1, 1, 0, 1], axis 1) -> dY (2, 4), double.
        // dX = np.zeros((2, 3), np.float64)
        // np.add.at(dX, (slice(None), np.array([1, 1, 0, 1])), dY)
        // -> [[0.3, 0.7000000000000001, 0], [10, -0.875, 0]]  (0.1 + 0.2 + 0.4 in f64, in order)
        ms("gather_grad_axis1_double_opset13", "GatherGrad", GG)
            .with_axis(1)
            .input(i64s("shape", &[2], &[2, 3]))
            .input(i32s("indices", &[4], &[1, 1, 0, 1]))
            .input(f64s(
                "dY",
                &[2, 4],
                &[0.1, 0.2, 0.3, 0.4, 1.5, -2.5, 10.0, 0.125],
            ))
            .output(f64s(
                "dX",
                &[2, 3],
                &[0.3, 0.7000000000000001, 0.0, 10.0, -0.875, 0.0],
            ))
            .typed(),
        // Forward GatherElements(data (3, 2), indices [[1, 0], [1, 2]], axis 0) -> dY (2, 2).
        // dX = np.zeros((3, 2), np.float32)
        // np.add.at(dX, (np.array([[1, 0], [1, 2]]), np.arange(2)[None, :]), dY)
        // -> [[0, 2], [4.5, 0], [0, -4]]  ([1][0] = 1.5 + 3)
        ms(
            "gather_elements_grad_axis0_opset13",
            "GatherElementsGrad",
            GEG,
        )
        .with_axis(0)
        .input(f32s("dY", &[2, 2], &[1.5, 2.0, 3.0, -4.0]))
        .input(i64s("shape", &[2], &[3, 2]))
        .input(i64s("indices", &[2, 2], &[1, 0, 1, 2]))
        .output(f32s("dX", &[3, 2], &[0.0, 2.0, 4.5, 0.0, 0.0, -4.0])),
        // Forward GatherElements(data (3, 3), int32 indices (2, 4), axis 1) -> dY (2, 4), float16:
        // indices smaller than data off the axis (2 rows of 3) and longer along it (4 > 3).
        // dY = [[0.5, 1.5, 2, 0.25], [1, 2, 3, 4]] = bits [0x3800, 0x3E00, 0x4000, 0x3400,
        // 0x3C00, 0x4000, 0x4200, 0x4400].
        // dX = np.zeros((3, 3), np.float16)
        // np.add.at(dX, (np.arange(2)[:, None], np.array([[0, 0, 2, 0], [1, 1, 1, 2]])), dY)
        // -> [[2.25, 0, 2], [0, 6, 4], [0, 0, 0]] = bits [0x4080, 0, 0x4000, 0, 0x4600, 0x4400,
        // 0, 0, 0]
        ms(
            "gather_elements_grad_axis1_float16_opset13",
            "GatherElementsGrad",
            GEG,
        )
        .with_axis(1)
        .input(f16s(
            "dY",
            &[2, 4],
            &[
                0x3800, 0x3E00, 0x4000, 0x3400, 0x3C00, 0x4000, 0x4200, 0x4400,
            ],
        ))
        .input(i64s("shape", &[2], &[3, 3]))
        .input(i32s("indices", &[2, 4], &[0, 0, 2, 0, 1, 1, 1, 2]))
        .output(f16s(
            "dX",
            &[3, 3],
            &[0x4080, 0, 0x4000, 0, 0x4600, 0x4400, 0, 0, 0],
        )),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_tensor_holds_as_many_values_as_its_shape_calls_for() {
        for c in cases() {
            for t in c.inputs.iter().chain(&c.outputs) {
                assert!(t.shape.iter().all(|&d| d >= 0), "{} {}", c.name, t.name);
                assert_eq!(t.values.len() as i64, t.numel(), "{} {}", c.name, t.name);
            }
        }
    }

    #[test]
    fn names_are_unique_directory_names_ending_in_their_opset() {
        let mut seen = BTreeSet::new();
        for c in cases() {
            assert!(seen.insert(c.name), "duplicate case {}", c.name);
            assert!(
                c.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{}",
                c.name
            );
            assert!(
                c.name.ends_with(&format!("_opset{}", c.opset)),
                "{}",
                c.name
            );
        }
        assert!(seen.len() >= 20);
    }

    /// The values of an int32 or int64 input.
    fn ints(c: &Case, name: &str) -> Vec<i64> {
        c.input_named(name)
            .unwrap_or_else(|| panic!("{}: no input {name}", c.name))
            .values
            .as_indices()
            .unwrap_or_else(|| panic!("{}: {name} is not int32/int64", c.name))
    }

    fn shape<'a>(c: &'a Case, name: &str) -> &'a [i64] {
        &c.input_named(name)
            .unwrap_or_else(|| panic!("{}: no input {name}", c.name))
            .shape
    }

    fn dtype_of(t: &Tensor) -> std::mem::Discriminant<Values> {
        std::mem::discriminant(&t.values)
    }

    /// `a[..i] ++ b ++ a[j..]`.
    fn splice(a: &[i64], i: usize, b: &[i64], j: usize) -> Vec<i64> {
        let mut s = a[..i].to_vec();
        s.extend(b);
        s.extend(&a[j..]);
        s
    }

    /// The input names, and the output's shape by the op's shape rule; also checks the rule's
    /// preconditions and that the output dtype is the one of the input that provides it.
    fn schema_and_output_shape(c: &Case) -> (Vec<&'static str>, Vec<i64>) {
        let names: Vec<_> = c.inputs.iter().map(|t| t.name).collect();
        let out = &c.outputs[0];
        let same_dtype = |input: &str| {
            assert_eq!(
                dtype_of(out),
                dtype_of(c.input_named(input).unwrap()),
                "{}: output dtype differs from {input}",
                c.name
            )
        };
        let axis_of = |rank: usize, a: i64| {
            let r = rank as i64;
            assert!((-r..r).contains(&a), "{}: axis {a}, rank {r}", c.name);
            a.rem_euclid(r) as usize
        };
        match (c.domain, c.op_type) {
            ("", "Gather") => {
                same_dtype("data");
                let d = shape(c, "data");
                let axis = axis_of(d.len(), c.axis());
                (names, splice(d, axis, shape(c, "indices"), axis + 1))
            }
            ("", "GatherElements") => {
                same_dtype("data");
                assert_eq!(
                    shape(c, "indices").len(),
                    shape(c, "data").len(),
                    "{}",
                    c.name
                );
                axis_of(shape(c, "data").len(), c.axis());
                (names, shape(c, "indices").to_vec())
            }
            ("", "ScatterElements" | "Scatter") => {
                same_dtype("data");
                let (d, i) = (shape(c, "data"), shape(c, "indices"));
                assert_eq!(i.len(), d.len(), "{}", c.name);
                assert_eq!(shape(c, "updates"), i, "{}", c.name);
                axis_of(d.len(), c.axis());
                (names, d.to_vec())
            }
            ("", "GatherND") => {
                same_dtype("data");
                let (d, i) = (shape(c, "data"), shape(c, "indices"));
                let b = c.int_attr("batch_dims", 0);
                assert!(b >= 0 && b < d.len().min(i.len()) as i64, "{}", c.name);
                let b = b as usize;
                assert_eq!(d[..b], i[..b], "{}: batch dims", c.name);
                let k = *i.last().unwrap();
                assert!(k >= 1 && k <= (d.len() - b) as i64, "{}: k = {k}", c.name);
                (names, [&i[..i.len() - 1], &d[b + k as usize..]].concat())
            }
            ("", "ScatterND") => {
                same_dtype("data");
                let (d, i) = (shape(c, "data"), shape(c, "indices"));
                let k = *i.last().unwrap() as usize;
                assert!(k <= d.len(), "{}", c.name);
                let want = [&i[..i.len() - 1], &d[k..]].concat();
                assert_eq!(shape(c, "updates"), want, "{}: updates shape", c.name);
                (names, d.to_vec())
            }
            ("", "TensorScatter") => {
                same_dtype("past_cache");
                let (p, u) = (shape(c, "past_cache"), shape(c, "update"));
                let axis = axis_of(p.len(), c.int_attr("axis", -2));
                assert_ne!(axis, 0, "{}: the batch axis", c.name);
                assert_eq!(
                    splice(u, axis, &[], axis + 1),
                    splice(p, axis, &[], axis + 1)
                );
                assert!(u[axis] <= p[axis], "{}", c.name);
                if c.input_named("write_indices").is_some() {
                    assert_eq!(shape(c, "write_indices"), [p[0]], "{}", c.name);
                }
                (names, p.to_vec())
            }
            (OPENVINO, "Gather") => {
                same_dtype("data");
                let (d, i) = (shape(c, "data"), shape(c, "indices"));
                let axis_values = ints(c, "axis");
                assert_eq!(axis_values.len(), 1, "{}", c.name);
                assert!(shape(c, "axis").len() <= 1, "{}", c.name);
                let axis = axis_of(d.len(), axis_values[0]);
                // batch_dims counts from the back of the indices rank when negative.
                let lim = d.len().min(i.len()) as i64;
                let b = c.int_attr("batch_dims", 0);
                assert!((-lim..=lim).contains(&b), "{}", c.name);
                let b = if b < 0 { b + i.len() as i64 } else { b } as usize;
                assert!(b <= axis, "{}", c.name);
                assert_eq!(d[..b], i[..b], "{}: batch dims", c.name);
                (names, splice(d, axis, &i[b..], axis + 1))
            }
            (MICROSOFT, "GatherGrad") => {
                same_dtype("dY");
                let s = ints(c, "shape");
                let axis = axis_of(s.len(), c.axis());
                assert_eq!(
                    shape(c, "dY"),
                    splice(&s, axis, shape(c, "indices"), axis + 1),
                    "{}: dY is the forward output",
                    c.name
                );
                (names, s)
            }
            (MICROSOFT, "GatherElementsGrad") => {
                same_dtype("dY");
                let s = ints(c, "shape");
                let axis = axis_of(s.len(), c.axis());
                let i = shape(c, "indices");
                assert_eq!(shape(c, "dY"), i, "{}", c.name);
                assert_eq!(i.len(), s.len(), "{}", c.name);
                for (d, (&n, &m)) in i.iter().zip(&s).enumerate() {
                    assert!(d == axis || n <= m, "{}: dim {d}", c.name);
                }
                (names, s)
            }
            (domain, op) => panic!("{}: unexpected op {domain} {op}", c.name),
        }
    }

    #[test]
    fn inputs_follow_the_schema_and_outputs_the_shape_rules() {
        for c in cases() {
            assert_eq!(c.outputs.len(), 1, "{}", c.name);
            let (names, want) = schema_and_output_shape(&c);
            let schema: &[&str] = match c.op_type {
                "Gather" if c.domain == OPENVINO => &["data", "indices", "axis"],
                "Gather" | "GatherElements" | "GatherND" => &["data", "indices"],
                "ScatterElements" | "Scatter" | "ScatterND" => &["data", "indices", "updates"],
                "TensorScatter" => &["past_cache", "update", "write_indices"],
                "GatherGrad" => &["shape", "indices", "dY"],
                "GatherElementsGrad" => &["dY", "shape", "indices"],
                op => panic!("{}: unexpected op {op}", c.name),
            };
            // Only TensorScatter's last input is optional.
            let required = if c.op_type == "TensorScatter" {
                2
            } else {
                schema.len()
            };
            assert!(
                names.len() >= required && schema.starts_with(&names),
                "{}: inputs {names:?}",
                c.name
            );
            assert_eq!(c.outputs[0].shape, want, "{}", c.name);
        }
    }

    #[test]
    fn indices_are_in_range_and_never_negative_before_opset_11() {
        for c in cases() {
            // (index, size of the dimension it indexes) pairs.
            let mut checked: Vec<(i64, i64)> = Vec::new();
            match c.op_type {
                "Gather" if c.domain == OPENVINO => {
                    // Out-of-range indices are allowed (they give zeros): Example 7 has them.
                    continue;
                }
                "TensorScatter" => {
                    let p = shape(&c, "past_cache");
                    let axis = c.int_attr("axis", -2).rem_euclid(p.len() as i64) as usize;
                    let len = shape(&c, "update")[axis];
                    let circular = c.attributes.contains(&Attribute::Str("mode", "circular"));
                    if c.input_named("write_indices").is_some() {
                        for w in ints(&c, "write_indices") {
                            assert!(w >= 0, "{}", c.name);
                            assert!(circular || w + len <= p[axis], "{}", c.name);
                        }
                    }
                    continue;
                }
                "GatherND" | "ScatterND" => {
                    let d = shape(&c, "data");
                    let i = shape(&c, "indices");
                    let b = c.int_attr("batch_dims", 0) as usize;
                    let k = *i.last().unwrap() as usize;
                    for (n, v) in ints(&c, "indices").into_iter().enumerate() {
                        checked.push((v, d[b + n % k]));
                    }
                }
                "GatherGrad" | "GatherElementsGrad" => {
                    let s = ints(&c, "shape");
                    let axis = c.axis().rem_euclid(s.len() as i64) as usize;
                    checked.extend(ints(&c, "indices").into_iter().map(|v| (v, s[axis])));
                }
                _ => {
                    let d = shape(&c, "data");
                    let axis = c.axis().rem_euclid(d.len() as i64) as usize;
                    checked.extend(ints(&c, "indices").into_iter().map(|v| (v, d[axis])));
                }
            }
            for (k, s) in checked {
                assert!(
                    (-s..s).contains(&k),
                    "{}: index {k} outside [-{s}, {}]",
                    c.name,
                    s - 1
                );
                // Gather-1 and Scatter-9 do not define negative indices (docs/semantics.md D2).
                assert!(
                    c.opset >= 11 || k >= 0,
                    "{}: negative index at opset {}",
                    c.name,
                    c.opset
                );
            }
        }
    }

    #[test]
    fn attributes_and_dtypes_exist_in_the_op_version() {
        for c in cases() {
            for a in &c.attributes {
                match (c.domain, c.op_type, *a) {
                    ("", "TensorScatter", Attribute::Str("mode", m)) => {
                        assert!(["linear", "circular"].contains(&m), "{}", c.name)
                    }
                    ("", "GatherND", Attribute::Int("batch_dims", _)) => {
                        assert!(c.opset >= 12, "{}: batch_dims arrives with 12", c.name)
                    }
                    (OPENVINO, "Gather", Attribute::Int("batch_dims", _)) => {}
                    (OPENVINO, ..) => panic!("{}: unexpected attribute {a:?}", c.name),
                    (_, "GatherND", _) => panic!("{}: unexpected attribute {a:?}", c.name),
                    (_, _, Attribute::Int("axis", _)) => {}
                    (_, "ScatterElements" | "ScatterND", Attribute::Str("reduction", r)) => {
                        let allowed: &[&str] = match c.opset {
                            16..=17 => &["none", "add", "mul"],
                            18.. => &["none", "add", "mul", "max", "min"],
                            _ => &[],
                        };
                        assert!(allowed.contains(&r), "{}: reduction {r:?}", c.name);
                    }
                    (_, _, other) => panic!("{}: unexpected attribute {other:?}", c.name),
                }
            }
            let data = c.input_named("data").or_else(|| c.input_named("dY"));
            if let Some(Values::Bfloat16(_)) = data.map(|t| &t.values) {
                assert!(
                    c.opset >= 13,
                    "{}: bfloat16 arrives with version 13",
                    c.name
                );
            }
            // Every node domain is imported, at the version its op exists in.
            match c.domain {
                "" => assert!(c.imports.is_empty(), "{}", c.name),
                OPENVINO => assert_eq!(c.imports, [(OPENVINO, 8)], "{}", c.name),
                MICROSOFT => assert_eq!(c.imports, [(MICROSOFT, 1)], "{}", c.name),
                other => panic!("{}: unexpected domain {other}", c.name),
            }
            if c.domain.is_empty() {
                match c.op_type {
                    "Scatter" => assert!((9..11).contains(&c.opset), "{}", c.name),
                    "GatherElements" | "ScatterElements" | "GatherND" | "ScatterND" => {
                        assert!(c.opset >= 11, "{}", c.name)
                    }
                    "TensorScatter" => assert!(c.opset >= 24, "{}", c.name),
                    _ => {}
                }
            }
            // GatherND and ScatterND take int64 indices only (D6), TensorScatter int64
            // write_indices; the backward ops float dY (D14).
            if matches!(c.op_type, "GatherND" | "ScatterND") {
                assert!(
                    matches!(c.input_named("indices").unwrap().values, Values::Int64(_)),
                    "{}",
                    c.name
                );
            }
            if c.domain == MICROSOFT {
                assert!(
                    matches!(
                        c.input_named("dY").unwrap().values,
                        Values::Float(_)
                            | Values::Double(_)
                            | Values::Float16(_)
                            | Values::Bfloat16(_)
                    ),
                    "{}",
                    c.name
                );
                assert!(
                    matches!(c.input_named("shape").unwrap().values, Values::Int64(_)),
                    "{}",
                    c.name
                );
            }
        }
    }

    /// Where accumulation matters, the cases make it matter: every backward op has a case with
    /// a repeated index, one on axis 1, and one in float16 or double.
    #[test]
    fn backward_cases_repeat_indices_and_cover_axis_1_and_other_float_types() {
        for op in ["GatherGrad", "GatherElementsGrad"] {
            let cs: Vec<_> = cases().into_iter().filter(|c| c.op_type == op).collect();
            assert!(cs.len() >= 2, "{op}");
            assert!(cs.iter().all(|c| {
                let idx = ints(c, "indices");
                idx.iter().collect::<BTreeSet<_>>().len() < idx.len()
            }));
            assert!(cs.iter().any(|c| c.axis() == 1), "{op}");
            assert!(
                cs.iter().any(|c| matches!(
                    c.input_named("dY").unwrap().values,
                    Values::Float16(_) | Values::Double(_)
                )),
                "{op}"
            );
        }
    }
}
