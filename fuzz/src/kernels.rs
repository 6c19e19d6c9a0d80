//! Targets `gather_kernels` and `scatter_kernels`: one node of an indexing operator, run through
//! the tool's registry (`resolve` + `invoke`) and through the naive [`reference`] model, which must
//! agree exactly.
//!
//! The bytes are decoded with `arbitrary` into a [`Case`]: op, opset (the usual ones, versions
//! where an attribute is not yet defined, too-old and odd opsets), dtypes, tiny shapes that mostly
//! obey the op's shape rules but sometimes break them, index values that are mostly in range and
//! sometimes negative or out of range, attributes that are absent, valid, out of range, unknown
//! or of the wrong type, and omitted or extra inputs.
//!
//! Agreement: reference output <=> kernel output with the same dtype, shape and bit-identical
//! elements (for reductions any NaN equals any NaN); reference Invalid <=> `SpecError::Violation` (or `Decision`);
//! reference Unsupported <=> `SpecError::Unsupported`; reference TooLarge <=> `TooLarge` (or
//! `Spec`, when the kernel finds another error first: both are "errored", D12).

use crate::convert;
use crate::MAX_TENSOR_BYTES;
use arbitrary::{Arbitrary, Unstructured};
use onnx_idx_check::load::attrs::attrs_of;
use onnx_idx_check::ops::{invoke, resolve, Evaluated, Invocation, Resolution};
use onnx_idx_check::pb::{attribute_proto::AttributeType, AttributeProto, NodeProto};
use onnx_idx_check::SpecError;
use onnx_idx_check_reference::{
    self as reference, Attr, AttrValue, DType, Op, Outcome, RTensor, Word,
};

/// One node to run.
#[derive(Clone, Debug)]
pub struct Case {
    /// The operator.
    pub op: Op,
    /// The node's domain (`""`, `"ai.onnx"` or `"org.openvinotoolkit"`).
    pub domain: &'static str,
    /// The model's opset import for that domain.
    pub opset: i64,
    /// The node's attributes, in order.
    pub attrs: Vec<Attr>,
    /// The inputs in node order; `None` is an omitted (empty-named) input.
    pub inputs: Vec<Option<RTensor>>,
}

/// A Gather, GatherElements, GatherND or OpenVINO Gather-8 node.
#[derive(Debug)]
pub struct GatherInput(pub Case);

/// A Scatter, ScatterElements, ScatterND or TensorScatter node.
#[derive(Debug)]
pub struct ScatterInput(pub Case);

impl<'a> Arbitrary<'a> for GatherInput {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(GatherInput(gen_gather(&mut Gen { u })))
    }
}

impl<'a> Arbitrary<'a> for ScatterInput {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(ScatterInput(gen_scatter(&mut Gen { u })))
    }
}

/// Gathers against the reference.
pub fn check_gathers(bytes: &[u8]) {
    let Ok(GatherInput(case)) = GatherInput::arbitrary_take_rest(Unstructured::new(bytes)) else {
        return;
    };
    check_case(&case);
}

/// Scatters against the reference.
pub fn check_scatters(bytes: &[u8]) {
    let Ok(ScatterInput(case)) = ScatterInput::arbitrary_take_rest(Unstructured::new(bytes)) else {
        return;
    };
    check_case(&case);
}

/// The attribute as a node carries it.
pub(crate) fn to_proto(a: &Attr) -> AttributeProto {
    let mut p = AttributeProto {
        name: a.name.clone(),
        ..Default::default()
    };
    match &a.value {
        AttrValue::Int(i) => {
            p.r#type = AttributeType::Int as i32;
            p.i = Some(*i);
        }
        AttrValue::Str(s) => {
            p.r#type = AttributeType::String as i32;
            p.s = s.clone();
        }
        AttrValue::Float(f) => {
            p.r#type = AttributeType::Float as i32;
            p.f = Some(*f);
        }
    }
    p
}

