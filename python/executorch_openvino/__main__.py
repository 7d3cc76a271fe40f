"""`python -m executorch_openvino`: the command line (see executorch_openvino.cli)."""

import sys

from executorch_openvino.cli import main

if __name__ == "__main__":
    sys.exit(main())
