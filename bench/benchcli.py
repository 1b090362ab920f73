"""The command line of the Python scripts of bench/: one ArgumentParser for all of them.

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
