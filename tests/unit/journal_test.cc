// The spool of job ends (store/journal.hpp): what prep/autotune writes and ingest reads back.
#include "autotune/journal.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "autotune/error.hpp"

using namespace autotune;

namespace {

std::string temp_dir() {
  char tmpl[] = "/tmp/journal_test.XXXXXX";
  const char *d = mkdtemp(tmpl);
  EXPECT_NE(d, nullptr);
  return d ? d : "";
}

JobEnd sample() {
  JobEnd e;
  e.job_id = 42;
  e.uid = 1000;
  e.state = "COMPLETED";
  e.start = 1700000000;
  e.end = 1700000123;
  e.exit_code = 0;
  e.nodes = "n[1-2]";
  e.admin_comment = "autotune: class=c1 trial=3 config=nodes=2";
  e.submit = 1699999990;
  return e;
}

std::string error_of(const std::string &text) {
  try {
    parse_job_end(text, "spool/x.end");
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Journal, RoundTrip) {
  const JobEnd e = sample();
  const JobEnd back = parse_job_end(format_job_end(e), "x");
  EXPECT_EQ(back.job_id, 42u);
  EXPECT_EQ(back.uid, 1000u);
  EXPECT_EQ(back.state, "COMPLETED");
  EXPECT_FALSE(back.requeued);
  EXPECT_EQ(back.start, 1700000000);
  EXPECT_EQ(back.end, 1700000123);
  EXPECT_EQ(back.nodes, "n[1-2]");
  EXPECT_EQ(back.admin_comment, e.admin_comment);
  EXPECT_EQ(back.submit, 1699999990);
}

// A slurmctld of the earlier version may have left files without the job's submit time.
TEST(Journal, ReadsVersionOneFilesWithoutASubmitTime) {
  std::string t = format_job_end(sample());
  t.replace(0, t.find('\n'), "autotune-job-end 1");
  t.erase(t.find("submit "));
  const JobEnd back = parse_job_end(t, "x");
  EXPECT_EQ(back.job_id, 42u);
  EXPECT_EQ(back.start, 1700000000);
  EXPECT_EQ(back.submit, 0);  // not known
  EXPECT_NE(error_of(t + "submit 1699999990\n").find("unknown key 'submit'"), std::string::npos);
}

TEST(Journal, ControlCharactersCannotAddLines) {
  JobEnd e = sample();
  e.admin_comment = "autotune: class=c1 trial=3\nuid 0";
  const JobEnd back = parse_job_end(format_job_end(e), "x");
  EXPECT_EQ(back.uid, 1000u);
  EXPECT_EQ(back.admin_comment, "autotune: class=c1 trial=3 uid 0");
}

TEST(Journal, RefusesBadFilesNamingTheField) {
  const std::string good = format_job_end(sample());
  EXPECT_NE(error_of("").find("the first line is not 'autotune-job-end 2' (or 'autotune-job-end 1')"),
            std::string::npos);
  EXPECT_NE(error_of("autotune-job-end 3\n").find("first line"), std::string::npos);
  std::string t = good;
  t.replace(t.find("job 42"), 6, "job 4x");
  EXPECT_NE(error_of(t).find("spool/x.end: job: '4x' is not a number"), std::string::npos);
  t = good;
  t.replace(t.find("uid 1000"), 8, "uid 99999999999");
  EXPECT_NE(error_of(t).find("uid: '99999999999' is not a number from 0 to 4294967295"), std::string::npos);
  t = good;
  t.replace(t.find("state COMPLETED"), 15, "state done;");
  EXPECT_NE(error_of(t).find("state: 'done;' is not a job state name"), std::string::npos);
  EXPECT_NE(error_of(good + "job 7\n").find("job given twice"), std::string::npos);
  EXPECT_NE(error_of(good + "colour red\n").find("unknown key 'colour'"), std::string::npos);
  t = good;
  t.erase(t.find("end 1700000123\n"), 15);
  EXPECT_NE(error_of(t).find("no 'end' line"), std::string::npos);
  t = good;
  t.erase(t.find("submit "));
  EXPECT_NE(error_of(t).find("no 'submit' line"), std::string::npos);
  t = good;
  t.replace(t.find("submit 1699999990"), 17, "submit -5");
  EXPECT_NE(error_of(t).find("submit: '-5' is not a Unix time in seconds"), std::string::npos);
  t = good;
  t.replace(t.find("job 42"), 6, "job 0");
  EXPECT_NE(error_of(t).find("job: 0 is not a job id"), std::string::npos);
  EXPECT_NE(error_of(std::string(20000, 'a')).find("more than a job end holds"), std::string::npos);
}

TEST(Journal, WriteListInOrderAndSync) {
  const std::string dir = temp_dir();
  JobEnd a = sample(), b = sample();
  b.job_id = 7;
  const std::string na = write_job_end(dir, a), nb = write_job_end(dir, b);
  { std::ofstream(dir + "/.tmp-half") << "autotune-job-end 1\n"; }  // a write in progress
  { std::ofstream(dir + "/notes.txt") << "x"; }
  const auto names = list_job_ends(dir);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], na);  // the order of the ends, whatever the job ids
  EXPECT_EQ(names[1], nb);
  EXPECT_LT(na, nb);
  EXPECT_EQ(sync_spool(dir), 2u);
  std::ifstream in(dir + "/" + nb);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(parse_job_end(text, nb).job_id, 7u);
  struct stat st;
  ASSERT_EQ(stat((dir + "/" + na).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::system(("rm -rf " + dir).c_str());
}

TEST(Journal, MissingDirectory) {
  EXPECT_TRUE(list_job_ends("/nonexistent/spool").empty());
  try {
    write_job_end("/nonexistent/spool", sample());
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/spool/."), std::string::npos);
  }
}
