/* The C interface of a ZLM shared library (`irkit zlm build ROOT -o
 * libNAME.so`, written beside it as libNAME.h). Each entry is a host-callable
 * function `Decl.function` of the package; a call runs it under explicit
 * limits with the interpreter's semantics and reports the result or the
 * fault exactly as `irkit zlm run` does. Calls are not reentrant: make one
 * at a time per process (the runtime's byte storage and result text are
 * process-wide). */
#ifndef ZLM_LIB_H
#define ZLM_LIB_H
#include <stdint.h>

/* The limits of one call. */
typedef struct zlm_limits {
  uint64_t steps;       /* step limit */
  uint64_t depth;       /* call-depth limit */
  uint64_t bytes;       /* byte-storage limit */
  uint64_t stack_bytes; /* host stack the program may use below the call (0: 1 MiB); beyond it, DepthLimit */
} zlm_limits;

/* What one call observed. Strings stay valid until the next call. */
typedef struct zlm_outcome {
  int faulted;          /* 0: completed; 1: faulted */
  uint64_t steps;       /* steps executed (completed calls; 0 after a fault) */
  uint64_t result;      /* the result word (scalar results; 0 otherwise) */
  const char *rendered; /* the result as `irkit zlm run` prints it ("" after a fault) */
  const char *fault;    /* the fault kind (`Overflow`, `StepLimit`, …); "" when completed */
  const char *function; /* the faulting function (`Decl.function`); "" when completed */
  int64_t block, op;    /* the fault's block and operation; -1 where it has none */
  const char *detail;   /* the failed contract clause (`requires 0`) or "" */
} zlm_outcome;

/* Receives drop-log text (whole lines, each ending in a newline). */
typedef void (*zlm_log_fn)(void *context, const char *text);

/* The number of entries. */
uint64_t zlm_lib_entry_count(void);
/* Entry `entry`'s name (`Decl.function`), or NULL when out of range. */
const char *zlm_lib_entry_name(uint64_t entry);
/* Entry `entry`'s parameter count, or -1 when out of range. */
int64_t zlm_lib_entry_params(uint64_t entry);
/* The entry named `name`, or -1. */
int64_t zlm_lib_find(const char *name);
/* Runs entry `entry` on `nargs` canonical argument words (signed kinds
 * sign-extended, unsigned and Bool zero-extended). Returns 0 when it ran
 * (completed or faulted, see `out`), -1 for an unknown entry, a wrong
 * argument count or a NULL `limits`/`out`. `log` may be NULL. */
int zlm_lib_call(uint64_t entry, const uint64_t *args, uint64_t nargs, const zlm_limits *limits,
                 zlm_log_fn log, void *log_context, zlm_outcome *out);
/* The number of typed entries (docs/zlm/boundary.md). */
uint64_t zlm_lib_typed_count(void);
/* Typed entry `entry`'s name (`Decl.function`), or NULL when out of range. */
const char *zlm_lib_typed_name(uint64_t entry);
/* Runs typed entry `entry` on the word stream of its slot values. Returns 0
 * when it ran (see `out`; when it completed, *reply and *nreply hold the
 * result's words, then each lent value's, valid until the next call), -1
 * for an unknown entry, a malformed stream or a NULL pointer. The
 * zlm_call_ functions below (generated per library) write and read the
 * streams for you. */
int zlm_lib_typed_call(uint64_t entry, const uint64_t *words, uint64_t nwords,
                       const zlm_limits *limits, zlm_log_fn log, void *log_context,
                       zlm_outcome *out, const uint64_t **reply, uint64_t *nreply);
#endif
