#!/usr/bin/env python3
"""Generates the PMPI wrappers of libscalana-rt from mpi_wrappers.spec.

usage: gen_mpi_wrappers.py SPEC MPI_H OUTPUT.cpp

The C prototype of every operation comes from the MPI library's own mpi.h, so
the wrappers always match the library they are built against. For each
operation the output holds the C wrapper MPI_X (calling PMPI_X) and the
Fortran spellings mpi_x_, mpi_x__ (calling pmpi_x_) and mpi_x_f08_ (calling
pmpi_x_f08_): Open MPI's Fortran bindings call PMPI_X directly, so C wrappers
alone would miss Fortran programs. Fortran arguments arrive by reference;
handles are converted with MPI_*_f2c so the spec's pre/post code sees C values.
"""
import re
import sys

HANDLE_F2C = {
    "MPI_Comm": "MPI_Comm_f2c", "MPI_Datatype": "MPI_Type_f2c", "MPI_Op": "MPI_Op_f2c",
    "MPI_Win": "MPI_Win_f2c", "MPI_Info": "MPI_Info_f2c", "MPI_Group": "MPI_Group_f2c",
    "MPI_Request": "MPI_Request_f2c", "MPI_Errhandler": "MPI_Errhandler_f2c",
    "MPI_File": "MPI_File_f2c",
}
CLASSES = {"p2p_blocking", "p2p_nonblocking", "completion", "collective", "one_sided", "other"}


def fail(msg):
    sys.stderr.write("gen_mpi_wrappers.py: %s\n" % msg)
    sys.exit(1)


def read_spec(path):
    ops, cur = [], None
    for lineno, raw in enumerate(open(path), 1):
        line = raw.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if word == "op":
            words = rest.split()
            if len(words) not in (2, 3) or (len(words) == 3 and words[2] != "untimed"):
                fail("%s:%d: expected 'op NAME CLASS [untimed]'" % (path, lineno))
            name, cls = words[0], words[1]
            if cls not in CLASSES:
                fail("%s:%d: unknown class %s" % (path, lineno, cls))
            cur = {"name": name, "class": cls, "pre": "", "post": "", "fortran": True,
                   "timed": len(words) == 2}
            ops.append(cur)
        elif word in ("pre", "post") and cur:
            cur[word] += rest + "\n"
        elif word == "fortran" and cur:
            cur["fortran"] = rest.strip() != "no"
        else:
            fail("%s:%d: cannot parse: %s" % (path, lineno, line))
    return ops


def read_prototypes(mpi_h, wanted):
    text = open(mpi_h).read()
    protos = {}
    for m in re.finditer(r"OMPI_DECLSPEC\s+int\s+MPI_(\w+)\s*\(([^;]*?)\)\s*;", text, re.S):
        name, params = m.group(1), " ".join(m.group(2).split())
        if name in protos or name not in wanted:
            continue
        plist = []
        if params != "void":
            for p in params.split(","):
                p = p.strip()
                pm = re.match(r"(.*?)(\w+)\s*(\[\])?$", p)
                if not pm:
                    fail("cannot parse parameter '%s' of MPI_%s" % (p, name))
                ctype, pname, arr = pm.group(1).strip(), pm.group(2), bool(pm.group(3))
                if pname.startswith("array_of_") and ctype.endswith("*"):
                    # mpi.h spells some arrays as pointers (MPI_Waitall's statuses)
                    ctype, arr = ctype[:-1].strip(), True
                plist.append({"decl": p, "type": ctype, "name": pname, "array": arr})
        protos[name] = plist
    return protos


def array_length(params):
    for p in params:
        if p["type"] == "int" and p["name"] in ("count", "incount"):
            return p["name"]
    return None


# Passed from each entry point the program calls: its return address names the
# MPI call site and, with its frame address, keys the call's context
# (runtime/call_sites.h). Taking the frame address makes the compiler keep a
# frame pointer in the entry point, so it is the same at every call.
CALLER = "__builtin_return_address(0), __builtin_frame_address(0)"


