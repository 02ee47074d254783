// Library profiles in scenario files: the required profiles exist, each option is read
// as the library spells it and checked by name, type and range, and every mistake is one
// line naming the JSON path, with a did-you-mean for a near miss.
#include <gtest/gtest.h>

#include <algorithm>

#include "lockstep/profiles.h"
#include "lockstep/runner/scenario.h"

namespace lockstep::runner {
namespace {

std::string error_of(const std::string& lock, const std::string& workload = "{}") {
  auto r = parse_scenario(R"({"lock": )" + lock + R"(, "workload": )" + workload + R"(, "expect": {"violations": []}})",
                          "f.json");
  if (const auto* e = std::get_if<ScenarioError>(&r)) return e->message();
  return "";
}

Scenario parsed(const std::string& lock, const std::string& workload = "{}") {
  auto r = parse_scenario(R"({"lock": )" + lock + R"(, "workload": )" + workload + R"(, "expect": {"violations": []}})",
                          "f.json");
  EXPECT_TRUE(std::holds_alternative<Scenario>(r)) << std::get<ScenarioError>(r).message();
  return std::get<Scenario>(r);
}

TEST(Profiles, TheShippedLibraryVersionsAreThere) {
  const auto names = profile_names();
  for (const char* required :
       {"redsync@4.0.3", "redsync@4.17.0", "node-redlock@4.2.0", "node-redlock@5.0.0-beta.2", "redis-py@5.0.0",
        "redisson@3.23.0", "redisson@3.43.0", "redisson@3.44.0", "redlock-py@1.0.8", "redis-plus-plus@1.3.15"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), required), names.end()) << required;
  }
  for (const auto& p : library_profiles()) {
    EXPECT_EQ(p.name, p.library + "@" + p.version);
    EXPECT_FALSE(p.description.empty()) << p.name;
    EXPECT_NE(find_option(p, p.lease_option), nullptr) << p.name << " names no lease option";
  }
}

TEST(Profiles, DefaultsAreTheLibrariesOwn) {
  auto value = [](const char* profile, const char* option) {
    return ProfileOptions(*profile_named(profile), nlohmann::json::object()).value(option);
  };
  EXPECT_EQ(value("redsync@4.17.0", "expiry"), 8000);
  EXPECT_EQ(value("redsync@4.17.0", "tries"), 32);
  EXPECT_EQ(value("redsync@4.17.0", "timeoutFactor"), 0.05);
  EXPECT_EQ(value("redsync@4.0.3", "retryDelay"), 500);
  EXPECT_EQ(value("node-redlock@5.0.0-beta.2", "retryCount"), 10);
  EXPECT_EQ(value("node-redlock@5.0.0-beta.2", "automaticExtensionThreshold"), 500);
  EXPECT_TRUE(value("redis-py@5.0.0", "timeout").is_null());
  EXPECT_EQ(value("redis-py@5.0.0", "sleep"), 0.1);
  EXPECT_EQ(value("redlock-py@1.0.8", "retry_count"), 3);
  EXPECT_EQ(value("redis-plus-plus@1.3.15", "ttl"), 3000);
  EXPECT_EQ(value("redisson@3.43.0", "lockWatchdogTimeout"), 30000);
  EXPECT_EQ(value("redisson@3.43.0", "timeout"), 3000);
  EXPECT_EQ(value("redisson@3.43.0", "retryInterval"), 1500);
}

TEST(Profiles, AProfileIsReadWithItsOptionsAndWrittenBack) {
  Scenario s = parsed(R"({"profile": "node-redlock@5.0.0-beta.2", "key": "k",
                          "options": {"driftFactor": 0.02, "retryCount": -1, "kind": "using"}})");
  EXPECT_EQ(s.lock.algorithm, "node-redlock@5.0.0-beta.2");
  EXPECT_EQ(s.lock.algorithm, "node-redlock@5.0.0-beta.2");
  EXPECT_EQ(s.lock.options["retryCount"], -1);
  auto again = parse_scenario(to_json(s).dump(), "f.json");
  ASSERT_TRUE(std::holds_alternative<Scenario>(again)) << std::get<ScenarioError>(again).message();
  EXPECT_EQ(std::get<Scenario>(again), s);
}

