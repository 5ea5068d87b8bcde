/* The host driver of an AOT-built ZLM executable (irkit zlm build / run
 * --engine aot), after common.c. It speaks the C engine's protocol: argv
 * is entry index, step limit, depth limit, byte limit and argument words
 * (hex); stdout gets `OK steps rendered` or `FAULT function block op kind
 * detail`. ZLM_REPEAT=N (hex) first runs the entry N times and prints
 * `TIME ns`. An entry `tK` is typed entry K: the argument words are its
 * slot values' stream (docs/zlm/boundary.md) and `OK steps` is followed
 * by the result's and the lent values' words. */
#include <time.h>

#define ZLM_STACK_BYTES ((uintptr_t)4194304)

/* Drop lines go to stdout unless the run is a timing repetition. */
static int quiet;

static void log_text(const char *s) {
  if (!quiet) fputs(s, stdout);
}

static int parse_word(const char *s, uint64_t *w) {
  char *end = 0;
  unsigned long long v = strtoull(s, &end, 16);
  if (!end || *end != 0 || end == s) return 1;
  *w = (uint64_t)v;
  return 0;
}

static void report_fault(const zrt *z) {
  printf("FAULT\t%s\t", fault_function(z));
  if ((int64_t)z->fault_block >= 0) printf("%lld", (long long)z->fault_block); else fputs("-", stdout);
  fputs("\t", stdout);
  if ((int64_t)z->fault_op >= 0) printf("%lld", (long long)z->fault_op); else fputs("-", stdout);
  printf("\t%s\t%s\n", fault_name(z), fault_detail(z));
}

static int run_typed(int argc, char **argv, uintptr_t floor) {
  zrt z;
  uint64_t entry, steps, depth, bytes, n, *words;
  int i, rc;
  if (argc < 5 || parse_word(argv[1] + 1, &entry) || parse_word(argv[2], &steps) ||
      parse_word(argv[3], &depth) || parse_word(argv[4], &bytes) || entry >= zlm_typed_count)
    return 2;
  n = (uint64_t)(argc - 5);
  words = malloc((n ? n : 1) * sizeof *words);
  if (words == 0) return 4;
  for (i = 5; i < argc; i++)
    if (parse_word(argv[i], &words[i - 5])) {
      free(words);
      return 2;
    }
  fresh(&z, steps, depth, bytes, floor);
  rc = zlm_typed_fns[entry](&z, words, n);
  free(words);
  if (rc < 0) return 2;
  if (rc) report_fault(&z);
  else
    printf("OK\t%llu\t%s\n", (unsigned long long)(z.limit - z.left),
           result_len ? result_text : "");
  return fflush(stdout) == 0 ? 0 : 3;
}

int main(int argc, char **argv) {
  zrt z;
  uint64_t args[ZLM_MAX_PARAMS + 1];
  uint64_t entry, steps, depth, bytes, result = 0;
  volatile char marker = 0;
  uintptr_t here = (uintptr_t)(void *)&marker, floor;
  const char *repeat;
  int i, rc;
  floor = here > ZLM_STACK_BYTES ? here - ZLM_STACK_BYTES : 0;
  if (argc > 1 && argv[1][0] == 't') return run_typed(argc, argv, floor);
  if (argc < 5 || parse_word(argv[1], &entry) || parse_word(argv[2], &steps) ||
      parse_word(argv[3], &depth) || parse_word(argv[4], &bytes))
    return 2;
  if (entry >= zlm_entry_count || (uint64_t)(argc - 5) != zlm_entry_params[entry] ||
      argc - 5 > ZLM_MAX_PARAMS)
    return 2;
  for (i = 5; i < argc; i++)
    if (parse_word(argv[i], &args[i - 5])) return 2;
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
    char buf[32];
    printf("OK\t%llu\t", (unsigned long long)(z.limit - z.left));
    if (zlm_entry_render[entry] == 4) {
      fputs(result_len ? result_text : "", stdout);
    } else {
      render_to(buf, sizeof buf, zlm_entry_render[entry], result);
      fputs(buf, stdout);
    }
    fputs("\n", stdout);
  }
  return fflush(stdout) == 0 ? 0 : 3;
}
