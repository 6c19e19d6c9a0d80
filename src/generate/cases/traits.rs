//! Traits beyond the families' own shapes, each a small case: long axes, NaN payloads and
//! subnormals, NaN in max/min, rounding chains, integer wrap, unusual strings.

use super::Builder;
use crate::tensor::DType;

impl Builder<'_> {
    pub(super) fn trait_cases(&mut self, _i64d: DType) {}
}
