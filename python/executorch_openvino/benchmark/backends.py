"""The runtimes `executorch-openvino bench` compares, each made ready to be timed: ours through
executorch.runtime, native OpenVINO on the same IR with the properties ours compiled with, any other
program through executorch.runtime (XNNPACK, ExecuTorch's kernels) and eager PyTorch.

Each one is a Backend: a Runner for rounds.py, a function returning the outputs of one call, and the
OpenVINO properties it compiled with where it has any. With several requests every backend keeps that
many calls in flight: programs with one program per request (a program shares its memory arenas
between its methods, so two calls of one program must not overlap), native OpenVINO with its
AsyncInferQueue, eager PyTorch with one thread per request.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Union

from .rounds import ConcurrentRunner, Runner, SequentialRunner, Slice

OURS, FAST, NATIVE, XNNPACK, EAGER = "ours", "fast", "native", "xnnpack", "eager"
LABELS = {
    OURS: "executorch_openvino (executorch.runtime)",
    FAST: "executorch_openvino, precision=fast",
    NATIVE: "native OpenVINO (same IR and properties)",
    XNNPACK: "XNNPACK (executorch.runtime)",
    EAGER: "PyTorch eager",
}
# What ours' compiled model reports (executorch_openvino.compiled_models()); native compiles with
# the same values and reports them back under the same names.
REPORTED_PROPERTIES = ("PERFORMANCE_HINT", "INFERENCE_NUM_THREADS", "NUM_STREAMS", "INFERENCE_PRECISION_HINT",
                       "PERF_COUNT")


@dataclass
class Backend:
    key: str
    runner: Optional[Runner] = None  # None: not available, `note` says why
    outputs: Optional[Callable[[], Dict[int, object]]] = None  # method output index -> numpy array
    properties: Dict[str, str] = field(default_factory=dict)
    requests: int = 1
    note: str = ""

    @property
    def label(self) -> str:
        return LABELS.get(self.key, self.key)


def unavailable(key: str, why: str) -> Backend:
    return Backend(key, note=why)


def _arrays(values: Sequence) -> Dict[int, object]:
    """Method output index -> numpy array, for the tensors among `values` (bf16, which numpy lacks, as f32)."""
    import torch

    return {i: (value.detach().float() if value.dtype == torch.bfloat16 else value.detach()).numpy()
            for i, value in enumerate(values) if isinstance(value, torch.Tensor)}


def _runner(calls: List[Callable[[], object]]) -> Runner:
    return SequentialRunner(calls[0]) if len(calls) == 1 else ConcurrentRunner(calls)


# --- ours ----------------------------------------------------------------------------------------


def ours(pte: Path, method: str, inputs: list, requests: Optional[int], data: Optional[Path] = None) -> Backend:
    """The method loaded through executorch.runtime (with its data file, if any), once per request;
    `requests` None takes as many as the compiled model has streams."""
    import executorch_openvino
    from executorch.runtime import Runtime

    before = executorch_openvino.compiled_models()
    methods = [Runtime.get().load_program(pte, data_path=data).load_method(method)]
    models = [model for model in executorch_openvino.compiled_models() if model not in before]  # this load's
    properties = dict(models[0]) if len(models) == 1 else {}
    if requests is None:
        streams = properties.get("NUM_STREAMS", "1")
        requests = int(streams) if streams.isdigit() and int(streams) > 0 else 1
    methods += [Runtime.get().load_program(pte, data_path=data).load_method(method) for _ in range(requests - 1)]
    calls = [lambda m=m: m.execute(inputs) for m in methods]
    return Backend(OURS, _runner(calls), lambda: _arrays(methods[0].execute(inputs)), properties, requests)


# --- ours at precision=fast -----------------------------------------------------------------------


def ours_fast(pte: Path, method: str, inputs: list, requests: int, ours_properties: Dict[str, str],
              data: Optional[Path] = None) -> Backend:
    """The same program loaded again with precision=fast, when that compiles it in another precision
    than ours' load did; else unavailable, saying what fast would be on this device."""
    import executorch_openvino
    from executorch_openvino.runtime.precision import default_precision

    device = ours_properties.get("device", "CPU")
    running = ours_properties.get("INFERENCE_PRECISION_HINT")
    fast = default_precision(device)
    if fast is None:
        return unavailable(FAST, f"{device} does not say which precision it defaults to")
    if fast == running:
        return unavailable(FAST, f"the same as this run on this machine: OpenVINO's {device} default precision is "
                           f"{fast}" + (" (the processor has neither bf16 nor f16)" if fast == "f32" else ""))
    # precision=fast for this load only; an inference_precision the user set would win over it.
    with executorch_openvino.using_options(precision="fast", inference_precision=None):
        made = ours(pte, method, inputs, requests, data)
    made.key = FAST
    return made


