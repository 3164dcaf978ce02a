#include "server/http/router.h"

#include "server/http/header_map.h"
#include "base/str_cat.h"
#include "server/http/url.h"

namespace kiln::http {
namespace {

bool IsCapture(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> segments;
  path.remove_prefix(1);  // the leading '/'
  while (true) {
    size_t slash = path.find('/');
    segments.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) return segments;
    path.remove_prefix(slash + 1);
  }
}

bool SegmentsMatch(const Route& route, const std::vector<std::string_view>& segments) {
  if (route.segments.size() != segments.size()) return false;
  for (size_t i = 0; i < segments.size(); ++i) {
    const std::string& expected = route.segments[i];
    if (IsCapture(expected)) {
      if (segments[i].empty()) return false;
    } else if (expected != segments[i]) {
      return false;
    }
  }
  return true;
}

void AppendAllowed(std::string& allow, std::string_view method) {
  if (ListHasToken(allow, method)) return;
  if (!allow.empty()) allow += ", ";
  allow += method;
}

}  // namespace

Status Router::Add(std::string method, std::string pattern, Handler handler, Execution execution) {
  if (pattern.empty() || pattern.front() != '/') {
    return InvalidArgumentError(StrCat("route pattern \"", pattern, "\" must start with '/'"));
  }
  Route route{.method = std::move(method),
              .pattern = pattern,
              .segments = {},
              .handler = std::move(handler),
              .execution = execution};
  for (std::string_view segment : SplitPath(pattern)) {
    bool braces = segment.find_first_of("{}") != std::string_view::npos;
    if ((segment.empty() && pattern != "/") || (braces && !IsCapture(segment))) {
      return InvalidArgumentError(StrCat("route pattern \"", pattern, "\": bad segment \"", segment, "\""));
    }
    route.segments.emplace_back(segment);
  }
  for (const Route& existing : routes_) {
    if (existing.method == route.method && existing.pattern == route.pattern) {
      return AlreadyExistsError(StrCat("route ", route.method, " ", pattern, " is registered twice"));
    }
  }
  routes_.push_back(std::move(route));
  return Ok();
}

Status Router::Add(std::string method, std::string pattern, FastPath fast_path, Handler handler) {
  KILN_RETURN_IF_ERROR(Add(std::move(method), std::move(pattern), std::move(handler)));
  routes_.back().fast_path = std::move(fast_path);
  return Ok();
}

Status Router::Declare(std::string_view method, std::string_view pattern,
                       RequestContract contract) {
  for (Route& route : routes_) {
    if (route.method == method && route.pattern == pattern) {
      route.contract = std::move(contract);
      return Ok();
    }
  }
  return NotFoundError(StrCat("route ", method, " ", pattern, " is not registered"));
}

RouteMatch Router::Match(std::string_view method, std::string_view path) const {
  RouteMatch match;
  if (path.empty() || path.front() != '/') return match;
  std::vector<std::string_view> segments = SplitPath(path);
  const Route* found = nullptr;
  const Route* get_fallback = nullptr;
  for (const Route& route : routes_) {
    if (!SegmentsMatch(route, segments)) continue;
    if (route.method == method) {
      found = &route;
      break;
    }
    if (method == "HEAD" && route.method == "GET") get_fallback = &route;
    AppendAllowed(match.allow, route.method);
    if (route.method == "GET") AppendAllowed(match.allow, "HEAD");
  }
  if (found == nullptr) found = get_fallback;
  if (found == nullptr) {
    match.kind =
        match.allow.empty() ? RouteMatch::Kind::kNotFound : RouteMatch::Kind::kMethodNotAllowed;
    return match;
  }
  match.allow.clear();
  for (size_t i = 0; i < segments.size(); ++i) {
    const std::string& expected = found->segments[i];
    if (!IsCapture(expected)) continue;
    Result<std::string> value = PercentDecode(segments[i], /*plus_as_space=*/false);
    if (!value) {
      match.kind = RouteMatch::Kind::kBadPath;
      match.error = value.error().ToString();
      return match;
    }
    match.path_params.emplace_back(expected.substr(1, expected.size() - 2), std::move(*value));
  }
  match.kind = RouteMatch::Kind::kFound;
  match.route = found;
  return match;
}

}  // namespace kiln::http
