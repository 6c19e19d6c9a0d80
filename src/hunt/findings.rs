//! A hunt's findings: one per bug, which is one [`Behaviour`] of the runtime (its class,
//! diagnosis and symptom) on one operator (in one context graph, for a case in context), whatever
//! the versions, data types and variants it was seen on; on any operator for a behaviour that
//! shows one cause wherever it shows ([`Behaviour::any_operator`]: a panic site, a data type's
//! precision lost); and `findings.json`, the list of them. Hunts on several machines (`--shard`) write
//! lists of the same shape, merged by the same key.

use crate::generate::cases::context::ContextKind;
use crate::generate::cases::CaseSpec;
use crate::minimize::behaviour::{Behaviour, Class};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// The file listing a hunt's findings.
pub(crate) const FILE: &str = "findings.json";

/// The file listing every case a hunt tried, in order.
pub(crate) const TRIED_FILE: &str = "tried.tsv";

/// What makes two disagreements one finding: the operator, the context graph it is in, and the
/// behaviour, an output on invalid input counting as one behaviour whether or not it was found
/// unsafe. A behaviour of any operator is keyed without the operator and the context.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key {
    /// `None` for a behaviour of any operator.
    op: Option<String>,
    /// The context graph (`shape-chain`), `None` for the node alone or a behaviour of any
    /// operator.
    context: Option<String>,
    invalid_output: bool,
    class: Option<Class>,
    diagnosis: &'static str,
    symptom: String,
}

impl Key {
    /// The key of behaviour `b` of operator `op`, alone (`context` `None`) or in the context
    /// graph `context` (`shape-chain`).
    pub(crate) fn new(op: &str, context: Option<&str>, b: &Behaviour) -> Key {
        let invalid_output = matches!(b.class, Class::Unsafe | Class::AcceptsInvalid);
        // A panic site or a data type's precision is the cause wherever it shows; anything
        // else is the operator's, and a bug that shows only in a context graph is not the one
        // the operator alone shows with the same symptom.
        let anywhere = b.any_operator();
        // A refusal that names the operator whose code refused is that operator's, whichever
        // case showed it (tract runs Scatter as ScatterElements and says so).
        let bare = op.rsplit('.').next().unwrap_or(op);
        let op = match b.class {
            Class::RefusesValid => named_op(&b.symptom)
                .filter(|named| !named.eq_ignore_ascii_case(bare))
                .unwrap_or(op),
            _ => op,
        };
        Key {
            op: (!anywhere).then(|| op.to_string()),
            // A refusal's message says where the runtime gave up: the same words alone and in
            // a context graph are one bug (tinygrad's constant-indices Gather, alone and after
            // a Transpose).
            context: context
                .filter(|_| !anywhere && b.class != Class::RefusesValid)
                .map(str::to_string),
            invalid_output,
            class: (!invalid_output).then_some(b.class),
            // Where the spec requires an error the rule broken is the bug; the class that
            // happens to reproduce the output is not (it says whether values were made up,
            // which the finding's class tells).
            diagnosis: if invalid_output { "" } else { b.diagnosis },
            // A node computed as another operator is one bug whatever shape or values show it.
            symptom: if !invalid_output && whole_operator(b.diagnosis) {
                String::new()
            } else {
                b.symptom.clone()
            },
        }
    }
}

/// Whether the bug class with this id is the cause of every wrong output of its node.
pub(crate) fn whole_operator(diagnosis: &str) -> bool {
    onnx_idx_check::verdict::BugClass::from_id(diagnosis).is_some_and(|c| c.whole_operator())
}

/// The one indexing operator a runtime's message names as a word of its own, in any case
/// (`ScatterNd` is ScatterND): `None` when it names none or several.
fn named_op(message: &str) -> Option<&'static str> {
    // A path (`gather_elements_shape_inference.hpp`) is one word, naming no operator.
    let words: BTreeSet<String> = message
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.')))
        .map(|w| w.trim_end_matches('.'))
        .map(str::to_ascii_lowercase)
        .collect();
    let mut named = onnx_idx_check::ops::REGISTRY
        .iter()
        .filter(|d| !d.plumbing && !d.context)
        .map(|d| d.op_type)
        .filter(|t| words.contains(&t.to_ascii_lowercase()));
    let first = named.next()?;
    named.all(|t| t == first).then_some(first)
}

