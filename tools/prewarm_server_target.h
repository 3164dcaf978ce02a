// ServerTarget: `kiln prewarm --server URL`. Each job is one POST
// /v1/compile of the module's text (chip and plan in the query, the bearer
// token if given); the server compiles, stores and answers hit, miss or
// joined. Contains is HEAD /v1/executables/KEY (not counted as a hit), so
// cached modules are not sent at all. An error answer becomes the job's
// failure with the server's code and message. Thread-safe (one connection
// per request).
#pragma once

#include <chrono>
#include <string>

#include "tools/http_client.h"
#include "tools/prewarm_target.h"

namespace kiln::tools {

class ServerTarget final : public PrewarmTarget {
 public:
  ServerTarget(HttpUrl url, std::string token, std::chrono::milliseconds timeout)
      : url_(std::move(url)), token_(std::move(token)), timeout_(timeout) {}

  // GET /healthz: fails when no kiln server answers at the URL.
  Status Check();
  Result<bool> Contains(const CompileJob& job) override;
  Result<JobOutcome> Make(const CompileJob& job) override;

 private:
  std::vector<std::string> Headers() const;

  HttpUrl url_;
  std::string token_;
  std::chrono::milliseconds timeout_;
};

}  // namespace kiln::tools
