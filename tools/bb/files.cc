#include "files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "autotune/error.hpp"

namespace autotune::bb {

namespace {

// The code of a refused open, read, write or create.
Errc errc_of(int e) {
  return e == EACCES || e == EPERM ? Errc::permission : e == ENOENT ? Errc::not_found : Errc::io;
}

}  // namespace

std::string absolute_path(const std::string &field, const std::string &p) {
  if (p.empty() || p[0] != '/') throw_invalid(field + ": '" + p + "' is not an absolute path");
  for (char c : p)
    if (static_cast<unsigned char>(c) < 0x20)
      throw_invalid(field + ": '" + p + "' contains a control character");
  return p;
}

MappedFile::~MappedFile() {
  if (addr && addr != MAP_FAILED) ::munmap(addr, size);
  if (fd >= 0) ::close(fd);
}

void open_source(MappedFile &m, const std::string &field, const std::string &path,
                 const JobBuffer *b) {
  m.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (m.fd < 0) {
    const int e = errno;
    std::string who = b ? " as uid " + std::to_string(::geteuid()) + " (the job's user)" : "";
    throw Error(errc_of(e), field + ": cannot read '" + path + "'" + who + ": " + std::strerror(e));
  }
  struct stat st;
  if (::fstat(m.fd, &st) != 0) throw_io(path, errno);
  if (S_ISDIR(st.st_mode))
    throw_invalid(field + ": '" + path +
                  "' is a directory; stage a directory into a KEY ending in '/'");
  if (!S_ISREG(st.st_mode)) throw_invalid(field + ": '" + path + "' is not a regular file");
  m.size = static_cast<std::size_t>(st.st_size);
  if (m.size) {
    m.addr = ::mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, m.fd, 0);
    if (m.addr == MAP_FAILED) throw_io(path + ": mmap", errno);
    ::madvise(m.addr, m.size, MADV_SEQUENTIAL);
  }
}

void write_object_to_file(TierStore &s, const std::string &key, const std::string &field,
                          const std::string &dest) {
  struct stat st;
  if (::stat(dest.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw_invalid(field + ": '" + dest + "' is a directory; give the file name");
  const ObjectInfo info = s.stat(key);
  const std::string tmp = dest + ".autotune-bb." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int e = errno;
    throw Error(errc_of(e), field + ": cannot write '" + dest + "' as uid " +
                                std::to_string(::geteuid()) + ": " + std::strerror(e));
  }
  try {
    if (info.size) {
      if (::ftruncate(fd, static_cast<off_t>(info.size)) != 0) throw_io(tmp + ": ftruncate", errno);
      void *p = ::mmap(nullptr, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) throw_io(tmp + ": mmap", errno);
      try {
        s.get_into(key, p, info.size);
      } catch (...) {
        ::munmap(p, info.size);
        throw;
      }
      ::munmap(p, info.size);
    }
    if (::fsync(fd) != 0) throw_io(tmp + ": fsync", errno);
    ::close(fd);
    if (::rename(tmp.c_str(), dest.c_str()) != 0) throw_io(dest + ": rename", errno);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
}

void make_dir(const std::string &field, const std::string &dir) {
  if (::mkdir(dir.c_str(), 0700) == 0) return;
  const int e = errno;
  struct stat st;
  if (e == EEXIST && ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return;
  if (e == EEXIST) throw_invalid(field + ": '" + dir + "' exists and is not a directory");
  throw Error(errc_of(e), field + ": cannot create the directory '" + dir + "' as uid " +
                              std::to_string(::geteuid()) + ": " + std::strerror(e));
}

void files_under(const std::string &field, const std::string &dir, const std::string &rel,
                 std::vector<std::string> &out) {
  const std::string path = rel.empty() ? dir : dir + "/" + rel;
  DIR *d = ::opendir(path.c_str());
  if (!d) {
    const int e = errno;
    throw Error(errc_of(e), field + ": cannot read the directory '" + path + "' as uid " +
                                std::to_string(::geteuid()) + ": " + std::strerror(e));
  }
  std::vector<std::string> names;
  while (const dirent *e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto &n : names) {
    const std::string r = rel.empty() ? n : rel + "/" + n;
    struct stat st;
    if (::lstat((dir + "/" + r).c_str(), &st) != 0) throw_io(dir + "/" + r, errno);
    if (S_ISDIR(st.st_mode))
      files_under(field, dir, r, out);
    else if (S_ISREG(st.st_mode))
      out.push_back(r);
    else
      throw_invalid(field + ": '" + dir + "/" + r +
                    "' is not a regular file or a directory (symbolic links are not followed)");
  }
}

}  // namespace autotune::bb
