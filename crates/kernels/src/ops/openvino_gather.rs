//! OpenVINO Gather, opsets 1, 7 and 8 (decision D13; the IR reader maps `<layer type="Gather"
//! version="opsetN">` here):
//! <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-8.html>
//!
//! | domain | since | semantics |
//! |---|---|---|
//! | `org.openvinotoolkit` | 1 | `out[p.., i.., q..] = data[p.., indices[i..], q..]`; `axis` is an input; no attributes; indices must lie in `[0, s-1]` (negative or larger: errored) |
//! | `org.openvinotoolkit` | 7 | adds `batch_dims` (normalised against the *indices* rank); indices still in `[0, s-1]` |
//! | `org.openvinotoolkit` | 8 | `out[p.., i_b.., q..] = data[p.., indices[p_0..p_{b-1}, i_b..], q..]`; negative indices count from the back; out-of-range indices give zeros |
//!
//! Gather-1 and Gather-7 say only that "the values for indices are in the range
//! `[0, data[axis] - 1]`"; like ONNX's Gather-1 (D2, D3) a value outside it breaks the spec and is
//! errored, naming the position. From Gather-8 an index outside `[-s, s-1]` is not an error: its
//! output block is left zero (0, false, the empty string).

use super::index::normalize_axis;
use super::provenance::{Quirks, Semantics, Subject};
use super::{
    check_heap_bytes, AttrSpec, Attrs, Constraint, Evaluated, Indexing, InputSpec, Invocation,
    OpDef, OpVersion, Role, SpecError,
};
use crate::spec_err;
use crate::tensor::value::{packed_code, set_packed};
use crate::tensor::{numel, DType, DTypeSet, Elem, Layout, Storage, Tensor};

// "Any integer type", as the OpenVINO specification puts it: the shared set.
use crate::tensor::dtype::INTEGERS;

/// The inputs of every version: the axis is the third input, not an attribute.
const INPUTS: &[InputSpec] = &[
    InputSpec::required("data", "T", Role::Data),
    InputSpec::required("indices", "T_IND", Role::Indices),
    InputSpec::required("axis", "T_AXIS", Role::Axis),
];

/// `T`: any type; `T_IND`, `T_AXIS`: any integer type (Gather-1 names no index type; its
/// successors' "any supported integer type" is taken for it too).
const CONSTRAINTS: &[Constraint] = &[
    Constraint::new("T", DTypeSet::of(&DType::ALL)),
    Constraint::new("T_IND", INTEGERS),
    Constraint::new("T_AXIS", INTEGERS),
];

/// Gather-7's and Gather-8's one attribute.
const BATCH_DIMS: &[AttrSpec] = &[AttrSpec::int("batch_dims", 0)];

/// A version of OpenVINO's Gather: what differs between 1, 7 and 8 is the attributes, whether
/// negative indices count from the back, and the zero fill.
const fn version(
    since: i64,
    attrs: &'static [AttrSpec],
    negatives: bool,
    modes: &'static [&'static str],
) -> OpVersion {
    OpVersion {
        negatives,
        modes,
        ..OpVersion::base(since, attrs, INPUTS, CONSTRAINTS, eval)
    }
}

/// OpenVINO's Gather, opsets 1, 7 and 8.
pub(crate) static OPENVINO_GATHER: OpDef = OpDef {
    domain: "org.openvinotoolkit",
    op_type: "Gather",
    spec: "https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-8.html",
    plumbing: false,
    context: false,
    gathers: true,
    indexing: Indexing::Axis,
    provenance: Some(provenance),
    versions: &[
        version(1, &[], false, &[]),
        version(7, BATCH_DIMS, false, &[]),
        version(8, BATCH_DIMS, true, &[super::registry::OUT_OF_RANGE_ZEROS]),
    ],
};