/// Runs `case` through the kernel and the reference and panics on any disagreement.
pub fn check_case(case: &Case) {
    let want_version = reference::resolve_version(case.op, case.opset);
    let (def, version) = match resolve(case.domain, case.op.op_type(), case.opset) {
        Resolution::Found(def, version) => (def, version),
        Resolution::TooOld(_) => {
            assert_eq!(
                want_version, None,
                "the registry finds no version of {} at opset {}, the reference finds {want_version:?}",
                case.op.op_type(),
                case.opset
            );
            return;
        }
        Resolution::Unknown => panic!("{:?} is unknown to the registry", case.op),
    };
    assert_eq!(
        Some(version.since),
        want_version,
        "version resolution of {:?} at opset {}",
        case.op,
        case.opset
    );
    let node = NodeProto {
        op_type: case.op.op_type().into(),
        domain: case.domain.into(),
        input: case
            .inputs
            .iter()
            .enumerate()
            .map(|(i, t)| t.as_ref().map_or(String::new(), |_| format!("in{i}")))
            .collect(),
        output: vec!["out".into()],
        attribute: case.attrs.iter().map(to_proto).collect(),
        ..Default::default()
    };
    let tensors: Vec<Option<_>> = case
        .inputs
        .iter()
        .map(|t| t.as_ref().map(convert::to_tensor))
        .collect();
    let inv = Invocation {
        def,
        version,
        attrs: attrs_of(&node, std::path::Path::new("."), MAX_TENSOR_BYTES),
        outputs: node.output.len(),
        inputs: tensors.iter().map(Option::as_ref).collect(),
        max_bytes: MAX_TENSOR_BYTES,
    };
    let got = invoke(&inv);
    let want = reference::evaluate(
        case.op,
        case.opset,
        &case.attrs,
        &case.inputs,
        MAX_TENSOR_BYTES,
    );
    if let Err(why) = agree(&want, &got) {
        panic!(
            "kernel and reference disagree: {why}\n  case: {case:#?}\n  reference: {want:?}\n  kernel: {}",
            describe(&got)
        );
    }
}

fn describe(got: &Result<Evaluated, SpecError>) -> String {
    match got {
        Ok(ev) => format!(
            "Ok({:?})",
            ev.outputs
                .iter()
                .map(|v| (v.arithmetic, convert::from_tensor(&v.tensor)))
                .collect::<Vec<_>>()
        ),
        Err(e) => format!("{e:?}"),
    }
}

fn agree(want: &Outcome, got: &Result<Evaluated, SpecError>) -> Result<(), String> {
    match (want, got) {
        (Outcome::Ok { out, arithmetic }, Ok(ev)) => {
            if ev.outputs.len() != 1 {
                return Err(format!("{} outputs, expected 1", ev.outputs.len()));
            }
            if ev.outputs[0].arithmetic != *arithmetic {
                // D9: data movement compares exactly, only reductions tolerantly.
                return Err(format!(
                    "kernel marks the output arithmetic={}, expected {arithmetic}",
                    ev.outputs[0].arithmetic
                ));
            }
            let t = &ev.outputs[0].tensor;
            if convert::dtype(t.dtype()) != out.dtype || t.shape() != out.shape.as_slice() {
                return Err(format!(
                    "output {}{:?}, expected {}{:?}",
                    t.dtype(),
                    t.shape(),
                    out.dtype,
                    out.shape
                ));
            }
            let got = convert::from_tensor(t);
            for (i, (g, w)) in got.words.iter().zip(&out.words).enumerate() {
                let nan_ok = *arithmetic
                    && reference::is_nan(out.dtype, g)
                    && reference::is_nan(out.dtype, w);
                if g != w && !nan_ok {
                    return Err(format!(
                        "element {i}: kernel {}, reference {}",
                        reference::show(out.dtype, g),
                        reference::show(out.dtype, w)
                    ));
                }
            }
            Ok(())
        }
        (Outcome::Invalid(_), Err(SpecError::Violation(_) | SpecError::Decision { .. }))
        | (Outcome::Unsupported(_), Err(SpecError::Unsupported(_)))
        | (
            Outcome::TooLarge(_),
            Err(SpecError::TooLarge(_) | SpecError::Violation(_) | SpecError::Decision { .. }),
        ) => Ok(()),
        _ => Err("different verdicts".into()),
    }
}

// ---------------------------------------------------------------------------------------------
// Generation.

/// Reads choices from the fuzzer's bytes; past the end every read is 0.
struct Gen<'a, 'b> {
    u: &'b mut Unstructured<'a>,
}

impl Gen<'_, '_> {
    fn byte(&mut self) -> u8 {
        self.u.arbitrary().unwrap_or(0)
    }

    fn u32(&mut self) -> u32 {
        self.u.arbitrary().unwrap_or(0)
    }

    fn u64(&mut self) -> u64 {
        self.u.arbitrary().unwrap_or(0)
    }

    /// True with probability about `percent`%.
    fn chance(&mut self, percent: u32) -> bool {
        u32::from(self.byte()) * 100 < percent * 256
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[usize::from(self.byte()) % xs.len()]
    }

    /// Picks by weight.
    fn weighted<T: Copy>(&mut self, xs: &[(u32, T)]) -> T {
        let total: u32 = xs.iter().map(|x| x.0).sum();
        let mut r = (u32::from(self.byte()) << 8 | u32::from(self.byte())) % total;
        for &(w, x) in xs {
            if r < w {
                return x;
            }
            r -= w;
        }
        xs[0].1
    }

