"""fill-mask (BERT, ModernBERT) and image-classification (ViT) through optimum-executorch and the
`openvino` recipe, exported as a Hugging Face user exports them (main_export, the task's own loader),
then checked: wholly delegated; optimum's ExecuTorchModelForMaskedLM /
ExecuTorchModelForImageClassification give plain transformers eager's logits, the masked LM at
several lengths (its sequence is dynamic) with an attention mask that pads some tokens away.

And Gemma 3 exported with optimum's custom caches (use_custom_sdpa, use_custom_kv_cache, as its
docs advise for sliding-window models): ring buffers for the sliding layers
(llama::update_cache_with_indices, llama::custom_sdpa with a mask), a plain cache for the global
one (llama::update_cache, causal llama::custom_sdpa); wholly delegated with every cache in OpenVINO
state, the rings static; greedy ids and every step's logits equal to transformers' past the window.

And Gemma 3 with vision (multimodal-text-to-text), its processor built in code: the three methods
(vision_encoder, token_embedding, text_decoder, the last with the custom caches) delegated, and
optimum's ExecuTorchModelForMultiModalToText generating transformers' greedy ids from an image and
a prompt, every step's logits equal."""

from __future__ import annotations

import pytest
import torch

from hf_checkpoints import (CONTEXT, CUSTOM_CACHE_LM, IMAGE_CLASSIFICATION, MASKED_LM, MULTIMODAL, VOCAB, load_eager,
                            save_gemma3_vision_processor)
from recipe_checks import (assert_delegated, assert_greedy_steps_equal_eager, causal_lm_step, export, exported_once,
                           openvino_variables)

TASKS = {**{name: "fill-mask" for name in MASKED_LM}, **{name: "image-classification" for name in IMAGE_CLASSIFICATION}}
# From one token to the longest the program takes (optimum's example: CONTEXT - 1 tokens); from 17
# on, past ModernBERT's local attention (a window of 16: 8 tokens either side).
LENGTHS = (1, 5, 17, 40, CONTEXT - 1)


def _assert_logits(got, want, what):
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4 * want.abs().mean().item(), msg=what)


@pytest.fixture(scope="module")
def exported(saved, tmp_path_factory):
    return exported_once(tmp_path_factory, lambda name, out: export(saved(name), TASKS[name], out))


@pytest.mark.parametrize("name", sorted(TASKS))
def test_wholly_delegated(name, exported):
    program, _ = exported(name)
    assert_delegated(program, "forward")


