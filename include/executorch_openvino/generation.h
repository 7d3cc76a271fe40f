// The generation engine of libexecutorch_openvino_generation, for C and C++ callers: language-model
// programs, conversations on them, greedy, sampled and speculative decoding, stop strings, text
// streamed as whole UTF-8 characters, and output held to a JSON schema, a regex or a grammar. The
// Python package and the command line bind to the same functions (docs/generation.md).
//
//   eov_program* program;
//   if (eov_program_load("model.pte", NULL, NULL, &program) != 0) puts(eov_generation_last_error());
//   eov_conversation* chat = eov_conversation_new(program);
//   eov_generation_options options;
//   eov_generation_options_init(&options);
//   options.max_new_tokens = 128;
//   eov_generation_result result = {sizeof result};   // C; in C++: result{}, then set struct_size
//   eov_conversation_generate(chat, prompt_ids, prompt_count, &options, &result);
//
// Every function that can fail returns 0, or a non-zero code with the reason in
// eov_generation_last_error() (the calling thread's, whole: the numbers, the option and its range).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "executorch_openvino/backend.h"  // EXECUTORCH_OPENVINO_API

#if defined(_WIN32) && defined(EXECUTORCH_OPENVINO_BUILDING_GENERATION)
#define EOV_GENERATION_API __declspec(dllexport)
#elif defined(_WIN32)
#define EOV_GENERATION_API __declspec(dllimport)
#else
#define EOV_GENERATION_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

// Codes the functions return (0: success).
#define EOV_GENERATION_INVALID_ARGUMENT 1  // the caller's input: an option out of range, a prompt too long
#define EOV_GENERATION_MODEL_FAILED 2      // the program's call failed
#define EOV_GENERATION_UNAVAILABLE 3       // a library the request needs is missing (the grammar library)

typedef struct eov_program eov_program;
typedef struct eov_conversation eov_conversation;
typedef struct eov_vocabulary eov_vocabulary;
typedef struct eov_constraint eov_constraint;

// The reason the calling thread's last failing call gave, "" when none. Valid until its next call.
EOV_GENERATION_API const char* eov_generation_last_error(void);

// A language-model program (.pte; `data`: its .ptd weights or NULL; `method`: NULL for "forward").
EOV_GENERATION_API int eov_program_load(const char* pte, const char* data, const char* method, eov_program** out);
// A model behind a callback (an eager model in a test, another runtime): `step` feeds `count`
// tokens at `position`, writes `*rows` rows of `vocab` floats into `logits` (room for `count` rows:
// every position's, or 1: the last one's) and returns 0, or non-zero with `error` (room for
// error_size bytes) saying why.
typedef int (*eov_step_fn)(void* user, const int64_t* tokens, size_t count, int64_t position, float* logits,
                           size_t* rows, char* error, size_t error_size);
EOV_GENERATION_API int eov_program_from_callback(eov_step_fn step, void* user, size_t vocab, int64_t context,
                                                 int64_t max_call_tokens, int all_logits, eov_program** out);
EOV_GENERATION_API void eov_program_free(eov_program* program);
// A speech-recognition program as optimum-executorch exports Whisper (methods `encoder` and
// `text_decoder`): a language model whose calls also attend to one window of audio. Encode a window
// with eov_program_encode, then generate its text with a conversation on the program as with any
// other; the decoder takes one token a call.
EOV_GENERATION_API int eov_program_load_speech(const char* pte, const char* data, eov_program** out);
// Runs the encoder on one window's features (float32, `shape` of `rank` dimensions, as
// eov_program_shape(program, "features", ...) says) and gives its states to the decoder calls that
// follow, until the next window: a conversation's next generation starts again at position 0. The
// states are copied into `states` when it is not NULL (room for `capacity` floats; their shape is
// eov_program_shape(program, "states", ...)).
EOV_GENERATION_API int eov_program_encode(eov_program* program, const float* features, const int64_t* shape,
                                          size_t rank, float* states, size_t capacity);
// The shape of a speech program's "features" (one window) or encoder "states", up to `capacity`
// dimensions; returns the rank (0 for another program or name).
EOV_GENERATION_API size_t eov_program_shape(const eov_program* program, const char* which, int64_t* out,
                                            size_t capacity);
