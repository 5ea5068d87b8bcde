/* zlm_rt.h: the portable C runtime of the ZLM1 C materializer.
 * Scalars are canonical 64-bit words, as in the reference interpreter:
 * signed kinds sign-extended, unsigned kinds and Bool zero-extended.
 * Every arithmetic helper returns a fault kind (0: none) and never relies on
 * undefined or implementation-defined behaviour of signed arithmetic. */
#ifndef ZLM_RT_H
#define ZLM_RT_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* GCC's tree PRE is off for the unit (docs/zlm/c-materializer.md,
 * "Performance"). Every word is a uint64_t and signed operations read it
 * through an int64_t view; PRE carries that view around a loop as a second
 * phi beside the word's own, both stay live, and every iteration then
 * copies one register into the other (the loop benchmark ran 2x slower
 * than the same loop written with int64_t). Clang has no such pass. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-pre")
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ZLM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define ZLM_UNLIKELY(x) (x)
#endif

/* Fault kinds (the interpreter's FaultKind). */
enum {
  ZK_NONE = 0, ZK_OVERFLOW, ZK_DIV_ZERO, ZK_SHIFT, ZK_CONTRACT, ZK_ASSERT,
  ZK_BOUNDS, ZK_TAG, ZK_STEPS, ZK_DEPTH, ZK_BYTES, ZK_INTERNAL
};
/* Numeric profiles (header tags). */
enum { ZP_EXACT = 0, ZP_MODULAR = 1, ZP_APPROX = 2 };

/* One run's state. */
typedef struct zrt {
  uint64_t left;     /* steps still allowed */
  uint64_t limit;    /* the step limit */
  uint64_t depth;    /* frames live */
  uint64_t max_depth;
  uintptr_t floor;   /* host stack address below which a call faults */
  FILE *out;
  uint64_t bytes;      /* live byte-array capacity */
  uint64_t byte_limit; /* the byte limit (the host allocator's budget) */
} zrt;

/* Where a fault happened (block/op: -1 when absent). */
typedef struct zfault {
  int kind;
  const char *function;
  long block, op;
  const char *detail; /* Contract("...") text */
} zfault;

static zfault zlm_fault;

static inline int zlm_raise(int kind, const char *fn, long block, long op, const char *detail) {
  zlm_fault.kind = kind;
  zlm_fault.function = fn;
  zlm_fault.block = block;
  zlm_fault.op = op;
  zlm_fault.detail = detail;
  return kind;
}

static inline int64_t zlm_s(uint64_t w) {
  return w <= (uint64_t)INT64_MAX ? (int64_t)w : -(int64_t)(~w) - 1;
}
static inline uint64_t zlm_u(int64_t v) { return (uint64_t)v; }

/* Canonical word of `bits` at width `w` (1..64) and signedness `s`. */
static inline uint64_t zlm_canon(unsigned w, int s, uint64_t bits) {
  uint64_t mask, b;
  if (w >= 64) return bits;
  mask = (UINT64_C(1) << w) - 1;
  b = bits & mask;
  if (s && ((b >> (w - 1)) & 1)) return b | ~mask;
  return b;
}

/* Range of a kind, as words in the signed/unsigned domain. */
static inline int64_t zlm_smin(unsigned w) { return w >= 64 ? INT64_MIN : -(int64_t)(UINT64_C(1) << (w - 1)); }
static inline int64_t zlm_smax(unsigned w) { return w >= 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (w - 1)) - 1); }
static inline uint64_t zlm_umax(unsigned w) { return w >= 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1; }

