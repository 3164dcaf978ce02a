#include "tools/load_module.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/service/module_reader.h"
#include "server/service/reasons.h"

namespace kiln::tools {

Result<std::string> ReadFile(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return InvalidArgumentError(path + " is a folder, not a file (kiln prewarm reads folders of HLO dumps)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoError(errno, path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return DataLossError(path + ": read failed");
  return ss.str();
}

Result<std::unique_ptr<hlo::Module>> LoadVerifiedModule(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseVerifiedModule(text, path);
}

Result<std::unique_ptr<hlo::Module>> ParseVerifiedModule(const std::string& text,
                                                         const std::string& path) {
  Result<std::unique_ptr<hlo::Module>> module = service::ParseVerified(text, path);
  if (!module && module.error().reason() == service::kHloVerifyError) {
    return std::unexpected(module.error().WithContext(path + ": verification failed"));
  }
  return module;
}

}  // namespace kiln::tools
