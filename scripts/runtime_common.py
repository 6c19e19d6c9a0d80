"""What the runtime dump scripts (scripts/*_outputs.py) share: finding the cases, feeding each
data set's inputs, writing the outputs for `onnx-idx-check run SRC --actual DST`, isolating each
case from the runtime's crashes and hangs, and the sidecar DST/_runtime.json.

A dump script only says how its runtime loads and runs a model:

    class Runtime:
        name = "onnxruntime"                 # for messages and the sidecar
        def __init__(self): ...              # import the runtime, set it up
        def version(self) -> str: ...
        def load(self, model_path) -> Model  # raises when the runtime refuses the model

    Model: .input_names (list), .output_names (list), .run(feeds: {name: ndarray}) -> [arrays]

and calls `main(Runtime, prog, __file__)`. The runtime itself is imported only in a worker
subprocess (the same script with the hidden flag --worker), which runs one case at a time for
the parent: a case that takes longer than --timeout seconds, or a worker that dies (a segfault,
an abort, an out-of-memory kill), ends that worker and only costs that case, which gets no output
file; the next case starts a fresh worker. Everything the parent needs is in the standard
library.

The sidecar records what `--actual` alone cannot tell apart, a refusal from a crash:

    {"schema_version": 1, "runtime": {"name": ..., "version": ...}, "timeout_s": 60,
     "cases": {"<case>": {"status": "ok" | "refused" | "crashed" | "timeout",
                          "message": ... (not for ok),
                          "data_sets": {"test_data_set_0": {"status": ..., "message": ...}}}}}

A case is `refused` when the runtime refused its model or any of its data sets (with the first
message), `crashed` or `timeout` when its worker died or hung on it, `ok` otherwise.
"""

import argparse
import json
import os
import pathlib
import re
import select
import signal
import subprocess
import sys
import time

SIDECAR = "_runtime.json"
DEFAULT_TIMEOUT_S = 60.0
# Importing a runtime (OpenVINO, say) can take seconds on a busy machine; this is not the case's.
STARTUP_TIMEOUT_S = 300.0


def numbered(directory, pattern):
    """The entries of `directory` whose names match `pattern` (one group: the number), in numeric
    order, so that input_10.pb comes after input_9.pb."""
    found = []
    for entry in directory.iterdir():
        m = re.fullmatch(pattern, entry.name)
        if m:
            found.append((int(m.group(1)), entry))
    return [entry for _, entry in sorted(found)]


def find_cases(src):
    """Every directory under `src` (or `src` itself) holding model.onnx, sorted. Symbolic links
    are not followed, as onnx-idx-check's own discovery does not follow them."""
    cases = []
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        dirnames.sort()
        if "model.onnx" in filenames and not os.path.islink(os.path.join(dirpath, "model.onnx")):
            cases.append(pathlib.Path(dirpath))
    return sorted(cases)


def case_rel(case, src):
    """The output tree mirrors case names, as onnx-idx-check reads it: the path below SRC, or
    the directory's own name when SRC is the case itself."""
    rel = case.relative_to(src)
    if rel == pathlib.Path("."):
        rel = pathlib.Path(case.resolve().name)
    return rel


def one_line(error):
    """Runtimes' messages span several lines; one line per refusal keeps stderr greppable."""
    return " ".join(str(error).split())


# ---------------------------------------------------------------------------------------------
# The worker: imports the runtime, runs the cases the parent sends, one JSON line per case back.


def run_case(runtime, case, out_root):
    """Runs every data set of `case` and writes its outputs under `out_root`; the result the
    parent records: {"model_error": msg} or {"data_sets": [{"name", "error"}]}."""
    data_sets = numbered(case, r"test_data_set_(\d+)")
    try:
        model = runtime.load(str(case / "model.onnx"))
    except Exception as e:  # the runtime refuses the model: no outputs for any data set
        return {"model_error": one_line(e) or type(e).__name__}
    # Imported here, not at the top: the parent needs only the standard library.
    import numpy as np
    import onnx
    from onnx import numpy_helper

    names = list(model.input_names)
    results = []
    for ds in data_sets:
        inputs = numbered(ds, r"input_(\d+)\.pb")
        try:
            if len(inputs) > len(names):
                raise ValueError(f"{len(inputs)} input files for {len(names)} model inputs")
            # input_K feeds the K-th input, as in ONNX's node tests; optional inputs without a
            # file are left out. A tensor stored as external data (input_K.bin) is read from
            # beside its .pb, not from the working directory.
            feeds = {
                name: numpy_helper.to_array(onnx.load_tensor(str(path)), base_dir=str(ds))
                for name, path in zip(names, inputs)
            }
            outs = model.run(feeds)
            tensors = [
                numpy_helper.from_array(np.asarray(value), name)
                for name, value in zip(model.output_names, outs)
            ]
        except Exception as e:  # an error for these inputs: no outputs for this data set
            results.append({"name": ds.name, "error": one_line(e) or type(e).__name__})
            continue
        out_dir = out_root / ds.name
        out_dir.mkdir(parents=True, exist_ok=True)
        for k, tensor in enumerate(tensors):
            onnx.save_tensor(tensor, str(out_dir / f"output_{k}.pb"))
        results.append({"name": ds.name, "error": None})
    return {"data_sets": results}


