// File-system helpers of the tier store (internal): owning file descriptors, whole reads and
// writes that retry on EINTR and short counts, durable creation (fsync of the file and of its
// directory), advisory locks, and a removal of directory trees that never follows a symbolic
// link.  Every failure throws autotune::Error naming the path.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace autotune::tierfs {

// An owning file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd &&o) noexcept : fd_(o.release()) {}
  Fd &operator=(Fd &&o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  int release() noexcept {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset() noexcept;

 private:
  int fd_ = -1;
};

// open(2) with O_CLOEXEC; throws Error(not_found) for ENOENT, Error(permission) for EACCES/EPERM,
// Error(io) otherwise.
Fd open_file(const std::string &path, int flags, mode_t mode = 0600);
// Like open_file, but returns an empty Fd when the file does not exist.
Fd open_if_exists(const std::string &path, int flags);

void write_all(int fd, const void *data, std::size_t size, const std::string &what);
void pwrite_all(int fd, const void *data, std::size_t size, std::uint64_t offset,
                const std::string &what);
// Reads exactly `size` bytes; a short file is Error(corrupt).
void pread_all(int fd, void *data, std::size_t size, std::uint64_t offset, const std::string &what);
std::string read_small_file(int fd, const std::string &what, std::size_t max = 1 << 20);

void fsync_fd(int fd, const std::string &what);
void fsync_dir(const std::string &dir);

// mkdir -p with exactly `mode` (whatever the umask) for the directories it creates; existing
// directories are left as they are; an existing non-directory is an error.
void make_dirs(const std::string &path, mode_t mode);

// Write `data` to `path` durably and atomically: a temporary file beside it, fsync, rename, fsync
// of the directory.
void write_file_atomic(const std::string &path, const std::string &data, mode_t mode);

std::vector<std::string> list_dir(const std::string &dir);  // names, without "." and ".."

// Remove `name` inside the directory open at `dirfd`, recursively, without following symbolic
// links (each level is opened with O_NOFOLLOW | O_DIRECTORY relative to its parent).  Returns
// false when it did not exist.
bool remove_tree_at(int dirfd, const std::string &name, const std::string &shown_path);
bool remove_tree(const std::string &path);

// flock(2) held for the object's lifetime.
class FileLock {
 public:
  enum Mode { shared, exclusive };
  FileLock() = default;
  // Blocks until the lock is taken.
  FileLock(int fd, Mode mode, const std::string &what);
  ~FileLock();
  FileLock(FileLock &&o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  FileLock &operator=(FileLock &&o) noexcept;
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;
  // Non-blocking attempt; true when the lock was taken.
  static bool try_lock(int fd, Mode mode);
  // Keep the lock after this object is gone (until the descriptor is closed).
  void release() noexcept { fd_ = -1; }

 private:
  int fd_ = -1;
};

std::string join(const std::string &dir, const std::string &name);

}  // namespace autotune::tierfs
