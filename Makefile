# The project's commands. Each target does its own set-up: Debian packages when missing, the
# Python 3.11 virtual environment with pinned requirements (.venv), CMake configure and build
# (build/). All of it is reused when present.
#
#   make demo    build, then run a model through the delegate and compare it with native OpenVINO
#   make test    build, then run every test: C++ (ctest), Python (pytest), the Windows loader under
#                Wine, the installed wheel, optimum-executorch's tasks with our recipe (its own
#                environment), the sanitizer build, and each fuzz target for a minute
#   make bench   build, then measure the model zoo against native OpenVINO and every alternative (C++ and
#                Python, the delegate's own per-call cost too), the Hugging Face zoo, start-up times and
#                LLMs at the sizes users run (hours; figures: docs/performance.md). make bench-quick: every
#                benchmark in its quickest form, in minutes; make bench-<suite>: one (bench/README.md)
#   make fuzz / make soak   longer fuzzing; 1,000 load-execute-destroy cycles; make test-peer-suite and
#                make test-int8-cpu-classes: ExecuTorch's whole operator suite, int8 on every CPU class

VENV   ?= .venv
BUILD  ?= build
PYTHON := $(VENV)/bin/python
CMAKE  := $(VENV)/bin/cmake
CTEST  := $(VENV)/bin/ctest
NINJA  := $(VENV)/bin/ninja
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
# pytest workers for tests/python and tests/optimum, a test file each (pytest-xdist): most of a test's time
# is torch.export and lowering on one core. At most 4: each worker holds its own exported models.
PYTEST_WORKERS ?= $(shell n=$(JOBS); [ $$n -gt 4 ] && echo 4 || echo $$n)
PYTEST_PARALLEL = -n $(PYTEST_WORKERS) --dist loadfile
comma := ,

.PHONY: all setup system-packages venv venv-bench venv-optimum configure build test test-cpp test-python test-packaging test-optimum test-windows test-asan test-fuzz fuzz fuzz-build soak test-peer-suite test-int8-cpu-classes wheel demo bench bench-quick bench-zoo bench-hf-zoo bench-llm bench-llm-p1024 bench-llm-smoke bench-hf-recipe bench-linear-stack bench-serving clean distclean

all: build

system-packages:
	@bash scripts/install_system_packages.sh

venv:
	@bash scripts/setup_venv.sh $(VENV) requirements.txt

# The LLM benchmark's extras (OpenVINO GenAI, optimum-intel, transformers), resolved with the pinned set.
venv-bench: venv
	@bash scripts/setup_venv.sh $(VENV) requirements.txt requirements-bench.txt