/* Fits an exact signed result; `wrapped` is its value modulo 2^64. */
static inline int zlm_fit_s(unsigned w, int p, int over, int64_t v, uint64_t wrapped, uint64_t *r) {
  if (over || v < zlm_smin(w) || v > zlm_smax(w)) {
    if (p != ZP_MODULAR) return ZK_OVERFLOW;
    *r = zlm_canon(w, 1, wrapped);
    return 0;
  }
  *r = zlm_canon(w, 1, zlm_u(v));
  return 0;
}
static inline int zlm_fit_u(unsigned w, int p, int over, uint64_t v, uint64_t *r) {
  if (over || v > zlm_umax(w)) {
    if (p != ZP_MODULAR) return ZK_OVERFLOW;
    *r = zlm_canon(w, 0, v);
    return 0;
  }
  *r = v;
  return 0;
}

static inline int zlm_add(unsigned w, int s, int p, uint64_t a, uint64_t b, uint64_t *r) {
  uint64_t x = a + b;
  if (s) {
    int64_t sa = zlm_s(a), sb = zlm_s(b);
    int over = 0;
    int64_t v = 0;
    if (w < 64) v = sa + sb; /* |sa|,|sb| < 2^32: exact */
    else {
#if defined(__GNUC__) || defined(__clang__)
      over = __builtin_add_overflow(sa, sb, &v);
#else
      over = (sb > 0 && sa > INT64_MAX - sb) || (sb < 0 && sa < INT64_MIN - sb);
      if (!over) v = sa + sb;
#endif
    }
    return zlm_fit_s(w, p, over, v, x, r);
  }
  return zlm_fit_u(w, p, w >= 64 && x < a, x, r);
}
static inline int zlm_sub(unsigned w, int s, int p, uint64_t a, uint64_t b, uint64_t *r) {
  uint64_t x = a - b;
  if (s) {
    int64_t sa = zlm_s(a), sb = zlm_s(b);
    int over = 0;
    int64_t v = 0;
    if (w < 64) v = sa - sb;
    else {
#if defined(__GNUC__) || defined(__clang__)
      over = __builtin_sub_overflow(sa, sb, &v);
#else
      over = (sb < 0 && sa > INT64_MAX + sb) || (sb > 0 && sa < INT64_MIN + sb);
      if (!over) v = sa - sb;
#endif
    }
    return zlm_fit_s(w, p, over, v, x, r);
  }
  if (b > a) {
    if (p != ZP_MODULAR) return ZK_OVERFLOW;
    *r = zlm_canon(w, 0, x);
    return 0;
  }
  *r = x;
  return 0;
}
static inline int zlm_mul(unsigned w, int s, int p, uint64_t a, uint64_t b, uint64_t *r) {
  uint64_t x = a * b;
  if (s) {
    int64_t sa = zlm_s(a), sb = zlm_s(b);
    int over = 0;
    int64_t v = 0;
    if (w <= 32) v = sa * sb; /* < 2^62 in magnitude */
    else {
#if defined(__GNUC__) || defined(__clang__)
      over = __builtin_mul_overflow(sa, sb, &v);
#else
      if (sa != 0 && sb != 0) {
        if (sa > 0) over = sb > 0 ? sa > INT64_MAX / sb : sb < INT64_MIN / sa;
        else over = sb > 0 ? sa < INT64_MIN / sb : sa < INT64_MAX / sb;
      }
      if (!over) v = sa * sb;
#endif
    }
    return zlm_fit_s(w, p, over, v, x, r);
  }
  if (w <= 32) return zlm_fit_u(w, p, 0, x, r);
  return zlm_fit_u(w, p, a != 0 && x / a != b, x, r);
}
static inline int zlm_neg(unsigned w, int s, int p, uint64_t a, uint64_t *r) {
  return zlm_sub(w, s, p, 0, a, r);
}
static inline int zlm_div(unsigned w, int s, int p, int rem, uint64_t a, uint64_t b, uint64_t *r) {
  if (b == 0) return ZK_DIV_ZERO;
  if (s) {
    int64_t sa = zlm_s(a), sb = zlm_s(b);
    if (sb == -1) {
      /* x / -1 = -x (overflows only at MIN); x % -1 = 0. */
      if (rem) { *r = 0; return 0; }
      return zlm_neg(w, s, p, a, r);
    }
    *r = zlm_canon(w, 1, zlm_u(rem ? sa % sb : sa / sb));
    return 0;
  }
  *r = rem ? a % b : a / b;
  return 0;
}
static inline int zlm_shl(unsigned w, int s, int p, uint64_t a, uint64_t b, uint64_t *r) {
  if (b >= w) {
    if (p == ZP_MODULAR) { *r = 0; return 0; }
    return ZK_SHIFT;
  }
  if (p != ZP_MODULAR) {
    if (s) {
      int64_t sa = zlm_s(a);
      int64_t hi = (int64_t)((UINT64_C(1) << (w - 1 - b)) - 1);
      int64_t lo = -hi - 1;
      if (sa < lo || sa > hi) return ZK_OVERFLOW;
    } else if (a > (zlm_umax(w) >> b)) {
      return ZK_OVERFLOW;
    }
  }
  *r = zlm_canon(w, s, a << b);
  return 0;
}
static inline int zlm_shr(unsigned w, int s, int p, uint64_t a, uint64_t b, uint64_t *r) {
  int neg = s && zlm_s(a) < 0;
  if (b >= w) {
    if (p == ZP_MODULAR) { *r = neg ? zlm_canon(w, s, UINT64_MAX) : 0; return 0; }
    return ZK_SHIFT;
  }
  *r = zlm_canon(w, s, neg ? ~((~a) >> b) : a >> b);
  return 0;
}
/* Comparison tags: 6 EQ, 17 NE, 7 LT, 18 LE, 19 GT, 20 GE. */
static inline uint64_t zlm_cmp(int tag, int s, uint64_t a, uint64_t b) {
  int lt = s ? zlm_s(a) < zlm_s(b) : a < b;
  int gt = s ? zlm_s(a) > zlm_s(b) : a > b;
  switch (tag) {
  case 6: return a == b;
  case 17: return a != b;
  case 7: return lt;
  case 18: return !gt;
  case 19: return gt;
  default: return !lt;
  }
}

