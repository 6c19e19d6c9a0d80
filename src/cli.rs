//! Command-line arguments as parsed by clap, before validation (see [`crate::config`]).

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Conformance checker for ONNX's indexing operators.
///
/// Reads ONNX node-test directories (model.onnx plus test_data_set_N/input_K.pb and output_K.pb),
/// evaluates each model with onnx-idx-check's own reference kernels for the indexing operators
/// (Gather, Scatter, their Elements and ND forms and TensorScatter at every opset version,
/// OpenVINO's Gather-8, onnxruntime's backward ops; `onnx-idx-check ops` lists them), compares with
/// the expected outputs and reports passed / failed / errored / skipped for each case.
#[derive(Debug, Parser)]
#[command(
    name = "onnx-idx-check",
    version,
    about,
    long_about,
    max_term_width = 100
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Evaluate every case under PATH... and compare with the expected outputs.
    ///
    /// Exit status: 0 when no case failed or errored (skips allowed unless --deny-skip),
    /// 1 when any case failed or errored, 2 for a usage error, an unreadable path, no case found
    /// or a report that could not be written.
    Run(Box<RunArgs>),
    /// List the cases under PATH... with their operators, opsets and whether they are supported.
    List(ListArgs),
    /// Print the support matrix: every operator, domain, version, data type and reduction.
    Ops(OpsArgs),
    /// Time the evaluation of one case's first data set (test_data_set_0).
    ///
    /// Loading is excluded from the timing; allocating the outputs is included, since every
    /// kernel creates its output. Prints min / median / max over --iters runs after the warm-up
    /// (--warmup runs and --warmup-ms), and the bytes a kernel must move (data or updates read,
    /// indices read, output written).
    Bench(BenchArgs),
    /// Walk the pending snapshots written by `run --pending DIR` and accept (replace the expected
    /// output_K.pb), reject (delete the snapshot) or skip each.
    Review(ReviewArgs),
    /// Evaluate the cases under PATH... and show, per operator version, which traits the passing
    /// cases exercise and which none does: int32/int64 indices, negative indices, duplicates,
    /// rank-0 indices, zero-size dims, batch_dims > 0, each reduction or mode, each data type,
    /// raw and typed storage.
    Coverage(CoverageArgs),
    /// Print what a tensor file, a model or a case holds: a .pb file's name, dtype, shape,
    /// storage, sha256 and values; a model's header, graph inputs and outputs and nodes with their
    /// attributes; for a case directory, the model and then every test_data_set_N with its inputs
    /// (named by the graph inputs they bind to) and expected outputs.
    ///
    /// Large tensors are summarized (the first and last values along each long axis) unless
    /// --full. Exit status: 0 when everything was shown, 1 when a file of the case could not be
    /// read (it is shown with its error, and the rest still is), 2 when PATH itself cannot be
    /// used.
    Show(ShowArgs),
    /// Write a conformance suite for the indexing operators into OUTDIR, in ONNX's node-test
    /// layout: one small case per operator version, data type and trait (negative, boundary,
    /// duplicate, rank-0 and empty indices, ranks 1 to 4 with every axis, float specials, each
    /// reduction, raw and typed storage), and one per rule the spec requires an error for, with
    /// MANIFEST.json (the sha256 of every file) and expectations.toml (the errored cases).
    ///
    /// The same seed, profile, --ops and tool version write the same bytes. OUTDIR must be new,
    /// empty or a suite generate wrote; it is replaced whole. With --verify, check OUTDIR against
    /// its MANIFEST.json instead. Exit status: 0 written (or verified), 1 --verify found a
    /// missing, changed or unlisted file, 2 a usage error (bad OUTDIR, unknown operator).
    Generate(GenerateArgs),
    /// Shrink CASE, on which a runtime under test disagrees with onnx-idx-check's reference
    /// (fails, crashes, ...), to a smallest case on which it disagrees the same way (the same
    /// verdict, fault and diagnosis), and write it with REPORT.md, a bug report to paste upstream.
    ///
    /// Exit status: 0 a minimal case was written, 1 the runtime does not disagree on CASE
    /// (nothing to minimize), 2 a usage error (bad CASE, runtime or --out).
    Minimize(MinimizeArgs),
    /// Differential testing: run generated cases (every case of the full profile for the
    /// selected operators in a seeded order and in its variants, the operators in small graphs,
    /// then fresh random draws) through a runtime under test until --time is up, classify every
    /// disagreement (crash, wrong output, unsafe, nondeterministic, refuses valid, accepts
    /// invalid), minimize the first of each behaviour and write it to --out as one finding with
    /// findings.json; what the runtime does not implement is a table, not findings.
    ///
    /// Exit status: 0 the hunt ran (with findings or not), 2 a usage error.
    Hunt(HuntArgs),
    /// List the bundled runtime adapters (the Python scripts `--runtime NAME` runs) and the
    /// worker module they import; with --write DIR, write them into DIR, to read, adapt or run
    /// with --runtime-cmd (docs/runtime-protocol.md).
    ///
    /// An existing file in DIR is left as it is when it holds the same bytes, and refused
    /// otherwise (nothing is written then). Exit status: 0 listed or written, 2 a file in DIR
    /// differs or DIR cannot be written.
    Adapters(AdaptersArgs),
    /// Print the completion script of SHELL for onnx-idx-check (bash, zsh, fish, elvish,
    /// powershell), generated from the command line's own definition.
    Completions(CompletionsArgs),
    /// Print the manual page (roff) of onnx-idx-check; with --out DIR, write it and one page per
    /// subcommand (onnx-idx-check-run.1, ...) into DIR.
    Man(ManArgs),
}

