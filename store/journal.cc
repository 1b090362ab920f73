// The spool of job ends (journal.hpp).
#include "autotune/journal.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "autotune/error.hpp"
#include "autotune/units.hpp"

namespace autotune {

namespace {

const char kMagic[] = "autotune-job-end";

std::string clean(const std::string &s) {
  std::string out = s.substr(0, kJournalFieldMax);
  for (char &c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return out;
}

bool is_event_name(const std::string &n) {
  // 20 digits, '-', 1..10 digits, ".end"
  if (n.size() < 26 || n.size() > 35 || n[20] != '-' || n.compare(n.size() - 4, 4, ".end") != 0) return false;
  for (std::size_t i = 0; i < n.size() - 4; ++i)
    if (i != 20 && !std::isdigit(static_cast<unsigned char>(n[i]))) return false;
  return true;
}

std::uint32_t parse_u32(const std::string &where, const std::string &key, const std::string &v) {
  if (v.empty() || v.size() > 10 || v.find_first_not_of("0123456789") != std::string::npos)
    throw_invalid(where + ": " + key + ": '" + v.substr(0, 32) + "' is not a number from 0 to 4294967295");
  const unsigned long long x = std::stoull(v);
  if (x > 4294967295ULL)
    throw_invalid(where + ": " + key + ": '" + v + "' is not a number from 0 to 4294967295");
  return static_cast<std::uint32_t>(x);
}

double parse_time(const std::string &where, const std::string &key, const std::string &v) {
  if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string::npos)
    throw_invalid(where + ": " + key + ": '" + v.substr(0, 32) + "' is not a Unix time in seconds");
  return static_cast<double>(std::stoll(v));
}

}  // namespace

std::string spool_dir(const std::string &state_dir) { return state_dir + "/spool"; }

std::string format_job_end(const JobEnd &e) {
  std::ostringstream o;
  o << kMagic << ' ' << kJournalVersion << '\n'
    << "job " << e.job_id << '\n'
    << "uid " << e.uid << '\n'
    << "state " << clean(e.state) << '\n'
    << "requeued " << (e.requeued ? 1 : 0) << '\n'
    << "start " << static_cast<long long>(std::max(0.0, e.start)) << '\n'
    << "end " << static_cast<long long>(std::max(0.0, e.end)) << '\n'
    << "exit " << e.exit_code << '\n'
    << "nodes " << clean(e.nodes) << '\n'
    << "comment " << clean(e.admin_comment) << '\n'
    << "submit " << static_cast<long long>(std::max(0.0, e.submit)) << '\n';
  return o.str();
}

JobEnd parse_job_end(const std::string &text, const std::string &where) {
  if (text.size() > 4 * kJournalFieldMax) throw_invalid(where + ": " + std::to_string(text.size()) + " bytes, more than a job end holds");
  std::istringstream in(text);
  std::string line;
  const std::string first = std::string(kMagic) + " ";
  if (!std::getline(in, line) || (line != first + "1" && line != first + std::to_string(kJournalVersion)))
    throw_invalid(where + ": the first line is not '" + first + std::to_string(kJournalVersion) + "' (or '" + first +
                  "1')");
  const bool v1 = line == first + "1";
  JobEnd e;
  bool seen[10] = {};
  static const char *const keys[] = {"job", "uid", "state", "requeued", "start", "end", "exit", "nodes", "comment", "submit"};
  while (std::getline(in, line)) {
    const std::size_t sp = line.find(' ');
    const std::string key = line.substr(0, sp), v = sp == std::string::npos ? "" : line.substr(sp + 1);
    const auto it = std::find_if(std::begin(keys), std::end(keys), [&](const char *k) { return key == k; });
    if (it == std::end(keys) || (v1 && std::string(*it) == "submit"))
      throw_invalid(where + ": unknown key '" + key.substr(0, 32) + "'");
    const std::size_t i = static_cast<std::size_t>(it - std::begin(keys));
    if (seen[i]) throw_invalid(where + ": " + key + " given twice");
    seen[i] = true;
    switch (i) {
      case 0: e.job_id = parse_u32(where, key, v); break;
      case 1: e.uid = parse_u32(where, key, v); break;
      case 2:
        if (v.empty() || v.size() > 32 || v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != std::string::npos)
          throw_invalid(where + ": state: '" + v.substr(0, 32) + "' is not a job state name");
        e.state = v;
        break;
      case 3:
        if (v != "0" && v != "1") throw_invalid(where + ": requeued: '" + v.substr(0, 32) + "' is not 0 or 1");
        e.requeued = v == "1";
        break;
      case 4: e.start = parse_time(where, key, v); break;
      case 5: e.end = parse_time(where, key, v); break;
      case 6: e.exit_code = parse_u32(where, key, v); break;
      case 7: e.nodes = clean(v); break;
      case 8: e.admin_comment = clean(v); break;
      case 9: e.submit = parse_time(where, key, v); break;
    }
  }
  for (std::size_t i = 0; i < 7; ++i)
    if (!seen[i]) throw_invalid(where + ": no '" + std::string(keys[i]) + "' line");
  if (!v1 && !seen[9]) throw_invalid(where + ": no 'submit' line");
  if (e.job_id == 0) throw_invalid(where + ": job: 0 is not a job id");
  return e;
}

std::string write_job_end(const std::string &dir, const JobEnd &e) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  char name[64];
  std::snprintf(name, sizeof name, "%020lld-%u.end",
                static_cast<long long>(ts.tv_sec) * 1000000000LL + static_cast<long long>(ts.tv_nsec), e.job_id);
  const std::string tmp = dir + "/." + name, path = dir + "/" + name;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw Error(Errc::io, tmp + ": " + std::strerror(errno));
  const std::string text = format_job_end(e);
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(err == ENOSPC ? Errc::no_space : Errc::io, tmp + ": " + std::strerror(err));
    }
    off += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(Errc::io, path + ": " + std::strerror(err));
  }
  return name;
}

std::vector<std::string> list_job_ends(const std::string &dir) {
  std::vector<std::string> out;
  DIR *d = ::opendir(dir.c_str());
  if (!d) {
    if (errno == ENOENT) return out;
    throw Error(Errc::io, dir + ": " + std::strerror(errno));
  }
  while (struct dirent *e = ::readdir(d))
    if (is_event_name(e->d_name)) out.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t sync_spool(const std::string &dir) {
  std::size_t n = 0;
  for (const std::string &name : list_job_ends(dir)) {
    const int fd = ::open((dir + "/" + name).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;  // ingested meanwhile
    ::fsync(fd);
    ::close(fd);
    ++n;
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return n;
}

}  // namespace autotune