/* The step counter: one tick per executed operation. */
static inline int zlm_tick(zrt *z) {
  if (z->left == 0) return 1;
  z->left--;
  return 0;
}

/* The host-stack guard (a depth fault, never a host stack overflow). */
static inline uintptr_t zlm_here(void) {
  volatile char marker = 0;
  uintptr_t at = (uintptr_t)(void *)&marker;
  return at;
}

static inline void zlm_print_string(FILE *o, const char *s) { fputs(s, o); }

static inline void zlm_render_scalar(FILE *o, int kind, uint64_t w) {
  /* kind: 0 unsigned, 1 signed, 2 Bool, 3 Unit */
  switch (kind) {
  case 1: {
    int64_t v = zlm_s(w);
    if (v < 0) fprintf(o, "-%llu", (unsigned long long)(~w + 1));
    else fprintf(o, "%llu", (unsigned long long)w);
    break;
  }
  case 2: fputs(w ? "true" : "false", o); break;
  case 3: fputs("()", o); break;
  default: fprintf(o, "%llu", (unsigned long long)w); break;
  }
}

static inline void zlm_report_fault(FILE *o) {
  static const char *names[] = {"", "Overflow", "DivideByZero", "ShiftRange", "Contract",
                                "Assert", "Bounds", "Tag", "StepLimit", "DepthLimit",
                                "ByteLimit", "Internal"};
  int k = zlm_fault.kind;
  if (k < 1 || k > ZK_INTERNAL) k = ZK_INTERNAL;
  fprintf(o, "FAULT\t%s\t", zlm_fault.function ? zlm_fault.function : "");
  if (zlm_fault.block >= 0) fprintf(o, "%ld", zlm_fault.block); else fputs("-", o);
  fputs("\t", o);
  if (zlm_fault.op >= 0) fprintf(o, "%ld", zlm_fault.op); else fputs("-", o);
  fprintf(o, "\t%s\t%s\n", names[k], zlm_fault.detail ? zlm_fault.detail : "");
}