/// Where cases are found and which of them are selected.
#[derive(Debug, Args)]
pub struct Selection {
    /// Case directories (containing model.onnx) or any directory above them.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Only cases whose name matches this regular expression (repeatable: any may match).
    #[arg(long, value_name = "RE")]
    pub filter: Vec<String>,
    /// Leave out cases whose name matches this regular expression (repeatable).
    #[arg(long, value_name = "RE")]
    pub exclude: Vec<String>,
    /// Only shard K of N (1 <= K <= N): a stable hash partition of the case names, for CI
    /// matrices. Every case lands in exactly one shard, whatever the machine or the run.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
}

/// Arguments of `run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub selection: Selection,
    /// Judge another runtime's outputs: DIR mirrors the case tree
    /// (DIR/<case path relative to PATH>/test_data_set_N/output_K.pb). Each is compared with the
    /// case's expected output where one exists (a disagreement between it and onnx-idx-check's own
    /// result errors the case: "reference disputes expected output"), otherwise with
    /// onnx-idx-check's result. Where the spec requires an error for the inputs, any output is
    /// failed. Repeatable as NAME=DIR, with --runtime and --runtime-cmd, to judge several
    /// runtimes side by side (a table of cases x runtimes).
    #[arg(long, value_name = "[NAME=]DIR")]
    pub actual: Vec<String>,
    /// Run a runtime under test on every data set and judge its outputs as --actual's: a
    /// bundled adapter (onnxruntime, openvino, tract, tvm, iree, tinygrad, onnxruntime-web,
    /// onnx-reference; options after a colon, onnxruntime:threads=2,providers=CPUExecutionProvider).
    /// The adapters are scripts inside this binary: Python run with $ONNX_IDX_CHECK_PYTHON, else
    /// python3, which needs the runtime's package (pip install onnxruntime); onnxruntime-web's is
    /// JavaScript run with $ONNX_IDX_CHECK_NODE, else node (`adapters` says what each needs). A
    /// refusal, a crash, a hang past --timeout and missing outputs are verdicts of their own.
    /// Repeatable: several runtimes are judged side by side, in a table of cases x runtimes, and
    /// the exit status gates on every one.
    #[arg(long, value_name = "NAME[:KEY=VALUE,...]", conflicts_with = "pending")]
    pub runtime: Vec<String>,
    /// Any other runtime under test: a command that speaks the protocol of
    /// docs/runtime-protocol.md (one JSON line per data set on its stdin, one reply on its
    /// stdout). Repeatable, as --runtime.
    #[arg(long, value_name = "'CMD ARGS'", conflicts_with = "pending")]
    pub runtime_cmd: Vec<String>,
    /// Run each data set N times in the runtime under test, alternating thread counts where its
    /// adapter can set them; outputs that differ between runs make the data set
    /// nondeterministic.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: usize,
    /// Cases the runtime under test runs side by side in one model at most: one load and
    /// compile for many. A case that does not pass there is judged again alone, so verdicts are
    /// those of cases run alone. 1 runs each case alone [default: 16 for the bundled runtimes
    /// that compile each model (tvm, iree, tinygrad), else 1].
    #[arg(long, value_name = "N")]
    pub batch: Option<usize>,
    /// Known failures: a TOML file of expected verdicts (see docs/guide/ci.md). A listed case that
    /// still fails the same way does not fail the run; one that now passes, fails differently or
    /// whose entry has expired does.
    #[arg(long, value_name = "FILE")]
    pub expectations: Option<PathBuf>,
    /// Rewrite the --expectations file to the current results (keeping the reasons and links of
    /// entries that remain; new entries get reason = "TODO").
    #[arg(long, requires = "expectations")]
    pub update_expectations: bool,
    /// Fail the run when an expectations entry matches no case (a warning otherwise).
    #[arg(long, requires = "expectations")]
    pub strict_expectations: bool,
    /// Write onnx-idx-check's result for every failed or missing expected output to DIR
    /// (DIR/<case>/<data set>/output_K.pb.new, with a readable .diff beside it), for `review`.
    #[arg(long, value_name = "DIR", conflicts_with = "actual")]
    pub pending: Option<PathBuf>,
    /// Report format. json and junit go to --output, or to stdout (the human summary then goes
    /// to stderr).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Write the report to FILE instead of stdout (the human progress still goes to stdout).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write a report in FORMAT (human, json, junit, markdown, html) to FILE, or to stdout for
    /// `-` (repeatable), beside the report of --format. At most one report may take stdout; the
    /// human output then shrinks to its summary on stderr.
    #[arg(long, value_name = "FORMAT=FILE")]
    pub report: Vec<String>,
    /// Fail the run when fewer than N cases ran (skipped cases do not count).
    #[arg(long, value_name = "N")]
    pub min_cases: Option<usize>,
    /// Fail the run when no case ran this operator (any version: ScatterElements) or this
    /// operator version (GatherND-12); outside the default domain, name the domain as the
    /// per-operator summary does (com.microsoft.GatherGrad-1). Repeatable.
    #[arg(long, value_name = "OP[-VERSION]")]
    pub require_op: Vec<String>,
    /// Relative tolerance for float outputs of arithmetic reductions: |actual - expected| <=
    /// atol + rtol * |expected|.
    #[arg(
        long,
        value_name = "F",
        default_value_t = 1e-3,
        allow_negative_numbers = true
    )]
    pub rtol: f64,
    /// Absolute tolerance for float outputs of arithmetic reductions.
    #[arg(
        long,
        value_name = "F",
        default_value_t = 1e-7,
        allow_negative_numbers = true
    )]
    pub atol: f64,
    /// Compare every float output bit for bit, reductions included (NaN still equals NaN).
    #[arg(long, conflicts_with = "tolerant")]
    pub exact: bool,
    /// Apply the tolerance to every float output, data movement included (the behaviour of
    /// ONNX's backend test runner).
    #[arg(long)]
    pub tolerant: bool,
    /// Cases evaluated in parallel [default: the number of cores]. At most 4 times the cores
    /// (but 16 at least and 1024 at most): more is a usage error.
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
    /// Stop starting new cases after the first failed or errored one.
    #[arg(long)]
    pub fail_fast: bool,
    /// Treat skipped cases as a failure of the run (exit status 1).
    #[arg(long)]
    pub deny_skip: bool,
    /// Largest tensor that may be loaded or created, in bytes (suffixes K, M, G, T or KiB, MiB, GiB, TiB).
    /// Larger declared tensors and outputs make the case errored before anything is allocated.
    #[arg(long, value_name = "N", default_value = "4GiB")]
    pub max_tensor_bytes: String,
    /// Seconds one case may run (fractions allowed; 0 for no limit). A case still running then
    /// is errored at its next node, data set or output, and the run goes on. With a runtime under
    /// test: the seconds it may take to answer one data set (its worker is then killed), times
    /// its input elements / 4 Mi when more.
    #[arg(long, value_name = "SECS", default_value = "60")]
    pub timeout: String,
    /// Run only the selected cases that failed the gate in the last run (failed, errored, passed
    /// unexpectedly, ...), as pytest's --lf; every case when none of them did.
    #[arg(long)]
    pub rerun_failed: bool,
    /// Where each run records the cases that failed, for --rerun-failed [default:
    /// $ONNX_IDX_CHECK_LAST_RUN, else .onnx-idx-check/last-run.json].
    #[arg(long, value_name = "FILE")]
    pub last_run: Option<PathBuf>,
    /// List the N slowest cases before the summary (0: every case, slowest first), as pytest's
    /// --durations.
    #[arg(long, value_name = "N")]
    pub durations: Option<usize>,
    /// When to colour the human output (NO_COLOR is honoured by auto).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// Arguments of `list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub selection: Selection,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Human)]
    pub format: ListFormat,
}

