#include "modules.h"

#include "runtime.h"
#include "signal_safe/thread_samples.h"

#include "scalana/elf_section.h"
#include "scalana/ids.h"
#include "scalana/psg_format.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace scalana::rt {
namespace {

struct LoadedObject {
  std::string path; // "" for the executable
  ModuleText text;
};

int CollectObject(struct dl_phdr_info *info, size_t, void *data) {
  auto *out = static_cast<std::vector<LoadedObject> *>(data);
  LoadedObject o;
  // dl_iterate_phdr lists the executable first, with an empty name.
  o.path = out->empty() || !info->dlpi_name ? "" : info->dlpi_name;
  o.text.base = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
      continue;
    uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
    if (!o.text.hi || lo < o.text.lo)
      o.text.lo = lo;
    if (hi > o.text.hi)
      o.text.hi = hi;
  }
  try {
    out->push_back(std::move(o));
  } catch (...) {
    return 1; // out of memory: stop listing; the next scan tries again
  }
  return 0;
}

struct Registry {
  std::mutex mutex;
  std::vector<ModuleInfo> modules;   // slot K+1 of the handler's table; paths are real paths
  std::vector<ModuleText> published; // slot K as last published (0: the executable)
  std::set<std::string> without_psg; // files read once and found to have no PSG
  // The real path of each name the loader reported. Open MPI dlopens about
  // a hundred components in MPI_Init, each dlopen rescans every loaded
  // object, and realpath() costs a readlink per path component: 36,000
  // readlinks per rank before this cache (Quicksilver, one rank).
  std::map<std::string, std::string> real_paths;
};
Registry &Modules() {
  static Registry *r = new Registry; // leaked on purpose: dlclose in exit handlers
  return *r;
}

const std::string &RealPath(Registry &r, const std::string &path) {
  auto it = r.real_paths.find(path);
  if (it != r.real_paths.end())
    return it->second;
  char buf[4096];
  return r.real_paths.emplace(path, realpath(path.c_str(), buf) ? buf : path).first->second;
}

// The module record of a shared object with a PSG; false when PATH has none
// (most libraries: libc, libmpi, this runtime) or cannot be read.
bool ReadModule(const std::string &path, ModuleInfo *out) {
  std::string error;
  auto elf = ReadElf(path, kPsgSection, &error);
  if (!elf || !elf->has_section)
    return false;
  out->path = path;
  out->build_id = elf->build_id;
  out->psg_id = PsgId(elf->section);
  return true;
}

// Republishing an unchanged slot would empty it for a moment, and a sample
// of that module's code taken then would lose its frame.
void Publish(Registry &r, uint32_t slot, const ModuleText &text) {
  if (r.published.size() <= slot)
    r.published.resize(slot + 1);
  ModuleText &last = r.published[slot];
  if (last.lo == text.lo && last.hi == text.hi && last.base == text.base)
    return;
  last = text;
  PublishModuleText(slot, text);
}

} // namespace

void ScanModules() noexcept {
  try {
    std::vector<LoadedObject> objects;
    // Listed first, files read afterwards: dl_iterate_phdr holds the
    // loader's lock while it calls back.
    dl_iterate_phdr(CollectObject, &objects);
    Registry &r = Modules();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::vector<bool> present(r.modules.size(), false);
    for (size_t i = 0; i < objects.size(); ++i) {
      const LoadedObject &o = objects[i];
      if (i == 0) {
        Publish(r, 0, o.text); // the executable: always module 0, never moves
        continue;
      }
      if (o.path.empty() || !o.text.hi) // the vDSO, or no code
        continue;
      const std::string &path = RealPath(r, o.path);
      if (r.without_psg.count(path))
        continue;
      size_t k = 0;
      while (k < r.modules.size() && r.modules[k].path != path)
        ++k;
      if (k == r.modules.size()) {
        ModuleInfo info;
        if (!ReadModule(path, &info)) {
          r.without_psg.insert(path);
          continue;
        }
        if (r.modules.size() + 1 >= kMaxModuleSlots) {
          CountError("modules_over_limit");
          continue;
        }
        r.modules.push_back(std::move(info));
        present.push_back(false);
      }
      present[k] = true;
      Publish(r, uint32_t(k + 1), o.text);
    }
    // Unloaded since the last scan: no address of theirs is the program's.
    for (size_t k = 0; k < present.size(); ++k)
      if (!present[k])
        Publish(r, uint32_t(k + 1), ModuleText{});
  } catch (...) {
    CountError("module_scan");
  }
}