def worker(runtime_class):
    # The protocol goes over a private copy of stdout; anything the runtime prints to stdout
    # goes to stderr instead, so that it cannot garble a reply.
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        runtime = runtime_class()
        hello = {"name": runtime.name, "version": runtime.version()}
    except Exception as e:
        hello = {"error": one_line(e) or type(e).__name__}
    proto.write(json.dumps(hello) + "\n")
    if "error" in hello:
        return 1
    for line in sys.stdin:
        job = json.loads(line)
        try:
            reply = run_case(runtime, pathlib.Path(job["case"]), pathlib.Path(job["out"]))
        except Exception as e:  # a bug in reading the case's files: the case's, not fatal
            reply = {"model_error": one_line(e) or type(e).__name__}
        proto.write(json.dumps(reply) + "\n")
    return 0


# ---------------------------------------------------------------------------------------------
# The parent: walks the cases, hands each to a worker, restarts the worker after a crash or a
# hang, prints refusals, writes the sidecar.


class Worker:
    """One worker process, in a process group of its own: a runtime may fork helpers (OpenVINO
    does), and a helper still holding the worker's end of the pipe after the worker died would
    otherwise keep the parent waiting for an end of file that never comes. Replies are read
    with select on the raw pipe, in this thread only, so that nothing can block stopping it."""

    def __init__(self, script):
        self.proc = subprocess.Popen(
            [sys.executable, script, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        self.fd = self.proc.stdout.fileno()
        self.buffer = b""
        self.eof = False

    def receive(self, timeout):
        """The next reply, or "timeout", or "crashed" when the worker died."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            if self.eof:
                return "crashed"
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            # Wake up now and then to notice a worker that died while a helper it forked still
            # holds the pipe open.
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(self.fd, 65536)
                if chunk:
                    self.buffer += chunk
                else:
                    self.eof = True
            elif self.proc.poll() is not None:
                self.eof = True
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def send(self, job):
        try:
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def death(self):
        """How the worker ended, for the crash message."""
        code = self.proc.wait()
        if code < 0:
            try:
                return f"worker killed by signal {-code} ({signal.Signals(-code).name})"
            except ValueError:
                return f"worker killed by signal {-code}"
        return f"worker exited with status {code}"

    def stop(self):
        """Ends this worker and whatever it forked: its own process group, which this script
        created for it."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass

    def finish(self):
        """Ends a worker that has nothing more to do: end of its input, then a little time."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        self.stop()


def parse_args(prog, runtime_label):
    parser = argparse.ArgumentParser(
        prog=prog,
        description=f"Run every case under SRC with {runtime_label} and write the outputs to "
        "DST/<case>/test_data_set_N/output_K.pb for `onnx-idx-check run SRC --actual DST`; "
        f"DST/{SIDECAR} records per case whether the runtime ran it, refused it, crashed or "
        "timed out.",
    )
    parser.add_argument("src", metavar="SRC", type=pathlib.Path, help="the test cases")
    parser.add_argument("dst", metavar="DST", type=pathlib.Path, help="where outputs go")
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"time limit for one case, all its data sets (default {DEFAULT_TIMEOUT_S:g})",
    )
    args = parser.parse_args()
    if not args.src.is_dir():
        parser.error(f"SRC {args.src}: not a directory")
    if not args.timeout > 0:
        parser.error(f"--timeout {args.timeout}: must be positive")
    return args


def main(runtime_class, prog, script, runtime_label=None):
    """The whole dump script: `python3 scripts/X_outputs.py SRC DST [--timeout S]`. Exits 0
    whenever it ran, whatever the runtime refused or crashed on; 1 when the runtime cannot even
    be imported or set up (nothing ran); 2 on a usage error."""
    if sys.argv[1:] == ["--worker"]:
        return worker(runtime_class)
    label_rt = runtime_label or runtime_class.name
    args = parse_args(prog, label_rt)
    src, dst, timeout = args.src, args.dst, args.timeout
    script = os.path.abspath(script)

    # Created even when every model is refused, so that the gate reports the cases rather than
    # a missing directory.
    dst.mkdir(parents=True, exist_ok=True)
    cases = find_cases(src)
    if not cases:
        print(f"{prog}: no case (no model.onnx) under {src}", file=sys.stderr)

    runtime_info = {"name": runtime_class.name, "version": None}
    records = {}
    written = refused = crashed = 0
    w = None
    for case in cases:
        rel = case_rel(case, src)
        label = rel.as_posix()
        data_sets = numbered(case, r"test_data_set_(\d+)")
        # Outputs left by an earlier run would be judged as this run's: remove them first.
        for ds in data_sets:
            old = dst / rel / ds.name
            if old.is_dir():
                for stale in numbered(old, r"output_(\d+)\.pb"):
                    stale.unlink()
        if w is None:
            w = Worker(script)
            hello = w.receive(STARTUP_TIMEOUT_S)
            if not isinstance(hello, dict) or "error" in hello:
                why = hello.get("error") if isinstance(hello, dict) else f"worker {hello}"
                w.stop()
                print(f"{prog}: {label_rt} could not start: {why}", file=sys.stderr)
                _write_sidecar(dst, runtime_info, timeout, records, error=why)
                return 1
            runtime_info = {"name": hello["name"], "version": hello["version"]}
        if w.send({"case": str(case), "out": str(dst / rel)}):
            reply = w.receive(timeout)
        else:  # the worker died between two cases: its end of file is on the way
            reply = w.receive(STARTUP_TIMEOUT_S)
            reply = reply if reply in ("timeout", "crashed") else "crashed"
        if reply == "timeout":
            w.stop()
            w = None
            message = f"no result after {timeout:g} s; worker stopped"
            records[label] = {"status": "timeout", "message": message}
            print(f"{label}: timeout: {message}", file=sys.stderr)
            crashed += len(data_sets)
            continue
        if reply == "crashed":
            message = w.death()
            w.stop()
            w = None
            records[label] = {"status": "crashed", "message": message}
            print(f"{label}: crashed: {message}", file=sys.stderr)
            crashed += len(data_sets)
            continue
        if "model_error" in reply:
            print(f"{label}: model refused: {reply['model_error']}", file=sys.stderr)
            records[label] = {"status": "refused", "message": reply["model_error"]}
            refused += len(data_sets)
            continue
        record = {"status": "ok", "data_sets": {}}
        for ds in reply["data_sets"]:
            if ds["error"] is None:
                record["data_sets"][ds["name"]] = {"status": "ok"}
                written += 1
            else:
                print(f"{label} {ds['name']}: refused: {ds['error']}", file=sys.stderr)
                record["data_sets"][ds["name"]] = {"status": "refused", "message": ds["error"]}
                if record["status"] == "ok":
                    record["status"] = "refused"
                    record["message"] = ds["error"]
                refused += 1
        records[label] = record
    if w is not None:
        w.finish()

    _write_sidecar(dst, runtime_info, timeout, records)
    version = runtime_info["version"] or "(not started)"
    tail = f", {crashed} crashed or timed out" if crashed else ""
    print(
        f"{prog}: {len(cases)} cases, {label_rt} {version}: "
        f"{written} data sets written to {dst}, {refused} refused{tail}",
        file=sys.stderr,
    )
    return 0


def _write_sidecar(dst, runtime_info, timeout, records, error=None):
    sidecar = {
        "schema_version": 1,
        "runtime": runtime_info,
        "timeout_s": timeout,
        "cases": records,
    }
    if error is not None:
        sidecar["error"] = error
    # One line per case: greppable, and diffs between two runs stay readable.
    lines = [f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in records.items()]
    head = json.dumps({k: v for k, v in sidecar.items() if k != "cases"}, sort_keys=True)
    text = head[:-1] + ', "cases": {\n' + ",\n".join(lines) + "\n}}\n"
    json.loads(text)  # the hand-made layout is still JSON
    tmp = dst / (SIDECAR + ".tmp")
    tmp.write_text(text)
    tmp.replace(dst / SIDECAR)