/// Arguments of `ops`.
#[derive(Debug, Args)]
pub struct OpsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Human)]
    pub format: ListFormat,
}

/// Arguments of `review`.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// The directory given to `run --pending`.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The case trees the snapshots belong to (the PATHs given to `run`).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Accept every snapshot without asking.
    #[arg(long, conflicts_with_all = ["reject_all", "list", "accept_new"])]
    pub accept_all: bool,
    /// Accept only the snapshots of outputs that have no expected file yet (new cases), and
    /// leave the others pending.
    #[arg(long, conflicts_with_all = ["reject_all", "list"])]
    pub accept_new: bool,
    /// Reject every snapshot without asking.
    #[arg(long, conflicts_with = "list")]
    pub reject_all: bool,
    /// List the snapshots and change nothing.
    #[arg(long)]
    pub list: bool,
    /// When to colour the output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// Arguments of `coverage`.
#[derive(Debug, Args)]
pub struct CoverageArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub selection: Selection,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Human)]
    pub format: ListFormat,
    /// Cases evaluated in parallel [default: the number of cores]. At most 4 times the cores
    /// (but 16 at least and 1024 at most): more is a usage error.
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
    /// Show every operator version onnx-idx-check knows, not only those the selected cases use.
    #[arg(long)]
    pub all: bool,
}

