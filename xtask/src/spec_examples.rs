//! The worked examples of the operator specifications, as data: one [`Case`] per
//! `testdata/spec-examples/<name>/` directory.
//!
//! Every expected output is a literal, copied from the spec text or worked by hand from the spec's
//! equations (the working is in the comment above the case). Nothing in xtask implements an
//! operator, so a bug here cannot make a wrong answer agree with a wrong kernel: the literals are
//! an independent oracle for the library.
//!
//! Sources: the ONNX operator docs (onnx.ai/onnx/operators) of GatherElements 11 and 13,
//! ScatterElements 11, 13, 16 and 18, and Gather, with the Gather shape table that describes
//! Gather as a layer (data (P, Q) or (P, Q, R), indices a scalar or (R, S)). Scatter-9 is
//! ScatterElements-11 under its old name, so its examples are ScatterElements'.

/// One single-node test: the node, its inputs and the outputs the spec says it must produce.
#[derive(Debug, Clone)]
pub struct Case {
    /// Directory name under `testdata/spec-examples/`; ends in `_opset<N>`.
    pub name: &'static str,
    /// Where the example comes from, stored as the graph's doc_string.
    pub source: &'static str,
    /// The ai.onnx op type of the single node.
    pub op_type: &'static str,
    /// The ai.onnx opset the model imports (the node's domain is always `""`).
    pub opset: i64,
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
    /// The value of the `axis` attribute, or its default 0.
    #[cfg(test)]
    pub fn axis(&self) -> i64 {
        self.attributes
            .iter()
            .find_map(|a| match a {
                Attribute::Int("axis", v) => Some(*v),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// The input named `name`.
    #[cfg(test)]
    pub fn input_named(&self, name: &str) -> Option<&Tensor> {
        self.inputs.iter().find(|t| t.name == name)
    }

    fn with_axis(mut self, axis: i64) -> Self {
        self.attributes.push(Attribute::Int("axis", axis));
        self
    }

    fn with_reduction(mut self, reduction: &'static str) -> Self {
        self.attributes.push(Attribute::Str("reduction", reduction));
        self
    }

    fn input(mut self, tensor: Tensor) -> Self {
        self.inputs.push(tensor);
        self
    }

    fn output(mut self, tensor: Tensor) -> Self {
        self.outputs.push(tensor);
        self
    }

    fn typed(mut self) -> Self {
        self.storage = Storage::Typed;
        self
    }
}

fn case(name: &'static str, op_type: &'static str, opset: i64, source: &'static str) -> Case {
    Case {
        name,
        source,
        op_type,
        opset,
        attributes: Vec::new(),
        inputs: Vec::new(),
        outputs: Vec::new(),
        storage: Storage::Raw,
    }
}

fn tensor(name: &'static str, shape: &[i64], values: Values) -> Tensor {
    Tensor {
        name,
        shape: shape.to_vec(),
        values,
    }
}

fn f32s(name: &'static str, shape: &[i64], v: &[f32]) -> Tensor {
    tensor(name, shape, Values::Float(v.to_vec()))
}

fn f16s(name: &'static str, shape: &[i64], bits: &[u16]) -> Tensor {
    tensor(name, shape, Values::Float16(bits.to_vec()))
}

fn bf16s(name: &'static str, shape: &[i64], bits: &[u16]) -> Tensor {
    tensor(name, shape, Values::Bfloat16(bits.to_vec()))
}

fn i32s(name: &'static str, shape: &[i64], v: &[i32]) -> Tensor {
    tensor(name, shape, Values::Int32(v.to_vec()))
}

fn i64s(name: &'static str, shape: &[i64], v: &[i64]) -> Tensor {
    tensor(name, shape, Values::Int64(v.to_vec()))
}

fn bools(name: &'static str, shape: &[i64], v: &[bool]) -> Tensor {
    tensor(name, shape, Values::Bool(v.to_vec()))
}

fn strs(name: &'static str, shape: &[i64], v: &[&'static str]) -> Tensor {
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

    #[test]
    fn inputs_follow_the_schema_and_outputs_the_shape_rules() {
        for c in cases() {
            let names: Vec<_> = c.inputs.iter().map(|t| t.name).collect();
            let data = c.input_named("data").unwrap();
            let indices = c.input_named("indices").unwrap();
            let rank = data.shape.len() as i64;
            let axis = c.axis();
            assert!((-rank..rank).contains(&axis), "{}", c.name);
            let axis = axis.rem_euclid(rank) as usize;
            assert_eq!(c.outputs.len(), 1, "{}", c.name);
            let out = &c.outputs[0];
            assert_eq!(
                std::mem::discriminant(&out.values),
                std::mem::discriminant(&data.values),
                "{}: output dtype differs from data",
                c.name
            );
            let expected_shape = match c.op_type {
                "Gather" => {
                    assert_eq!(names, ["data", "indices"], "{}", c.name);
                    let mut s = data.shape[..axis].to_vec();
                    s.extend(&indices.shape);
                    s.extend(&data.shape[axis + 1..]);
                    s
                }
                "GatherElements" => {
                    assert_eq!(names, ["data", "indices"], "{}", c.name);
                    assert_eq!(indices.shape.len(), data.shape.len(), "{}", c.name);
                    indices.shape.clone()
                }
                "ScatterElements" | "Scatter" => {
                    assert_eq!(names, ["data", "indices", "updates"], "{}", c.name);
                    assert_eq!(indices.shape.len(), data.shape.len(), "{}", c.name);
                    assert_eq!(c.inputs[2].shape, indices.shape, "{}", c.name);
                    data.shape.clone()
                }
                op => panic!("{}: unexpected op {op}", c.name),
            };
            assert_eq!(out.shape, expected_shape, "{}", c.name);
        }
    }

    #[test]
    fn indices_are_in_range_and_never_negative_before_opset_11() {
        for c in cases() {
            let data = c.input_named("data").unwrap();
            let axis = c.axis().rem_euclid(data.shape.len() as i64) as usize;
            let s = data.shape[axis];
            let indices = c
                .input_named("indices")
                .unwrap()
                .values
                .as_indices()
                .unwrap();
            for k in indices {
                assert!(
                    (-s..s).contains(&k),
                    "{}: index {k} outside [-{s}, {}]",
                    c.name,
                    s - 1
                );
                // Gather-1 and Scatter-9 do not define negative indices (SEMANTICS.md D2).
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
                match *a {
                    Attribute::Int("axis", _) => {}
                    Attribute::Str("reduction", r) => {
                        assert_eq!(c.op_type, "ScatterElements", "{}", c.name);
                        let allowed: &[&str] = match c.opset {
                            16..=17 => &["none", "add", "mul"],
                            18.. => &["none", "add", "mul", "max", "min"],
                            _ => &[],
                        };
                        assert!(allowed.contains(&r), "{}: reduction {r:?}", c.name);
                    }
                    other => panic!("{}: unexpected attribute {other:?}", c.name),
                }
            }
            if matches!(c.input_named("data").unwrap().values, Values::Bfloat16(_)) {
                assert!(
                    c.opset >= 13,
                    "{}: bfloat16 arrives with version 13",
                    c.name
                );
            }
            match c.op_type {
                "Scatter" => assert!((9..11).contains(&c.opset), "{}", c.name),
                "GatherElements" | "ScatterElements" => assert!(c.opset >= 11, "{}", c.name),
                _ => {}
            }
        }
    }
}
