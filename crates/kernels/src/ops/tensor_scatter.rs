//! TensorScatter: <https://onnx.ai/onnx/operators/onnx__TensorScatter.html>
//!
//! | since | change |
//! |---|---|
//! | 24 | KV-cache update: `present = past`, then for every prefix `p` (dims before `axis`) and `j < L`, the slice `update[p, j, ..]` goes to `present[p, w + j, ..]` (`w = write_indices[p[0]]`, mod M in circular mode) |
//!
//! Rules: `axis` (default -2) must not be the batch axis 0; `update.shape` equals `past.shape`
//! except on `axis`, where `L <= M`; write_indices (optional, zeros when absent) has shape
//! `[batch]`, no negative entry, and in linear mode `w + L <= M`.
//!
//! T includes the packed 4-bit types (int4, uint4, float4e2m1): their slices are copied
//! element by element at the bit level, so odd slice offsets need no alignment.

use super::index::normalize_axis;
use super::{
    AttrSpec, Attrs, Constraint, Evaluated, Indexing, InputSpec, Invocation, OpDef, OpVersion,
    Role, SpecError,
};
use crate::spec_err;
use crate::tensor::dtype::{CLASSIC15_BF16, INDEX64};
use crate::tensor::value::{packed_code, set_packed};
use crate::tensor::{numel, DType, DTypeSet, Elem, Layout, Storage, Tensor};

const T24: DTypeSet = CLASSIC15_BF16.with(DTypeSet::of(&[
    DType::Float8E4M3Fn,
    DType::Float8E4M3Fnuz,
    DType::Float8E5M2,
    DType::Float8E5M2Fnuz,
    DType::Float8E8M0,
    DType::Float4E2M1,
    DType::Int4,
    DType::Uint4,
]));

const MODES: &[&str] = &["linear", "circular"];

/// The TensorScatter operator, version 24.
pub(crate) static TENSOR_SCATTER: OpDef = OpDef {
    domain: "",
    op_type: "TensorScatter",
    spec: "https://onnx.ai/onnx/operators/onnx__TensorScatter.html",
    plumbing: false,
    context: false,
    gathers: false,
    indexing: Indexing::Offsets,
    provenance: None,
    versions: &[OpVersion {
        since: 24,
        deprecated: false,
        attrs: &[AttrSpec::int("axis", -2), AttrSpec::choice("mode", MODES)],
        inputs: &[
            InputSpec::required("past_cache", "T", Role::Data),
            InputSpec::required("update", "T", Role::Updates),
            InputSpec::optional("write_indices", "Tind", Role::Indices),
        ],
        outputs: &["present_cache"],
        constraints: &[Constraint::new("T", T24), Constraint::new("Tind", INDEX64)],
        negatives: false,
        modes: MODES,
        mode_attr: Some("mode"),
        eval,
    }],
};

/// How TensorScatter places a sequence that runs past the end of the cache.
///
/// ```
/// use onnx_idx_check_kernels::ops::Mode;
///
/// assert_eq!(Mode::default(), Mode::Linear);
/// assert_eq!(Mode::Circular.name(), "circular");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// `write_indices[b] + L` must not exceed the max sequence length (the default).
    #[default]
    Linear,
    /// Positions wrap modulo the max sequence length.
    Circular,
}

impl Mode {
    /// The attribute spelling.
    ///
    /// ```
    /// use onnx_idx_check_kernels::ops::Mode;
    ///
    /// assert_eq!(Mode::Linear.name(), "linear");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Mode::Linear => "linear",
            Mode::Circular => "circular",
        }
    }
}

/// TensorScatter's attributes: the typed entry to its kernel.
///
/// ```
/// use onnx_idx_check_kernels::ops::TensorScatter;
/// use onnx_idx_check_kernels::Tensor;
///
/// // A cache of 3 positions; without write_indices every row is written from position 0.
/// let past = Tensor::from_vec(vec![1, 3], vec![0i32; 3])?;
/// let update = Tensor::from_vec(vec![1, 2], vec![7i32, 8])?;
/// let ts = TensorScatter { axis: 1, ..Default::default() };
/// assert_eq!(ts.eval(24, &past, &update, None)?.to_vec::<i32>()?, [7, 8, 0]);
/// // TensorScatter arrives with opset 24.
/// assert!(ts.eval(23, &past, &update, None).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorScatter {
    /// The sequence axis; negative counts from the back; never the batch axis 0. Default -2.
    pub axis: i64,
    /// Linear or circular placement.
    pub mode: Mode,
}

