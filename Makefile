# The project's commands. Each target does its own set-up: Debian packages when missing, the
# Python 3.11 virtual environment with pinned requirements (.venv), CMake configure and build
# (build/). All of it is reused when present.
#
#   make demo    build, then run a model through the delegate and compare it with native OpenVINO
#   make test    build, then run every test (C++ under ctest, Python under pytest)
#   make bench   build, then measure per-call overhead and the model zoo against native OpenVINO

VENV   ?= .venv
BUILD  ?= build
PYTHON := $(VENV)/bin/python
CMAKE  := $(VENV)/bin/cmake
CTEST  := $(VENV)/bin/ctest
NINJA  := $(VENV)/bin/ninja
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all setup system-packages venv configure build test test-cpp test-python test-packaging test-windows wheel demo bench clean distclean

all: build

system-packages:
	@bash scripts/install_system_packages.sh

venv:
	@bash scripts/setup_venv.sh $(VENV) requirements.txt

setup: system-packages venv

configure: setup
	@$(CMAKE) -S . -B $(BUILD) -G Ninja -DCMAKE_MAKE_PROGRAM=$(abspath $(NINJA)) \
		-DPython3_EXECUTABLE=$(abspath $(PYTHON)) -DCMAKE_BUILD_TYPE=Release > $(BUILD).configure.log 2>&1 \
		|| { cat $(BUILD).configure.log; exit 1; }

build: configure
	@$(CMAKE) --build $(BUILD) -j $(JOBS)

test: build test-cpp test-python test-windows test-packaging

test-cpp: build
	@cd $(BUILD) && ../$(CTEST) --output-on-failure -j $(JOBS)

test-python: build
	@EXECUTORCH_OPENVINO_LIBRARY=$(abspath $(BUILD))/site/executorch_openvino/lib/libexecutorch_openvino.so \
		$(PYTHON) -m pytest tests/python -q

# Builds the wheel, installs it into a new virtual environment and tests it from there (slow: it
# installs the pinned dependencies anew, from pip's cache when warm).
test-packaging: build
	@$(PYTHON) -m pytest tests/packaging -q -s

# The loader built for Windows with MinGW-w64 and run under Wine against the real OpenVINO
# Windows DLLs (scripts/test_windows.sh sets up packages, the wheel cache and a Wine prefix).
test-windows: setup
	@bash scripts/test_windows.sh

wheel: setup
	@$(PYTHON) -m pip wheel . --no-build-isolation --no-deps -q -w dist

demo: build
	@EXECUTORCH_OPENVINO_BUILD=$(abspath $(BUILD)) $(PYTHON) examples/demo.py

# Per-call overhead against native OpenVINO (C++), then the model zoo against every alternative.
bench: build
	@EXECUTORCH_OPENVINO_BUILD=$(abspath $(BUILD)) $(PYTHON) bench/run_overhead.py
	@PYTHONPATH=$(abspath python) $(PYTHON) bench/zoo.py

clean:
	rm -rf $(BUILD) $(BUILD).configure.log

distclean: clean
	rm -rf $(VENV)