/* A drop-log owner name: segments from the root (`l0`, `.right`, ` (replaced)`). */
typedef struct zname {
  const struct zname *up;
  const char *s;
} zname;

static inline void zlm_print_name(FILE *o, const zname *n) {
  if (n == 0) return;
  zlm_print_name(o, n->up);
  fputs(n->s, o);
}

/* One destroyed non-Copy owner: `D function owner type`. */
static inline void zlm_drop_line(zrt *z, const char *fn, const zname *nm, const char *ty) {
  fprintf(z->out, "D\t%s\t", fn);
  zlm_print_name(z->out, nm);
  fprintf(z->out, "\t%s\n", ty);
}

/* Custody: a frame's owner paths in the order they came into custody, as
 * the interpreter's `custody` list (push, remove every occurrence,
 * re-insert a replaced owner at its candidate's position). */
static inline long zlm_cust_pos(const uint16_t *c, unsigned n, unsigned pi) {
  unsigned i;
  for (i = 0; i < n; i++)
    if (c[i] == pi) return (long)i;
  return -1;
}
static inline void zlm_cust_remove(uint16_t *c, unsigned *n, unsigned pi) {
  unsigned i, k = 0;
  for (i = 0; i < *n; i++)
    if (c[i] != pi) c[k++] = c[i];
  *n = k;
}
/* REPLACE_COMMIT of root `pi`; `cand` is the candidate's custody position
 * before it was taken (-1: none). The capacity holds every path once. */
static inline void zlm_cust_replace(uint16_t *c, unsigned *n, unsigned pi, long cand) {
  long had = zlm_cust_pos(c, *n, pi);
  unsigned long pos;
  unsigned i;
  zlm_cust_remove(c, n, pi);
  if (had < 0) return;
  pos = cand >= 0 ? (unsigned long)(cand - (had < cand ? 1 : 0)) : (unsigned long)*n;
  if (pos > *n) pos = *n;
  for (i = *n; i > pos; i--) c[i] = c[i - 1];
  c[pos] = (uint16_t)pi;
  *n += 1;
}

/* Byte arrays. Storage comes from the target's allocation hooks
 * (ZLM_ALLOC/ZLM_FREE, defined by the unit before this header); every block
 * is also linked into one list so the program releases what a fault or the
 * host's result left behind before it exits. */
#ifndef ZLM_ALLOC
#define ZLM_ALLOC(n) malloc(n)
#define ZLM_FREE(p) free(p)
#endif
typedef struct zmem {
  struct zmem *prev, *next;
} zmem;
static zmem zlm_blocks = {&zlm_blocks, &zlm_blocks};
static inline unsigned char *zlm_mem_alloc(uint64_t n) {
  zmem *m;
  if (n > SIZE_MAX - sizeof(zmem) - 1) return 0;
  m = (zmem *)ZLM_ALLOC((size_t)n + sizeof(zmem) + 1);
  if (m == 0) return 0;
  m->next = zlm_blocks.next;
  m->prev = &zlm_blocks;
  zlm_blocks.next->prev = m;
  zlm_blocks.next = m;
  return (unsigned char *)(m + 1);
}
static inline void zlm_mem_free(unsigned char *p) {
  zmem *m;
  if (p == 0) return;
  m = (zmem *)(void *)p - 1;
  m->prev->next = m->next;
  m->next->prev = m->prev;
  ZLM_FREE(m);
}
static inline void zlm_mem_release_all(void) {
  while (zlm_blocks.next != &zlm_blocks) zlm_mem_free((unsigned char *)(zlm_blocks.next + 1));
}

/* An Array<Byte> owner: `cap` is the interpreter's Vec capacity. */
typedef struct zbytes {
  unsigned char *p;
  uint64_t len, cap;
} zbytes;
/* A Slice<Byte> loan: the viewed array and half-open bounds. */
typedef struct zslice {
  const zbytes *b;
  uint64_t s, e;
} zslice;

