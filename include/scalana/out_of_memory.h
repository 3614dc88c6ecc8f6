// For the offline tools' main(): an exception that cannot be caught must
// still end the tool with a clear message, not an abort. nlohmann::json
// allocates while destroying a document (it flattens large arrays onto a
// heap stack), so under a memory limit a std::bad_alloc can be thrown from
// a destructor, where it terminates the program.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

namespace scalana {

namespace out_of_memory_detail {
inline const char *g_tool = "scalana";

// The message may quote a file: controls escaped, without allocating.
inline void PutEscaped(const char *s) {
  for (; *s; ++s) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c < 0x20 || c >= 0x7f)
      std::fprintf(stderr, "\\x%02x", c);
    else
      std::fputc(c, stderr);
  }
}

[[noreturn]] inline void OnTerminate() {
  // Nothing here may allocate: memory is what ran out.
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc &) {
      std::fprintf(stderr,
                   "%s: error: out of memory; the input is too large for this machine's memory "
                   "(or its ulimit -v)\n",
                   g_tool);
      std::_Exit(1);
    } catch (const std::exception &x) {
      std::fprintf(stderr, "%s: internal error: ", g_tool);
      PutEscaped(x.what());
      std::fputc('\n', stderr);
    } catch (...) {
      std::fprintf(stderr, "%s: internal error: unknown exception\n", g_tool);
    }
  } else {
    std::fprintf(stderr, "%s: internal error: terminated\n", g_tool);
  }
  std::_Exit(2);
}
} // namespace out_of_memory_detail

// TOOL ("scalana detect") prefixes the message; it must outlive the program.
inline void ExitCleanlyOnUncaughtExceptions(const char *tool) {
  out_of_memory_detail::g_tool = tool;
  std::set_terminate(out_of_memory_detail::OnTerminate);
}

} // namespace scalana
