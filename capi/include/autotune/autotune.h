/*
 * autotune.h — the C API of libautotune, for the Slurm plugin shims.
 *
 * Every function here catches every exception of the C++ core: it returns 0 on success and a
 * negative AT_E* code on failure, with a message in the caller's buffer (always NUL-terminated,
 * truncated to `errlen`).  No function writes to stdout or stderr; diagnostics go to the sink
 * set with at_set_log_sink().  All functions are safe to call from several threads at once
 * unless noted.
 */
#ifndef AUTOTUNE_AUTOTUNE_H
#define AUTOTUNE_AUTOTUNE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes (negative; 0 is success).  They mirror autotune::Errc. */
enum {
  AT_OK = 0,
  AT_EINVAL = -1,   /* user input failed validation; the message says which field and why */
  AT_ENOENT = -2,   /* no such class, key, or file */
  AT_EIO = -3,      /* the operating system refused a read or write */
  AT_ECORRUPT = -4, /* stored data failed its checksum or schema check */
  AT_EBUSY = -5,    /* a lock could not be taken in time */
  AT_EPERM = -6,    /* not allowed for this caller */
  AT_EUNSUP = -7,   /* not supported by this build or machine */
  AT_EINTERNAL = -8, /* a bug: an invariant did not hold */
  AT_ENOSPC = -9     /* a capacity (storage tier, buffer) is too small for the request */
};

/* Log levels passed to the sink. */
enum { AT_LOG_ERROR = 0, AT_LOG_INFO = 1, AT_LOG_VERBOSE = 2, AT_LOG_DEBUG = 3 };

typedef void (*at_log_sink_fn)(int level, const char *message);

/* Install the sink for the core's diagnostics (NULL: drop them).  Call once, from init(). */
void at_set_log_sink(at_log_sink_fn sink);

/* Longest class name, in bytes. */
#define AT_CLASS_NAME_MAX 64

/*
 * Check a class name: 1..AT_CLASS_NAME_MAX characters from [A-Za-z0-9._-].
 * Returns AT_OK, or AT_EINVAL with a message that quotes the name and says what is allowed.
 */
int at_class_name_check(const char *name, char *err, size_t errlen);

/*
 * Find `key` in an environment array of "KEY=VALUE" strings (as Slurm keeps a job's
 * spank_job_env).  Returns a pointer into the matching entry's value, or NULL.
 */
const char *at_env_get(char *const *env, size_t count, const char *key);

/* ---- job_submit ------------------------------------------------------------------------------ */

/*
 * Where the plugin reads autotune.conf (beside slurm.conf).  Called from init(); the file is
 * read again when its modification time changes.  Returns AT_OK, or an error (the plugin then
 * leaves jobs unchanged until the file is fixed).
 */
int at_submit_configure(const char *conf_path, char *err, size_t errlen);

/* One kind of node of the job's partition. */
typedef struct {
  const char *name;     /* e.g. "cpus2-mem4000" */
  int count;            /* nodes of this kind in the partition */
  int cpus;             /* per node */
  unsigned long long mem_mb; /* RealMemory per node */
  int gpus;             /* per node */
  const char *features; /* comma-separated, may be NULL */
} at_node_type;

/*
 * The node kinds of the job's partition.  Called only when a new class is created (rarely), so
 * the plugin walks its node table only then.  Fill at most `max` entries, return how many.
 */
typedef size_t (*at_inventory_fn)(void *ctx, at_node_type *types, size_t max);

/*
 * The job's partition's limits on one job's request (slurm.conf's MinNodes, MaxNodes,
 * MaxCPUsPerNode, MaxMemPerNode, MaxMemPerCPU, memory in MB); 0 = no limit.  A new class keeps
 * only configurations whose request respects them.
 */
typedef struct {
  unsigned int min_nodes, max_nodes, max_cpus_per_node;
  unsigned long long max_mem_per_node_mb, max_mem_per_cpu_mb;
} at_partition_limits;

/*
 * The limits accounting puts on one job's request when slurmctld enforces them
 * (AccountingStorageEnforce=limits): the job's QOS and its partition's QOS (MaxTRESPerJob,
 * MaxTRESPerNode, MinTRESPerJob, and GrpTRES, MaxTRESPerUser, MaxTRESPerAccount, which no single
 * job may exceed either) and, for each resource no QOS limits, its association's (MaxTRES,
 * MaxTRESPerNode, and GrpTRES up the account tree).  Memory in MB; 0 = no limit.  A new class
 * keeps only configurations whose request respects them.  `text` says where they come from, for
 * messages (e.g. "QOS small: MaxTRESPerJob=cpu=4,node=2"); NULL when there are none.
 */
typedef struct {
  unsigned long long max_nodes, max_cpus, max_mem_mb, max_gpus;
  unsigned long long max_cpus_per_node, max_mem_per_node_mb, max_gpus_per_node;
  unsigned long long min_nodes, min_cpus, min_mem_mb;
  const char *text;
} at_accounting_limits;

/*
 * Fills the job's accounting limits (*out starts all 0).  Called only when a new class is
 * created; `text` must stay valid until at_submit() returns.
 */
typedef void (*at_accounting_fn)(void *ctx, at_accounting_limits *out);

