// The spool of job ends: what slurmctld's prep/autotune plugin writes, in process, when an autotune
// job ends, and what `autotune ingest --spool` reads back (in order, once) to record the trial.
//
// One file per event in StateDir/spool/ (a directory only SlurmUser may write), named
// "<20-digit nanoseconds>-<job id>.end" so that the names sort in the order the ends happened.
// A file is written under a temporary name and renamed, so a reader never sees half of one; the
// plugin's background thread makes the files durable (fsync) before it starts ingest.  The text
// is "key value" lines; the first is "autotune-job-end 2" (the format's version).  Version 1, which
// had no "submit" line, is still read: files a slurmctld of the earlier version left in the spool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace autotune {

// What slurmctld knew of the job when it ended.
struct JobEnd {
  std::uint32_t job_id = 0;
  std::uint32_t uid = 0;
  std::string state;         // COMPLETED, FAILED, TIMEOUT, CANCELLED, NODE_FAIL, PREEMPTED, ...
  bool requeued = false;     // the job will run again (requeue, preemption with requeue)
  double start = 0, end = 0; // Unix seconds; start 0: it never started
  std::uint32_t exit_code = 0;
  std::string nodes;         // Slurm's NodeList of the job
  std::string admin_comment; // the record job_submit/autotune wrote
  double submit = 0;         // Unix seconds the job was submitted; 0: not known (version 1)
};

constexpr int kJournalVersion = 2;
// Longest field the journal keeps (a longer NodeList or AdminComment is cut to this).
constexpr std::size_t kJournalFieldMax = 4096;

// StateDir/spool.
std::string spool_dir(const std::string &state_dir);

// The file's text; newlines and other control characters in fields become spaces.
std::string format_job_end(const JobEnd &e);
// Parses a file's text; throws Error(invalid_argument) naming `where` and the bad line.
JobEnd parse_job_end(const std::string &text, const std::string &where);

// Writes one event into `dir` (which must exist), without fsync: returns the file's name.
// Throws Error(io) when it cannot.
std::string write_job_end(const std::string &dir, const JobEnd &e);

// The event files of `dir`, oldest first (names only; temporary files left out).
std::vector<std::string> list_job_ends(const std::string &dir);

// fsync()s every event file of `dir` and the directory itself; returns how many files.
std::size_t sync_spool(const std::string &dir);

}  // namespace autotune
