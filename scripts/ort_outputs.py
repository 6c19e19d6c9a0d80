#!/usr/bin/env python3
"""Run every ONNX test case under SRC with onnxruntime and write its outputs for `--actual`.

Usage: python3 scripts/ort_outputs.py SRC DST

A case is a directory holding model.onnx, as onnx-idx-check finds them. For each of its
test_data_set_N folders the inputs input_K.pb are fed, in order, to the model's inputs, and the
outputs are written to DST/<case path relative to SRC>/test_data_set_N/output_K.pb, the tree
`onnx-idx-check run SRC --actual DST` reads. A model or data set that onnxruntime refuses gets no
output file; the refusal is printed on stderr and the gate reports the case (an error, or a pass
where the spec itself requires an error). The exit status is 0 whenever the script ran, whatever
onnxruntime refused, and 2 on a usage error.

Needs the packages of scripts/requirements-ort.txt.
"""

import argparse
import os
import pathlib
import re
import sys

import onnx
import onnxruntime as ort
from onnx import numpy_helper


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


def one_line(error):
    """onnxruntime's messages span several lines; one line per refusal keeps stderr greppable."""
    return " ".join(str(error).split())


def main():
    parser = argparse.ArgumentParser(
        description="Run every case under SRC with onnxruntime (CPU) and write the outputs to "
        "DST/<case>/test_data_set_N/output_K.pb for `onnx-idx-check run SRC --actual DST`.",
    )
    parser.add_argument("src", metavar="SRC", type=pathlib.Path, help="the test cases")
    parser.add_argument("dst", metavar="DST", type=pathlib.Path, help="where outputs go")
    args = parser.parse_args()
    src, dst = args.src, args.dst
    if not src.is_dir():
        parser.error(f"SRC {src}: not a directory")

    # Created even when every model is refused, so that the gate reports the cases rather than
    # a missing directory.
    dst.mkdir(parents=True, exist_ok=True)
    # Warnings from graph optimisation are not refusals; keep stderr for those.
    ort.set_default_logger_severity(3)

    cases = find_cases(src)
    if not cases:
        print(f"ort_outputs: no case (no model.onnx) under {src}", file=sys.stderr)
    written = refused = 0
    for case in cases:
        # The output tree mirrors case names, as onnx-idx-check reads it: the path below SRC, or
        # the directory's own name when SRC is the case itself.
        rel = case.relative_to(src)
        if rel == pathlib.Path("."):
            rel = pathlib.Path(case.resolve().name)
        label = rel.as_posix()
        data_sets = numbered(case, r"test_data_set_(\d+)")
        # Outputs left by an earlier run would be judged as this run's: remove them first.
        for ds in data_sets:
            old = dst / rel / ds.name
            if old.is_dir():
                for stale in numbered(old, r"output_(\d+)\.pb"):
                    stale.unlink()
        try:
            model = str(case / "model.onnx")
            sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        except Exception as e:  # the runtime refuses the model: no outputs for any data set
            print(f"{label}: model refused: {one_line(e)}", file=sys.stderr)
            refused += len(data_sets)
            continue
        names = [i.name for i in sess.get_inputs()]
        for ds in data_sets:
            inputs = numbered(ds, r"input_(\d+)\.pb")
            try:
                if len(inputs) > len(names):
                    raise ValueError(f"{len(inputs)} input files for {len(names)} model inputs")
                # input_K feeds the K-th input, as in ONNX's node tests; optional inputs
                # without a file are left out.
                feeds = {
                    name: numpy_helper.to_array(onnx.load_tensor(str(path)))
                    for name, path in zip(names, inputs)
                }
                outs = sess.run(None, feeds)
            except Exception as e:  # an error for these inputs: no outputs for this data set
                print(f"{label} {ds.name}: refused: {one_line(e)}", file=sys.stderr)
                refused += 1
                continue
            out_dir = dst / rel / ds.name
            out_dir.mkdir(parents=True, exist_ok=True)
            for k, (meta, value) in enumerate(zip(sess.get_outputs(), outs)):
                tensor = numpy_helper.from_array(value, meta.name)
                onnx.save_tensor(tensor, str(out_dir / f"output_{k}.pb"))
            written += 1

    print(
        f"ort_outputs: {len(cases)} cases, onnxruntime {ort.__version__}: "
        f"{written} data sets written to {dst}, {refused} refused",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
