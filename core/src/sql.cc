#include "lockstep/sql.h"

namespace lockstep {

Task<SqlResult> NoSqlServer::execute(std::string, std::vector<SqlValue>, std::chrono::nanoseconds) {
  co_return SqlResult::error(sql_error::kNoServer, "this world has no MySQL server");
}

}  // namespace lockstep
