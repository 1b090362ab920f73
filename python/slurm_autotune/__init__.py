"""slurm_autotune: tell slurm-autotune how fast a Python training program goes.

Pure Python, no dependency.  The reporting contract (docs/reporting.md, ``man autotune``):
each rank writes its own report to ``$AUTOTUNE_RESULT.rank.<R>`` (R = its rank, from
``SLURM_PROCID``), format ``autotune-rank/1``; ``autotune-run`` merges the ranks' reports after
the step.  Without ``AUTOTUNE_RESULT`` (the program does not run under autotune-run) nothing is
written.  A program that reports nothing is measured by the wall time of its run instead.

Per batch::

    from slurm_autotune import Profiler
    prof = Profiler()
    for x, y in loader:
        ...train on the batch...
        prof.step(len(x))          # the samples this rank processed in the batch
    prof.close()                   # also done at exit

or as an iterator wrapper (``samples`` gives a batch's sample count; default ``len(batch[0])``)::

    for x, y in prof.wrap(loader):
        ...

or in one line, for a program that times itself: ``slurm_autotune.report(samples, seconds)``.

The Profiler honours the profiling variables as libssp does (libssp/include/ssp/profile.hpp):
``AUTOTUNE_PROFILE_WARMUP=W`` (batches skipped before measuring, default 2),
``AUTOTUNE_PROFILE_BATCHES=K`` (measure the K batches after the warm-up; unset: the whole run
after it) and ``AUTOTUNE_PROFILE_ONLY=1`` (steps mode: once the K batches are measured, write the
report and end the process with status 0, from inside ``step()``).  It records the rank's CPU
time (``/proc/self/stat``) over the measured window and its peak resident memory
(``/proc/self/status`` VmHWM), for the per-role adjuster.
"""

import atexit
import math
import os
import socket
import sys
import time

__all__ = ["Profiler", "ReportError", "report", "FORMAT", "VERSION"]

FORMAT = "autotune-rank/1"
VERSION = 1


class ReportError(ValueError):
    """A bad value given to a helper, or a bad profiling variable; the message names it."""


_TRUE = ("yes", "true", "1", "on")
_FALSE = ("no", "false", "0", "off")


def _env_int(name, lo, hi, environ):
    v = environ.get(name, "")
    if v == "":
        return None
    try:
        n = int(v, 10)
    except ValueError:
        raise ReportError("%s: '%s' is not a whole number from %d to %d" % (name, v, lo, hi)) from None
    if n < lo or n > hi:
        raise ReportError("%s: '%s' is not a whole number from %d to %d" % (name, v, lo, hi))
    return n


def _env_bool(name, environ):
    v = environ.get(name, "")
    if v == "":
        return False
    if v.lower() in _TRUE:
        return True
    if v.lower() in _FALSE:
        return False
    raise ReportError("%s: '%s' is not a boolean; allowed: yes, no, true, false, 1, 0, on, off" % (name, v))


