// Notices printed once per build, not once per compiler invocation: make and
// ninja run the wrapper once per file, and a GCC-only option in CFLAGS would
// otherwise repeat its notice for every file (docs/static.md section 2).
#pragma once

#include <string>

namespace scalana {

// The build this process belongs to: "<pid>-<start time>" of the outermost
// make/gmake/ninja/samu reached from the wrapper through build tools, shells
// and launchers (cmake --build, sh -c, ccache, ...), or "" when there is none
// (a command typed by hand, a script, a test driver).
std::string BuildKey();

// Writes "<who>: <text>" to standard error unless another process of the same
// build already did. A marker file per notice, created with O_EXCL under
// $XDG_RUNTIME_DIR (else $TMPDIR or /tmp)/scalana-notices-<uid>/<build key>/,
// decides which process prints: no lock, safe under parallel make. Without a
// build key, or when the markers cannot be written, the notice is printed.
// TEXT escaped, the command line's values in it echoed cut (scalana/echo.h):
// a GCC option the notice quotes may hold ESC or a newline, or be 10 KB.
void NoticeOncePerBuild(const char *who, const std::string &text);

// The wrapper's arguments, for the notices to echo (set once by main).
void SetEchoedArgs(int argc, char **argv);
// TEXT's lines, each echoed so (its own line ends kept).
std::string EchoedNotice(const std::string &text);

} // namespace scalana
