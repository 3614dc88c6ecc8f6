/* Hand-written instrumentation following include/scalana/context.h, so the
 * runtime's attribution is tested with known ids independently of the pass.
 * Ids: function hash 0x8000000000100000 (main's file), local index = the
 * number passed. Link with -Wl,--export-dynamic-symbol=__scalana_ctx. */
#ifndef HAND_CTX_H
#define HAND_CTX_H
#include "scalana/context.h"

__thread ScalanaThreadContext __scalana_ctx;

#define FN UINT64_C(0x8000000000100000)
#define ID(local) (FN | (uint64_t)(local))
#define CTX (*(volatile ScalanaThreadContext *)&__scalana_ctx)

/* An MPI call site: vertex = the site while the call runs. */
#define MPI_AT(local, call)                                                                        \
  do {                                                                                             \
    uint64_t parent_ = CTX.vertex;                                                                 \
    CTX.vertex = ID(local);                                                                        \
    call;                                                                                          \
    CTX.vertex = parent_;                                                                          \
  } while (0)

/* A user call site. */
#define CALL_AT(local, call)                                                                       \
  do {                                                                                             \
    uint32_t d_ = CTX.depth;                                                                       \
    uint64_t parent_ = CTX.vertex;                                                                 \
    CTX.call_sites[d_ & (SCALANA_CTX_STACK_CAP - 1)] = ID(local);                                  \
    CTX.depth = d_ + 1;                                                                            \
    CTX.vertex = ID(local);                                                                        \
    call;                                                                                          \
    CTX.depth = d_;                                                                                \
    CTX.vertex = parent_;                                                                          \
  } while (0)

#endif
