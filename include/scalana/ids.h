/* Vertex identity shared by the pass (which assigns ids), the runtime (which
 * records them) and the analyzer (which resolves them). C and C++.
 *
 * A raw vertex id names one vertex of one function's local PSG:
 *   id = (FunctionHash(key) & SCALANA_FN_MASK) | local_index
 * where key is the function's linkage name, prefixed with "<module source>:"
 * when the function has internal linkage (two `static` functions of the same
 * name in different files must not collide). Bit 63 is always set so that 0
 * never names a vertex and can mean "none". Local indices are 20 bits; the
 * pass refuses to number more (it contracts the function to one Comp). */
#ifndef SCALANA_IDS_H
#define SCALANA_IDS_H

#include <stddef.h>
#include <stdint.h>

#define SCALANA_LOCAL_BITS 20
#define SCALANA_LOCAL_MASK ((UINT64_C(1) << SCALANA_LOCAL_BITS) - 1)
#define SCALANA_FN_MASK (~SCALANA_LOCAL_MASK)
#define SCALANA_MAX_LOCAL_VERTICES (SCALANA_LOCAL_MASK + 1)

static inline uint64_t scalana_fnv1a64(const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= UINT64_C(0x100000001b3);
  }
  return h;
}

/* Hash of a function key with the low (local index) bits cleared. */
static inline uint64_t scalana_function_hash(const char *key, size_t n) {
  return (scalana_fnv1a64(key, n) | (UINT64_C(1) << 63)) & SCALANA_FN_MASK;
}

static inline uint64_t scalana_vertex_id(uint64_t function_hash, uint32_t local) {
  return (function_hash & SCALANA_FN_MASK) | ((uint64_t)local & SCALANA_LOCAL_MASK);
}

static inline uint64_t scalana_id_function(uint64_t id) { return id & SCALANA_FN_MASK; }
static inline uint32_t scalana_id_local(uint64_t id) { return (uint32_t)(id & SCALANA_LOCAL_MASK); }

#endif