/// One finding.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Finding {
    /// What it means for the runtime's users.
    pub class: Class,
    /// The runtime's name.
    pub runtime: String,
    /// Its version.
    pub runtime_version: String,
    /// The operator (`Gather`, `org.openvinotoolkit.Gather`).
    pub op: String,
    /// The operator versions it was seen on (their `since`), of any of its operators.
    pub versions: BTreeSet<i64>,
    /// Every operator version it was seen on (`Gather-11`): more than one operator for a
    /// behaviour of any operator (a panic site, a data type's precision).
    #[serde(default)]
    pub operators: BTreeSet<String>,
    /// The context graph its case puts the operator in (`shape-chain`), `None` for the node
    /// alone.
    #[serde(default)]
    pub context: Option<String>,
    /// The value data types it was seen on.
    pub dtypes: BTreeSet<String>,
    /// The ids of the variants of the minimal case that show it (`input-static`, ...).
    pub variants_failing: Vec<String>,
    /// The ids of those that do not.
    pub variants_passing: Vec<String>,
    /// The ids of the runtime's modes the minimal case shows it in (`optimization=disabled`);
    /// empty for a runtime of one mode.
    #[serde(default)]
    pub modes_failing: Vec<String>,
    /// The ids of those it does not show it in.
    #[serde(default)]
    pub modes_passing: Vec<String>,
    /// The first bug class that reproduces the wrong output, `none` for none.
    pub diagnosis: String,
    /// What the disagreement looks like, sizes and values blanked (a crash's site, a refusal's
    /// message, where a wrong output differs).
    pub symptom: String,
    /// For an output where an error is required: the rule the inputs break, in the reference's
    /// words.
    pub rule: Option<String>,
    /// The disagreements seen with this behaviour.
    pub seen: u64,
    /// The finding's directory under the hunt's output.
    pub case: String,
    /// The generated case it was minimized from.
    pub original: String,
    /// The generator's seed for that case (`generate --seed` with `--profile full` writes it).
    pub seed: u64,
    /// Input elements of the original case.
    pub original_size: usize,
    /// Input elements of the minimal case.
    pub minimal_size: usize,
    /// Whether the case was shrunk (a case of several nodes is written as found).
    pub minimized: bool,
    /// Why the minimal case did not pass, as the runner says.
    pub reason: String,
}

impl Finding {
    /// Adds a sighting on operator `op` at version `since` with data type `dtype`; whether that
    /// listed an operator version or data type the finding did not list yet.
    pub(crate) fn saw(&mut self, op: &str, since: i64, dtype: &str) -> bool {
        self.seen += 1;
        let new_version = self.versions.insert(since);
        let new_op = self.operators.insert(format!("{op}-{since}"));
        let new_dtype = self.dtypes.insert(dtype.to_string());
        new_version || new_op || new_dtype
    }