@pytest.mark.parametrize("name", sorted(MASKED_LM))
def test_masked_lm_gives_eager_logits_at_several_lengths_with_and_without_padding(name, exported, saved):
    from optimum.executorch import ExecuTorchModelForMaskedLM
    from transformers import AutoModelForMaskedLM

    _, out = exported(name)
    ours = ExecuTorchModelForMaskedLM.from_pretrained(str(out))
    eager = AutoModelForMaskedLM.from_pretrained(saved(name)).eval()
    generator = torch.Generator().manual_seed(0)
    for length in LENGTHS:
        ids = torch.randint(4, VOCAB, (1, length), generator=generator)
        full = torch.ones_like(ids)
        # Right padding, as a tokenizer pads a batch: the last third of the tokens masked away.
        padded = full.clone()
        padded[0, length - length // 3:] = 0
        for mask, what in ((full, "no padding"), (padded, "padded")):
            with torch.no_grad():
                want = eager(input_ids=ids, attention_mask=mask).logits
            _assert_logits(ours.forward(ids, mask), want, f"{name}, {length} tokens, {what}")
        if length >= 3:  # the mask really changes the tokens it keeps, so ignoring it would fail above
            kept = length - length // 3
            with torch.no_grad():
                unmasked = eager(input_ids=ids, attention_mask=full).logits[0, :kept]
                masked = eager(input_ids=ids, attention_mask=padded).logits[0, :kept]
            assert (masked - unmasked).abs().max() > 1e-2 * unmasked.abs().mean(), f"{name}: padding changes nothing"


@pytest.mark.parametrize("name", sorted(IMAGE_CLASSIFICATION))
def test_image_classifier_gives_eager_logits(name, exported, saved):
    from optimum.executorch import ExecuTorchModelForImageClassification
    from transformers import AutoModelForImageClassification

    _, out = exported(name)
    ours = ExecuTorchModelForImageClassification.from_pretrained(str(out))
    eager = AutoModelForImageClassification.from_pretrained(saved(name)).eval()
    generator = torch.Generator().manual_seed(0)
    size = eager.config.image_size
    for image in range(3):
        pixels = torch.rand(1, eager.config.num_channels, size, size, generator=generator) * 2 - 1
        with torch.no_grad():
            want = eager(pixel_values=pixels).logits
        _assert_logits(ours.forward(pixels), want, f"{name}, image {image}")


# ---------------------------------------------------------------------------------------------
# Gemma 3 with optimum's custom caches.

WINDOW = 16  # hf_checkpoints' Gemma 3 sliding window
STEPS = 40  # with the prompt, 47 positions: past the window and round the rings (2 * WINDOW rows)
PROMPT = [1, 17, 42, 99, 5, 230, 7]
# Left to ExecuTorch, each for a reason: the start position, cache_position[0], is an int ExecuTorch
# computes (.item(), a delegate returns tensors only), from position_ids = cache_position.unsqueeze(0)
# picked apart outside (read by the scalar's picks and by the delegate); the sequence length, for
# ExecuTorch's check that the positions fit the caches.
SCALAR_PLUMBING = ["aten._local_scalar_dense", "aten.select_copy", "aten.unsqueeze_copy", "aten.sym_size"]


@pytest.fixture(scope="module")
def custom_cache_program(saved, tmp_path_factory):
    return exported_once(tmp_path_factory,
                         lambda name, out: export(saved(name), "text-generation", out, max_seq_len=CONTEXT,
                                                  use_custom_sdpa=True, use_custom_kv_cache=True))


@pytest.mark.parametrize("name", sorted(CUSTOM_CACHE_LM))
def test_custom_caches_wholly_delegated_as_openvino_state_the_rings_static(name, custom_cache_program):
    program, _ = custom_cache_program(name)
    assert_delegated(program, "forward", allowed_outside=SCALAR_PLUMBING)
    shapes = openvino_variables(program, "forward")
    # All static: a ring grown with the conversation would refuse positions past its rows. Sliding
    # layers 0 and 2: rings of twice the window ([B, rows, H, D]) and the position each row holds;
    # the global layer 1: the whole context.
    assert all(shape.is_static for shape in shapes.values()), shapes
    rows = {variable.rsplit(".", 1)[-1]: shape[0 if "positions" in variable else 1].get_length()
            for variable, shape in shapes.items()}
    expected = {f"{kind}_cache_{layer}": 2 * WINDOW for kind in ("key", "value") for layer in (0, 2)}
    expected.update({"key_cache_1": CONTEXT, "value_cache_1": CONTEXT, "cache_positions_0": 2 * WINDOW,
                     "cache_positions_2": 2 * WINDOW})
    assert rows == expected


@pytest.mark.parametrize("name", sorted(CUSTOM_CACHE_LM))
def test_custom_caches_generate_eager_greedy_ids_past_the_window_with_eager_logits(name, custom_cache_program, saved):
    from optimum.executorch import ExecuTorchModelForCausalLM

    _, out = custom_cache_program(name)
    ours = ExecuTorchModelForCausalLM.from_pretrained(str(out))
    eager = load_eager(saved(name))
    ours.eos_token_ids = [-1]  # random weights may choose the end token; the steps must all run
    generated = ours.generate(prompt_tokens=list(PROMPT), max_seq_len=len(PROMPT) + STEPS)
    with torch.no_grad():
        expected = eager.generate(torch.tensor([PROMPT]), max_new_tokens=STEPS, min_new_tokens=STEPS, do_sample=False,
                                  eos_token_id=None, pad_token_id=0)[0, len(PROMPT):].tolist()
    assert generated == expected
    assert len(set(generated)) > STEPS // 4, "the steps hardly differ"

    # Every step's logits against transformers on the whole sequence so far, without a cache: the
    # prompt in one call, then a token a call, the rings overwritten from position 32 on.
    def eager_logits(sequence):
        with torch.no_grad():
            return eager(input_ids=torch.tensor([sequence]), use_cache=False).logits[0]

    checked = assert_greedy_steps_equal_eager(causal_lm_step(ours), eager_logits, list(PROMPT), STEPS,
                                              lambda got, want, what: _assert_logits(got, want, f"{name}, {what}"))
    assert checked == generated


# ---------------------------------------------------------------------------------------------
# Gemma 3 with vision (multimodal-text-to-text).

# optimum exports the vision encoder with an example image it fetches from this address through the
# processor (VisionExportableModule.prepare_export_inputs); offline, a local random image stands in.
EXAMPLE_IMAGE_URL = "https://llava-vl.github.io/static/images/view.jpg"
MULTIMODAL_STEPS = 30  # after a 15-token prompt: round the 32-row rings


def _image(seed: int, height: int, width: int):
    import numpy as np
    from PIL import Image

    return Image.fromarray((np.random.default_rng(seed).random((height, width, 3)) * 255).astype(np.uint8))


@pytest.fixture(scope="module")
def multimodal_program(saved, tmp_path_factory):
    import PIL  # noqa: F401  Gemma 3's image processor needs Pillow (requirements-optimum.txt)
    import transformers.image_processing_base as images

    def make(name, out):
        folder = saved(name)
        save_gemma3_vision_processor(folder)
        fetch = images.load_image

        def offline(image, *args, **kwargs):
            return _image(1, 60, 80) if image == EXAMPLE_IMAGE_URL else fetch(image, *args, **kwargs)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(images, "load_image", offline)
            # The loader reads max_length, not max_seq_len.
            return export(folder, "multimodal-text-to-text", out, max_length=CONTEXT, use_custom_sdpa=True,
                          use_custom_kv_cache=True)

    return exported_once(tmp_path_factory, make)


@pytest.mark.parametrize("name", sorted(MULTIMODAL))
def test_multimodal_methods_wholly_delegated(name, multimodal_program):
    program, _ = multimodal_program(name)
    assert sorted(program.methods) >= ["text_decoder", "token_embedding", "vision_encoder"]
    assert_delegated(program, "vision_encoder")
    assert_delegated(program, "token_embedding")
    assert_delegated(program, "text_decoder", allowed_outside=SCALAR_PLUMBING)
    assert all(shape.is_static for shape in openvino_variables(program, "text_decoder").values())


@pytest.mark.parametrize("name", sorted(MULTIMODAL))
def test_multimodal_generates_eager_greedy_ids_from_an_image_with_eager_logits(name, multimodal_program, saved):
    from optimum.executorch import ExecuTorchModelForMultiModalToText
    from transformers import AutoModelForImageTextToText, AutoProcessor

    _, out = multimodal_program(name)
    processor = AutoProcessor.from_pretrained(saved(name))
    ours = ExecuTorchModelForMultiModalToText.from_pretrained(str(out))
    eager = AutoModelForImageTextToText.from_pretrained(saved(name)).eval()
    conversation = [{"role": "user", "content": [{"type": "image", "image": _image(0, 40, 48)},
                                                 {"type": "text", "text": "describe the picture"}]}]
    inputs = processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=True, return_dict=True,
                                           return_tensors="pt")
    ids, pixels = inputs["input_ids"], inputs["pixel_values"]
    assert (ids == eager.config.image_token_id).sum() == 4, "the prompt holds the image's 4 tokens"
    with torch.no_grad():  # the image decides the logits, so a wrong vision encoder fails below
        seen, other = (eager(input_ids=ids, pixel_values=p).logits[0, -1] for p in (pixels, pixels.flip(-1)))
    assert (seen - other).abs().max() > 0.1 * seen.abs().mean(), "the image changes nothing"
    # The reference is transformers without the processor's token_type_ids: with them, Gemma 3 lets
    # the image's tokens attend to each other both ways, which optimum's text_decoder (given
    # embeddings and positions only) does not export.
    ours.tokenizer, ours.eos_token_id = processor.tokenizer, -1  # generate prints tokens; all steps run
    generated = ours.generate(prompt_tokens=ids, echo=True, max_seq_len=ids.shape[1] + MULTIMODAL_STEPS,
                              multimodal_features=pixels)  # echo=True: the new ids (echo=False drops the first)
    with torch.no_grad():
        expected = eager.generate(input_ids=ids, pixel_values=pixels, max_new_tokens=MULTIMODAL_STEPS,
                                  min_new_tokens=MULTIMODAL_STEPS, do_sample=False, eos_token_id=None,
                                  pad_token_id=0)[0, ids.shape[1]:].tolist()
    assert generated == expected
    assert len(set(generated)) > MULTIMODAL_STEPS // 4, "the steps hardly differ"

    def eager_logits(sequence):
        with torch.no_grad():
            return eager(input_ids=torch.tensor([sequence]), pixel_values=pixels, use_cache=False).logits[0]

    checked = assert_greedy_steps_equal_eager(causal_lm_step(ours, pixels), eager_logits, ids[0].tolist(),
                                              MULTIMODAL_STEPS,
                                              lambda got, want, what: _assert_logits(got, want, f"{name}, {what}"))
    assert checked == generated
