/* The C interface of a ZLM shared library (zlm_lib.h), after zlm_lib.h and
 * common.c. */

static zlm_log_fn log_fn;
static void *log_context;

static void log_text(const char *s) {
  if (log_fn != 0) log_fn(log_context, s);
}

#define ZLM_DEFAULT_STACK_BYTES ((uintptr_t)1048576)

uint64_t zlm_lib_entry_count(void) { return zlm_entry_count; }

const char *zlm_lib_entry_name(uint64_t entry) {
  return entry < zlm_entry_count ? zlm_entry_name_table[entry] : 0;
}

int64_t zlm_lib_entry_params(uint64_t entry) {
  return entry < zlm_entry_count ? (int64_t)zlm_entry_params[entry] : -1;
}

int64_t zlm_lib_find(const char *name) {
  uint64_t i;
  if (name == 0) return -1;
  for (i = 0; i < zlm_entry_count; i++)
    if (strcmp(zlm_entry_name_table[i], name) == 0) return (int64_t)i;
  return -1;
}

int zlm_lib_call(uint64_t entry, const uint64_t *args, uint64_t nargs, const zlm_limits *limits,
                 zlm_log_fn log, void *context, zlm_outcome *out) {
  static char rendered[32];
  zrt z;
  uint64_t result = 0;
  volatile char marker = 0;
  uintptr_t here = (uintptr_t)(void *)&marker, stack;
  if (limits == 0 || out == 0 || entry >= zlm_entry_count || nargs != zlm_entry_params[entry] ||
      (nargs != 0 && args == 0))
    return -1;
  stack = limits->stack_bytes ? (uintptr_t)limits->stack_bytes : ZLM_DEFAULT_STACK_BYTES;
  log_fn = log;
  log_context = context;
  fresh(&z, limits->steps, limits->depth, limits->bytes, here > stack ? here - stack : 0);
  memset(out, 0, sizeof *out);
  if (zlm_entry_fns[entry](&z, &result, args) != 0) {
    out->faulted = 1;
    out->rendered = "";
    out->fault = fault_name(&z);
    out->function = fault_function(&z);
    out->block = (int64_t)z.fault_block;
    out->op = (int64_t)z.fault_op;
    out->detail = fault_detail(&z);
  } else {
    out->result = zlm_entry_render[entry] == 4 ? 0 : result;
    if (zlm_entry_render[entry] == 4) {
      out->rendered = result_len ? result_text : "";
    } else {
      render_to(rendered, sizeof rendered, zlm_entry_render[entry], result);
      out->rendered = rendered;
    }
    out->fault = out->function = out->detail = "";
    out->block = out->op = -1;
    out->steps = z.limit - z.left;
  }
  log_fn = 0;
  log_context = 0;
  return 0;
}

uint64_t zlm_lib_typed_count(void) { return zlm_typed_count; }

const char *zlm_lib_typed_name(uint64_t entry) {
  return entry < zlm_typed_count ? zlm_typed_name_table[entry] : 0;
}

static uint64_t *reply_words;
static uint64_t reply_cap;

int zlm_lib_typed_call(uint64_t entry, const uint64_t *words, uint64_t nwords,
                       const zlm_limits *limits, zlm_log_fn log, void *context,
                       zlm_outcome *out, const uint64_t **reply, uint64_t *nreply) {
  zrt z;
  int rc;
  volatile char marker = 0;
  uintptr_t here = (uintptr_t)(void *)&marker, stack;
  if (limits == 0 || out == 0 || reply == 0 || nreply == 0 || entry >= zlm_typed_count ||
      (nwords != 0 && words == 0))
    return -1;
  stack = limits->stack_bytes ? (uintptr_t)limits->stack_bytes : ZLM_DEFAULT_STACK_BYTES;
  log_fn = log;
  log_context = context;
  fresh(&z, limits->steps, limits->depth, limits->bytes, here > stack ? here - stack : 0);
  memset(out, 0, sizeof *out);
  *reply = 0;
  *nreply = 0;
  rc = zlm_typed_fns[entry](&z, words, nwords);
  log_fn = 0;
  log_context = 0;
  if (rc < 0) return -1;
  if (rc != 0) {
    out->faulted = 1;
    out->rendered = "";
    out->fault = fault_name(&z);
    out->function = fault_function(&z);
    out->block = (int64_t)z.fault_block;
    out->op = (int64_t)z.fault_op;
    out->detail = fault_detail(&z);
    return 0;
  }
  {
    /* The answer: hex words separated by spaces and `;`. */
    const char *p = result_len ? result_text : "";
    uint64_t n = 0;
    while (*p) {
      char *next = 0;
      unsigned long long v;
      if (*p == ' ' || *p == ';') {
        p++;
        continue;
      }
      v = strtoull(p, &next, 16);
      if (next == p) return -1;
      if (n == reply_cap) {
        uint64_t cap = reply_cap ? reply_cap * 2 : 64;
        uint64_t *q = realloc(reply_words, cap * sizeof *q);
        if (q == 0) return -1;
        reply_words = q;
        reply_cap = cap;
      }
      reply_words[n++] = (uint64_t)v;
      p = next;
    }
    *reply = reply_words;
    *nreply = n;
  }
  out->rendered = result_len ? result_text : "";
  out->fault = out->function = out->detail = "";
  out->block = out->op = -1;
  out->steps = z.limit - z.left;
  return 0;
}