TEST(Profiles, MistakesAreOneLineWithPathAndHint) {
  EXPECT_EQ(error_of(R"({"profile": "node-redlock@5.0.0-beta.2", "options": {"drifFactor": 0.01}})"),
            "f.json: $.lock.options.drifFactor: expected an option of node-redlock@5.0.0-beta.2 (did you mean "
            "\"driftFactor\"?), found unknown key \"drifFactor\"");
  EXPECT_EQ(error_of(R"({"profile": "node-redlock@4.2.0", "options": {"retryCount": "10"}})"),
            "f.json: $.lock.options.retryCount: expected an integer at least -1, found \"10\"");
  EXPECT_EQ(error_of(R"({"profile": "redsync@4.17.0", "options": {"driftFactor": 2}})"),
            "f.json: $.lock.options.driftFactor: expected a number from 0 to 1, found 2");
  EXPECT_EQ(error_of(R"({"profile": "redisson@3.43.0", "options": {"kind": "redlok"}})"),
            "f.json: $.lock.options.kind: expected one of lock, fair, multilock, redlock (did you mean "
            "\"redlock\"?), found \"redlok\"");
  EXPECT_EQ(error_of(R"({"profile": "redis-py@5.0.0", "options": {"blocking": 1}})"),
            "f.json: $.lock.options.blocking: expected true or false, found 1");
  const std::string unknown = error_of(R"({"profile": "redsync@4.17"})");
  EXPECT_NE(unknown.find("$.lock.profile: expected one of the profiles"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("(did you mean \"redsync@4.17.0\"?), found \"redsync@4.17\""), std::string::npos) << unknown;
  EXPECT_EQ(error_of(R"({"profile": "redsync@4.17.0", "lease_ms": 100})"),
            "f.json: $.lock.lease_ms: expected no lease_ms beside a profile (the library's own settings go in "
            "lock.options), found 100");
}

// An option of one of the library's lock kinds only, beside another kind, would be
// ignored by the lock it configures: the file says something the run does not do.
TEST(Profiles, AnOptionOfAnotherKindIsRefused) {
  EXPECT_EQ(error_of(R"({"profile": "redis-plus-plus@1.3.15", "options": {"retry_count": 5}})"),
            "f.json: $.lock.options.retry_count: expected no retry_count with the default kind \"redmutex\" (it "
            "applies to kind \"redlock\" only; did you mean \"kind\": \"redlock\"?), found 5");
  EXPECT_EQ(error_of(R"({"profile": "redis-plus-plus@1.3.15",
                         "options": {"kind": "redlock", "auto_extend_err_callback": true}})"),
            "f.json: $.lock.options.auto_extend_err_callback: expected no auto_extend_err_callback with kind "
            "\"redlock\" (it applies to kind \"redmutex\" only; did you mean \"kind\": \"redmutex\"?), found true");
  EXPECT_EQ(error_of(R"({"profile": "node-redlock@afe5cf9", "options": {"automaticExtensionThreshold": 200}})"),
            "f.json: $.lock.options.automaticExtensionThreshold: expected no automaticExtensionThreshold with the "
            "default kind \"acquire\" (it applies to kind \"using\" only; did you mean \"kind\": \"using\"?), "
            "found 200");
  // The same options beside their own kind, and the options of every kind beside either.
  EXPECT_EQ(error_of(R"({"profile": "redis-plus-plus@1.3.15",
                         "options": {"kind": "redlock", "retry_count": 5, "retry_delay": 0, "ttl": 1000}})"),
            "");
  EXPECT_EQ(error_of(R"({"profile": "redis-plus-plus@1.3.15", "options": {"auto_extend_err_callback": true,
                                                                           "ttl": 1000}})"),
            "");
  EXPECT_EQ(error_of(R"({"profile": "node-redlock@5.0.0-beta.2",
                         "options": {"kind": "using", "automaticExtensionThreshold": 200, "retryCount": 3}})"),
            "");
}

// Every option that applies to some kinds only names kinds the profile has.
TEST(Profiles, KindsAnOptionAppliesToAreTheProfilesOwn) {
  for (const auto& p : library_profiles()) {
    const ProfileOption* kind = find_option(p, "kind");
    for (const auto& o : option_table(p)) {
      if (o.kinds.empty()) continue;
      ASSERT_NE(kind, nullptr) << p.name << " has no kind for " << o.name;
      for (const auto& k : o.kinds)
        EXPECT_NE(std::find(kind->choices.begin(), kind->choices.end(), k), kind->choices.end()) << p.name << " " << k;
    }
  }
}

TEST(Profiles, OptionsTheLibraryItselfWouldRefuseAreRefused) {
  EXPECT_EQ(error_of(R"({"profile": "node-redlock@5.0.0-beta.2",
                         "options": {"kind": "using", "duration": 500, "automaticExtensionThreshold": 450}})"),
            "f.json: $.lock.options.automaticExtensionThreshold: expected at most duration - 100 (400): using() "
            "throws \"A lock `duration` must be at least 100ms greater than the `automaticExtensionThreshold` "
            "setting.\", found 450");
  EXPECT_EQ(error_of(R"({"profile": "redisson@3.43.0"})", R"({"extend_every_ms": 100})"),
            "f.json: $.workload.extend_every_ms: expected 0 (redisson@3.43.0 has no extend call with these options "
            "(its own renewal, if any, runs by itself)), found 100");
  // redis-py's extend raises LockError without a timeout; with one it is an extend call.
  EXPECT_NE(error_of(R"({"profile": "redis-py@5.0.0"})", R"({"extend_every_ms": 100})"), "");
  EXPECT_EQ(error_of(R"({"profile": "redis-py@5.0.0", "options": {"timeout": 2}})", R"({"extend_every_ms": 100})"), "");
  EXPECT_EQ(error_of(R"({"profile": "redsync@4.17.0"})", R"({"reentrant_hold_ms": 100})"),
            "f.json: $.workload.reentrant_hold_ms: expected 0 (only a reentrant profile, such as redisson@3.43.0, can "
            "take its lock again), found 100");
  EXPECT_EQ(error_of(R"({"profile": "redisson@3.23.0"})", R"({"reentrant_hold_ms": 100})"), "");
}

}  // namespace
}  // namespace lockstep::runner
