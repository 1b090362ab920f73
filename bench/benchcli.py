"""What the Python scripts of bench/ share: one ArgumentParser for all of them, and the rule by
which a replayed search lost to random search (lost_to_random()).

-h and --help print the script's docstring (its usage) on stdout; an error is one line on stderr
and exit status 2, and an unknown option's error lists the options there are.
"""
import argparse
import sys


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, with the script's docstring as its help: ArgumentParser(prog, usage=__doc__)."""

    def __init__(self, prog, usage):
        super().__init__(prog=prog)
        self._doc = usage

    def print_help(self, file=None):
        (file or sys.stdout).write(self._doc)

    def error(self, message):
        if message.startswith("unrecognized arguments"):
            message += " (allowed: %s)" % ", ".join(
                o for a in self._actions for o in a.option_strings if o.startswith("--"))
        self.exit(2, "%s: error: %s\n" % (self.prog, message))


def lost_to_random(b, r):
    """A search lost to random search on one problem (`autotune replay --json` results of the same
    seeds): a higher median regret after the budget, or fewer runs within 10% after 12 trials."""
    reg_b = b["regret_median"] if b["regret_median"] is not None else 1e9
    reg_r = r["regret_median"] if r["regret_median"] is not None else 1e9
    return reg_b > reg_r + 1e-9 or b["within10_at"] < r["within10_at"] - 1e-9