impl Default for TensorScatter {
    fn default() -> Self {
        TensorScatter {
            axis: -2,
            mode: Mode::Linear,
        }
    }
}

impl TensorScatter {
    /// The KV-cache update: `present = past`, then each batch row's `update` sequence is written
    /// at its `write_indices` entry (0 when `write_indices` is `None`), as TensorScatter does at
    /// `opset` (24 and later).
    ///
    /// ```
    /// use onnx_idx_check_kernels::ops::{Mode, TensorScatter};
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// // Two batch rows of a cache of 4 positions, one position written per row.
    /// let past = Tensor::from_vec(vec![2, 4, 1], vec![0.0f32; 8])?;
    /// let update = Tensor::from_vec(vec![2, 1, 1], vec![5.0f32, 6.0])?;
    /// let at = Tensor::from_vec(vec![2], vec![1i64, 3])?;
    /// let out = TensorScatter::default().eval(24, &past, &update, Some(&at))?;
    /// assert_eq!(out.to_vec::<f32>()?, [0.0, 5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 6.0]);
    ///
    /// // Two positions from 3 run past the end: an error when linear, a wrap when circular.
    /// let update = Tensor::from_vec(vec![2, 2, 1], vec![5.0f32, 7.0, 6.0, 8.0])?;
    /// assert!(TensorScatter::default().eval(24, &past, &update, Some(&at)).is_err());
    /// let circular = TensorScatter { mode: Mode::Circular, ..Default::default() };
    /// let out = circular.eval(24, &past, &update, Some(&at))?;
    /// assert_eq!(out.to_vec::<f32>()?, [0.0, 5.0, 7.0, 0.0, 8.0, 0.0, 0.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn eval(
        &self,
        opset: i64,
        past: &Tensor,
        update: &Tensor,
        write_indices: Option<&Tensor>,
    ) -> Result<Tensor, SpecError> {
        super::call_typed(
            &TENSOR_SCATTER,
            opset,
            Attrs::new()
                .with_int("axis", self.axis)
                .with_str("mode", self.mode.name()),
            &[Some(past), Some(update), write_indices],
        )
    }
}

/// Where each update slice goes: `prefixes` x `len` slices of `slice` elements.
struct Plan {
    /// Destination slice index (within the whole tensor, in units of `slice`) per source slice.
    dst: Vec<usize>,
    slice: usize,
}

