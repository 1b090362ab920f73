// The choice among a file's variants of the same functions, one per CPU feature level
// (vector_math.cc, dense.cc): the fastest one this build and CPU have, at first use, and a switch
// for benchmarks and tests.  Variant is a struct of function pointers with a `const char *name`;
// available() lists the variants this build and CPU have, fastest first, never empty.
#ifndef AUTOTUNE_CPU_VARIANTS_HPP
#define AUTOTUNE_CPU_VARIANTS_HPP

#include <cstring>
#include <vector>

namespace autotune {

template <class Variant, std::vector<Variant> (*available)()>
struct CpuVariants {
  // The variant in use (thread-safe initialization; changed only by use()).
  static Variant &current() {
    static Variant v = available().front();
    return v;
  }
  // Makes the named variant current; false, changing nothing, for a variant not available.  Not
  // to be called while another thread runs one.
  static bool use(const char *name) {
    for (const Variant &v : available())
      if (std::strcmp(v.name, name) == 0) {
        current() = v;
        return true;
      }
    return false;
  }
};

}  // namespace autotune

#endif