    /// In `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + usize::from(self.byte()) % (hi - lo + 1)
    }

    /// A dim in 0..=5, zero now and then.
    fn dim(&mut self) -> usize {
        let b = self.byte();
        if b < 16 {
            0
        } else {
            1 + usize::from(b) % 5
        }
    }

    fn shape(&mut self, rank: usize) -> Vec<usize> {
        (0..rank).map(|_| self.dim()).collect()
    }

    /// `shape` with one dim changed (a shape rule broken), sometimes.
    fn maybe_break(&mut self, mut shape: Vec<usize>, percent: u32) -> Vec<usize> {
        if self.chance(percent) {
            match self.byte() % 3 {
                0 if !shape.is_empty() => {
                    let i = self.range(0, shape.len() - 1);
                    shape[i] = (shape[i] + 1 + self.range(0, 2)) % 6;
                }
                1 => shape.push(self.range(1, 3)),
                _ => {
                    shape.pop();
                }
            }
        }
        shape
    }

    fn data_dtype(&mut self) -> DType {
        use DType::*;
        self.weighted(&[
            (30, Float),
            (10, Int64),
            (8, Int32),
            (7, Int8),
            (7, Uint8),
            (7, Bool),
            (8, String),
            (4, Double),
            (4, Float16),
            (4, Bfloat16),
            (1, Int16),
            (1, Uint16),
            (1, Uint32),
            (2, Uint64),
            (1, Complex64),
            (1, Float8E4M3Fn),
            (2, Uint4),
            (1, Int4),
        ])
    }

    /// Index dtype: int64 mostly, int32 often, anything else rarely (`ov`: any integer type).
    fn index_dtype(&mut self, ov: bool) -> DType {
        use DType::*;
        if ov {
            return self.weighted(&[
                (40, Int64),
                (20, Int32),
                (8, Int8),
                (8, Uint8),
                (4, Int16),
                (4, Uint16),
                (4, Uint32),
                (8, Uint64),
                (2, Float),
            ]);
        }
        self.weighted(&[
            (70, Int64),
            (20, Int32),
            (2, Int8),
            (2, Uint8),
            (2, Int16),
            (2, Uint64),
            (2, Float),
        ])
    }

    fn float_bits(&mut self) -> u32 {
        match self.byte() % 20 {
            0 => 0x7fc0_0000,
            1 => 0x7fa0_0001, // signalling NaN with a payload
            2 => 0xffc0_0123, // negative NaN with a payload
            3 => 0,
            4 => 0x8000_0000,
            5 => f32::INFINITY.to_bits(),
            6 => f32::NEG_INFINITY.to_bits(),
            7 => 1,
            8 => f32::MAX.to_bits(),
            9..=16 => ((f32::from(self.byte() % 9) - 4.0) * 0.5).to_bits(),
            _ => self.u32(),
        }
    }

    fn double_bits(&mut self) -> u64 {
        match self.byte() % 16 {
            0 => 0x7ff8_0000_0000_0000,
            1 => 0x7ff4_0000_0000_0001,
            2 => 0x8000_0000_0000_0000,
            3 => 0,
            4 => f64::INFINITY.to_bits(),
            5 => f64::NEG_INFINITY.to_bits(),
            6..=11 => ((f64::from(self.byte() % 9) - 4.0) * 0.25).to_bits(),
            _ => self.u64(),
        }
    }

    fn half_bits(&mut self, bf16: bool) -> u64 {
        let specials: &[u64] = if bf16 {
            &[
                0x7fc0, 0x7f81, 0xffc1, 0, 0x8000, 0x7f80, 0xff80, 0x3f80, 0x7f7f, 1,
            ]
        } else {
            &[
                0x7e00, 0x7c01, 0xfe01, 0, 0x8000, 0x7c00, 0xfc00, 0x3c00, 0x7bff, 1,
            ]
        };
        match self.byte() % 3 {
            0 => self.pick(specials),
            _ => u64::from(self.u32() as u16),
        }
    }

    fn int_bits(&mut self, width: u32) -> u64 {
        let v: i64 = match self.byte() % 8 {
            0 => i64::MIN,
            1 => i64::MAX,
            2 => (self.u64() as i64) >> 1,
            3 => -1,
            _ => i64::from(self.byte() as i8) / 4,
        };
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        v as u64 & mask
    }

    fn word(&mut self, dtype: DType) -> Word {
        use DType::*;
        Word::Bits(match dtype {
            Float => u64::from(self.float_bits()),
            Double => self.double_bits(),
            Float16 => self.half_bits(false),
            Bfloat16 => self.half_bits(true),
            Bool => u64::from(self.byte() & 1),
            Int8 | Uint8 => self.int_bits(8),
            Int16 | Uint16 => self.int_bits(16),
            Int32 | Uint32 => self.int_bits(32),
            Int64 | Uint64 => self.int_bits(64),
            Complex64 => u64::from(self.float_bits()) | u64::from(self.float_bits()) << 32,
            Uint4 | Int4 | Float4E2M1 => u64::from(self.byte() & 15),
            String => {
                let len = usize::from(self.byte() % 4);
                let s = (0..len).map(|_| b"abxy\xff"[usize::from(self.byte() % 5)]);
                return Word::Bytes(s.collect());
            }
            _ => u64::from(self.byte()),
        })
    }

    fn tensor(&mut self, dtype: DType, shape: Vec<usize>) -> RTensor {
        let n = shape.iter().product();
        let words = (0..n).map(|_| self.word(dtype)).collect();
        RTensor::new(dtype, shape, words)
    }

    /// An index value for a dim of size `s`: mostly in range, sometimes negative in range,
    /// sometimes just out of range, now and then extreme.
    fn index_value(&mut self, s: usize) -> i64 {
        let s = s as i64;
        let b = i64::from(self.byte());
        match self.byte() % 32 {
            0..=18 => {
                if s == 0 {
                    0
                } else {
                    b % s
                }
            }
            19..=25 => -(1 + if s == 0 { 0 } else { b % s }),
            26 => s,
            27 => -s - 1,
            28 => self.pick(&[i64::MIN, i64::MAX, i64::from(i32::MIN), i64::from(i32::MAX)]),
            29 => self.pick(&[127, -128, 255, 256, 65535]),
            _ => s + b % 3,
        }
    }

    /// An index tensor whose element at flat position `i` is drawn against dim `dim_of(i)`.
    fn indices(
        &mut self,
        dtype: DType,
        shape: Vec<usize>,
        dim_of: impl Fn(usize) -> usize,
    ) -> RTensor {
        let n: usize = shape.iter().product();
        let words = (0..n)
            .map(|i| {
                let v = self.index_value(dim_of(i));
                Word::Bits(match dtype {
                    DType::Int64 | DType::Uint64 => v as u64,
                    DType::Int32 | DType::Uint32 => u64::from(v as u32),
                    DType::Int16 | DType::Uint16 => u64::from(v as u16),
                    DType::Int8 | DType::Uint8 => u64::from(v as u8),
                    DType::Float => u64::from((v as f32).to_bits()),
                    _ => v as u64,
                })
            })
            .collect();
        RTensor::new(dtype, shape, words)
    }

    /// An attribute value: absent (`None`), a typical value, something odd or of the wrong type.
    fn int_attr(&mut self, name: &str, typical: i64, absent: u32) -> Option<Attr> {
        if self.chance(absent) {
            return None;
        }
        let value = match self.byte() % 32 {
            0..=25 => AttrValue::Int(typical),
            26..=28 => AttrValue::Int(i64::from(self.byte() as i8) % 7),
            29 => AttrValue::Int(self.pick(&[i64::MIN, i64::MAX, i64::from(i32::MIN)])),
            30 => AttrValue::Float(typical as f32),
            _ => AttrValue::Str(typical.to_string().into_bytes()),
        };
        Some(Attr {
            name: name.into(),
            value,
        })
    }

    fn str_attr(&mut self, name: &str, choices: &[&str], absent: u32) -> Option<Attr> {
        if self.chance(absent) {
            return None;
        }
        let value = match self.byte() % 32 {
            0..=27 => AttrValue::Str(self.pick(choices).as_bytes().to_vec()),
            28 => AttrValue::Str(self.pick(&["sub", "", "ADD", "Max", "none "]).into()),
            29 => AttrValue::Str(vec![0xff, 0xfe]),
            30 => AttrValue::Int(1),
            _ => AttrValue::Float(0.0),
        };
        Some(Attr {
            name: name.into(),
            value,
        })
    }

    /// An axis in `[-rank, rank-1]`, as typed.
    fn axis_value(&mut self, rank: usize) -> i64 {
        if rank == 0 {
            return 0;
        }
        let r = rank as i64;
        i64::from(self.byte()) % (2 * r) - r
    }

    /// The opset: mostly from `usual`, sometimes anything in 0..=30.
    fn opset(&mut self, usual: &[i64]) -> i64 {
        if self.chance(6) {
            match self.byte() % 16 {
                0 => self.pick(&[i64::MIN, -1, i64::MAX, 1000]),
                _ => i64::from(self.byte() % 31),
            }
        } else {
            self.pick(usual)
        }
    }

    /// Rare structural noise: an unknown or duplicated attribute, a missing or extra input.
    fn noise(&mut self, case: &mut Case) {
        if !self.chance(8) {
            return;
        }
        match self.byte() % 5 {
            0 => case.attrs.push(Attr {
                name: "foo".into(),
                value: AttrValue::Int(0),
            }),
            1 => {
                if let Some(a) = case.attrs.first().cloned() {
                    case.attrs.push(a);
                }
            }
            2 => {
                case.inputs.pop();
            }
            3 => {
                let i = self.range(0, case.inputs.len().saturating_sub(1));
                if let Some(slot) = case.inputs.get_mut(i) {
                    *slot = None;
                }
            }
            _ => {
                let extra = case.inputs.first().cloned().flatten();
                case.inputs.push(extra);
            }
        }
    }
}

