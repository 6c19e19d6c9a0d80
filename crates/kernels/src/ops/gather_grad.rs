//! The backward pass of a Gather layer (decision D14), as onnxruntime's training ops define it in
//! the `com.microsoft` domain:
//!
//! | op | since | semantics |
//! |---|---|---|
//! | GatherGrad | 1 | `(shape, indices, dY; axis) -> dX = zeros(shape)`, then `dX[a.., indices[i..], b..] += dY[a.., i.., b..]` |
//! | GatherElementsGrad | 1 | `(dY, shape, indices; axis) -> dX = zeros(shape)`, then `dX[i with i[axis] := indices[i]] += dY[i]` |
//!
//! Duplicated indices accumulate, sequentially in row-major order of `dY` (D8); float16 and
//! bfloat16 accumulate through f32 with a rounding per step. Indices may be negative (counted
//! from the back, as in the Gather-13 / GatherElements-13 forward ops).

use super::gather_elements::{check_element_shapes, for_each_element};
use super::index::{normalize_axis, normalize_indices, Negatives};
use super::provenance::{dims_of, resolve, IndexInfo, Quirks, Resolved, Semantics, Subject};
use super::reduction::{self, Reduction, Visit};
use super::{
    AttrSpec, Attrs, Constraint, EvalFn, Evaluated, Indexing, InputSpec, Invocation, OpDef,
    OpVersion, Role, SpecError,
};
use crate::spec_err;
use crate::tensor::dtype::{INDEX32_64, INDEX64};
use crate::tensor::{numel, strides, DType, DTypeSet, Layout, Storage, Tensor};

const FLOATS: DTypeSet =
    DTypeSet::of(&[DType::Float16, DType::Float, DType::Double, DType::Bfloat16]);

const CONSTRAINTS: &[Constraint] = &[
    Constraint::new("T", FLOATS),
    Constraint::new("Tind", INDEX32_64),
    Constraint::new("I", INDEX64),
];

const AXIS: &[AttrSpec] = &[AttrSpec::int("axis", 0)];

const fn version(inputs: &'static [InputSpec], eval: EvalFn) -> OpVersion {
    OpVersion {
        outputs: &["dX"],
        modes: &["add"],
        ..OpVersion::base(1, AXIS, inputs, CONSTRAINTS, eval)
    }
}

const TRAINING_OPS: &str = "https://github.com/microsoft/onnxruntime/blob/main/orttraining/orttraining/core/graph/training_op_defs.cc";

/// GatherGrad, com.microsoft version 1.
pub(crate) static GATHER_GRAD: OpDef = OpDef {
    domain: "com.microsoft",
    op_type: "GatherGrad",
    spec: TRAINING_OPS,
    plumbing: false,
    context: false,
    gathers: false,
    indexing: Indexing::Axis,
    provenance: Some(gather_grad_provenance),
    versions: &[version(
        &[
            InputSpec::required("shape", "I", Role::Shape),
            InputSpec::required("indices", "Tind", Role::Indices),
            InputSpec::required("dY", "T", Role::Updates),
        ],
        eval_gather_grad,
    )],
};

/// GatherElementsGrad, com.microsoft version 1.
pub(crate) static GATHER_ELEMENTS_GRAD: OpDef = OpDef {
    domain: "com.microsoft",
    op_type: "GatherElementsGrad",
    spec: TRAINING_OPS,
    plumbing: false,
    context: false,
    gathers: false,
    indexing: Indexing::Elements,
    provenance: Some(gather_elements_grad_provenance),
    versions: &[version(
        &[
            InputSpec::required("dY", "T", Role::Updates),
            InputSpec::required("shape", "I", Role::Shape),
            InputSpec::required("indices", "Tind", Role::Indices),
        ],
        eval_gather_elements_grad,
    )],
};

