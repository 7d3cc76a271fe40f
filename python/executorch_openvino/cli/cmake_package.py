"""Where find_package(executorch_openvino) finds the CMake package: the installed package's folder."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]
CMAKE_CONFIG = Path("share", "cmake", "executorch_openvino", "executorch_openvinoConfig.cmake")


def cmake_prefix() -> Path:
    """The prefix find_package(executorch_openvino) searches: the installed package's folder."""
    return PACKAGE_DIR


def cmake_config() -> Path:
    return cmake_prefix() / CMAKE_CONFIG
