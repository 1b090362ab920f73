# tools: autotune, autotune-run, autotune-bb.
