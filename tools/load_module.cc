#include "tools/load_module.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/hlo/parser.h"
#include "compiler/stablehlo/frontend.h"
#include "compiler/hlo/verifier.h"

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
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module, stablehlo::ParseAnyModule(text, path));
  Status verified = hlo::VerifyModule(*module);
  if (!verified) return verified.error().WithContext(path + ": verification failed");
  return module;
}

}  // namespace kiln::tools