/// The axis the shapes are built around: the attribute's, when it is valid, else `fallback`.
fn effective_axis(attr: &Option<Attr>, rank: usize, fallback: i64) -> usize {
    let a = match attr {
        Some(Attr {
            value: AttrValue::Int(a),
            ..
        }) => *a,
        _ => fallback,
    };
    let r = rank as i64;
    let a = if a < 0 { a + r } else { a };
    if (0..r).contains(&a) {
        a as usize
    } else {
        0
    }
}

fn attrs(list: Vec<Option<Attr>>) -> Vec<Attr> {
    list.into_iter().flatten().collect()
}

fn default_domain(g: &mut Gen<'_, '_>) -> &'static str {
    if g.chance(10) {
        "ai.onnx"
    } else {
        ""
    }
}

fn gen_gather(g: &mut Gen<'_, '_>) -> Case {
    let op = g.weighted(&[
        (3, Op::Gather),
        (3, Op::GatherElements),
        (3, Op::GatherND),
        (3, Op::OvGather),
    ]);
    let dtype = g.data_dtype();
    let rank = if g.chance(4) { 0 } else { g.range(1, 4) };
    let dshape = g.shape(rank);
    let mut case = match op {
        Op::Gather => {
            let opset = g.opset(&[1, 10, 11, 12, 13, 13, 13, 24]);
            let typical = g.axis_value(rank);
            let axis = g.int_attr("axis", typical, 35);
            let ax = effective_axis(&axis, rank, 0);
            let q = g.range(0, 3);
            let ishape = g.shape(q);
            let itype = g.index_dtype(false);
            let s = dshape.get(ax).copied().unwrap_or(3);
            let ind = g.indices(itype, ishape, |_| s);
            let data = g.tensor(dtype, dshape);
            Case {
                op,
                domain: default_domain(g),
                opset,
                attrs: attrs(vec![axis]),
                inputs: vec![Some(data), Some(ind)],
            }
        }
        Op::GatherElements => {
            let opset = g.opset(&[10, 11, 12, 13, 13, 18]);
            let typical = g.axis_value(rank);
            let axis = g.int_attr("axis", typical, 35);
            let ax = effective_axis(&axis, rank, 0);
            let mut ishape = Vec::new();
            for (d, &dd) in dshape.iter().enumerate() {
                ishape.push(if d == ax {
                    g.dim()
                } else {
                    match g.byte() % 16 {
                        0..=8 => dd,
                        9..=14 => g.range(0, dd),
                        _ => dd + 1,
                    }
                });
            }
            let ishape = g.maybe_break(ishape, 4);
            let itype = g.index_dtype(false);
            let s = dshape.get(ax).copied().unwrap_or(3);
            let ind = g.indices(itype, ishape, |_| s);
            let data = g.tensor(dtype, dshape);
            Case {
                op,
                domain: default_domain(g),
                opset,
                attrs: attrs(vec![axis]),
                inputs: vec![Some(data), Some(ind)],
            }
        }
        Op::GatherND => {
            let opset = g.opset(&[11, 12, 12, 13, 13, 13, 20]);
            let typical = if rank > 1 {
                g.range(0, rank - 1) as i64
            } else {
                0
            };
            let typical = if g.chance(10) { -1 } else { typical };
            let bd = g.int_attr("batch_dims", typical, 45);
            let b = match &bd {
                Some(Attr {
                    value: AttrValue::Int(b),
                    ..
                }) if *b >= 0 && (*b as usize) < rank => *b as usize,
                _ => 0,
            };
            let free = rank - b.min(rank);
            let k = match g.byte() % 16 {
                0 => 0,
                1 => free + 1,
                _ if free == 0 => 1,
                _ => g.range(1, free),
            };
            let mut ishape = dshape[..b.min(rank)].to_vec();
            let mid = g.range(0, 2);
            ishape.extend(g.shape(mid));
            ishape.push(k);
            let ishape = g.maybe_break(ishape, 4);
            let itype = if g.chance(90) {
                DType::Int64
            } else {
                g.index_dtype(false)
            };
            let q = ishape.len();
            let dims = dshape.clone();
            let ind = g.indices(itype, ishape, |i| {
                // Component j of a tuple indexes data dim b + j.
                let j = if q > 0 && k > 0 { i % k } else { 0 };
                dims.get(b + j).copied().unwrap_or(2)
            });
            let data = g.tensor(dtype, dshape);
            Case {
                op,
                domain: default_domain(g),
                opset,
                attrs: attrs(vec![bd]),
                inputs: vec![Some(data), Some(ind)],
            }
        }
        _ => {
            let opset = g.opset(&[7, 8, 8, 8, 8, 9, 20]);
            let ax_value = if g.chance(8) {
                rank as i64 + i64::from(g.byte() % 3)
            } else {
                g.axis_value(rank)
            };
            let ax = effective_axis(
                &Some(Attr {
                    name: String::new(),
                    value: AttrValue::Int(ax_value),
                }),
                rank,
                0,
            );
            // Batch dims shared by data and indices, at most the axis.
            let b = g.range(0, ax.min(rank));
            let mut ishape = dshape[..b].to_vec();
            let extra = g.range(0, 2);
            ishape.extend(g.shape(extra));
            let ishape = g.maybe_break(ishape, 4);
            let ri = ishape.len() as i64;
            let b_attr = match g.byte() % 16 {
                0..=5 if b == 0 => None,
                0..=9 => Some(b as i64),
                10..=12 => Some(b as i64 - ri),
                _ => Some(i64::from(g.byte() as i8) % 6),
            };
            let bd = b_attr.map(|b| Attr {
                name: "batch_dims".into(),
                value: AttrValue::Int(b),
            });
            let bd = if g.chance(3) {
                Some(Attr {
                    name: "batch_dims".into(),
                    value: AttrValue::Float(0.0),
                })
            } else {
                bd
            };
            let itype = g.index_dtype(true);
            let s = dshape.get(ax).copied().unwrap_or(3);
            let ind = g.indices(itype, ishape, |_| s);
            let atype = g.weighted(&[
                (10, DType::Int64),
                (6, DType::Int32),
                (2, DType::Int8),
                (2, DType::Uint16),
                (1, DType::Float),
            ]);
            let ashape: Vec<usize> = g
                .weighted(&[
                    (10, &[][..]),
                    (6, &[1][..]),
                    (1, &[2][..]),
                    (1, &[1, 1][..]),
                    (1, &[0][..]),
                ])
                .to_vec();
            let n: usize = ashape.iter().product();
            let axis_t = RTensor::new(
                atype,
                ashape,
                (0..n)
                    .map(|_| {
                        Word::Bits(match atype {
                            DType::Int64 => ax_value as u64,
                            DType::Int32 => u64::from(ax_value as u32),
                            DType::Uint16 => u64::from(ax_value as u16),
                            DType::Int8 => u64::from(ax_value as u8),
                            _ => u64::from((ax_value as f32).to_bits()),
                        })
                    })
                    .collect(),
            );
            let data = g.tensor(dtype, dshape);
            Case {
                op,
                domain: "org.openvinotoolkit",
                opset,
                attrs: attrs(vec![bd]),
                inputs: vec![Some(data), Some(ind), Some(axis_t)],
            }
        }
    };
    g.noise(&mut case);
    case
}

