// Structure from the binary (docs/psg.md, "Structure from the binary"): the
// records the pass would write, rebuilt from what a binary built by any
// compiler with -g keeps. Each instruction of a function with line tables is
// decoded and symbolized with its inlined frames; a backward branch within
// a function closes a loop from its target to the branch (the layout
// compilers give natural loops; irreducible flow is not recognised); a call
// is a call vertex of the function its innermost frame names, and each
// inlined frame a call vertex of the function it was inlined into, so that
// FrameResolver matches frames to vertices as it does for the pass's PSG.
#include "binary_structure.h"

#include "MpiNames.h"
#include "reader_child.h"
#include "scalana/ids.h"
#include "scalana/io_operations.h"
#include "scalana/profile.h"
#include "structure_internal.h"

#include <llvm/DebugInfo/DWARF/DWARFCompileUnit.h>
#include <llvm/DebugInfo/DWARF/DWARFContext.h>
#include <llvm/DebugInfo/Symbolize/Symbolize.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <tuple>

namespace scalana {
namespace {

using llvm::symbolize::LLVMSymbolizer;

using structure::Chain;
using structure::Frame;
using structure::Insn;
using structure::Loop;
using structure::Record;
using structure::RecVertex;

const char *LanguageOf(uint64_t dw_lang) {
  switch (dw_lang) {
  case llvm::dwarf::DW_LANG_C89:
  case llvm::dwarf::DW_LANG_C:
  case llvm::dwarf::DW_LANG_C99:
  case llvm::dwarf::DW_LANG_C11:
  case llvm::dwarf::DW_LANG_C17:
    return "c";
  case llvm::dwarf::DW_LANG_C_plus_plus:
  case llvm::dwarf::DW_LANG_C_plus_plus_03:
  case llvm::dwarf::DW_LANG_C_plus_plus_11:
  case llvm::dwarf::DW_LANG_C_plus_plus_14:
  case llvm::dwarf::DW_LANG_C_plus_plus_17:
  case llvm::dwarf::DW_LANG_C_plus_plus_20:
    return "c++";
  case llvm::dwarf::DW_LANG_Fortran77:
  case llvm::dwarf::DW_LANG_Fortran90:
  case llvm::dwarf::DW_LANG_Fortran95:
  case llvm::dwarf::DW_LANG_Fortran03:
  case llvm::dwarf::DW_LANG_Fortran08:
  case llvm::dwarf::DW_LANG_Fortran18:
    return "fortran";
  default:
    return "unknown";
  }
}

class Builder {
public:
  explicit Builder(const std::string &path) : path_(path) {}

  RecoveredStructure Run() {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllDisassemblers();
    auto bin = llvm::object::createBinary(path_);
    if (!bin)
      throw Error(path_ + ": cannot read it: " + llvm::toString(bin.takeError()));
    auto *obj = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(bin->getBinary());
    if (!obj)
      throw Error(path_ + ": not an ELF object: no structure can be recovered from it");
    SetUpDisassembler(*obj);
    dwarf_ = llvm::DWARFContext::create(*obj);
    FindPlt(*obj);
    FindFunctions(*obj);
    for (const auto &[addr, fn] : functions_)
      ReadFunction(addr, fn);
    if (!records_.count("main") && !records_.count("MAIN__"))
      throw Error(path_ + " has no Program Structure Graph (section scalana_psg missing), and "
                          "no line tables for main to recover its structure from: rebuild it "
                          "with scalana-cc, scalana-cxx or scalana-fc, or at least with -g");
    return Write();
  }

private:
  struct FnSymbol {
    std::string name;
    uint64_t size = 0;
    llvm::object::SectionRef section;
  };