/// OpenVINO Gather-8's attributes: the typed entry to its kernel.
///
/// ```
/// use onnx_idx_check_kernels::ops::OpenVinoGather;
/// use onnx_idx_check_kernels::Tensor;
///
/// let data = Tensor::from_vec(vec![3], vec![1.0f32, 2.0, 3.0])?;
/// let indices = Tensor::from_vec(vec![3], vec![-1i64, 5, 0])?;
/// let axis = Tensor::scalar(0i64);
/// // Gather-8: negative indices count from the back; out-of-range ones give zeros.
/// let out = OpenVinoGather::default().eval(8, &data, &indices, &axis)?;
/// assert_eq!(out.to_vec::<f32>()?, [3.0, 0.0, 1.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenVinoGather {
    /// How many leading dims data and indices share as batch dims; negative counts from the back
    /// of the *indices* rank. Default 0.
    pub batch_dims: i64,
}

impl OpenVinoGather {
    /// Gathers `data` along `axis` (a scalar or 1-element integer tensor, as the layer's third
    /// input), as OpenVINO's Gather of `opset` 1, 7 or 8 does: at 8 an index outside `[-s, s-1]`
    /// gives zeros instead of an error; at 1 and 7 any index outside `[0, s-1]` is an error (and
    /// opset 1 takes no `batch_dims`).
    ///
    /// ```
    /// use onnx_idx_check_kernels::ops::OpenVinoGather;
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// // Example 7 of the specification: indices out of range give zeros.
    /// let data = Tensor::from_vec(vec![5], vec![1i32, 2, 3, 4, 5])?;
    /// let indices = Tensor::from_vec(vec![3], vec![3i32, 10, -20])?;
    /// let axis = Tensor::scalar(0i32);
    /// let out = OpenVinoGather::default().eval(8, &data, &indices, &axis)?;
    /// assert_eq!(out.to_vec::<i32>()?, [4, 0, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn eval(
        &self,
        opset: i64,
        data: &Tensor,
        indices: &Tensor,
        axis: &Tensor,
    ) -> Result<Tensor, SpecError> {
        // batch_dims 0 is left out, as a node that does not write it: Gather-1 has no such
        // attribute, and refuses one given.
        let attrs = if self.batch_dims == 0 {
            Attrs::new()
        } else {
            Attrs::new().with_int("batch_dims", self.batch_dims)
        };
        super::call_typed(
            &OPENVINO_GATHER,
            opset,
            attrs,
            &[Some(data), Some(indices), Some(axis)],
        )
    }
}

/// Each output element is one data element picked along the axis within its batch; out of range
/// reads as zero (the correct semantics here, a quirk elsewhere).
fn provenance<'a>(s: &Subject<'a>, q: &Quirks) -> Option<Semantics<'a>> {
    let q = &q.zero_filling();
    let (data, indices, axis) = (s.input(0)?, s.input(1)?, s.input(2)?);
    let axis = if q.axis_ignored() {
        0
    } else {
        normalize_axis(*axis.to_i64_vec()?.first()?, data.rank(), "axis").ok()?
    };
    let b = s.batch_dims(q)?;
    let b = if b < 0 {
        usize::try_from(b.checked_add(i64::try_from(indices.rank()).ok()?)?).ok()?
    } else {
        usize::try_from(b).ok()?
    };
    super::gather::semantics(data, indices, axis, b, q)
}

/// `data` seen as `[batch, mid, axis_len, inner]`, indices as `[batch, per_batch]`.
struct Geometry {
    batch: usize,
    mid: usize,
    axis_len: usize,
    inner: usize,
    per_batch: usize,
}

