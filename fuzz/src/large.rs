//! Target `large_kernels`: the kernels' parallel paths, which the other targets' 1 MiB tensors
//! never reach. One Gather, GatherElements, GatherND, ScatterElements or ScatterND node on tensors
//! of 1-3 MiB (outputs built across threads, the split walk and its steps, huge-page blocks) or,
//! for one input in 128, of 48-64 MiB (non-temporal streaming), run through the registry
//! (`resolve` + `invoke`) on a pool of 1-4 threads, and checked against the naive reference
//! ([`onnx_idx_check_reference`]), one coordinate at a time.
//!
//! The fuzzer's bytes choose the op, the shape, the axis and batch dims, the element type, the
//! reduction, the thread count and how indices are drawn; the elements themselves come from a
//! generator seeded by the bytes (they are too many to take from the input, and cheap this way).
//! An index out of range is placed now and then, anywhere: the kernel must then error (D3).
//!
//! The reference holds these tensors' elements as bare `u64` bits (a [`Word`](onnx_idx_check_reference::Word)
//! each would not fit these sizes); the model is the one every other target checks against.

use crate::convert;
use crate::kernels::to_proto;
use arbitrary::Unstructured;
use bytemuck::Pod;
use onnx_idx_check::load::attrs::attrs_of;
use onnx_idx_check::ops::{invoke, resolve, Invocation, Resolution};
use onnx_idx_check::pb::NodeProto;
use onnx_idx_check::tensor::{DType, Elem, Tensor};
use onnx_idx_check::SpecError;
use onnx_idx_check_reference::{self as reference, evaluate, Attr, Op, Outcome, RTensor, Word};
use std::fmt::Debug;

/// The output limit the large cases run under: above the largest they make.
const MAX_BYTES: usize = 1 << 30;

/// The element types: one per word width the walks treat differently (the vector deal takes
/// 4-byte words only).
trait Bits: Pod + Elem + PartialEq + Debug + Send + Sync {
    const DTYPE: DType;
    /// An element from 64 random bits, with the odd special value (zeros of both signs, NaN).
    fn from_random(x: u64) -> Self;
    /// The element's bits, zero-extended.
    fn widen(self) -> u64;
}

impl Bits for u32 {
    const DTYPE: DType = DType::Float;
    fn from_random(x: u64) -> u32 {
        let v = match x % 64 {
            0 => -0.0,
            1 => 0.0,
            2 => f32::NAN,
            _ => ((x >> 8) % 2001) as f32 / 1000.0 - 1.0,
        };
        v.to_bits()
    }
    fn widen(self) -> u64 {
        u64::from(self)
    }
}

impl Bits for u64 {
    const DTYPE: DType = DType::Int64;
    fn from_random(x: u64) -> u64 {
        match x % 16 {
            0 => i64::MAX as u64,
            1 => i64::MIN as u64,
            _ => (x >> 4) % 1000,
        }
    }
    fn widen(self) -> u64 {
        self
    }
}

impl Bits for u8 {
    const DTYPE: DType = DType::Uint8;
    fn from_random(x: u64) -> u8 {
        (x >> 7) as u8
    }
    fn widen(self) -> u64 {
        u64::from(self)
    }
}

/// The reductions ScatterElements and ScatterND take at opset 18.
const REDUCTIONS: [&str; 5] = ["none", "add", "mul", "max", "min"];

/// A fixed generator seeded by the input.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 ^ (self.0 >> 29)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() >> 11) as usize % n.max(1)
    }
}

/// How index values are drawn: where they land decides which walks and prefetches run.
#[derive(Clone, Copy, Debug)]
enum Spread {
    /// Anywhere on the axis, a third from the back.
    Uniform,
    /// A handful of hot positions (heavy duplicates).
    Hot,
    /// In order, wrapping around (sequential rows).
    Ascending,
}

/// The choices the bytes make.
#[derive(Debug)]
struct Case {
    op: Op,
    /// Data dims (rank 3; dims of 1 make the lower-rank layouts).
    dims: [usize; 3],
    axis: usize,
    /// Indices along the axis (Gather*, ScatterElements) or tuples per batch (GatherND,
    /// ScatterND).
    count: usize,
    /// GatherND: batch dims (0 or 1); tuple length k in 1..=2 (ScatterND too).
    batch: usize,
    k: usize,
    /// The reduction (scatters).
    red: &'static str,
    spread: Spread,
    /// Where an index out of range goes, as a fraction of the indices (None: all in range).
    bad: Option<(u64, i64)>,
    threads: usize,
    seed: u64,
}

