#include "ssp/snapshot.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ssp/error.hpp"

namespace ssp {
namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void SnapshotStore::check_name(const std::string &name) {
  const auto ok = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  };
  const bool good = !name.empty() && name.size() <= 200 && name[0] != '.' && name[0] != '-' &&
                    name[0] != '_' && std::all_of(name.begin(), name.end(), ok);
  if (!good)
    throw Error(Errc::invalid_argument,
                "snapshot object name: '" + name +
                    "' is not allowed; allowed: letters, digits, '.', '_' and '-', starting with "
                    "a letter or digit, at most 200 characters");
}

DirectorySnapshotStore::DirectorySnapshotStore(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty())
    throw Error(Errc::invalid_argument, "snapshot directory: empty path; allowed: a directory");
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST)
    autotune::throw_io("snapshot directory '" + dir_ + "': cannot create it", errno);
  struct stat st;
  if (::stat(dir_.c_str(), &st) != 0)
    autotune::throw_io("snapshot directory '" + dir_ + "'", errno);
  if (!S_ISDIR(st.st_mode))
    throw Error(Errc::invalid_argument, "snapshot directory: '" + dir_ + "' is not a directory");
}

void DirectorySnapshotStore::put(const std::string &name, std::string_view bytes) {
  check_name(name);
  const std::string path = dir_ + "/" + name;
  const std::string tmp = dir_ + "/." + name + ".tmp." + std::to_string(::getpid());
  Fd f;
  f.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (f.fd < 0) autotune::throw_io("snapshot: cannot create '" + tmp + "'", errno);
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::write(f.fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::unlink(tmp.c_str());
      autotune::throw_io("snapshot: cannot write '" + tmp + "'", e);
    }
    off += static_cast<std::size_t>(n);
  }
  if (::fsync(f.fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    autotune::throw_io("snapshot: cannot sync '" + tmp + "'", e);
  }
  ::close(f.fd);
  f.fd = -1;
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    autotune::throw_io("snapshot: cannot rename '" + tmp + "' to '" + path + "'", e);
  }
}

std::string DirectorySnapshotStore::get(const std::string &name) const {
  check_name(name);
  const std::string path = dir_ + "/" + name;
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) {
    if (errno == ENOENT)
      throw Error(Errc::not_found, "snapshot: no object '" + name + "' in '" + dir_ + "'");
    autotune::throw_io("snapshot: cannot open '" + path + "'", errno);
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) autotune::throw_io("snapshot: cannot read '" + path + "'", errno);
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::vector<std::string> DirectorySnapshotStore::list() const {
  std::vector<std::string> out;
  DIR *d = ::opendir(dir_.c_str());
  if (!d) autotune::throw_io("snapshot: cannot list '" + dir_ + "'", errno);
  while (const dirent *e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    out.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

void DirectorySnapshotStore::remove(const std::string &name) {
  check_name(name);
  const std::string path = dir_ + "/" + name;
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    autotune::throw_io("snapshot: cannot remove '" + path + "'", errno);
}

}  // namespace ssp
