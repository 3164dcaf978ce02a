#include "compiler/hlo/module.h"

#include <algorithm>
#include <tuple>

namespace kiln::hlo {

Module::~Module() {
  // Deciding by address keeps the instructions' own memory unread; most
  // lie in the chunk of the one before.
  const char* chunk_begin = nullptr;
  const char* chunk_end = nullptr;
  for (const std::unique_ptr<Computation>& computation : computations_) {
    for (InstructionPtr& instruction : computation->instructions_) {
      const char* at = reinterpret_cast<const char*>(instruction.get());
      if (at < chunk_begin || at >= chunk_end) std::tie(chunk_begin, chunk_end) = arena_->ChunkAround(at);
      if (chunk_begin != nullptr) (void)instruction.release();
    }
  }
  computations_.clear();
}

Computation* Module::AddComputation(std::unique_ptr<Computation> computation, bool is_entry) {
  Computation* c = computation.get();
  c->parent_ = this;
  computations_.push_back(std::move(computation));
  if (is_entry) set_entry(c);
  return c;
}

Computation* Module::InsertComputation(std::unique_ptr<Computation> computation, const Computation* before) {
  Computation* c = computation.get();
  c->parent_ = this;
  auto at = std::find_if(computations_.begin(), computations_.end(),
                         [before](const std::unique_ptr<Computation>& other) { return other.get() == before; });
  computations_.insert(at, std::move(computation));
  return c;
}

void Module::set_entry(Computation* entry) {
  if (entry_ != nullptr) entry_->is_entry_ = false;
  entry_ = entry;
  if (entry_ != nullptr) entry_->is_entry_ = true;
}

Computation* Module::FindComputation(std::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

const Attribute* Module::FindAttribute(std::string_view name) const {
  for (const Attribute& a : attributes_) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

int64_t Module::instruction_count() const {
  int64_t n = 0;
  for (const auto& c : computations_) n += c->instruction_count();
  return n;
}

}  // namespace kiln::hlo
