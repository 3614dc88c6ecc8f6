/* An OMPT tool whose callbacks do nothing, preloaded into the plain build:
 * what libomp itself spends on a tool with the callbacks ScalAna's tool
 * registers (EMPTY_TOOL_CALLBACKS=3: parallel_begin, implicit_task,
 * sync_region_wait; 4: and work, as with --omp-worksharing; 0: none), the
 * floor under any tool that needs them. */
#include <omp-tools.h>
#include <stdlib.h>

static void parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *region,
                           unsigned int threads, int flags, const void *codeptr) {}
static void implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *region, ompt_data_t *task,
                          unsigned int threads, unsigned int index, int flags) {}
static void sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                             ompt_data_t *region, ompt_data_t *task, const void *codeptr) {}
static void work(ompt_work_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t *region,
                 ompt_data_t *task, uint64_t count, const void *codeptr) {}

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *data) {
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
  const char *env = getenv("EMPTY_TOOL_CALLBACKS");
  int callbacks = env ? atoi(env) : 3;
  if (callbacks >= 3) {
    set(ompt_callback_parallel_begin, (ompt_callback_t)parallel_begin);
    set(ompt_callback_implicit_task, (ompt_callback_t)implicit_task);
    set(ompt_callback_sync_region_wait, (ompt_callback_t)sync_region_wait);
  }
  if (callbacks >= 4)
    set(ompt_callback_work, (ompt_callback_t)work);
  return 1;
}

static void finalize(ompt_data_t *data) {}

ompt_start_tool_result_t *ompt_start_tool(unsigned int version, const char *runtime) {
  static ompt_start_tool_result_t result = {initialize, finalize, {0}};
  return &result;
}
