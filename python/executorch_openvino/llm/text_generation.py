"""Text in, text out: a language-model program, its Hugging Face tokenizer (tokenizer.json) and,
optionally, its chat template, driving the decoding loop (generation/decoding.py) with streamed
text, stop strings and speculative decoding.

    generator = TextGenerator.load("model.pte", "tokenizer.json", chat=True)
    result = generator.generate("Why is the sky blue?", max_new_tokens=128,
                                sampling=SamplingOptions(temperature=0.7, top_p=0.9, seed=1),
                                stop=["\\n\\n"], on_text=print)

Each call starts a new conversation (position 0), or, with `system` saved by keep_prefix(), starts
from its saved state (executorch_openvino.save_state) instead of computing it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Sequence

from ..generation.chat_template import ChatTemplate
from ..generation.decoding import Drafter, DraftModel, LookupDrafter, Result, generate
from ..generation.sampling import SamplingOptions
from ..generation.stopping import StopStrings
from . import text_program


@dataclass
class TextResult:
    text: str
    result: Result  # ids and statistics


class TextGenerator:
    def __init__(self, program: text_program.TextProgram, tokenizer, template: Optional[ChatTemplate] = None):
        self.program = program
        self.tokenizer = tokenizer
        self.template = template
        self._prefix: Optional[List[int]] = None  # the tokens whose state is saved, when one is

    @classmethod
    def load(cls, pte: Path, tokenizer: Path, data: Optional[Path] = None, chat: bool = False,
             chat_template: Optional[Path] = None) -> "TextGenerator":
        """`chat`: lay prompts out with the chat template of the tokenizer_config.json beside the
        tokenizer (or `chat_template`: such a file, or a .jinja template)."""
        from tokenizers import Tokenizer

        tokenizer_path = Path(tokenizer)
        if tokenizer_path.suffix != ".json":
            raise ValueError(f"{tokenizer_path}: this generator reads Hugging Face tokenizer.json files; "
                             "for SentencePiece or tiktoken files use ExecuTorch's runner (the generate command "
                             "without the options it lacks)")
        template = None
        if chat or chat_template is not None:
            source = Path(chat_template) if chat_template is not None else tokenizer_path.with_name("tokenizer_config.json")
            if source.suffix == ".jinja":
                template = ChatTemplate(source.read_text(encoding="utf-8"))
            else:
                if not source.is_file():
                    raise ValueError(f"{source}: no such file; the chat template comes from the model's "
                                     "tokenizer_config.json (give it with --chat-template)")
                template = ChatTemplate.from_tokenizer_config(source)
        return cls(text_program.load(Path(pte), data), Tokenizer.from_file(str(tokenizer_path)), template)

    def encode(self, prompt: str, system: Optional[str] = None) -> List[int]:
        """The prompt's ids: laid out by the chat template (its text carries the special tokens), or
        the program's BOS then the text."""
        if self.template is not None:
            messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
            return self.tokenizer.encode(self.template.render(messages), add_special_tokens=False).ids
        if system:
            raise ValueError("a system prompt needs the chat template (chat=True)")
        ids = self.tokenizer.encode(prompt, add_special_tokens=False).ids
        return ([self.program.bos_id] if self.program.bos_id is not None else []) + ids

    def drafter(self, lookup: bool = False, draft: Optional[Path] = None, data: Optional[Path] = None) -> Optional[Drafter]:
        if lookup and draft is not None:
            raise ValueError("choose prompt lookup or a draft model, not both")
        if lookup:
            return LookupDrafter()
        if draft is not None:
            return DraftModel(text_program.load(Path(draft), data).model)
        return None

    def generate(self, prompt: str, max_new_tokens: int = 128, *, system: Optional[str] = None,
                 sampling: SamplingOptions = SamplingOptions(), stop: Sequence[str] = (),
                 drafter: Optional[Drafter] = None, max_draft: int = 5,
                 on_text: Optional[Callable[[str], None]] = None) -> TextResult:
        ids = self.encode(prompt, system)
        start = 0
        if self._prefix is not None and ids[: len(self._prefix)] == self._prefix and len(ids) > len(self._prefix):
            import executorch_openvino

            executorch_openvino.restore_state(self._prefix_name)  # a draft program's too: it starts again
            start = len(self._prefix)
            if isinstance(drafter, DraftModel):
                drafter.forget()
        stops = StopStrings(list(stop))
        pieces: List[str] = []
        generated: List[int] = []
        shown = 0  # characters of the decoded answer already handed out

        def on_token(token: int) -> bool:
            nonlocal shown
            generated.append(token)
            text = self.tokenizer.decode(generated, skip_special_tokens=True)
            if text.endswith("\ufffd"):  # a character split across tokens: wait for its end
                return False
            out, stopped = stops.feed(text[shown:])
            shown = len(text)
            if out:
                pieces.append(out)
                if on_text is not None:
                    on_text(out)
            return stopped

        result = generate(self.program.model, ids[start:], max_new_tokens, sampling=sampling,
                          eos_ids=self.program.eos_ids, start=start, history=ids[:start], drafter=drafter,
                          max_draft=max_draft, on_token=on_token)
        if result.stopped_by != "stop":
            tail = self.tokenizer.decode(generated, skip_special_tokens=True)[shown:]
            out, _ = stops.feed(tail)
            out += stops.flush()
            if out:
                pieces.append(out)
                if on_text is not None:
                    on_text(out)
        return TextResult("".join(pieces), result)

    def keep_prefix(self, system: str, name: str = "executorch_openvino.system_prompt") -> int:
        """Computes the chat template's layout of `system` up to where a user turn begins and saves
        its state; later generate() calls with the same system prompt start from it. Returns its
        length in tokens."""
        import executorch_openvino
        from ..generation.decoding import prefill

        if self.template is None:
            raise ValueError("keeping a system prompt needs the chat template (chat=True)")
        # The tokens two different user turns share after the system message.
        a, b = self.encode("a", system), self.encode("b", system)
        common = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        prefix = a[:common]
        prefill(self.program.model, prefix, 0)
        executorch_openvino.save_state(name)
        self._prefix, self._prefix_name = prefix, name
        return len(prefix)
