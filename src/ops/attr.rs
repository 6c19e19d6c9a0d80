//! Attributes: what each operator version declares ([`AttrSpec`], with its type and default) and
//! what one call gives ([`Attrs`]), read with errors that name the attribute and what was wrong.
//!
//! A call's attributes come either from a `NodeProto` (the evaluator) or from the typed API
//! (`ops::Gather { axis }` and its siblings); kernels read both the same way. Values from a node
//! are type-checked when the kernel reads them, so that the order in which problems are reported
//! is the kernel's (shapes, then attributes), whatever the source.

use super::SpecError;
use crate::pb::{attribute_proto::AttributeType, AttributeProto, NodeProto};
use crate::spec_err;
use std::borrow::Cow;

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

/// One given attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue<'a> {
    /// An integer from the typed API.
    Int(i64),
    /// A string from the typed API.
    Str(Cow<'a, str>),
    /// An attribute of a node, type-checked when read.
    Proto(&'a AttributeProto),
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

    /// The attributes of `node`, as given (checked against the version when invoked).
    pub fn of_node(node: &'a NodeProto) -> Attrs<'a> {
        Attrs {
            items: node
                .attribute
                .iter()
                .map(|a| (Cow::Borrowed(a.name.as_str()), AttrValue::Proto(a)))
                .collect(),
        }
    }

    /// Adds an INT attribute.
    pub fn with_int(mut self, name: &'a str, value: i64) -> Attrs<'a> {
        self.items
            .push((Cow::Borrowed(name), AttrValue::Int(value)));
        self
    }

    /// Adds a STRING attribute.
    pub fn with_str(mut self, name: &'a str, value: impl Into<Cow<'a, str>>) -> Attrs<'a> {
        self.items
            .push((Cow::Borrowed(name), AttrValue::Str(value.into())));
        self
    }

    /// Adds an attribute as a node holds it (type-checked when read), under its own name.
    pub fn with_proto(mut self, attr: &'a AttributeProto) -> Attrs<'a> {
        self.items
            .push((Cow::Borrowed(attr.name.as_str()), AttrValue::Proto(attr)));
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
            Some(AttrValue::Proto(a)) => {
                expect_type(a, AttributeType::Int)?;
                Ok(a.i)
            }
            Some(AttrValue::Str(_)) => Err(spec_err!(
                "attribute '{name}' must be {}, found {}",
                AttributeType::Int.as_str_name(),
                AttributeType::String.as_str_name()
            )),
        }
    }

    /// An INTS attribute, `None` when absent (the context operators' `axes` and `perm`, which
    /// only nodes give).
    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>, SpecError> {
        match self.find(name)? {
            None => Ok(None),
            Some(AttrValue::Proto(a)) => {
                expect_type(a, AttributeType::Ints)?;
                Ok(Some(a.ints.clone()))
            }
            Some(AttrValue::Int(_)) => Err(spec_err!(
                "attribute '{name}' must be {}, found {}",
                AttributeType::Ints.as_str_name(),
                AttributeType::Int.as_str_name()
            )),
            Some(AttrValue::Str(_)) => Err(spec_err!(
                "attribute '{name}' must be {}, found {}",
                AttributeType::Ints.as_str_name(),
                AttributeType::String.as_str_name()
            )),
        }
    }

    /// A STRING attribute (as UTF-8), or `default` when absent.
    pub fn string(&self, name: &str, default: &str) -> Result<String, SpecError> {
        match self.find(name)? {
            None => Ok(default.to_string()),
            Some(AttrValue::Str(s)) => Ok(s.to_string()),
            Some(AttrValue::Proto(a)) => {
                expect_type(a, AttributeType::String)?;
                String::from_utf8(a.s.clone())
                    .map_err(|_| spec_err!("attribute '{name}' is not valid UTF-8"))
            }
            Some(AttrValue::Int(_)) => Err(spec_err!(
                "attribute '{name}' must be {}, found {}",
                AttributeType::String.as_str_name(),
                AttributeType::Int.as_str_name()
            )),
        }
    }
}

fn type_name(t: i32) -> String {
    AttributeType::try_from(t).map_or_else(|_| format!("type {t}"), |t| t.as_str_name().to_string())
}

fn expect_type(a: &AttributeProto, want: AttributeType) -> Result<(), SpecError> {
    if a.r#type == want as i32 {
        Ok(())
    } else {
        Err(spec_err!(
            "attribute '{}' must be {}, found {}",
            a.name,
            want.as_str_name(),
            type_name(a.r#type)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(attrs: Vec<AttributeProto>) -> NodeProto {
        NodeProto {
            attribute: attrs,
            ..Default::default()
        }
    }

    #[test]
    fn int_attribute_with_a_float_type_is_an_error_naming_it() {
        let n = node(vec![AttributeProto {
            name: "axis".into(),
            r#type: AttributeType::Float as i32,
            f: 1.0,
            ..Default::default()
        }]);
        let a = Attrs::of_node(&n);
        let e = a.int("axis", 0).unwrap_err().to_string();
        assert_eq!(e, "attribute 'axis' must be INT, found FLOAT");
        assert_eq!(Attrs::new().int("axis", 7), Ok(7));
    }

    #[test]
    fn duplicate_attributes_are_an_error() {
        let a = AttributeProto {
            name: "axis".into(),
            r#type: AttributeType::Int as i32,
            ..Default::default()
        };
        let n = node(vec![a.clone(), a]);
        assert!(Attrs::of_node(&n).int("axis", 0).is_err());
        assert!(Attrs::new()
            .with_int("axis", 1)
            .with_int("axis", 2)
            .int("axis", 0)
            .is_err());
    }

    #[test]
    fn typed_values_read_like_node_values_and_refuse_the_other_type() {
        let a = Attrs::new()
            .with_int("axis", -1)
            .with_str("reduction", "add");
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
    }
}
