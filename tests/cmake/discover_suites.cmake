# Writes a ctest file with one test per GoogleTest suite of EXE, leaving out the tests
# FILTER excludes (gtest_discover_tests registers those one by one). Run after each link.
# HEAVY names, comma-separated, the suites that take longest: ctest starts them first so
# that none of them is left running alone at the end.
#   cmake -D EXE=... -D FILTER=... -D OUT=... -D WORKDIR=... -D TIMEOUT=... -D HEAVY=... -P discover_suites.cmake
execute_process(COMMAND "${EXE}" --gtest_list_tests "--gtest_filter=-${FILTER}"
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE rc TIMEOUT 60)
if(NOT rc EQUAL 0)
  file(REMOVE "${OUT}")
  message(FATAL_ERROR "listing the tests of ${EXE} failed (${rc}):\n${listing}${errors}")
endif()
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
set(count 0)
foreach(line IN LISTS lines)
  # A suite line is "Suite." (typed suites add "  # TypeParam = ..."); test lines are indented.
  if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    set(suite "${CMAKE_MATCH_1}")
    set(cost 1)
    if(",${HEAVY}," MATCHES ",${suite},")
      set(cost 100)
    endif()
    string(APPEND script
      "add_test([=[${suite}]=] [=[${EXE}]=] [=[--gtest_filter=${suite}.*-${FILTER}]=])\n"
      "set_tests_properties([=[${suite}]=] PROPERTIES WORKING_DIRECTORY [=[${WORKDIR}]=] TIMEOUT ${TIMEOUT} COST ${cost})\n")
    math(EXPR count "${count} + 1")
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "no test suites found in ${EXE}")
endif()
file(WRITE "${OUT}" "${script}")