# --- native OpenVINO -----------------------------------------------------------------------------


def single_partition(pte_bytes: bytes, method: str):
    """(the delegate, its data, its call's arguments, the method's inputs, its outputs) when
    `method` is exactly one executorch_openvino partition and nothing else; otherwise the reason."""
    from executorch.exir.schema import DelegateCall, KernelCall

    from ..container import delegate_blobs

    mine = delegate_blobs(pte_bytes, method)
    if not mine:
        return f"the program has no executorch_openvino partition in a method named {method!r}"
    plan = mine[0].plan
    instructions = [ins.instr_args for chain in plan.chains for ins in chain.instructions]
    kernels = sum(isinstance(args, KernelCall) for args in instructions)
    calls = [args for args in instructions if isinstance(args, DelegateCall)]
    if len(mine) != 1 or len(plan.delegates) != 1 or len(calls) != 1 or kernels:
        others = len(plan.delegates) - len(mine)
        return (f"the method has {len(mine)} executorch_openvino partition(s), {others} other delegate(s) and "
                f"{kernels} operator call(s) on ExecuTorch's kernels; native OpenVINO is compared only when one "
                "partition covers the whole method")
    return mine[0].delegate, mine[0].data, calls[0].args, list(plan.inputs), list(plan.outputs)


def property_text(value) -> str:
    """An OpenVINO Python property value as the C API spells it."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    if hasattr(value, "get_type_name"):  # an element type, e.g. INFERENCE_PRECISION_HINT
        return value.get_type_name()
    if isinstance(value, bool):
        return "YES" if value else "NO"
    return str(value)


class _AsyncQueueRunner(Runner):
    """OpenVINO's own way of keeping requests in flight: an AsyncInferQueue, inputs set once."""

    def __init__(self, queue) -> None:
        self.queue = queue
        self.latencies: List[float] = []
        queue.set_callback(lambda request, _: self.latencies.append(request.latency))

    def run(self, calls: Optional[int], seconds: Optional[float]) -> Slice:
        import time

        self.latencies = []
        started = 0
        start = time.perf_counter()
        deadline = start + seconds if seconds is not None else None
        while (calls is None or started < calls) and (deadline is None or time.perf_counter() < deadline):
            self.queue.start_async()  # waits for a free request
            started += 1
        self.queue.wait_all()
        return Slice(started, time.perf_counter() - start, list(self.latencies))


@dataclass
class PartitionIr:
    """A method that is one executorch_openvino partition, as native OpenVINO runs it: the IR our
    delegate got, the device and properties the delegate compiles it with (the program's and the
    load-time defaults), and which method input feeds each IR input and which method output each IR
    output is (-1: none)."""

    xml: bytes
    weights: bytes
    device: str
    properties: Dict[str, str]
    input_positions: List[int]
    output_positions: List[int]


def partition_ir(pte_bytes: bytes, method: str, data: Optional[Path] = None) -> Union[str, PartitionIr]:
    """The method's partition as native OpenVINO runs it, or why it cannot be run natively (weights
    kept in a data file are read from `data`)."""
    found = single_partition(pte_bytes, method)
    if isinstance(found, str):
        return found
    delegate, blob_bytes, call_args, plan_inputs, plan_outputs = found

    import numpy as np
    import openvino as ov

    from executorch_openvino.container import compile_specs, named_weights
    from executorch_openvino.container.blob import InputArguments, parse_blob

    blob = parse_blob(blob_bytes)
    weights = blob.ir_weights
    if blob.named_weights is not None:
        if data is None:
            return "the program keeps its weights in a data file: pass --data FILE.ptd"
        weights = named_weights.read_from_file(data, blob.named_weights)
    model = ov.Core().read_model(model=blob.ir_xml, weights=ov.Tensor(np.frombuffer(weights, np.uint8)))
    count = len(model.inputs)
    # The call's inputs the IR reads (all, in order, unless the blob says which).
    arguments = blob.input_arguments or InputArguments(count, tuple(range(count)))
    call_count = arguments.call_inputs
    if len(call_args) != call_count + len(model.outputs) or len(arguments.of_ir_input) != count:
        return "the IR's inputs and outputs do not match the delegate call's"
    try:
        input_positions = [plan_inputs.index(call_args[i]) for i in arguments.of_ir_input]
    except ValueError:
        return "the delegate reads values that are not inputs of the method"
    options = compile_specs.from_compile_specs(delegate.compile_specs)
    properties = compile_specs.load_time_properties(options.device, options.properties, options.precision,
                                                      compile_specs.weights_spec(options))
    output_positions = [plan_outputs.index(v) if v in plan_outputs else -1 for v in call_args[call_count:]]
    return PartitionIr(bytes(blob.ir_xml), bytes(weights), options.device, dict(properties), input_positions,
                       output_positions)


