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
std::unique_ptr<Model> make_kv();

// Shared by the models' sentences: a JSON value as a reader would write it.
std::string show_value(const nlohmann::json& v);

}  // namespace lockstep::checker::detail