  void SetUpDisassembler(const llvm::object::ELFObjectFileBase &obj) {
    llvm::Triple triple = obj.makeTriple();
    std::string err;
    const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple.str(), err);
    if (!target)
      throw Error(path_ + ": no disassembler for " + triple.str() + ": " + err);
    mri_.reset(target->createMCRegInfo(triple.str()));
    llvm::MCTargetOptions mc_options;
    mai_.reset(target->createMCAsmInfo(*mri_, triple.str(), mc_options));
    sti_.reset(target->createMCSubtargetInfo(triple.str(), "", ""));
    mii_.reset(target->createMCInstrInfo());
    if (!mri_ || !mai_ || !sti_ || !mii_)
      throw Error(path_ + ": cannot set up the disassembler for " + triple.str());
    ctx_ = std::make_unique<llvm::MCContext>(triple, mai_.get(), mri_.get(), sti_.get());
    dis_.reset(target->createMCDisassembler(*sti_, *ctx_));
    mia_.reset(target->createMCInstrAnalysis(mii_.get()));
    if (!dis_ || !mia_)
      throw Error(path_ + ": cannot set up the disassembler for " + triple.str());
  }

  // PLT stubs by address: the symbol each one reaches (MPI, I/O, libc).
  void FindPlt(const llvm::object::ELFObjectFileBase &obj) {
    for (const llvm::object::ELFPltEntry &e : obj.getPltEntries()) {
      if (!e.Symbol)
        continue;
      llvm::object::SymbolRef sym(*e.Symbol, &obj);
      if (auto name = sym.getName())
        plt_[e.Address] = name->str();
      else
        llvm::consumeError(name.takeError());
    }
  }

  void FindFunctions(const llvm::object::ELFObjectFileBase &obj) {
    for (const llvm::object::ELFSymbolRef &sym : obj.symbols()) {
      auto type = sym.getType();
      auto addr = sym.getAddress();
      auto name = sym.getName();
      auto sec = sym.getSection();
      if (!type || !addr || !name || !sec) {
        llvm::consumeError(type.takeError());
        llvm::consumeError(addr.takeError());
        llvm::consumeError(name.takeError());
        llvm::consumeError(sec.takeError());
        continue;
      }
      if (*type != llvm::object::SymbolRef::ST_Function || sym.getSize() == 0 ||
          *sec == obj.section_end() || !(*sec)->isText())
        continue;
      // Aliases share an address: the first name read stands for it.
      functions_.try_emplace(*addr, FnSymbol{name->str(), sym.getSize(), **sec});
    }
  }

  Chain Symbolize(uint64_t addr) {
    Chain out;
    auto info = symbolizer_.symbolizeInlinedCode(
        path_, {addr, llvm::object::SectionedAddress::UndefSection});
    if (!info) {
      llvm::consumeError(info.takeError());
      return out;
    }
    for (uint32_t i = info->getNumberOfFrames(); i-- > 0;) {
      const llvm::DILineInfo &d = info->getFrame(i);
      if (d.FunctionName == llvm::DILineInfo::BadString || d.Line == 0)
        return {}; // a frame without a name or line: no place for it
      auto text = [](const std::string &t) { return t == llvm::DILineInfo::BadString ? "" : t; };
      out.push_back({d.FunctionName, text(d.FileName), d.Line, d.Column});
    }
    return out;
  }