/// GatherGrad's attributes: the typed entry to its kernel.
///
/// ```
/// use onnx_idx_check_kernels::ops::GatherGrad;
/// use onnx_idx_check_kernels::Tensor;
///
/// // Gradients of rows gathered along axis 1 of a [1, 2] input.
/// let shape = Tensor::from_vec(vec![2], vec![1i64, 2])?;
/// let indices = Tensor::from_vec(vec![2], vec![1i64, 1])?;
/// let dy = Tensor::from_vec(vec![1, 2], vec![1.0f32, 2.0])?;
/// let dx = GatherGrad { axis: 1 }.eval(1, &shape, &indices, &dy)?;
/// assert_eq!((dx.shape(), dx.to_vec::<f32>()?), (&[1, 2][..], vec![0.0, 3.0]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GatherGrad {
    /// The forward Gather's axis; negative counts from the back. Default 0.
    pub axis: i64,
}

impl GatherGrad {
    /// The backward pass of Gather: `dX = zeros(shape)`, then `dY`'s slices added where the
    /// forward op gathered them (`opset` 1 of `com.microsoft`). `shape` is a 1-D int64 tensor.
    ///
    /// ```
    /// use onnx_idx_check_kernels::ops::GatherGrad;
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// // Index 1 was gathered twice: its gradients add up.
    /// let shape = Tensor::from_vec(vec![1], vec![3i64])?;
    /// let indices = Tensor::from_vec(vec![3], vec![1i64, 1, -1])?;
    /// let dy = Tensor::from_vec(vec![3], vec![0.5f32, 0.25, 2.0])?;
    /// let dx = GatherGrad::default().eval(1, &shape, &indices, &dy)?;
    /// assert_eq!(dx.to_vec::<f32>()?, [0.0, 0.75, 2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn eval(
        &self,
        opset: i64,
        shape: &Tensor,
        indices: &Tensor,
        dy: &Tensor,
    ) -> Result<Tensor, SpecError> {
        super::call_typed(
            &GATHER_GRAD,
            opset,
            Attrs::new().with_int("axis", self.axis),
            &[Some(shape), Some(indices), Some(dy)],
        )
    }
}

/// GatherElementsGrad's attributes: the typed entry to its kernel.
///
/// ```
/// use onnx_idx_check_kernels::ops::GatherElementsGrad;
/// use onnx_idx_check_kernels::Tensor;
///
/// let dy = Tensor::from_vec(vec![3], vec![1.0f32, 2.0, 4.0])?;
/// let shape = Tensor::from_vec(vec![1], vec![2i64])?;
/// let indices = Tensor::from_vec(vec![3], vec![0i64, 1, 0])?;
/// let dx = GatherElementsGrad::default().eval(1, &dy, &shape, &indices)?;
/// assert_eq!(dx.to_vec::<f32>()?, [5.0, 2.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GatherElementsGrad {
    /// The forward GatherElements' axis; negative counts from the back. Default 0.
    pub axis: i64,
}

impl GatherElementsGrad {
    /// The backward pass of GatherElements: `dX = zeros(shape)`, then each element of `dY` added
    /// where the forward op read it (`opset` 1 of `com.microsoft`).
    ///
    /// ```
    /// use onnx_idx_check_kernels::ops::GatherElementsGrad;
    /// use onnx_idx_check_kernels::Tensor;
    ///
    /// let dy = Tensor::from_vec(vec![2, 2], vec![1.0f64, 2.0, 3.0, 4.0])?;
    /// let shape = Tensor::from_vec(vec![2], vec![2i64, 3])?;
    /// let indices = Tensor::from_vec(vec![2, 2], vec![2i64, 2, 0, 1])?;
    /// let dx = GatherElementsGrad { axis: 1 }.eval(1, &dy, &shape, &indices)?;
    /// assert_eq!(dx.to_vec::<f64>()?, [0.0, 0.0, 3.0, 3.0, 4.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn eval(
        &self,
        opset: i64,
        dy: &Tensor,
        shape: &Tensor,
        indices: &Tensor,
    ) -> Result<Tensor, SpecError> {
        super::call_typed(
            &GATHER_ELEMENTS_GRAD,
            opset,
            Attrs::new().with_int("axis", self.axis),
            &[Some(dy), Some(shape), Some(indices)],
        )
    }
}

