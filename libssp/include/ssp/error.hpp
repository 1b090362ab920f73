// Errors of libssp: the named errors of slurm-autotune (autotune::Error with an autotune::Errc
// code and a message that names the field, the value and what is allowed).
//
//   try {
//     ssp::Context ctx(MPI_COMM_WORLD, opts);
//   } catch (const ssp::Error &e) {
//     // e.code() == ssp::Errc::invalid_argument; e.what() is one line for the user
//   }
//
// Validation of user input (options, table shapes, jobs, snapshots) happens on every rank with
// the same inputs, so every rank throws the same error at the same call: a bad configuration
// never leaves some ranks waiting for others.
#pragma once

#include <autotune/error.hpp>

namespace ssp {
using autotune::Errc;
using autotune::Error;
}  // namespace ssp
