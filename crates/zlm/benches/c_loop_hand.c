/* Main.sum of examples/zlm/run/loop.zlt written by hand with the same
 * checks: n >= 0 on entry, result >= 0 on exit, checked 64-bit additions
 * (overflow faults), ZLM_REPEAT runs timed as the emitted program does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int sum(int64_t n, int64_t *out) {
  int64_t i = 0, acc = 0;
  if (n < 0) return 1;
  while (i < n) {
    if (__builtin_add_overflow(acc, i, &acc)) return 2;
    if (__builtin_add_overflow(i, 1, &i)) return 2;
  }
  if (acc < 0) return 1;
  *out = acc;
  return 0;
}

int main(int argc, char **argv) {
  int64_t n, r = 0;
  unsigned long long k, reps;
  struct timespec t0, t1;
  if (argc < 3) return 2;
  n = strtoll(argv[1], 0, 10);
  reps = strtoull(argv[2], 0, 10);
  timespec_get(&t0, TIME_UTC);
  for (k = 0; k < reps; k++) {
    if (sum(n, &r) != 0) return 1;
    __asm__ volatile("" : : "r"(r) : "memory");
  }
  timespec_get(&t1, TIME_UTC);
  printf("TIME\t%.0f\n%lld\n", ((double)t1.tv_sec - (double)t0.tv_sec) * 1e9 + ((double)t1.tv_nsec - (double)t0.tv_nsec), (long long)r);
  return 0;
}
