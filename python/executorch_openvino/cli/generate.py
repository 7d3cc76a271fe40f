"""`generate model.pte --tokenizer T --prompt P`: text generation on the engine (generation/engine.py,
the one every front uses), printing the text as it comes (whole characters) and then the prompt and
generation speed and the process's peak memory. Errors go to standard error with their reason.

A tokenizer.json (Hugging Face) is what the engine reads. A SentencePiece tokenizer.model or a
tiktoken file goes through ExecuTorch's own LLM runner instead (TextLLMRunner, which reads those), with
only the options it has: the one difference between the two, docs/generation.md."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import sys
from pathlib import Path

from .argument_types import positive
from .progress import say
from .run_options import options_applied
from .user_errors import CliError, usage_error
from ._third_party_noise import native_stderr_filtered
from .run import add_data_argument, add_option_argument

# The runner's and its tokenizers' progress lines, which it writes to file descriptor 2 as it goes;
# this command prints the same numbers once, at the end. Errors still show (and raise).
RUNNER_PROGRESS_LINE = re.compile(
    rb"^(\[|I tokenizers:)(text_llm_runner|text_prefiller|text_decoder_runner|text_token_generator|"
    rb"llm_runner_helper|stats|util|regex|hf_tokenizer|tiktoken|sentencepiece)\.(cpp|h):\d+\] ")


HELP = "generate text with a .pte language model"
DESCRIPTION = ("Generates text from a .pte language model (ExecuTorch's LLM export writes the metadata it reads: "
               "the context, BOS and EOS; so does executorch_openvino.llm.text_runner_metadata) on the package's "
               "generation engine, then prints the prompt and generation speeds and the peak memory. With a "
               "tokenizer.model or tiktoken file, through ExecuTorch's LLM runner instead.")


def add_arguments(parser) -> None:
    parser.add_argument("pte", type=Path, metavar="MODEL.pte")
    parser.add_argument("--tokenizer", type=Path, required=True, metavar="FILE",
                        help="the tokenizer: tokenizer.json (Hugging Face), tokenizer.model (SentencePiece) "
                        "or a tiktoken file")
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--prompt")
    given.add_argument("--prompts-file", type=Path, metavar="FILE",
                       help="one prompt a line, all generated at once, their steps batched (a Hugging Face program "
                       "with every position's logits: export-hf --logits all)")
    add_data_argument(parser)
    parser.add_argument("--max-new-tokens", type=positive(int), default=64, metavar="N", help="default 64")
    parser.add_argument("--temperature", type=float, default=0.0, help="0 (the default) is greedy")
    loop = parser.add_argument_group("options of the engine (a tokenizer.json)")
    loop.add_argument("--top-k", type=int, default=0, metavar="K", help="sample from the K likeliest (0: off)")
    loop.add_argument("--top-p", type=float, default=1.0, metavar="P", help="nucleus sampling (1: off)")
    loop.add_argument("--repetition-penalty", type=float, default=1.0, metavar="R", help="as transformers' (1: off)")
    loop.add_argument("--seed", type=int, default=None, help="fixes the sampled tokens")
    loop.add_argument("--stop", action="append", default=[], metavar="TEXT",
                      help="stop when the text holds TEXT (repeatable); TEXT is not printed")
    loop.add_argument("--chat", action="store_true",
                      help="lay the prompt out with the model's chat template (tokenizer_config.json beside the tokenizer)")
    loop.add_argument("--chat-template", type=Path, metavar="FILE",
                      help="the chat template: a tokenizer_config.json or a .jinja file (implies --chat)")
    loop.add_argument("--system", help="a system prompt (with the chat template)")
    loop.add_argument("--lookup", action="store_true",
                      help="speculative decoding with drafts looked up in the conversation")
    loop.add_argument("--draft", type=Path, metavar="DRAFT.pte",
                      help="speculative decoding with a smaller model of the same vocabulary")
    shape = loop.add_mutually_exclusive_group()
    shape.add_argument("--json-schema", type=Path, metavar="FILE",
                       help="the output is JSON valid under this JSON schema (structured output)")
    shape.add_argument("--regex", metavar="EXPR", help="the output matches this regular expression")
    shape.add_argument("--grammar", type=Path, metavar="FILE", help="the output follows this Lark grammar")
    loop.add_argument("--max-draft", type=positive(int), default=5, metavar="N", help="drafts per step (default 5)")
    parser.add_argument("--echo", action="store_true", help="print the prompt before the generated text")
    loop.add_argument("--show-ids", action="store_true", help="print the generated token ids after the text")
    loop.add_argument("--load-state", type=Path, metavar="FILE",
                      help="continue the conversation a state file holds: the prompt's tokens follow it")
    loop.add_argument("--save-state", type=Path, metavar="FILE",
                      help="write the conversation (prompt and answer, and the caches for them) to FILE")
    parser.add_argument("--quiet", action="store_true", help="print only the numbers, not the text")
    add_option_argument(parser)


def main(args) -> int:
    for path, what in ((args.pte, "program"), (args.tokenizer, "tokenizer"), (args.data, "data file")):
        if path is not None and not path.is_file():
            raise usage_error(f"{path}: no such file (the {what})")
    if args.draft is not None and not args.draft.is_file():
        raise usage_error(f"{args.draft}: no such file (the draft model)")
    with options_applied(args.option):
        if args.prompts_file is not None:
            return _generate_many(args)
        return _generate_with_loop(args) if _uses_engine(args) else _generate(args)


def _uses_engine(args) -> bool:
    """Whether the engine runs this (a tokenizer.json), not ExecuTorch's runner."""
    return args.tokenizer.suffix == ".json"