def c_wrapper(op, params):
    name, cls = op["name"], op["class"]
    decl = ", ".join(p["decl"] for p in params) or "void"
    args = ", ".join(p["name"] for p in params)
    out = ['extern "C" int MPI_%s(%s) {' % (name, decl),
           '  scalana::rt::MpiCall call("MPI_%s", scalana::MpiClass::%s, %s%s);'
           % (name, class_enum(cls), CALLER, timing(op))]
    n = array_length(params)
    for p in params:
        if p["type"] == "MPI_Status *":
            # Substitute our own status so ANY_SOURCE receives still yield the peer.
            out.append("  MPI_Status %s_ignored_;" % p["name"])
            out.append("  if (%s == MPI_STATUS_IGNORE) %s = &%s_ignored_;" % ((p["name"],) * 3))
        if p["type"] == "MPI_Status" and p["array"]:
            out.append("  if (%s == MPI_STATUSES_IGNORE) %s = scalana::rt::StatusScratch(%s);"
                       % (p["name"], p["name"], n))
    out += ["  " + l for l in op["pre"].splitlines()]
    out.append("  int rc_ = PMPI_%s(%s);" % (name, args))
    out.append("  call.Stop();")
    if op["post"]:
        out.append("  if (call.active() && rc_ == MPI_SUCCESS) {")
        out += ["    " + l for l in op["post"].splitlines()]
        out.append("  }")
    out += ["  return rc_;", "}", ""]
    return "\n".join(out)


def timing(op):
    """The MpiCall argument that skips the clock for calls that return at once."""
    return "" if op["timed"] else ", scalana::rt::MpiCall::kUntimed"


def class_enum(cls):
    return {"p2p_blocking": "P2PBlocking", "p2p_nonblocking": "P2PNonBlocking",
            "completion": "Completion", "collective": "Collective",
            "one_sided": "OneSided", "other": "Other"}[cls]


