//! The reproducer of a minimized case in the runtime's own Python API: the model built with
//! `onnx.helper`, the inputs as literal numpy arrays, the expected output, and the call that
//! runs it (onnxruntime's `InferenceSession`, OpenVINO's `Core().compile_model`, `tract.onnx()`,
//! `onnx.reference.ReferenceEvaluator`).

use super::subject::{Reference, Subject};
use onnx_idx_check::tensor::value::{scalar, Scalar};
use onnx_idx_check::tensor::{DType, Tensor};

/// Tensors larger than this are read from the case's `.pb` files instead of written out.
pub(crate) const LITERAL_LIMIT: usize = 1000;

/// The numpy dtype of `d`, or `None` for a type numpy lacks (bfloat16, float8, sub-byte).
fn numpy_dtype(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::Float => "np.float32",
        DType::Double => "np.float64",
        DType::Float16 => "np.float16",
        DType::Int8 => "np.int8",
        DType::Uint8 => "np.uint8",
        DType::Int16 => "np.int16",
        DType::Uint16 => "np.uint16",
        DType::Int32 => "np.int32",
        DType::Uint32 => "np.uint32",
        DType::Int64 => "np.int64",
        DType::Uint64 => "np.uint64",
        DType::Bool => "np.bool_",
        DType::Complex64 => "np.complex64",
        DType::Complex128 => "np.complex128",
        DType::String => "object",
        _ => return None,
    })
}

/// A float as Python reads it back exactly.
fn float(v: f64, single: bool) -> String {
    if v.is_nan() {
        "np.nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "np.inf" } else { "-np.inf" }.into()
    } else if single {
        format!("{:?}", v as f32)
    } else {
        format!("{v:?}")
    }
}

/// A Python `str` literal (or `bytes` when not UTF-8).
pub(crate) fn py_str(b: &[u8]) -> String {
    let Ok(s) = std::str::from_utf8(b) else {
        let mut out = String::from("b\"");
        for &c in b {
            match c {
                b'"' | b'\\' => out.push_str(&format!("\\{}", c as char)),
                0x20..=0x7e => out.push(c as char),
                _ => out.push_str(&format!("\\x{c:02x}")),
            }
        }
        out.push('"');
        return out;
    };
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Element `i` of `t` as a Python literal.
fn element(t: &Tensor, i: usize) -> String {
    let single = matches!(t.dtype(), DType::Float | DType::Float16 | DType::Complex64);
    match scalar(t, i) {
        Some(Scalar::Real { value, .. }) => float(value, single),
        Some(Scalar::Complex { re, im, .. }) => {
            format!("complex({}, {})", float(re, single), float(im, single))
        }
        Some(Scalar::Int(v)) => v.to_string(),
        Some(Scalar::Bool(b)) => if b { "True" } else { "False" }.into(),
        Some(Scalar::Bytes(b)) => py_str(b),
        None => "None".into(),
    }
}

/// `t` as a numpy expression, `None` when numpy lacks its type or it is too large to write out.
pub(crate) fn array(t: &Tensor) -> Option<String> {
    let dtype = numpy_dtype(t.dtype())?;
    if t.numel() > LITERAL_LIMIT {
        return None;
    }
    let values: Vec<String> = (0..t.numel()).map(|i| element(t, i)).collect();
    Some(format!(
        "np.array([{}], dtype={dtype}).reshape({:?})",
        values.join(", "),
        t.shape()
    ))
}

/// The runtimes whose API the reproducer can call, by the name their worker gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Api {
    /// `onnxruntime.InferenceSession`.
    OnnxRuntime,
    /// `openvino.Core().compile_model`.
    OpenVino,
    /// `tract.onnx()`.
    Tract,
    /// `onnx.reference.ReferenceEvaluator`.
    Reference,
    /// TVM's Relax frontend (`tvm.relax.frontend.onnx.from_onnx`, `tvm.compile`, its VM).
    Tvm,
    /// IREE's ONNX importer, `iree.compiler.compile_str` and `iree.runtime`.
    Iree,
    /// tinygrad's `OnnxRunner`.
    Tinygrad,
}

