"""Cases of test_runtime.py for the profile written at MPI_Finalize: the
collective write of profile.scalana by groups of ranks (MPI-IO), against
rank 0's gather of profile.json.gz, and the fall back from the one to the
other (runtime/collective_write.cpp, docs/runtime.md "Output").

The helpers (run, check, build, ...) are test_runtime.py's, which runs as
__main__ and imports this file."""
import os
import struct
import zlib

import __main__ as rt

HEADER, ENTRY = 64, 40


def container(path):
    """The header and index of the format-3 file PATH, every length, offset
    and crc checked against the bytes (container_format.h)."""
    with open(path, "rb") as f:
        data = f.read()
    rt.check(data[:8] == b"SCALANA3", "%s: magic %r" % (path, data[:8]))
    version, hbytes, world, meta_at, meta_len, index_at, groups, _, crc = struct.unpack(
        "<IIQQQQQII", data[8:64])
    rt.check(version == 3 and hbytes == HEADER, "version %d, header %d" % (version, hbytes))
    rt.check(crc == zlib.crc32(data[:60]), "header crc")
    rt.check(meta_at == HEADER and meta_len > 0, "meta right after the header")
    meta = zlib.decompress(data[meta_at:meta_at + meta_len], 31)
    rt.check(meta.startswith(b'{"meta":') and b'"modules"' not in meta,
             "meta section: {\"meta\": ...} without modules: %r" % meta[:80])
    rt.check(index_at + groups * ENTRY == len(data),
             "the index ends the file: %d + %d x 40 != %d" % (index_at, groups, len(data)))
    entries, at = [], meta_at + meta_len
    for g in range(groups):
        first, count, codec, offset, length, bcrc, flags = struct.unpack(
            "<QIIQQII", data[index_at + g * ENTRY:index_at + (g + 1) * ENTRY])
        rt.check(offset == at, "group %d: block at %d, expected %d (blocks in group order, "
                 "right after the meta)" % (g, offset, at))
        rt.check(zlib.crc32(data[offset:offset + length]) == bcrc, "group %d: block crc" % g)
        rt.check(codec == 2 and flags == 0, "group %d: codec %d (columns), flags %d" % (g, codec, flags))
        entries.append((first, count))
        at = offset + length
    rt.check(at == index_at, "the index follows the last block")
    return world, entries


def comparable(doc):
    """DOC (format 2) without what differs between two runs of a
    deterministic program with --sampler off: times, hosts, pids, the run's
    id and directory, and the option that chose the writer; indices into
    contexts and comms replaced by what they name, rows sorted."""
    ctx, comms = doc["contexts"], doc["comms"]
    meta = dict(doc["meta"])
    for k in ("wall_time", "start_time", "run_id"):
        meta.pop(k, None)
    meta["config"] = {k: v for k, v in meta["config"].items()
                      if k not in ("SCALANA_OUTPUT", "SCALANA_WRITE_GROUP")}
    ranks = []
    for r in doc["ranks"]:
        r = {k: v for k, v in r.items()
             if k not in ("host", "pid", "wall_time", "cpu_time", "sampling_blocked", "on_cpu",
                          "run_delay")}
        r["mpi"] = sorted([tuple(ctx[m[0]]), m[1], m[3]] + m[4:] for m in r["mpi"])
        r["deps"] = sorted([tuple(ctx[d[0]]), d[1], d[2], d[3], tuple(comms[d[4]]), d[5], d[6]] +
                           d[8:] for d in r["deps"])
        r["vertices"] = sorted([tuple(ctx[v[0]]), v[1]] for v in r["vertices"])
        ranks.append(r)
    return {"meta": meta, "ranks": ranks}


def listing(out):
    return sorted(os.listdir(out))


def case_collective(args):
    """32 ranks write profile.scalana in groups (128: one group; 5: seven
    groups, the last of 2 ranks); its content is the gather's."""
    exe = rt.build(args, args.exe)
    extra = ["--sampler", "off"]
    runs = {}
    for group in ("128", "5", "0"):
        out, p = rt.profile_run(args, exe, extra=extra + ["--write-group", group])
        runs[group] = out
        left = listing(out)
        if group == "0":
            rt.check(left == [".scalana-job", rt.GATHERED],
                     "--write-group 0: rank 0 gathers profile.json.gz: %s" % left)
            continue
        rt.check(left == [".scalana-job", rt.PROFILE],
                 "group %s: profile.scalana alone, no rank file, no partial: %s" % (group, left))
        rt.check("could not write" not in p.stderr, "no fall back: %s" % p.stderr)
        world, entries = container(os.path.join(out, rt.PROFILE))
        g = int(group)
        want = [(first, min(g, args.np - first)) for first in range(0, args.np, g)]
        rt.check(world == args.np and entries == want,
                 "group %s: world %d, groups %s, expected %s" % (group, world, entries, want))
    docs = {g: rt.read_run(out) for g, out in runs.items()}
    for g in ("128", "5"):
        d = docs[g]
        rt.check(sorted(r["rank"] for r in d["ranks"]) == list(range(args.np)) and
                 d["meta"]["complete"] and d["meta"]["world_size"] == args.np,
                 "group %s: every rank, complete" % g)
        rt.check(all(r["mpi"] and r["deps"] for r in d["ranks"]), "group %s: rows" % g)
        a, b = comparable(d), comparable(docs["0"])
        for ra, rb in zip(a["ranks"], b["ranks"]):
            rt.check(ra == rb, "group %s: rank %d differs from the gather's:\n%s\n%s"
                     % (g, ra["rank"], ra, rb))
        rt.check(a == b, "group %s: the profile is the gather's: %s\n%s" % (g, a["meta"], b["meta"]))
    # The readers the tools use see the same run in either file.
    show = [os.path.join(args.bin, "scalana"), "show", "--format", "json"]
    shown = {g: rt.json.loads(rt.run(show + [runs[g]]).stdout) for g in ("5", "0")}
    rt.check(comparable(shown["5"]) == comparable(shown["0"]),
             "scalana show reads profile.scalana as the gathered profile")


def case_collective_fallback(args):
    """MPI-IO cannot open profile.scalana.partial (a directory is in its
    way): the job says why in one line and rank 0 gathers profile.json.gz."""
    exe = rt.build(args, args.exe)
    out = rt.tempfile.mkdtemp(prefix="scalana-rt-test-")
    os.mkdir(os.path.join(out, rt.PROFILE + ".partial"))
    cmd = rt.mpirun(args.np) + [os.path.join(args.bin, "scalana"), "prof", "-o", out,
                                "--write-group", "5", "--sampler", "off", "--", exe]
    p = rt.run(cmd)
    lines = [l for l in p.stderr.splitlines() if "could not write profile.scalana" in l]
    rt.check(len(lines) == 1 and "MPI_File_open" in lines[0] and "gathers" in lines[0],
             "one line says why: %s" % p.stderr)
    left = listing(out)
    rt.check(left == [".scalana-job", rt.GATHERED, rt.PROFILE + ".partial"],
             "the gathered profile, no rank file left: %s" % left)
    d = rt.read_run(out)
    rt.check(sorted(r["rank"] for r in d["ranks"]) == list(range(args.np)) and
             d["meta"]["complete"], "every rank in the gathered profile")
