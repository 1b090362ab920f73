# examples: training programs on libssp.