/// Arguments of `generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Where to write the suite (or, with --verify, the suite to check).
    #[arg(value_name = "OUTDIR")]
    pub outdir: PathBuf,
    /// How much to generate: quick is small cases for every CI run, full crosses them with every
    /// data type and index type, stress adds large ones.
    #[arg(long, value_enum, default_value_t = Profile::Quick)]
    pub profile: Profile,
    /// Seed of the random values (recorded in MANIFEST.json).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Only these operators (comma-separated or repeated), e.g. Gather,ScatterElements
    /// [default: every operator generate writes].
    #[arg(long, value_name = "OP", value_delimiter = ',')]
    pub ops: Vec<String>,
    /// Check OUTDIR against its MANIFEST.json instead of writing: every listed file present with
    /// its sha256, and no other file.
    #[arg(long, conflicts_with_all = ["profile", "seed", "ops", "max_tensor_bytes", "format"])]
    pub verify: bool,
    /// Leave out every case with a tensor (input or expected output) larger than this, in bytes
    /// (suffixes as for `run`): bounds the stress profile's large cases.
    #[arg(long, value_name = "N", default_value = "4GiB")]
    pub max_tensor_bytes: String,
    /// The model format of the cases: onnx (model.onnx), or ir (OpenVINO IR v11, model.xml), which
    /// writes the OpenVINO dialect's operators only.
    #[arg(long, value_enum, default_value_t = ModelFormat::Onnx)]
    pub format: ModelFormat,
}

