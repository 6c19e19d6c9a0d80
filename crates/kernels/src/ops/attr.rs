//! Attributes: what each operator version declares ([`AttrSpec`], with its type and default) and
//! what one call gives ([`Attrs`]), read with errors that name the attribute and what was wrong.
//!
//! A call's attributes come either from a model's node (the checker converts each one to an
//! [`AttrValue`] of the type the node declares) or from the typed API (`ops::Gather { axis }` and
//! its siblings); kernels read both the same way. Values are type-checked when the kernel reads
//! them, so that the order in which problems are reported is the kernel's (shapes, then
//! attributes), whatever the source. Nothing here knows protobuf: a tensor-valued attribute is
//! decoded by its source, when a kernel asks for it ([`TensorAttr`]).

use super::SpecError;
use crate::spec_err;
use crate::tensor::Tensor;
use std::borrow::Cow;
use std::sync::Arc;

/// The type of an attribute and its default, as an operator version declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    /// An INT attribute with this default.
    Int(i64),
    /// A STRING attribute with this default; `values` lists the spellings the version accepts
    /// (empty: any, checked by the kernel).
    Str {
        /// Used when the attribute is absent.
        default: &'static str,
        /// The accepted values, for the generator and the support matrix.
        values: &'static [&'static str],
    },
    /// An attribute of any type that the kernel reads itself (Constant's `value_*`).
    Any,
}

/// One attribute of an operator version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttrSpec {
    /// The attribute's name.
    pub name: &'static str,
    /// Its type and default.
    pub kind: AttrKind,
}

impl AttrSpec {
    /// An INT attribute.
    pub const fn int(name: &'static str, default: i64) -> AttrSpec {
        AttrSpec {
            name,
            kind: AttrKind::Int(default),
        }
    }

    /// A STRING attribute taking one of `values`, the first being the default.
    pub const fn choice(name: &'static str, values: &'static [&'static str]) -> AttrSpec {
        AttrSpec {
            name,
            kind: AttrKind::Str {
                default: values[0],
                values,
            },
        }
    }

    /// An attribute of any type, read by the kernel.
    pub const fn any(name: &'static str) -> AttrSpec {
        AttrSpec {
            name,
            kind: AttrKind::Any,
        }
    }
}

/// A tensor-valued attribute (Constant's `value`), decoded when a kernel reads it, so that a
/// tensor that cannot be decoded is reported in the kernel's order, and a node that is never run
/// costs nothing.
pub trait TensorAttr: std::fmt::Debug + Send + Sync {
    /// The tensor, or why it cannot be had (a [`SpecError::Unsupported`] for an encoding the tool
    /// does not read, a violation for a malformed one or one past the size limit); `None` when
    /// the attribute declares a tensor and holds none.
    fn tensor(&self) -> Option<Result<Tensor, SpecError>>;
}

/// One given attribute value, of the type its source declares.
#[derive(Clone, Debug)]
pub enum AttrValue<'a> {
    /// INT.
    Int(i64),
    /// INTS.
    Ints(Cow<'a, [i64]>),
    /// FLOAT.
    Float(f32),
    /// FLOATS.
    Floats(Cow<'a, [f32]>),
    /// STRING, as the bytes given (read as UTF-8 when a kernel asks for text).
    Str(Cow<'a, [u8]>),
    /// STRINGS.
    Strings(Cow<'a, [Vec<u8>]>),
    /// TENSOR, decoded when read.
    Tensor(Arc<dyn TensorAttr + 'a>),
    /// A type no kernel reads (SPARSE_TENSOR, GRAPH, ...), by its ONNX name, or `type N` for a
    /// number ONNX does not define.
    Other(Cow<'a, str>),
    /// A reference to an attribute of an enclosing function (ONNX's `ref_attr_name`), which a
    /// main graph cannot resolve.
    Ref(Cow<'a, str>),
}

impl AttrValue<'_> {
    /// The ONNX name of the value's type (`INT`, `FLOATS`, ...), for messages.
    pub fn type_name(&self) -> &str {
        match self {
            AttrValue::Int(_) => "INT",
            AttrValue::Ints(_) => "INTS",
            AttrValue::Float(_) => "FLOAT",
            AttrValue::Floats(_) => "FLOATS",
            AttrValue::Str(_) => "STRING",
            AttrValue::Strings(_) => "STRINGS",
            AttrValue::Tensor(_) => "TENSOR",
            AttrValue::Other(name) => name,
            AttrValue::Ref(_) => "a reference",
        }
    }
}

impl PartialEq for AttrValue<'_> {
    fn eq(&self, other: &Self) -> bool {
        use AttrValue as V;
        match (self, other) {
            (V::Int(a), V::Int(b)) => a == b,
            (V::Ints(a), V::Ints(b)) => a == b,
            (V::Float(a), V::Float(b)) => a.to_bits() == b.to_bits(),
            (V::Floats(a), V::Floats(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (V::Str(a), V::Str(b)) => a == b,
            (V::Strings(a), V::Strings(b)) => a == b,
            // A lazily decoded tensor is equal only to itself.
            (V::Tensor(a), V::Tensor(b)) => std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b)),
            (V::Other(a), V::Other(b)) | (V::Ref(a), V::Ref(b)) => a == b,
            _ => false,
        }
    }
}

/// The attributes one call gives, by name; absent ones take the version's default.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attrs<'a> {
    items: Vec<(Cow<'a, str>, AttrValue<'a>)>,
}

impl<'a> Attrs<'a> {
    /// No attributes.
    pub fn new() -> Attrs<'a> {
        Attrs::default()
    }

    /// Adds an attribute as its source gives it (type-checked when read).
    pub fn with(mut self, name: impl Into<Cow<'a, str>>, value: AttrValue<'a>) -> Attrs<'a> {
        self.items.push((name.into(), value));
        self
    }

    /// Adds an INT attribute.
    pub fn with_int(self, name: &'a str, value: i64) -> Attrs<'a> {
        self.with(name, AttrValue::Int(value))
    }

    /// Adds a STRING attribute.
    pub fn with_str(self, name: &'a str, value: impl Into<Cow<'a, str>>) -> Attrs<'a> {
        let bytes = match value.into() {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        };
        self.with(name, AttrValue::Str(bytes))
    }

    /// The attributes whose names `keep` accepts.
    pub fn retain(mut self, keep: impl Fn(&str) -> bool) -> Attrs<'a> {
        self.items.retain(|(n, _)| keep(n));
        self
    }

    /// The number of attributes given.
    pub fn count(&self) -> usize {
        self.items.len()
    }

    /// The value called `name`, if given. A repeated name is an error.
    pub fn find(&self, name: &str) -> Result<Option<&AttrValue<'a>>, SpecError> {
        let mut found = self.items.iter().filter(|(n, _)| n == name);
        let first = found.next();
        if found.next().is_some() {
            return Err(spec_err!("attribute '{name}' is given more than once"));
        }
        Ok(first.map(|(_, v)| v))
    }