  std::vector<Insn> Decode(const FnSymbol &fn, uint64_t addr) {
    std::vector<Insn> out;
    auto contents = fn.section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      return out;
    }
    const uint64_t base = fn.section.getAddress();
    if (addr < base || addr - base > contents->size() || fn.size > contents->size() - (addr - base))
      return out;
    llvm::ArrayRef<uint8_t> bytes(
        reinterpret_cast<const uint8_t *>(contents->data()) + (addr - base), fn.size);
    for (uint64_t off = 0; off < bytes.size();) {
      llvm::MCInst inst;
      uint64_t size = 0;
      if (dis_->getInstruction(inst, size, bytes.slice(off), addr + off, llvm::nulls()) !=
              llvm::MCDisassembler::Success ||
          size == 0) {
        off += 1; // data in code, or padding: step over it
        continue;
      }
      Insn in;
      in.addr = addr + off;
      in.size = uint32_t(size);
      in.call = mia_->isCall(inst);
      in.ret = !in.call && mia_->isReturn(inst);
      in.branch = !in.call && !in.ret && mia_->isBranch(inst);
      in.conditional = in.branch && mia_->isConditionalBranch(inst);
      const llvm::StringRef opcode = mii_->getName(inst.getOpcode());
      in.nop = opcode.starts_with("NOOP") || opcode.starts_with("NOP");
      if (in.call || in.branch)
        in.has_target = mia_->evaluateBranch(inst, in.addr, size, in.target);
      out.push_back(in);
      off += size;
    }
    return out;
  }

  Record &RecordOf(const std::string &name, uint64_t addr) {
    auto [it, fresh] = records_.try_emplace(name);
    if (fresh) {
      if (llvm::DWARFCompileUnit *cu = dwarf_->getCompileUnitForCodeAddress(addr))
        if (auto lang = cu->getUnitDIE().find(llvm::dwarf::DW_AT_language))
          if (auto v = lang->getAsUnsignedConstant())
            it->second.language = LanguageOf(*v);
    }
    return it->second;
  }

  // Vertex KEY of R, made by MAKE under PARENT the first time.
  int Vertex(Record &r, const std::string &key, int parent, const RecVertex &make) {
    auto [it, fresh] = r.seen.try_emplace(key, int(r.v.size()));
    if (fresh) {
      RecVertex v = make;
      v.parent = parent;
      r.v.push_back(v);
      r.v[size_t(parent)].children.push_back(it->second);
    }
    return it->second;
  }

  void ReadFunction(uint64_t addr, const FnSymbol &fn) {
    std::vector<Insn> code = Decode(fn, addr);
    std::vector<Chain> chains(code.size());
    bool any = false;
    for (size_t i = 0; i < code.size(); ++i)
      any |= !(chains[i] = Symbolize(code[i].addr)).empty();
    if (!any) {
      ++out_.functions_without_lines;
      return;
    }
    loops_ = structure::FindLoops(code, chains, addr, addr + fn.size);
    // Line ranges of every function on the chains, at their own level.
    for (size_t i = 0; i < code.size(); ++i)
      for (size_t k = 0; k < chains[i].size(); ++k) {
        const Frame &f = chains[i][k];
        RecordOf(f.name, code[i].addr).lines.Add(f.file, f.line);
      }
    for (Loop &l : loops_) {
      Record &r = RecordOf(l.fn, l.header);
      int parent = l.parent >= 0 ? loops_[size_t(l.parent)].vertex : 0;
      RecVertex v;
      v.kind = VertexKind::Loop;
      v.line = l.line;
      v.end_line = l.end_line;
      v.depth = parent > 0 ? r.v[size_t(parent)].depth + 1 : 1;
      l.vertex =
          Vertex(r, "L" + std::to_string(l.line) + ":" + std::to_string(l.end_line), parent, v);
      out_.loops += r.v.size() == size_t(l.vertex) + 1;
    }
    for (size_t i = 0; i < code.size(); ++i) {
      const Chain &c = chains[i];
      if (c.empty())
        continue;
      // Each inlined frame: a call of it where it was inlined.
      for (size_t k = 0; k + 1 < c.size(); ++k) {
        Record &r = RecordOf(c[k].name, code[i].addr);
        RecVertex v;
        v.kind = VertexKind::Call;
        v.line = c[k].line;
        v.column = c[k].column;
        v.callee = c[k + 1].name;
        Vertex(r, "C" + std::to_string(v.line) + ":" + std::to_string(v.column) + ":" + v.callee,
               ParentAt(code[i].addr, k, c[k].name), v);
      }
      if (code[i].call)
        Call(code[i], c);
    }
  }

