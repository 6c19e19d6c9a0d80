//! The operators, written straight from `docs/semantics.md` (decisions D1-D8, D12-D14; sections
//! 3, 5 and 6): every output (or update) position is visited one coordinate tuple at a time,
//! indices are normalised here, shape rules are checked here.
//!
//! Elements are held as [`Word`]s: the stored bit pattern of a fixed-width element (a packed
//! sub-byte element is its code), or a string's bytes (or as bare `u64` bits, see [`Element`]).
//! Arithmetic reinterprets the bits through the dtype.
//!
//! The order of verdicts: a node that cannot be resolved is [`Outcome::TooOld`]; anything the
//! spec forbids is [`Outcome::Invalid`] (structure first, then the output size of D12 as
//! [`Outcome::TooLarge`], then every index, D3); only a node that is valid but asks for something
//! the tool does not implement (D8's string/bool/complex reductions) is
//! [`Outcome::Unsupported`].

// tidy: long file: one concern, the naive model of every operator version, one function each,
// written to be read top to bottom; a third of it is its tests against the spec's examples.

use crate::dtype::{DType, Layout};
use crate::numeric::{f16_to_f32, f32_to_bf16, f32_to_f16, int_value};
use crate::tensor::{coords, numel, offset, positions, Element, RTensor, Word};

/// The operators the reference models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// ONNX Gather 1/11/13.
    Gather,
    /// ONNX GatherElements 11/13.
    GatherElements,
    /// ONNX GatherND 11/12/13.
    GatherND,
    /// OpenVINO Gather-8 (`org.openvinotoolkit`).
    OvGather,
    /// ONNX Scatter 9 (deprecated at 11).
    Scatter,
    /// ONNX ScatterElements 11/13/16/18.
    ScatterElements,
    /// ONNX ScatterND 11/13/16/18.
    ScatterND,
    /// ONNX TensorScatter 24.
    TensorScatter,
    /// onnxruntime's GatherGrad 1 (`com.microsoft`, D14).
    GatherGrad,
    /// onnxruntime's GatherElementsGrad 1 (`com.microsoft`, D14).
    GatherElementsGrad,
}

impl Op {
    /// The node's op_type.
    pub fn op_type(self) -> &'static str {
        match self {
            Op::Gather | Op::OvGather => "Gather",
            Op::GatherElements => "GatherElements",
            Op::GatherND => "GatherND",
            Op::Scatter => "Scatter",
            Op::ScatterElements => "ScatterElements",
            Op::ScatterND => "ScatterND",
            Op::TensorScatter => "TensorScatter",
            Op::GatherGrad => "GatherGrad",
            Op::GatherElementsGrad => "GatherElementsGrad",
        }
    }

    /// The node's domain.
    pub fn domain(self) -> &'static str {
        match self {
            Op::OvGather => "org.openvinotoolkit",
            Op::GatherGrad | Op::GatherElementsGrad => "com.microsoft",
            _ => "",
        }
    }

    /// The `since_version`s of the op (docs/semantics.md section 1, D13).
    fn versions(self) -> &'static [i64] {
        match self {
            Op::Gather => &[1, 11, 13],
            Op::GatherElements => &[11, 13],
            Op::GatherND => &[11, 12, 13],
            Op::OvGather => &[1, 7, 8],
            Op::Scatter => &[9, 11],
            Op::ScatterElements | Op::ScatterND => &[11, 13, 16, 18],
            Op::TensorScatter => &[24],
            Op::GatherGrad | Op::GatherElementsGrad => &[1],
        }
    }

    /// Attributes defined by version `v`, with whether each is a string (else an int).
    fn attributes(self, v: i64) -> &'static [(&'static str, bool)] {
        match self {
            Op::Gather
            | Op::GatherElements
            | Op::Scatter
            | Op::GatherGrad
            | Op::GatherElementsGrad => &[("axis", false)],
            Op::GatherND if v >= 12 => &[("batch_dims", false)],
            Op::GatherND => &[],
            Op::OvGather if v >= 7 => &[("batch_dims", false)],
            Op::OvGather => &[],
            Op::ScatterElements if v >= 16 => &[("axis", false), ("reduction", true)],
            Op::ScatterElements => &[("axis", false)],
            Op::ScatterND if v >= 16 => &[("reduction", true)],
            Op::ScatterND => &[],
            Op::TensorScatter => &[("axis", false), ("mode", true)],
        }
    }

    /// (required inputs, all inputs).
    fn arity(self) -> (usize, usize) {
        match self {
            Op::Gather | Op::GatherElements | Op::GatherND => (2, 2),
            Op::OvGather
            | Op::Scatter
            | Op::ScatterElements
            | Op::ScatterND
            | Op::GatherGrad
            | Op::GatherElementsGrad => (3, 3),
            Op::TensorScatter => (2, 3),
        }
    }
}

/// The version a node of `op` at `opset` runs (D1): the highest `since` <= `opset`.
pub fn resolve_version(op: Op, opset: i64) -> Option<i64> {
    op.versions().iter().rev().find(|&&s| s <= opset).copied()
}

/// An attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// INT.
    Int(i64),
    /// STRING.
    Str(Vec<u8>),
    /// FLOAT (never what these ops want).
    Float(f32),
}

/// A node attribute.
#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: AttrValue,
}

impl Attr {
    /// An INT attribute.
    pub fn int(name: &str, i: i64) -> Attr {
        Attr {
            name: name.into(),
            value: AttrValue::Int(i),
        }
    }

    /// A STRING attribute.
    pub fn text(name: &str, s: &str) -> Attr {
        Attr {
            name: name.into(),
            value: AttrValue::Str(s.as_bytes().to_vec()),
        }
    }
}

/// What the reference says a node must do.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome<E: Element = Word> {
    /// The output; `arithmetic` when a reduction other than "none" combined values.
    Ok {
        /// The output tensor.
        out: RTensor<E>,
        /// Whether float results come from arithmetic (NaN payloads may then differ).
        arithmetic: bool,
    },
    /// The spec forbids the node or its inputs: errored.
    Invalid(String),
    /// Allowed but not implemented by the tool (D8): skipped.
    Unsupported(String),
    /// The output would exceed the byte limit (D12): errored.
    TooLarge(String),
    /// The model's opset predates the op's first version: the node cannot run at all.
    TooOld,
}

/// Why a node has no output: the [`Outcome`]s other than `Ok`, whatever the element type.
enum Refusal {
    Invalid(String),
    Unsupported(String),
    TooLarge(String),
    TooOld,
}

impl<E: Element> From<Refusal> for Outcome<E> {
    fn from(r: Refusal) -> Outcome<E> {
        match r {
            Refusal::Invalid(s) => Outcome::Invalid(s),
            Refusal::Unsupported(s) => Outcome::Unsupported(s),
            Refusal::TooLarge(s) => Outcome::TooLarge(s),
            Refusal::TooOld => Outcome::TooOld,
        }
    }
}

type Res<T> = Result<T, Refusal>;

fn invalid<T>(msg: impl Into<String>) -> Res<T> {
    Err(Refusal::Invalid(msg.into()))
}

// ---------------------------------------------------------------------------------------------
// Indices and sizes.

/// An axis in `[-rank, rank-1]`, normalised; `None` when out of range.
fn norm_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = rank as i128;
    let a = i128::from(axis);
    let a = if a < 0 { a + r } else { a };
    (0 <= a && a < r).then_some(a as usize)
}

/// The values of an index tensor (its type was checked).
fn index_values<E: Element>(t: &RTensor<E>) -> Vec<i128> {
    t.words
        .iter()
        .map(|w| {
            int_value(t.dtype, &w.word()).expect("an integer index tensor (types were checked)")
        })
        .collect()
}

/// Normalises index `k` against a dim of size `s`; `None` when out of range. `negatives`: whether
/// negative values count from the back (D2).
fn norm_index(k: i128, s: usize, negatives: bool) -> Option<usize> {
    let s = s as i128;
    let k = if k < 0 {
        if !negatives {
            return None;
        }
        k + s
    } else {
        k
    };
    (0 <= k && k < s).then_some(k as usize)
}

/// D12: an output of `shape` elements of `dtype` must fit in `max_bytes` (strings count one
/// `Vec<u8>` slot per element here; their payloads are checked once known).
fn check_size(dtype: DType, shape: &[usize], max_bytes: usize) -> Res<()> {
    // A dim of 0 makes the output empty, however large the others.
    let n = numel(shape);
    let bytes = match dtype.layout() {
        Layout::Bytes(w) => n.saturating_mul(w),
        Layout::Packed(bits) => n.saturating_mul(bits as usize).div_ceil(8),
        Layout::String => n.saturating_mul(std::mem::size_of::<Vec<u8>>()),
    };
    if bytes > max_bytes {
        return Err(Refusal::TooLarge(format!(
            "output {dtype}{shape:?} takes {bytes} bytes > {max_bytes}"
        )));
    }
    Ok(())
}

