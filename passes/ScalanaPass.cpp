// The ScalAna pass plugin: builds each function's local PSG and embeds the
// module's record in section `scalana_psg`. It changes no code: calling
// contexts come from stack unwinding at run time and an offline mapping of
// return addresses through the debug line tables (docs/static.md), so the
// program runs exactly as the compiler would build it without the plugin.
//
// Registered at the pipeline-start extension point, so it sees the code as
// the front end emitted it (before inlining and loop transformations) and the
// structure is the same at every -O level.
#include "ScalanaPsg.h"

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <tuple>

using namespace llvm;

namespace scalana {
namespace {

// Every environment variable the pass reads.
struct EnvVarSpec {
  const char *name, *type, *default_value, *help;
};
constexpr EnvVarSpec kPassEnvironment[] = {
    {"SCALANA_PSG_DUMP", "path", "(unset)",
     "also append each module's PSG record, one function and one vertex per line, to this "
     "file ('-' = standard output); for tests and debugging"},
};

const char *EnvValue(const char *name) {
  for (const EnvVarSpec &v : kPassEnvironment)
    if (!std::strcmp(v.name, name))
      return std::getenv(name);
  return nullptr; // not declared: never read
}

constexpr const char *kRecordGlobal = "__scalana_psg_record";

class ScalanaPass : public PassInfoMixin<ScalanaPass> {
public:
  explicit ScalanaPass(int opt_level) : opt_level_(opt_level) {}
  static bool isRequired() { return true; } // also for optnone functions at -O0

  PreservedAnalyses run(Module &m, ModuleAnalysisManager &) {
    // The pass may be scheduled twice (plugin given twice, LTO): one record.
    if (m.getNamedGlobal(kRecordGlobal))
      return PreservedAnalyses::all();
    TargetLibraryInfoImpl tlii{Triple(m.getTargetTriple())};
    std::vector<FunctionPsg> psgs;
    std::vector<CallClassifier::Target> targets;
    {
      // TargetLibraryInfo is built per function; the classifier only uses
      // name and prototype recognition, which is the same for all.
      Function *any = nullptr;
      for (Function &f : m)
        if (!f.isDeclaration())
          any = &f;
      if (!any)
        return PreservedAnalyses::all();
      TargetLibraryInfo tli(tlii, any);
      CallClassifier classifier(m, tli);
      for (Function &f : m) {
        if (f.isDeclaration() || f.hasAvailableExternallyLinkage() ||
            f.hasFnAttribute(Attribute::Naked))
          continue;
        if (classifier.IsLibraryDefinition(f))
          continue;
        psgs.push_back(BuildFunctionPsg(f, classifier));
      }
      if (!psgs.empty())
        targets = classifier.IndirectTargets();
    }
    if (psgs.empty())
      return PreservedAnalyses::all();
    // Source order in the record, whatever order the front end emitted.
    std::stable_sort(psgs.begin(), psgs.end(), [](const FunctionPsg &a, const FunctionPsg &b) {
      return std::tie(a.file, a.line, a.key) < std::tie(b.file, b.line, b.key);
    });
    EmbedRecord(m, ModuleRecordJson(m, psgs, targets, opt_level_, false));
    if (const char *dump = EnvValue("SCALANA_PSG_DUMP"); dump && *dump)
      Dump(dump, ModuleRecordJson(m, psgs, targets, opt_level_, true));
    // Only a global was added: no function changed, so their analyses stay
    // valid (the proxy too, else the function results would be dropped).
    PreservedAnalyses kept;
    kept.preserve<FunctionAnalysisManagerModuleProxy>();
    kept.preserveSet<AllAnalysesOn<Function>>();
    return kept;
  }

private:
  static void EmbedRecord(Module &m, const std::string &json) {
    Constant *bytes = ConstantDataArray::getString(m.getContext(), json, /*AddNull=*/true);
    auto *g = new GlobalVariable(m, bytes->getType(), true, GlobalValue::PrivateLinkage, bytes,
                                 kRecordGlobal);
    g->setSection("scalana_psg");
    g->setAlignment(Align(1)); // records concatenate without padding
    appendToUsed(m, {g});      // survives -O2 and --gc-sections
  }

  static void Dump(const char *path, const std::string &json) {
    if (!std::strcmp(path, "-")) {
      outs() << json;
      outs().flush();
      return;
    }
    std::error_code ec;
    raw_fd_ostream os(path, ec, sys::fs::OF_Append | sys::fs::OF_Text);
    if (ec) {
      errs() << "scalana: cannot write SCALANA_PSG_DUMP file " << path << ": " << ec.message()
             << "\n";
      return;
    }
    os << json;
  }

  int opt_level_;
};

} // namespace
} // namespace scalana

extern "C" LLVM_ATTRIBUTE_WEAK LLVM_ATTRIBUTE_VISIBILITY_DEFAULT PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "ScalanaPass", "0.1", [](PassBuilder &pb) {
            pb.registerPipelineStartEPCallback([](ModulePassManager &mpm, OptimizationLevel level) {
              mpm.addPass(scalana::ScalanaPass(static_cast<int>(level.getSpeedupLevel())));
            });
            // `opt -load-pass-plugin ScalanaPass.so -passes=scalana-psg`
            pb.registerPipelineParsingCallback(
                [](StringRef name, ModulePassManager &mpm, ArrayRef<PassBuilder::PipelineElement>) {
                  if (name != "scalana-psg")
                    return false;
                  mpm.addPass(scalana::ScalanaPass(0));
                  return true;
                });
          }};
}
