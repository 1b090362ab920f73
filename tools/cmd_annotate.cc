// autotune annotate: record in a steps-mode job's AdminComment what its in-allocation search
// chose and which nodes the job gave back.
//
// Users cannot set AdminComment (slurmctld takes it from SlurmUser, root and administrators
// only), and autotune-run runs as the job's user.  `autotune` is installed setuid to SlurmUser, so
// this command may update it, and therefore trusts nothing the caller says about the job:
//  - whose job it is, its state, node count and node list, and that it tunes inside its
//    allocation come from slurmctld's own record of the job (slurm_load_job), reached through the
//    site's slurm.conf only (fixed when the build was configured, trusted: owned by root or
//    SlurmUser, writable by nobody else; $SLURM_CONF is not the caller's to choose) -- a
//    slurm.conf of the caller's choosing could point at a controller of theirs and be handed a
//    credential minted with SlurmUser's identity;
//  - only the job's owner (or root / SlurmUser) may annotate it, only while it runs, and only a
//    job whose AdminComment job_submit/autotune marked `mode=steps`;
//  - the text is composed here from that record and from arguments that are each validated (a
//    configuration is parsed and re-printed, counts are numbers, node names are a host list that
//    the job no longer holds); nothing the caller writes goes in verbatim;
//  - a later annotation replaces an earlier one, so the comment stays bounded.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <set>
#include <string>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "args.hpp"
#include "autotune/config.hpp"
#include "autotune/error.hpp"
#include "autotune/units.hpp"
#include "commands.hpp"
#include "slurm_job.hpp"

