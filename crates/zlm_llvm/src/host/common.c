/* What every host of an AOT-built ZLM program shares (the executable's
 * driver and the shared library's C interface): the run state the lowered
 * code reads and writes, the tables it emits, word rendering and the
 * output hooks. The drop log (channel 0) goes to the host's log_text; the
 * rendered result (channel 1) is kept until the run ends. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct zrt {
  uint64_t left, limit, depth, max_depth, floor;
  uint64_t fault_kind, fault_function, fault_block, fault_op, fault_detail;
  uint64_t out, bytes, byte_limit;
} zrt;
typedef int (*zlm_entry_fn)(zrt *, uint64_t *, const uint64_t *);
/* A typed entry: the slot values' word stream (docs/zlm/boundary.md). */
typedef int (*zlm_typed_fn)(zrt *, const uint64_t *, uint64_t);

extern const zlm_entry_fn zlm_entry_fns[];
extern const uint64_t zlm_entry_params[];
extern const uint64_t zlm_entry_render[];
extern const uint64_t zlm_entry_count, zlm_fn_count, zlm_detail_count;
extern const char *const zlm_fn_table[];
extern const char *const zlm_detail_table[];
extern const char *const zlm_entry_name_table[];
extern const zlm_typed_fn zlm_typed_fns[];
extern const uint64_t zlm_typed_count;
extern const char *const zlm_typed_name_table[];

#define ZLM_MAX_PARAMS 64

static const char *const zlm_fault_names[] = {
    "Internal", "Overflow", "DivideByZero", "ShiftRange", "Contract",  "Assert",
    "Bounds",   "Tag",      "StepLimit",    "DepthLimit", "ByteLimit", "Internal"};

static const char *fault_name(const zrt *z) {
  return zlm_fault_names[z->fault_kind > 11 ? 0 : z->fault_kind];
}

static const char *fault_function(const zrt *z) {
  return z->fault_function < zlm_fn_count ? zlm_fn_table[z->fault_function] : "";
}

static const char *fault_detail(const zrt *z) {
  return z->fault_detail < zlm_detail_count ? zlm_detail_table[z->fault_detail] : "";
}

/* A word rendered by kind (0 unsigned, 1 signed, 2 Bool, 3 Unit, 5 one
 * word of the typed stream: a space, then hex). */
static void render_to(char *buf, size_t n, uint64_t kind, uint64_t w) {
  switch (kind) {
  case 1:
    if ((int64_t)w < 0) snprintf(buf, n, "-%llu", (unsigned long long)(~w + 1));
    else snprintf(buf, n, "%llu", (unsigned long long)w);
    break;
  case 2: snprintf(buf, n, "%s", w ? "true" : "false"); break;
  case 3: snprintf(buf, n, "()"); break;
  case 5: snprintf(buf, n, " %llx", (unsigned long long)w); break;
  default: snprintf(buf, n, "%llu", (unsigned long long)w); break;
  }
}

/* The host's sink for drop-log text (channel 0). */
static void log_text(const char *s);

static char *result_text;
static size_t result_len, result_cap;

void zlm_host_text(zrt *z, uint64_t ch, const char *s) {
  size_t n = strlen(s);
  (void)z;
  if (ch == 0) {
    log_text(s);
    return;
  }
  if (result_len + n + 1 > result_cap) {
    size_t cap = (result_len + n + 1) * 2;
    char *p = realloc(result_text, cap);
    if (p == 0) exit(4);
    result_text = p;
    result_cap = cap;
  }
  memcpy(result_text + result_len, s, n + 1);
  result_len += n;
}

void zlm_host_word(zrt *z, uint64_t ch, uint64_t kind, uint64_t w) {
  char buf[32];
  render_to(buf, sizeof buf, kind, w);
  zlm_host_text(z, ch, buf);
}

static void fresh(zrt *z, uint64_t steps, uint64_t depth, uint64_t bytes, uintptr_t floor) {
  z->out = 0;
  z->bytes = 0;
  z->byte_limit = bytes;
  result_len = 0;
  if (result_text != 0) result_text[0] = 0;
  z->left = steps;
  z->limit = steps;
  z->depth = 0;
  z->max_depth = depth;
  z->floor = floor;
  z->fault_kind = z->fault_function = z->fault_block = z->fault_op = z->fault_detail = 0;
}
