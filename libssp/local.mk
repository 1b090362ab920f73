# libssp: the staleness-bounded parameter server (MPI).
EXTRA_DIST += libssp/ssp.pc.in