fn eval(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    let data = inv.input(0)?;
    let indices = inv.input(1)?;
    let axis_t = inv.input(2)?;
    let (rd, ri) = (data.rank(), indices.rank());
    if rd == 0 {
        return Err(spec_err!("data must have rank >= 1, it is a scalar"));
    }
    let axis_values = axis_t.to_i64_vec().unwrap_or_default();
    if axis_t.rank() > 1 || axis_values.len() != 1 {
        return Err(spec_err!(
            "axis input must be a scalar or have 1 element, it has shape {}",
            crate::tensor::shape_text(axis_t.shape())
        ));
    }
    let axis = normalize_axis(axis_values[0], rd, "axis")?;
    let b_attr = inv.int("batch_dims")?;
    let lim = i64::try_from(rd.min(ri)).unwrap_or(i64::MAX);
    if b_attr < -lim || b_attr > lim {
        return Err(spec_err!(
            "batch_dims {b_attr} is out of range [{}, {lim}]",
            -lim
        ));
    }
    // Negative batch_dims count from the back of the *indices* rank.
    let b = if b_attr < 0 {
        b_attr + ri as i64
    } else {
        b_attr
    } as usize;
    if b > axis {
        return Err(spec_err!(
            "batch_dims ({b}) must be <= axis ({axis}) after normalisation"
        ));
    }
    if b > ri || data.shape()[..b] != indices.shape()[..b] {
        return Err(spec_err!(
            "data {} and indices {} must have equal sizes in the first batch_dims ({b}) dims",
            crate::tensor::shape_text(data.shape()),
            crate::tensor::shape_text(indices.shape())
        ));
    }
    let ds = data.shape();
    let mut oshape = ds[..axis].to_vec();
    oshape.extend_from_slice(&indices.shape()[b..]);
    oshape.extend_from_slice(&ds[axis + 1..]);
    inv.check_output_size(data.dtype(), &oshape)?;
    let g = Geometry {
        batch: numel(&ds[..b]).unwrap_or(0),
        mid: numel(&ds[b..axis]).unwrap_or(0),
        axis_len: ds[axis],
        inner: numel(&ds[axis + 1..]).unwrap_or(0),
        per_batch: numel(&indices.shape()[b..]).unwrap_or(0),
    };
    let raw = indices
        .to_i64_vec()
        .ok_or_else(|| spec_err!("indices must be integers"))?;
    let idx = if inv.version.zero_fills() {
        zero_filling_indices(indices, &raw, g.axis_len)
    } else {
        // Gather-1 and Gather-7: [0, s-1] only, every index checked before anything is written.
        if indices.dtype() == DType::Uint64 {
            if let Some(i) = raw.iter().position(|&r| r < 0) {
                return Err(spec_err!(
                    "{} = {} is out of range [0, {}] for axis {axis} (size {})",
                    super::index::position("indices", i, indices.shape()),
                    raw[i] as u64,
                    g.axis_len as i128 - 1,
                    g.axis_len
                ));
            }
        }
        super::index::normalize_indices(indices, "indices", g.axis_len, axis, inv.negatives())?
            .into_iter()
            .map(Some)
            .collect()
    };
    let out = crate::dispatch_by_width!(
        data.dtype(),
        gather_packed(data, &idx, &g, oshape),
        gather_t(data, &idx, &g, oshape, inv.max_bytes)
    )?;
    Ok(Evaluated::moved(out))
}

/// Gather-8's reading of the indices: negative ones count from the back, and `None` marks one
/// outside `[-s, s-1]`, whose block stays zero.
fn zero_filling_indices(indices: &Tensor, raw: &[i64], axis_len: usize) -> Vec<Option<usize>> {
    let s = i64::try_from(axis_len).unwrap_or(i64::MAX);
    let idx = raw.iter().map(|&k| {
        let k = if k < 0 { k.checked_add(s)? } else { k };
        (0..s).contains(&k).then_some(k as usize)
    });
    // Unsigned 64-bit values above i64::MAX read as negative; they are out of range either way
    // unless they wrap into range, which the spec does not intend.
    if indices.dtype() == DType::Uint64 {
        idx.zip(raw)
            .map(|(i, &r)| if r < 0 { None } else { i })
            .collect()
    } else {
        idx.collect()
    }
}

/// The output's blocks in order: the first element of each block in the data, `None` for an
/// index out of range (a block of zeros).
fn blocks<'a>(
    idx: &'a [Option<usize>],
    g: &'a Geometry,
) -> impl Iterator<Item = Option<usize>> + 'a {
    (0..g.batch).flat_map(move |bi| {
        (0..g.mid).flat_map(move |m| {
            idx[bi * g.per_batch..(bi + 1) * g.per_batch]
                .iter()
                .map(move |k| k.map(|k| ((bi * g.mid + m) * g.axis_len + k) * g.inner))
        })
    })
}

