#include "tier/fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "autotune/error.hpp"

namespace autotune::tierfs {
namespace {

[[noreturn]] void throw_errno(const std::string &what, int e) {
  if (e == ENOENT) throw Error(Errc::not_found, what + ": " + std::strerror(e));
  if (e == EACCES || e == EPERM) throw Error(Errc::permission, what + ": " + std::strerror(e));
  if (e == ENOSPC || e == EDQUOT) throw Error(Errc::no_space, what + ": " + std::strerror(e));
  throw_io(what, e);
}

}  // namespace

void Fd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string join(const std::string &dir, const std::string &name) {
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

Fd open_file(const std::string &path, int flags, mode_t mode) {
  int fd;
  do fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) throw_errno(path, errno);
  return Fd(fd);
}

Fd open_if_exists(const std::string &path, int flags) {
  int fd;
  do fd = ::open(path.c_str(), flags | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    if (errno == ENOENT) return Fd();
    throw_errno(path, errno);
  }
  return Fd(fd);
}

void write_all(int fd, const void *data, std::size_t size, const std::string &what) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(what, errno);
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void pwrite_all(int fd, const void *data, std::size_t size, std::uint64_t offset,
                const std::string &what) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, p, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(what, errno);
    }
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

void pread_all(int fd, void *data, std::size_t size, std::uint64_t offset,
               const std::string &what) {
  char *p = static_cast<char *>(data);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(what, errno);
    }
    if (n == 0) throw Error(Errc::corrupt, what + ": the file is shorter than its record says");
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

std::string read_small_file(int fd, const std::string &what, std::size_t max) {
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(what, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > max) throw Error(Errc::corrupt, what + ": larger than expected");
  }
  return out;
}

void fsync_fd(int fd, const std::string &what) {
  if (::fsync(fd) != 0) throw_errno(what + ": fsync", errno);
}

void fsync_dir(const std::string &dir) {
  Fd fd = open_file(dir, O_RDONLY | O_DIRECTORY);
  fsync_fd(fd.get(), dir);
}

void make_dirs(const std::string &path, mode_t mode) {
  if (path.empty()) return;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw_invalid(path + ": exists and is not a directory");
    return;
  }
  if (errno != ENOENT) throw_errno(path, errno);
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) make_dirs(path.substr(0, slash), mode);
  if (::mkdir(path.c_str(), mode) != 0) {
    if (errno == EEXIST) return;
    throw_errno(path + ": mkdir", errno);
  }
  // Exactly `mode`, whatever the umask.
  if (::chmod(path.c_str(), mode) != 0) throw_errno(path + ": chmod", errno);
}

void write_file_atomic(const std::string &path, const std::string &data, mode_t mode) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash ? slash : 1);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    Fd fd = open_file(tmp, O_WRONLY | O_CREAT | O_TRUNC, mode);
    try {
      if (::fchmod(fd.get(), mode) != 0) throw_errno(tmp + ": chmod", errno);
      write_all(fd.get(), data.data(), data.size(), tmp);
      fsync_fd(fd.get(), tmp);
    } catch (...) {
      ::unlink(tmp.c_str());
      throw;
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw_errno(path + ": rename", e);
  }
  fsync_dir(dir);
}

std::vector<std::string> list_dir(const std::string &dir) {
  std::vector<std::string> out;
  DIR *d = ::opendir(dir.c_str());
  if (!d) throw_errno(dir, errno);
  while (struct dirent *e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    out.emplace_back(e->d_name);
  }
  ::closedir(d);
  return out;
}

bool remove_tree_at(int dirfd, const std::string &name, const std::string &shown_path) {
  struct stat st;
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return false;
    throw_errno(shown_path, errno);
  }
  if (S_ISDIR(st.st_mode)) {
    const int sub = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) throw_errno(shown_path, errno);
    DIR *d = ::fdopendir(sub);
    if (!d) {
      const int e = errno;
      ::close(sub);
      throw_errno(shown_path, e);
    }
    std::vector<std::string> names;
    while (struct dirent *e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
        names.emplace_back(e->d_name);
    try {
      for (const auto &n : names) remove_tree_at(::dirfd(d), n, shown_path + "/" + n);
    } catch (...) {
      ::closedir(d);
      throw;
    }
    ::closedir(d);
    if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
      throw_errno(shown_path + ": rmdir", errno);
  } else if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT) {
    throw_errno(shown_path + ": unlink", errno);
  }
  return true;
}

bool remove_tree(const std::string &path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return remove_tree_at(AT_FDCWD, path, path);
  const std::string dir = slash == 0 ? "/" : path.substr(0, slash);
  Fd d = open_if_exists(dir, O_RDONLY | O_DIRECTORY);
  if (!d) return false;
  return remove_tree_at(d.get(), path.substr(slash + 1), path);
}

FileLock::FileLock(int fd, Mode mode, const std::string &what) {
  int rc;
  do rc = ::flock(fd, mode == exclusive ? LOCK_EX : LOCK_SH);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) throw_errno(what + ": flock", errno);
  fd_ = fd;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::flock(fd_, LOCK_UN);
}

FileLock &FileLock::operator=(FileLock &&o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::flock(fd_, LOCK_UN);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

bool FileLock::try_lock(int fd, Mode mode) {
  int rc;
  do rc = ::flock(fd, (mode == exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB);
  while (rc != 0 && errno == EINTR);
  return rc == 0;
}

}  // namespace autotune::tierfs