fn eval(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    let past = inv.input(0)?;
    let update = inv.input(1)?;
    let circular = match inv.string("mode")?.as_str() {
        "linear" => false,
        "circular" => true,
        other => {
            return Err(spec_err!(
                "mode must be 'linear' or 'circular', got '{other}'"
            ))
        }
    };
    let r = past.rank();
    let axis_attr = inv.int("axis")?;
    let axis = normalize_axis(axis_attr, r, "axis")?;
    if axis == 0 {
        return Err(spec_err!(
            "axis {axis_attr} resolves to 0, the batch axis; the sequence axis must be in [1, {}] for rank {r}",
            r.saturating_sub(1)
        ));
    }
    let (ps, us) = (past.shape(), update.shape());
    if us.len() != r
        || us
            .iter()
            .zip(ps)
            .enumerate()
            .any(|(d, (u, p))| d != axis && u != p)
    {
        return Err(spec_err!(
            "update has shape {}; it must equal past_cache's shape {} except on axis {axis}",
            crate::tensor::shape_text(us),
            crate::tensor::shape_text(ps)
        ));
    }
    let (len, max_len) = (us[axis], ps[axis]);
    if len > max_len {
        return Err(spec_err!(
            "update's sequence length {len} exceeds past_cache's max sequence length {max_len} (axis {axis})"
        ));
    }
    let batch = ps[0];
    let write = match inv.inputs.get(2).copied().flatten() {
        None => vec![0i64; batch],
        Some(w) => {
            if w.shape() != [batch] {
                return Err(spec_err!(
                    "write_indices has shape {}; it must be [batch_size] = [{batch}]",
                    crate::tensor::shape_text(w.shape())
                ));
            }
            w.to_i64_vec()
                .ok_or_else(|| spec_err!("write_indices must be int64"))?
        }
    };
    for (b, &w) in write.iter().enumerate() {
        if w < 0 {
            // The spec never forbids a negative write index (its pseudocode would index from
            // the back): D2 does.
            return Err(crate::ops::decision_err!(
                D2,
                "write_indices[{b}] = {w} is negative"
            ));
        }
        let end = u64::try_from(w)
            .unwrap_or(u64::MAX)
            .saturating_add(len as u64);
        if !circular && end > max_len as u64 {
            return Err(spec_err!(
                "linear mode: write_indices[{b}] + sequence length ({w} + {len}) exceeds max sequence length {max_len}"
            ));
        }
    }
    inv.check_output_size(past.dtype(), ps)?;
    // Prefix p = (b, rest..) over dims [0, axis); destination row of (p, j) is w[b] + j.
    let per_batch = numel(&ps[1..axis]).unwrap_or(0);
    let slice = numel(&ps[axis + 1..]).unwrap_or(0);
    let mut dst = Vec::with_capacity(batch * per_batch * len);
    for (b, &w) in write.iter().enumerate() {
        for rest in 0..per_batch {
            let prefix = b * per_batch + rest;
            for j in 0..len {
                let pos = (w as u64 + j as u64)
                    % if circular {
                        max_len.max(1) as u64
                    } else {
                        u64::MAX
                    };
                dst.push(prefix * max_len + pos as usize);
            }
        }
    }
    let plan = Plan { dst, slice };
    let out = match past.dtype().layout() {
        Layout::Packed(bits) => scatter_packed(past, update, &plan, bits)?,
        _ => crate::dispatch_by_width!(
            past.dtype(),
            Err(SpecError::Unsupported("unreachable".into())),
            scatter_t(past, update, &plan)
        )?,
    };
    Ok(Evaluated::moved(out))
}

fn scatter_t<T: Elem>(past: &Tensor, update: &Tensor, plan: &Plan) -> Result<Tensor, SpecError> {
    let mismatch = || spec_err!("storage does not match its dtype");
    let upd = update.elems::<T>().ok_or_else(mismatch)?;
    let mut out = past.elems::<T>().ok_or_else(mismatch)?.to_vec();
    let s = plan.slice;
    for (src, &d) in plan.dst.iter().enumerate() {
        out[d * s..(d + 1) * s].clone_from_slice(&upd[src * s..(src + 1) * s]);
    }
    Tensor::from_elems(past.dtype(), past.shape().to_vec(), out).map_err(|e| spec_err!("{e}"))
}

