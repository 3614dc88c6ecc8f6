/* The sweep length of line0.c, in a translation unit of its own: the call
 * stays in the loop. */
static long sweep_length = 2000000;

long SweepLength(void) { return sweep_length; }
