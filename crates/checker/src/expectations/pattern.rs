//! Case patterns: a plain name or a glob (`*` within a path component, `**` across), and the
//! escaping that turns a case name into a pattern that matches only it.

use globset::{GlobBuilder, GlobMatcher};

/// How an entry matches case names.
#[derive(Clone, Debug)]
pub(super) enum Matcher {
    /// A plain name (escapes resolved).
    Exact(String),
    /// A compiled glob.
    Glob(GlobMatcher),
}

impl Matcher {
    pub(super) fn new(pattern: &str) -> Result<Matcher, globset::Error> {
        if let Some(name) = literal(pattern) {
            return Ok(Matcher::Exact(name));
        }
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()?;
        Ok(Matcher::Glob(glob.compile_matcher()))
    }

    pub(super) fn is_match(&self, name: &str) -> bool {
        match self {
            Matcher::Exact(n) => n == name,
            Matcher::Glob(g) => g.is_match(name),
        }
    }

    pub(super) fn is_exact(&self) -> bool {
        matches!(self, Matcher::Exact(_))
    }
}

/// The name a pattern matches when it matches exactly one: no glob syntax other than escapes
/// (`\*`) and one-character classes (`[*]`, as [`globset::escape`] writes them).
pub(super) fn literal(pattern: &str) -> Option<String> {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            '[' => {
                let inner = chars.next()?;
                if matches!(inner, '!' | '^' | '\\') || chars.next()? != ']' {
                    return None;
                }
                out.push(inner);
            }
            '*' | '?' | ']' | '{' | '}' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// A pattern that matches exactly `name`.
pub(super) fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '*' | '?' | '[' | ']' | '{' | '}' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_a_name_gives_an_exact_pattern_for_it() {
        for name in ["a/b", "a/x[1]", "w{1,2}", "q?*", "back\\slash", "]["] {
            let pattern = escape(name);
            assert_eq!(literal(&pattern).as_deref(), Some(name), "{pattern}");
            let glob = GlobBuilder::new(&pattern)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .unwrap()
                .compile_matcher();
            assert!(glob.is_match(name), "{pattern}");
        }
        assert_eq!(literal("a/*"), None);
        assert_eq!(literal("a/[ab]"), None);
        assert_eq!(literal("a/[!a]"), None);
    }
}
