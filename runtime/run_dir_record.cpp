// The job file's record read and shown (run_dir_claim.h; docs/formats.md
// section 3).
#include "run_dir_claim.h"
#include "run_dir_files.h"
#include "scalana/echo.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace scalana::rundir {

std::string JobToken(const std::string &job) {
  std::string t = job.substr(0, 200);
  for (char &c : t)
    if (uint8_t(c) <= ' ' || uint8_t(c) >= 0x7f)
      c = '_';
  return t;
}

JobRecord ParseJobRecord(const std::string &text) {
  JobRecord r;
  std::istringstream in(text);
  std::string line;
  bool first = true;
  // Only whole lines: a record being written may end in a partial one.
  while (std::getline(in, line)) {
    if (in.eof())
      break;
    if (first) {
      r.job = line.substr(0, line.find(' '));
      first = false;
      continue;
    }
    size_t sp = line.find(' ');
    std::string key = line.substr(0, sp),
                value = sp == std::string::npos ? "" : line.substr(sp + 1);
    if (key == "host")
      r.host = value;
    else if (key == "boot")
      r.boot = value;
    else if (key == "pid")
      r.pid = std::atoll(value.c_str());
    else if (key == "pid_start")
      r.pid_start = std::strtoull(value.c_str(), nullptr, 10);
    else if (key == "start")
      r.start = value;
    else if (key == "lock")
      r.whole = true, r.locked = value == "1";
    else if (key == "ready")
      r.ready = true;
  }
  return r;
}

JobRecord ReadJobRecord(const std::string &dir) {
  std::ifstream in(dir + "/" + kJobFile, std::ios::binary);
  std::string text(4096, '\0');
  in.read(&text[0], std::streamsize(text.size()));
  text.resize(size_t(in.gcount()));
  return ParseJobRecord(text);
}

std::string DescribeJob(const JobRecord &r) {
  std::string s = "job " + (r.job.empty() ? std::string("(unnamed)") : EchoValue(r.job));
  std::string details;
  if (!r.host.empty())
    details += "host " + EchoValue(r.host);
  if (r.pid > 0)
    details += (details.empty() ? "" : ", ") + std::string("pid ") + std::to_string(r.pid);
  if (!r.start.empty())
    details += (details.empty() ? "" : ", ") + std::string("started ") + EchoValue(r.start);
  return details.empty() ? s : s + " (" + details + ")";
}

} // namespace scalana::rundir
