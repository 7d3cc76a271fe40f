"""attention=auto, the default: a language model whose KV caches grow runs with OpenVINO's paged
attention where the state helper can rewrite it on the CPU, and as exported (grown) where a model cache
is in use or the option says so. Each form computes eager's results; which one ran is read from the
compiled models, and no model without grown caches is offered to the helper. Whether the caches grow
is the blob's word (section 9, written by the exporter), not the IR's text."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino
from executorch_openvino.runtime import library
from llm_lowering import PROMPT, attentions, eager_of, load, lowered, ours_of
from llm_models import Conversation


# No option from the environment or set_options before or after a test: the default decides.
pytestmark = pytest.mark.usefixtures("clean_options")


@pytest.fixture(autouse=True)
def alone():
    attentions()  # earlier tests' methods collected: describe_compiled_models lists this test's alone


def _generates_as_eager(case, ours, steps=12):
    expected, expected_logits = Conversation(eager_of("dynamic_prompt", case.model)).generate(PROMPT, steps)
    got, got_logits = Conversation(ours).generate(PROMPT, steps)
    assert got == expected
    torch.testing.assert_close(got_logits[-1], expected_logits[-1], rtol=1e-4, atol=1e-5)


def test_a_language_model_loads_paged_by_default():
    """No option set: the program runs paged, generates eager's ids, and going back into the
    conversation (regenerating from position 3) gives eager's logits."""
    case = lowered("dynamic_prompt")
    ours = ours_of("dynamic_prompt", load(case.pte))
    assert "paged" in attentions()
    _generates_as_eager(case, ours)
    eager = eager_of("dynamic_prompt", case.model)
    eager(torch.tensor([PROMPT]), 0)
    torch.testing.assert_close(ours(torch.tensor([[77]]), 3), eager(torch.tensor([[77]]), 3), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("attention", ["grown", "auto-with-cache", "auto-on-device-AUTO"])
def test_grown_when_asked_or_when_a_model_cache_is_in_use(attention, tmp_path):
    """attention=grown keeps the caches as exported. With cache_dir the default is grown too: a model
    cache is there for quick loads, and a paged model cannot be stored; so the second load is imported
    from the cache. On a device other than the CPU (AUTO, which may pick another) the default is grown.
    Each computes eager's ids."""
    if attention == "grown":
        executorch_openvino.set_options(attention="grown")
    elif attention == "auto-with-cache":
        executorch_openvino.set_options(cache_dir=str(tmp_path))
    else:
        executorch_openvino.set_options(device="AUTO")
    case = lowered("dynamic_prompt")
    sources = []
    for _ in range(2 if attention == "auto-with-cache" else 1):
        ours = ours_of("dynamic_prompt", load(case.pte))
        models = library.load().describe_compiled_models()
        assert all("attention" not in model for model in models), models
        sources += [model["source"] for model in models]
        _generates_as_eager(case, ours)
        del ours, models
        attentions()  # collects the method, so that the next load is a new compiled model
    if attention == "auto-with-cache":
        assert sources == ["ir", "cache"], sources
        assert list(tmp_path.iterdir())


def test_a_model_without_grown_caches_is_not_offered_to_the_helper(capfd):
    """The same Llama exported with its caches as inputs and outputs (stateful=False) has no grown caches:
    the default neither rewrites it nor says anything about attention."""
    case = lowered("dynamic_prompt", stateful=False)
    assert case.grown_caches == 0  # the blob says nothing of growing caches
    capfd.readouterr()
    method = load(case.pte)
    assert method is not None
    assert all("attention" not in model for model in library.load().describe_compiled_models())
    assert "attention=" not in capfd.readouterr().err


def test_auto_pages_a_model_because_its_blob_says_its_caches_grow(monkeypatch):
    """The same export without the blob's grown-caches section, as a blob written before the format's
    1.5 is, runs as exported under the default, and paged only when asked (attention=paged): the
    runtime takes the exporter's word, not a search of the IR's text for the caches' names (which
    would page it under the default too, the wrong variant this guards against)."""
    from executorch_openvino.container import writer

    build_blob = writer.build_blob
    monkeypatch.setattr(writer, "build_blob", lambda *args: build_blob(*args[:6]))  # all but grown_caches
    case = lowered.__wrapped__("dynamic_prompt")
    method = load(case.pte)
    assert attentions() == ["grown"]
    _generates_as_eager(case, ours_of("dynamic_prompt", method))
    del method
    attentions()
    with executorch_openvino.using_options(attention="paged"):
        method = load(case.pte)
        assert attentions() == ["paged"]