impl Api {
    /// The runtime's name as its users write it.
    pub(crate) fn runtime(self) -> &'static str {
        match self {
            Api::OnnxRuntime => "onnxruntime",
            Api::OpenVino => "OpenVINO",
            Api::Tract => "tract",
            Api::Reference => "the ONNX reference evaluator",
            Api::Tvm => "TVM",
            Api::Iree => "IREE",
            Api::Tinygrad => "tinygrad",
        }
    }

    /// The call that runs a model.
    pub(crate) fn call(self) -> &'static str {
        match self {
            Api::OnnxRuntime => "onnxruntime.InferenceSession",
            Api::OpenVino => "openvino.Core().compile_model",
            Api::Tract => "tract.onnx()",
            Api::Reference => "onnx.reference.ReferenceEvaluator",
            Api::Tvm => "tvm.relax.frontend.onnx.from_onnx",
            Api::Iree => "iree.compiler.compile_str",
            Api::Tinygrad => "tinygrad.nn.onnx.OnnxRunner",
        }
    }

    /// The API of a bundled adapter (`--runtime` spec, options after a colon ignored).
    pub(crate) fn of_bundled(spec: &str) -> Option<Api> {
        let name = spec.split(':').next().unwrap_or(spec);
        match onnx_idx_check::runtime::RuntimeSpec::bundled(name).ok()? {
            onnx_idx_check::runtime::RuntimeSpec::Bundled { adapter, .. } => match adapter.name {
                "onnxruntime" => Some(Api::OnnxRuntime),
                "openvino" => Some(Api::OpenVino),
                "tract" => Some(Api::Tract),
                "onnx-reference" => Some(Api::Reference),
                "tvm" => Some(Api::Tvm),
                "iree" => Some(Api::Iree),
                "tinygrad" => Some(Api::Tinygrad),
                _ => None,
            },
            onnx_idx_check::runtime::RuntimeSpec::Command { .. } => None,
        }
    }
}