# The engine's option names as the command line spells them.
FLAGS = {"temperature": "--temperature", "top_k": "--top-k", "top_p": "--top-p",
         "repetition_penalty": "--repetition-penalty", "max_draft": "--max-draft"}


def _flagged(message: str) -> str:
    for name, flag in FLAGS.items():
        if message.startswith(name + " "):
            return flag + message[len(name):]
    return message


def _generate_with_loop(args) -> int:
    import time

    from ..generation.engine import GenerationError, SamplingOptions
    from ..llm.text_generation import TextGenerator

    sampling = SamplingOptions(temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
                               repetition_penalty=args.repetition_penalty, seed=args.seed)
    out = sys.stdout
    printed = []

    def show(text: str) -> None:
        printed.append(text)
        out.write(text)
        out.flush()

    continued = None
    try:
        began = time.perf_counter()
        generator = TextGenerator.load(args.pte, args.tokenizer, args.data, chat=args.chat,
                                       chat_template=args.chat_template)
        constraint = _constraint(generator, args)
        if args.load_state is not None:
            if not args.load_state.is_file():
                raise usage_error(f"{args.load_state}: no such file (the state to continue)")
            continued = generator.load_state(args.load_state)
        load_ms = (time.perf_counter() - began) * 1000
        if args.echo and not args.quiet:
            out.write(args.prompt)
        done = generator.generate(args.prompt, args.max_new_tokens, system=args.system, sampling=sampling,
                                  stop=args.stop, lookup=args.lookup, draft=args.draft, max_draft=args.max_draft,
                                  constraint=constraint, on_text=None if args.quiet else show)
        if args.save_state is not None:
            generator.save_state(args.save_state)
    except (ValueError, GenerationError) as error:
        if printed:  # the reason on a line of its own, not glued to the text
            out.write("\n")
            out.flush()
        raise CliError(_flagged(str(error))) from error
    if not args.quiet:
        say()
    if args.show_ids:
        print("ids: " + " ".join(map(str, done.result.tokens)), flush=True)
    stats = done.result.statistics
    prompt_ms, decode_ms = stats.prefill_s * 1000, stats.decode_s * 1000
    decoded = max(stats.generated - 1, 0)
    say(f"prompt: {stats.prompt_tokens} tokens in {prompt_ms:.0f} ms ({_rate(stats.prompt_tokens, prompt_ms)})")
    say(f"time to first token: {stats.first_token_s * 1000:.0f} ms")
    say(f"generated: {stats.generated} tokens, {decoded} after the first in {decode_ms:.0f} ms "
        f"({_rate(decoded, decode_ms)}); stopped by {done.result.stopped_by}")
    if stats.drafted:
        say(f"speculative: {stats.accepted} of {stats.drafted} drafts accepted ({100 * stats.acceptance:.0f} %), "
            f"{stats.calls} calls of the model")
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    say(f"model load: {load_ms:.0f} ms; peak RSS of the process {peak_mib:.0f} MiB")
    if continued is not None:
        say(f"state: continued {continued} tokens from {args.load_state}")
    if args.save_state is not None:
        say(f"state: {len(generator.conversation.tokens)} tokens written to {args.save_state}")
    return 0