/* Allocator.alloc(cap): Err(cap) beyond the byte limit. */
static inline int zlm_bytes_alloc(zrt *z, uint64_t cap, uint32_t *tag, zbytes *ok, uint64_t *err) {
  uint64_t total = z->bytes + cap;
  if (total < z->bytes) total = UINT64_MAX;
  if (total > z->byte_limit) {
    *tag = 1;
    *err = cap;
    return 0;
  }
  ok->p = zlm_mem_alloc(cap);
  if (ok->p == 0) return ZK_INTERNAL;
  ok->len = 0;
  ok->cap = cap;
  z->bytes += cap;
  *tag = 0;
  return 0;
}
/* Array.push(byte): grows as the interpreter's Vec (double, at least 8);
 * Err(1) when it must grow with the byte limit spent. */
static inline int zlm_bytes_push(zrt *z, zbytes *b, uint64_t byte, uint32_t *tag, uint64_t *err) {
  if (b->len == b->cap) {
    uint64_t nc = b->cap * 2;
    unsigned char *p;
    if (z->bytes >= z->byte_limit) {
      *tag = 1;
      *err = 1;
      return 0;
    }
    if (nc < b->len + 1) nc = b->len + 1;
    if (nc < 8) nc = 8;
    p = zlm_mem_alloc(nc);
    if (p == 0) return ZK_INTERNAL;
    if (b->len) memcpy(p, b->p, (size_t)b->len);
    zlm_mem_free(b->p);
    b->p = p;
    z->bytes += nc - b->cap;
    b->cap = nc;
  }
  b->p[b->len++] = (unsigned char)byte;
  *tag = 0;
  return 0;
}
static inline void zlm_bytes_free(zrt *z, zbytes *b) {
  z->bytes = z->bytes >= b->cap ? z->bytes - b->cap : 0;
  zlm_mem_free(b->p);
  b->p = 0;
}
static inline void zlm_bytes_render(FILE *o, const zbytes *b) {
  uint64_t i;
  fputs("bytes[", o);
  for (i = 0; i < b->len; i++) fprintf(o, i ? ", %u" : "%u", (unsigned)b->p[i]);
  fputs("]", o);
}

/* The typed boundary's word stream (docs/zlm/boundary.md, "Words"). */
static inline int zlm_word_in(const uint64_t **w, const uint64_t *e, uint64_t *x) {
  if (*w >= e) return 1;
  *x = *(*w)++;
  return 0;
}
static inline void zlm_word_out(FILE *o, uint64_t x) { fprintf(o, " %llx", (unsigned long long)x); }
/* A host-supplied array: its length, then one word per byte; its
 * capacity is its length and counts towards the byte limit. */
static inline int zlm_bytes_in(zrt *z, const uint64_t **w, const uint64_t *e, zbytes *b) {
  uint64_t n, i;
  if (zlm_word_in(w, e, &n) || n > (uint64_t)(e - *w)) return 1;
  b->p = zlm_mem_alloc(n);
  if (b->p == 0) return 1;
  for (i = 0; i < n; i++) {
    if ((*w)[i] > 255) return 1;
    b->p[i] = (unsigned char)(*w)[i];
  }
  *w += n;
  b->len = n;
  b->cap = n;
  z->bytes += n;
  return 0;
}
static inline void zlm_bytes_out(FILE *o, const unsigned char *p, uint64_t n) {
  uint64_t i;
  zlm_word_out(o, n);
  for (i = 0; i < n; i++) zlm_word_out(o, p[i]);
}

static inline int zlm_parse_word(const char *s, uint64_t *w) {
  char *end = 0;
  unsigned long long v = strtoull(s, &end, 16);
  if (!end || *end != 0 || end == s) return 1;
  *w = (uint64_t)v;
  return 0;
}

#endif
