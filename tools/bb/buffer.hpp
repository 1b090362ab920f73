// What the commands of autotune-bb share: autotune.conf, the job a command is for, the job's
// buffer and becoming its owner, and sizes as autotune-bb prints them.
//
// Trust: when root works on a job's buffer it first becomes the job's user (uid, gid and that
// user's groups), so every file is read, written and created with the user's rights and never
// with root's.  The owner and the size of a buffer come from the root-owned registry
// (JobBuffers), never from files the user can write.
#pragma once

#include <cstdint>
#include <string>

#include "autotune/conf.hpp"
#include "autotune/job_buffer.hpp"
#include "autotune/tier.hpp"
#include "commands.hpp"

namespace autotune::bb {

// --job, else $AUTOTUNE_BB_JOB, else $SLURM_JOB_ID; UsageError outside a job.
std::uint32_t job_of(const Invocation &in);

// autotune.conf: --conf, else Conf::default_path().
Conf load_conf(const Invocation &in);
// The sections of a (fully checked) autotune.conf that job buffers use.
TierSiteConf tier_site(const Conf &c);

// The job's buffer record and store options, read as root before becoming the owner.
struct Opened {
  JobBuffer buffer;
  TierStoreOptions options;
};
// The buffer of job_of(in); Error(not_found) when the job has none.
Opened find_buffer(const Invocation &in);

// Become the buffer's owner (uid, gid and the user's groups) when running as root.  A process
// that is not root must already be the owner.  Irreversible.  Sets the umask to 077.
void become_owner(const JobBuffer &b);

// A key naming every object under it ("ckpt/"): validates it without its '/'.  False for a plain
// key (validated too).  `field` names it in messages ("stage-in KEY").
bool prefix_key(const std::string &field, const std::string &key);

// Bytes with two or three significant digits for people ("512B", "2.00G", "37.5M", "640M");
// units' format_size() is exact ("1000B", "3000K") and is what create prints.
std::string human(std::uint64_t bytes);
// A tier's bandwidth: human()/s, or "measured" when autotune.conf leaves it to be measured (0).
std::string bandwidth_text(std::uint64_t bytes_per_s);

}  // namespace autotune::bb
