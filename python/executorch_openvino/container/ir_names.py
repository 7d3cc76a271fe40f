"""The names a lowered model's IR and the runtime library agree on, written only here.

The exporter gives them (ir_passes/grown_cache.py), the state helper's paged-attention rewrite gives the
paged ones (src/openvino_state/paged_attention.cpp), and the library looks for them. The C++ side reads
this file: cmake/IrNames.cmake turns each `NAME = "value"` line below into `#define EOV_NAME "value"` in
the generated header openvino_state/ir_names.h (src/openvino_state/state_abi.h includes it), so keep each
on one line of that form. tests/python/container/test_ir_names.py checks that nothing else spells them.
"""

# A model whose KV caches grow with the conversation. OpenVINO's C API reports one name of a port, the
# first in sort order, and the CPU plugin merges the names of converts after an input into it ("81"): the
# leading "!" sorts before digits and letters.
# The input carrying the first position a call writes:
CACHE_POSITION_INPUT = "!executorch_openvino.cache_position"
# The grown caches' variables begin with this (the runtime cuts these on going back):
GROWN_VARIABLE_PREFIX = "executorch_openvino.grown/"
# The variable counting the positions they hold (the runtime reads a number, not the caches):
LENGTH_VARIABLE = "executorch_openvino.length"

# A model rewritten for paged attention at load: its caches (this prefix, then the pass's name), the
# causal mask (an input, or the last output when the model computes it), the token ids and where each
# sequence of the call sits in the caches.
PAGED_CACHE_PREFIX = "executorch_openvino.paged/"
PAGED_MASK_INPUT = "!executorch_openvino.causal_mask"
PAGED_MASK_OUTPUT = "!executorch_openvino.computed_causal_mask"
PAGED_TOKENS_INPUT = "!executorch_openvino.tokens"
# Its sequences' layout, which the delegate feeds each call (this prefix, then the pass's name:
# past_lens, subsequence_begins, block_indices, block_indices_begins, max_context_len).
PAGED_PLAN_PREFIX = "!executorch_openvino.plan/"

# A sequence-to-sequence decoder whose cross-attention caches are computed from the encoder's states
# once (ir_passes/encoder_caches.py): their variables begin with this (the runtime resets them when a
# call brings other states), and the input carrying the states.
ENCODER_CACHE_PREFIX = "executorch_openvino.encoder/"
ENCODER_STATES_INPUT = "!executorch_openvino.encoder_states"


def exported_name(variable_id: str) -> str:
    """A variable's id as the exported program named its buffer, without the prefix an IR pass put
    before it (grown caches, an encoder's caches)."""
    return variable_id.removeprefix(GROWN_VARIABLE_PREFIX).removeprefix(ENCODER_CACHE_PREFIX)
