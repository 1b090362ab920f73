/* Preloaded into the MPI runs of scripts/test --sanitize (tests/sanitize/run-mpi): dlclose does
 * nothing, so that the Open MPI components (mca_*.so) stay mapped until the process exits.
 * LeakSanitizer then names their module in the stacks of what they never free, and
 * tests/sanitize/lsan.supp can match it, with the fast unwinder: closed, the components show as
 * "<unknown module>", and only the slow unwinder (fast_unwind_on_malloc=0: twice the CPU of the
 * whole MPI run, 264 against 118 s) could reach a frame of libmpi.so below them. */
int dlclose(void *handle);

int dlclose(void *handle) {
  (void)handle;
  return 0;
}
