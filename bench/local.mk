# bench: benchmark programs (built with `make bench', never part of `make check').
include bench/engine.mk