fn check_payload<E: Element>(out: &RTensor<E>, max_bytes: usize) -> Res<()> {
    let total: usize = out.words.iter().map(Element::payload).sum();
    if total > max_bytes {
        return Err(Refusal::TooLarge(format!(
            "output strings take {total} bytes > {max_bytes}"
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Type constraints (docs/semantics.md section 2, D4).

fn classic15(d: DType) -> bool {
    use DType::*;
    matches!(
        d,
        Bool | Int8
            | Int16
            | Int32
            | Int64
            | Uint8
            | Uint16
            | Uint32
            | Uint64
            | Float16
            | Float
            | Double
            | String
            | Complex64
            | Complex128
    )
}

fn is_integer(d: DType) -> bool {
    use DType::*;
    matches!(
        d,
        Int8 | Int16 | Int32 | Int64 | Uint8 | Uint16 | Uint32 | Uint64
    )
}

/// Whether `d` is admitted as the data type T of `op` version `v`.
fn data_type_ok(op: Op, v: i64, d: DType) -> bool {
    use DType::*;
    let bf16_from_13 = classic15(d) || (d == Bfloat16 && v >= 13);
    match op {
        Op::Gather | Op::GatherElements | Op::GatherND | Op::ScatterElements | Op::ScatterND => {
            bf16_from_13
        }
        Op::Scatter => classic15(d),
        Op::TensorScatter => {
            classic15(d)
                || matches!(
                    d,
                    Bfloat16
                        | Float8E4M3Fn
                        | Float8E4M3Fnuz
                        | Float8E5M2
                        | Float8E5M2Fnuz
                        | Float8E8M0
                        | Float4E2M1
                        | Int4
                        | Uint4
                )
        }
        Op::OvGather => true,
        // D14: onnxruntime's training ops take float gradients.
        Op::GatherGrad | Op::GatherElementsGrad => {
            matches!(d, Float16 | Float | Double | Bfloat16)
        }
    }
}

/// Whether `d` is admitted as the index type of `op`.
fn index_type_ok(op: Op, d: DType) -> bool {
    match op {
        Op::Gather
        | Op::GatherElements
        | Op::Scatter
        | Op::ScatterElements
        | Op::GatherGrad
        | Op::GatherElementsGrad => matches!(d, DType::Int32 | DType::Int64),
        Op::GatherND | Op::ScatterND | Op::TensorScatter => d == DType::Int64,
        Op::OvGather => is_integer(d),
    }
}

// ---------------------------------------------------------------------------------------------
// Reductions (section 5, D7, D8).

/// A scatter reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Red {
    None,
    Add,
    Mul,
    Max,
    Min,
}

/// The `reduction` attribute of a version >= 16 (D5: max/min from 18; anything else invalid).
fn parse_reduction(v: i64, s: &[u8]) -> Res<Red> {
    Ok(match s {
        b"none" => Red::None,
        b"add" => Red::Add,
        b"mul" => Red::Mul,
        b"max" if v >= 18 => Red::Max,
        b"min" if v >= 18 => Red::Min,
        _ => {
            return invalid(format!(
                "reduction {:?} is not defined at version {v}",
                String::from_utf8_lossy(s)
            ))
        }
    })
}

/// D8: what the tool computes (everything else is skipped).
fn reduction_supported(d: DType, red: Red) -> bool {
    use DType::*;
    match red {
        Red::None => true,
        _ => match d {
            Int8 | Int16 | Int32 | Int64 | Uint8 | Uint16 | Uint32 | Uint64 | Float | Double
            | Float16 | Bfloat16 => true,
            Bool | Complex64 | Complex128 => matches!(red, Red::Add | Red::Mul),
            String => red == Red::Add,
            _ => false,
        },
    }
}

/// IEEE 754-2019 maximum / minimum: NaN propagates, +0 > -0.
macro_rules! ieee_pick {
    ($t:ty, $red:expr, $a:expr, $b:expr) => {{
        let (a, b): ($t, $t) = ($a, $b);
        let max = $red == Red::Max;
        if a.is_nan() || b.is_nan() {
            <$t>::NAN
        } else if a == b {
            if a == 0.0 {
                // +0 and -0 (or equal zeros): max is -0 only if both are.
                let neg = if max {
                    a.is_sign_negative() && b.is_sign_negative()
                } else {
                    a.is_sign_negative() || b.is_sign_negative()
                };
                if neg {
                    -0.0
                } else {
                    0.0
                }
            } else {
                a
            }
        } else if (a > b) == max {
            a
        } else {
            b
        }
    }};
}

fn f32_op(red: Red, a: f32, b: f32) -> f32 {
    match red {
        Red::None => b,
        Red::Add => a + b,
        Red::Mul => a * b,
        Red::Max | Red::Min => ieee_pick!(f32, red, a, b),
    }
}

fn f64_op(red: Red, a: f64, b: f64) -> f64 {
    match red {
        Red::None => b,
        Red::Add => a + b,
        Red::Mul => a * b,
        Red::Max | Red::Min => ieee_pick!(f64, red, a, b),
    }
}

fn int_width(d: DType) -> Option<(u32, bool)> {
    use DType::*;
    Some(match d {
        Int8 => (8, true),
        Uint8 => (8, false),
        Int16 => (16, true),
        Uint16 => (16, false),
        Int32 => (32, true),
        Uint32 => (32, false),
        Int64 => (64, true),
        Uint64 => (64, false),
        _ => return None,
    })
}

/// `f(cur, upd)` for one element update.
fn combine(d: DType, red: Red, cur: &Word, upd: &Word) -> Word {
    if red == Red::None {
        return upd.clone();
    }
    if let (Word::Bytes(a), Word::Bytes(b)) = (cur, upd) {
        assert_eq!(red, Red::Add, "only string add is computed");
        let mut s = a.clone();
        s.extend_from_slice(b);
        return Word::Bytes(s);
    }
    let (Word::Bits(a), Word::Bits(b)) = (cur, upd) else {
        panic!("mixed string and fixed-width elements");
    };
    let (a, b) = (*a, *b);
    if let Some((w, signed)) = int_width(d) {
        let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let value = |x: u64| -> i128 {
            if signed {
                let shift = 64 - w;
                i128::from(((x << shift) as i64) >> shift)
            } else {
                i128::from(x)
            }
        };
        return Word::Bits(match red {
            // Two's complement: wrapping arithmetic on the raw bits, modulo 2^w.
            Red::Add => a.wrapping_add(b) & mask,
            Red::Mul => a.wrapping_mul(b) & mask,
            Red::Max => {
                if value(a) >= value(b) {
                    a
                } else {
                    b
                }
            }
            Red::Min => {
                if value(a) <= value(b) {
                    a
                } else {
                    b
                }
            }
            Red::None => unreachable!(),
        });
    }
    Word::Bits(match d {
        DType::Float => {
            u64::from(f32_op(red, f32::from_bits(a as u32), f32::from_bits(b as u32)).to_bits())
        }
        DType::Double => f64_op(red, f64::from_bits(a), f64::from_bits(b)).to_bits(),
        DType::Float16 => u64::from(f32_to_f16(f32_op(
            red,
            f16_to_f32(a as u16),
            f16_to_f32(b as u16),
        ))),
        DType::Bfloat16 => u64::from(f32_to_bf16(f32_op(
            red,
            f32::from_bits((a as u32) << 16),
            f32::from_bits((b as u32) << 16),
        ))),
        DType::Bool => match red {
            Red::Add => u64::from(a != 0 || b != 0),
            Red::Mul => u64::from(a != 0 && b != 0),
            _ => panic!("bool {red:?} is not computed"),
        },
        DType::Complex64 => {
            let (ar, ai) = (f32::from_bits(a as u32), f32::from_bits((a >> 32) as u32));
            let (br, bi) = (f32::from_bits(b as u32), f32::from_bits((b >> 32) as u32));
            let (r, i) = match red {
                Red::Add => (ar + br, ai + bi),
                Red::Mul => (ar * br - ai * bi, ar * bi + ai * br),
                _ => panic!("complex {red:?} is not computed"),
            };
            u64::from(r.to_bits()) | (u64::from(i.to_bits()) << 32)
        }
        _ => panic!("{d} {red:?} is not computed"),
    })
}

/// [`combine`] on elements of any representation.
fn combine_elems<E: Element>(d: DType, red: Red, cur: &E, upd: &E) -> E {
    E::from_word(combine(d, red, &cur.word(), &upd.word()))
}

/// The zero element of `d` (OpenVINO's fill).
fn zero<E: Element>(d: DType) -> E {
    E::from_word(if d == DType::String {
        Word::Bytes(Vec::new())
    } else {
        Word::Bits(0)
    })
}

// ---------------------------------------------------------------------------------------------
// The entry point.

/// Evaluates `op` at model opset `opset` on `inputs` (in node order, `None` for an omitted input)
/// with `attrs`, under the output limit `max_bytes`.
///
/// Elements may be held as [`Word`]s (every dtype) or as `u64` bits (fixed-width dtypes: for
/// tensors too large for a `Word` each); the model is the same.
pub fn evaluate<E: Element>(
    op: Op,
    opset: i64,
    attrs: &[Attr],
    inputs: &[Option<RTensor<E>>],
    max_bytes: usize,
) -> Outcome<E> {
    match evaluate_inner(op, opset, attrs, inputs, max_bytes) {
        Ok((out, arithmetic)) => Outcome::Ok { out, arithmetic },
        Err(r) => r.into(),
    }
}

/// The output and whether it comes from arithmetic, or why there is none.
fn evaluate_inner<E: Element>(
    op: Op,
    opset: i64,
    attrs: &[Attr],
    inputs: &[Option<RTensor<E>>],
    max_bytes: usize,
) -> Res<(RTensor<E>, bool)> {
    let Some(v) = resolve_version(op, opset) else {
        return Err(Refusal::TooOld);
    };
    if op == Op::Scatter && v >= 11 {
        return invalid("Scatter is deprecated from opset 11 (D5)");
    }
    // Inputs.
    let (required, all) = op.arity();
    if inputs.len() > all {
        return invalid(format!("{} inputs, at most {all}", inputs.len()));
    }
    for i in 0..required {
        if inputs.get(i).is_none_or(Option::is_none) {
            return invalid(format!("required input {i} is missing"));
        }
    }
    let input = |i: usize| inputs.get(i).and_then(Option::as_ref);
    // Attributes (D5): only those the version defines, once each, of the right type.
    let defined = op.attributes(v);
    for (k, a) in attrs.iter().enumerate() {
        let Some(&(_, is_str)) = defined.iter().find(|(n, _)| *n == a.name) else {
            return invalid(format!(
                "attribute '{}' is not defined at version {v}",
                a.name
            ));
        };
        if attrs[..k].iter().any(|b| b.name == a.name) {
            return invalid(format!("attribute '{}' appears twice", a.name));
        }
        let ok = matches!(
            (&a.value, is_str),
            (AttrValue::Int(_), false) | (AttrValue::Str(_), true)
        );
        if !ok {
            return invalid(format!("attribute '{}' has the wrong type", a.name));
        }
    }
    let int_attr = |name: &str, default: i64| -> i64 {
        match attrs.iter().find(|a| a.name == name) {
            Some(Attr {
                value: AttrValue::Int(i),
                ..
            }) => *i,
            _ => default,
        }
    };
    let str_attr = |name: &str, default: &[u8]| -> Vec<u8> {
        match attrs.iter().find(|a| a.name == name) {
            Some(Attr {
                value: AttrValue::Str(s),
                ..
            }) => s.clone(),
            _ => default.to_vec(),
        }
    };
    if let Op::GatherGrad | Op::GatherElementsGrad = op {
        // Inputs (shape, indices, dY) and (dY, shape, indices).
        let at = |i: usize| input(i).expect("checked");
        let (shape, ind, dy) = match op {
            Op::GatherGrad => (at(0), at(1), at(2)),
            _ => (at(1), at(2), at(0)),
        };
        let out = gather_grad(op, shape, ind, dy, int_attr("axis", 0), max_bytes)?;
        return Ok((out, true));
    }
    // Type constraints (D4).
    let data = input(0).expect("checked");
    if !data_type_ok(op, v, data.dtype) {
        return invalid(format!(
            "data type {} not allowed at version {v}",
            data.dtype
        ));
    }
    let idx_pos = if op == Op::TensorScatter { 2 } else { 1 };
    if let Some(ind) = input(idx_pos) {
        if !index_type_ok(op, ind.dtype) {
            return invalid(format!("index type {} not allowed", ind.dtype));
        }
    }
    let second_t = match op {
        Op::Scatter | Op::ScatterElements | Op::ScatterND => Some(2),
        Op::TensorScatter => Some(1),
        _ => None,
    };
    if let Some(i) = second_t {
        let other = input(i).expect("checked");
        if other.dtype != data.dtype {
            return invalid(format!(
                "data is {} but input {i} is {}; both are T",
                data.dtype, other.dtype
            ));
        }
    }
    if op == Op::OvGather && !is_integer(input(2).expect("checked").dtype) {
        return invalid("axis input must be an integer tensor");
    }
    let reduction = |v: i64| -> Res<Red> {
        if v >= 16 {
            parse_reduction(v, &str_attr("reduction", b"none"))
        } else {
            Ok(Red::None)
        }
    };
    let (out, arithmetic) = match op {
        Op::Gather => (
            gather(
                v,
                data,
                input(1).expect("checked"),
                int_attr("axis", 0),
                max_bytes,
            )?,
            false,
        ),
        Op::GatherElements => (
            gather_elements(
                data,
                input(1).expect("checked"),
                int_attr("axis", 0),
                max_bytes,
            )?,
            false,
        ),
        Op::GatherND => (
            gather_nd(
                data,
                input(1).expect("checked"),
                int_attr("batch_dims", 0),
                max_bytes,
            )?,
            false,
        ),
        Op::OvGather => (
            ov_gather(
                v,
                data,
                input(1).expect("checked"),
                input(2).expect("checked"),
                int_attr("batch_dims", 0),
                max_bytes,
            )?,
            false,
        ),
        Op::Scatter | Op::ScatterElements => {
            let red = reduction(v)?;
            let out = scatter_elements(
                op == Op::ScatterElements,
                data,
                input(1).expect("checked"),
                input(2).expect("checked"),
                int_attr("axis", 0),
                red,
                max_bytes,
            )?;
            (out, red != Red::None)
        }
        Op::ScatterND => {
            let red = reduction(v)?;
            let out = scatter_nd(
                data,
                input(1).expect("checked"),
                input(2).expect("checked"),
                red,
                max_bytes,
            )?;
            (out, red != Red::None)
        }
        Op::TensorScatter => (
            tensor_scatter(
                data,
                input(1).expect("checked"),
                input(2),
                int_attr("axis", -2),
                &str_attr("mode", b"linear"),
                max_bytes,
            )?,
            false,
        ),
        Op::GatherGrad | Op::GatherElementsGrad => unreachable!("evaluated above"),
    };
    Ok((out, arithmetic))
}

// ---------------------------------------------------------------------------------------------
// The operators.

/// Gather (section 3): `out[a.., i.., b..] = data[a.., norm(indices[i..]), b..]`.
fn gather<E: Element>(
    v: i64,
    data: &RTensor<E>,
    ind: &RTensor<E>,
    axis: i64,
    max_bytes: usize,
) -> Res<RTensor<E>> {
    let r = data.rank();
    if r == 0 {
        return invalid("Gather data must have rank >= 1");
    }
    let Some(axis) = norm_axis(axis, r) else {
        return invalid(format!("axis {axis} out of range for rank {r}"));
    };
    let s = data.shape[axis];
    let q = ind.rank();
    let mut oshape = data.shape[..axis].to_vec();
    oshape.extend_from_slice(&ind.shape);
    oshape.extend_from_slice(&data.shape[axis + 1..]);
    check_size(data.dtype, &oshape, max_bytes)?;
    // D2 (negatives only from version 11), D3 (all indices before any output).
    let mut norm = Vec::new();
    for (pos, k) in index_values(ind).into_iter().enumerate() {
        match norm_index(k, s, v >= 11) {
            Some(k) => norm.push(k),
            None => {
                return invalid(format!(
                    "indices[{:?}] = {k} out of range for axis {axis} (size {s}) at version {v}",
                    coords(pos, &ind.shape)
                ))
            }
        }
    }
    let mut words = Vec::new();
    for oc in positions(&oshape) {
        let i = &oc[axis..axis + q];
        let k = norm[offset(i, &ind.shape)];
        let mut dc = oc[..axis].to_vec();
        dc.push(k);
        dc.extend_from_slice(&oc[axis + q..]);
        words.push(data.at(&dc).clone());
    }
    let out = RTensor::new(data.dtype, oshape, words);
    check_payload(&out, max_bytes)?;
    Ok(out)
}

/// Checks the ScatterElements/GatherElements shape rule (D6): equal ranks, indices dims <= data
/// dims off the axis. Returns the normalised axis.
fn elements_shapes<E: Element>(data: &RTensor<E>, ind: &RTensor<E>, axis: i64) -> Res<usize> {
    let r = data.rank();
    if r == 0 {
        return invalid("data must have rank >= 1");
    }
    let Some(axis) = norm_axis(axis, r) else {
        return invalid(format!("axis {axis} out of range for rank {r}"));
    };
    if ind.rank() != r {
        return invalid(format!("indices rank {} != data rank {r}", ind.rank()));
    }
    for d in 0..r {
        if d != axis && ind.shape[d] > data.shape[d] {
            return invalid(format!(
                "indices dim {d} is {} > data's {}",
                ind.shape[d], data.shape[d]
            ));
        }
    }
    Ok(axis)
}

/// Every index normalised against `s`, failing on the first one out of range.
fn all_in_range<E: Element>(ind: &RTensor<E>, s: usize, negatives: bool) -> Res<Vec<usize>> {
    let mut norm = Vec::new();
    for (pos, k) in index_values(ind).into_iter().enumerate() {
        match norm_index(k, s, negatives) {
            Some(k) => norm.push(k),
            None => {
                return invalid(format!(
                    "indices[{:?}] = {k} out of range (size {s}, negatives {negatives})",
                    coords(pos, &ind.shape)
                ))
            }
        }
    }
    Ok(norm)
}

/// GatherElements: `out[i] = data[i with i[axis] := norm(indices[i])]`.
fn gather_elements<E: Element>(
    data: &RTensor<E>,
    ind: &RTensor<E>,
    axis: i64,
    max_bytes: usize,
) -> Res<RTensor<E>> {
    let axis = elements_shapes(data, ind, axis)?;
    check_size(data.dtype, &ind.shape, max_bytes)?;
    let norm = all_in_range(ind, data.shape[axis], true)?;
    let mut words = Vec::new();
    for oc in positions(&ind.shape) {
        let mut dc = oc.clone();
        dc[axis] = norm[offset(&oc, &ind.shape)];
        words.push(data.at(&dc).clone());
    }
    let out = RTensor::new(data.dtype, ind.shape.clone(), words);
    check_payload(&out, max_bytes)?;
    Ok(out)
}

/// GatherND: `out[B.., I.., T..] = data[B.., norm(indices[B.., I.., 0..k]).., T..]`.
fn gather_nd<E: Element>(
    data: &RTensor<E>,
    ind: &RTensor<E>,
    b: i64,
    max_bytes: usize,
) -> Res<RTensor<E>> {
    let (r, q) = (data.rank(), ind.rank());
    if r == 0 {
        return invalid("GatherND data must have rank >= 1");
    }
    if q == 0 {
        return invalid("GatherND indices must have rank >= 1");
    }
    if b < 0 || b as i128 >= r.min(q) as i128 {
        return invalid(format!(
            "batch_dims {b} must be in [0, min(q, r)) = [0, {})",
            r.min(q)
        ));
    }
    let b = b as usize;
    if ind.shape[..b] != data.shape[..b] {
        return invalid(format!(
            "batch dims differ: indices {:?}, data {:?}",
            &ind.shape[..b],
            &data.shape[..b]
        ));
    }
    let k = ind.shape[q - 1];
    if k < 1 || k > r - b {
        return invalid(format!("k = {k} must be in [1, r - b = {}]", r - b));
    }
    let mut oshape = ind.shape[..q - 1].to_vec();
    oshape.extend_from_slice(&data.shape[b + k..]);
    check_size(data.dtype, &oshape, max_bytes)?;
    // Every component j is normalised against its own dim data.shape[b + j].
    let values = index_values(ind);
    let mut norm = Vec::new();
    for (pos, &value) in values.iter().enumerate() {
        let c = coords(pos, &ind.shape);
        let j = c[q - 1];
        let s = data.shape[b + j];
        match norm_index(value, s, true) {
            Some(x) => norm.push(x),
            None => {
                return invalid(format!(
                    "indices[{c:?}] = {value} out of range for dim {} (size {s})",
                    b + j
                ))
            }
        }
    }
    let mut words = Vec::new();
    for oc in positions(&oshape) {
        let lead = &oc[..q - 1]; // B.. and I..
        let mut dc = oc[..b].to_vec();
        for j in 0..k {
            let mut ic = lead.to_vec();
            ic.push(j);
            dc.push(norm[offset(&ic, &ind.shape)]);
        }
        dc.extend_from_slice(&oc[q - 1..]);
        words.push(data.at(&dc).clone());
    }
    let out = RTensor::new(data.dtype, oshape, words);
    check_payload(&out, max_bytes)?;
    Ok(out)
}

/// OpenVINO Gather-8 (section 6, D13).
fn ov_gather<E: Element>(
    v: i64,
    data: &RTensor<E>,
    ind: &RTensor<E>,
    axis_t: &RTensor<E>,
    batch_dims: i64,
    max_bytes: usize,
) -> Res<RTensor<E>> {
    let (rd, ri) = (data.rank(), ind.rank());
    if axis_t.rank() > 1 || axis_t.words.len() != 1 {
        return invalid(format!(
            "axis input must be a scalar or have 1 element, shape {:?}",
            axis_t.shape
        ));
    }
    let axis_v = int_value(axis_t.dtype, &axis_t.words[0].word()).expect("integer axis");
    let axis = i64::try_from(axis_v).ok().and_then(|a| norm_axis(a, rd));
    let Some(axis) = axis else {
        return invalid(format!("axis {axis_v} out of range for data rank {rd}"));
    };
    let lim = rd.min(ri) as i64;
    if batch_dims < -lim || batch_dims > lim {
        return invalid(format!("batch_dims {batch_dims} outside [-{lim}, {lim}]"));
    }
    // Negative batch_dims count from the back of the indices rank.
    let b = if batch_dims < 0 {
        batch_dims + ri as i64
    } else {
        batch_dims
    } as usize;
    if b > axis {
        return invalid(format!("batch_dims {b} > axis {axis} after normalisation"));
    }
    if b > ri || data.shape[..b] != ind.shape[..b] {
        return invalid("data and indices differ in the batch dims");
    }
    let s = data.shape[axis];
    let m = ri - b;
    let mut oshape = data.shape[..axis].to_vec();
    oshape.extend_from_slice(&ind.shape[b..]);
    oshape.extend_from_slice(&data.shape[axis + 1..]);
    check_size(data.dtype, &oshape, max_bytes)?;
    let values = index_values(ind);
    // Gather-1 and Gather-7: indices "in the range [0, data[axis] - 1]", all checked first (D3).
    if v < 8 {
        if let Some(pos) = values.iter().position(|&k| !(0..s as i128).contains(&k)) {
            return invalid(format!(
                "indices[{:?}] = {} out of range [0, {s}) at version {v}",
                coords(pos, &ind.shape),
                values[pos]
            ));
        }
    }
    let mut words = Vec::new();
    for oc in positions(&oshape) {
        let p = &oc[..axis];
        let i = &oc[axis..axis + m];
        let rest = &oc[axis + m..];
        let mut ic = p[..b].to_vec();
        ic.extend_from_slice(i);
        let k = values[offset(&ic, &ind.shape)];
        let k = if k < 0 { k + s as i128 } else { k };
        if 0 <= k && k < s as i128 {
            let mut dc = p.to_vec();
            dc.push(k as usize);
            dc.extend_from_slice(rest);
            words.push(data.at(&dc).clone());
        } else {
            words.push(zero(data.dtype));
        }
    }
    let out = RTensor::new(data.dtype, oshape, words);
    check_payload(&out, max_bytes)?;
    Ok(out)
}

/// Scatter-9 (`negatives` false) and ScatterElements: `out = data`, then for each position i of
/// `indices` in row-major order, `out[i with i[axis] := norm(indices[i])] = f(.., updates[i])`.
fn scatter_elements<E: Element>(
    negatives: bool,
    data: &RTensor<E>,
    ind: &RTensor<E>,
    upd: &RTensor<E>,
    axis: i64,
    red: Red,
    max_bytes: usize,
) -> Res<RTensor<E>> {
    let axis = elements_shapes(data, ind, axis)?;
    if upd.shape != ind.shape {
        return invalid(format!(
            "updates shape {:?} != indices shape {:?}",
            upd.shape, ind.shape
        ));
    }
    check_size(data.dtype, &data.shape, max_bytes)?;
    let norm = all_in_range(ind, data.shape[axis], negatives)?;
    if !reduction_supported(data.dtype, red) {
        return Err(Refusal::Unsupported(format!(
            "reduction {red:?} on {}",
            data.dtype
        )));
    }
    let mut out = data.clone();
    for ic in positions(&ind.shape) {
        let flat = offset(&ic, &ind.shape);
        let mut dc = ic.clone();
        dc[axis] = norm[flat];
        let o = offset(&dc, &out.shape);
        out.words[o] = combine_elems(data.dtype, red, &out.words[o], &upd.words[flat]);
    }
    Ok(out)
}

/// ScatterND: for each `idx` of `indices.shape[:-1]` in row-major order, the slice
/// `out[norm(indices[idx]), ..] = f(.., updates[idx, ..])`.
fn scatter_nd<E: Element>(
    data: &RTensor<E>,
    ind: &RTensor<E>,
    upd: &RTensor<E>,
    red: Red,
    max_bytes: usize,
) -> Res<RTensor<E>> {
    let (r, q) = (data.rank(), ind.rank());
    if r == 0 {
        return invalid("ScatterND data must have rank >= 1");
    }
    if q == 0 {
        return invalid("ScatterND indices must have rank >= 1");
    }
    let k = ind.shape[q - 1];
    if k > r {
        return invalid(format!("k = {k} > rank {r}"));
    }
    let prefix = &ind.shape[..q - 1];
    let slice = &data.shape[k..];
    let mut ushape = prefix.to_vec();
    ushape.extend_from_slice(slice);
    if upd.shape != ushape {
        return invalid(format!(
            "updates shape {:?} != indices.shape[:-1] ++ data.shape[k:] = {ushape:?}",
            upd.shape
        ));
    }
    check_size(data.dtype, &data.shape, max_bytes)?;
    let values = index_values(ind);
    let mut norm = Vec::new();
    for (pos, &value) in values.iter().enumerate() {
        let c = coords(pos, &ind.shape);
        let s = data.shape[c[q - 1]];
        match norm_index(value, s, true) {
            Some(x) => norm.push(x),
            None => {
                return invalid(format!(
                    "indices[{c:?}] = {value} out of range for dim {} (size {s})",
                    c[q - 1]
                ))
            }
        }
    }
    if !reduction_supported(data.dtype, red) {
        return Err(Refusal::Unsupported(format!(
            "reduction {red:?} on {}",
            data.dtype
        )));
    }
    let mut out = data.clone();
    if numel(slice) == 0 {
        // Nothing to write, however many tuples: with k = 0 over empty data their count is
        // bounded by nothing (indices [3, 2^40, 0] are a few bytes).
        return Ok(out);
    }
    for pc in positions(prefix) {
        let mut target = Vec::new();
        for j in 0..k {
            let mut ic = pc.clone();
            ic.push(j);
            target.push(norm[offset(&ic, &ind.shape)]);
        }
        for tc in positions(slice) {
            let mut dc = target.clone();
            dc.extend_from_slice(&tc);
            let mut uc = pc.clone();
            uc.extend_from_slice(&tc);
            let o = offset(&dc, &out.shape);
            out.words[o] = combine_elems(data.dtype, red, &out.words[o], upd.at(&uc));
        }
    }
    Ok(out)
}

/// TensorScatter-24: `present = past`, then `present[p, dest(p[0], j), ..] = update[p, j, ..]`.
fn tensor_scatter<E: Element>(
    past: &RTensor<E>,
    upd: &RTensor<E>,
    write: Option<&RTensor<E>>,
    axis: i64,
    mode: &[u8],
    max_bytes: usize,
) -> Res<RTensor<E>> {
    let circular = match mode {
        b"linear" => false,
        b"circular" => true,
        _ => {
            return invalid(format!(
                "mode {:?} is neither linear nor circular",
                String::from_utf8_lossy(mode)
            ))
        }
    };
    let r = past.rank();
    let Some(ax) = norm_axis(axis, r) else {
        return invalid(format!("axis {axis} out of range for rank {r}"));
    };
    if ax == 0 {
        return invalid("axis must not be the batch axis 0");
    }
    if upd.rank() != r || (0..r).any(|d| d != ax && upd.shape[d] != past.shape[d]) {
        return invalid(format!(
            "update shape {:?} must equal past shape {:?} off axis {ax}",
            upd.shape, past.shape
        ));
    }
    let (l, m) = (upd.shape[ax], past.shape[ax]);
    if l > m {
        return invalid(format!("sequence length {l} > max sequence length {m}"));
    }
    let batch = past.shape[0];
    let wi: Vec<i128> = match write {
        None => vec![0; batch],
        Some(w) => {
            if w.shape != [batch] {
                return invalid(format!("write_indices shape {:?} != [{batch}]", w.shape));
            }
            index_values(w)
        }
    };
    for (b, &w) in wi.iter().enumerate() {
        if w < 0 {
            return invalid(format!("write_indices[{b}] = {w} is negative"));
        }
        if !circular && w + l as i128 > m as i128 {
            return invalid(format!(
                "write_indices[{b}] = {w} + {l} > {m} in linear mode"
            ));
        }
    }
    check_size(past.dtype, &past.shape, max_bytes)?;
    let mut out = past.clone();
    for uc in positions(&upd.shape) {
        let j = uc[ax] as i128;
        let mut dest = wi[uc[0]] + j;
        if circular {
            dest %= m as i128;
        }
        let mut dc = uc.clone();
        dc[ax] = dest as usize;
        let o = offset(&dc, &out.shape);
        out.words[o] = upd.at(&uc).clone();
    }
    Ok(out)
}

/// GatherGrad and GatherElementsGrad (D14): `dX = zeros(shape)`, then each element of `dY`, in
/// row-major order, is added (D8) at the position its forward op gathered it from.
fn gather_grad<E: Element>(
    op: Op,
    shape_t: &RTensor<E>,
    ind: &RTensor<E>,
    dy: &RTensor<E>,
    axis: i64,
    max_bytes: usize,
) -> Res<RTensor<E>> {
    if !data_type_ok(op, 1, dy.dtype) {
        return invalid(format!("dY is {}, not a float type", dy.dtype));
    }
    if !index_type_ok(op, ind.dtype) || shape_t.dtype != DType::Int64 {
        return invalid(format!(
            "indices are {} (int32/int64), shape is {} (int64)",
            ind.dtype, shape_t.dtype
        ));
    }
    if shape_t.rank() != 1 {
        return invalid(format!("shape must be 1-D, it is {:?}", shape_t.shape));
    }
    let mut shape = Vec::new();
    for d in index_values(shape_t) {
        match usize::try_from(d) {
            Ok(d) => shape.push(d),
            Err(_) => return invalid(format!("shape has a negative dim {d}")),
        }
    }
    let r = shape.len();
    let Some(axis) = norm_axis(axis, r) else {
        return invalid(format!("axis {axis} out of range for rank {r}"));
    };
    // The shape rules of each forward op, the size of dX, then every index (D3).
    match op {
        Op::GatherGrad => {
            let mut want = shape[..axis].to_vec();
            want.extend_from_slice(&ind.shape);
            want.extend_from_slice(&shape[axis + 1..]);
            if dy.shape != want {
                return invalid(format!("dY {:?} != {want:?}", dy.shape));
            }
        }
        _ => {
            if ind.rank() != r {
                return invalid(format!("indices rank {} != rank of shape {r}", ind.rank()));
            }
            if (0..r).any(|d| d != axis && ind.shape[d] > shape[d]) {
                return invalid("indices larger than shape off the axis");
            }
            if dy.shape != ind.shape {
                return invalid(format!(
                    "dY {:?} != indices shape {:?}",
                    dy.shape, ind.shape
                ));
            }
        }
    }
    check_size(dy.dtype, &shape, max_bytes)?;
    let norm = all_in_range(ind, shape[axis], true)?;
    let q = ind.rank();
    let mut dx = RTensor::new(dy.dtype, shape.clone(), vec![zero(dy.dtype); numel(&shape)]);
    for (flat, p) in positions(&dy.shape).enumerate() {
        let target = match op {
            Op::GatherGrad => {
                let mut t = p[..axis].to_vec();
                t.push(norm[offset(&p[axis..axis + q], &ind.shape)]);
                t.extend_from_slice(&p[axis + q..]);
                t
            }
            _ => {
                let mut t = p.clone();
                t[axis] = norm[flat];
                t
            }
        };
        let o = offset(&target, &shape);
        dx.words[o] = combine_elems(dy.dtype, Red::Add, &dx.words[o], &dy.words[flat]);
    }
    Ok(dx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(shape: &[usize], v: &[f32]) -> RTensor {
        RTensor::f32s(shape, v)
    }

    fn i64s(shape: &[usize], v: &[i64]) -> RTensor {
        RTensor::i64s(shape, v)
    }

    fn i8s(shape: &[usize], v: &[i8]) -> RTensor {
        let bits: Vec<u64> = v.iter().map(|&x| u64::from(x as u8)).collect();
        RTensor::bits(DType::Int8, shape, &bits)
    }

    fn strs(shape: &[usize], v: &[&str]) -> RTensor {
        RTensor::new(
            DType::String,
            shape.to_vec(),
            v.iter()
                .map(|s| Word::Bytes(s.as_bytes().to_vec()))
                .collect(),
        )
    }

    fn int(name: &str, i: i64) -> Attr {
        Attr::int(name, i)
    }

    fn text(name: &str, s: &str) -> Attr {
        Attr::text(name, s)
    }

    fn run(op: Op, opset: i64, attrs: &[Attr], inputs: &[&RTensor]) -> Outcome {
        let inputs: Vec<Option<RTensor>> = inputs.iter().map(|t| Some((*t).clone())).collect();
        evaluate(op, opset, attrs, &inputs, 1 << 20)
    }

    fn ok(o: Outcome) -> RTensor {
        match o {
            Outcome::Ok { out, .. } => out,
            other => panic!("expected an output, got {other:?}"),
        }
    }

    fn is_invalid(o: &Outcome) -> bool {
        matches!(o, Outcome::Invalid(_))
    }

    #[test]
    fn gather_spec_examples() {
        // onnx__Gather.html, example 1 (axis 0).
        let data = f32s(&[3, 2], &[1.0, 1.2, 2.3, 3.4, 4.5, 5.7]);
        let idx = i64s(&[2, 2], &[0, 1, 1, 2]);
        assert_eq!(
            ok(run(Op::Gather, 13, &[], &[&data, &idx])),
            f32s(&[2, 2, 2], &[1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7])
        );
        // Example 2 (axis 1).
        let data = f32s(&[3, 3], &[1.0, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9]);
        let idx = i64s(&[1, 2], &[0, 2]);
        assert_eq!(
            ok(run(Op::Gather, 13, &[int("axis", 1)], &[&data, &idx])),
            f32s(&[3, 1, 2], &[1.0, 1.9, 2.3, 3.9, 4.5, 5.9])
        );
        // A scalar index on 1-D data gives a scalar.
        let data = f32s(&[3], &[1.0, 2.0, 3.0]);
        let idx = i64s(&[], &[-1]);
        assert_eq!(
            ok(run(Op::Gather, 11, &[], &[&data, &idx])),
            f32s(&[], &[3.0])
        );
        // D2: negative indices are out of range at Gather-1 (opsets 1-10).
        assert!(is_invalid(&run(Op::Gather, 10, &[], &[&data, &idx])));
        // D3: out of range, and axis out of range.
        assert!(is_invalid(&run(
            Op::Gather,
            13,
            &[],
            &[&data, &i64s(&[1], &[3])]
        )));
        assert!(is_invalid(&run(
            Op::Gather,
            13,
            &[],
            &[&data, &i64s(&[1], &[-4])]
        )));
        assert!(is_invalid(&run(
            Op::Gather,
            13,
            &[int("axis", 1)],
            &[&data, &i64s(&[1], &[0])]
        )));
        // Empty indices: nothing is checked, even against an empty axis.
        let empty = f32s(&[0, 2], &[]);
        assert_eq!(
            ok(run(Op::Gather, 13, &[], &[&empty, &i64s(&[0], &[])])),
            f32s(&[0, 2], &[])
        );
        // bfloat16 arrives with version 13 (D4).
        let bf = RTensor::bits(DType::Bfloat16, &[1], &[0x3f80]);
        assert!(is_invalid(&run(
            Op::Gather,
            12,
            &[],
            &[&bf, &i64s(&[1], &[0])]
        )));
        assert!(matches!(
            run(Op::Gather, 13, &[], &[&bf, &i64s(&[1], &[0])]),
            Outcome::Ok { .. }
        ));
    }

    #[test]
    fn gather_elements_spec_examples() {
        let data = f32s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let idx = i64s(&[2, 2], &[0, 0, 1, 0]);
        assert_eq!(
            ok(run(
                Op::GatherElements,
                13,
                &[int("axis", 1)],
                &[&data, &idx]
            )),
            f32s(&[2, 2], &[1.0, 1.0, 4.0, 3.0])
        );
        let data = f32s(&[3, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        let idx = i64s(&[2, 3], &[1, 2, 0, 2, 0, 0]);
        assert_eq!(
            ok(run(Op::GatherElements, 11, &[], &[&data, &idx])),
            f32s(&[2, 3], &[4.0, 8.0, 3.0, 7.0, 2.0, 3.0])
        );
        // test_gather_elements_negative_indices.
        let idx = i64s(&[2, 3], &[-1, -2, 0, -2, 0, 0]);
        assert_eq!(
            ok(run(Op::GatherElements, 13, &[], &[&data, &idx])),
            f32s(&[2, 3], &[7.0, 5.0, 3.0, 4.0, 2.0, 3.0])
        );
        // Off-axis dim larger than data's, rank mismatch: invalid. Longer along the axis: fine.
        assert!(is_invalid(&run(
            Op::GatherElements,
            13,
            &[],
            &[&data, &i64s(&[1, 4], &[0; 4])]
        )));
        assert!(is_invalid(&run(
            Op::GatherElements,
            13,
            &[],
            &[&data, &i64s(&[3], &[0; 3])]
        )));
        assert_eq!(
            ok(run(
                Op::GatherElements,
                13,
                &[],
                &[&data, &i64s(&[4, 1], &[2, 1, 0, -1])]
            )),
            f32s(&[4, 1], &[7.0, 4.0, 1.0, 7.0])
        );
        assert!(is_invalid(&run(
            Op::GatherElements,
            13,
            &[],
            &[&data, &i64s(&[1, 1], &[3])]
        )));
    }

    #[test]
    fn gather_nd_spec_examples() {
        let data = i64s(&[2, 2], &[0, 1, 2, 3]);
        assert_eq!(
            ok(run(
                Op::GatherND,
                11,
                &[],
                &[&data, &i64s(&[2, 2], &[0, 0, 1, 1])]
            )),
            i64s(&[2], &[0, 3])
        );
        assert_eq!(
            ok(run(
                Op::GatherND,
                11,
                &[],
                &[&data, &i64s(&[2, 1], &[1, 0])]
            )),
            i64s(&[2, 2], &[2, 3, 0, 1])
        );
        let data = i64s(&[2, 2, 2], &[0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(
            ok(run(
                Op::GatherND,
                12,
                &[],
                &[&data, &i64s(&[2, 2], &[0, 1, 1, 0])]
            )),
            i64s(&[2, 2], &[2, 3, 4, 5])
        );
        assert_eq!(
            ok(run(
                Op::GatherND,
                12,
                &[],
                &[&data, &i64s(&[2, 1, 2], &[0, 1, 1, 0])]
            )),
            i64s(&[2, 1, 2], &[2, 3, 4, 5])
        );
        // batch_dims = 1.
        assert_eq!(
            ok(run(
                Op::GatherND,
                13,
                &[int("batch_dims", 1)],
                &[&data, &i64s(&[2, 1], &[1, 0])]
            )),
            i64s(&[2, 2], &[2, 3, 4, 5])
        );
        // batch_dims is not defined by GatherND-11; k = 0, k > r, int32 indices are invalid.
        assert!(is_invalid(&run(
            Op::GatherND,
            11,
            &[int("batch_dims", 0)],
            &[&data, &i64s(&[1, 1], &[0])]
        )));
        assert!(is_invalid(&run(
            Op::GatherND,
            13,
            &[],
            &[&data, &i64s(&[2, 0], &[])]
        )));
        assert!(is_invalid(&run(
            Op::GatherND,
            13,
            &[],
            &[&data, &i64s(&[1, 4], &[0; 4])]
        )));
        let i32_idx = RTensor::bits(DType::Int32, &[1, 1], &[0]);
        assert!(is_invalid(&run(Op::GatherND, 13, &[], &[&data, &i32_idx])));
        // Batch dims must be equal; batch_dims = -1 is invalid.
        assert!(is_invalid(&run(
            Op::GatherND,
            13,
            &[int("batch_dims", 1)],
            &[&data, &i64s(&[1, 1], &[0])]
        )));
        assert!(is_invalid(&run(
            Op::GatherND,
            13,
            &[int("batch_dims", -1)],
            &[&data, &i64s(&[2, 1], &[0, 0])]
        )));
        // Negative components count from the back of their own dim.
        assert_eq!(
            ok(run(
                Op::GatherND,
                13,
                &[],
                &[&data, &i64s(&[1, 3], &[-1, 0, -1])]
            )),
            i64s(&[1], &[5])
        );
    }

    #[test]
    fn openvino_gather_spec_examples() {
        let axis0 = i64s(&[], &[0]);
        // gather-8.rst: zero-fill of out-of-range indices.
        let data = i64s(&[5], &[1, 2, 3, 4, 5]);
        assert_eq!(
            ok(run(
                Op::OvGather,
                8,
                &[],
                &[&data, &i64s(&[3], &[3, 10, -20]), &axis0]
            )),
            i64s(&[3], &[4, 0, 0])
        );
        // batch_dims = 1, axis = 1.
        let data = i64s(&[2, 5], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        let idx = i64s(&[2, 3], &[0, 0, 4, 4, 0, 0]);
        let axis1 = RTensor::bits(DType::Int32, &[1], &[1]);
        let want = i64s(&[2, 3], &[1, 1, 5, 10, 6, 6]);
        assert_eq!(
            ok(run(
                Op::OvGather,
                8,
                &[int("batch_dims", 1)],
                &[&data, &idx, &axis1]
            )),
            want
        );
        // batch_dims = -1 counts from the back of the indices rank (2): the same.
        assert_eq!(
            ok(run(
                Op::OvGather,
                8,
                &[int("batch_dims", -1)],
                &[&data, &idx, &axis1]
            )),
            want
        );
        // batch_dims == indices rank: each batch picks one index, the axis dim disappears.
        let idx = i64s(&[2], &[1, -1]);
        assert_eq!(
            ok(run(
                Op::OvGather,
                8,
                &[int("batch_dims", 1)],
                &[&data, &idx, &axis1]
            )),
            i64s(&[2], &[2, 10])
        );
        // batch_dims > axis; an axis input with two elements; strings zero-fill with "".
        assert!(is_invalid(&run(
            Op::OvGather,
            8,
            &[int("batch_dims", 1)],
            &[&data, &idx, &axis0]
        )));
        assert!(is_invalid(&run(
            Op::OvGather,
            8,
            &[],
            &[&data, &idx, &i64s(&[2], &[0, 0])]
        )));
        let s = strs(&[2], &["a", "b"]);
        assert_eq!(
            ok(run(
                Op::OvGather,
                8,
                &[],
                &[&s, &i64s(&[2], &[1, 2]), &axis0]
            )),
            strs(&[2], &["b", ""])
        );
        assert_eq!(
            run(Op::OvGather, 0, &[], &[&s, &i64s(&[2], &[1, 2]), &axis0]),
            Outcome::TooOld
        );
        // Gather-7 and Gather-1: an index past the end breaks the spec instead of reading zeros,
        // and so does a negative one.
        for v in [1, 7] {
            assert!(matches!(
                run(Op::OvGather, v, &[], &[&s, &i64s(&[2], &[1, 2]), &axis0]),
                Outcome::Invalid(_)
            ));
            assert!(matches!(
                run(Op::OvGather, v, &[], &[&s, &i64s(&[1], &[-1]), &axis0]),
                Outcome::Invalid(_)
            ));
            assert_eq!(
                ok(run(
                    Op::OvGather,
                    v,
                    &[],
                    &[&s, &i64s(&[2], &[1, 0]), &axis0]
                )),
                strs(&[2], &["b", "a"])
            );
        }
    }

    #[test]
    fn scatter_elements_spec_examples() {
        let data = f32s(&[3, 3], &[0.0; 9]);
        let idx = i64s(&[2, 3], &[1, 0, 2, 0, 2, 1]);
        let upd = f32s(&[2, 3], &[1.0, 1.1, 1.2, 2.0, 2.1, 2.2]);
        let want = f32s(&[3, 3], &[2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2]);
        assert_eq!(
            ok(run(Op::ScatterElements, 11, &[], &[&data, &idx, &upd])),
            want
        );
        // Scatter-9 is the same op; it is deprecated from opset 11.
        assert_eq!(ok(run(Op::Scatter, 10, &[], &[&data, &idx, &upd])), want);
        assert!(is_invalid(&run(Op::Scatter, 11, &[], &[&data, &idx, &upd])));
        let data = f32s(&[1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]);
        let upd = f32s(&[1, 2], &[1.1, 2.1]);
        assert_eq!(
            ok(run(
                Op::ScatterElements,
                13,
                &[int("axis", 1)],
                &[&data, &i64s(&[1, 2], &[1, 3]), &upd]
            )),
            f32s(&[1, 5], &[1.0, 1.1, 3.0, 2.1, 5.0])
        );
        // Negative indices from version 11; never at Scatter-9 (D2).
        let neg = i64s(&[1, 2], &[1, -3]);
        assert_eq!(
            ok(run(
                Op::ScatterElements,
                11,
                &[int("axis", 1)],
                &[&data, &neg, &upd]
            )),
            f32s(&[1, 5], &[1.0, 1.1, 2.1, 4.0, 5.0])
        );
        assert!(is_invalid(&run(
            Op::Scatter,
            9,
            &[int("axis", 1)],
            &[&data, &neg, &upd]
        )));
        // Duplicates: last write wins (D7); reductions in row-major order.
        let dup = i64s(&[1, 2], &[1, 1]);
        let at =
            |attrs: &[Attr], opset| run(Op::ScatterElements, opset, attrs, &[&data, &dup, &upd]);
        assert_eq!(
            ok(at(&[int("axis", 1)], 13)),
            f32s(&[1, 5], &[1.0, 2.1, 3.0, 4.0, 5.0])
        );
        let add = [int("axis", 1), text("reduction", "add")];
        assert_eq!(
            ok(at(&add, 16)),
            f32s(&[1, 5], &[1.0, (2.0f32 + 1.1) + 2.1, 3.0, 4.0, 5.0])
        );
        let mul = [int("axis", 1), text("reduction", "mul")];
        assert_eq!(
            ok(at(&mul, 16)),
            f32s(&[1, 5], &[1.0, (2.0f32 * 1.1) * 2.1, 3.0, 4.0, 5.0])
        );
        let max = [int("axis", 1), text("reduction", "max")];
        assert_eq!(ok(at(&max, 18)), f32s(&[1, 5], &[1.0, 2.1, 3.0, 4.0, 5.0]));
        let min = [int("axis", 1), text("reduction", "min")];
        assert_eq!(ok(at(&min, 18)), f32s(&[1, 5], &[1.0, 1.1, 3.0, 4.0, 5.0]));
        // D5: reduction before 16, max at 16, unknown strings.
        assert!(is_invalid(&at(&add, 15)));
        assert!(is_invalid(&at(&max, 17)));
        assert!(is_invalid(&at(
            &[int("axis", 1), text("reduction", "sub")],
            18
        )));
        // D6: updates must have the indices' shape.
        assert!(is_invalid(&run(
            Op::ScatterElements,
            18,
            &[int("axis", 1)],
            &[&data, &dup, &f32s(&[2], &[0.0, 0.0])]
        )));
    }

    #[test]
    fn reductions_follow_d8() {
        // int8 wraps: 100 + 100 + 2 = -54.
        let data = i8s(&[1], &[100]);
        let idx = i64s(&[2], &[0, 0]);
        let add = [text("reduction", "add")];
        assert_eq!(
            ok(run(
                Op::ScatterElements,
                18,
                &add,
                &[&data, &idx, &i8s(&[2], &[100, 2])]
            )),
            i8s(&[1], &[-54])
        );
        // IEEE maximum: NaN propagates either way; +0 > -0.
        let max = [text("reduction", "max")];
        let min = [text("reduction", "min")];
        let one = i64s(&[1], &[0]);
        let r = |red: &[Attr], d: f32, u: f32| {
            let out = ok(run(
                Op::ScatterElements,
                18,
                red,
                &[&f32s(&[1], &[d]), &one, &f32s(&[1], &[u])],
            ));
            let Word::Bits(b) = out.words[0] else {
                panic!()
            };
            f32::from_bits(b as u32)
        };
        assert!(r(&max, 1.0, f32::NAN).is_nan());
        assert!(r(&max, f32::NAN, 5.0).is_nan());
        assert!(r(&min, f32::NAN, 5.0).is_nan());
        assert_eq!(r(&max, 0.0, -0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(r(&max, -0.0, 0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(r(&min, 0.0, -0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(r(&min, -0.0, 0.0).to_bits(), (-0.0f32).to_bits());
        // bool: add = OR, mul = AND; max is skipped.
        let b = |v: &[u64]| RTensor::bits(DType::Bool, &[v.len()], v);
        let idx2 = i64s(&[2], &[0, 1]);
        assert_eq!(
            ok(run(
                Op::ScatterElements,
                16,
                &add,
                &[&b(&[0, 1]), &idx2, &b(&[1, 0])]
            )),
            b(&[1, 1])
        );
        let mul = [text("reduction", "mul")];
        assert_eq!(
            ok(run(
                Op::ScatterElements,
                16,
                &mul,
                &[&b(&[0, 1]), &idx2, &b(&[1, 0])]
            )),
            b(&[0, 0])
        );
        assert!(matches!(
            run(
                Op::ScatterElements,
                18,
                &max,
                &[&b(&[0, 1]), &idx2, &b(&[1, 0])]
            ),
            Outcome::Unsupported(_)
        ));
        // string: add = concatenation ("a" + "x" + "y"), mul is skipped, but an out-of-range
        // index is invalid first.
        let s = strs(&[1], &["a"]);
        assert_eq!(
            ok(run(
                Op::ScatterND,
                16,
                &add,
                &[&s, &i64s(&[2, 1], &[0, 0]), &strs(&[2], &["x", "y"])]
            )),
            strs(&[1], &["axy"])
        );
        assert!(matches!(
            run(
                Op::ScatterND,
                16,
                &mul,
                &[&s, &i64s(&[1, 1], &[0]), &strs(&[1], &["x"])]
            ),
            Outcome::Unsupported(_)
        ));
        assert!(is_invalid(&run(
            Op::ScatterND,
            16,
            &mul,
            &[&s, &i64s(&[1, 1], &[1]), &strs(&[1], &["x"])]
        )));
        // float16 adds through f32 and rounds to nearest even: 2048 + 1 = 2048, then + 3 = 2052.
        let h = |v: &[u64]| RTensor::bits(DType::Float16, &[v.len()], v);
        assert_eq!(
            ok(run(
                Op::ScatterElements,
                16,
                &add,
                &[&h(&[0x6800]), &idx, &h(&[0x3c00, 0x4200])]
            )),
            h(&[0x6802])
        );
    }

    #[test]
    fn half_conversions_round_to_nearest_even() {
        for h in [
            0u16, 0x8000, 1, 0x3ff, 0x400, 0x3c00, 0x7bff, 0x7c00, 0xfc00, 0xc000,
        ] {
            assert_eq!(f32_to_f16(f16_to_f32(h)), h, "{h:#x}");
        }
        assert_eq!(f32_to_f16(65520.0), 0x7c00); // halfway to infinity rounds up (even)
        assert_eq!(f32_to_f16(65519.0), 0x7bff);
        assert_eq!(f32_to_f16(f32::powi(2.0, -25)), 0); // halfway to the smallest subnormal
        assert_eq!(f32_to_f16(f32::powi(2.0, -25) * 1.5), 1);
        assert_eq!(f32_to_f16(1.0 + f32::powi(2.0, -11)), 0x3c00); // tie to even
        assert_eq!(f32_to_f16(1.0 + 3.0 * f32::powi(2.0, -11)), 0x3c02);
        assert!(f16_to_f32(f32_to_f16(f32::NAN)).is_nan());
        assert_eq!(f32_to_bf16(1.0), 0x3f80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80); // tie to even
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82);
    }

    #[test]
    fn scatter_nd_spec_examples() {
        let data = f32s(&[8], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
        let idx = i64s(&[4, 1], &[4, 3, 1, 7]);
        let upd = f32s(&[4], &[9.0, 10.0, 11.0, 12.0]);
        assert_eq!(
            ok(run(Op::ScatterND, 11, &[], &[&data, &idx, &upd])),
            f32s(&[8], &[1.0, 11.0, 3.0, 10.0, 9.0, 6.0, 7.0, 12.0])
        );
        // test_scatternd (slices) and test_scatternd_add (duplicates).
        let a = [
            1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0,
        ];
        let b = [
            8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0,
        ];
        let data = f32s(&[4, 4, 4], &[a, a, b, b].concat());
        let u0 = [
            5.0, 5.0, 5.0, 5.0, 6.0, 6.0, 6.0, 6.0, 7.0, 7.0, 7.0, 7.0, 8.0, 8.0, 8.0, 8.0,
        ];
        let u1 = [
            1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0, 4.0, 4.0, 4.0, 4.0,
        ];
        let upd = f32s(&[2, 4, 4], &[u0, u1].concat());
        assert_eq!(
            ok(run(
                Op::ScatterND,
                13,
                &[],
                &[&data, &i64s(&[2, 1], &[0, 2]), &upd]
            )),
            f32s(&[4, 4, 4], &[u0, a, u1, b].concat())
        );
        let sum = [
            7.0, 8.0, 9.0, 10.0, 13.0, 14.0, 15.0, 16.0, 18.0, 17.0, 16.0, 15.0, 16.0, 15.0, 14.0,
            13.0,
        ];
        let add = [text("reduction", "add")];
        assert_eq!(
            ok(run(
                Op::ScatterND,
                16,
                &add,
                &[&data, &i64s(&[2, 1], &[0, 0]), &upd]
            )),
            f32s(&[4, 4, 4], &[sum, a, b, b].concat())
        );
        // k = 0: every update replaces the whole tensor; the last wins.
        let d = f32s(&[2], &[1.0, 2.0]);
        assert_eq!(
            ok(run(
                Op::ScatterND,
                18,
                &[],
                &[
                    &d,
                    &i64s(&[2, 0], &[]),
                    &f32s(&[2, 2], &[3.0, 4.0, 5.0, 6.0])
                ]
            )),
            f32s(&[2], &[5.0, 6.0])
        );
        // Wrong updates shape; k > r; reduction before 16.
        assert!(is_invalid(&run(
            Op::ScatterND,
            18,
            &[],
            &[&d, &i64s(&[1, 1], &[0]), &f32s(&[2], &[0.0, 0.0])]
        )));
        assert!(is_invalid(&run(
            Op::ScatterND,
            18,
            &[],
            &[&d, &i64s(&[1, 2], &[0, 0]), &f32s(&[1], &[0.0])]
        )));
        assert!(is_invalid(&run(
            Op::ScatterND,
            13,
            &add,
            &[&d, &i64s(&[1, 1], &[0]), &f32s(&[1], &[0.0])]
        )));
    }

    #[test]
    fn tensor_scatter_rules() {
        // past [2, 4, 1], update [2, 2, 1] along the default axis -2.
        let past = f32s(&[2, 4, 1], &[0.0; 8]);
        let upd = f32s(&[2, 2, 1], &[1.0, 2.0, 3.0, 4.0]);
        let wi = i64s(&[2], &[1, 2]);
        assert_eq!(
            ok(run(Op::TensorScatter, 24, &[], &[&past, &upd, &wi])),
            f32s(&[2, 4, 1], &[0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 3.0, 4.0])
        );
        // Without write_indices every batch writes at 0.
        assert_eq!(
            ok(run(Op::TensorScatter, 24, &[], &[&past, &upd])),
            f32s(&[2, 4, 1], &[1.0, 2.0, 0.0, 0.0, 3.0, 4.0, 0.0, 0.0])
        );
        // Circular: positions mod M (9 -> 1, 2).
        let circ = [text("mode", "circular")];
        assert_eq!(
            ok(run(
                Op::TensorScatter,
                24,
                &circ,
                &[&past, &upd, &i64s(&[2], &[3, 9])]
            )),
            f32s(&[2, 4, 1], &[2.0, 0.0, 0.0, 1.0, 0.0, 3.0, 4.0, 0.0])
        );
        // Linear overflow, negative index, axis 0, bad mode, wrong write_indices shape.
        assert!(is_invalid(&run(
            Op::TensorScatter,
            24,
            &[],
            &[&past, &upd, &i64s(&[2], &[3, 0])]
        )));
        assert!(is_invalid(&run(
            Op::TensorScatter,
            24,
            &circ,
            &[&past, &upd, &i64s(&[2], &[-1, 0])]
        )));
        assert!(is_invalid(&run(
            Op::TensorScatter,
            24,
            &[int("axis", 0)],
            &[&past, &upd]
        )));
        assert!(is_invalid(&run(
            Op::TensorScatter,
            24,
            &[text("mode", "foo")],
            &[&past, &upd]
        )));
        assert!(is_invalid(&run(
            Op::TensorScatter,
            24,
            &[],
            &[&past, &upd, &i64s(&[3], &[0, 0, 0])]
        )));
        assert_eq!(
            run(Op::TensorScatter, 23, &[], &[&past, &upd]),
            Outcome::TooOld
        );
        // Packed uint4.
        let p = RTensor::bits(DType::Uint4, &[1, 3], &[1, 2, 3]);
        let u = RTensor::bits(DType::Uint4, &[1, 1], &[15]);
        let out = ok(run(
            Op::TensorScatter,
            24,
            &[int("axis", 1)],
            &[&p, &u, &i64s(&[1], &[2])],
        ));
        assert_eq!(out, RTensor::bits(DType::Uint4, &[1, 3], &[1, 2, 15]));
    }

    #[test]
    fn gradients_accumulate_where_the_forward_op_gathered() {
        // Worked by hand from D14: dX = zeros(shape), each dY element added in row-major order.
        let dy = f32s(&[3], &[1.0, 2.0, 3.0]);
        let shape = i64s(&[1], &[3]);
        assert_eq!(
            ok(run(
                Op::GatherGrad,
                1,
                &[],
                &[&shape, &i64s(&[3], &[0, 2, -3]), &dy]
            )),
            f32s(&[3], &[4.0, 0.0, 2.0])
        );
        let dy = f32s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let shape = i64s(&[1], &[2]);
        let shape23 = i64s(&[2], &[2, 3]);
        assert_eq!(
            ok(run(
                Op::GatherElementsGrad,
                1,
                &[int("axis", 1)],
                &[&dy, &shape23, &i64s(&[2, 2], &[0, 0, 2, 1])]
            )),
            f32s(&[2, 3], &[3.0, 0.0, 0.0, 0.0, 4.0, 3.0])
        );
        // GatherGrad along axis 1 of [2, 3] with indices [2]: dY is [2, 2].
        assert_eq!(
            ok(run(
                Op::GatherGrad,
                1,
                &[int("axis", 1)],
                &[&shape23, &i64s(&[2], &[1, 1]), &dy]
            )),
            f32s(&[2, 3], &[0.0, 3.0, 0.0, 0.0, 7.0, 0.0])
        );
        // Integer dY, a negative dim, dY of the wrong shape, an index out of range: invalid.
        let idx = i64s(&[2], &[0, 1]);
        assert!(is_invalid(&run(
            Op::GatherGrad,
            1,
            &[],
            &[&shape, &idx, &i64s(&[2], &[1, 2])]
        )));
        assert!(is_invalid(&run(
            Op::GatherGrad,
            1,
            &[],
            &[&i64s(&[1], &[-1]), &i64s(&[0], &[]), &f32s(&[0], &[])]
        )));
        assert!(is_invalid(&run(
            Op::GatherGrad,
            1,
            &[],
            &[&shape, &idx, &f32s(&[3], &[0.0; 3])]
        )));
        assert!(is_invalid(&run(
            Op::GatherGrad,
            1,
            &[],
            &[&shape, &i64s(&[1], &[2]), &f32s(&[1], &[0.0])]
        )));
        assert_eq!(
            run(
                Op::GatherGrad,
                0,
                &[],
                &[&shape, &idx, &f32s(&[2], &[0.0; 2])]
            ),
            Outcome::TooOld
        );
    }
}
