//! The known classes of wrong indexing semantics that diagnosis tries, with their stable ids and
//! the sentences reports print.

/// A known class of wrong indexing semantics.
///
/// ```
/// use onnx_idx_check::verdict::BugClass;
///
/// assert_eq!(BugClass::FirstWriteWins.id(), "first-write-wins");
/// assert_eq!(BugClass::ALL.len(), 10);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BugClass {
    /// An operator of another domain (OpenVINO's Gather-8) computed as the ONNX operator of the
    /// same name: the node's domain was ignored. The output is that operator's: its values, or,
    /// where its indices are out of range for that operator, its shape.
    DomainIgnored,
    /// Negative indices used as they are (read as index 0, or as a zero element).
    NegativeNotNormalized,
    /// Out-of-range indices taken modulo the axis size.
    OobWrapped,
    /// Out-of-range indices clamped to the nearest valid index.
    OobClamped,
    /// Out-of-range indices giving zeros (gathers) or ignored (scatters).
    OobZeroFilled,
    /// Duplicate scatter indices resolved by the first write instead of the last.
    FirstWriteWins,
    /// The `reduction` attribute ignored (treated as `none`).
    ReductionIgnored,
    /// The `axis` attribute ignored (0 used).
    AxisIgnored,
    /// The `batch_dims` attribute ignored (0 used).
    BatchDimsIgnored,
    /// A float reduction accumulated in another order (reverse row-major).
    AccumulationOrder,
}

impl BugClass {
    /// Every class, in the order they are tried.
    ///
    /// ```
    /// use onnx_idx_check::verdict::BugClass;
    ///
    /// assert_eq!(BugClass::ALL[0], BugClass::DomainIgnored);
    /// ```
    pub const ALL: [BugClass; 10] = [
        BugClass::DomainIgnored,
        BugClass::NegativeNotNormalized,
        BugClass::OobWrapped,
        BugClass::OobClamped,
        BugClass::OobZeroFilled,
        BugClass::FirstWriteWins,
        BugClass::ReductionIgnored,
        BugClass::AxisIgnored,
        BugClass::BatchDimsIgnored,
        BugClass::AccumulationOrder,
    ];

    /// The class with stable identifier `id`, if any.
    ///
    /// ```
    /// use onnx_idx_check::verdict::BugClass;
    ///
    /// assert_eq!(BugClass::from_id("oob-wrapped"), Some(BugClass::OobWrapped));
    /// assert_eq!(BugClass::from_id("none"), None);
    /// ```
    pub fn from_id(id: &str) -> Option<BugClass> {
        BugClass::ALL.into_iter().find(|c| c.id() == id)
    }

    /// The stable identifier used in reports.
    ///
    /// ```
    /// use onnx_idx_check::verdict::BugClass;
    ///
    /// assert_eq!(BugClass::OobWrapped.id(), "oob-wrapped");
    /// ```
    pub fn id(self) -> &'static str {
        match self {
            BugClass::DomainIgnored => "domain-ignored",
            BugClass::NegativeNotNormalized => "negative-not-normalized",
            BugClass::OobWrapped => "oob-wrapped",
            BugClass::OobClamped => "oob-clamped",
            BugClass::OobZeroFilled => "oob-zero-filled",
            BugClass::FirstWriteWins => "first-write-wins",
            BugClass::ReductionIgnored => "reduction-ignored",
            BugClass::AxisIgnored => "axis-ignored",
            BugClass::BatchDimsIgnored => "batch-dims-ignored",
            BugClass::AccumulationOrder => "accumulation-order",
        }
    }

    /// Whether the class is the cause of every wrong output of the node, whatever it looks like
    /// (its shape, rank or values): a node computed as another operator.
    ///
    /// ```
    /// use onnx_idx_check::verdict::BugClass;
    ///
    /// assert!(BugClass::DomainIgnored.whole_operator());
    /// assert!(!BugClass::AxisIgnored.whole_operator());
    /// ```
    pub fn whole_operator(self) -> bool {
        matches!(self, BugClass::DomainIgnored)
    }

    /// A sentence for people.
    ///
    /// ```
    /// use onnx_idx_check::verdict::BugClass;
    ///
    /// assert!(BugClass::AxisIgnored.sentence().contains("axis 0 was used"));
    /// ```
    pub fn sentence(self) -> &'static str {
        match self {
            BugClass::DomainIgnored => {
                "the node's domain was ignored: it was computed as the ONNX operator of the same name"
            }
            BugClass::NegativeNotNormalized => {
                "negative indices were not normalised (read as index 0 or as a zero element instead of counting from the back)"
            }
            BugClass::OobWrapped => "out-of-range indices were wrapped modulo the axis size",
            BugClass::OobClamped => "out-of-range indices were clamped to the nearest valid index",
            BugClass::OobZeroFilled => {
                "out-of-range indices produced zeros (or their updates were dropped)"
            }
            BugClass::FirstWriteWins => "duplicate indices kept the first write instead of the last in row-major order",
            BugClass::ReductionIgnored => "the reduction attribute was ignored: updates overwrote instead of combining",
            BugClass::AxisIgnored => "the axis attribute was ignored: axis 0 was used",
            BugClass::BatchDimsIgnored => "the batch_dims attribute was ignored: batch_dims 0 was used",
            BugClass::AccumulationOrder => {
                "the reduction accumulated in another order (reverse row-major) than the sequential row-major order"
            }
        }
    }
}