/// dX starts as zeros; each slice of dY is added where the forward Gather read it.
fn gather_grad_provenance<'a>(s: &Subject<'a>, q: &Quirks) -> Option<Semantics<'a>> {
    let (shape, indices, dy) = (s.input(0)?, s.input(1)?, s.input(2)?);
    let shape = dims_of(shape)?;
    semantics(&shape, indices, dy, s.axis(shape.len(), q)?, q)
}

/// dX starts as zeros; each element of dY is added where the forward GatherElements read it.
fn gather_elements_grad_provenance<'a>(s: &Subject<'a>, q: &Quirks) -> Option<Semantics<'a>> {
    let (dy, shape, indices) = (s.input(0)?, s.input(1)?, s.input(2)?);
    let shape = dims_of(shape)?;
    let axis = s.axis(shape.len(), q)?;
    let add = q.reduction().unwrap_or(Reduction::Add);
    super::scatter_elements::semantics(None, dy.dtype(), &shape, indices, dy, axis, add, q)
}

/// What the ops that work like gather grad do, element by element.
pub(crate) fn semantics<'a>(
    shape: &[usize],
    indices: &Tensor,
    dy: &'a Tensor,
    axis: usize,
    q: &Quirks,
) -> Option<Semantics<'a>> {
    // A quirk (axis 0 forced) can name an axis the tensor does not have.
    if axis >= shape.len() {
        return None;
    }
    let mut want = shape[..axis].to_vec();
    want.extend_from_slice(indices.shape());
    want.extend_from_slice(&shape[axis + 1..]);
    if dy.shape() != want.as_slice() || !q.admits(numel(shape)?) {
        return None;
    }
    let values = indices.to_i64_vec()?;
    let (outer, s, inner, n) = (
        numel(&shape[..axis])?,
        shape[axis],
        numel(&shape[axis + 1..])?,
        values.len(),
    );
    let mut pairs = Vec::new();
    for o in 0..outer {
        for (j, &v) in values.iter().enumerate() {
            match resolve(v, s, q) {
                Resolved::At(k) => {
                    for e in 0..inner {
                        pairs.push(((o * s + k) * inner + e, (o * n + j) * inner + e, j));
                    }
                }
                Resolved::Zero => {}
                Resolved::Invalid => return None,
            }
        }
    }
    if q.reverse {
        pairs.reverse();
    }
    Some(Semantics::Scattered {
        base: None,
        dtype: dy.dtype(),
        shape: shape.to_vec(),
        updates: dy,
        pairs,
        reduction: q.reduction.unwrap_or(Reduction::Add),
        index: IndexInfo {
            values,
            shape: indices.shape().to_vec(),
            axis: Some(axis),
            tuple: 0,
        },
    })
}

/// Reads the `shape` input: a 1-D int64 tensor of non-negative dims. Shared by the backward ops.
pub(crate) fn read_shape(t: &Tensor) -> Result<Vec<usize>, SpecError> {
    if t.rank() != 1 {
        return Err(spec_err!(
            "shape must be a 1-D tensor, it has shape {}",
            crate::tensor::shape_text(t.shape())
        ));
    }
    let dims = t.to_i64_vec().unwrap_or_default();
    dims.iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                spec_err!(
                    "shape {} has a negative dimension",
                    crate::tensor::shape_text(&dims)
                )
            })
        })
        .collect()
}

/// A zero tensor of `dtype` (a float type) and `shape`, whose size the caller has checked: where
/// the backward ops start.
pub(crate) fn zeros(dtype: DType, n: usize) -> Storage {
    match dtype.layout() {
        Layout::Bytes(2) => Storage::W16(vec![0; n]),
        Layout::Bytes(4) => Storage::W32(vec![0; n]),
        _ => Storage::W64(vec![0; n]),
    }
}