/// One attribute of the node as a keyword argument of `helper.make_node`.
fn attribute(a: &onnx_idx_check::pb::AttributeProto) -> Option<String> {
    use onnx_idx_check::pb::attribute_proto::AttributeType as T;
    let value = match T::try_from(a.r#type).ok()? {
        T::Int => a.i().to_string(),
        T::Float => float(f64::from(a.f()), true),
        T::String => py_str(&a.s),
        T::Ints => format!("{:?}", a.ints),
        T::Floats => format!(
            "[{}]",
            a.floats
                .iter()
                .map(|&f| float(f64::from(f), true))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => return None,
    };
    Some(format!("{}={value}", a.name))
}

/// A tensor the model holds (a Constant's value, an initializer) as a numpy literal turned
/// into a `TensorProto` of its name, `None` when it cannot be written out.
fn literal(t: &onnx_idx_check::pb::TensorProto) -> Option<String> {
    let ctx = onnx_idx_check::load::tensor::TensorContext {
        base_dir: std::path::Path::new("."),
        max_bytes: LITERAL_LIMIT * 16,
    };
    let value = onnx_idx_check::load::tensor::tensor_from_proto(t, &ctx).ok()?;
    Some(format!(
        "onnx.numpy_helper.from_array({}, {})",
        array(&value)?,
        py_str(t.name.as_bytes())
    ))
}

/// `helper.make_node(...)` for `n` as the graph holds it.
fn make_node(n: &onnx_idx_check::pb::NodeProto) -> String {
    let mut args = vec![
        py_str(n.op_type.as_bytes()),
        format!("{:?}", n.input),
        format!("{:?}", n.output),
    ];
    if !n.domain.is_empty() {
        args.push(format!("domain={}", py_str(n.domain.as_bytes())));
    }
    args.extend(n.attribute.iter().filter_map(attribute));
    format!("helper.make_node({})", args.join(", "))
}

/// The model-building part of the reproducer for `api`: imports, the model, `feeds` and
/// `expected` (`None` where an error is required). [`run_and_check`] completes it.
pub(crate) fn reproducer(s: &Subject, reference: &Reference, api: Api) -> String {
    let mut py = String::from("import numpy as np\nimport onnx\nfrom onnx import helper\n");
    match api {
        Api::OnnxRuntime => py.push_str("import onnxruntime as ort\n"),
        Api::OpenVino => py.push_str("import tempfile, os\nimport openvino as ov\n"),
        Api::Tract => py.push_str("import tempfile, os\nimport tract\n"),
        Api::Reference => py.push_str("from onnx.reference import ReferenceEvaluator\n"),
        Api::Tvm => py.push_str("import tvm\nfrom tvm import relax\nfrom tvm.relax.frontend.onnx import from_onnx\n"),
        Api::Iree => py.push_str("import iree.compiler\nimport iree.runtime\nfrom iree.compiler import ir\nfrom iree.compiler.extras import onnx_importer\n"),
        Api::Tinygrad => py.push_str("import tempfile, os\nfrom tinygrad.nn.onnx import OnnxRunner\n"),
    }
    let node = s.node();
    let out_names: Vec<String> = s
        .model
        .graph
        .as_ref()
        .map(|g| g.output.iter().map(|o| o.name.clone()).collect())
        .unwrap_or_default();
    let in_names: Vec<String> = s.inputs.iter().map(|(n, _)| n.clone()).collect();
    let mut args = vec![
        py_str(s.def.op_type.as_bytes()),
        format!("{in_names:?}"),
        format!("{out_names:?}"),
    ];
    if !s.def.domain.is_empty() {
        args.push(format!("domain={}", py_str(s.def.domain.as_bytes())));
    }
    args.extend(
        node.map(|n| n.attribute.iter().filter_map(attribute).collect::<Vec<_>>())
            .unwrap_or_default(),
    );
    // A graph of its own (a case in context: several nodes, or initializers such as an
    // embedding's weights) is written node by node, below.
    let several = s.graph_nodes().is_some();
    if !several {
        py.push_str(&format!("\nnode = helper.make_node({})\n", args.join(", ")));
    } else {
        py.push('\n');
    }
    let outputs = match reference {
        Reference::Outputs(o) => Some(&o[..]),
        Reference::Error(_) => None,
    };
    // The model as the case directory holds it, in the subject's variant (the default form
    // when the variant cannot be made, as the case could not have been written then either).
    let model = s
        .variant_model(outputs)
        .unwrap_or_else(|_| s.model_for(outputs));
    let graph = model.graph.unwrap_or_default();
    // The inputs the variant moved into the model: their tensors, as literals when they can be
    // written out, else read from the model file beside the reproducer.
    let tensor = |name: &str, from_file: String| {
        s.inputs
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, t)| array(t))
            .map_or(from_file, |a| {
                format!(
                    "onnx.numpy_helper.from_array({a}, {})",
                    py_str(name.as_bytes())
                )
            })
    };
    let mut nodes = Vec::new();
    for c in graph
        .node
        .iter()
        .filter(|n| several || n.op_type == "Constant")
    {
        if c.op_type != "Constant" {
            let var = format!("node_{}", nodes.len());
            py.push_str(&format!("{var} = {}\n", make_node(c)));
            nodes.push(var);
            continue;
        }
        let name = c.output.first().map_or("", String::as_str);
        let from_file = format!(
            "next(n for n in onnx.load(\"model.onnx\").graph.node if n.output[0] == {}).attribute[0].t",
            py_str(name.as_bytes())
        );
        // A Constant of the graph itself (not an input a variant moved) holds its own value.
        let own = c
            .attribute
            .iter()
            .find(|a| a.name == "value")
            .and_then(|a| a.t.as_ref())
            .and_then(literal);
        let value = tensor(name, own.unwrap_or(from_file));
        let var = format!("constant_{}", nodes.len());
        py.push_str(&format!(
            "{var} = helper.make_node(\"Constant\", [], [{}], value={value})\n",
            py_str(name.as_bytes())
        ));
        nodes.push(var);
    }
    if !several {
        nodes.push("node".into());
    }
    let initializers: Vec<String> = graph
        .initializer
        .iter()
        .map(|i| {
            let from_file = format!(
                "next(t for t in onnx.load(\"model.onnx\").graph.initializer if t.name == {})",
                py_str(i.name.as_bytes())
            );
            // An initializer of the graph itself (an embedding's weights) holds its own value.
            tensor(&i.name, literal(i).unwrap_or(from_file))
        })
        .collect();
    let vi = |v: &onnx_idx_check::pb::ValueInfoProto| {
        let (elem, shape) = match v.r#type.as_ref().and_then(|t| t.value.as_ref()) {
            Some(onnx_idx_check::pb::type_proto::Value::TensorType(tt)) => (
                tt.elem_type,
                tt.shape.as_ref().map_or("None".to_string(), |sh| {
                    use onnx_idx_check::pb::tensor_shape_proto::dimension::Value;
                    let dims: Vec<String> = sh
                        .dim
                        .iter()
                        .map(|d| match &d.value {
                            Some(Value::DimValue(v)) => v.to_string(),
                            Some(Value::DimParam(p)) => py_str(p.as_bytes()),
                            None => "None".into(),
                        })
                        .collect();
                    format!("[{}]", dims.join(", "))
                }),
            ),
            _ => (0, "None".into()),
        };
        format!(
            "helper.make_tensor_value_info({}, {elem}, {shape})",
            py_str(v.name.as_bytes())
        )
    };
    let list = |vs: &[onnx_idx_check::pb::ValueInfoProto]| {
        vs.iter().map(vi).collect::<Vec<_>>().join(",\n     ")
    };
    let initializer = if initializers.is_empty() {
        String::new()
    } else {
        format!(
            ",\n    initializer=[{}]",
            initializers.join(",\n                 ")
        )
    };
    py.push_str(&format!(
        "graph = helper.make_graph(\n    [{}], \"repro\",\n    [{}],\n    [{}]{initializer})\n",
        nodes.join(", "),
        list(&graph.input),
        list(&graph.output)
    ));
    let opsets: Vec<String> = model
        .opset_import
        .iter()
        .map(|o| {
            format!(
                "helper.make_opsetid({}, {})",
                py_str(o.domain.as_bytes()),
                o.version
            )
        })
        .collect();
    py.push_str(&format!(
        "model = helper.make_model(graph, opset_imports=[{}], ir_version={})\n\n",
        opsets.join(", "),
        model.ir_version
    ));
    py.push_str("feeds = {\n");
    // The graph's inputs only: those the variant moved into the model are not fed.
    let fed = s
        .inputs
        .iter()
        .filter(|(n, _)| graph.input.iter().any(|i| i.name == *n));
    for (k, (name, t)) in fed.enumerate() {
        let value = array(t).unwrap_or_else(|| {
            format!(
                "onnx.numpy_helper.to_array(onnx.load_tensor(\"test_data_set_0/input_{k}.pb\"))"
            )
        });
        py.push_str(&format!("    {}: {value},\n", py_str(name.as_bytes())));
    }
    py.push_str("}\n");
    match outputs {
        Some(outs) => {
            py.push_str("# onnx-idx-check's reference:\nexpected = [\n");
            for (k, t) in outs.iter().enumerate() {
                let value = array(t).unwrap_or_else(|| {
                    format!("onnx.numpy_helper.to_array(onnx.load_tensor(\"test_data_set_0/output_{k}.pb\"))")
                });
                py.push_str(&format!("    {value},\n"));
            }
            py.push_str("]\n");
        }
        None => py.push_str(
            "# An error is required for these inputs: no output is right.\nexpected = None\n",
        ),
    }
    py
}

