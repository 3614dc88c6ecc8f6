// Async-signal-safe: called from thread exit and from the SIGTERM end record
// as well as from ordinary code (see schedstat.h).
#include "schedstat.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

namespace scalana::rt {

namespace {
// Appends the decimal digits of V at P; returns the new end.
char *PutDecimal(char *p, unsigned v) {
  char digits[12];
  int n = 0;
  do
    digits[n++] = char('0' + v % 10);
  while (v /= 10);
  while (n)
    *p++ = digits[--n];
  return p;
}

char *PutText(char *p, const char *s) {
  while (*s)
    *p++ = *s++;
  return p;
}

// Parses the unsigned decimal at *P, skipping leading blanks.
bool TakeNumber(const char *&p, const char *end, uint64_t *out) {
  while (p < end && *p == ' ')
    ++p;
  if (p == end || *p < '0' || *p > '9')
    return false;
  uint64_t v = 0;
  for (; p < end && *p >= '0' && *p <= '9'; ++p)
    v = v * 10 + uint64_t(*p - '0');
  *out = v;
  return true;
}

// The two first numbers of a schedstat line read into BUF (N bytes).
bool Parse(const char *buf, ssize_t n, SchedTimes *out) {
  const char *q = buf;
  return n > 0 && TakeNumber(q, buf + n, &out->on_cpu_ns) &&
         TakeNumber(q, buf + n, &out->run_delay_ns);
}
} // namespace

int OpenSchedTimes() {
  int saved = errno;
  int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  errno = saved;
  return fd;
}

bool ReadSchedTimesFrom(int fd, SchedTimes *out) {
  int saved = errno;
  char buf[96];
  ssize_t n;
  do
    n = pread(fd, buf, sizeof buf, 0);
  while (n < 0 && errno == EINTR);
  errno = saved;
  return Parse(buf, n, out);
}

bool ReadSchedTimes(int tid, SchedTimes *out) {
  char path[64];
  char *p = path;
  if (tid <= 0) {
    p = PutText(p, "/proc/thread-self/schedstat");
  } else {
    p = PutText(p, "/proc/self/task/");
    p = PutDecimal(p, unsigned(tid));
    p = PutText(p, "/schedstat");
  }
  *p = '\0';
  int saved = errno;
  bool ok = false;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[96];
    ssize_t n;
    do
      n = read(fd, buf, sizeof buf);
    while (n < 0 && errno == EINTR);
    close(fd);
    ok = Parse(buf, n, out);
  }
  errno = saved;
  return ok;
}

} // namespace scalana::rt
