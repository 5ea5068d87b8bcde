/* The host driver of an AOT-built ZLM program (irkit zlm build / run
 * --engine aot). It reads the tables the LLVM lowering emits and speaks the
 * C engine's protocol: argv is entry index, step limit, depth limit, byte
 * limit and argument words (hex); stdout gets `OK steps rendered` or
 * `FAULT function block op kind detail`. ZLM_REPEAT=N (hex) first runs the
 * entry N times and prints `TIME ns`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct zrt {
  uint64_t left, limit, depth, max_depth, floor;
  uint64_t fault_kind, fault_function, fault_block, fault_op, fault_detail;
  uint64_t out, bytes, byte_limit;
} zrt;
typedef int (*zlm_entry_fn)(zrt *, uint64_t *, const uint64_t *);

extern const zlm_entry_fn zlm_entry_fns[];
extern const uint64_t zlm_entry_params[];
extern const uint64_t zlm_entry_render[];
extern const uint64_t zlm_entry_count, zlm_fn_count, zlm_detail_count;
extern const char *const zlm_fn_table[];
extern const char *const zlm_detail_table[];

#define ZLM_STACK_BYTES ((uintptr_t)4194304)
#define ZLM_MAX_PARAMS 64

static int parse_word(const char *s, uint64_t *w) {
  char *end = 0;
  unsigned long long v = strtoull(s, &end, 16);
  if (!end || *end != 0 || end == s) return 1;
  *w = (uint64_t)v;
  return 0;
}

/* A word rendered by kind (0 unsigned, 1 signed, 2 Bool, 3 Unit). */
static void render_to(char *buf, size_t n, uint64_t kind, uint64_t w) {
  switch (kind) {
  case 1:
    if ((int64_t)w < 0) snprintf(buf, n, "-%llu", (unsigned long long)(~w + 1));
    else snprintf(buf, n, "%llu", (unsigned long long)w);
    break;
  case 2: snprintf(buf, n, "%s", w ? "true" : "false"); break;
  case 3: snprintf(buf, n, "()"); break;
  default: snprintf(buf, n, "%llu", (unsigned long long)w); break;
  }
}

static void render(int kind, uint64_t w) {
  char buf[32];
  render_to(buf, sizeof buf, (uint64_t)kind, w);
  fputs(buf, stdout);
}

/* The output hooks: channel 0 (the log: drop lines) goes to stdout unless
 * the run is a timing repetition; channel 1 (the rendered result) is kept
 * until the result line. */
static int quiet;
static char *result_text;
static size_t result_len, result_cap;

void zlm_host_text(zrt *z, uint64_t ch, const char *s) {
  size_t n = strlen(s);
  (void)z;
  if (ch == 0) {
    if (!quiet) fputs(s, stdout);
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

static void report_fault(const zrt *z) {
  static const char *names[] = {"Internal", "Overflow", "DivideByZero", "ShiftRange",
                                "Contract", "Assert", "Bounds", "Tag", "StepLimit",
                                "DepthLimit", "ByteLimit", "Internal"};
  uint64_t k = z->fault_kind > 11 ? 0 : z->fault_kind;
  const char *fn = z->fault_function < zlm_fn_count ? zlm_fn_table[z->fault_function] : "";
  const char *detail = z->fault_detail < zlm_detail_count ? zlm_detail_table[z->fault_detail] : "";
  printf("FAULT\t%s\t", fn);
  if ((int64_t)z->fault_block >= 0) printf("%lld", (long long)z->fault_block); else fputs("-", stdout);
  fputs("\t", stdout);
  if ((int64_t)z->fault_op >= 0) printf("%lld", (long long)z->fault_op); else fputs("-", stdout);
  printf("\t%s\t%s\n", names[k], detail);
}

static void fresh(zrt *z, uint64_t steps, uint64_t depth, uint64_t bytes, uintptr_t floor) {
  z->out = 0;
  z->bytes = 0;
  z->byte_limit = bytes;
  result_len = 0;
  z->left = steps;
  z->limit = steps;
  z->depth = 0;
  z->max_depth = depth;
  z->floor = floor;
  z->fault_kind = z->fault_function = z->fault_block = z->fault_op = z->fault_detail = 0;
}

int main(int argc, char **argv) {
  zrt z;
  uint64_t args[ZLM_MAX_PARAMS + 1];
  uint64_t entry, steps, depth, bytes, result = 0;
  volatile char marker = 0;
  uintptr_t here = (uintptr_t)(void *)&marker, floor;
  const char *repeat;
  int i, rc;
  if (argc < 5 || parse_word(argv[1], &entry) || parse_word(argv[2], &steps) ||
      parse_word(argv[3], &depth) || parse_word(argv[4], &bytes))
    return 2;
  if (entry >= zlm_entry_count || (uint64_t)(argc - 5) != zlm_entry_params[entry] ||
      argc - 5 > ZLM_MAX_PARAMS)
    return 2;
  for (i = 5; i < argc; i++)
    if (parse_word(argv[i], &args[i - 5])) return 2;
  floor = here > ZLM_STACK_BYTES ? here - ZLM_STACK_BYTES : 0;
  repeat = getenv("ZLM_REPEAT");
  if (repeat != 0) {
    uint64_t n = 0, k;
    struct timespec t0, t1;
    if (parse_word(repeat, &n)) return 2;
    quiet = 1;
    timespec_get(&t0, TIME_UTC);
    for (k = 0; k < n; k++) {
      fresh(&z, steps, depth, bytes, floor);
      if (zlm_entry_fns[entry](&z, &result, args) != 0) break;
    }
    timespec_get(&t1, TIME_UTC);
    quiet = 0;
    printf("TIME\t%.0f\n", ((double)t1.tv_sec - (double)t0.tv_sec) * 1e9 +
                               ((double)t1.tv_nsec - (double)t0.tv_nsec));
  }
  fresh(&z, steps, depth, bytes, floor);
  rc = zlm_entry_fns[entry](&z, &result, args);
  if (rc) {
    report_fault(&z);
  } else {
    printf("OK\t%llu\t", (unsigned long long)(z.limit - z.left));
    if (zlm_entry_render[entry] == 4) fputs(result_len ? result_text : "", stdout);
    else render((int)zlm_entry_render[entry], result);
    fputs("\n", stdout);
  }
  return fflush(stdout) == 0 ? 0 : 3;
}
