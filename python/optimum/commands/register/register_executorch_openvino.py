"""Makes executorch-openvino's `openvino` recipes visible to optimum-cli (`optimum-cli export
executorch --recipe openvino ...`). optimum-cli imports every module of this namespace when it
starts; this one adds no command, it registers the recipes. It must never break optimum-cli: without
optimum-executorch (or with a broken executorch-openvino) it registers nothing."""

REGISTER_COMMANDS = []

try:
    import executorch_openvino.optimum  # noqa: F401  registers the recipes
except ImportError:  # optimum-executorch is not installed: there is no `export executorch` to serve
    pass
