#include "compiler/buffers/output_aliases.h"

#include <charconv>
#include <string>

namespace kiln::buffers {
namespace {

class AliasReader {
 public:
  explicit AliasReader(std::string_view text) : text_(text) {}

  Result<std::vector<OutputAlias>> Read() {
    std::vector<OutputAlias> aliases;
    KILN_RETURN_IF_ERROR(Expect('{'));
    if (Accept('}')) return End(std::move(aliases));
    do {
      OutputAlias alias;
      KILN_ASSIGN_OR_RETURN(alias.output_index, Index());
      KILN_RETURN_IF_ERROR(Expect(':'));
      KILN_RETURN_IF_ERROR(Expect('('));
      KILN_ASSIGN_OR_RETURN(alias.parameter, Number());
      KILN_RETURN_IF_ERROR(Expect(','));
      KILN_ASSIGN_OR_RETURN(alias.parameter_index, Index());
      if (Accept(',')) {
        const size_t end = text_.find(')', at_);
        const std::string_view kind = text_.substr(at_, end == std::string_view::npos ? end : end - at_);
        if (kind != "may-alias" && kind != "must-alias") return Bad("expected may-alias or must-alias");
        alias.must_alias = kind == "must-alias";
        at_ += kind.size();
      }
      KILN_RETURN_IF_ERROR(Expect(')'));
      aliases.push_back(std::move(alias));
    } while (Accept(','));
    KILN_RETURN_IF_ERROR(Expect('}'));
    return End(std::move(aliases));
  }

 private:
  Result<std::vector<OutputAlias>> End(std::vector<OutputAlias> aliases) {
    if (at_ != text_.size()) return Bad("unexpected text after the aliases");
    return aliases;
  }

  // "{}", "{0}", "{1,2}".
  Result<std::vector<int64_t>> Index() {
    std::vector<int64_t> index;
    KILN_RETURN_IF_ERROR(Expect('{'));
    if (Accept('}')) return index;
    do {
      KILN_ASSIGN_OR_RETURN(int64_t i, Number());
      index.push_back(i);
    } while (Accept(','));
    KILN_RETURN_IF_ERROR(Expect('}'));
    return index;
  }

  Result<int64_t> Number() {
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text_.data() + at_, text_.data() + text_.size(), value);
    if (ec != std::errc() || value < 0) return Bad("expected a non-negative number");
    at_ = static_cast<size_t>(end - text_.data());
    return value;
  }

  bool Accept(char c) {
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  Status Expect(char c) {
    if (Accept(c)) return Ok();
    return Bad(std::string("expected '") + c + "'");
  }

  Error Bad(const std::string& why) const {
    return InvalidArgumentError("input_output_alias: " + why + " at character " + std::to_string(at_) + " of '" +
                                std::string(text_.substr(0, 200)) + "'");
  }

  std::string_view text_;
  size_t at_ = 0;
};

}  // namespace

Result<std::vector<OutputAlias>> ParseOutputAliases(std::string_view text) { return AliasReader(text).Read(); }

}  // namespace kiln::buffers