namespace autotune::cli {

namespace {

struct Job {
  std::uint32_t id = 0;
  std::uint32_t uid = 0;
  std::string comment, nodes, state;
  std::uint32_t num_nodes = 0;
  bool running = false;
};

Job load(std::uint32_t id) {
  const SlurmJob job(id);
  const slurm_job_info_t &j = job.info();
  Job out;
  out.id = j.job_id;
  out.uid = j.user_id;
  out.comment = j.admin_comment ? j.admin_comment : "";
  out.nodes = j.nodes ? j.nodes : "";
  out.num_nodes = j.num_nodes;
  out.running = (j.job_state & JOB_STATE_BASE) == JOB_RUNNING;
  return out;
}

// The node names of a Slurm host list ("n[3-4],x1"); at most 4096 of them.
std::set<std::string> expand(const std::string &list) {
  std::set<std::string> out;
  hostlist_t hl = slurm_hostlist_create(list.c_str());
  if (!hl) throw_invalid("--released: '" + list + "' is not a host list");
  while (char *h = slurm_hostlist_shift(hl)) {
    out.insert(h);
    std::free(h);
    if (out.size() > 4096) {
      slurm_hostlist_destroy(hl);
      throw_invalid("--released: more than 4096 nodes");
    }
  }
  slurm_hostlist_destroy(hl);
  return out;
}

}  // namespace

int cmd_annotate(const Caller &caller, int argc, char **argv) {
  Args a(argc - 1, argv + 1, {"winner", "trials", "stopped-by", "released"}, {"help"}, "autotune annotate");
  if (a.flag("help")) {
    std::printf(
        "usage: autotune annotate JOBID --winner CONFIG [--trials N] [--stopped-by RULE] [--released NODES]\n\n"
        "Record in the AdminComment of a job that tunes inside its allocation (--autotune-mode=steps)\n"
        "the configuration its search chose and the nodes it gave back.  autotune-run runs it after\n"
        "choosing, before and after shrinking the job to the winner (scontrol update JobId=..\n"
        "NumNodes=..): a job with more nodes than the winner is noted as shrinking, one with the\n"
        "winner's node count as shrunk (with --released) or as keeping its nodes.  Only the job's\n"
        "owner may annotate it, only while it runs; a later annotation replaces an earlier one.\n"
        "Slurm accepts no update of a resized job until accounting has recorded the resize, so\n"
        "without accounting (AccountingStorageType=none) only the note before the shrink lands.\n\n"
        "  --winner CONFIG    the chosen configuration (nodes=2,workers=3,ps=1,...)\n"
        "  --trials N         how many configurations the job profiled\n"
        "  --stopped-by RULE  the rule that ended the search: budget, exhausted, improvement, ei, none\n"
        "  --released NODES   the nodes the job gave back (a Slurm host list, e.g. n[3-4])\n");
    return 0;
  }
  a.expect_positional(1, "JOBID");
  const auto job_id = static_cast<std::uint32_t>(parse_int("JOBID", a.positional()[0], 1, 4294967294LL));
  auto winner_text = a.value("winner");
  if (!winner_text) throw_invalid("--winner CONFIG is required; see `autotune annotate --help'");
  const Configuration winner = Configuration::parse(*winner_text, "--winner");
  std::optional<long long> trials;
  if (auto v = a.value("trials")) trials = parse_int("--trials", *v, 0, 1000000);
  std::string rule;
  if (auto v = a.value("stopped-by")) {
    rule = *v;
    if (rule != "budget" && rule != "exhausted" && rule != "improvement" && rule != "ei" && rule != "none")
      throw_invalid("--stopped-by: '" + rule + "' is not one of budget, exhausted, improvement, ei, none");
  }
  std::string released;
  if (auto v = a.value("released")) {
    released = *v;
    static const std::regex hostlist(R"([A-Za-z0-9._\-\[\],]{1,256})");
    if (!std::regex_match(released, hostlist))
      throw_invalid("--released: '" + released + "' is not a Slurm host list (1-256 characters of A-Z a-z 0-9 . _ - [ ] ,)");
  }

  // Slurm is reached with SlurmUser's identity: only through the site's slurm.conf (init_caller
  // pointed libslurm at it; nothing of the caller's environment chooses it).
  require_site_slurm_conf(caller);
  const Job job = load(job_id);
  if (job.uid != caller.uid && !caller.privileged)
    throw Error(Errc::permission, "job " + std::to_string(job_id) + " belongs to " + user_name(job.uid) + ", not " +
                                      caller.user + "; only its owner may annotate it");
  if (!job.running) throw Error(Errc::invalid_argument, "job " + std::to_string(job_id) + " is not running");
  static const std::regex steps(R"(autotune: class=[A-Za-z0-9._-]+( \(shared\))?( trial=[0-9]+)? mode=steps\b)");
  if (!std::regex_search(job.comment, steps))
    throw Error(Errc::invalid_argument, "job " + std::to_string(job_id) +
                                            " does not tune inside its allocation (its AdminComment has no "
                                            "autotune mode=steps record)");
  const auto want = static_cast<std::uint32_t>(winner.counts.nodes);
  if (want > job.num_nodes)
    throw Error(Errc::invalid_argument, "job " + std::to_string(job_id) + " has " + std::to_string(job.num_nodes) +
                                            " nodes, fewer than the winner's " + std::to_string(want));
  if (!released.empty() && want != job.num_nodes)
    throw Error(Errc::invalid_argument, "--released: job " + std::to_string(job_id) + " still has " +
                                            std::to_string(job.num_nodes) + " nodes, the winner " +
                                            std::to_string(want) + "; shrink the job first (scontrol update JobId=" +
                                            std::to_string(job_id) + " NumNodes=" + std::to_string(want) + ")");
  if (!released.empty()) {
    const std::set<std::string> gone = expand(released), held = expand(job.nodes);
    for (const auto &n : gone)
      if (held.count(n))
        throw_invalid("--released: job " + std::to_string(job_id) + " still holds node " + n + " (" + job.nodes + ")");
  }

  std::string base = job.comment;
  if (const size_t at = base.find("; winner config="); at != std::string::npos) base.resize(at);
  std::string note = "; winner config=" + winner.format();
  if (trials) note += " after " + std::to_string(*trials) + (*trials == 1 ? " trial" : " trials");
  if (!rule.empty()) note += " (stopped by " + rule + ")";
  if (!released.empty())
    note += "; shrunk to " + std::to_string(job.num_nodes) + (job.num_nodes == 1 ? " node (" : " nodes (") + job.nodes +
            "), released " + released;
  else if (want < job.num_nodes)
    note += "; shrinking from " + std::to_string(job.num_nodes) + " nodes (" + job.nodes + ") to " +
            std::to_string(want);
  else
    note += "; kept its " + std::to_string(job.num_nodes) + (job.num_nodes == 1 ? " node (" : " nodes (") + job.nodes + ")";
  const std::string comment = base + note;

  job_desc_msg_t desc;
  slurm_init_job_desc_msg(&desc);
  desc.job_id = job_id;
  std::string buf = comment;
  desc.admin_comment = buf.data();
  if (slurm_update_job(&desc) != SLURM_SUCCESS) {
    const int e = slurm_get_errno();
    throw Error(e == ESLURM_ACCESS_DENIED || e == ESLURM_USER_ID_MISSING ? Errc::permission : Errc::io,
                "cannot update job " + std::to_string(job_id) + "'s AdminComment: " + slurm_strerror(e) +
                    (caller.setuid || caller.privileged ? "" : " (is `autotune' installed setuid to SlurmUser?)"));
  }
  std::printf("job %u: AdminComment=%s\n", job_id, comment.c_str());
  return 0;
}

}  // namespace autotune::cli