    /// The attribute at position `i` with its name (Constant reads its one value attribute).
    pub fn get(&self, i: usize) -> Option<(&str, &AttrValue<'a>)> {
        self.items.get(i).map(|(n, v)| (n.as_ref(), v))
    }

    /// An INT attribute, or `default` when absent.
    pub fn int(&self, name: &str, default: i64) -> Result<i64, SpecError> {
        match self.find(name)? {
            None => Ok(default),
            Some(AttrValue::Int(i)) => Ok(*i),
            Some(other) => Err(mistyped(name, "INT", other)),
        }
    }

    /// An INTS attribute, `None` when absent (the context operators' `axes` and `perm`, which
    /// only nodes give).
    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>, SpecError> {
        match self.find(name)? {
            None => Ok(None),
            Some(AttrValue::Ints(v)) => Ok(Some(v.to_vec())),
            Some(other) => Err(mistyped(name, "INTS", other)),
        }
    }

    /// A STRING attribute (as UTF-8), or `default` when absent.
    pub fn string(&self, name: &str, default: &str) -> Result<String, SpecError> {
        match self.find(name)? {
            None => Ok(default.to_string()),
            Some(AttrValue::Str(s)) => String::from_utf8(s.to_vec())
                .map_err(|_| spec_err!("attribute '{name}' is not valid UTF-8")),
            Some(other) => Err(mistyped(name, "STRING", other)),
        }
    }
}

/// The error of an attribute read as `want` that holds another type.
fn mistyped(name: &str, want: &str, found: &AttrValue<'_>) -> SpecError {
    spec_err!(
        "attribute '{name}' must be {want}, found {}",
        found.type_name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_attribute_with_a_float_type_is_an_error_naming_it() {
        let a = Attrs::new().with("axis", AttrValue::Float(1.0));
        let e = a.int("axis", 0).unwrap_err().to_string();
        assert_eq!(e, "attribute 'axis' must be INT, found FLOAT");
        assert_eq!(Attrs::new().int("axis", 7), Ok(7));
        let odd = Attrs::new().with("axis", AttrValue::Other("type 99".into()));
        assert_eq!(
            odd.int("axis", 0).unwrap_err().to_string(),
            "attribute 'axis' must be INT, found type 99"
        );
    }

    #[test]
    fn duplicate_attributes_are_an_error() {
        assert!(Attrs::new()
            .with_int("axis", 1)
            .with_int("axis", 2)
            .int("axis", 0)
            .is_err());
    }

    #[test]
    fn strings_are_read_as_utf8_and_refuse_the_other_type() {
        let a = Attrs::new()
            .with_int("axis", -1)
            .with_str("reduction", "add")
            .with("mode", AttrValue::Str(Cow::Borrowed(b"\xff")));
        assert_eq!(a.int("axis", 0), Ok(-1));
        assert_eq!(a.string("reduction", "none").as_deref(), Ok("add"));
        assert_eq!(
            a.int("reduction", 0).unwrap_err().to_string(),
            "attribute 'reduction' must be INT, found STRING"
        );
        assert_eq!(
            a.string("axis", "").unwrap_err().to_string(),
            "attribute 'axis' must be STRING, found INT"
        );
        assert_eq!(
            a.string("mode", "").unwrap_err().to_string(),
            "attribute 'mode' is not valid UTF-8"
        );
        assert_eq!(
            a.ints("axis").unwrap_err().to_string(),
            "attribute 'axis' must be INTS, found INT"
        );
    }
}