// What the program is: "vocab", "context", "max_call_tokens", "all_logits" (0/1), "bos" (-1: none),
// "eos_count", "start_token" (a speech program's decoder_start_token_id, -1: none); what its batched
// conversations did: "batch_calls" (calls made), "batch_calls_shared"
// (those that carried more than one conversation), "batch_sequences" (conversations' steps carried);
// -1 for an unknown key.
EOV_GENERATION_API int64_t eov_program_info(const eov_program* program, const char* key);
// The program's end-of-sequence ids (its metadata), up to `capacity`; returns how many it has.
EOV_GENERATION_API size_t eov_program_eos_ids(const eov_program* program, int64_t* out, size_t capacity);

// Each token's bytes (lengths[i] bytes each, concatenated in `bytes`), for text: streamed text and
// stop strings. A special token that prints nothing has length 0.
EOV_GENERATION_API int eov_vocabulary_new(const uint32_t* lengths, const uint8_t* bytes, size_t count,
                                          eov_vocabulary** out);
// The same from a Hugging Face tokenizer.json (its text), read by the grammar library (`library`: its C
// library, NULL for LLGUIDANCE_LIB_PATH); `size`: the model's vocabulary (ids past the tokenizer's
// print nothing). A byte-level token that is part of a character gives its raw bytes.
EOV_GENERATION_API int eov_vocabulary_from_tokenizer(const char* tokenizer_json, const char* library, size_t size,
                                                     eov_vocabulary** out);
EOV_GENERATION_API void eov_vocabulary_free(eov_vocabulary* vocabulary);

// Output held to a grammar: `kind` "json_schema", "regex" or "lark"; `text` the schema, expression or
// grammar; `tokenizer_json` the model's Hugging Face tokenizer.json (its text); `library` the grammar
// library (llguidance's C library) to open, or NULL for LLGUIDANCE_LIB_PATH. A constraint serves one
// generation at a time and starts again with each.
EOV_GENERATION_API int eov_constraint_new(const char* kind, const char* text, const char* tokenizer_json,
                                          const char* library, const int64_t* eos_ids, size_t eos_count,
                                          eov_constraint** out);
EOV_GENERATION_API void eov_constraint_free(eov_constraint* constraint);

// Called with each token chosen, and with each piece of text (whole UTF-8 characters); return
// non-zero to stop.
typedef int (*eov_token_fn)(void* user, int64_t token);
typedef int (*eov_text_fn)(void* user, const char* text, size_t length);
// Called with the logits each chosen token was chosen from (the program's row, before any filter or
// mask; valid during the call only); return non-zero to stop.
typedef int (*eov_logits_fn)(void* user, const float* logits, size_t vocab);

// A drafter of the application's own: up to `limit` tokens likely to follow `history` (its `count`
// tokens) into `drafts`; returns how many.
typedef size_t (*eov_draft_fn)(void* user, const int64_t* history, size_t count, size_t limit, int64_t* drafts);

typedef struct eov_generation_options {
  size_t struct_size;  // sizeof(eov_generation_options): eov_generation_options_init sets it
  size_t max_new_tokens;
  double temperature;  // 0: greedy
  int64_t top_k;       // 0: off
  double top_p;        // 1: off
  double repetition_penalty;  // 1: off
  int has_seed;
  uint64_t seed;
  const int64_t* eos_ids;  // NULL: the program's (eov_program_eos_ids)
  size_t eos_count;
  int lookup;                  // speculative decoding with drafts looked up in the conversation
  eov_program* draft;          // or a smaller program with the same vocabulary drafts
  size_t max_draft;            // drafts per call (default 5)
  eov_draft_fn drafter;        // or drafts from the application (one of lookup, draft, drafter)
  void* drafter_user;
  int drafter_free_to_ask;     // asking costs about nothing: probed at every plain step, as lookup is
  const eov_vocabulary* vocabulary;  // needed for text (on_text, stop strings)
  const char* const* stop;     // stop strings (UTF-8): generation ends where one begins
  size_t stop_count;
  eov_constraint* constraint;  // NULL: any token
  eov_token_fn on_token;
  eov_text_fn on_text;
  void* user;
  eov_logits_fn on_logits;
  const int64_t* suppress_ids;        // never chosen (transformers' suppress_tokens)
  size_t suppress_count;
  const int64_t* begin_suppress_ids;  // not chosen as the first token after the prompt (begin_suppress_tokens)
  size_t begin_suppress_count;
  // Whisper's timestamp rules (transformers' WhisperTimeStampLogitsProcessor), after the suppressed
  // tokens; on when timestamp_begin > 0. Timestamps come in pairs and never go back, the first token
  // is one (at most max_initial_timestamp after <|0.00|>; -1: any), no_timestamps_id is never chosen,
  // and where the timestamps together outweigh every text token one of them is chosen
  // (timestamp_from_probability, 1 by default).
  int64_t timestamp_begin;        // the first timestamp id, <|0.00|>
  int64_t no_timestamps_id;       // <|notimestamps|>
  int64_t timestamp_eos_id;       // after a lone timestamp, no id below it
  size_t timestamp_begin_index;   // the conversation's length where the rules' sequence starts
  int64_t max_initial_timestamp;
  int timestamp_from_probability;
} eov_generation_options;