/// The backward ops' output: `dX` from its storage, computed by adding (so compared with D9's
/// tolerance).
pub(crate) fn finish(
    dtype: DType,
    shape: Vec<usize>,
    storage: Storage,
) -> Result<Evaluated, SpecError> {
    let out = Tensor::new(dtype, shape, storage).map_err(|e| spec_err!("{e}"))?;
    Ok(Evaluated::one(out, true))
}

/// `dY` as `[outer, n_idx, inner]` blocks added to `dX` as `[outer, axis_len, inner]`.
struct GatherPlan<'a> {
    idx: &'a [usize],
    outer: usize,
    axis_len: usize,
    inner: usize,
}

impl Visit for GatherPlan<'_> {
    fn visit<F: FnMut(usize, usize)>(&self, mut f: F) {
        let n = self.idx.len();
        for o in 0..self.outer {
            for (j, &k) in self.idx.iter().enumerate() {
                let (dst, src) = (
                    (o * self.axis_len + k) * self.inner,
                    (o * n + j) * self.inner,
                );
                for e in 0..self.inner {
                    f(dst + e, src + e);
                }
            }
        }
    }
}

fn eval_gather_grad(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    let shape = read_shape(inv.input(0)?)?;
    let indices = inv.input(1)?;
    let dy = inv.input(2)?;
    if shape.is_empty() {
        return Err(spec_err!(
            "shape must have at least one dimension (the forward data had rank >= 1)"
        ));
    }
    let axis = normalize_axis(inv.int("axis")?, shape.len(), "axis")?;
    let mut want = shape[..axis].to_vec();
    want.extend_from_slice(indices.shape());
    want.extend_from_slice(&shape[axis + 1..]);
    if dy.shape() != want.as_slice() {
        return Err(spec_err!(
            "dY has shape {} but must have shape[:axis] ++ indices.shape ++ shape[axis+1:] = {}",
            crate::tensor::shape_text(dy.shape()),
            crate::tensor::shape_text(&want)
        ));
    }
    let idx = normalize_indices(indices, "indices", shape[axis], axis, Negatives::FromBack)?;
    let n = inv.check_output_size(dy.dtype(), &shape)?;
    let plan = GatherPlan {
        idx: &idx,
        outer: numel(&shape[..axis]).unwrap_or(0),
        axis_len: shape[axis],
        inner: numel(&shape[axis + 1..]).unwrap_or(0),
    };
    let storage = reduction::apply(dy.dtype(), Reduction::Add, &zeros(dy.dtype(), n), dy, &plan)?;
    finish(dy.dtype(), shape, storage)
}

/// Element `i` of `dY` is added to `dX[i with i[axis] := idx[i]]`.
struct ElementPlan<'a> {
    ishape: &'a [usize],
    dshape: &'a [usize],
    axis: usize,
    axis_stride: usize,
    idx: &'a [usize],
}

impl Visit for ElementPlan<'_> {
    fn visit<F: FnMut(usize, usize)>(&self, mut f: F) {
        for_each_element(self.ishape, self.dshape, self.axis, |pos, base| {
            f(base + self.idx[pos] * self.axis_stride, pos)
        });
    }
}

