// autotune-bb stage-out: copy an object, or every object under a key prefix, out of a job's
// buffer, writing as the job's user (slurm_bb_data_out, as root).  An object that is missing or
// damaged (a TierFault: its pool or piece gone, its bytes changed) is named on standard error and
// skipped; every other object is still copied, the lost ones are listed with their reasons in
// DEST.incomplete (beside DEST), and the exit status is then 1, so that burst_buffer.lua can say
// which objects were lost.  A stage-out that loses nothing removes an earlier DEST.incomplete.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "autotune/error.hpp"
#include "buffer.hpp"
#include "files.hpp"

namespace autotune::bb {

namespace {

// One line for the summary: "'KEY' (missing: pool missing on tier 'pm')".
std::string lost_text(const TierFault &f) {
  return "'" + f.key() + "' (" + object_state_name(f.state()) +
         (f.kind() == TierFault::Kind::damaged ? ""
                                               : std::string(": ") + tier_fault_name(f.kind())) +
         " on tier '" + f.tier() + "')";
}

// Writes `text` to `path` (mode 0600, through a temporary file renamed over it) as the current
// user; false when that is refused.
bool write_report(const std::string &path, const std::string &text) {
  const std::string tmp = path + ".autotune-bb." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

// Names the objects that could not be staged out: each with its full message on standard error
// and in DEST.incomplete (beside DEST, so that it outlives the job and its Slurm record), then
// one line on standard output.  Returns the exit status: 1.
int report_lost(const JobBuffer &b, const std::vector<TierFault> &lost, std::size_t staged,
                const std::string &what, const std::string &dest) {
  std::string text = "job " + std::to_string(b.job) + ": stage-out of '" + what + "' to " + dest +
                     " incomplete; not staged out, lost from the buffer:\n";
  for (const auto &f : lost) {
    std::fprintf(stderr, "autotune-bb: stage-out: %s\n", f.what());
    text += std::string(f.what()) + "\n";
  }
  text += std::to_string(staged) + " staged out\n";
  const std::string report = dest + ".incomplete";
  const bool written = write_report(report, text);
  if (!written)
    std::fprintf(stderr, "autotune-bb: stage-out: cannot write %s as uid %u: %s\n", report.c_str(),
                 static_cast<unsigned>(::geteuid()), std::strerror(errno));
  std::string names;
  for (std::size_t i = 0; i < lost.size(); ++i) {
    if (i == 5) {
      names += ", and " + std::to_string(lost.size() - 5) + " more";
      break;
    }
    names += (i ? ", " : "") + lost_text(lost[i]);
  }
  std::printf(
      "job %u: stage-out of '%s' to %s incomplete: %zu object%s not staged out, lost from "
      "the buffer: %s; %zu staged out%s\n",
      b.job, what.c_str(), dest.c_str(), lost.size(), lost.size() == 1 ? "" : "s", names.c_str(),
      staged, written ? ("; see " + report).c_str() : "");
  return 1;
}

// After a stage-out that lost nothing: the report of an earlier one to the same DEST is gone.
void forget_report(const std::string &dest) { ::unlink((dest + ".incomplete").c_str()); }

// KEY ends in '/': each object under it becomes DEST/<rest of the key>, in key order.
int stage_out_dir(const Invocation &in, const std::string &prefix, const std::string &dest) {
  Opened o = find_buffer(in);
  become_owner(o.buffer);
  TierStore s(o.options);
  const auto objects = s.list(prefix);  // sorted by key
  if (objects.empty())
    throw Error(Errc::not_found, "stage-out KEY: no object under '" + prefix +
                                     "' in the buffer of job " + std::to_string(o.buffer.job));
  make_dir("stage-out DEST", dest);
  std::uint64_t bytes = 0;
  std::size_t staged = 0;
  std::vector<TierFault> lost;
  for (const auto &obj : objects) {
    const std::string rel = obj.key.substr(prefix.size());
    for (std::size_t at = rel.find('/'); at != std::string::npos; at = rel.find('/', at + 1))
      make_dir("stage-out DEST", dest + "/" + rel.substr(0, at));
    try {
      write_object_to_file(s, obj.key, "stage-out DEST", dest + "/" + rel);
    } catch (const TierFault &f) {
      lost.push_back(f);
      continue;
    }
    bytes += obj.size;
    ++staged;
  }
  if (!lost.empty()) return report_lost(o.buffer, lost, staged, prefix, dest);
  forget_report(dest);
  std::printf("job %u: staged out '%s' to %s (%zu objects, %s)\n", o.buffer.job, prefix.c_str(),
              dest.c_str(), objects.size(), human(bytes).c_str());
  return 0;
}

}  // namespace

int cmd_stage_out(const Invocation &in) {
  const std::string &key = in.pos()[0];
  const bool dir = prefix_key("stage-out KEY", key);
  const std::string dest = absolute_path("stage-out DEST", in.pos()[1]);
  if (dir) return stage_out_dir(in, key, dest);
  Opened o = find_buffer(in);
  become_owner(o.buffer);
  TierStore s(o.options);
  if (!s.exists(key))
    throw Error(Errc::not_found, "stage-out KEY: no object '" + key + "' in the buffer of job " +
                                     std::to_string(o.buffer.job));
  try {
    write_object_to_file(s, key, "stage-out DEST", dest);
  } catch (const TierFault &f) {
    return report_lost(o.buffer, {f}, 0, key, dest);
  }
  forget_report(dest);
  std::printf("job %u: staged out '%s' to %s\n", o.buffer.job, key.c_str(), dest.c_str());
  return 0;
}

}  // namespace autotune::bb
