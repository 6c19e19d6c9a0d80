"""The ``onnx-idx-check`` console script: the Rust command line, run inside this module.

maturin cannot put a binary and a library module in one wheel (PyO3/maturin#368), so the
script calls the command line's ``main`` through the extension module.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Optional, Sequence

from . import _native


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Runs ``onnx-idx-check`` with ``argv`` (``sys.argv`` when ``None``) and exits with its
    status."""
    args = list(sys.argv if argv is None else argv)
    # As for the binary: Ctrl-C and a closed pipe end the process (Python would otherwise hold
    # them until the Rust code returns, which a long run does not soon do).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # The bundled runtime adapters run on this Python, which has this package's dependencies.
    os.environ.setdefault("ONNX_IDX_CHECK_PYTHON", sys.executable)
    sys.stdout.flush()
    program = os.path.basename(args[0]) if args else "onnx-idx-check"
    sys.exit(_native.main([program, *args[1:]], keep_freed_memory=True))


if __name__ == "__main__":  # pragma: no cover
    main()
