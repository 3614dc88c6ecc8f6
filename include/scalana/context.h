/* The per-thread execution context: the one piece of state shared between
 * instrumented program code and the runtime. C and C++.
 *
 * The pass defines `__scalana_ctx` in every instrumented module as a
 * linkonce_odr thread-local global (so one copy survives linking) and the
 * compiler wrapper exports it from executables
 * (-Wl,--export-dynamic-symbol=__scalana_ctx) so the preloaded runtime finds
 * each thread's copy with dlsym(). Programs run normally without the runtime:
 * the stores below just land in an unused thread-local.
 *
 * Protocol (all stores volatile, so the optimizer keeps them in order):
 * `vertex` is always the innermost structural vertex (function, loop, branch,
 * call, mpi) enclosing the code now running; straight-line code belongs to
 * its enclosing vertex, as in the paper (Comp vertices only arise offline, by
 * contraction).
 *   - function entry:        ctx.vertex = <the function vertex, local 0>
 *   - entering a vertex:     ctx.vertex = <its raw id>  (loop preheader, branch
 *                            arms); leaving it: ctx.vertex = <its parent>
 *   - user call site C:      d = ctx.depth; ctx.call_sites[d & (CAP-1)] = C;
 *                            ctx.depth = d + 1; ctx.vertex = C;
 *                            call ...;
 *                            ctx.depth = d; ctx.vertex = <the call's parent>
 *   - MPI call site M:       ctx.vertex = M; call MPI_...; ctx.vertex = <its parent>
 *   - leaf function L (its PSG is the function vertex alone, so the analyzer
 *     always contracts it into the caller's computation): no stores at all,
 *     unless L is main or its address is taken; a call to L in L's own module
 *     (when that definition is the one linked) is stored like an MPI call
 *     site: ctx.vertex = C; call L; ctx.vertex = <its parent>. Either way the
 *     context ends in C (or C, C), which resolves to C's Comp.
 *   - a vertex store that nothing can observe (overwritten before any other
 *     code runs, or repeating the value held) may be left out.
 * So a sample or an MPI wrapper sees the calling context as
 * call_sites[0..depth) followed by vertex. If vertex equals the innermost call
 * site, the thread is inside a callee that is not instrumented (a library).
 * If depth > CAP the context is truncated: only `vertex` is trustworthy.
 * Exceptions and longjmp skip the restores; the next return in an outer
 * frame restores depth, so the damage is bounded to that window. */
#ifndef SCALANA_CONTEXT_H
#define SCALANA_CONTEXT_H

#include <stdint.h>

#define SCALANA_CTX_STACK_CAP 128 /* power of two: masked, never bounds-checked */
#define SCALANA_CTX_SYMBOL "__scalana_ctx"

typedef struct ScalanaThreadContext {
  uint64_t vertex;
  uint32_t depth;
  uint32_t reserved;
  uint64_t call_sites[SCALANA_CTX_STACK_CAP];
} ScalanaThreadContext;

#endif
