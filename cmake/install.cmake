# What `cmake --install` and the Debian package (scripts/package) put in place: the
# `lockstep` program, the clock library it preloads into servers, the static libraries
# with the CMake targets lockstep::lockstep (everything) and lockstep::checker (the
# checker alone), a pkg-config file, and only the headers a user's code includes. The
# rest of the headers (the simulator's, the live world's, the report writers') stay
# private: they may change without notice.
include(CMakePackageConfigHelpers)

set(LOCKSTEP_PUBLIC_HEADERS
  core/include/lockstep/env.h
  core/include/lockstep/fast_paths.h
  ${CMAKE_BINARY_DIR}/core/include/lockstep/build_config.h
  core/include/lockstep/fault_plan.h
  core/include/lockstep/gate.h
  core/include/lockstep/reply.h
  core/include/lockstep/sql.h
  core/include/lockstep/task.h
  core/include/lockstep/topology.h
  core/include/lockstep/world_control.h
  core/include/lockstep/zookeeper.h
  locks/include/lockstep/algorithms.h
  locks/include/lockstep/lock.h
  locks/include/lockstep/locks.h
  locks/include/lockstep/option_table.h
  locks/include/lockstep/profiles.h
  cli/include/lockstep/cli.h)
install(FILES ${LOCKSTEP_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lockstep)
install(FILES
  runner/include/lockstep/runner/claims.h
  runner/include/lockstep/runner/claims_gtest.h
  runner/include/lockstep/runner/fuzz.h
  runner/include/lockstep/runner/live_runner.h
  runner/include/lockstep/runner/matrix.h
  runner/include/lockstep/runner/run.h
  runner/include/lockstep/runner/scenario.h
  runner/include/lockstep/runner/sim_runner.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lockstep/runner)
install(DIRECTORY checker/include/lockstep/checker DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lockstep)
install(FILES reports/include/lockstep/reports/report.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lockstep/reports)

# One target for users; the per-folder libraries behind it are exported too (a static
# library's dependencies must be), under names nobody needs to write.
add_library(lockstep_all INTERFACE)
set_target_properties(lockstep_all PROPERTIES EXPORT_NAME lockstep)
target_link_libraries(lockstep_all INTERFACE lockstep_cli lockstep_runner)
add_library(lockstep::lockstep ALIAS lockstep_all)
add_library(lockstep::checker ALIAS lockstep_checker)
set_target_properties(lockstep_checker PROPERTIES EXPORT_NAME checker)

install(TARGETS lockstep_all lockstep_cli lockstep_runner lockstep_reports lockstep_live lockstep_sim lockstep_checker
                lockstep_locks lockstep_core
        EXPORT lockstepTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS lockstep RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS lockstep_clock LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/lockstep)
install(EXPORT lockstepTargets NAMESPACE lockstep:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lockstep)

# The live world's MySQL client is optional at build time; an installed lockstep built
# with it needs it found again by whoever links it.
if(TARGET PkgConfig::MARIADB)
  set(LOCKSTEP_WITH_MARIADB 1)
  set(LOCKSTEP_PC_MARIADB "libmariadb")
else()
  set(LOCKSTEP_WITH_MARIADB 0)
  set(LOCKSTEP_PC_MARIADB "")
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/lockstepConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/lockstepConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lockstep)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/lockstepConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/lockstepConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/lockstepConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lockstep)

# pkg-config: the libraries are static, so their dependencies are listed in Libs.
# ${pcfiledir} keeps the file right wherever the prefix is moved to.
if(LOCKSTEP_LUA_ARCHIVE)
  set(LOCKSTEP_PC_LUA "")
  set(LOCKSTEP_PC_LUA_LIBS "${LOCKSTEP_LUA_ARCHIVE} -lm -ldl")
else()
  set(LOCKSTEP_PC_LUA "lua5.1-c++")
  set(LOCKSTEP_PC_LUA_LIBS "")
endif()
file(RELATIVE_PATH LOCKSTEP_PC_UP "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
configure_file(${CMAKE_CURRENT_LIST_DIR}/lockstep.pc.in ${CMAKE_CURRENT_BINARY_DIR}/lockstep.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/lockstep.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# `scripts/package` runs cpack on the build: lockstep_<version>_amd64.deb.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME lockstep)
set(CPACK_PACKAGE_VENDOR lockstep)
set(CPACK_PACKAGE_CONTACT "lockstep maintainers <lockstep@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Deterministic simulation and correctness testing for Redis locks")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The program's own libraries, plus what a user's build needs to link the static
# libraries and run live scenarios.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "libhiredis-dev, libevent-dev, liblua5.1-0-dev, libssl-dev, nlohmann-json3-dev, libcli11-dev, librapidcheck-dev, libstdc++6, redis-server, redis-tools")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libgtest-dev, redis-sentinel, pkg-config, cmake")
include(CPack)
