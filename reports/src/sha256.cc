#include "lockstep/digest.h"
#include "lockstep/reports/report.h"

namespace lockstep::reports {

std::string sha256_hex(const std::string& data) { return digest_hex("SHA256", data); }

}  // namespace lockstep::reports
