"""optimum-executorch's `openvino` recipes: Hugging Face models exported the way Hugging Face users
export them (`optimum-cli export executorch --recipe openvino`,
`ExecuTorchModelForCausalLM.from_pretrained(..., recipe="openvino")`), lowered to this delegate.

Importing this package registers the recipes with optimum-executorch (`import executorch_openvino.optimum`);
optimum-cli imports it on its own through the module this wheel installs in optimum's command
namespace (optimum/commands/register/register_executorch_openvino.py). Needs the `optimum` extra:
pip install 'executorch-openvino[optimum]'.

    recipe.py     the recipe: export the wrapper's programs, lower them with OpenvinoPartitioner
    variants.py   the recipe names optimum-cli can choose (it hands a recipe no options)
"""

from __future__ import annotations

from .recipe import OPTIONS, lower_with_openvino
from .variants import RECIPES, register

register()

__all__ = ["OPTIONS", "RECIPES", "lower_with_openvino", "register"]