OPTIMUM_VENV ?= .venv-optimum
# optimum-executorch's own environment (transformers 5.0.0rc1 cannot sit beside .venv's 4.57.6), with
# this checkout's wheel installed in it ([optimum] and [quantization] extras): the README's Hugging
# Face commands and tests/optimum run there.
venv-optimum: wheel
	@bash scripts/setup_venv.sh $(OPTIMUM_VENV) requirements-optimum.txt
	@$(OPTIMUM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps \
		$$(ls -t dist/executorch_openvino-*.whl | head -n 1)
	@$(OPTIMUM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
		"$$(ls -t dist/executorch_openvino-*.whl | head -n 1)[optimum,quantization]"

setup: system-packages venv

configure: setup
	@$(CMAKE) -S . -B $(BUILD) -G Ninja -DCMAKE_MAKE_PROGRAM=$(abspath $(NINJA)) \
		-DPython3_EXECUTABLE=$(abspath $(PYTHON)) -DCMAKE_BUILD_TYPE=Release > $(BUILD).configure.log 2>&1 \
		|| { cat $(BUILD).configure.log; exit 1; }

# The build also installs this checkout into $(VENV) as a development install (scripts/develop_install.py):
# `import executorch_openvino` and the commands work there as an installed wheel's would, so the README's
# examples run as written after `. $(VENV)/bin/activate`.
build: configure
	@$(CMAKE) --build $(BUILD) -j $(JOBS)
	@$(PYTHON) scripts/develop_install.py $(VENV)

# Every stage runs even when an earlier one fails (-k), so one failure does not hide the others;
# the exit status is still non-zero.
test: build
	@bash scripts/check_disk.sh
	@$(MAKE) --no-print-directory -k test-cpp test-python test-windows test-packaging test-optimum test-asan test-fuzz

test-cpp: build
	@cd $(BUILD) && ../$(CTEST) --output-on-failure -j $(JOBS)

test-python: build
	@EXECUTORCH_OPENVINO_LIBRARY=$(abspath $(BUILD))/site/executorch_openvino/lib/libexecutorch_openvino.so \
		$(PYTHON) -m pytest tests/python -q $(PYTEST_PARALLEL)

# Builds the wheel, installs it into a new virtual environment and tests it from there (slow: it
# installs the pinned dependencies anew, from pip's cache when warm).
test-packaging: build
	@$(PYTHON) -m pytest tests/packaging -q -s

# optimum-executorch's tasks exported with the openvino recipe and run through its own classes and
# ExecuTorch's runner, in .venv-optimum with this checkout's wheel installed ([optimum] and
# [quantization] extras): tests/optimum, against the installed package only.
test-optimum: venv-optimum
	@EXECUTORCH_OPENVINO_TEST_INSTALLED=1 HF_HUB_OFFLINE=1 $(OPTIMUM_VENV)/bin/python -m pytest tests/optimum -q $(PYTEST_PARALLEL)

# The loader built for Windows with MinGW-w64 and run under Wine against the real OpenVINO
# Windows DLLs (scripts/test_windows.sh sets up packages, the wheel cache and a Wine prefix).
test-windows: setup
	@bash scripts/test_windows.sh

# Instrumented builds, each in a folder of its own, never touching $(BUILD). test-asan: every C++
# test (and the fuzz targets' seeds and regression inputs) under AddressSanitizer, LeakSanitizer and
# UndefinedBehaviorSanitizer (gcc); leaks inside OpenVINO are suppressed one by one in
# tests/sanitizers/lsan.supp. test-fuzz / fuzz: the libFuzzer targets of tests/fuzz (clang, with
# the same sanitizers) for TEST_FUZZ_SECONDS / FUZZ_SECONDS each; the inputs they find accumulate
# in $(FUZZ_BUILD)/fuzz-corpus/, findings go to $(FUZZ_BUILD)/fuzz-findings/ and fail the run.
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
TEST_FUZZ_SECONDS ?= 60
FUZZ_SECONDS ?= 600
FUZZ_PACKAGES := clang-14 libclang-rt-14-dev
INSTRUMENTED_CONFIGURE = -G Ninja -DCMAKE_MAKE_PROGRAM=$(abspath $(NINJA)) -DPython3_EXECUTABLE=$(abspath $(PYTHON)) \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DEXECUTORCH_OPENVINO_SANITIZE=address,undefined \
	-DEXECUTORCH_OPENVINO_BUILD_BENCH=OFF -DEXECUTORCH_OPENVINO_BUILD_RUNNER=OFF

test-asan: setup
	@mkdir -p $(ASAN_BUILD) && $(CMAKE) -S . -B $(ASAN_BUILD) $(INSTRUMENTED_CONFIGURE) \
		> $(ASAN_BUILD)/configure.log 2>&1 || { cat $(ASAN_BUILD)/configure.log; exit 1; }
	@$(CMAKE) --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ../$(CTEST) --output-on-failure -j $(JOBS)

fuzz-build: setup
	@bash scripts/install_system_packages.sh $(FUZZ_PACKAGES)
	@mkdir -p $(FUZZ_BUILD) && $(CMAKE) -S . -B $(FUZZ_BUILD) $(INSTRUMENTED_CONFIGURE) \
		-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DEXECUTORCH_OPENVINO_FUZZ=ON \
		-DEXECUTORCH_OPENVINO_BUILD_TESTS=OFF > $(FUZZ_BUILD)/configure.log 2>&1 \
		|| { cat $(FUZZ_BUILD)/configure.log; exit 1; }
	@$(CMAKE) --build $(FUZZ_BUILD) -j $(JOBS)

test-fuzz: fuzz-build
	@$(PYTHON) tests/fuzz/run_fuzzers.py $(FUZZ_BUILD) $(TEST_FUZZ_SECONDS)

fuzz: fuzz-build
	@$(PYTHON) tests/fuzz/run_fuzzers.py $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The longer tests, each a make target of its own (make test runs a short slice of the first two):
# soak: 1,000 cycles of load program -> execute -> destroy in one process (tests/soak/): resident memory,
# open file descriptors and live compiled models per cycle; test-peer-suite: ExecuTorch's backend operator
# suite with our flow beside ExecuTorch's openvino and xnnpack flows (tests/peer_suite/, about 25 minutes a
# flow); test-int8-cpu-classes: int8 accuracy on every CPU class this machine can show (itself, oneDNN
# restricted, AVX2 under QEMU) and the overflow fix's speed cost (tests/int8_cpu_classes/, about 8 minutes).
# Reports in bench/results/ (soak-, peer-suite-, int8-cpu-classes-<date>.md).
SOAK_CYCLES ?= 1000
soak: build
	@$(BENCH_ENV) $(PYTHON) tests/soak/soak.py --cycles $(SOAK_CYCLES)

test-peer-suite: build
	@$(BENCH_ENV) $(PYTHON) tests/peer_suite/run.py

test-int8-cpu-classes: build
	@$(BENCH_ENV) $(PYTHON) tests/int8_cpu_classes/int8_cpu_classes.py

wheel: setup
	@$(PYTHON) -m pip wheel . --no-build-isolation --no-deps -q -w dist

demo: build
	@EXECUTORCH_OPENVINO_BUILD=$(abspath $(BUILD)) $(PYTHON) examples/demo.py

# The benchmarks, one suite a folder under bench/ (bench/README.md), each on the package's measuring
# engine (executorch_openvino.benchmark): variants in interleaved rounds, a report per run in
# bench/results/ (<kind>-<date>.json, and its Markdown rendered from it). Every benchmark measures
# $(BUILD): its binaries and its library. make bench runs the zoo, the Hugging Face zoo, start-up and the
# LLMs at 128-token prompts (hours at 1B parameters on 2 cores); make bench-quick runs every suite in its
# quickest form, in minutes, into bench/results/quick/ (GenAI and llama.cpp are n/a there unless
# requirements-bench.txt is installed and llama.cpp built; the recipe suite needs .venv-optimum).
QUICK ?=
BENCH_ENV = EXECUTORCH_OPENVINO_BUILD=$(abspath $(BUILD)) \
	EXECUTORCH_OPENVINO_LIBRARY=$(abspath $(BUILD))/site/executorch_openvino/lib/libexecutorch_openvino.so
BENCH_RESULTS_DIR = $(abspath bench/results)$(if $(QUICK),/quick)
bench: build
	@$(MAKE) --no-print-directory bench-zoo bench-hf-zoo
	@$(if $(QUICK),$(MAKE) --no-print-directory bench-llm-smoke,$(MAKE) --no-print-directory bench-llm)

bench-quick:
	@$(MAKE) --no-print-directory bench QUICK=1

# The model zoo from C++ and Python: latency, allocations, loads, memory against native OpenVINO, XNNPACK
# and ExecuTorch's own OpenVINO delegate, and the delegate's own per-call cost (about an hour).
bench-zoo: build
	@$(BENCH_ENV) $(PYTHON) bench/zoo/zoo.py $(if $(QUICK),--quick) --results-dir $(BENCH_RESULTS_DIR)

# Hugging Face architectures at realistic sizes against native OpenVINO's own conversion and XNNPACK.
bench-hf-zoo: build
	@$(BENCH_ENV) HF_HUB_OFFLINE=1 $(PYTHON) bench/hf_zoo/hf_zoo.py --results-dir $(BENCH_RESULTS_DIR) \
		$(if $(QUICK),--size small --models bert$(comma)vit --rounds 2 --calls 2)

# Language models at the sizes users run (SmolLM2-360M's, Qwen2.5-0.5B's and Llama-3.2-1B's shapes), int8
# and int4, against OpenVINO GenAI's default and llama.cpp in the same rounds (llama.cpp is built once
# from llama-cpp-python's sdist). bench-llm: 128-token prompts, ours grown and paged; bench-llm-p1024:
# 1024-token prompts, also precision="fast". Hours at 1B on 2 cores: LLM_SIZES picks sizes.
LLM_ROUNDS ?= 5
LLM_SIZES ?= smollm2-360m,qwen2.5-0.5b,llama3.2-1b
LLM_FORMATS ?= int8,int4
bench-llm: build venv-bench
	@$(BENCH_ENV) $(PYTHON) bench/llm/llm_bench.py --rounds $(LLM_ROUNDS) --sizes $(LLM_SIZES) \
		--formats $(LLM_FORMATS) --variants ours,ours-paged,ours-cached,genai-default,genai-cached,llamacpp
bench-llm-p1024: build venv-bench
	@$(BENCH_ENV) $(PYTHON) bench/llm/llm_bench.py --rounds 3 --formats $(LLM_FORMATS) \
		--sizes $(subst $(comma),-p1024$(comma),$(LLM_SIZES))-p1024 \
		--variants ours,ours-paged,ours-fast,ours-fast-paged,genai-default
bench-llm-smoke: build
	@$(BENCH_ENV) $(PYTHON) bench/llm/llm_bench.py --smoke --variants ours,ours-paged,xnnpack,genai-default

# optimum-executorch's openvino recipe (ours) against its xnnpack recipe and optimum-intel + OpenVINO GenAI:
# a Llama of SmolLM2-135M's shape and a Whisper of whisper-base's, fp32 / int8 / int4 (about an hour; two
# environments, .venv-bench's and .venv-optimum).
HF_RECIPE_ROUNDS ?= 5
HF_RECIPE_WORK_ROOT ?= $(abspath $(BUILD))/hf-recipe-work
bench-hf-recipe: build venv-bench venv-optimum
	@$(BENCH_ENV) HF_HUB_OFFLINE=1 $(PYTHON) bench/hf_recipe/hf_recipe_bench.py --rounds $(HF_RECIPE_ROUNDS) \
		--optimum-python $(abspath $(OPTIMUM_VENV))/bin/python --work $(HF_RECIPE_WORK_ROOT)

# A small LLM's linear layers alone, one token a call, OpenVINO's compressed-weight kernels against XNNPACK's
# (the reproduction an upstream report carries; minutes).
LINEAR_STACK_SIZE ?= smollm2-135m
bench-linear-stack: build
	@$(BENCH_ENV) $(PYTHON) bench/kernels/linear_stack.py --size $(LINEAR_STACK_SIZE) --results-dir $(BENCH_RESULTS_DIR)
# Serving: warm resume against a cold prefill, sessions on one load, memory a session adds (bench/serving).
bench-serving: build
	@$(BENCH_ENV) $(PYTHON) bench/serving/serving_bench.py --work $(abspath $(BUILD))/serving-work --results-dir $(BENCH_RESULTS_DIR)

clean:
	rm -rf $(BUILD) $(BUILD).configure.log $(ASAN_BUILD) $(FUZZ_BUILD)

distclean: clean
	rm -rf $(VENV)