fn eval_gather_elements_grad(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    let dy = inv.input(0)?;
    let shape = read_shape(inv.input(1)?)?;
    let indices = inv.input(2)?;
    if dy.shape() != indices.shape() {
        return Err(spec_err!(
            "dY has shape {} but indices has shape {}; they must be equal",
            crate::tensor::shape_text(dy.shape()),
            crate::tensor::shape_text(indices.shape())
        ));
    }
    let n = inv.check_output_size(dy.dtype(), &shape)?;
    // The forward op's shape rules, with `shape` standing for the data's shape.
    let axis = check_element_shapes(&shape, indices.shape(), inv.int("axis")?)?;
    let idx = normalize_indices(indices, "indices", shape[axis], axis, Negatives::FromBack)?;
    let plan = ElementPlan {
        ishape: indices.shape(),
        dshape: &shape,
        axis,
        axis_stride: strides(&shape)[axis],
        idx: &idx,
    };
    let storage = reduction::apply(dy.dtype(), Reduction::Add, &zeros(dy.dtype(), n), dy, &plan)?;
    finish(dy.dtype(), shape, storage)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::tensor::Tensor;

    fn ms(op: &str, axis: i64, inputs: &[&Tensor]) -> Result<Tensor, super::SpecError> {
        run_in(
            "com.microsoft",
            op,
            1,
            vec![int_attr("axis", axis)],
            inputs,
            1 << 20,
        )
    }

    #[test]
    fn gather_grad_accumulates_duplicates() {
        // Forward: Gather(data [3, 2], indices [0, 2, 0], axis 0). Backward, as np.add.at:
        // dX[0] = dY[0] + dY[2], dX[1] = 0, dX[2] = dY[1].
        let dy = f32s(&[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let out = ms(
            "GatherGrad",
            0,
            &[&i64s(&[2], &[3, 2]), &i64s(&[3], &[0, 2, 0]), &dy],
        )
        .unwrap();
        assert_eq!(out, f32s(&[3, 2], &[6.0, 8.0, 0.0, 0.0, 3.0, 4.0]));
        // Axis 1, negative index: data [2, 3], indices [-1, 0] -> dY [2, 2].
        let dy = f32s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let out = ms(
            "GatherGrad",
            1,
            &[&i64s(&[2], &[2, 3]), &i32s(&[2], &[-1, 0]), &dy],
        )
        .unwrap();
        assert_eq!(out, f32s(&[2, 3], &[2.0, 0.0, 1.0, 4.0, 0.0, 3.0]));
    }

    #[test]
    fn gather_elements_grad_accumulates_duplicates() {
        // Forward: GatherElements(data [2, 3], indices [[0, 0], [2, 1]], axis 1).
        let dy = f32s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let idx = i64s(&[2, 2], &[0, 0, 2, 1]);
        let out = ms("GatherElementsGrad", 1, &[&dy, &i64s(&[2], &[2, 3]), &idx]).unwrap();
        assert_eq!(out, f32s(&[2, 3], &[3.0, 0.0, 0.0, 0.0, 4.0, 3.0]));
    }

    #[test]
    fn shape_mismatches_and_ranges_are_errors() {
        let dy = f32s(&[3, 2], &[0.0; 6]);
        let e = err(ms(
            "GatherGrad",
            0,
            &[&i64s(&[2], &[3, 2]), &i64s(&[2], &[0, 1]), &dy],
        ));
        assert!(e.contains("dY has shape [3, 2]"), "{e}");
        let e = err(ms(
            "GatherGrad",
            0,
            &[&i64s(&[2], &[3, 2]), &i64s(&[3], &[0, 3, 0]), &dy],
        ));
        assert!(e.contains("out of range"), "{e}");
        let e = err(ms(
            "GatherGrad",
            0,
            &[&i64s(&[2], &[-3, 2]), &i64s(&[3], &[0, 1, 0]), &dy],
        ));
        assert!(e.contains("negative"), "{e}");
        let e = err(ms(
            "GatherElementsGrad",
            0,
            &[&dy, &i64s(&[2], &[3, 2]), &i64s(&[2, 2], &[0; 4])],
        ));
        assert!(e.contains("must be equal"), "{e}");
        let big = err(ms(
            "GatherGrad",
            0,
            &[
                &i64s(&[2], &[1 << 40, 2]),
                &i64s(&[3], &[0, 1, 0]),
                &f32s(&[3, 2], &[0.0; 6]),
            ],
        ));
        assert!(big.contains("limit"), "{big}");
    }
}
