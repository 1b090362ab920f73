// The public TierStore (see autotune/tier.hpp for the contract): construction, which opens the
// store (store_open.cc), and the member functions that hand put/get to TierStore::Impl
// (store_impl.hpp); with them the key rule (validate_tier_key), TierStoreOptions::from_conf and
// ObjectInfo::bytes_on.  The parts of the store are listed at the top of store_impl.hpp.
#include <cctype>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "autotune/error.hpp"
#include "autotune/tier.hpp"
#include "tier/store_impl.hpp"

namespace autotune {

void validate_tier_key(std::string_view key, std::string_view field) {
  const std::string allowed =
      "allowed: 1-200 characters from A-Z a-z 0-9 . _ - and '/' between non-empty components "
      "other than '.' and '..', not starting with '.'";
  const std::string q = std::string(field) + ": '" + std::string(key) + "'";
  if (key.empty()) throw_invalid(std::string(field) + ": the key is empty; " + allowed);
  if (key.size() > kTierKeyMax)
    throw_invalid(std::string(field) + ": the key is " + std::to_string(key.size()) +
                  " characters long; " + allowed);
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
          c == '/'))
      throw_invalid(q + " contains a character that is not allowed; " + allowed);
  if (key[0] == '.') throw_invalid(q + " starts with '.'; " + allowed);
  size_t i = 0;
  while (i <= key.size()) {
    size_t j = key.find('/', i);
    if (j == std::string_view::npos) j = key.size();
    const std::string_view comp = key.substr(i, j - i);
    if (comp.empty() || comp == "." || comp == "..")
      throw_invalid(q + " has an empty, '.' or '..' component; " + allowed);
    i = j + 1;
  }
}

TierStoreOptions TierStoreOptions::from_conf(const TierConf &conf) {
  TierStoreOptions o;
  o.tiers = conf.tiers;
  o.placement = conf.placement;
  o.demotion = conf.demotion;
  return o;
}

const char *object_state_name(ObjectState s) noexcept {
  switch (s) {
    case ObjectState::ok:
      return "ok";
    case ObjectState::missing:
      return "missing";
    case ObjectState::damaged:
      return "damaged";
  }
  return "?";
}

const char *tier_fault_name(TierFault::Kind k) noexcept {
  switch (k) {
    case TierFault::Kind::pool_missing:
      return "pool missing";
    case TierFault::Kind::piece_missing:
      return "piece missing";
    case TierFault::Kind::damaged:
      return "damaged";
  }
  return "?";
}

TierFault::TierFault(Kind kind, std::string key, std::string tier, TierKind tier_kind,
                     const std::string &message)
    : Error(Errc::corrupt, message),
      kind_(kind),
      key_(std::move(key)),
      tier_(std::move(tier)),
      tier_kind_(tier_kind) {}

ObjectState TierFault::state() const noexcept {
  return kind_ == Kind::damaged ? ObjectState::damaged : ObjectState::missing;
}

std::uint64_t ObjectInfo::bytes_on(std::string_view tier) const {
  std::uint64_t n = 0;
  for (const auto &p : pieces)
    if (p.tier == tier) n += p.length;
  return n;
}

TierStore::TierStore(TierStoreOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
TierStore::~TierStore() = default;
TierStore::TierStore(TierStore &&) noexcept = default;
TierStore &TierStore::operator=(TierStore &&) noexcept = default;

ObjectInfo TierStore::put(std::string_view key, const void *data, std::size_t size) {
  return impl_->put(key, {{data, size}}, impl_->opt.placement);
}

ObjectInfo TierStore::put(std::string_view key, const std::vector<ConstBytes> &segments) {
  return impl_->put(key, segments, impl_->opt.placement);
}

ObjectInfo TierStore::put(std::string_view key, const std::vector<ConstBytes> &segments,
                          PlacementPolicy placement) {
  return impl_->put(key, segments, placement);
}

std::vector<unsigned char> TierStore::get(std::string_view key) {
  std::vector<unsigned char> out;
  impl_->get_into(key, nullptr, 0, &out);
  return out;
}

ObjectInfo TierStore::get_into(std::string_view key, void *buffer, std::size_t capacity) {
  return impl_->get_into(key, buffer, capacity, nullptr);
}

const TierStoreOptions &TierStore::options() const noexcept { return impl_->opt; }

std::vector<TierSpec> TierStore::tiers_fastest_first() const {
  std::vector<TierSpec> out;
  std::lock_guard<std::mutex> g(impl_->mu);
  for (const auto &t : impl_->tiers) {
    out.push_back(t.spec);
    out.back().bandwidth = static_cast<std::uint64_t>(t.bandwidth);
  }
  return out;
}

PmemGranularity TierStore::pmem_granularity() const noexcept {
  for (const auto &t : impl_->tiers)
    if (t.map) return t.map->granularity();
  return PmemGranularity::page;
}

}  // namespace autotune
