#!/usr/bin/env python3
"""The Python helper slurm_autotune (python/slurm_autotune): what it writes for the reporting
contract (docs/reporting.md), the profiling variables as libssp reads them, and bad values
refused naming the field.  Run by `make check` with python3."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "python"))
import slurm_autotune  # noqa: E402
from slurm_autotune import Profiler, ReportError, report  # noqa: E402


class Exited(Exception):
    pass


def exiter(code):
    raise Exited(code)


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.result = os.path.join(self.dir.name, "result.json")
        self.env = {"AUTOTUNE_RESULT": self.result, "SLURM_PROCID": "3", "SLURMD_NODENAME": "n2",
                    "SLURM_CPUS_PER_TASK": "2", "SLURM_MEM_PER_CPU": "256"}

    def tearDown(self):
        self.dir.cleanup()

    def written(self, rank=3):
        with open("%s.rank.%d" % (self.result, rank)) as f:
            return json.load(f)


class Report(Base):
    def test_one_line(self):
        path = report(1000, 2.5, batches=10, environ=self.env)
        self.assertEqual(path, self.result + ".rank.3")
        d = self.written()
        self.assertEqual(d["format"], "autotune-rank/1")
        self.assertEqual(d["rank"], 3)
        self.assertEqual(d["node"], "n2")
        self.assertEqual(d["samples"], 1000)
        self.assertEqual(d["wall_s"], 2.5)
        self.assertEqual(d["batches"], 10)
        self.assertEqual(d["cpus_allocated"], 2)
        self.assertEqual(d["mem_limit_mb"], 512)
        self.assertGreater(d["peak_rss_mb"], 0)
        self.assertEqual(os.listdir(self.dir.name), ["result.json.rank.3"], "no temporary file left")

    def test_an_unwritable_report_is_not_the_programs_failure(self):
        env = dict(self.env, AUTOTUNE_RESULT="/nonexistent-dir/result.json")
        self.assertIsNone(report(1, 1, environ=env))
        p = Profiler(environ=dict(env, AUTOTUNE_PROFILE_WARMUP="0"), exit=exiter)
        p.step(1)
        self.assertIsNone(p.close())

    def test_nothing_without_autotune_result(self):
        self.assertIsNone(report(1, 1, environ={}))

    def test_bad_values(self):
        for args, msg in (((-1, 1), "samples: -1 is below 0"),
                          ((float("nan"), 1), "samples: nan is not finite"),
                          (("10", 1), "samples: '10' is not a number"),
                          ((True, 1), "samples: True is not a number"),
                          ((1, 0), "seconds: 0 is not above 0"),
                          ((1, -2.5), "seconds: -2.5 is not above 0"),
                          ((1, float("inf")), "seconds: inf is not finite"),
                          ((1, 1e10), "seconds: 10000000000.0 is above 1e+09")):
            with self.assertRaises(ReportError) as cm:
                report(*args, environ=self.env)
            self.assertEqual(str(cm.exception), msg)
        with self.assertRaises(ReportError) as cm:
            report(1, 1, batches=-1, environ=self.env)
        self.assertEqual(str(cm.exception), "batches: -1 is not a whole number from 0 to 1e12")
        with self.assertRaises(ReportError) as cm:
            report(1, 1, environ=dict(self.env, SLURM_PROCID="x"))
        self.assertEqual(str(cm.exception), "SLURM_PROCID: 'x' is not a whole number from 0 to 10000000")
        self.assertFalse(os.path.exists(self.result + ".rank.3"), "nothing written for a bad value")


class Profiling(Base):
    def test_warmup_then_the_whole_run(self):
        p = Profiler(environ=self.env, exit=exiter)
        for _ in range(2):
            p.step(64)  # the warm-up: not counted
        self.assertTrue(p.measuring)
        for _ in range(5):
            p.step(64)
        path = p.close()
        d = self.written()
        self.assertEqual(path, self.result + ".rank.3")
        self.assertEqual(d["samples"], 320)
        self.assertEqual(d["batches"], 5)
        self.assertGreater(d["wall_s"], 0)
        self.assertGreaterEqual(d["cpu_s"], 0)
        self.assertFalse(d["profile_only"])
        self.assertEqual(p.close(), path, "closing twice writes once")

    def test_profile_only_exits_after_k_batches(self):
        env = dict(self.env, AUTOTUNE_PROFILE_BATCHES="3", AUTOTUNE_PROFILE_ONLY="1", AUTOTUNE_PROFILE_WARMUP="1")
        p = Profiler(environ=env, exit=exiter)
        p.step(10)
        p.step(10)
        p.step(10)
        with self.assertRaises(Exited) as cm:
            p.step(10)
        self.assertEqual(cm.exception.args, (0,))
        d = self.written()
        self.assertEqual(d["samples"], 30)
        self.assertEqual(d["batches"], 3)
        self.assertTrue(d["profile_only"])

    def test_k_batches_without_profile_only_keep_running(self):
        env = dict(self.env, AUTOTUNE_PROFILE_BATCHES="2", AUTOTUNE_PROFILE_WARMUP="0")
        p = Profiler(environ=env, exit=exiter)
        for _ in range(6):
            p.step(5)
        self.assertFalse(p.measuring)
        p.close()
        self.assertEqual(self.written()["samples"], 10, "only the K batches after the warm-up")

    def test_iterator_wrapper(self):
        p = Profiler(environ=dict(self.env, AUTOTUNE_PROFILE_WARMUP="0"), exit=exiter)
        batches = [([1, 2, 3], "y"), ([4, 5], "y")]
        self.assertEqual(list(p.wrap(batches)), batches)
        p.close()
        self.assertEqual(self.written()["samples"], 5)
        q = Profiler(environ=dict(self.env, AUTOTUNE_PROFILE_WARMUP="0", SLURM_PROCID="4"), exit=exiter)
        list(q.wrap(range(4), samples=lambda b: 8))
        q.close()
        self.assertEqual(self.written(4)["samples"], 32)

    def test_bad_variables_and_values(self):
        for env, msg in (
                ({"AUTOTUNE_PROFILE_BATCHES": "0"}, "AUTOTUNE_PROFILE_BATCHES: '0' is not a whole number from 1 to 1000000"),
                ({"AUTOTUNE_PROFILE_BATCHES": "ten"}, "AUTOTUNE_PROFILE_BATCHES: 'ten' is not a whole number from 1 to 1000000"),
                ({"AUTOTUNE_PROFILE_WARMUP": "-1"}, "AUTOTUNE_PROFILE_WARMUP: '-1' is not a whole number from 0 to 1000000"),
                ({"AUTOTUNE_PROFILE_ONLY": "maybe", "AUTOTUNE_PROFILE_BATCHES": "2"},
                 "AUTOTUNE_PROFILE_ONLY: 'maybe' is not a boolean; allowed: yes, no, true, false, 1, 0, on, off"),
                ({"AUTOTUNE_PROFILE_ONLY": "1"},
                 "AUTOTUNE_PROFILE_ONLY: set, but AUTOTUNE_PROFILE_BATCHES is not; allowed: "
                 "AUTOTUNE_PROFILE_ONLY=1 together with AUTOTUNE_PROFILE_BATCHES=K")):
            with self.assertRaises(ReportError) as cm:
                Profiler(environ=dict(self.env, **env))
            self.assertEqual(str(cm.exception), msg)
        with self.assertRaises(ReportError):
            Profiler(environ=self.env, batches=0)
        p = Profiler(environ=self.env, exit=exiter)
        for bad, msg in ((-3, "samples: -3 is below 0"), (None, "samples: None is not a number")):
            with self.assertRaises(ReportError) as cm:
                p.step(bad)
            self.assertEqual(str(cm.exception), msg)

    def test_nothing_measured_writes_nothing(self):
        p = Profiler(environ=self.env, exit=exiter)
        p.step(1)  # still in the warm-up
        self.assertIsNone(p.close())
        self.assertEqual(os.listdir(self.dir.name), [])

    def test_version(self):
        self.assertEqual(slurm_autotune.FORMAT, "autotune-rank/1")
        self.assertEqual(slurm_autotune.VERSION, 1)


if __name__ == "__main__":
    unittest.main(verbosity=1)