/// What the reproducer must show, from the finding's class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Shows {
    /// An output that differs from `expected` (wrong output).
    WrongOutput,
    /// Outputs that differ between runs, or from `expected`, over this many runs.
    Nondeterministic(usize),
    /// The process dies or does not answer within this many seconds.
    Crash(u64),
    /// The runtime's error, whose message reads like this one (refuses valid input).
    Refusal(String),
    /// An output where an error is required (accepts invalid input, unsafe).
    Output,
}

/// The run-and-check part of the reproducer: `run()` in the runtime's own API, run in a child
/// process (so that a crash shows as its signal and a hang as a timeout), then the check of
/// exactly the behaviour reported. Exit status 1: the reported bug shows; 0: the runtime's
/// answer is right; 2: something else happened (a different error, such as one of the Python
/// binding's, a crash where none was reported, ...), said loudly. `options` are the bundled
/// adapter's, of the mode that shows the bug: the session is made as the adapter made it
/// (onnxruntime's graph optimization level, OpenVINO's precision hint).
pub(crate) fn run_and_check(api: Api, shows: &Shows, options: &[(String, String)]) -> String {
    let option = |key: &str| {
        options
            .iter()
            .rev()
            .find(|(k, _)| k.replace('-', "_") == key)
            .map(|(_, v)| v.as_str())
    };
    let mut py = String::from("\nimport multiprocessing, re, signal, sys\n\n");
    match api {
        Api::OnnxRuntime => {
            // The adapter's --optimization, as the session option it sets; onnxruntime's own
            // default (all) when not given.
            let level = match option("optimization") {
                Some("disabled") => Some("ORT_DISABLE_ALL"),
                Some("basic") => Some("ORT_ENABLE_BASIC"),
                Some("extended") => Some("ORT_ENABLE_EXTENDED"),
                Some("all") => Some("ORT_ENABLE_ALL"),
                _ => None,
            };
            let (so, args) = match level {
                Some(l) => (
                    format!("    so = ort.SessionOptions()\n    so.graph_optimization_level = ort.GraphOptimizationLevel.{l}\n"),
                    "sess_options=so, ",
                ),
                None => (String::new(), ""),
            };
            py.push_str(&format!(
                concat!(
                    "def run():\n",
                    "    m = model\n",
                    "{so}",
                    "    try:\n",
                    "        sess = ort.InferenceSession(m.SerializeToString(), {args}providers=[\"CPUExecutionProvider\"])\n",
                    "    except Exception as e:\n",
                    "        # An onnxruntime older than the onnx that built the model names the IR version it reads.\n",
                    "        limit = re.search(r\"max supported IR version: (\\d+)\", str(e))\n",
                    "        if not limit:\n",
                    "            raise\n",
                    "        m = onnx.ModelProto()\n",
                    "        m.CopyFrom(model)\n",
                    "        m.ir_version = int(limit.group(1))\n",
                    "        sess = ort.InferenceSession(m.SerializeToString(), {args}providers=[\"CPUExecutionProvider\"])\n",
                    "    return sess.run(None, feeds)\n",
                ),
                so = so,
                args = args
            ));
        }
        Api::OpenVino => {
            // The adapter pins f32 unless told to leave the device its own precision.
            let config = if option("precision") == Some("default") {
                ""
            } else {
                ", {\"INFERENCE_PRECISION_HINT\": \"f32\"}"
            };
            // The adapter's call, an infer request given copies: the binding takes the object
            // arrays strings are fed as there, and refuses them in `compiled(feeds)`.
            py.push_str(&format!("def run():\n    core = ov.Core()\n    with tempfile.TemporaryDirectory() as d:\n        path = os.path.join(d, \"repro.onnx\")\n        onnx.save(model, path)\n        compiled = core.compile_model(core.read_model(path), \"CPU\"{config})\n    request = compiled.create_infer_request()\n    result = request.infer(feeds, share_inputs=False, share_outputs=False)\n    return [result[o] for o in compiled.outputs]\n"));
        }
        Api::Tract => py.push_str("def run():\n    with tempfile.TemporaryDirectory() as d:\n        path = os.path.join(d, \"repro.onnx\")\n        onnx.save(model, path)\n        runnable = tract.onnx().load(path).into_model().into_runnable()\n    return [o.to_numpy() for o in runnable.run([feeds[i.name] for i in model.graph.input])]\n"),
        Api::Reference => py.push_str("def run():\n    return ReferenceEvaluator(model).run(None, feeds)\n"),
        // As the bundled adapters do it (crates/checker/src/runtime/adapters/).
        Api::Tvm => py.push_str(concat!(
            "def run():\n",
            "    inits = {t.name for t in model.graph.initializer}\n",
            "    names = [i.name for i in model.graph.input if i.name not in inits]\n",
            "    mod = from_onnx(model, shape_dict={n: list(feeds[n].shape) for n in names}, keep_params_in_input=False)\n",
            "    mod = relax.transform.DecomposeOpsForInference()(mod)\n",
            "    mod = relax.transform.LegalizeOps()(mod)\n",
            "    with tvm.transform.PassContext(opt_level=3):\n",
            "        executable = tvm.compile(mod, target=\"llvm\")\n",
            "    vm = relax.VirtualMachine(executable, tvm.cpu())\n",
            "    result = vm[\"main\"](*[tvm.runtime.tensor(feeds[n], tvm.cpu()) for n in names])\n",
            "    values = [result] if hasattr(result, \"numpy\") else list(result)\n",
            "    return [v.numpy() for v in values]\n",
        )),
        Api::Iree => {
            let f64 = if option("f64") == Some("keep") {
                ", \"--iree-input-demote-f64-to-f32=false\""
            } else {
                ""
            };
            py.push_str(&format!(
                concat!(
                    "def run():\n",
                    "    proto = onnx.shape_inference.infer_shapes(model, data_prop=True)\n",
                    "    inits = {{t.name for t in proto.graph.initializer}}\n",
                    "    names = [i.name for i in proto.graph.input if i.name not in inits]\n",
                    "    info = onnx_importer.ModelInfo(proto)\n",
                    "    module = info.create_module(context=ir.Context()).operation\n",
                    "    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()\n",
                    "    vmfb = iree.compiler.compile_str(module.get_asm(), target_backends=[\"llvm-cpu\"],\n",
                    "                                     extra_args=[\"--iree-llvmcpu-target-cpu=host\"{f64}])\n",
                    "    system = iree.runtime.SystemContext(config=iree.runtime.Config(\"local-task\"))\n",
                    "    vm_module = iree.runtime.VmModule.copy_buffer(system.instance, vmfb)\n",
                    "    system.add_vm_module(vm_module)\n",
                    "    main = [n for n in vm_module.function_names if not n.startswith(\"__\") and not n.endswith(\"$async\")][0]\n",
                    "    result = system.modules[vm_module.name][main](*[feeds[n] for n in names])\n",
                    "    values = list(result) if isinstance(result, (list, tuple)) else [result]\n",
                    "    values = [v.to_host() if hasattr(v, \"to_host\") else np.asarray(v) for v in values]\n",
                    "    # IREE's integers are signless: an unsigned output comes back signed; read it as declared.\n",
                    "    declared = [helper.tensor_dtype_to_np_dtype(o.type.tensor_type.elem_type) for o in model.graph.output]\n",
                    "    return [v.view(d) if d.kind == \"u\" and v.dtype.kind == \"i\" and v.dtype.itemsize == d.itemsize else v\n",
                    "            for v, d in zip(values, declared)]\n",
                ),
                f64 = f64
            ));
        }
        Api::Tinygrad => py.push_str(concat!(
            "def run():\n",
            "    with tempfile.TemporaryDirectory() as d:\n",
            "        path = os.path.join(d, \"repro.onnx\")\n",
            "        onnx.save(model, path)\n",
            "        runner = OnnxRunner(path)\n",
            "        results = runner(feeds)\n",
            "        return [results[n].numpy() for n in runner.graph_outputs]\n",
        )),
    }
    py.push_str(concat!(
        "\n\n",
        "def child(conn, runs):\n",
        "    try:\n",
        "        conn.send((\"output\", [[np.asarray(o) for o in run()] for _ in range(runs)]))\n",
        "    except Exception as e:\n",
        "        conn.send((\"error\", f\"{type(e).__name__}: {e}\"))\n",
        "\n\n",
        "def run_isolated(timeout, runs=1):\n",
        "    \"\"\"(\\\"output\\\", [outputs per run]), (\\\"error\\\", message), (\\\"crash\\\", signal) or (\\\"timeout\\\", s).\"\"\"\n",
        "    methods = multiprocessing.get_all_start_methods()\n",
        "    ctx = multiprocessing.get_context(\"fork\" if \"fork\" in methods else \"spawn\")\n",
        "    parent, conn = ctx.Pipe(duplex=False)\n",
        "    p = ctx.Process(target=child, args=(conn, runs))\n",
        "    p.start()\n",
        "    conn.close()\n",
        "    if parent.poll(timeout):\n",
        "        try:\n",
        "            answer = parent.recv()\n",
        "        except EOFError:\n",
        "            answer = None\n",
        "    else:\n",
        "        answer = None\n",
        "    p.join(1 if answer is not None else 0.1)\n",
        "    if answer is not None:\n",
        "        return answer\n",
        "    if p.is_alive():\n",
        "        p.kill()\n",
        "        p.join()\n",
        "        return (\"timeout\", timeout)\n",
        "    code = p.exitcode\n",
        "    name = signal.Signals(-code).name if code is not None and code < 0 else f\"exit status {code}\"\n",
        "    return (\"crash\", name)\n",
        "\n\n",
        "def same(got, want):\n",
        "    if len(got) != len(want):\n",
        "        return False\n",
        "    for g, e in zip(got, want):\n",
        "        g, e = np.asarray(g), np.asarray(e)\n",
        "        if g.dtype != e.dtype or g.shape != e.shape:\n",
        "            return False\n",
        "        if e.dtype.kind in \"fc\":\n",
        "            if not np.array_equal(g, e, equal_nan=True):\n",
        "                return False\n",
        "        elif not np.array_equal(g, e):\n",
        "            return False\n",
        "    return True\n",
        "\n\n",
        "def show(label, outputs):\n",
        "    for k, o in enumerate(outputs):\n",
        "        o = np.asarray(o)\n",
        "        print(f\"{label} output {k}: {o.dtype} {list(o.shape)} {o.tolist()!r}\")\n",
        "\n\n",
        "def other(what, detail):\n",
        "    print(f\"NOT THE REPORTED BEHAVIOUR: {what}: {detail}\")\n",
        "    sys.exit(2)\n",
        "\n\n",
    ));
    py.push_str("if __name__ == \"__main__\":\n");
    match shows {
        Shows::WrongOutput => py.push_str(concat!(
            "    kind, value = run_isolated(timeout=120)\n",
            "    if kind != \"output\":\n",
            "        other(\"expected an output (wrong or right), the runtime gave \" + kind, value)\n",
            "    show(\"expected\", expected)\n",
            "    show(\"actual  \", value[0])\n",
            "    if same(value[0], expected):\n",
            "        print(\"the output is right: the bug does not reproduce\")\n",
            "        sys.exit(0)\n",
            "    print(\"BUG: wrong output\")\n",
            "    sys.exit(1)\n",
        )),
        Shows::Nondeterministic(runs) => py.push_str(&format!(
            concat!(
                "    kind, value = run_isolated(timeout=600, runs={runs})\n",
                "    if kind != \"output\":\n",
                "        other(\"expected outputs, the runtime gave \" + kind, value)\n",
                "    bad = [i for i, outs in enumerate(value) if not same(outs, expected)]\n",
                "    show(\"expected\", expected)\n",
                "    for i in bad[:3]:\n",
                "        show(f\"run {{i}}  \", value[i])\n",
                "    if not bad:\n",
                "        print(\"all {runs} runs gave the expected output: the bug does not reproduce\")\n",
                "        sys.exit(0)\n",
                "    print(f\"BUG: {{len(bad)}} of {runs} runs gave a different output\")\n",
                "    sys.exit(1)\n",
            ),
            runs = runs
        )),
        Shows::Crash(secs) => py.push_str(&format!(
            concat!(
                "    kind, value = run_isolated(timeout={secs})\n",
                "    if kind == \"crash\":\n",
                "        print(f\"BUG: the process running the model died: {{value}}\")\n",
                "        sys.exit(1)\n",
                "    if kind == \"timeout\":\n",
                "        print(f\"BUG: no answer within {{value}} s (killed)\")\n",
                "        sys.exit(1)\n",
                "    if kind == \"output\" and expected is not None and same(value[0], expected):\n",
                "        print(\"the output is right: the bug does not reproduce\")\n",
                "        sys.exit(0)\n",
                "    other(\"expected a crash, the runtime gave \" + kind, value)\n",
            ),
            secs = secs
        )),
        Shows::Refusal(message) => py.push_str(&format!(
            concat!(
                "    reported = {reported}\n",
                "    kind, value = run_isolated(timeout=120)\n",
                "    if kind == \"output\":\n",
                "        show(\"actual\", value[0])\n",
                "        if same(value[0], expected):\n",
                "            print(\"the output is right: the bug does not reproduce\")\n",
                "            sys.exit(0)\n",
                "        other(\"expected a refusal, the runtime gave a wrong output\", \"\")\n",
                "    if kind != \"error\":\n",
                "        other(\"expected a refusal, the runtime gave \" + kind, value)\n",
                "    # The runtime's own error, as reported, and not another one (a binding's, say).\n",
                "    words = lambda m: {{w for w in re.findall(r\"[A-Za-z_]{{4,}}\", m)}}\n",
                "    same_type = value.split(\":\")[0] == reported.split(\":\")[0]\n",
                "    shared = len(words(value) & words(reported)) / max(1, len(words(reported)))\n",
                "    if not same_type or shared < 0.6:\n",
                "        other(\"a different error than the runtime's reported one (\" + reported + \")\", value)\n",
                "    show(\"expected\", expected)\n",
                "    print(\"BUG: valid input refused:\", value)\n",
                "    sys.exit(1)\n",
            ),
            reported = py_str(message.as_bytes())
        )),
        Shows::Output => py.push_str(concat!(
            "    kind, value = run_isolated(timeout=120)\n",
            "    if kind == \"output\":\n",
            "        show(\"actual\", value[0])\n",
            "        print(\"BUG: an output where an error is required (see REPORT.md for the rule)\")\n",
            "        sys.exit(1)\n",
            "    # Unchecked input that kills the process this time shows the same missing check.\n",
            "    if kind == \"crash\":\n",
            "        print(\"BUG: no error where one is required: the runtime died (\" + str(value) + \") \"\n",
            "              \"where it gave an output before; the missing check shows either way\")\n",
            "        sys.exit(1)\n",
            "    # An error may be the runtime's own check (the bug is fixed) or one of the binding's:\n",
            "    # either way not what was reported, so say it rather than pass.\n",
            "    other(\"expected an output where an error is required, the runtime gave \" + kind, value)\n",
        )),
    }
    py
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_read_back_in_python() {
        let t =
            Tensor::from_vec(vec![2, 2], vec![1.5f32, f32::NAN, f32::NEG_INFINITY, -0.0]).unwrap();
        assert_eq!(
            array(&t).unwrap(),
            "np.array([1.5, np.nan, -np.inf, -0.0], dtype=np.float32).reshape([2, 2])"
        );
        assert_eq!(
            py_str("a\"é\u{1F600}".as_bytes()),
            "\"a\\\"\\xe9\\U0001f600\""
        );
        assert_eq!(py_str(b"\xff"), "b\"\\xff\"");
        let i = Tensor::from_vec(vec![], vec![3i64]).unwrap();
        assert_eq!(
            array(&i).unwrap(),
            "np.array([3], dtype=np.int64).reshape([])"
        );
    }

    /// The Python the adapters run with, or `None` with the skip said.
    fn python(test: &str) -> Option<std::ffi::OsString> {
        let p = std::env::var_os("ONNX_IDX_CHECK_PYTHON").filter(|p| !p.is_empty());
        if p.is_none() {
            assert!(
                std::env::var_os("ONNX_IDX_CHECK_REQUIRE_RUNTIMES").is_none(),
                "{test}: ONNX_IDX_CHECK_PYTHON is not set"
            );
            println!("{test}: SKIPPED: ONNX_IDX_CHECK_PYTHON is not set");
        }
        p
    }

    #[test]
    #[ignore = "needs onnx (scripts/requirements-*.txt) for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
    fn the_reproducer_of_each_variant_builds_the_model_the_case_holds() {
        use crate::generate::variant::Variant;
        let Some(py) = python("the_reproducer_of_each_variant_builds_the_model") else {
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        let def = crate::generate::select_ops(&["Gather".into()]).unwrap()[0];
        let v = def.versions.iter().find(|v| v.since == 13).unwrap();
        let spec =
            crate::generate::cases::of_version(crate::generate::cases::Breadth::Quick, 0, def, v)
                .into_iter()
                .find(|s| s.name == "test_gather_13_float_basic")
                .unwrap();
        let r = crate::generate::render_case(&spec).unwrap().unwrap();
        let case = tmp.path().join("case");
        r.write_to(&case).unwrap();
        let original = Subject::load(&case, "case", "test_data_set_0", 1 << 20).unwrap();
        // The same indices, and 1200 zeros: too many to write out, so the reproducer reads
        // them from the case's model.onnx.
        let mut long = original.clone();
        long.inputs[1].1 = Tensor::from_vec(vec![1200], vec![0i64; 1200]).unwrap();
        // Checks the reproducer's `model` against the model the case directory holds.
        let check = r#"
loaded = onnx.load("model.onnx")
def dims(vi):
    return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]
def values(t):
    return onnx.numpy_helper.to_array(t).tolist()
def consts(g):
    return [(n.op_type, list(n.input), list(n.output), [values(a.t) for a in n.attribute if a.name == "value"]) for n in g.node]
for part in ["input", "output"]:
    ours = [(v.name, v.type.tensor_type.elem_type, dims(v)) for v in getattr(model.graph, part)]
    theirs = [(v.name, v.type.tensor_type.elem_type, dims(v)) for v in getattr(loaded.graph, part)]
    assert ours == theirs, (part, ours, theirs)
assert [(t.name, list(t.dims), values(t)) for t in model.graph.initializer] == [(t.name, list(t.dims), values(t)) for t in loaded.graph.initializer]
assert consts(model.graph) == consts(loaded.graph), (consts(model.graph), consts(loaded.graph))
assert model.ir_version == loaded.ir_version
onnx.checker.check_model(model)
print("same model:", len(model.graph.input), "input(s),", len(model.graph.initializer), "initializer(s),", len(model.graph.node), "node(s)")
"#;
        let mut seen = Vec::new();
        for (label, subject) in [("basic", &original), ("long", &long)] {
            for v in Variant::ALL {
                let mut s = subject.clone();
                s.variant = v;
                let reference = s.reference().unwrap();
                let dir = tmp.path().join(format!("{label}-{}", v.id()));
                s.write(&dir, &reference).unwrap();
                let repro = reproducer(&s, &reference, Api::Reference);
                let script = format!("{repro}{check}");
                std::fs::write(dir.join("repro.py"), &script).unwrap();
                let out = std::process::Command::new(&py)
                    .arg("repro.py")
                    .current_dir(&dir)
                    .output()
                    .unwrap();
                let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
                assert!(
                    out.status.success(),
                    "{label} {}:\n{script}\n{stdout}{}",
                    v.id(),
                    String::from_utf8_lossy(&out.stderr)
                );
                let line = stdout.lines().last().unwrap_or_default().to_owned();
                println!("{label} {}: {line}", v.id());
                seen.push((label, v, line, repro));
            }
        }
        // What each variant must hold, counted independently of the rewrite: Gather's two
        // inputs, the indices moved into the model outside the graph-input variants.
        for (label, v, line, repro) in seen {
            let want = match v.id() {
                id if id.starts_with("input") => "2 input(s), 0 initializer(s), 1 node(s)",
                id if id.starts_with("initializer") => "1 input(s), 1 initializer(s), 1 node(s)",
                _ => "1 input(s), 0 initializer(s), 2 node(s)",
            };
            assert!(line.ends_with(want), "{label} {}: {line}", v.id());
            assert_eq!(
                repro.contains("\"d0_0\""),
                v.id().ends_with("symbolic"),
                "{label} {}",
                v.id()
            );
            assert_eq!(
                repro.contains("onnx.load(\"model.onnx\")"),
                label == "long" && !v.id().starts_with("input"),
                "{label} {}",
                v.id()
            );
        }
    }

    #[test]
    #[ignore = "needs onnx (scripts/requirements-*.txt) for $ONNX_IDX_CHECK_PYTHON; run with --include-ignored"]
    fn the_reproducer_of_a_case_in_context_builds_its_whole_graph_from_literals() {
        use crate::generate::variant::Variant;
        let Some(py) = python("the_reproducer_of_a_case_in_context_builds_its_whole_graph") else {
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        // Every node (Constants with their values, attributes) and initializer of the case's
        // model, in order; the reference evaluator runs it and agrees with the expected output.
        let check = r#"
loaded = onnx.load("model.onnx")
def attrs(n):
    out = []
    for a in n.attribute:
        v = helper.get_attribute_value(a)
        out.append((a.name, onnx.numpy_helper.to_array(v).tolist() if a.type == onnx.AttributeProto.TENSOR else v))
    return out
def nodes(g):
    return [(n.op_type, list(n.input), list(n.output), attrs(n)) for n in g.node]
def inits(g):
    return [(t.name, list(t.dims), onnx.numpy_helper.to_array(t).tolist()) for t in g.initializer]
assert nodes(model.graph) == nodes(loaded.graph), (nodes(model.graph), nodes(loaded.graph))
assert inits(model.graph) == inits(loaded.graph)
got = ReferenceEvaluator(model).run(None, feeds)
assert len(got) == len(expected) and all(np.array_equal(g, e) for g, e in zip(got, expected)), (got, expected)
print("same graph:", len(model.graph.node), "node(s)")
"#;
        let mut kinds = std::collections::BTreeSet::new();
        for (op, since) in [("Gather", 13), ("GatherND", 13), ("ScatterND", 18)] {
            let def = crate::generate::select_ops(&[op.into()]).unwrap()[0];
            let v = def.versions.iter().find(|v| v.since == since).unwrap();
            for spec in crate::generate::cases::context::in_context(0, def, v) {
                if spec.violation {
                    continue;
                }
                let r = crate::generate::render_case(&spec).unwrap().unwrap();
                for variant in Variant::ALL {
                    let dir = tmp.path().join(format!("{}-{}", spec.name, variant.id()));
                    r.write_to(&dir).unwrap();
                    let mut s = Subject::in_graph(
                        &dir,
                        &spec.name,
                        (spec.def, spec.version, spec.opset),
                        1 << 20,
                    )
                    .unwrap();
                    s.variant = variant;
                    let reference = s.reference().unwrap();
                    let judged = tmp.path().join(format!("j-{}-{}", spec.name, variant.id()));
                    s.write(&judged, &reference).unwrap();
                    let repro = reproducer(&s, &reference, Api::Reference);
                    assert!(!repro.contains("onnx.load("), "{}: {repro}", spec.name);
                    std::fs::write(judged.join("repro.py"), format!("{repro}{check}")).unwrap();
                    let out = std::process::Command::new(&py)
                        .arg("repro.py")
                        .current_dir(&judged)
                        .output()
                        .unwrap();
                    assert!(
                        out.status.success(),
                        "{} {}:\n{repro}\n{}{}",
                        spec.name,
                        variant.id(),
                        String::from_utf8_lossy(&out.stdout),
                        String::from_utf8_lossy(&out.stderr)
                    );
                    kinds.insert(spec.context.as_ref().unwrap().kind.slug());
                }
            }
        }
        assert_eq!(kinds.len(), 5, "{kinds:?}");
    }
}