fn byte(u: &mut Unstructured<'_>) -> u8 {
    u.arbitrary().unwrap_or(0)
}

/// A dim of `bytes` worth of elements cut three ways by the bytes.
fn dims_for(u: &mut Unstructured<'_>, elems: usize) -> [usize; 3] {
    let pick = |b: u8, most: usize| -> usize {
        match b % 4 {
            0 => 1,
            1 => 2 + usize::from(b >> 2) % 15,
            2 => 16 << ((b >> 2) % 5),
            _ => most,
        }
    };
    let d2 = pick(byte(u), 1024).min(elems);
    let d1 = pick(byte(u), 64).min((elems / d2).max(1));
    let d0 = (elems / (d1 * d2)).max(1);
    [d0, d1, d2]
}

fn generate(u: &mut Unstructured<'_>) -> (Case, usize) {
    let op = match byte(u) % 5 {
        0 => Op::Gather,
        1 => Op::GatherElements,
        2 => Op::GatherND,
        3 => Op::ScatterElements,
        _ => Op::ScatterND,
    };
    let width = match byte(u) % 4 {
        0 => 8,
        1 => 1,
        _ => 4,
    };
    // One case in 128 streams (48-64 MiB of output); the others are 1-3 MiB, which every
    // parallel path needs (PAR_MIN_BYTES, the split walk's megabyte of output and updates).
    let stream = byte(u).is_multiple_of(128);
    let mib = if stream {
        48 + usize::from(byte(u)) % 17
    } else {
        1 + usize::from(byte(u)) % 3
    };
    let elems = (mib << 20) / width;
    let dims = dims_for(u, elems);
    let axis = usize::from(byte(u)) % 3;
    let k = 1 + usize::from(byte(u)) % 2;
    let batch = usize::from(byte(u)) % 2;
    // How many indices run along the axis (Gather*, ScatterElements) or how many tuples per
    // batch (GatherND, ScatterND): about as many as the positions they index, half as many or
    // twice, so that outputs and updates stay within twice the data.
    let positions = match op {
        Op::GatherND => dims[batch..batch + k.min(3 - batch)].iter().product(),
        Op::ScatterND => dims[..k].iter().product(),
        _ => dims[axis],
    };
    let count = match byte(u) % 3 {
        0 => positions.div_ceil(2),
        1 => positions,
        _ => positions * 2,
    }
    .max(1);
    let red = REDUCTIONS[usize::from(byte(u)) % 5];
    let spread = match byte(u) % 3 {
        0 => Spread::Uniform,
        1 => Spread::Hot,
        _ => Spread::Ascending,
    };
    let bad = byte(u).is_multiple_of(8).then(|| {
        let at = u64::from(u.arbitrary::<u16>().unwrap_or(0));
        let v = match byte(u) % 4 {
            0 => 0,  // the axis size: one past the end
            1 => -1, // one before the front, counted from the back
            2 => i64::MAX,
            _ => i64::MIN,
        };
        (at, v)
    });
    let threads = 1 + usize::from(byte(u)) % 4;
    let seed = u.arbitrary::<u64>().unwrap_or(0);
    let case = Case {
        op,
        dims,
        axis,
        count,
        batch,
        k,
        red,
        spread,
        bad,
        threads,
        seed,
    };
    (case, width)
}

/// Checks one input of the `large_kernels` target.
pub fn check(bytes: &[u8]) {
    let mut u = Unstructured::new(bytes);
    let (case, width) = generate(&mut u);
    match width {
        1 => run::<u8>(&case),
        8 => run::<u64>(&case),
        _ => run::<u32>(&case),
    }
}

/// The inputs of a case: (shape, elements) of data, indices and updates, and the attributes.
struct Built<W> {
    data: (Vec<usize>, Vec<W>),
    indices: (Vec<usize>, Vec<i64>),
    updates: Option<(Vec<usize>, Vec<W>)>,
    attrs: Vec<Attr>,
}

/// Index value `i` for an axis of `s`, drawn as the case says; a third count from the back.
fn draw(c: &Case, g: &mut Lcg, i: usize, s: usize) -> i64 {
    let s = s.max(1);
    let k = match c.spread {
        Spread::Uniform => g.below(s),
        // Four hot positions per axis size.
        Spread::Hot => (c.seed.rotate_left(16 * g.below(4) as u32) as usize) % s,
        Spread::Ascending => i % s,
    };
    if g.below(3) == 0 {
        k as i64 - s as i64
    } else {
        k as i64
    }
}

