// Internal: the constructors of the built-in models, grouped by file, for make_model.
#pragma once

#include <memory>

#include "lockstep/checker/model.h"

namespace lockstep::checker::detail {

std::unique_ptr<Model> make_mutex();
std::unique_ptr<Model> make_reentrant_mutex();
std::unique_ptr<Model> make_rw_lock();
std::unique_ptr<Model> make_register();
std::unique_ptr<Model> make_cas_register();
std::unique_ptr<Model> make_counter();
std::unique_ptr<Model> make_kv(KvMissing missing);

// Shared by the models' sentences: a JSON value as a reader would write it.
std::string show_value(const nlohmann::json& v);
// The last op in the linearization that wrote (any f other than `read_f`), or nullptr.
const Operation* last_writer(const ExplainContext& ctx, const std::string& read_f);
// " (set by process 1's write 2, completed at t=…)", or " (its initial value)" for nullptr.
std::string set_by(const ExplainContext& ctx, const Operation* w);

}  // namespace lockstep::checker::detail