  void Call(const Insn &in, const Chain &c) {
    const Frame &f = c.back();
    Record &r = RecordOf(f.name, in.addr);
    RecVertex v;
    v.line = f.line;
    v.column = f.column;
    std::string key;
    if (!in.has_target) {
      v.kind = VertexKind::Call;
      v.indirect = true;
      key = "I";
    } else if (auto p = plt_.find(in.target); p != plt_.end()) {
      std::string sym = p->second.substr(0, p->second.find('@'));
      if (auto op = MpiOperationOfSymbol(sym)) {
        v.kind = VertexKind::Mpi;
        v.op = *op;
        v.cls = ClassifyMpiOperation(*op);
      } else if (IsPosixIoOperation(sym)) {
        v.kind = VertexKind::Mpi;
        v.op = sym;
        v.cls = MpiClass::Other;
      } else {
        return; // a library's function: the surrounding computation
      }
      key = "M" + v.op;
    } else if (auto fn = functions_.find(in.target); fn != functions_.end()) {
      Chain callee = Symbolize(in.target);
      if (callee.empty())
        return; // code without lines (libc linked in): computation
      v.kind = VertexKind::Call;
      v.callee = callee.front().name;
      key = "C" + v.callee;
    } else {
      return;
    }
    key += ":" + std::to_string(v.line) + ":" + std::to_string(v.column);
    if (size_t(Vertex(r, key, ParentAt(in.addr, c.size() - 1, f.name), v)) + 1 == r.v.size()) {
      ++out_.calls; // a new vertex, as the loops are counted
      out_.mpi_calls += v.kind == VertexKind::Mpi;
    }
  }

  // The innermost loop of the current function's, at LEVEL of the chains
  // and in function NAME, that holds ADDR, as a vertex of NAME's record (0:
  // the function vertex).
  int ParentAt(uint64_t addr, size_t level, const std::string &name) const {
    int best = 0;
    uint64_t bytes = UINT64_MAX;
    for (const Loop &l : loops_)
      if (l.level == level && l.fn == name && l.bytes < bytes && l.Contains(addr))
        best = l.vertex, bytes = l.bytes;
    return best;
  }

  RecoveredStructure Write() {
    structure::WriteRecords(records_, path_, &out_);
    return out_;
  }

  std::string path_;
  LLVMSymbolizer symbolizer_{ReaderSymbolizerOptions()};
  std::unique_ptr<llvm::MCRegisterInfo> mri_;
  std::unique_ptr<llvm::MCAsmInfo> mai_;
  std::unique_ptr<llvm::MCSubtargetInfo> sti_;
  std::unique_ptr<llvm::MCInstrInfo> mii_;
  std::unique_ptr<llvm::MCContext> ctx_;
  std::unique_ptr<llvm::MCDisassembler> dis_;
  std::unique_ptr<llvm::MCInstrAnalysis> mia_;
  std::unique_ptr<llvm::DWARFContext> dwarf_;
  std::map<uint64_t, std::string> plt_;
  std::map<uint64_t, FnSymbol> functions_;
  std::map<std::string, Record> records_;
  std::vector<Loop> loops_; // of the function being read
  RecoveredStructure out_;
};

} // namespace

RecoveredStructure RecoverStructureHere(const std::string &object) { return Builder(object).Run(); }

std::string RecoveredStructureText(const RecoveredStructure &s) {
  return "recovered from the binary's DWARF and machine code (it has no Program Structure "
         "Graph): " +
         std::to_string(s.functions) + " functions, " + std::to_string(s.loops) + " loops, " +
         std::to_string(s.calls) + " calls (" + std::to_string(s.mpi_calls) +
         " MPI and I/O); loops from the machine code's control flow, no branch vertices or "
         "OpenMP constructs: rebuild with scalana-cc/-cxx/-fc for the full PSG";
}

} // namespace scalana
