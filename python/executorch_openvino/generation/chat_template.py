"""A model's chat template, rendered as Hugging Face transformers renders it, without transformers.

A chat model is trained on conversations laid out in one exact way (role markers, special tokens,
newlines); its tokenizer_config.json carries that layout as a Jinja template ("chat_template"),
either one template or a list of named ones of which "default" is the chat's. Tokenizers saved by
recent transformers keep a single template in chat_template.jinja beside the config instead. The
rendering follows apply_chat_template(..., tokenize=False): the same Jinja options (blocks trimmed,
{% break %} and {% continue %}), the variables it passes (messages, add_generation_prompt, tools and
documents as none, the special tokens), a tojson that leaves HTML alone and raise_exception for the
template's own errors. A template is code from a downloaded file, so it runs sandboxed and cannot
change what it is given.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Union

_JINJA_FILE = "chat_template.jinja"
_SPECIAL_TOKENS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


class ChatTemplate:
    """A Jinja chat template and the special tokens it may name."""

    def __init__(self, template: str, special_tokens: Optional[Mapping[str, str]] = None):
        self.source = template
        self.special_tokens = dict(special_tokens or {})
        self._template = _environment().from_string(template)

    @classmethod
    def from_tokenizer_config(cls, path: Union[str, Path]) -> ChatTemplate:
        """The template of a tokenizer_config.json (or of chat_template.jinja beside it)."""
        path = Path(path)
        config = json.loads(path.read_text(encoding="utf-8"))
        template = config.get("chat_template")
        if isinstance(template, list):
            named = {entry["name"]: entry["template"] for entry in template}
            if "default" not in named:
                raise ValueError(f"{path} has chat templates named {sorted(named)}, none of them 'default'")
            template = named["default"]
        if template is None and (path.parent / _JINJA_FILE).is_file():
            template = (path.parent / _JINJA_FILE).read_text(encoding="utf-8")
        if not isinstance(template, str):
            raise ValueError(f"{path} has no chat template (no 'chat_template' string, no {_JINJA_FILE} beside it)")
        tokens = {name: _token_text(config[name]) for name in _SPECIAL_TOKENS if config.get(name) is not None}
        return cls(template, tokens)

    def render(self, messages: List[Dict[str, Any]], add_generation_prompt: bool = True) -> str:
        """The conversation as the model reads it; with add_generation_prompt, followed by the opening
        of the assistant's turn."""
        # None rather than undefined, as transformers passes them: `tools is none` is false for a name never given.
        return self._template.render(messages=messages, add_generation_prompt=add_generation_prompt, tools=None,
                                     documents=None, **self.special_tokens)


def _token_text(token: Union[str, Dict[str, Any]]) -> str:
    """A special token as the config writes it: its text, or a saved AddedToken with a "content"."""
    return token["content"] if isinstance(token, dict) else token


def _environment():
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    environment.filters["tojson"] = _tojson
    environment.globals["raise_exception"] = _raise_exception
    environment.globals["strftime_now"] = _strftime_now
    return environment


def _tojson(value: Any, ensure_ascii: bool = False, indent: Optional[int] = None, separators=None,
            sort_keys: bool = False) -> str:
    # Jinja's own tojson escapes <, >, & and ' for HTML, which would change the prompt's text.
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise_exception(message: str):
    raise ValueError(message)


def _strftime_now(format: str) -> str:
    """Today's date as templates that state it ask for (Llama 3.1's "Today Date")."""
    return datetime.now().strftime(format)
