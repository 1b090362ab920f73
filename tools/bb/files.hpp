// Files as autotune-bb reads and writes them, with the rights of whoever runs it (after
// become_owner(), the job's user): sources mapped whole, objects written through a temporary file
// renamed into place, directories walked in order.  `field` names the argument in messages
// ("stage-in SOURCE").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "autotune/job_buffer.hpp"
#include "autotune/tier.hpp"

namespace autotune::bb {

// `p` when it is an absolute path without control characters; Error(invalid_argument) otherwise.
std::string absolute_path(const std::string &field, const std::string &p);

// An owning read-only view of a whole file.
struct MappedFile {
  int fd = -1;
  void *addr = nullptr;
  std::size_t size = 0;
  MappedFile() = default;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();
};

// Maps the regular file `path` into `m`.  With `b` (a job's buffer), a refusal says the file was
// read as the job's user.
void open_source(MappedFile &m, const std::string &field, const std::string &path,
                 const JobBuffer *b);

// Writes object `key` to `dest` (mode 0600) through a temporary file beside it, renamed over
// `dest`.
void write_object_to_file(TierStore &s, const std::string &key, const std::string &field,
                          const std::string &dest);

// Creates `dir` (mode 0700) when missing, as the current user; it must be a directory.
void make_dir(const std::string &field, const std::string &dir);

// The regular files under `dir`/`rel`, relative to `dir`, sorted, appended to `out`; symbolic
// links and special files are refused (naming them), subdirectories are walked.
void files_under(const std::string &field, const std::string &dir, const std::string &rel,
                 std::vector<std::string> &out);

}  // namespace autotune::bb