def _generate_many(args) -> int:
    """--prompts-file: every line's prompt a conversation, generated at once (TextGenerator.generate_many);
    each text under a header numbering it, then the totals."""
    import time

    from ..generation.engine import GenerationError, SamplingOptions
    from ..llm.text_generation import TextGenerator

    if not _uses_engine(args):
        raise usage_error("--prompts-file needs a tokenizer.json (the engine)")
    alone = [flag for flag, on in (("--lookup", args.lookup), ("--draft", args.draft), ("--json-schema", args.json_schema),
                                   ("--regex", args.regex), ("--grammar", args.grammar), ("--echo", args.echo),
                                   ("--load-state", args.load_state), ("--save-state", args.save_state)) if on]
    if alone:
        raise usage_error(f"{alone[0]} is for one prompt; --prompts-file generates several at once")
    if not args.prompts_file.is_file():
        raise usage_error(f"{args.prompts_file}: no such file (the prompts)")
    prompts = [line for line in args.prompts_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not prompts:
        raise usage_error(f"{args.prompts_file} holds no prompt (one a line)")
    # A seed fixes every prompt's draws, each its own: seed, seed + 1, ...
    sampling = [SamplingOptions(temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
                                repetition_penalty=args.repetition_penalty,
                                seed=None if args.seed is None else args.seed + i) for i in range(len(prompts))]
    try:
        generator = TextGenerator.load(args.pte, args.tokenizer, args.data, chat=args.chat,
                                       chat_template=args.chat_template)
        began = time.perf_counter()
        done = generator.generate_many(prompts, args.max_new_tokens, system=args.system, sampling=sampling,
                                       stop=args.stop)
        seconds = time.perf_counter() - began
    except (ValueError, GenerationError) as error:
        raise CliError(_flagged(str(error))) from error
    for number, result in enumerate(done, 1):
        if not args.quiet:
            print(f"--- prompt {number} ---\n{result.text}", flush=True)
        if args.show_ids:
            print("ids: " + " ".join(map(str, result.result.tokens)), flush=True)
    generated = sum(result.result.statistics.generated for result in done)
    say(f"{len(prompts)} prompts generated at once: {generated} tokens in {seconds * 1000:.0f} ms "
        f"({_rate(generated, seconds * 1000)}, prompts included)")
    return 0


def _constraint(generator, args):
    for kind, value, read in (("json_schema", args.json_schema, True), ("regex", args.regex, False),
                              ("lark", args.grammar, True)):
        if value is not None:
            if read and not value.is_file():
                raise usage_error(f"{value}: no such file (the {kind.replace('_', ' ')})")
            return generator.constraint(kind, value.read_text(encoding="utf-8") if read else value)
    return None


ENGINE_ONLY = (("show_ids", False, "--show-ids"), ("json_schema", None, "--json-schema"), ("regex", None, "--regex"), ("grammar", None, "--grammar"), ("top_k", 0, "--top-k"), ("top_p", 1.0, "--top-p"), ("repetition_penalty", 1.0, "--repetition-penalty"),
               ("seed", None, "--seed"), ("stop", [], "--stop"), ("chat", False, "--chat"),
               ("chat_template", None, "--chat-template"), ("system", None, "--system"), ("lookup", False, "--lookup"),
               ("draft", None, "--draft"), ("load_state", None, "--load-state"), ("save_state", None, "--save-state"))


def _generate(args) -> int:
    given = [flag for name, default, flag in ENGINE_ONLY if getattr(args, name) != default]
    if given:
        raise usage_error(f"{' '.join(given)} need(s) a tokenizer.json (the engine); {args.tokenizer.name} goes "
                          "through ExecuTorch's runner, which has only --max-new-tokens, --temperature and --echo")
    quiet_runner = not getattr(args, "verbose", False)
    stats = []
    with contextlib.ExitStack() as stack:
        # The runner prints each piece (and a "PyTorchObserver" line of JSON) to file descriptor 1
        # itself; that goes to /dev/null, and this command prints the pieces it is handed.
        text_out = stack.enter_context(_runner_stdout_discarded())
        if quiet_runner:
            stack.enter_context(native_stderr_filtered(RUNNER_PROGRESS_LINE))
        import executorch_openvino  # noqa: F401  (loads our library with the runner's module)
        from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner

        def print_piece(piece: str) -> None:
            if not args.quiet:
                os.write(text_out, piece.encode("utf-8", "replace"))

        config = GenerationConfig(max_new_tokens=args.max_new_tokens, temperature=args.temperature, echo=args.echo)
        try:
            runner = TextLLMRunner(str(args.pte), str(args.tokenizer), str(args.data) if args.data else None)
            runner.generate(args.prompt, config, token_callback=print_piece, stats_callback=stats.append)
        except RuntimeError as error:
            os.write(text_out, b"\n")
            raise CliError(f"ExecuTorch's runner failed on {args.pte}: {error} (its log, with the reason: run with -v)") from error
    if not args.quiet:
        say()
    if not stats:
        raise CliError("the runner returned no statistics")
    for line in describe(stats[0]):
        say(line)
    return 0


@contextlib.contextmanager
def _runner_stdout_discarded():
    """Yields a descriptor of the real standard output while descriptor 1 points at /dev/null."""
    sys.stdout.flush()
    real = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    try:
        yield real
    finally:
        sys.stdout.flush()
        os.dup2(real, 1)
        os.close(real)


def describe(stats) -> list:
    """Lines of the run's numbers, from the runner's Stats (times in milliseconds)."""
    prompt_ms = stats.prompt_eval_end_ms - stats.inference_start_ms
    first_ms = stats.first_token_ms - stats.inference_start_ms
    decode_ms = stats.inference_end_ms - stats.first_token_ms
    decoded = max(stats.num_generated_tokens - 1, 0)  # the first token comes with the prompt
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    lines = [
        f"prompt: {stats.num_prompt_tokens} tokens in {prompt_ms:.0f} ms ({_rate(stats.num_prompt_tokens, prompt_ms)})",
        f"time to first token: {first_ms:.0f} ms",
        f"generated: {stats.num_generated_tokens} tokens, {decoded} after the first in {decode_ms:.0f} ms "
        f"({_rate(decoded, decode_ms)})",
        f"model load: {stats.model_load_end_ms - stats.model_load_start_ms:.0f} ms; peak RSS of the process {peak_mib:.0f} MiB",
    ]
    return lines


def _rate(tokens: int, ms: float) -> str:
    return f"{tokens * 1000.0 / ms:.1f} tokens/s" if ms > 0 and tokens else "rate n/a"