def fortran_wrappers(op, params):
    name, cls = op["name"], op["class"]
    n = array_length(params)
    fparams, fargs, pre, post = [], [], [], []
    for p in params:
        t, v = p["type"], p["name"]
        base = t.replace("const ", "").strip()
        if v in ("argc", "argv"):
            continue  # Fortran MPI_Init has no argc/argv
        if base in ("void *",):
            fparams.append("void *%s" % v)
            fargs.append(v)
        elif base == "int" and not p["array"]:
            fparams.append("MPI_Fint *%s_f" % v)
            fargs.append(v + "_f")
            pre.append("int %s = *%s_f;" % (v, v))
        elif base in ("MPI_Aint", "MPI_Offset") and not p["array"]:
            fparams.append("%s *%s_f" % (base, v))
            fargs.append(v + "_f")
            pre.append("%s %s = *%s_f;" % (base, v, v))
        elif base in HANDLE_F2C and not p["array"]:
            fparams.append("MPI_Fint *%s_f" % v)
            fargs.append(v + "_f")
            pre.append("%s %s = %s(*%s_f);" % (base, v, HANDLE_F2C[base], v))
        elif base.endswith("*") and base[:-1].strip() in HANDLE_F2C and not p["array"]:
            h = base[:-1].strip()
            fparams.append("MPI_Fint *%s_f" % v)
            fargs.append(v + "_f")
            pre.append("%s %s_c = %s(*%s_f);" % (h, v, HANDLE_F2C[h], v))
            pre.append("%s *%s = &%s_c;" % (h, v, v))
            post.append("%s_c = %s(*%s_f);" % (v, HANDLE_F2C[h], v))
        elif base == "int *" and not p["array"]:
            fparams.append("MPI_Fint *%s_f" % v)
            fargs.append(v + "_f")
            pre.append("int %s_c = *%s_f;" % (v, v))
            pre.append("int *%s = &%s_c;" % (v, v))
            post.append("%s_c = *%s_f;" % (v, v))
            if v == "index":  # Fortran indices are 1-based
                post.append("if (index_c != MPI_UNDEFINED) index_c -= 1;")
        elif base == "int" and p["array"]:
            fparams.append("MPI_Fint *%s_f" % v)
            fargs.append(v + "_f")
            if v == "array_of_indices":
                pre.append("int *%s = nullptr;" % v)
                post.append("%s = scalana::rt::FortranIndices(%s_f, *outcount);" % (v, v))
            else:
                pre.append("const int *%s = %s_f;" % (v, v))
        elif base == "MPI_Request" and p["array"]:
            fparams.append("MPI_Fint *%s_f" % v)
            fargs.append(v + "_f")
            pre.append("MPI_Request *%s = scalana::rt::FortranRequests(%s_f, %s);" % (v, v, n))
        elif base == "MPI_Status *":
            fparams.append("MPI_Fint *%s_f" % v)
            fargs.append(v + "_f")
            pre.append("MPI_Fint %s_buf[sizeof(MPI_Status) / sizeof(MPI_Fint)];" % v)
            pre.append("if (%s_f == MPI_F_STATUS_IGNORE) %s_f = %s_buf;" % (v, v, v))
            pre.append("MPI_Status %s_c{};" % v)
            pre.append("MPI_Status *%s = &%s_c;" % (v, v))
            post.append("MPI_Status_f2c(%s_f, &%s_c);" % (v, v))
        elif base == "MPI_Status" and p["array"]:
            fparams.append("MPI_Fint *%s_f" % v)
            fargs.append(v + "_f")
            pre.append("if (%s_f == MPI_F_STATUSES_IGNORE) %s_f = scalana::rt::FortranStatusScratch(%s);"
                       % (v, v, n))
            pre.append("MPI_Status *%s = nullptr;" % v)
            post.append("%s = scalana::rt::FortranStatuses(%s_f, %s);" % (v, v, n))
        elif p["array"]:
            fparams.append("void *%s" % v)  # handle arrays we never inspect
            fargs.append(v)
        else:
            fail("MPI_%s: no Fortran mapping for parameter '%s'" % (name, p["decl"]))
    fparams.append("MPI_Fint *ierr")
    fargs.append("ierr")
    lname = name.lower()
    fn_type = "void (*)(%s)" % ", ".join(re.sub(r"\s*\w+$", "", fp) for fp in fparams)
    body = ["static void scalana_fortran_%s(%s, %s) {"
            % (name, "void *pmpi_, const void *ra_, const void *fa_", ", ".join(fparams)),
            '  scalana::rt::MpiCall call("MPI_%s", scalana::MpiClass::%s, ra_, fa_%s);'
            % (name, class_enum(cls), timing(op))]
    body += ["  " + l for l in pre]
    body += ["  " + l for l in op["pre"].splitlines()]
    body.append("  if (!pmpi_) {  // cannot happen: only Fortran code linked to the library calls us")
    body.append("    if (ierr) *ierr = MPI_ERR_INTERN;")
    body.append("    return;")
    body.append("  }")
    body.append("  reinterpret_cast<%s>(pmpi_)(%s);" % (fn_type, ", ".join(fargs)))
    body.append("  call.Stop();")
    if op["post"]:
        body.append("  if (call.active() && (!ierr || *ierr == MPI_SUCCESS)) {")
        body += ["    " + l for l in post]
        body += ["    " + l for l in op["post"].splitlines()]
        body.append("  }")
    body += ["}", ""]
    decl = ", ".join(fparams)
    for sym, target in ((lname + "_", "pmpi_%s_" % lname), (lname + "__", "pmpi_%s_" % lname),
                        (lname + "_f08_", "pmpi_%s_f08_" % lname)):
        body.append('extern "C" void mpi_%s(%s) {' % (sym, decl))
        body.append('  static void *pmpi_ = scalana::rt::FortranSymbol("%s");' % target)
        body.append("  scalana_fortran_%s(pmpi_, %s, %s);" % (name, CALLER, ", ".join(fargs)))
        body.append("}")
    body.append("")
    return "\n".join(body)


def main():
    if len(sys.argv) != 4:
        fail("usage: gen_mpi_wrappers.py SPEC MPI_H OUTPUT.cpp")
    spec, mpi_h, output = sys.argv[1:]
    ops = read_spec(spec)
    protos = read_prototypes(mpi_h, {op["name"] for op in ops})
    out = ["// Generated by runtime/gen_mpi_wrappers.py from runtime/mpi_wrappers.spec: do not edit.",
           '#include "recorder.h"', "",
           "static_assert(sizeof(MPI_Fint) == sizeof(int), \"Fortran INTEGER must be a C int\");",
           "using namespace scalana::rt;", "using scalana::DepKind;", ""]
    names = []
    for op in ops:
        if op["name"] not in protos:
            fail("MPI_%s is not declared in %s" % (op["name"], mpi_h))
        params = protos[op["name"]]
        out.append(c_wrapper(op, params))
        if op["fortran"]:
            out.append(fortran_wrappers(op, params))
        names.append(op["name"])
    out.append("// %d operations wrapped: %s" % (len(names), " ".join(names)))
    open(output, "w").write("\n".join(out) + "\n")


main()
