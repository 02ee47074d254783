// The test name of a suite parameterized by scenario file: the file's stem, with every
// character GoogleTest does not allow in a name turned into '_'.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>

namespace lockstep {

inline std::string scenario_param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = std::filesystem::path(info.param).stem().string();
  std::replace_if(n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
}

}  // namespace lockstep
