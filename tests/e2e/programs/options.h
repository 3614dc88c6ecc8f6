/* The command line every e2e program takes: --inject turns the injected
 * root cause on, --iters N sets the main loop's trip count (ITERS keeps
 * the program's default otherwise). */
#pragma once

#include <stdlib.h>
#include <string.h>

static void ParseOptions(int argc, char **argv, int *inject, long *iters) {
  *inject = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--inject"))
      *inject = 1;
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
      *iters = atol(argv[++i]);
  }
}