    /// The operator versions it was seen on, each operator once with its versions in order:
    /// `Gather-1/11, GatherND-12`.
    pub(crate) fn operators_text(&self) -> String {
        let mut by_op: Vec<(&str, Vec<i64>)> = Vec::new();
        for o in &self.operators {
            let Some((op, v)) = o.rsplit_once('-') else {
                continue;
            };
            let v = v.parse().unwrap_or_default();
            match by_op.iter_mut().find(|(name, _)| *name == op) {
                Some((_, vs)) => vs.push(v),
                None => by_op.push((op, vec![v])),
            }
        }
        if by_op.is_empty() {
            by_op.push((&self.op, self.versions.iter().copied().collect()));
        }
        by_op
            .into_iter()
            .map(|(op, mut vs)| {
                vs.sort_unstable();
                let vs: Vec<String> = vs.iter().map(i64::to_string).collect();
                format!("{op}-{}", vs.join("/"))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The line of `REPORT.md` that lists where the finding was seen (kept up to date as the
    /// hunt sees it again): `Seen on: Gather-1/11, GatherND-12; data types: double, float.`
    pub(crate) fn seen_on_line(&self) -> String {
        let dtypes: Vec<&str> = self.dtypes.iter().map(String::as_str).collect();
        format!(
            "{SEEN_ON}{}; data types: {}.",
            self.operators_text(),
            dtypes.join(", ")
        )
    }
}

/// How the line of `REPORT.md` that lists where a finding was seen starts.
pub(crate) const SEEN_ON: &str = "Seen on: ";

/// The slug of the context graph a case puts its operator in (`shape-chain`), `None` for a
/// case of the node alone.
pub(crate) fn context_of(spec: &CaseSpec) -> Option<String> {
    spec.context
        .as_ref()
        .map(|c| c.kind.slug().replace('_', "-"))
}

/// A context graph in words, for a report: `the shape chain (Shape -> Gather -> Unsqueeze ->
/// Concat -> Reshape)`.
pub(crate) fn context_words(kind: ContextKind) -> &'static str {
    match kind {
        ContextKind::ShapeChain => {
            "the shape chain (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as `x.view(x.size(0), -1)` exports)"
        }
        ContextKind::AfterTranspose => "a gather on a Transpose's output",
        ContextKind::Embedding => {
            "an embedding lookup (a Gather on weights that are an initializer)"
        }
        ContextKind::SharedIndices => "two indexing nodes sharing one indices input",
        ContextKind::UpdateChain => {
            "an update chain (a scatter writing into another scatter's output)"
        }
    }
}

/// The directory name of a finding, in characters every file system takes:
/// `crash-gathernd-13-float`.
pub(crate) fn dir_name(class: Class, op: &str, version: i64, dtype: &str) -> String {
    let raw = format!("{}-{op}-{version}-{dtype}", class.id());
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// `name`, or when `out` already holds a directory of that name (two refusals with different
/// errors share a name) `name-2`, `name-3`, ...
pub(crate) fn unused_dir_name(out: &Path, name: &str) -> String {
    (1..)
        .map(|k| {
            if k == 1 {
                name.to_string()
            } else {
                format!("{name}-{k}")
            }
        })
        .find(|n| !out.join(n).exists())
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_names_keep_the_key_readable() {
        assert_eq!(
            dir_name(Class::WrongOutput, "org.openvinotoolkit.Gather", 8, "float"),
            "wrong-output-org_openvinotoolkit_gather-8-float"
        );
    }

    #[test]
    fn a_node_computed_as_another_operator_is_one_finding_whatever_it_shows() {
        let b = |diagnosis, symptom: &str| Behaviour {
            class: Class::WrongOutput,
            diagnosis,
            symptom: symptom.to_string(),
        };
        let op = "org.openvinotoolkit.Gather";
        assert_eq!(
            Key::new(op, None, &b("domain-ignored", "shape")),
            Key::new(op, None, &b("domain-ignored", "rank 6 for 4"))
        );
        assert_eq!(
            Key::new(op, None, &b("domain-ignored", "shape")),
            Key::new(op, None, &b("domain-ignored", "values: zero"))
        );
        // Other classes keep their symptoms apart.
        assert_ne!(
            Key::new(op, None, &b("axis-ignored", "shape")),
            Key::new(op, None, &b("axis-ignored", "values: zero"))
        );
    }

    #[test]
    fn one_key_for_an_output_on_invalid_input_found_unsafe_or_not() {
        let b = |class, symptom: &str| Behaviour {
            class,
            diagnosis: "none",
            symptom: symptom.to_string(),
        };
        let rule = "index # out of range";
        assert_eq!(
            Key::new("Gather", None, &b(Class::Unsafe, rule)),
            Key::new("Gather", None, &b(Class::AcceptsInvalid, rule))
        );
        assert_ne!(
            Key::new("Gather", None, &b(Class::AcceptsInvalid, rule)),
            Key::new("GatherND", None, &b(Class::AcceptsInvalid, rule))
        );
        assert_ne!(
            Key::new("Gather", None, &b(Class::WrongOutput, "values: empty")),
            Key::new("Gather", None, &b(Class::WrongOutput, "values: zero"))
        );
    }

    #[test]
    fn a_refusal_naming_the_operator_that_refused_is_that_operators() {
        let refused = |symptom: &str| Behaviour {
            class: Class::RefusesValid,
            diagnosis: "none",
            symptom: crate::minimize::behaviour::blank_signed(symptom),
        };
        // tract 0.23.9 runs Scatter-9 as ScatterElements, and says so.
        let tract = |case: &str| {
            refused(&format!(
                "TractError: Failed analyse for node #3 \"{case}\" ScatterElements Caused by: 0: \
                 Infering facts 1: Applying rule inputs[1].shape == inputs[2].shape"
            ))
        };
        assert_eq!(
            Key::new("Scatter", None, &tract("test_scatter_9_float")),
            Key::new(
                "ScatterElements",
                None,
                &tract("test_scatter_elements_13_int16")
            )
        );
        // tract names ScatterND `ScatterNd`.
        let nd =
            refused("TractError: Evaluating #4 \"x\" ScatterNd Caused by: index 3 out of bounds");
        assert_eq!(
            Key::new("ScatterND", None, &nd),
            Key::new("ScatterND", None, &nd)
        );
        assert_eq!(named_op(&nd.symptom), Some("ScatterND"));
        // A message naming no operator, or two, stays with the case's operator; and a dialect's
        // operator named by its bare type is its own.
        let plain = refused("IndexError: index 22 is out of bounds for axis 0 with size 2");
        assert_ne!(
            Key::new("Gather", None, &plain),
            Key::new("GatherElements", None, &plain)
        );
        let two = refused("Gather and GatherElements disagree");
        assert_ne!(
            Key::new("Gather", None, &two),
            Key::new("GatherND", None, &two)
        );
        let gather = refused("Node type Gather is not supported");
        assert_ne!(
            Key::new("org.openvinotoolkit.Gather", None, &gather),
            Key::new("Gather", None, &gather)
        );
        assert_eq!(
            Key::new("GatherND", None, &gather),
            Key::new("Gather", None, &gather)
        );
    }

    #[test]
    fn a_refusal_is_one_bug_in_any_context_and_a_failed_compiler_on_any_operator() {
        let refused = |symptom: &str| Behaviour {
            class: Class::RefusesValid,
            diagnosis: "none",
            symptom: crate::minimize::behaviour::blank_signed(symptom),
        };
        // tinygrad 0.14.0's Gather with constant rank-2 indices, alone and after a Transpose.
        let constant =
            refused("TypeError: '<' not supported between instances of 'list' and 'int'");
        assert_eq!(
            Key::new("Gather", None, &constant),
            Key::new("Gather", Some("after-transpose"), &constant)
        );
        // Its clang failing on the C it wrote for bfloat16, from ScatterND and ScatterElements.
        let clang = refused(
            "CalledProcessError: Command '['clang', '-c', '-x', 'c', '-O2', '-march=native']' \
             returned non-zero exit status 1.",
        );
        assert_eq!(
            Key::new("ScatterND", None, &clang),
            Key::new("ScatterElements", Some("shape-chain"), &clang)
        );
        // TVM's internal check on zero-size data, from ScatterElements and ScatterND.
        let check =
            refused("InternalError: Check failed: pb->value != 0 (0 vs. 0) : Divide by zero");
        assert_eq!(
            Key::new("ScatterElements", None, &check),
            Key::new("ScatterND", None, &check)
        );
        // Another refusal stays with its operator; a wrong output keeps its context.
        let index = refused("IndexError: tuple index out of range");
        assert_ne!(
            Key::new("ScatterND", None, &index),
            Key::new("ScatterElements", None, &index)
        );
        let wrong = Behaviour {
            class: Class::WrongOutput,
            diagnosis: "none",
            symptom: "values: empty".to_string(),
        };
        assert_ne!(
            Key::new("GatherND", None, &wrong),
            Key::new("GatherND", Some("after-transpose"), &wrong)
        );
    }

    /// The behaviour of a hand-made result, the data input `data` (if any) known.
    fn of(
        r: &onnx_idx_check::verdict::CaseResult,
        data: Option<onnx_idx_check::tensor::Tensor>,
    ) -> Behaviour {
        crate::minimize::behaviour::behaviour(r, None, || data)
            .unwrap()
            .1
    }

    #[test]
    fn one_key_for_one_cause_across_operators_and_contexts() {
        use crate::minimize::behaviour::made::{crashed, ndarray_panic, wrong};
        use onnx_idx_check::tensor::DType;
        // tract: ScatterElements, Scatter and GatherElements die at ndarray's index check.
        let panic = |t| of(&crashed(&ndarray_panic(t)), None);
        let k = Key::new("ScatterElements", None, &panic(1));
        assert_eq!(k, Key::new("Scatter", None, &panic(2)));
        assert_eq!(
            k,
            Key::new("GatherElements", Some("after-transpose"), &panic(3))
        );
        // OpenVINO: Gather, GatherND, Scatter and ScatterElements compute double as float.
        let rounded = Key::new(
            "Gather",
            None,
            &of(&wrong(DType::Double, &[], &[(0, "5e-324", "0.0")]), None),
        );
        for (op, r) in [
            (
                "GatherND",
                wrong(DType::Double, &[1], &[(0, "5e-324", "0.0")]),
            ),
            (
                "Scatter",
                wrong(DType::Double, &[1], &[(0, "5e-324", "0.0")]),
            ),
            (
                "Gather",
                wrong(DType::Double, &[], &[(0, "inf", "3.4028234663852886e38")]),
            ),
        ] {
            assert_eq!(Key::new(op, None, &of(&r, None)), rounded, "{op}");
        }
        // ... and ScatterND with k = 0 returns its data, whatever the data type.
        let int8 = of(
            &wrong(DType::Int8, &[1], &[(0, "102", "1")]),
            onnx_idx_check::tensor::Tensor::from_vec(vec![1], vec![1i8]).ok(),
        );
        let bool_ = of(
            &wrong(DType::Bool, &[1], &[(0, "true", "false")]),
            onnx_idx_check::tensor::Tensor::from_vec(vec![1], vec![false]).ok(),
        );
        assert_eq!(
            Key::new("ScatterND", None, &int8),
            Key::new("ScatterND", None, &bool_)
        );
    }

    #[test]
    fn two_bugs_of_one_operator_or_of_two_operators_stay_apart() {
        use crate::minimize::behaviour::made::{crashed, wrong};
        use onnx_idx_check::tensor::DType;
        let site = |line| {
            of(
                &crashed(&format!(
                    "thread '<unnamed>' (7) panicked at core/src/ops/array/gather_nd.rs:{line}:9: | boom"
                )),
                None,
            )
        };
        assert_ne!(
            Key::new("GatherND", None, &site(72)),
            Key::new("GatherND", None, &site(28))
        );
        // A signal, or a wrong value of no data-type-wide kind, is the operator's.
        let segv = of(&crashed("killed by signal 11 (SIGSEGV)"), None);
        assert_ne!(
            Key::new("Gather", None, &segv),
            Key::new("GatherND", None, &segv)
        );
        let other = of(&wrong(DType::Float, &[2], &[(1, "1.5", "-3.0")]), None);
        assert_ne!(
            Key::new("Gather", None, &other),
            Key::new("GatherElements", None, &other)
        );
        // The same symptom inside a context graph is another bug than the node's alone.
        assert_ne!(
            Key::new("Gather", None, &other),
            Key::new("Gather", Some("shape-chain"), &other)
        );
        // The data unchanged on two operators is two bugs.
        let data = onnx_idx_check::tensor::Tensor::from_vec(vec![1], vec![1i8]).ok();
        let same = of(&wrong(DType::Int8, &[1], &[(0, "102", "1")]), data);
        assert_ne!(
            Key::new("ScatterND", None, &same),
            Key::new("ScatterElements", None, &same)
        );
    }

    #[test]
    fn a_finding_lists_every_operator_version_it_was_seen_on() {
        let mut f = Finding {
            class: Class::WrongOutput,
            runtime: "openvino".into(),
            runtime_version: "2026.4.1".into(),
            op: "Gather".into(),
            versions: BTreeSet::from([11]),
            operators: BTreeSet::from(["Gather-11".to_string()]),
            context: None,
            dtypes: BTreeSet::from(["double".to_string()]),
            variants_failing: Vec::new(),
            variants_passing: Vec::new(),
            modes_failing: Vec::new(),
            modes_passing: Vec::new(),
            diagnosis: "none".into(),
            symptom: "precision: double rounded to float".into(),
            rule: None,
            seen: 1,
            case: "wrong-output-gather-11-double".into(),
            original: "x".into(),
            seed: 0,
            original_size: 1,
            minimal_size: 1,
            minimized: true,
            reason: String::new(),
        };
        assert!(f.saw("GatherND", 12, "double"));
        assert!(f.saw("Gather", 1, "double"));
        assert!(f.saw("Scatter", 9, "float"));
        assert!(!f.saw("Gather", 1, "double"), "nothing new");
        assert_eq!(f.seen, 5);
        assert_eq!(f.operators_text(), "Gather-1/11, GatherND-12, Scatter-9");
        assert_eq!(f.versions, BTreeSet::from([1, 9, 11, 12]));
        assert_eq!(
            f.seen_on_line(),
            "Seen on: Gather-1/11, GatherND-12, Scatter-9; data types: double, float."
        );
        // A list written before operators were listed still reads, by its op and versions.
        let json = serde_json::to_value(&f).unwrap();
        let mut old = json.as_object().unwrap().clone();
        old.remove("operators");
        old.remove("context");
        let back: Finding = serde_json::from_value(old.into()).unwrap();
        assert_eq!(back.operators_text(), "Gather-1/9/11/12");
    }

    #[test]
    fn a_taken_directory_name_gets_a_number() {
        let out = tempfile::tempdir().unwrap();
        let name = "gather-13-float-refused-none";
        assert_eq!(unused_dir_name(out.path(), name), name);
        std::fs::create_dir(out.path().join(name)).unwrap();
        assert_eq!(unused_dir_name(out.path(), name), format!("{name}-2"));
        std::fs::create_dir(out.path().join(format!("{name}-2"))).unwrap();
        assert_eq!(unused_dir_name(out.path(), name), format!("{name}-3"));
    }
}
