#include "shared.h"
double UseA(const int *v, int n) { return Twice(v, n) + Reduce(v, n); }
