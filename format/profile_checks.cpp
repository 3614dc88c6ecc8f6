// See profile_checks.h.
#include "profile_checks.h"
#include "scalana/regular_file.h"

#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>
#include <vector>

namespace scalana {
namespace {

using json = nlohmann::json;

// Where the parser is: one frame per open object or array, each knowing
// how its parent reached it, so a message can spell "meta.sampling".
struct Frame {
  bool object = false;
  std::string reached; // ".key" or "[i]" ("" for the document)
  std::set<std::string> keys;
  std::string last_key;
  size_t index = 0;
};

std::string PathOf(const std::vector<Frame> &stack) {
  std::string s;
  for (const Frame &f : stack)
    s += f.reached;
  if (!s.empty() && s[0] == '.')
    s.erase(0, 1);
  return s;
}

} // namespace

json ParseJsonOnce(const std::string &text) {
  std::vector<Frame> stack;
  auto reach = [&]() -> std::string {
    if (stack.empty())
      return "";
    const Frame &top = stack.back();
    return top.object ? "." + top.last_key : "[" + std::to_string(top.index) + "]";
  };
  // A value ended: an array's next element is the following one.
  auto ended = [&] {
    if (!stack.empty() && !stack.back().object)
      ++stack.back().index;
  };
  json::parser_callback_t cb = [&](int, json::parse_event_t event, json &parsed) {
    switch (event) {
    case json::parse_event_t::object_start:
    case json::parse_event_t::array_start: {
      Frame f;
      f.object = event == json::parse_event_t::object_start;
      f.reached = reach();
      stack.push_back(std::move(f));
      break;
    }
    case json::parse_event_t::object_end:
    case json::parse_event_t::array_end:
      stack.pop_back();
      ended();
      break;
    case json::parse_event_t::key: {
      Frame &top = stack.back();
      top.last_key = parsed.get<std::string>();
      if (!top.keys.insert(top.last_key).second) {
        std::string where = PathOf(stack);
        throw Error((where.empty() ? std::string("the document") : where) + ": key \"" +
                    top.last_key +
                    "\" appears twice (a profile never repeats a key; the file was edited or "
                    "damaged: re-run)");
      }
      break;
    }
    case json::parse_event_t::value:
      ended();
      break;
    }
    return true;
  };
  return json::parse(text, cb);
}

} // namespace scalana

namespace scalana {

std::string RunIdOfJobFile(const std::string &run_dir) {
  std::string error, bytes;
  uint64_t size = 0;
  int fd = OpenRegularFile(run_dir + "/" + kJobFileName, &size, &error);
  if (fd < 0)
    return "";
  bool ok = ReadAllBounded(fd, 4096, &bytes, &error);
  ::close(fd);
  if (!ok)
    return "";
  for (size_t at = 0; at < bytes.size();) {
    size_t end = bytes.find('\n', at);
    std::string line = bytes.substr(at, end == std::string::npos ? end : end - at);
    if (line.compare(0, 4, "run ") == 0)
      return line.substr(4);
    if (end == std::string::npos)
      break;
    at = end + 1;
  }
  return "";
}

void CheckOneRun(const std::string &run_dir, const std::vector<std::string> &files,
                 const std::vector<std::string> &run_ids) {
  std::string run = RunIdOfJobFile(run_dir), basis;
  if (!run.empty()) {
    basis = "the run " + std::string(kJobFileName) + " names";
  } else {
    std::map<std::string, size_t> votes;
    for (const std::string &id : run_ids)
      ++votes[id];
    size_t best = 0;
    for (const std::string &id : run_ids) // ties: the lowest rank's run
      if (votes[id] > best)
        best = votes[id], run = id;
    basis = "the run of " + std::to_string(best) + " of the " + std::to_string(files.size()) +
            " rank files";
  }
  std::string odd;
  size_t n = 0;
  for (size_t i = 0; i < files.size(); ++i)
    if (run_ids[i] != run) {
      if (n++ < 10)
        odd += (odd.empty() ? "" : ", ") + files[i] + " (run " +
               (run_ids[i].empty() ? std::string("id not recorded") : run_ids[i]) + ")";
    }
  if (!n)
    return;
  if (n > 10)
    odd += ", and " + std::to_string(n - 10) + " more";
  throw Error(run_dir + ": rank files of different runs: " + odd + " not of run " +
              (run.empty() ? std::string("(id not recorded)") : run) + ", " + basis +
              "; remove them, or re-run into an empty directory");
}

} // namespace scalana