fn gen_reduction(g: &mut Gen<'_, '_>, absent: u32) -> Option<Attr> {
    g.str_attr(
        "reduction",
        &["none", "add", "add", "mul", "max", "min"],
        absent,
    )
}

fn gen_scatter(g: &mut Gen<'_, '_>) -> Case {
    let op = g.weighted(&[
        (1, Op::Scatter),
        (4, Op::ScatterElements),
        (4, Op::ScatterND),
        (3, Op::TensorScatter),
    ]);
    let dtype = g.data_dtype();
    // Now and then updates of another type (they share T with data).
    let utype = if g.chance(3) { g.data_dtype() } else { dtype };
    let mut case = match op {
        Op::Scatter | Op::ScatterElements => {
            let opset = if op == Op::Scatter {
                g.opset(&[8, 9, 9, 10, 10, 11, 13])
            } else {
                g.opset(&[10, 11, 13, 15, 16, 16, 17, 18, 18, 18, 24])
            };
            let rank = if g.chance(3) { 0 } else { g.range(1, 4) };
            let dshape = g.shape(rank);
            let typical = g.axis_value(rank);
            let axis = g.int_attr("axis", typical, 35);
            let ax = effective_axis(&axis, rank, 0);
            let mut ishape = Vec::new();
            for (d, &dd) in dshape.iter().enumerate() {
                ishape.push(if d == ax {
                    g.dim()
                } else {
                    match g.byte() % 16 {
                        0..=8 => dd,
                        9..=14 => g.range(0, dd),
                        _ => dd + 1,
                    }
                });
            }
            let ishape = g.maybe_break(ishape, 4);
            let ushape = g.maybe_break(ishape.clone(), 4);
            let itype = g.index_dtype(false);
            let s = dshape.get(ax).copied().unwrap_or(3);
            let ind = g.indices(itype, ishape, |_| s);
            let upd = g.tensor(utype, ushape);
            let data = g.tensor(dtype, dshape);
            let red = if op == Op::Scatter || opset < 16 {
                gen_reduction(g, 85)
            } else {
                gen_reduction(g, 25)
            };
            Case {
                op,
                domain: default_domain(g),
                opset,
                attrs: attrs(vec![axis, red]),
                inputs: vec![Some(data), Some(ind), Some(upd)],
            }
        }
        Op::ScatterND => {
            let opset = g.opset(&[10, 11, 13, 15, 16, 16, 17, 18, 18, 18, 24]);
            let rank = if g.chance(3) { 0 } else { g.range(1, 4) };
            let dshape = g.shape(rank);
            let k = match g.byte() % 16 {
                0 => 0,
                1 => rank + 1,
                _ => g.range(1.min(rank), rank),
            };
            let mid = g.range(0, 2);
            let mut ishape = g.shape(mid);
            // Small prefixes make duplicates likely.
            ishape.push(k);
            let ishape = if g.chance(2) { Vec::new() } else { ishape };
            let ishape = g.maybe_break(ishape, 3);
            let mut ushape = ishape[..ishape.len().saturating_sub(1)].to_vec();
            ushape.extend_from_slice(&dshape[k.min(rank)..]);
            let ushape = g.maybe_break(ushape, 4);
            let itype = if g.chance(92) {
                DType::Int64
            } else {
                g.index_dtype(false)
            };
            let last = ishape.last().copied().unwrap_or(0);
            let dims = dshape.clone();
            let ind = g.indices(itype, ishape, |i| {
                let j = if last > 0 { i % last } else { 0 };
                dims.get(j).copied().unwrap_or(2)
            });
            let upd = g.tensor(utype, ushape);
            let data = g.tensor(dtype, dshape);
            let red = if opset < 16 {
                gen_reduction(g, 85)
            } else {
                gen_reduction(g, 25)
            };
            Case {
                op,
                domain: default_domain(g),
                opset,
                attrs: attrs(vec![red]),
                inputs: vec![Some(data), Some(ind), Some(upd)],
            }
        }
        _ => {
            let opset = g.opset(&[23, 24, 24, 24, 25]);
            let rank = if g.chance(6) {
                g.range(0, 1)
            } else {
                g.range(2, 4)
            };
            let pshape = g.shape(rank);
            let typical = if g.chance(80) && rank >= 2 {
                // The sequence axis, anything but 0.
                let r = rank as i64;
                let a = 1 + i64::from(g.byte()) % (r - 1);
                if g.chance(50) {
                    a - r
                } else {
                    a
                }
            } else {
                g.axis_value(rank)
            };
            let axis = g.int_attr("axis", typical, 50);
            let ax = effective_axis(&axis, rank, -2);
            let m = pshape.get(ax).copied().unwrap_or(0);
            let l = if g.chance(5) { m + 1 } else { g.range(0, m) };
            let mut ushape = pshape.clone();
            if let Some(x) = ushape.get_mut(ax) {
                *x = l;
            }
            let ushape = g.maybe_break(ushape, 4);
            let mode = g.str_attr("mode", &["linear", "circular"], 40);
            let circular =
                matches!(&mode, Some(Attr { value: AttrValue::Str(s), .. }) if s == b"circular");
            let batch = pshape.first().copied().unwrap_or(1);
            let wshape = g.maybe_break(vec![batch], 5);
            let wtype = if g.chance(95) {
                DType::Int64
            } else {
                DType::Int32
            };
            let n: usize = wshape.iter().product();
            let words = (0..n)
                .map(|_| {
                    let v: i64 = match g.byte() % 16 {
                        0..=10 if !circular => g.range(0, m.saturating_sub(l)) as i64,
                        0..=10 => i64::from(g.byte() % 12),
                        11 | 12 => (m - l.min(m)) as i64 + 1,
                        13 => -1,
                        14 => i64::MAX,
                        _ => i64::from(g.byte() % 8),
                    };
                    Word::Bits(if wtype == DType::Int64 {
                        v as u64
                    } else {
                        u64::from(v as u32)
                    })
                })
                .collect();
            let write = RTensor::new(wtype, wshape, words);
            let upd = g.tensor(utype, ushape);
            let past = g.tensor(dtype, pshape);
            let inputs = match g.byte() % 10 {
                0..=1 => vec![Some(past), Some(upd)],
                2 => vec![Some(past), Some(upd), None],
                _ => vec![Some(past), Some(upd), Some(write)],
            };
            Case {
                op,
                domain: default_domain(g),
                opset,
                attrs: attrs(vec![axis, mode]),
                inputs,
            }
        }
    };
    g.noise(&mut case);
    case
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

    #[test]
    fn hand_written_cases_agree_with_the_kernels() {
        let nan = f32::from_bits(0x7fa0_0001);
        let data = f32s(&[2, 3], &[nan, -0.0, 1.0, 2.0, f32::INFINITY, 3.0]);
        let cases = [
            Case {
                op: Op::Gather,
                domain: "",
                opset: 13,
                attrs: vec![Attr {
                    name: "axis".into(),
                    value: AttrValue::Int(1),
                }],
                inputs: vec![Some(data.clone()), Some(i64s(&[2], &[0, -2]))],
            },
            Case {
                op: Op::ScatterElements,
                domain: "",
                opset: 18,
                attrs: vec![Attr {
                    name: "reduction".into(),
                    value: AttrValue::Str(b"max".to_vec()),
                }],
                inputs: vec![
                    Some(data.clone()),
                    Some(i64s(&[1, 3], &[0, 0, 1])),
                    Some(f32s(&[1, 3], &[1.0, 0.0, nan])),
                ],
            },
            Case {
                op: Op::OvGather,
                domain: "org.openvinotoolkit",
                opset: 8,
                attrs: vec![],
                inputs: vec![
                    Some(data),
                    Some(i64s(&[2], &[1, 7])),
                    Some(i64s(&[1], &[-1])),
                ],
            },
        ];
        for case in &cases {
            check_case(case);
        }
    }

    #[test]
    fn any_bytes_decode_and_check() {
        // A few fixed byte patterns, including empty input, through both targets.
        for seed in 0u8..64 {
            let bytes: Vec<u8> = (0..200u32)
                .map(|i| (i.wrapping_mul(u32::from(seed) * 2 + 1) >> 1) as u8 ^ seed)
                .collect();
            check_gathers(&bytes);
            check_scatters(&bytes);
        }
        check_gathers(&[]);
        check_scatters(&[]);
    }
}

