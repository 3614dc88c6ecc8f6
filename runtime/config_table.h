// Every SCALANA_* option, declared once. The launcher (`scalana prof`) builds
// its command line and --help from this table and the runtime reads the same
// variables through it, so the two cannot disagree.
//
// X(ID, ENV_NAME, LONG_OPTION, SHORT_OPTION, TYPE, DEFAULT, ACCEPTED, HELP)
//   TYPE: String | Uint | Bool | Choice | List
//   ACCEPTED: for Choice the '|'-separated values; for Uint "MIN..MAX";
//             for List the allowed items ('|'-separated, empty: any).
//   An empty DEFAULT for SCALANA_OUTPUT means "computed" (see config.cpp).
#pragma once

#define SCALANA_CONFIG_TABLE(X)                                                                    \
  X(Output, "SCALANA_OUTPUT", "output", "o", String, "", "",                                       \
    "run directory for the profile, created if missing (relative to the current directory)")       \
  X(Hz, "SCALANA_HZ", "hz", "", Uint, "1000", "1..10000",                                          \
    "samples per second of CPU time, per thread (the timer source delivers at most one per "       \
    "kernel tick)")                                                                                \
  X(Counters, "SCALANA_COUNTERS", "counters", "", List,                                            \
    "PAPI_TOT_INS,PAPI_TOT_CYC,PAPI_LST_INS,PAPI_L1_DCM", "",                                      \
    "comma-separated PAPI events (presets or native) counted per thread and read at each sample "  \
    "where the machine has them (at most 8)")                                                      \
  X(Sampler, "SCALANA_SAMPLER", "sampler", "", Choice, "auto", "auto|timer|perf|off|papi|itimer",  \
    "sample source: timer (a POSIX CPU-time timer per thread, a few us per sample, at most one "   \
    "per kernel tick), perf (a perf_event task clock of the threads, the asked rate, a timer "     \
    "interrupt per sample, signalled by SIGTRAP: use timer under a debugger); auto is timer, "     \
    "moving a thread the tick starves (sampled under half "                                        \
    "its process's best rate) to perf; papi and itimer are older names of perf and timer")         \
  X(OffCpu, "SCALANA_OFF_CPU", "off-cpu", "", Choice, "off", "off|on",                             \
    "on: time off the CPU (blocked in a system call, asleep, in a page fault, waiting for a "      \
    "core) placed on the line it left the CPU at, from a context-switch event per thread: a "      \
    "signal per switch, 2 to 14 us (docs/contexts.md); needs the perf source (auto then picks "    \
    "it) and kernel-mode counting (root, CAP_PERFMON or perf_event_paranoid <= 1)")                \
  X(DepSample, "SCALANA_DEP_SAMPLE", "dep-sample", "", Uint, "100000", "0..4000000000",            \
    "per call context, after this many calls record MPI parameters for 1 in 16 calls, spread "     \
    "evenly (weighted x16); calls and time are always counted; 0 records every call")              \
  X(Verbose, "SCALANA_VERBOSE", "verbose", "v", Bool, "0", "0|1",                                  \
    "print the sampling source and its note on rank 0 at start and a summary at finalize")         \
  X(Force, "SCALANA_FORCE", "force", "f", Bool, "0", "0|1",                                        \
    "overwrite a run directory that holds the profile of a job that has ended (never one "         \
    "a running job holds)")                                                                        \
  X(Snapshot, "SCALANA_SNAPSHOT", "snapshot", "", Uint, "10", "0..86400",                          \
    "seconds between snapshots of each rank's data (see --snapshot-files; the first at "           \
    "MPI_Init, then 1, 2, 4 ... s after it until the gap reaches N), so a killed run keeps what "  \
    "was recorded up to its last snapshot; 0: none")                                               \
  X(SnapshotFiles, "SCALANA_SNAPSHOT_FILES", "snapshot-files", "", Choice, "node", "node|rank",    \
    "where snapshots go: node (one container per node, RUN_DIR/snapshots-<L>.scs, L the node's "   \
    "lowest rank, written in place: no file made per snapshot) or rank (RUN_DIR/rank-<R>.json.gz " \
    "per rank, each snapshot a new file renamed over it)")                                         \
  X(SnapshotSlot, "SCALANA_SNAPSHOT_SLOT", "snapshot-slot", "", Uint, "262144",                    \
    "4096..1073741824",                                                                            \
    "bytes per slot of the node's snapshot container (three per rank: two snapshots, two copies "  \
    "of the premade SIGTERM end record of half a slot; sparse, holes cost nothing); a larger "     \
    "snapshot goes to rank-<R>.json.gz")                                                           \
  X(WriteGroup, "SCALANA_WRITE_GROUP", "write-group", "", Uint, "128", "0..4194304",               \
    "ranks per group of the profile written at MPI_Finalize (RUN_DIR/profile.scalana, with "       \
    "MPI-IO): each group's lowest rank merges its group's data and writes it; 0: rank 0 gathers "  \
    "every rank's data into RUN_DIR/profile.json.gz instead (the older format)")                   \
  X(Experiment, "SCALANA_EXPERIMENT", "experiment", "", Choice, "unknown", "unknown|strong|weak",  \
    "the kind of scaling experiment this run belongs to, kept in the profile's meta: strong (the " \
    "problem size fixed) or weak (fixed per rank); scalana detect expects that scaling")           \
  X(OmpWorksharing, "SCALANA_OMP_WORKSHARING", "omp-worksharing", "", Bool, "0", "0|1",            \
    "count each OpenMP worksharing construct (loop, sections, single) per thread: its wall time "  \
    "and the loop's iterations (omp rows of kind loop and work); off, the OMPT work callback is "  \
    "not registered, which saves two calls a construct and thread")
