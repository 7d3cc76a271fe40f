"""Chat templates (generation/chat_template.py) render as transformers' apply_chat_template(...,
tokenize=False) renders them, read from the files transformers saves: templates shaped like ChatML,
Llama 3 and Gemma, over conversations with and without a system message, with and without the
generation prompt; the named-template list, tokens saved as dicts, the template's own errors, a
tojson that leaves HTML alone, and a sandbox that keeps the template from what it is given."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import jinja2
import pytest
from tokenizers import Tokenizer, models
from transformers import PreTrainedTokenizerFast

from executorch_openvino.generation import ChatTemplate

CHATML = """{% for message in messages %}
    {% if message.content is none %}
        {% continue %}
    {% endif %}
    {% if loop.first and message.role != 'system' %}
<|im_start|>system
You are a helpful assistant.<|im_end|>
    {% endif %}
<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endfor %}
{% if add_generation_prompt %}
<|im_start|>assistant
{% endif %}"""

LLAMA3 = """{{- bos_token }}
{%- if messages[0].role == 'system' %}
    {%- set system = messages[0].content | trim %}
    {%- set turns = messages[1:] %}
{%- else %}
    {%- set system = 'Answer briefly.' %}
    {%- set turns = messages %}
{%- endif %}
{%- if tools is not none %}
    {%- set system = system + '\\nTools: ' + tools | tojson %}
{%- endif %}
{{- '<|start_header_id|>system<|end_header_id|>\\n\\n' + system + '<|eot_id|>' }}
{%- for message in turns %}
    {%- if (message.role == 'user') != loop.index0 is even %}
        {{- raise_exception('turns must go user, assistant, user, ... (turn ' ~ loop.index ~ ' is ' ~ message.role ~ ')') }}
    {%- endif %}
    {{- '<|start_header_id|>' + message.role + '<|end_header_id|>\\n\\n' + message.content | trim }}
    {%- if message.data is defined %}
        {{- '\\n' + message.data | tojson(indent=2) }}
    {%- endif %}
    {{- '<|eot_id|>' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}
{%- endif %}"""

GEMMA = """{{ bos_token }}{% if messages[0]['role'] == 'system' %}
{% set preamble = messages[0]['content'] | trim + '\\n\\n' %}
{% set rest = messages[1:] %}
{% else %}
{% set preamble = '' %}
{% set rest = messages %}
{% endif %}
{% for message in rest %}
{% if message['role'] not in ('user', 'assistant') %}
{{ raise_exception('Gemma-style turns are user or assistant, not ' + message['role']) }}
{% endif %}
{% set role = 'model' if message['role'] == 'assistant' else 'user' %}
<start_of_turn>{{ role }}
{{ (preamble if loop.first else '') + message['content'] | trim }}<end_of_turn>
{% endfor %}
{% if add_generation_prompt %}
<start_of_turn>model
{% endif %}"""

SYSTEM = {"role": "system", "content": "  You speak like a pirate.\n"}
TURNS = [{"role": "user", "content": "Where is the treasure?"},
         {"role": "assistant", "content": "Under the <b>palm</b> & the rock, matey. "},
         {"role": "user", "content": "Which palm? \"The tall one\"?",
          "data": {"map": "x marks <the> spot & 'more'", "size": [3, 4], "naïve": True}},
         {"role": "assistant", "content": "Aye."},
         {"role": "user", "content": "\n Thanks.\n"}]
CONVERSATIONS = [TURNS, [SYSTEM] + TURNS, [SYSTEM] + TURNS[:1], TURNS[:3]]


def _saved(tmp_path: Path, template, **kwargs) -> Path:
    """A tokenizer of a few letters with the template, saved by transformers; its folder."""
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{c: i + 3 for i, c in enumerate("abcdefgh")}}
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.BPE(vocab, [], unk_token="<unk>")),
                                        bos_token="<s>", eos_token="</s>", unk_token="<unk>")
    tokenizer.chat_template = template
    tokenizer.save_pretrained(tmp_path, **kwargs)
    return tmp_path


def _transformers(folder: Path, messages, add_generation_prompt: bool) -> str:
    tokenizer = PreTrainedTokenizerFast.from_pretrained(folder)
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=add_generation_prompt)


@pytest.mark.parametrize("template", [CHATML, LLAMA3, GEMMA], ids=["chatml", "llama3", "gemma"])
def test_rendering_is_transformers(tmp_path, template):
    folder = _saved(tmp_path, template, save_jinja_files=False)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    assert config["chat_template"] == template and not (folder / "chat_template.jinja").exists()
    ours = ChatTemplate.from_tokenizer_config(folder / "tokenizer_config.json")
    for messages in CONVERSATIONS:
        for add_generation_prompt in (True, False):
            rendered = ours.render(messages, add_generation_prompt=add_generation_prompt)
            assert rendered == _transformers(folder, messages, add_generation_prompt), (messages, add_generation_prompt)
    assert ours.render(CONVERSATIONS[0]) != ours.render(CONVERSATIONS[0], add_generation_prompt=False)


def test_the_special_tokens_are_read_as_strings_or_as_saved_tokens(tmp_path):
    folder = _saved(tmp_path, LLAMA3, save_jinja_files=False)
    path = folder / "tokenizer_config.json"
    config = json.loads(path.read_text())
    config["bos_token"] = {"__type": "AddedToken", "content": "<s>", "lstrip": False, "normalized": False,
                           "rstrip": False, "single_word": False, "special": True}
    path.write_text(json.dumps(config))
    rendered = ChatTemplate.from_tokenizer_config(path).render(TURNS)
    assert rendered.startswith("<s><|start_header_id|>system") and rendered == _transformers(folder, TURNS, True)


def test_the_default_of_named_templates_and_a_template_saved_beside_the_config(tmp_path):
    folder = _saved(tmp_path / "named", {"tool_use": CHATML, "default": GEMMA}, save_jinja_files=False)
    named = json.loads((folder / "tokenizer_config.json").read_text())["chat_template"]
    assert [entry["name"] for entry in named] == ["tool_use", "default"]  # the list form
    rendered = ChatTemplate.from_tokenizer_config(folder / "tokenizer_config.json").render(TURNS)
    assert "<start_of_turn>model" in rendered and rendered == _transformers(folder, TURNS, True)

    folder = _saved(tmp_path / "jinja", CHATML)  # transformers' default: chat_template.jinja
    assert (folder / "chat_template.jinja").exists()
    rendered = ChatTemplate.from_tokenizer_config(folder / "tokenizer_config.json").render(TURNS)
    assert "<|im_start|>" in rendered and rendered == _transformers(folder, TURNS, True)


def test_a_config_without_a_usable_template_is_refused_naming_the_file(tmp_path):
    path = _saved(tmp_path / "none", None) / "tokenizer_config.json"
    with pytest.raises(ValueError, match=f"{path}.*no chat template"):
        ChatTemplate.from_tokenizer_config(path)
    path = tmp_path / "no_default.json"
    path.write_text(json.dumps({"chat_template": [{"name": "tool_use", "template": CHATML}]}))
    with pytest.raises(ValueError, match=f"{path}.*'tool_use'.*default"):
        ChatTemplate.from_tokenizer_config(path)


def test_the_templates_own_error_is_a_value_error_with_its_message(tmp_path):
    folder = _saved(tmp_path, LLAMA3, save_jinja_files=False)
    wrong = [TURNS[1], TURNS[0]]
    with pytest.raises(ValueError, match=r"^turns must go user, assistant, user, \.\.\. \(turn 1 is assistant\)$"):
        ChatTemplate.from_tokenizer_config(folder / "tokenizer_config.json").render(wrong)
    with pytest.raises(jinja2.TemplateError, match=r"turn 1 is assistant"):
        _transformers(folder, wrong, True)  # the same message from transformers


def test_tojson_leaves_html_and_other_scripts_alone():
    message = {"role": "user", "content": "<b>tom & 'jerry'</b> café"}
    rendered = ChatTemplate("{{ messages[0] | tojson }}|{{ messages | tojson(indent=1) }}").render([message])
    assert rendered == json.dumps(message, ensure_ascii=False) + "|" + json.dumps([message], ensure_ascii=False,
                                                                                  indent=1)


def test_templates_may_ask_for_the_date():
    before = datetime.now().strftime("%Y-%m-%d")
    rendered = ChatTemplate("Today: {{ strftime_now('%Y-%m-%d') }}").render([])
    assert rendered in (f"Today: {before}", f"Today: {datetime.now().strftime('%Y-%m-%d')}")


def test_the_template_cannot_change_or_reach_beyond_what_it_is_given():
    messages = [{"role": "user", "content": "hi"}]
    with pytest.raises(jinja2.exceptions.SecurityError):
        ChatTemplate("{{ messages.append({'role': 'system', 'content': 'obey'}) }}").render(messages)
    with pytest.raises(jinja2.exceptions.SecurityError):
        ChatTemplate("{{ messages[0].update(content='changed') }}").render(messages)
    with pytest.raises(jinja2.exceptions.SecurityError):
        ChatTemplate("{{ ''.__class__.__mro__[1].__subclasses__() }}").render(messages)
    assert messages == [{"role": "user", "content": "hi"}]


def test_importing_the_package_needs_neither_torch_nor_jinja():
    code = ("import sys, executorch_openvino.generation\n"
            "print(sorted(m for m in ('torch', 'jinja2', 'transformers') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={"PYTHONPATH": str(Path(__file__).resolve().parents[3] / "python")})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
