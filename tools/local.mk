# tools: autotune, autotune-run, autotune-bb.

include tools/bb.mk
