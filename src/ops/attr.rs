//! Typed access to a node's attributes, with errors that name the attribute and what was wrong.

use super::KernelError;
use crate::pb::{attribute_proto::AttributeType, AttributeProto, NodeProto};
use crate::spec_err;

/// The attribute called `name`, if the node has one. A repeated name is an error.
pub fn find<'a>(
    node: &'a NodeProto,
    name: &str,
) -> Result<Option<&'a AttributeProto>, KernelError> {
    let mut found = node.attribute.iter().filter(|a| a.name == name);
    let first = found.next();
    if found.next().is_some() {
        return Err(spec_err!("attribute '{name}' is given more than once"));
    }
    Ok(first)
}

fn type_name(t: i32) -> String {
    AttributeType::try_from(t).map_or_else(|_| format!("type {t}"), |t| t.as_str_name().to_string())
}

fn expect_type(a: &AttributeProto, want: AttributeType) -> Result<(), KernelError> {
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

/// An INT attribute, or `default` when absent.
pub fn int(node: &NodeProto, name: &str, default: i64) -> Result<i64, KernelError> {
    match find(node, name)? {
        None => Ok(default),
        Some(a) => {
            expect_type(a, AttributeType::Int)?;
            Ok(a.i)
        }
    }
}

/// A STRING attribute (as UTF-8), or `default` when absent.
pub fn string(node: &NodeProto, name: &str, default: &str) -> Result<String, KernelError> {
    match find(node, name)? {
        None => Ok(default.to_string()),
        Some(a) => {
            expect_type(a, AttributeType::String)?;
            String::from_utf8(a.s.clone())
                .map_err(|_| spec_err!("attribute '{name}' is not valid UTF-8"))
        }
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
        let e = int(&n, "axis", 0).unwrap_err().to_string();
        assert_eq!(e, "attribute 'axis' must be INT, found FLOAT");
        assert_eq!(int(&node(vec![]), "axis", 7), Ok(7));
    }

    #[test]
    fn duplicate_attributes_are_an_error() {
        let a = AttributeProto {
            name: "axis".into(),
            r#type: AttributeType::Int as i32,
            ..Default::default()
        };
        assert!(int(&node(vec![a.clone(), a]), "axis", 0).is_err());
    }
}
