"""The recipe names registered with optimum-executorch. optimum-cli hands a recipe no options
(only the Python API's recipe_kwargs reach it), so the choices a command line user needs are names
of their own, as optimum-executorch's Core ML recipes do; from Python every option of recipe.OPTIONS
is a recipe_kwargs entry of `openvino`."""

from __future__ import annotations

import functools
from typing import Dict

from .recipe import lower_with_openvino

RECIPES: Dict[str, Dict[str, object]] = {
    "openvino": {},
    "openvino_fast": {"precision": "fast"},
    "openvino_int8": {"weights": "int8"},
    "openvino_int4": {"weights": "int4"},
    "openvino_gpu": {"device": "GPU"},
    "openvino_npu": {"device": "NPU"},
}


def _recipe(name: str, fixed: Dict[str, object]):
    def recipe(model, **options):
        clash = sorted(set(fixed) & set(options))
        if clash:
            raise TypeError(f"recipe {name!r} sets {', '.join(clash)} itself; use recipe 'openvino' to choose it")
        return lower_with_openvino(model, **fixed, **options)

    return functools.update_wrapper(recipe, lower_with_openvino)


def register() -> None:
    """Registers every name of RECIPES in optimum-executorch's recipe registry (again is harmless)."""
    try:
        from optimum.exporters.executorch.recipe_registry import register_recipe
    except ImportError as error:
        raise ImportError("the openvino recipes need optimum-executorch: pip install 'executorch-openvino[optimum]' "
                          f"({error})") from error
    for name, fixed in RECIPES.items():
        register_recipe(name)(_recipe(name, fixed))