/// `generate --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModelFormat {
    /// ONNX: `model.onnx`.
    Onnx,
    /// OpenVINO IR v11: `model.xml` (+ `model.bin`).
    Ir,
}

/// `generate --profile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Profile {
    /// Small cases, one per operator version, data type and trait (about 1,900).
    Quick,
    /// Every small case on every data type crossed with every index type; a superset of quick.
    Full,
    /// The quick cases and large ones for the latest version of each operator: axes longer than
    /// 65,536 and 2^24, two million indices, ranks 8 and 10 (about 1 GB).
    Stress,
}

/// Arguments of `bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The case directory (containing model.onnx and test_data_set_0/).
    #[arg(value_name = "CASE_DIR")]
    pub case: PathBuf,
    /// Timed evaluations.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub iters: u32,
    /// Untimed evaluations first: at least this many, and at least --warmup-ms of them.
    #[arg(long, default_value_t = 2)]
    pub warmup: u32,
    /// Keep warming up until this many milliseconds have passed (after --warmup runs). A fresh
    /// process can run its first tens of milliseconds of a memory-bound kernel far slower than
    /// the rest; peers timed inside a long-lived process never pay that. 0 turns it off.
    #[arg(long, value_name = "MS", default_value_t = 200)]
    pub warmup_ms: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Human)]
    pub format: ListFormat,
    /// Largest tensor that may be loaded or created, in bytes (suffixes as for `run`).
    #[arg(long, value_name = "N", default_value = "4GiB")]
    pub max_tensor_bytes: String,
}

/// Arguments of `show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A tensor file (.pb), a model (.onnx) or a case directory (containing model.onnx).
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Human)]
    pub format: ListFormat,
    /// Show every value of every tensor (by default tensors of more than 1000 values are
    /// summarized, and long strings and attribute lists are cut).
    #[arg(long)]
    pub full: bool,
    /// Largest tensor that may be loaded, in bytes (suffixes as for `run`).
    #[arg(long, value_name = "N", default_value = "4GiB")]
    pub max_tensor_bytes: String,
}

/// Report formats of `run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One line per case, failure details and a summary.
    Human,
    /// One JSON document (schema_version 1, documented in docs/report-schema.md).
    Json,
    /// JUnit XML, one test case per case.
    Junit,
    /// GitHub-flavoured Markdown for a job summary ($GITHUB_STEP_SUMMARY).
    Markdown,
    /// A self-contained HTML scoreboard: operator versions and traits x runtimes, each case a
    /// click away (docs/guide/run.md).
    Html,
}

/// Formats of `list`, `ops`, `bench`, `coverage` and `show`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// A table for people.
    Human,
    /// JSON.
    Json,
}