typedef struct {
  unsigned int uid;                /* the submitting user */
  char *const *spank_env;          /* the job's SPANK environment ("AUTOTUNE_CLASS=..." etc.) */
  size_t spank_env_count;
  const char *partition;           /* the job's partition (for the message and the class) */
  const char *billing_weights;     /* the partition's TRESBillingWeights, may be NULL */
  at_inventory_fn inventory;       /* see above */
  void *inventory_ctx;
  at_partition_limits limits;      /* all 0: none */
  at_accounting_fn accounting;     /* the job's QOS and association limits; NULL: none */
  void *accounting_ctx;
  int is_array;                    /* 1: a job array (sbatch --array): all its tasks share one request */
  int is_het;                      /* 1: a component of a heterogeneous job (hetjob) */
} at_submit_request;

#define AT_SUBMIT_MAX_ENV 12

typedef struct {
  int is_autotune;       /* 0: not an autotune job; leave it alone */
  int rewrite;           /* 1: replace the job's request with the fields below */
  unsigned int nodes;    /* min = max nodes */
  unsigned int ntasks;
  unsigned int cpus_per_task;
  unsigned long long mem_per_cpu_mb;
  unsigned int gpus_per_task;
  char admin_comment[1024];   /* what was done, for the job's AdminComment */
  char env[AT_SUBMIT_MAX_ENV][512]; /* "KEY=VALUE" to add to the job's (SPANK) environment */
  int env_count;
  char user_msg[1024];   /* for the submitting user (job_submit's message), or "" */
} at_submit_decision;

/*
 * Decide what an autotune job runs on: validate its --autotune* options (AT_EINVAL with a message
 * naming the option, the value and what is allowed: refuse the submission), then take the
 * class's next precomputed configuration from the store in one short transaction.  Any other
 * error (the store locked, full, damaged or missing, autotune.conf broken) is returned so the
 * plugin can log it and accept the job unchanged: *out then says so for an autotune job
 * (is_autotune 1, rewrite 0): admin_comment and user_msg give the reason and what an
 * administrator should do, and env holds AUTOTUNE_UNAVAILABLE=<reason> (locked, full, damaged,
 * missing, config, or error), so that autotune-run runs the job untuned on its allocation.  Bounded work: no model is fitted here, except that a class seen
 * for the first time gets its initial design (a seeded pick over the enumerated space).
 * Serialized internally; safe to call from any thread.
 */
int at_submit(const at_submit_request *req, at_submit_decision *out, char *err, size_t errlen);

/*
 * Timing of at_submit since the plugin was loaded, wall clock and the calling thread's CPU time,
 * and how many answers for converged classes came from memory (the same answer as before, while
 * the store had not changed): "N calls, wall median X us, p99 Y us, max Z us; thread CPU median
 * ...; K answers for converged classes from memory".
 */
void at_submit_stats(char *buf, size_t len);

/* ---- select --------------------------------------------------------------------------------- */

/*
 * Start keeping the per-node speed scores of the store in memory, refreshed every
 * `refresh_seconds` by a background thread, so that node selection never touches the store.
 * Nodes whose score is below SlowNodeThreshold (autotune.conf) count as slow.
 */
int at_select_configure(const char *conf_path, int refresh_seconds, char *err, size_t errlen);
/* Stop the background thread (from fini()). */
void at_select_shutdown(void);
/* 1 when the node is known to be slow, else 0.  Reads the in-memory snapshot: no I/O. */
int at_node_is_slow(const char *node);

/* ---- prep: the ends of autotune jobs ------------------------------------------------------- */

/* What slurmctld knows of an autotune job when it ends (prep/autotune's epilog_slurmctld). */
typedef struct {
  unsigned int job_id;
  unsigned int uid;
  const char *state;         /* Slurm's base state name: "COMPLETED", "FAILED", "TIMEOUT", ... */
  int requeued;              /* 1: the job will run again (requeue, preemption with requeue) */
  long long start, end;      /* Unix seconds; start 0: it never started */
  unsigned int exit_code;
  const char *nodes;         /* the job's NodeList, may be NULL */
  const char *admin_comment; /* the record job_submit/autotune wrote */
  long long submit;          /* Unix seconds the job was submitted; 0: not known */
} at_job_end;

/*
 * Start recording job ends: reads StateDir from autotune.conf at `conf_path`, makes
 * StateDir/spool (mode 0700) when missing, and starts a background thread that makes new events
 * durable (fsync) and runs `ingest_program ingest --spool` outside slurmctld's locks (with
 * AUTOTUNE_CONF=`conf_path` in its environment when that file exists), at once after
 * each event and every IngestRetry seconds of autotune.conf (`retry_seconds` when it has none)
 * while events wait (the store locked, full or damaged).
 * Returns AT_OK or an error (then at_prep_job_end() refuses every event, with the reason).
 */
int at_prep_configure(const char *conf_path, const char *ingest_program, int retry_seconds, char *err,
                      size_t errlen);
/* Stop the background thread (from fini()); an ingest already running is left to finish. */
void at_prep_shutdown(void);
/*
 * Record that an autotune job ended: one small file in StateDir/spool (no fsync, no store, no
 * process: microseconds under slurmctld's locks), then wake the thread.
 */
int at_prep_job_end(const at_job_end *e, char *err, size_t errlen);
/* 1 when `admin_comment` is job_submit/autotune's record of a tuned job (its end is recorded). */
int at_prep_is_tuned(const char *admin_comment);

#ifdef __cplusplus
}
#endif

#endif /* AUTOTUNE_AUTOTUNE_H */
