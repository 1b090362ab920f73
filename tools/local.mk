# tools: autotune, autotune-run, autotune-bb.
include tools/autotune.mk