#[cfg(test)]
mod stats {
    use super::*;
    use std::collections::BTreeMap;

    /// Tallies the reference's verdicts over a corpus (run with `--ignored --nocapture`).
    #[test]
    #[ignore]
    fn corpus_outcomes() {
        for target in ["gather_kernels", "scatter_kernels"] {
            let mut tally: BTreeMap<String, usize> = BTreeMap::new();
            for file in crate::replay::inputs(target) {
                let bytes = std::fs::read(&file).unwrap();
                let case = if target == "gather_kernels" {
                    GatherInput::arbitrary_take_rest(Unstructured::new(&bytes))
                        .unwrap()
                        .0
                } else {
                    ScatterInput::arbitrary_take_rest(Unstructured::new(&bytes))
                        .unwrap()
                        .0
                };
                let want = reference::evaluate(
                    case.op,
                    case.opset,
                    &case.attrs,
                    &case.inputs,
                    MAX_TENSOR_BYTES,
                );
                let kind = match &want {
                    Outcome::Ok { out, .. } => format!("ok(n>0: {})", !out.words.is_empty()),
                    Outcome::Invalid(m) => format!(
                        "invalid: {}",
                        m.split(|c: char| c.is_ascii_digit() || c == '[' || c == '\'' || c == '"')
                            .next()
                            .unwrap_or("")
                    ),
                    Outcome::Unsupported(_) => "unsupported".into(),
                    Outcome::TooLarge(_) => "toolarge".into(),
                    Outcome::TooOld => "tooold".into(),
                };
                *tally.entry(format!("{:?} {}", case.op, kind)).or_default() += 1;
            }
            for (k, v) in tally {
                println!("{target}: {v:6} {k}");
            }
        }
    }
}
