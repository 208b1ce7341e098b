// c2x86 sample: a switch (kept as compares by -fno-jump-tables), a loop and a float literal.
#include <stdio.h>

static int weight(int k) {
  switch (k % 6) {
    case 0: return 3;
    case 1: return 1;
    case 2: return 4;
    case 3: return 1;
    case 4: return 5;
    default: return 9;
  }
}

int main(void) {
  long total = 0;
  for (int i = 1; i <= 100; ++i) total += (long)i * i * weight(i);
  double scaled = total * 0.125;
  printf("total %ld scaled %.3f\n", total, scaled);
  return 0;
}
