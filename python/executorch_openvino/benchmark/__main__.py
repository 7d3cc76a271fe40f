"""`python -m executorch_openvino.benchmark RUN.json [...]`: each saved run's Markdown, printed."""

import sys

from . import load, render

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    for path in sys.argv[1:]:
        print(render(load(path)))
