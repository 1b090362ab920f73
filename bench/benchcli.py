"""What the Python scripts of bench/ share: one ArgumentParser for all of them, the types of their
common options (positive_int, seed_value, gamma_value), and the rule by which a replayed search
lost to random search (lost_to_random()).

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


def whole_number(text, least, allowed):
    """An option's whole-number value, at least `least` (`allowed` says so in the error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a whole number" % text)
    if value < least:
        raise argparse.ArgumentTypeError("'%s' must be %s" % (text, allowed))
    return value


def positive_int(text):
    """An option's value that counts something: a whole number, at least 1."""
    return whole_number(text, 1, "at least 1")


def seed_value(text):
    """A first seed: a whole number, 0 or more (NumPy's generators take no negative seed)."""
    return whole_number(text, 0, "0 or more")


def gamma_value(text):
    """The objective's gamma: a number from 0 (fastest) to 1 (cheapest)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a number" % text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError("'%s' is out of range; allowed: 0 to 1" % text)
    return value


def lost_to_random(b, r):
    """A search lost to random search on one problem (`autotune replay --json` results of the same
    seeds): a higher median regret after the budget, or fewer runs within 10% after 12 trials."""
    reg_b = b["regret_median"] if b["regret_median"] is not None else 1e9
    reg_r = r["regret_median"] if r["regret_median"] is not None else 1e9
    return reg_b > reg_r + 1e-9 or b["within10_at"] < r["within10_at"] - 1e-9
