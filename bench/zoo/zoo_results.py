"""The zoo's variants and what is recorded for each (zoo.py fills these in, zoo_report.py prints
them)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from common.stats import quantile

# From C++ (bench_zoo_cpp, one process per model, every call timed alone with steady_clock).
NATIVE_CPP = "native-cpp"
OURS_CPP = "ours-cpp"
OURS_CPP_SET_INPUTS = "ours-cpp-set-inputs"
NATIVE_CPP_REBIND = "native-cpp-rebind"
XNNPACK_CPP = "xnnpack-cpp"
ET_OV_CPP = "et-openvino-cpp"
OURS_BF16_CPP = "ours-bf16-cpp"
OURS_UPSTREAM_CPP = "ours-upstream-cpp"
# From Python (this process; executorch.runtime for the ExecuTorch variants).
NATIVE_PY = "native-py"
OURS_PY = "ours-py"
XNNPACK_PY = "xnnpack-py"
KERNELS_PY = "et-kernels-py"
ET_OV_PY = "et-openvino-py"

CPP_VARIANTS = [NATIVE_CPP, OURS_CPP, OURS_CPP_SET_INPUTS, NATIVE_CPP_REBIND, XNNPACK_CPP, ET_OV_CPP, OURS_BF16_CPP,
                OURS_UPSTREAM_CPP]
PY_VARIANTS = [NATIVE_PY, OURS_PY, XNNPACK_PY, KERNELS_PY, ET_OV_PY]
VARIANTS = CPP_VARIANTS + PY_VARIANTS

# The name bench_zoo_cpp's serve mode knows each C++ variant by.
CPP_NAMES = {NATIVE_CPP: "native", OURS_CPP: "ours", OURS_CPP_SET_INPUTS: "ours-set-inputs",
             NATIVE_CPP_REBIND: "native-rebind", XNNPACK_CPP: "xnnpack", ET_OV_CPP: "et-openvino",
             OURS_BF16_CPP: "ours-bf16", OURS_UPSTREAM_CPP: "ours-upstream"}

# The .pte file of each ExecuTorch variant in a model's folder (zoo_prepare.py writes them).
PTE_FILES = {OURS_CPP: "ours.pte", OURS_CPP_SET_INPUTS: "ours.pte", OURS_PY: "ours.pte",
             XNNPACK_CPP: "xnnpack.pte", XNNPACK_PY: "xnnpack.pte", KERNELS_PY: "kernels.pte",
             ET_OV_CPP: "et_openvino.pte", ET_OV_PY: "et_openvino.pte", OURS_BF16_CPP: "ours_bf16.pte",
             OURS_UPSTREAM_CPP: "et_openvino.pte"}

DESCRIPTIONS = {
    NATIVE_CPP: "native OpenVINO from C++ (its C API): the IR our delegate got, same device and properties, "
                "one infer request, tensors bound once, each call only infer: the limit",
    OURS_CPP: "executorch_openvino inside the ExecuTorch program, from C++: Method::execute() with the inputs "
              "set once (program read with FileDataLoader, as executorch-openvino-run does); for every program "
              "variant the first call checks that the inputs survive it, and where the memory plan reuses their "
              "buffers (a kernel outside the delegate read them) every call sets them again (the outputs column "
              "says so)",
    OURS_CPP_SET_INPUTS: "the same, setting every input again before each call (Method::set_input copies it into "
                         "the planned buffer), as executorch-openvino-run and executorch.runtime do",
    NATIVE_CPP_REBIND: "native OpenVINO from C++ wrapping and setting new tensors on every call: what a delegate "
                       "without a binding cache (ExecuTorch's own OpenVINO delegate) does per call",
    XNNPACK_CPP: "ExecuTorch + XNNPACK fp32 from C++, Method::execute() with the inputs set once",
    ET_OV_CPP: "ExecuTorch's own OpenVINO delegate (libexecutorch_backend_openvino.so from the executorch wheel) "
               "from C++, Method::execute() with the inputs set once; it imports a compiled model into a core "
               "with no properties, so it infers at OpenVINO's default precision: bf16 on a CPU with bf16",
    OURS_BF16_CPP: "ours from C++ as ours-cpp, lowered with INFERENCE_PRECISION_HINT=bf16: the same precision "
                   "as et-openvino-cpp, for a like-for-like comparison with it",
    OURS_UPSTREAM_CPP: "the program of ExecuTorch's own OpenVINO partitioner (et_openvino.pte) run by our delegate "
                       "(which registers under that delegate's name, OpenvinoBackend, when its library is not in the "
                       "process; here a second bench_zoo_cpp process): its precompiled model imported with our "
                       "load-time defaults (f32), the program read with the file loader",
    NATIVE_PY: "native OpenVINO through its Python API, same IR and properties, one infer request, inputs set once",
    OURS_PY: "executorch_openvino through executorch.runtime (Python method.execute: inputs wrapped, outputs "
             "copied)",
    XNNPACK_PY: "ExecuTorch + XNNPACK fp32 through executorch.runtime",
    KERNELS_PY: "ExecuTorch with no delegate (the wheel's registered kernels) through executorch.runtime",
    ET_OV_PY: "ExecuTorch's own OpenVINO delegate through executorch.runtime (bf16 here, as above), the "
              "program given as bytes (from a path it crashes: see the notes)",
}


@dataclass
class Result:
    times: List[float] = field(default_factory=list)  # ms per timed call, every round
    blocks: List[List[float]] = field(default_factory=list)  # the same, per round
    note: str = ""                                    # why there is no figure
    parity: str = ""
    warm_parity: str = ""                             # outputs after a load from the model cache
    # load, each in a fresh process; medians over the repeats
    load_cold_ms: Optional[float] = None
    load_warm_ms: Optional[float] = None              # with the model cache filled by the cold load
    load_added_kb: Optional[int] = None               # VmHWM right after the cold load - RSS before it
    peak_load_kb: Optional[int] = None                # the process's VmHWM right after the cold load
    peak_warm_load_kb: Optional[int] = None           # ... right after the warm load
    peak_kb: Optional[int] = None                     # the process's VmHWM after load and a few runs
    allocs_per_call: Optional[float] = None           # heap allocations per call, calling thread
    allocs_all_threads: Optional[float] = None        # ... every thread of the process

    @property
    def samples(self) -> int:
        return len(self.times)

    @property
    def p50(self) -> Optional[float]:
        return statistics.median(self.times) if self.times else None

    @property
    def p90(self) -> Optional[float]:
        return quantile(self.times, 0.9) if self.times else None


@dataclass
class ModelRun:
    name: str
    description: str
    delegated: str = ""
    results: Dict[str, Result] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    native_import_ms: Optional[float] = None  # ov_core_import_model of the exported compiled model
    native_import_added_kb: Optional[int] = None
    native_import_peak_kb: Optional[int] = None  # VmHWM right after that import
    native_file_added_kb: Optional[int] = None  # native reading model.xml/.bin itself (weights mapped)
    native_file_peak_kb: Optional[int] = None
    error: str = ""

    def result(self, variant: str) -> Result:
        return self.results.setdefault(variant, Result())

    def has(self, variant: str) -> bool:
        """Whether the variant exists for this model and was not found impossible."""
        result = self.results.get(variant)
        return result is not None and not result.note