// The defaults, into the caller's struct of `size` bytes (the macro passes its sizeof): a library newer
// than the header the caller was compiled with writes no more than that, and reads the fields it
// added as their defaults.
EOV_GENERATION_API void eov_generation_options_init_size(eov_generation_options* options, size_t size);
#define eov_generation_options_init(options) eov_generation_options_init_size((options), sizeof *(options))

typedef struct eov_generation_result {
  size_t struct_size;  // the caller's sizeof(eov_generation_result), set before the call
  size_t generated;      // tokens chosen (an end-of-sequence id not counted)
  size_t prompt_tokens;  // tokens fed before the first choice
  size_t reused_tokens;  // tokens of the request the model already held (not fed again)
  size_t calls;          // the model's decode calls
  size_t drafted, accepted;
  double prefill_seconds, decode_seconds;
  char stopped_by[16];  // "length", "eos", "context", "stop", "callback", "cancelled", "constraint"
  double first_token_seconds;  // from the call to the first token chosen (the prompt's feeding included)
} eov_generation_result;

// A conversation on a program: the tokens its caches hold. One conversation runs on a program at a
// time; another one's call starts that program again from the first token it does not share.
EOV_GENERATION_API int eov_conversation_new(eov_program* program, eov_conversation** out);
EOV_GENERATION_API void eov_conversation_free(eov_conversation* conversation);
// A batched conversation (continuous batching): its caches are a slot of the program's own, and its
// generations run together with the other batched conversations' that run at the same time on other
// threads: their steps go to the program in one call, which on a CPU costs little more than one
// conversation's step. Each conversation's tokens are those it would get alone. The program must give
// each token's position and return every position's logits (the openvino recipe's logits="all",
// export-hf --logits all); others are refused with that reason. Speculative decoding, saved states and
// state files are not for batched conversations. At most 63 on a program at once. The program's own
// conversations (eov_conversation_new) must not generate while its batched ones do (one call of a
// program runs at a time).
EOV_GENERATION_API int eov_conversation_new_batched(eov_program* program, eov_conversation** out);
// Continues with `tokens`, the whole conversation so far (the held tokens and what follows them, a
// new prompt or the next turn): the model keeps the longest part it already holds and is fed the
// rest (going back, editing a turn and reusing a prefix are all this). Then generates as `options`
// say. `result` may be NULL; else set its struct_size to sizeof(eov_generation_result) first (a
// library newer than the caller's header fills no more than that).
EOV_GENERATION_API int eov_conversation_generate(eov_conversation* conversation, const int64_t* tokens,
                                                 size_t count, const eov_generation_options* options,
                                                 eov_generation_result* result);
// The conversation's tokens (held, then the last token chosen); returns how many there are.
EOV_GENERATION_API size_t eov_conversation_tokens(const eov_conversation* conversation, int64_t* out,
                                                  size_t capacity);
// The program's caches hold `tokens`, fed outside this conversation (by a caller that drove the
// program itself): the next generation continues from them.
EOV_GENERATION_API int eov_conversation_assume(eov_conversation* conversation, const int64_t* tokens, size_t count);
// Keeps the model's state under `name` (the delegate's saved states), and later starts from it.
EOV_GENERATION_API int eov_conversation_save(eov_conversation* conversation, const char* name);
EOV_GENERATION_API int eov_conversation_restore(eov_conversation* conversation, const char* name);
// The conversation's state in a file and back, in this process or another: the tokens it holds and
// the program's caches for them. Reading refuses (the reason in eov_generation_last_error), changing
// nothing, a file that is truncated or damaged, or written by another program or with other options.
// The caches must be paged (the CPU's default).
EOV_GENERATION_API int eov_conversation_write_state(eov_conversation* conversation, const char* path);
EOV_GENERATION_API int eov_conversation_read_state(eov_conversation* conversation, const char* path);
// Ends the running generation at its next token, from any thread ("cancelled").
EOV_GENERATION_API void eov_conversation_cancel(eov_conversation* conversation);

#ifdef __cplusplus
}  // extern "C"
#endif