/// Puts the case's index out of range (if any) into `values`, whose value `i` indexes an axis
/// of `axis_of(i)`.
fn inject(c: &Case, values: &mut [i64], axis_of: impl Fn(usize) -> usize) {
    if let Some((at, bad)) = c.bad {
        if values.is_empty() {
            return;
        }
        let i = (at as usize * values.len()) >> 16;
        let s = axis_of(i) as i64;
        values[i] = match bad {
            0 => s,
            -1 => -s - 1,
            b => b,
        };
    }
}

/// `n` index values for an axis of `s`.
fn index_values(c: &Case, g: &mut Lcg, n: usize, s: usize) -> Vec<i64> {
    let mut v: Vec<i64> = (0..n).map(|i| draw(c, g, i, s)).collect();
    inject(c, &mut v, |_| s);
    v
}

/// `n` index tuples over the data dims `dims`, flattened.
fn tuple_values(c: &Case, g: &mut Lcg, n: usize, dims: &[usize]) -> Vec<i64> {
    let k = dims.len();
    let mut v: Vec<i64> = (0..n * k).map(|i| draw(c, g, i / k, dims[i % k])).collect();
    inject(c, &mut v, |i| dims[i % k]);
    v
}

/// The case's inputs, drawn from the generator its seed starts.
fn build<W: Bits>(c: &Case) -> Built<W> {
    let mut g = Lcg(c.seed | 1);
    let d = c.dims;
    let data: Vec<W> = (0..d[0] * d[1] * d[2])
        .map(|_| W::from_random(g.next()))
        .collect();
    let axis = Attr::int("axis", c.axis as i64);
    match c.op {
        Op::Gather => {
            let idx = index_values(c, &mut g, c.count, d[c.axis]);
            Built {
                data: (d.to_vec(), data),
                indices: (vec![c.count], idx),
                updates: None,
                attrs: vec![axis],
            }
        }
        Op::GatherElements | Op::ScatterElements => {
            let s = d[c.axis];
            let mut ishape = d.to_vec();
            ishape[c.axis] = if c.op == Op::ScatterElements {
                // Scatter indices may be longer than the axis (duplicates).
                c.count
            } else {
                c.count.max(1)
            };
            let n: usize = ishape.iter().product();
            let idx = index_values(c, &mut g, n, s);
            if c.op == Op::GatherElements {
                Built {
                    data: (d.to_vec(), data),
                    indices: (ishape, idx),
                    updates: None,
                    attrs: vec![axis],
                }
            } else {
                let upd: Vec<W> = (0..n).map(|_| W::from_random(g.next())).collect();
                Built {
                    data: (d.to_vec(), data),
                    indices: (ishape.clone(), idx),
                    updates: Some((ishape, upd)),
                    attrs: vec![axis, Attr::text("reduction", c.red)],
                }
            }
        }
        Op::GatherND => {
            // batch_dims b: data [d0 | d1, d2] with the batch first; k dims indexed after it.
            let b = c.batch;
            let k = c.k.min(3 - b);
            let batches: usize = d[..b].iter().product();
            let values = tuple_values(c, &mut g, batches * c.count, &d[b..b + k]);
            let mut ishape = d[..b].to_vec();
            ishape.extend([c.count, k]);
            Built {
                data: (d.to_vec(), data),
                indices: (ishape, values),
                updates: None,
                attrs: vec![Attr::int("batch_dims", b as i64)],
            }
        }
        Op::ScatterND => {
            let (k, n) = (c.k, c.count);
            let slice: usize = d[k..].iter().product();
            let values = tuple_values(c, &mut g, n, &d[..k]);
            let mut ushape = vec![n];
            ushape.extend_from_slice(&d[k..]);
            let upd: Vec<W> = (0..n * slice).map(|_| W::from_random(g.next())).collect();
            Built {
                data: (d.to_vec(), data),
                indices: (vec![n, k], values),
                updates: Some((ushape, upd)),
                attrs: vec![Attr::text("reduction", c.red)],
            }
        }
        op => unreachable!("the target makes no {op:?}"),
    }
}

fn tensor<W: Bits>(shape: &[usize], v: &[W]) -> Tensor {
    Tensor::from_elems(W::DTYPE, shape.to_vec(), v.to_vec()).expect("a consistent tensor")
}

