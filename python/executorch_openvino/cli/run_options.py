"""Run-time options (--option KEY=VALUE, --precision) applied to the programs a command loads, and
the compiled models those programs made, as the commands print them."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, List, Sequence, Tuple

from .user_errors import usage_error


@contextmanager
def options_applied(pairs: Sequence[Tuple[str, str]]) -> Iterator[dict]:
    """Sets the --option values with executorch_openvino.set_options for programs loaded inside the
    block, and removes them after it. Yields them as a dict."""
    import executorch_openvino

    chosen = dict(pairs)
    try:
        executorch_openvino.set_options(**chosen)
    except executorch_openvino.OptionError as error:
        raise usage_error(f"--option: {error}") from None
    try:
        yield chosen
    finally:
        executorch_openvino.set_options(**{key: None for key in chosen})


def loaded_models_since(before: List[dict]) -> List[dict]:
    """The compiled models of executorch_openvino that appeared (or gained a user) since `before`
    (a compiled_models() list): those of the program loaded in between."""
    import executorch_openvino

    return [model for model in executorch_openvino.compiled_models() if model not in before]


def describe_model(model: dict) -> str:
    """`CPU (ir): PERFORMANCE_HINT=LATENCY, ...` for one compiled_models() entry."""
    properties = ", ".join(f"{key}={value}" for key, value in model.items() if key not in ("device", "source", "users"))
    return f"{model.get('device')} ({model.get('source')}): {properties}"