std::string PsgId(const std::vector<uint8_t> &section) {
  char id[24];
  std::snprintf(id, sizeof id, "0x%016llx",
                (unsigned long long)scalana_fnv1a64(section.data(), section.size()));
  return id;
}

std::vector<ModuleInfo> LoadedModules() {
  Registry &r = Modules();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.modules;
}

// ---- dlopen and dlclose interposers: a module loaded or unloaded while the
// program runs is scanned at once, before its code can run.

namespace {

using DlopenFn = void *(*)(const char *, int);
using DlcloseFn = int (*)(void *);

// glibc searches a bare file name in the DT_RPATH/DT_RUNPATH of the object
// that called dlopen, found from the return address. Through this
// interposer that caller would be libscalana-rt, which has none, and a
// program's plug-in found only through its own RUNPATH (or $ORIGIN) would
// fail to load. So the caller's search path is asked of the loader
// (RTLD_DI_SERINFO, which expands $ORIGIN) and the first directory holding
// the file is named to the real dlopen; a file found in none of them goes
// to the real dlopen as given (LD_LIBRARY_PATH, the cache, the defaults).
std::string SearchCallerPath(const char *file, const void *caller) {
  if (!file || !*file || std::strchr(file, '/'))
    return {};
  Dl_info info;
  struct link_map *map = nullptr;
  if (!dladdr1(caller, &info, reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP) || !map)
    return {};
  Dl_serinfo size;
  if (dlinfo(map, RTLD_DI_SERINFOSIZE, &size) != 0 || size.dls_size < sizeof(Dl_serinfo))
    return {};
  std::vector<char> buf(size.dls_size);
  auto *paths = reinterpret_cast<Dl_serinfo *>(buf.data());
  paths->dls_size = size.dls_size;
  paths->dls_cnt = size.dls_cnt;
  if (dlinfo(map, RTLD_DI_SERINFOSIZE, paths) != 0 || dlinfo(map, RTLD_DI_SERINFO, paths) != 0)
    return {};
  for (unsigned i = 0; i < paths->dls_cnt; ++i) {
    const char *dir = paths->dls_serpath[i].dls_name;
    if (!dir || !*dir)
      continue;
    std::string candidate = std::string(dir) + "/" + file;
    if (access(candidate.c_str(), F_OK) == 0)
      return candidate;
  }
  return {};
}

} // namespace

} // namespace scalana::rt

extern "C" void *dlopen(const char *file, int mode) {
  static auto real = reinterpret_cast<scalana::rt::DlopenFn>(dlsym(RTLD_NEXT, "dlopen"));
  if (!real)
    return nullptr;
  std::string found;
  try {
    found = scalana::rt::SearchCallerPath(file, __builtin_return_address(0));
  } catch (...) {
  }
  void *handle = real(found.empty() ? file : found.c_str(), mode);
  if (handle && scalana::rt::RuntimeActive())
    scalana::rt::ScanModules();
  return handle;
}

extern "C" int dlclose(void *handle) {
  static auto real = reinterpret_cast<scalana::rt::DlcloseFn>(dlsym(RTLD_NEXT, "dlclose"));
  if (!real)
    return -1;
  int rc = real(handle);
  if (rc == 0 && scalana::rt::RuntimeActive())
    scalana::rt::ScanModules();
  return rc;
}