/// The reference's tensor of `shape` holding `v`, as bits.
fn bits_tensor<W: Bits>(shape: &[usize], v: &[W]) -> RTensor<u64> {
    RTensor::new(
        convert::dtype(W::DTYPE),
        shape.to_vec(),
        v.iter().map(|x| x.widen()).collect(),
    )
}

/// A rayon pool of each size, built once.
fn pool(threads: usize) -> &'static rayon::ThreadPool {
    static POOLS: std::sync::OnceLock<Vec<rayon::ThreadPool>> = std::sync::OnceLock::new();
    &POOLS.get_or_init(|| {
        (1..=4)
            .map(|t| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build()
                    .unwrap()
            })
            .collect()
    })[threads - 1]
}

/// The reference's outcome for `b` (its copies of the inputs are dropped before the kernel runs).
fn reference_outcome<W: Bits>(c: &Case, b: &Built<W>) -> Outcome<u64> {
    let mut inputs = vec![
        Some(bits_tensor(&b.data.0, &b.data.1)),
        Some(RTensor::new(
            reference::DType::Int64,
            b.indices.0.clone(),
            b.indices.1.iter().map(|&v| v as u64).collect(),
        )),
    ];
    if let Some((shape, upd)) = &b.updates {
        inputs.push(Some(bits_tensor(shape, upd)));
    }
    evaluate(c.op, 18, &b.attrs, &inputs, MAX_BYTES)
}

fn run<W: Bits>(c: &Case) {
    let b = build::<W>(c);
    let want = reference_outcome(c, &b);
    let op_type = c.op.op_type();
    let Resolution::Found(def, version) = resolve("", op_type, 18) else {
        panic!("{op_type} has no version at opset 18");
    };
    let idx = Tensor::from_elems(
        DType::Int64,
        b.indices.0.clone(),
        b.indices.1.iter().map(|&v| v as u64).collect(),
    )
    .expect("consistent indices");
    let mut inputs = vec![tensor(&b.data.0, &b.data.1), idx];
    if let Some((shape, upd)) = &b.updates {
        inputs.push(tensor(shape, upd));
    }
    let node = NodeProto {
        op_type: op_type.into(),
        input: (0..inputs.len()).map(|i| format!("in{i}")).collect(),
        output: vec!["out".into()],
        attribute: b.attrs.iter().map(to_proto).collect(),
        ..Default::default()
    };
    let inv = Invocation {
        def,
        version,
        attrs: attrs_of(&node, std::path::Path::new("."), MAX_BYTES),
        outputs: node.output.len(),
        inputs: inputs.iter().map(Some).collect(),
        max_bytes: MAX_BYTES,
    };
    let got = pool(c.threads).install(|| invoke(&inv));
    match (&want, got) {
        (Outcome::Invalid(_), Err(SpecError::Violation(_) | SpecError::Decision { .. })) => {}
        (Outcome::Ok { out, arithmetic }, Ok(ev)) => {
            assert_eq!(ev.outputs.len(), 1, "{c:?}");
            let t = &ev.outputs[0].tensor;
            assert_eq!(t.dtype(), W::DTYPE, "{c:?}");
            assert_eq!(t.shape(), out.shape.as_slice(), "{c:?}");
            let got: &[W] = t.elems::<W>().expect("the output's words");
            assert_eq!(got.len(), out.words.len(), "{c:?}");
            // Any NaN equals any NaN where a reduction computed the value (D9).
            let same = |g: u64, w: u64| {
                g == w
                    || *arithmetic
                        && reference::is_nan(out.dtype, &Word::Bits(g))
                        && reference::is_nan(out.dtype, &Word::Bits(w))
            };
            if let Some(i) = (0..got.len()).find(|&i| !same(got[i].widen(), out.words[i])) {
                panic!(
                    "element {i} of {}: kernel {:?}, reference {}\n  case: {c:?}",
                    got.len(),
                    got[i],
                    reference::show(out.dtype, &Word::Bits(out.words[i]))
                );
            }
        }
        (want, got) => panic!(
            "kernel and reference disagree: reference {}, kernel {:?}\n  case: {c:?}",
            match want {
                Outcome::Ok { .. } => "an output".to_string(),
                other => format!("{other:?}"),
            },
            got.map(|ev| ev.outputs.len())
        ),
    }
}