def _number(field, value, lo, hi, above=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ReportError("%s: %r is not a number" % (field, value))
    v = float(value)
    if not math.isfinite(v):
        raise ReportError("%s: %r is not finite" % (field, value))
    if (v <= lo) if above else (v < lo):
        raise ReportError("%s: %r is %s %g" % (field, value, "not above" if above else "below", lo))
    if v > hi:
        raise ReportError("%s: %r is above %g" % (field, value, hi))
    return v


def _cpu_seconds():
    """This process's CPU time (user + system), from /proc/self/stat."""
    try:
        with open("/proc/self/stat") as f:
            text = f.read()
        fields = text[text.rindex(")") + 2:].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / float(ticks)
    except (OSError, ValueError, IndexError):
        t = os.times()
        return t.user + t.system


def _peak_rss_mb():
    """This process's peak resident memory in MiB (VmHWM of /proc/self/status)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return None


def _rank(environ):
    for name in ("SLURM_PROCID", "RANK"):
        r = _env_int(name, 0, 10000000, environ)
        if r is not None:
            return r
    return 0


def _write(doc_fields, environ):
    result = environ.get("AUTOTUNE_RESULT", "")
    if not result:
        return None
    rank = doc_fields["rank"]
    path = "%s.rank.%d" % (result, rank)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    parts = []
    for k, v in doc_fields.items():
        if v is None:
            continue
        if isinstance(v, bool):
            parts.append('"%s":%s' % (k, "true" if v else "false"))
        elif isinstance(v, str):
            parts.append('"%s":%s' % (k, _json_str(v)))
        else:
            parts.append('"%s":%s' % (k, repr(float(v)) if isinstance(v, float) else str(int(v))))
    text = "{" + ",".join(parts) + "}\n"
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        # Not the program's failure: e.g. a rank on another node than autotune-run's, whose
        # scratch directory it cannot reach (autotune-run estimates from the ranks it finds).
        sys.stderr.write("slurm_autotune: rank %d: cannot write its report %s: %s\n" % (rank, path, e.strerror or e))
        return None
    return path


def _json_str(s):
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _common_fields(environ):
    cpus = mem = None
    try:
        cpus = _env_int("SLURM_CPUS_PER_TASK", 1, 4096, environ)
        per_cpu = _env_int("SLURM_MEM_PER_CPU", 1, 10 ** 9, environ)
        per_node = _env_int("SLURM_MEM_PER_NODE", 1, 10 ** 9, environ)
        mem = per_cpu * (cpus or 1) if per_cpu else per_node
    except ReportError:
        mem = None
    node = environ.get("SLURMD_NODENAME") or socket.gethostname()
    return {"node": node[:256], "cpus_allocated": cpus, "mem_limit_mb": mem}


def report(samples, seconds, batches=None, environ=None):
    """Report in one call: this rank processed ``samples`` samples (>= 0) in ``seconds`` seconds of
    wall time (> 0), in ``batches`` batches (optional).  Returns the path written, or None when
    ``AUTOTUNE_RESULT`` is unset.  Raises ReportError for a bad value."""
    environ = os.environ if environ is None else environ
    s = _number("samples", samples, 0, 1e18)
    t = _number("seconds", seconds, 0, 1e9, above=True)
    if batches is not None:
        if isinstance(batches, bool) or not isinstance(batches, int) or batches < 0 or batches > 10 ** 12:
            raise ReportError("batches: %r is not a whole number from 0 to 1e12" % (batches,))
    fields = {"format": FORMAT, "rank": _rank(environ), "role": "worker"}
    fields.update(_common_fields(environ))
    fields.update({"samples": s, "wall_s": t, "batches": batches, "peak_rss_mb": _peak_rss_mb(),
                   "reporter": "slurm_autotune"})
    return _write(fields, environ)


class Profiler:
    """Measures this rank's batches and reports them (see the module's help).

    ``warmup``, ``batches`` and ``only`` override AUTOTUNE_PROFILE_WARMUP, _BATCHES and _ONLY.
    ``exit`` is what ends the process when AUTOTUNE_PROFILE_ONLY's window is measured
    (default ``os._exit``, after flushing stdout and stderr: the ranks of a distributed program
    end together without waiting for each other's shutdown).  Not thread-safe: one per process.
    """

    def __init__(self, warmup=None, batches=None, only=None, environ=None, exit=None):
        self._env = os.environ if environ is None else environ
        e = self._env
        self.warmup = _env_int("AUTOTUNE_PROFILE_WARMUP", 0, 1000000, e) if warmup is None else warmup
        if self.warmup is None:
            self.warmup = 2
        self.batches = _env_int("AUTOTUNE_PROFILE_BATCHES", 1, 1000000, e) if batches is None else batches
        self.only = _env_bool("AUTOTUNE_PROFILE_ONLY", e) if only is None else bool(only)
        for name, v, lo in (("warmup", self.warmup, 0), ("batches", self.batches, 1)):
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < lo or v > 1000000:
                raise ReportError("%s: %r is not a whole number from %d to 1000000" % (name, v, lo))
        if self.only and self.batches is None:
            raise ReportError("AUTOTUNE_PROFILE_ONLY: set, but AUTOTUNE_PROFILE_BATCHES is not; allowed: "
                              "AUTOTUNE_PROFILE_ONLY=1 together with AUTOTUNE_PROFILE_BATCHES=K")
        self.rank = _rank(e)
        self._exit = exit
        self._done = 0          # batches finished
        self._samples = 0.0     # samples in the measured window
        self._t0 = self._t1 = None
        self._cpu0 = self._cpu1 = None
        self._closed = False
        self.path = None
        if self.warmup == 0:
            self._begin()
        atexit.register(self.close)

    def _begin(self):
        self._t0 = time.monotonic()
        self._cpu0 = _cpu_seconds()

    def _end(self):
        self._t1 = time.monotonic()
        self._cpu1 = _cpu_seconds()

    @property
    def measuring(self):
        return self._t0 is not None and self._t1 is None

    def step(self, samples):
        """One batch finished, of ``samples`` samples (a number >= 0) on this rank."""
        n = _number("samples", samples, 0, 1e15)
        if self._closed:
            return
        if self.measuring:
            self._samples += n
        self._done += 1
        if self._t0 is None and self._done >= self.warmup:
            self._begin()
        elif self.measuring and self.batches is not None and self._done >= self.warmup + self.batches:
            self._end()
            if self.only:
                self.close()
                sys.stdout.flush()
                sys.stderr.flush()
                (self._exit or os._exit)(0)

    def wrap(self, iterable, samples=None):
        """Yields the batches of ``iterable``, calling step() after each: ``samples(batch)`` gives
        its sample count (default: ``len(batch[0])`` for a tuple or list, else ``len(batch)``)."""
        count = samples or _default_count
        if self._t0 is None and self.warmup == 0:
            self._begin()
        for batch in iterable:
            yield batch
            self.step(count(batch))

    def close(self):
        """Ends the measured window and writes the report (once; also at exit).  Returns the path
        written, or None (AUTOTUNE_RESULT unset, or nothing measured)."""
        if self._closed:
            return self.path
        self._closed = True
        if self._t0 is None:
            return None
        if self._t1 is None:
            self._end()
        wall = self._t1 - self._t0
        if not wall > 0:
            return None
        fields = {"format": FORMAT, "rank": self.rank, "role": "worker"}
        fields.update(_common_fields(self._env))
        fields.update({"samples": self._samples, "wall_s": wall,
                       "batches": self._done - self.warmup if self._done > self.warmup else 0,
                       "cpu_s": max(0.0, self._cpu1 - self._cpu0), "peak_rss_mb": _peak_rss_mb(),
                       "profile_only": self.only, "reporter": "slurm_autotune"})
        self.path = _write(fields, self._env)
        return self.path

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _default_count(batch):
    if isinstance(batch, (tuple, list)) and batch:
        return len(batch[0])
    return len(batch)
