#include "server/http/request_contract.h"

#include <algorithm>
#include <cctype>

#include "base/edit_distance.h"
#include "base/str_cat.h"

namespace kiln::http {
namespace {

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += out.empty() ? name : ", " + name;
  return out;
}

std::optional<Error> CheckQuery(const RequestContract& contract, const Request& request, RouteName route) {
  for (size_t i = 0; i < request.query.size(); ++i) {
    const std::string& name = request.query[i].first;
    const bool known =
        std::find(contract.query.begin(), contract.query.end(), name) != contract.query.end();
    if (!known) {
      std::string message =
          StrCat("unknown query parameter '", name, "' for ", route.method, " ", route.pattern);
      if (std::optional<std::string_view> close = ClosestWord(name, contract.query)) {
        message += StrCat(" (did you mean '", *close, "'?)");
      }
      message += contract.query.empty() ? std::string("; it takes no query parameters")
                                        : StrCat("; accepted: ", Join(contract.query));
      return InvalidArgumentError(std::move(message)).WithReason("invalid_query");
    }
    size_t repeats = 1;
    for (size_t j = i + 1; j < request.query.size(); ++j) repeats += request.query[j].first == name;
    if (repeats > 1) {
      return InvalidArgumentError(StrCat("query parameter '", name, "' is given ", repeats, " times for ", route.method,
                                         " ", route.pattern, "; give it once"))
          .WithReason("invalid_query");
    }
  }
  return std::nullopt;
}

std::optional<Error> CheckBodyType(const RequestContract& contract, const Request& request, RouteName route) {
  if (contract.body_types.empty()) return std::nullopt;
  std::optional<std::string_view> content_type = request.headers.Get("Content-Type");
  if (!content_type) {
    if (request.body.empty() || contract.untyped_body) return std::nullopt;
    return InvalidArgumentError(StrCat("the body has no Content-Type; ", route.method, " ", route.pattern, " accepts ",
                                       Join(contract.body_types)))
        .WithReason("unsupported_media_type");
  }
  std::string media_type = MediaTypeOf(*content_type);
  if (std::find(contract.body_types.begin(), contract.body_types.end(), media_type) !=
      contract.body_types.end()) {
    return std::nullopt;
  }
  return InvalidArgumentError(StrCat("Content-Type '", *content_type, "' is not accepted by ", route.method, " ",
                                     route.pattern, "; send one of ", Join(contract.body_types)))
      .WithReason("unsupported_media_type");
}

}  // namespace

std::string MediaTypeOf(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && (media.front() == ' ' || media.front() == '\t')) media.remove_prefix(1);
  while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.remove_suffix(1);
  std::string lower(media);
  std::transform(lower.begin(), lower.end(), lower.begin(), Lower);
  return lower;
}

std::optional<Error> CheckRequestContract(const RequestContract& contract, const Request& request, RouteName route) {
  if (std::optional<Error> refused = CheckQuery(contract, request, route)) return refused;
  return CheckBodyType(contract, request, route);
}

}  // namespace kiln::http