def native(pte_bytes: bytes, method: str, inputs: list, ours_model: Dict[str, str], requests: int,
           throughput: bool, data: Optional[Path] = None) -> Backend:
    """The partition's IR compiled by OpenVINO's Python API on ours' device with the properties
    ours' compiled model reports; one infer request (latency) or `requests` in a queue."""
    ir = partition_ir(pte_bytes, method, data)
    if isinstance(ir, str):
        return unavailable(NATIVE, ir)

    import numpy as np
    import openvino as ov

    device = ours_model.get("device", ir.device)
    properties = dict(ir.properties)
    properties.update({key: ours_model[key] for key in REPORTED_PROPERTIES if key in ours_model})
    core = ov.Core()
    model = core.read_model(model=ir.xml, weights=ov.Tensor(np.frombuffer(ir.weights, np.uint8)))
    compiled = core.compile_model(model, device, properties)
    arrays = [np.ascontiguousarray(inputs[position].numpy()) for position in ir.input_positions]

    def bound(request):
        for j, array in enumerate(arrays):
            request.set_input_tensor(j, ov.Tensor(array))  # shares the array's memory
        return request

    reported = {}
    for key in ("EXECUTION_DEVICES",) + REPORTED_PROPERTIES:
        try:
            reported[key] = property_text(compiled.get_property(key))
        except RuntimeError:  # not every device reports every property
            pass
    reported["device"] = device
    first = bound(compiled.create_infer_request())

    def outputs() -> Dict[int, object]:
        _ = arrays  # the requests read their memory: keep them alive with them
        first.infer()
        return {position: first.get_output_tensor(k).data.copy()
                for k, position in enumerate(ir.output_positions) if position >= 0}

    if throughput:
        queue = ov.AsyncInferQueue(compiled, requests)
        for request in queue:
            bound(request)
        runner: Runner = _AsyncQueueRunner(queue)
    else:
        runner = SequentialRunner(first.infer)
    return Backend(NATIVE, runner, outputs, reported, requests if throughput else 1)


# --- XNNPACK and eager ---------------------------------------------------------------------------


def xnnpack(program_bytes: bytes, method: str, inputs: list, requests: int) -> Backend:
    """An XNNPACK program loaded through executorch.runtime, once per request."""
    from executorch.runtime import Runtime

    if "XnnpackBackend" not in Runtime.get().backend_registry.registered_backend_names:
        return unavailable(XNNPACK, "this ExecuTorch runtime has no XnnpackBackend")
    return program(XNNPACK, program_bytes, method, inputs, requests)


def program(key: str, program: Union[bytes, Path], method: str, inputs: list, requests: int = 1) -> Backend:
    """Any program (its bytes or its path) loaded through executorch.runtime, once per request."""
    from executorch.runtime import Runtime

    # (A method keeps its program alive: executorch_openvino.runtime.errors wraps load_method to do so.)
    methods = [Runtime.get().load_program(program).load_method(method) for _ in range(requests)]
    calls = [lambda m=m: m.execute(inputs) for m in methods]
    return Backend(key, _runner(calls), lambda: _arrays(methods[0].execute(inputs)), requests=requests)


@contextlib.contextmanager
def one_torch_thread():
    """torch at one thread while the runtimes are timed. executorch.runtime's Python binding copies
    each output with a torch op; with more threads torch's idle OpenMP workers then spin (libgomp's
    default) on the cores the next call's runtime needs, which costs a T5 encoder call about a
    quarter of its time (docs/performance.md). Eager's calls take torch's own count back."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield threads
    finally:
        torch.set_num_threads(threads)


def eager(model, inputs: list, requests: int) -> Backend:
    """The model called by PyTorch, without autograd (set per call: it is per thread), with torch's
    own thread count even inside one_torch_thread (set per call too)."""
    import torch
    from torch.utils._pytree import tree_leaves

    threads = torch.get_num_threads()

    def call():
        timed_threads = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            with torch.inference_mode():
                return model(*inputs)
        finally:
            torch.set_num_threads(timed_threads)

    return Backend(EAGER, _runner([call] * requests), lambda: _arrays(tree_leaves(call())), requests=requests)
