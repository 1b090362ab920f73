/* libautotune-report: one line for a program that is not linked with libssp to tell
 * slurm-autotune how fast it went.  C and C++; no MPI, no libssp.
 *
 *   #include <autotune/report.h>
 *   ...train...
 *   at_report(samples_this_rank_processed, seconds_it_took);
 *
 * Build: cc app.c $(pkg-config --cflags --libs autotune-report)
 *
 * Each rank (task) reports its own work.  The report goes to $AUTOTUNE_RESULT.rank.<R>, R being
 * $SLURM_PROCID (0 when unset), in the format "autotune-rank/1" of the reporting contract
 * (docs/reporting.md, `man autotune`, REPORTING CONTRACT); autotune-run merges the ranks' reports
 * after the step: the class's throughput is the ranks' samples over the longest rank's seconds.
 * A program that reports nothing is measured by the wall time of its run instead.
 *
 * Thread safety: every function may be called from any thread; at_report_error() is per thread.
 */
#ifndef AUTOTUNE_REPORT_H
#define AUTOTUNE_REPORT_H

#ifdef __cplusplus
extern "C" {
#endif

/* The format of the per-rank report, and the version of this interface. */
#define AT_REPORT_FORMAT "autotune-rank/1"
#define AT_REPORT_VERSION 1

/* Reports that this rank processed `samples` samples (finite, 0 .. 1e18) in `seconds` seconds of
 * wall time (finite, above 0, at most 1e9), and `batches` batches (0 .. 1e12; -1: not counted).
 * Also recorded: this process's peak resident memory (getrusage), its node ($SLURMD_NODENAME,
 * else the host name), $SLURM_CPUS_PER_TASK and the memory limit of the step.
 * The file is written atomically (a temporary file, then rename).
 * Returns 0 when reported, 1 when $AUTOTUNE_RESULT is unset (the program does not run under
 * autotune-run: nothing to do), -1 on error: errno is EINVAL for a bad value (or a bad
 * $SLURM_PROCID) or the I/O error, and at_report_error() says which, naming the field. */
int at_report(double samples, double seconds);
int at_report_batches(double samples, double seconds, long long batches);

/* The message of this thread's last failed call ("" when none). */
const char *at_report_error(void);

#ifdef __cplusplus
}
#endif

#endif /* AUTOTUNE_REPORT_H */