/// The same gather on packed sub-byte data (int4, uint4, int2, uint2, float4e2m1, the float6
/// types), code by code: code 0 is the zero of each of them. The output is no larger than
/// `check_output_size` allowed, and is built as it is written.
fn gather_packed(
    data: &Tensor,
    idx: &[Option<usize>],
    g: &Geometry,
    oshape: Vec<usize>,
) -> Result<Tensor, SpecError> {
    let (Storage::Packed(src), Layout::Packed(bits)) = (data.storage(), data.dtype().layout())
    else {
        return Err(spec_err!("data storage does not match its dtype"));
    };
    let n = numel(&oshape).unwrap_or(0);
    let mut out = vec![0u8; n.saturating_mul(bits as usize).div_ceil(8)];
    if n > 0 {
        let mut at = 0;
        for block in blocks(idx, g) {
            if let Some(start) = block {
                for e in 0..g.inner {
                    let code = packed_code(src, start + e, bits)
                        .ok_or_else(|| spec_err!("data storage is shorter than its shape"))?;
                    set_packed(&mut out, at + e, bits, code);
                }
            }
            at += g.inner;
        }
    }
    Tensor::new(data.dtype(), oshape, Storage::Packed(out)).map_err(|e| spec_err!("{e}"))
}

fn gather_t<T: Elem>(
    data: &Tensor,
    idx: &[Option<usize>],
    g: &Geometry,
    oshape: Vec<usize>,
    max_bytes: usize,
) -> Result<Tensor, SpecError> {
    let src = data
        .elems::<T>()
        .ok_or_else(|| spec_err!("data storage does not match its dtype"))?;
    if numel(&oshape) == Some(0) {
        // Nothing to write, but the block walk below may still count to 2^40 (data [2^40, 0]).
        return Tensor::from_elems(data.dtype(), oshape, Vec::<T>::new())
            .map_err(|e| spec_err!("{e}"));
    }
    check_heap_bytes(
        src,
        blocks(idx, g).flatten().flat_map(|s| s..s + g.inner),
        max_bytes,
    )?;
    let mut out: Vec<T> = Vec::with_capacity(g.batch * g.mid * g.per_batch * g.inner);
    for block in blocks(idx, g) {
        match block {
            Some(start) => out.extend_from_slice(&src[start..start + g.inner]),
            None => out.extend(std::iter::repeat_n(T::zero(), g.inner)),
        }
    }
    Tensor::from_elems(data.dtype(), oshape, out).map_err(|e| spec_err!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::tensor::Tensor;

    fn ov(
        batch_dims: i64,
        data: &Tensor,
        indices: &Tensor,
        axis: i64,
    ) -> Result<Tensor, super::SpecError> {
        let axis = i64s(&[], &[axis]);
        run_in(
            "org.openvinotoolkit",
            "Gather",
            8,
            vec![int_attr("batch_dims", batch_dims)],
            &[data, indices, &axis],
            1 << 20,
        )
    }

    fn seq(shape: &[usize], from: i64) -> Tensor {
        let n: usize = shape.iter().product();
        i64s(shape, &(from..from + n as i64).collect::<Vec<_>>())
    }

    #[test]
    fn packed_data_is_gathered_code_by_code_and_out_of_range_blocks_are_code_zero() {
        use crate::tensor::{DType, Storage};
        // int4 data [1, 2, 3, -1] (codes 1, 2, 3, 0xF, low nibble first: 0x21, 0xF3); indices
        // [3, 10, -4] read codes 0xF, 0 (out of range: zero-filled), 1 -> bytes 0x0F, 0x01.
        let data = Tensor::new(DType::Int4, vec![4], Storage::Packed(vec![0x21, 0xF3])).unwrap();
        let out = ov(0, &data, &i64s(&[3], &[3, 10, -4]), 0).unwrap();
        assert_eq!(out.dtype(), DType::Int4);
        assert_eq!(out.shape(), &[3]);
        assert_eq!(out.storage(), &Storage::Packed(vec![0x0F, 0x01]));
        // float6: 4 codes in 3 bytes, a code spanning two bytes; codes 0x3F, 0x01, 0x2A, 0x15.
        let codes = [0x3Fu32, 0x01, 0x2A, 0x15];
        let mut bytes = vec![0u8; 3];
        for (i, &c) in codes.iter().enumerate() {
            for b in 0..6 {
                if (c >> b) & 1 == 1 {
                    bytes[(i * 6 + b) / 8] |= 1 << ((i * 6 + b) % 8);
                }
            }
        }
        let data = Tensor::new(DType::Float6E2M3, vec![4], Storage::Packed(bytes)).unwrap();
        let out = ov(0, &data, &i64s(&[2], &[2, 1]), 0).unwrap();
        // codes 0x2A then 0x01: bits 0-5 = 101010, bits 6-11 = 000001 -> 0x6A, 0x00.
        assert_eq!(out.storage(), &Storage::Packed(vec![0x6A, 0x00]));
    }

    #[test]
    fn an_empty_output_is_not_walked_block_by_block() {
        // Found by tests/public_api.rs: 2^40 batches of nothing took hours.
        let data = Tensor::from_vec(vec![1 << 40, 0], Vec::<i64>::new()).unwrap();
        let start = std::time::Instant::now();
        let out = ov(-1, &data, &i64s(&[0], &[]), -1).unwrap();
        assert_eq!(out.shape(), [1 << 40, 0]);
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn specification_examples_1_to_7() {
        let d5 = seq(&[5], 1);
        // 1: batch_dims 0.
        assert_eq!(
            ov(0, &d5, &i64s(&[3], &[0, 0, 4]), 0).unwrap(),
            i64s(&[3], &[1, 1, 5])
        );
        // 2: batch_dims 1, axis 1.
        let d25 = seq(&[2, 5], 1);
        let i23 = i64s(&[2, 3], &[0, 0, 4, 4, 0, 0]);
        assert_eq!(
            ov(1, &d25, &i23, 1).unwrap(),
            i64s(&[2, 3], &[1, 1, 5, 10, 6, 6])
        );
        // 3: batch_dims 2, axis 2.
        let d225 = seq(&[2, 2, 5], 1);
        let i223 = i64s(&[2, 2, 3], &[0, 0, 4, 4, 0, 0, 1, 2, 4, 4, 3, 2]);
        assert_eq!(
            ov(2, &d225, &i223, 2).unwrap(),
            i64s(&[2, 2, 3], &[1, 1, 5, 10, 6, 6, 12, 13, 15, 20, 19, 18])
        );
        // 4: batch_dims 1, axis 2 > batch_dims.
        let d2154 = seq(&[2, 1, 5, 4], 1);
        let i = i64s(&[2, 3], &[1, 2, 4, 4, 3, 2]);
        let want: Vec<i64> = [5, 9, 17, 37, 33, 29]
            .iter()
            .flat_map(|&s| s..s + 4)
            .collect();
        assert_eq!(ov(1, &d2154, &i, 2).unwrap(), i64s(&[2, 1, 3, 4], &want));
        // 5: negative batch_dims normalised against the indices rank.
        assert_eq!(
            ov(-1, &d25, &i23, 1).unwrap(),
            i64s(&[2, 3], &[1, 1, 5, 10, 6, 6])
        );
        // 6: negative indices.
        assert_eq!(
            ov(0, &d5, &i64s(&[3], &[0, -2, -1]), 0).unwrap(),
            i64s(&[3], &[1, 4, 5])
        );
        // 7: out of range gives zeros.
        assert_eq!(
            ov(0, &d5, &i64s(&[3], &[3, 10, -20]), 0).unwrap(),
            i64s(&[3], &[4, 0, 0])
        );
    }

    #[test]
    fn rule_violations_are_errors() {
        let d25 = seq(&[2, 5], 1);
        let i23 = i64s(&[2, 3], &[0; 6]);
        assert!(err(ov(2, &d25, &i23, 1)).contains("batch_dims (2) must be <= axis (1)"));
        assert!(err(ov(3, &d25, &i23, 1)).contains("out of range"));
        assert!(err(ov(1, &d25, &i64s(&[3, 1], &[0; 3]), 1)).contains("equal sizes"));
        assert!(err(ov(0, &d25, &i23, 2)).contains("axis 2 is out of range"));
    }

    #[test]
    fn out_of_range_strings_become_empty() {
        let s = Tensor::from_elems(
            crate::tensor::DType::String,
            vec![2],
            vec![b"a".to_vec(), b"b".to_vec()],
        )
        .unwrap();
        let out = ov(0, &s, &i64s(&[2], &[1, 2]), 0).unwrap();
        assert_eq!(out.elems::<Vec<u8>>().unwrap(), &[b"b".to_vec(), vec![]]);
    }
}