/// The same copy on packed sub-byte data, element by element.
fn scatter_packed(
    past: &Tensor,
    update: &Tensor,
    plan: &Plan,
    bits: u32,
) -> Result<Tensor, SpecError> {
    let (Storage::Packed(p), Storage::Packed(u)) = (past.storage(), update.storage()) else {
        return Err(spec_err!("storage does not match its dtype"));
    };
    let mut out = p.clone();
    let s = plan.slice;
    for (src, &d) in plan.dst.iter().enumerate() {
        for e in 0..s {
            let code = packed_code(u, src * s + e, bits)
                .ok_or_else(|| spec_err!("update is truncated"))?;
            set_packed(&mut out, d * s + e, bits, code);
        }
    }
    Tensor::new(past.dtype(), past.shape().to_vec(), Storage::Packed(out))
        .map_err(|e| spec_err!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    /// past [2, 4, 1] of zeros, update [2, 2, 1] = 1..4.
    fn kv() -> (Tensor, Tensor) {
        (
            f32s(&[2, 4, 1], &[0.0; 8]),
            f32s(&[2, 2, 1], &[1.0, 2.0, 3.0, 4.0]),
        )
    }

    #[test]
    fn linear_writes_at_each_batchs_index() {
        let (p, u) = kv();
        let w = i64s(&[2], &[1, 2]);
        let out = run("TensorScatter", 24, vec![], &[&p, &u, &w]).unwrap();
        assert_eq!(
            out,
            f32s(&[2, 4, 1], &[0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 3.0, 4.0])
        );
        let out = run("TensorScatter", 24, vec![], &[&p, &u]).unwrap();
        assert_eq!(
            out,
            f32s(&[2, 4, 1], &[1.0, 2.0, 0.0, 0.0, 3.0, 4.0, 0.0, 0.0])
        );
    }

    #[test]
    fn circular_wraps_modulo_the_max_length() {
        let (p, u) = kv();
        let w = i64s(&[2], &[3, 9]);
        let out = run(
            "TensorScatter",
            24,
            vec![str_attr("mode", "circular")],
            &[&p, &u, &w],
        )
        .unwrap();
        assert_eq!(
            out,
            f32s(&[2, 4, 1], &[2.0, 0.0, 0.0, 1.0, 0.0, 3.0, 4.0, 0.0])
        );
    }

    #[test]
    fn errors_follow_the_spec() {
        let (p, u) = kv();
        let e = err(run(
            "TensorScatter",
            24,
            vec![],
            &[&p, &u, &i64s(&[2], &[3, 0])],
        ));
        assert!(e.contains("3 + 2") && e.contains("4"), "{e}");
        assert!(err(run(
            "TensorScatter",
            24,
            vec![],
            &[&p, &u, &i64s(&[2], &[-1, 0])]
        ))
        .contains("negative"));
        assert!(err(run(
            "TensorScatter",
            24,
            vec![],
            &[&p, &u, &i64s(&[3], &[0, 0, 0])]
        ))
        .contains("[batch_size]"));
        assert!(err(run(
            "TensorScatter",
            24,
            vec![int_attr("axis", 0)],
            &[&p, &u]
        ))
        .contains("batch axis"));
        let p2 = f32s(&[2, 4], &[0.0; 8]);
        let u2 = f32s(&[2, 2], &[0.0; 4]);
        assert!(err(run("TensorScatter", 24, vec![], &[&p2, &u2])).contains("batch axis"));
        assert!(err(run(
            "TensorScatter",
            24,
            vec![str_attr("mode", "foo")],
            &[&p, &u]
        ))
        .contains("'foo'"));
        let long = f32s(&[2, 5, 1], &[0.0; 10]);
        assert!(err(run("TensorScatter", 24, vec![], &[&p, &long])).contains("exceeds"));
    }

    #[test]
    fn zero_length_update_returns_past() {
        let (p, _) = kv();
        let u = f32s(&[2, 0, 1], &[]);
        assert_eq!(run("TensorScatter", 24, vec![], &[&p, &u]).unwrap(), p);
    }

    #[test]
    fn int4_slices_copy_at_nibble_granularity() {
        // past [1, 3, 1] = codes 1, 2, 3 (packed 0x21, 0x03); update [1, 1, 1] = 0xF at index 1.
        let p = Tensor::new(
            DType::Int4,
            vec![1, 3, 1],
            Storage::Packed(vec![0x21, 0x03]),
        )
        .unwrap();
        let u = Tensor::new(DType::Int4, vec![1, 1, 1], Storage::Packed(vec![0x0F])).unwrap();
        let out = run("TensorScatter", 24, vec![], &[&p, &u, &i64s(&[1], &[1])]).unwrap();
        assert_eq!(out.storage(), &Storage::Packed(vec![0xF1, 0x03]));
    }

    #[test]
    fn float8_moves_as_plain_bytes() {
        let p = Tensor::new(DType::Float8E4M3Fn, vec![1, 2, 1], Storage::W8(vec![1, 2])).unwrap();
        let u = Tensor::new(DType::Float8E4M3Fn, vec![1, 1, 1], Storage::W8(vec![0x38])).unwrap();
        let out = run("TensorScatter", 24, vec![], &[&p, &u]).unwrap();
        assert_eq!(out.storage(), &Storage::W8(vec![0x38, 2]));
    }
}
