"""Text in, text out: a language-model program, its Hugging Face tokenizer (tokenizer.json) and,
optionally, its chat template, on the generation engine (generation/engine.py): prompts laid out and
tokenized here, everything else (sampling, speculative decoding, stop strings, whole-character text,
constraints) the engine's, as on every other front.

    generator = TextGenerator.load("model.pte", "tokenizer.json", chat=True)
    result = generator.generate("Why is the sky blue?", max_new_tokens=128,
                                sampling=SamplingOptions(temperature=0.7, top_p=0.9, seed=1),
                                stop=["\\n\\n"], on_text=print)

One generator holds one conversation: each generate() starts a new one, and the engine feeds only
what the program does not hold already (a system prompt shared with the last question is not
computed again). keep_prefix() also saves the system prompt's state, to start from after the program
held something else. generate_many() runs several prompts at once, their steps batched.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Sequence

from ..generation.chat_template import ChatTemplate
from ..generation.engine import Constraint, Conversation, Program, Result, SamplingOptions, Vocabulary


@dataclass
class TextResult:
    text: str
    result: Result  # ids and statistics


class TextGenerator:
    def __init__(self, program: Program, tokenizer, tokenizer_json: str, template: Optional[ChatTemplate] = None):
        self.program = program
        self.tokenizer = tokenizer
        self.tokenizer_json = tokenizer_json
        self.template = template
        self.vocabulary = Vocabulary.from_tokenizer(tokenizer_json, program.vocab)
        self.conversation = Conversation(program)
        self._prefix: Optional[List[int]] = None  # the tokens whose state is saved, when one is
        self._prefix_name = ""
        self._drafts = {}  # draft programs by path, loaded once
        self._continuing = False  # after load_state: a prompt continues the conversation read back
        self._batched: List[Conversation] = []  # generate_many's conversations, made as needed

    @classmethod
    def load(cls, pte: Path, tokenizer: Path, data: Optional[Path] = None, chat: bool = False,
             chat_template: Optional[Path] = None) -> "TextGenerator":
        """`chat`: lay prompts out with the chat template of the tokenizer_config.json beside the
        tokenizer (or `chat_template`: such a file, or a .jinja template). Raises ValueError with the
        reason for a tokenizer this generator cannot read or that does not match the program."""
        from tokenizers import Tokenizer

        tokenizer_path = Path(tokenizer)
        if tokenizer_path.suffix != ".json":
            raise ValueError(f"{tokenizer_path}: the engine reads Hugging Face tokenizer.json files; a SentencePiece "
                             "or tiktoken file goes through ExecuTorch's runner (docs/generation.md)")
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
        program = Program.load(Path(pte), data)
        text = tokenizer_path.read_text(encoding="utf-8")
        parsed = Tokenizer.from_str(text)
        size = parsed.get_vocab_size(with_added_tokens=True)
        if size > program.vocab:
            raise ValueError(f"{tokenizer_path} has {size} tokens but {pte} has a vocabulary of {program.vocab}: "
                             "the tokenizer is another model's")
        return cls(program, parsed, text, template)

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

    def load_state(self, path: Path) -> int:
        """Continues the conversation a state file holds (save_state's, in this process or another): the
        next generate() appends its prompt's tokens to it, as they are, without BOS or the chat template
        (the file keeps tokens, not turns). Returns how many tokens it holds. Raises GenerationValueError
        for a file of another program or options, or a damaged one."""
        if self.template is not None:
            raise ValueError("a state file continues the conversation's tokens; with the chat template a turn's "
                             "layout depends on a history the file does not keep (use it without chat=True)")
        self.conversation.read_state(path)
        self._continuing = True
        return len(self.conversation.tokens)

    def save_state(self, path: Path) -> None:
        """Writes the conversation so far (its tokens and the program's caches for them) to `path`."""
        self.conversation.write_state(path)

    def constraint(self, kind: str, grammar) -> Constraint:
        """Output held to a JSON schema (a dict or its text), a regex or a Lark grammar; ends at the
        program's end-of-sequence ids (the tokenizer's when the program names none)."""
        eos = self.program.eos_ids or [i for i in (self.tokenizer.token_to_id(t) for t in ("</s>", "<|endoftext|>"))
                                       if i is not None]
        if not eos:
            raise ValueError("the output's end is unknown: the program names no end-of-sequence id (export it with "
                             "base.metadata, docs/llm.md)")
        return Constraint(kind, grammar, self.tokenizer_json, eos)

    def draft_program(self, path: Path, data: Optional[Path] = None) -> Program:
        key = (str(path), str(data))
        if key not in self._drafts:
            self._drafts[key] = Program.load(Path(path), data)
        return self._drafts[key]

    def generate(self, prompt: str, max_new_tokens: int = 128, *, system: Optional[str] = None,
                 sampling: SamplingOptions = SamplingOptions(), stop: Sequence[str] = (), lookup: bool = False,
                 draft: Optional[Path] = None, max_draft: int = 5, constraint=None,
                 on_text: Optional[Callable[[str], None]] = None) -> TextResult:
        """A new conversation: the prompt (with `system` when laid out by the chat template), then up
        to max_new_tokens. `on_text` sees the text as it comes, in whole characters."""
        if lookup and draft is not None:
            raise ValueError("choose prompt lookup or a draft program, not both")
        if self._continuing:
            if system:
                raise ValueError("a system prompt needs the chat template, which a state file's conversation does not use")
            ids = self.conversation.tokens + self.tokenizer.encode(prompt, add_special_tokens=False).ids
        else:
            ids = self.encode(prompt, system)
        held = self.conversation.tokens
        if self._prefix is not None and ids[: len(self._prefix)] == self._prefix and not _starts_with(held, self._prefix):
            self.conversation.restore(self._prefix_name)
        result = self.conversation.generate(
            ids, max_new_tokens, sampling=sampling, lookup=lookup,
            draft=self.draft_program(draft) if draft is not None else None, max_draft=max_draft,
            vocabulary=self.vocabulary, stop=list(stop), constraint=constraint,
            on_text=(lambda text: on_text(text) and False) if on_text is not None else None)
        return TextResult(result.text, result)

    def generate_many(self, prompts: Sequence[str], max_new_tokens: int = 128, *, system: Optional[str] = None,
                      sampling=SamplingOptions(), stop: Sequence[str] = ()) -> List[TextResult]:
        """Each prompt a new conversation, all generating at once: their steps run in one call of the
        program (continuous batching), which costs little more than one conversation's step. Each text
        is the one generate() gives that prompt alone. `sampling`: one SamplingOptions for all, or one
        per prompt. Needs a program that gives each token's position and returns every position's
        logits (the openvino recipe's logits="all", export-hf --logits all); others raise
        GenerationValueError with the reason."""
        options = list(sampling) if isinstance(sampling, (list, tuple)) else [sampling] * len(prompts)
        if len(options) != len(prompts):
            raise ValueError(f"{len(options)} sampling options for {len(prompts)} prompts")
        ids = [self.encode(prompt, system) for prompt in prompts]
        while len(self._batched) < len(prompts):
            self._batched.append(Conversation(self.program, batched=True))
        results: List[Optional[TextResult]] = [None] * len(prompts)
        failures: List[BaseException] = []

        def run(i: int) -> None:
            try:
                done = self._batched[i].generate(ids[i], max_new_tokens, sampling=options[i],
                                                 vocabulary=self.vocabulary, stop=list(stop))
                results[i] = TextResult(done.text, done)
            except BaseException as error:  # noqa: BLE001 - raised below, on the caller's thread
                failures.append(error)

        threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(prompts))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if failures:
            raise failures[0]
        return results

    def keep_prefix(self, system: str, name: str = "executorch_openvino.system_prompt") -> int:
        """Computes the chat template's layout of `system` up to where a user turn begins and saves
        its state; later generate() calls with the same system prompt start from it. Returns its
        length in tokens."""
        if self.template is None:
            raise ValueError("keeping a system prompt needs the chat template (chat=True)")
        # The tokens two different user turns share after the system message.
        a, b = self.encode("a", system), self.encode("b", system)
        common = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        prefix = a[:common]
        self.conversation.generate(prefix, 0)
        self.conversation.save(name)
        self._prefix, self._prefix_name = prefix, name
        return len(prefix)


def _starts_with(tokens: Sequence[int], prefix: Sequence[int]) -> bool:
    return len(tokens) >= len(prefix) and list(tokens[: len(prefix)]) == list(prefix)