/// Colour choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Arguments of `minimize`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("runtime_under_test").required(true).args(["runtime", "runtime_cmd"])))]
pub struct MinimizeArgs {
    /// The case directory (containing model.onnx) the runtime disagrees on.
    #[arg(value_name = "CASE")]
    pub case: PathBuf,
    /// The runtime under test: a bundled adapter, as for `run --runtime`.
    #[arg(long, value_name = "NAME[:KEY=VALUE,...]")]
    pub runtime: Option<String>,
    /// Any other runtime under test: a command speaking docs/runtime-protocol.md, as for `run
    /// --runtime-cmd`.
    #[arg(long, value_name = "'CMD ARGS'", conflicts_with = "runtime")]
    pub runtime_cmd: Option<String>,
    /// Where to write the minimal case and REPORT.md [default: minimized/<case name>]. An
    /// existing directory must be empty or a previous minimization holding only what its
    /// .onnx-idx-check-out.json lists; only those files are replaced.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seconds the runtime may take for one data set (0 for no limit), times its input
    /// elements / 4 Mi when more.
    #[arg(long, value_name = "SECS", default_value = "60")]
    pub timeout: String,
    /// Run each data set N times in the runtime (nondeterminism is a disagreement to keep).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub repeat: u64,
    /// Candidates the runtime judges at most before the smallest found so far is written.
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub max_steps: usize,
}

/// Arguments of `hunt`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("runtime_under_test").required(true).args(["runtime", "runtime_cmd"])))]
pub struct HuntArgs {
    /// The runtime under test: a bundled adapter, as for `run --runtime`.
    #[arg(long, value_name = "NAME[:KEY=VALUE,...]")]
    pub runtime: Option<String>,
    /// Any other runtime under test: a command speaking docs/runtime-protocol.md.
    #[arg(long, value_name = "'CMD ARGS'", conflicts_with = "runtime")]
    pub runtime_cmd: Option<String>,
    /// Where to write the findings (one directory each) and findings.json. An existing
    /// directory must be empty or a previous hunt's holding only what its
    /// .onnx-idx-check-out.json lists; only those files are replaced.
    #[arg(long, value_name = "DIR", required = true)]
    pub out: PathBuf,
    /// Seconds to hunt for (fractions allowed).
    #[arg(long, value_name = "SECS", default_value = "600")]
    pub time: String,
    /// Seed of the case order and of the random variants: the same seed tries the same cases
    /// in the same order.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Only these operators (comma-separated or repeated), as for `generate --ops`.
    #[arg(long, value_name = "OP", value_delimiter = ',')]
    pub ops: Vec<String>,
    /// Only shard K of N (1 <= K <= N): the case numbered i (in the seeded order) belongs to
    /// shard i mod N + 1, so N machines hunt without overlap and their findings.json merge.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Run each data set N times in the runtime (outputs that differ are a finding).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub repeat: u64,
    /// Seconds the runtime may take for one data set (0 for no limit), times its input elements
    /// / 4 Mi when more: shorter than `run`'s 60, as a hunt's cases are small and a runtime that
    /// hangs on one should cost seconds.
    #[arg(long, value_name = "SECS", default_value = "20")]
    pub timeout: String,
    /// Try only the cases numbered below N in the seeded order (counted before sharding), even
    /// with time left: a fixed list of cases, for comparing shards.
    #[arg(long, value_name = "N")]
    pub max_cases: Option<u64>,
    /// Candidates the runtime judges at most while minimizing one finding.
    #[arg(long, value_name = "N", default_value_t = 300)]
    pub max_steps: usize,
    /// Valid cases run side by side in one model at most, for a runtime whose hello says it
    /// runs independent subgraphs as each alone (the bundled adapters do): one load and compile
    /// for many cases. A case that disagrees there is judged again alone. 1 turns batches off
    /// [default: 16 for such a runtime, else 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub batch: Option<u64>,
    /// Also write the hunt's scoreboard, a self-contained HTML page, to FILE (html=FILE): the
    /// findings by severity, each linking to its REPORT.md, and the grid of the cases tried.
    #[arg(long, value_name = "html=FILE")]
    pub report: Vec<String>,
}

/// Arguments of `adapters`.
#[derive(Debug, Args)]
pub struct AdaptersArgs {
    /// Write the adapters and their worker module into DIR (made if missing).
    #[arg(long, value_name = "DIR")]
    pub write: Option<PathBuf>,
}

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// Arguments of `man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write onnx-idx-check.1 and a page per subcommand into DIR (made if missing) instead of
    /// printing the main page.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}
